//! `microarena optimize` as a user sees it: exit codes, files left behind,
//! and the head the output model gets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_microarena"))
        .args(args)
        .output()
        .expect("run microarena")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn example(dir: &Path) -> PathBuf {
    let path = dir.join("example.tflite");
    let o = run(&["example", "-o", s(&path)]);
    assert!(o.status.success(), "{}", stderr(&o));
    path
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("JSON on stdout")
}

#[test]
fn optimize_writes_a_model_whose_plan_gives_the_reported_head() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = example(dir.path());
    let out = dir.path().join("opt.tflite");
    let o = run(&["optimize", s(&input), "-o", s(&out), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    let head = v["head_bytes"].as_u64().expect("head_bytes");
    assert!(head <= v["original_head_bytes"].as_u64().expect("original"));
    assert_eq!(v["report"]["arena"]["head_bytes"].as_u64(), Some(head));
    // Planning the output with TFLM's greedy planner honours the offsets.
    let p = run(&["plan", s(&out), "--json"]);
    assert_eq!(p.status.code(), Some(0), "{}", stderr(&p));
    let plan = json(&p);
    assert_eq!(plan["arena"]["head_bytes"].as_u64(), Some(head));
    assert!(
        plan["buffers"]
            .as_array()
            .expect("buffers")
            .iter()
            .filter(|b| b["kind"] == "tensor")
            .all(|b| b["offline"] == true)
    );
    // Human output names both heads.
    let out2 = dir.path().join("opt2.tflite");
    let h = run(&["optimize", s(&input), "-o", s(&out2), "--reorder"]);
    assert_eq!(h.status.code(), Some(0), "{}", stderr(&h));
    let text = String::from_utf8_lossy(&h.stdout);
    assert!(text.contains("head") && text.contains("->"), "{text}");
}

#[test]
fn existing_plan_needs_force_and_nothing_is_written_without_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = example(dir.path());
    let once = dir.path().join("once.tflite");
    assert_eq!(
        run(&["optimize", s(&input), "-o", s(&once)]).status.code(),
        Some(0)
    );
    let before = files_in(dir.path());
    let twice = dir.path().join("twice.tflite");
    let o = run(&["optimize", s(&once), "-o", s(&twice)]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--force") && err.contains("once.tflite"),
        "{err}"
    );
    assert_eq!(files_in(dir.path()), before, "no partial or temporary file");
    let o = run(&["optimize", s(&once), "-o", s(&twice), "--force"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(twice.exists());
}

#[test]
fn refuses_to_write_over_the_input() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = example(dir.path());
    let original = std::fs::read(&input).expect("read");
    let o = run(&["optimize", s(&input), "-o", s(&input), "--force"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("refusing to write over the input"),
        "{}",
        stderr(&o)
    );
    // Through another spelling of the same path.
    let other = dir.path().join(".").join("example.tflite");
    let o = run(&["optimize", s(&input), "-o", s(&other)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&input).expect("read"), original);
}

#[test]
fn garbage_and_unwritable_output_are_exit_2_without_leftovers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.tflite");
    std::fs::write(&bad, b"not a model").expect("write");
    let out = dir.path().join("out.tflite");
    let o = run(&["optimize", s(&bad), "-o", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("bad.tflite"), "{}", stderr(&o));
    assert!(!out.exists());
    let input = example(dir.path());
    let nowhere = dir.path().join("no-such-dir").join("out.tflite");
    let o = run(&["optimize", s(&input), "-o", s(&nowhere)]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(files_in(dir.path()), vec!["bad.tflite", "example.tflite"]);
}

#[test]
fn plan_json_compares_every_planner() {
    let dir = tempfile::tempdir().expect("tempdir");
    let input = example(dir.path());
    let o = run(&["plan", s(&input), "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["lower_bound_bytes"], v["arena"]["lower_bound_bytes"]);
    assert!(v["optimal"].is_boolean());
    let plans = v["plans"].as_array().expect("plans");
    let names: Vec<&str> = plans
        .iter()
        .map(|p| p["planner"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["tflm-greedy", "linear", "best"]);
    for p in plans {
        assert!(p["head_bytes"].as_u64().is_some() && p["proven_optimal"].is_boolean());
    }
    let greedy = plans[0]["head_bytes"].as_u64();
    assert_eq!(greedy, v["arena"]["head_bytes"].as_u64());
    assert!(plans[2]["head_bytes"].as_u64() <= greedy);
    let text = run(&["plan", s(&input)]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("planners on this model"));
}
