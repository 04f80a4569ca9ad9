//! Where the arena goes on a device with several memories: one arena in the
//! fastest memory that holds it, or — as TFLM's two-buffer
//! `MicroAllocator::Create` allows ([`crate::tflm::split`]) — the head
//! (activations, scratch: what every kernel reads and writes) in the fastest
//! memory and the tail (tensor structs, OpData) in another. Each memory keeps
//! the required headroom on its own part. The C++ that creates the chosen
//! layout comes with it.
//!
//! Memories that are adjacent in the address map (STM32F746's DTCM, SRAM1 and
//! SRAM2) can hold one buffer across them, at the speed of the slowest. The
//! reserves (stacks, RTOS, DMA, logs) are charged to the device's main SRAM,
//! where a default linker script puts them.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::report::budget::arena_with_headroom;
use crate::report::{grouped, grouped_signed};
use crate::tflm::split::SplitArena;

/// What a memory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "kebab-case"))]
pub enum MemoryKind {
    /// Tightly coupled memory: single-cycle, no bus contention.
    Tcm,
    /// On-chip SRAM on the bus matrix.
    Sram,
    /// External RAM (PSRAM, SDRAM) behind a cache.
    ExternalRam,
    /// Flash (on-chip or external, memory-mapped).
    Flash,
}

/// One memory of a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Memory {
    /// Name as the reference manual spells it.
    pub name: &'static str,
    /// Start address.
    pub origin: u64,
    /// Size in bytes.
    pub bytes: u64,
    /// What it is.
    pub kind: MemoryKind,
    /// Data-access speed rank for the CPU: 0 is the fastest.
    pub rank: u8,
    /// Where the reserves (stacks, RTOS heap, DMA, logs) live.
    pub main: bool,
}

impl Memory {
    /// A memory of `kib` KiB (the presets' shorthand).
    pub const fn kib(
        name: &'static str,
        origin: u64,
        kib: u64,
        kind: MemoryKind,
        rank: u8,
        main: bool,
    ) -> Memory {
        Memory {
            name,
            origin,
            bytes: kib * 1024,
            kind,
            rank,
            main,
        }
    }

    /// RAM the arena can use (not flash).
    pub fn is_ram(&self) -> bool {
        self.kind != MemoryKind::Flash
    }

    /// Output section name for a buffer placed here (`.dtcm`, `.sram1`, …).
    pub fn section(&self) -> String {
        let s: String = self
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        format!(".{s}")
    }
}

/// A run of adjacent RAM memories one buffer may occupy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Area {
    /// The memories, in address order (`DTCM+SRAM1`).
    pub name: String,
    /// Their sizes together.
    pub bytes: u64,
    /// The reserves charged to it (it holds the main SRAM).
    pub reserved_bytes: u64,
    /// The slowest memory's rank.
    pub rank: u8,
    /// The first memory's output section.
    pub section: String,
    #[cfg_attr(feature = "serde", serde(skip))]
    span: (usize, usize),
}

impl Area {
    /// Bytes left for arena buffers.
    pub fn free_bytes(&self) -> u64 {
        self.bytes.saturating_sub(self.reserved_bytes)
    }

    fn overlaps(&self, other: &Area) -> bool {
        self.span.0 <= other.span.1 && other.span.0 <= self.span.1
    }
}

/// One buffer placed in an area.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Placed {
    /// `arena` (single arena), `head` or `tail` (two buffers).
    pub buffer: String,
    /// Where.
    pub area: Area,
    /// What the buffer needs without headroom.
    pub minimum_bytes: u64,
    /// What to declare: the minimum plus the headroom, rounded up to 16.
    pub bytes: u64,
    /// `area.free_bytes() − bytes`.
    pub margin_bytes: i64,
}

/// The proposal.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Placement {
    /// The buffers placed: one (`arena`) or two (`head`, `tail`); empty when
    /// nothing fits.
    pub buffers: Vec<Placed>,
    /// Why this layout, in one sentence.
    pub why: String,
    /// The C++ that declares the buffers and creates the interpreter.
    pub cpp: String,
}

impl Placement {
    /// Some layout fits.
    pub fn fits(&self) -> bool {
        !self.buffers.is_empty()
    }

    /// One line: each buffer with its size, memory and margin, then why
    /// (only why when nothing fits). The CLI and the app print it as is.
    pub fn summary(&self) -> String {
        if !self.fits() {
            return self.why.clone();
        }
        let parts: Vec<String> = self
            .buffers
            .iter()
            .map(|x| {
                format!(
                    "{} {} B in {} (margin {} B)",
                    x.buffer,
                    grouped(x.bytes),
                    x.area.name,
                    grouped_signed(x.margin_bytes)
                )
            })
            .collect();
        format!("{} — {}", parts.join(", "), self.why)
    }
}

/// Every run of adjacent RAM memories (each memory alone included), in
/// address order.
pub fn areas(memories: &[Memory], reserved_bytes: u64) -> Vec<Area> {
    let mut ram: Vec<&Memory> = memories.iter().filter(|m| m.is_ram()).collect();
    ram.sort_by_key(|m| m.origin);
    let mut out = Vec::new();
    for i in 0..ram.len() {
        let mut j = i;
        loop {
            let run = &ram[i..=j];
            out.push(Area {
                name: run.iter().map(|m| m.name).collect::<Vec<_>>().join("+"),
                bytes: run.iter().map(|m| m.bytes).sum(),
                reserved_bytes: if run.iter().any(|m| m.main) {
                    reserved_bytes
                } else {
                    0
                },
                rank: run.iter().map(|m| m.rank).max().unwrap_or(0),
                section: run[0].section(),
                span: (i, j),
            });
            match ram.get(j + 1) {
                Some(next) if ram[j].origin.saturating_add(ram[j].bytes) == next.origin => j += 1,
                _ => break,
            }
        }
    }
    out
}

/// The fastest area (then the smallest, then the first) with `need` bytes free,
/// not overlapping `other`.
fn best<'a>(areas: &'a [Area], need: u64, other: Option<&Area>) -> Option<&'a Area> {
    areas
        .iter()
        .filter(|a| a.free_bytes() >= need && !other.is_some_and(|o| a.overlaps(o)))
        .min_by_key(|a| (a.rank, a.bytes, a.span.0))
}

fn placed(buffer: &str, area: &Area, minimum: u64, headroom_bp: u32) -> Placed {
    let bytes = arena_with_headroom(minimum, headroom_bp);
    Placed {
        buffer: buffer.into(),
        area: area.clone(),
        minimum_bytes: minimum,
        bytes,
        margin_bytes: area.free_bytes() as i64 - bytes as i64,
    }
}

/// Places the arena on `memories`: `single_bytes` is the one-arena minimum,
/// `split` the two buffers' minimums, `reserved_bytes` what the main SRAM
/// holds besides, `headroom_bp` the headroom each buffer keeps.
pub fn place(
    memories: &[Memory],
    single_bytes: u64,
    split: SplitArena,
    reserved_bytes: u64,
    headroom_bp: u32,
) -> Placement {
    let areas = areas(memories, reserved_bytes);
    let need_single = arena_with_headroom(single_bytes, headroom_bp);
    let need_head = arena_with_headroom(split.non_persistent_bytes, headroom_bp);
    let need_tail = arena_with_headroom(split.persistent_bytes, headroom_bp);
    let single = best(&areas, need_single, None);
    let head = best(&areas, need_head, None);
    let pair = head.and_then(|h| best(&areas, need_tail, Some(h)).map(|t| (h, t)));

    let (buffers, why) = match (single, pair) {
        (Some(s), Some((h, t))) if h.rank < s.rank => (
            alloc::vec![
                placed("head", h, split.non_persistent_bytes, headroom_bp),
                placed("tail", t, split.persistent_bytes, headroom_bp),
            ],
            format!(
                "the head fits {} (faster than {}, where one arena would go), the tail {}",
                h.name, s.name, t.name
            ),
        ),
        (Some(s), _) => (
            alloc::vec![placed("arena", s, single_bytes, headroom_bp)],
            format!(
                "one arena fits the fastest memory that can hold it, {}",
                s.name
            ),
        ),
        (None, Some((h, t))) => (
            alloc::vec![
                placed("head", h, split.non_persistent_bytes, headroom_bp),
                placed("tail", t, split.persistent_bytes, headroom_bp),
            ],
            format!(
                "no memory holds one arena; the head fits {} and the tail {}",
                h.name, t.name
            ),
        ),
        (None, None) => (
            Vec::new(),
            format!(
                "no memory holds one arena of {} B, nor a head of {} B and a tail of {} B in two",
                grouped(need_single),
                grouped(need_head),
                grouped(need_tail)
            ),
        ),
    };
    let cpp = cpp(&buffers);
    Placement { buffers, why, cpp }
}

/// The declarations and the interpreter for `buffers`.
fn cpp(buffers: &[Placed]) -> String {
    let decl = |var: &str, p: &Placed| {
        format!(
            "alignas(16) static uint8_t {var}[{}] __attribute__((section(\"{}\")));  // {}: {} B + headroom\n",
            p.bytes, p.area.section, p.area.name, p.minimum_bytes
        )
    };
    match buffers {
        [a] => format!(
            "{}tflite::MicroInterpreter interpreter(model, resolver, tensor_arena, sizeof(tensor_arena));\n",
            decl("tensor_arena", a)
        ),
        [h, t] => format!(
            "{}{}tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(\n    tail_arena, sizeof(tail_arena), head_arena, sizeof(head_arena));\ntflite::MicroInterpreter interpreter(model, resolver, allocator);\n",
            decl("head_arena", h),
            decl("tail_arena", t)
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    /// STM32F746-like: DTCM, SRAM1 and SRAM2 adjacent; flash elsewhere.
    fn f7() -> [Memory; 4] {
        [
            Memory::kib("DTCM", 0x2000_0000, 64, MemoryKind::Tcm, 0, false),
            Memory::kib("SRAM1", 0x2001_0000, 240, MemoryKind::Sram, 1, true),
            Memory::kib("SRAM2", 0x2004_C000, 16, MemoryKind::Sram, 1, false),
            Memory::kib("Flash", 0x0800_0000, 1024, MemoryKind::Flash, 2, false),
        ]
    }

    #[test]
    fn adjacent_memories_form_areas_and_flash_is_left_out() {
        let names: Vec<String> = areas(&f7(), 0).into_iter().map(|a| a.name).collect();
        assert_eq!(
            names,
            [
                "DTCM",
                "DTCM+SRAM1",
                "DTCM+SRAM1+SRAM2",
                "SRAM1",
                "SRAM1+SRAM2",
                "SRAM2"
            ]
        );
        let a = areas(&f7(), 10 * K);
        assert_eq!(a[0].reserved_bytes, 0); // DTCM alone does not hold the reserves
        assert_eq!(a[1].free_bytes(), 304 * K - 10 * K);
        assert_eq!(a[1].rank, 1);
    }

    #[test]
    fn a_head_that_fits_tcm_goes_there_and_the_tail_elsewhere() {
        // Head 50 KiB + 20 % = 61,440 B fits DTCM's 65,536; one arena of 60 KiB would not.
        let split = SplitArena {
            non_persistent_bytes: 50 * K,
            persistent_bytes: 8 * K,
        };
        let p = place(&f7(), 60 * K, split, 24 * K, 2000);
        assert_eq!(p.buffers.len(), 2, "{}", p.why);
        assert_eq!(
            (
                p.buffers[0].buffer.as_str(),
                p.buffers[0].area.name.as_str()
            ),
            ("head", "DTCM")
        );
        assert_eq!(p.buffers[0].bytes, 61_440);
        assert_eq!(p.buffers[0].margin_bytes, 65_536 - 61_440);
        // Tail 8 KiB + 20 % = 9,840 B (rounded to 16): the smallest fitting SRAM is SRAM2.
        assert_eq!(
            (p.buffers[1].area.name.as_str(), p.buffers[1].bytes),
            ("SRAM2", 9_840)
        );
        assert!(
            p.cpp
                .contains("static uint8_t head_arena[61440] __attribute__((section(\".dtcm\")))"),
            "{}",
            p.cpp
        );
        assert!(p.cpp.contains("MicroAllocator::Create(\n    tail_arena, sizeof(tail_arena), head_arena, sizeof(head_arena))"), "{}", p.cpp);
    }

    #[test]
    fn a_small_model_takes_one_arena_in_tcm() {
        let split = SplitArena {
            non_persistent_bytes: 10 * K,
            persistent_bytes: 2 * K,
        };
        let p = place(&f7(), 12 * K, split, 24 * K, 2000);
        assert_eq!(p.buffers.len(), 1);
        assert_eq!(
            (
                p.buffers[0].buffer.as_str(),
                p.buffers[0].area.name.as_str()
            ),
            ("arena", "DTCM")
        );
        // 12 KiB · 1.2 = 14,745.6 → 14,746 → rounded up to 16: 14,752.
        assert_eq!(p.buffers[0].bytes, 14_752);
        assert!(p.cpp.contains(
            "MicroInterpreter interpreter(model, resolver, tensor_arena, sizeof(tensor_arena))"
        ));
    }

    #[test]
    fn a_big_arena_spans_adjacent_memories_after_the_reserves() {
        // 250 KiB · 1.2 = 300 KiB: only DTCM+SRAM1+SRAM2 (320 KiB − 16 KiB reserves) holds it;
        // a 240 KiB head would need 288 KiB, so no split helps.
        let split = SplitArena {
            non_persistent_bytes: 240 * K,
            persistent_bytes: 10 * K,
        };
        let p = place(&f7(), 250 * K, split, 16 * K, 2000);
        assert_eq!(p.buffers.len(), 1, "{}", p.why);
        assert_eq!(p.buffers[0].area.name, "DTCM+SRAM1+SRAM2");
        assert_eq!(
            p.buffers[0].margin_bytes,
            (320 - 16 - 300) as i64 * K as i64
        );
        // 240 KiB + 20 % fits DTCM+SRAM1 to the byte (304 − 16 KiB), and the tail then SRAM2.
        let tight = place(&f7(), 300 * K, split, 16 * K, 2000);
        let names: Vec<&str> = tight.buffers.iter().map(|b| b.area.name.as_str()).collect();
        assert_eq!(names, ["DTCM+SRAM1", "SRAM2"], "{}", tight.why);
        assert_eq!(tight.buffers[0].margin_bytes, 0);
        let split = SplitArena {
            non_persistent_bytes: 280 * K,
            persistent_bytes: 10 * K,
        };
        let none = place(&f7(), 300 * K, split, 16 * K, 2000);
        assert!(!none.fits() && none.cpp.is_empty() && none.why.starts_with("no memory"));
    }
}
