//! # microarena-runtime
//!
//! A `#![no_std]`, heap-free inference engine whose arithmetic is bit-exact
//! with TensorFlow Lite Micro's reference kernels, and whose arena use is
//! predicted to the byte by `microarena-core`.
//!
//! ## Architecture
//!
//! * **The device carries no flatbuffer verifier and no planner.** On the host
//!   (or in a build script), `microarena_core::lower::lower` turns a validated
//!   `.tflite` model into a compact, versioned, little-endian *program image*
//!   (format in `microarena_image`): a header with magic,
//!   version and arena sizes; a tensor table (type, dims, arena offset or
//!   constant-data offset, quantization); an operator table (builtin code,
//!   tensor indices, precomputed parameters such as padding and strides, and
//!   the planned scratch buffer); then the constant data.
//! * **The head layout comes from core's plan.** Every activation and scratch
//!   buffer has a fixed, 16-aligned offset computed with core's TFLM-exact
//!   lifetimes and greedy planner; the runtime only checks that the offsets
//!   fit.
//! * **[`Image::parse`]** reads the image zero-copy from flash (`&[u8]`) and
//!   checks every table bound, every index and every tensor size once.
//! * **[`Interpreter::new`]** takes the image and a caller-supplied
//!   `&mut [u8]` arena and runs *Prepare*: each kernel validates its tensors
//!   and writes its OpData (requantization multipliers, activation bounds, as
//!   TFLM computes them) into the arena tail, and claims its planned scratch.
//!   Then the interpreter enters *Invoke*, where any allocation returns
//!   [`Error::AllocationDuringInvoke`]. The tail size is
//!   `microarena_image::op_tail_bytes` summed over the ops — the same function
//!   `microarena_core::lower::runtime_arena` uses — so the prediction and the
//!   runtime cannot drift.
//! * **Errors** are small `Copy` enums with `Display`: too small an arena
//!   names the bytes needed ([`Error::ArenaTooSmall`]), an operator without a
//!   kernel is refused at construction naming the op ([`Error::UnsupportedOp`];
//!   [`Error::KernelNotLinked`] when the runtime has one but the interpreter's
//!   [`Resolver`] leaves it out),
//!   and so are parameters that disagree with the op's tensors
//!   ([`Error::InvalidOp`]): invoke's loops run only over validated tensor
//!   dims, so a corrupted image cannot make it run unbounded.
//! * **No `unsafe`, no heap, no panics** reachable from an image or an arena:
//!   the allocator hands out offsets, tensors are re-borrowed by splitting the
//!   arena, bytes are read with `from_le_bytes` and `get`. The one exception
//!   is `kernels/dsp.rs`, compiled only for Cortex-M cores with the DSP
//!   extension (`thumbv7em`; see `build.rs`): register-only
//!   `asm!` (SXTB16/SMLAD) for the int8 multiply-accumulate, checked bit for
//!   bit on the device by `firmware/tests/dsp_exact.rs`.
//!
//! ## Arena layout
//!
//! ```text
//! | head: planned activations + scratch (core's plan, 16-aligned offsets) | free | tail: OpData |
//! 0                                                              head_bytes        len & !3
//! ```
//!
//! The tail grows down from the arena length rounded down to 4; every OpData
//! size is a multiple of 4, so the figures never depend on the arena length
//! or address. `memory_usage().high_water` is `head + tail` and equals
//! `microarena_core::lower::runtime_arena(&model).total_bytes` (the
//! "microarena" target: test `golden.rs`), which is below TFLM's Cortex-M
//! total on every golden model because there are no `TfLiteTensor`,
//! `TfLiteEvalTensor` or node structs and OpData is lean.
//!
//! ## Kernels
//!
//! FULLY_CONNECTED, CONV_2D, DEPTHWISE_CONV_2D (int8 per-channel and float32),
//! AVERAGE_POOL_2D, MAX_POOL_2D, ADD, MUL (int8 and float32, with
//! broadcasting), SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, DIV, SOFTMAX,
//! LOGISTIC, TANH (int8 gemmlowp fixed point, and float32 via `libm`),
//! LOG_SOFTMAX (float32), RELU,
//! RELU6, LEAKY_RELU, PRELU, HARD_SWISH, ABS, SQRT, RSQRT, LOG, EXP, CAST,
//! RESHAPE, SQUEEZE, EXPAND_DIMS, SHAPE, GATHER, RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, SPACE_TO_BATCH_ND (unpadded),
//! BATCH_TO_SPACE_ND, QUANTIZE, DEQUANTIZE (every type pair
//! TFLM accepts), PAD, TRANSPOSE, CONCATENATION, STRIDED_SLICE, MEAN, SUM,
//! REDUCE_MAX, REDUCE_MIN (any axes), ARG_MAX, ARG_MIN,
//! UNIDIRECTIONAL_SEQUENCE_LSTM, SVDF, the control flow of models with
//! several subgraphs (IF, WHILE, CALL_ONCE, run by the interpreter) and
//! resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE), in
//! the int8/int16/float32 variants TFLM's reference kernels have
//! (`scripts/verify-kernels.sh` checks each branch against the wheel). The
//! integer paths reproduce TFLM's reference kernels bit for bit
//! (`QuantizeMultiplier`, `MultiplyByQuantizedMultiplier`,
//! `PreprocessSoftmaxScaling`, `exp_on_negative_values`, …, see
//! [`fixedpoint`]); the float paths keep TFLM's operation order in `f32`.
//! Float `expf`/`logf`/`tanhf` results depend on the platform's libm in TFLM
//! too, so the float ops that call them (SOFTMAX, LOGISTIC, TANH, LOG, EXP)
//! are within 1 ULP of the wheel, not guaranteed bit-identical.
//!
//! Each operator family (convolutions, pools, elementwise, binary,
//! activations, rectifiers, math, softmax, quantize, shape ops, reductions,
//! LSTM, SVDF) is one file under `kernels/` holding its Prepare and Eval; one
//! table maps every builtin code
//! to them ([`registered_opcodes`] lists it). An interpreter runs the kernels
//! of a [`Resolver`]: [`Resolver::ALL`] by default, or, on a device, one built
//! at compile time by [`resolver!`] with only the image's operators (and,
//! given the image's (opcode, output type) pairs, only the type branches it
//! takes), so the linker drops every other kernel.
//!
//! ## Use (host CLI or device)
//!
//! ```ignore
//! let model = microarena_core::Model::parse(&tflite)?;
//! let image = microarena_core::lower::lower(&model)?;          // Vec<u8>, LowerError names the op
//! let need = microarena_core::lower::runtime_arena(&model)?;   // head/tail/total bytes
//! let mut arena = vec![0u8; need.total_bytes as usize];         // or a static/stack buffer
//! let mut it = Interpreter::new(&image, &mut arena)?;           // Prepare; errors name the op
//! for _ in 0..repeat {
//!     it.input_mut(0)?.copy_from_slice(&input);                 // refill before *every* invoke:
//!     it.invoke()?;                                              // the plan reuses input bytes
//! }
//! let out: &[u8] = it.output(0)?;                               // raw little-endian bytes
//! let info = it.output_info(0)?;                                // dtype code, shape, scale, zero point
//! let usage = it.memory_usage();                                // used / available / high_water
//! ```

#![no_std]
// The only exceptions are `kernels/dsp.rs` (inline SXTB16/SMLAD on DSP
// cores) and `kernels/v6m.rs` (one Thumb-1 loop on Armv6-M).
#![cfg_attr(not(any(microarena_dsp, microarena_v6m)), forbid(unsafe_code))]
#![cfg_attr(any(microarena_dsp, microarena_v6m), deny(unsafe_code))]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod arena;
mod banded;
mod dyadic;
mod error;
pub mod fixedpoint;
mod freeze;
mod image;
mod interpreter;
mod kernels;
mod rows_in_place;

pub use arena::{ArenaAllocator, MemoryUsage, Phase};
pub use error::Error;
pub use freeze::freeze_opdata;
pub use image::{Image, OpInfo, SubgraphInfo, TensorInfo};
pub use interpreter::Interpreter;
#[doc(hidden)]
pub use kernels::Kernel;
pub use kernels::Resolver;
#[doc(hidden)]
pub use kernels::dsp_check;
pub use kernels::registered_opcodes;
/// The program image format, re-exported so a firmware needs this one dependency.
pub use microarena_image as runtime_layout;
