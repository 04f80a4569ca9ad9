//! The `plan` pipeline every shell runs: optional what-if shapes
//! ([`whatif`]), [`analyze`], [`Report::new`], and for a what-if the model as
//! converted analysed too, for the delta ([`WhatIfInfo`]). The CLI's `plan`
//! and the web app's worker both call [`plan`], so they cannot drift apart.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::read::model::Model;
use crate::report::budget::{Budget, CheckReport, ReferenceCheck};
use crate::report::placement::{self, Memory};
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
/// sees how much the backend's scratch and OpData cost. `device` names the
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
        Backend::Reference => None,
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
