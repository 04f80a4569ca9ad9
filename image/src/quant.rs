//! Quantization rules a kernel's Prepare checks and core's support check
//! states for `plan`, written once for both.

/// TFLM's `CheckedLog2`: `Some(n)` when `x` is within a factor 2^±0.001 of
/// `2^n` (the int16 LOGISTIC and TANH need power-of-two scales). TFLM takes
/// the fraction of `logf(x) / logf(2)`; this reads it from the float's
/// exponent and mantissa, which agrees except for a mantissa within float
/// rounding of 2^±0.001 itself.
pub fn checked_log2(x: f32) -> Option<i32> {
    if !(x.is_finite() && x > 0.0) {
        return None;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 23) & 0xff) as i32;
    if exp == 0 {
        // Subnormal: no scale a model carries.
        return None;
    }
    // x = m · 2^(exp − 127), m in [1, 2).
    let m = f32::from_bits((bits & 0x007f_ffff) | (127 << 23));
    // 2^0.001 and 2^0.999.
    const LOW: f32 = 1.000_693_4;
    const HIGH: f32 = 1.998_614;
    if m < LOW {
        Some(exp - 127)
    } else if m > HIGH {
        Some(exp - 126)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_two_and_near_misses() {
        assert_eq!(checked_log2(1.0 / 32768.0), Some(-15));
        assert_eq!(checked_log2(1.0 / 4096.0), Some(-12));
        assert_eq!(checked_log2(2.0), Some(1));
        // Just below a power of two rounds up to it.
        assert_eq!(checked_log2(0.999_9), Some(0));
        assert_eq!(checked_log2(3.0), None);
        assert_eq!(checked_log2(0.0), None);
        assert_eq!(checked_log2(-0.5), None);
    }
}
