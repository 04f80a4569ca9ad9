//! Convolutions: CONV_2D (`conv.cc`, `conv_common.cc`), DEPTHWISE_CONV_2D
//! (`depthwise_conv.cc`, `depthwise_conv_common.cc`), TRANSPOSE_CONV
//! (`transpose_conv.cc`), and the CMSIS-NN build's own three
//! (`cmsis_nn/conv.cc`, `cmsis_nn/depthwise_conv.cc`,
//! `cmsis_nn/transpose_conv.cc`) with CMSIS-NN's buffer sizes
//! (`docs/cmsis-nn.md`).

use super::{
    CmsisNn, Ctx, Evidence, Kernel, Prep, Refusal, abi, abi3, both, cmsis_nn_int16_zero_points,
    hybrid, kernel, prod, st,
};
use crate::read::dtype::DType::{
    self, Bool, F16, F32, F64, I4, I8, I16, I32, I64, U8, U16, U32, U64,
};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::shapes::{Reshaped, ShapeCx, ShapeFail};
use crate::read::ops::{OpOptions, PoolOptions};
use crate::tflm::profile::CpuClass;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, HYBRID, INPUT_TYPE, P, one_of, one_of_says, pairs, same};
use microarena_image::geometry::{out_size, padding_before};
use microarena_image::opcode as c;

/// `cmsis_nn/conv.cc` and `cmsis_nn/depthwise_conv.cc`: the same OpData
/// (OpDataConv, 56, + int buffer_idx), Prepare shape and checks (the
/// depthwise one checks exactly what the conv one does).
const CONV_CMSIS_NN: CmsisNn = CmsisNn {
    op_data: Some(Some(60)),
    prepare: Some(conv_prepare_cmsis_nn),
    checks: Some(CONV_2D_CMSIS_NN),
    evidence: Evidence::Measured,
};

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        builtin: both(st(28, 4)),
        builtin_name: "TfLiteConvParams",
        op_data: abi(Some(80), Some(56)),
        prepare: conv_prepare,
        checks: CONV_2D,
        shape: Some(window_rule),
        cmsis_nn: Some(CONV_CMSIS_NN),
        esp_nn: Some(super::esp_nn::CONV_2D),
        ..kernel(c::CONV_2D, "conv.cc, conv_common.cc")
    },
    Kernel {
        builtin: both(st(28, 4)),
        builtin_name: "TfLiteDepthwiseConvParams",
        op_data: abi(Some(80), Some(56)),
        prepare: conv_prepare,
        checks: DEPTHWISE_CONV_2D,
        shape: Some(window_rule),
        cmsis_nn: Some(CONV_CMSIS_NN),
        esp_nn: Some(super::esp_nn::DEPTHWISE_CONV_2D),
        ..kernel(
            c::DEPTHWISE_CONV_2D,
            "depthwise_conv.cc, depthwise_conv_common.cc",
        )
    },
    Kernel {
        builtin: abi3(st(20, 4), st(16, 4), st(20, 4)),
        builtin_name: "TfLiteTransposeConvParams",
        // OpData: ConvParams (56), three int (five with compression), two pointers.
        op_data: abi(Some(88), Some(72)),
        prepare: transpose_conv_prepare,
        checks: TRANSPOSE_CONV,
        cmsis_nn: Some(CmsisNn {
            // ConvParams (56), three int, two pointers.
            op_data: Some(Some(76)),
            prepare: Some(transpose_conv_prepare_cmsis_nn),
            checks: Some(TRANSPOSE_CONV_CMSIS_NN),
            evidence: Evidence::Measured,
        }),
        ..kernel(c::TRANSPOSE_CONV, "transpose_conv.cc")
    },
];

/// CONV_2D, DEPTHWISE_CONV_2D and the pools: the window's output size
/// (TFLM's `ComputeOutSize`); a pool whose window covered the whole feature
/// map (Keras GlobalAveragePooling) stays global, as the converter writes the
/// window at the map's size.
pub(super) fn window_rule(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let input_t = cx.input_t();
    if in0.len() != 4 {
        return Err(cx.fail(input_t, format!("expected NHWC, got {in0:?}")));
    }
    let mut new_window = None;
    let (padding, sw, sh, dw, dh, fw, fh, ch) = match &cx.op.options {
        OpOptions::Conv(c) => {
            let f = cx.shape(1).unwrap_or_default();
            if f.len() != 4 {
                return Err(cx.fail(cx.op.input(1).unwrap_or(0), "filter is not 4-D"));
            }
            let ch = if cx.op.opcode.0 == i32::from(c::CONV_2D) {
                f[0]
            } else {
                in0[3] * c.depth_multiplier.max(1)
            };
            (
                c.padding,
                c.stride_w,
                c.stride_h,
                c.dilation_w,
                c.dilation_h,
                f[2],
                f[1],
                ch,
            )
        }
        OpOptions::Pool(p) => {
            let before = cx.original_shape(input_t);
            if before.get(1..3) == Some(&[p.filter_h, p.filter_w][..]) {
                new_window = Some(OpOptions::Pool(PoolOptions {
                    filter_h: in0[1],
                    filter_w: in0[2],
                    ..*p
                }));
                (
                    p.padding, p.stride_w, p.stride_h, 1, 1, in0[2], in0[1], in0[3],
                )
            } else {
                (
                    p.padding, p.stride_w, p.stride_h, 1, 1, p.filter_w, p.filter_h, in0[3],
                )
            }
        }
        _ => return Err(cx.fail(cx.out(), "options missing")),
    };
    let oh = out_size(padding, in0[1], fh, sh, dh);
    let ow = out_size(padding, in0[2], fw, sw, dw);
    if oh <= 0 || ow <= 0 {
        return Err(cx.fail(input_t, format!("{in0:?} is smaller than the window")));
    }
    Ok(Reshaped {
        output: vec![in0[0], oh, ow, ch],
        follows: Vec::new(),
        options: new_window,
    })
}

/// The filter dimension that counts output channels.
fn channel_dim(cx: &Ctx<'_>) -> usize {
    if cx.op.opcode.0 == i32::from(c::DEPTHWISE_CONV_2D) {
        3
    } else {
        0
    }
}

/// `ConvPrepare` / `DepthwiseConvPrepare`: holds output, input and filter,
/// allocates the per-channel multipliers and shifts (for float models too),
/// then `CalculateOpData*` holds input, filter, bias and output again.
pub(super) fn conv_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    if hybrid(cx, 1) {
        p.refuse(Refusal::Hybrid);
    }
    let ch = cx.in_dim(1, channel_dim(cx));
    p.temp(cx.output(0)).temp_inputs(cx, &[0, 1]);
    p.persistent(4 * ch, "per-channel output multipliers")
        .persistent(4 * ch, "per-channel output shifts");
    p.temp_inputs(cx, &[0, 1, 2]).temp(cx.output(0));
    if cx.in_type(1) == Some(DType::I4) {
        p.scratch(cx.in_elems(1), "unpacked int4 filter");
    }
}

/// `TransposeConvPrepare` (input 0 output shape, 1 filter, 2 input, 3 bias).
fn transpose_conv_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    transpose_conv(cx, p, None);
}

/// `cmsis_nn/transpose_conv.cc` Prepare: as the reference one, with
/// CMSIS-NN's buffers for int8.
fn transpose_conv_prepare_cmsis_nn(cx: &Ctx<'_>, cpu: CpuClass, p: &mut Prep) {
    transpose_conv(cx, p, Some(cpu));
}

/// Output, input and filter; the per-channel arrays (float too); the
/// accumulators; then `CalculateOpData` holds the quantized operands again
/// and, for 16x8 with an int16 bias, asks for its int64 copy.
fn transpose_conv(cx: &Ctx<'_>, p: &mut Prep, cmsis_nn: Option<CpuClass>) {
    p.temp(cx.output(0)).temp_inputs(cx, &[2, 1]);
    let ch = cx.in_dim(1, 0);
    p.persistent(4 * ch, "per-channel output multipliers")
        .persistent(4 * ch, "per-channel output shifts");
    let input_type = cx.in_type(2);
    match (input_type, cmsis_nn) {
        (Some(DType::I8), None) => {
            p.scratch(4 * cx.out_elems(0), "int32 accumulators");
        }
        // Both requests sit inside TFLITE_DCHECK, which still runs them, even when a
        // size is 0.
        (Some(DType::I8), Some(cpu)) => {
            let stride = match cx.op.options {
                OpOptions::Conv(o) => (o.stride_h.max(1) as u64, o.stride_w.max(1) as u64),
                _ => (1, 1),
            };
            let (buf, reverse) = transpose_conv_s8_scratch(
                cx.in_dim(2, 2),
                cx.in_dim(2, 3),
                (cx.in_dim(1, 1), cx.in_dim(1, 2)),
                ch,
                stride,
                cpu,
            );
            p.scratch(buf, IM2COL)
                .scratch(reverse, "reversed filter (CMSIS-NN)");
        }
        (Some(DType::I16), cmsis) => {
            p.scratch(8 * cx.out_elems(0), "int64 accumulators");
            if cmsis.is_some() && cx.in_t(3).is_none() {
                p.refuse(Refusal::Crashes(
                    "CMSIS-NN's int16 TRANSPOSE_CONV reads the bias's type without checking there is a bias",
                ));
            }
        }
        _ => {}
    }
    if !input_type.is_some_and(DType::is_float) {
        p.temp_inputs(cx, &[2, 1, 3]).temp(cx.output(0));
        if input_type == Some(DType::I16) && cx.in_type(3) == Some(DType::I16) {
            p.scratch(8 * cx.in_elems(3), "int64 bias");
        }
    }
}

/// A CNN filter and its input as CMSIS-NN's `cmsis_nn_dims` and conv params see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvShape {
    /// Input batches (`input_dims.n`).
    pub batches: u64,
    /// Input height (`input_dims.h`).
    pub in_h: u64,
    /// Input width (`input_dims.w`).
    pub in_w: u64,
    /// Input channels (`input_dims.c`).
    pub in_channels: u64,
    /// Filter height.
    pub kh: u64,
    /// Filter width.
    pub kw: u64,
    /// The filter's own channel count (`filter_dims.c`; for depthwise, the output depth).
    pub filter_channels: u64,
    /// Output width (`output_dims.w`).
    pub out_w: u64,
    /// Output channels (`output_dims.c`).
    pub out_channels: u64,
    /// Stride (height, width).
    pub stride: (u64, u64),
    /// TFLM's padding before the first row and column (`ComputePaddingHeightWidth`).
    pub padding: (u64, u64),
    /// Dilation (height, width).
    pub dilation: (i32, i32),
}

fn align4(v: u64) -> u64 {
    v.div_ceil(4).saturating_mul(4)
}

/// `n` rounded up to whole MVE Q registers of `lanes` elements.
fn lanes(n: u64, lanes: u64) -> u64 {
    n.div_ceil(lanes).saturating_mul(lanes)
}

/// Purpose of the CMSIS-NN convolution buffer (`ctx` of `arm_convolve_wrapper_*`).
const IM2COL: &str = "im2col (CMSIS-NN)";
/// Purpose of the CMSIS-NN depthwise buffer (`ctx` of `arm_depthwise_conv_wrapper_*`).
const DEPTHWISE: &str = "depthwise buffer (CMSIS-NN)";

/// `CH_IN_BLOCK_MVE`: channels the MVE depthwise kernel processes per block.
const CH_IN_BLOCK_MVE: u64 = 124;

/// `arm_convolve_wrapper_s8_get_buffer_size`.
///
/// A 1×1 filter has zero padding under TFLM's SAME and VALID rules, so `arm_nn_is_convolve_1x1`
/// reduces to the filter size, dilation and channel equality; its buffer is 0 with GCC on every
/// class. Off MVE the 1×N path uses the general size (two int16 columns, 4-aligned); on MVE
/// the general size is four int8 columns in whole Q registers and the 1×N path has its own.
pub fn conv_s8_scratch(s: &ConvShape, cpu: CpuClass) -> u64 {
    let cols = prod(&[s.kh, s.kw, s.in_channels]);
    match cpu {
        _ if is_1x1(s) => 0,
        CpuClass::Mve if is_1_x_n(s) => conv_1_x_n_mve(s).unwrap_or(4 * lanes(cols, 16)),
        CpuClass::Mve => prod(&[4, lanes(cols, 16)]),
        CpuClass::Dsp | CpuClass::NoDsp => prod(&[4, align4(cols)]),
    }
}

/// `arm_convolve_wrapper_s4_get_buffer_size`: as int8 without the 4-alignment off MVE; on MVE
/// the int8 sizes, but a 1×N filter whose padding splits the row evenly needs none.
pub fn conv_s4_scratch(s: &ConvShape, cpu: CpuClass) -> u64 {
    let cols = prod(&[s.kh, s.kw, s.in_channels]);
    match cpu {
        _ if is_1x1(s) => 0,
        CpuClass::Mve if is_1_x_n(s) && conv_1_x_n_mve(s).is_some() => 0,
        CpuClass::Mve => prod(&[4, lanes(cols, 16)]),
        CpuClass::Dsp | CpuClass::NoDsp => prod(&[4, cols]),
    }
}

/// `arm_convolve_wrapper_s16_get_buffer_size`: no 1×1 branch; on MVE four int16 columns in
/// whole Q registers (8 lanes).
pub fn conv_s16_scratch(s: &ConvShape, cpu: CpuClass) -> u64 {
    let cols = prod(&[s.in_channels, s.kh, s.kw]);
    match cpu {
        CpuClass::Mve => prod(&[8, lanes(cols, 8)]),
        CpuClass::Dsp | CpuClass::NoDsp => prod(&[4, cols]),
    }
}

fn is_1x1(s: &ConvShape) -> bool {
    s.kh == 1 && s.kw == 1 && s.dilation == (1, 1) && s.in_channels == s.filter_channels
}

/// `arm_nn_is_convolve_1_x_n`.
fn is_1_x_n(s: &ConvShape) -> bool {
    s.in_h == 1
        && s.dilation.1 == 1
        && s.kh == 1
        && s.stride.1.saturating_mul(s.in_channels).is_multiple_of(4)
        && s.in_channels == s.filter_channels
}

/// `arm_convolve_1_x_n_s8_get_buffer_size_mve`: the row's left-padded, unpadded and
/// right-padded output columns; `None` when they do not add up to the output width (the
/// source then falls back to the general size). C's truncating `/` and `%` on purpose: the
/// total padding may be negative.
fn conv_1_x_n_mve(s: &ConvShape) -> Option<u64> {
    let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let (in_x, pad_x, k_x, out_x, stride_x, c) = (
        i(s.in_w),
        i(s.padding.1),
        i(s.kw),
        i(s.out_w),
        i(s.stride.1).max(1),
        i(s.in_channels),
    );
    let total_pad = (out_x - 1)
        .saturating_mul(stride_x)
        .saturating_add(k_x)
        .saturating_sub(in_x);
    let asym = total_pad % 2;
    let right = if pad_x + asym != 0 {
        ((pad_x + asym + stride_x - 1) / stride_x).max(1)
    } else {
        0
    };
    let left = if pad_x != 0 {
        ((pad_x + stride_x - 1) / stride_x).max(1)
    } else {
        0
    };
    let unpadded = (out_x - (right + left)).max(0);
    if right + unpadded + left != out_x {
        return None;
    }
    let pad_left = pad_x.saturating_mul(c);
    let pad_right = if asym != 0 {
        right.saturating_mul(c)
    } else {
        pad_left
    };
    let left_elems = k_x.saturating_mul(c);
    let size = (left_elems + pad_left).max(left_elems - c + pad_right);
    Some(u64::try_from(size).unwrap_or(0))
}

/// `arm_depthwise_conv_wrapper_s8_get_buffer_size`. Off MVE only the channel-multiplier-1,
/// single-batch, undilated path has a buffer (DSP: one int16 column); within it a 3×3 filter
/// (whose SAME or VALID padding is at most 1) takes the 3×3 kernel, which needs none. On MVE
/// that path always has one (`CH_IN_BLOCK_MVE` channels, four columns), and a single input
/// channel with several outputs runs as a regular convolution over the filter's copy.
pub fn depthwise_s8_scratch(s: &ConvShape, cpu: CpuClass) -> u64 {
    if cpu == CpuClass::Mve && s.in_channels == 1 && s.out_channels > 1 {
        // The depthwise filter (1, KH, KW, C_out) as a conv filter (C_out, KH, KW, 1).
        let as_conv = ConvShape {
            filter_channels: 1,
            ..*s
        };
        return conv_s8_scratch(&as_conv, cpu).saturating_add(prod(&[s.out_channels, s.kh, s.kw]));
    }
    if !dw_opt_path(s) {
        return 0;
    }
    match cpu {
        CpuClass::Mve => prod(&[4, CH_IN_BLOCK_MVE, s.kw, s.kh]),
        _ if s.kh == 3 && s.kw == 3 => 0,
        CpuClass::Dsp => prod(&[s.in_channels, s.kh, s.kw, 2]),
        CpuClass::NoDsp => 0,
    }
}

/// `arm_depthwise_conv_wrapper_s4_get_buffer_size`: no 3×3 exception, the DSP size on every
/// class without MVE and the int8 MVE size with it.
pub fn depthwise_s4_scratch(s: &ConvShape, cpu: CpuClass) -> u64 {
    match cpu {
        _ if !dw_opt_path(s) => 0,
        CpuClass::Mve => prod(&[4, CH_IN_BLOCK_MVE, s.kw, s.kh]),
        CpuClass::Dsp | CpuClass::NoDsp => prod(&[s.in_channels, s.kh, s.kw, 2]),
    }
}

fn dw_opt_path(s: &ConvShape) -> bool {
    s.in_channels == s.out_channels && s.batches == 1 && s.dilation == (1, 1)
}

/// `arm_transpose_conv_s8_get_buffer_size` and `..._get_reverse_conv_buffer_size`, for input
/// `(W, C_in)`, filter `(KH, KW)`, `C_out` and strides `(h, w)`: with strides ≤ 2 and more
/// than 16 input channels (`REVERSE_TCOL_EFFICIENT_THRESHOLD`) the transpose conv runs as a
/// conv over the stride-upsampled input (its im2col size, plus the reversed filter); otherwise
/// one int32 accumulator window. The width term's `max(KW, stride_h)` is as the source has it.
pub fn transpose_conv_s8_scratch(
    in_w: u64,
    in_c: u64,
    k: (u64, u64),
    out_c: u64,
    stride: (u64, u64),
    cpu: CpuClass,
) -> (u64, u64) {
    let (kh, kw) = k;
    let (sh, sw) = stride;
    if sh <= 2 && sw <= 2 && in_c > 16 {
        let cols = prod(&[kh, kw, in_c]);
        let im2col = match cpu {
            CpuClass::Mve => prod(&[4, lanes(cols, 16)]),
            CpuClass::Dsp | CpuClass::NoDsp => prod(&[4, align4(cols)]),
        };
        (im2col, prod(&[in_c, kw, kh, out_c]))
    } else {
        let row = prod(&[in_w.saturating_sub(1), sw]).saturating_add(kw.max(sh));
        (prod(&[row, out_c, kh.max(sh), 4]), 0)
    }
}

/// `cmsis_nn/conv.cc` / `cmsis_nn/depthwise_conv.cc` Prepare: input, filter
/// and output; per-channel arrays only for quantized inputs (the reference
/// kernels allocate them for float too); then `CalculateOpData*` holds input,
/// filter, bias and output again; then the CMSIS-NN buffer.
fn conv_prepare_cmsis_nn(cx: &Ctx<'_>, cpu: CpuClass, p: &mut Prep) {
    if hybrid(cx, 1) {
        p.refuse(Refusal::Hybrid);
    }
    cmsis_nn_int16_zero_points(cx, p);
    let depthwise = channel_dim(cx) == 3;
    let dilation = match cx.op.options {
        OpOptions::Conv(o) => (o.dilation_h, o.dilation_w),
        _ => (1, 1),
    };
    let stride = match cx.op.options {
        OpOptions::Conv(o) => (o.stride_h.max(1) as u64, o.stride_w.max(1) as u64),
        _ => (1, 1),
    };
    let (in_h, in_w) = (cx.in_dim(0, 1), cx.in_dim(0, 2));
    let (kh, kw) = (cx.in_dim(1, 1), cx.in_dim(1, 2));
    let (out_h, out_w) = (cx.out_dim(0, 1), cx.out_dim(0, 2));
    let pad = |image: u64, filter: u64, stride: u64, dilation: i32, out: u64| {
        let i = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        padding_before(i(image), i(filter), i(stride), i64::from(dilation), i(out)).max(0) as u64
    };
    let shape = ConvShape {
        batches: cx.in_dim(0, 0),
        in_h,
        in_w,
        in_channels: cx.in_dim(0, 3),
        kh,
        kw,
        filter_channels: cx.in_dim(1, 3),
        out_w,
        out_channels: cx.out_dim(0, 3),
        stride,
        padding: (
            pad(in_h, kh, stride.0, dilation.0, out_h),
            pad(in_w, kw, stride.1, dilation.1, out_w),
        ),
        dilation,
    };
    // TFLM's depthwise Prepare leaves `dw_conv_params.stride` unset; CMSIS-NN's MVE
    // single-input-channel path reads it only for a one-row input with a one-row filter.
    if depthwise
        && cpu == CpuClass::Mve
        && shape.in_channels == 1
        && shape.out_channels > 1
        && in_h == 1
        && kh == 1
        && !is_1x1(&ConvShape {
            filter_channels: 1,
            ..shape
        })
    {
        p.estimated("CMSIS-NN's MVE depthwise buffer for a 1-row input reads a stride TFLM leaves uninitialised");
    }
    p.temp_inputs(cx, &[0, 1]).temp(cx.output(0));
    if matches!(cx.in_type(0), Some(DType::I8 | DType::I16)) {
        let ch = cx.in_dim(1, channel_dim(cx));
        p.persistent(4 * ch, "per-channel output multipliers")
            .persistent(4 * ch, "per-channel output shifts");
    }
    p.temp_inputs(cx, &[0, 1, 2]).temp(cx.output(0));
    let (bytes, purpose) = match (cx.in_type(0), cx.in_type(1), depthwise) {
        (Some(DType::I8), Some(DType::I8), false) => (conv_s8_scratch(&shape, cpu), IM2COL),
        (Some(DType::I8), Some(DType::I4), false) => (conv_s4_scratch(&shape, cpu), IM2COL),
        // conv.cc reads the bias through AllocateTempOutputTensor (output 2, never
        // present), so it always sees "no bias" and asks the int16 size.
        (Some(DType::I16), _, false) => (conv_s16_scratch(&shape, cpu), IM2COL),
        (Some(DType::I8), Some(DType::I8), true) => (depthwise_s8_scratch(&shape, cpu), DEPTHWISE),
        (Some(DType::I8), Some(DType::I4), true) => (depthwise_s4_scratch(&shape, cpu), DEPTHWISE),
        _ => (0, IM2COL),
    };
    if bytes > 0 {
        p.scratch(bytes, purpose);
    }
}

/// Input/filter of one type, for every type, plus int16/int8 (and int8/int4
/// where `INT4` is appended) — the reference TRANSPOSE_CONV and
/// DEPTHWISE_CONV_2D Prepare.
const EQUAL_OR_I16_I8: &[&[DType]] = &[
    &[F32, F32],
    &[F16, F16],
    &[F64, F64],
    &[I4, I4],
    &[I8, I8],
    &[I16, I16],
    &[I32, I32],
    &[I64, I64],
    &[U8, U8],
    &[U16, U16],
    &[U32, U32],
    &[U64, U64],
    &[Bool, Bool],
    &[I16, I8],
];

/// `conv_common.cc` `ConvPrepare`: input type = output type, then the
/// (input, filter) pair, else "Hybrid" — uint8 included.
const CONV_2D: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    pairs(
        &[Input(0), Input(1)],
        &[&[F32, F32], &[I16, I8], &[I8, I4], &[I8, I8]],
        P,
        HYBRID,
    ),
];

/// `cmsis_nn/conv.cc` and `cmsis_nn/depthwise_conv.cc` `Prepare`: after input
/// type = output type, the input type is checked on its own, before the pair.
const CONV_2D_CMSIS_NN: &[Check] = &[
    CONV_2D[0],
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    CONV_2D[1],
];

/// `depthwise_conv_common.cc` `DepthwiseConvPrepare`: the filter may have the
/// input's type (any type, so uint8/uint8 passes: `PopulateConvolutionQuantizationParams`
/// still quantizes uint8 per tensor), or int8/int4, int16/int8; `depthwise_conv.cc`
/// `Eval` then runs float32, int8 (int4 or int8 filter) and int16 (int8 filter) only.
pub(super) const DEPTHWISE_CONV_2D: &[Check] = &[
    pairs(
        &[Input(0), Input(1)],
        &[
            &[F32, F32],
            &[F16, F16],
            &[F64, F64],
            &[I4, I4],
            &[I8, I8],
            &[I16, I16],
            &[I32, I32],
            &[I64, I64],
            &[U8, U8],
            &[U16, U16],
            &[U32, U32],
            &[U64, U64],
            &[Bool, Bool],
            &[I8, I4],
            &[I16, I8],
        ],
        P,
        HYBRID,
    ),
    pairs(
        &[Input(0), Input(1)],
        &[&[F32, F32], &[I8, I4], &[I8, I8], &[I16, I8]],
        E,
        None,
    ),
];

/// `transpose_conv.cc` `TransposeConvPrepare` (input is input 2, filter input
/// 1): the filter has the input's type or is int8 under an int16 input
/// ("Hybrid …"); Eval wants input type = output type, then float32, int8, int16.
const TRANSPOSE_CONV: &[Check] = &[
    pairs(&[Input(2), Input(1)], EQUAL_OR_I16_I8, P, HYBRID),
    same(&[Input(2), Output(0)], E),
    one_of(Input(2), &[F32, I8, I16], E),
];

/// `cmsis_nn/transpose_conv.cc` `Prepare`: input = output type, the input type
/// alone, then the pair.
const TRANSPOSE_CONV_CMSIS_NN: &[Check] = &[
    same(&[Input(2), Output(0)], P),
    one_of_says(Input(2), &[F32, I16, I8], P, INPUT_TYPE),
    pairs(
        &[Input(2), Input(1)],
        &[&[F32, F32], &[I16, I8], &[I8, I8]],
        P,
        HYBRID,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use CpuClass::{Dsp, Mve, NoDsp};

    fn shape(in_c: u64, k: (u64, u64), filter_c: u64, out_c: u64) -> ConvShape {
        ConvShape {
            batches: 1,
            in_h: 8,
            in_w: 8,
            in_channels: in_c,
            kh: k.0,
            kw: k.1,
            filter_channels: filter_c,
            out_w: 8,
            out_channels: out_c,
            stride: (1, 1),
            padding: ((k.0 - 1) / 2, (k.1 - 1) / 2),
            dilation: (1, 1),
        }
    }

    #[test]
    fn conv_rules() {
        // 3×3×3 = 27 columns → 28 → 2 columns of int16: 112.
        assert_eq!(conv_s8_scratch(&shape(3, (3, 3), 3, 8), Dsp), 112);
        assert_eq!(conv_s4_scratch(&shape(3, (3, 3), 3, 8), Dsp), 108);
        assert_eq!(conv_s8_scratch(&shape(16, (1, 1), 16, 8), Dsp), 0);
        // Grouped 1×1 (filter has fewer channels than the input): im2col of the input depth.
        assert_eq!(conv_s8_scratch(&shape(16, (1, 1), 8, 8), Dsp), 64);
        assert_eq!(conv_s16_scratch(&shape(16, (1, 1), 16, 8), Dsp), 64);
    }

    #[test]
    fn conv_rules_on_mve() {
        // 27 columns → two Q registers of 16 int8 → 4 buffers × 32 = 128.
        assert_eq!(conv_s8_scratch(&shape(3, (3, 3), 3, 8), Mve), 128);
        assert_eq!(conv_s4_scratch(&shape(3, (3, 3), 3, 8), Mve), 128);
        assert_eq!(conv_s8_scratch(&shape(16, (1, 1), 16, 8), Mve), 0);
        // int16: 16 columns → two Q registers of 8 int16 → 4 × 16 × 2 B = 128.
        assert_eq!(conv_s16_scratch(&shape(16, (1, 1), 16, 8), Mve), 128);
        // 1×N: one input row of 8 × 4 channels, a 1×3 filter, SAME, stride 1: padding 1 on each
        // side, so max(3·4 + 1·4, 2·4 + 1·4) = 16.
        let row = ConvShape {
            in_h: 1,
            ..shape(4, (1, 3), 4, 8)
        };
        assert_eq!(conv_s8_scratch(&row, Mve), 16);
        // The same row on the DSP path: the general size, 12 columns → 2·12·2 = 48.
        assert_eq!(conv_s8_scratch(&row, Dsp), 48);
        // An int4 filter on that row needs nothing on MVE.
        assert_eq!(conv_s4_scratch(&row, Mve), 0);
    }

    #[test]
    fn transpose_conv_rules() {
        // 32 input channels, stride 2: reverse conv; 3×3×32 = 288 columns → 2·288·2 = 1152,
        // reversed filter 32·3·3·8 = 2304.
        assert_eq!(
            transpose_conv_s8_scratch(4, 32, (3, 3), 8, (2, 2), Dsp),
            (1152, 2304)
        );
        // MVE: 288 columns are 18 whole Q registers → 4 · 288 = 1152 as well; 3×3×20 = 180 →
        // 192 → 768 where the DSP size is 4 · 180 = 720.
        assert_eq!(
            transpose_conv_s8_scratch(4, 32, (3, 3), 8, (2, 2), Mve),
            (1152, 2304)
        );
        assert_eq!(
            transpose_conv_s8_scratch(4, 20, (3, 3), 8, (2, 2), Mve).0,
            768
        );
        assert_eq!(
            transpose_conv_s8_scratch(4, 20, (3, 3), 8, (2, 2), Dsp).0,
            720
        );
        // 8 input channels: ((4−1)·2 + max(3, 2))·8 = 72 per row, max(3, 2) rows, int32.
        assert_eq!(
            transpose_conv_s8_scratch(4, 8, (3, 3), 8, (2, 2), Dsp),
            (72 * 3 * 4, 0)
        );
    }

    #[test]
    fn depthwise_rules() {
        let s = shape(8, (5, 5), 8, 8);
        assert_eq!(depthwise_s8_scratch(&s, Dsp), 400);
        assert_eq!(depthwise_s8_scratch(&s, NoDsp), 0);
        assert_eq!(depthwise_s4_scratch(&s, Dsp), 400);
        assert_eq!(depthwise_s8_scratch(&shape(8, (3, 3), 8, 8), Dsp), 0);
        assert_eq!(depthwise_s8_scratch(&shape(1, (5, 5), 8, 8), Dsp), 0);
    }

    #[test]
    fn depthwise_rules_on_mve() {
        // 124 channels per block, four columns of the 3×3 window: 4464, whatever the depth,
        // and for 3×3 too (no 3×3 kernel on MVE).
        assert_eq!(depthwise_s8_scratch(&shape(8, (3, 3), 8, 8), Mve), 4464);
        assert_eq!(
            depthwise_s8_scratch(&shape(512, (3, 3), 512, 512), Mve),
            4464
        );
        assert_eq!(depthwise_s4_scratch(&shape(8, (5, 5), 8, 8), Mve), 12400);
        // One input channel, eight outputs: a conv with a 5×5×1 filter (25 columns → 32 →
        // 4 · 32 = 128) plus the filter's copy, 8 · 25 = 200.
        assert_eq!(depthwise_s8_scratch(&shape(1, (5, 5), 8, 8), Mve), 328);
        // Channel multiplier 2 with several input channels: no buffer on any class.
        assert_eq!(depthwise_s8_scratch(&shape(4, (3, 3), 8, 8), Mve), 0);
    }
}
