//! The program image's byte layout: header, tensor and operator records,
//! storage kinds and alignments.
//!
//! # Image layout (version 6, all integers little-endian)
//!
//! ```text
//! header    HEADER_BYTES        magic "MAIM", version, counts, head/tail bytes, table offsets
//! tensors   n × TENSOR_BYTES    dtype, rank, storage, dims[6], location, bytes, quantization
//! ops       n × OP_BYTES        opcode, n_inputs, activation, n_outputs, inputs[24], output 0,
//!                               scratch offset/bytes, params[16]
//! subgraphs n × SUBGRAPH_BYTES  first op, op count, I/O position and counts, OpData offset
//! io        Σ(n_in + n_out) × u32  each subgraph's input then output tensor indices
//! data      constant tensor bytes and per-channel scales (4-aligned)
//! opdata    the ops' OpData, in op order, when it lives in flash (see below)
//! ```
//!
//! # Several subgraphs (since version 6)
//!
//! The op table is every subgraph's ops, subgraph by subgraph; each
//! subgraph record names its run of ops, its inputs and outputs in the io
//! table (subgraph 0's first, the header's `N_INPUTS`/`N_OUTPUTS`: the
//! graph's), and where its first op's OpData starts (bytes of OpData of
//! every op before it), so a subgraph called again finds its OpData without
//! a walk. Tensor indices are global (one table for every subgraph); every
//! subgraph's tensors are planned in one head with TFLM's lifetimes, a
//! called subgraph's inside its caller's window. IF, WHILE and CALL_ONCE
//! carry the subgraphs they call ([`crate::params::SubgraphParams`]),
//! checked by [`crate::calls`]. A resource variable (VAR_HANDLE) is a
//! variable tensor: every handle tensor of one resource is a record of the
//! same place in the variable region. CALL_ONCE's input 0 and output 0 are
//! its `has run` flag, a 4-byte variable tensor.
//!
//! # OpData in flash (since version 4)
//!
//! Everything a kernel's Prepare computes (requantization multipliers, bounds,
//! FFT twiddles) depends only on the image, so it can live in flash instead of
//! the arena's tail. When [`header::OPDATA_LEN`] is non-zero the image ends
//! with that block, every op's OpData one after the other in op order, and
//! `TAIL_BYTES` counts the variable region alone. Core's `lower` reserves the
//! block; the runtime's `freeze_opdata` fills it by running each Prepare on
//! the host, and on the device Prepare recomputes every word and compares it
//! with the block instead of storing it, so a stale or hostile block is an
//! error, never a wrong multiplier.
//!
//! # Operators with several outputs (since version 3)
//!
//! An op record has [`op::N_OUTPUTS`] outputs (at least one). Output 0 sits
//! at [`op::OUTPUT`]; outputs 1.. follow the inputs in the `inputs` array:
//! output `k ≥ 1` is `inputs[n_inputs + k − 1]`, so an op may have
//! `n_inputs + n_outputs − 1 ≤ MAX_OP_INPUTS` tensors besides output 0 and
//! every slot past them holds [`NO_TENSOR`]. Version 2 had one output and a
//! spare byte 3 (always 0); the runtime refuses version-2 images with
//! `UnsupportedVersion` (re-lower the model: images are build products, not
//! archives, so one format is read). Version 4 added the OpData block.
//!
//! # In-place execution (since version 5)
//!
//! An op record's byte [`op::IN_PLACE`] is 0 when output 0 has bytes of its
//! own, or `k + 1` when output 0 *is* input `k`'s bytes (same location and
//! size in the head): an element-wise op overwriting an input that dies at
//! it ([`crate::opcode::in_place_inputs`] lists the inputs each kernel can
//! overwrite), or a RESHAPE / SQUEEZE / EXPAND_DIMS whose output aliases its
//! input ([`crate::opcode::is_alias_op`]; the runtime runs nothing for it).
//! Core's `lower` chooses them (an alias group is one planned buffer) and
//! checks the placement with an independent validator; the runtime checks
//! every marked op at construction.

/// First four bytes of every image.
pub const MAGIC: [u8; 4] = *b"MAIM";
/// Format version core's `lower` writes and the runtime accepts.
pub const VERSION: u32 = 6;

/// Header size.
pub const HEADER_BYTES: usize = 80;
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
    /// Image offset of the OpData block (see the module doc), 0 when none.
    pub const OPDATA_OFF: usize = 60;
    /// Bytes of the OpData block; 0 = OpData in the arena's tail.
    pub const OPDATA_LEN: usize = 64;
    /// Number of subgraphs (at least 1).
    pub const N_SUBGRAPHS: usize = 68;
    /// Image offset of the subgraph table.
    pub const SUBGRAPHS_OFF: usize = 72;
    /// Reserved (0).
    pub const RESERVED: usize = 76;
}

/// Subgraph record size.
pub const SUBGRAPH_BYTES: usize = 24;
/// Subgraph record field offsets (each a `u32`).
pub mod subgraph {
    /// Index of its first op in the op table.
    pub const FIRST_OP: usize = 0;
    /// Number of its ops (the subgraphs' runs tile the op table in order).
    pub const N_OPS: usize = 4;
    /// Position of its first input in the io table (inputs, then outputs).
    pub const IO_AT: usize = 8;
    pub const N_INPUTS: usize = 12;
    pub const N_OUTPUTS: usize = 16;
    /// Bytes of OpData of every op before its first.
    pub const OPDATA_AT: usize = 20;
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
    /// `u8`: number of outputs (≥ 1); outputs past the first follow the
    /// inputs in [`INPUTS`] (see the module doc).
    pub const N_OUTPUTS: usize = 3;
    /// `[u16; MAX_OP_INPUTS]`: input tensor indices ([`super::NO_TENSOR`] =
    /// omitted), then outputs 1.. of the op.
    pub const INPUTS: usize = 4;
    /// `u16`: output 0.
    pub const OUTPUT: usize = 52;
    /// `u8`: how the op executes ([`super::EXEC_WHOLE`], [`super::EXEC_BANDED`],
    /// [`super::EXEC_BANDED_LAST`]).
    pub const EXEC: usize = 54;
    /// `u8`: 0, or `k + 1` when output 0 is input `k`'s bytes (an in-place
    /// op or an alias; see the module doc).
    pub const IN_PLACE: usize = 55;
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
/// Largest number of outputs of one operator: output 0 plus every slot of
/// the inputs array (an op with one input can have 24).
pub const MAX_OP_OUTPUTS: usize = MAX_OP_INPUTS;
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

/// Tensor whose rows exist only a few at a time, in the ring buffer (the
/// scratch) of the banded op that produces it (see [`EXEC_BANDED`]).
pub const STORAGE_STREAMED: u8 = 4;

/// The op runs once over whole tensors (every op of a plain image).
pub const EXEC_WHOLE: u8 = 0;
/// The op is part of a *banded stage* (patch-based execution in row bands):
/// a run of consecutive row-computable ops ([`crate::opcode::band_rows`])
/// forming a small DAG, executed output row by output row so that the
/// tensors only the stage reads ([`STORAGE_STREAMED`]) never exist whole.
/// An op whose output is streamed keeps the rows its readers still need in
/// its scratch buffer (a ring of whole rows, at least the rows
/// [`crate::stage`]'s pull schedule holds in it); an op whose output is in
/// the arena writes it whole. Each kernel call computes one output row from
/// exactly the input rows its row map reads, so the results are those of
/// the whole-tensor kernel, bit for bit. (Since version 5 a stage may hold
/// PAD, element-wise ops and several readers of one tensor; the record
/// bytes are unchanged.)
pub const EXEC_BANDED: u8 = 1;
/// The last op of a banded stage (which marks where the stage ends; its
/// output, like any the stage writes whole, is in the arena).
pub const EXEC_BANDED_LAST: u8 = 2;
/// Most ops in one banded stage (the runtime keeps its row counters on the
/// stack, which on a Cortex-M0 with 16 KiB of RAM is small).
pub const MAX_STAGE_OPS: usize = 16;

/// Alignment of every head buffer offset and size (as TFLM).
pub const HEAD_ALIGN: u32 = 16;
/// Alignment (and size granularity) of every tail allocation the runtime makes.
pub const TAIL_ALIGN: u32 = 4;

/// Rounds `v` up to a multiple of 4 (variable sizes and scratch parts).
pub const fn align4(v: u32) -> u32 {
    v.saturating_add(3) & !3
}

/// Rounds `v` up to a multiple of `a` (a power of two).
pub const fn align_up(v: u32, a: u32) -> u32 {
    (v + (a - 1)) & !(a - 1)
}
