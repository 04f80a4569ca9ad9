//! The whole prediction for one model, target and planner: the function the
//! CLI, the web app and the firmware build all call.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::plan::{self, Plan, PlanBuffer, PlanError, PlannerKind, align16};
use crate::read::model::Model;
use crate::tflm::kernels::{Fidelity, Refusal};
use crate::tflm::lifetime::{self, AllocationInfo, BufferKind, LifetimeError};
use crate::tflm::profile::TargetProfile;
use crate::tflm::registry::{self, Stage};
use crate::tflm::tail::{self, MAX_SCRATCH_PER_OP, Owner, TailSimulation};

/// What to analyse for. No `Default`: the caller must choose a target.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Target ABI profile.
    pub profile: &'static TargetProfile,
    /// Planner that places the head.
    pub planner: PlannerKind,
}

/// How serious a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// A figure is estimated or something will surprise.
    Warning,
    /// TFLM would not run the model as it is, or a figure cannot be trusted.
    Error,
}

impl Severity {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// A finding about the model that is not a failure of the analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// What and why, for a person.
    pub message: String,
    /// The operator it is about, as (subgraph, op index), when it is about one.
    pub op: Option<(usize, usize)>,
}

/// The phase that sets the minimum working arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Temp tensors held while an op is prepared.
    Prepare,
    /// AllocationInfo array and planner working memory during planning.
    Planning,
    /// The final head + tail.
    Final,
}

impl Phase {
    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Prepare => "prepare",
            Phase::Planning => "memory planning",
            Phase::Final => "final head+tail",
        }
    }
}

/// One buffer of the head with its place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedBuffer {
    /// Tensor or scratch, lifetime and size.
    pub info: AllocationInfo,
    /// Size handed to the planner (rounded up to 16).
    pub aligned_bytes: u64,
    /// Offset in the head.
    pub offset: i64,
}

impl PlannedBuffer {
    /// Alignment padding of this buffer.
    pub fn padding_bytes(&self) -> u64 {
        self.aligned_bytes - self.info.bytes
    }
}

/// Per-operator figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpSummary {
    /// Subgraph.
    pub subgraph: usize,
    /// Index within the subgraph.
    pub op_index: usize,
    /// Builtin name or custom code.
    pub opcode: String,
    /// Scope at which the op runs (−1 if unreachable from subgraph 0).
    pub scope: i32,
    /// Aligned bytes of head buffers live at that scope.
    pub live_bytes: u64,
    /// Aligned bytes of the op's scratch buffers.
    pub scratch_bytes: u64,
    /// Tail bytes the op causes (builtin data, OpData, per-channel arrays), padding included.
    pub persistent_bytes: u64,
}

/// Everything predicted for one model.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Target profile used.
    pub profile: &'static TargetProfile,
    /// Planner used.
    pub planner: PlannerKind,
    /// Planned buffers, in planner id order.
    pub buffers: Vec<PlannedBuffer>,
    /// The same buffers as the planner saw them (for comparing planners).
    pub plan_input: Vec<PlanBuffer>,
    /// The plan.
    pub plan: Plan,
    /// Non-persistent head.
    pub head_bytes: u64,
    /// Persistent tail.
    pub tail_bytes: u64,
    /// head + tail, what TFLM reports.
    pub total_bytes: u64,
    /// The smallest arena with which AllocateTensors succeeds.
    pub minimum_bytes: u64,
    /// The phase that sets [`Analysis::minimum_bytes`].
    pub minimum_phase: Phase,
    /// What the memory-planning phase holds below the tail (request area,
    /// pointer and AllocationInfo arrays, the planner's working memory).
    pub planning_temp_bytes: u64,
    /// Largest live bytes at any scope (no planner can do better).
    pub lower_bound_bytes: u64,
    /// Scope with the most live bytes.
    pub peak_scope: i32,
    /// The op running at the peak scope, as (subgraph, op_index).
    pub peak_op: Option<(usize, usize)>,
    /// Per-op figures, subgraph 0 first.
    pub ops: Vec<OpSummary>,
    /// The tail simulation.
    pub tail: TailSimulation,
    /// Last scope.
    pub max_scope: i32,
    /// Findings.
    pub diagnostics: Vec<Diagnostic>,
}

/// Why a model could not be analysed at all.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnalysisError {
    /// Control flow could not be walked.
    Lifetime(LifetimeError),
    /// The chosen planner refused the buffers.
    Plan(PlanError),
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AnalysisError::Lifetime(e) => e.fmt(f),
            AnalysisError::Plan(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for AnalysisError {}

impl From<LifetimeError> for AnalysisError {
    fn from(e: LifetimeError) -> Self {
        AnalysisError::Lifetime(e)
    }
}

impl From<PlanError> for AnalysisError {
    fn from(e: PlanError) -> Self {
        AnalysisError::Plan(e)
    }
}

/// The head buffers of a model as a planner sees them, with their AllocationInfo.
pub fn plan_input(infos: &[AllocationInfo]) -> (Vec<AllocationInfo>, Vec<PlanBuffer>) {
    let planned: Vec<AllocationInfo> = infos
        .iter()
        .filter(|a| a.needs_allocating)
        .copied()
        .collect();
    let input = planned
        .iter()
        .map(|a| PlanBuffer {
            size: align16(a.bytes),
            first: a.first,
            last: a.last,
            fixed_offset: a.offline_offset.map(i64::from),
        })
        .collect();
    (planned, input)
}

/// Predicts TFLM's arena for `model` on `config.profile` with `config.planner`.
pub fn analyze(model: &Model<'_>, config: &Config) -> Result<Analysis, AnalysisError> {
    let profile = config.profile;
    let sim = tail::simulate(model, profile, config.planner);
    let set: alloc::collections::BTreeSet<(usize, usize)> =
        sim.set_in_prepare.iter().copied().collect();
    let set_in_prepare = |g: usize, t: usize| set.contains(&(g, t));
    let lifetimes = lifetime::allocation_info(model, &sim.scratch, &set_in_prepare)?;
    let (planned, input) = plan_input(&lifetimes.infos);
    let plan = config.planner.plan(&input)?;
    let buffers: Vec<PlannedBuffer> = planned
        .iter()
        .zip(&input)
        .zip(&plan.offsets)
        .map(|((info, pb), &offset)| PlannedBuffer {
            info: *info,
            aligned_bytes: pb.size,
            offset,
        })
        .collect();

    let head_bytes = plan.head_bytes;
    let tail_bytes = sim.tail_bytes;
    let total_bytes = head_bytes + tail_bytes;

    // Planning phase (§4.5): request area, subgraph pointer array, AllocationInfo
    // array, then the greedy planner's working memory between 16-aligned ends.
    let n_scratch = sim.scratch.len() as u64;
    let mut temp = u64::from(profile.scratch_request.bytes) * (n_scratch + MAX_SCRATCH_PER_OP);
    temp = align_to(temp, profile.pointer_bytes)
        + u64::from(profile.pointer_bytes) * model.subgraphs.len() as u64;
    temp = align_to(temp, profile.allocation_info.align)
        + u64::from(profile.allocation_info.bytes) * lifetimes.infos.len() as u64;
    let planner_work = match config.planner {
        PlannerKind::TflmGreedy | PlannerKind::Best => {
            u64::from(profile.planner_bytes_per_buffer) * input.len() as u64
        }
        PlannerKind::Linear => 0,
    };
    let planning_temp_bytes = align16(temp) + planner_work;
    let planning = planning_temp_bytes + align16(sim.tail_at_planning);
    let (mut minimum_bytes, mut minimum_phase) = (total_bytes, Phase::Final);
    if planning > minimum_bytes {
        (minimum_bytes, minimum_phase) = (planning, Phase::Planning);
    }
    if sim.prepare_peak.bytes > minimum_bytes {
        (minimum_bytes, minimum_phase) = (sim.prepare_peak.bytes, Phase::Prepare);
    }
    let minimum_bytes = align16(minimum_bytes);

    // Live bytes per scope, for the per-op bars and the peak.
    let scopes = (lifetimes.max_scope.max(0) as usize) + 1;
    // Difference array: O(buffers + scopes) even when every buffer spans every scope.
    let mut delta = alloc::vec![0i128; scopes + 1];
    for pb in &input {
        if pb.last < 0 || pb.first > pb.last {
            continue;
        }
        let first = (pb.first.max(0) as usize).min(scopes);
        let last = (pb.last as usize).min(scopes - 1);
        if let Some(d) = delta.get_mut(first) {
            *d += i128::from(pb.size);
        }
        if let Some(d) = delta.get_mut(last + 1) {
            *d -= i128::from(pb.size);
        }
    }
    let mut running = 0i128;
    let pinned = plan::pinned_buffers_share_memory(&input);
    let live: Vec<u64> = delta
        .iter()
        .take(scopes)
        .enumerate()
        .map(|(s, d)| {
            running += d;
            let shared = if pinned {
                plan::shared_pinned_bytes(&input, s as i32)
            } else {
                0
            };
            (running.max(0) as u64).saturating_sub(shared)
        })
        .collect();
    let lower_bound_bytes = plan::lower_bound(&input);
    // The first scope with the most live bytes; on a tie, one where an op runs (an offline
    // plan can make the graph inputs' scope as full as the op that reads them).
    let mut op_at = alloc::vec![false; live.len()];
    for &o in lifetimes.op_scope.iter().flatten() {
        if let Some(slot) = usize::try_from(o).ok().and_then(|o| op_at.get_mut(o)) {
            *slot = true;
        }
    }
    let runs_op = |s: usize| op_at.get(s).copied().unwrap_or(false);
    let (peak_scope, _) = live
        .iter()
        .enumerate()
        .fold((0usize, 0u64), |(bs, bv), (s, &v)| {
            if v > bv || (v == bv && !runs_op(bs) && runs_op(s)) {
                (s, v)
            } else {
                (bs, bv)
            }
        });
    let peak_scope = peak_scope as i32;
    // Per-op scratch and tail bytes, gathered in one pass each (not per op).
    let op_base = model.operator_offsets();
    let flat = |g: usize, i: usize| op_base.get(g).map(|b| b + i);
    let mut scratch_of = alloc::vec![0u64; model.operator_count()];
    for b in &buffers {
        if let BufferKind::Scratch {
            subgraph, op_index, ..
        } = b.info.kind
            && let Some(slot) = flat(subgraph, op_index).and_then(|k| scratch_of.get_mut(k))
        {
            *slot += b.aligned_bytes;
        }
    }
    let mut persistent_of = alloc::vec![0u64; model.operator_count()];
    for a in &sim.allocs {
        if let Owner::Op { subgraph, op_index } = a.owner
            && let Some(slot) = flat(subgraph, op_index).and_then(|k| persistent_of.get_mut(k))
        {
            *slot += a.used;
        }
    }
    let mut peak_op = None;
    let mut ops = Vec::with_capacity(model.operator_count());
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (i, op) in sg.operators.iter().enumerate() {
            let scope = lifetimes
                .op_scope
                .get(g)
                .and_then(|v| v.get(i))
                .copied()
                .unwrap_or(-1);
            if scope == peak_scope && peak_op.is_none() {
                peak_op = Some((g, i));
            }
            let k = flat(g, i);
            ops.push(OpSummary {
                subgraph: g,
                op_index: i,
                opcode: op.name().into(),
                scope,
                live_bytes: usize::try_from(scope)
                    .ok()
                    .and_then(|s| live.get(s))
                    .copied()
                    .unwrap_or(0),
                scratch_bytes: k.and_then(|k| scratch_of.get(k)).copied().unwrap_or(0),
                persistent_bytes: k.and_then(|k| persistent_of.get(k)).copied().unwrap_or(0),
            });
        }
    }

    let diagnostics = diagnose(
        model,
        config,
        &sim,
        &lifetimes.infos,
        total_bytes,
        minimum_bytes,
        minimum_phase,
    );
    Ok(Analysis {
        profile,
        planner: config.planner,
        buffers,
        plan_input: input,
        plan,
        head_bytes,
        tail_bytes,
        total_bytes,
        minimum_bytes,
        minimum_phase,
        planning_temp_bytes,
        lower_bound_bytes,
        peak_scope,
        peak_op,
        ops,
        tail: sim,
        max_scope: lifetimes.max_scope,
        diagnostics,
    })
}

fn align_to(v: u64, a: u32) -> u64 {
    let a = u64::from(a.max(1));
    v.div_ceil(a) * a
}

fn diagnose(
    model: &Model<'_>,
    config: &Config,
    sim: &TailSimulation,
    infos: &[AllocationInfo],
    total: u64,
    minimum: u64,
    phase: Phase,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut push = |op: Option<(usize, usize)>, severity, message: String| {
        out.push(Diagnostic {
            severity,
            message,
            op,
        })
    };
    let profile = config.profile;
    let op_name = |g: usize, i: usize| {
        model
            .subgraphs
            .get(g)
            .and_then(|s| s.operators.get(i))
            .map_or("?", |o| o.name())
    };
    for (g, row) in sim.costs.iter().enumerate() {
        for (i, c) in row.iter().enumerate() {
            let name = op_name(g, i);
            match c.refusal {
                Some(Refusal::Hybrid) => push(
                    Some((g, i)),
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} op {i} ({name}) has float activations with integer weights; hybrid models are rejected in Prepare"
                    ),
                ),
                Some(Refusal::NoKernel) => push(
                    Some((g, i)),
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} op {i} is custom op '{name}', which has no kernel in TFLM's reference build (the application must register one); its allocations are counted as 0"
                    ),
                ),
                Some(Refusal::NeedsCoProcessor(npu)) => push(
                    Some((g, i)),
                    Severity::Error,
                    format!(
                        "TFLM would not run this model on {}: subgraph {g} op {i} is '{name}', the {} custom operator, which only a TFLM built with {} registers (--target {}); its allocations are counted as 0",
                        profile.name,
                        npu.name(),
                        npu.build_flag(),
                        npu.target(),
                    ),
                ),
                Some(Refusal::Quantization(why) | Refusal::Prepare(why)) => push(
                    Some((g, i)),
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} op {i} ({name}): {why}, which its Prepare refuses, so AllocateTensors fails"
                    ),
                ),
                Some(Refusal::Crashes(why)) => push(
                    Some((g, i)),
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} op {i} ({name}): {why}, so its Prepare crashes"
                    ),
                ),
                Some(Refusal::NonEmptyIntermediate) => push(
                    Some((g, i)),
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} op {i} ({name}) has a non-empty intermediate tensor; FinishModelAllocation fails"
                    ),
                ),
                Some(Refusal::Rejected(r)) => {
                    let why = registry::describe(&r, name, profile.backend);
                    let when = match r.stage() {
                        Stage::Resolve => {
                            "the interpreter cannot resolve the op, so AllocateTensors fails"
                        }
                        Stage::Prepare => "Prepare fails, so AllocateTensors fails",
                        Stage::Invoke => {
                            "Prepare accepts it, so the model loads and TFLM reports its arena, but it fails at Invoke (the kernel's Eval has no case for it)"
                        }
                    };
                    push(
                        Some((g, i)),
                        Severity::Error,
                        format!(
                            "TFLM would not run this model: subgraph {g} op {i} ({name}): {why}; {when}"
                        ),
                    )
                }
                None => {}
            }
            match c.fidelity {
                Fidelity::Exact => {}
                Fidelity::Estimated(why) => push(
                    Some((g, i)),
                    Severity::Warning,
                    format!(
                        "subgraph {g} op {i} ({name}): estimated on {}: {why}",
                        profile.name
                    ),
                ),
                Fidelity::Unmodelled if c.refusal.is_none() => push(
                    Some((g, i)),
                    Severity::Warning,
                    format!(
                        "subgraph {g} op {i} ({name}): kernel allocations are not modelled for {}; its builtin data, OpData and scratch are counted as 0 bytes",
                        profile.name
                    ),
                ),
                Fidelity::Unmodelled => {}
            }
        }
    }
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (t, tensor) in sg.tensors.iter().enumerate() {
            if tensor.shape.contains(&-1) {
                push(
                    None,
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} tensor {t} '{}' has a dynamic shape {:?}; TFLM needs static shapes (planned here with -1 counted as 1)",
                        tensor.name, tensor.shape
                    ),
                );
            }
            let planned = !tensor.has_data && !tensor.is_variable;
            if planned && tensor.bytes.is_none() {
                push(
                    None,
                    Severity::Error,
                    format!(
                        "TFLM would not run this model: subgraph {g} tensor {t} '{}' has type {}, which TFLM cannot size",
                        tensor.name, tensor.dtype
                    ),
                );
            }
        }
    }
    if let Some(why) = model.offline_plan_error {
        push(
            None,
            Severity::Error,
            format!(
                "the OfflineMemoryAllocation metadata cannot be read: {why}; TFLM would read garbage offsets"
            ),
        );
    }
    if let Some(p) = &model.offline_plan {
        let n = model.tensor_count();
        if p.offsets.len() != n {
            push(
                None,
                Severity::Error,
                format!(
                    "TFLM would not run this model: the offline plan has {} offsets but the model has {n} tensors; allocation fails (planned online here)",
                    p.offsets.len()
                ),
            );
        } else {
            let fixed = infos
                .iter()
                .filter(|a| a.needs_allocating && a.offline_offset.is_some())
                .count();
            push(
                None,
                Severity::Info,
                format!("{fixed} buffers are placed by the model's OfflineMemoryAllocation plan"),
            );
            if p.offsets.iter().any(|&o| o < -1) {
                push(None, Severity::Error, "the offline plan has negative offsets other than -1; TFLM would write before the arena".into());
            }
        }
    }
    if minimum > total {
        push(
            None,
            Severity::Info,
            format!(
                "TFLM reports {total} bytes, but AllocateTensors needs an arena of at least {minimum} bytes ({} is the binding phase)",
                phase.name()
            ),
        );
    }
    out
}

/// One planner's result on a model, for comparing planners side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanComparison {
    /// The planner.
    pub planner: PlannerKind,
    /// Head it gives.
    pub head_bytes: u64,
    /// The head is proven minimal (equal to the lower bound, or to an optimum
    /// `best` proved).
    pub proven_optimal: bool,
}

/// Every planner on the same head buffers ([`Analysis::plan_input`]), in
/// [`PlannerKind::ALL`] order. Planners that refuse the buffers (the linear
/// planner with an offline plan or above 1024 buffers) are left out.
pub fn compare_plan_input(input: &[PlanBuffer]) -> Vec<PlanComparison> {
    let bound = plan::lower_bound(input);
    let best = plan::best::plan_with_budget(input, plan::best::DEFAULT_BUDGET_NODES);
    // The proven minimum, when `best` proved one.
    let optimum = best.proven_optimal.then_some(best.plan.head_bytes);
    PlannerKind::ALL
        .iter()
        .filter_map(|&kind| {
            let (head, proven) = match kind {
                PlannerKind::Best => (best.plan.head_bytes, best.proven_optimal),
                other => {
                    let h = other.plan(input).ok()?.head_bytes;
                    (h, optimum == Some(h))
                }
            };
            Some(PlanComparison {
                planner: kind,
                head_bytes: head,
                proven_optimal: proven || head <= bound,
            })
        })
        .collect()
}

/// Analyses `model` once and compares every planner on its head buffers.
pub fn compare_planners(
    model: &Model<'_>,
    profile: &'static TargetProfile,
) -> Result<Vec<PlanComparison>, AnalysisError> {
    let a = analyze(
        model,
        &Config {
            profile,
            planner: PlannerKind::TflmGreedy,
        },
    )?;
    Ok(compare_plan_input(&a.plan_input))
}
