//! Files (through `microarena-shell`, shared with the Python package), and
//! the terminal: stdout that a reader may close early (`| head`), stderr
//! that may be gone.

use std::io::Write;
use std::path::Path;

use crate::Failure;

pub use microarena_shell::{display_name, same_file};

/// Reads a model file with core's size cap ([`microarena_shell::read_model`]).
pub fn read_model(path: &Path) -> Result<Vec<u8>, Failure> {
    microarena_shell::read_model(path).map_err(|e| Failure::usage(e.to_string()))
}

/// Writes `bytes` to `path` whole or not at all ([`microarena_shell::write_atomic`]).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    microarena_shell::write_atomic(path, bytes).map_err(|e| Failure::usage(e.to_string()))
}

/// Writes `text` to stdout. A reader that stopped early (`microarena plan M |
/// head`) closes the pipe: that ends the command quietly with status 0, as
/// `head` expects, instead of the panic `print!` would give.
pub fn out(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::reader_gone()),
        Err(e) => Err(Failure::usage(format!("cannot write the output: {e}"))),
    }
}

/// Writes one line to stderr; if stderr itself is gone there is no one to
/// tell, so the error is dropped rather than turned into a panic.
pub fn err_line(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{text}");
}
