//! What a kernel row's what-if shape rule sees and returns
//! ([`crate::whatif`] runs the rules; each kernel's rule is on its row).

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::read::model::{Model, Operator};
use crate::read::ops::OpOptions;

/// One op of the main subgraph whose inputs changed shape.
#[derive(Debug)]
pub struct ShapeCx<'s, 'm> {
    /// The model as re-derived so far (the op's inputs have their new shapes).
    pub model: &'s Model<'m>,
    /// The model as converted (the shapes before the what-if).
    pub original: &'s Model<'m>,
    /// The op.
    pub op: &'s Operator<'m>,
}

impl ShapeCx<'_, '_> {
    /// Input `k`'s current shape.
    pub fn shape(&self, k: usize) -> Option<Vec<i32>> {
        self.op
            .input(k)
            .and_then(|t| self.model.main().tensors.get(t))
            .map(|t| t.shape.clone())
    }

    /// Input 0's current shape (empty when absent).
    pub fn in0(&self) -> Vec<i32> {
        self.shape(0).unwrap_or_default()
    }

    /// The op's input count.
    pub fn inputs(&self) -> usize {
        self.op.inputs.len()
    }

    /// Input 0's tensor index (0 when absent, for messages).
    pub fn input_t(&self) -> usize {
        self.op.input(0).unwrap_or(0)
    }

    /// Output 0's tensor index (`usize::MAX` when absent).
    pub fn out(&self) -> usize {
        self.op.output(0).unwrap_or(usize::MAX)
    }

    /// Input `k`'s values when it is a constant of int32 (or small int64).
    pub fn consts(&self, k: usize) -> Option<Vec<i32>> {
        self.model.const_ints(0, self.op.input(k)?)
    }

    /// Tensor `t`'s shape as converted.
    pub fn original_shape(&self, t: usize) -> Vec<i32> {
        self.original
            .main()
            .tensors
            .get(t)
            .map(|t| t.shape.clone())
            .unwrap_or_default()
    }

    /// A failure naming tensor `tensor`.
    pub fn fail(&self, tensor: usize, why: impl Into<String>) -> ShapeFail {
        ShapeFail {
            tensor,
            why: why.into(),
        }
    }
}

/// A rule's answer: output 0's new shape, other tensors whose shape follows
/// (LSTM and SVDF state, FULLY_CONNECTED weights), and options that change
/// with it (a global pool's window).
#[derive(Debug, Default)]
pub struct Reshaped {
    /// Output 0's shape.
    pub output: Vec<i32>,
    /// Other tensors' new shapes.
    pub follows: Vec<(usize, Vec<i32>)>,
    /// The op's new options, when they change.
    pub options: Option<OpOptions>,
}

impl From<Vec<i32>> for Reshaped {
    fn from(output: Vec<i32>) -> Reshaped {
        Reshaped {
            output,
            ..Reshaped::default()
        }
    }
}

/// Why a rule cannot give the new shape, and which tensor it is about.
#[derive(Debug)]
pub struct ShapeFail {
    /// The tensor.
    pub tensor: usize,
    /// Why.
    pub why: String,
}

/// A kernel's what-if shape rule.
pub type ShapeRule = fn(&ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail>;

/// Element-wise ops: the output has input 0's shape.
pub fn same_as_input(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    Ok(cx.in0().into())
}

/// Binary element-wise ops: numpy broadcasting of inputs 0 and 1.
pub fn broadcast_inputs(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let (a, b) = (cx.in0(), cx.shape(1).unwrap_or_default());
    broadcast(&a, &b)
        .map(Reshaped::from)
        .ok_or_else(|| cx.fail(cx.out(), format!("{a:?} and {b:?} do not broadcast")))
}

/// Numpy broadcasting of two shapes.
pub fn broadcast(a: &[i32], b: &[i32]) -> Option<Vec<i32>> {
    let r = a.len().max(b.len());
    let dim = |s: &[i32], k: usize| {
        if k + s.len() >= r {
            s.get(k + s.len() - r).copied().unwrap_or(1)
        } else {
            1
        }
    };
    (0..r)
        .map(|k| match (dim(a, k), dim(b, k)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}
