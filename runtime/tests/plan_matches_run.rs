//! `plan`'s runtime figure is null exactly when `run` refuses: for every
//! shared model, every model of `core/examples/kernel_cases.rs` (the
//! verify-kernels cases and the allocation probes) and the builder's example models,
//! `lower::runtime_arena(model).is_ok()` ⇔ the runtime's `Interpreter`
//! accepts the lowered image in the predicted arena — plain, and banded in
//! place with the OpData in flash.

use std::path::Path;

use microarena_core::Model;
use microarena_core::build::example;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_runtime::Interpreter;

#[allow(dead_code)]
#[path = "../../core/examples/kernel_cases.rs"]
mod kernel_cases;

/// `Ok(())` when plan and run agree on `bytes`, plain and in the smallest
/// mode (banded, in place, OpData in flash), else what each said.
fn agree(bytes: &[u8]) -> Result<bool, String> {
    let Ok(model) = Model::parse(bytes) else {
        return Ok(false);
    };
    let plain = agree_with(&model, &LowerOptions::default())?;
    let smallest = LowerOptions {
        opdata: OpDataIn::Flash,
        execution: Execution::Banded,
        in_place: true,
    };
    let small = agree_with(&model, &smallest).map_err(|e| format!("banded in place: {e}"))?;
    if plain != small {
        return Err(format!("runs plain: {plain}, banded in place: {small}"));
    }
    Ok(plain)
}

fn agree_with(model: &Model<'_>, options: &LowerOptions) -> Result<bool, String> {
    let planned = runtime_arena_with(model, options);
    let run = lower_with(model, options)
        .map_err(|e| e.to_string())
        .and_then(|mut image| {
            // The OpData block filled as the host build does.
            microarena_runtime::freeze_opdata(&mut image).map_err(|e| e.to_string())?;
            let total = planned.as_ref().map_or(1 << 20, |a| a.total_bytes as usize);
            let mut arena = vec![0u8; total];
            Interpreter::new(&image, &mut arena)
                .map(|_| ())
                .map_err(|e| e.to_string())
        });
    match (&planned, &run) {
        (Ok(_), Ok(())) => Ok(true),
        (Err(_), Err(_)) => Ok(false),
        (Ok(a), Err(e)) => Err(format!(
            "plan gives a runtime arena ({} B) but run refuses: {e}",
            a.total_bytes
        )),
        (Err(e), Ok(())) => Err(format!("run accepts but plan refuses: {e}")),
    }
}

#[test]
#[cfg_attr(miri, ignore = "lowers hundreds of models")]
fn plan_has_a_runtime_arena_exactly_when_run_accepts() {
    let mut models: Vec<(String, Vec<u8>)> = kernel_cases::cases()
        .into_iter()
        .chain(kernel_cases::output_cases())
        .map(|c| {
            let (m, _) = c.build();
            (c.name.clone(), m)
        })
        .collect();
    // The allocation probes: every other kernel TFLM registers, variable operands, control
    // flow, Vela's NPU operator — most of them refused by both, which is the point.
    models.extend(kernel_cases::probes().into_iter().map(|c| {
        let (m, _) = c.build();
        (c.name.clone(), m)
    }));
    models.extend(
        kernel_cases::probe_models()
            .into_iter()
            .map(|(n, m)| (n.to_string(), m)),
    );
    models.extend(kernel_cases::ethos_u_models());
    // Several subgraphs: IF, WHILE, CALL_ONCE with resource variables, nested calls.
    models.extend(
        kernel_cases::control_flow_cases()
            .into_iter()
            .map(|c| (c.name.to_string(), c.model)),
    );
    models.push((
        "mobilenet_v1_025_96_int8".into(),
        example::mobilenet_v1_025_96_int8(),
    ));
    models.push(("synthetic".into(), example::synthetic(50)));
    models.push(("branchy_float".into(), example::branchy_float()));
    models.push(("resize_then_fc".into(), example::resize_then_fc()));
    models.push(("demo_model".into(), example::demo_model()));
    models.push(("call_cycle".into(), call_cycle()));
    // The converter patterns banded stages stream, small.
    use microarena_core::build::converted;
    for (name, m) in [
        ("torch_mbv2_32", converted::mobilenet_v2_pytorch_int8(32)),
        ("keras_vww_96", converted::mobilenet_v1_vww_keras_int8()),
        ("mbv3_style_32", converted::mobilenet_v3_style_int8(32)),
        (
            "squeeze_excite_16",
            converted::squeeze_excite_block_int8(16),
        ),
        ("detection_neck_32", converted::detection_neck_int8(32)),
        ("unet_32", converted::unet_decoder_int8(32)),
        ("yolo_neck_32", converted::yolo_neck_int8(32)),
        ("ds_cnn_avg", converted::ds_cnn_kws_int8(false)),
        ("ds_cnn_mean", converted::ds_cnn_kws_int8(true)),
        ("cnn_kws_flatten", converted::cnn_kws_int8()),
    ] {
        models.push((name.into(), m));
    }
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models");
    let corpus = std::env::var_os("MICROARENA_CORPUS")
        .map(|c| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join(c)
                .join("models")
        })
        .unwrap_or(shared);
    if let Ok(entries) = std::fs::read_dir(&corpus) {
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "tflite") {
                let name = p
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                models.push((name, std::fs::read(&p).expect("read model")));
            }
        }
    } else {
        eprintln!("no corpus at {}: builder models only", corpus.display());
    }
    let mut failures = Vec::new();
    let (mut runs, mut refused) = (0, 0);
    for (name, bytes) in &models {
        match agree(bytes) {
            Ok(true) => runs += 1,
            Ok(false) => refused += 1,
            Err(why) => failures.push(format!("{name}: {why}")),
        }
    }
    println!(
        "{} models: {runs} run, {refused} refused by both plan and run",
        models.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Subgraph 1 calls itself through IF: refused by both (`image::calls`).
fn call_cycle() -> Vec<u8> {
    use microarena_core::build::builder::ModelBuilder;
    use microarena_core::read::dtype::DType;
    use microarena_core::read::ops::{BuiltinOp, OpOptions};
    let mut b = ModelBuilder::new();
    for _ in 0..2 {
        let g = b.subgraph();
        let c = b.tensor(g, "c", &[1], DType::Bool).id();
        let x = b.tensor(g, "x", &[2], DType::F32).id();
        let y = b.tensor(g, "y", &[2], DType::F32).id();
        b.op(g, BuiltinOp::IF, &[c, x], &[y])
            .options(OpOptions::If {
                then_subgraph: 1,
                else_subgraph: 1,
            });
        b.inputs(g, &[c, x]).outputs(g, &[y]);
    }
    b.build().expect("a model TFLM would recurse on")
}
