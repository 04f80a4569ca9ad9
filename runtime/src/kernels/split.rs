//! SPLIT, SPLIT_V and UNPACK: one input cut along an axis into several
//! outputs (tflite-micro 90b983c2 `kernels/split.cc`, `split_v.cc`,
//! `unpack.cc`). The three only move elements, so one byte copy serves every
//! type TFLM registers for them (float32, int8, int16, int32).
//!
//! Each output's extent along the axis is its own dim (UNPACK: 1, the axis
//! being dropped from the output), as TFLM's Eval takes it from the output
//! dims; Prepare checks that the outputs tile the input exactly.

use microarena_image::params::AxisParams;
use microarena_image::{self as rl, opcode};

use super::context::{Ctx, OpDataWriter, Prep};
use super::{Kernel, multi_output_kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

pub(super) const KERNELS: &[Kernel] = &[
    multi_output_kernel(opcode::SPLIT, prepare, eval),
    multi_output_kernel(opcode::UNPACK, prepare, eval),
    multi_output_kernel(opcode::SPLIT_V, prepare, eval),
];

/// Input holding the data: SPLIT's axis tensor comes first.
fn data_input(code: u8) -> usize {
    usize::from(code == opcode::SPLIT)
}

fn prepare(
    p: &Prep<'_, '_>,
    _out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    let code = p.op.opcode;
    let n_inputs = match code {
        opcode::SPLIT => 2,
        opcode::SPLIT_V => 3,
        _ => 1,
    };
    p.need(p.op.n_inputs == n_inputs, "wrong number of inputs")?;
    let input = p.input(data_input(code))?;
    p.need(
        matches!(
            input.dtype,
            rl::dtype::F32 | rl::dtype::I8 | rl::dtype::I16 | rl::dtype::I32
        ),
        "only float32, int8, int16 or int32",
    )?;
    let axis = p.op.params::<AxisParams>().axis;
    p.check(
        axis >= 0 && (axis as usize) < input.rank,
        "axis outside the input's rank",
    )?;
    let axis = axis as usize;
    let unpack = code == opcode::UNPACK;
    if unpack {
        p.check(
            p.op.n_outputs == input.dim(axis),
            "UNPACK needs one output per element of the axis",
        )?;
    }
    let mut covered = 0usize;
    for k in 0..p.op.n_outputs {
        let out = p.output_k(k)?;
        p.need(
            out.dtype == input.dtype,
            "outputs must have the input's type",
        )?;
        if unpack {
            // The output is the input's shape with the axis removed.
            let same = out.rank + 1 == input.rank
                && (0..out.rank).all(|d| out.dim(d) == input.dim(d + usize::from(d >= axis)));
            p.check(
                same,
                "UNPACK output shape is not the input's without the axis",
            )?;
            covered += 1;
        } else {
            let same = out.rank == input.rank
                && (0..out.rank).all(|d| d == axis || out.dim(d) == input.dim(d));
            p.check(
                same,
                "split output shape differs from the input off the axis",
            )?;
            covered = covered.saturating_add(out.dim(axis));
        }
    }
    p.check(
        covered == input.dim(axis),
        "the outputs do not tile the input along the axis",
    )
}

fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, data) = c.input(data_input(c.op.opcode));
    let axis = c.op.params::<AxisParams>().axis.max(0) as usize;
    let elem = rl::dtype_size(input.dtype).unwrap_or(1) as usize;
    let outer: usize = (0..axis).map(|d| input.dim(d)).product();
    let inner: usize = (axis + 1..input.rank)
        .map(|d| input.dim(d))
        .product::<usize>()
        * elem;
    let unpack = c.op.opcode == opcode::UNPACK;
    let mut lens = [0usize; rl::MAX_OP_OUTPUTS];
    for (k, len) in lens.iter_mut().enumerate().take(c.op.n_outputs) {
        let along = if unpack {
            1
        } else {
            c.output_info_k(k).dim(axis)
        };
        *len = along * inner;
    }
    let mut from = 0usize;
    for o in 0..outer {
        for (k, &len) in lens.iter().enumerate().take(c.op.n_outputs) {
            let dst = if k == 0 {
                &mut *c.out
            } else {
                match c.more.get_mut(k - 1) {
                    Some(d) => &mut **d,
                    None => break,
                }
            };
            let at = o * len;
            if let (Some(d), Some(s)) = (dst.get_mut(at..at + len), data.get(from..from + len)) {
                d.copy_from_slice(s);
            }
            from += len;
        }
    }
    Ok(())
}
