//! The analysis worker and the page's handle on it. Both sides speak
//! [`microarena_view::protocol`]: every message is one frame posted as a
//! `Uint8Array`, encoded and decoded only there.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

use js_sys::Uint8Array;
use microarena_core::report::Report;
use microarena_core::report::steps::Steps;
use microarena_view::analysis::{self, analyse, extras};
use microarena_view::inputs::GraphInput;
use microarena_view::protocol::{self, Extras, Failure, Request, Response, Want};
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
    /// What to answer with.
    pub want: Want,
}

impl Job {
    fn request(&self, id: u32) -> Request<'_> {
        Request {
            id,
            name: self.name.clone(),
            target: self.target.clone(),
            planner: self.planner.clone(),
            input_shapes: self.input_shapes.clone(),
            want: self.want,
            bytes: &self.bytes,
        }
    }
}

/// Independent lines of requests: a newer job on one line supersedes only
/// that line's older jobs (re-planning drops a pending step-through; asking
/// for the other side of a comparison leaves the shown plan alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// The report on screen and its extras.
    Main = 0,
    /// The step-through.
    Steps = 1,
    /// The other side of a comparison.
    Compare = 2,
}

impl Line {
    const ALL: [Line; 3] = [Line::Main, Line::Steps, Line::Compare];

    /// The line a request id belongs to (its top two bits).
    fn of(id: u32) -> Line {
        Line::ALL
            .get((id >> 30) as usize)
            .copied()
            .unwrap_or(Line::Main)
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
    /// The step-through, or why there is none.
    Steps(Result<Arc<Steps>, String>),
    /// The other side of a comparison, or why there is none.
    Compare(Result<Arc<Report>, String>),
}

impl Reply {
    /// The reply to a response on `line`.
    fn on(line: Line, r: Result<Response, protocol::ProtocolError>) -> Reply {
        let failed = |r: Result<Response, protocol::ProtocolError>| match r {
            Ok(Response::Failed { failure, .. }) => failure.message,
            Err(e) => e.to_string(),
            Ok(_) => "the worker answered with something else".into(),
        };
        match (line, r) {
            (Line::Main, r) => r.into(),
            (Line::Steps, Ok(Response::Steps { steps, .. })) => Reply::Steps(Ok(steps)),
            (Line::Steps, r) => Reply::Steps(Err(failed(r))),
            (Line::Compare, Ok(Response::Report { report, .. })) => Reply::Compare(Ok(report)),
            (Line::Compare, r) => Reply::Compare(Err(failed(r))),
        }
    }
}

impl From<Result<Response, protocol::ProtocolError>> for Reply {
    fn from(r: Result<Response, protocol::ProtocolError>) -> Reply {
        match r {
            Ok(Response::Report { report, inputs, .. }) => Reply::Report(Ok((report, inputs))),
            Ok(Response::Failed { failure, .. }) => failure.into(),
            Ok(Response::Extras { extras, .. }) => Reply::Extras(extras),
            Ok(Response::Steps { steps, .. }) => Reply::Steps(Ok(steps)),
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

/// The one answer to a request that wants something other than a plan.
fn single_answer(req: &Request<'_>) -> Response {
    let id = req.id;
    let failed = |failure| Response::Failed { id, failure };
    match req.want {
        Want::Steps => analysis::steps(req).map_or_else(failed, |s| Response::Steps {
            id,
            steps: Arc::new(s),
        }),
        Want::Optimized => {
            analysis::optimized(req, &js_sys::Date::now).map_or_else(failed, |r| Response::Report {
                id,
                report: r,
                inputs: Vec::new(),
                timings: Vec::new(),
            })
        }
        Want::Plan | Want::Report => {
            analyse(req, &js_sys::Date::now).map_or_else(failed, |a| Response::Report {
                id,
                report: a.report,
                inputs: a.inputs,
                timings: a.timings,
            })
        }
    }
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
            if req.want != Want::Plan {
                post(&single_answer(&req));
                return;
            }
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
    /// The latest request id of each [`Line`].
    latest: Rc<[Cell<u32>; 3]>,
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
        let latest = Rc::new(Line::ALL.map(|l| Cell::new((l as u32) << 30)));
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
                    let Some(id) = protocol::frame_id(&frame) else {
                        return;
                    };
                    let line = Line::of(id);
                    if latest[line as usize].get() != id {
                        return;
                    }
                    let response = Response::decode(&frame);
                    if line == Line::Main
                        && let Ok(r) = &response
                    {
                        hooks::publish_worker_timings(r);
                    }
                    cb(Reply::on(line, response));
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

    /// Starts `job` on `line`, superseding that line's older jobs; the
    /// callback gets the replies.
    pub fn request(&self, line: Line, job: Job) {
        let slot = &self.latest[line as usize];
        let id = ((line as u32) << 30) | (slot.get().wrapping_add(1) & 0x3fff_ffff);
        slot.set(id);
        if let Some(w) = &self.worker
            && post_frame(|v| w.post_message(v), &job.request(id).encode())
        {
            return;
        }
        // No worker: yield so the "analysing" state paints, then run here.
        let cb = self.callback.clone();
        let latest = self.latest.clone();
        let current = move || latest[line as usize].get() == id;
        wasm_bindgen_futures::spawn_local(async move {
            io::sleep_ms(16).await;
            let req = job.request(id);
            if req.want != Want::Plan {
                let answer = single_answer(&req);
                if current() {
                    cb(Reply::on(line, Ok(answer)));
                }
                return;
            }
            let result = analyse(&req, &js_sys::Date::now);
            if !current() {
                return;
            }
            match result {
                Ok(a) => {
                    cb(Reply::Report(Ok((a.report.clone(), a.inputs.clone()))));
                    io::sleep_ms(0).await;
                    if current() {
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
