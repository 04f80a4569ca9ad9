//! Type conversions: QUANTIZE (`quantize.cc`, `quantize_common.cc`),
//! DEQUANTIZE (`dequantize.cc`, `dequantize_common.cc`) and CAST (`cast.cc`).

use super::shapes::same_as_input;
use super::{Kernel, abi3, both, in0_out0, kernel, st};
use crate::read::dtype::DType::{Bool, F32, I8, I16, I32, U8, U32};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, one_of, pairs};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        op_data: both(Some(32)),
        prepare: in0_out0,
        checks: QUANTIZE,
        shape: Some(same_as_input),
        ..kernel(c::QUANTIZE, "quantize.cc, quantize_common.cc")
    },
    Kernel {
        op_data: both(Some(32)),
        prepare: in0_out0,
        checks: DEQUANTIZE,
        shape: Some(same_as_input),
        ..kernel(c::DEQUANTIZE, "dequantize.cc, dequantize_common.cc")
    },
    Kernel {
        // TfLiteCastParams: two TfLiteType.
        builtin: abi3(st(8, 4), st(2, 1), st(8, 4)),
        builtin_name: "TfLiteCastParams",
        prepare: in0_out0,
        checks: CAST,
        shape: Some(same_as_input),
        ..kernel(c::CAST, "cast.cc")
    },
];

/// `cast.cc`: Eval switches on the input (int8, int16, int32, uint32,
/// float32, bool), then on the output (int8, int16, int32, uint32, float32).
const CAST: &[Check] = &[
    one_of(Input(0), &[I8, I16, I32, U32, F32, Bool], E),
    one_of(Output(0), &[I8, I16, I32, U32, F32], E),
];

/// `quantize_common.cc` `PrepareQuantizeReference`: the output quantized per
/// tensor, the input float32, int32, int16, int8 or uint8, the output int8,
/// int16, int32 or uint8; `EvalQuantizeReference` then runs only these pairs
/// ("Input …, output … not supported.").
const QUANTIZE: &[Check] = &[
    Check::PerTensor {
        operand: Output(0),
        required: true,
        stage: P,
    },
    one_of(Input(0), &[F32, I32, I16, I8, U8], P),
    one_of(Output(0), &[I8, I16, I32, U8], P),
    pairs(
        &[Input(0), Output(0)],
        &[
            &[F32, I8],
            &[F32, I16],
            &[I32, I8],
            &[I32, I16],
            &[I16, I8],
            &[I16, I16],
            &[I16, I32],
            &[I8, I8],
            &[I8, U8],
            &[I8, I16],
            &[I8, I32],
            &[U8, I8],
        ],
        E,
        None,
    ),
];

/// `dequantize_common.cc` `DequantizePrepare`: int8, int16 or uint8 to float32.
const DEQUANTIZE: &[Check] = &[
    one_of(Input(0), &[I8, I16, U8], P),
    one_of(Output(0), &[F32], P),
];
