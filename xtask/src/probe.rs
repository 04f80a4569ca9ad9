//! What this machine offers, for the steps that are skipped without it
//! (the same rules and "skipped: …" messages as `scripts/test.sh` had).

use std::env;
use std::path::{Path, PathBuf};

use crate::cmd::{Error, cmd};

/// The shared corpus from `MICROARENA_CORPUS` (unset or empty: none), relative
/// to the repository root as in `scripts/test.sh`.
pub fn corpus() -> Option<PathBuf> {
    env::var_os("MICROARENA_CORPUS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The corpus as an absolute path, for commands run in another directory.
pub fn corpus_absolute(corpus: &Path) -> Result<PathBuf, Error> {
    corpus.canonicalize().map_err(|source| Error::Corpus {
        path: corpus.to_path_buf(),
        source,
    })
}

/// `command -v NAME`: an executable file of that name on `PATH`.
pub fn on_path(name: &str) -> bool {
    let Some(path) = env::var_os("PATH") else {
        return false;
    };
    env::split_paths(&path).any(|dir| is_executable(&dir.join(name)))
}

#[cfg(unix)]
fn is_executable(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    file.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(file: &Path) -> bool {
    file.is_file()
}

/// python3 that can make the virtual environments the TFLM scripts install into.
pub fn python_with_venv() -> bool {
    cmd("python3", ["-c", "import ensurepip, venv"]).succeeds_quietly()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_path_finds_executables_only() {
        assert!(on_path("sh"));
        assert!(!on_path("microarena-no-such-program"));
    }
}
