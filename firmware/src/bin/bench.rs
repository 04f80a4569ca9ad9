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

use cortex_m_rt::entry;
use cortex_m_semihosting::{debug, hprintln};
use microarena_firmware::{ARENA_BYTES, EXPECTED, IMAGE, INPUT, MODEL_NAME};
use microarena_runtime::Interpreter;
use panic_semihosting as _;

/// CMSDK APB timer 0 of QEMU's mps2-an386 (AN386 application note memory map).
const TIMER_CTRL: usize = 0x4000_0000;
const TIMER_VALUE: usize = 0x4000_0004;
const TIMER_RELOAD: usize = 0x4000_0008;
/// 25 MHz timer clock: one tick per 40 ns = 40 instructions at `-icount shift=0`.
const INSTRUCTIONS_PER_TICK: u64 = 40;
/// Invokes measured; the first is checked against the expected outputs.
const RUNS: usize = 3;

fn write(addr: usize, v: u32) {
    // SAFETY: a fixed, aligned MMIO register of the board; no Rust object lives there.
    unsafe { core::ptr::write_volatile(addr as *mut u32, v) }
}

fn now() -> u32 {
    // SAFETY: as in `write`.
    unsafe { core::ptr::read_volatile(TIMER_VALUE as *const u32) }
}

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
    write(TIMER_RELOAD, u32::MAX);
    write(TIMER_VALUE, u32::MAX);
    write(TIMER_CTRL, 1);
    let mut arena = [0u8; ARENA_BYTES];
    let mut it = match Interpreter::new(IMAGE, &mut arena) {
        Ok(it) => it,
        Err(e) => {
            hprintln!("error: {}", e);
            return false;
        }
    };
    let mut at = 0;
    for i in 0..it.image().input_count() {
        let Ok(dst) = it.input_mut(i) else {
            return false;
        };
        let Some(src) = INPUT.get(at..at + dst.len()) else {
            return false;
        };
        dst.copy_from_slice(src);
        at += src.len();
    }
    let (a, b) = (now(), now());
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
        let a = now();
        let r = it.invoke();
        let b = now();
        if let Err(e) = r {
            hprintln!("error: {}", e);
            return false;
        }
        let ticks = a.wrapping_sub(b).wrapping_sub(empty);
        if run == 0 {
            let mut at = 0;
            let mut same = true;
            for i in 0..it.image().output_count() {
                let Ok(got) = it.output(i) else {
                    return false;
                };
                same &= EXPECTED.get(at..at + got.len()) == Some(got);
                at += got.len();
            }
            same &= at == EXPECTED.len();
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
