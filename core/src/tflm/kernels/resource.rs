//! Resource variables: VAR_HANDLE (`var_handle.cc`), READ_VARIABLE
//! (`read_variable.cc`) and ASSIGN_VARIABLE (`assign_variable.cc`). The
//! `MicroResourceVariables` object and its entries are the interpreter's
//! (`tflm::tail`); the variables' buffers are allocated here, by the first
//! ASSIGN_VARIABLE of each resource.

use super::{Ctx, Kernel, Prep, abi, kernel, st};
use crate::read::dtype::DType::{I32, Resource};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::Input;
use crate::tflm::registry::checks::{P, one_of};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        // TfLiteVarHandleParams: container and shared_name pointers.
        builtin: abi(st(16, 8), st(8, 4)),
        builtin_name: "TfLiteVarHandleParams",
        // OpData: the resource id.
        op_data: abi(Some(4), Some(4)),
        prepare: var_handle_prepare,
        // var_handle.cc checks counts and resources, not types.
        ..kernel(c::VAR_HANDLE, "var_handle.cc")
    },
    Kernel {
        // Holds the resource id; read_variable.cc only DCHECKs its type.
        prepare: id_only,
        ..kernel(c::READ_VARIABLE, "read_variable.cc")
    },
    Kernel {
        // OpData (a scratch index) only in compression builds.
        op_data: abi(Some(4), None),
        prepare: assign_prepare,
        checks: ASSIGN_VARIABLE,
        ..kernel(c::ASSIGN_VARIABLE, "assign_variable.cc")
    },
];

/// `VarHandlePrepare` points its output at the OpData's resource id, so the
/// output is never planned.
fn var_handle_prepare(_: &Ctx<'_>, p: &mut Prep) {
    p.sets_output_data();
}

fn id_only(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0));
}

/// `AssignVariablePrepare`: the value (the id is read as an eval tensor);
/// the first assignment of a resource allocates its buffer.
fn assign_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(1));
    if cx.first_assignment {
        p.persistent(cx.in_bytes(1), "resource variable buffer");
    }
}

/// `assign_variable.cc`: a resource or int32 id.
const ASSIGN_VARIABLE: &[Check] = &[one_of(Input(0), &[Resource, I32], P)];
