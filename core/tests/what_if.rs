//! What-if input shapes (`whatif::with_input_shapes`): re-deriving the shapes of
//! a model converted at one length must give exactly the plan of the same
//! model converted at the other length.

use microarena_core::build::builder::ModelBuilder;
use microarena_core::plan::PlannerKind;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, LstmOptions};
use microarena_core::tflm::analysis::Analysis;
use microarena_core::tflm::lifetime::BufferKind;
use microarena_core::whatif::{parse_override, with_input_shapes};
use microarena_core::{Config, Model, analyze, lower, tflm::profile};

const X86: Config = Config {
    profile: &profile::X86_64,
    planner: PlannerKind::TflmGreedy,
};

/// How the classifier reads the LSTM's output sequence.
#[derive(Clone, Copy, Debug)]
enum Head {
    /// RESHAPE [-1, 16]: one FULLY_CONNECTED row per step.
    PerStep,
    /// RESHAPE [-1, time * 16] (Keras Flatten), so the FULLY_CONNECTED weights
    /// are [3, time * 16]: micro_speech_lstm's shape.
    Flatten,
}

/// int8 LSTM (8 features, 16 units, int16 cell) over `time` steps → RESHAPE
/// → FULLY_CONNECTED (3) → SOFTMAX, as a converter writes it at that length.
fn lstm_model(time: i32, head: Head) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "x", &[1, time, 8], DType::I8)
        .quant(0.05, -3)
        .id();
    let mut w = Vec::new();
    for k in 0..8 {
        let (rows, cols) = (16, if k < 4 { 8 } else { 16 });
        let vals: Vec<i8> = (0..rows * cols)
            .map(|i| ((i * 7 + k * 13) % 61 - 30) as i8)
            .collect();
        w.push(
            b.tensor(g, &format!("w{k}"), &[rows, cols], DType::I8)
                .quant(0.02, 0)
                .data_i8(&vals)
                .id(),
        );
    }
    let mut bias = Vec::new();
    for k in 0..4 {
        let vals: Vec<i32> = (0..16).map(|i| (i * 31 + k * 5) - 200).collect();
        bias.push(
            b.tensor(g, &format!("b{k}"), &[16], DType::I32)
                .quant(0.001, 0)
                .data_i32(&vals)
                .id(),
        );
    }
    let h = b
        .tensor(g, "h", &[1, 16], DType::I8)
        .quant(0.0078125, 0)
        .variable()
        .id();
    let c = b
        .tensor(g, "c", &[1, 16], DType::I16)
        .quant(1.0 / 2048.0, 0)
        .variable()
        .id();
    let y = b
        .tensor(g, "y", &[1, time, 16], DType::I8)
        .quant(0.0078125, 0)
        .id();
    let (rows, depth) = match head {
        Head::PerStep => (time, 16),
        Head::Flatten => (1, time * 16),
    };
    let shape = b
        .tensor(g, "shape", &[2], DType::I32)
        .data_i32(&[-1, depth])
        .id();
    let r = b
        .tensor(g, "r", &[rows, depth], DType::I8)
        .quant(0.0078125, 0)
        .id();
    let fw = b
        .tensor(g, "fw", &[3, depth], DType::I8)
        .quant(0.01, 0)
        .data_i8(&vec![5; 3 * depth as usize])
        .id();
    let fb = b
        .tensor(g, "fb", &[3], DType::I32)
        .data_i32(&[1, 2, 3])
        .id();
    let logits = b
        .tensor(g, "logits", &[rows, 3], DType::I8)
        .quant(0.1, 0)
        .id();
    let probs = b
        .tensor(g, "probs", &[rows, 3], DType::I8)
        .quant(1.0 / 256.0, -128)
        .id();
    let none = -1;
    let inputs = [
        x, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], none, none, none, bias[0], bias[1],
        bias[2], bias[3], none, none, h, c, none, none, none, none,
    ];
    b.op(g, BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM, &inputs, &[y])
        .lstm_options(LstmOptions {
            activation: Activation::Tanh,
            cell_clip: 0.0,
            proj_clip: 0.0,
            time_major: false,
            asymmetric_quantize_inputs: false,
        });
    b.op(g, BuiltinOp::RESHAPE, &[y, shape], &[r]);
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[r, fw, fb], &[logits])
        .fc_options(Activation::None, false);
    b.op(g, BuiltinOp::SOFTMAX, &[logits], &[probs])
        .softmax_options(1.0);
    b.inputs(g, &[x]).outputs(g, &[probs]);
    b.finish()
}

/// Everything a plan is: head, tail, total, minimum and every buffer
/// (kind, bytes, offset, first, last).
type Fingerprint = (u64, u64, u64, u64, Vec<(String, u64, i64, i32, i32)>);

fn fingerprint(a: &Analysis) -> Fingerprint {
    let bufs = a
        .buffers
        .iter()
        .map(|b| {
            let kind = match b.info.kind {
                BufferKind::Tensor { tensor, .. } => format!("tensor {tensor}"),
                BufferKind::Scratch { op_index, .. } => format!("scratch of {op_index}"),
            };
            (kind, b.info.bytes, b.offset, b.info.first, b.info.last)
        })
        .collect();
    (
        a.head_bytes,
        a.tail_bytes,
        a.total_bytes,
        a.minimum_bytes,
        bufs,
    )
}

#[test]
fn another_sequence_length_plans_like_a_model_converted_at_that_length() {
    // 98 steps is a multiple of 49, so a flattened [-1, 49 * 16] would still
    // accept it by growing the batch: the flatten rule must win.
    for head in [Head::PerStep, Head::Flatten] {
        for time in [25, 98] {
            let why = format!("{head:?}, 49 -> {time} steps");
            let long = lstm_model(49, head);
            let converted = lstm_model(time, head);
            let long = Model::parse(&long).expect("parse");
            let converted = Model::parse(&converted).expect("parse");
            let what_if = with_input_shapes(&long, &[("x".into(), vec![1, time, 8])])
                .unwrap_or_else(|e| panic!("{why}: {e}"));
            for (a, b) in what_if.main().tensors.iter().zip(&converted.main().tensors) {
                assert_eq!(
                    (a.name, &a.shape, a.bytes),
                    (b.name, &b.shape, b.bytes),
                    "{why}"
                );
            }
            let got = analyze(&what_if, &X86).expect("analyze");
            let want = analyze(&converted, &X86).expect("analyze");
            assert_eq!(fingerprint(&got), fingerprint(&want), "{why}");
            assert_ne!(
                got.head_bytes,
                analyze(&long, &X86).expect("analyze").head_bytes,
                "{why}"
            );
            // The runtime's arena follows too.
            assert_eq!(
                lower::runtime_arena(&what_if).expect("runtime"),
                lower::runtime_arena(&converted).expect("runtime"),
                "{why}"
            );
            // And by index, with the CLI's NAME=DIMS syntax.
            let (name, dims) = parse_override(&format!("0=1,{time},8")).expect("parse");
            let by_index = with_input_shapes(&long, &[(name, dims)]).expect("propagates");
            assert_eq!(
                fingerprint(&analyze(&by_index, &X86).expect("analyze")),
                fingerprint(&want),
                "{why}"
            );
        }
    }
}

#[test]
fn unpropagatable_shapes_name_the_op_and_tensor() {
    let long = lstm_model(49, Head::PerStep);
    let long = Model::parse(&long).expect("parse");
    let err =
        with_input_shapes(&long, &[("nope".into(), vec![1, 2, 8])]).expect_err("no such input");
    assert!(err.to_string().contains("not a graph input"), "{err}");
    // A 2-D input is no sequence: the LSTM rule names op 0 and the input tensor.
    let err = with_input_shapes(&long, &[("x".into(), vec![25, 8])]).expect_err("not 3-D");
    assert!(
        err.to_string()
            .starts_with("op 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): tensor 0 'x'"),
        "{err}"
    );
    // Features per step are fixed by the weights.
    let err = with_input_shapes(&long, &[("x".into(), vec![1, 49, 9])]).expect_err("features");
    assert!(
        err.to_string()
            .contains("has 9 features per step, the weights take 8"),
        "{err}"
    );
    assert!(parse_override("x=1,0,8").is_err());
    assert!(parse_override("x").is_err());
}

/// int8 CNN on a `side`×`side` image: CONV_2D 3×3 stride 2 SAME (8 channels)
/// → global AVERAGE_POOL_2D (window = the feature map, as Keras writes
/// GlobalAveragePooling2D) → RESHAPE [-1, 8] → FULLY_CONNECTED (2).
fn cnn_model(side: i32) -> Vec<u8> {
    use microarena_core::read::ops::Padding;
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "image", &[1, side, side, 1], DType::I8)
        .quant(0.5, 0)
        .id();
    let w = b
        .tensor(g, "w", &[8, 3, 3, 1], DType::I8)
        .quant(0.01, 0)
        .data_i8(&[3; 72])
        .id();
    let bias = b.tensor(g, "b", &[8], DType::I32).data_i32(&[0; 8]).id();
    let map = (side + 1) / 2;
    let f = b
        .tensor(g, "features", &[1, map, map, 8], DType::I8)
        .quant(0.1, 0)
        .id();
    let p = b
        .tensor(g, "pooled", &[1, 1, 1, 8], DType::I8)
        .quant(0.1, 0)
        .id();
    let shape = b
        .tensor(g, "shape", &[2], DType::I32)
        .data_i32(&[-1, 8])
        .id();
    let flat = b.tensor(g, "flat", &[1, 8], DType::I8).quant(0.1, 0).id();
    let fw = b
        .tensor(g, "fw", &[2, 8], DType::I8)
        .quant(0.01, 0)
        .data_i8(&[1; 16])
        .id();
    let out = b.tensor(g, "out", &[1, 2], DType::I8).quant(0.1, 0).id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[f])
        .conv_options(Padding::Same, 2, 2, Activation::Relu);
    b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[f], &[p])
        .pool_options(Padding::Valid, (1, 1), (map, map), Activation::None);
    b.op(g, BuiltinOp::RESHAPE, &[p, shape], &[flat]);
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[flat, fw, -1], &[out])
        .fc_options(Activation::None, false);
    b.inputs(g, &[x]).outputs(g, &[out]);
    b.finish()
}

#[test]
fn a_lower_resolution_keeps_a_global_pool_global() {
    let big = cnn_model(64);
    let small = cnn_model(32);
    let big = Model::parse(&big).expect("parse");
    let small = Model::parse(&small).expect("parse");
    let what_if =
        with_input_shapes(&big, &[("image".into(), vec![1, 32, 32, 1])]).expect("propagates");
    for (a, b) in what_if.main().tensors.iter().zip(&small.main().tensors) {
        assert_eq!((a.name, &a.shape, a.bytes), (b.name, &b.shape, b.bytes));
    }
    // The pool's window in the reshaped copy is the one written at 32×32.
    assert_eq!(
        what_if.main().operators[1].options,
        small.main().operators[1].options
    );
    assert_eq!(
        fingerprint(&analyze(&what_if, &X86).expect("analyze")),
        fingerprint(&analyze(&small, &X86).expect("analyze"))
    );
    assert_eq!(
        lower::runtime_arena(&what_if).expect("runtime"),
        lower::runtime_arena(&small).expect("runtime")
    );
}
