//! Buffer lifetimes exactly as TFLM's `AllocationInfoBuilder` marks them.
//!
//! One [`AllocationInfo`] per tensor of every subgraph (subgraph 0 first, in
//! tensor order), then one per scratch request in request order. Lifetimes are
//! *scopes*: a counter that starts at 0 and grows by one per operator and per
//! entered control-flow subgraph, so nested subgraphs get scopes inside their
//! caller's window.

use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::read::model::Model;

/// Identifies what a planned buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferKind {
    /// Tensor `tensor` of `subgraph`.
    Tensor {
        /// Subgraph index.
        subgraph: usize,
        /// Tensor index within the subgraph.
        tensor: usize,
    },
    /// A scratch buffer requested by an operator's Prepare.
    Scratch {
        /// Subgraph of the requesting op.
        subgraph: usize,
        /// Index of the requesting op within its subgraph.
        op_index: usize,
        /// Running number of the request (planner order).
        request: usize,
        /// What the kernel keeps in it.
        purpose: &'static str,
    },
}

/// A scratch buffer request made in an operator's Prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScratchRequest {
    /// Subgraph of the requesting op.
    pub subgraph: usize,
    /// Index of the op within the subgraph.
    pub op_index: usize,
    /// Requested bytes.
    pub bytes: u64,
    /// What the kernel keeps in it (`im2col (CMSIS-NN)`, `gate buffer`, …).
    pub purpose: &'static str,
}

/// One entry of TFLM's AllocationInfo array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocationInfo {
    /// What the buffer holds.
    pub kind: BufferKind,
    /// Bytes the buffer needs (not rounded).
    pub bytes: u64,
    /// First scope at which it is live; −1 when never produced.
    pub first: i32,
    /// Last scope at which it is live; −1 when never used.
    pub last: i32,
    /// Offset from the offline plan, when the model has one and it names this tensor.
    pub offline_offset: Option<i32>,
    /// The planner places it (not constant, not zero-sized, not a tail-resident variable).
    pub needs_allocating: bool,
}

/// Why lifetimes could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LifetimeError {
    /// A control-flow op calls a subgraph that is already being walked.
    SubgraphCycle {
        /// The subgraph entered twice on one call path.
        subgraph: usize,
    },
    /// Control flow nests deeper than the limit.
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// Walking the control flow would visit more operators than the limit
    /// (subgraphs called from several places multiply).
    TooManyVisits {
        /// The limit.
        limit: u64,
    },
}

impl fmt::Display for LifetimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LifetimeError::SubgraphCycle { subgraph } => write!(
                f,
                "subgraph {subgraph} calls itself through IF/WHILE/CALL_ONCE; TFLM would recurse without end"
            ),
            LifetimeError::TooDeep { limit } => {
                write!(f, "control-flow subgraphs nest deeper than {limit} levels")
            }
            LifetimeError::TooManyVisits { limit } => write!(
                f,
                "control flow expands to more than {limit} operator visits; refusing to walk it"
            ),
        }
    }
}

impl core::error::Error for LifetimeError {}

/// Nesting limit for control-flow subgraphs.
pub const MAX_CALL_DEPTH: usize = 64;
/// Limit on operator visits when a subgraph is entered from several call sites.
pub const MAX_VISITS: u64 = 4_000_000;

/// The AllocationInfo array plus the scope at which each operator runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifetimes {
    /// One entry per tensor of every subgraph, then one per scratch request.
    pub infos: Vec<AllocationInfo>,
    /// Scope of each operator (`[subgraph][op_index]`) at its first visit; −1 if never reached.
    pub op_scope: Vec<Vec<i32>>,
    /// The last scope used (number of scopes − 1).
    pub max_scope: i32,
}

/// Builds the AllocationInfo array.
///
/// `set_in_prepare(g, t)` tells whether a kernel sets the tensor's data in
/// Prepare (VAR_HANDLE outputs), which keeps it out of the plan.
pub fn allocation_info(
    model: &Model<'_>,
    scratch: &[ScratchRequest],
    set_in_prepare: &dyn Fn(usize, usize) -> bool,
) -> Result<Lifetimes, LifetimeError> {
    let offline = model
        .offline_plan
        .as_ref()
        .filter(|p| p.offsets.len() == model.tensor_count());
    let mut infos = Vec::with_capacity(model.tensor_count() + scratch.len());
    let mut base = Vec::with_capacity(model.subgraphs.len());
    let mut running = 0usize;
    for (g, sg) in model.subgraphs.iter().enumerate() {
        base.push(infos.len());
        for (t, tensor) in sg.tensors.iter().enumerate() {
            let offline_offset = offline
                .and_then(|p| p.offsets.get(running + t).copied())
                .filter(|&o| o != -1);
            let bytes = tensor.bytes.unwrap_or(0);
            let variable_in_tail = tensor.is_variable && offline_offset.is_none();
            infos.push(AllocationInfo {
                kind: BufferKind::Tensor {
                    subgraph: g,
                    tensor: t,
                },
                bytes,
                first: -1,
                last: -1,
                offline_offset,
                needs_allocating: !tensor.has_data
                    && !variable_in_tail
                    && bytes != 0
                    && !set_in_prepare(g, t),
            });
        }
        running += sg.tensors.len();
    }
    let scratch_base = infos.len();
    for (i, r) in scratch.iter().enumerate() {
        infos.push(AllocationInfo {
            kind: BufferKind::Scratch {
                subgraph: r.subgraph,
                op_index: r.op_index,
                request: i,
                purpose: r.purpose,
            },
            bytes: r.bytes,
            first: -1,
            last: -1,
            offline_offset: None,
            needs_allocating: true,
        });
    }

    // Scratch requests grouped by (subgraph, op) for the marking walk.
    let mut scratch_of: Vec<Vec<Vec<usize>>> = model
        .subgraphs
        .iter()
        .map(|sg| vec![Vec::new(); sg.operators.len()])
        .collect();
    for (i, r) in scratch.iter().enumerate() {
        if let Some(v) = scratch_of
            .get_mut(r.subgraph)
            .and_then(|s| s.get_mut(r.op_index))
        {
            v.push(scratch_base + i);
        }
    }

    let mut walk = Walk {
        model,
        infos: &mut infos,
        base: &base,
        scratch_of: &scratch_of,
        scope: 0,
        on_stack: vec![false; model.subgraphs.len()],
        visits: 0,
        op_scope: model
            .subgraphs
            .iter()
            .map(|sg| vec![-1; sg.operators.len()])
            .collect(),
    };
    walk.mark(0, 0)?;
    let (op_scope, max_scope) = (walk.op_scope, walk.scope);
    Ok(Lifetimes {
        infos,
        op_scope,
        max_scope,
    })
}

struct Walk<'m, 'a> {
    model: &'m Model<'a>,
    infos: &'m mut Vec<AllocationInfo>,
    base: &'m [usize],
    scratch_of: &'m [Vec<Vec<usize>>],
    scope: i32,
    on_stack: Vec<bool>,
    visits: u64,
    op_scope: Vec<Vec<i32>>,
}

impl Walk<'_, '_> {
    fn info(&mut self, g: usize, t: i32) -> Option<&mut AllocationInfo> {
        let t = usize::try_from(t).ok()?;
        let i = self.base.get(g)? + t;
        self.infos.get_mut(i)
    }

    fn touch_first(&mut self, g: usize, t: i32) {
        let s = self.scope;
        if let Some(a) = self.info(g, t)
            && a.first == -1
        {
            a.first = s;
        }
    }

    fn touch_last(&mut self, g: usize, t: i32) {
        let s = self.scope;
        if let Some(a) = self.info(g, t) {
            a.last = s;
        }
    }

    fn mark(&mut self, g: usize, depth: usize) -> Result<(), LifetimeError> {
        if depth > MAX_CALL_DEPTH {
            return Err(LifetimeError::TooDeep {
                limit: MAX_CALL_DEPTH,
            });
        }
        match self.on_stack.get_mut(g) {
            Some(flag) if *flag => return Err(LifetimeError::SubgraphCycle { subgraph: g }),
            Some(flag) => *flag = true,
            None => return Ok(()),
        }
        let model = self.model;
        let Some(sg) = model.subgraphs.get(g) else {
            return Ok(());
        };
        for &t in &sg.inputs {
            self.touch_first(g, t);
            self.touch_last(g, t);
        }
        for (i, op) in sg.operators.iter().enumerate() {
            self.visits += 1;
            if self.visits > MAX_VISITS {
                return Err(LifetimeError::TooManyVisits { limit: MAX_VISITS });
            }
            self.scope += 1;
            for &t in &op.outputs {
                self.touch_first(g, t);
            }
            let start = self.scope;
            if let Some(slot) = self.op_scope.get_mut(g).and_then(|v| v.get_mut(i))
                && *slot == -1
            {
                *slot = start;
            }
            for sub in op.options.called_subgraphs().into_iter().flatten() {
                self.scope += 1;
                self.mark(sub as usize, depth + 1)?;
            }
            for &t in op.inputs.iter().filter(|&&t| t >= 0) {
                self.touch_last(g, t);
            }
            for &t in &op.outputs {
                self.touch_last(g, t);
            }
            let s = self.scope;
            let requests = self
                .scratch_of
                .get(g)
                .and_then(|v| v.get(i))
                .map_or(&[][..], |v| v.as_slice());
            for &r in requests {
                if let Some(a) = self.infos.get_mut(r) {
                    if a.first == -1 {
                        a.first = start;
                    }
                    a.last = s;
                }
            }
        }
        for &t in &sg.outputs {
            self.touch_first(g, t);
            self.touch_last(g, t);
        }
        if let Some(flag) = self.on_stack.get_mut(g) {
            *flag = false;
        }
        Ok(())
    }
}
