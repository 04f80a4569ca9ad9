//! An optimizing planner: never worse than TFLM's greedy planner, and provably
//! optimal whenever its search finishes.
//!
//! 1. TFLM's greedy plan is computed and kept unless something beats it.
//! 2. The buffers are split into independent time components (no buffer is
//!    alive across the cut between two components); each is planned alone and
//!    the head is the highest component (or fixed buffer).
//! 3. Per component, a dozen constructive heuristics ([`super::heuristics`])
//!    give the incumbent.
//! 4. A branch-and-bound in the spirit of MiniMalloc (Moffitt, ASPLOS 2023)
//!    then looks for strictly lower plans. It builds *canonical* solutions:
//!    buffers are placed in non-decreasing offset order, each at the lowest
//!    offset above every placed buffer it conflicts with (skipping fixed
//!    buffers). Some optimal plan is always canonical (take the optimal plan
//!    with the smallest sum of offsets and place its buffers by offset). The
//!    search prunes a branch when
//!    * a buffer would be placed below the previous one, or at the same offset
//!      with a smaller static rank (symmetry);
//!    * some unplaced buffer would fit entirely below the chosen offset
//!      (dominance: that gap can only stay empty, so moving the buffer down is
//!      no worse and is explored elsewhere);
//!    * some unplaced buffer can no longer be placed under the incumbent;
//!    * in some time section, the floor (highest placed buffer there, the
//!      current offset, and the lowest offset any unplaced buffer of the section
//!      can take) plus the unplaced sizes of the section exceed the incumbent.
//!
//!    The search restarts round-robin over several static buffer rankings
//!    with doubling node limits, sharing the incumbent.
//!
//! The only budget is a count of search nodes (one per tentative placement),
//! so the plan is the same on every host, wasm32 included.

use alloc::vec::Vec;

use super::heuristics::{self, GapRule};
use super::{BUFFER_ALIGNMENT, Plan, PlanBuffer, greedy, validate};

/// Node budget used by [`super::PlannerKind::Best`].
pub const DEFAULT_BUDGET_NODES: u64 = 50_000;

/// Instances whose conflict pairs plus section spans exceed this are left to
/// TFLM greedy (the search's tables grow with them).
pub const MAX_SEARCH_WORK: u64 = 4_000_000;

/// What [`plan_with_budget`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BestResult {
    /// The plan (never higher than TFLM greedy's).
    pub plan: Plan,
    /// `plan.head_bytes` is the minimum possible head for these buffers.
    pub proven_optimal: bool,
    /// Search nodes spent (at most the budget).
    pub nodes_used: u64,
    /// A lower bound on every plan's head (equal to the head when proven by bound).
    pub lower_bound: u64,
}

/// Knobs of [`plan_with_options`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BestOptions {
    /// Search nodes allowed (0 = heuristics only).
    pub budget_nodes: u64,
    /// Offsets of non-fixed buffers are multiples of this (TFLM: 16; ≥ 1).
    pub alignment: u64,
    /// Stop searching as soon as the head is at or below this.
    pub good_enough: Option<u64>,
}

impl Default for BestOptions {
    fn default() -> Self {
        BestOptions {
            budget_nodes: DEFAULT_BUDGET_NODES,
            alignment: BUFFER_ALIGNMENT,
            good_enough: None,
        }
    }
}

/// Plans with TFLM's 16-byte alignment and a budget of `budget_nodes` search nodes.
pub fn plan_with_budget(buffers: &[PlanBuffer], budget_nodes: u64) -> BestResult {
    plan_with_options(
        buffers,
        &BestOptions {
            budget_nodes,
            ..BestOptions::default()
        },
    )
}

/// Plans with explicit options.
pub fn plan_with_options(buffers: &[PlanBuffer], opts: &BestOptions) -> BestResult {
    let align = opts.alignment.max(1) as i64;
    let mut offsets = alloc::vec![0i64; buffers.len()];
    // Fixed buffers are obstacles; zero-sized online buffers sit at 0.
    let mut fixed_top = 0i64;
    let mut fixed: Vec<usize> = Vec::new();
    let mut online: Vec<usize> = Vec::new();
    let mut inverted = false;
    for (i, b) in buffers.iter().enumerate() {
        if let Some(o) = b.fixed_offset {
            offsets[i] = o;
            fixed_top = fixed_top.max(o + b.size as i64);
            if b.size > 0 {
                fixed.push(i);
            }
        } else if b.size > 0 {
            inverted |= b.first > b.last;
            online.push(i);
        }
    }
    // Sound lower bound: fixed buffers plus the live sum of well-formed online buffers.
    let wellformed: Vec<PlanBuffer> = online
        .iter()
        .map(|&i| buffers[i])
        .filter(|b| b.first <= b.last)
        .collect();
    let sound_lb = fixed_top.max(super::lower_bound(&wellformed) as i64);

    if search_work(buffers, &online) > MAX_SEARCH_WORK {
        let plan = greedy::plan(buffers);
        let lower_bound = sound_lb.max(0) as u64;
        return BestResult {
            proven_optimal: plan.head_bytes <= lower_bound,
            plan,
            nodes_used: 0,
            lower_bound,
        };
    }
    let subs = Sub::split(buffers, &online, &fixed, align);
    let mut incumbents: Vec<(Vec<i64>, i64)> = subs.iter().map(seed).collect();
    let sub_lb: Vec<i64> = subs.iter().map(Sub::lower_bound).collect();
    let mut lb = sound_lb;
    if !inverted {
        lb = lb.max(sub_lb.iter().copied().max().unwrap_or(0));
    }
    let stop_at = opts
        .good_enough
        .map_or(lb, |g| lb.max(g.min(i64::MAX as u64) as i64));

    // Search the components from the highest incumbent down, splitting what is
    // left of the budget evenly over the components still to search.
    let mut order: Vec<usize> = (0..subs.len()).collect();
    order.sort_by(|&a, &b| incumbents[b].1.cmp(&incumbents[a].1).then(a.cmp(&b)));
    let mut proven_floor = lb;
    let mut used = 0u64;
    let mut pending: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&p| incumbents[p].1 > stop_at)
        .collect();
    // Rounds: what a component leaves of its share goes to those still open,
    // which resume their probes at the node limit they had reached.
    let mut resume: Vec<u64> = alloc::vec![0; subs.len()];
    while !pending.is_empty() {
        let mut open = Vec::new();
        for (k, &p) in pending.iter().enumerate() {
            let share = (opts.budget_nodes - used) / (pending.len() - k) as u64;
            if share == 0 {
                open.push(p);
                continue;
            }
            let (h, proven, spent) = solve(
                &subs[p],
                &mut incumbents[p],
                sub_lb[p],
                stop_at,
                opts.good_enough.is_some(),
                share,
                &mut resume[p],
            );
            used += spent;
            if proven {
                proven_floor = proven_floor.max(h);
            } else if h > stop_at {
                open.push(p);
            }
        }
        // An open component spent its whole share, so every round spends at
        // least one node (the last share is all that is left) or ends here.
        if open.is_empty() || used >= opts.budget_nodes {
            break;
        }
        pending = open;
    }
    let mut head = fixed_top;
    for (sub, (off, h)) in subs.iter().zip(&incumbents) {
        head = head.max(*h);
        for (local, &o) in off.iter().enumerate() {
            offsets[sub.ids[local]] = o;
        }
    }
    let ours = Plan {
        offsets,
        head_bytes: head.max(0) as u64,
    };
    // Every component is proven optimal or no higher than the bound; with
    // reversed lifetimes the component bounds are not sound, so only the
    // global one counts.
    let proven = if inverted {
        head <= sound_lb
    } else {
        head <= proven_floor
    };
    let tflm = greedy::plan(buffers);
    let plan = if tflm.head_bytes <= ours.head_bytes && validate(buffers, &tflm).is_ok() {
        tflm
    } else {
        ours
    };
    let lower_bound = if inverted { sound_lb } else { lb }.max(0) as u64;
    BestResult {
        proven_optimal: proven || plan.head_bytes <= lower_bound,
        plan,
        nodes_used: used,
        lower_bound,
    }
}

/// Conflicting pairs plus elementary time sections spanned, summed over the
/// online buffers: the size of the search's tables.
fn search_work(buffers: &[PlanBuffer], online: &[usize]) -> u64 {
    let mut spans: Vec<(i64, i64)> = online
        .iter()
        .map(|&i| {
            let b = &buffers[i];
            (
                i64::from(b.first.min(b.last)),
                i64::from(b.first.max(b.last)) + 1,
            )
        })
        .collect();
    spans.sort_unstable();
    let mut points: Vec<i64> = spans.iter().flat_map(|&(a, z)| [a, z]).collect();
    points.sort_unstable();
    points.dedup();
    let rank = |t: i64| points.partition_point(|&p| p < t) as u64;
    let mut work = 0u64;
    for (k, &(a, z)) in spans.iter().enumerate() {
        let later = spans.partition_point(|&(s, _)| s < z) as u64;
        work = work
            .saturating_add(later.saturating_sub(k as u64 + 1))
            .saturating_add(rank(z) - rank(a));
    }
    work
}

/// One independent time component, with local buffer indices.
#[derive(Debug)]
pub(crate) struct Sub {
    /// Input index of each local buffer.
    pub(crate) ids: Vec<usize>,
    pub(crate) size: Vec<i64>,
    /// Section range `[lo, hi)` (sections are the elementary time intervals).
    pub(crate) lo: Vec<u32>,
    pub(crate) hi: Vec<u32>,
    /// Lifetime length in scopes.
    pub(crate) len: Vec<i64>,
    /// Conflicting local buffers.
    pub(crate) overlaps: Vec<Vec<u32>>,
    /// Conflicting fixed buffers as `(start, end)`, sorted.
    pub(crate) obstacles: Vec<Vec<(i64, i64)>>,
    /// Lowest offset each buffer can take among the obstacles alone.
    pub(crate) base: Vec<i64>,
    /// Local buffers alive in each section.
    pub(crate) members: Vec<Vec<u32>>,
    pub(crate) align: i64,
}

impl Sub {
    pub(crate) fn n(&self) -> usize {
        self.size.len()
    }

    pub(crate) fn align_up(&self, o: i64) -> i64 {
        let o = o.max(0);
        (o as u64).div_ceil(self.align as u64) as i64 * self.align
    }

    /// Lowest aligned offset ≥ `o` where `b` clears its fixed obstacles.
    fn lift(&self, b: usize, o: i64) -> i64 {
        let mut o = self.align_up(o);
        let want = self.size[b];
        for &(s, e) in &self.obstacles[b] {
            if s >= o + want {
                break;
            }
            if e > o {
                o = self.align_up(e);
            }
        }
        o
    }

    /// Splits the online buffers into independent time components.
    fn split(buffers: &[PlanBuffer], online: &[usize], fixed: &[usize], align: i64) -> Vec<Sub> {
        // Inclusive [min, max] lifetimes: a reversed range is widened, which
        // only adds conflicts (TFLM's overlap test on it is a subset).
        let span = |b: &PlanBuffer| {
            (
                i64::from(b.first.min(b.last)),
                i64::from(b.first.max(b.last)) + 1,
            )
        };
        let mut points: Vec<i64> = online
            .iter()
            .flat_map(|&i| {
                let (a, z) = span(&buffers[i]);
                [a, z]
            })
            .collect();
        points.sort_unstable();
        points.dedup();
        let rank = |t: i64| points.partition_point(|&p| p < t) as u32;
        let mut by_start: Vec<(u32, u32, usize)> = online
            .iter()
            .map(|&i| {
                let (a, z) = span(&buffers[i]);
                (rank(a), rank(z), i)
            })
            .collect();
        by_start.sort_unstable();
        let mut subs = Vec::new();
        let mut k = 0;
        while k < by_start.len() {
            let first_section = by_start[k].0;
            let mut end = by_start[k].1;
            let mut m = k + 1;
            while m < by_start.len() && by_start[m].0 < end {
                end = end.max(by_start[m].1);
                m += 1;
            }
            subs.push(Sub::build(
                buffers,
                &by_start[k..m],
                first_section,
                end,
                fixed,
                align,
            ));
            k = m;
        }
        subs
    }

    fn build(
        buffers: &[PlanBuffer],
        part: &[(u32, u32, usize)],
        first_section: u32,
        end_section: u32,
        fixed: &[usize],
        align: i64,
    ) -> Sub {
        let n = part.len();
        let nsec = (end_section - first_section) as usize;
        let mut sub = Sub {
            ids: part.iter().map(|p| p.2).collect(),
            size: part.iter().map(|p| buffers[p.2].size as i64).collect(),
            lo: part.iter().map(|p| p.0 - first_section).collect(),
            hi: part.iter().map(|p| p.1 - first_section).collect(),
            len: part
                .iter()
                .map(|p| {
                    let b = &buffers[p.2];
                    (i64::from(b.last) - i64::from(b.first)).abs() + 1
                })
                .collect(),
            overlaps: alloc::vec![Vec::new(); n],
            obstacles: alloc::vec![Vec::new(); n],
            base: alloc::vec![0; n],
            members: alloc::vec![Vec::new(); nsec],
            align,
        };
        // `part` is sorted by start section.
        for a in 0..n {
            for b in a + 1..n {
                if sub.lo[b] >= sub.hi[a] {
                    break;
                }
                sub.overlaps[a].push(b as u32);
                sub.overlaps[b].push(a as u32);
            }
            for s in sub.lo[a]..sub.hi[a] {
                sub.members[s as usize].push(a as u32);
            }
            let pa = &buffers[sub.ids[a]];
            for &f in fixed {
                let fb = &buffers[f];
                if fb.overlaps_in_time(pa) || widened_overlap(fb, pa) {
                    let o = fb.fixed_offset.unwrap_or(0);
                    sub.obstacles[a].push((o, o + fb.size as i64));
                }
            }
            sub.obstacles[a].sort_unstable();
        }
        for a in 0..n {
            sub.base[a] = sub.lift(a, 0);
        }
        sub
    }

    /// The sub-problem of `idx` (local buffers of `parent`, alive in a
    /// contiguous run of sections no other unplaced buffer crosses), each
    /// starting no lower than `base`.
    fn group(parent: &Sub, mut idx: Vec<usize>, base: &[i64]) -> Sub {
        idx.sort_by_key(|&b| (parent.lo[b], b));
        let a = idx.iter().map(|&b| parent.lo[b]).min().unwrap_or(0);
        let z = idx.iter().map(|&b| parent.hi[b]).max().unwrap_or(0);
        let mut map = alloc::vec![u32::MAX; parent.n()];
        for (k, &b) in idx.iter().enumerate() {
            map[b] = k as u32;
        }
        let keep = |list: &[u32]| -> Vec<u32> {
            list.iter()
                .map(|&c| map[c as usize])
                .filter(|&c| c != u32::MAX)
                .collect()
        };
        Sub {
            size: idx.iter().map(|&b| parent.size[b]).collect(),
            lo: idx.iter().map(|&b| parent.lo[b] - a).collect(),
            hi: idx.iter().map(|&b| parent.hi[b] - a).collect(),
            len: idx.iter().map(|&b| parent.len[b]).collect(),
            overlaps: idx.iter().map(|&b| keep(&parent.overlaps[b])).collect(),
            obstacles: idx.iter().map(|&b| parent.obstacles[b].clone()).collect(),
            base: idx.iter().map(|&b| base[b]).collect(),
            members: (a..z).map(|s| keep(&parent.members[s as usize])).collect(),
            align: parent.align,
            ids: idx,
        }
    }

    /// Per buffer, the largest total size alive in any of its sections.
    pub(crate) fn peak_totals(&self) -> Vec<i64> {
        let totals: Vec<i64> = self
            .members
            .iter()
            .map(|m| m.iter().map(|&b| self.size[b as usize]).sum())
            .collect();
        (0..self.n())
            .map(|b| {
                (self.lo[b]..self.hi[b])
                    .map(|s| totals[s as usize])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }

    /// No plan of this component is lower than this.
    fn lower_bound(&self) -> i64 {
        let mut lb = 0i64;
        for m in &self.members {
            let floor = m.iter().map(|&b| self.base[b as usize]).min().unwrap_or(0);
            lb = lb.max(floor + m.iter().map(|&b| self.size[b as usize]).sum::<i64>());
        }
        for b in 0..self.n() {
            lb = lb.max(self.base[b] + self.size[b]);
        }
        lb
    }
}

/// Fixed buffers are compared with the widened lifetime of a reversed online
/// buffer too, so that planning stays conservative.
fn widened_overlap(f: &PlanBuffer, b: &PlanBuffer) -> bool {
    let (lo, hi) = (b.first.min(b.last), b.first.max(b.last));
    !(f.first > hi || lo > f.last)
}

/// The best constructive plan of a component.
fn seed(sub: &Sub) -> (Vec<i64>, i64) {
    let mut best: Option<(Vec<i64>, i64)> = None;
    for order in heuristics::orders(sub) {
        for rule in [GapRule::FirstFit, GapRule::BestFit] {
            let (off, h) = heuristics::place(sub, &order, rule);
            if best.as_ref().is_none_or(|b| h < b.1) {
                best = Some((off, h));
            }
        }
    }
    best.unwrap_or_default()
}

/// Static rankings the search restarts with (rank per local buffer).
fn rankings(sub: &Sub) -> Vec<Vec<u32>> {
    let n = sub.n();
    let peak = sub.peak_totals();
    let size = &sub.size;
    let len = &sub.len;
    let area = |b: usize| size[b].saturating_mul(len[b]);
    let mut keys: Vec<Vec<usize>> = Vec::new();
    let mut push = |cmp: &dyn Fn(usize, usize) -> core::cmp::Ordering| {
        let mut o: Vec<usize> = (0..n).collect();
        o.sort_by(|&a, &b| cmp(a, b).then(a.cmp(&b)));
        keys.push(o);
    };
    // MiniMalloc's three default static orders ("WAT", "TAW", "TWA"): lifetime
    // length (W), area (A) and the largest section total (T), all descending.
    push(&|a, b| {
        len[b]
            .cmp(&len[a])
            .then(area(b).cmp(&area(a)))
            .then(peak[b].cmp(&peak[a]))
    });
    push(&|a, b| {
        peak[b]
            .cmp(&peak[a])
            .then(area(b).cmp(&area(a)))
            .then(len[b].cmp(&len[a]))
    });
    push(&|a, b| {
        peak[b]
            .cmp(&peak[a])
            .then(len[b].cmp(&len[a]))
            .then(area(b).cmp(&area(a)))
    });
    keys.into_iter()
        .map(|o| {
            let mut rank = alloc::vec![0u32; n];
            for (r, &b) in o.iter().enumerate() {
                rank[b] = r as u32;
            }
            rank
        })
        .collect()
}

/// Improves `inc` (local offsets, height) with the search. Returns the height,
/// whether it is proven optimal for the component, and the nodes spent.
///
/// With `decide` (the caller named a target height), seven eighths of the
/// budget go to the decision search at `stop_at` alone (MiniMalloc's setting:
/// descents would halve it); descents from the incumbent get the rest, or all
/// that is left once a probe proves the target infeasible.
fn solve(
    sub: &Sub,
    inc: &mut (Vec<i64>, i64),
    lb: i64,
    stop_at: i64,
    decide: bool,
    budget: u64,
    resume: &mut u64,
) -> (i64, bool, u64) {
    if inc.1 <= lb {
        return (inc.1, true, 0);
    }
    let ranks = rankings(sub);
    let first_limit = (2 * sub.n() as u64).max(256);
    let mut limit = first_limit.max(*resume);
    let mut used = 0u64;
    let probe_budget = if decide { budget - budget / 8 } else { budget };
    // Probe the target height directly (a decision problem, pruned much harder
    // than a descent from the incumbent) until a probe proves it infeasible.
    let mut probing = stop_at < inc.1 - 1;
    loop {
        for (kind, rank) in ranks.iter().enumerate() {
            for probe in [true, false] {
                if (probe && !probing) || (!probe && probing && decide) {
                    continue;
                }
                let run = limit.min(budget - used);
                if run == 0 {
                    if probe && decide {
                        *resume = limit;
                    }
                    return (inc.1, false, used);
                }
                let run = if probe && decide {
                    let run = run.min(probe_budget.saturating_sub(used));
                    if run == 0 {
                        // Descend with what is left, from the smallest limit
                        // again; a later round resumes the probes here.
                        *resume = limit;
                        probing = false;
                        limit = first_limit;
                        continue;
                    }
                    run
                } else {
                    run
                };
                let cap = if probe { stop_at } else { inc.1 - 1 };
                let mut s = Search::new(sub, rank, cap, None);
                // Dynamic decomposition needs a fixed target height.
                s.decompose = probe.then_some(kind);
                let outcome = s.run(run, stop_at, inc);
                used += s.nodes;
                if inc.1 <= lb {
                    return (inc.1, true, used);
                }
                match outcome {
                    // A descent that runs out proves the incumbent optimal; a
                    // probe that does only rules out the target.
                    Outcome::Exhausted if probe => probing = false,
                    Outcome::Exhausted => return (inc.1, true, used),
                    Outcome::GoodEnough => return (inc.1, false, used),
                    Outcome::OutOfNodes => {}
                }
            }
        }
        limit = limit.saturating_mul(2);
    }
}

enum Outcome {
    Exhausted,
    GoodEnough,
    OutOfNodes,
}

#[derive(Clone, Copy)]
struct Frame {
    /// (offset, rank) of the buffer placed to reach this node.
    canon: (i64, u32),
    /// The last key tried from this node.
    tried: Option<(i64, u32)>,
    /// Highest end placed so far.
    top: i64,
    /// The child currently applied: buffer and undo-log marks.
    child: Option<(u32, usize, usize)>,
}

struct Search<'a> {
    sub: &'a Sub,
    rank: &'a [u32],
    cap: i64,
    min_off: Vec<i64>,
    off: Vec<i64>,
    placed: Vec<bool>,
    remaining: usize,
    total: Vec<i64>,
    floor: Vec<i64>,
    off_log: Vec<(u32, i64)>,
    floor_log: Vec<(u32, i64)>,
    stamp: Vec<u32>,
    generation: u32,
    affected: Vec<u32>,
    nodes: u64,
    /// Unplaced buffers alive across each section boundary.
    cuts: Vec<u32>,
    /// A boundary lost its last crossing buffer in the latest placement.
    cut_freed: bool,
    /// Solve independent parts separately (decision search only), ranking
    /// them with this static order.
    decompose: Option<usize>,
}

/// How an attempt to split a node into independent parts ended.
enum Split {
    Whole,
    Infeasible,
    OutOfNodes,
    Solved(i64),
}

impl<'a> Search<'a> {
    fn new(sub: &'a Sub, rank: &'a [u32], cap: i64, floor_init: Option<&[i64]>) -> Self {
        let n = sub.n();
        let nsec = sub.members.len();
        let mut cuts = alloc::vec![0u32; nsec + 1];
        for b in 0..n {
            for k in sub.lo[b] + 1..sub.hi[b] {
                cuts[k as usize] += 1;
            }
        }
        let total = sub
            .members
            .iter()
            .map(|m| m.iter().map(|&b| sub.size[b as usize]).sum())
            .collect();
        let floor = sub
            .members
            .iter()
            .enumerate()
            .map(|(s, m)| {
                let lowest = m.iter().map(|&b| sub.base[b as usize]).min().unwrap_or(0);
                lowest.max(floor_init.and_then(|f| f.get(s).copied()).unwrap_or(0))
            })
            .collect();
        Search {
            sub,
            rank,
            cap,
            min_off: sub.base.clone(),
            off: alloc::vec![0; n],
            placed: alloc::vec![false; n],
            remaining: n,
            total,
            floor,
            off_log: Vec::new(),
            floor_log: Vec::new(),
            stamp: alloc::vec![0; nsec],
            generation: 0,
            affected: Vec::new(),
            nodes: 0,
            cuts,
            cut_freed: false,
            decompose: None,
        }
    }

    /// Places `b` at `o`, updating bounds; false if the node is infeasible
    /// (the caller undoes it either way).
    fn place(&mut self, b: usize, o: i64) -> bool {
        let sub = self.sub;
        let size = sub.size[b];
        let top = o + size;
        self.placed[b] = true;
        self.off[b] = o;
        self.remaining -= 1;
        self.cut_freed = false;
        for k in sub.lo[b] + 1..sub.hi[b] {
            let c = &mut self.cuts[k as usize];
            *c -= 1;
            self.cut_freed |= *c == 0;
        }
        for s in sub.lo[b]..sub.hi[b] {
            let s = s as usize;
            self.floor_log.push((s as u32, self.floor[s]));
            self.floor[s] = self.floor[s].max(top);
            self.total[s] -= size;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.fill(0);
            self.generation = 1;
        }
        self.affected.clear();
        for &c in &sub.overlaps[b] {
            let c = c as usize;
            if self.placed[c] || self.min_off[c] >= top {
                continue;
            }
            self.off_log.push((c as u32, self.min_off[c]));
            let m = sub.lift(c, top);
            self.min_off[c] = m;
            if m + sub.size[c] > self.cap {
                return false;
            }
            for s in sub.lo[c]..sub.hi[c] {
                // The section's floor can only rise if this buffer now starts above it.
                if m > self.floor[s as usize] && self.stamp[s as usize] != self.generation {
                    self.stamp[s as usize] = self.generation;
                    self.affected.push(s);
                }
            }
        }
        // A section's floor is at least the lowest offset any of its unplaced buffers can take.
        for k in 0..self.affected.len() {
            let s = self.affected[k] as usize;
            let floor = self.floor[s];
            let mut m = i64::MAX;
            for &c in &sub.members[s] {
                if !self.placed[c as usize] {
                    m = m.min(self.min_off[c as usize]);
                    if m <= floor {
                        break;
                    }
                }
            }
            if m != i64::MAX && m > self.floor[s] {
                self.floor_log.push((s as u32, self.floor[s]));
                self.floor[s] = m;
            }
        }
        for (&f, &t) in self.floor.iter().zip(&self.total) {
            if t > 0 && f.max(o) + t > self.cap {
                return false;
            }
        }
        true
    }

    fn undo(&mut self, b: usize, off_mark: usize, floor_mark: usize) {
        let sub = self.sub;
        while self.off_log.len() > off_mark {
            if let Some((c, m)) = self.off_log.pop() {
                self.min_off[c as usize] = m;
            }
        }
        while self.floor_log.len() > floor_mark {
            if let Some((s, f)) = self.floor_log.pop() {
                self.floor[s as usize] = f;
            }
        }
        for s in sub.lo[b]..sub.hi[b] {
            self.total[s as usize] += sub.size[b];
        }
        for k in sub.lo[b] + 1..sub.hi[b] {
            self.cuts[k as usize] += 1;
        }
        self.placed[b] = false;
        self.remaining += 1;
    }

    /// The next branch from a node: the smallest (min offset, rank) key after
    /// `tried` that is canonical and not dominated, or None when the node is
    /// done.
    fn next(&self, canon: (i64, u32), tried: Option<(i64, u32)>) -> Option<(i64, u32, usize)> {
        let sub = self.sub;
        let mut min_height = i64::MAX;
        let mut best: Option<(i64, u32, usize)> = None;
        for b in 0..sub.n() {
            if self.placed[b] {
                continue;
            }
            let m = self.min_off[b];
            let h = m + sub.size[b];
            if h > self.cap {
                return None;
            }
            min_height = min_height.min(h);
            let key = (m, self.rank[b]);
            if key < canon || tried.is_some_and(|t| key <= t) {
                continue;
            }
            if best.is_none_or(|(bm, br, _)| key < (bm, br)) {
                best = Some((key.0, key.1, b));
            }
        }
        best.filter(|&(m, _, _)| m < min_height)
    }

    fn run(&mut self, limit: u64, stop_at: i64, inc: &mut (Vec<i64>, i64)) -> Outcome {
        let mut stack: Vec<Frame> = alloc::vec![Frame {
            canon: (i64::MIN, 0),
            tried: None,
            top: 0,
            child: None
        }];
        while let Some(mut f) = stack.pop() {
            if let Some((b, om, fm)) = f.child.take() {
                self.undo(b as usize, om, fm);
            }
            let Some((o, r, b)) = self.next(f.canon, f.tried) else {
                continue;
            };
            if self.nodes >= limit {
                return Outcome::OutOfNodes;
            }
            self.nodes += 1;
            f.tried = Some((o, r));
            f.child = Some((b as u32, self.off_log.len(), self.floor_log.len()));
            let ok = self.place(b, o);
            let top = f.top.max(o + self.sub.size[b]);
            stack.push(f);
            if !ok {
                continue;
            }
            if self.remaining == 0 {
                inc.0.clone_from(&self.off);
                inc.1 = top;
                self.cap = top - 1;
                if top <= stop_at {
                    return Outcome::GoodEnough;
                }
                continue;
            }
            if self.cut_freed
                && let Some(kind) = self.decompose
            {
                match self.split(kind, limit) {
                    Split::Whole => {}
                    Split::Infeasible => continue,
                    Split::OutOfNodes => return Outcome::OutOfNodes,
                    Split::Solved(t) => {
                        let top = top.max(t);
                        inc.0.clone_from(&self.off);
                        inc.1 = top;
                        self.cap = top - 1;
                        return if top <= stop_at {
                            Outcome::GoodEnough
                        } else {
                            Outcome::OutOfNodes
                        };
                    }
                }
            }
            stack.push(Frame {
                canon: (o, r),
                tried: None,
                top,
                child: None,
            });
        }
        Outcome::Exhausted
    }

    /// When the unplaced buffers fall into independent time groups, solves
    /// each alone (their feasibility is independent at a fixed target), as
    /// MiniMalloc's dynamic decomposition does.
    fn split(&mut self, kind: usize, limit: u64) -> Split {
        let sub = self.sub;
        let mut unplaced: Vec<usize> = (0..sub.n()).filter(|&b| !self.placed[b]).collect();
        unplaced.sort_by_key(|&b| (sub.lo[b], b));
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut end = 0u32;
        for &b in &unplaced {
            match groups.last_mut() {
                Some(g) if sub.lo[b] < end => g.push(b),
                _ => groups.push(alloc::vec![b]),
            }
            end = end.max(sub.hi[b]);
        }
        if groups.len() < 2 {
            return Split::Whole;
        }
        let mut top = 0i64;
        for g in groups {
            let part = Sub::group(sub, g, &self.min_off);
            let first = part.ids.iter().map(|&b| sub.lo[b]).min().unwrap_or(0) as usize;
            let floors = self.floor.get(first..).unwrap_or(&[]);
            let ranks = rankings(&part);
            let Some(rank) = ranks.get(kind) else {
                return Split::Whole;
            };
            let mut inner = Search::new(&part, rank, self.cap, Some(floors));
            inner.decompose = Some(kind);
            let mut found = (Vec::new(), i64::MAX);
            let outcome = inner.run(limit.saturating_sub(self.nodes), self.cap, &mut found);
            self.nodes += inner.nodes;
            match outcome {
                Outcome::Exhausted => return Split::Infeasible,
                Outcome::OutOfNodes => return Split::OutOfNodes,
                Outcome::GoodEnough => {}
            }
            for (local, &b) in part.ids.iter().enumerate() {
                self.off[b] = found.0[local];
            }
            top = top.max(found.1);
        }
        Split::Solved(top)
    }
}
