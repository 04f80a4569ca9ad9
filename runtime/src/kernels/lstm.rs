//! UNIDIRECTIONAL_SEQUENCE_LSTM (int8 with int16 cell, and float32),
//! bit-exact with TFLM's reference kernel (`lstm_eval.h`/`lstm_eval.cc`).
//!
//! The hidden and cell state are *variables*: they live in the variable
//! region at the bottom of the tail (`microarena_image::STORAGE_VARIABLE`), keep
//! their address for the interpreter's life and carry over from one invoke to
//! the next until `Interpreter::reset`.

use microarena_image::params::LstmParams;
use microarena_image::{self as rl, dtype};

use super::activations::sigmoid_f32;
use super::bytes::{f32_at, i8_at, i32_at, put_f32, put_i16};
use super::context::{Ctx, OpDataWriter, Prep, state_tensor};
use super::epilogue::{Requant, dot_i8, dot2_i8, dot3_i8};
use super::{Kernel, kernel, variant};
use crate::arena::ArenaAllocator;
use crate::dyadic::{Dyadic, quantize_ratio};
use crate::error::Error;
use crate::fixedpoint::{logistic_i16, tanh_i16};
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    // Hidden state and cell state.
    state_inputs: &[18, 19],
    // The float32 LSTM (libm's exp and tanh, soft-float double on a
    // Cortex-M) is a branch of its own, linked only where a model has one.
    variants: [variant(dtype::F32, "float32", eval::<true>), None],
    ..kernel(opcode::UNIDIRECTIONAL_SEQUENCE_LSTM, prepare, eval::<false>)
}];

/// TFLM's `CheckedLog2`: log2 of a float rounded as TFLM computes it, and
/// whether `x` is a power of two (fractional part below 1e-3).
fn checked_log2(x: f32) -> (i32, bool) {
    let l = libm::logf(x) * (1.0 / libm::logf(2.0));
    let rounded = libm::roundf(l);
    (rounded as i32, libm::fabsf(l - rounded) < 1e-3)
}

/// Schema code of TANH as a fused activation: the only cell-gate activation
/// core passes on (SIGMOID reaches the image as 0 and is refused).
const LSTM_ACT_TANH: u8 = 4;
const LSTM_INPUTS: usize = 24;
/// Weight, recurrent weight and bias inputs of the forget, input, cell and
/// output gates, in TFLM's evaluation order.
const GATES: [(usize, usize, usize); 4] = [(2, 6, 13), (1, 5, 12), (3, 7, 14), (4, 8, 15)];

/// The LSTM geometry: (batch, time, input dim, state dim, time major).
fn lstm_sizes(input: &TensorInfo, hidden: &TensorInfo, time_major: bool) -> [usize; 4] {
    let (b, t) = if time_major {
        (input.dim(1), input.dim(0))
    } else {
        (input.dim(0), input.dim(1))
    };
    [b, t, input.dim(2), hidden.dim(1)]
}

/// Prepare: validates the standard (Keras) LSTM TFLM supports — no peephole,
/// no projection, no layer norm — and writes the integer OpData.
pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == LSTM_INPUTS, "LSTM needs 24 inputs")?;
    let input = p.input(0)?;
    let hidden = p.input(18)?;
    let cell = p.input(19)?;
    p.need(
        hidden.storage == rl::STORAGE_VARIABLE && cell.storage == rl::STORAGE_VARIABLE,
        "hidden and cell state must be variable tensors",
    )?;
    for k in [9, 10, 11, 16, 17, 20, 21, 22, 23] {
        p.need(
            p.opt_input(k)?.is_none(),
            "peephole, projection and layer-norm LSTMs are not supported (nor by TFLM)",
        )?;
    }
    let float = input.dtype == dtype::F32;
    p.need(
        float || input.dtype == dtype::I8,
        "only int8 (int16 cell) and float32 LSTMs",
    )?;
    p.need(
        hidden.dtype == input.dtype && out.dtype == input.dtype,
        "hidden state and output must have the input's type",
    )?;
    p.need(
        cell.dtype == if float { dtype::F32 } else { dtype::I16 },
        "cell state must be int16 (int8 LSTM) or float32",
    )?;
    p.need(
        input.rank == 3 && out.rank == 3,
        "input and output must be 3-D",
    )?;
    let time_major = p.op.params::<LstmParams>().time_major;
    let [batch, _, in_dim, state] = lstm_sizes(&input, &hidden, time_major);
    p.need(
        out.dim(0) == input.dim(0) && out.dim(1) == input.dim(1) && out.dim(2) == state,
        "output shape",
    )?;
    p.need(
        hidden.elements() == batch * state && cell.elements() == batch * state,
        "state sizes",
    )?;
    let w_type = if float { dtype::F32 } else { dtype::I8 };
    let b_type = if float { dtype::F32 } else { dtype::I32 };
    for &(wi, wr, b) in &GATES {
        let (wi, wr, b) = (p.input(wi)?, p.input(wr)?, p.input(b)?);
        p.need(
            wi.dtype == w_type && wr.dtype == w_type && b.dtype == b_type,
            "weight or bias type",
        )?;
        p.need(
            wi.rank == 2 && wi.dim(0) == state && wi.dim(1) == in_dim,
            "input weight shape",
        )?;
        p.need(
            wr.rank == 2 && wr.dim(0) == state && wr.dim(1) == state,
            "recurrent weight shape",
        )?;
        p.need(b.rank == 1 && b.dim(0) == state, "bias shape")?;
        if !float {
            p.need(
                wi.n_scales <= 1 && wr.n_scales <= 1,
                "per-channel LSTM weights are not supported",
            )?;
        }
    }
    p.need(
        p.op.activation == LSTM_ACT_TANH,
        "cell gate activation must be TANH",
    )?;
    let want = rl::op_scratch_bytes(
        rl::opcode::UNIDIRECTIONAL_SEQUENCE_LSTM,
        out.dtype,
        (batch * state) as u32,
        0,
    ) as usize;
    alloc.request_scratch(p.index, want, p.op.scratch)?;
    if float {
        return Ok(());
    }
    // CreateGateParams: FC multipliers with a 2^-12 int16 output.
    let gate_scale = 0.000_244_140_63f32;
    for &(wi, wr, _) in &GATES {
        for (src, w) in [(input, p.input(wi)?), (hidden, p.input(wr)?)] {
            let (m, s) = quantize_ratio(src.scale * w.scale, 1.0, gate_scale);
            words.push(m);
            words.push(s);
        }
    }
    let nl_out = 0.000_030_517_578f32;
    for (a, b, o) in [
        (nl_out, cell.scale, cell.scale),
        (nl_out, nl_out, cell.scale),
        (nl_out, nl_out, hidden.scale),
    ] {
        let (m, s) = quantize_ratio(a, b, o);
        words.push(m);
        words.push(s);
    }
    let q_clip = quantized_clip(p.op.params::<LstmParams>().cell_clip, cell.scale);
    words.push(i32::from(q_clip));
    // Eval shifts the cell state into tanh's Q3.12 input by 12 + power bits
    // (TFLM's CheckedLog2 refuses a scale that is not a power of two).
    let (power, exact) = checked_log2(cell.scale);
    p.need(
        exact,
        "cell state scale must be a power of two (as TFLM requires)",
    )?;
    p.check(
        (-43..=19).contains(&power),
        "cell state scale too far from Q3.12 for a 32-bit shift",
    )?;
    words.push(power);
    Ok(())
}

/// Two disjoint mutable variable tensors.
fn two_vars(
    vars: &mut [u8],
    a: (usize, usize),
    b: (usize, usize),
) -> Option<(&mut [u8], &mut [u8])> {
    if a.1 <= b.0 {
        let (lo, hi) = vars.split_at_mut_checked(b.0)?;
        Some((lo.get_mut(a.0..a.1)?, hi.get_mut(..b.1 - b.0)?))
    } else if b.1 <= a.0 {
        let (lo, hi) = vars.split_at_mut_checked(a.0)?;
        Some((hi.get_mut(..a.1 - a.0)?, lo.get_mut(b.0..b.1)?))
    } else {
        None
    }
}

/// Geometry of one LSTM step: rows, input dim, state dim, and element offsets.
#[derive(Clone, Copy)]
struct Step {
    rows: usize,
    in_dim: usize,
    state: usize,
    in_off: usize,
    st_off: usize,
}

/// One integer gate (`CalculateLstmGate`): input FC + recurrent FC, saturating
/// add, then the int16 sigmoid or tanh, into `gate` (int16).
#[allow(clippy::too_many_arguments)]
fn gate_i8(
    s: Step,
    x: &[u8],
    x_zp: i32,
    h: &[u8],
    h_zp: i32,
    w_in: (&[u8], i32),
    w_rec: (&[u8], i32),
    bias: &[u8],
    mult: [i32; 4],
    tanh: bool,
    gate: &mut [u8],
    fc: &mut [u8],
    lanes: &mut Lanes,
) {
    let mut fc_i8 = |inp: &[u8],
                     off: usize,
                     zp: i32,
                     w: (&[u8], i32),
                     n_in: usize,
                     bias: Option<&[u8]>,
                     m: i32,
                     sh: i32,
                     dst: &mut [u8]| {
        // Portable builds keep no lanes.
        #[cfg(not(microarena_dsp))]
        let _ = &mut *lanes;
        let rq = Requant::scaler(m, sh);
        let finish = |dst: &mut [u8], r: usize, o: usize, acc: i32| {
            let acc = match bias {
                Some(b) => acc.wrapping_add(i32_at(b, o)),
                None => acc,
            };
            let v = rq.scale_inline(acc).clamp(-32768, 32767);
            put_i16(dst, r * s.state + o, v);
        };
        for r in 0..s.rows {
            let xrow = off + r * n_in;
            let mut o = 0;
            // Symmetric weights (the usual case) take the contiguous dot
            // product, three weight rows per pass over the input (one input
            // read on DSP cores); the sums are the same integers either way.
            #[cfg(microarena_dsp)]
            if w.1 == 0 {
                // The accumulators of three rows per pass, then this input
                // row's int16 outputs in one loop (no index per value).
                let xs = inp.get(xrow..xrow + n_in).unwrap_or(&[]);
                let Lanes { xu, acc } = &mut *lanes;
                o = rows3_unpacked(xs, zp, w.0, s.state, xu, acc);
                let row = dst.get_mut(2 * r * s.state..).unwrap_or_default();
                let (outs, accs) = (row.chunks_exact_mut(2), acc.get(..o).unwrap_or(&[]));
                let put = |d: &mut [u8], a: i32| {
                    let v = rq.scale_inline(a).clamp(-32768, 32767);
                    d.copy_from_slice(&(v as i16).to_le_bytes());
                };
                match bias {
                    Some(b) => {
                        for ((d, &a), b) in outs.zip(accs).zip(b.as_chunks::<4>().0) {
                            put(d, a.wrapping_add(i32::from_le_bytes(*b)));
                        }
                    }
                    None => {
                        for (d, &a) in outs.zip(accs) {
                            put(d, a);
                        }
                    }
                }
            }
            // Armv6-M takes rows in pairs (its Thumb-1 loop holds two sums).
            if !cfg!(microarena_v6m) && w.1 == 0 {
                while o + 2 < s.state {
                    let rows = [o, o + 1, o + 2].map(|r| r * n_in);
                    let acc = dot3_i8(inp, xrow, w.0, rows, n_in, zp.wrapping_neg());
                    for (k, a) in acc.into_iter().enumerate() {
                        finish(dst, r, o + k, a);
                    }
                    o += 3;
                }
            }
            if w.1 == 0 {
                while o + 1 < s.state {
                    let rows = (o * n_in, (o + 1) * n_in);
                    let (a0, a1) = dot2_i8(inp, xrow, w.0, rows, n_in, zp.wrapping_neg());
                    finish(dst, r, o, a0);
                    finish(dst, r, o + 1, a1);
                    o += 2;
                }
            }
            while o < s.state {
                let wrow = o * n_in;
                let acc = if w.1 == 0 {
                    dot_i8(inp, xrow, w.0, wrow, n_in, zp.wrapping_neg())
                } else {
                    let mut acc = 0i32;
                    for d in 0..n_in {
                        let wv = i8_at(w.0, wrow + d).wrapping_sub(w.1);
                        let xv = i8_at(inp, xrow + d).wrapping_sub(zp);
                        acc = acc.wrapping_add(wv.wrapping_mul(xv));
                    }
                    acc
                };
                finish(dst, r, o, acc);
                o += 1;
            }
        }
    };
    fc_i8(
        x,
        s.in_off,
        x_zp,
        w_in,
        s.in_dim,
        Some(bias),
        mult[0],
        mult[1],
        gate,
    );
    fc_i8(
        h, s.st_off, h_zp, w_rec, s.state, None, mult[2], mult[3], fc,
    );
    // Saturating add, then the activation, one loop per activation.
    let pairs = gate
        .as_chunks_mut::<2>()
        .0
        .iter_mut()
        .zip(fc.as_chunks::<2>().0);
    let pairs = pairs.take(s.rows * s.state);
    let sum = |g: [u8; 2], f: [u8; 2]| {
        (i32::from(i16::from_le_bytes(g)) + i32::from(i16::from_le_bytes(f))).clamp(-32768, 32767)
    };
    if tanh {
        for (g, &f) in pairs {
            *g = (tanh_i16(sum(*g, f), 0, 0) as i16).to_le_bytes();
        }
    } else {
        for (g, &f) in pairs {
            *g = (logistic_i16(sum(*g, f), 0, 0) as i16).to_le_bytes();
        }
    }
}

/// Stack buffers of the gate FCs on DSP cores, made once per invoke (not
/// zeroed again per FC): the input unpacked into lanes and the accumulators.
struct Lanes {
    #[cfg(microarena_dsp)]
    xu: [[u32; 2]; LANE_WORDS],
    #[cfg(microarena_dsp)]
    acc: [i32; ACC_ROWS],
}

/// Input words unpacked on the stack: inputs up to 320 values (micro_speech_lstm's 257).
#[cfg(microarena_dsp)]
const LANE_WORDS: usize = 80;
/// Rows of one FC accumulated on the stack before they are requantized.
#[cfg(microarena_dsp)]
const ACC_ROWS: usize = 128;

impl Lanes {
    fn new() -> Self {
        Lanes {
            #[cfg(microarena_dsp)]
            xu: [[0; 2]; LANE_WORDS],
            #[cfg(microarena_dsp)]
            acc: [0; ACC_ROWS],
        }
    }
}

/// The input FC of a gate on DSP cores, three weight rows at a time over the
/// input unpacked once into `xu` (`dsp::unpack_offset`): writes the
/// accumulators of rows `0..` to `acc` and returns the first row it did not
/// do (0 when the input is longer than `xu`; at most `acc.len()`; the
/// caller's loops do the rest). The rows are walked, not indexed.
#[cfg(microarena_dsp)]
pub(super) fn rows3_unpacked(
    xs: &[u8],
    zp: i32,
    w: &[u8],
    rows: usize,
    xu: &mut [[u32; 2]],
    acc: &mut [i32],
) -> usize {
    let n = xs.len();
    let x_off = zp.wrapping_neg();
    let Some(words) = super::dsp::unpack_offset(xs, x_off, xu) else {
        return 0;
    };
    // The last, partial word with zero lanes past the input: its products
    // are 0 whatever weight bytes (the next row's) sit there.
    let mut words = words;
    if !n.is_multiple_of(4) {
        // No room for it: the caller's loops take every row.
        let Some(slot) = xu.get_mut(words) else {
            return 0;
        };
        let lane = |k: usize| {
            xs.get(4 * words + k).map_or(0, |&v| {
                i32::from(v as i8).wrapping_add(x_off) as u32 & 0xffff
            })
        };
        *slot = [lane(0) | lane(2) << 16, lane(1) | lane(3) << 16];
        words += 1;
    }
    let xu = xu.get(..words).unwrap_or(&[]);
    let span = 4 * words;
    // Rows o.. of the matrix.
    let mut rest = w;
    let mut o = 0;
    let rows = rows.min(acc.len());
    for out in acc.chunks_exact_mut(3) {
        // The last rows of the matrix may lack the padding bytes: the
        // caller's loops take them.
        let row = |k: usize| rest.get(k * n..).and_then(|r| r.get(..span));
        let (Some(r0), Some(r1), Some(r2)) = (row(0), row(1), row(2)) else {
            break;
        };
        if o + 2 >= rows {
            break;
        }
        out.copy_from_slice(&super::dsp::dot3_unpacked(xu, [r0, r1, r2]));
        rest = rest.get(3 * n..).unwrap_or(&[]);
        o += 3;
    }
    o
}

/// One float gate.
#[allow(clippy::too_many_arguments)]
fn gate_f32(
    s: Step,
    x: &[u8],
    h: &[u8],
    w_in: &[u8],
    w_rec: &[u8],
    bias: &[u8],
    tanh: bool,
    gate: &mut [u8],
    fc: &mut [u8],
) {
    let fc_f32 =
        |inp: &[u8], off: usize, w: &[u8], n_in: usize, bias: Option<&[u8]>, dst: &mut [u8]| {
            for r in 0..s.rows {
                for o in 0..s.state {
                    let mut total = 0.0f32;
                    for d in 0..n_in {
                        total += f32_at(inp, off + r * n_in + d) * f32_at(w, o * n_in + d);
                    }
                    let b = bias.map_or(0.0, |b| f32_at(b, o));
                    put_f32(dst, r * s.state + o, total + b);
                }
            }
        };
    fc_f32(x, s.in_off, w_in, s.in_dim, Some(bias), gate);
    fc_f32(h, s.st_off, w_rec, s.state, None, fc);
    for i in 0..s.rows * s.state {
        let sum = f32_at(gate, i) + f32_at(fc, i);
        let v = if tanh {
            libm::tanhf(sum)
        } else {
            sigmoid_f32(sum)
        };
        put_f32(gate, i, v);
    }
}

/// `EvalLstm`: every time step (and batch, when batch-major) in TFLM's order.
/// Eval of the int8 LSTM (`FLOAT` false) and the float32 one, whose inputs
/// and output are float32.
pub(crate) fn eval<const FLOAT: bool>(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let bad = c.fail();
    let (input, x) = c.input(0);
    let (hidden_t, hidden_range) = state_tensor(c, 18, "hidden state missing")?;
    let (_, cell_range) = state_tensor(c, 19, "cell state missing")?;
    let time_major = c.op.params::<LstmParams>().time_major;
    let [batch, time, in_dim, state] = lstm_sizes(&input, &hidden_t, time_major);
    let float = FLOAT;
    let mut w = [(&[][..], 0i32); 24];
    for (k, slot) in w.iter_mut().enumerate() {
        let (t, d) = c.input(k);
        *slot = (d, t.zero_point);
    }
    let words: [i32; 24] = core::array::from_fn(|i| c.word(i));
    let wd = |i: usize| words.get(i).copied().unwrap_or(0);
    let tens = |k: usize| w.get(k).copied().unwrap_or((&[][..], 0));
    let gate_of = |k: usize| GATES.get(k).copied().unwrap_or((0, 0, 0));
    let (h_zp, x_zp) = (hidden_t.zero_point, input.zero_point);
    let (hidden, cell) =
        two_vars(c.vars, hidden_range, cell_range).ok_or(bad("state tensors overlap"))?;
    let n = batch * state;
    let part = rl::align4((n * if float { 4 } else { 2 }) as u32) as usize;
    let (b0, rest) = c
        .scratch
        .split_at_mut_checked(part)
        .ok_or(bad("scratch too small"))?;
    let (b1, rest) = rest
        .split_at_mut_checked(part)
        .ok_or(bad("scratch too small"))?;
    let (b2, b3) = rest
        .split_at_mut_checked(part)
        .ok_or(bad("scratch too small"))?;
    let rows = if time_major { batch } else { 1 };
    let (outer, inner) = if time_major { (1, time) } else { (batch, time) };
    let m = rows * state;
    let cell_clip = c.op.params::<LstmParams>().cell_clip;
    let mut lanes = Lanes::new();
    let mut step_no = 0usize;
    for b in 0..outer {
        for _ in 0..inner {
            // Over its input (`opcode::writes_behind_input`): step `t` of the
            // input is in the output's region, read whole before output step
            // `t` is written there.
            let x: &[u8] = if c.in_place == Some(0) { c.out } else { x };
            let s = Step {
                rows,
                in_dim,
                state,
                in_off: step_no * rows * in_dim,
                st_off: if time_major { 0 } else { b * state },
            };
            let out_off = step_no * rows * state;
            step_no += 1;
            if float {
                let g = |k: usize| {
                    let (wi, wr, bi) = gate_of(k);
                    (tens(wi).0, tens(wr).0, tens(bi).0)
                };
                let (wi, wr, bi) = g(0);
                gate_f32(s, x, hidden, wi, wr, bi, false, b0, b3);
                let (wi, wr, bi) = g(1);
                gate_f32(s, x, hidden, wi, wr, bi, false, b1, b3);
                let (wi, wr, bi) = g(2);
                gate_f32(s, x, hidden, wi, wr, bi, true, b2, b3);
                for i in 0..m {
                    let ci = s.st_off + i;
                    let mut v = f32_at(b0, i) * f32_at(cell, ci);
                    let upd = f32_at(b1, i) * f32_at(b2, i);
                    v += upd;
                    if cell_clip > 0.0 {
                        v = v.min(cell_clip).max(-cell_clip);
                    }
                    put_f32(cell, ci, v);
                }
                let (wi, wr, bi) = g(3);
                gate_f32(s, x, hidden, wi, wr, bi, false, b1, b3);
                for i in 0..m {
                    let ci = s.st_off + i;
                    let v = libm::tanhf(f32_at(cell, ci)) * f32_at(b1, i);
                    put_f32(hidden, ci, v);
                    put_f32(c.out, out_off + i, v);
                }
            } else {
                let gm = |k: usize| [wd(4 * k), wd(4 * k + 1), wd(4 * k + 2), wd(4 * k + 3)];
                let g = |k: usize| {
                    let (wi, wr, bi) = gate_of(k);
                    (tens(wi), tens(wr), tens(bi).0)
                };
                let (wi, wr, bi) = g(0);
                gate_i8(
                    s,
                    x,
                    x_zp,
                    hidden,
                    h_zp,
                    wi,
                    wr,
                    bi,
                    gm(0),
                    false,
                    b0,
                    b3,
                    &mut lanes,
                );
                let (wi, wr, bi) = g(1);
                gate_i8(
                    s,
                    x,
                    x_zp,
                    hidden,
                    h_zp,
                    wi,
                    wr,
                    bi,
                    gm(1),
                    false,
                    b1,
                    b3,
                    &mut lanes,
                );
                let (wi, wr, bi) = g(2);
                gate_i8(
                    s,
                    x,
                    x_zp,
                    hidden,
                    h_zp,
                    wi,
                    wr,
                    bi,
                    gm(2),
                    true,
                    b2,
                    b3,
                    &mut lanes,
                );
                let clip = wd(22);
                // MultiplyByQuantizedMultiplier with each multiplier decoded
                // once (Requant::scale is it bit for bit).
                let (qf, qi) = (
                    Requant::scaler(wd(16), wd(17)),
                    Requant::scaler(wd(18), wd(19)),
                );
                let i16_of = |b: &[u8; 2]| i32::from(i16::from_le_bytes(*b));
                let cells = cell.get_mut(2 * s.st_off..).unwrap_or_default();
                let cs = cells.as_chunks_mut::<2>().0.iter_mut();
                let gates = b0.as_chunks::<2>().0.iter().zip(b1.as_chunks::<2>().0);
                let gates = gates.zip(b2.as_chunks::<2>().0);
                for (c, ((f, i), g)) in cs.zip(gates).take(m) {
                    let fc = qf.scale(i16_of(f) * i16_of(c)).clamp(-32768, 32767);
                    let ig = qi.scale(i16_of(i) * i16_of(g)).clamp(-32768, 32767);
                    let mut v = (fc + ig).clamp(-32768, 32767);
                    if cell_clip > 0.0 {
                        v = v.min(clip).max(-clip);
                    }
                    *c = (v as i16).to_le_bytes();
                }
                let (wi, wr, bi) = g(3);
                gate_i8(
                    s,
                    x,
                    x_zp,
                    hidden,
                    h_zp,
                    wi,
                    wr,
                    bi,
                    gm(3),
                    false,
                    b1,
                    b3,
                    &mut lanes,
                );
                // Tanh(cell) with the cell scale power, then × output gate.
                let mut shift = wd(23).wrapping_add(15 - 3);
                let mut mult = 0;
                if shift < 0 {
                    shift = shift.wrapping_neg();
                    mult = 3;
                }
                let qh = Requant::scaler(wd(20), wd(21));
                let cells = cell.get(2 * s.st_off..).unwrap_or_default();
                let cells = cells.as_chunks::<2>().0.iter().zip(b1.as_chunks::<2>().0);
                let hs = hidden.get_mut(s.st_off..).unwrap_or_default().iter_mut();
                let outs = c.out.get_mut(out_off..).unwrap_or_default().iter_mut();
                for ((cv, o), (h, y)) in cells.zip(hs.zip(outs)).take(m) {
                    let t = tanh_i16(i32::from(i16::from_le_bytes(*cv)), mult, shift);
                    let v = qh.scale(t * i32::from(i16::from_le_bytes(*o)));
                    let v = v.wrapping_add(h_zp).clamp(-128, 127) as i8 as u8;
                    (*h, *y) = (v, v);
                }
            }
        }
    }
    Ok(())
}

/// `(double)clip / (double)cell_scale` clamped to int16 and truncated, as
/// TFLM's LSTM quantizes its cell clip (NaN gives 0, ±∞ the bound).
fn quantized_clip(clip: f32, cell_scale: f32) -> i16 {
    let bound = |neg: bool| if neg { -32768 } else { 32767 };
    let neg = clip.is_sign_negative() != cell_scale.is_sign_negative();
    let q = match (Dyadic::f32(clip), Dyadic::f32(cell_scale)) {
        _ if clip.is_nan() || cell_scale.is_nan() => return 0,
        (Some(c), Some(s)) => match c.div(s) {
            Some(q) => q.trunc_i32(),
            // x / 0: ±∞, or NaN for 0 / 0.
            None if clip == 0.0 => 0,
            None => bound(neg),
        },
        // ∞ / ∞ is NaN; ∞ / finite is ±∞; finite / ∞ is 0.
        (None, None) => 0,
        (None, Some(_)) => bound(neg),
        (Some(_), None) => 0,
    };
    q.clamp(-32768, 32767) as i16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_clip_quantizes_as_the_double_quotient() {
        let vals = [
            0.0f32,
            -0.0,
            1.0,
            -3.5,
            8.0,
            1.0e6,
            1.0e-30,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let scales = [
            1.0f32 / 2048.0,
            1.0 / 4096.0,
            0.3,
            -0.5,
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NAN,
        ];
        for clip in vals {
            for scale in scales {
                let want = (f64::from(clip) / f64::from(scale)).clamp(-32768.0, 32767.0) as i16;
                assert_eq!(
                    quantized_clip(clip, scale),
                    want,
                    "clip {clip} scale {scale}"
                );
            }
        }
    }

    #[test]
    fn checked_log2_of_cell_scales() {
        assert_eq!(checked_log2(1.0 / 2048.0), (-11, true));
        assert_eq!(checked_log2(0.000_244_140_63), (-12, true));
        assert_eq!(checked_log2(1.0), (0, true));
        assert!(!checked_log2(0.003).1);
        assert!(!checked_log2(f32::NAN).1);
        assert!(!checked_log2(0.0).1);
    }

    #[test]
    fn two_vars_splits_disjoint_ranges_only() {
        let mut v = [0u8; 10];
        let (a, b) = two_vars(&mut v, (6, 10), (0, 2)).expect("disjoint");
        assert_eq!((a.len(), b.len()), (4, 2));
        assert!(two_vars(&mut v, (0, 4), (3, 6)).is_none());
        assert!(two_vars(&mut v, (8, 12), (0, 2)).is_none());
    }
}
