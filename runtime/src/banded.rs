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

use microarena_image::geometry::RowWindow;
use microarena_image::params::{OpParams, WindowParams};
use microarena_image::{self as rl, opcode};

use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};
use crate::kernels::{self, Band, Ctx, Resolver};

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

/// Checks every stage of `img` at construction: the chain, the storage of
/// each tensor it touches, the rings' sizes and that the stage's buffers do
/// not overlap — so Invoke only ever slices validated ranges. (Graph inputs
/// and outputs are never streamed: `Interpreter::new` checks them first.)
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
        let r = rows_of(img, &op)?;
        let input = img.tensor(usize::from(op.inputs[0]))?;
        let output = img.tensor(usize::from(op.output))?;
        for t in [&input, &output] {
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
                if input.storage != rl::STORAGE_ARENA {
                    return Err(fail("a stage's input must be a whole tensor in the arena"));
                }
                stage_input = (input.location, input.bytes);
            }
            Some(t) if t == op.inputs[0] => {}
            Some(_) => return Err(fail("a banded op must read the previous op's output")),
        }
        if i < last {
            if output.storage != rl::STORAGE_STREAMED {
                return Err(fail("a stage's inner outputs must be streamed"));
            }
            let next = rows_of(img, &img.op(i + 1)?)?;
            let need = next.span().checked_mul(r.out_row);
            if need.is_none_or(|n| op.scratch.1 < n) {
                return Err(fail("the ring is smaller than the next op's window"));
            }
            *regions.get_mut(n_regions).ok_or(fail("stage too long"))? = op.scratch;
        } else {
            if output.storage != rl::STORAGE_ARENA || op.scratch.1 != 0 {
                return Err(fail(
                    "a stage's last output must be a whole tensor in the arena",
                ));
            }
            *regions.get_mut(n_regions).ok_or(fail("stage too long"))? =
                (output.location, output.bytes);
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
    rows: RowWindow,
    /// First row held, rows held, next row to compute.
    base: usize,
    held: usize,
    next: usize,
}

/// A stage being run.
struct Stage<'s, 'x, 'm> {
    kernels: &'s Resolver,
    img: &'s Image<'m>,
    /// Index of the stage's first op.
    first: usize,
    opdata: &'s [&'x [u8]],
    links: [Option<Link>; rl::MAX_STAGE_OPS],
    input: &'s [u8],
    out: &'s mut [u8],
    rings: [&'s mut [u8]; rl::MAX_STAGE_OPS],
    vars: &'s mut [u8],
}

/// Runs the stage of ops `first..first + opdata.len()` (checked at
/// construction by [`check_stages`]; `opdata` holds each op's OpData) over
/// the arena's head. Never inlined: Invoke's frame stays what plain ops need.
#[inline(never)]
pub(crate) fn run_stage(
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
    let mut stage = Stage {
        kernels,
        img,
        first,
        opdata,
        links: [None; rl::MAX_STAGE_OPS],
        input: &[],
        out: &mut [],
        rings: core::array::from_fn(|_| <&mut [u8]>::default()),
        vars,
    };
    // (offset, bytes, slot) of the inner ops' rings and the stage's output.
    let mut order = [(0usize, 0usize, 0usize); rl::MAX_STAGE_OPS];
    let mut stage_in = (0, 0);
    for k in 0..n {
        let op = img.op(first + k)?;
        if k == 0 {
            let t = img.tensor(usize::from(op.inputs[0]))?;
            stage_in = (t.location, t.location + t.bytes);
        }
        let region = if k + 1 < n {
            op.scratch
        } else {
            let t = img.tensor(usize::from(op.output))?;
            (t.location, t.bytes)
        };
        *stage.links.get_mut(k).ok_or(bad)? = Some(Link {
            rows: rows_of(img, &op)?,
            base: 0,
            held: 0,
            next: 0,
        });
        *order.get_mut(k).ok_or(bad)? = (region.0, region.1, k);
    }
    // Split the head: rings and output mutable, the stage's input read from
    // what lies between them.
    let order = order.get_mut(..n).ok_or(bad)?;
    order.sort_unstable_by_key(|r| r.0);
    let (in_lo, in_hi) = stage_in;
    let mut rest = head;
    let mut at = 0usize;
    for &(off, bytes, slot) in order.iter() {
        let gap = off.checked_sub(at).ok_or(bad)?;
        let (readable, tail) = rest.split_at_mut_checked(gap).ok_or(bad)?;
        if in_lo >= at && in_hi <= off {
            stage.input = readable.get(in_lo - at..in_hi - at).unwrap_or(&[]);
        }
        let (region, tail) = tail.split_at_mut_checked(bytes).ok_or(bad)?;
        *stage.rings.get_mut(slot).ok_or(bad)? = region;
        rest = tail;
        at = off + bytes;
    }
    if in_lo >= at {
        stage.input = rest.get(in_lo - at..in_hi - at).unwrap_or(&[]);
    }
    if stage.input.len() != in_hi - in_lo {
        return Err(bad);
    }
    stage.out = core::mem::take(stage.rings.get_mut(n - 1).ok_or(bad)?);
    let out_h = stage.link(n - 1)?.rows.out_h;
    for r in 0..out_h {
        stage.compute_row(n - 1, r)?;
    }
    Ok(())
}

fn malformed(index: usize) -> Error {
    Error::Malformed {
        what: "banded stage outside the head",
        index: index as u32,
    }
}

impl Stage<'_, '_, '_> {
    fn link(&mut self, k: usize) -> Result<&mut Link, Error> {
        let bad = malformed(self.first);
        self.links.get_mut(k).and_then(Option::as_mut).ok_or(bad)
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
    /// the last op, into the stage's output), first pulling the input rows
    /// its window reads through the ops before it. Recursion depth is the
    /// stage's length; the kernel call's large frame is [`Stage::eval_row`]'s
    /// alone, so it is on the stack once, not once per op.
    fn compute_row(&mut self, k: usize, r: usize) -> Result<(), Error> {
        let (lo, hi) = self.link(k)?.rows.window(r);
        if k > 0 {
            self.ensure(k - 1, lo, hi)?;
        }
        self.eval_row(k, r, lo, hi)
    }

    #[inline(never)]
    fn eval_row(&mut self, k: usize, r: usize, lo: usize, hi: usize) -> Result<(), Error> {
        let index = self.first + k;
        let bad = malformed(index);
        let op = self.img.op(index)?;
        let l = *self.link(k)?;
        let rows = l.rows;
        let prev_base = match k.checked_sub(1) {
            Some(p) => self.link(p)?.base,
            None => 0,
        };
        let last = k + 1 == self.opdata.len();
        let opdata = self.opdata.get(k).copied().ok_or(bad)?;
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
        .ok_or(bad)?;
        let dst: Option<&mut [u8]> = if last {
            self.out.get_mut(r * rows.out_row..(r + 1) * rows.out_row)
        } else {
            let at = l.held * rows.out_row;
            from_k
                .first_mut()
                .and_then(|ring| ring.get_mut(at..at + rows.out_row))
        };
        let dst = dst.ok_or(bad)?;
        let call = RowCall {
            index,
            rows,
            row: r,
            read: (lo, hi),
        };
        eval_one_row(
            self.kernels,
            self.img,
            op,
            call,
            (data, dst),
            opdata,
            self.vars,
        )
    }
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
    let band = |t: u16, h: usize, row: usize| -> Result<TensorInfo, Error> {
        let mut b = img.tensor(usize::from(t))?;
        if let Some(d) = b.dims.get_mut(1) {
            *d = h as i32;
        }
        b.bytes = h * row;
        b.location = 0;
        b.storage = rl::STORAGE_ARENA;
        Ok(b)
    };
    let band = Band {
        input: band(op.inputs[0], hi - lo, rows.in_row)?,
        data,
        output: band(op.output, 1, rows.out_row)?,
    };
    // What is left of the top padding at this row: the window's first
    // row `r·stride − pad` lies `pad'` rows above the band's first row.
    let w: WindowParams = op.params();
    let pad = (lo as i64 - r as i64 * i64::from(w.stride_h) + i64::from(w.pad_h)) as i32;
    op.param_words = WindowParams { pad_h: pad, ..w }.to_words();
    let mut ctx = Ctx {
        img,
        op,
        index: index as u16,
        pieces: [(0, &[]); kernels::MAX_REGIONS + 1],
        out: dst,
        more: core::array::from_fn(|_| <&mut [u8]>::default()),
        scratch: &mut [],
        opdata,
        vars,
        band: Some(band),
        in_place: None,
    };
    kernels::eval(kernels, &mut ctx)
}
