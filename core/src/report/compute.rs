//! Per-op compute: multiply-accumulates (MACs) for the ops whose work is a
//! sum of products, and the output element count of every op, read from the
//! shapes of the model shown (what-if shapes included).
//!
//! Definitions (`docs/flash-and-compute.md`, with sources):
//! - CONV_2D: output elements × KH·KW·filter channels (the filter's last dim,
//!   `C_in / groups`): `N·H_out·W_out·C_out·KH·KW·C_in/groups`.
//! - DEPTHWISE_CONV_2D: output elements × KH·KW.
//! - FULLY_CONNECTED: output elements (batch × units) × input depth.
//! - TRANSPOSE_CONV: input elements × KH·KW·C_out (each input value is
//!   scattered through the whole filter).
//! - AVERAGE_POOL_2D, MAX_POOL_2D: output elements × window
//!   (one add or compare per window element; windows clipped at the border
//!   are counted whole).
//! - LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM: per step, every element of the
//!   input-to-gate and recurrent-to-gate matrices (4 gates, fewer with CIFG)
//!   and of the projection matrix; steps = input elements / input depth.
//! - SVDF: batch × (feature weights + time weights).
//! - BATCH_MATMUL: output elements × the accumulation depth.
//!
//! Arithmetic saturates: a hostile model gives `u64::MAX`, never a panic.

use crate::read::model::{Model, Operator, Tensor};
use crate::read::ops::{BuiltinOp, OpOptions};
use microarena_image::opcode;

/// The model's compute: every op's figures summed (each op once, as listed:
/// a WHILE body counts once, not once per iteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ComputeInfo {
    /// Multiply-accumulates per invoke, over all ops.
    pub macs: u64,
    /// Elements written per invoke, over all ops.
    pub elements: u64,
}

/// The compute figures of one op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpCompute {
    /// Multiply-accumulates per invoke (0 for ops that have none).
    pub macs: u64,
    /// Elements the op writes (all outputs).
    pub elements: u64,
}

/// Elements of `t`: −1 dims count as 1 (as TFLM sizes them), a 0 dim
/// makes the tensor empty.
fn elements(t: &Tensor<'_>) -> u64 {
    if t.shape.contains(&0) {
        return 0;
    }
    t.shape
        .iter()
        .fold(1u64, |n, &d| n.saturating_mul(d.max(1) as u64))
}

/// Dimension `i` of `t` (negative: from the end), as a count.
fn dim(t: &Tensor<'_>, i: isize) -> u64 {
    let rank = t.shape.len() as isize;
    let i = if i < 0 { rank + i } else { i };
    usize::try_from(i)
        .ok()
        .and_then(|i| t.shape.get(i))
        .map_or(0, |&d| d.max(0) as u64)
}

/// The compute of op `op_index` of subgraph `g` (zero when it does not exist).
pub fn op_compute(model: &Model<'_>, g: usize, op_index: usize) -> OpCompute {
    let Some(sg) = model.subgraphs.get(g) else {
        return OpCompute::default();
    };
    let Some(op) = sg.operators.get(op_index) else {
        return OpCompute::default();
    };
    let tensor = |t: Option<usize>| t.and_then(|t| sg.tensors.get(t));
    let elements_out = op
        .outputs
        .iter()
        .filter_map(|&t| tensor(usize::try_from(t).ok()))
        .fold(0u64, |n, t| n.saturating_add(elements(t)));
    OpCompute {
        macs: macs(op, &|i| tensor(op.input(i)), &|i| tensor(op.output(i))),
        elements: elements_out,
    }
}

fn macs<'t>(
    op: &Operator<'_>,
    input: &dyn Fn(usize) -> Option<&'t Tensor<'t>>,
    output: &dyn Fn(usize) -> Option<&'t Tensor<'t>>,
) -> u64 {
    let out = output(0).map_or(0, elements);
    let code = op.opcode;
    let per_output = |per: u64| out.saturating_mul(per);
    if code == BuiltinOp::CONV_2D {
        // Filter [C_out, KH, KW, C_in/groups].
        input(1).map_or(0, |f| {
            per_output(
                dim(f, 1)
                    .saturating_mul(dim(f, 2))
                    .saturating_mul(dim(f, 3)),
            )
        })
    } else if code == BuiltinOp::DEPTHWISE_CONV_2D {
        // Filter [1, KH, KW, C_out].
        input(1).map_or(0, |f| per_output(dim(f, 1).saturating_mul(dim(f, 2))))
    } else if code == BuiltinOp::FULLY_CONNECTED {
        // Filter [units, depth].
        input(1).map_or(0, |f| per_output(dim(f, -1)))
    } else if code == BuiltinOp::TRANSPOSE_CONV {
        // Inputs: output shape, filter [C_out, KH, KW, C_in], input.
        match (input(1), input(2)) {
            (Some(f), Some(x)) => elements(x).saturating_mul(
                dim(f, 0)
                    .saturating_mul(dim(f, 1))
                    .saturating_mul(dim(f, 2)),
            ),
            _ => 0,
        }
    } else if code == BuiltinOp::AVERAGE_POOL_2D || code == BuiltinOp::MAX_POOL_2D {
        match op.options {
            OpOptions::Pool(p) => {
                per_output((p.filter_h.max(0) as u64).saturating_mul(p.filter_w.max(0) as u64))
            }
            _ => 0,
        }
    } else if code == BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM || code.0 == opcode::LSTM as i32 {
        lstm_macs(input)
    } else if code == BuiltinOp::SVDF {
        // Input [batch, input_size]; feature weights [filters, input_size];
        // time weights [filters, memory].
        let batch = input(0).map_or(0, |x| dim(x, 0));
        let weights = input(1)
            .map_or(0, elements)
            .saturating_add(input(2).map_or(0, elements));
        batch.saturating_mul(weights)
    } else if code.0 == opcode::BATCH_MATMUL as i32 {
        // The LHS's last two dims hold M·K whichever way `adj_x` lays them
        // out, and M is the output's second-to-last dim.
        match (input(0), output(0)) {
            (Some(lhs), Some(o)) => {
                let mk = dim(lhs, -1).saturating_mul(dim(lhs, -2));
                let m = dim(o, -2);
                mk.checked_div(m).map_or(0, per_output)
            }
            _ => 0,
        }
    } else {
        0
    }
}

/// LSTM inputs (TFLite's order): 0 input, 1–4 input-to-gate weights
/// (input, forget, cell, output; the input gate's are absent with CIFG),
/// 5–8 recurrent-to-gate weights, 16 projection weights.
fn lstm_macs<'t>(input: &dyn Fn(usize) -> Option<&'t Tensor<'t>>) -> u64 {
    let Some(x) = input(0) else { return 0 };
    let depth = dim(x, -1);
    if depth == 0 {
        return 0;
    }
    let steps = elements(x) / depth;
    let per_step = [1, 2, 3, 4, 5, 6, 7, 8, 16]
        .iter()
        .filter_map(|&i| input(i))
        .fold(0u64, |n, w| n.saturating_add(elements(w)));
    steps.saturating_mul(per_step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::builder::ModelBuilder;
    use crate::read::dtype::DType;

    #[test]
    fn empty_and_dynamic_dims() {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let x = b.tensor(g, "x", &[2, -1, 3], DType::F32).id();
        let z = b.tensor(g, "z", &[0, 4], DType::F32).id();
        b.op(g, BuiltinOp::ADD, &[x, x], &[z]);
        b.inputs(g, &[x]).outputs(g, &[z]);
        let bytes = b.finish();
        let m = Model::parse(&bytes).unwrap();
        assert_eq!(elements(&m.main().tensors[0]), 6);
        assert_eq!(elements(&m.main().tensors[1]), 0);
        assert_eq!(dim(&m.main().tensors[0], -1), 3);
        assert_eq!(dim(&m.main().tensors[0], 7), 0);
        assert_eq!(op_compute(&m, 0, 5), OpCompute::default());
    }
}
