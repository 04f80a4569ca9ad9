//! Core behaviour on models made with `ModelBuilder`, without ../shared.
//!
//! Every expected value is derived by hand from the specification
//! (../shared/docs/tflm-arena.md); the arithmetic is in the comments. Nothing
//! here computes an expectation with the code under test.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::example;
use microarena_core::plan::{self, PlannerKind};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_core::tflm::analysis::{Analysis, AnalysisError, Severity};
use microarena_core::tflm::lifetime::{BufferKind, LifetimeError};
use microarena_core::tflm::tail::{Category, Owner};
use microarena_core::{Config, Model, ReadError, analyze, tflm::profile};

const X86: Config = Config {
    profile: &profile::X86_64,
    planner: PlannerKind::TflmGreedy,
};

fn analyze_bytes(bytes: &[u8]) -> Analysis {
    let m = Model::parse(bytes).expect("builder output parses");
    analyze(&m, &X86).expect("analysis succeeds")
}

/// (subgraph, tensor) → (first, last, offset, aligned size) of every planned tensor.
fn planned(a: &Analysis) -> BTreeMap<(usize, usize), (i32, i32, i64, u64)> {
    a.buffers
        .iter()
        .filter_map(|b| match b.info.kind {
            BufferKind::Tensor { subgraph, tensor } => Some((
                (subgraph, tensor),
                (b.info.first, b.info.last, b.offset, b.aligned_bytes),
            )),
            BufferKind::Scratch { .. } => None,
        })
        .collect()
}

fn lifetimes(a: &Analysis) -> BTreeMap<(usize, usize), (i32, i32)> {
    planned(a)
        .into_iter()
        .map(|(k, (f, l, _, _))| (k, (f, l)))
        .collect()
}

fn errors(a: &Analysis) -> Vec<&str> {
    a.diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.as_str())
        .collect()
}

fn assert_valid(a: &Analysis) {
    plan::validate(&a.plan_input, &a.plan).expect("no two live buffers overlap");
}

fn i8_tensor(b: &mut ModelBuilder, g: usize, name: &str, shape: &[i32]) -> i32 {
    b.tensor(g, name, shape, DType::I8).quant(0.5, 0).id()
}

#[test]
fn chain_lifetimes_unused_output_and_constant() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = i8_tensor(&mut b, g, "x", &[1, 16]); // t0
    let c = b
        .tensor(g, "c", &[1, 16], DType::I8)
        .quant(0.5, 0)
        .data_i8(&[1; 16])
        .id(); // t1
    let a = i8_tensor(&mut b, g, "a", &[1, 16]); // t2
    let bb = i8_tensor(&mut b, g, "b", &[1, 16]); // t3
    let u = i8_tensor(&mut b, g, "unused", &[1, 16]); // t4
    let y = i8_tensor(&mut b, g, "y", &[1, 16]); // t5
    b.op(g, BuiltinOp::ADD, &[x, c], &[a]);
    b.op(g, BuiltinOp::ADD, &[a, a], &[bb, u]);
    b.op(g, BuiltinOp::ADD, &[bb, bb], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let an = analyze_bytes(&b.build().unwrap());

    // §2.2: inputs at scope 0, op i at scope i+1, outputs end at N = 3.
    // x [0,1]; a [1,2]; b [2,3]; the unused output u [2,2]; y [3,3];
    // the constant c is never planned.
    let expected: BTreeMap<_, _> = [
        ((0, 0), (0, 1)),
        ((0, 2), (1, 2)),
        ((0, 3), (2, 3)),
        ((0, 4), (2, 2)),
        ((0, 5), (3, 3)),
    ]
    .into();
    assert_eq!(lifetimes(&an), expected);
    assert_eq!(an.max_scope, 3);

    // §3.2, all sizes 16, order by higher id first: y, u, b, a, x.
    // y@0; u [2,2] misses y [3,3] ⇒ @0; b [2,3] meets y and u (both at 0..16) ⇒ @16;
    // a [1,2] meets u@0 and b@16 ⇒ after b ⇒ @32; x [0,1] meets only a@32 ⇒ gap 0..32 ⇒ @0.
    let p = planned(&an);
    let offsets: Vec<i64> = [(0, 5), (0, 4), (0, 3), (0, 2), (0, 0)]
        .iter()
        .map(|k| p[k].2)
        .collect();
    assert_eq!(offsets, [0, 0, 16, 32, 0]);
    assert_eq!(an.head_bytes, 48);
    // Scope 2: a, b and u live ⇒ 3·16 = 48.
    assert_eq!(an.lower_bound_bytes, 48);
    assert_valid(&an);
}

/// t0 x [1,16] (input), t1 v [1,32] variable, t2 y [1,16] = ADD(x, v) (output).
fn variable_model(plan: Option<&[i32]>) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = i8_tensor(&mut b, g, "x", &[1, 16]);
    let v = b
        .tensor(g, "v", &[1, 32], DType::I8)
        .quant(0.5, 0)
        .variable()
        .id();
    let y = i8_tensor(&mut b, g, "y", &[1, 16]);
    b.op(g, BuiltinOp::ADD, &[x, v], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    if let Some(p) = plan {
        b.offline_plan(p);
    }
    b.build().unwrap()
}

#[test]
fn variable_goes_to_the_tail_unless_the_offline_plan_places_it() {
    let online = analyze_bytes(&variable_model(None));
    // §2.1/§4.1 item 14: a variable without offline offset is not planned; it is a
    // 16-aligned tail allocation of its 32 bytes in "TfLiteTensor variable buffer data".
    assert!(!planned(&online).contains_key(&(0, 1)));
    let vars: Vec<_> = online
        .tail
        .allocs
        .iter()
        .filter(|a| a.category == Category::VariableBuffers)
        .collect();
    assert_eq!(vars.len(), 1);
    assert_eq!(vars[0].category.name(), "TfLiteTensor variable buffer data");
    assert_eq!(
        vars[0].owner,
        Owner::Tensor {
            subgraph: 0,
            tensor: 1
        }
    );
    assert_eq!((vars[0].requested, vars[0].used), (32, 32));
    // x [0,1] and y [1,1], 16 each, overlap ⇒ 32.
    assert_eq!(online.head_bytes, 32);

    let offline = analyze_bytes(&variable_model(Some(&[-1, 64, -1])));
    // §2.1: a variable with an offset ≠ −1 needs allocating, at its offset; never produced
    // ⇒ first stays −1, last = its consumer's scope 1.
    let p = planned(&offline);
    assert_eq!(p[&(0, 1)], (-1, 1, 64, 32));
    assert!(
        offline
            .tail
            .allocs
            .iter()
            .all(|a| a.category != Category::VariableBuffers)
    );
    // The tail loses exactly the 32 variable bytes.
    assert_eq!(offline.tail_bytes, online.tail_bytes - 32);
    // §3.2: v@64 first (fixed). Online y [1,1] (higher id first) meets v: gap 0..64 ⇒ @0;
    // x [0,1] meets y@0 and v@64: after y, candidate 16, gap 64−16 ≥ 16 ⇒ @16.
    // Head = max(64+32, 16, 32) = 96.
    assert_eq!((p[&(0, 2)].2, p[&(0, 0)].2), (0, 16));
    assert_eq!(offline.head_bytes, 96);
    assert!(offline.diagnostics.iter().any(|d| {
        d.message
            .contains("1 buffers are placed by the model's OfflineMemoryAllocation plan")
    }));
    assert_valid(&offline);
}

/// t0 x [1,16] (input), t1 y [1,n] = ADD(x,x), t2 z [1,16] = ADD(y,y) (output).
fn offline_chain(y_len: i32, plan: &[i32]) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = i8_tensor(&mut b, g, "x", &[1, 16]);
    let y = i8_tensor(&mut b, g, "y", &[1, y_len]);
    let z = i8_tensor(&mut b, g, "z", &[1, 16]);
    b.op(g, BuiltinOp::ADD, &[x, x], &[y]);
    b.op(g, BuiltinOp::ADD, &[y, y], &[z]);
    b.inputs(g, &[x]).outputs(g, &[z]);
    b.offline_plan(plan);
    b.build().unwrap()
}

#[test]
fn unaligned_offline_offset_is_used_verbatim() {
    let a = analyze_bytes(&offline_chain(16, &[100, -1, 0]));
    // §2.3/§1.4: offline offsets are used verbatim. Lifetimes x [0,1], y [1,2], z [2,2].
    // Fixed first: x@100, z@0. y (16) meets both; list z@0, x@100: after z candidate 16,
    // gap 100−16 = 84 ≥ 16 ⇒ y@16. Head = max(100+16, 16+16, 0+16) = 116 (oracle: 116).
    let p = planned(&a);
    assert_eq!((p[&(0, 0)].2, p[&(0, 1)].2, p[&(0, 2)].2), (100, 16, 0));
    assert_eq!(a.head_bytes, 116);
    assert_valid(&a);
}

#[test]
fn online_buffer_after_an_unaligned_offline_buffer() {
    // Same chain, y is 96 bytes: the gap 16..100 (84 bytes) is too small, so the walk
    // continues past x: candidate = max(16, 100+16) = 116 — TFLM's arithmetic puts an
    // online buffer at an unaligned offset here. Head = 116 + 96 = 212.
    let a = analyze_bytes(&offline_chain(96, &[100, -1, 0]));
    let p = planned(&a);
    assert_eq!((p[&(0, 0)].2, p[&(0, 1)].2, p[&(0, 2)].2), (100, 116, 0));
    assert_eq!(a.head_bytes, 212);
    assert_valid(&a);
}

#[test]
fn offline_plan_with_wrong_count_is_an_error_and_planned_online() {
    let a = analyze_bytes(&offline_chain(16, &[0, -1]));
    let errs = errors(&a);
    assert!(
        errs.iter()
            .any(|e| e.contains("the offline plan has 2 offsets but the model has 3 tensors")),
        "{errs:?}"
    );
    assert!(a.plan_input.iter().all(|b| b.fixed_offset.is_none()));
    // Online: x [0,1], y [1,2], z [2,2], 16 each; order z, y, x: z@0, y meets z ⇒ @16,
    // x meets y only ⇒ @0. Head 32.
    let p = planned(&a);
    assert_eq!((p[&(0, 0)].2, p[&(0, 1)].2, p[&(0, 2)].2), (0, 16, 0));
    assert_eq!(a.head_bytes, 32);
}

#[test]
fn if_subgraphs_nest_inside_the_caller() {
    let mut b = ModelBuilder::new();
    let g0 = b.subgraph();
    let g1 = b.subgraph();
    let g2 = b.subgraph();
    let x = i8_tensor(&mut b, g0, "x", &[1, 16]); // (0,0)
    let c = b.tensor(g0, "cond", &[1], DType::Bool).id(); // (0,1)
    let a = i8_tensor(&mut b, g0, "a", &[1, 16]); // (0,2)
    let r = i8_tensor(&mut b, g0, "if_out", &[1, 16]); // (0,3)
    let y = i8_tensor(&mut b, g0, "y", &[1, 16]); // (0,4)
    b.op(g0, BuiltinOp::ADD, &[x, x], &[a]);
    b.op(g0, BuiltinOp::IF, &[c, a], &[r]).if_options(g1, g2);
    b.op(g0, BuiltinOp::ADD, &[r, r], &[y]);
    b.inputs(g0, &[x, c]).outputs(g0, &[y]);
    // then: p → q → t
    let p = i8_tensor(&mut b, g1, "p", &[1, 16]);
    let q = i8_tensor(&mut b, g1, "q", &[1, 16]);
    let t = i8_tensor(&mut b, g1, "t", &[1, 16]);
    b.op(g1, BuiltinOp::ADD, &[p, p], &[q]);
    b.op(g1, BuiltinOp::ADD, &[q, q], &[t]);
    b.inputs(g1, &[p]).outputs(g1, &[t]);
    // else: p2 → t2
    let p2 = i8_tensor(&mut b, g2, "p2", &[1, 16]);
    let t2 = i8_tensor(&mut b, g2, "t2", &[1, 16]);
    b.op(g2, BuiltinOp::ADD, &[p2, p2], &[t2]);
    b.inputs(g2, &[p2]).outputs(g2, &[t2]);
    let an = analyze_bytes(&b.build().unwrap());

    // §2.2 walk: s=0 inputs x, c. op0 s=1: a first 1, x last 1, a last 1.
    // op1 (IF) s=2: r first 2; then: s=3, p [3,3]; op s=4 q first 4, p last 4;
    // op s=5 t first 5, q last 5; output t last 5. else: s=6, p2 [6,6]; op s=7 t2 [7,7].
    // Back in op1: c, a last 7; r last 7. op2 s=8: y first 8; r last 8. Output y [8,8].
    let expected: BTreeMap<_, _> = [
        ((0, 0), (0, 1)),
        ((0, 1), (0, 7)),
        ((0, 2), (1, 7)),
        ((0, 3), (2, 8)),
        ((0, 4), (8, 8)),
        ((1, 0), (3, 4)),
        ((1, 1), (4, 5)),
        ((1, 2), (5, 5)),
        ((2, 0), (6, 7)),
        ((2, 1), (7, 7)),
    ]
    .into();
    assert_eq!(lifetimes(&an), expected);
    assert_eq!(an.max_scope, 8);
    // The then-body intermediate q [4,5] lies inside the IF window [2,7] and is live
    // together with the caller's a and r, so it must not share their bytes.
    assert_valid(&an);
}

#[test]
fn while_subgraphs_nest_inside_the_caller() {
    let mut b = ModelBuilder::new();
    let g0 = b.subgraph();
    let g1 = b.subgraph();
    let g2 = b.subgraph();
    let x = i8_tensor(&mut b, g0, "x", &[1, 64]);
    let y = i8_tensor(&mut b, g0, "y", &[1, 64]);
    b.op(g0, BuiltinOp::WHILE, &[x], &[y]).while_options(g1, g2);
    b.inputs(g0, &[x]).outputs(g0, &[y]);
    // cond: ci → cb
    let ci = i8_tensor(&mut b, g1, "ci", &[1, 64]);
    let cb = b.tensor(g1, "cb", &[1], DType::Bool).id();
    b.op(g1, BuiltinOp::ADD, &[ci, ci], &[cb]);
    b.inputs(g1, &[ci]).outputs(g1, &[cb]);
    // body: bi → bt → bo
    let bi = i8_tensor(&mut b, g2, "bi", &[1, 64]);
    let bt = i8_tensor(&mut b, g2, "bt", &[1, 64]);
    let bo = i8_tensor(&mut b, g2, "bo", &[1, 64]);
    b.op(g2, BuiltinOp::ADD, &[bi, bi], &[bt]);
    b.op(g2, BuiltinOp::ADD, &[bt, bt], &[bo]);
    b.inputs(g2, &[bi]).outputs(g2, &[bo]);
    let an = analyze_bytes(&b.build().unwrap());

    // s=0: x. op0 (WHILE) s=1: y first 1. cond: s=2, ci [2,2]; op s=3: cb [3,3], ci last 3.
    // body: s=4, bi [4,4]; op s=5: bt first 5, bi last 5; op s=6: bo [6,6], bt last 6.
    // Back: x last 6, y last 6; graph output y last 6.
    let expected: BTreeMap<_, _> = [
        ((0, 0), (0, 6)),
        ((0, 1), (1, 6)),
        ((1, 0), (2, 3)),
        ((1, 1), (3, 3)),
        ((2, 0), (4, 5)),
        ((2, 1), (5, 6)),
        ((2, 2), (6, 6)),
    ]
    .into();
    assert_eq!(lifetimes(&an), expected);
    assert_eq!(an.max_scope, 6);
    // The body intermediate bt lives while the caller's x and y are live.
    let p = planned(&an);
    let (bt_off, x_off, y_off) = (p[&(2, 1)].2, p[&(0, 0)].2, p[&(0, 1)].2);
    for other in [x_off, y_off] {
        assert!(
            bt_off + 64 <= other || other + 64 <= bt_off,
            "bt@{bt_off} overlaps a caller tensor @{other}"
        );
    }
    // Scopes 5 and 6: x, y, bt and (bi or bo) live ⇒ 4·64 = 256.
    assert_eq!(an.lower_bound_bytes, 256);
    assert_valid(&an);
}

#[test]
fn call_once_and_var_handle_outputs_are_not_planned() {
    let mut b = ModelBuilder::new();
    let g0 = b.subgraph();
    let g1 = b.subgraph();
    let x = b.tensor(g0, "x", &[1, 4], DType::F32).id(); // (0,0)
    let h = b.tensor(g0, "h", &[], DType::Resource).id(); // (0,1)
    let v = b.tensor(g0, "v", &[1, 4], DType::F32).id(); // (0,2)
    let y = b.tensor(g0, "y", &[1, 4], DType::F32).id(); // (0,3)
    b.op(g0, BuiltinOp::CALL_ONCE, &[], &[])
        .call_once_options(g1);
    b.op(g0, BuiltinOp::VAR_HANDLE, &[], &[h])
        .var_handle_options("", "state");
    b.op(g0, BuiltinOp::READ_VARIABLE, &[h], &[v]);
    b.op(g0, BuiltinOp::ADD, &[x, v], &[y]);
    b.inputs(g0, &[x]).outputs(g0, &[y]);
    let h1 = b.tensor(g1, "h1", &[], DType::Resource).id();
    let init = b
        .tensor(g1, "init", &[1, 4], DType::F32)
        .data_f32(&[0.0; 4])
        .id();
    b.op(g1, BuiltinOp::VAR_HANDLE, &[], &[h1])
        .var_handle_options("", "state");
    b.op(g1, BuiltinOp::ASSIGN_VARIABLE, &[h1, init], &[]);
    let an = analyze_bytes(&b.build().unwrap());

    // Walk: s=0 x. op0 (CALL_ONCE) s=1; init: s=2, VAR_HANDLE s=3, ASSIGN s=4.
    // op1 VAR_HANDLE s=5; op2 READ s=6: v first 6; op3 ADD s=7: x, v last 7, y [7,7].
    // h and h1 (VAR_HANDLE outputs, data set in Prepare) and the constant are not planned.
    let expected: BTreeMap<_, _> = [((0, 0), (0, 7)), ((0, 2), (6, 7)), ((0, 3), (7, 7))].into();
    assert_eq!(lifetimes(&an), expected);
    assert_eq!(an.max_scope, 7);
    // §4.1 item 4: one unique shared_name ⇒ MicroResourceVariables 16 B + 1 × 40 B entry.
    let interp: Vec<u64> = an
        .tail
        .allocs
        .iter()
        .filter(|a| a.category == Category::PersistentBufferData && a.owner == Owner::Interpreter)
        .map(|a| a.requested)
        .collect();
    assert_eq!(&interp[..2], &[16, 40]);
    // §4.4: the first ASSIGN_VARIABLE allocates the resource buffer, 4 floats = 16 B.
    assert!(an.tail.allocs.iter().any(|a| a.owner
        == Owner::Op {
            subgraph: 1,
            op_index: 1
        }
        && a.requested == 16));
    assert_valid(&an);
}

#[test]
fn a_subgraph_calling_itself_is_a_cycle() {
    let mut b = ModelBuilder::new();
    let g0 = b.subgraph();
    let g1 = b.subgraph();
    b.op(g0, BuiltinOp::CALL_ONCE, &[], &[])
        .call_once_options(g1);
    b.op(g1, BuiltinOp::CALL_ONCE, &[], &[])
        .call_once_options(g1);
    let bytes = b.build().unwrap();
    let m = Model::parse(&bytes).unwrap();
    let err = analyze(&m, &X86).unwrap_err();
    assert_eq!(
        err,
        AnalysisError::Lifetime(LifetimeError::SubgraphCycle { subgraph: 1 })
    );
}

/// Subgraph i runs IF(then = i+1, else = i+1); the last one has a single ADD. A walk
/// visits subgraph k 2^k times.
fn doubling_chain(levels: usize) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let gs: Vec<usize> = (0..=levels).map(|_| b.subgraph()).collect();
    for w in gs.windows(2) {
        b.op(w[0], BuiltinOp::IF, &[], &[]).if_options(w[1], w[1]);
    }
    let last = gs[levels];
    let t = i8_tensor(&mut b, last, "t", &[1, 16]);
    b.op(last, BuiltinOp::ADD, &[t, t], &[t]);
    b.build().unwrap()
}

#[test]
fn exponential_control_flow_is_refused_quickly() {
    for levels in [40, 100] {
        let bytes = doubling_chain(levels);
        let m = Model::parse(&bytes).unwrap();
        let start = Instant::now();
        let err = analyze(&m, &X86).unwrap_err();
        assert!(
            matches!(
                err,
                AnalysisError::Lifetime(
                    LifetimeError::TooDeep { .. } | LifetimeError::TooManyVisits { .. }
                )
            ),
            "{levels} levels: {err:?}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{levels} levels took {:?}",
            start.elapsed()
        );
    }
}

#[test]
fn hello_world_int8_reproduces_the_worked_arithmetic() {
    // 10 tensors: t0 input [1,1], t1..t6 weights/biases, t7, t8 FC outputs [1,16], t9 output [1,1].
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b
        .tensor(g, "input", &[1, 1], DType::I8)
        .quant(0.0245, -128)
        .id();
    let w1 = b
        .tensor(g, "w1", &[16, 1], DType::I8)
        .quant(0.0087, 0)
        .data_i8(&[3; 16])
        .id();
    let b1 = b
        .tensor(g, "b1", &[16], DType::I32)
        .quant(0.0002, 0)
        .data_i32(&[7; 16])
        .id();
    let w2 = b
        .tensor(g, "w2", &[16, 16], DType::I8)
        .quant(0.0112, 0)
        .data_i8(&[-5; 256])
        .id();
    let b2 = b
        .tensor(g, "b2", &[16], DType::I32)
        .quant(0.0003, 0)
        .data_i32(&[-9; 16])
        .id();
    let w3 = b
        .tensor(g, "w3", &[1, 16], DType::I8)
        .quant(0.0099, 0)
        .data_i8(&[11; 16])
        .id();
    let b3 = b
        .tensor(g, "b3", &[1], DType::I32)
        .quant(0.0004, 0)
        .data_i32(&[13])
        .id();
    let a1 = b
        .tensor(g, "a1", &[1, 16], DType::I8)
        .quant(0.0391, -128)
        .id();
    let a2 = b
        .tensor(g, "a2", &[1, 16], DType::I8)
        .quant(0.0201, -128)
        .id();
    let y = b
        .tensor(g, "output", &[1, 1], DType::I8)
        .quant(0.0083, -4)
        .id();
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, w1, b1], &[a1])
        .fc_options(Activation::Relu, false);
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[a1, w2, b2], &[a2])
        .fc_options(Activation::Relu, false);
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[a2, w3, b3], &[y])
        .fc_options(Activation::None, false);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let an = analyze_bytes(&b.build().unwrap());

    // §5.2 head: t0 1→16 [0,1]; t7 16 [1,2]; t8 16 [2,3]; t9 1→16 [3,3].
    // Order (all 16, higher id first): t9@0, t8 (meets t9) @16, t7 (meets t8 only) @0,
    // t0 (meets t7) @16 ⇒ 32.
    let expected: BTreeMap<_, _> = [
        ((0, 0), (0, 1, 16, 16)),
        ((0, 7), (1, 2, 0, 16)),
        ((0, 8), (2, 3, 16, 16)),
        ((0, 9), (3, 3, 0, 16)),
    ]
    .into();
    assert_eq!(planned(&an), expected);
    assert_eq!(an.head_bytes, 32);

    // §5.2 tail: 448 objects → 464 (+16) → 488 (+24) → 728 (10 × 24) → 920 (3 × 64)
    // → 1016 (3 × 32 FC builtin) → OpData 72 @16: 1088, 1168, 1248 → inputs: pointer
    // array 8 → 1264, TfLiteTensor 64 → 1328, quant 24 → 1352, zero points 8 → 1360
    // → outputs: 1376, 1440, 1464, 1472.
    assert_eq!(an.tail_bytes, 1472);
    assert_eq!(an.total_bytes, 1504);
    // Persistent buffer data: used 72+80+80+16+16 = 264, requested 3·72+8+8 = 232, 5 allocations.
    let pbd: Vec<_> = an
        .tail
        .allocs
        .iter()
        .filter(|a| a.category == Category::PersistentBufferData)
        .collect();
    assert_eq!(pbd.len(), 5);
    assert_eq!(pbd.iter().map(|a| a.used).sum::<u64>(), 264);
    assert_eq!(pbd.iter().map(|a| a.requested).sum::<u64>(), 232);
    // §5.4: tail before planning 1248; temp = request area 16·12 = 192 + subgraph
    // pointers 8 + AllocationInfo 10·32 = 320 ⇒ 520 → 528 (16-aligned) + planner
    // 4·40 = 160 ⇒ 1248 + 688 = 1936.
    assert_eq!(an.minimum_bytes, 1936);
    assert!(errors(&an).is_empty(), "{:?}", errors(&an));
}

#[test]
fn resize_builtin_data_shifts_the_next_opdata() {
    // RESIZE_NEAREST_NEIGHBOR keeps no OpData, but TFLM's parser still allocates its
    // two-bool builtin struct; those 2 B push the FC builtin to the next 8 and the FC
    // OpData to the next 16. Left out, the tail came out 16 B short with persistent
    // buffer data 8 B short at equal requested bytes and count.
    // The model: microarena_core::build::example::resize_then_fc (tensors listed there).
    let an = analyze_bytes(&microarena_core::build::example::resize_then_fc());

    // Measured with TFLM itself (tflite-micro wheel 0.dev20261023182759,
    // ../shared/oracle/tflm_figures.py on the same model, written by
    // `cargo run -p microarena-core --example tail_probe`, resize_fc.tflite):
    // head 96, tail 1040, persistent buffer data used 112 / requested 88 / 3.
    // By hand: 488 objects → 632 (6 × 24) → 760 (2 × 64) → resize builtin 2 @1 → 762
    // → FC builtin 32 @8 → 800 → FC OpData 72 @16 → 880 → input pointer array 8 @16
    // → 896, TfLiteTensor 64 → 960 → output pointer array → 976, TfLiteTensor → 1040.
    // Head: t2 48 [1,2] @0, t0 48 [0,1] @48, t5 16 [2,2] @48 ⇒ 96.
    assert_eq!(an.head_bytes, 96);
    assert_eq!(an.tail_bytes, 1040);
    let pbd: Vec<_> = an
        .tail
        .allocs
        .iter()
        .filter(|a| a.category == Category::PersistentBufferData)
        .collect();
    assert_eq!(pbd.len(), 3);
    assert_eq!(pbd.iter().map(|a| a.used).sum::<u64>(), 112);
    assert_eq!(pbd.iter().map(|a| a.requested).sum::<u64>(), 88);
    assert!(
        an.diagnostics
            .iter()
            .all(|d| !d.message.contains("not modelled")),
        "{:?}",
        an.diagnostics
    );
}

#[test]
fn arg_max_builtin_data_moves_the_conv_opdata_padding() {
    // ARG_MAX keeps no OpData; its parser allocates TfLiteArgMaxParams (one
    // TfLiteType, 4 B on LP64). The tail total is unchanged here, but the conv
    // OpData's padding shrinks by 4, which left out showed as persistent buffer
    // data used 188 instead of TFLM's 184 at equal requested bytes and count.
    // t0 x [1,2,2,3] f32, t1 w [5,1,1,3], t2 bias, t3 conv out [1,2,2,5], t4 axis, t5 y i32.
    let an = analyze_bytes(&example::conv_then(BuiltinOp::ARG_MAX));

    // Measured with TFLM itself (tflite-micro wheel 0.dev20261023182759,
    // ../shared/oracle/tflm_figures.py on conv_argmax.tflite from
    // `cargo run -p microarena-core --example tail_probe`): head 128, tail 1104,
    // persistent buffer data used 184 / requested 136 / 5.
    // By hand: 488 → 632 (6 × 24) → 760 (2 × 64) → conv builtin 28 → 788 → ARG_MAX
    // builtin 4 → 792 → conv OpData 80 @16 → 880 (used 88) → per-channel 20, 20 → 912,
    // 944 (32 each) → input pointers 8 → 960, TfLiteTensor → 1024 → output pointers
    // → 1040, TfLiteTensor → 1104.
    // Head: t3 80 [1,2] @0, t0 48 [0,1] @80, t5 16 [2,2] @80 ⇒ 128.
    assert_eq!(an.head_bytes, 128);
    assert_eq!(an.tail_bytes, 1104);
    let pbd: Vec<_> = an
        .tail
        .allocs
        .iter()
        .filter(|a| a.category == Category::PersistentBufferData)
        .collect();
    assert_eq!(pbd.len(), 5);
    assert_eq!(pbd.iter().map(|a| a.used).sum::<u64>(), 184);
    assert_eq!(pbd.iter().map(|a| a.requested).sum::<u64>(), 136);
}

#[test]
fn unknown_custom_op_is_an_error_naming_it() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = i8_tensor(&mut b, g, "x", &[1, 8]);
    let y = i8_tensor(&mut b, g, "y", &[1, 8]);
    b.custom_op(g, "AcmeFancyOp", &[x], &[y])
        .custom_options(&[0, 1, 2]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let an = analyze_bytes(&b.build().unwrap());
    let errs = errors(&an);
    assert!(errs.iter().any(|e| e.contains("'AcmeFancyOp'")), "{errs:?}");
}

#[test]
fn hybrid_conv_is_an_error() {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 4, 4, 1], DType::F32).id();
    let w = b
        .tensor(g, "w", &[2, 3, 3, 1], DType::I8)
        .quant_per_channel(&[0.1, 0.2], &[0, 0], 0)
        .data_i8(&[1; 18])
        .id();
    let bias = b
        .tensor(g, "b", &[2], DType::F32)
        .data_f32(&[0.0, 0.0])
        .id();
    let y = b.tensor(g, "y", &[1, 4, 4, 2], DType::F32).id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[y])
        .conv_options(Padding::Same, 1, 1, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let an = analyze_bytes(&b.build().unwrap());
    let errs = errors(&an);
    assert!(
        errs.iter()
            .any(|e| e.contains("CONV_2D") && e.contains("hybrid")),
        "{errs:?}"
    );
}

fn single_tensor(shape: &[i32]) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", shape, DType::I8).id();
    let y = i8_tensor(&mut b, g, "y", &[1, 4]);
    b.op(g, BuiltinOp::ADD, &[x, x], &[y]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().unwrap()
}

#[test]
fn absurd_dimensions_are_refused() {
    // 65536³ = 2^48 bytes > 2^31 − 1.
    let bytes = single_tensor(&[65536, 65536, 65536]);
    assert!(matches!(
        Model::parse(&bytes),
        Err(ReadError::TensorTooLarge {
            subgraph: 0,
            tensor: 0,
            ..
        })
    ));
}

#[test]
fn dimension_below_minus_one_is_refused() {
    let bytes = single_tensor(&[1, -2]);
    assert_eq!(
        Model::parse(&bytes),
        Err(ReadError::BadDimension {
            subgraph: 0,
            tensor: 0,
            dim: -2
        })
    );
}

#[test]
fn dynamic_dimension_is_an_error_diagnostic() {
    let an = analyze_bytes(&single_tensor(&[-1, 4]));
    let errs = errors(&an);
    assert!(
        errs.iter()
            .any(|e| e.contains("tensor 0 'x' has a dynamic shape [-1, 4]")),
        "{errs:?}"
    );
}

/// A 1×1 CONV_2D (3 → 6 channels, float) followed by SPLIT, SPLIT_V or SHAPE,
/// whose outputs are the graph outputs (the `conv_then` models of
/// `core/examples/tail_probe.rs`).
fn conv_then(op: BuiltinOp) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let x = b.tensor(g, "x", &[1, 2, 2, 3], DType::F32).id();
    let w = b
        .tensor(g, "w", &[6, 1, 1, 3], DType::F32)
        .data_f32(&[0.5; 18])
        .id();
    let bias = b.tensor(g, "b", &[6], DType::F32).data_f32(&[0.0; 6]).id();
    let c = b.tensor(g, "c", &[1, 2, 2, 6], DType::F32).id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[c])
        .conv_options(Padding::Valid, 1, 1, Activation::None);
    let outs = if op == BuiltinOp::SPLIT {
        let axis = b.tensor(g, "axis", &[], DType::I32).data_i32(&[3]).id();
        let y0 = b.tensor(g, "y0", &[1, 2, 2, 3], DType::F32).id();
        let y1 = b.tensor(g, "y1", &[1, 2, 2, 3], DType::F32).id();
        b.op(g, op, &[axis, c], &[y0, y1]);
        vec![y0, y1]
    } else if op == BuiltinOp::SPLIT_V {
        let sizes = b
            .tensor(g, "sizes", &[2], DType::I32)
            .data_i32(&[2, 4])
            .id();
        let axis = b.tensor(g, "axis", &[], DType::I32).data_i32(&[3]).id();
        let y0 = b.tensor(g, "y0", &[1, 2, 2, 2], DType::F32).id();
        let y1 = b.tensor(g, "y1", &[1, 2, 2, 4], DType::F32).id();
        b.op(g, op, &[c, sizes, axis], &[y0, y1]);
        vec![y0, y1]
    } else {
        let y = b.tensor(g, "shape", &[4], DType::I32).id();
        b.op(g, op, &[c], &[y]);
        vec![y]
    };
    b.inputs(g, &[x]).outputs(g, &outs);
    b.build().unwrap()
}

#[test]
fn split_and_shape_builtin_data_moves_the_conv_opdata_padding() {
    // Measured with TFLM itself (tflite-micro wheel 0.dev20261023182759,
    // ../shared/oracle/tflm_figures.py on conv_split / conv_split_v / conv_shape from
    // `cargo run -p microarena-core --example tail_probe`): (head, tail, persistent
    // buffer data used, requested, count). Without the 4 B builtin rows, used came
    // out 4 B larger at the same tail, requested and count.
    // By hand for SPLIT: 488 → 656 (7 × 24) → 784 (2 × 64) → conv builtin 28 → 812 →
    // SPLIT num_splits 4 → 816 → conv OpData 80 → 896 → per-channel 24, 24 → 928, 960
    // (32 each) → input pointers → 976, TfLiteTensor → 1040 → output pointers 16 →
    // 1056, two TfLiteTensors → 1184; used 80+32+32+16+16 = 176, requested
    // 80+24+24+8+16 = 152.
    for (op, head, tail, used, requested) in [
        (BuiltinOp::SPLIT, 192, 1184, 176, 152),
        (BuiltinOp::SPLIT_V, 192, 1216, 184, 152),
        (BuiltinOp::SHAPE, 144, 1072, 176, 144),
    ] {
        let an = analyze_bytes(&conv_then(op));
        assert_eq!((an.head_bytes, an.tail_bytes), (head, tail), "{op:?}");
        let pbd: Vec<_> = an
            .tail
            .allocs
            .iter()
            .filter(|a| a.category == Category::PersistentBufferData)
            .collect();
        assert_eq!(pbd.len(), 5, "{op:?}");
        assert_eq!(pbd.iter().map(|a| a.used).sum::<u64>(), used, "{op:?}");
        assert_eq!(
            pbd.iter().map(|a| a.requested).sum::<u64>(),
            requested,
            "{op:?}"
        );
    }
}
