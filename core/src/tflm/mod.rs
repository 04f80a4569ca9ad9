//! Stage 3: TFLM's own arena accounting, per target — struct sizes
//! ([`profile`]), per-kernel allocations ([`kernel`]), buffer lifetimes
//! ([`lifetime`]), the persistent tail ([`tail`]) and [`analysis`], which runs
//! them with a planner and derives the minimum working arena.

pub mod profile;

#[cfg(feature = "alloc")]
pub mod analysis;
#[cfg(feature = "alloc")]
pub mod kernel;
#[cfg(feature = "alloc")]
pub mod lifetime;
#[cfg(feature = "alloc")]
pub mod tail;
