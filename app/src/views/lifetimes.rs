//! The lifetimes chart: one row per tail variable and head buffer, bars
//! across the scopes each must stay intact.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::{BufferClass, Report};
use microarena_view::format::grouped;
use microarena_view::svg::{self, MapGeom, Row};
use microarena_view::tooltip::{owner, var_name};

use super::help;
use super::tooltip::buffer_hover;
use crate::io;
use crate::state::{Pointer, Sel, Stepper, Window};

/// The lifetimes panel, over the scope window (context) only: the rows of
/// the buffers alive in it, so a 2,000-buffer model stays readable.
pub(super) fn lifetimes(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
    let win = Window::get();
    let vars = svg::tail_variables(&r).len();
    let geom = MapGeom::of(&r);
    let r_chart = r.clone();
    let chart = move || {
        let w = win.0.get();
        let r = r_chart.clone();
        // Rows fill about 280 px for small windows, never thinner than 3 px; up to
        // 48 rows stay tall enough to label (the panel scrolls).
        let n_rows = vars
            + r.buffers
                .iter()
                .filter(|b| b.first <= w.hi && b.last >= w.lo)
                .count();
        let row_h = (280.0 / n_rows.max(1) as f64).clamp(3.0, 14.0).floor();
        let row_h = if n_rows <= 48 { row_h.max(12.0) } else { row_h };
        let (body, rows) = svg::lifetimes_window(&r, row_h, w);
        let mut row_of = vec![usize::MAX; r.buffers.len()];
        for (row, what) in rows.iter().enumerate() {
            if let Row::Buffer(i) = *what {
                row_of[i] = row;
            }
        }
        let height = (row_h * rows.len() as f64).max(row_h);
        let (x0, xw) = w.x_range(&geom);
        let pct = move |x: f64| (x - x0) / xw * 100.0;
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
                            let start = pct(geom.x(b.first)).max(0.0);
                            let end = pct(geom.x(b.last + 1)).min(100.0);
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
        let (r_step, rows_step) = (r.clone(), row_of.clone());
        let step_overlay = move || {
            let (s, at) = Stepper::get()?.current()?;
            let body = microarena_view::steps::lifetimes_overlay(
                &r_step, &s, at, &rows_step, row_h, height,
            );
            Some(view! { <g class="step-overlay" inner_html=body></g> })
        };
        let r2 = r.clone();
        let selection = move || match ctx.sel.get()? {
            Sel::Buffer(i) => {
                let b = r2.buffers.get(i)?;
                let row = *row_of.get(i).filter(|&&k| k != usize::MAX)?;
                let y = row as f64 * row_h;
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
            <div class="lt-wrap">
                <svg
                    class="lifetimes"
                    data-testid="lifetimes"
                    data-variables=vars.to_string()
                    data-rows=n_rows.to_string()
                    data-lo=w.lo.to_string()
                    data-hi=w.hi.to_string()
                    viewBox=format!("{x0} 0 {xw} {height}")
                    preserveAspectRatio="none"
                    style=format!("height:{height}px")
                    on:mousemove=move |ev| buffer_hover(&ev, ctx)
                    on:mouseleave=move |_| ctx.hover.set(None)
                    on:click=move |ev| ctx.sel.set(io::target_index(&ev, "data-i").map(Sel::Buffer))
                >
                    <g inner_html=body></g>
                    {step_overlay}
                    {selection}
                </svg>
                {labels}
            </div>
        }
    };
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>
                    "Lifetimes "
                    {help("One row per head buffer alive in the scope window, ordered by first use: the bar spans the scopes (operator steps) in which the buffer must stay intact. Variable tensors (LSTM/SVDF state, magenta) come first and span every scope: they live for the whole interpreter. The overview strip above sets the window.")}
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
            <div class="scroll" tabindex="0" role="region" aria-label="Lifetimes chart">{chart}</div>
        </section>
    }
}
