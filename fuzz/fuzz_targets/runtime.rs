//! Model bytes → lowering → interpreter construction → one invoke, in a generous arena.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_core::{Model, lower};
use microarena_runtime::Interpreter;

fuzz_target!(|data: &[u8]| {
    let Ok(model) = Model::parse(data) else {
        return;
    };
    let Ok(image) = lower::lower(&model) else {
        return;
    };
    let Ok(need) = lower::runtime_arena(&model) else {
        return;
    };
    // Generous, but bounded so a hostile model cannot ask for gigabytes.
    let Ok(size) = usize::try_from(need.total_bytes.saturating_mul(2).min(64 << 20)) else {
        return;
    };
    let mut arena = vec![0u8; size];
    let Ok(mut it) = Interpreter::new(&image, &mut arena) else {
        return;
    };
    let _ = it.invoke();
    let u = it.memory_usage();
    assert!(u.high_water <= u.available);
});
