//! In-place execution: which ops' outputs take their input's bytes, and the
//! head plan with every alias group as one buffer.
//!
//! Two kinds of alias, both chosen here in op order:
//!
//! - an element-wise op whose kernel can overwrite an input
//!   (`microarena_image::opcode::in_place_inputs`) writes its output over
//!   that input when the input has the output's shape and element size, is
//!   a tensor of the arena (not constant, variable, graph input or output),
//!   is no other operand of the op, and neither it nor any tensor already
//!   aliased to it is read after the op or is a graph input or output;
//! - RESHAPE, SQUEEZE and EXPAND_DIMS (`is_alias_op`) give their output the
//!   input's bytes unchanged: the runtime runs nothing for them;
//! - a windowed op (`opcode::in_place_by_rows`: CONV_2D, DEPTHWISE_CONV_2D,
//!   the pools) writes its output over input 0 row by row, through a ring of
//!   a few output rows, when the output is no larger than the input, both
//!   are batch-1 NHWC, the op reads only constants besides, and the input
//!   group dies there as for an element-wise overwrite. The output takes the
//!   first bytes of the input's buffer.
//!
//! - an op whose kernel writes behind its reads (`opcode::writes_behind_input`:
//!   UNIDIRECTIONAL_SEQUENCE_LSTM, one time step at a time) writes its output
//!   over input 0 when its steps are as many and no larger
//!   (`opcode::writes_behind_fits`) and the input group dies there as for an
//!   overwrite, except that a graph input may be written over (Invoke
//!   consumes it, as TFLM's planner reuses its bytes). The output takes the
//!   first bytes of the input's buffer.
//!
//! No tensor written by two ops, and no op's output that the op also reads,
//! joins an alias group (hostile graphs only; found by the runtime fuzz
//! target): a second write would change every member, and the first read
//! would see no value yet.
//!
//! An alias group (tensors joined by aliases) is planned as one buffer with
//! the union of its members' lifetimes and the largest member's size; its
//! members start at the same byte.
//! `alias_check` and `plan::alias::validate_aliased` check the result
//! independently of this module.

use alloc::vec::Vec;

use microarena_image::{self as rl, opcode};

use super::params::Words;
use crate::read::model::{Model, Tensor};
use crate::tflm::lifetime::{AllocationInfo, BufferKind};

/// Output 0 of op `op` is input slot `slot`'s bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlaceOp {
    /// The op (subgraph 0).
    pub op: usize,
    /// The input slot whose bytes the output takes.
    pub slot: usize,
    /// The input tensor.
    pub input: usize,
    /// The output tensor.
    pub output: usize,
    /// `true` for an op that writes over its input; `false` for an alias
    /// that leaves the bytes as they are (RESHAPE, SQUEEZE, EXPAND_DIMS).
    pub overwrites: bool,
    /// For a windowed op run in place row by row, the bytes of its ring of
    /// output rows (its planned scratch); 0 for every other alias.
    pub ring_bytes: u64,
}

/// A tensor the head holds (not constant, not variable).
fn in_head(t: &Tensor<'_>) -> bool {
    !t.has_data && !t.is_variable && t.bytes.unwrap_or(0) > 0
}

fn elem(t: &Tensor<'_>) -> Option<u32> {
    rl::dtype_size(t.dtype.code())
}

/// `true` when output `y` of an op that writes behind its input
/// (`opcode::writes_behind_input`) fits over input `x`
/// (`opcode::writes_behind_fits`: as many steps, none larger).
pub(super) fn behind_fits(x: &Tensor<'_>, y: &Tensor<'_>) -> bool {
    let steps = |t: &Tensor<'_>| {
        let all: usize = t.shape.iter().map(|&d| d.max(0) as usize).product();
        let last = t.shape.last().map_or(1, |&d| d.max(1) as usize);
        all / last
    };
    let bytes = |t: &Tensor<'_>| t.bytes.unwrap_or(0) as usize;
    in_head(x) && in_head(y) && opcode::writes_behind_fits(steps(x), steps(y), bytes(x), bytes(y))
}

fn root(group: &[usize], mut t: usize) -> usize {
    while let Some(&p) = group.get(t) {
        if p == t {
            break;
        }
        t = p;
    }
    t
}

/// The aliases of `model`'s main subgraph, in op order (`params`: every
/// op's image parameters; the ops of `no_rows` are not run in place row by
/// row, because a banded stage runs them).
pub(super) fn choose(model: &Model<'_>, params: &[Words], no_rows: &[usize]) -> Vec<InPlaceOp> {
    let sg = model.main();
    let n = sg.tensors.len();
    // The last op that reads or writes each tensor (a tensor written again
    // lives until then, as the plan's lifetimes have it); graph outputs are
    // read after every op.
    let mut last_use: Vec<Option<usize>> = alloc::vec![None; n];
    for (k, op) in sg.operators.iter().enumerate() {
        for t in op
            .inputs
            .iter()
            .chain(&op.outputs)
            .filter_map(|&t| usize::try_from(t).ok())
        {
            if let Some(r) = last_use.get_mut(t) {
                *r = Some(k);
            }
        }
    }
    // The first op that reads or writes each tensor, and how many ops write
    // it: an output takes its input's bytes only when it is born at its op
    // (written there first, by that op alone, and no graph input), as the
    // plan's lifetimes and `plan::alias::validate_aliased` have it. A
    // well-formed model always is; a hostile one may write a tensor twice or
    // read it before it is written.
    let mut first_touch: Vec<Option<usize>> = alloc::vec![None; n];
    for (k, op) in sg.operators.iter().enumerate() {
        for &t in op.inputs.iter().chain(&op.outputs) {
            if let Some(f) = usize::try_from(t).ok().and_then(|t| first_touch.get_mut(t)) {
                f.get_or_insert(k);
            }
        }
    }
    let writers = sg.writer_counts();
    let born_at = |t: usize, k: usize| {
        first_touch.get(t).copied().flatten() == Some(k)
            && writers.get(t) == Some(&1)
            && !sg.inputs.iter().any(|&g| g as usize == t)
    };
    // A tensor written by two ops never shares its bytes: the second write
    // would change every member of its group.
    let once = |t: usize| writers.get(t).is_some_and(|&w| w <= 1);
    let graph_io = |t: usize| {
        sg.inputs
            .iter()
            .chain(&sg.outputs)
            .any(|&g| g as usize == t)
    };
    let mut group: Vec<usize> = (0..n).collect();
    let mut members: Vec<Vec<usize>> = (0..n).map(|t| alloc::vec![t]).collect();
    let mut out = Vec::new();
    for (k, op) in sg.operators.iter().enumerate() {
        let Some(code) = super::image_opcode(op) else {
            continue;
        };
        let Some(o) = op.output(0) else { continue };
        let Some(ot) = sg.tensors.get(o) else {
            continue;
        };
        // An op that reads its own output (a hostile graph) reads it
        // before it is written: never an in-place output.
        let reads_output = op.inputs.iter().any(|&t| usize::try_from(t) == Ok(o));
        if op.outputs.len() != 1 || !in_head(ot) || !born_at(o, k) || reads_output {
            continue;
        }
        // Input slot `slot`'s tensor `t` may give the output its bytes: it
        // is not the output, no second op writes it, and no other operand
        // of the op is in its group (the runtime keeps every other operand
        // apart from an in-place region: RESHAPE(x, x) in a hostile graph).
        let free = |slot: usize, t: usize| {
            let g = root(&group, t);
            t != o
                && once(t)
                && (0..op.inputs.len())
                    .filter(|&j| j != slot)
                    .filter_map(|j| op.input(j))
                    .all(|u| root(&group, u) != g)
        };
        let fits = |t: usize, same_shape: bool| {
            sg.tensors.get(t).is_some_and(|it| {
                in_head(it)
                    && it.bytes == ot.bytes
                    && elem(it) == elem(ot)
                    && (!same_shape || it.shape == ot.shape)
            })
        };
        let ring = |t: usize| {
            let it = sg.tensors.get(t)?;
            let r = super::banded::row_window(model, params, k)?;
            let ring = r.in_place_ring_bytes()? as u64;
            let smaller = in_head(it) && ot.bytes <= it.bytes;
            (smaller && !no_rows.contains(&k) && ring > 0).then_some(ring)
        };
        let choice = if opcode::writes_behind_input(code) {
            // Output over input 0 step by step: a graph input may be
            // written over (Invoke consumes it, as TFLM's planner reuses its
            // bytes), a graph output or a tensor read later may not.
            op.input(0)
                .filter(|&t| {
                    let g = root(&group, t);
                    let fits = sg.tensors.get(t).is_some_and(|it| behind_fits(it, ot));
                    let group_dies = members.get(g).is_some_and(|ms| {
                        ms.iter().all(|&m| {
                            !sg.outputs.iter().any(|&o| o as usize == m)
                                && last_use.get(m).copied().flatten() <= Some(k)
                        })
                    });
                    free(0, t) && fits && group_dies
                })
                .map(|t| (0, t, true, 0))
        } else if opcode::is_alias_op(code) {
            op.input(0)
                .filter(|&t| free(0, t) && fits(t, false))
                .map(|t| (0, t, false, 0))
        } else {
            let slots = if opcode::in_place_by_rows(code) {
                &[0][..]
            } else {
                opcode::in_place_inputs(code)
            };
            slots.iter().find_map(|&slot| {
                let t = op.input(slot)?;
                let ring = if opcode::in_place_by_rows(code) {
                    ring(t)?
                } else {
                    0
                };
                if (ring == 0 && !fits(t, true)) || !free(slot, t) {
                    return None;
                }
                let g = root(&group, t);
                let group_dies = members.get(g).is_some_and(|ms| {
                    ms.iter()
                        .all(|&m| !graph_io(m) && last_use.get(m).copied().flatten() <= Some(k))
                });
                group_dies.then_some((slot, t, true, ring))
            })
        };
        if let Some((slot, t, overwrites, ring_bytes)) = choice {
            let g = root(&group, t);
            if let Some(slot) = group.get_mut(o) {
                *slot = g;
            }
            if let Some(ms) = members.get_mut(g) {
                ms.push(o);
            }
            out.push(InPlaceOp {
                op: k,
                slot,
                input: t,
                output: o,
                overwrites,
                ring_bytes,
            });
        }
    }
    out
}

/// The group root (first tensor) of every tensor under `aliases`.
pub(super) fn roots(tensors: usize, aliases: &[InPlaceOp]) -> Vec<usize> {
    let mut group: Vec<usize> = (0..tensors).collect();
    for a in aliases {
        let g = root(&group, a.input);
        if let Some(slot) = group.get_mut(a.output) {
            *slot = g;
        }
    }
    (0..tensors).map(|t| root(&group, t)).collect()
}

/// `planned` with each alias group folded into its root's entry (the union
/// of the members' lifetimes, the largest member's size), and one scratch
/// per windowed op run in place row by row: its ring, live at its op.
pub(super) fn merge(
    planned: &[AllocationInfo],
    roots: &[usize],
    aliases: &[InPlaceOp],
    op_scope: &[i32],
) -> Vec<AllocationInfo> {
    let mut out: Vec<AllocationInfo> = Vec::with_capacity(planned.len());
    let mut at: Vec<Option<usize>> = alloc::vec![None; roots.len()];
    for a in planned {
        let BufferKind::Tensor { tensor, .. } = a.kind else {
            out.push(*a);
            continue;
        };
        let r = roots.get(tensor).copied().unwrap_or(tensor);
        match at.get(r).copied().flatten() {
            Some(i) => {
                if let Some(m) = out.get_mut(i) {
                    m.first = m.first.min(a.first);
                    m.last = m.last.max(a.last);
                    m.bytes = m.bytes.max(a.bytes);
                }
            }
            None => {
                if let Some(slot) = at.get_mut(r) {
                    *slot = Some(out.len());
                }
                out.push(AllocationInfo {
                    kind: BufferKind::Tensor {
                        subgraph: 0,
                        tensor: r,
                    },
                    ..*a
                });
            }
        }
    }
    for a in aliases.iter().filter(|a| a.ring_bytes > 0) {
        let at = op_scope.get(a.op).copied().unwrap_or(0);
        out.push(AllocationInfo {
            kind: BufferKind::Scratch {
                subgraph: 0,
                op_index: a.op,
                request: usize::MAX,
                purpose: "in-place ring",
            },
            bytes: a.ring_bytes,
            first: at,
            last: at,
            offline_offset: None,
            needs_allocating: true,
        });
    }
    out
}
