//! Operator orders for subgraph 0 that lower the peak of live head bytes.
//!
//! TFLM runs a subgraph's operators in file order, and tensor lifetimes follow
//! that order, so on a branchy graph another valid order can need a smaller
//! head. This module proposes such orders; the optimizer decides with the
//! exact analysis which one to keep.
//!
//! **Which orders are valid.** An op may only run after the producers of its
//! inputs. Ops whose effects cannot be proven local keep their relative order
//! (a chain through all of them, in file order): custom ops, control flow
//! (IF, WHILE, CALL, CALL_ONCE), resource-variable ops (VAR_HANDLE,
//! READ_VARIABLE, ASSIGN_VARIABLE), ops without outputs, and ops touching a
//! variable (state updated in place), resource or variant tensor. A tensor
//! written by two ops disables reordering altogether.
//!
//! **Search.** The cost of running op `v` after the set `S` of already run
//! ops depends only on `(S, v)` (live bytes at its scope: everything still
//! needed plus `v`'s outputs and scratch), so the minimum peak over all
//! topological orders is a bottleneck shortest path over the down-sets of the
//! dependency graph. [`search`] explores those exactly, layer by layer, up to
//! a fixed number of states (a count, so the result is the same on every
//! host); beyond it, it falls back to greedy list scheduling (always run the
//! ready op with the lowest live bytes, then lowest resulting base, then
//! lowest file index).

use alloc::collections::BTreeMap;
use alloc::vec;
use alloc::vec::Vec;

use crate::read::dtype::DType;
use crate::read::model::Model;
use crate::read::ops::BuiltinOp;

/// Down-sets the exact search may visit before it gives up.
pub const DEFAULT_MAX_STATES: usize = 200_000;

/// How an order was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Minimum peak over all valid orders (for the live-bytes model used here).
    Exact,
    /// Greedy list scheduling (the exact search would exceed its state budget).
    Heuristic,
}

impl Method {
    /// Name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::Heuristic => "heuristic",
        }
    }
}

/// An order proposed by [`search`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposal {
    /// `order[k]` = file index of the op that runs k-th.
    pub order: Vec<usize>,
    /// Peak live bytes of that order (same model as [`Problem::peak_of`]).
    pub peak_bytes: u64,
    /// How it was found.
    pub method: Method,
}

/// Subgraph 0 as a scheduling problem.
#[derive(Debug, Clone)]
pub struct Problem {
    n: usize,
    /// Predecessors of each op (deduplicated).
    preds: Vec<Vec<usize>>,
    /// Per op: planned bytes of outputs it creates.
    out_tensors: Vec<Vec<usize>>,
    /// Per op: distinct planned input tensors.
    in_tensors: Vec<Vec<usize>>,
    /// Per op: scratch bytes.
    scratch: Vec<u64>,
    /// Per tensor: planned (aligned) size, 0 when not planned.
    size: Vec<u64>,
    /// Per tensor: consumer ops.
    consumers: Vec<Vec<usize>>,
    /// Per tensor: graph output (lives to the end).
    is_output: Vec<bool>,
    /// Live before the first op beyond which nothing is needed (unconsumed inputs).
    start_extra: u64,
    /// Live from the start: graph inputs and never-produced tensors still needed.
    start_base: u64,
}

fn effectful(model: &Model<'_>, op: &crate::read::model::Operator<'_>) -> bool {
    const STATEFUL: [BuiltinOp; 8] = [
        BuiltinOp::CUSTOM,
        BuiltinOp::CALL,
        BuiltinOp::IF,
        BuiltinOp::WHILE,
        BuiltinOp::CALL_ONCE,
        BuiltinOp::VAR_HANDLE,
        BuiltinOp::READ_VARIABLE,
        BuiltinOp::ASSIGN_VARIABLE,
    ];
    if STATEFUL.contains(&op.opcode) || op.outputs.is_empty() {
        return true;
    }
    if op.options.called_subgraphs().iter().any(Option::is_some) {
        return true;
    }
    op.inputs
        .iter()
        .chain(&op.outputs)
        .filter_map(|&t| usize::try_from(t).ok())
        .filter_map(|t| model.tensor(0, t))
        .any(|t| t.is_variable || matches!(t.dtype, DType::Resource | DType::Variant))
}

impl Problem {
    /// Builds the problem for subgraph 0. `size(t)` is the planned (aligned)
    /// size of tensor `t` of subgraph 0 (0 when it is not planned);
    /// `scratch(i)` the scratch bytes of op `i`. `None` when the graph cannot
    /// be reordered safely (a tensor with two producers).
    pub fn new(
        model: &Model<'_>,
        size: &dyn Fn(usize) -> u64,
        scratch: &dyn Fn(usize) -> u64,
    ) -> Option<Problem> {
        let sg = model.main();
        let n = sg.operators.len();
        let nt = sg.tensors.len();
        let mut producer = vec![usize::MAX; nt];
        for (i, op) in sg.operators.iter().enumerate() {
            for t in op.outputs.iter().filter_map(|&t| usize::try_from(t).ok()) {
                let p = producer.get_mut(t)?;
                if *p != usize::MAX && *p != i {
                    return None;
                }
                *p = i;
            }
        }
        let mut preds = vec![Vec::new(); n];
        let mut in_tensors = vec![Vec::new(); n];
        let mut out_tensors = vec![Vec::new(); n];
        let mut consumers = vec![Vec::new(); nt];
        let mut last_effectful: Option<usize> = None;
        for (i, op) in sg.operators.iter().enumerate() {
            let mut p: Vec<usize> = Vec::new();
            for t in op.inputs.iter().filter_map(|&t| usize::try_from(t).ok()) {
                if let Some(&q) = producer.get(t)
                    && q != usize::MAX
                    && q != i
                {
                    p.push(q);
                }
                if !in_tensors[i].contains(&t) {
                    in_tensors[i].push(t);
                    if let Some(c) = consumers.get_mut(t) {
                        c.push(i);
                    }
                }
            }
            for t in op.outputs.iter().filter_map(|&t| usize::try_from(t).ok()) {
                if !out_tensors[i].contains(&t) && !in_tensors[i].contains(&t) {
                    out_tensors[i].push(t);
                }
            }
            if effectful(model, op) {
                if let Some(q) = last_effectful {
                    p.push(q);
                }
                last_effectful = Some(i);
            }
            p.sort_unstable();
            p.dedup();
            preds[i] = p;
        }
        // A producer after its consumer in file order would be a cycle for TFLM
        // too (it reads an unwritten tensor); keep such graphs as they are.
        if preds
            .iter()
            .enumerate()
            .any(|(i, p)| p.iter().any(|&q| q >= i))
        {
            return None;
        }
        let size: Vec<u64> = (0..nt).map(size).collect();
        let mut is_output = vec![false; nt];
        for t in sg.outputs.iter().filter_map(|&t| usize::try_from(t).ok()) {
            if let Some(o) = is_output.get_mut(t) {
                *o = true;
            }
        }
        let is_input = |t: usize| sg.inputs.contains(&(t as i32));
        let (mut start_base, mut start_extra) = (0u64, 0u64);
        for t in 0..nt {
            if producer[t] != usize::MAX {
                continue;
            }
            let needed = !consumers[t].is_empty() || is_output[t];
            if needed {
                start_base += size[t];
            } else if is_input(t) {
                start_extra += size[t];
            }
        }
        Some(Problem {
            n,
            preds,
            out_tensors,
            in_tensors,
            scratch: (0..n).map(scratch).collect(),
            size,
            consumers,
            is_output,
            start_extra,
            start_base,
        })
    }

    /// Number of operators.
    pub fn len(&self) -> usize {
        self.n
    }

    /// No operators.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// `order` runs every op once, each after its predecessors.
    pub fn is_valid(&self, order: &[usize]) -> bool {
        let mut done = vec![false; self.n];
        if order.len() != self.n {
            return false;
        }
        for &v in order {
            if v >= self.n || done[v] || self.preds[v].iter().any(|&p| !done[p]) {
                return false;
            }
            done[v] = true;
        }
        true
    }

    /// (live bytes while `v` runs, base after it), given `done` and the base before.
    fn step(&self, done: &dyn Fn(usize) -> bool, base: u64, v: usize) -> (u64, u64) {
        let mut live = base + self.scratch[v];
        let mut next = base;
        for &t in &self.out_tensors[v] {
            live += self.size[t];
            let needed = self.is_output[t] || self.consumers[t].iter().any(|&c| c != v && !done(c));
            if needed {
                next += self.size[t];
            }
        }
        for &t in &self.in_tensors[v] {
            let needed = self.is_output[t] || self.consumers[t].iter().any(|&c| c != v && !done(c));
            if !needed {
                next = next.saturating_sub(self.size[t]);
            }
        }
        (live, next)
    }

    /// Peak live bytes of `order` (assumed valid).
    pub fn peak_of(&self, order: &[usize]) -> u64 {
        let mut done = vec![false; self.n];
        let mut base = self.start_base;
        let mut peak = base + self.start_extra;
        for &v in order {
            let (live, next) = self.step(&|c| done.get(c).copied().unwrap_or(true), base, v);
            peak = peak.max(live);
            base = next;
            if let Some(d) = done.get_mut(v) {
                *d = true;
            }
        }
        peak
    }

    fn exact(&self, max_states: usize) -> Option<Vec<usize>> {
        let words = self.n.div_ceil(64).max(1);
        let has = |m: &[u64], i: usize| m.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1);
        // Layer k: down-sets of size k as (mask, peak, base, parent index, op).
        struct Node {
            mask: Vec<u64>,
            peak: u64,
            base: u64,
            parent: usize,
            op: usize,
        }
        let mut layers: Vec<Vec<Node>> = vec![vec![Node {
            mask: vec![0; words],
            peak: self.start_base + self.start_extra,
            base: self.start_base,
            parent: usize::MAX,
            op: usize::MAX,
        }]];
        let mut states = 1usize;
        for _ in 0..self.n {
            let prev = layers.last()?;
            let mut index: BTreeMap<Vec<u64>, usize> = BTreeMap::new();
            let mut next: Vec<Node> = Vec::new();
            for (pi, node) in prev.iter().enumerate() {
                for v in 0..self.n {
                    if has(&node.mask, v) || self.preds[v].iter().any(|&p| !has(&node.mask, p)) {
                        continue;
                    }
                    let (live, base) = self.step(&|c| has(&node.mask, c), node.base, v);
                    let peak = node.peak.max(live);
                    let mut mask = node.mask.clone();
                    if let Some(w) = mask.get_mut(v / 64) {
                        *w |= 1 << (v % 64);
                    }
                    match index.get(&mask) {
                        Some(&k) => {
                            if let Some(e) = next.get_mut(k)
                                && peak < e.peak
                            {
                                (e.peak, e.parent, e.op) = (peak, pi, v);
                            }
                        }
                        None => {
                            states += 1;
                            if states > max_states {
                                return None;
                            }
                            index.insert(mask.clone(), next.len());
                            next.push(Node {
                                mask,
                                peak,
                                base,
                                parent: pi,
                                op: v,
                            });
                        }
                    }
                }
            }
            layers.push(next);
        }
        // Walk back from the full set.
        let mut order = Vec::with_capacity(self.n);
        let mut k = 0usize;
        for layer in layers.iter().rev() {
            let node = layer.get(k)?;
            if node.op == usize::MAX {
                break;
            }
            order.push(node.op);
            k = node.parent;
        }
        order.reverse();
        (order.len() == self.n).then_some(order)
    }

    fn greedy(&self) -> Vec<usize> {
        let mut missing: Vec<usize> = self.preds.iter().map(Vec::len).collect();
        let mut succs = vec![Vec::new(); self.n];
        for (v, p) in self.preds.iter().enumerate() {
            for &q in p {
                succs[q].push(v);
            }
        }
        let mut done = vec![false; self.n];
        let mut ready: Vec<usize> = (0..self.n).filter(|&v| missing[v] == 0).collect();
        let mut base = self.start_base;
        let mut order = Vec::with_capacity(self.n);
        while !ready.is_empty() {
            let mut pick: Option<(u64, u64, usize, usize)> = None;
            for (k, &v) in ready.iter().enumerate() {
                let (live, next) = self.step(&|c| done.get(c).copied().unwrap_or(true), base, v);
                if pick.is_none_or(|(l, b, pv, _)| (live, next, v) < (l, b, pv)) {
                    pick = Some((live, next, v, k));
                }
            }
            let Some((_, next, v, k)) = pick else { break };
            ready.swap_remove(k);
            done[v] = true;
            base = next;
            order.push(v);
            for &s in &succs[v] {
                missing[s] -= 1;
                if missing[s] == 0 {
                    ready.push(s);
                }
            }
        }
        order
    }
}

/// The lowest-peak order found for `problem`: exact when the down-sets number
/// at most `max_states`, greedy list scheduling otherwise.
pub fn search(problem: &Problem, max_states: usize) -> Proposal {
    let (order, method) = match problem.exact(max_states) {
        Some(order) => (order, Method::Exact),
        None => (problem.greedy(), Method::Heuristic),
    };
    let order = if problem.is_valid(&order) {
        order
    } else {
        (0..problem.n).collect()
    };
    Proposal {
        peak_bytes: problem.peak_of(&order),
        order,
        method,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::builder::ModelBuilder;
    use crate::read::ops::Activation;

    /// Two branches x → a1 (4 KiB) → a2 and x → b1 (4 KiB) → b2, joined by an
    /// ADD. File order expands both branches before reducing either (both
    /// 4 KiB tensors live at once); finishing one branch first halves that.
    fn branchy() -> Vec<u8> {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let t = |b: &mut ModelBuilder, name: &str, n: i32| {
            b.tensor(g, name, &[1, n], DType::I8).quant(1.0, 0).id()
        };
        let x = t(&mut b, "x", 16);
        let a1 = t(&mut b, "a1", 4096);
        let a2 = t(&mut b, "a2", 16);
        let b1 = t(&mut b, "b1", 4096);
        let b2 = t(&mut b, "b2", 16);
        let y = t(&mut b, "y", 16);
        let c = b.tensor(g, "c", &[1], DType::I32).data_i32(&[0]).id();
        // File order: both expansions first, then both reductions.
        b.op(g, BuiltinOp::PAD, &[x, c], &[a1]);
        b.op(g, BuiltinOp::PAD, &[x, c], &[b1]);
        b.op(g, BuiltinOp::MEAN, &[a1, c], &[a2]);
        b.op(g, BuiltinOp::MEAN, &[b1, c], &[b2]);
        b.op(g, BuiltinOp::ADD, &[a2, b2], &[y])
            .add_options(Activation::None);
        b.inputs(g, &[x]);
        b.outputs(g, &[y]);
        b.finish()
    }

    #[test]
    fn finds_the_interleaving_that_halves_the_peak() {
        let bytes = branchy();
        let m = Model::parse(&bytes).unwrap();
        let sizes: Vec<u64> = m
            .main()
            .tensors
            .iter()
            .map(|t| {
                if t.has_data {
                    0
                } else {
                    crate::plan::align16(t.bytes.unwrap())
                }
            })
            .collect();
        let p = Problem::new(&m, &|t| sizes[t], &|_| 0).unwrap();
        let file = p.peak_of(&[0, 1, 2, 3, 4]);
        assert_eq!(file, 16 + 4096 * 2);
        let found = search(&p, DEFAULT_MAX_STATES);
        assert_eq!(found.method, Method::Exact);
        assert!(p.is_valid(&found.order));
        assert_eq!(found.peak_bytes, 4096 + 16 + 16);
        let heuristic = p.greedy();
        assert!(p.is_valid(&heuristic));
        assert_eq!(p.peak_of(&heuristic), found.peak_bytes);
        // A tiny state budget forces the heuristic.
        assert_eq!(search(&p, 2).method, Method::Heuristic);
    }

    #[test]
    fn effectful_ops_keep_their_order() {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let x = b.tensor(g, "x", &[4], DType::F32).id();
        let y = b.tensor(g, "y", &[4], DType::F32).id();
        let z = b.tensor(g, "z", &[4], DType::F32).id();
        b.custom_op(g, "A", &[x], &[y]);
        b.custom_op(g, "B", &[x], &[z]);
        b.inputs(g, &[x]);
        b.outputs(g, &[y, z]);
        let bytes = b.finish();
        let m = Model::parse(&bytes).unwrap();
        let p = Problem::new(&m, &|_| 16, &|_| 0).unwrap();
        assert!(!p.is_valid(&[1, 0]));
        assert!(p.is_valid(&[0, 1]));
    }
}
