//! Writing `.tflite` models: the [`builder`] for tests and benchmarks and the
//! bundled [`example`] models. Nothing in the analysis path calls this.

pub mod builder;
pub mod converted;
pub mod example;
