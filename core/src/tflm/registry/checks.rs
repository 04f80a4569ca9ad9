//! The vocabulary kernel rows state their checks in (`tflm::kernels`): the
//! stages, TFLM's fixed messages and constructors for each [`Check`] kind.
//! What each kernel checks is declared in its family's file.

use super::Operand::{self};
use super::{Check, Stage};
use crate::read::dtype::DType;
use crate::read::dtype::DType::{Bool, F16, F64, I4, I32, I64, U8, U16, U32, U64};

pub(crate) const P: Stage = Stage::Prepare;

pub(crate) const E: Stage = Stage::Invoke;

/// TFLM's message when a kernel pairs a float input with integer weights, or
/// any pair it lacks.
pub(crate) const HYBRID: Option<&str> = Some("Hybrid models are not supported on TFLite Micro.");

/// The CMSIS-NN kernels' message for an input type they lack.
pub(crate) const INPUT_TYPE: Option<&str> = Some("Input data type not supported");

pub(crate) const fn one_of(operand: Operand, types: &'static [DType], stage: Stage) -> Check {
    Check::OneOf {
        operand,
        types,
        stage,
        tflm_says: None,
    }
}

pub(crate) const fn one_of_says(
    operand: Operand,
    types: &'static [DType],
    stage: Stage,
    says: Option<&'static str>,
) -> Check {
    Check::OneOf {
        operand,
        types,
        stage,
        tflm_says: says,
    }
}

pub(crate) const fn same(operands: &'static [Operand], stage: Stage) -> Check {
    Check::SameType {
        operands,
        stage,
        tflm_says: None,
    }
}

pub(crate) const fn pairs(
    operands: &'static [Operand],
    accepted: &'static [&'static [DType]],
    stage: Stage,
    says: Option<&'static str>,
) -> Check {
    Check::Types {
        operands,
        accepted,
        stage,
        tflm_says: says,
    }
}

/// A tensor Prepare reads data from (shapes, axes, paddings).
pub(crate) const fn constant(
    operand: Operand,
    what: &'static str,
    says: Option<&'static str>,
) -> Check {
    Check::Constant {
        operand,
        what,
        stage: P,
        tflm_says: says,
    }
}

pub(crate) const fn rank(
    operand: Operand,
    min: usize,
    max: usize,
    says: Option<&'static str>,
) -> Check {
    Check::Rank {
        operand,
        min,
        max,
        stage: P,
        tflm_says: says,
    }
}

/// Every type but those a kernel handles first: the "anything else" of an if-chain.
pub(crate) const NOT_F32_I8_I16: &[DType] = &[
    F16,
    F64,
    I4,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    Bool,
    DType::I2,
    DType::BF16,
];
