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
    /// On-chip RAM the CPU can hold data in, in bytes: the TCM and SRAM
    /// memories listed (from the vendor's reference manual, `source`);
    /// external RAM (PSRAM) is listed but not counted.
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
    /// On-chip flash (or MRAM) in bytes; `None` when the chip boots from
    /// external flash whose size the board decides (RP2040, RP2350, ESP32,
    /// ESP32-S3, STM32N6, Himax WE2: give it to `check --flash`).
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

/// The Alif Ensemble E3's and E7's memories as their RTSS-HP core sees them (the same map on
/// both parts; the sources are in the presets).
const ALIF_HP_MEMORIES: &[Memory] = &[
    Memory::kib("DTCM", 0x2000_0000, 1024, MemoryKind::Tcm, 0, true),
    Memory::kib("SRAM0", 0x0200_0000, 4096, MemoryKind::Sram, 1, false),
    Memory::kib("SRAM1", 0x0800_0000, 2560, MemoryKind::Sram, 1, false),
    Memory::kib("MRAM", 0x8000_0000, 5632, MemoryKind::Flash, 2, false),
];

/// Common boards. An ARMv7E-M core with the DSP extension (M4, M7) runs
/// CMSIS-NN's DSP paths (`cortex-m4-cmsis-nn`; an M33 with DSP the same ones,
/// `cortex-m33-cmsis-nn`); an ARMv6-M core (M0, M0+) the plain C paths
/// (`cortex-m0plus-cmsis-nn`); an ARMv8.1-M core (M55) the MVE paths
/// (`cortex-m55-cmsis-nn`), or, beside an Ethos-U55, TFLM's Ethos-U build
/// (`cortex-m55-ethos-u`; a dual-core part's arena is its HP core's); an
/// Espressif part ESP-NN (`esp32s3-esp-nn`, `esp32-esp-nn`). Each memory
/// list is the reference manual's map as far as `source` confirms it.
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
    McuPreset {
        name: "RP2350",
        flash_bytes: None,
        ram_bytes: 520 * 1024,
        core: "Cortex-M33 ×2 (ARMv8-M Mainline, DSP)",
        backend: "CMSIS-NN (pico-tflmicro)",
        target: Some("cortex-m33-cmsis-nn"),
        unmodelled: None,
        source: "Raspberry Pi RP2350 datasheet, address map (as pico-sdk's addressmap.h gives it): SRAM0-7 512 kB word-striped at 0x20000000, SRAM8 4 kB at 0x20080000 and SRAM9 4 kB at 0x20081000 (pico-sdk's per-core scratch, stacks by default), one contiguous 520 kB; flash is external QSPI XIP at 0x10000000 (4 MB on the Pico 2); the XIP cache used as SRAM and QSPI PSRAM on CS1 (a board option) left out",
        memories: &[
            Memory::kib("SRAM0-7", 0x2000_0000, 512, MemoryKind::Sram, 0, true),
            Memory::kib("SRAM8", 0x2008_0000, 4, MemoryKind::Sram, 0, false),
            Memory::kib("SRAM9", 0x2008_1000, 4, MemoryKind::Sram, 0, false),
            Memory::kib("QSPI flash", 0x1000_0000, 4096, MemoryKind::Flash, 2, false),
        ],
    },
    McuPreset {
        name: "STM32U585",
        flash_bytes: Some(2 * 1024 * 1024),
        ram_bytes: 784 * 1024,
        core: "Cortex-M33 (ARMv8-M Mainline, DSP)",
        backend: "CMSIS-NN (STM32Cube)",
        target: Some("cortex-m33-cmsis-nn"),
        unmodelled: None,
        source: "ST RM0456 memory map (as stm32u585xx.h gives it): SRAM1 192 KB at 0x20000000, SRAM2 64 KB at 0x20030000, SRAM3 512 KB at 0x20040000 (adjacent), SRAM4 16 KB at 0x28000000 (SRD domain), 2 MB flash at 0x08000000; the datasheet's 786 KB counts the 2 KB backup SRAM, left out",
        memories: &[
            Memory::kib("SRAM1", 0x2000_0000, 192, MemoryKind::Sram, 0, true),
            Memory::kib("SRAM2", 0x2003_0000, 64, MemoryKind::Sram, 0, false),
            Memory::kib("SRAM3", 0x2004_0000, 512, MemoryKind::Sram, 0, false),
            Memory::kib("SRAM4", 0x2800_0000, 16, MemoryKind::Sram, 1, false),
            Memory::kib("Flash", 0x0800_0000, 2048, MemoryKind::Flash, 2, false),
        ],
    },
    McuPreset {
        name: "nRF5340",
        flash_bytes: Some(1024 * 1024),
        ram_bytes: 512 * 1024,
        core: "Cortex-M33 application core (ARMv8-M Mainline, DSP)",
        backend: "CMSIS-NN (nRF Connect SDK / Zephyr)",
        target: Some("cortex-m33-cmsis-nn"),
        unmodelled: None,
        source: "Nordic nRF5340 product specification, application core memory map (as Zephyr's nrf5340_cpuapp_qkaa.dtsi gives it): RAM 512 KB at 0x20000000, flash 1 MB at 0x00000000; the network core's 64 KB RAM and 256 KB flash are its own, left out",
        memories: &[
            Memory::kib("RAM", 0x2000_0000, 512, MemoryKind::Sram, 0, true),
            Memory::kib("Flash", 0x0000_0000, 1024, MemoryKind::Flash, 2, false),
        ],
    },
    McuPreset {
        name: "Alif-E3",
        flash_bytes: Some(5632 * 1024),
        ram_bytes: (1024 + 4096 + 2560) * 1024,
        core: "Cortex-M55 HP core (ARMv8.1-M, MVE) + Ethos-U55-256",
        backend: "Ethos-U (Alif Ensemble SDK, Vela-compiled model)",
        target: Some("cortex-m55-ethos-u"),
        unmodelled: None,
        source: "Alif AWPR0003 (RAM regions and linker files, rev B global map) with OpenMV's AE3 board config for the AE302F80F55D5 (the Ensemble E3 datasheet itself not read): the arena is the RTSS-HP core's, whose DTCM (1 MB at 0x20000000; global alias SRAM3 0x50800000, the address the NPU uses) holds data and heap; SRAM0 4 MB at 0x02000000, SRAM1 2.5 MB at 0x08000000, MRAM 5.5 MB at 0x80000000; the HP ITCM, the HE core's TCMs (SRAM4/5) and SRAM6-9 (low-power region, 160 MHz) left out",
        memories: ALIF_HP_MEMORIES,
    },
    McuPreset {
        name: "Alif-E7",
        flash_bytes: Some(5632 * 1024),
        ram_bytes: (1024 + 4096 + 2560) * 1024,
        core: "Cortex-M55 HP core (ARMv8.1-M, MVE) + Ethos-U55-256",
        backend: "Ethos-U (Alif Ensemble SDK, Vela-compiled model)",
        target: Some("cortex-m55-ethos-u"),
        unmodelled: None,
        source: "Alif AWPR0003 (RAM regions and linker files, rev B global map) and the Ensemble pack's AE722F80F55D5 device header: the arena is the RTSS-HP core's, whose DTCM (1 MB at 0x20000000; global alias SRAM3 0x50800000, the address the NPU uses) holds data and heap; SRAM0 4 MB at 0x02000000, SRAM1 2.5 MB at 0x08000000, MRAM 5.5 MB at 0x80000000; the HP ITCM, the HE core's TCMs (SRAM4/5), SRAM6-9 (low-power region, 160 MHz) and the Cortex-A32 cores left out",
        memories: ALIF_HP_MEMORIES,
    },
    McuPreset {
        name: "Himax-WE2",
        flash_bytes: None,
        ram_bytes: (1024 + 1024 + 384) * 1024,
        core: "Cortex-M55 (ARMv8.1-M, MVE) + Ethos-U55-64",
        backend: "Ethos-U (Himax WE2 SDK, Vela-compiled model)",
        target: Some("cortex-m55-ethos-u"),
        unmodelled: None,
        source: "Himax WE2 (HX6538) SDK's epii_device_addr.h, no public reference manual found (secure aliases, as the SDK links): SRAM0 1 MB at 0x34000000 and SRAM1 1 MB at 0x34100000 (adjacent; the SDK copies code into SRAM0 from 0x3401F000 and allocates arenas after it: reserve the code), SRAM2 384 KB at 0x36000000; DTCM 256 KB at 0x30000000 (the SDK's data and stacks) and ITCM 256 KB left out, since whether the NPU reaches the TCMs is not confirmed; flash is external QSPI XIP at 0x3A000000 (16 MB on the Grove Vision AI V2); Ethos-U55-64 as the Vela configs for the part say",
        memories: &[
            Memory::kib("SRAM0", 0x3400_0000, 1024, MemoryKind::Sram, 0, true),
            Memory::kib("SRAM1", 0x3410_0000, 1024, MemoryKind::Sram, 0, false),
            Memory::kib("SRAM2", 0x3600_0000, 384, MemoryKind::Sram, 0, false),
            Memory::kib(
                "QSPI flash",
                0x3A00_0000,
                16384,
                MemoryKind::Flash,
                2,
                false,
            ),
        ],
    },
    McuPreset {
        name: "STM32N657",
        flash_bytes: None,
        ram_bytes: 4224 * 1024,
        core: "Cortex-M55 (ARMv8.1-M, MVE)",
        backend: "CMSIS-NN (STM32Cube)",
        target: Some("cortex-m55-cmsis-nn"),
        unmodelled: None,
        source: "ST RM0486 memory map (secure aliases): FLEXRAM 400 KB at 0x34000000 (as system RAM, when not given to the TCMs), AXISRAM1 624 KB at 0x34064000, AXISRAM2 1 MB at 0x34100000, AXISRAM3-6 448 KB each from 0x34200000 (the NPU's RAMs: enable their clocks), CACHEAXI 256 KB at 0x343C0000 (only with the NPU cache off), VENCRAM 128 KB at 0x34400000 (only without the video encoder): 4.2 MB contiguous; no internal flash (external XSPI2 NOR at 0x70000000, 64 MB on the NUCLEO-N657X0-Q); ITCM/DTCM (sizes not confirmed), AHBSRAM1/2 and backup SRAM left out. The Neural-ART NPU is not modelled: the figures are TFLM's with CMSIS-NN on the M55",
        memories: &[
            Memory::kib("FLEXRAM", 0x3400_0000, 400, MemoryKind::Sram, 0, false),
            Memory::kib("AXISRAM1", 0x3406_4000, 624, MemoryKind::Sram, 0, false),
            Memory::kib("AXISRAM2", 0x3410_0000, 1024, MemoryKind::Sram, 0, true),
            Memory::kib("AXISRAM3", 0x3420_0000, 448, MemoryKind::Sram, 1, false),
            Memory::kib("AXISRAM4", 0x3427_0000, 448, MemoryKind::Sram, 1, false),
            Memory::kib("AXISRAM5", 0x342E_0000, 448, MemoryKind::Sram, 1, false),
            Memory::kib("AXISRAM6", 0x3435_0000, 448, MemoryKind::Sram, 1, false),
            Memory::kib("CACHEAXI", 0x343C_0000, 256, MemoryKind::Sram, 1, false),
            Memory::kib("VENCRAM", 0x3440_0000, 128, MemoryKind::Sram, 1, false),
            Memory::kib(
                "XSPI2 flash",
                0x7000_0000,
                65536,
                MemoryKind::Flash,
                2,
                false,
            ),
        ],
    },
    McuPreset {
        name: "ESP32-S3",
        flash_bytes: None,
        ram_bytes: 480 * 1024,
        core: "Xtensa LX7 ×2",
        backend: "ESP-NN (esp-tflite-micro)",
        target: Some("esp32s3-esp-nn"),
        unmodelled: None,
        source: "Espressif ESP32-S3 technical reference manual, system and memory (as ESP-IDF's soc.h gives it): the data bus reaches SRAM1 416 KB at 0x3FC88000 and SRAM2 64 KB at 0x3FCF0000 (adjacent, 480 KB; SRAM0's 32 KB is instruction-only, left out; ESP-IDF's IRAM code and the ROM's data take part of it at run time: reserve them); PSRAM and flash are external, mapped through the MMU at 0x3D000000 and 0x42000000 (8 MB each on an N8R8 module); the verdict counts on-chip RAM: give --ram to count the PSRAM",
        memories: &[
            Memory::kib("SRAM1", 0x3FC8_8000, 416, MemoryKind::Sram, 0, true),
            Memory::kib("SRAM2", 0x3FCF_0000, 64, MemoryKind::Sram, 0, false),
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
        name: "ESP32",
        flash_bytes: None,
        ram_bytes: 320 * 1024,
        core: "Xtensa LX6 ×2",
        backend: "ESP-NN (esp-tflite-micro)",
        target: Some("esp32-esp-nn"),
        unmodelled: None,
        source: "Espressif ESP32 technical reference manual, address space (as esptool's and ESP-IDF's memory maps give it): of the 520 KB SRAM, SRAM0's 192 KB is instruction-only; the data RAM is SRAM2 (0x3FFAE000-0x3FFDFFFF, whose first 8 KB the ROM keeps, so 192 KB from 0x3FFB0000) and SRAM1 128 KB at 0x3FFE0000, 320 KB contiguous (Bluetooth takes 64 KB more: reserve it); PSRAM and flash are external, mapped at 0x3F800000 (a 4 MB window) and 0x3F400000 (4 MB each on an ESP32-WROVER-E, whose 8 MB PSRAM maps 4 MB); the verdict counts on-chip RAM: give --ram to count the PSRAM",
        memories: &[
            Memory::kib("SRAM2", 0x3FFB_0000, 192, MemoryKind::Sram, 0, true),
            Memory::kib("SRAM1", 0x3FFE_0000, 128, MemoryKind::Sram, 0, false),
            Memory::kib(
                "PSRAM",
                0x3F80_0000,
                4096,
                MemoryKind::ExternalRam,
                2,
                false,
            ),
            Memory::kib("Flash", 0x3F40_0000, 4096, MemoryKind::Flash, 3, false),
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
    /// `true` when the target's figures are derived, never measured against
    /// TFLM (see `Report::target_derived`); absent from the JSON when `false`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "core::ops::Not::not")
    )]
    pub target_derived: bool,
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
            target_derived: report.target_derived,
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
            target_derived: false,
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
            let Some(target) = p.target else {
                assert!(p.unmodelled.is_some(), "{}", p.name);
                let e = p.profile().unwrap_err();
                assert!(e.contains("not modelled") && e.contains(p.core), "{e}");
                continue;
            };
            assert!(p.unmodelled.is_none(), "{}", p.name);
            let prof = p.profile().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(prof.name, target);
            // A CMSIS-NN build takes the paths of the core's extensions: the plain C
            // ones on ARMv6-M, MVE on ARMv8.1-M, the DSP ones on ARMv7E-M and v8-M Mainline.
            if p.backend.starts_with("CMSIS-NN") {
                let cpu = if p.core.contains("ARMv6-M") {
                    CpuClass::NoDsp
                } else if p.core.contains("ARMv8.1-M") {
                    CpuClass::Mve
                } else {
                    CpuClass::Dsp
                };
                assert_eq!(prof.backend, Backend::CmsisNn(cpu), "{}", p.name);
            }
        }
        // Each device chooses the target of its core and its SDK's kernels.
        for (device, target) in [
            ("RP2350", "cortex-m33-cmsis-nn"),
            ("STM32U585", "cortex-m33-cmsis-nn"),
            ("nRF5340", "cortex-m33-cmsis-nn"),
            ("Alif-E3", "cortex-m55-ethos-u"),
            ("Alif-E7", "cortex-m55-ethos-u"),
            ("Himax-WE2", "cortex-m55-ethos-u"),
            ("STM32N657", "cortex-m55-cmsis-nn"),
            ("ESP32-S3", "esp32s3-esp-nn"),
            ("ESP32", "esp32-esp-nn"),
        ] {
            assert_eq!(mcu_preset(device).map(|p| p.target), Ok(Some(target)));
        }
        assert_eq!(mcu_preset(" rp2040 ").map(|p| p.name), Ok("RP2040"));
        assert_eq!(mcu_preset("esp32").map(|p| p.name), Ok("ESP32"));
        assert!(mcu_preset("Arduino").unwrap_err().contains("choose one of"));
    }

    #[test]
    fn preset_memory_maps_add_up_and_do_not_overlap() {
        let mut names = Vec::new();
        for p in MCU_PRESETS {
            assert!(!names.contains(&p.name), "{} twice", p.name);
            names.push(p.name);
            // The RAM figure is the on-chip RAM the memory map lists, one memory holds the reserves.
            let on_chip: u64 = p
                .memories
                .iter()
                .filter(|m| matches!(m.kind, MemoryKind::Tcm | MemoryKind::Sram))
                .map(|m| m.bytes)
                .sum();
            assert_eq!(on_chip, p.ram_bytes, "{}", p.name);
            let main: Vec<&Memory> = p.memories.iter().filter(|m| m.main).collect();
            assert_eq!(main.len(), 1, "{}", p.name);
            assert!(
                matches!(main[0].kind, MemoryKind::Tcm | MemoryKind::Sram),
                "{}",
                p.name
            );
            let flash: Vec<&Memory> = p
                .memories
                .iter()
                .filter(|m| m.kind == MemoryKind::Flash)
                .collect();
            assert_eq!(flash.len(), 1, "{}", p.name);
            // On-chip flash is the flash the map lists; external flash is the board's.
            if let Some(f) = p.flash_bytes {
                assert_eq!(flash[0].bytes, f, "{}", p.name);
            }
            for (i, a) in p.memories.iter().enumerate() {
                for b in &p.memories[i + 1..] {
                    let apart = a.origin + a.bytes <= b.origin || b.origin + b.bytes <= a.origin;
                    assert!(apart, "{}: {} overlaps {}", p.name, a.name, b.name);
                    assert_ne!(a.section(), b.section(), "{}", p.name);
                }
            }
            assert!(!p.source.is_empty(), "{}", p.name);
        }
    }

    #[test]
    fn banked_presets_form_one_area_and_psram_is_listed_apart() {
        use crate::report::placement::areas;
        let whole = |name: &str| {
            let p = mcu_preset(name).unwrap();
            areas(p.memories, 0)
                .into_iter()
                .map(|a| (a.name, a.bytes))
                .max_by_key(|a| a.1)
                .unwrap()
        };
        assert_eq!(whole("RP2350"), ("SRAM0-7+SRAM8+SRAM9".into(), 520 * 1024));
        assert_eq!(whole("STM32U585").1, 768 * 1024);
        assert_eq!(whole("STM32N657").1, 4224 * 1024);
        assert_eq!(whole("ESP32-S3"), ("PSRAM".into(), 8192 * 1024));
        assert_eq!(whole("ESP32").1, 4096 * 1024);
        let s3 = areas(mcu_preset("ESP32-S3").unwrap().memories, 0);
        assert!(
            s3.iter()
                .any(|a| a.name == "SRAM1+SRAM2" && a.bytes == 480 * 1024)
        );
        // The Alif parts: the HP core's DTCM is the fastest memory and holds the reserves.
        for name in ["Alif-E3", "Alif-E7"] {
            let a = areas(mcu_preset(name).unwrap().memories, 1024);
            let dtcm = a.iter().find(|a| a.name == "DTCM").unwrap();
            assert_eq!((dtcm.rank, dtcm.reserved_bytes), (0, 1024), "{name}");
        }
        // WE2: SRAM0 and SRAM1 form one 2 MB run, the TCMs are not offered to the NPU.
        assert_eq!(whole("Himax-WE2"), ("SRAM0+SRAM1".into(), 2048 * 1024));
        assert!(
            mcu_preset("Himax-WE2")
                .unwrap()
                .memories
                .iter()
                .all(|m| m.kind != MemoryKind::Tcm)
        );
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
