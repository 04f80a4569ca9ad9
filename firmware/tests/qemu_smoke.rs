//! QEMU smoke test (harness = false): `cargo test` builds this for the target
//! and runs it through the QEMU runner; the exit code is the verdict.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use microarena_firmware::{ARENA_BYTES, IMAGE, run_and_compare};
use microarena_runtime::{Error, Image, Interpreter};
use panic_semihosting as _;

fn image_parses() -> bool {
    Image::parse(IMAGE).is_ok() && Image::parse(&IMAGE[..8]).is_err()
}

fn too_small_arena_is_an_error() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    let short = ARENA_BYTES - 1;
    matches!(
        Interpreter::new(IMAGE, &mut arena[..short]),
        Err(Error::ArenaTooSmall { needed, available }) if needed == ARENA_BYTES && available == short
    )
}

fn inference_matches_host() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    match Interpreter::new(IMAGE, &mut arena) {
        Ok(mut it) => {
            matches!(run_and_compare(&mut it), Ok(true))
                && it.memory_usage().high_water == ARENA_BYTES
        }
        Err(_) => false,
    }
}

fn no_allocation_during_invoke() -> bool {
    let mut arena = [0u8; ARENA_BYTES];
    match Interpreter::new(IMAGE, &mut arena) {
        Ok(mut it) => it.allocate_persistent(4) == Err(Error::AllocationDuringInvoke),
        Err(_) => false,
    }
}

/// A named check.
type Check = (&'static str, fn() -> bool);

#[entry]
fn main() -> ! {
    let tests: [Check; 4] = [
        ("image_parses", image_parses),
        ("too_small_arena_is_an_error", too_small_arena_is_an_error),
        ("inference_matches_host", inference_matches_host),
        ("no_allocation_during_invoke", no_allocation_during_invoke),
    ];
    let (mut passed, mut failed) = (0, 0);
    for (name, f) in tests {
        if f() {
            passed += 1;
            hprintln!("test {} ... ok", name);
        } else {
            failed += 1;
            hprintln!("test {} ... FAILED", name);
        }
    }
    hprintln!("{} passed, {} failed", passed, failed);
    debug::exit(if failed == 0 {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {
        cortex_m::asm::wfi();
    }
}
