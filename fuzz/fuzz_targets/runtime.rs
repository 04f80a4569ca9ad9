//! Model bytes → lowering → interpreter construction → one invoke, in a
//! generous arena; then the same model lowered with its OpData in flash, in
//! place, banded or not, must give the same outputs in exactly its predicted
//! arena.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn};
use microarena_core::{Model, lower};
use microarena_runtime::runtime_layout::opcode;
use microarena_runtime::{Interpreter, freeze_opdata};

/// Outputs and high-water of one run on a zeroed input; `Ok(None)` when the
/// model is not run (a WHILE), `Err` naming the step that refused it.
type Run = (Vec<Vec<u8>>, usize, u64);

fn run(model: &Model<'_>, options: &LowerOptions, slack: u64) -> Result<Option<Run>, String> {
    let mut image = lower::lower_with(model, options).map_err(|e| format!("lower: {e}"))?;
    freeze_opdata(&mut image).map_err(|e| format!("freeze: {e:?}"))?;
    let need = lower::runtime_arena_with(model, options).map_err(|e| format!("predict: {e}"))?;
    // Bounded so a hostile model cannot ask for gigabytes.
    let size = usize::try_from(need.total_bytes.saturating_add(slack).min(64 << 20))
        .map_err(|_| "arena size".to_string())?;
    let mut arena = vec![0u8; size];
    let mut it = Interpreter::new(&image, &mut arena).map_err(|e| format!("construct: {e:?}"))?;
    // A WHILE whose condition stays true loops for ever, in TFLM too (the
    // model's meaning): such models are lowered and constructed, not run.
    let img = *it.image();
    if (0..img.op_count()).any(|i| img.op(i).is_ok_and(|op| op.opcode == opcode::WHILE)) {
        return Ok(None);
    }
    it.invoke().map_err(|e| format!("invoke: {e:?}"))?;
    let u = it.memory_usage();
    assert!(u.high_water <= u.available);
    let outputs = (0..it.image().output_count())
        .map(|i| it.output(i).map(<[u8]>::to_vec).unwrap_or_default())
        .collect();
    Ok(Some((outputs, u.high_water, need.total_bytes)))
}

/// Which graph outputs have a defined value: those computed from graph
/// inputs, constants and variables alone. An output no op writes, or one
/// computed from a tensor read before anything writes it, holds whatever
/// the arena held there (in TFLM too), which differs between plans.
fn defined_outputs(model: &Model<'_>) -> Vec<bool> {
    let sg = model.main();
    let mut defined: Vec<bool> = sg
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| t.has_data || t.is_variable || sg.inputs.contains(&(i as i32)))
        .collect();
    for op in &sg.operators {
        let known = op
            .inputs
            .iter()
            .filter(|&&t| t >= 0)
            .all(|&t| defined.get(t as usize).copied().unwrap_or(false));
        for &t in &op.outputs {
            if let Some(d) = defined.get_mut(t as usize) {
                *d = known;
            }
        }
    }
    sg.outputs
        .iter()
        .map(|&t| defined.get(t as usize).copied().unwrap_or(false))
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(model) = Model::parse(data) else {
        return;
    };
    let Ok(Some((plain, plain_high_water, total))) = run(&model, &LowerOptions::default(), 64)
    else {
        return;
    };
    // The slack lets a plain misprediction show as this, not as a refusal of
    // the modes below (which get exactly their prediction).
    assert_eq!(
        plain_high_water as u64, total,
        "plain arena differs from its prediction"
    );
    let banded = LowerOptions {
        opdata: OpDataIn::Flash,
        execution: Execution::Banded,
        in_place: true,
    };
    if total > 64 << 20 {
        return;
    }
    let defined = defined_outputs(&model);
    // Banded and in place, then in place alone (where the windowed ops a
    // stage would take run by rows instead).
    let in_place = LowerOptions {
        execution: Execution::Plain,
        ..banded
    };
    for (options, what) in [(banded, "banded in-place"), (in_place, "in-place")] {
        let (outputs, high_water, predicted) = match run(&model, &options, 0) {
            Ok(Some(r)) => r,
            Ok(None) => return,
            Err(e) => panic!("the plain run worked, so the {what} one must; {e}"),
        };
        for (k, (a, b)) in outputs.iter().zip(&plain).enumerate() {
            if defined.get(k).copied().unwrap_or(false) {
                assert_eq!(a, b, "{what} output {k} differs from plain");
            }
        }
        assert_eq!(
            high_water as u64, predicted,
            "{what} arena differs from its prediction"
        );
    }
});
