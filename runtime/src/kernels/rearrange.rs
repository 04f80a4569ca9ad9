//! Kernels that move elements without changing them (so bit-exact for every
//! type by construction), as TFLM's (tflite-micro 90b983c2
//! `micro/kernels/slice.cc`, `reverse.cc`, `broadcast_to.cc`,
//! `broadcast_args.cc`, `depth_to_space.cc`, `space_to_depth.cc`,
//! `gather_nd.cc`, `embedding_lookup.cc`, `dynamic_update_slice.cc`):
//!
//! * SLICE: float32, int32, int8, int16, bool, up to 5-D; begin and size
//!   (int32 or int64, a size of −1 runs to the end) are read in Eval, as
//!   TFLM's, so they may be variable; a window outside the input or unlike
//!   the output fails Invoke.
//! * REVERSE_V2: up to 8-D (`RuntimeShape::kMaxSmallSize`), float32, int32,
//!   int16, int8, uint8, int64, bool; the axes (int32, read in Eval,
//!   negative ones from the end) must be in range and contiguous, as TFLM
//!   requires.
//! * BROADCAST_TO: up to 5-D, any fixed-size type; the shape must be
//!   constant (the table's `constant_inputs`) and equal the output's.
//! * BROADCAST_ARGS: the broadcast of two int32 or int64 shapes; shapes that
//!   do not broadcast fail Invoke (TFLM aborts).
//! * DEPTH_TO_SPACE, SPACE_TO_DEPTH: 4-D float32 or int8, the block size.
//! * GATHER_ND: float32 or int8 params, int32 indices whose last dim is at
//!   most the params' rank (and 5); an index out of range fails Invoke.
//! * EMBEDDING_LOOKUP: int32 ids, float32 or int8 rows copied as they are,
//!   or int8 rows (zero point 0) dequantized to float32 as `v · scale`
//!   (TFLM's hybrid path); an id out of range fails Invoke.
//! * DYNAMIC_UPDATE_SLICE: float32, int8, int16 or int32; the update written
//!   over a copy of the operand at the start indices (int32 or int64, read in
//!   Eval), each clamped into `0..=operand − update`.

use microarena_image::params::BlockParams;
use microarena_image::{self as rl, dtype, opcode};

use super::broadcast::bcast_index;
use super::bytes::{i8_at, i32_at, i64_at, put_f32};
use super::context::{Ctx, OpDataWriter, Prep};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::SLICE, prepare_slice, slice),
    kernel(opcode::REVERSE_V2, prepare_reverse, reverse),
    kernel(opcode::BROADCAST_TO, prepare_broadcast_to, broadcast_to),
    kernel(
        opcode::BROADCAST_ARGS,
        prepare_broadcast_args,
        broadcast_args,
    ),
    kernel(opcode::DEPTH_TO_SPACE, prepare_block, block),
    kernel(opcode::SPACE_TO_DEPTH, prepare_block, block),
    kernel(opcode::GATHER_ND, prepare_gather_nd, gather_nd),
    kernel(opcode::EMBEDDING_LOOKUP, prepare_embedding, embedding),
    kernel(
        opcode::DYNAMIC_UPDATE_SLICE,
        prepare_update_slice,
        update_slice,
    ),
];

/// Highest rank the kernels of this family index (REVERSE_V2's limit).
const MAX_RANK: usize = 8;

fn size_of(t: &TensorInfo) -> usize {
    rl::dtype_size(t.dtype).unwrap_or(1).max(1) as usize
}

/// Element `i` of an int32 or int64 index tensor.
fn index_at(t: &TensorInfo, data: &[u8], i: usize) -> i64 {
    if t.dtype == dtype::I64 {
        i64_at(data, i)
    } else {
        i64::from(i32_at(data, i))
    }
}

/// Copies element `from` of `src` to element `to` of `dst`, both of `size` bytes.
fn move_element(dst: &mut [u8], to: usize, src: &[u8], from: usize, size: usize) {
    if let (Some(d), Some(s)) = (
        dst.get_mut(to * size..(to + 1) * size),
        src.get(from * size..(from + 1) * size),
    ) {
        d.copy_from_slice(s);
    }
}

/// Row-major coordinates of element `i` in `t` (first `t.rank` entries).
fn coords(mut i: usize, t: &TensorInfo) -> [usize; MAX_RANK] {
    let mut c = [0; MAX_RANK];
    for (k, ck) in c.iter_mut().enumerate().take(t.rank).rev() {
        let d = t.dim(k).max(1);
        *ck = i % d;
        i /= d;
    }
    c
}

/// Element index of coordinates `c` in `t`.
fn flat(c: &[usize; MAX_RANK], t: &TensorInfo) -> usize {
    c.iter()
        .enumerate()
        .take(t.rank)
        .fold(0, |acc, (k, &ck)| acc * t.dim(k) + ck)
}

/// `c + d`, coordinate by coordinate.
fn offset(mut c: [usize; MAX_RANK], d: &[usize; MAX_RANK]) -> [usize; MAX_RANK] {
    for (ck, dk) in c.iter_mut().zip(d) {
        *ck += dk;
    }
    c
}

// ---------------------------------------------------------------- SLICE

pub(crate) fn prepare_slice(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 3, "SLICE needs 3 inputs")?;
    let (x, begin, size) = (p.input(0)?, p.input(1)?, p.input(2)?);
    p.need(
        x.dtype == out.dtype
            && matches!(
                out.dtype,
                dtype::F32 | dtype::I32 | dtype::I8 | dtype::I16 | dtype::BOOL
            ),
        "SLICE: float32, int32, int8, int16 or bool, the same in and out",
    )?;
    p.need(
        begin.dtype == size.dtype && matches!(begin.dtype, dtype::I32 | dtype::I64),
        "SLICE begin and size: int32 or int64",
    )?;
    p.need(
        x.rank <= 5
            && out.rank == x.rank
            && begin.elements() == x.rank
            && size.elements() == x.rank,
        "SLICE: up to 5-D, a begin and a size per axis",
    )
}

pub(crate) fn slice(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (bt, bd) = c.input(1);
    let (st, sd) = c.input(2);
    let out = c.output_info();
    let fail = c.fail();
    let mut begin = [0usize; MAX_RANK];
    for (k, bk) in begin.iter_mut().enumerate().take(x.rank) {
        let b = index_at(&bt, bd, k);
        let s = index_at(&st, sd, k);
        let s = if s == -1 { x.dim(k) as i64 - b } else { s };
        if b < 0 || s < 0 || b + s > x.dim(k) as i64 || s != out.dim(k) as i64 {
            return Err(fail("SLICE window outside the input or unlike the output"));
        }
        *bk = b as usize;
    }
    let size = size_of(&out);
    for i in 0..out.elements() {
        let at = offset(coords(i, &out), &begin);
        move_element(c.out, i, xd, flat(&at, &x), size);
    }
    Ok(())
}

// ---------------------------------------------------------------- REVERSE_V2

pub(crate) fn prepare_reverse(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "REVERSE_V2 needs 2 inputs")?;
    let (x, axes) = (p.input(0)?, p.input(1)?);
    p.need(
        x.dtype == out.dtype
            && matches!(
                out.dtype,
                dtype::F32
                    | dtype::I32
                    | dtype::I16
                    | dtype::I8
                    | dtype::U8
                    | dtype::I64
                    | dtype::BOOL
            ),
        "REVERSE_V2: float32, int32, int16, int8, uint8, int64 or bool, the same in and out",
    )?;
    p.need(
        axes.dtype == dtype::I32 && axes.rank == 1,
        "REVERSE_V2 axes: rank-1 int32",
    )?;
    p.need(
        x.rank <= MAX_RANK && x.rank >= axes.elements() && x.shape() == out.shape(),
        "REVERSE_V2: up to 8-D, no more axes than dims, the output as the input",
    )
}

pub(crate) fn reverse(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (at, ad) = c.input(1);
    let fail = c.fail();
    let mut flip = [false; MAX_RANK];
    let n_axes = at.elements();
    for k in 0..n_axes {
        let a = i64::from(i32_at(ad, k));
        let a = if a < 0 { a + x.rank as i64 } else { a };
        if a < 0 || a >= x.rank as i64 {
            return Err(fail("REVERSE_V2 axis out of range"));
        }
        if let Some(f) = flip.get_mut(a as usize) {
            *f = true;
        }
    }
    // TFLM reverses one contiguous run of axes.
    let first = flip.iter().position(|&f| f).unwrap_or(0);
    if n_axes > 0 && (first..first + n_axes).any(|k| !flip.get(k).copied().unwrap_or(false)) {
        return Err(fail("REVERSE_V2 axes must be contiguous"));
    }
    let size = size_of(&x);
    for i in 0..x.elements() {
        let mut co = coords(i, &x);
        for (k, (ck, &f)) in co.iter_mut().zip(&flip).enumerate() {
            if f {
                *ck = x.dim(k).saturating_sub(1 + *ck);
            }
        }
        move_element(c.out, i, xd, flat(&co, &x), size);
    }
    Ok(())
}

// ---------------------------------------------------------------- BROADCAST_TO / _ARGS

pub(crate) fn prepare_broadcast_to(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "BROADCAST_TO needs 2 inputs")?;
    let (x, shape) = (p.input(0)?, p.input(1)?);
    p.need(
        x.dtype == out.dtype && rl::dtype_size(out.dtype).is_some(),
        "BROADCAST_TO: the output's type as the input's",
    )?;
    p.need(
        matches!(shape.dtype, dtype::I32 | dtype::I64) && shape.rank == 1,
        "BROADCAST_TO shape: rank-1 int32 or int64",
    )?;
    let data = p.img.const_data(&shape).unwrap_or(&[]);
    p.need(
        out.rank <= 5
            && x.rank <= out.rank
            && shape.elements() == out.rank
            && (0..out.rank).all(|k| index_at(&shape, data, k) == out.dim(k) as i64),
        "BROADCAST_TO: up to 5-D, the shape equal to the output's",
    )?;
    p.need(
        (0..x.rank).all(|k| {
            let d = x.dim(k);
            d == 1 || d == out.dim(k + out.rank - x.rank)
        }),
        "BROADCAST_TO: the input does not broadcast to the shape",
    )
}

pub(crate) fn broadcast_to(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let out = c.output_info();
    let size = size_of(&out);
    for i in 0..out.elements() {
        move_element(c.out, i, xd, bcast_index(i, &out, &x), size);
    }
    Ok(())
}

pub(crate) fn prepare_broadcast_args(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "BROADCAST_ARGS needs 2 inputs")?;
    let (a, b) = (p.input(0)?, p.input(1)?);
    p.need(
        a.dtype == b.dtype && a.dtype == out.dtype && matches!(out.dtype, dtype::I32 | dtype::I64),
        "BROADCAST_ARGS: int32 or int64 shapes and output",
    )?;
    p.need(
        a.rank == 1 && b.rank == 1 && out.rank == 1,
        "BROADCAST_ARGS: rank-1 shapes and output",
    )?;
    p.need(
        out.elements() == a.elements().max(b.elements()),
        "BROADCAST_ARGS: the output as long as the longer shape",
    )
}

pub(crate) fn broadcast_args(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (a, ad) = c.input(0);
    let (b, bd) = c.input(1);
    let out = c.output_info();
    let fail = c.fail();
    let n = out.elements();
    // Right-aligned: a missing dim is 1.
    let dim = |t: &TensorInfo, d: &[u8], back: usize| {
        if back < t.elements() {
            index_at(t, d, t.elements() - 1 - back)
        } else {
            1
        }
    };
    for back in 0..n {
        let (x, y) = (dim(&a, ad, back), dim(&b, bd, back));
        let v = if x == 1 {
            y
        } else if y == 1 || x == y {
            x
        } else {
            return Err(fail("BROADCAST_ARGS shapes do not broadcast"));
        };
        let i = n - 1 - back;
        if out.dtype == dtype::I64 {
            move_element(c.out, i, &v.to_le_bytes(), 0, 8);
        } else {
            move_element(c.out, i, &(v as i32).to_le_bytes(), 0, 4);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- DEPTH_TO_SPACE / SPACE_TO_DEPTH

pub(crate) fn prepare_block(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let x = p.input(0)?;
    p.need(
        x.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "float32 or int8, the same in and out",
    )?;
    p.need(x.rank == 4 && out.rank == 4, "input and output must be 4-D")?;
    let bs = p.op.params::<BlockParams>().block_size;
    p.need(bs > 0, "block size must be positive")?;
    let bs = bs as usize;
    // (space side, depth side): DEPTH_TO_SPACE's output is the space side.
    let (space, depth) = if p.op.opcode == opcode::DEPTH_TO_SPACE {
        (out, &x)
    } else {
        (&x, out)
    };
    p.need(
        space.dim(0) == depth.dim(0)
            && space.dim(1) == depth.dim(1) * bs
            && space.dim(2) == depth.dim(2) * bs
            && depth.dim(3) == space.dim(3) * bs * bs,
        "shapes do not follow from the block size",
    )
}

pub(crate) fn block(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let out = c.output_info();
    let bs = c.op.params::<BlockParams>().block_size.max(1) as usize;
    let to_space = c.op.opcode == opcode::DEPTH_TO_SPACE;
    let (space, depth) = if to_space { (&out, &x) } else { (&x, &out) };
    let size = size_of(&out);
    let sd = space.dim(3);
    // Walk the space side: element (b, h, w, d) is depth-side element
    // (b, h / bs, w / bs, ((h % bs)·bs + w % bs)·sd + d).
    for i in 0..space.elements() {
        let co = coords(i, space);
        let (b, h, w, d) = (co[0], co[1], co[2], co[3]);
        let dc = ((h % bs) * bs + w % bs) * sd + d;
        let j = ((b * depth.dim(1) + h / bs) * depth.dim(2) + w / bs) * depth.dim(3) + dc;
        if to_space {
            move_element(c.out, i, xd, j, size);
        } else {
            move_element(c.out, j, xd, i, size);
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- GATHER_ND / EMBEDDING_LOOKUP

/// TFLM's `MAX_INDICES_ND`.
const MAX_INDICES_ND: usize = 5;

pub(crate) fn prepare_gather_nd(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "GATHER_ND needs 2 inputs")?;
    let (params, indices) = (p.input(0)?, p.input(1)?);
    p.need(
        params.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "GATHER_ND: float32 or int8 params, the output as the params",
    )?;
    p.need(indices.dtype == dtype::I32, "GATHER_ND indices: int32")?;
    p.need(
        params.rank >= 1 && indices.rank >= 1,
        "GATHER_ND params and indices are at least vectors",
    )?;
    let nd = indices.dim(indices.rank - 1);
    p.need(
        nd <= params.rank && nd <= MAX_INDICES_ND,
        "GATHER_ND index depth exceeds the params' rank or 5",
    )?;
    let lead = indices.rank - 1;
    let want_rank = lead + params.rank - nd;
    p.need(
        out.rank == want_rank
            && (0..lead).all(|k| out.dim(k) == indices.dim(k))
            && (nd..params.rank).all(|k| out.dim(lead + k - nd) == params.dim(k)),
        "GATHER_ND output shape",
    )
}

pub(crate) fn gather_nd(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (params, pd) = c.input(0);
    let (indices, id) = c.input(1);
    let fail = c.fail();
    let nd = indices.dim(indices.rank.saturating_sub(1));
    let slice: usize = (nd..params.rank).map(|k| params.dim(k)).product();
    let n = indices.elements() / nd.max(1);
    let size = size_of(&params);
    for s in 0..n {
        let mut from = 0usize;
        for k in 0..nd {
            let v = i32_at(id, s * nd + k);
            if v < 0 || v as usize >= params.dim(k) {
                return Err(fail("GATHER_ND index out of bounds"));
            }
            from = from * params.dim(k) + v as usize;
        }
        for e in 0..slice {
            move_element(c.out, s * slice + e, pd, from * slice + e, size);
        }
    }
    Ok(())
}

pub(crate) fn prepare_embedding(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "EMBEDDING_LOOKUP needs 2 inputs")?;
    let (ids, value) = (p.input(0)?, p.input(1)?);
    p.need(
        ids.dtype == dtype::I32 && ids.rank == 1,
        "EMBEDDING_LOOKUP ids: rank-1 int32",
    )?;
    let hybrid = value.dtype == dtype::I8 && out.dtype == dtype::F32;
    p.need(
        hybrid || (value.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8)),
        "EMBEDDING_LOOKUP: float32 or int8 rows, the output as the rows or float32",
    )?;
    p.need(
        !hybrid || value.zero_point == 0,
        "EMBEDDING_LOOKUP: int8 rows dequantized to float32 need zero point 0",
    )?;
    p.need(
        value.rank >= 2
            && out.rank == value.rank
            && out.dim(0) == ids.dim(0)
            && (1..value.rank).all(|k| out.dim(k) == value.dim(k)),
        "EMBEDDING_LOOKUP output shape",
    )
}

pub(crate) fn embedding(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (ids, idd) = c.input(0);
    let (value, vd) = c.input(1);
    let fail = c.fail();
    let rows = value.dim(0);
    let row = value.elements() / rows.max(1);
    let size = size_of(&value);
    let hybrid = c.output_info().dtype != value.dtype;
    for i in 0..ids.elements() {
        let id = i32_at(idd, i);
        if id < 0 || id as usize >= rows {
            return Err(fail("EMBEDDING_LOOKUP id out of bounds"));
        }
        for e in 0..row {
            let from = id as usize * row + e;
            if hybrid {
                // micro_utils' Dequantize: (v − 0) · scale in float.
                put_f32(c.out, i * row + e, i8_at(vd, from) as f32 * value.scale);
            } else {
                move_element(c.out, i * row + e, vd, from, size);
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- DYNAMIC_UPDATE_SLICE

pub(crate) fn prepare_update_slice(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 3, "DYNAMIC_UPDATE_SLICE needs 3 inputs")?;
    let (x, update, start) = (p.input(0)?, p.input(1)?, p.input(2)?);
    p.need(
        x.dtype == update.dtype
            && x.dtype == out.dtype
            && matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16 | dtype::I32),
        "DYNAMIC_UPDATE_SLICE: float32, int8, int16 or int32, operand, update and output alike",
    )?;
    p.need(
        matches!(start.dtype, dtype::I32 | dtype::I64) && start.rank == 1 && start.dim(0) == x.rank,
        "DYNAMIC_UPDATE_SLICE start: rank-1 int32 or int64, one per operand dim",
    )?;
    p.need(
        update.rank == x.rank
            && x.rank <= MAX_RANK
            && x.shape() == out.shape()
            && (0..x.rank).all(|k| update.dim(k) <= x.dim(k)),
        "DYNAMIC_UPDATE_SLICE: the update within the operand, the output as the operand",
    )
}

pub(crate) fn update_slice(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (update, ud) = c.input(1);
    let (st, sd) = c.input(2);
    let size = size_of(&x);
    let mut start = [0usize; MAX_RANK];
    for (k, sk) in start.iter_mut().enumerate().take(x.rank) {
        let hi = x.dim(k).saturating_sub(update.dim(k)) as i64;
        *sk = index_at(&st, sd, k).clamp(0, hi) as usize;
    }
    let n = x.elements() * size;
    if let (Some(dst), Some(src)) = (c.out.get_mut(..n), xd.get(..n)) {
        dst.copy_from_slice(src);
    }
    for i in 0..update.elements() {
        let co = offset(coords(i, &update), &start);
        move_element(c.out, flat(&co, &x), ud, i, size);
    }
    Ok(())
}
