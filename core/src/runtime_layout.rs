//! The microarena program image format and the runtime's own arena sizes.
//!
//! This module compiles without `alloc`: the device runtime
//! (`microarena-runtime`) depends on core with `default-features = false` and
//! reads every size from here, while [`crate::lower`] (host, `alloc`) writes
//! images and predicts the runtime's arena from the same functions. One number
//! therefore cannot drift between the predictor and the runtime.
//!
//! # Image layout (version 2, all integers little-endian)
//!
//! ```text
//! header   HEADER_BYTES      magic "MAIM", version, counts, head/tail bytes, table offsets
//! tensors  n × TENSOR_BYTES  dtype, rank, storage, dims[6], location, bytes, quantization
//! ops      n × OP_BYTES      opcode, inputs[24], output, scratch offset/bytes, params[16]
//! io       (n_in + n_out) × u32  graph input then output tensor indices
//! data     constant tensor bytes and per-channel scales (4-aligned)
//! ```

/// First four bytes of every image.
pub const MAGIC: [u8; 4] = *b"MAIM";
/// Format version written by [`crate::lower`] and accepted by the runtime.
pub const VERSION: u32 = 2;

/// Header size.
pub const HEADER_BYTES: usize = 64;
/// Header field offsets (each a `u32`).
pub mod header {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 4;
    pub const N_TENSORS: usize = 8;
    pub const N_OPS: usize = 12;
    pub const N_INPUTS: usize = 16;
    pub const N_OUTPUTS: usize = 20;
    /// Planned head (activations + scratch), a multiple of [`super::HEAD_ALIGN`].
    pub const HEAD_BYTES: usize = 24;
    /// Tail the runtime's Prepare allocates (OpData), a multiple of [`super::TAIL_ALIGN`].
    pub const TAIL_BYTES: usize = 28;
    pub const TENSORS_OFF: usize = 32;
    pub const OPS_OFF: usize = 36;
    pub const IO_OFF: usize = 40;
    pub const DATA_OFF: usize = 44;
    pub const DATA_LEN: usize = 48;
    pub const IMAGE_LEN: usize = 52;
    /// Bytes of the variable-tensor region (LSTM/SVDF state), part of `TAIL_BYTES`.
    pub const VAR_BYTES: usize = 56;
}

/// Tensor record size.
pub const TENSOR_BYTES: usize = 56;
/// Tensor record field offsets.
pub mod tensor {
    /// `i8`: TFLite `TensorType` code.
    pub const DTYPE: usize = 0;
    /// `u8`: number of dims (≤ [`super::MAX_RANK`]).
    pub const RANK: usize = 1;
    /// `u8`: one of [`super::STORAGE_ARENA`], [`super::STORAGE_CONST`], [`super::STORAGE_NONE`].
    pub const STORAGE: usize = 2;
    /// `[i32; MAX_RANK]`.
    pub const DIMS: usize = 4;
    /// `u32`: head offset (arena), data-area offset (const) or offset in the
    /// variable region (variable).
    pub const LOCATION: usize = 28;
    /// `u32`: byte size.
    pub const BYTES: usize = 32;
    /// `f32`: first (per-tensor) scale, 0 when not quantized.
    pub const SCALE: usize = 36;
    /// `i32`: first zero point.
    pub const ZERO_POINT: usize = 40;
    /// `i32`: quantized dimension (per-channel axis).
    pub const QUANT_DIM: usize = 44;
    /// `u32`: data-area offset of `n_scales` f32 scales.
    pub const SCALES_OFF: usize = 48;
    /// `u32`: number of scales.
    pub const N_SCALES: usize = 52;
}

/// Operator record size.
pub const OP_BYTES: usize = 128;
/// Operator record field offsets.
pub mod op {
    /// `u8`: TFLite builtin operator code.
    pub const OPCODE: usize = 0;
    /// `u8`: number of inputs (≤ [`super::MAX_OP_INPUTS`]).
    pub const N_INPUTS: usize = 1;
    /// `u8`: fused activation (schema code).
    pub const ACTIVATION: usize = 2;
    /// `[u16; MAX_OP_INPUTS]`: tensor indices, [`super::NO_TENSOR`] = omitted.
    pub const INPUTS: usize = 4;
    /// `u16`: output tensor.
    pub const OUTPUT: usize = 52;
    /// `u32`: head offset of the op's scratch buffer.
    pub const SCRATCH_OFF: usize = 56;
    /// `u32`: scratch bytes (0 = none).
    pub const SCRATCH_BYTES: usize = 60;
    /// `[i32; OP_PARAMS]`: precomputed parameters (padding, strides, …).
    pub const PARAMS: usize = 64;
}

/// Largest tensor rank an image carries.
pub const MAX_RANK: usize = 6;
/// Largest number of inputs of one operator (UNIDIRECTIONAL_SEQUENCE_LSTM has 24).
pub const MAX_OP_INPUTS: usize = 24;
/// Number of `i32` parameters per operator.
pub const OP_PARAMS: usize = 16;
/// Omitted optional input.
pub const NO_TENSOR: u16 = 0xFFFF;

/// Tensor lives in the arena head at `location`.
pub const STORAGE_ARENA: u8 = 0;
/// Tensor is constant data at `location` in the data area.
pub const STORAGE_CONST: u8 = 1;
/// Tensor has no bytes (never read or written).
pub const STORAGE_NONE: u8 = 2;
/// Variable tensor (LSTM/SVDF state) at `location` in the variable region at
/// the bottom of the tail: a fixed address that survives between invocations,
/// reset by `Interpreter::reset` (int8: the zero point, others: 0, as TFLM).
pub const STORAGE_VARIABLE: u8 = 3;

/// Alignment of every head buffer offset and size (as TFLM).
pub const HEAD_ALIGN: u32 = 16;
/// Alignment (and size granularity) of every tail allocation the runtime makes.
pub const TAIL_ALIGN: u32 = 4;

/// TFLite type codes the runtime knows.
pub mod dtype {
    pub const F32: i8 = 0;
    pub const I32: i8 = 2;
    pub const U8: i8 = 3;
    pub const I64: i8 = 4;
    pub const BOOL: i8 = 6;
    pub const I16: i8 = 7;
    pub const I8: i8 = 9;
}

/// Bytes per element of a type the runtime can hold, `None` otherwise.
pub const fn dtype_size(code: i8) -> Option<u32> {
    match code {
        dtype::F32 | dtype::I32 => Some(4),
        dtype::I16 => Some(2),
        dtype::I8 | dtype::U8 | dtype::BOOL => Some(1),
        dtype::I64 => Some(8),
        _ => None,
    }
}

/// Builtin operator codes the runtime implements.
pub mod opcode {
    pub const ADD: u8 = 0;
    pub const AVERAGE_POOL_2D: u8 = 1;
    pub const CONCATENATION: u8 = 2;
    pub const CONV_2D: u8 = 3;
    pub const DEPTHWISE_CONV_2D: u8 = 4;
    pub const DEQUANTIZE: u8 = 6;
    pub const FULLY_CONNECTED: u8 = 9;
    pub const LOGISTIC: u8 = 14;
    pub const MAX_POOL_2D: u8 = 17;
    pub const MUL: u8 = 18;
    pub const RESHAPE: u8 = 22;
    pub const SOFTMAX: u8 = 25;
    pub const TANH: u8 = 28;
    pub const PAD: u8 = 34;
    pub const TRANSPOSE: u8 = 39;
    pub const MEAN: u8 = 40;
    pub const STRIDED_SLICE: u8 = 45;
    pub const SVDF: u8 = 27;
    pub const UNIDIRECTIONAL_SEQUENCE_LSTM: u8 = 44;
    pub const QUANTIZE: u8 = 114;
}

/// Name of a builtin code as the TFLite schema spells it (`builtin op` for
/// codes this table lacks; the host side has the full schema table).
pub const fn op_name(code: i32) -> &'static str {
    match code {
        0 => "ADD",
        1 => "AVERAGE_POOL_2D",
        2 => "CONCATENATION",
        3 => "CONV_2D",
        4 => "DEPTHWISE_CONV_2D",
        5 => "DEPTH_TO_SPACE",
        6 => "DEQUANTIZE",
        9 => "FULLY_CONNECTED",
        14 => "LOGISTIC",
        16 => "LSTM",
        17 => "MAX_POOL_2D",
        18 => "MUL",
        19 => "RELU",
        21 => "RELU6",
        22 => "RESHAPE",
        25 => "SOFTMAX",
        27 => "SVDF",
        28 => "TANH",
        32 => "CUSTOM",
        34 => "PAD",
        36 => "GATHER",
        39 => "TRANSPOSE",
        40 => "MEAN",
        41 => "SUB",
        42 => "DIV",
        43 => "SQUEEZE",
        44 => "UNIDIRECTIONAL_SEQUENCE_LSTM",
        45 => "STRIDED_SLICE",
        53 => "CAST",
        60 => "PADV2",
        67 => "TRANSPOSE_CONV",
        74 => "SUM",
        114 => "QUANTIZE",
        117 => "HARD_SWISH",
        _ => "builtin op",
    }
}

/// `true` when the runtime has a kernel for the builtin `code`.
pub const fn op_supported(code: i32) -> bool {
    matches!(
        code,
        0 | 1 | 2 | 3 | 4 | 6 | 9 | 14 | 17 | 18 | 22 | 25 | 27 | 28 | 34 | 39 | 40 | 44 | 45 | 114
    )
}

/// Bytes the runtime's Prepare allocates in the tail for one operator
/// (its OpData: requantization multipliers and activation bounds).
///
/// `dtype` is the operator's output type; `channels` is the number of output
/// channels for the per-channel kernels (CONV_2D, DEPTHWISE_CONV_2D, and
/// per-channel FULLY_CONNECTED), 1 otherwise. Every result is a multiple of
/// [`TAIL_ALIGN`], so the tail never needs padding.
pub const fn op_tail_bytes(code: u8, dtype: i8, channels: u32) -> u32 {
    let quantized = dtype != self::dtype::F32;
    match code {
        opcode::FULLY_CONNECTED | opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D if quantized => {
            8 + 8 * channels
        }
        opcode::FULLY_CONNECTED | opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D => 8,
        opcode::ADD if quantized => 36,
        opcode::ADD => 8,
        opcode::MUL if quantized => 16,
        opcode::MUL => 8,
        opcode::AVERAGE_POOL_2D | opcode::MAX_POOL_2D => 8,
        opcode::SOFTMAX if quantized => 12,
        opcode::QUANTIZE => 8,
        opcode::LOGISTIC | opcode::TANH if quantized => 16,
        // 4 gates × (input FC, recurrent FC) × (multiplier, shift), 3 inter-gate
        // multiplies × (multiplier, shift), quantized cell clip, cell scale power.
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM if quantized => 96,
        // effective_scale_1 and _2 as (multiplier, shift).
        opcode::SVDF if quantized => 16,
        _ => 0,
    }
}

/// Rounds `v` up to a multiple of 4 (variable sizes and scratch parts).
pub const fn align4(v: u32) -> u32 {
    v.saturating_add(3) & !3
}

/// Scratch bytes the runtime's Prepare requests for one operator (planned in
/// the head by core, alive only while the op runs), as one buffer.
///
/// `dtype` is the output type; `a` and `b` depend on the op:
/// * MEAN: `a` = output elements (one 32-bit accumulator each);
/// * UNIDIRECTIONAL_SEQUENCE_LSTM: `a` = batch × state units; four gate
///   buffers of `a` cell-state elements (int16 for int8 models, f32 for float);
/// * SVDF: `a` = batch × filters, `b` = batch × units (32-bit each; float needs
///   only the first).
pub const fn op_scratch_bytes(code: u8, dtype: i8, a: u32, b: u32) -> u32 {
    let quantized = dtype != self::dtype::F32;
    match code {
        opcode::MEAN => a.saturating_mul(4),
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let cell = if quantized { 2 } else { 4 };
            align4(a.saturating_mul(cell)).saturating_mul(4)
        }
        opcode::SVDF if quantized => a.saturating_add(b).saturating_mul(4),
        opcode::SVDF => a.saturating_mul(4),
        _ => 0,
    }
}

/// Rounds `v` up to a multiple of `a` (a power of two).
pub const fn align_up(v: u32, a: u32) -> u32 {
    (v + (a - 1)) & !(a - 1)
}
