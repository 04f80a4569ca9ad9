//! Pooling: AVERAGE_POOL_2D and MAX_POOL_2D (`pooling.cc`,
//! `pooling_common.cc`, `cmsis_nn/pooling.cc`) and L2_POOL_2D
//! (`l2_pool_2d.cc`).

use super::{
    CMSIS_SAME, CmsisNn, Ctx, ESP_SAME, Evidence, Kernel, Prep, both, in0_out0, kernel, st,
};
use crate::read::dtype::DType::{self, F32, I8, I16};
use crate::tflm::profile::CpuClass;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{P, one_of, rank, same};
use microarena_image::opcode as c;

/// `TfLitePoolParams`: padding, four ints, activation, computed padding.
const POOL_PARAMS: Option<crate::tflm::profile::Sz> = st(40, 4);

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        builtin: both(POOL_PARAMS),
        builtin_name: "TfLitePoolParams",
        op_data: both(Some(32)),
        prepare: in0_out0,
        checks: POOL,
        shape: Some(super::conv::window_rule),
        cmsis_nn: Some(CmsisNn {
            // OpDataPooling (32) + int buffer_idx.
            op_data: Some(Some(36)),
            prepare: Some(average_prepare_cmsis_nn),
            checks: None,
            evidence: Evidence::Measured,
        }),
        esp_nn: Some(ESP_SAME),
        ..kernel(c::AVERAGE_POOL_2D, "pooling.cc, pooling_common.cc")
    },
    Kernel {
        builtin: both(POOL_PARAMS),
        builtin_name: "TfLitePoolParams",
        op_data: both(Some(32)),
        prepare: in0_out0,
        checks: POOL,
        shape: Some(super::conv::window_rule),
        cmsis_nn: Some(CmsisNn {
            op_data: Some(Some(36)),
            ..CMSIS_SAME
        }),
        esp_nn: Some(ESP_SAME),
        ..kernel(c::MAX_POOL_2D, "pooling.cc, pooling_common.cc")
    },
    Kernel {
        builtin: both(POOL_PARAMS),
        builtin_name: "TfLitePoolParams",
        evidence: both(Evidence::Measured),
        prepare: l2_pool_prepare,
        checks: L2_POOL_2D,
        ..kernel(c::L2_POOL_2D, "l2_pool_2d.cc")
    },
];

/// `arm_avgpool_s8/s16_get_buffer_size`: one int32 accumulator per channel with DSP and
/// without MVE (the MVE kernel sums in vector registers).
pub fn avgpool_scratch(channels: u64, cpu: CpuClass) -> u64 {
    match cpu {
        CpuClass::Dsp => 4 * channels,
        CpuClass::NoDsp | CpuClass::Mve => 0,
    }
}

/// `cmsis_nn/pooling.cc` `AveragePrepare`: `PoolingPrepare`'s input and
/// output, then both again for the buffer size.
fn average_prepare_cmsis_nn(cx: &Ctx<'_>, cpu: CpuClass, p: &mut Prep) {
    in0_out0(cx, p);
    in0_out0(cx, p);
    if matches!(cx.in_type(0), Some(DType::I8 | DType::I16)) {
        let bytes = avgpool_scratch(cx.out_dim(0, 3), cpu);
        if bytes > 0 {
            p.scratch(bytes, "int32 sums (CMSIS-NN)");
        }
    }
}

/// `L2Prepare`: output before input, then the output's dims rewritten in a
/// persistent copy.
fn l2_pool_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.output(0)).temp(cx.input(0));
    p.output_dims(cx);
}

/// `pooling_common.cc` `PoolingPrepare` ("Type … not supported."), shared by
/// `cmsis_nn/pooling.cc`.
const POOL: &[Check] = &[one_of(Input(0), &[F32, I8, I16], P)];

/// `l2_pool_2d.cc`: 4-D, input type = output type, float32.
const L2_POOL_2D: &[Check] = &[
    rank(Input(0), 4, 4, None),
    rank(Output(0), 4, 4, None),
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32], P),
];
