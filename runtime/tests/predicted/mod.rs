//! Running a model in exactly the arena core predicts for it, shared by the
//! in-place tests so that both measure the same way.

use microarena_core::Model;
use microarena_core::build::example::pseudo_random_bytes;
use microarena_core::lower::{
    Execution, InPlaceOp, LowerOptions, OpDataIn, lower_with, runtime_arena_with,
};
use microarena_runtime::{Interpreter, freeze_opdata};

pub const PLAIN: LowerOptions = LowerOptions {
    opdata: OpDataIn::Tail,
    execution: Execution::Plain,
    in_place: false,
};
pub const IN_PLACE: LowerOptions = LowerOptions {
    in_place: true,
    ..PLAIN
};

pub struct Run {
    pub outputs: Vec<Vec<u8>>,
    pub high_water: usize,
    pub predicted: usize,
    pub head: u64,
    pub in_place: Vec<InPlaceOp>,
}

/// Runs `bytes` lowered with `options` in exactly the predicted arena, on
/// inputs made from `seed` (input `i` gets seed `seed + i`).
pub fn run(bytes: &[u8], options: LowerOptions, seed: u32) -> Run {
    let model = Model::parse(bytes).expect("parse");
    let mut image = lower_with(&model, &options).expect("lower");
    freeze_opdata(&mut image).expect("freeze");
    let need = runtime_arena_with(&model, &options).expect("arena");
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    for i in 0..it.image().input_count() {
        let input = it.input_mut(i).expect("input");
        let n = input.len();
        input.copy_from_slice(&pseudo_random_bytes(seed + i as u32, n));
    }
    it.invoke().expect("invoke");
    Run {
        outputs: (0..it.image().output_count())
            .map(|i| it.output(i).expect("output").to_vec())
            .collect(),
        high_water: it.memory_usage().high_water,
        predicted: need.total_bytes as usize,
        head: need.head_bytes,
        in_place: need.in_place,
    }
}
