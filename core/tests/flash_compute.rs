//! Flash and compute figures (`report::flash`, `report::compute`) on
//! builder models, every expectation worked by hand in the comments, and on
//! every shared model the identities that must hold (file = constant data +
//! overhead; per-op constant bytes + unattributed = constant data).

mod support;

use microarena_core::build::builder::ModelBuilder;
use microarena_core::plan::PlannerKind;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_core::report::Report;
use microarena_core::report::compute::{OpCompute, op_compute};
use microarena_core::report::flash::flash;
use microarena_core::tflm::profile;
use microarena_core::{Config, Model, analyze};

fn macs(bytes: &[u8], op: usize) -> u64 {
    let m = Model::parse(bytes).expect("builder output parses");
    op_compute(&m, 0, op).macs
}

#[test]
fn conv_depthwise_fc_pool_macs_by_hand() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let f32 = DType::F32;
    let x = b.tensor(g, "x", &[1, 8, 8, 2], f32).id();
    let w = b.tensor(g, "w", &[4, 3, 3, 2], f32).data(&[0; 288]).id();
    let c = b.tensor(g, "c", &[1, 8, 8, 4], f32).id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, -1], &[c]).conv_options(
        Padding::Same,
        1,
        1,
        Activation::None,
    );
    let dw = b.tensor(g, "dw", &[1, 3, 3, 4], f32).data(&[0; 144]).id();
    let d = b.tensor(g, "d", &[1, 4, 4, 4], f32).id();
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[c, dw, -1], &[d])
        .depthwise_options(Padding::Same, 2, 2, 1, Activation::None);
    let p = b.tensor(g, "p", &[1, 2, 2, 4], f32).id();
    b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[d], &[p])
        .pool_options(Padding::Valid, (2, 2), (2, 2), Activation::None);
    let fw = b.tensor(g, "fw", &[10, 16], f32).data(&[0; 640]).id();
    let y = b.tensor(g, "y", &[1, 10], f32).id();
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[p, fw, -1], &[y])
        .fc_options(Activation::None, false);
    let s = b.tensor(g, "s", &[1, 10], f32).id();
    b.op(g, BuiltinOp::SOFTMAX, &[y], &[s]).softmax_options(1.0);
    b.inputs(g, &[x]).outputs(g, &[s]);
    let bytes = b.finish();

    // CONV_2D: 8·8 positions × 4 filters × 3·3·2 taps = 4,608.
    assert_eq!(macs(&bytes, 0), 4_608);
    // DEPTHWISE: 4·4 positions × 4 channels × 3·3 taps = 576.
    assert_eq!(macs(&bytes, 1), 576);
    // AVERAGE_POOL 2×2: 2·2·4 outputs × 4 window elements = 64.
    assert_eq!(macs(&bytes, 2), 64);
    // FULLY_CONNECTED: 10 units × 16 inputs = 160.
    assert_eq!(macs(&bytes, 3), 160);
    // SOFTMAX: no MACs, 10 elements written.
    let m = Model::parse(&bytes).unwrap();
    assert_eq!(
        op_compute(&m, 0, 4),
        OpCompute {
            macs: 0,
            elements: 10
        }
    );

    // The report carries the same per op and sums them.
    let a = analyze(
        &m,
        &Config {
            profile: &profile::X86_64,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analysis");
    let r = Report::new(&m, &a, "m.tflite");
    let per_op: Vec<u64> = r.operators.iter().map(|o| o.macs).collect();
    assert_eq!(per_op, [4_608, 576, 64, 160, 0]);
    assert_eq!(r.compute.macs, 4_608 + 576 + 64 + 160);
    // Elements written: 256 + 64 + 16 + 10 + 10.
    assert_eq!(r.compute.elements, 356);
    // Weights: 288 + 144 + 640 bytes, one op each.
    let consts: Vec<u64> = r.operators.iter().map(|o| o.constant_bytes).collect();
    assert_eq!(consts, [288, 144, 0, 640, 0]);
    assert_eq!(r.flash.constant_bytes, 1_072);
}

#[test]
fn transpose_conv_batch_matmul_svdf_lstm_macs_by_hand() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let f32 = DType::F32;
    // TRANSPOSE_CONV: input [1,2,2,3], filter [5,3,3,3] (C_out 5, 3×3, C_in 3).
    let shape = b
        .tensor(g, "shape", &[4], DType::I32)
        .data_i32(&[1, 4, 4, 5])
        .id();
    let tw = b.tensor(g, "tw", &[5, 3, 3, 3], f32).id();
    let tx = b.tensor(g, "tx", &[1, 2, 2, 3], f32).id();
    let ty = b.tensor(g, "ty", &[1, 4, 4, 5], f32).id();
    b.op(g, BuiltinOp::TRANSPOSE_CONV, &[shape, tw, tx], &[ty]);
    // BATCH_MATMUL: [2,3,4] × [2,4,5] → [2,3,5].
    let l = b.tensor(g, "l", &[2, 3, 4], f32).id();
    let rr = b.tensor(g, "r", &[2, 4, 5], f32).id();
    let o = b.tensor(g, "o", &[2, 3, 5], f32).id();
    b.op(g, BuiltinOp(126), &[l, rr], &[o]);
    // SVDF: input [2,6], feature weights [8,6], time weights [8,10].
    let sx = b.tensor(g, "sx", &[2, 6], f32).id();
    let wf = b.tensor(g, "wf", &[8, 6], f32).id();
    let wt = b.tensor(g, "wt", &[8, 10], f32).id();
    let st = b.tensor(g, "state", &[2, 80], f32).variable().id();
    let sy = b.tensor(g, "sy", &[2, 4], f32).id();
    b.op(g, BuiltinOp::SVDF, &[sx, wf, wt, -1, st], &[sy])
        .svdf_options(2, Activation::None);
    // LSTM, CIFG (no input gate): input [5,1,3] (5 steps), 4 cells, 4 outputs.
    let lx = b.tensor(g, "lx", &[5, 1, 3], f32).id();
    let iw: Vec<i32> = (0..3)
        .map(|k| b.tensor(g, &format!("iw{k}"), &[4, 3], f32).id())
        .collect();
    let rw: Vec<i32> = (0..3)
        .map(|k| b.tensor(g, &format!("rw{k}"), &[4, 4], f32).id())
        .collect();
    let ly = b.tensor(g, "ly", &[5, 1, 4], f32).id();
    let mut ins = vec![lx, -1, iw[0], iw[1], iw[2], -1, rw[0], rw[1], rw[2]];
    ins.extend([-1; 15]);
    b.op(g, BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM, &ins, &[ly]);
    b.inputs(g, &[tx, l, rr, sx, lx, tw, wf, wt])
        .outputs(g, &[ty, o, sy, ly]);
    let bytes = b.finish();

    // TRANSPOSE_CONV: 2·2·3 input values × 3·3 taps × 5 output channels = 540.
    assert_eq!(macs(&bytes, 0), 540);
    // BATCH_MATMUL: 2 batches × 3·5 outputs × depth 4 = 120.
    assert_eq!(macs(&bytes, 1), 120);
    // SVDF: 2 batches × (8·6 feature + 8·10 time weights) = 256.
    assert_eq!(macs(&bytes, 2), 256);
    // LSTM (CIFG): 5 steps × (3 gates × 4·3 input + 3 gates × 4·4 recurrent) = 5 × 84 = 420.
    assert_eq!(macs(&bytes, 3), 420);
}

#[test]
fn shared_buffers_count_once_at_their_first_reader() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let i8t = DType::I8;
    let x = b.tensor(g, "x", &[1, 16], i8t).quant(0.5, 0).id();
    // One 16-byte buffer behind two tensors, read by ops 0 and 1.
    let shared = b.buffer(&[7; 16]);
    let c0 = b
        .tensor(g, "c0", &[1, 16], i8t)
        .quant(0.5, 0)
        .buffer(shared)
        .id();
    let c1 = b
        .tensor(g, "c1", &[1, 16], i8t)
        .quant(0.5, 0)
        .buffer(shared)
        .id();
    // A 32-byte constant op 1 reads too, and a 4-byte one nobody reads.
    let k = b
        .tensor(g, "k", &[1, 32], i8t)
        .quant(0.5, 0)
        .data(&[1; 32])
        .id();
    b.tensor(g, "orphan", &[4], i8t).data(&[2; 4]);
    let a = b.tensor(g, "a", &[1, 16], i8t).quant(0.5, 0).id();
    let y = b.tensor(g, "y", &[1, 16], i8t).quant(0.5, 0).id();
    b.op(g, BuiltinOp::ADD, &[x, c0], &[a]);
    b.op(g, BuiltinOp::ADD, &[a, c1, k], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    // Metadata is overhead, never constant data.
    b.metadata("notes", &[9; 100]);
    let bytes = b.finish();
    let m = Model::parse(&bytes).unwrap();
    let f = flash(&m);

    // Distinct buffers: 16 (shared) + 32 + 4 = 52 bytes in three buffers, four tensors.
    assert_eq!(f.info.constant_bytes, 52);
    assert_eq!(f.info.constant_buffers, 3);
    assert_eq!(f.info.constant_tensors, 4);
    assert_eq!(f.info.file_bytes, bytes.len() as u64);
    assert_eq!(f.info.overhead_bytes, bytes.len() as u64 - 52);
    // Op 0 gets the shared 16; op 1 only the 32 (its c1 buffer was counted at op 0).
    assert_eq!(f.op_bytes(0, 0), 16);
    assert_eq!(f.op_bytes(0, 1), 32);
    assert_eq!(f.info.unattributed_bytes, 4);
    // Largest first, named by their first tensor.
    let largest: Vec<(&str, u64, u64)> = f
        .info
        .largest
        .iter()
        .map(|c| (c.name.as_str(), c.bytes, c.tensors))
        .collect();
    assert_eq!(largest, [("k", 32, 1), ("c0", 16, 2), ("orphan", 4, 1)]);
    assert_eq!(f.info.largest[0].opcode.as_deref(), Some("ADD"));
    assert_eq!(f.info.largest[2].op, None);
    assert!(f.info.ram_copies.is_empty());
}

#[test]
fn a_constant_batch_matmul_rhs_is_flagged_as_a_ram_copy() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let l = b.tensor(g, "l", &[1, 2, 3], DType::F32).id();
    let r = b.tensor(g, "r", &[1, 3, 4], DType::F32).data(&[0; 48]).id();
    let o = b.tensor(g, "o", &[1, 2, 4], DType::F32).id();
    b.op(g, BuiltinOp(126), &[l, r], &[o]);
    b.inputs(g, &[l]).outputs(g, &[o]);
    let bytes = b.finish();
    let f = flash(&Model::parse(&bytes).unwrap());
    assert_eq!(f.info.ram_copies.len(), 1);
    // 1·3·4 float32 = 48 bytes.
    assert_eq!(f.info.ram_copies[0].bytes, 48);
    assert_eq!(f.info.ram_copies[0].opcode, "BATCH_MATMUL");
}

#[test]
fn every_shared_model_splits_its_file_exactly() {
    let Some(root) = support::corpus("every_shared_model_splits_its_file_exactly") else {
        return;
    };
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("models")).expect("models/") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("tflite") {
            continue;
        }
        let name = path.display().to_string();
        let bytes = support::read(&path);
        let on_disk = std::fs::metadata(&path).expect("metadata").len();
        let m = Model::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let f = flash(&m);
        assert_eq!(f.info.file_bytes, on_disk, "{name}: file size");
        assert_eq!(
            f.info.constant_bytes + f.info.overhead_bytes,
            on_disk,
            "{name}: constant + overhead"
        );
        assert!(f.info.constant_bytes <= on_disk, "{name}");
        let per_op: u64 = f.per_op.iter().flatten().sum();
        assert_eq!(
            per_op + f.info.unattributed_bytes,
            f.info.constant_bytes,
            "{name}: per-op constant bytes"
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} models checked");
}

#[test]
fn mobilenet_v1_025_at_224_equals_the_published_41_million_macs() {
    // tensorflow/models research/slim/nets/mobilenet_v1.md lists
    // MobileNet_v1_0.25_224 at 41 million MACs (RGB input, 1001 classes).
    // The bundled example has person_detect's topology: one input channel and
    // two classes. At 224×224 its first conv (stride 2) computes
    // 112·112·8 outputs × 3·3·1 taps = 903,168 MACs; with 3 channels it would
    // be 3 × that, i.e. 1,806,336 more. Its logits conv computes 256·2 = 512
    // MACs, the published model's 256·1001 = 256,256: 255,744 more.
    let bytes = microarena_core::build::example::mobilenet_v1_025_96_int8();
    let m = Model::parse(&bytes).unwrap();
    let name = m.main().tensors[m.main().inputs[0] as usize]
        .name
        .to_string();
    let over = microarena_core::whatif::parse_override(&format!("{name}=1,224,224,1")).unwrap();
    let m224 = microarena_core::whatif::with_input_shapes(&m, &[over]).unwrap();
    assert_eq!(op_compute(&m224, 0, 0).macs, 903_168);
    let total: u64 = (0..m224.main().operators.len())
        .map(|i| op_compute(&m224, 0, i).macs)
        .sum();
    let published_shape = total + 1_806_336 + 255_744;
    // 41.04 million: 41 to the table's precision.
    assert_eq!((published_shape + 500_000) / 1_000_000, 41);
}
