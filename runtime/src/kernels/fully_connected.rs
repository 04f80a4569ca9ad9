//! FULLY_CONNECTED (int8 and int16 16x8, per-tensor or per-channel, and
//! float32), as TFLM's reference `FullyConnected` and `FullyConnectedPerChannel`.

use microarena_image::dtype;

use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i32};
use super::context::{Ctx, EMPTY, OpDataWriter, Prep};
use super::epilogue::{
    Epilogue, Epilogue16, check_operands, check_operands_16x8, dot_i8, dot2_i8, push_opdata,
};
use super::{Kernel, kernel, variant};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};
use microarena_image as rl;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    channels: filter_channels,
    // The 16x8 and float32 branches are their own, linked only where a
    // model has them.
    variants: [
        variant(dtype::I16, "int16", eval_16x8),
        variant(dtype::F32, "float32", eval_f32),
    ],
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
    let (input, filter) = if out.dtype == dtype::I16 {
        // FullyConnectedEval's 16x8 branch takes an int32 bias as int32 and
        // reads any other as int64: int32 or int64 (or none).
        check_operands_16x8(p, out, &[dtype::I32, dtype::I64], false)?
    } else {
        check_operands(p, out)?
    };
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

/// Eval of the int8 layer (float32: [`eval_f32`], int16: [`eval_16x8`]).
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let depth = out.last_dim();
    let accum = filter.last_dim();
    let batches = out.elements() / depth.max(1);
    let in_off = input.zero_point.wrapping_neg();
    let w_off = filter.zero_point.wrapping_neg();
    let per_channel = filter.n_scales > 1;
    let k = |o: usize| if per_channel { o } else { 0 };
    for b in 0..batches {
        let mut o = 0;
        // Armv6-M, symmetric weights: two output rows per pass over the
        // input, each input value loaded once for both (its Thumb-1 loop).
        // On DSP cores the pair's set-up costs more than it saves here.
        while cfg!(microarena_v6m) && w_off == 0 && o + 1 < depth {
            let rows = (o * accum, (o + 1) * accum);
            let (a0, a1) = dot2_i8(x, b * accum, w, rows, accum, in_off);
            end.put_i8(c.out, o + depth * b, o, k(o), a0);
            end.put_i8(c.out, o + 1 + depth * b, o + 1, k(o + 1), a1);
            o += 2;
        }
        for o in o..depth {
            let oi = o + depth * b;
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
            end.put_i8(c.out, oi, o, k(o), acc);
        }
    }
    Ok(())
}

/// Row `r` of `in_h` of the input of a banded stage's FULLY_CONNECTED
/// reducer (`microarena_image::stage::reduces`: one batch, the filter
/// reading the whole map as one vector): `band` and `x` the row, elements
/// `r·len .. (r + 1)·len` of every dot product, added to `acc` (one `i32`
/// or `f32` per output, zeroed at row 0) in TFLM's order; after the last
/// row the epilogue writes `out`, as [`eval`] and [`eval_f32`] do.
pub(crate) fn reduce_row(
    img: &Image<'_>,
    op: &OpInfo,
    (band, x): (&TensorInfo, &[u8]),
    (r, in_h): (usize, usize),
    out_info: &TensorInfo,
    (acc, out): (&mut [u8], &mut [u8]),
    opdata: &[u8],
) -> Result<(), Error> {
    let operand = |s: usize| -> Result<(TensorInfo, &[u8]), Error> {
        match op.inputs.get(s).copied().filter(|_| s < op.n_inputs) {
            None | Some(rl::NO_TENSOR) => Ok((EMPTY, &[])),
            Some(t) => {
                let info = img.tensor(usize::from(t))?;
                let data = img.const_data(&info).unwrap_or(&[]);
                Ok((info, data))
            }
        }
    };
    let (filter, w) = operand(1)?;
    let bias = operand(2)?;
    let end = Epilogue::of(opdata, out_info.zero_point, bias);
    let depth = out_info.elements();
    let accum = filter.last_dim();
    let len = band.elements();
    if r == 0 {
        acc.fill(0);
    }
    let last = r + 1 == in_h;
    if band.dtype == dtype::F32 {
        for o in 0..depth {
            let at = o * accum + r * len;
            let mut total = f32_at(acc, o);
            for d in 0..len {
                total += f32_at(x, d) * f32_at(w, at + d);
            }
            if last {
                end.put_f32(out, o, o, total);
            } else {
                put_f32(acc, o, total);
            }
        }
        return Ok(());
    }
    let in_off = band.zero_point.wrapping_neg();
    let w_off = filter.zero_point.wrapping_neg();
    let per_channel = filter.n_scales > 1;
    for o in 0..depth {
        let at = o * accum + r * len;
        let sum = if w_off == 0 {
            dot_i8(x, 0, w, at, len, in_off)
        } else {
            (0..len).fold(0i32, |a, d| {
                let wv = i8_at(w, at + d).wrapping_add(w_off);
                a.wrapping_add(wv.wrapping_mul(i8_at(x, d).wrapping_add(in_off)))
            })
        };
        let total = i32_at(acc, o).wrapping_add(sum);
        if last {
            end.put_i8(out, o, o, if per_channel { o } else { 0 }, total);
        } else {
            put_i32(acc, o, total);
        }
    }
    Ok(())
}

/// The float32 FULLY_CONNECTED (TFLM's reference `FullyConnected`): each
/// output the dot product in input order, then bias and activation.
fn eval_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let depth = out.last_dim();
    let accum = filter.last_dim();
    let batches = out.elements() / depth.max(1);
    for b in 0..batches {
        for o in 0..depth {
            let mut total = 0.0f32;
            for d in 0..accum {
                total += f32_at(x, b * accum + d) * f32_at(w, o * accum + d);
            }
            end.put_f32(c.out, o + depth * b, o, total);
        }
    }
    Ok(())
}

/// The 16x8 FULLY_CONNECTED (int16 input and output, int8 filter), TFLM's
/// `FullyConnected` / `FullyConnectedPerChannel` on int16: unlike the
/// convolutions these add the input offset, the output zero point and, per
/// tensor only, the filter offset; the accumulator is the bias's width
/// ([`Epilogue16`]).
fn eval_16x8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue16::new(c, c.input(2), true);
    let out = c.output_info();
    let depth = out.last_dim();
    let accum = filter.last_dim();
    let batches = out.elements() / depth.max(1);
    let in_off = input.zero_point.wrapping_neg();
    let per_channel = filter.n_scales > 1;
    let w_off = if per_channel {
        0
    } else {
        filter.zero_point.wrapping_neg()
    };
    for b in 0..batches {
        for o in 0..depth {
            let mut acc = 0i64;
            for d in 0..accum {
                let wv = i8_at(w, o * accum + d).wrapping_add(w_off);
                let xv = i16_at(x, b * accum + d).wrapping_add(in_off);
                acc = acc.wrapping_add(i64::from(wv.wrapping_mul(xv)));
            }
            end.put(
                c.out,
                o + depth * b,
                o,
                if per_channel { o } else { 0 },
                acc,
            );
        }
    }
    Ok(())
}
