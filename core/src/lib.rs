//! # microarena-core
//!
//! Byte-exact TensorFlow Lite Micro arena accounting, with no I/O. The
//! modules are the pipeline's stages, in the order data flows through them:
//!
//! 1. [`read`] — bytes → a validated [`Model`] (flatbuffer verifier, schema,
//!    operator options, element types).
//! 2. [`whatif`] — optionally, the same model with other input shapes.
//! 3. [`tflm`] — TFLM's own accounting: target profiles, per-kernel costs,
//!    lifetimes, the persistent-tail simulation, and [`analyze`], which runs
//!    the stages and yields an [`Analysis`].
//! 4. [`plan`] — memory planners (TFLM's greedy, linear, the optimizing
//!    `best`), the lower bound and the independent overlap check.
//! 5. [`rewrite`] — models written back: offline plans TFLM obeys, operator
//!    reordering, `optimize`.
//! 6. [`lower`] — a model lowered to microarena-runtime's program image, and
//!    the runtime's arena.
//! 7. [`report`] — the serde types every shell shows (JSON contract, share
//!    links, diff, advice, budget verdict, timeline).
//!
//! [`pipeline::plan`] runs 2, 3 and 7 the way `microarena plan` does (the
//! CLI and the web app's worker both call it).
//!
//! [`build`] writes `.tflite` models (tests, benchmarks, the bundled example);
//! nothing in the pipeline calls it.
//!
//! The crate is `#![no_std]` and needs `alloc`. What the device runtime
//! shares with it — the program image format, the operator table and TFLM's
//! window geometry — is the allocator-free `microarena-image` crate.
#![no_std]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod build;
pub mod lower;
pub mod pipeline;
pub mod plan;
pub mod read;
pub mod report;
pub mod rewrite;
pub mod tflm;
pub mod whatif;

pub use read::model::{Model, ReadError, is_tflite};

/// A target or planner name that is not one of the choices; the message
/// lists them, as every shell prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownName {
    /// `target` or `planner`.
    pub kind: &'static str,
    pub name: alloc::string::String,
    pub choices: alloc::vec::Vec<&'static str>,
}

impl core::fmt::Display for UnknownName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "unknown {} '{}'; choose one of: {}",
            self.kind,
            self.name,
            self.choices.join(", ")
        )
    }
}
pub use tflm::analysis::{Analysis, Config, analyze};
