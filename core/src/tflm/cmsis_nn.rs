//! Prepare of TFLM's CMSIS-NN kernels (`tensorflow/lite/micro/kernels/cmsis_nn/`, TFLM
//! 90b983c2, CMSIS-NN 4ab83cc3, GCC): which persistent buffers and scratch requests each
//! one makes, per [`CpuClass`]. The rules and the source file of each are in
//! `docs/cmsis-nn.md`; OpData sizes are profile rows, not here.
//!
//! Only kernels whose Prepare differs from the reference kernel's are modelled here;
//! [`prepare`] returns `None` for the rest (SVDF, SOFTMAX and the elementwise kernels
//! allocate what the reference kernels allocate).

use alloc::vec::Vec;

use crate::read::dtype::DType;
use crate::read::model::{Model, Operator};
use crate::read::ops::{BuiltinOp, OpOptions};
use crate::tflm::kernel::PrepareStep;
use crate::tflm::profile::CpuClass;

/// A CNN filter and its input as CMSIS-NN's `cmsis_nn_dims` see them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvShape {
    /// Input batches (`input_dims.n`).
    pub batches: u64,
    /// Input channels (`input_dims.c`).
    pub in_channels: u64,
    /// Filter height and width.
    pub kh: u64,
    /// Filter width.
    pub kw: u64,
    /// The filter's own channel count (`filter_dims.c`; for depthwise, the output depth).
    pub filter_channels: u64,
    /// Output channels (`output_dims.c`).
    pub out_channels: u64,
    /// Dilation (height, width).
    pub dilation: (i32, i32),
}

fn align4(v: u64) -> u64 {
    v.div_ceil(4) * 4
}

/// Purpose of the CMSIS-NN convolution buffer (`ctx` of `arm_convolve_wrapper_*`).
const IM2COL: &str = "im2col (CMSIS-NN)";
/// Purpose of the CMSIS-NN depthwise buffer (`ctx` of `arm_depthwise_conv_wrapper_*`).
const DEPTHWISE: &str = "depthwise buffer (CMSIS-NN)";

/// `arm_convolve_wrapper_s8_get_buffer_size` (GCC, no DSP or DSP: the branches agree).
///
/// A 1×1 filter has zero padding under TFLM's SAME and VALID rules, so `arm_nn_is_convolve_1x1`
/// reduces to the filter size, dilation and channel equality. Its fast (stride 1) path needs
/// a buffer only with Arm Compiler 6; the 1×N path uses the general size off MVE.
pub fn conv_s8_scratch(s: &ConvShape) -> u64 {
    if is_1x1(s) {
        0
    } else {
        2 * align4(s.kh * s.kw * s.in_channels) * 2
    }
}

/// `arm_convolve_wrapper_s4_get_buffer_size`: as int8, without the 4-alignment.
pub fn conv_s4_scratch(s: &ConvShape) -> u64 {
    if is_1x1(s) {
        0
    } else {
        2 * s.kh * s.kw * s.in_channels * 2
    }
}

/// `arm_convolve_wrapper_s16_get_buffer_size`: no 1×1 branch.
pub fn conv_s16_scratch(s: &ConvShape) -> u64 {
    2 * s.in_channels * s.kh * s.kw * 2
}

fn is_1x1(s: &ConvShape) -> bool {
    s.kh == 1 && s.kw == 1 && s.dilation == (1, 1) && s.in_channels == s.filter_channels
}

/// `arm_depthwise_conv_wrapper_s8_get_buffer_size`: only the channel-multiplier-1,
/// single-batch, undilated path has a buffer; within it a 3×3 filter (whose SAME or VALID
/// padding is at most 1) takes the 3×3 kernel, which needs none.
pub fn depthwise_s8_scratch(s: &ConvShape, cpu: CpuClass) -> u64 {
    if !dw_opt_path(s) || (s.kh == 3 && s.kw == 3) {
        return 0;
    }
    match cpu {
        CpuClass::Dsp => s.in_channels * s.kh * s.kw * 2,
        CpuClass::NoDsp => 0,
    }
}

/// `arm_depthwise_conv_wrapper_s4_get_buffer_size`: no 3×3 exception, and the DSP size
/// on every class without MVE.
pub fn depthwise_s4_scratch(s: &ConvShape) -> u64 {
    if dw_opt_path(s) {
        s.in_channels * s.kh * s.kw * 2
    } else {
        0
    }
}

fn dw_opt_path(s: &ConvShape) -> bool {
    s.in_channels == s.out_channels && s.batches == 1 && s.dilation == (1, 1)
}

/// `arm_avgpool_s8/s16_get_buffer_size`: one int32 accumulator per channel with DSP.
pub fn avgpool_scratch(channels: u64, cpu: CpuClass) -> u64 {
    match cpu {
        CpuClass::Dsp => 4 * channels,
        CpuClass::NoDsp => 0,
    }
}

/// `arm_transpose_conv_s8_get_buffer_size` and `..._get_reverse_conv_buffer_size` off MVE,
/// for input `(W, C_in)`, filter `(KH, KW)`, `C_out` and strides `(h, w)`: with strides ≤ 2 and
/// more than 16 input channels (`REVERSE_TCOL_EFFICIENT_THRESHOLD`) the transpose conv runs as a
/// conv over the stride-upsampled input (its im2col size, plus the reversed filter); otherwise
/// one int32 accumulator window. The width term's `max(KW, stride_h)` is as the source has it.
pub fn transpose_conv_s8_scratch(
    in_w: u64,
    in_c: u64,
    k: (u64, u64),
    out_c: u64,
    stride: (u64, u64),
) -> (u64, u64) {
    let (kh, kw) = k;
    let (sh, sw) = stride;
    if sh <= 2 && sw <= 2 && in_c > 16 {
        (2 * align4(kh * kw * in_c) * 2, in_c * kw * kh * out_c)
    } else {
        let buf_x = (in_w.saturating_sub(1) * sw + kw.max(sh)) * out_c;
        (buf_x * kh.max(sh) * 4, 0)
    }
}

/// Why a CMSIS-NN kernel's figures are not exact, when the sources leave one open.
pub fn unprobed(op: BuiltinOp) -> Option<&'static str> {
    (op == BuiltinOp::TRANSPOSE_CONV).then_some(
        "the CMSIS-NN TRANSPOSE_CONV OpData was never probed; the reference kernel's size is used",
    )
}

/// The Prepare steps of `op` under CMSIS-NN, or `None` when its kernel allocates what the
/// reference kernel does.
pub fn prepare(
    model: &Model<'_>,
    g: usize,
    op: &Operator<'_>,
    cpu: CpuClass,
) -> Option<Vec<PrepareStep>> {
    let tensor = |i: Option<usize>| i.and_then(|t| model.tensor(g, t));
    let dtype_of = |i: Option<usize>| tensor(i).map(|t| t.dtype);
    let dim = |i: Option<usize>, d: usize| {
        tensor(i)
            .and_then(|t| t.dim(d))
            .map_or(0, |v| v.max(0) as u64)
    };
    let last_dim = |i: Option<usize>| {
        tensor(i)
            .and_then(|t| t.shape.last().copied())
            .map_or(0, |v| v.max(0) as u64)
    };
    let temps = |list: &[Option<usize>]| -> Vec<PrepareStep> {
        list.iter()
            .flatten()
            .map(|&t| PrepareStep::Temp(t))
            .collect()
    };
    let quantized = matches!(dtype_of(op.input(0)), Some(DType::I8 | DType::I16));

    use BuiltinOp as B;
    match op.opcode {
        B::CONV_2D | B::DEPTHWISE_CONV_2D => {
            let depthwise = op.opcode == B::DEPTHWISE_CONV_2D;
            let (input, filter, bias, output) =
                (op.input(0), op.input(1), op.input(2), op.output(0));
            let dilation = match op.options {
                OpOptions::Conv(o) => (o.dilation_h, o.dilation_w),
                _ => (1, 1),
            };
            let shape = ConvShape {
                batches: dim(input, 0),
                in_channels: dim(input, 3),
                kh: dim(filter, 1),
                kw: dim(filter, 2),
                filter_channels: dim(filter, 3),
                out_channels: dim(output, 3),
                dilation,
            };
            // Prepare holds input, filter and output; per-channel arrays only for
            // quantized inputs (the reference kernels allocate them for float too); then
            // CalculateOpData* holds input, filter, bias and output again.
            let mut steps = temps(&[input, filter, output]);
            if quantized {
                let c = dim(filter, if depthwise { 3 } else { 0 });
                steps.push(PrepareStep::Persistent(4 * c));
                steps.push(PrepareStep::Persistent(4 * c));
            }
            steps.extend(temps(&[input, filter, bias, output]));
            let filter_type = dtype_of(filter);
            let (scratch, purpose) = match (dtype_of(input), filter_type, depthwise) {
                (Some(DType::I8), Some(DType::I8), false) => (conv_s8_scratch(&shape), IM2COL),
                (Some(DType::I8), Some(DType::I4), false) => (conv_s4_scratch(&shape), IM2COL),
                // conv.cc reads the bias through AllocateTempOutputTensor (output 2, never
                // present), so it always sees "no bias" and asks the int16 size.
                (Some(DType::I16), _, false) => (conv_s16_scratch(&shape), IM2COL),
                (Some(DType::I8), Some(DType::I8), true) => {
                    (depthwise_s8_scratch(&shape, cpu), DEPTHWISE)
                }
                (Some(DType::I8), Some(DType::I4), true) => {
                    (depthwise_s4_scratch(&shape), DEPTHWISE)
                }
                _ => (0, IM2COL),
            };
            if scratch > 0 {
                steps.push(PrepareStep::scratch(scratch, purpose));
            }
            Some(steps)
        }
        B::TRANSPOSE_CONV => {
            // Inputs: 0 output shape, 1 filter (OHWI), 2 input, 3 bias.
            let (filter, input, bias, output) =
                (op.input(1), op.input(2), op.input(3), op.output(0));
            let mut steps = temps(&[output, input, filter]);
            let c = dim(filter, 0);
            steps.push(PrepareStep::Persistent(4 * c));
            steps.push(PrepareStep::Persistent(4 * c));
            let stride = match op.options {
                OpOptions::Conv(o) => (o.stride_h.max(1) as u64, o.stride_w.max(1) as u64),
                _ => (1, 1),
            };
            let input_type = dtype_of(input);
            match input_type {
                // Both requests sit inside TFLITE_DCHECK, which still runs them (DCHECKs are on
                // in TFLM's default build), even when a size is 0.
                Some(DType::I8) => {
                    let (buf, reverse) = transpose_conv_s8_scratch(
                        dim(input, 2),
                        dim(input, 3),
                        (dim(filter, 1), dim(filter, 2)),
                        c,
                        stride,
                    );
                    steps.push(PrepareStep::scratch(buf, "im2col (CMSIS-NN)"));
                    steps.push(PrepareStep::scratch(reverse, "reversed filter (CMSIS-NN)"));
                }
                Some(DType::I16) => {
                    let out = tensor(output).map_or(0, |t| t.elements());
                    steps.push(PrepareStep::scratch(8 * out, "int64 accumulators"));
                }
                _ => {}
            }
            // CalculateOpData holds the quantized operands again and, for 16x8 with an int16
            // bias, asks for its int64 copy.
            if !input_type.is_some_and(DType::is_float) {
                steps.extend(temps(&[input, filter, bias, output]));
                if input_type == Some(DType::I16) && dtype_of(bias) == Some(DType::I16) {
                    let n = tensor(bias).map_or(0, |t| t.elements());
                    steps.push(PrepareStep::scratch(8 * n, "int64 bias"));
                }
            }
            Some(steps)
        }
        B::AVERAGE_POOL_2D => {
            let mut steps = temps(&[op.input(0), op.output(0)]);
            if quantized {
                let bytes = avgpool_scratch(dim(op.output(0), 3), cpu);
                if bytes > 0 {
                    steps.push(PrepareStep::scratch(bytes, "int32 sums (CMSIS-NN)"));
                }
            }
            Some(steps)
        }
        B::FULLY_CONNECTED => {
            let filter = tensor(op.input(1));
            let mut steps = temps(&[op.input(0), op.input(1), op.input(2), op.output(0)]);
            let scales = filter
                .and_then(|f| f.quantization.as_ref())
                .map_or(0, |q| q.scales.len() as u64);
            let per_channel = scales > 1 && !dtype_of(op.input(0)).is_some_and(DType::is_float);
            if per_channel {
                steps.push(PrepareStep::Persistent(4 * scales));
                steps.push(PrepareStep::Persistent(4 * scales));
            }
            // int8 × int8 with a >2-D output and accum_depth % 4 == 0 runs as a 1×1 conv; a
            // per-tensor filter then needs fake per-channel multipliers and shifts. The conv's
            // own buffer and the plain FC's are 0 with GCC off MVE.
            let int8 = dtype_of(op.input(0)) == Some(DType::I8)
                && dtype_of(op.input(1)) == Some(DType::I8);
            let out_rank = tensor(op.output(0)).map_or(0, |t| t.shape.len());
            if int8 && out_rank > 2 && last_dim(op.input(1)) % 4 == 0 && !per_channel {
                steps.push(PrepareStep::scratch(
                    last_dim(op.output(0)) * 4 * 2,
                    "per-channel multipliers and shifts (CMSIS-NN 1×1 path)",
                ));
            }
            Some(steps)
        }
        B::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let mut steps: Vec<PrepareStep> = op
                .inputs
                .iter()
                .chain(&op.outputs)
                .filter_map(|&t| usize::try_from(t).ok())
                .map(PrepareStep::Temp)
                .collect();
            let time_major = matches!(op.options, OpOptions::Lstm(o) if o.time_major);
            let batch = dim(op.input(0), if time_major { 1 } else { 0 });
            let hidden = dim(op.input(18), 1);
            let cell = dtype_of(op.input(19));
            let cell_bytes = cell.and_then(DType::size_bytes).map_or(4, u64::from);
            // int8/int16 activations with an int16 cell take CMSIS-NN's LSTM: eight kernel-sum
            // arrays (input and recurrent, per gate) of the bias type, and three buffers.
            let bias_bytes = match (dtype_of(op.input(0)), cell) {
                (Some(DType::I8), Some(DType::I16)) => Some(4),
                (Some(DType::I16), Some(DType::I16)) => Some(8),
                _ => None,
            };
            let buffers = match bias_bytes {
                Some(b) => {
                    steps.extend([PrepareStep::Persistent(hidden * b); 8]);
                    3
                }
                None => 4,
            };
            steps.extend(core::iter::repeat_n(
                PrepareStep::scratch(batch * hidden * cell_bytes, "gate buffer (CMSIS-NN)"),
                buffers,
            ));
            Some(steps)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(in_c: u64, k: (u64, u64), filter_c: u64, out_c: u64) -> ConvShape {
        ConvShape {
            batches: 1,
            in_channels: in_c,
            kh: k.0,
            kw: k.1,
            filter_channels: filter_c,
            out_channels: out_c,
            dilation: (1, 1),
        }
    }

    #[test]
    fn conv_rules() {
        // 3×3×3 = 27 columns → 28 → 2 columns of int16: 112.
        assert_eq!(conv_s8_scratch(&shape(3, (3, 3), 3, 8)), 112);
        assert_eq!(conv_s4_scratch(&shape(3, (3, 3), 3, 8)), 108);
        assert_eq!(conv_s8_scratch(&shape(16, (1, 1), 16, 8)), 0);
        // Grouped 1×1 (filter has fewer channels than the input): im2col of the input depth.
        assert_eq!(conv_s8_scratch(&shape(16, (1, 1), 8, 8)), 64);
        assert_eq!(conv_s16_scratch(&shape(16, (1, 1), 16, 8)), 64);
    }

    #[test]
    fn transpose_conv_rules() {
        // 32 input channels, stride 2: reverse conv; 3×3×32 = 288 columns → 2·288·2 = 1152,
        // reversed filter 32·3·3·8 = 2304.
        assert_eq!(
            transpose_conv_s8_scratch(4, 32, (3, 3), 8, (2, 2)),
            (1152, 2304)
        );
        // 8 input channels: ((4−1)·2 + max(3, 2))·8 = 72 per row, max(3, 2) rows, int32.
        assert_eq!(
            transpose_conv_s8_scratch(4, 8, (3, 3), 8, (2, 2)),
            (72 * 3 * 4, 0)
        );
    }

    #[test]
    fn depthwise_rules() {
        let s = shape(8, (5, 5), 8, 8);
        assert_eq!(depthwise_s8_scratch(&s, CpuClass::Dsp), 400);
        assert_eq!(depthwise_s8_scratch(&s, CpuClass::NoDsp), 0);
        assert_eq!(depthwise_s4_scratch(&s), 400);
        assert_eq!(
            depthwise_s8_scratch(&shape(8, (3, 3), 8, 8), CpuClass::Dsp),
            0
        );
        assert_eq!(
            depthwise_s8_scratch(&shape(1, (5, 5), 8, 8), CpuClass::Dsp),
            0
        );
    }
}
