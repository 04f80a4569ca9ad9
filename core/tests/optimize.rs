//! `optimize`: offline plans TFLM honours, never worse than TFLM greedy.

mod support;

#[path = "../examples/offline_demo.rs"]
#[allow(dead_code)]
mod demo;

use microarena_core::plan::PlannerKind;
use microarena_core::read::model::Model;
use microarena_core::rewrite::optimize::{self, Options};
use microarena_core::tflm::analysis::{Config, analyze};
use microarena_core::tflm::profile::X86_64;

/// The head TFLM's greedy planner gives the written model: what stock TFLM
/// will allocate for it.
fn greedy_head(bytes: &[u8]) -> u64 {
    let m = Model::parse(bytes).expect("the written model re-reads");
    let config = Config {
        profile: &X86_64,
        planner: PlannerKind::TflmGreedy,
    };
    analyze(&m, &config)
        .expect("the written model re-plans")
        .head_bytes
}

fn corpus_models() -> Vec<(String, Vec<u8>)> {
    let Some(dir) = support::corpus("optimize") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(dir.join("models"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "tflite"))
        .collect();
    paths.sort();
    for p in paths {
        out.push((
            p.file_name().unwrap().to_string_lossy().into_owned(),
            std::fs::read(&p).unwrap(),
        ));
    }
    out
}

#[test]
fn corpus_models_never_get_worse_and_the_output_honours_the_plan() {
    for (name, bytes) in corpus_models() {
        for reorder in [false, true] {
            let mut opts = Options::new(&X86_64);
            opts.reorder = reorder;
            opts.force = true;
            let r = optimize::optimize(&bytes, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                r.head_bytes <= r.original_head_bytes,
                "{name}: {} > {}",
                r.head_bytes,
                r.original_head_bytes
            );
            assert_eq!(greedy_head(&r.bytes), r.head_bytes, "{name}");
            eprintln!(
                "{name} reorder={reorder}: {} -> {} ({}, optimal {})",
                r.original_head_bytes,
                r.head_bytes,
                r.strategy.name(),
                r.proven_optimal
            );
        }
    }
}

#[test]
fn reorder_lowers_the_head_of_a_branchy_graph() {
    let bytes = microarena_core::build::example::branchy_float();
    let plain = optimize::optimize(&bytes, &Options::new(&X86_64)).unwrap();
    let mut opts = Options::new(&X86_64);
    opts.reorder = true;
    let r = optimize::optimize(&bytes, &opts).unwrap();
    let order = r.order.clone().expect("reordered");
    assert!(
        r.head_bytes < plain.head_bytes,
        "{} vs {}",
        r.head_bytes,
        plain.head_bytes
    );
    // Every reduction still runs after its expansion.
    for i in 0..4 {
        let pos = |op: usize| order.iter().position(|&o| o == op).unwrap();
        assert!(pos(i) < pos(i + 4), "{order:?}");
    }
    assert_eq!(greedy_head(&r.bytes), r.head_bytes);
    let m = Model::parse(&r.bytes).unwrap();
    // Same ops, new order.
    let orig = Model::parse(&bytes).unwrap();
    for (k, &old) in order.iter().enumerate() {
        assert_eq!(m.main().operators[k], orig.main().operators[old]);
    }
}

#[test]
fn existing_plan_is_refused_without_force() {
    let bytes = microarena_core::build::example::branchy_float();
    let once = optimize::optimize(&bytes, &Options::new(&X86_64)).unwrap();
    let err = optimize::optimize(&once.bytes, &Options::new(&X86_64)).unwrap_err();
    assert_eq!(
        err,
        optimize::OptimizeError::Rewrite(
            microarena_core::rewrite::offline::OfflineError::ExistingPlan
        )
    );
    let mut opts = Options::new(&X86_64);
    opts.force = true;
    let again = optimize::optimize(&once.bytes, &opts).unwrap();
    assert_eq!(again.head_bytes, once.head_bytes);
    assert_eq!(again.original_head_bytes, once.head_bytes);
}

#[test]
fn best_beats_greedy_and_the_output_keeps_it() {
    // A model from `cargo run --example offline_demo -- --search 3000`; TFLM
    // itself measures 864 -> 576 (scripts/verify-offline-plans.sh).
    let bytes = demo::demo_model(2578);
    let r = optimize::optimize(&bytes, &Options::new(&X86_64)).unwrap();
    assert_eq!((r.original_head_bytes, r.head_bytes), (864, 576));
    assert!(r.proven_optimal);
    assert_eq!(r.strategy, optimize::Strategy::Joint);
    // Planner comparison on the input agrees.
    let m = Model::parse(&bytes).unwrap();
    let cmp = microarena_core::tflm::analysis::compare_planners(&m, &X86_64).unwrap();
    let heads: Vec<(&str, u64, bool)> = cmp
        .iter()
        .map(|c| (c.planner.name(), c.head_bytes, c.proven_optimal))
        .collect();
    assert_eq!(heads[0], ("tflm-greedy", 864, false));
    assert_eq!(heads[2], ("best", 576, true));
}
