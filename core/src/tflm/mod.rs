//! Stage 3: TFLM's own arena accounting, per target — struct sizes
//! ([`profile`]), per-kernel allocations ([`kernel`]; CMSIS-NN's in [`cmsis_nn`]), the
//! kernels TFLM has and the types they accept ([`registry`]), buffer lifetimes
//! ([`lifetime`]), the Signal-library kernels' OpData layouts ([`signal`]), the
//! persistent tail ([`tail`]) and [`analysis`], which runs
//! them with a planner and derives the minimum working arena.

pub mod analysis;
pub mod cmsis_nn;
pub mod kernel;
pub mod lifetime;
pub mod profile;
pub mod registry;
pub mod signal;
pub mod split;
pub mod tail;
