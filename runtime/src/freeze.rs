//! Filling an image's OpData block on the host, so the device keeps its
//! OpData in flash instead of the arena's tail.
//!
//! Core's `lower` (with OpData in flash) reserves the block at the end of
//! the image; [`freeze_opdata`] runs every op's Prepare — the same code the
//! device runs — and writes what it computes there. On the device, Prepare
//! recomputes each word and compares it with the block
//! ([`crate::Error::OpDataMismatch`] when they differ), so the block costs no
//! RAM and can never hold a multiplier Prepare would not have made.

use microarena_image::header;

use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::{Image, u32_at};
use crate::kernels;

/// Fills the OpData block of `image` in place (a no-op for an image whose
/// OpData lives in the tail). Needs no arena: Prepare's scratch and tail
/// bookkeeping are offsets only.
pub fn freeze_opdata(image: &mut [u8]) -> Result<(), Error> {
    let field = |at| u32_at(image, at).ok_or(Error::Truncated { what: "header" });
    let (off, len) = (
        field(header::OPDATA_OFF)? as usize,
        field(header::OPDATA_LEN)? as usize,
    );
    if len == 0 {
        return Ok(());
    }
    if off.checked_add(len) != Some(image.len()) {
        return Err(Error::Truncated {
            what: "OpData block",
        });
    }
    let (front, block) = image.split_at_mut(off);
    let img = Image::parse_front(front)?;
    // The tail is never touched: an allocator over head + variables only
    // tracks offsets for the scratch claims.
    let mut alloc = ArenaAllocator::new(img.head_bytes() + img.tail_bytes(), img.head_bytes())?;
    let at = kernels::prepare_all(
        &kernels::Resolver::ALL,
        &img,
        &mut alloc,
        &mut [],
        Some(block),
    )?;
    if at != len {
        return Err(Error::Malformed {
            what: "OpData block longer than the ops' OpData",
            index: 0,
        });
    }
    Ok(())
}
