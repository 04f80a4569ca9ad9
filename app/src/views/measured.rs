//! Figures the device measured, in the budget panel: paste or drop the
//! firmware's `MICROARENA-REPORT` line (or QEMU's whole output) and/or its ELF,
//! and the verdict uses the RAM and regions the firmware was linked with and the
//! stacks it measured, each tagged as `microarena check --measured/--elf` tags
//! it, through the same core functions (`report::elf::read`,
//! `Measured::combine`, `report::measured::budget`, `check`).

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_core::report::budget::MCU_PRESETS;
use microarena_core::report::measured::{self, Measured, Ram, Source};
use microarena_view::format::{grouped, grouped_i};

use super::help;
use crate::io;
use crate::state::BudgetInputs;

/// The device's figures as `check --elf/--measured` combines them: the ELF's completed by the
/// report line's; `None` when neither was given, an error that names what is wrong.
pub(super) fn device_figures(inputs: &BudgetInputs) -> Option<Result<Measured, String>> {
    let text = inputs.measured.get();
    let elf = inputs.measured_elf.get();
    let linked = match &elf {
        Some((name, bytes)) => match microarena_core::report::elf::read(bytes) {
            Ok(m) => Some(m),
            Err(e) => return Some(Err(format!("{name}: {e}"))),
        },
        None => None,
    };
    let run = if text.trim().is_empty() {
        None
    } else {
        match Measured::parse(&text) {
            Ok(m) => Some(m),
            Err(e) => return Some(Err(e.to_string())),
        }
    };
    Measured::combine(linked, run).transpose()
}

/// The measured section of the budget panel.
pub(super) fn measured_view(r: Arc<Report>, inputs: BudgetInputs) -> impl IntoView {
    let text = inputs.measured;
    let elf = inputs.measured_elf;
    let device_minimum = inputs.measured_device_minimum;
    let predicted = r.arena.minimum_bytes;
    // An ELF (by its magic) is the linked layout; anything else is the firmware's output.
    let load = move |file: web_sys::File| {
        leptos::task::spawn_local(async move {
            match io::read_file(&file).await {
                Ok(bytes) if bytes.starts_with(b"\x7fELF") => {
                    elf.set(Some((file.name(), bytes.into())));
                }
                Ok(bytes) => text.set(String::from_utf8_lossy(&bytes).into_owned()),
                Err(e) => text.set(e),
            }
        });
    };
    let on_drop = move |ev: web_sys::DragEvent| {
        // Not a model: keep the page's own drop handler out of it.
        ev.prevent_default();
        ev.stop_propagation();
        if let Some(f) = io::dropped_file(&ev) {
            load(f);
        }
    };
    let result = move || {
        let m = match device_figures(&inputs)? {
            Ok(m) => m,
            Err(e) => {
                return Some(
                    view! { <p class="banner error" role="alert" data-testid="measured-error">{e}</p> }
                        .into_any(),
                );
            }
        };
        // As `check --measured [--device | --ram]`: typed RAM wins, a preset's
        // RAM only completes a report without one.
        let ram = match MCU_PRESETS.iter().find(|p| p.name == inputs.device.get()) {
            Some(p) => Ram::Preset(p.ram_bytes),
            None => Ram::Typed(inputs.custom_kib.get().saturating_mul(1024)),
        };
        let headroom_bp =
            u32::try_from(inputs.headroom.get().saturating_mul(100)).unwrap_or(u32::MAX);
        let (budget, figures) = match measured::budget(&m, ram, &[], headroom_bp, Source::Linked) {
            Ok(b) => b,
            Err(e) => {
                return Some(
                    view! { <p class="banner error" role="alert" data-testid="measured-error">{e.to_string()}</p> }
                        .into_any(),
                );
            }
        };
        let minimum = if device_minimum.get() {
            m.minimum().unwrap_or((predicted, Source::Predicted))
        } else {
            (predicted, Source::Predicted)
        };
        let (verdict, checked) = measured::check(&m, &budget, figures, minimum);
        let advice = measured::advice(&budget, &verdict, &checked);
        let fits = verdict.fits;
        let rows = checked
            .figures
            .iter()
            .map(|f| {
                let note = match (f.high_water_bytes, f.reserved_bytes) {
                    (Some(hw), Some(res)) => format!("reserved {} B, measured high-water {} B", grouped(res), grouped(hw)),
                    _ => String::new(),
                };
                view! {
                    <tr
                        data-testid="measured-figure"
                        data-name=f.name.clone()
                        data-bytes=f.bytes.to_string()
                        data-source=f.source.as_str()
                        data-reserved=f.reserved_bytes.map(|b| b.to_string()).unwrap_or_default()
                        data-high-water=f.high_water_bytes.map(|b| b.to_string()).unwrap_or_default()
                    >
                        <td>{f.name.clone()}</td>
                        <td class="r mono">{format!("{} B", grouped(f.bytes))}</td>
                        <td><span class=format!("tag {}", f.source.as_str())>{f.source.as_str()}</span></td>
                        <td class="muted">{note}</td>
                    </tr>
                }
            })
            .collect_view();
        let overflows = checked
            .overflows
            .iter()
            .map(|o| {
                view! {
                    <li data-testid="measured-overflow">
                        {format!(
                            "{}: measured high-water {} B is past its {} B reservation",
                            o.name,
                            grouped(o.high_water_bytes),
                            grouped(o.reserved_bytes),
                        )}
                    </li>
                }
            })
            .collect_view();
        let agrees = checked.device_agrees.map(|a| {
            if a {
                "The firmware's own verdict agrees, figure for figure."
            } else {
                "The firmware's own verdict differs from this one."
            }
        });
        let procedure = checked.procedure.map(|p| {
            format!(
                "On the device: {} invokes, arena high-water {} after each{}; .noinit arena {} B.",
                p.invokes,
                if p.arena_stable {
                    "identical"
                } else {
                    "NOT identical"
                },
                match p.outputs_stable {
                    Some(true) => ", outputs identical each time",
                    Some(false) => ", outputs DIFFERED",
                    None => "",
                },
                grouped(p.noinit_bytes),
            )
        });
        Some(
            view! {
                <div class=if fits { "verdict pass" } else { "verdict fail" }>
                    <div
                        class="verdict-main"
                        data-testid="measured-verdict"
                        data-fits=fits.to_string()
                        data-arena=verdict.arena_bytes.to_string()
                        data-available=verdict.available_bytes.to_string()
                        data-margin=verdict.margin_bytes.to_string()
                    >
                        {if fits { "PASS" } else { "FAIL" }}
                    </div>
                    <div>
                        <div class="verdict-text">
                            {if fits {
                                format!("With the device's figures: fits — {} B to spare", grouped_i(verdict.margin_bytes))
                            } else {
                                format!("With the device's figures: does not fit — {} B short", grouped(verdict.margin_bytes.unsigned_abs()))
                            }}
                        </div>
                        <div class="muted">
                            {format!(
                                "available {} B = RAM − the firmware's regions; needed {} B = minimum {} B + headroom",
                                grouped_i(verdict.available_bytes),
                                grouped(verdict.arena_bytes),
                                grouped(verdict.minimum_bytes),
                            )}
                        </div>
                    </div>
                </div>
                <table class="compact" data-testid="measured-figures">
                    <tbody>{rows}</tbody>
                </table>
                <ul class="measured-notes">
                    {overflows}
                    {procedure.map(|p| view! { <li>{p}</li> })}
                    {agrees.map(|a| view! { <li data-testid="measured-agrees">{a}</li> })}
                    {advice.into_iter().map(|a| view! { <li class="advice-line">{format!("To change: {a}")}</li> }).collect_view()}
                </ul>
            }
            .into_any(),
        )
    };
    view! {
        <div class="measured-box" data-testid="measured" on:drop=on_drop on:dragover=move |ev: web_sys::DragEvent| {
            ev.prevent_default();
            ev.stop_propagation();
        }>
            <h3>
                "Measured on the device "
                {help("Paste or drop the MICROARENA-REPORT line the firmware prints (or QEMU's whole output), and/or open or drop the firmware's ELF (linked with microarena's regions.x). The verdict then counts the RAM and regions the firmware was linked with and the stacks it measured — each figure tagged measured, linked, predicted or assumed, as `microarena check --measured` tags it; the typed reserves above are not used.")}
            </h3>
            <textarea
                class="measured-input"
                data-testid="measured-input"
                rows="3"
                aria-label="The firmware's MICROARENA-REPORT line"
                placeholder="MICROARENA-REPORT v=1 model=… ram_bytes=… reserve.stack=… high_water.stack=… …"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
            <div class="controls">
                <label class="button open">
                    <input
                        type="file"
                        accept=".txt,.log,.elf,text/plain"
                        data-testid="measured-file"
                        on:change=move |ev| {
                            if let Some(f) = io::picked_file(&ev) {
                                load(f);
                            }
                        }
                    />
                    "Open the firmware's output or ELF…"
                </label>
                <label class="check">
                    <input
                        type="checkbox"
                        data-testid="measured-device-minimum"
                        prop:checked=move || device_minimum.get()
                        on:change=move |ev| device_minimum.set(event_target_checked(&ev))
                    />
                    " minimum from the device's arena high-water (as `check --measured` without a model), not the model's"
                </label>
                <button class="button" on:click=move |_| {
                    text.set(String::new());
                    elf.set(None);
                }>"Clear"</button>
            </div>
            {move || elf.get().map(|(name, bytes)| view! {
                <p class="muted" data-testid="measured-elf" data-name=name.clone()>
                    {format!("ELF: {name} ({} B): the RAM, regions and arena it was linked with", grouped(bytes.len() as u64))}
                </p>
            })}
            {result}
        </div>
    }
}
