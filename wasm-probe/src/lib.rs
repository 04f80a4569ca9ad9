//! Determinism probe for the `best` planner, reorder search and optimizer:
//! the same fixed inputs must give the same plans on every host. Built as a
//! `cdylib` for wasm32-unknown-unknown and run under node by
//! `scripts/wasm-plan-hash.mjs`; `core/tests/wasm_determinism.rs` compiles this
//! same file natively. Both compare with [`EXPECTED_HASH`].
//!
//! Its own cargo workspace (like `firmware/`) so the wasm build does not pull
//! core's dev-dependencies (proptest's getrandom does not build for wasm32).

use microarena_core::plan::PlanBuffer;
use microarena_core::plan::best::{self, BestOptions};
use microarena_core::rewrite::optimize::{self, Options};
use microarena_core::tflm::profile::X86_64;

/// The hash every host must compute.
pub const EXPECTED_HASH: u64 = 0xb494_38ae_d410_c08f;

fn fnv(h: &mut u64, v: u64) {
    for b in v.to_le_bytes() {
        *h ^= u64::from(b);
        *h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// 200 buffers over 50 scopes from a fixed xorshift stream.
fn instance() -> Vec<PlanBuffer> {
    let mut s = 0x5eed_1234_u64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    (0..200)
        .map(|_| {
            let first = (next() % 50) as i32;
            let len = (next() % 8) as i32;
            PlanBuffer {
                size: (1 + next() % 64) * 16,
                first,
                last: first + len,
                fixed_offset: None,
            }
        })
        .collect()
}

/// Hash of the `best` plan of a fixed instance at a fixed budget, and of the
/// file `optimize --reorder` writes for a fixed model.
pub fn plan_hash() -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    let r = best::plan_with_options(
        &instance(),
        &BestOptions {
            budget_nodes: 20_000,
            ..BestOptions::default()
        },
    );
    fnv(&mut h, r.plan.head_bytes);
    fnv(&mut h, r.nodes_used);
    fnv(&mut h, u64::from(r.proven_optimal));
    for &o in &r.plan.offsets {
        fnv(&mut h, o as u64);
    }
    let mut opts = Options::new(&X86_64);
    opts.reorder = true;
    match optimize::optimize(&microarena_core::build::example::branchy_float(), &opts) {
        Ok(o) => {
            fnv(&mut h, o.head_bytes);
            for &b in &o.bytes {
                fnv(&mut h, u64::from(b));
            }
        }
        Err(_) => fnv(&mut h, u64::MAX),
    }
    h
}

/// Exported for the wasm host.
#[unsafe(no_mangle)]
pub extern "C" fn microarena_plan_hash() -> u64 {
    plan_hash()
}

/// Exported for the wasm host.
#[unsafe(no_mangle)]
pub extern "C" fn microarena_expected_hash() -> u64 {
    EXPECTED_HASH
}
