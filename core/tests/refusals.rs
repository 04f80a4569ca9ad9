//! Models TFLM would not run get an `error` naming the op and the reason,
//! from the registry of TFLM's kernels (tflite-micro 90b983c2; the rules and
//! their source files are in `docs/tflm-kernels.md`). Each model is built
//! with `ModelBuilder`; the expected op, stage and wording are read off
//! TFLM's sources by hand, not from the code under test.

use microarena_core::build::builder::ModelBuilder;
use microarena_core::plan::PlannerKind;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_core::tflm::analysis::{Analysis, Diagnostic, Severity};
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
    let mut codes: Vec<u8> = registry::KERNELS.iter().map(|k| k.code).collect();
    codes.sort_unstable();
    codes.dedup();
    // docs/tflm-kernels.md: 100 builtins have an Add… method at 90b983c2.
    assert_eq!(codes.len(), 100);
    assert_eq!(registry::KERNELS.len(), 100);
    assert!(registry::kernel(BuiltinOp::POW.0).is_none());
    assert!(registry::kernel(BuiltinOp::SOFTMAX.0).is_some());
    assert_eq!(Rejection::NotRegistered.stage(), Stage::Resolve);
}
