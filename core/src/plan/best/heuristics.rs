//! Fast constructive placements used to seed the optimizing planner.
//!
//! Each heuristic picks an order and a gap rule (first fit or best fit) and
//! places one buffer at a time against everything already placed that is alive
//! at a common scope, fixed (offline) buffers included. They run on one
//! independent time component ([`Sub`]) of the problem at a time.

use alloc::vec::Vec;

use super::instance::Sub;

/// Which gap a buffer goes into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GapRule {
    /// The lowest gap that holds it (TFLM's rule).
    FirstFit,
    /// The smallest gap that holds it; on top when none does.
    BestFit,
}

/// The orders tried, as sort keys over local buffer indices.
pub(crate) fn orders(sub: &Sub) -> Vec<Vec<u32>> {
    let n = sub.n();
    let idx: Vec<u32> = (0..n as u32).collect();
    let size = |b: u32| sub.size[b as usize];
    let len = |b: u32| sub.len[b as usize];
    let area = |b: u32| size(b).saturating_mul(len(b));
    // Sum of the sizes of everything it conflicts with, itself included.
    let degree: Vec<i64> = (0..n)
        .map(|b| {
            sub.overlaps[b]
                .iter()
                .map(|&c| sub.size[c as usize])
                .sum::<i64>()
                + sub.size[b]
        })
        .collect();
    let peak = sub.peak_totals();
    let mut out = Vec::new();
    let mut by = |key: &dyn Fn(u32, u32) -> core::cmp::Ordering| {
        let mut o = idx.clone();
        o.sort_by(|&a, &b| key(a, b).then(a.cmp(&b)));
        out.push(o);
    };
    by(&|a, b| size(b).cmp(&size(a)));
    by(&|a, b| area(b).cmp(&area(a)).then(size(b).cmp(&size(a))));
    by(&|a, b| {
        degree[b as usize]
            .cmp(&degree[a as usize])
            .then(size(b).cmp(&size(a)))
    });
    by(&|a, b| len(b).cmp(&len(a)).then(size(b).cmp(&size(a))));
    by(&|a, b| {
        peak[b as usize]
            .cmp(&peak[a as usize])
            .then(size(b).cmp(&size(a)))
    });
    by(&|a, b| {
        sub.lo[a as usize]
            .cmp(&sub.lo[b as usize])
            .then(size(b).cmp(&size(a)))
    });
    out
}

/// Places the buffers of `sub` in `order`; returns local offsets and the height.
pub(crate) fn place(sub: &Sub, order: &[u32], rule: GapRule) -> (Vec<i64>, i64) {
    let n = sub.n();
    let mut off = alloc::vec![-1i64; n];
    let mut height = 0i64;
    let mut busy: Vec<(i64, i64)> = Vec::new();
    for &b in order {
        let b = b as usize;
        let want = sub.size[b];
        busy.clear();
        busy.extend(sub.obstacles[b].iter().copied());
        for &c in &sub.overlaps[b] {
            let oc = off[c as usize];
            if oc >= 0 {
                busy.push((oc, oc + sub.size[c as usize]));
            }
        }
        busy.sort_unstable();
        let mut cand = 0i64;
        let mut best: Option<(i64, i64)> = None; // (gap, offset)
        for &(start, end) in &busy {
            if start - cand >= want {
                match rule {
                    GapRule::FirstFit => {
                        best = Some((0, cand));
                        break;
                    }
                    GapRule::BestFit => {
                        let gap = start - cand;
                        if best.is_none_or(|(g, _)| gap < g) {
                            best = Some((gap, cand));
                        }
                    }
                }
            }
            cand = cand.max(sub.align_up(end));
        }
        let o = best.map_or(cand, |(_, o)| o);
        off[b] = o;
        height = height.max(o + want);
    }
    (off, height)
}

/// The best constructive plan of a component.
pub(super) fn seed(sub: &Sub) -> (Vec<i64>, i64) {
    let mut best: Option<(Vec<i64>, i64)> = None;
    for order in orders(sub) {
        for rule in [GapRule::FirstFit, GapRule::BestFit] {
            let (off, h) = place(sub, &order, rule);
            if best.as_ref().is_none_or(|b| h < b.1) {
                best = Some((off, h));
            }
        }
    }
    best.unwrap_or_default()
}
