//! What the runtime's arena holds for a model: core's greedy plan of the
//! head (activations and the runtime's scratch, with TFLM's lifetimes), the
//! OpData tail and the variable region. [`super::lower`] writes the same
//! numbers into the image, so the prediction is what the device uses.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use microarena_image::{self as rl, opcode};

use super::banded::BandedStage;
use super::error::{LowerError, fit};
use super::inplace::{self, InPlaceOp};
use super::params::{Words, op_params};
use crate::plan::PlannerKind;
use crate::read::model::{Model, Operator, Tensor};
use crate::read::ops::OpOptions;
use crate::tflm::analysis::plan_input;
use crate::tflm::lifetime::{self, AllocationInfo, BufferKind, ScratchRequest};

/// Where the runtime keeps the OpData its kernels' Prepare computes
/// (requantization multipliers, bounds, FFT twiddles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpDataIn {
    /// In the arena's tail, computed at start-up (as TFLM does).
    #[default]
    Tail,
    /// In the image (flash): `lower` reserves the block, the runtime's
    /// `freeze_opdata` fills it on the host and the device only checks it.
    /// The tail keeps the variable region alone.
    Flash,
}

/// How the runtime executes the model's ops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Execution {
    /// Every op once over whole tensors, in TFLM's order and lifetimes.
    #[default]
    Plain,
    /// Patch-based in row bands where it lowers the head: chains of windowed
    /// ops over the plan's busiest steps run row by row, their intermediate
    /// tensors held a few rows at a time ([`super::banded`]); plain when no
    /// chain saves more than the stack a stage costs.
    Banded,
}

/// How [`super::lower_with`] lowers a model and [`runtime_arena_with`] sizes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LowerOptions {
    /// Where the ops' OpData lives.
    pub opdata: OpDataIn,
    /// How the ops execute.
    pub execution: Execution,
    /// In-place execution ([`super::inplace`]): element-wise ops write over
    /// an input that dies at them, and RESHAPE / SQUEEZE / EXPAND_DIMS
    /// outputs are their input's bytes; each alias group is one planned
    /// buffer. Kept only when it does not enlarge the head.
    pub in_place: bool,
}

/// The arena the microarena runtime uses for a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeArena {
    /// Planned activations and scratch buffers (core's greedy plan).
    pub head_bytes: u64,
    /// OpData the runtime's Prepare allocates (unless it lives in flash),
    /// plus the variable region.
    pub tail_bytes: u64,
    /// Variable tensors (LSTM/SVDF state), part of `tail_bytes`.
    pub variable_bytes: u64,
    /// Every op's OpData: part of `tail_bytes` with [`OpDataIn::Tail`],
    /// flash with [`OpDataIn::Flash`].
    pub opdata_bytes: u64,
    /// Where the OpData lives.
    pub opdata_in: OpDataIn,
    /// The banded stages, in op order (empty when the model runs plain).
    pub stages: Vec<BandedStage>,
    /// The head of the plain plan (what `head_bytes` is without stages), so
    /// one lowering gives both figures.
    pub plain_head_bytes: u64,
    /// The ops that run in place or as aliases, in op order (empty unless
    /// [`LowerOptions::in_place`]).
    pub in_place: Vec<InPlaceOp>,
    /// The plain plan's head with every tensor in a buffer of its own (what
    /// `plain_head_bytes` is without in-place execution).
    pub separate_head_bytes: u64,
    /// `head + tail`: the smallest arena `Interpreter::new` accepts, and the
    /// high-water mark it reports.
    pub total_bytes: u64,
}

/// Predicts the microarena runtime's arena for `model` (OpData in the tail).
pub fn runtime_arena(model: &Model<'_>) -> Result<RuntimeArena, LowerError> {
    runtime_arena_with(model, &LowerOptions::default())
}

/// Predicts the microarena runtime's arena for `model` lowered with `options`.
pub fn runtime_arena_with(
    model: &Model<'_>,
    options: &LowerOptions,
) -> Result<RuntimeArena, LowerError> {
    let l = plan(model, options)?;
    let tail = l.tail_bytes(options);
    Ok(RuntimeArena {
        head_bytes: l.head,
        tail_bytes: tail,
        variable_bytes: l.var_bytes,
        opdata_bytes: l.opdata,
        opdata_in: options.opdata,
        stages: l.stages,
        plain_head_bytes: l.plain_head,
        in_place: l.in_place,
        separate_head_bytes: l.separate_head,
        total_bytes: l.head + tail,
    })
}

/// Everything [`super::lower`] and [`runtime_arena`] share.
pub(super) struct Lowered {
    pub(super) head: u64,
    /// The plain plan's head (equal to `head` without stages).
    pub(super) plain_head: u64,
    /// The plain plan's head without aliases.
    pub(super) separate_head: u64,
    /// The ops whose output 0 is an input's bytes.
    pub(super) in_place: Vec<InPlaceOp>,
    /// Every op's OpData (in the tail or the image's block).
    pub(super) opdata: u64,
    /// Bytes of the variable region (part of `tail`).
    pub(super) var_bytes: u64,
    /// Offset of each variable tensor in the variable region.
    pub(super) variable_offset: Vec<Option<u64>>,
    /// For each resource handle tensor (global index), the (subgraph,
    /// tensor) of the value its resource's first ASSIGN_VARIABLE assigns:
    /// the handle's image record takes that value's type and shape.
    pub(super) resource_value: alloc::collections::BTreeMap<usize, (usize, usize)>,
    /// Head offset of each tensor (global index) that is planned.
    pub(super) tensor_offset: Vec<Option<u64>>,
    /// (offset, bytes) of each op's scratch buffer (a banded op's ring).
    pub(super) scratch: Vec<Option<(u64, u64)>>,
    /// The banded stages: the tensors only they read are streamed.
    pub(super) stages: Vec<BandedStage>,
    /// Precomputed parameters per op.
    pub(super) params: Vec<Words>,
    /// State the runtime keeps for an op between invokes that is no tensor
    /// of the model (SignalFilterBankSpectralSubtraction's noise estimate):
    /// written as extra variable tensors after the model's, each the op's
    /// last input.
    pub(super) states: Vec<OpState>,
    /// Global index of each subgraph's first tensor.
    pub(super) tensor_base: Vec<usize>,
    /// OpData bytes of every op before each subgraph's first.
    pub(super) opdata_at: Vec<u64>,
}

impl Lowered {
    /// The runtime's tail: the variable region, plus the OpData unless it
    /// lives in flash.
    pub(super) fn tail_bytes(&self, options: &LowerOptions) -> u64 {
        match options.opdata {
            OpDataIn::Tail => self.opdata + self.var_bytes,
            OpDataIn::Flash => self.var_bytes,
        }
    }
}

/// One op-owned state block in the variable region (see [`Lowered::states`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct OpState {
    pub(super) op_index: usize,
    /// uint32 elements.
    pub(super) elements: u32,
    /// Offset in the variable region.
    pub(super) offset: u64,
}

/// Checks that the runtime can run `model`, lowers every op's parameters
/// and plans the head.
pub(super) fn plan(model: &Model<'_>, options: &LowerOptions) -> Result<Lowered, LowerError> {
    let several = model.subgraphs.len() > 1;
    // Stages and in-place rows run in subgraph 0's op order alone: a model
    // with several subgraphs runs plain (its modes' figures are plain's).
    let plain_only = LowerOptions {
        execution: Execution::Plain,
        in_place: false,
        ..*options
    };
    let options = if several { &plain_only } else { options };
    check_calls(model)?;
    // Tensors and ops are numbered globally in the image: every subgraph's
    // after the subgraphs before it.
    let (mut tensor_base, mut op_base) = (Vec::new(), Vec::new());
    let (mut n_tensors, mut n_ops) = (0usize, 0usize);
    for sg in &model.subgraphs {
        tensor_base.push(n_tensors);
        op_base.push(n_ops);
        n_tensors += sg.tensors.len();
        n_ops += sg.operators.len();
    }
    if n_tensors >= usize::from(rl::NO_TENSOR) {
        return Err(LowerError::Internal(format!(
            "{n_tensors} tensors exceed the image's 16-bit index"
        )));
    }
    let global_op = |g: usize, i: usize| op_base.get(g).copied().unwrap_or(0) + i;
    let global_tensor = |g: usize, t: usize| tensor_base.get(g).copied().unwrap_or(0) + t;
    // Operators first, so a model with an op the runtime lacks is refused by naming that op.
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (oi, op) in sg.operators.iter().enumerate() {
            if !super::image_opcode(op).is_some_and(|c| rl::op_supported(i32::from(c))) {
                return Err(LowerError::UnsupportedOp {
                    op_index: global_op(g, oi),
                    name: op.name().into(),
                });
            }
        }
    }
    // Resource variables as TFLM keys them (core's TFLM simulation's map).
    let res = crate::tflm::tail::resources(model);
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (ti, t) in sg.tensors.iter().enumerate() {
            let err = |why: String| {
                Err(LowerError::Tensor {
                    tensor: global_tensor(g, ti),
                    why,
                })
            };
            if t.shape.len() > rl::MAX_RANK {
                return err(format!("rank {} exceeds {}", t.shape.len(), rl::MAX_RANK));
            }
            if t.shape.iter().any(|&d| d < 0) {
                return err(format!("dynamic shape {:?}", t.shape));
            }
            // A VAR_HANDLE's output becomes its resource's variable.
            if rl::dtype_size(t.dtype.code()).is_none() && !res.of.contains_key(&(g, ti)) {
                return err(format!("type {} is not supported by the runtime", t.dtype));
            }
        }
    }

    let mut scratch_req = Vec::new();
    let mut params = Vec::with_capacity(n_ops);
    let mut opdata = 0u64;
    // The OpData of every op before each subgraph's first.
    let mut opdata_at = Vec::with_capacity(model.subgraphs.len());
    for g in 0..model.subgraphs.len() {
        opdata_at.push(opdata);
        // Subgraph `g` seen as subgraph 0, for the per-op lowering and
        // checks, which read an op's tensors from the main subgraph.
        let view = if g == 0 {
            alloc::borrow::Cow::Borrowed(model)
        } else {
            let mut m = model.clone();
            m.subgraphs.swap(0, g);
            alloc::borrow::Cow::Owned(m)
        };
        let view: &Model<'_> = &view;
        let sg = view.main();
        for (oi, op) in sg.operators.iter().enumerate() {
            let index = global_op(g, oi);
            let code = match super::image_opcode(op) {
                Some(c) if rl::op_supported(i32::from(c)) => i32::from(c),
                _ => {
                    return Err(LowerError::UnsupportedOp {
                        op_index: index,
                        name: op.name().into(),
                    });
                }
            };
            let unsupported = |why: String| LowerError::Unsupported {
                op_index: index,
                why: format!("{}: {why}", op.name()),
            };
            let code8 = code as u8;
            if rl::opcode::called_subgraphs(code8) > 0 || rl::opcode::output_is_state(code8) {
                super::support::check_subgraph_op(model, &res, g, op).map_err(unsupported)?;
            }
            if op.inputs.len() > rl::MAX_OP_INPUTS {
                return Err(unsupported(format!(
                    "{} inputs; at most {} are supported",
                    op.inputs.len(),
                    rl::MAX_OP_INPUTS
                )));
            }
            let several_out = rl::opcode::has_several_outputs(code8);
            // ASSIGN_VARIABLE and CALL_ONCE have no outputs: their image
            // output 0 is their state (`opcode::output_is_state`).
            let stateful = rl::opcode::output_is_state(code8) && op.outputs.is_empty();
            if !stateful && (op.outputs.is_empty() || (op.outputs.len() != 1 && !several_out)) {
                return Err(unsupported(format!(
                    "{} outputs; exactly one is supported",
                    op.outputs.len()
                )));
            }
            // Outputs past the first share the input slots of the op record.
            if op.outputs.len() > rl::MAX_OP_OUTPUTS
                || op.inputs.len() + op.outputs.len().max(1) - 1 > rl::MAX_OP_INPUTS
            {
                return Err(unsupported(format!(
                    "{} inputs and {} outputs; the image holds at most {} tensors besides output 0",
                    op.inputs.len(),
                    op.outputs.len(),
                    rl::MAX_OP_INPUTS
                )));
            }
            if op.outputs.iter().any(|&t| t < 0) {
                return Err(unsupported("an omitted output".into()));
            }
            if code8 == opcode::CALL_ONCE {
                params.push(super::params::called_subgraphs(op).map_err(unsupported)?);
                continue;
            }
            // ASSIGN_VARIABLE's output 0 is its handle.
            let out = op
                .output(0)
                .or_else(|| op.input(0).filter(|_| stateful))
                .and_then(|t| sg.tensors.get(t))
                .ok_or_else(|| unsupported("no output".into()))?;
            let p = op_params(view, op, out).map_err(unsupported)?;
            super::support::check(view, op, out).map_err(unsupported)?;
            params.push(p);
            let channels = match code8 {
                opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D | opcode::TRANSPOSE_CONV => {
                    out.shape.last().copied().unwrap_or(1).max(1) as u32
                }
                opcode::FULLY_CONNECTED => op
                    .input(1)
                    .and_then(|f| sg.tensors.get(f))
                    .and_then(|f| f.quantization.as_ref())
                    .map_or(1, |q| q.scales.len().max(1) as u32),
                // fft_length (options position 1).
                opcode::SIGNAL_RFFT => p.get(1).map_or(0, |&n| n.max(0) as u32),
                _ => 1,
            };
            opdata += u64::from(rl::op_tail_bytes(code8, out.dtype.code(), channels));
            let (a, b) = scratch_args(view, op, out, code8);
            let s = rl::op_scratch_bytes(code8, out.dtype.code(), a, b);
            if s > 0 {
                scratch_req.push(ScratchRequest {
                    subgraph: g,
                    op_index: oi,
                    bytes: u64::from(s),
                    purpose: "microarena-runtime scratch",
                });
            }
        }
    }

    // Variable tensors (LSTM/SVDF state): a region at the bottom of the tail,
    // each 4-aligned, in tensor order. They keep their address for the
    // interpreter's life (TFLM keeps them in its tail too, §4.1 item 14).
    let mut variable_offset = alloc::vec![None; n_tensors];
    let mut var_bytes = 0u64;
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (ti, t) in sg.tensors.iter().enumerate() {
            if t.is_variable && !t.has_data {
                variable_offset[global_tensor(g, ti)] = Some(var_bytes);
                var_bytes += u64::from(rl::align4(fit(t.bytes.unwrap_or(0))?));
            }
        }
    }
    // Resource variables next, each the size of the value its first
    // ASSIGN_VARIABLE assigns (TFLM allocates the buffer in that Prepare);
    // every handle of a resource names its bytes.
    let mut resource_value = alloc::collections::BTreeMap::new();
    let mut resource_offset = Vec::with_capacity(res.count);
    for first in &res.first_assignment {
        let value = first.and_then(|(g, i)| {
            let op = model.subgraphs.get(g)?.operators.get(i)?;
            Some((g, op.input(1)?))
        });
        let bytes = value
            .and_then(|(g, t)| model.tensor(g, t))
            .map_or(0, |t| t.bytes.unwrap_or(0));
        resource_offset.push(value.map(|v| (v, var_bytes)));
        var_bytes += u64::from(rl::align4(fit(bytes)?));
    }
    for (&(g, t), &id) in &res.of {
        if let Some(&Some((value, off))) = resource_offset.get(id) {
            variable_offset[global_tensor(g, t)] = Some(off);
            resource_value.insert(global_tensor(g, t), value);
        }
    }
    // Op-owned state after them: SignalFilterBankSpectralSubtraction's noise
    // estimate, num_channels uint32 (options position 4), as TFLM's Init
    // allocates it; CALL_ONCE's `has run` flag, one uint32.
    let mut states = Vec::new();
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (oi, op) in sg.operators.iter().enumerate() {
            let index = global_op(g, oi);
            let elements = match super::image_opcode(op) {
                Some(opcode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION) => params
                    .get(index)
                    .and_then(|w| w.get(4))
                    .map_or(0, |&n| n.max(0) as u32),
                Some(opcode::CALL_ONCE) => 1,
                _ => continue,
            };
            states.push(OpState {
                op_index: index,
                elements,
                offset: var_bytes,
            });
            var_bytes += u64::from(rl::align4(elements.saturating_mul(4)));
        }
    }
    if n_tensors + states.len() >= usize::from(rl::NO_TENSOR) {
        return Err(LowerError::Internal(format!(
            "{} tensors and op states exceed the image's 16-bit index",
            n_tensors + states.len()
        )));
    }

    // The runtime plans online only: drop any offline plan before computing lifetimes.
    let mut online = model.clone();
    online.offline_plan = None;
    // Handles are no planned tensors: TFLM's VAR_HANDLE sets them in Prepare.
    let handle = |g: usize, t: usize| res.of.contains_key(&(g, t));
    let lifetimes = lifetime::allocation_info(&online, &scratch_req, &handle)
        .map_err(|e| LowerError::Internal(format!("{e}")))?;
    let (separate, input) = plan_input(&lifetimes.infos);
    let plan = PlannerKind::TflmGreedy
        .plan(&input)
        .map_err(|e| LowerError::Internal(format!("{e}")))?;
    let separate_head = plan.head_bytes;
    let op_scope = lifetimes.op_scope.first().map_or(&[][..], |v| v.as_slice());
    let stages_for = |planned: &[AllocationInfo], head: u64, avoid: &[usize]| match options
        .execution
    {
        Execution::Banded => super::banded::best(&online, &params, planned, op_scope, head, avoid),
        Execution::Plain => None,
    };
    let head_of = |b: &Option<super::banded::BandedPlan>, plain: u64| {
        b.as_ref().map_or(plain, |b| b.head_bytes)
    };
    let without = stages_for(&separate, separate_head, &[]);
    // In-place: each alias group one buffer, kept when the head does not
    // grow. Ops the stages found without aliases run stay out of the
    // in-place-by-rows candidates, and the stages then searched with aliases
    // avoid the ops that run by rows.
    let in_stages: Vec<usize> = without
        .iter()
        .flat_map(|b| b.stages.iter().flat_map(|s| s.first..=s.last))
        .collect();
    // A stage's ops run by rows, never in place (the runtime refuses both
    // marks on one op): either the aliases outside the stages found without
    // them (`keep_stages`), or all the chooser finds, the stages then
    // searched around them.
    let aliases_for = |keep_stages: bool| -> Result<Vec<InPlaceOp>, LowerError> {
        if !options.in_place {
            return Ok(Vec::new());
        }
        let no_rows: &[usize] = if keep_stages { &in_stages } else { &[] };
        let mut a = inplace::choose(&online, &params, no_rows);
        if keep_stages {
            a.retain(|a| !in_stages.contains(&a.op));
        }
        if a.iter().any(|a| shrinks(&online, a)) {
            a = keep_shrinking_that_pay(&online, &separate, a, op_scope)?;
        }
        Ok(a)
    };
    // The aliased plan of `aliases` (banded, if asked), or the plan without
    // aliases when theirs is larger.
    let select = |aliases: Vec<InPlaceOp>| -> Result<Selected, LowerError> {
        let alone = || Selected {
            aliases: Vec::new(),
            planned: separate.clone(),
            plan: plan.clone(),
            banded: without.clone(),
        };
        if aliases.is_empty() {
            return Ok(alone());
        }
        // Stages avoid every aliased op: an op runs in a stage or in place.
        let by_rows: Vec<usize> = aliases.iter().map(|a| a.op).collect();
        let (merged, p) = merged_plan(&separate, n_tensors, &aliases, op_scope)?;
        let b = stages_for(&merged, p.head_bytes, &by_rows);
        // Aliases stay only when the head (banded, if asked) does not grow: a
        // group's longer lifetime can cost the stage search more than it
        // saves. The stages found without aliases, planned with them: the
        // groups' longer lifetimes can mislead the search yet fit its result.
        let reused = without
            .as_ref()
            .and_then(|w| super::banded::replan(&online, &params, &merged, op_scope, w, &by_rows));
        let (with, alone_head) = (head_of(&b, p.head_bytes), head_of(&without, separate_head));
        let banded = if with <= alone_head && reused.as_ref().is_none_or(|r| with <= r.head_bytes) {
            b
        } else if let Some(r) = reused.filter(|r| r.head_bytes <= alone_head) {
            Some(r)
        } else {
            return Ok(alone());
        };
        Ok(Selected {
            aliases,
            planned: merged,
            plan: p,
            banded,
        })
    };
    let pick = |aliases: Vec<InPlaceOp>| -> Result<Selected, LowerError> {
        let mut chosen = select(aliases)?;
        // Running by rows can cost the device stack (a kernel call per row
        // below the interpreter's frame: the demo's main stack rose by 2.4 KB
        // on the Cortex-M4 and M0 under QEMU; a 48×48×16 depthwise's not at
        // all), so the windowed aliases stay only when they save a banded
        // stage's minimum on top of the other aliases.
        if chosen.aliases.iter().any(|a| a.ring_bytes > 0) {
            let others = chosen.aliases.iter().filter(|a| a.ring_bytes == 0).copied();
            let alt = select(others.collect())?;
            if alt.head()
                < chosen
                    .head()
                    .saturating_add(super::banded::MIN_SAVING_BYTES)
            {
                chosen = alt;
            }
        }
        Ok(chosen)
    };
    let mut chosen = pick(aliases_for(true)?)?;
    if options.in_place && !in_stages.is_empty() {
        let other = pick(aliases_for(false)?)?;
        if other.head() < chosen.head() {
            chosen = other;
        }
    }
    let Selected {
        aliases,
        planned,
        plan,
        banded,
    } = chosen;
    let roots = inplace::roots(n_tensors, &aliases);
    let plain_head = plan.head_bytes;
    let (planned, offsets, head_bytes, stages) = match banded {
        Some(b) => (b.planned, b.offsets, b.head_bytes, b.stages),
        None => (planned, plan.offsets, plan.head_bytes, Vec::new()),
    };
    let mut tensor_offset = alloc::vec![None; n_tensors];
    let mut scratch = alloc::vec![None; n_ops];
    for (info, &off) in planned.iter().zip(&offsets) {
        let off = u64::try_from(off)
            .map_err(|_| LowerError::Internal("negative planned offset".into()))?;
        match info.kind {
            BufferKind::Tensor { subgraph, tensor } => {
                if let Some(slot) = tensor_offset.get_mut(global_tensor(subgraph, tensor)) {
                    *slot = Some(off);
                }
            }
            BufferKind::Scratch {
                subgraph, op_index, ..
            } => {
                if let Some(slot) = scratch.get_mut(global_op(subgraph, op_index)) {
                    *slot = Some((off, info.bytes));
                }
            }
        }
    }
    // A stage's output over its input: planned at the input's offset.
    for st in &stages {
        if let Some((x, y)) = st.behind {
            let at = |t: usize| tensor_offset.get(global_tensor(0, t)).copied().flatten();
            if at(x).is_none() || at(x) != at(y) {
                return Err(LowerError::Internal(format!(
                    "banded stage at op {} writes tensor {y} over tensor {x}, planned apart",
                    st.first
                )));
            }
        }
    }
    if !aliases.is_empty() || stages.iter().any(|s| s.behind.is_some()) {
        // Every member at its group's offset, then both independent checks.
        for (t, &r) in roots.iter().enumerate() {
            if r != t {
                let at = tensor_offset.get(r).copied().flatten();
                if let Some(slot) = tensor_offset.get_mut(t) {
                    *slot = at;
                }
            }
        }
        check_aliases(
            &online,
            &params,
            &separate,
            &planned,
            &offsets,
            head_bytes,
            &tensor_offset,
            &aliases,
            op_scope,
            &stages,
        )?;
    }
    fit(head_bytes + opdata + var_bytes)?;
    Ok(Lowered {
        head: head_bytes,
        plain_head,
        separate_head,
        in_place: aliases,
        stages,
        opdata,
        var_bytes,
        variable_offset,
        resource_value,
        tensor_offset,
        scratch,
        params,
        states,
        tensor_base,
        opdata_at,
    })
}

/// The model's subgraph calls checked with the image's rule
/// (`microarena_image::calls`), so `plan` refuses what the runtime's image
/// check would.
fn check_calls(model: &Model<'_>) -> Result<(), LowerError> {
    use microarena_image::calls::{CallError, check_calls};
    let calls = |visit: &mut dyn FnMut(usize, i64)| {
        for (g, sg) in model.subgraphs.iter().enumerate() {
            for op in &sg.operators {
                let n = super::image_opcode(op).map_or(0, rl::opcode::called_subgraphs);
                for callee in op.options.called_subgraphs().into_iter().flatten().take(n) {
                    visit(g, i64::from(callee));
                }
            }
        }
    };
    check_calls(model.subgraphs.len(), &calls)
        .map(|_| ())
        .map_err(|e| LowerError::Subgraphs {
            subgraph: match e {
                CallError::OutOfRange { caller, .. } => caller,
                CallError::Cycle { subgraph } => subgraph,
                CallError::TooManySubgraphs { count } => count,
                CallError::TooDeep { .. } => 0,
            },
            why: e.why().into(),
        })
}

/// One choice of aliases with its plan (see [`plan`]).
struct Selected {
    aliases: Vec<InPlaceOp>,
    planned: Vec<AllocationInfo>,
    plan: crate::plan::Plan,
    banded: Option<super::banded::BandedPlan>,
}

impl Selected {
    /// The head it gives: the banded plan's, or the plain one's.
    fn head(&self) -> u64 {
        self.banded
            .as_ref()
            .map_or(self.plan.head_bytes, |b| b.head_bytes)
    }
}

/// `separate` with the alias groups of `aliases` merged ([`inplace::merge`];
/// `tensors`: the subgraph's tensor count) and its greedy plan.
fn merged_plan(
    separate: &[AllocationInfo],
    tensors: usize,
    aliases: &[InPlaceOp],
    op_scope: &[i32],
) -> Result<(Vec<AllocationInfo>, crate::plan::Plan), LowerError> {
    let merged = inplace::merge(
        separate,
        &inplace::roots(tensors, aliases),
        aliases,
        op_scope,
    );
    let plan = PlannerKind::TflmGreedy
        .plan(&super::banded::plan_buffers(&merged))
        .map_err(|e| LowerError::Internal(format!("{e}")))?;
    Ok((merged, plan))
}

/// `true` for a windowed op in place by rows whose output is smaller than
/// its input: its alias group keeps the input's whole buffer for the
/// group's lifetime, which can cost the steps after it more than the op
/// saves.
fn shrinks(model: &Model<'_>, a: &InPlaceOp) -> bool {
    let bytes = |t: usize| model.main().tensors.get(t).and_then(|t| t.bytes);
    a.ring_bytes > 0 && bytes(a.output) < bytes(a.input)
}

/// `aliases` with each shrinking alias ([`shrinks`]) kept, in op order,
/// only when the plain head with it is smaller, or equal with fewer live
/// bytes over time (every subset of the chooser's aliases stays valid:
/// dropping one only splits groups).
fn keep_shrinking_that_pay(
    model: &Model<'_>,
    separate: &[AllocationInfo],
    aliases: Vec<InPlaceOp>,
    op_scope: &[i32],
) -> Result<Vec<InPlaceOp>, LowerError> {
    let n = model.main().tensors.len();
    let score = |set: &[InPlaceOp]| -> Result<(u64, u64), LowerError> {
        let (merged, p) = merged_plan(separate, n, set, op_scope)?;
        let area = super::banded::live_peak(&super::banded::plan_buffers(&merged)).2;
        Ok((p.head_bytes, area))
    };
    let (trials, mut kept): (Vec<InPlaceOp>, Vec<InPlaceOp>) =
        aliases.into_iter().partition(|a| shrinks(model, a));
    let mut best = score(&kept)?;
    for t in trials {
        let mut with = kept.clone();
        with.push(t);
        with.sort_by_key(|a| a.op);
        let s = score(&with)?;
        if s < best {
            (kept, best) = (with, s);
        }
    }
    Ok(kept)
}

/// Checks an aliased plan with the two checks written apart from the
/// chooser: the model's rules (`alias_check`) and the placement
/// (`plan::alias::validate_aliased`, over one buffer per tensor with its own
/// lifetime — collapsed onto the stages' steps when banded — and the plan's
/// other buffers).
#[allow(clippy::too_many_arguments)]
fn check_aliases(
    model: &Model<'_>,
    params: &[Words],
    separate: &[AllocationInfo],
    planned: &[AllocationInfo],
    offsets: &[i64],
    head_bytes: u64,
    tensor_offset: &[Option<u64>],
    aliases: &[InPlaceOp],
    op_scope: &[i32],
    stages: &[BandedStage],
) -> Result<(), LowerError> {
    use crate::plan::alias::{AliasEdge, validate_aliased};
    use crate::plan::{Plan, PlanBuffer, align16};
    let refuse = |why: String| LowerError::Internal(format!("in-place plan refused: {why}"));
    super::alias_check::check(model, params, aliases).map_err(refuse)?;
    let scope = |s: i32| super::banded::collapse(op_scope, stages, s);
    let streamed: Vec<usize> = stages
        .iter()
        .flat_map(|st| super::banded::streamed_tensors(model, params, st))
        .collect();
    let mut buffers = Vec::new();
    let mut plan = Plan::default();
    let mut index = alloc::vec![None; tensor_offset.len()];
    // Tensors one by one from the unmerged lifetimes, at their own offsets.
    for a in separate {
        let BufferKind::Tensor { tensor, .. } = a.kind else {
            continue;
        };
        if streamed.contains(&tensor) {
            continue;
        }
        let Some(off) = tensor_offset.get(tensor).copied().flatten() else {
            return Err(refuse(format!("tensor {tensor} has no offset")));
        };
        if let Some(slot) = index.get_mut(tensor) {
            *slot = Some(buffers.len());
        }
        buffers.push(PlanBuffer::online(
            align16(a.bytes),
            scope(a.first),
            scope(a.last),
        ));
        plan.offsets.push(off as i64);
    }
    // Scratch and rings from the plan as placed.
    for (a, &off) in planned.iter().zip(offsets) {
        if matches!(a.kind, BufferKind::Scratch { .. }) {
            buffers.push(PlanBuffer::online(align16(a.bytes), a.first, a.last));
            plan.offsets.push(off);
        }
    }
    plan.head_bytes = head_bytes;
    let at = |t: usize| index.get(t).copied().flatten().unwrap_or(usize::MAX);
    let op_at = |i: usize| scope(op_scope.get(i).copied().unwrap_or(-1));
    let mut edges: Vec<AliasEdge> = aliases
        .iter()
        .map(|a| AliasEdge {
            from: at(a.input),
            to: at(a.output),
            scope: op_at(a.op),
            overwrites: a.overwrites,
        })
        .collect();
    // A stage's output written over its input: an overwrite at its step.
    edges.extend(stages.iter().filter_map(|st| {
        let (x, y) = st.behind?;
        Some(AliasEdge {
            from: at(x),
            to: at(y),
            scope: op_at(st.first),
            overwrites: true,
        })
    }));
    validate_aliased(&buffers, &plan, &edges).map_err(|v| refuse(format!("{v}")))
}

/// The `a`, `b` arguments of [`rl::op_scratch_bytes`] for one op.
fn scratch_args(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>, code: u8) -> (u32, u32) {
    let sg = model.main();
    let t = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let dim = |t: Option<&Tensor<'_>>, i: usize| {
        t.and_then(|t| t.shape.get(i))
            .map_or(0, |&d| d.max(0) as u32)
    };
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match code {
        opcode::MEAN | opcode::SUM => (sat(out.elements()), 0),
        opcode::SIGNAL_RFFT => {
            let words = super::params::op_params(model, op, out).unwrap_or([0; rl::OP_PARAMS]);
            (words.get(1).map_or(0, |&n| n.max(0) as u32), 0)
        }
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let time_major = matches!(op.options, OpOptions::Lstm(o) if o.time_major);
            let batch = dim(t(0), usize::from(time_major));
            (batch.saturating_mul(dim(t(18), 1)), 0)
        }
        opcode::SVDF => {
            let rank = match op.options {
                OpOptions::Svdf { rank, .. } if rank > 0 => rank as u32,
                _ => 1,
            };
            let batch = dim(t(0), 0);
            let filters = dim(t(1), 0);
            (
                batch.saturating_mul(filters),
                batch.saturating_mul(filters / rank),
            )
        }
        _ => (0, 0),
    }
}
