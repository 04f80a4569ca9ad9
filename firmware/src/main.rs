//! The acceptance procedure on the device (issue 17), under QEMU: the arena
//! in `.noinit`, both stacks painted at reset (cortex-m-rt `paint-stack`),
//! thread code on the process stack and handlers on a separate interrupt
//! stack while SysTick fires during inference, ten inferences with the arena
//! high-water and (for a stateless model) the outputs checked after each, the
//! free gap between static data and the stack limit checked at run time, and
//! one `MICROARENA-REPORT` line with every figure and the budget verdict,
//! which `microarena check --measured` reads.
//!
//! Exits 0 only if the outputs equal the expected bytes (the host runtime's,
//! or TFLM's golden output when build.rs was given one), the arena is as
//! predicted and stable, and the verdict fits.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicU32, Ordering};

use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::register::control::{self, Spsel};
use cortex_m_rt::{entry, exception};
use cortex_m_semihosting::{hprint, hprintln};
use microarena_firmware::report_line::{self, Figures, Sink};
use microarena_firmware::{
    ARENA_BYTES, EXPECTED_SOURCE, HEAD_BYTES, IMAGE, KERNELS, MODEL_NAME, STATEFUL, TAIL_BYTES,
    island, run_and_compare,
};
use microarena_runtime::Interpreter;
use panic_semihosting as _;

/// Inferences the procedure runs.
const INVOKES: u32 = 10;
/// Required headroom on the arena, as `microarena check` defaults to (20 %).
const HEADROOM_BP: u32 = 2000;
/// SysTick period in core cycles: often enough to interrupt every inference.
const TICK_CYCLES: u32 = 4_000;

static TICKS: AtomicU32 = AtomicU32::new(0);

#[exception]
fn SysTick() {
    // Only this handler writes TICKS (a load and a store: ARMv6-M has no
    // atomic read-modify-write).
    TICKS.store(TICKS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

#[entry]
fn main() -> ! {
    island::run_on_process_stack(thread)
}

extern "C" fn thread() -> ! {
    let ok = procedure();
    microarena_firmware::exit(ok)
}

/// A line assembled without a heap, printed with one semihosting call.
struct Line {
    buf: [u8; 768],
    len: usize,
}

impl Sink for Line {
    fn put(&mut self, s: &str) {
        let end = (self.len + s.len()).min(self.buf.len());
        let n = end - self.len;
        if let (Some(dst), Some(src)) = (self.buf.get_mut(self.len..end), s.as_bytes().get(..n)) {
            dst.copy_from_slice(src);
        }
        self.len = end;
    }
}

/// Deliberately deep stack use (feature `deep-stack`): 24 KiB of locals the
/// optimiser cannot remove.
#[cfg(feature = "deep-stack")]
#[inline(never)]
fn deep_stack() -> u32 {
    let mut big = [0u8; 24 * 1024];
    core::hint::black_box(&mut big);
    big.iter().map(|&b| u32::from(b)).sum()
}

fn procedure() -> bool {
    let l = island::layout();
    if control::read().spsel() != Spsel::Psp || !island::repaint_isr_stack() {
        hprintln!("error: not running on the process stack; the interrupt stack is not separate");
        return false;
    }
    // The free gap between the end of static data and the main stack's limit.
    let gap = l.stack_limit as i64 - l.static_end as i64;
    hprintln!(
        "microarena firmware: model {}, image {} bytes; RAM {} B, arena {} B in .noinit (not zeroed at boot), gap {} B",
        MODEL_NAME,
        IMAGE.len(),
        l.ram_bytes,
        l.noinit_end - l.noinit_start,
        gap
    );
    if gap < 0 {
        hprintln!("error: static data runs into the stack by {} B", -gap);
        return false;
    }
    let Some(arena) = island::arena() else {
        hprintln!("error: the arena was already taken, or is not 16-aligned");
        return false;
    };
    let mut it = match Interpreter::with_kernels(IMAGE, arena, &KERNELS) {
        Ok(it) => it,
        Err(e) => {
            hprintln!("error: {}", e);
            return false;
        }
    };

    // SysTick interrupts every inference; its handler runs on the interrupt stack.
    let Some(mut p) = cortex_m::Peripherals::take() else {
        hprintln!("error: peripherals already taken");
        return false;
    };
    p.SYST.set_clock_source(SystClkSource::Core);
    p.SYST.set_reload(TICK_CYCLES - 1);
    p.SYST.clear_current();
    p.SYST.enable_interrupt();
    p.SYST.enable_counter();

    let mut same = true;
    let mut outputs_stable = true;
    let mut high_water = None;
    let mut arena_stable = true;
    for i in 0..INVOKES {
        #[cfg(feature = "deep-stack")]
        core::hint::black_box(deep_stack());
        let matches = match run_and_compare(&mut it) {
            Ok(m) => m,
            Err(e) => {
                hprintln!("error: invoke {}: {}", i + 1, e);
                return false;
            }
        };
        // A model with state answers the expected bytes on the first invoke only.
        if i == 0 {
            same = matches;
        } else {
            outputs_stable &= matches;
        }
        let hw = it.memory_usage().high_water;
        arena_stable &= *high_water.get_or_insert(hw) == hw;
    }
    p.SYST.disable_interrupt();
    p.SYST.disable_counter();
    let ticks = TICKS.load(Ordering::Relaxed);

    let stack_hw = island::high_water(l.static_end, l.stack_top).unwrap_or(0);
    let isr_hw = island::high_water(l.isr_stack_limit, l.isr_stack_top).unwrap_or(0);
    let u = it.memory_usage();
    hprintln!(
        "arena: used {} of {} bytes (head {}, tail {}), high-water {} after each of {} invokes: {}; predicted {} (head {}, tail {})",
        u.used,
        u.available,
        u.head,
        u.tail,
        u.high_water,
        INVOKES,
        if arena_stable { "stable" } else { "CHANGED" },
        ARENA_BYTES,
        HEAD_BYTES,
        TAIL_BYTES
    );
    hprintln!(
        "stacks: main {} of {} B, interrupt {} of {} B ({} SysTick interrupts during inference)",
        stack_hw,
        l.stack_top - l.stack_limit,
        isr_hw,
        l.isr_stack_top - l.isr_stack_limit,
        ticks
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
    let figures = Figures {
        model: MODEL_NAME,
        ram_bytes: l.ram_bytes as u32,
        static_bytes: (l.noinit_start - l.ram_start) as u32,
        stack_bytes: (l.stack_top - l.stack_limit) as u32,
        stack_high_water: stack_hw as u32,
        isr_stack_bytes: (l.isr_stack_top - l.isr_stack_limit) as u32,
        isr_high_water: isr_hw as u32,
        dma_bytes: l.dma_bytes as u32,
        log_bytes: l.log_bytes as u32,
        arena_bytes: (l.noinit_end - l.noinit_start) as u32,
        arena_used_bytes: u.high_water as u32,
        gap_bytes: gap as i32,
        invokes: INVOKES,
        arena_stable,
        outputs_stable: (!STATEFUL).then_some(outputs_stable),
        ticks,
        headroom_bp: HEADROOM_BP,
    };
    let verdict = report_line::verdict(&figures);
    let mut line = Line {
        buf: [0; 768],
        len: 0,
    };
    report_line::write(&mut line, &figures);
    hprintln!(
        "{}",
        core::str::from_utf8(line.buf.get(..line.len).unwrap_or(&[])).unwrap_or("")
    );
    let stable = arena_stable && (STATEFUL || outputs_stable);
    hprintln!(
        "outputs {} {}{}; arena {}; verdict: {} (margin {} B)",
        if same { "identical to" } else { "DIFFER from" },
        EXPECTED_SOURCE,
        if STATEFUL {
            " (first invoke; the model keeps state)"
        } else if outputs_stable {
            ", every invoke"
        } else {
            ", but NOT on every invoke"
        },
        if exact {
            "as predicted"
        } else {
            "DIFFERS from the prediction"
        },
        if verdict.fits { "fits" } else { "does not fit" },
        verdict.margin_bytes
    );
    same && exact && stable && verdict.fits
}
