//! A small report worked out by hand for the unit tests: two head buffers
//! (a graph input with 12 bytes of padding, and the LSTM's scratch), two
//! operators and one tail variable. Built from JSON so it reads like the
//! contract the views consume.

use microarena_core::report::Report;

pub(crate) fn report() -> Report {
    let mut report: Report = serde_json::from_value(serde_json::json!({
        "schema_version": 1,
        "model": { "file": "tiny.tflite", "subgraphs": 1, "operators": 2, "tensors": 4 },
        "target": "x86_64",
        "planner": "tflm-greedy",
        "arena": {
            "head_bytes": 176, "tail_bytes": 400, "total_bytes": 576, "minimum_bytes": 576,
            "minimum_phase": "final head+tail", "lower_bound_bytes": 176, "padding_bytes": 12,
            "peak_scope": 1, "peak_op": 1, "peak_opcode": "UNIDIRECTIONAL_SEQUENCE_LSTM",
            "max_scope": 1
        },
        "buffers": [
            { "kind": "tensor", "subgraph": 0, "tensor": 0, "op": null, "name": "input",
              "bytes": 100, "aligned_bytes": 112, "offset": 0, "first": 0, "last": 1,
              "shape": [1, 10, 10], "dtype": "int8", "offline": false },
            { "kind": "scratch", "subgraph": 0, "tensor": null, "op": 1, "name": "scratch",
              "bytes": 64, "aligned_bytes": 64, "offset": 112, "first": 1, "last": 1,
              "shape": [64], "dtype": "int8", "offline": false }
        ],
        "operators": [
            { "subgraph": 0, "index": 0, "opcode": "CONV_2D", "scope": 0, "live_bytes": 112,
              "scratch_bytes": 0, "persistent_bytes": 48, "inputs": [0], "outputs": [1],
              "macs": 4608, "elements": 256, "constant_bytes": 288 },
            { "subgraph": 0, "index": 1, "opcode": "UNIDIRECTIONAL_SEQUENCE_LSTM", "scope": 1,
              "live_bytes": 176, "scratch_bytes": 64, "persistent_bytes": 200,
              "inputs": [1, 2], "outputs": [3], "macs": 420, "elements": 20,
              "constant_bytes": 0 }
        ],
        "tail": [],
        "diagnostics": [],
        "variables": [
            { "subgraph": 0, "tensor": 2, "name": "state", "bytes": 32, "shape": [1, 32],
              "dtype": "int8", "op": 1, "opcode": "UNIDIRECTIONAL_SEQUENCE_LSTM",
              "region": "tail", "offset": null, "lifetime": "interpreter" }
        ],
        "flash": {
            "file_bytes": 1000, "constant_bytes": 288, "overhead_bytes": 712,
            "constant_buffers": 1, "constant_tensors": 1, "external_bytes": 0,
            "unattributed_bytes": 0,
            "largest": [
                { "subgraph": 0, "tensor": 4, "name": "weights", "buffer": 1, "bytes": 288,
                  "shape": [8, 3, 3, 4], "dtype": "int8", "tensors": 1, "op": 0,
                  "opcode": "CONV_2D" }
            ],
            "ram_copies": []
        },
        "compute": { "macs": 5028, "elements": 276 }
    }))
    .expect("the fixture matches the report schema");
    // As `Report::new` and share links set it: from the target's profile.
    let profile = microarena_core::tflm::profile::by_name(&report.target);
    report.target_measured_against = profile.and_then(|p| p.measured_against).map(Into::into);
    report.target_derived = profile.is_some_and(|p| p.measured_against.is_none());
    report
}

/// The step-through of the bundled example on the first target.
pub(crate) fn steps() -> microarena_core::report::steps::Steps {
    use microarena_core::build::example;
    use microarena_core::plan::PlannerKind;
    use microarena_core::{Config, Model, analyze};
    let bytes = example::mobilenet_v1_025_96_int8();
    let model = Model::parse(&bytes).expect("the example parses");
    let config = Config {
        profile: &microarena_core::tflm::profile::PROFILES[0],
        planner: PlannerKind::TflmGreedy,
    };
    let analysis = analyze(&model, &config).expect("and analyses");
    microarena_core::report::steps::steps(&model, &analysis)
}
