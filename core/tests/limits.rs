//! Resource limits: hostile sizes are refused quickly with specific errors.

use microarena_core::build::builder::ModelBuilder;
use microarena_core::plan::{MAX_PLANNED_BUFFERS, PlanBuffer, PlanError, PlannerKind};
use microarena_core::read::dtype::DType;
use microarena_core::read::model::{Limits, ReadError};
use microarena_core::read::ops::BuiltinOp;
use microarena_core::{Config, Model, analyze, tflm::profile};

fn chain(tensors: usize) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let ids: Vec<i32> = (0..tensors)
        .map(|i| b.tensor(g, &format!("t{i}"), &[1, 4], DType::I8).id())
        .collect();
    for w in ids.windows(2) {
        b.op(g, BuiltinOp::RELU, &[w[0]], &[w[1]]);
    }
    b.inputs(g, &ids[..1]).outputs(g, &ids[tensors - 1..]);
    b.finish()
}

#[test]
fn tensor_and_operator_counts_over_the_limit_are_refused() {
    let bytes = chain(50);
    let tight = Limits {
        max_tensors: 49,
        ..Limits::DEFAULT
    };
    assert!(matches!(
        Model::parse_with_limits(&bytes, &tight),
        Err(ReadError::LimitExceeded {
            what: "tensors",
            count: 50,
            limit: 49
        })
    ));
    let tight = Limits {
        max_operators: 10,
        ..Limits::DEFAULT
    };
    assert!(matches!(
        Model::parse_with_limits(&bytes, &tight),
        Err(ReadError::LimitExceeded {
            what: "operators",
            count: 49,
            limit: 10
        })
    ));
    let tight = Limits {
        max_file_bytes: 100,
        ..Limits::DEFAULT
    };
    assert!(matches!(
        Model::parse_with_limits(&bytes, &tight),
        Err(ReadError::TooLarge { .. })
    ));
    assert!(Model::parse(&bytes).is_ok());
}

#[test]
fn planners_refuse_more_buffers_than_they_can_place_in_reasonable_time() {
    let many = vec![PlanBuffer::online(16, 0, 0); MAX_PLANNED_BUFFERS + 1];
    for &p in PlannerKind::ALL {
        assert!(
            matches!(p.plan(&many), Err(PlanError::TooManyBuffers { .. })),
            "{}",
            p.name()
        );
    }
    // The linear planner keeps TFLM's own limit of 1024.
    let linear = vec![PlanBuffer::online(16, 0, 0); 1025];
    assert!(matches!(
        PlannerKind::Linear.plan(&linear),
        Err(PlanError::TooManyBuffers { limit: 1024, .. })
    ));
}

#[test]
fn long_lived_buffers_do_not_make_analysis_quadratic_in_scopes() {
    // 3,000 ops where every activation stays alive until the end would make a
    // per-scope loop 9M steps per buffer list; the analysis must still finish fast.
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let n = 3000;
    let inputs: Vec<i32> = (0..n)
        .map(|i| b.tensor(g, &format!("in{i}"), &[1, 4], DType::I8).id())
        .collect();
    let mut prev = inputs[0];
    for (i, &x) in inputs.iter().enumerate().skip(1) {
        let y = b.tensor(g, &format!("y{i}"), &[1, 4], DType::I8).id();
        b.op(g, BuiltinOp::ADD, &[prev, x], &[y]);
        prev = y;
    }
    b.inputs(g, &inputs).outputs(g, &[prev]);
    let bytes = b.finish();
    let model = Model::parse(&bytes).expect("parse");
    let a = analyze(
        &model,
        &Config {
            profile: &profile::X86_64,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analyze");
    // Graph inputs live from scope 0 to their consumer; the last input to the end.
    assert_eq!(a.max_scope, (n - 1) as i32);
    let text = microarena_core::report::timeline::render(&a.plan_input, &a.plan);
    assert!(text.lines().count() > n, "buffer lines are always printed");
}

#[test]
fn offline_plan_claiming_more_offsets_than_stored_is_reported() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 4], DType::I8).id();
    let y = b.tensor(g, "y", &[1, 4], DType::I8).id();
    b.op(g, BuiltinOp::RELU, &[x], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    // Header words: version 1, 1 subgraph, N = 1,000,000 offsets, but only two stored.
    let mut words = Vec::new();
    for w in [1u32, 1, 1_000_000, 0, 0] {
        words.extend_from_slice(&w.to_le_bytes());
    }
    b.metadata("OfflineMemoryAllocation", &words);
    let bytes = b.finish();
    let model = Model::parse(&bytes).expect("parse");
    assert!(model.offline_plan.is_none());
    assert!(model.offline_plan_error.is_some());
    let a = analyze(
        &model,
        &Config {
            profile: &profile::X86_64,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analyze");
    assert!(a.diagnostics.iter().any(|d| {
        d.message
            .contains("OfflineMemoryAllocation metadata cannot be read")
    }));
}
