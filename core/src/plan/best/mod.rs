//! An optimizing planner: never worse than TFLM's greedy planner, and provably
//! optimal whenever its search finishes.
//!
//! 1. TFLM's greedy plan is computed and kept unless something beats it.
//! 2. The buffers are split into independent time components (no buffer is
//!    alive across the cut between two components); each is planned alone and
//!    the head is the highest component (or fixed buffer).
//! 3. Per component, a dozen constructive heuristics (`heuristics`)
//!    give the incumbent.
//! 4. A branch-and-bound in the spirit of MiniMalloc (Moffitt, ASPLOS 2023;
//!    rules read from the paper and google/minimalloc's `src/solver.cc` at
//!    9f5cf81, implemented anew) then looks for strictly lower plans. It
//!    builds *canonical* solutions: buffers are placed in non-decreasing offset order, each at the lowest
//!    offset above every placed buffer it conflicts with (skipping fixed
//!    buffers). Some optimal plan is always canonical (take the optimal plan
//!    with the smallest sum of offsets and place its buffers by offset). The
//!    search prunes a branch when
//!    * a buffer would be placed below the previous one, or at the same offset
//!      with a smaller static rank (symmetry);
//!    * some unplaced buffer would fit entirely below the chosen offset
//!      (dominance: that gap can only stay empty, so moving the buffer down is
//!      no worse and is explored elsewhere; "fit" counts placed conflicts only);
//!    * some unplaced buffer can no longer be placed under the incumbent;
//!    * in some time section, the floor (highest placed buffer there, the
//!      current offset, and the lowest offset any unplaced buffer of the section
//!      can take) plus the unplaced sizes of the section exceed the incumbent;
//!    * in a section where some buffer was pushed above the floor, the buffers
//!      that must start at or above some height do not fit between it and the
//!      incumbent (release dates on one machine);
//!    * a buffer left *behind* the canonical order (its key is below the one
//!      just placed) has no unplaced conflicting buffer left to push it up.
//!      Otherwise its lowest offset is raised to the lowest top such a
//!      conflict can have (placed at or above the current offset), which
//!      feeds the bounds above. This generalizes MiniMalloc's "hatless" rule
//!      and is what makes the search hold up when lifetimes are compressed to
//!      ranks: the static orders then see only section counts, not widths.
//!
//!    The search restarts round-robin over six static buffer rankings
//!    (MiniMalloc's three, and three that ignore lifetime widths) with
//!    doubling node limits, sharing the incumbent. When a probe at a fixed
//!    target splits into independent time parts (MiniMalloc's dynamic
//!    decomposition), each part is restarted over all six rankings in turn,
//!    and a memo keyed on the part's buffers, lowest offsets and section
//!    floors keeps its plan or its proven infeasibility for every later
//!    branch and restart that meets it again.
//!
//! The only budget is a count of search nodes (one per tentative placement),
//! so the plan is the same on every host, wasm32 included.

use alloc::vec::Vec;

mod heuristics;
mod instance;
mod search;

use super::{BUFFER_ALIGNMENT, Plan, PlanBuffer, greedy, validate};
use heuristics::seed;
use instance::Sub;
use search::solve;

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
