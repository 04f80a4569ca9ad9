//! Binary arithmetic: ADD (`add.cc`, `add_common.cc`, `cmsis_nn/add.cc`),
//! SUB (`sub.cc`, `sub_common.cc`), MUL (`mul.cc`, `mul_common.cc`,
//! `cmsis_nn/mul.cc`), DIV (`div.cc`), SQUARED_DIFFERENCE
//! (`squared_difference.cc`), FLOOR_DIV (`floor_div.cc`), FLOOR_MOD
//! (`floor_mod.cc`), MAXIMUM and MINIMUM (`maximum_minimum.cc`,
//! `cmsis_nn/maximum_minimum.cc`) and ADD_N (`add_n.cc`).

use super::shapes::broadcast_inputs;
use super::{
    CMSIS_SAME, CmsisNn, Ctx, ESP_SAME, Kernel, Prep, abi3, both, in01_out0, kernel, nothing, st,
};
use crate::read::dtype::DType::{self, F32, I8, I16, I32, I64};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, HYBRID, INPUT_TYPE, P, one_of, one_of_says, same};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        // TfLiteAddParams: activation, pot_scale_int16.
        builtin: abi3(st(8, 4), st(2, 1), st(8, 4)),
        builtin_name: "TfLiteAddParams",
        op_data: both(Some(60)),
        prepare: in01_out0,
        checks: ADD,
        cmsis_nn: Some(CmsisNn {
            checks: Some(ADD_CMSIS_NN),
            ..CMSIS_SAME
        }),
        shape: Some(broadcast_inputs),
        esp_nn: Some(ESP_SAME),
        ..kernel(c::ADD, "add.cc, add_common.cc")
    },
    Kernel {
        builtin: abi3(st(8, 4), st(2, 1), st(8, 4)),
        builtin_name: "TfLiteSubParams",
        op_data: both(Some(52)),
        prepare: in01_out0,
        checks: ADD,
        shape: Some(broadcast_inputs),
        ..kernel(c::SUB, "sub.cc, sub_common.cc")
    },
    Kernel {
        builtin: abi3(st(4, 4), st(1, 1), st(4, 4)),
        builtin_name: "TfLiteMulParams",
        op_data: both(Some(36)),
        prepare: in01_out0,
        checks: MUL,
        cmsis_nn: Some(CMSIS_SAME),
        shape: Some(broadcast_inputs),
        esp_nn: Some(ESP_SAME),
        ..kernel(c::MUL, "mul.cc, mul_common.cc")
    },
    Kernel {
        builtin: abi3(st(4, 4), st(1, 1), st(4, 4)),
        builtin_name: "TfLiteDivParams",
        op_data: both(Some(28)),
        prepare: in01_out0,
        checks: DIV,
        shape: Some(broadcast_inputs),
        ..kernel(c::DIV, "div.cc")
    },
    Kernel {
        // OpData: requires_broadcast, then an 8-aligned ArithmeticParams (104 B).
        op_data: both(Some(112)),
        prepare: in01_out0,
        checks: SQUARED_DIFFERENCE,
        shape: Some(broadcast_inputs),
        ..kernel(c::SQUARED_DIFFERENCE, "squared_difference.cc")
    },
    Kernel {
        // FloorDivInit returns no OpData.
        prepare: in01_out0,
        checks: FLOOR_DIV,
        shape: Some(broadcast_inputs),
        ..kernel(c::FLOOR_DIV, "floor_div.cc")
    },
    Kernel {
        prepare: in01_out0,
        checks: FLOOR_MOD,
        shape: Some(broadcast_inputs),
        ..kernel(c::FLOOR_MOD, "floor_mod.cc")
    },
    // No Init and no Prepare: nothing at all in the arena.
    Kernel {
        prepare: nothing,
        checks: MAXIMUM,
        cmsis_nn: Some(CMSIS_SAME),
        shape: Some(broadcast_inputs),
        ..kernel(c::MAXIMUM, "maximum_minimum.cc")
    },
    Kernel {
        prepare: nothing,
        checks: MAXIMUM,
        cmsis_nn: Some(CMSIS_SAME),
        shape: Some(broadcast_inputs),
        ..kernel(c::MINIMUM, "maximum_minimum.cc")
    },
    Kernel {
        prepare: add_n_prepare,
        checks: ADD_N,
        ..kernel(c::ADD_N, "add_n.cc")
    },
];

/// `add_n.cc` `CalculateOpData` (no Init): input 0 and the output, every
/// other input in turn; an int8 op allocates its OpData (ten int32) here;
/// then the input-pointer array as scratch.
fn add_n_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0)).temp(cx.output(0));
    for i in 1..cx.inputs() {
        p.temp(cx.input(i));
    }
    if cx.out_type(0) == Some(DType::I8) {
        p.persistent(40, "OpData (int8)");
    }
    p.scratch(cx.pointer_bytes() * cx.inputs() as u64, "input pointers");
}

/// `add.cc` / `sub.cc`: Prepare checks no type (inputs may differ from the
/// output); Eval dispatches on the output: float32, int32, int8, int16.
const ADD: &[Check] = &[one_of(Output(0), &[F32, I32, I8, I16], E)];

/// `cmsis_nn/add.cc` `PrepareAdd`: input 0 = output type, input 0 float32,
/// int32, int16 or int8, input 1 = input 0 type ("Hybrid …").
const ADD_CMSIS_NN: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of_says(Input(0), &[F32, I32, I16, I8], P, INPUT_TYPE),
    Check::SameType {
        operands: &[Input(0), Input(1)],
        stage: P,
        tflm_says: HYBRID,
    },
];

/// `mul_common.cc` (inputs of one type) and `mul.cc` Eval (input int8, int16,
/// int32, float32); `cmsis_nn/mul.cc` shares the Prepare and the Eval types.
const MUL: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    one_of(Input(0), &[I8, I16, I32, F32], E),
];

/// `div.cc`: all of one type in Prepare; Eval output float32, int32, int8.
const DIV: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
    one_of(Output(0), &[F32, I32, I8], E),
];

/// `squared_difference.cc`: inputs of one type; Eval output float32, int32,
/// int8, int16.
const SQUARED_DIFFERENCE: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    one_of(Output(0), &[F32, I32, I8, I16], E),
];

/// `maximum_minimum.cc` and `cmsis_nn/maximum_minimum.cc`: no Prepare; Eval
/// output float32, int8, int16, int32, int64.
const MAXIMUM: &[Check] = &[one_of(Output(0), &[F32, I8, I16, I32, I64], E)];

/// `floor_div.cc`: one type in Prepare; Eval float32 ("Type '…' is not
/// supported by FLOOR_DIV.").
const FLOOR_DIV: &[Check] = &[
    same(&[Input(0), Input(1), Output(0)], P),
    one_of(Input(0), &[F32], E),
];

/// `floor_mod.cc`: Prepare wants one type; Eval handles float32 only (it
/// prints "Type '…' is not supported by FLOOR_MOD.").
const FLOOR_MOD: &[Check] = &[
    same(&[Input(0), Input(1), Output(0)], P),
    one_of(Input(0), &[F32], E),
];

/// `add_n.cc`: output type = input 0 type, every input of that type, then the
/// output float32 or int8, all in Prepare.
const ADD_N: &[Check] = &[
    same(&[Output(0), Input(0)], P),
    Check::InputsLike {
        first: 1,
        like: Input(0),
        stage: P,
    },
    one_of(Output(0), &[F32, I8], P),
];
