//! The determinism probe natively: `scripts/test.sh` runs the same code on
//! wasm32 under node and both must give [`plan_hash::EXPECTED_HASH`].

#[path = "../../wasm-probe/src/lib.rs"]
#[allow(dead_code)]
mod plan_hash;

#[test]
fn native_plan_hash_is_the_pinned_one() {
    let h = plan_hash::plan_hash();
    assert_eq!(h, plan_hash::plan_hash(), "not even deterministic natively");
    assert_eq!(
        h,
        plan_hash::EXPECTED_HASH,
        "hash {h:#018x}: if a planner change is intended, update EXPECTED_HASH"
    );
}
