//! The runtime's error type: small, `Copy`, printable without a heap.

use core::fmt;

use microarena_image::op_name;

/// Everything that can go wrong while loading an image, preparing or invoking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The image does not start with the `MAIM` magic.
    BadMagic,
    /// The image was written for another format version.
    UnsupportedVersion {
        /// Version found in the image.
        found: u32,
    },
    /// The image is shorter than a table it declares.
    Truncated {
        /// What does not fit.
        what: &'static str,
    },
    /// A field of the image is inconsistent (index out of range, size mismatch, …).
    Malformed {
        /// Which field.
        what: &'static str,
        /// The tensor or operator index concerned.
        index: u32,
    },
    /// The arena cannot hold the head and the tail.
    ArenaTooSmall {
        /// Bytes the model needs.
        needed: usize,
        /// Bytes the arena has.
        available: usize,
    },
    /// No kernel for this operator.
    UnsupportedOp {
        /// Operator index.
        op_index: u16,
        /// Builtin code.
        opcode: u8,
    },
    /// The runtime has a kernel for this operator, but the [`crate::Resolver`]
    /// the interpreter was built with leaves it out (a firmware whose kernels
    /// were selected for another image). Refused at construction.
    KernelNotLinked {
        /// Operator index.
        op_index: u16,
        /// Builtin code (the kernel is the one registered for it).
        opcode: u8,
        /// `""` when the kernel itself is left out, else the part of it the
        /// op needs (its execution mode: "row-band execution", "in-place
        /// execution by rows").
        variant: &'static str,
    },
    /// The operator has a kernel, but not for these tensor types or shapes.
    UnsupportedConfig {
        /// Operator index.
        op_index: u16,
        /// Builtin code.
        opcode: u8,
        /// What is not supported.
        why: &'static str,
    },
    /// The operator's precomputed parameters (strides, padding, filter size,
    /// slice bounds, permutation, axes, …) or its tensors' shapes are
    /// inconsistent: the image is corrupt, or was not written by core. Refused
    /// at construction, so `invoke` only ever loops over validated tensor
    /// dimensions.
    InvalidOp {
        /// Operator index.
        op_index: u16,
        /// Builtin code.
        opcode: u8,
        /// What is inconsistent.
        what: &'static str,
    },
    /// The image carries its OpData in flash, and what this op's Prepare
    /// computes differs from it: the image was not filled by
    /// `freeze_opdata`, was filled by another runtime version, or is corrupt.
    OpDataMismatch {
        /// Operator index.
        op_index: u16,
        /// Builtin code.
        opcode: u8,
    },
    /// A persistent or scratch allocation was attempted after Prepare.
    AllocationDuringInvoke,
    /// An allocation alignment that is not a power of two up to 16.
    BadAlignment {
        /// The alignment asked for.
        align: usize,
    },
    /// A kernel asked for scratch the image did not plan (image and runtime disagree).
    ScratchNotPlanned {
        /// Operator index.
        op_index: u16,
        /// Bytes asked for.
        bytes: usize,
    },
    /// Input or output index out of range.
    NoSuchTensor {
        /// The index asked for.
        index: usize,
    },
    /// The image's subgraph calls (IF, WHILE, CALL_ONCE) are refused:
    /// a call out of range, a cycle, or nesting too deep
    /// (`microarena_image::calls`, the rule core's `lower` applies too).
    BadCalls {
        /// Why.
        why: &'static str,
        /// The subgraph it is about.
        subgraph: u32,
    },
    /// A caller-provided buffer has the wrong length.
    WrongLength {
        /// Bytes expected.
        expected: usize,
        /// Bytes given.
        got: usize,
    },
}

impl Error {
    /// The variant's name, for a device that prints without `core::fmt`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::BadMagic => "BadMagic",
            Error::UnsupportedVersion { .. } => "UnsupportedVersion",
            Error::Truncated { .. } => "Truncated",
            Error::Malformed { .. } => "Malformed",
            Error::ArenaTooSmall { .. } => "ArenaTooSmall",
            Error::UnsupportedOp { .. } => "UnsupportedOp",
            Error::KernelNotLinked { .. } => "KernelNotLinked",
            Error::UnsupportedConfig { .. } => "UnsupportedConfig",
            Error::InvalidOp { .. } => "InvalidOp",
            Error::OpDataMismatch { .. } => "OpDataMismatch",
            Error::AllocationDuringInvoke => "AllocationDuringInvoke",
            Error::BadAlignment { .. } => "BadAlignment",
            Error::ScratchNotPlanned { .. } => "ScratchNotPlanned",
            Error::NoSuchTensor { .. } => "NoSuchTensor",
            Error::BadCalls { .. } => "BadCalls",
            Error::WrongLength { .. } => "WrongLength",
        }
    }

    /// The operator an error is about: its index and builtin code.
    pub fn op(&self) -> Option<(u16, u8)> {
        match *self {
            Error::UnsupportedOp { op_index, opcode }
            | Error::KernelNotLinked {
                op_index, opcode, ..
            }
            | Error::UnsupportedConfig {
                op_index, opcode, ..
            }
            | Error::InvalidOp {
                op_index, opcode, ..
            }
            | Error::OpDataMismatch { op_index, opcode } => Some((op_index, opcode)),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Error::BadMagic => f.write_str("not a microarena program image (magic 'MAIM' missing)"),
            Error::UnsupportedVersion { found } => write!(
                f,
                "program image version {found}; this runtime reads version {} only: lower the model again with the matching microarena",
                microarena_image::VERSION
            ),
            Error::Truncated { what } => write!(f, "program image truncated: {what} does not fit"),
            Error::Malformed { what, index } => {
                write!(f, "program image malformed: {what} (entry {index})")
            }
            Error::ArenaTooSmall { needed, available } => write!(
                f,
                "arena too small: the model needs {needed} bytes, the arena has {available}"
            ),
            Error::UnsupportedOp { op_index, opcode } => write!(
                f,
                "operator {op_index} ({} / builtin code {opcode}) has no kernel in this runtime",
                op_name(i32::from(opcode))
            ),
            Error::KernelNotLinked {
                op_index,
                opcode,
                variant,
            } => write!(
                f,
                "operator {op_index} ({name} / builtin code {opcode}) needs the {name} kernel{sep}{variant}, which this build's kernel resolver leaves out: select the kernels from this image (the firmware's build.rs does when it lowers the model) or use Resolver::ALL",
                name = op_name(i32::from(opcode)),
                sep = if variant.is_empty() { "" } else { "'s " },
            ),
            Error::UnsupportedConfig {
                op_index,
                opcode,
                why,
            } => write!(
                f,
                "operator {op_index} ({}): {why}",
                op_name(i32::from(opcode))
            ),
            Error::InvalidOp {
                op_index,
                opcode,
                what,
            } => write!(
                f,
                "operator {op_index} ({}) is inconsistent with its tensors: {what}",
                op_name(i32::from(opcode))
            ),
            Error::OpDataMismatch { op_index, opcode } => write!(
                f,
                "operator {op_index} ({}): the image's OpData block differs from what Prepare computes; fill it with this runtime's freeze_opdata (or lower with OpData in RAM)",
                op_name(i32::from(opcode))
            ),
            Error::AllocationDuringInvoke => f.write_str(
                "arena allocation attempted during Invoke; kernels may allocate only in Prepare",
            ),
            Error::BadAlignment { align } => {
                write!(f, "alignment {align} is not a power of two up to 16")
            }
            Error::ScratchNotPlanned { op_index, bytes } => write!(
                f,
                "operator {op_index} requested {bytes} scratch bytes that the image does not plan (image built by another core version?)"
            ),
            Error::NoSuchTensor { index } => write!(f, "no graph input/output number {index}"),
            Error::BadCalls { why, subgraph } => {
                write!(f, "program image refused: {why} (subgraph {subgraph})")
            }
            Error::WrongLength { expected, got } => {
                write!(f, "buffer has {got} bytes, {expected} expected")
            }
        }
    }
}

impl core::error::Error for Error {}
