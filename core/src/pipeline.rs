//! The `plan` pipeline every shell runs: optional what-if shapes
//! ([`whatif`]), [`analyze`], [`Report::new`], and for a what-if the model as
//! converted analysed too, for the delta ([`WhatIfInfo`]). The CLI's `plan`
//! and the web app's worker both call [`plan`], so they cannot drift apart.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::read::model::Model;
use crate::report::budget::{Budget, CheckReport, McuPreset, ReferenceCheck, Reserve};
use crate::report::flash::FlashBudget;
use crate::report::measured::{self, Measured, MeasuredBudgetError, Source};
use crate::report::placement::{self, Memory, MemoryKind};
use crate::report::{Report, WhatIfInfo};
use crate::tflm::analysis::{Analysis, AnalysisError, Config, analyze};
use crate::tflm::profile::{self, Backend};
use crate::tflm::split::split_arena;
use crate::whatif::{self, ShapeError};

/// What [`plan`] gives the shells.
#[derive(Debug, Clone)]
pub struct Planned<'a> {
    /// The model the report shows: as read, or reshaped by the what-if
    /// (what advice re-plans).
    pub model: Model<'a>,
    /// The analysis of that model (its plan input and plan draw the timeline).
    pub analysis: Analysis,
    /// The report, with `what_if` set when shapes were given.
    pub report: Report,
}

/// Why [`plan`] produced no report. Each shell words these itself (the
/// CLI's messages are part of its output contract).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipelineError {
    /// A what-if shape does not read as `NAME=DIMS`.
    InputShape(ShapeError),
    /// The what-if shapes do not propagate through the graph.
    WhatIf(ShapeError),
    /// The reshaped model cannot be analysed.
    WhatIfAnalysis(AnalysisError),
    /// The model as read cannot be analysed.
    Analysis(AnalysisError),
}

impl PipelineError {
    /// `true` when the what-if is at fault and the model as read is fine.
    pub fn is_what_if(&self) -> bool {
        !matches!(self, PipelineError::Analysis(_))
    }
}

impl fmt::Display for PipelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PipelineError::InputShape(e) => write!(f, "input shape {e}"),
            PipelineError::WhatIf(e) => write!(f, "what-if: {e}"),
            PipelineError::WhatIfAnalysis(e) => write!(f, "what-if: {e}"),
            PipelineError::Analysis(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for PipelineError {}

/// Plans `model` for `config`, as `microarena plan` does: with
/// `input_shapes` (`NAME=DIMS`, as `--input-shape` takes them) the model is
/// reshaped first and the report carries the original figures; `file` is
/// the name the report shows.
pub fn plan<'a>(
    model: Model<'a>,
    config: &Config,
    input_shapes: &[String],
    file: &str,
) -> Result<Planned<'a>, PipelineError> {
    let overrides = input_shapes
        .iter()
        .map(|s| whatif::parse_override(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PipelineError::InputShape)?;
    if overrides.is_empty() {
        let analysis = analyze(&model, config).map_err(PipelineError::Analysis)?;
        let report = Report::new(&model, &analysis, file);
        return Ok(Planned {
            model,
            analysis,
            report,
        });
    }
    let reshaped = whatif::with_input_shapes(&model, &overrides).map_err(PipelineError::WhatIf)?;
    let analysis = analyze(&reshaped, config).map_err(PipelineError::WhatIfAnalysis)?;
    let mut report = Report::new(&reshaped, &analysis, file);
    let before = analyze(&model, config).map_err(PipelineError::Analysis)?;
    report.what_if = Some(WhatIfInfo::new(input_shapes.to_vec(), &model, &before));
    Ok(Planned {
        model: reshaped,
        analysis,
        report,
    })
}

/// Checks `model` against `budget` as `microarena check` does: the verdict on
/// `config`'s target, the head buffers at the peak, and on a CMSIS-NN target
/// the same budget with TFLM's reference kernels (`cortex-m`), so the user
/// sees how much the backend's scratch and OpData cost (not on an ESP-NN
/// target, which has no reference build). `device` names the
/// preset the budget came from; with `memories` (a preset's, or a custom
/// device's), the report also proposes where the arena goes among them
/// ([`placement::place`]).
pub fn check(
    model: &Model<'_>,
    config: &Config,
    budget: &Budget,
    file: &str,
    device: Option<&str>,
    memories: &[Memory],
) -> Result<CheckReport, AnalysisError> {
    let analysis = analyze(model, config)?;
    let report = Report::new(model, &analysis, file);
    let verdict = budget.check(analysis.minimum_bytes);
    let reference = match config.profile.backend {
        // esp-tflite-micro always replaces the kernels it has ESP-NN ones for
        // (its CMake drops the reference files), so an ESP target has no
        // reference build to compare with.
        Backend::Reference | Backend::EspNn(_) => None,
        Backend::CmsisNn(_) => {
            let reference = Config {
                profile: &profile::CORTEX_M,
                planner: config.planner,
            };
            let minimum = analyze(model, &reference)?.minimum_bytes;
            let v = budget.check(minimum);
            Some(ReferenceCheck {
                target: profile::CORTEX_M.name.into(),
                minimum_bytes: minimum,
                arena_bytes: v.arena_bytes,
                fits: v.fits,
            })
        }
    };
    let mut checked = CheckReport::new(budget, &verdict, &report, device, reference);
    if !memories.is_empty() {
        let split = split_arena(model, config)?;
        checked.placement = Some(placement::place(
            memories,
            analysis.minimum_bytes,
            split,
            budget.reserved_bytes(),
            budget.headroom_bp,
        ));
        // RAM that adds up is not enough: some memory must hold the buffers.
        checked.fits &= checked.placement.as_ref().is_some_and(|p| p.fits());
    }
    Ok(checked)
}

/// Everything `microarena check` is given, its files already read: the
/// one orchestration of a budget check that the CLI, the Python package
/// and the app share.
#[derive(Debug, Clone)]
pub struct CheckRequest<'r, 'm> {
    /// The model and the name reports show; `None` when the device's
    /// figures alone give the arena (`check --measured/--elf` without a model).
    pub model: Option<(&'r Model<'m>, &'r str)>,
    pub config: Config,
    /// The device preset (RAM, memories, flash), if one was chosen.
    pub device: Option<&'static McuPreset>,
    /// A custom device's memories; they replace the preset's, and their
    /// on-chip sum is the RAM when no other figure gives it.
    pub memories: &'r [Memory],
    /// Typed RAM (wins over the preset and the device's figures).
    pub ram_bytes: Option<u64>,
    /// Typed reserves (a name also measured replaces the measured figure).
    pub reserves: Vec<Reserve>,
    pub headroom_bp: u32,
    /// Flash for the model (default: the preset's on-chip flash).
    pub flash_bytes: Option<u64>,
    /// Firmware code and read-only data besides the model.
    pub code_bytes: u64,
    /// The model file's size, for the flash verdict.
    pub file_bytes: Option<u64>,
    /// Figures from the device (a report line and/or a firmware ELF).
    pub measured: Option<&'r Measured>,
    /// The file those figures came from (names a check without a model).
    pub measured_file: Option<&'r str>,
}

/// A finished check: the name the verdict shows, the budget it used and the
/// record (`CheckReport`, what `check --json` prints).
#[derive(Debug, Clone)]
pub struct Checked {
    pub name: String,
    pub budget: Budget,
    pub report: CheckReport,
}

/// Why a check could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckError {
    /// No RAM size anywhere (typed, preset, custom memories).
    NoRam,
    /// The device's figures give no budget.
    Measured(MeasuredBudgetError),
    /// Neither a model nor device figures.
    NoModel,
    /// Device figures without a model, and without an arena size either.
    NoArenaSize,
    /// A code size without a flash size.
    CodeNeedsFlash,
    /// A flash check without the model file.
    FlashNeedsModel,
    /// The model cannot be analysed.
    Analysis(AnalysisError),
}

impl fmt::Display for CheckError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CheckError::NoRam => write!(f, "give --ram or --device"),
            CheckError::Measured(e) => e.fmt(f),
            CheckError::NoModel => write!(f, "give the model, --measured or --elf"),
            CheckError::NoArenaSize => {
                write!(f, "the firmware figures have no arena size; give the model")
            }
            CheckError::CodeNeedsFlash => write!(
                f,
                "--code needs a flash size: give --flash (the device's flash is external)"
            ),
            CheckError::FlashNeedsModel => write!(
                f,
                "the flash check needs the model file (its size is the flash figure)"
            ),
            CheckError::Analysis(e) => e.fmt(f),
        }
    }
}

impl core::error::Error for CheckError {}

/// The budget check of `microarena check`: RAM from the typed figure, the
/// device's figures, the preset or the custom memories; the verdict on the
/// model's minimum (or, without a model, the device's arena); device
/// figures tagged measured or assumed; the placement among the memories;
/// the flash verdict.
pub fn check_request(req: &CheckRequest<'_, '_>) -> Result<Checked, CheckError> {
    let on_chip: u64 = req
        .memories
        .iter()
        .filter(|m| matches!(m.kind, MemoryKind::Tcm | MemoryKind::Sram))
        .map(|m| m.bytes)
        .sum();
    let preset_ram = req
        .device
        .map(|d| d.ram_bytes)
        .or((on_chip > 0).then_some(on_chip));
    let (budget, figures) = match req.measured {
        Some(m) => {
            let ram = match (req.ram_bytes, preset_ram) {
                (Some(r), _) => measured::Ram::Typed(r),
                (None, Some(r)) => measured::Ram::Preset(r),
                (None, None) => measured::Ram::None,
            };
            let (b, f) = measured::budget(m, ram, &req.reserves, req.headroom_bp, Source::Linked)
                .map_err(CheckError::Measured)?;
            (b, Some(f))
        }
        None => (
            Budget {
                ram_bytes: req.ram_bytes.or(preset_ram).ok_or(CheckError::NoRam)?,
                reserves: req.reserves.clone(),
                headroom_bp: req.headroom_bp,
            },
            None,
        ),
    };
    let memories = match (req.memories.is_empty(), req.device) {
        (false, _) => req.memories,
        (true, Some(d)) => d.memories,
        (true, None) => &[][..],
    };
    let device_name = req.device.map(|d| d.name);
    let (name, mut checked) = match (req.model, req.measured) {
        (Some((model, name)), _) => {
            let checked = check(model, &req.config, &budget, name, device_name, memories)
                .map_err(CheckError::Analysis)?;
            (String::from(name), checked)
        }
        (None, Some(m)) => {
            let (minimum, _) = m.minimum().ok_or(CheckError::NoArenaSize)?;
            let verdict = budget.check(minimum);
            let origin = if m.arena_used_bytes.is_some() {
                "measured on the device"
            } else {
                "linked in the ELF"
            };
            let name = m
                .model
                .clone()
                .or(req.measured_file.map(String::from))
                .unwrap_or_default();
            let mut c = CheckReport::without_model(&budget, &verdict, origin);
            c.device = device_name.map(String::from);
            (name, c)
        }
        (None, None) => return Err(CheckError::NoModel),
    };
    if let (Some(m), Some(figures)) = (req.measured, figures) {
        let minimum = match (req.model, m.minimum()) {
            (Some(_), _) | (None, None) => (checked.minimum_bytes, Source::Predicted),
            (None, Some(min)) => min,
        };
        let (verdict, mc) = measured::check(m, &budget, figures, minimum);
        checked.fits &= verdict.fits;
        checked.measured = Some(mc);
    }
    // Flash: the given size, else the device's on-chip flash.
    let flash_bytes = req.flash_bytes.or(req.device.and_then(|d| d.flash_bytes));
    if req.code_bytes > 0 && flash_bytes.is_none() {
        return Err(CheckError::CodeNeedsFlash);
    }
    if let Some(flash_bytes) = flash_bytes {
        let file_bytes = req.file_bytes.ok_or(CheckError::FlashNeedsModel)?;
        let v = FlashBudget {
            flash_bytes,
            code_bytes: req.code_bytes,
        }
        .check(file_bytes);
        checked.fits &= v.fits;
        checked.flash = Some(v);
    }
    Ok(Checked {
        name,
        budget,
        report: checked,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::example;
    use crate::plan::PlannerKind;
    use crate::tflm::profile::PROFILES;
    use alloc::string::ToString;
    use alloc::vec;

    fn config() -> Config {
        Config {
            profile: &PROFILES[0],
            planner: PlannerKind::TflmGreedy,
        }
    }

    fn input_name(m: &Model<'_>) -> String {
        let t = m.main().inputs[0] as usize;
        m.main().tensors[t].name.to_string()
    }

    #[test]
    fn without_shapes_it_is_analyze_and_report() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).unwrap();
        let analysis = analyze(&model, &config()).unwrap();
        let want = Report::new(&model, &analysis, "m.tflite");
        let got = plan(model.clone(), &config(), &[], "m.tflite").unwrap();
        assert_eq!(got.report, want);
        assert_eq!(got.report.what_if, None);
        assert_eq!(got.model, model);
        assert_eq!(got.analysis.head_bytes, analysis.head_bytes);
    }

    #[test]
    fn with_shapes_the_report_is_the_reshaped_models_with_the_original_figures() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).unwrap();
        let before = analyze(&model, &config()).unwrap();
        let shapes = vec![alloc::format!("{}=1,48,48,1", input_name(&model))];
        let got = plan(model, &config(), &shapes, "m.tflite").unwrap();
        let t = got.model.main().inputs[0] as usize;
        assert_eq!(got.model.main().tensors[t].shape, vec![1, 48, 48, 1]);
        let w = got.report.what_if.as_ref().unwrap();
        assert_eq!(w.input_shapes, shapes);
        assert_eq!(w.original_head_bytes, before.head_bytes);
        assert_eq!(got.report.arena.head_bytes, got.analysis.head_bytes);
        assert!(got.analysis.head_bytes < before.head_bytes);
    }

    #[test]
    fn errors_tell_the_what_if_from_the_model() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).unwrap();
        let e = plan(model.clone(), &config(), &["input".into()], "m").unwrap_err();
        assert!(matches!(e, PipelineError::InputShape(_)) && e.is_what_if());
        let e = plan(model, &config(), &["nosuch=1,2".into()], "m").unwrap_err();
        assert!(matches!(e, PipelineError::WhatIf(_)) && e.is_what_if());
        assert!(e.to_string().starts_with("what-if: "));
    }
}
