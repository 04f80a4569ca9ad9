//! Small one-op (or few-op) builder models, one per kernel branch, with
//! deterministic inputs, for `scripts/verify-kernels.sh`, which runs each in
//! the tflite-micro wheel (TFLM's reference kernels) and in
//! `microarena run` and compares the output bytes.
//!
//! `cargo run -p microarena-core --example kernel_cases -- OUT_DIR` writes
//! `OUT_DIR/<case>.tflite`, `OUT_DIR/<case>.in<k>.bin` (raw little-endian,
//! one per model input) and `OUT_DIR/cases.tsv` (case, ops).
//!
//! A case covers one branch of a kernel: a dtype TFLM supports, per-channel
//! or per-tensor quantization, a padding, stride, dilation, fused
//! activation, broadcast shape, axes or keep_dims. Nothing here knows the
//! expected outputs: TFLM produces them. `runtime/tests/plan_matches_run.rs`
//! includes this file to check plan and run agree on every case.

use std::fmt::Write as _;
use std::path::Path;

use microarena_core::build::builder::{ModelBuilder, TensorHandle, flex_int_map};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, OpOptions, Padding};
use microarena_image::opcode;

fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    s = s.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// A tensor of a case: shape, type, quantization and (for constants) data.
#[derive(Clone, Debug)]
struct T {
    shape: Vec<i32>,
    dtype: DType,
    /// (scales, zero points, quantized dimension)
    q: Option<(Vec<f32>, Vec<i64>, i32)>,
    data: Option<Vec<u8>>,
}

fn t(shape: &[i32], dtype: DType) -> T {
    T {
        shape: shape.to_vec(),
        dtype,
        q: None,
        data: None,
    }
}

fn f32t(shape: &[i32]) -> T {
    t(shape, DType::F32)
}

/// A per-tensor quantized tensor.
fn qt(shape: &[i32], dtype: DType, scale: f32, zp: i64) -> T {
    T {
        q: Some((vec![scale], vec![zp], 0)),
        ..t(shape, dtype)
    }
}

fn elements(shape: &[i32]) -> usize {
    shape.iter().map(|&d| d.max(0) as usize).product()
}

impl T {
    fn per_channel(mut self, scales: Vec<f32>, dim: i32) -> T {
        let zps = vec![0; scales.len()];
        self.q = Some((scales, zps, dim));
        self
    }

    fn f32s(mut self, v: &[f32]) -> T {
        self.data = Some(v.iter().flat_map(|x| x.to_le_bytes()).collect());
        self
    }

    fn i64s(mut self, v: &[i64]) -> T {
        self.data = Some(v.iter().flat_map(|x| x.to_le_bytes()).collect());
        self
    }

    fn i8s(mut self, v: &[i8]) -> T {
        self.data = Some(v.iter().map(|&x| x as u8).collect());
        self
    }

    fn i32s(mut self, v: &[i32]) -> T {
        self.data = Some(v.iter().flat_map(|x| x.to_le_bytes()).collect());
        self
    }

    /// Deterministic int32 or int64 bias values in ±2^23 (the scale of a
    /// 16x8 accumulator; random int64s would swamp it).
    fn bias(mut self, seed: u64) -> T {
        let mut next = xorshift(seed);
        let v = (0..elements(&self.shape)).map(|_| (next() as i32 >> 8) as i64);
        self.data = Some(match self.dtype {
            DType::I64 => v.flat_map(|x| x.to_le_bytes()).collect(),
            _ => v.flat_map(|x| (x as i32).to_le_bytes()).collect(),
        });
        self
    }

    /// Deterministic constant data for this tensor's type.
    fn random(mut self, seed: u64) -> T {
        self.data = Some(random_bytes(&self.shape, self.dtype, seed));
        self
    }
}

/// Deterministic values: integers over their whole range, floats in [-2, 2).
fn random_bytes(shape: &[i32], dtype: DType, seed: u64) -> Vec<u8> {
    let mut next = xorshift(seed);
    let n = elements(shape);
    let mut out = Vec::new();
    for _ in 0..n {
        let r = next();
        match dtype {
            DType::F32 => {
                let v = ((r >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0) as f32;
                out.extend_from_slice(&v.to_le_bytes());
            }
            DType::I8 | DType::U8 | DType::Bool => out.push(r as u8),
            DType::I16 => out.extend_from_slice(&(r as u16).to_le_bytes()),
            DType::I32 => out.extend_from_slice(&((r as i32) >> 8).to_le_bytes()),
            DType::I64 => out.extend_from_slice(&((r as i64) >> 24).to_le_bytes()),
            DType::U32 => out.extend_from_slice(&(r as u32).to_le_bytes()),
            DType::U64 => out.extend_from_slice(&(r >> 16).to_le_bytes()),
            _ => {}
        }
    }
    if dtype == DType::Bool {
        for b in &mut out {
            *b &= 1;
        }
    }
    out
}

/// One op of a case: code, inputs and outputs as indices into the case's
/// tensors, options.
#[derive(Debug)]
struct Op {
    code: u8,
    inputs: Vec<i32>,
    outputs: Vec<i32>,
    options: OpOptions,
    /// A custom op: its `custom_code` and FlexBuffers options.
    custom: Option<(&'static str, Vec<u8>)>,
    /// The options' `quantized_bias_type`, when set.
    bias_type: Option<DType>,
}

#[derive(Debug)]
pub struct Case {
    pub name: String,
    tensors: Vec<T>,
    ops: Vec<Op>,
    inputs: Vec<i32>,
    outputs: Vec<i32>,
    /// Float outputs may differ from TFLM's by this many ULPs: the case calls
    /// a transcendental function, where the runtime's `libm` and the C
    /// library the wheel links can round differently.
    libm_ulps: u32,
}

impl Case {
    fn new(name: &str) -> Case {
        Case {
            name: name.into(),
            tensors: Vec::new(),
            ops: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            libm_ulps: 0,
        }
    }

    fn add(&mut self, tensor: T) -> i32 {
        self.tensors.push(tensor);
        self.tensors.len() as i32 - 1
    }

    /// A graph input.
    fn input(&mut self, tensor: T) -> i32 {
        let i = self.add(tensor);
        self.inputs.push(i);
        i
    }

    fn op(&mut self, code: u8, inputs: &[i32], outputs: &[i32], options: OpOptions) {
        self.ops.push(Op {
            code,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            options,
            custom: None,
            bias_type: None,
        });
    }

    /// A custom op (its image code for the case's name column).
    fn custom(&mut self, code: u8, inputs: &[i32], outputs: &[i32], options: &[(&str, i64)]) {
        let name = opcode::op_name(i32::from(code));
        self.ops.push(Op {
            code,
            inputs: inputs.to_vec(),
            outputs: outputs.to_vec(),
            options: OpOptions::None,
            custom: Some((name, flex_int_map(options))),
            bias_type: None,
        });
    }

    fn libm(mut self, ulps: u32) -> Case {
        self.libm_ulps = ulps;
        self
    }

    pub fn build(&self) -> (Vec<u8>, Vec<Vec<u8>>) {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        for (i, tensor) in self.tensors.iter().enumerate() {
            let mut h = b.tensor(g, &format!("t{i}"), &tensor.shape, tensor.dtype);
            if let Some((s, z, d)) = &tensor.q {
                h = h.quant_per_channel(s, z, *d);
            }
            if let Some(data) = &tensor.data {
                h = h.data(data);
            }
            h.id();
        }
        for op in &self.ops {
            match &op.custom {
                Some((name, options)) => {
                    b.custom_op(g, name, &op.inputs, &op.outputs)
                        .custom_options(options);
                }
                None => {
                    let h = b
                        .op(g, BuiltinOp(i32::from(op.code)), &op.inputs, &op.outputs)
                        .options(op.options.clone());
                    if let Some(t) = op.bias_type {
                        h.quantized_bias_type(t);
                    }
                }
            }
        }
        b.inputs(g, &self.inputs).outputs(g, &self.outputs);
        let model = b.build().expect("a valid case model");
        let inputs = self
            .inputs
            .iter()
            .enumerate()
            .map(|(k, &i)| {
                let tensor = &self.tensors[i as usize];
                let seed = self
                    .name
                    .bytes()
                    .fold(17u64, |h, c| h.wrapping_mul(31).wrapping_add(u64::from(c)))
                    + k as u64;
                random_bytes(&tensor.shape, tensor.dtype, seed)
            })
            .collect();
        (model, inputs)
    }

    fn ops_text(&self) -> String {
        let mut s = String::new();
        for (i, op) in self.ops.iter().enumerate() {
            if i > 0 {
                s.push('+');
            }
            s.push_str(opcode::op_name(i32::from(op.code)));
        }
        s
    }
}

/// A one-op case: `inputs` (graph inputs unless they carry data) → `code` → `out`.
fn unary_like(name: &str, code: u8, inputs: Vec<T>, out: T, options: OpOptions) -> Case {
    let mut c = Case::new(name);
    let ins: Vec<i32> = inputs
        .into_iter()
        .map(|tensor| {
            if tensor.data.is_some() {
                c.add(tensor)
            } else {
                c.input(tensor)
            }
        })
        .collect();
    let o = c.add(out);
    c.op(code, &ins, &[o], options);
    c.outputs.push(o);
    c
}

fn elementwise(activation: Activation) -> OpOptions {
    OpOptions::Elementwise {
        activation,
        pot_scale_int16: false,
    }
}

fn conv(
    padding: Padding,
    stride: (i32, i32),
    dilation: (i32, i32),
    mult: i32,
    activation: Activation,
) -> OpOptions {
    OpOptions::Conv(microarena_core::read::ops::ConvOptions {
        padding,
        stride_w: stride.0,
        stride_h: stride.1,
        dilation_w: dilation.0,
        dilation_h: dilation.1,
        depth_multiplier: mult,
        activation,
    })
}

pub fn cases() -> Vec<Case> {
    use Activation as A;
    use DType::{I8, I16, I32, U8};
    let mut v = Vec::new();
    let none = || OpOptions::None;

    // ---- ADD / MUL: the int8 rescaling path and float broadcasting.
    for (name, act) in [("none", A::None), ("relu6", A::Relu6), ("relu", A::Relu)] {
        v.push(unary_like(
            &format!("add_i8_{name}"),
            opcode::ADD,
            vec![
                qt(&[1, 4, 4, 8], I8, 0.0473, -3),
                qt(&[1, 4, 4, 8], I8, 0.0219, 11),
            ],
            qt(&[1, 4, 4, 8], I8, 0.0581, -7),
            elementwise(act),
        ));
    }
    v.push(unary_like(
        "add_i8_bcast",
        opcode::ADD,
        vec![
            qt(&[1, 3, 4, 5], I8, 0.0131, 5),
            qt(&[1, 1, 4, 1], I8, 0.0457, -20),
        ],
        qt(&[1, 3, 4, 5], I8, 0.0393, 2),
        elementwise(A::None),
    ));
    v.push(unary_like(
        "add_i8_same_scale",
        opcode::ADD,
        vec![qt(&[64], I8, 0.05, 0), qt(&[64], I8, 0.05, 0)],
        qt(&[64], I8, 0.1, 0),
        elementwise(A::None),
    ));
    v.push(unary_like(
        "add_f32",
        opcode::ADD,
        vec![f32t(&[2, 3, 4]), f32t(&[2, 3, 4])],
        f32t(&[2, 3, 4]),
        elementwise(A::None),
    ));
    v.push(unary_like(
        "add_f32_bcast_relu",
        opcode::ADD,
        vec![f32t(&[2, 1, 4]), f32t(&[3, 1])],
        f32t(&[2, 3, 4]),
        elementwise(A::Relu),
    ));
    // int32 SUB: every fused activation, and differences that wrap.
    for (name, act) in [
        ("sub_i32_relu6", A::Relu6),
        ("sub_i32_n1to1", A::ReluN1To1),
        ("sub_i32_wrap", A::None),
    ] {
        let b = if name == "sub_i32_wrap" {
            t(&[8], I32).i32s(&[
                i32::MIN,
                i32::MAX,
                i32::MIN + 1,
                -1,
                0,
                1,
                1 << 30,
                -(1 << 30),
            ])
        } else {
            t(&[8], I32)
        };
        v.push(unary_like(
            name,
            opcode::SUB,
            vec![t(&[2, 3, 8], I32), b],
            t(&[2, 3, 8], I32),
            elementwise(act),
        ));
    }
    // int32: unquantized and wrapping; TFLM's int32 ADD ignores its fused
    // activation (Eval sets the whole int32 range), MUL applies it.
    for (op, name, act) in [
        (opcode::ADD, "add_i32_same", A::None),
        (opcode::ADD, "add_i32_bcast_relu6", A::Relu6),
        (opcode::MUL, "mul_i32_same", A::None),
        (opcode::MUL, "mul_i32_bcast_relu", A::Relu),
    ] {
        let (sa, sb) = if name.contains("bcast") {
            (&[2, 1, 4][..], &[3, 1][..])
        } else {
            (&[2, 3, 4][..], &[2, 3, 4][..])
        };
        v.push(unary_like(
            name,
            op,
            vec![t(sa, I32), t(sb, I32)],
            t(&[2, 3, 4], I32),
            elementwise(act),
        ));
    }
    v.push(unary_like(
        "mul_i8",
        opcode::MUL,
        vec![qt(&[2, 8], I8, 0.031, 3), qt(&[2, 8], I8, 0.017, -4)],
        qt(&[2, 8], I8, 0.0072, 1),
        elementwise(A::None),
    ));
    v.push(unary_like(
        "mul_f32_bcast_relu6",
        opcode::MUL,
        vec![f32t(&[2, 3, 4]), f32t(&[4])],
        f32t(&[2, 3, 4]),
        elementwise(A::Relu6),
    ));

    // ---- SUB, MAXIMUM, MINIMUM, SQUARED_DIFFERENCE, DIV.
    let bin_types = |a: &[i32], b: &[i32], o: &[i32]| -> Vec<(&'static str, T, T, T)> {
        vec![
            ("f32", f32t(a), f32t(b), f32t(o)),
            (
                "i8",
                qt(a, I8, 0.0473, -3),
                qt(b, I8, 0.0219, 11),
                qt(o, I8, 0.0581, -7),
            ),
            (
                "i16",
                qt(a, I16, 0.00047, 0),
                qt(b, I16, 0.00021, 0),
                qt(o, I16, 0.00058, 0),
            ),
            ("i32", t(a, I32), t(b, I32), t(o, I32)),
        ]
    };
    for (op, oname) in [
        (opcode::SUB, "sub"),
        (opcode::MAXIMUM, "maximum"),
        (opcode::MINIMUM, "minimum"),
        (opcode::SQUARED_DIFFERENCE, "squared_difference"),
        (opcode::DIV, "div"),
    ] {
        for (sname, sa, sb, so) in [
            ("same", &[2, 3, 8][..], &[2, 3, 8][..], &[2, 3, 8][..]),
            ("bcast", &[2, 1, 8][..], &[3, 1][..], &[2, 3, 8][..]),
        ] {
            for (tname, a, b, o) in bin_types(sa, sb, so) {
                let options = match (op, sname) {
                    (opcode::SUB | opcode::DIV, "bcast") => elementwise(A::Relu6),
                    (opcode::SUB | opcode::DIV, _) => elementwise(A::None),
                    _ => none(),
                };
                v.push(unary_like(
                    &format!("{oname}_{tname}_{sname}"),
                    op,
                    vec![a, b],
                    o,
                    options,
                ));
            }
        }
    }

    // ---- CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED: accumulation order, bias, clamps.
    for (name, pad, stride, dil, act) in [
        ("same_s1_relu", Padding::Same, (1, 1), (1, 1), A::Relu),
        ("valid_s2", Padding::Valid, (2, 2), (1, 1), A::None),
        ("same_s2x1_dil", Padding::Same, (2, 1), (2, 2), A::Relu6),
    ] {
        let oh = microarena_image::geometry::out_size(pad, 9, 3, stride.1, dil.1);
        let ow = microarena_image::geometry::out_size(pad, 8, 3, stride.0, dil.0);
        v.push(unary_like(
            &format!("conv_f32_{name}"),
            opcode::CONV_2D,
            vec![
                f32t(&[1, 9, 8, 5]),
                f32t(&[6, 3, 3, 5]).random(1),
                f32t(&[6]).random(2),
            ],
            f32t(&[1, oh, ow, 6]),
            conv(pad, stride, dil, 1, act),
        ));
        v.push(unary_like(
            &format!("conv_i8_pc_{name}"),
            opcode::CONV_2D,
            vec![
                qt(&[1, 9, 8, 5], I8, 0.021, -5),
                qt(&[6, 3, 3, 5], I8, 1.0, 0)
                    .per_channel(vec![0.011, 0.0053, 0.0071, 0.0029, 0.0131, 0.0083], 0)
                    .random(3),
                qt(&[6], I32, 1.0, 0)
                    .per_channel(
                        [0.011f32, 0.0053, 0.0071, 0.0029, 0.0131, 0.0083]
                            .iter()
                            .map(|s| s * 0.021)
                            .collect(),
                        0,
                    )
                    .random(4),
            ],
            qt(&[1, oh, ow, 6], I8, 0.37, 3),
            conv(pad, stride, dil, 1, act),
        ));
        let oh = microarena_image::geometry::out_size(pad, 9, 3, stride.1, dil.1);
        v.push(unary_like(
            &format!("dwconv_f32_{name}"),
            opcode::DEPTHWISE_CONV_2D,
            vec![
                f32t(&[1, 9, 8, 3]),
                f32t(&[1, 3, 3, 6]).random(5),
                f32t(&[6]).random(6),
            ],
            f32t(&[1, oh, ow, 6]),
            conv(pad, stride, dil, 2, act),
        ));
        v.push(unary_like(
            &format!("dwconv_i8_pc_{name}"),
            opcode::DEPTHWISE_CONV_2D,
            vec![
                qt(&[1, 9, 8, 3], I8, 0.019, 7),
                qt(&[1, 3, 3, 6], I8, 1.0, 0)
                    .per_channel(vec![0.012, 0.0043, 0.0091, 0.0031, 0.0101, 0.0063], 3)
                    .random(7),
                qt(&[6], I32, 1.0, 0)
                    .per_channel(
                        [0.012f32, 0.0043, 0.0091, 0.0031, 0.0101, 0.0063]
                            .iter()
                            .map(|s| s * 0.019)
                            .collect(),
                        0,
                    )
                    .random(8),
            ],
            qt(&[1, oh, ow, 6], I8, 0.11, -2),
            conv(pad, stride, dil, 2, act),
        ));
    }
    for (name, act) in [("none", A::None), ("relu", A::Relu)] {
        v.push(unary_like(
            &format!("fc_f32_bias_{name}"),
            opcode::FULLY_CONNECTED,
            vec![
                f32t(&[2, 37]),
                f32t(&[9, 37]).random(9),
                f32t(&[9]).random(10),
            ],
            f32t(&[2, 9]),
            OpOptions::FullyConnected {
                activation: act,
                keep_num_dims: false,
                asymmetric_quantize_inputs: false,
            },
        ));
    }
    v.push(unary_like(
        "fc_i8",
        opcode::FULLY_CONNECTED,
        vec![
            qt(&[2, 37], I8, 0.023, -9),
            qt(&[9, 37], I8, 0.0061, 0).random(11),
            qt(&[9], I32, 0.023 * 0.0061, 0).random(12),
        ],
        qt(&[2, 9], I8, 0.093, 4),
        OpOptions::FullyConnected {
            activation: A::Relu6,
            keep_num_dims: false,
            asymmetric_quantize_inputs: false,
        },
    ));

    // Optional bias left out (input index −1), deeper accumulations, 3-D FC.
    {
        let mut c = Case::new("conv_f32_no_bias_deep");
        let x = c.input(f32t(&[1, 6, 6, 64]));
        let w = c.add(f32t(&[5, 3, 3, 64]).random(20));
        let o = c.add(f32t(&[1, 6, 6, 5]));
        c.op(
            opcode::CONV_2D,
            &[x, w, -1],
            &[o],
            conv(Padding::Same, (1, 1), (1, 1), 1, A::None),
        );
        c.outputs.push(o);
        v.push(c);
        let mut c = Case::new("fc_f32_no_bias");
        let x = c.input(f32t(&[3, 200]));
        let w = c.add(f32t(&[7, 200]).random(21));
        let o = c.add(f32t(&[3, 7]));
        c.op(
            opcode::FULLY_CONNECTED,
            &[x, w, -1],
            &[o],
            OpOptions::FullyConnected {
                activation: A::Relu6,
                keep_num_dims: false,
                asymmetric_quantize_inputs: false,
            },
        );
        c.outputs.push(o);
        v.push(c);
    }
    v.push(unary_like(
        "fc_f32_keep_num_dims",
        opcode::FULLY_CONNECTED,
        vec![
            f32t(&[2, 3, 50]),
            f32t(&[4, 50]).random(22),
            f32t(&[4]).random(23),
        ],
        f32t(&[2, 3, 4]),
        OpOptions::FullyConnected {
            activation: A::ReluN1To1,
            keep_num_dims: true,
            asymmetric_quantize_inputs: false,
        },
    ));
    v.push(unary_like(
        "fc_i8_per_channel",
        opcode::FULLY_CONNECTED,
        vec![
            qt(&[2, 37], I8, 0.023, -9),
            qt(&[3, 37], I8, 1.0, 0)
                .per_channel(vec![0.0061, 0.0023, 0.0107], 0)
                .random(24),
            qt(&[3], I32, 1.0, 0)
                .per_channel(vec![0.023 * 0.0061, 0.023 * 0.0023, 0.023 * 0.0107], 0)
                .random(25),
        ],
        qt(&[2, 3], I8, 0.093, 4),
        OpOptions::FullyConnected {
            activation: A::None,
            keep_num_dims: false,
            asymmetric_quantize_inputs: false,
        },
    ));
    for (name, pad, stride, filter) in [
        ("same_s2_f3", Padding::Same, (2, 2), (3, 3)),
        ("valid_s1_f2x3", Padding::Valid, (1, 1), (2, 3)),
    ] {
        let oh = microarena_image::geometry::out_size(pad, 7, filter.1, stride.1, 1);
        let ow = microarena_image::geometry::out_size(pad, 8, filter.0, stride.0, 1);
        for (op, oname) in [
            (opcode::AVERAGE_POOL_2D, "avgpool"),
            (opcode::MAX_POOL_2D, "maxpool"),
        ] {
            let options = OpOptions::Pool(microarena_core::read::ops::PoolOptions {
                padding: pad,
                stride_w: stride.0,
                stride_h: stride.1,
                filter_w: filter.0,
                filter_h: filter.1,
                activation: A::Relu6,
            });
            v.push(unary_like(
                &format!("{oname}_f32_{name}"),
                op,
                vec![f32t(&[2, 7, 8, 3])],
                f32t(&[2, oh, ow, 3]),
                options.clone(),
            ));
            v.push(unary_like(
                &format!("{oname}_i8_{name}"),
                op,
                vec![qt(&[2, 7, 8, 3], I8, 0.05, -4)],
                qt(&[2, oh, ow, 3], I8, 0.05, -4),
                options,
            ));
        }
    }
    // A MobileNet-style global average pool (int8 MEAN over a 7×7 map).
    for keep in [true, false] {
        v.push(unary_like(
            &format!("mean_i8_global_7x7_{}", if keep { "keep" } else { "drop" }),
            opcode::MEAN,
            vec![
                qt(&[1, 7, 7, 96], I8, 0.0235, -128),
                t(&[2], I32).i32s(&[1, 2]),
            ],
            qt(
                if keep { &[1, 1, 1, 96] } else { &[1, 96] },
                I8,
                0.0117,
                -128,
            ),
            OpOptions::Reducer { keep_dims: keep },
        ));
    }
    v.push(
        unary_like(
            "softmax_f32",
            opcode::SOFTMAX,
            vec![f32t(&[3, 10])],
            f32t(&[3, 10]),
            OpOptions::Softmax { beta: 1.0 },
        )
        .libm(1),
    );
    for (op, name) in [
        (opcode::LOGISTIC, "logistic_f32"),
        (opcode::TANH, "tanh_f32"),
    ] {
        // Inputs in [-2, 2) scaled by 12 reach LOGISTIC's cut-offs at -9 and 16.6.
        let mut c = Case::new(name).libm(1);
        let x = c.input(f32t(&[4, 50]));
        let k = c.add(f32t(&[1]).f32s(&[12.0]));
        let s = c.add(f32t(&[4, 50]));
        let o = c.add(f32t(&[4, 50]));
        c.op(opcode::MUL, &[x, k], &[s], elementwise(A::None));
        c.op(op, &[s], &[o], none());
        c.outputs.push(o);
        v.push(c);
    }
    v.push(
        unary_like(
            "log_softmax_f32",
            opcode::LOG_SOFTMAX,
            vec![f32t(&[3, 10])],
            f32t(&[3, 10]),
            none(),
        )
        .libm(1),
    );
    v.push(unary_like(
        "log_softmax_i8",
        opcode::LOG_SOFTMAX,
        vec![qt(&[3, 10], I8, 0.1, 3)],
        qt(&[3, 10], I8, 16.0 / 256.0, 127),
        none(),
    ));
    // int8 LOG_SOFTMAX: input scales from fine (most differences fall below
    // diff_min's cut) to coarse, rows of 1 to 40.
    for (k, (shape, scale, zp)) in [
        (&[2, 3, 17][..], 0.02f32, -7i64),
        (&[4, 40][..], 0.5, 0),
        (&[5, 1][..], 0.1, 3),
        (&[2, 64][..], 0.0041, 100),
        (&[8, 8][..], 0.25, -128),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(unary_like(
            &format!("log_softmax_i8_{k}"),
            opcode::LOG_SOFTMAX,
            vec![qt(shape, I8, scale, zp)],
            qt(shape, I8, 16.0 / 256.0, 127),
            none(),
        ));
    }
    v.push(unary_like(
        "softmax_i8",
        opcode::SOFTMAX,
        vec![qt(&[3, 10], I8, 0.1, 3)],
        qt(&[3, 10], I8, 1.0 / 256.0, -128),
        OpOptions::Softmax { beta: 1.0 },
    ));

    // ---- QUANTIZE / DEQUANTIZE: every type pair TFLM accepts.
    let q_pairs: &[(&str, T, T)] = &[
        ("f32_i8", f32t(&[40]), qt(&[40], I8, 0.0157, -3)),
        ("f32_i16", f32t(&[40]), qt(&[40], I16, 0.0001, 0)),
        ("f32_u8", f32t(&[40]), qt(&[40], U8, 0.0157, 128)),
        ("i8_i8", qt(&[40], I8, 0.031, 5), qt(&[40], I8, 0.017, -9)),
        ("u8_i8", qt(&[40], U8, 0.031, 131), qt(&[40], I8, 0.031, 3)),
        (
            "u8_i8_rescale",
            qt(&[40], U8, 0.031, 120),
            qt(&[40], I8, 0.023, -1),
        ),
        ("i8_u8", qt(&[40], I8, 0.031, 3), qt(&[40], U8, 0.031, 131)),
        ("i8_i16", qt(&[40], I8, 0.031, 5), qt(&[40], I16, 0.0003, 0)),
        ("i8_i32", qt(&[40], I8, 0.031, 5), qt(&[40], I32, 0.0003, 0)),
        (
            "i16_i8",
            qt(&[40], I16, 0.0003, 0),
            qt(&[40], I8, 0.031, -4),
        ),
        (
            "i16_i16",
            qt(&[40], I16, 0.0003, 0),
            qt(&[40], I16, 0.0007, 0),
        ),
        (
            "i16_i32",
            qt(&[40], I16, 0.0003, 0),
            qt(&[40], I32, 0.0001, 0),
        ),
        (
            "i32_i8",
            qt(&[40], I32, 0.0000003, 0),
            qt(&[40], I8, 0.031, 2),
        ),
    ];
    for (name, a, b) in q_pairs {
        v.push(unary_like(
            &format!("quantize_{name}"),
            opcode::QUANTIZE,
            vec![a.clone()],
            b.clone(),
            none(),
        ));
    }
    for (name, a) in [
        ("i8", qt(&[40], I8, 0.031, 5)),
        ("u8", qt(&[40], U8, 0.031, 127)),
        ("i16", qt(&[40], I16, 0.0003, 0)),
    ] {
        v.push(unary_like(
            &format!("dequantize_{name}"),
            opcode::DEQUANTIZE,
            vec![a],
            f32t(&[40]),
            none(),
        ));
    }

    // ---- MEAN / SUM / REDUCE_MAX: axes × keep_dims × dtype.
    let shape = [2, 5, 6, 7];
    for (aname, axes) in [
        ("12", vec![1, 2]),
        ("1", vec![1]),
        ("3", vec![3]),
        ("0", vec![0]),
        ("23", vec![2, -1]),
        ("all", vec![0, 1, 2, 3]),
    ] {
        for keep in [true, false] {
            let out: Vec<i32> = (0..4)
                .filter_map(|k| {
                    let reduced = axes.iter().any(|&a| (a + 4) % 4 == k);
                    match (reduced, keep) {
                        (false, _) => Some(shape[k as usize]),
                        (true, true) => Some(1),
                        (true, false) => None,
                    }
                })
                .collect();
            let axis_t = t(&[axes.len() as i32], I32).i32s(&axes);
            let k = if keep { "keep" } else { "drop" };
            for (op, oname) in [
                (opcode::MEAN, "mean"),
                (opcode::SUM, "sum"),
                (opcode::REDUCE_MAX, "max"),
            ] {
                let types: Vec<(&str, T, T)> = vec![
                    ("f32", f32t(&shape), f32t(&out)),
                    (
                        "i8",
                        qt(&shape, I8, 0.027, -3),
                        qt(&out, I8, if op == opcode::SUM { 0.9 } else { 0.023 }, 4),
                    ),
                    (
                        "i8_same",
                        qt(&shape, I8, 0.027, -3),
                        qt(&out, I8, 0.027, -3),
                    ),
                    (
                        "i16",
                        qt(&shape, I16, 0.0004, 0),
                        qt(&out, I16, if op == opcode::SUM { 0.01 } else { 0.0003 }, 0),
                    ),
                ];
                for (tname, a, b) in types {
                    // TFLM's int8 MAX needs equal quantization (the others are
                    // kept as cases TFLM refuses).
                    if op == opcode::REDUCE_MAX && tname == "i8" {
                        continue;
                    }
                    v.push(unary_like(
                        &format!("{oname}_{tname}_{aname}_{k}"),
                        op,
                        vec![a, axis_t.clone()],
                        b,
                        OpOptions::Reducer { keep_dims: keep },
                    ));
                }
            }
        }
    }

    // ---- ABS, SQRT, RSQRT, LOG, EXP, CAST.
    for (op, oname, ulps) in [
        (opcode::ABS, "abs", 0),
        (opcode::SQRT, "sqrt", 0),
        (opcode::RSQRT, "rsqrt", 0),
        (opcode::LOG, "log", 1),
        (opcode::EXP, "exp", 1),
    ] {
        if matches!(op, opcode::SQRT | opcode::RSQRT | opcode::LOG) {
            // Inputs in the function's domain (through ABS): the NaN a negative
            // input gives has a platform-defined sign and payload.
            let mut c = Case::new(&format!("{oname}_f32")).libm(ulps);
            let x = c.input(f32t(&[3, 40]));
            let a = c.add(f32t(&[3, 40]));
            let o = c.add(f32t(&[3, 40]));
            c.op(opcode::ABS, &[x], &[a], none());
            c.op(op, &[a], &[o], none());
            c.outputs.push(o);
            v.push(c);
        } else {
            v.push(
                unary_like(
                    &format!("{oname}_f32"),
                    op,
                    vec![f32t(&[3, 40])],
                    f32t(&[3, 40]),
                    none(),
                )
                .libm(ulps),
            );
        }
        v.push(unary_like(
            &format!("{oname}_i8"),
            op,
            vec![qt(&[64], I8, 0.031, 5)],
            qt(&[64], I8, 0.02, -6),
            none(),
        ));
    }
    v.push(unary_like(
        "abs_i8_same_scale",
        opcode::ABS,
        vec![qt(&[64], I8, 0.031, 5)],
        qt(&[64], I8, 0.031, -6),
        none(),
    ));
    v.push(unary_like(
        "abs_i16",
        opcode::ABS,
        vec![qt(&[64], I16, 0.0003, 0)],
        qt(&[64], I16, 0.0002, 0),
        none(),
    ));
    v.push(unary_like(
        "abs_i16_raw",
        opcode::ABS,
        vec![t(&[64], I16)],
        t(&[64], I16),
        none(),
    ));
    for (from, to) in [
        ("f32", "i32"),
        ("f32", "i8"),
        ("f32", "i16"),
        ("i32", "f32"),
        ("i8", "f32"),
        ("i8", "i32"),
        ("i16", "i8"),
        ("i32", "i16"),
        ("bool", "f32"),
        ("f32", "bool"),
        ("u32", "i32"),
        ("i32", "u32"),
        ("u32", "f32"),
        ("f32", "u32"),
        ("i16", "u32"),
        ("u32", "i8"),
        ("i8", "bool"),
        ("i32", "bool"),
        ("bool", "bool"),
    ] {
        let ty = |n: &str| match n {
            "f32" => DType::F32,
            "i32" => I32,
            "u32" => DType::U32,
            "i16" => I16,
            "bool" => DType::Bool,
            _ => I8,
        };
        v.push(unary_like(
            &format!("cast_{from}_{to}"),
            opcode::CAST,
            vec![t(&[50], ty(from))],
            t(&[50], ty(to)),
            none(),
        ));
    }

    // CAST to bool on zeros (x · 0, −0.0), a tiny float, infinity and NaN
    // (nonzero is true).
    for (name, dt, k) in [
        (
            "cast_i32_bool_zeros",
            I32,
            t(&[8], I32).i32s(&[0, 1, -1, 0, 2, 0, i32::MIN, 0]),
        ),
        (
            "cast_f32_bool_zeros",
            DType::F32,
            f32t(&[8]).f32s(&[0.0, 1.0, -0.0, 1e-30, f32::INFINITY, f32::NAN, -1.0, 0.0]),
        ),
    ] {
        let mut c = Case::new(name);
        let x = c.input(t(&[2, 8], dt));
        let k = c.add(k);
        let y = c.add(t(&[2, 8], dt));
        let b = c.add(t(&[2, 8], DType::Bool));
        c.op(opcode::MUL, &[x, k], &[y], elementwise(A::None));
        c.op(opcode::CAST, &[y], &[b], none());
        c.outputs.push(b);
        v.push(c);
    }
    {
        // Floats far outside uint32 both ways (x · 3e9 over [−6e9, 6e9)): the
        // conversion saturates.
        let mut c = Case::new("cast_f32_u32_wide");
        let x = c.input(f32t(&[50]));
        let k = c.add(f32t(&[1]).f32s(&[3e9]));
        let wide = c.add(f32t(&[50]));
        let y = c.add(t(&[50], DType::U32));
        c.op(opcode::MUL, &[x, k], &[wide], elementwise(A::None));
        c.op(opcode::CAST, &[wide], &[y], none());
        c.outputs.push(y);
        v.push(c);
    }

    // ---- ARG_MAX / ARG_MIN over each axis (int8 inputs have many ties).
    for (op, oname) in [(opcode::ARG_MAX, "arg_max"), (opcode::ARG_MIN, "arg_min")] {
        for axis in [0i32, 1, -1] {
            let shape = [3, 5, 7];
            let a = (axis + 3) as usize % 3;
            let out: Vec<i32> = (0..3).filter(|&k| k != a).map(|k| shape[k]).collect();
            for (tname, input) in [("f32", f32t(&shape)), ("i8", qt(&shape, I8, 0.1, 0))] {
                v.push(unary_like(
                    &format!("{oname}_{tname}_axis{a}"),
                    op,
                    vec![input, t(&[1], I32).i32s(&[axis])],
                    t(&out, I32),
                    none(),
                ));
            }
        }
    }

    // ---- RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR: up and down, odd ratios, every
    // corner/centre mode TFLM accepts, each type.
    for (name, from, to) in [
        ("up", [1, 3, 4, 2], [1, 6, 9, 2]),
        ("down", [1, 5, 7, 3], [1, 3, 4, 3]),
        ("odd", [2, 4, 4, 1], [2, 7, 5, 1]),
    ] {
        for (mode, align_corners, half_pixel_centers) in [
            ("plain", false, false),
            ("align", true, false),
            ("half", false, true),
        ] {
            for (op, tname, ty) in [
                ("nearest", "f32", DType::F32),
                ("nearest", "i8", I8),
                ("nearest", "i16", DType::I16),
                ("bilinear", "f32", DType::F32),
                ("bilinear", "i8", I8),
            ] {
                let code = if op == "nearest" {
                    opcode::RESIZE_NEAREST_NEIGHBOR
                } else {
                    opcode::RESIZE_BILINEAR
                };
                let tensor = |shape: &[i32]| {
                    if ty == DType::F32 {
                        f32t(shape)
                    } else {
                        qt(shape, ty, 0.05, 0)
                    }
                };
                v.push(unary_like(
                    &format!("resize_{op}_{tname}_{name}_{mode}"),
                    code,
                    vec![tensor(&from), t(&[2], I32).i32s(&to[1..3])],
                    tensor(&to),
                    OpOptions::Resize {
                        align_corners,
                        half_pixel_centers,
                    },
                ));
            }
        }
    }

    // ---- GATHER: axis and batch_dims, float32 and int8 (indices constant and in range).
    for (name, shape, coords, coord_data, axis, batch_dims, out) in [
        (
            "axis0",
            vec![5, 3],
            vec![4],
            vec![4, 0, 2, 2],
            0,
            0,
            vec![4, 3],
        ),
        (
            "axis1",
            vec![2, 6, 3],
            vec![2, 2],
            vec![5, 0, 1, 3],
            1,
            0,
            vec![2, 2, 2, 3],
        ),
        (
            "batch1",
            vec![2, 6, 3],
            vec![2, 3],
            vec![5, 0, 1, 3, 3, 2],
            1,
            1,
            vec![2, 3, 3],
        ),
    ] {
        for (tname, ty) in [("f32", DType::F32), ("i8", I8)] {
            let values = if ty == I8 {
                qt(&shape, I8, 0.1, 0)
            } else {
                f32t(&shape)
            };
            let o = if ty == I8 {
                qt(&out, I8, 0.1, 0)
            } else {
                f32t(&out)
            };
            v.push(unary_like(
                &format!("gather_{tname}_{name}"),
                opcode::GATHER,
                vec![values, t(&coords, I32).i32s(&coord_data)],
                o,
                OpOptions::Gather { axis, batch_dims },
            ));
        }
    }

    // ---- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND, 4-D and 3-D, with padding and crops.
    for (tname, ty) in [("f32", DType::F32), ("i8", I8)] {
        let tt = |shape: &[i32]| {
            if ty == I8 {
                qt(shape, I8, 0.1, -5)
            } else {
                f32t(shape)
            }
        };
        v.push(unary_like(
            &format!("space_to_batch_{tname}_4d_unpadded"),
            opcode::SPACE_TO_BATCH_ND,
            vec![
                tt(&[2, 6, 6, 3]),
                t(&[2], I32).i32s(&[2, 3]),
                t(&[2, 2], I32).i32s(&[0, 0, 0, 0]),
            ],
            tt(&[12, 3, 2, 3]),
            none(),
        ));
        v.push(unary_like(
            &format!("space_to_batch_{tname}_3d_unpadded"),
            opcode::SPACE_TO_BATCH_ND,
            vec![
                tt(&[1, 6, 3]),
                t(&[1], I32).i32s(&[2]),
                t(&[1, 2], I32).i32s(&[0, 0]),
            ],
            tt(&[2, 3, 3]),
            none(),
        ));
        // Padded: TFLM's output there is uninitialized, both sides refuse.
        v.push(unary_like(
            &format!("space_to_batch_{tname}_4d"),
            opcode::SPACE_TO_BATCH_ND,
            vec![
                tt(&[2, 5, 4, 3]),
                t(&[2], I32).i32s(&[2, 3]),
                t(&[2, 2], I32).i32s(&[1, 0, 1, 1]),
            ],
            tt(&[12, 3, 2, 3]),
            none(),
        ));
        v.push(unary_like(
            &format!("space_to_batch_{tname}_3d"),
            opcode::SPACE_TO_BATCH_ND,
            vec![
                tt(&[1, 5, 3]),
                t(&[1], I32).i32s(&[2]),
                t(&[1, 2], I32).i32s(&[1, 0]),
            ],
            tt(&[2, 3, 3]),
            none(),
        ));
        v.push(unary_like(
            &format!("batch_to_space_{tname}_4d"),
            opcode::BATCH_TO_SPACE_ND,
            vec![
                tt(&[12, 3, 2, 3]),
                t(&[2], I32).i32s(&[2, 3]),
                t(&[2, 2], I32).i32s(&[1, 0, 1, 1]),
            ],
            tt(&[2, 5, 4, 3]),
            none(),
        ));
        v.push(unary_like(
            &format!("batch_to_space_{tname}_3d"),
            opcode::BATCH_TO_SPACE_ND,
            vec![
                tt(&[4, 2, 3]),
                t(&[1], I32).i32s(&[2]),
                t(&[1, 2], I32).i32s(&[0, 1]),
            ],
            tt(&[2, 3, 3]),
            none(),
        ));
    }

    // ---- REDUCE_MIN (the MAX loop with the other comparison).
    for (aname, axes, out) in [
        ("1", vec![1], vec![2, 6, 7]),
        ("23", vec![2, 3], vec![2, 5]),
    ] {
        let keep = false;
        for (tname, a, b) in [
            ("f32", f32t(&[2, 5, 6, 7]), f32t(&out)),
            (
                "i8_same",
                qt(&[2, 5, 6, 7], I8, 0.027, -3),
                qt(&out, I8, 0.027, -3),
            ),
        ] {
            v.push(unary_like(
                &format!("min_{tname}_{aname}_drop"),
                opcode::REDUCE_MIN,
                vec![a, t(&[axes.len() as i32], I32).i32s(&axes)],
                b,
                OpOptions::Reducer { keep_dims: keep },
            ));
        }
    }

    // ---- Shape-only ops.
    v.push(unary_like(
        "squeeze_f32",
        opcode::SQUEEZE,
        vec![f32t(&[1, 3, 1, 4])],
        f32t(&[3, 4]),
        OpOptions::Squeeze { dims: vec![0, 2] },
    ));
    v.push(unary_like(
        "squeeze_i8_all",
        opcode::SQUEEZE,
        vec![qt(&[1, 6, 1], I8, 0.1, 0)],
        qt(&[6], I8, 0.1, 0),
        OpOptions::Squeeze { dims: vec![] },
    ));
    v.push(unary_like(
        "expand_dims_i8",
        opcode::EXPAND_DIMS,
        vec![qt(&[3, 4], I8, 0.1, 0), t(&[1], I32).i32s(&[-1])],
        qt(&[3, 4, 1], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "expand_dims_f32",
        opcode::EXPAND_DIMS,
        vec![f32t(&[3, 4]), t(&[1], I32).i32s(&[0])],
        f32t(&[1, 3, 4]),
        none(),
    ));
    v.push(unary_like(
        "shape_f32",
        opcode::SHAPE,
        vec![f32t(&[2, 3, 5])],
        t(&[3], I32),
        none(),
    ));

    // ---- Activations.
    let act_types = |shape: &[i32]| -> Vec<(&'static str, T, T)> {
        vec![
            ("f32", f32t(shape), f32t(shape)),
            ("i8", qt(shape, I8, 0.031, -7), qt(shape, I8, 0.027, -128)),
            ("i16", qt(shape, I16, 0.0003, 0), qt(shape, I16, 0.0002, 0)),
        ]
    };
    for (op, oname) in [(opcode::RELU, "relu"), (opcode::RELU6, "relu6")] {
        for (tname, a, b) in act_types(&[2, 50]) {
            v.push(unary_like(
                &format!("{oname}_{tname}"),
                op,
                vec![a],
                b,
                none(),
            ));
        }
    }
    for (tname, a, b) in act_types(&[2, 50]) {
        let b = if tname == "i8" {
            qt(&[2, 50], I8, 0.017, 3)
        } else {
            b
        };
        v.push(unary_like(
            &format!("leaky_relu_{tname}"),
            opcode::LEAKY_RELU,
            vec![a],
            b,
            OpOptions::LeakyRelu { alpha: 0.2 },
        ));
    }
    v.push(unary_like(
        "prelu_f32_bcast",
        opcode::PRELU,
        vec![f32t(&[1, 3, 4, 5]), f32t(&[1, 1, 5]).random(13)],
        f32t(&[1, 3, 4, 5]),
        none(),
    ));
    v.push(unary_like(
        "prelu_i8_bcast",
        opcode::PRELU,
        vec![
            qt(&[1, 3, 4, 5], I8, 0.031, 2),
            qt(&[1, 1, 5], I8, 0.0041, -1).random(14),
        ],
        qt(&[1, 3, 4, 5], I8, 0.019, -3),
        none(),
    ));
    v.push(unary_like(
        "prelu_i16_bcast",
        opcode::PRELU,
        vec![
            qt(&[2, 3, 5], I16, 0.0004, 0),
            qt(&[5], I8, 0.0041, 3).random(15),
        ],
        qt(&[2, 3, 5], I16, 0.0003, 0),
        none(),
    ));
    v.push(unary_like(
        "relu_i8_same_scale",
        opcode::RELU,
        vec![qt(&[64], I8, 0.031, 17)],
        qt(&[64], I8, 0.031, 17),
        none(),
    ));
    v.push(unary_like(
        "relu6_i8_zp",
        opcode::RELU6,
        vec![qt(&[64], I8, 0.031, -90)],
        qt(&[64], I8, 0.031, -90),
        none(),
    ));
    // Scales whose quotient rounds differently in float and in double.
    for (k, (si, so, alpha)) in [
        (0.031f32, 0.02f32, 0.3f32),
        (0.0173, 0.0291, 0.11),
        (0.047, 0.013, 0.7),
        (0.0091, 0.0093, 0.01),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(unary_like(
            &format!("leaky_relu_i8_scales{k}"),
            opcode::LEAKY_RELU,
            vec![qt(&[256], I8, si, 5)],
            qt(&[256], I8, so, -6),
            OpOptions::LeakyRelu { alpha },
        ));
        v.push(unary_like(
            &format!("relu_i8_scales{k}"),
            opcode::RELU,
            vec![qt(&[256], I8, si, 5)],
            qt(&[256], I8, so, -6),
            none(),
        ));
    }
    v.push(unary_like(
        "leaky_relu_i8_negative_alpha",
        opcode::LEAKY_RELU,
        vec![qt(&[64], I8, 0.031, 5)],
        qt(&[64], I8, 0.02, -6),
        OpOptions::LeakyRelu { alpha: -0.7 },
    ));
    for (tname, a, b) in [
        ("f32", f32t(&[2, 64]), f32t(&[2, 64])),
        (
            "i8",
            qt(&[2, 64], I8, 0.047, -1),
            qt(&[2, 64], I8, 0.025, -100),
        ),
        (
            "i8_small_in",
            qt(&[2, 64], I8, 0.011, 9),
            qt(&[2, 64], I8, 0.013, -3),
        ),
        (
            "i8_refused",
            qt(&[2, 64], I8, 0.5, 0),
            qt(&[2, 64], I8, 0.001, 0),
        ),
    ] {
        v.push(unary_like(
            &format!("hard_swish_{tname}"),
            opcode::HARD_SWISH,
            vec![a],
            b,
            none(),
        ));
    }

    // ---- SPLIT, SPLIT_V, UNPACK: several outputs, every type TFLM registers,
    // positive and negative axes.
    for (tname, ty) in [("f32", DType::F32), ("i8", I8), ("i16", I16), ("i32", I32)] {
        let tt = |shape: &[i32]| match ty {
            DType::F32 | DType::I32 => t(shape, ty),
            _ => qt(shape, ty, 0.25, 0),
        };
        for (name, shape, axis, parts) in [
            ("axis1", vec![2, 6, 3], 1, 3),
            ("axis_neg1", vec![2, 3, 4], -1, 2),
            ("axis0", vec![4, 5], 0, 4),
        ] {
            let mut c = Case::new(&format!("split_{tname}_{name}"));
            let a = c.add(t(&[], I32).i32s(&[axis]));
            let x = c.input(tt(&shape));
            let ax = if axis < 0 {
                axis + shape.len() as i32
            } else {
                axis
            } as usize;
            let mut piece = shape.clone();
            piece[ax] /= parts;
            let outs: Vec<i32> = (0..parts).map(|_| c.add(tt(&piece))).collect();
            c.op(opcode::SPLIT, &[a, x], &outs, none());
            c.outputs.extend(&outs);
            v.push(c);
        }
        for (name, shape, axis, sizes) in [
            ("axis1", vec![2, 7, 3], 1, vec![1, 4, 2]),
            ("axis_neg1", vec![3, 5], -1, vec![3, 2]),
        ] {
            let mut c = Case::new(&format!("split_v_{tname}_{name}"));
            let x = c.input(tt(&shape));
            let s = c.add(t(&[sizes.len() as i32], I32).i32s(&sizes));
            let a = c.add(t(&[], I32).i32s(&[axis]));
            let ax = if axis < 0 {
                axis + shape.len() as i32
            } else {
                axis
            } as usize;
            let outs: Vec<i32> = sizes
                .iter()
                .map(|&n| {
                    let mut piece = shape.clone();
                    piece[ax] = n;
                    c.add(tt(&piece))
                })
                .collect();
            c.op(opcode::SPLIT_V, &[x, s, a], &outs, none());
            c.outputs.extend(&outs);
            v.push(c);
        }
        for (name, shape, axis) in [
            ("axis0", vec![3, 4], 0),
            ("axis_neg1", vec![2, 3, 2], -1),
            ("axis1", vec![2, 3, 2], 1),
        ] {
            let mut c = Case::new(&format!("unpack_{tname}_{name}"));
            let x = c.input(tt(&shape));
            let ax = if axis < 0 {
                axis + shape.len() as i32
            } else {
                axis
            } as usize;
            let mut piece = shape.clone();
            let num = piece.remove(ax);
            let outs: Vec<i32> = (0..num).map(|_| c.add(tt(&piece))).collect();
            c.op(opcode::UNPACK, &[x], &outs, OpOptions::Unpack { axis, num });
            c.outputs.extend(&outs);
            v.push(c);
        }
    }

    // ---- TFLM's Signal library (custom ops, options as FlexBuffers maps).
    use DType::{U32, U64};
    {
        let mut c = Case::new("signal_window_2x16_shift12");
        let x = c.input(t(&[2, 16], I16));
        let w = c.add(t(&[16], I16).random(71));
        let y = c.add(t(&[2, 16], I16));
        c.custom(opcode::SIGNAL_WINDOW, &[x, w], &[y], &[("shift", 12)]);
        c.outputs.push(y);
        v.push(c);
    }
    for (name, shift) in [("loud", 0), ("quiet", 9)] {
        // A window with a large shift makes a quiet frame, which FftAutoScale scales up.
        let mut c = Case::new(&format!("signal_fft_auto_scale_{name}"));
        let x = c.input(t(&[40], I16));
        let w = c.add(t(&[40], I16).random(5));
        let quiet = c.add(t(&[40], I16));
        let y = c.add(t(&[40], I16));
        let bits = c.add(t(&[], I32));
        c.custom(
            opcode::SIGNAL_WINDOW,
            &[x, w],
            &[quiet],
            &[("shift", 15 + shift)],
        );
        c.custom(opcode::SIGNAL_FFT_AUTO_SCALE, &[quiet], &[y, bits], &[]);
        c.outputs.extend([y, bits]);
        v.push(c);
    }
    // fft_length 512 on 480 samples (the audio preprocessor), and lengths whose
    // complex FFT uses each kissfft radix: 32 = 4·4·2, 48 = 4·2·3, 40 = 4·5, 30 = 3·5.
    for (frames, frame, len) in [
        (1, 480, 512),
        (2, 64, 64),
        (1, 48, 48),
        (1, 40, 40),
        (1, 25, 30),
    ] {
        let mut c = Case::new(&format!("signal_rfft_{frames}x{frame}_len{len}"));
        let x = c.input(t(&[frames, frame], I16));
        let y = c.add(t(&[frames, len + 2], I16));
        c.custom(
            opcode::SIGNAL_RFFT,
            &[x],
            &[y],
            &[("T", 7), ("fft_length", i64::from(len))],
        );
        c.outputs.push(y);
        v.push(c);
    }
    {
        let mut c = Case::new("signal_energy_33");
        let x = c.input(t(&[66], I16));
        let y = c.add(t(&[33], U32));
        c.custom(
            opcode::SIGNAL_ENERGY,
            &[x],
            &[y],
            &[("end_index", 33), ("start_index", 0)],
        );
        c.outputs.push(y);
        v.push(c);
    }
    {
        // Four bands of two bins over ten: channel 0 only seeds channel 1.
        let mut c = Case::new("signal_filter_bank_3");
        let x = c.input(t(&[10], U32));
        let table = |v: &[i32]| {
            let mut t = t(&[v.len() as i32], I16);
            t.data = Some(v.iter().flat_map(|&x| (x as i16).to_le_bytes()).collect());
            t
        };
        let w = c.add(t(&[8], I16).random(3));
        let uw = c.add(t(&[8], I16).random(4));
        let starts = c.add(table(&[0, 2, 5, 7]));
        let weight_starts = c.add(table(&[0, 2, 4, 6]));
        let widths = c.add(table(&[2, 2, 2, 2]));
        let y = c.add(t(&[3], U64));
        c.custom(
            opcode::SIGNAL_FILTER_BANK,
            &[x, w, uw, starts, weight_starts, widths],
            &[y],
            &[("num_channels", 3)],
        );
        c.outputs.push(y);
        v.push(c);
    }
    {
        let mut c = Case::new("signal_filter_bank_square_root");
        let x = c.input(t(&[8], U64));
        let bits = c.add(t(&[], I32).i32s(&[3]));
        let y = c.add(t(&[8], U32));
        c.custom(
            opcode::SIGNAL_FILTER_BANK_SQUARE_ROOT,
            &[x, bits],
            &[y],
            &[],
        );
        c.outputs.push(y);
        v.push(c);
    }
    for clamping in [0, 1] {
        let mut c = Case::new(&format!("signal_spectral_subtraction_clamp{clamping}"));
        let x = c.input(t(&[8], U32));
        let y = c.add(t(&[8], U32));
        let noise = c.add(t(&[8], U32));
        c.custom(
            opcode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION,
            &[x],
            &[y, noise],
            &[
                ("alternate_one_minus_smoothing", 15401),
                ("alternate_smoothing", 983),
                ("clamping", clamping),
                ("min_signal_remaining", 819),
                ("num_channels", 8),
                ("one_minus_smoothing", 15975),
                ("smoothing", 409),
                ("smoothing_bits", 10),
                ("spectral_subtraction_bits", 14),
            ],
        );
        c.outputs.extend([y, noise]);
        v.push(c);
    }
    {
        let mut c = Case::new("signal_pcan_8");
        let x = c.input(t(&[8], U32));
        let noise = c.input(t(&[8], U32));
        let lut = c.add(t(&[125], I16).random(9));
        let y = c.add(t(&[8], U32));
        c.custom(
            opcode::SIGNAL_PCAN,
            &[x, noise, lut],
            &[y],
            &[("snr_shift", 6)],
        );
        c.outputs.push(y);
        v.push(c);
    }
    {
        let mut c = Case::new("signal_filter_bank_log_8");
        let x = c.input(t(&[8], U32));
        let y = c.add(t(&[8], I16));
        c.custom(
            opcode::SIGNAL_FILTER_BANK_LOG,
            &[x],
            &[y],
            &[("input_correction_bits", 3), ("output_scale", 64)],
        );
        c.outputs.push(y);
        v.push(c);
    }
    // ---- PACK: every axis, negative ones too, each copied type.
    for (tname, proto) in [
        ("f32", f32t(&[2, 3, 4])),
        ("i8", qt(&[2, 3, 4], I8, 0.031, 5)),
        ("i16", qt(&[2, 3, 4], I16, 0.0003, 0)),
        ("i32", t(&[2, 3, 4], I32)),
    ] {
        for axis in [0, 1, 2, 3, -1, -3] {
            let at = (if axis < 0 { axis + 4 } else { axis }) as usize;
            let mut shape = proto.shape.clone();
            shape.insert(at, 3);
            let out = T {
                shape,
                ..proto.clone()
            };
            let name = format!("pack_{tname}_axis{}", axis.to_string().replace('-', "m"));
            v.push(unary_like(
                &name,
                opcode::PACK,
                vec![proto.clone(), proto.clone(), proto.clone()],
                out,
                OpOptions::Pack {
                    values_count: 3,
                    axis,
                },
            ));
        }
    }
    v.push(unary_like(
        "pack_i8_single",
        opcode::PACK,
        vec![qt(&[5], I8, 0.031, 5)],
        qt(&[5, 1], I8, 0.031, 5),
        OpOptions::Pack {
            values_count: 1,
            axis: 1,
        },
    ));
    // ---- int8 RSQRT: inputs at or above the zero point (TFLM's Invoke fails
    // below it), several scale pairs, 0 (→ 127) included.
    for (k, (si, so)) in [
        (0.031f32, 0.02f32),
        (0.0007, 0.9),
        (0.5, 0.004),
        (0.013, 0.13),
    ]
    .into_iter()
    .enumerate()
    {
        v.push(unary_like(
            &format!("rsqrt_i8_nonneg{k}"),
            opcode::RSQRT,
            vec![qt(&[256], I8, si, -128)],
            qt(&[256], I8, so, -6),
            none(),
        ));
    }
    // ---- int8 DIV with a constant divisor that never equals its zero point
    // (TFLM's quotient is undefined there), both signs, broadcast.
    let divisor: Vec<u8> = (0..24)
        .map(|k| {
            let v = k * 37 % 255 - 127;
            (if v == 11 { 12 } else { v }) as i8 as u8
        })
        .collect();
    for (name, sa, sb, so, act) in [
        ("a", 0.0473f32, 0.0219f32, 0.0581f32, A::None),
        ("b", 0.011, 0.09, 0.0004, A::None),
        ("c", 0.2, 0.003, 0.9, A::Relu),
        ("d", 0.0473, 0.0219, 0.0581, A::Relu6),
    ] {
        let mut b = qt(&[24], I8, sb, 11);
        b.data = Some(divisor.clone());
        v.push(unary_like(
            &format!("div_i8_const_{name}"),
            opcode::DIV,
            vec![qt(&[5, 24], I8, sa, -3), b],
            qt(&[5, 24], I8, so, -7),
            elementwise(act),
        ));
    }
    // ---- CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED 16x8: int16 input and
    // output, int8 filter; per channel and per tensor; an int64 bias (int64
    // accumulator), an int32 one (int32 accumulator, 32-bit requantization)
    // or none; zero points, which only FULLY_CONNECTED reads.
    let cs = [0.011f32, 0.0053, 0.0071, 0.0029, 0.0131, 0.0083];
    let ds = [0.012f32, 0.0043, 0.0091, 0.0031, 0.0101, 0.0063];
    let (s16, a16) = (0.0004f32, 0.004f32);
    let bias_q = |scales: &[f32], n: usize, dt: DType, seed: u64| {
        let bs = (0..n)
            .map(|k| scales[if scales.len() > 1 { k } else { 0 }] * s16)
            .collect();
        qt(&[n as i32], dt, 1.0, 0).per_channel(bs, 0).bias(seed)
    };
    for (name, pad, stride, dil, act) in [
        ("same_s1_relu", Padding::Same, (1, 1), (1, 1), A::Relu),
        ("valid_s2", Padding::Valid, (2, 2), (1, 1), A::None),
        ("same_s2x1_dil", Padding::Same, (2, 1), (2, 2), A::Relu6),
        (
            "valid_s1_dil1x2_n1to1",
            Padding::Valid,
            (1, 1),
            (1, 2),
            A::ReluN1To1,
        ),
    ] {
        let oh = microarena_image::geometry::out_size(pad, 9, 3, stride.1, dil.1);
        let ow = microarena_image::geometry::out_size(pad, 8, 3, stride.0, dil.0);
        for (qname, scales) in [("pc", cs.to_vec()), ("pt", vec![0.0067])] {
            for (bname, bt) in [
                ("b64", Some(DType::I64)),
                ("b32", Some(I32)),
                ("nobias", None),
            ] {
                if qname == "pt" && bname == "nobias" {
                    continue;
                }
                let mut ins = vec![
                    qt(&[1, 9, 8, 5], I16, s16, 0),
                    qt(&[6, 3, 3, 5], I8, 1.0, 0)
                        .per_channel(scales.clone(), 0)
                        .random(40),
                ];
                if let Some(bt) = bt {
                    ins.push(bias_q(&scales, 6, bt, 41));
                }
                v.push(unary_like(
                    &format!("conv_i16_{qname}_{name}_{bname}"),
                    opcode::CONV_2D,
                    ins,
                    qt(&[1, oh, ow, 6], I16, a16, 0),
                    conv(pad, stride, dil, 1, act),
                ));
            }
        }
        for (qname, scales) in [("pc", ds.to_vec()), ("pt", vec![0.0057])] {
            for (bname, bias) in [("b64", true), ("nobias", false)] {
                let mut ins = vec![
                    qt(&[1, 9, 8, 3], I16, s16, 0),
                    qt(&[1, 3, 3, 6], I8, 1.0, 0)
                        .per_channel(scales.clone(), 3)
                        .random(42),
                ];
                if bias {
                    ins.push(bias_q(&scales, 6, DType::I64, 43));
                }
                v.push(unary_like(
                    &format!("dwconv_i16_{qname}_{name}_{bname}"),
                    opcode::DEPTHWISE_CONV_2D,
                    ins,
                    qt(&[1, oh, ow, 6], I16, 0.001, 0),
                    conv(pad, stride, dil, 2, act),
                ));
            }
        }
    }
    // Grouped CONV_2D (6 input channels, filters of 3: two groups), the zero
    // points TFLM's 16-bit convolutions do not read (only the activation
    // bounds move with the output's), and a depth multiplier of 1 and 3.
    v.push(unary_like(
        "conv_i16_groups_b32",
        opcode::CONV_2D,
        vec![
            qt(&[1, 5, 6, 6], I16, s16, 0),
            qt(&[4, 3, 3, 3], I8, 1.0, 0)
                .per_channel(cs[..4].to_vec(), 0)
                .random(44),
            bias_q(&cs[..4], 4, I32, 45),
        ],
        qt(&[1, 5, 6, 4], I16, a16, 0),
        conv(Padding::Same, (1, 1), (1, 1), 1, A::None),
    ));
    v.push(unary_like(
        "conv_i16_zero_points_relu",
        opcode::CONV_2D,
        vec![
            qt(&[1, 9, 8, 5], I16, s16, 37),
            qt(&[6, 3, 3, 5], I8, 1.0, 0)
                .per_channel(cs.to_vec(), 0)
                .random(46),
            bias_q(&cs, 6, DType::I64, 47),
        ],
        qt(&[1, 9, 8, 6], I16, a16, -300),
        conv(Padding::Same, (1, 1), (1, 1), 1, A::Relu),
    ));
    for mult in [1, 3] {
        v.push(unary_like(
            &format!("dwconv_i16_m{mult}_same_s2"),
            opcode::DEPTHWISE_CONV_2D,
            vec![
                qt(&[1, 7, 7, 2], I16, s16, 0),
                qt(&[1, 3, 3, 2 * mult], I8, 1.0, 0)
                    .per_channel(ds[..2 * mult as usize].to_vec(), 3)
                    .random(48),
                bias_q(&ds[..2 * mult as usize], 2 * mult as usize, DType::I64, 49),
            ],
            qt(&[1, 4, 4, 2 * mult], I16, 0.001, 0),
            conv(Padding::Same, (2, 2), (1, 1), mult, A::None),
        ));
    }
    let fc = |activation| OpOptions::FullyConnected {
        activation,
        keep_num_dims: false,
        asymmetric_quantize_inputs: false,
    };
    let fs = [0.0061f32, 0.0023, 0.0107];
    for (qname, scales, n) in [("pc", fs.to_vec(), 3), ("pt", vec![0.0061], 9)] {
        for (bname, bt, act) in [
            ("b64", Some(DType::I64), A::Relu6),
            ("b32", Some(I32), A::None),
            ("nobias", None, A::Relu),
        ] {
            let mut ins = vec![
                qt(&[2, 37], I16, s16, 0),
                qt(&[n, 37], I8, 1.0, 0)
                    .per_channel(scales.clone(), 0)
                    .random(50),
            ];
            if let Some(bt) = bt {
                ins.push(bias_q(&scales, n as usize, bt, 51));
            }
            v.push(unary_like(
                &format!("fc_i16_{qname}_{bname}"),
                opcode::FULLY_CONNECTED,
                ins,
                qt(&[2, n], I16, 0.002, 0),
                fc(act),
            ));
        }
    }
    // FULLY_CONNECTED's int16 kernels add the input offset and output zero
    // point (unlike the convolutions').
    for (bname, bt) in [("b64", DType::I64), ("b32", I32)] {
        v.push(unary_like(
            &format!("fc_i16_zero_points_{bname}"),
            opcode::FULLY_CONNECTED,
            vec![
                qt(&[3, 2, 20], I16, s16, 5),
                qt(&[4, 20], I8, 0.0061, 0).random(52),
                bias_q(&[0.0061], 4, bt, 53),
            ],
            qt(&[6, 4], I16, 0.002, -11),
            fc(A::None),
        ));
    }
    // No bias but quantized_bias_type INT32: TFLM takes its int32
    // accumulator; the runtime does not model the option, so plan and run
    // refuse.
    for (name, code, ins, out, options) in [
        (
            "conv_i16_nobias_bias_type_i32",
            opcode::CONV_2D,
            vec![
                qt(&[1, 5, 5, 3], I16, s16, 0),
                qt(&[2, 3, 3, 3], I8, 0.0067, 0).random(54),
            ],
            qt(&[1, 5, 5, 2], I16, a16, 0),
            conv(Padding::Same, (1, 1), (1, 1), 1, A::None),
        ),
        (
            "fc_i16_nobias_bias_type_i32",
            opcode::FULLY_CONNECTED,
            vec![
                qt(&[2, 37], I16, s16, 0),
                qt(&[3, 37], I8, 0.0061, 0).random(55),
            ],
            qt(&[2, 3], I16, 0.002, 0),
            fc(A::None),
        ),
    ] {
        let mut c = unary_like(name, code, ins, out, options);
        if let Some(op) = c.ops.last_mut() {
            op.bias_type = Some(I32);
        }
        v.push(c);
    }
    // ---- TRANSPOSE_CONV: float32, int8 (per channel and per tensor), int16
    // (int64 and int16 bias); SAME/VALID, strides, bias or none, and an
    // output one short of SAME's (TFLM's padding follows the output size).
    let tc_scales = [0.011f32, 0.0053, 0.0071, 0.0029];
    for (name, pad, stride, trim, act) in [
        ("same_s1", Padding::Same, (1, 1), 0, A::None),
        ("same_s2", Padding::Same, (2, 2), 0, A::Relu),
        ("valid_s2x1", Padding::Valid, (2, 1), 0, A::None),
        ("valid_s1", Padding::Valid, (1, 1), 0, A::Relu6),
        ("same_s2_short", Padding::Same, (2, 2), 1, A::None),
        ("same_s3x2", Padding::Same, (3, 2), 0, A::None),
    ] {
        let (ih, iw, fh, fw) = (4, 5, 3, 2);
        let size = |i: i32, f: i32, s: i32| match pad {
            Padding::Same => i * s - trim,
            Padding::Valid => (i - 1) * s + f - trim,
        };
        let (oh, ow) = (size(ih, fh, stride.1), size(iw, fw, stride.0));
        let oshape = [1, oh, ow, 4];
        let out_shape = || t(&[4], I32).i32s(&oshape);
        let options = conv(pad, stride, (1, 1), 1, act);
        for bias in [true, false] {
            let b = if bias { "" } else { "_nobias" };
            let mut ins = vec![
                out_shape(),
                f32t(&[4, fh, fw, 3]).random(11),
                f32t(&[1, ih, iw, 3]),
            ];
            if bias {
                ins.push(f32t(&[4]).random(12));
            }
            v.push(unary_like(
                &format!("transpose_conv_f32_{name}{b}"),
                opcode::TRANSPOSE_CONV,
                ins,
                f32t(&oshape),
                options.clone(),
            ));
            for (qname, scales) in [("pc", tc_scales.to_vec()), ("pt", vec![0.0061])] {
                let mut ins = vec![
                    out_shape(),
                    qt(&[4, fh, fw, 3], I8, 1.0, 0)
                        .per_channel(scales.clone(), 0)
                        .random(13),
                    qt(&[1, ih, iw, 3], I8, 0.021, -5),
                ];
                if bias {
                    let bscales = (0..4)
                        .map(|k| scales[if scales.len() > 1 { k } else { 0 }] * 0.021)
                        .collect();
                    ins.push(qt(&[4], I32, 1.0, 0).per_channel(bscales, 0).random(14));
                }
                v.push(unary_like(
                    &format!("transpose_conv_i8_{qname}_{name}{b}"),
                    opcode::TRANSPOSE_CONV,
                    ins,
                    qt(&oshape, I8, 0.047, 3),
                    options.clone(),
                ));
            }
            for (bname, bias_type) in [("b64", DType::I64), ("b16", I16)] {
                if !bias && bias_type == I16 {
                    continue;
                }
                let mut ins = vec![
                    out_shape(),
                    qt(&[4, fh, fw, 3], I8, 1.0, 0)
                        .per_channel(tc_scales.to_vec(), 0)
                        .random(15),
                    qt(&[1, ih, iw, 3], I16, 0.0004, 0),
                ];
                if bias {
                    let bscales = tc_scales.iter().map(|s| s * 0.0004).collect();
                    ins.push(
                        qt(&[4], bias_type, 1.0, 0)
                            .per_channel(bscales, 0)
                            .random(16),
                    );
                }
                let bn = if bias {
                    format!("_{bname}")
                } else {
                    b.to_string()
                };
                v.push(unary_like(
                    &format!("transpose_conv_i16_{name}{bn}"),
                    opcode::TRANSPOSE_CONV,
                    ins,
                    qt(&oshape, I16, 0.0009, 0),
                    options.clone(),
                ));
            }
        }
    }
    // ---- PAD / PADV2: zero (or the int8 zero point) and a constant pad value;
    // image-style (batch and depth unpadded) and generic paddings, each type TFLM pads.
    let pads4 = |b: [i32; 8]| t(&[4, 2], I32).i32s(&b);
    for (shape, pads, style) in [
        ([1, 3, 4, 2], [0, 0, 1, 2, 2, 0, 0, 0], "image"),
        ([2, 3, 2, 3], [1, 0, 0, 1, 1, 1, 0, 2], "generic"),
    ] {
        let out: Vec<i32> = (0..4)
            .map(|k| shape[k] + pads[2 * k] + pads[2 * k + 1])
            .collect();
        for (ty, name, value) in [
            (DType::F32, "f32", 1.5f32.to_le_bytes().to_vec()),
            (I8, "i8", vec![0x85]),
            (I16, "i16", (-1234i16).to_le_bytes().to_vec()),
            (I32, "i32", 77_777i32.to_le_bytes().to_vec()),
        ] {
            let tensor = |dims: &[i32]| match ty {
                I8 => qt(dims, I8, 0.031, -9),
                _ => t(dims, ty),
            };
            v.push(unary_like(
                &format!("pad_{name}_{style}"),
                opcode::PAD,
                vec![tensor(&shape), pads4(pads)],
                tensor(&out),
                none(),
            ));
            let mut scalar = tensor(&[1]);
            scalar.data = Some(value);
            v.push(unary_like(
                &format!("padv2_{name}_{style}"),
                opcode::PADV2,
                vec![tensor(&shape), pads4(pads), scalar],
                tensor(&out),
                none(),
            ));
        }
    }
    // ---- MIRROR_PAD: REFLECT and SYMMETRIC up to their widest padding,
    // int32 and int64 paddings, float32 and int8, ranks 1 to 4.
    for (reflect, mode) in [(true, "reflect"), (false, "symmetric")] {
        let wide = if reflect { 2 } else { 3 };
        for (j, (shape, pads)) in [
            (vec![5], vec![wide + 1, 1]),
            (vec![3, 4], vec![wide, 0, 1, wide]),
            (vec![1, 3, 4, 2], vec![0, 0, wide, 1, 2, wide, 0, 0]),
            (vec![2, 3, 3, 2], vec![1, 1, 1, 2, 0, wide, 1, 0]),
        ]
        .into_iter()
        .enumerate()
        {
            let out: Vec<i32> = shape
                .iter()
                .enumerate()
                .map(|(k, d)| d + pads[2 * k] + pads[2 * k + 1])
                .collect();
            let rank = shape.len() as i32;
            for (ty, name) in [(DType::F32, "f32"), (I8, "i8")] {
                let tensor = |dims: &[i32]| match ty {
                    I8 => qt(dims, I8, 0.02, 3),
                    _ => t(dims, ty),
                };
                let i64_pads = rank == 2;
                let paddings = if i64_pads {
                    let mut p = t(&[rank, 2], DType::I64);
                    p.data = Some(
                        pads.iter()
                            .flat_map(|&x| i64::from(x).to_le_bytes())
                            .collect(),
                    );
                    p
                } else {
                    t(&[rank, 2], I32).i32s(&pads)
                };
                v.push(unary_like(
                    &format!(
                        "mirror_pad_{mode}_{name}_{j}_rank{rank}{}",
                        if i64_pads { "_i64" } else { "" }
                    ),
                    opcode::MIRROR_PAD,
                    vec![tensor(&shape), paddings],
                    tensor(&out),
                    OpOptions::MirrorPad { reflect },
                ));
            }
        }
    }
    // ---- ADD_N: float32 in TFLM's summation order, int8 on one input scale.
    for n in [2usize, 3, 5] {
        v.push(unary_like(
            &format!("add_n_f32_{n}"),
            opcode::ADD_N,
            vec![f32t(&[2, 3, 5]); n],
            f32t(&[2, 3, 5]),
            none(),
        ));
        v.push(unary_like(
            &format!("add_n_i8_{n}"),
            opcode::ADD_N,
            vec![qt(&[1, 4, 6], I8, 0.043, -5); n],
            qt(&[1, 4, 6], I8, 0.097 * n as f32 / 3.0, 7),
            none(),
        ));
    }
    v.push(unary_like(
        "pad_f32_rank3",
        opcode::PAD,
        vec![f32t(&[2, 3, 4]), t(&[3, 2], I32).i32s(&[1, 1, 0, 2, 3, 0])],
        f32t(&[4, 5, 7]),
        none(),
    ));
    v
}

/// Verify-kernels cases whose models are not allocation probes: the kernels
/// the runtime gained after TFLM's figures were measured on every target
/// (their allocations are `probes()`'s, one per Prepare branch). Checked
/// against the wheel's outputs and by `plan_matches_run` like `cases()`.
pub fn output_cases() -> Vec<Case> {
    let mut v = variable_and_int16_cases();
    v.append(&mut compare_cases());
    v.append(&mut float_math_cases());
    v.append(&mut rearrange_cases());
    v.append(&mut norm_cases());
    v.append(&mut depthwise_window_cases());
    v
}

/// The runtime's four-channel int8 depthwise paths beyond 3×3 (outputs
/// only: their allocations are those of the depthwise probes in `cases`).
fn depthwise_window_cases() -> Vec<Case> {
    use DType::{I8, I32};
    type A = Activation;
    let mut v = Vec::new();
    // The runtime's four-channel int8 depthwise paths beyond 3×3: one input
    // channel to eight with an audio-sized 10×8 filter (more taps than the
    // portable build keeps unpacked), several channels with a dilated 5×5
    // window and with a depth multiplier of 4, SAME and VALID, so windows
    // are clipped on every side.
    for (name, (ih, iw, ic), (fh, fw), mult, pad, stride, dil) in [
        (
            "1to8_10x8_s2",
            (25, 20, 1),
            (10, 8),
            8,
            Padding::Same,
            (2, 2),
            (1, 1),
        ),
        (
            "8ch_5x5_dil2",
            (11, 9, 8),
            (5, 5),
            1,
            Padding::Same,
            (1, 1),
            (2, 2),
        ),
        (
            "2to8_3x5_s1x2",
            (7, 12, 2),
            (3, 5),
            4,
            Padding::Valid,
            (2, 1),
            (1, 1),
        ),
        (
            "1to4_4x4_s2",
            (9, 9, 1),
            (4, 4),
            4,
            Padding::Same,
            (2, 2),
            (1, 1),
        ),
    ] {
        let oc = ic * mult;
        let oh = microarena_image::geometry::out_size(pad, ih, fh, stride.1, dil.1);
        let ow = microarena_image::geometry::out_size(pad, iw, fw, stride.0, dil.0);
        let scales: Vec<f32> = (0..oc).map(|k| 0.004 + 0.0013 * k as f32).collect();
        v.push(unary_like(
            &format!("dwconv_i8_quads_{name}"),
            opcode::DEPTHWISE_CONV_2D,
            vec![
                qt(&[1, ih, iw, ic], I8, 0.023, -9),
                qt(&[1, fh, fw, oc], I8, 1.0, 0)
                    .per_channel(scales.clone(), 3)
                    .random(41),
                qt(&[oc], I32, 1.0, 0)
                    .per_channel(scales.iter().map(|s| s * 0.023).collect(), 0)
                    .random(42),
            ],
            qt(&[1, oh, ow, oc], I8, 0.09, 4),
            conv(pad, stride, dil, mult, A::None),
        ));
    }
    v
}

/// L2_NORMALIZATION, L2_POOL_2D, ELU, REDUCE_ALL, int16 LOGISTIC and TANH.
fn norm_cases() -> Vec<Case> {
    use DType::{Bool, I8, I16, I32};
    let none = || OpOptions::None;
    let mut v = Vec::new();
    // int16 LOGISTIC/TANH: a power-of-two input scale taken by a shift
    // (2^-12: shift 0; TANH also 2^-11) and scales that need a multiplier.
    for (name, code) in [("logistic", opcode::LOGISTIC), ("tanh", opcode::TANH)] {
        for (sname, scale) in [
            ("pot12", 1.0 / 4096.0),
            ("pot11", 1.0 / 2048.0),
            ("s0003", 0.0003),
            ("s002", 0.002),
        ] {
            v.push(unary_like(
                &format!("{name}_i16_{sname}"),
                code,
                vec![qt(&[2, 64], I16, scale, 0)],
                qt(&[2, 64], I16, 1.0 / 32768.0, 0),
                none(),
            ));
        }
    }
    v.extend([
        unary_like(
            "reduce_all",
            opcode::REDUCE_ALL,
            vec![t(&[4, 3], Bool), t(&[1], I32).i32s(&[1])],
            t(&[4], Bool),
            OpOptions::Reducer { keep_dims: false },
        ),
        unary_like(
            "reduce_all_keep_dims_two_axes",
            opcode::REDUCE_ALL,
            vec![t(&[2, 2, 3], Bool), t(&[2], I32).i32s(&[0, -1])],
            t(&[1, 2, 1], Bool),
            OpOptions::Reducer { keep_dims: true },
        ),
        unary_like(
            "l2_normalization_f32",
            opcode::L2_NORMALIZATION,
            vec![f32t(&[1, 2, 2, 8])],
            f32t(&[1, 2, 2, 8]),
            none(),
        ),
        unary_like(
            "l2_normalization_i8",
            opcode::L2_NORMALIZATION,
            vec![qt(&[3, 8], I8, 0.1, 5)],
            qt(&[3, 8], I8, 1.0 / 128.0, 0),
            none(),
        ),
        unary_like(
            "l2_normalization_i8_long_rows",
            opcode::L2_NORMALIZATION,
            vec![qt(&[2, 300], I8, 0.02, -3)],
            qt(&[2, 300], I8, 1.0 / 128.0, 0),
            none(),
        ),
        unary_like(
            "elu_f32",
            opcode::ELU,
            vec![f32t(&[4, 30])],
            f32t(&[4, 30]),
            none(),
        )
        .libm(1),
        unary_like(
            "elu_i8",
            opcode::ELU,
            vec![qt(&[4, 64], I8, 0.05, -4)],
            qt(&[4, 64], I8, 0.04, 30),
            none(),
        ),
        unary_like(
            "elu_i8_wide",
            opcode::ELU,
            vec![qt(&[256], I8, 0.1, 0)],
            qt(&[256], I8, 0.05, 60),
            none(),
        ),
    ]);
    for (name, exclusive, reverse, axis) in [
        ("cumsum", false, false, 1),
        ("cumsum_exclusive", true, false, 0),
        ("cumsum_reverse_negative_axis", false, true, -1),
        ("cumsum_exclusive_reverse", true, true, 1),
    ] {
        let options = OpOptions::Cumsum { exclusive, reverse };
        v.push(unary_like(
            &format!("{name}_f32"),
            opcode::CUMSUM,
            vec![f32t(&[2, 5, 3]), t(&[1], I32).i32s(&[axis])],
            f32t(&[2, 5, 3]),
            options.clone(),
        ));
        v.push(unary_like(
            &format!("{name}_i8"),
            opcode::CUMSUM,
            vec![qt(&[3, 6], I8, 0.05, -7), t(&[1], I32).i32s(&[axis])],
            qt(&[3, 6], I8, 0.2, 4),
            options,
        ));
    }
    for (name, padding, stride, filter, act, input, out) in [
        (
            "l2_pool_2d_valid",
            Padding::Valid,
            2,
            2,
            Activation::None,
            [1, 4, 4, 2],
            [1, 2, 2, 2],
        ),
        (
            "l2_pool_2d_same_relu6",
            Padding::Same,
            2,
            3,
            Activation::Relu6,
            [2, 5, 5, 3],
            [2, 3, 3, 3],
        ),
        (
            "l2_pool_2d_stride1",
            Padding::Same,
            1,
            3,
            Activation::None,
            [1, 4, 5, 2],
            [1, 4, 5, 2],
        ),
    ] {
        v.push(unary_like(
            name,
            opcode::L2_POOL_2D,
            vec![f32t(&input)],
            f32t(&out),
            OpOptions::Pool(microarena_core::read::ops::PoolOptions {
                padding,
                stride_w: stride,
                stride_h: stride,
                filter_w: filter,
                filter_h: filter,
                activation: act,
            }),
        ));
    }
    v
}

/// The element-moving kernels: SLICE, REVERSE_V2, BROADCAST_TO/ARGS,
/// DEPTH_TO_SPACE, SPACE_TO_DEPTH, GATHER_ND, EMBEDDING_LOOKUP,
/// DYNAMIC_UPDATE_SLICE.
fn rearrange_cases() -> Vec<Case> {
    use DType::{Bool, I8, I16, I32, I64};
    let none = || OpOptions::None;
    let mut v = Vec::new();
    v.push(unary_like(
        "slice_f32",
        opcode::SLICE,
        vec![
            f32t(&[3, 4]),
            t(&[2], I32).i32s(&[1, 0]),
            t(&[2], I32).i32s(&[2, -1]),
        ],
        f32t(&[2, 4]),
        none(),
    ));
    v.push(unary_like(
        "slice_i8_5d_i64",
        opcode::SLICE,
        vec![
            qt(&[2, 3, 4, 5, 2], I8, 0.1, 0),
            t(&[5], I64).i64s(&[1, 0, 1, 2, 0]),
            t(&[5], I64).i64s(&[1, 2, 3, 3, 2]),
        ],
        qt(&[1, 2, 3, 3, 2], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "slice_bool",
        opcode::SLICE,
        vec![
            t(&[6], Bool),
            t(&[1], I32).i32s(&[2]),
            t(&[1], I32).i32s(&[3]),
        ],
        t(&[3], Bool),
        none(),
    ));
    for (name, tensor, axes) in [
        ("reverse_v2_f32", f32t(&[2, 3, 4]), vec![1]),
        (
            "reverse_v2_i16_two_axes",
            qt(&[2, 3, 4], I16, 0.1, 0),
            vec![1, 2],
        ),
        (
            "reverse_v2_i8_negative_axis",
            qt(&[3, 5], I8, 0.1, 0),
            vec![-1],
        ),
    ] {
        let n = axes.len() as i32;
        v.push(unary_like(
            name,
            opcode::REVERSE_V2,
            vec![tensor.clone(), t(&[n], I32).i32s(&axes)],
            tensor,
            none(),
        ));
    }
    v.push(unary_like(
        "broadcast_to_f32",
        opcode::BROADCAST_TO,
        vec![f32t(&[1, 3]), t(&[3], I32).i32s(&[2, 4, 3])],
        f32t(&[2, 4, 3]),
        none(),
    ));
    v.push(unary_like(
        "broadcast_to_i8_i64_shape",
        opcode::BROADCAST_TO,
        vec![qt(&[2, 1, 3], I8, 0.1, 0), t(&[4], I64).i64s(&[2, 2, 5, 3])],
        qt(&[2, 2, 5, 3], I8, 0.1, 0),
        none(),
    ));
    {
        let mut c = Case::new("broadcast_args_i32");
        let a = c.add(t(&[3], I32).i32s(&[2, 1, 5]));
        let b = c.add(t(&[2], I32).i32s(&[4, 1]));
        let s = c.add(t(&[3], I32));
        c.op(opcode::BROADCAST_ARGS, &[a, b], &[s], none());
        // A graph input to keep the model runnable everywhere: added to the shape.
        let z = c.input(t(&[3], I32));
        let o = c.add(t(&[3], I32));
        c.op(opcode::ADD, &[s, z], &[o], elementwise(Activation::None));
        c.outputs.push(o);
        v.push(c);
    }
    for (name, code, input, out) in [
        (
            "depth_to_space",
            opcode::DEPTH_TO_SPACE,
            [1, 2, 3, 8],
            [1, 4, 6, 2],
        ),
        (
            "space_to_depth",
            opcode::SPACE_TO_DEPTH,
            [2, 4, 6, 3],
            [2, 2, 3, 12],
        ),
    ] {
        v.push(unary_like(
            &format!("{name}_f32"),
            code,
            vec![f32t(&input)],
            f32t(&out),
            OpOptions::BlockSize { block_size: 2 },
        ));
        v.push(unary_like(
            &format!("{name}_i8"),
            code,
            vec![qt(&input, I8, 0.1, 0)],
            qt(&out, I8, 0.1, 0),
            OpOptions::BlockSize { block_size: 2 },
        ));
    }
    v.push(unary_like(
        "depth_to_space_i8_block3",
        opcode::DEPTH_TO_SPACE,
        vec![qt(&[1, 2, 2, 18], I8, 0.1, 0)],
        qt(&[1, 6, 6, 2], I8, 0.1, 0),
        OpOptions::BlockSize { block_size: 3 },
    ));
    for (tname, params, out) in [
        ("f32", f32t(&[3, 4]), f32t(&[2, 4])),
        ("i8", qt(&[3, 4, 5], I8, 0.1, 0), qt(&[2, 4, 5], I8, 0.1, 0)),
    ] {
        v.push(unary_like(
            &format!("gather_nd_{tname}"),
            opcode::GATHER_ND,
            vec![params, t(&[2, 1], I32).i32s(&[2, 0])],
            out,
            none(),
        ));
    }
    v.push(unary_like(
        "gather_nd_f32_full_index",
        opcode::GATHER_ND,
        vec![
            f32t(&[3, 4, 2]),
            t(&[2, 2, 3], I32).i32s(&[0, 0, 1, 2, 3, 0, 1, 1, 1, 2, 0, 1]),
        ],
        f32t(&[2, 2]),
        none(),
    ));
    for (tname, rows, out) in [
        ("f32", f32t(&[5, 3]).random(6), f32t(&[3, 3])),
        (
            "i8",
            qt(&[5, 2, 4], I8, 0.1, 0).random(7),
            qt(&[3, 2, 4], I8, 0.1, 0),
        ),
        // The hybrid path: int8 rows dequantized to float32.
        (
            "i8_to_f32",
            qt(&[5, 6], I8, 0.037, 0).random(8),
            f32t(&[3, 6]),
        ),
    ] {
        let mut c = Case::new(&format!("embedding_lookup_{tname}"));
        let ids = c.add(t(&[3], I32).i32s(&[4, 0, 2]));
        let r = c.add(rows);
        let g = c.add(out.clone());
        c.op(opcode::EMBEDDING_LOOKUP, &[ids, r], &[g], none());
        let z = c.input(out.clone());
        let o = c.add(out);
        c.op(opcode::MAXIMUM, &[g, z], &[o], none());
        c.outputs.push(o);
        v.push(c);
    }
    for (name, x, u, start) in [
        (
            "dynamic_update_slice_f32",
            f32t(&[4, 4]),
            f32t(&[2, 2]),
            vec![1, 1],
        ),
        (
            "dynamic_update_slice_i8_clamped",
            qt(&[3, 5], I8, 0.1, 0),
            qt(&[2, 3], I8, 0.1, 0),
            vec![2, -1],
        ),
        (
            "dynamic_update_slice_i16",
            qt(&[2, 3, 4], I16, 0.1, 0),
            qt(&[1, 3, 2], I16, 0.1, 0),
            vec![1, 0, 2],
        ),
    ] {
        let n = start.len() as i32;
        v.push(unary_like(
            name,
            opcode::DYNAMIC_UPDATE_SLICE,
            vec![x.clone(), u, t(&[n], I32).i32s(&start)],
            x,
            none(),
        ));
    }
    v
}

/// The float32 element-wise ops, ZEROS_LIKE and FILL.
fn float_math_cases() -> Vec<Case> {
    use DType::{I8, I32, I64};
    let none = || OpOptions::None;
    let mut v = Vec::new();
    // Values on and between the halves, so ROUND meets its ties.
    let halves: Vec<f32> = (-12..12).map(|k| k as f32 * 0.25).collect();
    for (name, code) in [
        ("floor", opcode::FLOOR),
        ("ceil", opcode::CEIL),
        ("round", opcode::ROUND),
        ("neg", opcode::NEG),
        ("square", opcode::SQUARE),
    ] {
        v.push(unary_like(
            name,
            code,
            vec![f32t(&[2, 5])],
            f32t(&[2, 5]),
            none(),
        ));
        let mut c = Case::new(&format!("{name}_halves"));
        // halves + (0 or 1): a bool input cast to float keeps every value a
        // multiple of 0.25.
        let x = c.add(f32t(&[24]).f32s(&halves));
        let bits = c.input(t(&[24], DType::Bool));
        let ones = c.add(f32t(&[24]));
        c.op(opcode::CAST, &[bits], &[ones], none());
        let s = c.add(f32t(&[24]));
        c.op(opcode::ADD, &[x, ones], &[s], elementwise(Activation::None));
        let o = c.add(f32t(&[24]));
        c.op(code, &[s], &[o], none());
        c.outputs.push(o);
        v.push(c);
    }
    for (name, code) in [("sin", opcode::SIN), ("cos", opcode::COS)] {
        v.push(unary_like(name, code, vec![f32t(&[4, 30])], f32t(&[4, 30]), none()).libm(1));
    }
    for (name, code) in [
        ("floor_div", opcode::FLOOR_DIV),
        ("floor_mod", opcode::FLOOR_MOD),
    ] {
        v.push(unary_like(
            name,
            code,
            vec![f32t(&[2, 3]), f32t(&[2, 3])],
            f32t(&[2, 3]),
            none(),
        ));
        v.push(unary_like(
            &format!("{name}_bcast"),
            code,
            vec![f32t(&[2, 3, 4]), f32t(&[4]).f32s(&[0.75, -1.5, 0.3, -0.2])],
            f32t(&[2, 3, 4]),
            none(),
        ));
    }
    for (name, tensor) in [
        ("f32", f32t(&[3, 4])),
        ("i8", qt(&[3, 4], I8, 0.1, 5)),
        ("i32", t(&[3, 4], I32)),
        ("i64", t(&[3, 4], I64)),
    ] {
        v.push(unary_like(
            &format!("zeros_like_{name}"),
            opcode::ZEROS_LIKE,
            vec![tensor.clone()],
            tensor,
            none(),
        ));
    }
    v.push(unary_like(
        "fill_f32",
        opcode::FILL,
        vec![t(&[2], I32).i32s(&[2, 3]), f32t(&[])],
        f32t(&[2, 3]),
        none(),
    ));
    v.push(unary_like(
        "fill_i8_i64_dims",
        opcode::FILL,
        vec![t(&[3], I64).i64s(&[2, 3, 4]), qt(&[], I8, 0.1, 0)],
        qt(&[2, 3, 4], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "fill_i32",
        opcode::FILL,
        vec![t(&[1], I32).i32s(&[5]), t(&[], I32)],
        t(&[5], I32),
        none(),
    ));
    v
}

/// int16 ADD and MUL (16x8 LSTMs built from ordinary ops), FULLY_CONNECTED
/// with a variable filter and BATCH_MATMUL (attention).
fn variable_and_int16_cases() -> Vec<Case> {
    use Activation as A;
    use DType::{I8, I16};
    let mut v = Vec::new();
    for (name, code, act, za, zb, zo) in [
        ("add_i16", opcode::ADD, A::None, 3, -7, 11),
        ("add_i16_relu", opcode::ADD, A::Relu, 0, 0, 0),
        ("mul_i16", opcode::MUL, A::None, 0, 0, 0),
        ("mul_i16_relu6", opcode::MUL, A::Relu6, 0, 0, 0),
    ] {
        v.push(unary_like(
            name,
            code,
            vec![
                qt(&[2, 3, 8], I16, 0.00031, za),
                qt(&[2, 3, 8], I16, 0.00047, zb),
            ],
            qt(&[2, 3, 8], I16, 0.00052, zo),
            elementwise(act),
        ));
    }
    for (name, code) in [
        ("add_i16_bcast", opcode::ADD),
        ("mul_i16_bcast", opcode::MUL),
    ] {
        v.push(unary_like(
            name,
            code,
            vec![
                qt(&[1, 3, 4, 5], I16, 0.0002, 0),
                qt(&[1, 1, 4, 1], I16, 0.0007, 0),
            ],
            qt(&[1, 3, 4, 5], I16, 0.0011, 0),
            elementwise(A::None),
        ));
    }
    let fc = |activation| OpOptions::FullyConnected {
        activation,
        keep_num_dims: false,
        asymmetric_quantize_inputs: false,
    };
    v.push(unary_like(
        "fc_f32_variable_filter",
        opcode::FULLY_CONNECTED,
        vec![f32t(&[3, 12]), f32t(&[5, 12]), f32t(&[5]).random(31)],
        f32t(&[3, 5]),
        fc(A::None),
    ));
    v.push(unary_like(
        "fc_i8_variable_filter",
        opcode::FULLY_CONNECTED,
        vec![
            qt(&[2, 16], I8, 0.02, -3),
            qt(&[6, 16], I8, 0.011, 0),
            qt(&[6], DType::I32, 0.02 * 0.011, 0).random(32),
        ],
        qt(&[2, 6], I8, 0.07, 2),
        fc(A::Relu),
    ));
    let bmm = |adj_x: bool, adj_y: bool| OpOptions::BatchMatMul { adj_x, adj_y };
    for (name, l, r, o, adj) in [
        ("bmm_f32", [1, 2, 3], [1, 3, 4], [1, 2, 4], (false, false)),
        (
            "bmm_f32_adj_x",
            [1, 3, 2],
            [1, 3, 4],
            [1, 2, 4],
            (true, false),
        ),
        (
            "bmm_f32_adj_y",
            [1, 2, 3],
            [1, 4, 3],
            [1, 2, 4],
            (false, true),
        ),
        (
            "bmm_f32_adj_xy",
            [2, 3, 2],
            [2, 4, 3],
            [2, 2, 4],
            (true, true),
        ),
        (
            "bmm_f32_bcast",
            [3, 2, 5],
            [1, 5, 4],
            [3, 2, 4],
            (false, false),
        ),
    ] {
        // Both operands variable: attention's Q·Kᵀ.
        v.push(unary_like(
            name,
            opcode::BATCH_MATMUL,
            vec![f32t(&l), f32t(&r)],
            f32t(&o),
            bmm(adj.0, adj.1),
        ));
    }
    v.push(unary_like(
        "bmm_f32_4d_const_rhs",
        opcode::BATCH_MATMUL,
        vec![f32t(&[2, 3, 5, 6]), f32t(&[2, 1, 6, 7]).random(33)],
        f32t(&[2, 3, 5, 7]),
        bmm(false, false),
    ));
    v.push(unary_like(
        "bmm_i8",
        opcode::BATCH_MATMUL,
        vec![qt(&[1, 4, 8], I8, 0.05, 3), qt(&[1, 8, 16], I8, 0.02, -5)],
        qt(&[1, 4, 16], I8, 0.1, -2),
        bmm(false, false),
    ));
    v.push(unary_like(
        "bmm_i8_adj_y_const",
        opcode::BATCH_MATMUL,
        vec![
            qt(&[2, 4, 8], I8, 0.05, 0),
            qt(&[2, 16, 8], I8, 0.02, 0).random(34),
        ],
        qt(&[2, 4, 16], I8, 0.1, 1),
        bmm(false, true),
    ));
    v.push(unary_like(
        "bmm_i16",
        opcode::BATCH_MATMUL,
        vec![
            qt(&[1, 8, 4], I16, 0.001, 0),
            qt(&[1, 8, 16], I16, 0.001, 0),
        ],
        qt(&[1, 4, 16], I16, 0.002, 0),
        bmm(true, false),
    ));
    v
}

/// Comparisons, logical ops and SELECT_V2.
fn compare_cases() -> Vec<Case> {
    use DType::{Bool, I8, I16, I32, I64};
    let none = || OpOptions::None;
    let mut v = Vec::new();
    for (name, code) in [
        ("equal", opcode::EQUAL),
        ("not_equal", opcode::NOT_EQUAL),
        ("less", opcode::LESS),
        ("less_equal", opcode::LESS_EQUAL),
        ("greater", opcode::GREATER),
        ("greater_equal", opcode::GREATER_EQUAL),
    ] {
        // Few distinct values, so that equal pairs occur.
        let small = |shape: &[i32], seed| {
            let n = elements(shape);
            let mut next = xorshift(seed);
            t(shape, I32).i32s(&(0..n).map(|_| (next() % 3) as i32).collect::<Vec<_>>())
        };
        let mut c = Case::new(&format!("{name}_i32_const"));
        let a = c.input(t(&[2, 3], I32));
        let b = c.add(small(&[2, 3], 40));
        let o = c.add(t(&[2, 3], Bool));
        c.op(code, &[a, b], &[o], none());
        c.outputs.push(o);
        v.push(c);
        v.push(unary_like(
            &format!("{name}_f32"),
            code,
            vec![f32t(&[2, 3]), f32t(&[2, 3])],
            t(&[2, 3], Bool),
            none(),
        ));
        v.push(unary_like(
            &format!("{name}_i8_bcast"),
            code,
            vec![qt(&[2, 3, 4], I8, 0.05, 3), qt(&[1, 4], I8, 0.04, -2)],
            t(&[2, 3, 4], Bool),
            none(),
        ));
        v.push(unary_like(
            &format!("{name}_i8_same_scale"),
            code,
            vec![qt(&[64], I8, 0.5, 0), qt(&[], I8, 0.5, 0).i8s(&[3])],
            t(&[64], Bool),
            none(),
        ));
        v.push(unary_like(
            &format!("{name}_i64"),
            code,
            vec![t(&[5], I64), t(&[1], I64)],
            t(&[5], Bool),
            none(),
        ));
    }
    for (name, code) in [
        ("equal_bool", opcode::EQUAL),
        ("not_equal_bool", opcode::NOT_EQUAL),
    ] {
        v.push(unary_like(
            name,
            code,
            vec![t(&[2, 4], Bool), t(&[4], Bool)],
            t(&[2, 4], Bool),
            none(),
        ));
    }
    for (name, code) in [
        ("logical_and", opcode::LOGICAL_AND),
        ("logical_or", opcode::LOGICAL_OR),
    ] {
        v.push(unary_like(
            name,
            code,
            vec![t(&[2, 3], Bool), t(&[2, 3], Bool)],
            t(&[2, 3], Bool),
            none(),
        ));
        v.push(unary_like(
            &format!("{name}_bcast"),
            code,
            vec![t(&[3, 1], Bool), t(&[1, 4], Bool)],
            t(&[3, 4], Bool),
            none(),
        ));
    }
    v.push(unary_like(
        "logical_not",
        opcode::LOGICAL_NOT,
        vec![t(&[7], Bool)],
        t(&[7], Bool),
        none(),
    ));
    v.push(unary_like(
        "select_v2_f32",
        opcode::SELECT_V2,
        vec![t(&[2, 3], Bool), f32t(&[2, 3]), f32t(&[2, 3])],
        f32t(&[2, 3]),
        none(),
    ));
    v.push(unary_like(
        "select_v2_i8_bcast",
        opcode::SELECT_V2,
        vec![
            t(&[1, 3], Bool),
            qt(&[2, 3], I8, 0.1, 0),
            qt(&[2, 1], I8, 0.1, 0),
        ],
        qt(&[2, 3], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "select_v2_i16_bcast_5d",
        opcode::SELECT_V2,
        vec![
            t(&[2, 1, 1, 1, 3], Bool),
            qt(&[1, 2, 1, 2, 3], I16, 0.1, 0),
            qt(&[3], I16, 0.1, 0),
        ],
        qt(&[2, 2, 1, 2, 3], I16, 0.1, 0),
        none(),
    ));
    v
}

/// Whole builder networks, run end to end: the one-op cases check each
/// branch, these check the kernels composed at real sizes (deep 1×1
/// reductions, residual ADDs over different scales, every layer's
/// requantization feeding the next). Name, ops column, model.
/// Allocation probes for the kernels and Prepare branches `cases()` does not
/// reach (ops microarena-runtime has no kernel for, and branches that
/// allocate differently): TFLM's figures for each are committed in
/// `core/tests/data/tflm_kernel_probes.jsonl` and compared category by
/// category by `core/tests/kernel_probes.rs`. Their inputs never matter:
/// nothing is invoked.
pub fn probes() -> Vec<Case> {
    use DType::{Bool, I8, I16, I32};
    let none = || OpOptions::None;
    let mut v = Vec::new();
    // Comparisons: float, and int8 with a broadcast operand.
    for (name, code) in [
        ("equal", opcode::EQUAL),
        ("not_equal", opcode::NOT_EQUAL),
        ("less", opcode::LESS),
        ("less_equal", opcode::LESS_EQUAL),
        ("greater", opcode::GREATER),
        ("greater_equal", opcode::GREATER_EQUAL),
    ] {
        v.push(unary_like(
            &format!("probe_{name}_f32"),
            code,
            vec![f32t(&[2, 3]), f32t(&[2, 3])],
            t(&[2, 3], Bool),
            none(),
        ));
        v.push(unary_like(
            &format!("probe_{name}_i8_bcast"),
            code,
            vec![qt(&[2, 3], I8, 0.05, 3), qt(&[1, 3], I8, 0.04, -2)],
            t(&[2, 3], Bool),
            none(),
        ));
    }
    for (name, code) in [
        ("logical_and", opcode::LOGICAL_AND),
        ("logical_or", opcode::LOGICAL_OR),
    ] {
        v.push(unary_like(
            &format!("probe_{name}"),
            code,
            vec![t(&[2, 3], Bool), t(&[2, 3], Bool)],
            t(&[2, 3], Bool),
            none(),
        ));
    }
    v.push(unary_like(
        "probe_logical_not",
        opcode::LOGICAL_NOT,
        vec![t(&[6], Bool)],
        t(&[6], Bool),
        none(),
    ));
    v.push(unary_like(
        "probe_select_v2_f32",
        opcode::SELECT_V2,
        vec![t(&[2, 3], Bool), f32t(&[2, 3]), f32t(&[2, 3])],
        f32t(&[2, 3]),
        none(),
    ));
    v.push(unary_like(
        "probe_select_v2_i8_bcast",
        opcode::SELECT_V2,
        vec![
            t(&[1, 3], Bool),
            qt(&[2, 3], I8, 0.1, 0),
            qt(&[2, 3], I8, 0.1, 0),
        ],
        qt(&[2, 3], I8, 0.1, 0),
        none(),
    ));
    // Float unary math with no Init.
    for (name, code) in [
        ("floor", opcode::FLOOR),
        ("neg", opcode::NEG),
        ("sin", opcode::SIN),
        ("cos", opcode::COS),
        ("square", opcode::SQUARE),
        ("ceil", opcode::CEIL),
        ("round", opcode::ROUND),
    ] {
        v.push(unary_like(
            &format!("probe_{name}"),
            code,
            vec![f32t(&[2, 5])],
            f32t(&[2, 5]),
            none(),
        ));
    }
    for (name, code) in [
        ("floor_div", opcode::FLOOR_DIV),
        ("floor_mod", opcode::FLOOR_MOD),
    ] {
        v.push(unary_like(
            &format!("probe_{name}"),
            code,
            vec![f32t(&[2, 3]), f32t(&[2, 3])],
            f32t(&[2, 3]),
            none(),
        ));
    }
    v.push(unary_like(
        "probe_zeros_like_f32",
        opcode::ZEROS_LIKE,
        vec![f32t(&[3, 4])],
        f32t(&[3, 4]),
        none(),
    ));
    v.push(unary_like(
        "probe_zeros_like_i8",
        opcode::ZEROS_LIKE,
        vec![qt(&[3, 4], I8, 0.1, 0)],
        qt(&[3, 4], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "probe_fill_f32",
        opcode::FILL,
        vec![t(&[2], I32).i32s(&[2, 3]), f32t(&[])],
        f32t(&[2, 3]),
        none(),
    ));
    v.push(unary_like(
        "probe_fill_i8",
        opcode::FILL,
        vec![t(&[3], I32).i32s(&[2, 3, 4]), qt(&[], I8, 0.1, 0)],
        qt(&[2, 3, 4], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "probe_elu_f32",
        opcode::ELU,
        vec![f32t(&[2, 8])],
        f32t(&[2, 8]),
        none(),
    ));
    v.push(unary_like(
        "probe_elu_i8",
        opcode::ELU,
        vec![qt(&[2, 8], I8, 0.05, -4)],
        qt(&[2, 8], I8, 0.04, 30),
        none(),
    ));
    v.push(unary_like(
        "probe_reverse_v2",
        opcode::REVERSE_V2,
        vec![f32t(&[2, 3, 4]), t(&[1], I32).i32s(&[1])],
        f32t(&[2, 3, 4]),
        none(),
    ));
    for (tname, params, out) in [
        ("f32", f32t(&[3, 4]), f32t(&[2, 4])),
        ("i8", qt(&[3, 4, 5], I8, 0.1, 0), qt(&[2, 4, 5], I8, 0.1, 0)),
    ] {
        v.push(unary_like(
            &format!("probe_gather_nd_{tname}"),
            opcode::GATHER_ND,
            vec![params, t(&[2, 1], I32).i32s(&[2, 0])],
            out,
            none(),
        ));
    }
    // BATCH_MATMUL: a constant or variable right-hand side, each adjoint, int8, int16.
    let bmm = |adj_x: bool, adj_y: bool| OpOptions::BatchMatMul { adj_x, adj_y };
    let (lhs, lhs_t) = (f32t(&[1, 2, 3]), f32t(&[1, 3, 2]));
    let (rhs, rhs_t) = (f32t(&[1, 3, 4]), f32t(&[1, 4, 3]));
    v.push(unary_like(
        "probe_batch_matmul_f32",
        opcode::BATCH_MATMUL,
        vec![lhs.clone(), rhs.clone().random(1)],
        f32t(&[1, 2, 4]),
        bmm(false, false),
    ));
    v.push(unary_like(
        "probe_batch_matmul_f32_variable",
        opcode::BATCH_MATMUL,
        vec![lhs.clone(), rhs.clone()],
        f32t(&[1, 2, 4]),
        bmm(false, false),
    ));
    v.push(unary_like(
        "probe_batch_matmul_f32_adj_y",
        opcode::BATCH_MATMUL,
        vec![lhs.clone(), rhs_t.clone().random(2)],
        f32t(&[1, 2, 4]),
        bmm(false, true),
    ));
    v.push(unary_like(
        "probe_batch_matmul_f32_adj_x",
        opcode::BATCH_MATMUL,
        vec![lhs_t.clone(), rhs.clone().random(3)],
        f32t(&[1, 2, 4]),
        bmm(true, false),
    ));
    v.push(unary_like(
        "probe_batch_matmul_f32_adj_xy",
        opcode::BATCH_MATMUL,
        vec![lhs_t, rhs_t],
        f32t(&[1, 2, 4]),
        bmm(true, true),
    ));
    v.push(unary_like(
        "probe_batch_matmul_f32_4d",
        opcode::BATCH_MATMUL,
        vec![f32t(&[2, 3, 5, 6]), f32t(&[2, 3, 6, 7]).random(4)],
        f32t(&[2, 3, 5, 7]),
        bmm(false, false),
    ));
    v.push(unary_like(
        "probe_batch_matmul_i8",
        opcode::BATCH_MATMUL,
        vec![
            qt(&[1, 4, 8], I8, 0.05, 0),
            qt(&[1, 8, 16], I8, 0.02, 0).random(5),
        ],
        qt(&[1, 4, 16], I8, 0.1, 0),
        bmm(false, false),
    ));
    v.push(unary_like(
        "probe_batch_matmul_i8_adj_y",
        opcode::BATCH_MATMUL,
        vec![
            qt(&[1, 4, 8], I8, 0.05, 0),
            qt(&[1, 16, 8], I8, 0.02, 0).random(5),
        ],
        qt(&[1, 4, 16], I8, 0.1, 0),
        bmm(false, true),
    ));
    v.push(unary_like(
        "probe_batch_matmul_i8_large_rhs",
        opcode::BATCH_MATMUL,
        vec![
            qt(&[1, 4, 64], I8, 0.05, 0),
            qt(&[1, 64, 64], I8, 0.02, 0).random(9),
        ],
        qt(&[1, 4, 64], I8, 0.1, 0),
        bmm(false, false),
    ));
    v.push(unary_like(
        "probe_batch_matmul_i16",
        opcode::BATCH_MATMUL,
        vec![
            qt(&[1, 4, 8], I16, 0.001, 0),
            qt(&[1, 8, 16], I16, 0.001, 0),
        ],
        qt(&[1, 4, 16], I16, 0.002, 0),
        bmm(false, false),
    ));
    v.push(unary_like(
        "probe_cumsum_f32",
        opcode::CUMSUM,
        vec![f32t(&[2, 5]), t(&[1], I32).i32s(&[1])],
        f32t(&[2, 5]),
        none(),
    ));
    v.push(unary_like(
        "probe_cumsum_i8",
        opcode::CUMSUM,
        vec![qt(&[2, 5], I8, 0.05, 0), t(&[1], I32).i32s(&[1])],
        qt(&[2, 5], I8, 0.2, 0),
        none(),
    ));
    v.push(unary_like(
        "probe_broadcast_to",
        opcode::BROADCAST_TO,
        vec![f32t(&[1, 3]), t(&[2], I32).i32s(&[2, 3])],
        f32t(&[2, 3]),
        none(),
    ));
    v.push(unary_like(
        "probe_broadcast_args",
        opcode::BROADCAST_ARGS,
        vec![t(&[2], I32), t(&[2], I32)],
        t(&[2], I32),
        none(),
    ));
    v.push(unary_like(
        "probe_dynamic_update_slice",
        opcode::DYNAMIC_UPDATE_SLICE,
        vec![f32t(&[4, 4]), f32t(&[2, 2]), t(&[2], I32).i32s(&[1, 1])],
        f32t(&[4, 4]),
        none(),
    ));
    v.push(unary_like(
        "probe_slice",
        opcode::SLICE,
        vec![
            f32t(&[3, 4]),
            t(&[2], I32).i32s(&[1, 0]),
            t(&[2], I32).i32s(&[2, 4]),
        ],
        f32t(&[2, 4]),
        none(),
    ));
    v.push(unary_like(
        "probe_embedding_lookup_f32",
        opcode::EMBEDDING_LOOKUP,
        vec![t(&[2], I32), f32t(&[5, 3]).random(6)],
        f32t(&[2, 3]),
        none(),
    ));
    v.push(unary_like(
        "probe_embedding_lookup_i8",
        opcode::EMBEDDING_LOOKUP,
        vec![t(&[3], I32), qt(&[5, 2, 4], I8, 0.1, 0).random(7)],
        qt(&[3, 2, 4], I8, 0.1, 0),
        none(),
    ));
    for (name, code, input, out) in [
        (
            "depth_to_space",
            opcode::DEPTH_TO_SPACE,
            [1, 2, 2, 8],
            [1, 4, 4, 2],
        ),
        (
            "space_to_depth",
            opcode::SPACE_TO_DEPTH,
            [1, 4, 4, 2],
            [1, 2, 2, 8],
        ),
    ] {
        v.push(unary_like(
            &format!("probe_{name}_f32"),
            code,
            vec![f32t(&input)],
            f32t(&out),
            OpOptions::BlockSize { block_size: 2 },
        ));
        v.push(unary_like(
            &format!("probe_{name}_i8"),
            code,
            vec![qt(&input, I8, 0.1, 0)],
            qt(&out, I8, 0.1, 0),
            OpOptions::BlockSize { block_size: 2 },
        ));
    }
    v.push(unary_like(
        "probe_l2_normalization_f32",
        opcode::L2_NORMALIZATION,
        vec![f32t(&[1, 2, 2, 8])],
        f32t(&[1, 2, 2, 8]),
        none(),
    ));
    v.push(unary_like(
        "probe_l2_normalization_i8",
        opcode::L2_NORMALIZATION,
        vec![qt(&[1, 8], I8, 0.1, 0)],
        qt(&[1, 8], I8, 1.0 / 128.0, 0),
        none(),
    ));
    v.push(unary_like(
        "probe_l2_pool_2d",
        opcode::L2_POOL_2D,
        vec![f32t(&[1, 4, 4, 2])],
        f32t(&[1, 2, 2, 2]),
        OpOptions::Pool(microarena_core::read::ops::PoolOptions {
            padding: Padding::Valid,
            stride_w: 2,
            stride_h: 2,
            filter_w: 2,
            filter_h: 2,
            activation: Activation::None,
        }),
    ));
    for (tname, a, b, out) in [
        ("f32", f32t(&[2, 3]), f32t(&[2, 5]), f32t(&[2, 8])),
        (
            "i8",
            qt(&[1, 2, 3], I8, 0.1, 0),
            qt(&[1, 2, 4], I8, 0.1, 0),
            qt(&[1, 2, 7], I8, 0.1, 0),
        ),
    ] {
        let axis = if tname == "f32" { 1 } else { 2 };
        v.push(unary_like(
            &format!("probe_concatenation_{tname}"),
            opcode::CONCATENATION,
            vec![a, b],
            out,
            OpOptions::Concatenation {
                axis,
                activation: Activation::None,
            },
        ));
    }
    v.push(unary_like(
        "probe_concatenation_f32_three",
        opcode::CONCATENATION,
        vec![f32t(&[4, 1]), f32t(&[4, 2]), f32t(&[4, 3])],
        f32t(&[4, 6]),
        OpOptions::Concatenation {
            axis: 1,
            activation: Activation::None,
        },
    ));
    v.push(unary_like(
        "probe_reshape_f32",
        opcode::RESHAPE,
        vec![f32t(&[2, 3]), t(&[2], I32).i32s(&[3, 2])],
        f32t(&[3, 2]),
        none(),
    ));
    v.push(unary_like(
        "probe_reshape_i8",
        opcode::RESHAPE,
        vec![qt(&[1, 2, 2, 4], I8, 0.1, 0), t(&[2], I32).i32s(&[1, 16])],
        qt(&[1, 16], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "probe_transpose_f32",
        opcode::TRANSPOSE,
        vec![f32t(&[2, 3, 4]), t(&[3], I32).i32s(&[2, 0, 1])],
        f32t(&[4, 2, 3]),
        none(),
    ));
    v.push(unary_like(
        "probe_transpose_i8",
        opcode::TRANSPOSE,
        vec![
            qt(&[1, 2, 3, 4], I8, 0.1, 0),
            t(&[4], I32).i32s(&[0, 3, 1, 2]),
        ],
        qt(&[1, 4, 2, 3], I8, 0.1, 0),
        none(),
    ));
    v.push(unary_like(
        "probe_strided_slice",
        opcode::STRIDED_SLICE,
        vec![
            f32t(&[4, 4]),
            t(&[2], I32).i32s(&[0, 1]),
            t(&[2], I32).i32s(&[4, 3]),
            t(&[2], I32).i32s(&[2, 1]),
        ],
        f32t(&[2, 2]),
        OpOptions::StridedSlice(Default::default()),
    ));
    v.push(unary_like(
        "probe_reduce_all",
        opcode::REDUCE_ALL,
        vec![t(&[2, 3], Bool), t(&[1], I32).i32s(&[1])],
        t(&[2], Bool),
        OpOptions::Reducer { keep_dims: false },
    ));
    // Builtins TFLM does not register: the interpreter refuses them.
    v.push(unary_like(
        "probe_pow_unregistered",
        opcode::POW,
        vec![f32t(&[4]), f32t(&[4])],
        f32t(&[4]),
        none(),
    ));
    // TFLM's own custom kernels.
    let mut c = Case::new("probe_circular_buffer");
    let x = c.input(qt(&[1, 1, 1, 8], I8, 0.1, 0));
    let y = c.add(qt(&[1, 3, 1, 8], I8, 0.1, 0));
    c.ops.push(Op {
        code: opcode::CUSTOM,
        inputs: vec![x],
        outputs: vec![y],
        options: OpOptions::None,
        custom: Some(("CIRCULAR_BUFFER", Vec::new())),
        bias_type: None,
    });
    c.outputs.push(y);
    v.push(c);
    for (classes, boxes, detections) in [(3, 10, 5), (91, 64, 10)] {
        let mut c = Case::new(&format!("probe_detection_postprocess_{boxes}x{classes}"));
        let enc = c.input(f32t(&[1, boxes, 4]));
        let cls = c.input(f32t(&[1, boxes, classes + 1]));
        let anchors = c.add(f32t(&[boxes, 4]).random(8));
        let outs: Vec<i32> = [
            f32t(&[1, detections, 4]),
            f32t(&[1, detections]),
            f32t(&[1, detections]),
            f32t(&[1]),
        ]
        .into_iter()
        .map(|t| c.add(t))
        .collect();
        let options = flex_int_map(&[
            ("max_detections", i64::from(detections)),
            ("max_classes_per_detection", 1),
            ("detections_per_class", 100),
            ("num_classes", i64::from(classes)),
            ("use_regular_nms", 0),
            ("nms_score_threshold", 0),
            ("nms_iou_threshold", 1),
            ("y_scale", 10),
            ("x_scale", 10),
            ("h_scale", 5),
            ("w_scale", 5),
        ]);
        c.ops.push(Op {
            code: opcode::CUSTOM,
            inputs: vec![enc, cls, anchors],
            outputs: outs.clone(),
            options: OpOptions::None,
            custom: Some(("TFLite_Detection_PostProcess", options)),
            bias_type: None,
        });
        c.outputs.extend(outs);
        v.push(c);
    }
    v.append(&mut signal_probes());
    v
}

/// The Signal kernels whose state `cases()` does not reach.
fn signal_probes() -> Vec<Case> {
    use DType::{Bool, I16, I32};
    let mut v = Vec::new();
    let custom =
        |c: &mut Case, name: &'static str, ins: &[i32], outs: &[i32], options: &[(&str, i64)]| {
            c.ops.push(Op {
                code: opcode::CUSTOM,
                inputs: ins.to_vec(),
                outputs: outs.to_vec(),
                options: OpOptions::None,
                custom: Some((name, flex_int_map(options))),
                bias_type: None,
            });
            c.outputs.extend_from_slice(outs);
        };
    for (outer, frame, delay) in [(1, 16, 3), (3, 8, 5)] {
        let mut c = Case::new(&format!("probe_signal_delay_{outer}x{frame}_d{delay}"));
        let x = c.input(t(&[outer, frame], I16));
        let y = c.add(t(&[outer, frame], I16));
        custom(
            &mut c,
            "SignalDelay",
            &[x],
            &[y],
            &[("delay_length", delay)],
        );
        v.push(c);
    }
    for (outer, inner, size, step) in [(1, 32, 16, 8), (2, 24, 10, 4)] {
        let mut c = Case::new(&format!(
            "probe_signal_framer_{outer}x{inner}_{size}_{step}"
        ));
        let x = c.input(t(&[outer, inner], I16));
        let y = c.add(t(&[outer, inner / step as i32, size as i32], I16));
        let valid = c.add(t(&[], Bool));
        custom(
            &mut c,
            "SignalFramer",
            &[x],
            &[y, valid],
            &[("frame_size", size), ("frame_step", step), ("prefill", 0)],
        );
        v.push(c);
    }
    for (ty, code) in [(DType::I16, 7), (DType::F32, 0)] {
        let mut c = Case::new(&format!("probe_signal_overlap_add_{}", ty.name()));
        let x = c.input(t(&[2, 3, 16], ty));
        let y = c.add(t(&[2, 8], ty));
        custom(
            &mut c,
            "SignalOverlapAdd",
            &[x],
            &[y],
            &[("T", code), ("frame_step", 8)],
        );
        v.push(c);
    }
    let mut c = Case::new("probe_signal_stacker");
    let x = c.input(t(&[8], I16));
    let y = c.add(t(&[40], I16));
    let valid = c.add(t(&[], Bool));
    custom(
        &mut c,
        "SignalStacker",
        &[x],
        &[y, valid],
        &[
            ("num_channels", 8),
            ("stacker_left_context", 3),
            ("stacker_right_context", 1),
            ("stacker_step", 1),
        ],
    );
    v.push(c);
    for (ty, code) in [(DType::I16, 7), (I32, 2), (DType::F32, 0)] {
        let mut c = Case::new(&format!("probe_signal_irfft_{}", ty.name()));
        let x = c.input(t(&[2, 66], ty));
        let y = c.add(t(&[2, 64], ty));
        custom(
            &mut c,
            "SignalIrfft",
            &[x],
            &[y],
            &[("T", code), ("fft_length", 64)],
        );
        v.push(c);
    }
    for (ty, code) in [(I32, 2), (DType::F32, 0)] {
        let mut c = Case::new(&format!("probe_signal_rfft_{}", ty.name()));
        let x = c.input(t(&[2, 64], ty));
        let y = c.add(t(&[2, 66], ty));
        custom(
            &mut c,
            "SignalRfft",
            &[x],
            &[y],
            &[("T", code), ("fft_length", 64)],
        );
        v.push(c);
    }
    v.extend(mve_probes());
    v
}

/// CMSIS-NN's MVE (Helium) branches the other probes leave at the DSP size: 1×N convolutions
/// (one input row), im2col columns that are not whole 16-byte registers, the single-input-channel
/// depthwise that runs as a conv, the block depthwise buffer, FULLY_CONNECTED with a variable
/// filter (column sums in scratch, not the tail) and a reverse-conv TRANSPOSE_CONV.
fn mve_probes() -> Vec<Case> {
    use DType::{I8, I32};
    let mut v = Vec::new();
    let conv_i8 = |name: &str, code: u8, input: [i32; 4], filter: [i32; 4], opts: OpOptions| {
        let out_c = if code == opcode::CONV_2D {
            filter[0]
        } else {
            filter[3]
        };
        let (pad, sw, sh) = match &opts {
            OpOptions::Conv(c) => (c.padding, c.stride_w, c.stride_h),
            _ => unreachable!("a conv probe"),
        };
        let oh = microarena_image::geometry::out_size(pad, input[1], filter[1], sh, 1);
        let ow = microarena_image::geometry::out_size(pad, input[2], filter[2], sw, 1);
        unary_like(
            name,
            code,
            vec![
                qt(&input, I8, 0.02, -3),
                qt(&filter, I8, 0.007, 0).random(31),
                qt(&[out_c], I32, 0.02 * 0.007, 0).random(32),
            ],
            qt(&[1, oh, ow, out_c], I8, 0.09, 2),
            opts,
        )
    };
    let c = opcode::CONV_2D;
    let dw = opcode::DEPTHWISE_CONV_2D;
    for (name, code, input, filter, opts) in [
        // One row, 1×3 SAME: padding 1 each side.
        (
            "probe_mve_conv_i8_1xn_same",
            c,
            [1, 1, 16, 4],
            [8, 1, 3, 4],
            conv(Padding::Same, (1, 1), (1, 1), 1, Activation::None),
        ),
        // One row, 1×4 SAME: odd total padding, the right side gets the extra column.
        (
            "probe_mve_conv_i8_1xn_asym",
            c,
            [1, 1, 10, 4],
            [4, 1, 4, 4],
            conv(Padding::Same, (1, 1), (1, 1), 1, Activation::None),
        ),
        // One row, 1×5 VALID stride 2: no padding.
        (
            "probe_mve_conv_i8_1xn_valid_s2",
            c,
            [1, 1, 17, 8],
            [8, 1, 5, 8],
            conv(Padding::Valid, (2, 2), (1, 1), 1, Activation::None),
        ),
        // One row but stride·C_in not a multiple of 4: the general path.
        (
            "probe_mve_conv_i8_1xn_odd",
            c,
            [1, 1, 12, 3],
            [4, 1, 3, 3],
            conv(Padding::Same, (1, 1), (1, 1), 1, Activation::Relu),
        ),
        // 3×3×8 = 72 columns: DSP 4·72, MVE 4·80.
        (
            "probe_mve_conv_i8_cols72",
            c,
            [1, 6, 6, 8],
            [4, 3, 3, 8],
            conv(Padding::Same, (1, 1), (1, 1), 1, Activation::None),
        ),
        // One input channel, eight outputs: a conv on MVE.
        (
            "probe_mve_dw_i8_one_in_ch",
            dw,
            [1, 6, 6, 1],
            [1, 3, 3, 8],
            conv(Padding::Same, (1, 1), (1, 1), 8, Activation::None),
        ),
        (
            "probe_mve_dw_i8_one_in_ch_5x5_s2",
            dw,
            [1, 9, 9, 1],
            [1, 5, 5, 4],
            conv(Padding::Valid, (2, 2), (1, 1), 4, Activation::None),
        ),
        // One channel in and out: the block buffer on MVE, the 3×3 kernel (none) on DSP.
        (
            "probe_mve_dw_i8_single_channel",
            dw,
            [1, 6, 6, 1],
            [1, 3, 3, 1],
            conv(Padding::Same, (1, 1), (1, 1), 1, Activation::None),
        ),
        (
            "probe_mve_dw_i8_5x5",
            dw,
            [1, 8, 8, 4],
            [1, 5, 5, 4],
            conv(Padding::Same, (1, 1), (1, 1), 1, Activation::None),
        ),
    ] {
        v.push(conv_i8(name, code, input, filter, opts));
    }
    // A variable filter (a graph input): CMSIS-NN's MVE column sums cannot be precomputed.
    v.push(unary_like(
        "probe_mve_fc_i8_variable_filter",
        opcode::FULLY_CONNECTED,
        vec![
            qt(&[2, 24], I8, 0.02, -3),
            qt(&[12, 24], I8, 0.007, 0),
            qt(&[12], I32, 0.02 * 0.007, 0).random(33),
        ],
        qt(&[2, 12], I8, 0.09, 2),
        OpOptions::FullyConnected {
            activation: Activation::None,
            keep_num_dims: false,
            asymmetric_quantize_inputs: false,
        },
    ));
    // 20 input channels, stride 2: the reverse conv, 3×3×20 = 180 columns (DSP 720, MVE 768).
    let oshape = [1, 8, 8, 4];
    v.push(unary_like(
        "probe_mve_transpose_conv_i8_c20",
        opcode::TRANSPOSE_CONV,
        vec![
            t(&[4], I32).i32s(&oshape),
            qt(&[4, 3, 3, 20], I8, 0.007, 0).random(34),
            qt(&[1, 4, 4, 20], I8, 0.02, -3),
        ],
        qt(&oshape, I8, 0.09, 2),
        conv(Padding::Same, (2, 2), (1, 1), 1, Activation::None),
    ));
    v
}

/// Probes that are whole models of several ops or subgraphs: control flow,
/// resource variables (a stateful streaming model's pattern), SVDF, LSTM.
pub fn probe_models() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("probe_if", if_model()),
        ("probe_while", while_model()),
        ("probe_call_once_variables", call_once_model(DType::F32)),
        ("probe_call_once_variables_i8", call_once_model(DType::I8)),
        ("probe_svdf_i8", svdf_model(Some(DType::I16))),
        ("probe_svdf_f32", svdf_model(None)),
        ("probe_lstm_i8", lstm_model(true)),
        ("probe_lstm_f32", lstm_model(false)),
    ]
}

fn if_model() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let cond = b.tensor(g, "cond", &[1], DType::Bool).id();
    let x = b.tensor(g, "x", &[4, 8], DType::F32).id();
    let y = b.tensor(g, "y", &[4, 8], DType::F32).id();
    b.op(g, BuiltinOp::IF, &[cond, x], &[y])
        .options(OpOptions::If {
            then_subgraph: 1,
            else_subgraph: 2,
        });
    b.inputs(g, &[cond, x]).outputs(g, &[y]);
    for (name, op) in [("then", BuiltinOp::ADD), ("else", BuiltinOp::MUL)] {
        let s = b.named_subgraph(name);
        let a = b.tensor(s, "a", &[4, 8], DType::F32).id();
        let r = b.tensor(s, "r", &[4, 8], DType::F32).id();
        b.op(s, op, &[a, a], &[r])
            .options(elementwise(Activation::None));
        b.inputs(s, &[a]).outputs(s, &[r]);
    }
    b.build().expect("a valid IF probe")
}

fn while_model() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let i = b.tensor(g, "i", &[1], DType::I32).id();
    let x = b.tensor(g, "x", &[16], DType::F32).id();
    let i_out = b.tensor(g, "i_out", &[1], DType::I32).id();
    let x_out = b.tensor(g, "x_out", &[16], DType::F32).id();
    b.op(g, BuiltinOp::WHILE, &[i, x], &[i_out, x_out])
        .options(OpOptions::While {
            cond_subgraph: 1,
            body_subgraph: 2,
        });
    b.inputs(g, &[i, x]).outputs(g, &[i_out, x_out]);
    let c = b.named_subgraph("cond");
    let ci = b.tensor(c, "i", &[1], DType::I32).id();
    let cx = b.tensor(c, "x", &[16], DType::F32).id();
    let limit = b.tensor(c, "limit", &[1], DType::I32).data_i32(&[3]).id();
    let more = b.tensor(c, "more", &[1], DType::Bool).id();
    b.op(c, BuiltinOp(i32::from(opcode::LESS)), &[ci, limit], &[more]);
    b.inputs(c, &[ci, cx]).outputs(c, &[more]);
    let body = b.named_subgraph("body");
    let bi = b.tensor(body, "i", &[1], DType::I32).id();
    let bx = b.tensor(body, "x", &[16], DType::F32).id();
    let one = b.tensor(body, "one", &[1], DType::I32).data_i32(&[1]).id();
    let bi2 = b.tensor(body, "i2", &[1], DType::I32).id();
    let bx2 = b.tensor(body, "x2", &[16], DType::F32).id();
    b.op(body, BuiltinOp::ADD, &[bi, one], &[bi2])
        .options(elementwise(Activation::None));
    b.op(body, BuiltinOp::ADD, &[bx, bx], &[bx2])
        .options(elementwise(Activation::None));
    b.inputs(body, &[bi, bx]).outputs(body, &[bi2, bx2]);
    b.build().expect("a valid WHILE probe")
}

/// A stateful streaming model as converters write it: CALL_ONCE runs an
/// init subgraph that assigns zeros to two resource variables; the main
/// subgraph reads them, adds the input, and assigns the sums back.
fn call_once_model(dtype: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let act = |b: &mut ModelBuilder, s: usize, name: &str, shape: &[i32]| {
        let h = b.tensor(s, name, shape, dtype);
        if dtype == DType::I8 {
            h.quant(0.1, 0).id()
        } else {
            h.id()
        }
    };
    let x = act(&mut b, g, "x", &[1, 24]);
    b.op(g, BuiltinOp::CALL_ONCE, &[], &[])
        .options(OpOptions::CallOnce { init_subgraph: 1 });
    let mut outs = Vec::new();
    for (k, shape) in [[1, 24], [1, 24]].iter().enumerate() {
        let name = format!("state{k}");
        let r = b.tensor(g, &format!("res{k}"), &[], DType::Resource).id();
        b.op(g, BuiltinOp::VAR_HANDLE, &[], &[r])
            .options(OpOptions::VarHandle {
                container: String::new(),
                shared_name: name,
            });
        let s = act(&mut b, g, &format!("read{k}"), shape);
        b.op(g, BuiltinOp::READ_VARIABLE, &[r], &[s]);
        let y = act(&mut b, g, &format!("sum{k}"), shape);
        b.op(g, BuiltinOp::ADD, &[s, x], &[y])
            .options(elementwise(Activation::None));
        b.op(g, BuiltinOp::ASSIGN_VARIABLE, &[r, y], &[]);
        outs.push(y);
    }
    b.inputs(g, &[x]).outputs(g, &outs);
    let init = b.named_subgraph("init");
    for k in 0..2 {
        let r = b
            .tensor(init, &format!("res{k}"), &[], DType::Resource)
            .id();
        b.op(init, BuiltinOp::VAR_HANDLE, &[], &[r])
            .options(OpOptions::VarHandle {
                container: String::new(),
                shared_name: format!("state{k}"),
            });
        let bytes = 24 * dtype.size_bytes().unwrap_or(4) as usize;
        let h = b.tensor(init, &format!("zeros{k}"), &[1, 24], dtype);
        let zeros = if dtype == DType::I8 {
            h.quant(0.1, 0)
        } else {
            h
        };
        let zeros = zeros.data(&vec![0; bytes]).id();
        b.op(init, BuiltinOp::ASSIGN_VARIABLE, &[r, zeros], &[]);
    }
    b.build().expect("a valid CALL_ONCE probe")
}

/// An SVDF probe: int8 with `Some(state type)` (int16, or int8 with zero
/// points and a bias that are not 0), float32 with `None`.
fn svdf_model(int_state: Option<DType>) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let int8 = int_state.is_some();
    let (act, state_t) = match int_state {
        Some(s) => (DType::I8, s),
        None => (DType::F32, DType::F32),
    };
    // Zero points and bias that are not 0 where TFLM allows them (int8 state).
    let (zp, st_zp, bias_bytes) = if state_t == DType::I8 {
        let bias: Vec<u8> = [37i32, -5, 1200]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        (-3, 4, bias)
    } else {
        (0, 0, vec![0; 12])
    };
    // batch 2, input 8, 6 filters, rank 2 → 3 units, memory 4.
    let x = b.tensor(g, "x", &[2, 8], act).quant(0.5, zp).id();
    let wf = b
        .tensor(g, "wf", &[6, 8], act)
        .quant(0.1, 0)
        .data(&random_bytes(&[6, 8], act, 11))
        .id();
    let wt = b
        .tensor(g, "wt", &[6, 4], state_t)
        .quant(0.1, 0)
        .data(&random_bytes(&[6, 4], state_t, 12))
        .id();
    let bias_t = if int8 { DType::I32 } else { DType::F32 };
    // TFLM wants the bias scale to be the state's times the time weights'.
    let bias = b
        .tensor(g, "b", &[3], bias_t)
        .quant(0.01, 0)
        .data(&bias_bytes)
        .id();
    let state = b
        .tensor(g, "state", &[2, 24], state_t)
        .quant(0.1, st_zp)
        .variable()
        .id();
    let y = b.tensor(g, "y", &[2, 3], act).quant(0.5, zp).id();
    b.op(g, BuiltinOp::SVDF, &[x, wf, wt, bias, state], &[y])
        .svdf_options(2, Activation::None);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().expect("a valid SVDF probe")
}

/// UNIDIRECTIONAL_SEQUENCE_LSTM over batch 2, 5 steps, 8 features, 16 units.
pub fn lstm_model(int8: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let act = if int8 { DType::I8 } else { DType::F32 };
    let x = b.tensor(g, "x", &[2, 5, 8], act).quant(0.05, 0).id();
    let mut w = Vec::new();
    for k in 0..8 {
        let cols = if k < 4 { 8 } else { 16 };
        w.push(
            b.tensor(g, &format!("w{k}"), &[16, cols], act)
                .quant(0.02, 0)
                .data(&random_bytes(&[16, cols], act, 20 + k as u64))
                .id(),
        );
    }
    let bias_type = if int8 { DType::I32 } else { DType::F32 };
    let bias: Vec<i32> = (0..4)
        .map(|k| {
            b.tensor(g, &format!("b{k}"), &[16], bias_type)
                .data(&[0; 64])
                .id()
        })
        .collect();
    let h = b
        .tensor(g, "h", &[2, 16], act)
        .quant(0.01, 0)
        .variable()
        .id();
    let cell = if int8 { DType::I16 } else { DType::F32 };
    let c = b
        .tensor(g, "c", &[2, 16], cell)
        .quant(1.0 / 2048.0, 0)
        .variable()
        .id();
    let y = b.tensor(g, "y", &[2, 5, 16], act).quant(0.01, 0).id();
    let none = -1;
    let inputs = [
        x, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], none, none, none, bias[0], bias[1],
        bias[2], bias[3], none, none, h, c, none, none, none, none,
    ];
    b.op(g, BuiltinOp::UNIDIRECTIONAL_SEQUENCE_LSTM, &inputs, &[y])
        .lstm_options(microarena_core::read::ops::LstmOptions {
            activation: Activation::Tanh,
            cell_clip: 0.0,
            proj_clip: 0.0,
            time_major: false,
            asymmetric_quantize_inputs: false,
        });
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.build().expect("a valid LSTM probe")
}

pub fn networks() -> Vec<(&'static str, &'static str, Vec<u8>)> {
    use microarena_core::build::example;
    vec![
        (
            "net_mobilenet_v1_025_96",
            "network:MobileNet-v1 0.25 96x96",
            example::mobilenet_v1_025_96_int8(),
        ),
        (
            "net_mobilenet_v2_96",
            "network:MobileNet-v2 1.0 96x96",
            example::mobilenet_v2_int8(96),
        ),
        (
            "net_mobilenet_v2_224",
            "network:MobileNet-v2 1.0 224x224",
            example::mobilenet_v2_int8(224),
        ),
        (
            "net_rp2040_cnn",
            "network:RP2040 CNN",
            example::rp2040_cnn(),
        ),
        (
            "net_rp2040_anomaly",
            "network:RP2040 1-D CNN + dense",
            example::rp2040_anomaly(),
        ),
        ("net_demo", "network:runtime demo", example::demo_model()),
        (
            "net_branchy_float",
            "network:four float FC branches",
            example::branchy_float(),
        ),
    ]
}

/// Deterministic inputs for a model's graph inputs, from their types and shapes.
/// A model with several subgraphs for verify-kernels: IF, WHILE, CALL_ONCE
/// with resource variables, nested calls. `invokes`: how many times both
/// sides invoke it (same inputs each time) before the outputs are compared,
/// so a stateful model's carried state is checked too.
#[derive(Debug)]
pub struct ControlCase {
    pub name: &'static str,
    pub ops: &'static str,
    pub model: Vec<u8>,
    pub invokes: u32,
}

/// The control-flow and resource-variable cases.
pub fn control_flow_cases() -> Vec<ControlCase> {
    let case = |name, ops, model, invokes| ControlCase {
        name,
        ops,
        model,
        invokes,
    };
    vec![
        case(
            "cf_call_once_stream_f32",
            "CALL_ONCE+VAR_HANDLE+READ_VARIABLE+ADD+ASSIGN_VARIABLE",
            streaming_model(DType::F32),
            3,
        ),
        case(
            "cf_call_once_stream_f32_once",
            "CALL_ONCE+VAR_HANDLE+READ_VARIABLE+ADD+ASSIGN_VARIABLE",
            streaming_model(DType::F32),
            1,
        ),
        case(
            "cf_call_once_stream_i8",
            "CALL_ONCE+VAR_HANDLE+READ_VARIABLE+ADD+ASSIGN_VARIABLE",
            streaming_model(DType::I8),
            2,
        ),
        case(
            "cf_call_once_zeros_f32",
            "CALL_ONCE+VAR_HANDLE+READ_VARIABLE+ADD+ASSIGN_VARIABLE",
            call_once_model(DType::F32),
            2,
        ),
        case(
            "cf_call_once_zeros_i8",
            "CALL_ONCE+VAR_HANDLE+READ_VARIABLE+ADD+ASSIGN_VARIABLE",
            call_once_model(DType::I8),
            2,
        ),
        case("cf_if_then", "IF(ADD|MUL)", if_const_model(true), 1),
        case("cf_if_else", "IF(ADD|MUL)", if_const_model(false), 1),
        case("cf_if_input", "IF(ADD|MUL)", if_model(), 1),
        case(
            "cf_while_count",
            "WHILE(LESS; ADD,ADD)",
            while_count_model(false),
            1,
        ),
        case(
            "cf_while_nested_if",
            "WHILE(LESS; ADD,IF(ADD))",
            while_count_model(true),
            1,
        ),
        // SVDF's state carried over three invokes (batch 2, rank 2).
        case(
            "state_svdf_i8_state16",
            "SVDF (int16 state)",
            svdf_model(Some(DType::I16)),
            3,
        ),
        case(
            "state_svdf_i8_state8",
            "SVDF (int8 state, zero points)",
            svdf_model(Some(DType::I8)),
            3,
        ),
        case("state_svdf_f32", "SVDF (float32)", svdf_model(None), 3),
    ]
}

/// CALL_ONCE assigns 0.75 (int8: 7 at scale 0.1) to "acc"; each invoke
/// adds its input to it: after n invokes the output is the start plus n
/// inputs.
fn streaming_model(dtype: DType) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    fn q(h: TensorHandle<'_>, dtype: DType) -> TensorHandle<'_> {
        if dtype == DType::I8 {
            h.quant(0.1, -3)
        } else {
            h
        }
    }
    let g = b.named_subgraph("main");
    let x = q(b.tensor(g, "x", &[1, 10], dtype), dtype).id();
    b.op(g, BuiltinOp::CALL_ONCE, &[], &[])
        .options(OpOptions::CallOnce { init_subgraph: 1 });
    let handle = |b: &mut ModelBuilder, s: usize| {
        let r = b.tensor(s, "acc_handle", &[], DType::Resource).id();
        b.op(s, BuiltinOp::VAR_HANDLE, &[], &[r])
            .options(OpOptions::VarHandle {
                container: String::new(),
                shared_name: "acc".into(),
            });
        r
    };
    let r = handle(&mut b, g);
    let s = q(b.tensor(g, "acc", &[1, 10], dtype), dtype).id();
    b.op(g, BuiltinOp::READ_VARIABLE, &[r], &[s]);
    let y = q(b.tensor(g, "sum", &[1, 10], dtype), dtype).id();
    b.op(g, BuiltinOp::ADD, &[s, x], &[y])
        .options(elementwise(Activation::None));
    b.op(g, BuiltinOp::ASSIGN_VARIABLE, &[r, y], &[]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let init = b.named_subgraph("init");
    let r = handle(&mut b, init);
    let start = if dtype == DType::I8 {
        vec![4u8; 10]
    } else {
        [0.75f32; 10].iter().flat_map(|v| v.to_le_bytes()).collect()
    };
    let v = q(b.tensor(init, "start", &[1, 10], dtype), dtype)
        .data(&start)
        .id();
    b.op(init, BuiltinOp::ASSIGN_VARIABLE, &[r, v], &[]);
    b.build().expect("a valid streaming model")
}

/// IF on a constant condition: `then` (ADD a a) or `else` (MUL a a).
fn if_const_model(taken: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let cond = b
        .tensor(g, "cond", &[1], DType::Bool)
        .data(&[u8::from(taken)])
        .id();
    let x = b.tensor(g, "x", &[3, 4], DType::F32).id();
    let y = b.tensor(g, "y", &[3, 4], DType::F32).id();
    b.op(g, BuiltinOp::IF, &[cond, x], &[y])
        .options(OpOptions::If {
            then_subgraph: 1,
            else_subgraph: 2,
        });
    b.inputs(g, &[x]).outputs(g, &[y]);
    for (name, op) in [("then", BuiltinOp::ADD), ("else", BuiltinOp::MUL)] {
        let s = b.named_subgraph(name);
        let a = b.tensor(s, "a", &[3, 4], DType::F32).id();
        let r = b.tensor(s, "r", &[3, 4], DType::F32).id();
        b.op(s, op, &[a, a], &[r])
            .options(elementwise(Activation::None));
        b.inputs(s, &[a]).outputs(s, &[r]);
    }
    b.build().expect("a valid IF model")
}

/// WHILE i < 4 (i a constant 0): i += 1, x += x; `nested` doubles x in an
/// IF (constant true) inside the body.
fn while_count_model(nested: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let i = b.tensor(g, "i", &[1], DType::I32).data_i32(&[0]).id();
    let x = b.tensor(g, "x", &[6], DType::F32).id();
    let i_out = b.tensor(g, "i_out", &[1], DType::I32).id();
    let x_out = b.tensor(g, "x_out", &[6], DType::F32).id();
    b.op(g, BuiltinOp::WHILE, &[i, x], &[i_out, x_out])
        .options(OpOptions::While {
            cond_subgraph: 1,
            body_subgraph: 2,
        });
    b.inputs(g, &[x]).outputs(g, &[i_out, x_out]);
    let c = b.named_subgraph("cond");
    let ci = b.tensor(c, "i", &[1], DType::I32).id();
    let cx = b.tensor(c, "x", &[6], DType::F32).id();
    let limit = b.tensor(c, "limit", &[1], DType::I32).data_i32(&[4]).id();
    let more = b.tensor(c, "more", &[1], DType::Bool).id();
    b.op(c, BuiltinOp(i32::from(opcode::LESS)), &[ci, limit], &[more]);
    b.inputs(c, &[ci, cx]).outputs(c, &[more]);
    let body = b.named_subgraph("body");
    let bi = b.tensor(body, "i", &[1], DType::I32).id();
    let bx = b.tensor(body, "x", &[6], DType::F32).id();
    let one = b.tensor(body, "one", &[1], DType::I32).data_i32(&[1]).id();
    let bi2 = b.tensor(body, "i2", &[1], DType::I32).id();
    let bx2 = b.tensor(body, "x2", &[6], DType::F32).id();
    b.op(body, BuiltinOp::ADD, &[bi, one], &[bi2])
        .options(elementwise(Activation::None));
    if nested {
        let yes = b.tensor(body, "yes", &[1], DType::Bool).data(&[1]).id();
        b.op(body, BuiltinOp::IF, &[yes, bx], &[bx2])
            .options(OpOptions::If {
                then_subgraph: 3,
                else_subgraph: 3,
            });
        let s = b.named_subgraph("double");
        let a = b.tensor(s, "a", &[6], DType::F32).id();
        let r = b.tensor(s, "r", &[6], DType::F32).id();
        b.op(s, BuiltinOp::ADD, &[a, a], &[r])
            .options(elementwise(Activation::None));
        b.inputs(s, &[a]).outputs(s, &[r]);
    } else {
        b.op(body, BuiltinOp::ADD, &[bx, bx], &[bx2])
            .options(elementwise(Activation::None));
    }
    b.inputs(body, &[bi, bx]).outputs(body, &[bi2, bx2]);
    b.build().expect("a valid WHILE model")
}

fn inputs_of(name: &str, model: &[u8]) -> Vec<Vec<u8>> {
    let m = microarena_core::read::model::Model::parse(model).expect("a valid network");
    let sg = m.main();
    sg.inputs
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let t = &sg.tensors[i as usize];
            let seed = name
                .bytes()
                .fold(17u64, |h, c| h.wrapping_mul(31).wrapping_add(u64::from(c)))
                + k as u64;
            random_bytes(&t.shape, t.dtype, seed)
        })
        .collect()
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let probes_only = args.first().is_some_and(|a| a == "--probes");
    if probes_only {
        args.remove(0);
    }
    let dir = args
        .first()
        .cloned()
        .expect("usage: kernel_cases [--probes] OUT_DIR");
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir).expect("create the output directory");
    let mut tsv = String::new();
    let mut write_n =
        |name: &str, ops: &str, model: &[u8], inputs: &[Vec<u8>], ulps: u32, invokes: u32| {
            std::fs::write(dir.join(format!("{name}.tflite")), model).expect("write model");
            for (k, bytes) in inputs.iter().enumerate() {
                std::fs::write(dir.join(format!("{name}.in{k}.bin")), bytes).expect("write input");
            }
            let _ = writeln!(tsv, "{name}\t{ops}\t{}\t{ulps}\t{invokes}", inputs.len());
        };
    let mut write = |name: &str, ops: &str, model: &[u8], inputs: &[Vec<u8>], ulps: u32| {
        write_n(name, ops, model, inputs, ulps, 1)
    };
    if probes_only {
        for case in probes() {
            let (model, inputs) = case.build();
            write(&case.name, &case.ops_text(), &model, &inputs, 0);
        }
        for (name, model) in probe_models() {
            let inputs = inputs_of(name, &model);
            write(name, "probe", &model, &inputs, 0);
        }
        for (name, model) in ethos_u_models() {
            let inputs = inputs_of(&name, &model);
            write(&name, "probe", &model, &inputs, 0);
        }
        std::fs::write(dir.join("cases.tsv"), tsv).expect("write cases.tsv");
        return;
    }
    for case in cases().into_iter().chain(output_cases()) {
        let (model, inputs) = case.build();
        write(
            &case.name,
            &case.ops_text(),
            &model,
            &inputs,
            case.libm_ulps,
        );
    }
    for (name, ops, model) in networks() {
        let inputs = inputs_of(name, &model);
        write(name, ops, &model, &inputs, 0);
    }
    for c in control_flow_cases() {
        let inputs = inputs_of(c.name, &c.model);
        write_n(c.name, c.ops, &c.model, &inputs, 0, c.invokes);
    }
    std::fs::write(dir.join("cases.tsv"), tsv).expect("write cases.tsv");
}

// ---- Ethos-U: Vela's `ethos-u` custom operator (TFLM `kernels/ethos_u/ethosu.cc`), in the
// layout Vela 3.x writes (person_detect_vela.tflite): inputs command stream (uint8 constant),
// weights ("flash", uint8 constant), scratch and fast scratch (uint8, planned), then the data
// inputs; custom options a flexbuffer int8 1 (CO_TYPE_ETHOSU); the OfflineMemoryAllocation
// metadata as Vela writes it (version word 0). Each pattern with Vela's plan and without any.

const CO_ETHOSU: [u8; 3] = [0x01, 0x04, 0x01];

/// Metadata "OfflineMemoryAllocation" exactly as Vela writes it (version word 0).
pub fn vela_plan(b: &mut ModelBuilder, offsets: &[i32]) {
    let mut words = vec![0i32, 1, offsets.len() as i32];
    words.extend_from_slice(offsets);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    b.metadata("OfflineMemoryAllocation", &bytes);
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

struct M {
    b: ModelBuilder,
    g: usize,
    /// offline offset per tensor, in tensor order
    plan: Vec<i32>,
}

impl M {
    fn new(desc: &str) -> M {
        let mut b = ModelBuilder::new();
        b.description(desc);
        let g = b.subgraph();
        M {
            b,
            g,
            plan: Vec::new(),
        }
    }
    fn i8(&mut self, name: &str, shape: &[i32], off: i32) -> i32 {
        self.plan.push(off);
        self.b
            .tensor(self.g, name, shape, DType::I8)
            .quant(0.05, -3)
            .id()
    }
    fn i8q(&mut self, name: &str, shape: &[i32], off: i32, s: f32, zp: i64) -> i32 {
        self.plan.push(off);
        self.b
            .tensor(self.g, name, shape, DType::I8)
            .quant(s, zp)
            .id()
    }
    fn u8c(&mut self, name: &str, n: usize, seed: u8) -> i32 {
        self.plan.push(-1);
        self.b
            .tensor(self.g, name, &[n as i32], DType::U8)
            .data(&bytes(n, seed))
            .id()
    }
    fn u8s(&mut self, name: &str, n: usize, off: i32) -> i32 {
        self.plan.push(off);
        self.b.tensor(self.g, name, &[n as i32], DType::U8).id()
    }
    fn i32c(&mut self, name: &str, v: &[i32]) -> i32 {
        self.plan.push(-1);
        self.b
            .tensor(self.g, name, &[v.len() as i32], DType::I32)
            .data_i32(v)
            .id()
    }
    fn ethos(&mut self, ins: &[i32], outs: &[i32]) {
        self.b
            .custom_op(self.g, "ethos-u", ins, outs)
            .custom_options(&CO_ETHOSU);
    }
    fn io(&mut self, ins: &[i32], outs: &[i32]) {
        self.b.inputs(self.g, ins);
        self.b.outputs(self.g, outs);
    }
    /// (with Vela's offline plan, without any metadata)
    fn finish(self) -> (Vec<u8>, Vec<u8>) {
        let mut with = self.b.clone();
        vela_plan(&mut with, &self.plan);
        (with.build().unwrap(), self.b.build().unwrap())
    }
}

/// The Ethos-U probes: numbers of data inputs and outputs (0 to 6), two NPU ops sharing or
/// not their scratch, CPU ops around and between them, a fast scratch smaller or larger than
/// the scratch, a partly online plan, the builder's own plan word and old Vela's `[0]` shapes.
pub fn ethos_u_models() -> Vec<(String, Vec<u8>)> {
    let mut models: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |name: &str, m: M| {
        let (p, n) = m.finish();
        models.push((format!("probe_eu_{name}_plan"), p));
        models.push((format!("probe_eu_{name}_noplan"), n));
    };

    // 1 in / 1 out: person_detect_vela's layout in small (tensor order, names,
    // offsets [0,-1,-1,0,0,0]); sizes not multiples of 16.
    {
        let mut m = M::new("Vela 3.11.0 Optimised");
        let o = m.i8("MobilenetV1/Predictions/Reshape_1", &[1, 2], 0);
        let c = m.u8c("_split_1_command_stream", 100, 1);
        let f = m.u8c("_split_1_flash", 240, 2);
        let s = m.u8s("_split_1_scratch", 1000, 0);
        let sf = m.u8s("_split_1_scratch_fast", 1000, 0);
        let i = m.i8("input", &[1, 8, 8, 1], 0);
        m.ethos(&[c, f, s, sf, i], &[o]);
        m.io(&[i], &[o]);
        add("1x1", m);
    }
    // 2 real inputs / 3 outputs: 6 op inputs + 3 outputs = 9 base addresses.
    {
        let mut m = M::new("Vela-pattern 2x3");
        let oa = m.i8("Identity", &[1, 4], 320);
        let ob = m.i8("Identity_1", &[1, 3], 336);
        let oc = m.i8("Identity_2", &[1, 5, 5, 2], 352);
        let c = m.u8c("_split_1_command_stream", 64, 3);
        let f = m.u8c("_split_1_flash", 32, 4);
        let s = m.u8s("_split_1_scratch", 800, 0);
        let sf = m.u8s("_split_1_scratch_fast", 800, 0);
        let ia = m.i8("in_a", &[1, 10, 10, 3], 0);
        let ib = m.i8("in_b", &[1, 7], 304);
        m.ethos(&[c, f, s, sf, ia, ib], &[oa, ob, oc]);
        m.io(&[ia, ib], &[oa, ob, oc]);
        add("2x3", m);
    }
    // 6 real inputs / 2 outputs: 10 + 2 = 12 base addresses (> 8: Eval clamps
    // to 8, Prepare still requests 12).
    {
        let mut m = M::new("Vela-pattern 6x2");
        let o1 = m.i8("Identity", &[1, 24], 96);
        let o2 = m.i8("Identity_1", &[1, 40], 128);
        let c = m.u8c("_split_1_command_stream", 48, 5);
        let f = m.u8c("_split_1_flash", 16, 6);
        let s = m.u8s("_split_1_scratch", 176, 0);
        let sf = m.u8s("_split_1_scratch_fast", 176, 0);
        let mut ins = vec![c, f, s, sf];
        let mut gin = Vec::new();
        for k in 0..6 {
            let t = m.i8(&format!("in_{k}"), &[1, 16], 16 * k);
            ins.push(t);
            gin.push(t);
        }
        m.ethos(&ins, &[o1, o2]);
        m.io(&gin, &[o1, o2]);
        add("6x2", m);
    }
    // No real input (constant-folded input): op inputs are only the four.
    {
        let mut m = M::new("Vela-pattern 0x1");
        let o = m.i8("Identity", &[1, 16], 0);
        let c = m.u8c("_split_1_command_stream", 32, 7);
        let f = m.u8c("_split_1_flash", 64, 8);
        let s = m.u8s("_split_1_scratch", 16, 0);
        let sf = m.u8s("_split_1_scratch_fast", 16, 0);
        m.ethos(&[c, f, s, sf], &[o]);
        m.io(&[], &[o]);
        add("0x1", m);
    }
    // Dedicated_Sram-like: scratch_fast smaller than scratch, both at 0.
    {
        let mut m = M::new("Vela-pattern dedicated sram");
        let o = m.i8("Identity", &[1, 10], 1024);
        let c = m.u8c("_split_1_command_stream", 128, 9);
        let f = m.u8c("_split_1_flash", 512, 10);
        let s = m.u8s("_split_1_scratch", 1040, 0);
        let sf = m.u8s("_split_1_scratch_fast", 304, 0);
        let i = m.i8("input", &[1, 12, 12, 4], 0);
        m.ethos(&[c, f, s, sf, i], &[o]);
        m.io(&[i], &[o]);
        add("dedicated", m);
    }
    // Dedicated_Sram-like with scratch_fast LARGER than scratch (e.g. U65/U85
    // models with a big fast-scratch area): both at 0 in Vela's plan.
    {
        let mut m = M::new("Vela-pattern fast scratch bigger");
        let o = m.i8("Identity", &[1, 10], 272);
        let c = m.u8c("_split_1_command_stream", 128, 23);
        let f = m.u8c("_split_1_flash", 512, 24);
        let s = m.u8s("_split_1_scratch", 304, 0);
        let sf = m.u8s("_split_1_scratch_fast", 1040, 0);
        let i = m.i8("input", &[1, 4, 4, 16], 0);
        m.ethos(&[c, f, s, sf, i], &[o]);
        m.io(&[i], &[o]);
        add("fastbig", m);
    }
    // Two ethos-u ops back to back sharing flash/scratch/scratch_fast (as Vela
    // shares them between the NPU parts of one graph), own command streams.
    {
        let mut m = M::new("Vela-pattern two ops shared");
        let o = m.i8("Identity", &[1, 2], 0);
        let c1 = m.u8c("_split_1_command_stream", 80, 11);
        let f = m.u8c("_split_1_flash", 320, 12);
        let s = m.u8s("_split_1_scratch", 512, 0);
        let sf = m.u8s("_split_1_scratch_fast", 512, 0);
        let c2 = m.u8c("_split_2_command_stream", 48, 13);
        let i = m.i8("input", &[1, 8, 8, 1], 0);
        let mid = m.i8("mid", &[1, 16], 64);
        m.ethos(&[c1, f, s, sf, i], &[mid]);
        m.ethos(&[c2, f, s, sf, mid], &[o]);
        m.io(&[i], &[o]);
        add("two_shared", m);
    }
    // Two ethos-u ops with their own flash/scratch/scratch_fast each.
    {
        let mut m = M::new("Vela-pattern two ops separate");
        let o = m.i8("Identity", &[1, 2], 0);
        let c1 = m.u8c("_split_1_command_stream", 80, 14);
        let f1 = m.u8c("_split_1_flash", 320, 15);
        let s1 = m.u8s("_split_1_scratch", 512, 0);
        let sf1 = m.u8s("_split_1_scratch_fast", 512, 0);
        let c2 = m.u8c("_split_2_command_stream", 48, 16);
        let f2 = m.u8c("_split_2_flash", 96, 17);
        let s2 = m.u8s("_split_2_scratch", 208, 512);
        let sf2 = m.u8s("_split_2_scratch_fast", 144, 512);
        let i = m.i8("input", &[1, 8, 8, 1], 0);
        let mid = m.i8("mid", &[1, 16], 512);
        m.ethos(&[c1, f1, s1, sf1, i], &[mid]);
        m.ethos(&[c2, f2, s2, sf2, mid], &[o]);
        m.io(&[i], &[o]);
        add("two_separate", m);
    }
    // CPU ops around: RESHAPE (CPU) -> ethos-u -> SOFTMAX (CPU).
    {
        let mut m = M::new("Vela-pattern cpu sandwich");
        let o = m.i8q("Identity", &[1, 2], 1056, 1.0 / 256.0, -128);
        let c = m.u8c("_split_1_command_stream", 96, 18);
        let f = m.u8c("_split_1_flash", 160, 19);
        let s = m.u8s("_split_1_scratch", 1040, 0);
        let sf = m.u8s("_split_1_scratch_fast", 1040, 0);
        let i = m.i8("input", &[1, 64], 0);
        let shape = m.i32c("new_shape", &[1, 8, 8, 1]);
        let r = m.i8("reshaped", &[1, 8, 8, 1], 64);
        let logits = m.i8("logits", &[1, 2], 1040);
        m.b.op(m.g, BuiltinOp::RESHAPE, &[i, shape], &[r])
            .reshape_options(&[1, 8, 8, 1]);
        m.ethos(&[c, f, s, sf, r], &[logits]);
        m.b.op(m.g, BuiltinOp::SOFTMAX, &[logits], &[o])
            .softmax_options(1.0);
        m.io(&[i], &[o]);
        add("cpu_sandwich", m);
    }
    // ethos-u -> RESHAPE (CPU) -> ethos-u, shared flash/scratch (Vela pattern
    // for an NPU graph split by a CPU op).
    {
        let mut m = M::new("Vela-pattern npu cpu npu");
        let o = m.i8("Identity", &[1, 4], 0);
        let c1 = m.u8c("_split_1_command_stream", 112, 20);
        let f = m.u8c("_split_1_flash", 448, 21);
        let s = m.u8s("_split_1_scratch", 656, 0);
        let sf = m.u8s("_split_1_scratch_fast", 656, 0);
        let c2 = m.u8c("_split_2_command_stream", 64, 22);
        let i = m.i8("input", &[1, 16, 16, 2], 0);
        let a = m.i8("npu1_out", &[1, 4, 4, 1], 512);
        let shape = m.i32c("new_shape", &[1, 16]);
        let r = m.i8("reshaped", &[1, 16], 528);
        m.ethos(&[c1, f, s, sf, i], &[a]);
        m.b.op(m.g, BuiltinOp::RESHAPE, &[a, shape], &[r])
            .reshape_options(&[1, 16]);
        m.ethos(&[c2, f, s, sf, r], &[o]);
        m.io(&[i], &[o]);
        add("npu_cpu_npu", m);
    }
    // person_detect_vela-like plan with scratch_fast left online (-1) and
    // one with the builder's own offline_plan (version word 1).
    {
        let mk = || {
            let mut m = M::new("Vela 3.11.0 Optimised");
            let o = m.i8("MobilenetV1/Predictions/Reshape_1", &[1, 2], 0);
            let c = m.u8c("_split_1_command_stream", 100, 1);
            let f = m.u8c("_split_1_flash", 240, 2);
            let s = m.u8s("_split_1_scratch", 1000, 0);
            let sf = m.u8s("_split_1_scratch_fast", 1000, 0);
            let i = m.i8("input", &[1, 8, 8, 1], 0);
            m.ethos(&[c, f, s, sf, i], &[o]);
            m.io(&[i], &[o]);
            m
        };
        let mut m = mk();
        let plan = vec![0, -1, -1, 0, -1, 0];
        vela_plan(&mut m.b, &plan);
        models.push(("probe_eu_1x1_mixed".into(), m.b.build().unwrap()));
        let mut m = mk();
        m.b.offline_plan(&[0, -1, -1, 0, 0, 0]);
        models.push(("probe_eu_1x1_planv1".into(), m.b.build().unwrap()));
    }

    // Old Vela writer (2.x/3.0): scratch tensors written with shape [0] and
    // appended to the subgraph inputs; plan gives them offset 0.
    {
        let mut m = M::new("Vela Optimised");
        let o = m.i8("MobilenetV1/Predictions/Reshape_1", &[1, 2], 0);
        let c = m.u8c("_split_1_command_stream", 100, 1);
        let f = m.u8c("_split_1_flash", 240, 2);
        let s = m.u8s("_split_1_scratch", 0, 0);
        let sf = m.u8s("_split_1_scratch_fast", 0, 0);
        let i = m.i8("input", &[1, 8, 8, 1], 0);
        m.ethos(&[c, f, s, sf, i], &[o]);
        m.io(&[i, s, sf], &[o]);
        let (p, _) = m.finish();
        models.push(("probe_eu_1x1_oldvela".into(), p));
    }

    models
}
