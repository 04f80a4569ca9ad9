//! A small writer of real `.tflite` flatbuffers, for tests, examples and
//! fuzz seeds.
//!
//! ```
//! use microarena_core::build::builder::ModelBuilder;
//! use microarena_core::read::dtype::DType;
//! use microarena_core::read::ops::{Activation, BuiltinOp};
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

use flatbuffers::FlatBufferBuilder;

use crate::read::dtype::DType;
use crate::read::model::OFFLINE_PLAN_METADATA;
use crate::read::ops::{
    Activation, BuiltinOp, ConvOptions, LstmOptions, OpOptions, Padding, PoolOptions,
};
use crate::read::schema as fb;

mod error;
mod options;
#[cfg(test)]
mod tests;

pub use error::BuildError;
pub use options::flex_int_map;
use options::{options_fit, to_fb_options, with_bias_type};

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
    /// The options' `quantized_bias_type` (a TFLite type code; 0 leaves it unset).
    quantized_bias_type: i8,
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
            quantized_bias_type: 0,
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
                    builtin_options: with_bias_type(
                        to_fb_options(op.code, &op.options).unwrap_or(fb::BuiltinOptionsT::NONE),
                        op.quantized_bias_type,
                    ),
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

    /// Sets the `quantized_bias_type` of CONV_2D, FULLY_CONNECTED or
    /// TRANSPOSE_CONV options set before (ignored for other options).
    pub fn quantized_bias_type(mut self, dtype: DType) -> Self {
        if let Some(op) = self.op() {
            op.quantized_bias_type = dtype.code();
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
