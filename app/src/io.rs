//! Everything that touches browser APIs: the analysis worker, reading files,
//! fetching `?model=`, the URL, downloads and PNG rendering. Views call these
//! and never use web-sys themselves.

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Array, Object, Reflect, Uint8Array};
use microarena_core::plan::{PlanBuffer, PlannerKind};
use microarena_core::report::advice::{self, Advice};
use microarena_core::report::{Report, WhatIfInfo};
use microarena_core::tflm::profile;
use microarena_core::{Config, Model, analyze, report::share, whatif};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

/// One analysis request: model bytes plus the choices that shape the plan.
#[derive(Debug, Clone)]
pub struct Request {
    /// Model bytes.
    pub bytes: Rc<Vec<u8>>,
    /// File name shown in the report.
    pub name: String,
    /// Target profile name.
    pub target: String,
    /// Planner name.
    pub planner: String,
    /// What-if input shapes, `NAME=D0,D1,…` as `microarena plan --input-shape`
    /// takes them; empty for the model as converted.
    pub input_shapes: Vec<String>,
}

/// One input of the main subgraph, as converted (what the what-if control edits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphInput {
    /// How an override names it: the tensor name, or `#k` (the k-th graph
    /// input) when the name is empty, repeated or could be read as an index.
    pub key: String,
    /// Tensor name (may be empty).
    pub name: String,
    /// Tensor index.
    pub tensor: usize,
    /// Shape in the model as converted.
    pub shape: Vec<i32>,
    /// Element type.
    pub dtype: String,
}

/// The main subgraph's inputs of `model`.
pub fn graph_inputs(model: &Model<'_>) -> Vec<GraphInput> {
    let sg = model.main();
    let tensors: Vec<(usize, usize)> = sg
        .inputs
        .iter()
        .enumerate()
        .filter_map(|(k, &t)| Some((k, usize::try_from(t).ok()?)))
        .collect();
    let name_of = |t: usize| sg.tensors.get(t).map_or("", |x| x.name);
    tensors
        .iter()
        .filter_map(|&(k, t)| {
            let x = sg.tensors.get(t)?;
            let name = x.name;
            let unique = tensors.iter().filter(|&&(_, u)| name_of(u) == name).count() == 1;
            let plain = !name.is_empty()
                && unique
                && !name.starts_with('#')
                && name.parse::<usize>().is_err();
            Some(GraphInput {
                key: if plain {
                    name.to_string()
                } else {
                    format!("#{k}")
                },
                name: name.to_string(),
                tensor: t,
                shape: x.shape.clone(),
                dtype: x.dtype.name().to_string(),
            })
        })
        .collect()
}

/// Why a request gave no report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The message.
    pub message: String,
    /// The what-if shapes could not be applied (the model as converted is fine).
    pub what_if: bool,
}

impl Failure {
    fn model(message: String) -> Failure {
        Failure {
            message,
            what_if: false,
        }
    }

    fn what_if(message: String) -> Failure {
        Failure {
            message,
            what_if: true,
        }
    }
}

/// Head size each planner achieves on the same buffers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannerHead {
    /// Planner name.
    pub planner: String,
    /// Head bytes, or why the planner refused.
    pub head: Result<u64, String>,
}

/// The first answer: the report, exactly as `microarena plan --json` builds it,
/// plus what the second answer needs.
#[derive(Debug, Clone)]
pub struct Analysed {
    /// The report.
    pub report: Report,
    /// The model's inputs as converted.
    pub inputs: Vec<GraphInput>,
    plan_input: Vec<PlanBuffer>,
    planner: PlannerKind,
    profile: &'static profile::TargetProfile,
    timings: Vec<(String, f64)>,
}

/// The second answer, computed after the report is on its way to the page:
/// the planner comparison and the share code.
#[derive(Debug, Clone, PartialEq)]
pub struct Extras {
    /// Every planner's head on the same buffers.
    pub planners: Vec<PlannerHead>,
    /// The share code of the report.
    pub share_code: String,
    /// Measured ways to need fewer bytes (`core::advice`, as `microarena plan`
    /// prints them); empty for a shared layout, which has no model.
    pub advice: Vec<Advice>,
}

/// What the page receives, in this order for each request.
#[derive(Debug, Clone)]
// One reply per analysed model: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Reply {
    /// The report and the model's inputs, or why there is none.
    Report(Result<(Report, Vec<GraphInput>), String>),
    /// The what-if shapes could not be applied; the shown report stays.
    WhatIfError(String),
    /// Planner comparison and share code for the report just delivered.
    Extras(Extras),
}

/// Runs the pipeline: the same `analyze` + `Report::new` the CLI calls, and
/// for what-if shapes the same `whatif::with_input_shapes` as
/// `microarena plan --input-shape`, with the original figures for the delta.
pub fn analyse(
    bytes: &[u8],
    name: &str,
    target: &str,
    planner: &str,
    input_shapes: &[String],
) -> Result<Analysed, Failure> {
    let profile = profile::by_name(target)
        .ok_or_else(|| Failure::model(format!("unknown target {target}")))?;
    let planner = PlannerKind::by_name(planner)
        .ok_or_else(|| Failure::model(format!("unknown planner {planner}")))?;
    if !microarena_core::is_tflite(bytes) {
        return Err(Failure::model(format!(
            "{name}: not a TensorFlow Lite model (no TFL3 identifier; {} bytes)",
            bytes.len()
        )));
    }
    let t = js_sys::Date::now;
    let t0 = t();
    let model = Model::parse(bytes).map_err(|e| Failure::model(format!("{name}: {e}")))?;
    let config = Config { profile, planner };
    let inputs = graph_inputs(&model);
    let (report, plan_input) = if input_shapes.is_empty() {
        let analysis =
            analyze(&model, &config).map_err(|e| Failure::model(format!("{name}: {e}")))?;
        (Report::new(&model, &analysis, name), analysis.plan_input)
    } else {
        let what_if = |e: &dyn std::fmt::Display| Failure::what_if(format!("what-if: {e}"));
        let overrides = input_shapes
            .iter()
            .map(|s| whatif::parse_override(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| what_if(&e))?;
        let reshaped = whatif::with_input_shapes(&model, &overrides).map_err(|e| what_if(&e))?;
        let analysis = analyze(&reshaped, &config).map_err(|e| what_if(&e))?;
        let mut report = Report::new(&reshaped, &analysis, name);
        // The model as converted, for the delta: exactly what the CLI does.
        let before =
            analyze(&model, &config).map_err(|e| Failure::model(format!("{name}: {e}")))?;
        report.what_if = Some(WhatIfInfo::new(input_shapes.to_vec(), &model, &before));
        (report, analysis.plan_input)
    };
    let t1 = t();
    Ok(Analysed {
        report,
        inputs,
        plan_input,
        planner,
        profile,
        timings: vec![("parse+analyze+report".into(), t1 - t0)],
    })
}

/// Every planner's head on the analysed buffers, the share code, and the
/// measured advice for the model the report shows (`bytes` reshaped by
/// `input_shapes`, as in [`analyse`]).
pub fn extras(a: &Analysed, bytes: &[u8], input_shapes: &[String]) -> (Extras, Vec<(String, f64)>) {
    let t = js_sys::Date::now;
    let t0 = t();
    let planners = PlannerKind::ALL
        .iter()
        .map(|&k| PlannerHead {
            planner: k.name().into(),
            head: if k == a.planner {
                Ok(a.report.arena.head_bytes)
            } else {
                k.plan(&a.plan_input)
                    .map(|p| p.head_bytes)
                    .map_err(|e| e.to_string())
            },
        })
        .collect();
    let t1 = t();
    let share_code = share::encode(&a.report);
    let t2 = t();
    let config = Config {
        profile: a.profile,
        planner: a.planner,
    };
    let advice = Model::parse(bytes)
        .ok()
        .and_then(|m| {
            let overrides = input_shapes
                .iter()
                .map(|s| whatif::parse_override(s))
                .collect::<Result<Vec<_>, _>>()
                .ok()?;
            if overrides.is_empty() {
                return Some(advice::advise(&m, &a.report, &config));
            }
            let reshaped = whatif::with_input_shapes(&m, &overrides).ok()?;
            Some(advice::advise(&reshaped, &a.report, &config))
        })
        .unwrap_or_default();
    let t3 = t();
    (
        Extras {
            planners,
            share_code,
            advice,
        },
        vec![
            ("other planners".into(), t1 - t0),
            ("share code".into(), t2 - t1),
            ("advice".into(), t3 - t2),
        ],
    )
}

fn set(obj: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(obj, &JsValue::from_str(key), value);
}

fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
}

fn get_str(obj: &JsValue, key: &str) -> String {
    get(obj, key).as_string().unwrap_or_default()
}

fn timings_obj(timings: &[(String, f64)]) -> Object {
    let o = Object::new();
    for (k, v) in timings {
        set(&o, k, &JsValue::from_f64(*v));
    }
    o
}

/// Worker side: answers each analysis request with two messages, the report
/// first (`kind: "report"`) and then the extras (`kind: "extras"`).
pub fn worker_main() {
    let scope: web_sys::DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
    let reply_scope = scope.clone();
    let on_message =
        Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
            let data = ev.data();
            let bytes = get(&data, "bytes")
                .dyn_into::<Uint8Array>()
                .map(|a| a.to_vec())
                .unwrap_or_default();
            let input_shapes: Vec<String> = Array::from(&get(&data, "inputShapes"))
                .iter()
                .filter_map(|v| v.as_string())
                .collect();
            let result = analyse(
                &bytes,
                &get_str(&data, "name"),
                &get_str(&data, "target"),
                &get_str(&data, "planner"),
                &input_shapes,
            );
            let reply = Object::new();
            set(&reply, "id", &get(&data, "id"));
            set(&reply, "kind", &JsValue::from_str("report"));
            let a = match result {
                Ok(a) => a,
                Err(e) => {
                    set(&reply, "ok", &JsValue::FALSE);
                    set(&reply, "error", &JsValue::from_str(&e.message));
                    set(&reply, "whatIf", &JsValue::from_bool(e.what_if));
                    let _ = reply_scope.post_message(&reply);
                    return;
                }
            };
            set(&reply, "ok", &JsValue::TRUE);
            let payload = share::to_bytes(&a.report);
            set(&reply, "payload", &Uint8Array::from(payload.as_slice()));
            set(&reply, "inputs", &inputs_to_js(&a.inputs));
            set(&reply, "timings", &timings_obj(&a.timings));
            let _ = reply_scope.post_message(&reply);

            let (x, timings) = extras(&a, &bytes, &input_shapes);
            let reply = Object::new();
            set(&reply, "id", &get(&data, "id"));
            set(&reply, "kind", &JsValue::from_str("extras"));
            set(&reply, "share", &JsValue::from_str(&x.share_code));
            let planners = Array::new();
            for p in &x.planners {
                let o = Object::new();
                set(&o, "planner", &JsValue::from_str(&p.planner));
                match &p.head {
                    Ok(h) => set(&o, "head", &JsValue::from_f64(*h as f64)),
                    Err(e) => set(&o, "error", &JsValue::from_str(e)),
                }
                planners.push(&o);
            }
            set(&reply, "planners", &planners);
            let advice = Array::new();
            for a in &x.advice {
                let o = Object::new();
                set(&o, "action", &JsValue::from_str(&a.action));
                set(&o, "figure", &JsValue::from_str(&a.figure));
                set(&o, "from", &JsValue::from_f64(a.from_bytes as f64));
                set(&o, "to", &JsValue::from_f64(a.to_bytes as f64));
                if let Some(t) = &a.try_args {
                    set(&o, "try", &JsValue::from_str(t));
                }
                advice.push(&o);
            }
            set(&reply, "advice", &advice);
            set(&reply, "timings", &timings_obj(&timings));
            let _ = reply_scope.post_message(&reply);
        });
    scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget();
}

fn inputs_to_js(inputs: &[GraphInput]) -> Array {
    let out = Array::new();
    for g in inputs {
        let o = Object::new();
        set(&o, "key", &JsValue::from_str(&g.key));
        set(&o, "name", &JsValue::from_str(&g.name));
        set(&o, "tensor", &JsValue::from_f64(g.tensor as f64));
        let dims = Array::new();
        for &d in &g.shape {
            dims.push(&JsValue::from_f64(f64::from(d)));
        }
        set(&o, "shape", &dims);
        set(&o, "dtype", &JsValue::from_str(&g.dtype));
        out.push(&o);
    }
    out
}

fn inputs_from_js(v: &JsValue) -> Vec<GraphInput> {
    Array::from(v)
        .iter()
        .map(|o| GraphInput {
            key: get_str(&o, "key"),
            name: get_str(&o, "name"),
            tensor: get(&o, "tensor").as_f64().unwrap_or(0.0) as usize,
            shape: Array::from(&get(&o, "shape"))
                .iter()
                .map(|d| d.as_f64().unwrap_or(0.0) as i32)
                .collect(),
            dtype: get_str(&o, "dtype"),
        })
        .collect()
}

/// Publishes the worker's phase timings for the tests (`window.__microarenaWorker`).
fn publish_worker_timings(data: &JsValue) {
    let Some(w) = web_sys::window() else { return };
    let key = JsValue::from_str("__microarenaWorker");
    let mut obj = Reflect::get(&w, &key).unwrap_or(JsValue::UNDEFINED);
    if !obj.is_object() || get_str(data, "kind") == "report" {
        obj = Object::new().into();
        let _ = Reflect::set(&w, &key, &obj);
    }
    let t = get(data, "timings");
    if !t.is_object() {
        return;
    }
    for k in js_sys::Object::keys(&Object::from(t.clone())).iter() {
        let _ = Reflect::set(
            &obj,
            &k,
            &Reflect::get(&t, &k).unwrap_or(JsValue::UNDEFINED),
        );
    }
}

fn decode_reply(data: &JsValue) -> Reply {
    publish_worker_timings(data);
    if get_str(data, "kind") == "extras" {
        let planners = Array::from(&get(data, "planners"))
            .iter()
            .map(|o| PlannerHead {
                planner: get_str(&o, "planner"),
                head: match get(&o, "head").as_f64() {
                    Some(h) => Ok(h as u64),
                    None => Err(get_str(&o, "error")),
                },
            })
            .collect();
        let advice = Array::from(&get(data, "advice"))
            .iter()
            .map(|o| Advice {
                action: get_str(&o, "action"),
                figure: get_str(&o, "figure"),
                from_bytes: get(&o, "from").as_f64().unwrap_or(0.0) as u64,
                to_bytes: get(&o, "to").as_f64().unwrap_or(0.0) as u64,
                try_args: get(&o, "try").as_string(),
            })
            .collect();
        return Reply::Extras(Extras {
            planners,
            share_code: get_str(data, "share"),
            advice,
        });
    }
    if get(data, "ok").as_bool() != Some(true) {
        let mut e = get_str(data, "error");
        if e.is_empty() {
            e = "the analysis failed".into();
        }
        return if get(data, "whatIf").as_bool() == Some(true) {
            Reply::WhatIfError(e)
        } else {
            Reply::Report(Err(e))
        };
    }
    let report = get(data, "payload")
        .dyn_into::<Uint8Array>()
        .map_err(|_| "the worker sent no report".to_string())
        .and_then(|p| share::from_bytes(&p.to_vec()).map_err(|e| e.to_string()));
    Reply::Report(report.map(|r| (r, inputs_from_js(&get(data, "inputs")))))
}

type Callback = Rc<dyn Fn(Reply)>;

/// Page side: sends requests to the worker (or, when workers are unavailable,
/// runs them on the page after yielding a frame) and delivers only the answers
/// to the latest request.
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
                    let data = ev.data();
                    if get(&data, "id").as_f64() == Some(f64::from(latest.get())) {
                        cb(decode_reply(&data));
                    }
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

    /// Starts analysing `req`; the callback gets the replies.
    pub fn request(&self, req: &Request) {
        let id = self.latest.get().wrapping_add(1);
        self.latest.set(id);
        if let Some(w) = &self.worker {
            let msg = Object::new();
            set(&msg, "id", &JsValue::from_f64(f64::from(id)));
            set(&msg, "bytes", &Uint8Array::from(req.bytes.as_slice()));
            set(&msg, "name", &JsValue::from_str(&req.name));
            set(&msg, "target", &JsValue::from_str(&req.target));
            set(&msg, "planner", &JsValue::from_str(&req.planner));
            let shapes = Array::new();
            for s in &req.input_shapes {
                shapes.push(&JsValue::from_str(s));
            }
            set(&msg, "inputShapes", &shapes);
            if w.post_message(&msg).is_ok() {
                return;
            }
        }
        // No worker: yield so the "analysing" state paints, then run here.
        let cb = self.callback.clone();
        let latest = self.latest.clone();
        let req = req.clone();
        wasm_bindgen_futures::spawn_local(async move {
            sleep_ms(16).await;
            let result = analyse(
                &req.bytes,
                &req.name,
                &req.target,
                &req.planner,
                &req.input_shapes,
            );
            if latest.get() != id {
                return;
            }
            match result {
                Ok(a) => {
                    cb(Reply::Report(Ok((a.report.clone(), a.inputs.clone()))));
                    sleep_ms(0).await;
                    if latest.get() == id {
                        cb(Reply::Extras(extras(&a, &req.bytes, &req.input_shapes).0));
                    }
                }
                Err(e) if e.what_if => cb(Reply::WhatIfError(e.message)),
                Err(e) => cb(Reply::Report(Err(e.message))),
            }
        });
    }
}

async fn sleep_ms(ms: i32) {
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

/// Publishes a timing for the browser tests (`window.__microarena`).
pub fn publish_timing(key: &str, ms: f64) {
    let Some(w) = web_sys::window() else { return };
    let mut obj =
        Reflect::get(&w, &JsValue::from_str("__microarena")).unwrap_or(JsValue::UNDEFINED);
    if !obj.is_object() {
        obj = Object::new().into();
        let _ = Reflect::set(&w, &JsValue::from_str("__microarena"), &obj);
    }
    let _ = Reflect::set(&obj, &JsValue::from_str(key), &JsValue::from_f64(ms));
}

/// Counts completed renders (`window.__microarena.seq`), so tests can wait for the next one.
pub fn bump_seq() {
    let Some(w) = web_sys::window() else { return };
    let obj = Reflect::get(&w, &JsValue::from_str("__microarena")).unwrap_or(JsValue::UNDEFINED);
    let seq = Reflect::get(&obj, &JsValue::from_str("seq"))
        .ok()
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0);
    publish_timing("seq", seq + 1.0);
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

/// Marks the page as used by a worker, for the tests and the footer.
pub fn worker_label(has_worker: bool) -> &'static str {
    if has_worker {
        "analysed in a Web Worker"
    } else {
        "analysed on the page (no worker)"
    }
}
