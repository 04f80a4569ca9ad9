//! The firmware's one `unsafe` island: everything that touches raw addresses
//! or special registers, kept small so it can be read in one sitting. The
//! rest of the crate stays `deny(unsafe_code)`.
//!
//! What is here and what makes each use sound:
//! - [`layout`]: the addresses of linker-script symbols (`regions.x`). Only
//!   their addresses are taken, never their contents.
//! - [`arena`]: the `.noinit` arena, handed out at most once (a flag checked
//!   and set with interrupts masked), so there is never a second `&mut`. Its
//!   bytes are whatever RAM held at reset; the runtime reads only bytes it has
//!   written (`Interpreter::new` writes the tail, inputs are copied in, each
//!   kernel writes its output before any reader runs), and the firmware checks
//!   every output against the expected bytes.
//! - [`paint`] / [`high_water`]: volatile word accesses to a stack region
//!   given by the layout; `paint` is only called on the interrupt stack while
//!   no handler can run (SysTick not started yet, handlers are MSP-only).
//! - [`run_on_process_stack`]: switches thread mode to the process stack (PSP)
//!   and resets MSP to the top of the interrupt stack, then jumps to a
//!   function that never returns, so nothing lives on the abandoned frames.
//!
//! - [`bench_timer`] (feature `bench`): the mps2-an386 board's CMSDK APB
//!   timer 0, a fixed MMIO block no Rust object lives in, written and read
//!   with volatile word accesses.
//!
//! Tested under QEMU by `tests/qemu_smoke.rs` (layout, paint and measure, the
//! arena taken once) and by every run of the firmware binary (which checks it
//! is on PSP before it starts).

// The crate is `deny(unsafe_code)`; this module is the one exception.
#![allow(unsafe_code)]

use core::mem::MaybeUninit;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::ARENA_BYTES;

/// The word cortex-m-rt's `paint-stack` fills the stacks with at reset.
pub const PAINT: u32 = 0xCCCC_CCCC;

unsafe extern "C" {
    static _microarena_ram_start: u8;
    static _microarena_ram_bytes: u8;
    static _microarena_noinit_start: u8;
    static _microarena_noinit_end: u8;
    static _microarena_static_end: u8;
    static _microarena_stack_limit: u8;
    static _microarena_stack_top: u8;
    static _microarena_isr_stack_limit: u8;
    static _microarena_isr_stack_top: u8;
    static _microarena_dma_bytes: u8;
    static _microarena_log_bytes: u8;
}

/// The RAM layout from the linker script (`regions.x`): addresses and sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Start of RAM.
    pub ram_start: usize,
    /// Size of RAM.
    pub ram_bytes: usize,
    /// The `.noinit` section (the arena).
    pub noinit_start: usize,
    /// End of `.noinit`.
    pub noinit_end: usize,
    /// End of everything static: data, bss, uninit, noinit, DMA and log regions.
    pub static_end: usize,
    /// Lowest address the main (process) stack may use.
    pub stack_limit: usize,
    /// Its initial PSP.
    pub stack_top: usize,
    /// Lowest address the interrupt (main) stack may use.
    pub isr_stack_limit: usize,
    /// Its initial MSP (the top of RAM).
    pub isr_stack_top: usize,
    /// The reserved DMA region's size.
    pub dma_bytes: usize,
    /// The reserved log buffer's size.
    pub log_bytes: usize,
}

/// The layout the firmware was linked with.
pub fn layout() -> Layout {
    // Only the symbols' addresses are taken (safe for an extern static);
    // absolute symbols (the sizes) have their value as address. black_box:
    // the compiler assumes distinct statics have distinct addresses and would
    // fold `stack_top == isr_stack_limit` (one address, two symbols) to false.
    let a = |p: *const u8| core::hint::black_box(p) as usize;
    Layout {
        ram_start: a(&raw const _microarena_ram_start),
        ram_bytes: a(&raw const _microarena_ram_bytes),
        noinit_start: a(&raw const _microarena_noinit_start),
        noinit_end: a(&raw const _microarena_noinit_end),
        static_end: a(&raw const _microarena_static_end),
        stack_limit: a(&raw const _microarena_stack_limit),
        stack_top: a(&raw const _microarena_stack_top),
        isr_stack_limit: a(&raw const _microarena_isr_stack_limit),
        isr_stack_top: a(&raw const _microarena_isr_stack_top),
        dma_bytes: a(&raw const _microarena_dma_bytes),
        log_bytes: a(&raw const _microarena_log_bytes),
    }
}

/// Exactly the predicted bytes, so `.noinit`'s size is the arena's (what
/// `check --elf` reads). The section starts 16-aligned and holds nothing
/// else (regions.x), so the arena starts 16-aligned as TFLM's does;
/// [`arena`] checks it.
#[unsafe(link_section = ".noinit.microarena_arena")]
static mut ARENA: MaybeUninit<[u8; ARENA_BYTES]> = MaybeUninit::uninit();
static ARENA_TAKEN: AtomicBool = AtomicBool::new(false);

/// The `.noinit` arena, exactly [`ARENA_BYTES`] long; `None` after the first
/// call, or if the linker did not place it 16-aligned.
pub fn arena() -> Option<&'static mut [u8]> {
    // Load and store with interrupts masked: ARMv6-M has no compare-and-swap.
    let first = cortex_m::interrupt::free(|_| {
        let taken = ARENA_TAKEN.load(Ordering::Relaxed);
        ARENA_TAKEN.store(true, Ordering::Relaxed);
        !taken
    });
    if !first {
        return None;
    }
    // SAFETY: reached once (above), so this is the only reference; the bytes
    // are plain RAM the runtime writes before it reads (module docs).
    let p = (&raw mut ARENA).cast::<u8>();
    if !(p as usize).is_multiple_of(16) {
        return None;
    }
    unsafe { Some(core::slice::from_raw_parts_mut(p, ARENA_BYTES)) }
}

/// Word-aligned `[start, end)` inside the layout's painted area, or `None`.
fn painted_words(start: usize, end: usize) -> Option<(usize, usize)> {
    let l = layout();
    let ok = start.is_multiple_of(4)
        && end.is_multiple_of(4)
        && start <= end
        && start >= l.static_end
        && end <= l.isr_stack_top;
    ok.then_some((start, end))
}

/// Paints the interrupt stack with [`PAINT`] again (after MSP was moved back
/// to its top). Returns `false` if a handler is running (then nothing is
/// touched: its frame lives there).
pub fn repaint_isr_stack() -> bool {
    if cortex_m::peripheral::SCB::vect_active() != cortex_m::peripheral::scb::VectActive::ThreadMode
        || cortex_m::register::control::read().spsel() != cortex_m::register::control::Spsel::Psp
    {
        return false;
    }
    let l = layout();
    paint(l.isr_stack_limit, l.isr_stack_top)
}

/// Paints `[start, end)` (word-aligned, within the gap and stacks). Private:
/// only an unused stack may be painted.
fn paint(start: usize, end: usize) -> bool {
    let Some((start, end)) = painted_words(start, end) else {
        return false;
    };
    for a in (start..end).step_by(4) {
        // SAFETY: word-aligned, inside RAM the linker reserved for stacks and
        // not in use (callers above).
        unsafe { core::ptr::write_volatile(a as *mut u32, PAINT) };
    }
    true
}

/// Bytes of `[limit, top)` used since it was painted: from `top` down to the
/// lowest word that no longer holds [`PAINT`]. `None` for a range outside the
/// painted area.
pub fn high_water(limit: usize, top: usize) -> Option<usize> {
    let (limit, top) = painted_words(limit, top)?;
    let mut a = limit;
    // SAFETY: word-aligned reads inside the painted area (checked above).
    while a < top && unsafe { core::ptr::read_volatile(a as *const u32) } == PAINT {
        a += 4;
    }
    Some(top - a)
}

/// Runs `entry` in thread mode on the process stack (PSP at the top of the
/// main stack region), with MSP reset to the top of the interrupt stack, so
/// exception handlers use the interrupt stack alone. Call from `main`.
pub fn run_on_process_stack(entry: extern "C" fn() -> !) -> ! {
    let l = layout();
    // SAFETY: PSP and MSP get 8-aligned tops of regions the linker reserved
    // (asserted in regions.x); CONTROL.SPSEL=1 selects PSP for thread mode,
    // ISB makes it take effect before the next instruction; MSP is written
    // once thread mode no longer uses it. `entry` never returns, so the
    // frames left on the old MSP are dead. Function pointers carry the Thumb
    // bit, as `bx` needs.
    unsafe {
        core::arch::asm!(
            "msr psp, {psp}",
            "msr control, {spsel}",
            "isb",
            "msr msp, {msp}",
            "bx {entry}",
            psp = in(reg) l.stack_top,
            spsel = in(reg) 2u32,
            msp = in(reg) l.isr_stack_top,
            entry = in(reg) entry,
            options(noreturn),
        )
    }
}

/// The mps2-an386 board's CMSDK APB timer 0 (AN386 memory map, 25 MHz), which
/// `src/bin/bench.rs` reads around an invoke.
#[cfg(feature = "bench")]
pub mod bench_timer {
    const CTRL: usize = 0x4000_0000;
    const VALUE: usize = 0x4000_0004;
    const RELOAD: usize = 0x4000_0008;

    fn write(addr: usize, v: u32) {
        // SAFETY: a fixed, aligned MMIO register of the board; no Rust object lives there.
        unsafe { core::ptr::write_volatile(addr as *mut u32, v) }
    }

    /// Starts it counting down from `u32::MAX`.
    pub fn start() {
        write(RELOAD, u32::MAX);
        write(VALUE, u32::MAX);
        write(CTRL, 1);
    }

    /// Its current value (it counts down).
    pub fn now() -> u32 {
        // SAFETY: as in `write`.
        unsafe { core::ptr::read_volatile(VALUE as *const u32) }
    }
}
