//! The float32-only element-wise kernels TFLM registers: FLOOR, CEIL, ROUND,
//! NEG, SQUARE, SIN, COS, FLOOR_DIV and FLOOR_MOD (tflite-micro 90b983c2
//! `micro/kernels/floor.cc`, `ceil.cc`, `round.cc`, `neg.cc`,
//! `elementwise.cc`, `floor_div.cc`, `floor_mod.cc`; every one refuses other
//! types).
//!
//! * FLOOR, CEIL, NEG, SQUARE (`x · x`): exact.
//! * ROUND: TFLM's `RoundToNearest`, ties to the even neighbour.
//! * FLOOR_DIV: `floor(a / b)` in double, rounded to float once; a zero
//!   divisor anywhere in `b` fails Invoke, as TFLM's Eval does.
//! * FLOOR_MOD: C's `fmodf` (exact), moved into the divisor's sign.
//! * SIN, COS: the C library's `sinf`/`cosf`; here `libm`'s double `sin`/`cos`
//!   rounded to float once (see [`super::cmath`]): within 1 ULP of the wheel's.
//!
//! The binary ops broadcast 4-D at most (`BroadcastBinaryFunction4DSlow`).

use microarena_image::{dtype, opcode};

use super::broadcast::{bcast_index, broadcastable};
use super::bytes::{f32_at, put_f32};
use super::cmath;
use super::context::{Ctx, OpDataWriter, Prep, same_len};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::FLOOR, prepare, unary),
    kernel(opcode::CEIL, prepare, unary),
    kernel(opcode::ROUND, prepare, unary),
    kernel(opcode::NEG, prepare, unary),
    kernel(opcode::SQUARE, prepare, unary),
    kernel(opcode::SIN, prepare, unary),
    kernel(opcode::COS, prepare, unary),
    kernel(opcode::FLOOR_DIV, prepare_binary, binary),
    kernel(opcode::FLOOR_MOD, prepare_binary, binary),
];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let x = p.input(0)?;
    p.need(
        x.dtype == dtype::F32 && out.dtype == dtype::F32,
        "float32 only",
    )?;
    p.need(same_len(&x, out), "input and output sizes differ")
}

/// TFLM's `RoundToNearest`: ties go to the even integer.
fn round_to_nearest(x: f32) -> f32 {
    let floor = libm::floorf(x);
    let diff = x - floor;
    // `floor` is an integer here whenever `diff` is 0.5 (|x| < 2^23).
    if diff < 0.5 || (diff == 0.5 && (floor as i32) % 2 == 0) {
        floor
    } else {
        floor + 1.0
    }
}

pub(crate) fn unary(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let x = c.input(0).1;
    let code = c.op.opcode;
    let f: fn(f32) -> f32 = match code {
        opcode::FLOOR => libm::floorf,
        opcode::CEIL => libm::ceilf,
        opcode::ROUND => round_to_nearest,
        opcode::NEG => |v| -v,
        opcode::SQUARE => |v| v * v,
        opcode::SIN => cmath::sinf,
        _ => cmath::cosf,
    };
    for i in 0..c.output_info().elements() {
        let v = f(f32_at(c.src(0, x), i));
        put_f32(c.out, i, v);
    }
    Ok(())
}

pub(crate) fn prepare_binary(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "this operator needs 2 inputs")?;
    let a = p.input(0)?;
    let b = p.input(1)?;
    p.need(
        a.dtype == dtype::F32 && b.dtype == dtype::F32 && out.dtype == dtype::F32,
        "float32 only",
    )?;
    p.need(broadcastable(&a, &b, out), "shapes do not broadcast")?;
    p.need(
        a.shape() == b.shape() || out.rank <= 4,
        "broadcasting is 4-D at most",
    )
}

/// TFLM's `FloorMod` on float: `fmodf`, then into the divisor's sign.
fn floor_mod(a: f32, b: f32) -> f32 {
    let m = libm::fmodf(a, b);
    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
        m + b
    } else {
        m
    }
}

pub(crate) fn binary(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (a, xa) = c.input(0);
    let (b, xb) = c.input(1);
    let out = c.output_info();
    let div = c.op.opcode == opcode::FLOOR_DIV;
    if div && (0..b.elements()).any(|i| f32_at(xb, i) == 0.0) {
        return Err(c.fail()("FLOOR_DIV by zero"));
    }
    let n = out.elements();
    let same = a.elements() == n && b.elements() == n;
    for i in 0..n {
        let (ia, ib) = if same {
            (i, i)
        } else {
            (bcast_index(i, &out, &a), bcast_index(i, &out, &b))
        };
        let (va, vb) = (f32_at(xa, ia), f32_at(xb, ib));
        let r = if div {
            libm::floor(f64::from(va) / f64::from(vb)) as f32
        } else {
            floor_mod(va, vb)
        };
        put_f32(c.out, i, r);
    }
    Ok(())
}
