//! On the device (harness = false, run under QEMU by `cargo test`): an
//! interpreter whose resolver leaves out a kernel the image needs refuses the
//! image at construction, naming the op and its builtin code, and never
//! touches the arena; with the generated resolver the same image runs.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use microarena_firmware::{ARENA_BYTES, IMAGE, KERNEL_OPCODES, KERNELS, run_and_compare};
use microarena_runtime::{Error, Interpreter, Resolver, resolver};
use panic_semihosting as _;

/// The image's kernels but the first op's (its code comes first in
/// `KERNEL_OPCODES`, which lists codes in first-use order).
const WITHOUT_FIRST: &[u8] = KERNEL_OPCODES.split_at(1).1;
static PARTIAL: Resolver = resolver!(WITHOUT_FIRST, banded, rows_in_place);

/// Arena bytes before construction, to see that nothing was written.
const PATTERN: u8 = 0xA5;

fn refused_at_construction() -> bool {
    let mut arena = [PATTERN; ARENA_BYTES];
    let result = Interpreter::with_kernels(IMAGE, &mut arena, &PARTIAL);
    let refused = matches!(
        result,
        Err(Error::KernelNotLinked { op_index: 0, opcode, variant: "" })
            if Some(&opcode) == KERNEL_OPCODES.first()
    );
    if let Err(e) = result {
        hprintln!("refused: {}", e);
    }
    refused && arena.iter().all(|&b| b == PATTERN)
}

fn runs_with_the_generated_resolver() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    match Interpreter::with_kernels(IMAGE, &mut arena, &KERNELS) {
        Ok(mut it) => matches!(run_and_compare(&mut it), Ok(true)),
        Err(_) => false,
    }
}

/// A named check.
type Check = (&'static str, fn() -> bool);

#[entry]
fn main() -> ! {
    let checks: [Check; 2] = [
        ("refused_at_construction", refused_at_construction),
        (
            "runs_with_the_generated_resolver",
            runs_with_the_generated_resolver,
        ),
    ];
    let mut failed = 0;
    for (name, f) in checks {
        let ok = f();
        failed += usize::from(!ok);
        hprintln!("test {} ... {}", name, if ok { "ok" } else { "FAILED" });
    }
    hprintln!("{} passed, {} failed", checks.len() - failed, failed);
    microarena_firmware::exit(failed == 0)
}
