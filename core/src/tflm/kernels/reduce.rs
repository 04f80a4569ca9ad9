//! Reductions: MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL (`reduce.cc`,
//! `reduce_common.cc`), ARG_MAX and ARG_MIN (`arg_min_max.cc`) and CUMSUM
//! (`cumsum.cc`).

use alloc::vec::Vec;

use super::shapes::{Reshaped, ShapeCx, ShapeFail};
use super::{Ctx, Kernel, Prep, abi3, both, kernel, nothing, st};
use crate::read::dtype::DType::{self, Bool, F32, I8, I16, I32};
use crate::read::ops::OpOptions;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, one_of, one_of_says, same};
use microarena_image::opcode as c;

/// A reducer: `TfLiteReducerParams` (one bool) and `OpDataReduce` (eleven int32).
const fn reducer(code: u8, prepare: fn(&Ctx<'_>, &mut Prep), checks: &'static [Check]) -> Kernel {
    Kernel {
        builtin: both(st(1, 1)),
        builtin_name: "TfLiteReducerParams",
        op_data: both(Some(44)),
        prepare,
        checks,
        shape: Some(reduce_shape),
        ..kernel(code, "reduce.cc, reduce_common.cc")
    }
}

/// `TfLiteArgMaxParams` / `TfLiteArgMinParams`: one `TfLiteType`. No Init,
/// no Prepare.
const fn arg(code: u8) -> Kernel {
    Kernel {
        builtin: abi3(st(4, 4), st(1, 1), st(4, 4)),
        builtin_name: "TfLiteArgMaxParams",
        prepare: nothing,
        checks: ARG_MAX,
        ..kernel(code, "arg_min_max.cc")
    }
}

pub(super) const KERNELS: &[Kernel] = &[
    reducer(c::MEAN, mean_or_sum_prepare, MEAN),
    reducer(c::SUM, mean_or_sum_prepare, SUM),
    reducer(c::REDUCE_MAX, min_max_prepare, REDUCE_MAX),
    reducer(c::REDUCE_MIN, min_max_prepare, REDUCE_MAX),
    reducer(c::REDUCE_ALL, all_prepare, REDUCE_ALL),
    arg(c::ARG_MAX),
    arg(c::ARG_MIN),
    Kernel {
        // TfLiteCumsumParams: exclusive, reverse.
        builtin: both(st(2, 1)),
        builtin_name: "TfLiteCumsumParams",
        prepare: cumsum_prepare,
        checks: CUMSUM,
        ..kernel(c::CUMSUM, "cumsum.cc")
    },
];

/// The reducers: the constant axes dropped, or kept as 1 with `keep_dims`.
fn reduce_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let axes = cx
        .consts(1)
        .ok_or_else(|| cx.fail(cx.out(), "axes are not constant"))?;
    let rank = in0.len() as i32;
    let keep = matches!(cx.op.options, OpOptions::Reducer { keep_dims: true });
    Ok(in0
        .iter()
        .zip(0..rank)
        .filter_map(|(&d, k)| {
            let reduced = axes.iter().any(|&a| a == k || a + rank == k);
            match (reduced, keep) {
                (true, true) => Some(1),
                (true, false) => None,
                (false, _) => Some(d),
            }
        })
        .collect::<Vec<i32>>()
        .into())
}

/// `PrepareSimple`: input and axis, and for int8 the output.
fn simple(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp_inputs(cx, &[0, 1]);
    if cx.in_type(0) == Some(DType::I8) {
        p.temp(cx.output(0));
    }
}

/// The walk over the input's dims and the resolved axes (every reducer).
fn index_scratch(cx: &Ctx<'_>, p: &mut Prep) {
    p.scratch(4 * cx.in_rank(0), "index walk")
        .scratch(4 * cx.in_elems(1), "resolved axes");
}

/// `PrepareMeanOrSumHelper`: input, output, axis; the int32 accumulators
/// (int8/int16), the index scratch; then `PrepareSimple`.
fn mean_or_sum_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0)).temp(cx.output(0)).temp(cx.input(1));
    if matches!(cx.in_type(0), Some(DType::I8 | DType::I16)) {
        p.scratch(4 * cx.out_elems(0), "int32 sums");
    }
    index_scratch(cx, p);
    simple(cx, p);
}

/// `PrepareMinMaxHelper`: `PrepareSimple` first, then input, output, axis.
fn min_max_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    simple(cx, p);
    p.temp(cx.input(0)).temp(cx.output(0)).temp(cx.input(1));
    index_scratch(cx, p);
}

/// `PrepareAllHelper`: input, output, axis, then `PrepareSimple`.
fn all_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0)).temp(cx.output(0)).temp(cx.input(1));
    simple(cx, p);
    index_scratch(cx, p);
}

/// `cumsum.cc` `CalculateOpData`: input, axis, output; an int8 op allocates
/// its OpData (nine int32) here, in Prepare.
fn cumsum_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp_inputs(cx, &[0, 1]).temp(cx.output(0));
    if cx.out_type(0) == Some(DType::I8) {
        p.persistent(36, "OpData (int8)");
    }
}

/// `reduce_common.cc` `PrepareSimple`: an int32 axis.
const AXIS_I32: Check = one_of(Input(1), &[I32], P);

/// `reduce_common.cc` `EvalMeanHelper`.
const MEAN: &[Check] = &[
    AXIS_I32,
    one_of_says(
        Input(0),
        &[F32, I8, I16],
        E,
        Some("Currently, only float32, int8 or int16 input type is supported."),
    ),
];

/// `reduce_common.cc` `EvalSumHelper`: input type = output type, then the type.
const SUM: &[Check] = &[
    AXIS_I32,
    same(&[Input(0), Output(0)], E),
    one_of_says(
        Input(0),
        &[F32, I8, I16],
        E,
        Some("Only float32, int8, and int16 types are supported."),
    ),
];

/// `reduce_common.cc` `EvalMinMaxHelper`.
const REDUCE_MAX: &[Check] = &[
    AXIS_I32,
    same(&[Input(0), Output(0)], E),
    one_of_says(
        Input(0),
        &[F32, I8],
        E,
        Some("Only float32 and int8 types are supported."),
    ),
];

/// `reduce_common.cc` `PrepareAllHelper` (bool input, then the axis) and
/// `EvalAllHelper` (input type = output type).
const REDUCE_ALL: &[Check] = &[
    one_of(Input(0), &[Bool], P),
    AXIS_I32,
    same(&[Input(0), Output(0)], E),
];

/// `cumsum.cc`: float32 or int8 input, int32 axis, output of the input's type.
const CUMSUM: &[Check] = &[
    one_of(Input(0), &[F32, I8], P),
    one_of(Input(1), &[I32], P),
    same(&[Input(0), Output(0)], P),
];

/// `arg_min_max.cc`: no Prepare; Eval wants an int32 axis, an int32 output,
/// then a float32 or int8 input.
const ARG_MAX: &[Check] = &[
    one_of(Input(1), &[I32], E),
    one_of(Output(0), &[I32], E),
    one_of(Input(0), &[F32, I8], E),
];
