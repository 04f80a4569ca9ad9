//! TFLM / gemmlowp fixed-point arithmetic, bit for bit.
//!
//! Every function mirrors the reference implementation it is named after
//! (`tensorflow/lite/kernels/internal/common.h`, `quantization_util.cc` and
//! gemmlowp's `fixedpoint.h`). Data-dependent arithmetic wraps where C++ would
//! have undefined behaviour, so no input can make a debug build panic.

/// gemmlowp `SaturatingRoundingDoublingHighMul` (int32).
pub fn srdhm(a: i32, b: i32) -> i32 {
    if a == b && a == i32::MIN {
        return i32::MAX;
    }
    let ab = i64::from(a) * i64::from(b);
    let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// gemmlowp `RoundingDivideByPOT` (int32), `exponent` in 0..=31.
pub fn rdbpot(x: i32, exponent: i32) -> i32 {
    let e = exponent.clamp(0, 31) as u32;
    let mask = ((1i64 << e) - 1) as i32;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i32::from(x < 0);
    (x >> e).wrapping_add(i32::from(remainder > threshold))
}

/// gemmlowp `SaturatingRoundingMultiplyByPOT` with a positive exponent (saturating left shift).
pub fn sat_shl(x: i32, exponent: i32) -> i32 {
    let e = exponent.clamp(0, 31) as u32;
    if e == 0 {
        return x;
    }
    let threshold = ((1i64 << (31 - e)) - 1) as i32;
    if x > threshold {
        i32::MAX
    } else if x < -threshold {
        i32::MIN
    } else {
        x.wrapping_shl(e)
    }
}

/// TFLM `MultiplyByQuantizedMultiplier` (double rounding, the default build).
pub fn mbqm(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = if shift > 0 { shift.min(31) } else { 0 };
    let right = if shift > 0 { 0 } else { -shift };
    rdbpot(
        srdhm(x.wrapping_mul(1i32.wrapping_shl(left as u32)), multiplier),
        right,
    )
}

/// TFLM `MultiplyByQuantizedMultiplierSmallerThanOneExp`.
pub fn mbqm_smaller_than_one(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    rdbpot(srdhm(x, multiplier), -left_shift)
}

/// TFLM `MultiplyByQuantizedMultiplierGreaterThanOne`.
pub fn mbqm_greater_than_one(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    srdhm(
        x.wrapping_mul(1i32.wrapping_shl(left_shift.clamp(0, 31) as u32)),
        multiplier,
    )
}

/// `std::frexp` for finite doubles: `x = m · 2^e` with `0.5 ≤ |m| < 1`.
pub fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    let (x, adj) = if x.abs() < f64::MIN_POSITIVE {
        (x * 18014398509481984.0, -54)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let m = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (m, exp - 1022 + adj)
}

/// `std::round` (half away from zero) for |x| < 2^62, as an integer.
pub fn round_f64(x: f64) -> i64 {
    let t = x as i64;
    let frac = x - t as f64;
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// `std::round` for f32 (half away from zero), saturating to i32.
pub fn round_f32(x: f32) -> i32 {
    if !x.is_finite() || x.abs() >= 8388608.0 {
        return x as i32;
    }
    let t = x as i32;
    let frac = x - t as f32;
    if frac >= 0.5 {
        t + 1
    } else if frac <= -0.5 {
        t - 1
    } else {
        t
    }
}

/// TFLM `QuantizeMultiplier`: `(multiplier, shift)` with `m ≈ multiplier · 2^(shift − 31)`.
pub fn quantize_multiplier(m: f64) -> (i32, i32) {
    if m == 0.0 || !m.is_finite() {
        return (0, 0);
    }
    let (q, mut shift) = frexp(m);
    let mut q_fixed = round_f64(q * 2147483648.0);
    if q_fixed == 1 << 31 {
        q_fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        shift = 0;
        q_fixed = 0;
    }
    (
        q_fixed.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        shift,
    )
}

/// TFLM `CalculateInputRadius`.
pub fn input_radius(input_integer_bits: i32, input_left_shift: i32, total_signed_bits: i32) -> i32 {
    let max = f64::from((1i32 << input_integer_bits.clamp(0, 30)) - 1)
        * (1i64 << (total_signed_bits - input_integer_bits).clamp(0, 62)) as f64
        / (1i64 << input_left_shift.clamp(0, 62)) as f64;
    // floor of a non-negative value
    max as i32
}

/// gemmlowp `exp_on_interval_between_negative_one_quarter_and_0_excl` (Q0.31).
fn exp_on_interval(a: i32) -> i32 {
    const CONSTANT_TERM: i32 = 1895147668;
    const ONE_THIRD: i32 = 715827883;
    let x = a.wrapping_add(1 << 28);
    let x2 = srdhm(x, x);
    let x3 = srdhm(x2, x);
    let x4 = srdhm(x2, x2);
    let x4_over_4 = rdbpot(x4, 2);
    let poly = rdbpot(
        srdhm(x4_over_4.wrapping_add(x3), ONE_THIRD).wrapping_add(x2),
        1,
    );
    CONSTANT_TERM.wrapping_add(srdhm(CONSTANT_TERM, x.wrapping_add(poly)))
}

/// gemmlowp `exp_on_negative_values` for a `FixedPoint<int32, INTEGER_BITS>` input; Q0.31 result.
pub fn exp_on_negative_values(a: i32, integer_bits: i32) -> i32 {
    let frac_bits = 31 - integer_bits;
    let one_quarter = 1i32 << (frac_bits - 2);
    let mask = one_quarter - 1;
    let a_mod_quarter_minus_one_quarter = (a & mask).wrapping_sub(one_quarter);
    let mut result = exp_on_interval(sat_shl(a_mod_quarter_minus_one_quarter, integer_bits));
    let remainder = a_mod_quarter_minus_one_quarter.wrapping_sub(a);
    const BARREL: [(i32, i32); 7] = [
        (-2, 1672461947),
        (-1, 1302514674),
        (0, 790015084),
        (1, 290630308),
        (2, 39332535),
        (3, 720401),
        (4, 242),
    ];
    for (exponent, multiplier) in BARREL {
        if integer_bits > exponent {
            let shift = frac_bits + exponent;
            if (0..32).contains(&shift) && remainder & (1i32 << shift) != 0 {
                result = srdhm(result, multiplier);
            }
        }
    }
    if integer_bits > 5 {
        let clamp = -(1i32 << (36 - integer_bits).clamp(0, 30));
        if a < clamp {
            result = 0;
        }
    }
    if a == 0 { i32::MAX } else { result }
}

/// gemmlowp's Newton–Raphson division shared by
/// `one_over_one_plus_x_for_x_in_0_1` and
/// `one_minus_x_over_one_plus_x_for_x_in_0_1`: `1 / (1 + a)` for `a` in
/// Q0.31, as a Q2.29 value (three iterations from 48/17 − 32/17·d).
fn reciprocal_one_plus_x_q2_29(a: i32) -> i32 {
    // RoundingHalfSum(a, One)
    let sum = i64::from(a) + i64::from(i32::MAX);
    let sign: i64 = if sum >= 0 { 1 } else { -1 };
    let half_denominator = ((sum + sign) / 2) as i32;
    const C48_17: i32 = 1515870810;
    const CNEG32_17: i32 = -1010580540;
    let mut x = C48_17.wrapping_add(srdhm(half_denominator, CNEG32_17));
    for _ in 0..3 {
        let hdx = srdhm(half_denominator, x);
        let one_minus = (1i32 << 29).wrapping_sub(hdx);
        x = x.wrapping_add(sat_shl(srdhm(x, one_minus), 2));
    }
    x
}

/// gemmlowp `one_over_one_plus_x_for_x_in_0_1` (Q0.31 in and out).
pub fn one_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    // Rescale<0>(x) from F2
    sat_shl(reciprocal_one_plus_x_q2_29(a), 1)
}

/// TFLM `GetReciprocal`: returns `(reciprocal Q0.31, num_bits_over_unit)`.
pub fn get_reciprocal(x: i32, x_integer_digits: i32) -> (i32, i32) {
    let headroom_plus_one = (x as u32).leading_zeros() as i32;
    let num_bits_over_unit = x_integer_digits - headroom_plus_one;
    let shifted_sum_minus_one =
        ((x as u32).wrapping_shl(headroom_plus_one as u32)).wrapping_sub(1u32 << 31) as i32;
    (
        one_over_one_plus_x_for_x_in_0_1(shifted_sum_minus_one),
        num_bits_over_unit,
    )
}

/// gemmlowp `logistic` for `FixedPoint<int32, INTEGER_BITS>`; Q0.31 result.
pub fn logistic(a: i32, integer_bits: i32) -> i32 {
    if a == 0 {
        return 1 << 30;
    }
    let abs_a = if a > 0 { a } else { a.wrapping_neg() };
    let neg_abs = abs_a.wrapping_neg();
    let r = one_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(neg_abs, integer_bits));
    if a > 0 { r } else { i32::MAX.wrapping_sub(r) }
}

/// gemmlowp `one_minus_x_over_one_plus_x_for_x_in_0_1` (Q0.31).
fn one_minus_x_over_one_plus_x_for_x_in_0_1(a: i32) -> i32 {
    // Rescale<0>(x - F2::One()) from F2
    sat_shl(reciprocal_one_plus_x_q2_29(a).wrapping_sub(1 << 29), 2)
}

/// gemmlowp `tanh` for `FixedPoint<int32, INTEGER_BITS>`; Q0.31 result.
pub fn tanh(a: i32, integer_bits: i32) -> i32 {
    if a == 0 {
        return 0;
    }
    let abs_a = if a > 0 { a } else { a.wrapping_neg() };
    // exp(-2|a|) = exp_on_negative_values(ExactMulByPot<1>(-|a|)) in a type with one more integer bit
    let r = one_minus_x_over_one_plus_x_for_x_in_0_1(exp_on_negative_values(
        abs_a.wrapping_neg(),
        integer_bits + 1,
    ));
    if a > 0 { r } else { r.wrapping_neg() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_multiplier_known_values() {
        assert_eq!(quantize_multiplier(0.5), (1 << 30, 0));
        assert_eq!(quantize_multiplier(1.0), (1 << 30, 1));
        assert_eq!(quantize_multiplier(0.25), (1 << 30, -1));
        assert_eq!(quantize_multiplier(0.0), (0, 0));
        let (m, s) = quantize_multiplier(0.003);
        let back = f64::from(m) * 2f64.powi(s - 31);
        assert!((back - 0.003).abs() < 1e-12);
    }

    #[test]
    fn rounding_primitives() {
        assert_eq!(rdbpot(5, 1), 3);
        assert_eq!(rdbpot(-5, 1), -3);
        assert_eq!(rdbpot(4, 1), 2);
        assert_eq!(srdhm(i32::MIN, i32::MIN), i32::MAX);
        assert_eq!(srdhm(1 << 30, 1 << 30), 1 << 29);
        assert_eq!(mbqm(100, 1 << 30, 0), 50);
        assert_eq!(round_f64(2.5), 3);
        assert_eq!(round_f64(-2.5), -3);
        assert_eq!(round_f32(0.49999997), 0);
    }

    #[test]
    fn exp_and_reciprocal_are_close() {
        // exp(0) = 1, exp(-1) ≈ 0.3679 (Q5.26 input)
        assert_eq!(exp_on_negative_values(0, 5), i32::MAX);
        let e = f64::from(exp_on_negative_values(-(1 << 26), 5)) / 2147483648.0;
        assert!((e - (-1f64).exp()).abs() < 1e-6, "{e}");
        let r = f64::from(one_over_one_plus_x_for_x_in_0_1(1 << 30)) / 2147483648.0;
        assert!((r - 1.0 / 1.5).abs() < 1e-6, "{r}");
        let l = f64::from(logistic(1 << 27, 4)) / 2147483648.0; // logistic(1)
        assert!((l - 1.0 / (1.0 + (-1f64).exp())).abs() < 1e-6, "{l}");
        let t = f64::from(tanh(1 << 27, 4)) / 2147483648.0; // tanh(1)
        assert!((t - 1f64.tanh()).abs() < 1e-6, "{t}");
        assert!(t > 0.0);
    }
}
