//! Stage 3: TFLM's own arena accounting, per target — struct sizes and ABIs
//! ([`profile`]), what each kernel allocates, checks and refuses, one module
//! per kernel family ([`kernels`]; the CMSIS-NN build's kernels beside the
//! reference ones), the checks' machinery ([`registry`]), buffer lifetimes
//! ([`lifetime`]), the persistent tail ([`tail`]) and [`analysis`], which
//! runs them with a planner and derives the minimum working arena.

pub mod analysis;
pub mod kernels;
pub mod lifetime;
pub mod profile;
pub mod registry;
pub mod split;
pub mod tail;
