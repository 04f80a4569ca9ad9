//! Which kernels an interpreter may run: [`Resolver`], TFLM's
//! `MicroMutableOpResolver` made a compile-time value.
//!
//! [`Resolver::ALL`] holds every kernel of the registry ([`super::FAMILIES`],
//! the one list of kernel entries); [`crate::resolver!`] builds a resolver
//! holding only the entries for a list of opcodes, evaluated at compile time,
//! so the static it initialises points at those kernels' functions alone and
//! the linker drops the rest. The same holds for the two execution modes that
//! bring their own runners: row bands (`banded`) and windowed ops in place by
//! rows (`rows_in_place`) are linked only when the resolver names them. The
//! firmware's `build.rs` writes the list and the modes from the image it
//! lowers. An interpreter refuses, at construction, an image with an op whose
//! kernel or mode its resolver lacks ([`Error::KernelNotLinked`]).

use microarena_image as rl;

use super::{FAMILIES, Kernel, Prep, one_channel};
use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};
use crate::{banded, rows_in_place};

/// Runs a banded stage ([`banded::run_stage`]).
type RunStageFn =
    fn(&Resolver, &Image<'_>, &mut [u8], &mut [u8], usize, &[&[u8]]) -> Result<(), Error>;
/// Runs one windowed op in place by rows ([`rows_in_place::run`]).
type RunRowsFn = fn(&Resolver, &Image<'_>, &mut [u8], &mut [u8], usize, &[u8]) -> Result<(), Error>;

/// Row-band execution: the stage check at construction and the runner.
#[derive(Clone, Copy)]
pub(crate) struct BandedMode {
    pub check: fn(&Image<'_>) -> Result<(), Error>,
    pub run: RunStageFn,
}

/// In-place execution by rows: the op's check in Prepare and the runner.
#[derive(Clone, Copy)]
pub(crate) struct RowsMode {
    pub check: fn(&Prep<'_, '_>, &TensorInfo) -> Result<(), Error>,
    pub run: RunRowsFn,
}

// Without reducers the stage code has no reducer branch at all (and
// refuses a stage ending in one: `banded::StagePlan::fill`).
const BANDED: BandedMode = BandedMode {
    check: banded::check_stages::<false>,
    run: banded::run_stage::<false>,
};
const BANDED_REDUCERS: BandedMode = BandedMode {
    check: banded::check_stages::<true>,
    run: banded::run_stage::<true>,
};
const ROWS: RowsMode = RowsMode {
    check: rows_in_place::check,
    run: rows_in_place::run,
};

/// What [`Error::KernelNotLinked`] names for a missing mode.
pub(crate) const BANDED_VARIANT: &str = "row-band execution";
/// See [`BANDED_VARIANT`].
pub(crate) const ROWS_VARIANT: &str = "in-place execution by rows";
/// See [`BANDED_VARIANT`].
pub(crate) const REDUCE_VARIANT: &str = "a banded stage's reduction";

/// Index value of an opcode without a kernel.
const NONE: u8 = u8::MAX;

/// A set of kernels, looked up by opcode in one load.
#[derive(Clone, Copy)]
pub struct Resolver {
    entries: &'static [Kernel],
    /// Entry index of every opcode, [`NONE`] for one not held.
    index: &'static [u8; 256],
    /// Row bands, when linked.
    pub(crate) banded: Option<BandedMode>,
    /// In place by rows, when linked.
    pub(crate) rows_in_place: Option<RowsMode>,
    /// The runner of IF, WHILE and CALL_ONCE (tensor copies into and out of
    /// the called subgraphs): linked only when an entry is one of them.
    pub(crate) control: Option<ControlFn>,
}

/// Runs a control-flow op ([`crate::interpreter::control`]).
pub(crate) type ControlFn =
    fn(&mut crate::interpreter::Run<'_, '_>, usize, &OpInfo, usize) -> Result<(), Error>;

impl core::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Resolver")
            .field("kernels", &self.entries.len())
            .field("banded", &self.banded.is_some())
            .field("rows_in_place", &self.rows_in_place.is_some())
            .field("control", &self.control.is_some())
            .finish()
    }
}

/// Kernels in the whole registry.
// Evaluated only at compile time: an index out of range is a build error.
#[allow(clippy::indexing_slicing)]
const ALL_LEN: usize = {
    let mut n = 0;
    let mut f = 0;
    while f < FAMILIES.len() {
        n += FAMILIES[f].len();
        f += 1;
    }
    n
};

/// The whole registry, family by family.
#[allow(clippy::indexing_slicing)]
const ALL_ENTRIES: [Kernel; ALL_LEN] = {
    let mut out = [PLACEHOLDER; ALL_LEN];
    let mut n = 0;
    let mut f = 0;
    while f < FAMILIES.len() {
        let mut i = 0;
        while i < FAMILIES[f].len() {
            out[n] = FAMILIES[f][i];
            n += 1;
            i += 1;
        }
        f += 1;
    }
    out
};
const ALL_INDEX: [u8; 256] = Resolver::index_of(&ALL_ENTRIES);

fn placeholder_prepare(
    p: &super::Prep<'_, '_>,
    _: &crate::image::TensorInfo,
    _: &mut super::OpDataWriter<'_>,
    _: &mut crate::arena::ArenaAllocator,
) -> Result<(), Error> {
    Err(p.err("placeholder kernel (runtime bug)"))
}

fn placeholder_eval(c: &mut super::Ctx<'_, '_>) -> Result<(), Error> {
    Err(Error::KernelNotLinked {
        op_index: c.index,
        opcode: c.op.opcode,
        variant: "",
    })
}

/// Fills an array before its entries are set; never left in a resolver.
const PLACEHOLDER: Kernel = Kernel {
    opcode: NONE,
    prepare: placeholder_prepare,
    eval: placeholder_eval,
    channels: one_channel,
    state_inputs: &[],
    multi_output: false,
    variants: [None; super::MAX_VARIANTS],
};

impl Resolver {
    /// Every kernel of the runtime: what [`crate::Interpreter::new`] uses.
    /// Naming it links them all.
    pub const ALL: Resolver = Resolver {
        entries: &ALL_ENTRIES,
        index: &ALL_INDEX,
        banded: Some(BANDED_REDUCERS),
        rows_in_place: Some(ROWS),
        control: Some(crate::interpreter::control),
    };

    /// The registry's entries for `codes`, in that order, each with only the
    /// type branches `types` names as (opcode, output element type) pairs
    /// (`None`: every branch). Evaluated at compile time by
    /// [`crate::resolver!`]: an opcode without a kernel, or named twice, fails
    /// the build.
    #[doc(hidden)]
    // Evaluated only at compile time: an index out of range is a build error.
    #[allow(clippy::indexing_slicing, clippy::panic)]
    pub const fn select<const N: usize>(codes: &[u8], types: Option<&[(u8, i8)]>) -> [Kernel; N] {
        assert!(codes.len() == N, "resolver: length differs from its codes");
        let mut out = [PLACEHOLDER; N];
        let mut k = 0;
        while k < N {
            let code = codes[k];
            let at = ALL_INDEX[code as usize];
            if at == NONE {
                panic!("resolver: an opcode has no kernel in this runtime");
            }
            out[k] = ALL_ENTRIES[at as usize];
            if let Some(types) = types {
                let mut v = 0;
                while v < out[k].variants.len() {
                    if let Some(variant) = &mut out[k].variants[v] {
                        let mut named = false;
                        let mut t = 0;
                        while t < types.len() {
                            named |= types[t].0 == code && types[t].1 == variant.dtype;
                            t += 1;
                        }
                        if !named {
                            variant.eval = None;
                        }
                    }
                    v += 1;
                }
            }
            k += 1;
        }
        out
    }

    /// The opcode → entry index of `entries`.
    #[doc(hidden)]
    // Evaluated only at compile time: an index out of range is a build error.
    #[allow(clippy::indexing_slicing)]
    pub const fn index_of(entries: &[Kernel]) -> [u8; 256] {
        assert!(entries.len() < NONE as usize, "resolver: too many kernels");
        let mut index = [NONE; 256];
        let mut i = 0;
        while i < entries.len() {
            let code = entries[i].opcode as usize;
            assert!(code != NONE as usize, "resolver: a placeholder entry");
            assert!(index[code] == NONE, "resolver: an opcode is named twice");
            index[code] = i as u8;
            i += 1;
        }
        index
    }

    /// A resolver from [`Resolver::select`]'s entries and their index: what
    /// [`crate::resolver!`] expands to.
    #[doc(hidden)]
    // Compile-time only (an index out of range fails the build).
    #[allow(clippy::indexing_slicing)]
    pub const fn from_parts(entries: &'static [Kernel], index: &'static [u8; 256]) -> Self {
        let mut calls = false;
        let mut i = 0;
        while i < entries.len() {
            calls |= rl::opcode::called_subgraphs(entries[i].opcode) > 0;
            i += 1;
        }
        Resolver {
            entries,
            index,
            banded: None,
            rows_in_place: None,
            control: if calls {
                Some(crate::interpreter::control)
            } else {
                None
            },
        }
    }

    /// This resolver with row-band execution linked (`resolver!(…, banded)`).
    #[doc(hidden)]
    pub const fn banded(self) -> Self {
        Resolver {
            banded: Some(BANDED),
            ..self
        }
    }

    /// This resolver with row-band execution and its reducers linked
    /// (`resolver!(…, banded, reducers)`): MEAN, SUM or a global average
    /// pool ending a stage, summing its input's rows as they come.
    #[doc(hidden)]
    pub const fn reducers(self) -> Self {
        Resolver {
            banded: Some(BANDED_REDUCERS),
            ..self
        }
    }

    /// This resolver with in-place execution by rows linked
    /// (`resolver!(…, rows_in_place)`).
    #[doc(hidden)]
    pub const fn rows_in_place(self) -> Self {
        Resolver {
            rows_in_place: Some(ROWS),
            ..self
        }
    }

    /// `true` when the control-flow runner (IF, WHILE, CALL_ONCE) is linked:
    /// exactly when one of those kernels is.
    pub fn has_control_flow(&self) -> bool {
        self.control.is_some()
    }

    /// `true` when row-band execution is linked.
    pub fn has_banded(&self) -> bool {
        self.banded.is_some()
    }

    /// `true` when in-place execution by rows is linked.
    pub fn has_rows_in_place(&self) -> bool {
        self.rows_in_place.is_some()
    }

    /// The kernel for `code`, if this resolver holds one.
    pub(crate) fn get(&self, code: u8) -> Option<&'static Kernel> {
        let at = *self.index.get(usize::from(code))?;
        self.entries.get(usize::from(at))
    }

    /// `true` when this resolver holds a kernel for `code`.
    pub fn has(&self, code: u8) -> bool {
        self.get(code).is_some()
    }

    /// The opcodes this resolver holds kernels for, in its order.
    pub fn opcodes(&self) -> impl Iterator<Item = u8> + 'static {
        self.entries.iter().map(|k| k.opcode)
    }

    /// The kernel of op `index`, or the reason there is none: a code the
    /// runtime has no kernel for at all ([`Error::UnsupportedOp`]), or one
    /// this resolver leaves out ([`Error::KernelNotLinked`]).
    pub(crate) fn kernel_of(&self, index: u16, op: &OpInfo) -> Result<&'static Kernel, Error> {
        match self.get(op.opcode) {
            Some(k) => Ok(k),
            None if Resolver::ALL.has(op.opcode) => Err(Error::KernelNotLinked {
                op_index: index,
                opcode: op.opcode,
                variant: "",
            }),
            None => Err(Error::UnsupportedOp {
                op_index: index,
                opcode: op.opcode,
            }),
        }
    }

    /// Checks that every op of `image` has its kernel, and the execution
    /// mode it runs in, here (the first op that lacks one is the error),
    /// before anything runs.
    pub fn check(&self, image: &Image<'_>) -> Result<(), Error> {
        for i in 0..image.op_count() {
            let op = image.op(i)?;
            let kernel = self.kernel_of(i as u16, &op)?;
            let dtype = image.tensor(usize::from(op.output))?.dtype;
            let missing = if let Some(v) = kernel.variant_for(dtype)
                && v.eval.is_none()
            {
                v.name
            } else if op.exec != rl::EXEC_WHOLE && self.banded.is_none() {
                BANDED_VARIANT
            } else if op.in_place == Some(0)
                && rl::opcode::in_place_by_rows(op.opcode)
                && self.rows_in_place.is_none()
            {
                ROWS_VARIANT
            } else {
                continue;
            };
            return Err(Error::KernelNotLinked {
                op_index: i as u16,
                opcode: op.opcode,
                variant: missing,
            });
        }
        Ok(())
    }
}

/// A [`Resolver`] holding only the kernels for a constant list of opcodes
/// (`&[u8]`, e.g. the `microarena_image::opcode` constants), built at compile
/// time so only those kernels are linked:
///
/// ```
/// use microarena_runtime::{Resolver, resolver, runtime_layout::opcode};
/// static KERNELS: Resolver = resolver!(&[opcode::CONV_2D, opcode::SOFTMAX]);
/// assert!(KERNELS.has(opcode::SOFTMAX) && !KERNELS.has(opcode::ADD));
/// ```
///
/// An opcode the runtime has no kernel for, or one named twice, fails the
/// build. Such a resolver runs every op whole (element-wise ops in place and
/// aliases included); `banded` and `rows_in_place` after the list link those
/// execution modes too: `resolver!(CODES, banded, rows_in_place)`. A kernel's
/// type branches (e.g. SOFTMAX's float32 one, the 16x8 convolutions) are all
/// linked, unless `; types: PAIRS` lists the (opcode, output element type)
/// pairs to keep, as the firmware's build.rs does from its image.
#[macro_export]
macro_rules! resolver {
    (@ $codes:expr, $types:expr $(, $mode:ident)*) => {{
        const CODES: &[u8] = $codes;
        const TYPES: ::core::option::Option<&[(u8, i8)]> = $types;
        const ENTRIES: [$crate::Kernel; CODES.len()] = $crate::Resolver::select(CODES, TYPES);
        const INDEX: [u8; 256] = $crate::Resolver::index_of(&ENTRIES);
        $crate::Resolver::from_parts(&ENTRIES, &INDEX)$(.$mode())*
    }};
    ($codes:expr $(, $mode:ident)* ; types: $types:expr) => {
        $crate::resolver!(@ $codes, ::core::option::Option::Some($types) $(, $mode)*)
    };
    ($codes:expr $(, $mode:ident)* $(,)?) => {
        $crate::resolver!(@ $codes, ::core::option::Option::None $(, $mode)*)
    };
}
