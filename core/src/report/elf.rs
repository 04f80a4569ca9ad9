//! `check --elf` and the app's budget panel: the RAM layout a microarena firmware was linked with, read
//! from its ELF's symbols and sections (the `object` crate). Reading only;
//! the verdict is [`crate::report::measured`]'s.
//!
//! What is read (names from `firmware/regions.x`): the RAM size
//! (`_microarena_ram_bytes`), static data (`_microarena_noinit_start` −
//! `_microarena_ram_start`: `.data`, `.bss`, `.uninit` and their padding),
//! the stack, interrupt-stack, DMA and log reservations
//! (`_microarena_{stack,isr_stack,dma,log}_bytes`) and the arena (the size of
//! the `.noinit` section).

use alloc::vec;
use core::fmt;

use crate::report::measured::{Measured, Region};
use object::{Object, ObjectSection, ObjectSymbol};

/// Why an ELF gave no figures.
#[derive(Debug)]
pub enum ElfError {
    /// Not an object file `object` can read.
    Parse(object::Error),
    /// A symbol of microarena's linker script is missing.
    MissingSymbol(&'static str),
    /// No `.noinit` section (the arena).
    NoNoinit,
    /// `_microarena_noinit_start` lies below `_microarena_ram_start`.
    Layout,
}

impl fmt::Display for ElfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElfError::Parse(e) => write!(f, "not a readable ELF file: {e}"),
            ElfError::MissingSymbol(s) => write!(
                f,
                "no symbol {s}: link the firmware with microarena's regions.x (see firmware/), which defines the reserved regions"
            ),
            ElfError::NoNoinit => write!(
                f,
                "no .noinit section: put the arena in .noinit (see firmware/regions.x)"
            ),
            ElfError::Layout => write!(f, "the .noinit section starts below RAM"),
        }
    }
}

/// The figures `bytes` (an ELF) was linked with.
pub fn read(bytes: &[u8]) -> Result<Measured, ElfError> {
    let file = object::File::parse(bytes).map_err(ElfError::Parse)?;
    let sym = |name: &'static str| {
        file.symbol_by_name(name)
            .map(|s| s.address())
            .ok_or(ElfError::MissingSymbol(name))
    };
    let ram_start = sym("_microarena_ram_start")?;
    let noinit_start = sym("_microarena_noinit_start")?;
    let static_bytes = noinit_start
        .checked_sub(ram_start)
        .ok_or(ElfError::Layout)?;
    let noinit = file.section_by_name(".noinit").ok_or(ElfError::NoNoinit)?;
    let region = |name: &str, bytes: u64| Region {
        name: name.into(),
        reserved_bytes: bytes,
        high_water_bytes: None,
    };
    Ok(Measured {
        model: None,
        ram_bytes: Some(sym("_microarena_ram_bytes")?),
        regions: vec![
            region("static", static_bytes),
            region("stack", sym("_microarena_stack_bytes")?),
            region("isr", sym("_microarena_isr_stack_bytes")?),
            region("dma", sym("_microarena_dma_bytes")?),
            region("log", sym("_microarena_log_bytes")?),
        ],
        arena_bytes: Some(noinit.size()),
        arena_used_bytes: None,
        procedure: None,
        device_verdict: None,
    })
}
