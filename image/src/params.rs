//! Typed per-operator parameters: what core's `lower` precomputes for an op
//! and the runtime's kernels read back. Each struct fixes which of the op
//! record's [`OP_PARAMS`] words holds which field, in one place, so the
//! writer and the reader cannot disagree on a position.
//!
//! `from_words` accepts any words (an image may be hostile): fields keep the
//! raw `i32`, and the runtime's Prepare checks them against the tensors.

use crate::format::OP_PARAMS;

/// The words of an op record's parameter block.
pub type Words = [i32; OP_PARAMS];

/// Axes a PAD or STRIDED_SLICE carries (TFLM's reference kernels stop at 5).
pub const MAX_SLICE_RANK: usize = 5;
/// Axes a TRANSPOSE carries (TFLM's limit).
pub const MAX_TRANSPOSE_RANK: usize = 6;

/// Which parameter struct an operator's record carries (the operator
/// table's `runtime` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsKind {
    /// All words zero: the kernel reads everything from its tensors.
    NoParams,
    Window,
    Lstm,
    Svdf,
    Softmax,
    Concat,
    Slice,
    Pad,
    Transpose,
    Mean,
    LeakyRelu,
    Axis,
    /// SPLIT, SPLIT_V and UNPACK: [`AxisParams`], the split axis made
    /// non-negative (read from each op's own axis input or option).
    Split,
    Gather,
    SpaceBatch,
    Resize,
    /// Custom ops: [`FlexParams`], the custom options' FlexBuffers map values.
    Flex,
    BatchMatMul,
    /// DEPTH_TO_SPACE and SPACE_TO_DEPTH: [`BlockParams`].
    Block,
    Cumsum,
    /// IF, WHILE and CALL_ONCE: [`SubgraphParams`], the subgraphs they call.
    Subgraphs,
}

/// A parameter struct's encoding in the op record.
pub trait OpParams: Sized {
    /// The words written into the op record (unused words are 0).
    fn to_words(&self) -> Words;
    /// The struct read back from an op record's words.
    fn from_words(words: &Words) -> Self;
}

/// CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D and MAX_POOL_2D: the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WindowParams {
    /// Padding before the first column.
    pub pad_w: i32,
    /// Padding before the first row.
    pub pad_h: i32,
    pub stride_w: i32,
    pub stride_h: i32,
    pub dilation_w: i32,
    pub dilation_h: i32,
    pub filter_w: i32,
    pub filter_h: i32,
    /// DEPTHWISE_CONV_2D's channel multiplier (1 for the others).
    pub depth_multiplier: i32,
}

impl OpParams for WindowParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[..9].copy_from_slice(&[
            self.pad_w,
            self.pad_h,
            self.stride_w,
            self.stride_h,
            self.dilation_w,
            self.dilation_h,
            self.filter_w,
            self.filter_h,
            self.depth_multiplier,
        ]);
        w
    }

    fn from_words(w: &Words) -> Self {
        WindowParams {
            pad_w: w[0],
            pad_h: w[1],
            stride_w: w[2],
            stride_h: w[3],
            dilation_w: w[4],
            dilation_h: w[5],
            filter_w: w[6],
            filter_h: w[7],
            depth_multiplier: w[8],
        }
    }
}

/// UNIDIRECTIONAL_SEQUENCE_LSTM.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LstmParams {
    /// Input is `[time, batch, …]` rather than `[batch, time, …]`.
    pub time_major: bool,
    /// Cell state clip (0: none).
    pub cell_clip: f32,
    /// Projection clip (0: none).
    pub proj_clip: f32,
}

impl OpParams for LstmParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = i32::from(self.time_major);
        w[1] = self.cell_clip.to_bits() as i32;
        w[2] = self.proj_clip.to_bits() as i32;
        w
    }

    fn from_words(w: &Words) -> Self {
        LstmParams {
            time_major: w[0] != 0,
            cell_clip: f32::from_bits(w[1] as u32),
            proj_clip: f32::from_bits(w[2] as u32),
        }
    }
}

/// SVDF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SvdfParams {
    /// Filters per unit.
    pub rank: i32,
}

impl OpParams for SvdfParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.rank;
        w
    }

    fn from_words(w: &Words) -> Self {
        SvdfParams { rank: w[0] }
    }
}

/// SOFTMAX.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SoftmaxParams {
    pub beta: f32,
}

impl OpParams for SoftmaxParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.beta.to_bits() as i32;
        w
    }

    fn from_words(w: &Words) -> Self {
        SoftmaxParams {
            beta: f32::from_bits(w[0] as u32),
        }
    }
}

/// CONCATENATION.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ConcatParams {
    /// The axis, already non-negative.
    pub axis: i32,
}

impl OpParams for ConcatParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.axis;
        w
    }

    fn from_words(w: &Words) -> Self {
        ConcatParams { axis: w[0] }
    }
}

/// STRIDED_SLICE, every axis resolved (masks, negative indices, clamping).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SliceParams {
    pub rank: i32,
    /// First index taken per axis.
    pub start: [i32; MAX_SLICE_RANK],
    /// Index to stop before per axis.
    pub stop: [i32; MAX_SLICE_RANK],
    pub stride: [i32; MAX_SLICE_RANK],
}

impl OpParams for SliceParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.rank;
        w[1..6].copy_from_slice(&self.start);
        w[6..11].copy_from_slice(&self.stop);
        w[11..16].copy_from_slice(&self.stride);
        w
    }

    fn from_words(w: &Words) -> Self {
        SliceParams {
            rank: w[0],
            start: [w[1], w[2], w[3], w[4], w[5]],
            stop: [w[6], w[7], w[8], w[9], w[10]],
            stride: [w[11], w[12], w[13], w[14], w[15]],
        }
    }
}

/// PAD, PADV2 and MIRROR_PAD.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PadParams {
    pub rank: i32,
    /// Elements added before each axis.
    pub before: [i32; MAX_SLICE_RANK],
    /// Elements added after each axis.
    pub after: [i32; MAX_SLICE_RANK],
    /// What the padding holds: [`PAD_CONSTANT`] (PAD, PADV2), [`PAD_REFLECT`]
    /// or [`PAD_SYMMETRIC`] (MIRROR_PAD).
    pub mode: i32,
}

/// PAD and PADV2: a constant.
pub const PAD_CONSTANT: i32 = 0;
/// MIRROR_PAD REFLECT: the input mirrored without its edge element.
pub const PAD_REFLECT: i32 = 1;
/// MIRROR_PAD SYMMETRIC: the input mirrored with its edge element.
pub const PAD_SYMMETRIC: i32 = 2;

impl OpParams for PadParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.rank;
        w[1..6].copy_from_slice(&self.before);
        w[6..11].copy_from_slice(&self.after);
        w[11] = self.mode;
        w
    }

    fn from_words(w: &Words) -> Self {
        PadParams {
            rank: w[0],
            before: [w[1], w[2], w[3], w[4], w[5]],
            after: [w[6], w[7], w[8], w[9], w[10]],
            mode: w[11],
        }
    }
}

/// TRANSPOSE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TransposeParams {
    pub rank: i32,
    /// Output axis `i` is input axis `perm[i]` (already non-negative).
    pub perm: [i32; MAX_TRANSPOSE_RANK],
}

impl OpParams for TransposeParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.rank;
        w[1..7].copy_from_slice(&self.perm);
        w
    }

    fn from_words(w: &Words) -> Self {
        TransposeParams {
            rank: w[0],
            perm: [w[1], w[2], w[3], w[4], w[5], w[6]],
        }
    }
}

/// MEAN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MeanParams {
    /// Bit `a` set: axis `a` is reduced.
    pub axis_mask: i32,
    pub keep_dims: bool,
}

impl OpParams for MeanParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.axis_mask;
        w[1] = i32::from(self.keep_dims);
        w
    }

    fn from_words(w: &Words) -> Self {
        MeanParams {
            axis_mask: w[0],
            keep_dims: w[1] != 0,
        }
    }
}

/// LEAKY_RELU.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LeakyReluParams {
    pub alpha: f32,
}

impl OpParams for LeakyReluParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.alpha.to_bits() as i32;
        w
    }

    fn from_words(w: &Words) -> Self {
        LeakyReluParams {
            alpha: f32::from_bits(w[0] as u32),
        }
    }
}

/// ARG_MAX and ARG_MIN (and SPLIT, SPLIT_V, UNPACK): one axis of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AxisParams {
    /// The axis, already non-negative.
    pub axis: i32,
}

impl OpParams for AxisParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.axis;
        w
    }

    fn from_words(w: &Words) -> Self {
        AxisParams { axis: w[0] }
    }
}

/// IF (then, else), WHILE (cond, body) and CALL_ONCE (init, and `second`
/// unused): the image's indices of the subgraphs the op calls
/// ([`crate::calls`] checks them at construction).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SubgraphParams {
    pub first: i32,
    pub second: i32,
}

impl OpParams for SubgraphParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.first;
        w[1] = self.second;
        w
    }

    fn from_words(w: &Words) -> Self {
        SubgraphParams {
            first: w[0],
            second: w[1],
        }
    }
}

/// A custom op's options: the values of its FlexBuffers options map as
/// `int32`, by position in the map (keys sorted, as FlexBuffers stores
/// them), which is how TFLM's Signal kernels read them
/// (`FlexbufferWrapper::ElementAsInt32(index)`). Each kernel documents which
/// position is which option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlexParams {
    pub values: Words,
}

impl OpParams for FlexParams {
    fn to_words(&self) -> Words {
        self.values
    }

    fn from_words(w: &Words) -> Self {
        FlexParams { values: *w }
    }
}

/// GATHER.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GatherParams {
    /// Gathered axis of the input, already non-negative.
    pub axis: i32,
    /// Leading batch dims shared by input and indices, already non-negative.
    pub batch_dims: i32,
}

impl OpParams for GatherParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.axis;
        w[1] = self.batch_dims;
        w
    }

    fn from_words(w: &Words) -> Self {
        GatherParams {
            axis: w[0],
            batch_dims: w[1],
        }
    }
}

/// SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: the block and the padding (or
/// crop) before the first row and column (a 3-D tensor has width block 1 and
/// no left padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SpaceBatchParams {
    pub block_h: i32,
    pub block_w: i32,
    pub before_h: i32,
    pub before_w: i32,
}

impl OpParams for SpaceBatchParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[..4].copy_from_slice(&[self.block_h, self.block_w, self.before_h, self.before_w]);
        w
    }

    fn from_words(w: &Words) -> Self {
        SpaceBatchParams {
            block_h: w[0],
            block_w: w[1],
            before_h: w[2],
            before_w: w[3],
        }
    }
}

/// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (the output size is the output tensor's dims).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ResizeParams {
    /// Corner pixels of input and output are aligned.
    pub align_corners: bool,
    /// Pixels are sampled at their centres (+0.5).
    pub half_pixel_centers: bool,
}

impl OpParams for ResizeParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = i32::from(self.align_corners);
        w[1] = i32::from(self.half_pixel_centers);
        w
    }

    fn from_words(w: &Words) -> Self {
        ResizeParams {
            align_corners: w[0] != 0,
            half_pixel_centers: w[1] != 0,
        }
    }
}

/// BATCH_MATMUL: which operands are stored transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchMatMulParams {
    /// The left operand is stored `[…, K, M]`.
    pub adj_x: bool,
    /// The right operand is stored `[…, N, K]`.
    pub adj_y: bool,
}

impl OpParams for BatchMatMulParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = i32::from(self.adj_x);
        w[1] = i32::from(self.adj_y);
        w
    }

    fn from_words(w: &Words) -> Self {
        BatchMatMulParams {
            adj_x: w[0] != 0,
            adj_y: w[1] != 0,
        }
    }
}

/// DEPTH_TO_SPACE and SPACE_TO_DEPTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockParams {
    pub block_size: i32,
}

impl OpParams for BlockParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = self.block_size;
        w
    }

    fn from_words(w: &Words) -> Self {
        BlockParams { block_size: w[0] }
    }
}

/// CUMSUM (the axis is its input tensor, read in Eval as TFLM does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CumsumParams {
    /// Each output sums the elements before it, not itself.
    pub exclusive: bool,
    /// The sum runs from the axis' end.
    pub reverse: bool,
}

impl OpParams for CumsumParams {
    fn to_words(&self) -> Words {
        let mut w = [0; OP_PARAMS];
        w[0] = i32::from(self.exclusive);
        w[1] = i32::from(self.reverse);
        w
    }

    fn from_words(w: &Words) -> Self {
        CumsumParams {
            exclusive: w[0] != 0,
            reverse: w[1] != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<P: OpParams + PartialEq + core::fmt::Debug>(p: P) {
        let w = p.to_words();
        assert_eq!(P::from_words(&w), p);
        assert_eq!(P::from_words(&w).to_words(), w);
    }

    #[test]
    fn every_struct_round_trips() {
        round_trip(WindowParams {
            pad_w: 1,
            pad_h: 2,
            stride_w: 3,
            stride_h: 4,
            dilation_w: 5,
            dilation_h: 6,
            filter_w: 7,
            filter_h: 8,
            depth_multiplier: 9,
        });
        round_trip(LstmParams {
            time_major: true,
            cell_clip: 10.5,
            proj_clip: -0.25,
        });
        round_trip(SvdfParams { rank: 2 });
        round_trip(SoftmaxParams { beta: 0.75 });
        round_trip(ConcatParams { axis: 3 });
        round_trip(SliceParams {
            rank: 5,
            start: [1, 2, 3, 4, 5],
            stop: [6, 7, 8, 9, 10],
            stride: [-1, 2, -3, 4, i32::MIN],
        });
        round_trip(PadParams {
            rank: 4,
            before: [1, 2, 3, 4, 0],
            after: [5, 6, 7, 8, 0],
            mode: PAD_SYMMETRIC,
        });
        round_trip(TransposeParams {
            rank: 6,
            perm: [5, 4, 3, 2, 1, 0],
        });
        round_trip(MeanParams {
            axis_mask: 0b0110,
            keep_dims: true,
        });
        round_trip(LeakyReluParams { alpha: -0.3 });
        round_trip(AxisParams { axis: 2 });
        round_trip(BatchMatMulParams {
            adj_x: true,
            adj_y: false,
        });
        round_trip(BlockParams { block_size: 3 });
        round_trip(CumsumParams {
            exclusive: false,
            reverse: true,
        });
        round_trip(SpaceBatchParams {
            block_h: 2,
            block_w: 3,
            before_h: 1,
            before_w: 0,
        });
        round_trip(ResizeParams {
            align_corners: false,
            half_pixel_centers: true,
        });
        round_trip(GatherParams {
            axis: 2,
            batch_dims: 1,
        });
    }

    #[test]
    fn positions_are_the_image_contract() {
        // The words the runtime has always read: a change here changes the image.
        let w = WindowParams {
            pad_w: 1,
            stride_h: 4,
            depth_multiplier: 9,
            ..Default::default()
        }
        .to_words();
        assert_eq!((w[0], w[3], w[8]), (1, 4, 9));
        let w = SliceParams {
            rank: 1,
            start: [2, 0, 0, 0, 0],
            stop: [3, 0, 0, 0, 0],
            stride: [4, 0, 0, 0, 0],
        }
        .to_words();
        assert_eq!((w[0], w[1], w[6], w[11]), (1, 2, 3, 4));
        let w = SoftmaxParams { beta: 1.0 }.to_words();
        assert_eq!(w[0], 1.0f32.to_bits() as i32);
    }
}
