//! The validated view of a `.tflite` file.
//!
//! [`Model::parse`] is the only entry point: it checks the `TFL3` identifier
//! (the flatbuffers verifier accepts any 16 zero bytes as an empty model), runs
//! the verifier with explicit [`Limits`], then checks the facts the rest of the
//! crate relies on (every index in range, every byte size computed with checked
//! arithmetic) and copies the structure into a small owned IR. Weights and
//! names stay borrowed from the input (zero copy). Nothing downstream touches
//! the raw flatbuffer or re-validates.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::read::dtype::DType;
use crate::read::ops::{BuiltinOp, OpOptions};
use crate::read::schema as fb;

/// Name of the metadata entry TFLM reads an offline memory plan from.
pub const OFFLINE_PLAN_METADATA: &str = "OfflineMemoryAllocation";

/// Bounds applied while reading, so hostile files are refused quickly and in
/// bounded memory. The defaults are far above any model a microcontroller runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Input files larger than this are refused before verification.
    pub max_file_bytes: usize,
    /// Total tensors over all subgraphs.
    pub max_tensors: usize,
    /// Total operators over all subgraphs.
    pub max_operators: usize,
    /// Number of subgraphs.
    pub max_subgraphs: usize,
    /// Rank of any tensor.
    pub max_rank: usize,
    /// Largest byte size of one tensor. TFLM's planner works in `int`, so
    /// anything at or above 2 GiB cannot be planned by it anyway.
    pub max_tensor_bytes: u64,
    /// Flatbuffer nesting depth and table count handed to the verifier.
    pub max_depth: usize,
    /// See [`Limits::max_depth`].
    pub max_tables: usize,
}

impl Limits {
    /// Limits used by the CLI, the web app and the fuzz targets.
    pub const DEFAULT: Limits = Limits {
        max_file_bytes: 1 << 30,
        max_tensors: 1 << 20,
        max_operators: 1 << 20,
        max_subgraphs: 4096,
        max_rank: 16,
        max_tensor_bytes: (1 << 31) - 1,
        max_depth: 64,
        max_tables: 4_000_000,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Why a file could not be read as a TFLite model. Every variant names what a
/// user can look at (an index, a field) and, where it helps, what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadError {
    /// Fewer than 8 bytes, or the `TFL3` file identifier is missing.
    NotTflite { len: usize },
    /// The file is larger than [`Limits::max_file_bytes`].
    TooLarge { bytes: usize, limit: usize },
    /// The flatbuffers verifier rejected the bytes (truncated or corrupt).
    Corrupt(String),
    /// The model has no subgraph 0 to run.
    NoSubgraphs,
    /// A count exceeds a [`Limits`] bound.
    LimitExceeded {
        what: &'static str,
        count: usize,
        limit: usize,
    },
    /// An index stored in the file points outside the table it refers to.
    IndexOutOfRange {
        what: &'static str,
        subgraph: usize,
        owner: usize,
        index: i64,
        len: usize,
    },
    /// A tensor's type code is not one this reader knows.
    UnknownType {
        subgraph: usize,
        tensor: usize,
        code: i8,
    },
    /// A tensor has a dimension below −1.
    BadDimension {
        subgraph: usize,
        tensor: usize,
        dim: i32,
    },
    /// A tensor's rank exceeds [`Limits::max_rank`].
    RankTooLarge {
        subgraph: usize,
        tensor: usize,
        rank: usize,
        limit: usize,
    },
    /// A tensor's byte size overflows or exceeds [`Limits::max_tensor_bytes`].
    TensorTooLarge {
        subgraph: usize,
        tensor: usize,
        limit: u64,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotTflite { len } => write!(
                f,
                "not a TFLite model: the 'TFL3' file identifier is missing ({len} bytes read)"
            ),
            ReadError::TooLarge { bytes, limit } => {
                write!(
                    f,
                    "file is {bytes} bytes; models above {limit} bytes are refused"
                )
            }
            ReadError::Corrupt(why) => {
                write!(f, "corrupt or truncated flatbuffer: {why}")
            }
            ReadError::NoSubgraphs => {
                write!(f, "the model has no subgraphs, so there is nothing to run")
            }
            ReadError::LimitExceeded { what, count, limit } => {
                write!(
                    f,
                    "the model declares {count} {what}; at most {limit} are accepted"
                )
            }
            ReadError::IndexOutOfRange {
                what,
                subgraph,
                owner,
                index,
                len,
            } => write!(
                f,
                "subgraph {subgraph}: {what} of entry {owner} is {index}, outside 0..{len}"
            ),
            ReadError::UnknownType {
                subgraph,
                tensor,
                code,
            } => {
                write!(
                    f,
                    "subgraph {subgraph} tensor {tensor}: unknown tensor type code {code}"
                )
            }
            ReadError::BadDimension {
                subgraph,
                tensor,
                dim,
            } => write!(
                f,
                "subgraph {subgraph} tensor {tensor}: dimension {dim} is invalid (only -1 may mark a dynamic dimension)"
            ),
            ReadError::RankTooLarge {
                subgraph,
                tensor,
                rank,
                limit,
            } => write!(
                f,
                "subgraph {subgraph} tensor {tensor}: rank {rank} exceeds the limit of {limit}"
            ),
            ReadError::TensorTooLarge {
                subgraph,
                tensor,
                limit,
            } => write!(
                f,
                "subgraph {subgraph} tensor {tensor}: byte size overflows or exceeds {limit} bytes (absurd shape)"
            ),
        }
    }
}

impl core::error::Error for ReadError {}

/// Quantization parameters of a tensor (only what allocation and kernels use).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Quantization {
    /// Per-tensor (1) or per-channel (C) scales.
    pub scales: Vec<f32>,
    /// Zero points, same count as `scales` in well-formed models.
    pub zero_points: Vec<i64>,
    /// Axis of per-channel quantization.
    pub quantized_dimension: i32,
}

impl Quantization {
    /// TFLM builds a `TfLiteAffineQuantization` only when both arrays are present.
    pub fn is_affine(&self) -> bool {
        !self.scales.is_empty() && !self.zero_points.is_empty()
    }
}

/// One tensor of one subgraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor<'a> {
    /// Name stored in the file (may be empty).
    pub name: &'a str,
    /// `shape` from the file (what TFLM allocates from; never `shape_signature`).
    pub shape: Vec<i32>,
    /// `shape_signature`, where the converter wrote one (−1 marks a dynamic dimension).
    pub shape_signature: Option<Vec<i32>>,
    /// Element type.
    pub dtype: DType,
    /// Index into [`Model::buffers`].
    pub buffer: u32,
    /// The buffer holds data (a constant: weights, bias, shape): never planned.
    pub has_data: bool,
    /// Variable tensors (LSTM/SVDF state) live in the tail unless an offline plan places them.
    pub is_variable: bool,
    /// Quantization, where the file has any.
    pub quantization: Option<Quantization>,
    /// Byte size TFLM computes: product of `shape` × element size (−1 dims counted as 1;
    /// see [`Tensor::is_dynamic`]). `None` for types TFLM cannot size (string, int2, variant).
    pub bytes: Option<u64>,
    /// `shape` or `shape_signature` has a −1 dimension.
    pub is_dynamic: bool,
}

impl Tensor<'_> {
    /// Number of elements (−1 dims counted as 1; scalars have 1 element).
    pub fn elements(&self) -> u64 {
        self.shape.iter().map(|&d| d.max(1) as u64).product()
    }

    /// Per-channel quantized (more than one scale).
    pub fn is_per_channel(&self) -> bool {
        self.quantization
            .as_ref()
            .is_some_and(|q| q.scales.len() > 1)
    }

    /// Dimension `i`, if the rank allows it.
    pub fn dim(&self, i: usize) -> Option<i32> {
        self.shape.get(i).copied()
    }
}

/// One operator (node) of a subgraph.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator<'a> {
    /// `max(builtin_code, deprecated_builtin_code)` of its operator code.
    pub opcode: BuiltinOp,
    /// Custom operator name for `CUSTOM` ops.
    pub custom_code: Option<&'a str>,
    /// Operator-code version.
    pub version: i32,
    /// Input tensor indices; −1 marks an omitted optional input.
    pub inputs: Vec<i32>,
    /// Output tensor indices.
    pub outputs: Vec<i32>,
    /// Intermediate tensors (LSTM); TFLM requires them to be 0 bytes.
    pub intermediates: Vec<i32>,
    /// The builtin options the kernel models and kernels need.
    pub options: OpOptions,
    /// Raw custom options (FlexBuffers for custom ops).
    pub custom_options: &'a [u8],
    /// The `quantized_bias_type` of CONV_2D, FULLY_CONNECTED and
    /// TRANSPOSE_CONV options as a TFLite type code (0, FLOAT32, when unset
    /// or for other ops): TFLM's 16x8 kernels without a bias take an int32
    /// accumulator when it is INT32.
    pub quantized_bias_type: i8,
}

impl Operator<'_> {
    /// Display name: the builtin name, or the custom code for custom ops.
    pub fn name(&self) -> &str {
        match self.custom_code {
            Some(code) if self.opcode == BuiltinOp::CUSTOM => code,
            _ => self.opcode.name(),
        }
    }

    /// Tensor index of input `i`, if present and not omitted.
    pub fn input(&self, i: usize) -> Option<usize> {
        self.inputs.get(i).and_then(|&t| usize::try_from(t).ok())
    }

    /// Tensor index of output `i`.
    pub fn output(&self, i: usize) -> Option<usize> {
        self.outputs.get(i).and_then(|&t| usize::try_from(t).ok())
    }
}

/// One subgraph: tensors, operators in execution order, inputs and outputs.
#[derive(Debug, Clone, PartialEq)]
pub struct Subgraph<'a> {
    /// Name stored in the file.
    pub name: &'a str,
    /// Tensors in file order.
    pub tensors: Vec<Tensor<'a>>,
    /// Operators in execution order.
    pub operators: Vec<Operator<'a>>,
    /// Graph inputs (tensor indices).
    pub inputs: Vec<i32>,
    /// Graph outputs (tensor indices).
    pub outputs: Vec<i32>,
}

impl Subgraph<'_> {
    /// How many ops write each tensor (by index). A well-formed graph writes
    /// each tensor at most once; a hostile one may write one twice.
    pub fn writer_counts(&self) -> Vec<u32> {
        let mut writers = alloc::vec![0u32; self.tensors.len()];
        for t in self.operators.iter().flat_map(|o| &o.outputs) {
            if let Some(w) = usize::try_from(*t).ok().and_then(|t| writers.get_mut(t)) {
                *w += 1;
            }
        }
        writers
    }
}

/// One entry of the model's buffer table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Buffer<'a> {
    /// The inline data (empty when absent).
    pub data: &'a [u8],
    /// Data stored after the flatbuffer (`offset`/`size`, models above 2 GB).
    /// TFLM does not recognise these as constant, see [`Tensor::has_data`].
    pub external: Option<(u64, u64)>,
}

/// One metadata entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Metadata<'a> {
    /// Entry name.
    pub name: &'a str,
    /// Buffer index.
    pub buffer: u32,
}

/// An `OfflineMemoryAllocation` plan as stored in the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfflinePlan {
    /// Format version word (TFLM ignores it).
    pub version: u32,
    /// Subgraph count word (TFLM ignores it).
    pub subgraphs: u32,
    /// One offset per tensor over all subgraphs, in order; −1 = plan online.
    pub offsets: Vec<i32>,
}

/// The validated, owned view of a `.tflite` file. Weights stay borrowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Model<'a> {
    /// Schema version stored in the file.
    pub version: u32,
    /// Free-text description.
    pub description: Option<&'a str>,
    /// Subgraphs; 0 is the main graph.
    pub subgraphs: Vec<Subgraph<'a>>,
    /// Buffer table (buffer 0 is the empty sentinel by convention).
    pub buffers: Vec<Buffer<'a>>,
    /// Metadata entries.
    pub metadata: Vec<Metadata<'a>>,
    /// The offline plan, when an `OfflineMemoryAllocation` entry exists and reads cleanly.
    pub offline_plan: Option<OfflinePlan>,
    /// Set when an `OfflineMemoryAllocation` entry exists but could not be read.
    pub offline_plan_error: Option<&'static str>,
    /// Size of the file read, in bytes: what the model takes in flash
    /// (`report::flash` splits it into constant data and flatbuffer overhead).
    pub file_bytes: u64,
}

/// `true` when `bytes` carries the `TFL3` file identifier.
pub fn is_tflite(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && fb::model_buffer_has_identifier(bytes)
}

fn vec_i32(v: Option<flatbuffers::Vector<'_, i32>>) -> Vec<i32> {
    v.map(|v| v.iter().collect()).unwrap_or_default()
}

fn check_index(
    what: &'static str,
    subgraph: usize,
    owner: usize,
    index: i64,
    len: usize,
    allow_omitted: bool,
) -> Result<(), ReadError> {
    let ok = (allow_omitted && index == -1) || (index >= 0 && (index as u64) < len as u64);
    if ok {
        Ok(())
    } else {
        Err(ReadError::IndexOutOfRange {
            what,
            subgraph,
            owner,
            index,
            len,
        })
    }
}

impl<'a> Model<'a> {
    /// Reads and validates a model with [`Limits::DEFAULT`].
    pub fn parse(bytes: &'a [u8]) -> Result<Model<'a>, ReadError> {
        Self::parse_with_limits(bytes, &Limits::DEFAULT)
    }

    /// Reads and validates a model with explicit limits.
    pub fn parse_with_limits(bytes: &'a [u8], limits: &Limits) -> Result<Model<'a>, ReadError> {
        if bytes.len() > limits.max_file_bytes {
            return Err(ReadError::TooLarge {
                bytes: bytes.len(),
                limit: limits.max_file_bytes,
            });
        }
        if !is_tflite(bytes) {
            return Err(ReadError::NotTflite { len: bytes.len() });
        }
        let opts = flatbuffers::VerifierOptions {
            max_depth: limits.max_depth,
            max_tables: limits.max_tables,
            max_apparent_size: 1 << 31,
            ignore_missing_null_terminator: false,
        };
        let fbm = fb::root_as_model_with_opts(&opts, bytes)
            .map_err(|e| ReadError::Corrupt(alloc::format!("{e}")))?;

        // Operator codes first: operators refer to them by index.
        let codes: Vec<(BuiltinOp, Option<&'a str>, i32)> = fbm
            .operator_codes()
            .map(|codes| {
                codes
                    .iter()
                    .map(|c| {
                        let code = c
                            .builtin_code()
                            .0
                            .max(i32::from(c.deprecated_builtin_code()));
                        (BuiltinOp(code), c.custom_code(), c.version())
                    })
                    .collect()
            })
            .unwrap_or_default();

        let buffers: Vec<Buffer<'a>> = fbm
            .buffers()
            .map(|bs| {
                bs.iter()
                    .map(|b| Buffer {
                        data: b.data().map(|d| d.bytes()).unwrap_or(&[]),
                        external: (b.offset() > 1).then(|| (b.offset(), b.size())),
                    })
                    .collect()
            })
            .unwrap_or_default();

        let fsgs = fbm.subgraphs().ok_or(ReadError::NoSubgraphs)?;
        if fsgs.is_empty() {
            return Err(ReadError::NoSubgraphs);
        }
        if fsgs.len() > limits.max_subgraphs {
            return Err(ReadError::LimitExceeded {
                what: "subgraphs",
                count: fsgs.len(),
                limit: limits.max_subgraphs,
            });
        }
        let (mut total_tensors, mut total_ops) = (0usize, 0usize);
        for sg in fsgs.iter() {
            total_tensors += sg.tensors().map_or(0, |t| t.len());
            total_ops += sg.operators().map_or(0, |o| o.len());
        }
        if total_tensors > limits.max_tensors {
            return Err(ReadError::LimitExceeded {
                what: "tensors",
                count: total_tensors,
                limit: limits.max_tensors,
            });
        }
        if total_ops > limits.max_operators {
            return Err(ReadError::LimitExceeded {
                what: "operators",
                count: total_ops,
                limit: limits.max_operators,
            });
        }

        let n_subgraphs = fsgs.len();
        let mut subgraphs = Vec::with_capacity(n_subgraphs);
        for (gi, sg) in fsgs.iter().enumerate() {
            let mut tensors = Vec::new();
            for (ti, t) in sg.tensors().into_iter().flatten().enumerate() {
                tensors.push(read_tensor(&t, gi, ti, &buffers, limits)?);
            }
            let n_tensors = tensors.len();
            let mut operators = Vec::new();
            for (oi, op) in sg.operators().into_iter().flatten().enumerate() {
                let idx = op.opcode_index() as usize;
                let &(opcode, custom_code, version) =
                    codes.get(idx).ok_or(ReadError::IndexOutOfRange {
                        what: "opcode_index",
                        subgraph: gi,
                        owner: oi,
                        index: i64::from(op.opcode_index()),
                        len: codes.len(),
                    })?;
                let inputs = vec_i32(op.inputs());
                let outputs = vec_i32(op.outputs());
                let intermediates = vec_i32(op.intermediates());
                for &t in &inputs {
                    check_index("input tensor", gi, oi, i64::from(t), n_tensors, true)?;
                }
                for &t in outputs.iter().chain(&intermediates) {
                    check_index("output tensor", gi, oi, i64::from(t), n_tensors, false)?;
                }
                let options = OpOptions::read(opcode, &op);
                for sub in options.called_subgraphs().into_iter().flatten() {
                    check_index(
                        "called subgraph",
                        gi,
                        oi,
                        i64::from(sub),
                        n_subgraphs,
                        false,
                    )?;
                }
                operators.push(Operator {
                    opcode,
                    custom_code,
                    version,
                    inputs,
                    outputs,
                    intermediates,
                    options,
                    custom_options: op.custom_options().map(|c| c.bytes()).unwrap_or(&[]),
                    quantized_bias_type: crate::read::ops::quantized_bias_type(opcode, &op),
                });
            }
            let inputs = vec_i32(sg.inputs());
            let outputs = vec_i32(sg.outputs());
            for (i, &t) in inputs.iter().enumerate() {
                check_index("graph input", gi, i, i64::from(t), n_tensors, false)?;
            }
            for (i, &t) in outputs.iter().enumerate() {
                check_index("graph output", gi, i, i64::from(t), n_tensors, false)?;
            }
            subgraphs.push(Subgraph {
                name: sg.name().unwrap_or(""),
                tensors,
                operators,
                inputs,
                outputs,
            });
        }

        let metadata: Vec<Metadata<'a>> = fbm
            .metadata()
            .map(|m| {
                m.iter()
                    .map(|e| Metadata {
                        name: e.name().unwrap_or(""),
                        buffer: e.buffer(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let (offline_plan, offline_plan_error) = match metadata
            .iter()
            .rev()
            .find(|m| m.name == OFFLINE_PLAN_METADATA)
        {
            None => (None, None),
            Some(m) => match read_offline_plan(buffers.get(m.buffer as usize)) {
                Ok(plan) => (Some(plan), None),
                Err(why) => (None, Some(why)),
            },
        };

        Ok(Model {
            version: fbm.version(),
            description: fbm.description(),
            subgraphs,
            buffers,
            metadata,
            offline_plan,
            offline_plan_error,
            file_bytes: bytes.len() as u64,
        })
    }

    /// Total number of tensors over all subgraphs.
    pub fn tensor_count(&self) -> usize {
        self.subgraphs.iter().map(|s| s.tensors.len()).sum()
    }

    /// Total number of operators over all subgraphs.
    pub fn operator_count(&self) -> usize {
        self.subgraphs.iter().map(|s| s.operators.len()).sum()
    }

    /// Where each subgraph's operators start when all operators are numbered in one
    /// sequence, subgraph after subgraph (the report's and the analysis's per-op tables).
    pub fn operator_offsets(&self) -> Vec<usize> {
        self.subgraphs
            .iter()
            .scan(0usize, |acc, sg| {
                let base = *acc;
                *acc += sg.operators.len();
                Some(base)
            })
            .collect()
    }

    /// Tensor `t` of subgraph `g`.
    pub fn tensor(&self, g: usize, t: usize) -> Option<&Tensor<'a>> {
        self.subgraphs.get(g).and_then(|s| s.tensors.get(t))
    }

    /// The main subgraph (validated to exist).
    pub fn main(&self) -> &Subgraph<'a> {
        // `parse` refuses models without subgraphs, and `Model` has no other constructor
        // that could leave the list empty.
        #[allow(clippy::indexing_slicing)]
        &self.subgraphs[0]
    }

    /// Data of tensor `t` of subgraph `g` when it is a constant.
    pub fn tensor_data(&self, g: usize, t: usize) -> Option<&'a [u8]> {
        let tensor = self.tensor(g, t)?;
        let buf = self.buffers.get(tensor.buffer as usize)?;
        (!buf.data.is_empty()).then_some(buf.data)
    }

    /// Values of constant tensor `t` of subgraph `g` (shapes, axes, paddings)
    /// when it is int32, or int64 with every value in i32's range.
    pub fn const_ints(&self, g: usize, t: usize) -> Option<Vec<i32>> {
        let d = self.tensor_data(g, t)?;
        match self.tensor(g, t)?.dtype {
            DType::I32 => Some(
                d.chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            DType::I64 => d
                .chunks_exact(8)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w.copy_from_slice(c);
                    i32::try_from(i64::from_le_bytes(w)).ok()
                })
                .collect(),
            _ => None,
        }
    }
}

fn read_tensor<'a>(
    t: &fb::Tensor<'a>,
    gi: usize,
    ti: usize,
    buffers: &[Buffer<'a>],
    limits: &Limits,
) -> Result<Tensor<'a>, ReadError> {
    let dtype = DType::from_code(t.type_().0).ok_or(ReadError::UnknownType {
        subgraph: gi,
        tensor: ti,
        code: t.type_().0,
    })?;
    let shape = vec_i32(t.shape());
    let shape_signature = t.shape_signature().map(|s| s.iter().collect::<Vec<i32>>());
    if shape.len() > limits.max_rank {
        return Err(ReadError::RankTooLarge {
            subgraph: gi,
            tensor: ti,
            rank: shape.len(),
            limit: limits.max_rank,
        });
    }
    if let Some(&dim) = shape.iter().find(|&&d| d < -1) {
        return Err(ReadError::BadDimension {
            subgraph: gi,
            tensor: ti,
            dim,
        });
    }
    let is_dynamic =
        shape.contains(&-1) || shape_signature.as_ref().is_some_and(|s| s.contains(&-1));
    let bytes = match dtype.size_bytes() {
        None => None,
        Some(elem) => {
            let mut n = u64::from(elem);
            for &d in &shape {
                n = n
                    .checked_mul(d.max(1) as u64)
                    .filter(|&n| n <= limits.max_tensor_bytes)
                    .ok_or(ReadError::TensorTooLarge {
                        subgraph: gi,
                        tensor: ti,
                        limit: limits.max_tensor_bytes,
                    })?;
            }
            // A zero dimension makes a zero-byte tensor (LSTM intermediates are [0]).
            if shape.contains(&0) { Some(0) } else { Some(n) }
        }
    };
    let buffer = t.buffer();
    let has_data = buffers
        .get(buffer as usize)
        .is_some_and(|b| !b.data.is_empty());
    let quantization = t.quantization().and_then(|q| {
        let scales: Vec<f32> = q.scale().map(|s| s.iter().collect()).unwrap_or_default();
        let zero_points: Vec<i64> = q
            .zero_point()
            .map(|z| z.iter().collect())
            .unwrap_or_default();
        if scales.is_empty() && zero_points.is_empty() {
            None
        } else {
            Some(Quantization {
                scales,
                zero_points,
                quantized_dimension: q.quantized_dimension(),
            })
        }
    });
    Ok(Tensor {
        name: t.name().unwrap_or(""),
        shape,
        shape_signature,
        dtype,
        buffer,
        has_data,
        is_variable: t.is_variable(),
        quantization,
        bytes,
        is_dynamic,
    })
}

fn read_offline_plan(buf: Option<&Buffer<'_>>) -> Result<OfflinePlan, &'static str> {
    let data = buf
        .map(|b| b.data)
        .ok_or("its buffer index is out of range")?;
    let word = |i: usize| -> Option<u32> {
        let b = data.get(i * 4..i * 4 + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let version = word(0).ok_or("its buffer is shorter than the 3-word header")?;
    let subgraphs = word(1).ok_or("its buffer is shorter than the 3-word header")?;
    let n = word(2).ok_or("its buffer is shorter than the 3-word header")? as usize;
    if data.len() / 4 < 3 + n.min(usize::MAX / 8) || n > data.len() {
        return Err("it declares more offsets than its buffer holds");
    }
    let offsets = (0..n)
        .filter_map(|i| word(3 + i))
        .map(|w| w as i32)
        .collect();
    Ok(OfflinePlan {
        version,
        subgraphs,
        offsets,
    })
}
