//! Every kernel against TFLM itself, category by category: the probe models
//! of `core/examples/kernel_cases.rs` (one per kernel branch, the allocation
//! probes of every other registered kernel, control flow and resource
//! variables, the builder networks) against the figures TFLM reported for
//! them, committed as data (`kernel_probes_x86_64.jsonl`, written by
//! `scripts/kernel-probe.sh` with the tflite-micro wheel; the Cortex-M builds'
//! — M4 reference, M4, M33 and M0+ CMSIS-NN — in `kernel_probes_cortex_m.jsonl`
//! by the same probes under QEMU; esp-tflite-micro's ESP32-S3 and ESP32 builds in
//! `kernel_probes_esp.jsonl`).
//!
//! A probe whose model no longer hashes to the measured one fails: rebuilt
//! probes are measured again, never compared with stale figures.

mod support;

use microarena_core::Model;
use microarena_core::tflm::profile::{self, TargetProfile};
use serde_json::Value;

// The probe models, through the table's own copy of them.
#[allow(dead_code)]
#[path = "../examples/kernel_table.rs"]
mod kernel_table;
use kernel_table::probes;
use support::report;

/// FNV-1a 64 of a model, as `scripts/kernel-probe.py` records it.
fn fnv(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Minimum arenas that differ from TFLM's, each with the reason. The
/// minimum depends on which bytes of the temp tensors a kernel's Prepare
/// overwrites with persistent data it allocates after them (TFLM checks a
/// persistent allocation against the head only); microarena models that as
/// the last temp's unread quantization bytes, which is exact on every other
/// probe.
const MIN_ARENA_DEVIATIONS: &[(&str, &str)] = &[(
    "probe_batch_matmul_i8.tflite",
    "BATCH_MATMUL's Prepare overwrites more of its int8 temps than the rule allows; microarena says 32 B more",
)];

/// The figures of one measured probe against microarena's on `profile`.
fn compare(rec: &Value, bytes: &[u8], name: &str, profile: &'static TargetProfile) -> Vec<String> {
    let r = report(bytes, name, profile);
    let mut diffs = Vec::new();
    for d in &r.diagnostics {
        if d.message.contains("not modelled") {
            diffs.push(format!("unmodelled: {}", d.message));
        }
    }
    if rec["ok"] == Value::Bool(false) {
        // TFLM refused it while allocating: we must say TFLM would not run it,
        // and not only at Invoke.
        let refused = r.diagnostics.iter().any(|d| {
            d.message.starts_with("TFLM would not run this model")
                && !d.message.contains("at Invoke")
        });
        if !refused {
            diffs.push(format!(
                "TFLM refuses it ({}) but microarena does not",
                rec["error"].as_str().unwrap_or("?")
            ));
        }
        return diffs;
    }
    let a = &r.arena;
    let mut check = |what: &str, ours: u64, theirs: &Value| {
        if theirs.as_u64() != Some(ours) {
            diffs.push(format!("{what}: TFLM {theirs}, microarena {ours}"));
        }
    };
    check("head", a.head_bytes, &rec["head"]);
    check("tail", a.tail_bytes, &rec["tail"]);
    check("total", a.total_bytes, &rec["total"]);
    if !MIN_ARENA_DEVIATIONS.iter().any(|(n, _)| *n == name) {
        check("minimum arena", a.minimum_bytes, &rec["min_arena"]);
    }
    let cats = rec["categories"].as_object().expect("categories");
    for (cat, fig) in cats {
        let ours = r
            .tail
            .iter()
            .find(|c| c.category == *cat)
            .map_or([0, 0, 0], |c| [c.bytes, c.requested_bytes, c.count]);
        let theirs: Vec<u64> = fig
            .as_array()
            .expect("[used, requested, count]")
            .iter()
            .map(|v| v.as_u64().expect("figure"))
            .collect();
        if theirs != ours {
            diffs.push(format!(
                "{cat}: TFLM {theirs:?}, microarena {ours:?} (used, requested, count)"
            ));
        }
    }
    // A category TFLM reports is never missing from its figures: the others
    // ours has (allocator objects, builtin data, scratch handles) TFLM does
    // not record.
    for c in &r.tail {
        let recorded = matches!(
            c.category.as_str(),
            "TfLiteEvalTensor data"
                | "NodeAndRegistration struct"
                | "Persistent buffer data"
                | "TfLiteTensor variable buffer data"
                | "Persistent TfLiteTensor data"
                | "Persistent TfLiteTensor quantization data"
        );
        if recorded && c.bytes > 0 && !cats.contains_key(&c.category) {
            diffs.push(format!(
                "{}: microarena {} B, TFLM none",
                c.category, c.bytes
            ));
        }
    }
    diffs
}

/// Compares every probe of `data` (one target's measured figures) and fails
/// with every difference at once.
fn check_all(data: &str, target_of: impl Fn(&Value) -> Option<&'static TargetProfile>) -> usize {
    let models = probes();
    let mut lines = data.lines().filter(|l| !l.trim().is_empty());
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).expect("json");
    assert!(
        header["tflm"].is_string(),
        "the header names the TFLM build"
    );
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut measured = std::collections::BTreeSet::new();
    for line in lines {
        let rec: Value = serde_json::from_str(line).expect("jsonl line");
        let name = rec["model"].as_str().expect("model").to_string();
        let Some(profile) = target_of(&rec) else {
            continue;
        };
        measured.insert(name.clone());
        let Some(bytes) = models.get(&name) else {
            failures.push(format!(
                "{name}: measured, but no probe has that name any more"
            ));
            continue;
        };
        if rec["fnv"].as_str() != Some(&fnv(bytes)) {
            failures.push(format!(
                "{name}: the probe changed since TFLM measured it; run scripts/kernel-probe.sh"
            ));
            continue;
        }
        for d in compare(&rec, bytes, &name, profile) {
            failures.push(format!("{name} on {}: {d}", profile.name));
        }
        checked += 1;
    }
    let unmeasured: Vec<&String> = models.keys().filter(|n| !measured.contains(*n)).collect();
    assert!(
        failures.is_empty(),
        "{} differences from TFLM:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        unmeasured.is_empty() || checked == 0,
        "probes never measured (run scripts/kernel-probe.sh): {unmeasured:?}"
    );
    checked
}

#[test]
fn every_probe_matches_the_wheel_on_x86_64() {
    let checked = check_all(include_str!("kernel_probes_x86_64.jsonl"), |_| {
        Some(&profile::X86_64)
    });
    assert!(checked > 700, "only {checked} probes checked");
}

#[test]
fn every_probe_matches_tflm_built_for_cortex_m() {
    let checked = check_all(
        include_str!("kernel_probes_cortex_m.jsonl"),
        |rec| match rec["build"].as_str() {
            Some("m4-ref") => Some(&profile::CORTEX_M),
            Some("m4-cmsis-nn") => Some(&profile::CORTEX_M4_CMSIS_NN),
            Some("m33-cmsis-nn") => Some(&profile::CORTEX_M33_CMSIS_NN),
            Some("m0plus-cmsis-nn") => Some(&profile::CORTEX_M0PLUS_CMSIS_NN),
            other => panic!("unknown build {other:?}"),
        },
    );
    assert!(checked > 4 * 700, "only {checked} probes checked");
}

#[test]
fn every_probe_matches_tflm_built_for_cortex_m55() {
    let checked = check_all(
        include_str!("kernel_probes_cortex_m55.jsonl"),
        |rec| match rec["build"].as_str() {
            Some("m55-cmsis-nn") => Some(&profile::CORTEX_M55_CMSIS_NN),
            Some("m55-ethos-u") => Some(&profile::CORTEX_M55_ETHOS_U),
            other => panic!("unknown build {other:?}"),
        },
    );
    assert!(checked > 2 * 700, "only {checked} probes checked");
}

#[test]
fn every_probe_matches_esp_tflite_micro() {
    // esp-tflite-micro's TFLM and ESP-NN kernels, built with Xtensa's struct layout
    // (docs/esp-nn.md says how).
    let checked = check_all(
        include_str!("kernel_probes_esp.jsonl"),
        |rec| match rec["build"].as_str() {
            Some("esp32s3-esp-nn") => Some(&profile::ESP32S3_ESP_NN),
            Some("esp32-esp-nn") => Some(&profile::ESP32_ESP_NN),
            other => panic!("unknown build {other:?}"),
        },
    );
    assert!(checked > 2 * 700, "only {checked} probes checked");
}

#[test]
fn every_registered_builtin_is_probed() {
    // The probes' operators, against every builtin TFLM registers: none is
    // left to reading alone.
    let models = probes();
    let mut seen = std::collections::BTreeSet::new();
    for bytes in models.values() {
        let m = Model::parse(bytes).expect("a probe parses");
        for sg in &m.subgraphs {
            for op in &sg.operators {
                seen.insert(op.opcode.0);
            }
        }
    }
    let missing: Vec<&str> = microarena_core::tflm::kernels::rows()
        .filter_map(|k| match k.op {
            microarena_core::tflm::kernels::Op::Builtin(code) => (!seen.contains(&i32::from(code)))
                .then(|| microarena_image::opcode::op_name(i32::from(code))),
            microarena_core::tflm::kernels::Op::Custom(_) => None,
        })
        .collect();
    assert!(missing.is_empty(), "no probe for {missing:?}");
}

#[test]
fn the_kernel_table_in_the_docs_is_current() {
    let doc = include_str!("../../docs/tflm-kernels.md");
    let (begin, end) = ("<!-- kernel-table:begin -->\n", "<!-- kernel-table:end -->");
    let from = doc
        .find(begin)
        .expect("docs/tflm-kernels.md has the begin marker")
        + begin.len();
    let to = doc
        .find(end)
        .expect("docs/tflm-kernels.md has the end marker");
    assert!(
        doc[from..to] == kernel_table::table(),
        "docs/tflm-kernels.md's kernel table is stale: replace it with the output of \
         `cargo run -p microarena-core --example kernel_table`"
    );
}
