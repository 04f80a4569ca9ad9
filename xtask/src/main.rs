//! `cargo xtask <step>`: microarena's build steps by name (`cargo xtask --help`
//! lists them). `scripts/test.sh` runs `cargo xtask all`, which is what CI runs.

mod cargo_env;
mod cmd;
mod probe;
mod steps;

use std::env;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use steps::{STEPS, Step};

/// What the command line asks for.
#[derive(Debug)]
enum Request<'a> {
    Help,
    /// Steps to run in order, and the arguments for a step that takes some.
    Run(Vec<&'static Step>, &'a [String]),
}

/// A command line that names no step or gives a step arguments it does not take.
#[derive(Debug, PartialEq)]
enum UsageError {
    UnknownStep(String),
    UnexpectedArguments {
        step: &'static str,
        args: Vec<String>,
    },
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UsageError::UnknownStep(name) => write!(f, "unknown step `{name}`"),
            UsageError::UnexpectedArguments { step, args } => {
                write!(f, "`{step}` takes no arguments (got `{}`)", args.join(" "))
            }
        }
    }
}

fn parse(args: &[String]) -> Result<Request<'_>, UsageError> {
    let Some((first, rest)) = args.split_first() else {
        return Ok(Request::Help);
    };
    let steps: Vec<&'static Step> = match first.as_str() {
        "-h" | "--help" | "help" => return Ok(Request::Help),
        "all" => STEPS.iter().filter(|s| s.in_all).collect(),
        name => vec![steps::find(name).ok_or_else(|| UsageError::UnknownStep(name.to_owned()))?],
    };
    let takes_args = steps.len() == 1 && steps[0].args.is_some();
    if !rest.is_empty() && !takes_args {
        return Err(UsageError::UnexpectedArguments {
            step: if steps.len() == 1 {
                steps[0].name
            } else {
                "all"
            },
            args: rest.to_vec(),
        });
    }
    Ok(Request::Run(steps, rest))
}

fn help() -> String {
    let mut text = String::from(
        "Usage: cargo xtask <STEP> [ARGS]\n\n\
         microarena's build steps; `bash scripts/test.sh` sets up the machine and runs `all`.\n\
         The quick loop while editing is plain `cargo test` (core, cli, runtime).\n\nSteps:\n",
    );
    let width = STEPS.iter().map(|s| s.name.len()).max().unwrap_or(0).max(3);
    for s in STEPS {
        let note = if s.in_all { "" } else { " (not in all)" };
        text.push_str(&format!("  {:width$}  {}{note}\n", s.name, s.summary));
        if let Some(args) = s.args {
            text.push_str(&format!(
                "  {:width$}    cargo xtask {} {args}\n",
                "", s.name
            ));
        }
    }
    text.push_str(&format!(
        "  {:width$}  every step above not marked otherwise, in this order (what CI runs)\n",
        "all"
    ));
    text
}

fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let (steps, step_args) = match parse(&args) {
        Ok(Request::Help) => {
            print!("{}", help());
            return ExitCode::SUCCESS;
        }
        Ok(Request::Run(steps, step_args)) => (steps, step_args),
        Err(e) => {
            eprint!("xtask: {e}\n\n{}", help());
            return ExitCode::from(2);
        }
    };

    // Every command runs from the repository root, as scripts/test.sh did after its `cd`.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ lives in the repository root");
    if let Err(e) = env::set_current_dir(root) {
        eprintln!("xtask: cannot enter {}: {e}", root.display());
        return ExitCode::FAILURE;
    }

    let start = Instant::now();
    let mut times = Vec::new();
    for step in &steps {
        eprintln!("\n== {}: {}", step.name, step.summary);
        let t0 = Instant::now();
        let result = (step.run)(step_args);
        let took = t0.elapsed();
        if let Err(e) = result {
            eprintln!(
                "\nxtask: step `{}` failed after {}: {e}",
                step.name,
                seconds(took)
            );
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1));
        }
        eprintln!("== {}: done in {}", step.name, seconds(took));
        times.push((step.name, took));
    }
    if times.len() > 1 {
        eprintln!("\n== durations");
        for (name, took) in &times {
            eprintln!("  {name:14} {:>9}", seconds(*took));
        }
        eprintln!("  {:14} {:>9}", "total", seconds(start.elapsed()));
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    fn names(r: &Request<'_>) -> Vec<&'static str> {
        match r {
            Request::Run(steps, _) => steps.iter().map(|s| s.name).collect(),
            Request::Help => vec![],
        }
    }

    #[test]
    fn no_arguments_and_help_flags_list_the_steps() {
        for line in ["", "--help", "-h", "help"] {
            assert!(matches!(parse(&words(line)), Ok(Request::Help)), "{line:?}");
        }
        let text = help();
        for s in STEPS {
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(s.name)),
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn a_step_by_name_and_all_in_order() {
        assert_eq!(names(&parse(&words("nostd")).unwrap()), ["nostd"]);
        let line = words("all");
        let all = names(&parse(&line).unwrap());
        assert_eq!(all.first(), Some(&"lint"));
        assert!(!all.contains(&"regen-schema"));
    }

    #[test]
    fn unknown_steps_and_stray_arguments_are_usage_errors() {
        assert_eq!(
            parse(&words("lnt")).unwrap_err(),
            UsageError::UnknownStep("lnt".into())
        );
        assert_eq!(
            parse(&words("lint --fix")).unwrap_err(),
            UsageError::UnexpectedArguments {
                step: "lint",
                args: vec!["--fix".into()]
            }
        );
        assert!(parse(&words("all web")).is_err());
        let args = words("regen-schema ../schema.fbs");
        let Ok(Request::Run(_, rest)) = parse(&args) else {
            panic!("regen-schema takes a path");
        };
        assert_eq!(rest, ["../schema.fbs"]);
    }
}
