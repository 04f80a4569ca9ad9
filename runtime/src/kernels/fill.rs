//! ZEROS_LIKE and FILL, as TFLM's kernels (tflite-micro 90b983c2
//! `micro/kernels/zeros_like.cc`, `fill.cc`).
//!
//! * ZEROS_LIKE: int64, int32, int8 or float32; every output byte 0 (the raw
//!   value 0, not the zero point, as TFLM writes).
//! * FILL: a scalar value of the output's type (float32, int32 or int8)
//!   copied to every element; the dims input (int32 or int64, rank 1) must
//!   be constant — the operator table's `constant_inputs`, as TFLM's Prepare
//!   requires — and equal the output's shape.

use microarena_image::{self as rl, dtype, opcode};

use super::bytes::{i32_at, i64_at};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::ZEROS_LIKE, prepare_zeros, zeros),
    kernel(opcode::FILL, prepare_fill, fill),
];

pub(crate) fn prepare_zeros(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let x = p.input(0)?;
    p.need(
        x.dtype == out.dtype
            && matches!(out.dtype, dtype::I64 | dtype::I32 | dtype::I8 | dtype::F32),
        "ZEROS_LIKE: int64, int32, int8 or float32, the same in and out",
    )?;
    p.need(same_len(&x, out), "input and output sizes differ")
}

pub(crate) fn zeros(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    c.out.fill(0);
    Ok(())
}

pub(crate) fn prepare_fill(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "FILL needs 2 inputs")?;
    let dims = p.input(0)?;
    let value = p.input(1)?;
    p.need(
        value.rank == 0
            && value.dtype == out.dtype
            && matches!(out.dtype, dtype::F32 | dtype::I32 | dtype::I8),
        "FILL: a scalar value of the output's type, float32, int32 or int8",
    )?;
    p.need(
        dims.rank == 1 && matches!(dims.dtype, dtype::I32 | dtype::I64),
        "FILL dims: a rank-1 int32 or int64 tensor",
    )?;
    let data = p.img.const_data(&dims).unwrap_or(&[]);
    let at = |i: usize| {
        if dims.dtype == dtype::I64 {
            i64_at(data, i)
        } else {
            i64::from(i32_at(data, i))
        }
    };
    p.need(
        dims.dim(0) == out.rank && (0..out.rank).all(|i| at(i) == out.dim(i) as i64),
        "FILL dims differ from the output's shape",
    )
}

pub(crate) fn fill(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (value, v) = c.input(1);
    let size = rl::dtype_size(value.dtype).unwrap_or(1) as usize;
    let v = v.get(..size).unwrap_or(&[]);
    if v.len() == size {
        for chunk in c.out.chunks_exact_mut(size) {
            chunk.copy_from_slice(v);
        }
    }
    Ok(())
}
