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
    let sg = model.main();
    // The stage's inner outputs exist only as rows in their producers' rings.
    let streamed_list: Vec<usize> = l
        .stages
        .iter()
        .flat_map(|s| super::banded::streamed_tensors(model, &l.params, s))
        .collect();
    let streamed = |t: usize| streamed_list.contains(&t);
    let n_model_tensors = sg.tensors.len();
    let n_t = n_model_tensors + l.states.len();
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
            } else if streamed(ti) {
                (rl::STORAGE_STREAMED, 0)
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
    for (oi, op) in sg.operators.iter().enumerate() {
        let mut rec = [0u8; rl::OP_BYTES];
        rec[rl::op::OPCODE] = super::image_opcode(op).unwrap_or(rl::opcode::CUSTOM);
        // An op-owned state tensor is the op's last input.
        let state = l
            .states
            .iter()
            .position(|st| st.op_index == oi)
            .map(|k| (n_model_tensors + k) as i32);
        rec[rl::op::N_INPUTS] = (op.inputs.len() + usize::from(state.is_some())) as u8;
        rec[rl::op::ACTIVATION] = activation(op).code() as u8;
        rec[rl::op::N_OUTPUTS] = op.outputs.len() as u8;
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
            .chain(state.as_ref())
            .chain(op.outputs.iter().skip(1));
        let mut slot_values = [rl::NO_TENSOR; rl::MAX_OP_INPUTS];
        for (v, &t) in slot_values.iter_mut().zip(slots) {
            if t >= 0 {
                *v = t as u16;
            }
        }
        for (i, v) in slot_values.iter().enumerate() {
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
    h(&mut img, rl::header::N_INPUTS, sg.inputs.len() as u64)?;
    h(&mut img, rl::header::N_OUTPUTS, sg.outputs.len() as u64)?;
    h(&mut img, rl::header::HEAD_BYTES, l.head)?;
    h(&mut img, rl::header::TAIL_BYTES, l.tail_bytes(options))?;
    h(&mut img, rl::header::VAR_BYTES, l.var_bytes)?;
    h(&mut img, rl::header::TENSORS_OFF, tensors_off as u64)?;
    h(&mut img, rl::header::OPS_OFF, ops_off as u64)?;
    h(&mut img, rl::header::IO_OFF, io_off as u64)?;
    h(&mut img, rl::header::DATA_OFF, data_off as u64)?;
    h(&mut img, rl::header::DATA_LEN, data.len() as u64)?;
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
    img[ops_off..io_off].copy_from_slice(&orecs);
    for (i, &t) in sg.inputs.iter().chain(&sg.outputs).enumerate() {
        put(&mut img, io_off + 4 * i, t as u32);
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
