//! DEPTHWISE_CONV_2D (int8 per-channel and float32), as TFLM's reference
//! `DepthwiseConv`, with a stacked-accumulator int8 path for multiplier 1.

use microarena_image::dtype;
use microarena_image::params::WindowParams;

use super::bytes::{f32_at, i8_at};
use super::context::{Ctx, OpDataWriter, Prep};
use super::epilogue::{Epilogue, check_operands, push_opdata};
use super::window::{Geo, check_nhwc_filter, check_window};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    channels: super::epilogue::output_channels,
    ..kernel(opcode::DEPTHWISE_CONV_2D, prepare, eval)
}];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (input, filter) = check_operands(p, out)?;
    check_nhwc_filter(p, &input, &filter, out)?;
    let mult = p.op.params::<WindowParams>().depth_multiplier;
    p.check(mult > 0, "depth multiplier must be positive")?;
    let mult = mult as usize;
    p.need(
        filter.dim(0) == 1 && filter.dim(3) == out.dim(3),
        "filter shape",
    )?;
    p.need(
        input.dim(3).saturating_mul(mult) == out.dim(3),
        "depth multiplier",
    )?;
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

/// Filters with more taps than this take the general path.
const MAX_TAPS: usize = 64;

/// Int8 depthwise with multiplier 1: the taps of an output pixel are found
/// once, then `CH` channels at a time accumulate over them (bit-exact: the
/// same integer sums, reordered; the input offset is added to each input).
fn depthwise_i8_m1(c: &mut Ctx<'_, '_>, g: &Geo, x: &[u8], w: &[u8], end: &Epilogue<'_>) {
    const CH: usize = 4;
    let in_off = c.input(0).0.zero_point.wrapping_neg();
    // (filter index of channel 0, input index of channel 0) per tap.
    let mut taps = [(0usize, 0usize); MAX_TAPS];
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let n = g.taps_into(b, oy, ox, &mut taps).len();
                let taps = taps.get_mut(..n).unwrap_or(&mut []);
                for t in taps.iter_mut() {
                    // Filter [1][ky][kx][oc]: the tap's channel 0.
                    t.0 *= g.oc;
                }
                let taps = &*taps;
                // Channel parameters in order, outputs contiguous from `oi`.
                let mut params = end.channels();
                let oi = g.out_index(b, oy, ox, 0);
                let mut c0 = 0;
                while c0 < g.oc {
                    let n = CH.min(g.oc - c0);
                    let acc = channels(x, w, taps, c0, n, in_off);
                    for (k, &a) in acc.iter().take(n).enumerate() {
                        let p = params.next().unwrap_or((0, 0, 0));
                        end.put_i8_with(c.out, oi + c0 + k, p, a);
                    }
                    c0 += n;
                }
            }
        }
    }
}

/// The accumulators of channels `c0..c0 + n` (`n` ≤ 4) over `taps`.
#[inline]
pub(super) fn channels(
    x: &[u8],
    w: &[u8],
    taps: &[(usize, usize)],
    c0: usize,
    n: usize,
    in_off: i32,
) -> [i32; 4] {
    #[cfg(microarena_dsp)]
    if n == 4
        && let Some(acc) = super::dsp::depthwise4_i8(x, w, taps, c0, in_off)
    {
        return acc;
    }
    let mut acc = [0i32; 4];
    for &(fi, ii) in taps {
        if let (Some(xs), Some(ws)) = (x.get(ii + c0..ii + c0 + n), w.get(fi + c0..fi + c0 + n)) {
            for ((a, &xv), &wv) in acc.iter_mut().zip(xs).zip(ws) {
                let xv = i32::from(xv as i8).wrapping_add(in_off);
                *a = a.wrapping_add(i32::from(wv as i8).wrapping_mul(xv));
            }
        }
    }
    acc
}

/// Int8 depthwise with any multiplier (e.g. one input channel to eight):
/// the taps of an output pixel found once, the output channels in order with
/// their parameters read in order (bit-exact: the same integer sums).
fn depthwise_i8(c: &mut Ctx<'_, '_>, g: &Geo, x: &[u8], w: &[u8], end: &Epilogue<'_>, mult: usize) {
    let in_off = c.input(0).0.zero_point.wrapping_neg();
    // (filter index of channel 0, input index of channel 0) per tap.
    let mut taps = [(0usize, 0usize); MAX_TAPS];
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let n = g.taps_into(b, oy, ox, &mut taps).len();
                let taps = taps.get_mut(..n).unwrap_or(&mut []);
                for t in taps.iter_mut() {
                    // Filter [1][ky][kx][oc]: the tap's channel 0.
                    t.0 *= g.oc;
                }
                let taps = &*taps;
                let mut params = end.channels();
                let oi = g.out_index(b, oy, ox, 0);
                for ic in 0..g.ic {
                    for m in 0..mult {
                        let oc = m + ic * mult;
                        let mut acc = 0i32;
                        for &(fi, ii) in taps {
                            let iv = i8_at(x, ii + ic).wrapping_add(in_off);
                            acc = acc.wrapping_add(i8_at(w, fi + oc).wrapping_mul(iv));
                        }
                        let p = params.next().unwrap_or((0, 0, 0));
                        end.put_i8_with(c.out, oi + oc, p, acc);
                    }
                }
            }
        }
    }
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let mult = c.op.params::<WindowParams>().depth_multiplier.max(1) as usize;
    let float = out.dtype == dtype::F32;
    if !float && mult == 1 && g.ic == g.oc {
        depthwise_i8_m1(c, &g, x, w, &end);
        return Ok(());
    }
    if !float && (g.fh as usize) * (g.fw as usize) <= MAX_TAPS {
        depthwise_i8(c, &g, x, w, &end, mult);
        return Ok(());
    }
    let in_off = input.zero_point.wrapping_neg();
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ic in 0..g.ic {
                    for m in 0..mult {
                        let oc = m + ic * mult;
                        let oi = g.out_index(b, oy, ox, oc);
                        // Filter [1][ky][kx][oc].
                        let fi = |tap: usize| tap * g.oc + oc;
                        if float {
                            let mut total = 0.0f32;
                            g.for_each_tap(b, oy, ox, ic, |tap, ii| {
                                total += f32_at(x, ii) * f32_at(w, fi(tap));
                            });
                            end.put_f32(c.out, oi, oc, total);
                        } else {
                            let mut acc = 0i32;
                            g.for_each_tap(b, oy, ox, ic, |tap, ii| {
                                let iv = i8_at(x, ii).wrapping_add(in_off);
                                acc = acc.wrapping_add(i8_at(w, fi(tap)).wrapping_mul(iv));
                            });
                            end.put_i8(c.out, oi, oc, oc, acc);
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
