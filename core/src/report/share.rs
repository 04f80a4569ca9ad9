//! Share links: a [`Report`] packed into a URL fragment (`#r=…`), so a layout
//! can be shown to someone else **without the model** — weights never leave
//! the machine that analysed them.
//!
//! Format: `base64url( VERSION ‖ raw-deflate( payload ) )`, no
//! padding. The payload is a compact binary encoding of every field of the
//! report (LEB128 varints, zig-zag for signed values, length-prefixed UTF-8
//! strings, `last` stored relative to `first`, `aligned_bytes` relative to
//! `bytes`); deflate then folds the many repeated strings (dtypes, opcodes,
//! name prefixes). [`to_bytes`]/[`from_bytes`] expose the uncompressed payload,
//! which the web app also uses to pass reports between its worker and page.
//! Version 2 appends the flash and compute figures (each op's MACs, elements
//! and constant bytes, then `flash` and `compute`); version 1 links, which
//! lack them, still decode, with those figures zero. Version 3 appends the
//! runtime's OpData bytes (0 when older links decode) and banded execution;
//! version 4 the in-place figures (none when older links decode), version 5
//! the windowed ops among them and their rings (0 when older links decode),
//! version 6 each operator's tail allocations by purpose (none when older
//! links decode), version 7 the NPU region (none when older links decode),
//! version 8 which banded stages write their output over their input (none
//! when older links decode).
//!
//! Decoding never panics and never trusts a length: every count is checked
//! against the bytes that remain, inflation is capped at [`MAX_PAYLOAD`], and
//! each failure is a specific [`ShareError`].

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::report::npu::{NpuInfo, NpuOp, NpuTensor};
use crate::report::{
    ArenaInfo, BandedInfo, BandedStageInfo, BufferClass, BufferInfo, ComputeInfo,
    ConstantTensorInfo, DiagnosticInfo, FlashInfo, InPlaceInfo, MinimumPhase, ModelInfo,
    OpAllocation, OperatorInfo, PlanInfo, RamCopyInfo, Region, Report, RuntimeInfo, TailCategory,
    VariableInfo, VariableLifetime, WhatIfInfo,
};

/// Format version, the first byte of every link this build writes.
pub const VERSION: u8 = 8;

/// The oldest version this build still reads (links already handed out).
pub const OLDEST_VERSION: u8 = 1;

/// Fragment key: links look like `https://…/#r=<code>`.
pub const FRAGMENT_KEY: &str = "r=";

/// Largest payload a link may inflate to (guards against deflate bombs).
pub const MAX_PAYLOAD: usize = 64 * 1024 * 1024;

/// Why a share code could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShareError {
    /// The code (or fragment) is empty.
    Empty,
    /// The fragment does not start with `r=`.
    NotAShareLink,
    /// Not base64url.
    Base64,
    /// A version this build does not know.
    UnsupportedVersion(u8),
    /// The deflate stream is corrupt or cut short.
    Inflate,
    /// The payload inflates beyond [`MAX_PAYLOAD`].
    TooLarge,
    /// The payload ends in the middle of a field.
    Truncated,
    /// A field holds an impossible value.
    Invalid(&'static str),
    /// Bytes left over after the report.
    TrailingBytes,
}

impl fmt::Display for ShareError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShareError::Empty => f.write_str("the share link is empty"),
            ShareError::NotAShareLink => {
                f.write_str("the link fragment does not start with r= (or c= for a comparison)")
            }
            ShareError::Base64 => f.write_str("the share link is not valid base64url"),
            ShareError::UnsupportedVersion(v) => write!(
                f,
                "the share link has format version {v}; this build reads versions \
                 {OLDEST_VERSION} to {VERSION}"
            ),
            ShareError::Inflate => f.write_str("the share link is corrupt or cut short"),
            ShareError::TooLarge => f.write_str("the share link expands to too much data"),
            ShareError::Truncated => f.write_str("the share link's report is cut short"),
            ShareError::Invalid(what) => write!(f, "the share link has an invalid {what}"),
            ShareError::TrailingBytes => f.write_str("the share link has trailing data"),
        }
    }
}

impl core::error::Error for ShareError {}

/// The share code of `report` (what follows `#r=`).
pub fn encode(report: &Report) -> String {
    let payload = to_bytes(report);
    let mut packed = Vec::with_capacity(payload.len() / 4 + 8);
    packed.push(VERSION);
    packed.extend_from_slice(&miniz_oxide::deflate::compress_to_vec(&payload, 10));
    URL_SAFE_NO_PAD.encode(packed)
}

/// Reads a share code produced by [`encode`].
pub fn decode(code: &str) -> Result<Report, ShareError> {
    let code = code.trim();
    if code.is_empty() {
        return Err(ShareError::Empty);
    }
    let packed = URL_SAFE_NO_PAD
        .decode(code)
        .map_err(|_| ShareError::Base64)?;
    let (&version, deflated) = packed.split_first().ok_or(ShareError::Empty)?;
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(ShareError::UnsupportedVersion(version));
    }
    let payload = miniz_oxide::inflate::decompress_to_vec_with_limit(deflated, MAX_PAYLOAD)
        .map_err(|e| match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => ShareError::TooLarge,
            _ => ShareError::Inflate,
        })?;
    read_payload(&payload, version)
}

/// The fragment for `report`, without the leading `#`: `r=<code>`.
pub fn fragment(report: &Report) -> String {
    let mut s = String::from(FRAGMENT_KEY);
    s.push_str(&encode(report));
    s
}

/// Reads a URL fragment (with or without the leading `#`) made by [`fragment`].
pub fn decode_fragment(fragment: &str) -> Result<Report, ShareError> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    if f.is_empty() {
        return Err(ShareError::Empty);
    }
    let code = f
        .strip_prefix(FRAGMENT_KEY)
        .ok_or(ShareError::NotAShareLink)?;
    decode(code)
}

/// The fragment key of a comparison link: `c=<old code>.<new code>`.
pub const COMPARE_KEY: &str = "c=";

/// The fragment for two layouts side by side, without the leading `#`:
/// `c=<code of old>.<code of new>` (`.` is not a base64url character).
pub fn compare_fragment(old: &Report, new: &Report) -> String {
    let mut s = String::from(COMPARE_KEY);
    s.push_str(&encode(old));
    s.push('.');
    s.push_str(&encode(new));
    s
}

/// Reads a fragment made by [`compare_fragment`]: the old and new reports.
pub fn decode_compare_fragment(fragment: &str) -> Result<(Report, Report), ShareError> {
    let f = fragment.strip_prefix('#').unwrap_or(fragment);
    if f.is_empty() {
        return Err(ShareError::Empty);
    }
    let codes = f
        .strip_prefix(COMPARE_KEY)
        .ok_or(ShareError::NotAShareLink)?;
    let (old, new) = codes.split_once('.').ok_or(ShareError::Empty)?;
    Ok((decode(old)?, decode(new)?))
}

// ---------------------------------------------------------------- payload

/// The uncompressed binary payload of `report` (no version byte).
pub fn to_bytes(report: &Report) -> Vec<u8> {
    let mut w = Writer(Vec::with_capacity(64 + report.buffers.len() * 48));
    w.u(u64::from(report.schema_version));
    let m = &report.model;
    w.s(&m.file);
    w.size(m.subgraphs);
    w.size(m.operators);
    w.size(m.tensors);
    w.s(&report.target);
    w.s(&report.planner);
    let a = &report.arena;
    w.u(a.head_bytes);
    w.u(a.tail_bytes);
    w.u(a.total_bytes);
    w.u(a.minimum_bytes);
    w.s(a.minimum_phase.as_str());
    w.u(a.lower_bound_bytes);
    w.u(a.padding_bytes);
    w.i(i64::from(a.peak_scope));
    w.opt(a.peak_op);
    match &a.peak_opcode {
        None => w.u(0),
        Some(s) => {
            w.u(1);
            w.s(s);
        }
    }
    w.i(i64::from(a.max_scope));

    w.size(report.buffers.len());
    for b in &report.buffers {
        // Tag 2 (a kind spelled out) was reserved for kinds added later.
        w.u(match b.kind {
            BufferClass::Tensor => 0,
            BufferClass::Scratch => 1,
        });
        w.size(b.subgraph);
        w.opt(b.tensor);
        w.opt(b.op);
        w.s(&b.name);
        w.u(b.bytes);
        // Usually the alignment padding (< 16); exact whatever it is.
        w.i((b.aligned_bytes as i64).wrapping_sub(b.bytes as i64));
        w.i(b.offset);
        w.i(i64::from(b.first));
        w.i(i64::from(b.last) - i64::from(b.first));
        w.ints(&b.shape);
        w.s(&b.dtype);
        w.u(u64::from(b.offline));
    }

    w.size(report.operators.len());
    for o in &report.operators {
        w.size(o.subgraph);
        w.size(o.index);
        w.s(&o.opcode);
        w.i(i64::from(o.scope));
        w.u(o.live_bytes);
        w.u(o.scratch_bytes);
        w.u(o.persistent_bytes);
        w.ints(&o.inputs);
        w.ints(&o.outputs);
    }

    w.size(report.tail.len());
    for t in &report.tail {
        w.s(&t.category);
        w.u(t.bytes);
        w.u(t.requested_bytes);
        w.u(t.count);
    }

    w.size(report.diagnostics.len());
    for d in &report.diagnostics {
        w.s(&d.severity);
        w.s(&d.message);
    }

    // Planner comparison, runtime figures, variables, what-if.
    w.u(report.lower_bound_bytes);
    w.u(u64::from(report.optimal));
    w.size(report.plans.len());
    for p in &report.plans {
        w.s(&p.planner);
        w.u(p.head_bytes);
        w.u(u64::from(p.proven_optimal));
    }
    match &report.runtime {
        None => w.u(0),
        Some(rt) => {
            w.u(1);
            w.u(rt.head_bytes);
            w.u(rt.tail_bytes);
            w.u(rt.total_bytes);
            w.u(rt.variable_bytes);
        }
    }
    w.opt_s(report.runtime_refusal.as_deref());
    w.size(report.variables.len());
    for v in &report.variables {
        w.size(v.subgraph);
        w.size(v.tensor);
        w.s(&v.name);
        w.u(v.bytes);
        w.ints(&v.shape);
        w.s(&v.dtype);
        w.opt(v.op);
        w.opt_s(v.opcode.as_deref());
        w.s(v.region.as_str());
        match v.offset {
            None => w.u(0),
            Some(o) => {
                w.u(1);
                w.i(o);
            }
        }
        w.s(v.lifetime.as_str());
    }
    match &report.what_if {
        None => w.u(0),
        Some(wi) => {
            w.u(1);
            w.size(wi.input_shapes.len());
            for s in &wi.input_shapes {
                w.s(s);
            }
            w.u(wi.original_head_bytes);
            w.u(wi.original_tail_bytes);
            w.u(wi.original_total_bytes);
            w.u(wi.original_minimum_bytes);
            match wi.original_runtime_total_bytes {
                None => w.u(0),
                Some(b) => {
                    w.u(1);
                    w.u(b);
                }
            }
        }
    }

    // Version 2: flash and compute.
    for o in &report.operators {
        w.u(o.macs);
        w.u(o.elements);
        w.u(o.constant_bytes);
    }
    w.u(report.compute.macs);
    w.u(report.compute.elements);
    let f = &report.flash;
    w.u(f.file_bytes);
    w.u(f.constant_bytes);
    w.u(f.overhead_bytes);
    w.u(f.constant_buffers);
    w.u(f.constant_tensors);
    w.u(f.external_bytes);
    w.u(f.unattributed_bytes);
    w.size(f.largest.len());
    for c in &f.largest {
        w.size(c.subgraph);
        w.size(c.tensor);
        w.s(&c.name);
        w.u(u64::from(c.buffer));
        w.u(c.bytes);
        w.ints(&c.shape);
        w.s(&c.dtype);
        w.u(c.tensors);
        w.opt(c.op);
        w.opt_s(c.opcode.as_deref());
    }
    w.size(f.ram_copies.len());
    for c in &f.ram_copies {
        w.size(c.subgraph);
        w.size(c.op);
        w.s(&c.opcode);
        w.u(c.bytes);
        w.s(&c.condition);
    }

    // Version 3: the runtime's OpData and banded execution.
    if let Some(rt) = &report.runtime {
        w.u(rt.opdata_bytes);
        match &rt.banded {
            None => w.u(0),
            Some(b) => {
                w.u(1);
                w.size(b.stages.len());
                for s in &b.stages {
                    w.size(s.first_op);
                    w.size(s.last_op);
                    w.u(s.bands);
                    w.u(s.ring_bytes);
                    w.u(s.input_rows);
                    w.u(s.field_first);
                    w.u(s.field_end);
                }
                w.u(b.extra_macs);
                w.u(b.head_bytes);
                w.u(b.total_bytes);
            }
        }
    }
    // Version 4: in-place execution.
    if let Some(rt) = &report.runtime {
        match &rt.in_place {
            None => w.u(0),
            Some(ip) => {
                w.u(1);
                w.u(ip.overwrites);
                w.u(ip.aliases);
                w.u(ip.head_bytes);
                w.u(ip.total_bytes);
                match ip.banded_total_bytes {
                    None => w.u(0),
                    Some(t) => {
                        w.u(1);
                        w.u(t);
                    }
                }
                // Version 5: the windowed ops among the overwrites.
                w.u(ip.windowed);
                w.u(ip.ring_bytes);
            }
        }
    }
    // Version 6: each operator's tail allocations.
    for o in &report.operators {
        w.size(o.allocations.len());
        for a in &o.allocations {
            w.s(&a.purpose);
            w.u(a.requested_bytes);
            w.u(a.bytes);
        }
    }
    // Version 7: the NPU region.
    match &report.npu {
        None => w.u(0),
        Some(n) => {
            w.u(1);
            w.s(&n.co_processor);
            w.u(u64::from(n.registered));
            w.u(n.arena_bytes);
            w.u(n.flash_bytes);
            w.u(u64::from(n.fast_scratch_shared));
            w.size(n.ops.len());
            for o in &n.ops {
                w.size(o.subgraph);
                w.size(o.op_index);
                for t in [&o.command_stream, &o.weights, &o.scratch, &o.fast_scratch] {
                    match t {
                        None => w.u(0),
                        Some(t) => {
                            w.u(1);
                            w.size(t.tensor);
                            w.s(&t.name);
                            w.u(t.bytes);
                            match t.offset {
                                None => w.u(0),
                                Some(at) => {
                                    w.u(1);
                                    w.i(at);
                                }
                            }
                        }
                    }
                }
                w.size(o.inside_scratch.len());
                for &t in &o.inside_scratch {
                    w.size(t);
                }
            }
        }
    }
    // Version 8: the banded stages over their inputs.
    if let Some(b) = report.runtime.as_ref().and_then(|rt| rt.banded.as_ref()) {
        for s in &b.stages {
            w.u(u64::from(s.over_input));
        }
    }
    w.0
}

/// Reads a payload produced by [`to_bytes`].
pub fn from_bytes(bytes: &[u8]) -> Result<Report, ShareError> {
    read_payload(bytes, VERSION)
}

/// Reads a payload of format `version` (1: without flash and compute).
fn read_payload(bytes: &[u8], version: u8) -> Result<Report, ShareError> {
    let mut r = Reader {
        data: bytes,
        pos: 0,
    };
    let schema_version = r.u32()?;
    let model = ModelInfo {
        file: r.s()?,
        subgraphs: r.size()?,
        operators: r.size()?,
        tensors: r.size()?,
    };
    let target = r.s()?;
    let planner = r.s()?;
    let arena = ArenaInfo {
        head_bytes: r.u()?,
        tail_bytes: r.u()?,
        total_bytes: r.u()?,
        minimum_bytes: r.u()?,
        minimum_phase: MinimumPhase::from_name(&r.s()?)
            .ok_or(ShareError::Invalid("minimum phase"))?,
        lower_bound_bytes: r.u()?,
        padding_bytes: r.u()?,
        peak_scope: r.i32()?,
        peak_op: r.opt()?,
        peak_opcode: match r.u()? {
            0 => None,
            1 => Some(r.s()?),
            _ => return Err(ShareError::Invalid("peak opcode tag")),
        },
        max_scope: r.i32()?,
    };

    let n = r.count()?;
    let mut buffers = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = match r.u()? {
            0 => BufferClass::Tensor,
            1 => BufferClass::Scratch,
            2 => BufferClass::from_name(&r.s()?).ok_or(ShareError::Invalid("buffer kind"))?,
            _ => return Err(ShareError::Invalid("buffer kind")),
        };
        let subgraph = r.size()?;
        let tensor = r.opt()?;
        let op = r.opt()?;
        let name = r.s()?;
        let bytes = r.u()?;
        let aligned_bytes = (bytes as i64).wrapping_add(r.i()?) as u64;
        let offset = r.i()?;
        let first = r.i32()?;
        let last = i64::from(first)
            .checked_add(r.i()?)
            .and_then(|v| i32::try_from(v).ok())
            .ok_or(ShareError::Invalid("buffer lifetime"))?;
        let shape = r.ints()?;
        let dtype = r.s()?;
        let offline = match r.u()? {
            0 => false,
            1 => true,
            _ => return Err(ShareError::Invalid("offline flag")),
        };
        buffers.push(BufferInfo {
            kind,
            subgraph,
            tensor,
            op,
            name,
            bytes,
            aligned_bytes,
            offset,
            first,
            last,
            shape,
            dtype,
            offline,
        });
    }

    let n = r.count()?;
    let mut operators = Vec::with_capacity(n);
    for _ in 0..n {
        operators.push(OperatorInfo {
            subgraph: r.size()?,
            index: r.size()?,
            opcode: r.s()?,
            scope: r.i32()?,
            live_bytes: r.u()?,
            scratch_bytes: r.u()?,
            persistent_bytes: r.u()?,
            inputs: r.ints()?,
            outputs: r.ints()?,
            macs: 0,
            elements: 0,
            constant_bytes: 0,
            allocations: Vec::new(),
        });
    }

    let n = r.count()?;
    let mut tail = Vec::with_capacity(n);
    for _ in 0..n {
        tail.push(TailCategory {
            category: r.s()?,
            bytes: r.u()?,
            requested_bytes: r.u()?,
            count: r.u()?,
        });
    }

    let n = r.count()?;
    let mut diagnostics = Vec::with_capacity(n);
    for _ in 0..n {
        diagnostics.push(DiagnosticInfo {
            severity: r.s()?,
            message: r.s()?,
        });
    }

    let lower_bound_bytes = r.u()?;
    let optimal = r.flag()?;
    let n = r.count()?;
    let mut plans = Vec::with_capacity(n);
    for _ in 0..n {
        plans.push(PlanInfo {
            planner: r.s()?,
            head_bytes: r.u()?,
            proven_optimal: r.flag()?,
        });
    }
    let mut runtime = if r.flag()? {
        Some(RuntimeInfo {
            head_bytes: r.u()?,
            tail_bytes: r.u()?,
            total_bytes: r.u()?,
            variable_bytes: r.u()?,
            opdata_bytes: 0,
            banded: None,
            in_place: None,
        })
    } else {
        None
    };
    let runtime_refusal = r.opt_s()?;
    let n = r.count()?;
    let mut variables = Vec::with_capacity(n);
    for _ in 0..n {
        variables.push(VariableInfo {
            subgraph: r.size()?,
            tensor: r.size()?,
            name: r.s()?,
            bytes: r.u()?,
            shape: r.ints()?,
            dtype: r.s()?,
            op: r.opt()?,
            opcode: r.opt_s()?,
            region: Region::from_name(&r.s()?).ok_or(ShareError::Invalid("variable region"))?,
            offset: if r.flag()? { Some(r.i()?) } else { None },
            lifetime: VariableLifetime::from_name(&r.s()?)
                .ok_or(ShareError::Invalid("variable lifetime"))?,
        });
    }
    let what_if = if r.flag()? {
        let n = r.count()?;
        let mut input_shapes = Vec::with_capacity(n);
        for _ in 0..n {
            input_shapes.push(r.s()?);
        }
        Some(WhatIfInfo {
            input_shapes,
            original_head_bytes: r.u()?,
            original_tail_bytes: r.u()?,
            original_total_bytes: r.u()?,
            original_minimum_bytes: r.u()?,
            original_runtime_total_bytes: if r.flag()? { Some(r.u()?) } else { None },
        })
    } else {
        None
    };

    let mut flash = FlashInfo::default();
    let mut compute = ComputeInfo::default();
    if version >= 2 {
        for o in &mut operators {
            o.macs = r.u()?;
            o.elements = r.u()?;
            o.constant_bytes = r.u()?;
        }
        compute.macs = r.u()?;
        compute.elements = r.u()?;
        flash.file_bytes = r.u()?;
        flash.constant_bytes = r.u()?;
        flash.overhead_bytes = r.u()?;
        flash.constant_buffers = r.u()?;
        flash.constant_tensors = r.u()?;
        flash.external_bytes = r.u()?;
        flash.unattributed_bytes = r.u()?;
        let n = r.count()?;
        for _ in 0..n {
            flash.largest.push(ConstantTensorInfo {
                subgraph: r.size()?,
                tensor: r.size()?,
                name: r.s()?,
                buffer: u32::try_from(r.u()?).map_err(|_| ShareError::Invalid("buffer index"))?,
                bytes: r.u()?,
                shape: r.ints()?,
                dtype: r.s()?,
                tensors: r.u()?,
                op: r.opt()?,
                opcode: r.opt_s()?,
            });
        }
        let n = r.count()?;
        for _ in 0..n {
            flash.ram_copies.push(RamCopyInfo {
                subgraph: r.size()?,
                op: r.size()?,
                opcode: r.s()?,
                bytes: r.u()?,
                condition: r.s()?,
            });
        }
    }

    if version >= 3
        && let Some(rt) = &mut runtime
    {
        rt.opdata_bytes = r.u()?;
        if r.flag()? {
            let n = r.count()?;
            let mut stages = Vec::with_capacity(n);
            for _ in 0..n {
                stages.push(BandedStageInfo {
                    first_op: r.size()?,
                    last_op: r.size()?,
                    bands: r.u()?,
                    ring_bytes: r.u()?,
                    input_rows: r.u()?,
                    field_first: r.u()?,
                    field_end: r.u()?,
                    over_input: false,
                });
            }
            rt.banded = Some(BandedInfo {
                stages,
                extra_macs: r.u()?,
                head_bytes: r.u()?,
                total_bytes: r.u()?,
            });
        }
    }

    if version >= 4
        && let Some(rt) = &mut runtime
        && r.flag()?
    {
        let mut ip = InPlaceInfo {
            overwrites: r.u()?,
            windowed: 0,
            ring_bytes: 0,
            aliases: r.u()?,
            head_bytes: r.u()?,
            total_bytes: r.u()?,
            banded_total_bytes: if r.flag()? { Some(r.u()?) } else { None },
        };
        if version >= 5 {
            ip.windowed = r.u()?;
            ip.ring_bytes = r.u()?;
        }
        rt.in_place = Some(ip);
    }

    if version >= 6 {
        for o in &mut operators {
            let n = r.count()?;
            let mut list = Vec::with_capacity(n);
            for _ in 0..n {
                list.push(OpAllocation {
                    purpose: r.s()?,
                    requested_bytes: r.u()?,
                    bytes: r.u()?,
                });
            }
            o.allocations = list;
        }
    }
    let npu = if version >= 7 && r.flag()? {
        Some(read_npu(&mut r)?)
    } else {
        None
    };
    if version >= 8
        && let Some(b) = runtime.as_mut().and_then(|rt| rt.banded.as_mut())
    {
        for s in &mut b.stages {
            s.over_input = r.flag()?;
        }
    }

    if r.pos != bytes.len() {
        return Err(ShareError::TrailingBytes);
    }
    // Not in the payload: the target's name determines it.
    let profile = crate::tflm::profile::by_name(&target);
    let target_measured_against = profile.and_then(|p| p.measured_against).map(Into::into);
    let target_derived = profile.is_some_and(|p| p.measured_against.is_none());
    Ok(Report {
        schema_version,
        model,
        target,
        planner,
        arena,
        buffers,
        operators,
        tail,
        diagnostics,
        lower_bound_bytes,
        optimal,
        plans,
        runtime,
        runtime_refusal,
        variables,
        what_if,
        target_measured_against,
        target_derived,
        flash,
        compute,
        npu,
    })
}

fn read_npu(r: &mut Reader<'_>) -> Result<NpuInfo, ShareError> {
    let co_processor = r.s()?;
    let registered = r.flag()?;
    let arena_bytes = r.u()?;
    let flash_bytes = r.u()?;
    let fast_scratch_shared = r.flag()?;
    let n = r.count()?;
    let mut ops = Vec::with_capacity(n);
    for _ in 0..n {
        let subgraph = r.size()?;
        let op_index = r.size()?;
        let mut tensor = || -> Result<Option<NpuTensor>, ShareError> {
            if !r.flag()? {
                return Ok(None);
            }
            Ok(Some(NpuTensor {
                tensor: r.size()?,
                name: r.s()?,
                bytes: r.u()?,
                offset: if r.flag()? { Some(r.i()?) } else { None },
            }))
        };
        let (command_stream, weights, scratch, fast_scratch) =
            (tensor()?, tensor()?, tensor()?, tensor()?);
        let k = r.count()?;
        let mut inside_scratch = Vec::with_capacity(k);
        for _ in 0..k {
            inside_scratch.push(r.size()?);
        }
        ops.push(NpuOp {
            subgraph,
            op_index,
            command_stream,
            weights,
            scratch,
            fast_scratch,
            inside_scratch,
        });
    }
    Ok(NpuInfo {
        co_processor,
        registered,
        arena_bytes,
        flash_bytes,
        fast_scratch_shared,
        ops,
    })
}

struct Writer(Vec<u8>);

impl Writer {
    fn u(&mut self, mut v: u64) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(byte);
                return;
            }
            self.0.push(byte | 0x80);
        }
    }

    fn i(&mut self, v: i64) {
        self.u(((v << 1) ^ (v >> 63)) as u64);
    }

    fn size(&mut self, v: usize) {
        self.u(v as u64);
    }

    fn opt(&mut self, v: Option<usize>) {
        self.u(v.map_or(0, |v| (v as u64).saturating_add(1)));
    }

    fn s(&mut self, s: &str) {
        self.size(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }

    fn opt_s(&mut self, s: Option<&str>) {
        match s {
            None => self.u(0),
            Some(s) => {
                self.u(1);
                self.s(s);
            }
        }
    }

    fn ints(&mut self, v: &[i32]) {
        self.size(v.len());
        for &x in v {
            self.i(i64::from(x));
        }
    }
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, ShareError> {
        let b = *self.data.get(self.pos).ok_or(ShareError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn u(&mut self) -> Result<u64, ShareError> {
        let mut v: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(ShareError::Invalid("number"));
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ShareError::Invalid("number"))
    }

    fn i(&mut self) -> Result<i64, ShareError> {
        let z = self.u()?;
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, ShareError> {
        i32::try_from(self.i()?).map_err(|_| ShareError::Invalid("scope"))
    }

    fn u32(&mut self) -> Result<u32, ShareError> {
        u32::try_from(self.u()?).map_err(|_| ShareError::Invalid("schema version"))
    }

    fn size(&mut self) -> Result<usize, ShareError> {
        usize::try_from(self.u()?).map_err(|_| ShareError::Invalid("count"))
    }

    /// A count of items that each take at least one byte: never more than remain.
    fn count(&mut self) -> Result<usize, ShareError> {
        let n = self.size()?;
        if n > self.data.len() - self.pos {
            return Err(ShareError::Truncated);
        }
        Ok(n)
    }

    fn opt(&mut self) -> Result<Option<usize>, ShareError> {
        match self.u()? {
            0 => Ok(None),
            v => usize::try_from(v - 1)
                .map(Some)
                .map_err(|_| ShareError::Invalid("index")),
        }
    }

    fn flag(&mut self) -> Result<bool, ShareError> {
        match self.u()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(ShareError::Invalid("flag")),
        }
    }

    fn opt_s(&mut self) -> Result<Option<String>, ShareError> {
        if self.flag()? {
            Ok(Some(self.s()?))
        } else {
            Ok(None)
        }
    }

    fn s(&mut self) -> Result<String, ShareError> {
        let n = self.count()?;
        let bytes = self
            .data
            .get(self.pos..self.pos + n)
            .ok_or(ShareError::Truncated)?;
        self.pos += n;
        core::str::from_utf8(bytes)
            .map(String::from)
            .map_err(|_| ShareError::Invalid("text"))
    }

    fn ints(&mut self) -> Result<Vec<i32>, ShareError> {
        let n = self.count()?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(i32::try_from(self.i()?).map_err(|_| ShareError::Invalid("tensor index"))?);
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::PlannerKind;
    use crate::tflm::profile::PROFILES;
    use crate::{Config, Model, analyze, build::example};

    fn reports() -> Vec<Report> {
        let mut out = Vec::new();
        for bytes in [example::mobilenet_v1_025_96_int8(), example::synthetic(60)] {
            let model = Model::parse(&bytes).unwrap();
            for profile in PROFILES {
                for &planner in PlannerKind::ALL {
                    let a = analyze(&model, &Config { profile, planner }).unwrap();
                    out.push(Report::new(&model, &a, "m.tflite"));
                }
            }
        }
        out
    }

    fn one() -> Report {
        static ONE: std::sync::OnceLock<Report> = std::sync::OnceLock::new();
        ONE.get_or_init(|| {
            let bytes = example::mobilenet_v1_025_96_int8();
            let model = Model::parse(&bytes).unwrap();
            let config = Config {
                profile: &PROFILES[0],
                planner: PlannerKind::TflmGreedy,
            };
            Report::new(&model, &analyze(&model, &config).unwrap(), "m.tflite")
        })
        .clone()
    }

    #[test]
    fn round_trips_exactly() {
        for r in reports() {
            assert_eq!(from_bytes(&to_bytes(&r)).unwrap(), r);
            assert_eq!(decode(&encode(&r)).unwrap(), r);
            assert_eq!(
                decode_fragment(&alloc::format!("#{}", fragment(&r))).unwrap(),
                r
            );
        }
    }

    #[test]
    fn a_comparison_link_carries_both_layouts() {
        let all = reports();
        let (old, new) = (&all[0], &all[all.len() - 1]);
        let f = compare_fragment(old, new);
        assert!(f.starts_with(COMPARE_KEY));
        assert_eq!(
            decode_compare_fragment(&alloc::format!("#{f}")),
            Ok((old.clone(), new.clone()))
        );
        assert_eq!(
            decode_compare_fragment(&fragment(old)),
            Err(ShareError::NotAShareLink)
        );
        assert_eq!(
            decode_compare_fragment("c=abc"),
            Err(ShareError::Empty),
            "one code only"
        );
        let half = &f[..f.len() / 2];
        assert!(decode_compare_fragment(half).is_err());
    }

    #[test]
    fn odd_values_round_trip() {
        let mut r = one();
        r.arena.peak_op = None;
        r.arena.peak_opcode = None;
        r.arena.peak_scope = i32::MIN;
        r.arena.max_scope = i32::MAX;
        r.buffers[0].kind = BufferClass::Scratch;
        r.buffers[0].aligned_bytes = u64::MAX;
        r.buffers[0].bytes = 0;
        r.buffers[0].offset = i64::MIN;
        r.buffers[0].first = i32::MIN;
        r.buffers[0].last = i32::MAX;
        r.buffers[0].tensor = Some(usize::MAX - 1);
        r.buffers[0].offline = true;
        r.model.file = "名前 😀.tflite".into();
        assert_eq!(decode(&encode(&r)).unwrap(), r);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let r = one();
        let code = encode(&r);
        for n in 0..code.len() {
            assert!(decode(&code[..n]).is_err(), "prefix of {n} chars decoded");
        }
        let payload = to_bytes(&r);
        for n in 0..payload.len() {
            assert!(from_bytes(&payload[..n]).is_err(), "payload prefix {n}");
        }
    }

    /// `r` without its operators' tail allocations and its stages' over-input
    /// flags (what links before version 6 carry).
    fn without_allocations(r: &Report) -> Report {
        let mut r = r.clone();
        for o in &mut r.operators {
            o.allocations.clear();
        }
        if let Some(b) = r.runtime.as_mut().and_then(|rt| rt.banded.as_mut()) {
            for s in &mut b.stages {
                s.over_input = false;
            }
        }
        r
    }

    /// The payload of `r` (no allocations, no NPU, no stage over its input)
    /// up to the version-6 section: one zero count per operator, then the
    /// version-7 NPU flag, then one version-8 flag per banded stage.
    fn before_v6(r: &Report) -> Vec<u8> {
        let stages = r
            .runtime
            .as_ref()
            .and_then(|rt| rt.banded.as_ref())
            .map_or(0, |b| b.stages.len());
        let mut bytes = to_bytes(r);
        let tail = bytes.split_off(bytes.len() - r.operators.len() - 1 - stages);
        assert!(tail.iter().all(|&b| b == 0));
        bytes
    }

    #[test]
    fn specific_errors() {
        assert_eq!(decode(""), Err(ShareError::Empty));
        assert_eq!(decode_fragment("#"), Err(ShareError::Empty));
        assert_eq!(decode_fragment("#x=1"), Err(ShareError::NotAShareLink));
        assert_eq!(decode("!!!"), Err(ShareError::Base64));
        assert_eq!(decode("CQ"), Err(ShareError::UnsupportedVersion(9)));
        assert_eq!(decode("Aw"), Err(ShareError::Inflate));
        assert_eq!(decode("AA"), Err(ShareError::UnsupportedVersion(0)));
        assert_eq!(decode("Ag"), Err(ShareError::Inflate));
        assert_eq!(decode("AQ"), Err(ShareError::Inflate));
        // A version-2 link ends before the runtime's OpData (the example
        // runs on the runtime, so a version-3 payload has it).
        let r = one();
        assert!(r.runtime.as_ref().is_some_and(|rt| rt.opdata_bytes > 0));
        assert_eq!(
            read_payload(&to_bytes(&r), 2),
            Err(ShareError::TrailingBytes)
        );
        // Without a runtime figure the version-3 section is empty: the same
        // payload, less the version-6 section, reads as version 2.
        let mut no_runtime = without_allocations(&r);
        no_runtime.runtime = None;
        assert_eq!(read_payload(&before_v6(&no_runtime), 2), Ok(no_runtime));
        // A version-3 link ends before the in-place section, which every
        // version-4 payload with a runtime figure carries.
        let mut with_ip = r.clone();
        if let Some(rt) = &mut with_ip.runtime {
            rt.in_place = Some(InPlaceInfo {
                overwrites: 3,
                windowed: 1,
                ring_bytes: 192,
                aliases: 1,
                head_bytes: 1024,
                total_bytes: 2048,
                banded_total_bytes: Some(1536),
            });
        }
        assert_eq!(from_bytes(&to_bytes(&with_ip)), Ok(with_ip.clone()));
        assert_eq!(
            read_payload(&to_bytes(&with_ip), 3),
            Err(ShareError::TrailingBytes)
        );
        // A version-4 link has no windowed figures: it reads as 0 of them,
        // and a version-5 payload read as version 4 has two bytes too many.
        assert_eq!(
            read_payload(&to_bytes(&with_ip), 4),
            Err(ShareError::TrailingBytes)
        );
        let mut as_v4 = without_allocations(&with_ip);
        if let Some(ip) = as_v4.runtime.as_mut().and_then(|rt| rt.in_place.as_mut()) {
            (ip.windowed, ip.ring_bytes) = (0, 0);
        }
        // The version-5 section ends with the two zeros (one byte each).
        let mut v4 = before_v6(&as_v4);
        assert_eq!(v4.split_off(v4.len() - 2), [0, 0]);
        assert_eq!(read_payload(&v4, 4), Ok(as_v4));
        // A version-1 link ends before the flash and compute figures.
        assert_eq!(
            read_payload(&to_bytes(&one()), 1),
            Err(ShareError::TrailingBytes)
        );
        let mut payload = to_bytes(&one());
        payload.push(0);
        assert_eq!(from_bytes(&payload), Err(ShareError::TrailingBytes));
        // A deflate bomb: 65 MiB of zeros.
        let zeros = alloc::vec![0u8; MAX_PAYLOAD + 1];
        let mut packed = alloc::vec![VERSION];
        packed.extend(miniz_oxide::deflate::compress_to_vec(&zeros, 6));
        assert_eq!(
            decode(&URL_SAFE_NO_PAD.encode(packed)),
            Err(ShareError::TooLarge)
        );
    }

    proptest::proptest! {
        #[test]
        fn random_codes_never_panic(s in "\\PC{0,400}") {
            let _ = decode(&s);
            let _ = decode_fragment(&s);
        }

        #[test]
        fn random_base64_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let mut packed = alloc::vec![VERSION];
            packed.extend_from_slice(&bytes);
            let _ = decode(&URL_SAFE_NO_PAD.encode(&packed));
            let _ = from_bytes(&bytes);
        }

        #[test]
        fn flipped_bytes_never_panic(pos in 0usize..4000, val in proptest::num::u8::ANY) {
            let r = one();
            let mut payload = to_bytes(&r);
            let n = payload.len();
            payload[pos % n] = val;
            let _ = from_bytes(&payload);
        }
    }
}
