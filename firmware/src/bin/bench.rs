//! Bench mode (`--features bench`): counts the instructions of one
//! `Interpreter::invoke` under QEMU, in the same terms as the TFLM harness of
//! `bench/cortex-m/` so the three engines compare directly.
//!
//! How: QEMU runs with `-icount shift=0`, so virtual time advances exactly
//! 1 ns per executed instruction. The mps2-an386 board's CMSDK APB timer 0
//! (0x4000_0000, clocked at 25 MHz) counts down once per 40 ns, i.e. once per
//! 40 instructions; reading it before and after an invoke, minus an empty
//! interval, gives the invoke's instructions to within 40. Without `-icount`
//! the figures are host time and mean nothing.
//!
//! Prints one line per invoke ([`RUNS`]); the first is checked against the
//! expected outputs like the normal firmware. Later invokes can differ a little
//! where the plan reuses the input's bytes (data-dependent branches).
#![no_std]
#![no_main]
// Register access is in `island::bench_timer`, the crate's one `unsafe` module.
#![deny(unsafe_code)]

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use microarena_firmware::island::bench_timer;
use microarena_firmware::{ARENA_BYTES, IMAGE, MODEL_NAME, fill_inputs, outputs_match};
use microarena_runtime::Interpreter;
use panic_semihosting as _;

/// 25 MHz timer clock: one tick per 40 ns = 40 instructions at `-icount shift=0`.
const INSTRUCTIONS_PER_TICK: u64 = 40;
/// Invokes measured; the first is checked against the expected outputs.
const RUNS: usize = 3;

#[entry]
fn main() -> ! {
    microarena_firmware::exit(run())
}

fn run() -> bool {
    bench_timer::start();
    let mut arena = [0u8; ARENA_BYTES];
    let mut it = match Interpreter::new(IMAGE, &mut arena) {
        Ok(it) => it,
        Err(e) => {
            hprintln!("error: {}", e);
            return false;
        }
    };
    if let Err(e) = fill_inputs(&mut it) {
        hprintln!("error: {}", e);
        return false;
    }
    let (a, b) = (bench_timer::now(), bench_timer::now());
    let empty = a.wrapping_sub(b);
    hprintln!(
        "engine microarena model {} arena_used {} embedded_model_bytes {} dsp {}",
        MODEL_NAME,
        ARENA_BYTES,
        IMAGE.len(),
        microarena_runtime::dsp_check::ENABLED
    );
    let mut ok = true;
    for run in 0..RUNS {
        let a = bench_timer::now();
        let r = it.invoke();
        let b = bench_timer::now();
        if let Err(e) = r {
            hprintln!("error: {}", e);
            return false;
        }
        let ticks = a.wrapping_sub(b).wrapping_sub(empty);
        if run == 0 {
            let Ok(same) = outputs_match(&it) else {
                return false;
            };
            ok &= same;
            hprintln!(
                "invoke {} instructions {} outputs={}",
                run,
                u64::from(ticks) * INSTRUCTIONS_PER_TICK,
                if same { "golden" } else { "DIFFER" }
            );
        } else {
            hprintln!(
                "invoke {} instructions {}",
                run,
                u64::from(ticks) * INSTRUCTIONS_PER_TICK
            );
        }
    }
    ok
}
