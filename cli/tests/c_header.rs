//! `plan --emit c-header`: the header a firmware build includes instead of a
//! hard-coded `kTensorArenaSize`. Its figures are checked against `plan
//! --json` and worked out here; a real C++ compiler builds and runs a file
//! that uses it; it is rewritten only when its content changes.

use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_microarena"))
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn run(args: &[&str]) -> std::process::Output {
    let o = bin().args(args).output().expect("run microarena");
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The C++ compiler, `None` (test skipped) when the machine has none and this
/// is not CI, where one must be present.
fn cxx() -> Option<&'static str> {
    for c in ["c++", "g++", "clang++"] {
        if Command::new(c).arg("--version").output().is_ok() {
            return Some(c);
        }
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI needs a C++ compiler for the header test"
    );
    eprintln!("c_header: compile step skipped (no C++ compiler)");
    None
}

#[test]
fn header_figures_compile_and_match_the_plan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("example.tflite");
    run(&["example", "-o", s(&model)]);
    let header = dir.path().join("microarena_arena.h");
    let o = run(&[
        "plan",
        s(&model),
        "--target",
        "cortex-m",
        "--emit",
        "c-header",
        s(&header),
        "--headroom",
        "25%",
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote"));

    let json = run(&["plan", s(&model), "--target", "cortex-m", "--json"]);
    let r: serde_json::Value = serde_json::from_slice(&json.stdout).expect("json");
    let figure = |k: &str| r["arena"][k].as_u64().expect(k);
    let minimum = figure("minimum_bytes");
    // minimum + 25 % (rounded up), then up to a multiple of 16.
    let want_arena = (minimum + (minimum * 25).div_ceil(100)).div_ceil(16) * 16;

    let sha = Command::new("sha256sum")
        .arg(&model)
        .output()
        .expect("sha256sum");
    let sha = String::from_utf8_lossy(&sha.stdout)
        .split_whitespace()
        .next()
        .expect("digest")
        .to_owned();
    let size = std::fs::metadata(&model).expect("model").len();

    let Some(cxx) = cxx() else { return };
    let src = dir.path().join("use_header.cpp");
    std::fs::write(
        &src,
        r#"#include <cstdint>
#include <cstdio>
#include "microarena_arena.h"
static_assert(MICROARENA_ARENA_BYTES % 16 == 0, "arena is a multiple of 16");
static_assert(MICROARENA_ARENA_BYTES >= MICROARENA_MINIMUM_ARENA_BYTES, "headroom is added");
constexpr int kTensorArenaSize = MICROARENA_ARENA_BYTES;
alignas(16) static uint8_t tensor_arena[kTensorArenaSize];
int main() {
  std::printf("%u %u %u %u %u %s %s %s %u\n", (unsigned)sizeof(tensor_arena),
              MICROARENA_MINIMUM_ARENA_BYTES, MICROARENA_HEAD_BYTES, MICROARENA_TAIL_BYTES,
              MICROARENA_HEADROOM_BASIS_POINTS, MICROARENA_TARGET, MICROARENA_PLANNER,
              MICROARENA_MODEL_SHA256, MICROARENA_MODEL_BYTES);
}
"#,
    )
    .expect("write source");
    let exe = dir.path().join("use_header");
    let c = Command::new(cxx)
        .args(["-std=c++17", "-Wall", "-Werror", "-I"])
        .arg(dir.path())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("compile");
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let out = Command::new(&exe).output().expect("run");
    let got = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        got.trim(),
        format!(
            "{want_arena} {minimum} {} {} 2500 cortex-m tflm-greedy {sha} {size}",
            figure("head_bytes"),
            figure("tail_bytes")
        )
    );
}

#[test]
fn header_is_rewritten_only_when_its_content_changes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("example.tflite");
    run(&["example", "-o", s(&model)]);
    let header = dir.path().join("arena.h");
    let emit = |headroom: &str| {
        let o = run(&[
            "plan",
            s(&model),
            "--emit",
            "c-header",
            s(&header),
            "--headroom",
            headroom,
        ]);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    assert!(emit("20%").starts_with("wrote"));
    let first = std::fs::read(&header).expect("header");
    let stamp = std::fs::metadata(&header)
        .expect("meta")
        .modified()
        .expect("mtime");
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(emit("20%").contains("unchanged"));
    assert_eq!(
        std::fs::metadata(&header)
            .expect("meta")
            .modified()
            .expect("mtime"),
        stamp,
        "an unchanged header must not be touched"
    );
    assert!(emit("30%").starts_with("wrote"));
    assert_ne!(std::fs::read(&header).expect("header"), first);
    // Nothing but the header is left in the folder (the write is atomic).
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn unknown_emit_kind_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("example.tflite");
    run(&["example", "-o", s(&model)]);
    let o = bin()
        .args(["plan", s(&model), "--emit", "rust", "x.rs"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr).trim(),
        "microarena: --emit rust: unknown kind; the one kind is c-header"
    );
    assert!(!Path::new("x.rs").exists());
}
