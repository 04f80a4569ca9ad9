//! Ways to need fewer bytes, each measured by running the same analysis on
//! the changed model: a better plan written into the model, a smaller input
//! (shorter sequence, lower resolution), or microarena-runtime instead of
//! TFLM. Nothing here is an estimate; a suggestion that cannot be measured
//! (the input does not propagate) is left out.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use crate::read::model::Model;
use crate::report::Report;
use crate::tflm::analysis::{Config, analyze};
use crate::whatif::with_input_shapes;

/// One measured way to a smaller arena.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Advice {
    /// What to change, in words.
    pub action: String,
    /// The figure it lowers: `head`, `total` (TFLM's arena) or `runtime`.
    pub figure: String,
    /// The figure now.
    pub from_bytes: u64,
    /// The figure after the change.
    pub to_bytes: u64,
    /// The `microarena` arguments that show or make the change (after the
    /// model path), when there are any.
    pub try_args: Option<String>,
}

impl Advice {
    /// Bytes saved.
    pub fn saving_bytes(&self) -> u64 {
        self.from_bytes.saturating_sub(self.to_bytes)
    }
}

/// Measured suggestions for `model` (analysed as `report` with `config`),
/// largest saving first.
pub fn advise(model: &Model<'_>, report: &Report, config: &Config) -> Vec<Advice> {
    let mut out = Vec::new();
    let head = report.arena.head_bytes;
    if let Some(best) = report
        .plans
        .iter()
        .filter(|p| p.head_bytes < head)
        .min_by_key(|p| p.head_bytes)
    {
        out.push(Advice {
            action: format!(
                "write the {} planner's offsets into the model (stock TFLM then uses them)",
                best.planner
            ),
            figure: "head".into(),
            from_bytes: head,
            to_bytes: best.head_bytes,
            try_args: Some(format!("optimize -o OUT.tflite --planner {}", best.planner)),
        });
    }
    if let Some(rt) = &report.runtime
        && rt.total_bytes < report.arena.total_bytes
    {
        out.push(Advice {
            action: "run it with microarena-runtime (same plan, smaller persistent tail)".into(),
            figure: "total".into(),
            from_bytes: report.arena.total_bytes,
            to_bytes: rt.total_bytes,
            try_args: None,
        });
    }
    if let Some(rt) = &report.runtime
        && rt.opdata_bytes > 0
        && rt.total_with_opdata_in_flash() < report.arena.total_bytes
    {
        out.push(Advice {
            action: format!(
                "run it with microarena-runtime, its OpData ({} B of multipliers and bounds) in flash",
                crate::report::grouped(rt.opdata_bytes)
            ),
            figure: "total".into(),
            from_bytes: report.arena.total_bytes,
            to_bytes: rt.total_with_opdata_in_flash(),
            try_args: Some("run --input IN.bin --opdata flash".into()),
        });
    }
    if let Some(rt) = &report.runtime
        && let Some(b) = &rt.banded
        && let Some(to) = rt.banded_total_with_opdata_in_flash()
        && to < report.arena.total_bytes
    {
        out.push(Advice {
            action: format!(
                "run it with microarena-runtime, patch-based: {} (+{} MACs), OpData in flash",
                b.stages_summary(),
                b.extra_macs
            ),
            figure: "total".into(),
            from_bytes: report.arena.total_bytes,
            to_bytes: to,
            try_args: Some("run --input IN.bin --exec banded --opdata flash".into()),
        });
    }
    if let Some(rt) = &report.runtime
        && let Some(ip) = &rt.in_place
    {
        let ops = ip.summary();
        // The better of plain and banded in place, OpData in flash.
        let best = match (
            rt.in_place_total_with_opdata_in_flash(),
            rt.banded_in_place_total_with_opdata_in_flash(),
        ) {
            (_, Some(b)) => Some((b, " --exec banded", " in row bands and")),
            (Some(p), None) => Some((p, "", "")),
            (None, None) => None,
        };
        if let Some((to, exec, how)) = best
            && to < report.arena.total_bytes
        {
            out.push(Advice {
                action: format!(
                    "run it with microarena-runtime{how} in place ({ops}), OpData in flash"
                ),
                figure: "total".into(),
                from_bytes: report.arena.total_bytes,
                to_bytes: to,
                try_args: Some(format!(
                    "run --input IN.bin{exec} --in-place --opdata flash"
                )),
            });
        }
    }
    for (name, now, dims) in smaller_inputs(model) {
        let Ok(small) = with_input_shapes(model, &[(name.clone(), dims.clone())]) else {
            continue;
        };
        let Ok(a) = analyze(&small, config) else {
            continue;
        };
        if a.total_bytes >= report.arena.total_bytes {
            continue;
        }
        let joined = |d: &[i32], sep: &str| {
            d.iter()
                .map(|x| format!("{x}"))
                .collect::<Vec<_>>()
                .join(sep)
        };
        out.push(Advice {
            action: format!(
                "feed '{name}' {} instead of {} (a model trained and converted at that size)",
                joined(&dims, "×"),
                joined(&now, "×")
            ),
            figure: "total".into(),
            from_bytes: report.arena.total_bytes,
            to_bytes: a.total_bytes,
            try_args: Some(format!("plan --input-shape {name}={}", joined(&dims, ","))),
        });
    }
    out.sort_by_key(|a| core::cmp::Reverse(a.saving_bytes()));
    out
}

/// Half the time steps of a `[batch, time, features]` input, or half the
/// height and width of an NHWC image, for each named main-subgraph input:
/// name, shape now, smaller shape.
fn smaller_inputs(model: &Model<'_>) -> Vec<(String, Vec<i32>, Vec<i32>)> {
    let sg = model.main();
    sg.inputs
        .iter()
        .filter_map(|&t| sg.tensors.get(usize::try_from(t).ok()?))
        .filter(|t| !t.name.is_empty())
        .filter_map(|t| {
            let mut d = t.shape.clone();
            let axes: &[usize] = match d.len() {
                3 => &[1],
                4 => &[1, 2],
                _ => return None,
            };
            for &ax in axes {
                if d[ax] < 2 {
                    return None;
                }
                d[ax] /= 2;
            }
            Some((t.name.into(), t.shape.clone(), d))
        })
        .take(4)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlannerKind;
    use crate::tflm::profile::X86_64;

    #[test]
    fn halving_the_image_is_measured_not_guessed() {
        let bytes = crate::build::example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).expect("parse");
        let config = Config {
            profile: &X86_64,
            planner: PlannerKind::TflmGreedy,
        };
        let a = analyze(&model, &config).expect("analyze");
        let report = Report::new(&model, &a, "example");
        let advice = advise(&model, &report, &config);
        let input = model.main().inputs[0] as usize;
        let name = model.main().tensors[input].name;
        let half = advice
            .iter()
            .find(|x| {
                x.try_args
                    .as_deref()
                    .is_some_and(|s| s.contains("--input-shape"))
            })
            .expect("a smaller-input suggestion");
        assert_eq!(
            half.try_args.as_deref(),
            Some(format!("plan --input-shape {name}=1,48,48,1").as_str())
        );
        // The figure is that of the model re-planned at 48×48.
        let small = with_input_shapes(&model, &[(name.into(), alloc::vec![1, 48, 48, 1])])
            .expect("propagates");
        let want = analyze(&small, &config).expect("analyze").total_bytes;
        assert_eq!(half.to_bytes, want);
        assert!(want < report.arena.total_bytes);
        // Sorted by saving.
        assert!(
            advice
                .windows(2)
                .all(|w| w[0].saving_bytes() >= w[1].saving_bytes())
        );
    }
}
