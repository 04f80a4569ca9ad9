//! Banded stages over the layer patterns converters emit: explicit PAD
//! before strided layers, element-wise activations and casts between
//! windowed ops, residual ADDs with the skip tensor streamed, a
//! squeeze-excite MUL by a gate computed before the stage. Each builder
//! model runs banded (and banded in place) with outputs identical to the
//! plain run, in exactly the arena core predicts, measured.

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::converted;
use microarena_core::build::example::pseudo_random_bytes;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_image as rl;
use microarena_runtime::{Error, Interpreter, freeze_opdata};

/// (output, measured high-water, predicted total, stages as op ranges).
fn run(model: &Model<'_>, options: LowerOptions) -> (Vec<u8>, usize, usize, Vec<(usize, usize)>) {
    let mut image = lower_with(model, &options).expect("lower");
    freeze_opdata(&mut image).expect("freeze");
    let need = runtime_arena_with(model, &options).expect("arena");
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let input = it.input_mut(0).expect("input");
    let n = input.len();
    input.copy_from_slice(&pseudo_random_bytes(7, n));
    it.invoke().expect("invoke");
    (
        it.output(0).expect("output").to_vec(),
        it.memory_usage().high_water,
        need.total_bytes as usize,
        need.stages.iter().map(|s| (s.first, s.last)).collect(),
    )
}

fn options(execution: Execution, in_place: bool) -> LowerOptions {
    LowerOptions {
        opdata: OpDataIn::Flash,
        execution,
        in_place,
    }
}

/// Runs `bytes` plain, banded and banded in place: equal outputs, measured
/// = predicted; returns (plain total, banded total, banded stages).
fn check(bytes: &[u8]) -> (usize, usize, Vec<(usize, usize)>) {
    let model = Model::parse(bytes).expect("parse");
    let (want, plain_high, plain_total, _) = run(&model, options(Execution::Plain, false));
    assert_eq!(plain_high, plain_total);
    let (got, high, total, stages) = run(&model, options(Execution::Banded, false));
    assert_eq!(got, want, "banded output differs");
    assert_eq!(high, total, "banded: measured vs predicted");
    let (got, high, in_place_total, _) = run(&model, options(Execution::Banded, true));
    assert_eq!(got, want, "banded in-place output differs");
    assert_eq!(
        high, in_place_total,
        "banded in place: measured vs predicted"
    );
    (plain_total, total.min(in_place_total), stages)
}

/// The op codes of ops `first..=last`.
fn codes(bytes: &[u8], (first, last): (usize, usize)) -> Vec<u8> {
    let model = Model::parse(bytes).expect("parse");
    model.main().operators[first..=last]
        .iter()
        .map(|o| o.opcode.0 as u8)
        .collect()
}

fn staged(bytes: &[u8], stages: &[(usize, usize)], code: u8) -> bool {
    stages.iter().any(|&s| codes(bytes, s).contains(&code))
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn pytorch_mobilenet_v2_streams_its_pads_and_residuals() {
    let bytes = converted::mobilenet_v2_pytorch_int8(64);
    let (plain, banded, stages) = check(&bytes);
    assert!(staged(&bytes, &stages, rl::opcode::PAD), "{stages:?}");
    assert!(staged(&bytes, &stages, rl::opcode::ADD), "{stages:?}");
    assert!(banded * 2 < plain, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn keras_vww_streams_its_zero_padding() {
    let bytes = converted::mobilenet_v1_vww_keras_int8();
    let (plain, banded, stages) = check(&bytes);
    assert!(staged(&bytes, &stages, rl::opcode::PAD), "{stages:?}");
    // The 27,648 B input stays whole (the caller fills it): below 60 %.
    assert!(banded * 5 < plain * 3, "{banded} vs {plain}");
}

#[test]
#[cfg_attr(miri, ignore = "whole models: minutes under Miri")]
fn mobilenet_v3_streams_hard_swish() {
    let bytes = converted::mobilenet_v3_style_int8(64);
    let (plain, banded, stages) = check(&bytes);
    assert!(
        staged(&bytes, &stages, rl::opcode::HARD_SWISH),
        "{stages:?}"
    );
    assert!(banded < plain, "{banded} vs {plain}");
}
