//! Banded stages over the layer patterns converters emit: explicit PAD
//! before strided layers, element-wise activations and casts between
//! windowed ops, residual ADDs with the skip tensor streamed, a
//! squeeze-excite MUL by a gate computed before the stage, a leading NCHW
//! TRANSPOSE, PADs folded into the windows after them, RESIZE upsampling
//! and CONCATENATION skips (U-Net, YOLO-style neck). Each builder
//! model runs banded (and banded in place) with outputs identical to the
//! plain run, in exactly the arena core predicts, measured.

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::converted;
use microarena_core::build::example::pseudo_random_bytes;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_image as rl;
use microarena_runtime::{Error, Interpreter, freeze_opdata};

/// (output, measured high-water, predicted total, stages as op ranges).
fn run(model: &Model<'_>, options: LowerOptions) -> (Vec<u8>, usize, usize, Vec<(usize, usize)>) {
    let mut image = lower_with(model, &options).expect("lower");
    freeze_opdata(&mut image).expect("freeze");
    let need = runtime_arena_with(model, &options).expect("arena");
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let input = it.input_mut(0).expect("input");
    let n = input.len();
    input.copy_from_slice(&pseudo_random_bytes(7, n));
    it.invoke().expect("invoke");
    let outputs = (0..it.image().output_count())
        .flat_map(|k| it.output(k).expect("output").to_vec())
        .collect();
    (
        outputs,
        it.memory_usage().high_water,
        need.total_bytes as usize,
        need.stages.iter().map(|s| (s.first, s.last)).collect(),
    )
}

fn options(execution: Execution, in_place: bool) -> LowerOptions {
    LowerOptions {
        opdata: OpDataIn::Flash,
        execution,
        in_place,
    }
}

/// Runs `bytes` plain, banded and banded in place: equal outputs, measured
/// = predicted; returns (plain total, banded total, banded stages).
fn check(bytes: &[u8]) -> (usize, usize, Vec<(usize, usize)>) {
    let model = Model::parse(bytes).expect("parse");
    let (want, plain_high, plain_total, _) = run(&model, options(Execution::Plain, false));
    assert_eq!(plain_high, plain_total);
    let (got, high, total, stages) = run(&model, options(Execution::Banded, false));
    assert_eq!(got, want, "banded output differs");
    assert_eq!(high, total, "banded: measured vs predicted");
    let (got, high, in_place_total, _) = run(&model, options(Execution::Banded, true));
    assert_eq!(got, want, "banded in-place output differs");
    assert_eq!(
        high, in_place_total,
        "banded in place: measured vs predicted"
    );
    (plain_total, total.min(in_place_total), stages)
}

/// The op codes of ops `first..=last`.
fn codes(bytes: &[u8], (first, last): (usize, usize)) -> Vec<u8> {
    let model = Model::parse(bytes).expect("parse");
    model.main().operators[first..=last]
        .iter()
        .map(|o| o.opcode.0 as u8)
        .collect()
}

fn staged(bytes: &[u8], stages: &[(usize, usize)], code: u8) -> bool {
    stages.iter().any(|&s| codes(bytes, s).contains(&code))
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn pytorch_mobilenet_v2_streams_its_pads_and_residuals() {
    let bytes = converted::mobilenet_v2_pytorch_int8(64);
    let (plain, banded, stages) = check(&bytes);
    assert!(staged(&bytes, &stages, rl::opcode::PAD), "{stages:?}");
    assert!(staged(&bytes, &stages, rl::opcode::ADD), "{stages:?}");
    assert!(banded * 2 < plain, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn keras_vww_streams_its_zero_padding() {
    let bytes = converted::mobilenet_v1_vww_keras_int8();
    let (plain, banded, stages) = check(&bytes);
    assert!(staged(&bytes, &stages, rl::opcode::PAD), "{stages:?}");
    // The first stage writes its output over the 27,648 B input it
    // consumes: below 40 % of the plain run (it was 60 % with the input
    // whole beside the stage).
    assert!(banded * 5 < plain * 2, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn mobilenet_v3_streams_hard_swish() {
    let bytes = converted::mobilenet_v3_style_int8(64);
    let (plain, banded, stages) = check(&bytes);
    assert!(
        staged(&bytes, &stages, rl::opcode::HARD_SWISH),
        "{stages:?}"
    );
    assert!(banded < plain, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn squeeze_excite_gates_are_read_whole_beside_the_stage() {
    let bytes = converted::squeeze_excite_block_int8(48);
    let (plain, banded, stages) = check(&bytes);
    assert!(staged(&bytes, &stages, rl::opcode::MUL), "{stages:?}");
    assert!(banded < plain, "{banded} vs {plain}");
}

/// A pseudo-random filter of `shape` (int8 quantized per channel along
/// `axis`, or float32) and its bias of `shape[axis]` values (int32 at scale
/// `bias_scale`, or float32), from seeds `seed` and `seed + 1`.
#[allow(clippy::too_many_arguments)]
fn filter_and_bias(
    b: &mut ModelBuilder,
    g: usize,
    name: &str,
    shape: &[i32],
    axis: usize,
    seed: u32,
    int8: bool,
    bias_scale: f32,
) -> (i32, i32) {
    let ch = shape[axis];
    let n = shape.iter().product::<i32>() as usize;
    let raw = pseudo_random_bytes(seed, n);
    let bias_raw = pseudo_random_bytes(seed + 1, ch as usize);
    let bias_name = format!("{name}_b");
    if int8 {
        let scales: Vec<f32> = (0..ch).map(|k| 0.01 + 0.001 * k as f32).collect();
        let w = b
            .tensor(g, name, shape, DType::I8)
            .data(&raw)
            .quant_per_channel(&scales, &vec![0; ch as usize], axis as i32)
            .id();
        let v: Vec<i32> = bias_raw.iter().map(|&x| i32::from(x as i8) * 8).collect();
        let bias = b
            .tensor(g, &bias_name, &[ch], DType::I32)
            .data_i32(&v)
            .quant_per_channel(&vec![bias_scale; ch as usize], &vec![0; ch as usize], 0)
            .id();
        (w, bias)
    } else {
        let v: Vec<f32> = raw.iter().map(|&x| f32::from(x as i8) / 64.0).collect();
        let w = b.tensor(g, name, shape, DType::F32).data_f32(&v).id();
        let bv: Vec<f32> = bias_raw
            .iter()
            .map(|&x| f32::from(x as i8) / 32.0)
            .collect();
        (
            w,
            b.tensor(g, &bias_name, &[ch], DType::F32)
                .data_f32(&bv)
                .id(),
        )
    }
}

/// A chain of element-wise ops between windowed ones, each a separate op
/// as converters write them: CONV_2D → HARD_SWISH → DEPTHWISE → LEAKY_RELU
/// → CONV_2D → QUANTIZE (int8 requantize) → RELU → DEQUANTIZE → LOGISTIC
/// (float) → QUANTIZE (float to int8) → DEPTHWISE → TANH → CONV_2D 1×1, on
/// a 40×40×8 int8 input.
fn activations_chain() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let mut seed = 10u32;
    let mut next = || {
        seed += 1;
        seed
    };
    let (h, c) = (40, 8);
    let act = |b: &mut ModelBuilder, name: &str, ch: i32, scale: f32, zp: i64| {
        b.tensor(g, name, &[1, h, h, ch], DType::I8)
            .quant(scale, zp)
            .id()
    };
    let float = |b: &mut ModelBuilder, name: &str, ch: i32| {
        b.tensor(g, name, &[1, h, h, ch], DType::F32).id()
    };
    let mut weights = |b: &mut ModelBuilder, name: &str, shape: &[i32], axis: usize| {
        let seed = next();
        next();
        filter_and_bias(b, g, name, shape, axis, seed, true, 0.0004)
    };
    let x0 = act(&mut b, "input", c, 0.05, 3);
    let (w, bi) = weights(&mut b, "w0", &[16, 3, 3, c], 0);
    let x1 = act(&mut b, "conv0", 16, 0.1, -5);
    b.op(g, BuiltinOp::CONV_2D, &[x0, w, bi], &[x1])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    let x2 = act(&mut b, "hswish", 16, 0.06, -90);
    b.op(g, BuiltinOp::HARD_SWISH, &[x1], &[x2]);
    let (w, bi) = weights(&mut b, "w1", &[1, 3, 3, 16], 3);
    let x3 = act(&mut b, "dw1", 16, 0.08, 2);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x2, w, bi], &[x3])
        .depthwise_options(Padding::Same, 1, 1, 1, Activation::None);
    let x4 = act(&mut b, "leaky", 16, 0.07, 1);
    b.op(
        g,
        BuiltinOp(i32::from(rl::opcode::LEAKY_RELU)),
        &[x3],
        &[x4],
    )
    .options(microarena_core::read::ops::OpOptions::LeakyRelu { alpha: 0.2 });
    let (w, bi) = weights(&mut b, "w2", &[16, 3, 3, 16], 0);
    let x5 = act(&mut b, "conv2", 16, 0.12, -3);
    b.op(g, BuiltinOp::CONV_2D, &[x4, w, bi], &[x5])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    let x6 = act(&mut b, "requant", 16, 0.09, 7);
    b.op(g, BuiltinOp(i32::from(rl::opcode::QUANTIZE)), &[x5], &[x6]);
    let x7 = act(&mut b, "relu", 16, 0.09, 7);
    b.op(g, BuiltinOp(i32::from(rl::opcode::RELU)), &[x6], &[x7]);
    let x8 = float(&mut b, "deq", 16);
    b.op(
        g,
        BuiltinOp(i32::from(rl::opcode::DEQUANTIZE)),
        &[x7],
        &[x8],
    );
    let x9 = float(&mut b, "sigmoid", 16);
    b.op(g, BuiltinOp::LOGISTIC, &[x8], &[x9]);
    let x10 = act(&mut b, "q", 16, 1.0 / 256.0, -128);
    b.op(g, BuiltinOp(i32::from(rl::opcode::QUANTIZE)), &[x9], &[x10]);
    let (w, bi) = weights(&mut b, "w3", &[1, 3, 3, 16], 3);
    let x11 = act(&mut b, "dw3", 16, 0.02, 0);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x10, w, bi], &[x11])
        .depthwise_options(Padding::Same, 1, 1, 1, Activation::None);
    let x12 = act(&mut b, "tanh", 16, 1.0 / 128.0, 0);
    b.op(g, BuiltinOp(i32::from(rl::opcode::TANH)), &[x11], &[x12]);
    let (w, bi) = weights(&mut b, "w4", &[4, 1, 1, 16], 0);
    let x13 = act(&mut b, "out", 4, 0.05, 0);
    b.op(g, BuiltinOp::CONV_2D, &[x12, w, bi], &[x13])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x0]).outputs(g, &[x13]);
    b.finish()
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn activations_and_casts_run_inside_a_stage() {
    let bytes = activations_chain();
    let (plain, banded, stages) = check(&bytes);
    assert!(banded < plain, "{banded} vs {plain}");
    for code in [
        rl::opcode::HARD_SWISH,
        rl::opcode::LEAKY_RELU,
        rl::opcode::QUANTIZE,
        rl::opcode::RELU,
        rl::opcode::DEQUANTIZE,
        rl::opcode::LOGISTIC,
        rl::opcode::TANH,
    ] {
        assert!(staged(&bytes, &stages, code), "op {code}: {stages:?}");
    }
}

// ------------------------------------------------------------ corrupt images

fn word(image: &[u8], at: usize) -> usize {
    u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize
}

fn op_at(image: &[u8], i: usize) -> usize {
    word(image, rl::header::OPS_OFF) + i * rl::OP_BYTES
}

fn tensor_at(image: &[u8], t: usize) -> usize {
    word(image, rl::header::TENSORS_OFF) + t * rl::TENSOR_BYTES
}

fn u16_at(image: &[u8], at: usize) -> usize {
    usize::from(u16::from_le_bytes([image[at], image[at + 1]]))
}

/// The banded PyTorch MobileNet-v2 at 64×64 lowered, with its arena size:
/// (image, arena bytes, ops of its stages).
fn banded_image() -> (Vec<u8>, usize, Vec<(usize, usize)>) {
    let (image, total, stages) = banded_of(&converted::mobilenet_v2_pytorch_int8(64));
    (
        image,
        total,
        stages.iter().map(|s| (s.first, s.last)).collect(),
    )
}

/// A residual ADD inside a stage with an operand streamed from an earlier
/// op of the stage: (ADD op, which input, that tensor, its producer op).
fn streamed_skip(image: &[u8], stages: &[(usize, usize)]) -> (usize, usize, usize, usize) {
    for &(first, last) in stages {
        for i in first..=last {
            let op = op_at(image, i);
            if image[op + rl::op::OPCODE] != rl::opcode::ADD {
                continue;
            }
            for k in 0..2 {
                let skip = u16_at(image, op + rl::op::INPUTS + 2 * k);
                if image[tensor_at(image, skip) + rl::tensor::STORAGE] != rl::STORAGE_STREAMED {
                    continue;
                }
                let producer = (first..i)
                    .find(|&j| u16_at(image, op_at(image, j) + rl::op::OUTPUT) == skip)
                    .expect("a producer in the stage");
                return (i, k, skip, producer);
            }
        }
    }
    panic!("no streamed skip in {stages:?}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn broken_dag_stages_are_refused_at_construction() {
    let (image, bytes, stages) = banded_image();
    let mut arena = vec![0u8; bytes + 64];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    let (add, k, skip, producer) = streamed_skip(&image, &stages);

    // The skip's ring one byte short of the rows between its two readers.
    let mut small = image.clone();
    let at = op_at(&small, producer) + rl::op::SCRATCH_BYTES;
    let ring = word(&small, at) as u32;
    small[at..at + 4].copy_from_slice(&(ring - 1).to_le_bytes());
    let err = Interpreter::new(&small, &mut arena).expect_err("small skip ring");
    assert!(
        matches!(err, Error::InvalidOp { op_index, what, .. }
            if usize::from(op_index) == producer && what.contains("schedule")),
        "{err:?}"
    );

    // The ADD made to read its skip from an op after it: the streamed
    // tensor has no earlier producer in the stage.
    let mut later = image.clone();
    let (first, last) = *stages.iter().find(|s| s.0 <= add && add <= s.1).unwrap();
    let after = (add + 1..=last)
        .map(|j| u16_at(&later, op_at(&later, j) + rl::op::OUTPUT))
        .next();
    if let Some(t) = after {
        let at = op_at(&later, add) + rl::op::INPUTS + 2 * k;
        later[at..at + 2].copy_from_slice(&(t as u16).to_le_bytes());
        assert!(Interpreter::new(&later, &mut arena).is_err());
    }

    // The skip made whole in the arena where its ring is: it is neither a
    // stage output nor streamed as its producer's record says (scratch).
    let mut whole = image.clone();
    let at = tensor_at(&whole, skip) + rl::tensor::STORAGE;
    whole[at] = rl::STORAGE_ARENA;
    let err = Interpreter::new(&whole, &mut arena).expect_err("whole with a ring");
    assert!(
        matches!(err, Error::InvalidOp { what, .. } if what.contains("streamed into its ring")),
        "{err:?}"
    );

    // An op of the stage marked to run in place as well.
    let mut both = image.clone();
    let at = op_at(&both, add) + rl::op::IN_PLACE;
    both[at] = 1;
    assert!(Interpreter::new(&both, &mut arena).is_err());

    // A stage whose every output is streamed: nothing would be written.
    let mut none = image.clone();
    let out = u16_at(&none, op_at(&none, last) + rl::op::OUTPUT);
    let at = tensor_at(&none, out) + rl::tensor::STORAGE;
    none[at] = rl::STORAGE_STREAMED;
    assert!(Interpreter::new(&none, &mut arena).is_err());
    let _ = first;
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn branches_rejoin_in_a_stage_with_two_heads() {
    let bytes = converted::detection_neck_int8(48);
    let (plain, banded, stages) = check(&bytes);
    assert!(
        staged(&bytes, &stages, rl::opcode::CONCATENATION),
        "{stages:?}"
    );
    assert!(banded < plain, "{banded} vs {plain}");
}

/// CONV_2D 3×3 → PADV2 (1 row and column above and left, 2 below and
/// right, a pad value `pad` away from the zero point) → DEPTHWISE 3×3 VALID
/// stride 2 → CONV_2D 1×1, int8 or float32, on a 40×40×4 input.
fn padv2_chain(int8: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let dt = if int8 { DType::I8 } else { DType::F32 };
    let (h, c) = (40, 4);
    let act = |b: &mut ModelBuilder, name: &str, hw: i32, ch: i32| {
        let t = b.tensor(g, name, &[1, hw, hw, ch], dt);
        if int8 { t.quant(0.05, -7).id() } else { t.id() }
    };
    let mut seed = 40u32;
    let mut weights = |b: &mut ModelBuilder, name: &str, shape: &[i32], axis: usize| {
        seed += 2;
        filter_and_bias(b, g, name, shape, axis, seed, int8, 0.0005)
    };
    let x0 = act(&mut b, "input", h, c);
    let (w, bi) = weights(&mut b, "w0", &[16, 3, 3, c], 0);
    let x1 = act(&mut b, "conv0", h, 16);
    b.op(g, BuiltinOp::CONV_2D, &[x0, w, bi], &[x1])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    let paddings = b
        .tensor(g, "paddings", &[4, 2], DType::I32)
        .data_i32(&[0, 0, 1, 2, 1, 2, 0, 0])
        .id();
    let value = if int8 {
        b.tensor(g, "pad_value", &[1], DType::I8)
            .data(&[25u8])
            .quant(0.05, -7)
            .id()
    } else {
        b.tensor(g, "pad_value", &[1], DType::F32)
            .data_f32(&[1.5])
            .id()
    };
    let x2 = act(&mut b, "padded", h + 3, 16);
    b.op(
        g,
        BuiltinOp(i32::from(rl::opcode::PADV2)),
        &[x1, paddings, value],
        &[x2],
    );
    let (w, bi) = weights(&mut b, "w1", &[1, 3, 3, 16], 3);
    let oh = (h + 3 - 3) / 2 + 1;
    let x3 = act(&mut b, "dw", oh, 16);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x2, w, bi], &[x3])
        .depthwise_options(Padding::Valid, 2, 2, 1, Activation::None);
    let (w, bi) = weights(&mut b, "w2", &[4, 1, 1, 16], 0);
    let x4 = act(&mut b, "out", oh, 4);
    b.op(g, BuiltinOp::CONV_2D, &[x3, w, bi], &[x4])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x0]).outputs(g, &[x4]);
    b.finish()
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn padv2_with_its_own_value_streams_bit_exactly() {
    // The padding rows and columns hold PADV2's value (25, not the zero
    // point −7; 1.5 in float), which the windows after it read.
    for int8 in [true, false] {
        let bytes = padv2_chain(int8);
        let (plain, banded, stages) = check(&bytes);
        assert!(
            staged(&bytes, &stages, rl::opcode::PADV2),
            "int8={int8}: {stages:?}"
        );
        assert!(banded < plain, "int8={int8}: {banded} vs {plain}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn unet_decoder_streams_its_upsampling_and_skips() {
    let bytes = converted::unet_decoder_int8(48);
    let (plain, banded, stages) = check(&bytes);
    for code in [
        rl::opcode::RESIZE_BILINEAR,
        rl::opcode::RESIZE_NEAREST_NEIGHBOR,
        rl::opcode::CONCATENATION,
    ] {
        assert!(staged(&bytes, &stages, code), "op {code}: {stages:?}");
    }
    assert!(banded < plain, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn yolo_neck_streams_its_upsampling() {
    let bytes = converted::yolo_neck_int8(64);
    let (plain, banded, stages) = check(&bytes);
    assert!(
        staged(&bytes, &stages, rl::opcode::RESIZE_NEAREST_NEIGHBOR),
        "{stages:?}"
    );
    assert!(banded < plain, "{banded} vs {plain}");
}

/// CONV_2D 3×3 → RESIZE (`code`, from `h` rows and columns to `out`, with
/// `align` / `half`) → CONV_2D 3×3 → CONV_2D 1×1, int8 or float32, on an
/// `h`×`h`×4 input: odd factors, up and down, so TFLM's source rows are not
/// a plain ×2.
fn resize_chain(int8: bool, code: u8, (h, out): (i32, i32), align: bool, half: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let dt = if int8 { DType::I8 } else { DType::F32 };
    let c = 4;
    let act = |b: &mut ModelBuilder, name: &str, hw: i32, ch: i32| {
        let t = b.tensor(g, name, &[1, hw, hw, ch], dt);
        if int8 { t.quant(0.05, -7).id() } else { t.id() }
    };
    let mut seed = 70u32;
    let mut weights = |b: &mut ModelBuilder, name: &str, shape: &[i32]| {
        seed += 2;
        filter_and_bias(b, g, name, shape, 0, seed, int8, 0.0005)
    };
    let x0 = act(&mut b, "input", h, c);
    let (w, bi) = weights(&mut b, "w0", &[8, 3, 3, c]);
    let x1 = act(&mut b, "conv0", h, 8);
    b.op(g, BuiltinOp::CONV_2D, &[x0, w, bi], &[x1])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    let size = b
        .tensor(g, "size", &[2], DType::I32)
        .data_i32(&[out, out])
        .id();
    let x2 = act(&mut b, "resized", out, 8);
    b.op(g, BuiltinOp(i32::from(code)), &[x1, size], &[x2])
        .options(microarena_core::read::ops::OpOptions::Resize {
            align_corners: align,
            half_pixel_centers: half,
        });
    let (w, bi) = weights(&mut b, "w1", &[8, 3, 3, 8]);
    let x3 = act(&mut b, "conv1", out, 8);
    b.op(g, BuiltinOp::CONV_2D, &[x2, w, bi], &[x3])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    let (w, bi) = weights(&mut b, "w2", &[4, 1, 1, 8]);
    let x4 = act(&mut b, "out", out, 4);
    b.op(g, BuiltinOp::CONV_2D, &[x3, w, bi], &[x4])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x0]).outputs(g, &[x4]);
    b.finish()
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn resizes_stream_by_tflms_source_rows() {
    use rl::opcode::{RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR};
    // (op, sides in and out, align_corners, half_pixel_centers); TFLM
    // refuses bilinear with both. The downsamplings start larger: a stage
    // must save more than the stack it costs.
    let cases = [
        (RESIZE_NEAREST_NEIGHBOR, (20, 33), false, false),
        (RESIZE_NEAREST_NEIGHBOR, (20, 33), true, false),
        (RESIZE_NEAREST_NEIGHBOR, (48, 29), false, true),
        (RESIZE_NEAREST_NEIGHBOR, (20, 47), true, true),
        (RESIZE_BILINEAR, (20, 33), false, false),
        (RESIZE_BILINEAR, (20, 33), true, false),
        (RESIZE_BILINEAR, (20, 47), false, true),
        (RESIZE_BILINEAR, (48, 29), false, true),
    ];
    for int8 in [true, false] {
        for (code, out, align, half) in cases {
            let what = format!("int8={int8} op {code} {out:?} align={align} half={half}");
            let bytes = resize_chain(int8, code, out, align, half);
            let (plain, banded, stages) = check(&bytes);
            assert!(staged(&bytes, &stages, code), "{what}: {stages:?}");
            assert!(banded < plain, "{what}: {banded} vs {plain}");
        }
    }
}

/// A PyTorch export's stem on a `[1, 3, hw, hw]` int8 NCHW input:
/// TRANSPOSE to NHWC → PAD 1 → CONV_2D 3×3/2 VALID to 16 (ReLU6) → PAD 1
/// → DEPTHWISE 3×3/2 VALID → CONV_2D 1×1 to 8 (the output).
fn nchw_stem(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let mut seed = 90u32;
    let act = |b: &mut ModelBuilder, name: &str, shape: &[i32]| {
        b.tensor(g, name, shape, DType::I8).quant(0.05, -3).id()
    };
    let mut weights = |b: &mut ModelBuilder, name: &str, shape: &[i32], axis: usize| {
        seed += 2;
        filter_and_bias(b, g, name, shape, axis, seed, true, 0.0005)
    };
    let pad = |b: &mut ModelBuilder, x: i32, name: &str, shape: [i32; 4]| {
        let paddings = b
            .tensor(g, &format!("{name}/paddings"), &[4, 2], DType::I32)
            .data_i32(&[0, 0, 1, 1, 1, 1, 0, 0])
            .id();
        let y = act(b, name, &[1, shape[1] + 2, shape[2] + 2, shape[3]]);
        b.op(
            g,
            BuiltinOp(i32::from(rl::opcode::PAD)),
            &[x, paddings],
            &[y],
        );
        y
    };
    let input = act(&mut b, "input", &[1, 3, hw, hw]);
    let perm = b
        .tensor(g, "perm", &[4], DType::I32)
        .data_i32(&[0, 2, 3, 1])
        .id();
    let nhwc = act(&mut b, "nhwc", &[1, hw, hw, 3]);
    b.op(
        g,
        BuiltinOp(i32::from(rl::opcode::TRANSPOSE)),
        &[input, perm],
        &[nhwc],
    );
    let p0 = pad(&mut b, nhwc, "pad0", [1, hw, hw, 3]);
    let (w, bi) = weights(&mut b, "w0", &[16, 3, 3, 3], 0);
    let h1 = hw / 2;
    let c0 = act(&mut b, "conv0", &[1, h1, h1, 16]);
    b.op(g, BuiltinOp::CONV_2D, &[p0, w, bi], &[c0])
        .conv_options(Padding::Valid, 2, 2, Activation::Relu6);
    let p1 = pad(&mut b, c0, "pad1", [1, h1, h1, 16]);
    let (w, bi) = weights(&mut b, "w1", &[1, 3, 3, 16], 3);
    let h2 = h1 / 2;
    let d1 = act(&mut b, "dw1", &[1, h2, h2, 16]);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[p1, w, bi], &[d1])
        .depthwise_options(Padding::Valid, 2, 2, 1, Activation::Relu6);
    let (w, bi) = weights(&mut b, "w2", &[8, 1, 1, 16], 0);
    let out = act(&mut b, "out", &[1, h2, h2, 8]);
    b.op(g, BuiltinOp::CONV_2D, &[d1, w, bi], &[out])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[input]).outputs(g, &[out]);
    b.finish()
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn an_nchw_input_is_transposed_row_by_row_and_pads_fold_into_windows() {
    let bytes = nchw_stem(128);
    let (plain, banded, stages) = check(&bytes);
    // One stage from the TRANSPOSE on: the transposed copy (49,152 B) never
    // exists whole, where plain its step holds input and copy.
    assert_eq!(stages, vec![(0, 5)]);
    let model = Model::parse(&bytes).expect("parse");
    let need = runtime_arena_with(&model, &options(Execution::Banded, false)).expect("arena");
    // Rings by hand: both PADs (int8, zero-point padding, each read by one
    // window) fold into that window, which reads their input instead: the
    // transposed rows 3 × 128 × 3 for the first 3×3/2 window, the
    // convolution's rows 3 × 64 × 16 for the depthwise, the depthwise's
    // one row 32 × 16; the PADs make none. Unfolded it would be 6,258 B: a
    // row of the transpose, 3 padded rows of 130 × 3, a row of the
    // convolution, 3 padded rows of 66 × 16, a depthwise row.
    assert_eq!(need.stages[0].ring_bytes, 1_152 + 3_072 + 512);
    // Input 49,152 + rings + output 32 × 32 × 8, against plain's
    // 49,152 + 65,536 at the first convolution.
    assert!(banded * 3 < plain * 2, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn a_pad_the_rule_does_not_fold_needs_its_ring() {
    let (mut image, total, _) = banded_of(&nchw_stem(128));
    let mut arena = vec![0u8; total];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    // Op 1, the first PAD, folded: no ring. Made a PADV2 (whose value is
    // its own, so `stage::pad_fold` keeps it), it must make its rows, and
    // the image has no ring for them.
    let at = op_at(&image, 1) + rl::op::OPCODE;
    assert_eq!(image[at], rl::opcode::PAD);
    assert_eq!(word(&image, op_at(&image, 1) + rl::op::SCRATCH_BYTES), 0);
    image[at] = rl::opcode::PADV2;
    let err = Interpreter::new(&image, &mut arena).expect_err("an unfolded PAD without a ring");
    assert!(
        matches!(err, Error::InvalidOp { op_index: 1, what, .. } if what.contains("schedule")),
        "{err:?}"
    );
}

// ------------------------------------------------- an output over its input

/// `x` (1×48×48×16 int8, the graph input) → either an inverted-residual
/// body (CONV 1×1 to 32 → DEPTHWISE 3×3 SAME → CONV 1×1 back to 16) and a
/// CONV 3×3 stride 2 head to 24×24×8, or (`direct`) a DEPTHWISE 3×3 SAME
/// ×4 reading `x` itself → CONV 1×1 back to 16, the graph output (a stage
/// pays: the 147 KB expansion streams).
fn over_input_block(direct: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let act = |b: &mut ModelBuilder, name: &str, h: i32, ch: i32, zp: i64| {
        b.tensor(g, name, &[1, h, h, ch], DType::I8)
            .quant(0.05, zp)
            .id()
    };
    let x = act(&mut b, "input", 48, 16, 1);
    let mut seed = 40u32;
    let mut weights = |b: &mut ModelBuilder, name: &str, shape: &[i32], axis: usize| {
        seed += 2;
        filter_and_bias(b, g, name, shape, axis, seed, true, 0.0005)
    };
    let dw = |b: &mut ModelBuilder, x: i32, w: (i32, i32), y: i32| {
        b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x, w.0, w.1], &[y])
            .depthwise_options(Padding::Same, 1, 1, 1, Activation::Relu6);
    };
    let conv = |b: &mut ModelBuilder, x: i32, w: (i32, i32), y: i32, stride: i32| {
        b.op(g, BuiltinOp::CONV_2D, &[x, w.0, w.1], &[y])
            .conv_options(Padding::Same, stride, stride, Activation::None);
    };
    if direct {
        let w = weights(&mut b, "dw", &[1, 3, 3, 64], 3);
        let x1 = act(&mut b, "dw_out", 48, 64, -2);
        b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x, w.0, w.1], &[x1])
            .depthwise_options(Padding::Same, 1, 1, 4, Activation::Relu6);
        let w = weights(&mut b, "project", &[16, 1, 1, 64], 0);
        let y = act(&mut b, "out", 48, 16, 3);
        conv(&mut b, x1, w, y, 1);
        b.inputs(g, &[x]).outputs(g, &[y]);
    } else {
        let w = weights(&mut b, "expand", &[32, 1, 1, 16], 0);
        let x1 = act(&mut b, "expanded", 48, 32, -4);
        conv(&mut b, x, w, x1, 1);
        let w = weights(&mut b, "dw", &[1, 3, 3, 32], 3);
        let x2 = act(&mut b, "dw_out", 48, 32, -1);
        dw(&mut b, x1, w, x2);
        let w = weights(&mut b, "project", &[16, 1, 1, 32], 0);
        let x3 = act(&mut b, "projected", 48, 16, 2);
        conv(&mut b, x2, w, x3, 1);
        let w = weights(&mut b, "head", &[8, 3, 3, 16], 0);
        let y = act(&mut b, "out", 24, 8, 0);
        conv(&mut b, x3, w, y, 2);
        b.inputs(g, &[x]).outputs(g, &[y]);
    }
    b.finish()
}

/// The banded image of `bytes` and its arena size and stages (with the
/// tensors a stage writes its output over).
fn banded_of(bytes: &[u8]) -> (Vec<u8>, usize, Vec<microarena_core::lower::BandedStage>) {
    let model = Model::parse(bytes).expect("parse");
    let o = options(Execution::Banded, false);
    let mut image = lower_with(&model, &o).expect("lower");
    freeze_opdata(&mut image).expect("freeze");
    let need = runtime_arena_with(&model, &o).expect("arena");
    (image, need.total_bytes as usize, need.stages)
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn a_stage_writes_its_output_over_the_input_it_consumes() {
    let bytes = over_input_block(false);
    let (plain, banded, _) = check(&bytes);
    let (_, _, stages) = banded_of(&bytes);
    let model = Model::parse(&bytes).expect("parse");
    let input = model.main().inputs[0] as usize;
    let over = stages
        .iter()
        .find_map(|s| s.behind)
        .expect("a stage over its input");
    assert_eq!(over.0, input, "{stages:?}");
    // The 36,864 B input holds the stage's output: the arena is about
    // one such tensor and the rings, well under half the plain run's.
    assert!(banded * 2 < plain, "{banded} vs {plain}");
    let without_over = 36_864 + 36_864 / 2;
    assert!(
        banded < without_over,
        "{banded}: the input and output apart"
    );
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn an_output_over_an_input_still_read_is_refused() {
    let (image, bytes, stages) = banded_of(&over_input_block(false));
    let mut arena = vec![0u8; bytes + 64];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    let st = stages.iter().find(|s| s.behind.is_some()).expect("over");
    let (x, y) = st.behind.unwrap();
    let y_loc = tensor_at(&image, y) + rl::tensor::LOCATION;

    // The output moved 16 bytes along: it overlaps its input without
    // starting at it.
    let mut shifted = image.clone();
    let at = word(&shifted, y_loc) as u32 + 16;
    shifted[y_loc..y_loc + 4].copy_from_slice(&at.to_le_bytes());
    let err = Interpreter::new(&shifted, &mut arena).expect_err("shifted");
    assert!(
        matches!(err, Error::Malformed { what, .. } if what.contains("overlap")),
        "{err:?}"
    );

    // An op after the stage made to read the input the stage overwrote.
    let mut late = image.clone();
    let n_ops = word(&late, rl::header::N_OPS);
    if st.last + 1 < n_ops {
        let at = op_at(&late, st.last + 1) + rl::op::INPUTS;
        late[at..at + 2].copy_from_slice(&(x as u16).to_le_bytes());
        let err = Interpreter::new(&late, &mut arena).expect_err("read after");
        assert!(
            matches!(err, Error::Malformed { what, .. } if what.contains("after it reads")),
            "{err:?}"
        );
    }

    // A depthwise reading the input itself, stride 1: the output's row r
    // would overwrite the input's row r while the next window still reads
    // it. Core plans the two apart; an image placing them together is
    // refused.
    let direct = over_input_block(true);
    let (image, bytes, stages) = banded_of(&direct);
    assert!(stages.iter().all(|s| s.behind.is_none()), "{stages:?}");
    let st = stages.first().expect("a stage");
    assert_eq!(st.first, 0, "the depthwise reads the input in the stage");
    let model = Model::parse(&direct).expect("parse");
    let x = model.main().inputs[0] as usize;
    let y = model.main().operators[st.last].outputs[0] as usize;
    let mut arena = vec![0u8; bytes + 64];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    let mut over = image.clone();
    let x_loc = word(&over, tensor_at(&over, x) + rl::tensor::LOCATION) as u32;
    let y_loc = tensor_at(&over, y) + rl::tensor::LOCATION;
    over[y_loc..y_loc + 4].copy_from_slice(&x_loc.to_le_bytes());
    let err = Interpreter::new(&over, &mut arena).expect_err("unread rows");
    assert!(
        matches!(err, Error::Malformed { what, .. }
            if what == rl::stage::OVERWRITES_UNREAD),
        "{err:?}"
    );
}

// ------------------------------------------------------------ reducers

/// DS-CNN keyword spotting, pooled by a global AVERAGE_POOL_2D or by MEAN:
/// the stage runs from the first convolution through the pooling, which
/// folds each row of the last 25×5×64 map into its sums as it arrives, so
/// no map of the network is ever whole.
#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn ds_cnn_pools_each_row_as_it_arrives() {
    for (mean, code) in [
        (false, rl::opcode::AVERAGE_POOL_2D),
        (true, rl::opcode::MEAN),
    ] {
        let bytes = converted::ds_cnn_kws_int8(mean);
        let (plain, banded, stages) = check(&bytes);
        assert!(staged(&bytes, &stages, code), "{code}: {stages:?}");
        // One 25×5×64 map is 8,000 B: the banded arena holds less than
        // one of them besides the 490 B input and the tail.
        assert!(banded < 8_000, "{code}: {banded} vs {plain}");
    }
}

/// The Hello Edge CNN as Keras converts it: both convolutions, the
/// Flatten's RESHAPE and the first FULLY_CONNECTED run as one stage, the
/// classifier summing each row of the second map as it arrives, so neither
/// map (13,720 B and 4,200 B) is ever whole.
#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn a_keras_cnn_classifies_each_row_as_it_arrives() {
    let bytes = converted::cnn_kws_int8();
    let (plain, banded, stages) = check(&bytes);
    assert_eq!(stages, [(0, 3)], "{banded} vs {plain}");
    assert_eq!(
        codes(&bytes, (0, 3)),
        [
            rl::opcode::CONV_2D,
            rl::opcode::CONV_2D,
            rl::opcode::RESHAPE,
            rl::opcode::FULLY_CONNECTED
        ]
    );
    // Beside the 490 B input: the first map's 10-row window and the tail.
    assert!(banded < 4_200, "{banded} vs {plain}");
}

/// A 48×48 input, CONV_2D 3×3 SAME to 16 channels, then `reducer` (op
/// code and whether it reduces H, W or H alone), int8 or float32.
fn conv_then_reducer(int8: bool, reducer: u8, axes: &[i32], keep_dims: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let (h, c) = (48, 16);
    let dt = if int8 { DType::I8 } else { DType::F32 };
    let tensor = |b: &mut ModelBuilder, name: &str, shape: &[i32], scale: f32, zp: i64| {
        let t = b.tensor(g, name, shape, dt);
        if int8 {
            t.quant(scale, zp).id()
        } else {
            t.id()
        }
    };
    let x = tensor(&mut b, "input", &[1, h, h, 4], 0.05, 3);
    let (w, bias) = filter_and_bias(&mut b, g, "w", &[c, 3, 3, 4], 0, 40, int8, 0.0005);
    let y = tensor(&mut b, "conv", &[1, h, h, c], 0.1, -7);
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[y])
        .conv_options(Padding::Same, 1, 1, Activation::Relu);
    let out = if reducer == rl::opcode::FULLY_CONNECTED {
        // A classifier reading the whole map as one vector (micro_speech's
        // DEPTHWISE_CONV_2D → FULLY_CONNECTED), with a fused ReLU.
        // `keep_dims` here: a RESHAPE flattens the map first (Keras'
        // Flatten before Dense).
        let n = h * h * c;
        let x = if keep_dims {
            let flat = tensor(&mut b, "flat", &[1, n], 0.1, -7);
            let shape = b
                .tensor(g, "flat_shape", &[2], DType::I32)
                .data_i32(&[1, n])
                .id();
            b.op(g, BuiltinOp::RESHAPE, &[y, shape], &[flat])
                .reshape_options(&[1, n]);
            flat
        } else {
            y
        };
        let (w, bias) = filter_and_bias(&mut b, g, "fc", &[10, n], 0, 50, int8, 0.002);
        let o = tensor(&mut b, "logits", &[1, 10], 0.2, 4);
        b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, w, bias], &[o])
            .fc_options(Activation::Relu, false);
        o
    } else if reducer == rl::opcode::AVERAGE_POOL_2D {
        let o = tensor(&mut b, "pool", &[1, 1, 1, c], 0.1, -7);
        b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[y], &[o])
            .pool_options(Padding::Valid, (h, h), (h, h), Activation::Relu6);
        o
    } else {
        let shape: Vec<i32> = match (axes, keep_dims) {
            ([1, 2], false) => vec![1, c],
            ([1, 2], true) => vec![1, 1, 1, c],
            _ => vec![1, 1, h, c],
        };
        let o = tensor(&mut b, "reduced", &shape, 0.9, 5);
        let a = b
            .tensor(g, "axes", &[axes.len() as i32], DType::I32)
            .data_i32(axes)
            .id();
        b.op(g, BuiltinOp(i32::from(reducer)), &[y, a], &[o])
            .options(microarena_core::read::ops::OpOptions::Reducer { keep_dims });
        o
    };
    b.inputs(g, &[x]).outputs(g, &[out]);
    b.finish()
}

/// Global average pools, MEAN over H and W, SUM over H alone and a
/// FULLY_CONNECTED over the whole map, int8 and float32 (the float sums in
/// the whole kernel's order), end a stage: the convolution's 48×48×16 map
/// only ever has one row.
#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn reducers_end_a_stage_without_the_map_they_reduce() {
    for int8 in [true, false] {
        let map = 48 * 48 * 16 * if int8 { 1 } else { 4 };
        for (code, axes, keep) in [
            (rl::opcode::AVERAGE_POOL_2D, &[][..], false),
            (rl::opcode::MEAN, &[1, 2][..], false),
            (rl::opcode::MEAN, &[1, 2][..], true),
            (rl::opcode::SUM, &[1][..], true),
            (rl::opcode::FULLY_CONNECTED, &[][..], false),
            (rl::opcode::FULLY_CONNECTED, &[][..], true),
        ] {
            let bytes = conv_then_reducer(int8, code, axes, keep);
            let (plain, banded, stages) = check(&bytes);
            let what = format!("int8 {int8}, op {code}, axes {axes:?}, {keep}");
            let flatten = code == rl::opcode::FULLY_CONNECTED && keep;
            assert_eq!(stages, [(0, 1 + usize::from(flatten))], "{what}");
            // The input is a quarter of the map: beside it, a row and the sums.
            assert!(banded * 2 < map, "{what}: {banded} vs {plain}");
        }
    }
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn a_reducer_without_room_for_its_sums_is_refused() {
    let codes = [
        rl::opcode::AVERAGE_POOL_2D,
        rl::opcode::MEAN,
        rl::opcode::FULLY_CONNECTED,
    ];
    for code in codes {
        let axes: &[i32] = if code == rl::opcode::MEAN {
            &[1, 2]
        } else {
            &[]
        };
        let (image, total, _) = banded_of(&conv_then_reducer(true, code, axes, false));
        let mut arena = vec![0u8; total];
        assert!(Interpreter::new(&image, &mut arena).is_ok());
        // Its sums one i32 short (a MEAN's Prepare asks for them first).
        let at = op_at(&image, 1) + rl::op::SCRATCH_BYTES;
        let mut short = image.clone();
        let bytes = word(&short, at) as u32;
        short[at..at + 4].copy_from_slice(&(bytes - 4).to_le_bytes());
        let err = Interpreter::new(&short, &mut arena).expect_err("short sums");
        assert!(
            matches!(err, Error::InvalidOp { op_index: 1, what, .. } if what.contains("reducer"))
                || matches!(err, Error::ScratchNotPlanned { op_index: 1, .. }),
            "{code}: {err:?}"
        );
        // Its sums over the convolution's ring.
        let mut over = image.clone();
        let ring = word(&over, op_at(&over, 0) + rl::op::SCRATCH_OFF);
        let at = op_at(&over, 1) + rl::op::SCRATCH_OFF;
        over[at..at + 4].copy_from_slice(&(ring as u32).to_le_bytes());
        let err = Interpreter::new(&over, &mut arena).expect_err("overlap");
        assert!(format!("{err:?}").contains("overlap"), "{code}: {err:?}");
    }
}

/// A RESHAPE runs in a stage only folded into the FULLY_CONNECTED that
/// reduces the map it flattens (`stage::flatten_folds`, tested on shapes
/// in `microarena-image`): an image whose RESHAPE writes a whole output
/// inside the stage is refused.
#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn a_flatten_folds_only_into_the_classifier_reducing_its_map() {
    let bytes = conv_then_reducer(true, rl::opcode::FULLY_CONNECTED, &[], true);
    let (image, total, _) = banded_of(&bytes);
    let mut arena = vec![0u8; total];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    assert_eq!(
        image[op_at(&image, 1) + rl::op::OPCODE],
        rl::opcode::RESHAPE
    );
    // Its output whole in the arena (with no bytes): refused.
    let mut whole = image.clone();
    let flat = u16_at(&whole, op_at(&whole, 1) + rl::op::OUTPUT);
    let at = tensor_at(&whole, flat) + rl::tensor::STORAGE;
    whole[at] = rl::STORAGE_ARENA;
    assert!(Interpreter::new(&whole, &mut arena).is_err());
}
