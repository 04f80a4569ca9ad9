//! Banded stages: patch-based execution in row bands (`EXEC_BANDED`).
//!
//! A stage is a run of consecutive row-computable ops (`opcode::band_rows`:
//! windowed ops, PAD, element-wise ops and casts, ADD / MUL, CONCATENATION
//! along channels, RESIZE_*, TRANSPOSE of a tensor written before the
//! stage) forming a small DAG. A PAD `stage::pad_fold` allows computes
//! nothing: the window after it reads its input with its padding. Its whole outputs are produced row
//! by row; each row pulls, from the ops before it, just the rows its
//! operands' row maps read (`microarena_image::stage::Schedule`, the
//! schedule core sized the rings with). A tensor only the stage reads
//! (`STORAGE_STREAMED`) never exists whole: its producer keeps the rows its
//! readers still need in a ring of whole rows (the producer's planned
//! scratch), so nothing is computed twice.
//!
//! Each kernel call is the unchanged whole-tensor kernel on a band: its
//! input records have the rows read (padding rows outside the tensor are not
//! there, as for the whole op), its output one row, and its top padding (a
//! PAD's H padding) is what is left of the op's at that row. Each output
//! value is therefore computed from the same values in the same order as by
//! the whole op: bit-exact by construction, whatever the kernel's inner
//! loops.

use microarena_image::geometry::RowWindow;
use microarena_image::params::{ConcatParams, OpParams, PadParams, TransposeParams, WindowParams};
use microarena_image::resize::ResizeRows;
use microarena_image::stage::{
    Behind, MAX_PULLS, PadFold, RowMap, RowSink, RowState, Schedule, StageNode, TOO_LONG,
    ring_rows, writes_behind_reads,
};
use microarena_image::{self as rl, opcode};

use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};
use crate::kernels::{self, Band, BandAt, Ctx, Resolver};

/// The last op of the stage that starts at `first`: its index, checked to
/// be a well-formed stage (every op banded, at most `MAX_STAGE_OPS`).
pub(crate) fn stage_end(img: &Image<'_>, first: usize) -> Result<usize, Error> {
    let bad = |what| Error::Malformed {
        what,
        index: first as u32,
    };
    for j in first..img.op_count() {
        match img.op(j)?.exec {
            rl::EXEC_BANDED_LAST if j - first < rl::MAX_STAGE_OPS => return Ok(j),
            rl::EXEC_BANDED if j - first + 1 < rl::MAX_STAGE_OPS => {}
            rl::EXEC_BANDED | rl::EXEC_BANDED_LAST => {
                return Err(bad("banded stage longer than MAX_STAGE_OPS"));
            }
            _ => return Err(bad("banded stage does not end with a last banded op")),
        }
    }
    Err(bad("banded stage does not end with a last banded op"))
}

/// The row geometry of windowed op `op` (its input 0 and output 0).
pub(crate) fn rows_of(img: &Image<'_>, op: &OpInfo) -> Result<RowWindow, Error> {
    let input = img.tensor(usize::from(op.inputs[0]))?;
    let output = img.tensor(usize::from(op.output))?;
    let row =
        |t: &TensorInfo| rl::dtype_size(t.dtype).map_or(0, |e| e as usize) * t.dim(2) * t.dim(3);
    let w: WindowParams = op.params();
    Ok(RowWindow {
        in_row: row(&input),
        out_row: row(&output),
        in_h: input.dim(1),
        out_h: output.dim(1),
        stride: w.stride_h,
        pad: w.pad_h,
        filter: w.filter_h,
        dilation: w.dilation_h,
    })
}

/// Checks every stage of `img` at construction: each op's rows and
/// operands, the storage of each tensor the stage touches, the rings'
/// sizes against the pull schedule and that the stage's buffers do not
/// overlap — so Invoke only ever slices validated ranges. (Graph inputs and
/// outputs are never streamed: `Interpreter::new` checks them first.)
/// `R`: the reducers are linked (`resolver!(…, banded, reducers)`); without
/// them a stage ending in one is refused ([`Error::KernelNotLinked`]).
pub(crate) fn check_stages<const R: bool>(img: &Image<'_>) -> Result<(), Error> {
    let mut i = 0;
    while i < img.op_count() {
        let op = img.op(i)?;
        if op.exec == rl::EXEC_WHOLE {
            // A streamed tensor belongs to its stage alone.
            for k in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
                if let Some(&t) = op.inputs.get(k)
                    && t != rl::NO_TENSOR
                    && img.tensor(usize::from(t))?.storage == rl::STORAGE_STREAMED
                {
                    return Err(invalid(i, &op, "reads a streamed tensor outside its stage"));
                }
            }
            for k in 0..op.n_outputs {
                if let Some(t) = op.output_tensor(k)
                    && img.tensor(usize::from(t))?.storage == rl::STORAGE_STREAMED
                {
                    return Err(invalid(i, &op, "writes a streamed tensor outside a stage"));
                }
            }
            i += 1;
            continue;
        }
        let end = stage_end(img, i)?;
        let mut plan = EMPTY_PLAN;
        plan.fill::<R>(img, i, end)?;
        plan.check_regions(img)?;
        i = end + 1;
    }
    Ok(())
}

fn invalid(i: usize, op: &OpInfo, what: &'static str) -> Error {
    Error::InvalidOp {
        op_index: i as u16,
        opcode: op.opcode,
        what,
    }
}

/// Where one operand of a banded op comes from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    /// A constant (or omitted) operand, read from the image.
    Const,
    /// Rows of the output of the stage's op at this position.
    Pull(usize),
    /// Rows of a whole tensor in the arena written before the stage.
    Rows(u16),
    /// A whole tensor in the arena written before the stage, broadcast
    /// along H (a squeeze-excite gate): every row reads all of it.
    Whole(u16),
}

/// One op of a stage, as checked.
#[derive(Clone, Copy)]
struct Part {
    kind: opcode::BandRows,
    /// Bytes of one output row.
    out_row: usize,
    /// Its ring (its scratch), or its whole output in the arena.
    region: (usize, usize),
    /// Operands 0 and 1 (the schedule's node has the maps of those pulled).
    src: [Src; MAX_PULLS],
    /// A windowed op: the stage position of the PAD folded into it
    /// (`stage::pad_fold`), whose input it reads instead. A PAD: folded,
    /// it makes no rows. (A byte: the plan is the stage runner's largest
    /// frame.)
    fold: Option<u8>,
}

const NO_PART: Part = Part {
    kind: opcode::BandRows::Rows,
    out_row: 0,
    region: (0, 0),
    src: [Src::Const; MAX_PULLS],
    fold: None,
};

/// The rows of operand `x` that op `op` (index `i`, of `kind`, output
/// `out`) reads per output row. Derived where the stage is checked and
/// again per row, rather than stored: the stage's frame stays small.
fn row_map(
    img: &Image<'_>,
    i: usize,
    op: &OpInfo,
    kind: opcode::BandRows,
    (x, fold): (&TensorInfo, Option<PadFold>),
    out: &TensorInfo,
) -> Result<RowMap, Error> {
    Ok(match kind {
        opcode::BandRows::Window => {
            let w = rows_of(img, op)?;
            let w = fold.map_or(w, |f| f.window(w, x.dim(1), row_bytes(x)));
            RowMap::window(w).ok_or(invalid(
                i,
                op,
                "a banded window's rows do not fit a row map",
            ))?
        }
        opcode::BandRows::Pad => {
            let p: PadParams = op.params();
            let (top, bottom) = (p.before[1], p.after[1]);
            let fits = p.rank == 4
                && p.before[0] == 0
                && p.after[0] == 0
                && top >= 0
                && bottom >= 0
                && x.dim(1) + top as usize + bottom as usize == out.dim(1);
            if !fits {
                return Err(invalid(
                    i,
                    op,
                    "a banded PAD pads H and W of a batch-1 NHWC tensor",
                ));
            }
            RowMap::Shift {
                top: top as usize,
                in_h: x.dim(1),
            }
        }
        // A reducer folds input row `r` in at its step `r`.
        opcode::BandRows::Rows | opcode::BandRows::Channels | opcode::BandRows::Reduce => {
            RowMap::Shift {
                top: 0,
                in_h: x.dim(1),
            }
        }
        opcode::BandRows::Resize => RowMap::Resize(
            ResizeRows::of(op.opcode, x.dtype, op.params(), x.dim(1), out.dim(1))
                .ok_or(invalid(i, op, "a banded resize needs rows in and out"))?,
        ),
        // Folded: it makes no rows (`StagePlan::fill`).
        opcode::BandRows::Flatten => {
            return Err(invalid(i, op, "a folded RESHAPE is read through"));
        }
        // Read whole (never pulled): row `r` of the input axis that
        // becomes the output's rows.
        opcode::BandRows::Gather => {
            let perm: TransposeParams = op.params();
            RowMap::Shift {
                top: 0,
                in_h: x.dim(perm.perm[1].clamp(0, 3) as usize),
            }
        }
    })
}

/// The fold of PAD or RESHAPE `folded` (op `i`, written into a streamed
/// tensor) into the one op of ops `first..first + n` that reads it, when
/// `stage::pad_fold` or `stage::flatten_folds` allows it: that op's stage
/// position.
fn fold_target(
    img: &Image<'_>,
    (first, n): (usize, usize),
    i: usize,
    folded: &OpInfo,
) -> Result<Option<usize>, Error> {
    let (x, y) = (
        img.tensor(usize::from(folded.inputs[0]))?,
        img.tensor(usize::from(folded.output))?,
    );
    let code = folded.opcode;
    if !matches!(code, opcode::PAD | opcode::RESHAPE) || y.storage != rl::STORAGE_STREAMED {
        return Ok(None);
    }
    let mut reader = None;
    for j in i + 1..first + n {
        let o = img.op(j)?;
        let reads = (0..o.n_inputs.min(rl::MAX_OP_INPUTS))
            .filter(|&s| o.inputs.get(s) == Some(&folded.output))
            .count();
        if reads > 0 {
            if reader.is_some() || reads > 1 || o.inputs[0] != folded.output {
                return Ok(None);
            }
            reader = Some((j, o));
        }
    }
    let Some((j, o)) = reader else {
        return Ok(None);
    };
    if code == opcode::RESHAPE {
        let shape = rl::stage::OpShape {
            input: x.dims4(),
            ..img.op_shape(&o)
        };
        let folds =
            shape.input[0] == 1 && rl::stage::flatten_folds(o.opcode, &o.param_words, &shape);
        return Ok(folds.then_some(j - first));
    }
    let same_quant = x.scale == y.scale && x.zero_point == y.zero_point && x.dtype == y.dtype;
    let fold = rl::stage::pad_fold(code, &folded.params(), y.dtype, same_quant, o.opcode);
    Ok(fold.map(|_| j - first))
}

/// The fold of the PAD at stage position `k` (checked by [`fold_target`]).
fn fold_at(img: &Image<'_>, first: usize, k: usize) -> Result<PadFold, Error> {
    let p: PadParams = img.op(first + k)?.params();
    Ok(PadFold {
        top: p.before[1],
        left: p.before[2],
    })
}

/// A stage's ops and their schedule's nodes, checked from the image alone.
struct StagePlan {
    first: usize,
    n: usize,
    parts: [Part; rl::MAX_STAGE_OPS],
    nodes: [StageNode; rl::MAX_STAGE_OPS],
    /// The last op writes its output over arena tensor X (its region starts
    /// at X's): (the stage position reading X by rows, X). Checked by
    /// [`StagePlan::check_behind`]; the writer's region then spans X.
    behind: Option<(u8, u16)>,
    /// A reducer (the stage's last op): its accumulator (its scratch).
    acc: (usize, usize),
}

const EMPTY_PLAN: StagePlan = StagePlan {
    first: 0,
    n: 0,
    behind: None,
    acc: (0, 0),
    parts: [NO_PART; rl::MAX_STAGE_OPS],
    nodes: [StageNode {
        out_h: 0,
        whole: false,
        pulls: [None; MAX_PULLS],
    }; rl::MAX_STAGE_OPS],
};

/// `true` when an element-wise operand `t` of output `out` reads the same
/// elements for every output row: its H is 1 or it has no H axis.
fn broadcast_along_h(t: &TensorInfo) -> bool {
    match t.rank {
        0..=2 => true,
        3 => t.dim(0) == 1,
        4 => t.dim(0) == 1 && t.dim(1) == 1,
        _ => false,
    }
}

fn row_bytes(t: &TensorInfo) -> usize {
    rl::dtype_size(t.dtype).map_or(0, |e| e as usize) * t.dim(2) * t.dim(3)
}

impl StagePlan {
    /// Ops `first..=last` as a stage: every op one the stage runs, with
    /// batch-1 NHWC output; operands 0 and 1 pulled from earlier ops of the
    /// stage or read whole from the arena, the others constants; streamed
    /// outputs read by a later op of the stage; each ring at least the rows
    /// the pull schedule holds in it.
    /// (Filled in place: the plan is the stage's largest frame, and a
    /// returned value could be copied. Out of line: its temporaries would
    /// otherwise stay in the stage runner's frame while the stage runs.)
    #[inline(never)]
    fn fill<const R: bool>(
        &mut self,
        img: &Image<'_>,
        first: usize,
        last: usize,
    ) -> Result<(), Error> {
        let plan = self;
        plan.first = first;
        plan.n = last + 1 - first;
        plan.acc = (0, 0);
        if plan.n > rl::MAX_STAGE_OPS {
            return Err(malformed_what(first, TOO_LONG));
        }
        // Folded PADs: (stage position of the op that reads through each).
        let mut via = [None; rl::MAX_STAGE_OPS];
        for k in 0..plan.n {
            let i = first + k;
            let op = img.op(i)?;
            let fail = |what| invalid(i, &op, what);
            let mut shape = img.op_shape(&op);
            // Reading through a folded RESHAPE: the map it flattens.
            if let Some(f) = via.get(k).copied().flatten() {
                let x = img.op(first + usize::from(f))?.inputs[0];
                shape.input = img.tensor(usize::from(x))?.dims4();
            }
            let in_dims = shape.input;
            let kind = rl::stage::stage_kind(op.opcode, &op.param_words, &shape)
                .filter(|_| op.n_outputs == 1 && op.n_inputs > 0)
                .ok_or(fail("this operator cannot run in a banded stage"))?;
            if op.in_place.is_some() {
                return Err(fail("a banded op cannot also run in place"));
            }
            let out = img.tensor(usize::from(op.output))?;
            if kind == opcode::BandRows::Reduce && !R {
                return Err(Error::KernelNotLinked {
                    op_index: i as u16,
                    opcode: op.opcode,
                    variant: crate::kernels::REDUCE_VARIANT,
                });
            }
            let reduce = R && kind == opcode::BandRows::Reduce;
            let flatten = kind == opcode::BandRows::Flatten;
            if !reduce && !flatten && (out.rank != 4 || out.dim(0) != 1) {
                return Err(fail("a banded op's output must be 4-D with batch 1"));
            }
            let region = match out.storage {
                rl::STORAGE_STREAMED if !reduce => op.scratch,
                rl::STORAGE_ARENA if reduce => {
                    // Its sums: the whole kernel's scratch (MEAN, SUM) or an
                    // accumulator of its own (a global average pool).
                    let need = rl::stage::accumulator_bytes(op.opcode, out.elements()).max(
                        rl::op_scratch_bytes(op.opcode, out.dtype, out.elements() as u32, 0)
                            as usize,
                    );
                    if k + 1 != plan.n || op.scratch.1 < need {
                        return Err(fail(
                            "a banded reducer ends its stage, its sums in its scratch",
                        ));
                    }
                    plan.acc = op.scratch;
                    (out.location, out.bytes)
                }
                rl::STORAGE_ARENA if op.scratch.1 == 0 => (out.location, out.bytes),
                _ => {
                    return Err(fail(
                        "a banded op's output must be streamed into its ring or whole in the arena",
                    ));
                }
            };
            let mut part = Part {
                kind,
                // A reducer writes no rows: its output is written whole.
                out_row: if reduce { 0 } else { row_bytes(&out) },
                region,
                src: [Src::Const; MAX_PULLS],
                fold: via.get(k).copied().flatten(),
            };
            let mut pulls = [None; MAX_PULLS];
            let too_long = malformed_what(first, TOO_LONG);
            if matches!(kind, opcode::BandRows::Pad | opcode::BandRows::Flatten)
                && let Some(c) = fold_target(img, (first, plan.n), i, &op)?
            {
                // Folded: no rows, no pulls; its reader reads its input.
                *via.get_mut(c).ok_or(too_long)? = Some(k as u8);
                part.fold = Some(c as u8);
                *plan.nodes.get_mut(k).ok_or(too_long)? = StageNode {
                    out_h: out.dim(1),
                    whole: false,
                    pulls,
                };
                *plan.parts.get_mut(k).ok_or(too_long)? = part;
                continue;
            }
            if flatten {
                return Err(fail(
                    "a RESHAPE runs in a banded stage only folded into the FULLY_CONNECTED reducing its map",
                ));
            }
            let fold = match (kind, part.fold) {
                (opcode::BandRows::Window, Some(f)) => Some(fold_at(img, first, usize::from(f))?),
                _ => None,
            };
            for s in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
                let t = match (s, part.fold) {
                    (0, Some(f)) => img.op(first + usize::from(f))?.inputs[0],
                    _ => op.inputs.get(s).copied().unwrap_or(rl::NO_TENSOR),
                };
                let info = match t {
                    rl::NO_TENSOR => None,
                    t => Some(img.tensor(usize::from(t))?),
                };
                let constant = info
                    .as_ref()
                    .is_none_or(|x| matches!(x.storage, rl::STORAGE_CONST | rl::STORAGE_NONE));
                if constant {
                    if s == 0 {
                        return Err(fail("a banded op's input 0 must be rows of a tensor"));
                    }
                    continue;
                }
                let (Some(x), true) = (info, s < MAX_PULLS) else {
                    return Err(fail(
                        "a banded op reads only constants besides its first operands",
                    ));
                };
                let elementwise =
                    matches!(kind, opcode::BandRows::Rows | opcode::BandRows::Channels);
                if kind == opcode::BandRows::Channels && op.params::<ConcatParams>().axis != 3 {
                    return Err(fail("a banded CONCATENATION joins channels"));
                }
                if s == 1 && !elementwise {
                    return Err(fail(
                        "a windowed or PAD op reads only constants besides input 0",
                    ));
                }
                let producer = (0..k).find(|&j| img.op(first + j).is_ok_and(|o| o.output == t));
                let later = (k..plan.n).any(|j| img.op(first + j).is_ok_and(|o| o.output == t));
                if later {
                    return Err(fail("a banded op reads a tensor its stage writes later"));
                }
                let map = row_map(img, i, &op, kind, (&x, fold.filter(|_| s == 0)), &out)?;
                // Element-wise and concatenated operands share the output's
                // rows (W or C may differ: broadcast, or joined channels).
                let rows_ok =
                    x.rank == 4 && x.dim(0) == 1 && (!elementwise || x.dim(1) == out.dim(1));
                let gather = kind == opcode::BandRows::Gather;
                let src = match (producer, x.storage) {
                    (None, rl::STORAGE_ARENA) if gather => Src::Whole(t),
                    (Some(_), _) if gather => {
                        return Err(fail(
                            "a banded TRANSPOSE reads a tensor written before its stage",
                        ));
                    }
                    (Some(j), rl::STORAGE_STREAMED | rl::STORAGE_ARENA) if rows_ok => Src::Pull(j),
                    (None, rl::STORAGE_ARENA) if rows_ok => Src::Rows(t),
                    (None, rl::STORAGE_ARENA)
                        if kind == opcode::BandRows::Rows && broadcast_along_h(&x) =>
                    {
                        Src::Whole(t)
                    }
                    (None, rl::STORAGE_STREAMED) => {
                        return Err(fail(
                            "reads a streamed tensor no earlier op of its stage writes",
                        ));
                    }
                    _ => {
                        return Err(fail(
                            "a banded op's operand is neither its output's rows nor broadcast",
                        ));
                    }
                };
                if let (Some(slot), Some(pull)) = (part.src.get_mut(s), pulls.get_mut(s)) {
                    *slot = src;
                    if let Src::Pull(j) = src {
                        *pull = Some((j, map));
                    }
                }
            }
            let node = StageNode {
                // A reducer's steps: its input's rows.
                out_h: if reduce { in_dims[1] } else { out.dim(1) },
                whole: out.storage == rl::STORAGE_ARENA,
                pulls,
            };
            *plan.nodes.get_mut(k).ok_or(too_long)? = node;
            *plan.parts.get_mut(k).ok_or(too_long)? = part;
        }
        let nodes = plan.nodes.get(..plan.n).unwrap_or(&[]);
        if !nodes.iter().any(|n| n.whole) {
            return Err(malformed_what(
                first,
                "a banded stage writes no whole output",
            ));
        }
        for (j, (n, p)) in nodes.iter().zip(&plan.parts).enumerate() {
            let read = nodes
                .iter()
                .any(|c| c.pulls.iter().flatten().any(|&(p, _)| p == j));
            let folded = matches!(p.kind, opcode::BandRows::Pad | opcode::BandRows::Flatten)
                && p.fold.is_some();
            if !n.whole && !read && !folded {
                return Err(malformed_what(
                    first + j,
                    "a streamed tensor no op of its stage reads",
                ));
            }
        }
        let rings = ring_rows(nodes).map_err(|what| malformed_what(first, what))?;
        for (k, (n, p)) in nodes.iter().zip(&plan.parts).enumerate() {
            let need = rings.get(k).and_then(|&r| r.checked_mul(p.out_row));
            let have = if n.whole {
                p.out_row * n.out_h
            } else {
                p.region.1
            };
            if need.is_none_or(|need| have < need) {
                let op = img.op(first + k)?;
                return Err(invalid(
                    first + k,
                    &op,
                    "the ring is smaller than the rows the stage's schedule holds in it",
                ));
            }
        }
        // The last op's output placed where a tensor the stage reads by
        // rows starts: written over it (checked with the regions).
        let parts = plan.parts.get(..plan.n).unwrap_or(&[]);
        let start = parts.last().map(|p| p.region);
        plan.behind = None;
        for (k, p) in parts.iter().enumerate() {
            for src in p.src {
                if let (Src::Rows(t), Some((at, len))) = (src, start)
                    && len > 0
                    && plan.behind.is_none()
                    && img.tensor(usize::from(t))?.location == at
                {
                    plan.behind = Some((k as u8, t));
                }
            }
        }
        Ok(())
    }

    /// The stage's last op writes its output over the arena tensor X that
    /// op `reader` reads by rows ([`StagePlan::behind`]): allowed when the
    /// output starts at X and is no larger, X is read by that op alone, once,
    /// through input 0, by no op after the stage and is no graph output (its
    /// bytes are gone after Invoke), and the stage's schedule writes each
    /// row of the output behind the rows of X still to be read
    /// (`stage::writes_behind_reads`, the rule core planned with).
    fn check_behind(&self, img: &Image<'_>, reader: usize, x_t: u16) -> Result<(), Error> {
        let refuse = |what| malformed_what(self.first, what);
        let parts = self.parts.get(..self.n).unwrap_or(&[]);
        let nodes = self.nodes.get(..self.n).unwrap_or(&[]);
        let writer = self.n.checked_sub(1).ok_or(refuse(TOO_LONG))?;
        let x = img.tensor(usize::from(x_t))?;
        let w = parts.get(writer).ok_or(refuse(TOO_LONG))?;
        if w.kind == opcode::BandRows::Reduce {
            return Err(refuse(
                "a banded reducer's output cannot be written over its input",
            ));
        }
        if w.region.0 != x.location || w.region.1 > x.bytes {
            return Err(refuse(
                "a banded stage's output over its input must start at it and be no larger",
            ));
        }
        let uses = parts
            .iter()
            .flat_map(|p| p.src)
            .filter(|s| matches!(s, Src::Rows(t) | Src::Whole(t) if *t == x_t))
            .count();
        let via_0 = parts
            .get(reader)
            .is_some_and(|p| p.src[0] == Src::Rows(x_t));
        if uses != 1 || !via_0 {
            return Err(refuse(
                "a banded stage's output over its input needs that input read by one op alone",
            ));
        }
        for i in self.first + self.n..img.op_count() {
            let op = img.op(i)?;
            if op.inputs.iter().take(op.n_inputs).any(|&t| t == x_t) {
                return Err(refuse(
                    "a banded stage writes over a tensor an op after it reads",
                ));
            }
        }
        for o in 0..img.output_count() {
            if img.output_tensor(o)? == usize::from(x_t) {
                return Err(refuse("a banded stage writes over a graph output"));
            }
        }
        let i = self.first + reader;
        let op = img.op(i)?;
        let part = parts.get(reader).ok_or(refuse(TOO_LONG))?;
        let fold = match (part.kind, part.fold) {
            (opcode::BandRows::Window, Some(f)) => Some(fold_at(img, self.first, usize::from(f))?),
            _ => None,
        };
        let out = img.tensor(usize::from(op.output))?;
        let b = Behind {
            reader,
            map: row_map(img, i, &op, part.kind, (&x, fold), &out)?,
            x_row: row_bytes(&x),
            writer,
            out_row: w.out_row,
        };
        writes_behind_reads(nodes, b).map_err(refuse)
    }

    /// The stage's rings and whole outputs do not overlap each other or the
    /// arena tensors it reads.
    fn check_regions(&self, img: &Image<'_>) -> Result<(), Error> {
        let overlap = Error::Malformed {
            what: "a banded stage's buffers overlap",
            index: self.first as u32,
        };
        let apart = |x: (usize, usize), y: (usize, usize)| {
            x.1 == 0 || y.1 == 0 || x.0.saturating_add(x.1) <= y.0 || y.0.saturating_add(y.1) <= x.0
        };
        let parts = self.parts.get(..self.n).unwrap_or(&[]);
        let writer = self.n.saturating_sub(1);
        // A reducer's accumulator is one more buffer of the stage's own.
        let acc = self.acc;
        for (a, p) in parts.iter().enumerate() {
            if !apart(p.region, acc) {
                return Err(overlap);
            }
            for q in parts.iter().skip(a + 1) {
                if !apart(p.region, q.region) {
                    return Err(overlap);
                }
            }
            for src in p.src {
                if let Src::Rows(t) | Src::Whole(t) = src {
                    let over = self.behind.is_some_and(|(_, x)| x == t);
                    let t = img.tensor(usize::from(t))?;
                    let clash = !apart(acc, (t.location, t.bytes))
                        || parts.iter().enumerate().any(|(k, q)| {
                            let written_over = over && k == writer;
                            !written_over && !apart(q.region, (t.location, t.bytes))
                        });
                    if clash {
                        return Err(overlap);
                    }
                }
            }
        }
        match self.behind {
            Some((reader, x)) => self.check_behind(img, usize::from(reader), x),
            None => Ok(()),
        }
    }
}

fn malformed_what(index: usize, what: &'static str) -> Error {
    Error::Malformed {
        what,
        index: index as u32,
    }
}

/// A stage being run: the schedule's sink that computes rows.
struct Runner<'s, 'x, 'm, const R: bool> {
    kernels: &'s Resolver,
    img: &'s Image<'m>,
    plan: &'s StagePlan,
    opdata: &'s [&'x [u8]],
    /// Each op's ring or whole output.
    rings: [&'s mut [u8]; rl::MAX_STAGE_OPS],
    /// A reducer's accumulator (the stage's last op's).
    acc: &'s mut [u8],
    /// The head's other bytes, with their offsets.
    pieces: [(usize, &'s [u8]); rl::MAX_STAGE_OPS + 2],
    vars: &'s mut [u8],
}

/// Runs the stage of ops `first..first + opdata.len()` (checked at
/// construction by [`check_stages`]; `opdata` holds each op's OpData) over
/// the arena's head. Never inlined: Invoke's frame stays what plain ops need.
#[inline(never)]
pub(crate) fn run_stage<const R: bool>(
    kernels: &Resolver,
    img: &Image<'_>,
    head: &mut [u8],
    vars: &mut [u8],
    first: usize,
    opdata: &[&[u8]],
) -> Result<(), Error> {
    let n = opdata.len();
    let bad = malformed(first);
    if n == 0 || n > rl::MAX_STAGE_OPS {
        return Err(bad);
    }
    let mut plan = EMPTY_PLAN;
    plan.fill::<R>(img, first, first + n - 1)?;
    let mut runner: Runner<'_, '_, '_, R> = Runner {
        kernels,
        img,
        plan: &plan,
        opdata,
        rings: core::array::from_fn(|_| <&mut [u8]>::default()),
        acc: &mut [],
        pieces: [(0, &[]); rl::MAX_STAGE_OPS + 2],
        vars,
    };
    runner.split(head)?;
    let nodes = plan.nodes.get(..n).ok_or(bad)?;
    let mut schedule = Schedule::new(nodes).map_err(|what| malformed_what(first, what))?;
    schedule.run(&mut runner)
}

impl<'s, const R: bool> Runner<'s, '_, '_, R> {
    /// Splits the head: rings, whole outputs and a reducer's accumulator
    /// mutable, the rest readable. Out of line: its sorting array would
    /// otherwise stay in the stage runner's frame while the stage runs.
    #[inline(never)]
    fn split(&mut self, head: &'s mut [u8]) -> Result<(), Error> {
        let (plan, img) = (self.plan, self.img);
        let (n, bad) = (plan.n, malformed(plan.first));
        // Slot `n`: a reducer's accumulator.
        let mut order = [(0usize, 0usize, 0usize); rl::MAX_STAGE_OPS + 1];
        for (k, (slot, p)) in order.iter_mut().zip(&plan.parts).take(n).enumerate() {
            *slot = (p.region.0, p.region.1, k);
        }
        if let Some(slot) = order.get_mut(n) {
            *slot = (plan.acc.0, plan.acc.1, n);
        }
        // An output over its input: the writer's region spans the input, whose
        // rows the reader then reads from it (`Runner::row`).
        if let (Some((_, x)), Some(last)) = (plan.behind, n.checked_sub(1)) {
            let x = img.tensor(usize::from(x))?;
            if let Some(w) = order.get_mut(last) {
                *w = (x.location, x.bytes, last);
            }
        }
        let order = order.get_mut(..=n).ok_or(bad)?;
        kernels::sort_regions(order);
        let mut rest = head;
        let mut at = 0usize;
        for (i, &(off, bytes, slot)) in order.iter().enumerate() {
            if bytes == 0 {
                // A folded PAD's empty ring: wherever the planner put it.
                continue;
            }
            let gap = off.checked_sub(at).ok_or(bad)?;
            let (readable, tail) = rest.split_at_mut_checked(gap).ok_or(bad)?;
            *self.pieces.get_mut(i).ok_or(bad)? = (at, &*readable);
            let (region, tail) = tail.split_at_mut_checked(bytes).ok_or(bad)?;
            if slot == n {
                self.acc = region;
            } else {
                *self.rings.get_mut(slot).ok_or(bad)? = region;
            }
            rest = tail;
            at = off + bytes;
        }
        *self.pieces.get_mut(n + 1).ok_or(bad)? = (at, &*rest);
        Ok(())
    }
}

fn malformed(index: usize) -> Error {
    Error::Malformed {
        what: "banded stage outside the head",
        index: index as u32,
    }
}

/// Arena tensor `t`, read whole from the head's readable bytes `pieces`.
fn whole<'p>(
    img: &Image<'_>,
    pieces: &[(usize, &'p [u8])],
    t: u16,
    bad: Error,
) -> Result<(TensorInfo, &'p [u8]), Error> {
    let info = img.tensor(usize::from(t))?;
    let end = info.location.saturating_add(info.bytes);
    pieces
        .iter()
        .find(|(base, p)| info.location >= *base && end <= base + p.len())
        .and_then(|(base, p)| p.get(info.location - base..end - base))
        .map(|d| (info, d))
        .ok_or(bad)
}

/// A band's record of tensor `t`: `h` rows of `row` bytes.
fn band_record(img: &Image<'_>, t: u16, h: usize, row: usize) -> Result<TensorInfo, Error> {
    let mut b = img.tensor(usize::from(t))?;
    if let Some(d) = b.dims.get_mut(1) {
        *d = h as i32;
    }
    b.bytes = h * row;
    b.location = 0;
    b.storage = rl::STORAGE_ARENA;
    Ok(b)
}

impl<const R: bool> RowSink for Runner<'_, '_, '_, R> {
    type Error = Error;

    fn invalid(&self, what: &'static str) -> Error {
        malformed_what(self.plan.first, what)
    }

    #[inline(never)]
    fn drop_rows(&mut self, k: usize, n: usize, before: RowState) -> Result<(), Error> {
        let row = self
            .plan
            .parts
            .get(k)
            .ok_or(malformed(self.plan.first))?
            .out_row;
        let ring = self.rings.get_mut(k).ok_or(malformed(self.plan.first))?;
        let (from, to) = (n * row, before.held() * row);
        if to > ring.len() || from > to {
            return Err(malformed(self.plan.first));
        }
        ring.copy_within(from..to, 0);
        Ok(())
    }

    /// Row `r` of op `k`: the unchanged kernel on a band whose operands are
    /// the rows their maps read (a whole broadcast operand as it is) and
    /// whose output is one row.
    // Never inlined: the schedule recurses through the stage's ops, and this
    // frame (operand records, the kernel context) must be on the stack once,
    // not once per level.
    #[inline(never)]
    fn row(&mut self, k: usize, r: usize, states: &[RowState]) -> Result<(), Error> {
        let Runner {
            kernels,
            img,
            plan,
            opdata,
            rings,
            acc,
            pieces,
            vars,
        } = self;
        let img: &Image<'_> = img;
        let first = plan.first;
        let bad = malformed(first + k);
        let index = first + k;
        let part = *plan.parts.get(k).ok_or(bad)?;
        let mut op = img.op(index)?;
        let opdata = opdata.get(k).copied().ok_or(bad)?;
        // Pulls read earlier ops' rings (the schedule checked `j < k`); the
        // input a later op's output is written over, that op's region.
        let (before, from_k) = rings.split_at_mut(k);
        let (own_ring, later) = from_k.split_first_mut().ok_or(bad)?;
        let over = plan
            .behind
            .filter(|&(reader, _)| usize::from(reader) == k)
            .map(|(_, x)| x);
        let own = *states.get(k).ok_or(bad)?;
        // Operands 0 and 1: (record, bytes) of the rows (or whole tensor) read.
        let mut operand: [Option<(TensorInfo, &[u8])>; MAX_PULLS] = [None; MAX_PULLS];
        let (mut read0, mut in_h0) = ((0, 0), 0);
        let pulls = plan.nodes.get(k).ok_or(bad)?.pulls;
        // A windowed op reading through a folded PAD reads the PAD's input;
        // a FULLY_CONNECTED through a folded RESHAPE, the map it flattens.
        let fold = match (part.kind, part.fold.map(usize::from)) {
            (opcode::BandRows::Window, Some(f)) => Some((f, Some(fold_at(img, first, f)?))),
            (opcode::BandRows::Reduce, Some(f)) => Some((f, None)),
            _ => None,
        };
        for (s, ((slot, src), pull)) in operand.iter_mut().zip(part.src).zip(pulls).enumerate() {
            let t = match (s, fold) {
                (0, Some((f, _))) => img.op(first + f)?.inputs[0],
                _ => op.inputs.get(s).copied().unwrap_or(rl::NO_TENSOR),
            };
            let map = match src {
                Src::Pull(_) => pull.map(|(_, m)| m),
                Src::Rows(t) => {
                    let out = img.tensor(usize::from(op.output))?;
                    let x = img.tensor(usize::from(t))?;
                    let f = fold.filter(|_| s == 0).and_then(|(_, f)| f);
                    Some(row_map(img, index, &op, part.kind, (&x, f), &out)?)
                }
                Src::Const | Src::Whole(_) => None,
            };
            let rows = map.map(|m| m.rows(r));
            *slot = match (src, rows) {
                (Src::Const, _) => None,
                (Src::Whole(t), _) => Some(whole(img, &pieces[..], t, bad)?),
                (Src::Pull(j), Some((lo, hi))) => {
                    let row = plan.parts.get(j).ok_or(bad)?.out_row;
                    let base = states.get(j).ok_or(bad)?.base;
                    let from = lo.checked_sub(base).ok_or(bad)? * row;
                    let ring: &[u8] = before.get(j).ok_or(bad)?;
                    let data = ring.get(from..from + (hi - lo) * row).ok_or(bad)?;
                    Some((band_record(img, t, hi - lo, row)?, data))
                }
                (Src::Rows(t), Some((lo, hi))) if over == Some(t) => {
                    let info = img.tensor(usize::from(t))?;
                    let row = row_bytes(&info);
                    let writer = plan.n.checked_sub(k + 2).ok_or(bad)?;
                    let region: &[u8] = later.get(writer).ok_or(bad)?;
                    let data = region.get(lo * row..hi * row).ok_or(bad)?;
                    Some((band_record(img, t, hi - lo, row)?, data))
                }
                (Src::Rows(t), Some((lo, hi))) => {
                    let (info, all) = whole(img, &pieces[..], t, bad)?;
                    let row = row_bytes(&info);
                    let data = all.get(lo * row..hi * row).ok_or(bad)?;
                    Some((band_record(img, t, hi - lo, row)?, data))
                }
                _ => return Err(bad),
            };
            if s == 0 {
                read0 = rows.unwrap_or((0, 0));
                in_h0 = map.map_or(0, |m| m.in_h());
            }
        }
        let (lo, hi) = read0;
        let place = BandAt {
            out_row: r,
            out_h: plan.nodes.get(k).ok_or(bad)?.out_h,
            in_row: lo,
            in_h: in_h0,
        };
        if let Some((_, Some(f))) = fold {
            // The PAD's padding becomes the window's.
            let w: WindowParams = op.params();
            op.param_words = WindowParams {
                pad_h: w.pad_h.saturating_add(f.top),
                pad_w: w.pad_w.saturating_add(f.left),
                ..w
            }
            .to_words();
        }
        match part.kind {
            opcode::BandRows::Window => window_pad_at(&mut op, lo, r),
            opcode::BandRows::Pad => {
                // A row of the input, or one row of padding above it.
                let mut p: PadParams = op.params();
                p.before[1] = i32::from(hi == lo);
                p.after[1] = 0;
                op.param_words = p.to_words();
            }
            opcode::BandRows::Rows
            | opcode::BandRows::Channels
            | opcode::BandRows::Resize
            | opcode::BandRows::Gather
            | opcode::BandRows::Flatten
            | opcode::BandRows::Reduce => {}
        }
        let [Some((input, data)), second] = operand else {
            return Err(bad);
        };
        if R && part.kind == opcode::BandRows::Reduce {
            let whole = img.tensor(usize::from(op.inputs[0]))?;
            let out = img.tensor(usize::from(op.output))?;
            let rows = (r, in_h0);
            let dst: &mut [u8] = own_ring;
            return kernels::reduce_row(
                img,
                &op,
                (&whole, &input, data),
                rows,
                &out,
                acc,
                dst,
                opdata,
            );
        }
        let at = own.held() * part.out_row;
        let dst = own_ring.get_mut(at..at + part.out_row).ok_or(bad)?;
        let band = Band {
            input,
            data,
            output: band_record(img, op.output, 1, part.out_row)?,
            second,
            at: place,
        };
        eval_band(kernels, img, op, index, band, dst, opdata, vars)
    }
}

/// The kernel of `op` on `band` into `dst` (one output row). Inlined into
/// its two callers: its kernel context then shares their frame's slots (a
/// stage's row runner and this frame were 1,316 B and 1,396 B apart, 2,292 B
/// together; the Keras CNN's banded main stack fell from 10,552 B to
/// 10,072 B under QEMU).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn eval_band<'x>(
    kernels: &Resolver,
    img: &'x Image<'_>,
    op: OpInfo,
    index: usize,
    band: Band<'x>,
    dst: &'x mut [u8],
    opdata: &'x [u8],
    vars: &'x mut [u8],
) -> Result<(), Error> {
    let mut ctx = Ctx {
        img,
        op,
        index: index as u16,
        pieces: &[],
        out: dst,
        more: &mut [],
        scratch: &mut [],
        opdata,
        vars,
        band: Some(band),
        in_place: None,
    };
    kernels::eval(kernels, &mut ctx)
}

/// One output row of a windowed op run on its own.
#[derive(Clone, Copy)]
pub(crate) struct RowCall {
    /// The op.
    pub index: usize,
    pub rows: RowWindow,
    /// The output row.
    pub row: usize,
    /// The input rows `[lo, hi)` its window reads.
    pub read: (usize, usize),
}

/// Output row `call.row` of op `op` into `dst` (one row) from `data` (input
/// rows `call.read`): the unchanged kernel on a band whose input record has
/// those rows, whose output record has one row and whose top padding is what
/// is left of the op's at that row. The op reads only constants besides
/// input 0 (checked at construction), so the band needs no other arena bytes.
pub(crate) fn eval_one_row(
    kernels: &Resolver,
    img: &Image<'_>,
    mut op: OpInfo,
    call: RowCall,
    (data, dst): (&[u8], &mut [u8]),
    opdata: &[u8],
    vars: &mut [u8],
) -> Result<(), Error> {
    let RowCall {
        index,
        rows,
        row: r,
        read: (lo, hi),
    } = call;
    let band = Band {
        input: band_record(img, op.inputs[0], hi - lo, rows.in_row)?,
        data,
        output: band_record(img, op.output, 1, rows.out_row)?,
        second: None,
        at: BandAt {
            out_row: r,
            out_h: rows.out_h,
            in_row: lo,
            in_h: rows.in_h,
        },
    };
    window_pad_at(&mut op, lo, r);
    eval_band(kernels, img, op, index, band, dst, opdata, vars)
}

/// Sets windowed op `op`'s top padding to what is left of it at output row
/// `r` whose band starts at input row `lo`: the window's first row
/// `r·stride − pad` lies `pad'` rows above the band's first row.
fn window_pad_at(op: &mut OpInfo, lo: usize, r: usize) {
    let w: WindowParams = op.params();
    let pad = (lo as i64 - r as i64 * i64::from(w.stride_h) + i64::from(w.pad_h)) as i32;
    op.param_words = WindowParams { pad_h: pad, ..w }.to_words();
}
