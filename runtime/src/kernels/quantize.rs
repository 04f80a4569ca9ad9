//! QUANTIZE and DEQUANTIZE, every type pair TFLM's reference kernels accept
//! (`tensorflow/lite/micro/kernels/quantize_common.cc`,
//! `dequantize_common.cc`, tflite-micro 90b983c2):
//!
//! * QUANTIZE float32 → int8/int16 (`AffineQuantize`: round(x / scale) + zp,
//!   the division in float);
//! * QUANTIZE requantizing (`Requantize`: (x − zp_in) times the multiplier of
//!   `scale_in / scale_out`, + zp_out, clamped): int8 → int8/uint8/int16/int32,
//!   uint8 → int8, int16 → int8/int16/int32, int32 → int8/int16. TFLM's
//!   XOR-0x80 shortcut for int8 ↔ uint8 at equal scales gives the same bytes
//!   as the general formula, so there is one path;
//! * DEQUANTIZE int8/uint8/int16 → float32 (`(float)(scale · (x − zp))`, the
//!   product in double).
//!
//! TFLM also needs the QUANTIZE output to carry exactly one scale.

use microarena_image::dtype;

use super::bytes::{f32_at, i8_at, i16_at, i32_at, put_f32, put_i8, put_i16, put_i32};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::QUANTIZE, prepare_quantize, quantize),
    kernel(opcode::DEQUANTIZE, prepare_dequantize, dequantize),
];

/// The (input, output) types TFLM's QUANTIZE runs.
fn quantize_pair(i: i8, o: i8) -> bool {
    use dtype::{F32, I8, I16, I32, U8};
    matches!(
        (i, o),
        (F32, I8)
            | (F32, I16)
            | (I8, I8)
            | (I8, U8)
            | (I8, I16)
            | (I8, I32)
            | (U8, I8)
            | (I16, I8)
            | (I16, I16)
            | (I16, I32)
            | (I32, I8)
            | (I32, I16)
    )
}

pub(crate) fn prepare_quantize(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        quantize_pair(input.dtype, out.dtype),
        "QUANTIZE types: float32 to int8/int16; int8 to int8/uint8/int16/int32; uint8 to int8; \
         int16 to int8/int16/int32; int32 to int8/int16",
    )?;
    p.need(
        out.n_scales == 1,
        "the QUANTIZE output needs exactly one scale",
    )?;
    p.check(same_len(&input, out), "input and output sizes differ")?;
    let (m, s) = if input.dtype != dtype::F32 {
        quantize_ratio(input.scale, 1.0, out.scale)
    } else {
        (0, 0)
    };
    words.push(m);
    words.push(s);
    Ok(())
}

/// Element `i` of an integer tensor, widened.
fn int_at(t: &TensorInfo, x: &[u8], i: usize) -> i32 {
    match t.dtype {
        dtype::I16 => i16_at(x, i),
        dtype::I32 => i32_at(x, i),
        dtype::U8 => x.get(i).map_or(0, |&b| i32::from(b)),
        _ => i8_at(x, i),
    }
}

/// AffineQuantize (float input) or Requantize (integer input), as TFLM.
pub(crate) fn quantize(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    for i in 0..out.elements() {
        let v = if input.dtype == dtype::F32 {
            fx::round_f32(f32_at(c.src(0, x), i) / out.scale).saturating_add(out.zero_point)
        } else {
            fx::mbqm(
                int_at(&input, c.src(0, x), i).wrapping_sub(input.zero_point),
                c.word(0),
                c.word(1),
            )
            .wrapping_add(out.zero_point)
        };
        match out.dtype {
            dtype::I16 => put_i16(c.out, i, v.clamp(-32768, 32767)),
            dtype::I32 => put_i32(c.out, i, v),
            dtype::U8 => {
                if let Some(b) = c.out.get_mut(i) {
                    *b = v.clamp(0, 255) as u8;
                }
            }
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
        out.dtype == dtype::F32 && matches!(input.dtype, dtype::I8 | dtype::U8 | dtype::I16),
        "DEQUANTIZE types: int8, uint8 or int16 to float32",
    )?;
    p.check(same_len(&input, out), "input and output sizes differ")
}

pub(crate) fn dequantize(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let scale = f64::from(input.scale);
    for i in 0..input.elements() {
        let v = (scale * f64::from(int_at(&input, x, i).wrapping_sub(input.zero_point))) as f32;
        put_f32(c.out, i, v);
    }
    Ok(())
}
