//! Stage 1: bytes → a validated [`model::Model`]. Only this stage (and the
//! writers in `rewrite` and `build`) touches the flatbuffer.

pub mod dtype;
pub mod flex;
pub mod model;
pub mod ops;
pub(crate) mod schema;
