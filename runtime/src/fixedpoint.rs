//! TFLM / gemmlowp fixed-point arithmetic, bit for bit.
//!
//! Every function mirrors the reference implementation it is named after
//! (`tensorflow/lite/kernels/internal/common.h`, `quantization_util.cc`,
//! the int16 `reference_integer_ops` logistic and tanh, and gemmlowp's
//! `fixedpoint.h`). Data-dependent arithmetic wraps where C++ would
//! have undefined behaviour, so no input can make a debug build panic.

/// gemmlowp `SaturatingRoundingDoublingHighMul` (int32).
pub fn srdhm(a: i32, b: i32) -> i32 {
    if a == b && a == i32::MIN {
        return i32::MAX;
    }
    // gemmlowp adds 2^30 (1 − 2^30 when ab < 0) and divides by 2^31
    // truncating; for every product that equals flooring ab + 2^30, which
    // is one multiply-accumulate and a shift (SMLAL on Cortex-M).
    ((mul_wide(a, b) + (1 << 30)) >> 31) as i32
}

/// The exact product `a · b`. Armv6-M has no 32×32→64 multiply (LLVM calls
/// `__aeabi_lmul`, a 64×64 one): there (`cfg(microarena_v6m)`, build.rs;
/// stable Rust has no `target_feature` to tell it) it is [`mul_by_halves`].
#[inline(always)]
pub fn mul_wide(a: i32, b: i32) -> i64 {
    #[cfg(microarena_v6m)]
    return mul_by_halves(a, b);
    #[cfg(not(microarena_v6m))]
    return i64::from(a) * i64::from(b);
}

/// `a · b` from four 16-bit partial products, each one 32-bit MULS:
/// a = ah·2^16 + al with al in [0, 2^16), so |ah·bl| < 2^31.
#[cfg_attr(not(microarena_v6m), allow(dead_code))]
#[inline(always)]
fn mul_by_halves(a: i32, b: i32) -> i64 {
    let (al, ah) = (a & 0xffff, a >> 16);
    let (bl, bh) = (b & 0xffff, b >> 16);
    let lo = (al as u32) * (bl as u32);
    let mid = i64::from(ah * bl) + i64::from(al * bh);
    (i64::from(ah * bh) << 32) + (mid << 16) + i64::from(lo)
}

/// gemmlowp `SaturatingRoundingDoublingHighMul` for int16 operands.
pub fn srdhm_i16(a: i16, b: i16) -> i16 {
    if a == b && a == i16::MIN {
        return i16::MAX;
    }
    let ab = i32::from(a) * i32::from(b);
    let nudge: i32 = if ab >= 0 { 1 << 14 } else { 1 - (1 << 14) };
    ((ab + nudge) / (1 << 15)) as i16
}

/// TFLM's `reference_ops::SaturatingDoublingHighMul` (int16, truncating).
pub fn sdhm_i16(a: i16, b: i16) -> i16 {
    if a == b && a == i16::MIN {
        return i16::MAX;
    }
    ((i32::from(a) * i32::from(b)) / (1 << 15)) as i16
}

/// TFLM's `reference_ops::SaturatingLeftShift` (int16).
pub fn sat_shl_i16(x: i16, amount: i32) -> i16 {
    (i64::from(x) << amount.clamp(0, 31)).clamp(i64::from(i16::MIN), i64::from(i16::MAX)) as i16
}

/// TFLM `DownScaleInt32ToInt16Multiplier`.
pub fn downscale_multiplier_i16(m: i32) -> i16 {
    if m >= i32::MAX - (1 << 15) {
        return i16::MAX;
    }
    (m.wrapping_add(1 << 15) >> 16) as i16
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
/// Inlined: it is the per-output step of every int8 filter op.
#[inline]
pub fn mbqm(x: i32, multiplier: i32, shift: i32) -> i32 {
    let left = if shift > 0 { shift.min(31) } else { 0 };
    let right = if shift > 0 { 0 } else { -shift };
    rdbpot(
        srdhm(x.wrapping_mul(1i32.wrapping_shl(left as u32)), multiplier),
        right,
    )
}

/// TFLM's 64-bit `MultiplyByQuantizedMultiplier` (the 16x8 kernels with an
/// int64 accumulator): the multiplier rounded to 16 bits, one rounding
/// shift by `15 − shift`, the result truncated to int32 as C's conversion.
pub fn mbqm_i64(x: i64, multiplier: i32, shift: i32) -> i32 {
    let reduced = if multiplier < 0x7FFF_0000 {
        i64::from(multiplier.wrapping_add(1 << 15) >> 16)
    } else {
        0x7FFF
    };
    let total = (15 - i64::from(shift)).clamp(1, 62);
    (x.wrapping_mul(reduced).wrapping_add(1i64 << (total - 1)) >> total) as i32
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

/// TFLM `CalculateInputRadius`: `floor((2^ib − 1) · 2^(tsb − ib) / 2^ls)`,
/// saturating as the double-to-int conversion does.
pub fn input_radius(input_integer_bits: i32, input_left_shift: i32, total_signed_bits: i32) -> i32 {
    let ib = input_integer_bits.clamp(0, 30);
    let up = (total_signed_bits - input_integer_bits).clamp(0, 62) - input_left_shift.clamp(0, 62);
    let base = (1i64 << ib) - 1;
    if up >= 0 {
        // base < 2^30: past 2^31 after the shift it saturates.
        if ib + up > 31 {
            i32::MAX
        } else {
            (base << up).min(i64::from(i32::MAX)) as i32
        }
    } else {
        (base >> (-up).min(63)) as i32
    }
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

// ---------------------------------------------------------------- int16 nonlinearities

/// TFLM's `sigmoid_table_uint16`: sigmoid(i/24) in 0.16, shared by the int16
/// logistic and tanh.
const SIGMOID_TABLE: [u16; 256] = [
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
];

#[inline]
fn table(i: u32) -> u32 {
    SIGMOID_TABLE
        .get(i as usize)
        .copied()
        .map_or(65535, u32::from)
}

/// The input scaling shared by the int16 logistic and tanh: with
/// `multiplier == 0`, `x · 3 << left_shift`; otherwise `x · multiplier`
/// rounding-shifted right by `left_shift` (TFLM's `input_multiplier` /
/// `input_left_shift`). Shifts wrap at 32 bits, as the C++ would on the
/// targets, so no parameter can make a debug build panic.
fn scale_i16_input(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    let (m, s) = if multiplier == 0 {
        (3i32.wrapping_shl(left_shift as u32), 0)
    } else {
        (multiplier, left_shift)
    };
    let round = if s > 0 {
        1i32.wrapping_shl((s - 1) as u32)
    } else {
        0
    };
    x.wrapping_mul(m).wrapping_add(round) >> s.clamp(0, 31)
}

/// `reference_integer_ops::Logistic` for int16 (input Q3.12, output Q0.15).
pub fn logistic_i16(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    let v = scale_i16_input(x, multiplier, left_shift);
    let a = v.unsigned_abs();
    let uh = a >> 9;
    let mut r: u32 = if uh >= 255 {
        0x7FFF << 10
    } else {
        let (ua, ub) = (table(uh), table(uh + 1));
        (ua << 9).wrapping_add((a & 0x1ff).wrapping_mul(ub.wrapping_sub(ua)))
    };
    r = if v >= 0 {
        r.wrapping_add(1 << 9)
    } else {
        (1u32 << 25)
            .wrapping_sub(r)
            .wrapping_add(1 << 9)
            .wrapping_sub(1)
    };
    i32::from((r >> 10) as i16)
}

/// `reference_integer_ops::Tanh` for int16.
pub fn tanh_i16(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    let v = scale_i16_input(x, multiplier, left_shift);
    let a = v.unsigned_abs();
    let uh = a >> 8;
    let r: i32 = if uh >= 255 {
        0xFFFF << 8
    } else {
        let (ua, ub) = (table(uh), table(uh + 1));
        (ua << 8).wrapping_add((a & 0xFF).wrapping_mul(ub.wrapping_sub(ua))) as i32
    };
    let r = if v >= 0 {
        r.wrapping_sub(1 << 23).wrapping_add(1 << 7)
    } else {
        r.wrapping_neg()
            .wrapping_add(1 << 23)
            .wrapping_add(1 << 7)
            .wrapping_sub(1)
    };
    i32::from((r >> 8) as i16)
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
    fn input_radius_matches_the_double_formula() {
        for ib in 0..=8 {
            for ls in 0..=31 {
                let want = (f64::from((1i32 << ib) - 1) * (1i64 << (31 - ib)) as f64
                    / (1i64 << ls) as f64) as i32;
                assert_eq!(input_radius(ib, ls, 31), want, "ib {ib} ls {ls}");
            }
        }
    }

    /// The Armv6-M product against the 64-bit one, at the extremes and on
    /// a pseudo-random walk.
    #[test]
    fn products_by_halves_are_exact() {
        let edges = [
            0,
            1,
            -1,
            0xffff,
            0x10000,
            -0x10000,
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(
                    mul_by_halves(a, b),
                    i64::from(a) * i64::from(b),
                    "{a} · {b}"
                );
            }
        }
        let mut x = 0x9e37_79b9u32;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let (a, b) = (x as i32, x.rotate_left(11) as i32);
            assert_eq!(mul_by_halves(a, b), i64::from(a) * i64::from(b));
        }
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

    /// `srdhm` against gemmlowp's own steps (nudge by sign, then C++'s
    /// truncating division), written out here, on edge and pseudo-random
    /// operands.
    #[test]
    fn srdhm_matches_gemmlowp_nudge_and_truncate() {
        fn gemmlowp(a: i32, b: i32) -> i32 {
            if a == b && a == i32::MIN {
                return i32::MAX;
            }
            let ab = i64::from(a) * i64::from(b);
            let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
            ((ab + nudge) / (1i64 << 31)) as i32
        }
        let edges = [
            0,
            1,
            -1,
            2,
            -2,
            1 << 30,
            -(1 << 30),
            i32::MAX,
            i32::MIN,
            i32::MIN + 1,
        ];
        for &a in &edges {
            for &b in &edges {
                assert_eq!(srdhm(a, b), gemmlowp(a, b), "{a} {b}");
            }
        }
        let mut r = 0x2545_f491u32;
        // Under Miri (pure integer code; 167 s at the full count) a sample.
        let n = if cfg!(miri) { 5_000 } else { 200_000 };
        for i in 0..n {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            let a = r as i32 >> (i % 24);
            let b = r.rotate_left(11) as i32;
            assert_eq!(srdhm(a, b), gemmlowp(a, b), "{a} {b}");
            // ties: products that are odd multiples of 2^30
            let t = (a >> 1) | 1;
            assert_eq!(srdhm(t, 1 << 30), gemmlowp(t, 1 << 30), "{t}");
            assert_eq!(srdhm(-t, 1 << 30), gemmlowp(-t, 1 << 30), "{t}");
        }
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

    #[test]
    fn int16_sigmoid_and_tanh_fixed_points() {
        // Q3.12 zero: sigmoid 0.5 in Q0.15, tanh 0 (worked by hand from the LUT formulas).
        assert_eq!(logistic_i16(0, 0, 0), 16384);
        assert_eq!(tanh_i16(0, 0, 0), 0);
        // tanh saturates once |3x| >> 8 ≥ 255 (|x| ≥ 21760); sigmoid (>> 9) stays in its table.
        assert_eq!(logistic_i16(32767, 0, 0), 32757);
        assert_eq!(tanh_i16(32767, 0, 0), 32767);
        assert_eq!(tanh_i16(-32768, 0, 0), -32767);
        // Monotonic and (nearly) symmetric, as the shared table makes them.
        let mut last = (i32::MIN, i32::MIN);
        for x in (-32768..=32767).step_by(97) {
            let (s, t) = (logistic_i16(x, 0, 0), tanh_i16(x, 0, 0));
            assert!(s >= last.0 && t >= last.1, "x={x}");
            assert!((s + logistic_i16(-x, 0, 0) - 32768).abs() <= 1, "x={x}");
            last = (s, t);
        }
    }
}
