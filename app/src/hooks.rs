//! The test hooks the browser tests read: `window.__microarena` (page
//! timings and a render counter) and `window.__microarenaWorker` (the
//! worker's phase timings). The only place that sets JS properties by name.

use js_sys::{Object, Reflect};
use microarena_view::protocol::Response;
use wasm_bindgen::prelude::*;

/// `window[name]`, created as an empty object when missing or `fresh`.
fn hook_object(name: &str, fresh: bool) -> Option<JsValue> {
    let w = web_sys::window()?;
    let key = JsValue::from_str(name);
    let obj = Reflect::get(&w, &key).unwrap_or(JsValue::UNDEFINED);
    if obj.is_object() && !fresh {
        return Some(obj);
    }
    let obj: JsValue = Object::new().into();
    let _ = Reflect::set(&w, &key, &obj);
    Some(obj)
}

fn set_number(obj: &JsValue, key: &str, v: f64) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), &JsValue::from_f64(v));
}

/// Publishes a page timing (`window.__microarena[key]`, milliseconds).
pub fn publish_timing(key: &str, ms: f64) {
    if let Some(obj) = hook_object("__microarena", false) {
        set_number(&obj, key, ms);
    }
}

/// Counts completed renders (`window.__microarena.seq`), so tests can wait for the next one.
pub fn bump_seq() {
    let Some(obj) = hook_object("__microarena", false) else {
        return;
    };
    let seq = Reflect::get(&obj, &JsValue::from_str("seq"))
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    set_number(&obj, "seq", seq + 1.0);
}

/// Publishes the worker's phase timings (`window.__microarenaWorker`): a
/// request's first answer starts a fresh object, its extras add to it.
pub fn publish_worker_timings(response: &Response) {
    let (fresh, timings) = match response {
        Response::Report { timings, .. } => (true, timings.as_slice()),
        Response::Failed { .. } | Response::Steps { .. } => (true, &[][..]),
        Response::Extras { timings, .. } => (false, timings.as_slice()),
    };
    if let Some(obj) = hook_object("__microarenaWorker", fresh) {
        for (k, v) in timings {
            set_number(&obj, k, *v);
        }
    }
}
