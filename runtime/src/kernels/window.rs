//! The sliding window of CONV_2D, DEPTHWISE_CONV_2D and the pools: Prepare's
//! check that the window parameters agree with the tensors, and the geometry
//! Eval walks.

use microarena_image::geometry;
use microarena_image::params::WindowParams;

use super::context::{Ctx, Prep};
use crate::error::Error;
use crate::image::TensorInfo;

/// TFLM's output size for SAME or VALID padding, and its padding
/// (`ComputePaddingHeightWidth`), from core's `geometry`: the same arithmetic
/// that lowered the image, in `i64` so no parameter can overflow.
fn window_fits(input: i64, out: i64, filter: i64, stride: i64, dilation: i64, pad: i64) -> bool {
    geometry::effective_filter(filter, dilation) <= i64::from(i32::MAX)
        && (out == geometry::out_same(input, stride)
            || out == geometry::out_valid(input, filter, stride, dilation))
        && pad == geometry::padding_before(input, filter, stride, dilation, out)
}

/// CONV_2D and DEPTHWISE_CONV_2D: input, filter and output are NHWC (4-D)
/// with the same batch.
pub(crate) fn check_nhwc_filter(
    p: &Prep<'_, '_>,
    input: &TensorInfo,
    filter: &TensorInfo,
    out: &TensorInfo,
) -> Result<(), Error> {
    p.need(
        input.rank == 4 && filter.rank == 4 && out.rank == 4,
        "tensors must be 4-D",
    )?;
    p.need(input.dim(0) == out.dim(0), "batch mismatch")
}

/// CONV_2D, DEPTHWISE_CONV_2D and the pools: positive strides, dilations and
/// window, the window equal to the filter tensor's (when there is one), and
/// the output size and padding TFLM computes from them. The kernels loop over
/// the output and filter dims; these checks make the parameters they index
/// with agree with those dims.
pub(crate) fn check_window(
    p: &Prep<'_, '_>,
    input: &TensorInfo,
    out: &TensorInfo,
    filter: Option<&TensorInfo>,
) -> Result<(), Error> {
    let w: WindowParams = p.op.params();
    let (pad_w, pad_h, sw, sh, dw, dh, fw, fh) = (
        i64::from(w.pad_w),
        i64::from(w.pad_h),
        i64::from(w.stride_w),
        i64::from(w.stride_h),
        i64::from(w.dilation_w),
        i64::from(w.dilation_h),
        i64::from(w.filter_w),
        i64::from(w.filter_h),
    );
    p.check(
        sw > 0 && sh > 0 && dw > 0 && dh > 0 && fw > 0 && fh > 0,
        "strides, dilations and filter size must be positive",
    )?;
    match filter {
        Some(f) => p.check(
            fw == f.dim(2) as i64 && fh == f.dim(1) as i64,
            "filter size parameters differ from the filter tensor's dims",
        )?,
        None => p.check(dw == 1 && dh == 1, "pooling with a dilation")?,
    }
    let dim = |t: &TensorInfo, i| t.dim(i) as i64;
    p.check(
        window_fits(dim(input, 1), dim(out, 1), fh, sh, dh, pad_h)
            && window_fits(dim(input, 2), dim(out, 2), fw, sw, dw, pad_w),
        "output size or padding does not follow from the input, window, strides and dilations",
    )
}

/// Geometry shared by CONV_2D, DEPTHWISE_CONV_2D and the pools.
pub(crate) struct Geo {
    pub(crate) batches: usize,
    pub(crate) ih: i32,
    pub(crate) iw: i32,
    pub(crate) ic: usize,
    pub(crate) oh: usize,
    pub(crate) ow: usize,
    pub(crate) oc: usize,
    pub(crate) fh: i32,
    pub(crate) fw: i32,
    pub(crate) pad_w: i32,
    pub(crate) pad_h: i32,
    pub(crate) sw: i32,
    pub(crate) sh: i32,
    pub(crate) dw: i32,
    pub(crate) dh: i32,
}

impl Geo {
    /// The geometry of a pool: the window from the parameters.
    pub(crate) fn new(c: &Ctx<'_, '_>, input: &TensorInfo, out: &TensorInfo) -> Geo {
        let w: WindowParams = c.op.params();
        Geo {
            batches: out.dim(0),
            ih: input.dim(1) as i32,
            iw: input.dim(2) as i32,
            ic: input.dim(3),
            oh: out.dim(1),
            ow: out.dim(2),
            oc: out.dim(3),
            fw: w.filter_w,
            fh: w.filter_h,
            pad_w: w.pad_w,
            pad_h: w.pad_h,
            sw: w.stride_w,
            sh: w.stride_h,
            dw: w.dilation_w,
            dh: w.dilation_h,
        }
    }

    /// The geometry of a convolution: the window loops run over the filter
    /// tensor's dims (construction checked the parameters agree with them).
    pub(crate) fn with_filter(
        c: &Ctx<'_, '_>,
        input: &TensorInfo,
        out: &TensorInfo,
        filter: &TensorInfo,
    ) -> Geo {
        Geo {
            fh: filter.dim(1) as i32,
            fw: filter.dim(2) as i32,
            ..Geo::new(c, input, out)
        }
    }

    #[inline]
    pub(crate) fn in_index(&self, b: usize, y: i32, x: i32, ch: usize) -> usize {
        ((b * self.ih as usize + y as usize) * self.iw as usize + x as usize) * self.ic + ch
    }

    #[inline]
    pub(crate) fn out_index(&self, b: usize, y: usize, x: usize, ch: usize) -> usize {
        ((b * self.oh + y) * self.ow + x) * self.oc + ch
    }

    /// The taps `[lo, hi)` of a window axis starting at input index `i0`,
    /// `f` taps `d` apart, whose input index lies in `[0, n)`: the window's
    /// part inside the input (empty when none is).
    #[inline]
    pub(crate) fn taps_inside(&self, i0: i32, f: i32, d: i32, n: i32) -> (usize, usize) {
        // 32-bit arithmetic (Prepare bounds every term far below 2^31; a
        // 64-bit division is a libgcc call per pixel on a Cortex-M).
        let (f, d) = (f.max(0) as u32, d.max(1) as u32);
        // First k with i0 + k·d ≥ 0; last with i0 + k·d ≤ n − 1.
        let lo = if i0 < 0 {
            i0.unsigned_abs().div_ceil(d)
        } else {
            0
        };
        let last = n.wrapping_sub(1);
        let hi = if last < i0 {
            0
        } else {
            last.wrapping_sub(i0) as u32 / d + 1
        };
        let (lo, hi) = (lo.min(f), hi.min(f));
        (lo as usize, hi.max(lo) as usize)
    }

    /// The taps of output pixel `(b, oy, ox)` inside the input, as
    /// [`Geo::for_each_tap`] visits them, collected into `buf` (at most its
    /// length): `(tap, input index of channel 0)`. Kernels find them once
    /// per pixel instead of once per output channel.
    pub(crate) fn taps_into<'t>(
        &self,
        b: usize,
        oy: usize,
        ox: usize,
        buf: &'t mut [(usize, usize)],
    ) -> &'t [(usize, usize)] {
        let mut n = 0;
        self.for_each_tap(b, oy, ox, 0, |tap, ii| {
            if let Some(t) = buf.get_mut(n) {
                *t = (tap, ii);
                n += 1;
            }
        });
        buf.get(..n).unwrap_or(&[])
    }

    /// Calls `f(tap, in_index)` for every filter tap of output pixel
    /// `(b, oy, ox)` that falls inside the input, in TFLM's order (filter
    /// rows, then columns); `tap = ky · fw + kx`, and `in_index` points at
    /// channel `ch` of the input pixel under the tap.
    #[inline]
    pub(crate) fn for_each_tap(
        &self,
        b: usize,
        oy: usize,
        ox: usize,
        ch: usize,
        mut f: impl FnMut(usize, usize),
    ) {
        let iy0 = (oy as i32).wrapping_mul(self.sh).wrapping_sub(self.pad_h);
        let ix0 = (ox as i32).wrapping_mul(self.sw).wrapping_sub(self.pad_w);
        for ky in 0..self.fh {
            let iy = iy0.wrapping_add(self.dh.wrapping_mul(ky));
            for kx in 0..self.fw {
                let ix = ix0.wrapping_add(self.dw.wrapping_mul(kx));
                if ix < 0 || ix >= self.iw || iy < 0 || iy >= self.ih {
                    continue;
                }
                let tap = ky as usize * self.fw as usize + kx as usize;
                f(tap, self.in_index(b, iy, ix, ch));
            }
        }
    }
}
