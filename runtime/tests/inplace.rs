//! In-place execution: builder models where aliasing must and must not
//! happen (a dying input, an input read later, a graph output, broadcasting,
//! one tensor as both operands, reshape chains), every in-place kernel run
//! over one buffer with outputs identical to the plain run, the measured
//! high-water equal to core's prediction, and images whose in-place marks
//! lie refused at construction.

mod predicted;

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::example::pseudo_random_bytes;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, OpOptions, Padding};
use microarena_image as rl;
use microarena_runtime::{Error, Interpreter};
use predicted::{IN_PLACE, PLAIN, Run};

/// Runs `bytes` with `options` in exactly the predicted arena.
fn run(bytes: &[u8], options: LowerOptions) -> Run {
    predicted::run(bytes, options, 17)
}

/// Runs `bytes` plain and in place: identical outputs, each arena measured
/// as predicted; returns the in-place run.
fn both(bytes: &[u8]) -> (Run, Run) {
    let plain = run(bytes, PLAIN);
    let fast = run(bytes, IN_PLACE);
    assert!(plain.in_place.is_empty());
    assert_eq!(fast.outputs, plain.outputs, "in place differs from plain");
    assert_eq!(plain.high_water, plain.predicted);
    assert_eq!(fast.high_water, fast.predicted);
    assert!(fast.head <= plain.head);
    (plain, fast)
}

/// (op, slot, overwrites) of each alias.
fn marks(r: &Run) -> Vec<(usize, usize, bool)> {
    r.in_place
        .iter()
        .map(|a| (a.op, a.slot, a.overwrites))
        .collect()
}

const SHAPE: [i32; 4] = [1, 8, 8, 4];

type TensorId = i32;

fn q8(b: &mut ModelBuilder, g: usize, name: &str, shape: &[i32]) -> TensorId {
    b.tensor(g, name, shape, DType::I8).quant(0.05, -3).id()
}

/// int8 QUANTIZE (requantize) of graph input `x`: a tensor that is no graph
/// input, so the ops after it may overwrite it.
fn requant(b: &mut ModelBuilder, g: usize, x: TensorId, name: &str, shape: &[i32]) -> TensorId {
    let a = b.tensor(g, name, shape, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::QUANTIZE, &[x], &[a]);
    a
}

#[test]
fn a_dying_input_is_overwritten_and_a_graph_input_is_not() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[a], &[r]);
    let s = b
        .tensor(g, "s", &SHAPE, DType::I8)
        .quant(1.0 / 256.0, -128)
        .id();
    b.op(g, BuiltinOp::LOGISTIC, &[r], &[s]);
    let k = b
        .tensor(g, "k", &[4], DType::I8)
        .quant(0.02, 0)
        .data(&[1, 2, 3, 4])
        .id();
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::ADD, &[s, k], &[y])
        .add_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let (_, fast) = both(&b.finish());
    // QUANTIZE reads the graph input; the others overwrite their dying input
    // (ADD's constant operand is broadcast, its own is not).
    assert_eq!(marks(&fast), [(1, 0, true), (2, 0, true), (3, 0, true)]);
}

#[test]
fn in_place_saves_a_buffer_when_a_third_tensor_is_live() {
    // x is read again by the last op: plain, x, a and r are live at RELU
    // (3 × 256 B); in place, r is a's bytes and y is r's (2 × 256 B).
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[a], &[r]);
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::ADD, &[r, x], &[y])
        .add_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let (plain, fast) = both(&b.finish());
    assert_eq!(plain.head, 768);
    assert_eq!(fast.head, 512);
    assert_eq!(marks(&fast), [(1, 0, true), (2, 0, true)]);
}

#[test]
fn an_input_read_later_or_a_graph_output_is_kept() {
    // a is read by the ADD after the RELU: the RELU keeps it; the ADD may
    // overwrite r (its slot 0), which dies there.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[a], &[r]);
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::ADD, &[r, a], &[y])
        .add_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let (_, fast) = both(&b.finish());
    assert_eq!(marks(&fast), [(2, 0, true)]);

    // a is a graph output: nothing may overwrite it.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[a], &[r]);
    b.inputs(g, &[x]).outputs(g, &[a, r]);
    let (_, fast) = both(&b.finish());
    assert_eq!(marks(&fast), []);
}

#[test]
fn a_broadcast_operand_or_one_tensor_twice_is_not_overwritten() {
    // ADD(s, a): s is broadcast and a is read later, so neither is
    // overwritten; MUL(c, a) overwrites c.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x1 = q8(&mut b, g, "x1", &SHAPE);
    let x2 = q8(&mut b, g, "x2", &[1, 1, 1, 4]);
    let a = requant(&mut b, g, x1, "a", &SHAPE);
    let s = requant(&mut b, g, x2, "s", &[1, 1, 1, 4]);
    let c = q8(&mut b, g, "c", &SHAPE);
    b.op(g, BuiltinOp::ADD, &[s, a], &[c])
        .add_options(Activation::None);
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::MUL, &[c, a], &[y])
        .mul_options(Activation::None);
    b.inputs(g, &[x1, x2]).outputs(g, &[y]);
    let (_, fast) = both(&b.finish());
    assert_eq!(marks(&fast), [(3, 0, true)]);

    // The broadcast operand dies, the full one is read later: still none.
    // ADD(a, a): one tensor as both operands is never overwritten.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::ADD, &[a, a], &[y])
        .add_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let (_, fast) = both(&b.finish());
    assert_eq!(marks(&fast), []);
}

/// x → QUANTIZE → a → RESHAPE → r → RELU → s → RESHAPE → t → LOGISTIC → u,
/// and, with `read_a_later`, ADD(u, a) → v.
fn reshape_chain(read_a_later: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &[1, 256], DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RESHAPE, &[a], &[r])
        .reshape_options(&[1, 256]);
    let s = b.tensor(g, "s", &[1, 256], DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[r], &[s]);
    let t = b.tensor(g, "t", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RESHAPE, &[s], &[t])
        .reshape_options(&SHAPE);
    let u = b
        .tensor(g, "u", &SHAPE, DType::I8)
        .quant(1.0 / 256.0, -128)
        .id();
    b.op(g, BuiltinOp::LOGISTIC, &[t], &[u]);
    let out = if read_a_later {
        let v = q8(&mut b, g, "v", &SHAPE);
        b.op(g, BuiltinOp::ADD, &[u, a], &[v])
            .add_options(Activation::None);
        v
    } else {
        u
    };
    b.inputs(g, &[x]).outputs(g, &[out]);
    b.finish()
}

#[test]
fn aliases_compose_through_reshapes() {
    let (_, fast) = both(&reshape_chain(false));
    assert_eq!(
        marks(&fast),
        [(1, 0, false), (2, 0, true), (3, 0, false), (4, 0, true)]
    );
    // a is read at the end: the RELU over r (a's bytes) must not run in
    // place; the reshapes stay aliases, and LOGISTIC and ADD overwrite the
    // group that began at the RELU.
    let (_, fast) = both(&reshape_chain(true));
    assert_eq!(
        marks(&fast),
        [(1, 0, false), (3, 0, false), (4, 0, true), (5, 0, true)]
    );
}

#[test]
fn in_place_combines_with_opdata_in_flash_and_bands() {
    let bytes = reshape_chain(true);
    let plain = run(&bytes, PLAIN);
    for (opdata, execution) in [
        (OpDataIn::Flash, Execution::Plain),
        (OpDataIn::Tail, Execution::Banded),
        (OpDataIn::Flash, Execution::Banded),
    ] {
        let r = run(
            &bytes,
            LowerOptions {
                opdata,
                execution,
                in_place: true,
            },
        );
        assert_eq!(r.outputs, plain.outputs);
        assert_eq!(r.high_water, r.predicted);
        assert_eq!(r.in_place.len(), 4);
    }
}

/// The ops whose kernels overwrite an input, each run after a RELU of the
/// graph input (which is kept) so that it may overwrite the RELU's output.
#[test]
fn every_in_place_kernel_matches_the_plain_run() {
    use microarena_image::opcode as oc;
    let unary = [
        oc::RELU,
        oc::RELU6,
        oc::LEAKY_RELU,
        oc::HARD_SWISH,
        oc::LOGISTIC,
        oc::TANH,
        oc::ABS,
        oc::QUANTIZE,
    ];
    let unary_f32 = [oc::SQRT, oc::RSQRT, oc::LOG, oc::EXP, oc::CAST];
    let binary = [
        oc::ADD,
        oc::MUL,
        oc::SUB,
        oc::MAXIMUM,
        oc::MINIMUM,
        oc::SQUARED_DIFFERENCE,
    ];
    let mut cases = 0;
    for int8 in [false, true] {
        let dt = if int8 { DType::I8 } else { DType::F32 };
        // int8 RSQRT: its input (a RELU's output) is at or above the zero point.
        let ops: Vec<(u8, Option<bool>)> = unary
            .iter()
            .chain(if int8 {
                &[oc::RSQRT][..]
            } else {
                &unary_f32[..]
            })
            .map(|&c| (c, None))
            .chain(
                binary
                    .iter()
                    .chain(if int8 { &[][..] } else { &[oc::DIV][..] })
                    .flat_map(|&c| [(c, Some(false)), (c, Some(true))]),
            )
            // PRELU over its input, alpha a broadcast constant.
            .chain([(oc::PRELU, Some(false))])
            .collect();
        for (code, constant_first) in ops {
            if code == oc::QUANTIZE && !int8 {
                continue;
            }
            let mut b = ModelBuilder::new();
            let g = b.subgraph();
            let t = |b: &mut ModelBuilder, name: &str, scale: f32, zp: i64| {
                let t = b.tensor(g, name, &SHAPE, dt);
                if int8 {
                    t.quant(scale, zp).id()
                } else {
                    t.id()
                }
            };
            let x = t(&mut b, "x", 0.05, -3);
            let a = t(&mut b, "a", 0.05, -3);
            b.op(g, BuiltinOp::RELU, &[x], &[a]);
            let (scale, zp) = match code {
                oc::LOGISTIC => (1.0 / 256.0, -128),
                oc::TANH => (1.0 / 128.0, 0),
                oc::MAXIMUM | oc::MINIMUM => (0.05, -3),
                _ => (0.07, 2),
            };
            let y = t(&mut b, "y", scale, zp);
            let op = BuiltinOp(i32::from(code));
            match constant_first {
                None => {
                    let built = b.op(g, op, &[a], &[y]);
                    if code == oc::LEAKY_RELU {
                        built.options(OpOptions::LeakyRelu { alpha: 0.2 });
                    }
                }
                Some(first) => {
                    let shape: &[i32] = if code == oc::PRELU { &[4] } else { &SHAPE };
                    let n = shape.iter().product::<i32>() as usize;
                    let raw = pseudo_random_bytes(u32::from(code), n);
                    let k = b.tensor(g, "k", shape, dt);
                    let k = if int8 {
                        k.data(&raw).quant(0.05, -3).id()
                    } else {
                        let v: Vec<f32> = raw
                            .iter()
                            .map(|&v| f32::from(v as i8) / 16.0 + 0.25)
                            .collect();
                        k.data_f32(&v).id()
                    };
                    let inputs = if first { [k, a] } else { [a, k] };
                    let built = b.op(g, op, &inputs, &[y]);
                    if matches!(code, oc::ADD | oc::SUB | oc::DIV) {
                        built.add_options(Activation::None);
                    } else if code == oc::MUL {
                        built.mul_options(Activation::None);
                    }
                }
            }
            b.inputs(g, &[x]).outputs(g, &[y]);
            let bytes = b.finish();
            let (_, fast) = both(&bytes);
            let slot = usize::from(constant_first == Some(true));
            assert_eq!(
                marks(&fast),
                [(1, slot, true)],
                "{} {dt:?} (constant first: {constant_first:?})",
                rl::op_name(i32::from(code))
            );
            cases += 1;
        }
    }
    // float32: 7 unary (no QUANTIZE) + 5 + 7 binary × 2 + PRELU;
    // int8: 8 unary + RSQRT + 6 binary × 2 + PRELU.
    assert_eq!(cases, (7 + 5 + 14 + 1) + (8 + 1 + 12 + 1));
}

#[test]
fn a_false_in_place_mark_is_refused_at_construction() {
    // RELU over a (op 1) marked in place, then its output moved 16 bytes:
    // the output is no longer the input's region.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[a], &[r]);
    b.inputs(g, &[x]).outputs(g, &[r]);
    let bytes = b.finish();
    let model = Model::parse(&bytes).expect("parse");
    let image = lower_with(&model, &IN_PLACE).expect("lower");
    let need = runtime_arena_with(&model, &IN_PLACE).expect("arena");
    assert_eq!(need.in_place.len(), 1);
    let word = |img: &[u8], at: usize| u32::from_le_bytes(img[at..at + 4].try_into().unwrap());
    let ops = word(&image, rl::header::OPS_OFF) as usize;
    let tensors = word(&image, rl::header::TENSORS_OFF) as usize;
    let relu = ops + rl::OP_BYTES;
    assert_eq!(image[relu + rl::op::IN_PLACE], 1);
    let mut arena = vec![0u8; need.total_bytes as usize + 64];
    assert!(Interpreter::new(&image, &mut arena).is_ok());

    let r_loc = tensors + r as usize * rl::TENSOR_BYTES + rl::tensor::LOCATION;
    let mut moved = image.clone();
    let at = word(&moved, r_loc) + 16;
    moved[r_loc..r_loc + 4].copy_from_slice(&at.to_le_bytes());
    let refused = |img: &[u8], what: &str| {
        let mut arena = vec![0u8; need.total_bytes as usize + 64];
        match Interpreter::new(img, &mut arena) {
            Err(Error::InvalidOp {
                op_index, what: w, ..
            }) => {
                assert_eq!(op_index, 1);
                assert_eq!(w, what);
            }
            other => panic!("expected InvalidOp, got {other:?}"),
        }
    };
    refused(&moved, "an in-place op's output is not its input's region");
    // The QUANTIZE (op 0) marked in place over the graph input, which it
    // cannot be: x and a are different regions.
    let mut quant = image.clone();
    quant[ops + rl::op::IN_PLACE] = 1;
    let mut arena = vec![0u8; need.total_bytes as usize + 64];
    assert!(matches!(
        Interpreter::new(&quant, &mut arena),
        Err(Error::InvalidOp { op_index: 0, .. })
    ));
    // Slot 2 of RELU: no such input, and not one the kernel overwrites.
    let mut slot = image;
    slot[relu + rl::op::IN_PLACE] = 3;
    refused(&slot, "in place over an input its kernel cannot overwrite");
}

/// A banded stage (an inverted bottleneck at 48×48: CONV_2D 8→32,
/// DEPTHWISE_CONV_2D, CONV_2D 32→8) followed by
/// ops that run in place (RESHAPE, LOGISTIC over the stage's output): both
/// modes at once, bit-identical to the plain run, measured as predicted.
#[test]
fn a_banded_stage_and_in_place_ops_run_together() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let act = |b: &mut ModelBuilder, name: &str, shape: &[i32], k: i64| {
        b.tensor(g, name, shape, DType::I8)
            .quant(0.05 + 0.01 * k as f32, k - 2)
            .id()
    };
    let layer = |b: &mut ModelBuilder, x: TensorId, k: i64, depthwise: bool, f: i32, ci, co| {
        let shape = [1, 48, 48, co];
        let wshape = if depthwise {
            [1, f, f, co]
        } else {
            [co, f, f, ci]
        };
        let n = wshape.iter().product::<i32>() as usize;
        let scales: Vec<f32> = (0..co).map(|c| 0.01 + 0.001 * c as f32).collect();
        let w = b
            .tensor(g, &format!("w{k}"), &wshape, DType::I8)
            .data(&pseudo_random_bytes(k as u32 + 3, n))
            .quant_per_channel(
                &scales,
                &vec![0; co as usize],
                if depthwise { 3 } else { 0 },
            )
            .id();
        let bias: Vec<i32> = (0..co).map(|c| c * 16 - 40).collect();
        let bi = b
            .tensor(g, &format!("b{k}"), &[co], DType::I32)
            .data_i32(&bias)
            .quant_per_channel(&vec![0.0005; co as usize], &vec![0; co as usize], 0)
            .id();
        let y = act(b, &format!("t{k}"), &shape, k);
        let op = if depthwise {
            BuiltinOp::DEPTHWISE_CONV_2D
        } else {
            BuiltinOp::CONV_2D
        };
        let built = b.op(g, op, &[x, w, bi], &[y]);
        if depthwise {
            built.depthwise_options(Padding::Same, 1, 1, 1, Activation::Relu6);
        } else {
            built.conv_options(Padding::Same, 1, 1, Activation::Relu);
        }
        y
    };
    let x = act(&mut b, "x", &[1, 48, 48, 8], 0);
    // Expand to 32 channels, depthwise 3×3, project back to 8.
    let t1 = layer(&mut b, x, 1, false, 1, 8, 32);
    let t2 = layer(&mut b, t1, 2, true, 3, 32, 32);
    let t3 = layer(&mut b, t2, 3, false, 1, 32, 8);
    let r = b
        .tensor(g, "r", &[1, 48 * 48 * 8], DType::I8)
        .quant(0.08, 1)
        .id();
    b.op(g, BuiltinOp::RESHAPE, &[t3], &[r])
        .reshape_options(&[1, 48 * 48 * 8]);
    let y = b
        .tensor(g, "y", &[1, 48 * 48 * 8], DType::I8)
        .quant(1.0 / 256.0, -128)
        .id();
    b.op(g, BuiltinOp::LOGISTIC, &[r], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let bytes = b.finish();
    let plain = run(&bytes, PLAIN);
    let both = LowerOptions {
        opdata: OpDataIn::Flash,
        execution: Execution::Banded,
        in_place: true,
    };
    let r = run(&bytes, both);
    let model = Model::parse(&bytes).expect("parse");
    let need = runtime_arena_with(&model, &both).expect("arena");
    assert!(!need.stages.is_empty(), "the convolutions form a stage");
    assert_eq!(marks(&r), [(3, 0, false), (4, 0, true)]);
    assert_eq!(r.outputs, plain.outputs);
    assert_eq!(r.high_water, r.predicted);
    assert!(r.head < plain.head);
}

/// int32 binary ops (unquantized, wrapping) overwrite either operand too.
#[test]
fn int32_binary_ops_run_in_place() {
    use microarena_image::opcode as oc;
    for code in [
        oc::ADD,
        oc::MUL,
        oc::SUB,
        oc::MAXIMUM,
        oc::MINIMUM,
        oc::SQUARED_DIFFERENCE,
    ] {
        for constant_first in [false, true] {
            let mut b = ModelBuilder::new();
            let g = b.subgraph();
            let t = |b: &mut ModelBuilder, name: &str| b.tensor(g, name, &SHAPE, DType::I32).id();
            let n = SHAPE.iter().product::<i32>() as usize;
            let ints = |seed: u32| -> Vec<i32> {
                pseudo_random_bytes(seed, 4 * n)
                    .chunks(4)
                    .map(|w| i32::from_le_bytes([w[0], w[1], w[2], w[3]]) >> 8)
                    .collect()
            };
            let (x, a, y) = (t(&mut b, "x"), t(&mut b, "a"), t(&mut b, "y"));
            let k0 = b
                .tensor(g, "k0", &SHAPE, DType::I32)
                .data_i32(&ints(3))
                .id();
            b.op(g, BuiltinOp::ADD, &[x, k0], &[a])
                .add_options(Activation::None);
            let k = b
                .tensor(g, "k", &SHAPE, DType::I32)
                .data_i32(&ints(u32::from(code)))
                .id();
            let inputs = if constant_first { [k, a] } else { [a, k] };
            let built = b.op(g, BuiltinOp(i32::from(code)), &inputs, &[y]);
            if code == oc::MUL {
                built.mul_options(Activation::None);
            } else if matches!(code, oc::ADD | oc::SUB) {
                built.add_options(Activation::None);
            }
            b.inputs(g, &[x]).outputs(g, &[y]);
            let (_, fast) = both(&b.finish());
            assert_eq!(
                marks(&fast),
                [(1, usize::from(constant_first), true)],
                "{}",
                rl::op_name(i32::from(code))
            );
        }
    }
}

/// A hostile graph that writes one tensor twice (found by the runtime fuzz
/// target): the second writer's output is not born at its op, so it must
/// not take its input's bytes. Before, the chooser marked it and lowering
/// failed (`validate_aliased` refused the plan) where the plain run worked.
#[test]
fn a_tensor_written_twice_is_not_an_in_place_output() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let t = requant(&mut b, g, x, "t", &SHAPE);
    let u = b.tensor(g, "u", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[t], &[u]);
    // t written again, from u, which dies here: an overwrite if t were new.
    b.op(g, BuiltinOp::RELU, &[u], &[t]);
    let y = b.tensor(g, "y", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[t], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let (_, fast) = both(&b.finish());
    assert!(
        !marks(&fast).iter().any(|&(op, _, _)| op == 2),
        "op 2 writes a tensor op 0 wrote: {:?}",
        marks(&fast)
    );
}

/// The other side of a tensor written twice (found by the runtime fuzz
/// target on a mutated audio preprocessor): its last reader before the
/// second write must not overwrite it, since its bytes live until that
/// write (the plan's lifetime ends at the last op that reads *or writes* a
/// tensor). Before, the chooser looked at reads only and lowering failed.
#[test]
fn a_tensor_written_again_later_is_not_overwritten_by_its_last_reader() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let t = requant(&mut b, g, x, "t", &SHAPE);
    let u = b.tensor(g, "u", &SHAPE, DType::I8).quant(0.06, 1).id();
    // The last read of t: an overwrite of t if t died here.
    b.op(g, BuiltinOp::RELU, &[t], &[u]);
    let v = b.tensor(g, "v", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RELU, &[u], &[v]);
    // t written again (nobody reads it after).
    b.op(g, BuiltinOp::RELU, &[v], &[t]);
    b.inputs(g, &[x]).outputs(g, &[v]);
    let (_, fast) = both(&b.finish());
    assert!(
        !marks(&fast).iter().any(|&(op, _, _)| op == 1),
        "op 1 reads t, which op 3 writes again: {:?}",
        marks(&fast)
    );
}

/// An op whose output is also one of its inputs (found by the runtime
/// fuzz target: MUL(y, a) → y, nothing written before): y is read before it
/// is written, so it takes no input's bytes. Before, the chooser gave it
/// a's, and the runtime refused the image (y, an input, shared the region).
#[test]
fn an_op_reading_its_own_output_is_not_in_place() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::MUL, &[y, a], &[y])
        .mul_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let bytes = b.finish();
    let plain = run(&bytes, PLAIN);
    let fast = run(&bytes, IN_PLACE);
    assert_eq!(fast.high_water, fast.predicted);
    assert!(
        !marks(&fast).iter().any(|&(op, _, _)| op == 1),
        "op 1 reads its own output: {:?}",
        marks(&fast)
    );
    // y's value is undefined (read before written); only the run matters.
    assert_eq!(fast.outputs.len(), plain.outputs.len());
}

/// A RESHAPE's input written again while the reshaped tensor is still
/// read: a → RESHAPE → r, then RELU(x) writes a, then ADD(r, a). Sharing
/// a's bytes, r would see the second write.
#[test]
fn an_alias_of_a_tensor_written_again_is_not_taken() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = q8(&mut b, g, "x", &SHAPE);
    let a = requant(&mut b, g, x, "a", &SHAPE);
    let r = b.tensor(g, "r", &[1, 256], DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RESHAPE, &[a], &[r])
        .reshape_options(&[1, 256]);
    b.op(g, BuiltinOp::RELU, &[x], &[a]);
    let rr = b.tensor(g, "rr", &SHAPE, DType::I8).quant(0.06, 1).id();
    b.op(g, BuiltinOp::RESHAPE, &[r], &[rr])
        .reshape_options(&SHAPE);
    let y = q8(&mut b, g, "y", &SHAPE);
    b.op(g, BuiltinOp::ADD, &[rr, a], &[y])
        .add_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    both(&b.finish());
}

/// RESHAPE whose shape operand is its data tensor (found by the runtime
/// fuzz target: RESHAPE(a, a) on int32): the runtime keeps an in-place op's
/// other operands apart from its region, so the reshape is no alias there.
#[test]
fn a_reshape_reading_its_data_as_shape_is_no_alias() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[4], DType::I32).id();
    let a = b.tensor(g, "a", &[4], DType::I32).id();
    b.op(g, BuiltinOp::ADD, &[x, x], &[a])
        .add_options(Activation::None);
    let r = b.tensor(g, "r", &[4], DType::I32).id();
    b.op(g, BuiltinOp::RESHAPE, &[a, a], &[r]);
    let y = b.tensor(g, "y", &[4], DType::I32).id();
    b.op(g, BuiltinOp::ADD, &[r, r], &[y])
        .add_options(Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let (_, fast) = both(&b.finish());
    assert!(
        !marks(&fast).iter().any(|&(op, _, _)| op == 1),
        "{:?}",
        marks(&fast)
    );
}

/// int8 `[1, T, f]` (or time-major `[T, 1, f]`) → DEQUANTIZE → float32
/// UNIDIRECTIONAL_SEQUENCE_LSTM with `s` units (no peepholes, projection or
/// layer norms) → `[.., s]`, the graph output.
fn float_lstm(t: i32, f: i32, s: i32, time_major: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let steps = |last: i32| {
        if time_major {
            [t, 1, last]
        } else {
            [1, t, last]
        }
    };
    let x = q8(&mut b, g, "x", &steps(f));
    let xf = b.tensor(g, "xf", &steps(f), DType::F32).id();
    b.op(g, BuiltinOp::DEQUANTIZE, &[x], &[xf]);
    let mut seed = 40;
    let mut weights = |b: &mut ModelBuilder, name: &str, shape: &[i32]| {
        let n = shape.iter().product::<i32>() as usize;
        seed += 1;
        let v: Vec<f32> = pseudo_random_bytes(seed, n)
            .iter()
            .map(|&r| f32::from(r as i8) / 256.0)
            .collect();
        b.tensor(g, name, shape, DType::F32).data_f32(&v).id()
    };
    let mut inputs = vec![xf];
    for gate in ["i", "f", "c", "o"] {
        inputs.push(weights(&mut b, &format!("w_{gate}"), &[s, f]));
    }
    for gate in ["i", "f", "c", "o"] {
        inputs.push(weights(&mut b, &format!("r_{gate}"), &[s, s]));
    }
    inputs.extend([-1, -1, -1]);
    for gate in ["i", "f", "c", "o"] {
        inputs.push(weights(&mut b, &format!("b_{gate}"), &[s]));
    }
    inputs.extend([-1, -1]);
    let h = b.tensor(g, "h", &[1, s], DType::F32).variable().id();
    let c = b.tensor(g, "c", &[1, s], DType::F32).variable().id();
    inputs.extend([h, c, -1, -1, -1, -1]);
    let y = b.tensor(g, "y", &steps(s), DType::F32).id();
    b.op(g, BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM, &inputs, &[y])
        .lstm_options(microarena_core::read::ops::LstmOptions {
            activation: Activation::Tanh,
            cell_clip: 0.0,
            proj_clip: 0.0,
            time_major,
            asymmetric_quantize_inputs: false,
        });
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.finish()
}

/// An LSTM writes each output step over the input step it has just read
/// (`opcode::writes_behind_input`) when its steps are no larger: the
/// sequence and the outputs share one buffer, outputs identical to the
/// plain run, in the predicted arena; a wider output keeps its own.
#[test]
#[cfg_attr(miri, ignore = "LSTM models: minutes under Miri")]
fn an_lstm_writes_its_outputs_behind_its_inputs() {
    for time_major in [false, true] {
        let bytes = float_lstm(20, 16, 8, time_major);
        let (plain, fast) = both(&bytes);
        assert_eq!(marks(&fast), [(1, 0, true)], "time_major {time_major}");
        // The 20×8 float output (640 B) lives in the input's 1,280 B: the
        // peak moves to the DEQUANTIZE (1,600 B with its int8 input).
        assert!(fast.head < plain.head, "time_major {time_major}");
        assert!(fast.head <= 1_600 + 64, "{} B", fast.head);
        // Output steps wider than the input's would overtake them.
        let (_, wide) = both(&float_lstm(20, 8, 16, time_major));
        assert!(marks(&wide).is_empty(), "{:?}", marks(&wide));
    }
}

/// An LSTM marked over its input with an output that does not fit behind
/// it, or not starting at it, is refused at construction.
#[test]
#[cfg_attr(miri, ignore = "LSTM models: minutes under Miri")]
fn an_lstm_over_an_input_it_would_overtake_is_refused() {
    let bytes = float_lstm(20, 16, 8, false);
    let model = Model::parse(&bytes).expect("parse");
    let image = lower_with(&model, &IN_PLACE).expect("lower");
    let need = runtime_arena_with(&model, &IN_PLACE).expect("arena");
    let word = |img: &[u8], at: usize| u32::from_le_bytes(img[at..at + 4].try_into().unwrap());
    let ops = word(&image, rl::header::OPS_OFF) as usize;
    let tensors = word(&image, rl::header::TENSORS_OFF) as usize;
    let lstm = ops + rl::OP_BYTES;
    assert_eq!(image[lstm + rl::op::IN_PLACE], 1);
    let mut arena = vec![0u8; need.total_bytes as usize + 4096];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
    let refused = |img: &[u8]| {
        let mut arena = vec![0u8; need.total_bytes as usize + 4096];
        match Interpreter::new(img, &mut arena) {
            Err(Error::InvalidOp {
                op_index: 1, what, ..
            }) => assert!(what.contains("over its input"), "{what}"),
            other => panic!("expected InvalidOp, got {other:?}"),
        }
    };
    let output = u16::from_le_bytes([
        image[lstm + rl::op::OUTPUT],
        image[lstm + rl::op::OUTPUT + 1],
    ]);
    let y = tensors + usize::from(output) * rl::TENSOR_BYTES;
    // The output moved 16 bytes into the input.
    let mut moved = image.clone();
    let at = word(&moved, y + rl::tensor::LOCATION) + 16;
    moved[y + rl::tensor::LOCATION..y + rl::tensor::LOCATION + 4]
        .copy_from_slice(&at.to_le_bytes());
    refused(&moved);
    // The input's record shrunk below the output's bytes (as if its steps
    // were narrower than the output's).
    let x = u16::from_le_bytes([
        image[lstm + rl::op::INPUTS],
        image[lstm + rl::op::INPUTS + 1],
    ]);
    let xb = tensors + usize::from(x) * rl::TENSOR_BYTES;
    let mut narrow = image.clone();
    let dims = xb + rl::tensor::DIMS;
    narrow[dims + 8..dims + 12].copy_from_slice(&4u32.to_le_bytes());
    narrow[xb + rl::tensor::BYTES..xb + rl::tensor::BYTES + 4]
        .copy_from_slice(&(20 * 4 * 4u32).to_le_bytes());
    let mut arena = vec![0u8; need.total_bytes as usize + 4096];
    assert!(Interpreter::new(&narrow, &mut arena).is_err());
}
