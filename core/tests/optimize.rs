//! `optimize`: offline plans TFLM honours, never worse than TFLM greedy.

mod support;

use microarena_core::analysis::{Config, analyze};
use microarena_core::model::Model;
use microarena_core::optimize::{self, Options};
use microarena_core::planner::PlannerKind;
use microarena_core::profile::X86_64;

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
            let m = Model::parse(&r.bytes).unwrap();
            let a = analyze(
                &m,
                &Config {
                    profile: &X86_64,
                    planner: PlannerKind::TflmGreedy,
                },
            )
            .unwrap();
            assert_eq!(a.head_bytes, r.head_bytes, "{name}");
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
