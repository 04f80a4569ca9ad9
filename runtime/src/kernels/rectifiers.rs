//! RELU, RELU6, LEAKY_RELU, PRELU and HARD_SWISH, as TFLM's reference kernels
//! (tflite-micro 90b983c2: `micro/kernels/activations_common.cc`,
//! `leaky_relu_common.cc`, `prelu_common.cc`, `hard_swish_common.cc` and
//! `kernels/internal/reference/{leaky_relu,prelu,hard_swish}.h`).
//!
//! Quantized rules worth knowing:
//! * RELU rescales by `scale_in / scale_out` and clamps at the output's zero
//!   point; int16 needs both zero points 0;
//! * RELU6 never rescales: it clamps the input's raw values to
//!   `[zp_in, round(6 / scale_in) + zp_in]`;
//!
//! RELU's and LEAKY_RELU's sources write the scale quotients in float and
//! widen the result to double, but the tflite-micro wheel (x86-64) computes
//! them in double: `scripts/verify-kernels.sh` finds 1-LSB differences with
//! the float quotient (cases `relu_i8_scales0`, `leaky_relu_i8_scales0`) and
//! none with the double one, so the double quotient is what is implemented.
//! * LEAKY_RELU's multipliers are `scale_in · alpha / scale_out` and
//!   `scale_in / scale_out`;
//! * PRELU's alpha is int8 for int8 and int16 inputs and broadcasts;
//! * HARD_SWISH (int8) runs in int16 fixed point with multipliers downscaled
//!   to 16 bits, and needs `scale_in / 128 / scale_out ≤ 1`.

use microarena_image::dtype;
use microarena_image::opcode;
use microarena_image::params::LeakyReluParams;

use super::broadcast::{bcast_index, broadcastable};
use super::bytes::{f32_at, i8_at, i16_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::RELU, prepare_relu, relu),
    kernel(opcode::RELU6, prepare_relu6, relu6),
    kernel(opcode::LEAKY_RELU, prepare_leaky_relu, leaky_relu),
    kernel(opcode::PRELU, prepare_prelu, prelu),
    kernel(opcode::HARD_SWISH, prepare_hard_swish, hard_swish),
];

/// Range of an int8 or int16 output type.
fn type_range(t: i8) -> (i32, i32) {
    if t == dtype::I16 {
        (-32768, 32767)
    } else {
        (-128, 127)
    }
}

fn read(t: &TensorInfo, x: &[u8], i: usize) -> i32 {
    if t.dtype == dtype::I16 {
        i16_at(x, i)
    } else {
        i8_at(x, i)
    }
}

/// Writes `v`, already within the type's range.
fn write(dtype_code: i8, out: &mut [u8], i: usize, v: i32) {
    if dtype_code == dtype::I16 {
        put_i16(out, i, v);
    } else {
        put_i8(out, i, v);
    }
}

/// Same type in and out, float32/int8/int16, same element count.
fn unary_types(p: &Prep<'_, '_>, input: &TensorInfo, out: &TensorInfo) -> Result<(), Error> {
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16),
        "only float32, int8 or int16, the same in and out",
    )?;
    p.need(same_len(input, out), "input and output sizes differ")
}

// ---------------------------------------------------------------- RELU

pub(crate) fn prepare_relu(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    unary_types(p, &input, out)?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    if out.dtype == dtype::I16 {
        p.need(
            input.zero_point == 0 && out.zero_point == 0,
            "int16 RELU needs zero points of 0",
        )?;
    }
    let (m, s) = quantize_ratio(input.scale, 1.0, out.scale);
    let (lo, hi) = type_range(out.dtype);
    // act_min = 0 → zp + round(0 / scale) = zp; act_max = ∞ → the type's max.
    words.push(m);
    words.push(s);
    words.push(lo.max(out.zero_point));
    words.push(hi);
    Ok(())
}

pub(crate) fn relu(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    if out.dtype == dtype::F32 {
        for i in 0..out.elements() {
            let v = f32_at(c.src(0, x), i);
            put_f32(c.out, i, if v < 0.0 { 0.0 } else { v });
        }
        return Ok(());
    }
    let (m, s, lo, hi) = (c.word(0), c.word(1), c.word(2), c.word(3));
    for i in 0..out.elements() {
        let v = out.zero_point.wrapping_add(fx::mbqm(
            read(&input, c.src(0, x), i).wrapping_sub(input.zero_point),
            m,
            s,
        ));
        write(out.dtype, c.out, i, v.max(lo).min(hi));
    }
    Ok(())
}

// ---------------------------------------------------------------- RELU6

pub(crate) fn prepare_relu6(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    unary_types(p, &input, out)?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    let (lo, hi) = type_range(out.dtype);
    // FloatToQuantizedType(6, scale_in, zp_in), clamped to the type.
    let six = fx::round_f32(6.0 / input.scale)
        .saturating_add(input.zero_point)
        .clamp(lo, hi);
    words.push(input.zero_point);
    words.push(six);
    Ok(())
}

pub(crate) fn relu6(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    if out.dtype == dtype::F32 {
        for i in 0..out.elements() {
            // TFLM's `v > 6 ? 6 : v < 0 ? 0 : v`: NaN and -0 pass through, as in clamp.
            put_f32(c.out, i, f32_at(c.src(0, x), i).clamp(0.0, 6.0));
        }
        return Ok(());
    }
    // Relu6Quantized compares in the type T: the zero point is cast to it.
    let (tlo, thi) = type_range(out.dtype);
    let (lower, upper) = (c.word(0).clamp(tlo, thi), c.word(1));
    for i in 0..out.elements() {
        let v = read(&input, c.src(0, x), i);
        let r = if v > upper {
            upper
        } else if v < lower {
            lower
        } else {
            v
        };
        write(out.dtype, c.out, i, r);
    }
    Ok(())
}

// ---------------------------------------------------------------- LEAKY_RELU

pub(crate) fn prepare_leaky_relu(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    unary_types(p, &input, out)?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    let alpha = p.op.params::<LeakyReluParams>().alpha;
    let (ma, sa) = quantize_ratio(input.scale, alpha, out.scale);
    let (mi, si) = quantize_ratio(input.scale, 1.0, out.scale);
    for w in [ma, sa, mi, si] {
        words.push(w);
    }
    Ok(())
}

pub(crate) fn leaky_relu(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    if out.dtype == dtype::F32 {
        let alpha = c.op.params::<LeakyReluParams>().alpha;
        for i in 0..out.elements() {
            let v = f32_at(c.src(0, x), i);
            put_f32(c.out, i, if v > 0.0 { v } else { v * alpha });
        }
        return Ok(());
    }
    let (ma, sa, mi, si) = (c.word(0), c.word(1), c.word(2), c.word(3));
    let negative = ma < 0;
    let safe_alpha = ma.wrapping_abs();
    let (lo, hi) = type_range(out.dtype);
    for i in 0..out.elements() {
        let v = read(&input, c.src(0, x), i).wrapping_sub(input.zero_point);
        let r = if v >= 0 {
            out.zero_point.wrapping_add(fx::mbqm(v, mi, si))
        } else {
            let a = fx::mbqm(v, safe_alpha, sa);
            out.zero_point
                .wrapping_add(if negative { a.wrapping_neg() } else { a })
        };
        write(out.dtype, c.out, i, r.clamp(lo, hi));
    }
    Ok(())
}

// ---------------------------------------------------------------- PRELU

pub(crate) fn prepare_prelu(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    let alpha = p.input(1)?;
    let types_ok = match out.dtype {
        dtype::F32 => input.dtype == dtype::F32 && alpha.dtype == dtype::F32,
        dtype::I8 => input.dtype == dtype::I8 && alpha.dtype == dtype::I8,
        dtype::I16 => input.dtype == dtype::I16 && alpha.dtype == dtype::I8,
        _ => false,
    };
    p.need(
        types_ok,
        "PRELU types: float32, int8, or int16 with an int8 alpha",
    )?;
    // TFLM's BroadcastPrelu4DSlow: at most 4 dims.
    p.need(
        out.rank <= 4 && broadcastable(&input, &alpha, out),
        "PRELU shapes do not broadcast (at most 4-D)",
    )?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    let (m1, s1) = quantize_ratio(input.scale, 1.0, out.scale);
    let (m2, s2) = quantize_ratio(input.scale, alpha.scale, out.scale);
    for w in [m1, s1, m2, s2] {
        words.push(w);
    }
    Ok(())
}

pub(crate) fn prelu(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (alpha, a) = c.input(1);
    let out = c.output_info();
    let (lo, hi) = type_range(out.dtype);
    for i in 0..out.elements() {
        let (ii, ia) = (bcast_index(i, &out, &input), bcast_index(i, &out, &alpha));
        if out.dtype == dtype::F32 {
            let v = f32_at(c.src(0, x), ii);
            put_f32(c.out, i, if v >= 0.0 { v } else { v * f32_at(a, ia) });
            continue;
        }
        let v = read(&input, c.src(0, x), ii).wrapping_sub(input.zero_point);
        let r = if v >= 0 {
            fx::mbqm(v, c.word(0), c.word(1))
        } else {
            let av = i8_at(a, ia).wrapping_sub(alpha.zero_point);
            fx::mbqm(v.wrapping_mul(av), c.word(2), c.word(3))
        };
        write(
            out.dtype,
            c.out,
            i,
            r.wrapping_add(out.zero_point).clamp(lo, hi),
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- HARD_SWISH

pub(crate) fn prepare_hard_swish(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "only float32 or int8, the same in and out",
    )?;
    p.need(same_len(&input, out), "input and output sizes differ")?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    let hires = (1.0f32 / 128.0) * input.scale;
    let (om, oe) = quantize_ratio(hires / out.scale, 1.0, 1.0);
    p.need(
        oe <= 0,
        "HARD_SWISH needs input scale / 128 ≤ output scale (TFLM's Prepare)",
    )?;
    let (rm, re) = quantize_ratio(hires / (3.0f32 / 32768.0), 1.0, 1.0);
    words.push(i32::from(fx::downscale_multiplier_i16(om)));
    words.push(oe);
    words.push(i32::from(fx::downscale_multiplier_i16(rm)));
    words.push(re);
    Ok(())
}

/// gemmlowp `RoundingDivideByPOT` on an int16 value.
fn rdbpot_i16(x: i16, e: i32) -> i16 {
    fx::rdbpot(i32::from(x), e) as i16
}

pub(crate) fn hard_swish(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    if out.dtype == dtype::F32 {
        for i in 0..out.elements() {
            let v = f32_at(c.src(0, x), i);
            // std::min(6, std::max(0, v + 3)) with std's comparison order.
            let t = v + 3.0;
            let t = if 0.0 < t { t } else { 0.0 };
            let t = if t < 6.0 { t } else { 6.0 };
            put_f32(c.out, i, v * t / 6.0);
        }
        return Ok(());
    }
    let (om, oe) = (c.word(0) as i16, c.word(1));
    let (rm, re) = (c.word(2) as i16, c.word(3));
    for i in 0..out.elements() {
        let v = i8_at(c.src(0, x), i).wrapping_sub(input.zero_point) as i16;
        let hires = v.wrapping_mul(1 << 7);
        let preshift = fx::srdhm_i16(hires, om);
        let mut reluish = hires;
        if re > 0 {
            reluish = fx::sat_shl_i16(reluish, re - 1);
        }
        reluish = fx::srdhm_i16(reluish, rm);
        if re > 0 {
            reluish = fx::sat_shl_i16(reluish, 1);
        }
        if re < 0 {
            reluish = rdbpot_i16(reluish, -re);
        }
        reluish = ((i32::from(reluish) + (1 << 15)) >> 1) as i16;
        let pre = fx::sdhm_i16(reluish, preshift);
        let mut r = rdbpot_i16(pre, -oe);
        r = r.wrapping_add(out.zero_point as i16);
        put_i8(c.out, i, i32::from(r).clamp(-128, 127));
    }
    Ok(())
}
