//! Shared test support: locating the `../shared` corpus.
//!
//! `MICROARENA_CORPUS` (relative paths are taken from the workspace root) must
//! point at the corpus when set, and a missing corpus is then a failure. When
//! it is unset, corpus tests print that they were skipped.

#![allow(dead_code)]

use std::path::PathBuf;

/// The corpus root, `None` when the variable is unset (test skipped).
pub fn corpus(test: &str) -> Option<PathBuf> {
    let Ok(value) = std::env::var("MICROARENA_CORPUS") else {
        eprintln!("{test}: skipped (MICROARENA_CORPUS is not set)");
        return None;
    };
    let mut path = PathBuf::from(&value);
    if path.is_relative() {
        path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(path);
    }
    assert!(
        path.join("models").is_dir(),
        "MICROARENA_CORPUS={value} is set but {} has no models/ folder",
        path.display()
    );
    Some(path)
}

/// Reads a corpus file, failing the test with the path when it is missing.
pub fn read(path: &std::path::Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The report of `bytes` on `profile` with TFLM's greedy planner, failing
/// the test with `name` when the model does not parse or analyse.
pub fn report(
    bytes: &[u8],
    name: &str,
    profile: &'static microarena_core::tflm::profile::TargetProfile,
) -> microarena_core::report::Report {
    let model = microarena_core::Model::parse(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let analysis = microarena_core::analyze(
        &model,
        &microarena_core::Config {
            profile,
            planner: microarena_core::plan::PlannerKind::TflmGreedy,
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"));
    microarena_core::report::Report::new(&model, &analysis, name)
}

/// The analysis of `bytes` on `profile` with TFLM's greedy planner (the builder tests').
pub fn analysis(
    bytes: &[u8],
    profile: &'static microarena_core::tflm::profile::TargetProfile,
) -> microarena_core::Analysis {
    let model = microarena_core::Model::parse(bytes).expect("a builder model parses");
    microarena_core::analyze(
        &model,
        &microarena_core::Config {
            profile,
            planner: microarena_core::plan::PlannerKind::TflmGreedy,
        },
    )
    .expect("a builder model analyses")
}

/// Op 0's scratch requests, in order, on each profile.
pub fn op0_scratch<const N: usize>(
    bytes: &[u8],
    profiles: [&'static microarena_core::tflm::profile::TargetProfile; N],
) -> [Vec<u64>; N] {
    profiles.map(|p| {
        analysis(bytes, p)
            .tail
            .scratch
            .iter()
            .filter(|s| s.op_index == 0)
            .map(|s| s.bytes)
            .collect()
    })
}

/// Op 0's tail allocations of `category`, requested bytes in order.
pub fn op0_tail(
    bytes: &[u8],
    profile: &'static microarena_core::tflm::profile::TargetProfile,
    category: microarena_core::tflm::tail::Category,
) -> Vec<u64> {
    let op0 = microarena_core::tflm::tail::Owner::Op {
        subgraph: 0,
        op_index: 0,
    };
    analysis(bytes, profile)
        .tail
        .allocs
        .iter()
        .filter(|a| a.category == category && a.owner == op0)
        .map(|a| a.requested)
        .collect()
}
