//! The step-through's words and pictures: what each step of
//! `report::steps` says, the arena bar at a step, the overlays it draws on
//! the arena map and the lifetimes, and the keys that move it. Every figure
//! is the step's own (core's); this module only words and places them.

use std::fmt::Write as _;

use microarena_core::report::Report;
use microarena_core::report::steps::{Step, StepEvent, StepPhase, Steps};

use crate::format::{grouped, xml};
use crate::svg::{MAP_H, MapGeom, PADDING_FILL, SCRATCH_FILL, fill, is_variable};

/// One phase's run of steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhaseSpan {
    /// The phase.
    pub phase: StepPhase,
    /// Its first step.
    pub first: usize,
    /// Its steps.
    pub count: usize,
}

/// The phases that have steps, in order.
pub fn phase_spans(s: &Steps) -> Vec<PhaseSpan> {
    let mut out: Vec<PhaseSpan> = Vec::new();
    for (i, st) in s.steps.iter().enumerate() {
        match out.last_mut() {
            Some(p) if p.phase == st.phase => p.count += 1,
            _ => out.push(PhaseSpan {
                phase: st.phase,
                first: i,
                count: 1,
            }),
        }
    }
    out
}

/// The phase's title on the scrubber.
pub fn phase_title(p: StepPhase) -> &'static str {
    match p {
        StepPhase::Build => "Build the interpreter",
        StepPhase::Prepare => "Prepare",
        StepPhase::Plan => "Plan the head",
        StepPhase::Finish => "I/O tensors",
        StepPhase::Invoke => "Invoke",
    }
}

/// What the phase does, in a sentence.
pub fn phase_help(p: StepPhase) -> &'static str {
    match p {
        StepPhase::Build => {
            "AllocateTensors starts at the arena's end: allocator objects, one TfLiteEvalTensor per tensor, one node per op, each op's builtin options and what its Init keeps. The tail only grows."
        }
        StepPhase::Prepare => {
            "Each kernel's Prepare: it builds temp TfLiteTensors at the bottom of the arena (freed when it returns), keeps OpData and per-channel arrays in the tail, and asks for scratch buffers the planner places later."
        }
        StepPhase::Plan => {
            "FinishModelAllocation: scratch handles and variables join the tail, then the planner places every head buffer in its order, each at the lowest offset no buffer alive at a common scope occupies."
        }
        StepPhase::Finish => {
            "The graph's input and output tensors get their TfLiteTensor structs in the tail; the arena is final."
        }
        StepPhase::Invoke => {
            "Invoke runs op by op over the planned head: buffers come alive and die by scope, and nothing is allocated."
        }
    }
}

fn buffer_name(r: &Report, i: usize) -> String {
    r.buffers
        .get(i)
        .map_or_else(|| format!("buffer {i}"), |b| format!("'{}'", b.name))
}

fn op_name(r: &Report, k: usize) -> String {
    r.operators.get(k).map_or_else(
        || format!("op {k}"),
        |o| format!("#{} {}", o.index, o.opcode),
    )
}

fn names(r: &Report, list: &[usize]) -> String {
    if list.is_empty() {
        return "nothing planned".into();
    }
    list.iter()
        .map(|&i| buffer_name(r, i))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The step in words.
pub fn describe(r: &Report, st: &Step) -> String {
    match &st.event {
        StepEvent::Tail {
            category,
            purpose,
            owner,
            requested_bytes,
            bytes,
            ..
        } => {
            let pad = bytes.saturating_sub(*requested_bytes);
            let pad = if pad > 0 {
                format!(" ({} B of it alignment)", grouped(pad))
            } else {
                String::new()
            };
            format!(
                "Tail: {purpose} for {owner} — {} B taken{pad}, counted as “{category}”.",
                grouped(*bytes)
            )
        }
        StepEvent::Prepare {
            op,
            allocations,
            scratch,
            temps,
            request_bytes,
            ..
        } => {
            let kept: u64 = allocations.iter().map(|a| a.bytes).sum();
            let kept = if allocations.is_empty() {
                "keeps nothing in the tail".to_string()
            } else {
                format!(
                    "keeps {} B in the tail ({})",
                    grouped(kept),
                    allocations
                        .iter()
                        .map(|a| a.purpose.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let asked: u64 = scratch.iter().map(|s| s.bytes).sum();
            let scratch = if scratch.is_empty() {
                "asks for no scratch".to_string()
            } else {
                format!(
                    "asks for {} ({} B, placed by the planner later)",
                    plural(scratch.len(), "scratch buffer", "scratch buffers"),
                    grouped(asked)
                )
            };
            let temps = if *temps == 0 {
                format!(
                    "builds no temp tensors above the {} B scratch-request area",
                    grouped(*request_bytes)
                )
            } else {
                format!(
                    "builds {} reaching {} B above the arena's start (the {} B scratch-request area included)",
                    plural(*temps, "temp tensor", "temp tensors"),
                    grouped(st.temp_bytes),
                    grouped(*request_bytes)
                )
            };
            format!(
                "{} Prepare {temps}; {kept}; {scratch}. It needs an arena of {} B.",
                op_name(r, *op),
                grouped(st.arena_bytes)
            )
        }
        StepEvent::PlanStart { planner, buffers } => format!(
            "The {planner} planner starts on {}: TFLM's AllocationInfo array and the planner's working memory take {} B below the {} B tail, so planning needs {} B.",
            plural(*buffers, "buffer", "buffers"),
            grouped(st.temp_bytes),
            grouped(st.tail_bytes),
            grouped(st.arena_bytes)
        ),
        StepEvent::Place {
            buffer,
            offset,
            bytes,
            fixed,
            gaps,
            more_gaps,
        } => {
            let b = r.buffers.get(*buffer);
            let life = b.map_or_else(String::new, |b| {
                format!(", alive at scopes {}–{}", b.first, b.last)
            });
            let head = format!(
                "{} ({} B{life}) placed at offset {}",
                buffer_name(r, *buffer),
                grouped(*bytes),
                grouped_i(*offset)
            );
            if *fixed {
                return format!("{head}: the model's offline plan fixes it there.");
            }
            if gaps.is_empty() {
                return if *offset == 0 {
                    format!("{head}: nothing alive at its scopes is below it.")
                } else {
                    format!("{head}: the lowest offset free at all its scopes.")
                };
            }
            let why = gaps
                .iter()
                .map(|g| {
                    format!(
                        "the {} B gap at {} (up to {})",
                        grouped(g.bytes),
                        grouped_i(g.offset),
                        buffer_name(r, g.blocker)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            let more = if *more_gaps > 0 {
                format!(" and {} more", plural(*more_gaps, "gap", "gaps"))
            } else {
                String::new()
            };
            format!("{head}: too big for {why}{more}.")
        }
        StepEvent::Invoke {
            op,
            scope,
            live_bytes,
            live_buffers,
            inputs,
            outputs,
            scratch,
            ..
        } => {
            let scratch = if scratch.is_empty() {
                String::new()
            } else {
                format!("; scratch {}", names(r, scratch))
            };
            format!(
                "{} runs at scope {scope}: {} live, {} B. Reads {}; writes {}{scratch}. Nothing is allocated.",
                op_name(r, *op),
                plural(*live_buffers, "buffer", "buffers"),
                grouped(*live_bytes),
                names(r, inputs),
                names(r, outputs)
            )
        }
    }
}

fn grouped_i(v: i64) -> String {
    crate::format::grouped_i(v)
}

/// The operator a step is about (index into `report.operators`).
pub fn step_op(st: &Step) -> Option<usize> {
    match &st.event {
        StepEvent::Tail { op, .. } => *op,
        StepEvent::Prepare { op, .. } | StepEvent::Invoke { op, .. } => Some(*op),
        _ => None,
    }
}

/// Width of the arena bar's user space.
pub const BAR_W: f64 = 1000.0;
/// Height of the arena bar's user space.
pub const BAR_H: f64 = 48.0;

/// The arena at a step as one bar, `scale` bytes wide (the final minimum):
/// what grows from the start (the request area and temps in Prepare, the
/// planner's memory while planning, the head once planned) and the tail
/// from the end, with the free bytes between them.
pub fn arena_bar(st: &Step, scale: u64) -> String {
    let scale = scale.max(st.arena_bytes).max(1) as f64;
    let x = |b: u64| b as f64 / scale * BAR_W;
    let mut s = String::new();
    let mut seg = |from: u64, to: u64, fill: &str, class: &str, label: &str| {
        if to <= from {
            return;
        }
        let (x0, w) = (x(from), x(to) - x(from));
        let _ = write!(
            s,
            r#"<rect class="{class}" x="{x0:.2}" y="4" width="{w:.2}" height="{}" fill="{fill}"><title>{}</title></rect>"#,
            BAR_H - 8.0,
            xml(label)
        );
    };
    let start: Vec<(u64, u64, &str, &str, String)> = match (&st.phase, &st.event) {
        (StepPhase::Prepare, StepEvent::Prepare { request_bytes, .. }) => vec![
            (
                0,
                *request_bytes,
                "#cbd5e1",
                "req",
                format!("scratch-request area {} B", grouped(*request_bytes)),
            ),
            (
                *request_bytes,
                st.temp_bytes,
                SCRATCH_FILL,
                "temp",
                format!(
                    "temp tensors {} B",
                    grouped(st.temp_bytes.saturating_sub(*request_bytes))
                ),
            ),
        ],
        (StepPhase::Plan, StepEvent::PlanStart { .. } | StepEvent::Place { .. }) => vec![(
            0,
            st.temp_bytes,
            "#cbd5e1",
            "temp",
            format!("planner memory {} B", grouped(st.temp_bytes)),
        )],
        (StepPhase::Finish | StepPhase::Invoke, _) => vec![(
            0,
            st.head_bytes,
            "#4f7cff",
            "head",
            format!("head {} B", grouped(st.head_bytes)),
        )],
        _ => Vec::new(),
    };
    for (a, b, f, c, l) in &start {
        seg(*a, *b, f, c, l);
    }
    let total = scale as u64;
    seg(
        total.saturating_sub(st.tail_bytes),
        total,
        "#94a3b8",
        "tail",
        &format!("tail {} B", grouped(st.tail_bytes)),
    );
    // The head being planned: an outline, not yet in the arena.
    if let (StepPhase::Plan, StepEvent::Place { .. }) = (&st.phase, &st.event) {
        let _ = write!(
            s,
            r##"<rect class="planned" x="0" y="1" width="{:.2}" height="{}" fill="none" stroke="#4f7cff" stroke-dasharray="6 3"><title>head placed so far {} B</title></rect>"##,
            x(st.head_bytes),
            BAR_H - 2.0,
            grouped(st.head_bytes)
        );
    }
    // Where this step's need ends, measured from the arena's start.
    let need = x(st.arena_bytes);
    let _ = write!(
        s,
        r##"<line class="need" x1="{need:.2}" x2="{need:.2}" y1="0" y2="{BAR_H}" stroke="#111827" stroke-width="2"/>"##
    );
    s
}

/// The Place steps from the planner's start to `at`, as buffer indices.
fn placed_until(s: &Steps, at: usize) -> Vec<usize> {
    s.steps
        .iter()
        .take(at.saturating_add(1))
        .filter_map(|st| match st.event {
            StepEvent::Place { buffer, .. } => Some(buffer),
            _ => None,
        })
        .collect()
}

fn rect(s: &mut String, g: &MapGeom, r: &Report, i: usize, extra: &str) {
    if let Some(b) = r.buffers.get(i) {
        let (x, y, w, h) = g.rect(b);
        let _ = write!(
            s,
            r#"<rect data-i="{i}" x="{x:.3}" y="{y:.3}" width="{w:.3}" height="{:.3}" fill="{}"{extra}/>"#,
            h.max(0.5),
            fill(b, is_variable(r, b))
        );
    }
}

fn outline(s: &mut String, g: &MapGeom, r: &Report, i: usize, class: &str) {
    if let Some(b) = r.buffers.get(i) {
        let (x, y, w, h) = g.rect(b);
        let _ = write!(
            s,
            r#"<rect class="{class}" data-i="{i}" x="{x:.3}" y="{y:.3}" width="{w:.3}" height="{:.3}"/>"#,
            h.max(0.5)
        );
    }
}

const VEIL: &str = r##"<rect class="veil" x="0" y="0" width="1000" height="1000" fill="#ffffff" fill-opacity="0.82"/>"##;

/// The arena map at step `at`: before the planner, the head is veiled (not
/// placed yet); while planning, the buffers placed so far, the one being
/// placed outlined and the gaps it could not use hatched; at Invoke, the
/// buffers live at the op's scope with its inputs, outputs and scratch
/// outlined. Map user space; set once per step through `innerHTML`.
pub fn map_overlay(r: &Report, s: &Steps, at: usize) -> String {
    let Some(st) = s.steps.get(at) else {
        return String::new();
    };
    let g = MapGeom::of(r);
    let mut out = String::new();
    match (&st.phase, &st.event) {
        (StepPhase::Build | StepPhase::Prepare, _)
        | (StepPhase::Plan, StepEvent::Tail { .. } | StepEvent::PlanStart { .. }) => {
            out.push_str(VEIL);
        }
        (
            StepPhase::Plan,
            StepEvent::Place {
                buffer,
                bytes,
                gaps,
                ..
            },
        ) => {
            out.push_str(VEIL);
            let placed = placed_until(s, at);
            for &i in &placed {
                rect(&mut out, &g, r, i, "");
            }
            if let Some(b) = r.buffers.get(*buffer) {
                let x = g.x(b.first);
                let w = g.x(b.last + 1) - x;
                for gap in gaps {
                    let top = g.y(gap.offset as f64 + gap.bytes as f64);
                    let h = g.y(gap.offset as f64) - top;
                    let _ = write!(
                        out,
                        r#"<rect class="gap" x="{x:.3}" y="{top:.3}" width="{w:.3}" height="{:.3}" fill="{PADDING_FILL}" fill-opacity="0.45"><title>{} B gap: too small for {} B</title></rect>"#,
                        h.max(0.8),
                        grouped(gap.bytes),
                        grouped(*bytes)
                    );
                }
            }
            outline(&mut out, &g, r, *buffer, "now");
        }
        (
            StepPhase::Invoke,
            StepEvent::Invoke {
                scope,
                inputs,
                outputs,
                scratch,
                ..
            },
        ) => {
            out.push_str(VEIL);
            for (i, b) in r.buffers.iter().enumerate() {
                if b.first <= *scope && *scope <= b.last {
                    rect(&mut out, &g, r, i, "");
                }
            }
            let x = g.x(*scope);
            let w = g.x(*scope + 1) - x;
            let _ = write!(
                out,
                r#"<rect class="scope" x="{x:.3}" y="0" width="{w:.3}" height="{MAP_H}"/>"#
            );
            for &i in inputs {
                outline(&mut out, &g, r, i, "in");
            }
            for &i in outputs {
                outline(&mut out, &g, r, i, "out");
            }
            for &i in scratch {
                outline(&mut out, &g, r, i, "scr");
            }
        }
        _ => {}
    }
    out
}

/// The lifetimes chart at step `at` (rows as `row_of` places buffers,
/// `row_h` apart, `height` tall): the buffer being placed, or the op's scope
/// column and its inputs, outputs and scratch.
pub fn lifetimes_overlay(
    r: &Report,
    s: &Steps,
    at: usize,
    row_of: &[usize],
    row_h: f64,
    height: f64,
) -> String {
    let Some(st) = s.steps.get(at) else {
        return String::new();
    };
    let g = MapGeom::of(r);
    let mut out = String::new();
    let mut row = |i: usize, class: &str| {
        // Rows outside the chart's window are `usize::MAX`.
        if let (Some(b), Some(&k)) = (
            r.buffers.get(i),
            row_of.get(i).filter(|&&k| k != usize::MAX),
        ) {
            let x = g.x(b.first);
            let w = g.x(b.last + 1) - x;
            let _ = write!(
                out,
                r#"<rect class="{class}" x="{x:.3}" y="{:.2}" width="{w:.3}" height="{row_h:.2}"/>"#,
                k as f64 * row_h
            );
        }
    };
    match &st.event {
        StepEvent::Place { buffer, .. } => row(*buffer, "now"),
        StepEvent::Invoke {
            scope,
            inputs,
            outputs,
            scratch,
            ..
        } => {
            for &i in inputs {
                row(i, "in");
            }
            for &i in outputs {
                row(i, "out");
            }
            for &i in scratch {
                row(i, "scr");
            }
            let x = g.x(*scope);
            let w = g.x(*scope + 1) - x;
            let _ = write!(
                out,
                r#"<rect class="scope" x="{x:.3}" y="0" width="{w:.3}" height="{height:.2}"/>"#
            );
        }
        _ => {}
    }
    out
}

/// The step a key moves to from `at`, or `None` when the key is not the
/// scrubber's: arrows one step, Page Up/Down one phase, Home/End the ends.
pub fn key_step(key: &str, at: usize, s: &Steps) -> Option<usize> {
    let last = s.steps.len().checked_sub(1)?;
    let spans = phase_spans(s);
    let current = spans
        .iter()
        .rposition(|p| p.first <= at)
        .unwrap_or_default();
    Some(match key {
        "ArrowRight" | "ArrowDown" => (at + 1).min(last),
        "ArrowLeft" | "ArrowUp" => at.saturating_sub(1),
        "Home" => 0,
        "End" => last,
        "PageDown" => spans.get(current + 1).map_or(last, |p| p.first),
        "PageUp" => match spans.get(current) {
            Some(p) if p.first < at => p.first,
            _ => current
                .checked_sub(1)
                .and_then(|k| spans.get(k))
                .map_or(0, |p| p.first),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;
    use microarena_core::build::example;
    use microarena_core::plan::PlannerKind;
    use microarena_core::{Config, Model, analyze};

    fn example() -> (Report, Steps) {
        let bytes = example::mobilenet_v1_025_96_int8();
        let model = Model::parse(&bytes).expect("parses");
        let config = Config {
            profile: &microarena_core::tflm::profile::PROFILES[0],
            planner: PlannerKind::TflmGreedy,
        };
        let a = analyze(&model, &config).expect("analyses");
        let r = Report::new(&model, &a, "m.tflite");
        (r, testing::steps())
    }

    #[test]
    fn phases_cover_every_step_in_order() {
        let (_, s) = example();
        let spans = phase_spans(&s);
        let phases: Vec<StepPhase> = spans.iter().map(|p| p.phase).collect();
        assert_eq!(phases, StepPhase::ALL);
        assert_eq!(spans.iter().map(|p| p.count).sum::<usize>(), s.steps.len());
        assert_eq!(spans[0].first, 0);
    }

    #[test]
    fn keys_move_by_step_phase_and_end() {
        let (_, s) = example();
        let spans = phase_spans(&s);
        let last = s.steps.len() - 1;
        assert_eq!(key_step("ArrowRight", 0, &s), Some(1));
        assert_eq!(key_step("ArrowLeft", 0, &s), Some(0));
        assert_eq!(key_step("End", 3, &s), Some(last));
        assert_eq!(key_step("Home", 3, &s), Some(0));
        assert_eq!(key_step("PageDown", 0, &s), Some(spans[1].first));
        assert_eq!(
            key_step("PageUp", spans[1].first + 2, &s),
            Some(spans[1].first)
        );
        assert_eq!(key_step("PageUp", spans[1].first, &s), Some(0));
        assert_eq!(key_step("x", 0, &s), None);
    }

    #[test]
    fn every_step_has_words_and_the_map_shows_what_it_should() {
        let (r, s) = example();
        for (i, st) in s.steps.iter().enumerate() {
            let text = describe(&r, st);
            assert!(!text.is_empty() && !text.contains("buffer 9999"), "{text}");
            let bar = arena_bar(st, s.steps.last().map_or(0, |l| l.minimum_bytes));
            assert!(bar.contains("class=\"need\""));
            let map = map_overlay(&r, &s, i);
            match st.phase {
                StepPhase::Build | StepPhase::Prepare => assert_eq!(map, VEIL),
                StepPhase::Invoke => {
                    assert!(map.contains("class=\"scope\""));
                    assert!(map.contains("class=\"out\""));
                }
                _ => {}
            }
        }
        // The last placement shows every buffer placed.
        let last_place = s
            .steps
            .iter()
            .rposition(|st| matches!(st.event, StepEvent::Place { .. }))
            .expect("placements");
        let map = map_overlay(&r, &s, last_place);
        assert_eq!(
            map.matches("<rect data-i=").count(),
            r.buffers.len(),
            "every buffer is drawn once placed"
        );
    }

    #[test]
    fn a_prepare_step_names_its_op_and_what_it_keeps() {
        let (r, s) = example();
        let st = s
            .steps
            .iter()
            .find(
                |st| matches!(&st.event, StepEvent::Prepare { opcode, .. } if opcode == "CONV_2D"),
            )
            .expect("a conv");
        let text = describe(&r, st);
        assert!(text.starts_with("#0 CONV_2D Prepare"), "{text}");
        assert!(text.contains("per-channel output multipliers"), "{text}");
    }
}
