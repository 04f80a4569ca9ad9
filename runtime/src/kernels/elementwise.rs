//! ADD and MUL (int8, int16, int32 and float32, with broadcasting), as TFLM's
//! reference kernels (tflite-micro 90b983c2 `micro/kernels/add.cc`,
//! `add_common.cc`, `mul_common.cc`). int16 follows int8's rules: ADD
//! rescales both inputs with a left shift of 15 (20 for int8) whatever the
//! `pot_scale_int16` option (TFLM's micro ADD ignores it), MUL needs zero
//! points of 0 on both inputs and the output, and ADD_N (`add_n.cc`: float32 and int8). int32 is unquantized, wrapping: ADD
//! clamps to the whole int32 range whatever its fused activation (TFLM sets
//! those bounds in Eval) and needs unquantized inputs; MUL clamps to its
//! activation's plain int32 range.

use microarena_image::{self as rl, dtype, opcode};

use super::broadcast::{bcast_index, broadcastable};
use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_i8, act_range_int};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use core::cmp::Ordering;

use crate::dyadic::{Dyadic, d, quantize, quantize_ratio};
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::ADD, prepare, eval),
    kernel(opcode::MUL, prepare, eval),
    kernel(opcode::ADD_N, prepare_add_n, add_n),
];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let int16 = out.dtype == dtype::I16;
    let (q, f) = (out.dtype == dtype::I8 || int16, out.dtype == dtype::F32);
    let a = p.input(0)?;
    let b = p.input(1)?;
    let int32 = out.dtype == dtype::I32;
    p.need(
        a.dtype == out.dtype && b.dtype == out.dtype && (q || f || int32),
        "only int8, int16, int32 or float32",
    )?;
    p.need(broadcastable(&a, &b, out), "shapes do not broadcast")?;
    if int32 {
        let (lo, hi) = if p.op.opcode == opcode::ADD {
            p.need(
                a.n_scales == 0 && b.n_scales == 0,
                "ADD: int32 inputs must not be quantized",
            )?;
            (i32::MIN, i32::MAX)
        } else {
            match p.op.activation {
                0 => (i32::MIN, i32::MAX),
                1 => (0, i32::MAX),
                2 => (-1, 1),
                3 => (0, 6),
                _ => return Err(p.err("fused activation")),
            }
        };
        words.push(lo);
        words.push(hi);
    } else if q {
        let bounds = if int16 {
            act_range_int(p.op.activation, out, -32768, 32767)
        } else {
            act_range_i8(p.op.activation, out)
        };
        let (lo, hi) = bounds.ok_or(p.err("fused activation"))?;
        words.push(lo);
        words.push(hi);
        if p.op.opcode == opcode::ADD {
            let left_shift = if int16 { 15 } else { 20 };
            let twice_max = d(a.scale.max(b.scale)).map(|m| m.scaled(1));
            let (m1, s1) = quantize(|| d(a.scale)?.div(twice_max?));
            let (m2, s2) = quantize(|| d(b.scale)?.div(twice_max?));
            let (mo, so) = quantize(|| twice_max?.div(d(out.scale)?.scaled(left_shift)));
            for w in [left_shift, m1, s1, m2, s2, mo, so] {
                words.push(w);
            }
        } else {
            p.need(
                !int16 || (a.zero_point == 0 && b.zero_point == 0 && out.zero_point == 0),
                "int16 MUL needs zero points of 0",
            )?;
            let (m, s) = quantize_ratio(a.scale, b.scale, out.scale);
            words.push(m);
            words.push(s);
        }
    } else {
        let (lo, hi) = act_range_f32(p.op.activation).ok_or(p.err("fused activation"))?;
        words.push(lo.to_bits() as i32);
        words.push(hi.to_bits() as i32);
    }
    Ok(())
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (a, xa) = c.input(0);
    let (b, xb) = c.input(1);
    let out = c.output_info();
    let n = out.elements();
    let same = a.elements() == n && b.elements() == n;
    let add = c.op.opcode == opcode::ADD;
    for i in 0..n {
        let (ia, ib) = if same {
            (i, i)
        } else {
            (bcast_index(i, &out, &a), bcast_index(i, &out, &b))
        };
        if out.dtype == dtype::I32 {
            let (va, vb) = (i32_at(c.src(0, xa), ia), i32_at(c.src(1, xb), ib));
            let r = if add {
                va.wrapping_add(vb)
            } else {
                va.wrapping_mul(vb)
            };
            put_i32(c.out, i, r.max(c.word(0)).min(c.word(1)));
        } else if out.dtype == dtype::F32 {
            let (va, vb) = (f32_at(c.src(0, xa), ia), f32_at(c.src(1, xb), ib));
            let r = if add { va + vb } else { va * vb };
            put_f32(
                c.out,
                i,
                act_f32(
                    r,
                    f32::from_bits(c.word(0) as u32),
                    f32::from_bits(c.word(1) as u32),
                ),
            );
        } else {
            let (lo, hi) = (c.word(0), c.word(1));
            let int16 = out.dtype == dtype::I16;
            let at = if int16 { i16_at } else { i8_at };
            let va = at(c.src(0, xa), ia).wrapping_sub(a.zero_point);
            let vb = at(c.src(1, xb), ib).wrapping_sub(b.zero_point);
            let r = if add {
                let ls = c.word(2);
                let sa =
                    fx::mbqm_smaller_than_one(va.wrapping_shl(ls as u32), c.word(3), c.word(4));
                let sb =
                    fx::mbqm_smaller_than_one(vb.wrapping_shl(ls as u32), c.word(5), c.word(6));
                fx::mbqm_smaller_than_one(sa.wrapping_add(sb), c.word(7), c.word(8))
                    .wrapping_add(out.zero_point)
            } else {
                out.zero_point
                    .wrapping_add(fx::mbqm(va.wrapping_mul(vb), c.word(2), c.word(3)))
            };
            let put = if int16 { put_i16 } else { put_i8 };
            put(c.out, i, r.max(lo).min(hi));
        }
    }
    Ok(())
}

/// ADD_N's integer headroom: inputs are shifted left by this before rescaling
/// (TFLM's `kAddNIntegerShift`).
const ADD_N_LEFT_SHIFT: i32 = 20;

/// ADD_N: at least two inputs of the output's shape and type, float32 or int8;
/// int8 inputs share one scale and zero point (TFLM's `CalculateOpData`).
/// TFLM loops over the output's elements without checking its shape, so an
/// output unlike the inputs is refused here.
pub(crate) fn prepare_add_n(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs >= 2, "ADD_N needs at least two inputs")?;
    let first = p.input(0)?;
    p.need(
        first.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "ADD_N: float32 or int8, every input as the output",
    )?;
    p.need(first.shape() == out.shape(), "ADD_N: output shape")?;
    for k in 1..p.op.n_inputs {
        let t = p.input(k)?;
        p.need(
            t.dtype == first.dtype && t.shape() == first.shape(),
            "ADD_N: inputs of one shape and type",
        )?;
        p.need(
            out.dtype != dtype::I8 || (t.scale == first.scale && t.zero_point == first.zero_point),
            "ADD_N: int8 inputs on one scale and zero point",
        )?;
    }
    if out.dtype == dtype::I8 {
        let (lo, hi) = act_range_i8(0, out).ok_or(p.err("fused activation"))?;
        let twice = d(first.scale).map(|s| s.scaled(1));
        let (mi, si) = quantize(|| d(first.scale)?.div(twice?));
        let real_out = || twice?.div(d(out.scale)?.scaled(ADD_N_LEFT_SHIFT));
        // TFLM's QuantizeMultiplierSmallerThanOneExp aborts outside (0, 1).
        let in_unit = |r: Dyadic| {
            r.cmp(Dyadic::int(0)) == Ordering::Greater && r.cmp(Dyadic::ONE) == Ordering::Less
        };
        p.need(
            real_out().is_some_and(in_unit),
            "ADD_N: output scale too small for the inputs' (TFLM requires a multiplier below 1)",
        )?;
        let (mo, so) = quantize(real_out);
        for w in [lo, hi, mi, si, mo, so] {
            words.push(w);
        }
    }
    Ok(())
}

pub(crate) fn add_n(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let out = c.output_info();
    let mut inputs: [&[u8]; rl::MAX_OP_INPUTS] = [&[]; rl::MAX_OP_INPUTS];
    for (k, x) in inputs.iter_mut().enumerate().take(c.op.n_inputs) {
        *x = c.input(k).1;
    }
    let inputs = inputs.get(..c.op.n_inputs).unwrap_or(&[]);
    if out.dtype == dtype::F32 {
        for i in 0..out.elements() {
            // TFLM's order: 0, then each input in turn.
            let mut x = 0.0f32;
            for xk in inputs {
                x += f32_at(xk, i);
            }
            put_f32(c.out, i, x);
        }
        return Ok(());
    }
    let (lo, hi, mi, si, mo, so) = (
        c.word(0),
        c.word(1),
        c.word(2),
        c.word(3),
        c.word(4),
        c.word(5),
    );
    let offset = c.input(0).0.zero_point.wrapping_neg();
    let scaled =
        |v: i32| fx::mbqm_smaller_than_one(v.wrapping_shl(ADD_N_LEFT_SHIFT as u32), mi, si);
    // TFLM starts the sum from the input offset itself ("x = 0" in its
    // source holds -zero_point), so one extra offset term is part of the sum.
    let start = scaled(offset);
    for i in 0..out.elements() {
        let mut acc = start;
        for xk in inputs {
            acc = acc.wrapping_add(scaled(offset.wrapping_add(i8_at(xk, i))));
        }
        let r = fx::mbqm_smaller_than_one(acc, mo, so).wrapping_add(out.zero_point);
        put_i8(c.out, i, r.max(lo).min(hi));
    }
    Ok(())
}
