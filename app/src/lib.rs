//! # microarena-app
//!
//! The web front end: a client-side Leptos app over `microarena-core`
//! compiled to WebAssembly. The same wasm runs twice: on the page it mounts
//! [`App`]; in a dedicated Web Worker (`worker.js`) it answers analysis
//! requests with `analyze` + `Report::new`, so large models never block the
//! page. No server is involved beyond static files, and model bytes never
//! leave the browser — share links carry only the report ([`microarena_core::report::share`]).
//!
//! Module map: [`io`] is the only module using browser APIs; [`svg`] builds
//! chart markup as strings; [`views`] arranges and formats; [`format`] holds
//! number formatting. Every figure comes from core.

pub mod format;
pub mod io;
pub mod svg;
pub mod views;

use wasm_bindgen::prelude::*;

pub use views::App;

/// Entry point for both contexts: mounts the app on a page, or serves
/// analysis requests inside the worker.
#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
    if web_sys::window().is_some() {
        leptos::mount::mount_to_body(App);
    } else {
        io::worker_main();
    }
}
