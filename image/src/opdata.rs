//! The runtime's own allocations per operator: the OpData its Prepare puts
//! in the tail and the scratch buffer it asks core to plan in the head. Core
//! predicts the runtime's arena with these functions and the runtime sizes
//! its allocations with them, so the two cannot drift.

use crate::dtype;
use crate::format::align4;
use crate::opcode;

/// Bytes the runtime's Prepare allocates in the tail for one operator
/// (its OpData: requantization multipliers and activation bounds).
///
/// `dtype` is the operator's output type; `channels` is the number of output
/// channels for the per-channel kernels (CONV_2D, DEPTHWISE_CONV_2D,
/// TRANSPOSE_CONV and per-channel FULLY_CONNECTED), SignalRfft's fft_length, 1 otherwise. Every result is a multiple of
/// [`crate::TAIL_ALIGN`], so the tail never needs padding.
pub const fn op_tail_bytes(code: u8, dtype: i8, channels: u32) -> u32 {
    let quantized = dtype != dtype::F32;
    match code {
        opcode::FULLY_CONNECTED
        | opcode::CONV_2D
        | opcode::DEPTHWISE_CONV_2D
        | opcode::TRANSPOSE_CONV
            if quantized =>
        {
            8 + 8 * channels
        }
        opcode::FULLY_CONNECTED
        | opcode::CONV_2D
        | opcode::DEPTHWISE_CONV_2D
        | opcode::TRANSPOSE_CONV => 8,
        opcode::ADD if matches!(dtype, dtype::I8 | dtype::I16) => 36,
        // Bounds, left shift and three (multiplier, shift) pairs.
        opcode::SUB if matches!(dtype, dtype::I8 | dtype::I16) => 36,
        opcode::SQUARED_DIFFERENCE if matches!(dtype, dtype::I8 | dtype::I16) => 36,
        // Bounds and the output (multiplier, shift); int32 takes the bounds alone (below).
        opcode::DIV if dtype == dtype::I8 => 16,
        // Float activation bounds (int32 SUB and DIV: integer bounds).
        opcode::SUB | opcode::DIV => 8,
        opcode::ADD => 8,
        // Bounds, the input and the output (multiplier, shift).
        opcode::ADD_N if dtype == dtype::I8 => 24,
        opcode::MUL if matches!(dtype, dtype::I8 | dtype::I16) => 16,
        opcode::MUL => 8,
        opcode::AVERAGE_POOL_2D | opcode::MAX_POOL_2D | opcode::L2_POOL_2D => 8,
        opcode::SOFTMAX if quantized => 12,
        // Input (multiplier, shift), reverse (multiplier, shift), diff_min.
        opcode::LOG_SOFTMAX if quantized => 20,
        opcode::QUANTIZE => 8,
        opcode::LOGISTIC | opcode::TANH if quantized => 16,
        // (multiplier, shift) pairs or bounds, see each kernel.
        opcode::RELU | opcode::LEAKY_RELU | opcode::PRELU | opcode::HARD_SWISH if quantized => 16,
        opcode::RELU6 if quantized => 8,
        // Flags (quantized, rescaled), multiplier, shift.
        opcode::ABS if quantized => 12,
        // Output (multiplier, shift).
        opcode::RSQRT if quantized => 8,
        // 4 gates × (input FC, recurrent FC) × (multiplier, shift), 3 inter-gate
        // multiplies × (multiplier, shift), quantized cell clip, cell scale power.
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM if quantized => 96,
        // effective_scale_1 and _2 as (multiplier, shift).
        opcode::SVDF if quantized => 16,
        // The output (multiplier, shift).
        opcode::BATCH_MATMUL if quantized => 8,
        // Bounds, the input and the output (multiplier, shift).
        opcode::CUMSUM if dtype == dtype::I8 => 24,
        // ELU's int8 lookup table, 256 entries.
        opcode::ELU if quantized => 256,
        // The int16 kissfft tables for `channels` = fft_length: the complex
        // FFT's fft_length/2 twiddles and kiss_fftr's fft_length/4 split
        // twiddles, one (re, im) pair of int16 per word.
        opcode::SIGNAL_RFFT => {
            let n = channels / 2;
            n.saturating_add(n / 2).saturating_mul(4)
        }
        _ => 0,
    }
}

/// Scratch bytes the runtime's Prepare requests for one operator (planned in
/// the head by core, alive only while the op runs), as one buffer.
///
/// `dtype` is the output type; `a` and `b` depend on the op:
/// * MEAN, SUM: `a` = output elements (one 32-bit accumulator each);
/// * UNIDIRECTIONAL_SEQUENCE_LSTM: `a` = batch × state units; four gate
///   buffers of `a` cell-state elements (int16 for int8 models, f32 for float);
/// * SVDF: `a` = batch × filters, `b` = batch × units (32-bit each; float needs
///   only the first);
/// * SignalRfft: `a` = fft_length (the frame and the complex FFT's output).
pub const fn op_scratch_bytes(code: u8, dtype: i8, a: u32, b: u32) -> u32 {
    let quantized = dtype != dtype::F32;
    match code {
        opcode::MEAN | opcode::SUM => a.saturating_mul(4),
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let cell = if quantized { 2 } else { 4 };
            align4(a.saturating_mul(cell)).saturating_mul(4)
        }
        opcode::SVDF if quantized => a.saturating_add(b).saturating_mul(4),
        opcode::SVDF => a.saturating_mul(4),
        // SignalRfft, `a` = fft_length: the zero-padded int16 frame (2·a
        // bytes, a even) and the complex FFT's a/2 int16 pairs.
        opcode::SIGNAL_RFFT => a.saturating_mul(4),
        _ => 0,
    }
}
