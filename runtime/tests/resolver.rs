//! Kernel resolvers (`resolver!`, `Interpreter::with_kernels`): an image
//! whose op needs a kernel, a kernel's type branch or an execution mode that
//! the resolver leaves out is refused at construction, naming the op and what
//! is missing, before the arena is even looked at; a resolver holding exactly
//! what the image needs runs it with the same outputs as the full registry.

use std::collections::BTreeSet;

use microarena_core::Model;
use microarena_core::build::example::{conv_then, mobilenet_v2_int8, pseudo_random_bytes};
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::BuiltinOp;
use microarena_image as rl;
use microarena_image::opcode;
use microarena_runtime::{Error, Image, Interpreter, Resolver, resolver};

const PLAIN: LowerOptions = LowerOptions {
    opdata: OpDataIn::Tail,
    execution: Execution::Plain,
    in_place: false,
};

/// The image of `bytes` and the arena it needs.
fn lowered(bytes: &[u8], options: &LowerOptions) -> (Vec<u8>, usize) {
    let model = Model::parse(bytes).expect("parse");
    let image = lower_with(&model, options).expect("lower");
    let arena = runtime_arena_with(&model, options).expect("arena");
    (image, arena.total_bytes as usize)
}

/// Outputs of one invoke on a deterministic input with `kernels`.
fn outputs(image: &[u8], arena: usize, kernels: &'static Resolver) -> Result<Vec<u8>, Error> {
    let mut buf = vec![0u8; arena];
    let mut it = Interpreter::with_kernels(image, &mut buf, kernels)?;
    for i in 0..it.image().input_count() {
        let dst = it.input_mut(i)?;
        let n = dst.len();
        dst.copy_from_slice(&pseudo_random_bytes(7 + i as u32, n));
    }
    it.invoke()?;
    let mut out = Vec::new();
    for i in 0..it.image().output_count() {
        out.extend_from_slice(it.output(i)?);
    }
    Ok(out)
}

/// The opcodes of an image's ops.
fn opcodes(image: &[u8]) -> BTreeSet<u8> {
    let img = Image::parse(image).expect("image");
    (0..img.op_count())
        .map(|i| img.op(i).expect("op").opcode)
        .collect()
}

static CONV_ONLY: Resolver = resolver!(&[opcode::CONV_2D]);
static CONV_AND_SHAPE: Resolver = resolver!(&[opcode::SHAPE, opcode::CONV_2D]);

#[test]
fn a_left_out_kernel_is_refused_at_construction_naming_the_op() {
    let (image, arena) = lowered(&conv_then(BuiltinOp::SHAPE), &PLAIN);
    assert_eq!(
        opcodes(&image),
        BTreeSet::from([opcode::CONV_2D, opcode::SHAPE])
    );
    let want = Error::KernelNotLinked {
        op_index: 1,
        opcode: opcode::SHAPE,
        variant: "",
    };
    assert_eq!(outputs(&image, arena, &CONV_ONLY), Err(want));
    // Before the arena size: a model this build cannot run never looks like
    // a sizing problem.
    let err = Interpreter::with_kernels(&image, &mut [], &CONV_ONLY).unwrap_err();
    assert_eq!(err, want);
    let text = err.to_string();
    assert!(
        text.contains("operator 1 (SHAPE") && text.contains("needs the SHAPE kernel"),
        "{text}"
    );
    assert_eq!(err.kind(), "KernelNotLinked");
    assert_eq!(err.op(), Some((1, opcode::SHAPE)));
}

#[test]
fn a_resolver_with_the_images_kernels_runs_it_as_the_full_registry_does() {
    let (image, arena) = lowered(&conv_then(BuiltinOp::SHAPE), &PLAIN);
    let full = outputs(&image, arena, &Resolver::ALL).expect("full registry");
    assert_eq!(outputs(&image, arena, &CONV_AND_SHAPE), Ok(full));
    assert!(
        CONV_AND_SHAPE
            .opcodes()
            .eq([opcode::SHAPE, opcode::CONV_2D])
    );
    assert!(CONV_AND_SHAPE.has(opcode::CONV_2D) && !CONV_AND_SHAPE.has(opcode::ADD));
    assert!(!CONV_AND_SHAPE.has_banded() && !CONV_AND_SHAPE.has_rows_in_place());
}

#[test]
fn the_full_registry_holds_every_registered_kernel_and_mode() {
    assert!(
        Resolver::ALL
            .opcodes()
            .eq(microarena_runtime::registered_opcodes())
    );
    for code in 0..=u8::MAX {
        assert_eq!(
            Resolver::ALL.has(code),
            rl::op_supported(i32::from(code)),
            "{code}"
        );
    }
    assert!(Resolver::ALL.has_banded() && Resolver::ALL.has_rows_in_place());
}

/// MobileNet-v2's operators, as `mobilenet_v2_int8` builds it (checked below).
const MOBILENET_V2: &[u8] = &[
    opcode::CONV_2D,
    opcode::DEPTHWISE_CONV_2D,
    opcode::ADD,
    opcode::AVERAGE_POOL_2D,
    opcode::RESHAPE,
    opcode::SOFTMAX,
];
static MOBILENET_KERNELS: Resolver = resolver!(MOBILENET_V2);
static MOBILENET_BANDED: Resolver = resolver!(MOBILENET_V2, banded);
static MOBILENET_ROWS: Resolver = resolver!(MOBILENET_V2, rows_in_place);
static MOBILENET_BOTH: Resolver = resolver!(MOBILENET_V2, banded, rows_in_place);

/// The first op of `image` that runs banded, resp. in place by rows.
fn first_op(image: &[u8], banded: bool) -> Option<(u16, u8)> {
    let img = Image::parse(image).expect("image");
    (0..img.op_count()).find_map(|i| {
        let op = img.op(i).expect("op");
        let hit = if banded {
            op.exec != rl::EXEC_WHOLE
        } else {
            op.in_place == Some(0) && rl::opcode::in_place_by_rows(op.opcode)
        };
        hit.then_some((i as u16, op.opcode))
    })
}

#[test]
fn row_bands_and_rows_in_place_run_only_when_the_resolver_links_them() {
    let bytes = mobilenet_v2_int8(64);
    let banded = LowerOptions {
        opdata: OpDataIn::Tail,
        execution: Execution::Banded,
        in_place: false,
    };
    let (image, arena) = lowered(&bytes, &banded);
    assert_eq!(opcodes(&image), MOBILENET_V2.iter().copied().collect());
    let (op_index, code) = first_op(&image, true).expect("a banded stage");
    let want = Err(Error::KernelNotLinked {
        op_index,
        opcode: code,
        variant: "row-band execution",
    });
    assert_eq!(outputs(&image, arena, &MOBILENET_KERNELS), want);
    assert_eq!(outputs(&image, arena, &MOBILENET_ROWS), want);
    let full = outputs(&image, arena, &Resolver::ALL).expect("full registry");
    assert_eq!(outputs(&image, arena, &MOBILENET_BANDED), Ok(full.clone()));
    assert_eq!(outputs(&image, arena, &MOBILENET_BOTH), Ok(full));

    let rows = LowerOptions {
        opdata: OpDataIn::Tail,
        execution: Execution::Plain,
        in_place: true,
    };
    let (image, arena) = lowered(&bytes, &rows);
    let (op_index, code) = first_op(&image, false).expect("an op in place by rows");
    let want = Err(Error::KernelNotLinked {
        op_index,
        opcode: code,
        variant: "in-place execution by rows",
    });
    assert_eq!(outputs(&image, arena, &MOBILENET_KERNELS), want);
    assert_eq!(outputs(&image, arena, &MOBILENET_BANDED), want);
    let full = outputs(&image, arena, &Resolver::ALL).expect("full registry");
    assert_eq!(outputs(&image, arena, &MOBILENET_ROWS), Ok(full.clone()));
    assert_eq!(outputs(&image, arena, &MOBILENET_BOTH), Ok(full));
}

/// One SOFTMAX over a 1×4 tensor of `dtype`.
fn softmax_model(dtype: DType) -> Vec<u8> {
    let mut b = microarena_core::build::builder::ModelBuilder::new();
    let g = b.subgraph();
    let quantized = dtype == DType::I8;
    let t = |b: &mut microarena_core::build::builder::ModelBuilder, name: &str, scale: f32, zp| {
        let h = b.tensor(g, name, &[1, 4], dtype);
        if quantized {
            h.quant(scale, zp).id()
        } else {
            h.id()
        }
    };
    let x = t(&mut b, "x", 0.1, 0);
    let y = t(&mut b, "y", 1.0 / 256.0, -128);
    b.op(g, BuiltinOp::SOFTMAX, &[x], &[y]).softmax_options(1.0);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.finish()
}

static SOFTMAX_INT8: Resolver =
    resolver!(&[opcode::SOFTMAX]; types: &[(opcode::SOFTMAX, rl::dtype::I8)]);
static SOFTMAX_FLOAT: Resolver =
    resolver!(&[opcode::SOFTMAX]; types: &[(opcode::SOFTMAX, rl::dtype::F32)]);
static SOFTMAX_ANY: Resolver = resolver!(&[opcode::SOFTMAX]);

#[test]
fn a_left_out_type_branch_is_refused_at_construction_naming_it() {
    let (float, arena) = lowered(&softmax_model(DType::F32), &PLAIN);
    let want = Err(Error::KernelNotLinked {
        op_index: 0,
        opcode: opcode::SOFTMAX,
        variant: "float32",
    });
    assert_eq!(outputs(&float, arena, &SOFTMAX_INT8), want);
    let err = Interpreter::with_kernels(&float, &mut [], &SOFTMAX_INT8).unwrap_err();
    assert!(
        err.to_string()
            .contains("needs the SOFTMAX kernel's float32"),
        "{err}"
    );
    let full = outputs(&float, arena, &Resolver::ALL).expect("full registry");
    assert_eq!(outputs(&float, arena, &SOFTMAX_FLOAT), Ok(full.clone()));
    assert_eq!(outputs(&float, arena, &SOFTMAX_ANY), Ok(full));

    // The int8 kernel is the entry's own: a resolver without the float
    // branch runs it, one with only the float branch runs it too.
    let (int8, arena) = lowered(&softmax_model(DType::I8), &PLAIN);
    let full = outputs(&int8, arena, &Resolver::ALL).expect("full registry");
    assert_eq!(outputs(&int8, arena, &SOFTMAX_INT8), Ok(full.clone()));
    assert_eq!(outputs(&int8, arena, &SOFTMAX_FLOAT), Ok(full));
}

static WHILE_AND_ADD: Resolver = resolver!(&[opcode::WHILE, opcode::ADD]);
static CALL_ONCE_ONLY: Resolver = resolver!(&[opcode::CALL_ONCE]);

/// The control-flow runner (the tensor copies of IF, WHILE, CALL_ONCE) is
/// linked exactly when a resolver holds one of those kernels, so a firmware
/// whose model has no control flow carries none of it.
#[test]
fn the_control_flow_runner_comes_with_a_control_flow_kernel_only() {
    assert!(WHILE_AND_ADD.has_control_flow());
    assert!(CALL_ONCE_ONLY.has_control_flow());
    assert!(!CONV_ONLY.has_control_flow());
    assert!(!MOBILENET_BOTH.has_control_flow());
    assert!(Resolver::ALL.has_control_flow());
}

/// DS-CNN's opcodes (`converted::ds_cnn_kws_int8(false)`).
const DS_CNN: &[u8] = &[
    opcode::CONV_2D,
    opcode::DEPTHWISE_CONV_2D,
    opcode::AVERAGE_POOL_2D,
    opcode::RESHAPE,
    opcode::FULLY_CONNECTED,
    opcode::SOFTMAX,
];
static DS_CNN_BANDED: Resolver = resolver!(DS_CNN, banded);
static DS_CNN_REDUCERS: Resolver = resolver!(DS_CNN, banded, reducers);

#[test]
fn a_stage_ending_in_a_reducer_needs_the_reducers_linked() {
    let bytes = microarena_core::build::converted::ds_cnn_kws_int8(false);
    let banded = LowerOptions {
        opdata: OpDataIn::Tail,
        execution: Execution::Banded,
        in_place: false,
    };
    let (image, arena) = lowered(&bytes, &banded);
    assert_eq!(opcodes(&image), DS_CNN.iter().copied().collect());
    let img = Image::parse(&image).expect("image");
    let pool = (0..img.op_count())
        .find(|&i| img.op(i).expect("op").opcode == opcode::AVERAGE_POOL_2D)
        .expect("a pool");
    assert!(
        img.reduces_in_stage(&img.op(pool).expect("op"))
            .expect("op")
    );
    let want = Err(Error::KernelNotLinked {
        op_index: pool as u16,
        opcode: opcode::AVERAGE_POOL_2D,
        variant: "a banded stage's reduction",
    });
    assert_eq!(outputs(&image, arena, &DS_CNN_BANDED), want);
    let full = outputs(&image, arena, &Resolver::ALL).expect("full registry");
    assert_eq!(outputs(&image, arena, &DS_CNN_REDUCERS), Ok(full));
}
