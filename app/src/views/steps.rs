//! The step-through panel: a scrubber over core's `report::steps` (TFLM's
//! work in its order), with the step in words, its figures and the arena as
//! a bar; the arena map, lifetimes and per-op bars draw the same step.

use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_core::report::steps::{StepEvent, Steps};
use microarena_view::format::grouped;
use microarena_view::steps::{
    BAR_H, BAR_W, arena_bar, describe, key_step, phase_help, phase_spans, phase_title,
};

use super::help;
use crate::io;
use crate::state::Stepper;

/// Milliseconds between steps while playing (one step per second when the
/// reader asked for reduced motion).
const TICK_MS: u64 = 250;
const REDUCED_TICK_MS: u64 = 1000;

/// The panel: a start button until the steps arrive, then the scrubber.
pub(super) fn step_through(r: Arc<Report>, shared: bool, request: Callback<()>) -> impl IntoView {
    let Some(st) = Stepper::get() else {
        return ().into_any();
    };
    let r2 = r.clone();
    let body = move || match st.steps.get() {
        Some(s) => scrubber(r2.clone(), s, st).into_any(),
        None => {
            let loading = st.loading.get();
            view! {
                <p class="muted">
                    "Walk through what TFLM does with the arena on this model, in its order: building the interpreter (each tail allocation), each kernel's Prepare, the planner placing every buffer, then Invoke op by op. Every figure is the simulation's that gives the totals above, so the last step is the report."
                </p>
                {move || st.error.get().map(|e| view! { <p class="banner error" role="alert">{e}</p> })}
                <button
                    class="button primary"
                    data-testid="steps-start"
                    disabled=shared || loading
                    on:click=move |_| request.run(())
                >
                    {if loading { "Preparing the steps…" } else { "Step through" }}
                </button>
                {shared
                    .then(|| {
                        view! {
                            <span class="muted">
                                " A shared layout has no model to step through; open the model itself."
                            </span>
                        }
                    })}
            }
            .into_any()
        }
    };
    view! {
        <section class="panel steps" data-testid="steps-panel">
            <div class="panel-head">
                <h2>
                    "Step through TFLM "
                    {help("The step-through replays core's simulation of TFLM one step at a time. Arrow keys step, Page Up/Down jump a phase, Home/End go to the ends, Space plays or pauses. The arena map, lifetimes and per-op bars below show the same step.")}
                </h2>
            </div>
            {body}
        </section>
    }
    .into_any()
}

fn scrubber(r: Arc<Report>, s: Arc<Steps>, st: Stepper) -> impl IntoView {
    let n = s.steps.len();
    let last = n.saturating_sub(1);
    let spans = phase_spans(&s);
    let scale = s.steps.last().map_or(0, |l| l.minimum_bytes);
    let reduced = io::prefers_reduced_motion();
    let playing = RwSignal::new(false);
    let speed = RwSignal::new(1usize);
    let timer = StoredValue::new_local(None::<IntervalHandle>);
    let stop = move || {
        if let Some(h) = timer.get_value() {
            h.clear();
        }
        timer.set_value(None);
        playing.set(false);
    };
    let play = move || {
        stop();
        if st.at.get_untracked() >= last {
            st.at.set(0);
        }
        let tick = if reduced { REDUCED_TICK_MS } else { TICK_MS };
        let handle = set_interval_with_handle(
            move || {
                let next = (st.at.get_untracked() + speed.get_untracked()).min(last);
                st.at.set(next);
                if next >= last {
                    if let Some(h) = timer.get_value() {
                        h.clear();
                    }
                    timer.set_value(None);
                    playing.set(false);
                }
            },
            Duration::from_millis(tick),
        )
        .ok();
        playing.set(handle.is_some());
        timer.set_value(handle);
    };
    on_cleanup(move || {
        if let Some(h) = timer.get_value() {
            h.clear();
        }
    });
    let toggle = move || {
        if playing.get_untracked() {
            stop();
        } else {
            play();
        }
    };
    let s_keys = s.clone();
    let keydown = move |ev: web_sys::KeyboardEvent| {
        let key = ev.key();
        if key == " " {
            // A focused button already acts on Space.
            if io::event_target_tag(&ev).as_deref() == Some("BUTTON") {
                return;
            }
            ev.prevent_default();
            toggle();
            return;
        }
        if let Some(to) = key_step(&key, st.at.get_untracked(), &s_keys) {
            ev.prevent_default();
            stop();
            st.at.set(to);
        }
    };
    let phase_buttons = spans
        .iter()
        .map(|p| {
            let p = *p;
            let current = move || {
                let at = st.at.get();
                at >= p.first && at < p.first + p.count
            };
            view! {
                <button
                    class="phase"
                    class:on=current
                    aria-pressed=move || current().to_string()
                    data-testid="step-phase"
                    data-phase=p.phase.name()
                    data-first=p.first.to_string()
                    data-count=p.count.to_string()
                    title=phase_help(p.phase)
                    on:click=move |_| {
                        stop();
                        st.at.set(p.first);
                    }
                >
                    <span class="phase-name">{phase_title(p.phase)}</span>
                    <span class="phase-count">{format!("{} steps", grouped(p.count as u64))}</span>
                </button>
            }
        })
        .collect_view();
    let s_now = s.clone();
    let step = move || s_now.steps.get(st.at.get().min(last)).cloned();
    let step2 = step.clone();
    let r_text = r.clone();
    let text = move || step2().map(|x| describe(&r_text, &x)).unwrap_or_default();
    let step3 = step.clone();
    let phase_line = move || {
        step3()
            .map(|x| {
                format!(
                    "Step {} of {} · {}",
                    grouped(st.at.get().min(last) as u64 + 1),
                    grouped(n as u64),
                    phase_title(x.phase)
                )
            })
            .unwrap_or_default()
    };
    let step4 = step.clone();
    let figure = move |id: &'static str,
                       label: &'static str,
                       tip: &'static str,
                       f: fn(&microarena_core::report::steps::Step) -> u64| {
        let step = step4.clone();
        let bytes = move || step().map_or(0, |x| f(&x));
        let bytes2 = bytes.clone();
        view! {
            <tr>
                <th title=tip>{label}</th>
                <td class="num" data-testid=id data-bytes=move || bytes().to_string()>
                    {move || format!("{} B", grouped(bytes2()))}
                </td>
            </tr>
        }
    };
    let figures = view! {
        <table class="compact step-figures">
            <tbody>
                {figure("step-head", "head", "Head bytes placed so far (while planning: the highest end so far).", |x| x.head_bytes)}
                {figure("step-tail", "tail", "Tail bytes allocated so far.", |x| x.tail_bytes)}
                {figure("step-temp", "temp", "Non-persistent bytes held besides the head: Prepare's scratch-request area and temp tensors, the planner's working memory.", |x| x.temp_bytes)}
                {figure("step-arena", "this step needs", "The arena bytes this step needs.", |x| x.arena_bytes)}
                {figure("step-high", "high water", "The largest need so far.", |x| x.high_water_bytes)}
                {figure("step-minimum", "minimum so far", "The smallest arena that gets this far: the high water rounded up to 16.", |x| x.minimum_bytes)}
            </tbody>
        </table>
    };
    let step5 = step.clone();
    let bar = move || step5().map(|x| arena_bar(&x, scale)).unwrap_or_default();
    let step6 = step.clone();
    let detail = move || {
        let x = step6()?;
        match x.event {
            StepEvent::Prepare {
                allocations,
                scratch,
                ..
            } if !allocations.is_empty() || !scratch.is_empty() => {
                let rows = allocations
                    .into_iter()
                    .map(|a| {
                        view! {
                            <tr>
                                <td>"tail"</td>
                                <td>{a.purpose}</td>
                                <td class="num">{format!("{} B", grouped(a.bytes))}</td>
                            </tr>
                        }
                        .into_any()
                    })
                    .chain(scratch.into_iter().map(|sc| {
                        view! {
                            <tr>
                                <td>"scratch"</td>
                                <td>{sc.purpose}</td>
                                <td class="num">{format!("{} B", grouped(sc.bytes))}</td>
                            </tr>
                        }
                        .into_any()
                    }))
                    .collect_view();
                Some(view! {
                    <table class="compact step-detail" data-testid="step-detail">
                        <tbody>{rows}</tbody>
                    </table>
                })
            }
            _ => None,
        }
    };
    let aria_live = move || if playing.get() { "off" } else { "polite" };
    let valuetext = {
        let step = step.clone();
        move || {
            step()
                .map(|x| {
                    format!(
                        "step {} of {n}, {}",
                        st.at.get().min(last) + 1,
                        phase_title(x.phase)
                    )
                })
                .unwrap_or_default()
        }
    };
    view! {
        <div
            class="scrubber"
            tabindex="0"
            role="group"
            aria-label="Step-through controls"
            data-testid="steps"
            data-steps=n.to_string()
            data-at=move || st.at.get().to_string()
            data-playing=move || playing.get().to_string()
            data-reduced-motion=reduced.to_string()
            on:keydown=keydown
        >
            <div class="phases">{phase_buttons}</div>
            <div class="step-controls">
                <button class="button" aria-label="First step" on:click=move |_| { stop(); st.at.set(0); }>"|◀"</button>
                <button
                    class="button"
                    aria-label="Previous step"
                    data-testid="step-prev"
                    on:click=move |_| { stop(); st.at.update(|a| *a = a.saturating_sub(1)); }
                >
                    "◀"
                </button>
                <button
                    class="button primary"
                    data-testid="step-play"
                    aria-label=move || if playing.get() { "Pause" } else { "Play" }
                    on:click=move |_| toggle()
                >
                    {move || if playing.get() { "❚❚ Pause" } else { "▶ Play" }}
                </button>
                <button
                    class="button"
                    aria-label="Next step"
                    data-testid="step-next"
                    on:click=move |_| { stop(); st.at.update(|a| *a = (*a + 1).min(last)); }
                >
                    "▶"
                </button>
                <button class="button" aria-label="Last step" data-testid="step-last" on:click=move |_| { stop(); st.at.set(last); }>"▶|"</button>
                <label class="speed">
                    "speed "
                    <select
                        aria-label="Steps per tick"
                        on:change=move |ev| speed.set(event_target_value(&ev).parse().unwrap_or(1))
                    >
                        <option value="1">"1 step"</option>
                        <option value="10">"10 steps"</option>
                        <option value="100">"100 steps"</option>
                    </select>
                    {if reduced { " per second (reduced motion)" } else { " per tick" }}
                </label>
                <button class="button" on:click=move |_| { stop(); st.reset(); }>"Close"</button>
            </div>
            <input
                type="range"
                class="step-range"
                data-testid="step-range"
                aria-label="Step"
                min="0"
                max=last.to_string()
                prop:value=move || st.at.get().to_string()
                aria-valuetext=valuetext
                on:input=move |ev| {
                    stop();
                    st.at.set(event_target_value(&ev).parse::<usize>().unwrap_or(0).min(last));
                }
            />
            <div class="step-line">{phase_line}</div>
            <p class="step-text" data-testid="step-text" aria-live=aria_live>{text}</p>
            <div class="step-body">
                {figures}
                <div class="step-bar">
                    <svg
                        class="arena-bar"
                        data-testid="step-bar"
                        viewBox=format!("0 0 {BAR_W} {BAR_H}")
                        preserveAspectRatio="none"
                        role="img"
                        aria-label="The arena at this step: what grows from its start on the left, the tail from its end on the right"
                        inner_html=bar
                    ></svg>
                    <div class="caption">
                        <span class="legend">
                            <i style="background:#cbd5e1"></i>"requests / planner"
                            <i style="background:#f08c2e"></i>"temps"
                            <i style="background:#4f7cff"></i>"head"
                            <i style="background:#94a3b8"></i>"tail"
                        </span>
                        {format!(
                            " · An arena of {} B (the minimum): what grows from its start on the left, the tail from its end on the right; the black line is where this step's need ends.",
                            grouped(scale),
                        )}
                    </div>
                    {detail}
                </div>
            </div>
        </div>
    }
}
