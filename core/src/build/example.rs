//! Example models written with [`crate::build::builder::ModelBuilder`], for tests,
//! benchmarks and demos that must not depend on files outside the crate.

use alloc::format;
use alloc::vec::Vec;

use crate::build::builder::ModelBuilder;
use crate::read::dtype::DType;
use crate::read::ops::{Activation, BuiltinOp, Padding};

/// Deterministic xorshift32, so the example needs no `rand` and never changes.
pub(super) struct XorShift(pub(super) u32);

impl XorShift {
    pub(super) fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// A weight in −127..=127.
    pub(super) fn weight(&mut self) -> i8 {
        ((self.next() % 255) as i32 - 127) as i8
    }

    /// A per-channel weight scale in [0.004, 0.04).
    fn scale(&mut self) -> f32 {
        0.004 + (self.next() % 1000) as f32 * 0.000_036
    }
}

/// Scale of a ReLU6 activation quantized to int8 with zero point −128.
const RELU6_SCALE: f32 = 6.0 / 255.0;

pub(super) struct Net {
    pub(super) b: ModelBuilder,
    pub(super) g: usize,
    pub(super) rng: XorShift,
    /// Current activation: tensor index, height/width, channels, scale,
    /// zero point.
    pub(super) x: i32,
    pub(super) hw: i32,
    pub(super) c: i32,
    pub(super) scale: f32,
    pub(super) zp: i64,
    pub(super) layer: usize,
    /// Tensor name prefix of each layer.
    pub(super) prefix: &'static str,
}

impl Net {
    /// A per-channel int8 weight tensor and its int32 bias (scales = input scale × weight scale).
    pub(super) fn weights(
        &mut self,
        name: &str,
        shape: [i32; 4],
        channel_dim: usize,
    ) -> (i32, i32) {
        let channels = shape[channel_dim];
        let count: i32 = shape.iter().product();
        let w_scales: Vec<f32> = (0..channels).map(|_| self.rng.scale()).collect();
        let values: Vec<i8> = (0..count).map(|_| self.rng.weight()).collect();
        let bias_values: Vec<i32> = (0..channels)
            .map(|_| (self.rng.next() % 2001) as i32 - 1000)
            .collect();
        let b_scales: Vec<f32> = w_scales.iter().map(|s| s * self.scale).collect();
        let zeros = alloc::vec![0i64; channels as usize];
        let g = self.g;
        let w = self
            .b
            .tensor(g, &format!("{name}/weights"), &shape, DType::I8)
            .quant_per_channel(&w_scales, &zeros, channel_dim as i32)
            .data_i8(&values)
            .id();
        let bias = self
            .b
            .tensor(g, &format!("{name}/bias"), &[channels], DType::I32)
            .quant_per_channel(&b_scales, &zeros, 0)
            .data_i32(&bias_values)
            .id();
        (w, bias)
    }

    pub(super) fn activation(
        &mut self,
        name: &str,
        hw: i32,
        c: i32,
        scale: f32,
        zero_point: i64,
    ) -> i32 {
        let g = self.g;
        self.b
            .tensor(g, name, &[1, hw, hw, c], DType::I8)
            .quant(scale, zero_point)
            .id()
    }

    /// The classifier's end: int8 SOFTMAX of `logits` (`shape`) into the
    /// graph output `name` (scale 1/256, zero point −128), `input` the graph
    /// input; the finished model.
    pub(super) fn softmax_output(
        mut self,
        name: &str,
        logits: i32,
        shape: &[i32],
        input: i32,
    ) -> Vec<u8> {
        let g = self.g;
        let output = self
            .b
            .tensor(g, name, shape, DType::I8)
            .quant(1.0 / 256.0, -128)
            .id();
        self.b
            .op(g, BuiltinOp::SOFTMAX, &[logits], &[output])
            .softmax_options(1.0);
        self.b.inputs(g, &[input]).outputs(g, &[output]);
        self.b.finish()
    }

    /// CONV_2D k×k, SAME padding, ReLU6 (or none for the logits).
    fn conv(&mut self, k: i32, stride: i32, out_c: i32, relu6: bool) {
        self.conv_with(k, stride, out_c, relu6, Padding::Same);
    }

    /// CONV_2D k×k with `padding`, ReLU6 (or none: a linear output).
    pub(super) fn conv_with(
        &mut self,
        k: i32,
        stride: i32,
        out_c: i32,
        relu6: bool,
        padding: Padding,
    ) {
        let name = format!("{}/Conv2d_{}", self.prefix, self.layer);
        let (w, bias) = self.weights(&name, [out_c, k, k, self.c], 0);
        let hw = out_hw(self.hw, k, stride, padding);
        let (scale, zp, act) = if relu6 {
            (RELU6_SCALE, -128, Activation::Relu6)
        } else {
            (0.15, 12, Activation::None)
        };
        let y = self.activation(&format!("{name}/Relu6"), hw, out_c, scale, zp);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::CONV_2D, &[self.x, w, bias], &[y])
            .conv_options(padding, stride, stride, act);
        (self.x, self.hw, self.c, self.scale, self.zp) = (y, hw, out_c, scale, zp);
    }

    /// PAD of `before` rows and columns above and left, `after` below and
    /// right, with the input's quantization (what PyTorch and Keras
    /// exporters write before a strided layer instead of SAME padding).
    pub(super) fn pad(&mut self, before: i32, after: i32) {
        let name = format!("{}/pad_{}", self.prefix, self.layer);
        let g = self.g;
        let paddings = self
            .b
            .tensor(g, &format!("{name}/paddings"), &[4, 2], DType::I32)
            .data_i32(&[0, 0, before, after, before, after, 0, 0])
            .id();
        let hw = self.hw + before + after;
        let y = self.activation(&name, hw, self.c, self.scale, self.zp);
        self.b.op(g, BuiltinOp::PAD, &[self.x, paddings], &[y]);
        (self.x, self.hw) = (y, hw);
    }

    /// A 1-D convolution as TFLite writes one: CONV_2D 1×k over `[1, 1, W, C]`,
    /// stride 1, SAME padding, ReLU6 (`hw` holds the width).
    fn conv1d(&mut self, k: i32, out_c: i32) {
        let name = format!("{}/Conv1d_{}", self.prefix, self.layer);
        let (w, bias) = self.weights(&name, [out_c, 1, k, self.c], 0);
        let g = self.g;
        let y = self
            .b
            .tensor(
                g,
                &format!("{name}/Relu6"),
                &[1, 1, self.hw, out_c],
                DType::I8,
            )
            .quant(RELU6_SCALE, -128)
            .id();
        self.b
            .op(g, BuiltinOp::CONV_2D, &[self.x, w, bias], &[y])
            .conv_options(Padding::Same, 1, 1, Activation::Relu6);
        (self.x, self.c, self.scale, self.zp) = (y, out_c, RELU6_SCALE, -128);
    }

    /// DEPTHWISE_CONV_2D 3×3, depth multiplier 1, SAME padding, ReLU6.
    fn depthwise(&mut self, stride: i32) {
        self.depthwise_with(stride, Padding::Same);
    }

    /// DEPTHWISE_CONV_2D 3×3, depth multiplier 1, `padding`, ReLU6.
    pub(super) fn depthwise_with(&mut self, stride: i32, padding: Padding) {
        let name = format!("{}/Conv2d_{}_depthwise", self.prefix, self.layer);
        let (w, bias) = self.weights(&name, [1, 3, 3, self.c], 3);
        let hw = out_hw(self.hw, 3, stride, padding);
        let y = self.activation(&format!("{name}/Relu6"), hw, self.c, RELU6_SCALE, -128);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[self.x, w, bias], &[y])
            .depthwise_options(padding, stride, stride, 1, Activation::Relu6);
        (self.x, self.hw, self.scale, self.zp) = (y, hw, RELU6_SCALE, -128);
    }
}

/// Output side of a k×k window over `hw` at `stride` with `padding` (TFLM's
/// `ComputeOutSize`).
fn out_hw(hw: i32, k: i32, stride: i32, padding: Padding) -> i32 {
    microarena_image::geometry::out_size(padding, hw, k, stride, 1)
}

impl Net {
    /// The classifier head: AVERAGE_POOL_2D over the whole map, CONV_2D 1×1
    /// to `classes` logits, RESHAPE to `[1, classes]`, SOFTMAX; returns the
    /// probabilities' tensor.
    pub(super) fn classifier(&mut self, prefix: &str, classes: i32) -> i32 {
        let g = self.g;
        let side = self.hw;
        let pooled = self.activation(&format!("{prefix}/pool"), 1, self.c, self.scale, -128);
        self.b
            .op(g, BuiltinOp::AVERAGE_POOL_2D, &[self.x], &[pooled])
            .pool_options(Padding::Valid, (side, side), (side, side), Activation::None);
        (self.x, self.hw) = (pooled, 1);
        self.conv(1, 1, classes, false);
        let shape = self
            .b
            .tensor(g, &format!("{prefix}/logits_shape"), &[2], DType::I32)
            .data_i32(&[1, classes])
            .id();
        let logits = self
            .b
            .tensor(g, &format!("{prefix}/logits"), &[1, classes], DType::I8)
            .quant(0.15, 12)
            .id();
        self.b
            .op(g, BuiltinOp::RESHAPE, &[self.x, shape], &[logits])
            .reshape_options(&[1, classes]);
        let probs = self
            .b
            .tensor(
                g,
                &format!("{prefix}/probabilities"),
                &[1, classes],
                DType::I8,
            )
            .quant(1.0 / 256.0, -128)
            .id();
        self.b
            .op(g, BuiltinOp::SOFTMAX, &[logits], &[probs])
            .softmax_options(1.0);
        probs
    }

    /// ADD of `skip` and the current activation (MobileNet-v2's residual).
    pub(super) fn add(&mut self, skip: i32) {
        let name = format!("{}/add_{}", self.prefix, self.layer);
        let y = self.activation(&name, self.hw, self.c, 0.2, 4);
        let g = self.g;
        self.b
            .op(g, BuiltinOp::ADD, &[skip, self.x], &[y])
            .add_options(Activation::None);
        (self.x, self.scale, self.zp) = (y, 0.2, 4);
    }
}

/// The MobileNet-v2 1.0 topology (Sandler et al. 2018, table 2) at
/// `hw`×`hw`×3 int8 with 1,000 classes: CONV_2D 3×3/2 to 32, 17 inverted
/// residual bottlenecks (expansion 1×1 ReLU6, depthwise 3×3 ReLU6,
/// projection 1×1 linear, ADD when stride 1 and the channels match), CONV_2D
/// 1×1 to 1,280, AVERAGE_POOL_2D, CONV_2D 1×1 to 1,000, RESHAPE, SOFTMAX.
/// Pseudo-random weights: the structure and sizes are what matter (the
/// issue's "MobileNet-v2 at 224×224" arena target).
pub fn mobilenet_v2_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: MobileNet-v2 1.0 int8 (inverted residuals)");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, hw, hw, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = Net {
        b,
        g,
        rng: XorShift(0x1234_5678),
        x: input,
        hw,
        c: 3,
        scale: 1.0 / 128.0,
        zp: 0,
        layer: 0,
        prefix: "MobilenetV2",
    };
    net.conv(3, 2, 32, true);
    // (expansion t, output channels c, repeats n, first stride s).
    const BLOCKS: [(i32, i32, usize, i32); 7] = [
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    ];
    for &(t, c, n, s) in &BLOCKS {
        for i in 0..n {
            let stride = if i == 0 { s } else { 1 };
            let (skip, c_in) = (net.x, net.c);
            if t != 1 {
                net.layer += 1;
                net.conv(1, 1, c_in * t, true);
            }
            net.layer += 1;
            net.depthwise(stride);
            net.layer += 1;
            net.conv(1, 1, c, false);
            if stride == 1 && c_in == c {
                net.add(skip);
            }
        }
    }
    net.layer += 1;
    net.conv(1, 1, 1280, true);
    net.layer += 1;
    let probs = net.classifier("MobilenetV2", 1000);
    net.b.inputs(g, &[input]).outputs(g, &[probs]);
    net.b.finish()
}

/// MobileNet-v1 0.25's 13 blocks after its first convolution: (pointwise
/// output channels, depthwise stride).
pub(crate) const MOBILENET_V1_025_BLOCKS: [(i32, i32); 13] = [
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
];

/// The person-detection MobileNet-v1 0.25 topology at 96×96×1 int8 (31 ops,
/// 89 tensors): CONV_2D 3×3/2 to 8 channels, 13 depthwise-separable blocks
/// (channels 16, 32/2, 32, 64/2, 64, 128/2, 128×5, 256/2, 256), AVERAGE_POOL_2D
/// 3×3 VALID, CONV_2D 1×1 to 2 classes, RESHAPE to [1, 2], SOFTMAX.
///
/// Weights are deterministic pseudo-random per-channel int8 (no real training),
/// so only the structure matters: the arena it needs equals that of TFLM's
/// `person_detect.tflite` (head 55296 on every target).
pub fn mobilenet_v1_025_96_int8() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description(
        "microarena example: MobileNet-v1 0.25, 96x96x1 int8 (person-detection topology)",
    );
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, 96, 96, 1], DType::I8)
        .quant(1.0 / 255.0, -128)
        .id();
    let mut net = Net {
        b,
        g,
        rng: XorShift(0x2545_f491),
        x: input,
        hw: 96,
        c: 1,
        scale: 1.0 / 255.0,
        zp: -128,
        layer: 0,
        prefix: "MobilenetV1",
    };

    net.conv(3, 2, 8, true);
    for (i, &(channels, stride)) in MOBILENET_V1_025_BLOCKS.iter().enumerate() {
        net.layer = i + 1;
        net.depthwise(stride);
        net.conv(1, 1, channels, true);
    }

    // 3×3 average pool over the 3×3×256 map, VALID ⇒ 1×1×256 (same quantization).
    let pooled = net.activation(
        "MobilenetV1/Logits/AvgPool_1a/AvgPool",
        1,
        net.c,
        net.scale,
        -128,
    );
    net.b
        .op(g, BuiltinOp::AVERAGE_POOL_2D, &[net.x], &[pooled])
        .pool_options(Padding::Valid, (2, 2), (3, 3), Activation::None);
    (net.x, net.hw) = (pooled, 1);
    net.layer = 14;
    net.conv(1, 1, 2, false);
    let logits = net.x;

    let shape = net
        .b
        .tensor(
            g,
            "MobilenetV1/Logits/SpatialSqueeze_shape",
            &[2],
            DType::I32,
        )
        .data_i32(&[1, 2])
        .id();
    let squeezed = net
        .b
        .tensor(g, "MobilenetV1/Logits/SpatialSqueeze", &[1, 2], DType::I8)
        .quant(0.15, 12)
        .id();
    net.b
        .op(g, BuiltinOp::RESHAPE, &[logits, shape], &[squeezed])
        .reshape_options(&[1, 2]);
    net.softmax_output(
        "MobilenetV1/Predictions/Reshape_1",
        squeezed,
        &[1, 2],
        input,
    )
}

/// A large synthetic int8 network for benchmarks and stress tests: `ops`
/// operators alternating FULLY_CONNECTED and residual ADD, with widths that vary
/// along the chain and skip connections reaching back up to 8 ops, so
/// lifetimes overlap in uneven ways. All FC layers share one weight buffer to
/// keep the file small.
pub fn synthetic(ops: usize) -> Vec<u8> {
    synthetic_with_custom(ops, 0)
}

/// [`synthetic`] with every `every`-th residual ADD (every one when 1, none
/// when 0) replaced by the custom op `ACCEL_ADD`, which no TFLM build
/// registers: a large model whose many identical diagnostics the app groups.
pub fn synthetic_with_custom(ops: usize, every: usize) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let mut adds = 0usize;
    b.description("microarena synthetic benchmark network");
    let g = b.subgraph();
    let mut rng = XorShift(0x1234_5678);
    const WIDTHS: [i32; 4] = [64, 128, 256, 96];
    let shared: Vec<i8> = (0..256 * 256).map(|_| rng.weight()).collect();
    let weights = b.buffer(&shared.iter().map(|&v| v as u8).collect::<Vec<u8>>());
    let input = b
        .tensor(g, "input", &[1, 64], DType::I8)
        .quant(0.05, 0)
        .id();
    b.inputs(g, &[input]);
    // Recent activations per width, for skip connections.
    let mut recent: Vec<(i32, i32)> = alloc::vec![(input, 64)];
    let mut x = (input, 64);
    for i in 0..ops {
        let out = if i % 2 == 0 {
            let w = WIDTHS[(i / 2 + (rng.next() % 2) as usize) % WIDTHS.len()];
            let filter = b
                .tensor(g, &format!("fc{i}/w"), &[w, x.1], DType::I8)
                .quant(0.01, 0)
                .buffer(weights)
                .id();
            let y = b
                .tensor(g, &format!("fc{i}"), &[1, w], DType::I8)
                .quant(0.05, 0)
                .id();
            b.op(g, BuiltinOp::FULLY_CONNECTED, &[x.0, filter, -1], &[y])
                .fc_options(Activation::Relu, false);
            (y, w)
        } else {
            let back = recent
                .iter()
                .rev()
                .take(8)
                .find(|r| r.1 == x.1 && r.0 != x.0)
                .copied()
                .unwrap_or(x);
            let y = b
                .tensor(g, &format!("add{i}"), &[1, x.1], DType::I8)
                .quant(0.05, 0)
                .id();
            adds += 1;
            if every > 0 && adds.is_multiple_of(every) {
                b.custom_op(g, "ACCEL_ADD", &[x.0, back.0], &[y]);
            } else {
                b.op(g, BuiltinOp::ADD, &[x.0, back.0], &[y])
                    .add_options(Activation::None);
            }
            (y, x.1)
        };
        recent.push(out);
        x = out;
    }
    b.outputs(g, &[x.0]);
    b.finish()
}

/// A float model whose file order is bad for memory: four FULLY_CONNECTED
/// branches of different widths (64, 16, 48, 32) all expand before any of
/// them is reduced, then a CONCATENATION joins them. Another valid operator
/// order needs a smaller head, which makes it the demonstration of
/// [`crate::rewrite::optimize`] with reordering.
pub fn branchy_float() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = b.tensor(g, "x", &[1, 8], DType::F32).id();
    let mut leaves = Vec::new();
    for (i, w) in [64, 16, 48, 32].into_iter().enumerate() {
        let wt = b
            .tensor(g, &format!("w{i}"), &[w, 8], DType::F32)
            .data_f32(&alloc::vec![0.5; (w * 8) as usize])
            .id();
        let h = b.tensor(g, &format!("h{i}"), &[1, w], DType::F32).id();
        b.op(g, BuiltinOp::FULLY_CONNECTED, &[x, wt, -1], &[h])
            .fc_options(Activation::None, false);
        let wt2 = b
            .tensor(g, &format!("v{i}"), &[4, w], DType::F32)
            .data_f32(&alloc::vec![0.25; (w * 4) as usize])
            .id();
        let y = b.tensor(g, &format!("y{i}"), &[1, 4], DType::F32).id();
        leaves.push((h, wt2, y));
    }
    for &(h, wt2, y) in &leaves {
        b.op(g, BuiltinOp::FULLY_CONNECTED, &[h, wt2, -1], &[y])
            .fc_options(Activation::None, false);
    }
    let out = b.tensor(g, "out", &[1, 16], DType::F32).id();
    let ys: Vec<i32> = leaves.iter().map(|l| l.2).collect();
    b.op(g, BuiltinOp::CONCATENATION, &ys, &[out])
        .concat_options(1, Activation::None);
    b.inputs(g, &[x]);
    b.outputs(g, &[out]);
    b.finish()
}

/// RESIZE_NEAREST_NEIGHBOR then a float FULLY_CONNECTED: the smallest model
/// where the resize's 2 B of builtin data move the FC OpData to the next 16 B.
/// Tensors: t0 x [1,2,2,3] f32, t1 size (const), t2 resized, t3 w [4,12],
/// t4 bias, t5 y [1,4]. The builder test of that rule and the tail probe
/// (`core/examples/tail_probe.rs`) both use it.
pub fn resize_then_fc() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let x = b.tensor(g, "x", &[1, 2, 2, 3], DType::F32).id();
    let size = b.tensor(g, "size", &[2], DType::I32).data_i32(&[2, 2]).id();
    let r = b.tensor(g, "resized", &[1, 2, 2, 3], DType::F32).id();
    let w = b
        .tensor(g, "w", &[4, 12], DType::F32)
        .data_f32(&[0.5; 48])
        .id();
    let bias = b.tensor(g, "b", &[4], DType::F32).data_f32(&[0.0; 4]).id();
    let y = b.tensor(g, "y", &[1, 4], DType::F32).id();
    b.op(g, BuiltinOp::RESIZE_NEAREST_NEIGHBOR, &[x, size], &[r]);
    b.op(g, BuiltinOp::FULLY_CONNECTED, &[r, w, bias], &[y])
        .fc_options(Activation::None, false);
    b.inputs(g, &[x]).outputs(g, &[y]);
    b.finish()
}

/// `n` deterministic pseudo-random bytes (xorshift32 from `seed`, top byte
/// of each state), for weights and inputs that must never change.
pub fn pseudo_random_bytes(seed: u32, n: usize) -> Vec<u8> {
    let mut rng = XorShift(seed.max(1));
    (0..n).map(|_| (rng.next() >> 24) as u8).collect()
}

/// The runtime's demo model (firmware, runtime tests): int8 CONV_2D (3×3,
/// 8 ch, stride 2, ReLU) → DEPTHWISE_CONV_2D (3×3, ReLU6) → AVERAGE_POOL_2D
/// → RESHAPE → FULLY_CONNECTED (4 classes) → SOFTMAX, on a 16×16×1 input,
/// with deterministic weights. Every op has a runtime kernel.
pub fn demo_model() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let bias = |b: &mut ModelBuilder, name: &str, n: usize, seed: u32, scale: f32| {
        let v: Vec<i32> = pseudo_random_bytes(seed, n)
            .iter()
            .map(|&x| i32::from(x as i8) * 16)
            .collect();
        b.tensor(g, name, &[n as i32], DType::I32)
            .data_i32(&v)
            .quant_per_channel(&alloc::vec![scale; n], &alloc::vec![0; n], 0)
            .id()
    };
    let act = |b: &mut ModelBuilder, name: &str, shape: &[i32], scale: f32, zp: i64| {
        b.tensor(g, name, shape, DType::I8).quant(scale, zp).id()
    };
    let input = act(&mut b, "input", &[1, 16, 16, 1], 0.05, -3);
    let conv_scales: Vec<f32> = (0..8).map(|c| 0.01 + 0.002 * c as f32).collect();
    let conv_w = b
        .tensor(g, "conv_w", &[8, 3, 3, 1], DType::I8)
        .data(&pseudo_random_bytes(7, 72))
        .quant_per_channel(&conv_scales, &[0; 8], 0)
        .id();
    let conv_b = bias(&mut b, "conv_b", 8, 13, 0.0005);
    let conv = act(&mut b, "conv", &[1, 8, 8, 8], 0.04, -128);
    let dw_scales: Vec<f32> = (0..8).map(|c| 0.02 + 0.001 * c as f32).collect();
    let dw_w = b
        .tensor(g, "dw_w", &[1, 3, 3, 8], DType::I8)
        .data(&pseudo_random_bytes(11, 72))
        .quant_per_channel(&dw_scales, &[0; 8], 3)
        .id();
    let dw_b = bias(&mut b, "dw_b", 8, 17, 0.0008);
    let dw = act(&mut b, "dw", &[1, 8, 8, 8], 0.06, -128);
    let pool = act(&mut b, "pool", &[1, 1, 1, 8], 0.06, -128);
    let shape = b
        .tensor(g, "shape", &[2], DType::I32)
        .data_i32(&[1, 8])
        .id();
    let flat = act(&mut b, "flat", &[1, 8], 0.06, -128);
    let fc_w = b
        .tensor(g, "fc_w", &[4, 8], DType::I8)
        .data(&pseudo_random_bytes(19, 32))
        .quant(0.015, 0)
        .id();
    let fc_b = bias(&mut b, "fc_b", 4, 23, 0.0009);
    let logits = act(&mut b, "logits", &[1, 4], 0.25, 0);
    let probs = act(&mut b, "probs", &[1, 4], 1.0 / 256.0, -128);
    b.op(g, BuiltinOp::CONV_2D, &[input, conv_w, conv_b], &[conv])
        .conv_options(Padding::Same, 2, 2, Activation::Relu);
    b.op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[conv, dw_w, dw_b], &[dw])
        .depthwise_options(Padding::Same, 1, 1, 1, Activation::Relu6);
    b.op(g, BuiltinOp::AVERAGE_POOL_2D, &[dw], &[pool])
        .pool_options(Padding::Valid, (8, 8), (8, 8), Activation::None);
    b.op(g, BuiltinOp::RESHAPE, &[pool, shape], &[flat]);
    b.op(
        g,
        BuiltinOp::FULLY_CONNECTED,
        &[flat, fc_w, fc_b],
        &[logits],
    )
    .fc_options(Activation::None, false);
    b.op(g, BuiltinOp::SOFTMAX, &[logits], &[probs])
        .softmax_options(1.0);
    b.inputs(g, &[input]).outputs(g, &[probs]);
    b.finish()
}

/// A 1×1 float CONV_2D, then `op` on its output, whose outputs are the graph's:
/// ARG_MAX or ARG_MIN over channels (5 channels), SPLIT or SPLIT_V into two
/// along channels, or (any other op) SHAPE (6 channels). Their builtin data
/// (parsed, no OpData) moves the conv OpData's padding in the tail; the tail
/// probe measures them with TFLM and core/tests/builder_models.rs checks one.
pub fn conv_then(op: BuiltinOp) -> Vec<u8> {
    let arg = matches!(op, BuiltinOp::ARG_MAX | BuiltinOp::ARG_MIN);
    let channels = if arg { 5 } else { 6 };
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let x = b.tensor(g, "x", &[1, 2, 2, 3], DType::F32).id();
    let w = b
        .tensor(g, "w", &[channels, 1, 1, 3], DType::F32)
        .data_f32(&alloc::vec![0.5; 3 * channels as usize])
        .id();
    let bias = b
        .tensor(g, "b", &[channels], DType::F32)
        .data_f32(&alloc::vec![0.0; channels as usize])
        .id();
    let c = b.tensor(g, "c", &[1, 2, 2, channels], DType::F32).id();
    b.op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[c])
        .conv_options(Padding::Valid, 1, 1, Activation::None);
    let outs = match op {
        _ if arg => {
            let axis = b.tensor(g, "axis", &[1], DType::I32).data_i32(&[3]).id();
            let y = b.tensor(g, "y", &[1, 2, 2], DType::I32).id();
            b.op(g, op, &[c, axis], &[y]);
            alloc::vec![y]
        }
        BuiltinOp::SPLIT => {
            let axis = b.tensor(g, "axis", &[], DType::I32).data_i32(&[3]).id();
            let y0 = b.tensor(g, "y0", &[1, 2, 2, 3], DType::F32).id();
            let y1 = b.tensor(g, "y1", &[1, 2, 2, 3], DType::F32).id();
            b.op(g, BuiltinOp::SPLIT, &[axis, c], &[y0, y1]);
            alloc::vec![y0, y1]
        }
        BuiltinOp::SPLIT_V => {
            let sizes = b
                .tensor(g, "sizes", &[2], DType::I32)
                .data_i32(&[2, 4])
                .id();
            let axis = b.tensor(g, "axis", &[], DType::I32).data_i32(&[3]).id();
            let y0 = b.tensor(g, "y0", &[1, 2, 2, 2], DType::F32).id();
            let y1 = b.tensor(g, "y1", &[1, 2, 2, 4], DType::F32).id();
            b.op(g, BuiltinOp::SPLIT_V, &[c, sizes, axis], &[y0, y1]);
            alloc::vec![y0, y1]
        }
        _ => {
            let y = b.tensor(g, "shape", &[4], DType::I32).id();
            b.op(g, BuiltinOp::SHAPE, &[c], &[y]);
            alloc::vec![y]
        }
    };
    b.inputs(g, &[x]).outputs(g, &outs);
    b.finish()
}

/// The seed's RP2040 case: a small int8 CNN whose 5×5 convolution over 88
/// channels is the head's peak. With TFLM's reference kernels its minimum arena
/// plus 20 % fits a 264 KiB RP2040 with 48 KiB of RTOS and stacks; with
/// CMSIS-NN (what pico-tflmicro builds) that convolution also asks for an
/// im2col buffer of 2 × (5·5·88, rounded up to 4) int16 values — 8,800 B — in
/// the head at the same moment, and it no longer fits.
///
/// 64×64×1 input, CONV_2D 3×3/2 → 32×32×`RP2040_CHANNELS`, CONV_2D 5×5/1 (the
/// peak), AVERAGE_POOL_2D 32×32 → 1×1, CONV_2D 1×1 to 4 classes, RESHAPE, SOFTMAX.
pub fn rp2040_cnn() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: the RP2040 case, an int8 CNN whose 5x5 conv is the peak");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, 64, 64, 1], DType::I8)
        .quant(1.0 / 255.0, -128)
        .id();
    let mut net = Net {
        b,
        g,
        rng: XorShift(0x0b5e_55ed),
        x: input,
        hw: 64,
        c: 1,
        scale: 1.0 / 255.0,
        zp: -128,
        layer: 0,
        prefix: "cnn",
    };
    net.conv(3, 2, RP2040_CHANNELS, true);
    net.layer = 1;
    net.conv(5, 1, RP2040_CHANNELS, true);
    net.layer = 2;
    let output = net.classifier("cnn", 4);
    net.b.inputs(g, &[input]).outputs(g, &[output]);
    net.b.finish()
}

/// Channels of [`rp2040_cnn`]'s two large convolutions.
pub const RP2040_CHANNELS: i32 = 88;

/// Samples in [`rp2040_anomaly`]'s input window (three sensor axes each).
pub const ANOMALY_SAMPLES: i32 = 1024;
/// Channels of [`rp2040_anomaly`]'s two convolutions.
pub const ANOMALY_CHANNELS: i32 = 96;

/// The seed's other RP2040 case: an anomaly detector over a window of
/// three-axis sensor samples, a 1-D CNN and three fully connected layers, the
/// shape TFLite gives a Keras Conv1D model (height 1). Its arena plus 20 %
/// fits the part's 264 KiB on its own; the 48 KiB the RTOS and the stacks
/// take (what a device measurement shows) leave too little for it.
///
/// `[1, 1, ANOMALY_SAMPLES, 3]` int8 input; CONV_2D 1×7 and 1×5 (SAME, ReLU6)
/// to `ANOMALY_CHANNELS` channels each (the head's peak: both
/// `1024 × 96` activations, 2 × 98,304 B, are live during the second);
/// AVERAGE_POOL_2D 1×32 to `[1, 1, 32, 96]`; RESHAPE (Keras' Flatten) to
/// `[1, 3072]`; FULLY_CONNECTED 3,072 → 64 (ReLU) → 16 (ReLU) → 1, the
/// anomaly score.
pub fn rp2040_anomaly() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description(
        "microarena example: the seed's RP2040 anomaly detector, a 1-D CNN and three fully connected layers",
    );
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "window", &[1, 1, ANOMALY_SAMPLES, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = Net {
        b,
        g,
        rng: XorShift(0x00a0_a11e),
        x: input,
        hw: ANOMALY_SAMPLES,
        c: 3,
        scale: 1.0 / 128.0,
        zp: 0,
        layer: 0,
        prefix: "anomaly",
    };
    net.conv1d(7, ANOMALY_CHANNELS);
    net.layer = 1;
    net.conv1d(5, ANOMALY_CHANNELS);
    let width = ANOMALY_SAMPLES / 32;
    let pooled = net
        .b
        .tensor(g, "anomaly/pool", &[1, 1, width, net.c], DType::I8)
        .quant(net.scale, -128)
        .id();
    net.b
        .op(g, BuiltinOp::AVERAGE_POOL_2D, &[net.x], &[pooled])
        .pool_options(Padding::Valid, (32, 1), (32, 1), Activation::None);
    // Keras' Flatten: a RESHAPE to [1, 32 × 96] before the dense layers.
    let mut inputs = width * net.c;
    let shape = net
        .b
        .tensor(g, "anomaly/flatten_shape", &[2], DType::I32)
        .data_i32(&[1, inputs])
        .id();
    let flat = net
        .b
        .tensor(g, "anomaly/flatten", &[1, inputs], DType::I8)
        .quant(net.scale, -128)
        .id();
    net.b
        .op(g, BuiltinOp::RESHAPE, &[pooled, shape], &[flat])
        .reshape_options(&[1, inputs]);
    net.x = flat;
    for (i, (units, relu)) in [(64, true), (16, true), (1, false)].into_iter().enumerate() {
        let name = format!("anomaly/dense_{i}");
        let w_scale = net.rng.scale();
        let values: Vec<i8> = (0..units * inputs).map(|_| net.rng.weight()).collect();
        let biases: Vec<i32> = (0..units)
            .map(|_| (net.rng.next() % 2001) as i32 - 1000)
            .collect();
        let w = net
            .b
            .tensor(g, &format!("{name}/weights"), &[units, inputs], DType::I8)
            .quant(w_scale, 0)
            .data_i8(&values)
            .id();
        let bias = net
            .b
            .tensor(g, &format!("{name}/bias"), &[units], DType::I32)
            .quant(w_scale * net.scale, 0)
            .data_i32(&biases)
            .id();
        let (scale, zp, act) = if relu {
            (0.05, -128, Activation::Relu)
        } else {
            (0.1, 0, Activation::None)
        };
        let y = net
            .b
            .tensor(g, &name, &[1, units], DType::I8)
            .quant(scale, zp)
            .id();
        net.b
            .op(g, BuiltinOp::FULLY_CONNECTED, &[net.x, w, bias], &[y])
            .fc_options(act, false);
        (net.x, net.scale, inputs) = (y, scale, units);
    }
    let score = net.x;
    net.b.inputs(g, &[input]).outputs(g, &[score]);
    net.b.finish()
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )]

    use super::*;
    use crate::plan::PlannerKind;
    use crate::read::model::Model;
    use crate::read::ops::OpOptions;
    use crate::{Config, analyze, tflm::profile};

    #[test]
    fn head_matches_person_detect() {
        let bytes = mobilenet_v1_025_96_int8();
        let m = Model::parse(&bytes).unwrap();
        assert_eq!(m.operator_count(), 31);
        assert_eq!(m.tensor_count(), 89);
        let a = analyze(
            &m,
            &Config {
                profile: &profile::X86_64,
                planner: PlannerKind::TflmGreedy,
            },
        )
        .unwrap();
        // Spec §5.2 person_detect: 48×48×16 int8 = 36864 B and the 48×48×8 tensor feeding
        // it, 18432 B, are both live at op 2 ⇒ 36864 + 18432 = 55296.
        assert_eq!(a.head_bytes, 55296);
        assert_eq!(a.lower_bound_bytes, 55296);
        // Same structure ⇒ same tail: 488 + 2136 (89·24) + 1984 (31·64) + 864 builtin
        // (28·28 + 40 + 36 + 4) + 24304 persistent buffer + 128 + 64 = 29968.
        assert_eq!(a.tail_bytes, 29968);
        assert!(
            a.diagnostics
                .iter()
                .all(|d| d.severity != crate::tflm::analysis::Severity::Error),
            "{:?}",
            a.diagnostics
        );
    }

    /// The seed's anomaly detector on an RP2040: the arena alone "looks fine",
    /// the 48 KiB of RTOS and stacks a device measurement shows do not leave
    /// room for it (docs/rp2040-case.md).
    #[test]
    fn rp2040_anomaly_fits_alone_and_not_with_the_measured_reserves() {
        use crate::report::budget::{Budget, DEFAULT_HEADROOM_BP, Reserve, mcu_preset};
        use crate::report::measured::{self, Measured, Ram, Source};
        let bytes = rp2040_anomaly();
        let m = Model::parse(&bytes).unwrap();
        let ops: Vec<BuiltinOp> = m.main().operators.iter().map(|o| o.opcode).collect();
        assert_eq!(
            ops,
            [
                BuiltinOp::CONV_2D,
                BuiltinOp::CONV_2D,
                BuiltinOp::AVERAGE_POOL_2D,
                BuiltinOp::RESHAPE,
                BuiltinOp::FULLY_CONNECTED,
                BuiltinOp::FULLY_CONNECTED,
                BuiltinOp::FULLY_CONNECTED
            ]
        );
        let rp2040 = mcu_preset("RP2040").unwrap();
        let config = Config {
            profile: rp2040.profile().unwrap(),
            planner: PlannerKind::TflmGreedy,
        };
        let a = analyze(&m, &config).unwrap();
        // The head's peak, by hand: both 1 × 1024 × 96 int8 activations (98,304 B
        // each) and CMSIS-NN's im2col for the 1×5 convolution over 96 channels on
        // an ARMv6-M core, two columns of 5 · 96 int16 = 1,920 B.
        assert_eq!(a.head_bytes, 2 * 98_304 + 1_920);
        let alone = Budget {
            ram_bytes: rp2040.ram_bytes,
            reserves: alloc::vec![],
            headroom_bp: DEFAULT_HEADROOM_BP,
        }
        .check(a.minimum_bytes);
        assert!(alone.fits, "{alone:?}");
        // The device's figures (the seed's 48 KiB: RTOS 40 KiB, stacks 6 + 2 KiB).
        let line = include_str!("../../../docs/rp2040-anomaly-report.txt");
        let device = Measured::parse(line).unwrap();
        let (budget, figures) =
            measured::budget(&device, Ram::None, &[], DEFAULT_HEADROOM_BP, Source::Linked).unwrap();
        assert_eq!(budget.ram_bytes, 264 * 1024);
        assert_eq!(budget.reserved_bytes(), 48 * 1024);
        let (v, checked) = measured::check(
            &device,
            &budget,
            figures,
            (a.minimum_bytes, Source::Predicted),
        );
        assert!(!v.fits);
        // 264 KiB − 48 KiB = 221,184 B free; the bare minimum fits, the headroom does not.
        assert_eq!(v.available_bytes, 221_184);
        assert!(a.minimum_bytes < 221_184);
        let advice = measured::advice(&budget, &v, &checked);
        assert!(
            advice[0].contains("the largest reserve is rtos at 40960 B"),
            "{advice:?}"
        );
        assert!(
            advice[1].contains("the bare minimum arena fits"),
            "{advice:?}"
        );
        // Typed, the same reserves give the same verdict: only their source differs.
        let typed = Budget {
            reserves: alloc::vec![Reserve {
                name: "rtos_and_stacks".into(),
                bytes: 48 * 1024,
            }],
            ..budget.clone()
        };
        assert_eq!(typed.check(a.minimum_bytes), budget.check(a.minimum_bytes));
    }

    #[test]
    fn shapes_are_consistent() {
        let bytes = mobilenet_v1_025_96_int8();
        let m = Model::parse(&bytes).unwrap();
        let sg = m.main();
        let shape = |t: i32| sg.tensors[t as usize].shape.clone();
        let same_out = |n: i32, s: i32| (n + s - 1) / s;
        let mut seen = [0usize; 5];
        for op in &sg.operators {
            let x = shape(op.inputs[0]);
            let y = shape(op.outputs[0]);
            match (op.opcode, &op.options) {
                (BuiltinOp::CONV_2D, OpOptions::Conv(c))
                | (BuiltinOp::DEPTHWISE_CONV_2D, OpOptions::Conv(c)) => {
                    let w = shape(op.inputs[1]);
                    let bias = shape(op.inputs[2]);
                    assert_eq!(c.stride_w, c.stride_h);
                    assert_eq!(y[1], same_out(x[1], c.stride_h));
                    assert_eq!(y[2], same_out(x[2], c.stride_w));
                    if op.opcode == BuiltinOp::CONV_2D {
                        // filter [O, kh, kw, I]
                        assert_eq!(w[3], x[3]);
                        assert_eq!(y[3], w[0]);
                        seen[0] += 1;
                    } else {
                        // filter [1, kh, kw, C], multiplier 1
                        assert_eq!((w[0], w[1], w[2], w[3]), (1, 3, 3, x[3]));
                        assert_eq!(y[3], x[3]);
                        seen[1] += 1;
                    }
                    assert_eq!(bias, [y[3]]);
                    assert_eq!(
                        sg.tensors[op.inputs[1] as usize]
                            .quantization
                            .as_ref()
                            .unwrap()
                            .scales
                            .len(),
                        y[3] as usize
                    );
                }
                (BuiltinOp::AVERAGE_POOL_2D, OpOptions::Pool(p)) => {
                    // VALID: (in − filter) / stride + 1
                    assert_eq!(y[1], (x[1] - p.filter_h) / p.stride_h + 1);
                    assert_eq!(y[2], (x[2] - p.filter_w) / p.stride_w + 1);
                    assert_eq!(y[3], x[3]);
                    seen[2] += 1;
                }
                (BuiltinOp::RESHAPE, OpOptions::Reshape { new_shape }) => {
                    assert_eq!(x.iter().product::<i32>(), y.iter().product::<i32>());
                    assert_eq!(new_shape.as_deref(), Some(&y[..]));
                    seen[3] += 1;
                }
                (BuiltinOp::SOFTMAX, _) => {
                    assert_eq!(x, y);
                    seen[4] += 1;
                }
                other => panic!("unexpected op {other:?}"),
            }
        }
        assert_eq!(seen, [15, 13, 1, 1, 1]);
        assert_eq!(shape(sg.inputs[0]), [1, 96, 96, 1]);
        assert_eq!(shape(sg.outputs[0]), [1, 2]);
        // The channel plan of the 13 blocks.
        let pointwise: Vec<i32> = sg
            .operators
            .iter()
            .filter(|o| o.opcode == BuiltinOp::CONV_2D)
            .map(|o| shape(o.outputs[0])[3])
            .collect();
        assert_eq!(
            pointwise,
            [
                8, 16, 32, 32, 64, 64, 128, 128, 128, 128, 128, 128, 256, 256, 2
            ]
        );
    }
}
