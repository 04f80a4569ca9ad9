//! Models TFLM would not run get an `error` naming the op and the reason,
//! from the registry of TFLM's kernels (tflite-micro 90b983c2; the rules and
//! their source files are in `docs/tflm-kernels.md`). Each model is built
//! with `ModelBuilder`; the expected op, stage and wording are read off
//! TFLM's sources by hand, not from the code under test.

mod support;

use microarena_core::build::builder::ModelBuilder;
use microarena_core::plan::PlannerKind;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_core::tflm::analysis::{Analysis, Diagnostic, Severity};
use microarena_core::tflm::kernels;
use microarena_core::tflm::profile::{self, TargetProfile};
use microarena_core::tflm::registry::{self, Rejection, Stage};
use microarena_core::{Config, Model, analyze};

/// The Cortex-M4 CMSIS-NN target: the registry's CMSIS-NN column applies.
use profile::CORTEX_M4_CMSIS_NN as CMSIS_NN;

fn analysis(bytes: &[u8], profile: &'static TargetProfile) -> Analysis {
    let m = Model::parse(bytes).expect("builder output parses");
    let config = Config {
        profile,
        planner: PlannerKind::TflmGreedy,
    };
    analyze(&m, &config).expect("analysis succeeds")
}

fn errors(a: &Analysis) -> Vec<&Diagnostic> {
    a.diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}

/// The one error of a model whose op 0 of subgraph 0 TFLM refuses.
fn the_error(bytes: &[u8], profile: &'static TargetProfile) -> String {
    let a = analysis(bytes, profile);
    let errs = errors(&a);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].op, Some((0, 0)), "{errs:?}");
    errs[0].message.clone()
}

fn has(message: &str, parts: &[&str]) {
    for p in parts {
        assert!(message.contains(p), "{p:?} missing from: {message}");
    }
}

/// One elementwise op `code` over two inputs of `dtype`, output of `out`.
fn binary(code: BuiltinOp, dtype: DType, out: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 8], dtype).id();
    let y = b.tensor(g, "y", &[1, 8], dtype).id();
    let z = b.tensor(g, "z", &[1, 8], out).id();
    b.op(g, code, &[x, y], &[z]);
    b.inputs(g, &[x, y]).outputs(g, &[z]);
    b.build().unwrap()
}

#[test]
fn pow_has_no_kernel() {
    // micro_mutable_op_resolver.h has no AddPow: resolving the node fails.
    let msg = the_error(
        &binary(BuiltinOp::POW, DType::F32, DType::F32),
        &profile::X86_64,
    );
    has(
        &msg,
        &[
            "TFLM would not run this model",
            "op 0 (POW)",
            "no POW kernel",
            "cannot resolve the op",
        ],
    );
}

/// uint8 tensors were quantized around 128, int8 ones around 0.
fn zero_point(dtype: DType) -> i64 {
    if dtype == DType::U8 { 128 } else { 0 }
}

fn softmax(input: DType, output: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 10], input).quant(0.1, 128).id();
    let y = b
        .tensor(g, "y", &[1, 10], output)
        .quant(1.0 / 256.0, 0)
        .id();
    b.op(g, BuiltinOp::SOFTMAX, &[x], &[y]).softmax_options(1.0);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn uint8_softmax_is_refused_in_prepare() {
    // softmax_common.cc accepts float32→float32, int8→int8, int8→int16 and
    // int16→int16 only.
    let msg = the_error(&softmax(DType::U8, DType::U8), &profile::CORTEX_M);
    has(
        &msg,
        &[
            "op 0 (SOFTMAX)",
            "input 0 uint8, output 0 uint8",
            "Prepare fails",
        ],
    ); // cmsis_nn/softmax.cc: uint8→uint8 passes the pair check, not the input type.
    let msg = the_error(&softmax(DType::U8, DType::U8), &CMSIS_NN);
    has(
        &msg,
        &[
            "op 0 (SOFTMAX)",
            "CMSIS-NN SOFTMAX kernel",
            "Input data type not supported",
            "Prepare fails",
        ],
    );
    for p in [&profile::CORTEX_M, &CMSIS_NN] {
        let int8 = analysis(&softmax(DType::I8, DType::I8), p);
        assert_eq!(errors(&int8), Vec::<&Diagnostic>::new());
    }
}

fn conv(input: DType, filter: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "x", &[1, 4, 4, 1], input)
        .quant(0.5, zero_point(input))
        .id();
    let w = b
        .tensor(g, "w", &[2, 3, 3, 1], filter)
        .quant(0.1, zero_point(filter))
        .data(&[1; 18])
        .id();
    let bias = b.tensor(g, "b", &[2], DType::I32).data_i32(&[0, 0]).id();
    let y = b
        .tensor(g, "y", &[1, 4, 4, 2], input)
        .quant(0.5, zero_point(input))
        .id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[y])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn uint8_conv_is_hybrid_on_reference_kernels_and_an_input_type_on_cmsis_nn() {
    // conv_common.cc ConvPrepare: the (input, filter) pair uint8/uint8 is none
    // of float32/float32, int16/int8, int8/int4, int8/int8 → "Hybrid …".
    let msg = the_error(&conv(DType::U8, DType::U8), &profile::CORTEX_M);
    has(
        &msg,
        &[
            "op 0 (CONV_2D)",
            "input 0 uint8, input 1 uint8",
            "reference CONV_2D kernel",
            "Hybrid models are not supported on TFLite Micro.",
            "Prepare fails",
        ],
    );
    // cmsis_nn/conv.cc checks the input type alone first.
    let msg = the_error(&conv(DType::U8, DType::U8), &CMSIS_NN);
    has(
        &msg,
        &[
            "op 0 (CONV_2D)",
            "input 0 uint8",
            "CMSIS-NN CONV_2D kernel",
            "Input data type not supported",
            "Prepare fails",
        ],
    );
    assert!(!msg.contains("Hybrid"), "{msg}");
}

#[test]
fn uint8_depthwise_conv_loads_but_fails_at_invoke() {
    // depthwise_conv_common.cc lets an input with its own type as filter through
    // Prepare (uint8 is quantized per tensor); depthwise_conv.cc's Eval has no
    // uint8 case.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "x", &[1, 4, 4, 2], DType::U8)
        .quant(0.5, 128)
        .id();
    let w = b
        .tensor(g, "w", &[1, 3, 3, 2], DType::U8)
        .quant(0.1, 128)
        .data(&[1; 18])
        .id();
    let bias = b.tensor(g, "b", &[2], DType::I32).data_i32(&[0, 0]).id();
    let y = b
        .tensor(g, "y", &[1, 4, 4, 2], DType::U8)
        .quant(0.5, 128)
        .id();
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[x, w, bias], &[y])
        .depthwise_options(Padding::Same, 1, 1, 1, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let bytes = b.build().unwrap();
    let msg = the_error(&bytes, &profile::CORTEX_M);
    has(
        &msg,
        &[
            "op 0 (DEPTHWISE_CONV_2D)",
            "input 0 uint8, input 1 uint8",
            "fails at Invoke",
        ],
    );
    // cmsis_nn/depthwise_conv.cc refuses the input type in Prepare.
    let msg = the_error(&bytes, &CMSIS_NN);
    has(
        &msg,
        &[
            "op 0 (DEPTHWISE_CONV_2D)",
            "input 0 uint8",
            "Input data type not supported",
            "Prepare fails",
        ],
    );
}

#[test]
fn int8_conv_runs_on_both_backends() {
    let bytes = conv(DType::I8, DType::I8);
    for p in [&profile::X86_64, &profile::CORTEX_M, &CMSIS_NN] {
        assert_eq!(errors(&analysis(&bytes, p)), Vec::<&Diagnostic>::new());
    }
}

fn fill(dims_constant: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let dims = b.tensor(g, "dims", &[2], DType::I32);
    let dims = if dims_constant {
        dims.data_i32(&[2, 3]).id()
    } else {
        dims.id()
    };
    let v = b.tensor(g, "v", &[], DType::F32).data_f32(&[1.5]).id();
    let y = b.tensor(g, "y", &[2, 3], DType::F32).id();
    b.op(g, BuiltinOp::FILL, &[dims, v], &[y]);
    let inputs: &[i32] = if dims_constant { &[] } else { &[dims] };
    b.inputs(g, inputs).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn fill_with_non_constant_dims_is_refused_in_prepare() {
    // fill.cc Prepare: the dims tensor must be constant to size the output.
    let msg = the_error(&fill(false), &profile::X86_64);
    has(
        &msg,
        &[
            "op 0 (FILL)",
            "input 0",
            "not a constant tensor",
            "Prepare fails",
        ],
    );
    assert_eq!(errors(&analysis(&fill(true), &profile::X86_64)).len(), 0);
}

#[test]
fn fill_with_a_value_of_another_type_is_refused_in_prepare() {
    // fill.cc Prepare: TF_LITE_ENSURE_EQ(value->type, output->type), before the dims check.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let dims = b.tensor(g, "dims", &[2], DType::I32).data_i32(&[2, 3]).id();
    let v = b.tensor(g, "v", &[], DType::I32).data_i32(&[1]).id();
    let y = b.tensor(g, "y", &[2, 3], DType::F32).id();
    b.op(g, BuiltinOp::FILL, &[dims, v], &[y]);
    b.outputs(g, &[y]);
    let msg = the_error(&b.build().unwrap(), &profile::X86_64);
    has(
        &msg,
        &[
            "op 0 (FILL)",
            "input 1, output 0 of one type",
            "int32, float32",
            "Prepare fails",
        ],
    );
}

#[test]
fn int32_floor_mod_fails_at_invoke() {
    // floor_mod.cc: Prepare only checks that the types agree; Eval handles float32.
    let msg = the_error(
        &binary(BuiltinOp::FLOOR_MOD, DType::I32, DType::I32),
        &profile::X86_64,
    );
    has(
        &msg,
        &["op 0 (FLOOR_MOD)", "input 0 int32", "fails at Invoke"],
    );
    // Mixed types fail earlier, in Prepare.
    let msg = the_error(
        &binary(BuiltinOp::FLOOR_MOD, DType::I32, DType::F32),
        &profile::X86_64,
    );
    has(
        &msg,
        &["op 0 (FLOOR_MOD)", "int32, int32, float32", "Prepare fails"],
    );
    let float = binary(BuiltinOp::FLOOR_MOD, DType::F32, DType::F32);
    assert_eq!(errors(&analysis(&float, &profile::X86_64)).len(), 0);
}

#[test]
fn the_registry_lists_every_kernel_once_and_knows_when_each_refusal_happens() {
    let builtins: Vec<u8> = kernels::rows()
        .filter_map(|k| match k.op {
            kernels::Op::Builtin(code) => Some(code),
            kernels::Op::Custom(_) => None,
        })
        .collect();
    let mut codes = builtins.clone();
    codes.sort_unstable();
    codes.dedup();
    // docs/tflm-kernels.md: 100 builtins have an Add… method at 90b983c2.
    assert_eq!(codes.len(), 100);
    assert_eq!(builtins.len(), 100);
    assert!(registry::kernel(BuiltinOp::POW.0).is_none());
    assert!(registry::kernel(BuiltinOp::SOFTMAX.0).is_some());
    assert_eq!(Rejection::NotRegistered.stage(), Stage::Resolve);
}

/// One op `code` from `x` (`input`, quantized when integer) to `y` (`output`).
fn unary(code: BuiltinOp, input: DType, output: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "x", &[1, 8], input)
        .quant(0.1, zero_point(input))
        .id();
    let y = b
        .tensor(g, "y", &[1, 8], output)
        .quant(0.1, zero_point(output))
        .id();
    b.op(g, code, &[x], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn a_quantize_pair_tflm_lacks_fails_at_invoke() {
    // quantize_common.cc: Prepare accepts a float32 input and a uint8 output
    // separately, but EvalQuantizeReference converts float32 only to int8 or int16.
    let msg = the_error(
        &unary(BuiltinOp::QUANTIZE, DType::F32, DType::U8),
        &profile::X86_64,
    );
    has(
        &msg,
        &[
            "op 0 (QUANTIZE)",
            "input 0 float32, output 0 uint8",
            "float32/int8",
            "fails at Invoke",
        ],
    );
    // An int16 input does not go to uint8 either; a uint8 input goes to int8 only.
    // The CMSIS-NN build has no QUANTIZE of its own: the reference kernel refuses.
    for (from, to) in [(DType::I16, DType::U8), (DType::U8, DType::I16)] {
        let msg = the_error(&unary(BuiltinOp::QUANTIZE, from, to), &CMSIS_NN);
        has(
            &msg,
            &[
                "op 0 (QUANTIZE)",
                "the reference QUANTIZE kernel (which the CMSIS-NN build uses)",
                "fails at Invoke",
            ],
        );
    }
    // A float32 output is refused in Prepare.
    let msg = the_error(
        &unary(BuiltinOp::QUANTIZE, DType::I8, DType::F32),
        &profile::CORTEX_M,
    );
    has(&msg, &["output 0 float32", "Prepare fails"]);
    for (from, to) in [
        (DType::F32, DType::I8),
        (DType::I8, DType::U8),
        (DType::U8, DType::I8),
        (DType::I16, DType::I32),
    ] {
        let bytes = unary(BuiltinOp::QUANTIZE, from, to);
        assert_eq!(errors(&analysis(&bytes, &profile::X86_64)).len(), 0);
    }
}

#[test]
fn quantize_to_a_per_channel_output_is_refused_in_prepare() {
    // quantize_common.cc: the output must carry exactly one scale.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 2], DType::F32).id();
    let y = b
        .tensor(g, "y", &[1, 2], DType::I8)
        .quant_per_channel(&[0.1, 0.2], &[0, 0], 1)
        .id();
    b.op(g, BuiltinOp::QUANTIZE, &[x], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let msg = the_error(&b.build().unwrap(), &profile::X86_64);
    has(
        &msg,
        &[
            "op 0 (QUANTIZE)",
            "output 0 has 2 quantization scales",
            "Prepare fails",
        ],
    );
}

/// Builtins without a `BuiltinOp` constant (microarena models no kernel cost for them).
const RSQRT: BuiltinOp = BuiltinOp(microarena_image::opcode::RSQRT as i32);
const L2_NORMALIZATION: BuiltinOp = BuiltinOp(microarena_image::opcode::L2_NORMALIZATION as i32);

#[test]
fn int16_ops_some_kernels_lack() {
    // l2norm.cc Prepare: the output must be float32 or int8 (the wheel agrees,
    // registry_wheel.jsonl).
    let msg = the_error(
        &unary(L2_NORMALIZATION, DType::I16, DType::I16),
        &profile::CORTEX_M,
    );
    has(
        &msg,
        &[
            "op 0 (L2_NORMALIZATION)",
            "output 0 int16 is not a type the reference L2_NORMALIZATION kernel accepts (float32, int8)",
            "Prepare fails",
        ],
    );
    // hard_swish.cc: Prepare checks no type, Eval runs float32 and int8.
    let msg = the_error(
        &unary(BuiltinOp::HARD_SWISH, DType::I16, DType::I16),
        &CMSIS_NN,
    );
    has(
        &msg,
        &["op 0 (HARD_SWISH)", "input 0 int16", "fails at Invoke"],
    );
    // The int16 kernels that do exist raise nothing; RSQRT among them, though
    // elementwise.cc's Prepare appears to accept float32 and int8 only (its
    // type test never fires, and the wheel runs int16 RSQRT).
    for code in [BuiltinOp::LOGISTIC, BuiltinOp::TANH, BuiltinOp::RELU, RSQRT] {
        let bytes = unary(code, DType::I16, DType::I16);
        assert_eq!(errors(&analysis(&bytes, &CMSIS_NN)).len(), 0, "{code:?}");
    }
}

/// FULLY_CONNECTED with an int16 input and an int8 filter quantized per channel.
fn int16_fc_per_channel() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 4], DType::I16).quant(0.1, 0).id();
    let w = b
        .tensor(g, "w", &[2, 4], DType::I8)
        .quant_per_channel(&[0.1, 0.2], &[0, 0], 0)
        .data(&[1; 8])
        .id();
    let y = b.tensor(g, "y", &[1, 2], DType::I16).quant(0.2, 0).id();
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, w, -1], &[y])
        .fc_options(Activation::None, false);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn a_per_channel_int16_fully_connected_is_refused_by_cmsis_nn_only() {
    // fully_connected_common.cc accepts per-channel filters under int8 and int16
    // inputs; cmsis_nn/fully_connected.cc Prepare then wants an int8 input.
    let bytes = int16_fc_per_channel();
    for p in [&profile::X86_64, &profile::CORTEX_M] {
        assert_eq!(errors(&analysis(&bytes, p)), Vec::<&Diagnostic>::new());
    }
    let msg = the_error(&bytes, &CMSIS_NN);
    has(
        &msg,
        &[
            "op 0 (FULLY_CONNECTED)",
            "CMSIS-NN FULLY_CONNECTED kernel",
            "input 1 is quantized per channel (2 scales)",
            "when input 0 is int16",
            "Prepare fails",
        ],
    );
}

#[test]
fn cmsis_nn_add_refuses_inputs_of_another_type_than_the_output() {
    // add.cc dispatches on the output type alone; cmsis_nn/add.cc Prepare
    // first wants input 0 of the output's type.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 8], DType::I16).quant(0.1, 0).id();
    let y = b.tensor(g, "y", &[1, 8], DType::I16).quant(0.1, 0).id();
    let z = b.tensor(g, "z", &[1, 8], DType::I8).quant(0.1, 0).id();
    b.op(g, BuiltinOp::ADD, &[x, y], &[z])
        .add_options(Activation::None);
    b.inputs(g, &[x, y]).outputs(g, &[z]);
    let bytes = b.build().unwrap();
    assert_eq!(errors(&analysis(&bytes, &profile::CORTEX_M)).len(), 0);
    let msg = the_error(&bytes, &CMSIS_NN);
    has(
        &msg,
        &[
            "op 0 (ADD)",
            "input 0, output 0 of one type, found int16, int8",
            "Prepare fails",
        ],
    );
}

#[test]
fn concatenation_of_mixed_types_is_refused_in_prepare() {
    // concatenation.cc ConcatenationPrepare: every input has input 0's type.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let a = b.tensor(g, "a", &[1, 2], DType::I8).quant(0.1, 0).id();
    let c = b.tensor(g, "c", &[1, 2], DType::I8).quant(0.1, 0).id();
    let d = b.tensor(g, "d", &[1, 2], DType::I16).quant(0.1, 0).id();
    let y = b.tensor(g, "y", &[1, 6], DType::I8).quant(0.1, 0).id();
    b.op(g, BuiltinOp::CONCATENATION, &[a, c, d], &[y])
        .concat_options(1, Activation::None);
    b.inputs(g, &[a, c, d]).outputs(g, &[y]);
    let msg = the_error(&b.build().unwrap(), &profile::X86_64);
    has(
        &msg,
        &[
            "op 0 (CONCATENATION)",
            "type of input 0 (int8), but input 2 is int16",
            "Prepare fails",
        ],
    );
}

/// A small int8 DS-CNN: QUANTIZE, CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D,
/// RESHAPE, FULLY_CONNECTED, SOFTMAX, DEQUANTIZE.
fn int8_ds_cnn() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let q = |b: &mut ModelBuilder, name: &str, shape: &[i32]| {
        b.tensor(g, name, shape, DType::I8).quant(0.05, -3).id()
    };
    let input = b.tensor(g, "input", &[1, 8, 8, 1], DType::F32).id();
    let x = q(&mut b, "x", &[1, 8, 8, 1]);
    b.op(g, BuiltinOp::QUANTIZE, &[input], &[x]);
    let w1 = b
        .tensor(g, "w1", &[4, 3, 3, 1], DType::I8)
        .quant_per_channel(&[0.1, 0.1, 0.2, 0.2], &[0, 0, 0, 0], 0)
        .data(&[1; 36])
        .id();
    let b1 = b.tensor(g, "b1", &[4], DType::I32).data_i32(&[0; 4]).id();
    let c1 = q(&mut b, "c1", &[1, 8, 8, 4]);
    b.op(g, BuiltinOp::CONV_2D, &[x, w1, b1], &[c1])
        .conv_options(Padding::Same, 1, 1, Activation::Relu);
    let w2 = b
        .tensor(g, "w2", &[1, 3, 3, 4], DType::I8)
        .quant_per_channel(&[0.1, 0.1, 0.2, 0.2], &[0, 0, 0, 0], 3)
        .data(&[1; 36])
        .id();
    let b2 = b.tensor(g, "b2", &[4], DType::I32).data_i32(&[0; 4]).id();
    let c2 = q(&mut b, "c2", &[1, 8, 8, 4]);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[c1, w2, b2], &[c2])
        .depthwise_options(Padding::Same, 1, 1, 1, Activation::Relu);
    let p = q(&mut b, "p", &[1, 1, 1, 4]);
    b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[c2], &[p])
        .pool_options(Padding::Valid, (8, 8), (8, 8), Activation::None);
    let shape = b
        .tensor(g, "shape", &[2], DType::I32)
        .data_i32(&[1, 4])
        .id();
    let r = q(&mut b, "r", &[1, 4]);
    b.op(g, BuiltinOp::RESHAPE, &[p, shape], &[r])
        .reshape_options(&[1, 4]);
    let w3 = b
        .tensor(g, "w3", &[3, 4], DType::I8)
        .quant(0.1, 0)
        .data(&[1; 12])
        .id();
    let b3 = b.tensor(g, "b3", &[3], DType::I32).data_i32(&[0; 3]).id();
    let f = q(&mut b, "f", &[1, 3]);
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[r, w3, b3], &[f])
        .fc_options(Activation::None, false);
    let s = b
        .tensor(g, "s", &[1, 3], DType::I8)
        .quant(1.0 / 256.0, -128)
        .id();
    b.op(g, BuiltinOp::SOFTMAX, &[f], &[s]).softmax_options(1.0);
    let out = b.tensor(g, "out", &[1, 3], DType::F32).id();
    b.op(g, BuiltinOp::DEQUANTIZE, &[s], &[out]);
    b.inputs(g, &[input]).outputs(g, &[out]);
    b.build().unwrap()
}

#[test]
fn an_int8_ds_cnn_runs_on_every_target() {
    let bytes = int8_ds_cnn();
    let model = Model::parse(&bytes).unwrap();
    for p in profile::PROFILES {
        assert_eq!(
            errors(&analysis(&bytes, p)),
            Vec::<&Diagnostic>::new(),
            "{}",
            p.name
        );
        for op in &model.subgraphs[0].operators {
            assert_eq!(
                registry::check(&model, 0, op, p.backend),
                None,
                "{}",
                p.name
            );
        }
    }
}

/// The names of the shared models TFLM ran (x86-64 wheel or a Cortex-M build).
fn models_tflm_ran(root: &std::path::Path) -> Vec<String> {
    let mut names = Vec::new();
    for file in ["tflm_x86_64.jsonl", "tflm_cortex_m.jsonl"] {
        let text = String::from_utf8(support::read(&root.join("models").join(file))).unwrap();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let rec: serde_json::Value = serde_json::from_str(line).unwrap();
            let ran = rec["ok"] == serde_json::Value::Bool(true)
                || rec["status"] == "ok"
                || rec["retry_big_arena"]["status"] == "ok";
            let name = rec["model"].as_str().unwrap().to_string();
            if ran && !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

#[test]
fn no_model_tflm_ran_gets_a_registry_refusal_on_any_target() {
    let Some(root) = support::corpus("no_model_tflm_ran_gets_a_registry_refusal_on_any_target")
    else {
        return;
    };
    let names = models_tflm_ran(&root);
    assert!(names.len() >= 9, "{names:?}");
    let mut ops = 0;
    for name in &names {
        let bytes = support::read(&root.join("models").join(name));
        let model = Model::parse(&bytes).unwrap();
        for p in profile::PROFILES {
            for (g, sub) in model.subgraphs.iter().enumerate() {
                for (i, op) in sub.operators.iter().enumerate() {
                    let r = registry::check(&model, g, op, p.backend);
                    assert_eq!(
                        r,
                        None,
                        "{name} on {}: subgraph {g} op {i} ({}): {}",
                        p.name,
                        op.name(),
                        r.map(|r| registry::describe(&r, op.name(), p.backend))
                            .unwrap_or_default()
                    );
                    ops += 1;
                }
            }
        }
    }
    assert!(ops > 100, "{ops}");
}

#[test]
fn the_cmsis_nn_column_is_there_for_exactly_the_kernels_cmsis_nn_replaces() {
    // The files of tensorflow/lite/micro/kernels/cmsis_nn/ at 90b983c2: add,
    // batch_matmul, conv, depthwise_conv, fully_connected, maximum_minimum, mul,
    // pad, pooling, softmax, svdf, transpose, transpose_conv,
    // unidirectional_sequence_lstm, and the builtins each registers.
    use microarena_image::opcode as c;
    let mut expected = vec![
        c::ADD,
        c::BATCH_MATMUL,
        c::CONV_2D,
        c::DEPTHWISE_CONV_2D,
        c::FULLY_CONNECTED,
        c::MAXIMUM,
        c::MINIMUM,
        c::MUL,
        c::PAD,
        c::PADV2,
        c::AVERAGE_POOL_2D,
        c::MAX_POOL_2D,
        c::SOFTMAX,
        c::SVDF,
        c::TRANSPOSE,
        c::TRANSPOSE_CONV,
        c::UNIDIRECTIONAL_SEQUENCE_LSTM,
    ];
    expected.sort_unstable();
    let mut with_column: Vec<u8> = kernels::rows()
        .filter(|k| k.cmsis_nn.is_some())
        .filter_map(|k| match k.op {
            kernels::Op::Builtin(code) => Some(code),
            kernels::Op::Custom(_) => None,
        })
        .collect();
    with_column.sort_unstable();
    assert_eq!(with_column, expected);
}
