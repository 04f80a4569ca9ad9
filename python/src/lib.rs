//! `microarena` for Python: the CLI's `plan`, `check`, `optimize` and `diff`
//! as functions a training pipeline calls right after `converter.convert()`.
//!
//! Every function runs the same core calls as the CLI and returns the same
//! JSON, parsed into Python objects: `plan(...)` is the dict `microarena plan
//! --json` prints. Models are a path (`str` or `os.PathLike`) or the `bytes`
//! the TFLite converter returns. Failures raise `microarena.MicroarenaError`
//! with the CLI's one-line message.

use std::path::{Path, PathBuf};

use microarena_core::pipeline::{self, PipelineError};
use microarena_core::plan::PlannerKind;
use microarena_core::report::Report;
use microarena_core::report::budget::{self, Reserve};
use microarena_core::report::diff as report_diff;
use microarena_core::report::measured::Measured;
use microarena_core::report::optimized::OptimizeReport;
use microarena_core::rewrite::optimize as rewrite;
use microarena_core::tflm::profile::{self, TargetProfile};
use microarena_core::{Config, Model, analyze};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(
    microarena,
    MicroarenaError,
    PyValueError,
    "A model, an argument or a file microarena cannot use; the message says which and why."
);

fn fail(message: impl Into<String>) -> PyErr {
    MicroarenaError::new_err(message.into())
}

/// A model given as bytes, or read from a path; with the name reports show.
struct Source {
    bytes: Vec<u8>,
    name: String,
}

fn source(model: &Bound<'_, PyAny>) -> PyResult<Source> {
    if let Ok(b) = model.cast::<PyBytes>() {
        return Ok(Source {
            bytes: b.as_bytes().to_vec(),
            name: "model.tflite".into(),
        });
    }
    let path: PathBuf = model
        .extract()
        .map_err(|_| fail("model must be a path (str or os.PathLike) or bytes"))?;
    let bytes = microarena_shell::read_model(&path).map_err(|e| fail(e.to_string()))?;
    let name = microarena_shell::display_name(&path);
    Ok(Source { bytes, name })
}

fn target(name: &str) -> PyResult<&'static TargetProfile> {
    profile::lookup(name).map_err(|e| fail(e.to_string()))
}

fn planner(name: &str) -> PyResult<PlannerKind> {
    PlannerKind::lookup(name).map_err(|e| fail(e.to_string()))
}

/// `input_shapes` as the CLI's `NAME=DIMS` strings: a dict `{name: dims}` or
/// a list of strings.
fn overrides(shapes: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(shapes) = shapes else {
        return Ok(Vec::new());
    };
    if let Ok(d) = shapes.cast::<PyDict>() {
        let mut out = Vec::new();
        for (k, v) in d.iter() {
            let name: String = k.str()?.extract()?;
            let dims: Vec<i64> = v
                .extract()
                .map_err(|_| fail(format!("input_shapes['{name}'] must be a list of ints")))?;
            let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
            out.push(format!("{name}={}", dims.join(",")));
        }
        return Ok(out);
    }
    shapes
        .extract()
        .map_err(|_| fail("input_shapes must be a dict {name: [dims]} or a list of 'NAME=DIMS'"))
}

/// Parses `json` with Python's own `json` module, so the result is exactly
/// what `json.loads` of the CLI's output gives.
fn to_python(py: Python<'_>, json: serde_json::Result<String>) -> PyResult<Py<PyAny>> {
    let text = json.map_err(|e| fail(format!("cannot serialize the output: {e}")))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

fn report_for(src: &Source, config: &Config) -> PyResult<Report> {
    let model = Model::parse(&src.bytes).map_err(|e| fail(format!("{}: {e}", src.name)))?;
    let analysis = analyze(&model, config).map_err(|e| fail(format!("{}: {e}", src.name)))?;
    Ok(Report::new(&model, &analysis, &src.name))
}

/// The plan `microarena plan --json` prints, as a dict.
#[pyfunction]
#[pyo3(signature = (model, target="x86_64", planner="tflm-greedy", input_shapes=None))]
fn plan(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    target: &str,
    planner: &str,
    input_shapes: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    let src = source(model)?;
    let config = Config {
        profile: self::target(target)?,
        planner: self::planner(planner)?,
    };
    let shapes = overrides(input_shapes)?;
    let parsed = Model::parse(&src.bytes).map_err(|e| fail(format!("{}: {e}", src.name)))?;
    let planned = pipeline::plan(parsed, &config, &shapes, &src.name).map_err(|e| match e {
        PipelineError::InputShape(e) => fail(format!("--input-shape {e}")),
        PipelineError::WhatIf(e) => fail(format!("{}: what-if: {e}", src.name)),
        PipelineError::WhatIfAnalysis(e) | PipelineError::Analysis(e) => {
            fail(format!("{}: {e}", src.name))
        }
    })?;
    to_python(py, serde_json::to_string(&planned.report))
}

/// The budget verdict `microarena check --json` prints, as a dict (`fits`
/// says whether the arena plus headroom fits RAM minus the reserves). A
/// `device` preset gives the RAM, the target and the flash unless they are
/// given; `measured` (the firmware's report, as `check --measured`) gives the
/// RAM and reserves the device measured.
#[pyfunction]
#[pyo3(signature = (model, ram=None, reserves=None, headroom="20%", target=None, planner="tflm-greedy", device=None, flash=None, code=None, measured=None))]
#[allow(clippy::too_many_arguments)]
fn check(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    ram: Option<&Bound<'_, PyAny>>,
    reserves: Option<&Bound<'_, PyDict>>,
    headroom: &str,
    target: Option<&str>,
    planner: &str,
    device: Option<&str>,
    flash: Option<&Bound<'_, PyAny>>,
    code: Option<&Bound<'_, PyAny>>,
    measured: Option<PathBuf>,
) -> PyResult<Py<PyAny>> {
    let src = source(model)?;
    let device = device.map(budget::mcu_preset).transpose().map_err(fail)?;
    let profile = match (target, device) {
        (Some(t), _) => self::target(t)?,
        (None, Some(d)) => d
            .profile()
            .map_err(|e| fail(format!("device {e}; pass target= to choose one")))?,
        (None, None) => &profile::CORTEX_M,
    };
    let bytes = |v: &Bound<'_, PyAny>, what: &str| -> PyResult<u64> {
        if let Ok(n) = v.extract::<u64>() {
            return Ok(n);
        }
        let s: String = v.extract().map_err(|_| {
            fail(format!(
                "{what} must be bytes as an int or a string like '320K'"
            ))
        })?;
        budget::parse_bytes(&s).map_err(fail)
    };
    let mut list = Vec::new();
    if let Some(r) = reserves {
        for (k, v) in r.iter() {
            let name: String = k.str()?.extract()?;
            let b = bytes(&v, &format!("reserve '{name}'"))?;
            list.push(Reserve { name, bytes: b });
        }
    }
    let from_device = match &measured {
        Some(p) => {
            let text = microarena_shell::read_capped(p, microarena_shell::MAX_FIRMWARE_FILE_BYTES)
                .map_err(|e| fail(e.to_string()))?;
            Some(
                Measured::parse(&String::from_utf8_lossy(&text))
                    .map_err(|e| fail(format!("{}: {e}", p.display())))?,
            )
        }
        None => None,
    };
    let parsed = Model::parse(&src.bytes).map_err(|e| fail(format!("{}: {e}", src.name)))?;
    let request = pipeline::CheckRequest {
        model: Some((&parsed, &src.name)),
        config: Config {
            profile,
            planner: self::planner(planner)?,
        },
        device,
        memories: &[],
        ram_bytes: ram.map(|r| bytes(r, "ram")).transpose()?,
        reserves: list,
        headroom_bp: budget::parse_percent_bp(headroom)
            .map_err(|e| fail(format!("headroom {e}")))?,
        flash_bytes: flash.map(|f| bytes(f, "flash")).transpose()?,
        code_bytes: code.map(|c| bytes(c, "code")).transpose()?.unwrap_or(0),
        file_bytes: Some(parsed.file_bytes),
        measured: from_device.as_ref(),
        measured_file: None,
    };
    let checked = pipeline::check_request(&request).map_err(|e| match e {
        pipeline::CheckError::Analysis(e) => fail(format!("{}: {e}", src.name)),
        e => fail(e.to_string()),
    })?;
    to_python(py, serde_json::to_string(&checked.report))
}

/// A copy of the model with an offline plan stock TFLM obeys. Returns its
/// bytes, or with `output` writes it there atomically and returns the dict
/// `microarena optimize --json` prints.
#[pyfunction]
#[pyo3(signature = (model, output=None, planner="best", reorder=false, force=false, target="x86_64"))]
fn optimize(
    py: Python<'_>,
    model: &Bound<'_, PyAny>,
    output: Option<PathBuf>,
    planner: &str,
    reorder: bool,
    force: bool,
    target: &str,
) -> PyResult<Py<PyAny>> {
    let src = source(model)?;
    let profile = self::target(target)?;
    let kind = self::planner(planner)?;
    let mut opts = rewrite::Options::new(profile);
    opts.planner = kind;
    opts.reorder = reorder;
    opts.force = force;
    let r = rewrite::optimize(&src.bytes, &opts).map_err(|e| fail(format!("{}: {e}", src.name)))?;
    let Some(output) = output else {
        return Ok(PyBytes::new(py, &r.bytes).into_any().unbind());
    };
    if model
        .extract::<PathBuf>()
        .is_ok_and(|p| microarena_shell::same_file(&p, &output))
    {
        return Err(fail(format!(
            "{}: refusing to write over the input model; choose another output path",
            output.display()
        )));
    }
    let reread = Model::parse(&r.bytes)
        .map_err(|e| fail(format!("internal error: the output does not parse: {e}")))?;
    let analysis = analyze(
        &reread,
        &Config {
            profile,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .map_err(|e| fail(format!("internal error: the output does not analyse: {e}")))?;
    write_atomic(&output, &r.bytes)?;
    let out_name = output.file_name().map_or_else(
        || output.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let report = Report::new(&reread, &analysis, &out_name);
    let record = OptimizeReport::new(&src.name, &out_name, profile, kind, &r, report);
    to_python(py, serde_json::to_string(&record))
}

/// What changed between two models' arenas, as the dict `microarena diff
/// --json` prints.
#[pyfunction]
#[pyo3(signature = (old, new, target="x86_64", planner="tflm-greedy"))]
fn diff(
    py: Python<'_>,
    old: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
    target: &str,
    planner: &str,
) -> PyResult<Py<PyAny>> {
    let config = Config {
        profile: self::target(target)?,
        planner: self::planner(planner)?,
    };
    let d = report_diff::diff(
        &report_for(&source(old)?, &config)?,
        &report_for(&source(new)?, &config)?,
    );
    to_python(py, serde_json::to_string(&d))
}

fn write_atomic(path: &Path, bytes: &[u8]) -> PyResult<()> {
    microarena_shell::write_atomic(path, bytes).map_err(|e| fail(e.to_string()))
}

/// microarena: exactly how much RAM a TensorFlow Lite Micro model needs.
#[pymodule]
fn microarena(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MicroarenaError", m.py().get_type::<MicroarenaError>())?;
    let targets: Vec<&str> = profile::PROFILES.iter().map(|p| p.name).collect();
    m.add("TARGETS", targets)?;
    // Derived targets (never measured against TFLM), as reports flag them (`target_derived`).
    let derived: Vec<&str> = profile::PROFILES
        .iter()
        .filter(|p| p.measured_against.is_none())
        .map(|p| p.name)
        .collect();
    m.add("DERIVED_TARGETS", derived)?;
    let devices: Vec<&str> = budget::MCU_PRESETS.iter().map(|p| p.name).collect();
    m.add("DEVICES", devices)?;
    let planners: Vec<&str> = PlannerKind::ALL.iter().map(|p| p.name()).collect();
    m.add("PLANNERS", planners)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(optimize, m)?)?;
    m.add_function(wrap_pyfunction!(diff, m)?)?;
    Ok(())
}
