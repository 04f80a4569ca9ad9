//! The overlap check for plans with aliases (in-place execution), written
//! apart from the code that chooses aliases and plans them.
//!
//! The buffers are one per tensor, each with its own lifetime; aliased
//! tensors share one placement. [`validate_aliased`] accepts two buffers that
//! share bytes while both are live only when they are in one alias group
//! (connected by declared [`AliasEdge`]s) and start at the same byte, and
//! every edge obeys its rules: the output is born at the edge's op, the
//! input is live there; an alias that leaves the bytes has the input's size,
//! an overwrite at most that (a windowed op in place by rows writes its
//! smaller output over the input's first bytes); and when the op overwrites
//! the input every tensor of the group born before the op is dead after it. Whether an op's kernel may
//! overwrite its input at all is the caller's part (`lower` checks it
//! against the model and the operator table).

use alloc::vec::Vec;
use core::fmt;

use super::{Plan, PlanBuffer};

/// Output `to` of an op at scope `scope` is input `from`'s bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AliasEdge {
    /// Buffer index of the input.
    pub from: usize,
    /// Buffer index of the output.
    pub to: usize,
    /// The op's scope.
    pub scope: i32,
    /// `true` when the op writes the output over the input (an in-place
    /// element-wise op); `false` for an alias that leaves the bytes as they
    /// are (RESHAPE).
    pub overwrites: bool,
}

/// Why [`validate_aliased`] refused a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasViolation {
    /// The plan has a different number of offsets than buffers.
    WrongLength,
    /// `head_bytes` is not the maximum end of the buffers.
    WrongHeadSize,
    /// An edge names a buffer that does not exist.
    NoSuchBuffer {
        /// Edge index.
        edge: usize,
    },
    /// An edge's two buffers are not the same bytes.
    NotSameBytes {
        /// Edge index.
        edge: usize,
    },
    /// An edge's output is not born at its op, or its input is not live there.
    WrongLifetime {
        /// Edge index.
        edge: usize,
    },
    /// A tensor of an overwriting edge's group is still live after the op
    /// overwrote its bytes.
    ReadAfterOverwrite {
        /// Edge index.
        edge: usize,
        /// The buffer still live.
        buffer: usize,
    },
    /// Two buffers live at a common scope share bytes and are not one alias
    /// group's identical placement.
    Overlap {
        /// First buffer index.
        a: usize,
        /// Second buffer index.
        b: usize,
    },
}

impl fmt::Display for AliasViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AliasViolation::WrongLength => {
                write!(f, "the plan has a different number of offsets than buffers")
            }
            AliasViolation::WrongHeadSize => write!(f, "the head size is not the buffers' end"),
            AliasViolation::NoSuchBuffer { edge } => {
                write!(f, "alias {edge} names a buffer that does not exist")
            }
            AliasViolation::NotSameBytes { edge } => {
                write!(f, "alias {edge}: input and output are not the same bytes")
            }
            AliasViolation::WrongLifetime { edge } => write!(
                f,
                "alias {edge}: the output is not born at its op or the input is not live there"
            ),
            AliasViolation::ReadAfterOverwrite { edge, buffer } => write!(
                f,
                "alias {edge} overwrites buffer {buffer}, which is still live after the op"
            ),
            AliasViolation::Overlap { a, b } => write!(
                f,
                "buffers {a} and {b} share bytes while both are live and are not aliases"
            ),
        }
    }
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while let Some(&p) = parent.get(i) {
        if p == i {
            break;
        }
        let gp = parent.get(p).copied().unwrap_or(p);
        if let Some(slot) = parent.get_mut(i) {
            *slot = gp;
        }
        i = p;
    }
    i
}

/// Checks `plan` of `buffers` (one per tensor, aliases sharing an offset)
/// against the aliasing rules (see the module doc), independently of the
/// planner and of the code that chose the aliases.
pub fn validate_aliased(
    buffers: &[PlanBuffer],
    plan: &Plan,
    aliases: &[AliasEdge],
) -> Result<(), AliasViolation> {
    if plan.offsets.len() != buffers.len() {
        return Err(AliasViolation::WrongLength);
    }
    let end = buffers
        .iter()
        .zip(&plan.offsets)
        .map(|(b, &o)| o.saturating_add(b.size as i64))
        .max()
        .unwrap_or(0);
    if end.max(0) as u64 != plan.head_bytes {
        return Err(AliasViolation::WrongHeadSize);
    }
    let at = |i: usize| match (buffers.get(i), plan.offsets.get(i)) {
        (Some(b), Some(&o)) => Some((b, o)),
        _ => None,
    };
    let mut parent: Vec<usize> = (0..buffers.len()).collect();
    for (e, a) in aliases.iter().enumerate() {
        let (Some((from, of)), Some((to, ot))) = (at(a.from), at(a.to)) else {
            return Err(AliasViolation::NoSuchBuffer { edge: e });
        };
        // An overwrite may shrink (a windowed op by rows: the output takes
        // the input's first bytes); an alias that leaves the bytes keeps them all.
        let sizes = if a.overwrites {
            to.size <= from.size
        } else {
            to.size == from.size
        };
        if of != ot || !sizes || a.from == a.to {
            return Err(AliasViolation::NotSameBytes { edge: e });
        }
        let input_live = from.first <= a.scope && a.scope <= from.last;
        if to.first != a.scope || !input_live || (a.overwrites && from.last != a.scope) {
            return Err(AliasViolation::WrongLifetime { edge: e });
        }
        let (r1, r2) = (find(&mut parent, a.from), find(&mut parent, a.to));
        if let Some(slot) = parent.get_mut(r1) {
            *slot = r2;
        }
    }
    let group: Vec<usize> = (0..buffers.len()).map(|i| find(&mut parent, i)).collect();
    // An overwrite changes the group's bytes at its scope: every member born
    // before it must be dead after it, and only its output is born there.
    for (e, a) in aliases.iter().enumerate().filter(|(_, a)| a.overwrites) {
        let g = group.get(a.to).copied();
        for (m, b) in buffers.iter().enumerate() {
            if m == a.to || group.get(m).copied() != g {
                continue;
            }
            let before = b.first <= a.scope;
            if before && (b.last > a.scope || b.first == a.scope) {
                return Err(AliasViolation::ReadAfterOverwrite { edge: e, buffer: m });
            }
        }
    }
    // Every pair that shares bytes while both are live.
    let mut order: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers.get(i).is_some_and(|b| b.size > 0))
        .collect();
    order.sort_by_key(|&i| plan.offsets.get(i).copied().unwrap_or(0));
    for (k, &i) in order.iter().enumerate() {
        let Some((bi, oi)) = at(i) else { continue };
        for &j in order.iter().skip(k + 1) {
            let Some((bj, oj)) = at(j) else { continue };
            if oj >= oi.saturating_add(bi.size as i64) {
                break;
            }
            if !bi.overlaps_in_time(bj) {
                continue;
            }
            // One group's members start at one byte (sizes differ only across
            // a shrinking overwrite, whose input dies there).
            let same = group.get(i) == group.get(j) && oi == oj;
            if !same {
                return Err(AliasViolation::Overlap {
                    a: i.min(j),
                    b: i.max(j),
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(offsets: &[i64], buffers: &[PlanBuffer]) -> Plan {
        let head = buffers
            .iter()
            .zip(offsets)
            .map(|(b, &o)| o as u64 + b.size)
            .max()
            .unwrap_or(0);
        Plan {
            offsets: offsets.to_vec(),
            head_bytes: head,
        }
    }

    // x (0..=1) → RELU at 1 → y (1..=2): one buffer.
    fn relu_chain() -> [PlanBuffer; 2] {
        [PlanBuffer::online(64, 0, 1), PlanBuffer::online(64, 1, 2)]
    }

    const RELU: AliasEdge = AliasEdge {
        from: 0,
        to: 1,
        scope: 1,
        overwrites: true,
    };

    #[test]
    fn an_in_place_op_over_a_dying_input_passes() {
        let b = relu_chain();
        assert_eq!(validate_aliased(&b, &plan(&[0, 0], &b), &[RELU]), Ok(()));
    }

    #[test]
    fn an_undeclared_overlap_fails() {
        let b = relu_chain();
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0], &b), &[]),
            Err(AliasViolation::Overlap { a: 0, b: 1 })
        );
        // Declared, but the output starts 16 bytes in.
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 16], &b), &[RELU]),
            Err(AliasViolation::NotSameBytes { edge: 0 })
        );
    }

    #[test]
    fn an_overwritten_input_read_later_fails() {
        // x is read again at scope 3.
        let b = [PlanBuffer::online(64, 0, 3), PlanBuffer::online(64, 1, 2)];
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0], &b), &[RELU]),
            Err(AliasViolation::WrongLifetime { edge: 0 })
        );
        // As an alias that leaves the bytes alone (RESHAPE), the same is fine.
        let reshape = AliasEdge {
            overwrites: false,
            ..RELU
        };
        assert_eq!(validate_aliased(&b, &plan(&[0, 0], &b), &[reshape]), Ok(()));
    }

    #[test]
    fn an_overwrite_after_a_reshape_read_later_fails() {
        // x → RESHAPE at 1 → y (read at 3); y → RELU at 2 → z: x is dead at 2,
        // y overwrites fine, but a RELU over x at 2 while y is read at 3 is not.
        let b = [
            PlanBuffer::online(64, 0, 2),
            PlanBuffer::online(64, 1, 3),
            PlanBuffer::online(64, 2, 4),
        ];
        let reshape = AliasEdge {
            from: 0,
            to: 1,
            scope: 1,
            overwrites: false,
        };
        let relu = AliasEdge {
            from: 0,
            to: 2,
            scope: 2,
            overwrites: true,
        };
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 0], &b), &[reshape, relu]),
            Err(AliasViolation::ReadAfterOverwrite { edge: 1, buffer: 1 })
        );
        // y dies at 2 instead: valid.
        let b = [
            PlanBuffer::online(64, 0, 2),
            PlanBuffer::online(64, 1, 2),
            PlanBuffer::online(64, 2, 4),
        ];
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 0], &b), &[reshape, relu]),
            Ok(())
        );
    }

    #[test]
    fn a_third_buffer_over_a_group_fails() {
        let b = [
            PlanBuffer::online(64, 0, 1),
            PlanBuffer::online(64, 1, 2),
            PlanBuffer::online(16, 1, 1),
        ];
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 48], &b), &[RELU]),
            Err(AliasViolation::Overlap { a: 0, b: 2 })
        );
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 64], &b), &[RELU]),
            Ok(())
        );
    }

    #[test]
    fn a_windowed_op_by_rows_may_shrink_its_input_not_grow_it() {
        // x (64 B, 0..=1) → stride-2 DEPTHWISE by rows at 1 → y (16 B, 1..=2),
        // its ring (16 B) live at 1 beside x.
        let b = [
            PlanBuffer::online(64, 0, 1),
            PlanBuffer::online(16, 1, 2),
            PlanBuffer::online(16, 1, 1),
        ];
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 64], &b), &[RELU]),
            Ok(())
        );
        // The ring over the input's bytes, or the output past their start.
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 48], &b), &[RELU]),
            Err(AliasViolation::Overlap { a: 0, b: 2 })
        );
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 16, 64], &b), &[RELU]),
            Err(AliasViolation::NotSameBytes { edge: 0 })
        );
        // A RESHAPE keeps every byte: it cannot shrink.
        let reshape = AliasEdge {
            overwrites: false,
            ..RELU
        };
        assert_eq!(
            validate_aliased(&b, &plan(&[0, 0, 64], &b), &[reshape]),
            Err(AliasViolation::NotSameBytes { edge: 0 })
        );
        // Growing over the input: refused too.
        let grow = [PlanBuffer::online(16, 0, 1), PlanBuffer::online(64, 1, 2)];
        assert_eq!(
            validate_aliased(&grow, &plan(&[0, 0], &grow), &[RELU]),
            Err(AliasViolation::NotSameBytes { edge: 0 })
        );
        // The smaller output read while the input is still live after the op.
        let late = [
            PlanBuffer::online(64, 0, 2),
            PlanBuffer::online(16, 1, 2),
            PlanBuffer::online(16, 1, 1),
        ];
        assert_eq!(
            validate_aliased(&late, &plan(&[0, 0, 64], &late), &[RELU]),
            Err(AliasViolation::WrongLifetime { edge: 0 })
        );
    }
}
