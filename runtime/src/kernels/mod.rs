//! Kernels, bit-exact with TFLM's reference kernels, one file per operator
//! family, each holding that family's Prepare, Eval and registry entries
//! (its `KERNELS`); [`FAMILIES`] joins them into the one table that maps a
//! builtin code to its kernel.
//!
//! Prepare validates types and shapes, computes the OpData (requantization
//! multipliers, activation bounds) and writes it into the arena tail as
//! little-endian words; Eval reads it back. Tensor bytes are read with
//! `from_le_bytes` and `get` ([`bytes`]), so there is no `unsafe` and no panic
//! path: sizes are validated in Prepare, and an impossible out-of-range read
//! yields 0. (Except `dsp`: the int8 dot products in register-only `asm!` on
//! DSP Cortex-M cores; `dsp_check` lets the firmware test them on the device.)
//!
//! Adding an operator: its `prepare`, `eval` and `KERNELS` entry in its
//! family's file, and its row in the image crate's operator table, which
//! `tests/operators.rs` holds in step (ARCHITECTURE.md has the recipe). A new
//! family also adds its module and one [`FAMILIES`] line here.
//!
//! Shared plumbing the families import (never each other, except LSTM reusing
//! the float sigmoid of `activations`): [`context`] (what a kernel sees),
//! [`bytes`] (element accessors), [`broadcast`] (binary-op broadcasting), [`fused`] (activation bounds), [`window`]
//! (the CNN window check and walk), [`epilogue`] (the filter ops' OpData and
//! output step), and `crate::fixedpoint`.

mod activations;
mod binary;
mod broadcast;
mod bytes;
mod cmath;
mod compare;
mod context;
mod control;
mod conv;
mod depthwise;
#[cfg(microarena_dsp)]
mod dsp;
pub mod dsp_check;
mod elementwise;
mod epilogue;
mod fill;
mod float_math;
mod fully_connected;
mod fused;
mod lstm;
mod math;
mod matmul;
mod pooling;
mod quantize;
mod rearrange;
mod rectifiers;
mod reductions;
mod resolver;
mod shape;
mod signal;
mod softmax;
mod split;
mod svdf;
mod transpose_conv;
#[cfg(microarena_v6m)]
mod v6m;
mod window;

use microarena_image as rl;

use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};

use context::OpDataWriter;
pub(crate) use context::{Band, BandAt, Ctx, Prep, carve, sort_regions};
pub use resolver::Resolver;
pub(crate) use resolver::{BANDED_VARIANT, REDUCE_VARIANT, ROWS_VARIANT};

/// Prepare of one family: validates the op against its tensors, pushes its
/// OpData words and requests its scratch.
type PrepareFn =
    fn(&Prep<'_, '_>, &TensorInfo, &mut OpDataWriter<'_>, &mut ArenaAllocator) -> Result<(), Error>;

/// Eval of one family: runs the prepared op over the arena.
type EvalFn = fn(&mut Ctx<'_, '_>) -> Result<(), Error>;

/// How many (multiplier, shift) channels the op's OpData holds — the
/// `channels` of `microarena_image::op_tail_bytes`, which sizes its tail block.
type ChannelsFn = fn(&Prep<'_, '_>, &TensorInfo) -> Result<u32, Error>;

/// A type branch of a kernel with its own Eval, taken when output 0 has
/// element type `dtype`: a resolver links it only for an image that has such
/// an op (the kernel's `eval` never calls it, so the linker can drop it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Variant {
    /// Output 0's element type code (`microarena_image::dtype`).
    pub dtype: i8,
    /// What [`Error::KernelNotLinked`] names, e.g. "int16".
    pub name: &'static str,
    /// `None` in a resolver that leaves the branch out.
    pub eval: Option<EvalFn>,
}

/// Most type branches a kernel has on its own.
pub(crate) const MAX_VARIANTS: usize = 2;

/// One registered operator (public only so [`crate::resolver!`] can name
/// its type; nothing outside the crate reads or builds one).
#[derive(Clone, Copy, Debug)]
pub struct Kernel {
    /// Builtin code (`microarena_image::opcode`; its name and support flag
    /// live in the image crate's operator table).
    pub(crate) opcode: u8,
    pub(crate) prepare: PrepareFn,
    pub(crate) eval: EvalFn,
    pub(crate) channels: ChannelsFn,
    /// Inputs that are the op's own state and so may be variable tensors.
    pub(crate) state_inputs: &'static [usize],
    /// `true` when the kernel writes several outputs (and checks their
    /// count in its Prepare); every other kernel has exactly one.
    pub(crate) multi_output: bool,
    /// Type branches with their own Eval; `eval` runs every other type.
    pub(crate) variants: [Option<Variant>; MAX_VARIANTS],
}

/// A kernel's type branch: `eval` for outputs of `dtype`.
const fn variant(dtype: i8, name: &'static str, eval: EvalFn) -> Option<Variant> {
    Some(Variant {
        dtype,
        name,
        eval: Some(eval),
    })
}

fn one_channel(_: &Prep<'_, '_>, _: &TensorInfo) -> Result<u32, Error> {
    Ok(1)
}

/// A kernel without per-channel OpData or state.
const fn kernel(opcode: u8, prepare: PrepareFn, eval: EvalFn) -> Kernel {
    Kernel {
        opcode,
        prepare,
        eval,
        channels: one_channel,
        state_inputs: &[],
        multi_output: false,
        variants: [None; MAX_VARIANTS],
    }
}

/// A kernel with several outputs, without per-channel OpData or state.
const fn multi_output_kernel(opcode: u8, prepare: PrepareFn, eval: EvalFn) -> Kernel {
    Kernel {
        multi_output: true,
        ..kernel(opcode, prepare, eval)
    }
}

/// Every family's registry entries, in dispatch-table order. Each family
/// file declares its own operators, so adding one to a family touches only
/// that file (and the operator table in the image crate).
const FAMILIES: &[&[Kernel]] = &[
    conv::KERNELS,
    depthwise::KERNELS,
    transpose_conv::KERNELS,
    fully_connected::KERNELS,
    pooling::KERNELS,
    elementwise::KERNELS,
    binary::KERNELS,
    activations::KERNELS,
    rectifiers::KERNELS,
    math::KERNELS,
    softmax::KERNELS,
    quantize::KERNELS,
    shape::KERNELS,
    reductions::KERNELS,
    lstm::KERNELS,
    svdf::KERNELS,
    split::KERNELS,
    signal::KERNELS,
    matmul::KERNELS,
    compare::KERNELS,
    float_math::KERNELS,
    fill::KERNELS,
    rearrange::KERNELS,
    control::KERNELS,
];

/// The builtin codes the runtime has a kernel for, in registry order.
pub fn registered_opcodes() -> impl Iterator<Item = u8> {
    Resolver::ALL.opcodes()
}

/// Bytes of the op's OpData block in the tail: `microarena_image::op_tail_bytes`
/// with the kernel's channel count, shared by Prepare and Invoke.
fn opdata_bytes(kernel: &Kernel, p: &Prep<'_, '_>, out: &TensorInfo) -> Result<usize, Error> {
    let channels = (kernel.channels)(p, out)?;
    Ok(rl::op_tail_bytes(p.op.opcode, out.dtype, channels) as usize)
}

/// Where Invoke finds a prepared op's OpData: the size of its tail block.
pub(crate) fn prepared_opdata_bytes(
    kernels: &Resolver,
    img: &Image<'_>,
    index: u16,
    op: &OpInfo,
    out: &TensorInfo,
) -> Result<usize, Error> {
    let kernel = kernels.kernel_of(index, op)?;
    opdata_bytes(kernel, &Prep { img, op, index }, out)
}

/// Where [`prepare`] puts an op's OpData.
enum OpDataAt<'b> {
    /// The arena's tail (allocated by Prepare), or — when the image carries
    /// its OpData block — compared with the block from `at` on.
    Device {
        /// The arena.
        arena: &'b mut [u8],
        /// Offset of this op's words in the image's block.
        at: &'b mut usize,
    },
    /// The image's block being filled on the host ([`crate::freeze_opdata`]).
    Fill {
        /// The block.
        block: &'b mut [u8],
        /// Offset of this op's words in it.
        at: &'b mut usize,
    },
}

/// Prepares every op in order (see [`prepare`]): OpData into the arena's
/// tail or checked against the image's block, or, given `block`, filled
/// into it. Returns the OpData block bytes used.
pub(crate) fn prepare_all(
    kernels: &Resolver,
    img: &Image<'_>,
    alloc: &mut ArenaAllocator,
    arena: &mut [u8],
    mut block: Option<&mut [u8]>,
) -> Result<usize, Error> {
    let mut at = 0;
    // OpData bytes so far: where each subgraph's record says its ops' start.
    let mut total = 0usize;
    let mut next_subgraph = 0;
    for i in 0..img.op_count() {
        while let Ok(sg) = img.subgraph(next_subgraph) {
            if sg.first_op > i {
                break;
            }
            if sg.opdata_at != total {
                return Err(Error::Malformed {
                    what: "subgraph OpData offset differs from its ops' OpData",
                    index: next_subgraph as u32,
                });
            }
            next_subgraph += 1;
        }
        let op = img.op(i)?;
        let place = match block.as_deref_mut() {
            Some(block) => OpDataAt::Fill { block, at: &mut at },
            None => OpDataAt::Device {
                arena: &mut *arena,
                at: &mut at,
            },
        };
        total = total.saturating_add(prepare(kernels, img, i as u16, &op, alloc, place)?);
    }
    // Subgraphs without ops after the last op.
    while let Ok(sg) = img.subgraph(next_subgraph) {
        if sg.opdata_at != total {
            return Err(Error::Malformed {
                what: "subgraph OpData offset differs from its ops' OpData",
                index: next_subgraph as u32,
            });
        }
        next_subgraph += 1;
    }
    Ok(at)
}

/// Validates one operator, computes its OpData (into the tail, or checked
/// against or filled into the image's block) and claims its scratch. Called
/// in operator order, so the tail and block layouts are deterministic.
/// Returns the op's OpData bytes.
fn prepare(
    kernels: &Resolver,
    img: &Image<'_>,
    index: u16,
    op: &OpInfo,
    alloc: &mut ArenaAllocator,
    place: OpDataAt<'_>,
) -> Result<usize, Error> {
    let p = Prep { img, op, index };
    let code = op.opcode;
    let kernel = kernels.kernel_of(index, op)?;
    let out = p.output()?;
    if !kernel.multi_output {
        p.check(op.n_outputs == 1, "this operator has exactly one output")?;
    }
    for k in 1..op.n_outputs {
        let t = p.output_k(k)?;
        p.check(
            t.storage != rl::STORAGE_NONE || t.elements() == 0,
            "an output has no storage",
        )?;
        // Every output is written in the same Eval: no two may share bytes.
        for j in 0..k {
            let u = p.output_k(j)?;
            let disjoint = |a: &TensorInfo, b: &TensorInfo| {
                a.storage != rl::STORAGE_ARENA
                    || b.storage != rl::STORAGE_ARENA
                    || a.bytes == 0
                    || b.bytes == 0
                    || a.location.saturating_add(a.bytes) <= b.location
                    || b.location.saturating_add(b.bytes) <= a.location
            };
            p.check(disjoint(&t, &u), "two outputs overlap")?;
        }
    }
    if let Some(k) = op.in_place {
        check_in_place(kernels, &p, k, &out)?;
    }
    let want = opdata_bytes(kernel, &p, &out)?;
    let block_part = |block_len: usize, at: &mut usize| -> Result<core::ops::Range<usize>, Error> {
        let r = *at..at.saturating_add(want);
        if r.end > block_len {
            return Err(Error::Truncated {
                what: "OpData block",
            });
        }
        *at = r.end;
        Ok(r)
    };
    let mut words = match place {
        OpDataAt::Fill { block, at } => {
            let r = block_part(block.len(), at)?;
            OpDataWriter::new(block.get_mut(r).unwrap_or(&mut []))
        }
        OpDataAt::Device { at, .. } if img.opdata_in_flash() => {
            let frozen = img.opdata_block();
            let r = block_part(frozen.len(), at)?;
            OpDataWriter::compare(frozen.get(r).unwrap_or(&[]))
        }
        OpDataAt::Device { arena, .. } => {
            let start = if want > 0 {
                alloc.allocate_persistent(want, rl::TAIL_ALIGN as usize)?
            } else {
                0
            };
            let arena_len = arena.len();
            let dst = if want > 0 {
                arena
                    .get_mut(start..start + want)
                    .ok_or(Error::ArenaTooSmall {
                        needed: start + want,
                        available: arena_len,
                    })?
            } else {
                &mut []
            };
            OpDataWriter::new(dst)
        }
    };
    // Only ops that own state (LSTM, SVDF) may read a variable tensor.
    for k in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
        if let Some(t) = p.opt_input(k)?
            && t.storage == rl::STORAGE_VARIABLE
            && !kernel.state_inputs.contains(&k)
        {
            return Err(p.err("a variable tensor is an input of an op that does not own state"));
        }
    }
    // Operands the kernel reads as constant data: the operator table's rule,
    // which core's support check reads too.
    let (constant, why) = rl::opcode::constant_inputs(code);
    for &k in constant {
        if let Some(t) = p.opt_input(k)? {
            p.need(t.storage == rl::STORAGE_CONST, why)?;
        }
    }
    // A tensor without storage is never read or written, so only an empty
    // one may be an operator's input or output.
    for k in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
        if let Some(t) = p.opt_input(k)? {
            p.check(
                t.storage != rl::STORAGE_NONE || t.elements() == 0,
                "an input has no storage",
            )?;
        }
    }
    p.check(
        out.storage != rl::STORAGE_NONE || out.elements() == 0,
        "the output has no storage",
    )?;
    (kernel.prepare)(&p, &out, &mut words, alloc)?;
    if words.differs() {
        return Err(Error::OpDataMismatch {
            op_index: index,
            opcode: code,
        });
    }
    if words.len() * 4 != want {
        return Err(p.err("OpData size differs from microarena_image::op_tail_bytes (runtime bug)"));
    }
    Ok(want)
}

/// An op whose output 0 is input `k`'s bytes (`op::IN_PLACE`): the kernel
/// can overwrite that input (or the op is an alias, run as nothing), the two
/// records name one head region of the same size, the input has the
/// output's shape and element size (so element `i` of one is element `i` of
/// the other), and no other input of the op touches that region (so what
/// the kernel reads through its other operands is never what it writes).
fn check_in_place(
    kernels: &Resolver,
    p: &Prep<'_, '_>,
    k: usize,
    out: &TensorInfo,
) -> Result<(), Error> {
    let code = p.op.opcode;
    if rl::opcode::in_place_by_rows(code) && k == 0 {
        let rows = kernels.rows_in_place.ok_or(Error::KernelNotLinked {
            op_index: p.index,
            opcode: code,
            variant: resolver::ROWS_VARIANT,
        })?;
        return (rows.check)(p, out);
    }
    let arena = |t: &TensorInfo| t.storage == rl::STORAGE_ARENA;
    if rl::opcode::writes_behind_input(code) && k == 0 {
        // Output 0 over input 0 step by step: the output starts at the
        // input, whose region the kernel is handed as its output's
        // (`Run::op`), with steps no larger than the input's.
        let input = p.input(0)?;
        let steps = |t: &TensorInfo| t.elements() / t.last_dim().max(1);
        p.check(
            p.op.exec == rl::EXEC_WHOLE && p.op.n_outputs == 1,
            "an in-place op runs whole, with one output",
        )?;
        p.check(
            arena(&input)
                && arena(out)
                && input.location == out.location
                && rl::opcode::writes_behind_fits(
                    steps(&input),
                    steps(out),
                    input.bytes,
                    out.bytes,
                ),
            "an output over its input must start at it, with as many steps, none larger",
        )?;
        return check_apart(p, k, (input.location, input.bytes));
    }
    let alias = rl::opcode::is_alias_op(code) && k == 0;
    p.check(
        alias || rl::opcode::in_place_inputs(code).contains(&k),
        "in place over an input its kernel cannot overwrite",
    )?;
    p.check(
        p.op.exec == rl::EXEC_WHOLE && p.op.n_outputs == 1,
        "an in-place op runs whole, with one output",
    )?;
    let input = p.input(k)?;
    p.check(
        arena(&input) && arena(out) && input.location == out.location && input.bytes == out.bytes,
        "an in-place op's output is not its input's region",
    )?;
    p.check(
        rl::dtype_size(input.dtype) == rl::dtype_size(out.dtype)
            && (alias || input.shape() == out.shape()),
        "an in-place op's input differs from its output in shape or element size",
    )?;
    check_apart(p, k, (out.location, out.bytes))
}

/// No input of the op but `k` touches `region` (offset, bytes), the one an
/// in-place op writes: what the kernel reads through its other operands is
/// never what it writes.
fn check_apart(p: &Prep<'_, '_>, k: usize, (lo, bytes): (usize, usize)) -> Result<(), Error> {
    let arena = |t: &TensorInfo| t.storage == rl::STORAGE_ARENA;
    let hi = lo.saturating_add(bytes);
    for j in (0..p.op.n_inputs.min(rl::MAX_OP_INPUTS)).filter(|&j| j != k) {
        if let Some(t) = p.opt_input(j)? {
            let apart = !arena(&t)
                || t.bytes == 0
                || t.location.saturating_add(t.bytes) <= lo
                || hi <= t.location;
            p.check(apart, "another input of an in-place op shares its region")?;
        }
    }
    Ok(())
}

/// Row `rows.0` of `rows.1` of the input of op `op`, a banded stage's
/// reducer (`microarena_image::stage::reduces`): `band` and `x` the row,
/// `whole` the input's record; folded into `acc` (the op's scratch, zeroed
/// at row 0), and after the last row its output (`out`, record
/// `out_info`) written from it, equal to the whole kernel's.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_row(
    img: &Image<'_>,
    op: &OpInfo,
    (whole, band, x): (&TensorInfo, &TensorInfo, &[u8]),
    rows: (usize, usize),
    out_info: &TensorInfo,
    acc: &mut [u8],
    out: &mut [u8],
    opdata: &[u8],
) -> Result<(), Error> {
    match op.opcode {
        rl::opcode::AVERAGE_POOL_2D => {
            let act = (bytes::i32_at(opdata, 0), bytes::i32_at(opdata, 1));
            pooling::global_average_row(band, x, rows, acc, out, act);
        }
        rl::opcode::FULLY_CONNECTED => {
            let io = (acc, out);
            return fully_connected::reduce_row(img, op, (band, x), rows, out_info, io, opdata);
        }
        _ => {
            let mask = op.params::<rl::params::MeanParams>().axis_mask;
            if rows.0 == 0 {
                acc.fill(0);
            }
            reductions::fold_sums(band, x, mask, acc);
            if rows.0 + 1 == rows.1 {
                reductions::finish_sums(op.opcode, (whole, mask), out_info, acc, out);
            }
        }
    }
    Ok(())
}

/// Runs one prepared operator: one table lookup, then the family's loops
/// (a type branch's own, when the kernel has one for output 0's type).
pub(crate) fn eval(kernels: &Resolver, c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let kernel = kernels.kernel_of(c.index, &c.op)?;
    match kernel.variant_for(c.output_info().dtype) {
        Some(v) => match v.eval {
            Some(eval) => eval(c),
            // Refused at construction (`Resolver::check`): never reached.
            None => Err(Error::KernelNotLinked {
                op_index: c.index,
                opcode: c.op.opcode,
                variant: v.name,
            }),
        },
        None => (kernel.eval)(c),
    }
}

impl Kernel {
    /// The type branch that runs outputs of `dtype`, if the kernel has one.
    pub(crate) fn variant_for(&self, dtype: i8) -> Option<&Variant> {
        self.variants.iter().flatten().find(|v| v.dtype == dtype)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_matches_the_image_format() {
        for code in 0..=u8::MAX {
            let kernel = Resolver::ALL.get(code);
            assert_eq!(
                kernel.is_some(),
                rl::op_supported(i32::from(code)),
                "opcode {code}"
            );
            if let Some(k) = kernel {
                assert_eq!(k.opcode, code);
                assert_eq!(
                    k.multi_output,
                    rl::opcode::has_several_outputs(code),
                    "opcode {code}"
                );
            }
        }
        assert_eq!(
            registered_opcodes().count(),
            FAMILIES.iter().map(|f| f.len()).sum::<usize>()
        );
        // Resolver::ALL holds FAMILIES' entries in order.
        assert!(registered_opcodes().eq(FAMILIES.iter().flat_map(|f| f.iter().map(|k| k.opcode))));
    }
}
