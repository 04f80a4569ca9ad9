//! The budget panel: does the model fit a device's RAM after its other
//! reserves, with `Budget::check` (the CLI's `check`) giving the verdict.
//! Choosing a device re-plans for the target modelling its core and its
//! SDK's kernels, as `check --device` does. Does the file fit the flash beside the
//! firmware's code (`FlashBudget`, the CLI's `check --flash --code`).

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_core::report::budget::{
    Budget, MCU_PRESETS, McuPreset, Reserve, peak_buffers, peak_summary,
};
use microarena_core::report::flash::FlashBudget;
use microarena_core::report::placement::place;
use microarena_core::tflm::profile;
use microarena_view::format::{grouped, grouped_i};

use super::help;
use crate::state::{BudgetInputs, Controls};

fn kib_input(label: &'static str, value: RwSignal<u64>) -> impl IntoView {
    view! {
        <label class="field">
            <span>{label}</span>
            <input
                type="number"
                min="0"
                step="1"
                prop:value=move || value.get().to_string()
                on:input=move |ev| value.set(event_target_value(&ev).trim().parse().unwrap_or(0))
            />
            <span class="muted">"KiB"</span>
        </label>
    }
}

/// The budget panel. `shared`: the report came from a share link, so the
/// target cannot change (there is no model to re-plan).
pub(super) fn budget_view(r: Arc<Report>, shared: bool, c: Controls) -> impl IntoView {
    let Controls {
        target: selected_target,
        budget: inputs,
        replan,
        extras,
        ..
    } = c;
    let BudgetInputs {
        device: preset,
        custom_kib,
        stack,
        rtos,
        isr,
        dma,
        log,
        headroom,
        custom_flash_kib,
        code_kib,
        ..
    } = inputs;
    let model_bytes = r.flash.file_bytes;
    let minimum = r.arena.minimum_bytes;
    let target = r.target.clone();
    // The figures' target, labelled when derived (never measured against TFLM).
    let figures_of = if r.target_derived {
        format!("{} (derived)", r.target)
    } else {
        r.target.clone()
    };
    let find =
        |name: &str| -> Option<&'static McuPreset> { MCU_PRESETS.iter().find(|p| p.name == name) };
    let budget = move || Budget {
        ram_bytes: find(&preset.get())
            .map_or(custom_kib.get().saturating_mul(1024), |p| p.ram_bytes),
        reserves: [
            ("stack", stack),
            ("rtos", rtos),
            ("isr", isr),
            ("dma", dma),
            ("log", log),
        ]
        .iter()
        .map(|(n, v)| Reserve {
            name: (*n).into(),
            bytes: v.get().saturating_mul(1024),
        })
        .collect(),
        headroom_bp: u32::try_from(headroom.get().saturating_mul(100)).unwrap_or(u32::MAX),
    };
    let verdict = move || budget().check(minimum);
    let superseded = move || super::measured::device_figures(&inputs).is_some_and(|m| m.is_ok());
    // Where the arena goes among the device's memories (as `check --device`), once
    // the worker has sent the two-buffer sizes.
    let placement = move || {
        let p = find(&preset.get())?;
        let split = extras.get()?.split?;
        let b = budget();
        Some(place(
            p.memories,
            minimum,
            split,
            b.reserved_bytes(),
            b.headroom_bp,
        ))
    };
    // On-chip flash from the preset; a chip on external flash, or a custom
    // device, takes the size from its field.
    let preset_flash = move || {
        MCU_PRESETS
            .iter()
            .find(|p| p.name == preset.get())
            .and_then(|p| p.flash_bytes)
    };
    let flash_verdict = move || {
        FlashBudget {
            flash_bytes: preset_flash()
                .unwrap_or_else(|| custom_flash_kib.get().saturating_mul(1024)),
            code_bytes: code_kib.get().saturating_mul(1024),
        }
        .check(model_bytes)
    };
    // Choosing a device re-plans for its target (unless the report is a shared one).
    let choose = move |name: String| {
        let to = find(&name).and_then(|p| p.target);
        preset.set(name);
        if let Some(t) = to
            && !shared
            && selected_target.get_untracked() != t
        {
            selected_target.set(t.to_string());
            replan.run(());
        }
    };
    let peak_text = peak_summary(&peak_buffers(&r)).map(|p| {
        let scratch = if p.scratch_bytes > 0 {
            format!(" — {} B of it kernel scratch", grouped(p.scratch_bytes))
        } else {
            String::new()
        };
        format!(
            "The head at its peak holds {} B{scratch}: {}",
            grouped(p.total_bytes),
            p.named
        )
    });
    view! {
        <section class="panel">
            <div class="panel-head">
                <h2>
                    "Budget "
                    {help("Does the model fit the device? RAM minus everything else that lives in RAM must hold the minimum working arena plus headroom.")}
                </h2>
            </div>
            <div class="budget">
                <label class="field">
                    <span>"Device"</span>
                    <select
                        data-testid="mcu-preset"
                        on:change=move |ev| choose(event_target_value(&ev))
                    >
                        {MCU_PRESETS
                            .iter()
                            .map(|p| {
                                let n = p.name;
                                view! {
                                    <option value=n selected=move || preset.get() == n>
                                        {format!("{n} — {} KiB", p.ram_bytes / 1024)}
                                    </option>
                                }
                            })
                            .collect_view()}
                        <option value="custom">"Custom RAM…"</option>
                    </select>
                </label>
                {move || (preset.get() == "custom").then(|| kib_input("RAM", custom_kib))}
                {move || {
                    find(&preset.get())
                        .map(|p| {
                            let runs = match p.target {
                                // A target never measured against TFLM is labelled, as everywhere.
                                Some(t) if profile::by_name(t).is_some_and(|q| q.measured_against.is_none()) => {
                                    format!("{} · {} → target {t} (derived)", p.core, p.backend)
                                }
                                Some(t) => format!("{} · {} → target {t}", p.core, p.backend),
                                None => format!("{} · {} → not modelled", p.core, p.backend),
                            };
                            view! {
                                <p class="muted device-line" data-testid="device-line" title=p.source>
                                    {runs}
                                </p>
                            }
                        })
                }}
                {kib_input("Main stack", stack)}
                {kib_input("RTOS", rtos)}
                {kib_input("Interrupt stack", isr)}
                {kib_input("DMA buffers", dma)}
                {kib_input("Log buffers", log)}
                {move || preset_flash().is_none().then(|| kib_input("Flash", custom_flash_kib))}
                {kib_input("Firmware code", code_kib)}
                <label class="field">
                    <span>"Headroom"</span>
                    <input
                        type="number"
                        min="0"
                        max="500"
                        prop:value=move || headroom.get().to_string()
                        on:input=move |ev| headroom.set(event_target_value(&ev).trim().parse().unwrap_or(0))
                    />
                    <span class="muted">"%"</span>
                </label>
            </div>
            {move || {
                // The device's figures, once given, decide (see `measured`).
                superseded().then(|| view! {
                    <p class="note" data-testid="budget-superseded">
                        "The firmware's measured figures below decide the verdict; this one uses the typed RAM and reserves."
                    </p>
                })
            }}
            {move || {
                let v = verdict();
                // RAM that adds up is not enough: some memory must hold the buffers (as `check`).
                let placed = placement().is_none_or(|p| p.fits());
                let fits = v.fits && placed;
                let text = if fits {
                    format!("Fits — {} B to spare", grouped_i(v.margin_bytes))
                } else if v.fits {
                    "Does not fit — the RAM adds up, but no memory holds the arena".to_string()
                } else {
                    format!("Does not fit — {} B short", grouped(v.margin_bytes.unsigned_abs()))
                };
                view! {
                    <div class=if fits { "verdict pass" } else { "verdict fail" } class:superseded=superseded>
                        <div class="verdict-main" data-testid="budget-verdict" data-fits=fits.to_string()>
                            {if fits { "PASS" } else { "FAIL" }}
                        </div>
                        <div>
                            <div class="verdict-text">{text}</div>
                            <div class="muted">
                                {format!(
                                    "available {} B = RAM − reserves; needed {} B = minimum {} B ({figures_of}) + headroom, rounded to 16",
                                    grouped_i(v.available_bytes),
                                    grouped(v.arena_bytes),
                                    grouped(v.minimum_bytes),
                                )}
                            </div>
                        </div>
                    </div>
                    {(!fits).then(|| peak_text.clone()).flatten().map(|t| {
                        view! { <p class="note" data-testid="budget-peak">{t}</p> }
                    })}
                    <pre class="snippet" data-testid="firmware-arena" data-bytes=v.arena_bytes.to_string()>
                        {format!(
                            "constexpr size_t kTensorArenaSize = {};  // {} + {} % headroom",
                            v.arena_bytes,
                            v.minimum_bytes,
                            headroom.get_untracked(),
                        )}
                    </pre>
                    {placement().map(|p| {
                        let fits = p.fits();
                        view! {
                            <div class="placement" data-testid="placement" data-fits=fits.to_string()>
                                <p class="muted">
                                    <strong>"Placement: "</strong>
                                    {p.summary()}
                                </p>
                                {fits.then(|| view! { <pre class="snippet" data-testid="placement-cpp">{p.cpp.clone()}</pre> })}
                            </div>
                        }
                    })}
                }
            }}
            {move || {
                // A share link of format 1 carries no file size: no flash verdict then.
                (model_bytes > 0).then(|| {
                    let v = flash_verdict();
                    let text = if v.fits {
                        format!("Flash: fits — {} B to spare", grouped_i(v.margin_bytes))
                    } else {
                        format!("Flash: does not fit — {} B short", grouped(v.margin_bytes.unsigned_abs()))
                    };
                    view! {
                        <div class=if v.fits { "verdict pass small" } else { "verdict fail small" }>
                            <div class="verdict-main" data-testid="flash-verdict" data-fits=v.fits.to_string() data-used=v.used_bytes.to_string()>
                                {if v.fits { "PASS" } else { "FAIL" }}
                            </div>
                            <div>
                                <div class="verdict-text">{text}</div>
                                <div class="muted">
                                    {format!(
                                        "model {} B + code {} B = {} B of {} B flash (no headroom: both sizes are exact)",
                                        grouped(v.model_bytes),
                                        grouped(v.code_bytes),
                                        grouped(v.used_bytes),
                                        grouped(v.flash_bytes),
                                    )}
                                </div>
                            </div>
                        </div>
                    }
                })
            }}
            {super::measured::measured_view(r.clone(), inputs)}
            {
                let target = target.clone();
                move || {
                    let p = find(&preset.get())?;
                    match p.target {
                        Some(t) if t != target => Some(view! {
                            <p class="note" data-testid="device-note">
                                {format!(
                                    "{} builds TFLM with {}: the {t} target models it; the figures above are for {target}. ",
                                    p.name,
                                    p.backend,
                                )}
                                {(!shared).then(|| view! {
                                    <button
                                        class="button"
                                        data-testid="device-use-target"
                                        on:click=move |_| {
                                            selected_target.set(t.to_string());
                                            replan.run(());
                                        }
                                    >
                                        {format!("Use {t}")}
                                    </button>
                                })}
                            </p>
                        }.into_any()),
                        Some(_) => None,
                        None => Some(view! {
                            <p class="note" data-testid="device-note">{p.profile().err()?}</p>
                        }.into_any()),
                    }
                }
            }
        </section>
    }
}
