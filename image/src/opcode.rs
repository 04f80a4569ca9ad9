//! The operator table: every TFLite builtin microarena knows, declared once
//! with its schema code, whether core's TFLM simulation models its kernel
//! (a row in every target profile) and whether microarena-runtime runs it —
//! and if so, which parameter struct its op record carries, which picks
//! core's lowering for it.
//!
//! Everything else derives from this table: the `opcode` constants, core's
//! `BuiltinOp` constants, [`op_name`] and [`op_supported`]. The runtime's
//! `tests/operators.rs` fails when an op is wired in one place but not the
//! others.

use crate::params::ParamsKind;

/// One row of [`OPERATORS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Operator {
    /// `BuiltinOperator` code.
    pub code: u8,
    /// Name as the TFLite schema spells it.
    pub name: &'static str,
    /// TFLM registers a kernel for it, and core's TFLM simulation models
    /// that kernel (its row under `core/src/tflm/kernels/`).
    pub tflm: bool,
    /// `Some`: microarena-runtime has a kernel for it, and its op record
    /// carries these parameters (core lowers it accordingly).
    pub runtime: Option<ParamsKind>,
}

/// `runtime: -` (no runtime kernel) or `runtime: Kind` (a kernel whose op
/// record carries `ParamsKind::Kind`).
macro_rules! runtime {
    (-) => {
        None
    };
    ($kind:ident) => {
        Some(ParamsKind::$kind)
    };
}

macro_rules! operators {
    ($($name:ident = $code:literal, tflm: $tflm:literal, runtime: $rt:tt;)*) => {
        $(
            #[doc = concat!("`", stringify!($name), "`")]
            pub const $name: u8 = $code;
        )*
        /// Every builtin operator microarena knows, in code order.
        pub const OPERATORS: &[Operator] = &[$(Operator {
            code: $code,
            name: stringify!($name),
            tflm: $tflm,
            runtime: runtime!($rt),
        }),*];
    };
}

operators! {
    ADD = 0, tflm: true, runtime: NoParams;
    AVERAGE_POOL_2D = 1, tflm: true, runtime: Window;
    CONCATENATION = 2, tflm: true, runtime: Concat;
    CONV_2D = 3, tflm: true, runtime: Window;
    DEPTHWISE_CONV_2D = 4, tflm: true, runtime: Window;
    DEPTH_TO_SPACE = 5, tflm: true, runtime: Block;
    DEQUANTIZE = 6, tflm: true, runtime: NoParams;
    EMBEDDING_LOOKUP = 7, tflm: true, runtime: NoParams;
    FLOOR = 8, tflm: true, runtime: NoParams;
    FULLY_CONNECTED = 9, tflm: true, runtime: NoParams;
    L2_NORMALIZATION = 11, tflm: true, runtime: NoParams;
    L2_POOL_2D = 12, tflm: true, runtime: Window;
    LOGISTIC = 14, tflm: true, runtime: NoParams;
    LSTM = 16, tflm: false, runtime: -;
    MAX_POOL_2D = 17, tflm: true, runtime: Window;
    MUL = 18, tflm: true, runtime: NoParams;
    RELU = 19, tflm: true, runtime: NoParams;
    RELU6 = 21, tflm: true, runtime: NoParams;
    RESHAPE = 22, tflm: true, runtime: NoParams;
    RESIZE_BILINEAR = 23, tflm: true, runtime: Resize;
    SOFTMAX = 25, tflm: true, runtime: Softmax;
    SPACE_TO_DEPTH = 26, tflm: true, runtime: Block;
    SVDF = 27, tflm: true, runtime: Svdf;
    TANH = 28, tflm: true, runtime: NoParams;
    CALL = 31, tflm: false, runtime: -;
    CUSTOM = 32, tflm: false, runtime: -;
    PAD = 34, tflm: true, runtime: Pad;
    GATHER = 36, tflm: true, runtime: Gather;
    BATCH_TO_SPACE_ND = 37, tflm: true, runtime: SpaceBatch;
    SPACE_TO_BATCH_ND = 38, tflm: true, runtime: SpaceBatch;
    TRANSPOSE = 39, tflm: true, runtime: Transpose;
    MEAN = 40, tflm: true, runtime: Mean;
    SUB = 41, tflm: true, runtime: NoParams;
    DIV = 42, tflm: true, runtime: NoParams;
    SQUEEZE = 43, tflm: true, runtime: NoParams;
    UNIDIRECTIONAL_SEQUENCE_LSTM = 44, tflm: true, runtime: Lstm;
    STRIDED_SLICE = 45, tflm: true, runtime: Slice;
    EXP = 47, tflm: true, runtime: NoParams;
    SPLIT = 49, tflm: true, runtime: Split;
    LOG_SOFTMAX = 50, tflm: true, runtime: NoParams;
    CAST = 53, tflm: true, runtime: NoParams;
    PRELU = 54, tflm: true, runtime: NoParams;
    MAXIMUM = 55, tflm: true, runtime: NoParams;
    ARG_MAX = 56, tflm: true, runtime: Axis;
    MINIMUM = 57, tflm: true, runtime: NoParams;
    LESS = 58, tflm: true, runtime: NoParams;
    NEG = 59, tflm: true, runtime: NoParams;
    PADV2 = 60, tflm: true, runtime: Pad;
    GREATER = 61, tflm: true, runtime: NoParams;
    GREATER_EQUAL = 62, tflm: true, runtime: NoParams;
    LESS_EQUAL = 63, tflm: true, runtime: NoParams;
    SLICE = 65, tflm: true, runtime: NoParams;
    SIN = 66, tflm: true, runtime: NoParams;
    TRANSPOSE_CONV = 67, tflm: true, runtime: Window;
    EXPAND_DIMS = 70, tflm: true, runtime: NoParams;
    EQUAL = 71, tflm: true, runtime: NoParams;
    NOT_EQUAL = 72, tflm: true, runtime: NoParams;
    LOG = 73, tflm: true, runtime: NoParams;
    SUM = 74, tflm: true, runtime: Mean;
    SQRT = 75, tflm: true, runtime: NoParams;
    RSQRT = 76, tflm: true, runtime: NoParams;
    SHAPE = 77, tflm: true, runtime: NoParams;
    POW = 78, tflm: false, runtime: -;
    ARG_MIN = 79, tflm: true, runtime: Axis;
    REDUCE_MAX = 82, tflm: true, runtime: Mean;
    PACK = 83, tflm: true, runtime: Concat;
    LOGICAL_OR = 84, tflm: true, runtime: NoParams;
    LOGICAL_AND = 86, tflm: true, runtime: NoParams;
    LOGICAL_NOT = 87, tflm: true, runtime: NoParams;
    UNPACK = 88, tflm: true, runtime: Split;
    REDUCE_MIN = 89, tflm: true, runtime: Mean;
    FLOOR_DIV = 90, tflm: true, runtime: NoParams;
    SQUARE = 92, tflm: true, runtime: NoParams;
    ZEROS_LIKE = 93, tflm: true, runtime: NoParams;
    FILL = 94, tflm: true, runtime: NoParams;
    FLOOR_MOD = 95, tflm: true, runtime: NoParams;
    RESIZE_NEAREST_NEIGHBOR = 97, tflm: true, runtime: Resize;
    LEAKY_RELU = 98, tflm: true, runtime: LeakyRelu;
    SQUARED_DIFFERENCE = 99, tflm: true, runtime: NoParams;
    MIRROR_PAD = 100, tflm: true, runtime: Pad;
    ABS = 101, tflm: true, runtime: NoParams;
    SPLIT_V = 102, tflm: true, runtime: Split;
    CEIL = 104, tflm: true, runtime: NoParams;
    REVERSE_V2 = 105, tflm: true, runtime: NoParams;
    ADD_N = 106, tflm: true, runtime: NoParams;
    GATHER_ND = 107, tflm: true, runtime: NoParams;
    COS = 108, tflm: true, runtime: NoParams;
    ELU = 111, tflm: true, runtime: NoParams;
    QUANTIZE = 114, tflm: true, runtime: NoParams;
    ROUND = 116, tflm: true, runtime: NoParams;
    HARD_SWISH = 117, tflm: true, runtime: NoParams;
    IF = 118, tflm: true, runtime: Subgraphs;
    WHILE = 119, tflm: true, runtime: Subgraphs;
    SELECT_V2 = 123, tflm: true, runtime: NoParams;
    BATCH_MATMUL = 126, tflm: true, runtime: BatchMatMul;
    CUMSUM = 128, tflm: true, runtime: Cumsum;
    CALL_ONCE = 129, tflm: true, runtime: Subgraphs;
    BROADCAST_TO = 130, tflm: true, runtime: NoParams;
    REDUCE_ALL = 140, tflm: true, runtime: Mean;
    VAR_HANDLE = 142, tflm: true, runtime: NoParams;
    READ_VARIABLE = 143, tflm: true, runtime: NoParams;
    ASSIGN_VARIABLE = 144, tflm: true, runtime: NoParams;
    BROADCAST_ARGS = 145, tflm: true, runtime: NoParams;
    DYNAMIC_UPDATE_SLICE = 151, tflm: true, runtime: NoParams;
}

/// One custom operator the runtime knows, under an image-only code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CustomOperator {
    /// Code in the image's opcode byte: [`FIRST_CUSTOM_CODE`] and up, above
    /// every schema builtin (the schema's largest is 209), so a custom op's
    /// record is told apart from a builtin's by its code alone.
    pub code: u8,
    /// The model's `custom_code`.
    pub name: &'static str,
    /// As [`Operator::runtime`].
    pub runtime: Option<ParamsKind>,
}

/// First image-only code for custom operators.
pub const FIRST_CUSTOM_CODE: u8 = 240;

macro_rules! custom_operators {
    ($($konst:ident = $code:literal, $name:literal, runtime: $rt:tt;)*) => {
        $(
            #[doc = concat!("Custom `", $name, "` (image-only code)")]
            pub const $konst: u8 = $code;
        )*
        /// The custom operators (TFLM's Signal library, `signal/micro/kernels/`)
        /// microarena-runtime knows, in code order. Core's TFLM model of them
        /// is `tflm::kernel`'s `SIGNAL_OPS`, not a profile row.
        pub const CUSTOM_OPERATORS: &[CustomOperator] = &[$(CustomOperator {
            code: $code,
            name: $name,
            runtime: runtime!($rt),
        }),*];
    };
}

custom_operators! {
    SIGNAL_WINDOW = 240, "SignalWindow", runtime: Flex;
    SIGNAL_FFT_AUTO_SCALE = 241, "SignalFftAutoScale", runtime: Flex;
    SIGNAL_RFFT = 242, "SignalRfft", runtime: Flex;
    SIGNAL_ENERGY = 243, "SignalEnergy", runtime: Flex;
    SIGNAL_FILTER_BANK = 244, "SignalFilterBank", runtime: Flex;
    SIGNAL_FILTER_BANK_SQUARE_ROOT = 245, "SignalFilterBankSquareRoot", runtime: NoParams;
    SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION = 246, "SignalFilterBankSpectralSubtraction", runtime: Flex;
    SIGNAL_PCAN = 247, "SignalPCAN", runtime: Flex;
    SIGNAL_FILTER_BANK_LOG = 248, "SignalFilterBankLog", runtime: Flex;
}

/// The custom-operator row for image code `code`.
pub const fn custom_operator(code: i32) -> Option<&'static CustomOperator> {
    let mut i = 0;
    while i < CUSTOM_OPERATORS.len() {
        if CUSTOM_OPERATORS[i].code as i32 == code {
            return Some(&CUSTOM_OPERATORS[i]);
        }
        i += 1;
    }
    None
}

/// The image code of the custom operator named `custom_code`, if known.
pub fn custom_code(custom_code: &str) -> Option<u8> {
    CUSTOM_OPERATORS
        .iter()
        .find(|o| o.name == custom_code)
        .map(|o| o.code)
}

/// The parameters the op record of image code `code` carries, when the
/// runtime has a kernel for it (builtin or custom).
pub const fn runtime_params(code: i32) -> Option<ParamsKind> {
    match operator(code) {
        Some(op) => op.runtime,
        None => match custom_operator(code) {
            Some(op) => op.runtime,
            None => None,
        },
    }
}

/// The table row for builtin `code`, if microarena knows it.
pub const fn operator(code: i32) -> Option<&'static Operator> {
    let mut i = 0;
    while i < OPERATORS.len() {
        if OPERATORS[i].code as i32 == code {
            return Some(&OPERATORS[i]);
        }
        i += 1;
    }
    None
}

/// Name of a builtin code as the TFLite schema spells it (`builtin op` for
/// codes the table lacks; the host side has the full schema table).
pub const fn op_name(code: i32) -> &'static str {
    match operator(code) {
        Some(op) => op.name,
        None => match custom_operator(code) {
            Some(op) => op.name,
            None => "builtin op",
        },
    }
}

/// `true` for the operators whose runtime kernel writes several outputs
/// (the op record's `n_outputs` may exceed 1); every other kernel has one.
pub const fn has_several_outputs(code: u8) -> bool {
    matches!(
        code,
        SPLIT
            | SPLIT_V
            | UNPACK
            | SIGNAL_FFT_AUTO_SCALE
            | SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION
            | IF
            | WHILE
    )
}

/// `true` for the operators whose output 0 in the image is a variable
/// tensor they own: VAR_HANDLE and ASSIGN_VARIABLE (the resource
/// variable's buffer, which every handle of the resource names) and
/// CALL_ONCE (its `has run` flag).
pub const fn output_is_state(code: u8) -> bool {
    matches!(code, VAR_HANDLE | ASSIGN_VARIABLE | CALL_ONCE)
}

/// How many subgraphs an operator calls (its [`crate::params::SubgraphParams`]
/// fields in use): IF and WHILE two, CALL_ONCE one, every other op none.
pub const fn called_subgraphs(code: u8) -> usize {
    match code {
        IF | WHILE => 2,
        CALL_ONCE => 1,
        _ => 0,
    }
}

/// `true` for the windowed operators the runtime can run in row bands
/// (`EXEC_BANDED`): each output row depends on a window of input rows only.
pub const fn runs_in_bands(code: u8) -> bool {
    matches!(
        code,
        CONV_2D | DEPTHWISE_CONV_2D | AVERAGE_POOL_2D | MAX_POOL_2D
    )
}

/// How an operator runs in a banded stage (`EXEC_BANDED`, see
/// [`crate::stage`]): what one output row reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BandRows {
    /// A window of input 0's rows ([`runs_in_bands`]).
    Window,
    /// PAD / PADV2: input row `r − top`, or a row of padding.
    Pad,
    /// Element-wise: row `r` of every operand of the output's height (an
    /// operand broadcast along H, such as a squeeze-excite gate, whole).
    Rows,
    /// CONCATENATION along the channel axis: row `r` of each operand.
    Channels,
    /// RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR: the input rows TFLM's
    /// source arithmetic picks for row `r` ([`crate::resize::ResizeRows`]).
    Resize,
    /// TRANSPOSE: row `r` gathers its elements from input 0 read whole, a
    /// tensor written before the stage (a PyTorch export's NCHW input:
    /// every channel plane's row `r`), so no ring holds it.
    Gather,
    /// RESHAPE of a batch-1 NHWC map that a FULLY_CONNECTED reducer alone
    /// reads (a Keras Flatten before Dense): folded, it makes no rows and
    /// the reducer reads its input's rows ([`crate::stage::flatten_folds`]).
    Flatten,
    /// MEAN / SUM over H, a global AVERAGE_POOL_2D or a FULLY_CONNECTED
    /// reading the whole map as one vector ([`crate::stage::reduces`]): a
    /// stage's last op, folding each row of its input into an accumulator
    /// as the row arrives and writing its whole output after the last, so
    /// the map it reduces is never whole.
    Reduce,
}

/// The operators a banded stage runs, and how ([`BandRows`]); `None` for the
/// others, which end a stage.
pub const fn band_rows(code: u8) -> Option<BandRows> {
    if runs_in_bands(code) {
        return Some(BandRows::Window);
    }
    match code {
        PAD | PADV2 => Some(BandRows::Pad),
        RELU | RELU6 | LEAKY_RELU | HARD_SWISH | LOGISTIC | TANH | QUANTIZE | DEQUANTIZE | ADD
        | MUL => Some(BandRows::Rows),
        CONCATENATION => Some(BandRows::Channels),
        RESIZE_NEAREST_NEIGHBOR | RESIZE_BILINEAR => Some(BandRows::Resize),
        TRANSPOSE => Some(BandRows::Gather),
        MEAN | SUM | FULLY_CONNECTED => Some(BandRows::Reduce),
        RESHAPE => Some(BandRows::Flatten),
        _ => None,
    }
}

/// `true` for the windowed operators the runtime can run in place over input
/// 0 row by row ([`crate::format::op::IN_PLACE`] = 1): each output row is
/// computed into a small ring (the op's scratch, sized by
/// [`crate::geometry::RowWindow::in_place_ring_rows`]) and written over the
/// input once no later row's window reads those bytes. The banded operators.
pub const fn in_place_by_rows(code: u8) -> bool {
    runs_in_bands(code)
}

/// The inputs the runtime's kernel for `code` can overwrite with its output
/// (in-place execution, [`crate::format::op::IN_PLACE`]): its Eval computes
/// output element `i` from element `i` of that input (and, for a binary op,
/// the other operand's element at the broadcast index) and reads it before
/// writing output element `i`, so output and input may be one buffer when the
/// input has the output's shape and element size. SOFTMAX and LOG_SOFTMAX
/// are not listed: they read a whole row (max, then sum) before writing it,
/// which would be in-place-safe per row, but their outputs are a
/// classifier's last few bytes; CAST and QUANTIZE/DEQUANTIZE between sizes
/// differ in element size, which the rule excludes.
pub const fn in_place_inputs(code: u8) -> &'static [usize] {
    match code {
        ADD | MUL | SUB | MAXIMUM | MINIMUM | SQUARED_DIFFERENCE | DIV => &[0, 1],
        RELU | RELU6 | LEAKY_RELU | PRELU | HARD_SWISH | LOGISTIC | TANH | ABS | SQRT | RSQRT
        | LOG | EXP | QUANTIZE | CAST => &[0],
        _ => &[],
    }
}

/// `true` when the runtime's kernel for `code` can write output 0 over
/// input 0 step by step: UNIDIRECTIONAL_SEQUENCE_LSTM reads time step `t`
/// of its input whole (the four input gates) before it writes output step
/// `t`, and both tensors hold their steps in one order (time-major or
/// batch-major alike), so with an output step no larger than an input step
/// ([`writes_behind_fits`]) output step `t` ends before input step `t + 1`
/// begins: the output takes the first bytes of the input's buffer.
pub const fn writes_behind_input(code: u8) -> bool {
    matches!(code, UNIDIRECTIONAL_SEQUENCE_LSTM)
}

/// The rule of [`writes_behind_input`] on the two tensors: `steps` (batch ×
/// time: the dims before the last, equal in both) steps of `in_bytes` and
/// `out_bytes` in all; the output's steps no larger than the input's.
pub const fn writes_behind_fits(
    steps_in: usize,
    steps_out: usize,
    in_bytes: usize,
    out_bytes: usize,
) -> bool {
    steps_in == steps_out && steps_in > 0 && out_bytes <= in_bytes
}

/// The inputs the runtime's kernel for `code` reads as the image's constant
/// data (filters, weights and biases it takes from flash as they are), and
/// the reason given when one is not constant. The one rule for both sides:
/// the runtime's Prepare refuses the op with this reason, and core's
/// `lower::support` gives `plan` the same reason, so `plan` has no runtime
/// figure exactly when `run` refuses. An absent optional input passes.
/// FULLY_CONNECTED and BATCH_MATMUL take variable operands (attention).
pub const fn constant_inputs(code: u8) -> (&'static [usize], &'static str) {
    match code {
        CONV_2D | DEPTHWISE_CONV_2D => (&[1], "filter must be constant"),
        // Inputs: output shape, filter, input, bias.
        TRANSPOSE_CONV => (&[1], "filter must be constant"),
        // Feature and time weights, bias.
        SVDF => (&[1, 2, 3], "weights and bias must be constant"),
        // Input-to-gate weights (1–4), recurrent weights (5–8), gate biases (12–15).
        UNIDIRECTIONAL_SEQUENCE_LSTM => (
            &[1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15],
            "weights and biases must be constant",
        ),
        // TFLM's Prepare reads the dims to check the output shape.
        FILL => (&[0], "FILL's dims must be constant"),
        BROADCAST_TO => (&[1], "BROADCAST_TO's shape must be constant"),
        _ => (&[], ""),
    }
}

/// `true` for the operators whose output, when it aliases input 0
/// ([`crate::format::op::IN_PLACE`] = 1), is that input's bytes unchanged:
/// the runtime runs nothing for them.
pub const fn is_alias_op(code: u8) -> bool {
    matches!(code, RESHAPE | SQUEEZE | EXPAND_DIMS)
}

/// `true` when the runtime has a kernel for the builtin `code`.
pub const fn op_supported(code: i32) -> bool {
    runtime_params(code).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_ascending() {
        for w in OPERATORS.windows(2) {
            assert!(w[0].code < w[1].code, "{} before {}", w[0].name, w[1].name);
        }
        for w in CUSTOM_OPERATORS.windows(2) {
            assert!(w[0].code < w[1].code, "{} before {}", w[0].name, w[1].name);
        }
        let last_builtin = OPERATORS.last().map_or(0, |o| o.code);
        assert!(last_builtin < FIRST_CUSTOM_CODE);
        assert!(CUSTOM_OPERATORS.iter().all(|o| o.code >= FIRST_CUSTOM_CODE));
        assert_eq!(custom_code("SignalWindow"), Some(SIGNAL_WINDOW));
        assert_eq!(op_name(i32::from(SIGNAL_ENERGY)), "SignalEnergy");
    }

    #[test]
    fn lookups_follow_the_table() {
        assert_eq!(op_name(i32::from(CONV_2D)), "CONV_2D");
        assert_eq!(op_name(10), "builtin op"); // HASHTABLE_LOOKUP: no TFLM kernel, not in the table
        assert_eq!(op_name(-1), "builtin op");
        assert!(op_supported(i32::from(SVDF)));
        assert!(op_supported(i32::from(LESS)));
        assert!(!op_supported(i32::from(POW)));
        assert!(!op_supported(300));
    }
}
