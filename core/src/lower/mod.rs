//! Lowering a validated [`Model`] into the microarena *program image* the
//! no-heap device runtime (`microarena-runtime`) executes, and the exact arena
//! that runtime will use.
//!
//! The device carries no flatbuffer verifier and no planner: everything that
//! needs a heap happens here, on the host or at build time. The image format
//! is described in [`crate::runtime_layout`]; the head layout (offset of every
//! activation and scratch buffer) is core's greedy plan, computed from the
//! lifetimes TFLM would give the same buffers, and the tail is the sum of
//! [`crate::runtime_layout::op_tail_bytes`] over the operators.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::geometry::{self, SliceAxis, out_size, slice_axis};
use crate::plan::PlannerKind;
use crate::read::model::{Model, Operator, Tensor};
use crate::read::ops::{Activation, OpOptions};
use crate::runtime_layout::{self as rl, opcode};
use crate::tflm::analysis::plan_input;
use crate::tflm::lifetime::{self, BufferKind, ScratchRequest};

/// Why a model cannot be lowered for the device runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LowerError {
    /// The runtime has no kernel for this operator.
    UnsupportedOp {
        /// Index of the operator in subgraph 0.
        op_index: usize,
        /// Builtin name.
        name: String,
    },
    /// The operator is supported, but not in this configuration.
    Unsupported {
        /// Index of the operator in subgraph 0 (`usize::MAX` for model-level issues).
        op_index: usize,
        /// What is not supported, for a person.
        why: String,
    },
    /// A tensor cannot be represented (dynamic shape, rank, type, variable).
    Tensor {
        /// Tensor index.
        tensor: usize,
        /// What is wrong.
        why: String,
    },
    /// A size does not fit the image's 32-bit fields or lifetimes could not be computed.
    Internal(String),
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::UnsupportedOp { op_index, name } => write!(
                f,
                "operator {op_index} ({name}) has no kernel in the microarena runtime"
            ),
            LowerError::Unsupported { op_index, why } if *op_index == usize::MAX => {
                write!(f, "the microarena runtime cannot run this model: {why}")
            }
            LowerError::Unsupported { op_index, why } => {
                write!(f, "operator {op_index}: {why}")
            }
            LowerError::Tensor { tensor, why } => write!(f, "tensor {tensor}: {why}"),
            LowerError::Internal(why) => write!(f, "cannot lower the model: {why}"),
        }
    }
}

impl core::error::Error for LowerError {}

/// The arena the microarena runtime uses for a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuntimeArena {
    /// Planned activations and scratch buffers (core's greedy plan).
    pub head_bytes: u64,
    /// OpData the runtime's Prepare allocates, plus the variable region.
    pub tail_bytes: u64,
    /// Variable tensors (LSTM/SVDF state), part of `tail_bytes`.
    pub variable_bytes: u64,
    /// `head + tail`: the smallest arena `Interpreter::new` accepts, and the
    /// high-water mark it reports.
    pub total_bytes: u64,
}

/// Predicts the microarena runtime's arena for `model`.
pub fn runtime_arena(model: &Model<'_>) -> Result<RuntimeArena, LowerError> {
    let l = prepare(model)?;
    Ok(RuntimeArena {
        head_bytes: l.head,
        tail_bytes: l.tail,
        variable_bytes: l.var_bytes,
        total_bytes: l.head + l.tail,
    })
}

/// Lowers `model` into a program image for the microarena runtime.
pub fn lower(model: &Model<'_>) -> Result<Vec<u8>, LowerError> {
    let l = prepare(model)?;
    let sg = model.main();
    let n_t = sg.tensors.len();
    let n_o = sg.operators.len();
    let tensors_off = rl::HEADER_BYTES;
    let ops_off = tensors_off + n_t * rl::TENSOR_BYTES;
    let io_off = ops_off + n_o * rl::OP_BYTES;
    let data_off = align4(io_off + 4 * (sg.inputs.len() + sg.outputs.len()));

    let mut data: Vec<u8> = Vec::new();
    let mut trecs: Vec<u8> = Vec::with_capacity(n_t * rl::TENSOR_BYTES);
    for (ti, t) in sg.tensors.iter().enumerate() {
        let mut rec = [0u8; rl::TENSOR_BYTES];
        rec[rl::tensor::DTYPE] = t.dtype.code() as u8;
        rec[rl::tensor::RANK] = t.shape.len() as u8;
        for (i, &d) in t.shape.iter().enumerate() {
            put(&mut rec, rl::tensor::DIMS + 4 * i, d as u32);
        }
        let bytes = t.bytes.unwrap_or(0);
        let (storage, location) =
            if let Some(&off) = l.variable_offset.get(ti).and_then(|o| o.as_ref()) {
                (rl::STORAGE_VARIABLE, off)
            } else if t.has_data {
                let d = model.tensor_data(0, ti).unwrap_or(&[]);
                if (d.len() as u64) < bytes {
                    return Err(LowerError::Tensor {
                        tensor: ti,
                        why: format!(
                            "constant data has {} bytes, the shape needs {bytes}",
                            d.len()
                        ),
                    });
                }
                pad4(&mut data);
                let at = data.len();
                data.extend_from_slice(&d[..bytes as usize]);
                (rl::STORAGE_CONST, at as u64)
            } else if let Some(&off) = l.tensor_offset.get(ti).and_then(|o| o.as_ref()) {
                (rl::STORAGE_ARENA, off)
            } else {
                (rl::STORAGE_NONE, 0)
            };
        rec[rl::tensor::STORAGE] = storage;
        put(&mut rec, rl::tensor::LOCATION, fit(location)?);
        put(&mut rec, rl::tensor::BYTES, fit(bytes)?);
        if let Some(q) = &t.quantization {
            put(
                &mut rec,
                rl::tensor::SCALE,
                q.scales.first().copied().unwrap_or(0.0).to_bits(),
            );
            put(
                &mut rec,
                rl::tensor::ZERO_POINT,
                q.zero_points.first().copied().unwrap_or(0) as i32 as u32,
            );
            put(
                &mut rec,
                rl::tensor::QUANT_DIM,
                q.quantized_dimension as u32,
            );
            pad4(&mut data);
            put(&mut rec, rl::tensor::SCALES_OFF, fit(data.len() as u64)?);
            put(&mut rec, rl::tensor::N_SCALES, fit(q.scales.len() as u64)?);
            for s in &q.scales {
                data.extend_from_slice(&s.to_le_bytes());
            }
        }
        trecs.extend_from_slice(&rec);
    }

    let mut orecs: Vec<u8> = Vec::with_capacity(n_o * rl::OP_BYTES);
    for (oi, op) in sg.operators.iter().enumerate() {
        let mut rec = [0u8; rl::OP_BYTES];
        rec[rl::op::OPCODE] = op.opcode.0 as u8;
        rec[rl::op::N_INPUTS] = op.inputs.len() as u8;
        rec[rl::op::ACTIVATION] = activation(op).code() as u8;
        for i in 0..rl::MAX_OP_INPUTS {
            let v = match op.inputs.get(i) {
                Some(&t) if t >= 0 => t as u16,
                _ => rl::NO_TENSOR,
            };
            rec[rl::op::INPUTS + 2 * i..rl::op::INPUTS + 2 * i + 2]
                .copy_from_slice(&v.to_le_bytes());
        }
        let out = op.output(0).unwrap_or(0) as u16;
        rec[rl::op::OUTPUT..rl::op::OUTPUT + 2].copy_from_slice(&out.to_le_bytes());
        if let Some(&(off, bytes)) = l.scratch.get(oi).and_then(|s| s.as_ref()) {
            put(&mut rec, rl::op::SCRATCH_OFF, fit(off)?);
            put(&mut rec, rl::op::SCRATCH_BYTES, fit(bytes)?);
        }
        for (i, p) in l.params.get(oi).into_iter().flatten().enumerate() {
            put(&mut rec, rl::op::PARAMS + 4 * i, *p as u32);
        }
        orecs.extend_from_slice(&rec);
    }

    let mut img = alloc::vec![0u8; data_off];
    img[..4].copy_from_slice(&rl::MAGIC);
    let h = |img: &mut Vec<u8>, at: usize, v: u64| -> Result<(), LowerError> {
        put(img, at, fit(v)?);
        Ok(())
    };
    h(&mut img, rl::header::VERSION, u64::from(rl::VERSION))?;
    h(&mut img, rl::header::N_TENSORS, n_t as u64)?;
    h(&mut img, rl::header::N_OPS, n_o as u64)?;
    h(&mut img, rl::header::N_INPUTS, sg.inputs.len() as u64)?;
    h(&mut img, rl::header::N_OUTPUTS, sg.outputs.len() as u64)?;
    h(&mut img, rl::header::HEAD_BYTES, l.head)?;
    h(&mut img, rl::header::TAIL_BYTES, l.tail)?;
    h(&mut img, rl::header::VAR_BYTES, l.var_bytes)?;
    h(&mut img, rl::header::TENSORS_OFF, tensors_off as u64)?;
    h(&mut img, rl::header::OPS_OFF, ops_off as u64)?;
    h(&mut img, rl::header::IO_OFF, io_off as u64)?;
    h(&mut img, rl::header::DATA_OFF, data_off as u64)?;
    h(&mut img, rl::header::DATA_LEN, data.len() as u64)?;
    h(
        &mut img,
        rl::header::IMAGE_LEN,
        (data_off + data.len()) as u64,
    )?;
    img[tensors_off..ops_off].copy_from_slice(&trecs);
    img[ops_off..io_off].copy_from_slice(&orecs);
    for (i, &t) in sg.inputs.iter().chain(&sg.outputs).enumerate() {
        put(&mut img, io_off + 4 * i, t as u32);
    }
    img.extend_from_slice(&data);
    Ok(img)
}

/// Everything [`lower`] and [`runtime_arena`] share.
struct Lowered {
    head: u64,
    tail: u64,
    /// Bytes of the variable region (part of `tail`).
    var_bytes: u64,
    /// Offset of each variable tensor in the variable region.
    variable_offset: Vec<Option<u64>>,
    /// Head offset of each tensor of subgraph 0 that is planned.
    tensor_offset: Vec<Option<u64>>,
    /// (offset, bytes) of each op's scratch buffer.
    scratch: Vec<Option<(u64, u64)>>,
    /// Precomputed parameters per op.
    params: Vec<[i32; rl::OP_PARAMS]>,
}

fn prepare(model: &Model<'_>) -> Result<Lowered, LowerError> {
    if model.subgraphs.len() != 1 {
        return Err(LowerError::Unsupported {
            op_index: usize::MAX,
            why: format!(
                "it has {} subgraphs; only single-subgraph models run",
                model.subgraphs.len()
            ),
        });
    }
    let sg = model.main();
    if sg.tensors.len() >= usize::from(rl::NO_TENSOR) {
        return Err(LowerError::Internal(format!(
            "{} tensors exceed the image's 16-bit index",
            sg.tensors.len()
        )));
    }
    // Operators first, so a model with an op the runtime lacks is refused by naming that op.
    for (oi, op) in sg.operators.iter().enumerate() {
        if !rl::op_supported(op.opcode.0) {
            return Err(LowerError::UnsupportedOp {
                op_index: oi,
                name: op.name().into(),
            });
        }
    }
    for (ti, t) in sg.tensors.iter().enumerate() {
        let err = |why: String| Err(LowerError::Tensor { tensor: ti, why });
        if t.shape.len() > rl::MAX_RANK {
            return err(format!("rank {} exceeds {}", t.shape.len(), rl::MAX_RANK));
        }
        if t.shape.iter().any(|&d| d < 0) {
            return err(format!("dynamic shape {:?}", t.shape));
        }
        if rl::dtype_size(t.dtype.code()).is_none() {
            return err(format!("type {} is not supported by the runtime", t.dtype));
        }
    }

    let mut scratch_req = Vec::new();
    let mut params = Vec::with_capacity(sg.operators.len());
    let mut tail = 0u64;
    for (oi, op) in sg.operators.iter().enumerate() {
        let code = op.opcode.0;
        if !rl::op_supported(code) {
            return Err(LowerError::UnsupportedOp {
                op_index: oi,
                name: op.name().into(),
            });
        }
        let unsupported = |why: String| LowerError::Unsupported {
            op_index: oi,
            why: format!("{}: {why}", op.name()),
        };
        if op.inputs.len() > rl::MAX_OP_INPUTS {
            return Err(unsupported(format!(
                "{} inputs; at most {} are supported",
                op.inputs.len(),
                rl::MAX_OP_INPUTS
            )));
        }
        if op.outputs.len() != 1 {
            return Err(unsupported(format!(
                "{} outputs; exactly one is supported",
                op.outputs.len()
            )));
        }
        let out = op
            .output(0)
            .and_then(|t| sg.tensors.get(t))
            .ok_or_else(|| unsupported("no output".into()))?;
        let p = op_params(model, op).map_err(unsupported)?;
        params.push(p);
        let code8 = code as u8;
        let channels = match code8 {
            opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D => {
                out.shape.last().copied().unwrap_or(1).max(1) as u32
            }
            opcode::FULLY_CONNECTED => op
                .input(1)
                .and_then(|f| sg.tensors.get(f))
                .and_then(|f| f.quantization.as_ref())
                .map_or(1, |q| q.scales.len().max(1) as u32),
            _ => 1,
        };
        tail += u64::from(rl::op_tail_bytes(code8, out.dtype.code(), channels));
        let (a, b) = scratch_args(model, op, out);
        let s = rl::op_scratch_bytes(code8, out.dtype.code(), a, b);
        if s > 0 {
            scratch_req.push(ScratchRequest {
                subgraph: 0,
                op_index: oi,
                bytes: u64::from(s),
            });
        }
    }

    // Variable tensors (LSTM/SVDF state): a region at the bottom of the tail,
    // each 4-aligned, in tensor order. They keep their address for the
    // interpreter's life (TFLM keeps them in its tail too, §4.1 item 14).
    let mut variable_offset = alloc::vec![None; sg.tensors.len()];
    let mut var_bytes = 0u64;
    for (ti, t) in sg.tensors.iter().enumerate() {
        if t.is_variable && !t.has_data {
            variable_offset[ti] = Some(var_bytes);
            var_bytes += u64::from(rl::align4(fit(t.bytes.unwrap_or(0))?));
        }
    }
    tail += var_bytes;

    // The runtime plans online only: drop any offline plan before computing lifetimes.
    let mut online = model.clone();
    online.offline_plan = None;
    let lifetimes = lifetime::allocation_info(&online, &scratch_req, &|_, _| false)
        .map_err(|e| LowerError::Internal(format!("{e}")))?;
    let (planned, input) = plan_input(&lifetimes.infos);
    let plan = PlannerKind::TflmGreedy
        .plan(&input)
        .map_err(|e| LowerError::Internal(format!("{e}")))?;
    let mut tensor_offset = alloc::vec![None; sg.tensors.len()];
    let mut scratch = alloc::vec![None; sg.operators.len()];
    for (info, &off) in planned.iter().zip(&plan.offsets) {
        let off = u64::try_from(off)
            .map_err(|_| LowerError::Internal("negative planned offset".into()))?;
        match info.kind {
            BufferKind::Tensor { tensor, .. } => {
                if let Some(slot) = tensor_offset.get_mut(tensor) {
                    *slot = Some(off);
                }
            }
            BufferKind::Scratch { op_index, .. } => {
                if let Some(slot) = scratch.get_mut(op_index) {
                    *slot = Some((off, info.bytes));
                }
            }
        }
    }
    fit(plan.head_bytes + tail)?;
    Ok(Lowered {
        head: plan.head_bytes,
        tail,
        var_bytes,
        variable_offset,
        tensor_offset,
        scratch,
        params,
    })
}

fn activation(op: &Operator<'_>) -> Activation {
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

/// The `a`, `b` arguments of [`rl::op_scratch_bytes`] for one op.
fn scratch_args(model: &Model<'_>, op: &Operator<'_>, out: &Tensor<'_>) -> (u32, u32) {
    let sg = model.main();
    let t = |i: usize| op.input(i).and_then(|t| sg.tensors.get(t));
    let dim = |t: Option<&Tensor<'_>>, i: usize| {
        t.and_then(|t| t.shape.get(i))
            .map_or(0, |&d| d.max(0) as u32)
    };
    let sat = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
    match op.opcode.0 as u8 {
        opcode::MEAN => (sat(out.elements()), 0),
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let time_major = matches!(op.options, OpOptions::Lstm(o) if o.time_major);
            let batch = dim(t(0), usize::from(time_major));
            (batch.saturating_mul(dim(t(18), 1)), 0)
        }
        opcode::SVDF => {
            let rank = match op.options {
                OpOptions::Svdf { rank, .. } if rank > 0 => rank as u32,
                _ => 1,
            };
            let batch = dim(t(0), 0);
            let filters = dim(t(1), 0);
            (
                batch.saturating_mul(filters),
                batch.saturating_mul(filters / rank),
            )
        }
        _ => (0, 0),
    }
}

fn const_i32s(model: &Model<'_>, t: Option<usize>) -> Option<Vec<i32>> {
    let t = t?;
    let tensor = model.main().tensors.get(t)?;
    if tensor.dtype.code() != rl::dtype::I32 {
        return None;
    }
    let d = model.tensor_data(0, t)?;
    Some(
        d.chunks_exact(4)
            .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

fn op_params(model: &Model<'_>, op: &Operator<'_>) -> Result<[i32; rl::OP_PARAMS], String> {
    let sg = model.main();
    let tensor = |i: usize| -> Result<&Tensor<'_>, String> {
        op.input(i)
            .and_then(|t| sg.tensors.get(t))
            .ok_or_else(|| format!("input {i} is missing"))
    };
    let output = op
        .output(0)
        .and_then(|t| sg.tensors.get(t))
        .ok_or("output is missing")?;
    let mut p = [0i32; rl::OP_PARAMS];
    let code = op.opcode.0 as u8;
    match code {
        opcode::CONV_2D
        | opcode::DEPTHWISE_CONV_2D
        | opcode::AVERAGE_POOL_2D
        | opcode::MAX_POOL_2D => {
            let input = tensor(0)?;
            if input.shape.len() != 4 || output.shape.len() != 4 {
                return Err("input and output must be 4-D (NHWC)".into());
            }
            let (ih, iw) = (input.shape[1], input.shape[2]);
            let (padding, sw, sh, dw, dh, fw, fh, mult) = match (&op.options, code) {
                (OpOptions::Conv(c), opcode::CONV_2D | opcode::DEPTHWISE_CONV_2D) => {
                    let f = tensor(1)?;
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
            if oh != output.shape[1] || ow != output.shape[2] {
                return Err(format!(
                    "output shape {:?} does not match the computed {oh}x{ow}",
                    output.shape
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
            p[0] = pad(iw, fw, sw, dw, ow);
            p[1] = pad(ih, fh, sh, dh, oh);
            p[2] = sw;
            p[3] = sh;
            p[4] = dw;
            p[5] = dh;
            p[6] = fw;
            p[7] = fh;
            p[8] = mult;
        }
        opcode::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let o = match op.options {
                OpOptions::Lstm(o) => o,
                _ => return Err("options are missing".into()),
            };
            p[0] = i32::from(o.time_major);
            p[1] = o.cell_clip.to_bits() as i32;
            p[2] = o.proj_clip.to_bits() as i32;
        }
        opcode::SVDF => {
            p[0] = match op.options {
                OpOptions::Svdf { rank, .. } => rank,
                _ => 1,
            };
        }
        opcode::SOFTMAX => {
            let beta = match op.options {
                OpOptions::Softmax { beta } => beta,
                _ => 1.0,
            };
            p[0] = beta.to_bits() as i32;
        }
        opcode::CONCATENATION => {
            let axis = match op.options {
                OpOptions::Concatenation { axis, .. } => axis,
                _ => 0,
            };
            let rank = output.shape.len() as i32;
            let a = if axis < 0 { axis + rank } else { axis };
            if a < 0 || a >= rank {
                return Err(format!("axis {axis} is out of range"));
            }
            p[0] = a;
        }
        opcode::STRIDED_SLICE => {
            let o = match op.options {
                OpOptions::StridedSlice(o) => o,
                _ => Default::default(),
            };
            if o.ellipsis_mask != 0 || o.new_axis_mask != 0 || o.offset {
                return Err("ellipsis_mask, new_axis_mask and offset are not supported".into());
            }
            let input = tensor(0)?;
            let begin =
                const_i32s(model, op.input(1)).ok_or("begin must be a constant int32 tensor")?;
            let end =
                const_i32s(model, op.input(2)).ok_or("end must be a constant int32 tensor")?;
            let strides =
                const_i32s(model, op.input(3)).ok_or("strides must be a constant int32 tensor")?;
            let rank = input.shape.len();
            if rank > 5 || begin.len() < rank || end.len() < rank || strides.len() < rank {
                return Err("rank above 5 or short begin/end/strides".into());
            }
            p[0] = rank as i32;
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
                p[1 + ax] = start;
                p[6 + ax] = stop;
                p[11 + ax] = stride;
            }
        }
        opcode::PAD => {
            let input = tensor(0)?;
            let pads =
                const_i32s(model, op.input(1)).ok_or("paddings must be a constant int32 tensor")?;
            let rank = input.shape.len();
            if rank > 5 || pads.len() != 2 * rank {
                return Err("rank above 5 or malformed paddings".into());
            }
            p[0] = rank as i32;
            for ax in 0..rank {
                if pads[2 * ax] < 0 || pads[2 * ax + 1] < 0 {
                    return Err("negative padding".into());
                }
                p[1 + ax] = pads[2 * ax];
                p[6 + ax] = pads[2 * ax + 1];
            }
        }
        opcode::TRANSPOSE => {
            let input = tensor(0)?;
            let perm =
                const_i32s(model, op.input(1)).ok_or("perm must be a constant int32 tensor")?;
            let rank = input.shape.len();
            if rank > 6 || perm.len() != rank {
                return Err("rank above 6 or malformed perm".into());
            }
            p[0] = rank as i32;
            let mut seen = 0u32;
            for (i, &a) in perm.iter().enumerate() {
                let a = if a < 0 { a + rank as i32 } else { a };
                if a < 0 || a >= rank as i32 || seen & (1 << a) != 0 {
                    return Err("perm is not a permutation".into());
                }
                seen |= 1 << a;
                p[1 + i] = a;
            }
        }
        opcode::MEAN => {
            let input = tensor(0)?;
            let axes =
                const_i32s(model, op.input(1)).ok_or("axis must be a constant int32 tensor")?;
            let rank = input.shape.len() as i32;
            let mut mask = 0i32;
            for &a in &axes {
                let a = if a < 0 { a + rank } else { a };
                if a < 0 || a >= rank {
                    return Err("axis out of range".into());
                }
                mask |= 1 << a;
            }
            p[0] = mask;
            p[1] = i32::from(matches!(op.options, OpOptions::Reducer { keep_dims: true }));
        }
        _ => {}
    }
    Ok(p)
}

fn put(buf: &mut [u8], at: usize, v: u32) {
    if let Some(s) = buf.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

fn fit(v: u64) -> Result<u32, LowerError> {
    u32::try_from(v)
        .map_err(|_| LowerError::Internal(format!("{v} does not fit the image's 32-bit fields")))
}

fn align4(v: usize) -> usize {
    v.div_ceil(4) * 4
}

fn pad4(data: &mut Vec<u8>) {
    while !data.len().is_multiple_of(4) {
        data.push(0);
    }
}

/// Small `.tflite` models built with the generated flatbuffer API, for the
/// runtime's unit tests and the firmware build (no model files are copied
/// from the corpus).
pub mod testing {
    use alloc::vec::Vec;

    use crate::read::dtype::DType;
    use crate::read::schema as fb;

    /// One tensor of a test model.
    #[derive(Debug, Clone, PartialEq)]
    pub struct TensorSpec {
        /// Shape.
        pub shape: Vec<i32>,
        /// Element type.
        pub dtype: DType,
        /// Constant data (little-endian), `None` for activations.
        pub data: Option<Vec<u8>>,
        /// Scales (empty: not quantized).
        pub scales: Vec<f32>,
        /// Zero points.
        pub zero_points: Vec<i64>,
        /// Per-channel axis.
        pub quantized_dimension: i32,
    }

    impl TensorSpec {
        /// An activation tensor.
        pub fn act(shape: &[i32], dtype: DType, scale: f32, zero_point: i64) -> TensorSpec {
            let (scales, zero_points) = if dtype == DType::F32 {
                (Vec::new(), Vec::new())
            } else {
                (alloc::vec![scale], alloc::vec![zero_point])
            };
            TensorSpec {
                shape: shape.into(),
                dtype,
                data: None,
                scales,
                zero_points,
                quantized_dimension: 0,
            }
        }

        /// A constant tensor.
        pub fn constant(
            shape: &[i32],
            dtype: DType,
            data: Vec<u8>,
            scales: &[f32],
            zero_points: &[i64],
        ) -> TensorSpec {
            TensorSpec {
                shape: shape.into(),
                dtype,
                data: Some(data),
                scales: scales.into(),
                zero_points: zero_points.into(),
                quantized_dimension: 0,
            }
        }

        /// A constant int32 tensor (shapes, axes, paddings, biases).
        pub fn i32s(shape: &[i32], values: &[i32], scales: &[f32]) -> TensorSpec {
            let data = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            let zps = alloc::vec![0; scales.len()];
            TensorSpec::constant(shape, DType::I32, data, scales, &zps)
        }
    }

    /// Builtin options of a test operator.
    #[derive(Debug, Clone, Copy, PartialEq)]
    #[allow(missing_docs)]
    pub enum OptSpec {
        None,
        Conv {
            padding_valid: bool,
            stride: i32,
            activation: i8,
        },
        Depthwise {
            padding_valid: bool,
            stride: i32,
            multiplier: i32,
            activation: i8,
        },
        Pool {
            padding_valid: bool,
            stride: i32,
            filter: i32,
            activation: i8,
        },
        FullyConnected {
            activation: i8,
        },
        Softmax {
            beta: f32,
        },
        Concatenation {
            axis: i32,
        },
        Reducer {
            keep_dims: bool,
        },
        Add {
            activation: i8,
        },
        Mul {
            activation: i8,
        },
        StridedSlice {
            begin_mask: i32,
            end_mask: i32,
            shrink_axis_mask: i32,
        },
    }

    /// One operator of a test model.
    #[derive(Debug, Clone, PartialEq)]
    pub struct OpSpec {
        /// Builtin code.
        pub opcode: i32,
        /// Input tensors (−1 = omitted).
        pub inputs: Vec<i32>,
        /// Output tensors.
        pub outputs: Vec<i32>,
        /// Options.
        pub options: OptSpec,
    }

    /// Serializes a single-subgraph model.
    pub fn build(
        tensors: &[TensorSpec],
        ops: &[OpSpec],
        inputs: &[i32],
        outputs: &[i32],
    ) -> Vec<u8> {
        let mut b = flatbuffers::FlatBufferBuilder::new();
        // Buffer 0 is the empty sentinel.
        let mut buffers = alloc::vec![fb::Buffer::create(&mut b, &fb::BufferArgs::default())];
        let mut fb_tensors = Vec::new();
        for t in tensors {
            let buffer = match &t.data {
                Some(d) => {
                    let data = b.create_vector(d);
                    buffers.push(fb::Buffer::create(
                        &mut b,
                        &fb::BufferArgs {
                            data: Some(data),
                            offset: 0,
                            size: 0,
                        },
                    ));
                    (buffers.len() - 1) as u32
                }
                None => 0,
            };
            let quantization = (!t.scales.is_empty()).then(|| {
                let scale = b.create_vector(&t.scales);
                let zero_point = b.create_vector(&t.zero_points);
                fb::QuantizationParameters::create(
                    &mut b,
                    &fb::QuantizationParametersArgs {
                        scale: Some(scale),
                        zero_point: Some(zero_point),
                        quantized_dimension: t.quantized_dimension,
                        ..Default::default()
                    },
                )
            });
            let shape = b.create_vector(&t.shape);
            fb_tensors.push(fb::Tensor::create(
                &mut b,
                &fb::TensorArgs {
                    shape: Some(shape),
                    type_: fb::TensorType(t.dtype.code()),
                    buffer,
                    quantization,
                    ..Default::default()
                },
            ));
        }
        let mut codes: Vec<i32> = Vec::new();
        let mut fb_ops = Vec::new();
        for op in ops {
            let index = codes
                .iter()
                .position(|&c| c == op.opcode)
                .unwrap_or_else(|| {
                    codes.push(op.opcode);
                    codes.len() - 1
                });
            let pad = |valid: bool| {
                if valid {
                    fb::Padding::VALID
                } else {
                    fb::Padding::SAME
                }
            };
            let act = fb::ActivationFunctionType;
            let (ty, opts) = match op.options {
                OptSpec::None => (fb::BuiltinOptions::NONE, None),
                OptSpec::Conv {
                    padding_valid,
                    stride,
                    activation,
                } => {
                    let o = fb::Conv2DOptions::create(
                        &mut b,
                        &fb::Conv2DOptionsArgs {
                            padding: pad(padding_valid),
                            stride_w: stride,
                            stride_h: stride,
                            fused_activation_function: act(activation),
                            dilation_w_factor: 1,
                            dilation_h_factor: 1,
                            ..Default::default()
                        },
                    );
                    (fb::BuiltinOptions::Conv2DOptions, Some(o.as_union_value()))
                }
                OptSpec::Depthwise {
                    padding_valid,
                    stride,
                    multiplier,
                    activation,
                } => {
                    let o = fb::DepthwiseConv2DOptions::create(
                        &mut b,
                        &fb::DepthwiseConv2DOptionsArgs {
                            padding: pad(padding_valid),
                            stride_w: stride,
                            stride_h: stride,
                            depth_multiplier: multiplier,
                            fused_activation_function: act(activation),
                            dilation_w_factor: 1,
                            dilation_h_factor: 1,
                        },
                    );
                    (
                        fb::BuiltinOptions::DepthwiseConv2DOptions,
                        Some(o.as_union_value()),
                    )
                }
                OptSpec::Pool {
                    padding_valid,
                    stride,
                    filter,
                    activation,
                } => {
                    let o = fb::Pool2DOptions::create(
                        &mut b,
                        &fb::Pool2DOptionsArgs {
                            padding: pad(padding_valid),
                            stride_w: stride,
                            stride_h: stride,
                            filter_width: filter,
                            filter_height: filter,
                            fused_activation_function: act(activation),
                        },
                    );
                    (fb::BuiltinOptions::Pool2DOptions, Some(o.as_union_value()))
                }
                OptSpec::FullyConnected { activation } => {
                    let o = fb::FullyConnectedOptions::create(
                        &mut b,
                        &fb::FullyConnectedOptionsArgs {
                            fused_activation_function: act(activation),
                            ..Default::default()
                        },
                    );
                    (
                        fb::BuiltinOptions::FullyConnectedOptions,
                        Some(o.as_union_value()),
                    )
                }
                OptSpec::Softmax { beta } => {
                    let o = fb::SoftmaxOptions::create(&mut b, &fb::SoftmaxOptionsArgs { beta });
                    (fb::BuiltinOptions::SoftmaxOptions, Some(o.as_union_value()))
                }
                OptSpec::Concatenation { axis } => {
                    let o = fb::ConcatenationOptions::create(
                        &mut b,
                        &fb::ConcatenationOptionsArgs {
                            axis,
                            ..Default::default()
                        },
                    );
                    (
                        fb::BuiltinOptions::ConcatenationOptions,
                        Some(o.as_union_value()),
                    )
                }
                OptSpec::Reducer { keep_dims } => {
                    let o =
                        fb::ReducerOptions::create(&mut b, &fb::ReducerOptionsArgs { keep_dims });
                    (fb::BuiltinOptions::ReducerOptions, Some(o.as_union_value()))
                }
                OptSpec::Add { activation } => {
                    let o = fb::AddOptions::create(
                        &mut b,
                        &fb::AddOptionsArgs {
                            fused_activation_function: act(activation),
                            ..Default::default()
                        },
                    );
                    (fb::BuiltinOptions::AddOptions, Some(o.as_union_value()))
                }
                OptSpec::Mul { activation } => {
                    let o = fb::MulOptions::create(
                        &mut b,
                        &fb::MulOptionsArgs {
                            fused_activation_function: act(activation),
                        },
                    );
                    (fb::BuiltinOptions::MulOptions, Some(o.as_union_value()))
                }
                OptSpec::StridedSlice {
                    begin_mask,
                    end_mask,
                    shrink_axis_mask,
                } => {
                    let o = fb::StridedSliceOptions::create(
                        &mut b,
                        &fb::StridedSliceOptionsArgs {
                            begin_mask,
                            end_mask,
                            shrink_axis_mask,
                            ..Default::default()
                        },
                    );
                    (
                        fb::BuiltinOptions::StridedSliceOptions,
                        Some(o.as_union_value()),
                    )
                }
            };
            let inputs = b.create_vector(&op.inputs);
            let outputs = b.create_vector(&op.outputs);
            fb_ops.push(fb::Operator::create(
                &mut b,
                &fb::OperatorArgs {
                    opcode_index: index as u32,
                    inputs: Some(inputs),
                    outputs: Some(outputs),
                    builtin_options_type: ty,
                    builtin_options: opts,
                    ..Default::default()
                },
            ));
        }
        let fb_codes: Vec<_> = codes
            .iter()
            .map(|&c| {
                fb::OperatorCode::create(
                    &mut b,
                    &fb::OperatorCodeArgs {
                        deprecated_builtin_code: c.min(127) as i8,
                        custom_code: None,
                        version: 1,
                        builtin_code: fb::BuiltinOperator(c),
                    },
                )
            })
            .collect();
        let tensors = b.create_vector(&fb_tensors);
        let operators = b.create_vector(&fb_ops);
        let g_in = b.create_vector(inputs);
        let g_out = b.create_vector(outputs);
        let sg = fb::SubGraph::create(
            &mut b,
            &fb::SubGraphArgs {
                tensors: Some(tensors),
                inputs: Some(g_in),
                outputs: Some(g_out),
                operators: Some(operators),
                ..Default::default()
            },
        );
        let subgraphs = b.create_vector(&[sg]);
        let codes = b.create_vector(&fb_codes);
        let buffers = b.create_vector(&buffers);
        let model = fb::Model::create(
            &mut b,
            &fb::ModelArgs {
                version: 3,
                operator_codes: Some(codes),
                subgraphs: Some(subgraphs),
                buffers: Some(buffers),
                ..Default::default()
            },
        );
        fb::finish_model_buffer(&mut b, model);
        b.finished_data().to_vec()
    }

    /// Deterministic pseudo-random bytes (xorshift32), for weights and inputs.
    pub fn bytes(seed: u32, n: usize) -> Vec<u8> {
        let mut s = seed.max(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s >> 24) as u8
            })
            .collect()
    }

    /// The firmware's demo model: int8 CONV_2D (3×3, 8 ch, stride 2) →
    /// DEPTHWISE_CONV_2D (3×3) → AVERAGE_POOL_2D → RESHAPE → FULLY_CONNECTED
    /// (4 classes) → SOFTMAX, on a 16×16×1 input, with deterministic weights.
    pub fn demo_model() -> Vec<u8> {
        let i8t = DType::I8;
        let bias = |n: usize, seed: u32, scale: f32| {
            let v: Vec<i32> = bytes(seed, n)
                .iter()
                .map(|&b| i32::from(b as i8) * 16)
                .collect();
            TensorSpec::i32s(&[n as i32], &v, &alloc::vec![scale; n.min(1).max(n)])
        };
        let conv_scales: Vec<f32> = (0..8).map(|c| 0.01 + 0.002 * c as f32).collect();
        let mut conv_w =
            TensorSpec::constant(&[8, 3, 3, 1], i8t, bytes(7, 72), &conv_scales, &[0; 8]);
        conv_w.quantized_dimension = 0;
        let dw_scales: Vec<f32> = (0..8).map(|c| 0.02 + 0.001 * c as f32).collect();
        let mut dw_w = TensorSpec::constant(&[1, 3, 3, 8], i8t, bytes(11, 72), &dw_scales, &[0; 8]);
        dw_w.quantized_dimension = 3;
        let tensors = alloc::vec![
            TensorSpec::act(&[1, 16, 16, 1], i8t, 0.05, -3), // 0 input
            conv_w,                                          // 1
            bias(8, 13, 0.0005),                             // 2
            TensorSpec::act(&[1, 8, 8, 8], i8t, 0.04, -128), // 3 conv out
            dw_w,                                            // 4
            bias(8, 17, 0.0008),                             // 5
            TensorSpec::act(&[1, 8, 8, 8], i8t, 0.06, -128), // 6 dw out
            TensorSpec::act(&[1, 1, 1, 8], i8t, 0.06, -128), // 7 pool out
            TensorSpec::i32s(&[2], &[1, 8], &[]),            // 8 shape
            TensorSpec::act(&[1, 8], i8t, 0.06, -128),       // 9 reshaped
            TensorSpec::constant(&[4, 8], i8t, bytes(19, 32), &[0.015], &[0]), // 10 fc w
            bias(4, 23, 0.0009),                             // 11 fc bias
            TensorSpec::act(&[1, 4], i8t, 0.25, 0),          // 12 logits
            TensorSpec::act(&[1, 4], i8t, 1.0 / 256.0, -128), // 13 probs
        ];
        let op = |opcode: i32, inputs: &[i32], output: i32, options: OptSpec| OpSpec {
            opcode,
            inputs: inputs.into(),
            outputs: alloc::vec![output],
            options,
        };
        let ops = alloc::vec![
            op(
                3,
                &[0, 1, 2],
                3,
                OptSpec::Conv {
                    padding_valid: false,
                    stride: 2,
                    activation: 1
                }
            ),
            op(
                4,
                &[3, 4, 5],
                6,
                OptSpec::Depthwise {
                    padding_valid: false,
                    stride: 1,
                    multiplier: 1,
                    activation: 3
                }
            ),
            op(
                1,
                &[6],
                7,
                OptSpec::Pool {
                    padding_valid: true,
                    stride: 8,
                    filter: 8,
                    activation: 0
                }
            ),
            op(22, &[7, 8], 9, OptSpec::None),
            op(
                9,
                &[9, 10, 11],
                12,
                OptSpec::FullyConnected { activation: 0 }
            ),
            op(25, &[12], 13, OptSpec::Softmax { beta: 1.0 }),
        ];
        build(&tensors, &ops, &[0], &[13])
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{OpSpec, OptSpec, TensorSpec, build, demo_model};
    use super::*;
    use crate::read::dtype::DType;

    fn word(img: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([img[at], img[at + 1], img[at + 2], img[at + 3]])
    }

    #[test]
    fn demo_model_lowers_with_consistent_header() {
        let bytes = demo_model();
        let model = Model::parse(&bytes).expect("parse");
        let img = lower(&model).expect("lower");
        let arena = runtime_arena(&model).expect("arena");
        assert_eq!(&img[..4], &rl::MAGIC);
        assert_eq!(word(&img, rl::header::VERSION), rl::VERSION);
        assert_eq!(
            u64::from(word(&img, rl::header::HEAD_BYTES)),
            arena.head_bytes
        );
        assert_eq!(
            u64::from(word(&img, rl::header::TAIL_BYTES)),
            arena.tail_bytes
        );
        assert_eq!(word(&img, rl::header::IMAGE_LEN) as usize, img.len());
        assert_eq!(arena.head_bytes % 16, 0);
        // conv (8+8*8) + dw (8+8*8) + pool 8 + fc 16 + softmax 12
        assert_eq!(arena.tail_bytes, 72 + 72 + 8 + 16 + 12);
        assert_eq!(arena.total_bytes, arena.head_bytes + arena.tail_bytes);
    }

    #[test]
    fn unsupported_ops_and_tensors_are_named() {
        let t = std::vec![
            TensorSpec::act(&[4], DType::F32, 0.0, 0),
            TensorSpec::act(&[4], DType::F32, 0.0, 0)
        ];
        let relu = OpSpec {
            opcode: 19,
            inputs: std::vec![0],
            outputs: std::vec![1],
            options: OptSpec::None,
        };
        let bytes = build(&t, &[relu], &[0], &[1]);
        let model = Model::parse(&bytes).expect("parse");
        let err = lower(&model).expect_err("no RELU kernel");
        assert_eq!(
            std::format!("{err}"),
            "operator 0 (RELU) has no kernel in the microarena runtime"
        );
        assert!(runtime_arena(&model).is_err());

        let t = std::vec![
            TensorSpec::act(&[-1, 4], DType::F32, 0.0, 0),
            TensorSpec::act(&[4], DType::F32, 0.0, 0)
        ];
        let q = OpSpec {
            opcode: 22,
            inputs: std::vec![0],
            outputs: std::vec![1],
            options: OptSpec::None,
        };
        let bytes = build(&t, &[q], &[0], &[1]);
        let model = Model::parse(&bytes).expect("parse");
        assert!(matches!(
            lower(&model),
            Err(LowerError::Tensor { tensor: 0, .. })
        ));
    }
}
