//! Spatial rearrangements: RESIZE_BILINEAR (`resize_bilinear.cc`),
//! RESIZE_NEAREST_NEIGHBOR (`resize_nearest_neighbor.cc`), DEPTH_TO_SPACE
//! (`depth_to_space.cc`), SPACE_TO_DEPTH (`space_to_depth.cc`),
//! SPACE_TO_BATCH_ND (`space_to_batch_nd.cc`), BATCH_TO_SPACE_ND
//! (`batch_to_space_nd.cc`) and L2_NORMALIZATION (`l2norm.cc`).

use super::{Ctx, Kernel, Prep, abi3, all_io, both, in0_out0, kernel, st};
use crate::read::dtype::DType::{F32, I8, I16, I32};
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, constant, one_of, rank, same};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    // Two bools of builtin data and no OpData; the parser allocates the struct
    // even though the kernel keeps nothing, and its 2 B shift the 16-aligned
    // OpData that follows (wheel: tail +16, persistent buffer data −4 for five
    // of them when they were left out).
    Kernel {
        builtin: both(st(2, 1)),
        builtin_name: "TfLiteResizeBilinearParams",
        // Input, size, output.
        prepare: all_io,
        checks: RESIZE_BILINEAR,
        ..kernel(c::RESIZE_BILINEAR, "resize_bilinear.cc")
    },
    Kernel {
        builtin: both(st(2, 1)),
        builtin_name: "TfLiteResizeNearestNeighborParams",
        prepare: all_io,
        checks: RESIZE_NEAREST_NEIGHBOR,
        ..kernel(c::RESIZE_NEAREST_NEIGHBOR, "resize_nearest_neighbor.cc")
    },
    Kernel {
        // TfLiteDepthToSpaceParams: block_size.
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteDepthToSpaceParams",
        prepare: with_output_dims,
        checks: DEPTH_TO_SPACE,
        ..kernel(c::DEPTH_TO_SPACE, "depth_to_space.cc")
    },
    Kernel {
        builtin: both(st(4, 4)),
        builtin_name: "TfLiteSpaceToDepthParams",
        prepare: with_output_dims,
        checks: DEPTH_TO_SPACE,
        ..kernel(c::SPACE_TO_DEPTH, "space_to_depth.cc")
    },
    Kernel {
        // SpaceToBatchParams: the pad value (never set by Prepare).
        op_data: both(Some(4)),
        // Input and output; block shape and paddings are read at Eval.
        prepare: in0_out0,
        checks: BATCH_TO_SPACE_ND,
        ..kernel(c::SPACE_TO_BATCH_ND, "space_to_batch_nd.cc")
    },
    Kernel {
        prepare: in0_out0,
        checks: BATCH_TO_SPACE_ND,
        ..kernel(c::BATCH_TO_SPACE_ND, "batch_to_space_nd.cc")
    },
    Kernel {
        // TfLiteL2NormParams: activation.
        builtin: abi3(st(4, 4), st(1, 1), st(4, 4)),
        builtin_name: "TfLiteL2NormParams",
        // L2NormalizationParams: input_zero_point.
        op_data: both(Some(4)),
        prepare: in0_out0,
        checks: L2_NORMALIZATION,
        ..kernel(c::L2_NORMALIZATION, "l2norm.cc")
    },
];

/// Input and output, then the output's dims copied to rewrite them.
fn with_output_dims(cx: &Ctx<'_>, p: &mut Prep) {
    in0_out0(cx, p);
    p.output_dims(cx);
}

/// `l2norm.cc`: rank ≤ 4, output float32 or int8, input of its type.
const L2_NORMALIZATION: &[Check] = &[
    rank(Input(0), 0, 4, None),
    one_of(Output(0), &[F32, I8], P),
    same(&[Input(0), Output(0)], P),
];

/// `resize_bilinear.cc`: 4-D input, int32 constant size; Eval output float32, int8.
const RESIZE_BILINEAR: &[Check] = &[
    rank(Input(0), 4, 4, None),
    one_of(Input(1), &[I32], P),
    constant(
        Input(1),
        "the output size",
        Some("Non-constant >size< tensor is not supported"),
    ),
    one_of(Output(0), &[F32, I8], E),
];

/// `resize_nearest_neighbor.cc`: as bilinear; Eval output float32, int8, int16.
const RESIZE_NEAREST_NEIGHBOR: &[Check] = &[
    RESIZE_BILINEAR[0],
    RESIZE_BILINEAR[1],
    RESIZE_BILINEAR[2],
    one_of(Output(0), &[F32, I8, I16], E),
];

/// `depth_to_space.cc` and `space_to_depth.cc`: 4-D, output float32 or int8,
/// input of its type.
const DEPTH_TO_SPACE: &[Check] = &[
    rank(Input(0), 4, 4, None),
    one_of(Output(0), &[F32, I8], P),
    same(&[Input(0), Output(0)], P),
];

/// `batch_to_space_nd.cc` and `space_to_batch_nd.cc`: ranks 3 to 4, input
/// type = output type; Eval float32, int8.
const BATCH_TO_SPACE_ND: &[Check] = &[
    rank(Input(0), 3, 4, None),
    rank(Output(0), 3, 4, None),
    same(&[Input(0), Output(0)], P),
    one_of(Input(0), &[F32, I8], E),
];
