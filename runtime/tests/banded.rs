//! Patch-based execution in row bands: a builder chain covering each
//! windowed kernel's branches (SAME and VALID padding, strides 1 and 2, a
//! stride larger than the filter, dilation, depth multiplier, both pools,
//! int8 per-channel and float32; a 16x8 chain too) runs banded with outputs
//! identical to the plain run, in the smaller arena core predicts, measured.

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::example::pseudo_random_bytes;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_runtime::{Error, Interpreter, freeze_opdata};

#[derive(Clone, Copy)]
enum Layer {
    /// (filter, stride, dilation, padding, output channels)
    Conv(i32, i32, i32, Padding, i32),
    /// (filter, stride, dilation, padding, multiplier)
    Depthwise(i32, i32, i32, Padding, i32),
    /// (filter, stride, padding)
    MaxPool(i32, i32, Padding),
    AvgPool(i32, i32, Padding),
    /// ADD of the tensor with itself: element-wise, so a stage streams it
    /// (both operands pulled from one ring).
    Add,
}

fn out_size(padding: Padding, image: i32, filter: i32, stride: i32, dilation: i32) -> i32 {
    let eff = (filter - 1) * dilation + 1;
    match padding {
        Padding::Same => (image + stride - 1) / stride,
        Padding::Valid => (image - eff + stride) / stride,
    }
}

/// A chain of `layers` on a `h`×`h`×`c` input, int8 (per-channel weights)
/// or float32; the last layer's output is the graph's.
fn chain(layers: &[Layer], h: i32, c: i32, int8: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let dt = if int8 { DType::I8 } else { DType::F32 };
    let mut seed = 1u32;
    let mut next = || {
        seed += 1;
        seed
    };
    let act = |b: &mut ModelBuilder, name: &str, shape: &[i32], k: usize| {
        let t = b.tensor(g, name, shape, dt);
        if int8 {
            t.quant(0.04 + 0.01 * k as f32, k as i64 % 5 - 2).id()
        } else {
            t.id()
        }
    };
    let weights = |b: &mut ModelBuilder, name: &str, shape: &[i32], ch: i32, axis: i32, s: u32| {
        let n = shape.iter().product::<i32>() as usize;
        let t = b.tensor(g, name, shape, dt);
        if int8 {
            let scales: Vec<f32> = (0..ch).map(|k| 0.01 + 0.001 * k as f32).collect();
            t.data(&pseudo_random_bytes(s, n))
                .quant_per_channel(&scales, &vec![0; ch as usize], axis)
                .id()
        } else {
            let v: Vec<f32> = pseudo_random_bytes(s, n)
                .iter()
                .map(|&x| f32::from(x as i8) / 64.0)
                .collect();
            t.data_f32(&v).id()
        }
    };
    let bias = |b: &mut ModelBuilder, name: &str, ch: i32, s: u32| {
        let raw = pseudo_random_bytes(s, ch as usize);
        if int8 {
            let v: Vec<i32> = raw.iter().map(|&x| i32::from(x as i8) * 8).collect();
            b.tensor(g, name, &[ch], DType::I32)
                .data_i32(&v)
                .quant_per_channel(&vec![0.0004; ch as usize], &vec![0; ch as usize], 0)
                .id()
        } else {
            let v: Vec<f32> = raw.iter().map(|&x| f32::from(x as i8) / 32.0).collect();
            b.tensor(g, name, &[ch], DType::F32).data_f32(&v).id()
        }
    };
    let input = act(&mut b, "input", &[1, h, h, c], 0);
    let (mut x, mut hh, mut cc) = (input, h, c);
    for (k, layer) in layers.iter().enumerate() {
        let name = format!("t{k}");
        match *layer {
            Layer::Conv(f, s, d, p, co) => {
                let oh = out_size(p, hh, f, s, d);
                let w = weights(&mut b, &format!("w{k}"), &[co, f, f, cc], co, 0, next());
                let bi = bias(&mut b, &format!("b{k}"), co, next());
                let y = act(&mut b, &name, &[1, oh, oh, co], k + 1);
                b.op(g, BuiltinOp::CONV_2D, &[x, w, bi], &[y])
                    .conv_options(p, s, s, Activation::Relu)
                    .dilation(d, d);
                (x, hh, cc) = (y, oh, co);
            }
            Layer::Depthwise(f, s, d, p, m) => {
                let oh = out_size(p, hh, f, s, d);
                let co = cc * m;
                let w = weights(&mut b, &format!("w{k}"), &[1, f, f, co], co, 3, next());
                let bi = bias(&mut b, &format!("b{k}"), co, next());
                let y = act(&mut b, &name, &[1, oh, oh, co], k + 1);
                b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x, w, bi], &[y])
                    .depthwise_options(p, s, s, m, Activation::Relu6)
                    .dilation(d, d);
                (x, hh, cc) = (y, oh, co);
            }
            Layer::Add => {
                let y = act(&mut b, &name, &[1, hh, hh, cc], k + 1);
                b.op(g, BuiltinOp::ADD, &[x, x], &[y])
                    .add_options(Activation::None);
                x = y;
            }
            Layer::MaxPool(f, s, p) | Layer::AvgPool(f, s, p) => {
                let oh = out_size(p, hh, f, s, 1);
                let op = if matches!(layer, Layer::MaxPool(..)) {
                    BuiltinOp::MAX_POOL_2D
                } else {
                    BuiltinOp::AVERAGE_POOL_2D
                };
                // Pools keep the input's quantization, as TFLM requires.
                let t = b.tensor(g, &name, &[1, oh, oh, cc], dt);
                let y = if int8 {
                    t.quant(0.04 + 0.01 * k as f32, k as i64 % 5 - 2).id()
                } else {
                    t.id()
                };
                b.op(g, op, &[x], &[y])
                    .pool_options(p, (s, s), (f, f), Activation::None);
                (x, hh) = (y, oh);
            }
        }
    }
    b.inputs(g, &[input]).outputs(g, &[x]);
    b.finish()
}

/// Runs `model` with `options` on a deterministic input in exactly the
/// predicted arena: (output, high-water, predicted total, stage?).
fn run(model: &Model<'_>, options: LowerOptions) -> (Vec<u8>, usize, usize, bool) {
    let mut image = lower_with(model, &options).expect("lower");
    freeze_opdata(&mut image).expect("freeze");
    let need = runtime_arena_with(model, &options).expect("arena");
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let input = it.input_mut(0).expect("input");
    let n = input.len();
    input.copy_from_slice(&pseudo_random_bytes(99, n));
    it.invoke().expect("invoke");
    (
        it.output(0).expect("output").to_vec(),
        it.memory_usage().high_water,
        need.total_bytes as usize,
        !need.stages.is_empty(),
    )
}

const PLAIN: LowerOptions = LowerOptions {
    opdata: OpDataIn::Tail,
    execution: Execution::Plain,
    in_place: false,
};
const BANDED: LowerOptions = LowerOptions {
    opdata: OpDataIn::Tail,
    execution: Execution::Banded,
    in_place: false,
};

fn every_branch() -> Vec<Layer> {
    use Layer::*;
    use Padding::{Same, Valid};
    vec![
        Conv(3, 1, 1, Same, 12),
        Depthwise(3, 1, 2, Same, 1),
        MaxPool(2, 2, Valid),
        Depthwise(3, 1, 1, Valid, 2),
        AvgPool(3, 2, Same),
        Conv(1, 2, 1, Valid, 8),
        Conv(3, 2, 1, Same, 4),
    ]
}

/// A 16x8 chain (int16 activations, int8 per-channel filters, int64 and
/// int32 biases): CONV_2D 3×3, DEPTHWISE_CONV_2D 3×3 with dilation 2 and a
/// multiplier of 2, CONV_2D 3×3 stride 2, on a 40×40×2 input.
fn chain_16x8() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let act = |b: &mut ModelBuilder, name: &str, shape: &[i32], scale: f32| {
        b.tensor(g, name, shape, DType::I16).quant(scale, 0).id()
    };
    let weights = |b: &mut ModelBuilder, name: &str, shape: &[i32], axis: usize, s: u32| {
        let ch = shape[axis];
        let n = shape.iter().product::<i32>() as usize;
        let scales: Vec<f32> = (0..ch).map(|k| 0.01 + 0.001 * k as f32).collect();
        b.tensor(g, name, shape, DType::I8)
            .data(&pseudo_random_bytes(s, n))
            .quant_per_channel(&scales, &vec![0; ch as usize], axis as i32)
            .id()
    };
    let bias = |b: &mut ModelBuilder, name: &str, ch: i32, wide: bool, s: u32| {
        let raw = pseudo_random_bytes(s, ch as usize);
        let v = raw.iter().map(|&x| i64::from(x as i8) * 64);
        let (dt, bytes): (DType, Vec<u8>) = if wide {
            (DType::I64, v.flat_map(|x| x.to_le_bytes()).collect())
        } else {
            (
                DType::I32,
                v.flat_map(|x| (x as i32).to_le_bytes()).collect(),
            )
        };
        b.tensor(g, name, &[ch], dt)
            .data(&bytes)
            .quant_per_channel(&vec![0.000004; ch as usize], &vec![0; ch as usize], 0)
            .id()
    };
    let x = act(&mut b, "input", &[1, 40, 40, 2], 0.0004);
    let w0 = weights(&mut b, "w0", &[12, 3, 3, 2], 0, 1);
    let b0 = bias(&mut b, "b0", 12, true, 2);
    let y0 = act(&mut b, "t0", &[1, 40, 40, 12], 0.002);
    b.op(g, BuiltinOp::CONV_2D, &[x, w0, b0], &[y0])
        .conv_options(Padding::Same, 1, 1, Activation::Relu);
    let w1 = weights(&mut b, "w1", &[1, 3, 3, 24], 3, 3);
    let b1 = bias(&mut b, "b1", 24, true, 4);
    let y1 = act(&mut b, "t1", &[1, 40, 40, 24], 0.003);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[y0, w1, b1], &[y1])
        .depthwise_options(Padding::Same, 1, 1, 2, Activation::None)
        .dilation(2, 2);
    let w2 = weights(&mut b, "w2", &[4, 3, 3, 24], 0, 5);
    let b2 = bias(&mut b, "b2", 4, false, 6);
    let y2 = act(&mut b, "t2", &[1, 20, 20, 4], 0.02);
    b.op(g, BuiltinOp::CONV_2D, &[y1, w2, b2], &[y2])
        .conv_options(Padding::Same, 2, 2, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y2]);
    b.finish()
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn banded_16x8_chain_equals_plain_execution() {
    let bytes = chain_16x8();
    let model = Model::parse(&bytes).expect("parse");
    let (want, _, plain_total, _) = run(&model, PLAIN);
    let (got, high, total, banded) = run(&model, BANDED);
    assert!(banded, "a stage lowers this chain's head");
    assert_eq!(got, want, "banded output differs");
    assert_eq!(high, total, "measured vs predicted");
    assert!(total < plain_total, "{total} !< {plain_total}");
    // Not a degenerate output: many distinct values.
    let mut values: Vec<&[u8]> = want.chunks_exact(2).collect();
    values.sort_unstable();
    values.dedup();
    assert!(values.len() > 100, "{} distinct outputs", values.len());
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn banded_chains_equal_plain_execution_in_a_smaller_arena() {
    for int8 in [true, false] {
        let bytes = chain(&every_branch(), 40, 2, int8);
        let model = Model::parse(&bytes).expect("parse");
        let (want, plain_high, plain_total, _) = run(&model, PLAIN);
        let (got, high, total, banded) = run(&model, BANDED);
        assert!(banded, "int8={int8}: a stage lowers this chain's head");
        assert_eq!(got, want, "int8={int8}: banded output differs");
        assert_eq!(high, total, "int8={int8}: measured vs predicted");
        assert_eq!(plain_high, plain_total);
        // The 40×40×12 intermediates never exist whole.
        assert!(total < plain_total, "int8={int8}: {total} !< {plain_total}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn an_add_between_two_peaks_runs_inside_a_stage() {
    use Layer::*;
    use Padding::{Same, Valid};
    let layers = [
        Conv(3, 1, 1, Same, 12),
        Depthwise(3, 1, 1, Same, 1),
        MaxPool(2, 2, Valid),
        Add,
        Conv(3, 1, 1, Same, 32),
        Depthwise(3, 1, 1, Same, 1),
        Conv(1, 2, 1, Valid, 8),
    ];
    for int8 in [true, false] {
        let bytes = chain(&layers, 48, 1, int8);
        let model = Model::parse(&bytes).expect("parse");
        let need = runtime_arena_with(&model, &BANDED).expect("arena");
        let spans: Vec<(usize, usize)> = need.stages.iter().map(|s| (s.first, s.last)).collect();
        assert!(
            spans.iter().any(|&(a, b)| a <= 3 && 3 <= b),
            "int8={int8}: the ADD (op 3) runs in a stage: {spans:?}"
        );
        let (want, _, plain_total, _) = run(&model, PLAIN);
        let (got, high, total, _) = run(&model, BANDED);
        assert_eq!(got, want, "int8={int8}");
        assert_eq!(high, total);
        assert!(total < plain_total);
    }
}

#[test]
#[cfg_attr(miri, ignore = "a whole MobileNet-v2: hours under Miri")]
fn mobilenet_v2_runs_banded_with_plain_outputs() {
    // Inverted residuals: the stages must stop at the ADDs' inputs and the
    // skip tensors stay whole; 64×64 keeps a debug build quick.
    let bytes = microarena_core::build::example::mobilenet_v2_int8(64);
    let model = Model::parse(&bytes).expect("parse");
    let (want, _, plain_total, _) = run(&model, PLAIN);
    let (got, high, total, banded) = run(&model, BANDED);
    assert!(banded);
    assert_eq!(got, want);
    assert_eq!(high, total);
    assert!(total < plain_total, "{total} vs {plain_total}");
}

#[test]
fn mobilenet_v2_224_needs_a_quarter_of_tflms_arena() {
    // The target: an int8 MobileNet-v2 at 224×224 at least 4× below
    // TFLM's Cortex-M total (core's prediction of it, which the corpus tests
    // hold to TFLM's measured figures), OpData in flash, banded.
    use microarena_core::{Config, analyze, plan::PlannerKind, tflm::profile};
    let bytes = microarena_core::build::example::mobilenet_v2_int8(224);
    let model = Model::parse(&bytes).expect("parse");
    let tflm = analyze(
        &model,
        &Config {
            profile: &profile::CORTEX_M,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analysis");
    let options = LowerOptions {
        opdata: OpDataIn::Flash,
        execution: Execution::Banded,
        in_place: false,
    };
    let runtime = runtime_arena_with(&model, &options).expect("arena");
    assert!(
        runtime.total_bytes * 4 <= tflm.total_bytes,
        "{} B vs TFLM's {} B",
        runtime.total_bytes,
        tflm.total_bytes
    );
}

#[test]
fn the_stage_reports_one_bands_receptive_field() {
    // 64 rows: DEPTHWISE 3×3 stride 1 (TFLM pads 1 row on top), then CONV
    // 3×3 stride 2 SAME (out 32: padding (31·2 + 3 − 64)/2 = 0 on top). The
    // middle band, output row 16, reads rows 32..35 of the depthwise output,
    // which read input rows 31..36.
    use Layer::*;
    let layers = [
        Depthwise(3, 1, 1, Padding::Same, 1),
        Conv(3, 2, 1, Padding::Same, 8),
    ];
    let bytes = chain(&layers, 64, 16, true);
    let model = Model::parse(&bytes).expect("parse");
    let need = runtime_arena_with(&model, &BANDED).expect("arena");
    let s = need.stages.first().expect("a stage");
    assert_eq!((s.first, s.last, s.bands, s.input_rows), (0, 1, 32, 64));
    assert_eq!(s.field, (31, 36));
    // One ring: three rows of the 64×16 depthwise output.
    assert_eq!(s.ring_bytes, 3 * 64 * 16);
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn a_model_no_stage_helps_stays_plain() {
    // One op: nothing to stream between ops, so no stage.
    let bytes = chain(&[Layer::Conv(3, 1, 1, Padding::Same, 4)], 8, 2, true);
    let model = Model::parse(&bytes).expect("parse");
    let plain = runtime_arena_with(&model, &PLAIN).expect("arena");
    let banded = runtime_arena_with(&model, &BANDED).expect("arena");
    assert!(banded.stages.is_empty());
    assert_eq!(banded.total_bytes, plain.total_bytes);
}

/// Byte offset of op `i`'s record field `field`.
fn op_field(image: &[u8], i: usize, field: usize) -> usize {
    use microarena_image as rl;
    let at = rl::header::OPS_OFF;
    let off = u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize;
    off + i * rl::OP_BYTES + field
}

#[test]
fn a_broken_stage_is_refused_at_construction() {
    use microarena_image as rl;
    let bytes = chain(&every_branch(), 24, 2, true);
    let model = Model::parse(&bytes).expect("parse");
    let image = lower_with(&model, &BANDED).expect("lower");
    let need = runtime_arena_with(&model, &BANDED).expect("arena");
    let stage = *need.stages.first().expect("a stage");
    let mut arena = vec![0u8; need.total_bytes as usize + 64];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    // The last op no longer closes the stage.
    let mut open = image.clone();
    let at = op_field(&open, stage.last, rl::op::EXEC);
    open[at] = rl::EXEC_BANDED;
    assert!(Interpreter::new(&open, &mut arena).is_err());
    // An inner op made whole writes a streamed tensor outside a stage.
    let mut cut = image.clone();
    let at = op_field(&cut, stage.first, rl::op::EXEC);
    cut[at] = rl::EXEC_WHOLE;
    assert!(Interpreter::new(&cut, &mut arena).is_err());
    // A ring one row too small for the next op's window.
    let mut small = image.clone();
    let at = op_field(&small, stage.first, rl::op::SCRATCH_BYTES);
    let bytes = u32::from_le_bytes(small[at..at + 4].try_into().unwrap());
    small[at..at + 4].copy_from_slice(&(bytes - 16).to_le_bytes());
    let err = Interpreter::new(&small, &mut arena).expect_err("small ring");
    assert!(
        matches!(err, Error::InvalidOp { what, .. } if what.contains("ring")),
        "{err:?}"
    );
    // An unknown execution kind.
    let mut odd = image.clone();
    let at = op_field(&odd, 0, rl::op::EXEC);
    odd[at] = 7;
    assert!(Interpreter::new(&odd, &mut arena).is_err());
}

/// A 1×1 convolution's dilation does not change its window, so any value is
/// a valid model; 40,000 does not fit the stage runner's narrow row map.
/// Core then plans no stage through that op, and the runtime refuses an
/// image that has one anyway: plan and run agree.
#[test]
fn a_window_too_wide_for_a_row_map_is_not_banded() {
    use microarena_image as rl;
    let layers = |d| {
        use Layer::Conv;
        use Padding::Same;
        [
            Conv(3, 1, 1, Same, 32),
            Conv(1, 1, d, Same, 32),
            Conv(3, 2, 1, Same, 8),
        ]
    };
    let stages = |bytes: &[u8]| {
        let model = Model::parse(bytes).expect("parse");
        let need = runtime_arena_with(&model, &BANDED).expect("arena");
        need.stages
            .iter()
            .map(|s| (s.first, s.last))
            .collect::<Vec<_>>()
    };
    let narrow = chain(&layers(2), 48, 4, true);
    let inside = |v: &[(usize, usize)]| v.iter().any(|&(f, l)| f <= 1 && 1 <= l);
    assert!(inside(&stages(&narrow)), "{:?}", stages(&narrow));
    let wide = chain(&layers(40_000), 48, 4, true);
    assert!(!inside(&stages(&wide)), "{:?}", stages(&wide));
    let model = Model::parse(&wide).expect("parse");
    let (plain, ..) = run(&model, PLAIN);
    let (banded, high_water, predicted, _) = run(&model, BANDED);
    assert_eq!(banded, plain);
    assert_eq!(high_water, predicted);
    // The narrow model's image with the 1×1's dilation (WindowParams word
    // 5, dilation_h) made 40,000: a stage the runner cannot map.
    let model = Model::parse(&narrow).expect("parse");
    let mut image = lower_with(&model, &BANDED).expect("lower");
    let at = op_field(&image, 1, rl::op::PARAMS + 5 * 4);
    image[at..at + 4].copy_from_slice(&40_000i32.to_le_bytes());
    let need = runtime_arena_with(&model, &BANDED).expect("arena");
    let mut arena = vec![0u8; need.total_bytes as usize + 64];
    let err = Interpreter::new(&image, &mut arena).expect_err("wide dilation");
    assert!(
        matches!(err, Error::InvalidOp { what, .. } if what.contains("row map")),
        "{err:?}"
    );
}

/// A hostile graph whose streamed-looking tensor has a second writer
/// (RELU(z) → t0 before CONV(x) → t0): a stage would keep t0 in a ring
/// while the RELU writes it whole. Core plans no stage through t0, and
/// banded gives the plain outputs in the predicted arena.
#[test]
fn a_tensor_with_two_writers_is_not_streamed() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let act = |b: &mut ModelBuilder, name: &str, shape: &[i32], k: i64| {
        b.tensor(g, name, shape, DType::I8)
            .quant(0.05, k % 5 - 2)
            .id()
    };
    let conv = |b: &mut ModelBuilder, k: u32, (f, ci, co): (i32, i32, i32)| {
        let n = (co * f * f * ci) as usize;
        let scales: Vec<f32> = (0..co).map(|c| 0.01 + 0.001 * c as f32).collect();
        let w = b
            .tensor(g, &format!("w{k}"), &[co, f, f, ci], DType::I8)
            .data(&pseudo_random_bytes(k, n))
            .quant_per_channel(&scales, &vec![0; co as usize], 0)
            .id();
        let v: Vec<i32> = pseudo_random_bytes(k + 50, co as usize)
            .iter()
            .map(|&x| i32::from(x as i8) * 8)
            .collect();
        let bias = b
            .tensor(g, &format!("b{k}"), &[co], DType::I32)
            .data_i32(&v)
            .quant_per_channel(&vec![0.0004; co as usize], &vec![0; co as usize], 0)
            .id();
        (w, bias)
    };
    let x = act(&mut b, "x", &[1, 48, 48, 4], 0);
    let z = act(&mut b, "z", &[1, 48, 48, 32], 1);
    let t0 = act(&mut b, "t0", &[1, 48, 48, 32], 1);
    b.op(g, BuiltinOp::RELU, &[z], &[t0]);
    let (w0, b0) = conv(&mut b, 1, (3, 4, 32));
    b.op(g, BuiltinOp::CONV_2D, &[x, w0, b0], &[t0])
        .conv_options(Padding::Same, 1, 1, Activation::Relu);
    let t1 = act(&mut b, "t1", &[1, 48, 48, 32], 2);
    let (w1, b1) = conv(&mut b, 2, (1, 32, 32));
    b.op(g, BuiltinOp::CONV_2D, &[t0, w1, b1], &[t1])
        .conv_options(Padding::Same, 1, 1, Activation::Relu);
    let t2 = act(&mut b, "t2", &[1, 24, 24, 8], 3);
    let (w2, b2) = conv(&mut b, 3, (3, 32, 8));
    b.op(g, BuiltinOp::CONV_2D, &[t1, w2, b2], &[t2])
        .conv_options(Padding::Same, 2, 2, Activation::Relu);
    b.inputs(g, &[x, z]).outputs(g, &[t2]);
    let bytes = b.finish();
    let model = Model::parse(&bytes).expect("parse");
    let need = runtime_arena_with(&model, &BANDED).expect("arena");
    assert!(
        need.stages.iter().all(|s| s.first > 1),
        "a stage through t0: {:?}",
        need.stages
    );
    let (plain, ..) = run(&model, PLAIN);
    let (banded, high_water, predicted, _) = run(&model, BANDED);
    assert_eq!(banded, plain);
    assert_eq!(high_water, predicted);
}
