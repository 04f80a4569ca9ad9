//! MEAN, SUM, REDUCE_MAX and REDUCE_MIN over any axes, either keep_dims, as
//! TFLM's reduce kernels (`tensorflow/lite/micro/kernels/reduce_common.cc`
//! and `kernels/internal/reference/reduce.h`, tflite-micro 90b983c2):
//!
//! * float32: every input element, in row-major order, is folded into its
//!   output element (MEAN and SUM accumulate in the planned scratch and
//!   MEAN divides by the reduced count as a float at the end; MAX and MIN
//!   start from the type's lowest/highest value);
//! * int8 / int16 MEAN and SUM: the raw values are summed in int32 (wrapping),
//!   the input zero point times the count is subtracted, and the sum is
//!   rescaled by `input_scale / output_scale`; MEAN folds the division by
//!   the count into that multiplier (`(m << k) / n` with `k = ⌊log₂ n⌋`,
//!   capped at 32 and at `31 + shift`), as TFLM does since it stopped using
//!   `integer_ops::Mean`;
//! * ARG_MAX / ARG_MIN (`micro/kernels/arg_min_max.cc`): float32 or int8
//!   input, int32 output, the first index where a strictly greater (smaller)
//!   value appears along the axis;
//! * int8 MAX and MIN: TFLM requires the output's scale and zero point to
//!   equal the input's and compares raw values;
//! * CUMSUM (`micro/kernels/cumsum.cc`): float32 and int8, see [`cumsum`];
//! * REDUCE_ALL: bool in and out, every output true, then AND-ed with each
//!   input element it gathers (`ReduceGeneric<bool>`).

use microarena_image::params::{AxisParams, MeanParams};
use microarena_image::{self as rl, dtype};

use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32};
use super::context::{Ctx, OpDataWriter, Prep};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::{d, quantize, quantize_ratio};
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::MEAN, prepare, eval),
    kernel(opcode::SUM, prepare, eval),
    kernel(opcode::REDUCE_MAX, prepare, eval),
    kernel(opcode::REDUCE_MIN, prepare, eval),
    kernel(opcode::REDUCE_ALL, prepare, eval),
    kernel(opcode::ARG_MAX, prepare_arg, arg),
    kernel(opcode::ARG_MIN, prepare_arg, arg),
    kernel(opcode::CUMSUM, prepare_cumsum, cumsum),
];

/// CUMSUM's integer headroom (TFLM's `kCumSumIntegerShift`).
const CUMSUM_LEFT_SHIFT: i32 = 20;

pub(crate) fn prepare_cumsum(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "CUMSUM needs 2 inputs")?;
    let (input, axis) = (p.input(0)?, p.input(1)?);
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "CUMSUM: float32 or int8, the same in and out",
    )?;
    p.need(
        axis.dtype == dtype::I32 && axis.elements() == 1,
        "CUMSUM axis: one int32",
    )?;
    p.need(
        input.rank >= 1 && input.shape() == out.shape(),
        "CUMSUM: the output as the input, at least 1-D",
    )?;
    if out.dtype == dtype::I8 {
        // CalculateOpData: ADD's rescaling with one input, in double.
        let twice = d(input.scale).map(|s| s.scaled(1));
        let (mi, si) = quantize(|| d(input.scale)?.div(twice?));
        let (mo, so) = quantize(|| twice?.div(d(out.scale)?.scaled(CUMSUM_LEFT_SHIFT)));
        // Bounds of no fused activation: the int8 range.
        for w in [-128, 127, mi, si, mo, so] {
            words.push(w);
        }
    }
    Ok(())
}

/// CUMSUM along the axis input (negative from the end; out of range fails
/// Invoke, as TFLM's Eval): float32 sums in order from 0; int8 rescales each
/// element with a left shift of 20 as ADD does and starts the sum from the
/// rescaled input offset itself (TFLM's `accumulator = input1_offset`).
pub(crate) fn cumsum(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (_, ad) = c.input(1);
    let params: microarena_image::params::CumsumParams = c.op.params();
    let rank = input.rank as i32;
    let axis = i32_at(ad, 0);
    let axis = if axis < 0 { axis + rank } else { axis };
    if axis < 0 || axis >= rank {
        return Err(c.fail()("CUMSUM axis out of range"));
    }
    let axis = axis as usize;
    let inner: usize = (0..axis).map(|k| input.dim(k)).product();
    let outer: usize = (axis + 1..input.rank).map(|k| input.dim(k)).product();
    let depth = input.dim(axis);
    let quantized = input.dtype == dtype::I8;
    let w: [i32; 6] = core::array::from_fn(|k| if quantized { c.word(k) } else { 0 });
    let offset = input.zero_point.wrapping_neg();
    let out_zp = c.output_info().zero_point;
    let scaled =
        |v: i32| fx::mbqm_smaller_than_one(v.wrapping_shl(CUMSUM_LEFT_SHIFT as u32), w[2], w[3]);
    let pick = |i: usize, n: usize| if params.reverse { n - 1 - i } else { i };
    for o in 0..outer {
        let o = pick(o, outer);
        for n in 0..inner {
            let n = pick(n, inner);
            let mut acc_f = 0.0f32;
            let mut acc_q = if quantized { scaled(offset) } else { 0 };
            for d in 0..depth {
                let d = pick(d, depth);
                let i = o + n * depth * outer + d * outer;
                if quantized {
                    let y = scaled(offset.wrapping_add(i8_at(x, i)));
                    let before = acc_q;
                    acc_q = acc_q.wrapping_add(y);
                    let v = if params.exclusive { before } else { acc_q };
                    let r = fx::mbqm_smaller_than_one(v, w[4], w[5]).wrapping_add(out_zp);
                    put_i8(c.out, i, r.clamp(w[0], w[1]));
                } else {
                    let before = acc_f;
                    acc_f += f32_at(x, i);
                    put_f32(c.out, i, if params.exclusive { before } else { acc_f });
                }
            }
        }
    }
    Ok(())
}

/// MEAN and SUM accumulate in a scratch buffer; MAX and MIN in the output.
fn accumulates(code: u8) -> bool {
    matches!(code, opcode::MEAN | opcode::SUM)
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let code = p.op.opcode;
    let input = p.input(0)?;
    p.need(input.dtype == out.dtype, "input and output types differ")?;
    if code == opcode::REDUCE_ALL {
        p.need(out.dtype == dtype::BOOL, "REDUCE_ALL: bool only")?;
    } else if accumulates(code) {
        p.need(
            matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16),
            "only float32, int8 or int16",
        )?;
    } else {
        p.need(
            matches!(out.dtype, dtype::F32 | dtype::I8),
            "only float32 or int8",
        )?;
        if out.dtype == dtype::I8 {
            // TFLM's EvalMinMaxHelper: the values are compared, never rescaled.
            p.need(
                input.scale == out.scale && input.zero_point == out.zero_point,
                "int8 MAX/MIN needs the output's scale and zero point equal to the input's",
            )?;
        }
    }
    let MeanParams {
        axis_mask: mask, ..
    } = p.op.params();
    p.check(
        mask >= 0 && mask >> input.rank == 0,
        "reduction axes outside the input's rank",
    )?;
    let mut kept = 1usize;
    for k in 0..input.rank {
        if mask & (1 << k) == 0 {
            kept = kept.saturating_mul(input.dim(k));
        }
    }
    p.check(
        kept == out.elements(),
        "output size differs from the reduced shape",
    )?;
    let want = rl::op_scratch_bytes(code, out.dtype, out.elements() as u32, 0) as usize;
    alloc.request_scratch(p.index, want, p.op.scratch)?;
    Ok(())
}

/// Output element of input element `i`: the input's row-major coordinates
/// with the reduced axes dropped.
fn output_index(i: usize, input: &TensorInfo, mask: i32) -> usize {
    let mut rem = i;
    let mut oi = 0usize;
    let mut stride = 1usize;
    for k in (0..input.rank).rev() {
        let d = input.dim(k).max(1);
        let coord = rem % d;
        rem /= d;
        if mask & (1 << k) == 0 {
            oi += coord * stride;
            stride *= d;
        }
    }
    oi
}

fn read_int(t: &TensorInfo, x: &[u8], i: usize) -> i32 {
    if t.dtype == dtype::I16 {
        i16_at(x, i)
    } else {
        i8_at(x, i)
    }
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let code = c.op.opcode;
    let mask = c.op.params::<MeanParams>().axis_mask;
    let n_in = input.elements();
    let n_out = out.elements();
    let (_, empty) = reduced(&input, mask);

    if code == opcode::REDUCE_ALL {
        c.out.get_mut(..n_out).unwrap_or(&mut []).fill(1);
        for i in 0..n_in {
            let o = output_index(i, &input, mask);
            if x.get(i).is_some_and(|&v| v == 0)
                && let Some(b) = c.out.get_mut(o)
            {
                *b = 0;
            }
        }
        return Ok(());
    }
    if !accumulates(code) {
        // ReduceGeneric: output starts at the type's extreme, then `in > cur`
        // (MAX) or `in < cur` (MIN) replaces it.
        let max = code == opcode::REDUCE_MAX;
        for o in 0..n_out {
            if out.dtype == dtype::F32 {
                put_f32(c.out, o, if max { f32::MIN } else { f32::MAX });
            } else {
                put_i8(c.out, o, if max { -128 } else { 127 });
            }
        }
        if empty {
            return Ok(());
        }
        for i in 0..n_in {
            let o = output_index(i, &input, mask);
            if out.dtype == dtype::F32 {
                let (cur, v) = (f32_at(c.out, o), f32_at(x, i));
                let take = if max { v > cur } else { v < cur };
                if take {
                    put_f32(c.out, o, v);
                }
            } else {
                let (cur, v) = (i8_at(c.out, o), i8_at(x, i));
                let take = if max { v > cur } else { v < cur };
                if take {
                    put_i8(c.out, o, v);
                }
            }
        }
        return Ok(());
    }

    c.scratch.fill(0);
    fold_sums(&input, x, mask, c.scratch);
    finish_sums(code, (&input, mask), &out, c.scratch, c.out);
    Ok(())
}

/// Adds input elements `x` (record `input`: the whole input, or a band of
/// its rows when the reduced axes include H) to their output elements'
/// sums in `acc`, in row-major order as TFLM: int8/int16 summed raw in
/// int32 (wrapping), float32 in float.
pub(crate) fn fold_sums(input: &TensorInfo, x: &[u8], mask: i32, acc: &mut [u8]) {
    let float = input.dtype == dtype::F32;
    for i in 0..input.elements() {
        let o = output_index(i, input, mask);
        if float {
            put_f32(acc, o, f32_at(acc, o) + f32_at(x, i));
        } else {
            put_i32(acc, o, i32_at(acc, o).wrapping_add(read_int(input, x, i)));
        }
    }
}

/// Elements each output of `input` reduced over `mask` sums, and whether
/// the input is empty.
fn reduced(input: &TensorInfo, mask: i32) -> (usize, bool) {
    let mut count = 1usize;
    for k in 0..input.rank {
        if mask & (1 << k) != 0 {
            count = count.saturating_mul(input.dim(k));
        }
    }
    (count, (0..input.rank).any(|k| input.dim(k) == 0))
}

/// MEAN or SUM's outputs (`out`, into `dst`) from the sums in `acc` of the
/// whole `input` reduced over `mask` ([`fold_sums`]).
pub(crate) fn finish_sums(
    code: u8,
    (input, mask): (&TensorInfo, i32),
    out: &TensorInfo,
    acc: &[u8],
    dst: &mut [u8],
) {
    let n_out = out.elements();
    let (count, empty) = reduced(input, mask);
    if out.dtype == dtype::F32 {
        for o in 0..n_out {
            // An empty SUM's sums are the zeroed accumulator.
            let s = f32_at(acc, o);
            let v = if code == opcode::MEAN {
                if count > 0 { s / count as f32 } else { 0.0 }
            } else {
                s
            };
            put_f32(dst, o, v);
        }
        return;
    }

    // Quantized: QuantizedMeanOrSum. Outputs are 0 (not the zero point) when
    // the input or the reduced extent is empty.
    let put = |out_bytes: &mut [u8], o: usize, v: i32| {
        if out.dtype == dtype::I16 {
            put_i16(out_bytes, o, v.clamp(-32768, 32767));
        } else {
            put_i8(out_bytes, o, v.clamp(-128, 127));
        }
    };
    if empty || count == 0 {
        for o in 0..n_out {
            put(dst, o, 0);
        }
        return;
    }
    let (mut m, mut s) = quantize_ratio(input.scale, 1.0, out.scale);
    let n = count as i64;
    if code == opcode::MEAN {
        // Fold 1/n into the multiplier: k = ⌊log₂ n⌋, at most 32 and 31 + shift
        // (quantize_multiplier never returns a shift below −31, so k ≥ 0).
        let k = (63 - (n as u64).leading_zeros() as i32)
            .min(32)
            .min(31 + s)
            .max(0);
        m = ((i64::from(m) << k) / n) as i32;
        s -= k;
    }
    let zp_n = i64::from(input.zero_point).wrapping_mul(n);
    for o in 0..n_out {
        let shifted = (i64::from(i32_at(acc, o)).wrapping_sub(zp_n)) as i32;
        put(dst, o, fx::mbqm(shifted, m, s).wrapping_add(out.zero_point));
    }
}

pub(crate) fn prepare_arg(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        matches!(input.dtype, dtype::F32 | dtype::I8) && out.dtype == dtype::I32,
        "ARG_MAX/ARG_MIN: float32 or int8 input, int32 output",
    )?;
    let axis = p.op.params::<AxisParams>().axis;
    p.check(
        axis >= 0 && (axis as usize) < input.rank,
        "axis outside the input's rank",
    )?;
    let size = input.dim(axis as usize);
    p.check(size > 0, "empty reduction axis")?;
    p.check(
        out.elements() == input.elements() / size,
        "output size differs from the reduced shape",
    )
}

pub(crate) fn arg(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let axis = c.op.params::<AxisParams>().axis.max(0) as usize;
    let max = c.op.opcode == opcode::ARG_MAX;
    let size = input.dim(axis);
    let outer: usize = (0..axis).map(|k| input.dim(k)).product();
    let inner: usize = (axis + 1..input.rank).map(|k| input.dim(k)).product();
    let value = |i: usize| {
        if input.dtype == dtype::F32 {
            f64::from(f32_at(x, i))
        } else {
            f64::from(i8_at(x, i))
        }
    };
    for o in 0..outer {
        for n in 0..inner {
            let mut best = value(o * size * inner + n);
            let mut at = 0;
            for k in 1..size {
                let v = value((o * size + k) * inner + n);
                // GreaterFn / LessFn: strict, so NaN never wins and ties keep the first.
                if (max && v > best) || (!max && v < best) {
                    best = v;
                    at = k;
                }
            }
            put_i32(c.out, o * inner + n, at as i32);
        }
    }
    Ok(())
}
