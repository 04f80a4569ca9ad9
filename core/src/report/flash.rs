//! What the model takes in flash: the file, split into constant data (the
//! buffers tensors read their values from — weights, biases, LUTs, shapes)
//! and flatbuffer overhead (everything else: tables, strings, quantization
//! parameters, metadata, alignment), with each op's share of the constant
//! data and the largest constant tensors. Also the few places where TFLM
//! copies constant data into RAM rather than reading it in place.
//!
//! Rules (`docs/flash-and-compute.md`):
//! - a buffer counts once, however many tensors point at it;
//! - only buffers some tensor points at are constant data (an offline plan
//!   or other metadata buffer is overhead);
//! - data stored after the flatbuffer (`offset`/`size` buffers, models above
//!   2 GB) counts when it lies inside the file;
//! - each buffer is attributed to the first op that reads it as an input, in
//!   file order (subgraph 0's ops first), so the per-op figures sum to the
//!   constant data; buffers no op reads are `unattributed_bytes`.
//!
//! The arena figures are unaffected: TFLM maps constant tensors in place
//! (`kTfLiteMmapRo`), so none of this is in the arena unless a
//! [`RamCopyInfo`] says otherwise.

use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use crate::read::model::Model;
use crate::read::ops::BuiltinOp;
use microarena_image::opcode;

/// How many constant tensors [`FlashInfo::largest`] lists.
pub const LARGEST: usize = 10;

/// The model's flash figures.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FlashInfo {
    /// Size of the `.tflite` file: what the model occupies in flash.
    pub file_bytes: u64,
    /// Bytes of the distinct buffers constant tensors read (each buffer once).
    pub constant_bytes: u64,
    /// `file_bytes − constant_bytes`: flatbuffer tables, names, quantization
    /// parameters, metadata and alignment.
    pub overhead_bytes: u64,
    /// Distinct buffers behind `constant_bytes`.
    pub constant_buffers: u64,
    /// Tensors that read them (a shared buffer counts each tensor).
    pub constant_tensors: u64,
    /// Part of `constant_bytes` stored after the flatbuffer (`offset`/`size` buffers).
    pub external_bytes: u64,
    /// Part of `constant_bytes` no op reads (so no op's `constant_bytes` has it).
    pub unattributed_bytes: u64,
    /// The largest constant buffers, largest first (at most [`LARGEST`]).
    pub largest: Vec<ConstantTensorInfo>,
    /// Constant data TFLM copies into RAM (empty for most models).
    pub ram_copies: Vec<RamCopyInfo>,
}

/// One constant buffer, named by the first tensor that reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ConstantTensorInfo {
    /// Subgraph of that tensor.
    pub subgraph: usize,
    /// Its index.
    pub tensor: usize,
    /// Its name.
    pub name: String,
    /// The buffer's index in the model.
    pub buffer: u32,
    /// Bytes of the buffer.
    pub bytes: u64,
    /// Tensor shape.
    pub shape: Vec<i32>,
    /// Element type.
    pub dtype: String,
    /// Tensors sharing the buffer (1 when not shared).
    pub tensors: u64,
    /// The op it is attributed to (first reader, in its subgraph), if any.
    pub op: Option<usize>,
    /// That op's name.
    pub opcode: Option<String>,
}

/// Constant data an op copies into RAM.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RamCopyInfo {
    /// Subgraph.
    pub subgraph: usize,
    /// Op index.
    pub op: usize,
    /// Op name.
    pub opcode: String,
    /// Bytes copied (at most; see `condition`).
    pub bytes: u64,
    /// When and where, with the TFLM source.
    pub condition: String,
}

/// [`FlashInfo`] and each op's constant bytes (`per_op[subgraph][op]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    /// The model's figures.
    pub info: FlashInfo,
    /// Constant bytes attributed to each op.
    pub per_op: Vec<Vec<u64>>,
}

impl Flash {
    /// Constant bytes attributed to op `op` of subgraph `g`.
    pub fn op_bytes(&self, g: usize, op: usize) -> u64 {
        self.per_op
            .get(g)
            .and_then(|s| s.get(op))
            .copied()
            .unwrap_or(0)
    }
}

/// Bytes of buffer `b` in the file, if it holds data inside the file.
fn buffer_bytes(model: &Model<'_>, b: u32) -> Option<(u64, bool)> {
    let buf = model.buffers.get(b as usize)?;
    if !buf.data.is_empty() {
        return Some((buf.data.len() as u64, false));
    }
    let (offset, size) = buf.external?;
    (size > 0 && offset.checked_add(size)? <= model.file_bytes).then_some((size, true))
}

/// The flash figures of `model`.
pub fn flash(model: &Model<'_>) -> Flash {
    // Distinct data buffers, with their first tensor and how many tensors read them.
    struct Seen {
        g: usize,
        t: usize,
        bytes: u64,
        tensors: u64,
        op: Option<(usize, usize)>,
    }
    let mut seen: BTreeMap<u32, Seen> = BTreeMap::new();
    let mut info = FlashInfo {
        file_bytes: model.file_bytes,
        ..FlashInfo::default()
    };
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (t, tensor) in sg.tensors.iter().enumerate() {
            let Some((bytes, external)) = buffer_bytes(model, tensor.buffer) else {
                continue;
            };
            info.constant_tensors += 1;
            seen.entry(tensor.buffer)
                .and_modify(|s| s.tensors += 1)
                .or_insert_with(|| {
                    info.constant_bytes = info.constant_bytes.saturating_add(bytes);
                    info.constant_buffers += 1;
                    if external {
                        info.external_bytes = info.external_bytes.saturating_add(bytes);
                    }
                    Seen {
                        g,
                        t,
                        bytes,
                        tensors: 1,
                        op: None,
                    }
                });
        }
    }
    let mut per_op: Vec<Vec<u64>> = model
        .subgraphs
        .iter()
        .map(|sg| alloc::vec![0; sg.operators.len()])
        .collect();
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (i, op) in sg.operators.iter().enumerate() {
            for t in (0..op.inputs.len()).filter_map(|k| op.input(k)) {
                let Some(tensor) = sg.tensors.get(t) else {
                    continue;
                };
                if let Some(s) = seen.get_mut(&tensor.buffer)
                    && s.op.is_none()
                {
                    s.op = Some((g, i));
                    if let Some(slot) = per_op.get_mut(g).and_then(|v| v.get_mut(i)) {
                        *slot = slot.saturating_add(s.bytes);
                    }
                }
            }
        }
    }
    info.unattributed_bytes = seen
        .values()
        .filter(|s| s.op.is_none())
        .fold(0u64, |n, s| n.saturating_add(s.bytes));
    // Each counted buffer is a distinct range of the file, so this only
    // saturates for a hand-made file whose buffer tables share one vector.
    info.overhead_bytes = info.file_bytes.saturating_sub(info.constant_bytes);

    let mut ranked: Vec<(&u32, &Seen)> = seen.iter().collect();
    ranked.sort_by(|a, b| {
        b.1.bytes
            .cmp(&a.1.bytes)
            .then((a.1.g, a.1.t).cmp(&(b.1.g, b.1.t)))
    });
    info.largest = ranked
        .into_iter()
        .take(LARGEST)
        .filter_map(|(&buffer, s)| {
            let tensor = model.tensor(s.g, s.t)?;
            let op_name =
                s.op.and_then(|(g, i)| model.subgraphs.get(g)?.operators.get(i))
                    .map(|o| o.name().to_string());
            Some(ConstantTensorInfo {
                subgraph: s.g,
                tensor: s.t,
                name: tensor.name.to_string(),
                buffer,
                bytes: s.bytes,
                shape: tensor.shape.clone(),
                dtype: tensor.dtype.name().into(),
                tensors: s.tensors,
                op: s.op.map(|(_, i)| i),
                opcode: op_name,
            })
        })
        .collect();
    info.ram_copies = ram_copies(model);
    Flash { info, per_op }
}

/// Ops that copy constant data into RAM, from TFLM's sources at 90b983c2
/// (`docs/flash-and-compute.md`). Derived arrays (per-channel multipliers,
/// CMSIS-NN kernel sums, LSTM effective biases) are not copies: they are in
/// the op's tail bytes.
fn ram_copies(model: &Model<'_>) -> Vec<RamCopyInfo> {
    let mut out = Vec::new();
    for (g, sg) in model.subgraphs.iter().enumerate() {
        for (i, op) in sg.operators.iter().enumerate() {
            let constant_input = |k: usize| {
                op.input(k)
                    .and_then(|t| sg.tensors.get(t))
                    .filter(|t| buffer_bytes(model, t.buffer).is_some())
            };
            if op.opcode.0 == opcode::BATCH_MATMUL as i32
                && let Some(rhs) = constant_input(1)
            {
                // batch_matmul.cc and cmsis_nn/batch_matmul.cc: Prepare
                // allocates a persistent transposed RHS unless adj_y is set,
                // and the first Invoke fills it from the constant.
                out.push(RamCopyInfo {
                    subgraph: g,
                    op: i,
                    opcode: op.name().into(),
                    bytes: rhs.bytes.unwrap_or(0),
                    condition: "unless adj_y is set, TFLM keeps a transposed copy of the \
                                constant RHS in the tail (reference and CMSIS-NN, \
                                kernels/batch_matmul.cc)"
                        .into(),
                });
            }
            if op.opcode == BuiltinOp::CUSTOM && op.custom_code == Some("TFLM_DECODE") {
                // kernels/decode.cc: decoded (decompressed) constants are
                // written to the op's outputs, which live in the arena.
                let bytes = op
                    .outputs
                    .iter()
                    .filter_map(|&t| sg.tensors.get(usize::try_from(t).ok()?))
                    .fold(0u64, |n, t| n.saturating_add(t.bytes.unwrap_or(0)));
                out.push(RamCopyInfo {
                    subgraph: g,
                    op: i,
                    opcode: op.name().into(),
                    bytes,
                    condition: "TFLM_DECODE writes decoded constants to its outputs in the \
                                arena (kernels/decode.cc)"
                        .into(),
                });
            }
        }
    }
    out
}

/// The flash a device has for this model: its size and the firmware's code
/// (and other read-only data) that shares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlashBudget {
    /// Flash size.
    pub flash_bytes: u64,
    /// Firmware code and read-only data besides the model (the linker map's
    /// `.text` + `.rodata`, as the user measured it).
    pub code_bytes: u64,
}

/// Does the model fit the flash beside the code? Both figures are exact (the
/// file's size, the linker's), so no headroom is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FlashVerdict {
    /// Flash size.
    pub flash_bytes: u64,
    /// The model file.
    pub model_bytes: u64,
    /// Firmware code and read-only data.
    pub code_bytes: u64,
    /// `model_bytes + code_bytes`.
    pub used_bytes: u64,
    /// `flash_bytes − used_bytes` (negative: short by that much).
    pub margin_bytes: i64,
    /// The model and the code fit.
    pub fits: bool,
}

impl FlashBudget {
    /// Checks a model of `model_bytes` against this flash.
    pub fn check(&self, model_bytes: u64) -> FlashVerdict {
        let used = u128::from(model_bytes) + u128::from(self.code_bytes);
        let margin = i128::from(self.flash_bytes) - used as i128;
        FlashVerdict {
            flash_bytes: self.flash_bytes,
            model_bytes,
            code_bytes: self.code_bytes,
            used_bytes: used.min(u128::from(u64::MAX)) as u64,
            margin_bytes: margin.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
            fits: margin >= 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flash_verdict_exact_fit_and_short() {
        let b = FlashBudget {
            flash_bytes: 1000,
            code_bytes: 600,
        };
        let v = b.check(400);
        assert!(v.fits);
        assert_eq!((v.used_bytes, v.margin_bytes), (1000, 0));
        let v = b.check(401);
        assert!(!v.fits);
        assert_eq!(v.margin_bytes, -1);
        let v = FlashBudget {
            flash_bytes: 0,
            code_bytes: u64::MAX,
        }
        .check(u64::MAX);
        assert!(!v.fits);
        assert_eq!(v.used_bytes, u64::MAX);
        assert_eq!(v.margin_bytes, i64::MIN);
    }
}
