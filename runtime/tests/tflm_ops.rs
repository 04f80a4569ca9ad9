//! The kernels for the operators TFLM registers that the runtime gained
//! together (int16 ADD/MUL, variable FULLY_CONNECTED and BATCH_MATMUL
//! operands, comparisons, SELECT_V2, the float32 element-wise ops, FILL,
//! ZEROS_LIKE and the element moves), against hand-computed values, and the
//! one constant-operand rule plan and run share. Bit-exactness against TFLM
//! itself is `scripts/verify-kernels.sh`'s.

#[allow(dead_code)] // the spec helpers serve kernels.rs too
mod support;

use microarena_core::Model;
use microarena_core::lower::runtime_arena;
use microarena_core::read::dtype::DType;
use microarena_image::opcode;
use support::{OpSpec, OptSpec, TensorSpec, build, f32s, i8s, i16s, run_model, to_f32, to_i16};

const F32: DType = DType::F32;
const I8: DType = DType::I8;
const I16: DType = DType::I16;
const I32: DType = DType::I32;
const BOOL: DType = DType::Bool;

fn op(code: u8, inputs: &[i32], output: i32, options: OptSpec) -> OpSpec {
    OpSpec {
        opcode: i32::from(code),
        inputs: inputs.into(),
        outputs: vec![output],
        options,
    }
}

/// Runs one op whose graph inputs are the first `inputs.len()` tensors.
fn run(tensors: &[TensorSpec], op: OpSpec, inputs: &[Vec<u8>]) -> Vec<u8> {
    let g_in: Vec<i32> = (0..inputs.len() as i32).collect();
    let out = op.outputs[0];
    run_model(&build(tensors, &[op], &g_in, &[out]), inputs)
}

/// `plan`'s refusal of a one-op model, or `None` when it has a runtime arena.
fn plan_refusal(tensors: &[TensorSpec], op: OpSpec, n_inputs: i32) -> Option<String> {
    let g_in: Vec<i32> = (0..n_inputs).collect();
    let out = op.outputs[0];
    let bytes = build(tensors, &[op], &g_in, &[out]);
    let model = Model::parse(&bytes).expect("parse");
    runtime_arena(&model).err().map(|e| e.to_string())
}

#[test]
fn int16_add_rescales_with_a_left_shift_of_15() {
    // Equal input scales s, output 2s: each input's multiplier is 1/2, the
    // output's 2s / (2^15 · 2s) = 2^-15, so out = (a + b) / 2.
    let s = 1.0 / 1024.0;
    let t = [
        TensorSpec::act(&[4], I16, s, 0),
        TensorSpec::act(&[4], I16, s, 0),
        TensorSpec::act(&[4], I16, 2.0 * s, 0),
    ];
    let out = run(
        &t,
        op(opcode::ADD, &[0, 1], 2, OptSpec::Add { activation: 0 }),
        &[i16s(&[100, -50, 32767, -7]), i16s(&[300, 50, 32767, 2])],
    );
    // -5 / 2 = -2.5 rounds to -2 or -3 by the multipliers' rounding: TFLM's
    // RoundingDivideByPOT sends a half away from zero: -3.
    assert_eq!(to_i16(&out), [200, 0, 32767, -3]);
}

#[test]
fn int16_mul_needs_zero_points_of_0() {
    // Scales 1/256, 1/256, 1/256: out = a·b / 256, rounded to nearest.
    let s = 1.0 / 256.0;
    let t = [
        TensorSpec::act(&[3], I16, s, 0),
        TensorSpec::act(&[3], I16, s, 0),
        TensorSpec::act(&[3], I16, s, 0),
    ];
    let out = run(
        &t,
        op(opcode::MUL, &[0, 1], 2, OptSpec::Mul { activation: 0 }),
        &[i16s(&[16, -300, 32767]), i16s(&[32, 200, 32767])],
    );
    assert_eq!(to_i16(&out), [2, -234, 32767]);
    let t = [
        TensorSpec::act(&[3], I16, s, 1),
        TensorSpec::act(&[3], I16, s, 0),
        TensorSpec::act(&[3], I16, s, 0),
    ];
    let why = plan_refusal(
        &t,
        op(opcode::MUL, &[0, 1], 2, OptSpec::Mul { activation: 0 }),
        2,
    )
    .expect("refused");
    assert!(why.contains("int16 MUL needs zero points of 0"), "{why}");
}

#[test]
fn fully_connected_takes_a_variable_filter() {
    // out = x · Wᵀ + bias with W a graph input (attention's projections).
    let t = [
        TensorSpec::act(&[1, 2], F32, 0.0, 0),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
        TensorSpec::constant(&[2], F32, f32s(&[0.5, -1.0]), &[], &[]),
        TensorSpec::act(&[1, 2], F32, 0.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::FULLY_CONNECTED, &[0, 1, 2], 3, OptSpec::None),
        &[f32s(&[1.0, 2.0]), f32s(&[3.0, 0.0, 1.0, 1.0])],
    );
    assert_eq!(to_f32(&out), [3.5, 2.0]);
}

#[test]
fn batch_matmul_float_adjoints_and_broadcast() {
    // L = [[1, 2, 3], [4, 5, 6]], R = [[1, 0], [0, 1], [1, 1]]:
    // L·R = [[4, 5], [10, 11]].
    let l = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let r = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let t = [
        TensorSpec::act(&[1, 2, 3], F32, 0.0, 0),
        TensorSpec::act(&[1, 3, 2], F32, 0.0, 0),
        TensorSpec::act(&[1, 2, 2], F32, 0.0, 0),
    ];
    let plain = OptSpec::BatchMatMul {
        adj_x: false,
        adj_y: false,
    };
    let out = run(
        &t,
        op(opcode::BATCH_MATMUL, &[0, 1], 2, plain),
        &[f32s(&l), f32s(&r)],
    );
    assert_eq!(to_f32(&out), [4.0, 5.0, 10.0, 11.0]);
    // The same product with R stored transposed (adj_y): Rᵀ = [[1, 0, 1], [0, 1, 1]].
    let t = [
        TensorSpec::act(&[1, 2, 3], F32, 0.0, 0),
        TensorSpec::act(&[1, 2, 3], F32, 0.0, 0),
        TensorSpec::act(&[1, 2, 2], F32, 0.0, 0),
    ];
    let adj_y = OptSpec::BatchMatMul {
        adj_x: false,
        adj_y: true,
    };
    let out = run(
        &t,
        op(opcode::BATCH_MATMUL, &[0, 1], 2, adj_y),
        &[f32s(&l), f32s(&[1.0, 0.0, 1.0, 0.0, 1.0, 1.0])],
    );
    assert_eq!(to_f32(&out), [4.0, 5.0, 10.0, 11.0]);
    // Two left batches against one right matrix: the second batch is 2·L.
    let t = [
        TensorSpec::act(&[2, 2, 3], F32, 0.0, 0),
        TensorSpec::act(&[1, 3, 2], F32, 0.0, 0),
        TensorSpec::act(&[2, 2, 2], F32, 0.0, 0),
    ];
    let l2: Vec<f32> = l.iter().copied().chain(l.iter().map(|v| 2.0 * v)).collect();
    let out = run(
        &t,
        op(opcode::BATCH_MATMUL, &[0, 1], 2, plain),
        &[f32s(&l2), f32s(&r)],
    );
    assert_eq!(to_f32(&out), [4.0, 5.0, 10.0, 11.0, 8.0, 10.0, 20.0, 22.0]);
}

#[test]
fn batch_matmul_int8_subtracts_zero_points() {
    // Scales 1: Σ (L − 1)(R − 0) = (2 − 1)·1 + (3 − 1)·2 = 5, plus the
    // output zero point 3.
    let t = [
        TensorSpec::act(&[1, 1, 2], I8, 1.0, 1),
        TensorSpec::act(&[1, 2, 1], I8, 1.0, 0),
        TensorSpec::act(&[1, 1, 1], I8, 1.0, 3),
    ];
    let out = run(
        &t,
        op(
            opcode::BATCH_MATMUL,
            &[0, 1],
            2,
            OptSpec::BatchMatMul {
                adj_x: false,
                adj_y: false,
            },
        ),
        &[i8s(&[2, 3]), i8s(&[1, 2])],
    );
    assert_eq!(out, [8]);
}

#[test]
fn comparisons_rescale_int8_and_select_broadcasts() {
    // a: scale 0.5, b: scale 0.25, both zero point 0: a = 4 is 2.0 and
    // b = 8 is 2.0 (equal); a = 5 is 2.5 (greater); a = -2 is -1.0 (less).
    let t = [
        TensorSpec::act(&[3], I8, 0.5, 0),
        TensorSpec::act(&[1], I8, 0.25, 0),
        TensorSpec::act(&[3], BOOL, 0.0, 0),
    ];
    let cases = [
        (opcode::EQUAL, [1, 0, 0]),
        (opcode::GREATER, [0, 1, 0]),
        (opcode::LESS_EQUAL, [1, 0, 1]),
    ];
    for (code, want) in cases {
        let out = run(
            &t,
            op(code, &[0, 1], 2, OptSpec::None),
            &[i8s(&[4, 5, -2]), i8s(&[8])],
        );
        assert_eq!(out, want, "opcode {code}");
    }
    // cond [1, 3] broadcast over rows; y a column broadcast over columns.
    let t = [
        TensorSpec::act(&[1, 3], BOOL, 0.0, 0),
        TensorSpec::act(&[2, 3], F32, 0.0, 0),
        TensorSpec::act(&[2, 1], F32, 0.0, 0),
        TensorSpec::act(&[2, 3], F32, 0.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::SELECT_V2, &[0, 1, 2], 3, OptSpec::None),
        &[
            vec![1, 0, 1],
            f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
            f32s(&[-1.0, -2.0]),
        ],
    );
    assert_eq!(to_f32(&out), [1.0, -1.0, 3.0, 4.0, -2.0, 6.0]);
}

#[test]
fn float_rounding_and_floor_division() {
    let t = [
        TensorSpec::act(&[7], F32, 0.0, 0),
        TensorSpec::act(&[7], F32, 0.0, 0),
    ];
    let x = f32s(&[0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6]);
    let round = to_f32(&run(
        &t,
        op(opcode::ROUND, &[0], 1, OptSpec::None),
        std::slice::from_ref(&x),
    ));
    assert_eq!(round, [0.0, 2.0, 2.0, -0.0, -2.0, 2.0, -3.0]);
    let floor = to_f32(&run(
        &t,
        op(opcode::FLOOR, &[0], 1, OptSpec::None),
        std::slice::from_ref(&x),
    ));
    assert_eq!(floor, [0.0, 1.0, 2.0, -1.0, -2.0, 2.0, -3.0]);
    let ceil = to_f32(&run(&t, op(opcode::CEIL, &[0], 1, OptSpec::None), &[x]));
    assert_eq!(ceil, [1.0, 2.0, 3.0, -0.0, -1.0, 3.0, -2.0]);
    let t = [
        TensorSpec::act(&[4], F32, 0.0, 0),
        TensorSpec::act(&[4], F32, 0.0, 0),
        TensorSpec::act(&[4], F32, 0.0, 0),
    ];
    let (a, b) = (f32s(&[-7.0, 7.0, 7.0, -7.0]), f32s(&[2.0, -3.0, 3.0, -3.0]));
    let div = run(
        &t,
        op(opcode::FLOOR_DIV, &[0, 1], 2, OptSpec::None),
        &[a.clone(), b.clone()],
    );
    assert_eq!(to_f32(&div), [-4.0, -3.0, 2.0, 2.0]);
    let m = run(
        &t,
        op(opcode::FLOOR_MOD, &[0, 1], 2, OptSpec::None),
        &[a, b],
    );
    // The remainder takes the divisor's sign.
    assert_eq!(to_f32(&m), [1.0, -2.0, 1.0, -1.0]);
}

#[test]
fn fill_zeros_like_and_element_moves() {
    let t = [
        TensorSpec::act(&[], F32, 0.0, 0),
        TensorSpec::i32s(&[2], &[2, 2], &[]),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::FILL, &[1, 0], 2, OptSpec::None),
        &[f32s(&[1.25])],
    );
    assert_eq!(to_f32(&out), [1.25; 4]);
    let t = [
        TensorSpec::act(&[3], I8, 0.1, 7),
        TensorSpec::act(&[3], I8, 0.1, 7),
    ];
    let out = run(
        &t,
        op(opcode::ZEROS_LIKE, &[0], 1, OptSpec::None),
        &[i8s(&[1, 2, 3])],
    );
    assert_eq!(out, [0, 0, 0], "the raw value 0, not the zero point");
    // DEPTH_TO_SPACE, block 2: one pixel's 4 channels become a 2×2 patch.
    let t = [
        TensorSpec::act(&[1, 1, 1, 4], I8, 1.0, 0),
        TensorSpec::act(&[1, 2, 2, 1], I8, 1.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::DEPTH_TO_SPACE, &[0], 1, OptSpec::BlockSize(2)),
        &[i8s(&[1, 2, 3, 4])],
    );
    assert_eq!(out, [1, 2, 3, 4]);
    // SLICE rows 1.. (size −1), columns 1..3.
    let t = [
        TensorSpec::act(&[3, 3], F32, 0.0, 0),
        TensorSpec::i32s(&[2], &[1, 1], &[]),
        TensorSpec::i32s(&[2], &[-1, 2], &[]),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::SLICE, &[0, 1, 2], 3, OptSpec::None),
        &[f32s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])],
    );
    assert_eq!(to_f32(&out), [4.0, 5.0, 7.0, 8.0]);
    // DYNAMIC_UPDATE_SLICE: start (2, -1) clamps to (1, 0) for a 2×2 update of 3×3.
    let t = [
        TensorSpec::act(&[3, 3], F32, 0.0, 0),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
        TensorSpec::i32s(&[2], &[2, -1], &[]),
        TensorSpec::act(&[3, 3], F32, 0.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::DYNAMIC_UPDATE_SLICE, &[0, 1, 2], 3, OptSpec::None),
        &[f32s(&[0.0; 9]), f32s(&[1.0, 2.0, 3.0, 4.0])],
    );
    assert_eq!(to_f32(&out), [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 3.0, 4.0, 0.0]);
    // GATHER_ND of rows 2 and 0; REVERSE_V2 along the last axis.
    let t = [
        TensorSpec::act(&[3, 2], F32, 0.0, 0),
        TensorSpec::i32s(&[2, 1], &[2, 0], &[]),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
    ];
    let rows = f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(
        &t,
        op(opcode::GATHER_ND, &[0, 1], 2, OptSpec::None),
        std::slice::from_ref(&rows),
    );
    assert_eq!(to_f32(&out), [5.0, 6.0, 1.0, 2.0]);
    let t = [
        TensorSpec::act(&[3, 2], F32, 0.0, 0),
        TensorSpec::i32s(&[1], &[-1], &[]),
        TensorSpec::act(&[3, 2], F32, 0.0, 0),
    ];
    let out = run(
        &t,
        op(opcode::REVERSE_V2, &[0, 1], 2, OptSpec::None),
        &[rows],
    );
    assert_eq!(to_f32(&out), [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]);
}

#[test]
fn one_constant_operand_rule_for_plan_and_run() {
    // FILL's dims as a graph input: plan refuses with the reason the runtime's
    // Prepare gives (both read opcode::constant_inputs).
    let t = [
        TensorSpec::act(&[2], I32, 0.0, 0),
        TensorSpec::act(&[], F32, 0.0, 0),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
    ];
    let why = plan_refusal(&t, op(opcode::FILL, &[0, 1], 2, OptSpec::None), 2).expect("refused");
    assert!(why.contains("FILL's dims must be constant"), "{why}");
    // A convolution's filter as a graph input: refused, "filter must be constant".
    let t = [
        TensorSpec::act(&[1, 3, 3, 1], I8, 0.1, 0),
        TensorSpec::act(&[1, 1, 1, 1], I8, 0.1, 0),
        TensorSpec::act(&[1, 3, 3, 1], I8, 0.1, 0),
    ];
    let conv = OptSpec::Conv {
        padding_valid: true,
        stride: 1,
        activation: 0,
    };
    let why = plan_refusal(&t, op(opcode::CONV_2D, &[0, 1], 2, conv), 2).expect("refused");
    assert!(why.contains("filter must be constant"), "{why}");
    // FULLY_CONNECTED and BATCH_MATMUL declare no constant operand.
    assert!(
        opcode::constant_inputs(opcode::FULLY_CONNECTED)
            .0
            .is_empty()
    );
    assert!(opcode::constant_inputs(opcode::BATCH_MATMUL).0.is_empty());
}

#[test]
fn int16_tensors_of_the_new_kernels_round_trip() {
    // SELECT_V2 on int16 moves raw values whatever the scales.
    let t = [
        TensorSpec::act(&[2], BOOL, 0.0, 0),
        TensorSpec::act(&[2], I16, 0.1, 0),
        TensorSpec::act(&[2], I16, 0.2, 0),
        TensorSpec::act(&[2], I16, 0.3, 0),
    ];
    let out = run(
        &t,
        op(opcode::SELECT_V2, &[0, 1, 2], 3, OptSpec::None),
        &[vec![0, 1], i16s(&[-5, 6]), i16s(&[300, -400])],
    );
    assert_eq!(to_i16(&out), [300, 6]);
}

#[test]
fn plan_refuses_shapes_the_kernels_refuse() {
    // [2, 3] against [2, 4]: no broadcast; the runtime's Prepare refuses it,
    // so plan does too, with the same words.
    let t = [
        TensorSpec::act(&[2, 3], F32, 0.0, 0),
        TensorSpec::act(&[2, 4], F32, 0.0, 0),
        TensorSpec::act(&[2, 4], BOOL, 0.0, 0),
    ];
    let why = plan_refusal(&t, op(opcode::LESS, &[0, 1], 2, OptSpec::None), 2).expect("refused");
    assert!(why.contains("shapes do not broadcast"), "{why}");
    // A SELECT_V2 whose output is larger than any input broadcasts to.
    let t = [
        TensorSpec::act(&[3], BOOL, 0.0, 0),
        TensorSpec::act(&[3], F32, 0.0, 0),
        TensorSpec::act(&[3], F32, 0.0, 0),
        TensorSpec::act(&[2, 3], F32, 0.0, 0),
    ];
    let why =
        plan_refusal(&t, op(opcode::SELECT_V2, &[0, 1, 2], 3, OptSpec::None), 3).expect("refused");
    assert!(why.contains("SELECT_V2 shapes"), "{why}");
}
