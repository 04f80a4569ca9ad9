//! Float models TFLM can run on which TFLM's greedy planner is not optimal, so
//! an offline plan from `microarena optimize` lowers the head TFLM measures.
//!
//! `cargo run -p microarena-core --example offline_demo -- OUT_DIR` writes
//! `offline_demo_<seed>.tflite` for the seeds below; `-- --search N` scores
//! seeds 0..N and prints those where `optimize` beats greedy the most.
//!
//! Each model is a tree of FULLY_CONNECTED layers of random widths (float32,
//! deterministic weights) whose leaves are joined by one CONCATENATION.

use microarena_core::build::builder::ModelBuilder;
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp};
use microarena_core::rewrite::optimize::{self, Options};
use microarena_core::tflm::profile::X86_64;

/// Seeds written by default (found with `--search 3000`).
const SEEDS: &[u64] = &[2578, 895, 1797];

fn xorshift(mut s: u64) -> impl FnMut() -> u64 {
    s = s.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

/// The demo model for `seed`.
pub fn demo_model(seed: u64) -> Vec<u8> {
    let mut next = xorshift(seed);
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let width = |r: u64| [4i32, 8, 12, 16, 24, 32, 48, 64][(r % 8) as usize];
    let w0 = width(next());
    let x = b.tensor(g, "x", &[1, w0], DType::F32).id();
    // (tensor, width, consumed)
    let mut tensors: Vec<(i32, i32, bool)> = vec![(x, w0, false)];
    let n_ops = 5 + (next() % 4) as usize;
    for i in 0..n_ops {
        // Prefer recent tensors so lifetimes stay short and varied.
        let back = (next() % 3) as usize;
        let k = tensors.len().saturating_sub(1 + back);
        let (src, k_w, _) = tensors[k];
        tensors[k].2 = true;
        let m = width(next());
        let weights: Vec<f32> = (0..(m * k_w))
            .map(|_| ((next() % 2001) as f32 - 1000.0) / 4000.0)
            .collect();
        let wt = b
            .tensor(g, &format!("w{i}"), &[m, k_w], DType::F32)
            .data_f32(&weights)
            .id();
        let bias: Vec<f32> = (0..m)
            .map(|_| ((next() % 201) as f32 - 100.0) / 400.0)
            .collect();
        let bt = b
            .tensor(g, &format!("b{i}"), &[m], DType::F32)
            .data_f32(&bias)
            .id();
        let y = b.tensor(g, &format!("h{i}"), &[1, m], DType::F32).id();
        b.op(g, BuiltinOp::FULLY_CONNECTED, &[src, wt, bt], &[y])
            .fc_options(Activation::Relu, false);
        tensors.push((y, m, false));
    }
    let leaves: Vec<(i32, i32)> = tensors
        .iter()
        .filter(|t| !t.2)
        .map(|t| (t.0, t.1))
        .collect();
    let out = if leaves.len() == 1 {
        leaves[0].0
    } else {
        let total: i32 = leaves.iter().map(|l| l.1).sum();
        let y = b.tensor(g, "y", &[1, total], DType::F32).id();
        let ins: Vec<i32> = leaves.iter().map(|l| l.0).collect();
        b.op(g, BuiltinOp::CONCATENATION, &ins, &[y])
            .concat_options(1, Activation::None);
        y
    };
    b.inputs(g, &[x]);
    b.outputs(g, &[out]);
    b.build().expect("demo model is well formed")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--search") {
        let n: u64 = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(1000);
        let mut found = Vec::new();
        for seed in 0..n {
            let bytes = demo_model(seed);
            let r = optimize::optimize(&bytes, &Options::new(&X86_64)).expect("optimizes");
            if r.head_bytes < r.original_head_bytes {
                found.push((
                    r.original_head_bytes - r.head_bytes,
                    seed,
                    r.original_head_bytes,
                    r.head_bytes,
                ));
            }
        }
        found.sort_by(|a, b| b.cmp(a));
        for (gain, seed, from, to) in found.iter().take(10) {
            println!("seed {seed}: {from} -> {to} (-{gain})");
        }
        return;
    }
    let Some(dir) = args.first() else {
        eprintln!("usage: offline_demo OUT_DIR | --search N");
        std::process::exit(2);
    };
    std::fs::create_dir_all(dir).expect("create the output folder");
    for &seed in SEEDS {
        let path = std::path::Path::new(dir).join(format!("offline_demo_{seed}.tflite"));
        std::fs::write(&path, demo_model(seed)).expect("write the model");
        println!("{}", path.display());
    }
}
