//! Writes a firmware-like ELF: the symbols microarena's `firmware/regions.x` defines and a
//! `.noinit` arena, as `check --elf` and the app's budget panel read them. The CLI tests and
//! the browser tests use it instead of a real firmware build.
//!
//! `cargo run -p microarena-cli --example firmware_elf -- OUT.elf` writes the layout of
//! [`STANDARD`] with a 77,444 B arena: 256 KiB of RAM at 0x2000_0000, 32 B of static data,
//! 16 KiB of stack, 2 KiB of interrupt stack, 1 KiB of DMA and 512 B of log buffers.

use object::write::{Object, Symbol, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, SectionKind, SymbolFlags, SymbolKind, SymbolScope,
};

/// The arena (`.noinit`) of every ELF written here.
pub const ARENA_BYTES: u64 = 77_444;

/// The symbols of a complete layout.
pub const STANDARD: &[(&str, u64)] = &[
    ("_microarena_ram_start", 0x2000_0000),
    ("_microarena_ram_bytes", 262_144),
    ("_microarena_noinit_start", 0x2000_0020),
    ("_microarena_stack_bytes", 16_384),
    ("_microarena_isr_stack_bytes", 2_048),
    ("_microarena_dma_bytes", 1_024),
    ("_microarena_log_bytes", 512),
];

/// An ARM ELF with a `.noinit` section of [`ARENA_BYTES`] and `symbols` as absolute symbols.
pub fn firmware_elf(symbols: &[(&str, u64)]) -> Vec<u8> {
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::Arm, Endianness::Little);
    let noinit = obj.add_section(
        Vec::new(),
        b".noinit".to_vec(),
        SectionKind::UninitializedData,
    );
    obj.append_section_bss(noinit, ARENA_BYTES, 16);
    for (name, value) in symbols {
        obj.add_symbol(Symbol {
            name: name.as_bytes().to_vec(),
            value: *value,
            size: 0,
            kind: SymbolKind::Data,
            scope: SymbolScope::Linkage,
            weak: false,
            section: SymbolSection::Absolute,
            flags: SymbolFlags::None,
        });
    }
    obj.write().expect("write elf")
}

#[allow(dead_code)]
fn main() {
    let out = std::env::args()
        .nth(1)
        .expect("usage: firmware_elf OUT.elf");
    std::fs::write(&out, firmware_elf(STANDARD)).expect("write the ELF");
}
