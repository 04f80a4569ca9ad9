//! Writes builder-made CNNs with many persistent buffers (per-channel arrays of
//! odd channel counts, ADD, pools, FC, SOFTMAX; float and int8) so their tail can
//! be measured with TFLM itself and compared with microarena, category by
//! category (`scripts/tail-probe.sh` does both):
//! `cargo run -p microarena-core --example tail_probe -- OUT_DIR`

use std::process::ExitCode;

use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::example;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, OpOptions, Padding};

struct Net {
    b: ModelBuilder,
    g: usize,
    int8: bool,
    n: usize,
    x: i32,
    hw: i32,
    c: i32,
}

impl Net {
    fn new(int8: bool, hw: i32, c: i32) -> Net {
        let mut b = ModelBuilder::new();
        let g = b.named_subgraph("main");
        let mut net = Net {
            b,
            g,
            int8,
            n: 0,
            x: -1,
            hw,
            c,
        };
        net.x = net.act(&[1, hw, hw, c]);
        net.b.inputs(g, &[net.x]);
        net
    }

    fn name(&mut self) -> String {
        self.n += 1;
        format!("t{}", self.n)
    }

    fn act(&mut self, shape: &[i32]) -> i32 {
        let (g, name) = (self.g, self.name());
        if self.int8 {
            self.b
                .tensor(g, &name, shape, DType::I8)
                .quant(0.05, -3)
                .id()
        } else {
            self.b.tensor(g, &name, shape, DType::F32).id()
        }
    }

    /// Filter and bias with `channels` per-channel scales along `channel_dim`.
    fn weights(&mut self, shape: &[i32], channel_dim: usize) -> (i32, i32) {
        let ch = shape[channel_dim];
        let count: i32 = shape.iter().product();
        let (g, wn, bn) = (self.g, self.name(), self.name());
        if self.int8 {
            let scales = vec![0.01f32; ch as usize];
            let zeros = vec![0i64; ch as usize];
            let bscales: Vec<f32> = scales.iter().map(|s| s * 0.05).collect();
            let w = self
                .b
                .tensor(g, &wn, shape, DType::I8)
                .quant_per_channel(&scales, &zeros, channel_dim as i32)
                .data_i8(&vec![1; count as usize])
                .id();
            let bias = self
                .b
                .tensor(g, &bn, &[ch], DType::I32)
                .quant_per_channel(&bscales, &zeros, 0)
                .data_i32(&vec![0; ch as usize])
                .id();
            (w, bias)
        } else {
            let w = self
                .b
                .tensor(g, &wn, shape, DType::F32)
                .data_f32(&vec![0.01; count as usize])
                .id();
            let bias = self
                .b
                .tensor(g, &bn, &[ch], DType::F32)
                .data_f32(&vec![0.0; ch as usize])
                .id();
            (w, bias)
        }
    }

    fn conv(&mut self, k: i32, stride: i32, out_c: i32) -> i32 {
        let (w, bias) = self.weights(&[out_c, k, k, self.c], 0);
        let hw = (self.hw + stride - 1) / stride;
        let y = self.act(&[1, hw, hw, out_c]);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::CONV_2D, &[self.x, w, bias], &[y])
            .conv_options(Padding::Same, stride, stride, Activation::Relu6);
        (self.x, self.hw, self.c) = (y, hw, out_c);
        y
    }

    fn depthwise(&mut self, stride: i32) -> i32 {
        let (w, bias) = self.weights(&[1, 3, 3, self.c], 3);
        let hw = (self.hw + stride - 1) / stride;
        let y = self.act(&[1, hw, hw, self.c]);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[self.x, w, bias], &[y])
            .depthwise_options(Padding::Same, stride, stride, 1, Activation::Relu6);
        (self.x, self.hw) = (y, hw);
        y
    }

    fn add(&mut self, other: i32) -> i32 {
        let y = self.act(&[1, self.hw, self.hw, self.c]);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::ADD, &[self.x, other], &[y])
            .add_options(Activation::None);
        self.x = y;
        y
    }

    fn pool(&mut self, op: BuiltinOp) -> i32 {
        let hw = self.hw / 2;
        let y = self.act(&[1, hw, hw, self.c]);
        let g = self.g;
        self.b.op(g, op, &[self.x], &[y]).pool_options(
            Padding::Valid,
            (2, 2),
            (2, 2),
            Activation::None,
        );
        (self.x, self.hw) = (y, hw);
        y
    }

    fn mean(&mut self) -> i32 {
        let g = self.g;
        let axes = self
            .b
            .tensor(g, "axes", &[2], DType::I32)
            .data_i32(&[1, 2])
            .id();
        let y = self.act(&[1, self.c]);
        self.b
            .op(g, BuiltinOp::MEAN, &[self.x, axes], &[y])
            .options(OpOptions::Reducer { keep_dims: false });
        (self.x, self.hw) = (y, 1);
        y
    }

    fn fc(&mut self, out: i32) -> i32 {
        let (w, bias) = self.weights(&[out, self.c], 0);
        let y = self.act(&[1, out]);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::FULLY_CONNECTED, &[self.x, w, bias], &[y])
            .fc_options(Activation::None, false);
        (self.x, self.c) = (y, out);
        y
    }

    fn softmax(&mut self) -> i32 {
        let g = self.g;
        let y = if self.int8 {
            self.b
                .tensor(g, "probs", &[1, self.c], DType::I8)
                .quant(1.0 / 256.0, -128)
                .id()
        } else {
            self.act(&[1, self.c])
        };
        self.b
            .op(g, BuiltinOp::SOFTMAX, &[self.x], &[y])
            .softmax_options(1.0);
        self.x = y;
        y
    }

    fn finish(mut self) -> Vec<u8> {
        let (g, x) = (self.g, self.x);
        self.b.outputs(g, &[x]);
        self.b.build().expect("probe model builds")
    }
}

/// `blocks` inverted-residual blocks (1×1 expand to an odd width, 3×3
/// depthwise, 1×1 project, ADD), then global mean, FC and SOFTMAX.
fn mobilenet_v2_like(int8: bool, blocks: usize) -> Vec<u8> {
    let mut n = Net::new(int8, 16, 3);
    n.conv(3, 2, 7);
    for i in 0..blocks {
        let skip = n.x;
        n.conv(1, 1, 21 + 2 * (i as i32 % 5));
        n.depthwise(1);
        n.conv(1, 1, 7);
        n.add(skip);
    }
    n.mean();
    n.fc(5);
    n.softmax();
    n.finish()
}

/// A plain chain of convolutions with odd channel counts, pools, FC and SOFTMAX.
fn conv_chain(int8: bool, convs: usize) -> Vec<u8> {
    let mut n = Net::new(int8, 16, 1);
    for i in 0..convs {
        n.conv(3, 1, 3 + 2 * (i as i32 % 7));
        if i == convs / 2 {
            n.pool(BuiltinOp::MAX_POOL_2D);
        }
    }
    n.pool(BuiltinOp::AVERAGE_POOL_2D);
    let c = n.c * n.hw * n.hw;
    let g = n.g;
    let flat = n.act(&[1, c]);
    let shape =
        n.b.tensor(g, "shape", &[2], DType::I32)
            .data_i32(&[1, c])
            .id();
    n.b.op(g, BuiltinOp::RESHAPE, &[n.x, shape], &[flat])
        .reshape_options(&[1, c]);
    (n.x, n.c, n.hw) = (flat, c, 1);
    n.fc(11);
    n.softmax();
    n.finish()
}

/// Depthwise chain with odd channel counts.
fn depthwise_chain(int8: bool, count: usize) -> Vec<u8> {
    let mut n = Net::new(int8, 8, 9);
    for _ in 0..count {
        n.depthwise(1);
    }
    n.finish()
}

/// MobileNet-v1 0.25 at 96×96×3 with the Keras head (the MLPerf Tiny
/// visual-wake-words topology): 13 depthwise-separable blocks, AVERAGE_POOL_2D,
/// RESHAPE, FULLY_CONNECTED to 2, SOFTMAX.
fn vww_like(int8: bool) -> Vec<u8> {
    let mut n = Net::new(int8, 96, 3);
    n.conv(3, 2, 8);
    for (c, s) in [
        (16, 1),
        (32, 2),
        (32, 1),
        (64, 2),
        (64, 1),
        (128, 2),
        (128, 1),
        (128, 1),
        (128, 1),
        (128, 1),
        (128, 1),
        (256, 2),
        (256, 1),
    ] {
        n.depthwise(s);
        n.conv(1, 1, c);
    }
    let hw = n.hw;
    let g = n.g;
    let y = n.act(&[1, 1, 1, n.c]);
    n.b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[n.x], &[y])
        .pool_options(Padding::Valid, (hw, hw), (hw, hw), Activation::None);
    let flat = n.act(&[1, n.c]);
    let shape =
        n.b.tensor(g, "shape", &[2], DType::I32)
            .data_i32(&[-1, n.c])
            .id();
    n.b.op(g, BuiltinOp::RESHAPE, &[y, shape], &[flat])
        .reshape_options(&[-1, n.c]);
    (n.x, n.hw) = (flat, 1);
    n.fc(2);
    n.softmax();
    n.finish()
}

/// Ten odd-width convolutions with `extra` inserted after each of the first
/// five: one model per operator kind, so a miss names its operator.
fn conv_chain_with(int8: bool, extra: &str) -> Vec<u8> {
    let mut n = Net::new(int8, 8, 3);
    for i in 0..10 {
        n.conv(3, 1, 5 + 2 * (i % 4));
        if i >= 5 {
            continue;
        }
        let g = n.g;
        let shape = [1, n.hw, n.hw, n.c];
        match extra {
            "pad" => {
                let pads =
                    n.b.tensor(g, "pads", &[4, 2], DType::I32)
                        .data_i32(&[0, 0, 1, 1, 1, 1, 0, 0])
                        .id();
                let y = n.act(&[1, n.hw + 2, n.hw + 2, n.c]);
                n.b.op(g, BuiltinOp::PAD, &[n.x, pads], &[y]);
                n.x = y;
                n.hw += 2;
            }
            "concat" => {
                let skip = n.x;
                n.conv(1, 1, 3);
                let c = shape[3] + n.c;
                let y = n.act(&[1, n.hw, n.hw, c]);
                n.b.op(g, BuiltinOp::CONCATENATION, &[skip, n.x], &[y])
                    .concat_options(3, Activation::None);
                n.x = y;
                n.c = c;
            }
            "mul" | "add" | "sub" => {
                let skip = n.x;
                n.conv(1, 1, shape[3]);
                let y = n.act(&shape);
                let op = match extra {
                    "mul" => BuiltinOp::MUL,
                    "add" => BuiltinOp::ADD,
                    _ => BuiltinOp::SUB,
                };
                n.b.op(g, op, &[skip, n.x], &[y])
                    .mul_options(Activation::None);
                n.x = y;
            }
            "logistic" | "hard_swish" | "relu" | "relu6" | "tanh" => {
                let y = if n.int8 && extra == "logistic" {
                    n.b.tensor(g, "sig", &shape, DType::I8)
                        .quant(1.0 / 256.0, -128)
                        .id()
                } else if n.int8 && extra == "tanh" {
                    n.b.tensor(g, "tanh", &shape, DType::I8)
                        .quant(1.0 / 128.0, 0)
                        .id()
                } else {
                    n.act(&shape)
                };
                let op = match extra {
                    "logistic" => BuiltinOp::LOGISTIC,
                    "hard_swish" => BuiltinOp::HARD_SWISH,
                    "relu" => BuiltinOp::RELU,
                    "tanh" => BuiltinOp::TANH,
                    _ => BuiltinOp::RELU6,
                };
                n.b.op(g, op, &[n.x], &[y]);
                n.x = y;
            }
            "mean_keep" => {
                let axes =
                    n.b.tensor(g, "axes", &[2], DType::I32)
                        .data_i32(&[1, 2])
                        .id();
                let y = n.act(&[1, 1, 1, n.c]);
                n.b.op(g, BuiltinOp::MEAN, &[n.x, axes], &[y])
                    .options(OpOptions::Reducer { keep_dims: true });
                let skip = y;
                let y2 = n.act(&shape);
                n.b.op(g, BuiltinOp::MUL, &[n.x, skip], &[y2])
                    .mul_options(Activation::None);
                n.x = y2;
            }
            "fc" => {
                let flat = n.act(&[n.hw * n.hw, n.c]);
                let s =
                    n.b.tensor(g, "shape", &[2], DType::I32)
                        .data_i32(&[n.hw * n.hw, n.c])
                        .id();
                n.b.op(g, BuiltinOp::RESHAPE, &[n.x, s], &[flat])
                    .reshape_options(&[n.hw * n.hw, n.c]);
                let (w, bias) = n.weights(&[n.c, n.c], 0);
                let y = n.act(&[n.hw * n.hw, n.c]);
                n.b.op(g, BuiltinOp::FULLY_CONNECTED, &[flat, w, bias], &[y])
                    .fc_options(Activation::None, false);
                let back = n.act(&shape);
                let s2 =
                    n.b.tensor(g, "shape4", &[4], DType::I32)
                        .data_i32(&shape)
                        .id();
                n.b.op(g, BuiltinOp::RESHAPE, &[y, s2], &[back])
                    .reshape_options(&shape);
                n.x = back;
            }
            "quant" if n.int8 => {
                let f = n.b.tensor(g, "deq", &shape, DType::F32).id();
                n.b.op(g, BuiltinOp::DEQUANTIZE, &[n.x], &[f]);
                let q = n.act(&shape);
                n.b.op(g, BuiltinOp::QUANTIZE, &[f], &[q]);
                n.x = q;
            }
            "leaky_relu" => {
                let y = n.act(&shape);
                n.b.op(g, BuiltinOp::LEAKY_RELU, &[n.x], &[y])
                    .options(OpOptions::LeakyRelu { alpha: 0.2 });
                n.x = y;
            }
            "maximum" | "div" => {
                let skip = n.x;
                n.conv(1, 1, shape[3]);
                let y = n.act(&shape);
                let op = if extra == "div" {
                    BuiltinOp::DIV
                } else {
                    BuiltinOp::MAXIMUM
                };
                n.b.op(g, op, &[skip, n.x], &[y]);
                n.x = y;
            }
            "transpose" => {
                let perm =
                    n.b.tensor(g, "perm", &[4], DType::I32)
                        .data_i32(&[0, 2, 1, 3])
                        .id();
                let y = n.act(&shape);
                n.b.op(g, BuiltinOp::TRANSPOSE, &[n.x, perm], &[y]);
                n.x = y;
            }
            "squeeze" => {
                let y = n.act(&shape[1..]);
                n.b.op(g, BuiltinOp::SQUEEZE, &[n.x], &[y])
                    .options(OpOptions::Squeeze { dims: vec![0] });
                let back = n.act(&shape);
                let s4 =
                    n.b.tensor(g, "shape4", &[4], DType::I32)
                        .data_i32(&shape)
                        .id();
                n.b.op(g, BuiltinOp::RESHAPE, &[y, s4], &[back])
                    .reshape_options(&shape);
                n.x = back;
            }
            "strided_slice" => {
                let begin = n.b.tensor(g, "b", &[4], DType::I32).data_i32(&[0; 4]).id();
                let end = n.b.tensor(g, "e", &[4], DType::I32).data_i32(&shape).id();
                let st = n.b.tensor(g, "s", &[4], DType::I32).data_i32(&[1; 4]).id();
                let y = n.act(&shape);
                n.b.op(g, BuiltinOp::STRIDED_SLICE, &[n.x, begin, end, st], &[y])
                    .options(OpOptions::StridedSlice(Default::default()));
                n.x = y;
            }
            "se_fc" => {
                // Squeeze-and-excite through FULLY_CONNECTED: builtin structs of
                // alignment 1 (MEAN), 8 (FC) and 4 (RESHAPE, MUL) interleave.
                let x = n.x;
                let c = n.c;
                let axes =
                    n.b.tensor(g, "axes", &[2], DType::I32)
                        .data_i32(&[1, 2])
                        .id();
                let m = n.act(&[1, c]);
                n.b.op(g, BuiltinOp::MEAN, &[x, axes], &[m])
                    .options(OpOptions::Reducer { keep_dims: false });
                (n.x, n.c) = (m, c);
                n.fc(3);
                n.fc(c);
                let sig = if n.int8 {
                    n.b.tensor(g, "sig", &[1, c], DType::I8)
                        .quant(1.0 / 256.0, -128)
                        .id()
                } else {
                    n.act(&[1, c])
                };
                n.b.op(g, BuiltinOp::LOGISTIC, &[n.x], &[sig]);
                let s4 =
                    n.b.tensor(g, "s4", &[4], DType::I32)
                        .data_i32(&[1, 1, 1, c])
                        .id();
                let r = n.act(&[1, 1, 1, c]);
                n.b.op(g, BuiltinOp::RESHAPE, &[sig, s4], &[r])
                    .reshape_options(&[1, 1, 1, c]);
                let y = n.act(&shape);
                n.b.op(g, BuiltinOp::MUL, &[x, r], &[y])
                    .mul_options(Activation::None);
                n.x = y;
            }
            "split" => {
                // SPLIT along channels into two halves, CONCATENATION back.
                let axis = n.b.tensor(g, "axis", &[], DType::I32).data_i32(&[3]).id();
                let c = n.c;
                let (c1, c2) = if c % 2 == 0 { (c / 2, c / 2) } else { (c, 0) };
                if c2 == 0 {
                    continue;
                }
                let a = n.act(&[1, n.hw, n.hw, c1]);
                let b2 = n.act(&[1, n.hw, n.hw, c2]);
                n.b.op(g, BuiltinOp(49), &[axis, n.x], &[a, b2]);
                let y = n.act(&shape);
                n.b.op(g, BuiltinOp::CONCATENATION, &[b2, a], &[y])
                    .concat_options(3, Activation::None);
                n.x = y;
            }
            "resize_nearest" | "resize_bilinear" => {
                // Builtin data (two bools) but no OpData in TFLM.
                let size =
                    n.b.tensor(g, "size", &[2], DType::I32)
                        .data_i32(&[n.hw, n.hw])
                        .id();
                let y = n.act(&shape);
                let op = if extra == "resize_nearest" {
                    BuiltinOp::RESIZE_NEAREST_NEIGHBOR
                } else {
                    BuiltinOp::RESIZE_BILINEAR
                };
                n.b.op(g, op, &[n.x, size], &[y]);
                n.x = y;
            }
            _ => {}
        }
    }
    n.finish()
}

/// Two outputs (a classifier and a feature map).
fn two_outputs(int8: bool) -> Vec<u8> {
    let mut n = Net::new(int8, 8, 3);
    for i in 0..12 {
        n.conv(3, 1, 5 + 2 * (i % 4));
    }
    let feat = n.x;
    n.mean();
    n.fc(3);
    let g = n.g;
    let x = n.x;
    n.b.outputs(g, &[x, feat]);
    n.b.build().expect("probe model builds")
}

/// ARG_MAX over channels at the end of a conv chain.
fn argmax(int8: bool) -> Vec<u8> {
    let mut n = Net::new(int8, 4, 3);
    for i in 0..6 {
        n.conv(3, 1, 5 + 2 * (i % 3));
    }
    let g = n.g;
    let axis = n.b.tensor(g, "axis", &[1], DType::I32).data_i32(&[3]).id();
    let y = n.b.tensor(g, "argmax", &[1, n.hw, n.hw], DType::I32).id();
    n.b.op(g, BuiltinOp::ARG_MAX, &[n.x, axis], &[y]);
    n.x = y;
    n.finish()
}

fn main() -> ExitCode {
    let Some(out) = std::env::args().nth(1) else {
        eprintln!("usage: tail_probe OUT_DIR");
        return ExitCode::from(2);
    };
    let models: Vec<(String, Vec<u8>)> = [true, false]
        .into_iter()
        .flat_map(|int8| {
            let t = if int8 { "int8" } else { "float" };
            [
                (format!("mbv2_{t}_4"), mobilenet_v2_like(int8, 4)),
                (format!("mbv2_{t}_17"), mobilenet_v2_like(int8, 17)),
                (format!("mbv2_{t}_30"), mobilenet_v2_like(int8, 30)),
                (format!("convs_{t}_45"), conv_chain(int8, 45)),
                (format!("dw_{t}_40"), depthwise_chain(int8, 40)),
                (format!("vww_{t}"), vww_like(int8)),
                (format!("two_out_{t}"), two_outputs(int8)),
                (format!("argmax_{t}"), argmax(int8)),
            ]
        })
        .chain(
            [
                "pad",
                "concat",
                "mul",
                "add",
                "sub",
                "logistic",
                "hard_swish",
                "relu",
                "relu6",
                "tanh",
                "mean_keep",
                "fc",
                "quant",
                "leaky_relu",
                "resize_nearest",
                "split",
                "resize_bilinear",
                "se_fc",
                "maximum",
                "div",
                "transpose",
                "squeeze",
                "strided_slice",
            ]
            .into_iter()
            .flat_map(|x| {
                [true, false].map(|int8| {
                    let t = if int8 { "int8" } else { "float" };
                    (format!("with_{x}_{t}"), conv_chain_with(int8, x))
                })
            }),
        )
        .chain([
            ("resize_fc".to_string(), example::resize_then_fc()),
            (
                "conv_argmax".to_string(),
                example::conv_then(BuiltinOp::ARG_MAX),
            ),
            (
                "conv_argmin".to_string(),
                example::conv_then(BuiltinOp::ARG_MIN),
            ),
            (
                "conv_split".to_string(),
                example::conv_then(BuiltinOp::SPLIT),
            ),
            (
                "conv_split_v".to_string(),
                example::conv_then(BuiltinOp::SPLIT_V),
            ),
            (
                "conv_shape".to_string(),
                example::conv_then(BuiltinOp::SHAPE),
            ),
        ])
        .collect();
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("{out}: {e}");
        return ExitCode::from(2);
    }
    for (name, bytes) in models {
        let path = format!("{out}/{name}.tflite");
        if let Err(e) = std::fs::write(&path, &bytes) {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
        println!("{path}");
    }
    ExitCode::SUCCESS
}
