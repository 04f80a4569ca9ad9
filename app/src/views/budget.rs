//! The budget panel: does the model fit a device's RAM after its other
//! reserves, with `Budget::check` (the CLI's `check`) giving the verdict, and
//! does its file fit the flash beside the firmware's code (`FlashBudget`,
//! the CLI's `check --flash --code`).

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_core::report::budget::{Budget, DEFAULT_HEADROOM_BP, MCU_PRESETS, Reserve};
use microarena_core::report::flash::FlashBudget;
use microarena_view::format::{grouped, grouped_i};

use super::help;

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

/// The budget panel.
pub(super) fn budget_view(r: Arc<Report>) -> impl IntoView {
    let preset = RwSignal::new(MCU_PRESETS[0].name.to_string());
    let custom_kib = RwSignal::new(256u64);
    let stack = RwSignal::new(8u64);
    let rtos = RwSignal::new(16u64);
    let isr = RwSignal::new(2u64);
    let dma = RwSignal::new(4u64);
    let log = RwSignal::new(1u64);
    let headroom = RwSignal::new(u64::from(DEFAULT_HEADROOM_BP / 100));
    let custom_flash_kib = RwSignal::new(2048u64);
    let code_kib = RwSignal::new(128u64);
    let model_bytes = r.flash.file_bytes;
    let minimum = r.arena.minimum_bytes;
    let target = r.target.clone();
    let budget = move || Budget {
        ram_bytes: MCU_PRESETS
            .iter()
            .find(|p| p.name == preset.get())
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
    let preset_target = move || {
        MCU_PRESETS
            .iter()
            .find(|p| p.name == preset.get())
            .map(|p| p.target)
    };
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
                        on:change=move |ev| preset.set(event_target_value(&ev))
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
                let v = verdict();
                let text = if v.fits {
                    format!("Fits — {} B to spare", grouped_i(v.margin_bytes))
                } else {
                    format!("Does not fit — {} B short", grouped(v.margin_bytes.unsigned_abs()))
                };
                view! {
                    <div class=if v.fits { "verdict pass" } else { "verdict fail" }>
                        <div class="verdict-main" data-testid="budget-verdict" data-fits=v.fits.to_string()>
                            {if v.fits { "PASS" } else { "FAIL" }}
                        </div>
                        <div>
                            <div class="verdict-text">{text}</div>
                            <div class="muted">
                                {format!(
                                    "available {} B = RAM − reserves; needed {} B = minimum {} B + headroom, rounded to 16",
                                    grouped_i(v.available_bytes),
                                    grouped(v.arena_bytes),
                                    grouped(v.minimum_bytes),
                                )}
                            </div>
                        </div>
                    </div>
                    <pre class="snippet" data-testid="firmware-arena" data-bytes=v.arena_bytes.to_string()>
                        {format!(
                            "constexpr size_t kTensorArenaSize = {};  // {} + {} % headroom",
                            v.arena_bytes,
                            v.minimum_bytes,
                            headroom.get_untracked(),
                        )}
                    </pre>
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
            {
                let target = target.clone();
                move || {
                    preset_target()
                        .filter(|t| *t != target)
                        .map(|t| {
                            view! {
                                <p class="note">
                                    {format!(
                                        "This device is modelled by the {t} target; the figures above are for {}. Switch the target in the summary for exact numbers.",
                                        target,
                                    )}
                                </p>
                            }
                        })
                }
            }
        </section>
    }
}
