//! The registry's verdicts against TFLM's own: one-op models built here were
//! run through the `tflite-micro` wheel (reference kernels, x86-64) by
//! `registry_wheel.py`, which recorded whether the model loaded
//! (`AllocateTensors`, so every Prepare), and whether `Invoke` then ran, in
//! `registry_wheel.jsonl`. The registry must give the same verdict on the
//! reference backend: no rejection for "ok", `Stage::Prepare` for a model that
//! fails to load, `Stage::Invoke` for one that loads and fails at `Invoke`.
//!
//! Regenerate after changing a case: `MICROARENA_PROBE_DIR=/tmp/probe cargo test
//! -p microarena-core --test registry_wheel -- --ignored write_probe_models`, then
//! `python3 core/tests/registry_wheel.py /tmp/probe > core/tests/registry_wheel.jsonl`
//! with the wheel installed (`pip install tflite-micro==0.dev20261023182759`).

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, OpOptions, Padding};
use microarena_core::tflm::profile::Backend;
use microarena_core::tflm::registry::{self, Stage};
use microarena_image::opcode as c;

use DType::{Bool, F32, I8, I16, I32, I64, U8};

/// One tensor of a probe op.
#[derive(Clone)]
struct T {
    dtype: DType,
    shape: Vec<i32>,
    /// Per-tensor scale and zero point; integer types get one by default.
    quant: Option<(f32, i64)>,
    /// Per-channel scales (quantized dimension 0).
    per_channel: Option<Vec<f32>>,
    /// Constant data (little-endian bytes).
    data: Option<Vec<u8>>,
    /// A variable tensor (SVDF state).
    variable: bool,
}

fn t(dtype: DType, shape: &[i32]) -> T {
    let quant = match dtype {
        I8 => Some((0.05, -3)),
        U8 => Some((0.05, 128)),
        I16 => Some((0.001, 0)),
        _ => None,
    };
    T {
        dtype,
        shape: shape.to_vec(),
        quant,
        per_channel: None,
        data: None,
        variable: false,
    }
}

impl T {
    fn quant(mut self, scale: f32, zero_point: i64) -> T {
        self.quant = Some((scale, zero_point));
        self
    }
    fn per_channel(mut self, scales: &[f32]) -> T {
        self.per_channel = Some(scales.to_vec());
        self
    }
    /// Constant data: `values` as the tensor's element type.
    fn i32s(mut self, values: &[i32]) -> T {
        self.data = Some(values.iter().flat_map(|v| v.to_le_bytes()).collect());
        self
    }
    fn variable(mut self) -> T {
        self.variable = true;
        self
    }
    /// Constant data of `n` elements, each byte `1`.
    fn filled(mut self) -> T {
        let n: i32 = self.shape.iter().product();
        let size = self.dtype.size_bytes().unwrap_or(1) as i32;
        self.data = Some(vec![1; (n * size) as usize]);
        self
    }
}

/// A model of one op `code` from `inputs` (the non-constant ones are the
/// model's inputs) to `outputs`, with `options`.
fn one_op(code: u8, inputs: &[T], outputs: &[T], options: OpOptions) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let add = |b: &mut ModelBuilder, name: String, x: &T| {
        let mut tb = b.tensor(g, &name, &x.shape, x.dtype);
        if let Some(scales) = &x.per_channel {
            tb = tb.quant_per_channel(scales, &vec![0; scales.len()], 0);
        } else if let Some((s, z)) = x.quant {
            tb = tb.quant(s, z);
        }
        if let Some(d) = &x.data {
            tb = tb.data(d);
        }
        if x.variable {
            tb = tb.variable();
        }
        tb.id()
    };
    let ins: Vec<i32> = inputs
        .iter()
        .enumerate()
        .map(|(i, x)| add(&mut b, format!("in{i}"), x))
        .collect();
    let outs: Vec<i32> = outputs
        .iter()
        .enumerate()
        .map(|(i, x)| add(&mut b, format!("out{i}"), x))
        .collect();
    let model_inputs: Vec<i32> = ins
        .iter()
        .zip(inputs)
        .filter(|(_, x)| x.data.is_none() && !x.variable)
        .map(|(&id, _)| id)
        .collect();
    b.op(g, BuiltinOp(i32::from(code)), &ins, &outs)
        .options(options);
    b.inputs(g, &model_inputs).outputs(g, &outs);
    b.build().unwrap()
}

fn unary(code: u8, input: DType, output: DType) -> Vec<u8> {
    one_op(
        code,
        &[t(input, &[1, 8])],
        &[t(output, &[1, 8])],
        OpOptions::None,
    )
}

fn binary(code: u8, input: DType, output: DType) -> Vec<u8> {
    let x = t(input, &[1, 8]);
    one_op(
        code,
        &[x.clone(), x],
        &[t(output, &[1, 8])],
        OpOptions::None,
    )
}

fn elementwise(activation: Activation) -> OpOptions {
    OpOptions::Elementwise {
        activation,
        pot_scale_int16: false,
    }
}

fn fc(input: DType, filter: T, output: DType) -> Vec<u8> {
    one_op(
        c::FULLY_CONNECTED,
        &[t(input, &[1, 4]), filter],
        &[t(output, &[1, 2])],
        OpOptions::FullyConnected {
            activation: Activation::None,
            keep_num_dims: false,
            asymmetric_quantize_inputs: false,
        },
    )
}

fn reducer(code: u8, dtype: DType) -> Vec<u8> {
    one_op(
        code,
        &[t(dtype, &[1, 4, 2]), t(I32, &[1]).i32s(&[1])],
        &[t(dtype, &[1, 2])],
        OpOptions::Reducer { keep_dims: false },
    )
}

fn strided_slice(input: T, begin: T, output: T) -> Vec<u8> {
    one_op(
        c::STRIDED_SLICE,
        &[
            input,
            begin,
            t(I32, &[2]).i32s(&[1, 2]),
            t(I32, &[2]).i32s(&[1, 1]),
        ],
        &[output],
        OpOptions::StridedSlice(Default::default()),
    )
}

/// SVDF, rank 1, 2 filters over 4 inputs, memory 3; float32 except the feature weights.
fn svdf(dtype: DType, feature: DType) -> Vec<u8> {
    one_op(
        c::SVDF,
        &[
            t(dtype, &[1, 4]),
            t(feature, &[2, 4]).filled(),
            t(dtype, &[2, 3]).filled(),
            t(dtype, &[2]).filled(),
            t(dtype, &[1, 6]).variable(),
        ],
        &[t(dtype, &[1, 2])],
        OpOptions::Svdf {
            rank: 1,
            activation: Activation::None,
            asymmetric_quantize_inputs: false,
        },
    )
}

/// TRANSPOSE_CONV 4×4 → 4×4, stride 1, one channel, no bias.
fn transpose_conv(dtype: DType, filter: DType) -> Vec<u8> {
    one_op(
        c::TRANSPOSE_CONV,
        &[
            t(I32, &[4]).i32s(&[1, 4, 4, 1]),
            t(filter, &[1, 3, 3, 1]).filled(),
            t(dtype, &[1, 4, 4, 1]),
        ],
        &[t(dtype, &[1, 4, 4, 1])],
        OpOptions::Conv(microarena_core::read::ops::ConvOptions {
            padding: Padding::Same,
            stride_w: 1,
            stride_h: 1,
            dilation_w: 1,
            dilation_h: 1,
            depth_multiplier: 1,
            activation: Activation::None,
        }),
    )
}

/// Every probe: name and model.
fn cases() -> Vec<(&'static str, Vec<u8>)> {
    let softmax = |i: DType, o: DType| {
        one_op(
            c::SOFTMAX,
            &[t(i, &[1, 8])],
            &[t(o, &[1, 8]).quant(1.0 / 256.0, -128)],
            OpOptions::Softmax { beta: 1.0 },
        )
    };
    let pool = |code: u8, dtype: DType| {
        one_op(
            code,
            &[t(dtype, &[1, 4, 4, 1])],
            &[t(dtype, &[1, 2, 2, 1])],
            OpOptions::Pool(microarena_core::read::ops::PoolOptions {
                padding: Padding::Valid,
                stride_w: 2,
                stride_h: 2,
                filter_w: 2,
                filter_h: 2,
                activation: Activation::None,
            }),
        )
    };
    let pad = |dtype: DType, paddings_constant: bool| {
        let mut paddings = t(I32, &[2, 2]);
        if paddings_constant {
            paddings = paddings.i32s(&[0, 0, 1, 1]);
        }
        one_op(
            c::PAD,
            &[t(dtype, &[1, 4]), paddings],
            &[t(dtype, &[1, 6])],
            OpOptions::None,
        )
    };
    let transpose = |dtype: DType| {
        one_op(
            c::TRANSPOSE,
            &[t(dtype, &[2, 4]), t(I32, &[2]).i32s(&[1, 0])],
            &[t(dtype, &[4, 2])],
            OpOptions::None,
        )
    };
    let concat = |a: DType, b: DType| {
        one_op(
            c::CONCATENATION,
            &[t(a, &[1, 2]), t(b, &[1, 2])],
            &[t(a, &[1, 4])],
            OpOptions::Concatenation {
                axis: 1,
                activation: Activation::None,
            },
        )
    };
    let gather = |dtype: DType| {
        one_op(
            c::GATHER,
            &[t(dtype, &[4, 2]), t(I32, &[2]).i32s(&[0, 3])],
            &[t(dtype, &[2, 2])],
            OpOptions::Gather {
                axis: 0,
                batch_dims: 0,
            },
        )
    };
    let add = |a: DType, b: DType, out: DType| {
        one_op(
            c::ADD,
            &[t(a, &[1, 8]), t(b, &[1, 8])],
            &[t(out, &[1, 8])],
            elementwise(Activation::None),
        )
    };
    let mul = |a: DType, b: DType| {
        one_op(
            c::MUL,
            &[t(a, &[1, 8]), t(b, &[1, 8])],
            &[t(a, &[1, 8])],
            elementwise(Activation::None),
        )
    };
    let conv = |dtype: DType, code: u8| {
        let options = OpOptions::Conv(microarena_core::read::ops::ConvOptions {
            padding: Padding::Same,
            stride_w: 1,
            stride_h: 1,
            dilation_w: 1,
            dilation_h: 1,
            depth_multiplier: 1,
            activation: Activation::None,
        });
        let filter = if code == c::CONV_2D {
            t(dtype, &[2, 3, 3, 1]).filled()
        } else {
            t(dtype, &[1, 3, 3, 2]).filled()
        };
        let cin = if code == c::CONV_2D { 1 } else { 2 };
        one_op(
            code,
            &[
                t(dtype, &[1, 4, 4, cin]),
                filter,
                // Bias scale = input scale × filter scale, as kernel_util.cc wants.
                t(I32, &[2]).quant(0.0025, 0).i32s(&[0, 0]),
            ],
            &[t(dtype, &[1, 4, 4, 2])],
            options,
        )
    };
    vec![
        ("quantize_f32_i8", unary(c::QUANTIZE, F32, I8)),
        ("quantize_f32_u8", unary(c::QUANTIZE, F32, U8)),
        ("quantize_i16_u8", unary(c::QUANTIZE, I16, U8)),
        ("quantize_u8_i16", unary(c::QUANTIZE, U8, I16)),
        ("quantize_u8_i8", unary(c::QUANTIZE, U8, I8)),
        ("quantize_i8_u8", unary(c::QUANTIZE, I8, U8)),
        ("quantize_i8_f32", unary(c::QUANTIZE, I8, F32)),
        (
            "quantize_i16_i32",
            one_op(
                c::QUANTIZE,
                &[t(I16, &[1, 8])],
                &[t(I32, &[1, 8]).quant(0.001, 0)],
                OpOptions::None,
            ),
        ),
        (
            "quantize_per_channel_output",
            one_op(
                c::QUANTIZE,
                &[t(F32, &[2, 4])],
                &[t(I8, &[2, 4]).per_channel(&[0.1, 0.2])],
                OpOptions::None,
            ),
        ),
        ("dequantize_i8", unary(c::DEQUANTIZE, I8, F32)),
        ("dequantize_i32", unary(c::DEQUANTIZE, I32, F32)),
        ("dequantize_i8_to_i16", unary(c::DEQUANTIZE, I8, I16)),
        ("softmax_i8", softmax(I8, I8)),
        ("softmax_u8", softmax(U8, U8)),
        ("softmax_f32", softmax(F32, F32)),
        ("log_softmax_i16", unary(c::LOG_SOFTMAX, I16, I16)),
        (
            "logistic_i8",
            one_op(
                c::LOGISTIC,
                &[t(I8, &[1, 8])],
                &[t(I8, &[1, 8]).quant(1.0 / 256.0, -128)],
                OpOptions::None,
            ),
        ),
        ("logistic_u8", unary(c::LOGISTIC, U8, U8)),
        ("logistic_i8_to_i16", unary(c::LOGISTIC, I8, I16)),
        ("tanh_i32", unary(c::TANH, I32, I32)),
        ("relu_u8", unary(c::RELU, U8, U8)),
        ("relu6_i16", unary(c::RELU6, I16, I16)),
        ("hard_swish_i16", unary(c::HARD_SWISH, I16, I16)),
        ("hard_swish_i8", unary(c::HARD_SWISH, I8, I8)),
        (
            "leaky_relu_u8",
            one_op(
                c::LEAKY_RELU,
                &[t(U8, &[1, 8])],
                &[t(U8, &[1, 8])],
                OpOptions::LeakyRelu { alpha: 0.2 },
            ),
        ),
        ("rsqrt_i16", unary(c::RSQRT, I16, I16)),
        ("rsqrt_i8", unary(c::RSQRT, I8, I8)),
        ("sqrt_i8", unary(c::SQRT, I8, I8)),
        ("abs_i32", unary(c::ABS, I32, I32)),
        ("abs_i16", unary(c::ABS, I16, I16)),
        ("exp_i8", unary(c::EXP, I8, I8)),
        ("neg_i32", unary(c::NEG, I32, I32)),
        ("floor_i32", unary(c::FLOOR, I32, I32)),
        ("zeros_like_i16", unary(c::ZEROS_LIKE, I16, I16)),
        ("cast_f32_i32", unary(c::CAST, F32, I32)),
        ("cast_f32_i64", unary(c::CAST, F32, I64)),
        ("cast_u8_f32", unary(c::CAST, U8, F32)),
        ("logical_not_i32", unary(c::LOGICAL_NOT, I32, I32)),
        ("floor_mod_i32", binary(c::FLOOR_MOD, I32, I32)),
        ("floor_div_i32", binary(c::FLOOR_DIV, I32, I32)),
        (
            "squared_difference_u8",
            binary(c::SQUARED_DIFFERENCE, U8, U8),
        ),
        ("maximum_u8", binary(c::MAXIMUM, U8, U8)),
        ("minimum_i16", binary(c::MINIMUM, I16, I16)),
        ("div_i16", binary(c::DIV, I16, I16)),
        ("equal_i16", binary(c::EQUAL, I16, Bool)),
        ("greater_i16", binary(c::GREATER, I16, Bool)),
        ("less_i16", binary(c::LESS, I16, Bool)),
        ("add_u8", add(U8, U8, U8)),
        ("add_i16_i16_to_i8", add(I16, I16, I8)),
        ("add_i8", add(I8, I8, I8)),
        ("sub_u8", {
            let x = t(U8, &[1, 8]);
            one_op(
                c::SUB,
                &[x.clone(), x],
                &[t(U8, &[1, 8])],
                elementwise(Activation::None),
            )
        }),
        ("mul_u8", mul(U8, U8)),
        ("mul_i8_i16", mul(I8, I16)),
        ("mul_i16", mul(I16, I16)),
        ("concat_i8_i16", concat(I8, I16)),
        ("concat_u8", concat(U8, U8)),
        ("concat_i8", concat(I8, I8)),
        ("gather_i16", gather(I16)),
        ("gather_i8", gather(I8)),
        ("pad_u8", pad(U8, true)),
        ("pad_i8", pad(I8, true)),
        ("pad_paddings_not_constant", pad(F32, false)),
        ("transpose_u8", transpose(U8)),
        ("transpose_i16", transpose(I16)),
        ("avg_pool_u8", pool(c::AVERAGE_POOL_2D, U8)),
        ("max_pool_i16", pool(c::MAX_POOL_2D, I16)),
        ("mean_i32", reducer(c::MEAN, I32)),
        ("mean_i16", reducer(c::MEAN, I16)),
        ("sum_u8", reducer(c::SUM, U8)),
        ("reduce_max_i16", reducer(c::REDUCE_MAX, I16)),
        ("reduce_max_i8", reducer(c::REDUCE_MAX, I8)),
        ("fc_u8", fc(U8, t(U8, &[2, 4]).filled(), U8)),
        ("fc_f32_i8_filter", fc(F32, t(I8, &[2, 4]).filled(), F32)),
        (
            "fc_i16_per_channel",
            fc(I16, t(I8, &[2, 4]).per_channel(&[0.1, 0.2]).filled(), I16),
        ),
        (
            "fc_i8_per_channel",
            fc(I8, t(I8, &[2, 4]).per_channel(&[0.1, 0.2]).filled(), I8),
        ),
        ("fc_i8_to_i16", fc(I8, t(I8, &[2, 4]).filled(), I16)),
        ("conv_u8", conv(U8, c::CONV_2D)),
        ("conv_i8", conv(I8, c::CONV_2D)),
        ("depthwise_u8", conv(U8, c::DEPTHWISE_CONV_2D)),
        (
            "reshape_i8_to_i16",
            one_op(
                c::RESHAPE,
                &[t(I8, &[1, 8]), t(I32, &[2]).i32s(&[2, 4])],
                &[t(I16, &[2, 4])],
                OpOptions::Reshape {
                    new_shape: Some(vec![2, 4]),
                },
            ),
        ),
        (
            "select_v2_i32",
            one_op(
                c::SELECT_V2,
                &[t(Bool, &[1, 8]), t(I32, &[1, 8]), t(I32, &[1, 8])],
                &[t(I32, &[1, 8])],
                OpOptions::None,
            ),
        ),
        (
            "arg_max_i16",
            one_op(
                c::ARG_MAX,
                &[t(I16, &[1, 8]), t(I32, &[1]).i32s(&[1])],
                &[t(I32, &[1])],
                OpOptions::None,
            ),
        ),
        (
            "arg_max_i8",
            one_op(
                c::ARG_MAX,
                &[t(I8, &[1, 8]), t(I32, &[1]).i32s(&[1])],
                &[t(I32, &[1])],
                OpOptions::None,
            ),
        ),
        (
            "expand_dims_axis_not_constant",
            one_op(
                c::EXPAND_DIMS,
                &[t(F32, &[2]), t(I32, &[1])],
                &[t(F32, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "cumsum_i16",
            one_op(
                c::CUMSUM,
                &[t(I16, &[1, 4]), t(I32, &[]).i32s(&[1])],
                &[t(I16, &[1, 4])],
                OpOptions::None,
            ),
        ),
        (
            "fill_i16",
            one_op(
                c::FILL,
                &[t(I32, &[2]).i32s(&[2, 2]), t(I16, &[]).filled()],
                &[t(I16, &[2, 2])],
                OpOptions::None,
            ),
        ),
        (
            "select_v2_condition_i8",
            one_op(
                c::SELECT_V2,
                &[t(I8, &[1, 8]), t(F32, &[1, 8]), t(F32, &[1, 8])],
                &[t(F32, &[1, 8])],
                OpOptions::None,
            ),
        ),
        (
            "mirror_pad_i16",
            one_op(
                c::MIRROR_PAD,
                &[t(I16, &[1, 4]), t(I32, &[2, 2]).i32s(&[0, 0, 1, 1])],
                &[t(I16, &[1, 6])],
                OpOptions::None,
            ),
        ),
        (
            "prelu_i16_alpha_i16",
            one_op(
                c::PRELU,
                &[t(I16, &[1, 4]), t(I16, &[4]).filled()],
                &[t(I16, &[1, 4])],
                OpOptions::None,
            ),
        ),
        (
            "prelu_u8",
            one_op(
                c::PRELU,
                &[t(U8, &[1, 4]), t(U8, &[4]).filled()],
                &[t(U8, &[1, 4])],
                OpOptions::None,
            ),
        ),
        ("elu_i16", unary(c::ELU, I16, I16)),
        ("zeros_like_i32", unary(c::ZEROS_LIKE, I32, I32)),
        ("equal_u8", binary(c::EQUAL, U8, Bool)),
        ("greater_equal_i16", binary(c::GREATER_EQUAL, I16, Bool)),
        ("l2_normalization_i16", unary(c::L2_NORMALIZATION, I16, I16)),
        ("add_n_i16", binary(c::ADD_N, I16, I16)),
        ("add_n_i8", binary(c::ADD_N, I8, I8)),
        ("round_i8", unary(c::ROUND, I8, I8)),
        ("ceil_f32", unary(c::CEIL, F32, F32)),
        (
            "gather_nd_i16",
            one_op(
                c::GATHER_ND,
                &[t(I16, &[2, 2]), t(I32, &[1, 1]).i32s(&[0])],
                &[t(I16, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "dynamic_update_slice_u8",
            one_op(
                c::DYNAMIC_UPDATE_SLICE,
                &[t(U8, &[4]), t(U8, &[2]), t(I32, &[1]).i32s(&[1])],
                &[t(U8, &[4])],
                OpOptions::None,
            ),
        ),
        (
            "broadcast_to_shape_not_constant",
            one_op(
                c::BROADCAST_TO,
                &[t(F32, &[1, 2]), t(I32, &[2])],
                &[t(F32, &[2, 2])],
                OpOptions::None,
            ),
        ),
        (
            "batch_matmul_u8",
            one_op(
                c::BATCH_MATMUL,
                &[t(U8, &[1, 2, 3]), t(U8, &[1, 3, 2])],
                &[t(U8, &[1, 2, 2])],
                OpOptions::None,
            ),
        ),
        (
            "batch_matmul_rank_5",
            one_op(
                c::BATCH_MATMUL,
                &[t(F32, &[1, 1, 1, 2, 3]), t(F32, &[1, 1, 1, 3, 2])],
                &[t(F32, &[1, 1, 1, 2, 2])],
                OpOptions::None,
            ),
        ),
        (
            "resize_bilinear_i16",
            one_op(
                c::RESIZE_BILINEAR,
                &[t(I16, &[1, 2, 2, 1]), t(I32, &[2]).i32s(&[4, 4])],
                &[t(I16, &[1, 4, 4, 1])],
                OpOptions::None,
            ),
        ),
        (
            "resize_nearest_i16",
            one_op(
                c::RESIZE_NEAREST_NEIGHBOR,
                &[t(I16, &[1, 2, 2, 1]), t(I32, &[2]).i32s(&[4, 4])],
                &[t(I16, &[1, 4, 4, 1])],
                OpOptions::None,
            ),
        ),
        (
            "strided_slice_u8",
            strided_slice(t(U8, &[1, 4]), t(I32, &[2]).i32s(&[0, 0]), t(U8, &[1, 2])),
        ),
        (
            "strided_slice_i8",
            strided_slice(t(I8, &[1, 4]), t(I32, &[2]).i32s(&[0, 0]), t(I8, &[1, 2])),
        ),
        (
            "strided_slice_begin_not_constant",
            strided_slice(t(F32, &[1, 4]), t(I32, &[2]), t(F32, &[1, 2])),
        ),
        (
            "strided_slice_rank_5",
            one_op(
                c::STRIDED_SLICE,
                &[
                    t(F32, &[1, 1, 1, 1, 4]),
                    t(I32, &[5]).i32s(&[0; 5]),
                    t(I32, &[5]).i32s(&[1, 1, 1, 1, 2]),
                    t(I32, &[5]).i32s(&[1; 5]),
                ],
                &[t(F32, &[1, 1, 1, 1, 2])],
                OpOptions::StridedSlice(Default::default()),
            ),
        ),
        ("svdf_f32", svdf(F32, F32)),
        ("svdf_f32_i8_feature_weights", svdf(F32, I8)),
        (
            "split_u8",
            one_op(
                c::SPLIT,
                &[t(I32, &[]).i32s(&[1]), t(U8, &[1, 4])],
                &[t(U8, &[1, 2]), t(U8, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "split_axis_not_constant",
            one_op(
                c::SPLIT,
                &[t(I32, &[]), t(F32, &[1, 4])],
                &[t(F32, &[1, 2]), t(F32, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "pack_u8",
            one_op(
                c::PACK,
                &[t(U8, &[2]), t(U8, &[2])],
                &[t(U8, &[2, 2])],
                OpOptions::None,
            ),
        ),
        (
            "unpack_u8",
            one_op(
                c::UNPACK,
                &[t(U8, &[2, 2])],
                &[t(U8, &[2]), t(U8, &[2])],
                OpOptions::None,
            ),
        ),
        (
            "embedding_lookup_i16",
            one_op(
                c::EMBEDDING_LOOKUP,
                &[t(I32, &[1]).i32s(&[0]), t(I16, &[2, 2]).filled()],
                &[t(I16, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "slice_u8",
            one_op(
                c::SLICE,
                &[
                    t(U8, &[1, 4]),
                    t(I32, &[2]).i32s(&[0, 0]),
                    t(I32, &[2]).i32s(&[1, 2]),
                ],
                &[t(U8, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "shape_to_i64",
            one_op(
                c::SHAPE,
                &[t(F32, &[1, 4])],
                &[t(I64, &[2])],
                OpOptions::None,
            ),
        ),
        (
            "arg_min_u8",
            one_op(
                c::ARG_MIN,
                &[t(U8, &[1, 8]), t(I32, &[1]).i32s(&[1])],
                &[t(I32, &[1])],
                OpOptions::None,
            ),
        ),
        (
            "expand_dims_i32",
            one_op(
                c::EXPAND_DIMS,
                &[t(I32, &[2]), t(I32, &[1]).i32s(&[0])],
                &[t(I32, &[1, 2])],
                OpOptions::None,
            ),
        ),
        (
            "broadcast_args_i16",
            one_op(
                c::BROADCAST_ARGS,
                &[t(I16, &[2]).filled(), t(I16, &[2]).filled()],
                &[t(I16, &[2])],
                OpOptions::None,
            ),
        ),
        (
            "space_to_batch_nd_u8",
            one_op(
                c::SPACE_TO_BATCH_ND,
                &[
                    t(U8, &[1, 4, 4, 1]),
                    t(I32, &[2]).i32s(&[2, 2]),
                    t(I32, &[2, 2]).i32s(&[0, 0, 0, 0]),
                ],
                &[t(U8, &[4, 2, 2, 1])],
                OpOptions::None,
            ),
        ),
        ("transpose_conv_u8", transpose_conv(U8, U8)),
        ("transpose_conv_f32_i8_filter", transpose_conv(F32, I8)),
        ("transpose_conv_f32", transpose_conv(F32, F32)),
        ("div_i8", binary(c::DIV, I8, I8)),
        ("floor_div_f32", binary(c::FLOOR_DIV, F32, F32)),
        ("zeros_like_i8", unary(c::ZEROS_LIKE, I8, I8)),
    ]
}

/// What the registry says for the reference kernels: "ok", "prepare" or "invoke".
fn verdict(bytes: &[u8]) -> &'static str {
    let model = Model::parse(bytes).expect("probe parses");
    let op = &model.subgraphs[0].operators[0];
    match registry::check(&model, 0, op, Backend::Reference).map(|r| r.stage()) {
        None => "ok",
        Some(Stage::Resolve | Stage::Prepare) => "prepare",
        Some(Stage::Invoke) => "invoke",
    }
}

#[test]
#[ignore = "writes the probe models for registry_wheel.py"]
fn write_probe_models() {
    let dir = std::env::var("MICROARENA_PROBE_DIR").expect("MICROARENA_PROBE_DIR");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in cases() {
        std::fs::write(format!("{dir}/{name}.tflite"), bytes).unwrap();
    }
}

#[test]
fn the_registry_gives_the_wheels_verdict_on_every_probe() {
    let golden = include_str!("registry_wheel.jsonl");
    let mut wheel = std::collections::BTreeMap::new();
    for line in golden.lines().filter(|l| !l.trim().is_empty()) {
        let rec: serde_json::Value = serde_json::from_str(line).unwrap();
        wheel.insert(
            rec["model"].as_str().unwrap().to_string(),
            rec["verdict"].as_str().unwrap().to_string(),
        );
    }
    let mut wrong = Vec::new();
    let cases = cases();
    for (name, bytes) in &cases {
        let tflm = wheel
            .get(*name)
            .unwrap_or_else(|| panic!("{name}: not in registry_wheel.jsonl; regenerate it"));
        let ours = verdict(bytes);
        if ours != tflm {
            wrong.push(format!("{name}: TFLM {tflm}, registry {ours}"));
        }
    }
    assert_eq!(
        wheel.len(),
        cases.len(),
        "stale entries in registry_wheel.jsonl"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
