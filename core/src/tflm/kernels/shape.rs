//! Shape ops: RESHAPE (`reshape.cc`, `reshape_common.cc`), SQUEEZE
//! (`squeeze.cc`), EXPAND_DIMS (`expand_dims.cc`), SHAPE (`shape.cc`),
//! FILL (`fill.cc`), ZEROS_LIKE (`zeros_like.cc`), BROADCAST_TO
//! (`broadcast_to.cc`) and BROADCAST_ARGS (`broadcast_args.cc`).

use alloc::format;
use alloc::vec::Vec;

use super::shapes::{Reshaped, ShapeCx, ShapeFail, same_as_input};
use super::{Ctx, Kernel, Prep, abi3, all_io, both, in0_out0, kernel, nothing, st};
use crate::read::dtype::DType::{F32, I8, I16, I32, I64};
use crate::read::ops::OpOptions;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, constant, one_of, same};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        // TfLiteReshapeParams: int shape[8], num_dimensions.
        builtin: both(st(36, 4)),
        builtin_name: "TfLiteReshapeParams",
        prepare: reshape_prepare,
        checks: RESHAPE,
        shape: Some(reshape_shape),
        ..kernel(c::RESHAPE, "reshape.cc, reshape_common.cc")
    },
    Kernel {
        // TfLiteSqueezeParams: int squeeze_dims[8], num_squeeze_dims.
        builtin: both(st(36, 4)),
        builtin_name: "TfLiteSqueezeParams",
        prepare: in0_out0,
        // squeeze.cc refuses only string tensors, which no TFLM model carries.
        ..kernel(c::SQUEEZE, "squeeze.cc")
    },
    Kernel {
        // Input, axis, output; the output shape is the model's (no dims copy).
        prepare: all_io,
        checks: EXPAND_DIMS,
        ..kernel(c::EXPAND_DIMS, "expand_dims.cc")
    },
    Kernel {
        // TfLiteShapeParams: one TfLiteType.
        builtin: abi3(st(4, 4), st(1, 1), st(4, 4)),
        builtin_name: "TfLiteShapeParams",
        // ShapePrepare checks counts only.
        prepare: nothing,
        checks: SHAPE,
        ..kernel(c::SHAPE, "shape.cc")
    },
    Kernel {
        // Dims, value, output.
        prepare: all_io,
        checks: FILL,
        ..kernel(c::FILL, "fill.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: ZEROS_LIKE,
        shape: Some(same_as_input),
        ..kernel(c::ZEROS_LIKE, "zeros_like.cc")
    },
    Kernel {
        // Input, shape, output; the output's dims must already be the shape.
        prepare: all_io,
        checks: BROADCAST_TO,
        ..kernel(c::BROADCAST_TO, "broadcast_to.cc")
    },
    Kernel {
        prepare: all_io,
        checks: BROADCAST_ARGS,
        ..kernel(c::BROADCAST_ARGS, "broadcast_args.cc")
    },
];

/// RESHAPE: the constant shape input (or `new_shape`), one −1 resolved; a
/// reshape that flattened the trailing dimensions (Keras Flatten:
/// [1, 49, 80] → [-1, 3920]) keeps flattening them, as the model converted
/// at the new length would.
fn reshape_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let out = cx.out();
    let target = cx
        .consts(1)
        .or(match &cx.op.options {
            OpOptions::Reshape { new_shape } => new_shape.clone(),
            _ => None,
        })
        .ok_or_else(|| cx.fail(out, "no constant shape input or new_shape"))?;
    let elems: i64 = in0.iter().map(|&d| i64::from(d)).product();
    if let Some(flat) = flattened(
        &cx.original_shape(cx.input_t()),
        &cx.original_shape(out),
        &in0,
    ) {
        return Ok(flat.into());
    }
    let known: i64 = target
        .iter()
        .filter(|&&d| d != -1)
        .map(|&d| i64::from(d))
        .product();
    let wild = target.iter().filter(|&&d| d == -1).count();
    let mut s = target.clone();
    match wild {
        0 if known == elems => {}
        1 if known > 0 && elems % known == 0 => {
            for d in s.iter_mut().filter(|d| **d == -1) {
                *d = (elems / known) as i32;
            }
        }
        _ => {
            return Err(cx.fail(
                out,
                format!("{in0:?} ({elems} elements) cannot be reshaped to {target:?}"),
            ));
        }
    }
    Ok(s.into())
}

/// When `before_out` is `before_in` with its dimensions after the first `k`
/// merged into one, the same merge of `now_in`; `None` for any other reshape.
fn flattened(before_in: &[i32], before_out: &[i32], now_in: &[i32]) -> Option<Vec<i32>> {
    let k = before_out.len().checked_sub(1)?;
    if k == 0 || before_in.len() <= before_out.len() || now_in.len() != before_in.len() {
        return None;
    }
    let merged = |s: &[i32]| -> Option<i32> {
        s.iter()
            .try_fold(1i32, |a, &d| a.checked_mul(d).filter(|_| d >= 0))
    };
    if before_out.get(..k) != before_in.get(..k)
        || Some(before_out[k]) != merged(before_in.get(k..)?)
    {
        return None;
    }
    let mut s = now_in.get(..k)?.to_vec();
    s.push(merged(now_in.get(k..)?)?);
    Some(s)
}

/// `ReshapeOutput`: input and output (never the shape input); a −1 in the
/// stored output shape makes it copy the resolved dims.
fn reshape_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    in0_out0(cx, p);
    if cx.out_t(0).is_some_and(|out| out.shape.contains(&-1)) {
        p.output_dims(cx);
    }
}

/// `zeros_like.cc`: Eval int64, int32, int8, float32.
const ZEROS_LIKE: &[Check] = &[one_of(Input(0), &[I64, I32, I8, F32], E)];

/// `reshape_common.cc` `ReshapeOutput`: input type = output type.
const RESHAPE: &[Check] = &[same(&[Input(0), Output(0)], P)];

/// `expand_dims.cc`: constant int32 axis in Prepare; Eval float32, int16, int8.
const EXPAND_DIMS: &[Check] = &[
    constant(
        Input(1),
        "the axis",
        Some("Non-constant >axis< tensor is not supported"),
    ),
    one_of(Input(1), &[I32], P),
    one_of(Input(0), &[F32, I16, I8], E),
];

/// `shape.cc`: Eval writes int32 only.
const SHAPE: &[Check] = &[one_of(Output(0), &[I32], E)];

/// `fill.cc`: Prepare wants the value's type to be the output's, and checks the
/// output shape against the dims tensor, so that must be constant; Eval fills
/// float32, int32 and int8 values only.
const FILL: &[Check] = &[
    same(&[Input(1), Output(0)], P),
    constant(
        Input(0),
        "the output shape",
        Some("Non-constant >dims< tensor is not supported"),
    ),
    one_of(Input(1), &[F32, I32, I8], E),
];

/// `broadcast_to.cc`: int32/int64 shape, input type = output type, constant shape.
const BROADCAST_TO: &[Check] = &[
    one_of(Input(1), &[I32, I64], P),
    same(&[Input(0), Output(0)], P),
    constant(
        Input(1),
        "the output shape",
        Some("Non-constant >shape< tensor is not supported"),
    ),
];

/// `broadcast_args.cc`: int32 or int64 shapes, all of one type.
const BROADCAST_ARGS: &[Check] = &[
    one_of(Input(0), &[I32, I64], P),
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
];
