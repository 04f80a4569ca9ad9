//! Builder models of the layer patterns converters emit, which banded
//! stages must stream: a PyTorch export's NCHW input with a leading
//! TRANSPOSE and explicit PAD before each strided layer, Keras'
//! ZeroPadding2D before stride-2 layers, MobileNet-v3's HARD_SWISH and
//! squeeze-excite MUL. Pseudo-random weights: the structure and sizes are
//! what matter.

use alloc::format;
use alloc::vec::Vec;

use super::builder::ModelBuilder;
use super::example::{Net, XorShift};
use crate::read::dtype::DType;
use crate::read::ops::{Activation, BuiltinOp, OpOptions, Padding};

fn net(
    b: ModelBuilder,
    g: usize,
    input: i32,
    hw: i32,
    c: i32,
    seed: u32,
    prefix: &'static str,
) -> Net {
    Net {
        b,
        g,
        rng: XorShift(seed),
        x: input,
        hw,
        c,
        scale: 1.0 / 128.0,
        zp: 0,
        layer: 0,
        prefix,
    }
}

/// The MobileNet-v2 1.0 topology at `hw`×`hw` (as
/// [`super::example::mobilenet_v2_int8`]) the way a PyTorch export reaches
/// TFLite: a `[1, 3, hw, hw]` NCHW input TRANSPOSEd to NHWC, and each
/// stride-2 convolution a PAD of one row and column on every side followed
/// by a VALID convolution (stride-1 layers keep SAME padding); residual
/// ADDs as in the paper.
pub fn mobilenet_v2_pytorch_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: MobileNet-v2 1.0 int8 as a PyTorch export writes it");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, 3, hw, hw], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let perm = b
        .tensor(g, "to_nhwc/perm", &[4], DType::I32)
        .data_i32(&[0, 2, 3, 1])
        .id();
    let nhwc = b
        .tensor(g, "to_nhwc", &[1, hw, hw, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    b.op(g, BuiltinOp::TRANSPOSE, &[input, perm], &[nhwc]);
    let mut net = net(b, g, nhwc, hw, 3, 0x1234_5678, "torch_mbv2");
    net.pad(1, 1);
    net.conv_with(3, 2, 32, true, Padding::Valid);
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
                net.conv_with(1, 1, c_in * t, true, Padding::Same);
            }
            net.layer += 1;
            if stride == 2 {
                net.pad(1, 1);
                net.depthwise_with(2, Padding::Valid);
            } else {
                net.depthwise_with(1, Padding::Same);
            }
            net.layer += 1;
            net.conv_with(1, 1, c, false, Padding::Same);
            if stride == 1 && c_in == c {
                net.add(skip);
            }
        }
    }
    net.layer += 1;
    net.conv_with(1, 1, 1280, true, Padding::Same);
    net.layer += 1;
    let probs = net.classifier("torch_mbv2", 1000);
    net.b.inputs(g, &[input]).outputs(g, &[probs]);
    net.b.finish()
}

/// The visual-wake-words MobileNet-v1 0.25 at 96×96×3 int8 as Keras
/// exports it: every stride-2 layer a ZeroPadding2D of one row and column
/// below and right (a PAD) followed by a VALID convolution; 13
/// depthwise-separable blocks (channels 16, 32/2, 32, 64/2, 64, 128/2,
/// 128×5, 256/2, 256), then the 2-class classifier.
pub fn mobilenet_v1_vww_keras_int8() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: MobileNet-v1 0.25 VWW 96x96x3 int8 as Keras exports it");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, 96, 96, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = net(b, g, input, 96, 3, 0x2545_f491, "keras_vww");
    net.pad(0, 1);
    net.conv_with(3, 2, 8, true, Padding::Valid);
    for (i, &(channels, stride)) in super::example::MOBILENET_V1_025_BLOCKS.iter().enumerate() {
        net.layer = i + 1;
        if stride == 2 {
            net.pad(0, 1);
            net.depthwise_with(2, Padding::Valid);
        } else {
            net.depthwise_with(1, Padding::Same);
        }
        net.conv_with(1, 1, channels, true, Padding::Same);
    }
    net.layer = 14;
    let probs = net.classifier("keras_vww", 2);
    net.b.inputs(g, &[input]).outputs(g, &[probs]);
    net.b.finish()
}

impl Net {
    /// HARD_SWISH of the current activation (int8, its own quantization).
    fn hard_swish(&mut self) {
        let name = format!("{}/hard_swish_{}", self.prefix, self.layer);
        let y = self.activation(&name, self.hw, self.c, 0.05, -100);
        let g = self.g;
        self.b.op(g, BuiltinOp::HARD_SWISH, &[self.x], &[y]);
        (self.x, self.scale, self.zp) = (y, 0.05, -100);
    }

    /// Squeeze-excite: AVERAGE_POOL_2D over the map, CONV_2D 1×1 to
    /// `c / 4` (ReLU6), CONV_2D 1×1 back to `c`, LOGISTIC, then MUL of the
    /// map by that `[1, 1, 1, c]` gate.
    fn squeeze_excite(&mut self) {
        let (x, hw, c, scale, zp) = (self.x, self.hw, self.c, self.scale, self.zp);
        let g = self.g;
        let name = format!("{}/se_{}", self.prefix, self.layer);
        let pooled = self.activation(&format!("{name}/pool"), 1, c, scale, zp);
        self.b
            .op(g, BuiltinOp::AVERAGE_POOL_2D, &[x], &[pooled])
            .pool_options(Padding::Valid, (hw, hw), (hw, hw), Activation::None);
        (self.x, self.hw) = (pooled, 1);
        self.conv_with(1, 1, (c / 4).max(8), true, Padding::Same);
        self.conv_with(1, 1, c, false, Padding::Same);
        let gate = self.activation(&format!("{name}/gate"), 1, c, 1.0 / 256.0, -128);
        self.b.op(g, BuiltinOp::LOGISTIC, &[self.x], &[gate]);
        let y = self.activation(&format!("{name}/mul"), hw, c, scale, zp);
        self.b
            .op(g, BuiltinOp::MUL, &[x, gate], &[y])
            .mul_options(Activation::None);
        (self.x, self.hw, self.c, self.scale, self.zp) = (y, hw, c, scale, zp);
    }
}

/// A MobileNet-v3-style int8 network at `hw`×`hw`×3: a stride-2 stem with
/// HARD_SWISH, then bottlenecks (expansion 1×1 + HARD_SWISH, depthwise 3×3,
/// squeeze-excite on some, projection 1×1, residual ADD where the shapes
/// match), then the classifier. The activations and the gate's MUL are
/// separate ops, as the TFLite converter writes them.
pub fn mobilenet_v3_style_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: MobileNet-v3-style int8 (HARD_SWISH, squeeze-excite)");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, hw, hw, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = net(b, g, input, hw, 3, 0x0d15_ea5e, "mbv3");
    net.conv_with(3, 2, 16, false, Padding::Same);
    net.hard_swish();
    // (expansion, output channels, stride, squeeze-excite).
    const BLOCKS: [(i32, i32, i32, bool); 6] = [
        (4, 16, 1, false),
        (4, 24, 2, false),
        (3, 24, 1, false),
        (3, 40, 2, true),
        (3, 40, 1, true),
        (6, 80, 2, false),
    ];
    for &(t, c, stride, se) in &BLOCKS {
        let (skip, c_in) = (net.x, net.c);
        net.layer += 1;
        net.conv_with(1, 1, c_in * t, false, Padding::Same);
        net.hard_swish();
        net.layer += 1;
        net.depthwise_with(stride, Padding::Same);
        if se {
            net.squeeze_excite();
        }
        net.layer += 1;
        net.conv_with(1, 1, c, false, Padding::Same);
        if stride == 1 && c_in == c {
            net.add(skip);
        }
    }
    net.layer += 1;
    let probs = net.classifier("mbv3", 10);
    net.b.inputs(g, &[input]).outputs(g, &[probs]);
    net.b.finish()
}

/// One squeeze-excite block at `hw`×`hw` int8, the gate computed before
/// the layers it scales: CONV_2D 3×3 to 32 channels, squeeze-excite (its
/// `[1, 1, 1, 32]` gate from the whole map), MUL by the gate, then a 1×1
/// expansion to 64, a stride-2 depthwise and a 1×1 projection to 8.
pub fn squeeze_excite_block_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: a squeeze-excite block int8");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, hw, hw, 8], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = net(b, g, input, hw, 8, 0x5eed_0001, "se");
    net.conv_with(3, 1, 32, true, Padding::Same);
    net.layer += 1;
    net.squeeze_excite();
    net.layer += 1;
    net.conv_with(1, 1, 64, true, Padding::Same);
    net.depthwise_with(2, Padding::Same);
    net.layer += 1;
    net.conv_with(1, 1, 8, false, Padding::Same);
    let out = net.x;
    net.b.inputs(g, &[input]).outputs(g, &[out]);
    net.b.finish()
}

/// A small detection neck at `hw`×`hw` int8 (FOMO / YOLO-style heads
/// without the upsampling): CONV_2D 3×3 to 32 channels, two branches from
/// it (a 1×1 convolution to 16 channels and a 3×3 depthwise) joined by a
/// CONCATENATION along channels, a 1×1 head over the joined map and a
/// second, stride-2 3×3 head over the depthwise branch: two graph outputs.
pub fn detection_neck_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: a two-branch detection neck with two heads, int8");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, hw, hw, 8], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = net(b, g, input, hw, 8, 0x0f0e_0001, "neck");
    net.conv_with(3, 1, 32, true, Padding::Same);
    let (x, c) = (net.x, net.c);
    net.layer += 1;
    net.conv_with(1, 1, 16, true, Padding::Same);
    let a = net.x;
    (net.x, net.c) = (x, c);
    net.layer += 1;
    net.depthwise_with(1, Padding::Same);
    let d = net.x;
    // Both branches end in ReLU6 with one quantization, as CONCATENATION needs.
    let joined = net.activation("neck/concat", hw, 48, net.scale, net.zp);
    net.b
        .op(g, BuiltinOp::CONCATENATION, &[a, d], &[joined])
        .concat_options(3, Activation::None);
    (net.x, net.c) = (joined, 48);
    net.layer += 1;
    net.conv_with(1, 1, 8, false, Padding::Same);
    let head1 = net.x;
    (net.x, net.c, net.hw) = (d, 32, hw);
    net.layer += 1;
    net.conv_with(3, 2, 4, false, Padding::Same);
    let head2 = net.x;
    net.b.inputs(g, &[input]).outputs(g, &[head1, head2]);
    net.b.finish()
}

impl Net {
    /// RESIZE_BILINEAR (half-pixel centres, as PyTorch's `Upsample` with
    /// `align_corners=False` converts) or RESIZE_NEAREST_NEIGHBOR of the
    /// current activation by 2, its quantization kept (TFLM's kernels do
    /// not requantize).
    fn upsample(&mut self, bilinear: bool) {
        let hw = self.hw * 2;
        let name = format!("{}/up_{}", self.prefix, self.layer);
        let g = self.g;
        let size = self
            .b
            .tensor(g, &format!("{name}/size"), &[2], DType::I32)
            .data_i32(&[hw, hw])
            .id();
        let y = self.activation(&name, hw, self.c, self.scale, self.zp);
        let code = if bilinear {
            BuiltinOp::RESIZE_BILINEAR
        } else {
            BuiltinOp::RESIZE_NEAREST_NEIGHBOR
        };
        self.b
            .op(g, code, &[self.x, size], &[y])
            .options(OpOptions::Resize {
                align_corners: false,
                half_pixel_centers: bilinear,
            });
        (self.x, self.hw) = (y, hw);
    }

    /// CONCATENATION along channels of the current activation and `skips`
    /// (each `(tensor, channels)`, of its size and quantization).
    fn concat(&mut self, skips: &[(i32, i32)]) {
        let name = format!("{}/concat_{}", self.prefix, self.layer);
        let c = self.c + skips.iter().map(|s| s.1).sum::<i32>();
        let y = self.activation(&name, self.hw, c, self.scale, self.zp);
        let mut inputs = alloc::vec![self.x];
        inputs.extend(skips.iter().map(|s| s.0));
        let g = self.g;
        self.b
            .op(g, BuiltinOp::CONCATENATION, &inputs, &[y])
            .concat_options(3, Activation::None);
        (self.x, self.c) = (y, c);
    }
}

/// A U-Net-style segmenter at `hw`×`hw`×3 int8 (`hw` a multiple of 4): an
/// encoder of 3×3 convolutions (16 channels at full size, 32 at half, 64 at
/// a quarter, twice), then a decoder that upsamples ×2 (RESIZE_BILINEAR
/// with half-pixel centres, then RESIZE_NEAREST_NEIGHBOR), joins the
/// encoder's map of that size (a CONCATENATION skip) and convolves 3×3;
/// a 1×1 head to 2 classes at full size.
pub fn unet_decoder_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: a U-Net-style encoder-decoder int8 (RESIZE, skips)");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, hw, hw, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = net(b, g, input, hw, 3, 0x0e0e_0001, "unet");
    net.conv_with(3, 1, 16, true, Padding::Same);
    let e1 = net.x;
    net.layer += 1;
    net.conv_with(3, 2, 32, true, Padding::Same);
    let e2 = net.x;
    net.layer += 1;
    net.conv_with(3, 2, 64, true, Padding::Same);
    net.layer += 1;
    net.conv_with(3, 1, 64, true, Padding::Same);
    net.layer += 1;
    net.upsample(true);
    net.concat(&[(e2, 32)]);
    net.conv_with(3, 1, 32, true, Padding::Same);
    net.layer += 1;
    net.upsample(false);
    net.concat(&[(e1, 16)]);
    net.conv_with(3, 1, 16, true, Padding::Same);
    net.layer += 1;
    net.conv_with(1, 1, 2, false, Padding::Same);
    let out = net.x;
    net.b.inputs(g, &[input]).outputs(g, &[out]);
    net.b.finish()
}

/// A YOLO-style detector at `hw`×`hw`×3 int8 (`hw` a multiple of 16): a
/// backbone of stride-2 3×3 convolutions (16 channels at ½, P3 with 32 at
/// ¼, P4 with 64 at ⅛, P5 with 128 at 1/16), an FPN neck
/// (P5 1×1 to 64, RESIZE_NEAREST_NEIGHBOR ×2, CONCATENATION with P4, 1×1
/// to 64; 1×1 to 32, ×2, CONCATENATION with P3, 3×3 to 32) and two 1×1
/// heads (at P3 and P4, 3 × (5 + 2) outputs): two graph outputs.
pub fn yolo_neck_int8(hw: i32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: a YOLO-style FPN neck with two heads, int8");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "input", &[1, hw, hw, 3], DType::I8)
        .quant(1.0 / 128.0, 0)
        .id();
    let mut net = net(b, g, input, hw, 3, 0x4010_0001, "yolo");
    net.conv_with(3, 2, 16, true, Padding::Same);
    net.layer += 1;
    net.conv_with(3, 2, 32, true, Padding::Same);
    let p3 = net.x;
    net.layer += 1;
    net.conv_with(3, 2, 64, true, Padding::Same);
    let p4 = net.x;
    net.layer += 1;
    net.conv_with(3, 2, 128, true, Padding::Same);
    net.layer += 1;
    net.conv_with(1, 1, 64, true, Padding::Same);
    net.layer += 1;
    net.upsample(false);
    net.concat(&[(p4, 64)]);
    net.conv_with(1, 1, 64, true, Padding::Same);
    let n4 = (net.x, net.hw);
    net.layer += 1;
    net.conv_with(1, 1, 32, true, Padding::Same);
    net.layer += 1;
    net.upsample(false);
    net.concat(&[(p3, 32)]);
    net.conv_with(3, 1, 32, true, Padding::Same);
    net.layer += 1;
    net.conv_with(1, 1, 21, false, Padding::Same);
    let head3 = net.x;
    (net.x, net.hw, net.c) = (n4.0, n4.1, 64);
    (net.scale, net.zp) = (6.0 / 255.0, -128);
    net.layer += 1;
    net.conv_with(1, 1, 21, false, Padding::Same);
    let head4 = net.x;
    net.b.inputs(g, &[input]).outputs(g, &[head3, head4]);
    net.b.finish()
}

/// The keyword-spotting DS-CNN (Zhang et al. 2017, "Hello Edge"; the
/// small model of Arm's ML zoo and MLPerf Tiny) int8: a `[1, 49, 10, 1]`
/// MFCC input, CONV_2D 10×4 / 2 SAME to 64 channels, four depthwise-separable
/// blocks (3×3 depthwise, 1×1 to 64, ReLU), the global pooling, a
/// FULLY_CONNECTED to 12 keywords and SOFTMAX. The pooling is an
/// AVERAGE_POOL_2D over the whole 25×5 map as the original graph writes it,
/// or with `mean` a MEAN over H and W (keep_dims off, `[1, 64]`) as Keras'
/// GlobalAveragePooling2D converts.
pub fn ds_cnn_kws_int8(mean: bool) -> Vec<u8> {
    const C: i32 = 64;
    let mut b = ModelBuilder::new();
    b.description("microarena example: DS-CNN keyword spotting int8");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "mfcc", &[1, 49, 10, 1], DType::I8)
        .quant(0.58, 83)
        .id();
    let mut net = net(b, g, input, 0, 1, 0x0bad_c0de, "ds_cnn");
    let relu = |net: &mut Net, name: alloc::string::String, c: i32| {
        net.b
            .tensor(g, &name, &[1, 25, 5, c], DType::I8)
            .quant(RELU_SCALE, -128)
            .id()
    };
    const RELU_SCALE: f32 = 0.05;
    let (w, bias) = net.weights("ds_cnn/conv_0", [C, 10, 4, 1], 0);
    let y = relu(&mut net, "ds_cnn/conv_0/relu".into(), C);
    net.b
        .op(g, BuiltinOp::CONV_2D, &[input, w, bias], &[y])
        .conv_options(Padding::Same, 2, 2, Activation::Relu);
    (net.x, net.c, net.scale, net.zp) = (y, C, RELU_SCALE, -128);
    for block in 1..=4 {
        let name = format!("ds_cnn/dw_{block}");
        let (w, bias) = net.weights(&name, [1, 3, 3, C], 3);
        let y = relu(&mut net, format!("{name}/relu"), C);
        net.b
            .op(g, BuiltinOp::DEPTHWISE_CONV_2D, &[net.x, w, bias], &[y])
            .depthwise_options(Padding::Same, 1, 1, 1, Activation::Relu);
        net.x = y;
        let name = format!("ds_cnn/pw_{block}");
        let (w, bias) = net.weights(&name, [C, 1, 1, C], 0);
        let y = relu(&mut net, format!("{name}/relu"), C);
        net.b
            .op(g, BuiltinOp::CONV_2D, &[net.x, w, bias], &[y])
            .conv_options(Padding::Same, 1, 1, Activation::Relu);
        net.x = y;
    }
    let pooled = net
        .b
        .tensor(g, "ds_cnn/pool", &[1, C], DType::I8)
        .quant(RELU_SCALE, -128)
        .id();
    if mean {
        let axes = net
            .b
            .tensor(g, "ds_cnn/pool/axes", &[2], DType::I32)
            .data_i32(&[1, 2])
            .id();
        net.b
            .op(g, BuiltinOp::MEAN, &[net.x, axes], &[pooled])
            .options(OpOptions::Reducer { keep_dims: false });
    } else {
        let map = net
            .b
            .tensor(g, "ds_cnn/pool/4d", &[1, 1, 1, C], DType::I8)
            .quant(RELU_SCALE, -128)
            .id();
        net.b
            .op(g, BuiltinOp::AVERAGE_POOL_2D, &[net.x], &[map])
            .pool_options(Padding::Valid, (5, 25), (5, 25), Activation::None);
        let shape = net
            .b
            .tensor(g, "ds_cnn/pool/shape", &[2], DType::I32)
            .data_i32(&[1, C])
            .id();
        net.b
            .op(g, BuiltinOp::RESHAPE, &[map, shape], &[pooled])
            .reshape_options(&[1, C]);
    }
    let values: Vec<i8> = (0..12 * C).map(|k| ((k * 37 % 251) - 125) as i8).collect();
    let w = net
        .b
        .tensor(g, "ds_cnn/fc/weights", &[12, C], DType::I8)
        .quant(0.0004, 0)
        .data_i8(&values)
        .id();
    let bias_values: Vec<i32> = (0..12).map(|k| k * 97 - 500).collect();
    let bias = net
        .b
        .tensor(g, "ds_cnn/fc/bias", &[12], DType::I32)
        .quant(0.0004 * RELU_SCALE, 0)
        .data_i32(&bias_values)
        .id();
    let logits = net
        .b
        .tensor(g, "ds_cnn/logits", &[1, 12], DType::I8)
        .quant(0.12, 10)
        .id();
    net.b
        .op(g, BuiltinOp::FULLY_CONNECTED, &[pooled, w, bias], &[logits])
        .fc_options(Activation::None, false);
    net.softmax_output("ds_cnn/probabilities", logits, &[1, 12], input)
}

/// A keyword-spotting CNN (the "CNN" of Zhang et al. 2017, "Hello Edge")
/// int8 as Keras converts it: a `[1, 49, 10, 1]` MFCC input, CONV_2D 10×4
/// SAME to 28 channels (ReLU), CONV_2D 10×4 VALID stride 2×1 to 30 (ReLU),
/// Keras' Flatten as a RESHAPE to `[1, 4200]`, FULLY_CONNECTED to 16
/// (linear), to 128 (ReLU), to 12 keywords and SOFTMAX.
pub fn cnn_kws_int8() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    b.description("microarena example: CNN keyword spotting int8 (Keras Flatten + Dense)");
    let g = b.named_subgraph("main");
    let input = b
        .tensor(g, "mfcc", &[1, 49, 10, 1], DType::I8)
        .quant(0.58, 83)
        .id();
    let mut net = net(b, g, input, 0, 1, 0x00c0_ffee, "cnn");
    const RELU_SCALE: f32 = 0.05;
    let mut x = input;
    for (k, (c, shape, stride_h, padding)) in [
        (28, [1, 49, 10, 28], 1, Padding::Same),
        (30, [1, 20, 7, 30], 2, Padding::Valid),
    ]
    .into_iter()
    .enumerate()
    {
        let in_c = if k == 0 { 1 } else { 28 };
        let (w, bias) = net.weights(&format!("cnn/conv_{k}"), [c, 10, 4, in_c], 0);
        let y = net
            .b
            .tensor(g, &format!("cnn/conv_{k}/relu"), &shape, DType::I8)
            .quant(RELU_SCALE, -128)
            .id();
        net.b
            .op(g, BuiltinOp::CONV_2D, &[x, w, bias], &[y])
            .conv_options(padding, 1, stride_h, Activation::Relu);
        (x, net.scale) = (y, RELU_SCALE);
    }
    let flat = net
        .b
        .tensor(g, "cnn/flatten", &[1, 4200], DType::I8)
        .quant(RELU_SCALE, -128)
        .id();
    let shape = net
        .b
        .tensor(g, "cnn/flatten/shape", &[2], DType::I32)
        .data_i32(&[1, 4200])
        .id();
    net.b
        .op(g, BuiltinOp::RESHAPE, &[x, shape], &[flat])
        .reshape_options(&[1, 4200]);
    x = flat;
    let mut depth_in = 4200;
    // Weight scales about 0.02 / √(inputs): outputs of the activations' range.
    let layers = [
        (16, Activation::None, 0.0003),
        (128, Activation::Relu, 0.005),
        (12, Activation::None, 0.002),
    ];
    for (k, (depth, act, w_scale)) in layers.into_iter().enumerate() {
        let values: Vec<i8> = (0..depth * depth_in).map(|_| net.rng.weight()).collect();
        let w = net
            .b
            .tensor(
                g,
                &format!("cnn/fc_{k}/weights"),
                &[depth, depth_in],
                DType::I8,
            )
            .quant(w_scale, 0)
            .data_i8(&values)
            .id();
        let bias_values: Vec<i32> = (0..depth).map(|j| j * 31 - 200).collect();
        let bias = net
            .b
            .tensor(g, &format!("cnn/fc_{k}/bias"), &[depth], DType::I32)
            .quant(w_scale * net.scale, 0)
            .data_i32(&bias_values)
            .id();
        let y = net
            .b
            .tensor(g, &format!("cnn/fc_{k}"), &[1, depth], DType::I8)
            .quant(0.1, if act == Activation::Relu { -128 } else { 0 })
            .id();
        net.b
            .op(g, BuiltinOp::FULLY_CONNECTED, &[x, w, bias], &[y])
            .fc_options(act, false);
        (x, net.scale, depth_in) = (y, 0.1, depth);
    }
    net.softmax_output("cnn/probabilities", x, &[1, 12], input)
}
