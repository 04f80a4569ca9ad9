//! A small writer of real `.tflite` flatbuffers, for tests, examples and
//! fuzz seeds.
//!
//! ```
//! use microarena_core::builder::ModelBuilder;
//! use microarena_core::dtype::DType;
//! use microarena_core::ops::{Activation, BuiltinOp};
//!
//! let mut b = ModelBuilder::new();
//! let g = b.subgraph();
//! let x = b.tensor(g, "x", &[1, 4], DType::I8).quant(0.5, 0).id();
//! let c = b.tensor(g, "c", &[1, 4], DType::I8).quant(0.5, 0).data(&[1, 2, 3, 4]).id();
//! let y = b.tensor(g, "y", &[1, 4], DType::I8).quant(1.0, 0).id();
//! b.op(g, BuiltinOp::ADD, &[x, c], &[y]).add_options(Activation::None);
//! b.inputs(g, &[x]);
//! b.outputs(g, &[y]);
//! let bytes: Vec<u8> = b.build().unwrap();
//! assert!(microarena_core::Model::parse(&bytes).is_ok());
//! ```
//!
//! Indices are plain numbers: subgraphs are `usize`, tensors are `i32` (so −1
//! can mark an omitted optional input, and tests can write out-of-range
//! indices on purpose). [`ModelBuilder::finish`] writes whatever was built,
//! unchecked; [`ModelBuilder::build`] first checks every index and option.
//! Nothing here panics.

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;

use flatbuffers::FlatBufferBuilder;

use crate::dtype::DType;
use crate::model::OFFLINE_PLAN_METADATA;
use crate::ops::{
    Activation, BuiltinOp, ConvOptions, LstmOptions, OpOptions, Padding, PoolOptions,
};
use crate::schema as fb;

/// Why [`ModelBuilder::build`] refused the model.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A subgraph index passed to the builder or stored in control-flow options does not exist.
    NoSuchSubgraph {
        /// The index given.
        index: i64,
        /// Subgraphs in the model.
        len: usize,
    },
    /// A tensor index (op input/output/intermediate or graph input/output) is out of range.
    NoSuchTensor {
        /// Subgraph.
        subgraph: usize,
        /// What refers to it (`"op 3 input"`, `"graph output"`).
        what: String,
        /// The index given.
        index: i32,
        /// Tensors in the subgraph.
        len: usize,
    },
    /// A tensor refers to a buffer that does not exist.
    NoSuchBuffer {
        /// Subgraph.
        subgraph: usize,
        /// Tensor.
        tensor: usize,
        /// Buffer index.
        buffer: u32,
    },
    /// The options given do not belong to the operator (e.g. pool options on ADD).
    OptionsMismatch {
        /// Subgraph.
        subgraph: usize,
        /// Operator index.
        op: usize,
        /// The operator's name.
        opcode: &'static str,
    },
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::NoSuchSubgraph { index, len } => {
                write!(f, "subgraph {index} does not exist (the model has {len})")
            }
            BuildError::NoSuchTensor {
                subgraph,
                what,
                index,
                len,
            } => {
                write!(
                    f,
                    "subgraph {subgraph}: {what} is tensor {index}, outside 0..{len}"
                )
            }
            BuildError::NoSuchBuffer {
                subgraph,
                tensor,
                buffer,
            } => {
                write!(
                    f,
                    "subgraph {subgraph} tensor {tensor}: buffer {buffer} does not exist"
                )
            }
            BuildError::OptionsMismatch {
                subgraph,
                op,
                opcode,
            } => {
                write!(
                    f,
                    "subgraph {subgraph} op {op}: the options given do not belong to {opcode}"
                )
            }
        }
    }
}

impl core::error::Error for BuildError {}

#[derive(Debug, Clone)]
struct OpSpec {
    code: BuiltinOp,
    custom: Option<String>,
    version: i32,
    inputs: Vec<i32>,
    outputs: Vec<i32>,
    intermediates: Vec<i32>,
    options: OpOptions,
    custom_options: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Default)]
struct SubgraphSpec {
    name: Option<String>,
    tensors: Vec<fb::TensorT>,
    ops: Vec<OpSpec>,
    inputs: Vec<i32>,
    outputs: Vec<i32>,
}

#[derive(Debug, Clone)]
enum MetaData {
    Bytes(Vec<u8>),
    /// Offsets of an offline plan; the header is written at finish time.
    OfflinePlan(Vec<i32>),
}

/// Builds a `.tflite` model in memory. See the [module docs](self).
#[derive(Debug, Clone)]
pub struct ModelBuilder {
    version: u32,
    description: Option<String>,
    subgraphs: Vec<SubgraphSpec>,
    /// Buffer 0 is the empty sentinel, as converters write it.
    buffers: Vec<Vec<u8>>,
    metadata: Vec<(String, MetaData)>,
    errors: Vec<BuildError>,
}

impl Default for ModelBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelBuilder {
    /// An empty model (schema version 3, buffer 0 = empty sentinel, no subgraphs yet).
    pub fn new() -> Self {
        ModelBuilder {
            version: 3,
            description: None,
            subgraphs: Vec::new(),
            buffers: alloc::vec![Vec::new()],
            metadata: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Sets the schema version word.
    pub fn version(&mut self, version: u32) -> &mut Self {
        self.version = version;
        self
    }

    /// Sets the free-text description.
    pub fn description(&mut self, text: &str) -> &mut Self {
        self.description = Some(text.into());
        self
    }

    /// Adds a subgraph and returns its index (the first one is the main graph).
    pub fn subgraph(&mut self) -> usize {
        self.subgraphs.push(SubgraphSpec::default());
        self.subgraphs.len() - 1
    }

    /// Adds a named subgraph and returns its index.
    pub fn named_subgraph(&mut self, name: &str) -> usize {
        self.subgraphs.push(SubgraphSpec {
            name: Some(name.into()),
            ..SubgraphSpec::default()
        });
        self.subgraphs.len() - 1
    }

    /// Number of tensors in subgraph `g` so far (0 if it does not exist).
    pub fn tensor_count(&self, g: usize) -> usize {
        self.subgraphs.get(g).map_or(0, |s| s.tensors.len())
    }

    fn sg(&mut self, g: usize) -> Option<&mut SubgraphSpec> {
        let len = self.subgraphs.len();
        let found = self.subgraphs.get_mut(g);
        if found.is_none() {
            self.errors.push(BuildError::NoSuchSubgraph {
                index: g as i64,
                len,
            });
        }
        found
    }

    /// Adds a tensor to subgraph `g` (no buffer data, not variable, no
    /// quantization); refine it with the returned handle.
    pub fn tensor(
        &mut self,
        g: usize,
        name: &str,
        shape: &[i32],
        dtype: DType,
    ) -> TensorHandle<'_> {
        let t = fb::TensorT {
            shape: Some(shape.to_vec()),
            type_: fb::TensorType(dtype.code()),
            buffer: 0,
            name: Some(name.into()),
            ..Default::default()
        };
        let index = match self.sg(g) {
            Some(sg) => {
                sg.tensors.push(t);
                Some(sg.tensors.len() - 1)
            }
            None => None,
        };
        TensorHandle { b: self, g, index }
    }

    /// Adds a buffer holding `data` and returns its index.
    pub fn buffer(&mut self, data: &[u8]) -> u32 {
        self.buffers.push(data.to_vec());
        (self.buffers.len() - 1) as u32
    }

    /// Adds a builtin operator to subgraph `g`. Options default to none
    /// (which the reader maps to each op's defaults); set them on the handle.
    pub fn op(
        &mut self,
        g: usize,
        code: BuiltinOp,
        inputs: &[i32],
        outputs: &[i32],
    ) -> OpHandle<'_> {
        self.push_op(g, code, None, inputs, outputs)
    }

    /// Adds a custom operator (`CUSTOM` with `custom_code`) to subgraph `g`.
    pub fn custom_op(
        &mut self,
        g: usize,
        custom_code: &str,
        inputs: &[i32],
        outputs: &[i32],
    ) -> OpHandle<'_> {
        self.push_op(
            g,
            BuiltinOp::CUSTOM,
            Some(custom_code.into()),
            inputs,
            outputs,
        )
    }

    fn push_op(
        &mut self,
        g: usize,
        code: BuiltinOp,
        custom: Option<String>,
        inputs: &[i32],
        outputs: &[i32],
    ) -> OpHandle<'_> {
        let spec = OpSpec {
            code,
            custom,
            version: 1,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            intermediates: Vec::new(),
            options: OpOptions::None,
            custom_options: None,
        };
        let index = match self.sg(g) {
            Some(sg) => {
                sg.ops.push(spec);
                Some(sg.ops.len() - 1)
            }
            None => None,
        };
        OpHandle { b: self, g, index }
    }

    /// Sets the inputs of subgraph `g`.
    pub fn inputs(&mut self, g: usize, tensors: &[i32]) -> &mut Self {
        if let Some(sg) = self.sg(g) {
            sg.inputs = tensors.to_vec();
        }
        self
    }

    /// Sets the outputs of subgraph `g`.
    pub fn outputs(&mut self, g: usize, tensors: &[i32]) -> &mut Self {
        if let Some(sg) = self.sg(g) {
            sg.outputs = tensors.to_vec();
        }
        self
    }

    /// Adds a metadata entry whose buffer holds `data`.
    pub fn metadata(&mut self, name: &str, data: &[u8]) -> &mut Self {
        self.metadata
            .push((name.into(), MetaData::Bytes(data.to_vec())));
        self
    }

    /// Adds an `OfflineMemoryAllocation` entry: little-endian words
    /// `[1 (version), subgraph count, offsets.len(), offsets...]` (spec §2.3).
    /// The subgraph count is taken when the model is written. −1 = plan online.
    pub fn offline_plan(&mut self, offsets: &[i32]) -> &mut Self {
        self.metadata.push((
            OFFLINE_PLAN_METADATA.into(),
            MetaData::OfflinePlan(offsets.to_vec()),
        ));
        self
    }

    /// Checks every index and option, then writes the model.
    pub fn build(self) -> Result<Vec<u8>, BuildError> {
        self.check()?;
        Ok(self.finish())
    }

    fn check(&self) -> Result<(), BuildError> {
        if let Some(e) = self.errors.first() {
            return Err(e.clone());
        }
        let n_sub = self.subgraphs.len();
        for (g, sg) in self.subgraphs.iter().enumerate() {
            let len = sg.tensors.len();
            let tensor = |what: String, index: i32, allow_omitted: bool| {
                let ok = (allow_omitted && index == -1) || (index >= 0 && (index as usize) < len);
                if ok {
                    Ok(())
                } else {
                    Err(BuildError::NoSuchTensor {
                        subgraph: g,
                        what,
                        index,
                        len,
                    })
                }
            };
            for (t, tensor) in sg.tensors.iter().enumerate() {
                if tensor.buffer as usize >= self.buffers.len() {
                    return Err(BuildError::NoSuchBuffer {
                        subgraph: g,
                        tensor: t,
                        buffer: tensor.buffer,
                    });
                }
            }
            for (i, op) in sg.ops.iter().enumerate() {
                for &t in &op.inputs {
                    tensor(alloc::format!("op {i} input"), t, true)?;
                }
                for &t in &op.outputs {
                    tensor(alloc::format!("op {i} output"), t, false)?;
                }
                for &t in &op.intermediates {
                    tensor(alloc::format!("op {i} intermediate"), t, false)?;
                }
                if !options_fit(op.code, &op.options) {
                    return Err(BuildError::OptionsMismatch {
                        subgraph: g,
                        op: i,
                        opcode: op.code.name(),
                    });
                }
                for s in op.options.called_subgraphs().into_iter().flatten() {
                    if s < 0 || s as usize >= n_sub {
                        return Err(BuildError::NoSuchSubgraph {
                            index: i64::from(s),
                            len: n_sub,
                        });
                    }
                }
            }
            for &t in &sg.inputs {
                tensor("graph input".into(), t, false)?;
            }
            for &t in &sg.outputs {
                tensor("graph output".into(), t, false)?;
            }
        }
        Ok(())
    }

    /// Writes the model as built, without checking indices (so tests can
    /// write broken files on purpose). Options that do not fit their operator
    /// are dropped. The file carries the `TFL3` identifier.
    pub fn finish(self) -> Vec<u8> {
        let n_sub = self.subgraphs.len() as i32;
        let mut buffers = self.buffers;
        let mut metadata = Vec::with_capacity(self.metadata.len());
        for (name, data) in self.metadata {
            let bytes = match data {
                MetaData::Bytes(b) => b,
                MetaData::OfflinePlan(offsets) => {
                    let mut words: Vec<i32> = alloc::vec![1, n_sub, offsets.len() as i32];
                    words.extend_from_slice(&offsets);
                    words.iter().flat_map(|w| w.to_le_bytes()).collect()
                }
            };
            buffers.push(bytes);
            metadata.push(fb::MetadataT {
                name: Some(name),
                buffer: (buffers.len() - 1) as u32,
            });
        }

        // Operator codes, deduplicated by (code, custom code, version) in first-use order.
        let mut codes: Vec<(BuiltinOp, Option<String>, i32)> = Vec::new();
        let mut subgraphs = Vec::with_capacity(self.subgraphs.len());
        for sg in self.subgraphs {
            let mut operators = Vec::with_capacity(sg.ops.len());
            for op in sg.ops {
                let key = (op.code, op.custom.clone(), op.version);
                let opcode_index = match codes.iter().position(|c| *c == key) {
                    Some(i) => i,
                    None => {
                        codes.push(key);
                        codes.len() - 1
                    }
                };
                operators.push(fb::OperatorT {
                    opcode_index: opcode_index as u32,
                    inputs: Some(op.inputs),
                    outputs: Some(op.outputs),
                    builtin_options: to_fb_options(op.code, &op.options)
                        .unwrap_or(fb::BuiltinOptionsT::NONE),
                    custom_options: op.custom_options,
                    intermediates: (!op.intermediates.is_empty()).then_some(op.intermediates),
                    ..Default::default()
                });
            }
            subgraphs.push(fb::SubGraphT {
                tensors: Some(sg.tensors),
                inputs: Some(sg.inputs),
                outputs: Some(sg.outputs),
                operators: Some(operators),
                name: sg.name,
                ..Default::default()
            });
        }
        let operator_codes = codes
            .into_iter()
            .map(|(code, custom_code, version)| fb::OperatorCodeT {
                // Codes above 127 live in `builtin_code`; the deprecated byte holds the
                // placeholder 127, as the converter writes it.
                deprecated_builtin_code: code.0.clamp(0, 127) as i8,
                custom_code,
                version,
                builtin_code: fb::BuiltinOperator(code.0),
            })
            .collect();
        let model = fb::ModelT {
            version: self.version,
            operator_codes: Some(operator_codes),
            subgraphs: Some(subgraphs),
            description: self.description,
            buffers: Some(
                buffers
                    .into_iter()
                    .map(|d| fb::BufferT {
                        data: (!d.is_empty()).then_some(d),
                        offset: 0,
                        size: 0,
                    })
                    .collect(),
            ),
            metadata: (!metadata.is_empty()).then_some(metadata),
            ..Default::default()
        };
        let mut fbb = FlatBufferBuilder::with_capacity(1024);
        let root = model.pack(&mut fbb);
        fbb.finish(root, Some(fb::MODEL_IDENTIFIER));
        fbb.finished_data().to_vec()
    }
}

/// Refines a tensor just added with [`ModelBuilder::tensor`].
#[derive(Debug)]
pub struct TensorHandle<'b> {
    b: &'b mut ModelBuilder,
    g: usize,
    index: Option<usize>,
}

impl TensorHandle<'_> {
    fn t(&mut self) -> Option<&mut fb::TensorT> {
        let i = self.index?;
        self.b.subgraphs.get_mut(self.g)?.tensors.get_mut(i)
    }

    /// Per-tensor quantization (one scale, one zero point, dimension 0).
    pub fn quant(self, scale: f32, zero_point: i64) -> Self {
        self.quant_per_channel(&[scale], &[zero_point], 0)
    }

    /// Per-channel (or any explicit) quantization.
    pub fn quant_per_channel(
        mut self,
        scales: &[f32],
        zero_points: &[i64],
        quantized_dimension: i32,
    ) -> Self {
        if let Some(t) = self.t() {
            t.quantization = Some(Box::new(fb::QuantizationParametersT {
                scale: Some(scales.to_vec()),
                zero_point: Some(zero_points.to_vec()),
                quantized_dimension,
                ..Default::default()
            }));
        }
        self
    }

    /// Makes the tensor a constant: its data goes into a new buffer.
    pub fn data(mut self, bytes: &[u8]) -> Self {
        let buffer = self.b.buffer(bytes);
        if let Some(t) = self.t() {
            t.buffer = buffer;
        }
        self
    }

    /// [`TensorHandle::data`] from int8 values.
    pub fn data_i8(self, values: &[i8]) -> Self {
        let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
        self.data(&bytes)
    }

    /// [`TensorHandle::data`] from int32 values (little-endian).
    pub fn data_i32(self, values: &[i32]) -> Self {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.data(&bytes)
    }

    /// [`TensorHandle::data`] from float32 values (little-endian).
    pub fn data_f32(self, values: &[f32]) -> Self {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.data(&bytes)
    }

    /// Points the tensor at an existing buffer (shared weights, or an empty one).
    pub fn buffer(mut self, index: u32) -> Self {
        if let Some(t) = self.t() {
            t.buffer = index;
        }
        self
    }

    /// Marks the tensor as a variable (LSTM/SVDF state).
    pub fn variable(mut self) -> Self {
        if let Some(t) = self.t() {
            t.is_variable = true;
        }
        self
    }

    /// Sets `shape_signature` (−1 marks a dynamic dimension).
    pub fn signature(mut self, shape: &[i32]) -> Self {
        if let Some(t) = self.t() {
            t.shape_signature = Some(shape.to_vec());
        }
        self
    }

    /// The tensor's index in its subgraph (−1 if the subgraph did not exist;
    /// [`ModelBuilder::build`] then reports it).
    pub fn id(self) -> i32 {
        self.index.map_or(-1, |i| i as i32)
    }
}

/// Refines an operator just added with [`ModelBuilder::op`] or [`ModelBuilder::custom_op`].
#[derive(Debug)]
pub struct OpHandle<'b> {
    b: &'b mut ModelBuilder,
    g: usize,
    index: Option<usize>,
}

impl OpHandle<'_> {
    fn op(&mut self) -> Option<&mut OpSpec> {
        let i = self.index?;
        self.b.subgraphs.get_mut(self.g)?.ops.get_mut(i)
    }

    /// Sets the builtin options (they must fit the operator, see [`BuildError::OptionsMismatch`]).
    pub fn options(mut self, options: OpOptions) -> Self {
        if let Some(op) = self.op() {
            op.options = options;
        }
        self
    }

    /// Sets the intermediate tensors (LSTM).
    pub fn intermediates(mut self, tensors: &[i32]) -> Self {
        if let Some(op) = self.op() {
            op.intermediates = tensors.to_vec();
        }
        self
    }

    /// Sets raw custom options (FlexBuffers for custom ops).
    pub fn custom_options(mut self, bytes: &[u8]) -> Self {
        if let Some(op) = self.op() {
            op.custom_options = Some(bytes.to_vec());
        }
        self
    }

    /// Sets the operator-code version (default 1).
    pub fn version(mut self, version: i32) -> Self {
        if let Some(op) = self.op() {
            op.version = version;
        }
        self
    }

    /// CONV_2D options (dilation 1).
    pub fn conv_options(
        self,
        padding: Padding,
        stride_w: i32,
        stride_h: i32,
        activation: Activation,
    ) -> Self {
        self.options(OpOptions::Conv(ConvOptions {
            padding,
            stride_w,
            stride_h,
            dilation_w: 1,
            dilation_h: 1,
            depth_multiplier: 1,
            activation,
        }))
    }

    /// DEPTHWISE_CONV_2D options (dilation 1).
    pub fn depthwise_options(
        self,
        padding: Padding,
        stride_w: i32,
        stride_h: i32,
        depth_multiplier: i32,
        activation: Activation,
    ) -> Self {
        self.options(OpOptions::Conv(ConvOptions {
            padding,
            stride_w,
            stride_h,
            dilation_w: 1,
            dilation_h: 1,
            depth_multiplier,
            activation,
        }))
    }

    /// Changes the dilation of convolution options set before.
    pub fn dilation(mut self, dilation_w: i32, dilation_h: i32) -> Self {
        if let Some(op) = self.op()
            && let OpOptions::Conv(c) = &mut op.options
        {
            c.dilation_w = dilation_w;
            c.dilation_h = dilation_h;
        }
        self
    }

    /// AVERAGE_POOL_2D / MAX_POOL_2D options.
    pub fn pool_options(
        self,
        padding: Padding,
        stride: (i32, i32),
        filter: (i32, i32),
        activation: Activation,
    ) -> Self {
        self.options(OpOptions::Pool(PoolOptions {
            padding,
            stride_w: stride.0,
            stride_h: stride.1,
            filter_w: filter.0,
            filter_h: filter.1,
            activation,
        }))
    }

    /// FULLY_CONNECTED options.
    pub fn fc_options(self, activation: Activation, keep_num_dims: bool) -> Self {
        self.options(OpOptions::FullyConnected {
            activation,
            keep_num_dims,
            asymmetric_quantize_inputs: false,
        })
    }

    /// SOFTMAX options.
    pub fn softmax_options(self, beta: f32) -> Self {
        self.options(OpOptions::Softmax { beta })
    }

    /// RESHAPE options.
    pub fn reshape_options(self, new_shape: &[i32]) -> Self {
        self.options(OpOptions::Reshape {
            new_shape: Some(new_shape.to_vec()),
        })
    }

    /// ADD / SUB options.
    pub fn add_options(self, activation: Activation) -> Self {
        self.options(OpOptions::Elementwise {
            activation,
            pot_scale_int16: false,
        })
    }

    /// MUL / DIV options.
    pub fn mul_options(self, activation: Activation) -> Self {
        self.options(OpOptions::Elementwise {
            activation,
            pot_scale_int16: false,
        })
    }

    /// CONCATENATION options.
    pub fn concat_options(self, axis: i32, activation: Activation) -> Self {
        self.options(OpOptions::Concatenation { axis, activation })
    }

    /// IF options (subgraph indices).
    pub fn if_options(self, then_subgraph: usize, else_subgraph: usize) -> Self {
        self.options(OpOptions::If {
            then_subgraph: then_subgraph as i32,
            else_subgraph: else_subgraph as i32,
        })
    }

    /// WHILE options (subgraph indices).
    pub fn while_options(self, cond_subgraph: usize, body_subgraph: usize) -> Self {
        self.options(OpOptions::While {
            cond_subgraph: cond_subgraph as i32,
            body_subgraph: body_subgraph as i32,
        })
    }

    /// CALL_ONCE options (subgraph index).
    pub fn call_once_options(self, init_subgraph: usize) -> Self {
        self.options(OpOptions::CallOnce {
            init_subgraph: init_subgraph as i32,
        })
    }

    /// VAR_HANDLE options.
    pub fn var_handle_options(self, container: &str, shared_name: &str) -> Self {
        self.options(OpOptions::VarHandle {
            container: container.to_string(),
            shared_name: shared_name.to_string(),
        })
    }

    /// UNIDIRECTIONAL_SEQUENCE_LSTM options.
    pub fn lstm_options(self, options: LstmOptions) -> Self {
        self.options(OpOptions::Lstm(options))
    }

    /// SVDF options.
    pub fn svdf_options(self, rank: i32, activation: Activation) -> Self {
        self.options(OpOptions::Svdf {
            rank,
            activation,
            asymmetric_quantize_inputs: false,
        })
    }

    /// The operator's index in its subgraph (`usize::MAX` if the subgraph did not exist).
    pub fn index(self) -> usize {
        self.index.unwrap_or(usize::MAX)
    }
}

fn act(a: Activation) -> fb::ActivationFunctionType {
    fb::ActivationFunctionType(a.code())
}

fn pad(p: Padding) -> fb::Padding {
    match p {
        Padding::Same => fb::Padding::SAME,
        Padding::Valid => fb::Padding::VALID,
    }
}

fn options_fit(code: BuiltinOp, options: &OpOptions) -> bool {
    matches!(options, OpOptions::None) || to_fb_options(code, options).is_some()
}

/// The schema options for `options` on an operator with `code`; `None` when they do not fit.
fn to_fb_options(code: BuiltinOp, options: &OpOptions) -> Option<fb::BuiltinOptionsT> {
    use BuiltinOp as B;
    use fb::BuiltinOptionsT as O;
    Some(match (code, options) {
        (_, OpOptions::None) => O::NONE,
        (B::CONV_2D, OpOptions::Conv(c)) => O::Conv2DOptions(Box::new(fb::Conv2DOptionsT {
            padding: pad(c.padding),
            stride_w: c.stride_w,
            stride_h: c.stride_h,
            fused_activation_function: act(c.activation),
            dilation_w_factor: c.dilation_w,
            dilation_h_factor: c.dilation_h,
            ..Default::default()
        })),
        (B::DEPTHWISE_CONV_2D, OpOptions::Conv(c)) => {
            O::DepthwiseConv2DOptions(Box::new(fb::DepthwiseConv2DOptionsT {
                padding: pad(c.padding),
                stride_w: c.stride_w,
                stride_h: c.stride_h,
                depth_multiplier: c.depth_multiplier,
                fused_activation_function: act(c.activation),
                dilation_w_factor: c.dilation_w,
                dilation_h_factor: c.dilation_h,
            }))
        }
        (B::TRANSPOSE_CONV, OpOptions::Conv(c)) => {
            O::TransposeConvOptions(Box::new(fb::TransposeConvOptionsT {
                padding: pad(c.padding),
                stride_w: c.stride_w,
                stride_h: c.stride_h,
                fused_activation_function: act(c.activation),
                ..Default::default()
            }))
        }
        (B::AVERAGE_POOL_2D | B::MAX_POOL_2D, OpOptions::Pool(p)) => {
            O::Pool2DOptions(Box::new(fb::Pool2DOptionsT {
                padding: pad(p.padding),
                stride_w: p.stride_w,
                stride_h: p.stride_h,
                filter_width: p.filter_w,
                filter_height: p.filter_h,
                fused_activation_function: act(p.activation),
            }))
        }
        (
            B::FULLY_CONNECTED,
            OpOptions::FullyConnected {
                activation,
                keep_num_dims,
                asymmetric_quantize_inputs,
            },
        ) => O::FullyConnectedOptions(Box::new(fb::FullyConnectedOptionsT {
            fused_activation_function: act(*activation),
            keep_num_dims: *keep_num_dims,
            asymmetric_quantize_inputs: *asymmetric_quantize_inputs,
            ..Default::default()
        })),
        (B::SOFTMAX, OpOptions::Softmax { beta }) => {
            O::SoftmaxOptions(Box::new(fb::SoftmaxOptionsT { beta: *beta }))
        }
        (B::RESHAPE, OpOptions::Reshape { new_shape }) => {
            O::ReshapeOptions(Box::new(fb::ReshapeOptionsT {
                new_shape: new_shape.clone(),
            }))
        }
        (
            B::ADD,
            OpOptions::Elementwise {
                activation,
                pot_scale_int16,
            },
        ) => O::AddOptions(Box::new(fb::AddOptionsT {
            fused_activation_function: act(*activation),
            pot_scale_int16: *pot_scale_int16,
        })),
        (
            B::SUB,
            OpOptions::Elementwise {
                activation,
                pot_scale_int16,
            },
        ) => O::SubOptions(Box::new(fb::SubOptionsT {
            fused_activation_function: act(*activation),
            pot_scale_int16: *pot_scale_int16,
        })),
        (B::MUL, OpOptions::Elementwise { activation, .. }) => {
            O::MulOptions(Box::new(fb::MulOptionsT {
                fused_activation_function: act(*activation),
            }))
        }
        (B::DIV, OpOptions::Elementwise { activation, .. }) => {
            O::DivOptions(Box::new(fb::DivOptionsT {
                fused_activation_function: act(*activation),
            }))
        }
        (B::CONCATENATION, OpOptions::Concatenation { axis, activation }) => {
            O::ConcatenationOptions(Box::new(fb::ConcatenationOptionsT {
                axis: *axis,
                fused_activation_function: act(*activation),
            }))
        }
        (B::STRIDED_SLICE, OpOptions::StridedSlice(s)) => {
            O::StridedSliceOptions(Box::new(fb::StridedSliceOptionsT {
                begin_mask: s.begin_mask,
                end_mask: s.end_mask,
                ellipsis_mask: s.ellipsis_mask,
                new_axis_mask: s.new_axis_mask,
                shrink_axis_mask: s.shrink_axis_mask,
                offset: s.offset,
            }))
        }
        (
            B::MEAN | B::SUM | B::REDUCE_MAX | B::REDUCE_MIN | B::REDUCE_ALL,
            OpOptions::Reducer { keep_dims },
        ) => O::ReducerOptions(Box::new(fb::ReducerOptionsT {
            keep_dims: *keep_dims,
        })),
        (B::UNIDIRECTIONAL_SEQUENCE_LSTM, OpOptions::Lstm(l)) => {
            O::UnidirectionalSequenceLSTMOptions(Box::new(fb::UnidirectionalSequenceLSTMOptionsT {
                fused_activation_function: act(l.activation),
                cell_clip: l.cell_clip,
                proj_clip: l.proj_clip,
                time_major: l.time_major,
                asymmetric_quantize_inputs: l.asymmetric_quantize_inputs,
                ..Default::default()
            }))
        }
        (
            B::SVDF,
            OpOptions::Svdf {
                rank,
                activation,
                asymmetric_quantize_inputs,
            },
        ) => O::SVDFOptions(Box::new(fb::SVDFOptionsT {
            rank: *rank,
            fused_activation_function: act(*activation),
            asymmetric_quantize_inputs: *asymmetric_quantize_inputs,
        })),
        (
            B::IF,
            OpOptions::If {
                then_subgraph,
                else_subgraph,
            },
        ) => O::IfOptions(Box::new(fb::IfOptionsT {
            then_subgraph_index: *then_subgraph,
            else_subgraph_index: *else_subgraph,
        })),
        (
            B::WHILE,
            OpOptions::While {
                cond_subgraph,
                body_subgraph,
            },
        ) => O::WhileOptions(Box::new(fb::WhileOptionsT {
            cond_subgraph_index: *cond_subgraph,
            body_subgraph_index: *body_subgraph,
        })),
        (B::CALL_ONCE, OpOptions::CallOnce { init_subgraph }) => {
            O::CallOnceOptions(Box::new(fb::CallOnceOptionsT {
                init_subgraph_index: *init_subgraph,
            }))
        }
        (
            B::VAR_HANDLE,
            OpOptions::VarHandle {
                container,
                shared_name,
            },
        ) => O::VarHandleOptions(Box::new(fb::VarHandleOptionsT {
            container: Some(container.clone()),
            shared_name: Some(shared_name.clone()),
        })),
        (B::LEAKY_RELU, OpOptions::LeakyRelu { alpha }) => {
            O::LeakyReluOptions(Box::new(fb::LeakyReluOptionsT { alpha: *alpha }))
        }
        (B::SQUEEZE, OpOptions::Squeeze { dims }) => {
            O::SqueezeOptions(Box::new(fb::SqueezeOptionsT {
                squeeze_dims: Some(dims.clone()),
            }))
        }
        (B::GATHER, OpOptions::Gather { axis, batch_dims }) => {
            O::GatherOptions(Box::new(fb::GatherOptionsT {
                axis: *axis,
                batch_dims: *batch_dims,
            }))
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use crate::model::{Model, OfflinePlan, Quantization, ReadError};
    use crate::ops::StridedSliceOptions;

    fn conv(padding: Padding, s: i32, d: i32, dm: i32, a: Activation) -> OpOptions {
        OpOptions::Conv(ConvOptions {
            padding,
            stride_w: s,
            stride_h: s + 1,
            dilation_w: d,
            dilation_h: d + 1,
            depth_multiplier: dm,
            activation: a,
        })
    }

    /// Every field the builder can set reads back unchanged through `Model::parse`.
    #[test]
    fn every_field_round_trips() {
        let mut b = ModelBuilder::new();
        b.description("round trip").version(3);
        let g = b.named_subgraph("main");
        let x = b
            .tensor(g, "x", &[1, 8, 8, 2], DType::I8)
            .quant(0.25, -3)
            .signature(&[-1, 8, 8, 2])
            .id();
        let w = b
            .tensor(g, "w", &[4, 3, 3, 2], DType::I8)
            .quant_per_channel(&[0.1, 0.2, 0.3, 0.4], &[0, 0, 0, 0], 0)
            .data_i8(&[1; 72])
            .id();
        let bias = b
            .tensor(g, "b", &[4], DType::I32)
            .data_i32(&[1, -2, 3, -4])
            .id();
        let y = b
            .tensor(g, "y", &[1, 4, 4, 4], DType::I8)
            .quant(0.5, 1)
            .id();
        let v = b.tensor(g, "state", &[1, 16], DType::I16).variable().id();
        let f = b
            .tensor(g, "f", &[2], DType::F32)
            .data_f32(&[1.5, -2.0])
            .id();
        let shared = b
            .tensor(g, "f2", &[2], DType::F32)
            .buffer(b_index_of_f())
            .id();
        let z = b.tensor(g, "z", &[1, 64], DType::I8).id();
        let s = b.tensor(g, "s", &[1, 64], DType::I8).id();
        let r = b.tensor(g, "res", &[], DType::Resource).id();
        let i0 = b.tensor(g, "i0", &[0], DType::I8).id();
        let pc = b
            .tensor(g, "pc", &[1, 1, 1, 4], DType::I8)
            .quant_per_channel(&[1.0; 4], &[0; 4], 3)
            .id();

        let ops: Vec<(BuiltinOp, OpOptions)> = alloc::vec![
            (
                BuiltinOp::CONV_2D,
                conv(Padding::Same, 2, 1, 1, Activation::Relu6)
            ),
            (
                BuiltinOp::DEPTHWISE_CONV_2D,
                conv(Padding::Valid, 1, 2, 3, Activation::Relu)
            ),
            // TransposeConvOptions has no dilation or multiplier: the reader reports 1.
            (
                BuiltinOp::TRANSPOSE_CONV,
                OpOptions::Conv(ConvOptions {
                    padding: Padding::Valid,
                    stride_w: 2,
                    stride_h: 3,
                    dilation_w: 1,
                    dilation_h: 1,
                    depth_multiplier: 1,
                    activation: Activation::None,
                }),
            ),
            (
                BuiltinOp::AVERAGE_POOL_2D,
                OpOptions::Pool(PoolOptions {
                    padding: Padding::Valid,
                    stride_w: 2,
                    stride_h: 3,
                    filter_w: 4,
                    filter_h: 5,
                    activation: Activation::None,
                }),
            ),
            (
                BuiltinOp::MAX_POOL_2D,
                OpOptions::Pool(PoolOptions {
                    padding: Padding::Same,
                    stride_w: 1,
                    stride_h: 1,
                    filter_w: 2,
                    filter_h: 2,
                    activation: Activation::Relu,
                }),
            ),
            (
                BuiltinOp::FULLY_CONNECTED,
                OpOptions::FullyConnected {
                    activation: Activation::Relu,
                    keep_num_dims: true,
                    asymmetric_quantize_inputs: true,
                },
            ),
            (BuiltinOp::SOFTMAX, OpOptions::Softmax { beta: 0.75 }),
            (
                BuiltinOp::RESHAPE,
                OpOptions::Reshape {
                    new_shape: Some(alloc::vec![1, -1])
                }
            ),
            (
                BuiltinOp::ADD,
                OpOptions::Elementwise {
                    activation: Activation::Relu6,
                    pot_scale_int16: false
                }
            ),
            (
                BuiltinOp::SUB,
                OpOptions::Elementwise {
                    activation: Activation::Relu,
                    pot_scale_int16: true
                }
            ),
            (
                BuiltinOp::MUL,
                OpOptions::Elementwise {
                    activation: Activation::Tanh,
                    pot_scale_int16: false
                }
            ),
            (
                BuiltinOp::DIV,
                OpOptions::Elementwise {
                    activation: Activation::None,
                    pot_scale_int16: false
                }
            ),
            (
                BuiltinOp::CONCATENATION,
                OpOptions::Concatenation {
                    axis: -1,
                    activation: Activation::Relu
                }
            ),
            (
                BuiltinOp::STRIDED_SLICE,
                OpOptions::StridedSlice(StridedSliceOptions {
                    begin_mask: 1,
                    end_mask: 2,
                    ellipsis_mask: 0,
                    new_axis_mask: 4,
                    shrink_axis_mask: 8,
                    offset: true,
                }),
            ),
            (BuiltinOp::MEAN, OpOptions::Reducer { keep_dims: true }),
            (
                BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM,
                OpOptions::Lstm(LstmOptions {
                    activation: Activation::Tanh,
                    cell_clip: 10.0,
                    proj_clip: 0.5,
                    time_major: true,
                    asymmetric_quantize_inputs: false,
                }),
            ),
            (
                BuiltinOp::SVDF,
                OpOptions::Svdf {
                    rank: 2,
                    activation: Activation::Relu,
                    asymmetric_quantize_inputs: true
                }
            ),
            (
                BuiltinOp::IF,
                OpOptions::If {
                    then_subgraph: 1,
                    else_subgraph: 2
                }
            ),
            (
                BuiltinOp::WHILE,
                OpOptions::While {
                    cond_subgraph: 2,
                    body_subgraph: 1
                }
            ),
            (
                BuiltinOp::CALL_ONCE,
                OpOptions::CallOnce { init_subgraph: 1 }
            ),
            (
                BuiltinOp::VAR_HANDLE,
                OpOptions::VarHandle {
                    container: "c".into(),
                    shared_name: "var0".into()
                }
            ),
            (BuiltinOp::LEAKY_RELU, OpOptions::LeakyRelu { alpha: 0.125 }),
            (
                BuiltinOp::SQUEEZE,
                OpOptions::Squeeze {
                    dims: alloc::vec![0, 2]
                }
            ),
            (
                BuiltinOp::GATHER,
                OpOptions::Gather {
                    axis: 1,
                    batch_dims: 1
                }
            ),
        ];
        for (code, options) in &ops {
            let idx = b
                .op(g, *code, &[x, -1, w, bias], &[y])
                .options(options.clone())
                .index();
            assert!(idx < ops.len());
        }
        b.op(g, BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM, &[z, v], &[s])
            .intermediates(&[i0])
            .version(4);
        b.custom_op(g, "MyOp", &[s], &[z])
            .custom_options(&[9, 8, 7])
            .version(2);
        b.op(g, BuiltinOp::ADD, &[f, shared], &[pc]);
        b.op(g, BuiltinOp::VAR_HANDLE, &[], &[r])
            .var_handle_options("", "v");
        b.inputs(g, &[x]).outputs(g, &[y, s]);
        let g1 = b.subgraph();
        let a1 = b.tensor(g1, "a1", &[3], DType::F32).id();
        b.inputs(g1, &[a1]).outputs(g1, &[a1]);
        let g2 = b.subgraph();
        b.metadata("min_runtime_version", b"1.5.0\0");
        b.offline_plan(&[0, -1, 100, 16]);
        let bytes = b.build().unwrap();

        let m = Model::parse(&bytes).unwrap();
        assert_eq!(m.version, 3);
        assert_eq!(m.description, Some("round trip"));
        assert_eq!(m.subgraphs.len(), 3);
        assert_eq!(g2, 2);
        let sg = &m.subgraphs[0];
        assert_eq!(sg.name, "main");
        assert_eq!(sg.inputs, [x]);
        assert_eq!(sg.outputs, [y, s]);

        let tx = &sg.tensors[x as usize];
        assert_eq!(
            (tx.name, &tx.shape[..], tx.dtype),
            ("x", &[1, 8, 8, 2][..], DType::I8)
        );
        assert_eq!(tx.shape_signature.as_deref(), Some(&[-1, 8, 8, 2][..]));
        assert!(tx.is_dynamic && !tx.has_data && !tx.is_variable);
        assert_eq!(
            tx.quantization,
            Some(Quantization {
                scales: alloc::vec![0.25],
                zero_points: alloc::vec![-3],
                quantized_dimension: 0
            })
        );
        assert_eq!(tx.bytes, Some(128));
        let tw = &sg.tensors[w as usize];
        assert!(tw.has_data && tw.is_per_channel());
        assert_eq!(m.tensor_data(0, w as usize), Some(&[1u8; 72][..]));
        assert_eq!(
            tw.quantization.as_ref().unwrap().scales,
            [0.1, 0.2, 0.3, 0.4]
        );
        let bias_bytes: Vec<u8> = [1i32, -2, 3, -4]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(m.tensor_data(0, bias as usize), Some(&bias_bytes[..]));
        assert_eq!(sg.tensors[bias as usize].dtype, DType::I32);
        let tv = &sg.tensors[v as usize];
        assert!(tv.is_variable && !tv.has_data);
        assert_eq!((tv.dtype, tv.bytes), (DType::I16, Some(32)));
        let f_bytes: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        assert_eq!(m.tensor_data(0, f as usize), Some(&f_bytes[..]));
        assert_eq!(
            sg.tensors[shared as usize].buffer,
            sg.tensors[f as usize].buffer
        );
        assert_eq!(sg.tensors[r as usize].dtype, DType::Resource);
        assert_eq!(sg.tensors[r as usize].shape, Vec::<i32>::new());
        assert_eq!(sg.tensors[i0 as usize].bytes, Some(0));
        assert_eq!(
            sg.tensors[pc as usize]
                .quantization
                .as_ref()
                .unwrap()
                .quantized_dimension,
            3
        );

        for (i, (code, options)) in ops.iter().enumerate() {
            let op = &sg.operators[i];
            assert_eq!(op.opcode, *code);
            assert_eq!(&op.options, options, "{code:?}");
            assert_eq!(op.inputs, [x, -1, w, bias]);
            assert_eq!(op.outputs, [y]);
            assert_eq!(op.version, 1);
        }
        let lstm = &sg.operators[ops.len()];
        assert_eq!(
            (lstm.intermediates.as_slice(), lstm.version),
            (&[i0][..], 4)
        );
        let custom = &sg.operators[ops.len() + 1];
        assert_eq!(
            (custom.opcode, custom.custom_code, custom.name()),
            (BuiltinOp::CUSTOM, Some("MyOp"), "MyOp")
        );
        assert_eq!(
            (custom.custom_options, custom.version),
            (&[9u8, 8, 7][..], 2)
        );
        // ADD without options: the reader's defaults.
        assert_eq!(
            sg.operators[ops.len() + 2].options,
            OpOptions::Elementwise {
                activation: Activation::None,
                pot_scale_int16: true
            }
        );
        assert_eq!(
            sg.operators[ops.len() + 3].options,
            OpOptions::VarHandle {
                container: String::new(),
                shared_name: "v".into()
            }
        );
        assert_eq!(m.subgraphs[1].inputs, [a1]);
        assert!(m.subgraphs[2].tensors.is_empty());

        assert_eq!(m.metadata.len(), 2);
        assert_eq!(m.metadata[0].name, "min_runtime_version");
        assert_eq!(m.buffers[m.metadata[0].buffer as usize].data, b"1.5.0\0");
        assert_eq!(m.metadata[1].name, OFFLINE_PLAN_METADATA);
        assert_eq!(
            m.offline_plan,
            Some(OfflinePlan {
                version: 1,
                subgraphs: 3,
                offsets: alloc::vec![0, -1, 100, 16]
            })
        );
        assert_eq!(m.offline_plan_error, None);
        // Raw words of the plan buffer: [1, 3, 4, 0, -1, 100, 16] little-endian.
        let words: Vec<u8> = [1i32, 3, 4, 0, -1, 100, 16]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        assert_eq!(m.buffers[m.metadata[1].buffer as usize].data, &words[..]);
        assert!(m.buffers[0].data.is_empty());
    }

    /// The shared tensor above points at the buffer `data_f32` created: buffer 0 is the
    /// sentinel, then w (1), bias (2), f (3).
    fn b_index_of_f() -> u32 {
        3
    }

    #[test]
    fn opcodes_above_127_use_the_placeholder() {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let r = b.tensor(g, "r", &[], DType::Resource).id();
        b.op(g, BuiltinOp::VAR_HANDLE, &[], &[r]);
        b.op(g, BuiltinOp::ADD, &[r, r], &[r]);
        let bytes = b.build().unwrap();
        let m = Model::parse(&bytes).unwrap();
        assert_eq!(m.main().operators[0].opcode, BuiltinOp::VAR_HANDLE);
        assert_eq!(m.main().operators[1].opcode, BuiltinOp::ADD);
    }

    #[test]
    fn build_checks_indices_and_options() {
        let bad_tensor = {
            let mut b = ModelBuilder::new();
            let g = b.subgraph();
            let x = b.tensor(g, "x", &[1], DType::I8).id();
            b.op(g, BuiltinOp::ADD, &[x, 5], &[x]);
            b
        };
        assert!(matches!(
            bad_tensor.clone().build(),
            Err(BuildError::NoSuchTensor {
                subgraph: 0,
                index: 5,
                len: 1,
                ..
            })
        ));
        // finish() writes it anyway, and the reader refuses it.
        let bytes = bad_tensor.finish();
        assert!(matches!(
            Model::parse(&bytes),
            Err(ReadError::IndexOutOfRange {
                what: "input tensor",
                index: 5,
                len: 1,
                ..
            })
        ));

        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let x = b.tensor(g, "x", &[1], DType::I8).id();
        b.op(g, BuiltinOp::ADD, &[x], &[x]).softmax_options(1.0);
        assert!(matches!(
            b.build(),
            Err(BuildError::OptionsMismatch {
                subgraph: 0,
                op: 0,
                opcode: "ADD"
            })
        ));

        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        b.op(g, BuiltinOp::CALL_ONCE, &[], &[]).call_once_options(7);
        assert!(matches!(
            b.build(),
            Err(BuildError::NoSuchSubgraph { index: 7, len: 1 })
        ));

        let mut b = ModelBuilder::new();
        assert_eq!(b.tensor(3, "x", &[1], DType::I8).id(), -1);
        assert!(matches!(
            b.build(),
            Err(BuildError::NoSuchSubgraph { index: 3, len: 0 })
        ));

        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        b.tensor(g, "x", &[1], DType::I8).buffer(9);
        assert!(matches!(
            b.build(),
            Err(BuildError::NoSuchBuffer {
                subgraph: 0,
                tensor: 0,
                buffer: 9
            })
        ));
    }
}
