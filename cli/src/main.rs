//! `microarena`: TFLM arena plans for people and firmware CI.
//!
//! The only crate that knows about files, exit codes and terminals; every
//! number comes from `microarena-core`.

mod io;
mod render;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use microarena_core::planner::PlannerKind;
use microarena_core::profile::{self, TargetProfile};
use microarena_core::report::Report;
use microarena_core::{Config, Model, analyze};

/// Exit code for a clean run.
const EXIT_OK: u8 = 0;
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
    },
    /// Write the bundled example model (MobileNet-v1 0.25, 96x96 int8, generated weights).
    Example {
        /// Output .tflite path (written atomically).
        #[arg(short, long)]
        output: PathBuf,
    },
}

fn parse_target(s: &str) -> Result<&'static TargetProfile, String> {
    profile::by_name(s).ok_or_else(|| {
        let names: Vec<&str> = profile::PROFILES.iter().map(|p| p.name).collect();
        format!("unknown target '{s}'; choose one of: {}", names.join(", "))
    })
}

fn parse_planner(s: &str) -> Result<PlannerKind, String> {
    PlannerKind::by_name(s).ok_or_else(|| {
        let names: Vec<&str> = PlannerKind::ALL.iter().map(|p| p.name()).collect();
        format!("unknown planner '{s}'; choose one of: {}", names.join(", "))
    })
}

/// A failure with the one line the user sees and the exit code.
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn usage(message: String) -> Failure {
        Failure {
            code: EXIT_USAGE,
            message,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("microarena: {}", f.message);
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
        } => {
            let bytes = io::read_model(&model)?;
            let parsed = Model::parse(&bytes)
                .map_err(|e| Failure::usage(format!("{}: {e}", model.display())))?;
            let analysis = analyze(
                &parsed,
                &Config {
                    profile: target,
                    planner,
                },
            )
            .map_err(|e| Failure::usage(format!("{}: {e}", model.display())))?;
            let report = Report::new(&parsed, &analysis, &io::display_name(&model));
            if json {
                let text = serde_json::to_string_pretty(&report)
                    .map_err(|e| Failure::usage(format!("cannot serialize the report: {e}")))?;
                println!("{text}");
            } else {
                print!("{}", render::summary(&report));
                if timeline {
                    println!();
                    print!(
                        "{}",
                        microarena_core::timeline::render(&analysis.plan_input, &analysis.plan)
                    );
                }
            }
            Ok(EXIT_OK)
        }
        Command::Example { output } => {
            let bytes: Vec<u8> = Vec::new(); // EXAMPLE_PLACEHOLDER
            io::write_atomic(&output, &bytes)?;
            eprintln!("wrote {} ({} bytes)", output.display(), bytes.len());
            Ok(EXIT_OK)
        }
    }
}
