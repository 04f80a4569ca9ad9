//! TFLM's size arithmetic for windowed and sliced operators: one copy for
//! core's what-if shape propagation and lowering and the runtime's own
//! validation of a program image, so none of them can derive a different
//! size. Needs no allocator.
//! Arithmetic is widened to `i64`: a hostile stride or dilation yields a size
//! the caller refuses, never an overflow.

/// `(filter − 1) × dilation + 1`: the extent a dilated filter covers.
pub fn effective_filter(filter: i64, dilation: i64) -> i64 {
    filter
        .saturating_sub(1)
        .saturating_mul(dilation)
        .saturating_add(1)
}

/// TFLM's `ComputeOutSize` with SAME padding; 0 when `stride` is not positive.
pub fn out_same(image: i64, stride: i64) -> i64 {
    if stride <= 0 {
        return 0;
    }
    image.saturating_add(stride - 1) / stride
}

/// TFLM's `ComputeOutSize` with VALID padding; 0 when `stride` is not positive.
pub fn out_valid(image: i64, filter: i64, stride: i64, dilation: i64) -> i64 {
    if stride <= 0 {
        return 0;
    }
    image
        .saturating_add(stride)
        .saturating_sub(effective_filter(filter, dilation))
        / stride
}

/// TFLM's `ComputePaddingWithOffset` without the offset (reference kernels do
/// not use it): the padding before the first input element.
pub fn padding_before(image: i64, filter: i64, stride: i64, dilation: i64, out: i64) -> i64 {
    let total = out
        .saturating_sub(1)
        .saturating_mul(stride)
        .saturating_add(effective_filter(filter, dilation))
        .saturating_sub(image);
    total.max(0) / 2
}

/// Elements a strided slice takes from `start` up to (not including) `stop`.
pub fn slice_count(start: i64, stop: i64, stride: i64) -> i64 {
    let (span, step) = if stride > 0 {
        (stop.saturating_sub(start), stride)
    } else if stride < 0 {
        (start.saturating_sub(stop), stride.saturating_neg())
    } else {
        return 0;
    };
    (span.saturating_add(step - 1) / step).max(0)
}

/// Padding scheme of convolutions and pools (the schema's `Padding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Padding {
    /// Output size `ceil(image / stride)`, padded evenly (extra after).
    #[default]
    Same,
    /// No padding: only whole windows.
    Valid,
}

/// [`out_same`] or [`out_valid`] for a model's padding, saturated to `i32`.
pub fn out_size(padding: Padding, image: i32, filter: i32, stride: i32, dilation: i32) -> i32 {
    let (image, filter, stride, dilation) = (
        i64::from(image),
        i64::from(filter),
        i64::from(stride),
        i64::from(dilation),
    );
    saturate(match padding {
        Padding::Same => out_same(image, stride),
        Padding::Valid => out_valid(image, filter, stride, dilation),
    })
}

/// One axis of STRIDED_SLICE as TFLM resolves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SliceAxis {
    /// First index taken, after masks, negative indexing and clamping.
    pub start: i32,
    /// Index to stop before (exclusive), likewise resolved.
    pub stop: i32,
    /// Elements taken along the axis.
    pub count: i32,
}

/// Resolves one STRIDED_SLICE axis of extent `size`; `None` for stride 0.
/// A masked begin or end means "from the edge" in the stride's direction;
/// a shrunk axis takes exactly the element at `start`.
pub fn slice_axis(
    size: i32,
    begin: i32,
    end: i32,
    stride: i32,
    begin_masked: bool,
    end_masked: bool,
    shrink: bool,
) -> Option<SliceAxis> {
    if stride == 0 {
        return None;
    }
    let clamp = |v: i32| {
        if stride > 0 {
            v.clamp(0, size.max(0))
        } else {
            v.clamp(-1, size.max(0) - 1)
        }
    };
    let resolve = |v: i32, masked: bool, from_start: bool| {
        let v = match (masked, (stride > 0) == from_start) {
            (true, true) => i32::MIN,
            (true, false) => i32::MAX,
            (false, _) => v,
        };
        clamp(if v < 0 { v.saturating_add(size) } else { v })
    };
    if size <= 0 {
        return Some(SliceAxis {
            start: 0,
            stop: 0,
            count: 0,
        });
    }
    let start = resolve(begin, begin_masked, true);
    let stop = if shrink {
        start.saturating_add(1)
    } else {
        resolve(end, end_masked, false)
    };
    Some(SliceAxis {
        start,
        stop,
        count: saturate(slice_count(
            i64::from(start),
            i64::from(stop),
            i64::from(stride),
        )),
    })
}

fn saturate(v: i64) -> i32 {
    v.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_size_follows_tflm() {
        // Values worked by hand from TFLM's ComputeOutSize.
        assert_eq!(out_size(Padding::Same, 16, 3, 2, 1), 8);
        assert_eq!(out_size(Padding::Same, 15, 3, 2, 1), 8);
        assert_eq!(out_size(Padding::Valid, 16, 3, 2, 1), 7);
        assert_eq!(out_size(Padding::Valid, 10, 3, 1, 2), 6);
        assert_eq!(out_size(Padding::Valid, 2, 3, 1, 1), 0);
        assert_eq!(out_size(Padding::Same, 16, 3, 0, 1), 0);
        assert_eq!(out_size(Padding::Same, 16, 3, -2, 1), 0);
    }

    #[test]
    fn out_size_does_not_overflow_on_hostile_parameters() {
        assert!(out_size(Padding::Valid, 16, i32::MAX, 1, i32::MAX) < 0);
        assert_eq!(out_size(Padding::Same, i32::MAX, 1, i32::MAX, 1), 1);
    }

    #[test]
    fn padding_follows_tflm() {
        // SAME, 16 -> 8 with stride 2 and a 3x3 filter: total padding 1, so 0 before.
        assert_eq!(padding_before(16, 3, 2, 1, 8), 0);
        // SAME, stride 1, 3x3: 1 before.
        assert_eq!(padding_before(8, 3, 1, 1, 8), 1);
        // VALID never pads.
        assert_eq!(padding_before(10, 3, 1, 2, 6), 0);
        // Extreme parameters saturate instead of overflowing.
        let max = i64::from(i32::MAX);
        assert!(padding_before(max, max, max, max, max) > 0);
        assert_eq!(
            padding_before(0, i64::MAX, i64::MAX, i64::MAX, i64::MAX),
            i64::MAX / 2
        );
    }

    #[test]
    fn slice_count_counts_both_directions() {
        assert_eq!(slice_count(1, 7, 2), 3);
        assert_eq!(slice_count(9, -1, -1), 10);
        assert_eq!(slice_count(7, 2, 1), 0);
        assert_eq!(slice_count(2, 7, -1), 0);
        assert_eq!(slice_count(0, 5, 0), 0);
        assert_eq!(slice_count(i64::MIN, i64::MAX, i64::MIN), 0);
        assert_eq!(slice_count(i64::MIN, i64::MAX, 1), i64::MAX);
    }

    fn axis(size: i32, b: i32, e: i32, s: i32, bm: bool, em: bool, sh: bool) -> (i32, i32, i32) {
        let a = slice_axis(size, b, e, s, bm, em, sh).expect("stride is not 0");
        (a.start, a.stop, a.count)
    }

    #[test]
    fn slice_axis_resolves_like_numpy() {
        // x[1:7:2] of 10 elements: 1, 3, 5.
        assert_eq!(axis(10, 1, 7, 2, false, false, false), (1, 7, 3));
        // x[-3:] : 7, 8, 9.
        assert_eq!(axis(10, -3, 0, 1, false, true, false), (7, 10, 3));
        // x[::-1]: all ten, backwards.
        assert_eq!(axis(10, 0, 0, -1, true, true, false), (9, -1, 10));
        // x[8:2:-3]: 8, 5.
        assert_eq!(axis(10, 8, 2, -3, false, false, false), (8, 2, 2));
        // Out-of-range indices clamp; empty ranges take nothing.
        assert_eq!(axis(10, -100, 100, 1, false, false, false), (0, 10, 10));
        assert_eq!(axis(10, 7, 2, 1, false, false, false), (7, 2, 0));
        // A shrunk axis takes one element.
        assert_eq!(axis(10, 4, 0, 1, false, false, true), (4, 5, 1));
        assert_eq!(axis(10, -1, 0, 1, false, false, true), (9, 10, 1));
        assert_eq!(slice_axis(10, 0, 1, 0, false, false, false), None);
    }

    #[test]
    fn slice_axis_extremes_do_not_overflow() {
        for s in [i32::MIN, i32::MAX, -1, 1] {
            for b in [i32::MIN, i32::MAX, 0] {
                let a = slice_axis(i32::MAX, b, b, s, false, false, false).expect("stride");
                assert!(a.count >= 0);
            }
        }
        assert_eq!(axis(5, 0, 5, i32::MAX, false, false, false), (0, 5, 1));
        assert_eq!(axis(5, 4, -6, i32::MIN, false, false, false), (4, -1, 1));
    }
}

/// The input rows `[lo, hi)` that output rows `[r0, r1)` of a windowed op
/// read (stride, padding before, filter height and dilation along H, input
/// height `image`): rows outside `[0, image)` are padding, so they are
/// clipped. Banded execution feeds a kernel exactly these rows.
pub fn window_rows(
    r0: i64,
    r1: i64,
    stride: i64,
    pad: i64,
    filter: i64,
    dilation: i64,
    image: i64,
) -> (i64, i64) {
    let lo = r0
        .saturating_mul(stride)
        .saturating_sub(pad)
        .clamp(0, image);
    let last = r1
        .saturating_sub(1)
        .saturating_mul(stride)
        .saturating_sub(pad)
        .saturating_add(effective_filter(filter, dilation));
    (lo, last.clamp(lo, image))
}

/// Height-wise geometry of a windowed operator (CONV_2D, DEPTHWISE_CONV_2D,
/// the pools) on batch-1 NHWC tensors: what running it row by row needs,
/// for banded stages (a windowed op's row map, [`crate::stage::RowMap`]) and
/// for in-place execution alike. Core sizes the rings from it and the
/// runtime runs and checks them with it, so the two cannot disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowWindow {
    /// Bytes of one input row and of one output row (W × C × element).
    pub in_row: usize,
    pub out_row: usize,
    /// Input and output heights.
    pub in_h: usize,
    pub out_h: usize,
    pub stride: i32,
    /// Padding rows above the input.
    pub pad: i32,
    pub filter: i32,
    pub dilation: i32,
}

impl RowWindow {
    /// Input rows `[lo, hi)` output row `r` reads ([`window_rows`]).
    pub fn window(&self, r: usize) -> (usize, usize) {
        let (lo, hi) = window_rows(
            r as i64,
            r as i64 + 1,
            i64::from(self.stride),
            i64::from(self.pad),
            i64::from(self.filter),
            i64::from(self.dilation),
            self.in_h as i64,
        );
        (lo.max(0) as usize, hi.max(0) as usize)
    }

    /// In-place execution over the input, output row by output row: how
    /// many output rows may already be written over the input before row `r`
    /// is computed. Output row `c` takes bytes `[c·out_row, (c+1)·out_row)`
    /// of the input's buffer; rows `r..` read input rows from `lo(r)` on
    /// (windows only move down), so row `c` may be written once its bytes
    /// end at or below `lo(r)·in_row`. Never more than `r`: a row is written
    /// after it is computed.
    pub fn written_before(&self, r: usize) -> usize {
        if self.out_row == 0 {
            return r;
        }
        let free = self.window(r).0.saturating_mul(self.in_row);
        (free / self.out_row).min(r)
    }

    /// Output rows an in-place run holds computed but not yet written (the
    /// ring of [`RowWindow::written_before`]'s schedule): the most, over the
    /// rows, of those computed since the last row written, the row itself
    /// included. 0 for an empty output.
    pub fn in_place_ring_rows(&self) -> usize {
        (0..self.out_h)
            .map(|r| r + 1 - self.written_before(r))
            .max()
            .unwrap_or(0)
    }

    /// Bytes of that ring ([`RowWindow::in_place_ring_rows`] whole output
    /// rows); `None` when they overflow.
    pub fn in_place_ring_bytes(&self) -> Option<usize> {
        self.in_place_ring_rows().checked_mul(self.out_row)
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    #[test]
    fn rows_of_a_3x3_same_window() {
        // 3×3, stride 1, pad 1 over 5 rows: row 0 reads rows 0..2 (row −1 is padding).
        assert_eq!(window_rows(0, 1, 1, 1, 3, 1, 5), (0, 2));
        assert_eq!(window_rows(2, 3, 1, 1, 3, 1, 5), (1, 4));
        assert_eq!(window_rows(4, 5, 1, 1, 3, 1, 5), (3, 5));
        assert_eq!(window_rows(0, 5, 1, 1, 3, 1, 5), (0, 5));
        // Stride 2, pad 0 (TFLM's SAME for 48 → 24): row 23 reads 46..48.
        assert_eq!(window_rows(23, 24, 2, 0, 3, 1, 48), (46, 48));
        // Dilation 2: a 3-tap filter spans 5 rows.
        assert_eq!(window_rows(1, 2, 1, 2, 3, 2, 8), (0, 4));
        assert_eq!(effective_filter(3, 2), 5);
    }

    fn rows(
        in_h: usize,
        out_h: usize,
        (in_row, out_row): (usize, usize),
        s: i32,
        pad: i32,
    ) -> RowWindow {
        RowWindow {
            in_row,
            out_row,
            in_h,
            out_h,
            stride: s,
            pad,
            filter: 3,
            dilation: 1,
        }
    }

    #[test]
    fn in_place_rings_by_hand() {
        // 3×3 SAME stride 1, rows of equal size: row r reads r − 1..r + 2, so
        // rows 0..=r − 2 are written before it (r − 1 of them), and two wait.
        let same = rows(6, 6, (48, 48), 1, 1);
        assert_eq!(
            (0..6)
                .map(|r| same.written_before(r))
                .collect::<std::vec::Vec<_>>(),
            [0, 0, 1, 2, 3, 4]
        );
        assert_eq!(same.in_place_ring_rows(), 2);
        // VALID stride 1 (6 → 4 rows, narrower rows): row r reads from row r,
        // which is past every byte of output rows before r, so one row waits.
        assert_eq!(rows(6, 4, (48, 32), 1, 0).in_place_ring_rows(), 1);
        // Stride 2, pad 0 (TFLM's SAME for 8 → 4): half-width rows.
        let s2 = rows(8, 4, (64, 32), 2, 0);
        assert_eq!(
            (0..4)
                .map(|r| s2.written_before(r))
                .collect::<std::vec::Vec<_>>(),
            [0, 1, 2, 3]
        );
        assert_eq!(s2.in_place_ring_rows(), 1);
        // Output rows wider than input rows (depth multiplier 2, pad 1): row
        // r may take bytes only below lo(r)·in_row, so more rows wait.
        let wide = rows(8, 8, (16, 32), 1, 1);
        assert_eq!(wide.written_before(7), 3);
        assert_eq!(wide.in_place_ring_rows(), 5);
        assert_eq!(rows(0, 0, (0, 0), 1, 1).in_place_ring_rows(), 0);
    }
}
