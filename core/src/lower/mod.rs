//! Lowering a validated [`Model`] into the microarena *program image* the
//! no-heap device runtime (`microarena-runtime`) executes, and the exact arena
//! that runtime will use.
//!
//! The device carries no flatbuffer verifier and no planner: everything that
//! needs a heap happens here, on the host or at build time. The image format
//! is the `microarena-image` crate; the head layout (offset of every
//! activation and scratch buffer) is core's greedy plan, computed from the
//! lifetimes TFLM would give the same buffers, and the tail is the sum of
//! `microarena_image::op_tail_bytes` over the operators.
//!
//! `writer` writes the image bytes, `params` turns each operator's
//! options and constant inputs into its typed image parameters (the struct
//! the operator table names for it), `support` restates the kernels' type
//! rules so a model the runtime would refuse gets no runtime arena,
//! `arena` plans the head and sums the tail both share, `banded` chooses
//! the row-band stages and `inplace` the aliases (in-place ops, reshapes),
//! which `alias_check` and `plan::alias` check independently.

mod alias_check;
mod arena;
mod banded;
mod error;
mod inplace;
mod params;
mod support;
mod writer;

pub use arena::{
    Execution, LowerOptions, OpDataIn, RuntimeArena, runtime_arena, runtime_arena_with,
};
pub use banded::{BandedStage, field_band};
pub use inplace::InPlaceOp;

use crate::read::model::Operator;

/// The op's code in the image: its builtin code, or for a custom op the
/// image-only code `microarena_image::opcode` gives its `custom_code`;
/// `None` when the runtime's tables do not know it.
pub(crate) fn image_opcode(op: &Operator<'_>) -> Option<u8> {
    use microarena_image::opcode;
    if op.opcode.0 == i32::from(opcode::CUSTOM) {
        return opcode::custom_code(op.custom_code?);
    }
    u8::try_from(op.opcode.0)
        .ok()
        .filter(|&c| c < opcode::FIRST_CUSTOM_CODE)
}
pub use error::LowerError;
pub use writer::{lower, lower_with};

#[cfg(test)]
mod tests {
    use microarena_image as rl;

    use super::*;
    use crate::Model;
    use crate::build::builder::ModelBuilder;
    use crate::build::example::demo_model;
    use crate::read::dtype::DType;
    use crate::read::ops::BuiltinOp;

    /// A one-op float model: tensor 0 (`in_shape`) → `op` → tensor 1 ([4]).
    fn one_op(op: BuiltinOp, in_shape: &[i32]) -> std::vec::Vec<u8> {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        let x = b.tensor(g, "x", in_shape, DType::F32).id();
        let y = b.tensor(g, "y", &[4], DType::F32).id();
        b.op(g, op, &[x], &[y]);
        b.inputs(g, &[x]).outputs(g, &[y]);
        b.build().expect("valid model")
    }

    fn word(img: &[u8], at: usize) -> u32 {
        u32::from_le_bytes([img[at], img[at + 1], img[at + 2], img[at + 3]])
    }

    #[test]
    fn demo_model_lowers_with_consistent_header() {
        let bytes = demo_model();
        let model = Model::parse(&bytes).expect("parse");
        let img = lower(&model).expect("lower");
        let arena = runtime_arena(&model).expect("arena");
        assert_eq!(&img[..4], &rl::MAGIC);
        assert_eq!(word(&img, rl::header::VERSION), rl::VERSION);
        assert_eq!(
            u64::from(word(&img, rl::header::HEAD_BYTES)),
            arena.head_bytes
        );
        assert_eq!(
            u64::from(word(&img, rl::header::TAIL_BYTES)),
            arena.tail_bytes
        );
        assert_eq!(word(&img, rl::header::IMAGE_LEN) as usize, img.len());
        assert_eq!(arena.head_bytes % 16, 0);
        // conv (8+8*8) + dw (8+8*8) + pool 8 + fc 16 + softmax 12
        assert_eq!(arena.tail_bytes, 72 + 72 + 8 + 16 + 12);
        assert_eq!(arena.total_bytes, arena.head_bytes + arena.tail_bytes);
    }

    #[test]
    fn unsupported_ops_and_tensors_are_named() {
        let bytes = one_op(BuiltinOp(i32::from(rl::opcode::POW)), &[4]);
        let model = Model::parse(&bytes).expect("parse");
        let err = lower(&model).expect_err("no POW kernel");
        assert_eq!(
            std::format!("{err}"),
            "operator 0 (POW) has no kernel in the microarena runtime"
        );
        assert!(runtime_arena(&model).is_err());

        let bytes = one_op(BuiltinOp::RESHAPE, &[-1, 4]);
        let model = Model::parse(&bytes).expect("parse");
        assert!(matches!(
            lower(&model),
            Err(LowerError::Tensor { tensor: 0, .. })
        ));
    }

    #[test]
    fn a_subgraph_calling_itself_is_refused() {
        let mut b = ModelBuilder::new();
        let g = b.subgraph();
        b.op(g, BuiltinOp::CALL_ONCE, &[], &[])
            .options(crate::read::ops::OpOptions::CallOnce { init_subgraph: 0 });
        let x = b.tensor(g, "x", &[4], DType::F32).id();
        let y = b.tensor(g, "y", &[4], DType::F32).id();
        b.op(g, BuiltinOp::RESHAPE, &[x], &[y]);
        b.inputs(g, &[x]).outputs(g, &[y]);
        let s = b.subgraph();
        let a = b.tensor(s, "a", &[4], DType::F32).id();
        b.inputs(s, &[a]).outputs(s, &[a]);
        let bytes = b.build().expect("valid model");
        let model = Model::parse(&bytes).expect("parse");
        let err = lower(&model).expect_err("subgraph 0 calls itself");
        assert!(matches!(err, LowerError::Subgraphs { subgraph: 0, .. }));
        assert_eq!(
            std::format!("{err}"),
            "the microarena runtime cannot run this model: a subgraph calls itself through IF/WHILE/CALL_ONCE (recursion without end) (subgraph 0)"
        );
    }
}
