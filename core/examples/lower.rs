//! Writes the runtime program image of a model (seed corpora for fuzzing the device reader).
//!     cargo run -p microarena-core --example lower -- MODEL.tflite OUT.img
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(input), Some(output)) = (args.get(1), args.get(2)) else {
        return Err("usage: lower MODEL.tflite OUT.img".into());
    };
    let bytes = std::fs::read(input)?;
    let model = microarena_core::Model::parse(&bytes)?;
    let image = microarena_core::lower::lower(&model).map_err(|e| e.to_string())?;
    std::fs::write(output, image)?;
    Ok(())
}
