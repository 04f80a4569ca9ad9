//! The what-if panel: one field per graph input, Apply and Reset, and the
//! delta against the model as converted.

use leptos::prelude::*;
use microarena_view::format::shape;
use microarena_view::inputs::GraphInput;
use microarena_view::whatif::{
    self, applied, bytes_or_dash, delta_rows, field_text, normalize_dims,
};

use super::help;
use crate::state::Shown;

const TIP_WHATIF: &str = "What-if: give an input another shape (a shorter or longer sequence, another resolution or batch). Every shape in the graph is re-derived by the same core function as `microarena plan --input-shape NAME=DIMS`, the arena is re-planned, and the change against the model as converted is shown. Shapes that cannot propagate name the op and tensor.";

/// The what-if control (one field per graph input, Apply, Reset) and the
/// delta against the model as converted.
pub(super) fn what_if_panel(
    s: &Shown,
    apply: Callback<Vec<String>>,
    err: RwSignal<Option<String>>,
) -> impl IntoView + use<> {
    let r = &s.report;
    let applied = applied(r);
    let fields: Vec<(GraphInput, RwSignal<String>)> = s
        .inputs
        .iter()
        .map(|g| (g.clone(), RwSignal::new(field_text(g, &applied))))
        .collect();
    let store = StoredValue::new(fields.clone());
    let active = r.what_if.is_some();
    let submit = move || {
        let fields = store.get_value();
        let asked = whatif::overrides(fields.iter().map(|(g, text)| (g, text.get_untracked())));
        match asked {
            Err(e) => err.set(Some(e)),
            Ok(out) if out.is_empty() && !active => err.set(None),
            Ok(out) => apply.run(out),
        }
    };
    let reset = move || {
        for (g, text) in store.get_value() {
            text.set(whatif::dims_text(&g.shape));
        }
        err.set(None);
        if active {
            apply.run(Vec::new());
        }
    };
    let form = if s.shared {
        view! {
            <p class="muted">
                {match &r.what_if {
                    Some(w) => format!(
                        "Opened from a share link with what-if shapes {}. The model was not shared; open it to try other shapes.",
                        w.input_shapes.join(" "),
                    ),
                    None => "Opened from a share link: the model was not shared, so input shapes cannot be changed here.".into(),
                }}
            </p>
        }
        .into_any()
    } else if fields.is_empty() {
        view! { <p class="muted">"This model has no graph inputs to reshape."</p> }.into_any()
    } else {
        view! {
            <div class="wi-fields">
                {fields
                    .into_iter()
                    .map(|(g, text)| {
                        let label = if g.name.is_empty() {
                            format!("{} (tensor {})", g.key, g.tensor)
                        } else {
                            g.name.clone()
                        };
                        let original = whatif::dims_text(&g.shape);
                        let changed = move || normalize_dims(&text.get()) != original;
                        view! {
                            <label class="wi-field">
                                <span class="wi-name mono" title=label.clone()>{label.clone()}</span>
                                <input
                                    type="text"
                                    class="mono"
                                    class:changed=changed
                                    spellcheck="false"
                                    autocomplete="off"
                                    data-testid=format!("whatif-input-{}", g.key)
                                    data-key=g.key.clone()
                                    aria-label=format!("dims of input {label}")
                                    prop:value=move || text.get()
                                    on:input=move |ev| text.set(event_target_value(&ev))
                                    on:keydown=move |ev: web_sys::KeyboardEvent| {
                                        if ev.key() == "Enter" {
                                            submit();
                                        }
                                    }
                                />
                                <span class="muted wi-orig">
                                    {format!("as converted {} · {}", shape(&g.shape), g.dtype)}
                                </span>
                            </label>
                        }
                    })
                    .collect_view()}
                <div class="wi-buttons">
                    <button class="button primary" data-testid="whatif-apply" on:click=move |_| submit()>
                        "Apply"
                    </button>
                    <button class="button" data-testid="whatif-reset" on:click=move |_| reset()>
                        "Reset"
                    </button>
                </div>
            </div>
        }
        .into_any()
    };
    let delta = r.what_if.as_ref().zip(delta_rows(r)).map(|(w, rows)| {
        view! {
            <div>
                <div class="wi-applied">
                    "Applied: "
                    <span class="mono">{w.input_shapes.join(" ")}</span>
                </div>
                <table class="compact delta" data-testid="whatif-delta">
                    <thead>
                        <tr>
                            <th></th>
                            <th class="r">"as converted"</th>
                            <th class="r">"what-if"</th>
                            <th class="r">"change"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {rows
                            .into_iter()
                            .map(|row| {
                                let d = row.delta();
                                view! {
                                    <tr
                                        data-testid=format!("whatif-delta-{}", row.id)
                                        data-original=row.original.map(|v| v.to_string()).unwrap_or_default()
                                        data-whatif=row.what_if.map(|v| v.to_string()).unwrap_or_default()
                                        data-delta=d.map(|v| v.to_string()).unwrap_or_default()
                                    >
                                        <td>{row.label}</td>
                                        <td class="r mono">{bytes_or_dash(row.original)}</td>
                                        <td class="r mono">{bytes_or_dash(row.what_if)}</td>
                                        <td class=row.class()>{row.change()}</td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        }
    });
    view! {
        <section class="panel whatif" data-testid="whatif" class:active=active>
            <div class="panel-head">
                <h2>"What-if input shapes " {help(TIP_WHATIF)}</h2>
                <span class="muted">
                    {if active {
                        "showing the what-if plan; every view below is for these shapes"
                    } else {
                        "showing the model as converted"
                    }}
                </span>
            </div>
            <div class="wi-grid">
                <div>
                    {form}
                    {move || {
                        err.get()
                            .map(|e| {
                                view! {
                                    <div class="wi-error" role="alert" data-testid="whatif-error">
                                        <strong>"Cannot apply these shapes: "</strong>
                                        {e}
                                        <div class="muted">"The plan shown is unchanged."</div>
                                    </div>
                                }
                            })
                    }}
                </div>
                {match delta {
                    Some(d) => d.into_any(),
                    None => view! {
                        <p class="muted wi-hint">
                            "Change a dimension — a shorter sequence, another resolution or batch — and apply: every shape in the graph is re-derived and the arena re-planned, with the change against the model as converted."
                        </p>
                    }
                    .into_any(),
                }}
            </div>
        </section>
    }
}
