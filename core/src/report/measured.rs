//! Figures the device measured, for `check --measured` / `--elf`: the one
//! report line the firmware prints over semihosting (format below), and the
//! budget built from it so the verdict uses what the device showed rather
//! than typed-in guesses.
//!
//! The line (one line, space-separated `key=value` tokens, after a prefix):
//!
//! ```text
//! MICROARENA-REPORT v=1 model=NAME ram_bytes=R reserve.static=S
//!   reserve.stack=X high_water.stack=Y reserve.isr=X high_water.isr=Y
//!   reserve.dma=D reserve.log=L arena_bytes=A arena_used_bytes=U noinit_bytes=N
//!   gap_bytes=G invokes=10 arena_stable=1 outputs_stable=1|- ticks=T
//!   headroom_bp=2000 minimum_bytes=M arena_with_headroom_bytes=H
//!   available_bytes=F margin_bytes=G fits=1|0
//! ```
//!
//! `reserve.NAME` is a region the linker script reserves (static data is
//! `.data` + `.bss` + `.uninit`, everything below the `.noinit` arena);
//! `high_water.NAME` is what the firmware measured of it (painted stacks).
//! The last six keys are the device's own verdict, in the terms of
//! [`Budget::check`]: the firmware computes it with the same integer rules so
//! that `check --measured` can confirm it. Unknown keys are ignored (newer
//! firmware may say more); a missing required key is an error.
//!
//! The firmware writes the line with `firmware/src/report_line.rs` (no heap,
//! so it cannot use this crate); this module's tests run that very writer.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use crate::report::budget::{Budget, Reserve, Verdict, arena_with_headroom};

/// The prefix of the report line.
pub const PREFIX: &str = "MICROARENA-REPORT";
/// The format version this crate reads and the firmware writes.
pub const FORMAT_VERSION: u32 = 1;

/// Where a figure the verdict used came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Source {
    /// Measured on the device while it ran (stack high-water, arena high-water).
    Measured,
    /// Read from the firmware's linker script (its ELF symbols and sections, or
    /// the figures the firmware read from those symbols and reported).
    Linked,
    /// Predicted by microarena's analysis of the model for the target.
    Predicted,
    /// Typed in (`--ram`, `--reserve`) or taken from a device preset.
    Assumed,
}

impl Source {
    /// The word the CLI prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Linked => "linked",
            Source::Predicted => "predicted",
            Source::Assumed => "assumed",
        }
    }
}

/// A RAM region the firmware reserves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Region {
    /// `static`, `stack`, `isr`, `dma`, `log`, …
    pub name: String,
    /// Bytes the linker script reserves for it.
    pub reserved_bytes: u64,
    /// Bytes of it the device was seen to use (painted stacks), when measured.
    pub high_water_bytes: Option<u64>,
}

impl Region {
    /// What the budget counts: the reservation, or what was used when that
    /// was more (a stack that outgrew its reservation took RAM from elsewhere).
    pub fn counted_bytes(&self) -> u64 {
        self.reserved_bytes.max(self.high_water_bytes.unwrap_or(0))
    }
}

/// The device's own verdict, as the report line states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceVerdict {
    /// Headroom in basis points.
    pub headroom_bp: u32,
    /// The minimum arena it started from (its arena high-water).
    pub minimum_bytes: u64,
    /// Minimum plus headroom, rounded up to 16.
    pub arena_bytes: u64,
    /// RAM minus every counted region.
    pub available_bytes: i64,
    /// `available_bytes − arena_bytes`.
    pub margin_bytes: i64,
    /// Fits, and no region outgrew its reservation.
    pub fits: bool,
}

/// What the inference loop showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Procedure {
    /// Inferences run.
    pub invokes: u32,
    /// The arena high-water was identical after every one.
    pub arena_stable: bool,
    /// The outputs were identical every time (`None`: the model keeps state
    /// across invokes, so they are not expected to be).
    pub outputs_stable: Option<bool>,
    /// Free bytes between the end of static data (the arena and the reserved
    /// DMA and log regions included) and the main stack's limit, at run time.
    pub gap_bytes: i64,
    /// Bytes of the `.noinit` arena, which the start-up code does not zero.
    pub noinit_bytes: u64,
    /// Timer interrupts taken during the inferences.
    pub ticks: u64,
}

/// Figures from the device: a report line, a firmware ELF, or both merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Measured {
    /// The model the firmware ran.
    pub model: Option<String>,
    /// The RAM region's size.
    pub ram_bytes: Option<u64>,
    /// Reserved regions, in the order given.
    pub regions: Vec<Region>,
    /// The arena's size in `.noinit` (what the firmware was built with).
    pub arena_bytes: Option<u64>,
    /// The arena's high-water after the inferences.
    pub arena_used_bytes: Option<u64>,
    /// The inference loop's findings (report line only).
    pub procedure: Option<Procedure>,
    /// The verdict the firmware printed (report line only).
    pub device_verdict: Option<DeviceVerdict>,
}

/// Why a report line could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeasuredError {
    /// No line starts with [`PREFIX`].
    NoReportLine,
    /// The line is of another format version.
    Version(String),
    /// A token is not `key=value`.
    Malformed(String),
    /// A required key is absent.
    Missing(&'static str),
    /// A value is not what its key needs.
    Value {
        /// The key.
        key: String,
        /// Its value.
        value: String,
    },
    /// A `high_water.NAME` without its `reserve.NAME`.
    HighWaterWithoutReserve(String),
}

impl fmt::Display for MeasuredError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeasuredError::NoReportLine => write!(
                f,
                "no '{PREFIX}' line found; give the firmware's semihosting output (QEMU's stdout) or the line itself"
            ),
            MeasuredError::Version(v) => write!(
                f,
                "report format v={v}; this microarena reads v={FORMAT_VERSION} (rebuild the firmware or update microarena)"
            ),
            MeasuredError::Malformed(t) => {
                write!(f, "'{t}' in the report line is not KEY=VALUE")
            }
            MeasuredError::Missing(k) => write!(f, "the report line has no '{k}='"),
            MeasuredError::Value { key, value } => {
                write!(f, "'{key}={value}' in the report line: not a valid value")
            }
            MeasuredError::HighWaterWithoutReserve(n) => write!(
                f,
                "the report line has 'high_water.{n}' but no 'reserve.{n}' (each measured region needs its reservation)"
            ),
        }
    }
}

impl core::error::Error for MeasuredError {}

/// The key=value tokens of the last report line in `text` (QEMU's whole
/// stdout, or the line alone).
fn tokens(text: &str) -> Result<BTreeMap<&str, &str>, MeasuredError> {
    let line = text
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(PREFIX))
        .ok_or(MeasuredError::NoReportLine)?;
    let mut map = BTreeMap::new();
    for t in line.split_ascii_whitespace() {
        let (k, v) = t
            .split_once('=')
            .ok_or_else(|| MeasuredError::Malformed(t.to_string()))?;
        map.insert(k, v);
    }
    Ok(map)
}

fn number<T: core::str::FromStr>(key: &str, value: &str) -> Result<T, MeasuredError> {
    value.parse().map_err(|_| MeasuredError::Value {
        key: key.to_string(),
        value: value.to_string(),
    })
}

fn flag(key: &str, value: &str) -> Result<bool, MeasuredError> {
    match value {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(MeasuredError::Value {
            key: key.to_string(),
            value: value.to_string(),
        }),
    }
}

impl Measured {
    /// Reads the last report line in `text`.
    pub fn parse(text: &str) -> Result<Measured, MeasuredError> {
        let map = tokens(text)?;
        let get = |k: &'static str| map.get(k).copied().ok_or(MeasuredError::Missing(k));
        let version = get("v")?;
        if version != "1" {
            return Err(MeasuredError::Version(version.to_string()));
        }
        let mut regions: Vec<Region> = Vec::new();
        for (k, v) in &map {
            if let Some(name) = k.strip_prefix("reserve.") {
                regions.push(Region {
                    name: name.to_string(),
                    reserved_bytes: number(k, v)?,
                    high_water_bytes: None,
                });
            }
        }
        for (k, v) in &map {
            if let Some(name) = k.strip_prefix("high_water.") {
                let r = regions
                    .iter_mut()
                    .find(|r| r.name == name)
                    .ok_or_else(|| MeasuredError::HighWaterWithoutReserve(name.to_string()))?;
                r.high_water_bytes = Some(number(k, v)?);
            }
        }
        // The firmware's order (static, stacks, then buffers) reads best; BTreeMap sorted them.
        regions.sort_by_key(|r| region_rank(&r.name));
        let outputs = get("outputs_stable")?;
        let procedure = Procedure {
            invokes: number("invokes", get("invokes")?)?,
            arena_stable: flag("arena_stable", get("arena_stable")?)?,
            outputs_stable: match outputs {
                "-" => None,
                v => Some(flag("outputs_stable", v)?),
            },
            gap_bytes: number("gap_bytes", get("gap_bytes")?)?,
            noinit_bytes: number("noinit_bytes", get("noinit_bytes")?)?,
            ticks: number("ticks", get("ticks")?)?,
        };
        let device_verdict = DeviceVerdict {
            headroom_bp: number("headroom_bp", get("headroom_bp")?)?,
            minimum_bytes: number("minimum_bytes", get("minimum_bytes")?)?,
            arena_bytes: number(
                "arena_with_headroom_bytes",
                get("arena_with_headroom_bytes")?,
            )?,
            available_bytes: number("available_bytes", get("available_bytes")?)?,
            margin_bytes: number("margin_bytes", get("margin_bytes")?)?,
            fits: flag("fits", get("fits")?)?,
        };
        Ok(Measured {
            model: map.get("model").map(|m| m.to_string()),
            ram_bytes: Some(number("ram_bytes", get("ram_bytes")?)?),
            regions,
            arena_bytes: Some(number("arena_bytes", get("arena_bytes")?)?),
            arena_used_bytes: Some(number("arena_used_bytes", get("arena_used_bytes")?)?),
            procedure: Some(procedure),
            device_verdict: Some(device_verdict),
        })
    }

    /// `self` (from an ELF) completed by `run` (from the report line): the
    /// run's figures win where both have one, since they include what was
    /// measured.
    pub fn merged_with(self, run: Measured) -> Measured {
        let mut regions = self.regions;
        for r in run.regions {
            match regions.iter_mut().find(|x| x.name == r.name) {
                Some(x) => *x = r,
                None => regions.push(r),
            }
        }
        regions.sort_by_key(|r| region_rank(&r.name));
        Measured {
            model: run.model.or(self.model),
            ram_bytes: run.ram_bytes.or(self.ram_bytes),
            regions,
            arena_bytes: run.arena_bytes.or(self.arena_bytes),
            arena_used_bytes: run.arena_used_bytes.or(self.arena_used_bytes),
            procedure: run.procedure.or(self.procedure),
            device_verdict: run.device_verdict.or(self.device_verdict),
        }
    }

    /// Where `self` (from an ELF) and `run` (a report line) disagree on a
    /// figure both have (RAM, a reservation, the arena's size): then the
    /// report came from another build than the ELF. Empty when they agree.
    pub fn disagreements(&self, run: &Measured) -> Vec<String> {
        let mut out = Vec::new();
        let mut differ = |what: &str, a: Option<u64>, b: Option<u64>| {
            if let (Some(a), Some(b)) = (a, b)
                && a != b
            {
                out.push(format!("{what}: ELF {a} B, report {b} B"));
            }
        };
        differ("RAM", self.ram_bytes, run.ram_bytes);
        differ("arena", self.arena_bytes, run.arena_bytes);
        for r in &self.regions {
            let other = run.regions.iter().find(|x| x.name == r.name);
            differ(
                &format!("{} reservation", r.name),
                Some(r.reserved_bytes),
                other.map(|x| x.reserved_bytes),
            );
        }
        out
    }

    /// What `check --elf/--measured` and the app's budget panel go by: the ELF's figures
    /// (`linked`) completed by the report line's (`run`), either alone, or `None`; an error
    /// naming the figures when the two come from different builds.
    pub fn combine(
        linked: Option<Measured>,
        run: Option<Measured>,
    ) -> Result<Option<Measured>, String> {
        Ok(match (linked, run) {
            (Some(l), Some(r)) => {
                let differ = l.disagreements(&r);
                if !differ.is_empty() {
                    return Err(format!(
                        "the report is not from this ELF's build ({}); give the pair from one build",
                        differ.join("; ")
                    ));
                }
                Some(l.merged_with(r))
            }
            (l, r) => l.or(r),
        })
    }

    /// The minimum arena these figures give without a model: the arena's
    /// high-water when measured, else the arena the firmware was linked with.
    pub fn minimum(&self) -> Option<(u64, Source)> {
        match (self.arena_used_bytes, self.arena_bytes) {
            (Some(u), _) => Some((u, Source::Measured)),
            (None, Some(a)) => Some((a, Source::Linked)),
            (None, None) => None,
        }
    }

    /// The regions that outgrew their reservation.
    pub fn overflows(&self) -> Vec<Overflow> {
        self.regions
            .iter()
            .filter_map(|r| match r.high_water_bytes {
                Some(hw) if hw > r.reserved_bytes => Some(Overflow {
                    name: r.name.clone(),
                    high_water_bytes: hw,
                    reserved_bytes: r.reserved_bytes,
                }),
                _ => None,
            })
            .collect()
    }
}

/// Static data first, then stacks, then buffers, then anything else by name.
fn region_rank(name: &str) -> (u8, String) {
    let rank = match name {
        "static" => 0,
        "stack" => 1,
        "isr" => 2,
        "dma" => 3,
        "log" => 4,
        _ => 5,
    };
    (rank, name.to_string())
}

/// A region whose measured use exceeds its reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Overflow {
    /// The region.
    pub name: String,
    /// What the device used.
    pub high_water_bytes: u64,
    /// What the linker script reserved.
    pub reserved_bytes: u64,
}

/// One figure the verdict used and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Figure {
    /// `ram`, `minimum`, or a reserve's name.
    pub name: String,
    /// The bytes the verdict counted.
    pub bytes: u64,
    /// Where they came from.
    pub source: Source,
    /// For a region the device measured: its reservation (the counted bytes
    /// are the larger of this and the high-water).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub reserved_bytes: Option<u64>,
    /// For a region the device measured: its high-water.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub high_water_bytes: Option<u64>,
}

/// What `check --measured/--elf` adds to the check's record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MeasuredCheck {
    /// Every figure of the verdict: RAM, each reserve, the minimum arena.
    pub figures: Vec<Figure>,
    /// Regions that outgrew their reservation (each fails the verdict).
    pub overflows: Vec<Overflow>,
    /// The inference loop's findings, from a report line.
    pub procedure: Option<Procedure>,
    /// The firmware's own verdict, from a report line.
    pub device_verdict: Option<DeviceVerdict>,
    /// The firmware's verdict equals this one figure for figure (`None`
    /// without a report line, or when the check used other figures: a model,
    /// `--ram`, typed reserves or another headroom).
    pub device_agrees: Option<bool>,
}

/// The RAM figure the verdict starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ram {
    /// `--ram` (wins over everything).
    Typed(u64),
    /// A device preset's, used when the firmware gave none.
    Preset(u64),
    /// None given.
    None,
}

/// Why no budget can be made from the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MeasuredBudgetError {
    /// Neither the firmware nor the command line gave a RAM size.
    NoRam,
}

impl fmt::Display for MeasuredBudgetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeasuredBudgetError::NoRam => write!(
                f,
                "no RAM size: the firmware figures have none; give --ram or --device"
            ),
        }
    }
}

impl core::error::Error for MeasuredBudgetError {}

/// The budget from `m`'s RAM and regions: typed reserves are added (a typed
/// name replaces a measured one of that name: the user said so), `ram`
/// overrides or completes the RAM. Returns the budget and the figures with
/// their sources (the minimum is added by [`check`]).
pub fn budget(
    m: &Measured,
    ram: Ram,
    typed: &[Reserve],
    headroom_bp: u32,
    regions_source: Source,
) -> Result<(Budget, Vec<Figure>), MeasuredBudgetError> {
    let (ram_bytes, ram_source) = match (ram, m.ram_bytes) {
        (Ram::Typed(r), _) => (r, Source::Assumed),
        (_, Some(r)) => (r, Source::Linked),
        (Ram::Preset(r), None) => (r, Source::Assumed),
        (Ram::None, None) => return Err(MeasuredBudgetError::NoRam),
    };
    let mut figures = alloc::vec![Figure {
        name: "ram".into(),
        bytes: ram_bytes,
        source: ram_source,
        reserved_bytes: None,
        high_water_bytes: None,
    }];
    let mut reserves = Vec::new();
    for r in &m.regions {
        if typed.iter().any(|t| t.name == r.name) {
            continue;
        }
        // The reservation is what the budget counts, unless the device used more.
        let (source, reserved) = match r.high_water_bytes {
            Some(hw) if hw > r.reserved_bytes => (Source::Measured, Some(r.reserved_bytes)),
            Some(_) => (regions_source, Some(r.reserved_bytes)),
            None => (regions_source, None),
        };
        figures.push(Figure {
            name: r.name.clone(),
            bytes: r.counted_bytes(),
            source,
            reserved_bytes: reserved,
            high_water_bytes: r.high_water_bytes,
        });
        reserves.push(Reserve {
            name: r.name.clone(),
            bytes: r.counted_bytes(),
        });
    }
    for t in typed {
        figures.push(Figure {
            name: t.name.clone(),
            bytes: t.bytes,
            source: Source::Assumed,
            reserved_bytes: None,
            high_water_bytes: None,
        });
        reserves.push(t.clone());
    }
    Ok((
        Budget {
            ram_bytes,
            reserves,
            headroom_bp,
        },
        figures,
    ))
}

/// The verdict on `budget` (from [`budget`]) for `minimum`, with overflowing
/// regions failing it, and the record saying which figure came from where
/// and whether the firmware's own verdict agrees.
pub fn check(
    m: &Measured,
    budget: &Budget,
    mut figures: Vec<Figure>,
    minimum: (u64, Source),
) -> (Verdict, MeasuredCheck) {
    let mut verdict = budget.check(minimum.0);
    let overflows: Vec<Overflow> = m
        .overflows()
        .into_iter()
        .filter(|o| budget.reserves.iter().any(|r| r.name == o.name))
        .collect();
    verdict.fits &= overflows.is_empty();
    figures.push(Figure {
        name: "minimum".into(),
        bytes: minimum.0,
        source: minimum.1,
        reserved_bytes: None,
        high_water_bytes: None,
    });
    // Comparable only when this check used exactly the firmware's inputs.
    let same_inputs = figures
        .iter()
        .all(|f| matches!(f.source, Source::Measured | Source::Linked))
        && minimum.1 == Source::Measured;
    let device_agrees = m
        .device_verdict
        .filter(|d| same_inputs && d.headroom_bp == budget.headroom_bp)
        .map(|d| d == device_verdict_of(budget.headroom_bp, &verdict));
    (
        verdict,
        MeasuredCheck {
            figures,
            overflows,
            procedure: m.procedure,
            device_verdict: m.device_verdict,
            device_agrees,
        },
    )
}

fn device_verdict_of(headroom_bp: u32, v: &Verdict) -> DeviceVerdict {
    DeviceVerdict {
        headroom_bp,
        minimum_bytes: v.minimum_bytes,
        arena_bytes: v.arena_bytes,
        available_bytes: v.available_bytes,
        margin_bytes: v.margin_bytes,
        fits: v.fits,
    }
}

/// What to change when a measured budget fails, largest lever first: each
/// overflowing region's reservation, the reserves that cost most, and the
/// arena (with `plan`'s measured ways to need fewer bytes).
pub fn advice(budget: &Budget, verdict: &Verdict, checked: &MeasuredCheck) -> Vec<String> {
    let mut out = Vec::new();
    for o in &checked.overflows {
        out.push(format!(
            "raise the linker script's {} reservation from {} B to at least {} B (its measured high-water), or use less of it",
            o.name, o.reserved_bytes, o.high_water_bytes
        ));
    }
    if verdict.margin_bytes < 0 {
        let short = verdict.margin_bytes.unsigned_abs();
        let mut big: Vec<&Reserve> = budget.reserves.iter().collect();
        big.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.name.cmp(&b.name)));
        if let Some(r) = big.first() {
            out.push(format!(
                "free {short} B: the largest reserve is {} at {} B (measured high-waters show what a stack really needs; trim reservations to them plus a margin)",
                r.name, r.bytes
            ));
        }
        let without_headroom = budget.check(0).available_bytes - verdict.minimum_bytes as i64;
        if without_headroom >= 0 {
            out.push(format!(
                "the bare minimum arena fits with {without_headroom} B to spare, but not the headroom: a smaller arena (see `microarena plan`'s ways to need fewer bytes) or a part with more RAM restores it"
            ));
        } else {
            out.push(format!(
                "even the bare minimum arena is short by {} B: shrink the model (see `microarena plan`'s ways to need fewer bytes), move the RTOS or buffers out, or choose a part with more RAM",
                without_headroom.unsigned_abs()
            ));
        }
    }
    out
}

/// The device verdict the firmware computes, with the same rules as
/// [`Budget::check`] and the overflow rule of [`check`]: exposed so a test can
/// hold the firmware's arithmetic (which restates it without a heap) to it.
pub fn expected_device_verdict(m: &Measured, headroom_bp: u32) -> Option<DeviceVerdict> {
    let ram = m.ram_bytes?;
    let minimum = m.arena_used_bytes?;
    let reserved: u64 = m.regions.iter().map(Region::counted_bytes).sum();
    let available = ram as i64 - reserved as i64;
    let arena = arena_with_headroom(minimum, headroom_bp);
    let margin = available - arena as i64;
    Some(DeviceVerdict {
        headroom_bp,
        minimum_bytes: minimum,
        arena_bytes: arena,
        available_bytes: available,
        margin_bytes: margin,
        fits: margin >= 0 && m.overflows().is_empty(),
    })
}

/// The firmware's writer, compiled here as it is on the device (a path
/// relative to this file's directory: `firmware/src/report_line.rs`).
#[cfg(test)]
#[allow(dead_code, clippy::indexing_slicing)]
#[path = "../../../firmware/src/report_line.rs"]
mod firmware_line;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

    use super::*;

    use super::firmware_line;

    struct Buf(String);
    impl firmware_line::Sink for Buf {
        fn put(&mut self, s: &str) {
            self.0.push_str(s);
        }
    }

    fn line(r: &firmware_line::Figures<'_>) -> String {
        let mut b = Buf(String::new());
        firmware_line::write(&mut b, r);
        b.0
    }

    fn figures(stack_hw: u32) -> firmware_line::Figures<'static> {
        firmware_line::Figures {
            model: "demo (generated)",
            ram_bytes: 262_144,
            static_bytes: 1_040,
            stack_bytes: 16_384,
            stack_high_water: stack_hw,
            isr_stack_bytes: 2_048,
            isr_high_water: 40,
            dma_bytes: 1_024,
            log_bytes: 512,
            arena_bytes: 6_960,
            arena_used_bytes: 6_960,
            gap_bytes: 234_176,
            invokes: 10,
            arena_stable: true,
            outputs_stable: Some(true),
            ticks: 3,
            headroom_bp: 2000,
        }
    }

    #[test]
    fn the_firmware_line_reads_back_with_its_figures() {
        let text = format!("microarena firmware: …\n{}\nother\n", line(&figures(2_312)));
        let m = Measured::parse(&text).unwrap();
        assert_eq!(m.model.as_deref(), Some("demo__generated_"));
        assert_eq!(m.ram_bytes, Some(262_144));
        assert_eq!(m.arena_bytes, Some(6_960));
        assert_eq!(m.arena_used_bytes, Some(6_960));
        let names: Vec<&str> = m.regions.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["static", "stack", "isr", "dma", "log"]);
        assert_eq!(m.regions[1].high_water_bytes, Some(2_312));
        assert_eq!(m.regions[2].high_water_bytes, Some(40));
        assert_eq!(m.regions[3].high_water_bytes, None);
        let p = m.procedure.unwrap();
        assert_eq!(
            (p.invokes, p.arena_stable, p.outputs_stable),
            (10, true, Some(true))
        );
        assert_eq!((p.gap_bytes, p.noinit_bytes, p.ticks), (234_176, 6_960, 3));
        // The firmware's verdict, by hand: reserves 1,040 + 16,384 + 2,048 + 1,024 + 512 =
        // 21,008; available 262,144 − 21,008 = 241,136; arena 6,960 × 1.2 = 8,352 (a
        // multiple of 16); margin 241,136 − 8,352 = 232,784.
        let d = m.device_verdict.unwrap();
        assert_eq!(
            d,
            DeviceVerdict {
                headroom_bp: 2000,
                minimum_bytes: 6_960,
                arena_bytes: 8_352,
                available_bytes: 241_136,
                margin_bytes: 232_784,
                fits: true,
            }
        );
        assert_eq!(expected_device_verdict(&m, 2000), Some(d));
    }

    #[test]
    fn check_uses_the_measured_figures_and_agrees_with_the_device() {
        let m = Measured::parse(&line(&figures(2_312))).unwrap();
        let (b, f) = budget(&m, Ram::None, &[], 2000, Source::Linked).unwrap();
        assert_eq!(b.reserved_bytes(), 21_008);
        let (v, c) = check(&m, &b, f, m.minimum().unwrap());
        assert!(v.fits);
        assert_eq!(v.margin_bytes, 232_784);
        assert_eq!(c.device_agrees, Some(true));
        let stack = c.figures.iter().find(|f| f.name == "stack").unwrap();
        // Within its reservation: the linked size counts; the high-water is shown.
        assert_eq!(
            (stack.bytes, stack.source, stack.high_water_bytes),
            (16_384, Source::Linked, Some(2_312))
        );
        let stat = c.figures.iter().find(|f| f.name == "static").unwrap();
        assert_eq!(stat.source, Source::Linked);
        // A typed --ram makes it a different question: no agreement is claimed.
        let (b, f) = budget(&m, Ram::Typed(65_536), &[], 2000, Source::Linked).unwrap();
        let (_, c) = check(&m, &b, f, m.minimum().unwrap());
        assert_eq!(c.device_agrees, None);
        assert_eq!(c.figures[0].source, Source::Assumed);
    }

    #[test]
    fn a_stack_beyond_its_reservation_fails_with_that_figure() {
        // 40,000 B used of 16,384 reserved: the budget counts 40,000.
        let m = Measured::parse(&line(&figures(40_000))).unwrap();
        let (b, f) = budget(&m, Ram::None, &[], 2000, Source::Linked).unwrap();
        assert_eq!(b.reserved_bytes(), 21_008 - 16_384 + 40_000);
        let (v, c) = check(&m, &b, f, m.minimum().unwrap());
        assert!(
            !v.fits && v.margin_bytes > 0,
            "RAM adds up; the overflow fails it"
        );
        assert_eq!(
            c.overflows,
            [Overflow {
                name: "stack".into(),
                high_water_bytes: 40_000,
                reserved_bytes: 16_384
            }]
        );
        assert_eq!(c.device_agrees, Some(true));
        assert!(!m.device_verdict.unwrap().fits);
        let stack = c.figures.iter().find(|f| f.name == "stack").unwrap();
        assert_eq!(
            (stack.bytes, stack.source, stack.reserved_bytes),
            (40_000, Source::Measured, Some(16_384))
        );
        let a = advice(&b, &v, &c);
        assert!(
            a[0].contains("stack reservation from 16384 B to at least 40000 B"),
            "{a:?}"
        );
    }

    #[test]
    fn typed_reserves_replace_measured_ones_and_are_assumed() {
        let m = Measured::parse(&line(&figures(2_312))).unwrap();
        let typed = [Reserve {
            name: "stack".into(),
            bytes: 8_192,
        }];
        let (b, f) = budget(&m, Ram::None, &typed, 2000, Source::Linked).unwrap();
        assert_eq!(b.reserved_bytes(), 21_008 - 16_384 + 8_192);
        let stack: Vec<&Figure> = f.iter().filter(|f| f.name == "stack").collect();
        assert_eq!(stack.len(), 1);
        assert_eq!(stack[0].source, Source::Assumed);
    }

    #[test]
    fn an_elf_completed_by_a_run_keeps_the_run_figures() {
        let elf = Measured {
            ram_bytes: Some(262_144),
            regions: alloc::vec![Region {
                name: "stack".into(),
                reserved_bytes: 16_384,
                high_water_bytes: None,
            }],
            arena_bytes: Some(6_960),
            ..Measured::default()
        };
        assert_eq!(elf.minimum(), Some((6_960, Source::Linked)));
        let run = Measured::parse(&line(&figures(2_312))).unwrap();
        assert!(elf.disagreements(&run).is_empty());
        let m = elf.clone().merged_with(run.clone());
        assert_eq!(m, run);
        let other = Measured::parse(&line(&firmware_line::Figures {
            arena_bytes: 7_000,
            ..figures(2_312)
        }))
        .unwrap();
        assert_eq!(
            elf.disagreements(&other),
            ["arena: ELF 6960 B, report 7000 B"]
        );
        assert!(budget(&Measured::default(), Ram::None, &[], 0, Source::Linked).is_err());
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        assert_eq!(Measured::parse("hello\n"), Err(MeasuredError::NoReportLine));
        assert_eq!(
            Measured::parse("MICROARENA-REPORT v=2"),
            Err(MeasuredError::Version("2".into()))
        );
        let good = line(&figures(2_312));
        let e = Measured::parse(&good.replace(" ticks=3", "")).unwrap_err();
        assert_eq!(e, MeasuredError::Missing("ticks"));
        assert!(e.to_string().contains("ticks="));
        let e = Measured::parse(&good.replace("fits=1", "fits=yes")).unwrap_err();
        assert!(matches!(e, MeasuredError::Value { .. }), "{e}");
        let e = Measured::parse(&good.replace(" reserve.isr=2048", "")).unwrap_err();
        assert_eq!(e, MeasuredError::HighWaterWithoutReserve("isr".into()));
        let e = Measured::parse(&format!("{good} stray")).unwrap_err();
        assert_eq!(e, MeasuredError::Malformed("stray".into()));
    }
}
