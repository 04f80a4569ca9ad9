//! Control flow (IF, WHILE, CALL_ONCE) and resource variables (VAR_HANDLE,
//! READ_VARIABLE, ASSIGN_VARIABLE), with TFLM's semantics (tflite-micro
//! `micro/kernels/if.cc`, `while.cc`, `call_once.cc`, `var_handle.cc`,
//! `read_variable.cc`, `assign_variable.cc`, `micro_resource_variable.cc`).
//!
//! The control-flow ops call subgraphs, which only the interpreter can run:
//! their Prepare here checks the op against the subgraphs it calls (counts,
//! byte sizes, where each copy lands) and the interpreter's
//! [`crate::interpreter`] runs them; their registry Eval is never reached.
//! IF copies inputs 1.. into the taken branch's inputs, runs it and copies
//! its outputs out; WHILE copies its inputs to its outputs and runs cond,
//! then body and cond again while cond's output 0 is true, copying through
//! its outputs; CALL_ONCE runs its subgraph on the first invoke only (its
//! flag survives `Interpreter::reset`, as TFLM's `has_run` does).
//!
//! A resource variable is a variable tensor: core resolves each VAR_HANDLE
//! to its resource (TFLM keys them by container and shared name) and
//! writes every handle tensor of one resource as a record of the same
//! bytes of the variable region, sized by the resource's first
//! ASSIGN_VARIABLE (TFLM allocates the buffer there). READ_VARIABLE copies
//! it out, ASSIGN_VARIABLE (output 0: the handle) copies its value in,
//! VAR_HANDLE does nothing.

use microarena_image::{self as rl, dtype, opcode};

use super::context::{Ctx, OpDataWriter, Prep, state_tensor};
use super::{Kernel, kernel, multi_output_kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::{SubgraphInfo, TensorInfo};

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    multi_output_kernel(opcode::IF, prepare_if, by_interpreter),
    multi_output_kernel(opcode::WHILE, prepare_while, by_interpreter),
    Kernel {
        state_inputs: &[0],
        ..kernel(opcode::CALL_ONCE, prepare_call_once, by_interpreter)
    },
    kernel(opcode::VAR_HANDLE, prepare_var_handle, nothing),
    Kernel {
        state_inputs: &[0],
        ..kernel(opcode::READ_VARIABLE, prepare_read, read)
    },
    Kernel {
        state_inputs: &[0],
        ..kernel(opcode::ASSIGN_VARIABLE, prepare_assign, assign)
    },
];

/// The subgraph `which` (0: first, 1: second) of a control-flow op.
pub(crate) fn called(p: &Prep<'_, '_>, which: usize) -> Result<SubgraphInfo, Error> {
    let s: rl::params::SubgraphParams = p.op.params();
    let g = if which == 0 { s.first } else { s.second };
    // `Image::parse` checked every call (`microarena_image::calls`).
    p.img
        .subgraph(usize::try_from(g).map_err(|_| p.err("subgraph index"))?)
}

/// A copy TFLM makes between an op's tensor and a subgraph's: the same
/// bytes, into a head tensor, from a head or constant tensor.
fn copyable(p: &Prep<'_, '_>, from: &TensorInfo, to: &TensorInfo) -> Result<(), Error> {
    p.need(
        from.bytes == to.bytes,
        "a tensor copied into or out of a subgraph differs in size from its counterpart",
    )?;
    let source = matches!(from.storage, rl::STORAGE_ARENA | rl::STORAGE_CONST);
    p.need(
        to.bytes == 0 || (to.storage == rl::STORAGE_ARENA && source),
        "a tensor copied into or out of a subgraph is not in the arena (or a constant source)",
    )
}

fn sub_tensor(
    p: &Prep<'_, '_>,
    sg: &SubgraphInfo,
    output: bool,
    k: usize,
) -> Result<TensorInfo, Error> {
    p.img.tensor(p.img.subgraph_tensor(sg, output, k)?)
}

/// The op's output `k`, whatever its storage (checked by [`copyable`]).
fn op_output(p: &Prep<'_, '_>, k: usize) -> Result<TensorInfo, Error> {
    let t = p.op.output_tensor(k).ok_or(p.err("missing output"))?;
    p.img.tensor(usize::from(t))
}

fn bool_scalar(t: &TensorInfo) -> bool {
    t.dtype == dtype::BOOL && t.elements() == 1
}

pub(crate) fn prepare_if(
    p: &Prep<'_, '_>,
    _out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs >= 1, "IF needs its condition")?;
    p.need(bool_scalar(&p.input(0)?), "IF's condition is one bool")?;
    for which in 0..2 {
        let sg = called(p, which)?;
        p.need(
            sg.n_inputs == p.op.n_inputs - 1 && sg.n_outputs == p.op.n_outputs,
            "IF's inputs (after the condition) and outputs differ in number from a branch's",
        )?;
        for k in 0..sg.n_inputs {
            copyable(p, &p.input(k + 1)?, &sub_tensor(p, &sg, false, k)?)?;
        }
        for k in 0..sg.n_outputs {
            copyable(p, &sub_tensor(p, &sg, true, k)?, &op_output(p, k)?)?;
        }
    }
    Ok(())
}

pub(crate) fn prepare_while(
    p: &Prep<'_, '_>,
    _out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let n = p.op.n_inputs;
    let (cond, body) = (called(p, 0)?, called(p, 1)?);
    p.need(
        n == p.op.n_outputs && cond.n_inputs == n && body.n_inputs == n && body.n_outputs == n,
        "WHILE's inputs, outputs, cond's inputs and body's inputs and outputs differ in number",
    )?;
    p.need(
        cond.n_outputs >= 1 && bool_scalar(&sub_tensor(p, &cond, true, 0)?),
        "WHILE's cond subgraph gives one bool first",
    )?;
    let c = sub_tensor(p, &cond, true, 0)?;
    p.need(
        matches!(c.storage, rl::STORAGE_ARENA | rl::STORAGE_CONST),
        "WHILE's condition is not in the arena",
    )?;
    for k in 0..n {
        let (input, output) = (p.input(k)?, op_output(p, k)?);
        copyable(p, &input, &output)?;
        copyable(p, &input, &sub_tensor(p, &cond, false, k)?)?;
        copyable(p, &output, &sub_tensor(p, &cond, false, k)?)?;
        copyable(p, &output, &sub_tensor(p, &body, false, k)?)?;
        copyable(p, &sub_tensor(p, &body, true, k)?, &output)?;
    }
    Ok(())
}

/// CALL_ONCE's flag: input 0 and output 0, 4 bytes of the variable region.
pub(crate) fn prepare_call_once(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let flag = p.input(0)?;
    p.check(
        p.op.n_inputs == 1
            && p.op.inputs.first() == Some(&p.op.output)
            && flag.storage == rl::STORAGE_VARIABLE
            && flag.bytes == 4
            && *out == flag,
        "CALL_ONCE's input 0 and output 0 are its 4-byte flag",
    )?;
    called(p, 0).map(|_| ())
}

pub(crate) fn prepare_var_handle(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 0, "VAR_HANDLE has no inputs")?;
    // An assigned resource's buffer, or (never assigned) nothing at all.
    p.check(
        out.storage == rl::STORAGE_VARIABLE || out.bytes == 0,
        "VAR_HANDLE's output is its resource's variable",
    )
}

fn resource(p: &Prep<'_, '_>) -> Result<TensorInfo, Error> {
    let r = p.input(0)?;
    p.need(
        r.storage == rl::STORAGE_VARIABLE,
        "the resource variable is never assigned (TFLM allocates it at its first ASSIGN_VARIABLE)",
    )?;
    Ok(r)
}

pub(crate) fn prepare_read(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 1, "READ_VARIABLE has one input")?;
    let r = resource(p)?;
    p.need(
        out.bytes == r.bytes,
        "READ_VARIABLE's output differs in size from the resource variable",
    )
}

pub(crate) fn prepare_assign(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "ASSIGN_VARIABLE has two inputs")?;
    let r = resource(p)?;
    p.check(
        p.op.inputs.first() == Some(&p.op.output) && *out == r,
        "ASSIGN_VARIABLE's output 0 is its resource",
    )?;
    let v = p.input(1)?;
    p.need(
        v.bytes == r.bytes,
        "ASSIGN_VARIABLE's value differs in size from the resource variable",
    )
}

/// Registry Eval of IF, WHILE and CALL_ONCE: the interpreter runs them.
fn by_interpreter(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    Err(c.fail()(
        "control flow runs in the interpreter (runtime bug)",
    ))
}

fn nothing(_: &mut Ctx<'_, '_>) -> Result<(), Error> {
    Ok(())
}

fn read(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, (lo, hi)) = state_tensor(c, 0, "READ_VARIABLE: no resource")?;
    let src = c
        .vars
        .get(lo..hi)
        .ok_or(c.fail()("resource outside the variable region"))?;
    let n = c.out.len().min(src.len());
    if let (Some(d), Some(s)) = (c.out.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
    Ok(())
}

fn assign(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, (lo, hi)) = state_tensor(c, 0, "ASSIGN_VARIABLE: no resource")?;
    let (_, value) = c.input(1);
    let fail = c.fail();
    let dst = c
        .vars
        .get_mut(lo..hi)
        .ok_or(fail("resource outside the variable region"))?;
    let n = dst.len().min(value.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), value.get(..n)) {
        d.copy_from_slice(s);
    }
    Ok(())
}
