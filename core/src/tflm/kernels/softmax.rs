//! SOFTMAX (`softmax.cc`, `softmax_common.cc`, `cmsis_nn/softmax.cc`) and
//! LOG_SOFTMAX (`log_softmax.cc`).

use super::shapes::same_as_input;
use super::{CmsisNn, Ctx, Evidence, Kernel, Prep, abi, both, in0_out0, kernel, st};
use crate::read::dtype::DType::{
    self, Bool, F16, F32, F64, I4, I8, I16, I32, I64, U8, U16, U32, U64,
};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, INPUT_TYPE, P, one_of, one_of_says, pairs, same};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteSoftmaxParams",
        op_data: abi(Some(80), Some(56)),
        prepare: softmax_prepare,
        checks: SOFTMAX,
        cmsis_nn: Some(CmsisNn {
            // SoftmaxParams (56) + num_rows, row_size.
            op_data: Some(Some(64)),
            prepare: None,
            checks: Some(SOFTMAX_CMSIS_NN),
            evidence: Evidence::Measured,
        }),
        esp_nn: Some(super::esp_nn::SOFTMAX),
        shape: Some(same_as_input),
        ..kernel(c::SOFTMAX, "softmax.cc, softmax_common.cc")
    },
    Kernel {
        prepare: log_softmax_prepare,
        checks: LOG_SOFTMAX,
        shape: Some(same_as_input),
        ..kernel(c::LOG_SOFTMAX, "log_softmax.cc")
    },
];

/// `SoftmaxPrepare`: input and output; an int16 input builds two 513-entry
/// int16 lookup tables (exp and 1/(1+x)).
pub(super) fn softmax_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    in0_out0(cx, p);
    if cx.in_type(0) == Some(DType::I16) {
        p.persistent(1026, "int16 exp lookup table")
            .persistent(1026, "int16 1/(1+x) lookup table");
    }
}

/// `log_softmax.cc` `CalculateOpData`: the OpData is allocated here, in
/// Prepare, and only for int8 (`LogSoftmaxOpData`: five int32 and two size_t).
fn log_softmax_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    in0_out0(cx, p);
    if cx.in_type(0) == Some(DType::I8) {
        p.persistent(abi(40, 28).get(cx.profile.abi), "OpData (int8)");
    }
}

/// The input/output pair of one type, for every type, plus int8 → int16 —
/// `cmsis_nn/softmax.cc`'s first check.
const EQUAL_OR_I8_I16: &[&[DType]] = &[
    &[F32, F32],
    &[F16, F16],
    &[F64, F64],
    &[I4, I4],
    &[I8, I8],
    &[I16, I16],
    &[I32, I32],
    &[I64, I64],
    &[U8, U8],
    &[U16, U16],
    &[U32, U32],
    &[U64, U64],
    &[Bool, Bool],
    &[I8, I16],
];

/// `softmax_common.cc` `SoftmaxPrepare` / `CalculateSoftmaxParams`.
const SOFTMAX: &[Check] = &[pairs(
    &[Input(0), Output(0)],
    &[&[F32, F32], &[I8, I8], &[I8, I16], &[I16, I16]],
    P,
    None,
)];

/// `cmsis_nn/softmax.cc` `Prepare`: input and output of one type (or int8→int16),
/// then the input type on its own, before the reference parameter checks.
const SOFTMAX_CMSIS_NN: &[Check] = &[
    pairs(
        &[Input(0), Output(0)],
        EQUAL_OR_I8_I16,
        P,
        Some("Input and output data types are not supported together."),
    ),
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    SOFTMAX[0],
];

/// `log_softmax.cc`: Prepare wants input type = output type; Eval float32, int8.
const LOG_SOFTMAX: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I8], E),
];
