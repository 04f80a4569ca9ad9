//! Lines of text over semihosting without `core::fmt`: a fixed buffer,
//! strings and integers appended by hand, one semihosting write per line.
//! What the bench binary prints with, so that `core::fmt` is not linked into
//! it (about as much code as a small kernel).

use microarena_runtime::Error;

/// One line being assembled; longer text is cut at the buffer's end.
pub struct Line {
    buf: [u8; 160],
    len: usize,
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

    /// Appends `b` (dropped when the line is full). Never inlined: one copy
    /// of the loop serves every call.
    #[inline(never)]
    fn push(&mut self, b: &[u8]) {
        for &c in b {
            if let Some(slot) = self.buf.get_mut(self.len) {
                *slot = c;
                self.len += 1;
            }
        }
    }

    /// Appends `s`.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.push(s.as_bytes());
        self
    }

    /// Appends `n` in decimal.
    pub fn dec(&mut self, mut n: u64) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        loop {
            at -= 1;
            if let Some(d) = digits.get_mut(at) {
                *d = b'0' + (n % 10) as u8;
            }
            n /= 10;
            if n == 0 || at == 0 {
                break;
            }
        }
        self.push(digits.get(at..).unwrap_or(&[]));
        self
    }

    /// Appends what a runtime error is: its kind and, for an op's error, the
    /// op's index and builtin code (the host's `Display` names it in words).
    pub fn error(&mut self, e: &Error) -> &mut Self {
        self.str("error: ").str(e.kind());
        if let Some((index, opcode)) = e.op() {
            self.str(" op ")
                .dec(u64::from(index))
                .str(" opcode ")
                .dec(u64::from(opcode));
        }
        self
    }

    /// Writes the line and a newline to the host's stdout, and empties it.
    pub fn print(&mut self) {
        self.push(b"\n");
        if let Ok(mut out) = cortex_m_semihosting::hio::hstdout() {
            let _ = out.write_all(self.buf.get(..self.len).unwrap_or(&[]));
        }
        self.len = 0;
    }
}
