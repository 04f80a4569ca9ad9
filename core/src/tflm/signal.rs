//! OpData of TFLM's Signal-library kernels (the audio front end: `signal/micro/kernels/*.cc`
//! at tflite-micro 90b983c2), laid out by the C rules for the target's ABI.
//!
//! These structs mix `int32_t`, pointers, `size_t`, `bool` and `TfLiteType`, so their size
//! is not one figure per kernel: on LP64 a pointer after an odd number of `int32_t`s adds
//! padding, on ILP32 with short enums a `TfLiteType` is one byte. Deriving them from the
//! field list keeps one rule for every target instead of a measured number per ABI.

use super::profile::TargetProfile;

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

/// kiss_fftr's state for an `fft_length`-point real FFT (`kiss_fftr_alloc`, kissfft v130 as
/// patched by TFLM): `kiss_fftr_state` (three pointers), the complex sub-FFT of
/// `nfft = fft_length / 2` points (`kiss_fft_state`: `nfft`, `inverse`, 64 `factors`, then
/// `nfft` twiddles of 4 bytes, the first inside the struct) and `3·nfft/2` super-twiddles.
/// The int16 variant's complex values are 4 bytes.
pub fn rfft_int16_state(p: &TargetProfile, fft_length: u64) -> u64 {
    let nfft = fft_length / 2;
    let kiss_fft_state = 4 + 4 + 4 * 64 + 4;
    3 * u64::from(p.pointer_bytes)
        + kiss_fft_state
        + 4 * nfft.saturating_sub(1)
        + 4 * (nfft * 3 / 2)
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
        assert_eq!(rfft_int16_state(&X86_64, 512), 24 + 268 + 1020 + 1536);
        assert_eq!(rfft_int16_state(&CORTEX_M, 512), 12 + 268 + 1020 + 1536);
    }
}
