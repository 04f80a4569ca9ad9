//! Arbitrary program-image bytes (what a device reads from flash) → interpreter → invoke.
#![no_main]

use libfuzzer_sys::fuzz_target;
use microarena_runtime::Interpreter;
use microarena_runtime::runtime_layout::opcode;

fuzz_target!(|data: &[u8]| {
    let mut arena = vec![0u8; 256 * 1024];
    let Ok(mut it) = Interpreter::new(data, &mut arena) else {
        return;
    };
    // A WHILE whose condition stays true loops for ever, in TFLM too: the
    // model's meaning, not a fault; such images are only constructed.
    let img = *it.image();
    if (0..img.op_count()).any(|i| img.op(i).is_ok_and(|op| op.opcode == opcode::WHILE)) {
        return;
    }
    let _ = it.invoke();
    let _ = it.invoke();
});
