//! Memory planners: they place buffers with lifetimes into one head region.
//!
//! Every planner takes the same [`PlanBuffer`] list (sizes already rounded up
//! to 16, lifetimes as inclusive scope ranges, optional fixed offsets) and
//! returns a [`Plan`]. [`validate`] is the independent check that no two
//! buffers alive at a common scope overlap; debug builds run it on every plan.
//! [`alias::validate_aliased`] is its counterpart for plans with aliased
//! buffers (in-place execution), which `lower` runs on every such plan.

use alloc::vec::Vec;
use core::fmt;

pub mod alias;
pub mod best;
pub mod greedy;

pub mod linear;

/// TFLM rounds every planned buffer size up to this.
pub const BUFFER_ALIGNMENT: u64 = 16;

/// Most buffers any planner accepts (real TFLM models plan a few thousand at most).
pub const MAX_PLANNED_BUFFERS: usize = 16_384;

/// Rounds `bytes` up to [`BUFFER_ALIGNMENT`].
pub fn align16(bytes: u64) -> u64 {
    bytes.div_ceil(BUFFER_ALIGNMENT) * BUFFER_ALIGNMENT
}

/// One buffer handed to a planner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanBuffer {
    /// Size in bytes, already rounded up to 16.
    pub size: u64,
    /// First scope at which it is live (inclusive; −1 = before everything).
    pub first: i32,
    /// Last scope at which it is live (inclusive).
    pub last: i32,
    /// A fixed offset (from an offline plan); the planner must not move it.
    pub fixed_offset: Option<i64>,
}

impl PlanBuffer {
    /// A buffer the planner may place anywhere, live from scope `first` to
    /// `last` inclusive.
    pub const fn online(size: u64, first: i32, last: i32) -> PlanBuffer {
        PlanBuffer {
            size,
            first,
            last,
            fixed_offset: None,
        }
    }

    /// Live at a common scope with `other` (inclusive bounds, as TFLM compares them).
    pub fn overlaps_in_time(&self, other: &PlanBuffer) -> bool {
        !(self.first > other.last || other.first > self.last)
    }
}

/// Offsets for every buffer (same order as the input) and the head size.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Plan {
    /// Offset of each buffer from the start of the head.
    pub offsets: Vec<i64>,
    /// max(offset + size) over all buffers; 0 for none.
    pub head_bytes: u64,
}

/// Which planner to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlannerKind {
    /// TFLM's `GreedyMemoryPlanner`, byte for byte, including its tie-break.
    TflmGreedy,
    /// TFLM's `LinearMemoryPlanner` (`preserve_all_tensors`): no reuse.
    Linear,
    /// [`best`]: TFLM greedy or better, optimal when the search can prove it
    /// within [`best::DEFAULT_BUDGET_NODES`] nodes. On a device it is deployed
    /// as an offline plan for the greedy planner.
    Best,
}

impl PlannerKind {
    /// Every planner, in the order reports list them.
    pub const ALL: &'static [PlannerKind] = &[
        PlannerKind::TflmGreedy,
        PlannerKind::Linear,
        PlannerKind::Best,
    ];

    /// Name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            PlannerKind::TflmGreedy => "tflm-greedy",
            PlannerKind::Linear => "linear",
            PlannerKind::Best => "best",
        }
    }

    /// Looks a planner up by [`PlannerKind::name`].
    pub fn by_name(name: &str) -> Option<PlannerKind> {
        PlannerKind::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// [`PlannerKind::by_name`], with the error the shells print.
    pub fn lookup(name: &str) -> Result<PlannerKind, crate::UnknownName> {
        PlannerKind::by_name(name).ok_or_else(|| crate::UnknownName {
            kind: "planner",
            name: name.into(),
            choices: PlannerKind::ALL.iter().map(|p| p.name()).collect(),
        })
    }

    /// Runs the planner.
    pub fn plan(self, buffers: &[PlanBuffer]) -> Result<Plan, PlanError> {
        // TFLM's greedy placement is quadratic; refuse inputs that would take
        // minutes instead of letting a hostile file hang the caller.
        if buffers.len() > MAX_PLANNED_BUFFERS {
            return Err(PlanError::TooManyBuffers {
                count: buffers.len(),
                limit: MAX_PLANNED_BUFFERS,
            });
        }
        let plan = match self {
            PlannerKind::TflmGreedy => greedy::plan(buffers),
            PlannerKind::Linear => linear::plan(buffers)?,
            PlannerKind::Best => best::plan_with_budget(buffers, best::DEFAULT_BUDGET_NODES).plan,
        };
        debug_assert!(
            validate(buffers, &plan).is_ok(),
            "{} produced an overlapping plan",
            self.name()
        );
        Ok(plan)
    }
}

/// Why a planner refused its input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanError {
    /// More buffers than the planner accepts (1024 for the linear planner,
    /// [`MAX_PLANNED_BUFFERS`] for any).
    TooManyBuffers {
        /// Buffers given.
        count: usize,
        /// The planner's limit.
        limit: usize,
    },
    /// Only the greedy planner accepts offline (fixed) offsets.
    FixedOffsetsUnsupported {
        /// The planner asked.
        planner: &'static str,
    },
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlanError::TooManyBuffers { count, limit } => write!(
                f,
                "{count} buffers to plan; this planner accepts at most {limit}"
            ),
            PlanError::FixedOffsetsUnsupported { planner } => write!(
                f,
                "the model carries an OfflineMemoryAllocation plan, which TFLM accepts only with the greedy planner, not {planner}"
            ),
        }
    }
}

impl core::error::Error for PlanError {}

/// A violation found by [`validate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanViolation {
    /// The plan has a different number of offsets than buffers.
    WrongLength,
    /// A planner-chosen offset is negative or not 16-aligned.
    Misplaced {
        /// Buffer index.
        buffer: usize,
    },
    /// Two buffers alive at a common scope share bytes.
    Overlap {
        /// First buffer index.
        a: usize,
        /// Second buffer index.
        b: usize,
    },
    /// `head_bytes` is not the maximum end of the buffers.
    WrongHeadSize,
}

/// Checks a plan independently of the planner that made it: every buffer lies
/// inside the head, online offsets are 16-aligned (unless an offline offset is
/// not), and no two buffers that are alive at a common scope share a byte
/// (fixed offsets may overlap each other, as TFLM does not check offline plans).
pub fn validate(buffers: &[PlanBuffer], plan: &Plan) -> Result<(), PlanViolation> {
    if plan.offsets.len() != buffers.len() {
        return Err(PlanViolation::WrongLength);
    }
    // Online offsets are ends of 16-rounded buffers, so 16-aligned, unless an offline
    // offset is not: TFLM then places online buffers right after it, unaligned (§1.4).
    let align = BUFFER_ALIGNMENT as i64;
    let aligned = buffers
        .iter()
        .all(|b| b.fixed_offset.is_none_or(|f| f % align == 0));
    let mut end = 0i64;
    for (i, (b, &o)) in buffers.iter().zip(&plan.offsets).enumerate() {
        if b.fixed_offset.is_none() && (o < 0 || (aligned && o % align != 0)) {
            return Err(PlanViolation::Misplaced { buffer: i });
        }
        if b.fixed_offset.is_some_and(|f| f != o) {
            return Err(PlanViolation::Misplaced { buffer: i });
        }
        end = end.max(o + b.size as i64);
    }
    if end.max(0) as u64 != plan.head_bytes {
        return Err(PlanViolation::WrongHeadSize);
    }
    // Sweep by offset so the check is O(n log n + overlaps) rather than O(n²) for
    // plans whose buffers are mostly disjoint in space.
    let mut order: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers.get(i).is_some_and(|b| b.size > 0))
        .collect();
    order.sort_by_key(|&i| plan.offsets.get(i).copied().unwrap_or(0));
    for (k, &i) in order.iter().enumerate() {
        let (Some(bi), Some(&oi)) = (buffers.get(i), plan.offsets.get(i)) else {
            continue;
        };
        for &j in order.iter().skip(k + 1) {
            let (Some(bj), Some(&oj)) = (buffers.get(j), plan.offsets.get(j)) else {
                continue;
            };
            if oj >= oi + bi.size as i64 {
                break;
            }
            let both_fixed = bi.fixed_offset.is_some() && bj.fixed_offset.is_some();
            if !both_fixed && bi.overlaps_in_time(bj) {
                return Err(PlanViolation::Overlap {
                    a: i.min(j),
                    b: i.max(j),
                });
            }
        }
    }
    Ok(())
}

/// The largest total of live bytes at any scope: no plan can be smaller.
///
/// Buffers an offline plan pins may share memory on purpose (Vela puts an Ethos-U model's
/// scratch and fast scratch at one offset): pinned buffers count as the union of the address
/// ranges they cover, the others by size.
pub fn lower_bound(buffers: &[PlanBuffer]) -> u64 {
    if pinned_buffers_share_memory(buffers) {
        return lower_bound_with_pinned(buffers);
    }
    // Events at scope boundaries: +size at first, −size after last.
    let mut events: Vec<(i64, i64)> = Vec::with_capacity(buffers.len() * 2);
    for b in buffers {
        events.push((i64::from(b.first), b.size as i64));
        events.push((i64::from(b.last) + 1, -(b.size as i64)));
    }
    events.sort_unstable();
    let (mut live, mut best) = (0i64, 0i64);
    let mut i = 0;
    while i < events.len() {
        let t = events.get(i).map_or(0, |e| e.0);
        while let Some(&(et, d)) = events.get(i) {
            if et != t {
                break;
            }
            live += d;
            i += 1;
        }
        best = best.max(live);
    }
    best as u64
}

/// [`lower_bound`] when some buffers are pinned: at each scope where a buffer starts (the
/// live set only grows there), the live sizes less what pinned buffers share.
fn lower_bound_with_pinned(buffers: &[PlanBuffer]) -> u64 {
    let mut starts: Vec<i32> = buffers.iter().map(|b| b.first).collect();
    starts.sort_unstable();
    starts.dedup();
    starts
        .into_iter()
        .map(|t| {
            let live: u64 = buffers
                .iter()
                .filter(|b| b.first <= t && t <= b.last)
                .map(|b| b.size)
                .fold(0, u64::saturating_add);
            live.saturating_sub(shared_pinned_bytes(buffers, t))
        })
        .max()
        .unwrap_or(0)
}

/// Some two buffers pinned by an offline plan overlap in address and in time (Vela's scratch
/// and fast scratch): only then does [`shared_pinned_bytes`] differ from 0 anywhere. Pinned
/// buffers sorted by offset, each compared with those starting before its end.
pub fn pinned_buffers_share_memory(buffers: &[PlanBuffer]) -> bool {
    let mut pinned: Vec<(u64, &PlanBuffer)> = buffers
        .iter()
        .filter(|b| b.size > 0)
        .filter_map(|b| Some((b.fixed_offset?.max(0) as u64, b)))
        .collect();
    pinned.sort_unstable_by_key(|&(at, _)| at);
    pinned.iter().enumerate().any(|(k, &(at, b))| {
        let end = at.saturating_add(b.size);
        pinned
            .iter()
            .skip(k + 1)
            .take_while(|&&(other, _)| other < end)
            .any(|&(_, o)| b.overlaps_in_time(o))
    })
}

/// Bytes that buffers pinned by an offline plan and live at scope `t` share with one another
/// (their sizes' sum less the union of their address ranges): 0 unless the plan overlaps them.
pub fn shared_pinned_bytes(buffers: &[PlanBuffer], t: i32) -> u64 {
    let ranges: Vec<(u64, u64)> = buffers
        .iter()
        .filter(|b| b.first <= t && t <= b.last)
        .filter_map(|b| {
            let start = b.fixed_offset?.max(0) as u64;
            Some((start, start.saturating_add(b.size)))
        })
        .collect();
    let sum = ranges
        .iter()
        .map(|&(a, z)| z - a)
        .fold(0, u64::saturating_add);
    sum.saturating_sub(union_bytes(ranges))
}

/// Bytes the address ranges `[start, end)` cover together (overlaps counted once).
pub fn union_bytes(mut ranges: Vec<(u64, u64)>) -> u64 {
    ranges.sort_unstable();
    let (mut union, mut reach) = (0u64, 0u64);
    for (a, z) in ranges {
        let from = a.max(reach);
        if z > from {
            union += z - from;
        }
        reach = reach.max(z);
    }
    union
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pinned(size: u64, first: i32, last: i32, at: i64) -> PlanBuffer {
        PlanBuffer {
            fixed_offset: Some(at),
            ..PlanBuffer::online(size, first, last)
        }
    }

    #[test]
    fn pinned_buffers_sharing_memory_count_once() {
        // Vela's scratch and fast scratch at one offset, live together, beside an input.
        let bufs = [
            pinned(74_464, -1, 1, 0),
            pinned(74_464, -1, 1, 0),
            PlanBuffer::online(9_216, 0, 1),
        ];
        assert_eq!(lower_bound(&bufs), 74_464 + 9_216);
        // Partly overlapping ranges: [0, 96) ∪ [64, 160) = 160.
        assert_eq!(
            lower_bound(&[pinned(96, 0, 0, 0), pinned(96, 0, 0, 64)]),
            160
        );
        // Pinned apart in time: the larger alone.
        assert_eq!(
            lower_bound(&[pinned(96, 0, 0, 0), pinned(160, 1, 1, 0)]),
            160
        );
    }

    #[test]
    fn without_pins_the_bound_is_the_largest_live_sum() {
        let bufs = [
            PlanBuffer::online(32, 0, 1),
            PlanBuffer::online(48, 1, 2),
            PlanBuffer::online(16, 2, 2),
        ];
        assert_eq!(lower_bound(&bufs), 80);
    }
}
