//! Writes `example::synthetic(OPS)` to a .tflite file, for the browser
//! performance test and benchmarks outside Rust:
//! `cargo run --release -p microarena-core --example synthetic -- 2000 out.tflite`

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(ops), Some(out)) = (args.first().and_then(|s| s.parse().ok()), args.get(1)) else {
        eprintln!("usage: synthetic OPS OUT.tflite");
        return ExitCode::from(2);
    };
    let bytes = microarena_core::build::example::synthetic(ops);
    if let Err(e) = std::fs::write(out, &bytes) {
        eprintln!("{out}: {e}");
        return ExitCode::from(2);
    }
    eprintln!("{out}: {ops} ops, {} bytes", bytes.len());
    ExitCode::SUCCESS
}
