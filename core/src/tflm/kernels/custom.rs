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
    // Read as int32, as TFLM's kernel reads them (`AsInt32`).
    let option = |key: &str| {
        flex::map_value(cx.op.custom_options, key)
            .map_or(0, |v| v.clamp(0, i64::from(i32::MAX)) as u64)
    };
    let (d, c) = (option("max_detections"), option("num_classes"));
    let b = cx.in_dim(0, 1);
    // Saturating: boxes and options come from the file, and their products
    // can pass 2^64 in a hostile one.
    let times = |a: u64, b: u64| a.saturating_mul(b).saturating_mul(4);
    p.scratch(b, "active candidates")
        .scratch(times(4, b), "decoded boxes")
        .scratch(
            times(cx.in_dim(1, 1), cx.in_dim(1, 2)),
            "dequantized scores",
        )
        .scratch(times(1, b), "score buffer")
        .scratch(times(1, b), "kept scores")
        .scratch(times(d, b), "scores after NMS")
        .scratch(times(d, b), "sorted values")
        .scratch(times(1, b), "kept indices")
        .scratch(times(d, b), "sorted indices")
        .scratch(times(c.max(d), b), "NMS buffer")
        .scratch(times(b.min(d), b), "selected boxes");
}
