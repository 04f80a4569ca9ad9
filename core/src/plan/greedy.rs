//! TFLM's `GreedyMemoryPlanner`, reproduced byte for byte.
//!
//! Order: fixed (offline) buffers first in id order, then online buffers by
//! descending size with *higher id first* on ties (TFLM fills its sort array
//! back to front and bubble-sorts stably). Each online buffer goes to the
//! lowest gap, walking the already placed buffers in offset order and looking
//! only at those alive at a common scope.

use alloc::vec::Vec;

use super::{Plan, PlanBuffer};

/// The order in which TFLM places the buffers.
pub fn placement_order(buffers: &[PlanBuffer]) -> Vec<usize> {
    let mut fixed: Vec<usize> = (0..buffers.len())
        .filter(|&i| is_fixed(buffers, i))
        .collect();
    let mut online: Vec<usize> = (0..buffers.len())
        .filter(|&i| !is_fixed(buffers, i))
        .collect();
    online.sort_by(|&a, &b| size(buffers, b).cmp(&size(buffers, a)).then(b.cmp(&a)));
    fixed.append(&mut online);
    fixed
}

fn is_fixed(buffers: &[PlanBuffer], i: usize) -> bool {
    buffers.get(i).is_some_and(|b| b.fixed_offset.is_some())
}

fn size(buffers: &[PlanBuffer], i: usize) -> u64 {
    buffers.get(i).map_or(0, |b| b.size)
}

/// Places every buffer as TFLM does.
pub fn plan(buffers: &[PlanBuffer]) -> Plan {
    place_in_order(buffers, &placement_order(buffers))
}

/// Places buffers in a given order with TFLM's gap search. The first-fit rule
/// is shared with the optimizing planners, which only change the order.
pub fn place_in_order(buffers: &[PlanBuffer], order: &[usize]) -> Plan {
    place_observed(buffers, order, &mut |_| {})
}

/// A gap below a buffer's place that first-fit looked at and could not use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RejectedGap {
    /// Where the gap starts.
    pub offset: i64,
    /// Its bytes (fewer than the buffer needs).
    pub bytes: u64,
    /// The placed buffer, alive at a common scope, that ends the gap.
    pub blocker: usize,
}

/// What the planner did at one step of [`place_observed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlaceEvent {
    /// First-fit passed over a gap too small for `buffer`.
    Rejected {
        /// The buffer being placed.
        buffer: usize,
        /// The gap.
        gap: RejectedGap,
    },
    /// `buffer` was placed at `offset` (a fixed buffer at its own offset).
    Placed {
        /// The buffer.
        buffer: usize,
        /// Its offset.
        offset: i64,
    },
}

/// [`place_in_order`], telling `observe` each gap first-fit rejects and each
/// placement, in the order they happen (the step-through's planner phase).
pub fn place_observed(
    buffers: &[PlanBuffer],
    order: &[usize],
    observe: &mut impl FnMut(PlaceEvent),
) -> Plan {
    let mut offsets = alloc::vec![0i64; buffers.len()];
    // Placed buffer ids, sorted by offset (ties: earlier placement first).
    let mut by_offset: Vec<usize> = Vec::with_capacity(buffers.len());
    let mut head = 0i64;
    for &id in order {
        let Some(b) = buffers.get(id) else { continue };
        let offset = match b.fixed_offset {
            Some(o) => o,
            None => first_fit(buffers, &offsets, &by_offset, b, &mut |gap| {
                observe(PlaceEvent::Rejected { buffer: id, gap })
            }),
        };
        observe(PlaceEvent::Placed { buffer: id, offset });
        if let Some(o) = offsets.get_mut(id) {
            *o = offset;
        }
        // After every entry whose offset is <= ours.
        let pos = by_offset.partition_point(|&j| offsets.get(j).is_some_and(|&oj| oj <= offset));
        by_offset.insert(pos, id);
        head = head.max(offset + b.size as i64);
    }
    Plan {
        offsets,
        head_bytes: head.max(0) as u64,
    }
}

fn first_fit(
    buffers: &[PlanBuffer],
    offsets: &[i64],
    by_offset: &[usize],
    b: &PlanBuffer,
    rejected: &mut impl FnMut(RejectedGap),
) -> i64 {
    let want = b.size as i64;
    let mut candidate = 0i64;
    let mut prior: Option<usize> = None;
    for &e in by_offset {
        let Some(eb) = buffers.get(e) else { continue };
        if !eb.overlaps_in_time(b) {
            continue;
        }
        if let Some(p) = prior {
            candidate = candidate.max(end_of(buffers, offsets, p));
        }
        let e_off = offsets.get(e).copied().unwrap_or(0);
        if e_off - candidate >= want {
            return candidate;
        }
        if e_off > candidate {
            rejected(RejectedGap {
                offset: candidate,
                bytes: (e_off - candidate) as u64,
                blocker: e,
            });
        }
        prior = Some(e);
    }
    if let Some(p) = prior {
        candidate = candidate.max(end_of(buffers, offsets, p));
    }
    candidate
}

fn end_of(buffers: &[PlanBuffer], offsets: &[i64], i: usize) -> i64 {
    offsets.get(i).copied().unwrap_or(0) + buffers.get(i).map_or(0, |b| b.size as i64)
}
