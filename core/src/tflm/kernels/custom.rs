//! TFLM's own custom kernels that its op resolver registers by name:
//! `TFLite_Detection_PostProcess` (`detection_postprocess.cc`, the SSD
//! post-processing step of detection models) and `CIRCULAR_BUFFER`
//! (`circular_buffer.cc`, `circular_buffer_common.cc`), and the one a
//! co-processor build adds: `ethos-u` (`ethos_u/ethosu.cc`, `CO_PROCESSOR=ethos_u`).

use super::{Ctx, Evidence, Kernel, Op, Prep, Refusal, abi, both, kernel};
use crate::read::flex;
use crate::tflm::profile::CoProcessor;

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
    Kernel {
        op: Op::Custom("ethos-u"),
        // OpData: three int (command stream size, two scratch indices). TFLM refuses to
        // build the Ethos-U kernel for x86-64, so the LP64 figure is the C layout, unused.
        op_data: both(Some(12)),
        evidence: abi(
            Evidence::Derived("TFLM does not build the Ethos-U kernel for x86-64"),
            Evidence::Measured,
        ),
        prepare: ethos_u_prepare,
        co_processor: Some(CoProcessor::EthosU),
        ..kernel(0, "ethos_u/ethosu.cc")
    },
];

/// `ethos_u/ethosu.cc` Prepare: the driver's table of base addresses (one `uint64_t` per
/// input and output: command stream, weights, scratch, fast scratch, then the data tensors)
/// and of their sizes (`size_t`), as two scratch buffers; then input 0 (the command stream)
/// held as a temp for its size. Vela's scratch tensors are ordinary inputs, planned in the
/// head (by Vela's offline plan).
fn ethos_u_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    let n = (cx.op.inputs.len() + cx.op.outputs.len()) as u64;
    if cx.op.inputs.is_empty() {
        p.refuse(Refusal::Prepare(
            "the ethos-u op has no inputs (no command stream)",
        ));
    }
    if cx.op.custom_options.is_empty() {
        p.refuse(Refusal::Prepare(
            "the ethos-u op has no custom options (Vela writes the co-processor type there)",
        ));
    }
    p.scratch(8 * n, "NPU base addresses (Ethos-U)")
        .scratch(cx.pointer_bytes() * n, "NPU base address sizes (Ethos-U)")
        .temp_inputs(cx, &[0]);
}

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
