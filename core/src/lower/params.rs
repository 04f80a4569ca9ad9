//! Each operator's typed image parameters (`microarena_image::params`),
//! computed from its options, its tensors' shapes and its constant inputs,
//! with the checks that make them safe for the runtime to trust.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use microarena_image::geometry::{self, SliceAxis, out_size, slice_axis};
pub(super) use microarena_image::params::Words;
use microarena_image::params::{
    AxisParams, BatchMatMulParams, BlockParams, ConcatParams, CumsumParams, FlexParams,
    GatherParams, LeakyReluParams, LstmParams, MAX_SLICE_RANK, MAX_TRANSPOSE_RANK, MeanParams,
    OpParams, PAD_CONSTANT, PAD_REFLECT, PAD_SYMMETRIC, PadParams, ParamsKind, ResizeParams,
    SliceParams, SoftmaxParams, SpaceBatchParams, SubgraphParams, SvdfParams, TransposeParams,
    WindowParams,
};
use microarena_image::{self as rl, opcode};

use crate::read::model::{Model, Operator, Tensor};
use crate::read::ops::{Activation, OpOptions};

/// The fused activation the op record carries.
pub(super) fn activation(op: &Operator<'_>) -> Activation {
    match &op.options {
        OpOptions::Conv(c) => c.activation,
        OpOptions::Pool(p) => p.activation,
        OpOptions::Lstm(o) => o.activation,
        OpOptions::Svdf { activation, .. } => *activation,
        OpOptions::FullyConnected { activation, .. }
        | OpOptions::Elementwise { activation, .. }
        | OpOptions::Concatenation { activation, .. } => *activation,
        _ => Activation::None,
    }
}

fn const_i32s(model: &Model<'_>, t: Option<usize>) -> Option<Vec<i32>> {
    let t = t?;
    let tensor = model.main().tensors.get(t)?;
    if tensor.dtype.code() != rl::dtype::I32 {
        return None;
    }
    model.const_ints(0, t)
}

/// An operator being lowered, with its tensors.
pub(super) struct OpView<'m, 'a> {
    model: &'a Model<'m>,
    op: &'a Operator<'m>,
    output: &'a Tensor<'m>,
}

impl<'m, 'a> OpView<'m, 'a> {
    fn code(&self) -> u8 {
        self.op.opcode.0 as u8
    }

    fn input(&self, i: usize) -> Result<&'a Tensor<'m>, String> {
        self.op
            .input(i)
            .and_then(|t| self.model.main().tensors.get(t))
            .ok_or_else(|| format!("input {i} is missing"))
    }
}

/// Lowers one operator's parameters.
type LowerFn = fn(&OpView<'_, '_>) -> Result<Words, String>;

/// The lowering of each parameter struct the operator table names. The match
/// is exhaustive, so a new `ParamsKind` cannot be left without one.
fn lowering(kind: ParamsKind) -> LowerFn {
    match kind {
        ParamsKind::NoParams => no_params,
        ParamsKind::Window => window,
        ParamsKind::Lstm => lstm,
        ParamsKind::Svdf => svdf,
        ParamsKind::Softmax => softmax,
        ParamsKind::Concat => concatenation,
        ParamsKind::Slice => strided_slice,
        ParamsKind::Pad => pad,
        ParamsKind::Transpose => transpose,
        ParamsKind::Mean => mean,
        ParamsKind::LeakyRelu => leaky_relu,
        ParamsKind::Axis => axis_input,
        ParamsKind::Split => split,
        ParamsKind::Gather => gather,
        ParamsKind::SpaceBatch => space_batch,
        ParamsKind::Resize => resize,
        ParamsKind::Flex => flex,
        ParamsKind::BatchMatMul => batch_matmul,
        ParamsKind::Block => block,
        ParamsKind::Cumsum => cumsum,
        ParamsKind::Subgraphs => subgraphs,
    }
}

/// The parameter words of `op`, whose output is `output`, or why the runtime
/// cannot run it. The operator table's `runtime` column says which
/// parameters the op's record carries.
pub(super) fn op_params(
    model: &Model<'_>,
    op: &Operator<'_>,
    output: &Tensor<'_>,
) -> Result<Words, String> {
    let kind = super::image_opcode(op)
        .and_then(|c| opcode::runtime_params(i32::from(c)))
        .ok_or_else(|| format!("{} has no kernel in the microarena runtime", op.name()))?;
    lowering(kind)(&OpView { model, op, output })
}

/// Custom ops: the FlexBuffers options map's values, by position (see
/// `FlexParams`); an op without options gets zeros.
fn flex(v: &OpView<'_, '_>) -> Result<Words, String> {
    let mut w = [0; rl::OP_PARAMS];
    if v.op.custom_options.is_empty() {
        return Ok(w);
    }
    let values = crate::read::flex::map_values(v.op.custom_options)
        .ok_or("custom options are not a FlexBuffers map of numbers")?;
    if values.len() > rl::OP_PARAMS {
        return Err(format!(
            "{} custom options; at most {} fit",
            values.len(),
            rl::OP_PARAMS
        ));
    }
    for (d, &x) in w.iter_mut().zip(&values) {
        // ElementAsInt32 truncates to int32, as this does.
        *d = x as i32;
    }
    Ok(FlexParams { values: w }.to_words())
}

/// Ops whose kernels read everything from their tensors.
fn no_params(_: &OpView<'_, '_>) -> Result<Words, String> {
    Ok([0; rl::OP_PARAMS])
}

/// CONV_2D, DEPTHWISE_CONV_2D and the pools: the window, checked against
/// the tensors (the output size must follow from it).
fn window(v: &OpView<'_, '_>) -> Result<Words, String> {
    if v.code() == opcode::TRANSPOSE_CONV {
        return transpose_window(v);
    }
    let input = v.input(0)?;
    if input.shape.len() != 4 || v.output.shape.len() != 4 {
        return Err("input and output must be 4-D (NHWC)".into());
    }
    let (ih, iw) = (input.shape[1], input.shape[2]);
    let (padding, sw, sh, dw, dh, fw, fh, mult) = match (&v.op.options, v.code()) {
        (OpOptions::Conv(c), opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D) => {
            let f = v.input(1)?;
            if f.shape.len() != 4 {
                return Err("filter must be 4-D".into());
            }
            (
                c.padding,
                c.stride_w,
                c.stride_h,
                c.dilation_w,
                c.dilation_h,
                f.shape[2],
                f.shape[1],
                c.depth_multiplier,
            )
        }
        (OpOptions::Pool(o), _) => (
            o.padding, o.stride_w, o.stride_h, 1, 1, o.filter_w, o.filter_h, 1,
        ),
        _ => return Err("options are missing".into()),
    };
    if sw <= 0 || sh <= 0 || dw <= 0 || dh <= 0 || fw <= 0 || fh <= 0 {
        return Err("strides, dilations and filter sizes must be positive".into());
    }
    let oh = out_size(padding, ih, fh, sh, dh);
    let ow = out_size(padding, iw, fw, sw, dw);
    if oh != v.output.shape[1] || ow != v.output.shape[2] {
        return Err(format!(
            "output shape {:?} does not match the computed {oh}x{ow}",
            v.output.shape
        ));
    }
    // Both fit i32: the output size matched the model's shape above.
    let pad = |image: i32, filter: i32, stride: i32, dilation: i32, out: i32| {
        geometry::padding_before(
            image.into(),
            filter.into(),
            stride.into(),
            dilation.into(),
            out.into(),
        )
        .min(i64::from(i32::MAX)) as i32
    };
    Ok(WindowParams {
        pad_w: pad(iw, fw, sw, dw, ow),
        pad_h: pad(ih, fh, sh, dh, oh),
        stride_w: sw,
        stride_h: sh,
        dilation_w: dw,
        dilation_h: dh,
        filter_w: fw,
        filter_h: fh,
        depth_multiplier: mult,
    }
    .to_words())
}

/// TRANSPOSE_CONV: strides, the filter's size and TFLM's padding, which
/// `transpose_conv.cc` derives from the *output* size taken as a conv's
/// image (`ComputePaddingHeightWidth` with dilation 1).
fn transpose_window(v: &OpView<'_, '_>) -> Result<Words, String> {
    let c = match &v.op.options {
        OpOptions::Conv(c) => *c,
        _ => return Err("options are missing".into()),
    };
    let f = v.input(1)?;
    if f.shape.len() != 4 || v.output.shape.len() != 4 {
        return Err("filter and output must be 4-D".into());
    }
    let (fh, fw) = (f.shape[1], f.shape[2]);
    if c.stride_w <= 0 || c.stride_h <= 0 || fw <= 0 || fh <= 0 {
        return Err("strides and filter sizes must be positive".into());
    }
    let pad = |image: i32, filter: i32, stride: i32| {
        let out = out_size(c.padding, image, filter, stride, 1);
        geometry::padding_before(image.into(), filter.into(), stride.into(), 1, out.into())
            .clamp(0, i64::from(i32::MAX)) as i32
    };
    Ok(WindowParams {
        pad_w: pad(v.output.shape[2], fw, c.stride_w),
        pad_h: pad(v.output.shape[1], fh, c.stride_h),
        stride_w: c.stride_w,
        stride_h: c.stride_h,
        dilation_w: 1,
        dilation_h: 1,
        filter_w: fw,
        filter_h: fh,
        depth_multiplier: 1,
    }
    .to_words())
}

/// UNIDIRECTIONAL_SEQUENCE_LSTM.
fn lstm(v: &OpView<'_, '_>) -> Result<Words, String> {
    let o = match v.op.options {
        OpOptions::Lstm(o) => o,
        _ => return Err("options are missing".into()),
    };
    Ok(LstmParams {
        time_major: o.time_major,
        cell_clip: o.cell_clip,
        proj_clip: o.proj_clip,
    }
    .to_words())
}

/// SVDF.
fn svdf(v: &OpView<'_, '_>) -> Result<Words, String> {
    let rank = match v.op.options {
        OpOptions::Svdf { rank, .. } => rank,
        _ => 1,
    };
    Ok(SvdfParams { rank }.to_words())
}

/// SOFTMAX.
fn softmax(v: &OpView<'_, '_>) -> Result<Words, String> {
    let beta = match v.op.options {
        OpOptions::Softmax { beta } => beta,
        _ => 1.0,
    };
    Ok(SoftmaxParams { beta }.to_words())
}

/// CONCATENATION and PACK: the axis, made non-negative against the output's
/// rank (PACK's new axis is an output axis: pack.cc adds the output's rank).
fn concatenation(v: &OpView<'_, '_>) -> Result<Words, String> {
    let axis = match v.op.options {
        OpOptions::Concatenation { axis, .. } => axis,
        OpOptions::Pack { values_count, axis } => {
            // pack.cc reads `values_count` inputs, whatever the node has.
            if usize::try_from(values_count).ok() != Some(v.op.inputs.len()) {
                return Err(format!(
                    "values_count {values_count} differs from the {} inputs",
                    v.op.inputs.len()
                ));
            }
            axis
        }
        // Without options TFLM's PACK copies nothing (values_count 0).
        _ if v.code() == opcode::PACK => return Err("PACK options are missing".into()),
        _ => 0,
    };
    let rank = v.output.shape.len() as i32;
    let a = if axis < 0 { axis + rank } else { axis };
    if a < 0 || a >= rank {
        return Err(format!("axis {axis} is out of range"));
    }
    Ok(ConcatParams { axis: a }.to_words())
}

/// STRIDED_SLICE: every axis resolved from constant begin/end/strides.
fn strided_slice(v: &OpView<'_, '_>) -> Result<Words, String> {
    let o = match v.op.options {
        OpOptions::StridedSlice(o) => o,
        _ => Default::default(),
    };
    if o.ellipsis_mask != 0 || o.new_axis_mask != 0 || o.offset {
        return Err("ellipsis_mask, new_axis_mask and offset are not supported".into());
    }
    let input = v.input(0)?;
    let begin =
        const_i32s(v.model, v.op.input(1)).ok_or("begin must be a constant int32 tensor")?;
    let end = const_i32s(v.model, v.op.input(2)).ok_or("end must be a constant int32 tensor")?;
    let strides =
        const_i32s(v.model, v.op.input(3)).ok_or("strides must be a constant int32 tensor")?;
    let rank = input.shape.len();
    if rank > MAX_SLICE_RANK || begin.len() < rank || end.len() < rank || strides.len() < rank {
        return Err("rank above 5 or short begin/end/strides".into());
    }
    let mut p = SliceParams {
        rank: rank as i32,
        ..Default::default()
    };
    for ax in 0..rank {
        let bit = |mask: i32| mask & (1 << ax) != 0;
        let stride = strides[ax];
        let SliceAxis { start, stop, .. } = slice_axis(
            input.shape[ax],
            begin[ax],
            end[ax],
            stride,
            bit(o.begin_mask),
            bit(o.end_mask),
            bit(o.shrink_axis_mask),
        )
        .ok_or("stride 0")?;
        p.start[ax] = start;
        p.stop[ax] = stop;
        p.stride[ax] = stride;
    }
    Ok(p.to_words())
}

/// PAD, PADV2 and MIRROR_PAD: constant paddings, non-negative (MIRROR_PAD's
/// may be int64, as TFLM's kernel reads either).
fn pad(v: &OpView<'_, '_>) -> Result<Words, String> {
    let input = v.input(0)?;
    let mode = match v.op.options {
        OpOptions::MirrorPad { reflect: true } => PAD_REFLECT,
        OpOptions::MirrorPad { reflect: false } => PAD_SYMMETRIC,
        _ => PAD_CONSTANT,
    };
    let pads = if mode == PAD_CONSTANT {
        const_i32s(v.model, v.op.input(1))
    } else {
        v.op.input(1).and_then(|t| v.model.const_ints(0, t))
    }
    .ok_or("paddings must be a constant int32 tensor (or int64 for MIRROR_PAD)")?;
    let rank = input.shape.len();
    if rank > MAX_SLICE_RANK || pads.len() != 2 * rank {
        return Err("rank above 5 or malformed paddings".into());
    }
    let mut p = PadParams {
        rank: rank as i32,
        mode,
        ..Default::default()
    };
    for ax in 0..rank {
        if pads[2 * ax] < 0 || pads[2 * ax + 1] < 0 {
            return Err("negative padding".into());
        }
        // A mirror can add at most dim - 1 (REFLECT) or dim (SYMMETRIC) per side.
        let most = input.shape[ax] - i32::from(mode == PAD_REFLECT);
        if mode != PAD_CONSTANT && (pads[2 * ax] > most || pads[2 * ax + 1] > most) {
            return Err("MIRROR_PAD: padding wider than the input allows".into());
        }
        p.before[ax] = pads[2 * ax];
        p.after[ax] = pads[2 * ax + 1];
    }
    Ok(p.to_words())
}

/// TRANSPOSE: a constant permutation.
fn transpose(v: &OpView<'_, '_>) -> Result<Words, String> {
    let input = v.input(0)?;
    let perm = const_i32s(v.model, v.op.input(1)).ok_or("perm must be a constant int32 tensor")?;
    let rank = input.shape.len();
    if rank > MAX_TRANSPOSE_RANK || perm.len() != rank {
        return Err("rank above 6 or malformed perm".into());
    }
    let mut p = TransposeParams {
        rank: rank as i32,
        ..Default::default()
    };
    let mut seen = 0u32;
    for (i, &a) in perm.iter().enumerate() {
        let a = if a < 0 { a + rank as i32 } else { a };
        if a < 0 || a >= rank as i32 || seen & (1 << a) != 0 {
            return Err("perm is not a permutation".into());
        }
        seen |= 1 << a;
        p.perm[i] = a;
    }
    Ok(p.to_words())
}

/// MEAN: the reduced axes as a mask.
fn mean(v: &OpView<'_, '_>) -> Result<Words, String> {
    let input = v.input(0)?;
    let axes = const_i32s(v.model, v.op.input(1)).ok_or("axis must be a constant int32 tensor")?;
    let rank = input.shape.len() as i32;
    let mut mask = 0i32;
    for &a in &axes {
        let a = if a < 0 { a + rank } else { a };
        if a < 0 || a >= rank {
            return Err("axis out of range".into());
        }
        mask |= 1 << a;
    }
    Ok(MeanParams {
        axis_mask: mask,
        keep_dims: matches!(v.op.options, OpOptions::Reducer { keep_dims: true }),
    }
    .to_words())
}

/// LEAKY_RELU: alpha (the schema's default, 0, when options are missing).
fn leaky_relu(v: &OpView<'_, '_>) -> Result<Words, String> {
    let alpha = match v.op.options {
        OpOptions::LeakyRelu { alpha } => alpha,
        _ => 0.0,
    };
    Ok(LeakyReluParams { alpha }.to_words())
}

/// ARG_MAX / ARG_MIN: the first value of the constant int32 axis input,
/// made non-negative (TFLM reads only `axis[0]`).
fn axis_input(v: &OpView<'_, '_>) -> Result<Words, String> {
    let input = v.input(0)?;
    let axes = const_i32s(v.model, v.op.input(1)).ok_or("axis must be a constant int32 tensor")?;
    let rank = input.shape.len() as i32;
    let a = *axes.first().ok_or("axis is empty")?;
    let a = if a < 0 { a + rank } else { a };
    if a < 0 || a >= rank {
        return Err(format!("axis {a} is out of range"));
    }
    Ok(AxisParams { axis: a }.to_words())
}

/// SPLIT (axis: constant input 0, data: input 1), SPLIT_V (data: input 0,
/// axis: constant input 2) and UNPACK (axis: option): the axis made
/// non-negative and checked against the data's rank as the kernels'
/// Eval does (tflite-micro 90b983c2 `kernels/split.cc`, `split_v.cc`,
/// `unpack.cc`); the outputs' shapes are checked by the runtime's Prepare.
fn split(v: &OpView<'_, '_>) -> Result<Words, String> {
    let (data, axis) = match v.op.opcode.0 as u8 {
        opcode::SPLIT => (
            v.input(1)?,
            const_i32s(v.model, v.op.input(0)).ok_or("axis must be a constant int32 tensor")?,
        ),
        opcode::SPLIT_V => (
            v.input(0)?,
            const_i32s(v.model, v.op.input(2)).ok_or("axis must be a constant int32 tensor")?,
        ),
        _ => match v.op.options {
            OpOptions::Unpack { axis, .. } => (v.input(0)?, alloc::vec![axis]),
            _ => return Err("UNPACK options are missing".into()),
        },
    };
    let rank = data.shape.len() as i32;
    let a = *axis.first().ok_or("axis is empty")?;
    let a = if a < 0 { a + rank } else { a };
    if a < 0 || a >= rank {
        return Err(format!("axis {a} is out of range for rank {rank}"));
    }
    // The runtime's Prepare (kernels/split.rs) restated: the types the
    // kernels register, and outputs that tile the input along the axis.
    use rl::dtype::{F32, I8, I16, I32};
    if ![F32, I8, I16, I32].contains(&data.dtype.code()) {
        return Err("only float32, int8, int16 or int32".into());
    }
    let ax = a as usize;
    let unpack = v.op.opcode.0 as u8 == opcode::UNPACK;
    let mut covered = 0i64;
    for k in 0..v.op.outputs.len() {
        let out =
            v.op.output(k)
                .and_then(|t| v.model.main().tensors.get(t))
                .ok_or("an output is missing")?;
        if out.dtype != data.dtype {
            return Err("outputs must have the input's type".into());
        }
        let mut want = data.shape.clone();
        if unpack {
            if ax < want.len() {
                want.remove(ax);
            }
            covered += 1;
        } else if let (Some(w), Some(&d)) = (want.get_mut(ax), out.shape.get(ax)) {
            *w = d;
            covered += i64::from(d);
        }
        if out.shape != want {
            return Err(format!(
                "output {k} has shape {:?}, not the input's {:?} cut along axis {a}",
                out.shape, data.shape
            ));
        }
    }
    let along = data.shape.get(ax).copied().unwrap_or(0);
    if covered != i64::from(along) {
        return Err(format!(
            "the outputs cover {covered} of the {along} elements along axis {a}"
        ));
    }
    Ok(AxisParams { axis: a }.to_words())
}

/// BATCH_MATMUL: the adjoint flags (absent options: neither).
fn batch_matmul(v: &OpView<'_, '_>) -> Result<Words, String> {
    let (adj_x, adj_y) = match v.op.options {
        OpOptions::BatchMatMul { adj_x, adj_y } => (adj_x, adj_y),
        _ => (false, false),
    };
    Ok(BatchMatMulParams { adj_x, adj_y }.to_words())
}

/// CUMSUM: exclusive and reverse (absent options: neither).
fn cumsum(v: &OpView<'_, '_>) -> Result<Words, String> {
    let (exclusive, reverse) = match v.op.options {
        OpOptions::Cumsum { exclusive, reverse } => (exclusive, reverse),
        _ => (false, false),
    };
    Ok(CumsumParams { exclusive, reverse }.to_words())
}

/// DEPTH_TO_SPACE and SPACE_TO_DEPTH: the block size, positive (TFLM's
/// Prepare; the runtime checks it against the shapes).
fn block(v: &OpView<'_, '_>) -> Result<Words, String> {
    let block_size = match v.op.options {
        OpOptions::BlockSize { block_size } => block_size,
        _ => return Err("block size options are missing".into()),
    };
    if block_size < 1 {
        return Err(format!("block size {block_size} must be positive"));
    }
    Ok(BlockParams { block_size }.to_words())
}

/// GATHER: axis and batch_dims made non-negative and checked as TFLM's
/// Prepare does.
fn gather(v: &OpView<'_, '_>) -> Result<Words, String> {
    let (axis, batch_dims) = match v.op.options {
        OpOptions::Gather { axis, batch_dims } => (axis, batch_dims),
        _ => (0, 0),
    };
    let rank = v.input(0)?.shape.len() as i32;
    let coords_rank = v.input(1)?.shape.len() as i32;
    let axis = if axis < 0 { axis + rank } else { axis };
    let batch_dims = if batch_dims < 0 {
        batch_dims + coords_rank
    } else {
        batch_dims
    };
    if !(0..rank).contains(&axis)
        || !(0..rank).contains(&batch_dims)
        || batch_dims > axis
        || batch_dims > coords_rank
    {
        return Err(format!(
            "axis {axis} / batch_dims {batch_dims} out of range"
        ));
    }
    Ok(GatherParams { axis, batch_dims }.to_words())
}

/// SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND: constant block shape and paddings
/// (or crops), 3-D or 4-D tensors as TFLM's Prepare requires.
fn space_batch(v: &OpView<'_, '_>) -> Result<Words, String> {
    let rank = v.input(0)?.shape.len();
    if !(3..=4).contains(&rank) || v.output.shape.len() != rank {
        return Err("input and output must both be 3-D or 4-D".into());
    }
    let block =
        const_i32s(v.model, v.op.input(1)).ok_or("block_shape must be a constant int32 tensor")?;
    let pads = const_i32s(v.model, v.op.input(2))
        .ok_or("paddings/crops must be a constant int32 tensor")?;
    let spatial = rank - 2;
    if block.len() < spatial || pads.len() < 2 * spatial {
        return Err("block_shape or paddings/crops too short".into());
    }
    let p = SpaceBatchParams {
        block_h: block[0],
        block_w: if rank == 4 { block[1] } else { 1 },
        before_h: pads[0],
        before_w: if rank == 4 { pads[2] } else { 0 },
    };
    if p.block_h < 1 || p.block_w < 1 || p.before_h < 0 || p.before_w < 0 {
        return Err("block sizes must be positive and paddings/crops non-negative".into());
    }
    // TFLM fills SPACE_TO_BATCH_ND's padding with a value its Prepare never
    // sets (uninitialized arena bytes): there is no output to match.
    if v.code() == opcode::SPACE_TO_BATCH_ND && pads.iter().take(2 * spatial).any(|&x| x != 0) {
        return Err("SPACE_TO_BATCH_ND with padding: TFLM pads with an uninitialized value".into());
    }
    if v.code() == opcode::SPACE_TO_BATCH_ND {
        let (i, o) = (&v.input(0)?.shape, &v.output.shape);
        let w = |t: &[i32]| if rank == 4 { t[2] } else { 1 };
        if o[1] * p.block_h != i[1] || w(o) * p.block_w != w(i) {
            return Err("SPACE_TO_BATCH_ND output size differs from the blocked input".into());
        }
    }
    Ok(p.to_words())
}

/// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: 4-D input and output of one batch and depth, and
/// a constant size tensor equal to the output's height and width (TFLM takes
/// the size from that tensor; the runtime from the output's dims).
fn resize(v: &OpView<'_, '_>) -> Result<Words, String> {
    let (i, o) = (&v.input(0)?.shape, &v.output.shape);
    if i.len() != 4 || o.len() != 4 {
        return Err("input and output must be 4-D".into());
    }
    if i[0] != o[0] || i[3] != o[3] {
        return Err("batch and depth must be the input's".into());
    }
    let size = const_i32s(v.model, v.op.input(1)).ok_or("size must be a constant int32 tensor")?;
    if size[..] != o[1..3] {
        return Err(format!(
            "size {size:?} differs from the output's height and width {:?}",
            &o[1..3]
        ));
    }
    let (align_corners, half_pixel_centers) = match v.op.options {
        OpOptions::Resize {
            align_corners,
            half_pixel_centers,
        } => (align_corners, half_pixel_centers),
        _ => (false, false),
    };
    if v.code() == opcode::RESIZE_BILINEAR && align_corners && half_pixel_centers {
        // TFLM's Prepare refuses the pair.
        return Err("half_pixel_centers with align_corners".into());
    }
    Ok(ResizeParams {
        align_corners,
        half_pixel_centers,
    }
    .to_words())
}

/// IF, WHILE and CALL_ONCE: the subgraphs they call, as the model numbers
/// them (the image keeps the model's subgraph order).
pub(super) fn called_subgraphs(op: &Operator<'_>) -> Result<Words, String> {
    let (first, second) = match op.options {
        OpOptions::If {
            then_subgraph,
            else_subgraph,
        } => (then_subgraph, else_subgraph),
        OpOptions::While {
            cond_subgraph,
            body_subgraph,
        } => (cond_subgraph, body_subgraph),
        OpOptions::CallOnce { init_subgraph } => (init_subgraph, 0),
        _ => return Err("its options (the subgraphs it calls) are missing".into()),
    };
    Ok(SubgraphParams { first, second }.to_words())
}

fn subgraphs(v: &OpView<'_, '_>) -> Result<Words, String> {
    called_subgraphs(v.op)
}
