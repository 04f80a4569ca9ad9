//! Banded stages: patch-based execution in row bands (`EXEC_BANDED`).
//!
//! A stage is a run of consecutive windowed ops (CONV_2D, DEPTHWISE_CONV_2D,
//! the pools), each reading the previous one's output as its input 0. The
//! stage's last output is produced row by row; each row pulls, through the
//! chain, just the rows of the intermediate tensors its windows read. An
//! intermediate tensor (`STORAGE_STREAMED`) never exists whole: its producer
//! keeps the rows the next op's window still needs in a ring of whole rows
//! (the producer's planned scratch), so nothing is computed twice.
//!
//! Each kernel call is the unchanged whole-tensor kernel on a band: its input
//! record has the window's rows (padding rows outside the tensor are not
//! there, as for the whole op), its output one row, and its top padding is
//! what is left of the op's at that row. Each output value therefore sums
//! the same taps in the same order as the whole op: bit-exact by
//! construction, whatever the kernel's inner loops.

use microarena_image::geometry::{window_rows, window_span};
use microarena_image::params::{OpParams, WindowParams};
use microarena_image::{self as rl, opcode};

use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};
use crate::kernels::{self, Band, Ctx};

/// One op of a stage, as Invoke hands it over.
#[derive(Clone, Copy)]
pub(crate) struct StageOp<'x> {
    pub index: u16,
    pub op: OpInfo,
    pub opdata: &'x [u8],
}

impl StageOp<'_> {
    pub(crate) const EMPTY: StageOp<'static> = StageOp {
        index: 0,
        op: OpInfo {
            opcode: 0,
            n_inputs: 0,
            activation: 0,
            inputs: [rl::NO_TENSOR; rl::MAX_OP_INPUTS],
            output: 0,
            n_outputs: 0,
            scratch: (0, 0),
            exec: 0,
            param_words: [0; rl::OP_PARAMS],
        },
        opdata: &[],
    };
}

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

/// Height-wise geometry and row sizes of one banded op.
#[derive(Clone, Copy)]
struct Rows {
    input: TensorInfo,
    output: TensorInfo,
    /// Bytes of one input row and one output row.
    in_row: usize,
    out_row: usize,
    window: WindowParams,
}

impl Rows {
    fn of(img: &Image<'_>, op: &OpInfo) -> Result<Rows, Error> {
        let input = img.tensor(usize::from(op.inputs[0]))?;
        let output = img.tensor(usize::from(op.output))?;
        let row = |t: &TensorInfo| {
            rl::dtype_size(t.dtype).map_or(0, |e| e as usize) * t.dim(2) * t.dim(3)
        };
        Ok(Rows {
            in_row: row(&input),
            out_row: row(&output),
            input,
            output,
            window: op.params(),
        })
    }

    /// Input rows `[lo, hi)` output row `r` reads.
    fn window(&self, r: usize) -> (usize, usize) {
        let w = &self.window;
        let (lo, hi) = window_rows(
            r as i64,
            r as i64 + 1,
            i64::from(w.stride_h),
            i64::from(w.pad_h),
            i64::from(w.filter_h),
            i64::from(w.dilation_h),
            self.input.dim(1) as i64,
        );
        (lo as usize, hi as usize)
    }

    /// Rows of this op's input one output row's window spans at most.
    fn span(&self) -> usize {
        let w = &self.window;
        window_span(i64::from(w.filter_h), i64::from(w.dilation_h)) as usize
    }
}

/// Checks every stage of `img` at construction: the chain, the storage of
/// each tensor it touches, the rings' sizes and that the stage's buffers do
/// not overlap — so Invoke only ever slices validated ranges.
pub(crate) fn check_stages(img: &Image<'_>) -> Result<(), Error> {
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
        check_stage(img, i, end)?;
        i = end + 1;
    }
    for k in 0..img.input_count() + img.output_count() {
        let t = if k < img.input_count() {
            img.input_tensor(k)?
        } else {
            img.output_tensor(k - img.input_count())?
        };
        if img.tensor(t)?.storage == rl::STORAGE_STREAMED {
            return Err(Error::Malformed {
                what: "a graph input or output is streamed",
                index: t as u32,
            });
        }
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

fn check_stage(img: &Image<'_>, first: usize, last: usize) -> Result<(), Error> {
    // (offset, bytes) of the stage's mutable buffers, then its input.
    let mut regions = [(0usize, 0usize); rl::MAX_STAGE_OPS + 1];
    let mut n_regions = 0;
    let mut stage_input = (0, 0);
    let mut prev_out = None;
    for i in first..=last {
        let op = img.op(i)?;
        let fail = |what| invalid(i, &op, what);
        if !opcode::runs_in_bands(op.opcode) || op.n_outputs != 1 || op.n_inputs == 0 {
            return Err(fail("this operator cannot run in row bands"));
        }
        let r = Rows::of(img, &op)?;
        for t in [&r.input, &r.output] {
            if t.rank != 4 || t.dim(0) != 1 {
                return Err(fail("a banded op's tensors must be 4-D with batch 1"));
            }
        }
        for k in 1..op.n_inputs.min(rl::MAX_OP_INPUTS) {
            if let Some(&t) = op.inputs.get(k)
                && t != rl::NO_TENSOR
                && !matches!(
                    img.tensor(usize::from(t))?.storage,
                    rl::STORAGE_CONST | rl::STORAGE_NONE
                )
            {
                return Err(fail("a banded op reads only constants besides input 0"));
            }
        }
        match prev_out {
            None => {
                if r.input.storage != rl::STORAGE_ARENA {
                    return Err(fail("a stage's input must be a whole tensor in the arena"));
                }
                stage_input = (r.input.location, r.input.bytes);
            }
            Some(t) if t == op.inputs[0] => {}
            Some(_) => return Err(fail("a banded op must read the previous op's output")),
        }
        if i < last {
            if r.output.storage != rl::STORAGE_STREAMED {
                return Err(fail("a stage's inner outputs must be streamed"));
            }
            let next = Rows::of(img, &img.op(i + 1)?)?;
            let need = next.span().checked_mul(r.out_row);
            if need.is_none_or(|n| op.scratch.1 < n) {
                return Err(fail("the ring is smaller than the next op's window"));
            }
            *regions.get_mut(n_regions).ok_or(fail("stage too long"))? = op.scratch;
        } else {
            if r.output.storage != rl::STORAGE_ARENA || op.scratch.1 != 0 {
                return Err(fail(
                    "a stage's last output must be a whole tensor in the arena",
                ));
            }
            *regions.get_mut(n_regions).ok_or(fail("stage too long"))? =
                (r.output.location, r.output.bytes);
        }
        n_regions += 1;
        prev_out = Some(op.output);
    }
    let too_long = Error::Malformed {
        what: "banded stage longer than MAX_STAGE_OPS",
        index: first as u32,
    };
    *regions.get_mut(n_regions).ok_or(too_long)? = stage_input;
    let regions = regions.get(..=n_regions).ok_or(too_long)?;
    for (a, x) in regions.iter().enumerate() {
        for y in regions.iter().skip(a + 1) {
            let apart = x.1 == 0 || y.1 == 0 || x.0 + x.1 <= y.0 || y.0 + y.1 <= x.0;
            if !apart {
                return Err(Error::Malformed {
                    what: "a banded stage's buffers overlap",
                    index: first as u32,
                });
            }
        }
    }
    Ok(())
}

/// Where one op of a running stage is: its rows' geometry and, for an
/// inner op, which rows of its output its ring holds.
#[derive(Clone, Copy)]
struct Link {
    rows: Rows,
    /// First row held, rows held, next row to compute.
    base: usize,
    held: usize,
    next: usize,
}

/// A stage being run.
struct Stage<'s, 'x, 'm> {
    img: &'s Image<'m>,
    ops: &'s [StageOp<'x>],
    links: [Option<Link>; rl::MAX_STAGE_OPS],
    input: &'s [u8],
    out: &'s mut [u8],
    rings: [&'s mut [u8]; rl::MAX_STAGE_OPS],
    vars: &'s mut [u8],
}

/// Runs the stage `ops` (checked at construction by [`check_stages`]) over
/// the arena's head.
pub(crate) fn run_stage(
    img: &Image<'_>,
    head: &mut [u8],
    vars: &mut [u8],
    ops: &[StageOp<'_>],
) -> Result<(), Error> {
    let first = ops.first().map_or(0, |s| s.index);
    let n = ops.len();
    if n == 0 || n > rl::MAX_STAGE_OPS {
        return Err(malformed(first));
    }
    let mut links = [None; rl::MAX_STAGE_OPS];
    for (slot, s) in links.iter_mut().zip(ops) {
        *slot = Some(Link {
            rows: Rows::of(img, &s.op)?,
            base: 0,
            held: 0,
            next: 0,
        });
    }
    let row_of = |k: usize| links.get(k).copied().flatten().ok_or(malformed(first));
    let stage_in = row_of(0)?.rows.input;
    let stage_out = row_of(n - 1)?.rows.output;
    // Split the head: the inner ops' rings and the stage's output mutable,
    // the stage's input read from what lies between them.
    let mut order = [(0usize, 0usize, 0usize); rl::MAX_STAGE_OPS];
    for ((k, s), slot) in ops.iter().enumerate().zip(order.iter_mut()) {
        *slot = if k + 1 < n {
            (s.op.scratch.0, s.op.scratch.1, k)
        } else {
            (stage_out.location, stage_out.bytes, k)
        };
    }
    let order = order.get_mut(..n).ok_or(malformed(first))?;
    order.sort_unstable_by_key(|r| r.0);
    let mut slices: [&mut [u8]; rl::MAX_STAGE_OPS] =
        core::array::from_fn(|_| <&mut [u8]>::default());
    let (in_lo, in_hi) = (stage_in.location, stage_in.location + stage_in.bytes);
    let mut input: &[u8] = &[];
    let mut rest = head;
    let mut at = 0usize;
    for &(off, bytes, slot) in order.iter() {
        let gap = off.checked_sub(at).ok_or(malformed(first))?;
        let (readable, tail) = rest.split_at_mut_checked(gap).ok_or(malformed(first))?;
        if in_lo >= at && in_hi <= off {
            input = readable.get(in_lo - at..in_hi - at).unwrap_or(&[]);
        }
        let (region, tail) = tail.split_at_mut_checked(bytes).ok_or(malformed(first))?;
        *slices.get_mut(slot).ok_or(malformed(first))? = region;
        rest = tail;
        at = off + bytes;
    }
    if in_lo >= at {
        input = rest.get(in_lo - at..in_hi - at).unwrap_or(&[]);
    }
    if input.len() != stage_in.bytes {
        return Err(malformed(first));
    }
    let out = core::mem::take(slices.get_mut(n - 1).ok_or(malformed(first))?);
    let mut stage = Stage {
        img,
        ops,
        links,
        input,
        out,
        rings: slices,
        vars,
    };
    for r in 0..stage_out.dim(1) {
        stage.compute_row(n - 1, r)?;
    }
    Ok(())
}

fn malformed(index: u16) -> Error {
    Error::Malformed {
        what: "banded stage outside the head",
        index: u32::from(index),
    }
}

impl Stage<'_, '_, '_> {
    fn link(&mut self, k: usize) -> Result<&mut Link, Error> {
        let first = self.ops.first().map_or(0, |s| s.index);
        self.links
            .get_mut(k)
            .and_then(Option::as_mut)
            .ok_or(malformed(first))
    }

    /// Makes ring `k` (op `k`'s output rows) hold rows `[lo, hi)`: drops the
    /// rows below `lo`, which no later window reads, then computes up to `hi`.
    fn ensure(&mut self, k: usize, lo: usize, hi: usize) -> Result<(), Error> {
        let l = *self.link(k)?;
        let row = l.rows.out_row;
        if lo > l.base {
            let drop = (lo - l.base).min(l.held);
            if let Some(ring) = self.rings.get_mut(k) {
                ring.copy_within(drop * row..l.held * row, 0);
            }
            let l = self.link(k)?;
            l.base += drop;
            l.held -= drop;
            if l.held == 0 {
                // Rows between that no window reads are never computed.
                l.base = lo;
                l.next = l.next.max(lo);
            }
        }
        loop {
            let next = self.link(k)?.next;
            if next >= hi {
                return Ok(());
            }
            self.compute_row(k, next)?;
            let l = self.link(k)?;
            l.next += 1;
            l.held += 1;
        }
    }

    /// Computes output row `r` of the stage's op `k` into its ring (or, for
    /// the last op, into the stage's output).
    fn compute_row(&mut self, k: usize, r: usize) -> Result<(), Error> {
        let s = *self.ops.get(k).ok_or(malformed(0))?;
        let l = *self.link(k)?;
        let rows = l.rows;
        let (lo, hi) = rows.window(r);
        if k > 0 {
            self.ensure(k - 1, lo, hi)?;
        }
        let prev_base = match k.checked_sub(1) {
            Some(p) => self.link(p)?.base,
            None => 0,
        };
        let last = k + 1 == self.ops.len();
        let (before, from_k) = self.rings.split_at_mut(k);
        let in_bytes = (hi - lo) * rows.in_row;
        let data: &[u8] = match before.last() {
            None => self
                .input
                .get(lo * rows.in_row..lo * rows.in_row + in_bytes),
            Some(ring) => {
                let from = (lo - prev_base) * rows.in_row;
                ring.get(from..from + in_bytes)
            }
        }
        .ok_or(malformed(s.index))?;
        let dst: Option<&mut [u8]> = if last {
            self.out.get_mut(r * rows.out_row..(r + 1) * rows.out_row)
        } else {
            let at = l.held * rows.out_row;
            from_k
                .first_mut()
                .and_then(|ring| ring.get_mut(at..at + rows.out_row))
        };
        let dst = dst.ok_or(malformed(s.index))?;
        let band_rows = |t: &TensorInfo, h: usize, row: usize| {
            let mut b = *t;
            if let Some(d) = b.dims.get_mut(1) {
                *d = h as i32;
            }
            b.bytes = h * row;
            b.location = 0;
            b.storage = rl::STORAGE_ARENA;
            b
        };
        let mut op = s.op;
        // What is left of the top padding at this row: the window's first
        // row `r·stride − pad` lies `pad'` rows above the band's first row.
        let w = rows.window;
        let pad = (lo as i64 - r as i64 * i64::from(w.stride_h) + i64::from(w.pad_h)) as i32;
        op.param_words = WindowParams { pad_h: pad, ..w }.to_words();
        let mut ctx = Ctx {
            img: self.img,
            op,
            index: s.index,
            pieces: [(0, &[]); kernels::MAX_REGIONS + 1],
            out: dst,
            more: core::array::from_fn(|_| <&mut [u8]>::default()),
            scratch: &mut [],
            opdata: s.opdata,
            vars: &mut *self.vars,
            band: Some(Band {
                input: band_rows(&rows.input, hi - lo, rows.in_row),
                data,
                output: band_rows(&rows.output, 1, rows.out_row),
            }),
        };
        kernels::eval(&mut ctx)
    }
}
