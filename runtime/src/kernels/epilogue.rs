//! What FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D share: a
//! filter with an optional bias, the int8 multiply-accumulate, and the
//! epilogue that turns an accumulator into an output value. Prepare writes
//! the OpData the epilogue reads — activation bounds, then one (multiplier,
//! shift) per tensor or per channel — so both sides live here.

use microarena_image::dtype;

use super::bytes::{f32_at, i16_at, i32_at, i64_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_i8, act_range_int};
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// Checks the input, the filter and the optional bias against the
/// output's type; returns (input, filter).
pub(crate) fn check_operands(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
) -> Result<(TensorInfo, TensorInfo), Error> {
    let q = out.dtype == dtype::I8;
    let f = out.dtype == dtype::F32;
    let input = p.input(0)?;
    let filter = p.input(1)?;
    let bias = p.opt_input(2)?;
    p.need(
        input.dtype == out.dtype && filter.dtype == out.dtype,
        "only int8 or float32 with matching types",
    )?;
    p.need(q || f, "only int8 or float32")?;
    if let Some(b) = &bias {
        p.need(
            b.dtype == if q { dtype::I32 } else { dtype::F32 },
            "bias type",
        )?;
        p.need(b.elements() >= out.last_dim(), "bias too short")?;
    }
    Ok((input, filter))
}

/// TFLM's 16x8 operands (int16 input and output, constant int8 filter):
/// checks them and the optional bias, whose type must be one of `biases`
/// (the kernel's Eval reads the bias as that type); returns (input, filter).
/// `quantized` asks for quantized input and filter (the convolutions'
/// `PopulateConvolutionQuantizationParams` refuses them otherwise).
pub(crate) fn check_operands_16x8(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    biases: &[i8],
    quantized: bool,
) -> Result<(TensorInfo, TensorInfo), Error> {
    let input = p.input(0)?;
    let filter = p.input(1)?;
    p.need(
        input.dtype == dtype::I16 && filter.dtype == dtype::I8 && out.dtype == dtype::I16,
        "int16 needs an int8 filter and an int16 output",
    )?;
    p.need(
        !quantized || (input.n_scales > 0 && filter.n_scales > 0),
        "int16 needs a quantized input and filter",
    )?;
    if let Some(b) = p.opt_input(2)? {
        p.need(biases.contains(&b.dtype), "bias type")?;
        p.need(b.elements() >= out.last_dim(), "bias too short")?;
    }
    Ok((input, filter))
}

/// The OpData's channel count for the per-channel convolutions: one
/// (multiplier, shift) per output channel.
pub(crate) fn output_channels(_p: &Prep<'_, '_>, out: &TensorInfo) -> Result<u32, Error> {
    Ok(out.last_dim() as u32)
}

/// Writes the OpData [`Epilogue`] (and [`Epilogue16`]) reads: int8 (int16)
/// bounds and `channels`
/// (multiplier, shift) pairs — one from the float scale product when
/// `per_tensor` — or the float bounds.
pub(crate) fn push_opdata(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    (input, filter): (&TensorInfo, &TensorInfo),
    channels: u32,
    per_tensor: bool,
    words: &mut OpDataWriter<'_>,
) -> Result<(), Error> {
    if out.dtype != dtype::F32 {
        let (lo, hi) = if out.dtype == dtype::I16 {
            act_range_int(p.op.activation, out, -32768, 32767)
        } else {
            act_range_i8(p.op.activation, out)
        }
        .ok_or(p.err("fused activation"))?;
        words.push(lo);
        words.push(hi);
        if per_tensor {
            // GetQuantizedConvolutionMultipler: the scale product is a float.
            let (m, s) = quantize_ratio(input.scale * filter.scale, 1.0, out.scale);
            words.push(m);
            words.push(s);
        } else {
            // PopulateConvolutionQuantizationParams (per channel, double).
            p.need(
                filter.n_scales == 1 || filter.n_scales as u32 == channels,
                "filter scales",
            )?;
            for c in 0..channels as usize {
                let fs = p.img.scale(filter, if filter.n_scales > 1 { c } else { 0 });
                let (m, s) = quantize_ratio(input.scale, fs, out.scale);
                words.push(m);
                words.push(s);
            }
        }
    } else {
        let (lo, hi) = act_range_f32(p.op.activation).ok_or(p.err("fused activation"))?;
        words.push(lo.to_bits() as i32);
        words.push(hi.to_bits() as i32);
    }
    Ok(())
}

/// `Σ w[wb+k] · (x[xb+k] + x_off)` over `n` int8 pairs, wrapping as TFLM's
/// int32 accumulator (integer sums do not depend on the order, so this
/// contiguous form is bit-exact and lets the compiler vectorize it).
#[inline]
pub(crate) fn dot_i8(x: &[u8], xb: usize, w: &[u8], wb: usize, n: usize, x_off: i32) -> i32 {
    match (
        x.get(xb..xb.saturating_add(n)),
        w.get(wb..wb.saturating_add(n)),
    ) {
        (Some(xs), Some(ws)) => {
            #[cfg(microarena_dsp)]
            if let Some(acc) = super::dsp::dot_i8(xs, ws, x_off) {
                return acc;
            }
            let mut acc = 0i32;
            let mut wsum = 0i32;
            for (&a, &b) in xs.iter().zip(ws) {
                let wv = i32::from(b as i8);
                acc = acc.wrapping_add(wv.wrapping_mul(i32::from(a as i8)));
                wsum = wsum.wrapping_add(wv);
            }
            acc.wrapping_add(wsum.wrapping_mul(x_off))
        }
        _ => 0,
    }
}

/// [`dot_i8`] of rows `0..rows` of `len` bytes of `x` and `w` (0 for a row
/// either lacks), handed to `each` in row order: one pass with no call per
/// row (SVDF's state rows against its time weights, a few bytes each).
#[inline]
pub(crate) fn row_dots_i8(
    (x, w): (&[u8], &[u8]),
    (rows, len): (usize, usize),
    x_off: i32,
    mut each: impl FnMut(i32),
) {
    let whole = rows
        .checked_mul(len)
        .is_some_and(|n| len > 0 && x.len() >= n && w.len() >= n);
    if !whole {
        for k in 0..rows {
            let at = k.saturating_mul(len);
            each(dot_i8(x, at, w, at, len, x_off));
        }
        return;
    }
    for (xs, ws) in x.chunks_exact(len).zip(w.chunks_exact(len)).take(rows) {
        #[cfg(microarena_dsp)]
        if let Some(acc) = super::dsp::dot_i8_inline(xs, ws, x_off) {
            each(acc);
            continue;
        }
        each(dot_i8(xs, 0, ws, 0, len, x_off));
    }
}

/// `Σ a[k]·b[k]` over the int16 pairs both slices hold, wrapping as an
/// int32 accumulator (SMLAD on DSP cores).
#[inline]
pub(crate) fn dot_i16x16(a: &[u8], b: &[u8]) -> i32 {
    let n = a.len().min(b.len()) & !1;
    let (a, b) = (a.get(..n).unwrap_or(&[]), b.get(..n).unwrap_or(&[]));
    #[cfg(microarena_dsp)]
    return super::dsp::dot_i16x16(a, b);
    #[cfg(not(microarena_dsp))]
    {
        let (a, b) = (a.as_chunks::<2>().0, b.as_chunks::<2>().0);
        a.iter().zip(b).fold(0i32, |acc, (x, y)| {
            let p = i32::from(i16::from_le_bytes(*x)) * i32::from(i16::from_le_bytes(*y));
            acc.wrapping_add(p)
        })
    }
}

/// [`dot_i8`] for two filter rows at `wb0` and `wb1` over the same input:
/// on DSP cores each input word is unpacked once for both.
#[inline]
pub(crate) fn dot2_i8(
    x: &[u8],
    xb: usize,
    w: &[u8],
    (wb0, wb1): (usize, usize),
    n: usize,
    x_off: i32,
) -> (i32, i32) {
    #[cfg(microarena_dsp)]
    if let (Some(xs), Some(w0), Some(w1)) = (
        x.get(xb..xb.saturating_add(n)),
        w.get(wb0..wb0.saturating_add(n)),
        w.get(wb1..wb1.saturating_add(n)),
    ) && let Some(pair) = super::dsp::dot2_i8(xs, w0, w1, x_off)
    {
        return pair;
    }
    #[cfg(microarena_v6m)]
    if let (Some(xs), Some(w0), Some(w1)) = (
        x.get(xb..xb.saturating_add(n)),
        w.get(wb0..wb0.saturating_add(n)),
        w.get(wb1..wb1.saturating_add(n)),
    ) {
        return super::v6m::dot2_i8(xs, w0, w1, x_off);
    }
    (
        dot_i8(x, xb, w, wb0, n, x_off),
        dot_i8(x, xb, w, wb1, n, x_off),
    )
}

/// [`dot_i8`] for three filter rows at `wb` over the same input: on DSP
/// cores each input word is unpacked once for all three.
#[inline]
pub(crate) fn dot3_i8(
    x: &[u8],
    xb: usize,
    w: &[u8],
    wb: [usize; 3],
    n: usize,
    x_off: i32,
) -> [i32; 3] {
    #[cfg(microarena_dsp)]
    if let Some(xs) = x.get(xb..xb.saturating_add(n)) {
        let row = |b: usize| w.get(b..b.saturating_add(n)).unwrap_or(&[]);
        let rows = [row(wb[0]), row(wb[1]), row(wb[2])];
        if let Some(acc) = super::dsp::dot3_i8(xs, rows, x_off) {
            return acc;
        }
    }
    wb.map(|b| dot_i8(x, xb, w, b, n, x_off))
}

/// `acc[k] += Σ w[k·stride + i]·(x[i] + x_off)` for `i < x.len()`: one
/// call for a block of channels (on DSP cores, two rows per input read).
#[inline]
pub(crate) fn accumulate_rows(x: &[u8], w: &[u8], stride: usize, acc: &mut [i32], x_off: i32) {
    #[cfg(microarena_dsp)]
    if super::dsp::accumulate_rows(x, w, stride, acc, x_off).is_some() {
        return;
    }
    let n = x.len();
    for (k, a) in acc.iter_mut().enumerate() {
        *a = a.wrapping_add(dot_i8(x, 0, w, k * stride, n, x_off));
    }
}

/// Input words a [`Rows4`] keeps unpacked on DSP cores (2 KiB of stack):
/// rows up to 256 values; longer rows finish on the portable loop.
#[cfg(microarena_dsp)]
const ROWS4_WORDS: usize = 64;

/// Input values a [`Rows4`] keeps interleaved on portable builds (512 B of
/// stack): rows up to 128 values; longer rows finish on the per-row loop.
#[cfg(not(microarena_dsp))]
const ROWS4_INPUTS: usize = 128;

/// Four filter rows of a matrix product, prepared once for many input
/// vectors (the pixels of a 1×1 convolution): on DSP cores their bytes are
/// unpacked into 16-bit lanes here, so each pixel's pass unpacks only its
/// input, once for all four rows.
pub(crate) struct Rows4<'w> {
    rows: [&'w [u8]; 4],
    /// Portable builds: per input value, the four rows' weights in one word
    /// (row k in byte k), so each input value is loaded once for four rows.
    #[cfg(not(microarena_dsp))]
    inter: [u32; ROWS4_INPUTS],
    #[cfg(not(microarena_dsp))]
    done: usize,
    #[cfg(microarena_dsp)]
    /// Per input word, the four rows' (bytes 0 and 2, bytes 1 and 3) lanes.
    /// Flat, so that making it is one memclr, not one per word.
    lanes: [u32; 8 * ROWS4_WORDS],
    /// Bytes from the start of each row that `lanes` covers.
    #[cfg(microarena_dsp)]
    done: usize,
}

impl<'w> Rows4<'w> {
    /// No rows yet ([`Rows4::set`] takes them). A plain literal, so the
    /// buffer is built where the caller keeps it: built here and then set,
    /// it was cleared in one 2 KiB stack slot and copied to another.
    #[inline(always)]
    pub(crate) fn empty() -> Self {
        Rows4 {
            rows: [&[]; 4],
            #[cfg(not(microarena_dsp))]
            inter: [0; ROWS4_INPUTS],
            #[cfg(not(microarena_dsp))]
            done: 0,
            #[cfg(microarena_dsp)]
            lanes: [0u32; 8 * ROWS4_WORDS],
            #[cfg(microarena_dsp)]
            done: 0,
        }
    }

    /// Takes four other rows, reusing the buffer (2 KiB not cleared and
    /// copied again per four channels); returns each row's sum (to fold
    /// the input offset into the bias), found while unpacking.
    pub(crate) fn set(&mut self, rows: [&'w [u8]; 4]) -> [i32; 4] {
        self.rows = rows;
        #[cfg(microarena_dsp)]
        let (done, mut sums) = {
            let lanes = self.lanes.as_chunks_mut::<8>().0;
            let (words, sums) = super::dsp::unpack_rows4(rows, lanes);
            self.done = 4 * words;
            (4 * words, sums)
        };
        #[cfg(not(microarena_dsp))]
        let (done, mut sums) = {
            let n = rows
                .iter()
                .map(|r| r.len())
                .max()
                .unwrap_or(0)
                .min(ROWS4_INPUTS);
            let mut sums = [0i32; 4];
            for (i, slot) in self.inter.iter_mut().enumerate().take(n) {
                let mut word = 0u32;
                for (k, (r, s)) in rows.iter().zip(sums.iter_mut()).enumerate() {
                    let v = r.get(i).copied().unwrap_or(0);
                    *s = s.wrapping_add(i32::from(v as i8));
                    word |= u32::from(v) << (8 * k);
                }
                *slot = word;
            }
            self.done = n;
            (n, sums)
        };
        for (s, r) in sums.iter_mut().zip(rows) {
            *s = r
                .get(done..)
                .unwrap_or(&[])
                .iter()
                .fold(*s, |a, &v| a.wrapping_add(i32::from(v as i8)));
        }
        sums
    }

    /// `Σ row_k[i]·x[i]` (no offset) for the four rows, over the shorter of
    /// `x` and each row (a missing row gives 0).
    #[inline]
    pub(crate) fn dot(&self, x: &[u8]) -> [i32; 4] {
        #[cfg(microarena_dsp)]
        let (mut acc, done) = {
            let words = (x.len() / 4).min(self.done / 4);
            let lanes = self.lanes.as_chunks::<8>().0.get(..words).unwrap_or(&[]);
            (super::dsp::dot1x4_unpacked(x, lanes), 4 * words)
        };
        #[cfg(not(microarena_dsp))]
        let (mut acc, done) = {
            let n = x.len().min(self.done);
            let inter = self.inter.get(..n).unwrap_or(&[]);
            #[cfg(microarena_v6m)]
            let a = super::v6m::dot1x4_interleaved(x, inter);
            #[cfg(not(microarena_v6m))]
            let mut a = [0i32; 4];
            #[cfg(not(microarena_v6m))]
            for (&xv, &w) in x.iter().zip(inter) {
                let xv = i32::from(xv as i8);
                // Row k's weight is byte k, sign-extended.
                a[0] = a[0].wrapping_add(((w << 24) as i32 >> 24).wrapping_mul(xv));
                a[1] = a[1].wrapping_add(((w << 16) as i32 >> 24).wrapping_mul(xv));
                a[2] = a[2].wrapping_add(((w << 8) as i32 >> 24).wrapping_mul(xv));
                a[3] = a[3].wrapping_add((w as i32 >> 24).wrapping_mul(xv));
            }
            (a, n)
        };
        let xs = x.get(done..).unwrap_or(&[]);
        if xs.is_empty() {
            return acc;
        }
        for (a, r) in acc.iter_mut().zip(self.rows) {
            for (&xv, &wv) in xs.iter().zip(r.get(done..).unwrap_or(&[])) {
                *a = a.wrapping_add(i32::from(xv as i8) * i32::from(wv as i8));
            }
        }
        acc
    }
}

/// One output channel's requantization with its parameters decoded once:
/// [`Epilogue::put_i8_with`] for a channel, without reading or decoding its
/// parameters per value. `bias` may include `in_off · Σ filter`.
#[derive(Clone, Copy)]
pub(crate) struct Requant {
    /// `bias · 2^left` (wrapping): `(acc + bias) · 2^left` is one MLA.
    bias: i32,
    /// `2^left` (wrapping), the left shift as a multiplier.
    lmul: i32,
    m: i32,
    /// `2^(right − 1)` and `right − 1`, for a right shift of at least 1.
    half: i32,
    rm1: u32,
    /// The right shift is 0 (multipliers ≥ 0.5): srdhm alone.
    r0: bool,
    /// `2^(r − 1) + zp·2^r`: the rounding term with the zero point folded
    /// in, for [`Requant::apply`]'s fast path.
    tz: i32,
    /// [`Requant::apply`] takes its fast path: a right shift r in 1..=23
    /// (`tz` fits 32 bits) and int8's whole range as the bounds (one SSAT).
    fast: bool,
    zp: i32,
    /// The activation bounds clamped to int8: clamping to them equals
    /// clamping to the bounds and then to int8.
    lo: i32,
    hi: i32,
}

impl Requant {
    /// TFLM's `MultiplyByQuantizedMultiplier(acc + bias, m, s)` + zero point,
    /// clamped: the shift split into a left shift and a rounding right shift.
    pub(crate) fn new(end: &Epilogue<'_>, p: (i32, i32, i32)) -> Self {
        Requant::with(p, end.out_zp, (end.lo, end.hi))
    }

    /// [`Requant::new`] from the output zero point and the activation bounds.
    fn with((bias, m, s): (i32, i32, i32), zp: i32, (lo, hi): (i32, i32)) -> Self {
        let left = if s > 0 { s.min(31) as u32 } else { 0 };
        let right = if s > 0 {
            0
        } else {
            s.wrapping_neg().clamp(0, 31) as u32
        };
        let lmul = 1i32.wrapping_shl(left);
        let half = 1i32.wrapping_shl(right.saturating_sub(1));
        let (lo, hi) = (lo.clamp(-128, 127), hi.clamp(-128, 127));
        let fold = (1..=23).contains(&right) && (-256..=255).contains(&zp);
        Requant {
            bias: bias.wrapping_mul(lmul),
            lmul,
            m,
            half,
            rm1: right.saturating_sub(1),
            r0: right == 0,
            tz: if fold {
                half.wrapping_add(zp.wrapping_shl(right))
            } else {
                0
            },
            fast: fold && (lo, hi) == (-128, 127),
            zp,
            lo,
            hi,
        }
    }

    /// Adds `d` to the bias (wrapping, as the accumulator).
    pub(crate) fn bias_add(&mut self, d: i32) {
        self.bias = self.bias.wrapping_add(d.wrapping_mul(self.lmul));
    }

    /// The output byte of accumulator `acc`, bit for bit [`Epilogue::put_i8_with`].
    ///
    /// With a right shift r ≥ 1 both roundings happen in one 64-bit sum:
    /// srdhm is ⌊(x·m + 2^30) / 2^31⌋ (gemmlowp's nudge-and-truncate equals
    /// it for every product) and rdbpot(h, r) is ⌊(h + 2^(r−1) − [h < 0]) /
    /// 2^r⌋, and nested floors merge, so the value is
    /// ⌊(P + (2^(r−1) − [P < 0])·2^31) / 2^(31+r)⌋ with P = x·m + 2^30: the
    /// high word of that sum shifted by r − 1. [h < 0] is [P < 0]. The one
    /// product where srdhm saturates (x = m = i32::MIN) gives 2^(31−r) both
    /// ways, so no case is left out.
    ///
    /// The fast path adds the zero point inside the same sum: ⌊A / 2^k⌋ +
    /// zp = ⌊(A + zp·2^k) / 2^k⌋ with k = 31 + r, so the rounding term
    /// becomes `tz` − [P < 0] = 2^(r−1) + zp·2^r − [P < 0] (times 2^31). For
    /// r ≤ 23 and |zp| ≤ 256 it fits 32 bits and the 64-bit sum stays below
    /// 2^63 (|P| ≤ 2^62 + 2^30), so the value is exact; the bounds are
    /// int8's, one SSAT. Every other case is out of line.
    #[inline(always)]
    pub(crate) fn apply(&self, acc: i32) -> u8 {
        if !self.fast {
            return self.apply_general(acc);
        }
        let x = acc.wrapping_mul(self.lmul).wrapping_add(self.bias);
        let p = fx::mul_wide(x, self.m) + (1 << 30);
        let t = self.tz.wrapping_add((p >> 63) as i32);
        let v = ((p.wrapping_add(i64::from(t) << 31) >> 32) as i32) >> self.rm1;
        v.clamp(-128, 127) as i8 as u8
    }

    /// [`Requant::apply`] outside its fast path: [`Requant::scale`], the
    /// zero point, the activation bounds.
    #[inline(never)]
    fn apply_general(&self, acc: i32) -> u8 {
        let v = self.scale(acc);
        // lo and hi are int8 already; max then min as TFLM (lo > hi gives hi).
        v.wrapping_add(self.zp).max(self.lo).min(self.hi) as i8 as u8
    }

    /// `MultiplyByQuantizedMultiplier(acc + bias, m, s)` alone (see [`Requant::apply`]).
    #[inline(always)]
    pub(crate) fn scale(&self, acc: i32) -> i32 {
        let x = acc.wrapping_mul(self.lmul).wrapping_add(self.bias);
        if self.r0 {
            return self.srdhm(x);
        }
        let p = fx::mul_wide(x, self.m) + (1 << 30);
        // t = 2^(r−1) − [P < 0] ≥ 0: shifted as unsigned, the 64-bit add
        // takes it as two shifted operands (ADDS/ADC).
        let t = self.half.wrapping_add((p >> 63) as i32) as u32;
        ((p.wrapping_add((u64::from(t) << 31) as i64) >> 32) as i32) >> self.rm1
    }

    /// srdhm alone, for a right shift of 0; it saturates for x = m =
    /// i32::MIN only. Out of line: the int8 kernels' loops, where shifts of
    /// 0 are rare, keep their registers.
    #[inline(never)]
    fn srdhm(&self, x: i32) -> i32 {
        if x == i32::MIN && self.m == i32::MIN {
            i32::MAX
        } else {
            ((fx::mul_wide(x, self.m) + (1 << 30)) >> 31) as i32
        }
    }

    /// [`Requant::scale`] with the shift-0 case inline too, for callers
    /// whose multipliers are mostly ≥ 0.5 (the LSTM gates' int16 outputs).
    #[inline(always)]
    pub(crate) fn scale_inline(&self, acc: i32) -> i32 {
        if self.r0 {
            let x = acc.wrapping_mul(self.lmul).wrapping_add(self.bias);
            if x == i32::MIN && self.m == i32::MIN {
                return i32::MAX;
            }
            return ((fx::mul_wide(x, self.m) + (1 << 30)) >> 31) as i32;
        }
        self.scale(acc)
    }

    /// [`Requant::scale`] for a multiplier and shift alone (no bias).
    pub(crate) fn scaler(m: i32, s: i32) -> Self {
        Requant::with((0, m, s), 0, (0, 0))
    }

    /// Four channels' output bytes at once, when `out` has room for four.
    #[inline(always)]
    pub(crate) fn apply4(q: &[Requant; 4], acc: [i32; 4], out: &mut [u8]) {
        if let Some(o) = out.first_chunk_mut::<4>() {
            let [q0, q1, q2, q3] = q;
            let [a0, a1, a2, a3] = acc;
            *o = [q0.apply(a0), q1.apply(a1), q2.apply(a2), q3.apply(a3)];
        } else {
            for ((o, q), a) in out.iter_mut().zip(q).zip(acc) {
                *o = q.apply(a);
            }
        }
    }
}

/// The end of every FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D output
/// value, as TFLM's reference kernels do it: int8 adds the bias, requantizes
/// with the channel's (multiplier, shift) from the OpData, adds the output
/// zero point and clamps; float adds the bias and applies the activation.
pub(crate) struct Epilogue<'e> {
    bias: Option<&'e [u8]>,
    opdata: &'e [u8],
    out_zp: i32,
    lo: i32,
    hi: i32,
}

impl<'e> Epilogue<'e> {
    pub(crate) fn new(c: &Ctx<'e, '_>, bias: (TensorInfo, &'e [u8])) -> Self {
        Self::of(c.opdata, c.output_info().zero_point, bias)
    }

    /// The epilogue from the op's OpData (activation bounds in words 0 and
    /// 1, then its multipliers), output zero point and bias.
    pub(crate) fn of(opdata: &'e [u8], out_zp: i32, bias: (TensorInfo, &'e [u8])) -> Self {
        Epilogue {
            bias: (bias.0.bytes > 0).then_some(bias.1),
            opdata,
            out_zp,
            lo: i32_at(opdata, 0),
            hi: i32_at(opdata, 1),
        }
    }

    /// Int8: bias `ch`, multiplier `k` (the channel, or 0 per tensor).
    #[inline]
    pub(crate) fn put_i8(&self, out: &mut [u8], oi: usize, ch: usize, k: usize, acc: i32) {
        let acc = match self.bias {
            Some(b) => acc.wrapping_add(i32_at(b, ch)),
            None => acc,
        };
        let acc = fx::mbqm(
            acc,
            i32_at(self.opdata, 2 + 2 * k),
            i32_at(self.opdata, 3 + 2 * k),
        );
        put_i8(
            out,
            oi,
            acc.wrapping_add(self.out_zp).max(self.lo).min(self.hi),
        );
    }

    /// `(bias, multiplier, shift)` of channels 0, 1, … in order — what
    /// [`Epilogue::put_i8`] reads for channel `k`, without an index check per
    /// value (0 past the end, as the accessors).
    pub(crate) fn channels(&self) -> impl Iterator<Item = (i32, i32, i32)> + '_ {
        let word = |c: &[u8]| c.first_chunk::<4>().map_or(0, |b| i32::from_le_bytes(*b));
        let bias = self.bias.unwrap_or(&[]).chunks_exact(4).map(word);
        let pairs = self.opdata.get(8..).unwrap_or(&[]).chunks_exact(8);
        let pairs = pairs.map(move |c| (word(c), c.get(4..).map_or(0, word)));
        bias.chain(core::iter::repeat(0))
            .zip(pairs.chain(core::iter::repeat((0, 0))))
            .map(|(b, (m, s))| (b, m, s))
    }

    /// [`Epilogue::put_i8`] with the channel's parameters from [`Epilogue::channels`].
    #[inline]
    pub(crate) fn put_i8_with(
        &self,
        out: &mut [u8],
        oi: usize,
        (bias, m, s): (i32, i32, i32),
        acc: i32,
    ) {
        let acc = fx::mbqm(acc.wrapping_add(bias), m, s);
        put_i8(
            out,
            oi,
            acc.wrapping_add(self.out_zp).max(self.lo).min(self.hi),
        );
    }

    #[inline]
    pub(crate) fn put_f32(&self, out: &mut [u8], oi: usize, ch: usize, total: f32) {
        let bias = self.bias.map_or(0.0, |b| f32_at(b, ch));
        let (lo, hi) = (
            f32::from_bits(self.lo as u32),
            f32::from_bits(self.hi as u32),
        );
        put_f32(out, oi, act_f32(total + bias, lo, hi));
    }
}

/// The end of a 16x8 output value, as TFLM's reference kernels do it: the
/// accumulator width follows the bias — int32 (the sum wraps; the bias is
/// added in int32 and the 32-bit `MultiplyByQuantizedMultiplier` scales
/// it) or int64 (no bias, or an int64 one: the 64-bit one, with its 16-bit
/// multiplier) — then the output offset (FULLY_CONNECTED only; the
/// convolutions ignore zero points) and the activation bounds, which lie in
/// int16. Callers sum exactly in `i64`; its low 32 bits are the wrapping
/// int32 sum.
pub(crate) struct Epilogue16<'e> {
    bias: &'e [u8],
    /// The bias is int32 (TFLM's int32 accumulator).
    acc32: bool,
    has_bias: bool,
    opdata: &'e [u8],
    out_off: i32,
    lo: i32,
    hi: i32,
}

impl<'e> Epilogue16<'e> {
    /// `out_offset`: add the output zero point (FULLY_CONNECTED does).
    pub(crate) fn new(c: &Ctx<'e, '_>, bias: (TensorInfo, &'e [u8]), out_offset: bool) -> Self {
        let has_bias = bias.0.bytes > 0;
        Epilogue16 {
            bias: bias.1,
            acc32: has_bias && bias.0.dtype == dtype::I32,
            has_bias,
            opdata: c.opdata,
            out_off: if out_offset {
                c.output_info().zero_point
            } else {
                0
            },
            lo: c.word(0),
            hi: c.word(1),
        }
    }

    /// The int16 output of sum `acc`: bias `ch`, multiplier `k`.
    #[inline]
    pub(crate) fn put(&self, out: &mut [u8], oi: usize, ch: usize, k: usize, acc: i64) {
        let (m, s) = (
            i32_at(self.opdata, 2 + 2 * k),
            i32_at(self.opdata, 3 + 2 * k),
        );
        let v = if self.acc32 {
            let acc = (acc as i32).wrapping_add(i32_at(self.bias, ch));
            fx::mbqm(acc, m, s)
        } else {
            let bias = if self.has_bias {
                i64_at(self.bias, ch)
            } else {
                0
            };
            fx::mbqm_i64(acc.wrapping_add(bias), m, s)
        };
        put_i16(
            out,
            oi,
            v.wrapping_add(self.out_off).max(self.lo).min(self.hi),
        );
    }
}

/// `Σ w[wb+k] · x[xb+k]` over `n` (int16 input, int8 filter) pairs, exact.
#[inline]
pub(crate) fn dot_i16(x: &[u8], xb: usize, w: &[u8], wb: usize, n: usize) -> i64 {
    let mut acc = 0i64;
    for k in 0..n {
        let wv = i32::from(w.get(wb + k).map_or(0, |&v| v as i8));
        acc = acc.wrapping_add(i64::from(i16_at(x, xb + k) * wv));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::Requant;
    use crate::fixedpoint as fx;

    /// `Requant` against TFLM's sequence as `Epilogue::put_i8_with` does it
    /// (`mbqm`, zero point, activation clamp, int8 clamp), on edge and
    /// pseudo-random accumulators, multipliers and shifts.
    #[test]
    fn requant_matches_mbqm() {
        let mut r = 0x9e37_79b9u32;
        let mut next = move || {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            r as i32
        };
        let edges = [
            0,
            1,
            -1,
            i32::MAX,
            i32::MIN,
            1 << 30,
            -(1 << 30),
            12345,
            -12345,
        ];
        let mults = [
            0,
            1 << 30,
            i32::MAX,
            i32::MIN,
            1_518_500_250,
            -1_518_500_250,
        ];
        // Under Miri (no unsafe here; CI's slowest test at 634 s) a sample
        // of both sweeps: the random cases, every fifth shift and every
        // third power of two.
        let (n, shift_step, power_step) = if cfg!(miri) {
            (500, 5, 3)
        } else {
            (20_000, 1, 1)
        };
        for i in 0..n {
            let acc = if i % 4 == 0 {
                edges[i % edges.len()]
            } else {
                next()
            };
            let bias = if i % 3 == 0 { 0 } else { next() >> (i % 20) };
            let m = if i % 5 == 0 {
                mults[i % mults.len()]
            } else {
                next()
            };
            let s = (next() % 40).clamp(-35, 35);
            let zp = next() % 128;
            // Bounds as activations give them, and arbitrary ones (outside
            // int8, or lo > hi) for the clamp's equivalence.
            let (lo, hi) = match i % 4 {
                0 => (-128, 127),
                1 => (zp, 127),
                _ => (next() % 300, next() % 300),
            };
            let want = fx::mbqm(acc.wrapping_add(bias), m, s)
                .wrapping_add(zp)
                .max(lo)
                .min(hi)
                .clamp(-128, 127) as i8 as u8;
            let got = Requant::with((bias, m, s), zp, (lo, hi)).apply(acc);
            assert_eq!(got, want, "acc {acc} bias {bias} m {m} s {s}");
        }
        // Both of apply's paths are exercised below: the fast one (right
        // shifts 1..=23, int8 bounds) and the general one.
        let fast = (-31..=3).filter(|&s| Requant::with((0, 1 << 30, s), -128, (-128, 127)).fast);
        assert_eq!(fast.count(), 23);
        assert!(!Requant::with((0, 1 << 30, -5), 0, (0, 127)).fast);
        // Every right shift against structured accumulators: powers of two
        // and their neighbours, both signs, where both roundings meet ties,
        // and the saturating product (x = m = i32::MIN).
        for s in (-31..=3).step_by(shift_step) {
            for &m in &mults {
                for j in (0..32).step_by(power_step) {
                    let p = 1i32.wrapping_shl(j);
                    let n = p.wrapping_neg();
                    for acc in [
                        p,
                        p.wrapping_sub(1),
                        p.wrapping_add(1),
                        n,
                        n.wrapping_add(1),
                        n.wrapping_sub(1),
                        i32::MIN,
                    ] {
                        for zp in [-128, 0, 127] {
                            let want = fx::mbqm(acc, m, s).wrapping_add(zp).clamp(-128, 127);
                            let q = Requant::with((0, m, s), zp, (-128, 127));
                            assert_eq!(
                                q.apply(acc),
                                want as i8 as u8,
                                "acc {acc} m {m} s {s} zp {zp}"
                            );
                            let scaled = fx::mbqm(acc, m, s);
                            assert_eq!(q.scale(acc), scaled, "acc {acc} m {m} s {s}");
                            assert_eq!(q.scale_inline(acc), scaled, "acc {acc} m {m} s {s}");
                        }
                    }
                }
            }
        }
    }
}
