//! TFLM's Signal-library kernels (the audio front end: `signal/micro/kernels/*.cc`
//! at tflite-micro 90b983c2), laid out by the C rules for the target's ABI.
//!
//! These structs mix `int32_t`, pointers, `size_t`, `bool` and `TfLiteType`, so their size
//! is not one figure per kernel: on LP64 a pointer after an odd number of `int32_t`s adds
//! padding, on ILP32 with short enums a `TfLiteType` is one byte. Deriving them from the
//! field list keeps one rule for every target instead of a measured number per ABI.
//!
//! Custom operators the wheel's op resolver registers (the audio front end,
//! `signal/micro/kernels/*.cc`). They have no builtin data; their options
//! are FlexBuffers maps read by position ([`crate::read::flex`]), and most
//! keep their state in Init or Prepare allocations sized from them.

use alloc::vec;
use alloc::vec::Vec;

use super::{Ctx, Kernel, Op, Persistent, Prep, all_io, kernel, prod};
use crate::read::dtype::DType;
use crate::read::flex;
use crate::tflm::profile::TargetProfile;

/// A Signal op's row: no builtin data, Init from `init`, Prepare `prepare`.
const fn signal(
    name: &'static str,
    source: &'static str,
    init: fn(&Ctx<'_>) -> Vec<Persistent>,
    prepare: fn(&Ctx<'_>, &mut Prep),
) -> Kernel {
    Kernel {
        op: Op::Custom(name),
        init: Some(init),
        prepare,
        ..kernel(0, source)
    }
}

pub(super) const KERNELS: &[Kernel] = &[
    signal("SignalWindow", "window.cc", |_| op_data(8), all_io),
    signal(
        "SignalFftAutoScale",
        "fft_auto_scale_kernel.cc",
        |_| Vec::new(),
        all_io,
    ),
    signal("SignalRfft", "rfft.cc", rfft_init, rfft_prepare),
    signal("SignalIrfft", "irfft.cc", irfft_init, all_io),
    signal("SignalEnergy", "energy.cc", |_| op_data(8), all_io),
    signal(
        "SignalFilterBank",
        "filter_bank.cc",
        filter_bank_init,
        all_io,
    ),
    signal(
        "SignalFilterBankSquareRoot",
        "filter_bank_square_root.cc",
        |_| Vec::new(),
        all_io,
    ),
    signal(
        "SignalFilterBankSpectralSubtraction",
        "filter_bank_spectral_subtraction.cc",
        spectral_subtraction_init,
        all_io,
    ),
    signal("SignalPCAN", "pcan.cc", |_| op_data(4), all_io),
    signal(
        "SignalFilterBankLog",
        "filter_bank_log.cc",
        |_| op_data(8),
        all_io,
    ),
    signal("SignalDelay", "delay.cc", delay_init, delay_prepare),
    signal("SignalFramer", "framer.cc", framer_init, framer_prepare),
    signal(
        "SignalOverlapAdd",
        "overlap_add.cc",
        overlap_add_init,
        overlap_add_prepare,
    ),
    signal("SignalStacker", "stacker.cc", stacker_init, all_io),
];

fn op_data(bytes: u64) -> Vec<Persistent> {
    vec![Persistent {
        bytes,
        purpose: "OpData",
    }]
}

/// The op's FlexBuffers option at map position `i`, as TFLM's
/// `ElementAsInt32` reads it (0 when absent or negative, so sizes stay sane
/// on hostile options).
fn option(cx: &Ctx<'_>, i: usize) -> u64 {
    flex::map_values(cx.op.custom_options)
        .and_then(|v| v.get(i).copied())
        .map_or(0, |v| v.clamp(0, i64::from(i32::MAX)) as u64)
}

/// Per-outer-dimension state buffers counted one by one up to this many;
/// beyond it (no real model comes near) they are counted as one, flagged.
const MAX_STATE_BUFFERS: u64 = 4096;

/// `count` persistent buffers of `bytes` each, in order.
fn per_outer(p: &mut Prep, count: u64, bytes: u64, purpose: &'static str) {
    if count > MAX_STATE_BUFFERS {
        p.estimated("more than 4,096 state buffers; counted as one allocation")
            .persistent(count.saturating_mul(bytes), purpose);
        return;
    }
    for _ in 0..count {
        p.persistent(bytes, purpose);
    }
}

/// The `T` option (map position 0): a TFLite type code.
fn type_option(cx: &Ctx<'_>) -> Option<DType> {
    flex::map_values(cx.op.custom_options)
        .and_then(|v| v.first().copied())
        .and_then(|v| i8::try_from(v).ok())
        .and_then(DType::from_code)
}
/// One C field: size and alignment.
#[derive(Clone, Copy)]
struct Field {
    bytes: u32,
    align: u32,
}

const I32: Field = Field { bytes: 4, align: 4 };
const BOOL: Field = Field { bytes: 1, align: 1 };

fn pointer(p: &TargetProfile) -> Field {
    Field {
        bytes: p.pointer_bytes,
        align: p.pointer_bytes,
    }
}

/// `size_t` is pointer-sized on both ABIs TFLM targets here.
fn size_t(p: &TargetProfile) -> Field {
    pointer(p)
}

fn tflite_type(p: &TargetProfile) -> Field {
    Field {
        bytes: p.enum_bytes,
        align: p.enum_bytes,
    }
}

/// `sizeof` of a struct with these fields in order (natural alignment, tail padding to
/// the largest member's alignment). A nested struct is passed as its fields, which gives
/// the same layout when it starts at offset 0, as every nested config here does.
fn c_struct(fields: &[Field]) -> u64 {
    let mut offset = 0u64;
    let mut align = 1u64;
    for f in fields {
        let a = u64::from(f.align);
        offset = offset.div_ceil(a) * a + u64::from(f.bytes);
        align = align.max(a);
    }
    offset.div_ceil(align) * align
}

/// `TFLMSignalFilterBankParams` (filter_bank.cc): `FilterbankConfig` (signal/src/filter_bank.h:
/// `num_channels`, five array pointers, `output_scale`, `input_correction_bits`), then
/// the `uint64_t*` work area.
pub fn filter_bank_params(p: &TargetProfile) -> u64 {
    let ptr = pointer(p);
    c_struct(&[I32, ptr, ptr, ptr, ptr, ptr, I32, I32, ptr])
}

/// `TFLMSignalSpectralSubtractionParams` (filter_bank_spectral_subtraction.cc):
/// `SpectralSubtractionConfig` (signal/src/filter_bank_spectral_subtraction.h: eight
/// 32-bit fields and `bool clamping`), the noise-estimate pointer and its `size_t` length.
pub fn spectral_subtraction_params(p: &TargetProfile) -> u64 {
    c_struct(&[
        I32,
        I32,
        I32,
        I32,
        I32,
        I32,
        I32,
        I32,
        BOOL,
        pointer(p),
        size_t(p),
    ])
}

/// `TfLiteAudioFrontendRfftParams<T>` (rfft.cc): four `int32_t`, `TfLiteType fft_type`,
/// `T* work_area`, `int scratch_buffer_index`, `int8_t* state`.
pub fn rfft_params(p: &TargetProfile) -> u64 {
    let ptr = pointer(p);
    c_struct(&[I32, I32, I32, I32, tflite_type(p), ptr, I32, ptr])
}

/// kiss_fftr's state for an `fft_length`-point real FFT (`kiss_fftr_alloc`,
/// kissfft v130 as patched by TFLM) with complex values of `cpx` bytes
/// (4 for int16, 8 for int32 and float): `kiss_fftr_state` (three
/// pointers), the complex sub-FFT of `nfft = fft_length / 2` points
/// (`kiss_fft_state`: `nfft`, `inverse`, 64 `factors`, then `nfft`
/// twiddles, the first inside the struct) and `3·nfft/2` super-twiddles.
pub fn kiss_fftr_state(p: &TargetProfile, fft_length: u64, cpx: u64) -> u64 {
    let nfft = fft_length / 2;
    let kiss_fft_state = c_struct(&[
        I32,
        I32,
        Field {
            bytes: 256,
            align: 4,
        },
        Field {
            bytes: cpx as u32,
            align: 4,
        },
    ]);
    3 * u64::from(p.pointer_bytes)
        + kiss_fft_state
        + cpx * nfft.saturating_sub(1)
        + cpx * (nfft * 3 / 2)
}

/// The FFT's element type, from the input's (RFFT) or the `T` option.
fn complex_bytes(t: Option<DType>) -> u64 {
    match t {
        Some(DType::I16) => 4,
        _ => 8,
    }
}

/// `RfftInit`: the params struct, then kiss_fftr's state for `fft_length`
/// (option 1).
fn rfft_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    let p = cx.profile;
    let t = type_option(cx);
    let n = option(cx, 1);
    // rfft_float.cc hands kiss_fftr's state over as it is (irfft_float.cc wraps it).
    let state = kiss_fftr_state(p, n, complex_bytes(t));
    vec![
        Persistent {
            bytes: rfft_params(p),
            purpose: "OpData",
        },
        Persistent {
            bytes: state,
            purpose: "FFT state",
        },
    ]
}

/// `RfftPrepare`: input and output, then one work buffer of `fft_length`
/// elements of the input type.
fn rfft_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    let el = cx.in_type(0).and_then(DType::size_bytes).unwrap_or(2);
    p.scratch(prod(&[option(cx, 1), u64::from(el)]), "FFT work buffer");
}

/// `IrfftInit`: `TfLiteAudioFrontendIrfftParams` (four int32, a type and a
/// pointer), then the inverse FFT's state (option 1 is `fft_length`).
fn irfft_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    let p = cx.profile;
    let t = type_option(cx);
    if !matches!(t, Some(DType::I16 | DType::I32 | DType::F32)) {
        return Vec::new();
    }
    let mut state = kiss_fftr_state(p, option(cx, 1), complex_bytes(t));
    if t == Some(DType::F32) {
        state += c_struct(&[I32, pointer(p)]);
    }
    vec![
        Persistent {
            bytes: c_struct(&[I32, I32, I32, I32, tflite_type(p), pointer(p)]),
            purpose: "OpData",
        },
        Persistent {
            bytes: state,
            purpose: "inverse FFT state",
        },
    ]
}

fn filter_bank_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    vec![
        Persistent {
            bytes: filter_bank_params(cx.profile),
            purpose: "OpData",
        },
        Persistent {
            bytes: 8 * (cx.out_elems(0) + 1),
            purpose: "work buffer",
        },
    ]
}

fn spectral_subtraction_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    vec![
        Persistent {
            bytes: spectral_subtraction_params(cx.profile),
            purpose: "OpData",
        },
        Persistent {
            bytes: 4 * cx.out_elems(0),
            purpose: "noise estimate",
        },
    ]
}

/// `tflm_signal::CircularBuffer` (three size_t, two int32, a pointer) and
/// its doubled int16 storage: `CircularBufferGetNeededMemory(capacity)`.
fn circular_buffer(p: &TargetProfile, capacity: u64) -> u64 {
    let st = size_t(p);
    c_struct(&[st, st, st, I32, I32, pointer(p)]).saturating_add(prod(&[4, capacity]))
}

/// Per outer dim, a state pointer and a circular-buffer pointer array, then
/// one circular buffer of `capacity` each (Delay, Framer).
fn circular_state(cx: &Ctx<'_>, p: &mut Prep, outer: u64, capacity: u64) {
    let ptr = cx.pointer_bytes();
    p.persistent(prod(&[outer, ptr]), "state pointers")
        .persistent(prod(&[outer, ptr]), "circular buffer pointers");
    per_outer(
        p,
        outer,
        circular_buffer(cx.profile, capacity),
        "circular buffer",
    );
}

/// The innermost dim of input 0 and the count of the rest.
fn frames(cx: &Ctx<'_>) -> (u64, u64) {
    let inner = cx
        .in_t(0)
        .and_then(|t| t.shape.last().copied())
        .map_or(0, |v| v.max(0) as u64);
    let outer = cx.in_elems(0).checked_div(inner).unwrap_or(0);
    (inner, outer)
}

/// `TFLMSignalFrontendDelayParams`: three int32, two pointers.
fn delay_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    let ptr = pointer(cx.profile);
    vec![Persistent {
        bytes: c_struct(&[I32, I32, I32, ptr, ptr]),
        purpose: "OpData",
    }]
}

/// `DelayPrepare`: a circular buffer of `frame_size + delay_length` per
/// outer dim.
fn delay_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    let (frame, outer) = frames(cx);
    circular_state(cx, p, outer, frame + option(cx, 0));
}

/// `TFLMSignalFramerParams`: four int32, a bool, two pointers.
fn framer_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    let ptr = pointer(cx.profile);
    vec![Persistent {
        bytes: c_struct(&[I32, I32, I32, I32, BOOL, ptr, ptr]),
        purpose: "OpData",
    }]
}

/// `FramerPrepare`: per outer dim a circular buffer of `frame_size` rounded
/// up to whole `frame_step`s.
fn framer_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    let (size, step) = (option(cx, 0), option(cx, 1));
    let (_, outer) = frames(cx);
    let capacity = prod(&[size.div_ceil(step.max(1)), step]);
    circular_state(cx, p, outer, capacity);
}

/// `TFLMSignalOverlapAddParams<T>`: four int32, a type, a pointer; nothing
/// for a `T` other than int16 or float32.
fn overlap_add_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    let p = cx.profile;
    if !matches!(type_option(cx), Some(DType::I16 | DType::F32)) {
        return Vec::new();
    }
    vec![Persistent {
        bytes: c_struct(&[I32, I32, I32, I32, tflite_type(p), pointer(p)]),
        purpose: "OpData",
    }]
}

/// `OverlapAddPrepare`: a state pointer per outer dim, then one frame of
/// state each.
fn overlap_add_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    let t = cx.in_t(0);
    let rank = t.map_or(0, |t| t.shape.len());
    let dim = |i: usize| {
        t.and_then(|t| t.shape.get(i).copied())
            .map_or(0, |v| v.max(0) as u64)
    };
    let frame = rank.checked_sub(1).map_or(0, dim);
    let n_frames = rank.checked_sub(2).map_or(0, dim);
    let outer = cx
        .in_elems(0)
        .checked_div(frame.saturating_mul(n_frames))
        .unwrap_or(0);
    let el = cx
        .in_type(0)
        .and_then(DType::size_bytes)
        .map_or(0, u64::from);
    p.persistent(prod(&[outer, cx.pointer_bytes()]), "state pointers");
    per_outer(p, outer, prod(&[frame, el]), "overlap state");
}

/// `StackerInit`: `TFLMSignalStackerParams` (four int32, two size_t, a bool,
/// two pointers), then its circular buffer of
/// `num_channels · (left + right + 1)`.
fn stacker_init(cx: &Ctx<'_>) -> Vec<Persistent> {
    let p = cx.profile;
    let (ptr, st) = (pointer(p), size_t(p));
    let buffer = prod(&[option(cx, 0), option(cx, 1) + option(cx, 2) + 1]);
    vec![
        Persistent {
            bytes: c_struct(&[I32, I32, I32, I32, st, st, BOOL, ptr, ptr]),
            purpose: "OpData",
        },
        Persistent {
            bytes: circular_buffer(p, buffer),
            purpose: "circular buffer",
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tflm::profile::{CORTEX_M, X86_64};

    #[test]
    fn lp64_layouts_keep_the_wheel_measured_sizes() {
        // Measured with the x86-64 wheel (tflm_x86_64.jsonl, audio_preprocessor_int8).
        assert_eq!(filter_bank_params(&X86_64), 64);
        assert_eq!(spectral_subtraction_params(&X86_64), 56);
        assert_eq!(rfft_params(&X86_64), 48);
    }

    #[test]
    fn ilp32_short_enum_layouts() {
        // 4 + 5·4 + 2·4 + 4; no padding anywhere.
        assert_eq!(filter_bank_params(&CORTEX_M), 36);
        // 8·4 + 1 → 33, pointer aligned to 36, + 4 + 4.
        assert_eq!(spectral_subtraction_params(&CORTEX_M), 44);
        // 4·4 + 1-byte TfLiteType → 17, pointer at 20, int at 24, pointer at 28.
        assert_eq!(rfft_params(&CORTEX_M), 32);
    }

    #[test]
    fn rfft_state_follows_the_pointer_size() {
        // 512-point FFT: nfft 256 → 3·ptr + 268 + 4·255 + 4·384.
        assert_eq!(kiss_fftr_state(&X86_64, 512, 4), 24 + 268 + 1020 + 1536);
        assert_eq!(kiss_fftr_state(&CORTEX_M, 512, 4), 12 + 268 + 1020 + 1536);
    }
}
