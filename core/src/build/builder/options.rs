//! Operator options → the generated flatbuffer option tables.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::read::ops::{Activation, BuiltinOp, OpOptions, Padding};
use crate::read::schema as fb;

pub(super) fn act(a: Activation) -> fb::ActivationFunctionType {
    fb::ActivationFunctionType(a.code())
}

pub(super) fn pad(p: Padding) -> fb::Padding {
    match p {
        Padding::Same => fb::Padding::SAME,
        Padding::Valid => fb::Padding::VALID,
    }
}

pub(super) fn options_fit(code: BuiltinOp, options: &OpOptions) -> bool {
    matches!(options, OpOptions::None) || to_fb_options(code, options).is_some()
}

/// `options` with its `quantized_bias_type` set to `code` (a TFLite type
/// code) where the table has the field; 0 leaves the options unchanged.
pub(super) fn with_bias_type(mut options: fb::BuiltinOptionsT, code: i8) -> fb::BuiltinOptionsT {
    if code != 0 {
        let t = fb::TensorType(code);
        match &mut options {
            fb::BuiltinOptionsT::Conv2DOptions(o) => o.quantized_bias_type = t,
            fb::BuiltinOptionsT::FullyConnectedOptions(o) => o.quantized_bias_type = t,
            fb::BuiltinOptionsT::TransposeConvOptions(o) => o.quantized_bias_type = t,
            _ => {}
        }
    }
    options
}

/// The schema options for `options` on an operator with `code`; `None` when they do not fit.
pub(super) fn to_fb_options(code: BuiltinOp, options: &OpOptions) -> Option<fb::BuiltinOptionsT> {
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
        (code, OpOptions::Pool(p))
            if code == B::AVERAGE_POOL_2D
                || code == B::MAX_POOL_2D
                || code.0 == i32::from(microarena_image::opcode::L2_POOL_2D) =>
        {
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
        (B::PACK, OpOptions::Pack { values_count, axis }) => {
            O::PackOptions(Box::new(fb::PackOptionsT {
                values_count: *values_count,
                axis: *axis,
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
        (BuiltinOp(c), OpOptions::Unpack { axis, num })
            if c == i32::from(microarena_image::opcode::UNPACK) =>
        {
            O::UnpackOptions(Box::new(fb::UnpackOptionsT {
                num: *num,
                axis: *axis,
            }))
        }
        (code, OpOptions::BlockSize { block_size })
            if code.0 == i32::from(microarena_image::opcode::DEPTH_TO_SPACE) =>
        {
            O::DepthToSpaceOptions(Box::new(fb::DepthToSpaceOptionsT {
                block_size: *block_size,
            }))
        }
        (code, OpOptions::BlockSize { block_size })
            if code.0 == i32::from(microarena_image::opcode::SPACE_TO_DEPTH) =>
        {
            O::SpaceToDepthOptions(Box::new(fb::SpaceToDepthOptionsT {
                block_size: *block_size,
            }))
        }
        (code, OpOptions::BatchMatMul { adj_x, adj_y })
            if code.0 == i32::from(microarena_image::opcode::BATCH_MATMUL) =>
        {
            O::BatchMatMulOptions(Box::new(fb::BatchMatMulOptionsT {
                adj_x: *adj_x,
                adj_y: *adj_y,
                ..Default::default()
            }))
        }
        (code, OpOptions::Cumsum { exclusive, reverse })
            if code.0 == i32::from(microarena_image::opcode::CUMSUM) =>
        {
            O::CumsumOptions(Box::new(fb::CumsumOptionsT {
                exclusive: *exclusive,
                reverse: *reverse,
            }))
        }
        (B::GATHER, OpOptions::Gather { axis, batch_dims }) => {
            O::GatherOptions(Box::new(fb::GatherOptionsT {
                axis: *axis,
                batch_dims: *batch_dims,
            }))
        }
        (
            B::RESIZE_BILINEAR,
            OpOptions::Resize {
                align_corners,
                half_pixel_centers,
            },
        ) => O::ResizeBilinearOptions(Box::new(fb::ResizeBilinearOptionsT {
            align_corners: *align_corners,
            half_pixel_centers: *half_pixel_centers,
        })),
        (
            B::RESIZE_NEAREST_NEIGHBOR,
            OpOptions::Resize {
                align_corners,
                half_pixel_centers,
            },
        ) => O::ResizeNearestNeighborOptions(Box::new(fb::ResizeNearestNeighborOptionsT {
            align_corners: *align_corners,
            half_pixel_centers: *half_pixel_centers,
        })),
        (B::MIRROR_PAD, OpOptions::MirrorPad { reflect }) => {
            O::MirrorPadOptions(Box::new(fb::MirrorPadOptionsT {
                mode: if *reflect {
                    fb::MirrorPadMode::REFLECT
                } else {
                    fb::MirrorPadMode::SYMMETRIC
                },
            }))
        }
        _ => return None,
    })
}

/// A FlexBuffers map of integers (keys sorted, every slot 8 bytes wide): a
/// custom op's options as TFLM's converter writes them (the Signal ops'),
/// for builder models; `read::flex` reads them back.
pub fn flex_int_map(entries: &[(&str, i64)]) -> Vec<u8> {
    let mut e: Vec<(&str, i64)> = entries.to_vec();
    e.sort_by(|a, b| a.0.cmp(b.0));
    let mut b = Vec::new();
    let mut key_at = Vec::new();
    for (k, _) in &e {
        key_at.push(b.len());
        b.extend_from_slice(k.as_bytes());
        b.push(0);
    }
    while b.len() % 8 != 0 {
        b.push(0);
    }
    let word = |b: &mut Vec<u8>, v: u64| b.extend_from_slice(&v.to_le_bytes());
    word(&mut b, e.len() as u64);
    let keys = b.len();
    for &k in &key_at {
        let at = b.len();
        word(&mut b, (at - k) as u64);
    }
    let at = b.len();
    word(&mut b, (at - keys) as u64); // keys vector, relative
    word(&mut b, 8); // its byte width
    word(&mut b, e.len() as u64);
    let map = b.len();
    for (_, v) in &e {
        word(&mut b, *v as u64);
    }
    b.extend(core::iter::repeat_n(1u8 << 2 | 3, e.len())); // INT, 8 bytes
    while b.len() % 8 != 0 {
        b.push(0);
    }
    let at = b.len();
    word(&mut b, (at - map) as u64);
    b.push(9 << 2 | 3); // MAP, 8 bytes
    b.push(8);
    b
}
