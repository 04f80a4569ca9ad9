//! The build steps: each one's name, one-line summary and commands. `all` runs
//! the ones marked `in_all` in table order, which is `scripts/test.sh`'s order;
//! together they run exactly the commands test.sh ran before it called the xtask.

use std::env;

use crate::cmd::{Error, cmd};
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
        summary: "the firmware workspace: fmt, clippy, tests and runs under QEMU (M4, M0), and TFLM's golden data with the corpus",
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
        summary: "every fuzz target briefly (FUZZ_SMOKE_SECONDS each, default 20; scripts/fuzz.sh runs them longer)",
        args: None,
        in_all: true,
        run: fuzz_smoke,
    },
    Step {
        name: "bench",
        summary: "the benchmarks compile",
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
        summary: "the app built by trunk (pinned in Trunk.toml, installed --locked once) and the default-page browser test on that build",
        args: None,
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
    fw(&[
        "clippy",
        "--release",
        "--all-targets",
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
    fw(&["run", "--release"])?;
    cmd(
        "arm-none-eabi-size",
        ["target/thumbv7em-none-eabihf/release/microarena-firmware"],
    )
    .dir("firmware")
    .run_best_effort();

    part("firmware under QEMU on TFLM's golden data (device output must equal TFLM's)");
    let Some(corpus) = probe::corpus() else {
        skipped("needs MICROARENA_CORPUS");
        return Ok(());
    };
    let corpus = probe::corpus_absolute(&corpus)?;
    for m in ["person_detect", "micro_speech_lstm"] {
        let golden = corpus.join("golden").join(m);
        cmd("cargo", ["run", "--release"])
            .dir("firmware")
            .env(
                "MICROARENA_FIRMWARE_MODEL",
                corpus.join("models").join(format!("{m}.tflite")),
            )
            .env("MICROARENA_FIRMWARE_INPUT", golden.join("input0.bin"))
            .env("MICROARENA_FIRMWARE_EXPECTED", golden.join("output0.bin"))
            .run()?;
    }
    Ok(())
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
    cmd(
        "cargo",
        [
            "+nightly",
            "miri",
            "test",
            "-p",
            "microarena-runtime",
            "--lib",
            "--test",
            "arena_props",
            "--test",
            "kernels",
            "--test",
            "golden",
        ],
    )
    .env("PROPTEST_CASES", "4")
    .env("MIRIFLAGS", "-Zmiri-disable-isolation")
    .run()
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
        .unwrap_or_else(|| "20".to_owned());
    cmd("bash", ["scripts/fuzz.sh", &seconds])
        .args(["plan", "whatif", "runtime", "image", "optimize", "share"])
        .run()
}

fn bench(_: &[String]) -> Result<(), Error> {
    cmd(
        "cargo",
        [
            "bench",
            "--workspace",
            "--exclude",
            "microarena-app",
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

fn trunk(_: &[String]) -> Result<(), Error> {
    let installed = std::process::Command::new("trunk")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    if installed.is_none_or(|v| v.split_whitespace().nth(1) != Some(TRUNK_VERSION)) {
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
