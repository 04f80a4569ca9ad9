//! The shared corpus against TFLM built for Cortex-M (`models/tflm_cortex_m.jsonl`, recorded
//! by `../shared/oracle/tflm-cortex-m` with TFLM 90b983c2 under QEMU).
//!
//! `m4-ref` (reference kernels) is what `--target cortex-m` models, `m4-cmsis-nn` and
//! `m0plus-cmsis-nn` what `--target cortex-m4-cmsis-nn` and `cortex-m0plus-cmsis-nn` model:
//! every figure TFLM prints must equal ours. esp-tflite-micro's ESP32-S3 and ESP32 builds
//! (`corpus_esp.jsonl` beside this file; how they were made: `docs/esp-nn.md`) likewise for
//! `esp32s3-esp-nn` and `esp32-esp-nn`.

mod support;

use microarena_core::report::Report;
use microarena_core::tflm::profile::{
    CORTEX_M, CORTEX_M0PLUS_CMSIS_NN, CORTEX_M4_CMSIS_NN, CORTEX_M33_CMSIS_NN, CORTEX_M55_CMSIS_NN,
    CORTEX_M55_ETHOS_U, ESP32_ESP_NN, ESP32S3_ESP_NN, TargetProfile,
};
use serde_json::Value;

use support::report;

/// One figure where TFLM and we disagree.
struct Mismatch {
    model: String,
    figure: String,
    tflm: u64,
    ours: u64,
}

fn num(rec: &Value, key: &str, model: &str) -> u64 {
    rec[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{model}: record has no numeric '{key}'"))
}

/// Every figure of one `status: ok` record compared with our report: head, tail, total,
/// minimum arena, and each category's used/requested/count (a category TFLM prints and we
/// lack counts as 0 on our side; categories TFLM's `PrintAllocations` never prints, such as
/// the allocator's own objects, are ours alone).
fn compare(rec: &Value, r: &Report, model: &str) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let mut check = |figure: String, tflm: u64, ours: u64| {
        if tflm != ours {
            out.push(Mismatch {
                model: model.to_string(),
                figure,
                tflm,
                ours,
            });
        }
    };
    check("head".into(), num(rec, "head", model), r.arena.head_bytes);
    check("tail".into(), num(rec, "tail", model), r.arena.tail_bytes);
    check(
        "total".into(),
        num(rec, "total", model),
        r.arena.total_bytes,
    );
    check(
        "min_arena".into(),
        num(rec, "min_arena", model),
        r.arena.minimum_bytes,
    );
    let cats = rec["categories"].as_array().expect("categories array");
    for cat in cats {
        let name = cat["name"].as_str().expect("category name");
        let ours = r.tail.iter().find(|c| c.category == name);
        let (used, requested, count) =
            ours.map_or((0, 0, 0), |c| (c.bytes, c.requested_bytes, c.count));
        check(format!("{name}: used"), num(cat, "used", model), used);
        check(
            format!("{name}: requested"),
            num(cat, "requested", model),
            requested,
        );
        check(format!("{name}: count"), num(cat, "count", model), count);
    }
    out
}

fn table(build: &str, mismatches: &[Mismatch]) -> String {
    let mut s = format!("{build}: {} mismatching figures\n", mismatches.len());
    s += "| model | figure | TFLM | ours | ours − TFLM |\n|---|---|---|---|---|\n";
    for m in mismatches {
        s += &format!(
            "| {} | {} | {} | {} | {:+} |\n",
            m.model,
            m.figure,
            m.tflm,
            m.ours,
            i128::from(m.ours) - i128::from(m.tflm)
        );
    }
    s
}

/// The records of one build, in file order: the shared table, then ours of the builds it
/// lacks (`tflm_cortex_m_more.jsonl`, and `corpus_esp.jsonl` for esp-tflite-micro's two
/// builds: the same harness on the same models).
fn records(root: &std::path::Path, build: &str) -> Vec<Value> {
    let shared =
        String::from_utf8(support::read(&root.join("models/tflm_cortex_m.jsonl"))).expect("utf-8");
    let recs: Vec<Value> = shared
        .lines()
        .chain(include_str!("tflm_cortex_m_more.jsonl").lines())
        .chain(include_str!("corpus_esp.jsonl").lines())
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("jsonl line"))
        .filter(|rec| rec["build"] == build)
        .collect();
    assert!(!recs.is_empty(), "no records of build {build}");
    recs
}

#[test]
fn cortex_m_matches_tflm_m4_reference_build() {
    let Some(root) = support::corpus("cortex_m_matches_tflm_m4_reference_build") else {
        return;
    };
    let mut mismatches = Vec::new();
    let mut unrefused = Vec::new();
    let (mut checked, mut refused) = (0, 0);
    for rec in records(&root, "m4-ref") {
        let name = rec["model"].as_str().expect("model name");
        let r = report(
            &support::read(&root.join("models").join(name)),
            name,
            &CORTEX_M,
        );
        match rec["status"].as_str() {
            Some("ok") => {
                mismatches.extend(compare(&rec, &r, name));
                if r.has_errors() {
                    unrefused.push(format!("{name}: TFLM loads it, we say {:?}", r.diagnostics));
                }
                checked += 1;
            }
            _ => {
                if !r.has_errors() {
                    unrefused.push(format!(
                        "{name}: TFLM refused it ({}), we give no error diagnostic",
                        rec["error"].as_str().unwrap_or("no message")
                    ));
                }
                refused += 1;
            }
        }
    }
    eprintln!("{}", table("m4-ref", &mismatches));
    eprintln!("m4-ref: {checked} loadable models compared, {refused} refused by TFLM");
    assert!(
        mismatches.is_empty() && unrefused.is_empty(),
        "{}{}",
        table("m4-ref", &mismatches),
        unrefused.join("\n")
    );
    assert!(checked >= 9, "only {checked} loadable models were compared");
    assert!(refused >= 2, "only {refused} refused models were checked");
}

/// Every loadable model of one CMSIS-NN (or ESP-NN) build equals our report on `profile`, figure by
/// figure (the mismatch table is printed first, so a failure shows all of them).
fn assert_cmsis_build(test: &str, build: &str, profile: &'static TargetProfile) {
    let Some(root) = support::corpus(test) else {
        return;
    };
    let mut mismatches = Vec::new();
    let mut unrefused = Vec::new();
    let mut checked = 0;
    for rec in records(&root, build) {
        let name = rec["model"].as_str().expect("model name");
        let r = report(
            &support::read(&root.join("models").join(name)),
            name,
            profile,
        );
        if rec["status"] != "ok" {
            if !r.has_errors() {
                unrefused.push(format!(
                    "{name}: TFLM refused it, we give no error diagnostic"
                ));
            }
            continue;
        }
        mismatches.extend(compare(&rec, &r, name));
        checked += 1;
    }
    eprintln!("{}", table(build, &mismatches));
    eprintln!(
        "{build}: {checked} loadable models compared with --target {}",
        profile.name
    );
    assert!(
        mismatches.is_empty() && unrefused.is_empty(),
        "{}{}",
        table(build, &mismatches),
        unrefused.join("\n")
    );
    assert!(checked >= 9, "only {checked} loadable models were compared");
}

#[test]
fn cortex_m4_cmsis_nn_matches_tflm_m4_cmsis_nn_build() {
    assert_cmsis_build(
        "cortex_m4_cmsis_nn_matches_tflm_m4_cmsis_nn_build",
        "m4-cmsis-nn",
        &CORTEX_M4_CMSIS_NN,
    );
}

#[test]
fn cortex_m0plus_cmsis_nn_matches_tflm_m0plus_cmsis_nn_build() {
    assert_cmsis_build(
        "cortex_m0plus_cmsis_nn_matches_tflm_m0plus_cmsis_nn_build",
        "m0plus-cmsis-nn",
        &CORTEX_M0PLUS_CMSIS_NN,
    );
}

#[test]
fn cortex_m33_cmsis_nn_matches_tflm_m33_cmsis_nn_build() {
    assert_cmsis_build(
        "cortex_m33_cmsis_nn_matches_tflm_m33_cmsis_nn_build",
        "m33-cmsis-nn",
        &CORTEX_M33_CMSIS_NN,
    );
}

#[test]
fn cortex_m55_cmsis_nn_matches_tflm_m55_cmsis_nn_build() {
    assert_cmsis_build(
        "cortex_m55_cmsis_nn_matches_tflm_m55_cmsis_nn_build",
        "m55-cmsis-nn",
        &CORTEX_M55_CMSIS_NN,
    );
}

#[test]
fn cortex_m55_ethos_u_matches_tflm_m55_ethos_u_build() {
    assert_cmsis_build(
        "cortex_m55_ethos_u_matches_tflm_m55_ethos_u_build",
        "m55-ethos-u",
        &CORTEX_M55_ETHOS_U,
    );
}

#[test]
fn esp32s3_esp_nn_matches_esp_tflite_micro() {
    assert_cmsis_build(
        "esp32s3_esp_nn_matches_esp_tflite_micro",
        "esp32s3-esp-nn",
        &ESP32S3_ESP_NN,
    );
}

#[test]
fn esp32_esp_nn_matches_esp_tflite_micro() {
    assert_cmsis_build(
        "esp32_esp_nn_matches_esp_tflite_micro",
        "esp32-esp-nn",
        &ESP32_ESP_NN,
    );
}
