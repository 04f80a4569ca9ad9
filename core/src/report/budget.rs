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

/// A microcontroller with its RAM, for presets in the app and the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct McuPreset {
    /// Name.
    pub name: &'static str,
    /// On-chip SRAM in bytes (from the vendors' datasheets).
    pub ram_bytes: u64,
    /// On-chip flash in bytes (datasheets: STM32F746 1 MiB, STM32H743 2 MiB,
    /// nRF52840 1 MiB); `None` when the chip boots from external flash whose
    /// size the board decides (RP2040, ESP32-S3: give it to `check --flash`).
    pub flash_bytes: Option<u64>,
    /// The closest modelled profile (a 32-bit ILP32 build with GCC).
    pub target: &'static str,
}

/// Common boards (SRAM from the vendors' datasheets).
pub const MCU_PRESETS: &[McuPreset] = &[
    McuPreset {
        name: "STM32F746",
        flash_bytes: Some(1024 * 1024),
        ram_bytes: 320 * 1024,
        target: "cortex-m",
    },
    McuPreset {
        name: "RP2040",
        flash_bytes: None,
        ram_bytes: 264 * 1024,
        target: "cortex-m",
    },
    McuPreset {
        name: "nRF52840",
        flash_bytes: Some(1024 * 1024),
        ram_bytes: 256 * 1024,
        target: "cortex-m",
    },
    McuPreset {
        name: "ESP32-S3",
        flash_bytes: None,
        ram_bytes: 512 * 1024,
        target: "cortex-m",
    },
    McuPreset {
        name: "STM32H743",
        flash_bytes: Some(2 * 1024 * 1024),
        ram_bytes: 1024 * 1024,
        target: "cortex-m",
    },
];

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

/// The JSON `microarena check --json` prints: the budget, the verdict and
/// the target they were computed for.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CheckReport {
    /// Target profile.
    pub target: String,
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
    /// The flash verdict, when a flash size was given (`check --flash`);
    /// `fits` then also requires it.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub flash: Option<crate::report::flash::FlashVerdict>,
}

impl CheckReport {
    /// The record of `budget` checked with `verdict` on `target`.
    pub fn new(budget: &Budget, verdict: &Verdict, target: &str) -> CheckReport {
        CheckReport {
            target: target.into(),
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
            flash: None,
        }
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
