//! Patch-based execution in row bands: which runs of windowed ops the
//! runtime executes row by row, and the head plan that follows.
//!
//! A *stage* is a chain of CONV_2D / DEPTHWISE_CONV_2D / pooling ops, each
//! reading only the previous one's output (and constants). The runtime
//! (`microarena_runtime`'s `banded` module, format in
//! `microarena_image::EXEC_BANDED`) produces the stage's last output row by
//! row; every intermediate tensor lives in a ring holding just the rows the
//! next op's window reads (its filter height × dilation, in whole rows), so
//! no row is computed twice (0 extra MACs) and the full-resolution
//! intermediates never exist. For the plan, the stage is one step: its input
//! and output are live together with the rings, and the intermediates are
//! not planned at all.
//!
//! Stages are chosen by search, one at a time: every run of at most
//! `MAX_STAGE_OPS` linked ops that covers the current plan's busiest step is
//! scored by its peak of live bytes (a lower bound of any plan), then by its
//! live bytes over time; the best few are planned with the same greedy
//! planner as the plain image and the smallest head wins; then the next
//! busiest step, while a stage saves more than the stack it costs (at most
//! `MAX_STAGES`). Each op's window comes from its lowered `WindowParams`,
//! the words the runtime's stage reads.

use alloc::vec::Vec;

use microarena_image::geometry::{RowWindow, window_rows, window_span};
use microarena_image::params::{OpParams, WindowParams};
use microarena_image::{self as rl, opcode};

use super::params::Words;
use crate::plan::{PlanBuffer, PlannerKind};
use crate::read::model::{Model, Tensor};
use crate::tflm::lifetime::{AllocationInfo, BufferKind};

/// Ops `first..=last` of the main subgraph run as one banded stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandedStage {
    /// First op of the stage (reads the stage's input tensor whole).
    pub first: usize,
    /// Last op (writes the stage's output tensor whole).
    pub last: usize,
    /// Bytes of the inner ops' rings together (each rounded to 16 when planned).
    pub ring_bytes: u64,
    /// Rows of the stage's output: the bands (one output row each, full width).
    pub bands: u64,
    /// Rows of the stage's input tensor.
    pub input_rows: u64,
    /// The rows `[lo, hi)` of the stage's input that the middle band reads
    /// through every op's window: one band's receptive field.
    pub field: (u64, u64),
}

/// The band whose receptive field a stage reports ([`BandedStage::field`]):
/// the middle one, whose field is not clipped by the tensor's edges when the
/// tensor is tall enough, so it shows the whole halo.
pub fn field_band(bands: u64) -> u64 {
    bands / 2
}

/// How many scored candidates are planned exactly.
const PLANNED_CANDIDATES: usize = 4;

/// A stage must save at least this much head, plus [`STACK_PER_OP`] per op:
/// running it takes stack the plain run does not (the stage runner, its
/// row recursion and a second kernel context — 3.5 KiB more for the demo
/// model's three-op stage on a Cortex-M4 under QEMU, measured with the
/// firmware's painted stack), and a stage that saves less arena than that
/// costs RAM overall.
pub(super) const MIN_SAVING_BYTES: u64 = 4096;
/// See [`MIN_SAVING_BYTES`].
const STACK_PER_OP: u64 = 256;

/// Most stages one model runs: each search round plans a few candidates.
const MAX_STAGES: usize = 8;

/// Planned stages: the planner's buffers (the model's, minus the stages'
/// intermediates, plus one ring per inner op) and the plan.
#[derive(Clone)]
pub(super) struct BandedPlan {
    /// In op order, disjoint.
    pub(super) stages: Vec<BandedStage>,
    pub(super) planned: Vec<AllocationInfo>,
    pub(super) offsets: Vec<i64>,
    pub(super) head_bytes: u64,
}

fn tensor<'m, 'a>(model: &'m Model<'a>, t: Option<usize>) -> Option<&'m Tensor<'a>> {
    model.main().tensors.get(t?)
}

/// Bytes of one row (H slice) of a batch-1 NHWC tensor.
fn row_bytes(t: &Tensor<'_>) -> Option<u64> {
    let elem = u64::from(rl::dtype_size(t.dtype.code())?);
    match t.shape.as_slice() {
        [1, _, w, c] => Some(elem * (*w).max(0) as u64 * (*c).max(0) as u64),
        _ => None,
    }
}

/// Op `i`'s window as lowered into its image parameters: the words the
/// runtime's stage reads, so core's rings and fields and the device's rows
/// come from one derivation (`super::params`).
fn window(params: &[Words], i: usize) -> Option<WindowParams> {
    params.get(i).map(WindowParams::from_words)
}

/// `true` when the runtime can run op `i` in bands: a windowed op on
/// batch-1 NHWC tensors whose other inputs are constants.
fn bandable(model: &Model<'_>, params: &[Words], i: usize) -> bool {
    let sg = model.main();
    let Some(op) = sg.operators.get(i) else {
        return false;
    };
    let code = super::image_opcode(op);
    let rows = |t: Option<usize>| tensor(model, t).and_then(row_bytes).is_some();
    code.is_some_and(opcode::runs_in_bands)
        && op.outputs.len() == 1
        && rows(op.input(0))
        && rows(op.output(0))
        && window(params, i).is_some()
        && (1..op.inputs.len()).all(|k| match op.input(k) {
            None => true,
            Some(t) => sg.tensors.get(t).is_some_and(|t| t.has_data),
        })
}

/// Op `i`'s row geometry as the runtime derives it (`RowWindow` from its
/// tensors and lowered window), when it can run by rows ([`bandable`]).
pub(super) fn row_window(model: &Model<'_>, params: &[Words], i: usize) -> Option<RowWindow> {
    if !bandable(model, params, i) {
        return None;
    }
    let op = model.main().operators.get(i)?;
    let (x, y) = (tensor(model, op.input(0))?, tensor(model, op.output(0))?);
    let w = window(params, i)?;
    let h = |t: &Tensor<'_>| t.shape.get(1).map_or(0, |&h| h.max(0) as usize);
    Some(RowWindow {
        in_row: usize::try_from(row_bytes(x)?).ok()?,
        out_row: usize::try_from(row_bytes(y)?).ok()?,
        in_h: h(x),
        out_h: h(y),
        stride: w.stride_h,
        pad: w.pad_h,
        filter: w.filter_h,
        dilation: w.dilation_h,
    })
}

/// `true` when op `i + 1` can follow op `i` in a stage: it reads op `i`'s
/// output as its input 0, and nothing else reads that tensor (`readers`:
/// how many op inputs name each tensor).
fn linked(model: &Model<'_>, readers: &[u32], i: usize) -> bool {
    let sg = model.main();
    let (Some(a), Some(b)) = (sg.operators.get(i), sg.operators.get(i + 1)) else {
        return false;
    };
    let Some(t) = a.output(0) else {
        return false;
    };
    b.input(0) == Some(t)
        && readers.get(t) == Some(&1)
        && !sg.outputs.iter().any(|&o| o >= 0 && o as usize == t)
        && sg
            .tensors
            .get(t)
            .is_some_and(|t| !t.is_variable && !t.has_data)
}

/// Ring bytes op `i` (an inner op of a stage) needs: the rows op `i + 1`'s
/// window spans, whole.
fn ring_bytes(model: &Model<'_>, params: &[Words], i: usize) -> u64 {
    let row = model
        .main()
        .operators
        .get(i)
        .and_then(|a| tensor(model, a.output(0)))
        .and_then(row_bytes)
        .unwrap_or(0);
    let span = window(params, i + 1).map_or(1, |w| {
        window_span(i64::from(w.filter_h), i64::from(w.dilation_h))
    });
    row.saturating_mul(span.max(1) as u64)
}

/// Candidate stages: runs of linked bandable ops (two ops or more, at most
/// `MAX_STAGE_OPS`) whose first op reads a tensor in the arena.
fn candidates(model: &Model<'_>, params: &[Words]) -> Vec<BandedStage> {
    let sg = model.main();
    let n = sg.operators.len();
    let mut readers = alloc::vec![0u32; sg.tensors.len()];
    for &t in sg.operators.iter().flat_map(|o| o.inputs.iter()) {
        if let Some(r) = usize::try_from(t).ok().and_then(|t| readers.get_mut(t)) {
            *r += 1;
        }
    }
    // Per op, computed once: can it run in bands, can the next op follow it.
    let ok: Vec<bool> = (0..n).map(|i| bandable(model, params, i)).collect();
    let link: Vec<bool> = (0..n).map(|i| linked(model, &readers, i)).collect();
    let at = |v: &[bool], i: usize| v.get(i).copied().unwrap_or(false);
    let mut out = Vec::new();
    for first in 0..n {
        let input_ok = sg
            .operators
            .get(first)
            .and_then(|o| o.input(0))
            .is_some_and(|t| {
                sg.tensors
                    .get(t)
                    .is_some_and(|t| !t.has_data && !t.is_variable)
            });
        if !input_ok || !at(&ok, first) {
            continue;
        }
        let mut last = first;
        while last + 1 < n
            && last + 1 - first < rl::MAX_STAGE_OPS
            && at(&link, last)
            && at(&ok, last + 1)
        {
            last += 1;
            let ring_bytes = (first..last).map(|i| ring_bytes(model, params, i)).sum();
            let height = |i: usize, input: bool| {
                sg.operators
                    .get(i)
                    .and_then(|o| tensor(model, if input { o.input(0) } else { o.output(0) }))
                    .and_then(|t| t.shape.get(1))
                    .map_or(0, |&h| i64::from(h.max(0)))
            };
            let bands = height(last, false);
            let middle = field_band(bands as u64) as i64;
            let (mut lo, mut hi) = (middle, middle + 1);
            for i in (first..=last).rev() {
                let Some(w) = window(params, i) else { break };
                (lo, hi) = window_rows(
                    lo,
                    hi,
                    i64::from(w.stride_h),
                    i64::from(w.pad_h),
                    i64::from(w.filter_h),
                    i64::from(w.dilation_h),
                    height(i, true),
                );
            }
            out.push(BandedStage {
                first,
                last,
                ring_bytes,
                bands: bands as u64,
                input_rows: height(first, true) as u64,
                field: (lo as u64, hi as u64),
            });
        }
    }
    out
}

/// The planner's buffers with each of `stages` (disjoint, in op order) run
/// as one step: scopes inside a stage collapse onto its first, the
/// intermediates go, one ring per inner op comes (a scratch of that op,
/// live for its stage).
fn stage_buffers(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    stages: &[BandedStage],
) -> Vec<AllocationInfo> {
    let sg = model.main();
    let map = |s: i32| collapse(op_scope, stages, s);
    let inner: Vec<usize> = stages
        .iter()
        .flat_map(|st| st.first..st.last)
        .filter_map(|i| sg.operators.get(i).and_then(|o| o.output(0)))
        .collect();
    let mut out: Vec<AllocationInfo> = planned
        .iter()
        .filter(|a| !matches!(a.kind, BufferKind::Tensor { tensor, .. } if inner.contains(&tensor)))
        .map(|a| AllocationInfo {
            first: map(a.first),
            last: map(a.last),
            ..*a
        })
        .collect();
    for st in stages {
        let at = map(scope_of(op_scope, st.first));
        for i in st.first..st.last {
            out.push(AllocationInfo {
                kind: BufferKind::Scratch {
                    subgraph: 0,
                    op_index: i,
                    request: usize::MAX,
                    purpose: "banded stage ring",
                },
                bytes: ring_bytes(model, params, i),
                first: at,
                last: at,
                offline_offset: None,
                needs_allocating: true,
            });
        }
    }
    out
}

/// The scope op `i` runs at.
fn scope_of(op_scope: &[i32], i: usize) -> i32 {
    op_scope.get(i).copied().unwrap_or(0)
}

/// Scope `s` once each of `stages` (disjoint, in op order) is one step.
pub(super) fn collapse(op_scope: &[i32], stages: &[BandedStage], s: i32) -> i32 {
    let scope = |i: usize| scope_of(op_scope, i);
    let mut shift = 0;
    for st in stages {
        let (s0, s1) = (scope(st.first), scope(st.last));
        if s > s1 {
            shift += s1 - s0;
        } else if s > s0 {
            return s0 - shift;
        }
    }
    s - shift
}

fn align16(v: u64) -> u64 {
    v.saturating_add(15) & !15
}

/// The planner's input for `planned`: sizes rounded to 16, no fixed offsets.
pub(super) fn plan_buffers(planned: &[AllocationInfo]) -> Vec<PlanBuffer> {
    buffers(planned)
}

fn buffers(planned: &[AllocationInfo]) -> Vec<PlanBuffer> {
    planned
        .iter()
        .map(|a| PlanBuffer {
            size: align16(a.bytes),
            first: a.first,
            last: a.last,
            fixed_offset: None,
        })
        .collect()
}

/// The most bytes live at any one scope (no plan of `b` needs less), the
/// first scope where that happens, and the sum over scopes of the bytes
/// live (which, between two candidates with the same peak, leaves the later
/// rounds less to fight).
pub(super) fn live_peak(b: &[PlanBuffer]) -> (u64, i32, u64) {
    let mut events: Vec<(i32, i64)> = Vec::with_capacity(2 * b.len());
    for x in b {
        events.push((x.first, x.size as i64));
        events.push((x.last.saturating_add(1), -(x.size as i64)));
    }
    // Frees before allocations at the same scope.
    events.sort_unstable_by_key(|&(s, d)| (s, d));
    let (mut live, mut peak, mut at) = (0i64, 0i64, 0i32);
    let (mut area, mut prev) = (0i64, None);
    for (s, d) in events {
        if let Some(p) = prev {
            area = area.saturating_add(live.saturating_mul(i64::from(s - p)));
        }
        prev = Some(s);
        live += d;
        if live > peak {
            (peak, at) = (live, s);
        }
    }
    (peak.max(0) as u64, at, area.max(0) as u64)
}

/// `stages` (disjoint, in op order) planned over `planned`: the same stages
/// with other buffers (the in-place lowering's alias groups), one greedy
/// plan, no search.
pub(super) fn replan(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    stages: &[BandedStage],
    avoid: &[usize],
) -> Option<BandedPlan> {
    if stages.is_empty() || stages.iter().any(|s| covers(s, avoid)) {
        return None;
    }
    let b = stage_buffers(model, params, planned, op_scope, stages);
    let plan = PlannerKind::TflmGreedy.plan(&buffers(&b)).ok()?;
    Some(BandedPlan {
        stages: stages.to_vec(),
        planned: b,
        offsets: plan.offsets,
        head_bytes: plan.head_bytes,
    })
}

/// `true` when stage `s` runs one of the ops `ops`.
fn covers(s: &BandedStage, ops: &[usize]) -> bool {
    ops.iter().any(|&i| s.first <= i && i <= s.last)
}

/// The banded plan for `model`: stages added one at a time, each over the
/// current plan's busiest step, while one saves enough; `None` when the
/// first does not beat `plain_head` (the plain image's head) by that much.
/// No stage runs an op of `avoid` (ops that run in place by rows).
pub(super) fn best(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    plain_head: u64,
    avoid: &[usize],
) -> Option<BandedPlan> {
    let mut all = candidates(model, params);
    all.retain(|c| !covers(c, avoid));
    let mut best: Option<BandedPlan> = None;
    let mut head = plain_head;
    while best.as_ref().map_or(0, |b| b.stages.len()) < MAX_STAGES {
        let stages = best.as_ref().map_or(Vec::new(), |b| b.stages.clone());
        let current = match &best {
            Some(b) => b.planned.clone(),
            None => planned.to_vec(),
        };
        // The busiest step, as an op range of the original model: ops
        // whose collapsed scope is the busiest one.
        let (_, busiest, _) = live_peak(&buffers(&current));
        let busy_ops: Vec<usize> = (0..model.main().operators.len())
            .filter(|&i| collapse(op_scope, &stages, scope_of(op_scope, i)) == busiest)
            .collect();
        let free = |c: &BandedStage| stages.iter().all(|s| c.last < s.first || s.last < c.first);
        let mut scored: Vec<((u64, u64), BandedStage, Vec<AllocationInfo>)> = all
            .iter()
            .filter(|c| free(c) && busy_ops.iter().any(|&i| c.first <= i && i <= c.last))
            .map(|&c| {
                let mut with = stages.clone();
                with.push(c);
                with.sort_by_key(|s| s.first);
                let b = stage_buffers(model, params, planned, op_scope, &with);
                let (peak, _, area) = live_peak(&buffers(&b));
                ((peak, area), c, b)
            })
            .filter(|((peak, _), _, _)| *peak < head)
            .collect();
        // Lowest bound first, then the least live bytes over time, then the
        // shorter stage (fewer rings to run).
        scored.sort_by_key(|(score, s, _)| (*score, s.last - s.first, s.first));
        let mut round: Option<BandedPlan> = None;
        for (_, stage, b) in scored.into_iter().take(PLANNED_CANDIDATES) {
            let Ok(plan) = PlannerKind::TflmGreedy.plan(&buffers(&b)) else {
                continue;
            };
            let ops = (stage.last - stage.first + 1) as u64;
            let worth = plan
                .head_bytes
                .saturating_add(MIN_SAVING_BYTES + STACK_PER_OP * ops)
                <= head;
            if worth && plan.head_bytes < round.as_ref().map_or(head, |p| p.head_bytes) {
                let mut with = stages.clone();
                with.push(stage);
                with.sort_by_key(|s| s.first);
                round = Some(BandedPlan {
                    stages: with,
                    planned: b,
                    offsets: plan.offsets,
                    head_bytes: plan.head_bytes,
                });
            }
        }
        match round {
            Some(r) => {
                head = r.head_bytes;
                best = Some(r);
            }
            None => break,
        }
    }
    best
}
