//! Ops that move elements without arithmetic: RESHAPE, PAD, PADV2,
//! MIRROR_PAD, TRANSPOSE, CONCATENATION, PACK and STRIDED_SLICE. Prepare checks that every parameter
//! indexes the input (PAD/TRANSPOSE/STRIDED_SLICE parameters are a rank, then
//! up to 5 values per group), so Eval's loops stay within the tensors.

use microarena_image::geometry;
use microarena_image::params::{
    ConcatParams, MAX_SLICE_RANK, PAD_CONSTANT, PAD_REFLECT, PAD_SYMMETRIC, PadParams, SliceParams,
    TransposeParams,
};
use microarena_image::resize::{self, nearest};
use microarena_image::{self as rl, dtype};

use super::bytes::copy;
use super::context::{BandAt, Ctx, OpDataWriter, Prep, same_element_size};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::RESHAPE, prepare_reshape, reshape),
    kernel(opcode::SQUEEZE, prepare_reshape, reshape),
    kernel(opcode::EXPAND_DIMS, prepare_expand_dims, reshape),
    kernel(opcode::SHAPE, prepare_shape, shape),
    kernel(opcode::GATHER, prepare_gather, gather),
    kernel(
        opcode::RESIZE_NEAREST_NEIGHBOR,
        prepare_resize_nearest,
        resize_nearest,
    ),
    kernel(
        opcode::RESIZE_BILINEAR,
        prepare_resize_bilinear,
        resize_bilinear,
    ),
    kernel(
        opcode::SPACE_TO_BATCH_ND,
        prepare_space_batch,
        space_to_batch,
    ),
    kernel(
        opcode::BATCH_TO_SPACE_ND,
        prepare_space_batch,
        batch_to_space,
    ),
    kernel(opcode::PAD, prepare_pad, pad),
    kernel(opcode::PADV2, prepare_pad, pad),
    kernel(opcode::MIRROR_PAD, prepare_mirror_pad, mirror_pad),
    kernel(opcode::TRANSPOSE, prepare_transpose, transpose),
    kernel(opcode::CONCATENATION, prepare_concatenation, concatenation),
    kernel(opcode::PACK, prepare_pack, pack),
    kernel(opcode::STRIDED_SLICE, prepare_strided_slice, strided_slice),
];

pub(crate) fn prepare_reshape(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(input.bytes == out.bytes, "reshape changes the byte size")
}

/// RESHAPE, SQUEEZE and EXPAND_DIMS copy the bytes (TFLM copies unless the
/// planner put input and output at one address).
pub(crate) fn reshape(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, src) = c.input(0);
    copy(c.out, src);
    Ok(())
}

/// EXPAND_DIMS: TFLM's Eval copies float32, int16 and int8 only
/// (`tensorflow/lite/micro/kernels/expand_dims.cc`, 90b983c2).
pub(crate) fn prepare_expand_dims(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I16 | dtype::I8),
        "EXPAND_DIMS: float32, int16 or int8 only",
    )?;
    prepare_reshape(p, out, words, alloc)
}

/// SHAPE: the input's dims as int32 (TFLM's only output type).
pub(crate) fn prepare_shape(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(out.dtype == dtype::I32, "SHAPE: int32 output only")?;
    p.need(
        out.elements() == input.rank,
        "SHAPE: the output needs one element per input dim",
    )
}

pub(crate) fn shape(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let input = c.tensor(0).ok_or(c.fail()("missing input"))?;
    for (k, &d) in input.shape().iter().enumerate() {
        super::bytes::put_i32(c.out, k, d);
    }
    Ok(())
}

pub(crate) fn prepare_pad(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    same_element_size(p, &input, out)?;
    let pads: PadParams = p.op.params();
    p.check(pads.mode == PAD_CONSTANT, "PAD mode")?;
    check_paddings(p, &pads, &input, out, usize::MAX)?;
    // PADV2 (and a PAD with a third input): the pad value is that scalar,
    // of the input's type and, for int8, on the output's scale and zero point
    // (TFLM's PadPrepare).
    if let Some(value) = p.opt_input(2)? {
        p.need(
            value.dtype == input.dtype && value.dtype == out.dtype,
            "pad value type",
        )?;
        p.need(value.elements() == 1, "pad value must be a scalar")?;
        p.need(
            value.dtype != dtype::I8
                || (value.zero_point == out.zero_point && value.scale == out.scale),
            "int8 pad value quantized unlike the output",
        )?;
    }
    Ok(())
}

/// The paddings of a PAD, PADV2 or MIRROR_PAD (rank, then 5 "before" and 5
/// "after" per axis) against its tensors: one pair per axis, each side
/// non-negative and at most `dim − narrower` (MIRROR_PAD's limit; `usize::MAX`
/// for none), and the output the padded shape.
fn check_paddings(
    p: &Prep<'_, '_>,
    pads: &PadParams,
    input: &TensorInfo,
    out: &TensorInfo,
    narrower: usize,
) -> Result<(), Error> {
    let rank = pads.rank.max(0) as usize;
    p.need(rank == input.rank && rank == out.rank, "rank")?;
    p.check(rank <= MAX_SLICE_RANK, "padding rank above 5")?;
    for k in 0..rank {
        let (before, after) = (axis_word(&pads.before, k), axis_word(&pads.after, k));
        p.check(before >= 0 && after >= 0, "negative padding")?;
        if narrower != usize::MAX {
            let most = input.dim(k).saturating_sub(narrower);
            p.need(
                before as usize <= most && after as usize <= most,
                "MIRROR_PAD: padding wider than the input allows",
            )?;
        }
        let want = input
            .dim(k)
            .saturating_add(before as usize)
            .saturating_add(after as usize);
        p.need(out.dim(k) == want, "padded shape")?;
    }
    Ok(())
}

/// Walks a padded output: for output element `i`, `f(i, source)` with the
/// input element it copies, or `None` where the output is padding. `axis(coord,
/// before, dim)` maps one axis' output coordinate to the input's (`None`
/// outside it).
fn walk_padded(
    out: &TensorInfo,
    input: &TensorInfo,
    pads: &PadParams,
    axis: impl Fn(usize, usize, usize) -> Option<usize>,
    mut f: impl FnMut(usize, Option<usize>),
) {
    let is = strides(input);
    for i in 0..out.elements() {
        let mut rem = i;
        let mut src = Some(0usize);
        for k in (0..out.rank).rev() {
            let d = out.dim(k).max(1);
            let coord = rem % d;
            rem /= d;
            let before = axis_word(&pads.before, k).max(0) as usize;
            src = match (src, axis(coord, before, input.dim(k))) {
                (Some(s), Some(at)) => Some(s + at * is.get(k).copied().unwrap_or(0)),
                _ => None,
            };
        }
        f(i, src);
    }
}

pub(crate) fn pad(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let pads: PadParams = c.op.params();
    // The pad value: PADV2's scalar input, else the int8 zero point or 0.
    let (value, v) = c.input(2);
    let mut pad_value = [0u8; 16];
    let e16 = e.min(16);
    match (v.get(..e16), pad_value.get_mut(..e16)) {
        (Some(src), Some(dst)) if value.dtype == out.dtype => dst.copy_from_slice(src),
        _ if out.dtype == dtype::I8 => pad_value[0] = out.zero_point as i8 as u8,
        _ => {}
    }
    let pad_value = pad_value.get(..e16).unwrap_or(&[]);
    let inside = |coord: usize, before: usize, n: usize| {
        (coord >= before && coord - before < n).then(|| coord - before)
    };
    walk_padded(&out, &input, &pads, inside, |i, src| match src {
        Some(s) => copy_elem(c.out, i, x, s, e),
        None => {
            if let Some(d) = c.out.get_mut(i * e..i * e + pad_value.len()) {
                d.copy_from_slice(pad_value);
            }
        }
    });
    Ok(())
}

/// MIRROR_PAD (TFLM's mirror_pad.cc): float32 or int8, the output the
/// input's type. REFLECT mirrors about the edge element, SYMMETRIC repeats
/// it, so a side may add at most `dim - 1` (REFLECT) or `dim` (SYMMETRIC)
/// elements; TFLM does not check that and would read outside the input, so
/// such an image is refused here.
pub(crate) fn prepare_mirror_pad(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "MIRROR_PAD: float32 or int8, the same in and out",
    )?;
    let pads: PadParams = p.op.params();
    p.check(
        pads.mode == PAD_REFLECT || pads.mode == PAD_SYMMETRIC,
        "MIRROR_PAD mode",
    )?;
    check_paddings(p, &pads, &input, out, usize::from(pads.mode == PAD_REFLECT))
}

pub(crate) fn mirror_pad(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let pads: PadParams = c.op.params();
    // Prepare checked every side against the input's dim, so `coord` maps
    // into it: REFLECT skips the edge element (offset 1), SYMMETRIC does not.
    let offset = usize::from(pads.mode == PAD_REFLECT);
    let mirrored = |coord: usize, before: usize, n: usize| {
        Some(if coord < before {
            (before + offset).saturating_sub(1 + coord)
        } else if coord - before < n {
            coord - before
        } else {
            n.saturating_sub(1 + offset + (coord - before - n))
        })
    };
    walk_padded(&out, &input, &pads, mirrored, |i, src| {
        copy_elem(c.out, i, x, src.unwrap_or(0), e);
    });
    Ok(())
}

pub(crate) fn prepare_transpose(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    same_element_size(p, &input, out)?;
    let perm: TransposeParams = p.op.params();
    let rank = perm.rank.max(0) as usize;
    p.need(rank == input.rank && rank == out.rank, "rank")?;
    let mut seen = 0u32;
    for k in 0..rank {
        let axis = axis_word(&perm.perm, k);
        p.check(
            (0..rank as i32).contains(&axis) && seen & (1 << axis) == 0,
            "perm is not a permutation of the input's axes",
        )?;
        seen |= 1 << axis;
        p.need(out.dim(k) == input.dim(axis as usize), "permuted shape")?;
    }
    Ok(())
}

pub(crate) fn transpose(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let is = strides(&input);
    let rank = out.rank;
    let perm: TransposeParams = c.op.params();
    // Banded: the output record is one band of the output's rows (axis 1)
    // and the input is whole, so a band's rows sit `out_row` further down.
    let row0 = c.band.map_or(0, |b| b.at.out_row);
    for i in 0..out.elements() {
        let mut rem = i;
        let mut src = 0usize;
        for k in (0..rank).rev() {
            let d = out.dim(k).max(1);
            let coord = rem % d + if k == 1 { row0 } else { 0 };
            rem /= d;
            let axis = axis_word(&perm.perm, k).max(0) as usize;
            src += coord * is.get(axis).copied().unwrap_or(0);
        }
        copy_elem(c.out, i, x, src, e);
    }
    Ok(())
}

pub(crate) fn prepare_concatenation(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    same_element_size(p, &input, out)?;
    let axis = p.op.params::<ConcatParams>().axis.max(0) as usize;
    p.need(axis < out.rank, "axis")?;
    let mut total = 0usize;
    for k in 0..p.op.n_inputs {
        let t = p.input(k)?;
        p.need(
            t.rank == out.rank && t.dtype == out.dtype,
            "input rank/type",
        )?;
        if out.dtype == dtype::I8 {
            p.need(
                t.scale == out.scale && t.zero_point == out.zero_point,
                "requantizing concat",
            )?;
        }
        for d in 0..out.rank {
            if d != axis {
                p.need(t.dim(d) == out.dim(d), "input shapes")?;
            }
        }
        total += t.dim(axis);
    }
    p.need(total == out.dim(axis), "concatenated size")
}

pub(crate) fn concatenation(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let out = c.output_info();
    let axis = c.op.params::<ConcatParams>().axis.max(0) as usize;
    let e = elem_size(&out);
    let outer: usize = (0..axis).map(|k| out.dim(k)).product();
    let mut at = 0usize;
    for o in 0..outer {
        for k in 0..c.op.n_inputs {
            let (t, x) = c.input(k);
            let inner: usize = (axis..t.rank).map(|d| t.dim(d)).product::<usize>() * e;
            if let (Some(d), Some(s)) = (
                c.out.get_mut(at..at + inner),
                x.get(o * inner..o * inner + inner),
            ) {
                d.copy_from_slice(s);
            }
            at += inner;
        }
    }
    Ok(())
}

/// PACK (`micro/kernels/pack.cc`, tflite-micro 90b983c2): N inputs of one
/// shape stacked along a new output axis. TFLM's Eval copies float32, int8,
/// int16, int32 and int64 and its Prepare checks nothing, so every shape
/// rule here is the runtime's own guard: the output is the input's shape
/// with `N` inserted at `axis` (already non-negative, lowered from the
/// output's rank).
pub(crate) fn prepare_pack(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(
        matches!(
            out.dtype,
            dtype::F32 | dtype::I8 | dtype::I16 | dtype::I32 | dtype::I64
        ),
        "PACK: float32, int8, int16, int32 or int64",
    )?;
    let axis = p.op.params::<ConcatParams>().axis;
    p.check(
        axis >= 0 && (axis as usize) < out.rank,
        "axis outside the output's rank",
    )?;
    let axis = axis as usize;
    p.check(p.op.n_inputs >= 1, "no inputs")?;
    p.check(
        out.dim(axis) == p.op.n_inputs,
        "the packed axis differs from the number of inputs",
    )?;
    for k in 0..p.op.n_inputs {
        let t = p.input(k)?;
        p.need(t.dtype == out.dtype, "input and output types differ")?;
        p.check(
            t.rank + 1 == out.rank,
            "the output needs one dim more than each input",
        )?;
        for d in 0..t.rank {
            let od = if d < axis { d } else { d + 1 };
            p.check(
                t.dim(d) == out.dim(od),
                "input shape differs from the output's",
            )?;
        }
    }
    Ok(())
}

/// Input `i`'s `k`-th block of `copy` elements lands at block `k·N + i`.
pub(crate) fn pack(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let out = c.output_info();
    let axis = c.op.params::<ConcatParams>().axis.max(0) as usize;
    let e = elem_size(&out);
    let n = c.op.n_inputs;
    let outer: usize = (0..axis).map(|k| out.dim(k)).product();
    let block = (axis + 1..out.rank).map(|k| out.dim(k)).product::<usize>() * e;
    for i in 0..n {
        let (_, x) = c.input(i);
        for k in 0..outer {
            let at = (k * n + i) * block;
            if let (Some(d), Some(s)) = (
                c.out.get_mut(at..at + block),
                x.get(k * block..k * block + block),
            ) {
                d.copy_from_slice(s);
            }
        }
    }
    Ok(())
}

pub(crate) fn prepare_strided_slice(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    same_element_size(p, &input, out)?;
    // Parameters: rank, then 5 starts, 5 stops, 5 strides.
    let s: SliceParams = p.op.params();
    let rank = s.rank.max(0) as usize;
    p.need(rank == input.rank && rank <= MAX_SLICE_RANK, "rank")?;
    let mut n = 1usize;
    for k in 0..rank {
        let (start, stop, stride) = (
            axis_word(&s.start, k),
            axis_word(&s.stop, k),
            axis_word(&s.stride, k),
        );
        p.check(stride != 0, "slice stride 0")?;
        let count = slice_len(start, stop, stride);
        if count > 0 {
            // Every coordinate the kernel reads lies on the axis,
            // so the count is at most the input's dim.
            let last = i64::from(start) + (count as i64 - 1) * i64::from(stride);
            let axis = 0..input.dim(k) as i64;
            p.check(
                axis.contains(&i64::from(start)) && axis.contains(&last),
                "slice bounds outside the input",
            )?;
        }
        n = n.saturating_mul(count);
    }
    p.need(n == out.elements(), "sliced shape")
}

pub(crate) fn strided_slice(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let e = elem_size(&out);
    let is = strides(&input);
    let s: SliceParams = c.op.params();
    let rank = s.rank.clamp(0, MAX_SLICE_RANK as i32) as usize;
    let mut counts = [1usize; MAX_SLICE_RANK];
    for (k, n) in counts.iter_mut().enumerate().take(rank) {
        *n = slice_len(
            axis_word(&s.start, k),
            axis_word(&s.stop, k),
            axis_word(&s.stride, k),
        );
    }
    let total: usize = counts.iter().product();
    for i in 0..total {
        let mut rem = i;
        let mut src = 0i64;
        for k in (0..rank).rev() {
            let n = counts.get(k).copied().unwrap_or(1).max(1);
            let step = (rem % n) as i64;
            rem /= n;
            let coord =
                i64::from(axis_word(&s.start, k)) + step * i64::from(axis_word(&s.stride, k));
            src += coord * is.get(k).copied().unwrap_or(0) as i64;
        }
        copy_elem(c.out, i, x, src.max(0) as usize, e);
    }
    Ok(())
}

/// Axis `k` of a per-axis parameter array (0 past its end; Prepare bounds
/// every rank it loops over, so Eval never gets there).
fn axis_word(words: &[i32], k: usize) -> i32 {
    words.get(k).copied().unwrap_or(0)
}

fn slice_len(start: i32, stop: i32, stride: i32) -> usize {
    let n = geometry::slice_count(start.into(), stop.into(), stride.into());
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Row-major strides of `shape` (up to 6 dims).
fn strides(t: &TensorInfo) -> [usize; rl::MAX_RANK] {
    let mut s = [0usize; rl::MAX_RANK];
    let mut acc = 1usize;
    for k in (0..t.rank.min(rl::MAX_RANK)).rev() {
        if let Some(v) = s.get_mut(k) {
            *v = acc;
        }
        acc = acc.saturating_mul(t.dim(k));
    }
    s
}

fn elem_size(t: &TensorInfo) -> usize {
    rl::dtype_size(t.dtype).unwrap_or(1) as usize
}

fn copy_elem(dst: &mut [u8], di: usize, src: &[u8], si: usize, e: usize) {
    if let (Some(d), Some(s)) = (dst.get_mut(di * e..di * e + e), src.get(si * e..si * e + e)) {
        d.copy_from_slice(s);
    }
}

/// GATHER's loop sizes: (batch, outer, axis, inner, coords per batch), from
/// the validated dims (`micro/kernels/gather.cc`, 90b983c2).
fn gather_sizes(
    input: &TensorInfo,
    coords: &TensorInfo,
    axis: usize,
    batch_dims: usize,
) -> (usize, usize, usize, usize, usize) {
    let prod = |t: &TensorInfo, r: core::ops::Range<usize>| r.map(|k| t.dim(k)).product::<usize>();
    (
        prod(input, 0..batch_dims),
        prod(input, batch_dims..axis),
        input.dim(axis),
        prod(input, axis + 1..input.rank),
        prod(coords, batch_dims..coords.rank),
    )
}

pub(crate) fn prepare_gather(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    let coords = p.input(1)?;
    p.need(
        matches!(input.dtype, dtype::F32 | dtype::I8)
            && out.dtype == input.dtype
            && coords.dtype == dtype::I32,
        "GATHER: float32 or int8 values, int32 indices",
    )?;
    let rl::params::GatherParams { axis, batch_dims } = p.op.params();
    p.check(
        axis >= 0
            && (axis as usize) < input.rank
            && batch_dims >= 0
            && batch_dims <= axis
            && (batch_dims as usize) <= coords.rank,
        "GATHER axis or batch_dims outside the ranks",
    )?;
    let (axis, batch_dims) = (axis as usize, batch_dims as usize);
    for k in 0..batch_dims {
        p.check(input.dim(k) == coords.dim(k), "GATHER batch dims differ")?;
    }
    let (b, o, _, n, c) = gather_sizes(&input, &coords, axis, batch_dims);
    p.check(
        out.elements() == b.saturating_mul(o).saturating_mul(c).saturating_mul(n),
        "GATHER output size",
    )
}

pub(crate) fn gather(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (coords, idx) = c.input(1);
    let rl::params::GatherParams { axis, batch_dims } = c.op.params();
    let (axis, batch_dims) = (axis.max(0) as usize, batch_dims.max(0) as usize);
    let (batches, outer, axis_size, inner, per_batch) =
        gather_sizes(&input, &coords, axis, batch_dims);
    let e = elem_size(&input);
    let fail = c.fail();
    for b in 0..batches {
        for o in 0..outer {
            for k in 0..per_batch {
                // TFLM reads the index at batch · per_batch + k (whatever the outer).
                let at = super::bytes::i32_at(idx, b * per_batch + k);
                if at < 0 || at as usize >= axis_size {
                    return Err(fail("GATHER index out of range"));
                }
                let src = ((b * outer + o) * axis_size + at as usize) * inner * e;
                let dst = ((b * outer + o) * per_batch + k) * inner * e;
                if let (Some(d), Some(s)) = (
                    c.out.get_mut(dst..dst + inner * e),
                    x.get(src..src + inner * e),
                ) {
                    d.copy_from_slice(s);
                }
            }
        }
    }
    Ok(())
}

/// A 3-D or 4-D tensor as TFLM's `ExtendShapeSpaceToBatch` sees it:
/// (batch, height, width, depth), a 3-D one with width 1.
fn nhwc(t: &TensorInfo) -> [usize; 4] {
    if t.rank == 4 {
        [t.dim(0), t.dim(1), t.dim(2), t.dim(3)]
    } else {
        [t.dim(0), t.dim(1), 1, t.dim(2)]
    }
}

/// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (`micro/kernels/space_to_batch_nd.cc`,
/// `batch_to_space_nd.cc`, `reference_ops::SpaceToBatchND`/`BatchToSpaceND`,
/// 90b983c2): float32 or int8, 3-D or 4-D. Every copied pixel's coordinates
/// are checked against both tensors, so any block or padding is safe.
pub(crate) fn prepare_space_batch(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        input.dtype == out.dtype && matches!(out.dtype, dtype::F32 | dtype::I8),
        "float32 or int8, the same in and out",
    )?;
    p.need(
        (3..=4).contains(&input.rank) && input.rank == out.rank,
        "input and output must both be 3-D or 4-D",
    )?;
    let sb: rl::params::SpaceBatchParams = p.op.params();
    p.check(
        sb.block_h >= 1 && sb.block_w >= 1 && sb.before_h >= 0 && sb.before_w >= 0,
        "block sizes must be positive and paddings/crops non-negative",
    )?;
    let (i, o) = (nhwc(&input), nhwc(out));
    p.check(i[3] == o[3], "depths differ")?;
    p.check(i[0] > 0 && o[0] > 0, "empty batch")?;
    if p.op.opcode == opcode::SPACE_TO_BATCH_ND {
        // TFLM pads with a value its Prepare never sets (uninitialized arena
        // bytes), so only unpadded blocks have an output to match.
        let (bh, bw) = (sb.block_h as usize, sb.block_w as usize);
        p.need(
            sb.before_h == 0 && sb.before_w == 0 && o[1] * bh == i[1] && o[2] * bw == i[2],
            "SPACE_TO_BATCH_ND with padding: TFLM pads with an uninitialized value",
        )?;
    }
    Ok(())
}

/// The one mapping both ops walk: batch-side pixel `(b, y, x)` of a
/// `[nb, h, w]` tensor is space-side pixel `(b mod ns, y·bh + k div bw − top,
/// x·bw + k mod bw − left)` of a `[ns, sh, sw]` tensor, `k = b div ns`;
/// `f(batch pixel, space pixel)` gets the flat pixel indices, `None` where
/// the space pixel falls in the padding.
fn block_pairs(
    batch: [usize; 3],
    space: [usize; 3],
    (bh, bw): (usize, usize),
    (top, left): (usize, usize),
    mut f: impl FnMut(usize, Option<usize>),
) {
    let ([nb, h, w], [ns, sh, sw]) = (batch, space);
    let ns = ns.max(1);
    for b in 0..nb {
        let (sb, k) = (b % ns, b / ns);
        for y in 0..h {
            let sy = (y * bh + k / bw).checked_sub(top).filter(|&v| v < sh);
            for x in 0..w {
                let sx = (x * bw + k % bw).checked_sub(left).filter(|&v| v < sw);
                let space_pixel = sy.zip(sx).map(|(sy, sx)| (sb * sh + sy) * sw + sx);
                f((b * h + y) * w + x, space_pixel);
            }
        }
    }
}

/// Block size and leading padding of a SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND.
fn block_geometry(c: &Ctx<'_, '_>) -> ((usize, usize), (usize, usize)) {
    let sb: rl::params::SpaceBatchParams = c.op.params();
    (
        (sb.block_h.max(1) as usize, sb.block_w.max(1) as usize),
        (sb.before_h.max(0) as usize, sb.before_w.max(0) as usize),
    )
}

pub(crate) fn space_to_batch(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let (block, pad) = block_geometry(c);
    let [ib, ih, iw, depth] = nhwc(&input);
    let [ob, oh, ow, _] = nhwc(&out);
    let row = depth * elem_size(&out);
    let out_bytes = &mut *c.out;
    block_pairs([ob, oh, ow], [ib, ih, iw], block, pad, |bp, sp| {
        let Some(d) = out_bytes.get_mut(bp * row..(bp + 1) * row) else {
            return;
        };
        // Padding is refused in Prepare; zero stays the default.
        match sp.and_then(|sp| x.get(sp * row..(sp + 1) * row)) {
            Some(s) => d.copy_from_slice(s),
            None => d.fill(0),
        }
    });
    Ok(())
}

pub(crate) fn batch_to_space(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let (block, crop) = block_geometry(c);
    let [ib, ih, iw, depth] = nhwc(&input);
    let [ob, oh, ow, _] = nhwc(&out);
    let row = depth * elem_size(&out);
    let out_bytes = &mut *c.out;
    // Input pixels that land in the crop are dropped.
    block_pairs([ib, ih, iw], [ob, oh, ow], block, crop, |bp, sp| {
        if let Some(sp) = sp
            && let (Some(d), Some(s)) = (
                out_bytes.get_mut(sp * row..(sp + 1) * row),
                x.get(bp * row..(bp + 1) * row),
            )
        {
            d.copy_from_slice(s);
        }
    });
    Ok(())
}

pub(crate) fn prepare_resize_nearest(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        matches!(input.dtype, dtype::F32 | dtype::I8 | dtype::I16) && out.dtype == input.dtype,
        "RESIZE_NEAREST_NEIGHBOR: float32, int16 or int8, the same in and out",
    )?;
    p.check(
        input.rank == 4
            && out.rank == 4
            && input.dim(0) == out.dim(0)
            && input.dim(3) == out.dim(3)
            && input.dim(1) > 0
            && input.dim(2) > 0,
        "RESIZE_NEAREST_NEIGHBOR shapes",
    )
}

/// Where the rows `c` computes lie in the whole op: the band's place when
/// banded, else all of `out` from all of `input`.
fn rows_at(c: &Ctx<'_, '_>, input: &TensorInfo, out: &TensorInfo) -> BandAt {
    c.band.map_or(
        BandAt {
            out_row: 0,
            out_h: out.dim(1),
            in_row: 0,
            in_h: input.dim(1),
        },
        |b| b.at,
    )
}

/// RESIZE_NEAREST_NEIGHBOR: every output pixel a copy of its source pixel
/// (`resize::nearest` along H and W). Banded, the input record holds the
/// rows from `in_row` the band's rows read.
pub(crate) fn resize_nearest(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let rl::params::ResizeParams {
        align_corners,
        half_pixel_centers,
    } = c.op.params();
    let (in_h, in_w) = (input.dim(1), input.dim(2));
    let out = c.output_info();
    let (batches, out_h, out_w, depth) = (out.dim(0), out.dim(1), out.dim(2), out.dim(3));
    let at = rows_at(c, &input, &out);
    let row = depth * elem_size(&input);
    let mut dst = 0;
    for b in 0..batches {
        for y in 0..out_h {
            let in_y = nearest(
                y + at.out_row,
                at.in_h,
                at.out_h,
                align_corners,
                half_pixel_centers,
            )
            .saturating_sub(at.in_row);
            for xo in 0..out_w {
                let in_x = nearest(xo, in_w, out_w, align_corners, half_pixel_centers);
                let src = ((b * in_h + in_y) * in_w + in_x) * row;
                if let (Some(d), Some(s)) = (c.out.get_mut(dst..dst + row), x.get(src..src + row)) {
                    d.copy_from_slice(s);
                }
                dst += row;
            }
        }
    }
    Ok(())
}

pub(crate) fn prepare_resize_bilinear(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let input = p.input(0)?;
    p.need(
        matches!(input.dtype, dtype::F32 | dtype::I8) && out.dtype == input.dtype,
        "RESIZE_BILINEAR: float32 or int8, the same in and out",
    )?;
    let rl::params::ResizeParams {
        align_corners,
        half_pixel_centers,
    } = p.op.params();
    p.check(
        !(align_corners && half_pixel_centers),
        "RESIZE_BILINEAR with half_pixel_centers and align_corners",
    )?;
    p.check(
        input.rank == 4
            && out.rank == 4
            && input.dim(0) == out.dim(0)
            && input.dim(3) == out.dim(3)
            && input.dim(1) > 0
            && input.dim(2) > 0
            && out.dim(1) > 0
            && out.dim(2) > 0,
        "RESIZE_BILINEAR shapes",
    )
}

/// RESIZE_BILINEAR as TFLM's reference kernels compute it
/// (`reference/resize_bilinear.h`, 90b983c2): float32 in float with TFLM's
/// operation order; int8 in 10-bit fixed point with its double rounding.
pub(crate) fn resize_bilinear(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let rl::params::ResizeParams {
        align_corners,
        half_pixel_centers,
    } = c.op.params();
    let out = c.output_info();
    let (in_h, in_w) = (input.dim(1) as i32, input.dim(2) as i32);
    let (batches, out_h, out_w, depth) = (out.dim(0), out.dim(1), out.dim(2), out.dim(3));
    // Banded: rows are picked in the whole op's geometry, then read from
    // the band, whose first row is the whole input's row `in_row`.
    let band = rows_at(c, &input, &out);
    let (full_in_h, row0) = (band.in_h as i32, band.in_row as i32);
    let at = |b: usize, y: i32, xx: i32, ch: usize| {
        ((b * in_h as usize + (y - row0).max(0) as usize) * in_w as usize + xx as usize) * depth
            + ch
    };
    if input.dtype == dtype::F32 {
        let hs = resize::bilinear_scale_f32(full_in_h, band.out_h, align_corners);
        let ws = resize::bilinear_scale_f32(in_w, out_w, align_corners);
        let get = |i: usize| super::bytes::f32_at(x, i);
        let mut o = 0;
        for b in 0..batches {
            for y in 0..out_h {
                let (iy, y0, y1) = resize::bilinear_source_f32(
                    y + band.out_row,
                    hs,
                    full_in_h,
                    half_pixel_centers,
                );
                let dy = iy - y0 as f32;
                for xo in 0..out_w {
                    let (ix, x0, x1) =
                        resize::bilinear_source_f32(xo, ws, in_w, half_pixel_centers);
                    let dx = ix - x0 as f32;
                    for ch in 0..depth {
                        let v = get(at(b, y0, x0, ch)) * (1.0 - dy) * (1.0 - dx)
                            + get(at(b, y1, x0, ch)) * dy * (1.0 - dx)
                            + get(at(b, y0, x1, ch)) * (1.0 - dy) * dx
                            + get(at(b, y1, x1, ch)) * dy * dx
                            + 0.0;
                        super::bytes::put_f32(c.out, o, v);
                        o += 1;
                    }
                }
            }
        }
        return Ok(());
    }
    // int8: scales and coordinates in 1/1024 units.
    let hs = resize::bilinear_scale_q10(full_in_h, band.out_h, align_corners);
    let ws = resize::bilinear_scale_q10(in_w, out_w, align_corners);
    let get = |i: usize| i64::from(x.get(i).map_or(0, |&b| b as i8));
    let mut o = 0;
    for b in 0..batches {
        for y in 0..out_h {
            let (iy, y0, y1) =
                resize::bilinear_source_q10(y + band.out_row, hs, full_in_h, half_pixel_centers);
            let (wy1, wy0) = (
                i64::from(iy - (1 << 10) * y0),
                i64::from((1 << 10) - (iy - (1 << 10) * y0)),
            );
            for xo in 0..out_w {
                let (ix, x0, x1) = resize::bilinear_source_q10(xo, ws, in_w, half_pixel_centers);
                let (wx1, wx0) = (
                    i64::from(ix - (1 << 10) * x0),
                    i64::from((1 << 10) - (ix - (1 << 10) * x0)),
                );
                for ch in 0..depth {
                    let sum = get(at(b, y0, x0, ch)) * wy0 * wx0
                        + get(at(b, y1, x0, ch)) * wy1 * wx0
                        + get(at(b, y0, x1, ch)) * wy0 * wx1
                        + get(at(b, y1, x1, ch)) * wy1 * wx1;
                    // TFLM's default (not TFLITE_SINGLE_ROUNDING): half away from zero, then truncate.
                    let round = if sum > 0 { 1 << 19 } else { -(1 << 19) };
                    if let Some(d) = c.out.get_mut(o) {
                        *d = ((sum + round) / (1 << 20)) as i8 as u8;
                    }
                    o += 1;
                }
            }
        }
    }
    Ok(())
}
