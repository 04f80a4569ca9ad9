//! What-if input shapes: give a graph input another shape (a shorter audio
//! window, a smaller image, another batch) and re-derive every tensor shape of
//! the main subgraph, so the arena can be re-planned without re-converting
//! the model.
//!
//! [`with_input_shapes`] is pure: it returns a modified copy of the [`Model`]
//! (shapes and byte sizes), which every later stage (`analyze`,
//! `lower::runtime_arena`, the report) takes as it is. Propagation follows
//! the operators in order; an op whose inputs did not change keeps its output
//! shapes. Rules exist for the CNN ops (CONV_2D, DEPTHWISE_CONV_2D, pools),
//! FULLY_CONNECTED, RESHAPE (−1 and the shape input), SOFTMAX and the other
//! shape-preserving ops, broadcasting elementwise ops, UNIDIRECTIONAL_SEQUENCE_LSTM
//! (time and batch), SVDF, CONCATENATION, STRIDED_SLICE, MEAN/SUM, PAD,
//! QUANTIZE/DEQUANTIZE. Anything else whose input changed is a
//! [`ShapeError`] naming the op and the tensor.
//!
//! Three rules re-derive what a converter would have written at the new
//! size: a RESHAPE that flattened trailing dimensions (Keras `Flatten`, as in
//! micro_speech_lstm's `[1, 49, 80] -> [-1, 3920]`) keeps flattening them;
//! FULLY_CONNECTED weights that consumed the whole last input dimension
//! follow it; a pool whose window covered the whole feature map stays global
//! (its window is rewritten in the copy). Weight values stay as they
//! are: they live in flash and do not change the arena.

use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use crate::read::model::Model;
use crate::read::ops::{BuiltinOp as B, OpOptions, PoolOptions};
use microarena_image::geometry::{out_size, slice_axis};

/// Why the new shapes cannot be derived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShapeError {
    /// An override is not `NAME=DIMS` with positive integer dims.
    Syntax {
        /// The override as given.
        text: String,
        /// What is wrong with it.
        problem: SyntaxProblem,
    },
    /// An override names no graph input of the main subgraph.
    NotAnInput {
        /// The name (or index) given.
        name: String,
        /// The graph inputs' names.
        inputs: Vec<String>,
    },
    /// An operator cannot take its new input shape.
    Op {
        /// Index of the operator in the main subgraph.
        op: usize,
        /// Its operator name (builtin, or the custom code).
        opcode: String,
        /// The tensor the problem is about.
        tensor: usize,
        /// That tensor's name.
        tensor_name: String,
        /// What the op cannot do with it.
        why: String,
    },
    /// The model has no subgraph to re-derive.
    NoSubgraph,
    /// A tensor index the model does not have.
    NoTensor {
        /// The index.
        tensor: usize,
    },
    /// A derived shape's element count does not fit 64 bits.
    Overflow {
        /// The tensor.
        tensor: usize,
        /// The shape that overflows.
        dims: Vec<i32>,
    },
}

/// What is wrong with a `NAME=DIMS` override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntaxProblem {
    /// No `=`.
    MissingEquals,
    /// A dim is not a positive integer.
    BadDims,
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShapeError::Syntax { text, problem } => match problem {
                SyntaxProblem::MissingEquals => {
                    write!(f, "`{text}`: expected NAME=DIMS, e.g. input=1,25,257")
                }
                SyntaxProblem::BadDims => write!(f, "`{text}`: dims must be positive integers"),
            },
            ShapeError::NotAnInput { name, inputs } => write!(
                f,
                "`{name}` is not a graph input (inputs: {})",
                inputs.join(", ")
            ),
            ShapeError::Op {
                op,
                opcode,
                tensor,
                tensor_name,
                why,
            } => write!(
                f,
                "op {op} ({opcode}): tensor {tensor} '{tensor_name}': {why}"
            ),
            ShapeError::NoSubgraph => f.write_str("the model has no subgraph"),
            ShapeError::NoTensor { tensor } => write!(f, "tensor {tensor} does not exist"),
            ShapeError::Overflow { tensor, dims } => {
                write!(f, "tensor {tensor}: shape {dims:?} overflows")
            }
        }
    }
}

impl core::error::Error for ShapeError {}

/// Parses `NAME=D0,D1,…` (the name may itself contain `=`; the last one splits).
pub fn parse_override(s: &str) -> Result<(String, Vec<i32>), ShapeError> {
    let (name, dims) = s.rsplit_once('=').ok_or_else(|| ShapeError::Syntax {
        text: s.to_string(),
        problem: SyntaxProblem::MissingEquals,
    })?;
    let dims = dims
        .split(',')
        .map(|d| d.trim().parse::<i32>().ok().filter(|&d| d > 0))
        .collect::<Option<Vec<i32>>>()
        .ok_or_else(|| ShapeError::Syntax {
            text: s.to_string(),
            problem: SyntaxProblem::BadDims,
        })?;
    Ok((name.to_string(), dims))
}

/// A copy of `model` whose main-subgraph inputs named in `overrides` (tensor
/// name, tensor index, or `#k` for the k-th graph input) have the given shapes, with every dependent shape and byte
/// size re-derived.
pub fn with_input_shapes<'a>(
    model: &Model<'a>,
    overrides: &[(String, Vec<i32>)],
) -> Result<Model<'a>, ShapeError> {
    let mut m = model.clone();
    let n = m.main().tensors.len();
    let mut changed = vec![false; n];
    let inputs: Vec<usize> = m
        .main()
        .inputs
        .iter()
        .filter_map(|&t| usize::try_from(t).ok())
        .collect();
    for (name, dims) in overrides {
        let t = inputs
            .iter()
            .copied()
            .enumerate()
            .find(|&(k, t)| {
                m.main()
                    .tensors
                    .get(t)
                    .is_some_and(|x| x.name == name.as_str())
                    || name.parse::<usize>() == Ok(t)
                    || name.strip_prefix('#').and_then(|n| n.parse::<usize>().ok()) == Some(k)
            })
            .map(|(_, t)| t)
            .ok_or_else(|| {
                let names: Vec<String> = inputs
                    .iter()
                    .filter_map(|&t| m.main().tensors.get(t))
                    .map(|x| x.name.to_string())
                    .collect();
                ShapeError::NotAnInput {
                    name: name.clone(),
                    inputs: names,
                }
            })?;
        set_shape(&mut m, t, dims.clone(), &mut changed)?;
    }
    let ops = m.main().operators.clone();
    for (oi, op) in ops.iter().enumerate() {
        let in_changed = op
            .inputs
            .iter()
            .any(|&t| t >= 0 && changed.get(t as usize).copied().unwrap_or(false));
        if !in_changed {
            continue;
        }
        let err = |tensor: usize, why: String| ShapeError::Op {
            op: oi,
            opcode: op.name().to_string(),
            tensor,
            tensor_name: m
                .main()
                .tensors
                .get(tensor)
                .map_or_else(String::new, |t| t.name.to_string()),
            why,
        };
        let shape = |k: usize| -> Option<Vec<i32>> {
            op.input(k)
                .and_then(|t| m.main().tensors.get(t))
                .map(|t| t.shape.clone())
        };
        let consts = |k: usize| -> Option<Vec<i32>> { m.const_ints(0, op.input(k)?) };
        let original_shape = |t: usize| -> Vec<i32> {
            model
                .main()
                .tensors
                .get(t)
                .map(|t| t.shape.clone())
                .unwrap_or_default()
        };
        let out = op.output(0).unwrap_or(usize::MAX);
        let in0 = shape(0).unwrap_or_default();
        // Other tensors whose shape follows the input: LSTM and SVDF state
        // (batch), FULLY_CONNECTED weights (depth).
        let mut follows: Vec<(usize, Vec<i32>)> = Vec::new();
        // A global pool's window, re-derived for the new feature map.
        let mut new_window: Option<PoolOptions> = None;
        let input_t = op.input(0).unwrap_or(0);
        let new: Vec<i32> = match op.opcode {
            B::CONV_2D | B::DEPTHWISE_CONV_2D | B::AVERAGE_POOL_2D | B::MAX_POOL_2D => {
                if in0.len() != 4 {
                    return Err(err(input_t, format!("expected NHWC, got {in0:?}")));
                }
                let (padding, sw, sh, dw, dh, fw, fh, ch) = match (&op.options, op.opcode) {
                    (OpOptions::Conv(c), B::CONV_2D | B::DEPTHWISE_CONV_2D) => {
                        let f = shape(1).unwrap_or_default();
                        if f.len() != 4 {
                            return Err(err(op.input(1).unwrap_or(0), "filter is not 4-D".into()));
                        }
                        let ch = if op.opcode == B::CONV_2D {
                            f[0]
                        } else {
                            in0[3] * c.depth_multiplier.max(1)
                        };
                        (
                            c.padding,
                            c.stride_w,
                            c.stride_h,
                            c.dilation_w,
                            c.dilation_h,
                            f[2],
                            f[1],
                            ch,
                        )
                    }
                    (OpOptions::Pool(p), _) => {
                        // A pool whose window covered the whole feature map
                        // (Keras GlobalAveragePooling) stays global: the
                        // converter writes the window at the map's size.
                        let before = original_shape(input_t);
                        if before.get(1..3) == Some(&[p.filter_h, p.filter_w][..]) {
                            new_window = Some(PoolOptions {
                                filter_h: in0[1],
                                filter_w: in0[2],
                                ..*p
                            });
                            (
                                p.padding, p.stride_w, p.stride_h, 1, 1, in0[2], in0[1], in0[3],
                            )
                        } else {
                            (
                                p.padding, p.stride_w, p.stride_h, 1, 1, p.filter_w, p.filter_h,
                                in0[3],
                            )
                        }
                    }
                    _ => return Err(err(out, "options missing".into())),
                };
                let oh = out_size(padding, in0[1], fh, sh, dh);
                let ow = out_size(padding, in0[2], fw, sw, dw);
                if oh <= 0 || ow <= 0 {
                    return Err(err(input_t, format!("{in0:?} is smaller than the window")));
                }
                vec![in0[0], oh, ow, ch]
            }
            B::FULLY_CONNECTED => {
                let f = shape(1).unwrap_or_default();
                let (units, mut depth) = match f.as_slice() {
                    [u, d] => (*u, *d),
                    _ => return Err(err(op.input(1).unwrap_or(0), "filter is not 2-D".into())),
                };
                // Weights that consumed the whole last input dimension follow it
                // when it changes (a flattened longer or shorter sequence), as a
                // re-conversion would write them; they stay in flash either way.
                let last = in0.last().copied().unwrap_or(depth);
                if original_shape(input_t).last() == Some(&depth)
                    && last != depth
                    && let Some(w) = op.input(1)
                {
                    depth = last;
                    follows.push((w, vec![units, depth]));
                }
                let elems: i64 = in0.iter().map(|&d| i64::from(d)).product();
                if depth <= 0 || elems % i64::from(depth) != 0 {
                    return Err(err(
                        input_t,
                        format!("{in0:?} is not a whole number of rows of {depth}"),
                    ));
                }
                let keep = matches!(
                    op.options,
                    OpOptions::FullyConnected {
                        keep_num_dims: true,
                        ..
                    }
                );
                if keep {
                    let mut s = in0.clone();
                    if let Some(l) = s.last_mut() {
                        *l = units;
                    }
                    s
                } else {
                    vec![(elems / i64::from(depth)) as i32, units]
                }
            }
            B::RESHAPE => {
                let target = consts(1)
                    .or(match &op.options {
                        OpOptions::Reshape { new_shape } => new_shape.clone(),
                        _ => None,
                    })
                    .ok_or_else(|| err(out, "no constant shape input or new_shape".into()))?;
                let elems: i64 = in0.iter().map(|&d| i64::from(d)).product();
                // A reshape that flattened the trailing dimensions (Keras
                // Flatten: [1, 49, 80] -> [-1, 3920]) keeps flattening them, as
                // the model converted at the new length would.
                if let Some(flat) = flattened(&original_shape(input_t), &original_shape(out), &in0)
                {
                    flat
                } else {
                    let known: i64 = target
                        .iter()
                        .filter(|&&d| d != -1)
                        .map(|&d| i64::from(d))
                        .product();
                    let wild = target.iter().filter(|&&d| d == -1).count();
                    let mut s = target.clone();
                    match wild {
                        0 if known == elems => {}
                        1 if known > 0 && elems % known == 0 => {
                            for d in s.iter_mut().filter(|d| **d == -1) {
                                *d = (elems / known) as i32;
                            }
                        }
                        _ => {
                            return Err(err(
                                out,
                                format!(
                                    "{in0:?} ({elems} elements) cannot be reshaped to {target:?}"
                                ),
                            ));
                        }
                    }
                    s
                }
            }
            B::ADD | B::SUB | B::MUL | B::DIV | B::MAXIMUM | B::MINIMUM => {
                let b = shape(1).unwrap_or_default();
                broadcast(&in0, &b)
                    .ok_or_else(|| err(out, format!("{in0:?} and {b:?} do not broadcast")))?
            }
            B::SOFTMAX
            | B::LOGISTIC
            | B::TANH
            | B::RELU
            | B::RELU6
            | B::QUANTIZE
            | B::DEQUANTIZE
            | B::HARD_SWISH
            | B::LEAKY_RELU
            | B::CAST => in0.clone(),
            B::UNIDIRECTIONAL_SEQUENCE_LSTM => {
                let h = shape(18).unwrap_or_default();
                if in0.len() != 3 || h.len() != 2 {
                    return Err(err(input_t, format!("expected a 3-D input, got {in0:?}")));
                }
                // Input-to-gate weights are [units, features] (input 1 is absent
                // with coupled input and forget gates, so take input 2).
                let w = shape(2).unwrap_or_default();
                if w.len() == 2 && w[1] != in0[2] {
                    return Err(err(
                        input_t,
                        format!(
                            "{in0:?} has {} features per step, the weights take {}",
                            in0[2], w[1]
                        ),
                    ));
                }
                let time_major = matches!(op.options, OpOptions::Lstm(o) if o.time_major);
                let batch = in0[usize::from(time_major)];
                for k in [18, 19] {
                    if let Some(t) = op.input(k) {
                        let s = shape(k).unwrap_or_default();
                        if s.len() == 2 && s[0] != batch {
                            follows.push((t, vec![batch, s[1]]));
                        }
                    }
                }
                vec![in0[0], in0[1], h[1]]
            }
            B::SVDF => {
                let rank = match op.options {
                    OpOptions::Svdf { rank, .. } if rank > 0 => rank,
                    _ => 1,
                };
                let (f, wt) = (shape(1).unwrap_or_default(), shape(2).unwrap_or_default());
                if in0.len() != 2 || f.len() != 2 || wt.len() != 2 || in0[1] != f[1] {
                    return Err(err(
                        input_t,
                        format!("{in0:?} does not match the feature weights {f:?}"),
                    ));
                }
                if let Some(t) = op.input(4) {
                    let s = shape(4).unwrap_or_default();
                    if s.first() != Some(&in0[0]) {
                        follows.push((t, vec![in0[0], f[0] * wt[1]]));
                    }
                }
                vec![in0[0], f[0] / rank]
            }
            B::CONCATENATION => {
                let axis = match op.options {
                    OpOptions::Concatenation { axis, .. } => axis,
                    _ => 0,
                };
                let rank = in0.len() as i32;
                let a = if axis < 0 { axis + rank } else { axis };
                if a < 0 || a >= rank {
                    return Err(err(out, format!("axis {axis} out of range")));
                }
                let a = a as usize;
                let mut s = in0.clone();
                s[a] = 0;
                for k in 0..op.inputs.len() {
                    let x = shape(k).unwrap_or_default();
                    let same = x.len() == s.len()
                        && x.iter()
                            .zip(&s)
                            .enumerate()
                            .all(|(d, (p, q))| d == a || p == q);
                    if !same {
                        return Err(err(
                            op.input(k).unwrap_or(0),
                            format!("{x:?} does not concatenate with {in0:?}"),
                        ));
                    }
                    s[a] += x[a];
                }
                s
            }
            B::PAD | B::PADV2 | B::MIRROR_PAD => {
                let p = consts(1).ok_or_else(|| err(out, "paddings are not constant".into()))?;
                if p.len() != 2 * in0.len() {
                    return Err(err(out, "paddings do not match the rank".into()));
                }
                in0.iter()
                    .enumerate()
                    .map(|(i, &d)| d + p[2 * i] + p[2 * i + 1])
                    .collect()
            }
            B::MEAN | B::SUM | B::REDUCE_MAX | B::REDUCE_MIN => {
                let axes = consts(1).ok_or_else(|| err(out, "axes are not constant".into()))?;
                let rank = in0.len() as i32;
                let keep = matches!(op.options, OpOptions::Reducer { keep_dims: true });
                let reduced: Vec<bool> = (0..rank)
                    .map(|d| axes.iter().any(|&a| a == d || a + rank == d))
                    .collect();
                in0.iter()
                    .zip(&reduced)
                    .filter_map(|(&d, &r)| match (r, keep) {
                        (true, true) => Some(1),
                        (true, false) => None,
                        (false, _) => Some(d),
                    })
                    .collect()
            }
            B::STRIDED_SLICE => strided_slice(op, &in0, &consts).map_err(|why| err(out, why))?,
            _ => {
                return Err(err(
                    input_t,
                    "its shape changed, and there is no shape rule for this op".into(),
                ));
            }
        };
        if let (Some(w), Some(o)) = (
            new_window,
            m.subgraphs
                .get_mut(0)
                .and_then(|sg| sg.operators.get_mut(oi)),
        ) {
            o.options = OpOptions::Pool(w);
        }
        for (t, dims) in follows {
            set_shape(&mut m, t, dims, &mut changed)?;
        }
        if out != usize::MAX {
            set_shape(&mut m, out, new, &mut changed)?;
        }
    }
    Ok(m)
}

/// Sets a tensor's shape and byte size; marks it changed when it differs.
fn set_shape(
    m: &mut Model<'_>,
    t: usize,
    dims: Vec<i32>,
    changed: &mut [bool],
) -> Result<(), ShapeError> {
    let Some(sg) = m.subgraphs.get_mut(0) else {
        return Err(ShapeError::NoSubgraph);
    };
    let Some(tensor) = sg.tensors.get_mut(t) else {
        return Err(ShapeError::NoTensor { tensor: t });
    };
    if tensor.shape == dims {
        return Ok(());
    }
    let elems = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(u64::try_from(d).ok()?))
        .ok_or_else(|| ShapeError::Overflow {
            tensor: t,
            dims: dims.clone(),
        })?;
    tensor.bytes = tensor
        .dtype
        .size_bytes()
        .and_then(|s| elems.checked_mul(u64::from(s)));
    tensor.shape = dims;
    tensor.is_dynamic = false;
    tensor.shape_signature = None;
    if let Some(c) = changed.get_mut(t) {
        *c = true;
    }
    Ok(())
}

/// When `before_out` is `before_in` with its dimensions after the first `k`
/// merged into one, the same merge of `now_in`; `None` for any other reshape.
fn flattened(before_in: &[i32], before_out: &[i32], now_in: &[i32]) -> Option<Vec<i32>> {
    let k = before_out.len().checked_sub(1)?;
    if k == 0 || before_in.len() <= before_out.len() || now_in.len() != before_in.len() {
        return None;
    }
    let merged = |s: &[i32]| -> Option<i32> {
        s.iter()
            .try_fold(1i32, |a, &d| a.checked_mul(d).filter(|_| d >= 0))
    };
    if before_out[..k] != before_in[..k] || Some(before_out[k]) != merged(&before_in[k..]) {
        return None;
    }
    let mut s = now_in[..k].to_vec();
    s.push(merged(&now_in[k..])?);
    Some(s)
}

/// Numpy broadcasting of two shapes.
fn broadcast(a: &[i32], b: &[i32]) -> Option<Vec<i32>> {
    let r = a.len().max(b.len());
    (0..r)
        .map(|k| {
            let da = if k + a.len() >= r {
                a[k + a.len() - r]
            } else {
                1
            };
            let db = if k + b.len() >= r {
                b[k + b.len() - r]
            } else {
                1
            };
            match (da, db) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// STRIDED_SLICE's output shape from constant begin/end/strides and the masks.
fn strided_slice(
    op: &crate::read::model::Operator<'_>,
    input: &[i32],
    consts: &dyn Fn(usize) -> Option<Vec<i32>>,
) -> Result<Vec<i32>, String> {
    let o = match op.options {
        OpOptions::StridedSlice(o) => o,
        _ => Default::default(),
    };
    if o.ellipsis_mask != 0 || o.new_axis_mask != 0 {
        return Err("ellipsis and new-axis masks are not supported".into());
    }
    let (begin, end, strides) = match (consts(1), consts(2), consts(3)) {
        (Some(b), Some(e), Some(s)) => (b, e, s),
        _ => return Err("begin, end and strides must be constant".into()),
    };
    let mut out = Vec::new();
    for (ax, &size) in input.iter().enumerate() {
        let bit = |mask: i32| mask & (1 << ax) != 0;
        let a = slice_axis(
            size,
            begin.get(ax).copied().unwrap_or(0),
            end.get(ax).copied().unwrap_or(size),
            strides.get(ax).copied().unwrap_or(1),
            bit(o.begin_mask),
            bit(o.end_mask),
            bit(o.shrink_axis_mask),
        )
        .ok_or("stride 0")?;
        if !bit(o.shrink_axis_mask) {
            out.push(a.count);
        }
    }
    Ok(out)
}
