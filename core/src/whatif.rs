//! What-if input shapes: give a graph input another shape (a shorter audio
//! window, a smaller image, another batch) and re-derive every tensor shape of
//! the main subgraph, so the arena can be re-planned without re-converting
//! the model.
//!
//! [`with_input_shapes`] is pure: it returns a modified copy of the [`Model`]
//! (shapes and byte sizes), which every later stage (`analyze`,
//! `lower::runtime_arena`, the report) takes as it is. Propagation follows
//! the operators in order; an op whose inputs did not change keeps its output
//! shapes. Each op's rule is on its kernel row (`tflm::kernels`, `shape`):
//! the CNN ops (CONV_2D, DEPTHWISE_CONV_2D, pools), FULLY_CONNECTED, RESHAPE
//! (−1 and the shape input), SOFTMAX and the other shape-preserving ops
//! (activations, element-wise math, QUANTIZE/DEQUANTIZE/CAST), broadcasting
//! binary ops (arithmetic, comparisons, logical), UNIDIRECTIONAL_SEQUENCE_LSTM
//! (time and batch), SVDF, CONCATENATION, STRIDED_SLICE, the reducers, PAD.
//! Anything else whose input changed is a [`ShapeError`] naming the op and
//! the tensor.
//!
//! Three rules re-derive what a converter would have written at the new
//! size: a RESHAPE that flattened trailing dimensions (Keras `Flatten`, as in
//! micro_speech_lstm's `[1, 49, 80] -> [-1, 3920]`) keeps flattening them;
//! FULLY_CONNECTED weights that consumed the whole last input dimension
//! follow it; a pool whose window covered the whole feature map stays global
//! (its window is rewritten in the copy). Weight values stay as they
//! are: they live in flash and do not change the arena.

use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::read::model::Model;
use crate::tflm::kernels::{
    self,
    shapes::{Reshaped, ShapeCx},
};

/// Why the new shapes cannot be derived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    /// An override is not `NAME=DIMS` with positive integer dims.
    Syntax {
        /// The override as given.
        text: String,
        /// What is wrong with it.
        problem: SyntaxProblem,
    },
    /// An override names no graph input of the main subgraph.
    NotAnInput {
        /// The name (or index) given.
        name: String,
        /// The graph inputs' names.
        inputs: Vec<String>,
    },
    /// An operator cannot take its new input shape.
    Op {
        /// Index of the operator in the main subgraph.
        op: usize,
        /// Its operator name (builtin, or the custom code).
        opcode: String,
        /// The tensor the problem is about.
        tensor: usize,
        /// That tensor's name.
        tensor_name: String,
        /// What the op cannot do with it.
        why: String,
    },
    /// The model has no subgraph to re-derive.
    NoSubgraph,
    /// A tensor index the model does not have.
    NoTensor {
        /// The index.
        tensor: usize,
    },
    /// A derived shape's element count does not fit 64 bits.
    Overflow {
        /// The tensor.
        tensor: usize,
        /// The shape that overflows.
        dims: Vec<i32>,
    },
}

/// What is wrong with a `NAME=DIMS` override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntaxProblem {
    /// No `=`.
    MissingEquals,
    /// A dim is not a positive integer.
    BadDims,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Syntax { text, problem } => match problem {
                SyntaxProblem::MissingEquals => {
                    write!(f, "`{text}`: expected NAME=DIMS, e.g. input=1,25,257")
                }
                SyntaxProblem::BadDims => write!(f, "`{text}`: dims must be positive integers"),
            },
            ShapeError::NotAnInput { name, inputs } => write!(
                f,
                "`{name}` is not a graph input (inputs: {})",
                inputs.join(", ")
            ),
            ShapeError::Op {
                op,
                opcode,
                tensor,
                tensor_name,
                why,
            } => write!(
                f,
                "op {op} ({opcode}): tensor {tensor} '{tensor_name}': {why}"
            ),
            ShapeError::NoSubgraph => f.write_str("the model has no subgraph"),
            ShapeError::NoTensor { tensor } => write!(f, "tensor {tensor} does not exist"),
            ShapeError::Overflow { tensor, dims } => {
                write!(f, "tensor {tensor}: shape {dims:?} overflows")
            }
        }
    }
}

impl core::error::Error for ShapeError {}

/// Parses `NAME=D0,D1,…` (the name may itself contain `=`; the last one splits).
pub fn parse_override(s: &str) -> Result<(String, Vec<i32>), ShapeError> {
    let (name, dims) = s.rsplit_once('=').ok_or_else(|| ShapeError::Syntax {
        text: s.to_string(),
        problem: SyntaxProblem::MissingEquals,
    })?;
    let dims = dims
        .split(',')
        .map(|d| d.trim().parse::<i32>().ok().filter(|&d| d > 0))
        .collect::<Option<Vec<i32>>>()
        .ok_or_else(|| ShapeError::Syntax {
            text: s.to_string(),
            problem: SyntaxProblem::BadDims,
        })?;
    Ok((name.to_string(), dims))
}

/// A copy of `model` whose main-subgraph inputs named in `overrides` (tensor
/// name, tensor index, or `#k` for the k-th graph input) have the given shapes, with every dependent shape and byte
/// size re-derived.
pub fn with_input_shapes<'a>(
    model: &Model<'a>,
    overrides: &[(String, Vec<i32>)],
) -> Result<Model<'a>, ShapeError> {
    let mut m = model.clone();
    let n = m.main().tensors.len();
    let mut changed = vec![false; n];
    let inputs: Vec<usize> = m
        .main()
        .inputs
        .iter()
        .filter_map(|&t| usize::try_from(t).ok())
        .collect();
    for (name, dims) in overrides {
        let t = inputs
            .iter()
            .copied()
            .enumerate()
            .find(|&(k, t)| {
                m.main()
                    .tensors
                    .get(t)
                    .is_some_and(|x| x.name == name.as_str())
                    || name.parse::<usize>() == Ok(t)
                    || name.strip_prefix('#').and_then(|n| n.parse::<usize>().ok()) == Some(k)
            })
            .map(|(_, t)| t)
            .ok_or_else(|| {
                let names: Vec<String> = inputs
                    .iter()
                    .filter_map(|&t| m.main().tensors.get(t))
                    .map(|x| x.name.to_string())
                    .collect();
                ShapeError::NotAnInput {
                    name: name.clone(),
                    inputs: names,
                }
            })?;
        set_shape(&mut m, t, dims.clone(), &mut changed)?;
    }
    let ops = m.main().operators.clone();
    for (oi, op) in ops.iter().enumerate() {
        let in_changed = op
            .inputs
            .iter()
            .any(|&t| t >= 0 && changed.get(t as usize).copied().unwrap_or(false));
        if !in_changed {
            continue;
        }
        let err = |tensor: usize, why: String| ShapeError::Op {
            op: oi,
            opcode: op.name().to_string(),
            tensor,
            tensor_name: m
                .main()
                .tensors
                .get(tensor)
                .map_or_else(String::new, |t| t.name.to_string()),
            why,
        };
        let input_t = op.input(0).unwrap_or(0);
        let rule = kernels::lookup(op).and_then(|k| k.shape).ok_or_else(|| {
            err(
                input_t,
                "its shape changed, and there is no shape rule for this op".into(),
            )
        })?;
        let cx = ShapeCx {
            model: &m,
            original: model,
            op,
        };
        let Reshaped {
            output: new,
            follows,
            options,
        } = rule(&cx).map_err(|f| err(f.tensor, f.why))?;
        let out = op.output(0).unwrap_or(usize::MAX);
        if let (Some(w), Some(o)) = (
            options,
            m.subgraphs
                .get_mut(0)
                .and_then(|sg| sg.operators.get_mut(oi)),
        ) {
            o.options = w;
        }
        for (t, dims) in follows {
            set_shape(&mut m, t, dims, &mut changed)?;
        }
        if out != usize::MAX {
            set_shape(&mut m, out, new, &mut changed)?;
        }
    }
    Ok(m)
}

/// Sets a tensor's shape and byte size; marks it changed when it differs.
fn set_shape(
    m: &mut Model<'_>,
    t: usize,
    dims: Vec<i32>,
    changed: &mut [bool],
) -> Result<(), ShapeError> {
    let Some(sg) = m.subgraphs.get_mut(0) else {
        return Err(ShapeError::NoSubgraph);
    };
    let Some(tensor) = sg.tensors.get_mut(t) else {
        return Err(ShapeError::NoTensor { tensor: t });
    };
    if tensor.shape == dims {
        return Ok(());
    }
    let elems = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(u64::try_from(d).ok()?))
        .ok_or_else(|| ShapeError::Overflow {
            tensor: t,
            dims: dims.clone(),
        })?;
    tensor.bytes = tensor
        .dtype
        .size_bytes()
        .and_then(|s| elems.checked_mul(u64::from(s)));
    tensor.shape = dims;
    tensor.is_dynamic = false;
    tensor.shape_signature = None;
    if let Some(c) = changed.get_mut(t) {
        *c = true;
    }
    Ok(())
}
