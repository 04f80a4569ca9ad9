//! QUANTIZE (float to int8/int16, and integer requantization) and DEQUANTIZE
//! (int8 to float32), as TFLM's reference kernels.

use microarena_image::dtype;

use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::QUANTIZE, prepare_quantize, quantize),
    kernel(opcode::DEQUANTIZE, prepare_dequantize, dequantize),
];

pub(crate) fn prepare_quantize(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
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
    p.need(same_len(&input, out), "shape mismatch")?;
    let (m, s) = if input.dtype != dtype::F32 {
        fx::quantize_multiplier(f64::from(input.scale) / f64::from(out.scale))
    } else {
        (0, 0)
    };
    words.push(m);
    words.push(s);
    Ok(())
}

/// AffineQuantize (float input) or Requantize (integer input), as TFLM.
pub(crate) fn quantize(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
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

pub(crate) fn prepare_dequantize(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        out.dtype == dtype::F32 && input.dtype == dtype::I8,
        "int8 to float32 only",
    )?;
    p.need(same_len(&input, out), "shape mismatch")
}

pub(crate) fn dequantize(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let scale = f64::from(input.scale);
    for i in 0..input.elements() {
        let v = (scale * f64::from(i8_at(x, i).wrapping_sub(input.zero_point))) as f32;
        put_f32(c.out, i, v);
    }
    Ok(())
}
