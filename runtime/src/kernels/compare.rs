//! The comparisons (EQUAL, NOT_EQUAL, LESS, LESS_EQUAL, GREATER,
//! GREATER_EQUAL), LOGICAL_AND / OR / NOT and SELECT_V2, as TFLM's reference
//! kernels (tflite-micro 90b983c2 `micro/kernels/comparisons.cc`,
//! `logical.cc`, `logical_not.cc`, `select.cc`).
//!
//! * Comparisons write bool (one byte, 0 or 1). float32, int32 and int64
//!   compare raw values (EQUAL and NOT_EQUAL also bool); int8 compares both
//!   operands rescaled as `mbqm_smaller_than_one((x − zp) · 2⁸, scale)` (the
//!   multiplier of the input's scale alone). TFLM's int16 GREATER reads the
//!   int8-only scaling parameters uninitialised, so int16 is refused. Shapes
//!   that differ broadcast, 4-D at most.
//! * LOGICAL_AND / OR: bool, broadcast 4-D at most; LOGICAL_NOT: bool.
//! * SELECT_V2: `cond ? x : y` over bool `cond` and float32, int8 or int16
//!   `x` and `y` (raw values: no rescaling), the three broadcast onto the
//!   output, 5-D at most.

use microarena_image::{self as rl, dtype, opcode};

use super::broadcast::{bcast_index, broadcastable};
use super::bytes::{f32_at, i8_at, i32_at, i64_at};
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::EQUAL, prepare, eval),
    kernel(opcode::NOT_EQUAL, prepare, eval),
    kernel(opcode::LESS, prepare, eval),
    kernel(opcode::LESS_EQUAL, prepare, eval),
    kernel(opcode::GREATER, prepare, eval),
    kernel(opcode::GREATER_EQUAL, prepare, eval),
    kernel(opcode::LOGICAL_AND, prepare, eval),
    kernel(opcode::LOGICAL_OR, prepare, eval),
    kernel(opcode::LOGICAL_NOT, prepare_not, logical_not),
    kernel(opcode::SELECT_V2, prepare_select, select),
];

/// int8 comparisons' headroom (TFLM's `kLeftShift`).
const LEFT_SHIFT: u32 = 8;

/// The input types a binary op of this family takes.
fn types_ok(code: u8, t: i8) -> bool {
    match code {
        opcode::LOGICAL_AND | opcode::LOGICAL_OR => t == dtype::BOOL,
        opcode::EQUAL | opcode::NOT_EQUAL => matches!(
            t,
            dtype::BOOL | dtype::F32 | dtype::I32 | dtype::I64 | dtype::I8
        ),
        _ => matches!(t, dtype::F32 | dtype::I32 | dtype::I64 | dtype::I8),
    }
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "this operator needs 2 inputs")?;
    let a = p.input(0)?;
    let b = p.input(1)?;
    p.need(
        a.dtype == b.dtype && types_ok(p.op.opcode, a.dtype) && out.dtype == dtype::BOOL,
        "comparisons: float32, int32, int64 or int8 (EQUAL/NOT_EQUAL also bool; LOGICAL_AND/OR bool only), a bool output",
    )?;
    p.need(broadcastable(&a, &b, out), "shapes do not broadcast")?;
    p.need(
        a.shape() == b.shape() || out.rank <= 4,
        "broadcasting is 4-D at most",
    )
}

fn compare(code: u8, ord: core::cmp::Ordering) -> bool {
    use core::cmp::Ordering::{Equal, Greater, Less};
    match code {
        opcode::EQUAL => ord == Equal,
        opcode::NOT_EQUAL => ord != Equal,
        opcode::LESS => ord == Less,
        opcode::LESS_EQUAL => ord != Greater,
        opcode::GREATER => ord == Greater,
        _ => ord != Less,
    }
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (a, xa) = c.input(0);
    let (b, xb) = c.input(1);
    let out = c.output_info();
    let code = c.op.opcode;
    let n = out.elements();
    let same = a.elements() == n && b.elements() == n;
    // int8: each operand's scale as a multiplier (QuantizeMultiplierSmallerThanOneExp).
    let (ma, sa) = quantize_ratio(a.scale, 1.0, 1.0);
    let (mb, sb) = quantize_ratio(b.scale, 1.0, 1.0);
    let rescale = |v: i32, zp: i32, m: i32, s: i32| {
        fx::mbqm_smaller_than_one(v.wrapping_sub(zp).wrapping_shl(LEFT_SHIFT), m, s)
    };
    for i in 0..n {
        let (ia, ib) = if same {
            (i, i)
        } else {
            (bcast_index(i, &out, &a), bcast_index(i, &out, &b))
        };
        let r = match (code, a.dtype) {
            (opcode::LOGICAL_AND, _) => {
                xa.get(ia).is_some_and(|&v| v != 0) && xb.get(ib).is_some_and(|&v| v != 0)
            }
            (opcode::LOGICAL_OR, _) => {
                xa.get(ia).is_some_and(|&v| v != 0) || xb.get(ib).is_some_and(|&v| v != 0)
            }
            (_, dtype::F32) => {
                let (va, vb) = (f32_at(xa, ia), f32_at(xb, ib));
                // IEEE comparisons: NaN is unequal and unordered.
                match code {
                    opcode::EQUAL => va == vb,
                    opcode::NOT_EQUAL => va != vb,
                    opcode::LESS => va < vb,
                    opcode::LESS_EQUAL => va <= vb,
                    opcode::GREATER => va > vb,
                    _ => va >= vb,
                }
            }
            (_, dtype::I32) => compare(code, i32_at(xa, ia).cmp(&i32_at(xb, ib))),
            (_, dtype::I64) => compare(code, i64_at(xa, ia).cmp(&i64_at(xb, ib))),
            (_, dtype::BOOL) => {
                let (va, vb) = (
                    xa.get(ia).is_some_and(|&v| v != 0),
                    xb.get(ib).is_some_and(|&v| v != 0),
                );
                compare(code, va.cmp(&vb))
            }
            _ => {
                let va = rescale(i8_at(xa, ia), a.zero_point, ma, sa);
                let vb = rescale(i8_at(xb, ib), b.zero_point, mb, sb);
                compare(code, va.cmp(&vb))
            }
        };
        if let Some(o) = c.out.get_mut(i) {
            *o = u8::from(r);
        }
    }
    Ok(())
}

pub(crate) fn prepare_not(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let x = p.input(0)?;
    p.need(
        x.dtype == dtype::BOOL && out.dtype == dtype::BOOL,
        "LOGICAL_NOT: bool in and out",
    )?;
    p.need(same_len(&x, out), "input and output sizes differ")
}

pub(crate) fn logical_not(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, x) = c.input(0);
    for (o, &v) in c.out.iter_mut().zip(x) {
        *o = u8::from(v == 0);
    }
    Ok(())
}

pub(crate) fn prepare_select(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 3, "SELECT_V2 needs 3 inputs")?;
    let (cond, x, y) = (p.input(0)?, p.input(1)?, p.input(2)?);
    p.need(
        cond.dtype == dtype::BOOL
            && x.dtype == y.dtype
            && x.dtype == out.dtype
            && matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16),
        "SELECT_V2: a bool condition, float32, int8 or int16 values as the output",
    )?;
    // Every input's dims right-aligned against the output's: equal or 1,
    // and the output's the largest (TFLM's CheckBroadcastShape).
    let r = out.rank;
    let fits = |t: &TensorInfo| {
        t.rank <= r
            && (0..t.rank).all(|k| {
                let d = t.dim(k);
                d == 1 || d == out.dim(k + r - t.rank)
            })
    };
    let largest = (0..r).all(|k| {
        let dim = |t: &TensorInfo| {
            if k + t.rank >= r {
                t.dim(k + t.rank - r)
            } else {
                1
            }
        };
        let max = dim(&cond).max(dim(&x)).max(dim(&y));
        let min = dim(&cond).min(dim(&x)).min(dim(&y));
        out.dim(k) == if min == 0 { 0 } else { max }
    });
    p.need(
        fits(&cond) && fits(&x) && fits(&y) && largest,
        "SELECT_V2 shapes do not broadcast onto the output",
    )?;
    p.need(r <= 5, "SELECT_V2 broadcasting is 5-D at most")
}

pub(crate) fn select(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (cond, xc) = c.input(0);
    let (x, xx) = c.input(1);
    let (y, xy) = c.input(2);
    let out = c.output_info();
    let size = rl::dtype_size(out.dtype).unwrap_or(1).max(1) as usize;
    for i in 0..out.elements() {
        let pick = xc.get(bcast_index(i, &out, &cond)).is_some_and(|&v| v != 0);
        let (t, data) = if pick { (&x, xx) } else { (&y, xy) };
        let at = bcast_index(i, &out, t) * size;
        let src = data.get(at..at + size).unwrap_or(&[]);
        if let Some(dst) = c.out.get_mut(i * size..(i + 1) * size)
            && src.len() == size
        {
            dst.copy_from_slice(src);
        }
    }
    Ok(())
}
