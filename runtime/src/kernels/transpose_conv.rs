//! TRANSPOSE_CONV, bit-exact with TFLM's reference kernels (tflite-micro
//! 90b983c2: `micro/kernels/transpose_conv.cc`,
//! `kernels/internal/reference/transpose_conv.h` and
//! `reference/integer_ops/transpose_conv.h`).
//!
//! Inputs: 0 the output shape (int32, unused here: the output tensor's dims
//! are the shape), 1 the filter `[out_ch, fh, fw, in_ch]`, 2 the input NHWC,
//! 3 the optional bias. Types: float32; int8 with an int32 bias; int16 with
//! an int8 filter and an int64 or int16 bias (TFLM's 16x8 kernel; its zero
//! points are not used).
//!
//! TFLM scatters every input pixel into the output (float: into the output
//! itself; int8: into an int32 scratch; int16: into an int64 scratch), then
//! adds the bias, requantizes per channel and clamps. This kernel gathers
//! instead: each output element sums the input pixels that reach it, so it
//! needs no scratch. The float sum takes its terms in TFLM's order for that
//! element (input row, then column, then channel, ascending: for a fixed
//! output pixel each input pixel meets exactly one filter tap), so it is
//! bit-exact; integer sums wrap as TFLM's do and do not depend on the order.
//!
//! TFLM's padding is `ComputePaddingHeightWidth` with the *output* size as
//! the image: `(out_size(H) − 1)·stride + filter − H`, halved, where
//! `out_size` is the SAME or VALID conv size of `H`; TFLM checks no relation
//! between the input and output sizes (input pixels landing outside the
//! output are dropped).

use microarena_image::geometry;
use microarena_image::params::WindowParams;
use microarena_image::{dtype, opcode};

use super::bytes::{f32_at, i8_at, i16_at, i32_at, i64_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_int};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint::{self as fx, mbqm_i64};
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    channels: super::epilogue::output_channels,
    ..kernel(opcode::TRANSPOSE_CONV, prepare, eval)
}];

const FILTER: usize = 1;
const INPUT: usize = 2;
const BIAS: usize = 3;

/// The padding TFLM derives for one spatial axis of output size `image`.
fn tflm_padding(image: i64, filter: i64, stride: i64, same: bool) -> i64 {
    let out = if same {
        geometry::out_same(image, stride)
    } else {
        geometry::out_valid(image, filter, stride, 1)
    };
    geometry::padding_before(image, filter, stride, 1, out)
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(INPUT)?;
    let filter = p.input(FILTER)?;
    let bias = p.opt_input(BIAS)?;
    let types = (input.dtype, filter.dtype, out.dtype);
    let bias_type = match types {
        (dtype::F32, dtype::F32, dtype::F32) => dtype::F32,
        (dtype::I8, dtype::I8, dtype::I8) => dtype::I32,
        (dtype::I16, dtype::I8, dtype::I16) => dtype::I64,
        _ => {
            return Err(p.err(
                "TRANSPOSE_CONV: float32, int8, or int16 with an int8 filter, the output as the input",
            ));
        }
    };
    p.need(
        input.rank == 4 && filter.rank == 4 && out.rank == 4,
        "tensors must be 4-D",
    )?;
    p.check(input.dim(0) == out.dim(0), "batch mismatch")?;
    p.check(
        filter.dim(3) == input.dim(3),
        "filter input channels differ from the input's",
    )?;
    p.check(
        filter.dim(0) == out.dim(3),
        "filter output channels differ from the output's",
    )?;
    if let Some(b) = &bias {
        // The 16x8 kernel also takes an int16 bias (TFLM widens it to int64).
        p.need(
            b.dtype == bias_type || (bias_type == dtype::I64 && b.dtype == dtype::I16),
            "bias type",
        )?;
        p.check(b.elements() >= out.dim(3), "bias too short")?;
    }
    let w: WindowParams = p.op.params();
    let (sw, sh, fw, fh) = (
        i64::from(w.stride_w),
        i64::from(w.stride_h),
        i64::from(w.filter_w),
        i64::from(w.filter_h),
    );
    p.check(
        sw > 0 && sh > 0 && w.dilation_w == 1 && w.dilation_h == 1,
        "strides must be positive and dilations 1",
    )?;
    p.check(
        fw == filter.dim(2) as i64 && fh == filter.dim(1) as i64,
        "filter size parameters differ from the filter tensor's dims",
    )?;
    let pad_ok = |image: usize, filter: i64, stride: i64, pad: i32| {
        let image = image as i64;
        let pad = i64::from(pad);
        pad == tflm_padding(image, filter, stride, true)
            || pad == tflm_padding(image, filter, stride, false)
    };
    p.check(
        pad_ok(out.dim(1), fh, sh, w.pad_h) && pad_ok(out.dim(2), fw, sw, w.pad_w),
        "padding does not follow from the output size, filter and strides",
    )?;
    if out.dtype == dtype::F32 {
        let (lo, hi) = act_range_f32(p.op.activation).ok_or(p.err("fused activation"))?;
        words.push(lo.to_bits() as i32);
        words.push(hi.to_bits() as i32);
        return Ok(());
    }
    // PopulateConvolutionQuantizationParams: per channel, in double.
    let channels = out.dim(3);
    p.need(
        input.n_scales > 0 && out.n_scales > 0,
        "quantized TRANSPOSE_CONV needs quantized input and output",
    )?;
    p.need(
        filter.n_scales == 1 || filter.n_scales == channels,
        "filter scales: one, or one per output channel",
    )?;
    let (tlo, thi) = if out.dtype == dtype::I16 {
        (-32768, 32767)
    } else {
        (-128, 127)
    };
    let (lo, hi) =
        act_range_int(p.op.activation, out, tlo, thi).ok_or(p.err("fused activation"))?;
    words.push(lo);
    words.push(hi);
    for c in 0..channels {
        let fs = p
            .img
            .scale(&filter, if filter.n_scales > 1 { c } else { 0 });
        let (m, s) = quantize_ratio(input.scale, fs, out.scale);
        words.push(m);
        words.push(s);
    }
    Ok(())
}

/// The input coordinates along one axis that reach output coordinate `o`:
/// `i·stride − pad + tap = o` with `tap` in `0..filter` and `i` in `0..size`,
/// ascending, with each one's tap.
fn sources(o: usize, pad: i64, stride: i64, filter: i64, size: usize) -> (i64, i64) {
    // tap = o + pad − i·stride ∈ [0, filter) ⇔ i ∈ (o + pad − filter, o + pad] / stride.
    let hi = (o as i64 + pad).div_euclid(stride);
    let lo_num = o as i64 + pad - filter + 1;
    let lo = lo_num.div_euclid(stride) + i64::from(lo_num.rem_euclid(stride) != 0);
    (lo.max(0), hi.min(size as i64 - 1))
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(INPUT);
    let (filter, w) = c.input(FILTER);
    let (bias_t, b) = c.input(BIAS);
    let has_bias = bias_t.bytes > 0;
    let out = c.output_info();
    let p: WindowParams = c.op.params();
    let (pad_h, pad_w) = (i64::from(p.pad_h), i64::from(p.pad_w));
    let (sh, sw) = (i64::from(p.stride_h).max(1), i64::from(p.stride_w).max(1));
    let (fh, fw) = (filter.dim(1), filter.dim(2));
    let (ih, iw, ic) = (input.dim(1), input.dim(2), input.dim(3));
    let (oh, ow, oc) = (out.dim(1), out.dim(2), out.dim(3));
    let (lo, hi) = (c.word(0), c.word(1));
    let in_off = input.zero_point.wrapping_neg();
    for n in 0..out.dim(0) {
        for oy in 0..oh {
            let (y0, y1) = sources(oy, pad_h, sh, fh as i64, ih);
            for ox in 0..ow {
                let (x0, x1) = sources(ox, pad_w, sw, fw as i64, iw);
                let oi0 = ((n * oh + oy) * ow + ox) * oc;
                for ch in 0..oc {
                    let oi = oi0 + ch;
                    // Every (input pixel, its tap), input row-major.
                    let taps = (y0..=y1).flat_map(|iy| {
                        (x0..=x1).map(move |ix| {
                            let ky = (oy as i64 + pad_h - iy * sh) as usize;
                            let kx = (ox as i64 + pad_w - ix * sw) as usize;
                            (
                                ((n * ih + iy as usize) * iw + ix as usize) * ic,
                                ((ch * fh + ky) * fw + kx) * ic,
                            )
                        })
                    });
                    match out.dtype {
                        dtype::F32 => {
                            let mut acc = 0.0f32;
                            for (xi, wi) in taps {
                                for k in 0..ic {
                                    acc += f32_at(x, xi + k) * f32_at(w, wi + k);
                                }
                            }
                            if has_bias {
                                acc += f32_at(b, ch);
                            }
                            let (l, h) = (f32::from_bits(lo as u32), f32::from_bits(hi as u32));
                            put_f32(c.out, oi, act_f32(acc, l, h));
                        }
                        dtype::I16 => {
                            let mut acc = 0i64;
                            for (xi, wi) in taps {
                                for k in 0..ic {
                                    acc = acc.wrapping_add(
                                        i64::from(i16_at(x, xi + k)) * i64::from(i8_at(w, wi + k)),
                                    );
                                }
                            }
                            if has_bias {
                                acc = acc.wrapping_add(if bias_t.dtype == dtype::I16 {
                                    i64::from(i16_at(b, ch))
                                } else {
                                    i64_at(b, ch)
                                });
                            }
                            let r = mbqm_i64(acc, c.word(2 + 2 * ch), c.word(3 + 2 * ch));
                            put_i16(c.out, oi, r.max(lo).min(hi));
                        }
                        _ => {
                            let mut acc = 0i32;
                            for (xi, wi) in taps {
                                for k in 0..ic {
                                    acc = acc.wrapping_add(
                                        i8_at(x, xi + k)
                                            .wrapping_add(in_off)
                                            .wrapping_mul(i8_at(w, wi + k)),
                                    );
                                }
                            }
                            if has_bias {
                                acc = acc.wrapping_add(i32_at(b, ch));
                            }
                            let r = fx::mbqm(acc, c.word(2 + 2 * ch), c.word(3 + 2 * ch))
                                .wrapping_add(out.zero_point);
                            put_i8(c.out, oi, r.max(lo).min(hi));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_exactly_the_input_coordinates_that_reach_the_output() {
        for stride in 1..4 {
            for filter in 1..5 {
                for pad in 0..3 {
                    for size in 1..6 {
                        for o in 0..12 {
                            let (lo, hi) = sources(o, pad, stride, filter, size);
                            // Brute force over every input coordinate.
                            for i in 0..size as i64 {
                                let reaches = (0..filter).contains(&(o as i64 + pad - i * stride));
                                assert_eq!(
                                    (lo..=hi).contains(&i),
                                    reaches,
                                    "i {i} o {o} pad {pad} stride {stride} filter {filter} size {size}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tflm_padding_takes_the_output_as_the_image() {
        // SAME, output 8, filter 3, stride 2: conv size 4, (4−1)·2 + 3 − 8 = 1 → 0.
        assert_eq!(tflm_padding(8, 3, 2, true), 0);
        // SAME, output 7, filter 3, stride 2: conv size 4, 6 + 3 − 7 = 2 → 1.
        assert_eq!(tflm_padding(7, 3, 2, true), 1);
        // SAME, output 5, filter 3, stride 1: 4 + 3 − 5 = 2 → 1.
        assert_eq!(tflm_padding(5, 3, 1, true), 1);
        // VALID never pads.
        assert_eq!(tflm_padding(9, 3, 2, false), 0);
    }

    #[test]
    fn the_16x8_requantization_rounds_once_with_a_16_bit_multiplier() {
        // multiplier 2^30 (0.5) → reduced 2^14; shift 0 → total shift 15:
        // (x · 2^14 + 2^14) >> 15 = round-half-up of x / 2.
        assert_eq!(mbqm_i64(3, 1 << 30, 0), 2);
        assert_eq!(mbqm_i64(-3, 1 << 30, 0), -1);
        assert_eq!(mbqm_i64(1000, 1 << 30, 0), 500);
        // shift −2 divides by 4 more: 1000 · 0.5 / 4 = 125.
        assert_eq!(mbqm_i64(1000, 1 << 30, -2), 125);
        // A multiplier at the top saturates the reduced one at 0x7FFF.
        assert_eq!(mbqm_i64(1 << 15, i32::MAX, 0), 0x7FFF);
    }
}
