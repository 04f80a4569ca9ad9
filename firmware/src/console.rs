//! Lines of text over semihosting without `core::fmt`: a fixed buffer,
//! strings and integers appended by hand ([`report_line::decimal`]), one
//! semihosting write per line. What the bench binary prints with, so that
//! `core::fmt` is not linked into it (about as much code as a small kernel).

use crate::report_line::{self, Sink};
use microarena_runtime::Error;

/// One line being assembled; longer text is cut at the buffer's end.
pub struct Line {
    buf: [u8; 160],
    len: usize,
}

impl Sink for Line {
    fn put(&mut self, s: &str) {
        let end = (self.len + s.len()).min(self.buf.len());
        let n = end - self.len;
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..end), s.as_bytes().get(..n)) {
            dst.copy_from_slice(src);
        }
        self.len = end;
    }
}

impl Default for Line {
    fn default() -> Self {
        Self::new()
    }
}

impl Line {
    /// An empty line.
    pub const fn new() -> Self {
        Line {
            buf: [0; 160],
            len: 0,
        }
    }

    /// Appends `s`.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.put(s);
        self
    }

    /// Appends `n` in decimal.
    pub fn dec(&mut self, n: i64) -> &mut Self {
        report_line::decimal(self, n);
        self
    }

    /// Appends what a runtime error is: its kind and, for an op's error, the
    /// op's index and builtin code (the host's `Display` names it in words).
    pub fn error(&mut self, e: &Error) -> &mut Self {
        self.str("error: ").str(e.kind());
        if let Some((index, opcode)) = e.op() {
            self.str(" op ")
                .dec(i64::from(index))
                .str(" opcode ")
                .dec(i64::from(opcode));
        }
        self
    }

    /// Writes the line and a newline to the host's stdout, and empties it.
    pub fn print(&mut self) {
        self.put("\n");
        if let Ok(mut out) = cortex_m_semihosting::hio::hstdout() {
            let _ = out.write_all(self.buf.get(..self.len).unwrap_or(&[]));
        }
        self.len = 0;
    }
}
