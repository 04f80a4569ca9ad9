//! Prints the share-link fragment of a model's x86_64 greedy report (seed corpora for fuzzing).
//!     cargo run -p microarena-core --example share_link -- MODEL.tflite
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: share_link MODEL.tflite")?;
    let bytes = std::fs::read(&path)?;
    let model = microarena_core::Model::parse(&bytes)?;
    let config = microarena_core::Config {
        profile: &microarena_core::tflm::profile::X86_64,
        planner: microarena_core::plan::PlannerKind::TflmGreedy,
    };
    let analysis = microarena_core::analyze(&model, &config)?;
    let report = microarena_core::report::Report::new(&model, &analysis, &path);
    println!("{}", microarena_core::report::share::fragment(&report));
    Ok(())
}
