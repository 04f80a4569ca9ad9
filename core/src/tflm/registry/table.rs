//! The kernel rows: what each registered kernel's Prepare and Eval check, in
//! the order they check it, read from tflite-micro 90b983c2
//! (`tensorflow/lite/micro/kernels/`, file named on each row; `cmsis_nn/…` for
//! the kernels the CMSIS-NN build substitutes). Prepare refusals are
//! `Stage::Prepare`; a type Prepare lets through but Eval's switch has no case
//! for is `Stage::Invoke`. Checks on counts, shapes other than rank, and
//! quantization values (zero points, scales) are not modelled: see
//! `docs/tflm-kernels.md`.

use super::Operand::{Input, Output};
use super::{Check, Kernel, Operand, Stage};
use crate::read::dtype::DType;
use crate::read::dtype::DType::{
    Bool, F16, F32, F64, I4, I8, I16, I32, I64, Resource, U8, U16, U32, U64,
};
use microarena_image::opcode as c;

const P: Stage = Stage::Prepare;
const E: Stage = Stage::Invoke;

/// TFLM's message when a kernel pairs a float input with integer weights, or
/// any pair it lacks.
const HYBRID: Option<&str> = Some("Hybrid models are not supported on TFLite Micro.");
/// The CMSIS-NN kernels' message for an input type they lack.
const INPUT_TYPE: Option<&str> = Some("Input data type not supported");

const fn open(code: u8) -> Kernel {
    Kernel {
        code,
        reference: &[],
        cmsis_nn: None,
    }
}

const fn checked(code: u8, checks: &'static [Check]) -> Kernel {
    Kernel {
        code,
        reference: checks,
        cmsis_nn: None,
    }
}

/// A kernel the CMSIS-NN build replaces with a file of its own that checks
/// the same as the reference one.
const fn same_in_cmsis_nn(code: u8, checks: &'static [Check]) -> Kernel {
    Kernel {
        code,
        reference: checks,
        cmsis_nn: Some(checks),
    }
}

const fn both(code: u8, reference: &'static [Check], cmsis_nn: &'static [Check]) -> Kernel {
    Kernel {
        code,
        reference,
        cmsis_nn: Some(cmsis_nn),
    }
}

const fn one_of(operand: Operand, types: &'static [DType], stage: Stage) -> Check {
    Check::OneOf {
        operand,
        types,
        stage,
        tflm_says: None,
    }
}

const fn one_of_says(
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

const fn same(operands: &'static [Operand], stage: Stage) -> Check {
    Check::SameType {
        operands,
        stage,
        tflm_says: None,
    }
}

const fn pairs(
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
const fn constant(operand: Operand, what: &'static str, says: Option<&'static str>) -> Check {
    Check::Constant {
        operand,
        what,
        stage: P,
        tflm_says: says,
    }
}

const fn rank(operand: Operand, min: usize, max: usize, says: Option<&'static str>) -> Check {
    Check::Rank {
        operand,
        min,
        max,
        stage: P,
        tflm_says: says,
    }
}

/// Every type but those a kernel handles first: the "anything else" of an if-chain.
const NOT_F32_I8_I16: &[DType] = &[
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

/// Input/filter of one type, for every type, plus int16/int8 (and int8/int4
/// where `INT4` is appended) — the reference TRANSPOSE_CONV and
/// DEPTHWISE_CONV_2D Prepare.
const EQUAL_OR_I16_I8: &[&[DType]] = &[
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
    &[I16, I8],
];

// ---- convolutions and fully connected -------------------------------------

/// `conv_common.cc` `ConvPrepare`: input type = output type, then the
/// (input, filter) pair, else "Hybrid" — uint8 included.
const CONV_2D: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    pairs(
        &[Input(0), Input(1)],
        &[&[F32, F32], &[I16, I8], &[I8, I4], &[I8, I8]],
        P,
        HYBRID,
    ),
];
/// `cmsis_nn/conv.cc` and `cmsis_nn/depthwise_conv.cc` `Prepare`: after input
/// type = output type, the input type is checked on its own, before the pair.
const CONV_2D_CMSIS_NN: &[Check] = &[
    CONV_2D[0],
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    CONV_2D[1],
];
/// `depthwise_conv_common.cc` `DepthwiseConvPrepare`: the filter may have the
/// input's type (any type, so uint8/uint8 passes: `PopulateConvolutionQuantizationParams`
/// still quantizes uint8 per tensor), or int8/int4, int16/int8; `depthwise_conv.cc`
/// `Eval` then runs float32, int8 (int4 or int8 filter) and int16 (int8 filter) only.
const DEPTHWISE_CONV_2D: &[Check] = &[
    pairs(
        &[Input(0), Input(1)],
        &[
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
            &[I8, I4],
            &[I16, I8],
        ],
        P,
        HYBRID,
    ),
    pairs(
        &[Input(0), Input(1)],
        &[&[F32, F32], &[I8, I4], &[I8, I8], &[I16, I8]],
        E,
        None,
    ),
];

/// `fully_connected.cc` `FullyConnectedPrepare`: input type = output type; a
/// float32, int8 or int16 input needs its filter (float32; int8 or int4; int8),
/// other inputs pass; `fully_connected_common.cc` then refuses a per-channel
/// filter that is int4 or whose input is neither int8 nor int16 (float32
/// returns before). Eval runs float32, int8 and int16 inputs only.
const FULLY_CONNECTED: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    Check::If {
        operand: Input(0),
        is: &[F32, I8, I16],
        then: &pairs(
            &[Input(0), Input(1)],
            &[&[F32, F32], &[I8, I8], &[I8, I4], &[I16, I8]],
            P,
            None,
        ),
    },
    Check::If {
        operand: Input(1),
        is: &[I4],
        then: &Check::PerTensor {
            operand: Input(1),
            required: false,
            stage: P,
        },
    },
    Check::If {
        operand: Input(0),
        is: NOT_F32_I8_I16,
        then: &Check::PerTensor {
            operand: Input(1),
            required: false,
            stage: P,
        },
    },
    one_of(Input(0), &[F32, I8, I16], E),
];
/// `cmsis_nn/fully_connected.cc` `Prepare`: input = output type, the input
/// type alone ("Input data type not supported"), the pair ("Hybrid …"), then
/// the common per-channel rule, then per-channel only with an int8 input.
const FULLY_CONNECTED_CMSIS_NN: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    pairs(
        &[Input(0), Input(1)],
        &[&[F32, F32], &[I16, I8], &[I8, I4], &[I8, I8]],
        P,
        HYBRID,
    ),
    FULLY_CONNECTED[2],
    Check::If {
        operand: Input(0),
        is: &[I16],
        then: &Check::PerTensor {
            operand: Input(1),
            required: false,
            stage: P,
        },
    },
];

/// `transpose_conv.cc` `TransposeConvPrepare` (input is input 2, filter input
/// 1): the filter has the input's type or is int8 under an int16 input
/// ("Hybrid …"); Eval wants input type = output type, then float32, int8, int16.
const TRANSPOSE_CONV: &[Check] = &[
    pairs(&[Input(2), Input(1)], EQUAL_OR_I16_I8, P, HYBRID),
    same(&[Input(2), Output(0)], E),
    one_of(Input(2), &[F32, I8, I16], E),
];
/// `cmsis_nn/transpose_conv.cc` `Prepare`: input = output type, the input type
/// alone, then the pair.
const TRANSPOSE_CONV_CMSIS_NN: &[Check] = &[
    same(&[Input(2), Output(0)], P),
    one_of_says(Input(2), &[F32, I16, I8], P, INPUT_TYPE),
    pairs(
        &[Input(2), Input(1)],
        &[&[F32, F32], &[I16, I8], &[I8, I8]],
        P,
        HYBRID,
    ),
];

/// `batch_matmul.cc` `BatchMatMulPrepare`: each input float32, int8 or int16,
/// both of one type, the output too; ranks 2 to 5.
const BATCH_MATMUL: &[Check] = &[
    one_of(Input(0), &[F32, I8, I16], P),
    one_of(Input(1), &[F32, I8, I16], P),
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
    rank(Input(0), 2, 5, None),
    rank(Input(1), 2, 5, None),
];
/// `cmsis_nn/batch_matmul.cc` `Prepare`: the type equalities first, then the
/// input type alone, and ranks 2 to 4 only.
const BATCH_MATMUL_CMSIS_NN: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    rank(Input(0), 2, 4, None),
    rank(Input(1), 2, 4, None),
];

/// `svdf_common.cc` `PrepareSvdf` (and `cmsis_nn/svdf.cc`, which checks the
/// same types): an int8 input wants int8 feature weights, int16 or int8 time
/// weights and state, int32 bias and an int8 output; a float32 input wants
/// float32 throughout.
const SVDF: &[Check] = &[
    one_of(Input(0), &[F32, I8], P),
    pairs(
        // input, feature weights, time weights, activation state
        &[Input(0), Input(1), Input(2), Input(4)],
        &[
            &[I8, I8, I16, I16],
            &[I8, I8, I16, I8],
            &[I8, I8, I8, I16],
            &[I8, I8, I8, I8],
            &[F32, F32, F32, F32],
        ],
        P,
        None,
    ),
    pairs(&[Input(0), Input(3)], &[&[I8, I32], &[F32, F32]], P, None),
    pairs(&[Input(0), Output(0)], &[&[I8, I8], &[F32, F32]], P, None),
];

/// `unidirectional_sequence_lstm.cc`: Prepare wants a float32 or int16 cell
/// state (input 19); Eval runs float32 inputs, and int8 or int16 inputs with
/// int8 input-to-input weights.
const LSTM_TYPES: [Check; 3] = [
    one_of(Input(19), &[F32, I16], P),
    one_of(Input(0), &[F32, I8, I16], E),
    Check::If {
        operand: Input(0),
        is: &[I8, I16],
        then: &one_of(Input(1), &[I8], E),
    },
];
const UNIDIRECTIONAL_SEQUENCE_LSTM: &[Check] = &LSTM_TYPES;
/// `cmsis_nn/unidirectional_sequence_lstm.cc` `Prepare`: the weights (inputs
/// 1–8) and gate biases (12–15) must be constant, before the cell state type.
const UNIDIRECTIONAL_SEQUENCE_LSTM_CMSIS_NN: &[Check] = &[
    constant(Input(1), "input-to-input weights", None),
    constant(Input(2), "input-to-forget weights", None),
    constant(Input(3), "input-to-cell weights", None),
    constant(Input(4), "input-to-output weights", None),
    constant(Input(5), "recurrent-to-input weights", None),
    constant(Input(6), "recurrent-to-forget weights", None),
    constant(Input(7), "recurrent-to-cell weights", None),
    constant(Input(8), "recurrent-to-output weights", None),
    constant(Input(12), "input gate bias", None),
    constant(Input(13), "forget gate bias", None),
    constant(Input(14), "cell gate bias", None),
    constant(Input(15), "output gate bias", None),
    LSTM_TYPES[0],
    LSTM_TYPES[1],
    LSTM_TYPES[2],
];

// ---- softmax and activations ----------------------------------------------

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

// ---- elementwise arithmetic -------------------------------------------------

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

// ---- elementwise unary ------------------------------------------------------

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
/// `elementwise.cc` `LogicalNotEval`: bool.
const LOGICAL_NOT: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[Bool], E),
];
/// `exp.cc`, `ceil.cc`, `round.cc`: input float32, output of its type.
const FLOAT_ONLY: &[Check] = &[one_of(Input(0), &[F32], P), same(&[Output(0), Input(0)], P)];
/// `floor.cc`: no Prepare; Eval insists on float32.
const FLOOR: &[Check] = &[one_of(Input(0), &[F32], E)];
/// `neg.cc`: no Prepare; Eval float32 only.
const NEG: &[Check] = &[one_of(Input(0), &[F32], E)];
/// `cast.cc`: Eval switches on the input (int8, int16, int32, uint32,
/// float32, bool), then on the output (int8, int16, int32, uint32, float32).
const CAST: &[Check] = &[
    one_of(Input(0), &[I8, I16, I32, U32, F32, Bool], E),
    one_of(Output(0), &[I8, I16, I32, U32, F32], E),
];
/// `zeros_like.cc`: Eval int64, int32, int8, float32.
const ZEROS_LIKE: &[Check] = &[one_of(Input(0), &[I64, I32, I8, F32], E)];

// ---- comparisons ------------------------------------------------------------

/// `comparisons.cc`: Prepare checks no type; each Eval switches on input 0.
const EQUAL: &[Check] = &[one_of(Input(0), &[Bool, F32, I32, I64, I8], E)];
const GREATER: &[Check] = &[one_of(Input(0), &[F32, I32, I64, I8, I16], E)];
const LESS: &[Check] = &[one_of(Input(0), &[F32, I32, I64, I8], E)];

// ---- quantization -----------------------------------------------------------

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

// ---- pooling and reductions -------------------------------------------------

/// `pooling_common.cc` `PoolingPrepare` ("Type … not supported."), shared by
/// `cmsis_nn/pooling.cc`.
const POOL: &[Check] = &[one_of(Input(0), &[F32, I8, I16], P)];
/// `l2_pool_2d.cc`: 4-D, input type = output type, float32.
const L2_POOL_2D: &[Check] = &[
    rank(Input(0), 4, 4, None),
    rank(Output(0), 4, 4, None),
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32], P),
];
/// `l2norm.cc`: rank ≤ 4, output float32 or int8, input of its type.
const L2_NORMALIZATION: &[Check] = &[
    rank(Input(0), 0, 4, None),
    one_of(Output(0), &[F32, I8], P),
    same(&[Input(0), Output(0)], P),
];
/// `reduce_common.cc` `PrepareSimple`: an int32 axis.
const AXIS_I32: Check = one_of(Input(1), &[I32], P);
/// `reduce_common.cc` `EvalMeanHelper`.
const MEAN: &[Check] = &[
    AXIS_I32,
    one_of_says(
        Input(0),
        &[F32, I8, I16],
        E,
        Some("Currently, only float32, int8 or int16 input type is supported."),
    ),
];
/// `reduce_common.cc` `EvalSumHelper`: input type = output type, then the type.
const SUM: &[Check] = &[
    AXIS_I32,
    same(&[Input(0), Output(0)], E),
    one_of_says(
        Input(0),
        &[F32, I8, I16],
        E,
        Some("Only float32, int8, and int16 types are supported."),
    ),
];
/// `reduce_common.cc` `EvalMinMaxHelper`.
const REDUCE_MAX: &[Check] = &[
    AXIS_I32,
    same(&[Input(0), Output(0)], E),
    one_of_says(
        Input(0),
        &[F32, I8],
        E,
        Some("Only float32 and int8 types are supported."),
    ),
];
/// `reduce_common.cc` `PrepareAllHelper` (bool input, then the axis) and
/// `EvalAllHelper` (input type = output type).
const REDUCE_ALL: &[Check] = &[
    one_of(Input(0), &[Bool], P),
    AXIS_I32,
    same(&[Input(0), Output(0)], E),
];
/// `cumsum.cc`: float32 or int8 input, int32 axis, output of the input's type.
const CUMSUM: &[Check] = &[
    one_of(Input(0), &[F32, I8], P),
    one_of(Input(1), &[I32], P),
    same(&[Input(0), Output(0)], P),
];
/// `arg_min_max.cc`: no Prepare; Eval wants an int32 axis, an int32 output,
/// then a float32 or int8 input.
const ARG_MAX: &[Check] = &[
    one_of(Input(1), &[I32], E),
    one_of(Output(0), &[I32], E),
    one_of(Input(0), &[F32, I8], E),
];

// ---- shapes and data movement -----------------------------------------------

/// `reshape_common.cc` `ReshapeOutput`: input type = output type.
const RESHAPE: &[Check] = &[same(&[Input(0), Output(0)], P)];
/// `concatenation.cc` `ConcatenationPrepare`: input 0 bool, float32, int8,
/// int16, int32 or int64, the output and every input of its type.
const CONCATENATION: &[Check] = &[
    one_of(Input(0), &[F32, I8, I16, I32, I64, Bool], P),
    same(&[Output(0), Input(0)], P),
    Check::InputsLike {
        first: 1,
        like: Input(0),
        stage: P,
    },
];
/// `pad_common.cc` `PadPrepare` (shared by `cmsis_nn/pad.cc`): input type =
/// output type, rank ≤ 5, the PADV2 value of the input's type, constant
/// paddings; Eval float32, int8, int16, int32.
const PAD: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    rank(Input(0), 0, 5, None),
    same(&[Input(0), Input(2)], P),
    constant(
        Input(1),
        "the paddings",
        Some("Non-constant >paddings< tensor is not supported"),
    ),
    one_of(Input(0), &[F32, I8, I16, I32], E),
];
/// `mirror_pad.cc`: Eval's switch on the output has float32 and int8.
const MIRROR_PAD: &[Check] = &[one_of(Output(0), &[F32, I8], E)];
/// `strided_slice_common.cc` `StridedSlicePrepare`: rank ≤ 4, begin, end and
/// strides constant; `strided_slice.cc` Eval float32, int8, int16, int32, bool.
const STRIDED_SLICE: &[Check] = &[
    rank(Input(0), 0, 4, Some("input dim should not exceed 4")),
    constant(
        Input(1),
        "begin",
        Some("Non-constant >begin< tensor is not supported"),
    ),
    constant(
        Input(2),
        "end",
        Some("Non-constant >end< tensor is not supported"),
    ),
    constant(
        Input(3),
        "strides",
        Some("Non-constant >strides< tensor is not supported"),
    ),
    one_of(Output(0), &[F32, I8, I16, I32, Bool], E),
];
/// `slice.cc`: Prepare only DCHECKs; Eval wants int32/int64 begin, then
/// float32, int32, int8, int16 or bool data.
const SLICE: &[Check] = &[
    one_of(Input(1), &[I32, I64], E),
    one_of(Input(0), &[F32, I32, I8, I16, Bool], E),
];
/// `transpose_common.cc` `TransposePrepare` (shared by `cmsis_nn/transpose.cc`):
/// rank ≤ 5, input type = output type, constant permutation; Eval float32,
/// int8, int16.
const TRANSPOSE: &[Check] = &[
    rank(
        Input(0),
        0,
        5,
        Some("Transpose op only supports 1D-5D input arrays."),
    ),
    same(&[Input(0), Output(0)], P),
    constant(
        Input(1),
        "the permutation",
        Some("Non-constant >perm< tensor is not supported"),
    ),
    one_of(Input(0), &[F32, I8, I16], E),
];
/// `split.cc` (axis is input 0): constant axis; Eval float32, int8, int16, int32.
const SPLIT: &[Check] = &[
    constant(
        Input(0),
        "the axis",
        Some("Non-constant >axis< tensor is not supported"),
    ),
    one_of(Input(1), &[F32, I8, I16, I32], E),
];
/// `split_v.cc` (axis is input 2).
const SPLIT_V: &[Check] = &[
    constant(
        Input(2),
        "the axis",
        Some("Non-constant >axis< tensor is not supported"),
    ),
    one_of(Input(0), &[F32, I8, I16, I32], E),
];
/// `pack.cc`: no Prepare; Eval output float32, int8, int16, int32, int64.
const PACK: &[Check] = &[one_of(Output(0), &[F32, I8, I16, I32, I64], E)];
/// `unpack.cc`: no Prepare; Eval input float32, int32, int16, int8.
const UNPACK: &[Check] = &[one_of(Input(0), &[F32, I32, I16, I8], E)];
/// `gather.cc` `GatherPrepare`: int32 positions, then float32 or int8 data.
const GATHER: &[Check] = &[one_of(Input(1), &[I32], P), one_of(Input(0), &[F32, I8], P)];
/// `gather_nd.cc` `GatherNdPrepare`: float32 or int8 params, int32 indices.
const GATHER_ND: &[Check] = &[one_of(Input(0), &[F32, I8], P), one_of(Input(1), &[I32], P)];
/// `expand_dims.cc`: constant int32 axis in Prepare; Eval float32, int16, int8.
const EXPAND_DIMS: &[Check] = &[
    constant(
        Input(1),
        "the axis",
        Some("Non-constant >axis< tensor is not supported"),
    ),
    one_of(Input(1), &[I32], P),
    one_of(Input(0), &[F32, I16, I8], E),
];
/// `resize_bilinear.cc`: 4-D input, int32 constant size; Eval output float32, int8.
const RESIZE_BILINEAR: &[Check] = &[
    rank(Input(0), 4, 4, None),
    one_of(Input(1), &[I32], P),
    constant(
        Input(1),
        "the output size",
        Some("Non-constant >size< tensor is not supported"),
    ),
    one_of(Output(0), &[F32, I8], E),
];
/// `resize_nearest_neighbor.cc`: as bilinear; Eval output float32, int8, int16.
const RESIZE_NEAREST_NEIGHBOR: &[Check] = &[
    RESIZE_BILINEAR[0],
    RESIZE_BILINEAR[1],
    RESIZE_BILINEAR[2],
    one_of(Output(0), &[F32, I8, I16], E),
];
/// `depth_to_space.cc` and `space_to_depth.cc`: 4-D, output float32 or int8,
/// input of its type.
const DEPTH_TO_SPACE: &[Check] = &[
    rank(Input(0), 4, 4, None),
    one_of(Output(0), &[F32, I8], P),
    same(&[Input(0), Output(0)], P),
];
/// `batch_to_space_nd.cc` and `space_to_batch_nd.cc`: ranks 3 to 4, input
/// type = output type; Eval float32, int8.
const BATCH_TO_SPACE_ND: &[Check] = &[
    rank(Input(0), 3, 4, None),
    rank(Output(0), 3, 4, None),
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I8], E),
];
/// `reverse.cc` `ReverseV2Prepare`.
const REVERSE_V2: &[Check] = &[
    one_of(Input(0), &[I32, F32, U8, I8, I16, I64, Bool], P),
    one_of(Input(1), &[I32], P),
    same(&[Input(0), Output(0)], P),
];
/// `select.cc`: bool condition, x and y of one type; Eval float32, int8, int16.
const SELECT_V2: &[Check] = &[
    one_of(Input(0), &[Bool], P),
    same(&[Input(1), Input(2)], P),
    one_of(Input(1), &[F32, I8, I16], E),
];
/// `shape.cc`: Eval writes int32 only.
const SHAPE: &[Check] = &[one_of(Output(0), &[I32], E)];
/// `embedding_lookup.cc`: int32 lookup, float32 or int8 values, float32 values
/// to float32, int8 values to float32 or int8.
const EMBEDDING_LOOKUP: &[Check] = &[
    one_of(Input(0), &[I32], P),
    one_of(Input(1), &[F32, I8], P),
    pairs(
        &[Input(1), Output(0)],
        &[&[F32, F32], &[I8, F32], &[I8, I8]],
        P,
        None,
    ),
];
/// `fill.cc`: Prepare wants the value's type to be the output's, and checks the
/// output shape against the dims tensor, so that must be constant; Eval fills
/// float32, int32 and int8 values only.
const FILL: &[Check] = &[
    same(&[Input(1), Output(0)], P),
    constant(
        Input(0),
        "the output shape",
        Some("Non-constant >dims< tensor is not supported"),
    ),
    one_of(Input(1), &[F32, I32, I8], E),
];
/// `broadcast_to.cc`: int32/int64 shape, input type = output type, constant shape.
const BROADCAST_TO: &[Check] = &[
    one_of(Input(1), &[I32, I64], P),
    same(&[Input(0), Output(0)], P),
    constant(
        Input(1),
        "the output shape",
        Some("Non-constant >shape< tensor is not supported"),
    ),
];
/// `broadcast_args.cc`: int32 or int64 shapes, all of one type.
const BROADCAST_ARGS: &[Check] = &[
    one_of(Input(0), &[I32, I64], P),
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
];
/// `dynamic_update_slice.cc`: operand and update of one type, int32/int64
/// indices; Eval float32, int8, int16, int32.
const DYNAMIC_UPDATE_SLICE: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    one_of(Input(2), &[I32, I64], P),
    one_of(Input(0), &[F32, I8, I16, I32], E),
];

// ---- control flow and variables ----------------------------------------------

/// `if.cc`: a bool condition.
const IF: &[Check] = &[one_of(Input(0), &[Bool], P)];
/// `assign_variable.cc`: a resource or int32 id.
const ASSIGN_VARIABLE: &[Check] = &[one_of(Input(0), &[Resource, I32], P)];

/// Every builtin TFLM registers (100 at 90b983c2), with its checks.
pub const KERNELS: &[Kernel] = &[
    checked(c::ABS, ABS),
    both(c::ADD, ADD, ADD_CMSIS_NN),
    checked(c::ADD_N, ADD_N),
    checked(c::ARG_MAX, ARG_MAX),
    checked(c::ARG_MIN, ARG_MAX),
    checked(c::ASSIGN_VARIABLE, ASSIGN_VARIABLE),
    same_in_cmsis_nn(c::AVERAGE_POOL_2D, POOL),
    both(c::BATCH_MATMUL, BATCH_MATMUL, BATCH_MATMUL_CMSIS_NN),
    checked(c::BATCH_TO_SPACE_ND, BATCH_TO_SPACE_ND),
    checked(c::BROADCAST_ARGS, BROADCAST_ARGS),
    checked(c::BROADCAST_TO, BROADCAST_TO),
    // call_once.cc checks only counts and the subgraph index.
    open(c::CALL_ONCE),
    checked(c::CAST, CAST),
    checked(c::CEIL, FLOAT_ONLY),
    checked(c::CONCATENATION, CONCATENATION),
    both(c::CONV_2D, CONV_2D, CONV_2D_CMSIS_NN),
    checked(c::COS, FLOAT_UNARY),
    checked(c::CUMSUM, CUMSUM),
    // cmsis_nn/depthwise_conv.cc Prepare checks exactly what cmsis_nn/conv.cc does.
    both(c::DEPTHWISE_CONV_2D, DEPTHWISE_CONV_2D, CONV_2D_CMSIS_NN),
    checked(c::DEPTH_TO_SPACE, DEPTH_TO_SPACE),
    checked(c::DEQUANTIZE, DEQUANTIZE),
    checked(c::DIV, DIV),
    checked(c::DYNAMIC_UPDATE_SLICE, DYNAMIC_UPDATE_SLICE),
    checked(c::ELU, ELU),
    checked(c::EMBEDDING_LOOKUP, EMBEDDING_LOOKUP),
    checked(c::EQUAL, EQUAL),
    checked(c::EXP, FLOAT_ONLY),
    checked(c::EXPAND_DIMS, EXPAND_DIMS),
    checked(c::FILL, FILL),
    checked(c::FLOOR, FLOOR),
    checked(c::FLOOR_DIV, FLOOR_DIV),
    checked(c::FLOOR_MOD, FLOOR_MOD),
    both(
        c::FULLY_CONNECTED,
        FULLY_CONNECTED,
        FULLY_CONNECTED_CMSIS_NN,
    ),
    checked(c::GATHER, GATHER),
    checked(c::GATHER_ND, GATHER_ND),
    checked(c::GREATER, GREATER),
    checked(c::GREATER_EQUAL, LESS),
    checked(c::HARD_SWISH, HARD_SWISH),
    checked(c::IF, IF),
    checked(c::L2_NORMALIZATION, L2_NORMALIZATION),
    checked(c::L2_POOL_2D, L2_POOL_2D),
    checked(c::LEAKY_RELU, LEAKY_RELU),
    checked(c::LESS, LESS),
    checked(c::LESS_EQUAL, LESS),
    checked(c::LOG, FLOAT_UNARY),
    // logical.cc / logical_common.cc: no Prepare, and Eval reads the data as
    // bool whatever its type.
    open(c::LOGICAL_AND),
    checked(c::LOGICAL_NOT, LOGICAL_NOT),
    open(c::LOGICAL_OR),
    checked(c::LOGISTIC, LOGISTIC),
    checked(c::LOG_SOFTMAX, LOG_SOFTMAX),
    same_in_cmsis_nn(c::MAXIMUM, MAXIMUM),
    same_in_cmsis_nn(c::MAX_POOL_2D, POOL),
    checked(c::MEAN, MEAN),
    same_in_cmsis_nn(c::MINIMUM, MAXIMUM),
    checked(c::MIRROR_PAD, MIRROR_PAD),
    same_in_cmsis_nn(c::MUL, MUL),
    checked(c::NEG, NEG),
    checked(c::NOT_EQUAL, EQUAL),
    checked(c::PACK, PACK),
    same_in_cmsis_nn(c::PAD, PAD),
    same_in_cmsis_nn(c::PADV2, PAD),
    checked(c::PRELU, PRELU),
    checked(c::QUANTIZE, QUANTIZE),
    // read_variable.cc only DCHECKs the id's type (a no-op in release builds).
    open(c::READ_VARIABLE),
    checked(c::REDUCE_ALL, REDUCE_ALL),
    checked(c::REDUCE_MAX, REDUCE_MAX),
    checked(c::REDUCE_MIN, REDUCE_MAX),
    checked(c::RELU, RELU),
    checked(c::RELU6, RELU),
    checked(c::RESHAPE, RESHAPE),
    checked(c::RESIZE_BILINEAR, RESIZE_BILINEAR),
    checked(c::RESIZE_NEAREST_NEIGHBOR, RESIZE_NEAREST_NEIGHBOR),
    checked(c::REVERSE_V2, REVERSE_V2),
    checked(c::ROUND, FLOAT_ONLY),
    checked(c::RSQRT, ABS),
    checked(c::SELECT_V2, SELECT_V2),
    checked(c::SHAPE, SHAPE),
    checked(c::SIN, FLOAT_UNARY),
    checked(c::SLICE, SLICE),
    both(c::SOFTMAX, SOFTMAX, SOFTMAX_CMSIS_NN),
    checked(c::SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND),
    checked(c::SPACE_TO_DEPTH, DEPTH_TO_SPACE),
    checked(c::SPLIT, SPLIT),
    checked(c::SPLIT_V, SPLIT_V),
    checked(c::SQRT, FLOAT_UNARY),
    checked(c::SQUARE, FLOAT_UNARY),
    checked(c::SQUARED_DIFFERENCE, SQUARED_DIFFERENCE),
    // squeeze.cc refuses only string tensors, which no TFLM model carries.
    open(c::SQUEEZE),
    checked(c::STRIDED_SLICE, STRIDED_SLICE),
    checked(c::SUB, ADD),
    checked(c::SUM, SUM),
    same_in_cmsis_nn(c::SVDF, SVDF),
    checked(c::TANH, LOGISTIC),
    same_in_cmsis_nn(c::TRANSPOSE, TRANSPOSE),
    both(c::TRANSPOSE_CONV, TRANSPOSE_CONV, TRANSPOSE_CONV_CMSIS_NN),
    both(
        c::UNIDIRECTIONAL_SEQUENCE_LSTM,
        UNIDIRECTIONAL_SEQUENCE_LSTM,
        UNIDIRECTIONAL_SEQUENCE_LSTM_CMSIS_NN,
    ),
    checked(c::UNPACK, UNPACK),
    // var_handle.cc and while.cc check counts and resources, not types.
    open(c::VAR_HANDLE),
    open(c::WHILE),
    checked(c::ZEROS_LIKE, ZEROS_LIKE),
];
