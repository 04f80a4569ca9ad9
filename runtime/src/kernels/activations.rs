//! LOGISTIC and TANH: int8 in gemmlowp fixed point (bit-exact), int16 through
//! TFLM's interpolated sigmoid table (`reference_integer_ops::Logistic` /
//! `Tanh`: zero points 0, an output scale of 2^-15, the input rescaled to
//! Q3.12 by a power-of-two shift or a multiplier; the LSTM's gates use the
//! same functions), and float32
//! (LOGISTIC through the C library's `expf` as `cmath` computes it, TANH via
//! `libm::tanhf`). ELU (`micro/kernels/elu.cc`): float32 `x < 0 ? expm1(x) :
//! x` (`expm1f` as `cmath` computes it, equal to the wheel's on every case); int8
//! through TFLM's 256-entry table, built in Prepare from the dequantized
//! value's `expf(x) − 1` rounded half away from zero on the output scale
//! (a table entry can differ where `expf` rounds unlike the C library's
//! and the quotient lands on a half).

use core::cmp::Ordering;

use microarena_image::{self as rl, dtype, opcode};

use super::bytes::{f32_at, i8_at, i16_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::Dyadic;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::LOGISTIC, prepare, eval),
    kernel(opcode::TANH, prepare, eval),
    kernel(opcode::ELU, prepare_elu, elu),
];

pub(crate) fn prepare_elu(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "ELU: float32 or int8, the same in and out",
    )?;
    p.need(same_len(&input, out), "shape mismatch")?;
    if out.dtype == dtype::I8 {
        // PopulateLookupTable: entry `val as u8`, four to a word, little-endian.
        let inverse = 1.0 / out.scale;
        let entry = |val: i32| {
            let x = input.scale * (val.wrapping_sub(input.zero_point)) as f32;
            let y = if x < 0.0 {
                super::cmath::expf(x) - 1.0
            } else {
                x
            };
            let q = libm::roundf(y * inverse) + out.zero_point as f32;
            // static_cast<int32_t> of the float (saturating here), clamped.
            (q as i32).clamp(-128, 127) as u8
        };
        for w in 0..64 {
            let b: [u8; 4] = core::array::from_fn(|k| entry(i32::from((4 * w + k) as u8 as i8)));
            words.push(i32::from_le_bytes(b));
        }
    }
    Ok(())
}

pub(crate) fn elu(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    if input.dtype == dtype::F32 {
        for i in 0..input.elements() {
            let v = f32_at(c.src(0, x), i);
            let r = if v < 0.0 { super::cmath::expm1f(v) } else { v };
            put_f32(c.out, i, r);
        }
        return Ok(());
    }
    for i in 0..input.elements() {
        let v = i8_at(c.src(0, x), i) as u8 as usize;
        let entry = (c.word(v / 4) as u32 >> (8 * (v % 4))) as u8;
        put_i8(c.out, i, i32::from(entry as i8));
    }
    Ok(())
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    if out.dtype == dtype::F32 {
        p.need(
            input.dtype == dtype::F32,
            "float32 output needs a float32 input",
        )?;
        p.need(same_len(&input, out), "shape mismatch")?;
        return Ok(());
    }
    p.need(same_len(&input, out), "shape mismatch")?;
    if out.dtype == dtype::I16 && input.dtype == dtype::I16 {
        return prepare_i16(p, &input, out, words);
    }
    p.need(
        out.dtype == dtype::I8 && input.dtype == dtype::I8,
        "LOGISTIC/TANH: float32, int8 or int16, the same in and out",
    )?;
    // frexp(scale · 2^27), its fraction rounded to Q31 and clamped
    // (QuantizeMultiplier without its corrections). A non-finite scale, as
    // the double: +∞ saturates, NaN and −∞ clamp to 0.
    let (m, shift) = match Dyadic::f32(input.scale) {
        Some(s) => {
            let (q, shift) = s.scaled(27).frexp_q31();
            (q.clamp(0, i64::from(i32::MAX)) as i32, shift)
        }
        None if input.scale == f32::INFINITY => (i32::MAX, 0),
        None => (0, 0),
    };
    words.push(m);
    words.push(shift);
    words.push(fx::input_radius(4, shift, 31));
    words.push(input.zero_point);
    Ok(())
}

/// TFLM's int16 `CalculateArithmeticOpData` (LOGISTIC) and its TANH twin:
/// (input multiplier, input left shift) — multiplier 0 when the input scale
/// is a power of two the table takes by a shift alone.
fn prepare_i16(
    p: &Prep<'_, '_>,
    input: &TensorInfo,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
) -> Result<(), Error> {
    p.need(
        input.zero_point == 0 && out.zero_point == 0,
        "int16 LOGISTIC/TANH needs zero points of 0",
    )?;
    p.need(
        rl::quant::checked_log2(out.scale) == Some(-15),
        "int16 LOGISTIC/TANH needs an output scale of 2^-15",
    )?;
    let log2 = rl::quant::checked_log2(input.scale);
    let shift = 12 + log2.unwrap_or(0);
    let pot_shifts: &[i32] = if p.op.opcode == opcode::LOGISTIC {
        &[0]
    } else {
        &[0, 1]
    };
    let (m, s) = if log2.is_some() && pot_shifts.contains(&shift) {
        (0, shift)
    } else {
        // To 1/(3·4096) per step: doubled while at most 32767/2, 31 times at most.
        // In double: scale · 12288 is exact, doubling too.
        let half_max = Dyadic::int(32767).scaled(-1);
        match Dyadic::f32(input.scale).and_then(|x| x.mul(Dyadic::int(4096 * 3))) {
            Some(mut m) => {
                let mut s = 0;
                while m.cmp(half_max) != Ordering::Greater && s <= 30 {
                    s += 1;
                    m = m.scaled(1);
                }
                (m.trunc_i32(), s)
            }
            // ∞ stays above the bound; NaN compares false and converts to 0.
            None if input.scale == f32::INFINITY => (i32::MAX, 0),
            None if input.scale == f32::NEG_INFINITY => (i32::MIN, 31),
            None => (0, 0),
        }
    };
    // Four words, as the int8 OpData (`op_tail_bytes`).
    for w in [m, s, 0, 0] {
        words.push(w);
    }
    Ok(())
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    match c.output_info().dtype {
        dtype::F32 => logistic_tanh_f32(c),
        dtype::I16 => logistic_tanh_i16(c),
        _ => logistic_tanh_i8(c),
    }
}

fn logistic_tanh_i16(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (m, s) = (c.word(0), c.word(1));
    let f = if c.op.opcode == opcode::LOGISTIC {
        fx::logistic_i16
    } else {
        fx::tanh_i16
    };
    for i in 0..input.elements() {
        let v = f(i16_at(c.src(0, x), i), m, s);
        put_i16(c.out, i, v);
    }
    Ok(())
}

fn logistic_tanh_i8(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (mult, shift, radius, zp) = (c.word(0), c.word(1), c.word(2), c.word(3));
    let logistic = c.op.opcode == opcode::LOGISTIC;
    for i in 0..input.elements() {
        let v = i8_at(c.src(0, x), i).wrapping_sub(zp);
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

/// TFLM's float LOGISTIC (with its cut-offs) and TANH.
fn logistic_tanh_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let logistic = c.op.opcode == opcode::LOGISTIC;
    for i in 0..input.elements() {
        let v = f32_at(c.src(0, x), i);
        let r = if logistic {
            sigmoid_f32(v)
        } else {
            libm::tanhf(v)
        };
        put_f32(c.out, i, r);
    }
    Ok(())
}

/// TFLM's float logistic (with its cut-offs).
#[inline]
pub(crate) fn sigmoid_f32(v: f32) -> f32 {
    if v > 16.619_047 {
        1.0
    } else if v < -9.0 {
        super::cmath::expf(v)
    } else {
        1.0 / (1.0 + super::cmath::expf(-v))
    }
}
