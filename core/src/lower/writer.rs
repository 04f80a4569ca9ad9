//! The image bytes: header, tensor records, op records, I/O indices and
//! the data area, laid out as `microarena_image::format` describes.

use alloc::format;
use alloc::vec::Vec;

use microarena_image as rl;

use super::arena::{LowerOptions, OpDataIn, plan};
use super::error::{LowerError, fit};
use super::params::activation;
use crate::read::model::Model;

/// Lowers `model` into a program image for the microarena runtime, its
/// OpData in the tail (computed by the device's Prepare).
pub fn lower(model: &Model<'_>) -> Result<Vec<u8>, LowerError> {
    lower_with(model, &LowerOptions::default())
}

/// Lowers `model` with `options`. With [`OpDataIn::Flash`] the image ends
/// with a zeroed OpData block that the runtime's `freeze_opdata` must fill
/// before the device can run it (the device refuses a block Prepare
/// disagrees with).
pub fn lower_with(model: &Model<'_>, options: &LowerOptions) -> Result<Vec<u8>, LowerError> {
    let l = plan(model, options)?;
    // The stage's inner outputs exist only as rows in their producers' rings.
    let streamed_list: Vec<usize> = l
        .stages
        .iter()
        .flat_map(|s| super::banded::streamed_tensors(model, &l.params, s))
        .collect();
    let streamed = |t: usize| streamed_list.contains(&t);
    let base = |g: usize| l.tensor_base.get(g).copied().unwrap_or(0);
    let n_model_tensors: usize = model.subgraphs.iter().map(|s| s.tensors.len()).sum();
    let n_t = n_model_tensors + l.states.len();
    let n_o: usize = model.subgraphs.iter().map(|s| s.operators.len()).sum();
    let n_io: usize = model
        .subgraphs
        .iter()
        .map(|s| s.inputs.len() + s.outputs.len())
        .sum();
    let n_sub = model.subgraphs.len();
    let main = model.main();
    let tensors_off = rl::HEADER_BYTES;
    let ops_off = tensors_off + n_t * rl::TENSOR_BYTES;
    let subgraphs_off = ops_off + n_o * rl::OP_BYTES;
    let io_off = subgraphs_off + n_sub * rl::SUBGRAPH_BYTES;
    let data_off = align4(io_off + 4 * n_io);

    let mut data: Vec<u8> = Vec::new();
    let mut trecs: Vec<u8> = Vec::with_capacity(n_t * rl::TENSOR_BYTES);
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (ti, t) in sg.tensors.iter().enumerate() {
            let gi = base(g) + ti;
            // A resource handle is its resource's variable: the record of
            // the value its first ASSIGN_VARIABLE assigns, at its place.
            let value = l
                .resource_value
                .get(&gi)
                .and_then(|&(vg, vt)| model.tensor(vg, vt));
            let resource = rl::dtype_size(t.dtype.code()).is_none();
            let t = value.unwrap_or(t);
            let mut rec = [0u8; rl::TENSOR_BYTES];
            if resource && value.is_none() {
                // A never-assigned resource has no bytes: int32 [0].
                rec[rl::tensor::DTYPE] = rl::dtype::I32 as u8;
                rec[rl::tensor::RANK] = 1;
                rec[rl::tensor::STORAGE] = rl::STORAGE_NONE;
                trecs.extend_from_slice(&rec);
                continue;
            }
            rec[rl::tensor::DTYPE] = t.dtype.code() as u8;
            rec[rl::tensor::RANK] = t.shape.len() as u8;
            for (i, &d) in t.shape.iter().enumerate() {
                put(&mut rec, rl::tensor::DIMS + 4 * i, d as u32);
            }
            let bytes = t.bytes.unwrap_or(0);
            let (storage, location) =
                if let Some(&off) = l.variable_offset.get(gi).and_then(|o| o.as_ref()) {
                    (rl::STORAGE_VARIABLE, off)
                } else if t.has_data {
                    let d = model.tensor_data(g, ti).unwrap_or(&[]);
                    if (d.len() as u64) < bytes {
                        return Err(LowerError::Tensor {
                            tensor: gi,
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
                } else if streamed(gi) {
                    (rl::STORAGE_STREAMED, 0)
                } else if let Some(&off) = l.tensor_offset.get(gi).and_then(|o| o.as_ref()) {
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
    }
    // Op-owned state: uint32 vectors in the variable region, after the model's tensors.
    for st in &l.states {
        let mut rec = [0u8; rl::TENSOR_BYTES];
        rec[rl::tensor::DTYPE] = rl::dtype::U32 as u8;
        rec[rl::tensor::RANK] = 1;
        rec[rl::tensor::STORAGE] = rl::STORAGE_VARIABLE;
        put(&mut rec, rl::tensor::DIMS, st.elements);
        put(&mut rec, rl::tensor::LOCATION, fit(st.offset)?);
        put(&mut rec, rl::tensor::BYTES, st.elements.saturating_mul(4));
        trecs.extend_from_slice(&rec);
    }

    let mut orecs: Vec<u8> = Vec::with_capacity(n_o * rl::OP_BYTES);
    let mut srecs: Vec<u8> = Vec::with_capacity(n_sub * rl::SUBGRAPH_BYTES);
    let mut io: Vec<u32> = Vec::with_capacity(n_io);
    let mut oi = 0usize;
    for (g, sg) in model.subgraphs.iter().enumerate() {
        let mut srec = [0u8; rl::SUBGRAPH_BYTES];
        put(&mut srec, rl::subgraph::FIRST_OP, fit(oi as u64)?);
        put(
            &mut srec,
            rl::subgraph::N_OPS,
            fit(sg.operators.len() as u64)?,
        );
        put(&mut srec, rl::subgraph::IO_AT, fit(io.len() as u64)?);
        put(
            &mut srec,
            rl::subgraph::N_INPUTS,
            fit(sg.inputs.len() as u64)?,
        );
        put(
            &mut srec,
            rl::subgraph::N_OUTPUTS,
            fit(sg.outputs.len() as u64)?,
        );
        let at = l.opdata_at.get(g).copied().unwrap_or(0);
        put(&mut srec, rl::subgraph::OPDATA_AT, fit(at)?);
        srecs.extend_from_slice(&srec);
        for &t in sg.inputs.iter().chain(&sg.outputs) {
            io.push((base(g) + t.max(0) as usize) as u32);
        }
        let global = |t: i32| -> i32 {
            if t >= 0 {
                (base(g) + t as usize) as i32
            } else {
                t
            }
        };
        for op in &sg.operators {
            let code = super::image_opcode(op).unwrap_or(rl::opcode::CUSTOM);
            let mut rec = [0u8; rl::OP_BYTES];
            rec[rl::op::OPCODE] = code;
            // An op-owned state tensor is the op's last input.
            let state = l
                .states
                .iter()
                .position(|st| st.op_index == oi)
                .map(|k| (n_model_tensors + k) as i32);
            rec[rl::op::N_INPUTS] = (op.inputs.len() + usize::from(state.is_some())) as u8;
            rec[rl::op::ACTIVATION] = activation(op).code() as u8;
            rec[rl::op::N_OUTPUTS] = op.outputs.len().max(1) as u8;
            rec[rl::op::EXEC] = match l.stages.iter().find(|s| (s.first..=s.last).contains(&oi)) {
                Some(s) if oi == s.last => rl::EXEC_BANDED_LAST,
                Some(_) => rl::EXEC_BANDED,
                None => rl::EXEC_WHOLE,
            };
            if let Some(a) = l.in_place.iter().find(|a| a.op == oi) {
                rec[rl::op::IN_PLACE] = (a.slot + 1) as u8;
            }
            // Inputs, then outputs 1.. (`plan` checked that they fit the slots).
            let slots = op
                .inputs
                .iter()
                .map(|&t| global(t))
                .chain(state)
                .chain(op.outputs.iter().skip(1).map(|&t| global(t)));
            let mut slot_values = [rl::NO_TENSOR; rl::MAX_OP_INPUTS];
            for (v, t) in slot_values.iter_mut().zip(slots) {
                if t >= 0 {
                    *v = t as u16;
                }
            }
            for (i, v) in slot_values.iter().enumerate() {
                rec[rl::op::INPUTS + 2 * i..rl::op::INPUTS + 2 * i + 2]
                    .copy_from_slice(&v.to_le_bytes());
            }
            // Output 0: the op's, or (ASSIGN_VARIABLE, CALL_ONCE) its state:
            // the resource handle, or the flag.
            let out = match op.output(0) {
                Some(t) => global(t as i32),
                None => state.or(op.input(0).map(|t| global(t as i32))).unwrap_or(0),
            } as u16;
            rec[rl::op::OUTPUT..rl::op::OUTPUT + 2].copy_from_slice(&out.to_le_bytes());
            if let Some(&(off, bytes)) = l.scratch.get(oi).and_then(|s| s.as_ref()) {
                put(&mut rec, rl::op::SCRATCH_OFF, fit(off)?);
                put(&mut rec, rl::op::SCRATCH_BYTES, fit(bytes)?);
            }
            for (i, p) in l.params.get(oi).into_iter().flatten().enumerate() {
                put(&mut rec, rl::op::PARAMS + 4 * i, *p as u32);
            }
            orecs.extend_from_slice(&rec);
            oi += 1;
        }
    }

    if options.opdata == OpDataIn::Flash {
        // The OpData block after the data must start 4-aligned.
        pad4(&mut data);
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
    h(&mut img, rl::header::N_INPUTS, main.inputs.len() as u64)?;
    h(&mut img, rl::header::N_OUTPUTS, main.outputs.len() as u64)?;
    h(&mut img, rl::header::HEAD_BYTES, l.head)?;
    h(&mut img, rl::header::TAIL_BYTES, l.tail_bytes(options))?;
    h(&mut img, rl::header::VAR_BYTES, l.var_bytes)?;
    h(&mut img, rl::header::TENSORS_OFF, tensors_off as u64)?;
    h(&mut img, rl::header::OPS_OFF, ops_off as u64)?;
    h(&mut img, rl::header::IO_OFF, io_off as u64)?;
    h(&mut img, rl::header::DATA_OFF, data_off as u64)?;
    h(&mut img, rl::header::DATA_LEN, data.len() as u64)?;
    h(&mut img, rl::header::N_SUBGRAPHS, n_sub as u64)?;
    h(&mut img, rl::header::SUBGRAPHS_OFF, subgraphs_off as u64)?;
    // The OpData block, when in flash, ends the image (4-aligned, as `data`).
    let data_end = data_off + data.len();
    let block = match options.opdata {
        OpDataIn::Flash if l.opdata > 0 => l.opdata as usize,
        _ => 0,
    };
    if block > 0 {
        h(&mut img, rl::header::OPDATA_OFF, data_end as u64)?;
        h(&mut img, rl::header::OPDATA_LEN, block as u64)?;
    }
    h(&mut img, rl::header::IMAGE_LEN, (data_end + block) as u64)?;
    img[tensors_off..ops_off].copy_from_slice(&trecs);
    img[ops_off..subgraphs_off].copy_from_slice(&orecs);
    img[subgraphs_off..io_off].copy_from_slice(&srecs);
    for (i, &t) in io.iter().enumerate() {
        put(&mut img, io_off + 4 * i, t);
    }
    img.extend_from_slice(&data);
    img.resize(data_end + block, 0);
    Ok(img)
}

fn put(buf: &mut [u8], at: usize, v: u32) {
    if let Some(s) = buf.get_mut(at..at + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

fn align4(v: usize) -> usize {
    v.div_ceil(4) * 4
}

fn pad4(data: &mut Vec<u8>) {
    while !data.len().is_multiple_of(4) {
        data.push(0);
    }
}
