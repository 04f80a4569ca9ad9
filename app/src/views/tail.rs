//! The tail breakdown by TFLM category and the most padded head buffers.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::{grouped, percent};
use microarena_view::ops::tail_by_purpose;

use super::glossary::{TIP_ALIGN, TIP_TAIL};
use super::help;
use crate::state::{Pointer, Sel};

/// The tail breakdown panel.
pub(super) fn tail_view(r: Arc<Report>) -> impl IntoView {
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
    // What the kernels keep in the tail, by op kind and purpose.
    let mut kept = tail_by_purpose(&r);
    let kinds = kept.len();
    kept.truncate(12);
    let ctx = Pointer::get();
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
            {(!kept.is_empty())
                .then(|| {
                    view! {
                        <h3>"What the kernels keep"</h3>
                        <table class="compact" data-testid="tail-purposes">
                            <thead><tr><th>"op"</th><th>"holds"</th><th class="r">"ops"</th><th class="r">"bytes"</th></tr></thead>
                            <tbody>
                                {kept
                                    .into_iter()
                                    .map(|p| {
                                        view! {
                                            <tr>
                                                <td>{p.opcode}</td>
                                                <td>{p.purpose}</td>
                                                <td class="r mono">{p.count}</td>
                                                <td class="r mono">{grouped(p.bytes)}</td>
                                            </tr>
                                        }
                                    })
                                    .collect_view()}
                            </tbody>
                        </table>
                        {(kinds > 12).then(|| {
                            let more = kinds - 12;
                            let noun = if more == 1 { "kind" } else { "kinds" };
                            view! { <p class="muted">{format!("{more} more {noun} in the operator table's tail column")}</p> }
                        })}
                    }
                })}
            <h3>"Alignment padding " {help(TIP_ALIGN)}</h3>
            <p>
                <strong class="mono" data-testid="padding-total" data-bytes=r.arena.padding_bytes.to_string()>
                    {format!("{} B", grouped(r.arena.padding_bytes))}
                </strong>
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
