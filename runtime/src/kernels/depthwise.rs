//! DEPTHWISE_CONV_2D (int8 per-channel, int16 16x8 and float32), as TFLM's
//! reference `DepthwiseConv` and `DepthwiseConvPerChannel`, with a
//! stacked-accumulator int8 path for multiplier 1.

use microarena_image::dtype;
use microarena_image::params::WindowParams;

use super::bytes::{f32_at, i8_at, i16_at};
use super::context::{Ctx, OpDataWriter, Prep};
use super::epilogue::{
    Epilogue, Epilogue16, Requant, check_operands, check_operands_16x8, push_opdata,
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
    ..kernel(opcode::DEPTHWISE_CONV_2D, prepare, eval)
}];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (input, filter) = if out.dtype == dtype::I16 {
        // DepthwiseConvEval's 16x8 branch reads the bias as int64 whatever
        // its type, so only an int64 bias (or none) is well defined.
        check_operands_16x8(p, out, &[dtype::I64], true)?
    } else {
        check_operands(p, out)?
    };
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

/// Four channels' weights at one tap, as [`quad_mac`] takes them: on DSP
/// cores two words of 16-bit lanes (channels 0 and 2, 1 and 3), on portable
/// builds the four bytes as one word.
#[cfg(microarena_dsp)]
const QUAD_WORDS: usize = 2;
#[cfg(not(microarena_dsp))]
const QUAD_WORDS: usize = 1;
pub(super) type QuadW = [u32; QUAD_WORDS];

/// Taps whose unpacked weights the four-channel path keeps on the stack:
/// 1 KiB on DSP cores, 512 B on portable builds (the Cortex-M0 among them,
/// whose stack is small), so a 10×8 audio filter fits either way. Larger
/// filters read their weights from the filter as they go, and with a
/// multiplier that is not 1 or a multiple of 4 take the general path.
const MAX_TAPS: usize = 128;

/// Int8 depthwise with multiplier 1: four channels at a time over every
/// output pixel, so each channel's parameters are decoded once per layer
/// and its filter bytes unpacked once (bit-exact: the same integer sums,
/// reordered; the input offset is added to each input). The caller checks
/// `|in_off| ≤ 32640` (a 16-bit lane next to an int8 value) and the taps.
fn depthwise_i8_quads<const B: bool>(
    out: &mut [u8],
    g: &Geo,
    (x, w): (&[u8], &[u8]),
    end: &Epilogue<'_>,
    (mult, in_off): (usize, i32),
) {
    let taps = g.fh as usize * g.fw as usize;
    // in_off in both 16-bit lanes, for SXTAB16.
    let off2 = (in_off as u32 & 0xffff) | ((in_off as u32) << 16);
    let (ih, iw) = (g.ih, g.iw);
    let mut params = end.channels();
    // One stack buffer for the unpacked weights and, on the 3×3 path (9
    // taps), the row strips after them: the two never need their largest
    // sizes at once, and a frame this deep is on every firmware's stack.
    let mut work = [0u32; WORK_WORDS];
    let fast3x3 = (g.fh, g.fw, g.dh, g.dw) == (3, 3, 1, 1) && taps == 9;
    let (wq_words, strip_words) =
        work.split_at_mut(if fast3x3 { 9 } else { MAX_TAPS } * QUAD_WORDS);
    let wq = wq_words.as_chunks_mut::<QUAD_WORDS>().0;
    let mut strips = strip_words.first_chunk_mut::<{ 3 * STRIP }>();
    let mut c0 = 0;
    while c0 < g.oc {
        let n = 4.min(g.oc - c0);
        // The input channel of output channels c0..c0 + 4 (B: one shared
        // by all four, multiplier a multiple of 4).
        let ch = if B { c0 / mult.max(1) } else { c0 };
        let q: [Requant; 4] = core::array::from_fn(|k| {
            let p = if k < n { params.next() } else { None };
            Requant::new(end, p.unwrap_or((0, 0, 0)))
        });
        // Filter [1][ky][kx][oc]: tap t of channels c0.. at t·oc + c0. One
        // strided pass (a banded stage repeats this for every output row).
        let taps_of = w.chunks_exact(g.oc.max(1)).take(taps);
        if n == 4 && c0 + 4 <= g.oc {
            for (wt, tap) in wq.iter_mut().zip(taps_of) {
                let b = tap.get(c0..c0 + 4).and_then(|b| b.first_chunk::<4>());
                *wt = quad_weights(b.copied().unwrap_or([0; 4]));
            }
        } else {
            for (wt, tap) in wq.iter_mut().zip(taps_of) {
                *wt = filter_quad(tap, c0, n);
            }
        }
        let fast = fast3x3;
        let w9: &[QuadW; 9] = wq.first_chunk::<9>().unwrap_or(&[[0; QUAD_WORDS]; 9]);
        // 3×3 windows through zero-point-padded row strips: every pixel
        // dense, no edge cases (the general path below handles the rest).
        let span =
            g.ow.saturating_sub(1)
                .saturating_mul(g.sw as usize)
                .saturating_add(3);
        let zp = in_off.wrapping_neg();
        if fast
            && g.sw > 0
            && (-128..=127).contains(&zp)
            && span <= STRIP
            && let Some(strips) = strips.as_deref_mut()
        {
            let geo = (g, c0, n, ch);
            let zp = zp as i8 as u8;
            quad3x3_strips::<B>(x, out, strips, geo, w9, (off2, in_off, zp), &q);
            c0 += n;
            continue;
        }
        let rs = g.iw as usize * g.ic;
        // Output columns whose window lies inside the input's columns.
        let inside = |ox: usize| {
            let ix0 = (ox as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
            ix0 >= 0 && ix0 + 2 < iw
        };
        let lo = (0..g.ow).find(|&ox| inside(ox)).unwrap_or(g.ow);
        let hi = (lo..g.ow).find(|&ox| !inside(ox)).unwrap_or(g.ow);
        // 3×3 windows clamped to the input: taps outside read an inside
        // pixel with a zero weight (adds 0, so the sums are unchanged).
        let fast = fast && ih > 0 && iw > 0;
        let (mut offs, mut wm) = ([0usize; 9], [[0u32; QUAD_WORDS]; 9]);
        // The windows of the edge columns on rows inside the input, the
        // same on every such row: found once (SAME padding has one edge
        // column a side).
        let mut edges = [(usize::MAX, 0i32, [0usize; 9], [[0u32; QUAD_WORDS]; 9]); 2];
        if fast {
            let inner = ([0usize, 1, 2], [true; 3]);
            let cols = (0..lo).chain(hi..g.ow);
            for ((ox, bx, o, wk), e) in edges
                .iter_mut()
                .map(|e| (&mut e.0, &mut e.1, &mut e.2, &mut e.3))
                .zip(cols)
            {
                let ix0 = (e as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
                let (b, dx, vx) = clamped_axis(ix0, iw - 1);
                let axes = ((&inner.0, &inner.1), (&dx, &vx));
                clamped_window(axes, (rs, g.ic), w9, (o, wk));
                (*ox, *bx) = (e, b);
            }
        }
        for b in 0..g.batches {
            for oy in 0..g.oh {
                let iy0 = (oy as i32).wrapping_mul(g.sh).wrapping_sub(g.pad_h);
                let row_in = iy0 >= 0 && iy0 + 2 < ih;
                // Rows inside the input need no clamped axis (their edge
                // columns use `edges`).
                let (by, dy, vy) = if fast && !row_in {
                    clamped_axis(iy0, ih - 1)
                } else {
                    (iy0, [0, 1, 2], [true; 3])
                };
                let mut ox = 0;
                while ox < g.ow {
                    let ix0 = (ox as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
                    if fast {
                        // The interior columns in one run, edge columns one by one.
                        let pixels = if ox == lo && lo < hi { hi - lo } else { 1 };
                        let dense = row_in && inside(ox);
                        let cached = edges.iter().find(|e| row_in && e.0 == ox);
                        let (base, win) = if dense {
                            (g.in_index(b, iy0, ix0, ch), (&offs, &wm))
                        } else if let Some((_, bx, o, wk)) = cached {
                            (g.in_index(b, iy0, *bx, ch), (o, wk))
                        } else {
                            let (bx, dx, vx) = clamped_axis(ix0, iw - 1);
                            let axes = ((&dy, &vy), (&dx, &vx));
                            clamped_window(axes, (rs, g.ic), w9, (&mut offs, &mut wm));
                            (g.in_index(b, by, bx, ch), (&offs, &wm))
                        };
                        let run = Run {
                            x: base,
                            x_step: g.sw as usize * g.ic,
                            out: g.out_index(b, oy, ox, c0),
                            out_step: g.oc,
                            pixels,
                            channels: n,
                        };
                        if dense {
                            let geo = (rs, g.ic);
                            let words = !B && (g.ic | run.x | run.x_step).is_multiple_of(4);
                            if words {
                                quad3x3_dense::<B, true>(x, out, &run, geo, w9, (off2, in_off), &q);
                            } else {
                                quad3x3_dense::<B, false>(
                                    x,
                                    out,
                                    &run,
                                    geo,
                                    w9,
                                    (off2, in_off),
                                    &q,
                                );
                            }
                        } else {
                            quad3x3_run::<B>(x, out, &run, win.0, win.1, (off2, in_off), &q);
                        }
                        ox += pixels;
                        continue;
                    }
                    // The taps inside the input, as one sub-window.
                    let (ky0, ky1) = g.taps_inside(iy0, g.fh, g.dh, ih);
                    let (kx0, kx1) = g.taps_inside(ix0, g.fw, g.dw, iw);
                    let first = iy0.wrapping_add((ky0 as i32).wrapping_mul(g.dh));
                    let left = ix0.wrapping_add((kx0 as i32).wrapping_mul(g.dw));
                    let win = x.get(g.in_index(b, first, left, ch)..).unwrap_or(&[]);
                    let steps = (g.dh as usize * rs, g.dw as usize * g.ic);
                    let span = ((ky0, ky1), (kx0, kx1.saturating_sub(kx0)));
                    let fw = g.fw as usize;
                    let acc = match wq.get(..taps) {
                        Some(wq) => {
                            let taps = Unpacked { wq, fw };
                            quad_window::<B, _>(win, &taps, span, steps, (off2, in_off))
                        }
                        // More taps than `wq` holds (a 10×8 audio filter on
                        // a portable build): weights read as they are used.
                        None => {
                            let taps = FilterTaps {
                                w,
                                oc: g.oc,
                                c0,
                                fw,
                                channels: n,
                            };
                            quad_window::<B, _>(win, &taps, span, steps, (off2, in_off))
                        }
                    };
                    let oi = g.out_index(b, oy, ox, c0);
                    if let Some(o) = out.get_mut(oi..oi + n) {
                        for ((o, q), a) in o.iter_mut().zip(&q).zip(acc) {
                            *o = q.apply(a);
                        }
                    }
                    ox += 1;
                }
            }
        }
        c0 += n;
    }
}

/// Padded input pixels a row strip holds: on DSP cores output rows up to 49
/// pixels at stride 2, 98 at stride 1 (three strips, 1,200 B of stack);
/// portable builds, the Cortex-M0 among them, keep 480 B (rows up to 18 and
/// 37 pixels). Wider rows take the row runs.
#[cfg(microarena_dsp)]
const STRIP: usize = 100;
#[cfg(not(microarena_dsp))]
const STRIP: usize = 40;

/// Three strips (rows `STRIP` words apart) and a pixel's window in them.
type Strips = [u32; 3 * STRIP];

/// [`depthwise_i8_quads`]' one stack buffer: 9 taps' weights and the strips
/// (the 3×3 path), or [`MAX_TAPS`] taps' weights (any other window).
const WORK_WORDS: usize = {
    let strips = 9 * QUAD_WORDS + 3 * STRIP;
    let taps = MAX_TAPS * QUAD_WORDS;
    if strips > taps { strips } else { taps }
};

/// Four channels (`c0..c0 + n`, input channel `ch`) of a 3×3 depthwise layer
/// with dilation 1, all output rows: for each row, the three input rows its
/// windows read are copied into strips as words (four channels, or `B` the
/// one input byte in all four lanes), with the input's zero point `zp` in
/// the padding. A padded tap then adds w·(zp + in_off) = 0, so every pixel
/// takes the same nine taps at fixed offsets and the sums equal the
/// reference's over the taps inside the input. The caller checks that a
/// row's windows fit a strip (`(ow − 1)·sw + 3 ≤ STRIP`).
fn quad3x3_strips<const B: bool>(
    x: &[u8],
    out: &mut [u8],
    strips: &mut Strips,
    (g, c0, n, ch): (&Geo, usize, usize, usize),
    w: &[QuadW; 9],
    (off2, in_off, zp): (u32, i32, u8),
    q: &[Requant; 4],
) {
    let pad = u32::from_le_bytes([zp; 4]);
    let span = (g.ow.saturating_sub(1) * g.sw as usize + 3).min(STRIP);
    for b in 0..g.batches {
        for oy in 0..g.oh {
            let iy0 = (oy as i32).wrapping_mul(g.sh).wrapping_sub(g.pad_h);
            for (k, row) in strips.chunks_exact_mut(STRIP).enumerate() {
                let iy = iy0.wrapping_add(k as i32);
                let row = row.get_mut(..span).unwrap_or_default();
                if iy < 0 || iy >= g.ih {
                    row.fill(pad);
                    continue;
                }
                // Slots lo..hi hold input columns lo − pad_w.., the rest pad.
                let lo = g.pad_w.clamp(0, span as i32) as usize;
                let hi = g.pad_w.saturating_add(g.iw).clamp(lo as i32, span as i32) as usize;
                let (left, rest) = row.split_at_mut(lo);
                let (mid, right) = rest.split_at_mut(hi - lo);
                left.fill(pad);
                right.fill(pad);
                let ix0 = (lo as i32).wrapping_sub(g.pad_w);
                let src = x.get(g.in_index(b, iy, ix0, ch)..).unwrap_or(&[]);
                if B {
                    for (slot, &v) in mid.iter_mut().zip(src.iter().step_by(g.ic.max(1))) {
                        *slot = u32::from_le_bytes([v; 4]);
                    }
                } else if n == 4 && g.ic.is_multiple_of(4) {
                    // Whole words, one per pixel.
                    let words = src.as_chunks::<4>().0.iter().step_by(g.ic / 4);
                    for (slot, wd) in mid.iter_mut().zip(words) {
                        *slot = u32::from_le_bytes(*wd);
                    }
                } else {
                    for (slot, px) in mid.iter_mut().zip(src.chunks(g.ic.max(1))) {
                        *slot = u32::from_le_bytes(quad_at(px, 0));
                    }
                }
            }
            let oi = g.out_index(b, oy, 0, c0);
            let row = (oi, g.ow, g.sw as usize, g.oc, n);
            strip_row(strips, out, row, w, (off2, in_off), q);
        }
    }
}

/// One output row of [`quad3x3_strips`]: `(first output index, pixels,
/// stride, output pixel step, channels)`. One range check per pixel: the
/// window is a fixed-size view of the strips.
#[inline(never)]
fn strip_row(
    s: &Strips,
    out: &mut [u8],
    (mut oi, ow, sw, oc, n): (usize, usize, usize, usize, usize),
    w: &[QuadW; 9],
    (off2, in_off): (u32, i32),
    q: &[Requant; 4],
) {
    const R1: usize = STRIP;
    const R2: usize = 2 * STRIP;
    #[cfg(microarena_dsp)]
    let _ = (R1, R2, in_off);
    #[cfg(microarena_v6m)]
    let (t9, bias) = taps9([0, 1, 2, R1, R1 + 1, R1 + 2, R2, R2 + 1, R2 + 2], w, in_off);
    // The window's sums: one asm block on DSP cores (every tap an immediate
    // offset), the unrolled Thumb-1 block on Armv6-M, else tap by tap.
    let window = |win: &[u32; 2 * STRIP + 3]| -> [i32; 4] {
        #[cfg(microarena_dsp)]
        return super::dsp::window3x3_strips::<STRIP, { 2 * STRIP + 3 }>(win, w, off2);
        #[cfg(microarena_v6m)]
        if let Some(sum) = super::v6m::quad_taps9_words(win, &t9) {
            return add4(sum, bias);
        }
        #[cfg(not(microarena_dsp))]
        {
            let [w0, w1, w2, w3, w4, w5, w6, w7, w8] = *w;
            let at = |k: usize| win.get(k).copied().unwrap_or(0).to_le_bytes();
            let mut a = quad_mac([0; 4], at(0), w0, off2, in_off);
            a = quad_mac(a, at(1), w1, off2, in_off);
            a = quad_mac(a, at(2), w2, off2, in_off);
            a = quad_mac(a, at(R1), w3, off2, in_off);
            a = quad_mac(a, at(R1 + 1), w4, off2, in_off);
            a = quad_mac(a, at(R1 + 2), w5, off2, in_off);
            a = quad_mac(a, at(R2), w6, off2, in_off);
            a = quad_mac(a, at(R2 + 1), w7, off2, in_off);
            quad_mac(a, at(R2 + 2), w8, off2, in_off)
        }
    };
    for p in 0..ow {
        let Some(win) = s
            .get(p * sw..)
            .and_then(|s| s.first_chunk::<{ 2 * STRIP + 3 }>())
        else {
            break;
        };
        let a = window(win);
        if let Some(o) = out.get_mut(oi..oi + n) {
            Requant::apply4(q, a, o);
        }
        oi += oc;
    }
}

/// `a + b` lane by lane, wrapping (the window sums plus `in_off · Σw`).
#[cfg(microarena_v6m)]
pub(super) fn add4([a0, a1, a2, a3]: [i32; 4], [b0, b1, b2, b3]: [i32; 4]) -> [i32; 4] {
    [
        a0.wrapping_add(b0),
        a1.wrapping_add(b1),
        a2.wrapping_add(b2),
        a3.wrapping_add(b3),
    ]
}

/// A 3×3 window for Armv6-M's unrolled loop (`v6m::quad_taps9_*`): per
/// tap its byte offset (`words[t]` words) and weight word, and per channel
/// `in_off · Σ_t w_t`, which the loop leaves to its caller. Made once per
/// row of windows.
#[cfg(microarena_v6m)]
pub(super) fn taps9(words: [usize; 9], w: &[QuadW; 9], in_off: i32) -> ([[u32; 2]; 9], [i32; 4]) {
    let mut wsum = [0i32; 4];
    let taps = core::array::from_fn(|t| {
        let ww = w.get(t).map_or(0, |q| q[0]);
        for (k, s) in wsum.iter_mut().enumerate() {
            *s = s.wrapping_add(i32::from((ww >> (8 * k)) as u8 as i8));
        }
        [(4 * words.get(t).copied().unwrap_or(0)) as u32, ww]
    });
    (taps, wsum.map(|s| s.wrapping_mul(in_off)))
}

/// A run of output pixels along a row whose 3×3 windows lie inside the
/// input: byte offsets of the first pixel's top-left tap (channel `c0`) and
/// of its first output, and the steps between pixels.
struct Run {
    x: usize,
    x_step: usize,
    out: usize,
    out_step: usize,
    pixels: usize,
    channels: usize,
}

/// [`quad3x3_run`] for windows inside the input: the tap offsets follow
/// from the row and column strides, so none is read from memory.
#[inline(never)]
fn quad3x3_dense<const B: bool, const W: bool>(
    x: &[u8],
    out: &mut [u8],
    run: &Run,
    (rs, ic): (usize, usize),
    w: &[QuadW; 9],
    (off2, in_off): (u32, i32),
    q: &[Requant; 4],
) {
    // W: every offset is a multiple of 4 (the caller checks), so the input
    // is read as words and a tap costs one index check, not a range check.
    let xw = if W { x.as_chunks::<4>().0 } else { &[] };
    let unit = if W { 4 } else { 1 };
    let (rs, ic) = (rs / unit, ic / unit);
    let (r1, r2, c2) = (rs, 2 * rs, 2 * ic);
    let [w0, w1, w2, w3, w4, w5, w6, w7, w8] = *w;
    let (mut xi, mut oi) = (run.x / unit, run.out);
    #[cfg(microarena_v6m)]
    let (t9, bias) = taps9(
        [0, ic, c2, r1, r1 + ic, r1 + c2, r2, r2 + ic, r2 + c2],
        w,
        in_off,
    );
    for _ in 0..run.pixels {
        // Armv6-M: whole words (W) through the unrolled Thumb-1 window.
        #[cfg(microarena_v6m)]
        if W && !B
            && let Some(sum) = super::v6m::quad_taps9_bytes(x.get(4 * xi..).unwrap_or(&[]), &t9)
        {
            let a = add4(sum, bias);
            if let Some(o) = out.get_mut(oi..oi + run.channels) {
                Requant::apply4(q, a, o);
            }
            xi += run.x_step / unit;
            oi += run.out_step;
            continue;
        }
        // Inside the input by construction; a tap past it reads zeros.
        let win = if W { &[] } else { x.get(xi..).unwrap_or(&[]) };
        let winw = if W { xw.get(xi..).unwrap_or(&[]) } else { &[] };
        let at = |o: usize| {
            if W {
                winw.get(o).copied().unwrap_or_default()
            } else {
                word::<B>(win, o)
            }
        };
        let mut a = quad_mac([0; 4], at(0), w0, off2, in_off);
        a = quad_mac(a, at(ic), w1, off2, in_off);
        a = quad_mac(a, at(c2), w2, off2, in_off);
        a = quad_mac(a, at(r1), w3, off2, in_off);
        a = quad_mac(a, at(r1 + ic), w4, off2, in_off);
        a = quad_mac(a, at(r1 + c2), w5, off2, in_off);
        a = quad_mac(a, at(r2), w6, off2, in_off);
        a = quad_mac(a, at(r2 + ic), w7, off2, in_off);
        a = quad_mac(a, at(r2 + c2), w8, off2, in_off);
        if let Some(o) = out.get_mut(oi..oi + run.channels) {
            Requant::apply4(q, a, o);
        }
        xi += run.x_step / unit;
        oi += run.out_step;
    }
}

/// One axis of a 3-tap window (dilation 1) starting at `i0`, clamped to
/// `0..=max` (`max ≥ 0`): the first inside index, each tap's distance from
/// it (a tap outside points at the nearest inside index) and whether the
/// tap is inside.
fn clamped_axis(i0: i32, max: i32) -> (i32, [usize; 3], [bool; 3]) {
    let base = i0.clamp(0, max);
    let mut dist = [0usize; 3];
    let mut inside = [false; 3];
    for (k, (d, v)) in dist.iter_mut().zip(inside.iter_mut()).enumerate() {
        let i = i0.wrapping_add(k as i32);
        let c = i.clamp(0, max);
        *d = (c - base) as usize;
        *v = c == i;
    }
    (base, dist, inside)
}

/// A clamped window axis: each tap's distance and whether it is inside.
type Axis<'a> = (&'a [usize; 3], &'a [bool; 3]);

/// The 3×3 window of one edge pixel from its clamped row and column axes
/// ([`clamped_axis`]): each tap's byte offset from the first inside pixel,
/// and the filter with the outside taps' weights zeroed (they then read an
/// inside pixel and add 0, so the sums are unchanged).
fn clamped_window(
    (rows, cols): (Axis<'_>, Axis<'_>),
    (rs, ic): (usize, usize),
    w: &[QuadW; 9],
    (offs, wm): (&mut [usize; 9], &mut [QuadW; 9]),
) {
    let taps = offs.chunks_exact_mut(3).zip(wm.chunks_exact_mut(3));
    let filter = w.chunks_exact(3);
    for (((o3, w3), f3), (&dy, &vy)) in taps.zip(filter).zip(rows.0.iter().zip(rows.1)) {
        let cols = cols.0.iter().zip(cols.1);
        for (((o, wt), &wf), (&dx, &vx)) in o3.iter_mut().zip(w3.iter_mut()).zip(f3).zip(cols) {
            *o = dy * rs + dx * ic;
            *wt = if vy && vx { wf } else { [0; QUAD_WORDS] };
        }
    }
}

/// Four channels of every pixel of `run`: nine taps at `offs` from each
/// pixel's base, requantized and stored. One call per row (or edge pixel)
/// keeps the pixel loop, its taps and its stores in one function.
#[inline(never)]
fn quad3x3_run<const B: bool>(
    x: &[u8],
    out: &mut [u8],
    run: &Run,
    offs: &[usize; 9],
    w: &[QuadW; 9],
    (off2, in_off): (u32, i32),
    q: &[Requant; 4],
) {
    let (mut xi, mut oi) = (run.x, run.out);
    for _ in 0..run.pixels {
        // Inside the input by construction; a tap past it reads zeros.
        let win = x.get(xi..).unwrap_or(&[]);
        let at = |o: usize| word::<B>(win, o);
        // Written out tap by tap: at opt-level "s" a loop stays rolled.
        let [o0, o1, o2, o3, o4, o5, o6, o7, o8] = *offs;
        let [w0, w1, w2, w3, w4, w5, w6, w7, w8] = *w;
        let mut a = quad_mac([0; 4], at(o0), w0, off2, in_off);
        a = quad_mac(a, at(o1), w1, off2, in_off);
        a = quad_mac(a, at(o2), w2, off2, in_off);
        a = quad_mac(a, at(o3), w3, off2, in_off);
        a = quad_mac(a, at(o4), w4, off2, in_off);
        a = quad_mac(a, at(o5), w5, off2, in_off);
        a = quad_mac(a, at(o6), w6, off2, in_off);
        a = quad_mac(a, at(o7), w7, off2, in_off);
        a = quad_mac(a, at(o8), w8, off2, in_off);
        if let Some(o) = out.get_mut(oi..oi + run.channels) {
            Requant::apply4(q, a, o);
        }
        xi += run.x_step;
        oi += run.out_step;
    }
}

/// Where [`quad_window`] finds a filter row's weights.
trait TapRows {
    /// Taps `kx0..kx0 + n` of filter row `ky`, as [`quad_mac`] takes them.
    fn row(&self, ky: usize, kx0: usize, n: usize) -> impl Iterator<Item = QuadW>;

    /// The same taps as one weight word each, where they are stored so
    /// (portable builds' unpacked weights).
    #[cfg(microarena_v6m)]
    fn row_words(&self, _ky: usize, _kx0: usize, _n: usize) -> Option<&[u32]> {
        None
    }

    /// Rows `ky0..ky1` one after another as weight words, when the window
    /// takes whole filter rows (`kx0` 0, `n` the filter width).
    #[cfg(microarena_v6m)]
    fn window_words(&self, _ky: (usize, usize), _kx0: usize, _n: usize) -> Option<&[u32]> {
        None
    }
}

/// Weights unpacked once per four channels, `fw` taps a row.
struct Unpacked<'a> {
    wq: &'a [QuadW],
    fw: usize,
}

impl TapRows for Unpacked<'_> {
    #[inline(always)]
    fn row(&self, ky: usize, kx0: usize, n: usize) -> impl Iterator<Item = QuadW> {
        let at = ky * self.fw + kx0;
        self.wq.get(at..at + n).unwrap_or(&[]).iter().copied()
    }

    #[cfg(microarena_v6m)]
    fn row_words(&self, ky: usize, kx0: usize, n: usize) -> Option<&[u32]> {
        let at = ky * self.fw + kx0;
        self.wq.get(at..at + n).map(|w| w.as_flattened())
    }

    #[cfg(microarena_v6m)]
    fn window_words(&self, (ky0, ky1): (usize, usize), kx0: usize, n: usize) -> Option<&[u32]> {
        if kx0 != 0 || n != self.fw {
            return None;
        }
        self.wq
            .get(ky0 * self.fw..ky1 * self.fw)
            .map(|w| w.as_flattened())
    }
}

/// Weights read from the filter (`[1][ky][kx][oc]`) as they are used:
/// channels `c0..c0 + channels`.
struct FilterTaps<'a> {
    w: &'a [u8],
    oc: usize,
    c0: usize,
    fw: usize,
    channels: usize,
}

impl TapRows for FilterTaps<'_> {
    #[inline(always)]
    fn row(&self, ky: usize, kx0: usize, n: usize) -> impl Iterator<Item = QuadW> {
        let at = (ky * self.fw + kx0) * self.oc + self.c0;
        let channels = self.channels;
        let taps = self.w.get(at..).unwrap_or(&[]).chunks(self.oc.max(1));
        taps.take(n).map(move |t| match t.first_chunk::<4>() {
            Some(b) if channels == 4 => quad_weights(*b),
            _ => filter_quad(t, 0, channels),
        })
    }
}

/// Four channels of one output pixel over the taps of its window that lie
/// inside the input (filter rows `ky0..ky1`, columns `kx0..kx0 + n`): `x`
/// from its first tap, rows `rs` bytes apart, taps `ts`. Taps outside the
/// input add nothing in TFLM's kernel, so they are simply not visited.
#[inline(never)]
fn quad_window<const B: bool, T: TapRows>(
    x: &[u8],
    taps: &T,
    ((ky0, ky1), (kx0, n)): ((usize, usize), (usize, usize)),
    (rs, ts): (usize, usize),
    (off2, in_off): (u32, i32),
) -> [i32; 4] {
    let mut acc = [0i32; 4];
    // Armv6-M, one input channel in a single-channel input, whole filter
    // rows: the window in one Thumb-1 call.
    #[cfg(microarena_v6m)]
    if B && ts == 1
        && let Some(ww) = taps.window_words((ky0, ky1), kx0, n)
        && super::v6m::bcast_window(&mut acc, x, (ky1 - ky0, rs, n), ww, in_off)
    {
        return acc;
    }
    for (r, ky) in (ky0..ky1).enumerate() {
        let wr = taps.row(ky, kx0, n);
        let xr = x.get(r * rs..).unwrap_or(&[]);
        // Armv6-M: one input channel's row through its Thumb-1 loop.
        #[cfg(microarena_v6m)]
        if B && ts == 1
            && let Some(ww) = taps.row_words(ky, kx0, n)
            && super::v6m::bcast_window(&mut acc, xr, (1, 0, n), ww, in_off)
        {
            continue;
        }
        if B {
            // One input channel: the same byte for all four lanes. The
            // accumulators as locals (an array stays in memory here).
            let [mut a0, mut a1, mut a2, mut a3] = acc;
            let mut mac = |xb: u8, wk: QuadW| {
                let xv = i32::from(xb as i8).wrapping_add(in_off);
                [a0, a1, a2, a3] = quad_mac_bcast([a0, a1, a2, a3], xv, wk);
            };
            if ts == 1 {
                // A single-channel input (audio spectrograms): the row's
                // taps are consecutive bytes.
                for (&xb, wk) in xr.iter().zip(wr) {
                    mac(xb, wk);
                }
            } else {
                let mut i = 0;
                for wk in wr {
                    mac(xr.get(i).copied().unwrap_or(0), wk);
                    i += ts;
                }
            }
            acc = [a0, a1, a2, a3];
        } else {
            for (kx, wk) in wr.enumerate() {
                acc = quad_mac(acc, quad_at(xr, kx * ts), wk, off2, in_off);
            }
        }
    }
    acc
}

/// `acc[k] += w[k]·xv` for four channels of one input value `xv` (input
/// offset added); `w` from [`quad_weights`].
#[inline(always)]
pub(super) fn quad_mac_bcast(acc: [i32; 4], xv: i32, w: QuadW) -> [i32; 4] {
    #[cfg(microarena_dsp)]
    return super::dsp::depthwise_mac_bcast(acc, xv, w);
    #[cfg(not(microarena_dsp))]
    {
        // Lanes by shifts, written out: as a loop over a byte array Armv6-M
        // keeps both the bytes and the accumulators in memory.
        let v = w[0] as i32;
        let (w0, w1, w2, w3) = (v << 24 >> 24, v << 16 >> 24, v << 8 >> 24, v >> 24);
        let [a0, a1, a2, a3] = acc;
        [
            a0.wrapping_add(w0.wrapping_mul(xv)),
            a1.wrapping_add(w1.wrapping_mul(xv)),
            a2.wrapping_add(w2.wrapping_mul(xv)),
            a3.wrapping_add(w3.wrapping_mul(xv)),
        ]
    }
}

/// The input word of a tap: four channels from `i` ([`quad_at`]: at the
/// input's end, the channels that are there), or (`B`) the byte at `i` for
/// all four lanes.
#[inline(always)]
fn word<const B: bool>(x: &[u8], i: usize) -> [u8; 4] {
    if B {
        [x.get(i).copied().unwrap_or(0); 4]
    } else {
        quad_at(x, i)
    }
}

/// Four input bytes from `i` (zeros past the end: their lanes are unused).
#[inline(always)]
fn quad_at(x: &[u8], i: usize) -> [u8; 4] {
    match x.get(i..).and_then(|s| s.first_chunk::<4>()) {
        Some(b) => *b,
        None => {
            let mut b = [0u8; 4];
            for (d, &v) in b.iter_mut().zip(x.get(i..).unwrap_or(&[])) {
                *d = v;
            }
            b
        }
    }
}

/// Four channels' filter bytes at `i` (the first `n`; the others 0), as
/// [`quad_mac`] takes them.
#[inline(always)]
fn filter_quad(w: &[u8], i: usize, n: usize) -> QuadW {
    let s = w.get(i..).unwrap_or(&[]);
    let b = match s.first_chunk::<4>() {
        Some(b) if n == 4 => *b,
        _ => {
            let mut b = [0u8; 4];
            for (d, &v) in b.iter_mut().zip(s).take(n) {
                *d = v;
            }
            b
        }
    };
    quad_weights(b)
}

/// Four channels' filter bytes at one tap, as [`quad_mac`] takes them.
#[inline(always)]
pub(super) fn quad_weights(w: [u8; 4]) -> QuadW {
    #[cfg(microarena_dsp)]
    return super::dsp::depthwise_weights(w);
    #[cfg(not(microarena_dsp))]
    [u32::from_le_bytes(w)]
}

/// `acc[k] += w[k]·(x[k] + in_off)` for four channels; `w` from
/// [`quad_weights`], `off2` = `in_off` in both 16-bit lanes (DSP cores).
#[inline(always)]
pub(super) fn quad_mac(acc: [i32; 4], x: [u8; 4], w: QuadW, off2: u32, in_off: i32) -> [i32; 4] {
    #[cfg(microarena_dsp)]
    {
        let _ = in_off;
        super::dsp::depthwise_mac(acc, x, w, off2)
    }
    #[cfg(not(microarena_dsp))]
    {
        let _ = off2;
        let mut acc = acc;
        for ((a, xv), wv) in acc.iter_mut().zip(x).zip(w[0].to_le_bytes()) {
            let xv = i32::from(xv as i8).wrapping_add(in_off);
            *a = a.wrapping_add(i32::from(wv as i8).wrapping_mul(xv));
        }
        acc
    }
}

/// Int8 depthwise with any multiplier (e.g. one input channel to eight):
/// one output channel at a time over every pixel, its parameters decoded
/// and its filter taps read once (bit-exact: the same integer sums).
fn depthwise_i8(
    out: &mut [u8],
    g: &Geo,
    (x, w): (&[u8], &[u8]),
    end: &Epilogue<'_>,
    (mult, in_off): (usize, i32),
) {
    let taps = (g.fh as usize * g.fw as usize).min(MAX_TAPS);
    let fast = (g.fh, g.fw, g.dh, g.dw) == (3, 3, 1, 1);
    let mut params = end.channels();
    let mut wt = [0i32; MAX_TAPS];
    for oc in 0..g.oc {
        let q = Requant::new(end, params.next().unwrap_or((0, 0, 0)));
        let ch = oc / mult.max(1);
        for (t, v) in wt.iter_mut().take(taps).enumerate() {
            // Filter [1][ky][kx][oc].
            *v = i8_at(w, t * g.oc + oc);
        }
        let w9 = wt.first_chunk::<9>().unwrap_or(&[0; 9]);
        for b in 0..g.batches {
            for oy in 0..g.oh {
                let iy0 = (oy as i32).wrapping_mul(g.sh).wrapping_sub(g.pad_h);
                let row_in = fast && iy0 >= 0 && iy0 + 2 < g.ih;
                for ox in 0..g.ow {
                    let ix0 = (ox as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
                    let acc = if row_in && ix0 >= 0 && ix0 + 2 < g.iw {
                        let i = g.in_index(b, iy0, ix0, ch);
                        x.get(i..)
                            .and_then(|x| one3x3(x, g.iw as usize * g.ic, g.ic, w9, in_off))
                    } else {
                        None
                    };
                    let acc = acc.unwrap_or_else(|| {
                        one_pixel(x, g, (b, oy, ox, ch), wt.get(..taps).unwrap_or(&[]), in_off)
                    });
                    if let Some(o) = out.get_mut(g.out_index(b, oy, ox, oc)) {
                        *o = q.apply(acc);
                    }
                }
            }
        }
    }
}

/// One channel of one output pixel whose 3×3 window (dilation 1) lies inside
/// the input, `x` from its top-left tap; rows `rs` bytes apart, columns `ic`.
#[inline(always)]
fn one3x3(x: &[u8], rs: usize, ic: usize, w: &[i32; 9], in_off: i32) -> Option<i32> {
    let at = |o: usize| x.get(o).map(|&v| i32::from(v as i8).wrapping_add(in_off));
    let (r1, r2, c2) = (rs, 2 * rs, 2 * ic);
    let [w0, w1, w2, w3, w4, w5, w6, w7, w8] = *w;
    let mut a = w0.wrapping_mul(at(0)?);
    a = a.wrapping_add(w1.wrapping_mul(at(ic)?));
    a = a.wrapping_add(w2.wrapping_mul(at(c2)?));
    a = a.wrapping_add(w3.wrapping_mul(at(r1)?));
    a = a.wrapping_add(w4.wrapping_mul(at(r1 + ic)?));
    a = a.wrapping_add(w5.wrapping_mul(at(r1 + c2)?));
    a = a.wrapping_add(w6.wrapping_mul(at(r2)?));
    a = a.wrapping_add(w7.wrapping_mul(at(r2 + ic)?));
    a = a.wrapping_add(w8.wrapping_mul(at(r2 + c2)?));
    Some(a)
}

/// One channel of one output pixel, any window: the taps inside the input.
#[inline(never)]
fn one_pixel(
    x: &[u8],
    g: &Geo,
    (b, oy, ox, ch): (usize, usize, usize, usize),
    wt: &[i32],
    in_off: i32,
) -> i32 {
    let mut acc = 0i32;
    g.for_each_tap(b, oy, ox, ch, |tap, ii| {
        let xv = i8_at(x, ii).wrapping_add(in_off);
        acc = acc.wrapping_add(wt.get(tap).copied().unwrap_or(0).wrapping_mul(xv));
    });
    acc
}

/// Eval of the int8 depthwise convolution (float32: [`eval_f32`], int16: [`eval_16x8`]).
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let mult = c.op.params::<WindowParams>().depth_multiplier.max(1) as usize;
    let in_off = input.zero_point.wrapping_neg();
    let lanes = (-32640..=32640).contains(&in_off);
    if lanes && mult == 1 && g.ic == g.oc {
        depthwise_i8_quads::<false>(c.out, &g, (x, w), &end, (1, in_off));
        return Ok(());
    }
    // Four output channels of one input channel share each input byte.
    if lanes && mult.is_multiple_of(4) && g.ic.saturating_mul(mult) == g.oc {
        depthwise_i8_quads::<true>(c.out, &g, (x, w), &end, (mult, in_off));
        return Ok(());
    }
    if (g.fh as usize) * (g.fw as usize) <= MAX_TAPS {
        depthwise_i8(c.out, &g, (x, w), &end, (mult, in_off));
        return Ok(());
    }
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ic in 0..g.ic {
                    for m in 0..mult {
                        let oc = m + ic * mult;
                        let oi = g.out_index(b, oy, ox, oc);
                        // Filter [1][ky][kx][oc].
                        let fi = |tap: usize| tap * g.oc + oc;
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
    Ok(())
}

/// The float32 DEPTHWISE_CONV_2D (TFLM's reference `DepthwiseConv`): per
/// output channel, the taps inside the input in filter order.
fn eval_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let mult = c.op.params::<WindowParams>().depth_multiplier.max(1) as usize;
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ic in 0..g.ic {
                    for m in 0..mult {
                        let oc = m + ic * mult;
                        let mut total = 0.0f32;
                        // Filter [1][ky][kx][oc].
                        g.for_each_tap(b, oy, ox, ic, |tap, ii| {
                            total += f32_at(x, ii) * f32_at(w, tap * g.oc + oc);
                        });
                        end.put_f32(c.out, g.out_index(b, oy, ox, oc), oc, total);
                    }
                }
            }
        }
    }
    Ok(())
}

/// The 16x8 DEPTHWISE_CONV_2D (int16 input and output, int8 filter), TFLM's
/// int16 `DepthwiseConvPerChannel`: an int64 accumulator over the taps
/// inside the input, no zero point (TFLM's 16-bit kernel reads none).
fn eval_16x8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (_, w) = c.input(1);
    let end = Epilogue16::new(c, c.input(2), false);
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &c.input(1).0);
    let mult = c.op.params::<WindowParams>().depth_multiplier.max(1) as usize;
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ic in 0..g.ic {
                    for m in 0..mult {
                        let oc = m + ic * mult;
                        let mut acc = 0i64;
                        g.for_each_tap(b, oy, ox, ic, |tap, ii| {
                            // Filter [1][ky][kx][oc].
                            let wv = i8_at(w, tap * g.oc + oc);
                            acc = acc.wrapping_add(i64::from(wv * i16_at(x, ii)));
                        });
                        end.put(c.out, g.out_index(b, oy, ox, oc), oc, oc, acc);
                    }
                }
            }
        }
    }
    Ok(())
}
