//! Writes builder-made CNNs with many persistent buffers (per-channel arrays of
//! odd channel counts, ADD, pools, FC, SOFTMAX; float and int8) so their tail can
//! be measured with TFLM itself and compared with microarena, category by
//! category (`scripts/tail-probe.sh` does both):
//! `cargo run -p microarena-core --example tail_probe -- OUT_DIR`

use std::process::ExitCode;

use microarena_core::build::builder::ModelBuilder;
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
        self.b
            .op(g, op, &[self.x], &[y])
            .pool_options(Padding::Valid, (2, 2), (2, 2), Activation::None);
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
    let shape = n
        .b
        .tensor(g, "shape", &[2], DType::I32)
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
            ]
        })
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
