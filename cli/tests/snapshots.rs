//! What the `microarena` binary prints, held byte for byte: `plan` (JSON for
//! both targets and every planner, text with the timeline, what-if), `check`,
//! `optimize` (JSON and a hash of the written model) and `diff`, on the bundled
//! example and on every shared model. A restructuring that changes any figure,
//! field or line fails here; a deliberate change updates the snapshots
//! (`INSTA_UPDATE=always cargo test -p microarena-cli --test snapshots`) and
//! the diff shows what moved.

use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_microarena"))
}

/// Runs the binary and returns one text holding the exit code, stdout and
/// stderr, with `dir` (a temporary folder) replaced by `$TMP`.
fn run(args: &[&str], dir: &Path) -> String {
    let o = bin().args(args).output().expect("run microarena");
    let text = format!(
        "exit: {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    text.replace(dir.to_str().expect("utf-8 path"), "$TMP")
}

/// FNV-1a, enough to notice any change in a written model.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn snap(name: &str, text: String) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| insta::assert_snapshot!(name, text));
}

/// Every output held for one model, `tag` naming the snapshots.
fn check_model(tag: &str, model: &Path, dir: &Path) {
    let m = model.to_str().expect("utf-8 path");
    for target in [
        "x86_64",
        "cortex-m",
        "cortex-m4-cmsis-nn",
        "cortex-m0plus-cmsis-nn",
    ] {
        snap(
            &format!("{tag}__plan_json_{target}"),
            run(&["plan", m, "--json", "--target", target], dir),
        );
    }
    for planner in ["linear", "best"] {
        snap(
            &format!("{tag}__plan_json_{planner}"),
            run(&["plan", m, "--json", "--planner", planner], dir),
        );
    }
    snap(
        &format!("{tag}__plan_text"),
        run(&["plan", m, "--timeline"], dir),
    );
    snap(
        &format!("{tag}__check_json"),
        run(
            &[
                "check",
                m,
                "--ram",
                "256K",
                "--reserve",
                "stack=8K,rtos=16K",
                "--json",
            ],
            dir,
        ),
    );
    let out = dir.join(format!("{tag}.opt.tflite"));
    let o = out.to_str().expect("utf-8 path");
    let mut text = run(&["optimize", m, "-o", o, "--reorder", "--json"], dir);
    if let Ok(bytes) = std::fs::read(&out) {
        text.push_str(&format!(
            "--- written\n{} bytes, fnv {:016x}\n",
            bytes.len(),
            fnv(&bytes)
        ));
        snap(&format!("{tag}__diff_optimized"), run(&["diff", m, o], dir));
        snap(
            &format!("{tag}__diff_optimized_json"),
            run(&["diff", m, o, "--json", "--target", "cortex-m"], dir),
        );
    }
    snap(&format!("{tag}__optimize_json"), text);
    snap(
        &format!("{tag}__optimize_text"),
        run(&["optimize", m, "-o", o, "--force"], dir),
    );
}

#[test]
fn bundled_example() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("example.tflite");
    let o = bin()
        .args(["example", "-o", model.to_str().expect("utf-8")])
        .output()
        .expect("run");
    assert!(o.status.success());
    check_model("example", &model, dir.path());
    let m = model.to_str().expect("utf-8");
    snap(
        "example__whatif_json",
        run(
            &["plan", m, "--json", "--input-shape", "#0=1,48,48,1"],
            dir.path(),
        ),
    );
}

fn corpus() -> Option<PathBuf> {
    let Ok(value) = std::env::var("MICROARENA_CORPUS") else {
        eprintln!("snapshots of the shared models: skipped (MICROARENA_CORPUS is not set)");
        return None;
    };
    let mut path = PathBuf::from(&value);
    if path.is_relative() {
        path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(path);
    }
    assert!(
        path.join("models").is_dir(),
        "MICROARENA_CORPUS={value} is set but {} has no models/ folder",
        path.display()
    );
    Some(path)
}

#[test]
fn shared_models() {
    let Some(root) = corpus() else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut models: Vec<PathBuf> = std::fs::read_dir(root.join("models"))
        .expect("models/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
        .collect();
    models.sort();
    assert!(models.len() >= 12, "expected the 12 shared models");
    for model in &models {
        // Copy into the temporary folder so the printed paths do not depend on
        // where the corpus is.
        let name = model.file_name().expect("name");
        let local = dir.path().join(name);
        std::fs::copy(model, &local).expect("copy");
        let tag = name.to_str().expect("utf-8").trim_end_matches(".tflite");
        check_model(tag, &local, dir.path());
    }
    let m = |n: &str| dir.path().join(format!("{n}.tflite"));
    let s = |p: &PathBuf| p.to_str().expect("utf-8").to_owned();
    snap(
        "keyword_scrambled__diff_8bit_json",
        run(
            &[
                "diff",
                &s(&m("keyword_scrambled")),
                &s(&m("keyword_scrambled_8bit")),
                "--json",
            ],
            dir.path(),
        ),
    );
    for (model, shape) in [
        ("micro_speech_lstm", "#0=1,24,257"),
        ("person_detect", "#0=1,48,48,1"),
        ("trained_lstm_int8", "#0=1,14,28"),
    ] {
        let p = s(&m(model));
        snap(
            &format!("{model}__whatif_json"),
            run(&["plan", &p, "--json", "--input-shape", shape], dir.path()),
        );
        snap(
            &format!("{model}__whatif_text"),
            run(&["plan", &p, "--input-shape", shape], dir.path()),
        );
    }
}
