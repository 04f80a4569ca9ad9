//! The analysis worker and the page's handle on it. Both sides speak
//! [`microarena_view::protocol`]: every message is one frame posted as a
//! `Uint8Array`, encoded and decoded only there.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::Uint8Array;
use microarena_core::report::Report;
use microarena_view::analysis::{analyse, extras};
use microarena_view::inputs::GraphInput;
use microarena_view::protocol::{self, Extras, Failure, Request, Response};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::{hooks, io};

/// What the page asks for; the analyzer numbers it.
#[derive(Debug, Clone)]
pub struct Job {
    /// Model bytes, kept by the page for re-planning.
    pub bytes: Rc<Vec<u8>>,
    /// File name shown in the report.
    pub name: String,
    /// Target profile name.
    pub target: String,
    /// Planner name.
    pub planner: String,
    /// What-if input shapes (`NAME=DIMS`); empty for the model as converted.
    pub input_shapes: Vec<String>,
}

impl Job {
    fn request(&self, id: u32) -> Request<'_> {
        Request {
            id,
            name: self.name.clone(),
            target: self.target.clone(),
            planner: self.planner.clone(),
            input_shapes: self.input_shapes.clone(),
            bytes: &self.bytes,
        }
    }
}

/// What the page receives for the latest job, in this order.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The report and the model's inputs, or why there is none.
    Report(Result<(Arc<Report>, Vec<GraphInput>), String>),
    /// The what-if shapes could not be applied; the shown report stays.
    WhatIfError(String),
    /// Planner comparison, share code and advice for the report just delivered.
    Extras(Extras),
}

impl From<Result<Response, protocol::ProtocolError>> for Reply {
    fn from(r: Result<Response, protocol::ProtocolError>) -> Reply {
        match r {
            Ok(Response::Report { report, inputs, .. }) => Reply::Report(Ok((report, inputs))),
            Ok(Response::Failed { failure, .. }) => failure.into(),
            Ok(Response::Extras { extras, .. }) => Reply::Extras(extras),
            Err(e) => Reply::Report(Err(e.to_string())),
        }
    }
}

impl From<Failure> for Reply {
    fn from(f: Failure) -> Reply {
        if f.what_if {
            Reply::WhatIfError(f.message)
        } else {
            Reply::Report(Err(f.message))
        }
    }
}

fn post_frame(post: impl FnOnce(&JsValue) -> Result<(), JsValue>, frame: &[u8]) -> bool {
    post(&Uint8Array::from(frame)).is_ok()
}

/// Worker side: answers each request with two messages, the report first
/// (so the map is drawn at once) and then the extras.
pub fn worker_main() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_scope = scope.clone();
    let post = move |r: &Response| post_frame(|v| reply_scope.post_message(v), &r.encode());
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let frame = ev
                .data()
                .dyn_into::<Uint8Array>()
                .map(|a| a.to_vec())
                .unwrap_or_default();
            let req = match Request::decode(&frame) {
                Ok(req) => req,
                Err(e) => {
                    post(&Response::Failed {
                        id: protocol::frame_id(&frame).unwrap_or(0),
                        failure: Failure {
                            message: e.to_string(),
                            what_if: false,
                        },
                    });
                    return;
                }
            };
            let a = match analyse(&req, &js_sys::Date::now) {
                Ok(a) => a,
                Err(failure) => {
                    post(&Response::Failed {
                        id: req.id,
                        failure,
                    });
                    return;
                }
            };
            post(&Response::Report {
                id: req.id,
                report: a.report.clone(),
                inputs: a.inputs.clone(),
                timings: a.timings.clone(),
            });
            let (extras, timings) = extras(&a, &js_sys::Date::now);
            post(&Response::Extras {
                id: req.id,
                extras,
                timings,
            });
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
}

type Callback = Rc<dyn Fn(Reply)>;

/// Page side: sends jobs to the worker (or, when workers are unavailable,
/// runs them on the page after yielding a frame) and delivers only the
/// answers to the latest job.
pub struct Analyzer {
    worker: Option<web_sys::Worker>,
    latest: Rc<Cell<u32>>,
    callback: Callback,
    _on_message: Option<Closure<dyn FnMut(web_sys::MessageEvent)>>,
}

impl std::fmt::Debug for Analyzer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Analyzer")
            .field("worker", &self.worker.is_some())
            .finish()
    }
}

impl Analyzer {
    /// Starts the worker (`worker.js` beside the page).
    pub fn new(callback: impl Fn(Reply) + 'static) -> Analyzer {
        let callback: Callback = Rc::new(callback);
        let latest = Rc::new(Cell::new(0u32));
        let opts = web_sys::WorkerOptions::new();
        opts.set_type(web_sys::WorkerType::Module);
        let worker = web_sys::Worker::new_with_options("./worker.js", &opts).ok();
        let on_message = worker.as_ref().map(|w| {
            let cb = callback.clone();
            let latest = latest.clone();
            let c = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(
                move |ev: web_sys::MessageEvent| {
                    let Ok(frame) = ev.data().dyn_into::<Uint8Array>() else {
                        return;
                    };
                    let frame = frame.to_vec();
                    // Answers to a superseded job are dropped undecoded.
                    if protocol::frame_id(&frame) != Some(latest.get()) {
                        return;
                    }
                    let response = Response::decode(&frame);
                    if let Ok(r) = &response {
                        hooks::publish_worker_timings(r);
                    }
                    cb(response.into());
                },
            );
            w.set_onmessage(Some(c.as_ref().unchecked_ref()));
            c
        });
        Analyzer {
            worker,
            latest,
            callback,
            _on_message: on_message,
        }
    }

    /// `true` when analysis runs in a Web Worker.
    pub fn has_worker(&self) -> bool {
        self.worker.is_some()
    }

    /// Starts analysing `job`; the callback gets the replies.
    pub fn request(&self, job: Job) {
        let id = self.latest.get().wrapping_add(1);
        self.latest.set(id);
        if let Some(w) = &self.worker
            && post_frame(|v| w.post_message(v), &job.request(id).encode())
        {
            return;
        }
        // No worker: yield so the "analysing" state paints, then run here.
        let cb = self.callback.clone();
        let latest = self.latest.clone();
        wasm_bindgen_futures::spawn_local(async move {
            io::sleep_ms(16).await;
            let req = job.request(id);
            let result = analyse(&req, &js_sys::Date::now);
            if latest.get() != id {
                return;
            }
            match result {
                Ok(a) => {
                    cb(Reply::Report(Ok((a.report.clone(), a.inputs.clone()))));
                    io::sleep_ms(0).await;
                    if latest.get() == id {
                        cb(Reply::Extras(extras(&a, &js_sys::Date::now).0));
                    }
                }
                Err(failure) => cb(failure.into()),
            }
        });
    }

    /// The footer's note on where analysis runs.
    pub fn label(&self) -> &'static str {
        if self.has_worker() {
            "analysed in a Web Worker"
        } else {
            "analysed on the page (no worker)"
        }
    }
}
