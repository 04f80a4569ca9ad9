//! The tooltip that follows the pointer over the charts, and the hover
//! tracking the charts share (event delegation on `data-i` / `data-v`).

use std::sync::Arc;

use leptos::prelude::*;
use microarena_core::report::Report;
use microarena_view::tooltip::{buffer_tip, op_tip, variable_tip};

use crate::io;
use crate::state::{Hover, Pointer};

/// The tooltip for whatever [`Pointer::hover`] holds.
pub(super) fn tooltip(r: Arc<Report>) -> impl IntoView {
    let ctx = Pointer::get();
    move || {
        let (lines, x, y) = match ctx.hover.get()? {
            Hover::Buffer(i, x, y) => (buffer_tip(&r, i), x, y),
            Hover::Variable(k, x, y) => (variable_tip(&r, k), x, y),
            Hover::Op(i, x, y) => (op_tip(&r, i), x, y),
        };
        Some(view! {
            <div class="tooltip" style=format!("left:{}px;top:{}px", x + 14.0, y + 14.0)>
                {lines
                    .into_iter()
                    .map(|(k, v)| view! { <div><span class="k">{k}</span><span class="v">{v}</span></div> })
                    .collect_view()}
            </div>
        })
    }
}

/// Sets the hover from a mouse event over buffer (`data-i`) or variable
/// (`data-v`) markup.
pub(super) fn buffer_hover(ev: &web_sys::MouseEvent, ctx: Pointer) {
    let (x, y) = (f64::from(ev.client_x()), f64::from(ev.client_y()));
    match (
        io::target_index(ev, "data-i"),
        io::target_index(ev, "data-v"),
    ) {
        (Some(i), _) => ctx.hover.set(Some(Hover::Buffer(i, x, y))),
        (None, Some(k)) => ctx.hover.set(Some(Hover::Variable(k, x, y))),
        (None, None) => ctx.hover.set(None),
    }
}
