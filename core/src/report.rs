//! The serializable report: the JSON contract the CLI prints with `--json`
//! and the web app renders. Only types in this module derive serde traits;
//! [`Report::new`] converts the internal [`Analysis`] by hand so internal
//! types can change without breaking the contract.
//!
//! Contract: fields may be added, never renamed or removed. `schema_version`
//! is bumped when a field's meaning changes.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::analysis::Analysis;
use crate::lifetime::BufferKind;
use crate::model::Model;
use crate::tail::Category;

/// Version of the JSON contract.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole report.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Report {
    /// Contract version.
    pub schema_version: u32,
    /// The model analysed.
    pub model: ModelInfo,
    /// Target profile name.
    pub target: String,
    /// Planner name.
    pub planner: String,
    /// Arena figures.
    pub arena: ArenaInfo,
    /// Head buffers in planner id order.
    pub buffers: Vec<BufferInfo>,
    /// Per-operator figures.
    pub operators: Vec<OperatorInfo>,
    /// Tail by category (categories with no allocation are left out).
    pub tail: Vec<TailCategory>,
    /// Findings.
    pub diagnostics: Vec<DiagnosticInfo>,
    /// Same as `arena.lower_bound_bytes`: no planner can make the head smaller.
    #[cfg_attr(feature = "serde", serde(default))]
    pub lower_bound_bytes: u64,
    /// The chosen planner's head is proven minimal.
    #[cfg_attr(feature = "serde", serde(default))]
    pub optimal: bool,
    /// Every planner on the same buffers, in the order planners are listed.
    #[cfg_attr(feature = "serde", serde(default))]
    pub plans: Vec<PlanInfo>,
}

/// One planner's head on this model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PlanInfo {
    /// Planner name (`tflm-greedy`, `linear`, `best`).
    pub planner: String,
    /// Head it gives.
    pub head_bytes: u64,
    /// That head is proven minimal.
    pub proven_optimal: bool,
}

/// Model facts.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ModelInfo {
    /// File name as given by the caller.
    pub file: String,
    /// Number of subgraphs.
    pub subgraphs: usize,
    /// Number of operators over all subgraphs.
    pub operators: usize,
    /// Number of tensors over all subgraphs.
    pub tensors: usize,
}

/// Arena figures.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ArenaInfo {
    /// Non-persistent head (planned activations and scratch).
    pub head_bytes: u64,
    /// Persistent tail.
    pub tail_bytes: u64,
    /// head + tail: what TFLM reports.
    pub total_bytes: u64,
    /// The smallest arena with which TFLM's AllocateTensors succeeds.
    pub minimum_bytes: u64,
    /// Which phase sets the minimum (`prepare`, `memory planning`, `final head+tail`).
    pub minimum_phase: String,
    /// Largest live bytes at any scope: no planner can make the head smaller.
    pub lower_bound_bytes: u64,
    /// Sum of alignment padding over all head buffers.
    pub padding_bytes: u64,
    /// Scope with the most live bytes.
    pub peak_scope: i32,
    /// Index of the subgraph-0 op running at the peak scope, if any.
    pub peak_op: Option<usize>,
    /// Name of that op.
    pub peak_opcode: Option<String>,
    /// Last scope (scopes run 0..=max_scope).
    pub max_scope: i32,
}

/// One head buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BufferInfo {
    /// `tensor` or `scratch`.
    pub kind: String,
    /// Subgraph of the tensor, or of the requesting op.
    pub subgraph: usize,
    /// Tensor index (tensors only).
    pub tensor: Option<usize>,
    /// The op requesting a scratch buffer, or the op producing a tensor (none for graph inputs).
    pub op: Option<usize>,
    /// Tensor name, or `scratch <n> of <OPCODE> <op>`.
    pub name: String,
    /// Bytes the buffer holds.
    pub bytes: u64,
    /// Bytes it occupies (rounded up to 16).
    pub aligned_bytes: u64,
    /// Offset in the head.
    pub offset: i64,
    /// First live scope.
    pub first: i32,
    /// Last live scope.
    pub last: i32,
    /// Tensor shape (empty for scratch).
    pub shape: Vec<i32>,
    /// Element type (`int8`, …; `bytes` for scratch).
    pub dtype: String,
    /// The offset comes from the model's offline plan.
    pub offline: bool,
}

/// One operator.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OperatorInfo {
    /// Subgraph.
    pub subgraph: usize,
    /// Index within the subgraph.
    pub index: usize,
    /// Builtin name or custom code.
    pub opcode: String,
    /// Scope at which it runs.
    pub scope: i32,
    /// Aligned head bytes live at that scope.
    pub live_bytes: u64,
    /// Aligned bytes of its scratch buffers.
    pub scratch_bytes: u64,
    /// Tail bytes it causes (builtin data, OpData, per-channel arrays, padding included).
    pub persistent_bytes: u64,
    /// Input tensor indices (−1 = omitted).
    pub inputs: Vec<i32>,
    /// Output tensor indices.
    pub outputs: Vec<i32>,
}

/// One tail category.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct TailCategory {
    /// Category name (TFLM's RecordingMicroAllocator name where one applies).
    pub category: String,
    /// Bytes used, alignment padding included.
    pub bytes: u64,
    /// Bytes requested.
    pub requested_bytes: u64,
    /// Number of items, as TFLM's RecordingMicroAllocator counts them (array
    /// length for the eval-tensor and node arrays, allocations otherwise).
    pub count: u64,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DiagnosticInfo {
    /// `info`, `warning` or `error`.
    pub severity: String,
    /// The message.
    pub message: String,
}

impl Report {
    /// Builds the report for `analysis` of `model`; `file` is shown as given.
    pub fn new(model: &Model<'_>, analysis: &Analysis, file: &str) -> Report {
        let producer = |g: usize, t: usize| -> Option<usize> {
            let sg = model.subgraphs.get(g)?;
            sg.operators
                .iter()
                .position(|op| op.outputs.contains(&(t as i32)))
        };
        let mut scratch_seen: alloc::collections::BTreeMap<(usize, usize), usize> =
            Default::default();
        let buffers = analysis
            .buffers
            .iter()
            .map(|b| match b.info.kind {
                BufferKind::Tensor { subgraph, tensor } => {
                    let t = model.tensor(subgraph, tensor);
                    BufferInfo {
                        kind: "tensor".into(),
                        subgraph,
                        tensor: Some(tensor),
                        op: producer(subgraph, tensor),
                        name: t.map_or_else(String::new, |t| t.name.to_string()),
                        bytes: b.info.bytes,
                        aligned_bytes: b.aligned_bytes,
                        offset: b.offset,
                        first: b.info.first,
                        last: b.info.last,
                        shape: t.map(|t| t.shape.clone()).unwrap_or_default(),
                        dtype: t.map_or("?", |t| t.dtype.name()).into(),
                        offline: b.info.offline_offset.is_some(),
                    }
                }
                BufferKind::Scratch {
                    subgraph, op_index, ..
                } => {
                    let seen = scratch_seen.entry((subgraph, op_index)).or_insert(0);
                    let n = *seen;
                    *seen += 1;
                    let opname = model
                        .subgraphs
                        .get(subgraph)
                        .and_then(|s| s.operators.get(op_index))
                        .map_or("?", |o| o.name());
                    BufferInfo {
                        kind: "scratch".into(),
                        subgraph,
                        tensor: None,
                        op: Some(op_index),
                        name: alloc::format!("scratch {n} of {opname} {op_index}"),
                        bytes: b.info.bytes,
                        aligned_bytes: b.aligned_bytes,
                        offset: b.offset,
                        first: b.info.first,
                        last: b.info.last,
                        shape: Vec::new(),
                        dtype: "bytes".into(),
                        offline: false,
                    }
                }
            })
            .collect();
        let operators = analysis
            .ops
            .iter()
            .map(|o| {
                let op = model
                    .subgraphs
                    .get(o.subgraph)
                    .and_then(|s| s.operators.get(o.op_index));
                OperatorInfo {
                    subgraph: o.subgraph,
                    index: o.op_index,
                    opcode: o.opcode.clone(),
                    scope: o.scope,
                    live_bytes: o.live_bytes,
                    scratch_bytes: o.scratch_bytes,
                    persistent_bytes: o.persistent_bytes,
                    inputs: op.map(|op| op.inputs.clone()).unwrap_or_default(),
                    outputs: op.map(|op| op.outputs.clone()).unwrap_or_default(),
                }
            })
            .collect();
        let tail = Category::ALL
            .iter()
            .filter_map(|&c| {
                let allocs = analysis.tail.allocs.iter().filter(|a| a.category == c);
                let (bytes, requested_bytes, count) = allocs.fold((0, 0, 0), |(b, r, n), a| {
                    (b + a.used, r + a.requested, n + a.items)
                });
                (count > 0).then(|| TailCategory {
                    category: c.name().into(),
                    bytes,
                    requested_bytes,
                    count,
                })
            })
            .collect();
        let comparison = crate::analysis::compare_plan_input(&analysis.plan_input);
        let plans: Vec<PlanInfo> = comparison
            .iter()
            .map(|c| PlanInfo {
                planner: c.planner.name().into(),
                head_bytes: c.head_bytes,
                proven_optimal: c.proven_optimal,
            })
            .collect();
        // The chosen plan is optimal when its head is at the lower bound or at a
        // minimum `best` proved for the same buffers.
        let optimal = analysis.head_bytes <= analysis.lower_bound_bytes
            || comparison.iter().any(|c| {
                c.proven_optimal
                    && c.head_bytes == analysis.head_bytes
                    && (c.planner == analysis.planner
                        || c.planner == crate::planner::PlannerKind::Best)
            });
        let peak_op = analysis.peak_op.filter(|&(g, _)| g == 0).map(|(_, i)| i);
        Report {
            schema_version: SCHEMA_VERSION,
            model: ModelInfo {
                file: file.into(),
                subgraphs: model.subgraphs.len(),
                operators: model.operator_count(),
                tensors: model.tensor_count(),
            },
            target: analysis.profile.name.into(),
            planner: analysis.planner.name().into(),
            arena: ArenaInfo {
                head_bytes: analysis.head_bytes,
                tail_bytes: analysis.tail_bytes,
                total_bytes: analysis.total_bytes,
                minimum_bytes: analysis.minimum_bytes,
                minimum_phase: analysis.minimum_phase.name().into(),
                lower_bound_bytes: analysis.lower_bound_bytes,
                padding_bytes: analysis.buffers.iter().map(|b| b.padding_bytes()).sum(),
                peak_scope: analysis.peak_scope,
                peak_op,
                peak_opcode: peak_op
                    .and_then(|i| model.main().operators.get(i))
                    .map(|o| o.name().into()),
                max_scope: analysis.max_scope,
            },
            buffers,
            operators,
            tail,
            diagnostics: analysis
                .diagnostics
                .iter()
                .map(|d| DiagnosticInfo {
                    severity: d.severity.name().into(),
                    message: d.message.clone(),
                })
                .collect(),
            lower_bound_bytes: analysis.lower_bound_bytes,
            optimal,
            plans,
        }
    }

    /// `true` when any diagnostic says TFLM would not run the model.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == "error")
    }
}
