//! What the worker computes for one request, in two steps so the page can
//! draw the map before the slower extras: [`analyse`] (the report, exactly
//! as `microarena plan --json` builds it) and [`extras`] (every planner on
//! the same buffers, the share code, the measured advice). Besides those, a
//! request may ask for the step-through ([`steps`]) or for the report of
//! the model `optimize` writes ([`optimized`]), the other side of a comparison.

use std::sync::Arc;

use microarena_core::pipeline::{self, PipelineError, Planned};
use microarena_core::plan::PlannerKind;
use microarena_core::report::Report;
use microarena_core::report::advice;
use microarena_core::report::share;
use microarena_core::report::steps::{self, Steps};
use microarena_core::rewrite::optimize;
use microarena_core::tflm::profile::{self, TargetProfile};
use microarena_core::tflm::split::split_arena;
use microarena_core::{Analysis, Config, Model};

use crate::inputs::{GraphInput, graph_inputs};
#[cfg(test)]
use crate::protocol::Want;
use crate::protocol::{Extras, Failure, PlannerHead, Request, Timings};

/// The first answer and what the second needs.
#[derive(Debug, Clone)]
pub struct Analysed<'a> {
    /// The report (shared with the page's views, never deep-copied).
    pub report: Arc<Report>,
    /// The model's inputs as converted.
    pub inputs: Vec<GraphInput>,
    /// Phase timings.
    pub timings: Timings,
    /// The model the report shows (reshaped by a what-if), for the advice.
    model: Model<'a>,
    analysis: Analysis,
    config: Config,
}

impl Failure {
    fn model(message: String) -> Failure {
        Failure {
            message,
            what_if: false,
        }
    }

    fn what_if(message: String) -> Failure {
        Failure {
            message,
            what_if: true,
        }
    }
}

/// Runs core's `pipeline::plan`, the function `microarena plan` calls, on
/// the request. `now` gives milliseconds (the browser's clock; tests pass any).
pub fn analyse<'a>(req: &Request<'a>, now: &dyn Fn() -> f64) -> Result<Analysed<'a>, Failure> {
    let Request {
        name,
        target,
        planner,
        input_shapes,
        bytes,
        ..
    } = req;
    let profile: &'static TargetProfile = profile::by_name(target)
        .ok_or_else(|| Failure::model(format!("unknown target {target}")))?;
    let planner = PlannerKind::by_name(planner)
        .ok_or_else(|| Failure::model(format!("unknown planner {planner}")))?;
    if !microarena_core::is_tflite(bytes) {
        return Err(Failure::model(format!(
            "{name}: not a TensorFlow Lite model (no TFL3 identifier; {} bytes)",
            bytes.len()
        )));
    }
    let t0 = now();
    let model = Model::parse(bytes).map_err(|e| Failure::model(format!("{name}: {e}")))?;
    let config = Config { profile, planner };
    let inputs = graph_inputs(&model);
    let Planned {
        model,
        analysis,
        report,
    } = pipeline::plan(model, &config, input_shapes, name).map_err(|e| match e {
        PipelineError::InputShape(e) | PipelineError::WhatIf(e) => {
            Failure::what_if(format!("what-if: {e}"))
        }
        PipelineError::WhatIfAnalysis(e) => Failure::what_if(format!("what-if: {e}")),
        PipelineError::Analysis(e) => Failure::model(format!("{name}: {e}")),
    })?;
    let t1 = now();
    Ok(Analysed {
        report: Arc::new(report),
        inputs,
        timings: vec![("parse+analyze+report".into(), t1 - t0)],
        model,
        analysis,
        config,
    })
}

/// The step-through of the request's analysis (`report::steps`, from the
/// same `pipeline::plan` as [`analyse`], what-if shapes included).
pub fn steps(req: &Request<'_>) -> Result<Steps, Failure> {
    let now = || 0.0;
    let a = analyse(req, &now)?;
    Ok(steps::steps(&a.model, &a.analysis))
}

/// The report of the model `microarena optimize` writes from the request's
/// (its defaults for the target: `best`'s offsets, no reordering), planned
/// as the request asks and named `STEM.optimized.tflite`. The what-if shapes
/// are not applied: optimize works on the model as converted.
pub fn optimized(req: &Request<'_>, now: &dyn Fn() -> f64) -> Result<Arc<Report>, Failure> {
    let profile: &'static TargetProfile = profile::by_name(&req.target)
        .ok_or_else(|| Failure::model(format!("unknown target {}", req.target)))?;
    let out = optimize::optimize(req.bytes, &optimize::Options::new(profile))
        .map_err(|e| Failure::model(format!("{}: {e}", req.name)))?;
    let stem = req.name.strip_suffix(".tflite").unwrap_or(&req.name);
    let r = Request {
        id: req.id,
        name: format!("{stem}.optimized.tflite"),
        target: req.target.clone(),
        planner: req.planner.clone(),
        input_shapes: Vec::new(),
        want: req.want,
        bytes: &out.bytes,
    };
    Ok(analyse(&r, now)?.report)
}

/// Every planner's head on the analysed buffers, the share code, and the
/// measured advice for the model the report shows.
pub fn extras(a: &Analysed<'_>, now: &dyn Fn() -> f64) -> (Extras, Timings) {
    let t0 = now();
    let planners = PlannerKind::ALL
        .iter()
        .map(|&k| PlannerHead {
            planner: k.name().into(),
            head: if k == a.config.planner {
                Ok(a.report.arena.head_bytes)
            } else {
                k.plan(&a.analysis.plan_input)
                    .map(|p| p.head_bytes)
                    .map_err(|e| e.to_string())
            },
        })
        .collect();
    let t1 = now();
    let share_code = share::encode(&a.report);
    let t2 = now();
    let advice = advice::advise(&a.model, &a.report, &a.config);
    let split = split_arena(&a.model, &a.config).ok();
    let t3 = now();
    (
        Extras {
            planners,
            share_code,
            advice,
            split,
        },
        vec![
            ("other planners".into(), t1 - t0),
            ("share code".into(), t2 - t1),
            ("advice and two-buffer sizes".into(), t3 - t2),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use microarena_core::analyze;
    use microarena_core::build::example;
    use microarena_core::tflm::profile::PROFILES;

    fn request<'a>(bytes: &'a [u8], input_shapes: &[&str]) -> Request<'a> {
        Request {
            id: 1,
            name: "example.tflite".into(),
            target: PROFILES[0].name.into(),
            planner: PlannerKind::TflmGreedy.name().into(),
            input_shapes: input_shapes.iter().map(|s| s.to_string()).collect(),
            want: Want::Plan,
            bytes,
        }
    }

    fn clock() -> f64 {
        0.0
    }

    #[test]
    fn the_report_is_the_clis() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let a = analyse(&request(&bytes, &[]), &clock).expect("the example analyses");
        let model = Model::parse(&bytes).expect("it parses");
        let config = Config {
            profile: &PROFILES[0],
            planner: PlannerKind::TflmGreedy,
        };
        let analysis = analyze(&model, &config).expect("and plans");
        assert_eq!(*a.report, Report::new(&model, &analysis, "example.tflite"));
        assert_eq!(a.inputs, graph_inputs(&model));
        assert_eq!(a.timings, vec![("parse+analyze+report".to_string(), 0.0)]);
    }

    #[test]
    fn a_what_if_carries_the_original_figures() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let plain = analyse(&request(&bytes, &[]), &clock).expect("analyses");
        let key = format!("{}=1,48,48,1", plain.inputs[0].key);
        let a = analyse(&request(&bytes, &[&key]), &clock).expect("a smaller image plans");
        let w = a.report.what_if.as_ref().expect("what-if recorded");
        assert_eq!(w.input_shapes, vec![key]);
        assert_eq!(w.original_head_bytes, plain.report.arena.head_bytes);
        // A quarter of the pixels needs a smaller head.
        assert!(a.report.arena.head_bytes < plain.report.arena.head_bytes);
    }

    #[test]
    fn failures_say_whether_the_model_or_the_what_if_is_at_fault() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let mut req = request(&bytes, &["nosuchinput"]);
        let e = analyse(&req, &clock).expect_err("no =DIMS");
        assert!(e.what_if && e.message.starts_with("what-if: "), "{e:?}");
        req.target = "z80".into();
        assert_eq!(
            analyse(&req, &clock).expect_err("unknown target").message,
            "unknown target z80"
        );
        let junk = [0u8; 16];
        let e = analyse(&request(&junk, &[]), &clock).expect_err("not a model");
        assert_eq!(
            e,
            Failure {
                message:
                    "example.tflite: not a TensorFlow Lite model (no TFL3 identifier; 16 bytes)"
                        .into(),
                what_if: false
            }
        );
    }

    #[test]
    fn extras_compare_every_planner_and_share_the_report() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let req = request(&bytes, &[]);
        let a = analyse(&req, &clock).expect("analyses");
        let (x, timings) = extras(&a, &clock);
        let names: Vec<&str> = x.planners.iter().map(|p| p.planner.as_str()).collect();
        let all: Vec<&str> = PlannerKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, all);
        assert_eq!(x.planners[0].head, Ok(a.report.arena.head_bytes));
        assert_eq!(share::decode(&x.share_code).as_ref(), Ok(&*a.report));
        assert_eq!(timings.len(), 3);
    }

    #[test]
    fn the_steps_end_on_the_report_what_if_included() {
        let bytes = example::mobilenet_v1_025_96_int8();
        let plain = analyse(&request(&bytes, &[]), &clock).expect("analyses");
        let key = format!("{}=1,48,48,1", plain.inputs[0].key);
        for shapes in [vec![], vec![key.as_str()]] {
            let req = request(&bytes, &shapes);
            let report = analyse(&req, &clock).expect("analyses").report;
            let s = steps(&req).expect("steps");
            let last = s.steps.last().expect("some steps");
            assert_eq!(last.head_bytes, report.arena.head_bytes);
            assert_eq!(last.tail_bytes, report.arena.tail_bytes);
            assert_eq!(last.minimum_bytes, report.arena.minimum_bytes);
        }
    }

    #[test]
    fn the_optimized_copy_is_planned_as_asked_and_named_after_the_model() {
        let bytes = example::branchy_float();
        let req = request(&bytes, &[]);
        let before = analyse(&req, &clock).expect("analyses").report;
        let after = optimized(&req, &clock).expect("optimizes");
        assert_eq!(after.model.file, "example.optimized.tflite");
        assert_eq!(after.planner, before.planner);
        assert!(after.arena.head_bytes <= before.arena.head_bytes);
    }
}
