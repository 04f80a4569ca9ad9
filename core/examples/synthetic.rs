//! Writes `example::synthetic(OPS)` to a .tflite file, for the browser
//! performance tests and benchmarks outside Rust:
//! `cargo run --release -p microarena-core --example synthetic -- 2000 out.tflite`;
//! `--custom-every N` makes every Nth residual ADD a custom op no TFLM build
//! registers (`example::synthetic_with_custom`), for many identical diagnostics.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let every = match args.iter().position(|a| a == "--custom-every") {
        Some(k) => match args.get(k + 1).and_then(|s| s.parse().ok()) {
            Some(n) => n,
            None => {
                eprintln!("--custom-every needs a number");
                return ExitCode::from(2);
            }
        },
        None => 0,
    };
    let (Some(ops), Some(out)) = (args.first().and_then(|s| s.parse().ok()), args.get(1)) else {
        eprintln!("usage: synthetic OPS OUT.tflite [--custom-every N]");
        return ExitCode::from(2);
    };
    let bytes = microarena_core::build::example::synthetic_with_custom(ops, every);
    if let Err(e) = std::fs::write(out, &bytes) {
        eprintln!("{out}: {e}");
        return ExitCode::from(2);
    }
    eprintln!("{out}: {ops} ops, {} bytes", bytes.len());
    ExitCode::SUCCESS
}
