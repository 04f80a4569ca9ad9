//! The step-through: what TFLM does with the arena, one step at a time, in
//! its own order — building the interpreter (each tail allocation), each
//! kernel's Prepare (its OpData, scratch requests and temps), memory
//! planning (each buffer placed, with the gaps first-fit could not use) and
//! Invoke (op by op, nothing allocated).
//!
//! Every step is read off the simulation that gives the report's totals
//! ([`crate::tflm::tail`]'s allocations and Prepare records, the analysis'
//! plan, the greedy planner's own placement run again with an observer), so
//! the running figures end exactly on the report's: the last step's head,
//! tail and total are the report's and its high water, rounded up to 16, is
//! the minimum arena.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::plan::greedy::{self, PlaceEvent};
use crate::plan::{PlannerKind, align16};
use crate::read::model::Model;
use crate::tflm::analysis::Analysis;
use crate::tflm::lifetime::BufferKind;
use crate::tflm::tail::{Owner, TailAlloc};

/// Rejected gaps kept per placement; the rest are counted.
pub const MAX_GAPS: usize = 8;

/// The phases, in the order TFLM goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum StepPhase {
    /// `AllocateTensors` before Prepare: allocator objects, eval tensors,
    /// node structs, builtin data, each kernel's Init.
    Build,
    /// Each kernel's Prepare.
    Prepare,
    /// `FinishModelAllocation`: scratch handles, variables, then the planner.
    Plan,
    /// The graph's input and output `TfLiteTensor` structs.
    Finish,
    /// Invoke, op by op: nothing is allocated.
    Invoke,
}

impl StepPhase {
    /// Every phase, in order.
    pub const ALL: &'static [StepPhase] = &[
        StepPhase::Build,
        StepPhase::Prepare,
        StepPhase::Plan,
        StepPhase::Finish,
        StepPhase::Invoke,
    ];

    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            StepPhase::Build => "build",
            StepPhase::Prepare => "prepare",
            StepPhase::Plan => "plan",
            StepPhase::Finish => "finish",
            StepPhase::Invoke => "invoke",
        }
    }
}

/// One tail allocation a kernel's Prepare (or Init) made.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepAllocation {
    /// What it holds (`OpData`, `per-channel output multipliers`, …).
    pub purpose: String,
    /// Bytes asked for.
    pub requested_bytes: u64,
    /// Bytes the tail moved (alignment included).
    pub bytes: u64,
}

/// A scratch buffer a kernel's Prepare asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepScratch {
    /// What the kernel keeps in it.
    pub purpose: String,
    /// Bytes asked for.
    pub bytes: u64,
    /// The planned buffer (index into `report.buffers`).
    pub buffer: Option<usize>,
}

/// A gap below a buffer's offset that first-fit could not use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StepGap {
    /// Start of the gap in the head.
    pub offset: i64,
    /// Its bytes, fewer than the buffer needs.
    pub bytes: u64,
    /// The buffer that ends it (index into `report.buffers`), alive at a
    /// common scope with the one being placed.
    pub blocker: usize,
}

/// What happened at a step.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
pub enum StepEvent {
    /// One allocation from the tail.
    Tail {
        /// TFLM's category name.
        category: String,
        /// What it holds.
        purpose: String,
        /// Who caused it: `interpreter`, `#3 CONV_2D`, `tensor 'input'`.
        owner: String,
        /// The op that caused it (index into `report.operators`).
        op: Option<usize>,
        /// Bytes asked for.
        requested_bytes: u64,
        /// Bytes the tail moved.
        bytes: u64,
    },
    /// One kernel's Prepare.
    Prepare {
        /// The op (index into `report.operators`).
        op: usize,
        /// Its opcode.
        opcode: String,
        /// Its OpData and other persistent buffers, in order.
        allocations: Vec<StepAllocation>,
        /// Its scratch requests, in order.
        scratch: Vec<StepScratch>,
        /// Temp `TfLiteTensor`s it built (freed when it returns).
        temps: usize,
        /// The scratch request area below the temps.
        request_bytes: u64,
    },
    /// The planner starts: TFLM's AllocationInfo array and the planner's
    /// working memory are held below the tail.
    PlanStart {
        /// The planner.
        planner: String,
        /// Buffers it places.
        buffers: usize,
    },
    /// One buffer placed.
    Place {
        /// The buffer (index into `report.buffers`).
        buffer: usize,
        /// Its offset.
        offset: i64,
        /// Its size as planned (rounded up to 16).
        bytes: u64,
        /// An offline plan fixed the offset.
        fixed: bool,
        /// Gaps first-fit passed over, lowest first (at most [`MAX_GAPS`]).
        gaps: Vec<StepGap>,
        /// Rejected gaps beyond those listed.
        more_gaps: usize,
    },
    /// One op's Invoke.
    Invoke {
        /// The op (index into `report.operators`).
        op: usize,
        /// Its opcode.
        opcode: String,
        /// The scope it runs at.
        scope: i32,
        /// Head bytes live at that scope (as `report.operators[op].live_bytes`).
        live_bytes: u64,
        /// Head buffers live at that scope.
        live_buffers: usize,
        /// Its planned inputs (indices into `report.buffers`).
        inputs: Vec<usize>,
        /// Its planned outputs.
        outputs: Vec<usize>,
        /// Its scratch buffers.
        scratch: Vec<usize>,
    },
}

/// One step and the arena's figures once it is done.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Step {
    /// The phase.
    pub phase: StepPhase,
    /// What happened.
    pub event: StepEvent,
    /// Head bytes placed (in the planner phase, the highest end so far).
    pub head_bytes: u64,
    /// Tail bytes allocated.
    pub tail_bytes: u64,
    /// Non-persistent bytes held besides the head: Prepare's request area
    /// and temps, the planner's working memory.
    pub temp_bytes: u64,
    /// Arena bytes this step needs.
    pub arena_bytes: u64,
    /// The largest need so far.
    pub high_water_bytes: u64,
    /// The smallest arena that gets this far (the high water rounded up to 16).
    pub minimum_bytes: u64,
}

/// The whole step-through of one analysis.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Steps {
    /// Every step, in TFLM's order.
    pub steps: Vec<Step>,
}

impl Steps {
    /// Index of the first step of `phase`, if it has any.
    pub fn first_of(&self, phase: StepPhase) -> Option<usize> {
        self.steps.iter().position(|s| s.phase == phase)
    }
}

struct Figures {
    head: u64,
    tail: u64,
    temp: u64,
    arena: u64,
    high: u64,
}

struct Builder {
    steps: Vec<Step>,
    high: u64,
}

impl Builder {
    /// One step per tail allocation of `allocs` (outside any Prepare: no temps, no head),
    /// growing `tail`.
    fn tail_allocs(
        &mut self,
        phase: StepPhase,
        allocs: &[TailAlloc],
        event: impl Fn(&TailAlloc) -> StepEvent,
        tail: &mut u64,
    ) {
        for a in allocs {
            *tail += a.used;
            let fig = Figures {
                head: 0,
                tail: *tail,
                temp: 0,
                arena: *tail,
                high: 0,
            };
            self.push(phase, event(a), fig);
        }
    }

    fn push(&mut self, phase: StepPhase, event: StepEvent, f: Figures) {
        self.high = self.high.max(f.arena).max(f.high);
        self.steps.push(Step {
            phase,
            event,
            head_bytes: f.head,
            tail_bytes: f.tail,
            temp_bytes: f.temp,
            arena_bytes: f.arena,
            high_water_bytes: self.high,
            minimum_bytes: align16(self.high),
        });
    }
}

/// The step-through of `analysis` (of `model`, as `analyze` made it). Buffer
/// and op indices are the report's (`Report::new` of the same analysis).
pub fn steps(model: &Model<'_>, analysis: &Analysis) -> Steps {
    let sim = &analysis.tail;
    let op_base = model.operator_offsets();
    let flat = |g: usize, i: usize| op_base.get(g).map(|b| b + i);
    let opcode = |k: Option<usize>| {
        k.and_then(|k| analysis.ops.get(k))
            .map_or_else(|| "?".to_string(), |o| o.opcode.clone())
    };
    let owner = |a: &TailAlloc| match a.owner {
        Owner::Interpreter => ("interpreter".to_string(), None),
        Owner::Op { subgraph, op_index } => {
            let k = flat(subgraph, op_index);
            (format!("#{op_index} {}", opcode(k)), k)
        }
        Owner::Tensor { subgraph, tensor } => (
            format!(
                "tensor '{}'",
                model.tensor(subgraph, tensor).map_or("?", |t| t.name)
            ),
            None,
        ),
    };
    let tail_event = |a: &TailAlloc| {
        let (who, op) = owner(a);
        StepEvent::Tail {
            category: a.category.name().into(),
            purpose: a.purpose.into(),
            owner: who,
            op,
            requested_bytes: a.requested,
            bytes: a.used,
        }
    };
    let mut b = Builder {
        steps: Vec::new(),
        high: 0,
    };
    let mut tail = 0u64;

    // Building the interpreter: every tail allocation before the first Prepare.
    let before_prepare = sim.allocs.len().min(sim.allocs_before_prepare);
    b.tail_allocs(
        StepPhase::Build,
        &sim.allocs[..before_prepare],
        tail_event,
        &mut tail,
    );

    // Each kernel's Prepare. Scratch requests become buffers after the
    // tensors, in request order.
    let mut scratch_buffer: BTreeMap<usize, usize> = BTreeMap::new();
    for (k, pb) in analysis.buffers.iter().enumerate() {
        if let BufferKind::Scratch { request, .. } = pb.info.kind {
            scratch_buffer.insert(request, k);
        }
    }
    for p in &sim.prepared {
        let allocs = sim.allocs.get(p.allocs.clone()).unwrap_or(&[]);
        tail += allocs.iter().map(|a| a.used).sum::<u64>();
        let k = flat(p.subgraph, p.op_index);
        let scratch = sim
            .scratch
            .get(p.scratch.clone())
            .unwrap_or(&[])
            .iter()
            .zip(p.scratch.clone())
            .map(|(s, request)| StepScratch {
                purpose: s.purpose.into(),
                bytes: s.bytes,
                buffer: scratch_buffer.get(&request).copied(),
            })
            .collect();
        let event = StepEvent::Prepare {
            op: k.unwrap_or(0),
            opcode: opcode(k),
            allocations: allocs
                .iter()
                .map(|a| StepAllocation {
                    purpose: a.purpose.into(),
                    requested_bytes: a.requested,
                    bytes: a.used,
                })
                .collect(),
            scratch,
            temps: p.temps,
            request_bytes: p.request_bytes,
        };
        let fig = Figures {
            head: 0,
            tail,
            temp: p.temp_bytes,
            arena: p.peak_bytes,
            high: 0,
        };
        b.push(StepPhase::Prepare, event, fig);
    }

    // FinishModelAllocation: scratch handles and variables, then the planner.
    let after_prepare = sim.prepared.last().map_or(sim.allocs_before_prepare, |p| {
        p.allocs.end.max(sim.allocs_before_prepare)
    });
    let before_planning = sim.allocs.len().min(sim.allocs_before_planning);
    let finishing = sim
        .allocs
        .get(after_prepare..before_planning)
        .unwrap_or(&[]);
    b.tail_allocs(StepPhase::Plan, finishing, tail_event, &mut tail);
    let planning = analysis.planning_temp_bytes + align16(tail);
    let plan_fig = |head: u64| Figures {
        head,
        tail,
        temp: analysis.planning_temp_bytes,
        arena: planning,
        high: 0,
    };
    b.push(
        StepPhase::Plan,
        StepEvent::PlanStart {
            planner: analysis.planner.name().into(),
            buffers: analysis.plan_input.len(),
        },
        plan_fig(0),
    );
    let mut placed = Vec::with_capacity(analysis.plan_input.len());
    let mut gaps: Vec<Vec<StepGap>> = alloc::vec![Vec::new(); analysis.plan_input.len()];
    let mut more = alloc::vec![0usize; analysis.plan_input.len()];
    let input = &analysis.plan_input;
    if analysis.planner == PlannerKind::TflmGreedy {
        let order = greedy::placement_order(input);
        greedy::place_observed(input, &order, &mut |e| match e {
            PlaceEvent::Rejected { buffer, gap } => {
                if let (Some(list), Some(n)) = (gaps.get_mut(buffer), more.get_mut(buffer)) {
                    if list.len() < MAX_GAPS {
                        list.push(StepGap {
                            offset: gap.offset,
                            bytes: gap.bytes,
                            blocker: gap.blocker,
                        });
                    } else {
                        *n += 1;
                    }
                }
            }
            PlaceEvent::Placed { buffer, offset } => placed.push((buffer, offset)),
        });
    } else {
        // Linear and best place by their own rules, not first-fit: their
        // offsets in offset order.
        let mut by_offset: Vec<(usize, i64)> =
            analysis.plan.offsets.iter().copied().enumerate().collect();
        by_offset.sort_by_key(|&(i, o)| (o, i));
        placed = by_offset;
    }
    let mut head = 0u64;
    for (id, offset) in placed {
        let Some(pb) = input.get(id) else { continue };
        head = head.max((offset.max(0) as u64).saturating_add(pb.size));
        let event = StepEvent::Place {
            buffer: id,
            offset,
            bytes: pb.size,
            fixed: pb.fixed_offset.is_some(),
            gaps: gaps.get_mut(id).map(core::mem::take).unwrap_or_default(),
            more_gaps: more.get(id).copied().unwrap_or(0),
        };
        b.push(StepPhase::Plan, event, plan_fig(head));
    }

    // The graph's input and output tensor structs, after the head is committed.
    let head = analysis.head_bytes;
    for a in sim.allocs.iter().skip(sim.allocs_before_planning) {
        tail += a.used;
        let fig = Figures {
            head,
            tail,
            temp: 0,
            arena: head + tail,
            high: 0,
        };
        b.push(StepPhase::Finish, tail_event(a), fig);
    }

    // Invoke, in scope order; nothing is allocated.
    let mut tensor_buffer: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    let mut op_scratch: BTreeMap<(usize, usize), Vec<usize>> = BTreeMap::new();
    for (k, pb) in analysis.buffers.iter().enumerate() {
        match pb.info.kind {
            BufferKind::Tensor { subgraph, tensor } => {
                tensor_buffer.insert((subgraph, tensor), k);
            }
            BufferKind::Scratch {
                subgraph, op_index, ..
            } => op_scratch.entry((subgraph, op_index)).or_default().push(k),
        }
    }
    // Buffers live at each scope, counted with a difference array.
    let scopes = analysis.max_scope.max(-1).saturating_add(1) as usize;
    let mut delta = alloc::vec![0i64; scopes + 1];
    for pb in input {
        if pb.last < 0 || pb.first > pb.last {
            continue;
        }
        let first = (pb.first.max(0) as usize).min(scopes);
        let last = (pb.last as usize).min(scopes.saturating_sub(1));
        if let Some(d) = delta.get_mut(first) {
            *d += 1;
        }
        if let Some(d) = delta.get_mut(last + 1) {
            *d -= 1;
        }
    }
    let live_count: Vec<usize> = delta
        .iter()
        .take(scopes)
        .scan(0i64, |run, d| {
            *run += d;
            Some((*run).max(0) as usize)
        })
        .collect();
    let mut order: Vec<usize> = (0..analysis.ops.len())
        .filter(|&k| analysis.ops.get(k).is_some_and(|o| o.scope >= 0))
        .collect();
    order.sort_by_key(|&k| (analysis.ops.get(k).map_or(0, |o| o.scope), k));
    let total = analysis.total_bytes;
    for k in order {
        let Some(o) = analysis.ops.get(k) else {
            continue;
        };
        let op = model
            .subgraphs
            .get(o.subgraph)
            .and_then(|s| s.operators.get(o.op_index));
        let planned = |list: &[i32]| -> Vec<usize> {
            list.iter()
                .filter_map(|&t| usize::try_from(t).ok())
                .filter_map(|t| tensor_buffer.get(&(o.subgraph, t)).copied())
                .collect()
        };
        let event = StepEvent::Invoke {
            op: k,
            opcode: o.opcode.clone(),
            scope: o.scope,
            live_bytes: o.live_bytes,
            live_buffers: live_count.get(o.scope as usize).copied().unwrap_or(0),
            inputs: op.map(|op| planned(&op.inputs)).unwrap_or_default(),
            outputs: op.map(|op| planned(&op.outputs)).unwrap_or_default(),
            scratch: op_scratch
                .get(&(o.subgraph, o.op_index))
                .cloned()
                .unwrap_or_default(),
        };
        let fig = Figures {
            head,
            tail,
            temp: 0,
            arena: total,
            high: 0,
        };
        b.push(StepPhase::Invoke, event, fig);
    }
    Steps { steps: b.steps }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::example;
    use crate::report::Report;
    use crate::tflm::analysis::{Config, analyze};
    use crate::tflm::profile::PROFILES;

    fn run(bytes: &[u8], planner: PlannerKind) -> (Report, Analysis, Steps) {
        let model = Model::parse(bytes).expect("parses");
        let mut out = None;
        for profile in PROFILES {
            let a = analyze(&model, &Config { profile, planner }).expect("analyses");
            let r = Report::new(&model, &a, "m.tflite");
            let s = steps(&model, &a);
            check(&r, &a, &s);
            out = Some((r, a, s));
        }
        out.expect("at least one profile")
    }

    /// The figures every step-through must end on, and the ones it passes.
    fn check(r: &Report, a: &Analysis, s: &Steps) {
        let last = s.steps.last().expect("steps");
        assert_eq!(last.head_bytes, r.arena.head_bytes);
        assert_eq!(last.tail_bytes, r.arena.tail_bytes);
        assert_eq!(last.arena_bytes, r.arena.total_bytes);
        assert_eq!(last.minimum_bytes, r.arena.minimum_bytes);
        // Phases come in order, each once.
        let phases: Vec<StepPhase> = s.steps.iter().map(|s| s.phase).collect();
        assert!(phases.windows(2).all(|w| w[0] <= w[1]));
        // Every tail byte is in exactly one step.
        let tail: u64 = s
            .steps
            .iter()
            .map(|s| match &s.event {
                StepEvent::Tail { bytes, .. } => *bytes,
                StepEvent::Prepare { allocations, .. } => allocations.iter().map(|a| a.bytes).sum(),
                _ => 0,
            })
            .sum();
        assert_eq!(tail, r.arena.tail_bytes);
        // The Prepare steps reach the simulation's Prepare peak.
        let prepare = s
            .steps
            .iter()
            .filter(|s| s.phase == StepPhase::Prepare)
            .map(|s| s.arena_bytes)
            .max()
            .unwrap_or(0);
        assert_eq!(prepare, a.tail.prepare_peak.bytes);
        // Each placement is the report's offset; the plan ends at the head.
        let mut placed = alloc::vec![false; r.buffers.len()];
        for st in &s.steps {
            if let StepEvent::Place { buffer, offset, .. } = st.event {
                assert_eq!(offset, r.buffers[buffer].offset);
                placed[buffer] = true;
            }
        }
        assert!(placed.iter().all(|&p| p));
        // Invoke: the report's live bytes per op, in scope order.
        let invoked: Vec<(usize, u64)> = s
            .steps
            .iter()
            .filter_map(|s| match s.event {
                StepEvent::Invoke { op, live_bytes, .. } => Some((op, live_bytes)),
                _ => None,
            })
            .collect();
        for &(op, live) in &invoked {
            assert_eq!(live, r.operators[op].live_bytes);
        }
        let reached = r.operators.iter().filter(|o| o.scope >= 0).count();
        assert_eq!(invoked.len(), reached);
    }

    #[test]
    fn the_last_step_is_the_report() {
        let (r, _, s) = run(
            &example::mobilenet_v1_025_96_int8(),
            PlannerKind::TflmGreedy,
        );
        assert_eq!(
            s.steps.last().map(|s| s.phase),
            Some(StepPhase::Invoke),
            "ends on Invoke"
        );
        assert_eq!(s.first_of(StepPhase::Build), Some(0));
        let prepares = s
            .steps
            .iter()
            .filter(|s| s.phase == StepPhase::Prepare)
            .count();
        assert_eq!(prepares, r.operators.len());
        for m in [
            example::rp2040_cnn(),
            example::rp2040_anomaly(),
            example::demo_model(),
            example::branchy_float(),
            example::synthetic(60),
        ] {
            for planner in PlannerKind::ALL {
                run(&m, *planner);
            }
        }
    }

    #[test]
    fn first_fit_says_which_gap_it_could_not_use() {
        // Greedy on branchy_float leaves small gaps that larger buffers skip.
        let (r, _, s) = run(&example::synthetic(200), PlannerKind::TflmGreedy);
        let mut any = false;
        for st in &s.steps {
            if let StepEvent::Place {
                buffer,
                offset,
                bytes,
                gaps,
                ..
            } = &st.event
            {
                for g in gaps {
                    any = true;
                    assert!(g.bytes < *bytes, "a usable gap was rejected");
                    assert!(g.offset < *offset);
                    let blocker = &r.buffers[g.blocker];
                    let me = &r.buffers[*buffer];
                    assert_eq!(blocker.offset, g.offset + g.bytes as i64);
                    assert!(blocker.first <= me.last && me.first <= blocker.last);
                }
            }
        }
        assert!(any, "some placement skipped a gap");
    }
}
