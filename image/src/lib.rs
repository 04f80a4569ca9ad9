//! # microarena-image
//!
//! The microarena *program image*: the one contract between core (which
//! lowers a model into an image on the host) and the no-heap runtime (which
//! executes it on a device). Everything both sides must agree on lives here
//! and nowhere else:
//!
//! - [`format`] — byte layout of the header, tensor and operator records,
//!   storage kinds and alignments;
//! - [`dtype`] — element type codes and sizes;
//! - [`opcode`] — the operator table (every builtin microarena knows, with
//!   its TFLM-model and runtime-kernel flags), the custom operators (TFLM's
//!   Signal ops under image-only codes) and their constants;
//! - [`params`] — typed per-operator parameters with their word encoding;
//! - [`opdata`] — the runtime's OpData and scratch sizes per operator;
//! - [`geometry`] — TFLM's window and strided-slice arithmetic;
//! - [`resize`] — TFLM's source-row arithmetic of the resize operators;
//! - [`stage`] — the pull schedule of a banded stage, which sizes its rings;
//! - [`calls`] — the subgraph call graph check (IF, WHILE, CALL_ONCE).
//!
//! `no_std`, no `alloc`, no `unsafe`: the runtime links it on any MCU.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(test)]
extern crate std;

pub mod calls;
pub mod dtype;
pub mod format;
pub mod geometry;
pub mod opcode;
pub mod opdata;
pub mod params;
pub mod quant;
pub mod resize;
pub mod stage;

pub use dtype::dtype_size;
pub use format::*;
pub use opcode::{op_name, op_supported};
pub use opdata::{op_scratch_bytes, op_tail_bytes};
