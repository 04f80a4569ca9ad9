//! What FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D share: a constant
//! filter with an optional bias, the int8 multiply-accumulate, and the
//! epilogue that turns an accumulator into an output value. Prepare writes
//! the OpData the epilogue reads — activation bounds, then one (multiplier,
//! shift) per tensor or per channel — so both sides live here.

use microarena_image::{self as rl, dtype};

use super::bytes::{f32_at, i32_at, put_f32, put_i8};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_i8};
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// Checks the input, the constant filter and the optional bias against the
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
    p.need(
        filter.storage == rl::STORAGE_CONST,
        "filter must be constant",
    )?;
    if let Some(b) = &bias {
        p.need(
            b.dtype == if q { dtype::I32 } else { dtype::F32 },
            "bias type",
        )?;
        p.need(b.elements() >= out.last_dim(), "bias too short")?;
    }
    Ok((input, filter))
}

/// The OpData's channel count for the per-channel convolutions: one
/// (multiplier, shift) per output channel.
pub(crate) fn output_channels(_p: &Prep<'_, '_>, out: &TensorInfo) -> Result<u32, Error> {
    Ok(out.last_dim() as u32)
}

/// Writes the OpData [`Epilogue`] reads: int8 bounds and `channels`
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
    if out.dtype == dtype::I8 {
        let (lo, hi) = act_range_i8(p.op.activation, out).ok_or(p.err("fused activation"))?;
        words.push(lo);
        words.push(hi);
        if per_tensor {
            // GetQuantizedConvolutionMultipler: the scale product is a float.
            let real = f64::from(input.scale * filter.scale) / f64::from(out.scale);
            let (m, s) = fx::quantize_multiplier(real);
            words.push(m);
            words.push(s);
        } else {
            // PopulateConvolutionQuantizationParams (per channel, double).
            p.need(
                filter.n_scales == 1 || filter.n_scales as u32 == channels,
                "filter scales",
            )?;
            for c in 0..channels as usize {
                let fs = f64::from(p.img.scale(filter, if filter.n_scales > 1 { c } else { 0 }));
                let eff = f64::from(input.scale) * fs / f64::from(out.scale);
                let (m, s) = fx::quantize_multiplier(eff);
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
    dot_i8_zp(x, xb, x_off.wrapping_neg(), w, wb, 0, n)
}

/// `Σ w·x` for four int8 weight runs `stride` apart against the same run
/// of `x` (no zero point: the caller adds `x_off·Σw`): the input is widened
/// once for four products, and the loop carries only the four sums.
#[inline]
pub(crate) fn dot4_i8(
    x: &[u8],
    xb: usize,
    w: &[u8],
    wb: usize,
    stride: usize,
    n: usize,
) -> [i32; 4] {
    let run = |k: usize| {
        let at = wb.saturating_add(k.saturating_mul(stride));
        w.get(at..at.saturating_add(n))
    };
    let (Some(xs), Some(w0), Some(w1), Some(w2), Some(w3)) = (
        x.get(xb..xb.saturating_add(n)),
        run(0),
        run(1),
        run(2),
        run(3),
    ) else {
        return [0; 4];
    };
    let mut p = [0i32; 4];
    for ((((&a, &b0), &b1), &b2), &b3) in xs.iter().zip(w0).zip(w1).zip(w2).zip(w3) {
        let xv = i32::from(a as i8);
        for (pk, wk) in p.iter_mut().zip([b0, b1, b2, b3]) {
            *pk = pk.wrapping_add(i32::from(wk as i8).wrapping_mul(xv));
        }
    }
    p
}

/// `Σ w` over `n` int8 values from `at` (0 when out of range).
#[inline]
pub(crate) fn sum_i8(w: &[u8], at: usize, n: usize) -> i32 {
    w.get(at..at.saturating_add(n)).map_or(0, |ws| {
        ws.iter()
            .fold(0i32, |s, &b| s.wrapping_add(i32::from(b as i8)))
    })
}

/// `Σ (w − w_zp)·(x − x_zp)` over `n` int8 values of `x` from `xb` and of
/// `w` from `wb`; 0 when either run is out of range (construction's
/// validation rules that out).
///
/// Computed as `Σw·x − x_zp·Σw − w_zp·Σx + n·w_zp·x_zp`: equal modulo 2³² to
/// the direct sum (so to TFLM's int32 sum whenever that does not overflow,
/// which TFLM relies on too), in plain loops of reductions that LLVM
/// vectorizes, where subtracting in the loop does not.
#[inline]
pub(crate) fn dot_i8_zp(
    x: &[u8],
    xb: usize,
    x_zp: i32,
    w: &[u8],
    wb: usize,
    w_zp: i32,
    n: usize,
) -> i32 {
    let (Some(xs), Some(ws)) = (
        x.get(xb..xb.saturating_add(n)),
        w.get(wb..wb.saturating_add(n)),
    ) else {
        return 0;
    };
    // i8×i8 products fit in i16, which SSE2/NEON multiply eight at a time;
    // folding the zero point into x first would need 32-bit products.
    let (mut wx, mut sw) = (0i32, 0i32);
    for (&a, &b) in xs.iter().zip(ws) {
        let (xv, wv) = (i32::from(a as i8), i32::from(b as i8));
        wx = wx.wrapping_add(wv.wrapping_mul(xv));
        sw = sw.wrapping_add(wv);
    }
    let mut acc = wx.wrapping_sub(x_zp.wrapping_mul(sw));
    // int8 weights are symmetric (zero point 0) in every TFLM int8 kernel
    // but the LSTM's; only then is Σx needed.
    if w_zp != 0 {
        let sx = xs
            .iter()
            .fold(0i32, |s, &a| s.wrapping_add(i32::from(a as i8)));
        acc = acc
            .wrapping_sub(w_zp.wrapping_mul(sx))
            .wrapping_add((n as i32).wrapping_mul(w_zp).wrapping_mul(x_zp));
    }
    acc
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
        Epilogue {
            bias: (bias.0.bytes > 0).then_some(bias.1),
            opdata: c.opdata,
            out_zp: c.output_info().zero_point,
            lo: c.word(0),
            hi: c.word(1),
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
