//! The `microarena` binary as a user and a CI job see it: exit codes, stderr
//! lines, the JSON contract, and files left behind.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_microarena"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run microarena")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn example(dir: &Path) -> PathBuf {
    let path = dir.join("example.tflite");
    let o = run(&["example", "-o", path.to_str().expect("utf-8 path")]);
    assert!(o.status.success(), "{}", stderr(&o));
    path
}

#[test]
fn garbage_is_exit_2_with_one_line_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &[u8]); 3] = [
        ("empty.tflite", b""),
        ("text.tflite", b"this is not a model at all"),
        ("zeros.tflite", &[0u8; 64]),
    ];
    for (name, bytes) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        let o = run(&["plan", path.to_str().expect("utf-8")]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains("TFL3"), "{name}: {err}");
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn truncated_model_is_exit_2_with_a_specific_message() {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = std::fs::read(example(dir.path())).expect("read");
    let path = dir.path().join("cut.tflite");
    std::fs::write(&path, &full[..full.len() / 2]).expect("write");
    let o = run(&["plan", path.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cut.tflite: corrupt or truncated flatbuffer"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn missing_file_and_bad_flags_are_exit_2() {
    assert_eq!(
        run(&["plan", "/nonexistent/model.tflite"]).status.code(),
        Some(2)
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let o = run(&["plan", m, "--target", "riscv"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("x86_64, cortex-m"));
    assert_eq!(
        run(&["plan", m, "--planner", "magic"]).status.code(),
        Some(2)
    );
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn json_report_has_the_contract_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let o = run(&[
        "plan",
        model.to_str().expect("utf-8"),
        "--json",
        "--target",
        "cortex-m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    for key in ["file", "subgraphs", "operators", "tensors"] {
        assert!(v["model"].get(key).is_some(), "model.{key}");
    }
    assert_eq!(v["model"]["file"], "example.tflite");
    assert_eq!(v["model"]["operators"], 31);
    assert_eq!(v["target"], "cortex-m");
    assert_eq!(v["planner"], "tflm-greedy");
    let a = &v["arena"];
    let n = |k: &str| a[k].as_u64().unwrap_or_else(|| panic!("arena.{k}"));
    assert_eq!(n("total_bytes"), n("head_bytes") + n("tail_bytes"));
    assert!(n("minimum_bytes") >= n("total_bytes"));
    let buffers = v["buffers"].as_array().expect("buffers");
    assert!(!buffers.is_empty());
    for b in buffers {
        for key in [
            "kind",
            "subgraph",
            "tensor",
            "op",
            "name",
            "bytes",
            "aligned_bytes",
            "offset",
            "first",
            "last",
        ] {
            assert!(b.get(key).is_some(), "buffers[].{key}");
        }
        assert_eq!(b["aligned_bytes"].as_u64().expect("n") % 16, 0);
    }
    let ops = v["operators"].as_array().expect("operators");
    assert_eq!(ops.len(), 31);
    for key in [
        "subgraph",
        "index",
        "opcode",
        "live_bytes",
        "scratch_bytes",
        "persistent_bytes",
    ] {
        assert!(ops[0].get(key).is_some(), "operators[].{key}");
    }
    let tail_sum: u64 = v["tail"]
        .as_array()
        .expect("tail")
        .iter()
        .map(|c| c["bytes"].as_u64().expect("bytes"))
        .sum();
    assert_eq!(tail_sum, n("tail_bytes"));
    assert!(v["diagnostics"].is_array());
}

#[test]
fn human_summary_and_timeline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let o = run(&["plan", model.to_str().expect("utf-8"), "--timeline"]);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).expect("utf-8");
    for needle in [
        "head ",
        "tail ",
        "total ",
        "minimum ",
        "peak ",
        "(id=0): size=",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(
        text.contains("55,296 B"),
        "the example's x86_64 head\n{text}"
    );
}

#[test]
fn example_write_leaves_no_partial_file_on_failure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = dir.path().join("no_such_dir").join("x.tflite");
    let o = run(&["example", "-o", target.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!target.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).expect("read dir").collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn check_exit_codes_follow_the_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let json = run(&["plan", m, "--json", "--target", "cortex-m"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let minimum = v["arena"]["minimum_bytes"].as_u64().expect("minimum");
    // Arena to configure with 20 % headroom: ceil(minimum · 1.2) rounded up to 16.
    let arena = (minimum * 12).div_ceil(10).div_ceil(16) * 16;
    let reserve = 8 * 1024;
    let exact = (arena + reserve).to_string();
    let ok = run(&["check", m, "--ram", &exact, "--reserve", "stack=8K"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let short = (arena + reserve - 1).to_string();
    let bad = run(&["check", m, "--ram", &short, "--reserve", "stack=8K"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = stderr(&bad);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("does not fit") && err.contains("short by 1 B"),
        "{err}"
    );
    let j = run(&[
        "check",
        m,
        "--ram",
        &short,
        "--reserve",
        "stack=8K",
        "--json",
    ]);
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["fits"], false);
    assert_eq!(v["margin_bytes"], -1);
    assert_eq!(v["arena_bytes"].as_u64(), Some(arena));
    assert_eq!(run(&["check", m, "--ram", "12Q"]).status.code(), Some(2));
    assert_eq!(
        run(&["check", m, "--ram", "1M", "--reserve", "stack"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn check_flash_is_the_file_plus_code_against_the_flash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    // The model's flash is its file: the size on disk, no headroom.
    let file = std::fs::metadata(&model).expect("metadata").len();
    let code = 100_000u64;
    let exact = (file + code).to_string();
    let code_s = code.to_string();
    let ok = run(&[
        "check", m, "--ram", "1M", "--flash", &exact, "--code", &code_s,
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    let out = String::from_utf8_lossy(&ok.stdout).into_owned();
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("margin 0 B"), "{out}");
    let short = (file + code - 1).to_string();
    let args = [
        "check", m, "--ram", "1M", "--flash", &short, "--code", &code_s,
    ];
    let bad = run(&args);
    assert_eq!(bad.status.code(), Some(1));
    let err = stderr(&bad);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("flash") && err.contains("short by 1 B"),
        "{err}"
    );
    let j = run(&[&args[..], &["--json"]].concat());
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    // RAM alone fits; the flash does not, so the check does not.
    assert!(v["margin_bytes"].as_i64().expect("margin") > 0);
    assert_eq!(v["fits"], false);
    assert_eq!(v["flash"]["fits"], false);
    assert_eq!(v["flash"]["model_bytes"].as_u64(), Some(file));
    assert_eq!(v["flash"]["used_bytes"].as_u64(), Some(file + code));
    assert_eq!(v["flash"]["margin_bytes"], -1);
    // --code alone is a usage error: it needs --flash.
    assert_eq!(
        run(&["check", m, "--ram", "1M", "--code", "1K"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn run_writes_outputs_and_checks_input_sizes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let input = dir.path().join("in.bin");
    std::fs::write(&input, vec![0u8; 96 * 96]).expect("write");
    let out = dir.path().join("out.bin");
    let o = run(&[
        "run",
        m,
        "--input",
        input.to_str().expect("utf-8"),
        "--output",
        out.to_str().expect("utf-8"),
        "--repeat",
        "2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Softmax over two int8 classes: two bytes.
    assert_eq!(std::fs::read(&out).expect("output").len(), 2);
    assert!(String::from_utf8_lossy(&o.stdout).contains("ms per inference"));
    std::fs::write(&input, [0u8; 5]).expect("write");
    let bad = run(&["run", m, "--input", input.to_str().expect("utf-8")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("needs 9216"), "{}", stderr(&bad));
}

/// `plan --json` of one file, parsed.
fn plan_json(path: &Path) -> serde_json::Value {
    let o = run(&["plan", path.to_str().expect("utf-8"), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    serde_json::from_slice(&o.stdout).expect("valid JSON")
}

#[test]
fn diff_reports_the_plan_figures_and_gates_growth() {
    let dir = tempfile::tempdir().expect("tempdir");
    let small = dir.path().join("small.tflite");
    let big = dir.path().join("big.tflite");
    std::fs::write(&small, microarena_core::build::example::synthetic(12)).expect("write");
    std::fs::write(&big, microarena_core::build::example::synthetic(40)).expect("write");
    let (s, b) = (small.to_str().unwrap(), big.to_str().unwrap());

    // Each figure's before, after and change are what `plan` says of each file.
    let o = run(&["diff", s, b, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).expect("valid JSON");
    let (ps, pb) = (plan_json(&small), plan_json(&big));
    for (figure, key) in [
        ("head", "head_bytes"),
        ("tail", "tail_bytes"),
        ("total", "total_bytes"),
        ("minimum", "minimum_bytes"),
    ] {
        let c = d["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == figure)
            .unwrap_or_else(|| panic!("{figure} listed"));
        let (old, new) = (
            ps["arena"][key].as_i64().unwrap(),
            pb["arena"][key].as_i64().unwrap(),
        );
        assert_eq!(c["old_bytes"].as_i64(), Some(old), "{figure}");
        assert_eq!(c["new_bytes"].as_i64(), Some(new), "{figure}");
        assert_eq!(c["delta_bytes"].as_i64(), Some(new - old), "{figure}");
    }
    assert_eq!(d["operators"], serde_json::json!([12, 40]));
    // Tensors only in the bigger model are listed as added.
    assert!(
        d["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["old_bytes"].is_null() && t["new_bytes"].as_u64() > Some(0)),
        "{d}"
    );

    // Growth gate on the minimum arena: exit 1 with one line naming the new file.
    let grew = pb["arena"]["minimum_bytes"].as_u64().unwrap()
        - ps["arena"]["minimum_bytes"].as_u64().unwrap();
    assert!(grew > 0);
    let o = run(&["diff", s, b, "--max-growth", &format!("{}", grew - 1)]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("big.tflite") && err.contains("minimum grew"),
        "{err}"
    );
    let o = run(&["diff", s, b, "--max-growth", &format!("{grew}")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Shrinking always passes, and a model against itself changes nothing.
    let o = run(&["diff", b, s, "--max-growth", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["diff", s, s, "--max-growth", "0%"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no tail category or head tensor changed"));

    // Unusable input and arguments are exit 2.
    let bad = dir.path().join("bad.tflite");
    std::fs::write(&bad, b"not a model").expect("write");
    let o = run(&["diff", s, bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.tflite"), "{}", stderr(&o));
    let o = run(&["diff", s, b, "--max-growth", "lots"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn plan_suggests_measured_ways_to_need_fewer_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let o = run(&["plan", model.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let section = text
        .split("ways to need fewer bytes")
        .nth(1)
        .unwrap_or_else(|| panic!("no advice section:\n{text}"));
    // The smaller-input suggestion names a command; running it must give the
    // promised total.
    let line = section
        .lines()
        .position(|l| l.contains("instead of"))
        .unwrap_or_else(|| panic!("no smaller-input suggestion:\n{section}"));
    let lines: Vec<&str> = section.lines().collect();
    let promised: u64 = lines[line]
        .split(" -> ")
        .nth(1)
        .and_then(|s| s.split(" B").next())
        .map(|s| s.replace(',', ""))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no figure in {}", lines[line]));
    let args: Vec<&str> = lines[line + 1]
        .trim()
        .strip_prefix("try: microarena ")
        .unwrap_or_else(|| panic!("no command in {}", lines[line + 1]))
        .split_whitespace()
        .collect();
    let mut with_json = args.clone();
    with_json.push("--json");
    let o = run(&with_json);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["arena"]["total_bytes"].as_u64(), Some(promised));
    assert!(promised < v["what_if"]["original_total_bytes"].as_u64().unwrap());
}

#[test]
fn version_names_the_tflm_build_each_target_models() {
    let o = run(&["--version"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("microarena 0.1.0\n"), "{text}");
    for (target, build) in [
        ("x86_64", "tflite-micro wheel"),
        ("cortex-m", "TFLM 90b983c2"),
        ("cortex-m4-cmsis-nn", "TFLM 90b983c2"),
        ("cortex-m0plus-cmsis-nn", "TFLM 90b983c2"),
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(target))
            .unwrap_or_else(|| panic!("no line for {target}: {text}"));
        assert!(line.contains(build), "{line}");
    }
}
