//! Slicing and joining: CONCATENATION (`concatenation.cc`), PACK
//! (`pack.cc`), UNPACK (`unpack.cc`), SPLIT (`split.cc`), SPLIT_V
//! (`split_v.cc`), STRIDED_SLICE (`strided_slice.cc`,
//! `strided_slice_common.cc`), SLICE (`slice.cc`), TRANSPOSE
//! (`transpose.cc`, `transpose_common.cc`, `cmsis_nn/transpose.cc`), GATHER
//! (`gather.cc`), GATHER_ND (`gather_nd.cc`), EMBEDDING_LOOKUP
//! (`embedding_lookup.cc`), REVERSE_V2 (`reverse.cc`) and
//! DYNAMIC_UPDATE_SLICE (`dynamic_update_slice.cc`).

use alloc::format;
use alloc::vec::Vec;

use super::shapes::{Reshaped, ShapeCx, ShapeFail};
use super::{CMSIS_SAME, Ctx, Kernel, Prep, abi, all_io, both, kernel, nothing, st};
use crate::read::dtype::DType::{Bool, F32, I8, I16, I32, I64, U8};
use crate::read::ops::OpOptions;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, constant, one_of, pairs, rank, same};
use microarena_image::geometry::slice_axis;
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        // TfLiteConcatenationParams: axis, activation.
        builtin: both(st(8, 4)),
        builtin_name: "TfLiteConcatenationParams",
        op_data: abi(Some(80), Some(24)),
        prepare: concatenation_prepare,
        checks: CONCATENATION,
        shape: Some(concatenation_shape),
        ..kernel(c::CONCATENATION, "concatenation.cc")
    },
    Kernel {
        // TfLitePackParams {values_count, axis}; pack.cc has no Init or Prepare.
        builtin: both(st(8, 4)),
        builtin_name: "TfLitePackParams",
        prepare: nothing,
        checks: PACK,
        ..kernel(c::PACK, "pack.cc")
    },
    Kernel {
        // TfLiteUnpackParams {num, axis}; unpack.cc has no Init or Prepare.
        builtin: both(st(8, 4)),
        builtin_name: "TfLiteUnpackParams",
        prepare: nothing,
        checks: UNPACK,
        ..kernel(c::UNPACK, "unpack.cc")
    },
    Kernel {
        // TfLiteSplitParams: num_splits.
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteSplitParams",
        prepare: split_prepare,
        checks: SPLIT,
        ..kernel(c::SPLIT, "split.cc")
    },
    Kernel {
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteSplitVParams",
        prepare: split_v_prepare,
        checks: SPLIT_V,
        ..kernel(c::SPLIT_V, "split_v.cc")
    },
    Kernel {
        // TfLiteStridedSliceParams: five masks and offset.
        builtin: both(st(24, 4)),
        builtin_name: "TfLiteStridedSliceParams",
        // StridedSliceParams.
        op_data: both(Some(84)),
        // Input, begin, end, strides, output.
        prepare: all_io,
        checks: STRIDED_SLICE,
        shape: Some(strided_slice_shape),
        ..kernel(
            c::STRIDED_SLICE,
            "strided_slice.cc, strided_slice_common.cc",
        )
    },
    Kernel {
        // Input, begin, size, output.
        prepare: all_io,
        checks: SLICE,
        ..kernel(c::SLICE, "slice.cc")
    },
    Kernel {
        // Input, permutation, output.
        prepare: all_io,
        checks: TRANSPOSE,
        cmsis_nn: Some(CMSIS_SAME),
        ..kernel(c::TRANSPOSE, "transpose.cc, transpose_common.cc")
    },
    Kernel {
        // TfLiteGatherParams: axis, batch_dims.
        builtin: both(st(8, 4)),
        builtin_name: "TfLiteGatherParams",
        prepare: with_output_dims,
        checks: GATHER,
        ..kernel(c::GATHER, "gather.cc")
    },
    Kernel {
        prepare: with_output_dims,
        checks: GATHER_ND,
        ..kernel(c::GATHER_ND, "gather_nd.cc")
    },
    Kernel {
        // OpData: a float and a size_t, allocated in Prepare.
        prepare: embedding_lookup_prepare,
        checks: EMBEDDING_LOOKUP,
        ..kernel(c::EMBEDDING_LOOKUP, "embedding_lookup.cc")
    },
    Kernel {
        prepare: all_io,
        checks: REVERSE_V2,
        ..kernel(c::REVERSE_V2, "reverse.cc")
    },
    Kernel {
        // Operand, update, start indices, output.
        prepare: all_io,
        checks: DYNAMIC_UPDATE_SLICE,
        ..kernel(c::DYNAMIC_UPDATE_SLICE, "dynamic_update_slice.cc")
    },
];

/// CONCATENATION: the inputs' sizes along the axis added, every other dim
/// shared.
fn concatenation_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let axis = match cx.op.options {
        OpOptions::Concatenation { axis, .. } => axis,
        _ => 0,
    };
    let rank = in0.len() as i32;
    let a = if axis < 0 { axis + rank } else { axis };
    if a < 0 || a >= rank {
        return Err(cx.fail(cx.out(), format!("axis {axis} out of range")));
    }
    let a = a as usize;
    let mut s = in0.clone();
    s[a] = 0;
    for k in 0..cx.inputs() {
        let x = cx.shape(k).unwrap_or_default();
        let same = x.len() == s.len()
            && x.iter()
                .zip(&s)
                .enumerate()
                .all(|(d, (p, q))| d == a || p == q);
        if !same {
            return Err(cx.fail(
                cx.op.input(k).unwrap_or(0),
                format!("{x:?} does not concatenate with {in0:?}"),
            ));
        }
        s[a] += x[a];
    }
    Ok(s.into())
}

/// STRIDED_SLICE: the slice of each axis from constant begin, end and
/// strides and the masks (`geometry::slice_axis`, as lowering and the
/// runtime compute it).
fn strided_slice_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let input = cx.in0();
    let o = match cx.op.options {
        OpOptions::StridedSlice(o) => o,
        _ => Default::default(),
    };
    if o.ellipsis_mask != 0 || o.new_axis_mask != 0 {
        return Err(cx.fail(cx.out(), "ellipsis and new-axis masks are not supported"));
    }
    let (begin, end, strides) = match (cx.consts(1), cx.consts(2), cx.consts(3)) {
        (Some(b), Some(e), Some(s)) => (b, e, s),
        _ => return Err(cx.fail(cx.out(), "begin, end and strides must be constant")),
    };
    let mut out = Vec::new();
    for (ax, &size) in input.iter().enumerate() {
        let bit = |mask: i32| mask & (1 << ax) != 0;
        let a = slice_axis(
            size,
            begin.get(ax).copied().unwrap_or(0),
            end.get(ax).copied().unwrap_or(size),
            strides.get(ax).copied().unwrap_or(1),
            bit(o.begin_mask),
            bit(o.end_mask),
            bit(o.shrink_axis_mask),
        )
        .ok_or_else(|| cx.fail(cx.out(), "stride 0"))?;
        if !bit(o.shrink_axis_mask) {
            out.push(a.count);
        }
    }
    Ok(out.into())
}

/// `ConcatenationPrepare`: input 0 and the output, then every input in turn
/// (input 0 twice).
fn concatenation_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0)).temp(cx.output(0));
    for i in 0..cx.inputs() {
        p.temp(cx.input(i));
    }
}

/// `SplitPrepare`: the axis (input 0) only.
fn split_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0));
}

/// `SplitVPrepare`: the axis (input 2) only.
fn split_v_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(2));
}

/// Input, indices and output, then the output's dims copied to rewrite them
/// (`CreateWritableTensorDimsWithCopy`, sized by the stored output rank).
fn with_output_dims(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp_inputs(cx, &[0, 1]).temp(cx.output(0));
    p.output_dims(cx);
}

/// `EmbeddingLookUpPrepare`: lookup, values, output; the output's dims; then
/// the OpData (a float and a size_t), allocated here rather than in Init.
fn embedding_lookup_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    with_output_dims(cx, p);
    p.persistent(abi(16, 8).get(cx.profile.abi), "OpData");
}

/// `concatenation.cc` `ConcatenationPrepare`: input 0 bool, float32, int8,
/// int16, int32 or int64, the output and every input of its type.
const CONCATENATION: &[Check] = &[
    one_of(Input(0), &[F32, I8, I16, I32, I64, Bool], P),
    same(&[Output(0), Input(0)], P),
    Check::InputsLike {
        first: 1,
        like: Input(0),
        stage: P,
    },
];

/// `strided_slice_common.cc` `StridedSlicePrepare`: rank ≤ 4, begin, end and
/// strides constant; `strided_slice.cc` Eval float32, int8, int16, int32, bool.
const STRIDED_SLICE: &[Check] = &[
    rank(Input(0), 0, 4, Some("input dim should not exceed 4")),
    constant(
        Input(1),
        "begin",
        Some("Non-constant >begin< tensor is not supported"),
    ),
    constant(
        Input(2),
        "end",
        Some("Non-constant >end< tensor is not supported"),
    ),
    constant(
        Input(3),
        "strides",
        Some("Non-constant >strides< tensor is not supported"),
    ),
    one_of(Output(0), &[F32, I8, I16, I32, Bool], E),
];

/// `slice.cc`: Prepare only DCHECKs; Eval wants int32/int64 begin, then
/// float32, int32, int8, int16 or bool data.
const SLICE: &[Check] = &[
    one_of(Input(1), &[I32, I64], E),
    one_of(Input(0), &[F32, I32, I8, I16, Bool], E),
];

/// `transpose_common.cc` `TransposePrepare` (shared by `cmsis_nn/transpose.cc`):
/// rank ≤ 5, input type = output type, constant permutation; Eval float32,
/// int8, int16.
const TRANSPOSE: &[Check] = &[
    rank(
        Input(0),
        0,
        5,
        Some("Transpose op only supports 1D-5D input arrays."),
    ),
    same(&[Input(0), Output(0)], P),
    constant(
        Input(1),
        "the permutation",
        Some("Non-constant >perm< tensor is not supported"),
    ),
    one_of(Input(0), &[F32, I8, I16], E),
];

/// `split.cc` (axis is input 0): constant axis; Eval float32, int8, int16, int32.
const SPLIT: &[Check] = &[
    constant(
        Input(0),
        "the axis",
        Some("Non-constant >axis< tensor is not supported"),
    ),
    one_of(Input(1), &[F32, I8, I16, I32], E),
];

/// `split_v.cc` (axis is input 2).
const SPLIT_V: &[Check] = &[
    constant(
        Input(2),
        "the axis",
        Some("Non-constant >axis< tensor is not supported"),
    ),
    one_of(Input(0), &[F32, I8, I16, I32], E),
];

/// `pack.cc`: no Prepare; Eval output float32, int8, int16, int32, int64.
const PACK: &[Check] = &[one_of(Output(0), &[F32, I8, I16, I32, I64], E)];

/// `unpack.cc`: no Prepare; Eval input float32, int32, int16, int8.
const UNPACK: &[Check] = &[one_of(Input(0), &[F32, I32, I16, I8], E)];

/// `gather.cc` `GatherPrepare`: int32 positions, then float32 or int8 data.
const GATHER: &[Check] = &[one_of(Input(1), &[I32], P), one_of(Input(0), &[F32, I8], P)];

/// `gather_nd.cc` `GatherNdPrepare`: float32 or int8 params, int32 indices.
const GATHER_ND: &[Check] = &[one_of(Input(0), &[F32, I8], P), one_of(Input(1), &[I32], P)];

/// `reverse.cc` `ReverseV2Prepare`.
const REVERSE_V2: &[Check] = &[
    one_of(Input(0), &[I32, F32, U8, I8, I16, I64, Bool], P),
    one_of(Input(1), &[I32], P),
    same(&[Input(0), Output(0)], P),
];

/// `embedding_lookup.cc`: int32 lookup, float32 or int8 values, float32 values
/// to float32, int8 values to float32 or int8.
const EMBEDDING_LOOKUP: &[Check] = &[
    one_of(Input(0), &[I32], P),
    one_of(Input(1), &[F32, I8], P),
    pairs(
        &[Input(1), Output(0)],
        &[&[F32, F32], &[I8, F32], &[I8, I8]],
        P,
        None,
    ),
];

/// `dynamic_update_slice.cc`: operand and update of one type, int32/int64
/// indices; Eval float32, int8, int16, int32.
const DYNAMIC_UPDATE_SLICE: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    one_of(Input(2), &[I32, I64], P),
    one_of(Input(0), &[F32, I8, I16, I32], E),
];
