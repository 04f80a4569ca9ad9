//! Kernels, bit-exact with TFLM's reference kernels, and their Prepare.
//!
//! Prepare validates types and shapes, computes the OpData (requantization
//! multipliers, activation bounds) and writes it into the arena tail as
//! little-endian words; Eval reads it back. Tensor bytes are read with
//! `from_le_bytes` and `get`, so there is no `unsafe` and no panic path: sizes
//! are validated in Prepare, and an impossible out-of-range read yields 0.

use microarena_core::geometry;
use microarena_core::runtime_layout::{self as rl, dtype, opcode};

use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::{Image, OpInfo, TensorInfo};
use crate::seq;

// ---------------------------------------------------------------- byte access

#[inline]
pub(crate) fn i8_at(s: &[u8], i: usize) -> i32 {
    s.get(i).map_or(0, |&b| i32::from(b as i8))
}

#[inline]
pub(crate) fn i32_at(s: &[u8], i: usize) -> i32 {
    s.get(i * 4..)
        .and_then(|b| b.first_chunk::<4>())
        .map_or(0, |b| i32::from_le_bytes(*b))
}

#[inline]
pub(crate) fn f32_at(s: &[u8], i: usize) -> f32 {
    f32::from_bits(i32_at(s, i) as u32)
}

#[inline]
pub(crate) fn i16_at(s: &[u8], i: usize) -> i32 {
    s.get(i * 2..)
        .and_then(|b| b.first_chunk::<2>())
        .map_or(0, |b| i32::from(i16::from_le_bytes(*b)))
}

/// Stores the low 16 bits of `v` (C's `static_cast<int16_t>`; callers clamp first where TFLM does).
#[inline]
pub(crate) fn put_i16(s: &mut [u8], i: usize, v: i32) {
    if let Some(b) = s.get_mut(i * 2..i * 2 + 2) {
        b.copy_from_slice(&(v as i16).to_le_bytes());
    }
}

#[inline]
pub(crate) fn put_i8(s: &mut [u8], i: usize, v: i32) {
    if let Some(b) = s.get_mut(i) {
        *b = v.clamp(-128, 127) as i8 as u8;
    }
}

#[inline]
pub(crate) fn put_i32(s: &mut [u8], i: usize, v: i32) {
    if let Some(b) = s.get_mut(i * 4..i * 4 + 4) {
        b.copy_from_slice(&v.to_le_bytes());
    }
}

#[inline]
pub(crate) fn put_f32(s: &mut [u8], i: usize, v: f32) {
    put_i32(s, i, v.to_bits() as i32);
}

/// `std::min(std::max(x, lo), hi)` as TFLM's `ActivationFunctionWithMinMax` does it.
#[inline]
pub(crate) fn act_f32(x: f32, lo: f32, hi: f32) -> f32 {
    let x = if x < lo { lo } else { x };
    if hi < x { hi } else { x }
}

// ---------------------------------------------------------------- tensor views

/// The arena as a kernel sees it: the output (and scratch) mutable, every
/// other region readable.
pub(crate) struct Ctx<'x, 'm> {
    pub img: &'x Image<'m>,
    pub op: OpInfo,
    pub index: u16,
    pub pieces: Pieces<'x>,
    pub out: &'x mut [u8],
    pub scratch: &'x mut [u8],
    pub opdata: &'x [u8],
    /// The variable region (LSTM/SVDF state), writable by the kernels that own state.
    pub vars: &'x mut [u8],
}

impl<'x> Ctx<'x, '_> {
    pub(crate) fn tensor(&self, k: usize) -> Option<TensorInfo> {
        let t = *self.op.inputs.get(k)?;
        if t == rl::NO_TENSOR || k >= self.op.n_inputs {
            return None;
        }
        self.img.tensor(usize::from(t)).ok()
    }

    fn data(&self, t: &TensorInfo) -> &'x [u8] {
        match t.storage {
            rl::STORAGE_CONST => self.img.const_data(t).unwrap_or(&[]),
            rl::STORAGE_ARENA => {
                let end = t.location.saturating_add(t.bytes);
                self.pieces
                    .iter()
                    .find(|(base, p)| t.location >= *base && end <= base + p.len())
                    .and_then(|(base, p)| p.get(t.location - base..end - base))
                    .unwrap_or(&[])
            }
            _ => &[],
        }
    }

    pub(crate) fn input(&self, k: usize) -> (TensorInfo, &'x [u8]) {
        match self.tensor(k) {
            Some(t) => {
                let d = self.data(&t);
                (t, d)
            }
            None => (EMPTY, &[]),
        }
    }

    pub(crate) fn output_info(&self) -> TensorInfo {
        self.img
            .tensor(usize::from(self.op.output))
            .unwrap_or(EMPTY)
    }

    pub(crate) fn word(&self, i: usize) -> i32 {
        i32_at(self.opdata, i)
    }

    /// [`Error::UnsupportedConfig`] for this op, as a closure that does not
    /// borrow the context (so kernels can use it while they split `vars`
    /// and `scratch`).
    pub(crate) fn fail(&self) -> impl Fn(&'static str) -> Error + Copy + use<> {
        let (op_index, opcode) = (self.index, self.op.opcode);
        move |why| Error::UnsupportedConfig {
            op_index,
            opcode,
            why,
        }
    }
}

const EMPTY: TensorInfo = TensorInfo {
    dtype: -1,
    rank: 0,
    storage: rl::STORAGE_NONE,
    dims: [0; rl::MAX_RANK],
    location: 0,
    bytes: 0,
    scale: 0.0,
    zero_point: 0,
    quant_dim: 0,
    scales_off: 0,
    n_scales: 0,
};

/// Readable arena regions with their offsets.
pub(crate) type Pieces<'x> = [(usize, &'x [u8]); 3];

/// Splits the head into the output, the scratch and the readable rest.
pub(crate) fn carve(
    head: &mut [u8],
    out: (usize, usize),
    scratch: (usize, usize),
) -> Option<(&mut [u8], &mut [u8], Pieces<'_>)> {
    let scratch = if scratch.1 == 0 {
        (out.0 + out.1, 0)
    } else {
        scratch
    };
    let out_first = out.0 <= scratch.0;
    let (r1, r2) = if out_first {
        (out, scratch)
    } else {
        (scratch, out)
    };
    let r1_end = r1.0.checked_add(r1.1)?;
    let r2_end = r2.0.checked_add(r2.1)?;
    if r1_end > r2.0 {
        return None;
    }
    let (p0, rest) = head.split_at_mut_checked(r1.0)?;
    let (m1, rest) = rest.split_at_mut_checked(r1.1)?;
    let (p1, rest) = rest.split_at_mut_checked(r2.0 - r1_end)?;
    let (m2, p2) = rest.split_at_mut_checked(r2.1)?;
    let pieces = [(0, &*p0), (r1_end, &*p1), (r2_end, &*p2)];
    if out_first {
        Some((m1, m2, pieces))
    } else {
        Some((m2, m1, pieces))
    }
}

// ---------------------------------------------------------------- Prepare

pub(crate) struct Prep<'p, 'm> {
    pub img: &'p Image<'m>,
    pub op: &'p OpInfo,
    pub index: u16,
}

impl Prep<'_, '_> {
    pub(crate) fn err(&self, why: &'static str) -> Error {
        Error::UnsupportedConfig {
            op_index: self.index,
            opcode: self.op.opcode,
            why,
        }
    }

    pub(crate) fn input(&self, k: usize) -> Result<TensorInfo, Error> {
        let t = *self.op.inputs.get(k).ok_or(self.err("missing input"))?;
        if t == rl::NO_TENSOR || k >= self.op.n_inputs {
            return Err(self.err("missing input"));
        }
        self.img.tensor(usize::from(t))
    }

    pub(crate) fn opt_input(&self, k: usize) -> Result<Option<TensorInfo>, Error> {
        match self.op.inputs.get(k) {
            Some(&t) if t != rl::NO_TENSOR && k < self.op.n_inputs => {
                self.img.tensor(usize::from(t)).map(Some)
            }
            _ => Ok(None),
        }
    }

    pub(crate) fn output(&self) -> Result<TensorInfo, Error> {
        let t = self.img.tensor(usize::from(self.op.output))?;
        if t.storage != rl::STORAGE_ARENA && t.bytes > 0 {
            return Err(self.err("output is not an arena tensor"));
        }
        Ok(t)
    }

    pub(crate) fn need(&self, ok: bool, why: &'static str) -> Result<(), Error> {
        if ok { Ok(()) } else { Err(self.err(why)) }
    }

    /// [`Error::InvalidOp`] unless `ok`: parameters or shapes that no image
    /// written by core can have.
    pub(crate) fn check(&self, ok: bool, what: &'static str) -> Result<(), Error> {
        if ok {
            Ok(())
        } else {
            Err(Error::InvalidOp {
                op_index: self.index,
                opcode: self.op.opcode,
                what,
            })
        }
    }
}

/// TFLM's output size for SAME or VALID padding, and its padding
/// (`ComputePaddingHeightWidth`), from core's `geometry`: the same arithmetic
/// that lowered the image, in `i64` so no parameter can overflow.
fn window_fits(input: i64, out: i64, filter: i64, stride: i64, dilation: i64, pad: i64) -> bool {
    geometry::effective_filter(filter, dilation) <= i64::from(i32::MAX)
        && (out == geometry::out_same(input, stride)
            || out == geometry::out_valid(input, filter, stride, dilation))
        && pad == geometry::padding_before(input, filter, stride, dilation, out)
}

/// CONV_2D, DEPTHWISE_CONV_2D and the pools: positive strides, dilations and
/// window, the window equal to the filter tensor's (when there is one), and
/// the output size and padding TFLM computes from them. The kernels loop over
/// the output and filter dims; these checks make the parameters they index
/// with agree with those dims.
fn check_window(
    p: &Prep<'_, '_>,
    input: &TensorInfo,
    out: &TensorInfo,
    filter: Option<&TensorInfo>,
) -> Result<(), Error> {
    let param = |i| i64::from(p.op.param(i));
    let (pad_w, pad_h, sw, sh, dw, dh, fw, fh) = (
        param(0),
        param(1),
        param(2),
        param(3),
        param(4),
        param(5),
        param(6),
        param(7),
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

/// Activation bounds for float kernels.
pub(crate) fn act_range_f32(code: u8) -> Option<(f32, f32)> {
    match code {
        0 => Some((f32::MIN, f32::MAX)),
        1 => Some((0.0, f32::MAX)),
        2 => Some((-1.0, 1.0)),
        3 => Some((0.0, 6.0)),
        _ => None,
    }
}

/// TFLM `CalculateActivationRangeQuantized` for int8.
fn act_range_i8(code: u8, out: &TensorInfo) -> Option<(i32, i32)> {
    let q = |f: f32| out.zero_point.saturating_add(fx::round_f32(f / out.scale));
    let (lo, hi) = (-128, 127);
    match code {
        0 => Some((lo, hi)),
        1 => Some((lo.max(q(0.0)), hi)),
        2 => Some((lo.max(q(-1.0)), hi.min(q(1.0)))),
        3 => Some((lo.max(q(0.0)), hi.min(q(6.0)))),
        _ => None,
    }
}

fn same_len(a: &TensorInfo, b: &TensorInfo) -> bool {
    a.elements() == b.elements()
}

/// Broadcast-compatible shapes for binary ops (ranks up to 6, dims equal or 1).
fn broadcastable(a: &TensorInfo, b: &TensorInfo, out: &TensorInfo) -> bool {
    let r = out.rank;
    if a.rank > r || b.rank > r {
        return false;
    }
    (0..r).all(|k| {
        let o = out.dim(k);
        let da = if k + a.rank >= r {
            a.dim(k + a.rank - r)
        } else {
            1
        };
        let db = if k + b.rank >= r {
            b.dim(k + b.rank - r)
        } else {
            1
        };
        (da == o || da == 1) && (db == o || db == 1) && o == da.max(db)
    })
}

/// Index into `t` (right-aligned, broadcast dims of 1) for output element `i`.
fn bcast_index(i: usize, out: &TensorInfo, t: &TensorInfo) -> usize {
    let r = out.rank;
    let mut rem = i;
    let mut idx = 0usize;
    let mut stride = 1usize;
    for k in (0..r).rev() {
        let o = out.dim(k).max(1);
        let c = rem % o;
        rem /= o;
        if k + t.rank >= r {
            let d = t.dim(k + t.rank - r);
            if d > 1 {
                idx += c * stride;
            }
            stride *= d.max(1);
        }
    }
    idx
}

/// Validates one operator, computes its OpData into the tail and claims its
/// scratch. Called in operator order, so the tail layout is deterministic.
pub(crate) fn prepare(
    img: &Image<'_>,
    index: u16,
    op: &OpInfo,
    alloc: &mut ArenaAllocator,
    arena: &mut [u8],
) -> Result<(), Error> {
    let p = Prep { img, op, index };
    let code = op.opcode;
    if !rl::op_supported(i32::from(code)) {
        return Err(Error::UnsupportedOp {
            op_index: index,
            opcode: code,
        });
    }
    let out = p.output()?;
    let q = out.dtype == dtype::I8;
    let f = out.dtype == dtype::F32;
    let channels = match code {
        opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D => out.last_dim() as u32,
        opcode::FULLY_CONNECTED => p.input(1)?.n_scales.max(1) as u32,
        _ => 1,
    };
    let want = rl::op_tail_bytes(code, out.dtype, channels) as usize;
    let at = if want > 0 {
        alloc.allocate_persistent(want, rl::TAIL_ALIGN as usize)?
    } else {
        0
    };
    let arena_len = arena.len();
    let dst = if want > 0 {
        arena.get_mut(at..at + want).ok_or(Error::ArenaTooSmall {
            needed: at + want,
            available: arena_len,
        })?
    } else {
        &mut []
    };
    let mut words = W { dst, n: 0 };
    // Only LSTM (hidden and cell state) and SVDF (activation state) own variables.
    for k in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
        if let Some(t) = p.opt_input(k)? {
            let owned = match code {
                opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => k == 18 || k == 19,
                opcode::SVDF => k == 4,
                _ => false,
            };
            if t.storage == rl::STORAGE_VARIABLE && !owned {
                return Err(p.err("a variable tensor is an input of an op that does not own state"));
            }
        }
    }
    // A tensor without storage is never read or written, so only an empty
    // one may be an operator's input or output.
    for k in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
        if let Some(t) = p.opt_input(k)? {
            p.check(
                t.storage != rl::STORAGE_NONE || t.elements() == 0,
                "an input has no storage",
            )?;
        }
    }
    p.check(
        out.storage != rl::STORAGE_NONE || out.elements() == 0,
        "the output has no storage",
    )?;
    match code {
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => seq::prepare_lstm(&p, &out, &mut words, alloc)?,
        opcode::SVDF => seq::prepare_svdf(&p, &out, &mut words, alloc)?,
        opcode::FULLY_CONNECTED | opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D => {
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
            if code == opcode::FULLY_CONNECTED {
                let depth = out.last_dim();
                let accum = filter.last_dim();
                p.need(filter.rank == 2 && filter.dim(0) == depth, "filter shape")?;
                let batches = out.elements() / depth.max(1);
                p.need(
                    input.elements() >= batches.saturating_mul(accum),
                    "input shape",
                )?;
            } else {
                p.need(
                    input.rank == 4 && filter.rank == 4 && out.rank == 4,
                    "tensors must be 4-D",
                )?;
                p.need(input.dim(0) == out.dim(0), "batch mismatch")?;
                if code == opcode::CONV_2D {
                    let cin_f = filter.dim(3);
                    p.need(filter.dim(0) == out.dim(3), "filter output channels")?;
                    p.need(
                        cin_f > 0 && input.dim(3) % cin_f == 0,
                        "filter input channels",
                    )?;
                    let groups = input.dim(3) / cin_f;
                    p.need(groups > 0 && out.dim(3) % groups == 0, "groups")?;
                } else {
                    p.check(op.param(8) > 0, "depth multiplier must be positive")?;
                    let mult = op.param(8) as usize;
                    p.need(
                        filter.dim(0) == 1 && filter.dim(3) == out.dim(3),
                        "filter shape",
                    )?;
                    p.need(
                        input.dim(3).saturating_mul(mult) == out.dim(3),
                        "depth multiplier",
                    )?;
                }
                check_window(&p, &input, &out, Some(&filter))?;
            }
            if q {
                let (lo, hi) =
                    act_range_i8(op.activation, &out).ok_or(p.err("fused activation"))?;
                words.push(lo);
                words.push(hi);
                if code == opcode::FULLY_CONNECTED && filter.n_scales <= 1 {
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
                        let fs =
                            f64::from(img.scale(&filter, if filter.n_scales > 1 { c } else { 0 }));
                        let eff = f64::from(input.scale) * fs / f64::from(out.scale);
                        let (m, s) = fx::quantize_multiplier(eff);
                        words.push(m);
                        words.push(s);
                    }
                }
            } else {
                let (lo, hi) = act_range_f32(op.activation).ok_or(p.err("fused activation"))?;
                words.push(lo.to_bits() as i32);
                words.push(hi.to_bits() as i32);
            }
        }
        opcode::AVERAGE_POOL_2D | opcode::MAX_POOL_2D => {
            let input = p.input(0)?;
            p.need(input.dtype == out.dtype && (q || f), "only int8 or float32")?;
            p.need(input.rank == 4 && out.rank == 4, "tensors must be 4-D")?;
            p.need(
                input.dim(0) == out.dim(0) && input.dim(3) == out.dim(3),
                "shape mismatch",
            )?;
            check_window(&p, &input, &out, None)?;
            let (lo, hi) = if q {
                act_range_i8(op.activation, &out).ok_or(p.err("fused activation"))?
            } else {
                let (a, b) = act_range_f32(op.activation).ok_or(p.err("fused activation"))?;
                (a.to_bits() as i32, b.to_bits() as i32)
            };
            words.push(lo);
            words.push(hi);
        }
        opcode::ADD | opcode::MUL => {
            let a = p.input(0)?;
            let b = p.input(1)?;
            p.need(
                a.dtype == out.dtype && b.dtype == out.dtype && (q || f),
                "only int8 or float32",
            )?;
            p.need(broadcastable(&a, &b, &out), "shapes do not broadcast")?;
            if q {
                let (lo, hi) =
                    act_range_i8(op.activation, &out).ok_or(p.err("fused activation"))?;
                words.push(lo);
                words.push(hi);
                if code == opcode::ADD {
                    let left_shift = 20;
                    let twice_max = 2.0 * f64::from(a.scale.max(b.scale));
                    let (m1, s1) = fx::quantize_multiplier(f64::from(a.scale) / twice_max);
                    let (m2, s2) = fx::quantize_multiplier(f64::from(b.scale) / twice_max);
                    let (mo, so) = fx::quantize_multiplier(
                        twice_max / (f64::from(1i32 << left_shift) * f64::from(out.scale)),
                    );
                    for w in [left_shift, m1, s1, m2, s2, mo, so] {
                        words.push(w);
                    }
                } else {
                    let real = f64::from(a.scale) * f64::from(b.scale) / f64::from(out.scale);
                    let (m, s) = fx::quantize_multiplier(real);
                    words.push(m);
                    words.push(s);
                }
            } else {
                let (lo, hi) = act_range_f32(op.activation).ok_or(p.err("fused activation"))?;
                words.push(lo.to_bits() as i32);
                words.push(hi.to_bits() as i32);
            }
        }
        opcode::SOFTMAX if f => {
            let input = p.input(0)?;
            p.need(
                input.dtype == dtype::F32,
                "float32 softmax needs a float32 input",
            )?;
            p.need(same_len(&input, &out) && input.rank >= 1, "shape mismatch")?;
        }
        opcode::SOFTMAX => {
            let input = p.input(0)?;
            p.need(
                input.dtype == dtype::I8 && (q || out.dtype == dtype::I16),
                "only int8 input with int8 or int16 output (and float32) is implemented",
            )?;
            p.need(same_len(&input, &out) && input.rank >= 1, "shape mismatch")?;
            let beta = f32::from_bits(op.param(0) as u32);
            // PreprocessSoftmaxScaling with kScaledDiffIntegerBits = 5.
            let real = (f64::from(beta) * f64::from(input.scale) * f64::from(1i32 << 26))
                .min(2147483647.0);
            let (m, shift) = fx::quantize_multiplier(real);
            p.need(shift >= 0, "softmax multiplier below one")?;
            words.push(m);
            words.push(shift);
            words.push(-fx::input_radius(5, shift, 31));
        }
        opcode::QUANTIZE => {
            let input = p.input(0)?;
            let (i, o) = (input.dtype, out.dtype);
            let ok = match i {
                dtype::F32 => o == dtype::I8 || o == dtype::I16,
                dtype::I8 | dtype::I16 => matches!(o, dtype::I8 | dtype::I16 | dtype::I32),
                dtype::I32 => o == dtype::I8 || o == dtype::I16,
                _ => false,
            };
            p.need(
                ok,
                "QUANTIZE types: float32 to int8/int16, or requantizing int8/int16/int32",
            )?;
            p.need(same_len(&input, &out), "shape mismatch")?;
            let (m, s) = if input.dtype != dtype::F32 {
                fx::quantize_multiplier(f64::from(input.scale) / f64::from(out.scale))
            } else {
                (0, 0)
            };
            words.push(m);
            words.push(s);
        }
        opcode::DEQUANTIZE => {
            let input = p.input(0)?;
            p.need(f && input.dtype == dtype::I8, "int8 to float32 only")?;
            p.need(same_len(&input, &out), "shape mismatch")?;
        }
        opcode::LOGISTIC | opcode::TANH if f => {
            let input = p.input(0)?;
            p.need(
                input.dtype == dtype::F32,
                "float32 output needs a float32 input",
            )?;
            p.need(same_len(&input, &out), "shape mismatch")?;
        }
        opcode::LOGISTIC | opcode::TANH => {
            let input = p.input(0)?;
            p.need(
                q && input.dtype == dtype::I8,
                "only int8 and float32 are implemented",
            )?;
            p.need(same_len(&input, &out), "shape mismatch")?;
            let real = f64::from(input.scale) * f64::from(1i32 << 27);
            let (mant, shift) = fx::frexp(real);
            let m = fx::round_f64(mant * 2147483648.0).clamp(0, i64::from(i32::MAX)) as i32;
            words.push(m);
            words.push(shift);
            words.push(fx::input_radius(4, shift, 31));
            words.push(input.zero_point);
        }
        opcode::RESHAPE => {
            let input = p.input(0)?;
            p.need(input.bytes == out.bytes, "reshape changes the byte size")?;
        }
        opcode::PAD
        | opcode::TRANSPOSE
        | opcode::STRIDED_SLICE
        | opcode::CONCATENATION
        | opcode::MEAN => {
            let input = p.input(0)?;
            p.need(
                rl::dtype_size(input.dtype) == rl::dtype_size(out.dtype),
                "type mismatch",
            )?;
            match code {
                opcode::PAD => {
                    // Parameters: rank, then 5 "before" and 5 "after" paddings.
                    let rank = op.param(0).max(0) as usize;
                    p.need(rank == input.rank && rank == out.rank, "rank")?;
                    p.check(rank <= 5, "PAD rank above 5")?;
                    for k in 0..rank {
                        let (before, after) = (op.param(1 + k), op.param(6 + k));
                        p.check(before >= 0 && after >= 0, "negative padding")?;
                        let want = input
                            .dim(k)
                            .saturating_add(before as usize)
                            .saturating_add(after as usize);
                        p.need(out.dim(k) == want, "padded shape")?;
                    }
                }
                opcode::TRANSPOSE => {
                    let rank = op.param(0).max(0) as usize;
                    p.need(rank == input.rank && rank == out.rank, "rank")?;
                    let mut seen = 0u32;
                    for k in 0..rank {
                        let axis = op.param(1 + k);
                        p.check(
                            (0..rank as i32).contains(&axis) && seen & (1 << axis) == 0,
                            "perm is not a permutation of the input's axes",
                        )?;
                        seen |= 1 << axis;
                        p.need(out.dim(k) == input.dim(axis as usize), "permuted shape")?;
                    }
                }
                opcode::STRIDED_SLICE => {
                    // Parameters: rank, then 5 starts, 5 stops, 5 strides.
                    let rank = op.param(0).max(0) as usize;
                    p.need(rank == input.rank && rank <= 5, "rank")?;
                    let mut n = 1usize;
                    for k in 0..rank {
                        let (start, stop, stride) =
                            (op.param(1 + k), op.param(6 + k), op.param(11 + k));
                        p.check(stride != 0, "slice stride 0")?;
                        let count = slice_len(start, stop, stride);
                        if count > 0 {
                            // Every coordinate the kernel reads lies on the axis,
                            // so the count is at most the input's dim.
                            let last = i64::from(start) + (count as i64 - 1) * i64::from(stride);
                            let axis = 0..input.dim(k) as i64;
                            p.check(
                                axis.contains(&i64::from(start)) && axis.contains(&last),
                                "slice bounds outside the input",
                            )?;
                        }
                        n = n.saturating_mul(count);
                    }
                    p.need(n == out.elements(), "sliced shape")?;
                }
                opcode::CONCATENATION => {
                    let axis = op.param(0).max(0) as usize;
                    p.need(axis < out.rank, "axis")?;
                    let mut total = 0usize;
                    for k in 0..op.n_inputs {
                        let t = p.input(k)?;
                        p.need(
                            t.rank == out.rank && t.dtype == out.dtype,
                            "input rank/type",
                        )?;
                        if q {
                            p.need(
                                t.scale == out.scale && t.zero_point == out.zero_point,
                                "requantizing concat",
                            )?;
                        }
                        for d in 0..out.rank {
                            if d != axis {
                                p.need(t.dim(d) == out.dim(d), "input shapes")?;
                            }
                        }
                        total += t.dim(axis);
                    }
                    p.need(total == out.dim(axis), "concatenated size")?;
                }
                _ => {
                    // MEAN
                    p.need(input.dtype == out.dtype && (q || f), "only int8 or float32")?;
                    let mask = op.param(0);
                    let keep = op.param(1) != 0;
                    p.check(
                        mask >= 0 && mask >> input.rank == 0,
                        "reduction axes outside the input's rank",
                    )?;
                    let mut n = 1usize;
                    for k in 0..input.rank {
                        if mask & (1 << k) == 0 {
                            n = n.saturating_mul(input.dim(k));
                        }
                    }
                    p.need(n == out.elements(), "reduced shape")?;
                    if q {
                        p.need(
                            keep && input.rank == 4 && mask == 0b0110,
                            "int8 MEAN only over axes 1,2 with keep_dims",
                        )?;
                    }
                    let want =
                        rl::op_scratch_bytes(code, out.dtype, out.elements() as u32, 0) as usize;
                    let off = alloc.request_scratch(index, want, op.scratch)?;
                    let _ = off;
                }
            }
        }
        _ => {
            return Err(Error::UnsupportedOp {
                op_index: index,
                opcode: code,
            });
        }
    }
    if words.n * 4 != want {
        return Err(p.err("OpData size differs from runtime_layout (runtime bug)"));
    }
    Ok(())
}

/// Writes OpData words into the op's tail allocation.
pub(crate) struct W<'d> {
    dst: &'d mut [u8],
    n: usize,
}

impl W<'_> {
    pub(crate) fn push(&mut self, v: i32) {
        put_i32(self.dst, self.n, v);
        self.n += 1;
    }
}

fn slice_len(start: i32, stop: i32, stride: i32) -> usize {
    let n = geometry::slice_count(start.into(), stop.into(), stride.into());
    usize::try_from(n).unwrap_or(usize::MAX)
}

// ---------------------------------------------------------------- Eval

/// Runs one prepared operator.
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    match c.op.opcode {
        opcode::FULLY_CONNECTED => fully_connected(c),
        opcode::CONV_2D => conv(c),
        opcode::DEPTHWISE_CONV_2D => depthwise(c),
        opcode::AVERAGE_POOL_2D | opcode::MAX_POOL_2D => pool(c),
        opcode::RESHAPE => {
            let (_, src) = c.input(0);
            copy(c.out, src);
            Ok(())
        }
        opcode::SOFTMAX if c.output_info().dtype == dtype::F32 => softmax_f32(c),
        opcode::SOFTMAX => softmax_i8(c),
        opcode::LOGISTIC | opcode::TANH if c.output_info().dtype == dtype::F32 => {
            logistic_tanh_f32(c)
        }
        opcode::ADD | opcode::MUL => binary(c),
        opcode::QUANTIZE => quantize(c),
        opcode::DEQUANTIZE => dequantize(c),
        opcode::LOGISTIC | opcode::TANH => logistic_tanh_i8(c),
        opcode::PAD => pad(c),
        opcode::TRANSPOSE => transpose(c),
        opcode::CONCATENATION => concatenation(c),
        opcode::STRIDED_SLICE => strided_slice(c),
        opcode::MEAN => mean(c),
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => seq::lstm(c),
        opcode::SVDF => seq::svdf(c),
        code => Err(Error::UnsupportedOp {
            op_index: c.index,
            opcode: code,
        }),
    }
}

fn copy(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
}

/// The end of every FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D output
/// value, as TFLM's reference kernels do it: int8 adds the bias, requantizes
/// with the channel's (multiplier, shift) from the OpData, adds the output
/// zero point and clamps; float adds the bias and applies the activation.
struct Epilogue<'e> {
    bias: Option<&'e [u8]>,
    opdata: &'e [u8],
    out_zp: i32,
    lo: i32,
    hi: i32,
}

impl<'e> Epilogue<'e> {
    fn new(c: &Ctx<'e, '_>, bias: (TensorInfo, &'e [u8])) -> Self {
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
    fn put_i8(&self, out: &mut [u8], oi: usize, ch: usize, k: usize, acc: i32) {
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
    fn put_f32(&self, out: &mut [u8], oi: usize, ch: usize, total: f32) {
        let bias = self.bias.map_or(0.0, |b| f32_at(b, ch));
        let (lo, hi) = (
            f32::from_bits(self.lo as u32),
            f32::from_bits(self.hi as u32),
        );
        put_f32(out, oi, act_f32(total + bias, lo, hi));
    }
}

fn fully_connected(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let depth = out.last_dim();
    let accum = filter.last_dim();
    let batches = out.elements() / depth.max(1);
    let float = out.dtype == dtype::F32;
    let in_off = input.zero_point.wrapping_neg();
    let w_off = filter.zero_point.wrapping_neg();
    let per_channel = filter.n_scales > 1;
    for b in 0..batches {
        for o in 0..depth {
            let oi = o + depth * b;
            if float {
                let mut total = 0.0f32;
                for d in 0..accum {
                    total += f32_at(x, b * accum + d) * f32_at(w, o * accum + d);
                }
                end.put_f32(c.out, oi, o, total);
                continue;
            }
            let acc = if w_off == 0 {
                dot_i8(x, b * accum, w, o * accum, accum, in_off)
            } else {
                let mut acc = 0i32;
                for d in 0..accum {
                    let wv = i8_at(w, o * accum + d).wrapping_add(w_off);
                    let xv = i8_at(x, b * accum + d).wrapping_add(in_off);
                    acc = acc.wrapping_add(wv.wrapping_mul(xv));
                }
                acc
            };
            end.put_i8(c.out, oi, o, if per_channel { o } else { 0 }, acc);
        }
    }
    Ok(())
}

/// Geometry shared by CONV_2D, DEPTHWISE_CONV_2D and the pools.
struct Geo {
    batches: usize,
    ih: i32,
    iw: i32,
    ic: usize,
    oh: usize,
    ow: usize,
    oc: usize,
    fh: i32,
    fw: i32,
    pad_w: i32,
    pad_h: i32,
    sw: i32,
    sh: i32,
    dw: i32,
    dh: i32,
}

impl Geo {
    /// The geometry of a pool: the window from the parameters.
    fn new(c: &Ctx<'_, '_>, input: &TensorInfo, out: &TensorInfo) -> Geo {
        Geo {
            batches: out.dim(0),
            ih: input.dim(1) as i32,
            iw: input.dim(2) as i32,
            ic: input.dim(3),
            oh: out.dim(1),
            ow: out.dim(2),
            oc: out.dim(3),
            fw: c.op.param(6),
            fh: c.op.param(7),
            pad_w: c.op.param(0),
            pad_h: c.op.param(1),
            sw: c.op.param(2),
            sh: c.op.param(3),
            dw: c.op.param(4),
            dh: c.op.param(5),
        }
    }

    /// The geometry of a convolution: the window loops run over the filter
    /// tensor's dims (construction checked the parameters agree with them).
    fn with_filter(
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
    fn in_index(&self, b: usize, y: i32, x: i32, ch: usize) -> usize {
        ((b * self.ih as usize + y as usize) * self.iw as usize + x as usize) * self.ic + ch
    }

    #[inline]
    fn out_index(&self, b: usize, y: usize, x: usize, ch: usize) -> usize {
        ((b * self.oh + y) * self.ow + x) * self.oc + ch
    }

    /// Calls `f(tap, in_index)` for every filter tap of output pixel
    /// `(b, oy, ox)` that falls inside the input, in TFLM's order (filter
    /// rows, then columns); `tap = ky · fw + kx`, and `in_index` points at
    /// channel `ch` of the input pixel under the tap.
    #[inline]
    fn for_each_tap(
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

fn conv(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let fic = filter.dim(3);
    let taps = g.fh as usize * g.fw as usize;
    let groups = g.ic / fic.max(1);
    let per_group = g.oc / groups.max(1);
    let float = out.dtype == dtype::F32;
    let in_off = input.zero_point.wrapping_neg();
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for oc in 0..g.oc {
                    let group = oc / per_group.max(1);
                    let oi = g.out_index(b, oy, ox, oc);
                    // Filter [oc][ky][kx][ic]: tap t of channel oc starts at (oc·taps + t)·fic.
                    let fbase = |tap: usize| (oc * taps + tap) * fic;
                    if float {
                        let mut total = 0.0f32;
                        g.for_each_tap(b, oy, ox, group * fic, |tap, ii| {
                            for ic in 0..fic {
                                total += f32_at(x, ii + ic) * f32_at(w, fbase(tap) + ic);
                            }
                        });
                        end.put_f32(c.out, oi, oc, total);
                    } else {
                        let mut acc = 0i32;
                        g.for_each_tap(b, oy, ox, group * fic, |tap, ii| {
                            acc = acc.wrapping_add(dot_i8(x, ii, w, fbase(tap), fic, in_off));
                        });
                        end.put_i8(c.out, oi, oc, oc, acc);
                    }
                }
            }
        }
    }
    Ok(())
}

/// `Σ w[wb+k] · (x[xb+k] + x_off)` over `n` int8 pairs, wrapping as TFLM's
/// int32 accumulator (integer sums do not depend on the order, so this
/// contiguous form is bit-exact and lets the compiler vectorize it).
#[inline]
fn dot_i8(x: &[u8], xb: usize, w: &[u8], wb: usize, n: usize, x_off: i32) -> i32 {
    match (
        x.get(xb..xb.saturating_add(n)),
        w.get(wb..wb.saturating_add(n)),
    ) {
        (Some(xs), Some(ws)) => {
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

/// Int8 depthwise with multiplier 1: all channels of one output pixel at
/// once, 64 accumulators on the stack (bit-exact: integer sums reordered).
fn depthwise_i8_m1(c: &mut Ctx<'_, '_>, g: &Geo, x: &[u8], w: &[u8], end: &Epilogue<'_>) {
    const CH: usize = 64;
    let in_off = c.input(0).0.zero_point.wrapping_neg();
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let mut c0 = 0;
                while c0 < g.oc {
                    let n = CH.min(g.oc - c0);
                    let mut acc = [0i32; CH];
                    let mut wsum = [0i32; CH];
                    g.for_each_tap(b, oy, ox, c0, |tap, ii| {
                        // Filter [1][ky][kx][oc].
                        let fi = tap * g.oc + c0;
                        if let (Some(xs), Some(ws)) = (x.get(ii..ii + n), w.get(fi..fi + n)) {
                            for (((a, s), &xv), &wv) in
                                acc.iter_mut().zip(wsum.iter_mut()).zip(xs).zip(ws)
                            {
                                let wv = i32::from(wv as i8);
                                *a = a.wrapping_add(wv.wrapping_mul(i32::from(xv as i8)));
                                *s = s.wrapping_add(wv);
                            }
                        }
                    });
                    for (k, (&a, &s)) in acc.iter().zip(&wsum).take(n).enumerate() {
                        let oc = c0 + k;
                        let v = a.wrapping_add(s.wrapping_mul(in_off));
                        end.put_i8(c.out, g.out_index(b, oy, ox, oc), oc, oc, v);
                    }
                    c0 += n;
                }
            }
        }
    }
}

fn depthwise(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let mult = c.op.param(8).max(1) as usize;
    let float = out.dtype == dtype::F32;
    if !float && mult == 1 && g.ic == g.oc {
        depthwise_i8_m1(c, &g, x, w, &end);
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

fn pool(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let g = Geo::new(c, &input, &out);
    let max = c.op.opcode == opcode::MAX_POOL_2D;
    let float = out.dtype == dtype::F32;
    let (lo, hi) = (c.word(0), c.word(1));
    let (flo, fhi) = (f32::from_bits(lo as u32), f32::from_bits(hi as u32));
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ch in 0..g.oc {
                    let ix0 = (ox as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
                    let iy0 = (oy as i32).wrapping_mul(g.sh).wrapping_sub(g.pad_h);
                    let fx0 = ix0.wrapping_neg().max(0);
                    let fx1 = g.fw.min(g.iw.wrapping_sub(ix0));
                    let fy0 = iy0.wrapping_neg().max(0);
                    let fy1 = g.fh.min(g.ih.wrapping_sub(iy0));
                    let oi = g.out_index(b, oy, ox, ch);
                    let mut acc = 0i32;
                    let mut count = 0i32;
                    let mut total = 0.0f32;
                    let mut fcount = 0.0f32;
                    let mut mx = i32::from(i8::MIN);
                    let mut fmx = f32::MIN;
                    for ky in fy0..fy1 {
                        for kx in fx0..fx1 {
                            let ii = g.in_index(b, iy0.wrapping_add(ky), ix0.wrapping_add(kx), ch);
                            if float {
                                let v = f32_at(x, ii);
                                total += v;
                                fcount += 1.0;
                                if fmx < v {
                                    fmx = v;
                                }
                            } else {
                                let v = i8_at(x, ii);
                                acc = acc.wrapping_add(v);
                                count += 1;
                                mx = mx.max(v);
                            }
                        }
                    }
                    match (float, max) {
                        (true, true) => put_f32(c.out, oi, act_f32(fmx, flo, fhi)),
                        (true, false) => {
                            if fcount == 0.0 {
                                return Err(c.fail()("empty pooling window"));
                            }
                            put_f32(c.out, oi, act_f32(total / fcount, flo, fhi));
                        }
                        (false, true) => put_i8(c.out, oi, mx.max(lo).min(hi)),
                        (false, false) => {
                            if count == 0 {
                                return Err(c.fail()("empty pooling window"));
                            }
                            let avg = if acc > 0 {
                                acc.wrapping_add(count / 2) / count
                            } else {
                                acc.wrapping_sub(count / 2) / count
                            };
                            put_i8(c.out, oi, avg.max(lo).min(hi));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn softmax_i8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let depth = input.last_dim().max(1);
    let outer = input.elements() / depth;
    let (mult, shift, diff_min) = (c.word(0), c.word(1), c.word(2));
    let wide = c.output_info().dtype == dtype::I16;
    for i in 0..outer {
        let row = i * depth;
        let mut max_in_row = i32::from(i8::MIN);
        for k in 0..depth {
            max_in_row = max_in_row.max(i8_at(x, row + k));
        }
        let mut sum_of_exps = 0i32; // Q12.19
        for k in 0..depth {
            let diff = i8_at(x, row + k) - max_in_row;
            if diff >= diff_min {
                let scaled = fx::mbqm_greater_than_one(diff, mult, shift);
                let e = fx::exp_on_negative_values(scaled, 5);
                sum_of_exps = sum_of_exps.wrapping_add(fx::rdbpot(e, 12));
            }
        }
        let (shifted_scale, bits_over_unit) = fx::get_reciprocal(sum_of_exps, 12);
        let (bits, lo, hi) = if wide {
            (16, -32768, 32767)
        } else {
            (8, -128, 127)
        };
        for k in 0..depth {
            let diff = i8_at(x, row + k) - max_in_row;
            let v = if diff >= diff_min {
                let scaled = fx::mbqm_greater_than_one(diff, mult, shift);
                let e = fx::exp_on_negative_values(scaled, 5);
                let unsat = fx::rdbpot(fx::srdhm(shifted_scale, e), bits_over_unit + 31 - bits);
                unsat.wrapping_add(lo).clamp(lo, hi)
            } else {
                lo
            };
            if wide {
                put_i16(c.out, row + k, v);
            } else {
                put_i8(c.out, row + k, v);
            }
        }
    }
    Ok(())
}

fn binary(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (a, xa) = c.input(0);
    let (b, xb) = c.input(1);
    let out = c.output_info();
    let n = out.elements();
    let same = a.elements() == n && b.elements() == n;
    let add = c.op.opcode == opcode::ADD;
    for i in 0..n {
        let (ia, ib) = if same {
            (i, i)
        } else {
            (bcast_index(i, &out, &a), bcast_index(i, &out, &b))
        };
        if out.dtype == dtype::F32 {
            let (va, vb) = (f32_at(xa, ia), f32_at(xb, ib));
            let r = if add { va + vb } else { va * vb };
            put_f32(
                c.out,
                i,
                act_f32(
                    r,
                    f32::from_bits(c.word(0) as u32),
                    f32::from_bits(c.word(1) as u32),
                ),
            );
        } else {
            let (lo, hi) = (c.word(0), c.word(1));
            let va = i8_at(xa, ia).wrapping_sub(a.zero_point);
            let vb = i8_at(xb, ib).wrapping_sub(b.zero_point);
            let r = if add {
                let ls = c.word(2);
                let sa =
                    fx::mbqm_smaller_than_one(va.wrapping_shl(ls as u32), c.word(3), c.word(4));
                let sb =
                    fx::mbqm_smaller_than_one(vb.wrapping_shl(ls as u32), c.word(5), c.word(6));
                fx::mbqm_smaller_than_one(sa.wrapping_add(sb), c.word(7), c.word(8))
                    .wrapping_add(out.zero_point)
            } else {
                out.zero_point
                    .wrapping_add(fx::mbqm(va.wrapping_mul(vb), c.word(2), c.word(3)))
            };
            put_i8(c.out, i, r.max(lo).min(hi));
        }
    }
    Ok(())
}

/// AffineQuantize (float input) or Requantize (integer input), as TFLM.
fn quantize(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    for i in 0..out.elements() {
        let v = if input.dtype == dtype::F32 {
            fx::round_f32(f32_at(x, i) / out.scale).saturating_add(out.zero_point)
        } else {
            let raw = match input.dtype {
                dtype::I16 => i16_at(x, i),
                dtype::I32 => i32_at(x, i),
                _ => i8_at(x, i),
            };
            fx::mbqm(raw.wrapping_sub(input.zero_point), c.word(0), c.word(1))
                .wrapping_add(out.zero_point)
        };
        match out.dtype {
            dtype::I16 => put_i16(c.out, i, v.clamp(-32768, 32767)),
            dtype::I32 => put_i32(c.out, i, v),
            _ => put_i8(c.out, i, v.clamp(-128, 127)),
        }
    }
    Ok(())
}

fn dequantize(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let scale = f64::from(input.scale);
    for i in 0..input.elements() {
        let v = (scale * f64::from(i8_at(x, i).wrapping_sub(input.zero_point))) as f32;
        put_f32(c.out, i, v);
    }
    Ok(())
}

fn logistic_tanh_i8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (mult, shift, radius, zp) = (c.word(0), c.word(1), c.word(2), c.word(3));
    let logistic = c.op.opcode == opcode::LOGISTIC;
    for i in 0..input.elements() {
        let v = i8_at(x, i).wrapping_sub(zp);
        let r = if v <= -radius {
            -128
        } else if v >= radius {
            127
        } else {
            let q4 = fx::mbqm(v, mult, shift);
            if logistic {
                let o = fx::rdbpot(fx::logistic(q4, 4), 23);
                o.wrapping_add(-128).clamp(-128, 127)
            } else {
                fx::rdbpot(fx::tanh(q4, 4), 24).clamp(-128, 127)
            }
        };
        put_i8(c.out, i, r);
    }
    Ok(())
}

/// Row-major strides of `shape` (up to 6 dims).
fn strides(t: &TensorInfo) -> [usize; rl::MAX_RANK] {
    let mut s = [0usize; rl::MAX_RANK];
    let mut acc = 1usize;
    for k in (0..t.rank.min(rl::MAX_RANK)).rev() {
        if let Some(v) = s.get_mut(k) {
            *v = acc;
        }
        acc = acc.saturating_mul(t.dim(k));
    }
    s
}

fn elem_size(t: &TensorInfo) -> usize {
    rl::dtype_size(t.dtype).unwrap_or(1) as usize
}

fn copy_elem(dst: &mut [u8], di: usize, src: &[u8], si: usize, e: usize) {
    if let (Some(d), Some(s)) = (dst.get_mut(di * e..di * e + e), src.get(si * e..si * e + e)) {
        d.copy_from_slice(s);
    }
}

fn pad(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let is = strides(&input);
    let rank = out.rank;
    let pad_byte = if out.dtype == dtype::I8 {
        out.zero_point as i8 as u8
    } else {
        0
    };
    for i in 0..out.elements() {
        let mut rem = i;
        let mut src = 0usize;
        let mut inside = true;
        for k in (0..rank).rev() {
            let d = out.dim(k).max(1);
            let coord = rem % d;
            rem /= d;
            let before = c.op.param(1 + k).max(0) as usize;
            if coord < before || coord >= before + input.dim(k) {
                inside = false;
            } else {
                src += (coord - before) * is.get(k).copied().unwrap_or(0);
            }
        }
        if inside {
            copy_elem(c.out, i, x, src, e);
        } else if let Some(d) = c.out.get_mut(i * e..i * e + e) {
            d.fill(pad_byte);
        }
    }
    Ok(())
}

fn transpose(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let is = strides(&input);
    let rank = out.rank;
    for i in 0..out.elements() {
        let mut rem = i;
        let mut src = 0usize;
        for k in (0..rank).rev() {
            let d = out.dim(k).max(1);
            let coord = rem % d;
            rem /= d;
            let axis = c.op.param(1 + k).max(0) as usize;
            src += coord * is.get(axis).copied().unwrap_or(0);
        }
        copy_elem(c.out, i, x, src, e);
    }
    Ok(())
}

fn concatenation(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let out = c.output_info();
    let axis = c.op.param(0).max(0) as usize;
    let e = elem_size(&out);
    let outer: usize = (0..axis).map(|k| out.dim(k)).product();
    let mut at = 0usize;
    for o in 0..outer {
        for k in 0..c.op.n_inputs {
            let (t, x) = c.input(k);
            let inner: usize = (axis..t.rank).map(|d| t.dim(d)).product::<usize>() * e;
            if let (Some(d), Some(s)) = (
                c.out.get_mut(at..at + inner),
                x.get(o * inner..o * inner + inner),
            ) {
                d.copy_from_slice(s);
            }
            at += inner;
        }
    }
    Ok(())
}

fn strided_slice(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let is = strides(&input);
    let rank = c.op.param(0).clamp(0, 5) as usize;
    let mut counts = [1usize; 5];
    for (k, n) in counts.iter_mut().enumerate().take(rank) {
        *n = slice_len(c.op.param(1 + k), c.op.param(6 + k), c.op.param(11 + k));
    }
    let total: usize = counts.iter().product();
    for i in 0..total {
        let mut rem = i;
        let mut src = 0i64;
        for k in (0..rank).rev() {
            let n = counts.get(k).copied().unwrap_or(1).max(1);
            let step = (rem % n) as i64;
            rem /= n;
            let coord = i64::from(c.op.param(1 + k)) + step * i64::from(c.op.param(11 + k));
            src += coord * is.get(k).copied().unwrap_or(0) as i64;
        }
        copy_elem(c.out, i, x, src.max(0) as usize, e);
    }
    Ok(())
}

fn mean(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let mask = c.op.param(0);
    if out.dtype == dtype::I8 {
        // reference_integer_ops::Mean, 4-D over axes 1 and 2.
        let (b, h, w, d) = (input.dim(0), input.dim(1), input.dim(2), input.dim(3));
        let n = (h * w) as i32;
        let (m, s) = fx::quantize_multiplier(f64::from(input.scale) / f64::from(out.scale));
        for bb in 0..b {
            for ch in 0..d {
                let mut acc = 0i32;
                for y in 0..h {
                    for xx in 0..w {
                        acc = acc.wrapping_add(
                            i8_at(x, ((bb * h + y) * w + xx) * d + ch)
                                .wrapping_sub(input.zero_point),
                        );
                    }
                }
                acc = fx::mbqm(acc, m, s);
                if n > 0 {
                    acc = if acc > 0 {
                        acc.wrapping_add(n / 2) / n
                    } else {
                        acc.wrapping_sub(n / 2) / n
                    };
                }
                put_i8(
                    c.out,
                    bb * d + ch,
                    acc.wrapping_add(out.zero_point).clamp(-128, 127),
                );
            }
        }
        return Ok(());
    }
    // Float: TFLM's generic Mean, accumulating in input order into the scratch.
    let os = out.elements();
    c.scratch.fill(0);
    let mut count = 1usize;
    for k in 0..input.rank {
        if mask & (1 << k) != 0 {
            count *= input.dim(k);
        }
    }
    for i in 0..input.elements() {
        let mut rem = i;
        let mut oi = 0usize;
        let mut stride = 1usize;
        for k in (0..input.rank).rev() {
            let d = input.dim(k).max(1);
            let coord = rem % d;
            rem /= d;
            if mask & (1 << k) == 0 {
                oi += coord * stride;
                stride *= d;
            }
        }
        let v = f32_at(c.scratch, oi) + f32_at(x, i);
        put_f32(c.scratch, oi, v);
    }
    for i in 0..os {
        put_f32(c.out, i, f32_at(c.scratch, i) / count as f32);
    }
    Ok(())
}

/// TFLM's float softmax: exp of the scaled difference to the row maximum, then
/// division by the sum (expf from `libm`; TFLM's float results depend on the
/// platform's libm, so these agree to rounding, not necessarily bit for bit).
fn softmax_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let beta = f32::from_bits(c.op.param(0) as u32);
    let depth = input.last_dim().max(1);
    for i in 0..input.elements() / depth {
        let row = i * depth;
        let mut max = f32::MIN;
        for k in 0..depth {
            let v = f32_at(x, row + k);
            if max < v {
                max = v;
            }
        }
        let mut sum = 0.0f32;
        for k in 0..depth {
            let e = libm::expf((f32_at(x, row + k) - max) * beta);
            put_f32(c.out, row + k, e);
            sum += e;
        }
        for k in 0..depth {
            let v = f32_at(c.out, row + k) / sum;
            put_f32(c.out, row + k, v);
        }
    }
    Ok(())
}

/// TFLM's float LOGISTIC (with its cut-offs) and TANH.
fn logistic_tanh_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let logistic = c.op.opcode == opcode::LOGISTIC;
    for i in 0..input.elements() {
        let v = f32_at(x, i);
        let r = if !logistic {
            libm::tanhf(v)
        } else if v > 16.619_047 {
            1.0
        } else if v < -9.0 {
            libm::expf(v)
        } else {
            1.0 / (1.0 + libm::expf(-v))
        };
        put_f32(c.out, i, r);
    }
    Ok(())
}
