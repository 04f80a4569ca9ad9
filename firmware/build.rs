//! Runs on the host: lowers the embedded model with microarena-core, computes
//! the exact arena the runtime needs, and runs the *host* build of the same
//! runtime on a deterministic input so the firmware can check that the target
//! build gives identical bytes. Also picks memory.x for the target board.
//!
//! Model: `$MICROARENA_FIRMWARE_MODEL` (a .tflite path) if set, otherwise the
//! demo model written with core's builder (`microarena_core::build::example::demo_model`).
//!
//! Kernels: writes `kernels.rs` with the image's opcodes (each once, in
//! first-use order), its (opcode, output type) pairs and a
//! `microarena_runtime::resolver!` of them, so the firmware links only the
//! kernels, and the kernels' type branches, this model runs (TFLM's
//! `MicroMutableOpResolver`, chosen by the build instead of by hand).
//!
//! Golden data: with `$MICROARENA_FIRMWARE_INPUT` and
//! `$MICROARENA_FIRMWARE_EXPECTED` (raw little-endian files, all graph inputs
//! resp. outputs concatenated, e.g. `../shared/golden/<model>/input0.bin` and
//! `output0.bin`, which TFLM computed), the firmware feeds that input and
//! compares the device outputs with TFLM's bytes instead of the host runtime's.

use std::path::PathBuf;
use std::{env, fs};

use microarena_core::Model;
use microarena_core::build::example::{demo_model, pseudo_random_bytes};
use microarena_core::lower::{Execution, LowerOptions, OpDataIn, lower_with, runtime_arena_with};
use microarena_runtime::runtime_layout::{self, op_name};
use microarena_runtime::{Image, Interpreter, freeze_opdata};

fn main() {
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let target = env::var("TARGET").unwrap_or_default();
    // The board: micro:bit (Cortex-M0) for thumbv6m, mps2-an386 otherwise;
    // MICROARENA_FIRMWARE_BOARD=mps2 puts a thumbv6m build on the mps2 map,
    // which bench/cortex-m/run.sh runs on mps2-an385 for the Cortex-M0+
    // instruction counts (the micro:bit's 16 KiB of RAM and 256 KiB of
    // flash hold none of the benchmarked models).
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_BOARD");
    let memory = match env::var("MICROARENA_FIRMWARE_BOARD").as_deref() {
        Ok("mps2") => "memory-mps2.x",
        Ok("microbit") => "memory-microbit.x",
        Ok(other) if !other.is_empty() => {
            panic!("MICROARENA_FIRMWARE_BOARD={other}: expected mps2 or microbit")
        }
        _ if target.starts_with("thumbv6m") => "memory-microbit.x",
        _ => "memory-mps2.x",
    };
    fs::copy(memory, out.join("memory.x")).expect("copy memory.x");
    // memory.x INCLUDEs the layout both boards share.
    fs::copy("regions.x", out.join("regions.x")).expect("copy regions.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-changed={memory}");
    println!("cargo:rerun-if-changed=regions.x");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_MODEL");
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_INPUT");
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_EXPECTED");
    let golden = |var: &str| {
        env::var_os(var).map(|p| {
            println!("cargo:rerun-if-changed={}", PathBuf::from(&p).display());
            fs::read(&p).unwrap_or_else(|e| panic!("{var}={}: {e}", p.display()))
        })
    };
    let golden_input = golden("MICROARENA_FIRMWARE_INPUT");
    let golden_expected = golden("MICROARENA_FIRMWARE_EXPECTED");
    if golden_input.is_some() != golden_expected.is_some() {
        panic!("set both MICROARENA_FIRMWARE_INPUT and MICROARENA_FIRMWARE_EXPECTED, or neither");
    }

    let (name, tflite) = match env::var_os("MICROARENA_FIRMWARE_MODEL") {
        Some(p) => {
            println!("cargo:rerun-if-changed={}", PathBuf::from(&p).display());
            let bytes = fs::read(&p)
                .unwrap_or_else(|e| panic!("MICROARENA_FIRMWARE_MODEL={}: {e}", p.display()));
            (
                PathBuf::from(&p)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                bytes,
            )
        }
        None => ("demo (generated)".to_string(), demo_model()),
    };
    let model = Model::parse(&tflite).unwrap_or_else(|e| panic!("{name}: {e}"));
    // A model with variable tensors (LSTM state) may answer differently on
    // each invoke, so only a stateless model's outputs must be stable.
    let stateful = model
        .subgraphs
        .iter()
        .any(|g| g.tensors.iter().any(|t| t.is_variable));
    // The OpData goes to flash (filled here by the host build of the same
    // runtime; the device recomputes and compares it): the arena holds the
    // head and the variables only. MICROARENA_FIRMWARE_OPDATA=tail keeps it
    // in the arena, as TFLM does.
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_OPDATA");
    let opdata = match env::var("MICROARENA_FIRMWARE_OPDATA").as_deref() {
        Ok("tail") => OpDataIn::Tail,
        Ok("flash") | Err(_) => OpDataIn::Flash,
        Ok(other) => panic!("MICROARENA_FIRMWARE_OPDATA={other}: expected tail or flash"),
    };
    // Patch-based in row bands where a chain of windowed ops lowers the head
    // (plain otherwise); MICROARENA_FIRMWARE_EXEC=plain runs every op whole.
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_EXEC");
    let execution = match env::var("MICROARENA_FIRMWARE_EXEC").as_deref() {
        Ok("plain") => Execution::Plain,
        Ok("banded") | Err(_) => Execution::Banded,
        Ok(other) => panic!("MICROARENA_FIRMWARE_EXEC={other}: expected plain or banded"),
    };
    // In-place execution (element-wise ops over dying inputs, RESHAPE as an
    // alias) with MICROARENA_FIRMWARE_INPLACE=1; off by default.
    println!("cargo:rerun-if-env-changed=MICROARENA_FIRMWARE_INPLACE");
    let in_place = env::var("MICROARENA_FIRMWARE_INPLACE").is_ok_and(|v| v == "1");
    let options = LowerOptions {
        opdata,
        execution,
        in_place,
    };
    let mut image = lower_with(&model, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
    freeze_opdata(&mut image).unwrap_or_else(|e| panic!("{name}: {e}"));
    let arena = runtime_arena_with(&model, &options).unwrap_or_else(|e| panic!("{name}: {e}"));

    // Expected outputs from the host build of the runtime (same code).
    let mut buf = vec![0u8; arena.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut buf).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut inputs = Vec::new();
    for i in 0..it.image().input_count() {
        let dst = it.input_mut(i).expect("input");
        let data = match &golden_input {
            Some(g) => g
                .get(inputs.len()..inputs.len() + dst.len())
                .unwrap_or_else(|| panic!("MICROARENA_FIRMWARE_INPUT is too short for input {i}"))
                .to_vec(),
            None => pseudo_random_bytes(0x5eed + i as u32, dst.len()),
        };
        dst.copy_from_slice(&data);
        inputs.extend_from_slice(&data);
    }
    if let Some(g) = &golden_input {
        assert_eq!(g.len(), inputs.len(), "MICROARENA_FIRMWARE_INPUT length");
    }
    it.invoke().unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut expected = Vec::new();
    for i in 0..it.image().output_count() {
        expected.extend_from_slice(it.output(i).expect("output"));
    }
    assert_eq!(
        it.memory_usage().high_water as u64,
        arena.total_bytes,
        "prediction drifted from the runtime"
    );

    let source = match golden_expected {
        Some(g) => {
            if g != expected {
                println!(
                    "cargo:warning=the host runtime's outputs differ from MICROARENA_FIRMWARE_EXPECTED; the device run will fail"
                );
            }
            expected = g;
            "TFLM's golden output"
        }
        None => "the host runtime",
    };
    fs::write(out.join("kernels.rs"), kernels_rs(&image)).expect("write kernels");
    fs::write(out.join("model.bin"), &image).expect("write image");
    fs::write(out.join("input.bin"), &inputs).expect("write input");
    fs::write(out.join("expected.bin"), &expected).expect("write expected");
    fs::write(
        out.join("consts.rs"),
        format!(
            "/// Model the image was lowered from.\npub const MODEL_NAME: &str = {name:?};\n\
             /// Exact arena the runtime needs (core's prediction, checked on the host).\npub const ARENA_BYTES: usize = {};\n\
             /// Planned head.\npub const HEAD_BYTES: usize = {};\n\
             /// Runtime tail (variables, and the OpData unless it is in flash).\npub const TAIL_BYTES: usize = {};\n\
             /// Where the expected outputs come from.\npub const EXPECTED_SOURCE: &str = {source:?};\n\
             /// The model has variable tensors (state kept across invokes).\npub const STATEFUL: bool = {stateful};\n",
            arena.total_bytes, arena.head_bytes, arena.tail_bytes
        ),
    )
    .expect("write consts");
}

/// `kernels.rs`: the image's opcodes and the resolver of their kernels.
fn kernels_rs(image: &[u8]) -> String {
    let img = Image::parse(image).expect("image");
    let mut codes: Vec<u8> = Vec::new();
    let mut types: Vec<(u8, i8)> = Vec::new();
    let (mut banded, mut rows_in_place, mut reducers) = (false, false, false);
    for i in 0..img.op_count() {
        let op = img.op(i).expect("op");
        if !codes.contains(&op.opcode) {
            codes.push(op.opcode);
        }
        let out = img.tensor(usize::from(op.output)).expect("output").dtype;
        if !types.contains(&(op.opcode, out)) {
            types.push((op.opcode, out));
        }
        banded |= op.exec != runtime_layout::EXEC_WHOLE;
        reducers |= img.reduces_in_stage(&op).expect("op");
        rows_in_place |=
            op.in_place == Some(0) && runtime_layout::opcode::in_place_by_rows(op.opcode);
    }
    let modes: String = [
        (banded, ", banded"),
        (reducers, ", reducers"),
        (rows_in_place, ", rows_in_place"),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .map(|(_, m)| *m)
    .collect();
    let list: String = codes
        .iter()
        .map(|&c| format!("    {c}, // {}\n", op_name(i32::from(c))))
        .collect();
    let type_list: String = types
        .iter()
        .map(|&(c, t)| format!("    ({c}, {t}),\n"))
        .collect();
    format!(
        "/// Opcodes of the image's operators, each once, in first-use order.\n\
         pub const KERNEL_OPCODES: &[u8] = &[\n{list}];\n\
         /// (opcode, output 0's element type code) of the image's operators, each once.\n\
         pub const KERNEL_TYPES: &[(u8, i8)] = &[\n{type_list}];\n\
         /// The kernels this firmware links: the image's and no others, with\n\
         /// only the type branches its ops take, and the execution modes\n\
         /// beyond running ops whole that it uses.\n\
         pub static KERNELS: microarena_runtime::Resolver =\n    microarena_runtime::resolver!(KERNEL_OPCODES{modes}; types: KERNEL_TYPES);\n"
    )
}
