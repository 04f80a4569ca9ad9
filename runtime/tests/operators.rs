//! The operator table (`microarena_image::opcode::OPERATORS`) is the one
//! declaration of an operator; this test fails when an op is wired in one
//! place but not the others: the TFLite schema's name, a row in every TFLM
//! target profile and the runtime's kernel registry (`KERNELS`). Core's
//! lowering follows the table's `runtime` column through an exhaustive
//! match, so it cannot be missing.

use std::collections::BTreeSet;

use microarena_core::read::ops::BuiltinOp;
use microarena_core::tflm::kernels;
use microarena_image::opcode::{CUSTOM_OPERATORS, OPERATORS};

fn table(select: impl Fn(&microarena_image::opcode::Operator) -> bool) -> BTreeSet<i32> {
    OPERATORS
        .iter()
        .filter(|o| select(o))
        .map(|o| i32::from(o.code))
        .collect()
}

/// Builtins by their schema name, custom ops (image-only codes) by their
/// custom code.
fn names(codes: &BTreeSet<i32>) -> Vec<String> {
    codes
        .iter()
        .map(|&c| match microarena_image::opcode::custom_operator(c) {
            Some(op) => op.name.to_string(),
            None => BuiltinOp(c).name().to_string(),
        })
        .collect()
}

#[test]
fn names_agree_with_the_schema() {
    for o in OPERATORS {
        assert_eq!(
            BuiltinOp(i32::from(o.code)).name(),
            o.name,
            "the operator table names builtin {} differently from the TFLite schema",
            o.code
        );
    }
}

#[test]
fn every_tflm_op_has_a_kernel_row_and_no_other_op_has_one() {
    // A kernel row (core/src/tflm/kernels/) gives an op's figures on every
    // target: its builtin data and OpData per ABI, and its Prepare per backend.
    let modelled = table(|o| o.tflm);
    let rows: BTreeSet<i32> = kernels::rows()
        .filter_map(|k| match k.op {
            kernels::Op::Builtin(code) => Some(i32::from(code)),
            kernels::Op::Custom(_) => None,
        })
        .collect();
    let missing: BTreeSet<i32> = modelled.difference(&rows).copied().collect();
    let unmarked: BTreeSet<i32> = rows.difference(&modelled).copied().collect();
    assert!(
        missing.is_empty(),
        "no kernel row for {:?} (marked tflm in the operator table)",
        names(&missing)
    );
    assert!(
        unmarked.is_empty(),
        "kernel rows for {:?}, which the operator table does not mark tflm",
        names(&unmarked)
    );
}

#[test]
fn every_runtime_op_has_one_kernel_and_every_kernel_is_a_runtime_op() {
    let registered: Vec<i32> = microarena_runtime::registered_opcodes()
        .map(i32::from)
        .collect();
    let kernels: BTreeSet<i32> = registered.iter().copied().collect();
    assert_eq!(
        kernels.len(),
        registered.len(),
        "an opcode is registered twice"
    );
    let mut supported = table(|o| o.runtime.is_some());
    supported.extend(
        CUSTOM_OPERATORS
            .iter()
            .filter(|o| o.runtime.is_some())
            .map(|o| i32::from(o.code)),
    );
    assert_eq!(
        names(&supported),
        names(&kernels),
        "ops the operator table marks runtime (left) differ from the runtime's KERNELS (right)"
    );
}
