//! Kernel unit tests against hand-computed values, plus the interpreter's
//! error paths (arena too small, allocation during invoke, unsupported op).
//! Models are written in memory with core's `ModelBuilder`, from the small
//! tensor/op descriptions in `support`.

mod support;

use microarena_core::Model;
use microarena_core::build::example::{demo_model, pseudo_random_bytes};
use microarena_core::lower::{LowerError, lower, runtime_arena};
use microarena_core::read::dtype::DType;
use microarena_image as rl;
use microarena_runtime::{Error, Interpreter};
use support::{OpSpec, OptSpec, TensorSpec, build, f32s, i8s, run_model, to_f32, to_i8, to_i16};

/// Builds, lowers and runs a one-op model whose graph inputs are the first
/// `inputs.len()` tensors and whose output is the op's output.
fn run(tensors: Vec<TensorSpec>, op: OpSpec, inputs: &[Vec<u8>]) -> Vec<u8> {
    let g_in: Vec<i32> = (0..inputs.len() as i32).collect();
    let out = op.outputs[0];
    run_model(&build(&tensors, &[op], &g_in, &[out]), inputs)
}

fn op(opcode: u8, inputs: &[i32], output: i32, options: OptSpec) -> OpSpec {
    OpSpec {
        opcode: i32::from(opcode),
        inputs: inputs.into(),
        outputs: vec![output],
        options,
    }
}

const I8: DType = DType::I8;
const F32: DType = DType::F32;

#[test]
fn max_pool_int8_and_average_pool_float() {
    let t = vec![
        TensorSpec::act(&[1, 2, 2, 1], I8, 1.0, 0),
        TensorSpec::act(&[1, 1, 1, 1], I8, 1.0, 0),
    ];
    let pool = OptSpec::Pool {
        padding_valid: true,
        stride: 2,
        filter: 2,
        activation: 0,
    };
    let out = run(
        t,
        op(rl::opcode::MAX_POOL_2D, &[0], 1, pool),
        &[i8s(&[1, 5, -3, 2])],
    );
    assert_eq!(to_i8(&out), [5]);
    let t = vec![
        TensorSpec::act(&[1, 2, 2, 1], F32, 0.0, 0),
        TensorSpec::act(&[1, 1, 1, 1], F32, 0.0, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::AVERAGE_POOL_2D, &[0], 1, pool),
        &[f32s(&[1.0, 5.0, -3.0, 2.0])],
    );
    assert_eq!(to_f32(&out), [1.25]);
}

#[test]
fn average_pool_int8_rounds_half_away_from_zero() {
    // (1 + 2 + 2 + 2) / 4 = 1.75 -> 2; (-1 -2 -2 -2) / 4 -> -2
    let t = vec![
        TensorSpec::act(&[1, 2, 2, 2], I8, 1.0, 0),
        TensorSpec::act(&[1, 1, 1, 2], I8, 1.0, 0),
    ];
    let pool = OptSpec::Pool {
        padding_valid: true,
        stride: 2,
        filter: 2,
        activation: 0,
    };
    let out = run(
        t,
        op(rl::opcode::AVERAGE_POOL_2D, &[0], 1, pool),
        &[i8s(&[1, -1, 2, -2, 2, -2, 2, -2])],
    );
    assert_eq!(to_i8(&out), [2, -2]);
}

#[test]
fn quantize_and_dequantize() {
    let t = vec![
        TensorSpec::act(&[3], F32, 0.0, 0),
        TensorSpec::act(&[3], I8, 0.5, -1),
    ];
    let out = run(
        t,
        op(rl::opcode::QUANTIZE, &[0], 1, OptSpec::None),
        &[f32s(&[1.0, -0.75, 100.0])],
    );
    // round(2.0) - 1 = 1; round(-1.5) = -2, -1 => -3; 200 - 1 saturates at 127
    assert_eq!(to_i8(&out), [1, -3, 127]);
    let t = vec![
        TensorSpec::act(&[3], I8, 0.5, 2),
        TensorSpec::act(&[3], F32, 0.0, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::DEQUANTIZE, &[0], 1, OptSpec::None),
        &[i8s(&[4, -2, 2])],
    );
    assert_eq!(to_f32(&out), [1.0, -2.0, 0.0]);
    // int8 -> int8 requantization: scale 0.5 -> 0.25 doubles the value
    let t = vec![
        TensorSpec::act(&[2], I8, 0.5, 0),
        TensorSpec::act(&[2], I8, 0.25, 1),
    ];
    let out = run(
        t,
        op(rl::opcode::QUANTIZE, &[0], 1, OptSpec::None),
        &[i8s(&[3, -4])],
    );
    assert_eq!(to_i8(&out), [7, -7]);
}

#[test]
fn mul_int8_and_add_float_with_broadcast() {
    let t = vec![
        TensorSpec::act(&[2], I8, 0.5, 0),
        TensorSpec::act(&[2], I8, 0.25, 0),
        TensorSpec::act(&[2], I8, 0.125, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::MUL, &[0, 1], 2, OptSpec::Mul { activation: 0 }),
        &[i8s(&[2, 3]), i8s(&[4, -2])],
    );
    assert_eq!(to_i8(&out), [8, -6]); // 1*1 = 1, 1.5*-0.5 = -0.75
    let t = vec![
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
        TensorSpec::act(&[1], F32, 0.0, 0),
        TensorSpec::act(&[2, 2], F32, 0.0, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::ADD, &[0, 1], 2, OptSpec::Add { activation: 1 }),
        &[f32s(&[1.5, -4.0, 0.25, 2.0]), f32s(&[2.25])],
    );
    assert_eq!(to_f32(&out), [3.75, 0.0, 2.5, 4.25]);
}

#[test]
fn pad_transpose_concatenation() {
    let t = vec![
        TensorSpec::act(&[1, 2], I8, 1.0, 3),
        TensorSpec::i32s(&[2, 2], &[0, 0, 1, 2], &[]),
        TensorSpec::act(&[1, 5], I8, 1.0, 3),
    ];
    let out = run(
        t,
        op(rl::opcode::PAD, &[0, 1], 2, OptSpec::None),
        &[i8s(&[10, 20])],
    );
    assert_eq!(to_i8(&out), [3, 10, 20, 3, 3]);

    let t = vec![
        TensorSpec::act(&[2, 3], F32, 0.0, 0),
        TensorSpec::i32s(&[2], &[1, 0], &[]),
        TensorSpec::act(&[3, 2], F32, 0.0, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::TRANSPOSE, &[0, 1], 2, OptSpec::None),
        &[f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
    );
    assert_eq!(to_f32(&out), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);

    let t = vec![
        TensorSpec::act(&[2, 2], I8, 1.0, 0),
        TensorSpec::act(&[2, 1], I8, 1.0, 0),
        TensorSpec::act(&[2, 3], I8, 1.0, 0),
    ];
    let out = run(
        t,
        op(
            rl::opcode::CONCATENATION,
            &[0, 1],
            2,
            OptSpec::Concatenation { axis: -1 },
        ),
        &[i8s(&[1, 2, 4, 5]), i8s(&[3, 6])],
    );
    assert_eq!(to_i8(&out), [1, 2, 3, 4, 5, 6]);
}

#[test]
fn strided_slice_forward_strided_and_reversed() {
    let case = |begin: &[i32], end: &[i32], strides: &[i32], out_shape: &[i32], opts: OptSpec| {
        let t = vec![
            TensorSpec::act(&[2, 3], I8, 1.0, 0),
            TensorSpec::i32s(&[2], begin, &[]),
            TensorSpec::i32s(&[2], end, &[]),
            TensorSpec::i32s(&[2], strides, &[]),
            TensorSpec::act(out_shape, I8, 1.0, 0),
        ];
        to_i8(&run(
            t,
            op(rl::opcode::STRIDED_SLICE, &[0, 1, 2, 3], 4, opts),
            &[i8s(&[1, 2, 3, 4, 5, 6])],
        ))
    };
    let plain = OptSpec::StridedSlice {
        begin_mask: 0,
        end_mask: 0,
        shrink_axis_mask: 0,
    };
    assert_eq!(
        case(&[0, 1], &[2, 3], &[1, 1], &[2, 2], plain),
        [2, 3, 5, 6]
    );
    assert_eq!(
        case(&[0, 0], &[2, 3], &[1, 2], &[2, 2], plain),
        [1, 3, 4, 6]
    );
    assert_eq!(
        case(&[1, 2], &[-3, -4], &[-1, -1], &[2, 3], plain),
        [6, 5, 4, 3, 2, 1]
    );
    let masked = OptSpec::StridedSlice {
        begin_mask: 0b10,
        end_mask: 0b10,
        shrink_axis_mask: 0b01,
    };
    assert_eq!(case(&[1, 2], &[2, 0], &[1, 1], &[3], masked), [4, 5, 6]);
}

#[test]
fn mean_float_and_int8() {
    let t = vec![
        TensorSpec::act(&[2, 3], F32, 0.0, 0),
        TensorSpec::i32s(&[1], &[1], &[]),
        TensorSpec::act(&[2], F32, 0.0, 0),
    ];
    let out = run(
        t,
        op(
            rl::opcode::MEAN,
            &[0, 1],
            2,
            OptSpec::Reducer { keep_dims: false },
        ),
        &[f32s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])],
    );
    assert_eq!(to_f32(&out), [2.0, 5.0]);
    let t = vec![
        TensorSpec::act(&[1, 2, 2, 1], I8, 0.5, 0),
        TensorSpec::i32s(&[2], &[1, 2], &[]),
        TensorSpec::act(&[1, 1, 1, 1], I8, 0.5, 0),
    ];
    let out = run(
        t,
        op(
            rl::opcode::MEAN,
            &[0, 1],
            2,
            OptSpec::Reducer { keep_dims: true },
        ),
        &[i8s(&[1, 2, 3, 5])],
    );
    assert_eq!(to_i8(&out), [3]); // 11 / 4 = 2.75 -> 3
}

#[test]
fn logistic_and_tanh_int8() {
    let t = vec![
        TensorSpec::act(&[3], I8, 0.1, 0),
        TensorSpec::act(&[3], I8, 1.0 / 256.0, -128),
    ];
    let out = run(
        t,
        op(rl::opcode::LOGISTIC, &[0], 1, OptSpec::None),
        &[i8s(&[0, 20, -128])],
    );
    // sigmoid(0) = 0.5 -> 0; sigmoid(2) = 0.8808 -> 225.5 - 128 = 97.5 -> 97 or 98; sigmoid(-12.8) -> -128
    let o = to_i8(&out);
    assert_eq!(o[0], 0);
    assert!((97..=98).contains(&o[1]), "{o:?}");
    assert_eq!(o[2], -128);
    let t = vec![
        TensorSpec::act(&[3], I8, 0.1, 0),
        TensorSpec::act(&[3], I8, 1.0 / 128.0, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::TANH, &[0], 1, OptSpec::None),
        &[i8s(&[0, 5, -20])],
    );
    // tanh(0.5) * 128 = 59.15; tanh(-2) * 128 = -123.4
    assert_eq!(to_i8(&out), [0, 59, -123]);
}

#[test]
fn softmax_int8_uniform_and_float_conv() {
    let t = vec![
        TensorSpec::act(&[1, 2], I8, 0.1, 0),
        TensorSpec::act(&[1, 2], I8, 1.0 / 256.0, -128),
    ];
    let out = run(
        t,
        op(rl::opcode::SOFTMAX, &[0], 1, OptSpec::Softmax { beta: 1.0 }),
        &[i8s(&[7, 7])],
    );
    assert_eq!(to_i8(&out), [0, 0]); // 0.5 each
    let t = vec![
        TensorSpec::act(&[1, 1, 1, 2], F32, 0.0, 0),
        TensorSpec::constant(&[1, 1, 1, 2], F32, f32s(&[3.0, 4.0]), &[], &[]),
        TensorSpec::constant(&[1], F32, f32s(&[0.5]), &[], &[]),
        TensorSpec::act(&[1, 1, 1, 1], F32, 0.0, 0),
    ];
    let conv = OptSpec::Conv {
        padding_valid: true,
        stride: 1,
        activation: 0,
    };
    let out = run(
        t,
        op(rl::opcode::CONV_2D, &[0, 1, 2], 3, conv),
        &[f32s(&[1.0, 2.0])],
    );
    assert_eq!(to_f32(&out), [11.5]);
}

// ------------------------------------------------------- 16x8 filter ops

fn le16s(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn le64s(v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

const I16: DType = DType::I16;

/// CONV_2D 16x8 with an int64 bias, worked from TFLM's int16
/// `ConvPerChannel<int64_t>`: the zero points are never read (input 100,
/// output 7 change nothing), and the 64-bit `MultiplyByQuantizedMultiplier`
/// rounds once. Scales 0.5 · {0.25, 0.5} / 1 give 0.125 = 0.5·2⁻² and
/// 0.25 = 0.5·2⁻¹: multiplier 2³⁰ (reduced to 16 bits: 2¹⁴) with shifts −2
/// and −1, so channel 0 is (acc·2¹⁴ + 2¹⁶) >> 17 = ⌊(acc + 4)/8⌋ and
/// channel 1 ⌊(acc + 2)/4⌋. Filter rows [3, −2] and [−1, 1], bias [5, −7]:
/// pixel [1000, −3000]: 3000 + 6000 + 5 = 9005 → ⌊9009/8⌋ = 1126;
/// −1000 − 3000 − 7 = −4007 → ⌊−4005/4⌋ = −1002;
/// pixel [32767, −32768]: 98301 + 65536 + 5 = 163842 → ⌊163846/8⌋ = 20480;
/// −32767 − 32768 − 7 = −65542 → ⌊−65540/4⌋ = −16385.
#[test]
fn conv_16x8_int64_bias_ignores_zero_points() {
    let t = vec![
        TensorSpec::act(&[1, 1, 2, 2], I16, 0.5, 100),
        TensorSpec {
            quantized_dimension: 0,
            ..TensorSpec::constant(
                &[2, 1, 1, 2],
                I8,
                i8s(&[3, -2, -1, 1]),
                &[0.25, 0.5],
                &[0, 0],
            )
        },
        TensorSpec::constant(&[2], DType::I64, le64s(&[5, -7]), &[0.125, 0.25], &[0, 0]),
        TensorSpec::act(&[1, 1, 2, 2], I16, 1.0, 7),
    ];
    let conv = OptSpec::Conv {
        padding_valid: true,
        stride: 1,
        activation: 0,
    };
    let out = run(
        t,
        op(rl::opcode::CONV_2D, &[0, 1, 2], 3, conv),
        &[le16s(&[1000, -3000, 32767, -32768])],
    );
    assert_eq!(to_i16(&out), [1126, -1002, 20480, -16385]);
}

/// DEPTHWISE_CONV_2D 16x8, depth multiplier 2, SAME padding (1×3 filter on
/// a 1×3 input: the edge pixels skip the tap outside), int64 bias, the same
/// per-channel multipliers as above (⌊(acc + 4)/8⌋, ⌊(acc + 2)/4⌋). Input
/// [100, −200, 300]; channel 0 taps [1, 2, 3], channel 1 [−4, 5, −6]; bias
/// [8, −8]. Pixel 0: 200 − 600 + 8 = −392 → ⌊−388/8⌋ = −49; 500 + 1200 − 8 =
/// 1692 → ⌊1694/4⌋ = 423. Pixel 1: 100 − 400 + 900 + 8 = 608 → 76;
/// −400 − 1000 − 1800 − 8 = −3208 → ⌊−3206/4⌋ = −802. Pixel 2: −200 + 600 +
/// 8 = 408 → ⌊412/8⌋ = 51; 800 + 1500 − 8 = 2292 → ⌊2294/4⌋ = 573.
#[test]
fn depthwise_16x8_multiplier_2_same_padding() {
    let t = vec![
        TensorSpec::act(&[1, 1, 3, 1], I16, 0.5, 0),
        TensorSpec {
            quantized_dimension: 3,
            ..TensorSpec::constant(
                &[1, 1, 3, 2],
                I8,
                i8s(&[1, -4, 2, 5, 3, -6]),
                &[0.25, 0.5],
                &[0, 0],
            )
        },
        TensorSpec::constant(&[2], DType::I64, le64s(&[8, -8]), &[0.125, 0.25], &[0, 0]),
        TensorSpec::act(&[1, 1, 3, 2], I16, 1.0, 0),
    ];
    let dw = OptSpec::Depthwise {
        padding_valid: false,
        stride: 1,
        multiplier: 2,
        activation: 0,
    };
    let out = run(
        t,
        op(rl::opcode::DEPTHWISE_CONV_2D, &[0, 1, 2], 3, dw),
        &[le16s(&[100, -200, 300])],
    );
    assert_eq!(to_i16(&out), [-49, 423, 76, -802, 51, 573]);
}

/// FULLY_CONNECTED 16x8 per tensor, worked from TFLM's int16
/// `FullyConnected`: the input offset (zero point 2) and output zero point
/// (−5) are applied, and the bias type picks the accumulator. Scales
/// 0.5 · 0.6f / 1: 0.6f = 0.600000023841857910… = 1288490240 / 2³¹, so the
/// multiplier is 1288490240 with shift −1 (its 16-bit reduction:
/// ⌊(1288490240 + 2¹⁵) / 2¹⁶⌋ = 19661). Input − zero point = [1000, −500,
/// 32765]. Row [7, 3, −1], bias 10: 7000 − 1500 − 32765 + 10 = −27255;
/// both roundings give −8177 (32-bit: srdhm = −16353, rdbpot(·, 1) = −8177;
/// 64-bit: ⌊(−27255·19661 + 2¹⁵) / 2¹⁶⌋ = ⌊−8176.09⌋), −5 → −8182. Row
/// [3, 2, 3], bias −291: 3000 − 1000 + 98295 − 291 = 100004; int32 bias:
/// srdhm = ⌊100004 · 0.6000000238 + ½⌋ = 60002, rdbpot(60002, 1) = 30001,
/// −5 → 29996; int64 bias: ⌊(100004·19661 + 2¹⁵) / 2¹⁶⌋ = ⌊1966211412 /
/// 65536⌋ = 30002 (30002 · 65536 = 1966211072), −5 → 29997.
#[test]
fn fully_connected_16x8_offsets_and_the_bias_width() {
    for (bias, want) in [
        (TensorSpec::i32s(&[2], &[10, -291], &[0.3]), [-8182, 29996]),
        (
            TensorSpec::constant(&[2], DType::I64, le64s(&[10, -291]), &[0.3], &[0]),
            [-8182, 29997],
        ),
    ] {
        let t = vec![
            TensorSpec::act(&[1, 3], I16, 0.5, 2),
            TensorSpec::constant(&[2, 3], I8, i8s(&[7, 3, -1, 3, 2, 3]), &[0.6], &[0]),
            bias,
            TensorSpec::act(&[1, 2], I16, 1.0, -5),
        ];
        let out = run(
            t,
            op(rl::opcode::FULLY_CONNECTED, &[0, 1, 2], 3, OptSpec::None),
            &[le16s(&[1002, -498, 32767])],
        );
        assert_eq!(to_i16(&out), want);
    }
}

/// int32 SUB (unquantized): C's subtraction, wrapping, then
/// `CalculateActivationRange<int32_t>`'s ReLU6 bounds [0, 6].
#[test]
fn sub_int32_wraps_and_clamps() {
    let le32 = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    // Unquantized: TFLM's int32 SUB refuses any quantization.
    let plain = || TensorSpec {
        scales: vec![],
        zero_points: vec![],
        ..TensorSpec::act(&[4], DType::I32, 0.0, 0)
    };
    let t = vec![plain(), plain(), plain()];
    let out = run(
        t,
        op(rl::opcode::SUB, &[0, 1], 2, OptSpec::Add { activation: 3 }),
        &[le32(&[10, 3, i32::MIN, -5]), le32(&[7, 1, 1, -20])],
    );
    // 3; 2; i32::MIN − 1 wraps to i32::MAX → 6; 15 → 6.
    let got: Vec<i32> = out
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert_eq!(got, [3, 2, 6, 6]);
}

/// CAST float32 to bool: nonzero (NaN and infinities included) is 1, both
/// zeros are 0.
#[test]
fn cast_float_to_bool_is_nonzero() {
    let t = vec![
        TensorSpec::act(&[6], F32, 0.0, 0),
        TensorSpec::act(&[6], DType::Bool, 0.0, 0),
    ];
    let out = run(
        t,
        op(rl::opcode::CAST, &[0], 1, OptSpec::None),
        &[f32s(&[0.0, -0.0, 0.25, f32::NAN, f32::NEG_INFINITY, -3.0])],
    );
    assert_eq!(out, [0, 0, 1, 1, 1, 1]);
}

// ------------------------------------------------------------- error paths

fn demo_image() -> (Vec<u8>, u64) {
    let bytes = demo_model();
    let model = Model::parse(&bytes).expect("parse");
    (
        lower(&model).expect("lower"),
        runtime_arena(&model).expect("arena").total_bytes,
    )
}

#[test]
fn arena_too_small_names_the_bytes_needed() {
    let (image, total) = demo_image();
    let mut arena = vec![0u8; total as usize - 1];
    let err = Interpreter::new(&image, &mut arena).expect_err("must not fit");
    assert_eq!(
        err,
        Error::ArenaTooSmall {
            needed: total as usize,
            available: total as usize - 1
        }
    );
    assert!(
        err.to_string().contains(&format!("needs {total} bytes")),
        "{err}"
    );
    let mut arena = vec![0u8; total as usize];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
}

#[test]
#[cfg_attr(
    miri,
    ignore = "a second ~20 s demo invoke under Miri; demo_model_runs_and_matches_prediction has one"
)]
fn allocation_during_invoke_is_refused() {
    let (image, total) = demo_image();
    let mut arena = vec![0u8; total as usize + 64];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    assert_eq!(
        it.allocate_persistent(16),
        Err(Error::AllocationDuringInvoke)
    );
    it.invoke().expect("invoke");
    assert_eq!(
        it.allocate_persistent(4),
        Err(Error::AllocationDuringInvoke)
    );
    let u = it.memory_usage();
    assert_eq!(u.high_water as u64, total);
    assert_eq!(u.used as u64, total);
    assert_eq!(u.available as u64, total + 64);
}

#[test]
fn unsupported_op_is_refused_by_core_and_runtime() {
    let t = vec![
        TensorSpec::act(&[4], F32, 0.0, 0),
        TensorSpec::act(&[4], F32, 0.0, 0),
    ];
    let bytes = build(
        &t,
        &[OpSpec {
            opcode: 78, // POW: no TFLM or runtime kernel
            inputs: vec![0],
            outputs: vec![1],
            options: OptSpec::None,
        }],
        &[0],
        &[1],
    );
    let model = Model::parse(&bytes).expect("parse");
    let err = lower(&model).expect_err("POW has no kernel");
    assert!(
        matches!(err, LowerError::UnsupportedOp { op_index: 0, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("POW"), "{err}");

    // A hand-patched image: the runtime refuses at construction, naming the op.
    let (mut image, total) = demo_image();
    let ops_off =
        u32::from_le_bytes(image[rl::header::OPS_OFF..][..4].try_into().unwrap()) as usize;
    image[ops_off + rl::op::OPCODE] = 78;
    let mut arena = vec![0u8; total as usize];
    let err = Interpreter::new(&image, &mut arena).expect_err("patched op");
    assert_eq!(
        err,
        Error::UnsupportedOp {
            op_index: 0,
            opcode: 78
        }
    );
    assert!(err.to_string().contains("POW"), "{err}");
}

/// Single-byte corruptions (five values, every `byte_step`-th byte) of the
/// first `limit` bytes, then word corruptions with extreme values (every
/// `word_step`-th offset, aligned or not): each image is refused or
/// constructs and invokes. Construction validates every op's parameters
/// against its tensors, so each invoke is short (the sweep over the demo
/// model used to hit depthwise windows of 2^31 × 2^31).
fn sweep(image: &[u8], arena_len: usize, limit: usize, byte_step: usize, word_step: usize) {
    let mut arena = vec![0u8; arena_len];
    let mut run = |bad: &[u8]| {
        if let Ok(mut it) = Interpreter::new(bad, &mut arena) {
            let _ = it.invoke();
        }
    };
    let mut bad = image.to_vec();
    for at in (0..image.len().min(limit)).step_by(byte_step) {
        for v in [0u8, 1, 0x7f, 0x80, 0xff] {
            bad[at] = v;
            run(&bad);
        }
        bad[at] = image[at];
    }
    for at in (0..image.len().saturating_sub(4).min(limit)).step_by(word_step) {
        for v in [i32::MIN, i32::MAX, -1, 0x4000_0000, 0x0001_0000] {
            bad[at..at + 4].copy_from_slice(&v.to_le_bytes());
            run(&bad);
        }
        bad[at..at + 4].copy_from_slice(&image[at..at + 4]);
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "surviving corruptions invoke the demo model, ~20 s each under Miri; \
              extreme_words_in_any_table_are_errors_not_panics samples the sweep there"
)]
fn corrupt_images_are_errors_not_panics() {
    let (image, total) = demo_image();
    let mut arena = vec![0u8; total as usize];
    assert_eq!(
        Interpreter::new(&image[..10], &mut arena).err(),
        Some(Error::Truncated { what: "header" })
    );
    assert_eq!(
        Interpreter::new(b"nope", &mut arena).err(),
        Some(Error::BadMagic)
    );
    // Every truncation.
    for cut in 0..image.len() {
        assert!(Interpreter::new(&image[..cut], &mut arena).is_err());
    }
    sweep(&image, total as usize, usize::MAX, 1, 2);
    // A larger arena than needed changes nothing.
    sweep(&image, total as usize + 256, 64, 1, 1);
}

/// The 16x8 kernels (CONV_2D with an int64 bias, DEPTHWISE_CONV_2D with
/// multiplier 2, FULLY_CONNECTED with an int32 bias) through the same
/// sweep: every corruption is refused at construction or invokes briefly.
#[test]
#[cfg_attr(miri, ignore = "thousands of constructions and invokes")]
fn corrupt_16x8_images_are_errors_not_panics() {
    let per_channel = |shape: &[i32], axis: i32, seed: u32| {
        let ch = shape[axis as usize] as usize;
        let n = shape.iter().product::<i32>() as usize;
        TensorSpec {
            quantized_dimension: axis,
            ..TensorSpec::constant(
                shape,
                I8,
                pseudo_random_bytes(seed, n),
                &vec![0.01; ch],
                &vec![0; ch],
            )
        }
    };
    let t = vec![
        TensorSpec::act(&[1, 4, 4, 2], I16, 0.0004, 0),
        per_channel(&[3, 3, 3, 2], 0, 1),
        TensorSpec::constant(
            &[3],
            DType::I64,
            le64s(&[100, -200, 300]),
            &[0.000004],
            &[0],
        ),
        TensorSpec::act(&[1, 4, 4, 3], I16, 0.002, 0),
        per_channel(&[1, 3, 3, 6], 3, 2),
        TensorSpec::constant(
            &[6],
            DType::I64,
            le64s(&[1, 2, 3, 4, 5, 6]),
            &[0.00002],
            &[0],
        ),
        TensorSpec::act(&[1, 4, 4, 6], I16, 0.003, 0),
        TensorSpec::constant(&[2, 96], I8, pseudo_random_bytes(3, 192), &[0.01], &[0]),
        TensorSpec::i32s(&[2], &[-50, 50], &[0.00003]),
        TensorSpec::act(&[1, 2], I16, 0.05, 3),
    ];
    let conv = OptSpec::Conv {
        padding_valid: false,
        stride: 1,
        activation: 1,
    };
    let dw = OptSpec::Depthwise {
        padding_valid: false,
        stride: 1,
        multiplier: 2,
        activation: 0,
    };
    let ops = [
        op(rl::opcode::CONV_2D, &[0, 1, 2], 3, conv),
        op(rl::opcode::DEPTHWISE_CONV_2D, &[3, 4, 5], 6, dw),
        op(rl::opcode::FULLY_CONNECTED, &[6, 7, 8], 9, OptSpec::None),
    ];
    let (image, total) = image_of(&support::build(&t, &ops, &[0], &[9]));
    {
        let mut arena = vec![0u8; total as usize];
        let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
        it.input_mut(0)
            .expect("input")
            .copy_from_slice(&pseudo_random_bytes(4, 64));
        it.invoke().expect("invoke");
    }
    sweep(&image, total as usize, usize::MAX, 1, 2);
}

#[test]
fn extreme_words_in_any_table_are_errors_not_panics() {
    // The shape kernels' parameters (paddings, permutation, slice bounds,
    // pooling window, axes) through the same sweep.
    let (image, total) = image_of(&shape_ops_model());
    if cfg!(miri) {
        // A sample: every kernel's Prepare and Eval on corrupted input, not
        // every byte (Miri runs a few hundred times slower).
        sweep(&image, total as usize, usize::MAX, 563, 1201);
    } else {
        sweep(&image, total as usize, usize::MAX, 1, 2);
    }
    // Strided-slice, pad and transpose parameters at their extremes.
    let t = vec![
        TensorSpec::act(&[2, 3], I8, 1.0, 0),
        TensorSpec::i32s(&[2], &[i32::MIN, i32::MAX], &[]),
        TensorSpec::i32s(&[2], &[i32::MAX, i32::MIN], &[]),
        TensorSpec::i32s(&[2], &[i32::MAX, i32::MIN], &[]),
        TensorSpec::act(&[1, 1], I8, 1.0, 0),
    ];
    let opts = OptSpec::StridedSlice {
        begin_mask: 0,
        end_mask: 0,
        shrink_axis_mask: 0,
    };
    let bytes = build(
        &t,
        &[op(rl::opcode::STRIDED_SLICE, &[0, 1, 2, 3], 4, opts)],
        &[0],
        &[4],
    );
    let model = Model::parse(&bytes).expect("parse");
    if let Ok(image) = lower(&model) {
        let mut arena = vec![0u8; 4096];
        if let Ok(mut it) = Interpreter::new(&image, &mut arena) {
            let _ = it.invoke();
        }
    }
}

/// A chain of the shape and elementwise kernels whose parameters index
/// tensors (PAD, TRANSPOSE, STRIDED_SLICE, MAX_POOL_2D, MEAN, CONCATENATION,
/// MUL, ADD, LOGISTIC, QUANTIZE, DEQUANTIZE, float SOFTMAX): the second
/// model the corruption sweeps run over.
fn shape_ops_model() -> Vec<u8> {
    let q = |shape: &[i32]| TensorSpec::act(shape, I8, 0.5, 0);
    let t = vec![
        q(&[1, 4, 4, 2]),                                          // 0 input
        TensorSpec::i32s(&[4, 2], &[0, 0, 1, 1, 0, 1, 0, 0], &[]), // 1 paddings
        q(&[1, 6, 5, 2]),                                          // 2 padded
        TensorSpec::i32s(&[4], &[0, 2, 1, 3], &[]),                // 3 perm
        q(&[1, 5, 6, 2]),                                          // 4 transposed
        TensorSpec::i32s(&[4], &[0, 1, 0, 0], &[]),                // 5 begin
        TensorSpec::i32s(&[4], &[1, 5, 6, 2], &[]),                // 6 end
        TensorSpec::i32s(&[4], &[1, 2, 1, 1], &[]),                // 7 strides
        q(&[1, 2, 6, 2]),                                          // 8 sliced
        q(&[1, 1, 3, 2]),                                          // 9 pooled
        TensorSpec::i32s(&[2], &[1, 2], &[]),                      // 10 axes
        q(&[1, 1, 1, 2]),                                          // 11 mean
        q(&[1, 1, 1, 4]),                                          // 12 concatenated
        q(&[1, 1, 1, 4]),                                          // 13 product
        q(&[1, 1, 1, 4]),                                          // 14 sum
        TensorSpec::act(&[1, 1, 1, 4], I8, 1.0 / 256.0, -128),     // 15 logistic
        TensorSpec::act(&[1, 1, 1, 4], I8, 1.0 / 128.0, 0),        // 16 requantized
        TensorSpec::act(&[1, 4], F32, 0.0, 0),                     // 17 dequantized
        TensorSpec::act(&[1, 4], F32, 0.0, 0),                     // 18 softmax
    ];
    let slice = OptSpec::StridedSlice {
        begin_mask: 0,
        end_mask: 0,
        shrink_axis_mask: 0,
    };
    let pool = OptSpec::Pool {
        padding_valid: true,
        stride: 2,
        filter: 2,
        activation: 0,
    };
    let ops = [
        op(rl::opcode::PAD, &[0, 1], 2, OptSpec::None),
        op(rl::opcode::TRANSPOSE, &[2, 3], 4, OptSpec::None),
        op(rl::opcode::STRIDED_SLICE, &[4, 5, 6, 7], 8, slice),
        op(rl::opcode::MAX_POOL_2D, &[8], 9, pool),
        op(
            rl::opcode::MEAN,
            &[9, 10],
            11,
            OptSpec::Reducer { keep_dims: true },
        ),
        op(
            rl::opcode::CONCATENATION,
            &[11, 11],
            12,
            OptSpec::Concatenation { axis: 3 },
        ),
        op(
            rl::opcode::MUL,
            &[12, 12],
            13,
            OptSpec::Mul { activation: 0 },
        ),
        op(
            rl::opcode::ADD,
            &[13, 12],
            14,
            OptSpec::Add { activation: 0 },
        ),
        op(rl::opcode::LOGISTIC, &[14], 15, OptSpec::None),
        op(rl::opcode::QUANTIZE, &[15], 16, OptSpec::None),
        op(rl::opcode::DEQUANTIZE, &[16], 17, OptSpec::None),
        op(
            rl::opcode::SOFTMAX,
            &[17],
            18,
            OptSpec::Softmax { beta: 1.0 },
        ),
    ];
    build(&t, &ops, &[0], &[18])
}

fn image_of(model: &[u8]) -> (Vec<u8>, u64) {
    let model = Model::parse(model).expect("parse");
    (
        lower(&model).expect("lower"),
        runtime_arena(&model).expect("arena").total_bytes,
    )
}

#[test]
fn shape_ops_model_runs() {
    let (image, total) = image_of(&shape_ops_model());
    let mut arena = vec![0u8; total as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let x: Vec<u8> = (0..32u8).map(|i| i.wrapping_mul(37)).collect();
    it.input_mut(0).expect("input").copy_from_slice(&x);
    it.invoke().expect("invoke");
    let probs = to_f32(it.output(0).expect("output"));
    let sum: f32 = probs.iter().sum();
    assert!((sum - 1.0).abs() < 1e-5, "softmax sums to 1: {probs:?}");
    assert_eq!(it.memory_usage().high_water as u64, total);
}

// ------------------------------------------------ corrupted op parameters

fn word_at(image: &[u8], at: usize) -> usize {
    u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize
}

/// Byte offset of parameter `k` of op `i`.
fn param_at(image: &[u8], i: usize, k: usize) -> usize {
    word_at(image, rl::header::OPS_OFF) + i * rl::OP_BYTES + rl::op::PARAMS + 4 * k
}

/// Byte offset of tensor record `t`.
fn tensor_at(image: &[u8], t: usize) -> usize {
    word_at(image, rl::header::TENSORS_OFF) + t * rl::TENSOR_BYTES
}

fn put_word(image: &mut [u8], at: usize, v: i32) {
    image[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// `image` with op `i`'s parameters `k` set to `v` for each `(k, v)`.
fn with_params(image: &[u8], i: usize, patches: &[(usize, i32)]) -> Vec<u8> {
    let mut bad = image.to_vec();
    for &(k, v) in patches {
        let at = param_at(&bad, i, k);
        put_word(&mut bad, at, v);
    }
    bad
}

fn construct(image: &[u8], arena_len: usize) -> Result<(), Error> {
    let mut arena = vec![0u8; arena_len];
    Interpreter::new(image, &mut arena).map(|_| ())
}

fn invalid(op_index: u16, opcode: u8, what: &'static str) -> Result<(), Error> {
    Err(Error::InvalidOp {
        op_index,
        opcode,
        what,
    })
}

/// Found by the sweep: the int8 depthwise fast path looped over the window
/// *parameters*, so a corrupted filter width or height (2^31) made one invoke
/// run for minutes. The window must equal the filter tensor's.
#[test]
fn depthwise_window_params_must_match_the_filter() {
    let (image, total) = demo_image();
    let len = total as usize;
    const WHY: &str = "filter size parameters differ from the filter tensor's dims";
    for (k, v) in [
        (6, 0x7f03),
        (6, i32::MAX),
        (7, 0x4000_0000),
        (7, 2),
        (6, 0x8003),
    ] {
        let bad = with_params(&image, 1, &[(k, v)]);
        assert_eq!(
            construct(&bad, len),
            invalid(1, rl::opcode::DEPTHWISE_CONV_2D, WHY),
            "param {k} = {v:#x}"
        );
    }
    let bad = with_params(&image, 1, &[(6, 0)]);
    let err = construct(&bad, len).expect_err("zero window");
    assert_eq!(
        err,
        Error::InvalidOp {
            op_index: 1,
            opcode: rl::opcode::DEPTHWISE_CONV_2D,
            what: "strides, dilations and filter size must be positive"
        }
    );
    assert!(
        err.to_string()
            .starts_with("operator 1 (DEPTHWISE_CONV_2D)"),
        "{err}"
    );
    assert_eq!(construct(&image, len), Ok(()));
}

/// Geometry that no SAME or VALID padding produces: the kernels index the
/// input with these parameters, so they must follow from the shapes.
#[test]
fn conv_and_pool_geometry_must_follow_from_the_shapes() {
    let (image, total) = demo_image();
    let len = total as usize;
    const GEOMETRY: &str =
        "output size or padding does not follow from the input, window, strides and dilations";
    const POSITIVE: &str = "strides, dilations and filter size must be positive";
    let (conv, dw, pool) = (
        rl::opcode::CONV_2D,
        rl::opcode::DEPTHWISE_CONV_2D,
        rl::opcode::AVERAGE_POOL_2D,
    );
    /// (op index, parameter patches, opcode, expected complaint)
    type Case = (usize, &'static [(usize, i32)], u8, &'static str);
    let cases: &[Case] = &[
        (0, &[(0, 0x4000_0000)], conv, GEOMETRY), // padding far outside
        (0, &[(1, -1)], conv, GEOMETRY),          // negative padding
        (0, &[(2, 1)], conv, GEOMETRY),           // stride 1 makes 16x16, not 8x8
        (0, &[(3, 0)], conv, POSITIVE),
        (0, &[(4, 3)], conv, GEOMETRY), // dilation 3 changes the SAME padding
        (0, &[(5, i32::MIN)], conv, POSITIVE),
        (1, &[(2, 2)], dw, GEOMETRY),
        (1, &[(8, 0)], dw, "depth multiplier must be positive"),
        (2, &[(2, 0)], pool, POSITIVE),
        (2, &[(6, 12)], pool, GEOMETRY), // a 12-wide window over 8 needs padding 2
        (2, &[(7, i32::MAX)], pool, GEOMETRY),
        (2, &[(4, 2)], pool, "pooling with a dilation"),
    ];
    for &(i, patches, opcode, what) in cases {
        let bad = with_params(&image, i, patches);
        assert_eq!(
            construct(&bad, len),
            invalid(i as u16, opcode, what),
            "op {i} {patches:?}"
        );
    }
}

/// Parameters the old checks clamped (`max(0)`) and so accepted, reading the
/// wrong elements: negative paddings, a negative axis in the permutation,
/// slice coordinates outside the input, axes beyond the rank.
#[test]
fn shape_op_params_must_index_the_input() {
    let (image, total) = image_of(&shape_ops_model());
    let len = total as usize;
    // PAD: before = -1, after = 2 on axis 1 still "adds up" to 6 when clamped.
    let bad = with_params(&image, 0, &[(2, -1), (7, 2)]);
    assert_eq!(
        construct(&bad, len),
        invalid(0, rl::opcode::PAD, "negative padding")
    );
    // TRANSPOSE: perm [-1, 2, 1, 3] matched as [0, 2, 1, 3].
    let bad = with_params(&image, 1, &[(1, -1)]);
    assert_eq!(
        construct(&bad, len),
        invalid(
            1,
            rl::opcode::TRANSPOSE,
            "perm is not a permutation of the input's axes"
        )
    );
    let bad = with_params(&image, 1, &[(1, 2)]);
    assert!(construct(&bad, len).is_err(), "repeated axis");
    // STRIDED_SLICE: axis 1 from -1000 to -996 by 2 has the right count (2)
    // but lies outside the input.
    let bad = with_params(&image, 2, &[(2, -1000), (7, -996)]);
    assert_eq!(
        construct(&bad, len),
        invalid(
            2,
            rl::opcode::STRIDED_SLICE,
            "slice bounds outside the input"
        )
    );
    let bad = with_params(&image, 2, &[(12, 0)]);
    assert_eq!(
        construct(&bad, len),
        invalid(2, rl::opcode::STRIDED_SLICE, "slice stride 0")
    );
    // MEAN: an axis bit beyond the rank.
    let bad = with_params(&image, 4, &[(0, 0b100_0110)]);
    assert_eq!(
        construct(&bad, len),
        invalid(
            4,
            rl::opcode::MEAN,
            "reduction axes outside the input's rank"
        )
    );
    assert_eq!(construct(&image, len), Ok(()));
}

/// An empty tensor (a zero dim) with huge other dims: the kernels nest loops
/// over dims, so CONCATENATION would loop 2^62 times over empty rows. The
/// image reader refuses any shape whose extent (zero dims counted as 1)
/// exceeds its storage region.
#[test]
fn empty_tensors_cannot_carry_huge_dims() {
    let t = vec![
        TensorSpec::act(&[1, 1, 1, 2], I8, 1.0, 0),
        TensorSpec::act(&[1, 1, 1, 2], I8, 1.0, 0),
        TensorSpec::act(&[1, 1, 1, 4], I8, 1.0, 0),
    ];
    let concat = op(
        rl::opcode::CONCATENATION,
        &[0, 1],
        2,
        OptSpec::Concatenation { axis: 3 },
    );
    let (image, total) = image_of(&build(&t, &[concat], &[0, 1], &[2]));
    let mut bad = image.clone();
    for ti in 0..3 {
        let at = tensor_at(&bad, ti);
        put_word(&mut bad, at + rl::tensor::DIMS + 4, i32::MAX);
        put_word(&mut bad, at + rl::tensor::DIMS + 8, i32::MAX);
        put_word(&mut bad, at + rl::tensor::DIMS + 12, 0);
        put_word(&mut bad, at + rl::tensor::BYTES, 0);
    }
    assert_eq!(
        construct(&bad, total as usize),
        Err(Error::Malformed {
            what: "tensor shape (zero dims counted as 1) exceeds its storage region",
            index: 0
        })
    );
    // Empty tensors whose extent fits are fine: nothing to compute.
    let mut empty = image.clone();
    for ti in 0..3 {
        let at = tensor_at(&empty, ti);
        put_word(&mut empty, at + rl::tensor::DIMS + 12, 0);
        put_word(&mut empty, at + rl::tensor::BYTES, 0);
    }
    let mut arena = vec![0u8; total as usize];
    let mut it = Interpreter::new(&empty, &mut arena).expect("empty concat");
    it.invoke().expect("invoke");
    assert_eq!(construct(&image, total as usize), Ok(()));
}

/// A tensor with no storage is never read or written, so as an op's
/// non-empty output it would silently produce nothing.
#[test]
fn op_tensors_without_storage_are_refused() {
    let (image, total) = demo_image();
    let mut bad = image.clone();
    // Tensor 13 (the softmax output, [1, 4]) without storage.
    let at = tensor_at(&bad, 13);
    bad[at + rl::tensor::STORAGE] = rl::STORAGE_NONE;
    put_word(&mut bad, at + rl::tensor::BYTES, 0);
    let mut arena = vec![0u8; total as usize];
    let err = Interpreter::new(&bad, &mut arena).expect_err("no storage");
    assert_eq!(
        err,
        Error::InvalidOp {
            op_index: 5,
            opcode: rl::opcode::SOFTMAX,
            what: "the output has no storage"
        }
    );
    // The same tensor as the FC's input side: tensor 9 (reshaped, [1, 8]).
    let mut bad = image.clone();
    let at = tensor_at(&bad, 9);
    bad[at + rl::tensor::STORAGE] = rl::STORAGE_NONE;
    assert!(construct(&bad, total as usize).is_err());
}

#[test]
fn demo_model_runs_and_matches_prediction() {
    let (image, total) = demo_image();
    let mut arena = vec![0u8; total as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let input = pseudo_random_bytes(42, 256);
    it.input_mut(0).expect("input").copy_from_slice(&input);
    it.invoke().expect("invoke");
    let out = to_i8(it.output(0).expect("output"));
    let sum: i32 = out.iter().map(|&v| i32::from(v) + 128).sum();
    assert!(
        (250..=260).contains(&sum),
        "softmax output should sum to ~256: {out:?}"
    );
    assert_eq!(it.memory_usage().high_water as u64, total);
}

#[test]
fn float_softmax_logistic_tanh() {
    let t = vec![
        TensorSpec::act(&[1, 3], F32, 0.0, 0),
        TensorSpec::act(&[1, 3], F32, 0.0, 0),
    ];
    let out = to_f32(&run(
        t,
        op(rl::opcode::SOFTMAX, &[0], 1, OptSpec::Softmax { beta: 1.0 }),
        &[f32s(&[1.0, 2.0, 3.0])],
    ));
    // e^-2, e^-1, 1 over their sum
    let want = [0.090_030_57, 0.244_728_48, 0.665_240_94];
    for (g, w) in out.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{out:?}");
    }
    let t = vec![
        TensorSpec::act(&[4], F32, 0.0, 0),
        TensorSpec::act(&[4], F32, 0.0, 0),
    ];
    let out = to_f32(&run(
        t,
        op(rl::opcode::LOGISTIC, &[0], 1, OptSpec::None),
        &[f32s(&[0.0, 2.0, -20.0, 30.0])],
    ));
    assert_eq!(out[0], 0.5);
    assert!((out[1] - 0.880_797_1).abs() < 1e-6, "{out:?}");
    assert!((out[2] - 2.061_153_6e-9).abs() < 1e-14, "{out:?}"); // exp(-20) below the cut-off
    assert_eq!(out[3], 1.0);
    let t = vec![
        TensorSpec::act(&[3], F32, 0.0, 0),
        TensorSpec::act(&[3], F32, 0.0, 0),
    ];
    let out = to_f32(&run(
        t,
        op(rl::opcode::TANH, &[0], 1, OptSpec::None),
        &[f32s(&[0.0, 0.5, -2.0])],
    ));
    assert_eq!(out[0], 0.0);
    assert!(
        (out[1] - 0.462_117_16).abs() < 1e-6 && (out[2] + 0.964_027_6).abs() < 1e-6,
        "{out:?}"
    );
}

/// Builds, lowers and runs a one-op model with several outputs; returns
/// every output's bytes.
fn run_multi(tensors: Vec<TensorSpec>, op: OpSpec, inputs: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let g_in: Vec<i32> = (0..inputs.len() as i32).collect();
    let outs = op.outputs.clone();
    let bytes = build(&tensors, &[op], &g_in, &outs);
    let model = Model::parse(&bytes).expect("parse");
    let image = lower(&model).expect("lower");
    let predicted = runtime_arena(&model).expect("arena");
    let mut arena = vec![0u8; predicted.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    for (i, d) in inputs.iter().enumerate() {
        it.input_mut(i).expect("input").copy_from_slice(d);
    }
    it.invoke().expect("invoke");
    assert_eq!(it.memory_usage().high_water as u64, predicted.total_bytes);
    (0..outs.len())
        .map(|k| it.output(k).expect("output").to_vec())
        .collect()
}

fn multi(opcode: u8, inputs: &[i32], outputs: &[i32], options: OptSpec) -> OpSpec {
    OpSpec {
        opcode: i32::from(opcode),
        inputs: inputs.into(),
        outputs: outputs.into(),
        options,
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn split_cuts_the_axis_into_equal_parts() {
    // x [2, 4] int8 = 0..8, split along axis -1 (= 1) into 2: rows [0,1 | 2,3], [4,5 | 6,7].
    let x: Vec<i8> = (0..8).collect();
    let tensors = vec![
        TensorSpec::act(&[2, 4], DType::I8, 0.5, 0),
        TensorSpec::i32s(&[], &[-1], &[]),
        TensorSpec::act(&[2, 2], DType::I8, 0.5, 0),
        TensorSpec::act(&[2, 2], DType::I8, 0.5, 0),
    ];
    let outs = run_multi(
        tensors,
        multi(rl::opcode::SPLIT, &[1, 0], &[2, 3], OptSpec::None),
        &[i8s(&x)],
    );
    assert_eq!(to_i8(&outs[0]), [0, 1, 4, 5]);
    assert_eq!(to_i8(&outs[1]), [2, 3, 6, 7]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn split_v_takes_each_outputs_own_size() {
    // x [5, 1] float = 0..5 along axis 0 into sizes 1, 3, 1.
    let x: Vec<f32> = (0..5).map(|v| v as f32).collect();
    let tensors = vec![
        TensorSpec::act(&[5, 1], DType::F32, 0.0, 0),
        TensorSpec::i32s(&[3], &[1, 3, 1], &[]),
        TensorSpec::i32s(&[], &[0], &[]),
        TensorSpec::act(&[1, 1], DType::F32, 0.0, 0),
        TensorSpec::act(&[3, 1], DType::F32, 0.0, 0),
        TensorSpec::act(&[1, 1], DType::F32, 0.0, 0),
    ];
    let outs = run_multi(
        tensors,
        multi(rl::opcode::SPLIT_V, &[0, 1, 2], &[3, 4, 5], OptSpec::None),
        &[f32s(&x)],
    );
    assert_eq!(to_f32(&outs[0]), [0.0]);
    assert_eq!(to_f32(&outs[1]), [1.0, 2.0, 3.0]);
    assert_eq!(to_f32(&outs[2]), [4.0]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn unpack_drops_the_axis() {
    // x [2, 3] int16 = 10..16 unpacked along axis 1: columns [10, 13], [11, 14], [12, 15].
    let x: Vec<u8> = (10i16..16).flat_map(|v| v.to_le_bytes()).collect();
    let tensors = vec![
        TensorSpec::act(&[2, 3], DType::I16, 1.0, 0),
        TensorSpec::act(&[2], DType::I16, 1.0, 0),
        TensorSpec::act(&[2], DType::I16, 1.0, 0),
        TensorSpec::act(&[2], DType::I16, 1.0, 0),
    ];
    let outs = run_multi(
        tensors,
        multi(
            rl::opcode::UNPACK,
            &[0],
            &[1, 2, 3],
            OptSpec::Unpack { axis: -1, num: 3 },
        ),
        &[x],
    );
    let i16s = |b: &[u8]| -> Vec<i16> {
        b.chunks_exact(2)
            .map(|c| i16::from_le_bytes([c[0], c[1]]))
            .collect()
    };
    assert_eq!(i16s(&outs[0]), [10, 13]);
    assert_eq!(i16s(&outs[1]), [11, 14]);
    assert_eq!(i16s(&outs[2]), [12, 15]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn outputs_that_do_not_tile_the_input_are_refused() {
    // SPLIT of [2, 4] along axis 1 into [2, 2] and [2, 3]: 5 columns of 4.
    let tensors = vec![
        TensorSpec::act(&[2, 4], DType::I8, 0.5, 0),
        TensorSpec::i32s(&[], &[1], &[]),
        TensorSpec::act(&[2, 2], DType::I8, 0.5, 0),
        TensorSpec::act(&[2, 3], DType::I8, 0.5, 0),
    ];
    let bytes = build(
        &tensors,
        &[multi(rl::opcode::SPLIT, &[1, 0], &[2, 3], OptSpec::None)],
        &[0],
        &[2, 3],
    );
    let model = Model::parse(&bytes).expect("parse");
    let err = lower(&model).expect_err("the outputs cover 5 of 4 columns");
    assert!(format!("{err}").contains("cover 5 of the 4"), "{err}");
    assert!(runtime_arena(&model).is_err());
}

/// SPLIT → UNPACK → SPLIT_V, with graph outputs among the extra outputs:
/// the multi-output record layout (outputs past the first in the input
/// slots) through the corruption sweep.
fn multi_output_model() -> Vec<u8> {
    let q = |shape: &[i32]| TensorSpec::act(shape, I8, 0.5, 0);
    let t = vec![
        q(&[2, 4]),                           // 0 input
        TensorSpec::i32s(&[], &[1], &[]),     // 1 split axis
        q(&[2, 2]),                           // 2 left
        q(&[2, 2]),                           // 3 right
        q(&[2]),                              // 4 row 0 of left
        q(&[2]),                              // 5 row 1 of left
        TensorSpec::i32s(&[2], &[1, 1], &[]), // 6 sizes
        TensorSpec::i32s(&[], &[-1], &[]),    // 7 split_v axis
        q(&[2, 1]),                           // 8 right, column 0
        q(&[2, 1]),                           // 9 right, column 1
    ];
    let ops = [
        multi(rl::opcode::SPLIT, &[1, 0], &[2, 3], OptSpec::None),
        multi(
            rl::opcode::UNPACK,
            &[2],
            &[4, 5],
            OptSpec::Unpack { axis: 0, num: 2 },
        ),
        multi(rl::opcode::SPLIT_V, &[3, 6, 7], &[8, 9], OptSpec::None),
    ];
    build(&t, &ops, &[0], &[4, 5, 8, 9])
}

#[test]
fn multi_output_images_run_and_survive_corruption() {
    let (image, total) = image_of(&multi_output_model());
    assert_eq!(
        u32::from_le_bytes(image[4..8].try_into().expect("4 bytes")),
        rl::VERSION
    );
    let mut arena = vec![0u8; total as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let x: Vec<i8> = (0..8).collect(); // [[0 1 2 3] [4 5 6 7]]
    it.input_mut(0).expect("input").copy_from_slice(&i8s(&x));
    it.invoke().expect("invoke");
    let got: Vec<Vec<i8>> = (0..4).map(|k| to_i8(it.output(k).expect("out"))).collect();
    assert_eq!(got, [vec![0, 1], vec![4, 5], vec![2, 6], vec![3, 7]]);
    if cfg!(miri) {
        sweep(&image, total as usize, usize::MAX, 293, 587);
    } else {
        sweep(&image, total as usize, usize::MAX, 1, 1);
    }
    // SPLIT's output 1 (input slot 2) made the same tensor as its output 0:
    // refused at construction, not found out by Invoke.
    let ops_off = u32::from_le_bytes(
        image[rl::header::OPS_OFF..rl::header::OPS_OFF + 4]
            .try_into()
            .expect("4 bytes"),
    ) as usize;
    let slot = ops_off + rl::op::INPUTS + 2 * 2;
    let mut aliased = image.clone();
    aliased[slot..slot + 2].copy_from_slice(&2u16.to_le_bytes());
    let mut arena = vec![0u8; total as usize];
    assert!(matches!(
        Interpreter::new(&aliased, &mut arena),
        Err(Error::InvalidOp {
            what: "two outputs overlap",
            ..
        })
    ));
    // A version-2 image (the single-output layout) is refused by name.
    let mut v2 = image.clone();
    v2[4..8].copy_from_slice(&2u32.to_le_bytes());
    let mut arena = vec![0u8; total as usize];
    let err = Interpreter::new(&v2, &mut arena).expect_err("version 2");
    assert!(matches!(err, Error::UnsupportedVersion { found: 2 }));
    assert!(format!("{err}").contains("lower the model again"), "{err}");
}

/// Runs a one-op Signal model and returns output `k`'s bytes.
fn run_signal(
    tensors: Vec<TensorSpec>,
    code: &str,
    inputs: &[i32],
    outputs: &[i32],
    options: &[(&str, i64)],
    input: &[u8],
) -> Vec<Vec<u8>> {
    let bytes = support::build_custom(&tensors, code, inputs, outputs, options);
    let model = Model::parse(&bytes).expect("parse");
    let image = lower(&model).expect("lower");
    let predicted = runtime_arena(&model).expect("arena");
    let mut arena = vec![0u8; predicted.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    it.input_mut(0).expect("input").copy_from_slice(input);
    it.invoke().expect("invoke");
    (0..outputs.len())
        .map(|k| it.output(k).expect("output").to_vec())
        .collect()
}

fn le16(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn from_le16(b: &[u8]) -> Vec<i16> {
    b.chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

fn from_le32(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn signal_window_multiplies_shifts_and_saturates() {
    // Two windows of 4 against weights [4096, 8192, 16384, 32767], shift 12:
    // 1000·4096 >> 12 = 1000; −1000·8192 >> 12 = −2000; 32767·16384 >> 12 =
    // 131068 → 32767; −32768·32767 >> 12 = −262136 → −32768; then −3·4096 >> 12
    // = −3; 7·8192 >> 12 = 14; 0; −1·32767 >> 12 = ⌊−7.9998⌋ = −8 (arithmetic shift).
    let weights = TensorSpec::constant(
        &[4],
        DType::I16,
        le16(&[4096, 8192, 16384, 32767]),
        &[],
        &[],
    );
    let tensors = vec![
        TensorSpec::act(&[2, 4], DType::I16, 1.0, 0),
        weights,
        TensorSpec::act(&[2, 4], DType::I16, 1.0, 0),
    ];
    let input = le16(&[1000, -1000, 32767, -32768, -3, 7, 0, -1]);
    let out = run_signal(
        tensors,
        "SignalWindow",
        &[0, 1],
        &[2],
        &[("shift", 12)],
        &input,
    );
    assert_eq!(
        from_le16(&out[0]),
        [1000, -2000, 32767, -32768, -3, 14, 0, -8]
    );
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn signal_energy_sums_squares_of_the_bins_in_range() {
    // Bins (3, 4), (−5, 12), (−32768, −32768), (100, 0); start 1, end 3:
    // bin 1 = 25 + 144 = 169, bin 2 = 2^30 + 2^30 = 2^31 (uint32). Bins 0 and 3
    // are not written (TFLM leaves them as they are).
    let tensors = vec![
        TensorSpec::act(&[8], DType::I16, 1.0, 0),
        TensorSpec::act(&[4], DType::U32, 0.0, 0),
    ];
    let input = le16(&[3, 4, -5, 12, -32768, -32768, 100, 0]);
    let out = run_signal(
        tensors,
        "SignalEnergy",
        &[0],
        &[1],
        &[("end_index", 3), ("start_index", 1)],
        &input,
    );
    let e = from_le32(&out[0]);
    assert_eq!(&e[1..3], &[169, 1 << 31]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn signal_filter_bank_square_root_rounds_then_shifts() {
    // √0 = 0; √15: root 3, remainder 6 > 3 → 4; √2^40 = 2^20; √(2^64 − 1) =
    // 4294967295.99… → 0xFFFF_FFFF (rounding stops there). Then >> 1 (the
    // scale bits input): 0, 2, 2^19, 0x7FFF_FFFF.
    let u64s = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let tensors = vec![
        TensorSpec::act(&[4], DType::U64, 0.0, 0),
        TensorSpec::i32s(&[], &[1], &[]),
        TensorSpec::act(&[4], DType::U32, 0.0, 0),
    ];
    let out = run_signal(
        tensors,
        "SignalFilterBankSquareRoot",
        &[0, 1],
        &[2],
        &[],
        &u64s(&[0, 15, 1 << 40, u64::MAX]),
    );
    assert_eq!(from_le32(&out[0]), [0, 2, 1 << 19, 0x7FFF_FFFF]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn signal_filter_bank_log_follows_log32() {
    // input_correction_bits 3, output_scale 64; ln(x) · 64 from Log32:
    // 0 << 3 = 0: a scaled input ≤ 1 gives 0;
    // 1 << 3 = 8: log2 = 3 · 65536, ln = (45426 · 196608 + 32768) >> 16 = 136278,
    //   scaled (64 · 136278 + 32768) >> 16 = 133 (64 ln 8 = 133.08);
    // 3 << 3 = 24: integer 4, fraction (24 − 16) << 12 = 32768, segment 64
    //   (LUT 5568 → 5547, offset 0 in it), log2 = 4 · 65536 + 32768 + 5568 =
    //   300480, ln = 208276, scaled 203 (64 ln 24 = 203.40);
    // 2^28 << 3 = 2^31: log2 = 31 · 65536, ln = 45426 · 31 = 1408206, scaled 1375.
    let tensors = vec![
        TensorSpec::act(&[4], DType::U32, 0.0, 0),
        TensorSpec::act(&[4], DType::I16, 1.0, 0),
    ];
    let input: Vec<u8> = [0u32, 1, 3, 1 << 28]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let out = run_signal(
        tensors,
        "SignalFilterBankLog",
        &[0],
        &[1],
        &[("input_correction_bits", 3), ("output_scale", 64)],
        &input,
    );
    assert_eq!(from_le16(&out[0]), [0, 133, 203, 1375]);
}

#[test]
#[cfg_attr(
    miri,
    ignore = "lowering under Miri is slow; the multi-output and Signal sweeps run these kernels there"
)]
fn signal_options_that_shift_too_far_are_refused_by_plan_and_run() {
    // A shift of 40 is undefined in TFLM's C++: lowering refuses it (and the
    // runtime's Prepare would too).
    let tensors = vec![
        TensorSpec::act(&[4], DType::I16, 1.0, 0),
        TensorSpec::constant(&[4], DType::I16, le16(&[1, 2, 3, 4]), &[], &[]),
        TensorSpec::act(&[4], DType::I16, 1.0, 0),
    ];
    let bytes = support::build_custom(&tensors, "SignalWindow", &[0, 1], &[2], &[("shift", 40)]);
    let model = Model::parse(&bytes).expect("parse");
    let err = runtime_arena(&model).expect_err("shift 40");
    assert!(format!("{err}").contains("shift must be 0..31"), "{err}");
}

/// The audio front end's shape as one chain of Signal ops (window → auto
/// scale → rfft → energy → filter bank → square root → spectral subtraction
/// → PCAN → log), for the corruption sweep: multi-output ops, FlexBuffers
/// parameters, OpData twiddles, scratch and op-owned state in one image.
#[test]
fn signal_chain_survives_corruption() {
    use microarena_core::build::builder::ModelBuilder;
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let tensor =
        |b: &mut ModelBuilder, shape: &[i32], dtype: DType| b.tensor(g, "t", shape, dtype).id();
    let c16 = |b: &mut ModelBuilder, v: &[i16]| {
        b.tensor(g, "c", &[v.len() as i32], DType::I16)
            .data(&le16(v))
            .id()
    };
    let x = tensor(&mut b, &[16], DType::I16);
    let w = c16(&mut b, &[16384; 16]);
    let windowed = tensor(&mut b, &[16], DType::I16);
    let scaled = tensor(&mut b, &[16], DType::I16);
    let bits = tensor(&mut b, &[], DType::I32);
    let spectrum = tensor(&mut b, &[18], DType::I16);
    let energy = tensor(&mut b, &[9], DType::U32);
    let weights = c16(&mut b, &[1000; 8]);
    let starts = c16(&mut b, &[0, 2, 4, 6]);
    let weight_starts = c16(&mut b, &[0, 2, 4, 6]);
    let widths = c16(&mut b, &[2, 2, 2, 2]);
    let bank = tensor(&mut b, &[3], DType::U64);
    let root = tensor(&mut b, &[3], DType::U32);
    let cleaned = tensor(&mut b, &[3], DType::U32);
    let noise = tensor(&mut b, &[3], DType::U32);
    let lut = c16(&mut b, &[100; 125]);
    let gained = tensor(&mut b, &[3], DType::U32);
    let logs = tensor(&mut b, &[3], DType::I16);
    let flex = support::flex_map;
    b.custom_op(g, "SignalWindow", &[x, w], &[windowed])
        .custom_options(&flex(&[("shift", 14)]));
    b.custom_op(g, "SignalFftAutoScale", &[windowed], &[scaled, bits])
        .custom_options(&flex(&[]));
    b.custom_op(g, "SignalRfft", &[scaled], &[spectrum])
        .custom_options(&flex(&[("T", 7), ("fft_length", 16)]));
    b.custom_op(g, "SignalEnergy", &[spectrum], &[energy])
        .custom_options(&flex(&[("end_index", 9), ("start_index", 0)]));
    b.custom_op(
        g,
        "SignalFilterBank",
        &[energy, weights, weights, starts, weight_starts, widths],
        &[bank],
    )
    .custom_options(&flex(&[("num_channels", 3)]));
    b.custom_op(g, "SignalFilterBankSquareRoot", &[bank, bits], &[root])
        .custom_options(&flex(&[]));
    b.custom_op(
        g,
        "SignalFilterBankSpectralSubtraction",
        &[root],
        &[cleaned, noise],
    )
    .custom_options(&flex(&[
        ("alternate_one_minus_smoothing", 15401),
        ("alternate_smoothing", 983),
        ("clamping", 0),
        ("min_signal_remaining", 819),
        ("num_channels", 3),
        ("one_minus_smoothing", 15975),
        ("smoothing", 409),
        ("smoothing_bits", 10),
        ("spectral_subtraction_bits", 14),
    ]));
    b.custom_op(g, "SignalPCAN", &[cleaned, noise, lut], &[gained])
        .custom_options(&flex(&[("snr_shift", 6)]));
    b.custom_op(g, "SignalFilterBankLog", &[gained], &[logs])
        .custom_options(&flex(&[("input_correction_bits", 3), ("output_scale", 64)]));
    b.inputs(g, &[x]).outputs(g, &[logs]);
    let model = b.build().expect("valid model");
    let (image, total) = image_of(&model);
    let mut arena = vec![0u8; total as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    it.input_mut(0).expect("input").copy_from_slice(&le16(&[
        3000, -2000, 1000, 500, -700, 1200, -3000, 2500, 0, 100, -100, 900, -900, 40, 80, -20,
    ]));
    it.invoke().expect("invoke");
    it.invoke().expect("invoke again (state)");
    if cfg!(miri) {
        // A handful: each surviving corruption runs the FFT, slow under Miri.
        sweep(&image, total as usize, usize::MAX, 1999, 3989);
    } else {
        sweep(&image, total as usize, usize::MAX, 1, 1);
    }
}

/// Int8 DEPTHWISE_CONV_2D 3×3 against a direct sum over the taps inside the
/// input (TFLM's reference loop, written out here) on shapes that take each
/// path: row strips (padding, stride 2, channel counts that leave a partial
/// block of four, one input channel to eight or four to sixteen, input zero
/// points at int8's ends), rows too wide for a strip, and a ReLU whose bounds
/// leave the requantization's int8 fast path.
#[test]
fn depthwise_i8_3x3_matches_a_direct_sum() {
    use microarena_runtime::fixedpoint::{mbqm, quantize_multiplier};
    /// (h, w, input channels, multiplier, stride, VALID, input zp, output zp, activation)
    type Case = (i32, i32, i32, i32, i32, bool, i64, i64, i8);
    let cases: &[Case] = &[
        (5, 7, 4, 1, 1, false, 3, -128, 0),
        (6, 6, 6, 1, 2, false, -128, -5, 0),
        (4, 9, 3, 1, 1, true, 127, 0, 0),
        (7, 5, 1, 8, 2, false, -128, -128, 3),
        (3, 3, 8, 1, 1, false, 10, 7, 1),
        (9, 10, 12, 1, 2, true, -1, -128, 0),
        (2, 2, 4, 1, 1, false, 0, 0, 0),
        (5, 11, 4, 4, 1, false, 50, -20, 0),
        (3, 120, 4, 1, 1, false, -7, -128, 0),
        (4, 60, 5, 1, 2, false, 20, 3, 1),
    ];
    // Under Miri (a lowering and invoke take ~20 s each there) two cases keep
    // the strip paths checked: SAME edges, and a multiplier of 8 with stride 2.
    for (k, &(h, w, ic, mult, stride, valid, in_zp, out_zp, act)) in cases
        .iter()
        .enumerate()
        .filter(|&(k, _)| !cfg!(miri) || k == 0 || k == 3)
    {
        let oc = ic * mult;
        let (oh, ow, pad_h, pad_w) = if valid {
            ((h - 3) / stride + 1, (w - 3) / stride + 1, 0, 0)
        } else {
            let (oh, ow) = ((h + stride - 1) / stride, (w + stride - 1) / stride);
            let pad = |o: i32, i: i32| (((o - 1) * stride + 3 - i).max(0)) / 2;
            (oh, ow, pad(oh, h), pad(ow, w))
        };
        let x = pseudo_random_bytes(0x5eed + k as u32, (h * w * ic) as usize);
        let f = pseudo_random_bytes(0xf11 + k as u32, (9 * oc) as usize);
        let bias: Vec<i32> = (0..oc).map(|c| (c * 977 - 3000) * (k as i32 + 1)).collect();
        let (in_s, out_s) = (0.05f32, 0.1f32);
        let f_s: Vec<f32> = (0..oc).map(|c| 0.004 + 0.0007 * c as f32).collect();
        let b_s: Vec<f32> = f_s.iter().map(|s| s * in_s).collect();
        let mut filter =
            TensorSpec::constant(&[1, 3, 3, oc], I8, f.clone(), &f_s, &vec![0; oc as usize]);
        filter.quantized_dimension = 3;
        let mut bias_t = TensorSpec::i32s(&[oc], &bias, &b_s);
        bias_t.quantized_dimension = 0;
        let tensors = vec![
            TensorSpec::act(&[1, h, w, ic], I8, in_s, in_zp),
            filter,
            bias_t,
            TensorSpec::act(&[1, oh, ow, oc], I8, out_s, out_zp),
        ];
        let options = OptSpec::Depthwise {
            padding_valid: valid,
            stride,
            multiplier: mult,
            activation: act,
        };
        let got = run(
            tensors,
            op(rl::opcode::DEPTHWISE_CONV_2D, &[0, 1, 2], 3, options),
            std::slice::from_ref(&x),
        );
        // TFLM's activation bounds: none, ReLU (1) or ReLU6 (3).
        let q = |v: f32| out_zp as i32 + (v / out_s).round() as i32;
        let (lo, hi) = match act {
            1 => (q(0.0).max(-128), 127),
            3 => (q(0.0).max(-128), q(6.0).min(127)),
            _ => (-128, 127),
        };
        let mut want = Vec::new();
        for oy in 0..oh {
            for ox in 0..ow {
                for c in 0..oc {
                    let mut acc = bias[c as usize];
                    for ky in 0..3 {
                        for kx in 0..3 {
                            let (iy, ix) = (oy * stride - pad_h + ky, ox * stride - pad_w + kx);
                            if iy < 0 || iy >= h || ix < 0 || ix >= w {
                                continue;
                            }
                            let xv = x[((iy * w + ix) * ic + c / mult) as usize] as i8 as i32;
                            let wv = f[((ky * 3 + kx) * oc + c) as usize] as i8 as i32;
                            acc += wv * (xv - in_zp as i32);
                        }
                    }
                    let real = f64::from(in_s) * f64::from(f_s[c as usize]) / f64::from(out_s);
                    let (m, s) = quantize_multiplier(real);
                    let v = (mbqm(acc, m, s) + out_zp as i32).max(lo).min(hi);
                    want.push(v as i8);
                }
            }
        }
        assert_eq!(to_i8(&got), want, "case {k}: {:?}", cases[k]);
    }
}
