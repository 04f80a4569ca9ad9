//! Operator codes and the builtin options the kernel models need.
//!
//! Options are copied out of the flatbuffer once, in [`OpOptions::read`], so
//! the kernel cost table (`kernel`), the runtime and the optimizer never touch
//! the raw schema types.

use core::fmt;

use microarena_image::opcode;

use crate::read::schema as fb;

/// A TFLite builtin operator code (`BuiltinOperator`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuiltinOp(pub i32);

// The constants come from the image crate's operator table, the one place
// an operator's code is declared.
#[allow(missing_docs)]
impl BuiltinOp {
    pub const ADD: BuiltinOp = BuiltinOp(opcode::ADD as i32);
    pub const AVERAGE_POOL_2D: BuiltinOp = BuiltinOp(opcode::AVERAGE_POOL_2D as i32);
    pub const CONCATENATION: BuiltinOp = BuiltinOp(opcode::CONCATENATION as i32);
    pub const CONV_2D: BuiltinOp = BuiltinOp(opcode::CONV_2D as i32);
    pub const DEPTHWISE_CONV_2D: BuiltinOp = BuiltinOp(opcode::DEPTHWISE_CONV_2D as i32);
    pub const DEQUANTIZE: BuiltinOp = BuiltinOp(opcode::DEQUANTIZE as i32);
    pub const FULLY_CONNECTED: BuiltinOp = BuiltinOp(opcode::FULLY_CONNECTED as i32);
    pub const LOGISTIC: BuiltinOp = BuiltinOp(opcode::LOGISTIC as i32);
    pub const MAX_POOL_2D: BuiltinOp = BuiltinOp(opcode::MAX_POOL_2D as i32);
    pub const MUL: BuiltinOp = BuiltinOp(opcode::MUL as i32);
    pub const RELU: BuiltinOp = BuiltinOp(opcode::RELU as i32);
    pub const RELU6: BuiltinOp = BuiltinOp(opcode::RELU6 as i32);
    pub const RESHAPE: BuiltinOp = BuiltinOp(opcode::RESHAPE as i32);
    pub const RESIZE_BILINEAR: BuiltinOp = BuiltinOp(opcode::RESIZE_BILINEAR as i32);
    pub const RESIZE_NEAREST_NEIGHBOR: BuiltinOp =
        BuiltinOp(opcode::RESIZE_NEAREST_NEIGHBOR as i32);
    pub const SOFTMAX: BuiltinOp = BuiltinOp(opcode::SOFTMAX as i32);
    pub const SVDF: BuiltinOp = BuiltinOp(opcode::SVDF as i32);
    pub const TANH: BuiltinOp = BuiltinOp(opcode::TANH as i32);
    pub const CALL: BuiltinOp = BuiltinOp(opcode::CALL as i32);
    pub const CUSTOM: BuiltinOp = BuiltinOp(opcode::CUSTOM as i32);
    pub const PAD: BuiltinOp = BuiltinOp(opcode::PAD as i32);
    pub const GATHER: BuiltinOp = BuiltinOp(opcode::GATHER as i32);
    pub const TRANSPOSE: BuiltinOp = BuiltinOp(opcode::TRANSPOSE as i32);
    pub const MEAN: BuiltinOp = BuiltinOp(opcode::MEAN as i32);
    pub const SUB: BuiltinOp = BuiltinOp(opcode::SUB as i32);
    pub const DIV: BuiltinOp = BuiltinOp(opcode::DIV as i32);
    pub const SQUEEZE: BuiltinOp = BuiltinOp(opcode::SQUEEZE as i32);
    pub const UNIDIRECTIONAL_SEQUENCE_LSTM: BuiltinOp =
        BuiltinOp(opcode::UNIDIRECTIONAL_SEQUENCE_LSTM as i32);
    pub const STRIDED_SLICE: BuiltinOp = BuiltinOp(opcode::STRIDED_SLICE as i32);
    pub const PACK: BuiltinOp = BuiltinOp(opcode::PACK as i32);
    pub const CAST: BuiltinOp = BuiltinOp(opcode::CAST as i32);
    pub const PADV2: BuiltinOp = BuiltinOp(opcode::PADV2 as i32);
    pub const TRANSPOSE_CONV: BuiltinOp = BuiltinOp(opcode::TRANSPOSE_CONV as i32);
    pub const SUM: BuiltinOp = BuiltinOp(opcode::SUM as i32);
    pub const REDUCE_MAX: BuiltinOp = BuiltinOp(opcode::REDUCE_MAX as i32);
    pub const REDUCE_MIN: BuiltinOp = BuiltinOp(opcode::REDUCE_MIN as i32);
    pub const REDUCE_ALL: BuiltinOp = BuiltinOp(opcode::REDUCE_ALL as i32);
    pub const LEAKY_RELU: BuiltinOp = BuiltinOp(opcode::LEAKY_RELU as i32);
    pub const MIRROR_PAD: BuiltinOp = BuiltinOp(opcode::MIRROR_PAD as i32);
    pub const ADD_N: BuiltinOp = BuiltinOp(opcode::ADD_N as i32);
    pub const QUANTIZE: BuiltinOp = BuiltinOp(opcode::QUANTIZE as i32);
    pub const HARD_SWISH: BuiltinOp = BuiltinOp(opcode::HARD_SWISH as i32);
    pub const IF: BuiltinOp = BuiltinOp(opcode::IF as i32);
    pub const WHILE: BuiltinOp = BuiltinOp(opcode::WHILE as i32);
    pub const CALL_ONCE: BuiltinOp = BuiltinOp(opcode::CALL_ONCE as i32);
    pub const VAR_HANDLE: BuiltinOp = BuiltinOp(opcode::VAR_HANDLE as i32);
    pub const READ_VARIABLE: BuiltinOp = BuiltinOp(opcode::READ_VARIABLE as i32);
    pub const ASSIGN_VARIABLE: BuiltinOp = BuiltinOp(opcode::ASSIGN_VARIABLE as i32);
    pub const MAXIMUM: BuiltinOp = BuiltinOp(opcode::MAXIMUM as i32);
    pub const MINIMUM: BuiltinOp = BuiltinOp(opcode::MINIMUM as i32);
    pub const POW: BuiltinOp = BuiltinOp(opcode::POW as i32);
    pub const FILL: BuiltinOp = BuiltinOp(opcode::FILL as i32);
    pub const FLOOR_MOD: BuiltinOp = BuiltinOp(opcode::FLOOR_MOD as i32);
    pub const ARG_MAX: BuiltinOp = BuiltinOp(opcode::ARG_MAX as i32);
    pub const ARG_MIN: BuiltinOp = BuiltinOp(opcode::ARG_MIN as i32);
    pub const SPLIT: BuiltinOp = BuiltinOp(opcode::SPLIT as i32);
    pub const SPLIT_V: BuiltinOp = BuiltinOp(opcode::SPLIT_V as i32);
    pub const SHAPE: BuiltinOp = BuiltinOp(opcode::SHAPE as i32);

    /// Schema name of the operator (`CONV_2D`), or `UNKNOWN` for codes the schema lacks.
    pub fn name(self) -> &'static str {
        fb::BuiltinOperator(self.0)
            .variant_name()
            .unwrap_or("UNKNOWN")
    }
}

impl fmt::Debug for BuiltinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({})", self.name(), self.0)
    }
}

impl fmt::Display for BuiltinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Fused activation function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub enum Activation {
    #[default]
    None,
    Relu,
    ReluN1To1,
    Relu6,
    Tanh,
    SignBit,
}

impl Activation {
    fn from_fb(a: fb::ActivationFunctionType) -> Activation {
        match a.0 {
            1 => Activation::Relu,
            2 => Activation::ReluN1To1,
            3 => Activation::Relu6,
            4 => Activation::Tanh,
            5 => Activation::SignBit,
            _ => Activation::None,
        }
    }

    /// Schema code.
    pub fn code(self) -> i8 {
        match self {
            Activation::None => 0,
            Activation::Relu => 1,
            Activation::ReluN1To1 => 2,
            Activation::Relu6 => 3,
            Activation::Tanh => 4,
            Activation::SignBit => 5,
        }
    }
}

/// Padding scheme of convolutions and pools (shared with the image crate's geometry).
pub use microarena_image::geometry::Padding;

fn padding_from_fb(p: fb::Padding) -> Padding {
    if p.0 == 1 {
        Padding::Valid
    } else {
        Padding::Same
    }
}

/// Convolution parameters (CONV_2D, DEPTHWISE_CONV_2D, TRANSPOSE_CONV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub struct ConvOptions {
    pub padding: Padding,
    pub stride_w: i32,
    pub stride_h: i32,
    pub dilation_w: i32,
    pub dilation_h: i32,
    pub depth_multiplier: i32,
    pub activation: Activation,
}

/// Pooling parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub struct PoolOptions {
    pub padding: Padding,
    pub stride_w: i32,
    pub stride_h: i32,
    pub filter_w: i32,
    pub filter_h: i32,
    pub activation: Activation,
}

/// Strided-slice masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[allow(missing_docs)]
pub struct StridedSliceOptions {
    pub begin_mask: i32,
    pub end_mask: i32,
    pub ellipsis_mask: i32,
    pub new_axis_mask: i32,
    pub shrink_axis_mask: i32,
    pub offset: bool,
}

/// LSTM parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[allow(missing_docs)]
pub struct LstmOptions {
    pub activation: Activation,
    pub cell_clip: f32,
    pub proj_clip: f32,
    pub time_major: bool,
    pub asymmetric_quantize_inputs: bool,
}

/// The builtin options of one operator, in the shape the kernel models use.
/// Ops whose options do not matter for memory or for the runtime's kernels
/// carry [`OpOptions::None`].
#[derive(Debug, Clone, PartialEq, Default)]
#[allow(missing_docs)]
pub enum OpOptions {
    #[default]
    None,
    Conv(ConvOptions),
    Pool(PoolOptions),
    FullyConnected {
        activation: Activation,
        keep_num_dims: bool,
        asymmetric_quantize_inputs: bool,
    },
    Softmax {
        beta: f32,
    },
    Reshape {
        new_shape: Option<alloc::vec::Vec<i32>>,
    },
    /// ADD, SUB, MUL, DIV and CONCATENATION share the fused activation.
    Elementwise {
        activation: Activation,
        pot_scale_int16: bool,
    },
    Concatenation {
        axis: i32,
        activation: Activation,
    },
    /// PACK: how many inputs are stacked, and along which output axis.
    Pack {
        values_count: i32,
        axis: i32,
    },
    StridedSlice(StridedSliceOptions),
    Reducer {
        keep_dims: bool,
    },
    Lstm(LstmOptions),
    Svdf {
        rank: i32,
        activation: Activation,
        asymmetric_quantize_inputs: bool,
    },
    If {
        then_subgraph: i32,
        else_subgraph: i32,
    },
    While {
        cond_subgraph: i32,
        body_subgraph: i32,
    },
    CallOnce {
        init_subgraph: i32,
    },
    VarHandle {
        container: alloc::string::String,
        shared_name: alloc::string::String,
    },
    LeakyRelu {
        alpha: f32,
    },
    Squeeze {
        dims: alloc::vec::Vec<i32>,
    },
    Gather {
        axis: i32,
        batch_dims: i32,
    },
    /// DEPTH_TO_SPACE and SPACE_TO_DEPTH: the block size.
    BlockSize {
        block_size: i32,
    },
    /// CUMSUM: the sum excludes the element itself; runs from the end.
    Cumsum {
        exclusive: bool,
        reverse: bool,
    },
    /// BATCH_MATMUL: whether each operand is used transposed (without
    /// `adj_y`, TFLM keeps a transposed copy of the right-hand side).
    BatchMatMul {
        adj_x: bool,
        adj_y: bool,
    },
    /// UNPACK: the unpacked axis (may be negative) and the output count.
    Unpack {
        axis: i32,
        num: i32,
    },
    /// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR.
    Resize {
        align_corners: bool,
        half_pixel_centers: bool,
    },
    /// MIRROR_PAD: REFLECT (the edge is not repeated) or SYMMETRIC (it is).
    MirrorPad {
        reflect: bool,
    },
}

/// The `quantized_bias_type` option of CONV_2D, FULLY_CONNECTED and
/// TRANSPOSE_CONV (a TFLite type code; 0, FLOAT32, for other ops).
pub(crate) fn quantized_bias_type(code: BuiltinOp, op: &fb::Operator<'_>) -> i8 {
    use BuiltinOp as B;
    let t = match code {
        B::CONV_2D => op
            .builtin_options_as_conv_2_doptions()
            .map(|o| o.quantized_bias_type()),
        B::FULLY_CONNECTED => op
            .builtin_options_as_fully_connected_options()
            .map(|o| o.quantized_bias_type()),
        B::TRANSPOSE_CONV => op
            .builtin_options_as_transpose_conv_options()
            .map(|o| o.quantized_bias_type()),
        _ => None,
    };
    t.map_or(0, |t| t.0)
}

/// UNPACK's code (no `BuiltinOp` constant: only its options are read here).
const UNPACK: i32 = opcode::UNPACK as i32;
/// BATCH_MATMUL's code, likewise.
const BATCH_MATMUL: i32 = opcode::BATCH_MATMUL as i32;
/// CUMSUM's code, likewise.
const CUMSUM: i32 = opcode::CUMSUM as i32;
/// L2_POOL_2D's code, likewise.
const L2_POOL_2D: i32 = opcode::L2_POOL_2D as i32;
/// DEPTH_TO_SPACE's and SPACE_TO_DEPTH's codes, likewise.
const DEPTH_TO_SPACE: i32 = opcode::DEPTH_TO_SPACE as i32;
const SPACE_TO_DEPTH: i32 = opcode::SPACE_TO_DEPTH as i32;

impl OpOptions {
    /// Copies the options of `op` (whose code is `code`) out of the flatbuffer.
    pub(crate) fn read(code: BuiltinOp, op: &fb::Operator<'_>) -> OpOptions {
        use BuiltinOp as B;
        match code {
            B::CONV_2D => op.builtin_options_as_conv_2_doptions().map_or(
                OpOptions::Conv(ConvOptions {
                    stride_w: 1,
                    stride_h: 1,
                    dilation_w: 1,
                    dilation_h: 1,
                    ..Default::default()
                }),
                |o| {
                    OpOptions::Conv(ConvOptions {
                        padding: padding_from_fb(o.padding()),
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        dilation_w: o.dilation_w_factor(),
                        dilation_h: o.dilation_h_factor(),
                        depth_multiplier: 1,
                        activation: Activation::from_fb(o.fused_activation_function()),
                    })
                },
            ),
            B::DEPTHWISE_CONV_2D => op.builtin_options_as_depthwise_conv_2_doptions().map_or(
                OpOptions::Conv(ConvOptions {
                    stride_w: 1,
                    stride_h: 1,
                    dilation_w: 1,
                    dilation_h: 1,
                    depth_multiplier: 1,
                    ..Default::default()
                }),
                |o| {
                    OpOptions::Conv(ConvOptions {
                        padding: padding_from_fb(o.padding()),
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        dilation_w: o.dilation_w_factor(),
                        dilation_h: o.dilation_h_factor(),
                        depth_multiplier: o.depth_multiplier(),
                        activation: Activation::from_fb(o.fused_activation_function()),
                    })
                },
            ),
            B::TRANSPOSE_CONV => {
                op.builtin_options_as_transpose_conv_options()
                    .map_or(OpOptions::None, |o| {
                        OpOptions::Conv(ConvOptions {
                            padding: padding_from_fb(o.padding()),
                            stride_w: o.stride_w(),
                            stride_h: o.stride_h(),
                            dilation_w: 1,
                            dilation_h: 1,
                            depth_multiplier: 1,
                            activation: Activation::from_fb(o.fused_activation_function()),
                        })
                    })
            }
            B::AVERAGE_POOL_2D | B::MAX_POOL_2D | BuiltinOp(L2_POOL_2D) => op
                .builtin_options_as_pool_2_doptions()
                .map_or(OpOptions::None, |o| {
                    OpOptions::Pool(PoolOptions {
                        padding: padding_from_fb(o.padding()),
                        stride_w: o.stride_w(),
                        stride_h: o.stride_h(),
                        filter_w: o.filter_width(),
                        filter_h: o.filter_height(),
                        activation: Activation::from_fb(o.fused_activation_function()),
                    })
                }),
            B::FULLY_CONNECTED => op.builtin_options_as_fully_connected_options().map_or(
                OpOptions::FullyConnected {
                    activation: Activation::None,
                    keep_num_dims: false,
                    asymmetric_quantize_inputs: false,
                },
                |o| OpOptions::FullyConnected {
                    activation: Activation::from_fb(o.fused_activation_function()),
                    keep_num_dims: o.keep_num_dims(),
                    asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                },
            ),
            B::SOFTMAX => OpOptions::Softmax {
                beta: op
                    .builtin_options_as_softmax_options()
                    .map_or(1.0, |o| o.beta()),
            },
            B::RESHAPE => OpOptions::Reshape {
                new_shape: op
                    .builtin_options_as_reshape_options()
                    .and_then(|o| o.new_shape())
                    .map(|s| s.iter().collect()),
            },
            B::ADD => {
                let o = op.builtin_options_as_add_options();
                OpOptions::Elementwise {
                    activation: o.map_or(Activation::None, |o| {
                        Activation::from_fb(o.fused_activation_function())
                    }),
                    pot_scale_int16: o.is_none_or(|o| o.pot_scale_int16()),
                }
            }
            B::SUB => {
                let o = op.builtin_options_as_sub_options();
                OpOptions::Elementwise {
                    activation: o.map_or(Activation::None, |o| {
                        Activation::from_fb(o.fused_activation_function())
                    }),
                    pot_scale_int16: o.is_none_or(|o| o.pot_scale_int16()),
                }
            }
            B::MUL => OpOptions::Elementwise {
                activation: op
                    .builtin_options_as_mul_options()
                    .map_or(Activation::None, |o| {
                        Activation::from_fb(o.fused_activation_function())
                    }),
                pot_scale_int16: false,
            },
            B::DIV => OpOptions::Elementwise {
                activation: op
                    .builtin_options_as_div_options()
                    .map_or(Activation::None, |o| {
                        Activation::from_fb(o.fused_activation_function())
                    }),
                pot_scale_int16: false,
            },
            B::CONCATENATION => op.builtin_options_as_concatenation_options().map_or(
                OpOptions::Concatenation {
                    axis: 0,
                    activation: Activation::None,
                },
                |o| OpOptions::Concatenation {
                    axis: o.axis(),
                    activation: Activation::from_fb(o.fused_activation_function()),
                },
            ),
            B::PACK => op
                .builtin_options_as_pack_options()
                .map_or(OpOptions::None, |o| OpOptions::Pack {
                    values_count: o.values_count(),
                    axis: o.axis(),
                }),
            B::STRIDED_SLICE => {
                OpOptions::StridedSlice(op.builtin_options_as_strided_slice_options().map_or(
                    StridedSliceOptions::default(),
                    |o| StridedSliceOptions {
                        begin_mask: o.begin_mask(),
                        end_mask: o.end_mask(),
                        ellipsis_mask: o.ellipsis_mask(),
                        new_axis_mask: o.new_axis_mask(),
                        shrink_axis_mask: o.shrink_axis_mask(),
                        offset: o.offset(),
                    },
                ))
            }
            B::MEAN | B::SUM | B::REDUCE_MAX | B::REDUCE_MIN | B::REDUCE_ALL => {
                OpOptions::Reducer {
                    keep_dims: op
                        .builtin_options_as_reducer_options()
                        .is_some_and(|o| o.keep_dims()),
                }
            }
            B::UNIDIRECTIONAL_SEQUENCE_LSTM => OpOptions::Lstm(
                op.builtin_options_as_unidirectional_sequence_lstmoptions()
                    .map_or(LstmOptions::default(), |o| LstmOptions {
                        activation: Activation::from_fb(o.fused_activation_function()),
                        cell_clip: o.cell_clip(),
                        proj_clip: o.proj_clip(),
                        time_major: o.time_major(),
                        asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                    }),
            ),
            B::SVDF => op.builtin_options_as_svdfoptions().map_or(
                OpOptions::Svdf {
                    rank: 1,
                    activation: Activation::None,
                    asymmetric_quantize_inputs: false,
                },
                |o| OpOptions::Svdf {
                    rank: o.rank(),
                    activation: Activation::from_fb(o.fused_activation_function()),
                    asymmetric_quantize_inputs: o.asymmetric_quantize_inputs(),
                },
            ),
            B::IF => op
                .builtin_options_as_if_options()
                .map_or(OpOptions::None, |o| OpOptions::If {
                    then_subgraph: o.then_subgraph_index(),
                    else_subgraph: o.else_subgraph_index(),
                }),
            B::WHILE => op
                .builtin_options_as_while_options()
                .map_or(OpOptions::None, |o| OpOptions::While {
                    cond_subgraph: o.cond_subgraph_index(),
                    body_subgraph: o.body_subgraph_index(),
                }),
            B::CALL_ONCE => {
                op.builtin_options_as_call_once_options()
                    .map_or(OpOptions::None, |o| OpOptions::CallOnce {
                        init_subgraph: o.init_subgraph_index(),
                    })
            }
            B::VAR_HANDLE => op.builtin_options_as_var_handle_options().map_or(
                OpOptions::VarHandle {
                    container: Default::default(),
                    shared_name: Default::default(),
                },
                |o| OpOptions::VarHandle {
                    container: o.container().unwrap_or("").into(),
                    shared_name: o.shared_name().unwrap_or("").into(),
                },
            ),
            B::LEAKY_RELU => OpOptions::LeakyRelu {
                alpha: op
                    .builtin_options_as_leaky_relu_options()
                    .map_or(0.2, |o| o.alpha()),
            },
            B::SQUEEZE => OpOptions::Squeeze {
                dims: op
                    .builtin_options_as_squeeze_options()
                    .and_then(|o| o.squeeze_dims())
                    .map(|d| d.iter().collect())
                    .unwrap_or_default(),
            },
            B::GATHER => op.builtin_options_as_gather_options().map_or(
                OpOptions::Gather {
                    axis: 0,
                    batch_dims: 0,
                },
                |o| OpOptions::Gather {
                    axis: o.axis(),
                    batch_dims: o.batch_dims(),
                },
            ),
            BuiltinOp(DEPTH_TO_SPACE) => OpOptions::BlockSize {
                block_size: op
                    .builtin_options_as_depth_to_space_options()
                    .map_or(0, |o| o.block_size()),
            },
            BuiltinOp(SPACE_TO_DEPTH) => OpOptions::BlockSize {
                block_size: op
                    .builtin_options_as_space_to_depth_options()
                    .map_or(0, |o| o.block_size()),
            },
            BuiltinOp(BATCH_MATMUL) => op.builtin_options_as_batch_mat_mul_options().map_or(
                OpOptions::BatchMatMul {
                    adj_x: false,
                    adj_y: false,
                },
                |o| OpOptions::BatchMatMul {
                    adj_x: o.adj_x(),
                    adj_y: o.adj_y(),
                },
            ),
            BuiltinOp(CUMSUM) => {
                let o = op.builtin_options_as_cumsum_options();
                OpOptions::Cumsum {
                    exclusive: o.is_some_and(|o| o.exclusive()),
                    reverse: o.is_some_and(|o| o.reverse()),
                }
            }
            BuiltinOp(UNPACK) => op.builtin_options_as_unpack_options().map_or(
                OpOptions::Unpack { axis: 0, num: 0 },
                |o| OpOptions::Unpack {
                    axis: o.axis(),
                    num: o.num(),
                },
            ),
            B::RESIZE_BILINEAR => {
                let o = op.builtin_options_as_resize_bilinear_options();
                OpOptions::Resize {
                    align_corners: o.is_some_and(|o| o.align_corners()),
                    half_pixel_centers: o.is_some_and(|o| o.half_pixel_centers()),
                }
            }
            B::RESIZE_NEAREST_NEIGHBOR => {
                let o = op.builtin_options_as_resize_nearest_neighbor_options();
                OpOptions::Resize {
                    align_corners: o.is_some_and(|o| o.align_corners()),
                    half_pixel_centers: o.is_some_and(|o| o.half_pixel_centers()),
                }
            }
            // The schema's default mode is REFLECT (0).
            B::MIRROR_PAD => OpOptions::MirrorPad {
                reflect: op
                    .builtin_options_as_mirror_pad_options()
                    .is_none_or(|o| o.mode() == fb::MirrorPadMode::REFLECT),
            },
            _ => OpOptions::None,
        }
    }

    /// Subgraphs a control-flow op enters, in the order TFLM's lifetime marking visits them.
    pub fn called_subgraphs(&self) -> [Option<i32>; 2] {
        match *self {
            OpOptions::If {
                then_subgraph,
                else_subgraph,
            } => [Some(then_subgraph), Some(else_subgraph)],
            OpOptions::While {
                cond_subgraph,
                body_subgraph,
            } => [Some(cond_subgraph), Some(body_subgraph)],
            OpOptions::CallOnce { init_subgraph } => [Some(init_subgraph), None],
            _ => [None, None],
        }
    }
}
