//! Arbitrary program-image bytes (what a device reads from flash) → interpreter → invoke.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_runtime::Interpreter;

fuzz_target!(|data: &[u8]| {
    let mut arena = vec![0u8; 256 * 1024];
    let Ok(mut it) = Interpreter::new(data, &mut arena) else {
        return;
    };
    let _ = it.invoke();
    let _ = it.invoke();
});
