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
    let first = err.lines().next().unwrap_or_default();
    assert!(
        first.contains("does not fit") && first.contains("short by 1 B"),
        "{err}"
    );
    // Then what fills the head at its peak (the reference kernels request no scratch here).
    assert!(
        err.lines()
            .nth(1)
            .is_some_and(|l| l.contains("head at its peak holds")),
        "{err}"
    );
    assert!(!err.contains("kernel scratch"), "{err}");
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
    // Both verdicts go to stderr when the check fails: RAM fits, the flash is 1 B short.
    let err = stderr(&bad);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.lines()
            .next()
            .is_some_and(|l| l.starts_with("microarena: fits:")),
        "{err}"
    );
    assert!(
        err.lines()
            .nth(1)
            .is_some_and(|l| l.contains("flash") && l.contains("short by 1 B")),
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

#[test]
fn run_in_place_gives_the_plain_outputs_in_its_predicted_arena() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let input = dir.path().join("in.bin");
    let pixels: Vec<u8> = (0..96 * 96).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&input, pixels).expect("write");
    let i = input.to_str().expect("utf-8");
    let mut outputs = Vec::new();
    for flags in [
        &[][..],
        &["--in-place"][..],
        &["--in-place", "--exec", "banded", "--opdata", "flash"][..],
    ] {
        let out = dir.path().join(format!("out{}.bin", outputs.len()));
        let mut args = vec![
            "run",
            m,
            "--input",
            i,
            "--output",
            out.to_str().expect("utf-8"),
        ];
        args.extend_from_slice(flags);
        let o = run(&args);
        assert!(o.status.success(), "{flags:?}: {}", stderr(&o));
        // "arena: N B high-water (...); predicted N B"
        let e = stderr(&o);
        let figures: Vec<&str> = e
            .split_whitespace()
            .filter(|w| w.chars().all(|c| c.is_ascii_digit()))
            .collect();
        assert_eq!(figures.first(), figures.last(), "{flags:?}: {e}");
        outputs.push(std::fs::read(&out).expect("output"));
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
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
        ("esp32s3-esp-nn", "esp-tflite-micro 99f49e14"),
        ("esp32-esp-nn", "esp-tflite-micro 99f49e14"),
    ] {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(target))
            .unwrap_or_else(|| panic!("no line for {target}: {text}"));
        assert!(line.contains(build), "{line}");
    }
}

/// The seed's RP2040 case: 264 KiB of SRAM, 48 KiB of RTOS and stacks, 20 %
/// headroom. The example CNN fits on TFLM's reference kernels and fails on the
/// CMSIS-NN build an RP2040 SDK uses, and `check` says which buffer did it.
#[test]
fn rp2040_case_fails_on_cmsis_nn_and_names_the_im2col_buffer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("rp2040.tflite");
    let p = path.to_str().expect("utf-8");
    let o = run(&["example", "--name", "rp2040-cnn", "-o", p]);
    assert!(o.status.success(), "{}", stderr(&o));

    // Two 32×32×88 int8 activations live together at the 5×5 conv: 2 · 90,112 B.
    let activations = 2 * 32 * 32 * 88;
    // CMSIS-NN's im2col for a 5×5 filter over 88 channels: 2 columns of
    // 5·5·88 = 2,200 int16 values (2,200 is a multiple of 4 already).
    let im2col = 2 * 2200 * 2;
    let head = |target: &str| -> u64 {
        let o = run(&["plan", p, "--json", "--target", target]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        v["arena"]["head_bytes"].as_u64().expect("head")
    };
    assert_eq!(head("cortex-m"), activations);
    assert_eq!(head("cortex-m0plus-cmsis-nn"), activations + im2col);

    let budget = ["--device", "RP2040", "--reserve", "rtos=40K,stacks=8K"];
    let reference = run(&[&["check", p, "--target", "cortex-m"][..], &budget].concat());
    assert_eq!(reference.status.code(), Some(0), "{}", stderr(&reference));
    let out = String::from_utf8_lossy(&reference.stdout);
    assert!(
        out.contains("fits: rp2040.tflite (RP2040, cortex-m)"),
        "{out}"
    );

    // --device RP2040 alone chooses its target: M0+ with CMSIS-NN.
    let cmsis = run(&[&["check", p][..], &budget].concat());
    assert_eq!(cmsis.status.code(), Some(1));
    let err = stderr(&cmsis);
    assert!(
        err.contains("does not fit: rp2040.tflite (RP2040, cortex-m0plus-cmsis-nn)"),
        "{err}"
    );
    assert!(err.contains("RAM 270,336 B - reserves 49,152 B"), "{err}");
    assert!(
        err.contains("8,800 B scratch 0 of CONV_2D 1: im2col (CMSIS-NN)"),
        "{err}"
    );
    assert!(err.contains("of which 8,800 B is kernel scratch"), "{err}");
    assert!(
        err.contains("with TFLM's reference kernels (cortex-m)"),
        "{err}"
    );
    assert!(err.contains("would fit"), "{err}");

    let j = run(&[&["check", p, "--json"][..], &budget].concat());
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["device"], "RP2040");
    assert_eq!(v["target"], "cortex-m0plus-cmsis-nn");
    assert_eq!(v["fits"], false);
    assert_eq!(v["reference"]["fits"], true);
    let scratch: Vec<&serde_json::Value> = v["peak"]
        .as_array()
        .expect("peak")
        .iter()
        .filter(|b| b["kind"] == "scratch")
        .collect();
    assert_eq!(scratch.len(), 1, "{v}");
    assert_eq!(scratch[0]["op"], 1);
    assert_eq!(scratch[0]["bytes"], im2col);
}

#[test]
fn device_presets_choose_ram_and_target_or_say_why_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let o = run(&["check", m, "--device", "nrf52840", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["target"], "cortex-m4-cmsis-nn");
    assert_eq!(v["ram_bytes"], 256 * 1024);
    // An explicit --ram or --target wins over the preset.
    let o = run(&[
        "check",
        m,
        "--device",
        "STM32F746",
        "--ram",
        "100K",
        "--target",
        "x86_64",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (v["target"].as_str(), v["ram_bytes"].as_u64()),
        (Some("x86_64"), Some(102_400))
    );
    // ESP32-S3 is Xtensa with ESP-NN: its own target gives a verdict, fit or not.
    let o = run(&["check", m, "--device", "ESP32-S3", "--json"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["target"], "esp32s3-esp-nn");
    assert_eq!(v["ram_bytes"], 480 * 1024);
    let o = run(&["check", m, "--device", "ESP32-S3", "--target", "cortex-m"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run(&["check", m, "--device", "Arduino"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown device 'Arduino'; choose one of: STM32F746"),
        "{}",
        stderr(&o)
    );
    // Neither --ram nor --device: a usage error from the parser.
    assert_eq!(run(&["check", m]).status.code(), Some(2));
}

/// The person-detection example on two STM32s: one arena, in the fastest memory
/// that holds it with its headroom, and the C++ that declares it there.
#[test]
fn device_checks_place_the_arena_in_the_fastest_memory_that_holds_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let plan = run(&["plan", m, "--json", "--target", "cortex-m4-cmsis-nn"]);
    let v: serde_json::Value = serde_json::from_slice(&plan.stdout).expect("json");
    let minimum = v["arena"]["minimum_bytes"].as_u64().expect("minimum");
    let head = v["arena"]["head_bytes"].as_u64().expect("head");
    let arena = (minimum * 12).div_ceil(10).div_ceil(16) * 16;
    // The head alone with 20 % is over STM32F746's 64 KiB DTCM, so no split helps there.
    assert!(head * 12 / 10 > 64 * 1024);

    let check = |device: &str| -> serde_json::Value {
        let o = run(&[
            "check",
            m,
            "--device",
            device,
            "--reserve",
            "stack=8K,rtos=16K",
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        serde_json::from_slice(&o.stdout).expect("json")
    };
    let f7 = check("STM32F746");
    // Its 1 MiB of on-chip flash holds the model file (no --code: 0 B of firmware).
    let file = std::fs::metadata(&model).expect("metadata").len();
    assert_eq!(
        f7["flash"]["flash_bytes"].as_u64(),
        Some(1024 * 1024),
        "{f7}"
    );
    assert_eq!(f7["flash"]["used_bytes"].as_u64(), Some(file));
    let placed = &f7["placement"]["buffers"];
    assert_eq!(placed.as_array().map(Vec::len), Some(1), "{f7}");
    assert_eq!(placed[0]["buffer"], "arena");
    assert_eq!(placed[0]["area"]["name"], "SRAM1");
    assert_eq!(placed[0]["bytes"].as_u64(), Some(arena));
    // SRAM1 holds the 24 KiB of reserves.
    assert_eq!(
        placed[0]["margin_bytes"].as_i64(),
        Some((240 - 24) * 1024 - arena as i64)
    );
    let cpp = f7["placement"]["cpp"].as_str().expect("cpp");
    assert!(
        cpp.contains(&format!(
            "static uint8_t tensor_arena[{arena}] __attribute__((section(\".sram1\")))"
        )),
        "{cpp}"
    );

    // STM32H743's 128 KiB DTCM holds it.
    let h7 = check("STM32H743");
    assert_eq!(
        h7["placement"]["buffers"][0]["area"]["name"], "DTCM",
        "{h7}"
    );
    assert_eq!(
        h7["placement"]["buffers"][0]["margin_bytes"].as_i64(),
        Some(128 * 1024 - arena as i64)
    );

    // The text names the memory and prints the C++.
    let o = run(&["check", m, "--device", "STM32H743"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(&format!(
            "placement on STM32H743: arena {} B in DTCM",
            grouped(arena)
        )),
        "{text}"
    );
    assert!(text.contains("tflite::MicroInterpreter interpreter(model, resolver, tensor_arena, sizeof(tensor_arena));"), "{text}");
}

/// Each device preset core lists chooses the target of its core and its SDK's
/// kernels, and places the arena among its banks: RP2350's ten SRAM banks
/// are one 520 kB run, an ESP32-S3's PSRAM holds the arena (or its tail) only when `--ram`
/// counts it (the verdict is on on-chip RAM).
#[test]
fn new_device_presets_give_a_verdict_and_a_placement() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let json = |args: &[&str]| -> (Option<i32>, serde_json::Value) {
        let o = run(args);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&o)
        );
        (
            o.status.code(),
            serde_json::from_slice(&o.stdout).expect("json"),
        )
    };
    let (code, v) = json(&["check", m, "--device", "RP2350", "--json"]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["target"], "cortex-m33-cmsis-nn");
    assert_eq!(v["device"], "RP2350");
    assert_eq!(v["ram_bytes"], 520 * 1024);
    assert!(
        v["flash"].is_null(),
        "external flash: no flash verdict without --flash"
    );
    let area = v["placement"]["buffers"][0]["area"]["name"]
        .as_str()
        .expect("area");
    assert!(area.starts_with("SRAM0-7"), "{v}");
    // Every preset core lists gives a verdict (exit 0 or 1, never a usage error).
    for p in microarena_core::report::budget::MCU_PRESETS {
        let (_, v) = json(&["check", m, "--device", p.name, "--json"]);
        assert_eq!(v["device"], p.name);
        assert_eq!(Some(v["target"].as_str().expect("target")), p.target);
        assert!(v["placement"]["why"].is_string(), "{v}");
    }
    // 400 KiB of reserves leave the ESP32-S3's SRAM too small: the on-chip verdict fails ...
    let squeeze = [
        "check",
        m,
        "--device",
        "ESP32-S3",
        "--reserve",
        "rtos=400K",
        "--json",
    ];
    let (code, v) = json(&squeeze);
    assert_eq!(
        (code, &v["fits"]),
        (Some(1), &serde_json::Value::Bool(false)),
        "{v}"
    );
    // ... and counting the PSRAM in the RAM puts the arena, or its tail, there.
    let with_psram = [&squeeze[..], &["--ram", "8672K"]].concat();
    let (code, v) = json(&with_psram);
    assert_eq!(code, Some(0), "{v}");
    let placed = v["placement"]["buffers"].as_array().expect("buffers");
    assert!(placed.iter().any(|b| b["area"]["name"] == "PSRAM"), "{v}");
    let text_args: Vec<&str> = with_psram
        .iter()
        .copied()
        .filter(|a| *a != "--json")
        .collect();
    let o = run(&text_args);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("placement on ESP32-S3: ") && text.contains("in PSRAM"),
        "{text}"
    );
    assert!(text.contains("section(\".psram\")"), "{text}");
}

/// A target whose figures were never measured against TFLM says `derived`
/// wherever they are shown: `plan`'s text, the JSON, `check`'s verdict line
/// and the C header; a measured one never does. `--help` lists every target
/// and device from core's lists.
#[test]
fn derived_targets_are_labelled_in_every_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let plan_help = String::from_utf8_lossy(&run(&["plan", "--help"]).stdout).into_owned();
    let check_help = String::from_utf8_lossy(&run(&["check", "--help"]).stdout).into_owned();
    for p in microarena_core::report::budget::MCU_PRESETS {
        assert!(
            check_help.contains(p.name),
            "{} not in {check_help}",
            p.name
        );
    }
    for p in microarena_core::tflm::profile::PROFILES {
        let derived = p.measured_against.is_none();
        let listed = if derived {
            format!("{} (derived)", p.name)
        } else {
            p.name.to_string()
        };
        assert!(plan_help.contains(&listed), "{listed} not in {plan_help}");
        let text =
            String::from_utf8_lossy(&run(&["plan", m, "--target", p.name]).stdout).into_owned();
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(
            first.contains("(derived, not measured)"),
            derived,
            "{first}"
        );
        let v: serde_json::Value =
            serde_json::from_slice(&run(&["plan", m, "--target", p.name, "--json"]).stdout)
                .expect("json");
        assert_eq!(
            v["target_derived"].as_bool().unwrap_or(false),
            derived,
            "{}",
            p.name
        );
        assert_eq!(v["target_measured_against"].as_str(), p.measured_against);
        let check = ["check", m, "--target", p.name, "--ram", "4M"];
        let o = run(&check);
        let line = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(
            line.contains(&format!("{}, derived)", p.name)),
            derived,
            "{line}"
        );
        let o = run(&[&check[..], &["--json"]].concat());
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(
            v["target_derived"].as_bool().unwrap_or(false),
            derived,
            "{v}"
        );
        let header = dir.path().join(format!("{}.h", p.name));
        let h = header.to_str().expect("utf-8");
        let o = run(&["plan", m, "--target", p.name, "--emit", "c-header", h]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = std::fs::read_to_string(&header).expect("header");
        assert_eq!(text.contains("figures are derived"), derived, "{text}");
        assert!(text.contains(&format!("#define MICROARENA_TARGET \"{}\"", p.name)));
    }
}

/// `12345` → `12,345`, as the CLI prints figures.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A custom device's memories: the head goes to the fast one when a whole
/// arena would not fit it, the reserves to the largest SRAM, RAM adds up.
#[test]
fn custom_memories_place_head_and_tail_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = example(dir.path());
    let m = model.to_str().expect("utf-8");
    let plan = run(&["plan", m, "--json", "--target", "cortex-m"]);
    let v: serde_json::Value = serde_json::from_slice(&plan.stdout).expect("json");
    let head = v["arena"]["head_bytes"].as_u64().expect("head");
    let with_headroom = |b: u64| (b * 12).div_ceil(10).div_ceil(16) * 16;
    // A TCM that holds the head with 20 % but not the whole arena, and a big SRAM.
    let tcm_kib = with_headroom(head).div_ceil(1024) + 1;
    let tcm = format!("TCM={tcm_kib}K:tcm");
    let o = run(&[
        "check",
        m,
        "--target",
        "cortex-m",
        "--memory",
        &tcm,
        "--memory",
        "MAIN=256K",
        "--reserve",
        "stack=8K",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["ram_bytes"].as_u64(), Some((tcm_kib + 256) * 1024));
    let placed = v["placement"]["buffers"].as_array().expect("buffers");
    assert_eq!(placed.len(), 2, "{v}");
    assert_eq!(
        (
            placed[0]["buffer"].as_str(),
            placed[0]["area"]["name"].as_str()
        ),
        (Some("head"), Some("TCM"))
    );
    assert_eq!(
        placed[0]["minimum_bytes"].as_u64(),
        Some(head.div_ceil(16) * 16)
    );
    assert_eq!(
        (
            placed[1]["buffer"].as_str(),
            placed[1]["area"]["name"].as_str()
        ),
        (Some("tail"), Some("MAIN"))
    );
    assert_eq!(placed[1]["area"]["reserved_bytes"].as_u64(), Some(8 * 1024));
    assert!(
        v["placement"]["cpp"]
            .as_str()
            .is_some_and(|c| c.contains("MicroAllocator::Create("))
    );
    // A bad kind is a usage error naming it.
    let o = run(&["check", m, "--memory", "X=1K:fast"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown kind 'fast'"), "{}", stderr(&o));
}
