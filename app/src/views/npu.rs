//! The NPU view: a Vela model's own region — the scratch the Ethos-U works in (with the
//! feature maps Vela placed inside it), the fast scratch, and the command streams and weights
//! it reads from flash. Every figure is `report.npu`.

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_core::report::npu::NpuTensor;
use microarena_view::format::grouped;

use super::help;

const TIP_NPU: &str = "Vela replaces what the NPU runs by one ethos-u operator per command stream. Its inputs: the command stream and the packed weights (read from flash), the scratch tensor (the NPU's working memory in the arena; Vela's offline plan puts the op's input and output feature maps inside it) and the fast scratch (the same addresses on an Ethos-U55 with Shared_Sram; its own memory on an Ethos-U65 with Dedicated_Sram). TFLM adds OpData and two small address tables per op.";

fn row(what: &'static str, t: Option<NpuTensor>) -> impl IntoView {
    t.map(|t| {
        let at = t.offset.map_or("flash".to_string(), |o| format!("@{o}"));
        view! {
            <tr>
                <td>{what}</td>
                <td class="mono">{t.name}</td>
                <td class="mono num">{grouped(t.bytes)}</td>
                <td class="mono">{at}</td>
            </tr>
        }
    })
}

/// The NPU panel, or nothing for a model without NPU operators.
pub(super) fn npu_view(r: Arc<Report>) -> impl IntoView {
    let npu = r.npu.clone()?;
    let ops = npu.ops.clone();
    Some(view! {
        <section class="panel npu" data-testid="npu-view" data-arena-bytes=npu.arena_bytes.to_string() data-flash-bytes=npu.flash_bytes.to_string()>
            <div class="panel-head">
                <h2>{format!("NPU region ({}) ", npu.co_processor)} {help(TIP_NPU)}</h2>
                <span class="muted">{if npu.registered { "registered by this target's TFLM build" } else { "this target's TFLM build does not register it" }}</span>
            </div>
            <dl class="figures">
                <dt>"arena the NPU works in"</dt>
                <dd class="mono" data-testid="npu-arena">{format!("{} B", grouped(npu.arena_bytes))}</dd>
                <dt>"fast scratch"</dt>
                <dd>{if npu.fast_scratch_shared { "shares the scratch (Shared_Sram)" } else { "a memory of its own (Dedicated_Sram)" }}</dd>
                <dt>"flash it reads"</dt>
                <dd class="mono" data-testid="npu-flash">{format!("{} B", grouped(npu.flash_bytes))}</dd>
            </dl>
            {ops.into_iter().map(|o| view! {
                <table class="npu-op">
                    <caption>{format!("subgraph {} op {} ethos-u: {} feature map(s) inside the scratch", o.subgraph, o.op_index, o.inside_scratch.len())}</caption>
                    <thead><tr><th>"role"</th><th>"tensor"</th><th class="num">"bytes"</th><th>"where"</th></tr></thead>
                    <tbody>
                        {row("scratch", o.scratch)}
                        {row("fast scratch", o.fast_scratch)}
                        {row("command stream", o.command_stream)}
                        {row("weights", o.weights)}
                    </tbody>
                </table>
            }).collect_view()}
        </section>
    })
}
