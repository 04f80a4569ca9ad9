//! Model reading + every planner + tail simulation + report on arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_core::plan::{PlannerKind, validate};
use microarena_core::report::Report;
use microarena_core::tflm::profile::PROFILES;
use microarena_core::{Config, Model, analyze};

fuzz_target!(|data: &[u8]| {
    let Ok(model) = Model::parse(data) else {
        return;
    };
    for profile in PROFILES {
        for &planner in PlannerKind::ALL {
            if let Ok(a) = analyze(&model, &Config { profile, planner }) {
                assert!(validate(&a.plan_input, &a.plan).is_ok());
                let r = Report::new(&model, &a, "fuzz");
                assert_eq!(r.arena.total_bytes, r.arena.head_bytes + r.arena.tail_bytes);
            }
        }
    }
});
