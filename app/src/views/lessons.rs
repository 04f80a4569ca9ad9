//! The guided tour: five short lessons on the model on screen, each
//! scrolling to the live figure it is about and ringing it. The words and
//! figures are `microarena_view::lessons`' (the report's own numbers).

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::format::grouped;
use microarena_view::lessons::lessons;

use crate::io;
use crate::state::{BudgetInputs, Tour};

/// The lesson card and the ring around the figure it points at (nothing
/// while the tour is closed).
pub(super) fn tour(r: Arc<Report>, inputs: BudgetInputs) -> impl IntoView {
    let t = Tour::get();
    let all = Memo::new(move |_| {
        let bp = u32::try_from(inputs.headroom.get().saturating_mul(100)).unwrap_or(u32::MAX);
        lessons(&r, bp)
    });
    let ring = RwSignal::new(None::<(f64, f64, f64, f64)>);
    // Escape closes the tour wherever the focus is.
    let esc = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.key() == "Escape" && t.0.get_untracked().is_some() {
            t.0.set(None);
        }
    });
    on_cleanup(move || esc.remove());
    // Point at the lesson's figure once it is shown.
    Effect::new(move |_| {
        let target =
            t.0.get()
                .and_then(|k| all.with(|l| l.get(k).map(|x| x.target)));
        ring.set(target.and_then(io::scroll_to_testid));
        // Keyboard users land on the card's main button.
        if target.is_some() {
            io::focus_testid("lesson-next");
        }
    });
    move || {
        let k = t.0.get()?;
        let l = all.with(|l| l.get(k).cloned())?;
        let n = all.with(Vec::len);
        let ring_view = ring.get().map(|(x, y, w, h)| {
            view! {
                <div
                    class="tour-ring"
                    aria-hidden="true"
                    style=format!("left:{}px;top:{}px;width:{}px;height:{}px", x - 6.0, y - 6.0, w + 12.0, h + 12.0)
                ></div>
            }
        });
        let keydown = move |ev: web_sys::KeyboardEvent| match ev.key().as_str() {
            "ArrowRight" => t.0.set(Some((k + 1).min(n - 1))),
            "ArrowLeft" => t.0.set(Some(k.saturating_sub(1))),
            _ => {}
        };
        Some(view! {
            {ring_view}
            <div
                class="tour-card"
                role="dialog"
                aria-modal="false"
                aria-labelledby="tour-title"
                data-testid="lesson"
                data-index=k.to_string()
                data-target=l.target
                data-attr=l.attr
                data-bytes=l.bytes.to_string()
                on:keydown=keydown
            >
                <div class="tour-step">{format!("Lesson {} of {n}", k + 1)}</div>
                <h3 id="tour-title">{l.title}</h3>
                <p data-testid="lesson-text">{l.text.clone()}</p>
                <p class="muted">{format!("The ringed figure: {} B.", grouped(l.bytes))}</p>
                <div class="controls">
                    <button class="button" disabled=k == 0 on:click=move |_| t.0.set(Some(k.saturating_sub(1)))>"Back"</button>
                    {if k + 1 < n {
                        view! {
                            <button class="button primary" data-testid="lesson-next" on:click=move |_| t.0.set(Some(k + 1))>
                                "Next"
                            </button>
                        }
                        .into_any()
                    } else {
                        view! {
                            <button class="button primary" data-testid="lesson-next" on:click=move |_| t.0.set(None)>
                                "Done"
                            </button>
                        }
                        .into_any()
                    }}
                    <button class="button" data-testid="lesson-close" on:click=move |_| t.0.set(None)>"Close"</button>
                </div>
            </div>
        })
    }
}
