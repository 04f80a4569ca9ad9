//! Windowed ops in place by rows (CONV_2D, DEPTHWISE_CONV_2D, the pools
//! writing their output over a dying input through a ring of a few output
//! rows): builder models where it must and must not happen, each run
//! bit-identical to the plain run in exactly the predicted arena, the rings
//! sized as worked out by hand, and images whose marks or rings lie refused
//! at construction.

mod predicted;

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::build::example::pseudo_random_bytes;
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, Padding};
use microarena_image as rl;
use microarena_runtime::{Error, Interpreter};
use predicted::{IN_PLACE, PLAIN, Run};

/// One windowed op after a requantize: its kind, its geometry and types.
#[derive(Debug, Clone, Copy)]
struct Case {
    op: BuiltinOp,
    dtype: DType,
    /// Input H = W, input channels, output channels.
    size: i32,
    ci: i32,
    co: i32,
    filter: i32,
    stride: i32,
    padding: Padding,
    dilation: i32,
}

const DW: Case = Case {
    op: BuiltinOp::DEPTHWISE_CONV_2D,
    dtype: DType::I8,
    size: 48,
    ci: 16,
    co: 16,
    filter: 3,
    stride: 1,
    padding: Padding::Same,
    dilation: 1,
};

fn out_size(c: &Case) -> i32 {
    let span = (c.filter - 1) * c.dilation + 1;
    match c.padding {
        Padding::Same => (c.size + c.stride - 1) / c.stride,
        Padding::Valid => (c.size - span) / c.stride + 1,
    }
}

/// x (one channel) → 1×1 CONV_2D → a → the case's op → y (graph output);
/// with `read_later` an ADD of a and a also reads `a` after the op. x is
/// smaller than a, so the plain head peaks at the case's op, and every case
/// saves more than the 4 KiB a windowed op by rows must save.
fn model(c: &Case, read_later: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let x = act(&mut b, g, c.dtype, "x", &[1, c.size, c.size, 1], 0);
    let a = act(&mut b, g, c.dtype, "a", &[1, c.size, c.size, c.ci], 1);
    let expand = Case {
        op: BuiltinOp::CONV_2D,
        ci: 1,
        co: c.ci,
        filter: 1,
        stride: 1,
        padding: Padding::Same,
        dilation: 1,
        ..*c
    };
    windowed(&mut b, g, &expand, x, a);
    let o = out_size(c);
    let pool = matches!(c.op, BuiltinOp::MAX_POOL_2D | BuiltinOp::AVERAGE_POOL_2D);
    // A pool keeps its input's quantization.
    let y = act(
        &mut b,
        g,
        c.dtype,
        "y",
        &[1, o, o, c.co],
        if pool { 1 } else { 2 },
    );
    windowed(&mut b, g, c, a, y);
    if read_later {
        let z = act(&mut b, g, c.dtype, "z", &[1, c.size, c.size, c.ci], 3);
        b.op(g, BuiltinOp::ADD, &[a, a], &[z])
            .add_options(Activation::None);
        b.inputs(g, &[x]).outputs(g, &[y, z]);
    } else {
        b.inputs(g, &[x]).outputs(g, &[y]);
    }
    b.finish()
}

/// An activation tensor of type `dt` (quantized for the integer types).
fn act(b: &mut ModelBuilder, g: usize, dt: DType, name: &str, shape: &[i32], k: i64) -> i32 {
    let t = b.tensor(g, name, shape, dt);
    match dt {
        DType::I8 => t.quant(0.05 + 0.01 * k as f32, k - 3).id(),
        DType::I16 => t.quant(0.002 + 0.0005 * k as f32, 0).id(),
        _ => t.id(),
    }
}

/// The case's op from `x` to `y`, with pseudo-random weights and a bias of
/// the type its kernel reads.
fn windowed(b: &mut ModelBuilder, g: usize, c: &Case, x: i32, y: i32) {
    let (dt, int) = (c.dtype, c.dtype != DType::F32);
    if matches!(c.op, BuiltinOp::MAX_POOL_2D | BuiltinOp::AVERAGE_POOL_2D) {
        b.op(g, c.op, &[x], &[y]).pool_options(
            c.padding,
            (c.stride, c.stride),
            (c.filter, c.filter),
            Activation::None,
        );
        return;
    }
    let depthwise = c.op == BuiltinOp::DEPTHWISE_CONV_2D;
    let wshape = if depthwise {
        [1, c.filter, c.filter, c.co]
    } else {
        [c.co, c.filter, c.filter, c.ci]
    };
    let n = wshape.iter().product::<i32>() as usize;
    let raw = pseudo_random_bytes(7 + (c.filter * c.ci) as u32, n);
    let w = b.tensor(g, "w", &wshape, if int { DType::I8 } else { DType::F32 });
    let w = if int {
        let scales: Vec<f32> = (0..c.co).map(|k| 0.01 + 0.002 * k as f32).collect();
        let axis = if depthwise { 3 } else { 0 };
        w.data(&raw)
            .quant_per_channel(&scales, &vec![0; c.co as usize], axis)
            .id()
    } else {
        let v: Vec<f32> = raw.iter().map(|&v| f32::from(v as i8) / 64.0).collect();
        w.data_f32(&v).id()
    };
    let zeros = vec![0; c.co as usize];
    let bias = match dt {
        DType::I8 => {
            let v: Vec<i32> = (0..c.co).map(|k| k * 16 - 40).collect();
            b.tensor(g, "b", &[c.co], DType::I32)
                .data_i32(&v)
                .quant_per_channel(&vec![0.0005; c.co as usize], &zeros, 0)
                .id()
        }
        DType::I16 => {
            let v: Vec<u8> = (0..c.co)
                .flat_map(|k| (i64::from(k) * 64 - 100).to_le_bytes())
                .collect();
            b.tensor(g, "b", &[c.co], DType::I64)
                .data(&v)
                .quant_per_channel(&vec![0.00002; c.co as usize], &zeros, 0)
                .id()
        }
        _ => {
            let v: Vec<f32> = (0..c.co).map(|k| k as f32 / 8.0 - 0.5).collect();
            b.tensor(g, "b", &[c.co], DType::F32).data_f32(&v).id()
        }
    };
    let built = b.op(g, c.op, &[x, w, bias], &[y]);
    let built = if depthwise {
        built.depthwise_options(
            c.padding,
            c.stride,
            c.stride,
            c.co / c.ci,
            Activation::Relu6,
        )
    } else {
        built.conv_options(c.padding, c.stride, c.stride, Activation::Relu)
    };
    built.dilation(c.dilation, c.dilation);
}

/// Runs `bytes` lowered with `options` in exactly the predicted arena.
fn run(bytes: &[u8], options: LowerOptions) -> Run {
    predicted::run(bytes, options, 31)
}

/// (op, slot, ring bytes) of each alias.
fn marks(r: &Run) -> Vec<(usize, usize, u64)> {
    r.in_place
        .iter()
        .map(|a| (a.op, a.slot, a.ring_bytes))
        .collect()
}

fn elem(dt: DType) -> u64 {
    match dt {
        DType::I8 => 1,
        DType::I16 => 2,
        _ => 4,
    }
}

#[test]
fn windowed_ops_run_in_place_bit_identical_with_the_rings_worked_by_hand() {
    // (case, output rows its ring holds). A SAME window of f rows at stride
    // 1 reads (f − 1)/2 rows above its own: with rows of equal size, the
    // rows computed since the last one written are that many plus one.
    // Stride 2, VALID, narrower or fewer rows: output row r never reaches
    // the input rows its own window reads, so one row waits.
    let cases: [(Case, u64); 11] = [
        (DW, 2),
        (Case { filter: 5, ..DW }, 3),
        (Case { dilation: 2, ..DW }, 3),
        (Case { stride: 2, ..DW }, 1),
        (
            Case {
                padding: Padding::Valid,
                ..DW
            },
            1,
        ),
        (
            Case {
                dtype: DType::F32,
                ..DW
            },
            2,
        ),
        (
            Case {
                dtype: DType::I16,
                ..DW
            },
            2,
        ),
        // A 1×1 projection 16 → 4 channels.
        (
            Case {
                op: BuiltinOp::CONV_2D,
                co: 4,
                filter: 1,
                ..DW
            },
            1,
        ),
        // A 3×3 convolution at stride 2.
        (
            Case {
                op: BuiltinOp::CONV_2D,
                stride: 2,
                ..DW
            },
            1,
        ),
        (
            Case {
                op: BuiltinOp::MAX_POOL_2D,
                filter: 2,
                stride: 2,
                ..DW
            },
            1,
        ),
        (
            Case {
                op: BuiltinOp::AVERAGE_POOL_2D,
                ..DW
            },
            2,
        ),
    ];
    for (c, rows) in cases {
        let bytes = model(&c, false);
        let plain = run(&bytes, PLAIN);
        let fast = run(&bytes, IN_PLACE);
        let o = out_size(&c) as u64;
        let ring = rows * o * c.co as u64 * elem(c.dtype);
        assert_eq!(marks(&fast), [(1, 0, ring)], "{c:?}");
        assert_eq!(fast.outputs, plain.outputs, "{c:?}");
        assert_eq!(plain.high_water, plain.predicted, "{c:?}");
        assert_eq!(fast.high_water, fast.predicted, "{c:?}");
        // Live at the op: the input and the ring instead of the input and
        // the output; at the 1×1 expansion before it, x and a (each rounded
        // up to 16).
        let up = |v: u64| v.div_ceil(16) * 16;
        let plane = (c.size * c.size) as u64 * elem(c.dtype);
        let (x, a) = (up(plane), up(plane * c.ci as u64));
        let out_bytes = up(o * o * c.co as u64 * elem(c.dtype));
        assert_eq!(plain.head, (x + a).max(a + out_bytes), "{c:?}");
        assert_eq!(fast.head, (x + a).max(a + up(ring)), "{c:?}");
        // With OpData in flash and banded execution asked for too.
        let all = LowerOptions {
            opdata: OpDataIn::Flash,
            execution: Execution::Banded,
            in_place: true,
        };
        let both = run(&bytes, all);
        assert_eq!(both.outputs, plain.outputs, "{c:?}");
        assert_eq!(both.high_water, both.predicted, "{c:?}");
    }
}

#[test]
fn a_larger_output_or_an_input_read_later_is_not_overwritten() {
    let grow = [
        // Depth multiplier 2: the output is twice the input.
        Case { co: 32, ..DW },
        // A 1×1 expansion 16 → 32.
        Case {
            op: BuiltinOp::CONV_2D,
            co: 32,
            filter: 1,
            ..DW
        },
    ];
    for c in grow {
        let bytes = model(&c, false);
        let fast = run(&bytes, IN_PLACE);
        assert_eq!(marks(&fast), [], "{c:?}");
        assert_eq!(fast.outputs, run(&bytes, PLAIN).outputs);
    }
    // A small layer (12×12×8: 1,152 B out, a 192 B ring) saves less than
    // the 4 KiB of stack running by rows costs: it runs whole.
    let small = Case {
        size: 12,
        ci: 8,
        co: 8,
        ..DW
    };
    let bytes = model(&small, false);
    assert_eq!(marks(&run(&bytes, IN_PLACE)), []);
    // The ADD reads `a` after the depthwise: it stays whole.
    let bytes = model(&DW, true);
    let fast = run(&bytes, IN_PLACE);
    assert!(marks(&fast).iter().all(|m| m.0 != 1), "{:?}", marks(&fast));
    assert_eq!(fast.outputs, run(&bytes, PLAIN).outputs);
    assert_eq!(fast.high_water, fast.predicted);
}

#[test]
fn a_ring_too_small_or_an_output_elsewhere_is_refused_at_construction() {
    let bytes = model(&DW, false);
    let model = Model::parse(&bytes).expect("parse");
    let image = lower_with(&model, &IN_PLACE).expect("lower");
    let need = runtime_arena_with(&model, &IN_PLACE).expect("arena");
    assert_eq!(need.in_place.len(), 1);
    let word = |img: &[u8], at: usize| u32::from_le_bytes(img[at..at + 4].try_into().unwrap());
    let ops = word(&image, rl::header::OPS_OFF) as usize;
    let tensors = word(&image, rl::header::TENSORS_OFF) as usize;
    let dw = ops + rl::OP_BYTES;
    assert_eq!(image[dw + rl::op::IN_PLACE], 1);
    let refused = |img: &[u8], what: &str| {
        let mut arena = vec![0u8; need.total_bytes as usize + 64];
        match Interpreter::new(img, &mut arena) {
            Err(Error::InvalidOp {
                op_index, what: w, ..
            }) => {
                assert_eq!(op_index, 1);
                assert_eq!(w, what);
            }
            other => panic!("expected InvalidOp, got {other:?}"),
        }
    };
    // One byte short of the two rows.
    let mut short = image.clone();
    let at = dw + rl::op::SCRATCH_BYTES;
    let less = word(&short, at) - 1;
    short[at..at + 4].copy_from_slice(&less.to_le_bytes());
    refused(
        &short,
        "an in-place windowed op's ring is smaller than the rows it holds",
    );
    // The output 16 bytes into the input.
    let y = u16::from_le_bytes([image[dw + rl::op::OUTPUT], image[dw + rl::op::OUTPUT + 1]]);
    let y = usize::from(y);
    let y_loc = tensors + y * rl::TENSOR_BYTES + rl::tensor::LOCATION;
    let mut moved = image.clone();
    let at = word(&moved, y_loc) + 16;
    moved[y_loc..y_loc + 4].copy_from_slice(&at.to_le_bytes());
    refused(
        &moved,
        "an in-place windowed op's output does not start at its input and fit in it",
    );
    // The ring moved over the input.
    let mut over = image.clone();
    let a_loc = word(&image, tensors + rl::TENSOR_BYTES + rl::tensor::LOCATION);
    let s = dw + rl::op::SCRATCH_OFF;
    over[s..s + 4].copy_from_slice(&(a_loc + 32).to_le_bytes());
    refused(&over, "an in-place windowed op's ring overlaps its input");
    let mut arena = vec![0u8; need.total_bytes as usize];
    assert!(Interpreter::new(&image, &mut arena).is_ok());
}
