//! The type and quantization rules of the runtime's kernels that the
//! parameter lowering does not already enforce, checked on the model so that
//! `runtime_arena` refuses exactly the models `Interpreter::new` refuses
//! (`plan`'s runtime figure is null with the reason when `run` would fail).
//! Each rule restates a `need` of the kernel's Prepare in
//! `runtime/src/kernels/`; `runtime/tests/plan_matches_run.rs` holds the two
//! in step over the shared models and every verify-kernels case.

use alloc::format;
use alloc::string::String;

use microarena_image::{dtype, opcode};

use crate::read::model::{Model, Operator, Tensor};

/// Scale, zero point and scale count of a tensor as the image records them.
fn quant(t: &Tensor<'_>) -> (f32, i64, usize) {
    t.quantization.as_ref().map_or((0.0, 0, 0), |q| {
        (
            q.scales.first().copied().unwrap_or(0.0),
            i64::from(q.zero_points.first().copied().unwrap_or(0) as i32),
            q.scales.len(),
        )
    })
}

fn rule(ok: bool, why: &str) -> Result<(), String> {
    if ok { Ok(()) } else { Err(why.into()) }
}

/// The exponent `QuantizeMultiplier` gives `m` (`frexp`'s, plus one when the
/// mantissa rounds up to 1).
fn multiplier_exponent(m: f64) -> i32 {
    if m == 0.0 || !m.is_finite() {
        return 0;
    }
    let mut e = 0;
    let mut q = m.abs();
    while q >= 1.0 {
        q /= 2.0;
        e += 1;
    }
    while q < 0.5 {
        q *= 2.0;
        e -= 1;
    }
    // std::round of the positive mantissa (core has no f64::round).
    if (q * 2147483648.0 + 0.5) as i64 >= 1i64 << 31 {
        e += 1;
    }
    e
}

/// Why the runtime's Prepare would refuse `op` for its tensor types, if it would.
pub(super) fn check(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> Result<(), String> {
    let sg = model.main();
    let input = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let code = op.opcode.0 as u8;
    let o = out.dtype.code();
    let i0 = input(0).map(|t| t.dtype.code());
    let i1 = input(1).map(|t| t.dtype.code());
    let same2 = i0 == Some(o) && i1 == Some(o);
    let one_of = |ts: &[i8]| ts.contains(&o);
    use dtype::{F32, I8, I16, I32, U8};
    match code {
        opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D | opcode::FULLY_CONNECTED => rule(
            same2 && one_of(&[I8, F32]),
            "only int8 or float32 with matching types",
        ),
        opcode::TRANSPOSE_CONV => {
            let filter = input(1).map(|t| t.dtype.code());
            let input_t = input(2).map(|t| t.dtype.code());
            let bias = input(3).map(|t| t.dtype.code());
            let (ok, bias_ok) = match o {
                F32 => (input_t == Some(F32) && filter == Some(F32), bias.is_none_or(|b| b == F32)),
                I8 => (input_t == Some(I8) && filter == Some(I8), bias.is_none_or(|b| b == I32)),
                I16 => (
                    input_t == Some(I16) && filter == Some(I8),
                    bias.is_none_or(|b| b == dtype::I64 || b == I16),
                ),
                _ => (false, false),
            };
            rule(
                ok,
                "TRANSPOSE_CONV: float32, int8, or int16 with an int8 filter, the output as the input",
            )?;
            rule(bias_ok, "TRANSPOSE_CONV bias type")?;
            let quantized = input(2).map_or(0, |t| quant(t).2) > 0 && quant(out).2 > 0;
            rule(
                o == F32 || quantized,
                "quantized TRANSPOSE_CONV needs quantized input and output",
            )?;
            let scales = input(1).map_or(0, |t| quant(t).2);
            let channels = out.shape.last().copied().unwrap_or(0).max(0) as usize;
            rule(
                o == F32 || scales == 1 || scales == channels,
                "filter scales: one, or one per output channel",
            )
        }
        opcode::SUB => rule(
            same2 && one_of(&[F32, I8, I16]),
            "SUB: float32, int8 or int16",
        ),
        opcode::DIV => {
            rule(
                same2 && one_of(&[F32, I8, I32]),
                "DIV: float32, int8 or int32",
            )?;
            let unquantized = [input(0), input(1)]
                .iter()
                .all(|t| t.is_none_or(|t| quant(t).2 == 0));
            rule(o != I32 || unquantized, "int32 DIV needs unquantized inputs")
        }
        opcode::MAXIMUM | opcode::MINIMUM => rule(
            same2 && one_of(&[F32, I8, I16, I32]),
            "MAXIMUM/MINIMUM: float32, int8, int16 or int32",
        ),
        opcode::SQUARED_DIFFERENCE => {
            rule(
                same2 && one_of(&[F32, I8, I16, I32]),
                "SQUARED_DIFFERENCE: float32, int8, int16 or int32",
            )?;
            let zps = [input(0), input(1), Some(out)].map(|t| t.map_or(0, |t| quant(t).1));
            match o {
                I8 => rule(
                    zps.iter().all(|z| (-128..=127).contains(z)),
                    "int8 zero points must be within int8",
                ),
                I16 => rule(zps.iter().all(|&z| z == 0), "int16 zero points must be 0"),
                _ => Ok(()),
            }
        }
        opcode::MEAN | opcode::SUM => rule(
            i0 == Some(o) && one_of(&[F32, I8, I16]),
            "only float32, int8 or int16",
        ),
        opcode::REDUCE_MAX | opcode::REDUCE_MIN => {
            rule(i0 == Some(o) && one_of(&[F32, I8]), "only float32 or int8")?;
            let (si, zi, _) = input(0).map_or((0.0, 0, 0), quant);
            let (so, zo, _) = quant(out);
            rule(
                o != I8 || (si == so && zi == zo),
                "int8 MAX/MIN needs the output's scale and zero point equal to the input's",
            )
        }
        opcode::QUANTIZE => {
            let pair = matches!(
                (i0.unwrap_or(-1), o),
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
            );
            rule(pair, "QUANTIZE: this type pair is not one TFLM runs")?;
            rule(
                quant(out).2 == 1,
                "the QUANTIZE output needs exactly one scale",
            )
        }
        opcode::DEQUANTIZE => rule(
            o == F32 && matches!(i0, Some(I8 | U8 | I16)),
            "DEQUANTIZE: int8, uint8 or int16 to float32",
        ),
        opcode::RELU | opcode::RELU6 | opcode::LEAKY_RELU => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8, I16]),
                "only float32, int8 or int16, the same in and out",
            )?;
            let zero_points = input(0).map_or(0, |t| quant(t).1) == 0 && quant(out).1 == 0;
            rule(
                code != opcode::RELU || o != I16 || zero_points,
                "int16 RELU needs zero points of 0",
            )
        }
        opcode::PRELU => {
            let ok = match o {
                F32 => i0 == Some(F32) && i1 == Some(F32),
                I8 => i0 == Some(I8) && i1 == Some(I8),
                I16 => i0 == Some(I16) && i1 == Some(I8),
                _ => false,
            };
            rule(
                ok,
                "PRELU types: float32, int8, or int16 with an int8 alpha",
            )?;
            rule(out.shape.len() <= 4, "PRELU is 4-D at most")
        }
        opcode::HARD_SWISH => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8]),
                "only float32 or int8, the same in and out",
            )?;
            if o == I8 {
                let hires = (1.0f32 / 128.0) * input(0).map_or(0.0, |t| quant(t).0);
                let e = multiplier_exponent(f64::from(hires / quant(out).0));
                rule(
                    e <= 0,
                    "HARD_SWISH needs input scale / 128 ≤ output scale (TFLM's Prepare)",
                )?;
            }
            Ok(())
        }
        opcode::SQRT | opcode::LOG | opcode::EXP => {
            rule(i0 == Some(F32) && o == F32, "float32 only")
        }
        opcode::LOG_SOFTMAX => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8]),
                "LOG_SOFTMAX: float32 or int8, the same in and out",
            )?;
            if o != I8 {
                return Ok(());
            }
            let (so, zo, _) = quant(out);
            rule(
                so == 16.0 / 256.0 && zo == 127,
                "int8 LOG_SOFTMAX needs an output scale of 16/256 and zero point 127",
            )?;
            // The input multiplier (scale · 2^26) must have a left shift of at
            // least 1, and its reverse must stay below 1 (1.0 exactly gives 1).
            let real = (f64::from(input(0).map_or(0.0, |t| quant(t).0)) * 67108864.0)
                .min(2147483647.0);
            rule(
                multiplier_exponent(real) >= 1 && real != 1.0,
                "int8 LOG_SOFTMAX needs input scale · 2^26 above 1",
            )
        }
        opcode::RSQRT => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8]),
                "RSQRT: float32 or int8, the same in and out",
            )?;
            let (qi, qo) = (input(0).map_or(0, |t| quant(t).2), quant(out).2);
            rule(
                o != I8 || (qi > 0 && qo > 0),
                "int8 RSQRT needs quantized int8 input and output",
            )
        }
        opcode::ABS => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8, I16]),
                "ABS: float32, int8 or int16, the same in and out",
            )?;
            let qi = input(0).map_or((0.0, 0, 0), quant);
            let qo = quant(out);
            if o == I8 || (o == I16 && qi.2 > 0) {
                rule(
                    qi.2 > 0 && qo.2 > 0,
                    "quantized ABS needs quantized input and output",
                )?;
            }
            rule(
                o != I16 || qi.2 == 0 || (qi.1 == 0 && qo.1 == 0),
                "int16 ABS needs zero points of 0",
            )
        }
        opcode::CAST => rule(
            matches!(i0, Some(I8 | I16 | I32 | F32 | dtype::BOOL)) && one_of(&[I8, I16, I32, F32]),
            "CAST: from int8, int16, int32, float32 or bool to int8, int16, int32 or float32",
        ),
        opcode::ARG_MAX | opcode::ARG_MIN => rule(
            matches!(i0, Some(F32 | I8)) && o == I32,
            "ARG_MAX/ARG_MIN: float32 or int8 input, int32 output",
        ),
        opcode::GATHER => rule(
            matches!(i0, Some(F32 | I8)) && i1 == Some(I32) && i0 == Some(o),
            "GATHER: float32 or int8 values, int32 indices",
        ),
        opcode::RESIZE_BILINEAR => rule(
            i0 == Some(o) && one_of(&[F32, I8]) && i1 == Some(I32),
            "RESIZE_BILINEAR: float32 or int8, int32 size",
        ),
        opcode::RESIZE_NEAREST_NEIGHBOR => rule(
            i0 == Some(o) && one_of(&[F32, I16, I8]) && i1 == Some(I32),
            "RESIZE_NEAREST_NEIGHBOR: float32, int16 or int8, int32 size",
        ),
        opcode::SPACE_TO_BATCH_ND | opcode::BATCH_TO_SPACE_ND => rule(
            i0 == Some(o) && one_of(&[F32, I8]),
            "float32 or int8, the same in and out",
        ),
        opcode::EXPAND_DIMS => rule(
            i0 == Some(o) && one_of(&[F32, I16, I8]),
            "EXPAND_DIMS: float32, int16 or int8 only",
        ),
        opcode::PACK => {
            let inputs_match =
                (0..op.inputs.len()).all(|i| input(i).map(|t| t.dtype.code()) == Some(o));
            rule(
                inputs_match && one_of(&[F32, I8, I16, I32, dtype::I64]),
                "PACK: float32, int8, int16, int32 or int64, the same in and out",
            )
        }
        opcode::SHAPE => {
            let rank = input(0).map_or(0, |t| t.shape.len() as u64);
            rule(
                o == I32 && out.elements() == rank,
                "SHAPE: an int32 output with one element per input dim",
            )
        }
        _ => Ok(()),
    }
    .map_err(|why| format!("{why} (the runtime's kernel refuses it)"))
}
