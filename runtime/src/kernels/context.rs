//! What a kernel sees: in Prepare the image and its operator ([`Prep`]) and
//! the op's OpData words ([`OpDataWriter`]); in Eval the arena split into the
//! op's output, scratch and readable rest ([`Ctx`]).

use microarena_image as rl;

use super::bytes::{i32_at, put_i32};
use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};

// ---------------------------------------------------------------- Eval

/// The arena as a kernel sees it: the output (and scratch) mutable, every
/// other region readable.
pub(crate) struct Ctx<'x, 'm> {
    pub img: &'x Image<'m>,
    pub op: OpInfo,
    pub index: u16,
    /// The head's readable pieces (its caller's array: a banded row, which
    /// reads no arena tensor this way, passes none and keeps its frame small).
    pub pieces: &'x [(usize, &'x [u8])],
    /// Output 0.
    pub out: &'x mut [u8],
    /// Outputs 1.. (multi-output ops; none for a banded row).
    pub more: &'x mut [&'x mut [u8]],
    pub scratch: &'x mut [u8],
    pub opdata: &'x [u8],
    /// The variable region (LSTM/SVDF state), writable by the kernels that own state.
    pub vars: &'x mut [u8],
    /// Banded execution: input 0 and output 0 stand for one band's rows.
    pub band: Option<Band<'x>>,
    /// In-place execution: output 0 is this input's bytes (the image's
    /// `op::IN_PLACE`, checked at construction), so the input is read from
    /// [`Ctx::out`] ([`Ctx::src`]).
    pub in_place: Option<usize>,
}

/// One call of a banded op (`EXEC_BANDED`): input 0 is the rows the output
/// rows' windows read (`data`, in the previous op's ring or the stage's
/// input tensor) and output 0 is those output rows ([`Ctx::out`]); both
/// records keep every dim but H, so the kernel's loops and bounds are the
/// whole op's, restricted to the band.
#[derive(Clone, Copy)]
pub(crate) struct Band<'x> {
    pub input: TensorInfo,
    pub data: &'x [u8],
    pub output: TensorInfo,
    /// Input 1 when the stage supplies it (an element-wise op's second
    /// operand: its rows, or a whole tensor broadcast along H); `None`
    /// reads it from the image (a constant).
    pub second: Option<(TensorInfo, &'x [u8])>,
    /// Where the band lies in the whole op.
    pub at: BandAt,
}

/// Where a band lies in the whole op, for the kernels whose rows depend on
/// their position or the whole tensors' heights, not on the band's records
/// alone (TRANSPOSE gathers output row `out_row` from its whole input;
/// RESIZE_* scales between the whole heights).
#[derive(Clone, Copy, Default)]
pub(crate) struct BandAt {
    /// The band's first output row in the whole output, of `out_h`.
    pub out_row: usize,
    pub out_h: usize,
    /// The band's first input-0 row in the whole input, of `in_h`.
    pub in_row: usize,
    pub in_h: usize,
}

impl<'x> Ctx<'x, '_> {
    pub(crate) fn tensor(&self, k: usize) -> Option<TensorInfo> {
        match (k, &self.band) {
            (0, Some(b)) => return Some(b.input),
            (
                1,
                Some(Band {
                    second: Some((t, _)),
                    ..
                }),
            ) => return Some(*t),
            _ => {}
        }
        let t = *self.op.inputs.get(k)?;
        if t == rl::NO_TENSOR || k >= self.op.n_inputs {
            return None;
        }
        self.img.tensor(usize::from(t)).ok()
    }

    fn data(&self, t: &TensorInfo) -> &'x [u8] {
        match t.storage {
            rl::STORAGE_CONST => self.img.const_data(t).unwrap_or(&[]),
            rl::STORAGE_ARENA => {
                let end = t.location.saturating_add(t.bytes);
                self.pieces
                    .iter()
                    .find(|(base, p)| t.location >= *base && end <= base + p.len())
                    .and_then(|(base, p)| p.get(t.location - base..end - base))
                    .unwrap_or(&[])
            }
            _ => &[],
        }
    }

    pub(crate) fn input(&self, k: usize) -> (TensorInfo, &'x [u8]) {
        match (k, &self.band) {
            (0, Some(b)) => return (b.input, b.data),
            (
                1,
                Some(Band {
                    second: Some(s), ..
                }),
            ) => return *s,
            _ => {}
        }
        match self.tensor(k) {
            Some(t) => {
                let d = self.data(&t);
                (t, d)
            }
            None => (EMPTY, &[]),
        }
    }

    /// The bytes element reads of input `k` use: `x` (its bytes from
    /// [`Ctx::input`]), or output 0 itself when the op runs in place over
    /// input `k`. An in-place kernel reads element `i` before it writes
    /// output element `i` and never reads an element it has written, so one
    /// buffer serves as both.
    #[inline(always)]
    pub(crate) fn src<'s>(&'s self, k: usize, x: &'s [u8]) -> &'s [u8] {
        if self.in_place == Some(k) {
            &*self.out
        } else {
            x
        }
    }

    pub(crate) fn output_info(&self) -> TensorInfo {
        self.output_info_k(0)
    }

    /// Tensor record of output `k`.
    pub(crate) fn output_info_k(&self, k: usize) -> TensorInfo {
        if let (0, Some(b)) = (k, &self.band) {
            return b.output;
        }
        self.op
            .output_tensor(k)
            .and_then(|t| self.img.tensor(usize::from(t)).ok())
            .unwrap_or(EMPTY)
    }

    #[inline]
    pub(crate) fn word(&self, i: usize) -> i32 {
        i32_at(self.opdata, i)
    }

    /// [`Error::UnsupportedConfig`] for this op, as a closure that does not
    /// borrow the context (so kernels can use it while they split `vars`
    /// and `scratch`).
    pub(crate) fn fail(&self) -> impl Fn(&'static str) -> Error + Copy + use<> {
        let (op_index, opcode) = (self.index, self.op.opcode);
        move |why| Error::UnsupportedConfig {
            op_index,
            opcode,
            why,
        }
    }
}

pub(crate) const EMPTY: TensorInfo = TensorInfo {
    dtype: -1,
    rank: 0,
    storage: rl::STORAGE_NONE,
    dims: [0; rl::MAX_RANK],
    location: 0,
    bytes: 0,
    scale: 0.0,
    zero_point: 0,
    quant_dim: 0,
    scales_off: 0,
    n_scales: 0,
};

/// Most mutable regions of one op: every output and the scratch.
pub(crate) const MAX_REGIONS: usize = rl::MAX_OP_OUTPUTS + 1;

/// Readable arena regions with their offsets: the head minus the op's
/// mutable regions, so up to one more piece than regions.
pub(crate) type Pieces<'x> = [(usize, &'x [u8]); MAX_REGIONS + 1];

/// Outputs 1.. of an op (output 0 is [`Ctx::out`]); empty slices past the
/// op's outputs and for outputs without arena storage.
pub(crate) type MoreOutputs<'x> = [&'x mut [u8]; rl::MAX_OP_OUTPUTS - 1];

/// Splits the head into the op's mutable regions — `regions[k]` is
/// (offset, bytes) of output `k` for `k < n`, the scratch last — and the
/// readable rest. `None` when two non-empty regions overlap or one leaves
/// the head. Returns output 0, the other outputs, the scratch and the pieces.
/// Out of line: its sorting arrays would otherwise sit in the caller's frame
/// for the whole of the kernel it calls.
#[inline(never)]
pub(crate) fn carve<'h>(
    head: &'h mut [u8],
    outputs: &[(usize, usize)],
    scratch: (usize, usize),
) -> Option<(&'h mut [u8], MoreOutputs<'h>, &'h mut [u8], Pieces<'h>)> {
    // (offset, bytes, slot): slot k < MAX_OP_OUTPUTS is output k, the last is the scratch.
    let scratch_slot = rl::MAX_OP_OUTPUTS;
    let mut order = [(0usize, 0usize, 0usize); MAX_REGIONS];
    let mut n = 0;
    for (k, &(off, bytes)) in outputs.iter().enumerate().take(rl::MAX_OP_OUTPUTS) {
        if bytes > 0 {
            *order.get_mut(n)? = (off, bytes, k);
            n += 1;
        }
    }
    if scratch.1 > 0 {
        *order.get_mut(n)? = (scratch.0, scratch.1, scratch_slot);
        n += 1;
    }
    let order = order.get_mut(..n)?;
    sort_regions(order);
    let mut out0: &'h mut [u8] = &mut [];
    let mut more: MoreOutputs<'h> = core::array::from_fn(|_| <&mut [u8]>::default());
    let mut scratch_buf: &'h mut [u8] = &mut [];
    let mut pieces: Pieces<'h> = [(0, &[]); MAX_REGIONS + 1];
    let mut rest = head;
    let mut at = 0usize;
    for (i, &(off, bytes, slot)) in order.iter().enumerate() {
        let gap = off.checked_sub(at)?;
        let (readable, tail) = rest.split_at_mut_checked(gap)?;
        *pieces.get_mut(i)? = (at, &*readable);
        let (region, tail) = tail.split_at_mut_checked(bytes)?;
        rest = tail;
        at = off.checked_add(bytes)?;
        if slot == scratch_slot {
            scratch_buf = region;
        } else if slot == 0 {
            out0 = region;
        } else {
            *more.get_mut(slot - 1)? = region;
        }
    }
    *pieces.get_mut(n)? = (at, &*rest);
    Some((out0, more, scratch_buf, pieces))
}

/// Sorts (offset, bytes, slot) regions by offset. Insertion sort: a
/// handful of regions, and core's sort would link about 2.5 KB of code
/// into every firmware.
pub(crate) fn sort_regions(order: &mut [(usize, usize, usize)]) {
    for i in 1..order.len() {
        let mut j = i;
        while j > 0 && order.get(j - 1).map(|r| r.0) > order.get(j).map(|r| r.0) {
            order.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// State tensor `k` of the op (LSTM hidden/cell, SVDF activation state) and
/// its byte range in the variable region.
pub(crate) fn state_tensor(
    c: &Ctx<'_, '_>,
    k: usize,
    missing: &'static str,
) -> Result<(TensorInfo, (usize, usize)), Error> {
    let t = c.tensor(k).ok_or(c.fail()(missing))?;
    Ok((t, (t.location, t.location.saturating_add(t.bytes))))
}

// ---------------------------------------------------------------- Prepare

/// The operator being prepared, with the image it reads its tensors from.
pub(crate) struct Prep<'p, 'm> {
    pub img: &'p Image<'m>,
    pub op: &'p OpInfo,
    pub index: u16,
}

/// An error's text as the error carries it: empty with the feature
/// `strip-error-strings` (TFLM's `TF_LITE_STRIP_ERROR_STRINGS`), so that the
/// kernels' texts are not linked; the error still names its kind and the op.
#[inline(always)]
const fn text(s: &'static str) -> &'static str {
    if cfg!(feature = "strip-error-strings") {
        ""
    } else {
        s
    }
}

impl Prep<'_, '_> {
    // Inlined when the texts are stripped, so no call passes one.
    #[cfg_attr(feature = "strip-error-strings", inline(always))]
    pub(crate) fn err(&self, why: &'static str) -> Error {
        Error::UnsupportedConfig {
            op_index: self.index,
            opcode: self.op.opcode,
            why: text(why),
        }
    }

    pub(crate) fn input(&self, k: usize) -> Result<TensorInfo, Error> {
        let t = *self.op.inputs.get(k).ok_or(self.err("missing input"))?;
        if t == rl::NO_TENSOR || k >= self.op.n_inputs {
            return Err(self.err("missing input"));
        }
        self.img.tensor(usize::from(t))
    }

    pub(crate) fn opt_input(&self, k: usize) -> Result<Option<TensorInfo>, Error> {
        match self.op.inputs.get(k) {
            Some(&t) if t != rl::NO_TENSOR && k < self.op.n_inputs => {
                self.img.tensor(usize::from(t)).map(Some)
            }
            _ => Ok(None),
        }
    }

    pub(crate) fn output(&self) -> Result<TensorInfo, Error> {
        self.output_k(0)
    }

    /// Output `k`, which must live in the head unless it is empty (or, for
    /// a banded op, be streamed: `banded::check_stages` checks the stage).
    pub(crate) fn output_k(&self, k: usize) -> Result<TensorInfo, Error> {
        let i = self.op.output_tensor(k).ok_or(self.err("missing output"))?;
        let t = self.img.tensor(usize::from(i))?;
        let streamed = t.storage == rl::STORAGE_STREAMED && self.op.exec == rl::EXEC_BANDED;
        let state = t.storage == rl::STORAGE_VARIABLE
            && k == 0
            && rl::opcode::output_is_state(self.op.opcode);
        if t.storage != rl::STORAGE_ARENA && t.bytes > 0 && !streamed && !state {
            return Err(self.err("output is not an arena tensor"));
        }
        Ok(t)
    }

    #[cfg_attr(feature = "strip-error-strings", inline(always))]
    pub(crate) fn need(&self, ok: bool, why: &'static str) -> Result<(), Error> {
        if ok { Ok(()) } else { Err(self.err(why)) }
    }

    /// [`Error::InvalidOp`] unless `ok`: parameters or shapes that no image
    /// written by core can have.
    #[cfg_attr(feature = "strip-error-strings", inline(always))]
    pub(crate) fn check(&self, ok: bool, what: &'static str) -> Result<(), Error> {
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidOp {
                op_index: self.index,
                opcode: self.op.opcode,
                what: text(what),
            })
        }
    }
}

/// Where an op's OpData words go: into its tail allocation (or, on the
/// host, into the image's OpData block being filled), or — when the image
/// carries the block in flash — compared with the words already there.
pub(crate) struct OpDataWriter<'d> {
    dst: OpDataSink<'d>,
    n: usize,
    differs: bool,
}

enum OpDataSink<'d> {
    Store(&'d mut [u8]),
    Compare(&'d [u8]),
}

impl<'d> OpDataWriter<'d> {
    /// Stores the words in `dst`.
    pub(crate) fn new(dst: &'d mut [u8]) -> Self {
        OpDataWriter {
            dst: OpDataSink::Store(dst),
            n: 0,
            differs: false,
        }
    }

    /// Compares the words with `frozen` (the op's part of the image's block).
    pub(crate) fn compare(frozen: &'d [u8]) -> Self {
        OpDataWriter {
            dst: OpDataSink::Compare(frozen),
            n: 0,
            differs: false,
        }
    }

    pub(crate) fn push(&mut self, v: i32) {
        match &mut self.dst {
            OpDataSink::Store(d) => put_i32(d, self.n, v),
            OpDataSink::Compare(f) => {
                let at = 4 * self.n;
                let word = f.get(at..at + 4).and_then(|w| w.first_chunk::<4>());
                self.differs |= word.is_none_or(|w| i32::from_le_bytes(*w) != v);
            }
        }
        self.n += 1;
    }

    /// Words pushed so far.
    pub(crate) fn len(&self) -> usize {
        self.n
    }

    /// Whether a compared word differed from the frozen one.
    pub(crate) fn differs(&self) -> bool {
        self.differs
    }
}

/// Same element count (the shape may differ).
pub(crate) fn same_len(a: &TensorInfo, b: &TensorInfo) -> bool {
    a.elements() == b.elements()
}

/// Same element size, for ops that move elements without converting them.
pub(crate) fn same_element_size(
    p: &Prep<'_, '_>,
    input: &TensorInfo,
    out: &TensorInfo,
) -> Result<(), Error> {
    p.need(
        rl::dtype_size(input.dtype) == rl::dtype_size(out.dtype),
        "type mismatch",
    )
}
