//! # microarena-core
//!
//! Byte-exact TensorFlow Lite Micro arena accounting, with no I/O:
//! bytes → [`model::Model`] → [`lifetime`] → [`planner`] → [`tail`] →
//! [`analysis::Analysis`] → [`report`].
//!
//! The crate is `#![no_std]`. Everything that reads a model needs the `alloc`
//! feature (on by default); without it only the target profiles and the plan
//! types a device needs remain.
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

#[cfg(feature = "alloc")]
extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod profile;
pub mod runtime_layout;

#[cfg(feature = "alloc")]
mod schema;

#[cfg(feature = "alloc")]
pub mod dtype;

pub mod geometry;
#[cfg(feature = "alloc")]
pub mod model;
#[cfg(feature = "alloc")]
pub mod offline;
#[cfg(feature = "alloc")]
pub mod ops;

#[cfg(feature = "alloc")]
pub mod advice;
#[cfg(feature = "alloc")]
pub mod analysis;
#[cfg(feature = "alloc")]
pub mod budget;
#[cfg(feature = "alloc")]
pub mod builder;
#[cfg(feature = "alloc")]
pub mod diff;
#[cfg(feature = "alloc")]
pub mod example;
#[cfg(feature = "alloc")]
pub mod kernel;
#[cfg(feature = "alloc")]
pub mod lifetime;
#[cfg(feature = "alloc")]
pub mod optimize;
#[cfg(feature = "alloc")]
pub mod planner;
#[cfg(feature = "alloc")]
pub mod reorder;
#[cfg(feature = "alloc")]
pub mod report;
#[cfg(feature = "alloc")]
pub mod shape;
#[cfg(feature = "serde")]
pub mod share;
#[cfg(feature = "alloc")]
pub mod tail;
#[cfg(feature = "alloc")]
pub mod timeline;

#[cfg(feature = "alloc")]
pub mod device;

#[cfg(feature = "alloc")]
pub use analysis::{Analysis, Config, analyze};
#[cfg(feature = "alloc")]
pub use model::{Model, ReadError, is_tflite};
