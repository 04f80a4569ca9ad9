//! `microarena`: TFLM arena plans for people and firmware CI.
//!
//! The only crate that knows about files, exit codes and terminals; every
//! number comes from `microarena-core`.

mod io;
mod render;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use microarena_core::pipeline::{self, PipelineError, Planned};
use microarena_core::plan::PlannerKind;
use microarena_core::report::budget::{self, McuPreset, Reserve};
use microarena_core::report::diff::{self, Growth};
use microarena_core::report::measured::Measured;
use microarena_core::report::optimized::OptimizeReport;
use microarena_core::report::placement::{Memory, MemoryKind};
use microarena_core::report::{Report, c_header};
use microarena_core::rewrite::optimize;
use microarena_core::tflm::profile::{self, TargetProfile};
use microarena_core::{Config, Model, analyze};

/// Exit code for a clean run.
const EXIT_OK: u8 = 0;
/// Exit code for a budget check that failed.
const EXIT_BUDGET: u8 = 1;
/// Exit code for an unusable input or bad usage.
const EXIT_USAGE: u8 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "microarena",
    version,
    about = "Exactly how much RAM a TFLite Micro model needs, where every byte goes, and how to need fewer"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Predict TFLM's arena for a model: head, tail, total and the minimum arena that works.
    Plan {
        /// The .tflite file.
        model: PathBuf,
        /// Target ABI profile.
        #[arg(long, default_value = "x86_64", value_parser = parse_target)]
        target: &'static TargetProfile,
        /// Memory planner.
        #[arg(long, default_value = "tflm-greedy", value_parser = parse_planner)]
        planner: PlannerKind,
        /// Print the JSON report (the documented contract) instead of text.
        #[arg(long)]
        json: bool,
        /// Also print a per-scope picture of the plan, like TFLM's PrintMemoryPlan.
        #[arg(long)]
        timeline: bool,
        /// What-if: give a graph input (name or index) another shape, e.g.
        /// `serving_default_x:0=1,25,257`; every shape is re-derived and the
        /// model re-planned, with the change against the original shown.
        #[arg(long = "input-shape", value_name = "NAME=DIMS")]
        input_shape: Vec<String>,
        /// Also write the arena size for a firmware build: `--emit c-header FILE` writes a
        /// C/C++ header (MICROARENA_ARENA_BYTES = minimum + headroom, rounded to 16; head,
        /// tail, target, model SHA-256), atomically and only when its content changes.
        #[arg(long, num_args = 2, value_names = ["KIND", "FILE"])]
        emit: Option<Vec<String>>,
        /// Headroom on top of the minimum arena in the emitted header, e.g. `20%`.
        #[arg(long, default_value = "20%", value_parser = parse_headroom, requires = "emit")]
        headroom: u32,
    },
    /// Check that the model fits a device: RAM minus reserves must hold the minimum
    /// working arena plus headroom. Exit 1 when it does not, with the shortfall, the largest
    /// buffers at the head's peak (kernel scratch named by owning op) and, on a CMSIS-NN
    /// target, what the same budget gives with TFLM's reference kernels.
    Check {
        /// The .tflite file. Optional with --measured or --elf: the minimum arena is then the
        /// device's (its measured high-water, else the arena it was linked with).
        #[arg(required_unless_present_any = ["measured", "elf"])]
        model: Option<PathBuf>,
        /// A device preset: its RAM, its memories and the target modelling its core and its
        /// SDK's kernels (RP2040 → cortex-m0plus-cmsis-nn). `--ram` and `--target` override
        /// either.
        #[arg(long, value_parser = budget::mcu_preset)]
        device: Option<&'static McuPreset>,
        /// Device RAM (bytes; K, KiB, M, MiB suffixes accepted). Default: the device's, else
        /// the on-chip `--memory` sizes added up.
        #[arg(long, value_parser = budget::parse_bytes, required_unless_present_any = ["device", "memory", "measured", "elf"])]
        ram: Option<u64>,
        /// Other RAM users, e.g. `stack=8K,rtos=16K,isr=2K,dma=4K,log=1K`.
        #[arg(long, value_delimiter = ',', value_parser = parse_reserve)]
        reserve: Vec<Reserve>,
        /// Required headroom on top of the minimum arena, e.g. `20%`.
        #[arg(long, default_value = "20%", value_parser = parse_headroom)]
        headroom: u32,
        /// Target profile [default: the device's, else cortex-m].
        #[arg(long, value_parser = parse_target)]
        target: Option<&'static TargetProfile>,
        /// Memory planner.
        #[arg(long, default_value = "tflm-greedy", value_parser = parse_planner)]
        planner: PlannerKind,
        /// Device flash (bytes; K, KiB, M, MiB suffixes accepted): the model file plus
        /// `--code` must fit in it (no headroom: both sizes are exact).
        #[arg(long, value_parser = budget::parse_bytes)]
        flash: Option<u64>,
        /// Firmware code and read-only data sharing the flash with the model (the
        /// linker's .text + .rodata).
        #[arg(long, default_value = "0", value_parser = budget::parse_bytes)]
        code: u64,
        /// A memory of a custom device, for the placement: `NAME=SIZE[@ORIGIN][:tcm|sram|ext]`,
        /// e.g. `--memory DTCM=64K@0x20000000:tcm --memory SRAM1=240K@0x20010000`. Replaces the
        /// device's list; the reserves go to the largest SRAM; adjacent ones may share a buffer.
        #[arg(long, value_parser = parse_memory)]
        memory: Vec<Memory>,
        /// The firmware's report (its MICROARENA-REPORT line, or QEMU's whole output): the
        /// RAM, reserved regions, stack high-waters and arena it measured replace guesses;
        /// a stack past its reservation fails. `--ram`/`--reserve` still override.
        #[arg(long, value_name = "FILE")]
        measured: Option<PathBuf>,
        /// The firmware's ELF: RAM size, reserved regions and the .noinit arena read from
        /// its linker-script symbols and sections (completed by --measured when given).
        #[arg(long, value_name = "FILE")]
        elf: Option<PathBuf>,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run the model on this machine with microarena-runtime, in exactly the planned arena.
    /// Inputs and outputs are raw little-endian tensors, one file per tensor.
    Run {
        /// The .tflite file.
        model: PathBuf,
        /// One raw input file per model input, in order.
        #[arg(long, num_args = 1.., required = true)]
        input: Vec<PathBuf>,
        /// One raw output file per model output, in order (written atomically).
        #[arg(long, num_args = 1..)]
        output: Vec<PathBuf>,
        /// Run this many inferences and print the time per inference.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
        /// Where the runtime keeps its kernels' OpData: `tail` (the arena, computed at
        /// start-up) or `flash` (in the image, filled on the host; the arena shrinks by it).
        #[arg(long, default_value = "tail", value_parser = ["tail", "flash"])]
        opdata: String,
        /// How the runtime executes: `plain` (every op over whole tensors) or `banded`
        /// (patch-based: the chain of windowed ops at the peak runs row by row; plain when
        /// no chain lowers the arena).
        #[arg(long, default_value = "plain", value_parser = ["plain", "banded"])]
        exec: String,
        /// In-place execution: element-wise ops write over an input that dies at them and
        /// RESHAPE/SQUEEZE/EXPAND_DIMS outputs are their input's bytes (combines with
        /// --opdata and --exec; kept only when it does not enlarge the arena).
        #[arg(long)]
        in_place: bool,
    },
    /// Write a copy of the model with an OfflineMemoryAllocation plan, so stock TFLM places
    /// every tensor where microarena's planner says (scratch buffers stay online).
    Optimize {
        /// The .tflite file (never overwritten).
        model: PathBuf,
        /// Output .tflite path (written atomically; must differ from the input).
        #[arg(short, long)]
        output: PathBuf,
        /// Planner proposing the tensor offsets.
        #[arg(long, default_value = "best", value_parser = parse_planner)]
        planner: PlannerKind,
        /// Also search for an operator order of subgraph 0 with a lower peak.
        #[arg(long)]
        reorder: bool,
        /// Replace an offline plan the model already carries.
        #[arg(long)]
        force: bool,
        /// Target ABI profile for the reported tail and total.
        #[arg(long, default_value = "x86_64", value_parser = parse_target)]
        target: &'static TargetProfile,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Compare the arenas of two models (re-trained, re-quantized, optimized, another
    /// length): headline figures, tail categories and head tensors that changed. With
    /// --max-growth, exit 1 when the chosen figure grew more than allowed.
    Diff {
        /// The model before.
        old: PathBuf,
        /// The model after.
        new: PathBuf,
        /// Target ABI profile.
        #[arg(long, default_value = "x86_64", value_parser = parse_target)]
        target: &'static TargetProfile,
        /// Memory planner.
        #[arg(long, default_value = "tflm-greedy", value_parser = parse_planner)]
        planner: PlannerKind,
        /// Fail (exit 1) when --figure grew by more than this: bytes (4K) or percent (5%).
        #[arg(long, value_name = "BYTES|PCT", value_parser = Growth::parse)]
        max_growth: Option<Growth>,
        /// The figure --max-growth guards: head, tail, total, minimum or runtime.
        #[arg(long, default_value = "minimum", value_parser = ["head", "tail", "total", "minimum", "runtime"])]
        figure: String,
        /// Print the differences as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write a bundled example model (generated weights; `--name` picks which).
    Example {
        /// Output .tflite path (written atomically).
        #[arg(short, long)]
        output: PathBuf,
        /// Which example: `mobilenet` (the person-detection MobileNet-v1 0.25 the app opens),
        /// `rp2040-cnn` (a CNN that fits an RP2040 with reference kernels, not with CMSIS-NN) or
        /// `rp2040-anomaly` (a 1-D CNN anomaly detector whose arena fits an RP2040 alone, not
        /// beside 48 KiB of RTOS and stacks).
        #[arg(long, default_value = "mobilenet", value_parser = ["mobilenet", "rp2040-cnn", "rp2040-anomaly"])]
        name: String,
    },
}

fn parse_target(s: &str) -> Result<&'static TargetProfile, String> {
    profile::lookup(s).map_err(|e| e.to_string())
}

fn parse_planner(s: &str) -> Result<PlannerKind, String> {
    PlannerKind::lookup(s).map_err(|e| e.to_string())
}

fn parse_reserve(s: &str) -> Result<Reserve, String> {
    let (name, size) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}': expected NAME=BYTES, e.g. stack=8K"))?;
    Ok(Reserve {
        name: name.trim().into(),
        bytes: budget::parse_bytes(size)?,
    })
}

/// `NAME=SIZE[@ORIGIN][:tcm|sram|ext]` → a memory for `check --memory`. The
/// name lives for the rest of the process (one per argument).
fn parse_memory(s: &str) -> Result<Memory, String> {
    let (name, rest) = s.split_once('=').ok_or_else(|| {
        format!("'{s}': expected NAME=SIZE[@ORIGIN][:tcm|sram|ext], e.g. DTCM=64K@0x20000000:tcm")
    })?;
    let (rest, kind) = match rest.rsplit_once(':') {
        Some((r, k)) => (r, k.trim()),
        None => (rest, "sram"),
    };
    let (kind, rank) = match kind {
        "tcm" => (MemoryKind::Tcm, 0),
        "sram" => (MemoryKind::Sram, 1),
        "ext" => (MemoryKind::ExternalRam, 2),
        k => return Err(format!("'{s}': unknown kind '{k}' (tcm, sram or ext)")),
    };
    let (size, origin) = match rest.split_once('@') {
        Some((size, o)) => {
            let o = o.trim();
            let origin = match o.strip_prefix("0x").or_else(|| o.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
                None => o.parse(),
            }
            .map_err(|_| format!("'{s}': origin '{o}' is not a number (e.g. 0x20000000)"))?;
            (size, Some(origin))
        }
        None => (rest, None),
    };
    let bytes = budget::parse_bytes(size)?;
    if name.trim().is_empty() || bytes == 0 {
        return Err(format!("'{s}': a memory needs a name and a size"));
    }
    Ok(Memory {
        name: Box::leak(name.trim().to_string().into_boxed_str()),
        // Without an origin no two memories are adjacent (see `custom_memories`).
        origin: origin.unwrap_or(u64::MAX),
        bytes,
        kind,
        rank,
        main: false,
    })
}

/// The `--memory` list: distinct far-apart origins where none was given, and
/// the largest SRAM (else the largest memory) marked as holding the reserves.
fn custom_memories(mut list: Vec<Memory>) -> Vec<Memory> {
    let mut next = u64::MAX;
    for m in list.iter_mut().filter(|m| m.origin == u64::MAX) {
        next -= 1 << 40;
        m.origin = next;
    }
    let main = list
        .iter()
        .enumerate()
        .max_by_key(|(_, m)| (m.kind == MemoryKind::Sram, m.bytes))
        .map(|(i, _)| i);
    if let Some(i) = main {
        list[i].main = true;
    }
    list
}

fn parse_headroom(s: &str) -> Result<u32, String> {
    microarena_core::report::budget::parse_percent_bp(s).map_err(|e| format!("headroom {e}"))
}

/// A failure with the one line the user sees and the exit code.
struct Failure {
    code: u8,
    /// `None`: nothing to say (stdout's reader went away).
    message: Option<String>,
}

/// Turns any error into the one-line usage failure that names `path`.
fn in_file<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> Failure + '_ {
    move |e| Failure::usage(format!("{}: {e}", path.display()))
}

impl Failure {
    fn usage(message: String) -> Failure {
        Failure {
            code: EXIT_USAGE,
            message: Some(message),
        }
    }

    /// The reader of stdout closed it: stop, quietly and successfully.
    fn reader_gone() -> Failure {
        Failure {
            code: EXIT_OK,
            message: None,
        }
    }
}

/// `--version`: the tool's version and, per target, the TFLM build its figures
/// model, from the profiles themselves.
fn version_text() -> String {
    let mut text = String::from(env!("CARGO_PKG_VERSION"));
    for p in profile::PROFILES {
        let source = p.measured_against.unwrap_or("not measured (derived)");
        text.push_str(&format!("\n  {:<24} {source}", p.name));
    }
    text
}

/// `--device` and `--target` help end with core's lists (`MCU_PRESETS`,
/// `PROFILES`), so a new preset or target shows without editing the CLI; a
/// derived target is labelled as such.
fn with_core_lists(cmd: clap::Command) -> clap::Command {
    let targets: Vec<String> = profile::PROFILES
        .iter()
        .map(|p| match p.measured_against {
            Some(_) => p.name.to_string(),
            None => format!("{} (derived)", p.name),
        })
        .collect();
    let devices: Vec<String> = budget::MCU_PRESETS
        .iter()
        .map(|p| format!("{} ({})", p.name, p.target.unwrap_or("not modelled")))
        .collect();
    let append = |arg: clap::Arg, what: &str, list: &[String]| {
        let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
        arg.help(format!("{help}. {what}: {}.", list.join(", ")))
    };
    let mut cmd = cmd;
    for sub in ["plan", "check", "optimize", "diff"] {
        cmd = cmd.mut_subcommand(sub, |c| {
            c.mut_arg("target", |a| append(a, "Targets", &targets))
        });
    }
    cmd.mut_subcommand("check", |c| {
        c.mut_arg("device", |a| append(a, "Devices", &devices))
    })
}

fn main() -> ExitCode {
    // Leaked once: clap keeps the version text for the life of the process.
    let version: &'static str = Box::leak(version_text().into_boxed_str());
    let matches = with_core_lists(Cli::command().version(version)).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            if let Some(message) = f.message {
                io::err_line(&format!("microarena: {message}"));
            }
            ExitCode::from(f.code)
        }
    }
}

fn run(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Command::Plan {
            model,
            target,
            planner,
            json,
            timeline,
            input_shape,
            emit,
            headroom,
        } => {
            let bytes = io::read_model(&model)?;
            let header_path = match emit.as_deref() {
                None => None,
                Some([kind, file]) if kind == "c-header" => Some(PathBuf::from(file)),
                Some([kind, _]) => {
                    return Err(Failure::usage(format!(
                        "--emit {kind}: unknown kind; the one kind is c-header"
                    )));
                }
                Some(_) => return Err(Failure::usage("--emit takes KIND FILE".into())),
            };
            let original = Model::parse(&bytes).map_err(in_file(&model))?;
            let config = Config {
                profile: target,
                planner,
            };
            let Planned {
                model: parsed,
                analysis,
                report,
            } = pipeline::plan(original, &config, &input_shape, &io::display_name(&model))
                .map_err(|e| match e {
                    PipelineError::InputShape(e) => Failure::usage(format!("--input-shape {e}")),
                    PipelineError::WhatIf(e) => {
                        Failure::usage(format!("{}: what-if: {e}", model.display()))
                    }
                    PipelineError::WhatIfAnalysis(e) | PipelineError::Analysis(e) => {
                        in_file(&model)(e)
                    }
                })?;
            if let Some(path) = &header_path {
                emit_c_header(path, &report, &bytes, headroom)?;
            }
            if json {
                print_json(serde_json::to_string_pretty(&report))?;
            } else {
                io::out(&render::summary(&report))?;
                let advice = microarena_core::report::advice::advise(&parsed, &report, &config);
                io::out(&render::advice(&advice, &model.display().to_string()))?;
                if timeline {
                    io::out("\n")?;
                    io::out(&microarena_core::report::timeline::render(
                        &analysis.plan_input,
                        &analysis.plan,
                    ))?;
                }
            }
            Ok(EXIT_OK)
        }
        Command::Check {
            model,
            device,
            memory,
            ram,
            reserve,
            headroom,
            target,
            planner,
            flash,
            code,
            measured,
            elf,
            json,
        } => {
            let memory = custom_memories(memory);
            let target = match (target, device) {
                (Some(t), _) => t,
                (None, Some(d)) => d.profile().map_err(|e| {
                    Failure::usage(format!("--device {e}; pass --target to choose one"))
                })?,
                (None, None) => &profile::CORTEX_M,
            };
            let from_device = device_figures(elf.as_deref(), measured.as_deref())?;
            let bytes = model.as_deref().map(io::read_model).transpose()?;
            let parsed = match (&model, &bytes) {
                (Some(path), Some(b)) => Some(Model::parse(b).map_err(in_file(path))?),
                _ => None,
            };
            let name = model.as_deref().map(io::display_name);
            let figures_file = measured.as_deref().or(elf.as_deref()).map(io::display_name);
            let request = pipeline::CheckRequest {
                model: parsed.as_ref().zip(name.as_deref()),
                config: Config {
                    profile: target,
                    planner,
                },
                device,
                memories: &memory,
                ram_bytes: ram,
                reserves: reserve,
                headroom_bp: headroom,
                flash_bytes: flash,
                code_bytes: code,
                file_bytes: parsed.as_ref().map(|p| p.file_bytes),
                measured: from_device.as_ref(),
                measured_file: figures_file.as_deref(),
            };
            let pipeline::Checked {
                name,
                budget,
                report: checked,
            } = pipeline::check_request(&request).map_err(|e| match (e, &model) {
                (pipeline::CheckError::Analysis(e), Some(path)) => in_file(path)(e),
                (e, _) => Failure::usage(e.to_string()),
            })?;
            if json {
                // A reader that stopped early does not turn a failed budget into a pass.
                past_closed_stdout(print_sorted_json(serde_json::to_value(&checked), false))?;
            }
            let lines = render::check_lines(&name, &budget, &checked);
            if checked.fits {
                if !json {
                    io::out(&format!("{}\n", lines.join("\n")))?;
                }
                Ok(EXIT_OK)
            } else {
                for l in &lines {
                    io::err_line(&format!("microarena: {l}"));
                }
                Ok(EXIT_BUDGET)
            }
        }
        Command::Run {
            model,
            input,
            output,
            repeat,
            opdata,
            exec,
            in_place,
        } => {
            use microarena_core::lower::{Execution, LowerOptions, OpDataIn};
            let options = LowerOptions {
                opdata: match opdata.as_str() {
                    "flash" => OpDataIn::Flash,
                    _ => OpDataIn::Tail,
                },
                execution: match exec.as_str() {
                    "banded" => Execution::Banded,
                    _ => Execution::Plain,
                },
                in_place,
            };
            run_model(&model, &input, &output, repeat, &options)
        }
        Command::Optimize {
            model,
            output,
            planner,
            reorder,
            force,
            target,
            json,
        } => optimize_model(&model, &output, planner, reorder, force, target, json),
        Command::Diff {
            old,
            new,
            target,
            planner,
            max_growth,
            figure,
            json,
        } => {
            let config = Config {
                profile: target,
                planner,
            };
            let d = diff::diff(&report_for(&old, &config)?, &report_for(&new, &config)?);
            // The growth gate below still decides the status if the reader stopped early.
            past_closed_stdout(if json {
                print_json(serde_json::to_string_pretty(&d))
            } else {
                io::out(&render::diff(&d))
            })?;
            let Some(allowed) = max_growth else {
                return Ok(EXIT_OK);
            };
            let c = d
                .figure(&figure)
                .ok_or_else(|| Failure::usage(format!("no figure '{figure}' to guard")))?;
            if c.old_bytes.is_none() || c.new_bytes.is_none() {
                let side = if c.old_bytes.is_none() { &old } else { &new };
                return Err(Failure::usage(format!(
                    "{}: no {figure} figure to compare (microarena-runtime cannot run it)",
                    side.display()
                )));
            }
            match diff::growth_violation(&d, &figure, allowed) {
                Some(why) => {
                    io::err_line(&format!("microarena: {}: {why}", io::display_name(&new)));
                    Ok(EXIT_BUDGET)
                }
                None => Ok(EXIT_OK),
            }
        }
        Command::Example { output, name } => {
            let bytes = match name.as_str() {
                "rp2040-cnn" => microarena_core::build::example::rp2040_cnn(),
                "rp2040-anomaly" => microarena_core::build::example::rp2040_anomaly(),
                _ => microarena_core::build::example::mobilenet_v1_025_96_int8(),
            };
            io::write_atomic(&output, &bytes)?;
            io::err_line(&format!(
                "wrote {} ({} bytes)",
                output.display(),
                bytes.len()
            ));
            Ok(EXIT_OK)
        }
    }
}

/// The figures of `check --elf` and `--measured`: the ELF's, completed by the
/// report's (which include what was measured); `None` when neither was given.
fn device_figures(elf: Option<&Path>, report: Option<&Path>) -> Result<Option<Measured>, Failure> {
    let read = |p: &Path| {
        microarena_shell::read_capped(p, microarena_shell::MAX_FIRMWARE_FILE_BYTES)
            .map_err(|e| Failure::usage(e.to_string()))
    };
    let linked = match elf {
        Some(p) => Some(microarena_core::report::elf::read(&read(p)?).map_err(in_file(p))?),
        None => None,
    };
    let run = match report {
        Some(p) => {
            let text = String::from_utf8_lossy(&read(p)?).into_owned();
            Some(Measured::parse(&text).map_err(in_file(p))?)
        }
        None => None,
    };
    Measured::combine(linked, run).map_err(Failure::usage)
}

/// Writes the C header for `report` to `path`, atomically, and only when its
/// content differs from what is there (so a build does not recompile firmware
/// for an unchanged model). Says which on stderr.
fn emit_c_header(
    path: &Path,
    report: &Report,
    model: &[u8],
    headroom_bp: u32,
) -> Result<(), Failure> {
    use sha2::Digest as _;
    let sha: String = sha2::Sha256::digest(model)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let text = c_header::render(
        report,
        &c_header::HeaderInputs {
            headroom_bp,
            model_sha256: &sha,
            model_bytes: model.len() as u64,
            generator: concat!("microarena ", env!("CARGO_PKG_VERSION")),
        },
    );
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        io::err_line(&format!("{}: unchanged", path.display()));
        return Ok(());
    }
    io::write_atomic(path, text.as_bytes())?;
    io::err_line(&format!(
        "wrote {} (arena {} B)",
        path.display(),
        budget::arena_with_headroom(report.arena.minimum_bytes, headroom_bp)
    ));
    Ok(())
}

/// Lets a command go on to its verdict when stdout's reader went away (the
/// status of `check` and `diff --max-growth` is what a CI job reads); other
/// failures pass through.
fn past_closed_stdout(printed: Result<(), Failure>) -> Result<(), Failure> {
    match printed {
        Err(f) if f.message.is_none() => Ok(()),
        other => other,
    }
}

/// Prints serialized JSON; serialization cannot fail for our plain data
/// types, but if it did the user gets a one-line error, not a panic.
fn print_json(text: serde_json::Result<String>) -> Result<(), Failure> {
    let text = text.map_err(|e| Failure::usage(format!("cannot serialize the output: {e}")))?;
    io::out(&format!("{text}\n"))
}

/// Prints a record with its keys sorted at every level, as `optimize` and
/// `check` always have (pretty or on one line).
fn print_sorted_json(
    value: serde_json::Result<serde_json::Value>,
    pretty: bool,
) -> Result<(), Failure> {
    let value = value.map_err(|e| Failure::usage(format!("cannot serialize the output: {e}")))?;
    if pretty {
        print_json(serde_json::to_string_pretty(&value))
    } else {
        print_json(serde_json::to_string(&value))
    }
}

/// Reads, parses, analyses and reports one model, errors naming the file.
fn report_for(path: &Path, config: &Config) -> Result<Report, Failure> {
    let bytes = io::read_model(path)?;
    let model = Model::parse(&bytes).map_err(in_file(path))?;
    let analysis = analyze(&model, config).map_err(in_file(path))?;
    Ok(Report::new(&model, &analysis, &io::display_name(path)))
}

fn optimize_model(
    model: &Path,
    output: &Path,
    planner: PlannerKind,
    reorder: bool,
    force: bool,
    target: &'static TargetProfile,
    json: bool,
) -> Result<u8, Failure> {
    let name = model.display();
    if io::same_file(model, output) {
        return Err(Failure::usage(format!(
            "{}: refusing to write over the input model; choose another -o path",
            output.display()
        )));
    }
    let bytes = io::read_model(model)?;
    let mut opts = optimize::Options::new(target);
    opts.planner = planner;
    opts.reorder = reorder;
    opts.force = force;
    let r =
        optimize::optimize(&bytes, &opts).map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    // Re-read and re-analyse exactly the bytes about to be written.
    let reread = Model::parse(&r.bytes)
        .map_err(|e| Failure::usage(format!("internal error: the output does not parse: {e}")))?;
    let analysis = analyze(
        &reread,
        &Config {
            profile: target,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .map_err(|e| Failure::usage(format!("internal error: the output does not analyse: {e}")))?;
    if analysis.head_bytes != r.head_bytes {
        return Err(Failure::usage(format!(
            "internal error: the output gets a head of {} B, not the predicted {} B; nothing was written",
            analysis.head_bytes, r.head_bytes
        )));
    }
    io::write_atomic(output, &r.bytes)?;
    let report = Report::new(&reread, &analysis, &io::display_name(output));
    if json {
        let record = OptimizeReport::new(
            &io::display_name(model),
            &io::display_name(output),
            target,
            planner,
            &r,
            report,
        );
        print_sorted_json(serde_json::to_value(&record), true)?;
    } else {
        io::out(&render::optimized(
            &io::display_name(model),
            &io::display_name(output),
            &r,
            &report,
        ))?;
    }
    Ok(EXIT_OK)
}

fn run_model(
    model: &Path,
    inputs: &[PathBuf],
    outputs: &[PathBuf],
    repeat: u32,
    options: &microarena_core::lower::LowerOptions,
) -> Result<u8, Failure> {
    use microarena_core::lower::{lower_with, runtime_arena_with};
    let name = model.display();
    let bytes = io::read_model(model)?;
    let parsed = Model::parse(&bytes).map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    let mut image =
        lower_with(&parsed, options).map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    microarena_runtime::freeze_opdata(&mut image)
        .map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    let need =
        runtime_arena_with(&parsed, options).map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = microarena_runtime::Interpreter::new(&image, &mut arena)
        .map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    let (n_in, n_out) = (it.image().input_count(), it.image().output_count());
    if inputs.len() != n_in {
        return Err(Failure::usage(format!(
            "{name}: the model has {n_in} input(s), {} --input file(s) given",
            inputs.len()
        )));
    }
    if !outputs.is_empty() && outputs.len() != n_out {
        return Err(Failure::usage(format!(
            "{name}: the model has {n_out} output(s), {} --output file(s) given",
            outputs.len()
        )));
    }
    let mut data = Vec::with_capacity(n_in);
    for (i, path) in inputs.iter().enumerate() {
        let want = it
            .input_info(i)
            .map_err(|e| Failure::usage(format!("{name}: {e}")))?
            .bytes;
        let d = std::fs::read(path)
            .map_err(|e| Failure::usage(format!("{}: cannot read: {e}", path.display())))?;
        if d.len() != want {
            return Err(Failure::usage(format!(
                "{}: {} bytes, but input {i} needs {want}",
                path.display(),
                d.len()
            )));
        }
        data.push(d);
    }
    let start = std::time::Instant::now();
    for _ in 0..repeat.max(1) {
        // Refill before every invoke: the plan reuses an input's bytes once it is consumed.
        for (i, d) in data.iter().enumerate() {
            it.input_mut(i)
                .map_err(|e| Failure::usage(format!("{name}: {e}")))?
                .copy_from_slice(d);
        }
        it.invoke()
            .map_err(|e| Failure::usage(format!("{name}: {e}")))?;
    }
    let elapsed = start.elapsed();
    for (i, path) in outputs.iter().enumerate() {
        let out = it
            .output(i)
            .map_err(|e| Failure::usage(format!("{name}: {e}")))?;
        io::write_atomic(path, out)?;
    }
    let u = it.memory_usage();
    io::err_line(&format!(
        "arena: {} B high-water (head {} + tail {}); predicted {} B",
        u.high_water, u.head, u.tail, need.total_bytes
    ));
    if repeat > 1 {
        io::out(&format!(
            "{:.3} ms per inference ({repeat} runs)\n",
            elapsed.as_secs_f64() * 1e3 / f64::from(repeat)
        ))?;
    }
    Ok(EXIT_OK)
}
