//! Properties of the optimizing `best` planner on random instances.

use microarena_core::plan::best::{self, BestOptions};
use microarena_core::plan::{self, PlanBuffer, PlannerKind, greedy, validate};
use proptest::prelude::*;

/// A random buffer list: sizes multiple of 16 (some 0), short lifetimes
/// (some reversed), and a few fixed buffers stacked so they never collide.
fn instance(max: usize, fixed: bool, reversed: bool) -> impl Strategy<Value = Vec<PlanBuffer>> {
    prop::collection::vec((0u64..=8, -1i32..10, 0i32..5, 0u8..12), 0..=max).prop_map(move |raw| {
        let mut fixed_end = 0i64;
        raw.into_iter()
            .map(|(units, first, len, kind)| {
                let size = units * 16;
                let (first, last) = if reversed && kind == 11 {
                    (first + len, first)
                } else {
                    (first, first + len)
                };
                let fixed_offset = (fixed && kind == 0).then(|| {
                    let o = fixed_end;
                    fixed_end += size as i64 + 32;
                    o
                });
                PlanBuffer {
                    size,
                    first,
                    last,
                    fixed_offset,
                }
            })
            .collect()
    })
}

/// The optimum by brute force: every order, each buffer at the lowest
/// 16-aligned offset clear of everything placed before it (fixed buffers
/// first). Placing an optimal plan's buffers by increasing offset this way
/// reproduces a plan at least as low, so the minimum over orders is optimal.
fn brute_force(buffers: &[PlanBuffer]) -> u64 {
    let online: Vec<usize> = (0..buffers.len())
        .filter(|&i| buffers[i].fixed_offset.is_none())
        .collect();
    let fixed_top = buffers
        .iter()
        .filter_map(|b| b.fixed_offset.map(|o| o + b.size as i64))
        .max()
        .unwrap_or(0)
        .max(0);
    let mut best = i64::MAX;
    let mut perm = online.clone();
    permute(buffers, &mut perm, 0, fixed_top, &mut best);
    best.max(0) as u64
}

fn permute(
    buffers: &[PlanBuffer],
    perm: &mut Vec<usize>,
    k: usize,
    fixed_top: i64,
    best: &mut i64,
) {
    if k == perm.len() {
        let mut off: Vec<Option<i64>> = buffers.iter().map(|b| b.fixed_offset).collect();
        let mut head = fixed_top;
        for &i in perm.iter() {
            let b = buffers[i];
            let mut o = 0i64;
            loop {
                let clash = (0..buffers.len()).find_map(|j| {
                    let oj = off[j]?;
                    let bj = buffers[j];
                    let hit = b.size > 0
                        && bj.size > 0
                        && bj.overlaps_in_time(&b)
                        && oj < o + b.size as i64
                        && o < oj + bj.size as i64;
                    hit.then_some(oj + bj.size as i64)
                });
                match clash {
                    Some(end) => o = (end.max(0) + 15) / 16 * 16,
                    None => break,
                }
            }
            off[i] = Some(o);
            head = head.max(o + b.size as i64);
        }
        *best = (*best).min(head);
        return;
    }
    for j in k..perm.len() {
        perm.swap(k, j);
        permute(buffers, perm, k + 1, fixed_top, best);
        perm.swap(k, j);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn valid_and_never_worse_than_greedy(buffers in instance(40, true, true)) {
        let r = best::plan_with_budget(&buffers, 5_000);
        prop_assert_eq!(validate(&buffers, &r.plan), Ok(()));
        prop_assert!(r.plan.head_bytes <= greedy::plan(&buffers).head_bytes);
        prop_assert!(r.nodes_used <= 5_000);
    }

    #[test]
    fn never_below_the_lower_bounds(buffers in instance(40, true, true)) {
        let r = best::plan_with_budget(&buffers, 5_000);
        prop_assert!(r.plan.head_bytes >= r.lower_bound);
        // The live-sum bound holds whenever fixed buffers cannot share bytes.
        prop_assert!(r.plan.head_bytes >= plan::lower_bound(&buffers));
        if r.proven_optimal {
            prop_assert!(r.lower_bound <= r.plan.head_bytes);
        }
    }

    #[test]
    fn tiny_instances_are_solved_optimally(buffers in instance(6, true, true)) {
        let r = best::plan_with_budget(&buffers, 1_000_000);
        let opt = brute_force(&buffers);
        prop_assert_eq!(validate(&buffers, &r.plan), Ok(()));
        if r.proven_optimal {
            prop_assert_eq!(r.plan.head_bytes, opt);
        }
        prop_assert!(r.plan.head_bytes >= opt);
        // Without reversed lifetimes the search is exact and tiny: it must finish.
        if buffers.iter().all(|b| b.first <= b.last) {
            prop_assert!(r.proven_optimal);
            prop_assert_eq!(r.plan.head_bytes, opt);
        }
    }

    #[test]
    fn deterministic(buffers in instance(60, true, true), budget in 0u64..3_000) {
        let a = best::plan_with_budget(&buffers, budget);
        let b = best::plan_with_budget(&buffers, budget);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn any_budget_is_valid_and_no_worse_than_greedy(buffers in instance(60, true, true)) {
        let tflm = greedy::plan(&buffers).head_bytes;
        let mut last = None;
        for budget in [0u64, 1, 10, 100, 1_000, 10_000] {
            let r = best::plan_with_budget(&buffers, budget);
            prop_assert_eq!(validate(&buffers, &r.plan), Ok(()));
            prop_assert!(r.plan.head_bytes <= tflm, "budget {} gave {} > greedy {}", budget, r.plan.head_bytes, tflm);
            prop_assert!(r.nodes_used <= budget);
            last = Some(r.plan.head_bytes);
        }
        prop_assert!(last.is_some());
    }

    #[test]
    fn alignment_one_with_raw_sizes(raw in prop::collection::vec((1u64..100, 0i32..8, 0i32..4), 0..=20)) {
        let buffers: Vec<PlanBuffer> = raw
            .into_iter()
            .map(|(size, first, len)| PlanBuffer { size, first, last: first + len, fixed_offset: None })
            .collect();
        let opts = BestOptions { budget_nodes: 5_000, alignment: 1, good_enough: None };
        let r = best::plan_with_options(&buffers, &opts);
        prop_assert!(r.plan.head_bytes >= plan::lower_bound(&buffers));
        let mut head = 0i64;
        for (i, a) in buffers.iter().enumerate() {
            let oa = r.plan.offsets[i];
            prop_assert!(oa >= 0);
            head = head.max(oa + a.size as i64);
            for (j, b) in buffers.iter().enumerate().skip(i + 1) {
                let ob = r.plan.offsets[j];
                let apart = oa + a.size as i64 <= ob || ob + b.size as i64 <= oa;
                prop_assert!(apart || !a.overlaps_in_time(b), "{} and {} collide", i, j);
            }
        }
        prop_assert_eq!(head as u64, r.plan.head_bytes);
    }
}

/// The same instance with every time replaced by its rank among the distinct
/// times: the conflicts are unchanged, only the lifetime widths shrink.
fn compress_to_ranks(buffers: &[PlanBuffer]) -> Vec<PlanBuffer> {
    let mut times: Vec<i32> = buffers.iter().flat_map(|b| [b.first, b.last]).collect();
    times.sort_unstable();
    times.dedup();
    let rank = |t: i32| times.partition_point(|&x| x < t) as i32;
    buffers
        .iter()
        .map(|b| PlanBuffer {
            first: rank(b.first),
            last: rank(b.last),
            ..*b
        })
        .collect()
}

/// Well-formed online buffers with widely spread times (widths up to 1,000).
fn spread_instance(max: usize) -> impl Strategy<Value = Vec<PlanBuffer>> {
    prop::collection::vec((1u64..=8, 0i32..2_000, 0i32..1_000), 1..=max).prop_map(|raw| {
        raw.into_iter()
            .map(|(units, first, len)| PlanBuffer::online(units * 16, first, first + len))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// The search must not depend on raw lifetime widths for correctness:
    /// raw and rank-compressed forms of one instance both give valid plans,
    /// and when both are proven optimal they have the same head (the optimum,
    /// checked by brute force on small instances).
    #[test]
    fn rank_compressed_instances_plan_alike(buffers in spread_instance(7)) {
        let ranked = compress_to_ranks(&buffers);
        let raw = best::plan_with_budget(&buffers, 200_000);
        let cmp = best::plan_with_budget(&ranked, 200_000);
        prop_assert_eq!(validate(&buffers, &raw.plan), Ok(()));
        prop_assert_eq!(validate(&ranked, &cmp.plan), Ok(()));
        // Same conflicts, so the compressed plan is valid for the raw times too.
        prop_assert_eq!(validate(&buffers, &cmp.plan), Ok(()));
        let opt = brute_force(&buffers);
        prop_assert!(raw.proven_optimal && cmp.proven_optimal);
        prop_assert_eq!(raw.plan.head_bytes, opt);
        prop_assert_eq!(cmp.plan.head_bytes, opt);
    }

    /// Larger rank-compressed instances: valid, never above greedy, and no
    /// lower than the live-sum bound.
    #[test]
    fn rank_compressed_larger_instances_validate(buffers in spread_instance(60)) {
        let ranked = compress_to_ranks(&buffers);
        let r = best::plan_with_budget(&ranked, 20_000);
        prop_assert_eq!(validate(&ranked, &r.plan), Ok(()));
        prop_assert_eq!(validate(&buffers, &r.plan), Ok(()));
        prop_assert!(r.plan.head_bytes <= greedy::plan(&ranked).head_bytes);
        prop_assert!(r.plan.head_bytes >= plan::lower_bound(&buffers));
    }

    /// A stop target (`good_enough`, the decision search with dynamic
    /// decomposition) still yields valid plans, at or below the target when
    /// the optimum is, on rank-compressed instances.
    #[test]
    fn rank_compressed_decision_search_is_sound(buffers in spread_instance(7)) {
        let ranked = compress_to_ranks(&buffers);
        let opt = brute_force(&ranked);
        for target in [opt, opt + 16] {
            let opts = BestOptions { budget_nodes: 200_000, good_enough: Some(target), ..BestOptions::default() };
            let r = best::plan_with_options(&ranked, &opts);
            prop_assert_eq!(validate(&ranked, &r.plan), Ok(()));
            prop_assert!(r.plan.head_bytes >= opt);
            prop_assert!(r.plan.head_bytes <= target, "target {} reachable, got {}", target, r.plan.head_bytes);
        }
    }
}

#[test]
fn best_is_a_planner_kind() {
    let kind = PlannerKind::by_name("best").expect("registered");
    assert!(PlannerKind::ALL.contains(&kind));
    let buffers = [
        PlanBuffer::online(64, 0, 1),
        PlanBuffer::online(32, 1, 2),
        PlanBuffer::online(48, 2, 3),
        PlanBuffer::online(0, 0, 3),
    ];
    let plan = kind.plan(&buffers).expect("plans");
    assert_eq!(validate(&buffers, &plan), Ok(()));
    assert_eq!(plan.head_bytes, 96);
    assert_eq!(plan.offsets[3], 0);
}

#[test]
fn beats_greedy_where_greedy_is_known_to_lose() {
    // Greedy places the two 48s first (largest), then the 32s cannot share.
    let buffers = [
        PlanBuffer::online(48, 0, 1),
        PlanBuffer::online(48, 2, 3),
        PlanBuffer::online(32, 0, 0),
        PlanBuffer::online(32, 1, 2),
        PlanBuffer::online(32, 3, 3),
    ];
    let r = best::plan_with_budget(&buffers, 100_000);
    assert!(r.proven_optimal);
    assert_eq!(r.plan.head_bytes, brute_force(&buffers));
    assert!(r.plan.head_bytes <= greedy::plan(&buffers).head_bytes);
}

#[test]
fn empty_and_fixed_only() {
    let r = best::plan_with_budget(&[], 10);
    assert_eq!(r.plan.head_bytes, 0);
    assert!(r.proven_optimal);
    let fixed = [PlanBuffer {
        size: 32,
        first: 0,
        last: 2,
        fixed_offset: Some(64),
    }];
    let r = best::plan_with_budget(&fixed, 10);
    assert_eq!(r.plan.offsets, vec![64]);
    assert_eq!(r.plan.head_bytes, 96);
    assert!(r.proven_optimal);
}

#[test]
fn huge_instances_fall_back_to_greedy() {
    // 3,000 buffers all alive together: 4.5M conflict pairs, over the search limit.
    let buffers: Vec<PlanBuffer> = (0..3_000)
        .map(|i| PlanBuffer::online(16 * (1 + i % 7), 0, 10))
        .collect();
    let r = best::plan_with_budget(&buffers, 1_000);
    assert_eq!(r.nodes_used, 0);
    assert_eq!(r.plan, greedy::plan(&buffers));
    assert!(r.proven_optimal, "stacking everything is optimal here");
}
