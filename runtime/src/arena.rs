//! The arena allocator: a planned head at the start, a persistent tail growing
//! down from the end, and a phase that forbids allocation once Invoke starts.
//!
//! It hands out *offsets*, never references, so it needs no `unsafe` and the
//! interpreter can re-borrow the arena freely.

use crate::error::Error;

/// Interpreter phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Kernels may allocate persistent data and request scratch.
    Prepare,
    /// Any allocation fails with [`Error::AllocationDuringInvoke`].
    Invoke,
}

/// Arena figures, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryUsage {
    /// Head (planned activations + scratch) plus the tail allocated so far.
    pub used: usize,
    /// Length of the arena the caller gave.
    pub available: usize,
    /// Largest `used` ever seen.
    pub high_water: usize,
    /// The head part of `used`.
    pub head: usize,
    /// The tail part of `used`.
    pub tail: usize,
}

/// Offsets-only allocator over an arena of `len` bytes.
#[derive(Debug, Clone)]
pub struct ArenaAllocator {
    len: usize,
    end: usize,
    head: usize,
    tail: usize,
    high_water: usize,
    phase: Phase,
}

impl ArenaAllocator {
    /// An allocator over `len` bytes whose first `head` bytes are the planned head.
    /// The tail starts at `len` rounded down to 4, so a tail made of 4-byte
    /// multiples never pads (the runtime's figures do not depend on `len`).
    pub fn new(len: usize, head: usize) -> Result<Self, Error> {
        let end = len & !3;
        if head > end {
            return Err(Error::ArenaTooSmall {
                needed: head,
                available: len,
            });
        }
        Ok(ArenaAllocator {
            len,
            end,
            head,
            tail: end,
            high_water: head,
            phase: Phase::Prepare,
        })
    }

    /// Current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Lowest tail offset (start of the persistent region).
    pub fn tail_start(&self) -> usize {
        self.tail
    }

    /// End of the tail region (arena length rounded down to 4).
    pub fn tail_end(&self) -> usize {
        self.end
    }

    /// Allocates `bytes` persistent bytes aligned to `align` (relative to the
    /// arena start) and returns the offset. Fails during Invoke, and when the
    /// tail would run into the head.
    pub fn allocate_persistent(&mut self, bytes: usize, align: usize) -> Result<usize, Error> {
        if self.phase == Phase::Invoke {
            return Err(Error::AllocationDuringInvoke);
        }
        if !align.is_power_of_two() || align > 16 {
            return Err(Error::BadAlignment { align });
        }
        let start = self
            .tail
            .checked_sub(bytes)
            .map(|s| s & !(align - 1))
            .filter(|&s| s >= self.head)
            .ok_or(Error::ArenaTooSmall {
                needed: self
                    .head
                    .saturating_add(self.end - self.tail)
                    .saturating_add(bytes),
                available: self.len,
            })?;
        self.tail = start;
        self.high_water = self.high_water.max(self.head + (self.end - self.tail));
        Ok(start)
    }

    /// Claims a scratch buffer the image planned at `planned = (offset, bytes)`.
    /// The request must fit the plan; returns the head offset.
    pub fn request_scratch(
        &mut self,
        op_index: u16,
        bytes: usize,
        planned: (usize, usize),
    ) -> Result<usize, Error> {
        if self.phase == Phase::Invoke {
            return Err(Error::AllocationDuringInvoke);
        }
        let (off, size) = planned;
        if bytes > size || off.checked_add(size).is_none_or(|e| e > self.head) {
            return Err(Error::ScratchNotPlanned { op_index, bytes });
        }
        Ok(off)
    }

    /// Ends Prepare: every later allocation fails.
    pub fn finish_prepare(&mut self) {
        self.phase = Phase::Invoke;
    }

    /// Current figures.
    pub fn usage(&self) -> MemoryUsage {
        let tail = self.end - self.tail;
        MemoryUsage {
            used: self.head + tail,
            available: self.len,
            high_water: self.high_water,
            head: self.head,
            tail,
        }
    }
}
