//! Sequence kernels with state: UNIDIRECTIONAL_SEQUENCE_LSTM and SVDF,
//! bit-exact with TFLM's reference kernels (`lstm_eval.h`/`lstm_eval.cc`,
//! `svdf_common.cc`).
//!
//! Their state tensors are *variables*: they live in the variable region at
//! the bottom of the tail (`runtime_layout::STORAGE_VARIABLE`), keep their
//! address for the interpreter's life and carry over from one invoke to the
//! next until `Interpreter::reset`.

use microarena_core::runtime_layout::{self as rl, dtype};

use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use crate::kernels::{
    Ctx, Prep, W, act_f32, f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32,
};

// ---------------------------------------------------------------- int16 nonlinearities

/// TFLM's `sigmoid_table_uint16`: sigmoid(i/24) in 0.16, shared by the int16
/// logistic and tanh.
const SIGMOID_TABLE: [u16; 256] = [
    32768, 33451, 34133, 34813, 35493, 36169, 36843, 37513, 38180, 38841, 39498, 40149, 40794,
    41432, 42064, 42688, 43304, 43912, 44511, 45102, 45683, 46255, 46817, 47369, 47911, 48443,
    48964, 49475, 49975, 50464, 50942, 51409, 51865, 52311, 52745, 53169, 53581, 53983, 54374,
    54755, 55125, 55485, 55834, 56174, 56503, 56823, 57133, 57433, 57724, 58007, 58280, 58544,
    58800, 59048, 59288, 59519, 59743, 59959, 60168, 60370, 60565, 60753, 60935, 61110, 61279,
    61441, 61599, 61750, 61896, 62036, 62172, 62302, 62428, 62549, 62666, 62778, 62886, 62990,
    63090, 63186, 63279, 63368, 63454, 63536, 63615, 63691, 63765, 63835, 63903, 63968, 64030,
    64090, 64148, 64204, 64257, 64308, 64357, 64405, 64450, 64494, 64536, 64576, 64614, 64652,
    64687, 64721, 64754, 64786, 64816, 64845, 64873, 64900, 64926, 64950, 64974, 64997, 65019,
    65039, 65060, 65079, 65097, 65115, 65132, 65149, 65164, 65179, 65194, 65208, 65221, 65234,
    65246, 65258, 65269, 65280, 65291, 65301, 65310, 65319, 65328, 65337, 65345, 65352, 65360,
    65367, 65374, 65381, 65387, 65393, 65399, 65404, 65410, 65415, 65420, 65425, 65429, 65433,
    65438, 65442, 65445, 65449, 65453, 65456, 65459, 65462, 65465, 65468, 65471, 65474, 65476,
    65479, 65481, 65483, 65485, 65488, 65489, 65491, 65493, 65495, 65497, 65498, 65500, 65501,
    65503, 65504, 65505, 65507, 65508, 65509, 65510, 65511, 65512, 65513, 65514, 65515, 65516,
    65517, 65517, 65518, 65519, 65520, 65520, 65521, 65522, 65522, 65523, 65523, 65524, 65524,
    65525, 65525, 65526, 65526, 65526, 65527, 65527, 65528, 65528, 65528, 65529, 65529, 65529,
    65529, 65530, 65530, 65530, 65530, 65531, 65531, 65531, 65531, 65531, 65532, 65532, 65532,
    65532, 65532, 65532, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65533, 65534, 65534,
    65534, 65534, 65534, 65534, 65534, 65534, 65534, 65534, 65535,
];

#[inline]
fn table(i: u32) -> u32 {
    SIGMOID_TABLE
        .get(i as usize)
        .copied()
        .map_or(65535, u32::from)
}

/// The input scaling shared by the int16 logistic and tanh: with
/// `multiplier == 0`, `x · 3 << left_shift`; otherwise `x · multiplier`
/// rounding-shifted right by `left_shift` (TFLM's `input_multiplier` /
/// `input_left_shift`). Shifts wrap at 32 bits, as the C++ would on the
/// targets, so no parameter can make a debug build panic.
fn scale_i16_input(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    let (m, s) = if multiplier == 0 {
        (3i32.wrapping_shl(left_shift as u32), 0)
    } else {
        (multiplier, left_shift)
    };
    let round = if s > 0 {
        1i32.wrapping_shl((s - 1) as u32)
    } else {
        0
    };
    x.wrapping_mul(m).wrapping_add(round) >> s.clamp(0, 31)
}

/// `reference_integer_ops::Logistic` for int16 (input Q3.12, output Q0.15).
pub fn logistic_i16(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    let v = scale_i16_input(x, multiplier, left_shift);
    let a = v.unsigned_abs();
    let uh = a >> 9;
    let mut r: u32 = if uh >= 255 {
        0x7FFF << 10
    } else {
        let (ua, ub) = (table(uh), table(uh + 1));
        (ua << 9).wrapping_add((a & 0x1ff).wrapping_mul(ub.wrapping_sub(ua)))
    };
    r = if v >= 0 {
        r.wrapping_add(1 << 9)
    } else {
        (1u32 << 25)
            .wrapping_sub(r)
            .wrapping_add(1 << 9)
            .wrapping_sub(1)
    };
    i32::from((r >> 10) as i16)
}

/// `reference_integer_ops::Tanh` for int16.
pub fn tanh_i16(x: i32, multiplier: i32, left_shift: i32) -> i32 {
    let v = scale_i16_input(x, multiplier, left_shift);
    let a = v.unsigned_abs();
    let uh = a >> 8;
    let r: i32 = if uh >= 255 {
        0xFFFF << 8
    } else {
        let (ua, ub) = (table(uh), table(uh + 1));
        (ua << 8).wrapping_add((a & 0xFF).wrapping_mul(ub.wrapping_sub(ua))) as i32
    };
    let r = if v >= 0 {
        r.wrapping_sub(1 << 23).wrapping_add(1 << 7)
    } else {
        r.wrapping_neg()
            .wrapping_add(1 << 23)
            .wrapping_add(1 << 7)
            .wrapping_sub(1)
    };
    i32::from((r >> 8) as i16)
}

/// TFLM's float logistic (with its cut-offs).
pub(crate) fn sigmoid_f32(v: f32) -> f32 {
    if v > 16.619_047 {
        1.0
    } else if v < -9.0 {
        libm::expf(v)
    } else {
        1.0 / (1.0 + libm::expf(-v))
    }
}

/// TFLM's `CheckedLog2`: log2 of a float rounded as TFLM computes it, and
/// whether `x` is a power of two (fractional part below 1e-3).
fn checked_log2(x: f32) -> (i32, bool) {
    let l = libm::logf(x) * (1.0 / libm::logf(2.0));
    let rounded = libm::roundf(l);
    (rounded as i32, libm::fabsf(l - rounded) < 1e-3)
}

// ---------------------------------------------------------------- LSTM

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
pub(crate) fn prepare_lstm(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut W<'_>,
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
    let time_major = p.op.param(0) != 0;
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
            wi.storage == rl::STORAGE_CONST
                && wr.storage == rl::STORAGE_CONST
                && b.storage == rl::STORAGE_CONST,
            "weights and biases must be constant",
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
    let gate_scale = f64::from(0.000_244_140_63f32);
    for &(wi, wr, _) in &GATES {
        for (src, w) in [(input, p.input(wi)?), (hidden, p.input(wr)?)] {
            let real = f64::from(src.scale * w.scale) / gate_scale;
            let (m, s) = fx::quantize_multiplier(real);
            words.push(m);
            words.push(s);
        }
    }
    let nl_out = f64::from(0.000_030_517_578f32);
    let cell_scale = f64::from(cell.scale);
    for (a, b, o) in [
        (nl_out, cell_scale, cell_scale),
        (nl_out, nl_out, cell_scale),
        (nl_out, nl_out, f64::from(hidden.scale)),
    ] {
        let (m, s) = fx::quantize_multiplier(a * b / o);
        words.push(m);
        words.push(s);
    }
    let clip = f64::from(f32::from_bits(p.op.param(1) as u32));
    let q_clip = (clip / cell_scale).clamp(-32768.0, 32767.0) as i16;
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

/// State tensor `k` of the op (LSTM hidden/cell, SVDF activation state) and
/// its byte range in the variable region.
fn state_tensor(
    c: &Ctx<'_, '_>,
    k: usize,
    missing: &'static str,
) -> Result<(TensorInfo, (usize, usize)), Error> {
    let t = c.tensor(k).ok_or(c.fail()(missing))?;
    Ok((t, (t.location, t.location.saturating_add(t.bytes))))
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
) {
    let fc_i8 = |inp: &[u8],
                 off: usize,
                 zp: i32,
                 w: (&[u8], i32),
                 n_in: usize,
                 bias: Option<&[u8]>,
                 m: i32,
                 sh: i32,
                 dst: &mut [u8]| {
        for r in 0..s.rows {
            for o in 0..s.state {
                let mut acc = 0i32;
                let wrow = o * n_in;
                let xrow = off + r * n_in;
                for d in 0..n_in {
                    let wv = i8_at(w.0, wrow + d).wrapping_sub(w.1);
                    let xv = i8_at(inp, xrow + d).wrapping_sub(zp);
                    acc = acc.wrapping_add(wv.wrapping_mul(xv));
                }
                if let Some(b) = bias {
                    acc = acc.wrapping_add(i32_at(b, o));
                }
                let v = fx::mbqm(acc, m, sh).clamp(-32768, 32767);
                put_i16(dst, r * s.state + o, v);
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
    for i in 0..s.rows * s.state {
        let sum = (i16_at(gate, i) + i16_at(fc, i)).clamp(-32768, 32767);
        let v = if tanh {
            tanh_i16(sum, 0, 0)
        } else {
            logistic_i16(sum, 0, 0)
        };
        put_i16(gate, i, v);
    }
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
pub(crate) fn lstm(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let bad = c.fail();
    let (input, x) = c.input(0);
    let (hidden_t, hidden_range) = state_tensor(c, 18, "hidden state missing")?;
    let (_, cell_range) = state_tensor(c, 19, "cell state missing")?;
    let time_major = c.op.param(0) != 0;
    let [batch, time, in_dim, state] = lstm_sizes(&input, &hidden_t, time_major);
    let float = input.dtype == dtype::F32;
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
    let cell_clip = f32::from_bits(c.op.param(1) as u32);
    let mut step_no = 0usize;
    for b in 0..outer {
        for _ in 0..inner {
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
                gate_i8(s, x, x_zp, hidden, h_zp, wi, wr, bi, gm(0), false, b0, b3);
                let (wi, wr, bi) = g(1);
                gate_i8(s, x, x_zp, hidden, h_zp, wi, wr, bi, gm(1), false, b1, b3);
                let (wi, wr, bi) = g(2);
                gate_i8(s, x, x_zp, hidden, h_zp, wi, wr, bi, gm(2), true, b2, b3);
                let clip = wd(22);
                for i in 0..m {
                    let ci = s.st_off + i;
                    let fc = fx::mbqm(i16_at(b0, i) * i16_at(cell, ci), wd(16), wd(17))
                        .clamp(-32768, 32767);
                    let ig = fx::mbqm(i16_at(b1, i) * i16_at(b2, i), wd(18), wd(19))
                        .clamp(-32768, 32767);
                    let mut v = (fc + ig).clamp(-32768, 32767);
                    if cell_clip > 0.0 {
                        v = v.min(clip).max(-clip);
                    }
                    put_i16(cell, ci, v);
                }
                let (wi, wr, bi) = g(3);
                gate_i8(s, x, x_zp, hidden, h_zp, wi, wr, bi, gm(3), false, b1, b3);
                // Tanh(cell) with the cell scale power, then × output gate.
                let mut shift = wd(23).wrapping_add(15 - 3);
                let mut mult = 0;
                if shift < 0 {
                    shift = shift.wrapping_neg();
                    mult = 3;
                }
                for i in 0..m {
                    let ci = s.st_off + i;
                    let t = tanh_i16(i16_at(cell, ci), mult, shift);
                    let v = fx::mbqm(t * i16_at(b1, i), wd(20), wd(21))
                        .wrapping_add(h_zp)
                        .clamp(-128, 127);
                    put_i8(hidden, ci, v);
                    put_i8(c.out, out_off + i, v);
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- SVDF

/// Prepare for SVDF: int8 (int8 or int16 state and time weights) and float32.
pub(crate) fn prepare_svdf(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut W<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 5, "SVDF needs 5 inputs")?;
    let input = p.input(0)?;
    let wf = p.input(1)?;
    let wt = p.input(2)?;
    let bias = p.opt_input(3)?;
    let st = p.input(4)?;
    p.need(
        st.storage == rl::STORAGE_VARIABLE,
        "activation state must be a variable tensor",
    )?;
    p.need(
        wf.storage == rl::STORAGE_CONST && wt.storage == rl::STORAGE_CONST,
        "weights must be constant",
    )?;
    let rank = p.op.param(0);
    p.need(rank > 0, "rank must be positive")?;
    let rank = rank as usize;
    p.need(
        input.rank == 2 && out.rank == 2,
        "input and output must be 2-D",
    )?;
    let (batch, n_in) = (input.dim(0), input.dim(1));
    let filters = wf.dim(0);
    let memory = wt.dim(1);
    p.need(filters % rank == 0, "filters not a multiple of rank")?;
    let units = filters / rank;
    p.need(out.dim(0) == batch && out.dim(1) == units, "output shape")?;
    p.need(wf.rank == 2 && wf.dim(1) == n_in, "feature weight shape")?;
    p.need(wt.rank == 2 && wt.dim(0) == filters, "time weight shape")?;
    p.need(
        st.rank == 2 && st.dim(0) == batch && st.dim(1) == memory * filters,
        "state shape",
    )?;
    if let Some(b) = &bias {
        p.need(
            b.dim(0) == units && b.storage == rl::STORAGE_CONST,
            "bias shape",
        )?;
    }
    let float = input.dtype == dtype::F32;
    if float {
        p.need(
            wf.dtype == dtype::F32
                && wt.dtype == dtype::F32
                && st.dtype == dtype::F32
                && out.dtype == dtype::F32
                && bias.is_none_or(|b| b.dtype == dtype::F32),
            "float SVDF needs float32 weights, state and output",
        )?;
        p.need(p.op.activation <= 4, "fused activation")?;
    } else {
        p.need(input.dtype == dtype::I8, "only int8 or float32 SVDF")?;
        p.need(
            wf.dtype == dtype::I8
                && (wt.dtype == dtype::I16 || wt.dtype == dtype::I8)
                && st.dtype == wt.dtype
                && out.dtype == dtype::I8
                && bias.is_none_or(|b| b.dtype == dtype::I32),
            "int8 SVDF types",
        )?;
        // The scale products are float, as in TFLM.
        let e1 = f64::from(input.scale * wf.scale / st.scale);
        let e2 = f64::from(st.scale * wt.scale / out.scale);
        for e in [e1, e2] {
            let (m, s) = fx::quantize_multiplier(e);
            words.push(m);
            words.push(s);
        }
    }
    let want = rl::op_scratch_bytes(
        rl::opcode::SVDF,
        out.dtype,
        (batch * filters) as u32,
        (batch * units) as u32,
    ) as usize;
    alloc.request_scratch(p.index, want, p.op.scratch)?;
    Ok(())
}

/// `EvalIntegerSvdfReference` / `EvalFloatSvdfReference`.
pub(crate) fn svdf(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let bad = c.fail();
    let (input, x) = c.input(0);
    let (wf_t, wf) = c.input(1);
    let (wt_t, wt) = c.input(2);
    let (bias_t, bias) = c.input(3);
    let has_bias = bias_t.bytes > 0;
    let (st_t, (lo, hi)) = state_tensor(c, 4, "state missing")?;
    let out_t = c.output_info();
    let rank = c.op.param(0).max(1) as usize;
    let (batch, n_in) = (input.dim(0), input.dim(1));
    let filters = wf_t.dim(0);
    let memory = wt_t.dim(1);
    let units = filters / rank;
    let (m1, s1, m2, s2) = (c.word(0), c.word(1), c.word(2), c.word(3));
    let state = c
        .vars
        .get_mut(lo..hi)
        .ok_or(bad("state outside the variable region"))?;
    let len = batch * filters * memory;
    let float = input.dtype == dtype::F32;
    let wide = st_t.dtype == dtype::I16;
    let esize = if float {
        4
    } else if wide {
        2
    } else {
        1
    };
    // Shift the whole state left by one element (the oldest entry drops out).
    if len > 0 {
        state.copy_within(esize..len * esize, 0);
    }
    let (scratch, scratch_out) = c
        .scratch
        .split_at_mut_checked(4 * batch * filters)
        .ok_or(bad("scratch too small"))?;
    if float {
        for b in 0..batch {
            for j in 0..filters {
                let mut dot = 0.0f32;
                for k in 0..n_in {
                    dot += f32_at(wf, j * n_in + k) * f32_at(x, b * n_in + k);
                }
                put_f32(state, (b * filters + j) * memory + memory - 1, dot);
            }
        }
        for b in 0..batch {
            for i in 0..filters {
                let mut acc = 0.0f32;
                for j in 0..memory {
                    acc += f32_at(wt, i * memory + j)
                        * f32_at(state, b * memory * filters + i * memory + j);
                }
                put_f32(scratch, b * filters + i, acc);
            }
        }
        for b in 0..batch {
            for i in 0..units {
                let mut v = if has_bias { f32_at(bias, i) } else { 0.0 };
                for j in 0..rank {
                    v += f32_at(scratch, b * filters + i * rank + j);
                }
                let v = match c.op.activation {
                    1 => v.max(0.0),
                    2 => act_f32(v, -1.0, 1.0),
                    3 => act_f32(v, 0.0, 6.0),
                    4 => libm::tanhf(v),
                    _ => v,
                };
                put_f32(c.out, b * units + i, v);
            }
        }
        return Ok(());
    }
    let st_zp = st_t.zero_point;
    let (t_min, t_max) = if wide { (-32768, 32767) } else { (-128, 127) };
    let get = |s: &[u8], i: usize| if wide { i16_at(s, i) } else { i8_at(s, i) };
    let put = |s: &mut [u8], i: usize, v: i32| {
        if wide {
            put_i16(s, i, v);
        } else if let Some(b) = s.get_mut(i) {
            *b = v as i8 as u8;
        }
    };
    for b in 0..batch {
        for r in 0..filters {
            let mut dot = 0i32;
            for k in 0..n_in {
                dot = dot.wrapping_add(
                    i8_at(wf, r * n_in + k)
                        .wrapping_mul(i8_at(x, b * n_in + k).wrapping_sub(input.zero_point)),
                );
            }
            let v = fx::mbqm(dot, m1, s1).clamp(t_min, t_max);
            put(
                state,
                (b * filters + r) * memory + memory - 1,
                st_zp.wrapping_add(v),
            );
        }
    }
    for b in 0..batch {
        for i in 0..filters {
            let mut acc = 0i32;
            for j in 0..memory {
                let sv = get(state, b * memory * filters + i * memory + j).wrapping_sub(st_zp);
                acc = acc.wrapping_add(get(wt, i * memory + j).wrapping_mul(sv));
            }
            put_i32(scratch, b * filters + i, acc);
        }
    }
    for b in 0..batch {
        for i in 0..units {
            let mut v = if has_bias { i32_at(bias, i) } else { 0 };
            for j in 0..rank {
                v = v.wrapping_add(i32_at(scratch, b * filters + i * rank + j));
            }
            put_i32(scratch_out, b * units + i, v);
        }
    }
    for i in 0..batch * units {
        let v = fx::mbqm(i32_at(scratch_out, i), m2, s2).wrapping_add(out_t.zero_point);
        put_i8(c.out, i, v.clamp(-128, 127));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int16_sigmoid_and_tanh_fixed_points() {
        // Q3.12 zero: sigmoid 0.5 in Q0.15, tanh 0 (worked by hand from the LUT formulas).
        assert_eq!(logistic_i16(0, 0, 0), 16384);
        assert_eq!(tanh_i16(0, 0, 0), 0);
        // tanh saturates once |3x| >> 8 ≥ 255 (|x| ≥ 21760); sigmoid (>> 9) stays in its table.
        assert_eq!(logistic_i16(32767, 0, 0), 32757);
        assert_eq!(tanh_i16(32767, 0, 0), 32767);
        assert_eq!(tanh_i16(-32768, 0, 0), -32767);
        // Monotonic and (nearly) symmetric, as the shared table makes them.
        let mut last = (i32::MIN, i32::MIN);
        for x in (-32768..=32767).step_by(97) {
            let (s, t) = (logistic_i16(x, 0, 0), tanh_i16(x, 0, 0));
            assert!(s >= last.0 && t >= last.1, "x={x}");
            assert!((s + logistic_i16(-x, 0, 0) - 32768).abs() <= 1, "x={x}");
            last = (s, t);
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
