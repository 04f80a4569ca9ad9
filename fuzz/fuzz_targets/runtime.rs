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

/// Outputs and high-water of one run on a zeroed input, `None` when the
/// model cannot be lowered or run.
fn run(
    model: &Model<'_>,
    options: &LowerOptions,
    slack: u64,
) -> Option<(Vec<Vec<u8>>, usize, u64)> {
    let mut image = lower::lower_with(model, options).ok()?;
    freeze_opdata(&mut image).ok()?;
    let need = lower::runtime_arena_with(model, options).ok()?;
    // Bounded so a hostile model cannot ask for gigabytes.
    let size = usize::try_from(need.total_bytes.saturating_add(slack).min(64 << 20)).ok()?;
    let mut arena = vec![0u8; size];
    let mut it = Interpreter::new(&image, &mut arena).ok()?;
    // A WHILE whose condition stays true loops for ever, in TFLM too (the
    // model's meaning): such models are lowered and constructed, not run.
    let img = *it.image();
    if (0..img.op_count()).any(|i| img.op(i).is_ok_and(|op| op.opcode == opcode::WHILE)) {
        return None;
    }
    it.invoke().ok()?;
    let u = it.memory_usage();
    assert!(u.high_water <= u.available);
    let outputs = (0..it.image().output_count())
        .map(|i| it.output(i).map(<[u8]>::to_vec).unwrap_or_default())
        .collect();
    Some((outputs, u.high_water, need.total_bytes))
}

fuzz_target!(|data: &[u8]| {
    let Ok(model) = Model::parse(data) else {
        return;
    };
    let Some((plain, _, total)) = run(&model, &LowerOptions::default(), 64) else {
        return;
    };
    let banded = LowerOptions {
        opdata: OpDataIn::Flash,
        execution: Execution::Banded,
        in_place: true,
    };
    if total > 64 << 20 {
        return;
    }
    // Banded and in place, then in place alone (where the windowed ops a
    // stage would take run by rows instead).
    let in_place = LowerOptions {
        execution: Execution::Plain,
        ..banded
    };
    for (options, what) in [(banded, "banded in-place"), (in_place, "in-place")] {
        let (outputs, high_water, predicted) = run(&model, &options, 0)
            .unwrap_or_else(|| panic!("the plain run worked, so the {what} one must"));
        assert_eq!(outputs, plain, "{what} outputs differ from plain");
        assert_eq!(
            high_water as u64, predicted,
            "{what} arena differs from its prediction"
        );
    }
});
