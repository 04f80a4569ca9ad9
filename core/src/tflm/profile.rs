//! Target profiles: every size and alignment that differs between targets,
//! as data. No other module branches on a target name.
//!
//! Sources (see `../shared/docs/tflm-arena.md` §4.3–4.4): struct layouts were
//! probed by compiling TFLM's headers (tensorflow/tflite-micro @90b983c) for
//! LP64 and for ILP32 with GCC's bare-metal short enums; the `x86_64` column is
//! confirmed against the `tflite-micro` PyPI wheel (0.dev20261023182759, built
//! with `USE_TFLM_COMPRESSION`), the ILP32 column against TFLM's published
//! Corstone-300 allocation table.

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

/// Allocation facts of one builtin kernel on one target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelRow {
    /// `BuiltinOperator` code.
    pub op: i32,
    /// Parsed builtin-options struct the flatbuffer parser allocates in the tail (`None`: nothing).
    pub builtin: Option<Sz>,
    /// The kernel's `Init` allocation (OpData), 16-aligned in the tail (`None`: no Init allocation).
    pub op_data: Option<u32>,
    /// `false` when a figure is carried over from another ABI because it was never
    /// probed for this one; analyses then say so in a diagnostic.
    pub measured: bool,
}

const fn k(op: u8, builtin: Option<Sz>, op_data: Option<u32>) -> KernelRow {
    KernelRow {
        op: op as i32,
        builtin,
        op_data,
        measured: true,
    }
}

const fn k_est(op: u8, builtin: Option<Sz>, op_data: Option<u32>) -> KernelRow {
    KernelRow {
        op: op as i32,
        builtin,
        op_data,
        measured: false,
    }
}

/// The DSP extensions CMSIS-NN's `*_get_buffer_size` functions switch on
/// (`ARM_MATH_DSP`, `ARM_MATH_MVEI` in `CMSIS-NN/Include/arm_nn_math_types.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuClass {
    /// Neither define: ARMv6-M and ARMv8-M Baseline (M0, M0+, M3, M23, M33 without DSP).
    NoDsp,
    /// `ARM_MATH_DSP`: ARMv7E-M and ARMv8-M Mainline with DSP (M4, M7, M33, M35P).
    Dsp,
}

/// Which kernel implementations the TFLM build registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// TFLM's reference kernels (`tensorflow/lite/micro/kernels/*.cc`).
    Reference,
    /// `OPTIMIZED_KERNEL_DIR=cmsis_nn`, built with GCC and `KERNELS_OPTIMIZED_FOR_SPEED`:
    /// `kernels/cmsis_nn/*.cc` replace the reference kernels they cover (see `docs/cmsis-nn.md`).
    CmsisNn(CpuClass),
}

impl Backend {
    /// How messages name the kernel set.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Reference => "reference",
            Backend::CmsisNn(_) => "CMSIS-NN",
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
    /// `sizeof` of a C enum such as `TfLiteType`: 4 on hosts, 1 with arm-none-eabi's
    /// short enums.
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
    /// Per-kernel builtin data and OpData.
    pub kernels: &'static [KernelRow],
    /// Kernel implementations, whose Prepare rules (scratch, persistent buffers) differ.
    pub backend: Backend,
    /// Rows of the backend's kernels that replace [`TargetProfile::kernels`]' rows (their
    /// OpData differs); empty for the reference kernels.
    pub backend_kernels: &'static [KernelRow],
    /// The TFLM build this profile's figures were measured against, for humans
    /// (`None`: derived from struct tables, never compared with TFLM).
    pub measured_against: Option<&'static str>,
}

impl TargetProfile {
    /// The row for builtin operator `op`, if the profile models it.
    pub fn kernel(&self, op: i32) -> Option<&'static KernelRow> {
        self.backend_kernels
            .iter()
            .find(|r| r.op == op)
            .or_else(|| self.kernels.iter().find(|r| r.op == op))
    }
}

// Rows are keyed by the image crate's operator table, the one place an
// operator's code is declared.
use microarena_image::opcode as c;

/// Kernel table of the `tflite-micro` PyPI wheel (LP64, compression on, reference kernels).
const KERNELS_X86_64: &[KernelRow] = &[
    k(c::FULLY_CONNECTED, Some(sz(32, 8)), Some(72)),
    k(c::CONV_2D, Some(sz(28, 4)), Some(80)),
    k(c::DEPTHWISE_CONV_2D, Some(sz(28, 4)), Some(80)),
    k(c::TRANSPOSE_CONV, Some(sz(20, 4)), Some(88)),
    k(c::AVERAGE_POOL_2D, Some(sz(40, 4)), Some(32)),
    k(c::MAX_POOL_2D, Some(sz(40, 4)), Some(32)),
    k(c::SOFTMAX, Some(sz(4, 4)), Some(80)),
    k(c::RESHAPE, Some(sz(36, 4)), None),
    // Two bools of builtin data and no OpData; the parser allocates the struct
    // even though the kernel keeps nothing, and its 2 B shift the 16-aligned
    // OpData that follows (wheel: tail +16, persistent buffer data −4 for five
    // of them when they were left out).
    k(c::RESIZE_BILINEAR, Some(sz(2, 1)), None),
    k(c::RESIZE_NEAREST_NEIGHBOR, Some(sz(2, 1)), None),
    // One TfLiteType of builtin data, no OpData (wheel: persistent buffer data
    // 4 B off at equal requested bytes and count when left out).
    k(c::ARG_MAX, Some(sz(4, 4)), None),
    k(c::ARG_MIN, Some(sz(4, 4)), None),
    // SPLIT / SPLIT_V: one int (num_splits); SHAPE: one TfLiteType. No OpData.
    k(c::SPLIT, Some(sz(4, 4)), None),
    k(c::SPLIT_V, Some(sz(4, 4)), None),
    k(c::SHAPE, Some(sz(4, 4)), None),
    k(c::ADD, Some(sz(8, 4)), Some(60)),
    k(c::SUB, Some(sz(8, 4)), Some(52)),
    k(c::MUL, Some(sz(4, 4)), Some(36)),
    k(c::DIV, Some(sz(4, 4)), Some(28)),
    k(c::QUANTIZE, None, Some(32)),
    k(c::DEQUANTIZE, None, Some(32)),
    k(c::LOGISTIC, None, Some(16)),
    k(c::TANH, None, Some(16)),
    k(c::UNIDIRECTIONAL_SEQUENCE_LSTM, Some(sz(16, 4)), Some(688)),
    k(c::SVDF, Some(sz(12, 4)), Some(36)),
    k(c::PAD, None, Some(56)),
    k(c::PADV2, None, Some(56)),
    k(c::MEAN, Some(sz(1, 1)), Some(44)),
    k(c::SUM, Some(sz(1, 1)), Some(44)),
    k(c::REDUCE_MAX, Some(sz(1, 1)), Some(44)),
    k(c::REDUCE_MIN, Some(sz(1, 1)), Some(44)),
    k(c::REDUCE_ALL, Some(sz(1, 1)), Some(44)),
    k(c::CONCATENATION, Some(sz(8, 4)), Some(80)),
    // TfLitePackParams {values_count, axis}; pack.cc has no Init or Prepare.
    k(c::PACK, Some(sz(8, 4)), None),
    k(c::STRIDED_SLICE, Some(sz(24, 4)), Some(84)),
    k(c::CAST, Some(sz(8, 4)), None),
    k(c::TRANSPOSE, None, None),
    k(c::MINIMUM, None, None),
    k(c::MAXIMUM, None, None),
    k(c::SQUEEZE, Some(sz(36, 4)), None),
    k(c::GATHER, Some(sz(8, 4)), None),
    k(c::RELU, None, Some(28)),
    k(c::RELU6, None, Some(8)),
    k(c::LEAKY_RELU, Some(sz(4, 4)), Some(24)),
    k(c::HARD_SWISH, None, Some(20)),
    k(c::IF, Some(sz(8, 4)), Some(8)),
    k(c::WHILE, Some(sz(8, 4)), Some(8)),
    k(c::CALL_ONCE, Some(sz(4, 4)), Some(8)),
    k(c::VAR_HANDLE, Some(sz(16, 8)), Some(4)),
    k(c::READ_VARIABLE, None, None),
    k(c::ASSIGN_VARIABLE, None, Some(4)),
    k(c::MIRROR_PAD, Some(sz(4, 4)), Some(20)),
    k(c::ADD_N, None, None),
];

/// Kernel table for 32-bit Arm with GCC short enums, reference kernels, no compression.
const KERNELS_CORTEX_M: &[KernelRow] = &[
    k(c::FULLY_CONNECTED, Some(sz(5, 1)), Some(48)),
    k(c::CONV_2D, Some(sz(28, 4)), Some(56)),
    k(c::DEPTHWISE_CONV_2D, Some(sz(28, 4)), Some(56)),
    // TRANSPOSE_CONV OpData was only probed in the wheel.
    k_est(c::TRANSPOSE_CONV, Some(sz(16, 4)), Some(88)),
    k(c::AVERAGE_POOL_2D, Some(sz(40, 4)), Some(32)),
    k(c::MAX_POOL_2D, Some(sz(40, 4)), Some(32)),
    k(c::SOFTMAX, Some(sz(4, 4)), Some(56)),
    k(c::RESHAPE, Some(sz(36, 4)), None),
    // Two bools (builtin_op_data.h), the same layout on every ABI; no OpData.
    k(c::RESIZE_BILINEAR, Some(sz(2, 1)), None),
    k(c::RESIZE_NEAREST_NEIGHBOR, Some(sz(2, 1)), None),
    // One TfLiteType: 1 B with short enums, as CAST's two are 2 B (not measured on a core).
    k(c::ARG_MAX, Some(sz(1, 1)), None),
    k(c::ARG_MIN, Some(sz(1, 1)), None),
    k(c::SPLIT, Some(sz(4, 4)), None),
    k(c::SPLIT_V, Some(sz(4, 4)), None),
    k(c::SHAPE, Some(sz(1, 1)), None),
    k(c::ADD, Some(sz(2, 1)), Some(60)),
    k(c::SUB, Some(sz(2, 1)), Some(52)),
    k(c::MUL, Some(sz(1, 1)), Some(36)),
    k(c::DIV, Some(sz(1, 1)), Some(28)),
    k(c::QUANTIZE, None, Some(32)),
    k(c::DEQUANTIZE, None, Some(32)),
    k(c::LOGISTIC, None, Some(16)),
    k(c::TANH, None, Some(16)),
    k(c::UNIDIRECTIONAL_SEQUENCE_LSTM, Some(sz(16, 4)), Some(688)),
    k(c::SVDF, Some(sz(8, 4)), Some(36)),
    k(c::PAD, None, Some(56)),
    k(c::PADV2, None, Some(56)),
    k(c::MEAN, Some(sz(1, 1)), Some(44)),
    k(c::SUM, Some(sz(1, 1)), Some(44)),
    k(c::REDUCE_MAX, Some(sz(1, 1)), Some(44)),
    k(c::REDUCE_MIN, Some(sz(1, 1)), Some(44)),
    k(c::REDUCE_ALL, Some(sz(1, 1)), Some(44)),
    k(c::CONCATENATION, Some(sz(8, 4)), Some(24)),
    // TfLitePackParams {values_count, axis}; pack.cc has no Init or Prepare.
    k(c::PACK, Some(sz(8, 4)), None),
    k(c::STRIDED_SLICE, Some(sz(24, 4)), Some(84)),
    k(c::CAST, Some(sz(2, 1)), None),
    k(c::TRANSPOSE, None, None),
    k(c::MINIMUM, None, None),
    k(c::MAXIMUM, None, None),
    k(c::SQUEEZE, Some(sz(36, 4)), None),
    k(c::GATHER, Some(sz(8, 4)), None),
    k(c::RELU, None, Some(28)),
    k(c::RELU6, None, Some(8)),
    k(c::LEAKY_RELU, Some(sz(4, 4)), Some(24)),
    k(c::HARD_SWISH, None, Some(20)),
    k(c::IF, Some(sz(8, 4)), Some(8)),
    k(c::WHILE, Some(sz(8, 4)), Some(8)),
    k(c::CALL_ONCE, Some(sz(4, 4)), Some(8)),
    k(c::VAR_HANDLE, Some(sz(8, 4)), Some(4)),
    k(c::READ_VARIABLE, None, None),
    // ASSIGN_VARIABLE has OpData only in compression builds.
    k(c::ASSIGN_VARIABLE, None, None),
    k(c::MIRROR_PAD, Some(sz(1, 1)), Some(20)),
    k(c::ADD_N, None, None),
];

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
    kernels: KERNELS_X86_64,
    backend: Backend::Reference,
    backend_kernels: &[],
    measured_against: Some("tflite-micro wheel 0.dev20261023182759"),
};

/// TFLM's commit the Cortex-M profiles model (`tflm_cortex_m.jsonl`).
const TFLM_CORTEX_M: &str = "TFLM 90b983c2";

/// CMSIS-NN kernels' OpData on ILP32 (`docs/cmsis-nn.md`, "OpData"): each wraps the
/// reference OpData and appends its own fields. Builtin data is the parser's, unchanged.
const KERNELS_CMSIS_NN: &[KernelRow] = &[
    // OpDataFullyConnected (48) + 2 int + int32_t* + 3 int32_t.
    k(c::FULLY_CONNECTED, Some(sz(5, 1)), Some(72)),
    // OpDataConv (56) + int buffer_idx.
    k(c::CONV_2D, Some(sz(28, 4)), Some(60)),
    k(c::DEPTHWISE_CONV_2D, Some(sz(28, 4)), Some(60)),
    // OpDataPooling (32) + int buffer_idx.
    k(c::AVERAGE_POOL_2D, Some(sz(40, 4)), Some(36)),
    k(c::MAX_POOL_2D, Some(sz(40, 4)), Some(36)),
    // SoftmaxParams (56) + num_rows, row_size.
    k(c::SOFTMAX, Some(sz(4, 4)), Some(64)),
    // CmsisNnOpDataSvdf: 9 int + int32_t* kernel_sums.
    k(c::SVDF, Some(sz(8, 4)), Some(40)),
    // OpDataLSTM (688, 8-aligned: ArithmeticParams holds int64_t) + cmsis_nn_lstm_params
    // (15 int32_t + 4 gates of 40) = 908, padded to 912.
    k(c::UNIDIRECTIONAL_SEQUENCE_LSTM, Some(sz(16, 4)), Some(912)),
];

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
    kernels: KERNELS_CORTEX_M,
    backend: Backend::Reference,
    backend_kernels: &[],
    measured_against: Some(TFLM_CORTEX_M),
};

/// Cortex-M4/M7/M33 with DSP and TFLM's CMSIS-NN kernels: the `cortex-m` ABI, the
/// CMSIS-NN OpData and the DSP scratch rules (`m4-cmsis-nn` in `tflm_cortex_m.jsonl`).
pub const CORTEX_M4_CMSIS_NN: TargetProfile = TargetProfile {
    name: "cortex-m4-cmsis-nn",
    description: "Cortex-M4/M7/M33 with DSP, CMSIS-NN kernels (arm-none-eabi-gcc, ILP32, recording allocator)",
    backend: Backend::CmsisNn(CpuClass::Dsp),
    backend_kernels: KERNELS_CMSIS_NN,
    ..CORTEX_M
};

/// Cortex-M0/M0+ (ARMv6-M, RP2040) with TFLM's CMSIS-NN kernels: the same ABI and OpData,
/// the no-DSP scratch rules (`m0plus-cmsis-nn` in `tflm_cortex_m.jsonl`).
pub const CORTEX_M0PLUS_CMSIS_NN: TargetProfile = TargetProfile {
    name: "cortex-m0plus-cmsis-nn",
    description: "Cortex-M0/M0+ (ARMv6-M, e.g. RP2040), CMSIS-NN kernels (arm-none-eabi-gcc, ILP32, recording allocator)",
    backend: Backend::CmsisNn(CpuClass::NoDsp),
    backend_kernels: KERNELS_CMSIS_NN,
    ..CORTEX_M
};

/// Every TFLM profile, in the order the CLI and the app list them.
pub const PROFILES: &[TargetProfile] =
    &[X86_64, CORTEX_M, CORTEX_M4_CMSIS_NN, CORTEX_M0PLUS_CMSIS_NN];

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
    }

    #[test]
    fn names_are_unique_and_found() {
        for p in PROFILES {
            assert_eq!(by_name(p.name).map(|q| q.name), Some(p.name));
            let mut ops: std::vec::Vec<i32> = p.kernels.iter().map(|r| r.op).collect();
            ops.sort_unstable();
            let n = ops.len();
            ops.dedup();
            assert_eq!(ops.len(), n, "duplicate kernel rows in {}", p.name);
        }
        assert!(by_name("riscv").is_none());
    }
}
