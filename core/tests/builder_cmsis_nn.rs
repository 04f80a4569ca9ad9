//! CMSIS-NN's Prepare rules on builder models, one rule per test, sizes worked by hand from
//! `docs/cmsis-nn.md` (CMSIS-NN 4ab83cc3 `*_get_buffer_size*`, TFLM 90b983c2 `kernels/cmsis_nn/`).
//! Each model runs on `cortex-m` (reference kernels), `cortex-m4-cmsis-nn` (DSP) and
//! `cortex-m0plus-cmsis-nn` (no DSP).

#[allow(dead_code)]
#[path = "../examples/kernel_cases.rs"]
mod kernel_cases;

mod support;

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_core::tflm::analysis::Analysis;
use microarena_core::tflm::profile::{
    CORTEX_M, CORTEX_M0PLUS_CMSIS_NN, CORTEX_M4_CMSIS_NN, TargetProfile,
};
use microarena_core::tflm::tail::Category;

fn run(bytes: &[u8], profile: &'static TargetProfile) -> Analysis {
    support::analysis(bytes, profile)
}

/// Scratch requests of op 0, in order, on (reference, M4 CMSIS-NN, M0+ CMSIS-NN).
fn scratch(bytes: &[u8]) -> [Vec<u64>; 3] {
    support::op0_scratch(
        bytes,
        [&CORTEX_M, &CORTEX_M4_CMSIS_NN, &CORTEX_M0PLUS_CMSIS_NN],
    )
}

/// Persistent-buffer requests owned by op 0 (OpData first, then Prepare's).
fn persistent(bytes: &[u8], profile: &'static TargetProfile) -> Vec<u64> {
    support::op0_tail(bytes, profile, Category::PersistentBufferData)
}

/// An int8 CONV_2D or DEPTHWISE_CONV_2D: `input` NHWC, `filter` OHWI (depthwise 1HWC),
/// SAME padding, stride `stride`.
fn conv(
    op: BuiltinOp,
    input: &[i32],
    filter: &[i32],
    output: &[i32],
    stride: (i32, i32),
    dtype: DType,
) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let channels = if op == BuiltinOp::DEPTHWISE_CONV_2D {
        filter[3]
    } else {
        filter[0]
    };
    let quant_dim = if op == BuiltinOp::DEPTHWISE_CONV_2D {
        3
    } else {
        0
    };
    let n = channels as usize;
    let filter_len = filter.iter().product::<i32>() as usize;
    let x = b.tensor(g, "x", input, dtype).quant(0.5, 0).id();
    let w = b
        .tensor(g, "w", filter, DType::I8)
        .quant_per_channel(&vec![0.1; n], &vec![0; n], quant_dim)
        .data_i8(&vec![1; filter_len])
        .id();
    let bias_type = if dtype == DType::I16 {
        DType::I64
    } else {
        DType::I32
    };
    let bias = b
        .tensor(g, "b", &[channels], bias_type)
        .data(&vec![0; n * bias_type.size_bytes().unwrap() as usize])
        .id();
    let y = b.tensor(g, "y", output, dtype).quant(0.5, 0).id();
    let h = b.op(g, op, &[x, w, bias], &[y]);
    if op == BuiltinOp::DEPTHWISE_CONV_2D {
        h.depthwise_options(
            Padding::Same,
            stride.0,
            stride.1,
            output[3] / input[3],
            Activation::None,
        );
    } else {
        h.conv_options(Padding::Same, stride.0, stride.1, Activation::None);
    }
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn conv_general_path_asks_two_im2col_columns() {
    // 3×3 filter over 3 channels: 27 columns, aligned to 28, two int16 columns: 2·28·2 = 112
    // on both CPU classes; the reference kernel asks nothing.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 8, 8, 3],
        &[8, 3, 3, 3],
        &[1, 8, 8, 8],
        (1, 1),
        DType::I8,
    );
    assert_eq!(scratch(&m), [vec![], vec![112], vec![112]]);
    // OpData 56 + buffer_idx = 60, then the two per-channel arrays of 8·4.
    assert_eq!(persistent(&m, &CORTEX_M4_CMSIS_NN), [60, 32, 32]);
    assert_eq!(persistent(&m, &CORTEX_M), [56, 32, 32]);
}

#[test]
fn conv_1x1_needs_no_buffer_with_gcc_at_any_stride() {
    for stride in [(1, 1), (2, 2)] {
        let out = if stride.0 == 1 { 4 } else { 2 };
        let m = conv(
            BuiltinOp::CONV_2D,
            &[1, 4, 4, 16],
            &[8, 1, 1, 16],
            &[1, out, out, 8],
            stride,
            DType::I8,
        );
        assert_eq!(
            scratch(&m),
            [Vec::<u64>::new(), vec![], vec![]],
            "stride {stride:?}"
        );
    }
}

#[test]
fn conv_1xn_off_mve_takes_the_general_size() {
    // Height-1 input, 1×3 filter, stride_w·C_in = 4: the 1×N kernel, whose buffer off MVE is
    // the general one: 3·4 = 12 columns (already aligned), 2·12·2 = 48.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 1, 16, 4],
        &[8, 1, 3, 4],
        &[1, 1, 16, 8],
        (1, 1),
        DType::I8,
    );
    assert_eq!(scratch(&m), [vec![], vec![48], vec![48]]);
}

#[test]
fn conv_int16_asks_its_own_size_even_for_1x1() {
    // int16: no 1×1 branch, 2·C_in·KH·KW·2 = 2·16·1·1·2 = 64.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 4, 4, 16],
        &[8, 1, 1, 16],
        &[1, 4, 4, 8],
        (1, 1),
        DType::I16,
    );
    assert_eq!(scratch(&m), [vec![], vec![64], vec![64]]);
}

#[test]
fn depthwise_3x3_needs_no_buffer_and_5x5_only_with_dsp() {
    let m3 = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 8],
        &[1, 3, 3, 8],
        &[1, 8, 8, 8],
        (1, 1),
        DType::I8,
    );
    assert_eq!(scratch(&m3), [Vec::<u64>::new(), vec![], vec![]]);
    // Channel multiplier 1, 5×5: C_in·KH·KW·2 = 8·25·2 = 400 with DSP, none without.
    let m5 = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 8],
        &[1, 5, 5, 8],
        &[1, 8, 8, 8],
        (1, 1),
        DType::I8,
    );
    assert_eq!(scratch(&m5), [vec![], vec![400], vec![]]);
}

#[test]
fn depthwise_with_a_channel_multiplier_needs_no_buffer() {
    // 4 → 8 channels (multiplier 2): CMSIS-NN's generic kernel, no buffer on any class.
    let m = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 4],
        &[1, 5, 5, 8],
        &[1, 8, 8, 8],
        (1, 1),
        DType::I8,
    );
    assert_eq!(scratch(&m), [Vec::<u64>::new(), vec![], vec![]]);
}

#[test]
fn float_conv_has_no_per_channel_arrays_on_cmsis_nn() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 4, 4, 2], DType::F32).id();
    let w = b
        .tensor(g, "w", &[4, 3, 3, 2], DType::F32)
        .data_f32(&[0.5; 72])
        .id();
    let bias = b.tensor(g, "b", &[4], DType::F32).data_f32(&[0.0; 4]).id();
    let y = b.tensor(g, "y", &[1, 4, 4, 4], DType::F32).id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[y])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let m = b.build().unwrap();
    // Reference: OpData 56 and two 4·4 arrays; CMSIS-NN: OpData 60 only, and no scratch.
    assert_eq!(persistent(&m, &CORTEX_M), [56, 16, 16]);
    assert_eq!(persistent(&m, &CORTEX_M4_CMSIS_NN), [60]);
    assert_eq!(scratch(&m), [Vec::<u64>::new(), vec![], vec![]]);
}

#[test]
fn average_pool_asks_one_accumulator_per_channel_with_dsp() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "x", &[1, 4, 4, 24], DType::I8)
        .quant(0.5, 0)
        .id();
    let y = b
        .tensor(g, "y", &[1, 1, 1, 24], DType::I8)
        .quant(0.5, 0)
        .id();
    b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[x], &[y])
        .pool_options(Padding::Valid, (4, 4), (4, 4), Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let m = b.build().unwrap();
    // 24 channels · 4 bytes = 96 with DSP; none on ARMv6-M or with the reference kernel.
    assert_eq!(scratch(&m), [vec![], vec![96], vec![]]);
    // OpDataPooling 32 + buffer_idx.
    assert_eq!(persistent(&m, &CORTEX_M0PLUS_CMSIS_NN), [36]);
}

fn fully_connected(output: &[i32], keep_num_dims: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 4, 16], DType::I8).quant(0.5, 0).id();
    let w = b
        .tensor(g, "w", &[10, 16], DType::I8)
        .quant(0.1, 0)
        .data_i8(&[1; 160])
        .id();
    let bias = b.tensor(g, "b", &[10], DType::I32).data_i32(&[0; 10]).id();
    let y = b.tensor(g, "y", output, DType::I8).quant(0.5, 0).id();
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, w, bias], &[y])
        .fc_options(Activation::None, keep_num_dims);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn fully_connected_as_1x1_conv_fakes_per_channel_parameters() {
    // 3-D output and accum_depth 16 (a multiple of 4), per-tensor filter: one scratch for
    // 10 multipliers and 10 shifts, 10·4·2 = 80, on both classes.
    let m = fully_connected(&[1, 4, 10], true);
    assert_eq!(scratch(&m), [vec![], vec![80], vec![80]]);
    // OpDataFullyConnected 48 + 2 int + int32_t* + 3 int32_t = 72.
    assert_eq!(persistent(&m, &CORTEX_M4_CMSIS_NN), [72]);
    // A 2-D output takes arm_fully_connected_s8, whose buffer is 0 off MVE.
    let flat = fully_connected(&[4, 10], false);
    assert_eq!(scratch(&flat), [Vec::<u64>::new(), vec![], vec![]]);
}

#[test]
fn svdf_keeps_the_reference_buffers_with_a_larger_op_data() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    // batch 2, input 8, 6 filters, rank 2 → 3 units, memory 4.
    let x = b.tensor(g, "x", &[2, 8], DType::I8).quant(0.5, 0).id();
    let wf = b
        .tensor(g, "wf", &[6, 8], DType::I8)
        .quant(0.1, 0)
        .data_i8(&[1; 48])
        .id();
    let wt = b
        .tensor(g, "wt", &[6, 4], DType::I16)
        .quant(0.1, 0)
        .data(&[0; 48])
        .id();
    let bias = b.tensor(g, "b", &[3], DType::I32).data_i32(&[0; 3]).id();
    let state = b
        .tensor(g, "state", &[2, 24], DType::I16)
        .quant(0.1, 0)
        .variable()
        .id();
    let y = b.tensor(g, "y", &[2, 3], DType::I8).quant(0.5, 0).id();
    b.op(g, BuiltinOp::SVDF, &[x, wf, wt, bias, state], &[y])
        .svdf_options(2, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let m = b.build().unwrap();
    // batch·filters·4 = 48 and batch·units·4 = 24 everywhere; arm_svdf_s8 needs none off MVE.
    assert_eq!(scratch(&m), [vec![48, 24], vec![48, 24], vec![48, 24]]);
    // CmsisNnOpDataSvdf: the reference's 9 fields (36) + int32_t* kernel_sums.
    assert_eq!(persistent(&m, &CORTEX_M), [36]);
    assert_eq!(persistent(&m, &CORTEX_M0PLUS_CMSIS_NN), [40]);
}

fn transpose_conv(in_c: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let shape = b
        .tensor(g, "shape", &[4], DType::I32)
        .data_i32(&[1, 8, 8, 8])
        .id();
    let n = (8 * 3 * 3 * in_c) as usize;
    let w = b
        .tensor(g, "w", &[8, 3, 3, in_c], DType::I8)
        .quant_per_channel(&[0.1; 8], &[0; 8], 0)
        .data_i8(&vec![1; n])
        .id();
    let x = b
        .tensor(g, "x", &[1, 4, 4, in_c], DType::I8)
        .quant(0.5, 0)
        .id();
    let bias = b.tensor(g, "b", &[8], DType::I32).data_i32(&[0; 8]).id();
    let y = b
        .tensor(g, "y", &[1, 8, 8, 8], DType::I8)
        .quant(0.5, 0)
        .id();
    b.op(g, BuiltinOp::TRANSPOSE_CONV, &[shape, w, x, bias], &[y])
        .conv_options(Padding::Same, 2, 2, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn transpose_conv_asks_two_buffers_even_when_one_is_empty() {
    // 8 input channels (not above 16): one int32 window ((4−1)·2 + max(3, 2))·8 = 72 wide,
    // max(3, 2) = 3 rows: 864 B, and an empty reverse-filter request. The reference kernel
    // asks one int32 per output element, 8·8·8·4 = 2048.
    let m = transpose_conv(8);
    assert_eq!(scratch(&m), [vec![2048], vec![864, 0], vec![864, 0]]);
    // 32 input channels: the reverse conv, im2col 2·align4(3·3·32)·2 = 1152 and the reversed
    // filter 32·3·3·8 = 2304.
    let m = transpose_conv(32);
    assert_eq!(
        scratch(&m),
        [vec![2048], vec![1152, 2304], vec![1152, 2304]]
    );
}

#[test]
fn transpose_conv_op_data_is_measured_now() {
    // 76 B (ConvParams, three int, two pointers), measured on the M4 and M0+
    // CMSIS-NN builds by the kernel probes: no estimate is flagged any more.
    let a = run(&transpose_conv(8), &CORTEX_M4_CMSIS_NN);
    assert!(
        !a.diagnostics
            .iter()
            .any(|d| d.message.contains("estimated")),
        "{:?}",
        a.diagnostics
    );
    assert_eq!(persistent(&transpose_conv(8), &CORTEX_M4_CMSIS_NN)[0], 76);
    assert_eq!(persistent(&transpose_conv(8), &CORTEX_M)[0], 72);
}

/// The seed's RP2040 question: a conv model that fits 264 KiB with 48 KiB of RTOS and stacks
/// on the reference figures, but not on CMSIS-NN, because of an im2col scratch.
#[test]
fn rp2040_im2col_scratch_is_what_no_longer_fits() {
    use microarena_core::report::budget::{Budget, Reserve};
    use microarena_core::report::{BufferClass, Report};

    // 48×48×32 int8 in, 8×8 filter, 62 channels out (SAME): input 73,728 B, output
    // 142,848 B, both live during the conv: head 216,576 B on the reference kernels.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "x", &[1, 48, 48, 32], DType::I8)
        .quant(0.5, 0)
        .id();
    let w = b
        .tensor(g, "w", &[62, 8, 8, 32], DType::I8)
        .quant_per_channel(&[0.1; 62], &[0; 62], 0)
        .data_i8(&vec![1; 62 * 8 * 8 * 32])
        .id();
    let bias = b.tensor(g, "b", &[62], DType::I32).data_i32(&[0; 62]).id();
    let y = b
        .tensor(g, "y", &[1, 48, 48, 62], DType::I8)
        .quant(0.5, 0)
        .id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[y])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let m = b.build().unwrap();

    let budget = Budget {
        ram_bytes: 264 * 1024,
        reserves: vec![Reserve {
            name: "rtos+stacks".into(),
            bytes: 48 * 1024,
        }],
        headroom_bp: 0,
    };
    let reference = run(&m, &CORTEX_M);
    let cmsis = run(&m, &CORTEX_M0PLUS_CMSIS_NN);
    assert_eq!(reference.head_bytes, 73_728 + 142_848);
    // im2col: 8·8·32 = 2048 columns (aligned), two int16 columns: 2·2048·2 = 8192 B.
    assert_eq!(cmsis.head_bytes, 73_728 + 142_848 + 8192);
    assert!(budget.check(reference.minimum_bytes).fits);
    assert!(!budget.check(cmsis.minimum_bytes).fits);

    // The map shows it as the conv's scratch buffer.
    let model = Model::parse(&m).unwrap();
    let report = Report::new(&model, &cmsis, "rp2040.tflite");
    let scratch: Vec<_> = report
        .buffers
        .iter()
        .filter(|b| b.kind == BufferClass::Scratch)
        .map(|b| (b.op, b.bytes))
        .collect();
    assert_eq!(scratch, [(Some(0), 8192)]);
    assert_eq!(report.operators[0].opcode, "CONV_2D");
}

/// The LSTM probe of `kernel_cases`: batch 2, 5 steps, 8 features, 16 units; int8 activations
/// with an int16 cell, or float throughout.
fn lstm(int8: bool) -> Vec<u8> {
    kernel_cases::lstm_model(int8)
}

#[test]
fn int8_lstm_takes_kernel_sums_and_three_buffers() {
    let m = lstm(true);
    // batch 2 · 16 units · int16 cell = 64 B per buffer: four on the reference kernel, three
    // on CMSIS-NN's, whatever the CPU class.
    assert_eq!(scratch(&m), [vec![64; 4], vec![64; 3], vec![64; 3]]);
    // OpData 688 → 912 (+ cmsis_nn_lstm_params), then eight int32 kernel sums of 16 units.
    assert_eq!(persistent(&m, &CORTEX_M), [688]);
    let mut expected = vec![912];
    expected.extend([64; 8]);
    assert_eq!(persistent(&m, &CORTEX_M4_CMSIS_NN), expected);
}

#[test]
fn float_lstm_keeps_the_reference_buffers() {
    let m = lstm(false);
    // Float cell: four buffers of 2 · 16 · 4 = 128 B on every backend, no kernel sums.
    assert_eq!(scratch(&m), [vec![128; 4], vec![128; 4], vec![128; 4]]);
    assert_eq!(persistent(&m, &CORTEX_M0PLUS_CMSIS_NN), [912]);
}
