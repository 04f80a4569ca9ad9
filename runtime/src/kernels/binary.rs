//! SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE and DIV with broadcasting, as
//! TFLM's reference kernels (tflite-micro 90b983c2: `micro/kernels/sub.cc`,
//! `sub_common.cc`, `maximum_minimum.cc`, `squared_difference.cc`, `div.cc`,
//! `kernels/internal/reference/sub.h`).
//!
//! * SUB: float32 and int32 (unquantized; C's subtraction) with a fused
//!   activation, int8/int16 rescaled as ADD is (left
//!   shift 20 for int8, 15 for int16, per-input multipliers of
//!   `scale / (2 · max scale)`, output multiplier of
//!   `2 · max scale / (2^shift · scale_out)`);
//! * MAXIMUM/MINIMUM: raw values compared (`a > b ? a : b`), no rescaling,
//!   float32, int8, int16, int32;
//! * SQUARED_DIFFERENCE: float32 and int32 `(a − b)²`; int8 (left shift 7,
//!   zero points within int8) and int16 (left shift 0, zero points 0) square
//!   the rescaled difference and requantize with `(2 · max scale)² /
//!   (2^(2·shift) · scale_out)`;
//! * DIV: float32 and int32 (C's truncating division; a zero divisor fails
//!   Invoke) with a fused activation; int8 (`reference_ops::Div`): the
//!   divisor made positive (both signs flipped), its reciprocal from
//!   `GetReciprocal`, the dividend shifted by its redundant sign bits, and
//!   one multiplier `scale_1 / (scale_2 · scale_out)` with the summed
//!   shifts. A divisor equal to its zero point is undefined in TFLM (a
//!   shift by 32); here it gives some value, never a panic, and so does a
//!   total right shift past 31, which is clamped to 31.
//!
//! TFLM's broadcasting for SQUARED_DIFFERENCE (and PRELU) is 4-D at most.

use microarena_image::{dtype, opcode};

use super::broadcast::{bcast_index, broadcastable};
use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_int};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::{d, quantize};
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::SUB, prepare, eval),
    kernel(opcode::MAXIMUM, prepare, eval),
    kernel(opcode::MINIMUM, prepare, eval),
    kernel(opcode::SQUARED_DIFFERENCE, prepare, eval),
    kernel(opcode::DIV, prepare, eval),
];

fn type_range(t: i8) -> (i32, i32) {
    if t == dtype::I16 {
        (-32768, 32767)
    } else {
        (-128, 127)
    }
}

fn read_int(t: i8, x: &[u8], i: usize) -> i32 {
    match t {
        dtype::I16 => i16_at(x, i),
        dtype::I32 => i32_at(x, i),
        _ => i8_at(x, i),
    }
}

fn write_int(t: i8, out: &mut [u8], i: usize, v: i32) {
    match t {
        dtype::I16 => put_i16(out, i, v),
        dtype::I32 => put_i32(out, i, v),
        _ => put_i8(out, i, v),
    }
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let code = p.op.opcode;
    let a = p.input(0)?;
    let b = p.input(1)?;
    p.need(
        a.dtype == out.dtype && b.dtype == out.dtype,
        "inputs and output must have one type",
    )?;
    let ok = match code {
        opcode::SUB => matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16 | dtype::I32),
        opcode::MAXIMUM | opcode::MINIMUM => {
            matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16 | dtype::I32)
        }
        opcode::SQUARED_DIFFERENCE => {
            matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16 | dtype::I32)
        }
        _ => matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I32),
    };
    p.need(ok, "type not supported by this op in TFLM")?;
    p.need(broadcastable(&a, &b, out), "shapes do not broadcast")?;
    if code == opcode::SQUARED_DIFFERENCE && !a.shape().eq(b.shape()) {
        p.need(out.rank <= 4, "broadcasting is 4-D at most")?;
    }
    match (code, out.dtype) {
        (opcode::SUB | opcode::DIV, dtype::F32) => {
            let (lo, hi) = act_range_f32(p.op.activation).ok_or(p.err("fused activation"))?;
            words.push(lo.to_bits() as i32);
            words.push(hi.to_bits() as i32);
        }
        (opcode::SUB, dtype::I32) => {
            // sub_common.cc: int32 SUB only with none of the three quantized;
            // bounds from CalculateActivationRange<int32_t>.
            p.need(
                a.n_scales == 0 && b.n_scales == 0 && out.n_scales == 0,
                "int32 SUB needs unquantized inputs and output",
            )?;
            let (lo, hi) = int32_bounds(p.op.activation).ok_or(p.err("fused activation"))?;
            words.push(lo);
            words.push(hi);
        }
        (opcode::SUB, _) => {
            let (tlo, thi) = type_range(out.dtype);
            let (lo, hi) =
                act_range_int(p.op.activation, out, tlo, thi).ok_or(p.err("fused activation"))?;
            let left_shift = if out.dtype == dtype::I16 { 15 } else { 20 };
            // sub_common.cc writes these quotients in float, but the wheel
            // computes them in double (as RELU's, see `rectifiers`): the
            // float quotients are 1 LSB off on case sub_i16_same.
            let twice_max = d(a.scale.max(b.scale)).map(|m| m.scaled(1));
            let (m1, s1) = quantize(|| d(a.scale)?.div(twice_max?));
            let (m2, s2) = quantize(|| d(b.scale)?.div(twice_max?));
            let (mo, so) = quantize(|| twice_max?.div(d(out.scale)?.scaled(left_shift)));
            for w in [lo, hi, left_shift, m1, s1, m2, s2, mo, so] {
                words.push(w);
            }
        }
        (opcode::DIV, dtype::I32) => {
            // div.cc takes int32 only without quantization; bounds from
            // CalculateActivationRange<int32_t>.
            p.need(
                a.n_scales == 0 && b.n_scales == 0,
                "int32 DIV needs unquantized inputs",
            )?;
            let (lo, hi) = int32_bounds(p.op.activation).ok_or(p.err("fused activation"))?;
            words.push(lo);
            words.push(hi);
        }
        (opcode::DIV, _) => {
            let (lo, hi) =
                act_range_int(p.op.activation, out, -128, 127).ok_or(p.err("fused activation"))?;
            // div.cc writes the quotient in float; the wheel evaluates it in
            // double, as SUB's and RELU's.
            let (m, s) = quantize(|| d(a.scale)?.div(d(b.scale)?.mul(d(out.scale)?)?));
            for w in [lo, hi, m, s] {
                words.push(w);
            }
        }
        (opcode::SQUARED_DIFFERENCE, dtype::I8 | dtype::I16) => {
            let left_shift = if out.dtype == dtype::I8 {
                let in_range = |zp: i32| (-128..=127).contains(&zp);
                p.need(
                    in_range(a.zero_point) && in_range(b.zero_point) && in_range(out.zero_point),
                    "int8 zero points must be within int8",
                )?;
                7
            } else {
                p.need(
                    a.zero_point == 0 && b.zero_point == 0 && out.zero_point == 0,
                    "int16 zero points must be 0",
                )?;
                0
            };
            let (lo, hi) = type_range(out.dtype);
            let twice_max = d(a.scale.max(b.scale)).map(|m| m.scaled(1));
            let (m1, s1) = quantize(|| d(a.scale)?.div(twice_max?));
            let (m2, s2) = quantize(|| d(b.scale)?.div(twice_max?));
            let denominator = (1i32 << (2 * left_shift)) as f32 * out.scale;
            let (mo, so) = quantize(|| twice_max?.mul(twice_max?)?.div(d(denominator)?));
            for w in [lo, hi, left_shift, m1, s1, m2, s2, mo, so] {
                words.push(w);
            }
        }
        _ => {}
    }
    Ok(())
}

/// `CalculateActivationRange<int32_t>`: the int32 ops' fused activation bounds.
fn int32_bounds(activation: u8) -> Option<(i32, i32)> {
    match activation {
        0 => Some((i32::MIN, i32::MAX)),
        1 => Some((0, i32::MAX)),
        2 => Some((-1, 1)),
        3 => Some((0, 6)),
        _ => None,
    }
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (a, xa) = c.input(0);
    let (b, xb) = c.input(1);
    let out = c.output_info();
    let code = c.op.opcode;
    let n = out.elements();
    let same = a.elements() == n && b.elements() == n;
    let w: [i32; 9] = core::array::from_fn(|k| c.word(k));
    let fail = c.fail();
    for i in 0..n {
        let (ia, ib) = if same {
            (i, i)
        } else {
            (bcast_index(i, &out, &a), bcast_index(i, &out, &b))
        };
        if out.dtype == dtype::F32 {
            let (va, vb) = (f32_at(c.src(0, xa), ia), f32_at(c.src(1, xb), ib));
            let r = match code {
                opcode::SUB => va - vb,
                opcode::DIV => va / vb,
                opcode::MAXIMUM => {
                    if va > vb {
                        va
                    } else {
                        vb
                    }
                }
                opcode::MINIMUM => {
                    if va < vb {
                        va
                    } else {
                        vb
                    }
                }
                _ => {
                    let d = va - vb;
                    d * d
                }
            };
            let r = if matches!(code, opcode::SUB | opcode::DIV) {
                act_f32(r, f32::from_bits(w[0] as u32), f32::from_bits(w[1] as u32))
            } else {
                r
            };
            put_f32(c.out, i, r);
            continue;
        }
        let (va, vb) = (
            read_int(a.dtype, c.src(0, xa), ia),
            read_int(b.dtype, c.src(1, xb), ib),
        );
        let r = match code {
            opcode::MAXIMUM => va.max(vb),
            opcode::MINIMUM => va.min(vb),
            // C's int32 division: TFLM traps on a zero divisor; this fails Invoke.
            opcode::DIV if out.dtype == dtype::I32 => {
                if vb == 0 {
                    return Err(fail("int32 DIV by zero"));
                }
                va.wrapping_div(vb).max(w[0]).min(w[1])
            }
            opcode::DIV => div_i8(
                va.wrapping_sub(a.zero_point),
                vb.wrapping_sub(b.zero_point),
                &w,
            )
            .wrapping_add(out.zero_point)
            .max(w[0])
            .min(w[1]),
            // C's int32 subtraction (wrapping on x86 and Arm), then the bounds.
            opcode::SUB if out.dtype == dtype::I32 => va.wrapping_sub(vb).max(w[0]).min(w[1]),
            opcode::SQUARED_DIFFERENCE if out.dtype == dtype::I32 => {
                let d = va.wrapping_sub(vb);
                d.wrapping_mul(d)
            }
            _ => {
                // SUB and quantized SQUARED_DIFFERENCE: both inputs rescaled
                // to a common scale with `left_shift` bits of headroom.
                let (lo, hi, ls) = (w[0], w[1], w[2]);
                let sa = fx::mbqm_smaller_than_one(
                    va.wrapping_sub(a.zero_point).wrapping_shl(ls as u32),
                    w[3],
                    w[4],
                );
                let sb = fx::mbqm_smaller_than_one(
                    vb.wrapping_sub(b.zero_point).wrapping_shl(ls as u32),
                    w[5],
                    w[6],
                );
                let d = sa.wrapping_sub(sb);
                let raw = if code == opcode::SUB {
                    fx::mbqm_smaller_than_one(d, w[7], w[8])
                } else {
                    fx::mbqm(d.wrapping_mul(d), w[7], w[8])
                };
                raw.wrapping_add(out.zero_point).max(lo).min(hi)
            }
        };
        write_int(out.dtype, c.out, i, r);
    }
    Ok(())
}

/// `DivElementwise`'s quotient before the output offset: `w` holds the
/// bounds, then the output (multiplier, shift).
fn div_i8(num: i32, den: i32, w: &[i32; 9]) -> i32 {
    let (num, den) = if den < 0 {
        (num.wrapping_neg(), den.wrapping_neg())
    } else {
        (num, den)
    };
    let (inv, recip_shift) = fx::get_reciprocal(den, 31);
    // CountLeadingSignBits (GCC's __builtin_clrsb; 31 for 0).
    let headroom = if num >= 0 {
        num.leading_zeros() as i32 - 1
    } else {
        (!num).leading_zeros() as i32 - 1
    };
    let unscaled = fx::mbqm_greater_than_one(num, inv, headroom);
    let total_shift = w[3] - recip_shift - headroom;
    fx::mbqm_smaller_than_one(unscaled, w[2], total_shift)
}
