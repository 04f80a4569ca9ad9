//! Test models as data — tensors and single ops a test can tweak field by
//! field — written with core's one flatbuffer writer, `ModelBuilder`.

use microarena_core::build::builder::ModelBuilder;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{
    Activation, BuiltinOp, ConvOptions, OpOptions, Padding, PoolOptions, StridedSliceOptions,
};

/// One tensor of a test model, as data (so a test can tweak a field).
#[derive(Debug, Clone)]
pub struct TensorSpec {
    pub shape: Vec<i32>,
    pub dtype: DType,
    /// Constant data (little-endian), `None` for activations.
    pub data: Option<Vec<u8>>,
    /// Scales (empty: not quantized).
    pub scales: Vec<f32>,
    pub zero_points: Vec<i64>,
    pub quantized_dimension: i32,
}

impl TensorSpec {
    /// An activation (quantized unless float).
    pub fn act(shape: &[i32], dtype: DType, scale: f32, zero_point: i64) -> TensorSpec {
        let quantized = dtype != DType::F32;
        TensorSpec {
            shape: shape.into(),
            dtype,
            data: None,
            scales: if quantized { vec![scale] } else { vec![] },
            zero_points: if quantized { vec![zero_point] } else { vec![] },
            quantized_dimension: 0,
        }
    }

    /// A constant.
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
        TensorSpec::constant(shape, DType::I32, data, scales, &vec![0; scales.len()])
    }
}

/// Builtin options of a test operator (activations as schema codes).
#[derive(Debug, Clone, Copy)]
pub enum OptSpec {
    None,
    Conv {
        padding_valid: bool,
        stride: i32,
        activation: i8,
    },
    Pool {
        padding_valid: bool,
        stride: i32,
        filter: i32,
        activation: i8,
    },
    Depthwise {
        padding_valid: bool,
        stride: i32,
        multiplier: i32,
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
    Unpack {
        axis: i32,
        num: i32,
    },
    // Used by tflm_ops.rs only; kernels.rs compiles this module too.
    #[allow(dead_code)]
    BatchMatMul {
        adj_x: bool,
        adj_y: bool,
    },
    #[allow(dead_code)]
    BlockSize(i32),
}

impl OptSpec {
    pub fn options(self) -> OpOptions {
        let padding = |valid: bool| if valid { Padding::Valid } else { Padding::Same };
        let act = |code: i8| match code {
            0 => Activation::None,
            1 => Activation::Relu,
            2 => Activation::ReluN1To1,
            3 => Activation::Relu6,
            other => panic!("activation code {other} is not used by these tests"),
        };
        match self {
            OptSpec::None => OpOptions::None,
            OptSpec::Conv {
                padding_valid,
                stride,
                activation,
            } => OpOptions::Conv(ConvOptions {
                padding: padding(padding_valid),
                stride_w: stride,
                stride_h: stride,
                dilation_w: 1,
                dilation_h: 1,
                depth_multiplier: 1,
                activation: act(activation),
            }),
            OptSpec::Depthwise {
                padding_valid,
                stride,
                multiplier,
                activation,
            } => OpOptions::Conv(ConvOptions {
                padding: padding(padding_valid),
                stride_w: stride,
                stride_h: stride,
                dilation_w: 1,
                dilation_h: 1,
                depth_multiplier: multiplier,
                activation: act(activation),
            }),
            OptSpec::Pool {
                padding_valid,
                stride,
                filter,
                activation,
            } => OpOptions::Pool(PoolOptions {
                padding: padding(padding_valid),
                stride_w: stride,
                stride_h: stride,
                filter_w: filter,
                filter_h: filter,
                activation: act(activation),
            }),
            OptSpec::Softmax { beta } => OpOptions::Softmax { beta },
            OptSpec::Concatenation { axis } => OpOptions::Concatenation {
                axis,
                activation: Activation::None,
            },
            OptSpec::Reducer { keep_dims } => OpOptions::Reducer { keep_dims },
            OptSpec::Add { activation } | OptSpec::Mul { activation } => OpOptions::Elementwise {
                activation: act(activation),
                pot_scale_int16: false,
            },
            OptSpec::StridedSlice {
                begin_mask,
                end_mask,
                shrink_axis_mask,
            } => OpOptions::StridedSlice(StridedSliceOptions {
                begin_mask,
                end_mask,
                shrink_axis_mask,
                ..Default::default()
            }),
            OptSpec::Unpack { axis, num } => OpOptions::Unpack { axis, num },
            OptSpec::BatchMatMul { adj_x, adj_y } => OpOptions::BatchMatMul { adj_x, adj_y },
            OptSpec::BlockSize(block_size) => OpOptions::BlockSize { block_size },
        }
    }
}

/// One operator of a test model.
#[derive(Debug, Clone)]
pub struct OpSpec {
    pub opcode: i32,
    pub inputs: Vec<i32>,
    pub outputs: Vec<i32>,
    pub options: OptSpec,
}

/// Writes a one-subgraph model with core's `ModelBuilder`.
pub fn build(tensors: &[TensorSpec], ops: &[OpSpec], inputs: &[i32], outputs: &[i32]) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    for (i, t) in tensors.iter().enumerate() {
        let mut h = b.tensor(g, &format!("t{i}"), &t.shape, t.dtype);
        if let Some(d) = &t.data {
            h = h.data(d);
        }
        if !t.scales.is_empty() {
            h = h.quant_per_channel(&t.scales, &t.zero_points, t.quantized_dimension);
        }
        h.id();
    }
    for op in ops {
        b.op(g, BuiltinOp(op.opcode), &op.inputs, &op.outputs)
            .options(op.options.options());
    }
    b.inputs(g, inputs).outputs(g, outputs);
    b.build().expect("a valid test model")
}

pub use microarena_core::build::builder::flex_int_map as flex_map;

/// A one-op model of custom op `code` (TFLM's Signal ops), its options a
/// FlexBuffers map; graph inputs are the tensors without data.
pub fn build_custom(
    tensors: &[TensorSpec],
    code: &str,
    inputs: &[i32],
    outputs: &[i32],
    options: &[(&str, i64)],
) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    for (i, t) in tensors.iter().enumerate() {
        let mut h = b.tensor(g, &format!("t{i}"), &t.shape, t.dtype);
        if let Some(d) = &t.data {
            h = h.data(d);
        }
        h.id();
    }
    b.custom_op(g, code, inputs, outputs)
        .custom_options(&flex_map(options));
    let g_in: Vec<i32> = inputs
        .iter()
        .copied()
        .filter(|&i| tensors[i as usize].data.is_none())
        .collect();
    b.inputs(g, &g_in).outputs(g, outputs);
    b.build().expect("a valid test model")
}

/// Lowers and runs `model` on `inputs` (one per graph input) and returns
/// output 0; the arena is exactly the predicted runtime arena, and its
/// high-water must equal it.
pub fn run_model(model: &[u8], inputs: &[Vec<u8>]) -> Vec<u8> {
    use microarena_core::Model;
    use microarena_core::lower::{lower, runtime_arena};
    let m = Model::parse(model).expect("parse");
    let image = lower(&m).expect("lower");
    let predicted = runtime_arena(&m).expect("arena");
    let mut arena = vec![0u8; predicted.total_bytes as usize];
    let mut it = microarena_runtime::Interpreter::new(&image, &mut arena).expect("interpreter");
    for (i, d) in inputs.iter().enumerate() {
        it.input_mut(i).expect("input").copy_from_slice(d);
    }
    it.invoke().expect("invoke");
    assert_eq!(it.memory_usage().high_water as u64, predicted.total_bytes);
    it.output(0).expect("output").to_vec()
}

// Raw little-endian tensor bytes to and from values (each test binary uses
// some of them).

#[allow(dead_code)]
pub fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[allow(dead_code)]
pub fn i16s(v: &[i16]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[allow(dead_code)]
pub fn i8s(v: &[i8]) -> Vec<u8> {
    v.iter().map(|&x| x as u8).collect()
}

#[allow(dead_code)]
pub fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[allow(dead_code)]
pub fn to_i16(b: &[u8]) -> Vec<i16> {
    b.chunks_exact(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect()
}

#[allow(dead_code)]
pub fn to_i8(b: &[u8]) -> Vec<i8> {
    b.iter().map(|&x| x as i8).collect()
}
