//! The firmware's one machine-readable report line (`MICROARENA-REPORT …`),
//! and the budget verdict in it.
//!
//! The format is defined and parsed in microarena-core
//! (`core/src/report/measured.rs`, which documents every key); the firmware
//! has no heap and so cannot link core, and this file restates only what it
//! must: the writer and the verdict's integer arithmetic (core's
//! `Budget::check` and `arena_with_headroom`). Core's tests compile this very
//! file and parse what it writes, so the two cannot drift apart.
//!
//! No dependencies, no `unsafe`, nothing but `core`.

/// Where the line goes (semihosting on the device, a `String` in core's tests).
pub trait Sink {
    /// Appends `s`.
    fn put(&mut self, s: &str);
}

/// Everything the line reports. Bytes are `u32`: a Cortex-M address space.
pub struct Figures<'a> {
    /// The model's name (characters outside `[A-Za-z0-9._-]` become `_`).
    pub model: &'a str,
    /// The linker script's RAM region.
    pub ram_bytes: u32,
    /// `.data` + `.bss` + `.uninit`: static data below the arena.
    pub static_bytes: u32,
    /// The main (thread, PSP) stack's reservation and measured high-water.
    pub stack_bytes: u32,
    /// See `stack_bytes`.
    pub stack_high_water: u32,
    /// The interrupt (handler, MSP) stack's reservation and high-water.
    pub isr_stack_bytes: u32,
    /// See `isr_stack_bytes`.
    pub isr_high_water: u32,
    /// The reserved DMA region.
    pub dma_bytes: u32,
    /// The reserved log buffer.
    pub log_bytes: u32,
    /// The `.noinit` arena's size.
    pub arena_bytes: u32,
    /// The arena's high-water after the inferences.
    pub arena_used_bytes: u32,
    /// Free bytes between the end of static data and the main stack's limit.
    pub gap_bytes: i32,
    /// Inferences run.
    pub invokes: u32,
    /// The arena high-water was the same after each.
    pub arena_stable: bool,
    /// Outputs identical each time; `None` for a model with state.
    pub outputs_stable: Option<bool>,
    /// Timer interrupts taken during the inferences.
    pub ticks: u32,
    /// Headroom in basis points (2000 = 20 %).
    pub headroom_bp: u32,
}

/// The verdict, as core's `Budget::check` computes it, plus the rule that a
/// stack past its reservation fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// Minimum (the arena high-water) plus headroom, rounded up to 16.
    pub arena_bytes: u64,
    /// RAM minus every region (a stack counted at its high-water if larger).
    pub available_bytes: i64,
    /// `available_bytes − arena_bytes`.
    pub margin_bytes: i64,
    /// Fits, and no stack outgrew its reservation.
    pub fits: bool,
}

/// The verdict for `f`.
pub fn verdict(f: &Figures<'_>) -> Verdict {
    let stack = f.stack_bytes.max(f.stack_high_water);
    let isr = f.isr_stack_bytes.max(f.isr_high_water);
    let reserved = u64::from(f.static_bytes)
        + u64::from(stack)
        + u64::from(isr)
        + u64::from(f.dma_bytes)
        + u64::from(f.log_bytes);
    let minimum = u64::from(f.arena_used_bytes);
    let extra = (minimum * u64::from(f.headroom_bp)).div_ceil(10_000);
    let arena = (minimum + extra).div_ceil(16) * 16;
    let available = i64::from(f.ram_bytes) - reserved as i64;
    let margin = available - arena as i64;
    let overflow = f.stack_high_water > f.stack_bytes || f.isr_high_water > f.isr_stack_bytes;
    Verdict {
        arena_bytes: arena,
        available_bytes: available,
        margin_bytes: margin,
        fits: margin >= 0 && !overflow,
    }
}

/// Writes the line (no newline) for `f`.
pub fn write(out: &mut dyn Sink, f: &Figures<'_>) {
    out.put("MICROARENA-REPORT v=1 model=");
    for c in f.model.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            c
        } else {
            '_'
        };
        out.put(c.encode_utf8(&mut [0; 4]));
    }
    let v = verdict(f);
    let fields: [(&str, i64); 18] = [
        ("ram_bytes", f.ram_bytes.into()),
        ("reserve.static", f.static_bytes.into()),
        ("reserve.stack", f.stack_bytes.into()),
        ("high_water.stack", f.stack_high_water.into()),
        ("reserve.isr", f.isr_stack_bytes.into()),
        ("high_water.isr", f.isr_high_water.into()),
        ("reserve.dma", f.dma_bytes.into()),
        ("reserve.log", f.log_bytes.into()),
        ("arena_bytes", f.arena_bytes.into()),
        ("arena_used_bytes", f.arena_used_bytes.into()),
        ("noinit_bytes", f.arena_bytes.into()),
        ("gap_bytes", f.gap_bytes.into()),
        ("invokes", f.invokes.into()),
        ("ticks", f.ticks.into()),
        ("headroom_bp", f.headroom_bp.into()),
        ("minimum_bytes", f.arena_used_bytes.into()),
        ("arena_with_headroom_bytes", v.arena_bytes as i64),
        ("available_bytes", v.available_bytes),
    ];
    for (k, n) in fields {
        out.put(" ");
        out.put(k);
        out.put("=");
        decimal(out, n);
    }
    out.put(" margin_bytes=");
    decimal(out, v.margin_bytes);
    out.put(if f.arena_stable {
        " arena_stable=1"
    } else {
        " arena_stable=0"
    });
    out.put(match f.outputs_stable {
        Some(true) => " outputs_stable=1",
        Some(false) => " outputs_stable=0",
        None => " outputs_stable=-",
    });
    out.put(if v.fits { " fits=1" } else { " fits=0" });
}

/// `n` in decimal, without a heap.
fn decimal(out: &mut dyn Sink, n: i64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut m = n.unsigned_abs();
    loop {
        at -= 1;
        digits[at] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        out.put("-");
    }
    // Only ASCII digits were written.
    out.put(core::str::from_utf8(&digits[at..]).unwrap_or("?"));
}
