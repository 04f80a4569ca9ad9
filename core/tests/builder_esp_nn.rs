//! esp-tflite-micro's ESP-NN Prepare rules on builder models, one rule per test, sizes worked
//! by hand from ESP-NN's own size functions (espressif/esp-nn d45b843c:
//! `esp_nn_get_conv_scratch_size_esp32s3`, `esp_nn_get_depthwise_conv_scratch_size_esp32s3`,
//! `esp_nn_get_softmax_scratch_size_*`; the generic `_opt` convolution ones return 0) as
//! `kernels/esp_nn/*.cc` (espressif/esp-tflite-micro 99f49e14) call them; `docs/esp-nn.md`.
//! Each model runs on `esp32s3-esp-nn`, `esp32-esp-nn` and, for contrast, `cortex-m`.

mod support;

use microarena_core::build::builder::ModelBuilder;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_core::tflm::analysis::Analysis;
use microarena_core::tflm::profile::{CORTEX_M, ESP32_ESP_NN, ESP32S3_ESP_NN, TargetProfile};
use microarena_core::tflm::tail::Category;

fn run(bytes: &[u8], profile: &'static TargetProfile) -> Analysis {
    support::analysis(bytes, profile)
}

/// Scratch requests of op 0, in order, on (ESP32-S3, ESP32, Cortex-M reference).
fn scratch(bytes: &[u8]) -> [Vec<u64>; 3] {
    support::op0_scratch(bytes, [&ESP32S3_ESP_NN, &ESP32_ESP_NN, &CORTEX_M])
}

/// Tail allocations of `category` owned by op 0, requested bytes in order.
fn owned(bytes: &[u8], profile: &'static TargetProfile, category: Category) -> Vec<u64> {
    support::op0_tail(bytes, profile, category)
}

/// An int8 CONV_2D (filter OHWI) or DEPTHWISE_CONV_2D (filter 1HWC), per-channel weights,
/// `padding`, stride 1.
fn conv(op: BuiltinOp, input: &[i32], filter: &[i32], output: &[i32], padding: Padding) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let depthwise = op == BuiltinOp::DEPTHWISE_CONV_2D;
    let channels = if depthwise { filter[3] } else { filter[0] };
    let n = channels as usize;
    let x = b.tensor(g, "x", input, DType::I8).quant(0.5, 0).id();
    let w = b
        .tensor(g, "w", filter, DType::I8)
        .quant_per_channel(&vec![0.1; n], &vec![0; n], if depthwise { 3 } else { 0 })
        .data_i8(&vec![1; filter.iter().product::<i32>() as usize])
        .id();
    let bias = b
        .tensor(g, "b", &[channels], DType::I32)
        .data(&vec![0; n * 4])
        .id();
    let y = b.tensor(g, "y", output, DType::I8).quant(0.5, 0).id();
    let h = b.op(g, op, &[x, w, bias], &[y]);
    if depthwise {
        h.depthwise_options(padding, 1, 1, output[3] / input[3], Activation::None);
    } else {
        h.conv_options(padding, 1, 1, Activation::None);
    }
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn conv_1x1_asks_the_s3_a_filter_copy_and_a_transpose_buffer() {
    // 1×1, stride 1, no padding, 16 input channels (a multiple of 8: no input copy):
    // filter 16·8 = 128, transpose 2·8·16 = 256 (8·8 pixels ≥ 8), margin 64 → 448.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 8, 8, 16],
        &[8, 1, 1, 16],
        &[1, 8, 8, 8],
        Padding::Valid,
    );
    assert_eq!(scratch(&m), [vec![448], vec![], vec![]]);
    // NodeData: OpDataConv 56 + buffer_idx = 60, then the two per-channel arrays of 8·4.
    assert_eq!(
        owned(&m, &ESP32S3_ESP_NN, Category::PersistentBufferData),
        [60, 32, 32]
    );
    assert_eq!(
        owned(&m, &ESP32_ESP_NN, Category::PersistentBufferData),
        [60, 32, 32]
    );
    assert_eq!(
        owned(&m, &CORTEX_M, Category::PersistentBufferData),
        [56, 32, 32]
    );
}

#[test]
fn conv_1x1_pads_odd_channels_to_eight() {
    // 12 channels → 16: the input copy 2·2·16 = 64, filter 16·4 = 64, no transpose
    // (2·2 pixels < 8), margin 64 → 192.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 2, 2, 12],
        &[4, 1, 1, 12],
        &[1, 2, 2, 4],
        Padding::Valid,
    );
    assert_eq!(scratch(&m), [vec![192], vec![], vec![]]);
}

#[test]
fn conv_narrow_rows_take_the_im2col_path() {
    // 3×3 over 3 channels: a filter row of 9 < 16, a window of 27 ≥ 16, rounded to 32:
    // filter sums 8·4 + 16 + aligned filter 8·32 + 16 + one column 32 + margin 64 = 416.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 8, 8, 3],
        &[8, 3, 3, 3],
        &[1, 8, 8, 8],
        Padding::Same,
    );
    assert_eq!(scratch(&m), [vec![416], vec![], vec![]]);
}

#[test]
fn conv_general_path_copies_padded_input_filter_and_border() {
    // 3×3 over 16 channels, SAME on 8×8: padding 1 on each side.
    // padded input (8+2)·(8+2)·16 = 1600; filter 3·3·16·8 = 1152; aligned filter rows
    // 48·3·8 = 1152; right/bottom border 8+3−1−8 = 2 → (8+2)·(8+2)·16 = 1600;
    // margin 64; offsets 8·4 = 32 → 5600.
    let m = conv(
        BuiltinOp::CONV_2D,
        &[1, 8, 8, 16],
        &[8, 3, 3, 16],
        &[1, 8, 8, 8],
        Padding::Same,
    );
    assert_eq!(scratch(&m), [vec![5600], vec![], vec![]]);
}

#[test]
fn depthwise_3x3_on_sixteen_channels_copies_the_padded_input() {
    // Multiplier 1, 16 channels, 3×3, SAME (padding 1): (8+2)·(8+2)·16 = 1600 ≤ 40 KiB,
    // filter 3·3·16 = 144, + 16 → 1760.
    let m = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 16],
        &[1, 3, 3, 16],
        &[1, 8, 8, 16],
        Padding::Same,
    );
    assert_eq!(scratch(&m), [vec![1760], vec![], vec![]]);
    assert_eq!(
        owned(&m, &ESP32S3_ESP_NN, Category::PersistentBufferData),
        [60, 64, 64]
    );
}

#[test]
fn depthwise_other_filters_widen_to_int16() {
    // 5×5 over 8 channels: 2·(5·5·8 + 8·8·8) = 1424 ≤ 48 KiB, + 32 → 1456.
    let m = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 8],
        &[1, 5, 5, 8],
        &[1, 8, 8, 8],
        Padding::Same,
    );
    assert_eq!(scratch(&m), [vec![1456], vec![], vec![]]);
}

#[test]
fn depthwise_few_channels_pad_to_eight_with_aligned_blocks() {
    // 4 channels → 8: int16 filter 9·8·2 = 144 (input block at 144), int16 input
    // 8·8·8·2 = 1024 (output block at 1168), output 8·8·8 = 512 (bias block at 1680),
    // bias, shifts and multipliers 3·8·4 = 96, margin 16 → 1792.
    let m = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 4],
        &[1, 3, 3, 4],
        &[1, 8, 8, 4],
        Padding::Same,
    );
    assert_eq!(scratch(&m), [vec![1792], vec![], vec![]]);
}

#[test]
fn depthwise_multiplier_two_gets_the_fallback() {
    // 3 channels, multiplier 2: neither multiplier 1 nor a multiple of 4 → 32.
    let m = conv(
        BuiltinOp::DEPTHWISE_CONV_2D,
        &[1, 8, 8, 3],
        &[1, 3, 3, 6],
        &[1, 8, 8, 6],
        Padding::Same,
    );
    assert_eq!(scratch(&m), [vec![32], vec![], vec![]]);
}

fn softmax(shape: &[i32], dtype: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let (qi, qo) = if dtype == DType::I8 {
        ((0.1, 0), (1.0 / 256.0, -128))
    } else {
        ((0.0, 0), (0.0, 0))
    };
    let x = b.tensor(g, "x", shape, dtype).quant(qi.0, qi.1).id();
    let y = b.tensor(g, "y", shape, dtype).quant(qo.0, qo.1).id();
    b.op(g, BuiltinOp::SOFTMAX, &[x], &[y]).softmax_options(1.0);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn softmax_asks_an_int32_per_element_of_dimension_one() {
    // int8 → int8: `input->dims->data[1]` int32s on both chips: [1, 10] → 40 …
    let m = softmax(&[1, 10], DType::I8);
    assert_eq!(scratch(&m), [vec![40], vec![40], vec![]]);
    // … and [1, 4, 4, 10] → dimension 1 is 4 → 16, whatever the row length.
    let m = softmax(&[1, 4, 4, 10], DType::I8);
    assert_eq!(scratch(&m), [vec![16], vec![16], vec![]]);
    // NodeData: SoftmaxParams (56, 8-aligned) + buffer_idx, padded to 64.
    assert_eq!(
        owned(&m, &ESP32S3_ESP_NN, Category::PersistentBufferData),
        [64]
    );
    assert_eq!(owned(&m, &CORTEX_M, Category::PersistentBufferData), [56]);
    // float32: no ESP-NN path, no scratch.
    assert_eq!(
        scratch(&softmax(&[1, 10], DType::F32)),
        [Vec::<u64>::new(), vec![], vec![]]
    );
}

#[test]
fn four_byte_enums_widen_tensors_and_builtin_data() {
    // FULLY_CONNECTED's TfLiteFullyConnectedParams holds three enums and two bools:
    // 5 B with short enums, 4+4+1+1(+2)+4 = 16 B with 4-byte ones.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 4], DType::F32).id();
    let w = b.tensor(g, "w", &[2, 4], DType::F32).data(&[0; 32]).id();
    let y = b.tensor(g, "y", &[1, 2], DType::F32).id();
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, w], &[y])
        .fc_options(Activation::None, false);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let m = b.build().unwrap();
    assert_eq!(owned(&m, &ESP32_ESP_NN, Category::BuiltinData), [16]);
    assert_eq!(owned(&m, &CORTEX_M, Category::BuiltinData), [5]);
    // The two I/O TfLiteTensor structs: 40 B each (TfLiteType, TfLiteAllocationType and
    // TfLiteQuantizationType are words), 32 B each with short enums.
    let tensors = |p| {
        run(&m, p)
            .tail
            .allocs
            .iter()
            .filter(|a| a.category == Category::PersistentTensors)
            .map(|a| a.requested)
            .sum::<u64>()
    };
    assert_eq!(tensors(&ESP32_ESP_NN), 80);
    assert_eq!(tensors(&CORTEX_M), 64);
}
