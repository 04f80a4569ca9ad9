//! TFLM's registered builtin kernels and the tensor types each accepts, so a
//! model TFLM would refuse is named before anyone flashes it.
//!
//! Source: tensorflow/tflite-micro `90b983c2b3f1480642e040bbd2ddb37b998f3424`
//! (see `docs/tflm-kernels.md`). "Registered" means `MicroMutableOpResolver`
//! (`tensorflow/lite/micro/micro_mutable_op_resolver.h`) has an `Add…` method
//! for the builtin: the wheel and the Cortex-M oracle register all of them, so a
//! builtin missing from [`KERNELS`] fails in `MicroInterpreter` before any
//! kernel runs. Type rules are recorded only where Prepare and Eval were read
//! line by line; a kernel with no rule here is assumed to accept the model.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::read::dtype::DType;
use crate::read::model::{Model, Operator};
use crate::tflm::profile::Backend;
use microarena_image::opcode as c;

/// When TFLM notices the problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The interpreter finds no kernel for the op code, before any kernel runs,
    /// so `AllocateTensors` fails.
    Resolve,
    /// The kernel's Prepare fails, so `AllocateTensors` fails.
    Prepare,
    /// Prepare accepts the op (TFLM even reports arena figures), but Eval has
    /// no case for it, so the first `Invoke` fails.
    Invoke,
}

/// A tensor of an operator, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// Input `n`.
    Input(usize),
    /// Output `n`.
    Output(usize),
}

/// One thing a kernel checks before it can run an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The operands' types, in order, must be one of the `accepted` rows.
    Types {
        /// The tensors whose types are checked.
        operands: &'static [Operand],
        /// Accepted type combinations, one entry per operand.
        accepted: &'static [&'static [DType]],
        /// Where the kernel refuses anything else.
        stage: Stage,
        /// TFLM's own message, where it prints a fixed one.
        tflm_says: Option<&'static str>,
    },
    /// The operands must all have the same type.
    SameType {
        /// The tensors compared.
        operands: &'static [Operand],
        /// Where the kernel refuses a mismatch.
        stage: Stage,
    },
    /// The operand must be a constant (its buffer holds data).
    Constant {
        /// The tensor.
        operand: Operand,
        /// What the kernel reads from it.
        what: &'static str,
        /// Where the kernel refuses a non-constant one.
        stage: Stage,
    },
}

/// One registered builtin kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kernel {
    /// Builtin code (the image crate's operator table).
    pub code: u8,
    /// What the reference kernel checks, in the order it checks.
    pub reference: &'static [Check],
    /// What the CMSIS-NN kernel checks, where it differs from the reference one.
    pub cmsis_nn: Option<&'static [Check]>,
}

impl Kernel {
    /// The checks this kernel makes on `backend`.
    pub fn checks(&self, backend: Backend) -> &'static [Check] {
        match (backend, self.cmsis_nn) {
            (Backend::CmsisNn(_), Some(checks)) => checks,
            _ => self.reference,
        }
    }
}

/// Why TFLM would not run one operator (see [`check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The builtin has no kernel in TFLM.
    NotRegistered,
    /// A [`Check::Types`] or [`Check::SameType`] failed: the operands' types as found.
    Types {
        /// The failed check.
        check: &'static Check,
        /// The operands' types, in the check's order (`found[..n]`).
        found: [DType; MAX_OPERANDS],
    },
    /// A [`Check::Constant`] failed.
    NotConstant {
        /// The failed check.
        check: &'static Check,
    },
}

/// Most operands one type check looks at.
pub const MAX_OPERANDS: usize = 4;

impl Rejection {
    /// Where TFLM fails.
    pub fn stage(&self) -> Stage {
        match self {
            Rejection::NotRegistered => Stage::Resolve,
            Rejection::Types { check, .. } | Rejection::NotConstant { check } => match check {
                Check::Types { stage, .. }
                | Check::SameType { stage, .. }
                | Check::Constant { stage, .. } => *stage,
            },
        }
    }
}

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

use DType::{Bool, F16, F32, F64, I4, I8, I16, I32, I64, U8, U16, U32, U64};
use Operand::{Input, Output};

/// `conv_common.cc` `ConvPrepare`: input type = output type, then the
/// (input, filter) pair, else "Hybrid" — uint8 included.
const CONV_2D_TYPES: [Check; 2] = [
    Check::SameType {
        operands: &[Input(0), Output(0)],
        stage: Stage::Prepare,
    },
    Check::Types {
        operands: &[Input(0), Input(1)],
        accepted: &[&[F32, F32], &[I16, I8], &[I8, I4], &[I8, I8]],
        stage: Stage::Prepare,
        tflm_says: Some("Hybrid models are not supported on TFLite Micro."),
    },
];
const CONV_2D_REFERENCE: &[Check] = &CONV_2D_TYPES;
/// `cmsis_nn/conv.cc` and `cmsis_nn/depthwise_conv.cc` `Prepare`: after input
/// type = output type, the input type is checked on its own, before the pair.
const CONV_2D_CMSIS_NN: &[Check] = &[
    CONV_2D_TYPES[0],
    Check::Types {
        operands: &[Input(0)],
        accepted: &[&[F32], &[I16], &[I8]],
        stage: Stage::Prepare,
        tflm_says: Some("Input data type not supported"),
    },
    CONV_2D_TYPES[1],
];
/// `depthwise_conv_common.cc` `DepthwiseConvPrepare`: the filter may have the
/// input's type (any type, so uint8/uint8 passes: `PopulateConvolutionQuantizationParams`
/// still quantizes uint8 per tensor), or int8/int4, int16/int8; `depthwise_conv.cc`
/// `Eval` then runs float32, int8 (int4 or int8 filter) and int16 (int8 filter) only.
const DEPTHWISE_CONV_2D: &[Check] = &[
    Check::Types {
        operands: &[Input(0), Input(1)],
        accepted: &[
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
        stage: Stage::Prepare,
        tflm_says: Some("Hybrid models are not supported on TFLite Micro."),
    },
    Check::Types {
        operands: &[Input(0), Input(1)],
        accepted: &[&[F32, F32], &[I8, I4], &[I8, I8], &[I16, I8]],
        stage: Stage::Invoke,
        tflm_says: None,
    },
];
/// `softmax_common.cc` `SoftmaxPrepare` / `CalculateSoftmaxParams`.
const SOFTMAX: &[Check] = &[Check::Types {
    operands: &[Input(0), Output(0)],
    accepted: &[&[F32, F32], &[I8, I8], &[I8, I16], &[I16, I16]],
    stage: Stage::Prepare,
    tflm_says: None,
}];
/// `cmsis_nn/softmax.cc` `Prepare`: input and output of one type (or int8→int16),
/// then the input type on its own, before the reference parameter checks.
const SOFTMAX_CMSIS_NN: &[Check] = &[
    Check::Types {
        operands: &[Input(0), Output(0)],
        accepted: &[
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
        ],
        stage: Stage::Prepare,
        tflm_says: Some("Input and output data types are not supported together."),
    },
    Check::Types {
        operands: &[Input(0)],
        accepted: &[&[F32], &[I16], &[I8]],
        stage: Stage::Prepare,
        tflm_says: Some("Input data type not supported"),
    },
    SOFTMAX[0],
];
/// `floor_mod.cc`: Prepare wants one type; Eval handles float32 only (it
/// prints "Type '…' is not supported by FLOOR_MOD.").
const FLOOR_MOD: &[Check] = &[
    Check::SameType {
        operands: &[Input(0), Input(1), Output(0)],
        stage: Stage::Prepare,
    },
    Check::Types {
        operands: &[Input(0)],
        accepted: &[&[F32]],
        stage: Stage::Invoke,
        tflm_says: None,
    },
];
/// `fill.cc`: Prepare wants the value's type to be the output's, and checks the
/// output shape against the dims tensor, so that must be constant; Eval fills
/// float32, int32 and int8 values only.
const FILL: &[Check] = &[
    Check::SameType {
        operands: &[Input(1), Output(0)],
        stage: Stage::Prepare,
    },
    Check::Constant {
        operand: Input(0),
        what: "the output shape",
        stage: Stage::Prepare,
    },
    Check::Types {
        operands: &[Input(1)],
        accepted: &[&[F32], &[I32], &[I8]],
        stage: Stage::Invoke,
        tflm_says: None,
    },
];

/// Every builtin TFLM registers (100 at 90b983c2), with its type rules where known.
pub const KERNELS: &[Kernel] = &[
    open(c::ABS),
    open(c::ADD),
    open(c::ADD_N),
    open(c::ARG_MAX),
    open(c::ARG_MIN),
    open(c::ASSIGN_VARIABLE),
    open(c::AVERAGE_POOL_2D),
    open(c::BATCH_MATMUL),
    open(c::BATCH_TO_SPACE_ND),
    open(c::BROADCAST_ARGS),
    open(c::BROADCAST_TO),
    open(c::CALL_ONCE),
    open(c::CAST),
    open(c::CEIL),
    open(c::CONCATENATION),
    Kernel {
        code: c::CONV_2D,
        reference: CONV_2D_REFERENCE,
        cmsis_nn: Some(CONV_2D_CMSIS_NN),
    },
    open(c::COS),
    open(c::CUMSUM),
    Kernel {
        code: c::DEPTHWISE_CONV_2D,
        reference: DEPTHWISE_CONV_2D,
        // cmsis_nn/depthwise_conv.cc Prepare checks exactly what cmsis_nn/conv.cc does.
        cmsis_nn: Some(CONV_2D_CMSIS_NN),
    },
    open(c::DEPTH_TO_SPACE),
    open(c::DEQUANTIZE),
    open(c::DIV),
    open(c::DYNAMIC_UPDATE_SLICE),
    open(c::ELU),
    open(c::EMBEDDING_LOOKUP),
    open(c::EQUAL),
    open(c::EXP),
    open(c::EXPAND_DIMS),
    checked(c::FILL, FILL),
    open(c::FLOOR),
    open(c::FLOOR_DIV),
    checked(c::FLOOR_MOD, FLOOR_MOD),
    open(c::FULLY_CONNECTED),
    open(c::GATHER),
    open(c::GATHER_ND),
    open(c::GREATER),
    open(c::GREATER_EQUAL),
    open(c::HARD_SWISH),
    open(c::IF),
    open(c::L2_NORMALIZATION),
    open(c::L2_POOL_2D),
    open(c::LEAKY_RELU),
    open(c::LESS),
    open(c::LESS_EQUAL),
    open(c::LOG),
    open(c::LOGICAL_AND),
    open(c::LOGICAL_NOT),
    open(c::LOGICAL_OR),
    open(c::LOGISTIC),
    open(c::LOG_SOFTMAX),
    open(c::MAXIMUM),
    open(c::MAX_POOL_2D),
    open(c::MEAN),
    open(c::MINIMUM),
    open(c::MIRROR_PAD),
    open(c::MUL),
    open(c::NEG),
    open(c::NOT_EQUAL),
    open(c::PACK),
    open(c::PAD),
    open(c::PADV2),
    open(c::PRELU),
    open(c::QUANTIZE),
    open(c::READ_VARIABLE),
    open(c::REDUCE_ALL),
    open(c::REDUCE_MAX),
    open(c::REDUCE_MIN),
    open(c::RELU),
    open(c::RELU6),
    open(c::RESHAPE),
    open(c::RESIZE_BILINEAR),
    open(c::RESIZE_NEAREST_NEIGHBOR),
    open(c::REVERSE_V2),
    open(c::ROUND),
    open(c::RSQRT),
    open(c::SELECT_V2),
    open(c::SHAPE),
    open(c::SIN),
    open(c::SLICE),
    Kernel {
        code: c::SOFTMAX,
        reference: SOFTMAX,
        cmsis_nn: Some(SOFTMAX_CMSIS_NN),
    },
    open(c::SPACE_TO_BATCH_ND),
    open(c::SPACE_TO_DEPTH),
    open(c::SPLIT),
    open(c::SPLIT_V),
    open(c::SQRT),
    open(c::SQUARE),
    open(c::SQUARED_DIFFERENCE),
    open(c::SQUEEZE),
    open(c::STRIDED_SLICE),
    open(c::SUB),
    open(c::SUM),
    open(c::SVDF),
    open(c::TANH),
    open(c::TRANSPOSE),
    open(c::TRANSPOSE_CONV),
    open(c::UNIDIRECTIONAL_SEQUENCE_LSTM),
    open(c::UNPACK),
    open(c::VAR_HANDLE),
    open(c::WHILE),
    open(c::ZEROS_LIKE),
];

/// The registered kernel for builtin `code`, if TFLM has one.
pub fn kernel(code: i32) -> Option<&'static Kernel> {
    KERNELS.iter().find(|k| i32::from(k.code) == code)
}

/// Why TFLM built with `backend` would not run builtin operator `op` of
/// subgraph `g`, if it would not. Custom operators are resolved by name and
/// are not checked here. Checks on operands the op lacks (an omitted optional
/// input) are skipped.
pub fn check(
    model: &Model<'_>,
    g: usize,
    op: &Operator<'_>,
    backend: Backend,
) -> Option<Rejection> {
    if op.opcode.0 == i32::from(c::CUSTOM) {
        return None;
    }
    let Some(kernel) = kernel(op.opcode.0) else {
        return Some(Rejection::NotRegistered);
    };
    let tensor = |o: &Operand| {
        let t = match *o {
            Input(n) => op.input(n),
            Output(n) => op.output(n),
        };
        t.and_then(|t| model.tensor(g, t))
    };
    for check in kernel.checks(backend) {
        match check {
            Check::Types {
                operands, accepted, ..
            } => {
                let Some(found) = types(operands, &tensor) else {
                    continue;
                };
                let n = operands.len();
                if !accepted.iter().any(|row| row[..] == found[..n]) {
                    return Some(Rejection::Types { check, found });
                }
            }
            Check::SameType { operands, .. } => {
                let Some(found) = types(operands, &tensor) else {
                    continue;
                };
                if found[..operands.len()].windows(2).any(|w| w[0] != w[1]) {
                    return Some(Rejection::Types { check, found });
                }
            }
            Check::Constant { operand, .. } => {
                if tensor(operand).is_some_and(|t| !t.has_data) {
                    return Some(Rejection::NotConstant { check });
                }
            }
        }
    }
    None
}

/// The operands' types, or `None` when an operand is missing or there are too many.
fn types<'m>(
    operands: &[Operand],
    tensor: &impl Fn(&Operand) -> Option<&'m crate::read::model::Tensor<'m>>,
) -> Option<[DType; MAX_OPERANDS]> {
    let mut found = [DType::F32; MAX_OPERANDS];
    if operands.len() > MAX_OPERANDS {
        return None;
    }
    for (slot, o) in found.iter_mut().zip(operands) {
        *slot = tensor(o)?.dtype;
    }
    Some(found)
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input(n) => write!(f, "input {n}"),
            Output(n) => write!(f, "output {n}"),
        }
    }
}

/// What `rejection` of op `name` means, for a person: which tensors, what
/// they hold, what the kernel on `backend` accepts, and TFLM's own words.
pub fn describe(rejection: &Rejection, name: &str, backend: Backend) -> String {
    let kernel = || format!("the {} {name} kernel", backend.name());
    match rejection {
        Rejection::NotRegistered => format!(
            "TFLM has no {name} kernel (MicroMutableOpResolver registers none); its allocations are counted as 0"
        ),
        Rejection::Types { check, found } => match check {
            Check::Types {
                operands,
                accepted,
                tflm_says,
                ..
            } => {
                let what = if operands.len() == 1 {
                    "a type"
                } else {
                    "a type combination"
                };
                let mut s = format!(
                    "{} is not {what} {} accepts (",
                    typed(operands, found),
                    kernel()
                );
                for (i, row) in accepted.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    for (j, t) in row.iter().enumerate() {
                        if j > 0 {
                            s.push('/');
                        }
                        s.push_str(t.name());
                    }
                }
                s.push(')');
                if let Some(says) = tflm_says {
                    s.push_str(&format!("; TFLM says \"{says}\""));
                }
                s
            }
            Check::SameType { operands, .. } => format!(
                "{} needs {} of one type, found {}",
                kernel(),
                join(operands.iter().map(|o| format!("{o}"))),
                join(found.iter().take(operands.len()).map(|t| format!("{t}")))
            ),
            Check::Constant { .. } => String::new(),
        },
        Rejection::NotConstant { check } => match check {
            Check::Constant { operand, what, .. } => format!(
                "{operand} ({what}) is not a constant tensor, and {} needs it constant",
                kernel()
            ),
            _ => String::new(),
        },
    }
}

/// `input 0 uint8, input 1 uint8`.
fn typed(operands: &[Operand], found: &[DType; MAX_OPERANDS]) -> String {
    join(operands.iter().zip(found).map(|(o, t)| format!("{o} {t}")))
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}
