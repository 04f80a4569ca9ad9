//! TFLM's source arithmetic for RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR
//! (`reference/resize_nearest_neighbor.h`, `reference/resize_bilinear.h`,
//! tflite-micro 90b983c2): which input row or column an output index reads.
//! One copy for the runtime's kernels and for a banded stage's row map
//! ([`crate::stage::RowMap::Resize`]), so the rows a stage holds are the
//! rows the kernel reads.

use crate::dtype;
use crate::opcode;
use crate::params::ResizeParams;

/// TFLM's `GetNearestNeighbor`: the source index of output index `at`,
/// computed in float as TFLM does, so the rounding is the same.
pub fn nearest(at: usize, in_size: usize, out_size: usize, align: bool, half: bool) -> usize {
    let scale = if align && out_size > 1 {
        (in_size as f32 - 1.0) / (out_size as f32 - 1.0)
    } else {
        in_size as f32 / out_size as f32
    };
    let offset = if half { 0.5f32 } else { 0.0 };
    let v = (at as f32 + offset) * scale;
    // TfLiteRound rounds half away from zero; the values are never negative here.
    let picked = if align {
        libm::roundf(v) as i64
    } else {
        libm::floorf(v) as i64
    };
    picked.clamp(0, in_size as i64 - 1) as usize
}

/// Float RESIZE_BILINEAR's scale from `in_size` to `out_size`.
pub fn bilinear_scale_f32(in_size: i32, out_size: usize, align: bool) -> f32 {
    if align && out_size > 1 {
        (in_size - 1) as f32 / (out_size - 1) as f32
    } else {
        in_size as f32 / out_size as f32
    }
}

/// Float `ComputeInterpolationValues`: output index `v`'s source coordinate
/// and its two neighbours `(scaled, lo, hi)` in an axis of `size`.
pub fn bilinear_source_f32(v: usize, scale: f32, size: i32, half: bool) -> (f32, i32, i32) {
    let scaled = if half {
        (v as f32 + 0.5) * scale - 0.5
    } else {
        v as f32 * scale
    };
    let lo = (libm::floorf(scaled) as i32).max(0);
    let hi = (libm::ceilf(scaled) as i32).min(size - 1);
    (scaled, lo, hi)
}

/// Quantized RESIZE_BILINEAR's scale in 1/1024 units.
pub fn bilinear_scale_q10(in_size: i32, out_size: usize, align: bool) -> i32 {
    let o = out_size as i32;
    if align && o > 1 {
        ((1 << 10) * (in_size - 1) + (o - 1) / 2) / (o - 1)
    } else {
        ((1 << 10) * in_size + o / 2) / o
    }
}

/// Quantized `ComputeInterpolationValuesInteger`: `(scaled, lo, hi)` in
/// 1/1024 units (`scaled`) and indices.
pub fn bilinear_source_q10(v: usize, scale: i32, size: i32, half: bool) -> (i32, i32, i32) {
    let v = v as i32;
    let scaled = if half {
        v * scale + scale / 2 - (1 << 9)
    } else {
        v * scale
    };
    let lo = (scaled / (1 << 10)).max(0);
    let hi = ((scaled + (1 << 10) - 1) / (1 << 10)).min(size - 1);
    (scaled, lo, hi)
}

/// How a resize picks its source rows: the kernel's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Nearest,
    /// RESIZE_BILINEAR on float32.
    BilinearF32,
    /// RESIZE_BILINEAR on int8 (10-bit fixed point).
    BilinearQ10,
}

/// The input rows each output row of a resize reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResizeRows {
    pub method: Method,
    pub in_h: usize,
    pub out_h: usize,
    pub align_corners: bool,
    pub half_pixel_centers: bool,
}

impl ResizeRows {
    /// The rows of resize `code` (RESIZE_NEAREST_NEIGHBOR or
    /// RESIZE_BILINEAR) on an input of element type `dtype` (an image
    /// code), as its kernel computes them; `None` for another op or an
    /// empty axis.
    pub fn of(
        code: u8,
        dtype: i8,
        p: ResizeParams,
        in_h: usize,
        out_h: usize,
    ) -> Option<ResizeRows> {
        let method = match code {
            opcode::RESIZE_NEAREST_NEIGHBOR => Method::Nearest,
            opcode::RESIZE_BILINEAR if dtype == dtype::F32 => Method::BilinearF32,
            opcode::RESIZE_BILINEAR => Method::BilinearQ10,
            _ => return None,
        };
        (in_h > 0 && out_h > 0 && i32::try_from(in_h).is_ok()).then_some(ResizeRows {
            method,
            in_h,
            out_h,
            align_corners: p.align_corners,
            half_pixel_centers: p.half_pixel_centers,
        })
    }

    /// Input rows `[lo, hi)` output row `r` reads.
    pub fn rows(&self, r: usize) -> (usize, usize) {
        let (align, half, h) = (
            self.align_corners,
            self.half_pixel_centers,
            self.in_h as i32,
        );
        let (lo, hi) = match self.method {
            Method::Nearest => {
                let y = nearest(r, self.in_h, self.out_h, align, half) as i32;
                (y, y)
            }
            Method::BilinearF32 => {
                let s = bilinear_scale_f32(h, self.out_h, align);
                let (_, lo, hi) = bilinear_source_f32(r, s, h, half);
                (lo, hi)
            }
            Method::BilinearQ10 => {
                let s = bilinear_scale_q10(h, self.out_h, align);
                let (_, lo, hi) = bilinear_source_q10(r, s, h, half);
                (lo, hi)
            }
        };
        let clip = |v: i32| (v.max(0) as usize).min(self.in_h);
        (clip(lo.min(hi)), clip(lo.max(hi) + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(method: Method, in_h: usize, out_h: usize, align: bool, half: bool) -> ResizeRows {
        ResizeRows {
            method,
            in_h,
            out_h,
            align_corners: align,
            half_pixel_centers: half,
        }
    }

    #[test]
    fn nearest_doubling_reads_each_row_twice() {
        let m = rows(Method::Nearest, 4, 8, false, false);
        let got: [(usize, usize); 8] = core::array::from_fn(|r| m.rows(r));
        assert_eq!(
            got,
            [
                (0, 1),
                (0, 1),
                (1, 2),
                (1, 2),
                (2, 3),
                (2, 3),
                (3, 4),
                (3, 4)
            ]
        );
        // Half-pixel centres: (r + 0.5) / 2, floored.
        let m = rows(Method::Nearest, 4, 8, false, true);
        assert_eq!(m.rows(1), (0, 1));
        assert_eq!(m.rows(7), (3, 4));
        // Aligned corners round (3·r/7): row 4 → 1.714 → 2.
        let m = rows(Method::Nearest, 4, 8, true, false);
        assert_eq!(m.rows(4), (2, 3));
        assert_eq!(m.rows(7), (3, 4));
    }

    #[test]
    fn bilinear_reads_the_two_neighbours() {
        // ×2, half-pixel: row r samples (r + 0.5)/2 − 0.5.
        for method in [Method::BilinearF32, Method::BilinearQ10] {
            let m = rows(method, 4, 8, false, true);
            assert_eq!(m.rows(0), (0, 1), "{method:?}"); // −0.25: clamped
            assert_eq!(m.rows(1), (0, 2), "{method:?}"); // 0.25
            assert_eq!(m.rows(6), (2, 4), "{method:?}"); // 2.75
            assert_eq!(m.rows(7), (3, 4), "{method:?}"); // 3.25: clamped
            // Without half-pixel centres, even rows land on one row.
            let m = rows(method, 4, 8, false, false);
            assert_eq!(m.rows(2), (1, 2), "{method:?}");
            assert_eq!(m.rows(3), (1, 3), "{method:?}");
        }
    }

    #[test]
    fn only_resizes_have_rows() {
        let p = ResizeParams {
            align_corners: false,
            half_pixel_centers: false,
        };
        assert!(ResizeRows::of(opcode::CONV_2D, dtype::I8, p, 4, 8).is_none());
        assert!(ResizeRows::of(opcode::RESIZE_BILINEAR, dtype::I8, p, 0, 8).is_none());
        let f = ResizeRows::of(opcode::RESIZE_BILINEAR, dtype::F32, p, 4, 8);
        assert_eq!(f.map(|m| m.method), Some(Method::BilinearF32));
    }
}
