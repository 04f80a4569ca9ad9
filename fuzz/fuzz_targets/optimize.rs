//! Model bytes → optimizer (offline-plan writer); its output must re-read and
//! re-plan cleanly, to the head it promised.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_core::plan::PlannerKind;
use microarena_core::rewrite::optimize::{Options, optimize};
use microarena_core::{Config, Model, analyze, tflm::profile};

fuzz_target!(|data: &[u8]| {
    let opts = Options {
        reorder: data.len().is_multiple_of(2),
        force: true,
        budget_nodes: 2_000,
        max_reorder_states: 2_000,
        ..Options::new(&profile::X86_64)
    };
    let Ok(out) = optimize(data, &opts) else {
        return;
    };
    let model = Model::parse(&out.bytes).expect("optimizer output re-reads");
    let a = analyze(
        &model,
        &Config {
            profile: &profile::X86_64,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("optimizer output re-plans");
    assert_eq!(a.head_bytes, out.head_bytes);
    assert!(out.head_bytes <= out.original_head_bytes);
});
