//! What the numbers mean: the tips the panels show on `?`, and the glossary
//! panel that lists them.

use leptos::prelude::*;

pub(super) const TIP_HEAD: &str = "Head: the non-persistent part of the arena, where the memory planner places activations and scratch buffers. Buffers whose lifetimes do not overlap share bytes.";
pub(super) const TIP_TAIL: &str = "Tail: persistent allocations made while the interpreter is set up — tensor structs, node structs, kernel OpData, quantization arrays, variables. They live as long as the interpreter.";
pub(super) const TIP_TOTAL: &str =
    "Total = head + tail: the figure TFLM itself reports as arena_used_bytes().";
pub(super) const TIP_MIN: &str = "Minimum working arena: the smallest kTensorArenaSize with which AllocateTensors succeeds. Temp allocations during Prepare can make it larger than head + tail.";
pub(super) const TIP_TEMP: &str = "Temp: short-lived allocations made while each op is prepared (Prepare) and released before the next; they share the space above the tail and can set the minimum.";
pub(super) const TIP_PREPARE: &str = "Prepare runs once in AllocateTensors: kernels request OpData (tail), temp memory and scratch buffers. Invoke runs the model and must not allocate: everything it uses was planned in Prepare.";
pub(super) const TIP_ALIGN: &str = "Alignment: TFLM rounds every head buffer up to 16 bytes. The rounding is padding — drawn in red in the arena map.";
pub(super) const TIP_LB: &str = "Lower bound: the largest sum of live (aligned) buffers at any one scope. No planner can make the head smaller; the gap is what a better plan could save at most.";
pub(super) const TIP_OPDATA_FLASH: &str = "OpData in flash: what each kernel's Prepare computes (requantization multipliers, bounds, FFT tables) depends only on the model, so microarena-runtime can keep it in the program image, filled on the host; on the device Prepare compares it instead of storing it, and the tail keeps only the variable tensors.";
pub(super) const TIP_BANDS: &str = "Row bands: a chain of windowed ops at the arena's peak runs one output row at a time; each row pulls the input rows its windows read through the ops before it, whose outputs live in rings of a few whole rows. Every row is computed once, so nothing is recomputed (0 extra MACs) and the outputs are bit-identical.";
pub(super) const TIP_PEAK: &str =
    "Peak op: the operator running at the scope with the most live bytes.";

/// The glossary panel.
pub(super) fn glossary() -> impl IntoView {
    let items: [(&str, &str); 10] = [
        ("Head", TIP_HEAD),
        ("Tail", TIP_TAIL),
        ("Temp", TIP_TEMP),
        ("Prepare vs Invoke", TIP_PREPARE),
        ("Alignment", TIP_ALIGN),
        ("Lower bound", TIP_LB),
        ("Minimum working arena", TIP_MIN),
        ("Peak op", TIP_PEAK),
        ("OpData in flash", TIP_OPDATA_FLASH),
        ("Row bands", TIP_BANDS),
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
