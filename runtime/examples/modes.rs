//! The runtime's execution modes side by side, per model: TFLM's total on
//! Cortex-M (core's prediction, which `core/tests/corpus_cortex_m.rs` holds
//! to TFLM's measured figures), microarena-runtime's measured arena in each
//! mode, the extra MACs and the host time per inference, one run.
//!
//! ```sh
//! MICROARENA_CORPUS=../shared cargo run --release -p microarena-runtime --example modes [N]
//! ```
//!
//! Modes: `plain` (every op whole, OpData in the tail, as TFLM lays it out),
//! `flash` (OpData in flash), `in-place` (in-place execution, OpData in
//! flash), `banded` (patch-based in row bands, OpData in flash) and
//! `banded+ip` (banded and in place, OpData in flash). Every mode's outputs are compared with the plain run's and with
//! TFLM's golden output; a difference is printed and fails the run.

use std::path::PathBuf;
use std::time::Instant;

use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::report::compute::op_compute;
use microarena_core::{Config, Model, analyze, plan::PlannerKind, tflm::profile};
use microarena_runtime::{Interpreter, freeze_opdata};

const MODES: [(&str, LowerOptions); 5] = [
    (
        "plain",
        LowerOptions {
            opdata: OpDataIn::Tail,
            execution: Execution::Plain,
            in_place: false,
        },
    ),
    (
        "flash",
        LowerOptions {
            opdata: OpDataIn::Flash,
            execution: Execution::Plain,
            in_place: false,
        },
    ),
    (
        "in-place",
        LowerOptions {
            opdata: OpDataIn::Flash,
            execution: Execution::Plain,
            in_place: true,
        },
    ),
    (
        "banded",
        LowerOptions {
            opdata: OpDataIn::Flash,
            execution: Execution::Banded,
            in_place: false,
        },
    ),
    (
        "banded+ip",
        LowerOptions {
            opdata: OpDataIn::Flash,
            execution: Execution::Banded,
            in_place: true,
        },
    ),
];

struct Run {
    high_water: usize,
    outputs: Vec<Vec<u8>>,
    ms: f64,
}

fn run(
    model: &Model<'_>,
    options: &LowerOptions,
    inputs: &[Vec<u8>],
    n: u32,
) -> Result<Run, String> {
    let mut image = lower_with(model, options).map_err(|e| e.to_string())?;
    freeze_opdata(&mut image).map_err(|e| e.to_string())?;
    let need = runtime_arena_with(model, options).map_err(|e| e.to_string())?;
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).map_err(|e| e.to_string())?;
    let invoke = |it: &mut Interpreter<'_, '_>| -> Result<(), String> {
        for (i, d) in inputs.iter().enumerate() {
            it.input_mut(i)
                .map_err(|e| e.to_string())?
                .copy_from_slice(d);
        }
        it.invoke().map_err(|e| e.to_string())
    };
    // The first invoke's outputs (a stateful model's later ones move on).
    invoke(&mut it)?;
    let outputs = (0..it.image().output_count())
        .map(|i| it.output(i).map(<[u8]>::to_vec).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let start = Instant::now();
    for _ in 0..n.max(1) {
        invoke(&mut it)?;
    }
    let ms = start.elapsed().as_secs_f64() * 1e3 / f64::from(n.max(1));
    let high_water = it.memory_usage().high_water;
    if high_water as u64 != need.total_bytes {
        return Err(format!(
            "measured {high_water} B, predicted {} B",
            need.total_bytes
        ));
    }
    Ok(Run {
        high_water,
        outputs,
        ms,
    })
}

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let corpus = PathBuf::from(std::env::var_os("MICROARENA_CORPUS").unwrap_or("../shared".into()));
    let mut names: Vec<String> = std::fs::read_dir(corpus.join("golden"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    println!(
        "{:24} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9} {:>4}  stage",
        "model",
        "TFLM M4",
        "plain",
        "flash",
        "in-place",
        "banded",
        "banded+ip",
        "÷TFLM",
        "ms plain",
        "ms ip",
        "ms band",
        "+MACs"
    );
    let mut failed = false;
    let mut models: Vec<(String, Vec<u8>, Option<PathBuf>)> = names
        .into_iter()
        .filter_map(|name| {
            let bytes = std::fs::read(corpus.join("models").join(format!("{name}.tflite"))).ok()?;
            let golden = corpus.join("golden").join(&name);
            Some((name, bytes, Some(golden)))
        })
        .collect();
    // Builder models (pseudo-random weights and input; no golden output).
    use microarena_core::build::{converted, example};
    for (name, bytes) in [
        (
            "mobilenet_v2_224 (builder)",
            example::mobilenet_v2_int8(224),
        ),
        (
            "mbv2_224 pytorch (builder)",
            converted::mobilenet_v2_pytorch_int8(224),
        ),
        (
            "mbv1_vww_96 keras (builder)",
            converted::mobilenet_v1_vww_keras_int8(),
        ),
        (
            "mbv3_style_224 (builder)",
            converted::mobilenet_v3_style_int8(224),
        ),
        (
            "neck_96 two heads (builder)",
            converted::detection_neck_int8(96),
        ),
        ("yolo_neck_160 (builder)", converted::yolo_neck_int8(160)),
        ("unet_128 (builder)", converted::unet_decoder_int8(128)),
        (
            "ds_cnn kws avgpool (builder)",
            converted::ds_cnn_kws_int8(false),
        ),
        (
            "ds_cnn kws mean (builder)",
            converted::ds_cnn_kws_int8(true),
        ),
        ("cnn kws flatten (builder)", converted::cnn_kws_int8()),
    ] {
        models.push((name.into(), bytes, None));
    }
    for (name, bytes, golden) in models {
        let Ok(model) = Model::parse(&bytes) else {
            continue;
        };
        let inputs: Vec<Vec<u8>> = match &golden {
            Some(g) => (0..)
                .map_while(|i| std::fs::read(g.join(format!("input{i}.bin"))).ok())
                .collect(),
            None => model
                .main()
                .inputs
                .iter()
                .filter_map(|&t| model.main().tensors.get(usize::try_from(t).ok()?))
                .map(|t| {
                    microarena_core::build::example::pseudo_random_bytes(
                        5,
                        t.bytes.unwrap_or(0) as usize,
                    )
                })
                .collect(),
        };
        // A big builder model runs fewer times.
        let n = if golden.is_some() { n } else { n.div_ceil(10) };
        let tflm = analyze(
            &model,
            &Config {
                profile: &profile::CORTEX_M,
                planner: PlannerKind::TflmGreedy,
            },
        )
        .map(|a| a.total_bytes)
        .ok();
        let mut runs = Vec::new();
        for (mode, options) in &MODES {
            match run(&model, options, &inputs, n) {
                Ok(r) => runs.push(r),
                Err(e) => {
                    println!("{name:24} {mode}: {e}");
                    break;
                }
            }
        }
        let [plain, flash, in_place, banded, both] = runs.as_slice() else {
            continue;
        };
        for (mode, r) in ["flash", "in-place", "banded", "banded+ip"]
            .iter()
            .zip([flash, in_place, banded, both])
        {
            if r.outputs != plain.outputs {
                println!("{name:24} {mode}: outputs differ from plain");
                failed = true;
            }
        }
        let golden_ok = match &golden {
            None => true,
            Some(g) => plain.outputs.iter().enumerate().all(|(i, o)| {
                std::fs::read(g.join(format!("output{i}.bin"))).is_ok_and(|gold| &gold == o)
            }),
        };
        // The best mode `run` offers.
        let best = runs.iter().map(|r| r.high_water).min().unwrap_or(0);
        let stages = runtime_arena_with(&model, &MODES[4].1)
            .map(|r| r.stages)
            .unwrap_or_default();
        let aliases = runtime_arena_with(&model, &MODES[2].1).map_or(0, |r| r.in_place.len());
        let macs: u64 = (0..model.main().operators.len())
            .map(|i| op_compute(&model, 0, i).macs)
            .sum();
        println!(
            "{name:24} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9.3} {:>9.3} {:>9.3} {:>3}%  {aliases} in place; {}{}",
            tflm.map_or("-".into(), |t| t.to_string()),
            plain.high_water,
            flash.high_water,
            in_place.high_water,
            banded.high_water,
            both.high_water,
            tflm.map_or("-".into(), |t| format!(
                "{:.2}",
                t as f64 / best.max(1) as f64
            )),
            plain.ms,
            in_place.ms,
            banded.ms,
            0,
            if stages.is_empty() {
                "none".to_string()
            } else {
                let list: Vec<String> = stages
                    .iter()
                    .map(|s| {
                        format!(
                            "ops {}-{} ({} bands, rings {} B)",
                            s.first, s.last, s.bands, s.ring_bytes
                        )
                    })
                    .collect();
                format!("{} of {macs} MACs", list.join(", "))
            },
            if golden_ok {
                ""
            } else {
                "  [plain differs from TFLM's golden output]"
            },
        );
    }
    if failed {
        std::process::exit(1);
    }
}
