//! CONV_2D (int8 per-channel, grouped, int16 16x8, and float32), as TFLM's
//! reference `Conv` and `ConvPerChannel`.

use microarena_image::dtype;

use super::bytes::f32_at;
use super::context::{Ctx, OpDataWriter, Prep};
use super::epilogue::{
    Epilogue, Epilogue16, Requant, Rows4, accumulate_rows, check_operands, check_operands_16x8,
    dot_i8, dot_i16, dot2_i8, push_opdata,
};
use super::window::{Geo, check_nhwc_filter, check_window};
use super::{Kernel, kernel, variant};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    channels: super::epilogue::output_channels,
    // The 16x8 and float32 branches are their own, linked only where a
    // model has them.
    variants: [
        variant(dtype::I16, "int16", eval_16x8),
        variant(dtype::F32, "float32", eval_f32),
    ],
    ..kernel(opcode::CONV_2D, prepare, eval)
}];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (input, filter) = if out.dtype == dtype::I16 {
        // ConvEval's 16x8 branch: an int32 or int64 bias (or none).
        check_operands_16x8(p, out, &[dtype::I32, dtype::I64], true)?
    } else {
        check_operands(p, out)?
    };
    check_nhwc_filter(p, &input, &filter, out)?;
    let cin_f = filter.dim(3);
    p.need(filter.dim(0) == out.dim(3), "filter output channels")?;
    p.need(
        cin_f > 0 && input.dim(3) % cin_f == 0,
        "filter input channels",
    )?;
    let groups = input.dim(3) / cin_f;
    p.need(groups > 0 && out.dim(3).is_multiple_of(groups), "groups")?;
    check_window(p, &input, out, Some(&filter))?;
    push_opdata(
        p,
        out,
        (&input, &filter),
        out.last_dim() as u32,
        false,
        words,
    )
}

/// All output channels of one pixel (one group, every tap inside the input):
/// channel `oc`'s filter is row `oc` of `w`, `taps.len() · fic` bytes, tap
/// `t` at `t · fic`; outputs from `oi` on.
fn pixel_pairs(
    out: &mut [u8],
    oi: usize,
    (x, w): (&[u8], &[u8]),
    taps: &[(usize, usize)],
    fic: usize,
    end: &Epilogue<'_>,
    in_off: i32,
) {
    /// Output channels accumulated per block (a stack array).
    const BLOCK: usize = 32;
    let row = taps.len() * fic;
    if row == 0 {
        return;
    }
    let channels = w.len() / row;
    let mut params = end.channels();
    let mut c0 = 0;
    while c0 < channels {
        let n = BLOCK.min(channels - c0);
        let mut acc = [0i32; BLOCK];
        let Some(acc) = acc.get_mut(..n) else {
            return;
        };
        for (t, &(_, ii)) in taps.iter().enumerate() {
            // Tap t of channel c0 + k is w[(c0 + k)·row + t·fic ..][..fic].
            if let (Some(xs), Some(wt)) = (x.get(ii..ii + fic), w.get(c0 * row + t * fic..)) {
                accumulate_rows(xs, wt, row, acc, in_off);
            }
        }
        for (k, &a) in acc.iter().enumerate() {
            end.put_i8_with(out, oi + c0 + k, params.next().unwrap_or((0, 0, 0)), a);
        }
        c0 += n;
    }
}

/// CONV_2D 1×1, stride 1, no padding, one group, int8: the output is the
/// (pixels × ic) input times the (oc × ic) filter transposed. Four filters
/// per pass over the pixels, prepared once ([`Rows4`]: on DSP cores already
/// in 16-bit lanes), and the input offset folded into each channel's bias
/// as `in_off · Σ filter row` (the same wrapping int32 sum), so the inner
/// loop adds no offset; each channel's parameters are decoded once per call.
#[inline(never)]
fn pointwise(
    out: &mut [u8],
    (x, w): (&[u8], &[u8]),
    (ic, oc): (usize, usize),
    end: &Epilogue<'_>,
    in_off: i32,
) {
    if ic == 0 || oc == 0 {
        return;
    }
    let mut params = end.channels();
    let mut block = Rows4::empty();
    let mut c = 0;
    while c < oc {
        let k = 4.min(oc - c);
        let rows: [&[u8]; 4] = core::array::from_fn(|j| {
            let r = if j < k { w.get((c + j) * ic..) } else { None };
            r.and_then(|r| r.get(..ic)).unwrap_or(&[])
        });
        let sums = block.set(rows);
        let q: [Requant; 4] = core::array::from_fn(|j| {
            let p = if j < k { params.next() } else { None };
            let mut q = Requant::new(end, p.unwrap_or((0, 0, 0)));
            q.bias_add(in_off.wrapping_mul(sums.get(j).copied().unwrap_or(0)));
            q
        });
        for (xp, op) in x.chunks_exact(ic).zip(out.chunks_exact_mut(oc)) {
            let acc = block.dot(xp);
            if let Some(o) = op.get_mut(c..c + k) {
                Requant::apply4(&q, acc, o);
            }
        }
        c += k;
    }
}

/// Filters with more taps than this take the per-channel path.
const MAX_TAPS: usize = 64;

/// Eval of the int8 convolution (float32: [`eval_f32`], int16: [`eval_16x8`]).
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let fic = filter.dim(3);
    let taps_n = g.fh as usize * g.fw as usize;
    let groups = g.ic / fic.max(1);
    let in_off = input.zero_point.wrapping_neg();
    if groups == 1 && taps_n == 1 && (g.sw, g.sh, g.pad_w, g.pad_h) == (1, 1, 0, 0) {
        pointwise(c.out, (x, w), (fic, g.oc), &end, in_off);
        return Ok(());
    }
    windows(c.out, &g, (x, w), (fic, taps_n, groups), &end, in_off);
    Ok(())
}

/// Every other int8 convolution, pixel by pixel. Out of line: its tap list
/// (512 B on a 32-bit core) would otherwise sit on the stack under every
/// 1×1 convolution too.
#[inline(never)]
fn windows(
    out: &mut [u8],
    g: &Geo,
    (x, w): (&[u8], &[u8]),
    (fic, taps_n, groups): (usize, usize, usize),
    end: &Epilogue<'_>,
    in_off: i32,
) {
    let per_group = g.oc / groups.max(1);
    // Filter [oc][ky][kx][ic]: tap t of channel oc starts at (oc·taps + t)·fic.
    let fbase = |oc: usize, tap: usize| (oc * taps_n + tap) * fic;
    let group_of = |oc: usize| {
        if groups == 1 {
            0
        } else {
            oc / per_group.max(1)
        }
    };
    // The taps inside the input of one output pixel, found once per pixel
    // rather than once per output channel: (tap, input index of channel 0).
    let mut taps = [(0usize, 0usize); MAX_TAPS];
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                if taps_n > MAX_TAPS {
                    for oc in 0..g.oc {
                        let oi = g.out_index(b, oy, ox, oc);
                        let mut acc = 0i32;
                        g.for_each_tap(b, oy, ox, group_of(oc) * fic, |tap, ii| {
                            let d = dot_i8(x, ii, w, fbase(oc, tap), fic, in_off);
                            acc = acc.wrapping_add(d);
                        });
                        end.put_i8(out, oi, oc, oc, acc);
                    }
                    continue;
                }
                let taps = g.taps_into(b, oy, ox, &mut taps);
                let nt = taps.len();
                if groups == 1 && nt == taps_n {
                    // Every tap inside the input and one group: filter rows
                    // are contiguous, taken two channels at a time.
                    let oi = g.out_index(b, oy, ox, 0);
                    pixel_pairs(out, oi, (x, w), taps, fic, end, in_off);
                    continue;
                }
                let mut oc = 0;
                while oc < g.oc {
                    let group = group_of(oc);
                    let gin = group * fic;
                    let oi = g.out_index(b, oy, ox, oc);
                    // Two channels of one group at once: each input word is
                    // unpacked once for both (DSP cores).
                    if oc + 1 < g.oc && group_of(oc + 1) == group {
                        let (mut a0, mut a1) = (0i32, 0i32);
                        for &(tap, ii) in taps {
                            let f = (fbase(oc, tap), fbase(oc + 1, tap));
                            let (d0, d1) = dot2_i8(x, ii + gin, w, f, fic, in_off);
                            a0 = a0.wrapping_add(d0);
                            a1 = a1.wrapping_add(d1);
                        }
                        end.put_i8(out, oi, oc, oc, a0);
                        end.put_i8(out, oi + 1, oc + 1, oc + 1, a1);
                        oc += 2;
                    } else {
                        let mut acc = 0i32;
                        for &(tap, ii) in taps {
                            let d = dot_i8(x, ii + gin, w, fbase(oc, tap), fic, in_off);
                            acc = acc.wrapping_add(d);
                        }
                        end.put_i8(out, oi, oc, oc, acc);
                        oc += 1;
                    }
                }
            }
        }
    }
}

/// The float32 CONV_2D (TFLM's reference `Conv`): per output channel, the
/// taps inside the input in filter order, each tap's channels in order.
fn eval_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let fic = filter.dim(3);
    let taps_n = g.fh as usize * g.fw as usize;
    let per_group = g.oc / (g.ic / fic.max(1)).max(1);
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for oc in 0..g.oc {
                    let gin = oc / per_group.max(1) * fic;
                    let mut total = 0.0f32;
                    g.for_each_tap(b, oy, ox, gin, |tap, ii| {
                        let wb = (oc * taps_n + tap) * fic;
                        for ic in 0..fic {
                            total += f32_at(x, ii + ic) * f32_at(w, wb + ic);
                        }
                    });
                    end.put_f32(c.out, g.out_index(b, oy, ox, oc), oc, total);
                }
            }
        }
    }
    Ok(())
}

/// The 16x8 CONV_2D (int16 input and output, int8 filter), TFLM's
/// `ConvPerChannel<AccumScalar>`: per output channel over the taps inside
/// the input, groups included; no zero point enters (TFLM's 16-bit kernel
/// reads none), the accumulator is the bias's width ([`Epilogue16`]).
fn eval_16x8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue16::new(c, c.input(2), false);
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let fic = filter.dim(3);
    let taps_n = g.fh as usize * g.fw as usize;
    let groups = g.ic / fic.max(1);
    let per_group = (g.oc / groups.max(1)).max(1);
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for oc in 0..g.oc {
                    let gin = (oc / per_group) * fic;
                    let mut acc = 0i64;
                    g.for_each_tap(b, oy, ox, gin, |tap, ii| {
                        // Filter [oc][ky][kx][ic].
                        let d = dot_i16(x, ii, w, (oc * taps_n + tap) * fic, fic);
                        acc = acc.wrapping_add(d);
                    });
                    end.put(c.out, g.out_index(b, oy, ox, oc), oc, oc, acc);
                }
            }
        }
    }
    Ok(())
}
