//! Target profiles: every size and alignment that differs between targets,
//! as data. No other module branches on a target name.
//!
//! Sources (see `../shared/docs/tflm-arena.md` §4.3–4.4): struct layouts were
//! probed by compiling TFLM's headers (tensorflow/tflite-micro @90b983c) for
//! LP64 and for ILP32 with GCC's bare-metal short enums; the `x86_64` column is
//! confirmed against the `tflite-micro` PyPI wheel (0.dev20261023182759, built
//! with `USE_TFLM_COMPRESSION`), the ILP32 column against TFLM's published
//! Corstone-300 allocation table. The Xtensa column (`Ilp32Enum4`) is the same
//! headers compiled with `-fno-short-enums`, confirmed by esp-tflite-micro's
//! own build (`docs/esp-nn.md`).

/// Size and alignment of one allocation, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sz {
    /// `sizeof`.
    pub bytes: u32,
    /// `alignof`.
    pub align: u32,
}

const fn sz(bytes: u32, align: u32) -> Sz {
    Sz { bytes, align }
}

/// The C ABI a TFLM build lays its structs out for; kernel rows
/// (`tflm::kernels`) give their builtin data and OpData per ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abi {
    /// x86-64 as the `tflite-micro` wheel is built (8-byte pointers, 4-byte
    /// enums, `USE_TFLM_COMPRESSION` on).
    Lp64,
    /// 32-bit Arm with arm-none-eabi-gcc (4-byte pointers, 1-byte short
    /// enums, 8-aligned `int64_t`, compression off).
    Ilp32,
    /// 32-bit with 4-byte enums: Xtensa (ESP32, ESP32-S3) as Espressif's GCC builds it
    /// (4-byte pointers, enums never short, 8-aligned `int64_t` and `double`, compression
    /// off). Only structs holding a C enum differ from [`Abi::Ilp32`]: `TfLiteTensor`
    /// (40 B, not 32) and the builtin data listed in `docs/esp-nn.md`.
    Ilp32Enum4,
}

/// The DSP extensions CMSIS-NN's `*_get_buffer_size` functions switch on
/// (`ARM_MATH_DSP`, `ARM_MATH_MVEI` in `CMSIS-NN/Include/arm_nn_math_types.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuClass {
    /// Neither define: ARMv6-M and ARMv8-M Baseline (M0, M0+, M3, M23, M33 without DSP).
    NoDsp,
    /// `ARM_MATH_DSP`: ARMv7E-M and ARMv8-M Mainline with DSP (M4, M7, M33, M35P).
    Dsp,
    /// `ARM_MATH_MVEI` (and `ARM_MATH_DSP`): ARMv8.1-M with the Helium vector
    /// extension (M55, M85). CMSIS-NN's MVE kernels size their buffers for
    /// 16-byte Q registers, keep precomputed kernel sums and need none for
    /// average pooling.
    Mve,
}

/// Which ESP-NN paths `esp_nn.h` selects (`CONFIG_NN_OPTIMIZED`, ESP-NN's default):
/// the scratch sizes its `esp_nn_get_*_scratch_size` functions return differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EspChip {
    /// `CONFIG_IDF_TARGET_ESP32S3`: the ESP32-S3's SIMD functions (`esp_nn_esp32s3.h`),
    /// whose convolutions ask for scratch.
    S3,
    /// Every other chip without its own paths (ESP32, ESP32-C3, …): the generic `_opt`
    /// C functions (`esp_nn_generic_opt.h`), whose convolutions ask for none.
    Generic,
}

/// Which kernel implementations the TFLM build registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// TFLM's reference kernels (`tensorflow/lite/micro/kernels/*.cc`).
    Reference,
    /// `OPTIMIZED_KERNEL_DIR=cmsis_nn`, built with GCC and `KERNELS_OPTIMIZED_FOR_SPEED`:
    /// `kernels/cmsis_nn/*.cc` replace the reference kernels they cover (see `docs/cmsis-nn.md`).
    CmsisNn(CpuClass),
    /// Espressif's esp-tflite-micro: `kernels/esp_nn/*.cc` replace the reference
    /// kernels they cover, calling ESP-NN (see `docs/esp-nn.md`).
    EspNn(EspChip),
}

impl Backend {
    /// How messages name the kernel set.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Reference => "reference",
            Backend::CmsisNn(_) => "CMSIS-NN",
            Backend::EspNn(_) => "ESP-NN",
        }
    }
}

/// An NPU the TFLM build drives through a custom operator (`CO_PROCESSOR=` in TFLM's Makefile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoProcessor {
    /// Arm Ethos-U55/U65 (`CO_PROCESSOR=ethos_u`): the `ethos-u` custom operator Vela writes
    /// (`kernels/ethos_u/ethosu.cc`).
    EthosU,
}

impl CoProcessor {
    /// How messages name the NPU.
    pub fn name(self) -> &'static str {
        match self {
            CoProcessor::EthosU => "Arm Ethos-U",
        }
    }

    /// The TFLM Makefile setting that registers its operator.
    pub fn build_flag(self) -> &'static str {
        match self {
            CoProcessor::EthosU => "CO_PROCESSOR=ethos_u",
        }
    }

    /// The target that models that build.
    pub fn target(self) -> &'static str {
        match self {
            CoProcessor::EthosU => CORTEX_M55_ETHOS_U.name,
        }
    }
}

/// Everything the simulation of TFLM's allocator needs to know about a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetProfile {
    /// Name used on the command line and in reports (`x86_64`, `cortex-m`).
    pub name: &'static str,
    /// One line for humans.
    pub description: &'static str,
    /// `sizeof(void*)` (and `size_t`).
    pub pointer_bytes: u32,
    /// `sizeof` of a C enum such as `TfLiteType`: 4 on hosts and Xtensa, 1 with
    /// arm-none-eabi's short enums.
    pub enum_bytes: u32,
    /// Arena allocator object (Recording variant: the figures TFLM reports are recorded with it).
    pub arena_allocator: Sz,
    /// `GreedyMemoryPlanner` object.
    pub greedy_planner: Sz,
    /// `LinearMemoryPlanner` object (with its 1024-entry offset table).
    pub linear_planner: Sz,
    /// `MicroAllocator` object (Recording variant).
    pub micro_allocator: Sz,
    /// Plain `MicroAllocator` object, which the two-buffer `MicroAllocator::Create`
    /// builds (there is no recording variant of it); see [`crate::tflm::split`].
    pub plain_micro_allocator: Sz,
    /// `MicroBuiltinDataAllocator`.
    pub builtin_data_allocator: Sz,
    /// `SubgraphAllocations`, one per subgraph.
    pub subgraph_allocations: Sz,
    /// `MicroResourceVariables` object.
    pub resource_variables: Sz,
    /// One `MicroResourceVariables` entry.
    pub resource_variable_entry: u32,
    /// `TfLiteEvalTensor`.
    pub eval_tensor: Sz,
    /// `NodeAndRegistration`.
    pub node_and_registration: Sz,
    /// `TfLiteTensor` (static-memory variant).
    pub tensor: Sz,
    /// `TfLiteAffineQuantization`.
    pub affine_quantization: Sz,
    /// `ScratchBufferRequest` (head, during Prepare and planning).
    pub scratch_request: Sz,
    /// `ScratchBufferHandle` (tail).
    pub scratch_handle: Sz,
    /// `AllocationInfo` (temp, during planning).
    pub allocation_info: Sz,
    /// Greedy planner working memory per planned buffer (temp, during planning).
    pub planner_bytes_per_buffer: u32,
    /// The ABI kernels' builtin data and OpData follow.
    pub abi: Abi,
    /// Kernel implementations, whose Prepare rules (scratch, persistent buffers) differ.
    pub backend: Backend,
    /// The NPU whose custom operator the build registers, if any.
    pub co_processor: Option<CoProcessor>,
    /// The TFLM build this profile's figures were measured against, for humans
    /// (`None`: derived from struct tables, never compared with TFLM).
    pub measured_against: Option<&'static str>,
}

/// The `tflite-micro` PyPI wheel on x86-64: LP64, `USE_TFLM_COMPRESSION` on,
/// reference kernels, `RecordingMicroAllocator`. The figures in
/// `tflm_x86_64.jsonl` were measured with exactly this build.
pub const X86_64: TargetProfile = TargetProfile {
    name: "x86_64",
    description: "TFLM Python wheel on x86-64 (LP64, compression on, reference kernels, recording allocator)",
    pointer_bytes: 8,
    enum_bytes: 4,
    arena_allocator: sz(104, 8),
    greedy_planner: sz(72, 8),
    linear_planner: sz(8216, 8),
    micro_allocator: sz(272, 8),
    // 72 B plain (docs/tflm-arena.md §4.1) + the 24 B compression adds, as to the recording one.
    plain_micro_allocator: sz(96, 8),
    builtin_data_allocator: sz(16, 8),
    subgraph_allocations: sz(24, 8),
    resource_variables: sz(16, 16),
    resource_variable_entry: 40,
    eval_tensor: sz(24, 8),
    node_and_registration: sz(64, 8),
    tensor: sz(64, 8),
    affine_quantization: sz(24, 8),
    scratch_request: sz(16, 8),
    scratch_handle: sz(8, 8),
    allocation_info: sz(32, 8),
    planner_bytes_per_buffer: 40,
    abi: Abi::Lp64,
    backend: Backend::Reference,
    co_processor: None,
    measured_against: Some("tflite-micro wheel 0.dev20261023182759"),
};

/// TFLM's commit the Cortex-M profiles model (`tflm_cortex_m.jsonl`).
const TFLM_CORTEX_M: &str = "TFLM 90b983c2";

/// 32-bit Cortex-M built with arm-none-eabi-gcc (ILP32, short enums), reference
/// kernels, no compression, `RecordingMicroAllocator` (as TFLM's own Cortex-M
/// allocation tables are recorded; the plain `MicroAllocator` is 104 B smaller).
pub const CORTEX_M: TargetProfile = TargetProfile {
    name: "cortex-m",
    description: "Cortex-M with arm-none-eabi-gcc (ILP32, short enums, reference kernels, recording allocator)",
    pointer_bytes: 4,
    enum_bytes: 1,
    arena_allocator: sz(52, 4),
    greedy_planner: sz(44, 4),
    linear_planner: sz(4108, 4),
    micro_allocator: sz(124, 4),
    plain_micro_allocator: sz(36, 4),
    builtin_data_allocator: sz(8, 4),
    subgraph_allocations: sz(8, 4),
    resource_variables: sz(12, 16),
    resource_variable_entry: 20,
    eval_tensor: sz(12, 4),
    node_and_registration: sz(32, 4),
    tensor: sz(32, 4),
    affine_quantization: sz(12, 4),
    scratch_request: sz(12, 4),
    scratch_handle: sz(4, 4),
    allocation_info: sz(24, 4),
    planner_bytes_per_buffer: 40,
    abi: Abi::Ilp32,
    backend: Backend::Reference,
    co_processor: None,
    measured_against: Some(TFLM_CORTEX_M),
};

/// Cortex-M4/M7 with DSP and TFLM's CMSIS-NN kernels: the `cortex-m` ABI, the
/// CMSIS-NN OpData and the DSP scratch rules (`m4-cmsis-nn` in `tflm_cortex_m.jsonl`).
pub const CORTEX_M4_CMSIS_NN: TargetProfile = TargetProfile {
    name: "cortex-m4-cmsis-nn",
    description: "Cortex-M4/M7 with DSP, CMSIS-NN kernels (arm-none-eabi-gcc, ILP32, recording allocator)",
    backend: Backend::CmsisNn(CpuClass::Dsp),
    ..CORTEX_M
};

/// Cortex-M0/M0+ (ARMv6-M, RP2040) with TFLM's CMSIS-NN kernels: the same ABI and OpData,
/// the no-DSP scratch rules (`m0plus-cmsis-nn` in `tflm_cortex_m.jsonl`).
pub const CORTEX_M0PLUS_CMSIS_NN: TargetProfile = TargetProfile {
    name: "cortex-m0plus-cmsis-nn",
    description: "Cortex-M0/M0+ (ARMv6-M, e.g. RP2040), CMSIS-NN kernels (arm-none-eabi-gcc, ILP32, recording allocator)",
    backend: Backend::CmsisNn(CpuClass::NoDsp),
    ..CORTEX_M
};

/// Cortex-M33 (ARMv8-M Mainline with the DSP extension: RP2350, STM32U5, nRF5340, LPC55) with
/// TFLM's CMSIS-NN kernels. CMSIS-NN takes the same `ARM_MATH_DSP` paths as on the M4 and the
/// ABI is the same, so every figure is the M4's: TFLM 90b983c2 built for `cortex-m33` and run
/// under `qemu-arm -cpu cortex-m33` equals the `m4-cmsis-nn` build on all 713 kernel probes and
/// every shared model (`core/tests/kernel_probes.rs` holds it).
pub const CORTEX_M33_CMSIS_NN: TargetProfile = TargetProfile {
    name: "cortex-m33-cmsis-nn",
    description: "Cortex-M33 with DSP (e.g. RP2350, STM32U5, nRF5340), CMSIS-NN kernels (arm-none-eabi-gcc, ILP32, recording allocator)",
    measured_against: Some("TFLM 90b983c2 (cortex-m33 build)"),
    ..CORTEX_M4_CMSIS_NN
};

/// Cortex-M55 (ARMv8.1-M with Helium/MVE: Alif Ensemble, Himax WE2, STM32N6, Corstone-300)
/// with TFLM's CMSIS-NN kernels on their MVE paths (`ARM_MATH_MVEI`): the Cortex-M ABI and
/// OpData, CMSIS-NN's MVE buffer sizes and kernel sums (`docs/cmsis-nn.md`). Measured: TFLM
/// 90b983c2 built for `cortex-m55` with `-mfloat-abi=softfp` (a soft-float build drops MVE)
/// and run under `qemu-arm -cpu cortex-m55`, on every kernel probe and shared model.
pub const CORTEX_M55_CMSIS_NN: TargetProfile = TargetProfile {
    name: "cortex-m55-cmsis-nn",
    description: "Cortex-M55 with Helium/MVE (e.g. Alif Ensemble, STM32N6), CMSIS-NN kernels (arm-none-eabi-gcc, ILP32, recording allocator)",
    backend: Backend::CmsisNn(CpuClass::Mve),
    measured_against: Some("TFLM 90b983c2 (cortex-m55 build, MVE)"),
    ..CORTEX_M
};

/// Cortex-M55 driving an Arm Ethos-U55/U65 (Alif Ensemble, Himax WE2, Corstone-300): the
/// `cortex-m55-cmsis-nn` build with `CO_PROCESSOR=ethos_u`, which registers the `ethos-u`
/// custom operator that runs Vela's command streams. Its allocations need no NPU: measured
/// under `qemu-arm -cpu cortex-m55` with the driver's entry points stubbed.
pub const CORTEX_M55_ETHOS_U: TargetProfile = TargetProfile {
    name: "cortex-m55-ethos-u",
    description: "Cortex-M55 + Arm Ethos-U NPU running Vela-compiled models (CO_PROCESSOR=ethos_u, CMSIS-NN for CPU ops, ILP32, recording allocator)",
    co_processor: Some(CoProcessor::EthosU),
    measured_against: Some("TFLM 90b983c2 (cortex-m55 build, CO_PROCESSOR=ethos_u)"),
    ..CORTEX_M55_CMSIS_NN
};

/// esp-tflite-micro's TFLM copy (upstream TFLM 096563546, whose Prepare and OpData
/// equal 90b983c2's on every kernel) with its ESP-NN kernels, ESP-NN 1.2.3 (d45b843c).
const ESP_TFLM: &str = "esp-tflite-micro 99f49e14 (TFLM 096563546) + ESP-NN d45b843c";

/// ESP32-S3 (Xtensa LX7) with esp-tflite-micro's ESP-NN kernels: the Xtensa ABI (4-byte
/// enums: `TfLiteTensor` is 40 B), the ESP-NN OpData and the ESP32-S3 scratch rules. Measured:
/// esp-tflite-micro built with Xtensa's layout on a Cortex-M4 (4-byte enums, ESP-NN's S3 size
/// functions) and run under QEMU equals it on all 747 kernel probes and every shared model.
pub const ESP32S3_ESP_NN: TargetProfile = TargetProfile {
    name: "esp32s3-esp-nn",
    description: "ESP32-S3 (Xtensa LX7), esp-tflite-micro with ESP-NN's S3 kernels (ILP32, 4-byte enums, recording allocator)",
    enum_bytes: 4,
    tensor: sz(40, 4),
    abi: Abi::Ilp32Enum4,
    backend: Backend::EspNn(EspChip::S3),
    measured_against: Some(ESP_TFLM),
    ..CORTEX_M
};

/// ESP32 (Xtensa LX6) with esp-tflite-micro's ESP-NN kernels: as the S3, with ESP-NN's
/// generic C paths, whose convolutions ask for no scratch (measured likewise).
pub const ESP32_ESP_NN: TargetProfile = TargetProfile {
    name: "esp32-esp-nn",
    description: "ESP32 (Xtensa LX6), esp-tflite-micro with ESP-NN's generic kernels (ILP32, 4-byte enums, recording allocator)",
    backend: Backend::EspNn(EspChip::Generic),
    ..ESP32S3_ESP_NN
};

/// Every TFLM profile, in the order the CLI and the app list them.
pub const PROFILES: &[TargetProfile] = &[
    X86_64,
    CORTEX_M,
    CORTEX_M4_CMSIS_NN,
    CORTEX_M33_CMSIS_NN,
    CORTEX_M55_CMSIS_NN,
    CORTEX_M55_ETHOS_U,
    CORTEX_M0PLUS_CMSIS_NN,
    ESP32S3_ESP_NN,
    ESP32_ESP_NN,
];

/// Looks a profile up by its [`TargetProfile::name`].
pub fn by_name(name: &str) -> Option<&'static TargetProfile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// [`by_name`], with the error the shells print.
pub fn lookup(name: &str) -> Result<&'static TargetProfile, crate::UnknownName> {
    by_name(name).ok_or_else(|| crate::UnknownName {
        kind: "target",
        name: name.into(),
        choices: PROFILES.iter().map(|p| p.name).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_part_matches_the_spec() {
        // §4.1: 104+72+272+16+24 = 488 on the wheel; ILP32 Recording 52+44+124+8+8 = 236.
        let fixed = |p: &TargetProfile| {
            p.arena_allocator.bytes
                + p.greedy_planner.bytes
                + p.micro_allocator.bytes
                + p.builtin_data_allocator.bytes
                + p.subgraph_allocations.bytes
        };
        assert_eq!(fixed(&X86_64), 488);
        assert_eq!(fixed(&CORTEX_M), 236);
        assert_eq!(fixed(&CORTEX_M4_CMSIS_NN), 236);
        assert_eq!(fixed(&CORTEX_M0PLUS_CMSIS_NN), 236);
        assert_eq!(fixed(&CORTEX_M33_CMSIS_NN), 236);
        assert_eq!(fixed(&CORTEX_M55_CMSIS_NN), 236);
        // Xtensa: the same objects (none holds an enum).
        assert_eq!(fixed(&ESP32S3_ESP_NN), 236);
        assert_eq!(fixed(&ESP32_ESP_NN), 236);
    }

    #[test]
    fn names_are_unique_and_found() {
        for p in PROFILES {
            assert_eq!(by_name(p.name).map(|q| q.name), Some(p.name));
        }
        assert!(by_name("riscv").is_none());
    }
}
