//! `check --measured` and `--elf`: the verdict from what the firmware showed.
//! The report lines are what the firmware printed under QEMU (mps2-an386,
//! `cd firmware && cargo run --release`, with the shared person_detect model
//! and TFLM's golden data; and the `deep-stack` build of the demo model);
//! every expected figure is worked out by hand below.

use std::path::Path;
use std::process::{Command, Output};

#[path = "../examples/firmware_elf.rs"]
mod firmware_elf;

use firmware_elf::{STANDARD, firmware_elf};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_microarena"))
        .args(args)
        .output()
        .expect("run microarena")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// person_detect on mps2-an386: 77,444 B arena (TFLM's golden outputs matched).
const PERSON_DETECT: &str = "MICROARENA-REPORT v=1 model=person_detect.tflite ram_bytes=262144 reserve.static=32 reserve.stack=16384 high_water.stack=3184 reserve.isr=2048 high_water.isr=8 reserve.dma=1024 reserve.log=512 arena_bytes=77444 arena_used_bytes=77444 noinit_bytes=77444 gap_bytes=164696 invokes=10 ticks=10242 headroom_bp=2000 minimum_bytes=77444 arena_with_headroom_bytes=92944 available_bytes=242144 margin_bytes=149200 arena_stable=1 outputs_stable=1 fits=1";

/// The deep-stack build: 24 KiB of locals per invoke against a 16 KiB reservation.
const DEEP_STACK: &str = "MICROARENA-REPORT v=1 model=demo__generated_ ram_bytes=262144 reserve.static=32 reserve.stack=16384 high_water.stack=26368 reserve.isr=2048 high_water.isr=8 reserve.dma=1024 reserve.log=512 arena_bytes=1204 arena_used_bytes=1204 noinit_bytes=1204 gap_bytes=240936 invokes=10 ticks=100 headroom_bp=2000 minimum_bytes=1204 arena_with_headroom_bytes=1456 available_bytes=232160 margin_bytes=230704 arena_stable=1 outputs_stable=1 fits=0";

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p.to_str().expect("utf-8").to_owned()
}

#[test]
fn measured_person_detect_fits_with_the_devices_own_figures() {
    let dir = tempfile::tempdir().expect("tempdir");
    // QEMU's whole stdout: the line is found among the others.
    let out = format!(
        "microarena firmware: model person_detect.tflite\n{PERSON_DETECT}\noutputs identical\n"
    );
    let f = write(dir.path(), "qemu.txt", out.as_bytes());
    let o = run(&["check", "--measured", &f]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    // Reserves 32 + 16,384 + 2,048 + 1,024 + 512 = 20,000; free 262,144 − 20,000 = 242,144;
    // 77,444 × 1.2 = 92,932.8 → 92,933 → 92,944 (16); margin 149,200.
    assert!(
        s.starts_with("fits: person_detect.tflite (measured on the device): arena 92,944 B (minimum 77,444 B + 20% headroom) vs 242,144 B free (RAM 262,144 B - reserves 20,000 B); margin 149,200 B"),
        "{s}"
    );
    assert!(
        s.contains("16,384 B stack (linked; measured high-water 3,184 B)"),
        "{s}"
    );
    assert!(
        s.contains("77,444 B minimum arena (measured high-water)"),
        "{s}"
    );
    assert!(
        s.contains("10 invokes, arena high-water identical after each"),
        "{s}"
    );
    assert!(s.contains("the firmware's own verdict agrees"), "{s}");

    let o = run(&["check", "--measured", &f, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["fits"], true);
    assert_eq!(v["margin_bytes"], 149_200);
    assert_eq!(v["measured"]["device_agrees"], true);
    assert_eq!(v["measured"]["figures"][0]["source"], "linked");
}

#[test]
fn a_stack_past_its_reservation_fails_with_that_figure() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(dir.path(), "deep.txt", DEEP_STACK.as_bytes());
    let o = run(&["check", "--measured", &f]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    // Counted at its high-water: 20,000 − 16,384 + 26,368 = 29,984 reserved.
    assert!(e.contains("vs 232,160 B free (RAM 262,144 B - reserves 29,984 B); margin 230,704 B, but stack outgrew its reservation"), "{e}");
    assert!(
        e.contains("stack: high-water 26,368 B exceeds its 16,384 B reservation by 9,984 B"),
        "{e}"
    );
    assert!(e.contains("to change: raise the linker script's stack reservation from 16384 B to at least 26368 B"), "{e}");
    assert!(e.contains("the firmware's own verdict agrees"), "{e}");
}

#[test]
fn a_model_with_measured_reserves_uses_the_prediction_as_the_minimum() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("example.tflite");
    let o = run(&["example", "-o", model.to_str().expect("utf-8")]);
    assert!(o.status.success());
    let f = write(dir.path(), "pd.txt", PERSON_DETECT.as_bytes());
    let o = run(&[
        "check",
        model.to_str().expect("utf-8"),
        "--measured",
        &f,
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    // The bundled MobileNet's cortex-m minimum (82,400 B, as `check --json`'s snapshot has it)
    // against the device's 242,144 B free.
    assert_eq!(v["minimum_bytes"], 82_400);
    assert_eq!(v["available_bytes"], 242_144);
    let figures = v["measured"]["figures"].as_array().expect("figures");
    assert_eq!(figures.last().expect("minimum")["source"], "predicted");
    // Other inputs than the firmware's: no agreement is claimed.
    assert_eq!(v["measured"]["device_agrees"], serde_json::Value::Null);
}

#[test]
fn typed_figures_override_and_are_marked_assumed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(dir.path(), "pd.txt", PERSON_DETECT.as_bytes());
    // 64 KiB typed: 65,536 − 20,000 = 45,536 free < 92,944.
    let o = run(&["check", "--measured", &f, "--ram", "64K"]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    assert!(e.contains("65,536 B RAM (assumed)"), "{e}");
    assert!(e.contains("short by 47,408 B"), "{e}");
}

#[test]
fn unreadable_reports_and_elfs_are_exit_2_with_the_reason() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(dir.path(), "none.txt", b"hello\n");
    let o = run(&["check", "--measured", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("none.txt: no 'MICROARENA-REPORT' line found"),
        "{}",
        text(&o.stderr)
    );
    let o = run(&["check", "--elf", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("none.txt: not a readable ELF file"),
        "{}",
        text(&o.stderr)
    );
    let elf = write(dir.path(), "bare.elf", &firmware_elf(&[]));
    let o = run(&["check", "--elf", &elf]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no symbol _microarena_ram_start"),
        "{}",
        text(&o.stderr)
    );
    // Without a model, --measured or --elf there is nothing to check.
    let o = run(&["check", "--ram", "64K"]);
    assert_eq!(o.status.code(), Some(2));
    // An endless file is refused at the firmware-file cap, not read forever.
    #[cfg(unix)]
    for flag in ["--measured", "--elf"] {
        let o = run(&["check", flag, "/dev/zero"]);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(
            text(&o.stderr).contains("/dev/zero: larger than 268435456 bytes; refusing to read it"),
            "{}",
            text(&o.stderr)
        );
    }
}

#[test]
fn elf_gives_the_linked_layout_and_a_report_completes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elf = firmware_elf(STANDARD);
    let elf = write(dir.path(), "fw.elf", &elf);
    let o = run(&["check", "--elf", &elf]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = text(&o.stdout);
    // Static 0x20 = 32 B, so the same 20,000 B of reserves; the minimum is the
    // .noinit arena, 77,444 B: the same verdict as the device's report.
    assert!(
        s.starts_with("fits: fw.elf (linked in the ELF): arena 92,944 B (minimum 77,444 B + 20% headroom) vs 242,144 B free (RAM 262,144 B - reserves 20,000 B); margin 149,200 B"),
        "{s}"
    );
    assert!(
        s.contains("32 B static (linked); 16,384 B stack (linked); 2,048 B isr (linked)"),
        "{s}"
    );
    assert!(
        s.contains("77,444 B minimum arena (the linked .noinit arena)"),
        "{s}"
    );
    let f = write(dir.path(), "pd.txt", PERSON_DETECT.as_bytes());
    let o = run(&["check", "--elf", &elf, "--measured", &f]);
    assert_eq!(o.status.code(), Some(0));
    let s = text(&o.stdout);
    assert!(
        s.contains("16,384 B stack (linked; measured high-water 3,184 B)"),
        "{s}"
    );
    assert!(s.contains("the firmware's own verdict agrees"), "{s}");
    // A report from another build (here: another model's arena) is refused.
    let f = write(dir.path(), "deep.txt", DEEP_STACK.as_bytes());
    let o = run(&["check", "--elf", &elf, "--measured", &f]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains(
            "the report is not from this ELF's build (arena: ELF 77444 B, report 1204 B)"
        ),
        "{}",
        text(&o.stderr)
    );
}

/// docs/rp2040-case.md, second part: the seed's anomaly detector on an
/// RP2040. The report line holds the seed's figures in the firmware's format
/// (40 KiB RTOS, 6 + 2 KiB stacks); no RP2040 ran here.
#[test]
fn rp2040_anomaly_looks_fine_alone_and_fails_with_the_measured_reserves() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("anomaly.tflite");
    let m = model.to_str().expect("utf-8");
    let o = run(&["example", "--name", "rp2040-anomaly", "-o", m]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Minimum 201,456 B × 1.2 = 241,747.2 → 241,748 → 241,760 B (16) against 264 KiB.
    let o = run(&["check", m, "--device", "RP2040"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("fits: anomaly.tflite (RP2040, cortex-m0plus-cmsis-nn): arena 241,760 B (minimum 201,456 B + 20% headroom) vs 270,336 B free (RAM 270,336 B - reserves 0 B); margin 28,576 B"),
        "{}",
        text(&o.stdout)
    );
    let report = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/rp2040-anomaly-report.txt"
    );
    let o = run(&["check", m, "--device", "RP2040", "--measured", report]);
    assert_eq!(o.status.code(), Some(1));
    let e = text(&o.stderr);
    // 270,336 − 49,152 = 221,184 B free; 221,184 − 241,760 = −20,576; the bare
    // minimum leaves 221,184 − 201,456 = 19,728 B.
    assert!(
        e.contains("vs 221,184 B free (RAM 270,336 B - reserves 49,152 B); short by 20,576 B"),
        "{e}"
    );
    assert!(
        e.contains("6,144 B stack (linked; measured high-water 5,632 B)"),
        "{e}"
    );
    assert!(e.contains("40,960 B rtos (linked)"), "{e}");
    assert!(e.contains("201,456 B minimum arena (predicted)"), "{e}");
    assert!(
        e.contains("to change: free 20576 B: the largest reserve is rtos at 40960 B"),
        "{e}"
    );
    assert!(
        e.contains("the bare minimum arena fits with 19728 B to spare, but not the headroom"),
        "{e}"
    );
    assert!(e.contains("head at its peak holds 198,528 B"), "{e}");
}
