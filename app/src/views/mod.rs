//! The views: [`App`] loads models and share links and lays out one
//! component per view. They hold core's types in signals, call core for
//! every figure and only arrange and format; browser IO goes through
//! [`crate::io`], analysis through [`crate::worker`].

mod arena_map;
mod budget;
mod buffer_table;
mod compare;
mod flash;
mod glossary;
mod lessons;
mod lifetimes;
mod measured;
mod npu;
mod op_bars;
mod op_table;
mod overview;
mod runtime;
mod steps;
mod summary;
mod tail;
mod tooltip;
mod whatif;

use std::rc::Rc;
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use microarena_core::build::example;
use microarena_core::report::share;
use microarena_view::protocol::{Extras, PlannerHead, Want};
use microarena_view::window::{RowWindow, ScopeWindow, row_window};

use crate::state::{AppState, CompareWith, Controls, Shown, Tour, Window};
use crate::worker::{Analyzer, Job, Line, Reply};
use crate::{hooks, io};

const EXAMPLE_NAME: &str = "mobilenet_v1_025_96_int8.tflite";

/// Models with more head buffers than this show their figures a frame before the map.
const STAGED_BUFFERS: usize = 500;

/// Models with more scopes than this get the overview strip and its scope window.
const OVERVIEW_SCOPES: i32 = 60;

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let st = AppState::new();
    let AppState {
        shown,
        error,
        busy,
        target,
        planner,
        budget,
        dragging,
        map,
        rest,
        extras,
        model,
        started,
        overrides,
        whatif_error,
        pointer,
        stepper,
        comparison,
    } = st;
    provide_context(pointer);
    provide_context(stepper);
    provide_context(comparison);
    let tour = Tour(RwSignal::new(None));
    provide_context(tour);

    let analyzer = StoredValue::new_local(Analyzer::new(move |reply| {
        let res = match reply {
            Reply::Report(res) => res,
            Reply::Extras(x) => {
                extras.set(Some(Arc::new(x)));
                return;
            }
            Reply::Steps(res) => {
                stepper.loading.set(false);
                match res {
                    Ok(s) => {
                        stepper.at.set(0);
                        stepper.error.set(None);
                        stepper.steps.set(Some(s));
                    }
                    Err(e) => stepper.error.set(Some(e)),
                }
                return;
            }
            Reply::Compare(res) => {
                comparison.busy.set(None);
                match res {
                    Ok(r) => {
                        comparison.error.set(None);
                        comparison.other.set(Some(r));
                    }
                    Err(e) => comparison.error.set(Some(e)),
                }
                return;
            }
            Reply::WhatIfError(e) => {
                // The shown report stays; later re-plans use its shapes again.
                busy.set(None);
                whatif_error.set(Some(e));
                overrides.set_value(
                    shown
                        .get_untracked()
                        .and_then(|s| s.report.what_if.as_ref().map(|w| w.input_shapes.clone()))
                        .unwrap_or_default(),
                );
                return;
            }
        };
        busy.set(None);
        match res {
            Ok((report, inputs)) => {
                error.set(None);
                whatif_error.set(None);
                pointer.sel.set(None);
                pointer.hover.set(None);
                stepper.reset();
                comparison.reset();
                let example =
                    model.with_value(|m| m.as_ref().is_some_and(|(n, _)| n == EXAMPLE_NAME));
                // The numbers and the map first, the rest of the views a frame
                // later, so a big model never blocks the page in one long task;
                // a large model's map waits one more frame, so its figures show
                // at once.
                let staged = report.buffers.len() > STAGED_BUFFERS;
                map.set(!staged);
                rest.set(false);
                extras.set(None);
                shown.set(Some(Arc::new(Shown {
                    report,
                    shared: false,
                    example,
                    inputs,
                })));
                let t0 = started.get_value();
                let then_rest = move || {
                    hooks::publish_timing("mapMs", io::now_ms() - t0);
                    rest.set(true);
                    io::after_paint(move || {
                        hooks::publish_timing("renderMs", io::now_ms() - t0);
                        hooks::bump_seq();
                    });
                };
                io::after_paint(move || {
                    hooks::publish_timing("numbersMs", io::now_ms() - t0);
                    if staged {
                        map.set(true);
                        io::after_paint(then_rest);
                    } else {
                        then_rest();
                    }
                });
            }
            Err(e) => error.set(Some(e)),
        }
    }));
    let worker_text = analyzer.with_value(|a| a.label());

    // The job for the model on screen, as the controls stand.
    let job = move |want: Want| {
        model.get_value().map(|(name, bytes)| Job {
            bytes,
            name,
            target: target.get_untracked(),
            planner: planner.get_untracked(),
            input_shapes: overrides.get_value(),
            want,
        })
    };
    let run = move || {
        let Some(job) = job(Want::Plan) else {
            return;
        };
        busy.set(Some(format!("Analysing {}…", job.name)));
        analyzer.with_value(|a| a.request(Line::Main, job));
    };
    let compare_with = move |with: CompareWith| {
        let Some(mut job) = job(Want::Report) else {
            return;
        };
        let busy = match with {
            CompareWith::Target(t) => {
                let b = format!("Planning {} for {t}…", job.name);
                job.target = t;
                b
            }
            CompareWith::Optimized => {
                job.want = Want::Optimized;
                job.input_shapes = Vec::new();
                format!(
                    "Optimizing {} (best offsets, as `microarena optimize`)…",
                    job.name
                )
            }
            CompareWith::Model(name, bytes) => {
                job.name = name;
                job.bytes = Rc::new(bytes);
                job.input_shapes = Vec::new();
                format!("Analysing {}…", job.name)
            }
        };
        comparison.error.set(None);
        comparison.busy.set(Some(busy));
        analyzer.with_value(|a| a.request(Line::Compare, job));
    };
    let request_steps = move || {
        if let Some(job) = job(Want::Steps) {
            stepper.loading.set(true);
            stepper.error.set(None);
            analyzer.with_value(|a| a.request(Line::Steps, job));
        }
    };
    let load = move |name: String, bytes: Vec<u8>| {
        model.set_value(Some((name, Rc::new(bytes))));
        overrides.set_value(Vec::new());
        whatif_error.set(None);
        run();
    };
    let open_file = move |file: web_sys::File| {
        started.set_value(io::now_ms());
        busy.set(Some(format!("Reading {}…", file.name())));
        leptos::task::spawn_local(async move {
            match io::read_file(&file).await {
                Ok(bytes) => load(file.name(), bytes),
                Err(e) => {
                    busy.set(None);
                    error.set(Some(e));
                }
            }
        });
    };
    // A shared layout on screen; `code` is its share code.
    let show_shared = move |report: microarena_core::report::Report, code: String| {
        let planners = vec![PlannerHead {
            planner: report.planner.clone(),
            head: Ok(report.arena.head_bytes),
        }];
        target.set(report.target.clone());
        planner.set(report.planner.clone());
        error.set(None);
        whatif_error.set(None);
        pointer.sel.set(None);
        stepper.reset();
        comparison.reset();
        extras.set(Some(Arc::new(Extras {
            planners,
            share_code: code,
            advice: Vec::new(),
            split: None,
        })));
        shown.set(Some(Arc::new(Shown {
            report: Arc::new(report),
            shared: true,
            example: false,
            inputs: Vec::new(),
        })));
    };
    let open_fragment = move |frag: String| {
        let f = frag.trim_start_matches('#');
        if f.starts_with(share::COMPARE_KEY) {
            match share::decode_compare_fragment(f) {
                Ok((old, new)) => {
                    let code = share::encode(&old);
                    show_shared(old, code);
                    comparison.other.set(Some(Arc::new(new)));
                }
                Err(e) => {
                    shown.set(None);
                    error.set(Some(format!("This comparison link cannot be opened: {e}.")));
                }
            }
            return;
        }
        match share::decode_fragment(f) {
            Ok(report) => {
                let code = f.trim_start_matches(share::FRAGMENT_KEY).to_string();
                show_shared(report, code);
            }
            Err(e) => {
                shown.set(None);
                error.set(Some(format!("This share link cannot be opened: {e}.")));
            }
        }
    };

    // First visit: a share link, a hosted model, or the bundled example.
    let frag = io::fragment();
    if !frag.is_empty() {
        open_fragment(frag);
    } else if let Some(url) = io::model_param() {
        busy.set(Some(format!("Fetching {url}…")));
        started.set_value(io::now_ms());
        leptos::task::spawn_local(async move {
            match io::fetch_model(&url).await {
                Ok(bytes) => {
                    let name = url
                        .rsplit('/')
                        .next()
                        .and_then(|n| n.split(['?', '#']).next())
                        .filter(|n| !n.is_empty())
                        .unwrap_or("model.tflite")
                        .to_string();
                    load(name, bytes);
                }
                Err(e) => {
                    busy.set(None);
                    error.set(Some(e));
                }
            }
        });
    } else {
        started.set_value(io::now_ms());
        load(EXAMPLE_NAME.into(), example::mobilenet_v1_025_96_int8());
    }
    let _ = window_event_listener(ev::hashchange, move |_| {
        let f = io::fragment();
        if f.starts_with(share::FRAGMENT_KEY) || f.starts_with(share::COMPARE_KEY) {
            open_fragment(f);
        }
    });

    let on_drop = move |ev: web_sys::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        match io::dropped_file(&ev) {
            Some(f) => open_file(f),
            None => error.set(Some("Nothing to open: drop a .tflite file.".into())),
        }
    };
    let on_pick = move |ev: web_sys::Event| {
        if let Some(f) = io::picked_file(&ev) {
            open_file(f);
        }
    };
    let replan = move || {
        started.set_value(io::now_ms());
        run();
    };
    let apply_whatif = move |shapes: Vec<String>| {
        whatif_error.set(None);
        started.set_value(io::now_ms());
        busy.set(Some(if shapes.is_empty() {
            "Re-planning the model as converted…".to_string()
        } else {
            format!("Re-planning with {}…", shapes.join(" "))
        }));
        overrides.set_value(shapes);
        run();
    };

    view! {
        <div
            class="app"
            class:dragging=move || dragging.get()
            on:dragover=move |ev: web_sys::DragEvent| {
                ev.prevent_default();
                dragging.set(true);
            }
            on:dragleave=move |ev: web_sys::DragEvent| {
                if ev.related_target().is_none() {
                    dragging.set(false);
                }
            }
            on:drop=on_drop
        >
            <header class="topbar">
                <div class="brand">
                    <span class="logo">"▦"</span>
                    <div>
                        <h1 class="title">"microarena"</h1>
                        <div class="tagline">"TensorFlow Lite Micro arena planner — to the byte"</div>
                    </div>
                </div>
                <div class="file">
                    {move || {
                        shown
                            .get()
                            .map(|s| {
                                let r = &s.report;
                                let badge = if s.shared {
                                    "shared layout"
                                } else if s.example {
                                    "bundled example"
                                } else {
                                    "your model"
                                };
                                let whatif = r.what_if.as_ref().map(|w| {
                                    view! {
                                        <span class="badge whatif" data-testid="whatif-badge">
                                            {format!("what-if {}", w.input_shapes.join(" "))}
                                        </span>
                                    }
                                });
                                view! {
                                    <span class="filename">{r.model.file.clone()}</span>
                                    <span class="badge">{badge}</span>
                                    {whatif}
                                    <span class="meta">
                                        {format!(
                                            "{} ops · {} tensors · {} subgraph(s)",
                                            r.model.operators,
                                            r.model.tensors,
                                            r.model.subgraphs,
                                        )}
                                    </span>
                                }
                            })
                    }}
                </div>
                {move || {
                    shown
                        .get()
                        .map(|_| {
                            view! {
                                <button
                                    class="button lessons-button"
                                    data-testid="lessons-start"
                                    on:click=move |_| tour.0.set(Some(0))
                                >
                                    "Lessons"
                                </button>
                            }
                        })
                }}
                <label class="button primary open">
                    <input
                        type="file"
                        accept=".tflite,application/octet-stream"
                        data-testid="model-input"
                        on:change=on_pick
                    />
                    "Open .tflite…"
                </label>
            </header>
            <div class="drop-hint" aria-hidden="true">"Drop a .tflite file to analyse it"</div>
            {move || {
                error
                    .get()
                    .map(|e| {
                        view! {
                            <div class="banner error" role="alert" data-testid="error">
                                <strong>"Cannot show this: "</strong>
                                {e}
                            </div>
                        }
                    })
            }}
            {move || busy.get().map(|b| view! { <div class="banner busy">{b}</div> })}
            <main>
                {move || match shown.get() {
                    Some(s) => {
                        dashboard(
                                s,
                                Controls {
                                    target,
                                    planner,
                                    budget,
                                    replan: Callback::new(move |_| replan()),
                                    map,
                                    rest,
                                    extras,
                                    apply_whatif: Callback::new(apply_whatif),
                                    whatif_error,
                                    request_steps: Callback::new(move |_| request_steps()),
                                    compare: Callback::new(compare_with),
                                },
                            )
                            .into_any()
                    }
                    None => {
                        view! {
                            <section class="empty">
                                <h2>"Drop a .tflite model anywhere on this page"</h2>
                                <p>
                                    "or use “Open .tflite…”. The model is analysed in your browser; nothing is uploaded."
                                </p>
                            </section>
                        }
                            .into_any()
                    }
                }}
            </main>
            <footer>
                {format!(
                    "microarena {} · {} · model bytes never leave this browser; share links carry only the layout.",
                    env!("CARGO_PKG_VERSION"),
                    worker_text,
                )}
            </footer>
        </div>
    }
}

/// A report's views, top to bottom: summary, microarena-runtime, what-if,
/// step-through, then (a frame later) the arena map, then (another frame
/// later) the comparison, the overview strip, lifetimes, per-op bars, tail, budget, flash, operator table,
/// buffer table, glossary.
fn dashboard(s: Arc<Shown>, c: Controls) -> impl IntoView {
    let r = s.report.clone();
    let (map, rest) = (c.map, c.rest);
    let shared = s.shared;
    provide_context(Window(RwSignal::new(ScopeWindow::initial(&r))));
    let wide = ScopeWindow::all(&r).len() > OVERVIEW_SCOPES;
    view! {
        {summary::summary(r.clone(), s.shared, c)}
        {runtime::runtime_view(r.clone())}
        {whatif::what_if_panel(&s, c.apply_whatif, c.whatif_error)}
        {steps::step_through(r.clone(), shared, c.request_steps)}
        {
            let r = r.clone();
            move || {
                if map.get() {
                    arena_map::arena_map(r.clone()).into_any()
                } else {
                    view! { <section class="panel map-placeholder" aria-hidden="true"></section> }.into_any()
                }
            }
        }
        {move || {
            rest.get()
                .then(|| {
                    let r = r.clone();
                    view! {
                        {compare::compare_view(r.clone(), shared, c.compare)}
                        {wide.then(|| overview::overview(r.clone()))}
                        <div class="grid2">
                            {lifetimes::lifetimes(r.clone())}
                            {op_bars::op_bars(r.clone())}
                        </div>
                        <div class="grid2">
                            {tail::tail_view(r.clone())}
                            {budget::budget_view(r.clone(), shared, c)}
                        </div>
                        <div class="grid2">
                            {flash::flash_view(r.clone())}
                            {op_table::op_table(r.clone())}
                        </div>
                        {npu::npu_view(r.clone())}
                        {buffer_table::buffer_table(r.clone())}
                        {glossary::glossary()}
                        {lessons::tour(r, c.budget)}
                    }
                })
        }}
    }
}

/// Row height of the virtualised tables (px; `table.virtual` in style.css).
const ROW_H: f64 = 27.0;
/// Height of a table's scroll box (px; `.table-wrap` in style.css).
const TABLE_VIEWPORT: f64 = 480.0;
/// Tables with more rows than this draw only the rows in view.
const VIRTUAL_FROM: usize = 100;

/// The rows of an `n`-row table to draw when it is scrolled `scroll` px down.
fn visible_rows(n: usize, scroll: f64) -> RowWindow {
    if n <= VIRTUAL_FROM {
        return RowWindow {
            start: 0,
            end: n,
            above: 0.0,
            below: 0.0,
        };
    }
    row_window(n, scroll, TABLE_VIEWPORT, ROW_H, 10)
}

/// A blank row `px` tall spanning `cols` columns, standing for rows not drawn.
fn spacer(px: f64, cols: usize) -> Option<impl IntoView + use<>> {
    (px > 0.0).then(|| {
        view! {
            <tr class="spacer" aria-hidden="true" style=format!("height:{px}px")>
                <td colspan=cols.to_string()></td>
            </tr>
        }
    })
}

/// The `?` badge that shows `text` on hover or focus.
fn help(text: &'static str) -> impl IntoView {
    view! {
        <span class="help" tabindex="0" role="note" aria-label=text data-tip=text>
            "?"
        </span>
    }
}
