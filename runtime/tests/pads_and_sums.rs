//! PADV2, MIRROR_PAD and ADD_N against values worked by hand from TFLM's
//! kernels (tflite-micro 90b983c2 `pad.cc`, `mirror_pad.cc`, `add_n.cc`);
//! `scripts/verify-kernels.sh` compares every branch with TFLM itself.

#[allow(dead_code)] // the spec helpers serve kernels.rs
mod support;

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::lower::{lower, runtime_arena};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{BuiltinOp, OpOptions};
use support::run_model as run;
use support::{f32s, to_f32};

/// A float MIRROR_PAD of `x` (rank 1) by `before`/`after`.
fn mirror_model(n: i32, before: i32, after: i32, reflect: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[n], DType::F32).id();
    let p = b
        .tensor(g, "paddings", &[1, 2], DType::I32)
        .data_i32(&[before, after])
        .id();
    let y = b.tensor(g, "y", &[n + before + after], DType::F32).id();
    b.op(g, BuiltinOp::MIRROR_PAD, &[x, p], &[y])
        .options(OpOptions::MirrorPad { reflect });
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.finish()
}

#[test]
fn mirror_pad_reflects_without_the_edge_and_symmetric_with_it() {
    let x = f32s(&[1.0, 2.0, 3.0]);
    let out = run(&mirror_model(3, 2, 2, true), std::slice::from_ref(&x));
    assert_eq!(to_f32(&out), [3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0]);
    let out = run(&mirror_model(3, 2, 3, false), &[x]);
    assert_eq!(to_f32(&out), [2.0, 1.0, 1.0, 2.0, 3.0, 3.0, 2.0, 1.0]);
}

#[test]
fn mirror_pad_wider_than_the_input_is_refused_by_plan_and_lowering() {
    // REFLECT can add at most dim - 1 = 2 per side; TFLM would read before
    // the input here.
    let bytes = mirror_model(3, 3, 0, true);
    let m = Model::parse(&bytes).expect("parse");
    let why = runtime_arena(&m).expect_err("too wide").to_string();
    assert!(why.contains("wider than the input"), "{why}");
    assert!(lower(&m).is_err());
    // SYMMETRIC allows dim = 3.
    let bytes = mirror_model(3, 3, 0, false);
    let out = run(&bytes, &[f32s(&[1.0, 2.0, 3.0])]);
    assert_eq!(to_f32(&out), [3.0, 2.0, 1.0, 1.0, 2.0, 3.0]);
}

#[test]
fn padv2_pads_with_its_scalar() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 2], DType::F32).id();
    let p = b
        .tensor(g, "paddings", &[2, 2], DType::I32)
        .data_i32(&[1, 0, 0, 2])
        .id();
    let v = b
        .tensor(g, "value", &[1], DType::F32)
        .data_f32(&[-7.5])
        .id();
    let y = b.tensor(g, "y", &[2, 4], DType::F32).id();
    b.op(g, BuiltinOp::PADV2, &[x, p, v], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let out = run(&b.finish(), &[f32s(&[1.0, 2.0])]);
    assert_eq!(to_f32(&out), [-7.5, -7.5, -7.5, -7.5, 1.0, 2.0, -7.5, -7.5]);
}

/// ADD_N of `n` int8 `[2]` inputs on scale 0.5 and zero point `zp`, output
/// on scale 1.0, zero point 0.
fn add_n_int8(n: usize, zp: i64, inputs: &[[i8; 2]]) -> Vec<i8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let xs: Vec<i32> = (0..n)
        .map(|k| {
            b.tensor(g, &format!("x{k}"), &[2], DType::I8)
                .quant(0.5, zp)
                .id()
        })
        .collect();
    let y = b.tensor(g, "y", &[2], DType::I8).quant(1.0, 0).id();
    b.op(g, BuiltinOp::ADD_N, &xs, &[y]);
    b.inputs(g, &xs).outputs(g, &[y]);
    let inputs: Vec<Vec<u8>> = inputs
        .iter()
        .map(|v| v.iter().map(|&x| x as u8).collect())
        .collect();
    run(&b.finish(), &inputs)
        .into_iter()
        .map(|x| x as i8)
        .collect()
}

#[test]
fn add_n_int8_rescales_each_input_and_sums() {
    // Zero point 0: (2 + 6)·0.5 = 4 and (4 − 8)·0.5 = −2. In TFLM's arithmetic
    // each input becomes y·2^20 · 2^30/2^31 = y·2^19, and the sum times
    // 2^-20 (multiplier 2^30, shift −19) gives the real sum back exactly.
    assert_eq!(add_n_int8(2, 0, &[[2, 4], [6, -8]]), [4, -2]);
    // Zero point 2: the real sum is (4 − 2)·0.5 + (8 − 2)·0.5 = 4, but TFLM's
    // reference AddN starts its sum from the scaled input offset (−2·2^19),
    // not from 0, so it gives (−2 + 2 + 6)·2^19 · 2^-20 = 3.
    assert_eq!(add_n_int8(2, 2, &[[4, 4], [8, 8]]), [3, 3]);
}

#[test]
fn add_n_float_sums_in_input_order() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let xs: Vec<i32> = (0..3)
        .map(|k| b.tensor(g, &format!("x{k}"), &[2], DType::F32).id())
        .collect();
    let y = b.tensor(g, "y", &[2], DType::F32).id();
    b.op(g, BuiltinOp::ADD_N, &xs, &[y]);
    b.inputs(g, &xs).outputs(g, &[y]);
    // (0 + 1e8) + 1 rounds the 1 away, then − 1e8 leaves 0; another order would not.
    let out = run(
        &b.finish(),
        &[f32s(&[1e8, 0.5]), f32s(&[1.0, 0.25]), f32s(&[-1e8, 2.0])],
    );
    assert_eq!(to_f32(&out), [0.0, 2.75]);
}
