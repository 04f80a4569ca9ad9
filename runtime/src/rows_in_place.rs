//! Windowed ops in place (`op::IN_PLACE` = 1 on CONV_2D, DEPTHWISE_CONV_2D or
//! a pool): the output is written over its input, which dies at the op.
//!
//! TinyEngine runs depthwise convolutions in place with a one-channel
//! buffer; this does it by rows, which serves every windowed kernel and keeps
//! the kernel's channel loops as they are. Output rows are computed one at a
//! time into a small ring (the op's planned scratch) and each is written over
//! the input's buffer as soon as no later row's window reads the bytes it
//! takes ([`RowWindow::written_before`]): output row `c` takes bytes
//! `[c·out_row, (c+1)·out_row)`, and windows only move down. The ring holds
//! [`RowWindow::in_place_ring_rows`] rows, the figure core planned.
//!
//! Each row is the unchanged kernel on a one-row band
//! ([`banded::eval_one_row`]), so every output value sums the same taps in
//! the same order as the whole op: bit-exact by construction.

use microarena_image as rl;

use crate::banded::{self, RowCall};
use crate::error::Error;
use crate::image::{Image, TensorInfo};
use crate::kernels::{self, Prep, Resolver};

/// Checks a windowed op marked in place over input 0 at construction: it
/// runs whole with one output; input 0 and the output are batch-1 NHWC
/// arena tensors starting at one location, the output no larger than the
/// input and both whole rows; its other inputs are constants; and its
/// scratch (the ring) holds the rows the schedule keeps and lies apart from
/// the input's buffer.
pub(crate) fn check(p: &Prep<'_, '_>, out: &TensorInfo) -> Result<(), Error> {
    let op = p.op;
    p.check(
        op.exec == rl::EXEC_WHOLE && op.n_outputs == 1,
        "an in-place op runs whole, with one output",
    )?;
    let input = p.input(0)?;
    let arena = |t: &TensorInfo| t.storage == rl::STORAGE_ARENA;
    p.check(
        arena(&input) && arena(out) && input.location == out.location && out.bytes <= input.bytes,
        "an in-place windowed op's output does not start at its input and fit in it",
    )?;
    for t in [&input, out] {
        p.check(
            t.rank == 4 && t.dim(0) == 1,
            "an in-place windowed op's tensors must be 4-D with batch 1",
        )?;
    }
    for k in 1..op.n_inputs.min(rl::MAX_OP_INPUTS) {
        if let Some(t) = p.opt_input(k)? {
            p.check(
                matches!(t.storage, rl::STORAGE_CONST | rl::STORAGE_NONE),
                "an in-place windowed op reads only constants besides input 0",
            )?;
        }
    }
    let rows = banded::rows_of(p.img, op)?;
    p.check(
        rows.in_row.checked_mul(rows.in_h) == Some(input.bytes)
            && rows.out_row.checked_mul(rows.out_h) == Some(out.bytes),
        "an in-place windowed op's tensors are not whole rows",
    )?;
    let (ring_at, ring_bytes) = op.scratch;
    let need = rows.in_place_ring_bytes();
    p.check(
        need.is_some_and(|n| n <= ring_bytes),
        "an in-place windowed op's ring is smaller than the rows it holds",
    )?;
    let apart = ring_at.saturating_add(ring_bytes) <= input.location
        || input.location.saturating_add(input.bytes) <= ring_at;
    p.check(apart, "an in-place windowed op's ring overlaps its input")
}

/// Runs windowed op `index` (checked by [`check`]) in place over the head.
/// Never inlined: Invoke's frame stays what plain ops need.
#[inline(never)]
pub(crate) fn run(
    kernels: &Resolver,
    img: &Image<'_>,
    head: &mut [u8],
    vars: &mut [u8],
    index: usize,
    opdata: &[u8],
) -> Result<(), Error> {
    let bad = Error::Malformed {
        what: "an in-place windowed op's buffers overlap or leave the head",
        index: index as u32,
    };
    let op = img.op(index)?;
    let rows = banded::rows_of(img, &op)?;
    let input = img.tensor(usize::from(op.inputs[0]))?;
    let (buf, _, ring, _) =
        kernels::carve(head, &[(input.location, input.bytes)], op.scratch).ok_or(bad)?;
    let (in_row, out_row) = (rows.in_row, rows.out_row);
    let held = rows.in_place_ring_rows().max(1);
    let slot = |r: usize| (r % held) * out_row;
    if ring.len() < held * out_row {
        return Err(bad);
    }
    // Output row `c` from its ring slot over its bytes of the buffer.
    let write = |buf: &mut [u8], ring: &[u8], c: usize| -> Result<(), Error> {
        let src = ring.get(slot(c)..slot(c) + out_row).ok_or(bad)?;
        let dst = buf.get_mut(c * out_row..(c + 1) * out_row).ok_or(bad)?;
        dst.copy_from_slice(src);
        Ok(())
    };
    let mut written = 0;
    for r in 0..rows.out_h {
        while written < rows.written_before(r) {
            write(buf, ring, written)?;
            written += 1;
        }
        let (lo, hi) = rows.window(r);
        let data = buf.get(lo * in_row..hi * in_row).ok_or(bad)?;
        let dst = ring.get_mut(slot(r)..slot(r) + out_row).ok_or(bad)?;
        let call = RowCall {
            index,
            rows,
            row: r,
            read: (lo, hi),
        };
        banded::eval_one_row(kernels, img, op, call, (data, dst), opdata, vars)?;
    }
    while written < rows.out_h {
        write(buf, ring, written)?;
        written += 1;
    }
    Ok(())
}
