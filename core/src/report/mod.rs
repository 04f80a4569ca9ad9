//! The serializable report: the JSON contract the CLI prints with `--json`
//! and the web app renders. Only types in this module derive serde traits;
//! [`Report::new`] converts the internal [`Analysis`] by hand so internal
//! types can change without breaking the contract.
//!
//! Contract: fields may be added, never renamed or removed. `schema_version`
//! is bumped when a field's meaning changes.

pub mod advice;
pub mod budget;
pub mod c_header;
pub mod compute;
pub mod diff;
#[cfg(feature = "elf")]
pub mod elf;
pub mod flash;
pub mod measured;
mod names;
pub mod npu;
pub mod optimized;
pub mod placement;
#[cfg(feature = "serde")]
pub mod share;
pub mod steps;
pub mod timeline;

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::read::model::Model;
use crate::tflm::analysis::{Analysis, Phase};
use crate::tflm::lifetime::BufferKind;
use crate::tflm::tail::{Category, Owner};

pub use compute::ComputeInfo;
pub use flash::{ConstantTensorInfo, FlashInfo, RamCopyInfo};
pub use names::{BufferClass, MinimumPhase, Region, VariableLifetime};

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
    /// The arena `microarena-runtime` needs for this model
    /// (`lower::runtime_arena`), `null` when the runtime cannot run it (see
    /// `runtime_refusal`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub runtime: Option<RuntimeInfo>,
    /// Why `runtime` is `null`: the op or tensor the runtime lacks.
    #[cfg_attr(feature = "serde", serde(default))]
    pub runtime_refusal: Option<String>,
    /// Variable tensors (LSTM/SVDF state): alive for the interpreter's whole
    /// life, in the tail unless an offline plan places them in the head.
    #[cfg_attr(feature = "serde", serde(default))]
    pub variables: Vec<VariableInfo>,
    /// Set when the report is for what-if input shapes (`whatif::with_input_shapes`):
    /// the overrides and the original model's figures, for the delta.
    #[cfg_attr(feature = "serde", serde(default))]
    pub what_if: Option<WhatIfInfo>,
    /// The TFLM build the target's figures were measured against (e.g. `TFLM 90b983c2`);
    /// `null` for a target derived from struct tables only.
    #[cfg_attr(feature = "serde", serde(default))]
    pub target_measured_against: Option<String>,
    /// `true` when the target's figures are derived (its profile was never
    /// measured against a TFLM build): every shell labels them `derived`.
    /// Absent from the JSON when `false`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "core::ops::Not::not")
    )]
    pub target_derived: bool,
    /// What the model takes in flash: file, constant data, overhead, the
    /// largest constants and any constant TFLM copies into RAM (`report::flash`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub flash: FlashInfo,
    /// Multiply-accumulates and elements written per invoke, all ops
    /// (`report::compute`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub compute: ComputeInfo,
    /// The NPU's own region (`report::npu`): a Vela model's command streams, weights and the
    /// scratch tensors it works in; absent for a model without NPU operators.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub npu: Option<npu::NpuInfo>,
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

/// The original figures behind a what-if report.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct WhatIfInfo {
    /// The overrides as given (`NAME=D0,D1,…`).
    pub input_shapes: Vec<String>,
    /// Head of the model as converted.
    pub original_head_bytes: u64,
    /// Tail of the model as converted.
    pub original_tail_bytes: u64,
    /// Total of the model as converted.
    pub original_total_bytes: u64,
    /// Minimum working arena of the model as converted.
    pub original_minimum_bytes: u64,
    /// microarena-runtime's arena for the model as converted, if it runs it.
    pub original_runtime_total_bytes: Option<u64>,
}

impl WhatIfInfo {
    /// The what-if record for a report of `model` reshaped by `input_shapes`
    /// (`NAME=D0,D1,…`, kept as given): `before` is the analysis of `model`
    /// as converted, with the same config. The CLI's `plan --input-shape` and
    /// the web app both build it here.
    pub fn new(input_shapes: Vec<String>, model: &Model<'_>, before: &Analysis) -> WhatIfInfo {
        WhatIfInfo {
            input_shapes,
            original_head_bytes: before.head_bytes,
            original_tail_bytes: before.tail_bytes,
            original_total_bytes: before.total_bytes,
            original_minimum_bytes: before.minimum_bytes,
            original_runtime_total_bytes: crate::lower::runtime_arena(model)
                .ok()
                .map(|r| r.total_bytes),
        }
    }
}

/// microarena-runtime's arena for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RuntimeInfo {
    /// Planned activations and scratch (core's greedy plan of the runtime's buffers).
    pub head_bytes: u64,
    /// OpData and variable tensors.
    pub tail_bytes: u64,
    /// head + tail: the arena `Interpreter::new` needs, and its measured high-water mark.
    pub total_bytes: u64,
    /// Variable tensors, part of `tail_bytes`.
    pub variable_bytes: u64,
    /// The ops' OpData (multipliers, bounds, FFT tables), part of
    /// `tail_bytes`; lowered with OpData in flash (`lower::OpDataIn::Flash`,
    /// what the firmware does) it moves to the image and the arena needs
    /// `total_bytes - opdata_bytes`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub opdata_bytes: u64,
    /// Patch-based execution in row bands, when a stage lowers the head
    /// (`null` when no chain of windowed ops does).
    #[cfg_attr(feature = "serde", serde(default))]
    pub banded: Option<BandedInfo>,
    /// In-place execution (`lower::LowerOptions::in_place`), when it lowers
    /// the arena plain or banded (`null` when no alias saves a byte).
    #[cfg_attr(feature = "serde", serde(default))]
    pub in_place: Option<InPlaceInfo>,
}

/// microarena-runtime's in-place execution of a model: element-wise ops
/// write over an input that dies at them, convolutions and pools do so row
/// by row when their output is no larger, RESHAPE / SQUEEZE / EXPAND_DIMS
/// outputs are their input's bytes, each alias group one planned buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InPlaceInfo {
    /// Ops that write their output over a dying input.
    pub overwrites: u64,
    /// Of those, the windowed ops (convolutions, pools) that do it row by
    /// row through a ring of output rows.
    #[cfg_attr(feature = "serde", serde(default))]
    pub windowed: u64,
    /// Bytes of those rings together (each live at its op only).
    #[cfg_attr(feature = "serde", serde(default))]
    pub ring_bytes: u64,
    /// RESHAPE / SQUEEZE / EXPAND_DIMS run as aliases (no copy, no kernel).
    pub aliases: u64,
    /// The head in place, every op whole.
    pub head_bytes: u64,
    /// Head + tail in place, every op whole (OpData in the tail).
    pub total_bytes: u64,
    /// Head + tail banded and in place (OpData in the tail), when stages
    /// lower the head.
    pub banded_total_bytes: Option<u64>,
}

impl InPlaceInfo {
    /// What runs in place, for the CLI and the advice: "3 op(s) over their
    /// dying inputs (1 windowed, row by row through 9,984 B of rings), 1
    /// reshape(s) as aliases".
    pub fn summary(&self) -> String {
        let rows = if self.windowed > 0 {
            format!(
                " ({} windowed, row by row through {} B of rings)",
                self.windowed,
                grouped(self.ring_bytes)
            )
        } else {
            String::new()
        };
        format!(
            "{} op(s) over their dying inputs{rows}, {} reshape(s) as aliases",
            self.overwrites, self.aliases
        )
    }
}

/// microarena-runtime's patch-based execution (row bands) of a model:
/// chains of windowed ops run output row by output row, their intermediate
/// tensors held a few rows at a time (`lower::Execution::Banded`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BandedInfo {
    /// The stages, in op order.
    pub stages: Vec<BandedStageInfo>,
    /// MACs beyond the plain execution's: rows are kept, never recomputed.
    pub extra_macs: u64,
    /// The head with the stages banded.
    pub head_bytes: u64,
    /// Head + tail with the stages banded (OpData in the tail).
    pub total_bytes: u64,
}

impl BandedInfo {
    /// "ops 0-7 in 12 bands, ops 12-15 in 6 bands": what the CLI and the
    /// advice say the stages are.
    pub fn stages_summary(&self) -> String {
        let parts: Vec<String> = self
            .stages
            .iter()
            .map(|s| {
                let over = if s.over_input { " over its input" } else { "" };
                alloc::format!(
                    "ops {}-{} in {} bands{over}",
                    s.first_op,
                    s.last_op,
                    s.bands
                )
            })
            .collect();
        parts.join(", ")
    }

    /// The rings of every stage together.
    pub fn ring_bytes(&self) -> u64 {
        self.stages.iter().map(|s| s.ring_bytes).sum()
    }
}

/// One banded stage.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BandedStageInfo {
    /// First op of the stage (subgraph 0).
    pub first_op: usize,
    /// Last op of the stage: its output is the first whole tensor after it.
    pub last_op: usize,
    /// Bands: rows of the stage's output, each computed from the rows its
    /// windows read (the patch grid is `bands` × 1).
    pub bands: u64,
    /// The rings that hold the intermediate tensors' rows.
    pub ring_bytes: u64,
    /// Rows of the stage's input tensor.
    pub input_rows: u64,
    /// The input rows `[field_first, field_end)` the middle band reads
    /// through every op's window: one band's receptive field (what the app's
    /// patch view draws).
    pub field_first: u64,
    /// See `field_first`.
    pub field_end: u64,
    /// The stage writes its output over the bytes of a tensor it alone
    /// reads and consumes (the model's input, say): the two share one buffer.
    #[cfg_attr(feature = "serde", serde(default))]
    pub over_input: bool,
}

impl BandedStageInfo {
    /// The band (output row) whose receptive field `field_first..field_end` is.
    pub fn field_band(&self) -> u64 {
        crate::lower::field_band(self.bands)
    }
}

impl RuntimeInfo {
    /// The arena with the OpData in flash.
    pub fn total_with_opdata_in_flash(&self) -> u64 {
        self.total_bytes.saturating_sub(self.opdata_bytes)
    }

    /// The arena in place with the OpData in flash (`run --in-place --opdata
    /// flash`), when in-place execution lowers it.
    pub fn in_place_total_with_opdata_in_flash(&self) -> Option<u64> {
        self.in_place
            .as_ref()
            .filter(|i| i.total_bytes < self.total_bytes)
            .map(|i| i.total_bytes.saturating_sub(self.opdata_bytes))
    }

    /// The arena banded and in place with the OpData in flash (`run --exec
    /// banded --in-place --opdata flash`), when that is below the banded one.
    pub fn banded_in_place_total_with_opdata_in_flash(&self) -> Option<u64> {
        let b = self.in_place.as_ref()?.banded_total_bytes?;
        let banded = self
            .banded
            .as_ref()
            .map_or(self.total_bytes, |b| b.total_bytes);
        (b < banded).then(|| b.saturating_sub(self.opdata_bytes))
    }

    /// The arena banded with the OpData in flash (`run --exec banded --opdata
    /// flash`, what the firmware does), when a stage lowers the head.
    pub fn banded_total_with_opdata_in_flash(&self) -> Option<u64> {
        self.banded
            .as_ref()
            .map(|b| b.total_bytes.saturating_sub(self.opdata_bytes))
    }
}

/// The in-place figures (plain and banded, OpData in the tail), when
/// aliases lower either arena below `r`'s (the lowering without them).
fn in_place_info(model: &Model<'_>, r: &crate::lower::RuntimeArena) -> Option<InPlaceInfo> {
    use crate::lower::{Execution, LowerOptions, runtime_arena_with};
    let plain = runtime_arena_with(
        model,
        &LowerOptions {
            in_place: true,
            ..Default::default()
        },
    )
    .ok()?;
    let banded = runtime_arena_with(
        model,
        &LowerOptions {
            in_place: true,
            execution: Execution::Banded,
            ..Default::default()
        },
    )
    .ok()?;
    let saves_plain = plain.total_bytes < r.plain_head_bytes + r.tail_bytes;
    let saves_banded = !banded.in_place.is_empty() && banded.total_bytes < r.total_bytes;
    if !saves_plain && !saves_banded {
        return None;
    }
    let count = |overwrites: bool| {
        plain
            .in_place
            .iter()
            .filter(|a| a.overwrites == overwrites)
            .count() as u64
    };
    let rings = plain.in_place.iter().filter(|a| a.ring_bytes > 0);
    Some(InPlaceInfo {
        overwrites: count(true),
        windowed: rings.clone().count() as u64,
        ring_bytes: rings.map(|a| a.ring_bytes).sum(),
        aliases: count(false),
        head_bytes: plain.head_bytes,
        total_bytes: plain.total_bytes,
        banded_total_bytes: (!banded.stages.is_empty()).then_some(banded.total_bytes),
    })
}

/// The banded execution's figures from a lowering with
/// `Execution::Banded` (OpData in the tail), when a stage lowers the head.
fn banded_info(r: &crate::lower::RuntimeArena) -> Option<BandedInfo> {
    if r.stages.is_empty() {
        return None;
    }
    Some(BandedInfo {
        stages: r
            .stages
            .iter()
            .map(|s| BandedStageInfo {
                first_op: s.first,
                last_op: s.last,
                bands: s.bands,
                ring_bytes: s.ring_bytes,
                input_rows: s.input_rows,
                field_first: s.field.0,
                field_end: s.field.1,
                over_input: s.behind.is_some(),
            })
            .collect(),
        extra_macs: 0,
        head_bytes: r.head_bytes,
        total_bytes: r.total_bytes,
    })
}

/// One variable tensor (a region of its own: never planned with the
/// activations, alive from `AllocateTensors` to the interpreter's end).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VariableInfo {
    /// Subgraph.
    pub subgraph: usize,
    /// Tensor index.
    pub tensor: usize,
    /// Tensor name.
    pub name: String,
    /// Bytes.
    pub bytes: u64,
    /// Shape.
    pub shape: Vec<i32>,
    /// Element type.
    pub dtype: String,
    /// The first op that reads it (the LSTM or SVDF owning the state).
    pub op: Option<usize>,
    /// Opcode of that op.
    pub opcode: Option<String>,
    /// `tail` (TFLM's "TfLiteTensor variable buffer data"), or `head` when the
    /// model's offline plan places it there (then `offset` is its head offset).
    pub region: Region,
    /// Head offset for offline-planned variables.
    pub offset: Option<i64>,
    /// Always `interpreter`: allocated once, kept across invocations.
    pub lifetime: VariableLifetime,
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
    pub minimum_phase: MinimumPhase,
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
    pub kind: BufferClass,
    /// Subgraph of the tensor, or of the requesting op.
    pub subgraph: usize,
    /// Tensor index (tensors only).
    pub tensor: Option<usize>,
    /// The op requesting a scratch buffer, or the op producing a tensor (none for graph inputs).
    pub op: Option<usize>,
    /// Tensor name, or `scratch <n> of <OPCODE> <op>: <purpose>` (e.g. `im2col (CMSIS-NN)`).
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
    /// Multiply-accumulates per invoke (0 for ops without; `report::compute`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub macs: u64,
    /// Elements the op writes per invoke.
    #[cfg_attr(feature = "serde", serde(default))]
    pub elements: u64,
    /// Flash bytes of the constant inputs attributed to this op (a buffer
    /// shared by several ops counts at the first; `report::flash`).
    #[cfg_attr(feature = "serde", serde(default))]
    pub constant_bytes: u64,
    /// Its tail allocations in TFLM's order, each named by what the kernel
    /// keeps in it (builtin data, OpData, per-channel arrays, copies …).
    #[cfg_attr(feature = "serde", serde(default))]
    pub allocations: Vec<OpAllocation>,
}

/// One tail allocation of an operator.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OpAllocation {
    /// What the kernel keeps in it (`OpData`, `TfLiteConvParams`, …).
    pub purpose: String,
    /// Bytes requested.
    pub requested_bytes: u64,
    /// Bytes the tail moved (alignment padding included).
    pub bytes: u64,
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
        // Producer of each tensor, built once: scanning the operators per buffer
        // made reports quadratic in model size.
        let producers: Vec<Vec<Option<usize>>> = model
            .subgraphs
            .iter()
            .map(|sg| {
                let mut by_tensor = alloc::vec![None; sg.tensors.len()];
                for (i, op) in sg.operators.iter().enumerate() {
                    for &t in &op.outputs {
                        if let Some(slot) =
                            usize::try_from(t).ok().and_then(|t| by_tensor.get_mut(t))
                            && slot.is_none()
                        {
                            *slot = Some(i);
                        }
                    }
                }
                by_tensor
            })
            .collect();
        let producer =
            |g: usize, t: usize| -> Option<usize> { producers.get(g)?.get(t).copied().flatten() };
        let mut scratch_seen: alloc::collections::BTreeMap<(usize, usize), usize> =
            Default::default();
        let buffers: Vec<BufferInfo> = analysis
            .buffers
            .iter()
            .map(|b| match b.info.kind {
                BufferKind::Tensor { subgraph, tensor } => {
                    let t = model.tensor(subgraph, tensor);
                    BufferInfo {
                        kind: BufferClass::Tensor,
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
                    subgraph,
                    op_index,
                    purpose,
                    ..
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
                        kind: BufferClass::Scratch,
                        subgraph,
                        tensor: None,
                        op: Some(op_index),
                        name: alloc::format!("scratch {n} of {opname} {op_index}: {purpose}"),
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
        let flash = flash::flash(model);
        let mut compute = ComputeInfo::default();
        // Each op's tail allocations, in one pass over the tail.
        let mut by_op: alloc::collections::BTreeMap<(usize, usize), Vec<OpAllocation>> =
            alloc::collections::BTreeMap::new();
        for a in &analysis.tail.allocs {
            if let Owner::Op { subgraph, op_index } = a.owner {
                by_op
                    .entry((subgraph, op_index))
                    .or_default()
                    .push(OpAllocation {
                        purpose: a.purpose.into(),
                        requested_bytes: a.requested,
                        bytes: a.used,
                    });
            }
        }
        let operators = analysis
            .ops
            .iter()
            .map(|o| {
                let op = model
                    .subgraphs
                    .get(o.subgraph)
                    .and_then(|s| s.operators.get(o.op_index));
                let c = compute::op_compute(model, o.subgraph, o.op_index);
                let allocations = by_op.remove(&(o.subgraph, o.op_index)).unwrap_or_default();
                compute.macs = compute.macs.saturating_add(c.macs);
                compute.elements = compute.elements.saturating_add(c.elements);
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
                    macs: c.macs,
                    elements: c.elements,
                    constant_bytes: flash.op_bytes(o.subgraph, o.op_index),
                    allocations,
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
        let comparison = crate::tflm::analysis::compare_plan_input(&analysis.plan_input);
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
                        || c.planner == crate::plan::PlannerKind::Best)
            });
        let peak_op = analysis.peak_op.filter(|&(g, _)| g == 0).map(|(_, i)| i);
        // One lowering gives the plain figures and the banded ones.
        let banded = crate::lower::LowerOptions {
            execution: crate::lower::Execution::Banded,
            ..Default::default()
        };
        let (runtime, runtime_refusal) = match crate::lower::runtime_arena_with(model, &banded) {
            Ok(r) => (
                Some(RuntimeInfo {
                    head_bytes: r.plain_head_bytes,
                    tail_bytes: r.tail_bytes,
                    total_bytes: r.plain_head_bytes + r.tail_bytes,
                    variable_bytes: r.variable_bytes,
                    opdata_bytes: r.opdata_bytes,
                    banded: banded_info(&r),
                    in_place: in_place_info(model, &r),
                }),
                None,
            ),
            Err(e) => (None, Some(e.to_string())),
        };
        let head_offset = |g: usize, t: usize| {
            analysis.buffers.iter().find_map(|b| match b.info.kind {
                BufferKind::Tensor { subgraph, tensor } if subgraph == g && tensor == t => {
                    Some(b.offset)
                }
                _ => None,
            })
        };
        let mut variables = Vec::new();
        for (g, sg) in model.subgraphs.iter().enumerate() {
            for (t, tensor) in sg.tensors.iter().enumerate() {
                if !tensor.is_variable || tensor.has_data {
                    continue;
                }
                let op = sg
                    .operators
                    .iter()
                    .position(|o| o.inputs.contains(&(t as i32)));
                let offset = head_offset(g, t);
                variables.push(VariableInfo {
                    subgraph: g,
                    tensor: t,
                    name: tensor.name.to_string(),
                    bytes: tensor.bytes.unwrap_or(0),
                    shape: tensor.shape.clone(),
                    dtype: tensor.dtype.name().into(),
                    op,
                    opcode: op
                        .and_then(|i| sg.operators.get(i))
                        .map(|o| o.name().into()),
                    region: if offset.is_some() {
                        Region::Head
                    } else {
                        Region::Tail
                    },
                    offset,
                    lifetime: VariableLifetime::Interpreter,
                });
            }
        }
        let npu = npu::npu_info(model, &buffers, analysis.profile);
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
                minimum_phase: match analysis.minimum_phase {
                    Phase::Prepare => MinimumPhase::Prepare,
                    Phase::Planning => MinimumPhase::Planning,
                    Phase::Final => MinimumPhase::Final,
                },
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
            runtime,
            runtime_refusal,
            variables,
            what_if: None,
            target_measured_against: analysis.profile.measured_against.map(Into::into),
            npu,
            target_derived: analysis.profile.measured_against.is_none(),
            flash: flash.info,
            compute,
        }
    }

    /// `true` when any diagnostic says TFLM would not run the model.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.severity == "error")
    }
}
/// `85264` → `"85,264"`: byte counts as the CLI and the web app print them.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `-1024` → `"-1,024"`: signed byte counts (margins, deltas).
pub fn grouped_signed(n: i64) -> String {
    if n < 0 {
        alloc::format!("-{}", grouped(n.unsigned_abs()))
    } else {
        grouped(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::{Report, grouped, grouped_signed};
    use crate::plan::PlannerKind;
    use crate::tflm::profile::{CORTEX_M, TargetProfile};
    use crate::{Config, Model, analyze, build::example};

    #[test]
    fn a_derived_target_is_labelled_derived() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).unwrap();
        let report = |profile: &'static TargetProfile| {
            let config = Config {
                profile,
                planner: PlannerKind::TflmGreedy,
            };
            Report::new(&model, &analyze(&model, &config).unwrap(), "m.tflite")
        };
        static DERIVED: TargetProfile = TargetProfile {
            name: "derived-for-the-test",
            measured_against: None,
            ..CORTEX_M
        };
        let derived = report(&DERIVED);
        assert!(derived.target_derived && derived.target_measured_against.is_none());
        let json = serde_json::to_value(&derived).unwrap();
        assert_eq!(json["target_derived"], true);
        // A measured target says which build, and the JSON carries no derived flag.
        let measured = report(&CORTEX_M);
        assert!(!measured.target_derived);
        assert_eq!(
            measured.target_measured_against.as_deref(),
            CORTEX_M.measured_against
        );
        let json = serde_json::to_value(&measured).unwrap();
        assert!(json.get("target_derived").is_none(), "{json}");
        let back: Report = serde_json::from_value(json).unwrap();
        assert!(!back.target_derived);
        // The check record carries the label with the target.
        use crate::report::budget::{Budget, CheckReport};
        let budget = Budget {
            ram_bytes: 1 << 20,
            reserves: alloc::vec::Vec::new(),
            headroom_bp: 2000,
        };
        let v = budget.check(derived.arena.minimum_bytes);
        let c = CheckReport::new(&budget, &v, &derived, None, None);
        assert!(c.target_derived);
        assert_eq!(serde_json::to_value(&c).unwrap()["target_derived"], true);
        let c = CheckReport::new(&budget, &v, &measured, None, None);
        assert!(
            serde_json::to_value(&c)
                .unwrap()
                .get("target_derived")
                .is_none()
        );
    }

    #[test]
    fn grouped_groups_digits_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(85264), "85,264");
        assert_eq!(grouped_signed(-1024), "-1,024");
        assert_eq!(grouped_signed(i64::MIN), "-9,223,372,036,854,775,808");
        assert_eq!(grouped(1048576), "1,048,576");
    }
}
