//! Why a model could not be built.

use alloc::string::String;
use core::fmt;

/// Why [`super::ModelBuilder::build`] refused the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A subgraph index passed to the builder or stored in control-flow options does not exist.
    NoSuchSubgraph {
        /// The index given.
        index: i64,
        /// Subgraphs in the model.
        len: usize,
    },
    /// A tensor index (op input/output/intermediate or graph input/output) is out of range.
    NoSuchTensor {
        /// Subgraph.
        subgraph: usize,
        /// What refers to it (`"op 3 input"`, `"graph output"`).
        what: String,
        /// The index given.
        index: i32,
        /// Tensors in the subgraph.
        len: usize,
    },
    /// A tensor refers to a buffer that does not exist.
    NoSuchBuffer {
        /// Subgraph.
        subgraph: usize,
        /// Tensor.
        tensor: usize,
        /// Buffer index.
        buffer: u32,
    },
    /// The options given do not belong to the operator (e.g. pool options on ADD).
    OptionsMismatch {
        /// Subgraph.
        subgraph: usize,
        /// Operator index.
        op: usize,
        /// The operator's name.
        opcode: &'static str,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoSuchSubgraph { index, len } => {
                write!(f, "subgraph {index} does not exist (the model has {len})")
            }
            BuildError::NoSuchTensor {
                subgraph,
                what,
                index,
                len,
            } => {
                write!(
                    f,
                    "subgraph {subgraph}: {what} is tensor {index}, outside 0..{len}"
                )
            }
            BuildError::NoSuchBuffer {
                subgraph,
                tensor,
                buffer,
            } => {
                write!(
                    f,
                    "subgraph {subgraph} tensor {tensor}: buffer {buffer} does not exist"
                )
            }
            BuildError::OptionsMismatch {
                subgraph,
                op,
                opcode,
            } => {
                write!(
                    f,
                    "subgraph {subgraph} op {op}: the options given do not belong to {opcode}"
                )
            }
        }
    }
}

impl core::error::Error for BuildError {}
