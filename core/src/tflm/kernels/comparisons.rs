//! Comparisons (`comparisons.cc`: EQUAL, NOT_EQUAL, LESS, LESS_EQUAL,
//! GREATER, GREATER_EQUAL), logical ops (`logical.cc`, `elementwise.cc`'s
//! LOGICAL_NOT) and SELECT_V2 (`select.cc`).

use super::shapes::{broadcast_inputs, same_as_input};
use super::{Ctx, Kernel, Prep, all_io, both, in0_out0, kernel, nothing};
use crate::read::dtype::DType::{Bool, F32, I8, I16, I32, I64};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, one_of, same};
use microarena_image::opcode as c;

/// `ComparisonsPrepare` holds both inputs, never the output.
fn inputs_01(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp_inputs(cx, &[0, 1]);
}

/// A comparison: OpData holds one `ComparisonParams` (32 B on both ABIs).
const fn comparison(code: u8, checks: &'static [Check]) -> Kernel {
    Kernel {
        op_data: both(Some(32)),
        prepare: inputs_01,
        checks,
        shape: Some(broadcast_inputs),
        ..kernel(code, "comparisons.cc")
    }
}

pub(super) const KERNELS: &[Kernel] = &[
    comparison(c::EQUAL, EQUAL),
    comparison(c::NOT_EQUAL, EQUAL),
    comparison(c::LESS, LESS),
    comparison(c::LESS_EQUAL, LESS),
    comparison(c::GREATER, GREATER),
    comparison(c::GREATER_EQUAL, LESS),
    // logical.cc / logical_common.cc: no Init, no Prepare, and Eval reads the
    // data as bool whatever its type.
    Kernel {
        prepare: nothing,
        shape: Some(broadcast_inputs),
        ..kernel(c::LOGICAL_AND, "logical.cc, logical_common.cc")
    },
    Kernel {
        prepare: nothing,
        shape: Some(broadcast_inputs),
        ..kernel(c::LOGICAL_OR, "logical.cc, logical_common.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: LOGICAL_NOT,
        shape: Some(same_as_input),
        ..kernel(c::LOGICAL_NOT, "elementwise.cc")
    },
    Kernel {
        // OpData: one bool (requires_broadcast).
        op_data: both(Some(1)),
        // Condition, x, y, output.
        prepare: all_io,
        checks: SELECT_V2,
        ..kernel(c::SELECT_V2, "select.cc")
    },
];

/// `elementwise.cc` `LogicalNotEval`: bool.
const LOGICAL_NOT: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[Bool], E),
];

/// `comparisons.cc`: Prepare checks no type; each Eval switches on input 0.
const EQUAL: &[Check] = &[one_of(Input(0), &[Bool, F32, I32, I64, I8], E)];

const GREATER: &[Check] = &[one_of(Input(0), &[F32, I32, I64, I8, I16], E)];

const LESS: &[Check] = &[one_of(Input(0), &[F32, I32, I64, I8], E)];

/// `select.cc`: bool condition, x and y of one type; Eval float32, int8, int16.
const SELECT_V2: &[Check] = &[
    one_of(Input(0), &[Bool], P),
    same(&[Input(1), Input(2)], P),
    one_of(Input(1), &[F32, I8, I16], E),
];
