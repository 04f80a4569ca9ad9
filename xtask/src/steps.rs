//! The build steps: each one's name, one-line summary and commands. `all` runs
//! the ones marked `in_all` in table order, which is `scripts/test.sh`'s order;
//! together they run exactly the commands test.sh ran before it called the xtask.

use std::env;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use crate::cmd::{Captured, Error, cmd};
use crate::probe;

/// One named step.
#[derive(Debug)]
pub struct Step {
    pub name: &'static str,
    pub summary: &'static str,
    /// Arguments the step accepts, for `--help` (`None`: it takes none).
    pub args: Option<&'static str>,
    /// Whether `cargo xtask all` (so `scripts/test.sh` and CI) runs it.
    pub in_all: bool,
    pub run: fn(&[String]) -> Result<(), Error>,
}

/// Every step, in the order `all` runs them.
pub const STEPS: &[Step] = &[
    Step {
        name: "lint",
        summary: "rustfmt on every workspace; clippy -D warnings on host targets, the web app (wasm32) and the no_std targets",
        args: None,
        in_all: true,
        run: lint,
    },
    Step {
        name: "nostd",
        summary: "release builds of the image crate and the runtime for thumbv7em, thumbv6m and wasm32 (no heap), and of core for wasm32 (alloc)",
        args: None,
        in_all: true,
        run: nostd,
    },
    Step {
        name: "test",
        summary: "host tests of every crate but the web app (the corpus tests need MICROARENA_CORPUS)",
        args: None,
        in_all: true,
        run: test,
    },
    Step {
        name: "wasm-probe",
        summary: "wasm32 plans equal native plans: the determinism probe, run under node",
        args: None,
        in_all: true,
        run: wasm_probe,
    },
    Step {
        name: "offline-plans",
        summary: "optimized models against TFLM itself (tflite-micro wheel; needs MICROARENA_CORPUS and python3 venv)",
        args: None,
        in_all: true,
        run: offline_plans,
    },
    Step {
        name: "kernels",
        summary: "runtime kernels against TFLM itself, one builder model per kernel branch (tflite-micro wheel; needs python3 venv)",
        args: None,
        in_all: true,
        run: kernels,
    },
    Step {
        name: "firmware",
        summary: "the firmware workspace: fmt, clippy, tests, and the acceptance procedure under QEMU (M4, M0) held to check --measured/--elf, a deep-stack build that must fail, TFLM's golden data with the corpus",
        args: None,
        in_all: true,
        run: firmware,
    },
    Step {
        name: "miri",
        summary: "the runtime's allocator, fixed-point, kernel and golden tests under Miri (nightly)",
        args: None,
        in_all: true,
        run: miri,
    },
    Step {
        name: "fuzz-smoke",
        summary: "every fuzz target briefly (FUZZ_SMOKE_SECONDS each, default 10; scripts/fuzz.sh runs them longer)",
        args: None,
        in_all: true,
        run: fuzz_smoke,
    },
    Step {
        name: "bench",
        summary: "the benchmarks compile and link (test profile; `cargo bench` measures)",
        args: None,
        in_all: true,
        run: bench,
    },
    Step {
        name: "web",
        summary: "build the web app into dist/ (scripts/build-web.sh)",
        args: None,
        in_all: true,
        run: web,
    },
    Step {
        name: "e2e",
        summary: "browser tests of dist/ against the CLI (Playwright, headless Chromium; run `web` first)",
        args: None,
        in_all: true,
        run: e2e,
    },
    Step {
        name: "trunk",
        summary: "the app built by trunk (pinned in Trunk.toml) and the default-page browser test on that build; in `all` only where trunk is installed or MICROARENA_TRUNK=install (its install takes 6-10 minutes)",
        args: Some("[--install]"),
        in_all: true,
        run: trunk,
    },
    Step {
        name: "python",
        summary: "the Python package: abi3 wheel built from source with maturin, installed in a venv, pytest against the CLI",
        args: None,
        in_all: true,
        run: python,
    },
    Step {
        name: "regen-schema",
        summary: "regenerate core's flatbuffer bindings from TFLite's schema.fbs (flatc 25.12.19)",
        args: Some("[path/to/schema.fbs]"),
        in_all: false,
        run: regen_schema,
    },
];

/// The no_std targets the image crate and the runtime are built and linted
/// for, with no heap.
const NOSTD_TARGETS: [&str; 3] = [
    "thumbv7em-none-eabihf",
    "thumbv6m-none-eabi",
    "wasm32-unknown-unknown",
];
/// Core's feature sets built for wasm32: without serde, and with it.
const CORE_FEATURE_SETS: [Option<&str>; 2] = [None, Some("serde")];

/// A part of a step, headed as `scripts/test.sh` headed it.
fn part(title: &str) {
    eprintln!("\n-- {title}");
}

fn skipped(why: &str) {
    eprintln!("skipped: {why}");
}

fn lint(_: &[String]) -> Result<(), Error> {
    part("format");
    cmd("cargo", ["fmt", "--all", "--check"]).run()?;
    // The fuzz and wasm-probe crates are workspaces of their own.
    cmd("cargo", ["fmt", "--check"]).dir("fuzz").run()?;
    cmd("cargo", ["fmt", "--check"]).dir("wasm-probe").run()?;
    cmd("cargo", ["fmt", "--check"]).dir("python").run()?;

    part("clippy (host, all targets)");
    // The web app is linted for wasm32 only: building leptos for the host too
    // would double the compile time (toolchain.md P8).
    cmd(
        "cargo",
        [
            "clippy",
            "--workspace",
            "--exclude",
            "microarena-app",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )
    .run()?;

    part("clippy (web app, wasm32)");
    cmd(
        "cargo",
        [
            "clippy",
            "-p",
            "microarena-app",
            "--target",
            "wasm32-unknown-unknown",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )
    .run()?;

    part("clippy (no_std targets)");
    for t in NOSTD_TARGETS {
        cmd("cargo", device_crates("clippy", t)).run()?;
    }
    for features in CORE_FEATURE_SETS {
        cmd("cargo", core_on_wasm32("clippy", features)).run()?;
    }
    Ok(())
}

/// `cargo <verb>` of the crates a device links (the image format and the
/// runtime, neither with a heap) for target `t`, `-D warnings` for clippy.
fn device_crates(verb: &'static str, t: &'static str) -> Vec<&'static str> {
    let mut args = vec![verb];
    if verb == "build" {
        args.push("--release");
    }
    args.extend([
        "-p",
        "microarena-image",
        "-p",
        "microarena-runtime",
        "--target",
        t,
    ]);
    if verb == "clippy" {
        args.extend(["--", "-D", "warnings"]);
    }
    args
}

/// `cargo <verb>` of core (which needs alloc) for wasm32, the app's target,
/// with `features` (`None`: without the default `serde`, as the firmware
/// build script and the wasm probe use it).
fn core_on_wasm32(verb: &'static str, features: Option<&'static str>) -> Vec<&'static str> {
    let mut args = vec![verb];
    if verb == "build" {
        args.push("--release");
    }
    args.extend([
        "-p",
        "microarena-core",
        "--target",
        "wasm32-unknown-unknown",
    ]);
    match features {
        Some(f) => args.extend(["--features", f]),
        None => args.push("--no-default-features"),
    }
    if verb == "clippy" {
        args.extend(["--", "-D", "warnings"]);
    }
    args
}

fn nostd(_: &[String]) -> Result<(), Error> {
    part("no_std builds (image and runtime without a heap)");
    for t in NOSTD_TARGETS {
        cmd("cargo", device_crates("build", t)).run()?;
    }
    part("core for wasm32 (with alloc)");
    for features in CORE_FEATURE_SETS {
        cmd("cargo", core_on_wasm32("build", features)).run()?;
    }
    Ok(())
}

fn test(_: &[String]) -> Result<(), Error> {
    cmd(
        "cargo",
        ["test", "--workspace", "--exclude", "microarena-app"],
    )
    .run()
}

fn wasm_probe(_: &[String]) -> Result<(), Error> {
    let manifest = ["--manifest-path", "wasm-probe/Cargo.toml"];
    let target = [
        "--target",
        "wasm32-unknown-unknown",
        "--target-dir",
        "target",
    ];
    cmd("cargo", ["clippy", "--release"])
        .args(manifest)
        .args(target)
        .args(["--", "-D", "warnings"])
        .run()?;
    cmd("cargo", ["build", "--release"])
        .args(manifest)
        .args(target)
        .run()?;
    if probe::on_path("node") {
        cmd(
            "node",
            [
                "scripts/wasm-plan-hash.mjs",
                "target/wasm32-unknown-unknown/release/microarena_wasm_probe.wasm",
            ],
        )
        .run()
    } else {
        skipped("node is not installed");
        Ok(())
    }
}

fn offline_plans(_: &[String]) -> Result<(), Error> {
    if probe::corpus().is_some() && probe::python_with_venv() {
        cmd("bash", ["scripts/verify-offline-plans.sh"]).run()
    } else {
        skipped("needs MICROARENA_CORPUS and python3 with venv");
        Ok(())
    }
}

fn kernels(_: &[String]) -> Result<(), Error> {
    if probe::python_with_venv() {
        cmd("bash", ["scripts/verify-kernels.sh"]).run()
    } else {
        skipped("needs python3 with venv");
        Ok(())
    }
}

fn firmware(_: &[String]) -> Result<(), Error> {
    part("firmware under QEMU (Cortex-M4 mps2-an386, Cortex-M0 microbit)");
    let fw = |args: &[&str]| cmd("cargo", args.iter().copied()).dir("firmware").run();
    fw(&["fmt", "--check"])?;
    // `bench` adds the instruction-count binary (bench/cortex-m/), linted too.
    fw(&[
        "clippy",
        "--release",
        "--all-targets",
        "--features",
        "bench",
        "--",
        "-D",
        "warnings",
    ])?;
    fw(&["test", "--release"])?;
    fw(&[
        "clippy",
        "--release",
        "--target",
        "thumbv6m-none-eabi",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ])?;
    fw(&["test", "--release", "--target", "thumbv6m-none-eabi"])?;
    part(
        "the acceptance procedure (issue 17): the firmware's report against `microarena check --measured` / `--elf`",
    );
    cmd("cargo", ["build", "-q", "-p", "microarena-cli"]).run()?;
    procedure("demo-m4", M4, &[], &[])?;
    cmd(
        "arm-none-eabi-size",
        [firmware_elf(M4).to_string_lossy().into_owned()],
    )
    .run_best_effort();
    procedure("demo-m0", M0, &["--target", M0], &[])?;
    deep_stack()?;

    part(
        "firmware under QEMU on TFLM's golden data (device output must equal TFLM's), with the procedure",
    );
    let Some(corpus) = probe::corpus() else {
        skipped("needs MICROARENA_CORPUS");
        return Ok(());
    };
    let corpus = probe::corpus_absolute(&corpus)?;
    for m in ["person_detect", "micro_speech_lstm"] {
        let golden = corpus.join("golden").join(m);
        let model = corpus.join("models").join(format!("{m}.tflite"));
        procedure(
            m,
            M4,
            &[],
            &[
                ("MICROARENA_FIRMWARE_MODEL", model.into_os_string()),
                (
                    "MICROARENA_FIRMWARE_INPUT",
                    golden.join("input0.bin").into_os_string(),
                ),
                (
                    "MICROARENA_FIRMWARE_EXPECTED",
                    golden.join("output0.bin").into_os_string(),
                ),
            ],
        )?;
    }
    Ok(())
}

/// The Cortex-M4 target (mps2-an386) and the Cortex-M0 one (microbit).
const M4: &str = "thumbv7em-none-eabihf";
const M0: &str = "thumbv6m-none-eabi";

/// The firmware ELF cargo built for `triple` (the firmware workspace's
/// target directory, or `CARGO_TARGET_DIR`, relative to `firmware/`).
fn firmware_elf(triple: &str) -> PathBuf {
    firmware_target_dir()
        .join(triple)
        .join("release")
        .join("microarena-firmware")
}

fn firmware_target_dir() -> PathBuf {
    match env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
        Some(d) => Path::new("firmware").join(d),
        None => PathBuf::from("firmware/target"),
    }
}

/// `microarena check ARGS` through cargo (built once above), captured.
fn check(args: &[&OsStr]) -> Result<Captured, Error> {
    cmd(
        "cargo",
        ["run", "-q", "-p", "microarena-cli", "--", "check"],
    )
    .args(args.iter().copied())
    .capture()
}

/// The verdict line's figures, without the name and origin in front:
/// `arena … vs … free (…); margin … B`.
fn verdict_figures(out: &str) -> Option<&str> {
    let first = out.lines().next()?;
    let (_, figures) = first.split_once("): ")?;
    Some(figures)
}

/// Runs the firmware (its procedure must pass), saves its output, and holds
/// `check --measured` on it and `check --elf` on the ELF to the firmware's
/// own report: both fit, the same verdict figures, the firmware's verdict
/// confirmed figure for figure, and the ELF and the report from one build.
fn procedure(
    name: &str,
    triple: &str,
    cargo_args: &[&str],
    env: &[(&str, std::ffi::OsString)],
) -> Result<(), Error> {
    let mut run = cmd("cargo", ["run", "--release"])
        .args(cargo_args.iter().copied())
        .dir("firmware");
    for (k, v) in env {
        run = run.env(k, v.clone());
    }
    let fw = run.capture()?;
    if !fw.success || !fw.stdout.contains("MICROARENA-REPORT ") {
        return Err(Error::Mismatch(format!(
            "{name}: the firmware's procedure failed (exit {:?}); its output is above",
            fw.code
        )));
    }
    let report = firmware_target_dir().join(format!("procedure-{name}.txt"));
    fs::write(&report, &fw.stdout).map_err(|source| Error::NotStarted {
        command: format!("write {}", report.display()),
        source,
    })?;
    let elf = firmware_elf(triple);
    let measured = check(&["--measured".as_ref(), report.as_os_str()])?;
    let linked = check(&["--elf".as_ref(), elf.as_os_str()])?;
    let both = check(&[
        "--elf".as_ref(),
        elf.as_os_str(),
        "--measured".as_ref(),
        report.as_os_str(),
    ])?;
    let agrees = "the firmware's own verdict agrees, figure for figure";
    let same = verdict_figures(&measured.stdout).is_some()
        && verdict_figures(&measured.stdout) == verdict_figures(&linked.stdout)
        && verdict_figures(&measured.stdout) == verdict_figures(&both.stdout);
    let held = measured.success
        && linked.success
        && both.success
        && measured.stdout.contains(agrees)
        && both.stdout.contains(agrees)
        && same;
    if !held {
        return Err(Error::Mismatch(format!(
            "{name}: `check --measured`, `check --elf` and the firmware's report do not agree (outputs above)"
        )));
    }
    eprintln!("{name}: the firmware's report, check --measured and check --elf agree");
    Ok(())
}

/// The `deep-stack` build (24 KiB of locals per invoke, 16 KiB reserved):
/// the firmware's verdict and `check --measured` must both fail, naming the
/// stack's measured high-water against its reservation.
fn deep_stack() -> Result<(), Error> {
    let fw = cmd("cargo", ["run", "--release", "--features", "deep-stack"])
        .dir("firmware")
        .capture()?;
    let line = fw
        .stdout
        .lines()
        .find(|l| l.starts_with("MICROARENA-REPORT "))
        .unwrap_or_default();
    let token = |key: &str| {
        line.split_ascii_whitespace()
            .find_map(|t| t.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let (Some(hw), Some(reserved)) = (token("high_water.stack"), token("reserve.stack")) else {
        return Err(Error::Mismatch(
            "deep-stack: no report line with the stack figures (output above)".into(),
        ));
    };
    if fw.success || !line.ends_with(" fits=0") || hw <= reserved {
        return Err(Error::Mismatch(format!(
            "deep-stack: the firmware should fail its verdict on the stack (high-water {hw} B, reserved {reserved} B)"
        )));
    }
    let report = firmware_target_dir().join("procedure-deep-stack.txt");
    fs::write(&report, &fw.stdout).map_err(|source| Error::NotStarted {
        command: format!("write {}", report.display()),
        source,
    })?;
    let c = check(&["--measured".as_ref(), report.as_os_str()])?;
    let want = format!(
        "stack: high-water {} B exceeds its {} B reservation",
        grouped(hw),
        grouped(reserved)
    );
    if c.code != Some(1) || !c.stderr.contains(&want) {
        return Err(Error::Mismatch(format!(
            "deep-stack: `check --measured` should exit 1 with '{want}' (output above)"
        )));
    }
    eprintln!("deep-stack: the firmware and check --measured fail on the stack ({want})");
    Ok(())
}

/// `1234567` → `1,234,567`, as the CLI prints figures.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn miri(_: &[String]) -> Result<(), Error> {
    // Under cfg(miri) the kernel sweeps sample the corrupted images and the golden
    // tests run the hello_world-sized models (see runtime/tests/{kernels,golden}.rs);
    // the rest are #[cfg_attr(miri, ignore)] with the reason.
    let add = ["+nightly", "component", "add", "miri", "rust-src"];
    // Quiet when it works; on failure, once more with the output shown.
    if !cmd("rustup", add).succeeds_quietly() {
        cmd("rustup", add).run()?;
    }
    let miri = |args: &[&str]| {
        cmd(
            "cargo",
            ["+nightly", "miri", "test", "-p", "microarena-runtime"],
        )
        .args(args.iter().copied())
        .env("PROPTEST_CASES", "4")
        .env("MIRIFLAGS", "-Zmiri-disable-isolation")
    };
    // The interpreter is single-threaded and this step has the machine to
    // itself: build once, then run two lanes at once (about 430 and 470 s
    // of the 1,098 s it took in turn). Cargo holds its build lock only while
    // it builds.
    let sweep = "extreme_words_in_any_table_are_errors_not_panics";
    miri(&[
        "--lib",
        "--test",
        "arena_props",
        "--test",
        "kernels",
        "--test",
        "golden",
        "--no-run",
    ])
    .run()?;
    miri(&["--test", "kernels", "--", "--skip", sweep]).run_beside(|| {
        miri(&["--lib", "--test", "arena_props", "--test", "golden"]).run()?;
        miri(&["--test", "kernels", "--", "--exact", sweep]).run()
    })
}

fn fuzz_smoke(_: &[String]) -> Result<(), Error> {
    cmd(
        "cargo",
        [
            "+nightly",
            "clippy",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )
    .dir("fuzz")
    .run()?;
    let seconds = env::var("FUZZ_SMOKE_SECONDS")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "10".to_owned());
    cmd("bash", ["scripts/fuzz.sh", &seconds])
        .args(["plan", "whatif", "runtime", "image", "optimize", "share"])
        .run()
}

fn bench(_: &[String]) -> Result<(), Error> {
    // Built and linked in the test profile, over the dependencies the test
    // step already built: `cargo bench --no-run` optimised them all again
    // with thin LTO (232 s of a cold CI run) to show the same thing, and
    // clippy has already checked the code. Measuring stays `cargo bench`.
    cmd(
        "cargo",
        [
            "test",
            "--workspace",
            "--exclude",
            "microarena-app",
            "--benches",
            "--no-run",
        ],
    )
    .run()
}

fn web(_: &[String]) -> Result<(), Error> {
    cmd("bash", ["scripts/build-web.sh"]).run()
}

fn e2e(_: &[String]) -> Result<(), Error> {
    // The tests compare the page with the CLI and open a generated 2,000-op model.
    cmd(
        "cargo",
        [
            "build",
            "--release",
            "-p",
            "microarena-cli",
            "-p",
            "microarena-core",
            "--example",
            "synthetic",
        ],
    )
    .run()?;
    cmd("node", ["--test", "e2e/"]).run()
}

/// The trunk release Trunk.toml is written for.
const TRUNK_VERSION: &str = "0.21.14";

fn trunk(args: &[String]) -> Result<(), Error> {
    let installed = std::process::Command::new("trunk")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if installed.is_none_or(|v| v.split_whitespace().nth(1) != Some(TRUNK_VERSION)) {
        // Installing trunk is a third of a cold CI run on 2 cores (600 s of 2,743 s
        // in the last landed one), and `web` already builds and tests the same app;
        // so `all` builds with trunk only where it is installed or asked for.
        let asked = args.iter().any(|a| a == "--install")
            || env::var("MICROARENA_TRUNK").is_ok_and(|v| v == "install");
        if !asked {
            skipped(&format!(
                "trunk {TRUNK_VERSION} is not installed; `cargo xtask trunk --install` (or MICROARENA_TRUNK=install) installs it first"
            ));
            return Ok(());
        }
        part("install trunk (once per machine, about 6 minutes)");
        cmd(
            "cargo",
            ["install", "trunk", "--locked", "--version", TRUNK_VERSION],
        )
        .run()?;
    }
    part("trunk build --release into dist-trunk/");
    // The pinned wasm-opt is npm binaryen's (e2e/node_modules/.bin), never Debian's.
    // (The xtask runs from the repository root.)
    let tools = env::current_dir()
        .unwrap_or_default()
        .join("e2e/node_modules/.bin");
    let path = format!(
        "{}:{}",
        tools.display(),
        env::var("PATH").unwrap_or_default()
    );
    cmd("trunk", ["build", "--release", "--dist", "dist-trunk"])
        .env("PATH", path)
        .env("TRUNK_SKIP_VERSION_CHECK", "true")
        .run()?;
    part("the default-page browser test on trunk's build");
    cmd(
        "node",
        ["--test", "--test-name-pattern", "default page", "e2e/"],
    )
    .env("MICROARENA_DIST", "dist-trunk")
    .run()
}

/// The venv the Python step builds and tests in (kept between runs; the wheel
/// is reinstalled every time).
const PY_VENV: &str = "target/venv-py";

fn python(_: &[String]) -> Result<(), Error> {
    if !probe::python_with_venv() {
        skipped("needs python3 with venv");
        return Ok(());
    }
    part("lint the bindings (their own workspace)");
    let manifest = [
        "--manifest-path",
        "python/Cargo.toml",
        "--target-dir",
        "target",
    ];
    cmd("cargo", ["clippy"])
        .args(manifest)
        .args(["--all-targets", "--", "-D", "warnings"])
        .run()?;
    part("build the abi3 wheel and install it in a venv");
    if !std::path::Path::new(PY_VENV).join("bin/python").exists() {
        cmd("python3", ["-m", "venv", PY_VENV]).run()?;
    }
    let bin = |tool: &str| format!("{PY_VENV}/bin/{tool}");
    cmd(
        &bin("pip"),
        ["install", "--quiet", "maturin>=1.5,<2", "pytest>=7"],
    )
    .run()?;
    let wheels = "target/wheels";
    // Only this build's wheel may be in the folder the install picks it from.
    let _ = std::fs::remove_dir_all(wheels);
    cmd(
        &bin("maturin"),
        ["build", "--release", "--quiet", "-o", wheels],
    )
    .args(manifest)
    .run()?;
    cmd(
        &bin("pip"),
        [
            "install",
            "--quiet",
            "--force-reinstall",
            "--no-index",
            "--find-links",
            wheels,
            "microarena",
        ],
    )
    .run()?;
    part("pytest against the CLI");
    cmd("cargo", ["build", "--release", "-p", "microarena-cli"]).run()?;
    cmd(&bin("python"), ["-m", "pytest", "-q", "python/tests"]).run()
}

fn regen_schema(args: &[String]) -> Result<(), Error> {
    cmd("bash", ["scripts/regen-schema.sh"]).args(args).run()
}

/// The step called `name`.
pub fn find(name: &str) -> Option<&'static Step> {
    STEPS.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_compared_as_the_cli_prints_them() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(16_384), "16,384");
        assert_eq!(grouped(1_234_567), "1,234,567");
        let line = "fits: fw.elf (linked in the ELF): arena 1,456 B (minimum 1,204 B + 20% headroom) vs 2 B free; margin 1 B\n  figures: x";
        assert_eq!(
            verdict_figures(line),
            Some("arena 1,456 B (minimum 1,204 B + 20% headroom) vs 2 B free; margin 1 B")
        );
        assert_eq!(verdict_figures(""), None);
    }

    #[test]
    fn names_are_unique_and_not_reserved() {
        for (i, s) in STEPS.iter().enumerate() {
            assert!(
                STEPS[..i].iter().all(|t| t.name != s.name),
                "{} twice",
                s.name
            );
            assert!(!["all", "help"].contains(&s.name), "{} is reserved", s.name);
            assert_eq!(find(s.name).map(|f| f.name), Some(s.name));
        }
    }

    #[test]
    fn all_runs_test_sh_steps_in_its_order() {
        let all: Vec<&str> = STEPS.iter().filter(|s| s.in_all).map(|s| s.name).collect();
        assert_eq!(
            all,
            [
                "lint",
                "nostd",
                "test",
                "wasm-probe",
                "offline-plans",
                "kernels",
                "firmware",
                "miri",
                "fuzz-smoke",
                "bench",
                "web",
                "e2e",
                "trunk",
                "python"
            ]
        );
    }
}
