//! Matrix products: FULLY_CONNECTED (`fully_connected.cc`,
//! `fully_connected_common.cc`, `cmsis_nn/fully_connected.cc`) and
//! BATCH_MATMUL (`batch_matmul.cc`, `batch_matmul_common.cc`,
//! `cmsis_nn/batch_matmul.cc`).

use super::{
    CmsisNn, Ctx, ESP_SAME, Evidence, Kernel, Prep, Refusal, abi, abi3, both, hybrid, kernel, st,
};
use crate::read::dtype::DType::{self, F32, I4, I8, I16};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use super::shapes::{Reshaped, ShapeCx, ShapeFail};
use crate::read::ops::OpOptions;
use crate::tflm::profile::CpuClass;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{
    E, HYBRID, INPUT_TYPE, NOT_F32_I8_I16, P, one_of, one_of_says, pairs, rank, same,
};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        builtin: abi3(st(32, 8), st(5, 1), st(16, 4)),
        builtin_name: "TfLiteFullyConnectedParams",
        op_data: abi(Some(72), Some(48)),
        prepare: fc_prepare,
        checks: FULLY_CONNECTED,
        shape: Some(fc_shape),
        cmsis_nn: Some(CmsisNn {
            // OpDataFullyConnected (48) + 2 int + int32_t* + 3 int32_t.
            op_data: Some(Some(72)),
            prepare: Some(fc_prepare_cmsis_nn),
            checks: Some(FULLY_CONNECTED_CMSIS_NN),
            evidence: Evidence::Measured,
        }),
        esp_nn: Some(ESP_SAME),
        ..kernel(
            c::FULLY_CONNECTED,
            "fully_connected.cc, fully_connected_common.cc",
        )
    },
    Kernel {
        // TfLiteBatchMatMulParams: three bools.
        builtin: both(st(3, 1)),
        builtin_name: "TfLiteBatchMatMulParams",
        // OpDataBatchMatmul: three pointers and three bools.
        op_data: abi(Some(32), Some(16)),
        prepare: batch_matmul_prepare,
        checks: BATCH_MATMUL,
        cmsis_nn: Some(CmsisNn {
            // OpDataBatchMatmul (16) + cmsis_nn_dims (16) + int buffer_idx.
            op_data: Some(Some(36)),
            prepare: Some(batch_matmul_prepare_cmsis_nn),
            checks: Some(BATCH_MATMUL_CMSIS_NN),
            evidence: Evidence::Measured,
        }),
        ..kernel(c::BATCH_MATMUL, "batch_matmul.cc, batch_matmul_common.cc")
    },
];

/// FULLY_CONNECTED: rows of the filter's depth; weights that consumed the
/// whole last input dimension follow it when it changes (a flattened longer
/// or shorter sequence), as a re-conversion would write them (they stay in
/// flash either way); `keep_num_dims` keeps the input's leading dims.
fn fc_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let input_t = cx.input_t();
    let f = cx.shape(1).unwrap_or_default();
    let (units, mut depth) = match f.as_slice() {
        [u, d] => (*u, *d),
        _ => return Err(cx.fail(cx.op.input(1).unwrap_or(0), "filter is not 2-D")),
    };
    let mut follows = Vec::new();
    let last = in0.last().copied().unwrap_or(depth);
    if cx.original_shape(input_t).last() == Some(&depth)
        && last != depth
        && let Some(w) = cx.op.input(1)
    {
        depth = last;
        follows.push((w, vec![units, depth]));
    }
    let elems: i64 = in0.iter().map(|&d| i64::from(d)).product();
    if depth <= 0 || elems % i64::from(depth) != 0 {
        return Err(cx.fail(
            input_t,
            format!("{in0:?} is not a whole number of rows of {depth}"),
        ));
    }
    let keep = matches!(
        cx.op.options,
        OpOptions::FullyConnected {
            keep_num_dims: true,
            ..
        }
    );
    let output = if keep {
        let mut s = in0.clone();
        if let Some(l) = s.last_mut() {
            *l = units;
        }
        s
    } else {
        vec![(elems / i64::from(depth)) as i32, units]
    };
    Ok(Reshaped {
        output,
        follows,
        options: None,
    })
}

/// Scales of the filter when the kernel keeps per-channel arrays for it
/// (`CalculateOpDataFullyConnected`: int8/int16 inputs with a per-channel filter).
fn per_channel_scales(cx: &Ctx<'_>) -> Option<u64> {
    let scales = cx.in_scales(1);
    (scales > 1 && !cx.in_type(0).is_some_and(DType::is_float)).then_some(scales)
}

/// `FullyConnectedPrepare`: input, filter, bias and output, the int4 unpack
/// buffer, then `CalculateOpDataFullyConnected`'s per-channel arrays.
fn fc_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    if hybrid(cx, 1) {
        p.refuse(Refusal::Hybrid);
    }
    p.temp_inputs(cx, &[0, 1, 2]).temp(cx.output(0));
    if cx.in_type(1) == Some(DType::I4) {
        p.scratch(cx.in_elems(1), "unpacked int4 filter");
    }
    if let Some(n) = per_channel_scales(cx) {
        p.persistent(4 * n, "per-channel output multipliers")
            .persistent(4 * n, "per-channel output shifts");
    }
}

/// `cmsis_nn/fully_connected.cc` Prepare.
fn fc_prepare_cmsis_nn(cx: &Ctx<'_>, cpu: CpuClass, p: &mut Prep) {
    if hybrid(cx, 1) {
        p.refuse(Refusal::Hybrid);
    }
    super::cmsis_nn_int16_zero_points(cx, p);
    p.temp_inputs(cx, &[0, 1, 2]).temp(cx.output(0));
    let per_channel = per_channel_scales(cx);
    if let Some(n) = per_channel {
        p.persistent(4 * n, "per-channel output multipliers")
            .persistent(4 * n, "per-channel output shifts");
    }
    // int8 × int8 with a >2-D output and accum_depth % 4 == 0 runs as a 1×1 conv; a
    // per-tensor filter then needs fake per-channel multipliers and shifts. The conv's
    // own buffer and the plain FC's are 0 with GCC off MVE.
    let last = |t: Option<&crate::read::model::Tensor<'_>>| {
        t.and_then(|t| t.shape.last().copied())
            .map_or(0, |v| v.max(0) as u64)
    };
    let int8 = cx.in_type(0) == Some(DType::I8) && cx.in_type(1) == Some(DType::I8);
    let as_conv_1x1 = cx.out_rank(0) > 2 && last(cx.in_t(1)) % 4 == 0;
    if int8 && as_conv_1x1 && per_channel.is_none() {
        p.scratch(
            last(cx.out_t(0)) * 4 * 2,
            "per-channel multipliers and shifts (CMSIS-NN 1×1 path)",
        );
    }
    // `arm_fully_connected_s8_get_buffer_size` is one int32 per output channel on MVE (0
    // otherwise): the filter's column sums. With a constant filter (and bias) Prepare computes
    // them once into a persistent buffer (KERNELS_OPTIMIZED_FOR_SPEED); else Eval does, in a
    // scratch buffer.
    if int8 && !as_conv_1x1 && cpu == CpuClass::Mve {
        let bytes = 4 * last(cx.out_t(0));
        let constant = |i: usize| cx.in_t(i).is_some_and(|t| t.has_data);
        if constant(1) && (cx.in_t(2).is_none() || constant(2)) {
            p.persistent(bytes, "filter column sums (CMSIS-NN MVE)");
        } else {
            p.scratch(bytes, "filter column sums (CMSIS-NN MVE)");
        }
    }
}

/// `(adj_x, adj_y)` of a BATCH_MATMUL (false, false without options).
fn adjoints(cx: &Ctx<'_>) -> (bool, bool) {
    match cx.op.options {
        OpOptions::BatchMatMul { adj_x, adj_y } => (adj_x, adj_y),
        _ => (false, false),
    }
}

/// `AllocInitTransposeTensorFromTfLiteTensor`: an eval tensor, its dims and
/// its data, each a persistent buffer — a whole copy of the operand, even a
/// constant one (transposed once at the first Invoke, then reused).
fn transposed_copy(cx: &Ctx<'_>, p: &mut Prep, i: usize, purpose: &'static str) {
    let t = cx.in_t(i);
    let rank = t.map_or(0, |t| t.shape.len() as u64);
    let el = t.and_then(|t| t.dtype.size_bytes()).map_or(0, u64::from);
    p.persistent(
        u64::from(cx.profile.eval_tensor.bytes),
        "transposed operand's eval tensor",
    )
    .persistent(4 + 4 * rank, "transposed operand's dims")
    .persistent(super::prod(&[cx.in_elems(i), el]), purpose);
}

fn quantized(cx: &Ctx<'_>) -> bool {
    matches!(cx.in_type(0), Some(DType::I8 | DType::I16))
}

/// `BatchMatMulPrepare`: lhs, rhs and output; the quantization OpData; the
/// transposed copies and the output's dims.
fn batch_matmul_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    batch_matmul(cx, p, false);
}

/// `cmsis_nn/batch_matmul.cc` Prepare: the same, with the quantization
/// OpData last, then for int8 `arm_fully_connected_s8_get_buffer_size` of the
/// output shape: one int32 per output column on MVE, 0 otherwise.
fn batch_matmul_prepare_cmsis_nn(cx: &Ctx<'_>, cpu: CpuClass, p: &mut Prep) {
    batch_matmul(cx, p, true);
    if cpu == CpuClass::Mve && cx.in_type(0) == Some(DType::I8) && cx.in_type(1) != Some(DType::F32)
    {
        // `FillVariableShape`: ranks 2 to 4 keep the last dimension as `c`, others are 1.
        let rank = cx.out_rank(0) as usize;
        let cols = if (2..=4).contains(&rank) {
            cx.out_dim(0, rank - 1)
        } else {
            1
        };
        p.scratch(4 * cols, "rhs column sums (CMSIS-NN MVE)");
    }
}

/// Lhs, rhs and output; the transposed copies (lhs with `adj_x`, rhs
/// without `adj_y`), the output's dims, and for int8/int16 the quantization
/// OpData — first on the reference kernel, last on CMSIS-NN's.
fn batch_matmul(cx: &Ctx<'_>, p: &mut Prep, quantization_last: bool) {
    p.temp_inputs(cx, &[0, 1]).temp(cx.output(0));
    if quantized(cx) && !quantization_last {
        p.persistent(28, "quantization OpData");
    }
    let (adj_x, adj_y) = adjoints(cx);
    if adj_x {
        transposed_copy(cx, p, 0, "transposed lhs");
    }
    if !adj_y {
        transposed_copy(cx, p, 1, "transposed rhs");
    }
    p.output_dims(cx);
    if quantized(cx) && quantization_last {
        p.persistent(28, "quantization OpData");
    }
}

/// `fully_connected.cc` `FullyConnectedPrepare`: input type = output type; a
/// float32, int8 or int16 input needs its filter (float32; int8 or int4; int8),
/// other inputs pass; `fully_connected_common.cc` then refuses a per-channel
/// filter that is int4 or whose input is neither int8 nor int16 (float32
/// returns before). Eval runs float32, int8 and int16 inputs only.
const FULLY_CONNECTED: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    Check::If {
        operand: Input(0),
        is: &[F32, I8, I16],
        then: &pairs(
            &[Input(0), Input(1)],
            &[&[F32, F32], &[I8, I8], &[I8, I4], &[I16, I8]],
            P,
            None,
        ),
    },
    Check::If {
        operand: Input(1),
        is: &[I4],
        then: &Check::PerTensor {
            operand: Input(1),
            required: false,
            stage: P,
        },
    },
    Check::If {
        operand: Input(0),
        is: NOT_F32_I8_I16,
        then: &Check::PerTensor {
            operand: Input(1),
            required: false,
            stage: P,
        },
    },
    one_of(Input(0), &[F32, I8, I16], E),
];

/// `cmsis_nn/fully_connected.cc` `Prepare`: input = output type, the input
/// type alone ("Input data type not supported"), the pair ("Hybrid …"), then
/// the common per-channel rule, then per-channel only with an int8 input.
const FULLY_CONNECTED_CMSIS_NN: &[Check] = &[
    same(&[Input(0), Output(0)], P),
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    pairs(
        &[Input(0), Input(1)],
        &[&[F32, F32], &[I16, I8], &[I8, I4], &[I8, I8]],
        P,
        HYBRID,
    ),
    FULLY_CONNECTED[2],
    Check::If {
        operand: Input(0),
        is: &[I16],
        then: &Check::PerTensor {
            operand: Input(1),
            required: false,
            stage: P,
        },
    },
];

/// `batch_matmul.cc` `BatchMatMulPrepare`: each input float32, int8 or int16,
/// both of one type, the output too; ranks 2 to 5.
const BATCH_MATMUL: &[Check] = &[
    one_of(Input(0), &[F32, I8, I16], P),
    one_of(Input(1), &[F32, I8, I16], P),
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
    rank(Input(0), 2, 5, None),
    rank(Input(1), 2, 5, None),
];

/// `cmsis_nn/batch_matmul.cc` `Prepare`: the type equalities first, then the
/// input type alone, and ranks 2 to 4 only.
const BATCH_MATMUL_CMSIS_NN: &[Check] = &[
    same(&[Input(0), Input(1)], P),
    same(&[Input(0), Output(0)], P),
    one_of_says(Input(0), &[F32, I16, I8], P, INPUT_TYPE),
    rank(Input(0), 2, 4, None),
    rank(Input(1), 2, 4, None),
];
