//! What each TFLM kernel allocates, one module per kernel family, as TFLM
//! groups its kernels (`tensorflow/lite/micro/kernels/`): builtin data per
//! ABI, Init's OpData, the Prepare sequence (temp tensors, persistent
//! buffers, scratch requests) of the reference kernel and, where the CMSIS-NN
//! build or esp-tflite-micro substitutes a kernel of its own, of that one, and
//! the checks its Prepare and Eval make ([`crate::tflm::registry`] applies them).
//!
//! A family file declares its [`Kernel`] rows; [`FAMILIES`] lists the files.
//! The machinery around them — the tail order ([`crate::tflm::tail`]), the
//! planner, the registry's checks — only calls into these rows, so a new
//! kernel touches its family's file and the operator table and nothing else.
//!
//! Sources: tensorflow/tflite-micro 90b983c2 for every kernel, CMSIS-NN
//! 4ab83cc3 for the CMSIS-NN buffer sizes (`docs/cmsis-nn.md`), esp-tflite-micro
//! 99f49e14 and ESP-NN d45b843c for the ESP-NN ones (`docs/esp-nn.md`). Each row's
//! figures were compared with TFLM itself, category by category, by the
//! kernel probes (`core/tests/kernel_probes.rs`, `docs/tflm-kernels.md`).

mod activations;
mod arithmetic;
mod comparisons;
mod control_flow;
mod conv;
mod custom;
mod esp_nn;
mod fully_connected;
mod math;
mod pad;
mod pooling;
mod quantize;
mod recurrent;
mod reduce;
mod resource;
mod shape;
pub mod shapes;
pub mod signal;
mod slicing;
mod softmax;
mod spatial;

use alloc::vec::Vec;

use crate::read::dtype::DType;
use crate::read::model::{Model, Operator, Tensor};
use crate::read::ops::BuiltinOp;
use crate::tflm::profile::{Abi, Backend, CoProcessor, CpuClass, EspChip, Sz, TargetProfile};
use crate::tflm::registry::{self, Check, Rejection};

/// Every family's rows.
pub const FAMILIES: &[&[Kernel]] = &[
    activations::KERNELS,
    arithmetic::KERNELS,
    comparisons::KERNELS,
    control_flow::KERNELS,
    conv::KERNELS,
    custom::KERNELS,
    fully_connected::KERNELS,
    math::KERNELS,
    pad::KERNELS,
    pooling::KERNELS,
    quantize::KERNELS,
    recurrent::KERNELS,
    reduce::KERNELS,
    resource::KERNELS,
    shape::KERNELS,
    signal::KERNELS,
    slicing::KERNELS,
    softmax::KERNELS,
    spatial::KERNELS,
];

/// Which operator a row describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A builtin, by the operator table's code.
    Builtin(u8),
    /// A custom operator TFLM's op resolver registers, by its `custom_code`.
    Custom(&'static str),
}

/// A figure per ABI: LP64 as the wheel builds it (x86-64, compression on),
/// ILP32 as arm-none-eabi-gcc builds it (short enums, no compression), and
/// ILP32 with 4-byte enums as Xtensa's GCC builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerAbi<T> {
    /// The `tflite-micro` wheel on x86-64.
    pub lp64: T,
    /// 32-bit Arm.
    pub ilp32: T,
    /// Xtensa: the ILP32 figure unless the struct holds a C enum ([`abi3`]).
    pub ilp32_enum4: T,
}

impl<T: Copy> PerAbi<T> {
    /// The figure for `abi`.
    pub fn get(&self, abi: Abi) -> T {
        match abi {
            Abi::Lp64 => self.lp64,
            Abi::Ilp32 => self.ilp32,
            Abi::Ilp32Enum4 => self.ilp32_enum4,
        }
    }
}

/// Every ABI the same.
pub const fn both<T: Copy>(v: T) -> PerAbi<T> {
    PerAbi {
        lp64: v,
        ilp32: v,
        ilp32_enum4: v,
    }
}

/// LP64 then ILP32, for a struct without a C enum: Xtensa lays it out as
/// 32-bit Arm does.
pub const fn abi<T: Copy>(lp64: T, ilp32: T) -> PerAbi<T> {
    PerAbi {
        lp64,
        ilp32,
        ilp32_enum4: ilp32,
    }
}

/// LP64, ILP32 with short enums, ILP32 with 4-byte enums: a struct holding a
/// C enum (each figure from compiling TFLM's headers for that ABI).
pub const fn abi3<T: Copy>(lp64: T, ilp32: T, ilp32_enum4: T) -> PerAbi<T> {
    PerAbi {
        lp64,
        ilp32,
        ilp32_enum4,
    }
}

/// A builtin-data struct of `bytes` aligned to `align`.
pub const fn st(bytes: u32, align: u32) -> Option<Sz> {
    Some(Sz { bytes, align })
}

/// How a row's figures on one ABI are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Compared with TFLM built for that ABI, by a probe or a real model.
    Measured,
    /// Laid out from the C structs for that ABI, never compared with TFLM
    /// built for it; the reason is shown with the figure.
    Derived(&'static str),
}

/// An optimized build's own kernel for an op (CMSIS-NN's, ESP-NN's), whose
/// Prepare is told the build's variant `V` ([`CpuClass`], [`EspChip`]).
#[derive(Debug, Clone, Copy)]
pub struct Optimized<V> {
    /// Its OpData (on the build's ABI), where it differs from the reference kernel's.
    pub op_data: Option<Option<u32>>,
    /// Its Prepare, where it differs from the reference kernel's.
    pub prepare: Option<fn(&Ctx<'_>, V, &mut Prep)>,
    /// Its checks, where they differ from the reference kernel's (`None`:
    /// the same checks).
    pub checks: Option<&'static [Check]>,
    /// How its figures are known.
    pub evidence: Evidence,
}

/// The CMSIS-NN build's own kernel for an op (OpData on ILP32).
pub type CmsisNn = Optimized<CpuClass>;

/// esp-tflite-micro's own kernel for an op (`kernels/esp_nn/`, OpData on Xtensa).
pub type EspNn = Optimized<EspChip>;

/// A CMSIS-NN kernel that allocates and checks as the reference one does.
pub const CMSIS_SAME: CmsisNn = CmsisNn {
    op_data: None,
    prepare: None,
    checks: None,
    evidence: Evidence::Measured,
};

/// An ESP-NN kernel that allocates and checks as the reference one does (only
/// its Eval calls ESP-NN).
pub const ESP_SAME: EspNn = EspNn {
    op_data: None,
    prepare: None,
    checks: None,
    evidence: Evidence::Measured,
};

/// Everything microarena knows about one TFLM kernel.
#[derive(Debug, Clone, Copy)]
pub struct Kernel {
    /// The operator.
    pub op: Op,
    /// The kernel's source files under `tensorflow/lite/micro/kernels/`.
    pub source: &'static str,
    /// The parser's builtin-data struct (tail, at its own alignment), per ABI.
    pub builtin: PerAbi<Option<Sz>>,
    /// What the builtin data is, for the tail view.
    pub builtin_name: &'static str,
    /// Init's OpData (tail, 16-aligned), per ABI.
    pub op_data: PerAbi<Option<u32>>,
    /// How the figures are known, per ABI.
    pub evidence: PerAbi<Evidence>,
    /// Init allocations that depend on the op (the Signal kernels'); replaces
    /// `op_data` when set.
    pub init: Option<fn(&Ctx<'_>) -> Vec<Persistent>>,
    /// The reference kernel's Prepare.
    pub prepare: fn(&Ctx<'_>, &mut Prep),
    /// What the reference kernel's Prepare and Eval check.
    pub checks: &'static [Check],
    /// The CMSIS-NN build's kernel, when it substitutes one.
    pub cmsis_nn: Option<CmsisNn>,
    /// esp-tflite-micro's ESP-NN kernel, when it substitutes one.
    pub esp_nn: Option<EspNn>,
    /// How its output's shape follows new input shapes (what-if shapes,
    /// [`crate::whatif`]); `None`: the what-if refuses to re-derive it.
    pub shape: Option<shapes::ShapeRule>,
    /// The NPU build that registers the kernel (`None`: every build does).
    pub co_processor: Option<CoProcessor>,
}

// Rows are told apart by their operator (each has one row).
impl PartialEq for Kernel {
    fn eq(&self, other: &Kernel) -> bool {
        self.op == other.op
    }
}

impl Eq for Kernel {}

/// A row with the defaults most kernels share: no builtin data, no OpData,
/// measured on both ABIs, every input and output held as a temp in Prepare,
/// no checks, no CMSIS-NN kernel.
pub const fn kernel(code: u8, source: &'static str) -> Kernel {
    Kernel {
        op: Op::Builtin(code),
        source,
        builtin: both(None),
        builtin_name: "builtin data",
        op_data: both(None),
        evidence: both(Evidence::Measured),
        init: None,
        prepare: all_io,
        checks: &[],
        cmsis_nn: None,
        esp_nn: None,
        shape: None,
        co_processor: None,
    }
}

/// How well an operator's allocations are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fidelity {
    /// Every figure was compared with TFLM on this ABI.
    Exact,
    /// Some figure was derived rather than measured; the reason says which.
    Estimated(&'static str),
    /// No kernel row: counted as zero, and reported.
    Unmodelled,
}

/// Why TFLM itself would refuse to prepare this operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Float activations with int8 weights (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED).
    Hybrid,
    /// A custom operator that has no kernel in TFLM's reference build.
    NoKernel,
    /// A co-processor's custom operator on a build without that co-processor.
    NeedsCoProcessor(CoProcessor),
    /// An LSTM intermediate tensor with a non-zero size.
    NonEmptyIntermediate,
    /// Prepare refuses the op's quantization parameters (the reason names
    /// the rule).
    Quantization(&'static str),
    /// Prepare refuses something else about the op (the reason names it).
    Prepare(&'static str),
    /// Prepare dereferences something the op lacks and crashes (the reason
    /// says what).
    Crashes(&'static str),
    /// The registry of TFLM's kernels refuses it: no kernel, or a type or
    /// constness its kernel rejects (in Prepare or at Invoke).
    Rejected(Rejection),
}

/// A persistent allocation (tail, 16-aligned) and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Persistent {
    /// Requested bytes.
    pub bytes: u64,
    /// What the kernel keeps in it.
    pub purpose: &'static str,
}

/// One step of a kernel's Prepare, in order (for the minimum-arena simulation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrepareStep {
    /// `AllocateTemp*Tensor` of this tensor index (subgraph-local).
    Temp(usize),
    /// A persistent allocation (16-aligned, tail).
    Persistent(Persistent),
    /// A scratch request.
    Scratch(Scratch),
}

/// One `RequestScratchBufferInArena` of a kernel's Prepare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scratch {
    /// Requested bytes.
    pub bytes: u64,
    /// What the kernel keeps in it, for the map and `check` (e.g. `im2col (CMSIS-NN)`).
    pub purpose: &'static str,
}

/// Everything one operator allocates in TFLM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCost {
    /// Parsed builtin options (tail, at the struct's own alignment).
    pub builtin: Option<Sz>,
    /// What the builtin data is.
    pub builtin_name: &'static str,
    /// `Init` allocations (tail, 16-aligned each).
    pub init: Vec<Persistent>,
    /// Prepare, in order: temp tensors, persistent buffers, scratch requests.
    pub prepare: Vec<PrepareStep>,
    /// The kernel sets its outputs' data in Prepare (VAR_HANDLE): they are not planned.
    pub sets_output_data: bool,
    /// How well the figures are known.
    pub fidelity: Fidelity,
    /// Set when TFLM would fail to prepare this op.
    pub refusal: Option<Refusal>,
}

/// The operator being costed, with the questions kernels ask of its tensors.
#[derive(Debug)]
pub struct Ctx<'m> {
    /// The model.
    pub model: &'m Model<'m>,
    /// Its subgraph.
    pub g: usize,
    /// The operator.
    pub op: &'m Operator<'m>,
    /// The target.
    pub profile: &'m TargetProfile,
    /// ASSIGN_VARIABLE: this is its resource's first assignment (only that
    /// one allocates the resource buffer).
    pub first_assignment: bool,
}

impl<'m> Ctx<'m> {
    /// Input `i`'s tensor index, if present.
    pub fn input(&self, i: usize) -> Option<usize> {
        self.op.input(i)
    }

    /// Output `i`'s tensor index, if present.
    pub fn output(&self, i: usize) -> Option<usize> {
        self.op.output(i)
    }

    /// Tensor `t` (a subgraph-local index).
    pub fn tensor(&self, t: Option<usize>) -> Option<&'m Tensor<'m>> {
        t.and_then(|t| self.model.tensor(self.g, t))
    }

    /// Input `i`'s tensor.
    pub fn in_t(&self, i: usize) -> Option<&'m Tensor<'m>> {
        self.tensor(self.input(i))
    }

    /// Output `i`'s tensor.
    pub fn out_t(&self, i: usize) -> Option<&'m Tensor<'m>> {
        self.tensor(self.output(i))
    }

    /// Input `i`'s type.
    pub fn in_type(&self, i: usize) -> Option<DType> {
        self.in_t(i).map(|t| t.dtype)
    }

    /// Output `i`'s type.
    pub fn out_type(&self, i: usize) -> Option<DType> {
        self.out_t(i).map(|t| t.dtype)
    }

    /// Input `i`'s element count (0 when absent).
    pub fn in_elems(&self, i: usize) -> u64 {
        self.in_t(i).map_or(0, Tensor::elements)
    }

    /// Output `i`'s element count (0 when absent).
    pub fn out_elems(&self, i: usize) -> u64 {
        self.out_t(i).map_or(0, Tensor::elements)
    }

    /// Input `i`'s rank.
    pub fn in_rank(&self, i: usize) -> u64 {
        self.in_t(i).map_or(0, |t| t.shape.len() as u64)
    }

    /// Output `i`'s rank.
    pub fn out_rank(&self, i: usize) -> u64 {
        self.out_t(i).map_or(0, |t| t.shape.len() as u64)
    }

    /// Dimension `d` of input `i` (0 when absent).
    pub fn in_dim(&self, i: usize, d: usize) -> u64 {
        dim(self.in_t(i), d)
    }

    /// Dimension `d` of output `i` (0 when absent).
    pub fn out_dim(&self, i: usize, d: usize) -> u64 {
        dim(self.out_t(i), d)
    }

    /// Input `i`'s bytes.
    pub fn in_bytes(&self, i: usize) -> u64 {
        self.in_t(i).and_then(|t| t.bytes).unwrap_or(0)
    }

    /// Input `i`'s quantization scale count (0 when unquantized).
    pub fn in_scales(&self, i: usize) -> u64 {
        self.in_t(i)
            .and_then(|t| t.quantization.as_ref())
            .map_or(0, |q| q.scales.len() as u64)
    }

    /// `sizeof(void*)` on the target.
    pub fn pointer_bytes(&self) -> u64 {
        u64::from(self.profile.pointer_bytes)
    }

    /// The operator's input and output count.
    pub fn inputs(&self) -> usize {
        self.op.inputs.len()
    }
}

fn dim(t: Option<&Tensor<'_>>, d: usize) -> u64 {
    t.and_then(|t| t.dim(d)).map_or(0, |v| v.max(0) as u64)
}

/// The largest allocation a kernel is counted with (1 TiB): TFLM sizes
/// buffers in `int`, so anything near it is a hostile model TFLM cannot
/// run; capping it keeps every later sum far from overflow.
pub const MAX_ALLOCATION: u64 = 1 << 40;

/// A Prepare being recorded: the steps in order, and what the kernel found.
#[derive(Debug, Default)]
pub struct Prep {
    steps: Vec<PrepareStep>,
    refusal: Option<Refusal>,
    estimated: Option<&'static str>,
    sets_output_data: bool,
}

impl Prep {
    /// `AllocateTemp*Tensor` of tensor `t`; nothing for an omitted operand
    /// (TFLM returns a null pointer without allocating).
    pub fn temp(&mut self, t: Option<usize>) -> &mut Self {
        if let Some(t) = t {
            self.steps.push(PrepareStep::Temp(t));
        }
        self
    }

    /// Temps of inputs `ins`, in order.
    pub fn temp_inputs(&mut self, cx: &Ctx<'_>, ins: &[usize]) -> &mut Self {
        for &i in ins {
            self.temp(cx.input(i));
        }
        self
    }

    /// `CreateWritableTensorDimsWithCopy` of output 0: a persistent copy of
    /// its dims (a `TfLiteIntArray`, 4 + 4·rank) that Prepare then rewrites.
    pub fn output_dims(&mut self, cx: &Ctx<'_>) -> &mut Self {
        self.persistent(4 + 4 * cx.out_rank(0), "output dims")
    }

    /// `AllocatePersistentBuffer(bytes)` holding `purpose`.
    pub fn persistent(&mut self, bytes: u64, purpose: &'static str) -> &mut Self {
        let bytes = bytes.min(MAX_ALLOCATION);
        self.steps
            .push(PrepareStep::Persistent(Persistent { bytes, purpose }));
        self
    }

    /// `RequestScratchBufferInArena(bytes)` holding `purpose`.
    pub fn scratch(&mut self, bytes: u64, purpose: &'static str) -> &mut Self {
        let bytes = bytes.min(MAX_ALLOCATION);
        self.steps
            .push(PrepareStep::Scratch(Scratch { bytes, purpose }));
        self
    }

    /// TFLM refuses the op.
    pub fn refuse(&mut self, why: Refusal) -> &mut Self {
        self.refusal.get_or_insert(why);
        self
    }

    /// A figure of this op is not known exactly.
    pub fn estimated(&mut self, why: &'static str) -> &mut Self {
        self.estimated.get_or_insert(why);
        self
    }

    /// The kernel sets its outputs' data in Prepare (they are not planned).
    pub fn sets_output_data(&mut self) -> &mut Self {
        self.sets_output_data = true;
        self
    }
}

/// Prepare that holds every input, then every output, as a temp (the
/// pattern of kernels that read each operand once through
/// `AllocateTempInputTensor` / `AllocateTempOutputTensor`).
pub fn all_io(cx: &Ctx<'_>, p: &mut Prep) {
    for &t in cx.op.inputs.iter().chain(&cx.op.outputs) {
        p.temp(usize::try_from(t).ok());
    }
}

/// No Prepare (a null Prepare in its registration) or one that allocates nothing.
pub fn nothing(_: &Ctx<'_>, _: &mut Prep) {}

/// Input 0 then output 0 (the unary kernels' Prepare).
pub fn in0_out0(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0)).temp(cx.output(0));
}

/// Inputs 0 and 1, then output 0 (the binary kernels' Prepare).
pub fn in01_out0(cx: &Ctx<'_>, p: &mut Prep) {
    p.temp(cx.input(0)).temp(cx.input(1)).temp(cx.output(0));
}

/// The row for `op` (a custom op by its `custom_code`).
pub fn lookup(op: &Operator<'_>) -> Option<&'static Kernel> {
    if op.opcode == BuiltinOp::CUSTOM {
        let name = op.custom_code?;
        rows().find(|k| matches!(k.op, Op::Custom(n) if n == name))
    } else {
        builtin(u8::try_from(op.opcode.0).ok()?)
    }
}

/// The row for builtin `code`.
pub fn builtin(code: u8) -> Option<&'static Kernel> {
    rows().find(|k| k.op == Op::Builtin(code))
}

/// Every row.
pub fn rows() -> impl Iterator<Item = &'static Kernel> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// Resolves the allocations of operator `op` of subgraph `g`, and whether
/// TFLM would refuse it (the refusals found while costing it first, then the
/// kernel registry's).
pub fn cost(
    model: &Model<'_>,
    g: usize,
    op: &Operator<'_>,
    profile: &TargetProfile,
    first_assignment: bool,
) -> KernelCost {
    let cx = Ctx {
        model,
        g,
        op,
        profile,
        first_assignment,
    };
    let registered =
        |k: &&Kernel| k.co_processor.is_none() || k.co_processor == profile.co_processor;
    let Some(k) = lookup(op).filter(registered) else {
        // No row: TFLM has no kernel (a named refusal) or we know nothing.
        let mut p = Prep::default();
        all_io(&cx, &mut p);
        let refusal = if let Some(npu) = lookup(op).and_then(|k| k.co_processor) {
            Some(Refusal::NeedsCoProcessor(npu))
        } else if op.opcode == BuiltinOp::CUSTOM {
            Some(Refusal::NoKernel)
        } else {
            registry::check(model, g, op, profile.backend).map(Refusal::Rejected)
        };
        return KernelCost {
            builtin: None,
            builtin_name: "builtin data",
            init: Vec::new(),
            prepare: p.steps,
            sets_output_data: false,
            fidelity: Fidelity::Unmodelled,
            refusal,
        };
    };
    let abi = profile.abi;
    let mut p = Prep::default();
    // The optimized build's kernel, when it substitutes one: its OpData,
    // evidence and whether it has a Prepare of its own (run here).
    let (optimized, own_prepare) = match profile.backend {
        Backend::CmsisNn(cpu) => k.cmsis_nn.map_or((None, None), |c| {
            (
                Some((c.op_data, c.evidence)),
                c.prepare.map(|f| f(&cx, cpu, &mut p)),
            )
        }),
        Backend::EspNn(chip) => k.esp_nn.map_or((None, None), |c| {
            (
                Some((c.op_data, c.evidence)),
                c.prepare.map(|f| f(&cx, chip, &mut p)),
            )
        }),
        Backend::Reference => (None, None),
    };
    if own_prepare.is_none() {
        (k.prepare)(&cx, &mut p);
    }
    let op_data = optimized.and_then(|(d, _)| d).unwrap_or(k.op_data.get(abi));
    let init = match k.init {
        Some(f) => f(&cx)
            .into_iter()
            .map(|a| Persistent {
                bytes: a.bytes.min(MAX_ALLOCATION),
                ..a
            })
            .collect(),
        None => op_data
            .map(|b| Persistent {
                bytes: u64::from(b),
                purpose: "OpData",
            })
            .into_iter()
            .collect(),
    };
    let evidence = match optimized {
        Some((d, e)) if d.is_some() || own_prepare.is_some() => match e {
            Evidence::Measured => k.evidence.get(abi),
            derived => derived,
        },
        _ => k.evidence.get(abi),
    };
    let fidelity = match (p.estimated, evidence) {
        (Some(why), _) | (None, Evidence::Derived(why)) => Fidelity::Estimated(why),
        (None, Evidence::Measured) => Fidelity::Exact,
    };
    let refusal = p
        .refusal
        .or_else(|| registry::check(model, g, op, profile.backend).map(Refusal::Rejected));
    KernelCost {
        builtin: k.builtin.get(abi),
        builtin_name: k.builtin_name,
        init,
        prepare: p.steps,
        sets_output_data: p.sets_output_data,
        fidelity,
        refusal,
    }
}

/// The (first) quantization scale of a tensor (0 when unquantized), as a
/// kernel reads `params.scale`.
pub fn scale(t: Option<&Tensor<'_>>) -> f32 {
    t.and_then(|t| t.quantization.as_ref())
        .and_then(|q| q.scales.first().copied())
        .unwrap_or(0.0)
}

/// The zero point of a tensor (0 when unquantized).
pub fn zero_point(t: Option<&Tensor<'_>>) -> i64 {
    t.and_then(|t| t.quantization.as_ref())
        .and_then(|q| q.zero_points.first().copied())
        .unwrap_or(0)
}

/// CMSIS-NN's int16 kernels (conv, depthwise, fully connected) refuse input
/// or output zero points other than 0.
pub fn cmsis_nn_int16_zero_points(cx: &Ctx<'_>, p: &mut Prep) {
    if cx.in_type(0) == Some(DType::I16)
        && (zero_point(cx.in_t(0)) != 0 || zero_point(cx.out_t(0)) != 0)
    {
        p.refuse(Refusal::Quantization(
            "CMSIS-NN's int16 kernel needs input and output zero points of 0",
        ));
    }
}

/// The product of `factors`, saturating: shapes and options come from the
/// file, and a hostile one can make a size pass 2^64 (TFLM would fail to
/// allocate it; the analysis must not panic).
pub fn prod(factors: &[u64]) -> u64 {
    factors.iter().fold(1u64, |a, &b| a.saturating_mul(b))
}

/// Float input `in` with integer weights `w`: TFLM's micro kernels refuse
/// hybrid models in Prepare.
pub fn hybrid(cx: &Ctx<'_>, weights: usize) -> bool {
    cx.in_type(0).is_some_and(DType::is_float)
        && matches!(cx.in_type(weights), Some(DType::I8 | DType::I4 | DType::U8))
}

/// The exponent `QuantizeMultiplier` gives `m` (`frexp`'s, plus one when the
/// mantissa rounds up to 1).
pub fn multiplier_exponent(m: f64) -> i32 {
    if m == 0.0 || !m.is_finite() {
        return 0;
    }
    let mut e = 0;
    let mut q = m.abs();
    while q >= 1.0 {
        q /= 2.0;
        e += 1;
    }
    while q < 0.5 {
        q *= 2.0;
        e -= 1;
    }
    // std::round of the positive mantissa (core has no f64::round).
    if (q * 2147483648.0 + 0.5) as i64 >= 1i64 << 31 {
        e += 1;
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_operator() {
        let all: Vec<Op> = rows().map(|k| k.op).collect();
        for (i, a) in all.iter().enumerate() {
            assert!(!all[i + 1..].contains(a), "{a:?} has two rows");
        }
    }
}
