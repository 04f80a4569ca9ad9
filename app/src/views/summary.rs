//! The summary panel.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::plan::PlannerKind;
use microarena_core::report::share;
use microarena_core::report::{Region, Report};
use microarena_core::tflm::profile::PROFILES;
use microarena_view::format::{grouped, human, percent, truncate};
use microarena_view::protocol::Extras;
use microarena_view::svg;

use super::glossary::{TIP_HEAD, TIP_LB, TIP_MIN, TIP_PEAK, TIP_TAIL, TIP_TOTAL};
use super::help;
use crate::io;
use crate::state::Controls;

fn num(testid: &'static str, bytes: u64) -> impl IntoView {
    view! {
        <span class="num" data-testid=testid data-bytes=bytes.to_string()>
            {bytes.to_string()}
        </span>
    }
}

fn card(
    label: &'static str,
    tip: &'static str,
    testid: &'static str,
    bytes: u64,
    sub: String,
    accent: &'static str,
) -> impl IntoView {
    view! {
        <div class=format!("card {accent}")>
            <div class="label">{label} {help(tip)}</div>
            <div class="value">{num(testid, bytes)} <span class="unit">" B"</span></div>
            <div class="sub">{human(bytes)} " · " {sub}</div>
        </div>
    }
}

/// The summary panel: target and planner, the headline figures, the
/// runtime and variables lines, every planner on these buffers, the share
/// link, the advice and the diagnostics.
pub(super) fn summary(r: Arc<Report>, shared: bool, c: Controls) -> impl IntoView {
    let Controls {
        target,
        planner,
        replan,
        extras,
        ..
    } = c;
    let a = &r.arena;
    let gap = a.head_bytes.saturating_sub(a.lower_bound_bytes);
    let peak = a
        .peak_op
        .map(|i| format!("#{i} {}", a.peak_opcode.clone().unwrap_or_default()))
        .unwrap_or_else(|| "–".into());
    let lb = a.lower_bound_bytes;
    let r_json = r.clone();
    let r_cmp = r.clone();
    // Which TFLM build the target's figures were compared with (CLI and JSON say the same).
    let measured = r.target_measured_against.as_ref().map_or_else(
        || "derived, not measured".to_string(),
        |b| format!("measured against {b}"),
    );
    let stem = r
        .model
        .file
        .strip_suffix(".tflite")
        .unwrap_or(&r.model.file)
        .to_string();

    view! {
        <section class="panel summary" data-testid="summary" data-file=r.model.file.clone()>
            <div class="panel-head">
                <h2>"Summary"</h2>
                <div class="controls">
                    <label>
                        "Target "
                        <select
                            data-testid="target-select"
                            disabled=shared
                            on:change=move |ev| {
                                target.set(event_target_value(&ev));
                                replan.run(());
                            }
                        >
                            {PROFILES
                                .iter()
                                .map(|p| {
                                    let n = p.name;
                                    view! {
                                        <option
                                            value=n
                                            title=p.description
                                            selected=move || target.get() == n
                                        >
                                            {n}
                                        </option>
                                    }
                                })
                                .collect_view()}
                        </select>
                        <span class="target-measured" data-testid="target-measured">
                            {measured}
                        </span>
                    </label>
                    <label>
                        "Planner "
                        <select
                            data-testid="planner-select"
                            disabled=shared
                            on:change=move |ev| {
                                planner.set(event_target_value(&ev));
                                replan.run(());
                            }
                        >
                            {PlannerKind::ALL
                                .iter()
                                .map(|k| {
                                    let n = k.name();
                                    view! {
                                        <option value=n selected=move || planner.get() == n>
                                            {n}
                                        </option>
                                    }
                                })
                                .collect_view()}
                        </select>
                    </label>
                    <button
                        class="button"
                        on:click=move |_| {
                            let text = serde_json::to_string_pretty(&*r_json).unwrap_or_default();
                            io::download_text(
                                &format!("{text}\n"),
                                "application/json",
                                &format!("{stem}.microarena.json"),
                            );
                        }
                    >
                        "Export JSON"
                    </button>
                </div>
            </div>
            {shared
                .then(|| {
                    view! {
                        <p class="note">
                            "Opened from a share link: this is the layout someone else computed. The model itself was never shared, so the target and planner cannot be changed here."
                        </p>
                    }
                })}
            <div class="cards">
                {card("Head", TIP_HEAD, "arena-head", a.head_bytes, format!("planner {}", r.planner), "blue")}
                {card("Tail", TIP_TAIL, "arena-tail", a.tail_bytes, format!("{} categories", r.tail.len()), "slate")}
                {card("Total", TIP_TOTAL, "arena-total", a.total_bytes, "what TFLM reports".into(), "indigo")}
                {card("Minimum working arena", TIP_MIN, "arena-minimum", a.minimum_bytes, format!("set by {}", a.minimum_phase), "green")}
                {card("Lower bound (head)", TIP_LB, "lower-bound", a.lower_bound_bytes, format!("gap {} B ({})", grouped(gap), percent(gap, a.head_bytes)), "amber")}
                <div class="card rose">
                    <div class="label">"Peak op " {help(TIP_PEAK)}</div>
                    <div class="value small" data-testid="peak-op" data-op=a.peak_op.map(|i| i.to_string()).unwrap_or_default()>
                        {peak}
                    </div>
                    <div class="sub">{format!("scope {} of {}", a.peak_scope, a.max_scope)}</div>
                </div>
            </div>
            // The same model on microarena-runtime: its arena comes from core's
            // `lower::runtime_arena`, the function the firmware build sizes its arena with.
            <p class="note runtime-line" data-testid="runtime-total" data-bytes=r.runtime.as_ref().map(|rt| rt.total_bytes.to_string()).unwrap_or_default()>
                {match (&r.runtime, &r.runtime_refusal) {
                    (Some(rt), _) => format!(
                        "microarena-runtime needs {} B for this model (head {} + tail {} B{}) — {} B less than TFLM's minimum working arena.{}",
                        grouped(rt.total_bytes),
                        grouped(rt.head_bytes),
                        grouped(rt.tail_bytes),
                        if rt.variable_bytes > 0 { format!(", of which {} B variable state", grouped(rt.variable_bytes)) } else { String::new() },
                        grouped(a.minimum_bytes.saturating_sub(rt.total_bytes)),
                        if rt.opdata_bytes > 0 {
                            format!(" With its OpData in flash: {} B.", grouped(rt.total_with_opdata_in_flash()))
                        } else {
                            String::new()
                        },
                    ),
                    (None, Some(why)) => format!("microarena-runtime cannot run this model: {why}"),
                    (None, None) => "microarena-runtime: no figure for this layout.".into(),
                }}
            </p>
            {variables_line(&r)}
            <div class="row2">
                <div>
                    <h3>"Planners on these buffers " {help(TIP_LB)}</h3>
                    <table class="compact">
                        <thead>
                            <tr><th>"planner"</th><th class="r">"head (B)"</th><th class="r">"gap to lower bound"</th></tr>
                        </thead>
                        <tbody>
                            {move || {
                                let Some(x) = extras.get() else {
                                    return view! {
                                        <tr><td class="muted" colspan="3">"comparing planners…"</td></tr>
                                    }
                                    .into_any();
                                };
                                let shown_planner = r_cmp.planner.clone();
                                x.planners
                                .iter()
                                .map(|p| {
                                    let cur = p.planner == shown_planner;
                                    let name = format!("{}{}", p.planner, if cur { " (shown)" } else { "" });
                                    match &p.head {
                                        Ok(h) => view! {
                                            <tr class:current=cur>
                                                <td>{name}</td>
                                                <td class="r mono">{grouped(*h)}</td>
                                                <td class="r mono">
                                                    {format!("{} B ({})", grouped(h.saturating_sub(lb)), percent(h.saturating_sub(lb), *h))}
                                                </td>
                                            </tr>
                                        }
                                        .into_any(),
                                        Err(e) => view! {
                                            <tr>
                                                <td>{name}</td>
                                                <td class="muted refused" colspan="2">{format!("refused: {e}")}</td>
                                            </tr>
                                        }
                                        .into_any(),
                                    }
                                })
                                .collect_view()
                                .into_any()
                            }}
                        </tbody>
                    </table>
                </div>
                <div>
                    <h3>"Share this layout"</h3>
                    <p class="muted">
                        "The link holds the computed layout only — never the model or its weights."
                    </p>
                    {move || match extras.get() {
                        Some(x) => {
                            let url = format!(
                                "{}#{}{}",
                                io::base_url(),
                                share::FRAGMENT_KEY,
                                x.share_code,
                            );
                            let copy = url.clone();
                            view! {
                                <div class="share">
                                    <a class="share-url" data-testid="share-link" href=url.clone() title="share link">
                                        {format!("{} chars · {}", url.len(), truncate(&url, 64))}
                                    </a>
                                    <button class="button" on:click=move |_| io::copy_to_clipboard(&copy)>
                                        "Copy link"
                                    </button>
                                </div>
                            }
                            .into_any()
                        }
                        None => view! { <div class="share muted">"packing the link…"</div> }.into_any(),
                    }}
                </div>
            </div>
            {advice_view(extras, r.model.file.clone())}
            {diagnostics(&r)}
        </section>
    }
}

/// "variables: N tensors, B bytes" under the summary cards.
fn variables_line(r: &Report) -> impl IntoView + use<> {
    let n = r.variables.len();
    let bytes: u64 = r.variables.iter().map(|v| v.bytes).sum();
    let in_head = r
        .variables
        .iter()
        .filter(|v| v.region == Region::Head)
        .count();
    let text = if n == 0 {
        "variables: none (no LSTM/SVDF state in this model)".to_string()
    } else {
        format!(
            "variables: {n} tensor{}, {} bytes — LSTM/SVDF state, a region of its own that {}",
            if n == 1 { "" } else { "s" },
            grouped(bytes),
            if in_head == 0 {
                "TFLM keeps in the tail for the whole life of the interpreter".to_string()
            } else {
                format!(
                    "lives for the whole life of the interpreter ({in_head} placed in the head by the offline plan)"
                )
            },
        )
    };
    view! {
        <p
            class="vars-line"
            class:muted=n == 0
            data-testid="variables-summary"
            data-count=n.to_string()
            data-bytes=bytes.to_string()
        >
            {(n > 0).then(|| view! { <i style=format!("background:{}", svg::VARIABLE_FILL)></i> })}
            {text}
        </p>
    }
}

/// Measured ways to need fewer bytes, as `microarena plan` lists them.
fn advice_view(extras: RwSignal<Option<Arc<Extras>>>, file: String) -> impl IntoView {
    move || {
        let x = extras.get()?;
        if x.advice.is_empty() {
            return None;
        }
        let rows = x
            .advice
            .iter()
            .map(|a| {
                let command = a.try_args.as_ref().map(|args| {
                    let (cmd, rest) = args.split_once(' ').unwrap_or((args, ""));
                    format!("microarena {cmd} {file} {rest}")
                });
                view! {
                    <tr data-testid="advice-row" data-figure=a.figure.clone() data-to=a.to_bytes.to_string()>
                        <td class="r mono saving">{format!("−{} B", grouped(a.saving_bytes()))}</td>
                        <td class="mono">{format!("{} {} → {} B", a.figure, grouped(a.from_bytes), grouped(a.to_bytes))}</td>
                        <td>
                            {a.action.clone()}
                            {command.map(|c| view! { <div class="muted mono small">{c}</div> })}
                        </td>
                    </tr>
                }
            })
            .collect_view();
        Some(view! {
            <div class="advice" data-testid="advice">
                <h3>"Ways to need fewer bytes"</h3>
                <p class="muted">
                    "Each one measured by re-planning the changed model with the same core code as the CLI; nothing is estimated."
                </p>
                <table class="compact">
                    <tbody>{rows}</tbody>
                </table>
            </div>
        })
    }
}

/// Most places listed under an unfolded group at once.
const PLACES_SHOWN: usize = 500;

fn diagnostics(r: &Report) -> impl IntoView + use<> {
    let groups = microarena_view::diagnostics::group(&r.diagnostics);
    (!groups.is_empty()).then(|| {
        view! {
            <ul class="diagnostics" data-testid="diagnostics" data-count=r.diagnostics.len().to_string()>
                {groups
                    .into_iter()
                    .map(|g| {
                        let n = g.items.len();
                        if n == 1 {
                            return view! {
                                <li class=format!("diag {}", g.severity)>
                                    <span class="sev">{g.severity.clone()}</span>
                                    {g.text.clone()}
                                </li>
                            }
                            .into_any();
                        }
                        let open = RwSignal::new(false);
                        let places = g.places.clone();
                        let list = move || {
                            open.get()
                                .then(|| {
                                    let more = places.len().saturating_sub(PLACES_SHOWN);
                                    view! {
                                        <ul class="diag-places" data-testid="diag-places">
                                            {places
                                                .iter()
                                                .take(PLACES_SHOWN)
                                                .map(|p| match p {
                                                    Some((g, i)) if *g == 0 => format!("op {i}"),
                                                    Some((g, i)) => format!("subgraph {g} op {i}"),
                                                    None => "–".into(),
                                                })
                                                .map(|t| view! { <li>{t}</li> })
                                                .collect_view()}
                                            {(more > 0).then(|| view! { <li class="muted">{format!("… and {more} more")}</li> })}
                                        </ul>
                                    }
                                })
                        };
                        let opcode = g.opcode.clone().unwrap_or_default();
                        view! {
                            <li
                                class=format!("diag {} group", g.severity)
                                data-testid="diag-group"
                                data-count=n.to_string()
                                data-opcode=opcode.clone()
                            >
                                <details on:toggle=move |ev| open.set(io::details_open(&ev))>
                                    <summary>
                                        <span class="sev">{g.severity.clone()}</span>
                                        <span class="count">{format!("{}× {opcode}", grouped(n as u64))}</span>
                                        {g.text.clone()}
                                    </summary>
                                    {list}
                                </details>
                            </li>
                        }
                        .into_any()
                    })
                    .collect_view()}
            </ul>
        }
    })
}
