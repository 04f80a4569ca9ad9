//! The NPU's own tensors: what a Vela-compiled model hands an Arm Ethos-U, as a region of its
//! own beside the CPU's buffers.
//!
//! Vela replaces each part of the graph the NPU runs by one `ethos-u` custom operator whose
//! inputs are, in order (TFLM `kernels/ethos_u/ethosu.cc`): the command stream and the
//! weights (constants, flash), the scratch tensor — the NPU's working memory inside the arena,
//! which the command stream addresses as one base address and in which Vela's offline plan
//! also places the operator's input and output feature maps — the fast scratch (on an Ethos-U55
//! with `Shared_Sram` the same addresses as the scratch; with `Dedicated_Sram` (U65) a memory of
//! its own that the driver can point elsewhere), then the data inputs.

use alloc::string::String;
use alloc::vec::Vec;

use super::BufferInfo;
use crate::read::model::Model;
use crate::read::ops::BuiltinOp;
use crate::tflm::profile::{CoProcessor, TargetProfile};

/// The custom code Vela gives its operator.
pub const ETHOS_U_OP: &str = "ethos-u";

/// The NPU region of a report (`null` for a model without NPU operators).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NpuInfo {
    /// The NPU (`Arm Ethos-U`).
    pub co_processor: String,
    /// The target's TFLM build registers the NPU's operator (else TFLM refuses the model).
    pub registered: bool,
    /// Arena bytes the NPU's scratch tensors cover (the union of their address ranges in
    /// the head, with the feature maps Vela placed inside them).
    pub arena_bytes: u64,
    /// Flash the NPU reads: command streams and weights.
    pub flash_bytes: u64,
    /// Every fast scratch shares its scratch's addresses (Vela's `Shared_Sram`, Ethos-U55).
    pub fast_scratch_shared: bool,
    /// One entry per NPU operator.
    pub ops: Vec<NpuOp>,
}

/// One `ethos-u` operator.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NpuOp {
    /// Subgraph.
    pub subgraph: usize,
    /// Operator index.
    pub op_index: usize,
    /// Input 0: the command stream (flash).
    pub command_stream: Option<NpuTensor>,
    /// Input 1: the weights and biases Vela packed (flash).
    pub weights: Option<NpuTensor>,
    /// Input 2: the scratch tensor (arena).
    pub scratch: Option<NpuTensor>,
    /// Input 3: the fast scratch (arena).
    pub fast_scratch: Option<NpuTensor>,
    /// The operator's data inputs and outputs whose bytes lie inside its scratch.
    pub inside_scratch: Vec<usize>,
}

/// One of the NPU's tensors.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct NpuTensor {
    /// Tensor index in the operator's subgraph.
    pub tensor: usize,
    /// Its name.
    pub name: String,
    /// Its bytes.
    pub bytes: u64,
    /// Its offset in the head (arena tensors only).
    pub offset: Option<i64>,
}

/// The NPU region of `model` as `buffers` lay it out on `profile`.
pub fn npu_info(
    model: &Model<'_>,
    buffers: &[BufferInfo],
    profile: &TargetProfile,
) -> Option<NpuInfo> {
    let placed = |g: usize, t: usize| {
        buffers
            .iter()
            .find(|b| b.subgraph == g && b.tensor == Some(t))
    };
    let mut ops = Vec::new();
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (i, op) in sg.operators.iter().enumerate() {
            if op.opcode != BuiltinOp::CUSTOM || op.custom_code != Some(ETHOS_U_OP) {
                continue;
            }
            let tensor = |k: usize| {
                let t = usize::try_from(*op.inputs.get(k)?).ok()?;
                let info = sg.tensors.get(t)?;
                Some(NpuTensor {
                    tensor: t,
                    name: info.name.into(),
                    bytes: info.bytes.unwrap_or(0),
                    offset: placed(g, t).map(|b| b.offset),
                })
            };
            let scratch = tensor(2);
            let inside_scratch = match &scratch {
                Some(NpuTensor {
                    offset: Some(at),
                    bytes,
                    ..
                }) => {
                    let end = at.saturating_add(*bytes as i64);
                    op.inputs
                        .iter()
                        .skip(4)
                        .chain(op.outputs.iter())
                        .filter_map(|&t| usize::try_from(t).ok())
                        .filter(|&t| {
                            placed(g, t).is_some_and(|b| {
                                b.offset >= *at && b.offset.saturating_add(b.bytes as i64) <= end
                            })
                        })
                        .collect()
                }
                _ => Vec::new(),
            };
            ops.push(NpuOp {
                subgraph: g,
                op_index: i,
                command_stream: tensor(0),
                weights: tensor(1),
                scratch,
                fast_scratch: tensor(3),
                inside_scratch,
            });
        }
    }
    if ops.is_empty() {
        return None;
    }
    let ranges: Vec<(u64, u64)> = ops
        .iter()
        .flat_map(|o| [&o.scratch, &o.fast_scratch])
        .filter_map(|t| {
            let t = t.as_ref()?;
            let at = t.offset?.max(0) as u64;
            Some((at, at.saturating_add(t.bytes)))
        })
        .collect();
    let arena_bytes = crate::plan::union_bytes(ranges);
    let flash_bytes = ops
        .iter()
        .flat_map(|o| [&o.command_stream, &o.weights])
        .flatten()
        .map(|t| t.bytes)
        .sum();
    let fast_scratch_shared = ops.iter().all(|o| match (&o.scratch, &o.fast_scratch) {
        (Some(s), Some(f)) => s.offset.is_some() && s.offset == f.offset,
        _ => true,
    });
    Some(NpuInfo {
        co_processor: CoProcessor::EthosU.name().into(),
        registered: profile.co_processor == Some(CoProcessor::EthosU),
        arena_bytes,
        flash_bytes,
        fast_scratch_shared,
        ops,
    })
}
