//! Element-wise math (`elementwise.cc`: ABS, RSQRT, SIN, COS, LOG, SQRT,
//! SQUARE; `exp.cc`, `ceil.cc`, `round.cc`, `floor.cc`, `neg.cc`).

use super::shapes::same_as_input;
use super::{Kernel, both, in0_out0, kernel, nothing};
use crate::read::dtype::DType::{F32, I8, I16};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, one_of, same};
use microarena_image::opcode as c;

/// `OpDataAbsRsqrt`: four int, a bool, a `TfLiteQuantizationType` (declared
/// `: int` in C++, so 4 bytes even with short enums) and a `TfLiteType`.
const ABS_RSQRT_OPDATA: super::PerAbi<Option<u32>> = both(Some(28));

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        op_data: ABS_RSQRT_OPDATA,
        prepare: in0_out0,
        checks: ABS,
        shape: Some(same_as_input),
        ..kernel(c::ABS, "elementwise.cc")
    },
    Kernel {
        op_data: ABS_RSQRT_OPDATA,
        prepare: in0_out0,
        checks: ABS,
        shape: Some(same_as_input),
        ..kernel(c::RSQRT, "elementwise.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_UNARY,
        shape: Some(same_as_input),
        ..kernel(c::SIN, "elementwise.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_UNARY,
        shape: Some(same_as_input),
        ..kernel(c::COS, "elementwise.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_UNARY,
        shape: Some(same_as_input),
        ..kernel(c::LOG, "elementwise.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_UNARY,
        shape: Some(same_as_input),
        ..kernel(c::SQRT, "elementwise.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_UNARY,
        shape: Some(same_as_input),
        ..kernel(c::SQUARE, "elementwise.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_ONLY,
        shape: Some(same_as_input),
        ..kernel(c::EXP, "exp.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_ONLY,
        shape: Some(same_as_input),
        ..kernel(c::CEIL, "ceil.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: FLOAT_ONLY,
        shape: Some(same_as_input),
        ..kernel(c::ROUND, "round.cc")
    },
    // No Init, no Prepare.
    Kernel {
        prepare: nothing,
        checks: FLOOR,
        shape: Some(same_as_input),
        ..kernel(c::FLOOR, "floor.cc")
    },
    Kernel {
        prepare: nothing,
        checks: NEG,
        shape: Some(same_as_input),
        ..kernel(c::NEG, "neg.cc")
    },
];

/// `elementwise.cc`: `GenericPrepare` and `PrepareAbsRsqrt` compare input and
/// output types, but their supported-type test never fires: the template
/// parameter meant to name the predicate is unnamed, so the test casts the
/// type code to a function pointer, non-null for every type. The wheel agrees
/// (int8 SQRT, int32 ABS and int32 LOGICAL_NOT load and fail at Invoke, int16
/// RSQRT runs). What is refused is what each Eval lacks: SIN, COS, LOG, SQRT
/// and SQUARE evaluate float32 only.
const FLOAT_UNARY: &[Check] = &[same(&[Input(0), Output(0)], P), one_of(Input(0), &[F32], E)];

/// `elementwise.cc` `AbsEval` and `RsqrtEval`: float32, int8, int16.
const ABS: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I8, I16], E),
];

/// `exp.cc`, `ceil.cc`, `round.cc`: input float32, output of its type.
const FLOAT_ONLY: &[Check] = &[one_of(Input(0), &[F32], P), same(&[Output(0), Input(0)], P)];

/// `floor.cc`: no Prepare; Eval insists on float32.
const FLOOR: &[Check] = &[one_of(Input(0), &[F32], E)];

/// `neg.cc`: no Prepare; Eval float32 only.
const NEG: &[Check] = &[one_of(Input(0), &[F32], E)];
