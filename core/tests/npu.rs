//! Vela-compiled models on the Ethos-U target: the `ethos-u` kernel's allocations, the offline
//! plan that puts the NPU's scratch and the feature maps in one region, and the report's NPU
//! region. Models are built here in Vela's pattern (TFLM `kernels/ethos_u/ethosu.cc` lists
//! the operator's inputs: command stream, weights, scratch, fast scratch, data inputs).

mod support;

use microarena_core::build::builder::ModelBuilder;
use microarena_core::read::dtype::DType;
use microarena_core::tflm::profile::{CORTEX_M, CORTEX_M55_CMSIS_NN, CORTEX_M55_ETHOS_U};

use support::report;

/// A flexbuffer holding int8 1 (`CO_TYPE_ETHOSU`): value, type (int, 8-bit), width.
const CO_TYPE_ETHOSU: [u8; 3] = [1, 4, 1];

/// One ethos-u op: output `[1, out]` int8 (tensor 0), command stream (1), weights (2),
/// scratch (3) and fast scratch (4) of `scratch` bytes, input `[1, 8, 8, 3]` int8 (5), and
/// `extra` more inputs of 16 bytes (6…). The offline plan puts the scratch and fast scratch
/// at 0, the input at 0 and the output at 256 (inside the scratch), and plans the extra
/// inputs online (−1) — as Vela's `Shared_Sram` plan does.
fn vela_model(scratch: i32, extra: usize, options: &[u8]) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let out = b.tensor(g, "out", &[1, 4], DType::I8).quant(0.1, 0).id();
    let cs = b
        .tensor(g, "command_stream", &[64], DType::U8)
        .data(&[7; 64])
        .id();
    let w = b.tensor(g, "flash", &[256], DType::U8).data(&[3; 256]).id();
    let s = b.tensor(g, "scratch", &[scratch], DType::U8).id();
    let f = b.tensor(g, "scratch_fast", &[scratch], DType::U8).id();
    let x = b
        .tensor(g, "input", &[1, 8, 8, 3], DType::I8)
        .quant(0.1, 0)
        .id();
    let mut inputs = vec![cs, w, s, f, x];
    let mut plan = vec![256, -1, -1, 0, 0, 0];
    for k in 0..extra {
        inputs.push(
            b.tensor(g, &format!("extra{k}"), &[16], DType::I8)
                .quant(0.1, 0)
                .id(),
        );
        plan.push(-1);
    }
    b.custom_op(g, "ethos-u", &inputs, &[out])
        .custom_options(options);
    let mut graph_inputs = vec![x];
    graph_inputs.extend_from_slice(&inputs[5..]);
    b.inputs(g, &graph_inputs).outputs(g, &[out]);
    b.offline_plan(&plan);
    b.build().expect("a Vela-pattern model builds")
}

#[test]
fn the_ethos_u_kernel_allocates_its_opdata_and_two_address_tables() {
    let r = report(
        &vela_model(1024, 0, &CO_TYPE_ETHOSU),
        "vela",
        &CORTEX_M55_ETHOS_U,
    );
    assert!(!r.has_errors(), "{:?}", r.diagnostics);
    // OpData: three int.
    let op = &r.operators[0];
    assert_eq!(op.persistent_bytes, 12);
    // Six inputs and outputs: 6 × uint64_t base addresses (48 B) and 6 × size_t sizes
    // (24 B → 32 in the head), live during the op, beside the pinned kilobyte.
    let scratch: Vec<(u64, u64)> = r
        .buffers
        .iter()
        .filter(|b| b.tensor.is_none())
        .map(|b| (b.bytes, b.aligned_bytes))
        .collect();
    assert_eq!(scratch, vec![(48, 48), (24, 32)]);
    assert_eq!(r.arena.head_bytes, 1024 + 48 + 32);
    assert_eq!(r.arena.lower_bound_bytes, r.arena.head_bytes);
    // Two more data inputs: 8 entries.
    let r2 = report(
        &vela_model(1024, 2, &CO_TYPE_ETHOSU),
        "vela2",
        &CORTEX_M55_ETHOS_U,
    );
    let tables: Vec<u64> = r2
        .buffers
        .iter()
        .filter(|b| b.tensor.is_none())
        .map(|b| b.bytes)
        .collect();
    assert_eq!(tables, vec![64, 32]);
}

#[test]
fn the_npu_region_names_scratch_fast_scratch_and_what_sits_inside() {
    let r = report(
        &vela_model(1024, 1, &CO_TYPE_ETHOSU),
        "vela",
        &CORTEX_M55_ETHOS_U,
    );
    let npu = r.npu.as_ref().expect("a Vela model has an NPU region");
    assert!(npu.registered);
    assert!(npu.fast_scratch_shared);
    assert_eq!(npu.arena_bytes, 1024);
    assert_eq!(npu.flash_bytes, 64 + 256);
    let op = &npu.ops[0];
    assert_eq!(
        op.scratch.as_ref().map(|t| (t.tensor, t.offset)),
        Some((3, Some(0)))
    );
    assert_eq!(op.fast_scratch.as_ref().map(|t| t.bytes), Some(1024));
    // The input (5) and the output (0) lie inside the scratch; the extra input is online.
    assert_eq!(op.inside_scratch, vec![5, 0]);
    // A model without NPU operators has no region.
    let plain = microarena_core::build::example::synthetic(3);
    assert!(report(&plain, "example", &CORTEX_M55_ETHOS_U).npu.is_none());
}

#[test]
fn targets_without_the_npu_name_the_build_that_has_it() {
    for profile in [&CORTEX_M55_CMSIS_NN, &CORTEX_M] {
        let r = report(&vela_model(1024, 0, &CO_TYPE_ETHOSU), "vela", profile);
        let npu = r.npu.as_ref().expect("the region is shown anyway");
        assert!(!npu.registered);
        let e = r
            .diagnostics
            .iter()
            .find(|d| d.severity == "error")
            .expect("TFLM refuses it");
        assert!(
            e.message.contains("CO_PROCESSOR=ethos_u") && e.message.contains("cortex-m55-ethos-u"),
            "{}",
            e.message
        );
    }
}

#[test]
fn an_ethos_u_op_without_options_is_refused() {
    let r = report(&vela_model(1024, 0, &[]), "vela", &CORTEX_M55_ETHOS_U);
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.severity == "error" && d.message.contains("custom options")),
        "{:?}",
        r.diagnostics
    );
}

#[test]
fn person_detect_vela_on_the_ethos_u_target() {
    let Some(root) = support::corpus("person_detect_vela_on_the_ethos_u_target") else {
        return;
    };
    let bytes = support::read(&root.join("models/person_detect_vela.tflite"));
    let r = report(&bytes, "person_detect_vela.tflite", &CORTEX_M55_ETHOS_U);
    assert!(!r.has_errors(), "{:?}", r.diagnostics);
    let npu = r.npu.as_ref().expect("NPU region");
    // Vela's scratch, fast scratch, input and output share one region.
    assert!(npu.fast_scratch_shared);
    assert_eq!(npu.ops.len(), 1);
    assert_eq!(npu.arena_bytes, npu.ops[0].scratch.as_ref().unwrap().bytes);
}

#[test]
fn the_npu_region_travels_in_share_links() {
    let r = report(
        &vela_model(1024, 1, &CO_TYPE_ETHOSU),
        "vela",
        &CORTEX_M55_ETHOS_U,
    );
    let link = microarena_core::report::share::encode(&r);
    let back = microarena_core::report::share::decode(&link).expect("decodes");
    assert_eq!(back.npu, r.npu);
    assert!(back.npu.is_some());
}
