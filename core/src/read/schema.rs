//! The flatc output for TFLite's `schema.fbs`, quarantined in one module.
//!
//! Regenerate with `scripts/regen-schema.sh` (flatc 25.12.19, the version the
//! `flatbuffers` crate is pinned to). Nothing outside `model`, `builder` and
//! `offline` touches these types: the rest of the crate works on [`crate::read::model`].

#[allow(
    dead_code,
    unused_imports,
    non_camel_case_types,
    non_snake_case,
    deprecated,
    clippy::all,
    clippy::pedantic,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    mismatched_lifetime_syntaxes,
    unsafe_op_in_unsafe_fn,
    missing_debug_implementations,
    rust_2018_idioms,
    unused_lifetimes
)]
#[rustfmt::skip]
#[path = "generated/schema_generated.rs"]
mod schema_generated;

pub(crate) use schema_generated::tflite::*;
