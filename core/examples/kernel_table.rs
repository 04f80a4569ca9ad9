//! Prints the table of every kernel microarena models — what it allocates per
//! ABI and backend, and how many probes measured it against TFLM on each
//! target — as `docs/tflm-kernels.md` shows it between its `kernel-table`
//! markers (`core/tests/kernel_probes.rs` fails when the page is stale).
//!
//! `cargo run -p microarena-core --example kernel_table`
//!
//! Everything comes from the kernel rows (`core/src/tflm/kernels/`), their
//! Prepare run on every probe model, and the committed probe figures.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use microarena_core::Model;
use microarena_core::tflm::kernels::{self, Evidence, Kernel, Op, PrepareStep};
use microarena_core::tflm::profile::{self, Abi, Sz, TargetProfile};

#[allow(dead_code)]
#[path = "kernel_cases.rs"]
pub mod kernel_cases;

const X86: &str = include_str!("../tests/kernel_probes_x86_64.jsonl");
const CORTEX_M: &str = include_str!("../tests/kernel_probes_cortex_m.jsonl");
const CORTEX_M55: &str = include_str!("../tests/kernel_probes_cortex_m55.jsonl");
const ESP: &str = include_str!("../tests/kernel_probes_esp.jsonl");

fn name(k: &Kernel) -> String {
    match k.op {
        Op::Builtin(code) => microarena_image::opcode::op_name(i32::from(code)).to_string(),
        Op::Custom(n) => format!("{n} (custom)"),
    }
}

fn sz(s: Option<Sz>) -> String {
    s.map_or("–".into(), |s| s.bytes.to_string())
}

fn op_data(v: Option<u32>) -> String {
    v.map_or("–".into(), |b| b.to_string())
}

/// Every probe model by file name.
pub fn probes() -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for case in kernel_cases::cases()
        .into_iter()
        .chain(kernel_cases::probes())
    {
        m.insert(format!("{}.tflite", case.name), case.build().0);
    }
    for (n, _, bytes) in kernel_cases::networks() {
        m.insert(format!("{n}.tflite"), bytes);
    }
    for (n, bytes) in kernel_cases::probe_models() {
        m.insert(format!("{n}.tflite"), bytes);
    }
    for (n, bytes) in kernel_cases::ethos_u_models() {
        m.insert(format!("{n}.tflite"), bytes);
    }
    m
}

/// What the rows' Prepare allocates on the probes, per kernel: persistent and
/// scratch purposes on the reference kernels, and those only CMSIS-NN's or
/// ESP-NN's have.
#[derive(Default)]
struct Seen {
    persistent: BTreeSet<&'static str>,
    scratch: BTreeSet<&'static str>,
    cmsis_persistent: BTreeSet<&'static str>,
    cmsis_scratch: BTreeSet<&'static str>,
    models: BTreeSet<String>,
}

fn key(k: &Kernel) -> String {
    name(k)
}

/// Models TFLM loaded on each target, from the probe data.
fn loaded(data: &str, build: Option<&str>) -> BTreeSet<String> {
    data.lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| build.is_none() || r["build"].as_str() == build)
        .filter(|r| r["ok"] == serde_json::Value::Bool(true))
        .filter_map(|r| r["model"].as_str().map(String::from))
        .collect()
}

fn evidence(k: &Kernel, abi: Abi) -> &'static str {
    match k.evidence.get(abi) {
        Evidence::Measured => "",
        Evidence::Derived(_) => " (derived)",
    }
}

/// The Markdown table.
pub fn table() -> String {
    let models = probes();
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    let reference: [&'static TargetProfile; 2] = [&profile::X86_64, &profile::CORTEX_M];
    let cmsis: [&'static TargetProfile; 6] = [
        &profile::CORTEX_M4_CMSIS_NN,
        &profile::CORTEX_M55_CMSIS_NN,
        &profile::CORTEX_M55_ETHOS_U,
        &profile::CORTEX_M0PLUS_CMSIS_NN,
        &profile::ESP32S3_ESP_NN,
        &profile::ESP32_ESP_NN,
    ];
    for (file, bytes) in &models {
        let Ok(m) = Model::parse(bytes) else { continue };
        for (g, sg) in m.subgraphs.iter().enumerate() {
            for op in &sg.operators {
                let Some(k) = kernels::lookup(op) else {
                    continue;
                };
                let s = seen.entry(key(k)).or_default();
                s.models.insert(file.clone());
                let steps = |p: &'static TargetProfile| kernels::cost(&m, g, op, p, true).prepare;
                for p in reference {
                    for step in steps(p) {
                        match step {
                            PrepareStep::Persistent(x) => {
                                s.persistent.insert(x.purpose);
                            }
                            PrepareStep::Scratch(x) => {
                                s.scratch.insert(x.purpose);
                            }
                            PrepareStep::Temp(_) => {}
                        }
                    }
                }
                for p in cmsis {
                    for step in steps(p) {
                        match step {
                            PrepareStep::Persistent(x) if !s.persistent.contains(x.purpose) => {
                                s.cmsis_persistent.insert(x.purpose);
                            }
                            PrepareStep::Scratch(x) if !s.scratch.contains(x.purpose) => {
                                s.cmsis_scratch.insert(x.purpose);
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
    let x86 = loaded(X86, None);
    let m4 = loaded(CORTEX_M, Some("m4-ref"));
    let m4_cmsis = loaded(CORTEX_M, Some("m4-cmsis-nn"));
    let m33_cmsis = loaded(CORTEX_M, Some("m33-cmsis-nn"));
    let m0_cmsis = loaded(CORTEX_M, Some("m0plus-cmsis-nn"));
    let m55_cmsis = loaded(CORTEX_M55, Some("m55-cmsis-nn"));
    let m55_ethos_u = loaded(CORTEX_M55, Some("m55-ethos-u"));
    let esp32s3 = loaded(ESP, Some("esp32s3-esp-nn"));
    let esp32 = loaded(ESP, Some("esp32-esp-nn"));
    let mut rows: Vec<&'static Kernel> = kernels::rows().collect();
    rows.sort_by_key(|k| name(k));
    let mut out = String::new();
    out.push_str(
        "| kernel | source (`kernels/`) | builtin data B (LP64 / ILP32; Xtensa where it differs) | OpData B (LP64 / ILP32 / CMSIS-NN; ESP-NN where it differs) | Prepare keeps (persistent) | scratch | probes TFLM ran: x86_64 / M4 / M4 CMSIS-NN / M33 CMSIS-NN / M55 CMSIS-NN / M55 Ethos-U / M0+ CMSIS-NN / ESP32-S3 / ESP32 |\n",
    );
    out.push_str("|---|---|---|---|---|---|---|\n");
    for k in rows {
        let s = seen.get(&key(k));
        let list = |set: Option<&BTreeSet<&'static str>>| {
            set.filter(|v| !v.is_empty()).map_or("–".to_string(), |v| {
                v.iter().copied().collect::<Vec<_>>().join(", ")
            })
        };
        // The reference kernel's, then those only CMSIS-NN's makes (their
        // purposes say so).
        let with_cmsis = |ours: Option<&BTreeSet<&'static str>>,
                          cmsis: Option<&BTreeSet<&'static str>>| {
            let base = list(ours);
            match cmsis.filter(|c| !c.is_empty()) {
                None => base,
                Some(c) => {
                    let extra = c.iter().copied().collect::<Vec<_>>().join(", ");
                    if base == "–" {
                        extra
                    } else {
                        format!("{base}; {extra}")
                    }
                }
            }
        };
        let scratch = with_cmsis(s.map(|s| &s.scratch), s.map(|s| &s.cmsis_scratch));
        let persistent = with_cmsis(s.map(|s| &s.persistent), s.map(|s| &s.cmsis_persistent));
        let cmsis_op_data = k
            .cmsis_nn
            .and_then(|c| c.op_data)
            .map_or("=".to_string(), op_data);
        let esp_op_data = k
            .esp_nn
            .and_then(|c| c.op_data)
            .map_or(String::new(), |b| format!("; ESP-NN {}", op_data(b)));
        let xtensa = if k.builtin.ilp32_enum4 == k.builtin.ilp32 {
            String::new()
        } else {
            format!("; Xtensa {}", sz(k.builtin.ilp32_enum4))
        };
        let count = |set: &BTreeSet<String>| {
            s.map_or(0, |s| s.models.iter().filter(|m| set.contains(*m)).count())
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} / {}{} | {} / {}{} / {}{} | {} | {} | {} / {} / {} / {} / {} / {} / {} / {} / {} |",
            name(k),
            k.source,
            sz(k.builtin.lp64),
            sz(k.builtin.ilp32),
            xtensa,
            if k.init.is_some() {
                "options".into()
            } else {
                op_data(k.op_data.lp64)
            },
            if k.init.is_some() {
                "options".into()
            } else {
                op_data(k.op_data.ilp32)
            },
            evidence(k, Abi::Ilp32),
            cmsis_op_data,
            esp_op_data,
            persistent,
            scratch,
            count(&x86),
            count(&m4),
            count(&m4_cmsis),
            count(&m33_cmsis),
            count(&m55_cmsis),
            count(&m55_ethos_u),
            count(&m0_cmsis),
            count(&esp32s3),
            count(&esp32),
        );
    }
    out
}

fn main() {
    print!("{}", table());
}
