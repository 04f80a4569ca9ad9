//! SOFTMAX: int8 input to int8 or int16 output in gemmlowp fixed point
//! (bit-exact), and float32. LOG_SOFTMAX: float32 (`x − max − log(Σ exp(x −
//! max))`, `reference_ops::LogSoftmax`, tflite-micro 90b983c2); its int8
//! path is not implemented (Prepare refuses it).

use microarena_image::dtype;
use microarena_image::params::SoftmaxParams;

use super::bytes::{f32_at, i8_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::SOFTMAX, prepare, eval),
    kernel(opcode::LOG_SOFTMAX, prepare_log_softmax, log_softmax),
];

pub(crate) fn prepare_log_softmax(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == dtype::F32 && out.dtype == dtype::F32,
        "LOG_SOFTMAX: float32 only",
    )?;
    p.need(
        input.shape() == out.shape() && input.rank >= 1,
        "input and output shapes differ",
    )
}

/// `reference_ops::LogSoftmax` (float): the row maximum, the sum of
/// `expf(x − max)`, then `x − max − logf(sum)` (libm's expf/logf: within
/// 1 ULP of the wheel's C library, see `math`).
pub(crate) fn log_softmax(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
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
            sum += super::cmath::expf(f32_at(x, row + k) - max);
        }
        let log_sum = super::cmath::logf(sum);
        for k in 0..depth {
            put_f32(c.out, row + k, f32_at(x, row + k) - max - log_sum);
        }
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
            "float32 softmax needs a float32 input",
        )?;
        p.need(same_len(&input, out) && input.rank >= 1, "shape mismatch")?;
        return Ok(());
    }
    p.need(
        input.dtype == dtype::I8 && (out.dtype == dtype::I8 || out.dtype == dtype::I16),
        "only int8 input with int8 or int16 output (and float32) is implemented",
    )?;
    p.need(same_len(&input, out) && input.rank >= 1, "shape mismatch")?;
    let beta = p.op.params::<SoftmaxParams>().beta;
    // PreprocessSoftmaxScaling with kScaledDiffIntegerBits = 5.
    let real = (f64::from(beta) * f64::from(input.scale) * f64::from(1i32 << 26)).min(2147483647.0);
    let (m, shift) = fx::quantize_multiplier(real);
    p.need(shift >= 0, "softmax multiplier below one")?;
    words.push(m);
    words.push(shift);
    words.push(-fx::input_radius(5, shift, 31));
    Ok(())
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    if c.output_info().dtype == dtype::F32 {
        softmax_f32(c)
    } else {
        softmax_i8(c)
    }
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

/// TFLM's float softmax: exp of the scaled difference to the row maximum, then
/// division by the sum (expf from `libm`; TFLM's float results depend on the
/// platform's libm, so these agree to rounding, not necessarily bit for bit).
fn softmax_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let beta = c.op.params::<SoftmaxParams>().beta;
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
            let e = super::cmath::expf((f32_at(x, row + k) - max) * beta);
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
