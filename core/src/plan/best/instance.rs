//! One independent time component of a planning instance ([`Sub`]): local
//! buffer indices, sizes, sections, conflicts and fixed obstacles, the data
//! both the heuristics and the search work on.

use alloc::vec::Vec;

use crate::plan::PlanBuffer;

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
    pub(super) fn lift(&self, b: usize, o: i64) -> i64 {
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
    pub(super) fn split(
        buffers: &[PlanBuffer],
        online: &[usize],
        fixed: &[usize],
        align: i64,
    ) -> Vec<Sub> {
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
    pub(super) fn group(parent: &Sub, mut idx: Vec<usize>, base: &[i64]) -> Sub {
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
    pub(super) fn lower_bound(&self) -> i64 {
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
