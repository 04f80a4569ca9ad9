//! What-if shapes on arbitrary models: the first four bytes choose a graph
//! input and its new dims; propagation either refuses with an error or gives a
//! model every later stage (analysis, runtime sizing, report, diff) accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_core::plan::{PlannerKind, validate};
use microarena_core::report::Report;
use microarena_core::tflm::profile::X86_64;
use microarena_core::whatif::with_input_shapes;
use microarena_core::{Config, Model, analyze, lower, report::diff};

fuzz_target!(|data: &[u8]| {
    let Some((knobs, model_bytes)) = data.split_first_chunk::<4>() else {
        return;
    };
    let Ok(model) = Model::parse(model_bytes) else {
        return;
    };
    let Some(&input) = model.main().inputs.get(usize::from(knobs[0]) % 4) else {
        return;
    };
    let Some(tensor) = usize::try_from(input)
        .ok()
        .and_then(|t| model.main().tensors.get(t))
    else {
        return;
    };
    // Change one dimension: a small value, or the old one scaled.
    let mut dims = tensor.shape.clone();
    if dims.is_empty() {
        return;
    }
    let axis = usize::from(knobs[1]) % dims.len();
    dims[axis] = match knobs[2] % 3 {
        0 => i32::from(knobs[3]).max(1),
        1 => dims[axis].saturating_mul(i32::from(knobs[3] % 8) + 1),
        _ => (dims[axis] / (i32::from(knobs[3] % 8) + 1)).max(1),
    };
    let Ok(what_if) = with_input_shapes(&model, &[(format!("{input}"), dims)]) else {
        return;
    };
    let config = Config {
        profile: &X86_64,
        planner: PlannerKind::TflmGreedy,
    };
    let Ok(a) = analyze(&what_if, &config) else {
        return;
    };
    assert!(validate(&a.plan_input, &a.plan).is_ok());
    let _ = lower::runtime_arena(&what_if);
    let after = Report::new(&what_if, &a, "what-if");
    if let Ok(b) = analyze(&model, &config) {
        let before = Report::new(&model, &b, "model");
        let d = diff::diff(&before, &after);
        assert_eq!(d.figures.len(), 7);
    }
});
