//! File handling the shells share (the CLI and the Python package): reading
//! a model with core's size cap, writes that never leave a half-written file,
//! and the check that an output would overwrite its own input. Core does no I/O; this crate is the one place
//! the shells' file semantics are decided.

use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use microarena_core::read::model::Limits;

/// Why a model file could not be read.
#[derive(Debug)]
pub enum ReadError {
    Open(PathBuf, std::io::Error),
    Read(PathBuf, std::io::Error),
    /// Larger than the limit given (for models, core's
    /// `Limits::DEFAULT.max_file_bytes`).
    TooLarge(PathBuf, u64),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Open(p, e) => write!(f, "{}: cannot open: {e}", p.display()),
            ReadError::Read(p, e) => write!(f, "{}: cannot read: {e}", p.display()),
            ReadError::TooLarge(p, limit) => write!(
                f,
                "{}: larger than {limit} bytes; refusing to read it",
                p.display()
            ),
        }
    }
}

impl std::error::Error for ReadError {}

/// Reads a model file, refusing anything above core's file-size limit
/// before reading it whole (a FIFO or `/dev/zero` never exhausts memory).
pub fn read_model(path: &Path) -> Result<Vec<u8>, ReadError> {
    read_capped(path, Limits::DEFAULT.max_file_bytes as u64)
}

/// Largest firmware file (`check --measured` report, `--elf` image) read:
/// a firmware ELF with debug information is a few MiB.
pub const MAX_FIRMWARE_FILE_BYTES: u64 = 256 << 20;

/// Reads `path` whole unless it holds more than `limit` bytes, which is
/// refused after reading at most `limit + 1` of them.
pub fn read_capped(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path).map_err(|e| ReadError::Open(path.into(), e))?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ReadError::Read(path.into(), e))?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(path.into(), limit));
    }
    Ok(bytes)
}

/// The name reports show for a model file: its file name, no directories.
pub fn display_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Which step of [`write_atomic`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStep {
    /// Opening a device or pipe for writing in place.
    Open,
    /// Creating the temporary file beside the target.
    CreateTemporary,
    /// Writing the bytes.
    Write,
    /// Flushing them to the disk.
    Sync,
    /// Renaming the temporary file over the target.
    Rename,
}

/// A failed [`write_atomic`]: the path, the step and the system's reason.
#[derive(Debug)]
pub struct WriteError {
    pub path: PathBuf,
    pub step: WriteStep,
    pub source: std::io::Error,
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.step {
            WriteStep::Open => "cannot open",
            WriteStep::CreateTemporary => "cannot create a temporary file",
            WriteStep::Write => "cannot write",
            WriteStep::Sync => "cannot sync",
            WriteStep::Rename => "cannot rename into place",
        };
        write!(f, "{}: {what}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for WriteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory,
/// synced and then renamed over `path`: a reader sees the old file or the
/// whole new one, and a failure leaves no partial file behind.
///
/// A device, pipe or socket (`-o /dev/stdout`, a FIFO) is written in place:
/// renaming a file over it would replace the node itself, not feed it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    let err = |step| {
        move |source| WriteError {
            path: path.to_path_buf(),
            step,
            source,
        }
    };
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(err(WriteStep::Open))?;
        return f
            .write_all(bytes)
            .and_then(|()| f.flush())
            .map_err(err(WriteStep::Write));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(err(WriteStep::CreateTemporary))?;
    tmp.write_all(bytes).map_err(err(WriteStep::Write))?;
    tmp.as_file().sync_all().map_err(err(WriteStep::Sync))?;
    tmp.persist(path)
        .map_err(|e| err(WriteStep::Rename)(e.error))?;
    Ok(())
}

/// `true` when `b` names the same existing file as `a` (the same inode on
/// Unix, or the same path after resolving links).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_model_refuses_what_is_over_the_cap_before_reading_it_whole() {
        let limit = Limits::DEFAULT.max_file_bytes as u64;
        let e = read_model(Path::new("/dev/zero")).unwrap_err();
        assert!(matches!(e, ReadError::TooLarge(_, l) if l == limit), "{e}");
        assert_eq!(
            e.to_string(),
            format!("/dev/zero: larger than {limit} bytes; refusing to read it")
        );
        let e = read_model(Path::new("/no/such/model.tflite")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/no/such/model.tflite: cannot open: "),
            "{e}"
        );
        assert_eq!(display_name(Path::new("a/b/m.tflite")), "m.tflite");
        let e = read_capped(Path::new("/dev/zero"), 1000).unwrap_err();
        assert_eq!(
            e.to_string(),
            "/dev/zero: larger than 1000 bytes; refusing to read it"
        );
    }

    #[test]
    fn replaces_a_file_whole_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.tflite");
        std::fs::write(&p, b"old contents, longer").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "a temporary file was left behind");
    }

    #[test]
    fn a_missing_directory_names_the_path_and_the_step() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/m.tflite");
        let e = write_atomic(&p, b"x").unwrap_err();
        assert_eq!(e.step, WriteStep::CreateTemporary);
        let text = e.to_string();
        assert!(
            text.starts_with(&format!(
                "{}: cannot create a temporary file: ",
                p.display()
            )),
            "{text}"
        );
        assert!(!p.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_device_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let p = Path::new("/dev/null");
        write_atomic(p, b"bytes").unwrap();
        assert!(std::fs::metadata(p).unwrap().file_type().is_char_device());
    }

    #[test]
    fn same_file_sees_through_links_and_dots() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, b"1").unwrap();
        let dotted = dir.path().join(".").join("a");
        assert!(same_file(&a, &dotted));
        let b = dir.path().join("b");
        std::fs::write(&b, b"1").unwrap();
        assert!(!same_file(&a, &b));
        assert!(!same_file(&a, &dir.path().join("missing")));
        #[cfg(unix)]
        {
            let l = dir.path().join("l");
            std::os::unix::fs::symlink(&a, &l).unwrap();
            assert!(same_file(&a, &l));
        }
    }
}
