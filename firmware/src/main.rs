//! Runs the embedded model once under QEMU, prints arena usage and outputs
//! over semihosting, and exits 0 only if the outputs equal the expected bytes
//! (the host runtime's, or TFLM's golden output when build.rs was given one).
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprint, hprintln};
use microarena_firmware::{
    ARENA_BYTES, EXPECTED_SOURCE, HEAD_BYTES, IMAGE, MODEL_NAME, TAIL_BYTES, run_and_compare,
};
use microarena_runtime::Interpreter;
use panic_semihosting as _;

#[entry]
fn main() -> ! {
    let ok = run();
    debug::exit(if ok {
        debug::EXIT_SUCCESS
    } else {
        debug::EXIT_FAILURE
    });
    loop {
        cortex_m::asm::wfi();
    }
}

fn run() -> bool {
    // Exactly the arena core predicted; it lives on the stack.
    let mut arena = [0u8; ARENA_BYTES];
    hprintln!(
        "microarena firmware: model {}, image {} bytes",
        MODEL_NAME,
        IMAGE.len()
    );
    let mut it = match Interpreter::new(IMAGE, &mut arena) {
        Ok(it) => it,
        Err(e) => {
            hprintln!("error: {}", e);
            return false;
        }
    };
    let same = match run_and_compare(&mut it) {
        Ok(same) => same,
        Err(e) => {
            hprintln!("error: {}", e);
            return false;
        }
    };
    let u = it.memory_usage();
    hprintln!(
        "arena: used {} of {} bytes (head {}, tail {}), high-water {}; predicted {} (head {}, tail {})",
        u.used,
        u.available,
        u.head,
        u.tail,
        u.high_water,
        ARENA_BYTES,
        HEAD_BYTES,
        TAIL_BYTES
    );
    for i in 0..it.image().output_count() {
        hprint!("output {}:", i);
        if let Ok(out) = it.output(i) {
            for b in out {
                hprint!(" {}", *b as i8);
            }
        }
        hprintln!("");
    }
    let exact = u.high_water == ARENA_BYTES;
    hprintln!(
        "outputs {} {}; arena {}",
        if same { "identical to" } else { "DIFFER from" },
        EXPECTED_SOURCE,
        if exact {
            "as predicted"
        } else {
            "DIFFERS from the prediction"
        }
    );
    same && exact
}
