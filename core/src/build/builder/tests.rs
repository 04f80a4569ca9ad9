#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::read::model::{Model, OfflinePlan, Quantization, ReadError};
use crate::read::ops::StridedSliceOptions;

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

#[test]
fn flex_int_map_reads_back_in_key_order() {
    let bytes = super::flex_int_map(&[("zeta", -3), ("alpha", 7), ("mid", 1 << 40)]);
    // `read::flex` gives a map's values in key order, as TFLM reads them by position.
    assert_eq!(
        crate::read::flex::map_values(&bytes),
        Some(alloc::vec![7, 1 << 40, -3])
    );
}
