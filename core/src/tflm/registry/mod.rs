//! TFLM's registered builtin kernels and the tensor types each accepts, so a
//! model TFLM would refuse is named before anyone flashes it.
//!
//! Source: tensorflow/tflite-micro `90b983c2b3f1480642e040bbd2ddb37b998f3424`
//! (see `docs/tflm-kernels.md`). "Registered" means `MicroMutableOpResolver`
//! (`tensorflow/lite/micro/micro_mutable_op_resolver.h`) has an `Add…` method
//! for the builtin: the wheel and the Cortex-M oracle register all of them, so a
//! builtin missing from [`KERNELS`] fails in `MicroInterpreter` before any
//! kernel runs. What each kernel checks is declared on its row in its
//! family's file under `tflm::kernels` (each citing the files its Prepare and
//! Eval were read from); this module is the machinery that applies them to a
//! model, and `checks` the vocabulary the rows are written in.

pub(crate) mod checks;

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::read::dtype::DType;
use crate::read::model::{Model, Operator, Tensor};
use crate::tflm::kernels::{self, Kernel};
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

/// One thing a kernel checks before it can run an op. A check whose operand
/// the op lacks (an omitted optional input) is skipped.
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
    /// One operand's type must be one of `types`.
    OneOf {
        /// The tensor.
        operand: Operand,
        /// The types the kernel accepts.
        types: &'static [DType],
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
        /// TFLM's own message, where it prints a fixed one.
        tflm_says: Option<&'static str>,
    },
    /// Every input from index `first` on (the op may have any number) must
    /// have the type of `like` (CONCATENATION, ADD_N).
    InputsLike {
        /// The first input compared.
        first: usize,
        /// The tensor whose type they must share.
        like: Operand,
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
        /// TFLM's own message, where it prints a fixed one.
        tflm_says: Option<&'static str>,
    },
    /// The operand may carry at most one quantization scale (no per-channel
    /// quantization); with `required`, exactly one.
    PerTensor {
        /// The tensor.
        operand: Operand,
        /// It must be quantized at all.
        required: bool,
        /// Where the kernel refuses anything else.
        stage: Stage,
    },
    /// The operand's rank (number of dimensions) must lie in `min..=max`.
    Rank {
        /// The tensor.
        operand: Operand,
        /// Smallest rank accepted.
        min: usize,
        /// Largest rank accepted.
        max: usize,
        /// Where the kernel refuses anything else.
        stage: Stage,
        /// TFLM's own message, where it prints a fixed one.
        tflm_says: Option<&'static str>,
    },
    /// `then` applies only when `operand`'s type is one of `is` (a kernel
    /// that checks the filter only for some input types, say).
    If {
        /// The tensor whose type selects the check.
        operand: Operand,
        /// The types for which `then` applies.
        is: &'static [DType],
        /// The check that applies then.
        then: &'static Check,
    },
}

impl Check {
    /// Where the kernel refuses what this check rejects.
    pub fn stage(&self) -> Stage {
        match self {
            Check::Types { stage, .. }
            | Check::OneOf { stage, .. }
            | Check::SameType { stage, .. }
            | Check::InputsLike { stage, .. }
            | Check::Constant { stage, .. }
            | Check::PerTensor { stage, .. }
            | Check::Rank { stage, .. } => *stage,
            Check::If { then, .. } => then.stage(),
        }
    }

    fn tflm_says(&self) -> Option<&'static str> {
        match self {
            Check::Types { tflm_says, .. }
            | Check::OneOf { tflm_says, .. }
            | Check::SameType { tflm_says, .. }
            | Check::Constant { tflm_says, .. }
            | Check::Rank { tflm_says, .. } => *tflm_says,
            Check::InputsLike { .. } | Check::PerTensor { .. } | Check::If { .. } => None,
        }
    }
}

/// The checks TFLM's kernel for `k` makes when built with `backend`: the
/// optimized build's own where it substitutes a kernel that checks otherwise.
pub fn checks_of(k: &Kernel, backend: Backend) -> &'static [Check] {
    let own = match backend {
        Backend::CmsisNn(_) => k.cmsis_nn.and_then(|c| c.checks),
        Backend::EspNn(_) => k.esp_nn.and_then(|c| c.checks),
        Backend::Reference => None,
    };
    own.unwrap_or(k.checks)
}

/// Most operands one type check looks at.
pub const MAX_OPERANDS: usize = 4;

/// What a failed check found on the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// The checked operands' types, in the check's order (`[..n]`; one for
    /// [`Check::OneOf`]).
    Types([DType; MAX_OPERANDS]),
    /// [`Check::InputsLike`]: input `index` has `dtype`, the reference `like`.
    Input {
        /// The input that differs.
        index: usize,
        /// Its type.
        dtype: DType,
        /// The type it should have had.
        like: DType,
    },
    /// [`Check::Constant`]: the tensor is not constant.
    NotConstant,
    /// [`Check::PerTensor`]: the number of quantization scales.
    Scales(usize),
    /// [`Check::Rank`]: the tensor's rank.
    Rank(usize),
}

/// Why TFLM would not run one operator (see [`check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The builtin has no kernel in TFLM.
    NotRegistered,
    /// A check of the kernel failed.
    Failed {
        /// The kernel that refused.
        kernel: &'static Kernel,
        /// The failed check (inside a [`Check::If`], the inner one).
        check: &'static Check,
        /// What the op has instead.
        found: Found,
        /// For a check inside a [`Check::If`]: the operand and type that selected it.
        given: Option<(Operand, DType)>,
    },
}

impl Rejection {
    /// Where TFLM fails.
    pub fn stage(&self) -> Stage {
        match self {
            Rejection::NotRegistered => Stage::Resolve,
            Rejection::Failed { check, .. } => check.stage(),
        }
    }
}

/// The registered kernel for builtin `code`, if TFLM has one.
pub fn kernel(code: i32) -> Option<&'static Kernel> {
    u8::try_from(code).ok().and_then(kernels::builtin)
}

/// Why TFLM built with `backend` would not run builtin operator `op` of
/// subgraph `g`, if it would not. Custom operators are resolved by name and
/// are not checked here.
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
    let tensor = |o: Operand| {
        let t = match o {
            Operand::Input(n) => op.input(n),
            Operand::Output(n) => op.output(n),
        };
        t.and_then(|t| model.tensor(g, t))
    };
    let inputs = |n: usize| op.input(n).and_then(|t| model.tensor(g, t));
    checks_of(kernel, backend)
        .iter()
        .find_map(|check| apply(kernel, check, &tensor, &inputs, op.inputs.len(), None))
}

/// The rejection `check` makes of the op whose operands `tensor` finds, if any.
fn apply<'m>(
    kernel: &'static Kernel,
    check: &'static Check,
    tensor: &impl Fn(Operand) -> Option<&'m Tensor<'m>>,
    inputs: &impl Fn(usize) -> Option<&'m Tensor<'m>>,
    n_inputs: usize,
    given: Option<(Operand, DType)>,
) -> Option<Rejection> {
    let fail = |found| {
        Some(Rejection::Failed {
            kernel,
            check,
            found,
            given,
        })
    };
    match check {
        Check::Types {
            operands, accepted, ..
        } => {
            let found = types(operands, tensor)?;
            let n = operands.len();
            if !accepted.iter().any(|row| row[..] == found[..n]) {
                return fail(Found::Types(found));
            }
        }
        Check::OneOf { operand, types, .. } => {
            let t = tensor(*operand)?.dtype;
            if !types.contains(&t) {
                let mut found = [t; MAX_OPERANDS];
                found[0] = t;
                return fail(Found::Types(found));
            }
        }
        Check::SameType { operands, .. } => {
            let found = types(operands, tensor)?;
            if found[..operands.len()].windows(2).any(|w| w[0] != w[1]) {
                return fail(Found::Types(found));
            }
        }
        Check::InputsLike { first, like, .. } => {
            let like = tensor(*like)?.dtype;
            for index in *first..n_inputs {
                if let Some(t) = inputs(index).filter(|t| t.dtype != like) {
                    return fail(Found::Input {
                        index,
                        dtype: t.dtype,
                        like,
                    });
                }
            }
        }
        Check::Constant { operand, .. } => {
            if !tensor(*operand)?.has_data {
                return fail(Found::NotConstant);
            }
        }
        Check::PerTensor {
            operand, required, ..
        } => {
            let scales = tensor(*operand)?
                .quantization
                .as_ref()
                .map_or(0, |q| q.scales.len());
            if scales > 1 || (*required && scales != 1) {
                return fail(Found::Scales(scales));
            }
        }
        Check::Rank {
            operand, min, max, ..
        } => {
            let rank = tensor(*operand)?.shape.len();
            if rank < *min || rank > *max {
                return fail(Found::Rank(rank));
            }
        }
        Check::If { operand, is, then } => {
            let t = tensor(*operand)?.dtype;
            if is.contains(&t) {
                return apply(kernel, then, tensor, inputs, n_inputs, Some((*operand, t)));
            }
        }
    }
    None
}

/// The operands' types, or `None` when an operand is missing or there are too many.
fn types<'m>(
    operands: &[Operand],
    tensor: &impl Fn(Operand) -> Option<&'m Tensor<'m>>,
) -> Option<[DType; MAX_OPERANDS]> {
    let mut found = [DType::F32; MAX_OPERANDS];
    if operands.len() > MAX_OPERANDS {
        return None;
    }
    for (slot, o) in found.iter_mut().zip(operands) {
        *slot = tensor(*o)?.dtype;
    }
    Some(found)
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Input(n) => write!(f, "input {n}"),
            Operand::Output(n) => write!(f, "output {n}"),
        }
    }
}

/// What `rejection` of op `name` means, for a person: which tensors, what
/// they hold, what the kernel on `backend` accepts, and TFLM's own words.
pub fn describe(rejection: &Rejection, name: &str, backend: Backend) -> String {
    let Rejection::Failed {
        kernel,
        check,
        found,
        given,
    } = rejection
    else {
        return format!(
            "TFLM has no {name} kernel (MicroMutableOpResolver registers none); its allocations are counted as 0"
        );
    };
    let substituted = match backend {
        Backend::CmsisNn(_) => kernel.cmsis_nn.is_some(),
        Backend::EspNn(_) => kernel.esp_nn.is_some(),
        Backend::Reference => true,
    };
    let kernel = if substituted {
        format!("the {} {name} kernel", backend.name())
    } else {
        format!(
            "the reference {name} kernel (which the {} build uses)",
            backend.name()
        )
    };
    let mut s = match (check, found) {
        (
            Check::Types {
                operands, accepted, ..
            },
            Found::Types(found),
        ) => {
            let what = if operands.len() == 1 {
                "a type"
            } else {
                "a type combination"
            };
            let rows = join(
                accepted
                    .iter()
                    .map(|row| row.iter().map(|t| t.name()).collect::<Vec<_>>().join("/")),
            );
            format!(
                "{} is not {what} {kernel} accepts ({rows})",
                typed(operands, found)
            )
        }
        (Check::OneOf { operand, types, .. }, Found::Types(found)) => format!(
            "{operand} {} is not a type {kernel} accepts ({})",
            found[0],
            join(types.iter().map(|t| String::from(t.name())))
        ),
        (Check::SameType { operands, .. }, Found::Types(found)) => format!(
            "{kernel} needs {} of one type, found {}",
            join(operands.iter().map(|o| format!("{o}"))),
            join(found.iter().take(operands.len()).map(|t| format!("{t}")))
        ),
        (
            Check::InputsLike { first, like, .. },
            Found::Input {
                index,
                dtype,
                like: like_type,
            },
        ) => format!(
            "{kernel} needs every input from input {first} on to have the type of {like} ({like_type}), but input {index} is {dtype}"
        ),
        (Check::Constant { operand, what, .. }, Found::NotConstant) => {
            format!("{operand} ({what}) is not a constant tensor, and {kernel} needs it constant")
        }
        (
            Check::PerTensor {
                operand,
                required: true,
                ..
            },
            Found::Scales(n),
        ) => format!(
            "{operand} has {n} quantization scales, and {kernel} needs it quantized per tensor (one scale)"
        ),
        (Check::PerTensor { operand, .. }, Found::Scales(n)) => format!(
            "{operand} is quantized per channel ({n} scales), which {kernel} does not accept here"
        ),
        (
            Check::Rank {
                operand, min, max, ..
            },
            Found::Rank(r),
        ) => format!("{operand} has rank {r}, and {kernel} accepts ranks {min} to {max}"),
        _ => format!("{kernel} refuses it"),
    };
    if let Some((operand, t)) = given {
        s.push_str(&format!(" (a check it makes when {operand} is {t})"));
    }
    if let Some(says) = check.tflm_says() {
        s.push_str(&format!("; TFLM says \"{says}\""));
    }
    s
}

/// `input 0 uint8, input 1 uint8`.
fn typed(operands: &[Operand], found: &[DType; MAX_OPERANDS]) -> String {
    join(operands.iter().zip(found).map(|(o, t)| format!("{o} {t}")))
}

fn join(items: impl Iterator<Item = String>) -> String {
    items.collect::<Vec<_>>().join(", ")
}
