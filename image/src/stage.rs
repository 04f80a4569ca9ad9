//! The pull schedule of a banded stage (`EXEC_BANDED`): which row of which
//! op is computed when, and so how many rows each streamed tensor's ring
//! holds at most. Core sizes the rings by running this schedule without
//! kernels and the runtime runs the very same schedule with them (and runs
//! it without them first, at construction, to check the image's rings), so
//! the two cannot disagree.
//!
//! A stage is a small DAG of row-computable ops in op order. Row `r` of op
//! `k` needs, from each input produced inside the stage, the rows its
//! [`RowMap`] gives; computing it first makes each such producer hold them
//! (recursively). A producer drops the rows below the lowest row any of its
//! consumers will still read (each consumer's next row's window), so a
//! tensor with two consumers (a residual ADD's skip) holds the rows between
//! the slower consumer's window and the faster one's. The ops whose outputs
//! are written whole (the stage's outputs) are driven together, each in
//! proportion to its height.

use crate::format::MAX_STAGE_OPS;
use crate::geometry::{RowWindow, window_rows};
use crate::params::{MeanParams, OpParams, PAD_CONSTANT, PadParams, WindowParams, Words};
use crate::resize::ResizeRows;
use crate::{dtype, opcode};

/// Inputs of one op a stage can stream (ADD and MUL read two).
pub const MAX_PULLS: usize = 2;

/// Which rows of one input an op's output row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowMap {
    /// A windowed op (CONV_2D, DEPTHWISE_CONV_2D, the pools): the window's
    /// rows, clipped to the input.
    Window(WindowRows),
    /// Output row `r` reads input row `r − top` alone: `top` is 0 for an
    /// element-wise op, the top padding for PAD, whose padding rows read
    /// nothing (`in_h`: the input's rows).
    Shift { top: usize, in_h: usize },
    /// RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR: the source rows TFLM's
    /// arithmetic picks (one or two neighbours), the kernel's own.
    Resize(ResizeRows),
}

/// A windowed op's row map: [`RowWindow`]'s height-wise fields, narrow.
/// The runtime's stage runner keeps two maps per op of a stage on its stack
/// (a [`RowWindow`] there took 640 B more for a full stage on a Cortex-M).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowRows {
    pub in_h: u32,
    pub stride: i16,
    /// Padding rows above the input.
    pub pad: i16,
    pub filter: i16,
    pub dilation: i16,
}

impl WindowRows {
    /// Input rows `[lo, hi)` output rows `[r0, r1)` read ([`window_rows`]).
    pub fn span(&self, r0: i64, r1: i64) -> (i64, i64) {
        window_rows(
            r0,
            r1,
            i64::from(self.stride),
            i64::from(self.pad),
            i64::from(self.filter),
            i64::from(self.dilation),
            i64::from(self.in_h),
        )
    }
}

impl RowMap {
    /// The map of window `w`; `None` when a field does not fit
    /// [`WindowRows`] (core then plans no stage there, and the runtime
    /// refuses one).
    pub fn window(w: RowWindow) -> Option<RowMap> {
        Some(RowMap::Window(WindowRows {
            in_h: u32::try_from(w.in_h).ok()?,
            stride: i16::try_from(w.stride).ok()?,
            pad: i16::try_from(w.pad).ok()?,
            filter: i16::try_from(w.filter).ok()?,
            dilation: i16::try_from(w.dilation).ok()?,
        }))
    }

    /// Input rows `[lo, hi)` output row `r` reads (empty on padding rows).
    pub fn rows(&self, r: usize) -> (usize, usize) {
        match *self {
            RowMap::Window(w) => {
                let (lo, hi) = w.span(r as i64, r as i64 + 1);
                (lo.max(0) as usize, hi.max(0) as usize)
            }
            RowMap::Shift { top, in_h } => match r.checked_sub(top) {
                None => (0, 0),
                Some(s) => (s.min(in_h), (s + 1).min(in_h)),
            },
            RowMap::Resize(m) => m.rows(r),
        }
    }

    /// Rows of the input it maps into.
    pub fn in_h(&self) -> usize {
        match *self {
            RowMap::Window(w) => w.in_h as usize,
            RowMap::Shift { in_h, .. } => in_h,
            RowMap::Resize(m) => m.in_h,
        }
    }
}

/// The padding of a PAD a banded stage folds into the windowed op that
/// reads it: that op reads the PAD's input rows with this much more
/// padding above and to the left, and the PAD makes no rows (no ring).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PadFold {
    pub top: i32,
    pub left: i32,
}

/// `Some` when a PAD (op `code`, parameters `p`, elements of type `dtype`,
/// input and output of one quantization: `same_quant`) read by windowed op
/// `reader` alone, as its input 0, folds into it: PAD (not PADV2: its
/// value is its own) of H and W only on int8 or int16, whose padding is the
/// zero point (int16: 0) and so adds nothing to a CONV_2D's or
/// DEPTHWISE_CONV_2D's sums, whose kernels skip the taps outside their
/// input — the same integer sums. Float stays a PAD: `0.0 × w` added
/// and a tap skipped can differ in a zero sum's sign. The pools differ
/// (an average counts the taps; a max sees the zero point).
pub fn pad_fold(
    code: u8,
    p: &PadParams,
    dtype: i8,
    same_quant: bool,
    reader: u8,
) -> Option<PadFold> {
    let hw_only = p.rank == 4
        && p.mode == PAD_CONSTANT
        && p.before[0] == 0
        && p.after[0] == 0
        && p.before[3] == 0
        && p.after[3] == 0
        && p.before[1..3].iter().chain(&p.after[1..3]).all(|&v| v >= 0);
    let ok = code == opcode::PAD
        && hw_only
        && same_quant
        && matches!(dtype, dtype::I8 | dtype::I16)
        && matches!(reader, opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D);
    ok.then_some(PadFold {
        top: p.before[1],
        left: p.before[2],
    })
}

impl PadFold {
    /// The reader's window `w` with the PAD folded: over the PAD's input
    /// (`in_h` rows of `in_row` bytes), its padding above added.
    pub fn window(&self, w: RowWindow, in_h: usize, in_row: usize) -> RowWindow {
        RowWindow {
            in_h,
            in_row,
            pad: w.pad.saturating_add(self.top),
            ..w
        }
    }
}

/// What decides whether an op reduces in a banded stage besides its code
/// and parameters: the shapes of its operands, read the same way by core
/// (from the model) and the runtime (from the image).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OpShape {
    /// Input 0's dims when it is 4-D (zeros otherwise).
    pub input: [usize; 4],
    /// Input 1's dims when it is a 2-D constant (a FULLY_CONNECTED's
    /// filter `[depth, accum]`; zeros otherwise).
    pub filter: [usize; 2],
    /// Elements of output 0.
    pub out_elements: usize,
    /// Output 0's element type.
    pub out_dtype: i8,
}

/// How op `code` (lowered parameters `words`, operands `shape`) runs in a
/// banded stage, or `None` when it cannot: [`opcode::band_rows`], with a
/// global AVERAGE_POOL_2D a reducer ([`reduces`]) and a MEAN, SUM or
/// FULLY_CONNECTED only when it reduces.
pub fn stage_kind(code: u8, words: &Words, shape: &OpShape) -> Option<opcode::BandRows> {
    match opcode::band_rows(code)? {
        opcode::BandRows::Window if reduces(code, words, shape) => Some(opcode::BandRows::Reduce),
        opcode::BandRows::Reduce if !reduces(code, words, shape) => None,
        kind => Some(kind),
    }
}

/// `true` when op `code` folds the rows of its batch-1 NHWC input (none of
/// its dims empty) into one output written after the last row:
/// - a MEAN or SUM whose axes include H (each output element sums the same
///   input elements in the same order as the whole op: row by row);
/// - an AVERAGE_POOL_2D whose one window covers the whole input unpadded
///   (a global average pool, summed per channel in the window's row
///   order), one output per channel;
/// - an int8 or float32 FULLY_CONNECTED of one batch whose filter
///   `[depth, H·W·C]` reads the whole input as one vector (a classifier
///   after the last feature map: row `r` is elements `r·W·C ..` of the
///   dot products, which TFLM sums in that order).
///
/// A stage then never holds the map it reduces (MCUNetV2's patch stage
/// ending in the classifier).
pub fn reduces(code: u8, words: &Words, shape: &OpShape) -> bool {
    let [n, h, w, c] = shape.input;
    if n != 1 || h == 0 || w == 0 || c == 0 {
        return false;
    }
    match code {
        opcode::MEAN | opcode::SUM => {
            let mask = MeanParams::from_words(words).axis_mask;
            mask & 0b10 != 0 && mask >> 4 == 0
        }
        opcode::AVERAGE_POOL_2D => {
            let p = WindowParams::from_words(words);
            let covers = |f: i32, d: usize| usize::try_from(f).is_ok_and(|f| f >= d);
            p.pad_h == 0
                && p.pad_w == 0
                && covers(p.filter_h, h)
                && covers(p.filter_w, w)
                && shape.out_elements == c
        }
        opcode::FULLY_CONNECTED => {
            let [depth, accum] = shape.filter;
            depth > 0
                && shape.out_elements == depth
                && Some(accum) == h.checked_mul(w).and_then(|hw| hw.checked_mul(c))
                && matches!(shape.out_dtype, dtype::I8 | dtype::F32)
        }
        _ => false,
    }
}

/// `true` when a RESHAPE of a batch-1 NHWC map (`input`'s dims) read by
/// op `reader` alone, as its input 0, folds into it: the reader is a
/// FULLY_CONNECTED that reduces ([`reduces`]) the map itself (`shape`:
/// its operands with `input` as its input 0). A RESHAPE keeps the
/// elements' order, so the vector the classifier reads is the map's rows
/// one after another.
pub fn flatten_folds(reader: u8, words: &Words, shape: &OpShape) -> bool {
    reader == opcode::FULLY_CONNECTED && reduces(reader, words, shape)
}

/// Bytes of the accumulator a reducer needs besides its own scratch, for
/// `outputs` output elements: a global AVERAGE_POOL_2D's per-channel sums
/// and a FULLY_CONNECTED's dot products (an `i32` or an `f32` each; their
/// whole kernels keep them in registers); MEAN and SUM sum in the scratch
/// their whole kernel uses.
pub fn accumulator_bytes(code: u8, outputs: usize) -> usize {
    match code {
        opcode::AVERAGE_POOL_2D | opcode::FULLY_CONNECTED => outputs.saturating_mul(4),
        _ => 0,
    }
}

/// One op of a stage as the schedule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StageNode {
    /// Rows of its output.
    pub out_h: usize,
    /// Its output is written whole (a stage output): no row is dropped.
    pub whole: bool,
    /// The inputs produced by earlier ops of the stage: (that op's position
    /// in the stage, row map).
    pub pulls: [Option<(usize, RowMap)>; MAX_PULLS],
}

/// Rows `[base, next)` of one op's output are held (in its ring, or in its
/// whole output where `base` stays 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowState {
    pub base: usize,
    pub next: usize,
}

impl RowState {
    /// Rows held.
    pub fn held(&self) -> usize {
        self.next - self.base
    }
}

/// What the schedule does, row by row: the runtime computes and moves rows,
/// core only counts them.
pub trait RowSink {
    type Error;
    /// The error for a stage the schedule cannot run (`what` says why).
    fn invalid(&self, what: &'static str) -> Self::Error;
    /// Op `k`'s ring drops its first `n` rows (the rows after them move to
    /// its front); `before` is its state before the drop.
    fn drop_rows(&mut self, k: usize, n: usize, before: RowState) -> Result<(), Self::Error>;
    /// Computes row `r` of op `k` (its `next`) after the rows its pulls read
    /// are held; `states` gives every op's held rows.
    fn row(&mut self, k: usize, r: usize, states: &[RowState]) -> Result<(), Self::Error>;
}

/// A stage's schedule being run.
#[derive(Debug)]
pub struct Schedule<'n> {
    nodes: &'n [StageNode],
    state: [RowState; MAX_STAGE_OPS],
    /// Most rows each op held at once: its ring's rows.
    pub most: [usize; MAX_STAGE_OPS],
}

/// Why a stage's nodes cannot be scheduled.
pub const BAD_PULL: &str = "a banded op pulls rows from an op that is not before it in its stage";
/// See [`BAD_PULL`].
pub const BAD_HEIGHT: &str = "a banded op's rows do not match the rows its input's producer makes";
/// See [`BAD_PULL`].
pub const TOO_LONG: &str = "banded stage longer than MAX_STAGE_OPS";

impl<'n> Schedule<'n> {
    /// The schedule of `nodes`, checked: every pull from an earlier op,
    /// whose output has the rows the map reads.
    pub fn new(nodes: &'n [StageNode]) -> Result<Self, &'static str> {
        if nodes.len() > MAX_STAGE_OPS {
            return Err(TOO_LONG);
        }
        for (k, n) in nodes.iter().enumerate() {
            for &(p, map) in n.pulls.iter().flatten() {
                let producer = nodes.get(p).filter(|_| p < k).ok_or(BAD_PULL)?;
                if map.in_h() != producer.out_h {
                    return Err(BAD_HEIGHT);
                }
            }
        }
        Ok(Schedule {
            nodes,
            state: [RowState::default(); MAX_STAGE_OPS],
            most: [0; MAX_STAGE_OPS],
        })
    }

    /// The rows op `j`'s ring held at most, per op (after [`Schedule::run`]).
    pub fn rings(&self) -> &[usize] {
        self.most.get(..self.nodes.len()).unwrap_or(&[])
    }

    /// The lowest row of op `j` a consumer will still read: its next row's
    /// window; `None` when every consumer is done.
    fn need(&self, j: usize) -> Option<usize> {
        let mut lo: Option<usize> = None;
        for (k, n) in self.nodes.iter().enumerate().skip(j + 1) {
            let next = self.state.get(k).map_or(usize::MAX, |s| s.next);
            if next >= n.out_h {
                continue;
            }
            for (p, map) in n.pulls.iter().flatten() {
                if *p == j {
                    let l = map.rows(next).0;
                    lo = Some(lo.map_or(l, |x| x.min(l)));
                }
            }
        }
        lo
    }

    /// Makes op `j` hold its rows up to `hi`, first dropping those no
    /// consumer reads any more.
    ///
    /// This and [`Schedule::compute`] recurse through the stage's ops, so
    /// their frames hold indices and row numbers only, never a node: on a
    /// Cortex-M each level's frame is a few words.
    fn ensure<S: RowSink>(&mut self, j: usize, hi: usize, sink: &mut S) -> Result<(), S::Error> {
        let (whole, out_h) = match self.nodes.get(j) {
            Some(n) => (n.whole, n.out_h),
            None => return Err(sink.invalid(BAD_PULL)),
        };
        let st = *self.state.get(j).ok_or(sink.invalid(BAD_PULL))?;
        if !whole {
            let (base, next) = match self.need(j) {
                None => (st.next, st.next),
                // Rows no window reads (a stride above the filter) are skipped.
                Some(lo) if lo >= st.next => (lo, lo),
                Some(lo) => (lo.max(st.base), st.next),
            };
            if base > st.base && st.held() > 0 {
                sink.drop_rows(j, (base - st.base).min(st.held()), st)?;
            }
            if let Some(s) = self.state.get_mut(j) {
                *s = RowState { base, next };
            }
        }
        while self.state.get(j).is_some_and(|s| s.next < hi.min(out_h)) {
            self.compute(j, sink)?;
        }
        Ok(())
    }

    /// Computes op `k`'s next row, pulling the rows it reads first.
    fn compute<S: RowSink>(&mut self, k: usize, sink: &mut S) -> Result<(), S::Error> {
        let r = self.state.get(k).ok_or(sink.invalid(BAD_PULL))?.next;
        for s in 0..MAX_PULLS {
            let pull = self
                .nodes
                .get(k)
                .and_then(|n| n.pulls.get(s).copied().flatten())
                .map(|(p, map)| (p, map.rows(r).1));
            if let Some((p, hi)) = pull {
                self.ensure(p, hi, sink)?;
            }
        }
        sink.row(k, r, self.state.get(..self.nodes.len()).unwrap_or(&[]))?;
        if let (Some(s), Some(m)) = (self.state.get_mut(k), self.most.get_mut(k)) {
            s.next += 1;
            *m = (*m).max(s.held());
        }
        Ok(())
    }

    /// Runs the whole stage: every row of every whole output, the whole
    /// outputs advancing together in proportion to their heights.
    pub fn run<S: RowSink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        let tallest = self
            .nodes
            .iter()
            .filter(|n| n.whole)
            .map(|n| n.out_h)
            .max()
            .unwrap_or(0);
        for step in 1..=tallest {
            for k in 0..self.nodes.len() {
                let Some(n) = self.nodes.get(k).filter(|n| n.whole) else {
                    continue;
                };
                let target = (step * n.out_h).div_ceil(tallest);
                while self.state.get(k).is_some_and(|s| s.next < target) {
                    self.compute(k, sink)?;
                }
            }
        }
        Ok(())
    }
}

/// Why a stage's whole output may not be written over the tensor it reads.
pub const OVERWRITES_UNREAD: &str =
    "a banded stage's output would overwrite rows of its input that are still to be read";

/// A stage whose output `writer` (a whole output, `out_row` bytes a row)
/// is written over the bytes of arena tensor X (`x_row` bytes a row), which
/// op `reader` alone reads, by rows through `map`: X dies in the stage, so
/// its bytes can hold the output as soon as every row of X still to be
/// read lies after the bytes written (MCUNetV2's in-place output of a
/// patch stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Behind {
    pub reader: usize,
    pub map: RowMap,
    pub x_row: usize,
    pub writer: usize,
    pub out_row: usize,
}

/// Checks [`Behind`] by running the stage's schedule: every read of X
/// starts at or after the last byte the writer has written (the writer's
/// rows go to `r · out_row`, X's rows come from `r · x_row`; a row's reads
/// all happen before the next row is written). The writer must not be the
/// reader: a kernel may write an output row while it still reads the window.
pub fn writes_behind_reads(nodes: &[StageNode], b: Behind) -> Result<(), &'static str> {
    let whole = nodes.get(b.writer).is_some_and(|n| n.whole);
    if b.reader == b.writer || b.reader >= nodes.len() || !whole {
        return Err(OVERWRITES_UNREAD);
    }
    struct Track {
        b: Behind,
        written: usize,
    }
    impl RowSink for Track {
        type Error = &'static str;
        fn invalid(&self, what: &'static str) -> &'static str {
            what
        }
        fn drop_rows(&mut self, _: usize, _: usize, _: RowState) -> Result<(), &'static str> {
            Ok(())
        }
        fn row(&mut self, k: usize, r: usize, _: &[RowState]) -> Result<(), &'static str> {
            if k == self.b.reader {
                let (lo, hi) = self.b.map.rows(r);
                if hi > lo && lo.saturating_mul(self.b.x_row) < self.written {
                    return Err(OVERWRITES_UNREAD);
                }
            }
            if k == self.b.writer {
                self.written = (r + 1).saturating_mul(self.b.out_row);
            }
            Ok(())
        }
    }
    let mut s = Schedule::new(nodes)?;
    s.run(&mut Track { b, written: 0 })
}

/// A sink that only counts: the schedule's rings, for sizing and checking.
#[derive(Debug)]
pub struct Count;

impl RowSink for Count {
    type Error = &'static str;
    fn invalid(&self, what: &'static str) -> &'static str {
        what
    }
    fn drop_rows(&mut self, _: usize, _: usize, _: RowState) -> Result<(), &'static str> {
        Ok(())
    }
    fn row(&mut self, _: usize, _: usize, _: &[RowState]) -> Result<(), &'static str> {
        Ok(())
    }
}

/// Rows each op of `nodes` holds at most when the stage runs (0..: one per
/// op, whole outputs their full height): the rings' rows.
pub fn ring_rows(nodes: &[StageNode]) -> Result<[usize; MAX_STAGE_OPS], &'static str> {
    let mut s = Schedule::new(nodes)?;
    s.run(&mut Count)?;
    Ok(s.most)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(in_h: usize, out_h: usize, stride: i32, pad: i32, filter: i32) -> RowMap {
        RowMap::window(RowWindow {
            in_row: 1,
            out_row: 1,
            in_h,
            out_h,
            stride,
            pad,
            filter,
            dilation: 1,
        })
        .expect("a small window")
    }

    fn node(out_h: usize, whole: bool, pulls: &[(usize, RowMap)]) -> StageNode {
        let mut n = StageNode {
            out_h,
            whole,
            pulls: [None; MAX_PULLS],
        };
        for (slot, &p) in n.pulls.iter_mut().zip(pulls) {
            *slot = Some(p);
        }
        n
    }

    #[test]
    fn a_chain_holds_each_window() {
        // input → 1×1 (8 rows) → 3×3 SAME (8 rows, whole): the 1×1's ring
        // holds the 3×3's window, 3 rows.
        let nodes = [
            node(8, false, &[]),
            node(8, true, &[(0, window(8, 8, 1, 1, 3))]),
        ];
        let rings = ring_rows(&nodes).expect("schedules");
        assert_eq!(&rings[..2], &[3, 8]);
    }

    #[test]
    fn a_residual_skip_holds_the_rows_between_its_consumers() {
        // x (op 0) → expand 1×1 (1) → depthwise 3×3 (2) → project 1×1 (3)
        // → ADD(x, project) (4, whole). Row r of the ADD reads x's row r,
        // while the depthwise's window has pulled x's rows up to r + 1.
        let same = RowMap::Shift { top: 0, in_h: 6 };
        let nodes = [
            node(6, false, &[]),
            node(6, false, &[(0, same)]),
            node(6, false, &[(1, window(6, 6, 1, 1, 3))]),
            node(6, false, &[(2, same)]),
            node(6, true, &[(0, same), (3, same)]),
        ];
        let rings = ring_rows(&nodes).expect("schedules");
        // x: rows r..=r+1; expand: the 3-row window; the rest one row.
        assert_eq!(&rings[..5], &[2, 3, 1, 1, 6]);
    }

    #[test]
    fn pad_rows_read_nothing() {
        let pad = RowMap::Shift { top: 1, in_h: 4 };
        assert_eq!(pad.rows(0), (0, 0));
        assert_eq!(pad.rows(1), (0, 1));
        assert_eq!(pad.rows(4), (3, 4));
        assert_eq!(pad.rows(5), (4, 4));
        // input (4 rows) → PAD to 6 → 3×3 VALID stride 2 (2 rows, whole).
        let nodes = [
            node(4, false, &[]),
            node(6, false, &[(0, pad)]),
            node(2, true, &[(1, window(6, 2, 2, 0, 3))]),
        ];
        let rings = ring_rows(&nodes).expect("schedules");
        assert_eq!(&rings[..3], &[1, 3, 2]);
    }

    #[test]
    fn several_whole_outputs_advance_together() {
        // x (8 rows, streamed) read by an element-wise op (8 rows) and a
        // 3×3 VALID stride-2 window (4 rows), both stage outputs: driven in
        // step, x holds one window (3 rows), not the whole map.
        let nodes = [
            node(8, false, &[]),
            node(8, true, &[(0, RowMap::Shift { top: 0, in_h: 8 })]),
            node(3, true, &[(0, window(8, 3, 2, 0, 3))]),
        ];
        let rings = ring_rows(&nodes).expect("schedules");
        assert_eq!(&rings[..3], &[3, 8, 3]);
    }

    #[test]
    fn an_upsampling_holds_the_rows_its_neighbours_read() {
        // x (4 rows) → RESIZE_BILINEAR ×2, half-pixel (8 rows) → 3×3 SAME
        // (8 rows, whole). The resize's output row r reads x's rows around
        // (r + 0.5)/2 − 0.5: at most two, so x's ring holds two rows, and
        // the resize's ring the 3×3 window.
        let up = RowMap::Resize(ResizeRows {
            method: crate::resize::Method::BilinearQ10,
            in_h: 4,
            out_h: 8,
            align_corners: false,
            half_pixel_centers: true,
        });
        let nodes = [
            node(4, false, &[]),
            node(8, false, &[(0, up)]),
            node(8, true, &[(1, window(8, 8, 1, 1, 3))]),
        ];
        let rings = ring_rows(&nodes).expect("schedules");
        assert_eq!(&rings[..3], &[2, 3, 8]);
    }

    #[test]
    fn only_zero_point_pads_before_convolutions_fold() {
        use crate::params::PAD_REFLECT;
        let mut p = PadParams {
            rank: 4,
            mode: PAD_CONSTANT,
            ..PadParams::default()
        };
        (p.before[1], p.before[2], p.after[1], p.after[2]) = (1, 2, 3, 4);
        let fold = |code, p: &PadParams, dt, same, reader| pad_fold(code, p, dt, same, reader);
        let (pad, conv, dw) = (opcode::PAD, opcode::CONV_2D, opcode::DEPTHWISE_CONV_2D);
        // The padding above and to the left moves into the window's.
        assert_eq!(
            fold(pad, &p, dtype::I8, true, conv),
            Some(PadFold { top: 1, left: 2 })
        );
        assert!(fold(pad, &p, dtype::I16, true, dw).is_some());
        // PADV2's value, float, a requantizing PAD, a pool reading it.
        assert!(fold(opcode::PADV2, &p, dtype::I8, true, conv).is_none());
        assert!(fold(pad, &p, dtype::F32, true, conv).is_none());
        assert!(fold(pad, &p, dtype::I8, false, conv).is_none());
        assert!(fold(pad, &p, dtype::I8, true, opcode::MAX_POOL_2D).is_none());
        assert!(fold(pad, &p, dtype::I8, true, opcode::AVERAGE_POOL_2D).is_none());
        // Padding channels or the batch, a mirror pad, a negative pad.
        for change in 0..4 {
            let mut q = p;
            match change {
                0 => q.after[3] = 1,
                1 => q.before[0] = 1,
                2 => q.mode = PAD_REFLECT,
                _ => q.before[2] = -1,
            }
            assert!(fold(pad, &q, dtype::I8, true, conv).is_none(), "{change}");
        }
        // The folded window reads the PAD's input: its rows and their bytes.
        let w = RowWindow {
            in_row: 40,
            out_row: 8,
            in_h: 12,
            out_h: 5,
            stride: 2,
            pad: 0,
            filter: 3,
            dilation: 1,
        };
        let f = PadFold { top: 1, left: 1 };
        let folded = f.window(w, 10, 30);
        assert_eq!((folded.in_h, folded.in_row, folded.pad), (10, 30, 1));
        // Row 0 reads padded rows 0..3: the padding row, input rows 0 and 1.
        assert_eq!(folded.window(0), (0, 2));
    }

    #[test]
    fn an_output_may_follow_its_input_down() {
        // x (arena, 8 rows) → 1×1 (op 0) → 3×3 SAME (op 1) → 1×1 (op 2,
        // whole): the 3×3's window has made op 0 read x's row r + 1 before
        // the output's row r is written, so a row of the output no larger
        // than a row of x stays behind the rows still to be read.
        let same = RowMap::Shift { top: 0, in_h: 8 };
        let nodes = [
            node(8, false, &[]),
            node(8, false, &[(0, window(8, 8, 1, 1, 3))]),
            node(8, true, &[(1, same)]),
        ];
        let b = Behind {
            reader: 0,
            map: same,
            x_row: 16,
            writer: 2,
            out_row: 16,
        };
        assert_eq!(writes_behind_reads(&nodes, b), Ok(()));
        // A wider output row overtakes the rows still to be read.
        let wide = Behind { out_row: 40, ..b };
        assert_eq!(writes_behind_reads(&nodes, wide), Err(OVERWRITES_UNREAD));
        // A 3×3 SAME reading x itself still reads row r when the output's
        // row r is written.
        let two = [node(8, false, &[]), node(8, true, &[(0, same)])];
        let direct = Behind {
            map: window(8, 8, 1, 1, 3),
            writer: 1,
            ..b
        };
        assert_eq!(writes_behind_reads(&two, direct), Err(OVERWRITES_UNREAD));
        // Stride 2 halves the output's rows: twice the bytes a row still fits.
        let half = [
            node(4, false, &[]),
            node(4, true, &[(0, RowMap::Shift { top: 0, in_h: 4 })]),
        ];
        let s2 = Behind {
            map: window(8, 4, 2, 0, 3),
            writer: 1,
            out_row: 32,
            ..b
        };
        assert_eq!(writes_behind_reads(&half, s2), Ok(()));
        assert_eq!(
            writes_behind_reads(&half, Behind { out_row: 33, ..s2 }),
            Err(OVERWRITES_UNREAD)
        );
        // The writer reading x itself, or a writer that is not whole.
        assert_eq!(
            writes_behind_reads(&nodes, Behind { reader: 2, ..b }),
            Err(OVERWRITES_UNREAD)
        );
        assert_eq!(
            writes_behind_reads(&nodes, Behind { writer: 1, ..b }),
            Err(OVERWRITES_UNREAD)
        );
    }

    #[test]
    fn a_classifier_reduces_exactly_the_map_it_reads_whole() {
        let words = [0; crate::OP_PARAMS];
        let fc = |input, filter, out_elements, out_dtype| OpShape {
            input,
            filter,
            out_elements,
            out_dtype,
        };
        let ok = fc([1, 25, 20, 8], [4, 4000], 4, dtype::I8);
        assert!(reduces(opcode::FULLY_CONNECTED, &words, &ok));
        assert!(flatten_folds(opcode::FULLY_CONNECTED, &words, &ok));
        assert!(reduces(
            opcode::FULLY_CONNECTED,
            &words,
            &OpShape {
                out_dtype: dtype::F32,
                ..ok
            }
        ));
        // A filter over part of the map (several batches), another depth,
        // a batch of two maps, an int16 classifier, no constant filter.
        for bad in [
            OpShape {
                filter: [4, 160],
                ..ok
            },
            OpShape {
                out_elements: 8,
                ..ok
            },
            OpShape {
                input: [2, 25, 20, 8],
                ..ok
            },
            OpShape {
                out_dtype: dtype::I16,
                ..ok
            },
            OpShape {
                filter: [0, 0],
                ..ok
            },
        ] {
            assert!(!reduces(opcode::FULLY_CONNECTED, &words, &bad), "{bad:?}");
            assert!(stage_kind(opcode::FULLY_CONNECTED, &words, &bad).is_none());
        }
        // Only a FULLY_CONNECTED takes a flattened map.
        assert!(!flatten_folds(opcode::MEAN, &words, &ok));
        assert_eq!(
            stage_kind(opcode::RESHAPE, &words, &ok),
            Some(opcode::BandRows::Flatten)
        );
    }

    #[test]
    fn bad_stages_are_refused() {
        let same = RowMap::Shift { top: 0, in_h: 4 };
        // A pull from a later op, and rows the producer does not make.
        assert_eq!(
            ring_rows(&[node(4, true, &[(1, same)]), node(4, false, &[])]).err(),
            Some(BAD_PULL)
        );
        assert_eq!(
            ring_rows(&[node(5, false, &[]), node(4, true, &[(0, same)])]).err(),
            Some(BAD_HEIGHT)
        );
        let many = [node(1, false, &[]); MAX_STAGE_OPS + 1];
        assert_eq!(ring_rows(&many).err(), Some(TOO_LONG));
    }
}
