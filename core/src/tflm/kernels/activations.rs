//! Activations: RELU, RELU6 (`activations.cc`, `activations_common.cc`),
//! LEAKY_RELU (`leaky_relu.cc`, `leaky_relu_common.cc`), HARD_SWISH
//! (`hard_swish.cc`, `hard_swish_common.cc`), LOGISTIC (`logistic.cc`,
//! `logistic_common.cc`), TANH (`tanh.cc`), PRELU (`prelu.cc`,
//! `prelu_common.cc`) and ELU (`elu.cc`).

use super::shapes::same_as_input;
use super::{
    Ctx, Kernel, Prep, Refusal, both, in0_out0, in01_out0, kernel, multiplier_exponent, scale, st,
};
use crate::read::dtype::DType::{F32, I8, I16};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, one_of, same};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        op_data: both(Some(28)),
        prepare: in0_out0,
        checks: RELU,
        shape: Some(same_as_input),
        ..kernel(c::RELU, "activations.cc, activations_common.cc")
    },
    Kernel {
        op_data: both(Some(8)),
        // Relu6Prepare holds the input only.
        prepare: input_only,
        checks: RELU,
        shape: Some(same_as_input),
        ..kernel(c::RELU6, "activations.cc, activations_common.cc")
    },
    Kernel {
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteLeakyReluParams",
        op_data: both(Some(24)),
        prepare: in0_out0,
        checks: LEAKY_RELU,
        shape: Some(same_as_input),
        ..kernel(c::LEAKY_RELU, "leaky_relu.cc, leaky_relu_common.cc")
    },
    Kernel {
        op_data: both(Some(20)),
        prepare: hard_swish_prepare,
        checks: HARD_SWISH,
        shape: Some(same_as_input),
        ..kernel(c::HARD_SWISH, "hard_swish.cc, hard_swish_common.cc")
    },
    Kernel {
        op_data: both(Some(16)),
        prepare: in0_out0,
        checks: LOGISTIC,
        shape: Some(same_as_input),
        ..kernel(c::LOGISTIC, "logistic.cc, logistic_common.cc")
    },
    Kernel {
        op_data: both(Some(16)),
        prepare: tanh_prepare,
        checks: LOGISTIC,
        shape: Some(same_as_input),
        ..kernel(c::TANH, "tanh.cc")
    },
    Kernel {
        // PreluParams: seven int32.
        op_data: both(Some(28)),
        prepare: in01_out0,
        checks: PRELU,
        ..kernel(c::PRELU, "prelu.cc, prelu_common.cc")
    },
    Kernel {
        // OpData: a 256-entry int8 table, allocated for float models too.
        op_data: both(Some(256)),
        prepare: in0_out0,
        checks: ELU,
        shape: Some(same_as_input),
        ..kernel(c::ELU, "elu.cc")
    },
];

/// `HardSwishPrepare`: input and output; for int8 it refuses an output
/// multiplier (input scale / 128 / output scale) of 1 or more.
fn hard_swish_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    in0_out0(cx, p);
    if cx.in_type(0) == Some(crate::read::dtype::DType::I8) {
        let hires = (1.0f32 / 128.0) * scale(cx.in_t(0));
        if multiplier_exponent(f64::from(hires / scale(cx.out_t(0)))) > 0 {
            p.refuse(Refusal::Quantization(
                "its output multiplier (input scale / 128 / output scale) is 1 or more",
            ));
        }
    }
}

fn input_only(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0));
}

/// `TanhPrepare` holds the input, then `CalculateArithmeticOpData` holds
/// input and output again.
fn tanh_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0));
    in0_out0(cx, p);
}

/// `activations.cc` / `activations_common.cc`: Prepare checks no type; Eval
/// runs float32, int8, int16.
const RELU: &[Check] = &[one_of(Input(0), &[F32, I8, I16], E)];

/// `logistic_common.cc` (input = output type) and `logistic.cc` Eval (float32,
/// int16, int8); `tanh.cc` checks the same.
const LOGISTIC: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I16, I8], E),
];

/// `leaky_relu_common.cc` (input = output type), `leaky_relu.cc` Eval.
const LEAKY_RELU: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I8, I16], E),
];

/// `hard_swish_common.cc` checks no type; `hard_swish.cc` Eval float32, int8.
const HARD_SWISH: &[Check] = &[one_of(Input(0), &[F32, I8], E)];

/// `prelu_common.cc`: an int16 output needs an int8 alpha (input 1);
/// `prelu.cc` Eval runs float32, int8, int16 inputs.
const PRELU: &[Check] = &[
    Check::If {
        operand: Output(0),
        is: &[I16],
        then: &one_of(Input(1), &[I8], P),
    },
    one_of(Input(0), &[F32, I8, I16], E),
];

/// `elu.cc`: Prepare wants input type = output type; Eval float32, int8.
const ELU: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I8], E),
];
