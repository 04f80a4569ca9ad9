//! Does the model fit the device? RAM minus reserves (stacks, RTOS, interrupt
//! stack, DMA, log buffers) must hold the arena plus the required headroom.
//!
//! Integer arithmetic only (headroom in basis points), so the CLI, the web
//! app and firmware CI give the same verdict to the byte.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::plan::align16;
use crate::report::placement::{Memory, MemoryKind, Placement};
use crate::report::{BufferClass, Report, grouped};
use crate::tflm::profile::{self, TargetProfile};

/// A named RAM reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reserve {
    /// What it is for (`stack`, `rtos`, `isr`, `dma`, `log`, …).
    pub name: String,
    /// Bytes.
    pub bytes: u64,
}

/// The device budget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Total RAM of the device.
    pub ram_bytes: u64,
    /// Everything else that lives in RAM.
    pub reserves: Vec<Reserve>,
    /// Required headroom on top of the minimum arena, in basis points (2000 = 20 %).
    pub headroom_bp: u32,
}

/// The usual bar: 20 % headroom.
pub const DEFAULT_HEADROOM_BP: u32 = 2000;

/// The verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// RAM left for the arena after the reserves (negative when reserves exceed RAM).
    pub available_bytes: i64,
    /// The minimum working arena the check started from.
    pub minimum_bytes: u64,
    /// The arena to configure in firmware: minimum plus headroom, rounded up to 16.
    pub arena_bytes: u64,
    /// `available_bytes − arena_bytes`.
    pub margin_bytes: i64,
    /// The arena fits with the required headroom.
    pub fits: bool,
}

impl Budget {
    /// Sum of the reserves.
    pub fn reserved_bytes(&self) -> u64 {
        self.reserves.iter().map(|r| r.bytes).sum()
    }

    /// Checks a minimum working arena against the budget.
    pub fn check(&self, minimum_bytes: u64) -> Verdict {
        let available = self.ram_bytes as i128 - self.reserved_bytes() as i128;
        let arena = arena_with_headroom(minimum_bytes, self.headroom_bp);
        let margin = available - arena as i128;
        let clamp = |v: i128| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        Verdict {
            available_bytes: clamp(available),
            minimum_bytes,
            arena_bytes: arena,
            margin_bytes: clamp(margin),
            fits: margin >= 0,
        }
    }
}

/// The arena to configure for a minimum working arena: the minimum plus
/// `headroom_bp` basis points of it (rounded up), rounded up to 16.
pub fn arena_with_headroom(minimum_bytes: u64, headroom_bp: u32) -> u64 {
    let extra = (u128::from(minimum_bytes) * u128::from(headroom_bp)).div_ceil(10_000);
    align16((u128::from(minimum_bytes) + extra).min(u128::from(u64::MAX - 15)) as u64)
}

/// A microcontroller: its RAM, its core and the kernels its vendor's SDK
/// builds TFLM with, so choosing a device chooses the target that models it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McuPreset {
    /// Name.
    pub name: &'static str,
    /// On-chip SRAM in bytes (from the vendor's datasheet, `source`).
    pub ram_bytes: u64,
    /// The CPU core.
    pub core: &'static str,
    /// The TFLM kernels the vendor's SDK builds (`OPTIMIZED_KERNEL_DIR`).
    pub backend: &'static str,
    /// The profile that models that core and backend; `None` when microarena
    /// has none (then `unmodelled` says why).
    pub target: Option<&'static str>,
    /// Why the device has no target.
    pub unmodelled: Option<&'static str>,
    /// On-chip flash in bytes; `None` when the chip boots from external flash
    /// whose size the board decides (RP2040, ESP32-S3: give it to `check --flash`).
    pub flash_bytes: Option<u64>,
    /// Where the RAM figure comes from.
    pub source: &'static str,
    /// Its memories (RAM regions and flash), from the reference manual's memory map.
    pub memories: &'static [Memory],
}

impl McuPreset {
    /// The target profile modelling this device, or why there is none.
    pub fn profile(&self) -> Result<&'static TargetProfile, String> {
        match self.target.and_then(profile::by_name) {
            Some(p) => Ok(p),
            None => Err(format!(
                "{} ({}, {}) is not modelled: {}",
                self.name,
                self.core,
                self.backend,
                self.unmodelled.unwrap_or("no target profile covers it")
            )),
        }
    }
}

/// Common boards. An ARMv7E-M core with the DSP extension (M4, M7) runs
/// CMSIS-NN's DSP paths (`cortex-m4-cmsis-nn`; an M33 with DSP the same ones,
/// `cortex-m33-cmsis-nn`); an ARMv6-M core (M0, M0+) the plain C paths
/// (`cortex-m0plus-cmsis-nn`).
pub const MCU_PRESETS: &[McuPreset] = &[
    McuPreset {
        name: "STM32F746",
        flash_bytes: Some(1024 * 1024),
        ram_bytes: 320 * 1024,
        core: "Cortex-M7 (ARMv7E-M, DSP)",
        backend: "CMSIS-NN (STM32Cube)",
        target: Some("cortex-m4-cmsis-nn"),
        unmodelled: None,
        source: "ST RM0385 memory map: DTCM 64 KB, SRAM1 240 KB, SRAM2 16 KB (adjacent), 1 MB flash; ITCM RAM left out",
        memories: &[
            Memory::kib("DTCM", 0x2000_0000, 64, MemoryKind::Tcm, 0, false),
            Memory::kib("SRAM1", 0x2001_0000, 240, MemoryKind::Sram, 1, true),
            Memory::kib("SRAM2", 0x2004_C000, 16, MemoryKind::Sram, 1, false),
            Memory::kib("Flash", 0x0800_0000, 1024, MemoryKind::Flash, 2, false),
        ],
    },
    McuPreset {
        name: "RP2040",
        flash_bytes: None,
        ram_bytes: 264 * 1024,
        core: "Cortex-M0+ (ARMv6-M)",
        backend: "CMSIS-NN (pico-tflmicro)",
        target: Some("cortex-m0plus-cmsis-nn"),
        unmodelled: None,
        source: "RP2040 datasheet: 264 kB SRAM (SRAM0-5, one range); flash is external QSPI (2 MB on the Raspberry Pi Pico)",
        memories: &[
            Memory::kib("SRAM", 0x2000_0000, 264, MemoryKind::Sram, 0, true),
            Memory::kib("QSPI flash", 0x1000_0000, 2048, MemoryKind::Flash, 2, false),
        ],
    },
    McuPreset {
        name: "nRF52840",
        flash_bytes: Some(1024 * 1024),
        ram_bytes: 256 * 1024,
        core: "Cortex-M4F (ARMv7E-M, DSP)",
        backend: "CMSIS-NN (nRF Connect SDK / Zephyr)",
        target: Some("cortex-m4-cmsis-nn"),
        unmodelled: None,
        source: "Nordic nRF52840 product specification: 256 KB RAM, 1 MB flash",
        memories: &[
            Memory::kib("RAM", 0x2000_0000, 256, MemoryKind::Sram, 0, true),
            Memory::kib("Flash", 0x0000_0000, 1024, MemoryKind::Flash, 2, false),
        ],
    },
    McuPreset {
        name: "ESP32-S3",
        flash_bytes: None,
        ram_bytes: 512 * 1024,
        core: "Xtensa LX7",
        backend: "ESP-NN (esp-tflite-micro)",
        target: None,
        unmodelled: Some(
            "microarena has no Xtensa profile and does not model ESP-NN's scratch buffers; \
             --target cortex-m gives the reference-kernel figures of a 32-bit build as an estimate",
        ),
        source: "ESP32-S3 datasheet: 512 KB SRAM; PSRAM and flash external (8 MB each on an N8R8 module)",
        memories: &[
            Memory::kib("SRAM", 0x3FC8_8000, 512, MemoryKind::Sram, 0, true),
            Memory::kib(
                "PSRAM",
                0x3D00_0000,
                8192,
                MemoryKind::ExternalRam,
                2,
                false,
            ),
            Memory::kib("Flash", 0x4200_0000, 8192, MemoryKind::Flash, 3, false),
        ],
    },
    McuPreset {
        name: "STM32H743",
        flash_bytes: Some(2 * 1024 * 1024),
        ram_bytes: 992 * 1024,
        core: "Cortex-M7 (ARMv7E-M, DSP)",
        backend: "CMSIS-NN (STM32Cube)",
        target: Some("cortex-m4-cmsis-nn"),
        unmodelled: None,
        source: "ST RM0433 memory map: DTCM 128 KB, AXI SRAM 512 KB, SRAM1-3 288 KB, SRAM4 64 KB, 2 MB flash; ITCM and backup SRAM left out",
        memories: &[
            Memory::kib("DTCM", 0x2000_0000, 128, MemoryKind::Tcm, 0, false),
            Memory::kib("AXI SRAM", 0x2400_0000, 512, MemoryKind::Sram, 1, true),
            Memory::kib("SRAM1", 0x3000_0000, 128, MemoryKind::Sram, 2, false),
            Memory::kib("SRAM2", 0x3002_0000, 128, MemoryKind::Sram, 2, false),
            Memory::kib("SRAM3", 0x3004_0000, 32, MemoryKind::Sram, 2, false),
            Memory::kib("SRAM4", 0x3800_0000, 64, MemoryKind::Sram, 2, false),
            Memory::kib("Flash", 0x0800_0000, 2048, MemoryKind::Flash, 3, false),
        ],
    },
];

/// The preset named `name` (case-insensitive).
pub fn mcu_preset(name: &str) -> Result<&'static McuPreset, String> {
    MCU_PRESETS
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name.trim()))
        .ok_or_else(|| {
            let names: Vec<&str> = MCU_PRESETS.iter().map(|p| p.name).collect();
            format!(
                "unknown device '{name}'; choose one of: {}",
                names.join(", ")
            )
        })
}

/// `327680`, `320K`, `320KiB`, `1M`, `1MiB` → bytes (the CLI's and the
/// app's byte fields).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a byte count (e.g. 327680, 320K, 1MiB)"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1024,
        "m" | "mb" | "mib" => 1024 * 1024,
        _ => return Err(format!("'{s}': unknown unit '{unit}' (use K/KiB or M/MiB)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("'{s}' is too large"))
}

/// `20%` or `20` → 2000 basis points, 0 % to 1000 %, to two decimals.
pub fn parse_percent_bp(s: &str) -> Result<u32, String> {
    let t = s.trim().trim_end_matches('%');
    let v: f64 = t
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 20%)"))?;
    if !(0.0..=1000.0).contains(&v) {
        return Err(format!("'{s}': must be between 0% and 1000%"));
    }
    // v is in 0..=1000, so adding a half and truncating rounds (no_std has no `round`).
    Ok((v * 100.0 + 0.5) as u32)
}

/// The JSON `microarena check --json` prints: the budget, the verdict, the
/// target they were computed for and what fills the arena at its peak.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CheckReport {
    /// Target profile.
    pub target: String,
    /// The device preset the RAM and target came from, if one was named.
    #[cfg_attr(feature = "serde", serde(default))]
    pub device: Option<String>,
    /// The arena fits with the required headroom.
    pub fits: bool,
    /// Device RAM.
    pub ram_bytes: u64,
    /// Each reserve by name (a name given twice keeps the last size).
    pub reserves: BTreeMap<String, u64>,
    /// Sum of the reserves as given.
    pub reserved_bytes: u64,
    /// RAM left for the arena.
    pub available_bytes: i64,
    /// Required headroom in percent.
    pub headroom_percent: f64,
    /// The minimum working arena.
    pub minimum_bytes: u64,
    /// The arena to configure.
    pub arena_bytes: u64,
    /// `available_bytes − arena_bytes`.
    pub margin_bytes: i64,
    /// The head buffers live at the head's peak, largest first (tensors and
    /// kernel scratch, each named by its owning op).
    #[cfg_attr(feature = "serde", serde(default))]
    pub peak: Vec<PeakBuffer>,
    /// On a CMSIS-NN target: the same budget with TFLM's reference kernels,
    /// so a failure caused by the backend's scratch and OpData shows as such.
    #[cfg_attr(feature = "serde", serde(default))]
    pub reference: Option<ReferenceCheck>,
    /// With a device preset: where the arena goes among its memories (one
    /// arena, or head and tail apart), each keeping the headroom, and the C++.
    #[cfg_attr(feature = "serde", serde(default))]
    pub placement: Option<Placement>,
    /// The flash verdict, when a flash size was given (`check --flash`);
    /// `fits` then also requires it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub flash: Option<crate::report::flash::FlashVerdict>,
    /// With `check --measured/--elf`: which figure came from the device, the
    /// linker script, the model or the command line, the regions that outgrew
    /// their reservation, and the firmware's own verdict.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub measured: Option<crate::report::measured::MeasuredCheck>,
}

/// One head buffer live at the peak.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PeakBuffer {
    /// Tensor name, or `scratch <n> of <OPCODE> <op>: <purpose>`.
    pub name: String,
    /// `tensor` or `scratch`.
    pub kind: BufferClass,
    /// The op requesting the scratch, or producing the tensor.
    pub op: Option<usize>,
    /// Bytes it occupies in the head (rounded up to 16).
    pub bytes: u64,
}

/// The budget checked on the reference-kernel target.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ReferenceCheck {
    /// The reference-kernel target (`cortex-m`).
    pub target: String,
    /// Its minimum working arena.
    pub minimum_bytes: u64,
    /// Its arena with the headroom.
    pub arena_bytes: u64,
    /// It fits the same budget.
    pub fits: bool,
}

/// The head buffers live at `report`'s peak scope, largest first.
pub fn peak_buffers(report: &Report) -> Vec<PeakBuffer> {
    let at = report.arena.peak_scope;
    let mut live: Vec<PeakBuffer> = report
        .buffers
        .iter()
        .filter(|b| b.first <= at && at <= b.last)
        .map(|b| PeakBuffer {
            name: b.name.clone(),
            kind: b.kind,
            op: b.op,
            bytes: b.aligned_bytes,
        })
        .collect();
    live.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
    live
}

/// Most peak buffers a summary names; the rest are counted.
pub const PEAK_SHOWN: usize = 4;

/// What fills the head at its peak, in the words the CLI and the app both
/// print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeakSummary {
    /// Bytes of every buffer live at the peak.
    pub total_bytes: u64,
    /// Of which kernel scratch requested in Prepare.
    pub scratch_bytes: u64,
    /// The largest [`PEAK_SHOWN`] buffers, `8,800 B name`, then `N more`,
    /// joined by `; `.
    pub named: String,
}

/// The summary of `peak` (largest first, as [`peak_buffers`] returns it);
/// `None` when nothing is live.
pub fn peak_summary(peak: &[PeakBuffer]) -> Option<PeakSummary> {
    if peak.is_empty() {
        return None;
    }
    let mut named: Vec<String> = peak
        .iter()
        .take(PEAK_SHOWN)
        .map(|p| format!("{} B {}", grouped(p.bytes), p.name))
        .collect();
    if peak.len() > PEAK_SHOWN {
        named.push(format!("{} more", peak.len() - PEAK_SHOWN));
    }
    Some(PeakSummary {
        total_bytes: peak.iter().map(|p| p.bytes).sum(),
        scratch_bytes: peak
            .iter()
            .filter(|b| b.kind == BufferClass::Scratch)
            .map(|b| b.bytes)
            .sum(),
        named: named.join("; "),
    })
}

impl CheckReport {
    /// The record of `budget` checked with `verdict` for `report` (its
    /// target and peak); `device` names the preset used, `reference` the
    /// reference-kernel figures on a CMSIS-NN target.
    pub fn new(
        budget: &Budget,
        verdict: &Verdict,
        report: &Report,
        device: Option<&str>,
        reference: Option<ReferenceCheck>,
    ) -> CheckReport {
        CheckReport {
            target: report.target.clone(),
            device: device.map(String::from),
            peak: peak_buffers(report),
            reference,
            ..CheckReport::new_budget(budget, verdict)
        }
    }

    /// The budget and verdict fields; the callers name the target.
    fn new_budget(budget: &Budget, verdict: &Verdict) -> CheckReport {
        CheckReport {
            target: String::new(),
            device: None,
            fits: verdict.fits,
            ram_bytes: budget.ram_bytes,
            reserves: budget
                .reserves
                .iter()
                .map(|r| (r.name.clone(), r.bytes))
                .collect(),
            reserved_bytes: budget.reserved_bytes(),
            available_bytes: verdict.available_bytes,
            headroom_percent: f64::from(budget.headroom_bp) / 100.0,
            minimum_bytes: verdict.minimum_bytes,
            arena_bytes: verdict.arena_bytes,
            margin_bytes: verdict.margin_bytes,
            peak: Vec::new(),
            reference: None,
            placement: None,
            flash: None,
            measured: None,
        }
    }

    /// The record of a check without a model (`check --measured/--elf`
    /// alone): the minimum arena is the device's, so there is no target and
    /// no peak to name; `target` says where the figures came from.
    pub fn without_model(budget: &Budget, verdict: &Verdict, target: &str) -> CheckReport {
        CheckReport {
            target: target.into(),
            ..CheckReport::new_budget(budget, verdict)
        }
    }

    /// What fills the head at its peak.
    pub fn peak_summary(&self) -> Option<PeakSummary> {
        peak_summary(&self.peak)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn budget(ram: u64, reserved: u64, bp: u32) -> Budget {
        Budget {
            ram_bytes: ram,
            reserves: vec![Reserve {
                name: "stack".into(),
                bytes: reserved,
            }],
            headroom_bp: bp,
        }
    }

    #[test]
    fn presets_name_the_profile_of_their_core_and_backend() {
        use crate::tflm::profile::{Backend, CpuClass};
        for p in MCU_PRESETS {
            match p.profile() {
                Ok(prof) => {
                    // ARMv6-M has no DSP extension, so CMSIS-NN takes its plain C paths there.
                    let cpu = if p.core.contains("ARMv6-M") {
                        CpuClass::NoDsp
                    } else {
                        CpuClass::Dsp
                    };
                    assert_eq!(prof.backend, Backend::CmsisNn(cpu), "{}", p.name);
                    assert!(p.unmodelled.is_none(), "{}", p.name);
                }
                Err(e) => {
                    assert!(p.target.is_none() && p.unmodelled.is_some(), "{}", p.name);
                    assert!(e.contains("not modelled") && e.contains(p.core), "{e}");
                }
            }
        }
        assert_eq!(mcu_preset(" rp2040 ").map(|p| p.name), Ok("RP2040"));
        for p in MCU_PRESETS {
            // The RAM figure is the on-chip RAM the memory map lists, one memory holds the reserves.
            let on_chip: u64 = p
                .memories
                .iter()
                .filter(|m| matches!(m.kind, MemoryKind::Tcm | MemoryKind::Sram))
                .map(|m| m.bytes)
                .sum();
            assert_eq!(on_chip, p.ram_bytes, "{}", p.name);
            assert_eq!(
                p.memories.iter().filter(|m| m.main).count(),
                1,
                "{}",
                p.name
            );
            assert!(
                p.memories.iter().any(|m| m.kind == MemoryKind::Flash),
                "{}",
                p.name
            );
        }
        assert!(mcu_preset("ESP32").unwrap_err().contains("choose one of"));
    }

    #[test]
    fn peak_summary_names_the_largest_and_counts_the_rest() {
        assert_eq!(peak_summary(&[]), None);
        let buf = |name: &str, kind, bytes| PeakBuffer {
            name: name.into(),
            kind,
            op: None,
            bytes,
        };
        let peak = vec![
            buf("a", BufferClass::Tensor, 90_112),
            buf(
                "scratch 0 of CONV_2D 1: im2col (CMSIS-NN)",
                BufferClass::Scratch,
                8_800,
            ),
            buf("b", BufferClass::Tensor, 1_024),
            buf("c", BufferClass::Tensor, 32),
            buf("d", BufferClass::Scratch, 16),
            buf("e", BufferClass::Tensor, 16),
        ];
        let s = peak_summary(&peak).unwrap();
        assert_eq!(s.total_bytes, 90_112 + 8_800 + 1_024 + 32 + 16 + 16);
        assert_eq!(s.scratch_bytes, 8_816);
        assert_eq!(
            s.named,
            "90,112 B a; 8,800 B scratch 0 of CONV_2D 1: im2col (CMSIS-NN); 1,024 B b; 32 B c; 2 more"
        );
    }

    #[test]
    fn headroom_is_added_and_rounded() {
        // 85264 × 1.2 = 102316.8 → 102317 → rounded up to 16: 102320.
        let v = budget(320 * 1024, 16 * 1024, 2000).check(85264);
        assert_eq!(v.arena_bytes, 102_320);
        assert_eq!(v.available_bytes, 327_680 - 16_384);
        assert_eq!(v.margin_bytes, 311_296 - 102_320);
        assert!(v.fits);
    }

    #[test]
    fn exact_fit_passes_and_one_byte_less_fails() {
        // 1000 B minimum, 0 % headroom → 1008 B arena.
        assert!(budget(2008, 1000, 0).check(1000).fits);
        let v = budget(2007, 1000, 0).check(1000);
        assert!(!v.fits);
        assert_eq!(v.margin_bytes, -1);
    }

    #[test]
    fn reserves_larger_than_ram_are_negative_not_a_wrap() {
        let v = budget(1000, 5000, 2000).check(16);
        assert_eq!(v.available_bytes, -4000);
        assert!(!v.fits);
    }
}
