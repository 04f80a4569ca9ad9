//! The operator table: every op with its compute (MACs), its constants in
//! flash and its RAM (live head, scratch, tail), sortable by any of them.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::grouped;
use microarena_view::ops::{OpCol, sorted_rows, tail_items};

use super::{spacer, visible_rows};
use crate::io;
use crate::state::{Pointer, Sel};

/// The operator table panel.
pub(super) fn op_table(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
    let sort = RwSignal::new((OpCol::Macs, false));
    let r2 = r.clone();
    let rows = Memo::new(move |_| {
        let (col, asc) = sort.get();
        sorted_rows(&r2, col, asc)
    });
    let header = move |label: &'static str, col: OpCol, right: bool| {
        view! {
            <th
                class:r=right
                class="sortable"
                data-col=label
                on:click=move |_| sort.update(|(c, asc)| {
                    if *c == col {
                        *asc = !*asc;
                    } else {
                        *c = col;
                        // Figures read best largest first; names and order from the top.
                        *asc = matches!(col, OpCol::Index | OpCol::Opcode);
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
    let c = r.compute;
    let scroll = RwSignal::new(0.0f64);
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>"Operators"</h2>
                <span class="muted">
                    {format!("{} MACs · {} B constants", grouped(c.macs), grouped(r.flash.constant_bytes))}
                </span>
            </div>
            <div class="table-wrap" tabindex="0" role="region" aria-label="Operators table" on:scroll=move |ev| scroll.set(io::scroll_top(&ev))>
                <table class="tensors virtual" data-testid="op-table">
                    <thead>
                        <tr>
                            {header("#", OpCol::Index, true)}
                            {header("op", OpCol::Opcode, false)}
                            {header("MACs", OpCol::Macs, true)}
                            {header("weights", OpCol::Weights, true)}
                            {header("live", OpCol::Live, true)}
                            {header("scratch", OpCol::Scratch, true)}
                            {header("tail", OpCol::Tail, true)}
                            <th class="r">"elements"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {move || {
                            let idx = rows.get();
                            let w = visible_rows(idx.len(), scroll.get());
                            let (above, below) = (spacer(w.above, 8), spacer(w.below, 8));
                            let drawn = idx[w.start..w.end]
                                .iter()
                                .map(|&i| {
                                    let o = &r.operators[i];
                                    view! {
                                        <tr
                                            data-row=i
                                            class:selected=move || ctx.sel.get() == Some(Sel::Op(i))
                                            on:click=move |_| ctx.sel.set(Some(Sel::Op(i)))
                                        >
                                            <td class="r mono">{if o.subgraph == 0 { o.index.to_string() } else { format!("{}:{}", o.subgraph, o.index) }}</td>
                                            <td>{o.opcode.clone()}</td>
                                            <td class="r mono" data-macs=o.macs.to_string()>{grouped(o.macs)}</td>
                                            <td class="r mono" data-weights=o.constant_bytes.to_string()>{grouped(o.constant_bytes)}</td>
                                            <td class="r mono">{grouped(o.live_bytes)}</td>
                                            <td class="r mono">{grouped(o.scratch_bytes)}</td>
                                            <td class="r mono" title=tail_items(o)>{grouped(o.persistent_bytes)}</td>
                                            <td class="r mono">{grouped(o.elements)}</td>
                                        </tr>
                                    }
                                })
                                .collect_view();
                            view! { {above} {drawn} {below} }
                        }}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
