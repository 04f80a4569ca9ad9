//! The audio front end's Signal-library OpData on each ABI, on a builder-made model.
//!
//! TFLM's Signal kernels allocate C structs that mix `int32_t`, pointers, `size_t`, `bool`
//! and `TfLiteType` (signal/micro/kernels/*.cc at tflite-micro 90b983c2), so the Cortex-M
//! build (ILP32, one-byte short enums) allocates less than x86-64 for the same op. Every
//! expected size below is worked by hand from the field lists; the arithmetic is in the
//! comments.

use microarena_core::build::builder::{ModelBuilder, flex_int_map};
use microarena_core::plan::PlannerKind;
use microarena_core::read::dtype::DType;
use microarena_core::tflm::analysis::Analysis;
use microarena_core::tflm::profile::{self, TargetProfile};
use microarena_core::tflm::tail::{Category, Owner};
use microarena_core::{Config, Model, analyze};

/// RFFT (512 points, int16) → FILTER_BANK (32 channels) → SPECTRAL_SUBTRACTION.
fn front_end() -> Vec<u8> {
    let mut b = ModelBuilder::new();
    let g = b.subgraph();
    let frame = b.tensor(g, "frame", &[512], DType::I16).id();
    // 257 complex int16 values, interleaved: 514 elements for fft_length 512.
    let spectrum = b.tensor(g, "spectrum", &[514], DType::I16).id();
    let energy = b.tensor(g, "energy", &[257], DType::U32).id();
    let channels = b.tensor(g, "channels", &[32], DType::U64).id();
    let clean = b.tensor(g, "clean", &[32], DType::U32).id();
    let noise = b.tensor(g, "noise", &[32], DType::U32).id();
    // TFLM's RFFT reads its type and length from the options (T: INT16 = 7).
    b.custom_op(g, "SignalRfft", &[frame], &[spectrum])
        .custom_options(&flex_int_map(&[("T", 7), ("fft_length", 512)]));
    b.custom_op(g, "SignalEnergy", &[spectrum], &[energy]);
    b.custom_op(g, "SignalFilterBank", &[energy], &[channels]);
    b.custom_op(
        g,
        "SignalFilterBankSpectralSubtraction",
        &[channels],
        &[clean, noise],
    );
    b.inputs(g, &[frame]).outputs(g, &[clean, noise]);
    b.build().expect("builder model")
}

fn analysis(profile: &'static TargetProfile) -> Analysis {
    let bytes = front_end();
    let model = Model::parse(&bytes).expect("parses");
    analyze(
        &model,
        &Config {
            profile,
            planner: PlannerKind::TflmGreedy,
        },
    )
    .expect("analysis")
}

/// (requested, used) of every persistent buffer op `op` allocates, in order.
fn op_buffers(a: &Analysis, op: usize) -> Vec<(u64, u64)> {
    a.tail
        .allocs
        .iter()
        .filter(|t| {
            t.category == Category::PersistentBufferData
                && t.owner
                    == Owner::Op {
                        subgraph: 0,
                        op_index: op,
                    }
        })
        .map(|t| (t.requested, t.used))
        .collect()
}

#[test]
fn cortex_m_signal_op_data_is_laid_out_for_ilp32_with_short_enums() {
    let a = analysis(&profile::CORTEX_M);
    // The first persistent buffer may carry padding from the 12-byte eval tensors before it,
    // so only its request is pinned; every later one starts 16-aligned (used = ⌈req⌉₁₆).
    //
    // RFFT params: 4 int32 (16) + 1-byte TfLiteType → 17, `T*` aligned to 20 → 24,
    // int → 28, `int8_t*` → 32. kiss_fftr state: 3 pointers 12 + kiss_fft_state 268
    // (nfft, inverse, 64 factors, 1 twiddle) + 255 more twiddles ·4 = 1020 + 384
    // super-twiddles ·4 = 1536 ⇒ 2836, used 2848.
    let rfft = op_buffers(&a, 0);
    assert_eq!(rfft.len(), 2);
    assert_eq!(rfft[0].0, 32);
    assert_eq!(rfft[1], (2836, 2848));
    // Energy params: two int32 ⇒ 8, used 16.
    assert_eq!(op_buffers(&a, 1), vec![(8, 16)]);
    // Filter bank params: int32 + 5 pointers + 2 int32 (32) + `uint64_t*` ⇒ 36, used 48;
    // work area (32 + 1)·8 = 264, used 272.
    assert_eq!(op_buffers(&a, 2), vec![(36, 48), (264, 272)]);
    // Spectral subtraction params: 8 × 32-bit + bool = 33 → pointer at 36 → 40, size_t
    // → 44, used 48; noise estimate 32·4 = 128.
    assert_eq!(op_buffers(&a, 3), vec![(44, 48), (128, 128)]);
    // The sizes are derived for this ABI, not carried over from LP64: no estimate warning.
    assert!(
        a.diagnostics.iter().all(|d| !d.message.contains("LP64")),
        "{:?}",
        a.diagnostics
    );
}

#[test]
fn x86_64_signal_op_data_keeps_lp64_padding() {
    let a = analysis(&profile::X86_64);
    // RFFT params: 16 + 4-byte TfLiteType → 20, pointer aligned to 24 → 32, int → 36,
    // pointer aligned to 40 → 48. State: 3·8 = 24 + 268 + 1020 + 1536 = 2848.
    let rfft = op_buffers(&a, 0);
    assert_eq!(rfft.len(), 2);
    assert_eq!(rfft[0].0, 48);
    assert_eq!(rfft[1], (2848, 2848));
    // Filter bank: int32 padded to 8 + 5·8 + 2·4 = 56 + pointer ⇒ 64.
    assert_eq!(op_buffers(&a, 2), vec![(64, 64), (264, 272)]);
    // Spectral subtraction: 33 → pointer at 40 → 48, size_t → 56.
    assert_eq!(op_buffers(&a, 3), vec![(56, 64), (128, 128)]);
}
