//! Browser APIs the views use: reading files, fetching `?model=`, the URL,
//! downloads and PNG rendering, the clipboard, event coordinates and paint
//! timing. Views call these and never use web-sys themselves; the worker
//! lives in [`crate::worker`] and the test hooks in [`crate::hooks`].

use js_sys::{Array, Uint8Array};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// Resolves after `ms` milliseconds (a timer task, so the page can paint).
pub async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        if let Some(w) = web_sys::window() {
            let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms);
        }
    });
    let _ = JsFuture::from(promise).await;
}

/// Reads a dropped or picked file.
pub async fn read_file(file: &web_sys::File) -> Result<Vec<u8>, String> {
    let buf = JsFuture::from(file.array_buffer())
        .await
        .map_err(|_| format!("{}: the file could not be read", file.name()))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// Fetches a hosted model for `?model=URL`.
pub async fn fetch_model(url: &str) -> Result<Vec<u8>, String> {
    let window = web_sys::window().ok_or("no window")?;
    let resp = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|_| format!("{url}: the model could not be fetched (network or CORS)"))?;
    let resp: web_sys::Response = resp.dyn_into().map_err(|_| "fetch returned no response")?;
    if !resp.ok() {
        return Err(format!("{url}: HTTP {}", resp.status()));
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(|_| "unreadable response")?)
        .await
        .map_err(|_| format!("{url}: the download was interrupted"))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// The `?model=` parameter, if any.
pub fn model_param() -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    let params = web_sys::UrlSearchParams::new_with_str(&search).ok()?;
    params.get("model").filter(|s| !s.is_empty())
}

/// The URL fragment without `#` (empty when there is none).
pub fn fragment() -> String {
    web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .map(|h| h.trim_start_matches('#').to_string())
        .unwrap_or_default()
}

/// The page URL without query or fragment, for share links.
pub fn base_url() -> String {
    web_sys::window()
        .and_then(|w| {
            let l = w.location();
            Some(format!("{}{}", l.origin().ok()?, l.pathname().ok()?))
        })
        .unwrap_or_default()
}

/// Milliseconds since the page started.
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Runs `f` after the next paint.
pub fn after_paint(f: impl FnOnce() + 'static) {
    let Some(w) = web_sys::window() else { return };
    let cb = Closure::once_into_js(move || {
        let inner = Closure::once_into_js(f);
        if let Some(w) = web_sys::window() {
            let _ =
                w.set_timeout_with_callback_and_timeout_and_arguments_0(inner.unchecked_ref(), 0);
        }
    });
    let _ = w.request_animation_frame(cb.unchecked_ref());
}

fn blob(content: &str, mime: &str) -> Option<web_sys::Blob> {
    let parts = Array::of1(&JsValue::from_str(content));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).ok()
}

fn download_blob(blob: &web_sys::Blob, filename: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    if let Ok(a) = doc.create_element("a")
        && let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>()
    {
        a.set_href(&url);
        a.set_download(filename);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Offers `content` as a file download.
pub fn download_text(content: &str, mime: &str, filename: &str) {
    if let Some(b) = blob(content, mime) {
        download_blob(&b, filename);
    }
}

/// Renders an SVG document to PNG (canvas `drawImage`) and offers it for download.
pub fn download_png(svg: String, width: u32, height: u32, filename: String) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(b) = blob(&svg, "image/svg+xml") else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&b) else {
        return;
    };
    let Ok(img) = web_sys::HtmlImageElement::new() else {
        return;
    };
    let img2 = img.clone();
    let url2 = url.clone();
    let onload = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url2);
        let Ok(canvas) = doc.create_element("canvas") else {
            return;
        };
        let Ok(canvas) = canvas.dyn_into::<web_sys::HtmlCanvasElement>() else {
            return;
        };
        canvas.set_width(width);
        canvas.set_height(height);
        let Ok(Some(ctx)) = canvas.get_context("2d") else {
            return;
        };
        let Ok(ctx) = ctx.dyn_into::<web_sys::CanvasRenderingContext2d>() else {
            return;
        };
        let _ = ctx.draw_image_with_html_image_element(&img2, 0.0, 0.0);
        if let Ok(data_url) = canvas.to_data_url_with_type("image/png")
            && let Ok(a) = doc.create_element("a")
            && let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>()
        {
            a.set_href(&data_url);
            a.set_download(&filename);
            a.click();
        }
    });
    img.set_onload(Some(onload.unchecked_ref()));
    img.set_src(&url);
}

/// The files of a drop event.
pub fn dropped_file(ev: &web_sys::DragEvent) -> Option<web_sys::File> {
    ev.data_transfer()?.files()?.get(0)
}

/// The file chosen in an `<input type=file>` change event.
pub fn picked_file(ev: &web_sys::Event) -> Option<web_sys::File> {
    let input: web_sys::HtmlInputElement = ev.target()?.dyn_into().ok()?;
    input.files()?.get(0)
}

/// Copies text to the clipboard (best effort).
pub fn copy_to_clipboard(text: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// The `data-*` attribute of the event target, parsed as an index.
pub fn target_index(ev: &web_sys::Event, attr: &str) -> Option<usize> {
    let el: web_sys::Element = ev.target()?.dyn_into().ok()?;
    el.get_attribute(attr)?.parse().ok()
}

/// Position of a mouse event relative to the event's current target, as a
/// fraction of its size (0..1 each).
pub fn relative_pos(ev: &web_sys::MouseEvent) -> Option<(f64, f64)> {
    let el: web_sys::Element = ev.current_target()?.dyn_into().ok()?;
    let r = el.get_bounding_client_rect();
    if r.width() <= 0.0 || r.height() <= 0.0 {
        return None;
    }
    Some((
        (f64::from(ev.client_x()) - r.left()) / r.width(),
        (f64::from(ev.client_y()) - r.top()) / r.height(),
    ))
}

/// The tag name of the event's target (`BUTTON`, `INPUT`, …).
pub fn event_target_tag(ev: &web_sys::Event) -> Option<String> {
    let el: web_sys::Element = ev.target()?.dyn_into().ok()?;
    Some(el.tag_name())
}

/// The reader asked for reduced motion (`prefers-reduced-motion: reduce`).
pub fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| {
            w.match_media("(prefers-reduced-motion: reduce)")
                .ok()
                .flatten()
        })
        .is_some_and(|m| m.matches())
}

/// `true` when the `<details>` an event came from is open.
pub fn details_open(ev: &web_sys::Event) -> bool {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|e| e.has_attribute("open"))
}

/// How far the event's current target is scrolled down (px).
pub fn scroll_top(ev: &web_sys::Event) -> f64 {
    ev.current_target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map_or(0.0, |e| f64::from(e.scroll_top()))
}

/// Scrolls the element with `data-testid` `id` to the middle of the window
/// (instantly) and returns its box in page coordinates (x, y, width, height).
pub fn scroll_to_testid(id: &str) -> Option<(f64, f64, f64, f64)> {
    let w = web_sys::window()?;
    let el = w
        .document()?
        .query_selector(&format!("[data-testid=\"{id}\"]"))
        .ok()??;
    let opts = web_sys::ScrollIntoViewOptions::new();
    opts.set_block(web_sys::ScrollLogicalPosition::Center);
    el.scroll_into_view_with_scroll_into_view_options(&opts);
    let r = el.get_bounding_client_rect();
    let (sx, sy) = (w.scroll_x().ok()?, w.scroll_y().ok()?);
    Some((r.left() + sx, r.top() + sy, r.width(), r.height()))
}

/// Moves the keyboard focus to the element with `data-testid` `id`, if any.
pub fn focus_testid(id: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector(&format!("[data-testid=\"{id}\"]"))
                .ok()
                .flatten()
        })
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = el.focus();
    }
}
