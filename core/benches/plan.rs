//! Parse + lifetimes + plan + tail simulation + report, end to end, for the
//! real person_detect model (from the corpus) and generated 5,000-op models.

use criterion::{Criterion, criterion_group, criterion_main};
use microarena_core::plan::PlannerKind;
use microarena_core::report::Report;
use microarena_core::tflm::profile::X86_64;
use microarena_core::{Config, Model, analyze, build::example};
use std::hint::black_box;
use std::path::PathBuf;

fn pipeline(bytes: &[u8]) -> u64 {
    let model = Model::parse(bytes).expect("model");
    let a = analyze(
        &model,
        &Config {
            profile: &X86_64,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analysis");
    let r = Report::new(&model, &a, "bench");
    r.arena.total_bytes
}

fn corpus_model(name: &str) -> Option<Vec<u8>> {
    let root = std::env::var("MICROARENA_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from("../shared"));
    let root = if root.is_relative() {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(root)
    } else {
        root
    };
    std::fs::read(root.join("models").join(name)).ok()
}

fn benches(c: &mut Criterion) {
    match corpus_model("person_detect.tflite") {
        Some(bytes) => {
            c.bench_function("person_detect: parse+plan+tail+report", |b| {
                b.iter(|| pipeline(black_box(&bytes)))
            });
        }
        None => eprintln!("person_detect bench skipped: corpus not found"),
    }
    let example = example::mobilenet_v1_025_96_int8();
    c.bench_function("example mobilenet: parse+plan+tail+report", |b| {
        b.iter(|| pipeline(black_box(&example)))
    });
    let big = example::synthetic(5000);
    c.bench_function("synthetic 5000 ops: parse+plan+tail+report", |b| {
        b.iter(|| pipeline(black_box(&big)))
    });
    let model = Model::parse(&big).expect("model");
    c.bench_function("synthetic 5000 ops: parse only", |b| {
        b.iter(|| Model::parse(black_box(&big)).map(|m| m.tensor_count()))
    });
    let a = analyze(
        &model,
        &Config {
            profile: &X86_64,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analysis");
    c.bench_function("synthetic 5000 ops: greedy plan only", |b| {
        b.iter(|| {
            PlannerKind::TflmGreedy
                .plan(black_box(&a.plan_input))
                .map(|p| p.head_bytes)
        })
    });
}

criterion_group! {
    name = plan;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = benches
}
criterion_main!(plan);
