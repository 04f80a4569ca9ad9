//! The head buffer table: filter, sort, and select a buffer.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::{buffer_shape, grouped, grouped_i};

use super::{spacer, visible_rows};
use crate::io;
use crate::state::{Pointer, Sel};

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

/// The head buffers panel: every buffer, in a virtualised table (only the
/// rows in view are drawn, so a 5,000-buffer model scrolls smoothly).
pub(super) fn buffer_table(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
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
        (idx, matched)
    });
    let scroll = RwSignal::new(0.0f64);
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
            <div class="table-wrap" tabindex="0" role="region" aria-label="Head buffers table" on:scroll=move |ev| scroll.set(io::scroll_top(&ev))>
                <table class="tensors virtual" data-testid="tensor-table">
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
                            let w = visible_rows(idx.len(), scroll.get());
                            let (above, below) = (spacer(w.above, 10), spacer(w.below, 10));
                            let drawn = idx[w.start..w.end]
                                .iter()
                                .map(|&i| {
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
                                            <td class="mono">{buffer_shape(b)}</td>
                                            <td class="r mono">{grouped(b.bytes)}</td>
                                            <td class="r mono">{b.aligned_bytes.saturating_sub(b.bytes)}</td>
                                            <td class="r mono">{grouped_i(b.offset)}</td>
                                            <td class="r mono">{b.first}</td>
                                            <td class="r mono">{b.last}</td>
                                        </tr>
                                    }
                                })
                                .collect_view();
                            view! { {above} {drawn} {below} }
                        }}
                    </tbody>
                </table>
            </div>
            <div class="caption">
                {move || {
                    let (_, matched) = rows.get();
                    format!("{matched} matching of {total} buffers")
                }}
            </div>
        </section>
    }
}
