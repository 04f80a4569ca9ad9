//! Compare two layouts: the report on screen beside another — the same
//! model on another target, its `optimize`d copy, or another model — side
//! by side and as a difference (core's `report::diff`, what `microarena
//! diff` prints), with a link that carries both layouts.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::diff::{self, Change, ReportDiff};
use microarena_core::report::{Report, share};
use microarena_core::tflm::profile::PROFILES;
use microarena_view::format::{grouped, grouped_i, truncate};
use microarena_view::svg::{self, MAP_H, MAP_W};

use super::{help, spacer, visible_rows};
use crate::io;
use crate::state::{CompareWith, Comparison};

/// Height of the taller of the two maps (px); the other is to scale.
const MAP_PX: f64 = 260.0;

/// The compare panel.
pub(super) fn compare_view(
    r: Arc<Report>,
    shared: bool,
    compare: Callback<CompareWith>,
) -> impl IntoView {
    let cmp = Comparison::get();
    let others: Vec<&'static str> = PROFILES
        .iter()
        .map(|p| p.name)
        .filter(|&n| n != r.target)
        .collect();
    let target = RwSignal::new(others.first().copied().unwrap_or_default().to_string());
    let options = others
        .iter()
        .map(|&n| view! { <option value=n>{n}</option> })
        .collect_view();
    let on_pick = move |ev: web_sys::Event| {
        let Some(file) = io::picked_file(&ev) else {
            return;
        };
        cmp.busy.set(Some(format!("Reading {}…", file.name())));
        leptos::task::spawn_local(async move {
            match io::read_file(&file).await {
                Ok(bytes) => compare.run(CompareWith::Model(file.name(), bytes)),
                Err(e) => {
                    cmp.busy.set(None);
                    cmp.error.set(Some(e));
                }
            }
        });
    };
    let r2 = r.clone();
    let result = move || {
        let other = cmp.other.get()?;
        Some(comparison(r2.clone(), other, cmp))
    };
    view! {
        <section class="panel compare" data-testid="compare-panel">
            <div class="panel-head">
                <h2>
                    "Compare two layouts "
                    {help("The layout on screen beside another: the same model on another target, the model `microarena optimize` writes from it, or another model (a re-trained or re-quantized one). Side by side and as a difference: core's report::diff, what `microarena diff` prints.")}
                </h2>
                <div class="controls">
                    <select
                        aria-label="Target to compare with"
                        data-testid="compare-target"
                        disabled=shared
                        on:change=move |ev| target.set(event_target_value(&ev))
                    >
                        {options}
                    </select>
                    <button
                        class="button"
                        data-testid="compare-target-go"
                        disabled=shared
                        on:click=move |_| compare.run(CompareWith::Target(target.get_untracked()))
                    >
                        "On that target"
                    </button>
                    <button
                        class="button"
                        data-testid="compare-optimized"
                        disabled=shared
                        on:click=move |_| compare.run(CompareWith::Optimized)
                    >
                        "With its optimized copy"
                    </button>
                    <label class="button open" class:disabled=shared>
                        <input
                            type="file"
                            accept=".tflite,application/octet-stream"
                            data-testid="compare-input"
                            disabled=shared
                            on:change=on_pick
                        />
                        "With another model…"
                    </label>
                </div>
            </div>
            {move || cmp.busy.get().map(|b| view! { <p class="muted" data-testid="compare-busy">{b}</p> })}
            {move || cmp.error.get().map(|e| view! { <p class="banner error" role="alert" data-testid="compare-error">{e}</p> })}
            {result}
        </section>
    }
}

fn side(r: &Report, head_max: u64, testid: &'static str) -> impl IntoView + use<> {
    let h = (MAP_PX * r.arena.head_bytes as f64 / head_max.max(1) as f64).max(24.0);
    let body = svg::map_body(r);
    view! {
        <div class="compare-side">
            <div class="compare-title">
                <strong>{r.model.file.clone()}</strong>
                {format!(" · {} · {}", r.target, r.planner)}
            </div>
            <div class="muted">
                {format!(
                    "head {} B · tail {} B · total {} B · minimum {} B",
                    grouped(r.arena.head_bytes),
                    grouped(r.arena.tail_bytes),
                    grouped(r.arena.total_bytes),
                    grouped(r.arena.minimum_bytes),
                )}
            </div>
            <div class="compare-map-box" style=format!("height:{MAP_PX}px")>
                <svg
                    class="map compare-map"
                    data-testid=testid
                    data-head=r.arena.head_bytes.to_string()
                    viewBox=format!("0 0 {MAP_W} {MAP_H}")
                    preserveAspectRatio="none"
                    style=format!("height:{h:.0}px")
                    role="img"
                    aria-label=format!("arena map of {}", r.model.file)
                    inner_html=body
                ></svg>
            </div>
        </div>
    }
}

fn change_row(c: &Change, testid: &'static str) -> impl IntoView + use<> {
    let num = |v: Option<u64>| v.map_or_else(String::new, |b| b.to_string());
    let text = |v: Option<u64>| v.map_or_else(|| "–".to_string(), |b| format!("{} B", grouped(b)));
    let delta = c.delta_bytes;
    let class = match delta {
        Some(d) if d > 0 => "grew",
        Some(d) if d < 0 => "shrank",
        _ => "",
    };
    view! {
        <tr
            data-testid=testid
            data-name=c.name.clone()
            data-old=num(c.old_bytes)
            data-new=num(c.new_bytes)
            data-delta=delta.map_or_else(String::new, |d| d.to_string())
        >
            <td class="name" title=c.name.clone()>{truncate(&c.name, 60)}</td>
            <td class="r mono">{text(c.old_bytes)}</td>
            <td class="r mono">{text(c.new_bytes)}</td>
            <td class=format!("r mono {class}")>
                {delta.map_or_else(
                    || "added/removed".to_string(),
                    |d| if d > 0 { format!("+{} B", grouped(d as u64)) } else { format!("{} B", grouped_i(d)) },
                )}
            </td>
        </tr>
    }
}

fn table(title: &'static str, rows: impl IntoView, testid: &'static str) -> impl IntoView {
    view! {
        <table class="compact" data-testid=testid>
            <thead>
                <tr>
                    <th>{title}</th>
                    <th class="r">"old"</th>
                    <th class="r">"new"</th>
                    <th class="r">"change"</th>
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

fn comparison(old: Arc<Report>, new: Arc<Report>, cmp: Comparison) -> impl IntoView {
    let d: Arc<ReportDiff> = Arc::new(diff::diff(&old, &new));
    let head_max = old.arena.head_bytes.max(new.arena.head_bytes);
    let figures = d
        .figures
        .iter()
        .map(|c| change_row(c, "compare-figure"))
        .collect_view();
    let tail = if d.tail.is_empty() {
        view! { <p class="muted">"No tail category changed."</p> }.into_any()
    } else {
        table(
            "tail category",
            d.tail
                .iter()
                .map(|c| change_row(c, "compare-tail"))
                .collect_view(),
            "compare-tail-table",
        )
        .into_any()
    };
    let scroll = RwSignal::new(0.0f64);
    let d2 = d.clone();
    let tensors = move || {
        let w = visible_rows(d2.tensors.len(), scroll.get());
        let (above, below) = (spacer(w.above, 4), spacer(w.below, 4));
        let rows = d2.tensors[w.start..w.end]
            .iter()
            .map(|c| change_row(c, "compare-tensor"))
            .collect_view();
        view! { {above} {rows} {below} }
    };
    let n_tensors = d.tensors.len();
    let url = format!("{}#{}", io::base_url(), share::compare_fragment(&old, &new));
    let copy = url.clone();
    let json = serde_json::to_string_pretty(&*d).unwrap_or_default() + "\n";
    let stem = |r: &Report| {
        r.model
            .file
            .strip_suffix(".tflite")
            .unwrap_or(&r.model.file)
            .to_string()
    };
    let json_name = format!("{}-vs-{}.diff.json", stem(&old), stem(&new));
    view! {
        <div
            class="compare-body"
            data-testid="compare"
            data-new-file=new.model.file.clone()
            data-new-target=new.target.clone()
        >
            <div class="compare-sides">
                {side(&old, head_max, "compare-old")}
                <div class="compare-arrow" aria-hidden="true">"→"</div>
                {side(&new, head_max, "compare-new")}
            </div>
            <div class="grid2">
                <div>
                    <h3>"Figures"</h3>
                    {table("figure", figures, "compare-figures")}
                    <h3>"Tail categories that changed"</h3>
                    {tail}
                </div>
                <div>
                    <h3>{format!("Head tensors that changed ({n_tensors})")}</h3>
                    <div class="table-wrap" tabindex="0" role="region" aria-label="Head tensors that changed" on:scroll=move |ev| scroll.set(io::scroll_top(&ev))>
                        {table("tensor", tensors, "compare-tensors")}
                    </div>
                </div>
            </div>
            <div class="share">
                <a class="share-url" data-testid="compare-link" href=url.clone() title="comparison link">
                    {format!("{} chars · {}", url.len(), truncate(&url, 64))}
                </a>
                <button class="button" on:click=move |_| io::copy_to_clipboard(&copy)>"Copy link"</button>
                <button
                    class="button"
                    data-testid="compare-json"
                    on:click=move |_| io::download_text(&json, "application/json", &json_name)
                >
                    "Export diff JSON"
                </button>
                <button class="button" on:click=move |_| cmp.other.set(None)>"Close"</button>
            </div>
            <p class="muted">
                "The link carries both layouts, never the models. Exported JSON is `microarena diff --json` for the same two inputs."
            </p>
        </div>
    }
}
