//! Kernels, bit-exact with TFLM's reference kernels, one file per operator
//! family, each holding that family's Prepare and Eval; and [`KERNELS`], the
//! one table that maps a builtin code to them.
//!
//! Prepare validates types and shapes, computes the OpData (requantization
//! multipliers, activation bounds) and writes it into the arena tail as
//! little-endian words; Eval reads it back. Tensor bytes are read with
//! `from_le_bytes` and `get` ([`bytes`]), so there is no `unsafe` and no panic
//! path: sizes are validated in Prepare, and an impossible out-of-range read
//! yields 0.
//!
//! Adding an operator: a family file with its `prepare` and `eval`, and one
//! [`KERNELS`] entry (plus its row in the image crate's operator table, which
//! `tests/operators.rs` holds in step; ARCHITECTURE.md has the recipe).
//!
//! Shared plumbing the families import (never each other, except LSTM reusing
//! the float sigmoid of `activations`): [`context`] (what a kernel sees),
//! [`bytes`] (element accessors), [`fused`] (activation bounds), [`window`]
//! (the CNN window check and walk), [`epilogue`] (the filter ops' OpData and
//! output step), and `crate::fixedpoint`.

mod activations;
mod bytes;
mod context;
mod conv;
mod depthwise;
mod elementwise;
mod epilogue;
mod fully_connected;
mod fused;
mod lstm;
mod pooling;
mod quantize;
mod reductions;
mod shape;
mod softmax;
mod svdf;
mod window;

use microarena_image::{self as rl, opcode};

use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};

pub(crate) use context::{Ctx, carve};
use context::{OpDataWriter, Prep};

/// Prepare of one family: validates the op against its tensors, pushes its
/// OpData words and requests its scratch.
type PrepareFn =
    fn(&Prep<'_, '_>, &TensorInfo, &mut OpDataWriter<'_>, &mut ArenaAllocator) -> Result<(), Error>;

/// Eval of one family: runs the prepared op over the arena.
type EvalFn = fn(&mut Ctx<'_, '_>) -> Result<(), Error>;

/// How many (multiplier, shift) channels the op's OpData holds — the
/// `channels` of `microarena_image::op_tail_bytes`, which sizes its tail block.
type ChannelsFn = fn(&Prep<'_, '_>, &TensorInfo) -> Result<u32, Error>;

/// One registered operator.
pub(crate) struct Kernel {
    /// Builtin code (`microarena_image::opcode`; its name and support flag
    /// live in the image crate's operator table).
    pub opcode: u8,
    pub prepare: PrepareFn,
    pub eval: EvalFn,
    pub channels: ChannelsFn,
    /// Inputs that are the op's own state and so may be variable tensors.
    pub state_inputs: &'static [usize],
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
    }
}

/// Every operator the runtime executes.
pub(crate) const KERNELS: &[Kernel] = &[
    Kernel {
        channels: epilogue::output_channels,
        ..kernel(opcode::CONV_2D, conv::prepare, conv::eval)
    },
    Kernel {
        channels: epilogue::output_channels,
        ..kernel(
            opcode::DEPTHWISE_CONV_2D,
            depthwise::prepare,
            depthwise::eval,
        )
    },
    Kernel {
        channels: fully_connected::filter_channels,
        ..kernel(
            opcode::FULLY_CONNECTED,
            fully_connected::prepare,
            fully_connected::eval,
        )
    },
    kernel(opcode::AVERAGE_POOL_2D, pooling::prepare, pooling::eval),
    kernel(opcode::MAX_POOL_2D, pooling::prepare, pooling::eval),
    kernel(opcode::ADD, elementwise::prepare, elementwise::eval),
    kernel(opcode::MUL, elementwise::prepare, elementwise::eval),
    kernel(opcode::LOGISTIC, activations::prepare, activations::eval),
    kernel(opcode::TANH, activations::prepare, activations::eval),
    kernel(opcode::SOFTMAX, softmax::prepare, softmax::eval),
    kernel(
        opcode::QUANTIZE,
        quantize::prepare_quantize,
        quantize::quantize,
    ),
    kernel(
        opcode::DEQUANTIZE,
        quantize::prepare_dequantize,
        quantize::dequantize,
    ),
    kernel(opcode::RESHAPE, shape::prepare_reshape, shape::reshape),
    kernel(opcode::PAD, shape::prepare_pad, shape::pad),
    kernel(
        opcode::TRANSPOSE,
        shape::prepare_transpose,
        shape::transpose,
    ),
    kernel(
        opcode::CONCATENATION,
        shape::prepare_concatenation,
        shape::concatenation,
    ),
    kernel(
        opcode::STRIDED_SLICE,
        shape::prepare_strided_slice,
        shape::strided_slice,
    ),
    kernel(opcode::MEAN, reductions::prepare, reductions::eval),
    Kernel {
        // Hidden state and cell state.
        state_inputs: &[18, 19],
        ..kernel(
            opcode::UNIDIRECTIONAL_SEQUENCE_LSTM,
            lstm::prepare,
            lstm::eval,
        )
    },
    Kernel {
        // Activation state.
        state_inputs: &[4],
        ..kernel(opcode::SVDF, svdf::prepare, svdf::eval)
    },
];

/// No kernel for this opcode in [`BY_OPCODE`].
const UNREGISTERED: u8 = u8::MAX;

/// [`KERNELS`]' index for every builtin code, built at compile time so
/// dispatch is one load per op, and so a code registered twice (or a table
/// too long for `u8` indices) fails the build.
const BY_OPCODE: [u8; 256] = index_by_opcode();

// Evaluated only at compile time: an index out of range is a build error.
#[allow(clippy::indexing_slicing)]
const fn index_by_opcode() -> [u8; 256] {
    assert!(KERNELS.len() < UNREGISTERED as usize, "too many kernels");
    let mut by_opcode = [UNREGISTERED; 256];
    let mut i = 0;
    while i < KERNELS.len() {
        let code = KERNELS[i].opcode as usize;
        assert!(
            by_opcode[code] == UNREGISTERED,
            "an opcode is registered twice"
        );
        by_opcode[code] = i as u8;
        i += 1;
    }
    by_opcode
}

/// The kernel registered for `code`.
fn lookup(code: u8) -> Option<&'static Kernel> {
    BY_OPCODE
        .get(usize::from(code))
        .and_then(|&i| KERNELS.get(usize::from(i)))
}

/// `true` when the runtime has a kernel for `code`.
pub(crate) fn is_registered(code: u8) -> bool {
    lookup(code).is_some()
}

/// The builtin codes the runtime has a kernel for, in registry order.
pub fn registered_opcodes() -> impl Iterator<Item = u8> {
    KERNELS.iter().map(|k| k.opcode)
}

/// Bytes of the op's OpData block in the tail: `microarena_image::op_tail_bytes`
/// with the kernel's channel count, shared by Prepare and Invoke.
fn opdata_bytes(kernel: &Kernel, p: &Prep<'_, '_>, out: &TensorInfo) -> Result<usize, Error> {
    let channels = (kernel.channels)(p, out)?;
    Ok(rl::op_tail_bytes(p.op.opcode, out.dtype, channels) as usize)
}

/// Where Invoke finds a prepared op's OpData: the size of its tail block.
pub(crate) fn prepared_opdata_bytes(
    img: &Image<'_>,
    index: u16,
    op: &OpInfo,
    out: &TensorInfo,
) -> Result<usize, Error> {
    let kernel = lookup(op.opcode).ok_or(Error::UnsupportedOp {
        op_index: index,
        opcode: op.opcode,
    })?;
    opdata_bytes(kernel, &Prep { img, op, index }, out)
}

/// Validates one operator, computes its OpData into the tail and claims its
/// scratch. Called in operator order, so the tail layout is deterministic.
pub(crate) fn prepare(
    img: &Image<'_>,
    index: u16,
    op: &OpInfo,
    alloc: &mut ArenaAllocator,
    arena: &mut [u8],
) -> Result<(), Error> {
    let p = Prep { img, op, index };
    let code = op.opcode;
    let kernel = lookup(code).ok_or(Error::UnsupportedOp {
        op_index: index,
        opcode: code,
    })?;
    let out = p.output()?;
    let want = opdata_bytes(kernel, &p, &out)?;
    let at = if want > 0 {
        alloc.allocate_persistent(want, rl::TAIL_ALIGN as usize)?
    } else {
        0
    };
    let arena_len = arena.len();
    let dst = if want > 0 {
        arena.get_mut(at..at + want).ok_or(Error::ArenaTooSmall {
            needed: at + want,
            available: arena_len,
        })?
    } else {
        &mut []
    };
    let mut words = OpDataWriter::new(dst);
    // Only ops that own state (LSTM, SVDF) may read a variable tensor.
    for k in 0..op.n_inputs.min(rl::MAX_OP_INPUTS) {
        if let Some(t) = p.opt_input(k)?
            && t.storage == rl::STORAGE_VARIABLE
            && !kernel.state_inputs.contains(&k)
        {
            return Err(p.err("a variable tensor is an input of an op that does not own state"));
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
    if words.len() * 4 != want {
        return Err(p.err("OpData size differs from microarena_image::op_tail_bytes (runtime bug)"));
    }
    Ok(())
}

/// Runs one prepared operator: one table lookup, then the family's loops.
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    match lookup(c.op.opcode) {
        Some(kernel) => (kernel.eval)(c),
        None => Err(Error::UnsupportedOp {
            op_index: c.index,
            opcode: c.op.opcode,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_matches_the_image_format() {
        for code in 0..=u8::MAX {
            let kernel = lookup(code);
            assert_eq!(
                kernel.is_some(),
                rl::op_supported(i32::from(code)),
                "opcode {code}"
            );
            if let Some(k) = kernel {
                assert_eq!(k.opcode, code);
            }
        }
        assert_eq!(registered_opcodes().count(), KERNELS.len());
    }
}
