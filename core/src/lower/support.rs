//! The type and quantization rules of the runtime's kernels that the
//! parameter lowering does not already enforce, checked on the model so that
//! `runtime_arena` refuses exactly the models `Interpreter::new` refuses
//! (`plan`'s runtime figure is null with the reason when `run` would fail).
//! Which operands must be constant is not restated: both sides read the
//! operator table's `constant_inputs`. Each type rule restates a `need` of
//! the kernel's Prepare in `runtime/src/kernels/`;
//! `runtime/tests/plan_matches_run.rs` holds the two in step over the shared
//! models and every verify-kernels case.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

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

use crate::tflm::kernels::multiplier_exponent;

/// Why the runtime's Prepare would refuse `op` for its tensor types or for an operand it
/// reads as constant data, if it would.
pub(super) fn check(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> Result<(), String> {
    check_types(model, op, out)?;
    check_shapes(model, op, out)?;
    check_constants(model, op)
}

/// `a` and `b` right-aligned against `out`: each dim equal to the output's
/// or 1, the output's the larger (the runtime's `broadcast::broadcastable`).
fn broadcasts(a: &[i32], b: &[i32], out: &[i32]) -> bool {
    let r = out.len();
    let dim = |s: &[i32], k: usize| {
        if k + s.len() >= r {
            s[k + s.len() - r]
        } else {
            1
        }
    };
    a.len() <= r
        && b.len() <= r
        && (0..r).all(|k| {
            let (da, db, o) = (dim(a, k), dim(b, k), out[k]);
            (da == o || da == 1) && (db == o || db == 1) && o == da.max(db)
        })
}

/// The element-wise kernels' shape rules: binary ops broadcast onto the
/// output, SELECT_V2's three inputs too, unary ones keep the element count.
fn check_shapes(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> Result<(), String> {
    let sg = model.main();
    let shape = |i: usize| {
        op.input(i)
            .and_then(|t| sg.tensors.get(t))
            .map(|t| t.shape.as_slice())
    };
    let o = out.shape.as_slice();
    match super::image_opcode(op).unwrap_or(opcode::CUSTOM) {
        opcode::EQUAL
        | opcode::NOT_EQUAL
        | opcode::LESS
        | opcode::LESS_EQUAL
        | opcode::GREATER
        | opcode::GREATER_EQUAL
        | opcode::LOGICAL_AND
        | opcode::LOGICAL_OR
        | opcode::FLOOR_DIV
        | opcode::FLOOR_MOD => rule(
            shape(0)
                .zip(shape(1))
                .is_some_and(|(a, b)| broadcasts(a, b, o)),
            "shapes do not broadcast",
        ),
        opcode::SELECT_V2 => {
            let fits = |s: &[i32]| {
                s.len() <= o.len()
                    && s.iter()
                        .enumerate()
                        .all(|(k, &d)| d == 1 || d == o[k + o.len() - s.len()])
            };
            let ins = [shape(0), shape(1), shape(2)];
            let largest = (0..o.len()).all(|k| {
                let dims = ins.map(|s| {
                    s.map_or(1, |s| {
                        if k + s.len() >= o.len() {
                            s[k + s.len() - o.len()]
                        } else {
                            1
                        }
                    })
                });
                let (max, min) = (dims.iter().max(), dims.iter().min());
                o[k] == if min == Some(&0) {
                    0
                } else {
                    max.copied().unwrap_or(1)
                }
            });
            rule(
                ins.iter().all(|s| s.is_some_and(fits)) && largest,
                "SELECT_V2 shapes do not broadcast onto the output",
            )
        }
        opcode::FLOOR
        | opcode::CEIL
        | opcode::ROUND
        | opcode::NEG
        | opcode::SQUARE
        | opcode::SIN
        | opcode::COS
        | opcode::LOGICAL_NOT
        | opcode::ZEROS_LIKE
        | opcode::ELU => {
            let n = |s: &[i32]| s.iter().map(|&d| i64::from(d.max(0))).product::<i64>();
            rule(
                shape(0).is_some_and(|s| n(s) == n(o)),
                "input and output sizes differ",
            )
        }
        _ => Ok(()),
    }
}

/// The operands the runtime's kernels read as the image's constant data: the
/// operator table's [`opcode::constant_inputs`], the rule the runtime's
/// Prepare checks, with its reason.
fn check_constants(model: &Model<'_>, op: &Operator<'_>) -> Result<(), String> {
    let sg = model.main();
    let code = super::image_opcode(op).unwrap_or(opcode::CUSTOM);
    let (slots, why) = opcode::constant_inputs(code);
    // An absent optional input passes, as in the runtime.
    let constant = |k: &usize| {
        op.input(*k)
            .and_then(|t| sg.tensors.get(t))
            .is_none_or(|t| t.has_data)
    };
    rule(slots.iter().all(constant), why)
}

/// Why the runtime's Prepare would refuse `op` for its tensor types, if it would.
fn check_types(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> Result<(), String> {
    let sg = model.main();
    let input = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let code = super::image_opcode(op).unwrap_or(opcode::CUSTOM);
    let o = out.dtype.code();
    let i0 = input(0).map(|t| t.dtype.code());
    let i1 = input(1).map(|t| t.dtype.code());
    let same2 = i0 == Some(o) && i1 == Some(o);
    let one_of = |ts: &[i8]| ts.contains(&o);
    use dtype::{F32, I8, I16, I32, U8};
    match code {
        opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D | opcode::FULLY_CONNECTED if o == I16 => {
            // The 16x8 kernels (`check_operands_16x8`).
            rule(
                i0 == Some(I16) && i1 == Some(I8),
                "int16 needs an int8 filter and an int16 output",
            )?;
            let bias = input(2).map(|t| t.dtype.code());
            let biases: &[i8] = if code == opcode::DEPTHWISE_CONV_2D {
                &[dtype::I64]
            } else {
                &[I32, dtype::I64]
            };
            rule(bias.is_none_or(|b| biases.contains(&b)), "bias type")?;
            let quantized = |i: usize| input(i).is_some_and(|t| quant(t).2 > 0);
            rule(
                code == opcode::FULLY_CONNECTED || (quantized(0) && quantized(1)),
                "int16 needs a quantized input and filter",
            )?;
            rule(
                code == opcode::DEPTHWISE_CONV_2D
                    || bias.is_some()
                    || op.quantized_bias_type != dtype::I32,
                "int16 without a bias but quantized_bias_type INT32 (TFLM's int32 accumulator) is not supported",
            )
        }
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
        opcode::SUB => {
            rule(
                same2 && one_of(&[F32, I8, I16, I32]),
                "SUB: float32, int8, int16 or int32",
            )?;
            let unquantized = [input(0), input(1), Some(out)]
                .iter()
                .all(|t| t.is_none_or(|t| quant(t).2 == 0));
            rule(
                o != I32 || unquantized,
                "int32 SUB needs unquantized inputs and output",
            )
        }
        opcode::ADD | opcode::MUL => {
            rule(
                same2 && one_of(&[I8, I16, I32, F32]),
                "ADD/MUL: int8, int16, int32 or float32",
            )?;
            let unquantized = |i: usize| input(i).is_none_or(|t| quant(t).2 == 0);
            rule(
                code != opcode::ADD || o != I32 || (unquantized(0) && unquantized(1)),
                "ADD: int32 inputs must not be quantized",
            )?;
            let zero = |t: Option<&Tensor<'_>>| t.is_none_or(|t| quant(t).1 == 0);
            rule(
                code != opcode::MUL || o != I16 || (zero(input(0)) && zero(input(1)) && zero(Some(out))),
                "int16 MUL needs zero points of 0",
            )
        }
        opcode::ADD_N => {
            let inputs: Vec<&Tensor<'_>> = (0..op.inputs.len()).filter_map(input).collect();
            rule(
                inputs.len() >= 2 && inputs.len() == op.inputs.len(),
                "ADD_N needs at least two inputs",
            )?;
            let Some(&first) = inputs.first() else {
                return Err("ADD_N needs at least two inputs".into());
            };
            rule(
                first.dtype.code() == o && one_of(&[F32, I8]),
                "ADD_N: float32 or int8, every input as the output",
            )?;
            rule(first.shape == out.shape, "ADD_N: output shape")?;
            rule(
                inputs
                    .iter()
                    .all(|t| t.dtype == first.dtype && t.shape == first.shape),
                "ADD_N: inputs of one shape and type",
            )?;
            let (s0, z0, _) = quant(first);
            rule(
                o != I8
                    || inputs.iter().all(|t| {
                        let (s, z, _) = quant(t);
                        s == s0 && z == z0
                    }),
                "ADD_N: int8 inputs on one scale and zero point",
            )?;
            let real_out = 2.0 * f64::from(s0) / (f64::from(1i32 << 20) * f64::from(quant(out).0));
            rule(
                o != I8 || (real_out > 0.0 && real_out < 1.0),
                "ADD_N: output scale too small for the inputs' (TFLM requires a multiplier below 1)",
            )
        }
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
        opcode::CUMSUM => {
            rule(
                op.inputs.len() == 2 && i0 == Some(o) && one_of(&[F32, I8]),
                "CUMSUM: float32 or int8, the same in and out",
            )?;
            rule(
                i1 == Some(I32) && input(1).is_some_and(|t| t.elements() == 1),
                "CUMSUM axis: one int32",
            )?;
            rule(
                !out.shape.is_empty() && input(0).is_some_and(|t| t.shape == out.shape),
                "CUMSUM: the output as the input, at least 1-D",
            )
        }
        opcode::REDUCE_ALL => rule(i0 == Some(o) && o == dtype::BOOL, "REDUCE_ALL: bool only"),
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
            matches!(i0, Some(I8 | I16 | I32 | dtype::U32 | F32 | dtype::BOOL))
                && one_of(&[I8, I16, I32, dtype::U32, F32, dtype::BOOL]),
            "CAST: from int8, int16, int32, uint32, float32 or bool to int8, int16, int32, uint32, float32 or bool",
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
        opcode::MIRROR_PAD => rule(
            i0 == Some(o) && one_of(&[F32, I8]),
            "MIRROR_PAD: float32 or int8, the same in and out",
        ),
        opcode::PAD | opcode::PADV2 => match input(2) {
            // A pad value: a scalar of the input's type, an int8 one on the
            // output's scale and zero point (TFLM's PadPrepare, restated by the kernel).
            Some(v) => {
                rule(
                    Some(v.dtype.code()) == i0 && v.dtype.code() == o,
                    "pad value type",
                )?;
                rule(v.elements() == 1, "pad value must be a scalar")?;
                let (vs, vz, _) = quant(v);
                let (os, oz, _) = quant(out);
                rule(
                    o != I8 || (vs == os && vz == oz),
                    "int8 pad value quantized unlike the output",
                )
            }
            None => Ok(()),
        },
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
        opcode::BATCH_MATMUL => {
            rule(
                op.inputs.len() == 2 && same2 && one_of(&[F32, I8, I16]),
                "BATCH_MATMUL: float32, int8 or int16, both operands as the output",
            )?;
            let (l, r) = (input(0).map_or(0, |t| t.shape.len()), input(1).map_or(0, |t| t.shape.len()));
            rule(
                (2..=5).contains(&l) && (2..=5).contains(&r),
                "BATCH_MATMUL operands are 2-D to 5-D",
            )?;
            let zps = [input(0), input(1), Some(out)].map(|t| t.map_or(0, |t| quant(t).1));
            rule(
                o != I16 || zps == [0; 3],
                "int16 BATCH_MATMUL needs zero points of 0",
            )?;
            batch_matmul_shapes(op, input(0), input(1), out)
        }
        opcode::EQUAL
        | opcode::NOT_EQUAL
        | opcode::LESS
        | opcode::LESS_EQUAL
        | opcode::GREATER
        | opcode::GREATER_EQUAL
        | opcode::LOGICAL_AND
        | opcode::LOGICAL_OR => {
            let types: &[i8] = match code {
                opcode::LOGICAL_AND | opcode::LOGICAL_OR => &[dtype::BOOL],
                opcode::EQUAL | opcode::NOT_EQUAL => &[dtype::BOOL, F32, I32, dtype::I64, I8],
                _ => &[F32, I32, dtype::I64, I8],
            };
            rule(
                op.inputs.len() == 2
                    && i0 == i1
                    && i0.is_some_and(|t| types.contains(&t))
                    && o == dtype::BOOL,
                "comparisons: float32, int32, int64 or int8 (EQUAL/NOT_EQUAL also bool; LOGICAL_AND/OR bool only), a bool output",
            )?;
            let same_shape = input(0).map(|t| &t.shape) == input(1).map(|t| &t.shape);
            rule(same_shape || out.shape.len() <= 4, "broadcasting is 4-D at most")
        }
        opcode::LOGICAL_NOT => rule(
            i0 == Some(dtype::BOOL) && o == dtype::BOOL,
            "LOGICAL_NOT: bool in and out",
        ),
        opcode::SELECT_V2 => {
            let i2 = input(2).map(|t| t.dtype.code());
            rule(
                op.inputs.len() == 3
                    && i0 == Some(dtype::BOOL)
                    && i1 == Some(o)
                    && i2 == Some(o)
                    && one_of(&[F32, I8, I16]),
                "SELECT_V2: a bool condition, float32, int8 or int16 values as the output",
            )?;
            rule(out.shape.len() <= 5, "SELECT_V2 broadcasting is 5-D at most")
        }
        opcode::FLOOR
        | opcode::CEIL
        | opcode::ROUND
        | opcode::NEG
        | opcode::SQUARE
        | opcode::SIN
        | opcode::COS => rule(i0 == Some(F32) && o == F32, "float32 only"),
        opcode::FLOOR_DIV | opcode::FLOOR_MOD => {
            rule(op.inputs.len() == 2 && same2 && o == F32, "float32 only")?;
            let same_shape = input(0).map(|t| &t.shape) == input(1).map(|t| &t.shape);
            rule(same_shape || out.shape.len() <= 4, "broadcasting is 4-D at most")
        }
        opcode::ZEROS_LIKE => rule(
            i0 == Some(o) && one_of(&[dtype::I64, I32, I8, F32]),
            "ZEROS_LIKE: int64, int32, int8 or float32, the same in and out",
        ),
        opcode::FILL => {
            let value = input(1);
            rule(
                op.inputs.len() == 2
                    && value.is_some_and(|v| v.shape.is_empty())
                    && i1 == Some(o)
                    && one_of(&[F32, I32, I8]),
                "FILL: a scalar value of the output's type, float32, int32 or int8",
            )?;
            let dims = op.input(0).and_then(|t| model.const_ints(0, t));
            rule(
                matches!(i0, Some(I32 | dtype::I64))
                    && input(0).is_some_and(|t| t.shape.len() == 1)
                    && dims.is_none_or(|d| d.len() == out.shape.len() && d.iter().zip(&out.shape).all(|(a, b)| i64::from(*a) == i64::from(*b))),
                "FILL dims differ from the output's shape",
            )
        }
        opcode::SLICE
        | opcode::REVERSE_V2
        | opcode::BROADCAST_TO
        | opcode::BROADCAST_ARGS
        | opcode::DEPTH_TO_SPACE
        | opcode::SPACE_TO_DEPTH
        | opcode::GATHER_ND
        | opcode::EMBEDDING_LOOKUP
        | opcode::DYNAMIC_UPDATE_SLICE => rearrange(model, op, out),
        opcode::LOGISTIC | opcode::TANH => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8, I16]),
                "LOGISTIC/TANH: float32, int8 or int16, the same in and out",
            )?;
            if o != I16 {
                return Ok(());
            }
            let zi = input(0).map_or(0, |t| quant(t).1);
            let (so, zo, _) = quant(out);
            rule(zi == 0 && zo == 0, "int16 LOGISTIC/TANH needs zero points of 0")?;
            rule(
                microarena_image::quant::checked_log2(so) == Some(-15),
                "int16 LOGISTIC/TANH needs an output scale of 2^-15",
            )
        }
        opcode::L2_NORMALIZATION => {
            rule(
                i0 == Some(o) && one_of(&[F32, I8]),
                "L2_NORMALIZATION: float32 or int8, the same in and out",
            )?;
            rule(
                out.shape.len() <= 4 && input(0).is_some_and(|t| t.shape == out.shape),
                "L2_NORMALIZATION: up to 4-D, the output as the input",
            )
        }
        opcode::L2_POOL_2D => rule(i0 == Some(o) && o == F32, "L2_POOL_2D: float32 only"),
        opcode::ELU => rule(
            i0 == Some(o) && one_of(&[F32, I8]),
            "ELU: float32 or int8, the same in and out",
        ),
        opcode::SIGNAL_WINDOW
        | opcode::SIGNAL_FFT_AUTO_SCALE
        | opcode::SIGNAL_RFFT
        | opcode::SIGNAL_ENERGY
        | opcode::SIGNAL_FILTER_BANK
        | opcode::SIGNAL_FILTER_BANK_SQUARE_ROOT
        | opcode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION
        | opcode::SIGNAL_PCAN
        | opcode::SIGNAL_FILTER_BANK_LOG => signal(model, op, out),
        _ => Ok(()),
    }
    .map_err(|why| format!("{why} (the runtime's kernel refuses it)"))
}

/// The element-moving kernels' Prepare rules (`runtime/src/kernels/rearrange.rs`).
fn rearrange(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> Result<(), String> {
    use dtype::{BOOL, F32, I8, I16, I32, I64, U8};
    let sg = model.main();
    let input = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let x = input(0).ok_or("input 0 is missing")?;
    let o = out.dtype.code();
    let (xt, xs, os) = (x.dtype.code(), &x.shape, &out.shape);
    let n_in = op.inputs.len();
    let ty = |i: usize| input(i).map(|t| t.dtype.code());
    let rank = |i: usize| input(i).map_or(0, |t| t.shape.len());
    let dim = |s: &[i32], k: usize| s.get(k).copied().unwrap_or(0);
    match super::image_opcode(op).unwrap_or(opcode::CUSTOM) {
        opcode::SLICE => {
            rule(n_in == 3, "SLICE needs 3 inputs")?;
            rule(
                xt == o && [F32, I32, I8, I16, BOOL].contains(&o),
                "SLICE: float32, int32, int8, int16 or bool, the same in and out",
            )?;
            rule(
                ty(1) == ty(2) && matches!(ty(1), Some(I32 | I64)),
                "SLICE begin and size: int32 or int64",
            )?;
            let count = |i: usize| input(i).map_or(0, |t| t.elements());
            rule(
                xs.len() <= 5
                    && os.len() == xs.len()
                    && count(1) == xs.len() as u64
                    && count(2) == xs.len() as u64,
                "SLICE: up to 5-D, a begin and a size per axis",
            )
        }
        opcode::REVERSE_V2 => {
            rule(n_in == 2, "REVERSE_V2 needs 2 inputs")?;
            rule(
                xt == o && [F32, I32, I16, I8, U8, I64, BOOL].contains(&o),
                "REVERSE_V2: float32, int32, int16, int8, uint8, int64 or bool, the same in and out",
            )?;
            rule(
                ty(1) == Some(I32) && rank(1) == 1,
                "REVERSE_V2 axes: rank-1 int32",
            )?;
            let axes = input(1).map_or(0, |t| t.elements());
            rule(
                xs.len() <= 8 && xs.len() as u64 >= axes && xs == os,
                "REVERSE_V2: up to 8-D, no more axes than dims, the output as the input",
            )
        }
        opcode::BROADCAST_TO => {
            rule(n_in == 2, "BROADCAST_TO needs 2 inputs")?;
            rule(
                xt == o && dtype::dtype_size(o).is_some(),
                "BROADCAST_TO: the output's type as the input's",
            )?;
            rule(
                matches!(ty(1), Some(I32 | I64)) && rank(1) == 1,
                "BROADCAST_TO shape: rank-1 int32 or int64",
            )?;
            let shape = op.input(1).and_then(|t| model.const_ints(0, t));
            rule(
                os.len() <= 5 && xs.len() <= os.len() && shape.is_none_or(|s| s == *os),
                "BROADCAST_TO: up to 5-D, the shape equal to the output's",
            )?;
            let lead = os.len().saturating_sub(xs.len());
            rule(
                xs.iter()
                    .enumerate()
                    .all(|(k, &d)| d == 1 || d == dim(os, k + lead)),
                "BROADCAST_TO: the input does not broadcast to the shape",
            )
        }
        opcode::BROADCAST_ARGS => {
            rule(n_in == 2, "BROADCAST_ARGS needs 2 inputs")?;
            rule(
                xt == o && ty(1) == Some(o) && matches!(o, I32 | I64),
                "BROADCAST_ARGS: int32 or int64 shapes and output",
            )?;
            rule(
                xs.len() == 1 && rank(1) == 1 && os.len() == 1,
                "BROADCAST_ARGS: rank-1 shapes and output",
            )?;
            let longer = x.elements().max(input(1).map_or(0, |t| t.elements()));
            rule(
                out.elements() == longer,
                "BROADCAST_ARGS: the output as long as the longer shape",
            )
        }
        code @ (opcode::DEPTH_TO_SPACE | opcode::SPACE_TO_DEPTH) => {
            rule(
                xt == o && [F32, I8].contains(&o),
                "float32 or int8, the same in and out",
            )?;
            rule(
                xs.len() == 4 && os.len() == 4,
                "input and output must be 4-D",
            )?;
            let bs = match op.options {
                crate::read::ops::OpOptions::BlockSize { block_size } => block_size,
                _ => 0,
            };
            let (space, depth) = if code == opcode::DEPTH_TO_SPACE {
                (os, xs)
            } else {
                (xs, os)
            };
            rule(
                space[0] == depth[0]
                    && i64::from(space[1]) == i64::from(depth[1]) * i64::from(bs)
                    && i64::from(space[2]) == i64::from(depth[2]) * i64::from(bs)
                    && i64::from(depth[3]) == i64::from(space[3]) * i64::from(bs) * i64::from(bs),
                "shapes do not follow from the block size",
            )
        }
        opcode::GATHER_ND => {
            rule(n_in == 2, "GATHER_ND needs 2 inputs")?;
            rule(
                xt == o && [F32, I8].contains(&o),
                "GATHER_ND: float32 or int8 params, the output as the params",
            )?;
            rule(ty(1) == Some(I32), "GATHER_ND indices: int32")?;
            let is = input(1).map(|t| t.shape.clone()).unwrap_or_default();
            rule(
                !xs.is_empty() && !is.is_empty(),
                "GATHER_ND params and indices are at least vectors",
            )?;
            let nd = dim(&is, is.len() - 1).max(0) as usize;
            rule(
                nd <= xs.len() && nd <= 5,
                "GATHER_ND index depth exceeds the params' rank or 5",
            )?;
            let mut want: Vec<i32> = is[..is.len() - 1].to_vec();
            want.extend_from_slice(&xs[nd..]);
            rule(*os == want, "GATHER_ND output shape")
        }
        opcode::EMBEDDING_LOOKUP => {
            rule(n_in == 2, "EMBEDDING_LOOKUP needs 2 inputs")?;
            rule(
                xt == I32 && xs.len() == 1,
                "EMBEDDING_LOOKUP ids: rank-1 int32",
            )?;
            let hybrid = ty(1) == Some(I8) && o == F32;
            rule(
                hybrid || (ty(1) == Some(o) && [F32, I8].contains(&o)),
                "EMBEDDING_LOOKUP: float32 or int8 rows, the output as the rows or float32",
            )?;
            let zp = input(1)
                .and_then(|t| t.quantization.as_ref())
                .and_then(|q| q.zero_points.first().copied())
                .unwrap_or(0);
            rule(
                !hybrid || zp == 0,
                "EMBEDDING_LOOKUP: int8 rows dequantized to float32 need zero point 0",
            )?;
            let vs = input(1).map(|t| t.shape.clone()).unwrap_or_default();
            rule(
                vs.len() >= 2 && os.len() == vs.len() && os[0] == xs[0] && os[1..] == vs[1..],
                "EMBEDDING_LOOKUP output shape",
            )
        }
        _ => {
            // DYNAMIC_UPDATE_SLICE
            rule(n_in == 3, "DYNAMIC_UPDATE_SLICE needs 3 inputs")?;
            rule(
                ty(1) == Some(xt) && xt == o && [F32, I8, I16, I32].contains(&o),
                "DYNAMIC_UPDATE_SLICE: float32, int8, int16 or int32, operand, update and output alike",
            )?;
            let start = input(2).map(|t| t.shape.clone()).unwrap_or_default();
            rule(
                matches!(ty(2), Some(I32 | I64))
                    && start.len() == 1
                    && start[0] as usize == xs.len(),
                "DYNAMIC_UPDATE_SLICE start: rank-1 int32 or int64, one per operand dim",
            )?;
            let us = input(1).map(|t| t.shape.clone()).unwrap_or_default();
            rule(
                us.len() == xs.len()
                    && xs.len() <= 8
                    && xs == os
                    && us.iter().zip(xs).all(|(u, d)| u <= d),
                "DYNAMIC_UPDATE_SLICE: the update within the operand, the output as the operand",
            )
        }
    }
}

/// BATCH_MATMUL's shapes as the runtime's Prepare checks them: batch dims
/// (right-aligned, up to 3) that broadcast, equal depths, and the output
/// `[batch…, M, N]` of the larger operand's rank.
fn batch_matmul_shapes(
    op: &Operator<'_>,
    lhs: Option<&Tensor<'_>>,
    rhs: Option<&Tensor<'_>>,
    out: &Tensor<'_>,
) -> Result<(), String> {
    let (adj_x, adj_y) = match op.options {
        crate::read::ops::OpOptions::BatchMatMul { adj_x, adj_y } => (adj_x, adj_y),
        _ => (false, false),
    };
    let (Some(l), Some(r)) = (lhs, rhs) else {
        return Err("BATCH_MATMUL needs 2 inputs".into());
    };
    let (l, r) = (&l.shape, &r.shape);
    let rank = l.len().max(r.len());
    let batch = |s: &[i32], i: usize| {
        let lead = s.len() - 2;
        if i + lead >= rank - 2 {
            s[i + lead + 2 - rank]
        } else {
            1
        }
    };
    let mut want = Vec::new();
    for i in 0..rank - 2 {
        let (a, b) = (batch(l, i), batch(r, i));
        rule(
            a == b || a == 1 || b == 1,
            "BATCH_MATMUL batch dims do not broadcast",
        )?;
        want.push(a.max(b));
    }
    let (l0, l1) = (l[l.len() - 2], l[l.len() - 1]);
    let (r0, r1) = (r[r.len() - 2], r[r.len() - 1]);
    let (m, k) = if adj_x { (l1, l0) } else { (l0, l1) };
    let (rk, n) = if adj_y { (r1, r0) } else { (r0, r1) };
    rule(k == rk, "BATCH_MATMUL operands differ in depth")?;
    want.extend([m, n]);
    rule(out.shape == want, "BATCH_MATMUL output shape")
}

/// The Signal kernels' Prepare rules (tflite-micro 90b983c2
/// `signal/micro/kernels/*.cc`) plus the runtime's own: options that would
/// index past a tensor or shift by 32 or more (undefined in TFLM's C++) are
/// refused rather than given a meaning. Restates `runtime/src/kernels/signal.rs`.
fn signal(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> Result<(), String> {
    use dtype::{I16, I32, U32, U64};
    let sg = model.main();
    let input = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let x = input(0).ok_or("input 0 is missing")?;
    let flex = crate::read::flex::map_values(op.custom_options).unwrap_or_default();
    let value = |i: usize| flex.get(i).map_or(0, |&v| v as i32);
    let rank1 = |t: &Tensor<'_>| t.shape.len() == 1;
    match super::image_opcode(op).unwrap_or(opcode::CUSTOM) {
        opcode::SIGNAL_WINDOW => {
            let w = input(1).ok_or("SignalWindow needs its weights")?;
            rule(
                op.inputs.len() == 2
                    && [x.dtype.code(), w.dtype.code(), out.dtype.code()] == [I16; 3]
                    && !x.shape.is_empty()
                    && rank1(w)
                    && x.shape.len() == out.shape.len(),
                "SignalWindow: int16 input, rank-1 int16 weights, int16 output of the input's rank",
            )?;
            rule(
                w.elements() > 0
                    && x.elements() % w.elements() == 0
                    && out.elements() == x.elements(),
                "SignalWindow: the input must be whole windows and the output as long",
            )?;
            rule(
                (0..32).contains(&value(0)),
                "SignalWindow: shift must be 0..31",
            )
        }
        opcode::SIGNAL_ENERGY => {
            rule(
                op.inputs.len() == 1
                    && x.dtype.code() == I16
                    && out.dtype.code() == U32
                    && rank1(x)
                    && rank1(out),
                "SignalEnergy: rank-1 int16 input, rank-1 uint32 output",
            )?;
            // Options by key order: end_index, start_index.
            let (end, start) = (i64::from(value(0)), i64::from(value(1)));
            rule(
                0 <= start
                    && start <= end
                    && end <= out.elements() as i64
                    && 2 * end <= x.elements() as i64,
                "SignalEnergy: start_index..end_index must lie within the output and the complex input",
            )
        }
        opcode::SIGNAL_FFT_AUTO_SCALE => {
            let bits = op
                .output(1)
                .and_then(|t| sg.tensors.get(t))
                .ok_or("SignalFftAutoScale needs 2 outputs")?;
            rule(
                op.inputs.len() == 1
                    && op.outputs.len() == 2
                    && x.dtype.code() == I16
                    && out.dtype.code() == I16
                    && bits.dtype.code() == I32
                    && rank1(x)
                    && rank1(out)
                    && bits.shape.is_empty()
                    && out.elements() == x.elements(),
                "SignalFftAutoScale: rank-1 int16 input and output as long, int32 scalar scale bits",
            )
        }
        opcode::SIGNAL_RFFT => {
            // Options by key order: T, fft_length.
            rule(
                op.inputs.len() == 1
                    && value(0) == i32::from(I16)
                    && x.dtype.code() == I16
                    && out.dtype.code() == I16,
                "SignalRfft: int16 only",
            )?;
            let len = value(1);
            let mut n = len / 2;
            for p in [4, 2, 3, 5] {
                while n > 1 && n % p == 0 {
                    n /= p;
                }
            }
            rule(
                len >= 2 && len % 2 == 0 && n == 1,
                "SignalRfft: fft_length must be even with no prime factor above 5",
            )?;
            let frame = x.shape.last().copied().unwrap_or(0);
            let bins = out.shape.last().copied().unwrap_or(0);
            rule(
                !x.shape.is_empty()
                    && x.shape.len() == out.shape.len()
                    && frame > 0
                    && frame <= len
                    && bins == len + 2,
                "SignalRfft: frames of at most fft_length samples, fft_length + 2 outputs per frame",
            )?;
            rule(
                x.elements() / frame as u64 == out.elements() / bins as u64,
                "SignalRfft: as many output frames as input frames",
            )
        }
        opcode::SIGNAL_FILTER_BANK => filter_bank(model, op, out, value(0)),
        opcode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION => {
            let noise = op
                .output(1)
                .and_then(|t| sg.tensors.get(t))
                .ok_or("SignalFilterBankSpectralSubtraction needs 2 outputs")?;
            rule(
                op.inputs.len() == 1
                    && op.outputs.len() == 2
                    && [x.dtype.code(), out.dtype.code(), noise.dtype.code()] == [U32; 3]
                    && rank1(x)
                    && rank1(out)
                    && rank1(noise),
                "SignalFilterBankSpectralSubtraction: rank-1 uint32 tensors",
            )?;
            let n = value(4);
            rule(
                n >= 0
                    && [x.elements(), out.elements(), noise.elements()]
                        .iter()
                        .all(|&e| e == n as u64),
                "SignalFilterBankSpectralSubtraction: num_channels must equal every tensor's length",
            )?;
            rule(
                (0..32).contains(&value(7)) && (0..64).contains(&value(8)),
                "SignalFilterBankSpectralSubtraction: smoothing_bits 0..31, spectral_subtraction_bits 0..63",
            )
        }
        opcode::SIGNAL_PCAN => {
            let noise = input(1).ok_or("SignalPCAN needs its noise estimate")?;
            let lut = input(2).ok_or("SignalPCAN needs its gain table")?;
            rule(
                op.inputs.len() == 3
                    && [x.dtype.code(), noise.dtype.code(), out.dtype.code()] == [U32; 3]
                    && lut.dtype.code() == I16
                    && rank1(x)
                    && rank1(noise)
                    && rank1(lut)
                    && rank1(out),
                "SignalPCAN: rank-1 uint32 input, noise estimate and output, int16 gain table",
            )?;
            rule(
                out.elements() == x.elements() && noise.elements() >= x.elements(),
                "SignalPCAN: output as long as the input, a noise estimate per channel",
            )?;
            rule(
                lut.elements() >= 125,
                "SignalPCAN: the gain table needs 125 entries",
            )?;
            rule(
                (0..64).contains(&value(0)),
                "SignalPCAN: snr_shift must be 0..63",
            )
        }
        opcode::SIGNAL_FILTER_BANK_SQUARE_ROOT => {
            let bits = input(1).ok_or("SignalFilterBankSquareRoot needs its scale bits")?;
            rule(
                op.inputs.len() == 2
                    && x.dtype.code() == U64
                    && bits.dtype.code() == I32
                    && out.dtype.code() == U32
                    && rank1(x)
                    && bits.shape.is_empty()
                    && rank1(out)
                    && out.elements() == x.elements(),
                "SignalFilterBankSquareRoot: rank-1 uint64 input, int32 scalar scale bits, uint32 output as long",
            )
        }
        _ => {
            rule(
                op.inputs.len() == 1
                    && x.dtype.code() == U32
                    && out.dtype.code() == I16
                    && rank1(x)
                    && rank1(out)
                    && out.elements() == x.elements(),
                "SignalFilterBankLog: rank-1 uint32 input, int16 output as long",
            )?;
            // Options by key order: input_correction_bits, output_scale.
            rule(
                (0..32).contains(&value(0)),
                "SignalFilterBankLog: input_correction_bits must be 0..31",
            )
        }
    }
}

/// SignalFilterBank: types, `num_channels` against the output, and every
/// channel's band inside the spectrum and the weights, from the constant
/// channel tables (as the runtime's Prepare checks them).
fn filter_bank(
    model: &Model<'_>,
    op: &Operator<'_>,
    out: &Tensor<'_>,
    channels: i32,
) -> Result<(), String> {
    use dtype::{I16, U32, U64};
    let sg = model.main();
    let input = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let x = input(0).ok_or("input 0 is missing")?;
    let w = input(1).ok_or("SignalFilterBank needs its weights")?;
    let uw = input(2).ok_or("SignalFilterBank needs its unweights")?;
    rule(
        op.inputs.len() == 6
            && x.dtype.code() == U32
            && x.shape.len() == 1
            && w.dtype.code() == I16
            && uw.dtype.code() == I16
            && w.shape.len() == 1
            && uw.shape.len() == 1
            && out.dtype.code() == U64
            && out.shape.len() == 1,
        "SignalFilterBank: rank-1 uint32 spectrum, int16 weights, uint64 output",
    )?;
    rule(
        channels >= 0 && channels as u64 == out.elements(),
        "SignalFilterBank: num_channels must equal the output length",
    )?;
    let n = channels as usize + 1;
    let table = |k: usize| -> Result<alloc::vec::Vec<i32>, String> {
        let t = input(k).ok_or("SignalFilterBank needs 6 inputs")?;
        if t.dtype.code() != I16 || t.shape.len() != 1 {
            return Err("SignalFilterBank: rank-1 int16 tables".into());
        }
        let d = op
            .input(k)
            .filter(|_| t.has_data)
            .and_then(|i| model.tensor_data(0, i))
            .ok_or("SignalFilterBank: channel tables must be constant")?;
        let v: alloc::vec::Vec<i32> = d
            .chunks_exact(2)
            .map(|c| i32::from(i16::from_le_bytes([c[0], c[1]])))
            .collect();
        if v.len() < n {
            return Err("SignalFilterBank: channel tables need num_channels + 1 entries".into());
        }
        Ok(v)
    };
    let (starts, weight_starts, widths) = (table(3)?, table(4)?, table(5)?);
    let weights = w.elements().min(uw.elements()) as i64;
    for i in 0..n {
        let (f, ws, wd) = (
            i64::from(starts[i]),
            i64::from(weight_starts[i]),
            i64::from(widths[i]),
        );
        rule(
            f >= 0 && ws >= 0 && wd >= 0 && f + wd <= x.elements() as i64 && ws + wd <= weights,
            "SignalFilterBank: a channel reaches past the spectrum or the weights",
        )?;
    }
    Ok(())
}

/// The runtime's Prepare of the control-flow and resource-variable ops
/// (`runtime/src/kernels/control.rs`), restated on the model: op `op` of
/// subgraph `g`, with the model's resources (`res`, core's TFLM map).
pub(super) fn check_subgraph_op(
    model: &Model<'_>,
    res: &crate::tflm::tail::Resources,
    g: usize,
    op: &Operator<'_>,
) -> Result<(), String> {
    let tensor = |t: Option<usize>| t.and_then(|t| model.tensor(g, t));
    let handle = |gg: usize, t: Option<usize>| t.is_some_and(|t| res.of.contains_key(&(gg, t)));
    // A tensor's bytes and where the image puts it: the head, constant data, or neither.
    let place = |gg: usize, t: usize| -> Option<(u64, bool, bool)> {
        let x = model.tensor(gg, t)?;
        let in_head = !x.has_data && !x.is_variable && !res.of.contains_key(&(gg, t));
        Some((x.bytes.unwrap_or(0), in_head, x.has_data))
    };
    let copyable = |from: (usize, usize), to: (usize, usize)| -> Result<(), String> {
        let (Some((fb, f_head, f_const)), Some((tb, t_head, _))) =
            (place(from.0, from.1), place(to.0, to.1))
        else {
            return Err("a tensor copied into or out of a subgraph is missing".into());
        };
        rule(
            fb == tb,
            "a tensor copied into or out of a subgraph differs in size from its counterpart",
        )?;
        rule(
            tb == 0 || (t_head && (f_head || f_const)),
            "a tensor copied into or out of a subgraph is not in the arena (or a constant source)",
        )
    };
    let sub = |k: i32| {
        usize::try_from(k)
            .ok()
            .and_then(|s| model.subgraphs.get(s).map(|sg| (s, sg)))
            .ok_or_else(|| String::from("calls a subgraph that does not exist"))
    };
    let io = |v: &[i32], k: usize| v.get(k).and_then(|&t| usize::try_from(t).ok());
    let ins =
        |k: usize| -> Result<usize, String> { op.input(k).ok_or("an input is missing".into()) };
    let outs =
        |k: usize| -> Result<usize, String> { op.output(k).ok_or("an output is missing".into()) };
    let no_state_inputs = || {
        rule(
            !op.inputs.iter().any(|&t| {
                let t = usize::try_from(t).ok();
                handle(g, t) || tensor(t).is_some_and(|x| x.is_variable && !x.has_data)
            }),
            "a variable tensor is an input of an op that does not own state",
        )
    };
    let bool_scalar = |gg: usize, t: Option<usize>| {
        t.and_then(|t| model.tensor(gg, t))
            .is_some_and(|x| x.dtype == crate::read::dtype::DType::Bool && x.elements() == 1)
    };
    use crate::read::ops::OpOptions;
    match (
        super::image_opcode(op).unwrap_or(opcode::CUSTOM),
        &op.options,
    ) {
        (
            opcode::IF,
            &OpOptions::If {
                then_subgraph,
                else_subgraph,
            },
        ) => {
            rule(!op.inputs.is_empty(), "IF needs its condition")?;
            rule(bool_scalar(g, op.input(0)), "IF's condition is one bool")?;
            no_state_inputs()?;
            for s in [then_subgraph, else_subgraph] {
                let (s, sg) = sub(s)?;
                rule(
                    sg.inputs.len() + 1 == op.inputs.len() && sg.outputs.len() == op.outputs.len(),
                    "IF's inputs (after the condition) and outputs differ in number from a branch's",
                )?;
                for k in 0..sg.inputs.len() {
                    let to = io(&sg.inputs, k).ok_or("a branch input is missing")?;
                    copyable((g, ins(k + 1)?), (s, to))?;
                }
                for k in 0..sg.outputs.len() {
                    let from = io(&sg.outputs, k).ok_or("a branch output is missing")?;
                    copyable((s, from), (g, outs(k)?))?;
                }
            }
            Ok(())
        }
        (
            opcode::WHILE,
            &OpOptions::While {
                cond_subgraph,
                body_subgraph,
            },
        ) => {
            let n = op.inputs.len();
            let ((c, cond), (b, body)) = (sub(cond_subgraph)?, sub(body_subgraph)?);
            rule(
                n == op.outputs.len()
                    && cond.inputs.len() == n
                    && body.inputs.len() == n
                    && body.outputs.len() == n,
                "WHILE's inputs, outputs, cond's inputs and body's inputs and outputs differ in number",
            )?;
            let first = io(&cond.outputs, 0);
            rule(
                bool_scalar(c, first),
                "WHILE's cond subgraph gives one bool first",
            )?;
            rule(
                first
                    .and_then(|t| place(c, t))
                    .is_some_and(|(_, head, constant)| head || constant),
                "WHILE's condition is not in the arena",
            )?;
            no_state_inputs()?;
            for k in 0..n {
                let (i, o) = (ins(k)?, outs(k)?);
                let cin = io(&cond.inputs, k).ok_or("a cond input is missing")?;
                let bin = io(&body.inputs, k).ok_or("a body input is missing")?;
                let bout = io(&body.outputs, k).ok_or("a body output is missing")?;
                copyable((g, i), (g, o))?;
                copyable((g, i), (c, cin))?;
                copyable((g, o), (c, cin))?;
                copyable((g, o), (b, bin))?;
                copyable((b, bout), (g, o))?;
            }
            Ok(())
        }
        (opcode::CALL_ONCE, OpOptions::CallOnce { .. }) => rule(
            op.inputs.is_empty() && op.outputs.is_empty(),
            "CALL_ONCE has no inputs or outputs",
        ),
        (opcode::VAR_HANDLE, _) => rule(
            op.inputs.is_empty() && op.outputs.len() == 1,
            "VAR_HANDLE has no inputs and one output",
        ),
        (opcode::READ_VARIABLE | opcode::ASSIGN_VARIABLE, _) => {
            let read = super::image_opcode(op) == Some(opcode::READ_VARIABLE);
            rule(
                if read {
                    op.inputs.len() == 1 && op.outputs.len() == 1
                } else {
                    op.inputs.len() == 2 && op.outputs.is_empty()
                },
                "READ_VARIABLE has one input and one output, ASSIGN_VARIABLE two inputs and none",
            )?;
            let id = op
                .input(0)
                .and_then(|t| res.of.get(&(g, t)))
                .ok_or("the resource handle is not a VAR_HANDLE's output in this subgraph")?;
            let value = res
                .first_assignment
                .get(*id)
                .copied()
                .flatten()
                .and_then(|(ga, ia)| {
                    let a = model.subgraphs.get(ga)?.operators.get(ia)?;
                    model.tensor(ga, a.input(1)?)
                })
                .ok_or(
                    "the resource variable is never assigned (TFLM allocates it at its first ASSIGN_VARIABLE)",
                )?;
            let slot = if read { op.output(0) } else { op.input(1) };
            let this = tensor(slot).ok_or("the value is missing")?;
            rule(
                this.bytes == value.bytes,
                "the value differs in size from the resource variable",
            )?;
            // The runtime reads and writes values in the head or constants.
            let state = this.is_variable && !this.has_data;
            rule(
                !state && !handle(g, slot),
                "a variable tensor is the value of READ_VARIABLE or ASSIGN_VARIABLE",
            )?;
            // The runtime resets a resource as a variable tensor (int8: its
            // zero point, others 0); TFLM memsets the zero point's low byte.
            let (_, zp, _) = quant(value);
            rule(
                zp == 0 || value.dtype.code() == dtype::I8,
                "a resource variable of a type other than int8 with a non-zero zero point",
            )
        }
        _ => Err("its options (the subgraphs it calls) are missing".into()),
    }
}
