//! Bit-exact comparison with TFLM reference-kernel outputs (the golden corpus)
//! and the arena prediction check: the runtime's measured high-water mark must
//! equal `microarena_core::lower::runtime_arena` for every golden model.
//!
//! Corpus: `$MICROARENA_CORPUS` (relative paths resolve against the workspace
//! root). When the variable is set, missing data fails the test; when it is
//! unset, `<workspace>/../shared` is tried and the test is skipped (with a
//! message) if nothing is there.

use std::path::{Path, PathBuf};

use microarena_core::lower::{
    Execution, LowerOptions, OpDataIn, lower, lower_with, runtime_arena, runtime_arena_with,
};
use microarena_core::{Config, Model, analyze, plan::PlannerKind, tflm::profile};
use microarena_runtime::Interpreter;

/// The models that must run bit-exactly. Under Miri, the hello_world-sized
/// ones (the others take minutes each there; natively they all run).
const REQUIRED: &[&str] = if cfg!(miri) {
    &["hello_world_int8", "hello_world_float"]
} else {
    ALL_REQUIRED
};

const ALL_REQUIRED: &[&str] = &[
    "hello_world_int8",
    "hello_world_float",
    "simple_add_model",
    "micro_speech_quantized",
    "person_detect",
    "micro_speech_lstm",
    "trained_lstm_int8",
    "keyword_scrambled",
    "keyword_scrambled_8bit",
    "audio_preprocessor_int8",
];

fn corpus() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match std::env::var_os("MICROARENA_CORPUS") {
        Some(v) => {
            let p = Path::new(&v);
            let p = if p.is_absolute() {
                p.to_path_buf()
            } else {
                root.join(p)
            };
            assert!(
                p.join("golden").is_dir() && p.join("models").is_dir(),
                "MICROARENA_CORPUS={} has no golden/ and models/ directories",
                p.display()
            );
            Some(p)
        }
        None => {
            let p = root.join("../shared");
            if p.join("golden").is_dir() && p.join("models").is_dir() {
                Some(p)
            } else {
                eprintln!(
                    "skipped: MICROARENA_CORPUS is unset and {} has no corpus",
                    p.display()
                );
                None
            }
        }
    }
}

struct Outcome {
    bit_exact: bool,
    measured: usize,
    predicted: u64,
    tflm_cortex_m: u64,
}

/// Every way the runtime can run a model: OpData in the tail or in flash,
/// plain or banded, each with and without in-place execution.
const MODES: [LowerOptions; 8] = {
    let mut modes = [LowerOptions {
        opdata: OpDataIn::Tail,
        execution: Execution::Plain,
        in_place: false,
    }; 8];
    let mut i = 0;
    while i < 8 {
        modes[i] = LowerOptions {
            opdata: if i & 1 == 0 {
                OpDataIn::Tail
            } else {
                OpDataIn::Flash
            },
            execution: if i & 2 == 0 {
                Execution::Plain
            } else {
                Execution::Banded
            },
            in_place: i & 4 != 0,
        };
        i += 1;
    }
    modes
};

fn run(dir: &Path, name: &str, options: LowerOptions) -> Result<Outcome, String> {
    let model_bytes = std::fs::read(dir.join("models").join(format!("{name}.tflite")))
        .map_err(|e| format!("{name}: model missing: {e}"))?;
    let model = Model::parse(&model_bytes).map_err(|e| format!("{name}: {e}"))?;
    let mut image = lower_with(&model, &options).map_err(|e| format!("{name}: lower: {e}"))?;
    microarena_runtime::freeze_opdata(&mut image).map_err(|e| format!("{name}: freeze: {e}"))?;
    let predicted = runtime_arena_with(&model, &options).map_err(|e| format!("{name}: {e}"))?;
    let tflm = analyze(
        &model,
        &Config {
            profile: &profile::CORTEX_M,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .map_err(|e| format!("{name}: {e}"))?;
    // Exactly the predicted arena, deliberately not a multiple of 16 larger.
    let mut arena = vec![0u8; predicted.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).map_err(|e| format!("{name}: {e}"))?;
    let golden = dir.join("golden").join(name);
    for i in 0..it.image().input_count() {
        let data = std::fs::read(golden.join(format!("input{i}.bin")))
            .map_err(|e| format!("{name}: input{i}: {e}"))?;
        let dst = it.input_mut(i).map_err(|e| format!("{name}: {e}"))?;
        if dst.len() != data.len() {
            return Err(format!(
                "{name}: input{i} has {} bytes, tensor {}",
                data.len(),
                dst.len()
            ));
        }
        dst.copy_from_slice(&data);
    }
    // The planner may reuse an input's bytes once it is consumed (as TFLM's
    // does), so inputs must be written before every invoke.
    it.invoke().map_err(|e| format!("{name}: {e}"))?;
    let mut bit_exact = true;
    for i in 0..it.image().output_count() {
        let want = std::fs::read(golden.join(format!("output{i}.bin")))
            .map_err(|e| format!("{name}: output{i}: {e}"))?;
        let got = it.output(i).map_err(|e| format!("{name}: {e}"))?;
        if got != want.as_slice() {
            let diffs = got.iter().zip(&want).filter(|(a, b)| a != b).count();
            eprintln!(
                "{name}: output{i} differs in {diffs} of {} bytes: got {:?}.. want {:?}..",
                want.len(),
                &got[..got.len().min(8)],
                &want[..want.len().min(8)]
            );
            bit_exact = false;
        }
    }
    let usage = it.memory_usage();
    Ok(Outcome {
        bit_exact,
        measured: usage.high_water,
        predicted: predicted.total_bytes,
        tflm_cortex_m: tflm.total_bytes,
    })
}

#[test]
fn golden_models_are_bit_exact_and_arena_is_predicted() {
    let Some(dir) = corpus() else { return };
    let mut failures = Vec::new();
    for (name, mode) in REQUIRED.iter().flat_map(|n| MODES.map(|o| (n, o))) {
        match run(&dir, name, mode) {
            Ok(o) => {
                println!(
                    "{name:24} {:?} {:?} in-place={}: bit-exact={} runtime arena measured={} predicted={} (TFLM cortex-m total {})",
                    mode.opdata,
                    mode.execution,
                    mode.in_place,
                    o.bit_exact,
                    o.measured,
                    o.predicted,
                    o.tflm_cortex_m
                );
                if !o.bit_exact {
                    failures.push(format!("{name}: output differs from TFLM"));
                }
                if o.measured as u64 != o.predicted {
                    failures.push(format!(
                        "{name}: measured {} != predicted {}",
                        o.measured, o.predicted
                    ));
                }
                if o.predicted >= o.tflm_cortex_m {
                    failures.push(format!(
                        "{name}: runtime arena {} not below TFLM's {}",
                        o.predicted, o.tflm_cortex_m
                    ));
                }
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
#[cfg_attr(miri, ignore = "runs every other corpus model: minutes under Miri")]
fn other_golden_models_are_refused_cleanly_or_exact() {
    let Some(dir) = corpus() else { return };
    let Ok(entries) = std::fs::read_dir(dir.join("golden")) else {
        panic!("golden/ unreadable")
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if ALL_REQUIRED.contains(&name.as_str()) {
            continue;
        }
        for mode in MODES {
            match run(&dir, &name, mode) {
                Ok(o) => {
                    println!(
                        "{name:24} {:?} {:?}: bit-exact={} measured={} predicted={}",
                        mode.opdata, mode.execution, o.bit_exact, o.measured, o.predicted
                    );
                    assert_eq!(o.measured as u64, o.predicted, "{name}");
                }
                Err(why) => println!("{name:24} not runnable: {why}"),
            }
        }
    }
}

/// Models with state (variable tensors: LSTM/SVDF state) and TFLM's outputs and
/// state over consecutive invocations (`tests/data/two-invokes`, written by
/// `scripts/golden-two-invokes.py` with the tflite-micro wheel).
const STATEFUL: &[&str] = &[
    "micro_speech_lstm",
    "trained_lstm_int8",
    "keyword_scrambled",
    "keyword_scrambled_8bit",
    // State inside a kernel (SignalFilterBankSpectralSubtraction's noise
    // estimate), not a model tensor: its outputs show it.
    "audio_preprocessor_int8",
];

fn stateful_run(dir: &Path, name: &str) -> Result<(), String> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/two-invokes")
        .join(name);
    let read = |f: String| std::fs::read(data.join(&f)).map_err(|e| format!("{name}: {f}: {e}"));
    let meta: String = String::from_utf8(read("meta.json".into())?).map_err(|e| e.to_string())?;
    let vars: Vec<usize> = meta
        .split("\"variables\": [")
        .nth(1)
        .and_then(|s| s.split(']').next())
        .ok_or(format!("{name}: meta.json has no variables"))?
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect();
    let model_bytes = std::fs::read(dir.join("models").join(format!("{name}.tflite")))
        .map_err(|e| format!("{name}: model missing: {e}"))?;
    let model = Model::parse(&model_bytes).map_err(|e| format!("{name}: {e}"))?;
    let image = lower(&model).map_err(|e| format!("{name}: lower: {e}"))?;
    let need = runtime_arena(&model).map_err(|e| format!("{name}: {e}"))?;
    let mut arena = vec![0xA5u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).map_err(|e| format!("{name}: {e}"))?;
    let input = std::fs::read(dir.join("golden").join(name).join("input0.bin"))
        .map_err(|e| format!("{name}: input0: {e}"))?;
    let dtype = it.input_info(0).map_err(|e| e.to_string())?.dtype;
    // numpy's `x // 64` on the int8/int16 input.
    let quiet: Vec<u8> = match dtype {
        9 => input
            .iter()
            .map(|&b| (b as i8).div_euclid(64) as u8)
            .collect(),
        _ => input
            .chunks_exact(2)
            .flat_map(|c| {
                i16::from_le_bytes([c[0], c[1]])
                    .div_euclid(64)
                    .to_le_bytes()
            })
            .collect(),
    };
    let mut errors = Vec::new();
    let mut invoke = |it: &mut Interpreter<'_, '_>, x: &[u8], n: usize, check_vars: bool| {
        it.input_mut(0).expect("input").copy_from_slice(x);
        it.invoke().expect("invoke");
        let want = read(format!("invoke{n}_output0.bin")).expect("expected output");
        if it.output(0).expect("output") != want.as_slice() {
            errors.push(format!("{name}: invoke {n}: output differs from TFLM"));
        }
        if check_vars {
            for &t in &vars {
                let want = read(format!("invoke{n}_var{t}.bin")).expect("expected state");
                if it.variable(t).expect("variable") != want.as_slice() {
                    errors.push(format!(
                        "{name}: invoke {n}: state tensor {t} differs from TFLM"
                    ));
                }
            }
        }
    };
    invoke(&mut it, &input, 1, true);
    invoke(&mut it, &input, 2, true);
    invoke(&mut it, &quiet, 3, false);
    it.reset().map_err(|e| e.to_string())?;
    invoke(&mut it, &input, 1, true);
    if it.memory_usage().high_water as u64 != need.total_bytes {
        errors.push(format!(
            "{name}: measured arena differs from the prediction"
        ));
    }
    if errors.is_empty() {
        println!("{name:24} 3 invocations + reset: outputs and state equal TFLM's");
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

#[test]
#[cfg_attr(
    miri,
    ignore = "the smallest LSTM model takes minutes per run under Miri"
)]
fn state_survives_invocations_as_in_tflm() {
    let Some(dir) = corpus() else { return };
    let failures: Vec<String> = STATEFUL
        .iter()
        .filter_map(|name| stateful_run(&dir, name).err())
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The LSTM image of `trained_lstm_int8` (image, predicted arena, LSTM op
/// index, the op's input tensor indices).
fn lstm_image(dir: &Path) -> (Vec<u8>, usize, usize, [u16; 24]) {
    use microarena_image as rl;
    let bytes = std::fs::read(dir.join("models/trained_lstm_int8.tflite")).expect("model");
    let model = Model::parse(&bytes).expect("parse");
    let image = lower(&model).expect("lower");
    let total = runtime_arena(&model).expect("arena").total_bytes as usize;
    let parsed = microarena_runtime::Image::parse(&image).expect("image");
    let lstm = (0..parsed.op_count())
        .find(|&i| parsed.op(i).expect("op").opcode == rl::opcode::UNIDIRECTIONAL_SEQUENCE_LSTM)
        .expect("an LSTM op");
    let inputs = parsed.op(lstm).expect("op").inputs;
    (image, total, lstm, inputs)
}

/// Byte offset of field `field` of tensor `t`.
fn tensor_field(image: &[u8], t: usize, field: usize) -> usize {
    use microarena_image as rl;
    let at = rl::header::TENSORS_OFF;
    let off = u32::from_le_bytes(image[at..at + 4].try_into().unwrap()) as usize;
    off + t * rl::TENSOR_BYTES + field
}

/// Found by sweeping the corpus images in a debug build: an extreme zero
/// point on the LSTM's hidden state overflowed `output + zero point` (a
/// panic in debug builds). The addition wraps now, as everywhere else.
#[test]
#[cfg_attr(
    miri,
    ignore = "the smallest LSTM model takes minutes per run under Miri"
)]
fn extreme_lstm_hidden_zero_point_does_not_panic() {
    use microarena_image as rl;
    let Some(dir) = corpus() else { return };
    let (image, total, _, inputs) = lstm_image(&dir);
    let at = tensor_field(&image, usize::from(inputs[18]), rl::tensor::ZERO_POINT);
    for zp in [i32::MIN, i32::MAX] {
        let mut bad = image.clone();
        bad[at..at + 4].copy_from_slice(&zp.to_le_bytes());
        let mut arena = vec![0u8; total];
        let mut it = Interpreter::new(&bad, &mut arena).expect("construct");
        it.invoke().expect("invoke");
        // Any int16-range product plus an extreme zero point wraps to a
        // value the int8 clamp takes to one of its ends.
        let hidden = it.variable(usize::from(inputs[18])).expect("hidden state");
        assert!(
            hidden.iter().all(|&b| b == 0x80 || b == 0x7f),
            "zp {zp}: {hidden:?}"
        );
    }
}

/// A corrupted LSTM cell-state scale (tensor 19's `scale` field): TFLM's
/// `CheckedLog2` refuses a scale that is not a power of two, and a power far
/// from Q3.12 made the cell's tanh shift by 88 bits and panic in debug builds.
#[test]
#[cfg_attr(
    miri,
    ignore = "the smallest LSTM model takes minutes per run under Miri"
)]
fn corrupted_lstm_cell_scale_is_refused() {
    use microarena_image as rl;
    use microarena_runtime::Error;
    let Some(dir) = corpus() else { return };
    let (image, total, lstm, inputs) = lstm_image(&dir);
    let scale_at = tensor_field(&image, usize::from(inputs[19]), rl::tensor::SCALE);
    let with_scale = |s: f32| {
        let mut bad = image.clone();
        bad[scale_at..scale_at + 4].copy_from_slice(&s.to_le_bytes());
        let mut arena = vec![0u8; total];
        Interpreter::new(&bad, &mut arena).map(|mut it| it.invoke())
    };
    let opcode = rl::opcode::UNIDIRECTIONAL_SEQUENCE_LSTM;
    for s in [2f32.powi(-100), 2f32.powi(40), f32::MIN_POSITIVE] {
        assert_eq!(
            with_scale(s).err(),
            Some(Error::InvalidOp {
                op_index: lstm as u16,
                opcode,
                what: "cell state scale too far from Q3.12 for a 32-bit shift"
            }),
            "scale {s:e}"
        );
    }
    for s in [0.003f32, 0.0, -1.0 / 2048.0, f32::NAN, f32::INFINITY] {
        assert_eq!(
            with_scale(s).err(),
            Some(Error::UnsupportedConfig {
                op_index: lstm as u16,
                opcode,
                why: "cell state scale must be a power of two (as TFLM requires)"
            }),
            "scale {s:e}"
        );
    }
    assert_eq!(with_scale(1.0 / 2048.0).err(), None);
}
