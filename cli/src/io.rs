//! Files: reading models with a size cap, and atomic writes (temporary file in
//! the same directory, then rename) so no partial output is ever left behind;
//! and the terminal: stdout that a reader may close early (`| head`), stderr
//! that may be gone.

use std::io::{Read, Write};
use std::path::Path;

use microarena_core::read::model::Limits;

use crate::Failure;

/// Reads a model file, refusing anything above the core's file-size limit
/// before reading it whole.
pub fn read_model(path: &Path) -> Result<Vec<u8>, Failure> {
    let fail = |what: String| Failure::usage(format!("{}: {what}", path.display()));
    let file = std::fs::File::open(path).map_err(|e| fail(format!("cannot open: {e}")))?;
    let limit = Limits::DEFAULT.max_file_bytes as u64;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(fail(format!(
            "larger than {limit} bytes; refusing to read it"
        )));
    }
    Ok(bytes)
}

/// The name shown in reports: the file name without directories.
pub fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Writes `bytes` to `path` through a temporary file in the same directory and
/// a rename, so readers see the old file or the complete new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let fail = |what: String| Failure::usage(format!("{}: {what}", path.display()));
    // A device, pipe or socket (`-o /dev/stdout`, a FIFO) is written in place: renaming a
    // temporary file over it would replace the node itself, not feed it.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| fail(format!("cannot open: {e}")))?;
        return f
            .write_all(bytes)
            .and_then(|()| f.flush())
            .map_err(|e| fail(format!("cannot write: {e}")));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| fail(format!("cannot create a temporary file: {e}")))?;
    tmp.write_all(bytes)
        .map_err(|e| fail(format!("cannot write: {e}")))?;
    tmp.as_file()
        .sync_all()
        .map_err(|e| fail(format!("cannot sync: {e}")))?;
    tmp.persist(path)
        .map_err(|e| fail(format!("cannot rename into place: {}", e.error)))?;
    Ok(())
}

/// `true` when `b` names the same existing file as `a` (same path after
/// resolving links, or the same inode on Unix).
pub fn same_file(a: &Path, b: &Path) -> bool {
    let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if (ma.dev(), ma.ino()) == (mb.dev(), mb.ino()) {
            return true;
        }
    }
    let _ = (ma, mb);
    matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
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
