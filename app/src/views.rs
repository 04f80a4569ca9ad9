//! The views. They hold core's types in signals, call core for every figure
//! and only arrange and format; browser IO goes through [`crate::io`].

use std::rc::Rc;
use std::sync::Arc;

use leptos::ev;
use leptos::prelude::*;
use microarena_core::plan::PlannerKind;
use microarena_core::report::budget::{Budget, DEFAULT_HEADROOM_BP, MCU_PRESETS, Reserve};
use microarena_core::report::{BufferClass, Region, Report};
use microarena_core::tflm::profile::PROFILES;
use microarena_core::{build::example, report::share};

use crate::format::{grouped, grouped_i, human, percent, shape};
use crate::io::{self, Analyzer, Extras, GraphInput, PlannerHead, Reply, Request};
use crate::svg::{self, MAP_H, MAP_W, MapGeom, OP_W, OPS_H, Row};

/// What is on screen: a report, from a model or from a share link.
#[derive(Debug, Clone, PartialEq)]
pub struct Shown {
    /// The report.
    pub report: Report,
    /// Opened from a share link (no model: selectors cannot re-plan).
    pub shared: bool,
    /// The bundled example.
    pub example: bool,
    /// The model's inputs as converted (empty for a share link).
    pub inputs: Vec<GraphInput>,
}

/// The linked selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sel {
    /// A head buffer (index into `report.buffers`).
    Buffer(usize),
    /// An operator (index into `report.operators`).
    Op(usize),
}

/// What the tooltip shows, at client coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Hover {
    Buffer(usize, f64, f64),
    Variable(usize, f64, f64),
    Op(usize, f64, f64),
}

#[derive(Clone, Copy)]
struct Ctx {
    sel: RwSignal<Option<Sel>>,
    hover: RwSignal<Option<Hover>>,
}

const EXAMPLE_NAME: &str = "mobilenet_v1_025_96_int8.tflite";

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let shown = RwSignal::new(None::<Arc<Shown>>);
    let error = RwSignal::new(None::<String>);
    let busy = RwSignal::new(None::<String>);
    let target = RwSignal::new(PROFILES[0].name.to_string());
    let planner = RwSignal::new(PlannerKind::TflmGreedy.name().to_string());
    let sel = RwSignal::new(None::<Sel>);
    let hover = RwSignal::new(None::<Hover>);
    let dragging = RwSignal::new(false);
    // The views below the map, rendered one frame after it.
    let rest = RwSignal::new(true);
    // Planner comparison and share code, which arrive just after the report.
    let extras = RwSignal::new(None::<Arc<Extras>>);
    let model = StoredValue::new_local(None::<(String, Rc<Vec<u8>>)>);
    let started = StoredValue::new(0.0f64);
    // What-if input shapes for the next request (`NAME=DIMS`, as the CLI's
    // --input-shape), and why the last what-if could not be applied.
    let overrides = StoredValue::new(Vec::<String>::new());
    let whatif_error = RwSignal::new(None::<String>);
    provide_context(Ctx { sel, hover });

    let analyzer = StoredValue::new_local(Analyzer::new(move |reply| {
        let res = match reply {
            Reply::Report(res) => res,
            Reply::Extras(x) => {
                extras.set(Some(Arc::new(x)));
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
                sel.set(None);
                hover.set(None);
                let example =
                    model.with_value(|m| m.as_ref().is_some_and(|(n, _)| n == EXAMPLE_NAME));
                // Summary and map first; the rest of the views a frame later,
                // so a big model never blocks the page in one long task.
                rest.set(false);
                extras.set(None);
                shown.set(Some(Arc::new(Shown {
                    report,
                    shared: false,
                    example,
                    inputs,
                })));
                let t0 = started.get_value();
                io::after_paint(move || {
                    io::publish_timing("mapMs", io::now_ms() - t0);
                    rest.set(true);
                    io::after_paint(move || {
                        io::publish_timing("renderMs", io::now_ms() - t0);
                        io::bump_seq();
                    });
                });
            }
            Err(e) => error.set(Some(e)),
        }
    }));
    let worker_text = analyzer.with_value(|a| io::worker_label(a.has_worker()));

    let run = move || {
        let Some((name, bytes)) = model.get_value() else {
            return;
        };
        busy.set(Some(format!("Analysing {name}…")));
        analyzer.with_value(|a| {
            a.request(&Request {
                bytes,
                name,
                target: target.get_untracked(),
                planner: planner.get_untracked(),
                input_shapes: overrides.get_value(),
            })
        });
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
    let open_fragment = move |frag: String| match share::decode_fragment(&frag) {
        Ok(report) => {
            let planners = vec![PlannerHead {
                planner: report.planner.clone(),
                head: Ok(report.arena.head_bytes),
            }];
            target.set(report.target.clone());
            planner.set(report.planner.clone());
            error.set(None);
            whatif_error.set(None);
            sel.set(None);
            let code = frag
                .trim_start_matches('#')
                .trim_start_matches(share::FRAGMENT_KEY)
                .to_string();
            extras.set(Some(Arc::new(Extras {
                planners,
                share_code: code,
                advice: Vec::new(),
            })));
            shown.set(Some(Arc::new(Shown {
                report,
                shared: true,
                example: false,
                inputs: Vec::new(),
            })));
        }
        Err(e) => {
            shown.set(None);
            error.set(Some(format!("This share link cannot be opened: {e}.")));
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
        if f.starts_with(share::FRAGMENT_KEY) {
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
                        <div class="title">"microarena"</div>
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
                                    replan: Callback::new(move |_| replan()),
                                    rest,
                                    extras,
                                    apply_whatif: Callback::new(apply_whatif),
                                    whatif_error,
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

fn help(text: &'static str) -> impl IntoView {
    view! {
        <span class="help" tabindex="0" role="note" aria-label=text data-tip=text>
            "?"
        </span>
    }
}

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

const TIP_HEAD: &str = "Head: the non-persistent part of the arena, where the memory planner places activations and scratch buffers. Buffers whose lifetimes do not overlap share bytes.";
const TIP_TAIL: &str = "Tail: persistent allocations made while the interpreter is set up — tensor structs, node structs, kernel OpData, quantization arrays, variables. They live as long as the interpreter.";
const TIP_TOTAL: &str =
    "Total = head + tail: the figure TFLM itself reports as arena_used_bytes().";
const TIP_MIN: &str = "Minimum working arena: the smallest kTensorArenaSize with which AllocateTensors succeeds. Temp allocations during Prepare can make it larger than head + tail.";
const TIP_TEMP: &str = "Temp: short-lived allocations made while each op is prepared (Prepare) and released before the next; they share the space above the tail and can set the minimum.";
const TIP_PREPARE: &str = "Prepare runs once in AllocateTensors: kernels request OpData (tail), temp memory and scratch buffers. Invoke runs the model and must not allocate: everything it uses was planned in Prepare.";
const TIP_ALIGN: &str = "Alignment: TFLM rounds every head buffer up to 16 bytes. The rounding is padding — drawn in red in the arena map.";
const TIP_LB: &str = "Lower bound: the largest sum of live (aligned) buffers at any one scope. No planner can make the head smaller; the gap is what a better plan could save at most.";
const TIP_PEAK: &str = "Peak op: the operator running at the scope with the most live bytes.";

/// What the dashboard needs from the app besides the report.
#[derive(Clone, Copy)]
struct Controls {
    target: RwSignal<String>,
    planner: RwSignal<String>,
    replan: Callback<()>,
    rest: RwSignal<bool>,
    extras: RwSignal<Option<Arc<Extras>>>,
    /// Re-plans with these what-if shapes (empty: the model as converted).
    apply_whatif: Callback<Vec<String>>,
    whatif_error: RwSignal<Option<String>>,
}

fn dashboard(s: Arc<Shown>, c: Controls) -> impl IntoView {
    let Controls {
        target,
        planner,
        replan,
        rest,
        extras,
        apply_whatif,
        whatif_error,
    } = c;
    let r = Arc::new(s.report.clone());
    let a = &r.arena;
    let gap = a.head_bytes.saturating_sub(a.lower_bound_bytes);
    let shared = s.shared;
    let peak = a
        .peak_op
        .map(|i| format!("#{i} {}", a.peak_opcode.clone().unwrap_or_default()))
        .unwrap_or_else(|| "–".into());
    let lb = a.lower_bound_bytes;
    let r_json = r.clone();
    let r_cmp = r.clone();
    let r_svg = r.clone();
    let r_png = r.clone();
    let stem = r
        .model
        .file
        .strip_suffix(".tflite")
        .unwrap_or(&r.model.file)
        .to_string();
    let (stem1, stem2, stem3) = (stem.clone(), stem.clone(), stem);

    view! {
        <section class="panel summary">
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
                                        <option value=n selected=move || target.get() == n>
                                            {n}
                                        </option>
                                    }
                                })
                                .collect_view()}
                        </select>
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
                                &format!("{stem1}.microarena.json"),
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
                        "microarena-runtime needs {} B for this model (head {} + tail {} B{}) — {} B less than TFLM's minimum working arena.",
                        grouped(rt.total_bytes),
                        grouped(rt.head_bytes),
                        grouped(rt.tail_bytes),
                        if rt.variable_bytes > 0 { format!(", of which {} B variable state", grouped(rt.variable_bytes)) } else { String::new() },
                        grouped(a.minimum_bytes.saturating_sub(rt.total_bytes)),
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
        {what_if_panel(&s, apply_whatif, whatif_error)}
        {arena_map(r.clone(), r_svg, r_png, stem2, stem3)}
        {move || {
            rest.get()
                .then(|| {
                    let r = r.clone();
                    view! {
                        <div class="grid2">
                            {lifetimes(r.clone())}
                            {op_bars(r.clone())}
                        </div>
                        <div class="grid2">
                            {tail_view(r.clone())}
                            {budget_view(r.clone())}
                        </div>
                        {tensor_table(r)}
                        {glossary()}
                    }
                })
        }}
    }
}

const TIP_WHATIF: &str = "What-if: give an input another shape (a shorter or longer sequence, another resolution or batch). Every shape in the graph is re-derived by the same core function as `microarena plan --input-shape NAME=DIMS`, the arena is re-planned, and the change against the model as converted is shown. Shapes that cannot propagate name the op and tensor.";

/// `[1, 49, 257]` → `"1,49,257"` (the CLI's DIMS).
fn dims_text(d: &[i32]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads what the user typed (`1,25,257`, `1×25×257`, `1 25 257`) as the
/// CLI's DIMS; the dims themselves are checked by `whatif::parse_override`.
fn normalize_dims(text: &str) -> String {
    text.split(|c: char| c == ',' || c == '×' || c == 'x' || c == 'X' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(",")
}

/// `+1,234 B`, `−240 B`, `±0 B`.
fn signed_bytes(delta: i128) -> String {
    let mag = grouped(u64::try_from(delta.unsigned_abs()).unwrap_or(u64::MAX));
    match delta.signum() {
        1 => format!("+{mag} B"),
        -1 => format!("−{mag} B"),
        _ => "±0 B".into(),
    }
}

/// The what-if control (one field per graph input, Apply, Reset) and the
/// delta against the model as converted.
fn what_if_panel(
    s: &Shown,
    apply: Callback<Vec<String>>,
    err: RwSignal<Option<String>>,
) -> impl IntoView + use<> {
    let r = &s.report;
    let applied: Vec<(String, Vec<i32>)> = r
        .what_if
        .as_ref()
        .map(|w| {
            w.input_shapes
                .iter()
                .filter_map(|x| microarena_core::whatif::parse_override(x).ok())
                .collect()
        })
        .unwrap_or_default();
    let fields: Vec<(GraphInput, RwSignal<String>)> = s
        .inputs
        .iter()
        .map(|g| {
            let cur = applied
                .iter()
                .find(|(k, _)| *k == g.key)
                .map_or(g.shape.as_slice(), |(_, d)| d.as_slice());
            (g.clone(), RwSignal::new(dims_text(cur)))
        })
        .collect();
    let store = StoredValue::new(fields.clone());
    let active = r.what_if.is_some();
    let submit = move || {
        let mut out = Vec::new();
        for (g, text) in store.get_value() {
            let spec = format!("{}={}", g.key, normalize_dims(&text.get_untracked()));
            match microarena_core::whatif::parse_override(&spec) {
                Ok((_, dims)) if dims == g.shape => {}
                Ok(_) => out.push(spec),
                Err(e) => {
                    err.set(Some(format!("what-if: {e}")));
                    return;
                }
            }
        }
        if out.is_empty() && !active {
            err.set(None);
            return;
        }
        apply.run(out);
    };
    let reset = move || {
        for (g, text) in store.get_value() {
            text.set(dims_text(&g.shape));
        }
        err.set(None);
        if active {
            apply.run(Vec::new());
        }
    };
    let form = if s.shared {
        view! {
            <p class="muted">
                {match &r.what_if {
                    Some(w) => format!(
                        "Opened from a share link with what-if shapes {}. The model was not shared; open it to try other shapes.",
                        w.input_shapes.join(" "),
                    ),
                    None => "Opened from a share link: the model was not shared, so input shapes cannot be changed here.".into(),
                }}
            </p>
        }
        .into_any()
    } else if fields.is_empty() {
        view! { <p class="muted">"This model has no graph inputs to reshape."</p> }.into_any()
    } else {
        view! {
            <div class="wi-fields">
                {fields
                    .into_iter()
                    .map(|(g, text)| {
                        let label = if g.name.is_empty() {
                            format!("{} (tensor {})", g.key, g.tensor)
                        } else {
                            g.name.clone()
                        };
                        let original = dims_text(&g.shape);
                        let changed = move || normalize_dims(&text.get()) != original;
                        view! {
                            <label class="wi-field">
                                <span class="wi-name mono" title=label.clone()>{label.clone()}</span>
                                <input
                                    type="text"
                                    class="mono"
                                    class:changed=changed
                                    spellcheck="false"
                                    autocomplete="off"
                                    data-testid=format!("whatif-input-{}", g.key)
                                    data-key=g.key.clone()
                                    aria-label=format!("dims of input {label}")
                                    prop:value=move || text.get()
                                    on:input=move |ev| text.set(event_target_value(&ev))
                                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                                        if ev.key() == "Enter" {
                                            submit();
                                        }
                                    }
                                />
                                <span class="muted wi-orig">
                                    {format!("as converted {} · {}", shape(&g.shape), g.dtype)}
                                </span>
                            </label>
                        }
                    })
                    .collect_view()}
                <div class="wi-buttons">
                    <button class="button primary" data-testid="whatif-apply" on:click=move |_| submit()>
                        "Apply"
                    </button>
                    <button class="button" data-testid="whatif-reset" on:click=move |_| reset()>
                        "Reset"
                    </button>
                </div>
            </div>
        }
        .into_any()
    };
    let delta = r.what_if.as_ref().map(|w| {
        let a = &r.arena;
        let mut rows = vec![
            ("head", "head", Some(w.original_head_bytes), Some(a.head_bytes)),
            ("tail", "tail", Some(w.original_tail_bytes), Some(a.tail_bytes)),
            ("total", "total (TFLM)", Some(w.original_total_bytes), Some(a.total_bytes)),
            (
                "minimum",
                "minimum working arena",
                Some(w.original_minimum_bytes),
                Some(a.minimum_bytes),
            ),
        ];
        rows.push((
            "runtime",
            "microarena-runtime",
            w.original_runtime_total_bytes,
            r.runtime.as_ref().map(|rt| rt.total_bytes),
        ));
        view! {
            <div>
                <div class="wi-applied">
                    "Applied: "
                    <span class="mono">{w.input_shapes.join(" ")}</span>
                </div>
                <table class="compact delta" data-testid="whatif-delta">
                    <thead>
                        <tr>
                            <th></th>
                            <th class="r">"as converted"</th>
                            <th class="r">"what-if"</th>
                            <th class="r">"change"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows
                            .into_iter()
                            .map(|(id, label, old, new)| {
                                let d = match (old, new) {
                                    (Some(o), Some(n)) => Some(i128::from(n) - i128::from(o)),
                                    _ => None,
                                };
                                let cls = match d.map(i128::signum) {
                                    Some(1) => "r mono up",
                                    Some(-1) => "r mono down",
                                    _ => "r mono",
                                };
                                let fmt = |v: Option<u64>| v.map_or_else(|| "–".into(), |v| format!("{} B", grouped(v)));
                                view! {
                                    <tr
                                        data-testid=format!("whatif-delta-{id}")
                                        data-original=old.map(|v| v.to_string()).unwrap_or_default()
                                        data-whatif=new.map(|v| v.to_string()).unwrap_or_default()
                                        data-delta=d.map(|v| v.to_string()).unwrap_or_default()
                                    >
                                        <td>{label}</td>
                                        <td class="r mono">{fmt(old)}</td>
                                        <td class="r mono">{fmt(new)}</td>
                                        <td class=cls>
                                            {match (d, old) {
                                                (Some(d), Some(o)) if o > 0 => format!(
                                                    "{} ({:+.1} %)",
                                                    signed_bytes(d),
                                                    d as f64 * 100.0 / o as f64,
                                                ),
                                                (Some(d), _) => signed_bytes(d),
                                                _ => "–".into(),
                                            }}
                                        </td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        }
    });
    view! {
        <section class="panel whatif" data-testid="whatif" class:active=active>
            <div class="panel-head">
                <h2>"What-if input shapes " {help(TIP_WHATIF)}</h2>
                <span class="muted">
                    {if active {
                        "showing the what-if plan; every view below is for these shapes"
                    } else {
                        "showing the model as converted"
                    }}
                </span>
            </div>
            <div class="wi-grid">
                <div>
                    {form}
                    {move || {
                        err.get()
                            .map(|e| {
                                view! {
                                    <div class="wi-error" role="alert" data-testid="whatif-error">
                                        <strong>"Cannot apply these shapes: "</strong>
                                        {e}
                                        <div class="muted">"The plan shown is unchanged."</div>
                                    </div>
                                }
                            })
                    }}
                </div>
                {match delta {
                    Some(d) => d.into_any(),
                    None => view! {
                        <p class="muted wi-hint">
                            "Change a dimension — a shorter sequence, another resolution or batch — and apply: every shape in the graph is re-derived and the arena re-planned, with the change against the model as converted."
                        </p>
                    }
                    .into_any(),
                }}
            </div>
        </section>
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

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let head: String = s.chars().take(n).collect();
        format!("{head}…")
    }
}

fn diagnostics(r: &Report) -> impl IntoView + use<> {
    let items = r.diagnostics.clone();
    (!items.is_empty()).then(|| {
        view! {
            <ul class="diagnostics">
                {items
                    .into_iter()
                    .map(|d| {
                        view! {
                            <li class=format!("diag {}", d.severity)>
                                <span class="sev">{d.severity.clone()}</span>
                                {d.message.clone()}
                            </li>
                        }
                    })
                    .collect_view()}
            </ul>
        }
    })
}

/// Tooltip lines for buffer `i`.
fn buffer_tip(r: &Report, i: usize) -> Vec<(String, String)> {
    let Some(b) = r.buffers.get(i) else {
        return Vec::new();
    };
    let op_name = |idx: usize| {
        r.operators
            .iter()
            .find(|o| o.subgraph == b.subgraph && o.index == idx)
            .map_or_else(|| format!("#{idx}"), |o| format!("#{idx} {}", o.opcode))
    };
    let consumers: Vec<String> = match b.tensor {
        Some(t) => r
            .operators
            .iter()
            .filter(|o| o.subgraph == b.subgraph && o.inputs.contains(&(t as i32)))
            .map(|o| format!("#{} {}", o.index, o.opcode))
            .collect(),
        None => Vec::new(),
    };
    let mut v = vec![
        ("name".to_string(), b.name.clone()),
        (
            "kind".into(),
            match (svg::is_variable(r, b), b.offline) {
                (true, _) => "variable tensor, placed in the head by the offline plan".into(),
                (false, true) => format!("{} (offline plan)", b.kind),
                (false, false) => b.kind.to_string(),
            },
        ),
        ("shape".into(), shape(&b.shape)),
        ("dtype".into(), b.dtype.clone()),
        ("bytes".into(), format!("{} B", grouped(b.bytes))),
        (
            "padding".into(),
            format!("{} B", b.aligned_bytes.saturating_sub(b.bytes)),
        ),
        (
            "offset".into(),
            format!(
                "{} – {}",
                grouped_i(b.offset),
                grouped_i(b.offset + b.aligned_bytes as i64)
            ),
        ),
        (
            "lifetime".into(),
            format!("scopes {} – {}", b.first, b.last),
        ),
    ];
    if b.kind == BufferClass::Scratch {
        v.push((
            "owner op".into(),
            b.op.map_or_else(|| "–".into(), |i| owner(r, b.subgraph, i)),
        ));
    } else {
        v.push((
            "producer".into(),
            b.op.map_or_else(|| "graph input".into(), op_name),
        ));
        v.push((
            "consumers".into(),
            if consumers.is_empty() {
                "graph output".into()
            } else {
                truncate(&consumers.join(", "), 120)
            },
        ));
    }
    v
}

/// `#3 UNIDIRECTIONAL_SEQUENCE_LSTM` (with the subgraph outside the main one).
fn owner(r: &Report, subgraph: usize, op: usize) -> String {
    let code = r
        .operators
        .iter()
        .find(|o| o.subgraph == subgraph && o.index == op)
        .map_or("", |o| o.opcode.as_str());
    if subgraph == 0 {
        format!("#{op} {code}")
    } else {
        format!("#{op} {code} (subgraph {subgraph})")
    }
}

const VARIABLE_LIFETIME: &str =
    "lives for the whole interpreter: allocated once in AllocateTensors, kept across invokes";

/// Tooltip lines for variable `k` (index into `report.variables`).
fn variable_tip(r: &Report, k: usize) -> Vec<(String, String)> {
    let Some(v) = r.variables.get(k) else {
        return Vec::new();
    };
    vec![
        ("name".into(), v.name.clone()),
        ("kind".into(), "variable tensor (LSTM/SVDF state)".into()),
        ("shape".into(), shape(&v.shape)),
        ("dtype".into(), v.dtype.clone()),
        ("bytes".into(), format!("{} B", grouped(v.bytes))),
        (
            "region".into(),
            match v.offset {
                Some(o) if v.region == Region::Head => {
                    format!("head at {} (offline plan)", grouped_i(o))
                }
                _ => "tail: TfLiteTensor variable buffer data".into(),
            },
        ),
        (
            "owner op".into(),
            v.op.map_or_else(|| "–".into(), |i| owner(r, v.subgraph, i)),
        ),
        ("lifetime".into(), VARIABLE_LIFETIME.into()),
    ]
}

fn op_tip(r: &Report, i: usize) -> Vec<(String, String)> {
    let Some(o) = r.operators.get(i) else {
        return Vec::new();
    };
    vec![
        ("op".into(), format!("#{} {}", o.index, o.opcode)),
        ("subgraph".into(), o.subgraph.to_string()),
        ("scope".into(), o.scope.to_string()),
        ("live head".into(), format!("{} B", grouped(o.live_bytes))),
        ("scratch".into(), format!("{} B", grouped(o.scratch_bytes))),
        (
            "persistent".into(),
            format!("{} B", grouped(o.persistent_bytes)),
        ),
    ]
}

fn tooltip(r: Arc<Report>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    move || {
        let (lines, x, y) = match ctx.hover.get()? {
            Hover::Buffer(i, x, y) => (buffer_tip(&r, i), x, y),
            Hover::Variable(k, x, y) => (variable_tip(&r, k), x, y),
            Hover::Op(i, x, y) => (op_tip(&r, i), x, y),
        };
        Some(view! {
            <div class="tooltip" style=format!("left:{}px;top:{}px", x + 14.0, y + 14.0)>
                {lines
                    .into_iter()
                    .map(|(k, v)| view! { <div><span class="k">{k}</span><span class="v">{v}</span></div> })
                    .collect_view()}
            </div>
        })
    }
}

fn buffer_hover(ev: &web_sys::MouseEvent, ctx: Ctx) {
    let (x, y) = (f64::from(ev.client_x()), f64::from(ev.client_y()));
    match (
        io::target_index(ev, "data-i"),
        io::target_index(ev, "data-v"),
    ) {
        (Some(i), _) => ctx.hover.set(Some(Hover::Buffer(i, x, y))),
        (None, Some(k)) => ctx.hover.set(Some(Hover::Variable(k, x, y))),
        (None, None) => ctx.hover.set(None),
    }
}

fn arena_map(
    r: Arc<Report>,
    r_svg: Arc<Report>,
    r_png: Arc<Report>,
    stem_svg: String,
    stem_png: String,
) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let geom = MapGeom::of(&r);
    let body = svg::map_body(&r);
    // viewBox (x, y, w, h) in map units: zoom and pan change only this.
    let vb = RwSignal::new((0.0f64, 0.0f64, MAP_W, MAP_H));
    let drag = StoredValue::new(None::<((f64, f64), (f64, f64, f64, f64), bool)>);
    let r_sel = r.clone();
    let selection = move || match ctx.sel.get()? {
        Sel::Buffer(i) => {
            let (x, y, w, h) = geom.rect(r_sel.buffers.get(i)?);
            Some(view! { <rect class="sel" x=x y=y width=w height=h.max(0.5) /> }.into_any())
        }
        Sel::Op(i) => {
            let scope = r_sel.operators.get(i)?.scope;
            let x = geom.x(scope);
            let w = geom.x(scope + 1) - x;
            Some(view! { <rect class="sel-op" x=x y=0 width=w height=MAP_H /> }.into_any())
        }
    };
    let wheel = move |ev: web_sys::WheelEvent| {
        ev.prevent_default();
        let Some((fx, fy)) = io::relative_pos(&ev) else {
            return;
        };
        let (x, y, w, h) = vb.get_untracked();
        let factor = if ev.delta_y() > 0.0 { 1.25 } else { 0.8 };
        let nw = (w * factor).clamp(MAP_W / 400.0, MAP_W);
        let nh = (h * factor).clamp(MAP_H / 400.0, MAP_H);
        let (px, py) = (x + fx * w, y + fy * h);
        let nx = (px - fx * nw).clamp(0.0, MAP_W - nw);
        let ny = (py - fy * nh).clamp(0.0, MAP_H - nh);
        vb.set((nx, ny, nw, nh));
    };
    let down = move |ev: web_sys::MouseEvent| {
        if let Some(p) = io::relative_pos(&ev) {
            drag.set_value(Some((p, vb.get_untracked(), false)));
        }
    };
    let moved = move |ev: web_sys::MouseEvent| {
        if let Some((start, (x, y, w, h), _)) = drag.get_value()
            && ev.buttons() & 1 == 1
            && let Some((fx, fy)) = io::relative_pos(&ev)
        {
            let (dx, dy) = (fx - start.0, fy - start.1);
            if dx.abs() + dy.abs() > 0.004 {
                drag.set_value(Some((start, (x, y, w, h), true)));
                ctx.hover.set(None);
                vb.set((
                    (x - dx * w).clamp(0.0, MAP_W - w),
                    (y - dy * h).clamp(0.0, MAP_H - h),
                    w,
                    h,
                ));
                return;
            }
        }
        buffer_hover(&ev, ctx);
    };
    let up = move |ev: web_sys::MouseEvent| {
        let dragged = drag.get_value().is_some_and(|d| d.2);
        drag.set_value(None);
        if !dragged {
            ctx.sel
                .set(io::target_index(&ev, "data-i").map(Sel::Buffer));
        }
    };
    let y_ticks = move || {
        let (_, y, _, h) = vb.get();
        (0..=4)
            .map(|k| {
                let frac = f64::from(k) / 4.0;
                let off = geom.offset_at(y + h * (1.0 - frac)).max(0.0);
                view! { <span style=format!("bottom:{}%", frac * 100.0)>{human(off.round() as u64)}</span> }
            })
            .collect_view()
    };
    let x_ticks = move || {
        let (x, _, w, _) = vb.get();
        (0..=5)
            .map(|k| {
                let frac = f64::from(k) / 5.0;
                let scope = geom.scope_at(x + w * frac);
                view! { <span style=format!("left:{}%", frac * 100.0)>{format!("{scope:.0}")}</span> }
            })
            .collect_view()
    };
    let n = r.buffers.len();
    let file = r.model.file.clone();
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>
                    "Arena map "
                    {help("Each rectangle is one head buffer: x is its lifetime in scopes (operator steps), y its offset in the head. Red slivers are alignment padding; the yellow band is the peak scope. Scroll to zoom, drag to pan, click to select.")}
                </h2>
                <div class="controls">
                    <span class="legend">
                        <i style="background:#4f7cff"></i>"tensor"
                        <i style=format!("background:{}", svg::SCRATCH_FILL)></i>"scratch"
                        <i style=format!("background:{}", svg::PADDING_FILL)></i>"padding"
                        {(!r.variables.is_empty())
                            .then(|| {
                                view! {
                                    <i style=format!("background:{}", svg::VARIABLE_FILL)></i>
                                    "variable"
                                }
                            })}
                        <i style="background:#ffd54a"></i>"peak scope"
                    </span>
                    <button class="button" on:click=move |_| vb.set((0.0, 0.0, MAP_W, MAP_H))>"Reset zoom"</button>
                    <button
                        class="button"
                        on:click=move |_| {
                            let (s, _, _) = svg::standalone_map(&r_svg);
                            io::download_text(&s, "image/svg+xml", &format!("{stem_svg}.arena.svg"));
                        }
                    >
                        "Export SVG"
                    </button>
                    <button
                        class="button"
                        on:click=move |_| {
                            let (s, w, h) = svg::standalone_map(&r_png);
                            io::download_png(s, w, h, format!("{stem_png}.arena.png"));
                        }
                    >
                        "Export PNG"
                    </button>
                </div>
            </div>
            {variable_region(&r)}
            <div class="map-wrap">
                <div class="y-axis">{y_ticks}</div>
                <div class="map-area">
                    <svg
                        class="map"
                        data-testid="arena-map"
                        data-file=file
                        data-buffers=n.to_string()
                        viewBox=move || {
                            let (x, y, w, h) = vb.get();
                            format!("{x} {y} {w} {h}")
                        }
                        preserveAspectRatio="none"
                        on:wheel=wheel
                        on:mousedown=down
                        on:mousemove=moved
                        on:mouseup=up
                        on:mouseleave=move |_| {
                            drag.set_value(None);
                            ctx.hover.set(None);
                        }
                    >
                        <g inner_html=body></g>
                        {selection}
                    </svg>
                    <div class="x-axis">{x_ticks}</div>
                </div>
            </div>
            <div class="caption">
                {format!(
                    "{n} buffers · head {} B · peak at scope {}",
                    grouped(r.arena.head_bytes),
                    r.arena.peak_scope,
                )}
            </div>
            {tooltip(r)}
        </section>
    }
}

fn lifetimes(r: Arc<Report>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let vars = svg::tail_variables(&r).len();
    // Rows fill about 280 px for small models, never thinner than 3 px; up to
    // 48 rows stay tall enough to label (the panel scrolls).
    let n_rows = r.buffers.len() + vars;
    let row_h = (280.0 / n_rows.max(1) as f64).clamp(3.0, 14.0).floor();
    let row_h = if n_rows <= 48 { row_h.max(12.0) } else { row_h };
    let (body, rows) = svg::lifetimes_body(&r, row_h);
    let geom = MapGeom::of(&r);
    let mut row_of = vec![0usize; r.buffers.len()];
    for (row, what) in rows.iter().enumerate() {
        if let Row::Buffer(i) = *what {
            row_of[i] = row;
        }
    }
    let height = (row_h * rows.len() as f64).max(row_h);
    // Variables and scratch buffers are labelled with their owning op when
    // the rows are tall enough for text (the tooltip always names it).
    let labels = (row_h >= 10.0).then(|| {
        rows.iter()
            .enumerate()
            .filter_map(|(row, what)| {
                let top = row as f64 * row_h;
                match *what {
                    Row::Variable(k) => {
                        let v = r.variables.get(k)?;
                        let text = format!(
                            "variable {} · {} B · {} · whole interpreter",
                            var_name(v),
                            grouped(v.bytes),
                            v.op.map_or_else(|| "–".into(), |i| owner(&r, v.subgraph, i)),
                        );
                        Some(view! {
                            <span class="lt-label var" style=format!("top:{top}px;left:4px;line-height:{row_h}px")>
                                {text}
                            </span>
                        }
                        .into_any())
                    }
                    Row::Buffer(i) => {
                        let b = r.buffers.get(i).filter(|b| b.kind == BufferClass::Scratch)?;
                        let text = format!(
                            "scratch of {}",
                            b.op.map_or_else(|| "–".into(), |o| owner(&r, b.subgraph, o))
                        );
                        let start = geom.x(b.first) / MAP_W * 100.0;
                        let end = geom.x(b.last + 1) / MAP_W * 100.0;
                        let pos = if end < 65.0 {
                            format!("left:calc({end:.2}% + 4px)")
                        } else {
                            format!("right:calc({:.2}% + 4px)", 100.0 - start)
                        };
                        Some(view! {
                            <span class="lt-label" style=format!("top:{top}px;{pos};line-height:{row_h}px")>
                                {text}
                            </span>
                        }
                        .into_any())
                    }
                }
            })
            .collect_view()
    });
    let r2 = r.clone();
    let selection = move || match ctx.sel.get()? {
        Sel::Buffer(i) => {
            let b = r2.buffers.get(i)?;
            let y = *row_of.get(i)? as f64 * row_h;
            let x = geom.x(b.first);
            let w = geom.x(b.last + 1) - x;
            Some(view! { <rect class="sel" x=x y=y width=w height=row_h /> }.into_any())
        }
        Sel::Op(i) => {
            let scope = r2.operators.get(i)?.scope;
            let x = geom.x(scope);
            let w = geom.x(scope + 1) - x;
            Some(view! { <rect class="sel-op" x=x y=0 width=w height=height /> }.into_any())
        }
    };
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>
                    "Lifetimes "
                    {help("One row per head buffer, ordered by first use: the bar spans the scopes (operator steps) in which the buffer must stay intact. Variable tensors (LSTM/SVDF state, magenta) come first and span every scope: they live for the whole interpreter.")}
                </h2>
                {(vars > 0)
                    .then(|| {
                        view! {
                            <span class="legend">
                                <i style=format!("background:{}", svg::VARIABLE_FILL)></i>
                                "variable"
                                <i style=format!("background:{}", svg::SCRATCH_FILL)></i>
                                "scratch"
                            </span>
                        }
                    })}
            </div>
            <div class="scroll">
                <div class="lt-wrap">
                    <svg
                        class="lifetimes"
                        data-testid="lifetimes"
                        data-variables=vars.to_string()
                        viewBox=format!("0 0 {MAP_W} {height}")
                        preserveAspectRatio="none"
                        style=format!("height:{height}px")
                        on:mousemove=move |ev| buffer_hover(&ev, ctx)
                        on:mouseleave=move |_| ctx.hover.set(None)
                        on:click=move |ev| ctx.sel.set(io::target_index(&ev, "data-i").map(Sel::Buffer))
                    >
                        <g inner_html=body></g>
                        {selection}
                    </svg>
                    {labels}
                </div>
            </div>
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

/// A variable's name, or `tensor N` when the file has none.
fn var_name(v: &microarena_core::report::VariableInfo) -> String {
    if v.name.is_empty() {
        format!("tensor {}", v.tensor)
    } else {
        v.name.clone()
    }
}

/// Most variables drawn one band each in the map's tail strip.
const VARIABLE_BANDS: usize = 8;

/// The tail strip above the arena map: the variable tensors as their own
/// region, where TFLM puts them (the bottom of the tail, next to the head),
/// under the rest of the tail. Not to scale with the head.
fn variable_region(r: &Report) -> Option<impl IntoView + use<>> {
    let ctx = expect_context::<Ctx>();
    let tail = svg::tail_variables(r);
    if tail.is_empty() {
        return None;
    }
    let bytes: u64 = tail.iter().map(|&k| r.variables[k].bytes).sum();
    let rest = r.arena.tail_bytes.saturating_sub(bytes);
    let bands = tail
        .iter()
        .take(VARIABLE_BANDS)
        .map(|&k| {
            let v = &r.variables[k];
            let text = format!(
                "{} · {} {} · {} B · state of {}",
                var_name(v),
                shape(&v.shape),
                v.dtype,
                grouped(v.bytes),
                v.op.map_or_else(|| "–".into(), |i| owner(r, v.subgraph, i)),
            );
            view! {
                <div class="var-band" data-v=k.to_string() style=format!("background:{}", svg::VARIABLE_FILL)>
                    {text}
                </div>
            }
        })
        .collect_view();
    let more = tail.len().saturating_sub(VARIABLE_BANDS);
    let more = (more > 0).then(|| {
        let b: u64 = tail
            .iter()
            .skip(VARIABLE_BANDS)
            .map(|&k| r.variables[k].bytes)
            .sum();
        view! {
            <div class="var-band" style=format!("background:{}", svg::VARIABLE_FILL)>
                {format!("+ {more} more variables · {} B", grouped(b))}
            </div>
        }
    });
    let n = tail.len();
    Some(view! {
        <div class="tail-wrap">
            <div class="tail-axis">
                <span>"tail"</span>
                <span class="muted">"(not to scale)"</span>
            </div>
            <div
                class="tail-strip"
                data-testid="variable-region"
                data-count=n.to_string()
                data-bytes=bytes.to_string()
                on:mousemove=move |ev| buffer_hover(&ev, ctx)
                on:mouseleave=move |_| ctx.hover.set(None)
            >
                <div class="tail-rest">
                    {format!(
                        "rest of the tail · {} B · tensor structs, nodes, OpData, quantization",
                        grouped(rest),
                    )}
                </div>
                <div class="var-head">
                    {format!(
                        "variables: {n} tensor{}, {} B — a region of their own, alive for the whole interpreter (every scope)",
                        if n == 1 { "" } else { "s" },
                        grouped(bytes),
                    )}
                </div>
                {bands}
                {more}
            </div>
        </div>
    })
}

fn op_bars(r: Arc<Report>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let body = svg::op_bars_body(&r);
    let n = r.operators.len();
    let w = OP_W * n.max(1) as f64;
    let r2 = r.clone();
    let selection = move || {
        let i = match ctx.sel.get()? {
            Sel::Op(i) => i,
            Sel::Buffer(b) => {
                let b = r2.buffers.get(b)?;
                let op = b.op?;
                r2.operators
                    .iter()
                    .position(|o| o.subgraph == b.subgraph && o.index == op)?
            }
        };
        Some(view! { <rect class="sel-op" x=i as f64 * OP_W y=0 width=OP_W height=OPS_H /> })
    };
    let peak = svg::peak_op_row(&r)
        .and_then(|i| r.operators.get(i))
        .map(|o| {
            format!(
                "peak: #{} {} — {} B live",
                o.index,
                o.opcode,
                grouped(o.live_bytes)
            )
        })
        .unwrap_or_default();
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>
                    "Per-op memory "
                    {help("For each operator: head bytes live while it runs (blue), of which its scratch buffers (orange), and the persistent tail bytes it causes (grey). The peak op is highlighted.")}
                </h2>
                <span class="legend">
                    <i style="background:#4f7cff"></i>"live"
                    <i style=format!("background:{}", svg::SCRATCH_FILL)></i>"scratch"
                    <i style="background:#94a3b8"></i>"persistent"
                </span>
            </div>
            <svg
                class="ops"
                data-testid="op-bars"
                viewBox=format!("0 0 {w} {OPS_H}")
                preserveAspectRatio="none"
                on:mousemove=move |ev| match op_at(&ev, n) {
                    Some(i) => {
                        ctx.hover
                            .set(Some(Hover::Op(i, f64::from(ev.client_x()), f64::from(ev.client_y()))))
                    }
                    None => ctx.hover.set(None),
                }
                on:mouseleave=move |_| ctx.hover.set(None)
                on:click=move |ev| ctx.sel.set(op_at(&ev, n).map(Sel::Op))
            >
                <g inner_html=body></g>
                {selection}
            </svg>
            <div class="caption">{format!("{} operators · {peak}", r.operators.len())}</div>
        </section>
    }
}

/// The operator column under the pointer in the op-bars chart.
fn op_at(ev: &web_sys::MouseEvent, ops: usize) -> Option<usize> {
    let (fx, _) = io::relative_pos(ev)?;
    let i = (fx * ops as f64).floor();
    (i >= 0.0 && i < ops as f64).then_some(i as usize)
}

fn tail_view(r: Arc<Report>) -> impl IntoView {
    let mut cats = r.tail.clone();
    cats.sort_by_key(|c| std::cmp::Reverse(c.bytes));
    let max = cats.iter().map(|c| c.bytes).max().unwrap_or(1).max(1);
    let total = r.arena.tail_bytes;
    let mut waste: Vec<(usize, u64)> = r
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| (i, b.aligned_bytes.saturating_sub(b.bytes)))
        .filter(|&(_, p)| p > 0)
        .collect();
    waste.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    waste.truncate(5);
    let ctx = expect_context::<Ctx>();
    let names: Vec<(usize, String, u64)> = waste
        .into_iter()
        .map(|(i, p)| (i, r.buffers[i].name.clone(), p))
        .collect();
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>"Tail breakdown " {help(TIP_TAIL)}</h2>
                <span class="muted">{format!("{} B", grouped(total))}</span>
            </div>
            <div class="bars">
                {cats
                    .into_iter()
                    .map(|c| {
                        let w = c.bytes as f64 / max as f64 * 100.0;
                        view! {
                            <div class="bar-row">
                                <span class="bar-label" title=c.category.clone()>{c.category.clone()}</span>
                                <span class="bar-track"><span class="bar-fill" style=format!("width:{w:.1}%")></span></span>
                                <span class="bar-val mono">{grouped(c.bytes)}</span>
                                <span class="bar-count muted">{format!("×{}", c.count)}</span>
                            </div>
                        }
                    })
                    .collect_view()}
            </div>
            <h3>"Alignment padding " {help(TIP_ALIGN)}</h3>
            <p>
                <strong class="mono">{format!("{} B", grouped(r.arena.padding_bytes))}</strong>
                {format!(
                    " of padding in the head ({} of the head).",
                    percent(r.arena.padding_bytes, r.arena.head_bytes),
                )}
            </p>
            {(!names.is_empty())
                .then(|| {
                    view! {
                        <table class="compact">
                            <thead><tr><th>"most padded buffers"</th><th class="r">"padding"</th></tr></thead>
                            <tbody>
                                {names
                                    .into_iter()
                                    .map(|(i, n, p)| {
                                        view! {
                                            <tr class="clickable" on:click=move |_| ctx.sel.set(Some(Sel::Buffer(i)))>
                                                <td>{n}</td>
                                                <td class="r mono">{format!("{p} B")}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                    }
                })}
        </section>
    }
}

fn kib_input(label: &'static str, value: RwSignal<u64>) -> impl IntoView {
    view! {
        <label class="field">
            <span>{label}</span>
            <input
                type="number"
                min="0"
                step="1"
                prop:value=move || value.get().to_string()
                on:input=move |ev| value.set(event_target_value(&ev).trim().parse().unwrap_or(0))
            />
            <span class="muted">"KiB"</span>
        </label>
    }
}

fn budget_view(r: Arc<Report>) -> impl IntoView {
    let preset = RwSignal::new(MCU_PRESETS[0].name.to_string());
    let custom_kib = RwSignal::new(256u64);
    let stack = RwSignal::new(8u64);
    let rtos = RwSignal::new(16u64);
    let isr = RwSignal::new(2u64);
    let dma = RwSignal::new(4u64);
    let log = RwSignal::new(1u64);
    let headroom = RwSignal::new(u64::from(DEFAULT_HEADROOM_BP / 100));
    let minimum = r.arena.minimum_bytes;
    let target = r.target.clone();
    let budget = move || Budget {
        ram_bytes: MCU_PRESETS
            .iter()
            .find(|p| p.name == preset.get())
            .map_or(custom_kib.get().saturating_mul(1024), |p| p.ram_bytes),
        reserves: [
            ("stack", stack),
            ("rtos", rtos),
            ("isr", isr),
            ("dma", dma),
            ("log", log),
        ]
        .iter()
        .map(|(n, v)| Reserve {
            name: (*n).into(),
            bytes: v.get().saturating_mul(1024),
        })
        .collect(),
        headroom_bp: u32::try_from(headroom.get().saturating_mul(100)).unwrap_or(u32::MAX),
    };
    let verdict = move || budget().check(minimum);
    let preset_target = move || {
        MCU_PRESETS
            .iter()
            .find(|p| p.name == preset.get())
            .map(|p| p.target)
    };
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>
                    "Budget "
                    {help("Does the model fit the device? RAM minus everything else that lives in RAM must hold the minimum working arena plus headroom.")}
                </h2>
            </div>
            <div class="budget">
                <label class="field">
                    <span>"Device"</span>
                    <select
                        data-testid="mcu-preset"
                        on:change=move |ev| preset.set(event_target_value(&ev))
                    >
                        {MCU_PRESETS
                            .iter()
                            .map(|p| {
                                let n = p.name;
                                view! {
                                    <option value=n selected=move || preset.get() == n>
                                        {format!("{n} — {} KiB", p.ram_bytes / 1024)}
                                    </option>
                                }
                            })
                            .collect_view()}
                        <option value="custom">"Custom RAM…"</option>
                    </select>
                </label>
                {move || (preset.get() == "custom").then(|| kib_input("RAM", custom_kib))}
                {kib_input("Main stack", stack)}
                {kib_input("RTOS", rtos)}
                {kib_input("Interrupt stack", isr)}
                {kib_input("DMA buffers", dma)}
                {kib_input("Log buffers", log)}
                <label class="field">
                    <span>"Headroom"</span>
                    <input
                        type="number"
                        min="0"
                        max="500"
                        prop:value=move || headroom.get().to_string()
                        on:input=move |ev| headroom.set(event_target_value(&ev).trim().parse().unwrap_or(0))
                    />
                    <span class="muted">"%"</span>
                </label>
            </div>
            {move || {
                let v = verdict();
                let text = if v.fits {
                    format!("Fits — {} B to spare", grouped_i(v.margin_bytes))
                } else {
                    format!("Does not fit — {} B short", grouped(v.margin_bytes.unsigned_abs()))
                };
                view! {
                    <div class=if v.fits { "verdict pass" } else { "verdict fail" }>
                        <div class="verdict-main" data-testid="budget-verdict" data-fits=v.fits.to_string()>
                            {if v.fits { "PASS" } else { "FAIL" }}
                        </div>
                        <div>
                            <div class="verdict-text">{text}</div>
                            <div class="muted">
                                {format!(
                                    "available {} B = RAM − reserves; needed {} B = minimum {} B + headroom, rounded to 16",
                                    grouped_i(v.available_bytes),
                                    grouped(v.arena_bytes),
                                    grouped(v.minimum_bytes),
                                )}
                            </div>
                        </div>
                    </div>
                    <pre class="snippet" data-testid="firmware-arena" data-bytes=v.arena_bytes.to_string()>
                        {format!(
                            "constexpr size_t kTensorArenaSize = {};  // {} + {} % headroom",
                            v.arena_bytes,
                            v.minimum_bytes,
                            headroom.get_untracked(),
                        )}
                    </pre>
                }
            }}
            {
                let target = target.clone();
                move || {
                    preset_target()
                        .filter(|t| *t != target)
                        .map(|t| {
                            view! {
                                <p class="note">
                                    {format!(
                                        "This device is modelled by the {t} target; the figures above are for {}. Switch the target in the summary for exact numbers.",
                                        target,
                                    )}
                                </p>
                            }
                        })
                }
            }
        </section>
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    Index,
    Name,
    Dtype,
    Bytes,
    Padding,
    Offset,
    First,
    Last,
}

const TABLE_LIMIT: usize = 200;

fn tensor_table(r: Arc<Report>) -> impl IntoView {
    let ctx = expect_context::<Ctx>();
    let filter = RwSignal::new(String::new());
    let sort = RwSignal::new((Col::Offset, true));
    let r2 = r.clone();
    let rows = Memo::new(move |_| {
        let f = filter.get().to_lowercase();
        let (col, asc) = sort.get();
        let mut idx: Vec<usize> = (0..r2.buffers.len())
            .filter(|&i| {
                let b = &r2.buffers[i];
                f.is_empty()
                    || b.name.to_lowercase().contains(&f)
                    || b.dtype.contains(&f)
                    || b.kind.as_str().contains(&f)
            })
            .collect();
        let key = |i: &usize| -> (i128, String) {
            let b = &r2.buffers[*i];
            match col {
                Col::Index => (*i as i128, String::new()),
                Col::Name => (0, b.name.to_lowercase()),
                Col::Dtype => (0, b.dtype.clone()),
                Col::Bytes => (b.bytes as i128, String::new()),
                Col::Padding => (
                    (b.aligned_bytes.saturating_sub(b.bytes)) as i128,
                    String::new(),
                ),
                Col::Offset => (b.offset as i128, String::new()),
                Col::First => (b.first as i128, String::new()),
                Col::Last => (b.last as i128, String::new()),
            }
        };
        idx.sort_by_cached_key(key);
        if !asc {
            idx.reverse();
        }
        let matched = idx.len();
        idx.truncate(TABLE_LIMIT);
        (idx, matched)
    });
    let header = move |label: &'static str, col: Col, right: bool| {
        view! {
            <th
                class:r=right
                class="sortable"
                on:click=move |_| sort.update(|(c, asc)| {
                    if *c == col {
                        *asc = !*asc;
                    } else {
                        *c = col;
                        *asc = true;
                    }
                })
            >
                {label}
                {move || {
                    let (c, asc) = sort.get();
                    (c == col).then_some(if asc { " ▲" } else { " ▼" })
                }}
            </th>
        }
    };
    let total = r.buffers.len();
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>"Head buffers"</h2>
                <input
                    class="filter"
                    type="search"
                    placeholder="Filter by name, dtype or kind…"
                    data-testid="tensor-filter"
                    on:input=move |ev| filter.set(event_target_value(&ev))
                />
            </div>
            <div class="table-wrap">
                <table class="tensors" data-testid="tensor-table">
                    <thead>
                        <tr>
                            {header("#", Col::Index, true)}
                            {header("name", Col::Name, false)}
                            <th>"kind"</th>
                            {header("dtype", Col::Dtype, false)}
                            <th>"shape"</th>
                            {header("bytes", Col::Bytes, true)}
                            {header("padding", Col::Padding, true)}
                            {header("offset", Col::Offset, true)}
                            {header("first", Col::First, true)}
                            {header("last", Col::Last, true)}
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            let (idx, _) = rows.get();
                            idx.into_iter()
                                .map(|i| {
                                    let b = &r.buffers[i];
                                    view! {
                                        <tr
                                            class:selected=move || ctx.sel.get() == Some(Sel::Buffer(i))
                                            on:click=move |_| ctx.sel.set(Some(Sel::Buffer(i)))
                                        >
                                            <td class="r mono">{i}</td>
                                            <td class="name">{b.name.clone()}</td>
                                            <td><span class=format!("kind {}", b.kind)>{b.kind.as_str()}</span></td>
                                            <td>{b.dtype.clone()}</td>
                                            <td class="mono">{shape(&b.shape)}</td>
                                            <td class="r mono">{grouped(b.bytes)}</td>
                                            <td class="r mono">{b.aligned_bytes.saturating_sub(b.bytes)}</td>
                                            <td class="r mono">{grouped_i(b.offset)}</td>
                                            <td class="r mono">{b.first}</td>
                                            <td class="r mono">{b.last}</td>
                                        </tr>
                                    }
                                })
                                .collect_view()
                        }}
                    </tbody>
                </table>
            </div>
            <div class="caption">
                {move || {
                    let (idx, matched) = rows.get();
                    format!("showing {} of {matched} matching · {total} buffers", idx.len())
                }}
            </div>
        </section>
    }
}

fn glossary() -> impl IntoView {
    let items: [(&str, &str); 8] = [
        ("Head", TIP_HEAD),
        ("Tail", TIP_TAIL),
        ("Temp", TIP_TEMP),
        ("Prepare vs Invoke", TIP_PREPARE),
        ("Alignment", TIP_ALIGN),
        ("Lower bound", TIP_LB),
        ("Minimum working arena", TIP_MIN),
        ("Peak op", TIP_PEAK),
    ];
    view! {
        <section class="panel glossary">
            <h2>"What the numbers mean"</h2>
            <dl>
                {items
                    .into_iter()
                    .map(|(k, v)| {
                        let v = v.strip_prefix(k).and_then(|v| v.strip_prefix(": ")).unwrap_or(v);
                        view! { <dt>{k}</dt><dd>{v}</dd> }
                    })
                    .collect_view()}
            </dl>
        </section>
    }
}
