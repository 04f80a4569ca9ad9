//! Simulation of TFLM's persistent tail and of the temp peaks of Prepare, in
//! `MicroInterpreter::AllocateTensors` order (spec §4.1, §4.5).
//!
//! The arena end is assumed 16-aligned, so `tail = align_down(tail − size, a)`
//! becomes `used = align_up(used + size, a)` counted from the end.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::ops::Range;

use crate::plan::PlannerKind;
use crate::read::model::{Model, Tensor};
use crate::read::ops::{BuiltinOp, OpOptions};
use crate::tflm::kernels::{self, KernelCost, PrepareStep};
use crate::tflm::lifetime::ScratchRequest;
use crate::tflm::profile::{Sz, TargetProfile};

/// TFLM's `kMaxScratchBuffersPerOp`: the request area always has room for this many more.
pub const MAX_SCRATCH_PER_OP: u64 = 12;

/// What a tail allocation is for. Where TFLM's `RecordingMicroAllocator` has a
/// category, [`Category::name`] is its exact printed name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// Allocator, planner and bookkeeping objects (not reported by TFLM).
    AllocatorObjects,
    /// `TfLiteEvalTensor` array per subgraph.
    EvalTensors,
    /// `NodeAndRegistration` array per subgraph.
    NodeAndRegistration,
    /// Parsed builtin options structs (not reported by TFLM).
    BuiltinData,
    /// Kernel OpData, per-channel arrays, LUTs, dims copies, resource variables, I/O pointer arrays.
    PersistentBufferData,
    /// `ScratchBufferHandle` array (not reported by TFLM).
    ScratchHandles,
    /// Variable tensors (LSTM/SVDF state).
    VariableBuffers,
    /// `TfLiteTensor` structs for the main graph's inputs and outputs.
    PersistentTensors,
    /// Their quantization structs and zero-point arrays.
    PersistentQuantization,
}

impl Category {
    /// Every category, in report order.
    pub const ALL: &'static [Category] = &[
        Category::AllocatorObjects,
        Category::EvalTensors,
        Category::NodeAndRegistration,
        Category::BuiltinData,
        Category::PersistentBufferData,
        Category::ScratchHandles,
        Category::VariableBuffers,
        Category::PersistentTensors,
        Category::PersistentQuantization,
    ];

    /// Printed name (TFLM's where it has one).
    pub fn name(self) -> &'static str {
        match self {
            Category::AllocatorObjects => "Allocator objects",
            Category::EvalTensors => "TfLiteEvalTensor data",
            Category::NodeAndRegistration => "NodeAndRegistration struct",
            Category::BuiltinData => "Builtin data",
            Category::PersistentBufferData => "Persistent buffer data",
            Category::ScratchHandles => "Scratch buffer handles",
            Category::VariableBuffers => "TfLiteTensor variable buffer data",
            Category::PersistentTensors => "Persistent TfLiteTensor data",
            Category::PersistentQuantization => "Persistent TfLiteTensor quantization data",
        }
    }
}

/// Who caused a tail allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The interpreter itself.
    Interpreter,
    /// Operator `op_index` of `subgraph`.
    Op {
        /// Subgraph index.
        subgraph: usize,
        /// Operator index within the subgraph.
        op_index: usize,
    },
    /// Tensor `tensor` of `subgraph`.
    Tensor {
        /// Subgraph index.
        subgraph: usize,
        /// Tensor index within the subgraph.
        tensor: usize,
    },
}

/// One allocation in the tail, in allocation order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailAlloc {
    /// Category.
    pub category: Category,
    /// Owner.
    pub owner: Owner,
    /// Bytes asked for.
    pub requested: u64,
    /// Bytes the tail moved (requested plus alignment padding below the previous tail).
    pub used: u64,
    /// Items in the allocation (array length for struct arrays, else 1), as TFLM counts them.
    pub items: u64,
    /// What it holds (`OpData`, `TfLiteConvParams`, `per-channel output
    /// multipliers`, …), for the tail view.
    pub purpose: &'static str,
}

/// Where the Prepare temp peak happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PreparePeak {
    /// Arena bytes needed at the peak (head request area + temps + tail so far).
    pub bytes: u64,
    /// The op being prepared, as (subgraph, op_index).
    pub op: Option<(usize, usize)>,
}

/// What one op's Prepare did, as the simulation went through it (the
/// step-through shows it; nothing else reads it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedOp {
    /// Subgraph.
    pub subgraph: usize,
    /// Op index within the subgraph.
    pub op_index: usize,
    /// The scratch request area held below the temps while it was prepared.
    pub request_bytes: u64,
    /// Temp `TfLiteTensor`s it built.
    pub temps: usize,
    /// Highest end of the request area and its temps (non-persistent bytes).
    pub temp_bytes: u64,
    /// Largest arena need while it was prepared (head side + tail).
    pub peak_bytes: u64,
    /// Its allocations in [`TailSimulation::allocs`].
    pub allocs: Range<usize>,
    /// Its scratch requests in [`TailSimulation::scratch`].
    pub scratch: Range<usize>,
}

/// Result of the tail simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TailSimulation {
    /// Every allocation in order.
    pub allocs: Vec<TailAlloc>,
    /// How many of [`TailSimulation::allocs`] precede the first Prepare.
    pub allocs_before_prepare: usize,
    /// How many precede memory planning (the rest are the I/O tensor structs).
    pub allocs_before_planning: usize,
    /// Every op's Prepare, in the order they ran.
    pub prepared: Vec<PreparedOp>,
    /// Final tail size.
    pub tail_bytes: u64,
    /// Tail size when memory planning starts (before the I/O tensor structs).
    pub tail_at_planning: u64,
    /// Largest arena need while kernels were being prepared.
    pub prepare_peak: PreparePeak,
    /// Largest non-persistent part of that need (request area + temps), which is
    /// what a separate non-persistent buffer must hold during Prepare.
    pub prepare_temp_peak: u64,
    /// Scratch requests in Prepare order.
    pub scratch: Vec<ScratchRequest>,
    /// Kernel costs, indexed `[subgraph][op_index]`.
    pub costs: Vec<Vec<KernelCost>>,
    /// Tensors whose data a kernel sets in Prepare, as (subgraph, tensor).
    pub set_in_prepare: Vec<(usize, usize)>,
}

struct Tail {
    used: u64,
    allocs: Vec<TailAlloc>,
}

fn align_up(v: u64, a: u32) -> u64 {
    let a = u64::from(a.max(1));
    v.div_ceil(a).saturating_mul(a)
}

impl Tail {
    fn alloc(
        &mut self,
        category: Category,
        owner: Owner,
        size: u64,
        align: u32,
        purpose: &'static str,
    ) {
        self.alloc_items(category, owner, size, align, 1, purpose);
    }

    fn alloc_items(
        &mut self,
        category: Category,
        owner: Owner,
        size: u64,
        align: u32,
        items: u64,
        purpose: &'static str,
    ) {
        // Saturating: a hostile model's sizes must not wrap the sum.
        let new = align_up(self.used.saturating_add(size), align);
        self.allocs.push(TailAlloc {
            category,
            owner,
            requested: size,
            used: new - self.used,
            items,
            purpose,
        });
        self.used = new;
    }

    /// An array of `count` structs in one allocation.
    fn sz(&mut self, category: Category, owner: Owner, s: Sz, count: u64, purpose: &'static str) {
        self.alloc_items(
            category,
            owner,
            u64::from(s.bytes) * count,
            s.align,
            count,
            purpose,
        );
    }
}

/// Bytes of the temp (or persistent) `TfLiteTensor` TFLM builds for `t`, added to
/// a running temp end with each piece at its own alignment.
fn tensor_struct_end(profile: &TargetProfile, t: &Tensor<'_>, mut end: u64) -> u64 {
    end = align_up(end, profile.tensor.align) + u64::from(profile.tensor.bytes);
    if let Some(q) = t.quantization.as_ref().filter(|q| q.is_affine()) {
        end = align_up(end, profile.affine_quantization.align)
            + u64::from(profile.affine_quantization.bytes);
        end = align_up(end, 4) + 4 + 4 * q.scales.len() as u64;
    }
    end
}

/// Bytes at the end of the temp `TfLiteTensor` TFLM builds for `t` that are
/// not read after it is built: for a quantized tensor, its zero-point array
/// (allocated last; deallocation uses only its address) and the
/// `TfLiteAffineQuantization` fields after `zero_point` (`quantized_dimension`
/// and padding). Nothing for an unquantized one.
fn unread_top_of_temp(profile: &TargetProfile, t: &Tensor<'_>) -> u64 {
    match t.quantization.as_ref().filter(|q| q.is_affine()) {
        Some(q) => {
            let after_zero_point = u64::from(profile.affine_quantization.bytes)
                .saturating_sub(2 * u64::from(profile.pointer_bytes));
            4 + 4 * q.scales.len() as u64 + after_zero_point
        }
        None => 0,
    }
}

/// The model's resource variables as TFLM's `MicroResourceVariables` keys
/// them: one per distinct (container, shared name) of the VAR_HANDLE ops,
/// numbered in Prepare order (subgraph by subgraph, op by op).
#[derive(Debug, Clone, Default)]
pub(crate) struct Resources {
    /// Number of distinct resources.
    pub count: usize,
    /// For each (subgraph, tensor) a VAR_HANDLE produces, its resource.
    pub of: BTreeMap<(usize, usize), usize>,
    /// Per resource, the (subgraph, op) of the ASSIGN_VARIABLE whose
    /// Prepare allocates its buffer (the first in Prepare order whose
    /// handle a VAR_HANDLE of the same subgraph produces), if any.
    pub first_assignment: Vec<Option<(usize, usize)>>,
}

/// The model's resources ([`Resources`]). Maps keep this O(n log n) for
/// hostile models with many handles.
pub(crate) fn resources(model: &Model<'_>) -> Resources {
    let mut names: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut producers = BTreeMap::new();
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for op in &sg.operators {
            if let OpOptions::VarHandle {
                container,
                shared_name,
            } = &op.options
            {
                let next = names.len();
                let id = *names
                    .entry((container.as_str(), shared_name.as_str()))
                    .or_insert(next);
                if let Some(t) = op.output(0) {
                    producers.entry((g, t)).or_insert(id);
                }
            }
        }
    }
    let mut first_assignment = alloc::vec![None; names.len()];
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (i, op) in sg.operators.iter().enumerate() {
            if op.opcode == BuiltinOp::ASSIGN_VARIABLE
                && let Some(t) = op.input(0)
                && let Some(&id) = producers.get(&(g, t))
                && let Some(slot) = first_assignment.get_mut(id)
                && slot.is_none()
            {
                *slot = Some((g, i));
            }
        }
    }
    Resources {
        count: names.len(),
        of: producers,
        first_assignment,
    }
}

/// Runs the simulation for `planner` (which decides the planner object's size).
pub fn simulate(
    model: &Model<'_>,
    profile: &TargetProfile,
    planner: PlannerKind,
) -> TailSimulation {
    let me = Owner::Interpreter;
    let mut tail = Tail {
        used: 0,
        allocs: Vec::new(),
    };
    let n_sub = model.subgraphs.len() as u64;

    // 1–3, 5–6: allocator objects.
    tail.sz(
        Category::AllocatorObjects,
        me,
        profile.arena_allocator,
        1,
        "arena allocator",
    );
    let planner_obj = match planner {
        PlannerKind::Linear => profile.linear_planner,
        PlannerKind::TflmGreedy | PlannerKind::Best => profile.greedy_planner,
    };
    tail.sz(
        Category::AllocatorObjects,
        me,
        planner_obj,
        1,
        "memory planner",
    );
    tail.sz(
        Category::AllocatorObjects,
        me,
        profile.micro_allocator,
        1,
        "MicroAllocator",
    );
    // 4: resource variables, when the model has VAR_HANDLE.
    let res = resources(model);
    let resource_count = res.count;
    if resource_count > 0 {
        tail.sz(
            Category::PersistentBufferData,
            me,
            profile.resource_variables,
            1,
            "MicroResourceVariables",
        );
        tail.alloc(
            Category::PersistentBufferData,
            me,
            u64::from(profile.resource_variable_entry) * resource_count as u64,
            16,
            "resource variable entries",
        );
    }
    tail.sz(
        Category::AllocatorObjects,
        me,
        profile.builtin_data_allocator,
        1,
        "MicroBuiltinDataAllocator",
    );
    tail.sz(
        Category::AllocatorObjects,
        me,
        profile.subgraph_allocations,
        n_sub,
        "SubgraphAllocations",
    );

    // 8–9: eval tensors for every subgraph, then node structs for every subgraph.
    for sg in &model.subgraphs {
        tail.sz(
            Category::EvalTensors,
            me,
            profile.eval_tensor,
            sg.tensors.len() as u64,
            "TfLiteEvalTensor array",
        );
    }
    for sg in &model.subgraphs {
        tail.sz(
            Category::NodeAndRegistration,
            me,
            profile.node_and_registration,
            sg.operators.len() as u64,
            "NodeAndRegistration array",
        );
    }

    // Kernel costs. ASSIGN_VARIABLE allocates its resource on the first assignment only.
    let firsts: alloc::collections::BTreeSet<(usize, usize)> =
        res.first_assignment.iter().flatten().copied().collect();
    let mut costs: Vec<Vec<KernelCost>> = Vec::with_capacity(model.subgraphs.len());
    for (g, sg) in model.subgraphs.iter().enumerate() {
        let mut row = Vec::with_capacity(sg.operators.len());
        for (i, op) in sg.operators.iter().enumerate() {
            let first = firsts.contains(&(g, i));
            row.push(kernels::cost(model, g, op, profile, first));
        }
        costs.push(row);
    }

    // 10: builtin data; 11: Init.
    for (g, row) in costs.iter().enumerate() {
        for (i, c) in row.iter().enumerate() {
            if let Some(b) = c.builtin {
                tail.sz(
                    Category::BuiltinData,
                    Owner::Op {
                        subgraph: g,
                        op_index: i,
                    },
                    b,
                    1,
                    c.builtin_name,
                );
            }
        }
    }
    for (g, row) in costs.iter().enumerate() {
        for (i, c) in row.iter().enumerate() {
            for b in &c.init {
                tail.alloc(
                    Category::PersistentBufferData,
                    Owner::Op {
                        subgraph: g,
                        op_index: i,
                    },
                    b.bytes,
                    16,
                    b.purpose,
                );
            }
        }
    }

    // 12: Prepare, with the temp peak.
    let request = u64::from(profile.scratch_request.bytes);
    let mut scratch: Vec<ScratchRequest> = Vec::new();
    let mut peak = PreparePeak::default();
    let mut temp_peak = 0u64;
    let mut set_in_prepare = Vec::new();
    let allocs_before_prepare = tail.allocs.len();
    let mut prepared = Vec::with_capacity(model.operator_count());
    for (g, row) in costs.iter().enumerate() {
        for (i, c) in row.iter().enumerate() {
            let owner = Owner::Op {
                subgraph: g,
                op_index: i,
            };
            let (first_alloc, first_scratch) = (tail.allocs.len(), scratch.len());
            let head = request * (scratch.len() as u64 + MAX_SCRATCH_PER_OP);
            let mut temp_end = head;
            let (mut temps, mut op_temp, mut op_peak) = (0usize, head, 0u64);
            // Bytes at the top of the temps that nothing reads again (see below).
            let mut unread_top = 0u64;
            temp_peak = temp_peak.max(head);
            let mut note = |bytes: u64| {
                op_peak = op_peak.max(bytes);
                if bytes > peak.bytes {
                    peak = PreparePeak {
                        bytes,
                        op: Some((g, i)),
                    };
                }
            };
            note(head.saturating_add(tail.used));
            for step in &c.prepare {
                match *step {
                    PrepareStep::Temp(t) => {
                        if let Some(tensor) = model.tensor(g, t) {
                            temp_end = tensor_struct_end(profile, tensor, temp_end);
                            unread_top = unread_top_of_temp(profile, tensor);
                            temp_peak = temp_peak.max(temp_end);
                            (temps, op_temp) = (temps + 1, op_temp.max(temp_end));
                            note(temp_end.saturating_add(tail.used));
                        }
                    }
                    PrepareStep::Persistent(b) => {
                        tail.alloc(
                            Category::PersistentBufferData,
                            owner,
                            b.bytes,
                            16,
                            b.purpose,
                        );
                        // SingleArenaBufferAllocator checks a persistent allocation
                        // against the head only, not the temps held above it: the
                        // kernel then writes over them, and Prepare fails later (the
                        // temps' checksum or fields are wrong) unless what it
                        // overwrote is never read again — the last temp's zero-point
                        // array and its quantization struct after the pointer to it.
                        note(
                            temp_end
                                .saturating_sub(unread_top)
                                .max(head)
                                .saturating_add(tail.used),
                        );
                    }
                    PrepareStep::Scratch(s) => {
                        scratch.push(ScratchRequest {
                            subgraph: g,
                            op_index: i,
                            bytes: s.bytes,
                            purpose: s.purpose,
                        });
                    }
                }
            }
            prepared.push(PreparedOp {
                subgraph: g,
                op_index: i,
                request_bytes: head,
                temps,
                temp_bytes: op_temp,
                peak_bytes: op_peak,
                allocs: first_alloc..tail.allocs.len(),
                scratch: first_scratch..scratch.len(),
            });
            if c.sets_output_data
                && let Some(op) = model.subgraphs.get(g).and_then(|s| s.operators.get(i))
            {
                {
                    set_in_prepare.extend(
                        op.outputs
                            .iter()
                            .filter_map(|&t| usize::try_from(t).ok())
                            .map(|t| (g, t)),
                    );
                }
            }
        }
    }

    // 13: scratch handles; 14: variables without an offline offset.
    if !scratch.is_empty() {
        tail.sz(
            Category::ScratchHandles,
            me,
            profile.scratch_handle,
            scratch.len() as u64,
            "ScratchBufferHandle array",
        );
    }
    let offline = model
        .offline_plan
        .as_ref()
        .filter(|p| p.offsets.len() == model.tensor_count());
    let mut running = 0usize;
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (t, tensor) in sg.tensors.iter().enumerate() {
            let placed_offline = offline
                .and_then(|p| p.offsets.get(running + t))
                .is_some_and(|&o| o != -1);
            if tensor.is_variable && !placed_offline {
                tail.alloc(
                    Category::VariableBuffers,
                    Owner::Tensor {
                        subgraph: g,
                        tensor: t,
                    },
                    tensor.bytes.unwrap_or(0),
                    16,
                    "variable tensor",
                );
            }
        }
        running += sg.tensors.len();
    }
    let tail_at_planning = tail.used;
    let allocs_before_planning = tail.allocs.len();

    // 15–18: TfLiteTensor structs for the main graph's inputs, then outputs.
    let main = model.main();
    for list in [&main.inputs, &main.outputs] {
        tail.alloc(
            Category::PersistentBufferData,
            me,
            u64::from(profile.pointer_bytes) * list.len() as u64,
            16,
            "graph input/output pointers",
        );
        for &t in list.iter() {
            let Some(idx) = usize::try_from(t).ok() else {
                continue;
            };
            let Some(tensor) = model.tensor(0, idx) else {
                continue;
            };
            let owner = Owner::Tensor {
                subgraph: 0,
                tensor: idx,
            };
            tail.sz(
                Category::PersistentTensors,
                owner,
                profile.tensor,
                1,
                "TfLiteTensor",
            );
            if let Some(q) = tensor.quantization.as_ref().filter(|q| q.is_affine()) {
                tail.sz(
                    Category::PersistentQuantization,
                    owner,
                    profile.affine_quantization,
                    1,
                    "TfLiteAffineQuantization",
                );
                tail.alloc(
                    Category::PersistentQuantization,
                    owner,
                    4 + 4 * q.scales.len() as u64,
                    4,
                    "zero points",
                );
            }
        }
    }

    TailSimulation {
        tail_bytes: tail.used,
        allocs: tail.allocs,
        allocs_before_prepare,
        allocs_before_planning,
        prepared,
        tail_at_planning,
        prepare_peak: peak,
        prepare_temp_peak: temp_peak,
        scratch,
        costs,
        set_in_prepare,
    }
}
