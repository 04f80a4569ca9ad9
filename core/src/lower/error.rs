//! Why a model cannot be lowered.

use alloc::format;
use alloc::string::String;
use core::fmt;

/// Why a model cannot be lowered for the device runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LowerError {
    /// The runtime has no kernel for this operator.
    UnsupportedOp {
        /// Index of the operator in the image's op table: its index in
        /// subgraph 0, or after every op of the subgraphs before its own.
        op_index: usize,
        /// Builtin name.
        name: String,
    },
    /// The model's subgraph calls (IF, WHILE, CALL_ONCE) are beyond the
    /// runtime: `microarena_image::calls`, the rule its image check applies.
    Subgraphs {
        /// The subgraph it is about.
        subgraph: usize,
        /// Why, for a person.
        why: String,
    },
    /// The operator is supported, but not in this configuration.
    Unsupported {
        /// Index of the operator, as in [`LowerError::UnsupportedOp`].
        op_index: usize,
        /// What is not supported, for a person.
        why: String,
    },
    /// A tensor cannot be represented (dynamic shape, rank, type, variable).
    Tensor {
        /// Tensor index (after every tensor of the subgraphs before its own).
        tensor: usize,
        /// What is wrong.
        why: String,
    },
    /// A size does not fit the image's 32-bit fields or lifetimes could not be computed.
    Internal(String),
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::UnsupportedOp { op_index, name } => write!(
                f,
                "operator {op_index} ({name}) has no kernel in the microarena runtime"
            ),
            LowerError::Subgraphs { subgraph, why } => write!(
                f,
                "the microarena runtime cannot run this model: {why} (subgraph {subgraph})"
            ),
            LowerError::Unsupported { op_index, why } => {
                write!(f, "operator {op_index}: {why}")
            }
            LowerError::Tensor { tensor, why } => write!(f, "tensor {tensor}: {why}"),
            LowerError::Internal(why) => write!(f, "cannot lower the model: {why}"),
        }
    }
}

impl core::error::Error for LowerError {}

/// `v` as an image's 32-bit field, or why not.
pub(super) fn fit(v: u64) -> Result<u32, LowerError> {
    u32::try_from(v)
        .map_err(|_| LowerError::Internal(format!("{v} does not fit the image's 32-bit fields")))
}
