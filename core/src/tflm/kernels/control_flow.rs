//! Control flow: IF (`if.cc`), WHILE (`while.cc`) and CALL_ONCE
//! (`call_once.cc`). None prepares its subgraphs: the interpreter prepares
//! every subgraph in order, whoever calls it.

use super::{Ctx, Kernel, Prep, both, kernel, nothing, st};
use crate::read::dtype::DType::Bool;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::Input;
use crate::tflm::registry::checks::{P, one_of};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        // TfLiteIfParams: then and else subgraph indices; OpData the same.
        builtin: both(st(8, 4)),
        builtin_name: "TfLiteIfParams",
        op_data: both(Some(8)),
        prepare: condition_only,
        checks: IF,
        ..kernel(c::IF, "if.cc")
    },
    Kernel {
        builtin: both(st(8, 4)),
        builtin_name: "TfLiteWhileParams",
        op_data: both(Some(8)),
        // while.cc checks counts and subgraphs, not types.
        prepare: nothing,
        ..kernel(c::WHILE, "while.cc")
    },
    Kernel {
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteCallOnceParams",
        // OpData: init_subgraph_index, has_run.
        op_data: both(Some(8)),
        // call_once.cc checks only counts and the subgraph index.
        prepare: nothing,
        ..kernel(c::CALL_ONCE, "call_once.cc")
    },
];

/// `IfPrepare` holds the condition only.
fn condition_only(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0));
}

/// `if.cc`: a bool condition.
const IF: &[Check] = &[one_of(Input(0), &[Bool], P)];
