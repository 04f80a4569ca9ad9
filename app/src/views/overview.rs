//! The overview strip over the lifetimes and per-op bars: live bytes at
//! every scope of the whole model, with the scope window they show. Drag
//! on it to choose a window, or use the buttons and fields (keyboard).

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_core::report::steps::StepEvent;
use microarena_view::svg::MapGeom;
use microarena_view::window::{DEFAULT_SPAN, STRIP_H, STRIP_W, ScopeWindow, overview_body};

use super::help;
use crate::io;
use crate::state::{Stepper, Window};

/// The strip and its controls.
pub(super) fn overview(r: Arc<Report>) -> impl IntoView {
    let win = Window::get();
    let all = ScopeWindow::all(&r);
    let geom = MapGeom::of(&r);
    let body = overview_body(&r);
    let peak = r.arena.peak_scope;
    let drag = StoredValue::new(None::<i32>);
    let scope_at = move |ev: &web_sys::MouseEvent| {
        io::relative_pos(ev).map(|(fx, _)| geom.scope_at(fx * STRIP_W).floor() as i32)
    };
    let down = move |ev: web_sys::MouseEvent| drag.set_value(scope_at(&ev));
    let up = move |ev: web_sys::MouseEvent| {
        if let (Some(a), Some(b)) = (drag.get_value(), scope_at(&ev)) {
            // A click centres the window there; a drag chooses it.
            win.0.set(if (a - b).abs() < 2 {
                all.around(b, win.0.get_untracked().len())
            } else {
                all.between(a, b)
            });
        }
        drag.set_value(None);
    };
    let window_rect = move || {
        let w = win.0.get();
        let (x, width) = w.x_range(&geom);
        view! { <rect class="window" x=x y=0 width=width height=STRIP_H /> }
    };
    let field = move |label: &'static str, lo: bool| {
        view! {
            <label class="scope-field">
                {label}
                <input
                    type="number"
                    data-testid=if lo { "window-lo" } else { "window-hi" }
                    min=all.lo.to_string()
                    max=all.hi.to_string()
                    prop:value=move || { let w = win.0.get(); if lo { w.lo } else { w.hi }.to_string() }
                    on:change=move |ev| {
                        if let Ok(v) = event_target_value(&ev).parse::<i32>() {
                            let w = win.0.get_untracked();
                            win.0.set(if lo { all.between(v, w.hi) } else { all.between(w.lo, v) });
                        }
                    }
                />
            </label>
        }
    };
    let big = all.len() > DEFAULT_SPAN;
    // The step-through's current scope stays in view.
    let r_step = r.clone();
    Effect::new(move |_| {
        let Some((s, at)) = Stepper::get().and_then(|st| st.current()) else {
            return;
        };
        let scope = match s.steps.get(at).map(|x| &x.event) {
            Some(StepEvent::Invoke { scope, .. }) => Some(*scope),
            Some(StepEvent::Place { buffer, .. }) => r_step.buffers.get(*buffer).map(|b| b.first),
            _ => None,
        };
        let w = win.0.get_untracked();
        if let Some(scope) = scope.filter(|&sc| !w.contains(sc)) {
            win.0.set(all.around(scope, w.len()));
        }
    });
    view! {
        <section class="panel overview" data-testid="overview">
            <div class="panel-head">
                <h2>
                    "Scope window "
                    {help("Live head bytes at every scope of the whole model; the outlined window is what the lifetimes and per-op bars below show. Drag on the strip to choose a window, click to move it there, or type its first and last scope.")}
                </h2>
                <div class="controls">
                    {field("scopes ", true)}
                    {field(" to ", false)}
                    <button class="button" aria-label="Earlier scopes" on:click=move |_| win.0.update(|w| *w = all.pan(*w, -(w.len() / 2).max(1)))>"◀"</button>
                    <button class="button" aria-label="Later scopes" on:click=move |_| win.0.update(|w| *w = all.pan(*w, (w.len() / 2).max(1)))>"▶"</button>
                    <button class="button" on:click=move |_| win.0.update(|w| *w = all.zoom(*w, 0.5))>"Zoom in"</button>
                    <button class="button" on:click=move |_| win.0.update(|w| *w = all.zoom(*w, 2.0))>"Zoom out"</button>
                    <button class="button" data-testid="window-peak" on:click=move |_| win.0.set(all.around(peak, DEFAULT_SPAN))>"Peak"</button>
                    <button class="button" data-testid="window-all" on:click=move |_| win.0.set(all)>"Whole model"</button>
                </div>
            </div>
            <svg
                class="strip"
                data-testid="overview-strip"
                data-scopes=all.len().to_string()
                viewBox=format!("0 0 {STRIP_W} {STRIP_H}")
                preserveAspectRatio="none"
                role="img"
                aria-label="Live bytes over the whole model, with the scope window outlined"
                on:mousedown=down
                on:mouseup=up
            >
                <g inner_html=body></g>
                {window_rect}
            </svg>
            <div class="caption">
                {move || {
                    let w = win.0.get();
                    format!(
                        "scopes {}–{} of {}–{}{}",
                        w.lo,
                        w.hi,
                        all.lo,
                        all.hi,
                        if big && w.len() < all.len() { " · zoomed so each op stays readable" } else { "" },
                    )
                }}
            </div>
        </section>
    }
}
