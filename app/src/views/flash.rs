//! The flash view: what the model takes in flash (constant data against
//! flatbuffer overhead), each op's constants against the tail bytes its
//! Prepare derives in RAM, the largest constants, and any constant TFLM
//! copies into RAM. Every figure is `report.flash` or a per-op field.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::{grouped, human, percent, shape};
use microarena_view::ops::per_mille;
use microarena_view::svg::{self, COMPUTE_H, OP_W};

use super::help;
use crate::state::{Pointer, Sel};

const TIP_FLASH: &str = "The .tflite file is what goes into flash. Constant data: the buffers constant tensors read (weights, biases, LUTs; a buffer shared by several tensors counted once). Overhead: everything else in the file (flatbuffer tables, names, quantization parameters, metadata, alignment). TFLM reads constants in place from flash; what Prepare derives from them (per-channel multipliers and shifts, kernel sums, effective biases) is the op's tail in RAM.";

/// The flash panel.
pub(super) fn flash_view(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
    let f = r.flash.clone();
    let n = r.operators.len();
    let w = OP_W * n.max(1) as f64;
    let constant_pm = per_mille(f.constant_bytes, f.file_bytes);
    let largest = f.largest.clone();
    let op_row = {
        let r = r.clone();
        move |sub: usize, op: usize| {
            r.operators
                .iter()
                .position(|o| o.subgraph == sub && o.index == op)
        }
    };
    let copies = f.ram_copies.clone();
    view! {
        <section class="panel flash" data-testid="flash-view" data-file-bytes=f.file_bytes.to_string() data-constant-bytes=f.constant_bytes.to_string()>
            <div class="panel-head">
                <h2>"Flash " {help(TIP_FLASH)}</h2>
                <span class="muted" data-testid="flash-total">{format!("{} B ({})", grouped(f.file_bytes), human(f.file_bytes))}</span>
            </div>
            <div class="flash-split" title="constant data | flatbuffer overhead">
                <span class="flash-const" style=format!("width:{:.1}%", constant_pm as f64 / 10.0)></span>
                <span class="flash-over"></span>
            </div>
            <dl class="figures">
                <dt><i style=format!("background:{}", svg::FLASH_FILL)></i>"constant data"</dt>
                <dd class="mono" data-testid="flash-constant">{format!("{} B · {}", grouped(f.constant_bytes), percent(f.constant_bytes, f.file_bytes))}</dd>
                <dt><i style="background:#cbd5e1"></i>"flatbuffer overhead"</dt>
                <dd class="mono" data-testid="flash-overhead">{format!("{} B · {}", grouped(f.overhead_bytes), percent(f.overhead_bytes, f.file_bytes))}</dd>
                <dt>"buffers / tensors"</dt>
                <dd class="mono">{format!("{} / {}", f.constant_buffers, f.constant_tensors)}</dd>
                {(f.unattributed_bytes > 0).then(|| view! {
                    <dt>"read by no op"</dt>
                    <dd class="mono">{format!("{} B", grouped(f.unattributed_bytes))}</dd>
                })}
                {(f.external_bytes > 0).then(|| view! {
                    <dt>"stored after the flatbuffer"</dt>
                    <dd class="mono">{format!("{} B", grouped(f.external_bytes))}</dd>
                })}
            </dl>
            {copies.into_iter().map(|c| view! {
                <p class="note warn" data-testid="ram-copy">
                    {format!("Op #{} {} (subgraph {}) copies up to {} B of constants into RAM: {}.", c.op, c.opcode, c.subgraph, grouped(c.bytes), c.condition)}
                </p>
            }).collect_view()}
            <h3>
                "Per op: flash up, RAM it derives down "
                {help("Up (teal): the constant bytes each op reads in place from flash (a shared buffer counts at its first reader). Down (grey): the tail bytes the op keeps in RAM (builtin data, OpData, per-channel arrays, kernel sums). Each half has its own scale.")}
            </h3>
            <svg
                class="ops compute"
                data-testid="flash-bars"
                viewBox=format!("0 0 {w} {COMPUTE_H}")
                preserveAspectRatio="none"
                on:click=move |ev| ctx.sel.set(super::op_bars::op_at(&ev, n).map(Sel::Op))
            >
                <g inner_html=svg::flash_vs_tail_body(&r)></g>
            </svg>
            <h3>"Largest constants"</h3>
            <div class="table-wrap">
            <table class="compact" data-testid="largest-constants">
                <thead>
                    <tr><th>"tensor"</th><th>"type"</th><th>"read by"</th><th class="r">"bytes"</th></tr>
                </thead>
                <tbody>
                    {largest
                        .into_iter()
                        .map(|c| {
                            let row = c.op.and_then(|op| op_row(c.subgraph, op));
                            let reader = match (&c.op, &c.opcode) {
                                (Some(op), Some(name)) => format!("#{op} {name}"),
                                _ => "—".into(),
                            };
                            let shared = if c.tensors > 1 { format!(" (×{} tensors)", c.tensors) } else { String::new() };
                            view! {
                                <tr class="clickable" on:click=move |_| ctx.sel.set(row.map(Sel::Op))>
                                    <td class="name" title=c.name.clone()>{format!("{}{shared}", c.name)}</td>
                                    <td class="mono">{format!("{} {}", c.dtype, shape(&c.shape))}</td>
                                    <td>{reader}</td>
                                    <td class="r mono">{grouped(c.bytes)}</td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
            </div>
        </section>
    }
}
