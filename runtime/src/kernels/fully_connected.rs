//! FULLY_CONNECTED (int8, per-tensor or per-channel, and float32), as TFLM's
//! reference `FullyConnected`.

use microarena_image::dtype;

use super::bytes::{f32_at, i8_at};
use super::context::{Ctx, OpDataWriter, Prep};
use super::epilogue::{Epilogue, check_operands, dot_i8, push_opdata};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    channels: filter_channels,
    ..kernel(opcode::FULLY_CONNECTED, prepare, eval)
}];

/// The OpData's channel count: one (multiplier, shift) per filter scale.
pub(crate) fn filter_channels(p: &Prep<'_, '_>, _out: &TensorInfo) -> Result<u32, Error> {
    Ok(p.input(1)?.n_scales.max(1) as u32)
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (input, filter) = check_operands(p, out)?;
    let depth = out.last_dim();
    let accum = filter.last_dim();
    p.need(filter.rank == 2 && filter.dim(0) == depth, "filter shape")?;
    let batches = out.elements() / depth.max(1);
    p.need(
        input.elements() >= batches.saturating_mul(accum),
        "input shape",
    )?;
    let channels = filter.n_scales.max(1) as u32;
    push_opdata(
        p,
        out,
        (&input, &filter),
        channels,
        filter.n_scales <= 1,
        words,
    )
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let depth = out.last_dim();
    let accum = filter.last_dim();
    let batches = out.elements() / depth.max(1);
    let float = out.dtype == dtype::F32;
    let in_off = input.zero_point.wrapping_neg();
    let w_off = filter.zero_point.wrapping_neg();
    let per_channel = filter.n_scales > 1;
    for b in 0..batches {
        for o in 0..depth {
            let oi = o + depth * b;
            if float {
                let mut total = 0.0f32;
                for d in 0..accum {
                    total += f32_at(x, b * accum + d) * f32_at(w, o * accum + d);
                }
                end.put_f32(c.out, oi, o, total);
                continue;
            }
            let acc = if w_off == 0 {
                dot_i8(x, b * accum, w, o * accum, accum, in_off)
            } else {
                let mut acc = 0i32;
                for d in 0..accum {
                    let wv = i8_at(w, o * accum + d).wrapping_add(w_off);
                    let xv = i8_at(x, b * accum + d).wrapping_add(in_off);
                    acc = acc.wrapping_add(wv.wrapping_mul(xv));
                }
                acc
            };
            end.put_i8(c.out, oi, o, if per_channel { o } else { 0 }, acc);
        }
    }
    Ok(())
}
