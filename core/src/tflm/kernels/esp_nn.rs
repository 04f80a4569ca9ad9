//! esp-tflite-micro's ESP-NN kernels (`tensorflow/lite/micro/kernels/esp_nn/`
//! of espressif/esp-tflite-micro 99f49e14) and the ESP-NN (espressif/esp-nn
//! d45b843c, 1.2.3) functions their Prepare calls: the columns the CONV_2D,
//! DEPTHWISE_CONV_2D and SOFTMAX rows point at. ESP-NN's ADD, MUL,
//! FULLY_CONNECTED and pooling kernels keep the reference Prepare, OpData and
//! checks (only Eval calls ESP-NN), so their rows carry [`super::ESP_SAME`].
//!
//! The ESP-NN buffer sizes are kept in one file, apart from the families',
//! as `docs/esp-nn.md` lists them: `esp_nn_get_conv_scratch_size`,
//! `esp_nn_get_depthwise_conv_scratch_size` and
//! `esp_nn_get_softmax_scratch_size`, per [`EspChip`] (ESP-NN's default
//! `CONFIG_NN_OPTIMIZED`: the ESP32-S3's own functions, or the generic `_opt`
//! ones every other chip gets, whose convolutions need no scratch).

use super::{Ctx, EspNn, Evidence, Prep, conv, softmax};
use crate::read::dtype::DType;
use crate::read::ops::OpOptions;
use crate::tflm::profile::EspChip;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::rank;
use microarena_image::geometry::{out_size, padding_before};

/// `esp_nn/conv.cc`: `NodeData` is `OpDataConv` (56) and `int buffer_idx`;
/// Prepare is the reference one plus ESP-NN's scratch for int8 inputs; the
/// checks are the reference ones.
pub(super) const CONV_2D: EspNn = EspNn {
    op_data: Some(Some(60)),
    prepare: Some(conv_prepare),
    checks: None,
    evidence: Evidence::Measured,
};

/// `esp_nn/depthwise_conv.cc`: the same `NodeData`; Prepare checks the ranks
/// before the types, and asks ESP-NN's depthwise scratch for int8 inputs.
pub(super) const DEPTHWISE_CONV_2D: EspNn = EspNn {
    op_data: Some(Some(60)),
    prepare: Some(depthwise_prepare),
    checks: Some(DEPTHWISE_CHECKS),
    evidence: Evidence::Measured,
};

/// `esp_nn/softmax.cc`: `NodeData` is `SoftmaxParams` (56, 8-aligned for its
/// `double`) and `int buffer_idx`, 64 with the tail padding.
pub(super) const SOFTMAX: EspNn = EspNn {
    op_data: Some(Some(64)),
    prepare: Some(softmax_prepare),
    checks: None,
    evidence: Evidence::Measured,
};

/// Purpose of ESP-NN's convolution scratch (`esp_nn_set_conv_scratch_buf`).
const CONV_SCRATCH: &str = "conv scratch (ESP-NN)";
/// Purpose of ESP-NN's depthwise scratch.
const DEPTHWISE_SCRATCH: &str = "depthwise scratch (ESP-NN)";
/// Purpose of ESP-NN's softmax scratch.
const SOFTMAX_SCRATCH: &str = "softmax scratch (ESP-NN)";

/// What `esp_nn/conv.cc` and `esp_nn/depthwise_conv.cc` hand ESP-NN's size
/// functions: the tensors' `data_dims_t` and the computed padding
/// (`OpDataConv::padding`); the chip's functions read them as `uint16_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EspConvShape {
    /// Input width, height, channels.
    pub input: (i64, i64, i64),
    /// Filter width, height.
    pub filter: (i64, i64),
    /// Output width, height, channels.
    pub output: (i64, i64, i64),
    /// Computed padding (width, height).
    pub pad: (i64, i64),
    /// Strides (width, height).
    pub stride: (i64, i64),
    /// Depthwise channel multiplier (`params.depth_multiplier`).
    pub ch_mult: i64,
}

/// A C `uint16_t` conversion, as the size functions store their arguments.
fn u16v(v: i64) -> i64 {
    v & 0xffff
}

/// `esp_nn_get_conv_scratch_size_esp32s3`; the generic `_opt` function returns 0.
pub fn conv_scratch(s: &EspConvShape, chip: EspChip) -> i64 {
    if chip == EspChip::Generic {
        return 0;
    }
    let (in_w, in_h, in_ch) = (u16v(s.input.0), u16v(s.input.1), u16v(s.input.2));
    let (f_w, f_h) = (u16v(s.filter.0), u16v(s.filter.1));
    let out_ch = u16v(s.output.2);
    let (pad_w, pad_h) = (u16v(s.pad.0), u16v(s.pad.1));
    let (st_w, st_h) = (u16v(s.stride.0), u16v(s.stride.1));
    let align_buf = 64;
    if f_w == 1 && f_h == 1 && pad_w == 0 && pad_h == 0 && st_w == 1 && st_h == 1 {
        let new_ch = (in_ch + 7) & !7;
        let transpose = if in_w * in_h < 8 { 0 } else { 2 * 8 * new_ch };
        let input = if in_ch % 8 != 0 {
            in_w * in_h * new_ch
        } else {
            0
        };
        return input + new_ch * out_ch + transpose + align_buf;
    }
    let filter_row = f_w * in_ch;
    let window = f_w * f_h * in_ch;
    if filter_row < 16 && window >= 16 {
        // im2col: filter sums, aligned filter copy, one column, alignment.
        let window16 = (window + 15) & !15;
        return out_ch * 4 + 16 + out_ch * window16 + 16 + window16 + align_buf;
    }
    let new_ch = (in_ch + 15) & !15;
    let input = if pad_w == 0 && pad_h == 0 {
        0
    } else {
        (in_w + 2 * pad_w) * (in_h + 2 * pad_h) * in_ch
    };
    let filter = f_w * f_h * new_ch * out_ch;
    let filter_alignment = (filter_row + 15) / 16 * 16 * f_h * out_ch;
    // `output_dims->width` is read as int32_t here, not narrowed.
    let pad_right = (s.output.0 * st_w + f_w - 1 - in_w).max(0);
    let pad_bottom = (s.output.1 * st_h + f_h - 1 - in_h).max(0);
    let boundary = if pad_right > 0 || pad_bottom > 0 {
        (in_w + pad_right) * (in_h + pad_bottom) * in_ch
    } else {
        0
    };
    input + filter + filter_alignment + boundary + align_buf + out_ch * 4
}

/// `esp_nn_get_depthwise_conv_scratch_size_esp32s3`; the generic `_opt` function
/// returns 0.
pub fn depthwise_scratch(s: &EspConvShape, chip: EspChip) -> i64 {
    if chip == EspChip::Generic {
        return 0;
    }
    let (in_w, in_h, ch) = (u16v(s.input.0), u16v(s.input.1), u16v(s.input.2));
    let (f_w, f_h) = (u16v(s.filter.0), u16v(s.filter.1));
    let (out_w, out_h) = (u16v(s.output.0), u16v(s.output.1));
    let (pad_w, pad_h) = (u16v(s.pad.0), u16v(s.pad.1));
    let (st_w, st_h) = (u16v(s.stride.0), u16v(s.stride.1));
    let mult = u16v(s.ch_mult);
    let filter_size = f_w * f_h * ch * mult;
    if mult == 1 && ch % 8 == 0 {
        if f_w == 3 && f_h == 3 {
            if ch % 16 == 0 {
                // The extra rows and columns may come out negative; only non-zero counts.
                let (pw, ph) = if pad_w != 0 || pad_h != 0 {
                    (pad_w * 2, pad_h * 2)
                } else {
                    (out_w * st_w + f_w - 1 - in_w, out_h * st_h + f_h - 1 - in_h)
                };
                if pw == 0 && ph == 0 {
                    return filter_size + 16;
                }
                let full = (in_w + pw) * (in_h + ph) * ch;
                if full <= 40 * 1024 {
                    return filter_size + full + 16;
                }
                return filter_size + (in_w + pw) * f_h * ch + 16;
            }
            if ch >= 12 {
                let new_ch = (ch + 15) & !15;
                let pw = pad_w * 2 + (out_w * st_w + 2 - in_w).max(0);
                let ph = pad_h * 2 + (out_h * st_h + 2 - in_h).max(0);
                return 9 * new_ch
                    + (in_w + pw) * (in_h + ph) * new_ch
                    + out_w * out_h * new_ch
                    + 64;
            }
            return 2 * (filter_size + in_w * in_h * ch) + 32;
        }
        let total = 2 * (filter_size + in_w * in_h * ch);
        if total <= 48 * 1024 {
            return total + 32;
        }
        return 2 * filter_size + 2 * in_w * f_h * ch + 32;
    }
    if mult == 1 && ch > 3 {
        let pc = (ch + 7) & !7;
        let align16 = |v: i64| (v + 15) & !15;
        let input_start = align16(f_w * f_h * pc * 2);
        let out_start = align16(input_start + in_w * in_h * pc * 2);
        let bias_start = align16(out_start + out_w * out_h * pc);
        return bias_start + 3 * pc * 4 + 16;
    }
    if mult % 4 == 0 {
        return 2 * (filter_size + in_w * in_h * ch) + 32;
    }
    32
}

/// `esp_nn_get_softmax_scratch_size`: one int32 per element of a row, on both
/// chips (`_esp32s3` and `_opt` agree).
pub fn softmax_scratch(width: i64) -> i64 {
    width * 4
}

/// The `data_dims_t` and padding `esp_nn/conv.cc` / `esp_nn/depthwise_conv.cc`
/// Prepare passes: input `[N, H, W, C]`, filter `[·, H, W, ·]`, output
/// `[N, H, W, C]`, and the padding `CalculateOpDataConv` computed.
fn shape(cx: &Ctx<'_>) -> EspConvShape {
    let dim = |t: usize, d: usize, input: bool| {
        let v = if input {
            cx.in_dim(t, d)
        } else {
            cx.out_dim(t, d)
        };
        i64::try_from(v).unwrap_or(i64::MAX)
    };
    let (padding, stride, dilation, ch_mult) = match cx.op.options {
        OpOptions::Conv(o) => (
            o.padding,
            (o.stride_w, o.stride_h),
            (o.dilation_w, o.dilation_h),
            o.depth_multiplier,
        ),
        _ => (Default::default(), (1, 1), (1, 1), 1),
    };
    let (in_w, in_h) = (dim(0, 2, true), dim(0, 1, true));
    let (f_w, f_h) = (dim(1, 2, true), dim(1, 1, true));
    // ComputePaddingHeightWidth: the padding from its own output size.
    let pad = |image: i64, filter: i64, stride: i32, dilation: i32| {
        let clamp = |v: i64| i32::try_from(v).unwrap_or(i32::MAX);
        let out = out_size(padding, clamp(image), clamp(filter), stride, dilation);
        padding_before(
            image,
            filter,
            i64::from(stride),
            i64::from(dilation),
            i64::from(out),
        )
    };
    EspConvShape {
        input: (in_w, in_h, dim(0, 3, true)),
        filter: (f_w, f_h),
        output: (dim(0, 2, false), dim(0, 1, false), dim(0, 3, false)),
        pad: (
            pad(in_w, f_w, stride.0, dilation.0),
            pad(in_h, f_h, stride.1, dilation.1),
        ),
        stride: (i64::from(stride.0), i64::from(stride.1)),
        ch_mult: i64::from(ch_mult),
    }
}

/// Requests `bytes` when ESP-NN asked for more than 0 (`scratch_buf_size > 0`).
fn request(p: &mut Prep, bytes: i64, purpose: &'static str) {
    if let Ok(b) = u64::try_from(bytes)
        && b > 0
    {
        p.scratch(b, purpose);
    }
}

/// `esp_nn/conv.cc` Prepare: the reference `ConvPrepare`'s steps, then, for an
/// int8 input (int8 or int4 filter), `esp_nn_get_conv_scratch_size`'s buffer.
fn conv_prepare(cx: &Ctx<'_>, chip: EspChip, p: &mut Prep) {
    conv::conv_prepare(cx, p);
    if cx.in_type(0) == Some(DType::I8) {
        request(p, conv_scratch(&shape(cx), chip), CONV_SCRATCH);
    }
}

/// `esp_nn/depthwise_conv.cc` Prepare: as the reference `DepthwiseConvPrepare`,
/// then `esp_nn_get_depthwise_conv_scratch_size`'s buffer for an int8 input.
fn depthwise_prepare(cx: &Ctx<'_>, chip: EspChip, p: &mut Prep) {
    conv::conv_prepare(cx, p);
    if cx.in_type(0) == Some(DType::I8) {
        request(p, depthwise_scratch(&shape(cx), chip), DEPTHWISE_SCRATCH);
    }
}

/// `esp_nn/softmax.cc` Prepare: the reference steps, then, for int8 in and out,
/// a row of int32 whose length it takes from `input->dims->data[1]` (the
/// second dimension, whatever the rank).
fn softmax_prepare(cx: &Ctx<'_>, _: EspChip, p: &mut Prep) {
    softmax::softmax_prepare(cx, p);
    if cx.in_type(0) == Some(DType::I8) && cx.out_type(0) == Some(DType::I8) {
        if cx.in_rank(0) < 2 {
            p.estimated("ESP-NN's softmax reads dims->data[1] of a 1-D input, past its shape");
        }
        let width = i64::try_from(cx.in_dim(0, 1)).unwrap_or(i64::MAX);
        request(p, softmax_scratch(width), SOFTMAX_SCRATCH);
    }
}

/// `esp_nn/depthwise_conv.cc` `Prepare`: input, filter and output 4-D first
/// (no words of its own), then the reference kernel's type checks.
const DEPTHWISE_CHECKS: &[Check] = &[
    rank(Input(0), 4, 4, None),
    rank(Input(1), 4, 4, None),
    rank(Output(0), 4, 4, None),
    conv::DEPTHWISE_CONV_2D[0],
    conv::DEPTHWISE_CONV_2D[1],
];

#[cfg(test)]
mod tests {
    use super::*;

    fn s(input: (i64, i64, i64), filter: (i64, i64), output: (i64, i64, i64)) -> EspConvShape {
        EspConvShape {
            input,
            filter,
            output,
            pad: (0, 0),
            stride: (1, 1),
            ch_mult: 1,
        }
    }

    #[test]
    fn generic_chips_ask_for_no_convolution_scratch() {
        let x = s((8, 8, 16), (3, 3), (6, 6, 16));
        assert_eq!(conv_scratch(&x, EspChip::Generic), 0);
        assert_eq!(depthwise_scratch(&x, EspChip::Generic), 0);
    }

    #[test]
    fn s3_conv_paths() {
        // 1×1, stride 1, no padding, 8×8×16 → 8 output channels: 16 channels are a
        // multiple of 8 (no input copy), 16·8 filter, 2·8·16 transpose, 64 margin.
        assert_eq!(
            conv_scratch(&s((8, 8, 16), (1, 1), (8, 8, 8)), EspChip::S3),
            128 + 256 + 64
        );
        // 3×3 over 3 channels: a row of 9 < 16 and a window of 27 ≥ 16 → im2col,
        // window 32: 8·4 + 16 + 8·32 + 16 + 32 + 64.
        assert_eq!(
            conv_scratch(&s((8, 8, 3), (3, 3), (6, 6, 8)), EspChip::S3),
            416
        );
    }
}
