//! Writes the runtime program image of a model (seed corpora for fuzzing the device reader),
//! and, when a banded stage lowers its head, the banded image beside it (`OUT-banded.img`);
//! when ops run in place, the in-place image (`OUT-inplace.img`, op records with `IN_PLACE`).
//!     cargo run -p microarena-core --example lower -- MODEL.tflite OUT.img
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        return Err("usage: lower MODEL.tflite OUT.img".into());
    };
    let bytes = std::fs::read(input)?;
    let model = microarena_core::Model::parse(&bytes)?;
    use microarena_core::lower::{Execution, LowerOptions, lower, lower_with, runtime_arena_with};
    let image = lower(&model).map_err(|e| e.to_string())?;
    std::fs::write(output, image)?;
    let banded = LowerOptions {
        execution: Execution::Banded,
        ..LowerOptions::default()
    };
    if runtime_arena_with(&model, &banded).is_ok_and(|r| !r.stages.is_empty()) {
        let image = lower_with(&model, &banded).map_err(|e| e.to_string())?;
        let out = output.strip_suffix(".img").unwrap_or(output);
        std::fs::write(format!("{out}-banded.img"), image)?;
    }
    let in_place = LowerOptions {
        in_place: true,
        ..LowerOptions::default()
    };
    if runtime_arena_with(&model, &in_place).is_ok_and(|r| !r.in_place.is_empty()) {
        let image = lower_with(&model, &in_place).map_err(|e| e.to_string())?;
        let out = output.strip_suffix(".img").unwrap_or(output);
        std::fs::write(format!("{out}-inplace.img"), image)?;
    }
    Ok(())
}
