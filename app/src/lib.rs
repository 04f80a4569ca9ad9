//! # microarena-app
//!
//! The web front end: a client-side Leptos app over `microarena-core`
//! compiled to WebAssembly. The same wasm runs twice: on the page it mounts
//! [`App`]; in a dedicated Web Worker (`worker.js`) it answers analysis
//! requests with the same core calls as `microarena plan`, so large models
//! never block the page. No server is involved beyond static files, and
//! model bytes never leave the browser — share links carry only the report
//! ([`microarena_core::report::share`]).
//!
//! Module map: [`views`] holds one component per view and [`state`] the
//! signals they share; [`worker`] runs the analysis worker and the page's
//! handle on it, speaking `microarena_view::protocol`; [`io`] is the only
//! module using browser APIs for the page and [`hooks`] the only one setting
//! the test hooks. Everything pure (formatting, what-if text, SVG markup,
//! tooltip rows, the protocol, the worker's computation) lives in the
//! leptos-free `microarena-view` crate, tested natively.

mod hooks;
mod io;
mod state;
mod views;
mod worker;

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
        worker::worker_main();
    }
}
