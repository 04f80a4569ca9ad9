//! The arena map (buffers by lifetime and offset, zoom, pan, selection,
//! SVG/PNG export) and the tail strip of variables above it.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::{grouped, human, shape};
use microarena_view::svg::{self, MAP_H, MAP_W, MapGeom};
use microarena_view::tooltip::{owner, var_name};

use super::help;
use super::tooltip::{buffer_hover, tooltip};
use crate::io;
use crate::state::{Pointer, Sel, Stepper};

/// The arena map panel, with the variables' tail strip and the tooltip.
pub(super) fn arena_map(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
    // Exports are named after the model file.
    let stem = r
        .model
        .file
        .strip_suffix(".tflite")
        .unwrap_or(&r.model.file)
        .to_string();
    let (stem_svg, stem_png) = (stem.clone(), stem);
    let (r_svg, r_png) = (r.clone(), r.clone());
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
    let r_step = r.clone();
    let step_overlay = move || {
        let (s, at) = Stepper::get()?.current()?;
        let body = microarena_view::steps::map_overlay(&r_step, &s, at);
        Some(
            view! { <g class="step-overlay" data-testid="map-step" data-at=at.to_string() inner_html=body></g> },
        )
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
                        {step_overlay}
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

/// Most variables drawn one band each in the map's tail strip.
const VARIABLE_BANDS: usize = 8;

/// The tail strip above the arena map: the variable tensors as their own
/// region, where TFLM puts them (the bottom of the tail, next to the head),
/// under the rest of the tail. Not to scale with the head.
fn variable_region(r: &Report) -> Option<impl IntoView + use<>> {
    let ctx = Pointer::get();
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
