//! Padding: PAD and PADV2 (`pad.cc`, `pad_common.cc`, `cmsis_nn/pad.cc`) and
//! MIRROR_PAD (`mirror_pad.cc`).

use alloc::vec::Vec;

use super::shapes::{Reshaped, ShapeCx, ShapeFail};
use super::{CMSIS_SAME, Ctx, Kernel, Prep, abi3, all_io, both, kernel, st};
use crate::read::dtype::DType::{F32, I8, I16, I32};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, constant, one_of, rank, same};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        // OpData: PadParams (52) + output_zero_point.
        op_data: both(Some(56)),
        // Input, paddings, (PADV2's value,) output.
        prepare: all_io,
        checks: PAD,
        cmsis_nn: Some(CMSIS_SAME),
        shape: Some(pad_shape),
        ..kernel(c::PAD, "pad.cc, pad_common.cc")
    },
    Kernel {
        op_data: both(Some(56)),
        prepare: all_io,
        checks: PAD,
        cmsis_nn: Some(CMSIS_SAME),
        shape: Some(pad_shape),
        ..kernel(c::PADV2, "pad.cc, pad_common.cc")
    },
    Kernel {
        // TfLiteMirrorPaddingParams: mode.
        builtin: abi3(st(4, 4), st(1, 1), st(4, 4)),
        builtin_name: "TfLiteMirrorPaddingParams",
        // OpDataMirrorPad: five int.
        op_data: both(Some(20)),
        prepare: mirror_pad_prepare,
        checks: MIRROR_PAD,
        shape: Some(pad_shape),
        ..kernel(c::MIRROR_PAD, "mirror_pad.cc")
    },
];

/// PAD, PADV2, MIRROR_PAD: each dim grows by its constant paddings.
fn pad_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let p = cx
        .consts(1)
        .ok_or_else(|| cx.fail(cx.out(), "paddings are not constant"))?;
    if p.len() != 2 * in0.len() {
        return Err(cx.fail(cx.out(), "paddings do not match the rank"));
    }
    Ok(in0
        .iter()
        .zip(p.chunks_exact(2))
        .map(|(&d, q)| d + q[0] + q[1])
        .collect::<Vec<i32>>()
        .into())
}

/// `MirrorPadPrepare`: input, padding matrix, output, then two int arrays of
/// the input's rank as scratch.
fn mirror_pad_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    p.scratch(4 * cx.in_rank(0), "output dims")
        .scratch(4 * cx.in_rank(0), "input dims");
}

/// `pad_common.cc` `PadPrepare` (shared by `cmsis_nn/pad.cc`): input type =
/// output type, rank ≤ 5, the PADV2 value of the input's type, constant
/// paddings; Eval float32, int8, int16, int32.
const PAD: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    rank(Input(0), 0, 5, None),
    same(&[Input(0), Input(2)], P),
    constant(
        Input(1),
        "the paddings",
        Some("Non-constant >paddings< tensor is not supported"),
    ),
    one_of(Input(0), &[F32, I8, I16, I32], E),
];

/// `mirror_pad.cc`: Eval's switch on the output has float32 and int8.
const MIRROR_PAD: &[Check] = &[one_of(Output(0), &[F32, I8], E)];
