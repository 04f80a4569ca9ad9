//! ADD and MUL (int8, int32 and float32, with broadcasting), as TFLM's
//! reference kernels (tflite-micro 90b983c2 `micro/kernels/add.cc`,
//! `add_common.cc`, `mul_common.cc`). int32 is unquantized, wrapping: ADD
//! clamps to the whole int32 range whatever its fused activation (TFLM sets
//! those bounds in Eval) and needs unquantized inputs; MUL clamps to its
//! activation's plain int32 range.

use microarena_image::{dtype, opcode};

use super::broadcast::{bcast_index, broadcastable};
use super::bytes::{f32_at, i8_at, i32_at, put_f32, put_i8, put_i32};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_i8};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::ADD, prepare, eval),
    kernel(opcode::MUL, prepare, eval),
];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (q, f) = (out.dtype == dtype::I8, out.dtype == dtype::F32);
    let a = p.input(0)?;
    let b = p.input(1)?;
    let int32 = out.dtype == dtype::I32;
    p.need(
        a.dtype == out.dtype && b.dtype == out.dtype && (q || f || int32),
        "only int8, int32 or float32",
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
        let (lo, hi) = act_range_i8(p.op.activation, out).ok_or(p.err("fused activation"))?;
        words.push(lo);
        words.push(hi);
        if p.op.opcode == opcode::ADD {
            let left_shift = 20;
            let twice_max = 2.0 * f64::from(a.scale.max(b.scale));
            let (m1, s1) = fx::quantize_multiplier(f64::from(a.scale) / twice_max);
            let (m2, s2) = fx::quantize_multiplier(f64::from(b.scale) / twice_max);
            let (mo, so) = fx::quantize_multiplier(
                twice_max / (f64::from(1i32 << left_shift) * f64::from(out.scale)),
            );
            for w in [left_shift, m1, s1, m2, s2, mo, so] {
                words.push(w);
            }
        } else {
            let real = f64::from(a.scale) * f64::from(b.scale) / f64::from(out.scale);
            let (m, s) = fx::quantize_multiplier(real);
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
            let va = i8_at(c.src(0, xa), ia).wrapping_sub(a.zero_point);
            let vb = i8_at(c.src(1, xb), ib).wrapping_sub(b.zero_point);
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
            put_i8(c.out, i, r.max(lo).min(hi));
        }
    }
    Ok(())
}
