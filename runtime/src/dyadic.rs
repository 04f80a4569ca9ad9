//! TFLM's double-precision multiplier derivations, reproduced in integers.
//!
//! TFLM turns float scales into fixed-point multipliers in `double`:
//! `QuantizeMultiplier((double)in_scale * filter_scale / out_scale)` and the
//! like. Every value it builds before its one rounding division is exact in
//! double (a product of two floats has at most 48 significant bits, powers of
//! two and small integers are exact), and the division is IEEE 754's: the
//! exact quotient rounded to 53 bits, to nearest even. So the same bits come
//! out of integer arithmetic on `m · 2^e` values, and a Cortex-M build links
//! no soft-float double routines for it (≈4 KiB of `__adddf3`, `__muldf3`,
//! `__divdf3`, conversions and comparisons in an int8 model's firmware).

use core::cmp::Ordering;

/// Significant bits of an IEEE 754 double.
const DOUBLE_BITS: u32 = 53;

/// A finite double, `(−1)^neg · m · 2^e` (`m == 0` is zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Dyadic {
    neg: bool,
    m: u64,
    e: i32,
}

impl Dyadic {
    pub(crate) const ONE: Dyadic = Dyadic::pow2(0);

    /// `2^k`.
    pub(crate) const fn pow2(k: i32) -> Dyadic {
        Dyadic {
            neg: false,
            m: 1,
            e: k,
        }
    }

    /// An integer; exact below 2^53 (above, rounded as a conversion to
    /// double rounds).
    pub(crate) fn int(i: i64) -> Dyadic {
        Dyadic {
            neg: i < 0,
            m: i.unsigned_abs(),
            e: 0,
        }
        .round()
    }

    /// `f64::from(x)`; `None` for NaN and the infinities.
    pub(crate) fn f32(x: f32) -> Option<Dyadic> {
        let bits = x.to_bits();
        let exp = ((bits >> 23) & 0xff) as i32;
        let frac = u64::from(bits & 0x7f_ffff);
        let (m, e) = match exp {
            0xff => return None,
            // Subnormal: no hidden bit.
            0 => (frac, -149),
            _ => (frac | 1 << 23, exp - 150),
        };
        Some(Dyadic {
            neg: bits >> 31 == 1,
            m,
            e,
        })
    }

    /// `self · o` as double multiplies: the exact product rounded to 53 bits.
    /// `None` when the product of the significands passes 64 bits, which
    /// products of floats, powers of two and small integers never do.
    pub(crate) fn mul(self, o: Dyadic) -> Option<Dyadic> {
        let (a, b) = (self.trimmed(), o.trimmed());
        Some(
            Dyadic {
                neg: a.neg != b.neg,
                m: a.m.checked_mul(b.m)?,
                e: a.e + b.e,
            }
            .round(),
        )
    }

    /// `self / d` as double divides: the exact quotient rounded to 53 bits
    /// (to nearest, ties to even). `None` for division by zero (∞ or NaN).
    pub(crate) fn div(self, d: Dyadic) -> Option<Dyadic> {
        let (n, d) = (self.trimmed(), d.trimmed());
        if d.m == 0 {
            return None;
        }
        if n.m == 0 {
            return Some(Dyadic {
                neg: n.neg != d.neg,
                ..n
            });
        }
        // Long division until the quotient has 53 bits and one rounding
        // bit: first the numerator's own digits, then zeros. A float's
        // significand (24 bits) takes 8-bit digits, each one 32-bit divide
        // (UDIV on a Cortex-M4); wider divisors one bit per step, the
        // remainder below 2·d < 2^54.
        let (mut q, mut r) = (0u64, 0u64);
        let mut frac_bits = 0i32;
        let digit = if d.m < 1 << 24 { 8 } else { 1 };
        let mut i = (64 - n.m.leading_zeros()).div_ceil(digit) * digit;
        while i > 0 || q < 1 << DOUBLE_BITS {
            let next = if i > 0 {
                i -= digit;
                (n.m >> i) & ((1 << digit) - 1)
            } else {
                frac_bits += digit as i32;
                0
            };
            let cur = r << digit | next;
            if digit == 8 {
                // cur < 2^32: a 32-bit divide.
                let (c, dm) = (cur as u32, d.m as u32);
                q = q << 8 | u64::from(c / dm);
                r = u64::from(c % dm);
            } else {
                q <<= 1;
                r = cur;
                if r >= d.m {
                    r -= d.m;
                    q |= 1;
                }
            }
        }
        // q holds at least 54 significant bits; a remainder is sticky.
        let sticky = u64::from(r != 0);
        Some(
            Dyadic {
                neg: n.neg != d.neg,
                m: q,
                e: n.e - d.e - frac_bits,
            }
            .round_with(sticky),
        )
    }

    /// Exact comparison of two values (their doubles compare the same way).
    pub(crate) fn cmp(self, o: Dyadic) -> Ordering {
        let sign = |x: Dyadic| {
            if x.m == 0 {
                0
            } else if x.neg {
                -1
            } else {
                1
            }
        };
        match sign(self).cmp(&sign(o)) {
            Ordering::Equal if sign(self) == 0 => Ordering::Equal,
            Ordering::Equal => {
                let mag = Self::cmp_magnitude(self, o);
                if self.neg { mag.reverse() } else { mag }
            }
            other => other,
        }
    }

    fn cmp_magnitude(a: Dyadic, b: Dyadic) -> Ordering {
        // Position of the top bit, then the significands aligned to it.
        let top = |x: Dyadic| i64::from(64 - x.m.leading_zeros()) + i64::from(x.e);
        match top(a).cmp(&top(b)) {
            Ordering::Equal => {
                let (am, bm) = if a.e >= b.e {
                    (a.m << (a.e - b.e), b.m)
                } else {
                    (a.m, b.m << (b.e - a.e))
                };
                am.cmp(&bm)
            }
            other => other,
        }
    }

    /// TFLM `QuantizeMultiplier` of this double: `(multiplier, shift)` with
    /// the value ≈ multiplier · 2^(shift − 31).
    pub(crate) fn quantize(self) -> (i32, i32) {
        let (mut q_fixed, mut shift) = self.frexp_q31();
        if q_fixed == 1 << 31 {
            q_fixed /= 2;
            shift += 1;
        }
        if shift < -31 {
            return (0, 0);
        }
        (
            q_fixed.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            shift,
        )
    }

    /// `frexp` then `std::round(q · 2^31)`: `(round(q · 2^31), e)` with the
    /// value = q · 2^e, 0.5 ≤ |q| < 1 (`(0, 0)` for zero), as TFLM's
    /// multiplier derivations start.
    pub(crate) fn frexp_q31(self) -> (i64, i32) {
        if self.m == 0 {
            return (0, 0);
        }
        // q = m / 2^53 once m is normalised to 53 bits.
        let lz = self.m.leading_zeros();
        let m = self.m << lz >> (64 - DOUBLE_BITS);
        let shift = self.e + (64 - lz as i32);
        // Half away from zero: q · 2^31 = m / 2^22.
        let q = ((m + (1 << 21)) >> 22) as i64;
        (if self.neg { -q } else { q }, shift)
    }

    /// `self · 2^k` (exact).
    pub(crate) fn scaled(self, k: i32) -> Dyadic {
        Dyadic {
            e: self.e + k,
            ..self
        }
    }

    /// The double converted to an integer as C++ does (toward zero),
    /// saturating to `i32` as Rust's `as` does.
    pub(crate) fn trunc_i32(self) -> i32 {
        let top = i64::from(64 - self.m.leading_zeros()) + i64::from(self.e);
        let mag = if self.m == 0 || top <= 0 {
            0
        } else if top > 32 {
            u64::MAX
        } else if self.e >= 0 {
            self.m << self.e
        } else {
            self.m >> (-self.e).min(63)
        };
        let v = i64::try_from(mag).unwrap_or(i64::MAX);
        let v = if self.neg { -v } else { v };
        v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
    }

    /// Without trailing zero bits (smaller products, same value).
    fn trimmed(self) -> Dyadic {
        if self.m == 0 {
            return self;
        }
        let tz = self.m.trailing_zeros();
        Dyadic {
            m: self.m >> tz,
            e: self.e + tz as i32,
            ..self
        }
    }

    fn round(self) -> Dyadic {
        self.round_with(0)
    }

    /// Rounded to 53 significant bits, to nearest, ties to even; `sticky`
    /// is 1 when nonzero bits lie below `m`.
    fn round_with(self, sticky: u64) -> Dyadic {
        let len = 64 - self.m.leading_zeros();
        if len <= DOUBLE_BITS {
            return self;
        }
        let drop = len - DOUBLE_BITS;
        let kept = self.m >> drop;
        let rest = self.m & ((1u64 << drop) - 1);
        let half = 1u64 << (drop - 1);
        let up = rest > half || (rest == half && (sticky != 0 || kept & 1 == 1));
        let (m, e) = match kept + u64::from(up) {
            m if m >> DOUBLE_BITS == 1 => (m >> 1, self.e + drop as i32 + 1),
            m => (m, self.e + drop as i32),
        };
        Dyadic { m, e, ..self }
    }
}

/// TFLM `QuantizeMultiplier` of the double `f` builds from float scales;
/// `(0, 0)` where `f` gives `None` (the double would be zero, infinite or
/// NaN, which TFLM's makes `(0, 0)` too).
pub(crate) fn quantize(f: impl FnOnce() -> Option<Dyadic>) -> (i32, i32) {
    f().map_or((0, 0), Dyadic::quantize)
}

/// `f64::from(x)`, `None` for NaN and ±∞ (short for [`Dyadic::f32`]).
pub(crate) fn d(x: f32) -> Option<Dyadic> {
    Dyadic::f32(x)
}

/// TFLM `QuantizeMultiplier((double)a * (double)b / (double)c)` for float
/// scales; `(0, 0)` where the double would be zero, infinite or NaN.
pub(crate) fn quantize_ratio(a: f32, b: f32, c: f32) -> (i32, i32) {
    quantize(|| d(a)?.mul(d(b)?)?.div(d(c)?))
}

/// TFLM `PreprocessSoftmaxScaling`'s multiplier:
/// `QuantizeMultiplier(min(beta · scale · 2^(31 − integer_bits), 2^31 − 1))`
/// (a non-finite product takes the cap).
pub(crate) fn softmax_scaling(beta: f32, scale: f32, integer_bits: i32) -> (i32, i32) {
    let cap = Dyadic::int((1 << 31) - 1);
    let real = || {
        Dyadic::f32(beta)?
            .mul(Dyadic::f32(scale)?)?
            .mul(Dyadic::pow2(31 - integer_bits))
    };
    match real() {
        Some(r) if r.cmp(cap) == Ordering::Less => r.quantize(),
        _ => cap.quantize(),
    }
}

/// TFLM `PreprocessLogSoftmaxScalingExp`'s reverse multiplier,
/// `QuantizeMultiplier(2^(31 − shift) / multiplier)`, or `None` when that
/// quotient is not in (0, 1) (TFLM CHECKs it is).
pub(crate) fn reverse_scaling(multiplier: i32, shift: i32) -> Option<(i32, i32)> {
    let r = Dyadic::pow2((31 - shift).clamp(0, 62)).div(Dyadic::int(i64::from(multiplier)))?;
    let zero = Dyadic::int(0);
    (r.cmp(zero) == Ordering::Greater && r.cmp(Dyadic::ONE) == Ordering::Less).then(|| r.quantize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// TFLM's QuantizeMultiplier written out over the host's hardware
    /// doubles: frexp by the bit pattern, then std::round.
    fn reference(d: f64) -> (i32, i32) {
        if d == 0.0 || !d.is_finite() {
            return (0, 0);
        }
        let bits = d.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        assert!(exp != 0, "the cases stay normal doubles");
        let q = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
        let mut shift = exp - 1022;
        let mut q_fixed = (q * 2147483648.0).round() as i64;
        if q_fixed == 1 << 31 {
            q_fixed /= 2;
            shift += 1;
        }
        if shift < -31 {
            return (0, 0);
        }
        (
            q_fixed.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
            shift,
        )
    }

    /// `2^e` built from its bits: exact (`powi` is not, under Miri).
    fn pow2(e: i32) -> f64 {
        assert!((-1022..=1023).contains(&e), "a normal power of two");
        f64::from_bits(((1023 + e) as u64) << 52)
    }

    fn f64_of(x: Dyadic) -> f64 {
        let v = x.m as f64 * pow2(x.e);
        if x.neg { -v } else { v }
    }

    #[test]
    fn known_multipliers() {
        assert_eq!(quantize_ratio(0.5, 1.0, 1.0), (1 << 30, 0));
        assert_eq!(quantize_ratio(1.0, 1.0, 1.0), (1 << 30, 1));
        assert_eq!(quantize_ratio(1.0, 1.0, 4.0), (1 << 30, -1));
        assert_eq!(quantize_ratio(0.0, 3.0, 1.0), (0, 0));
        assert_eq!(quantize_ratio(1.0, 1.0, 0.0), (0, 0));
        assert_eq!(quantize_ratio(f32::NAN, 1.0, 1.0), (0, 0));
        // 1/3 = 0.333… = 0.666… · 2^-1; 0.666… · 2^31 = 1431655765.33 → …765.
        assert_eq!(quantize_ratio(1.0, 1.0, 3.0), (1431655765, -1));
    }

    #[test]
    fn division_rounds_ties_to_even_and_carries() {
        // (2^53 + 1) / 1 is a tie between 2^53 and 2^53 + 2: even wins.
        let n = Dyadic {
            neg: false,
            m: (1 << 53) + 1,
            e: 0,
        };
        assert_eq!(f64_of(n.div(Dyadic::ONE).unwrap()), 9007199254740992.0);
        // (2^54 − 1) / 1 rounds up to 2^54 (a carry out of the top bit).
        let n = Dyadic {
            neg: false,
            m: (1 << 54) - 1,
            e: 0,
        };
        assert_eq!(f64_of(n.div(Dyadic::ONE).unwrap()), 18014398509481984.0);
        // A remainder below the round bit still breaks a tie upward.
        let third = Dyadic::ONE.div(Dyadic::int(3)).unwrap();
        assert_eq!(f64_of(third), 1.0 / 3.0);
    }

    #[test]
    fn softmax_multipliers_match_the_double_formulas() {
        for (beta, scale) in [
            (1.0f32, 0.1f32),
            (1.0, 1.0 / 256.0),
            (0.5, 0.0625),
            (1.0, 3.0e-5),
            (1.0, 100.0),
        ] {
            let real =
                (f64::from(beta) * f64::from(scale) * f64::from(1i32 << 26)).min(2147483647.0);
            let (m, s) = softmax_scaling(beta, scale, 5);
            assert_eq!((m, s), reference(real));
            let reverse = (1i64 << (31 - s).clamp(0, 62)) as f64 / f64::from(m);
            let want = (reverse > 0.0 && reverse < 1.0).then(|| reference(reverse));
            assert_eq!(reverse_scaling(m, s), want, "beta {beta} scale {scale}");
        }
        assert_eq!(
            softmax_scaling(1.0, f32::INFINITY, 5),
            reference(2147483647.0)
        );
    }

    #[test]
    fn truncation_saturates_like_as() {
        for v in [
            0.0f64, 0.75, -0.75, 1.5, -1.5, 32767.9, -32768.2, 3.0e9, -3.0e9, 1.0e-30,
        ] {
            let x = Dyadic::f32(v as f32).unwrap();
            assert_eq!(x.trunc_i32(), f64::from(v as f32) as i32, "{v}");
        }
    }

    proptest! {
        /// Any three floats (subnormals, huge and tiny scales, negative):
        /// the integer path gives the multiplier the double arithmetic does.
        #[test]
        fn ratio_of_any_floats_matches_double_arithmetic(a: u32, b: u32, c: u32) {
            let (a, b, c) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
            let want = reference(f64::from(a) * f64::from(b) / f64::from(c));
            prop_assert_eq!(quantize_ratio(a, b, c), want);
        }

        /// Scales as converters write them (around 1e-4 … 1): the common case,
        /// densely.
        #[test]
        fn ratio_of_typical_scales_matches(a in 1e-5f32..1.0, b in 1e-5f32..1.0, c in 1e-5f32..1.0) {
            let want = reference(f64::from(a) * f64::from(b) / f64::from(c));
            prop_assert_eq!(quantize_ratio(a, b, c), want);
        }

        /// Quotients of integers and powers of two (LOG_SOFTMAX's reverse
        /// multiplier) and comparisons agree with the doubles'.
        #[test]
        fn integer_quotients_and_order_match(k in 0i32..40, m in 1i64..(1 << 40), n in -(1i64 << 52)..(1 << 52)) {
            let q = Dyadic::pow2(k).div(Dyadic::int(m)).unwrap();
            let d = (1u64 << k) as f64 / m as f64;
            prop_assert_eq!(f64_of(q), d);
            prop_assert_eq!(q.quantize(), reference(d));
            prop_assert_eq!(q.cmp(Dyadic::int(n)), d.partial_cmp(&(n as f64)).unwrap());
            prop_assert_eq!(q.scaled(30).trunc_i32(), (d * pow2(30)) as i32);
        }
    }
}
