//! Fused activations: the bounds Prepare computes from an op's activation
//! code (TFLM's `CalculateActivationRange*`) and the float clamp Eval applies.

use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// `std::min(std::max(x, lo), hi)` as TFLM's `ActivationFunctionWithMinMax` does it.
#[inline]
pub(crate) fn act_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if hi < x { hi } else { x }
}

/// Activation bounds for float kernels.
pub(crate) fn act_range_f32(code: u8) -> Option<(f32, f32)> {
    match code {
        0 => Some((f32::MIN, f32::MAX)),
        1 => Some((0.0, f32::MAX)),
        2 => Some((-1.0, 1.0)),
        3 => Some((0.0, 6.0)),
        _ => None,
    }
}

/// TFLM `CalculateActivationRangeQuantized` for int8.
pub(crate) fn act_range_i8(code: u8, out: &TensorInfo) -> Option<(i32, i32)> {
    act_range_int(code, out, -128, 127)
}

/// TFLM `CalculateActivationRangeQuantized` for an integer output whose type
/// spans `lo..=hi`.
pub(crate) fn act_range_int(code: u8, out: &TensorInfo, lo: i32, hi: i32) -> Option<(i32, i32)> {
    let q = |f: f32| out.zero_point.saturating_add(fx::round_f32(f / out.scale));
    match code {
        0 => Some((lo, hi)),
        1 => Some((lo.max(q(0.0)), hi)),
        2 => Some((lo.max(q(-1.0)), hi.min(q(1.0)))),
        3 => Some((lo.max(q(0.0)), hi.min(q(6.0)))),
        _ => None,
    }
}
