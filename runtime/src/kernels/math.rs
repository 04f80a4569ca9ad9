//! ABS, SQRT, RSQRT, LOG, EXP, CAST and L2_NORMALIZATION, as TFLM's
//! reference kernels (tflite-micro 90b983c2: `micro/kernels/elementwise.cc`,
//! `exp.cc`, `cast.cc`, `l2norm.cc`).
//!
//! * L2_NORMALIZATION over the last axis, up to 4-D, no fused activation:
//!   float32 `x / max(sqrt(Σ x²), 1e-6)` summed in order (exact); int8 (the
//!   output read as scale 1/128, zero point 0 whatever it declares, as TFLM
//!   does) `mbqm(x − zp, 1/√Σ(x − zp)²)` with RSQRT's inverse-root
//!   multiplier and 7 more bits of left shift, clamped to int8.
//!
//! * ABS: float32; int8 and int16 as `|x − zp_in|`, rescaled by
//!   `scale_in / scale_out` only when the scales differ, + zp_out, clamped
//!   (int16 needs zero points 0; an int16 tensor without quantization takes
//!   the plain absolute value);
//! * SQRT, RSQRT (`1 / sqrt(x)`), LOG, EXP: float32. SQRT is correctly
//!   rounded everywhere, so it is exact; LOG and EXP call `libm`'s `logf` and
//!   `expf` where TFLM calls the C library's, which may round differently:
//!   at most 1 ULP apart (verify-kernels lists them as such);
//! * CAST between int8, int16, int32, uint32, float32 and bool (to bool as
//!   the tflite-micro wheel does — its TFLM is newer than 90b983c2, whose
//!   `cast.cc` has no bool output —: nonzero, NaN included, is true)
//!   with C's `static_cast`: integers wrap, floats truncate toward zero (x86's
//!   `cvttss2si` gives `i32::MIN` out of range, and so does this kernel; to
//!   uint32 the wheel saturates — negatives and NaN to 0, beyond 2^32 − 1 to
//!   2^32 − 1, probed on −1e30…1e30, ±inf, NaN — as ARM's `vcvt.u32.f32`
//!   does, and so does this kernel).
//!
//! * RSQRT on int8 (TFLM's Prepare takes float32 and int8 only): `x − zp_in`
//!   (Invoke fails below 0, as TFLM's does), its inverse square root as a
//!   (multiplier, shift) from `GetInvSqrtQuantizedMultiplierExp`'s
//!   Newton–Raphson in gemmlowp fixed point, applied to 1 with a 2²⁰ guard
//!   and then rescaled by `1 / (√scale_in · scale_out)`; 0 gives 127.

use microarena_image::{dtype, opcode};

use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::ABS, prepare, eval),
    kernel(opcode::SQRT, prepare, eval),
    kernel(opcode::RSQRT, prepare, eval),
    kernel(opcode::LOG, prepare, eval),
    kernel(opcode::EXP, prepare, eval),
    kernel(opcode::CAST, prepare_cast, cast),
    kernel(opcode::L2_NORMALIZATION, prepare_l2norm, l2norm),
];

pub(crate) fn prepare_l2norm(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "L2_NORMALIZATION: float32 or int8, the same in and out",
    )?;
    p.need(
        input.rank <= 4 && input.shape() == out.shape(),
        "L2_NORMALIZATION: up to 4-D, the output as the input",
    )?;
    p.need(
        p.op.activation == 0,
        "L2_NORMALIZATION: no fused activation",
    )
}

pub(crate) fn l2norm(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let depth = input.last_dim().max(1);
    let rows = input.elements() / depth;
    if input.dtype == dtype::F32 {
        for r in 0..rows {
            let mut sum = 0.0f32;
            for k in 0..depth {
                let v = f32_at(x, r * depth + k);
                sum += v * v;
            }
            let norm = libm::sqrtf(sum).max(1e-6);
            for k in 0..depth {
                put_f32(c.out, r * depth + k, f32_at(x, r * depth + k) / norm);
            }
        }
        return Ok(());
    }
    let zp = input.zero_point;
    for r in 0..rows {
        let mut acc = 0i32;
        for k in 0..depth {
            let v = i8_at(x, r * depth + k).wrapping_sub(zp);
            acc = acc.wrapping_add(v.wrapping_mul(v));
        }
        let (m, s) = inv_sqrt_multiplier(acc);
        for k in 0..depth {
            let v = i8_at(x, r * depth + k).wrapping_sub(zp);
            let o = fx::mbqm(v, m, s.wrapping_add(7)).clamp(-128, 127);
            put_i8(c.out, r * depth + k, o);
        }
    }
    Ok(())
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(same_len(&input, out), "input and output sizes differ")?;
    if p.op.opcode == opcode::RSQRT && out.dtype == dtype::I8 {
        p.need(
            input.dtype == dtype::I8 && input.n_scales > 0 && out.n_scales > 0,
            "int8 RSQRT needs quantized int8 input and output",
        )?;
        let (m, s) = rsqrt_multiplier(input.scale, out.scale);
        words.push(m);
        words.push(s);
        return Ok(());
    }
    if p.op.opcode != opcode::ABS {
        return p.need(
            input.dtype == dtype::F32 && out.dtype == dtype::F32,
            "float32 only",
        );
    }
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16),
        "ABS: float32, int8 or int16, the same in and out",
    )?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    let quantized = out.dtype == dtype::I8 || input.n_scales > 0;
    if quantized {
        p.need(
            input.n_scales > 0 && out.n_scales > 0,
            "quantized ABS needs quantized input and output",
        )?;
        if out.dtype == dtype::I16 {
            p.need(
                input.zero_point == 0 && out.zero_point == 0,
                "int16 ABS needs zero points of 0",
            )?;
        }
    }
    let rescale = quantized && input.scale != out.scale;
    // The source writes the quotient in float; the wheel computes it in
    // double, as RELU's (see `rectifiers`).
    let (m, s) = if rescale {
        quantize_ratio(input.scale, 1.0, out.scale)
    } else {
        (0, 0)
    };
    words.push(i32::from(quantized) | (i32::from(rescale) << 1));
    words.push(m);
    words.push(s);
    Ok(())
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let code = c.op.opcode;
    if out.dtype == dtype::F32 {
        for i in 0..out.elements() {
            let v = f32_at(c.src(0, x), i);
            let r = match code {
                opcode::ABS => libm::fabsf(v),
                opcode::SQRT => libm::sqrtf(v),
                opcode::RSQRT => 1.0 / libm::sqrtf(v),
                opcode::LOG => super::cmath::logf(v),
                _ => super::cmath::expf(v),
            };
            put_f32(c.out, i, r);
        }
        return Ok(());
    }
    if code == opcode::RSQRT {
        return rsqrt_i8(c, &input, &out);
    }
    // ABS, int8/int16.
    let (flags, m, s) = (c.word(0), c.word(1), c.word(2));
    let (quantized, rescale) = (flags & 1 != 0, flags & 2 != 0);
    let (lo, hi) = if out.dtype == dtype::I16 {
        (-32768, 32767)
    } else {
        (-128, 127)
    };
    for i in 0..out.elements() {
        let v = if out.dtype == dtype::I16 {
            i16_at(c.src(0, x), i)
        } else {
            i8_at(c.src(0, x), i)
        };
        let r = if !quantized {
            // AbsHelper on raw int16: std::abs, stored back as int16.
            i32::from((v as i16).wrapping_abs())
        } else {
            let a = v.wrapping_sub(input.zero_point).wrapping_abs();
            let r = if rescale { fx::mbqm(a, m, s) } else { a };
            r.wrapping_add(out.zero_point).clamp(lo, hi)
        };
        if out.dtype == dtype::I16 {
            put_i16(c.out, i, r);
        } else {
            put_i8(c.out, i, r);
        }
    }
    Ok(())
}

/// `SetRsqrtOutputMultiplier`: `1 / (√scale_in · scale_out)`, the root and
/// the product in float as the source writes them, the quotient in double.
fn rsqrt_multiplier(input_scale: f32, output_scale: f32) -> (i32, i32) {
    quantize_ratio(1.0, 1.0, libm::sqrtf(input_scale) * output_scale)
}

/// `RsqrtEvalQuantized` over the tensor: fails on a value below the input
/// zero point, as TFLM's Invoke does ("only defined for positive values").
fn rsqrt_i8(c: &mut Ctx<'_, '_>, input: &TensorInfo, out: &TensorInfo) -> Result<(), Error> {
    const GUARD: i32 = 20;
    let (x, fail) = (c.input(0).1, c.fail());
    let (m, s) = (c.word(0), c.word(1));
    for i in 0..out.elements() {
        let v = i8_at(c.src(0, x), i).wrapping_sub(input.zero_point);
        if v < 0 {
            return Err(fail(
                "RSQRT is only defined for inputs at or above the zero point",
            ));
        }
        let r = if v == 0 {
            127
        } else {
            let (inv, inv_shift) = inv_sqrt_multiplier(v);
            let data = fx::mbqm(1, inv, inv_shift + GUARD);
            fx::mbqm(data, m, s - GUARD)
                .wrapping_add(out.zero_point)
                .clamp(-128, 127)
        };
        put_i8(c.out, i, r);
    }
    Ok(())
}

/// TFLM's `GetInvSqrtQuantizedMultiplierExp(x, kReverseShift = −1)`
/// (`kernels/internal/common.h`, 90b983c2): `1/√x` as a Q0.31 multiplier and
/// a left shift. `x` is normalised into [2²⁷, 2²⁹) by whole bit pairs, then
/// five Newton steps `y ← 1.5·y − (x/2)·y³` in Q3.28 from `y = 1`, times
/// √2/2. `x ≤ 1` gives (i32::MAX, 0).
fn inv_sqrt_multiplier(x: i32) -> (i32, i32) {
    if x <= 1 {
        return (i32::MAX, 0);
    }
    let mut x = x;
    let mut shift = 11;
    while x >= 1 << 29 {
        x /= 4;
        shift += 1;
    }
    let pairs = ((x as u32).leading_zeros() as i32 - 1) / 2 - 1;
    shift -= pairs;
    x <<= 2 * pairs;
    // Q3.28 operands: a product of two is Q6.25, of three Q9.22, brought back
    // to Q3.28 by saturating left shifts (gemmlowp's Rescale<3>).
    let input = x >> 1;
    let half_input = fx::rdbpot(input, 1);
    const HALF_THREE: i32 = (1 << 28) + (1 << 27);
    let mut y = 1i32 << 28;
    for _ in 0..5 {
        let y3 = fx::sat_shl(fx::srdhm(fx::srdhm(y, y), y), 6);
        let a = fx::srdhm(HALF_THREE, y);
        let b = fx::srdhm(half_input, y3);
        y = fx::sat_shl(a.wrapping_sub(b), 3);
    }
    const HALF_SQRT_2: i32 = 1518500250;
    let mut inv = fx::srdhm(y, HALF_SQRT_2);
    if shift < 0 {
        inv = inv.wrapping_shl((-shift) as u32);
        shift = 0;
    }
    (inv, -shift)
}

fn cast_in(t: i8) -> bool {
    matches!(
        t,
        dtype::I8 | dtype::I16 | dtype::I32 | dtype::U32 | dtype::F32 | dtype::BOOL
    )
}

fn cast_out(t: i8) -> bool {
    matches!(
        t,
        dtype::I8 | dtype::I16 | dtype::I32 | dtype::U32 | dtype::F32 | dtype::BOOL
    )
}

pub(crate) fn prepare_cast(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        cast_in(input.dtype) && cast_out(out.dtype),
        "CAST: from int8, int16, int32, uint32, float32 or bool to int8, int16, int32, uint32, float32 or bool",
    )?;
    p.need(same_len(&input, out), "input and output sizes differ")
}

/// C's float-to-int32 conversion as x86 performs it (`cvttss2si`).
fn f32_to_i32(v: f32) -> i32 {
    if (-2147483648.0..2147483648.0).contains(&v) {
        v as i32
    } else {
        i32::MIN
    }
}

/// Float to uint32 as the tflite-micro wheel (and ARM's `vcvt.u32.f32`)
/// converts: truncation toward zero, saturating, NaN to 0 — Rust's `as`.
fn f32_to_u32(v: f32) -> u32 {
    v as u32
}

pub(crate) fn cast(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    for i in 0..out.elements() {
        if out.dtype == dtype::U32 && input.dtype == dtype::F32 {
            let v = f32_to_u32(f32_at(c.src(0, x), i));
            put_i32(c.out, i, v as i32);
            continue;
        }
        // Every input value as i32 (exact for the integer types; uint32 as
        // its bit pattern) or f32.
        let (iv, fv) = match input.dtype {
            dtype::F32 => {
                let f = f32_at(c.src(0, x), i);
                (f32_to_i32(f), f)
            }
            dtype::U32 => {
                let v = i32_at(c.src(0, x), i);
                (v, v as u32 as f32)
            }
            dtype::I32 => {
                let v = i32_at(c.src(0, x), i);
                (v, v as f32)
            }
            dtype::I16 => {
                let v = i16_at(c.src(0, x), i);
                (v, v as f32)
            }
            dtype::BOOL => {
                let v = i32::from(c.src(0, x).get(i).is_some_and(|&b| b != 0));
                (v, v as f32)
            }
            _ => {
                let v = i8_at(c.src(0, x), i);
                (v, v as f32)
            }
        };
        match out.dtype {
            // C's conversion to bool: nonzero (NaN included) is true.
            dtype::BOOL => {
                if let Some(b) = c.out.get_mut(i) {
                    let nonzero = if input.dtype == dtype::F32 {
                        fv != 0.0
                    } else {
                        iv != 0
                    };
                    *b = u8::from(nonzero);
                }
            }
            dtype::F32 => put_f32(c.out, i, fv),
            dtype::I32 | dtype::U32 => put_i32(c.out, i, iv),
            dtype::I16 => put_i16(c.out, i, iv),
            _ => {
                if let Some(b) = c.out.get_mut(i) {
                    *b = iv as u8;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inv_sqrt_multiplier_is_one_over_the_root() {
        // Five Newton steps in Q3.28 from 1 reach about 2e-6 (x = 2: 1.2e-6),
        // so this checks the arithmetic, not the last bit (verify-kernels does).
        // x ≤ 1 is TFLM's special case.
        assert_eq!(inv_sqrt_multiplier(0), (i32::MAX, 0));
        assert_eq!(inv_sqrt_multiplier(1), (i32::MAX, 0));
        for x in [2, 3, 4, 7, 100, 255, 1 << 20, (1 << 29) + 5, i32::MAX] {
            let (m, shift) = inv_sqrt_multiplier(x);
            let got = f64::from(m) / 2f64.powi(31) * 2f64.powi(shift);
            let want = 1.0 / libm::sqrt(f64::from(x));
            assert!((got - want).abs() <= want * 1e-5, "x {x}: {got} vs {want}");
        }
    }

    #[test]
    fn rsqrt_scale_is_the_reciprocal_of_root_times_scale() {
        // √0.25 · 0.5 = 0.25, exact in float: 4 = 0.5 · 2^3.
        assert_eq!(rsqrt_multiplier(0.25, 0.5), (1 << 30, 3));
    }
}
