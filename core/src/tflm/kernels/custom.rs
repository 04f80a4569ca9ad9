//! TFLM's own custom kernels that its op resolver registers by name:
//! `TFLite_Detection_PostProcess` (`detection_postprocess.cc`, the SSD
//! post-processing step of detection models) and `CIRCULAR_BUFFER`
//! (`circular_buffer.cc`, `circular_buffer_common.cc`).

use super::{Ctx, Kernel, Op, Prep, both, kernel};
use crate::read::flex;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        op: Op::Custom("TFLite_Detection_PostProcess"),
        // OpData: the options, eleven scratch indices and three quantization
        // parameter pairs — ints and floats only, the same on both ABIs.
        op_data: both(Some(112)),
        prepare: detection_prepare,
        ..kernel(0, "detection_postprocess.cc")
    },
    Kernel {
        op: Op::Custom("CIRCULAR_BUFFER"),
        // OpDataCircularBuffer: cycles_until_run, cycles_max.
        op_data: both(Some(8)),
        prepare: super::in0_out0,
        ..kernel(0, "circular_buffer.cc, circular_buffer_common.cc")
    },
];

/// `DetectionPostProcessPrepare`: the three inputs (box encodings, class
/// predictions, anchors), then eleven scratch buffers sized by the boxes `B`,
/// `max_detections` `D` and `num_classes` `C` — all requested whether or not
/// regular NMS runs.
fn detection_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp_inputs(cx, &[0, 1, 2]);
    let option =
        |key: &str| flex::map_value(cx.op.custom_options, key).map_or(0, |v| v.max(0) as u64);
    let (d, c) = (option("max_detections"), option("num_classes"));
    let b = cx.in_dim(0, 1);
    let scores = 4 * cx.in_dim(1, 1) * cx.in_dim(1, 2);
    p.scratch(b, "active candidates")
        .scratch(16 * b, "decoded boxes")
        .scratch(scores, "dequantized scores")
        .scratch(4 * b, "score buffer")
        .scratch(4 * b, "kept scores")
        .scratch(4 * d * b, "scores after NMS")
        .scratch(4 * d * b, "sorted values")
        .scratch(4 * b, "kept indices")
        .scratch(4 * d * b, "sorted indices")
        .scratch(4 * c.max(d) * b, "NMS buffer")
        .scratch(4 * b.min(d) * b, "selected boxes");
}
