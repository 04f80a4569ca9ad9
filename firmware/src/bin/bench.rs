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
//!
//! Flash: the interpreter links only the image's kernels (`KERNELS`, which
//! build.rs generates), the lines are printed without `core::fmt`
//! ([`microarena_firmware::console`]) and a panic exits without formatting
//! its message, so the text besides the model is the runtime's and the
//! kernels' own, as in the TFLM harness.
#![no_std]
#![no_main]
// Register access is in `island::bench_timer`, the crate's one `unsafe` module.
#![deny(unsafe_code)]

use cortex_m_rt::entry;
use microarena_firmware::console::Line;
use microarena_firmware::island::bench_timer;
use microarena_firmware::{ARENA_BYTES, IMAGE, KERNELS, MODEL_NAME, fill_inputs, outputs_match};
use microarena_runtime::Interpreter;

/// 25 MHz timer clock: one tick per 40 ns = 40 instructions at `-icount shift=0`.
const INSTRUCTIONS_PER_TICK: u64 = 40;
/// Invokes measured; the first is checked against the expected outputs.
const RUNS: usize = 3;

/// Exits with failure without formatting the message: `core::fmt` and the
/// panic strings stay out of the binary. (Nothing here is meant to panic.)
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    Line::new().str("panic").print();
    microarena_firmware::exit(false)
}

#[entry]
fn main() -> ! {
    microarena_firmware::exit(run())
}

fn run() -> bool {
    bench_timer::start();
    let mut arena = [0u8; ARENA_BYTES];
    let mut line = Line::new();
    let mut it = match Interpreter::with_kernels(IMAGE, &mut arena, &KERNELS) {
        Ok(it) => it,
        Err(e) => {
            line.error(&e).print();
            return false;
        }
    };
    if let Err(e) = fill_inputs(&mut it) {
        line.error(&e).print();
        return false;
    }
    let (a, b) = (bench_timer::now(), bench_timer::now());
    let empty = a.wrapping_sub(b);
    line.str("engine microarena model ")
        .str(MODEL_NAME)
        .str(" arena_used ")
        .dec(ARENA_BYTES as u64)
        .str(" embedded_model_bytes ")
        .dec(IMAGE.len() as u64)
        .str(" dsp ")
        .str(if microarena_runtime::dsp_check::ENABLED {
            "true"
        } else {
            "false"
        })
        .print();
    let mut ok = true;
    for run in 0..RUNS {
        let a = bench_timer::now();
        let r = it.invoke();
        let b = bench_timer::now();
        if let Err(e) = r {
            line.error(&e).print();
            return false;
        }
        let ticks = a.wrapping_sub(b).wrapping_sub(empty);
        let instructions = u64::from(ticks) * INSTRUCTIONS_PER_TICK;
        line.str("invoke ")
            .dec(run as u64)
            .str(" instructions ")
            .dec(instructions);
        if run == 0 {
            let Ok(same) = outputs_match(&it) else {
                return false;
            };
            ok &= same;
            line.str(if same {
                " outputs=golden"
            } else {
                " outputs=DIFFER"
            });
        }
        line.print();
    }
    ok
}
