//! Recurrent kernels: UNIDIRECTIONAL_SEQUENCE_LSTM
//! (`unidirectional_sequence_lstm.cc`, `lstm_eval.cc`,
//! `cmsis_nn/unidirectional_sequence_lstm.cc`) and SVDF (`svdf.cc`,
//! `svdf_common.cc`, `cmsis_nn/svdf.cc`).

use alloc::format;
use alloc::vec;
use alloc::vec::Vec;
use core::iter;

use super::shapes::{Reshaped, ShapeCx, ShapeFail};
use super::{CmsisNn, Ctx, Evidence, Kernel, Prep, Refusal, abi3, all_io, both, kernel, prod, st};
use crate::read::dtype::DType::{self, F32, I8, I16, I32};
use crate::read::ops::OpOptions;
use crate::tflm::profile::CpuClass;
use crate::tflm::registry::Check;
use crate::tflm::registry::Operand::{Input, Output};
use crate::tflm::registry::checks::{E, P, constant, one_of, pairs};
use microarena_image::opcode as c;

pub(super) const KERNELS: &[Kernel] = &[
    Kernel {
        builtin: both(st(16, 4)),
        builtin_name: "TfLiteUnidirectionalSequenceLSTMParams",
        op_data: both(Some(688)),
        prepare: lstm_prepare,
        checks: UNIDIRECTIONAL_SEQUENCE_LSTM,
        shape: Some(lstm_shape),
        cmsis_nn: Some(CmsisNn {
            // OpDataLSTM (688, 8-aligned: ArithmeticParams holds int64_t) + cmsis_nn_lstm_params
            // (15 int32_t + 4 gates of 40) = 908, padded to 912.
            op_data: Some(Some(912)),
            prepare: Some(lstm_prepare_cmsis_nn),
            checks: Some(UNIDIRECTIONAL_SEQUENCE_LSTM_CMSIS_NN),
            evidence: Evidence::Measured,
        }),
        ..kernel(
            c::UNIDIRECTIONAL_SEQUENCE_LSTM,
            "unidirectional_sequence_lstm.cc, lstm_eval.cc",
        )
    },
    Kernel {
        builtin: abi3(st(12, 4), st(8, 4), st(12, 4)),
        builtin_name: "TfLiteSVDFParams",
        op_data: both(Some(36)),
        prepare: svdf_prepare,
        checks: SVDF,
        shape: Some(svdf_shape),
        cmsis_nn: Some(CmsisNn {
            // CmsisNnOpDataSvdf: 9 int + int32_t* kernel_sums.
            op_data: Some(Some(40)),
            prepare: Some(svdf_prepare_cmsis_nn),
            checks: None,
            evidence: Evidence::Measured,
        }),
        ..kernel(c::SVDF, "svdf.cc, svdf_common.cc")
    },
];

/// UNIDIRECTIONAL_SEQUENCE_LSTM: the steps and batch of the input, the
/// units of the state; the state tensors (inputs 18, 19) follow the batch.
fn lstm_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let input_t = cx.input_t();
    let h = cx.shape(18).unwrap_or_default();
    if in0.len() != 3 || h.len() != 2 {
        return Err(cx.fail(input_t, format!("expected a 3-D input, got {in0:?}")));
    }
    // Input-to-gate weights are [units, features] (input 1 is absent with
    // coupled input and forget gates, so take input 2).
    let w = cx.shape(2).unwrap_or_default();
    if w.len() == 2 && w[1] != in0[2] {
        return Err(cx.fail(
            input_t,
            format!(
                "{in0:?} has {} features per step, the weights take {}",
                in0[2], w[1]
            ),
        ));
    }
    let time_major = matches!(cx.op.options, OpOptions::Lstm(o) if o.time_major);
    let batch = in0[usize::from(time_major)];
    let mut follows = Vec::new();
    for k in [18, 19] {
        if let Some(t) = cx.op.input(k) {
            let s = cx.shape(k).unwrap_or_default();
            if s.len() == 2 && s[0] != batch {
                follows.push((t, vec![batch, s[1]]));
            }
        }
    }
    Ok(Reshaped {
        output: vec![in0[0], in0[1], h[1]],
        follows,
        options: None,
    })
}

/// SVDF: the batch of the input, the units of the feature weights over the
/// rank; the state (input 4) follows the batch.
fn svdf_shape(cx: &ShapeCx<'_, '_>) -> Result<Reshaped, ShapeFail> {
    let in0 = cx.in0();
    let rank = match cx.op.options {
        OpOptions::Svdf { rank, .. } if rank > 0 => rank,
        _ => 1,
    };
    let (f, wt) = (
        cx.shape(1).unwrap_or_default(),
        cx.shape(2).unwrap_or_default(),
    );
    if in0.len() != 2 || f.len() != 2 || wt.len() != 2 || in0[1] != f[1] {
        return Err(cx.fail(
            cx.input_t(),
            format!("{in0:?} does not match the feature weights {f:?}"),
        ));
    }
    let mut follows = Vec::new();
    if let Some(t) = cx.op.input(4) {
        let s = cx.shape(4).unwrap_or_default();
        if s.first() != Some(&in0[0]) {
            follows.push((t, vec![in0[0], f[0] * wt[1]]));
        }
    }
    Ok(Reshaped {
        output: vec![in0[0], f[0] / rank],
        follows,
        options: None,
    })
}

/// Rows of one gate buffer: the batch (dim 1 when time-major).
fn lstm_batch(cx: &Ctx<'_>) -> u64 {
    let time_major = matches!(cx.op.options, OpOptions::Lstm(o) if o.time_major);
    cx.in_dim(0, if time_major { 1 } else { 0 })
}

/// TFLM refuses an LSTM whose intermediate tensors have any bytes.
fn check_intermediates(cx: &Ctx<'_>, p: &mut Prep) {
    let bad = cx
        .op
        .intermediates
        .iter()
        .filter_map(|&t| usize::try_from(t).ok())
        .any(|t| cx.model.tensor(cx.g, t).and_then(|t| t.bytes).unwrap_or(0) != 0);
    if bad {
        p.refuse(Refusal::NonEmptyIntermediate);
    }
}

/// `LstmTensors` holds every present input and the output; then four gate
/// buffers of the cell state's element type.
fn lstm_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    let cell = if cx.in_type(0).is_some_and(DType::is_float) {
        4
    } else {
        2
    };
    let bytes = prod(&[lstm_batch(cx), cx.in_dim(18, 1), cell]);
    for _ in 0..4 {
        p.scratch(bytes, "gate buffer");
    }
    check_intermediates(cx, p);
}

/// `cmsis_nn/unidirectional_sequence_lstm.cc`: int8/int16 activations with
/// an int16 cell take CMSIS-NN's LSTM: eight kernel-sum arrays (input and
/// recurrent, per gate) of the bias type, and three buffers.
fn lstm_prepare_cmsis_nn(cx: &Ctx<'_>, _: CpuClass, p: &mut Prep) {
    all_io(cx, p);
    let hidden = cx.in_dim(18, 1);
    let cell = cx.in_type(19);
    let cell_bytes = cell.and_then(DType::size_bytes).map_or(4, u64::from);
    let bias_bytes = match (cx.in_type(0), cell) {
        (Some(DType::I8), Some(DType::I16)) => Some(4),
        (Some(DType::I16), Some(DType::I16)) => Some(8),
        _ => None,
    };
    let buffers = match bias_bytes {
        Some(b) => {
            for _ in 0..8 {
                p.persistent(prod(&[hidden, b]), "kernel sums (CMSIS-NN)");
            }
            3
        }
        None => 4,
    };
    for _ in iter::repeat_n((), buffers) {
        p.scratch(
            prod(&[lstm_batch(cx), hidden, cell_bytes]),
            "gate buffer (CMSIS-NN)",
        );
    }
    check_intermediates(cx, p);
}

/// `PrepareSvdf`: every operand, then the int32 filter and unit outputs
/// (int8) or the float filter outputs.
fn svdf_prepare(cx: &Ctx<'_>, p: &mut Prep) {
    all_io(cx, p);
    let batch = cx.in_dim(0, 0);
    let num_filters = cx.in_dim(1, 0);
    let rank = match cx.op.options {
        OpOptions::Svdf { rank, .. } if rank > 0 => rank as u64,
        _ => 1,
    };
    if cx.in_type(0) == Some(DType::I8) {
        // PrepareSvdf: the bias scale must be the state's times the time
        // weights' (within 1e-5; a bias without quantization has scale 0).
        let scale = |i: usize| super::scale(cx.in_t(i));
        let expected = scale(4) * scale(2);
        if (f64::from(scale(3)) - f64::from(expected)).abs() >= 1e-5 {
            p.refuse(Refusal::Quantization(
                "the bias scale is not the state scale times the time weights' scale",
            ));
        }
        p.scratch(prod(&[4, batch, num_filters]), "int32 filter outputs")
            .scratch(prod(&[4, batch, num_filters / rank]), "int32 unit outputs");
    } else {
        p.scratch(prod(&[4, batch, num_filters]), "filter outputs");
    }
}

/// `cmsis_nn/svdf.cc` Prepare: the reference sequence; for int8 on MVE
/// (`arm_svdf_s8_get_buffer_size`: one int32 per filter) the feature weights'
/// row sums, computed once into a persistent buffer, which needs the weights
/// constant (KERNELS_OPTIMIZED_FOR_SPEED).
fn svdf_prepare_cmsis_nn(cx: &Ctx<'_>, cpu: CpuClass, p: &mut Prep) {
    svdf_prepare(cx, p);
    if cpu == CpuClass::Mve && cx.in_type(0) == Some(DType::I8) {
        if !cx.in_t(1).is_some_and(|t| t.has_data) {
            p.refuse(Refusal::Prepare(
                "the feature weights are not constant, and CMSIS-NN's MVE SVDF sums them once in Prepare",
            ));
        }
        p.persistent(4 * cx.in_dim(1, 0), "feature weight sums (CMSIS-NN MVE)");
    }
}

/// `svdf_common.cc` `PrepareSvdf` (and `cmsis_nn/svdf.cc`, which checks the
/// same types): an int8 input wants int8 feature weights, int16 or int8 time
/// weights and state, int32 bias and an int8 output; a float32 input wants
/// float32 throughout.
const SVDF: &[Check] = &[
    one_of(Input(0), &[F32, I8], P),
    pairs(
        // input, feature weights, time weights, activation state
        &[Input(0), Input(1), Input(2), Input(4)],
        &[
            &[I8, I8, I16, I16],
            &[I8, I8, I16, I8],
            &[I8, I8, I8, I16],
            &[I8, I8, I8, I8],
            &[F32, F32, F32, F32],
        ],
        P,
        None,
    ),
    pairs(&[Input(0), Input(3)], &[&[I8, I32], &[F32, F32]], P, None),
    pairs(&[Input(0), Output(0)], &[&[I8, I8], &[F32, F32]], P, None),
];

/// `unidirectional_sequence_lstm.cc`: Prepare wants a float32 or int16 cell
/// state (input 19); Eval runs float32 inputs, and int8 or int16 inputs with
/// int8 input-to-input weights.
const LSTM_TYPES: [Check; 3] = [
    one_of(Input(19), &[F32, I16], P),
    one_of(Input(0), &[F32, I8, I16], E),
    Check::If {
        operand: Input(0),
        is: &[I8, I16],
        then: &one_of(Input(1), &[I8], E),
    },
];

const UNIDIRECTIONAL_SEQUENCE_LSTM: &[Check] = &LSTM_TYPES;

/// `cmsis_nn/unidirectional_sequence_lstm.cc` `Prepare`: the weights (inputs
/// 1–8) and gate biases (12–15) must be constant, before the cell state type.
const UNIDIRECTIONAL_SEQUENCE_LSTM_CMSIS_NN: &[Check] = &[
    constant(Input(1), "input-to-input weights", None),
    constant(Input(2), "input-to-forget weights", None),
    constant(Input(3), "input-to-cell weights", None),
    constant(Input(4), "input-to-output weights", None),
    constant(Input(5), "recurrent-to-input weights", None),
    constant(Input(6), "recurrent-to-forget weights", None),
    constant(Input(7), "recurrent-to-cell weights", None),
    constant(Input(8), "recurrent-to-output weights", None),
    constant(Input(12), "input gate bias", None),
    constant(Input(13), "forget gate bias", None),
    constant(Input(14), "cell gate bias", None),
    constant(Input(15), "output gate bias", None),
    LSTM_TYPES[0],
    LSTM_TYPES[1],
    LSTM_TYPES[2],
];
