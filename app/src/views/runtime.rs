//! The microarena-runtime panel: the arena each execution mode needs against
//! TFLM's minimum, with the `run` flags that select it, and a patch view of
//! every banded stage. Every figure is `report.runtime`'s.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::{BandedStageInfo, Report};
use microarena_view::format::{grouped, percent, signed_bytes};
use microarena_view::runtime::{modes, stage_ops};
use microarena_view::svg::{self, PATCH_H, PATCH_W};

use super::glossary::{TIP_BANDS, TIP_OPDATA_FLASH};
use super::help;
use crate::state::{Pointer, Sel};

const TIP_RUNTIME: &str = "microarena-runtime runs the model from a program image core writes, in exactly the arena shown here (its measured high-water equals this prediction in the tests and on the Cortex-M4 under QEMU). Each mode is chosen with `microarena run` flags; the firmware uses the smallest.";

/// The microarena-runtime panel.
pub(super) fn runtime_view(r: Arc<Report>) -> impl IntoView {
    let body = match (&r.runtime, &r.runtime_refusal) {
        (Some(rt), _) => {
            let banded = rt.banded.as_ref().map(|b| {
                let stages = b
                    .stages
                    .iter()
                    .map(|st| stage_view(&r, st, b.extra_macs, b.stages.len() > 1))
                    .collect_view();
                view! {
                    <h3>
                        {format!("Patch-based execution: {}", b.stages_summary())}
                        " "
                        {help(TIP_BANDS)}
                    </h3>
                    <p class="muted">
                        {format!(
                            "Head {} B banded · rings {} B · +{} MACs: rows are kept in rings, never recomputed.",
                            grouped(b.head_bytes),
                            grouped(b.ring_bytes()),
                            grouped(b.extra_macs),
                        )}
                    </p>
                    {stages}
                }
            });
            let no_stage = rt.banded.is_none().then(|| {
                view! {
                    <p class="muted" data-testid="runtime-no-bands">
                        "No patch-based mode: no chain of windowed ops (CONV_2D, DEPTHWISE_CONV_2D, pooling) over the busiest step lowers the head by more than the stack a stage costs, so row bands would not save RAM here."
                    </p>
                }
            });
            view! {
                {modes_table(&r)}
                {no_stage}
                {banded}
            }
            .into_any()
        }
        (None, Some(why)) => view! {
            <p class="note" data-testid="runtime-refusal">
                {format!("microarena-runtime cannot run this model: {why}")}
            </p>
        }
        .into_any(),
        (None, None) => view! {
            <p class="muted" data-testid="runtime-refusal">
                "This layout carries no microarena-runtime figures."
            </p>
        }
        .into_any(),
    };
    view! {
        <section class="panel runtime" data-testid="runtime-panel">
            <div class="panel-head">
                <h2>"microarena-runtime " {help(TIP_RUNTIME)}</h2>
                <span class="muted">
                    {format!("against TFLM's minimum working arena of {} B", grouped(r.arena.minimum_bytes))}
                </span>
            </div>
            {body}
        </section>
    }
}

/// One row per mode: name, what changes, flags, arena and the gap to TFLM.
fn modes_table(r: &Report) -> impl IntoView + use<> {
    let file = r.model.file.clone();
    let minimum = r.arena.minimum_bytes;
    let rows = modes(r)
        .into_iter()
        .map(|m| {
            let command = format!("microarena run {file} --input IN.bin {}", m.flags)
                .trim_end()
                .to_string();
            let saving = u64::try_from(-m.delta_bytes).unwrap_or(0);
            let smaller = saving > 0;
            view! {
                <tr
                    data-testid="runtime-mode"
                    data-mode=m.key
                    data-bytes=m.total_bytes.to_string()
                    data-delta=m.delta_bytes.to_string()
                >
                    <td>
                        <div class="mode-name">
                            {m.name}
                            {(m.key == "opdata-flash").then(|| help(TIP_OPDATA_FLASH))}
                        </div>
                        <div class="muted small">{m.detail}</div>
                    </td>
                    <td class="mono small flags">
                        {if m.flags.is_empty() { "(default)" } else { m.flags }}
                        <div class="muted" title=command.clone()>{command.clone()}</div>
                    </td>
                    <td class="r mono">{format!("{} B", grouped(m.total_bytes))}</td>
                    <td class="r mono" class:saving=smaller>
                        {signed_bytes(m.delta_bytes)}
                        {smaller.then(|| view! { <div class="muted small">{format!("{} less", percent(saving, minimum))}</div> })}
                    </td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <table class="compact runtime-modes">
            <thead>
                <tr>
                    <th>"mode"</th>
                    <th>"microarena run flags"</th>
                    <th class="r">"arena"</th>
                    <th class="r">"vs TFLM's minimum"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

/// A stage: its ops as a chain, the band grid, rings and MACs, and the
/// picture of one band's receptive field.
fn stage_view(
    r: &Report,
    st: &BandedStageInfo,
    extra_macs: u64,
    several: bool,
) -> impl IntoView + use<> {
    let ctx = Pointer::get();
    let chain = stage_ops(r, st)
        .into_iter()
        .enumerate()
        .map(|(k, (index, opcode))| {
            let row = r
                .operators
                .iter()
                .position(|o| o.subgraph == 0 && o.index == index);
            view! {
                {(k > 0).then(|| view! { <span class="arrow" aria-hidden="true">"→"</span> })}
                <button
                    class="op-chip"
                    data-op=index.to_string()
                    title="select this op in the other views"
                    on:click=move |_| ctx.sel.set(row.map(Sel::Op))
                >
                    <span class="mono">{format!("#{index}")}</span>
                    " "
                    {opcode}
                </button>
            }
        })
        .collect_view();
    view! {
        <div
            class="stage"
            data-testid="banded-stage"
            data-first-op=st.first_op.to_string()
            data-last-op=st.last_op.to_string()
            data-bands=st.bands.to_string()
            data-ring-bytes=st.ring_bytes.to_string()
            data-input-rows=st.input_rows.to_string()
            data-field-first=st.field_first.to_string()
            data-field-end=st.field_end.to_string()
            data-over-input=st.over_input.to_string()
        >
            <div class="stage-text">
                <div class="muted small">"run per band, in order:"</div>
                <div class="chain">{chain}</div>
                <dl class="figures">
                    <dt>"grid"</dt>
                    <dd class="mono">{format!("{} × 1 bands (one output row each, full width)", st.bands)}</dd>
                    <dt>"output"</dt>
                    <dd class="mono">
                        {if st.over_input {
                            "written over the stage's input, row by row behind the rows still to be read (the input is consumed)"
                        } else {
                            "its own buffer beside the stage's input"
                        }}
                    </dd>
                    <dt>"rings"</dt>
                    <dd class="mono">{format!("{} B (per streamed tensor, the rows between its readers' windows)", grouped(st.ring_bytes))}</dd>
                    // The report counts extra MACs for all stages together.
                    <dt>{if several { "extra MACs (all stages)" } else { "extra MACs" }}</dt>
                    <dd class="mono">{grouped(extra_macs)}</dd>
                    <dt>"receptive field"</dt>
                    <dd class="mono">
                        {format!(
                            "band {} reads input rows {}–{} of {}",
                            st.field_band(),
                            st.field_first,
                            st.field_end.saturating_sub(1),
                            st.input_rows,
                        )}
                    </dd>
                </dl>
            </div>
            <svg
                class="patch"
                data-testid="patch-svg"
                viewBox=format!("0 0 {PATCH_W} {PATCH_H}")
                role="img"
                aria-label="one band's receptive field on the stage's input"
            >
                <g inner_html=svg::patch_body(st)></g>
            </svg>
        </div>
    }
}
