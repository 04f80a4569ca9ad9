//! The per-op bars: live head, scratch and persistent bytes per operator,
//! and under them, in the same columns, each op's MACs.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::grouped;
use microarena_view::ops::macs_short;
use microarena_view::svg::{self, COMPUTE_H, OP_W, OPS_H};

use super::help;
use crate::io;
use crate::state::{Hover, Pointer, Sel, Stepper, Window};

/// The per-op memory panel.
pub(super) fn op_bars(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
    let body = svg::op_bars_body(&r);
    let compute = svg::compute_bars_body(&r);
    let heaviest = r
        .operators
        .iter()
        // The first of equals: `max_by_key` keeps the last one it sees.
        .rev()
        .max_by_key(|o| o.macs)
        .filter(|o| o.macs > 0)
        .map(|o| {
            format!(
                " · heaviest #{} {} {}",
                o.index,
                o.opcode,
                macs_short(o.macs)
            )
        })
        .unwrap_or_default();
    let win = Window::get();
    let n_ops = r.operators.len();
    // The columns of the ops in the scope window: first and count.
    let r_cols = r.clone();
    let cols = Memo::new(move |_| microarena_view::window::op_columns(&r_cols, win.0.get()));
    let view_box = move |h: f64| {
        let (first, count) = cols.get();
        format!(
            "{} 0 {} {h}",
            first as f64 * OP_W,
            OP_W * count.max(1) as f64
        )
    };
    let at = move |ev: &web_sys::MouseEvent| {
        let (first, count) = cols.get_untracked();
        op_at(ev, count).map(|i| first + i)
    };
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
    let step_op = move || {
        let (s, at) = Stepper::get()?.current()?;
        let i = microarena_view::steps::step_op(s.steps.get(at)?)?;
        Some(
            view! { <rect class="step-op" data-testid="op-step" data-op=i.to_string() x=i as f64 * OP_W y=0 width=OP_W height=OPS_H /> },
        )
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
                data-first=move || cols.get().0.to_string()
                data-count=move || cols.get().1.to_string()
                viewBox=move || view_box(OPS_H)
                preserveAspectRatio="none"
                on:mousemove=move |ev| match at(&ev) {
                    Some(i) => {
                        ctx.hover
                            .set(Some(Hover::Op(i, f64::from(ev.client_x()), f64::from(ev.client_y()))))
                    }
                    None => ctx.hover.set(None),
                }
                on:mouseleave=move |_| ctx.hover.set(None)
                on:click=move |ev| ctx.sel.set(at(&ev).map(Sel::Op))
            >
                <g inner_html=body></g>
                {step_op}
                {selection}
            </svg>
            <div class="caption">
                {move || {
                    let (_, count) = cols.get();
                    let n = n_ops;
                    if count < n {
                        format!("{count} of {n} operators (the scope window) · {peak}")
                    } else {
                        format!("{n} operators · {peak}")
                    }
                }}
            </div>
            <h3>
                "Compute "
                {help("Multiply-accumulates per invoke for each operator, in the same columns as the memory bars (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, TRANSPOSE_CONV, pooling windows, LSTM, SVDF, BATCH_MATMUL; other ops have none).")}
                <span class="legend"><i style=format!("background:{}", svg::MACS_FILL)></i>"MACs"</span>
            </h3>
            <svg
                class="ops compute"
                data-testid="compute-bars"
                data-macs=r.compute.macs.to_string()
                viewBox=move || view_box(COMPUTE_H)
                preserveAspectRatio="none"
                on:click=move |ev| ctx.sel.set(at(&ev).map(Sel::Op))
            >
                <g inner_html=compute></g>
            </svg>
            <div class="caption">{format!("{} MACs per invoke{heaviest}", grouped(r.compute.macs))}</div>
        </section>
    }
}

/// The operator column under the pointer in the op-bars chart.
pub(super) fn op_at(ev: &web_sys::MouseEvent, ops: usize) -> Option<usize> {
    let (fx, _) = io::relative_pos(ev)?;
    let i = (fx * ops as f64).floor();
    (i >= 0.0 && i < ops as f64).then_some(i as usize)
}
