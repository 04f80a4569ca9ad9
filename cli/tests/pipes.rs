//! Every command with its stdout already closed (`microarena plan M | head`
//! after `head` exited): the command stops quietly with the status it would
//! have had — 0 for a clean run — and never panics.

use std::path::Path;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_microarena"))
}

/// Runs with stdout a pipe whose reader is already gone, so every write fails
/// with EPIPE. Returns the exit code and stderr.
fn closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let o = bin()
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("run microarena");
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("example.tflite");
    let o = bin()
        .args(["example", "-o", s(&model)])
        .output()
        .expect("run");
    assert!(o.status.success());
    let m = s(&model);
    // The example's input is 1×96×96×1 int8.
    let input = dir.path().join("in.bin");
    std::fs::write(&input, vec![0u8; 96 * 96]).expect("write input");
    let opt = dir.path().join("opt.tflite");
    let again = dir.path().join("again.tflite");
    // Two generated networks, the second larger: a diff between them grows.
    let (small, big) = (
        dir.path().join("small.tflite"),
        dir.path().join("big.tflite"),
    );
    std::fs::write(&small, microarena_core::build::example::synthetic(20)).expect("write");
    std::fs::write(&big, microarena_core::build::example::synthetic(200)).expect("write");
    let cases: Vec<(Vec<&str>, i32)> = vec![
        (vec!["plan", m], 0),
        (vec!["plan", m, "--json"], 0),
        (vec!["plan", m, "--timeline", "--target", "cortex-m"], 0),
        (vec!["plan", m, "--input-shape", "#0=1,48,48,1"], 0),
        (vec!["check", m, "--ram", "1M"], 0),
        (vec!["check", m, "--ram", "1M", "--json"], 0),
        // Does not fit: the verdict goes to stderr and the status stays 1.
        (vec!["check", m, "--ram", "16K"], 1),
        (vec!["check", m, "--ram", "16K", "--json"], 1),
        (vec!["optimize", m, "-o", s(&opt), "--json"], 0),
        (vec!["optimize", m, "-o", s(&opt), "--force"], 0),
        (vec!["diff", m, s(&opt)], 0),
        (vec!["diff", m, s(&opt), "--json"], 0),
        // Grew by more than 0 B: the gate's status survives the closed pipe.
        (vec!["diff", s(&small), s(&big), "--max-growth", "0"], 1),
        (
            vec!["diff", s(&small), s(&big), "--max-growth", "0", "--json"],
            1,
        ),
        (vec!["run", m, "--input", s(&input), "--repeat", "2"], 0),
        (vec!["example", "-o", s(&again)], 0),
        (vec!["--help"], 0),
        (vec!["--version"], 0),
    ];
    for (args, want) in cases {
        let (code, stderr) = closed_stdout(&args);
        assert_eq!(code, Some(want), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
            "{args:?}: {stderr}"
        );
        assert!(
            !stderr.contains("Broken pipe") && !stderr.contains("os error 32"),
            "{args:?} reported the closed pipe: {stderr}"
        );
    }
}

#[test]
fn usage_errors_still_speak_with_stdout_closed() {
    let (code, stderr) = closed_stdout(&["plan", "/nonexistent/model.tflite"]);
    assert_eq!(code, Some(2));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("microarena: /nonexistent/model.tflite: cannot open"));
}

/// `-o` naming a device writes into it rather than renaming a file over the
/// node: `/dev/full` reports its error (and stays a device), `/dev/stdout`
/// feeds the pipe.
#[cfg(target_os = "linux")]
#[test]
fn an_output_that_is_a_device_is_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let full = Path::new("/dev/full");
    if !std::fs::metadata(full).is_ok_and(|m| m.file_type().is_char_device()) {
        eprintln!("skipped: no /dev/full character device");
        return;
    }
    let o = bin()
        .args(["example", "-o", "/dev/full"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/dev/full: cannot write") && err.contains("No space left"),
        "{err}"
    );
    assert!(std::fs::metadata(full).is_ok_and(|m| m.file_type().is_char_device()));

    let o = bin()
        .args(["example", "-o", "/dev/stdout"])
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(&o.stdout[4..8], b"TFL3");
}
