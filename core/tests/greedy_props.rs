//! Property tests of the planners.
//!
//! `reference_greedy` below is an independent re-implementation of TFLM's
//! GreedyMemoryPlanner written from the specification (§3.2), in TFLM's own
//! shape: a sort array filled from the back and bubble-sorted, and a singly
//! linked list walked from its head. It calls no crate code.

use microarena_core::build::builder::ModelBuilder;
use microarena_core::plan::{self, PlanBuffer, PlanError, PlannerKind};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp};
use microarena_core::tflm::analysis::Analysis;
use microarena_core::{Config, Model, analyze, tflm::profile};
use proptest::prelude::*;

/// Offsets and planned size, as TFLM's GreedyMemoryPlanner computes them (spec §3.2).
fn reference_greedy(buffers: &[PlanBuffer]) -> (Vec<i64>, u64) {
    let n = buffers.len();
    let size = |i: usize| buffers[i].size as i64;

    // 1. Offline buffers first, in id order.
    let mut order: Vec<usize> = (0..n)
        .filter(|&i| buffers[i].fixed_offset.is_some())
        .collect();
    // Online ids are written into the sort array from the back (so reversed), then a
    // stable bubble sort by descending size swaps only on strictly smaller.
    let mut sorted: Vec<usize> = (0..n)
        .filter(|&i| buffers[i].fixed_offset.is_none())
        .rev()
        .collect();
    let mut swapped = true;
    while swapped {
        swapped = false;
        for j in 1..sorted.len() {
            if size(sorted[j - 1]) < size(sorted[j]) {
                sorted.swap(j - 1, j);
                swapped = true;
            }
        }
    }
    order.extend(sorted);

    // 2–3. An offset-sorted singly linked list of placed buffers.
    struct Entry {
        id: usize,
        offset: i64,
        next: Option<usize>,
    }
    let mut list: Vec<Entry> = Vec::new();
    let mut first_entry: Option<usize> = None;
    let mut offsets = vec![0i64; n];
    let live_together = |a: &PlanBuffer, b: &PlanBuffer| !(a.first > b.last || b.first > a.last);

    for &id in &order {
        let b = &buffers[id];
        let offset = match b.fixed_offset {
            Some(o) => o,
            None => {
                let mut candidate = 0i64;
                let mut prior: Option<usize> = None;
                loop {
                    // Next entry after `prior` (or from the head) that is live with b.
                    let mut cursor = match prior {
                        None => first_entry,
                        Some(p) => list[p].next,
                    };
                    while let Some(c) = cursor {
                        if live_together(&buffers[list[c].id], b) {
                            break;
                        }
                        cursor = list[c].next;
                    }
                    if let Some(p) = prior {
                        candidate = candidate.max(list[p].offset + size(list[p].id));
                    }
                    let Some(next) = cursor else { break };
                    if list[next].offset - candidate >= b.size as i64 {
                        break;
                    }
                    prior = Some(next);
                }
                candidate
            }
        };
        offsets[id] = offset;
        let new = list.len();
        list.push(Entry {
            id,
            offset,
            next: None,
        });
        match first_entry {
            None => first_entry = Some(new),
            Some(h) if list[h].offset > offset => {
                list[new].next = Some(h);
                first_entry = Some(new);
            }
            Some(h) => {
                // After every entry whose offset is <= ours.
                let mut cur = h;
                while let Some(nx) = list[cur].next {
                    if list[nx].offset > offset {
                        break;
                    }
                    cur = nx;
                }
                list[new].next = list[cur].next;
                list[cur].next = Some(new);
            }
        }
    }
    // 4. Planned size = max(offset + size); 0 for no buffers.
    let head = (0..n)
        .map(|i| offsets[i] + size(i))
        .max()
        .unwrap_or(0)
        .max(0) as u64;
    (offsets, head)
}

/// Two fixed buffers share bytes while both are live (TFLM does not check offline plans).
fn offline_buffers_overlap(buffers: &[PlanBuffer]) -> bool {
    let fixed: Vec<(&PlanBuffer, i64)> = buffers
        .iter()
        .filter_map(|b| b.fixed_offset.map(|o| (b, o)))
        .collect();
    fixed.iter().enumerate().any(|(i, (a, oa))| {
        fixed[i + 1..].iter().any(|(b, ob)| {
            let in_time = !(a.first > b.last || b.first > a.last);
            let in_space = *oa < ob + b.size as i64 && *ob < oa + a.size as i64;
            in_time && in_space
        })
    })
}

/// Sizes multiples of 16 up to 4 KiB (small ones often, so ties are common),
/// lifetimes within −1..40, and now and then a fixed offset (sometimes unaligned).
fn plan_buffer() -> impl Strategy<Value = PlanBuffer> {
    let size = prop_oneof![1u64..=3, 1u64..=256].prop_map(|k| k * 16);
    let fixed = prop_oneof![
        8 => Just(None),
        1 => (0i64..256).prop_map(|k| Some(k * 16)),
        1 => (0i64..4096).prop_map(Some),
    ];
    (size, -1i32..40, 0i32..40, fixed).prop_map(|(size, a, b, fixed_offset)| PlanBuffer {
        size,
        first: a.min(b),
        last: a.max(b),
        fixed_offset,
    })
}

/// 256 cases run in about a second; `PROPTEST_CASES=5000` overrides it for a soak.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 256,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn greedy_is_valid_matches_the_reference_and_respects_the_bound(
        buffers in prop::collection::vec(plan_buffer(), 0..48)
    ) {
        let plan = PlannerKind::TflmGreedy.plan(&buffers).unwrap();
        prop_assert_eq!(plan::validate(&buffers, &plan), Ok(()));
        let (offsets, head) = reference_greedy(&buffers);
        prop_assert_eq!(&plan.offsets, &offsets);
        prop_assert_eq!(plan.head_bytes, head);
        // The live-bytes bound holds when every two buffers live together are disjoint,
        // which the planner guarantees except for offline buffers TFLM lets overlap.
        if !offline_buffers_overlap(&buffers) {
            prop_assert!(plan.head_bytes >= plan::lower_bound(&buffers));
        }
    }

    #[test]
    fn linear_is_valid_and_refuses_fixed_offsets(
        buffers in prop::collection::vec(plan_buffer(), 0..48)
    ) {
        let online: Vec<PlanBuffer> =
            buffers.iter().map(|b| PlanBuffer { fixed_offset: None, ..*b }).collect();
        let plan = PlannerKind::Linear.plan(&online).unwrap();
        prop_assert_eq!(plan::validate(&online, &plan), Ok(()));
        // §3.3: offsets are prefix sums, the head is the sum of all sizes.
        prop_assert_eq!(plan.head_bytes, online.iter().map(|b| b.size).sum::<u64>());
        prop_assert!(plan.head_bytes >= plan::lower_bound(&online));
        if buffers.iter().any(|b| b.fixed_offset.is_some()) {
            prop_assert!(
                matches!(
                    PlannerKind::Linear.plan(&buffers),
                    Err(PlanError::FixedOffsetsUnsupported { .. })
                ),
                "linear accepted fixed offsets"
            );
        }
    }

    #[test]
    fn analyze_never_overlaps_buffers_of_random_graphs(graph in graph()) {
        let bytes = build_graph(&graph);
        let model = Model::parse(&bytes).unwrap();
        for planner in [PlannerKind::TflmGreedy, PlannerKind::Linear] {
            let a: Analysis =
                analyze(&model, &Config { profile: &profile::X86_64, planner }).unwrap();
            prop_assert_eq!(plan::validate(&a.plan_input, &a.plan), Ok(()));
            prop_assert!(a.head_bytes >= a.lower_bound_bytes);
            if planner == PlannerKind::TflmGreedy {
                let (offsets, head) = reference_greedy(&a.plan_input);
                prop_assert_eq!(&a.plan.offsets, &offsets);
                prop_assert_eq!(a.head_bytes, head);
            }
        }
    }
}

/// A random graph: input widths and dtypes, then ops that read earlier tensors.
#[derive(Debug, Clone)]
struct Graph {
    inputs: Vec<(i32, DType)>,
    ops: Vec<OpSpec>,
}

#[derive(Debug, Clone)]
struct OpSpec {
    fully_connected: bool,
    a: usize,
    b: usize,
    width: i32,
    also_output: bool,
}

fn dtype() -> impl Strategy<Value = DType> {
    prop_oneof![Just(DType::I8), Just(DType::I16), Just(DType::F32)]
}

fn width() -> impl Strategy<Value = i32> {
    prop_oneof![Just(1), Just(4), Just(16), Just(33), Just(100), 1i32..300]
}

fn graph() -> impl Strategy<Value = Graph> {
    let op = (
        any::<bool>(),
        any::<usize>(),
        any::<usize>(),
        width(),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(fully_connected, a, b, width, also_output)| OpSpec {
            fully_connected,
            a,
            b,
            width,
            also_output,
        });
    (
        prop::collection::vec((width(), dtype()), 1..4),
        prop::collection::vec(op, 1..24),
    )
        .prop_map(|(inputs, ops)| Graph { inputs, ops })
}

fn build_graph(graph: &Graph) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    // (tensor id, width, dtype) of every activation so far.
    let mut acts: Vec<(i32, i32, DType)> = Vec::new();
    for (i, &(w, dt)) in graph.inputs.iter().enumerate() {
        let t = b.tensor(g, &format!("in{i}"), &[1, w], dt).id();
        acts.push((t, w, dt));
    }
    let inputs: Vec<i32> = acts.iter().map(|a| a.0).collect();
    let mut outputs = Vec::new();
    for (i, op) in graph.ops.iter().enumerate() {
        let (x, xw, dt) = acts[op.a % acts.len()];
        let elem = dt.size_bytes().unwrap() as usize;
        let y = if op.fully_connected {
            // Weights in the input's type (no hybrid), int32/float bias.
            let w = b
                .tensor(g, &format!("w{i}"), &[op.width, xw], dt)
                .data(&vec![1u8; (op.width * xw) as usize * elem])
                .id();
            let bias_type = if dt == DType::F32 {
                DType::F32
            } else {
                DType::I32
            };
            let bias = b
                .tensor(g, &format!("b{i}"), &[op.width], bias_type)
                .data(&vec![0u8; op.width as usize * 4])
                .id();
            let y = b.tensor(g, &format!("y{i}"), &[1, op.width], dt).id();
            b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, w, bias], &[y])
                .fc_options(Activation::None, false);
            acts.push((y, op.width, dt));
            y
        } else {
            let (z, _, _) = acts[op.b % acts.len()];
            let y = b.tensor(g, &format!("y{i}"), &[1, xw], dt).id();
            b.op(g, BuiltinOp::ADD, &[x, z], &[y])
                .add_options(Activation::None);
            acts.push((y, xw, dt));
            y
        };
        if op.also_output {
            outputs.push(y);
        }
    }
    let last = acts.last().map(|a| a.0).unwrap();
    if !outputs.contains(&last) {
        outputs.push(last);
    }
    b.inputs(g, &inputs).outputs(g, &outputs);
    b.build().unwrap()
}

#[test]
fn reference_reproduces_the_spec_examples() {
    // §5.2 micro_speech_quantized: ids in planner order t2 4000 [2,3], t3 1968 [0,1],
    // t4 1968 [1,2], t6 16 [3,4], t9 16 [4,4] ⇒ t2@0, t4@4000, t3@0, t9@0, t6@4000; 5968.
    let pb = |size, first, last| PlanBuffer {
        size,
        first,
        last,
        fixed_offset: None,
    };
    let buffers = [
        pb(4000, 2, 3),
        pb(1968, 0, 1),
        pb(1968, 1, 2),
        pb(16, 3, 4),
        pb(16, 4, 4),
    ];
    assert_eq!(
        reference_greedy(&buffers),
        (vec![0, 0, 4000, 4000, 0], 5968)
    );
    assert_eq!(
        PlannerKind::TflmGreedy.plan(&buffers).unwrap().offsets,
        [0, 0, 4000, 4000, 0]
    );
    // §5.2 hello_world_int8: four 16-byte buffers [0,1], [1,2], [2,3], [3,3] ⇒ 16, 0, 16, 0; 32.
    let buffers = [pb(16, 0, 1), pb(16, 1, 2), pb(16, 2, 3), pb(16, 3, 3)];
    assert_eq!(reference_greedy(&buffers), (vec![16, 0, 16, 0], 32));
}
