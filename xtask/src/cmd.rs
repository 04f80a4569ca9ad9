//! Running one external command the way `scripts/test.sh` did under `set -e`:
//! inherited stdio, and the first failure stops everything with the command named.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use crate::cargo_env;

/// Why a step stopped.
#[derive(Debug)]
pub enum Error {
    /// The command ran and exited non-zero (its own output says why).
    Failed { command: String, status: ExitStatus },
    /// The command could not be started at all.
    NotStarted { command: String, source: io::Error },
    /// `MICROARENA_CORPUS` is set but names no readable directory.
    Corpus { path: PathBuf, source: io::Error },
    /// A comparison the step makes between outputs did not hold.
    Mismatch(String),
}

impl Error {
    /// The process exit code for this failure: the failing command's own code
    /// where it has one (as `set -e` passed it on), else 1.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Failed { status, .. } => status.code().filter(|&c| c != 0).unwrap_or(1),
            Error::NotStarted { .. } | Error::Corpus { .. } | Error::Mismatch(_) => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Failed { command, status } => write!(f, "`{command}` failed ({status})"),
            Error::NotStarted { command, source } => write!(
                f,
                "could not start `{command}`: {source} (`bash scripts/setup.sh` installs what the steps need)"
            ),
            Error::Corpus { path, source } => write!(
                f,
                "MICROARENA_CORPUS={} is not a readable directory: {source} (point it at the shared corpus, e.g. ../shared, or unset it)",
                path.display()
            ),
            Error::Mismatch(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

/// What [`Cmd::capture`] saw.
#[derive(Debug)]
pub struct Captured {
    /// Exit status 0.
    pub success: bool,
    /// The exit code, if it exited (not killed).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// One command line: program, arguments, extra environment and working directory.
#[derive(Debug)]
pub struct Cmd {
    program: String,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    dir: Option<PathBuf>,
}

/// `cmd("cargo", ["fmt", "--all", "--check"])`.
pub fn cmd<I, S>(program: &str, args: I) -> Cmd
where
    I: IntoIterator<Item = S>,
    S: Into<OsString>,
{
    Cmd {
        program: program.to_owned(),
        args: args.into_iter().map(Into::into).collect(),
        env: Vec::new(),
        dir: None,
    }
}

impl Cmd {
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.env.push((key.to_owned(), value.into()));
        self
    }

    /// Runs in `dir`, relative to the repository root (the process's working directory).
    pub fn dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Prints the command, runs it with inherited stdio and fails unless it exits 0.
    pub fn run(self) -> Result<(), Error> {
        eprintln!("+ {self}");
        let status = self.command().status();
        self.check(status)
    }

    /// Runs this command and, at the same time, `beside` (more commands, in
    /// turn): for single-threaded work such as Miri on a machine with two
    /// cores. Both run to the end; fails if either failed (this one's error
    /// first).
    pub fn run_beside(self, beside: impl FnOnce() -> Result<(), Error>) -> Result<(), Error> {
        eprintln!("+ {self} &");
        let child = self.command().spawn();
        let other = beside();
        let status = match child {
            Ok(mut c) => c.wait(),
            Err(e) => Err(e),
        };
        self.check(status)?;
        other
    }

    /// Prints the command, runs it with stdout and stderr captured (then shown),
    /// and returns them with the exit status whatever it is: for steps that
    /// compare outputs or expect a failure. Fails only if it could not start.
    pub fn capture(self) -> Result<Captured, Error> {
        eprintln!("+ {self}");
        let out = self
            .command()
            .output()
            .map_err(|source| Error::NotStarted {
                command: self.to_string(),
                source,
            })?;
        let captured = Captured {
            success: out.status.success(),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        print!("{}", captured.stdout);
        eprint!("{}", captured.stderr);
        Ok(captured)
    }

    /// Runs with stdout and stderr discarded and reports only whether it succeeded:
    /// for probes (`python3 -c 'import venv'`) and best-effort extras.
    pub fn succeeds_quietly(self) -> bool {
        self.command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Runs with stderr discarded (stdout still shown) and ignores any failure,
    /// like `command 2>/dev/null || true`.
    pub fn run_best_effort(self) {
        eprintln!("+ {self} 2>/dev/null || true");
        let _ = self.command().stderr(Stdio::null()).status();
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        cargo_env::restore(&mut c);
        c.args(&self.args);
        for (k, v) in &self.env {
            c.env(k, v);
        }
        if let Some(dir) = &self.dir {
            c.current_dir(dir);
        }
        c
    }

    fn check(self, status: io::Result<ExitStatus>) -> Result<(), Error> {
        match status {
            Ok(s) if s.success() => Ok(()),
            Ok(status) => Err(Error::Failed {
                command: self.to_string(),
                status,
            }),
            Err(source) => Err(Error::NotStarted {
                command: self.to_string(),
                source,
            }),
        }
    }
}

/// Shell-like: `(cd firmware && KEY=value program arg 'arg with space')`.
impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut line = String::new();
        for (k, v) in &self.env {
            line.push_str(&format!("{k}={} ", quote(&v.to_string_lossy())));
        }
        line.push_str(&quote(&self.program));
        for a in &self.args {
            line.push(' ');
            line.push_str(&quote(&a.to_string_lossy()));
        }
        match &self.dir {
            Some(dir) => write!(f, "(cd {} && {line})", quote(&dir.to_string_lossy())),
            None => f.write_str(&line),
        }
    }
}

/// Single-quotes a word only when a shell would split or expand it, so the
/// printed line can be pasted back into a shell.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_reads_as_a_shell_line() {
        let c = cmd("cargo", ["+nightly", "miri", "test"])
            .env("MIRIFLAGS", "-Zmiri-disable-isolation")
            .env("NOTE", "two words")
            .dir("firmware");
        assert_eq!(
            c.to_string(),
            "(cd firmware && MIRIFLAGS=-Zmiri-disable-isolation NOTE='two words' cargo +nightly miri test)"
        );
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote(""), "''");
    }

    #[test]
    fn a_failing_command_is_named_with_its_exit_code() {
        let err = cmd("sh", ["-c", "exit 3"]).run().unwrap_err();
        assert_eq!(err.exit_code(), 3);
        assert_eq!(err.to_string(), "`sh -c 'exit 3'` failed (exit status: 3)");
    }

    #[test]
    fn a_missing_program_is_not_started() {
        let err = cmd("microarena-no-such-program", ["x"]).run().unwrap_err();
        assert!(matches!(err, Error::NotStarted { .. }), "{err:?}");
        assert_eq!(err.exit_code(), 1);
        assert!(!cmd("microarena-no-such-program", ["x"]).succeeds_quietly());
    }

    #[test]
    fn env_and_dir_reach_the_child() {
        assert!(
            cmd(
                "sh",
                ["-c", r#"[ "$K" = v ] && [ "$(basename "$PWD")" = src ]"#]
            )
            .env("K", "v")
            .dir("src")
            .succeeds_quietly()
        );
    }
}
