//! Small `.tflite` models built with the generated flatbuffer API, for the
//! runtime's unit tests and the firmware build (no model files are copied
//! from the corpus).

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
pub fn build(tensors: &[TensorSpec], ops: &[OpSpec], inputs: &[i32], outputs: &[i32]) -> Vec<u8> {
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
                let o = fb::ReducerOptions::create(&mut b, &fb::ReducerOptionsArgs { keep_dims });
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
    let mut conv_w = TensorSpec::constant(&[8, 3, 3, 1], i8t, bytes(7, 72), &conv_scales, &[0; 8]);
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
