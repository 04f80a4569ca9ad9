//! What each TFLM kernel allocates: builtin data, `Init` OpData, `Prepare`
//! persistent buffers, scratch requests and the temp tensors it holds in
//! Prepare. Sizes that differ per target come from [`TargetProfile::kernels`];
//! this module only holds the shape-dependent formulas (per-channel arrays,
//! LUTs, scratch sizes), which are the same on every target.

use alloc::vec;
use alloc::vec::Vec;

use crate::read::dtype::DType;
use crate::read::model::{Model, Operator};
use crate::read::ops::{BuiltinOp, OpOptions};
use crate::tflm::cmsis_nn;
use crate::tflm::profile::{Backend, Sz, TargetProfile};
use crate::tflm::registry::{self, Rejection};
use crate::tflm::signal;

/// How well an operator's allocations are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fidelity {
    /// Every figure comes from a measured table.
    Exact,
    /// Some figure was carried over from another ABI or inferred; the reason says which.
    Estimated(&'static str),
    /// The kernel is not in the tables: counted as zero, and reported.
    Unmodelled,
}

/// Why TFLM itself would refuse to prepare this operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Float activations with int8 weights (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED).
    Hybrid,
    /// A custom operator that has no kernel in TFLM's reference build.
    NoKernel,
    /// An LSTM intermediate tensor with a non-zero size.
    NonEmptyIntermediate,
    /// The registry of TFLM's kernels refuses it: no kernel, or a type or
    /// constness its kernel rejects (in Prepare or at Invoke).
    Rejected(Rejection),
}

/// One step of a kernel's Prepare, in order (for the minimum-arena simulation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrepareStep {
    /// `AllocateTemp*Tensor` of this tensor index (subgraph-local).
    Temp(usize),
    /// A persistent allocation of this many bytes (16-aligned, tail).
    Persistent(u64),
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

impl PrepareStep {
    /// A scratch request of `bytes` for `purpose`.
    pub const fn scratch(bytes: u64, purpose: &'static str) -> PrepareStep {
        PrepareStep::Scratch(Scratch { bytes, purpose })
    }
}

/// Everything one operator allocates in TFLM.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelCost {
    /// Parsed builtin options (tail, at the struct's own alignment).
    pub builtin: Option<Sz>,
    /// `Init` allocations (tail, 16-aligned each).
    pub init: Vec<u64>,
    /// Prepare, in order: temp tensors, persistent buffers, scratch requests.
    pub prepare: Vec<PrepareStep>,
    /// The kernel sets its outputs' data in Prepare (VAR_HANDLE): they are not planned.
    pub sets_output_data: bool,
    /// How well the figures are known.
    pub fidelity: Fidelity,
    /// Set when TFLM would fail to prepare this op.
    pub refusal: Option<Refusal>,
}

impl KernelCost {
    /// The Prepare persistent allocations, in order.
    pub fn persistent(&self) -> impl Iterator<Item = u64> + '_ {
        self.prepare.iter().filter_map(|s| match s {
            PrepareStep::Persistent(b) => Some(*b),
            _ => None,
        })
    }

    /// The scratch requests, in order.
    pub fn scratch(&self) -> impl Iterator<Item = u64> + '_ {
        self.prepare.iter().filter_map(|s| match s {
            PrepareStep::Scratch(s) => Some(s.bytes),
            _ => None,
        })
    }
}

/// Signal-library custom operators the wheel registers (audio front ends).
const SIGNAL_OPS: &[&str] = &[
    "SignalWindow",
    "SignalFftAutoScale",
    "SignalRfft",
    "SignalIrfft",
    "SignalEnergy",
    "SignalFilterBank",
    "SignalFilterBankSquareRoot",
    "SignalFilterBankSpectralSubtraction",
    "SignalPCAN",
    "SignalFilterBankLog",
    "SignalDelay",
    "SignalFramer",
    "SignalOverlapAdd",
    "SignalStacker",
];

/// Resolves the allocations of operator `op` of subgraph `g`, and whether
/// TFLM would refuse it (the refusals found while costing it first, then the
/// kernel registry's).
///
/// `first_assignment` tells ASSIGN_VARIABLE whether it is the first assignment
/// of its resource (only that one allocates the resource buffer).
pub fn cost(
    model: &Model<'_>,
    g: usize,
    op: &Operator<'_>,
    profile: &TargetProfile,
    first_assignment: bool,
) -> KernelCost {
    // Fidelity is the reference kernel's; an optimized backend's kernel replaces only
    // what its Prepare allocates, and the registry adds what the backend's kernel refuses.
    let mut cost = reference_cost(model, g, op, profile, first_assignment);
    if let Backend::CmsisNn(cpu) = profile.backend
        && let Some(steps) = cmsis_nn::prepare(model, g, op, cpu)
    {
        cost.prepare = steps;
        if let Some(reason) = cmsis_nn::unprobed(op.opcode) {
            cost.fidelity = Fidelity::Estimated(reason);
        }
    }
    if cost.refusal.is_none() {
        cost.refusal = registry::check(model, g, op, profile.backend).map(Refusal::Rejected);
    }
    cost
}

fn reference_cost(
    model: &Model<'_>,
    g: usize,
    op: &Operator<'_>,
    profile: &TargetProfile,
    first_assignment: bool,
) -> KernelCost {
    let tensor = |i: Option<usize>| i.and_then(|t| model.tensor(g, t));
    let dtype_of = |i: Option<usize>| tensor(i).map(|t| t.dtype);
    let elems = |i: Option<usize>| tensor(i).map_or(0, |t| t.elements());
    let dim = |i: Option<usize>, d: usize| {
        tensor(i)
            .and_then(|t| t.dim(d))
            .map_or(0, |v| v.max(0) as u64)
    };
    let rank = |i: Option<usize>| tensor(i).map_or(0, |t| t.shape.len() as u64);
    let bytes = |i: Option<usize>| tensor(i).and_then(|t| t.bytes).unwrap_or(0);

    let row = profile.kernel(op.opcode.0);
    let mut cost = KernelCost {
        builtin: row.and_then(|r| r.builtin),
        init: row
            .and_then(|r| r.op_data)
            .map(u64::from)
            .into_iter()
            .collect(),
        prepare: Vec::new(),
        sets_output_data: false,
        fidelity: match row {
            Some(r) if r.measured => Fidelity::Exact,
            Some(_) => Fidelity::Estimated("an OpData size was only measured on another ABI"),
            None => Fidelity::Unmodelled,
        },
        refusal: None,
    };

    // Temp tensors: most kernels hold all their inputs and outputs at once.
    let all_io = || -> Vec<PrepareStep> {
        op.inputs
            .iter()
            .chain(&op.outputs)
            .filter_map(|&t| usize::try_from(t).ok())
            .map(PrepareStep::Temp)
            .collect()
    };
    let mut persistent: Vec<u64> = Vec::new();
    let mut scratch: Vec<(u64, &'static str)> = Vec::new();

    let int4_filter = |i: usize| dtype_of(op.input(i)) == Some(DType::I4);
    let hybrid = |i: usize| {
        dtype_of(op.input(0)).is_some_and(DType::is_float)
            && matches!(
                dtype_of(op.input(i)),
                Some(DType::I8 | DType::I4 | DType::U8)
            )
    };

    use BuiltinOp as B;
    match op.opcode {
        B::CONV_2D | B::DEPTHWISE_CONV_2D | B::TRANSPOSE_CONV => {
            // Filter dim 0 (CONV_2D, TRANSPOSE_CONV) or 3 (depthwise) is the channel count;
            // per-channel arrays are allocated even for float models.
            let (filter, channel_dim) = match op.opcode {
                B::DEPTHWISE_CONV_2D => (1, 3),
                B::TRANSPOSE_CONV => (1, 0),
                _ => (1, 0),
            };
            let c = dim(op.input(filter), channel_dim);
            if op.opcode != B::TRANSPOSE_CONV && hybrid(filter) {
                cost.refusal = Some(Refusal::Hybrid);
            }
            if op.opcode == B::TRANSPOSE_CONV {
                let mut steps = all_io();
                steps.push(PrepareStep::Persistent(4 * c));
                steps.push(PrepareStep::Persistent(4 * c));
                match dtype_of(op.input(2)) {
                    Some(DType::I8) => steps.push(PrepareStep::scratch(
                        4 * elems(op.output(0)),
                        "int32 accumulators",
                    )),
                    Some(DType::I16) => {
                        steps.push(PrepareStep::scratch(
                            8 * elems(op.output(0)),
                            "int64 accumulators",
                        ));
                        if dtype_of(op.input(3)) == Some(DType::I16) {
                            steps.push(PrepareStep::scratch(8 * elems(op.input(3)), "int64 bias"));
                        }
                    }
                    _ => {}
                }
                cost.prepare = steps;
                return cost;
            }
            // ConvPrepare holds (output, input, filter), allocates the per-channel arrays,
            // then CalculateOpData holds (input, filter, bias, output) on top.
            let mut steps = Vec::new();
            for t in [op.output(0), op.input(0), op.input(1)]
                .into_iter()
                .flatten()
            {
                steps.push(PrepareStep::Temp(t));
            }
            steps.push(PrepareStep::Persistent(4 * c));
            steps.push(PrepareStep::Persistent(4 * c));
            for t in [op.input(0), op.input(1), op.input(2), op.output(0)]
                .into_iter()
                .flatten()
            {
                steps.push(PrepareStep::Temp(t));
            }
            if int4_filter(1) {
                steps.push(PrepareStep::scratch(
                    elems(op.input(1)),
                    "unpacked int4 filter",
                ));
            }
            cost.prepare = steps;
            return cost;
        }
        B::FULLY_CONNECTED => {
            if hybrid(1) {
                cost.refusal = Some(Refusal::Hybrid);
            }
            let filter = tensor(op.input(1));
            let scales = filter
                .and_then(|f| f.quantization.as_ref())
                .map_or(0, |q| q.scales.len() as u64);
            if scales > 1 && !dtype_of(op.input(0)).is_some_and(DType::is_float) {
                persistent.push(4 * scales);
                persistent.push(4 * scales);
            }
            if int4_filter(1) {
                scratch.push((elems(op.input(1)), "unpacked int4 filter"));
            }
        }
        // int16 softmax builds two 513-entry int16 lookup tables (exp and 1/(1+x)).
        B::SOFTMAX if dtype_of(op.input(0)) == Some(DType::I16) => {
            persistent.push(1026);
            persistent.push(1026);
        }
        B::RESHAPE => {
            // A −1 in the stored output shape makes the kernel copy the resolved dims.
            if let Some(out) = tensor(op.output(0))
                && out.shape.contains(&-1)
            {
                persistent.push(4 + 4 * out.shape.len() as u64);
            }
        }
        B::UNIDIRECTIONAL_SEQUENCE_LSTM => {
            let time_major = matches!(op.options, OpOptions::Lstm(o) if o.time_major);
            let batch = dim(op.input(0), if time_major { 1 } else { 0 });
            let state_dim = dim(op.input(18), 1);
            let cell = if dtype_of(op.input(0)).is_some_and(DType::is_float) {
                4
            } else {
                2
            };
            scratch.extend([(batch * state_dim * cell, "gate buffer"); 4]);
            let bad = op
                .intermediates
                .iter()
                .filter_map(|&t| usize::try_from(t).ok())
                .any(|t| model.tensor(g, t).and_then(|t| t.bytes).unwrap_or(0) != 0);
            if bad {
                cost.refusal = Some(Refusal::NonEmptyIntermediate);
            }
        }
        B::SVDF => {
            let batch = dim(op.input(0), 0);
            let num_filters = dim(op.input(1), 0);
            let rank = match op.options {
                OpOptions::Svdf { rank, .. } if rank > 0 => rank as u64,
                _ => 1,
            };
            if dtype_of(op.input(0)) == Some(DType::I8) {
                scratch.push((4 * batch * num_filters, "int32 filter outputs"));
                scratch.push((4 * batch * (num_filters / rank), "int32 unit outputs"));
            } else {
                scratch.push((4 * batch * num_filters, "filter outputs"));
            }
        }
        B::MEAN | B::SUM => {
            if matches!(dtype_of(op.input(0)), Some(DType::I8 | DType::I16)) {
                scratch.push((4 * elems(op.output(0)), "int32 sums"));
            }
            scratch.push((4 * rank(op.input(0)), "index walk"));
            scratch.push((4 * elems(op.input(1)), "resolved axes"));
        }
        B::REDUCE_MAX | B::REDUCE_MIN | B::REDUCE_ALL => {
            scratch.push((4 * rank(op.input(0)), "index walk"));
            scratch.push((4 * elems(op.input(1)), "resolved axes"));
        }
        B::MIRROR_PAD => {
            scratch.push((4 * rank(op.input(0)), "output dims"));
            scratch.push((4 * rank(op.input(0)), "input dims"));
        }
        B::VAR_HANDLE => cost.sets_output_data = true,
        B::ASSIGN_VARIABLE if first_assignment => persistent.push(bytes(op.input(1))),
        B::ADD_N => {
            scratch.push((
                u64::from(profile.pointer_bytes) * op.inputs.len() as u64,
                "input pointers",
            ));
            if dtype_of(op.output(0)) == Some(DType::I8) {
                cost.fidelity = Fidelity::Estimated("ADD_N int8 OpData size was not measured");
            }
        }
        B::CUSTOM => {
            let name = op.custom_code.unwrap_or("");
            if SIGNAL_OPS.contains(&name) {
                cost.builtin = None;
                cost.fidelity = Fidelity::Exact;
                cost.init = signal_init(name, model, g, op, profile, &mut cost.fidelity);
                if name == "SignalRfft" {
                    // Prepare requests one scratch buffer of fft_length elements of the input type.
                    let n = rfft_length(elems(op.output(0)));
                    let el = dtype_of(op.input(0))
                        .and_then(DType::size_bytes)
                        .unwrap_or(2);
                    scratch.push((n * u64::from(el), "FFT work buffer"));
                }
            } else {
                cost.fidelity = Fidelity::Unmodelled;
                cost.refusal = Some(Refusal::NoKernel);
            }
        }
        _ => {}
    }

    let mut steps = all_io();
    steps.extend(persistent.into_iter().map(PrepareStep::Persistent));
    steps.extend(scratch.into_iter().map(|(b, p)| PrepareStep::scratch(b, p)));
    cost.prepare = steps;
    cost
}

/// RFFT output holds `fft_length/2 + 1` complex values as interleaved pairs.
fn rfft_length(output_elems: u64) -> u64 {
    (output_elems / 2).saturating_sub(1) * 2
}

fn signal_init(
    name: &str,
    model: &Model<'_>,
    g: usize,
    op: &Operator<'_>,
    profile: &TargetProfile,
    fidelity: &mut Fidelity,
) -> Vec<u64> {
    let elems = |i: Option<usize>| op_tensor_elems(model, g, i);
    match name {
        "SignalWindow" | "SignalEnergy" | "SignalFilterBankLog" => vec![8],
        "SignalPCAN" => vec![4],
        // Params struct, then a work buffer sized by the channel count (output length).
        "SignalFilterBank" => vec![
            signal::filter_bank_params(profile),
            8 * (elems(op.output(0)) + 1),
        ],
        "SignalFilterBankSpectralSubtraction" => vec![
            signal::spectral_subtraction_params(profile),
            4 * elems(op.output(0)),
        ],
        "SignalRfft" => {
            let n = rfft_length(elems(op.output(0)));
            let int16 = op
                .input(0)
                .and_then(|t| model.tensor(g, t))
                .is_some_and(|t| t.dtype == DType::I16);
            if !int16 {
                *fidelity = Fidelity::Estimated("RFFT state size is measured for int16 only");
            }
            vec![
                signal::rfft_params(profile),
                signal::rfft_int16_state(profile, n),
            ]
        }
        _ => Vec::new(),
    }
}

fn op_tensor_elems(model: &Model<'_>, g: usize, i: Option<usize>) -> u64 {
    i.and_then(|t| model.tensor(g, t))
        .map_or(0, |t| t.elements())
}
