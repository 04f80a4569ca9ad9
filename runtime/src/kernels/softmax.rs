//! SOFTMAX: int8 input to int8 or int16 output in gemmlowp fixed point
//! (bit-exact), and float32. LOG_SOFTMAX (`micro/kernels/log_softmax.cc`,
//! `reference_ops::LogSoftmax`, tflite-micro 90b983c2): float32 (`x − max −
//! log(Σ exp(x − max))`) and int8 (`LogSoftmaxQuantized`: the differences to
//! the row maximum in Q5.26, their exps summed in Q12.19, the sum's log in
//! Q5.26 by gemmlowp's `log_x_for_x_greater_than_or_equal_to_1`, the output
//! fixed at scale 16/256 and zero point 127 as TFLM's Prepare demands).

use microarena_image::dtype;
use microarena_image::params::SoftmaxParams;

use super::bytes::{f32_at, i8_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel, variant};
use crate::arena::ArenaAllocator;
use crate::dyadic::{reverse_scaling, softmax_scaling};
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    // The float32 branch is its own, linked only where a model has it.
    Kernel {
        variants: [variant(dtype::F32, "float32", softmax_f32), None],
        ..kernel(opcode::SOFTMAX, prepare, softmax_i8)
    },
    kernel(opcode::LOG_SOFTMAX, prepare_log_softmax, log_softmax),
];

pub(crate) fn prepare_log_softmax(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "LOG_SOFTMAX: float32 or int8, the same in and out",
    )?;
    p.need(
        input.shape() == out.shape() && input.rank >= 1,
        "input and output shapes differ",
    )?;
    if out.dtype == dtype::F32 {
        return Ok(());
    }
    p.need(
        out.scale == 16.0 / 256.0 && out.zero_point == 127,
        "int8 LOG_SOFTMAX needs an output scale of 16/256 and zero point 127",
    )?;
    // PreprocessLogSoftmaxScalingExp (beta 1, 5 integer bits): the input
    // multiplier must be at least 1 and the reverse one below 1 (TFLM CHECKs).
    let (m, shift) = softmax_scaling(1.0, input.scale, 5);
    p.need(
        shift >= 1 && m > 0,
        "int8 LOG_SOFTMAX needs input scale · 2^26 above 1",
    )?;
    let (rm, rs) = reverse_scaling(m, shift)
        .ok_or(p.err("int8 LOG_SOFTMAX needs input scale · 2^26 above 1"))?;
    for w in [m, shift, rm, rs, -fx::input_radius(5, shift, 31)] {
        words.push(w);
    }
    Ok(())
}

/// `LogSoftmaxQuantized` for int8 (OpData: input multiplier and left shift,
/// reverse multiplier and shift, diff_min).
fn log_softmax_i8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let depth = input.last_dim().max(1);
    let (m, shift, rm, rs, diff_min) = (c.word(0), c.word(1), c.word(2), c.word(3), c.word(4));
    for i in 0..input.elements() / depth {
        let row = i * depth;
        let mut max_in_row = -128;
        for k in 0..depth {
            max_in_row = max_in_row.max(i8_at(x, row + k));
        }
        let mut sum_q12 = 0i32;
        for k in 0..depth {
            let diff = i8_at(x, row + k) - max_in_row;
            if diff >= diff_min {
                let e = fx::exp_on_negative_values(fx::mbqm(diff, m, shift), 5);
                sum_q12 = sum_q12.wrapping_add(fx::rdbpot(e, 12));
            }
        }
        let log_sum_q5 = log_x_q12_to_q5(sum_q12);
        let adjusted_diff_min =
            diff_min
                .wrapping_sub(1)
                .max(fx::mbqm(log_sum_q5.wrapping_add(i32::MIN), rm, rs));
        for k in 0..depth {
            let diff = i8_at(x, row + k) - max_in_row;
            let v = if diff > adjusted_diff_min {
                let d5 = fx::mbqm(diff, m, shift);
                // Q5.26 → the output's Q4.3 (scale 1/16): 31 − 5 − 4 bits.
                fx::rdbpot(d5.wrapping_sub(log_sum_q5), 22)
                    .wrapping_add(127)
                    .clamp(-128, 127)
            } else {
                -128
            };
            put_i8(c.out, row + k, v);
        }
    }
    Ok(())
}

/// gemmlowp-style `log_x_for_x_greater_than_or_equal_to_1_impl<5, 12>`
/// (`kernels/internal/common.h`, 90b983c2): `ln x` for `x ≥ 1` in Q12.19,
/// as Q5.26. `x = 2^k · r` with `r` near 1 (choosing between `r` and
/// `r·√½` whichever is smaller), then a rational approximation of `ln r`
/// around `⁴√½`, accumulated in Q6.25 and rounded to Q5.26.
fn log_x_q12_to_q5(x: i32) -> i32 {
    const INPUT_BITS: i32 = 12;
    const ACCUM_BITS: i32 = 6;
    const LOG_2: i32 = 1488522236;
    const SQRT_SQRT_HALF: i32 = 1805811301;
    const SQRT_HALF: i32 = 1518500250;
    const ONE_QUARTER: i32 = 536870912;
    const ALPHA_N: i32 = 117049297;
    const ALPHA_D: i32 = 127690142;
    const ALPHA_I: i32 = 1057819769;
    const ALPHA_F: i32 = 638450708;
    // Saturating multiply by 2^e, e ≥ 0 (SaturatingRoundingMultiplyByPOTParam).
    let pot = |v: i32, e: i32| if e <= 0 { v } else { fx::sat_shl(v, e) };
    let sat = |v: i64| v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    let shifted_quarter = fx::rdbpot(ONE_QUARTER, ACCUM_BITS);
    let z_a = x;
    let z_a_headroom_plus_1 = (z_a as u32).leading_zeros() as i32;
    let r_a_tmp = pot(z_a, z_a_headroom_plus_1 - 1);
    let r_a = pot(fx::srdhm(r_a_tmp, SQRT_HALF), 1);
    let z_a_pow_2_adj = sat(
        i64::from(pot(INPUT_BITS - z_a_headroom_plus_1, 31 - ACCUM_BITS))
            + i64::from(shifted_quarter),
    );
    let z_b = fx::srdhm(z_a, SQRT_HALF);
    let z_b_headroom = (z_b as u32).leading_zeros() as i32 - 1;
    let r_b = pot(z_a, z_b_headroom);
    let z_b_pow_2_adj = sat(
        i64::from(pot(INPUT_BITS - z_b_headroom, 31 - ACCUM_BITS)) - i64::from(shifted_quarter)
    );
    let r = r_a.min(r_b);
    let z_pow_2_adj = z_a_pow_2_adj.max(z_b_pow_2_adj);
    // RoundingHalfSum(r, ⁴√½).
    let sum = i64::from(r) + i64::from(SQRT_SQRT_HALF);
    let p = ((sum + if sum >= 0 { 1 } else { -1 }) / 2) as i32;
    let q = r.wrapping_sub(SQRT_SQRT_HALF);
    let q = q.wrapping_add(q);
    let common_sq = fx::srdhm(q, q);
    let num = fx::srdhm(q, r).wrapping_add(fx::srdhm(fx::srdhm(q, common_sq), ALPHA_N));
    let denom_minus_one = fx::srdhm(
        p,
        ALPHA_I
            .wrapping_add(q)
            .wrapping_add(fx::srdhm(ALPHA_D, common_sq)),
    )
    .wrapping_add(fx::srdhm(ALPHA_F, q));
    let recip_denom = fx::one_over_one_plus_x_for_x_in_0_1(denom_minus_one);
    let num_scaled = fx::rdbpot(num, ACCUM_BITS);
    let accum = fx::srdhm(z_pow_2_adj, LOG_2).wrapping_add(fx::srdhm(num_scaled, recip_denom));
    // Rescale<5> from Q6.25.
    fx::sat_shl(accum, 1)
}

/// `reference_ops::LogSoftmax` (float): the row maximum, the sum of
/// `expf(x − max)`, then `x − max − logf(sum)` (libm's expf/logf: within
/// 1 ULP of the wheel's C library, see `math`).
pub(crate) fn log_softmax(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    if c.output_info().dtype == dtype::I8 {
        return log_softmax_i8(c);
    }
    let (input, x) = c.input(0);
    let depth = input.last_dim().max(1);
    for i in 0..input.elements() / depth {
        let row = i * depth;
        let mut max = f32::MIN;
        for k in 0..depth {
            let v = f32_at(x, row + k);
            if max < v {
                max = v;
            }
        }
        let mut sum = 0.0f32;
        for k in 0..depth {
            sum += super::cmath::expf(f32_at(x, row + k) - max);
        }
        let log_sum = super::cmath::logf(sum);
        for k in 0..depth {
            put_f32(c.out, row + k, f32_at(x, row + k) - max - log_sum);
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
    if out.dtype == dtype::F32 {
        p.need(
            input.dtype == dtype::F32,
            "float32 softmax needs a float32 input",
        )?;
        p.need(same_len(&input, out) && input.rank >= 1, "shape mismatch")?;
        return Ok(());
    }
    p.need(
        input.dtype == dtype::I8 && (out.dtype == dtype::I8 || out.dtype == dtype::I16),
        "only int8 input with int8 or int16 output (and float32) is implemented",
    )?;
    p.need(same_len(&input, out) && input.rank >= 1, "shape mismatch")?;
    let beta = p.op.params::<SoftmaxParams>().beta;
    // PreprocessSoftmaxScaling with kScaledDiffIntegerBits = 5.
    let (m, shift) = softmax_scaling(beta, input.scale, 5);
    p.need(shift >= 0, "softmax multiplier below one")?;
    words.push(m);
    words.push(shift);
    words.push(-fx::input_radius(5, shift, 31));
    Ok(())
}

fn softmax_i8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let depth = input.last_dim().max(1);
    let outer = input.elements() / depth;
    let (mult, shift, diff_min) = (c.word(0), c.word(1), c.word(2));
    let wide = c.output_info().dtype == dtype::I16;
    for i in 0..outer {
        let row = i * depth;
        let mut max_in_row = i32::from(i8::MIN);
        for k in 0..depth {
            max_in_row = max_in_row.max(i8_at(x, row + k));
        }
        let mut sum_of_exps = 0i32; // Q12.19
        for k in 0..depth {
            let diff = i8_at(x, row + k) - max_in_row;
            if diff >= diff_min {
                let scaled = fx::mbqm_greater_than_one(diff, mult, shift);
                let e = fx::exp_on_negative_values(scaled, 5);
                sum_of_exps = sum_of_exps.wrapping_add(fx::rdbpot(e, 12));
            }
        }
        let (shifted_scale, bits_over_unit) = fx::get_reciprocal(sum_of_exps, 12);
        let (bits, lo, hi) = if wide {
            (16, -32768, 32767)
        } else {
            (8, -128, 127)
        };
        for k in 0..depth {
            let diff = i8_at(x, row + k) - max_in_row;
            let v = if diff >= diff_min {
                let scaled = fx::mbqm_greater_than_one(diff, mult, shift);
                let e = fx::exp_on_negative_values(scaled, 5);
                let unsat = fx::rdbpot(fx::srdhm(shifted_scale, e), bits_over_unit + 31 - bits);
                unsat.wrapping_add(lo).clamp(lo, hi)
            } else {
                lo
            };
            if wide {
                put_i16(c.out, row + k, v);
            } else {
                put_i8(c.out, row + k, v);
            }
        }
    }
    Ok(())
}

/// TFLM's float softmax: exp of the scaled difference to the row maximum, then
/// division by the sum (expf from `libm`; TFLM's float results depend on the
/// platform's libm, so these agree to rounding, not necessarily bit for bit).
fn softmax_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let beta = c.op.params::<SoftmaxParams>().beta;
    let depth = input.last_dim().max(1);
    for i in 0..input.elements() / depth {
        let row = i * depth;
        let mut max = f32::MIN;
        for k in 0..depth {
            let v = f32_at(x, row + k);
            if max < v {
                max = v;
            }
        }
        let mut sum = 0.0f32;
        for k in 0..depth {
            let e = super::cmath::expf((f32_at(x, row + k) - max) * beta);
            put_f32(c.out, row + k, e);
            sum += e;
        }
        for k in 0..depth {
            let v = f32_at(c.out, row + k) / sum;
            put_f32(c.out, row + k, v);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_x_is_the_natural_log_in_q5_26() {
        // Q12.19 inputs from 1 to 4000; the Q5.26 result within a few units
        // of 2^-26 · 64 of ln x (the approximation is good to ~1e-6).
        for x in [1.0f64, 1.5, 2.0, core::f64::consts::E, 10.0, 100.0, 4000.0] {
            let raw = (x * f64::from(1 << 19)) as i32;
            let got = f64::from(log_x_q12_to_q5(raw)) / f64::from(1 << 26);
            let want = libm::log(f64::from(raw) / f64::from(1 << 19));
            assert!((got - want).abs() < 1e-5, "ln {x}: {got} vs {want}");
        }
    }
}
