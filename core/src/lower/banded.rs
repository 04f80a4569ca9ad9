//! Patch-based execution in row bands: which groups of row-computable ops
//! the runtime executes row by row, and the head plan that follows.
//!
//! A *stage* is a run of consecutive ops that each compute an output row
//! from a few rows of their inputs (`microarena_image::opcode::band_rows`:
//! CONV_2D, DEPTHWISE_CONV_2D, the pools, PAD / PADV2, element-wise unary
//! ops and casts, ADD and MUL, CONCATENATION along channels, RESIZE_* by
//! TFLM's source rows, and a TRANSPOSE of a tensor written before the stage,
//! read whole: a PyTorch export's NCHW input; an int8/int16 PAD read by one
//! CONV_2D or DEPTHWISE_CONV_2D alone folds into it). Its ops form
//! a small DAG: a tensor the stage
//! writes and only the stage reads is *streamed* — it lives in a ring of
//! whole rows (its producer's scratch) that holds the rows between its
//! slowest and fastest consumer, as the pull schedule of
//! `microarena_image::stage` gives, the one the runtime runs — and every
//! other tensor it writes (read after it, or a graph output) is written
//! whole. No row is computed twice (0 extra MACs), and the streamed
//! intermediates never exist whole. For the plan, the stage is one step:
//! its inputs and whole outputs are live together with the rings.
//!
//! Stages are chosen by search, one at a time: every run of at most
//! `MAX_STAGE_OPS` ops that forms a stage and covers the current plan's
//! busiest step is scored by its peak of live bytes (a lower bound of any
//! plan), then by its live bytes over time; the best few are planned with
//! the same greedy planner as the plain image and the smallest head wins;
//! then the next busiest step, while a stage saves more than the stack it
//! costs (at most `MAX_STAGES`). Each op's window comes from its lowered
//! `WindowParams`, the words the runtime's stage reads.

use alloc::vec::Vec;

use microarena_image::geometry::RowWindow;
use microarena_image::params::{
    ConcatParams, OpParams, PadParams, ResizeParams, TransposeParams, WindowParams,
};
use microarena_image::resize::ResizeRows;
use microarena_image::stage::{
    Behind, MAX_PULLS, OpShape, PadFold, RowMap, StageNode, ring_rows, writes_behind_reads,
};
use microarena_image::{self as rl, opcode};

use super::params::Words;
use crate::plan::{PlanBuffer, PlannerKind};
use crate::read::model::{Model, Operator, Tensor};
use crate::tflm::lifetime::{AllocationInfo, BufferKind};

/// Ops `first..=last` of the main subgraph run as one banded stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BandedStage {
    /// First op of the stage.
    pub first: usize,
    /// Last op (writes the stage's output tensor whole; other ops of the
    /// stage may write whole outputs too, read after the stage).
    pub last: usize,
    /// Bytes of the streamed tensors' rings together (each rounded to 16 when planned).
    pub ring_bytes: u64,
    /// Rows of the last op's output: the bands (one output row each, full
    /// width: the smallest rings, so the smallest arena).
    pub bands: u64,
    /// Rows of the tensor the stage reads first along its ops' input 0.
    pub input_rows: u64,
    /// The rows `[lo, hi)` of that tensor that the middle band reads
    /// through every op's input 0: one band's receptive field.
    pub field: (u64, u64),
    /// `(x, y)`: the stage writes its output `y` over the bytes of tensor
    /// `x`, which it alone reads, by rows, and which dies in it — each row
    /// of `y` lands behind the rows of `x` still to be read
    /// (`microarena_image::stage::writes_behind_reads`), so the two share
    /// one buffer (MCUNetV2's in-place stage output).
    pub behind: Option<(usize, usize)>,
}

/// The band whose receptive field a stage reports ([`BandedStage::field`]):
/// the middle one, whose field is not clipped by the tensor's edges when the
/// tensor is tall enough, so it shows the whole halo.
pub fn field_band(bands: u64) -> u64 {
    bands / 2
}

/// How many scored candidates are planned exactly.
const PLANNED_CANDIDATES: usize = 8;

/// The least head a windowed alias set must save (`super::arena`): a
/// banded stage's former floor, kept for the in-place rule.
pub(super) const MIN_SAVING_BYTES: u64 = 4096;

/// A stage must save at least this much head, plus [`STACK_PER_OP`] per op:
/// running it takes stack the plain run does not (the stage runner, its
/// plan and schedule, the row recursion). On a Cortex-M4 under QEMU,
/// measured with the firmware's painted stack (main stack, smallest mode
/// minus plain): 3,064 B for micro_speech_quantized's 2-op stage, 3,288 B
/// for person_detect's three 4-op stages, 4,296 B for the Keras VWW
/// builder model's 11-op stage; a stage that saves less arena than that
/// costs RAM overall. (Stages run one after another, so a model pays for
/// its largest stage only: charging each is conservative.)
const STAGE_STACK_BYTES: u64 = 3072;
/// See [`STAGE_STACK_BYTES`].
const STACK_PER_OP: u64 = 160;

/// Most stages one model runs: each search round plans a few candidates.
const MAX_STAGES: usize = 8;

/// Planned stages: the planner's buffers (the model's, minus the stages'
/// intermediates, plus one ring per streamed tensor) and the plan.
#[derive(Clone)]
pub(super) struct BandedPlan {
    /// In op order, disjoint.
    pub(super) stages: Vec<BandedStage>,
    pub(super) planned: Vec<AllocationInfo>,
    pub(super) offsets: Vec<i64>,
    pub(super) head_bytes: u64,
    /// Outputs over inputs planned merged ([`stage_buffers`]).
    pub(super) merge: bool,
}

fn tensor<'m, 'a>(model: &'m Model<'a>, t: Option<usize>) -> Option<&'m Tensor<'a>> {
    model.main().tensors.get(t?)
}

/// Bytes of one row (H slice) of a batch-1 NHWC tensor.
fn row_bytes(t: &Tensor<'_>) -> Option<u64> {
    let elem = u64::from(rl::dtype_size(t.dtype.code())?);
    match t.shape.as_slice() {
        [1, _, w, c] => Some(elem * (*w).max(0) as u64 * (*c).max(0) as u64),
        _ => None,
    }
}

/// Op `i`'s window as lowered into its image parameters: the words the
/// runtime's stage reads, so core's rings and fields and the device's rows
/// come from one derivation (`super::params`).
fn window(params: &[Words], i: usize) -> Option<WindowParams> {
    params.get(i).map(WindowParams::from_words)
}

/// `true` when the runtime can run op `i` in bands: a windowed op on
/// batch-1 NHWC tensors whose other inputs are constants.
fn bandable(model: &Model<'_>, params: &[Words], i: usize) -> bool {
    let sg = model.main();
    let Some(op) = sg.operators.get(i) else {
        return false;
    };
    let code = super::image_opcode(op);
    let rows = |t: Option<usize>| tensor(model, t).and_then(row_bytes).is_some();
    code.is_some_and(opcode::runs_in_bands)
        && op.outputs.len() == 1
        && rows(op.input(0))
        && rows(op.output(0))
        && window(params, i).is_some()
        && (1..op.inputs.len()).all(|k| match op.input(k) {
            None => true,
            Some(t) => sg.tensors.get(t).is_some_and(|t| t.has_data),
        })
}

/// Op `i`'s row geometry as the runtime derives it (`RowWindow` from its
/// tensors and lowered window), when it can run by rows ([`bandable`]).
pub(super) fn row_window(model: &Model<'_>, params: &[Words], i: usize) -> Option<RowWindow> {
    if !bandable(model, params, i) {
        return None;
    }
    let op = model.main().operators.get(i)?;
    let (x, y) = (tensor(model, op.input(0))?, tensor(model, op.output(0))?);
    let w = window(params, i)?;
    let h = |t: &Tensor<'_>| t.shape.get(1).map_or(0, |&h| h.max(0) as usize);
    Some(RowWindow {
        in_row: usize::try_from(row_bytes(x)?).ok()?,
        out_row: usize::try_from(row_bytes(y)?).ok()?,
        in_h: h(x),
        out_h: h(y),
        stride: w.stride_h,
        pad: w.pad_h,
        filter: w.filter_h,
        dilation: w.dilation_h,
    })
}

/// A run of ops as a stage: the schedule's nodes, and per op whether its
/// output is streamed, its row bytes and its input 0's row map and producer
/// (for the receptive field).
pub(super) struct Described {
    pub(super) nodes: Vec<StageNode>,
    pub(super) streamed: Vec<bool>,
    pub(super) out_rows: Vec<u64>,
    map0: Vec<RowMap>,
    pull0: Vec<Option<usize>>,
    /// The arena tensor each op reads by rows through input 0 (through a
    /// folded PAD: the PAD's input), when not pulled from the stage.
    rows0: Vec<Option<usize>>,
    /// The last op is a reducer (`stage::reduces`): these bytes of
    /// accumulator besides its own scratch (`stage::accumulator_bytes`).
    reducer: Option<u64>,
}

fn height(t: &Tensor<'_>) -> usize {
    t.shape.get(1).map_or(0, |&h| h.max(0) as usize)
}

/// `true` for a tensor with bytes in the head (not a constant or state).
fn in_arena(t: &Tensor<'_>) -> bool {
    !t.has_data && !t.is_variable
}

/// `true` when element-wise operand `x` reads the same elements for every
/// row of a batch-1 NHWC output: it has no H axis or its H is 1.
fn broadcast_along_h(x: &Tensor<'_>) -> bool {
    matches!(
        x.shape.as_slice(),
        [] | [_] | [_, _] | [1, _, _] | [1, 1, _, _]
    )
}

/// The first value of `t`'s quantization (scale, zero point), as the
/// image's tensor record carries it.
fn scalar_quant(t: &Tensor<'_>) -> (f32, i32) {
    t.quantization.as_ref().map_or((0.0, 0), |q| {
        (
            q.scales.first().copied().unwrap_or(0.0),
            q.zero_points.first().copied().unwrap_or(0) as i32,
        )
    })
}

/// How a folded op's reader reads through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// A PAD's padding moves into the window's (`stage::pad_fold`).
    Pad(PadFold),
    /// A RESHAPE flattening a map for a FULLY_CONNECTED reducer
    /// (`stage::flatten_folds`).
    Flatten,
}

/// Op `i`, a PAD or RESHAPE of a stage ending at op `last`, folded into the
/// one op that reads it (`stage::pad_fold`, `stage::flatten_folds`), the
/// way the runtime decides it (`banded::fold_target`): (that op, the fold).
/// Its output must be read by that op alone, once, as input 0, after it
/// and within the stage.
fn fold_target(
    model: &Model<'_>,
    params: &[Words],
    last: usize,
    i: usize,
) -> Option<(usize, Fold)> {
    let sg = model.main();
    let op = sg.operators.get(i)?;
    let code = super::image_opcode(op)?;
    if !matches!(code, opcode::PAD | opcode::RESHAPE) {
        return None;
    }
    let (xt, yt) = (op.input(0)?, op.output(0)?);
    let (x, y) = (sg.tensors.get(xt)?, sg.tensors.get(yt)?);
    if sg.outputs.iter().any(|&o| o >= 0 && o as usize == yt) {
        return None;
    }
    let mut reader = None;
    for (j, o) in sg.operators.iter().enumerate() {
        let reads = o
            .inputs
            .iter()
            .filter(|&&t| t >= 0 && t as usize == yt)
            .count();
        if reads == 0 {
            continue;
        }
        if reader.is_some() || reads > 1 || o.input(0) != Some(yt) || !(i < j && j <= last) {
            return None;
        }
        reader = Some((j, o, super::image_opcode(o)?));
    }
    let (j, o, reader) = reader?;
    if code == opcode::RESHAPE {
        let out = sg.tensors.get(o.output(0)?)?;
        let shape = OpShape {
            input: dims4(x),
            ..op_shape(model, o, out)
        };
        let folds = shape.input[0] == 1 && rl::stage::flatten_folds(reader, params.get(j)?, &shape);
        return folds.then_some((j, Fold::Flatten));
    }
    let (qx, qy) = (scalar_quant(x), scalar_quant(y));
    let same = x.dtype == y.dtype && qx.0 == qy.0 && qx.1 == qy.1;
    let p = PadParams::from_words(params.get(i)?);
    rl::stage::pad_fold(opcode::PAD, &p, y.dtype.code(), same, reader).map(|f| (j, Fold::Pad(f)))
}

/// `t`'s dims when it is 4-D (zeros otherwise).
fn dims4(t: &Tensor<'_>) -> [usize; 4] {
    match t.shape.as_slice() {
        &[n, h, w, c] => [n, h, w, c].map(|d| d.max(0) as usize),
        _ => [0; 4],
    }
}

/// Op `op`'s operands as `stage::stage_kind` reads them (the runtime reads
/// the same from the image: `Image::op_shape`).
fn op_shape(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> OpShape {
    let dims = |t: &Tensor<'_>| {
        t.shape
            .iter()
            .map(|&d| d.max(0) as usize)
            .collect::<Vec<_>>()
    };
    let filter = match tensor(model, op.input(1))
        .filter(|t| t.has_data)
        .map(dims)
        .as_deref()
    {
        Some(&[depth, accum]) => [depth, accum],
        _ => [0; 2],
    };
    OpShape {
        input: tensor(model, op.input(0)).map_or([0; 4], dims4),
        filter,
        out_elements: dims(out).iter().product(),
        out_dtype: out.dtype.code(),
    }
}

/// Ops `first..=last` as a stage, the way the runtime checks one
/// (`microarena_runtime`'s `banded::StagePlan`): every op one
/// `opcode::band_rows` names with one batch-1 NHWC output; operands 0 and
/// 1 pulled from earlier ops of the stage or read from the arena (rows of a
/// tensor of the output's rows, or, for an element-wise op, a tensor
/// broadcast along H), the others constants; at least one streamed tensor
/// and one whole output. `None` when they do not form one.
pub(super) fn describe(
    model: &Model<'_>,
    params: &[Words],
    first: usize,
    last: usize,
) -> Option<Described> {
    let sg = model.main();
    let n = (last + 1).checked_sub(first)?;
    if !(2..=rl::MAX_STAGE_OPS).contains(&n) {
        return None;
    }
    let mut d = Described {
        nodes: Vec::with_capacity(n),
        streamed: Vec::with_capacity(n),
        out_rows: Vec::with_capacity(n),
        map0: Vec::with_capacity(n),
        pull0: Vec::with_capacity(n),
        rows0: Vec::with_capacity(n),
        reducer: None,
    };
    let graph_output = |t: usize| sg.outputs.iter().any(|&o| o >= 0 && o as usize == t);
    let writers = sg.writer_counts();
    let folds: Vec<Option<(usize, Fold)>> = (first..=last)
        .map(|i| fold_target(model, params, last, i))
        .collect();
    for i in first..=last {
        let op = sg.operators.get(i)?;
        let code = super::image_opcode(op)?;
        let o = op.output(0).filter(|_| op.outputs.len() == 1)?;
        let out = sg.tensors.get(o).filter(|t| in_arena(t))?;
        // Rows are written as they are read: a tensor written by a second
        // op, or read by its own writer (hostile graphs), is never a stage's.
        if writers.get(o) != Some(&1) || op.inputs.iter().any(|&t| usize::try_from(t) == Ok(o)) {
            return None;
        }
        if folds.get(i - first).copied().flatten().is_some() {
            // A folded PAD or RESHAPE makes no rows: its reader reads its input.
            d.nodes.push(StageNode {
                out_h: height(out),
                whole: false,
                pulls: [None; MAX_PULLS],
            });
            d.streamed.push(true);
            d.out_rows.push(0);
            d.map0.push(RowMap::Shift {
                top: 0,
                in_h: height(out),
            });
            d.pull0.push(None);
            d.rows0.push(None);
            continue;
        }
        // An op reading through a folded PAD or RESHAPE: (its input, the fold).
        let via = folds
            .iter()
            .flatten()
            .find(|(c, _)| *c == i)
            .and_then(|&(_, f)| {
                let folded = (first..i).find(|&j| {
                    sg.operators
                        .get(j)
                        .is_some_and(|p| p.output(0).is_some() && p.output(0) == op.input(0))
                })?;
                Some((sg.operators.get(folded)?.input(0)?, f))
            });
        let mut shape = op_shape(model, op, out);
        if let Some(x) = via.and_then(|(x, _)| sg.tensors.get(x)) {
            shape.input = dims4(x);
        }
        let in_dims = shape.input;
        let kind = rl::stage::stage_kind(code, params.get(i)?, &shape)?;
        let reduce = kind == opcode::BandRows::Reduce;
        // A reducer ends its stage and writes its output whole, no rows.
        if reduce {
            if i != last {
                return None;
            }
            d.reducer = Some(rl::stage::accumulator_bytes(code, shape.out_elements) as u64);
        }
        // A RESHAPE runs in a stage only folded.
        if kind == opcode::BandRows::Flatten {
            return None;
        }
        let out_row = if reduce { 0 } else { row_bytes(out)? };
        let mut pulls = [None; MAX_PULLS];
        let (mut map0, mut pull0, mut rows0) = (None, None, None);
        for (s, &t) in op.inputs.iter().enumerate() {
            let Ok(t) = usize::try_from(t) else { continue };
            let (t, fold) = match via {
                Some((x, Fold::Pad(f))) if s == 0 => (x, Some(f)),
                Some((x, Fold::Flatten)) if s == 0 => (x, None),
                _ => (t, None),
            };
            let x = sg.tensors.get(t)?;
            if x.has_data {
                if s == 0 {
                    return None;
                }
                continue;
            }
            let elementwise = matches!(kind, opcode::BandRows::Rows | opcode::BandRows::Channels);
            if x.is_variable || s >= MAX_PULLS || (s == 1 && !elementwise) {
                return None;
            }
            if kind == opcode::BandRows::Channels
                && ConcatParams::from_words(params.get(i)?).axis != 3
            {
                return None;
            }
            let producer = (first..i).find(|&j| {
                sg.operators.get(j).is_some_and(|p| {
                    p.outputs
                        .first()
                        .is_some_and(|&y| y >= 0 && y as usize == t)
                })
            });
            // Element-wise operands and concatenated ones share the
            // output's rows (their W or C may differ: broadcast, or
            // concatenated channels).
            let rows_ok = row_bytes(x).is_some() && (!elementwise || height(x) == height(out));
            let map = match kind {
                opcode::BandRows::Window => {
                    let w = row_window(model, params, i)?;
                    RowMap::window(match fold {
                        Some(f) => f.window(w, height(x), usize::try_from(row_bytes(x)?).ok()?),
                        None => w,
                    })?
                }
                opcode::BandRows::Pad => {
                    let p = PadParams::from_words(params.get(i)?);
                    let (top, bottom) = (p.before[1], p.after[1]);
                    let fits = p.rank == 4
                        && p.before[0] == 0
                        && p.after[0] == 0
                        && top >= 0
                        && bottom >= 0
                        && height(x) + top as usize + bottom as usize == height(out);
                    if !fits {
                        return None;
                    }
                    RowMap::Shift {
                        top: top as usize,
                        in_h: height(x),
                    }
                }
                opcode::BandRows::Rows | opcode::BandRows::Channels | opcode::BandRows::Reduce => {
                    RowMap::Shift {
                        top: 0,
                        in_h: height(x),
                    }
                }
                opcode::BandRows::Flatten => return None,
                opcode::BandRows::Resize => RowMap::Resize(ResizeRows::of(
                    code,
                    x.dtype.code(),
                    ResizeParams::from_words(params.get(i)?),
                    height(x),
                    height(out),
                )?),
                // Row `r` of the input axis that becomes the output's rows
                // (the field); the input is read whole, never pulled.
                opcode::BandRows::Gather => {
                    let perm = TransposeParams::from_words(params.get(i)?);
                    let axis = usize::try_from(perm.perm[1]).ok()?;
                    RowMap::Shift {
                        top: 0,
                        in_h: x.shape.get(axis).map_or(0, |&h| h.max(0) as usize),
                    }
                }
            };
            let gather = kind == opcode::BandRows::Gather;
            match producer {
                None if gather => {}
                Some(_) if gather => return None,
                Some(j) if rows_ok => {
                    if let Some(slot) = pulls.get_mut(s) {
                        *slot = Some((j - first, map));
                    }
                }
                None if rows_ok => {}
                None if kind == opcode::BandRows::Rows && broadcast_along_h(x) => {}
                _ => return None,
            }
            if s == 0 {
                (map0, pull0) = (Some(map), producer.map(|j| j - first));
                rows0 = (producer.is_none() && !gather && rows_ok).then_some(t);
            }
        }
        let readers: Vec<usize> = sg
            .operators
            .iter()
            .enumerate()
            .filter(|(_, r)| r.inputs.iter().any(|&x| x >= 0 && x as usize == o))
            .map(|(k, _)| k)
            .collect();
        let streamed = !readers.is_empty()
            && readers.iter().all(|&r| first < r && r <= last)
            && !graph_output(o);
        d.nodes.push(StageNode {
            // A reducer's steps: its input's rows.
            out_h: if reduce { in_dims[1] } else { height(out) },
            whole: !streamed,
            pulls,
        });
        d.streamed.push(streamed);
        d.out_rows.push(out_row);
        d.map0.push(map0?);
        d.pull0.push(pull0);
        d.rows0.push(rows0);
    }
    (d.streamed.iter().any(|&s| s) && d.streamed.iter().any(|&s| !s)).then_some(d)
}

/// The stage's output `y` written over an arena tensor `x` it reads
/// ([`BandedStage::behind`]): `x` read by one op of the model alone, once,
/// by rows through input 0 (or through a PAD folded into it), not a graph
/// output (a graph input is consumed: Invoke overwrites it, as TFLM's
/// planner reuses its bytes), at least `y`'s bytes, and the schedule's
/// writes of `y` stay behind its reads of `x`. The runtime checks the same
/// rule from the image (`banded::StagePlan::check_behind`).
fn behind(model: &Model<'_>, first: usize, last: usize, d: &Described) -> Option<(usize, usize)> {
    let sg = model.main();
    if d.reducer.is_some() {
        return None;
    }
    let writer = d.nodes.len().checked_sub(1)?;
    let y = sg.operators.get(last)?.output(0)?;
    let y_bytes = sg.tensors.get(y)?.bytes?;
    let reads = |x: usize| {
        let mut by = sg.operators.iter().enumerate().flat_map(|(i, o)| {
            o.inputs
                .iter()
                .filter(move |&&t| t >= 0 && t as usize == x)
                .map(move |_| i)
        });
        match (by.next(), by.next()) {
            (Some(i), None) => Some(i),
            _ => None,
        }
    };
    let graph_output = |t: usize| sg.outputs.iter().any(|&o| o >= 0 && o as usize == t);
    d.rows0.iter().enumerate().find_map(|(k, &x)| {
        let x = x?;
        let t = sg.tensors.get(x)?;
        let only = reads(x).is_some_and(|i| first <= i && i <= last);
        if k == writer || x == y || !only || graph_output(x) || !in_arena(t) {
            return None;
        }
        if t.bytes? < y_bytes {
            return None;
        }
        let b = Behind {
            reader: k,
            map: *d.map0.get(k)?,
            x_row: usize::try_from(row_bytes(t)?).ok()?,
            writer,
            out_row: usize::try_from(*d.out_rows.get(writer)?).ok()?,
        };
        writes_behind_reads(&d.nodes, b).ok().map(|()| (x, y))
    })
}

impl Described {
    /// Bytes of each op's ring (0 for a whole output), from the pull
    /// schedule the runtime runs.
    pub(super) fn ring_bytes(&self) -> Option<Vec<u64>> {
        let rows = ring_rows(&self.nodes).ok()?;
        Some(
            self.streamed
                .iter()
                .zip(&self.out_rows)
                .zip(rows.iter())
                .map(|((&s, &row), &r)| if s { row.saturating_mul(r as u64) } else { 0 })
                .collect(),
        )
    }

    /// Rows of the stage's output, the input rows the middle one reads
    /// through each op's input 0 and that input's height.
    fn field(&self) -> (u64, (u64, u64), u64) {
        let bands = self.nodes.last().map_or(0, |n| n.out_h);
        let middle = field_band(bands as u64) as i64;
        let (mut lo, mut hi) = (middle, middle + 1);
        let mut k = self.nodes.len().saturating_sub(1);
        let mut in_h = 0;
        while let Some(map) = self.map0.get(k) {
            in_h = map.in_h();
            (lo, hi) = match *map {
                RowMap::Window(w) => w.span(lo, hi),
                RowMap::Shift { top, in_h } => {
                    let clip = |r: i64| (r - top as i64).clamp(0, in_h as i64);
                    (clip(lo), clip(hi))
                }
                RowMap::Resize(m) if hi > lo => (
                    m.rows(lo.max(0) as usize).0 as i64,
                    m.rows((hi - 1).max(0) as usize).1 as i64,
                ),
                RowMap::Resize(_) => (0, 0),
            };
            match self.pull0.get(k).copied().flatten() {
                Some(j) => k = j,
                None => break,
            }
        }
        (bands as u64, (lo as u64, hi as u64), in_h as u64)
    }
}

/// Tensors stage `st` streams (its producers' rings hold them).
pub(super) fn streamed_tensors(
    model: &Model<'_>,
    params: &[Words],
    st: &BandedStage,
) -> Vec<usize> {
    let Some(d) = describe(model, params, st.first, st.last) else {
        return Vec::new();
    };
    (st.first..=st.last)
        .zip(&d.streamed)
        .filter(|(_, s)| **s)
        .filter_map(|(i, _)| model.main().operators.get(i).and_then(|o| o.output(0)))
        .collect()
}

/// Candidate stages: runs of ops (two or more, at most `MAX_STAGE_OPS`)
/// that form a stage ([`describe`]), each with the bytes live at its own
/// step when it is the only stage over `planned`. A step's live bytes do
/// not depend on the other stages of a disjoint set (their streamed
/// tensors and rings live inside them), so these are also the step's bytes
/// beside any other stages.
fn candidates(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    allow_behind: bool,
) -> Vec<(BandedStage, u64)> {
    let sg = model.main();
    let n = sg.operators.len();
    let banded = |i: usize| {
        sg.operators
            .get(i)
            .and_then(super::image_opcode)
            .and_then(opcode::band_rows)
            .is_some()
    };
    let mut out = Vec::new();
    for first in 0..n {
        if !banded(first) {
            continue;
        }
        for last in first + 1..n.min(first + rl::MAX_STAGE_OPS) {
            if !banded(last) {
                break;
            }
            let Some(d) = describe(model, params, first, last) else {
                continue;
            };
            let Some(rings) = d.ring_bytes() else {
                continue;
            };
            let (bands, field, input_rows) = d.field();
            // The step: the buffers live at any of its scopes but the
            // streamed tensors, and the rings (as `stage_buffers` plans them).
            let streamed: Vec<usize> = (first..=last)
                .zip(&d.streamed)
                .filter(|(_, s)| **s)
                .filter_map(|(i, _)| sg.operators.get(i).and_then(|o| o.output(0)))
                .collect();
            let (s0, s1) = (scope_of(op_scope, first), scope_of(op_scope, last));
            // Over its input: `x` planned alone, dying in the stage, and `y`
            // born at it (not merged into an in-place group reaching out).
            let entry = |t: usize| tensor_entry(planned, t).and_then(|i| planned.get(i));
            let behind = behind(model, first, last, &d)
                .filter(|_| allow_behind)
                .filter(|&(x, y)| {
                    let x_dies = entry(x).is_some_and(|a| a.first < s0 && a.last <= s1);
                    x_dies && entry(y).is_some_and(|a| a.first == s1)
                });
            let shared = behind
                .and_then(|(_, y)| entry(y))
                .map_or(0, |a| align16(a.bytes));
            let step: u64 = planned
                .iter()
                .filter(|a| a.first <= s1 && s0 <= a.last)
                .filter(|a| {
                    !matches!(a.kind, BufferKind::Tensor { tensor, .. } if streamed.contains(&tensor))
                })
                .map(|a| align16(a.bytes))
                .chain(
                    rings
                        .iter()
                        .zip(&d.streamed)
                        .filter(|(_, s)| **s)
                        .map(|(&r, _)| align16(r)),
                )
                .chain(d.reducer.filter(|&a| a > 0).map(align16))
                .sum::<u64>()
                .saturating_sub(shared);
            let stage = BandedStage {
                first,
                last,
                ring_bytes: rings.iter().sum(),
                bands,
                input_rows,
                field,
                behind,
            };
            out.push((stage, step));
        }
    }
    out
}

/// The planner's entry of main-subgraph tensor `t` in `infos`.
fn tensor_entry(infos: &[AllocationInfo], t: usize) -> Option<usize> {
    infos
        .iter()
        .position(|a| matches!(a.kind, BufferKind::Tensor { subgraph: 0, tensor } if tensor == t))
}

/// The planner's buffers for a set of stages ([`stage_buffers`]).
pub(super) struct StageBuffers {
    pub(super) infos: Vec<AllocationInfo>,
    /// `(x, y)` indices into `infos`: a stage's output `y` over its input
    /// `x` ([`BandedStage::behind`]), to be placed at one offset.
    ties: Vec<(usize, usize)>,
    /// The stages, `behind` dropped where the buffers do not allow it.
    pub(super) stages: Vec<BandedStage>,
}

/// The planner's buffers with each of `stages` (disjoint, in op order) run
/// as one step: scopes inside a stage collapse onto its first, the
/// streamed tensors go, one ring per streamed tensor comes (a scratch of
/// its producer, live for its stage). A stage's output written over its
/// input ([`BandedStage::behind`]) is live from the step after the stage:
/// during it, its rows are the input's bytes (tied to one offset, so the
/// input's buffer holds them). With `merge`, the input's buffer also holds
/// the output for the output's whole life (the output planned as 0 bytes):
/// a larger buffer, but one the greedy planner places as it would place one
/// tensor, where ties it can only honour afterwards can cost more.
fn stage_buffers(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    stages: &[BandedStage],
    merge: bool,
) -> StageBuffers {
    let sg = model.main();
    let map = |s: i32| collapse(op_scope, stages, s);
    let mut inner: Vec<usize> = Vec::new();
    let mut rings: Vec<(usize, u64, i32, &'static str)> = Vec::new();
    for st in stages {
        let Some(d) = describe(model, params, st.first, st.last) else {
            continue;
        };
        let at = map(scope_of(op_scope, st.first));
        let bytes = d.ring_bytes().unwrap_or_default();
        for (k, (&s, &b)) in d.streamed.iter().zip(&bytes).enumerate() {
            if s {
                let i = st.first + k;
                inner.extend(sg.operators.get(i).and_then(|o| o.output(0)));
                rings.push((i, b, at, "banded stage ring"));
            }
        }
        if let Some(acc) = d.reducer.filter(|&a| a > 0) {
            rings.push((st.last, acc, at, "banded stage accumulator"));
        }
    }
    let mut infos: Vec<AllocationInfo> = planned
        .iter()
        .filter(|a| !matches!(a.kind, BufferKind::Tensor { tensor, .. } if inner.contains(&tensor)))
        .map(|a| AllocationInfo {
            first: map(a.first),
            last: map(a.last),
            ..*a
        })
        .collect();
    for (i, bytes, at, purpose) in rings {
        infos.push(AllocationInfo {
            kind: BufferKind::Scratch {
                subgraph: 0,
                op_index: i,
                request: usize::MAX,
                purpose,
            },
            bytes,
            first: at,
            last: at,
            offline_offset: None,
            needs_allocating: true,
        });
    }
    let mut stages = stages.to_vec();
    let mut ties = Vec::new();
    // Merged: the buffer that holds each output written over an input (a
    // later stage over that output extends the same buffer).
    let mut holder: Vec<(usize, usize)> = Vec::new();
    for st in &mut stages {
        let Some((x, y)) = st.behind else { continue };
        let at_stage = map(scope_of(op_scope, st.first));
        let at = |t: usize| tensor_entry(&infos, t);
        let fits = |ix: usize, iy: usize| {
            let (a, b) = (infos.get(ix), infos.get(iy));
            a.is_some_and(|a| a.last == at_stage)
                && b.is_some_and(|b| b.first == at_stage && b.last > at_stage)
        };
        let held = holder.iter().find(|(t, _)| *t == x).map(|&(_, i)| i);
        match (held.or(at(x)), at(y)) {
            (Some(ix), Some(iy)) if fits(ix, iy) => {
                let mut y_info = None;
                if let Some(b) = infos.get_mut(iy) {
                    b.first = at_stage + 1;
                    y_info = Some((b.last, b.bytes));
                    if merge {
                        b.bytes = 0;
                    }
                }
                if let (true, Some(a), Some((last, bytes))) = (merge, infos.get_mut(ix), y_info) {
                    a.last = last;
                    a.bytes = a.bytes.max(bytes);
                }
                ties.push((ix, iy));
                if merge {
                    holder.push((y, ix));
                }
            }
            _ => st.behind = None,
        }
    }
    StageBuffers {
        infos,
        ties,
        stages,
    }
}

impl StageBuffers {
    /// The greedy plan with every tie kept: the smaller of (a) each chain
    /// of ties planned as one buffer (its members' largest size, over
    /// their lifetimes together) and (b) the members then fixed at that
    /// offset, alone for their own lifetimes, the rest planned around them
    /// (the bytes an output smaller than its input leaves free after the
    /// stage go back to the planner), checked by `plan::validate`.
    fn plan(&self) -> Option<crate::plan::Plan> {
        let b = buffers(&self.infos);
        if self.ties.is_empty() {
            return PlannerKind::TflmGreedy.plan(&b).ok();
        }
        // Ties come in op order: an output over an earlier stage's output
        // joins that one's chain.
        let mut root: Vec<usize> = (0..b.len()).collect();
        for &(x, y) in &self.ties {
            let r = root.get(x).copied().unwrap_or(x);
            if let Some(slot) = root.get_mut(y) {
                *slot = r;
            }
        }
        let mut merged: Vec<PlanBuffer> = Vec::new();
        let mut slot_of = alloc::vec![usize::MAX; b.len()];
        for (i, x) in b.iter().enumerate() {
            let r = root.get(i).copied().unwrap_or(i);
            let k = match slot_of.get(r).copied() {
                Some(k) if k != usize::MAX => k,
                _ => {
                    merged.push(*x);
                    merged.len() - 1
                }
            };
            if let Some(s) = slot_of.get_mut(r) {
                *s = k;
            }
            if let Some(m) = merged.get_mut(k) {
                m.size = m.size.max(x.size);
                m.first = m.first.min(x.first);
                m.last = m.last.max(x.last);
            }
        }
        let one = PlannerKind::TflmGreedy.plan(&merged).ok()?;
        let group_at = |i: usize| {
            let r = root.get(i).copied().unwrap_or(i);
            slot_of
                .get(r)
                .and_then(|&k| one.offsets.get(k))
                .copied()
                .unwrap_or(0)
        };
        let mut members = alloc::vec![0usize; b.len()];
        for &r in &root {
            if let Some(m) = members.get_mut(r) {
                *m += 1;
            }
        }
        let tied = |i: usize| {
            let r = root.get(i).copied().unwrap_or(i);
            members.get(r).is_some_and(|&m| m > 1)
        };
        let first = crate::plan::Plan {
            offsets: (0..b.len()).map(group_at).collect(),
            head_bytes: one.head_bytes,
        };
        let fixed: Vec<PlanBuffer> = b
            .iter()
            .enumerate()
            .map(|(i, x)| PlanBuffer {
                fixed_offset: tied(i).then(|| group_at(i)),
                ..*x
            })
            .collect();
        let second = PlannerKind::TflmGreedy
            .plan(&fixed)
            .ok()
            .filter(|p| crate::plan::validate(&fixed, p).is_ok());
        match second {
            Some(p) if p.head_bytes < first.head_bytes => Some(p),
            _ => Some(first),
        }
    }
}

/// The scope op `i` runs at.
fn scope_of(op_scope: &[i32], i: usize) -> i32 {
    op_scope.get(i).copied().unwrap_or(0)
}

/// Scope `s` once each of `stages` (disjoint, in op order) is one step.
pub(super) fn collapse(op_scope: &[i32], stages: &[BandedStage], s: i32) -> i32 {
    let scope = |i: usize| scope_of(op_scope, i);
    let mut shift = 0;
    for st in stages {
        let (s0, s1) = (scope(st.first), scope(st.last));
        if s > s1 {
            shift += s1 - s0;
        } else if s > s0 {
            return s0 - shift;
        }
    }
    s - shift
}

fn align16(v: u64) -> u64 {
    v.saturating_add(15) & !15
}

/// The planner's input for `planned`: sizes rounded to 16, no fixed offsets.
pub(super) fn plan_buffers(planned: &[AllocationInfo]) -> Vec<PlanBuffer> {
    buffers(planned)
}

fn buffers(planned: &[AllocationInfo]) -> Vec<PlanBuffer> {
    planned
        .iter()
        .map(|a| PlanBuffer {
            size: align16(a.bytes),
            first: a.first,
            last: a.last,
            fixed_offset: None,
        })
        .collect()
}

/// The most bytes live at any one scope (no plan of `b` needs less), the
/// first scope where that happens, and the sum over scopes of the bytes
/// live (which, between two candidates with the same peak, leaves the later
/// rounds less to fight).
pub(super) fn live_peak(b: &[PlanBuffer]) -> (u64, i32, u64) {
    let mut events: Vec<(i32, i64)> = Vec::with_capacity(2 * b.len());
    for x in b {
        events.push((x.first, x.size as i64));
        events.push((x.last.saturating_add(1), -(x.size as i64)));
    }
    // Frees before allocations at the same scope.
    events.sort_unstable_by_key(|&(s, d)| (s, d));
    let (mut live, mut peak, mut at) = (0i64, 0i64, 0i32);
    let (mut area, mut prev) = (0i64, None);
    for (s, d) in events {
        if let Some(p) = prev {
            area = area.saturating_add(live.saturating_mul(i64::from(s - p)));
        }
        prev = Some(s);
        live += d;
        if live > peak {
            (peak, at) = (live, s);
        }
    }
    (peak.max(0) as u64, at, area.max(0) as u64)
}

/// Bytes of `b` live at scope `s`.
fn live_at(b: &[PlanBuffer], s: i32) -> u64 {
    b.iter()
        .filter(|x| x.first <= s && s <= x.last)
        .map(|x| x.size)
        .sum()
}

/// `stages` (disjoint, in op order) planned over `planned`: the same stages
/// with other buffers (the in-place lowering's alias groups), one greedy
/// plan, no search.
pub(super) fn replan(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    found: &BandedPlan,
    avoid: &[usize],
) -> Option<BandedPlan> {
    let stages = &found.stages;
    if stages.is_empty() || stages.iter().any(|s| covers(s, avoid)) {
        return None;
    }
    let b = stage_buffers(model, params, planned, op_scope, stages, found.merge);
    let plan = b.plan()?;
    Some(BandedPlan {
        stages: b.stages,
        planned: b.infos,
        offsets: plan.offsets,
        head_bytes: plan.head_bytes,
        merge: found.merge,
    })
}

/// `true` when stage `s` runs one of the ops `ops`.
fn covers(s: &BandedStage, ops: &[usize]) -> bool {
    ops.iter().any(|&i| s.first <= i && i <= s.last)
}

/// The banded plan for `model`: stages added one at a time, each over the
/// current plan's busiest step, while one saves enough; `None` when the
/// first does not beat `plain_head` (the plain image's head) by that much.
/// No stage runs an op of `avoid` (ops that run in place by rows).
///
/// A stage's output over its input ([`BandedStage::behind`]) pins the two
/// to one offset, which the greedy planner honours only afterwards, and the
/// search's bounds see the freed bytes the plan may not reach: when the
/// search (tied) used one, it runs again with the pair planned as one
/// buffer ([`stage_buffers`]'s `merge`) and without any, and the smallest
/// head wins (a tie: the later).
pub(super) fn best(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    plain_head: u64,
    avoid: &[usize],
) -> Option<BandedPlan> {
    let run = |over| search(model, params, planned, op_scope, plain_head, avoid, over);
    let tied = run(Over::Tied);
    if !tied
        .as_ref()
        .is_some_and(|b| b.stages.iter().any(|s| s.behind.is_some()))
    {
        return tied;
    }
    [run(Over::Merged), run(Over::No)]
        .into_iter()
        .flatten()
        .fold(tied, |best, o| match best {
            Some(b) if b.head_bytes < o.head_bytes => Some(b),
            _ => Some(o),
        })
}

/// Whether a search lets stages write their output over their input, and
/// how it plans them ([`stage_buffers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Over {
    No,
    Tied,
    Merged,
}

/// [`best`]'s beam search.
fn search(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    plain_head: u64,
    avoid: &[usize],
    over: Over,
) -> Option<BandedPlan> {
    let merge = over == Over::Merged;
    let mut found = candidates(model, params, planned, op_scope, over != Over::No);
    found.retain(|(c, _)| !covers(c, avoid));
    let (all, alone): (Vec<BandedStage>, Vec<u64>) = found.into_iter().unzip();
    let n_ops = model.main().operators.len();
    let start = BandedPlan {
        stages: Vec::new(),
        planned: planned.to_vec(),
        offsets: Vec::new(),
        head_bytes: plain_head,
        merge,
    };
    // A small beam: the first stage that lowers the busiest step most can
    // leave later rounds less to gain than a shorter one (a long stage's
    // rings add up), so the best few sets of stages go on each round.
    let mut beam = alloc::vec![start];
    let mut best: Option<BandedPlan> = None;
    for _ in 0..MAX_STAGES {
        let mut next: Vec<BandedPlan> = Vec::new();
        for state in &beam {
            for r in extend(model, params, planned, op_scope, &all, state) {
                if !next.iter().any(|n| n.stages == r.stages) {
                    next.push(r);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        next.sort_by_key(|p| (p.head_bytes, p.stages.len()));
        if let Some(top) = next.first()
            && best.as_ref().is_none_or(|b| top.head_bytes < b.head_bytes)
        {
            best = Some(top.clone());
        }
        // Half the beam by head, half by the least peak the sets can still
        // reach: a short first stage with a high head now can end lower
        // than a long one.
        let mut rest = next.split_off(next.len().min(BEAM / 2));
        rest.sort_by_cached_key(|p| (floor(op_scope, &all, &alone, n_ops, p), p.head_bytes));
        next.extend(rest.into_iter().take(BEAM - BEAM / 2));
        beam = next;
    }
    best
}

/// The least peak of live bytes any set of stages extending `p` can reach:
/// per op, the bytes of its step now, or of the step of the best stage
/// that fits beside `p`'s and covers it (`alone`, from [`candidates`]), whichever is
/// less; the most over the ops. (A stage starting one op after a leading
/// TRANSPOSE leaves that TRANSPOSE's step, input and output whole, for
/// good, where a stage over it lowers the head a little now.)
fn floor(op_scope: &[i32], all: &[BandedStage], alone: &[u64], n: usize, p: &BandedPlan) -> u64 {
    let b = buffers(&p.planned);
    let mut step: Vec<u64> = (0..n)
        .map(|i| live_at(&b, collapse(op_scope, &p.stages, scope_of(op_scope, i))))
        .collect();
    for (c, &a) in all.iter().zip(alone) {
        if p.stages
            .iter()
            .all(|s| c.last < s.first || s.last < c.first)
        {
            for v in step.iter_mut().take(c.last + 1).skip(c.first) {
                *v = (*v).min(a);
            }
        }
    }
    step.into_iter().max().unwrap_or(0)
}

/// A candidate stage: (bound, live bytes over time, its own step's bytes),
/// the stage, the planner's buffers with it and the stages as planned.
type Scored = ((u64, u64, u64), BandedStage, StageBuffers);

/// Sets of stages carried from one search round to the next.
const BEAM: usize = 4;

/// `state` with one more stage over its busiest step: the best
/// [`PLANNED_CANDIDATES`] by their bound, planned, each kept when it saves
/// at least the stack a stage costs.
fn extend(
    model: &Model<'_>,
    params: &[Words],
    planned: &[AllocationInfo],
    op_scope: &[i32],
    all: &[BandedStage],
    state: &BandedPlan,
) -> Vec<BandedPlan> {
    let stages = &state.stages;
    let head = state.head_bytes;
    // The busiest step, as an op range of the original model: ops whose
    // collapsed scope is the busiest one.
    let (_, busiest, _) = live_peak(&buffers(&state.planned));
    let busy_ops: Vec<usize> = (0..model.main().operators.len())
        .filter(|&i| collapse(op_scope, stages, scope_of(op_scope, i)) == busiest)
        .collect();
    let free = |c: &BandedStage| stages.iter().all(|s| c.last < s.first || s.last < c.first);
    let with = |c: BandedStage| {
        let mut with = stages.clone();
        with.push(c);
        with.sort_by_key(|s| s.first);
        with
    };
    let mut scored: Vec<Scored> = all
        .iter()
        .filter(|c| free(c) && busy_ops.iter().any(|&i| c.first <= i && i <= c.last))
        .map(|&c| {
            let b = stage_buffers(model, params, planned, op_scope, &with(c), state.merge);
            let pb = buffers(&b.infos);
            let (peak, _, area) = live_peak(&pb);
            let step = live_at(
                &pb,
                collapse(op_scope, &b.stages, scope_of(op_scope, c.first)),
            );
            ((peak, area, step), c, b)
        })
        .filter(|((peak, _, _), _, _)| *peak < head)
        .collect();
    // Lowest bound first, then the least live bytes over time, then the
    // shorter stage (fewer rings to run); and, since no later stage can
    // lower a stage's own step, the stages whose step is smallest too.
    scored.sort_by_key(|(score, s, _)| (*score, s.last - s.first, s.first));
    let mut picked: Vec<usize> = (0..scored.len().min(PLANNED_CANDIDATES)).collect();
    let mut by_step: Vec<usize> = (0..scored.len()).collect();
    by_step.sort_by_key(|&k| {
        scored
            .get(k)
            .map(|((peak, _, step), s, _)| (*step, *peak, s.first))
    });
    for k in by_step.into_iter().take(PLANNED_CANDIDATES) {
        if !picked.contains(&k) {
            picked.push(k);
        }
    }
    let mut out = Vec::new();
    for k in picked {
        let Some((_, stage, b)) = scored.get(k) else {
            continue;
        };
        let Some(plan) = b.plan() else {
            continue;
        };
        let ops = (stage.last - stage.first + 1) as u64;
        let worth = plan
            .head_bytes
            .saturating_add(STAGE_STACK_BYTES + STACK_PER_OP * ops)
            <= head;
        if worth {
            out.push(BandedPlan {
                stages: b.stages.clone(),
                planned: b.infos.clone(),
                offsets: plan.offsets,
                head_bytes: plan.head_bytes,
                merge: state.merge,
            });
        }
    }
    out
}
