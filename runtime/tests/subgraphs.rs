//! Models with several subgraphs: CALL_ONCE with resource variables (a
//! stateful streaming model), IF with both branches, WHILE with a loop
//! count and nested calls run in the runtime, in the arena core predicts
//! (measured high-water = `runtime_arena`), with outputs worked out here by
//! hand; calls the runtime cannot take are refused by `lower` and by the
//! image check alike, never a panic. (`scripts/verify-kernels.sh` runs the
//! same patterns against TFLM itself: `core/examples/kernel_cases.rs`.)

use microarena_core::Model;
use microarena_core::build::builder::ModelBuilder;
use microarena_core::lower::{
    LowerError, LowerOptions, OpDataIn, lower, lower_with, runtime_arena,
};
use microarena_core::read::dtype::DType;
use microarena_core::read::ops::{Activation, BuiltinOp, OpOptions};
use microarena_runtime::runtime_layout as rl;
use microarena_runtime::{Error, Interpreter, freeze_opdata};

#[allow(dead_code)]
#[path = "../../core/examples/kernel_cases.rs"]
mod kernel_cases;

fn add() -> OpOptions {
    OpOptions::Elementwise {
        activation: Activation::None,
        pot_scale_int16: false,
    }
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn to_f32(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn to_i32(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Lowers `model` and builds an interpreter in exactly the predicted arena.
fn with_interpreter<R>(model: &[u8], f: impl FnOnce(&mut Interpreter<'_, '_>) -> R) -> R {
    let m = Model::parse(model).expect("parse");
    let need = runtime_arena(&m).expect("runtime arena");
    let image = lower(&m).expect("lower");
    let mut arena = vec![0u8; need.total_bytes as usize];
    let mut it = Interpreter::new(&image, &mut arena).expect("interpreter");
    let r = f(&mut it);
    assert_eq!(
        it.memory_usage().high_water as u64,
        need.total_bytes,
        "measured high-water = predicted"
    );
    r
}

/// CALL_ONCE runs `init`, which assigns `start` to the resource "acc"; each
/// invoke reads it, adds the input and assigns the sum back, and outputs it.
fn streaming_model(start: f32) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let x = b.tensor(g, "x", &[1, 8], DType::F32).id();
    b.op(g, BuiltinOp::CALL_ONCE, &[], &[])
        .options(OpOptions::CallOnce { init_subgraph: 1 });
    let r = b.tensor(g, "acc_handle", &[], DType::Resource).id();
    b.op(g, BuiltinOp::VAR_HANDLE, &[], &[r])
        .options(OpOptions::VarHandle {
            container: String::new(),
            shared_name: "acc".into(),
        });
    let s = b.tensor(g, "acc", &[1, 8], DType::F32).id();
    b.op(g, BuiltinOp::READ_VARIABLE, &[r], &[s]);
    let y = b.tensor(g, "sum", &[1, 8], DType::F32).id();
    b.op(g, BuiltinOp::ADD, &[s, x], &[y]).options(add());
    b.op(g, BuiltinOp::ASSIGN_VARIABLE, &[r, y], &[]);
    b.inputs(g, &[x]).outputs(g, &[y]);
    let init = b.named_subgraph("init");
    let r = b.tensor(init, "acc_handle", &[], DType::Resource).id();
    b.op(init, BuiltinOp::VAR_HANDLE, &[], &[r])
        .options(OpOptions::VarHandle {
            container: String::new(),
            shared_name: "acc".into(),
        });
    let v = b
        .tensor(init, "start", &[1, 8], DType::F32)
        .data_f32(&[start; 8])
        .id();
    b.op(init, BuiltinOp::ASSIGN_VARIABLE, &[r, v], &[]);
    b.build().expect("valid streaming model")
}

#[test]
fn call_once_initialises_a_resource_the_invokes_accumulate() {
    let x: Vec<f32> = (0..8).map(|i| i as f32 * 0.25 - 1.0).collect();
    with_interpreter(&streaming_model(1.5), |it| {
        let mut acc = [1.5f32; 8];
        for _ in 0..3 {
            it.input_mut(0).unwrap().copy_from_slice(&f32s(&x));
            it.invoke().unwrap();
            for (a, &v) in acc.iter_mut().zip(&x) {
                *a += v;
            }
            assert_eq!(to_f32(it.output(0).unwrap()), acc);
        }
        // Reset zeroes the resource (TFLM's ResetAll) and CALL_ONCE stays
        // done (its kernel has no reset): the next sum starts from 0.
        it.reset().unwrap();
        it.input_mut(0).unwrap().copy_from_slice(&f32s(&x));
        it.invoke().unwrap();
        assert_eq!(to_f32(it.output(0).unwrap()), x);
    });
}

#[test]
fn opdata_in_flash_runs_the_called_subgraphs_too() {
    // An int8 ADD in the called subgraph has OpData: its place in the
    // block is its subgraph's offset plus its own.
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let c = b.tensor(g, "c", &[1], DType::Bool).id();
    let x = b.tensor(g, "x", &[6], DType::I8).quant(0.5, 3).id();
    let x2 = b.tensor(g, "x2", &[6], DType::I8).quant(0.5, 3).id();
    b.op(g, BuiltinOp::ADD, &[x, x], &[x2]).options(add());
    let y = b.tensor(g, "y", &[6], DType::I8).quant(0.25, -2).id();
    b.op(g, BuiltinOp::IF, &[c, x2], &[y])
        .options(OpOptions::If {
            then_subgraph: 1,
            else_subgraph: 2,
        });
    b.inputs(g, &[c, x]).outputs(g, &[y]);
    for (name, scale) in [("then", 0.25f32), ("else", 0.5)] {
        let s = b.named_subgraph(name);
        let a = b.tensor(s, "a", &[6], DType::I8).quant(0.5, 3).id();
        let r = b.tensor(s, "r", &[6], DType::I8).quant(0.25, -2).id();
        let k = b
            .tensor(s, "k", &[6], DType::I8)
            .quant(scale, 0)
            .data(&[4, 8, 12, 16, 20, 24])
            .id();
        b.op(s, BuiltinOp::ADD, &[a, k], &[r]).options(add());
        b.inputs(s, &[a]).outputs(s, &[r]);
    }
    let model = b.build().expect("valid model");
    let m = Model::parse(&model).unwrap();
    let options = LowerOptions {
        opdata: OpDataIn::Flash,
        ..LowerOptions::default()
    };
    let plain = lower(&m).unwrap();
    let mut image = lower_with(&m, &options).unwrap();
    freeze_opdata(&mut image).unwrap();
    let need = microarena_core::lower::runtime_arena_with(&m, &options).unwrap();
    let x: Vec<u8> = [-7i8, -1, 0, 2, 9, 40].iter().map(|&v| v as u8).collect();
    for cond in [1u8, 0] {
        let mut outs = Vec::new();
        for (img, total) in [
            (&plain, runtime_arena(&m).unwrap().total_bytes),
            (&image, need.total_bytes),
        ] {
            let mut arena = vec![0u8; total as usize];
            let mut it = Interpreter::new(img, &mut arena).unwrap();
            it.input_mut(0).unwrap().copy_from_slice(&[cond]);
            it.input_mut(1).unwrap().copy_from_slice(&x);
            it.invoke().unwrap();
            outs.push(it.output(0).unwrap().to_vec());
            assert_eq!(it.memory_usage().high_water as u64, total);
        }
        assert_eq!(
            outs[0], outs[1],
            "OpData in flash = in the tail (cond {cond})"
        );
    }
}

/// IF: `then` doubles its input (ADD a a), `else` squares it (MUL a a).
fn if_model() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let cond = b.tensor(g, "cond", &[1], DType::Bool).id();
    let x = b.tensor(g, "x", &[5], DType::F32).id();
    let y = b.tensor(g, "y", &[5], DType::F32).id();
    b.op(g, BuiltinOp::IF, &[cond, x], &[y])
        .options(OpOptions::If {
            then_subgraph: 1,
            else_subgraph: 2,
        });
    b.inputs(g, &[cond, x]).outputs(g, &[y]);
    for (name, op) in [("then", BuiltinOp::ADD), ("else", BuiltinOp::MUL)] {
        let s = b.named_subgraph(name);
        let a = b.tensor(s, "a", &[5], DType::F32).id();
        let r = b.tensor(s, "r", &[5], DType::F32).id();
        b.op(s, op, &[a, a], &[r]).options(add());
        b.inputs(s, &[a]).outputs(s, &[r]);
    }
    b.build().expect("valid IF model")
}

#[test]
fn if_takes_both_branches() {
    let x = [-1.5f32, 0.0, 0.5, 2.0, 3.25];
    with_interpreter(&if_model(), |it| {
        for cond in [1u8, 0, 1] {
            it.input_mut(0).unwrap().copy_from_slice(&[cond]);
            it.input_mut(1).unwrap().copy_from_slice(&f32s(&x));
            it.invoke().unwrap();
            let want: Vec<f32> = if cond != 0 {
                x.iter().map(|v| v + v).collect()
            } else {
                x.iter().map(|v| v * v).collect()
            };
            assert_eq!(to_f32(it.output(0).unwrap()), want, "cond {cond}");
        }
    });
}

/// WHILE i < limit: i += 1, x += x (cond 1, body 2); `nested` puts the
/// body's doubling inside an IF whose condition is a constant true.
fn while_model(limit: i32, nested: bool) -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let i = b.tensor(g, "i", &[1], DType::I32).id();
    let x = b.tensor(g, "x", &[4], DType::F32).id();
    let i_out = b.tensor(g, "i_out", &[1], DType::I32).id();
    let x_out = b.tensor(g, "x_out", &[4], DType::F32).id();
    b.op(g, BuiltinOp::WHILE, &[i, x], &[i_out, x_out])
        .options(OpOptions::While {
            cond_subgraph: 1,
            body_subgraph: 2,
        });
    b.inputs(g, &[i, x]).outputs(g, &[i_out, x_out]);
    let c = b.named_subgraph("cond");
    let ci = b.tensor(c, "i", &[1], DType::I32).id();
    let cx = b.tensor(c, "x", &[4], DType::F32).id();
    let lim = b
        .tensor(c, "limit", &[1], DType::I32)
        .data_i32(&[limit])
        .id();
    let more = b.tensor(c, "more", &[1], DType::Bool).id();
    b.op(
        c,
        BuiltinOp(i32::from(rl::opcode::LESS)),
        &[ci, lim],
        &[more],
    );
    b.inputs(c, &[ci, cx]).outputs(c, &[more]);
    let body = b.named_subgraph("body");
    let bi = b.tensor(body, "i", &[1], DType::I32).id();
    let bx = b.tensor(body, "x", &[4], DType::F32).id();
    let one = b.tensor(body, "one", &[1], DType::I32).data_i32(&[1]).id();
    let bi2 = b.tensor(body, "i2", &[1], DType::I32).id();
    let bx2 = b.tensor(body, "x2", &[4], DType::F32).id();
    b.op(body, BuiltinOp::ADD, &[bi, one], &[bi2])
        .options(add());
    if nested {
        let t = b.tensor(body, "yes", &[1], DType::Bool).data(&[1]).id();
        b.op(body, BuiltinOp::IF, &[t, bx], &[bx2])
            .options(OpOptions::If {
                then_subgraph: 3,
                else_subgraph: 3,
            });
        let s = b.named_subgraph("double");
        let a = b.tensor(s, "a", &[4], DType::F32).id();
        let r = b.tensor(s, "r", &[4], DType::F32).id();
        b.op(s, BuiltinOp::ADD, &[a, a], &[r]).options(add());
        b.inputs(s, &[a]).outputs(s, &[r]);
    } else {
        b.op(body, BuiltinOp::ADD, &[bx, bx], &[bx2]).options(add());
    }
    b.inputs(body, &[bi, bx]).outputs(body, &[bi2, bx2]);
    b.build().expect("valid WHILE model")
}

#[test]
fn while_loops_its_count_and_nests_calls() {
    let x = [0.5f32, -1.0, 3.0, 0.125];
    for nested in [false, true] {
        with_interpreter(&while_model(5, nested), |it| {
            for start in [0i32, 3, 7] {
                it.input_mut(0)
                    .unwrap()
                    .copy_from_slice(&start.to_le_bytes());
                it.input_mut(1).unwrap().copy_from_slice(&f32s(&x));
                it.invoke().unwrap();
                let turns = (5 - start).max(0);
                assert_eq!(to_i32(it.output(0).unwrap()), [start.max(5)]);
                let want: Vec<f32> = x.iter().map(|v| v * (1 << turns) as f32).collect();
                assert_eq!(to_f32(it.output(1).unwrap()), want, "start {start}");
            }
        });
    }
}

#[test]
fn a_call_cycle_is_refused_by_lower_and_by_the_image_check() {
    // Subgraph 1 (IF's branches) calls itself.
    let mut b = ModelBuilder::new();
    let g = b.named_subgraph("main");
    let c = b.tensor(g, "c", &[1], DType::Bool).id();
    let x = b.tensor(g, "x", &[2], DType::F32).id();
    let y = b.tensor(g, "y", &[2], DType::F32).id();
    b.op(g, BuiltinOp::IF, &[c, x], &[y])
        .options(OpOptions::If {
            then_subgraph: 1,
            else_subgraph: 1,
        });
    b.inputs(g, &[c, x]).outputs(g, &[y]);
    let s = b.named_subgraph("again");
    let sc = b.tensor(s, "c", &[1], DType::Bool).id();
    let sx = b.tensor(s, "x", &[2], DType::F32).id();
    let sy = b.tensor(s, "y", &[2], DType::F32).id();
    b.op(s, BuiltinOp::IF, &[sc, sx], &[sy])
        .options(OpOptions::If {
            then_subgraph: 1,
            else_subgraph: 1,
        });
    b.inputs(s, &[sc, sx]).outputs(s, &[sy]);
    let model = b.build().expect("a model (TFLM would recurse)");
    let m = Model::parse(&model).unwrap();
    let err = lower(&m).expect_err("a cycle");
    assert!(matches!(err, LowerError::Subgraphs { .. }), "{err}");
    assert!(runtime_arena(&m).is_err());
    assert!(err.to_string().contains("calls itself"), "{err}");

    // The same cycle written into a valid image: the IF's branch index
    // rewritten from 1 to 0 (subgraph 0 then calls itself).
    let image = lower(&if_image_model()).unwrap();
    let op0 = u32_at(&image, rl::header::OPS_OFF) as usize;
    let p = op0 + rl::op::PARAMS;
    for (value, want) in [
        (0i32, "calls itself"),
        (3, "does not exist"),
        (-1, "does not exist"),
    ] {
        let mut bad = image.clone();
        bad[p..p + 4].copy_from_slice(&value.to_le_bytes());
        let mut arena = vec![0u8; 4096];
        let err = Interpreter::new(&bad, &mut arena).expect_err("refused");
        assert!(matches!(err, Error::BadCalls { .. }), "{err}");
        assert!(err.to_string().contains(want), "{err}");
    }
}

fn if_image_model() -> Model<'static> {
    let bytes: &'static [u8] = Box::leak(if_model().into_boxed_slice());
    Model::parse(bytes).unwrap()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[test]
fn every_corruption_of_a_multi_subgraph_image_is_an_error_never_a_panic() {
    // Every byte of the header, subgraph table and op records, flipped.
    let image = lower(&Model::parse(&streaming_model(0.5)).unwrap()).unwrap();
    let n_ops = u32_at(&image, rl::header::N_OPS) as usize;
    let ops = u32_at(&image, rl::header::OPS_OFF) as usize;
    let subs = u32_at(&image, rl::header::SUBGRAPHS_OFF) as usize;
    let n_sub = u32_at(&image, rl::header::N_SUBGRAPHS) as usize;
    assert_eq!(n_sub, 2);
    let ranges = [
        0..rl::HEADER_BYTES,
        ops..ops + n_ops * rl::OP_BYTES,
        subs..subs + n_sub * rl::SUBGRAPH_BYTES,
    ];
    for r in ranges {
        for at in r {
            for v in [0u8, 1, 0x7f, 0xff] {
                let mut bad = image.clone();
                bad[at] = v;
                let mut arena = vec![0u8; 8192];
                if let Ok(mut it) = Interpreter::new(&bad, &mut arena) {
                    for _ in 0..2 {
                        let _ = it.invoke();
                    }
                }
            }
        }
    }
}

#[test]
fn version_5_images_are_refused() {
    let mut image = lower(&if_image_model()).unwrap();
    image[rl::header::VERSION..rl::header::VERSION + 4].copy_from_slice(&5u32.to_le_bytes());
    let mut arena = vec![0u8; 4096];
    assert!(matches!(
        Interpreter::new(&image, &mut arena),
        Err(Error::UnsupportedVersion { found: 5 })
    ));
}

#[test]
fn every_verify_kernels_control_flow_case_runs_in_its_predicted_arena() {
    // The cases `scripts/verify-kernels.sh` compares with TFLM, and the
    // allocation probes with several subgraphs: each runs (as many invokes
    // as the oracle makes) with the measured high-water = the prediction.
    let mut models: Vec<(String, Vec<u8>, u32)> = kernel_cases::control_flow_cases()
        .into_iter()
        .map(|c| (c.name.to_string(), c.model, c.invokes))
        .collect();
    for (name, model) in kernel_cases::probe_models() {
        if Model::parse(&model).unwrap().subgraphs.len() > 1 {
            models.push((name.to_string(), model, 2));
        }
    }
    assert!(models.len() >= 14, "{} models", models.len());
    for (name, model, invokes) in models {
        with_interpreter(&model, |it| {
            for _ in 0..invokes {
                it.invoke().unwrap_or_else(|e| panic!("{name}: {e}"));
            }
        });
    }
}
