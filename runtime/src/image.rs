//! Zero-copy, bounds-checked reader of microarena program images.

use microarena_image::params::OpParams;
use microarena_image::{self as rl, header, op, tensor};

use crate::error::Error;

pub(crate) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(*b.get(at..)?.first_chunk::<4>()?))
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(*b.get(at..)?.first_chunk::<2>()?))
}

/// A streamed tensor (`STORAGE_STREAMED`) may span at most this many times
/// the head: it bounds the rows a banded stage computes by the image's own
/// figures, as every whole tensor is bounded by its region.
pub const MAX_STREAMED_PER_HEAD: usize = 256;

/// One tensor record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TensorInfo {
    /// TFLite type code.
    pub dtype: i8,
    /// Number of dims.
    pub rank: usize,
    /// Storage kind (`microarena_image::STORAGE_*`).
    pub storage: u8,
    /// Dims (only the first `rank` count).
    pub dims: [i32; rl::MAX_RANK],
    /// Head offset or data offset.
    pub location: usize,
    /// Byte size.
    pub bytes: usize,
    /// Per-tensor scale.
    pub scale: f32,
    /// Per-tensor zero point.
    pub zero_point: i32,
    /// Per-channel axis.
    pub quant_dim: i32,
    /// Data offset of the scales.
    pub scales_off: usize,
    /// Number of scales.
    pub n_scales: usize,
}

impl TensorInfo {
    /// Its dims when it is 4-D (zeros otherwise).
    pub fn dims4(&self) -> [usize; 4] {
        if self.rank == 4 {
            [self.dim(0), self.dim(1), self.dim(2), self.dim(3)]
        } else {
            [0; 4]
        }
    }

    /// The used dims.
    pub fn shape(&self) -> &[i32] {
        self.dims.get(..self.rank).unwrap_or(&[])
    }

    /// Dim `i` (0 when out of range).
    pub fn dim(&self, i: usize) -> usize {
        self.shape().get(i).map_or(0, |&d| d.max(0) as usize)
    }

    /// Last dim (1 for scalars).
    pub fn last_dim(&self) -> usize {
        self.shape().last().map_or(1, |&d| d.max(0) as usize)
    }

    /// Bytes the shape spans with zero dims counted as 1: the most any loop
    /// over its dims can run (`None` on overflow or an unknown type).
    pub fn extent_bytes(&self) -> Option<usize> {
        let elem = rl::dtype_size(self.dtype)? as usize;
        self.shape()
            .iter()
            .try_fold(elem, |a, &d| a.checked_mul(d.max(1) as usize))
    }

    /// Element count.
    pub fn elements(&self) -> usize {
        self.shape()
            .iter()
            .fold(1usize, |a, &d| a.saturating_mul(d.max(0) as usize))
    }
}

/// One operator record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpInfo {
    /// Builtin code.
    pub opcode: u8,
    /// Number of inputs.
    pub n_inputs: usize,
    /// Fused activation code.
    pub activation: u8,
    /// Input tensor indices (`NO_TENSOR` = omitted), then outputs 1.. (see
    /// [`OpInfo::output_tensor`]).
    pub inputs: [u16; rl::MAX_OP_INPUTS],
    /// Output 0's tensor index.
    pub output: u16,
    /// Number of outputs (≥ 1 in a valid image).
    pub n_outputs: usize,
    /// Scratch (offset, bytes).
    pub scratch: (usize, usize),
    /// How the op executes (`microarena_image::EXEC_*`).
    pub exec: u8,
    /// The input whose bytes output 0 is (`op::IN_PLACE` − 1): an in-place
    /// op or an alias; `None` when output 0 has bytes of its own.
    pub in_place: Option<usize>,
    /// Precomputed parameters, as written; read them with [`OpInfo::params`].
    pub param_words: [i32; rl::OP_PARAMS],
}

impl OpInfo {
    /// The precomputed parameters as the op's typed struct
    /// (`microarena_image::params`), the layout core's `lower` wrote.
    pub fn params<P: OpParams>(&self) -> P {
        P::from_words(&self.param_words)
    }

    /// Tensor index of output `k` (output 0 in its own field, the others
    /// after the inputs), `None` past the op's outputs.
    pub fn output_tensor(&self, k: usize) -> Option<u16> {
        if k >= self.n_outputs {
            None
        } else if k == 0 {
            Some(self.output)
        } else {
            self.inputs.get(self.n_inputs + k - 1).copied()
        }
    }
}

/// One subgraph record: its run of ops, its inputs and outputs, and where
/// its OpData starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubgraphInfo {
    /// Index of its first op.
    pub first_op: usize,
    /// Number of ops.
    pub n_ops: usize,
    /// Position of its first input in the io table.
    pub io_at: usize,
    /// Number of inputs.
    pub n_inputs: usize,
    /// Number of outputs.
    pub n_outputs: usize,
    /// Bytes of OpData of the ops before its first.
    pub opdata_at: usize,
}

/// A validated program image borrowed from flash or RAM.
#[derive(Debug, Clone, Copy)]
pub struct Image<'m> {
    bytes: &'m [u8],
    data: &'m [u8],
    n_tensors: usize,
    n_ops: usize,
    n_inputs: usize,
    n_outputs: usize,
    head_bytes: usize,
    tail_bytes: usize,
    var_bytes: usize,
    tensors_off: usize,
    ops_off: usize,
    io_off: usize,
    n_subgraphs: usize,
    subgraphs_off: usize,
    /// Entries of the io table (every subgraph's inputs and outputs).
    io_len: usize,
    /// The OpData block (empty while [`crate::freeze_opdata`] fills it).
    opdata: &'m [u8],
    /// The header's OpData length: non-zero = OpData in flash.
    opdata_len: usize,
}

impl<'m> Image<'m> {
    /// Checks the header, every table bound, every tensor size and every index.
    pub fn parse(bytes: &'m [u8]) -> Result<Image<'m>, Error> {
        Self::parse_with(bytes, false)
    }

    /// As [`Image::parse`], for the image in front of its OpData block:
    /// `bytes` ends where the block starts (what [`crate::freeze_opdata`]
    /// reads while it writes the block).
    pub(crate) fn parse_front(bytes: &'m [u8]) -> Result<Image<'m>, Error> {
        Self::parse_with(bytes, true)
    }

    fn parse_with(bytes: &'m [u8], front: bool) -> Result<Image<'m>, Error> {
        if bytes.get(..4) != Some(&rl::MAGIC[..]) {
            return Err(Error::BadMagic);
        }
        let h = |at: usize| {
            u32_at(bytes, at)
                .map(|v| v as usize)
                .ok_or(Error::Truncated { what: "header" })
        };
        let version = h(header::VERSION)? as u32;
        if version != rl::VERSION {
            return Err(Error::UnsupportedVersion { found: version });
        }
        if bytes.len() < rl::HEADER_BYTES {
            return Err(Error::Truncated { what: "header" });
        }
        let n_tensors = h(header::N_TENSORS)?;
        let n_ops = h(header::N_OPS)?;
        let n_inputs = h(header::N_INPUTS)?;
        let n_outputs = h(header::N_OUTPUTS)?;
        let table = |off: usize, n: usize, rec: usize, what: &'static str| -> Result<(), Error> {
            n.checked_mul(rec)
                .and_then(|l| l.checked_add(off))
                .filter(|&e| e <= bytes.len())
                .map(|_| ())
                .ok_or(Error::Truncated { what })
        };
        let tensors_off = h(header::TENSORS_OFF)?;
        let ops_off = h(header::OPS_OFF)?;
        let io_off = h(header::IO_OFF)?;
        let data_off = h(header::DATA_OFF)?;
        let data_len = h(header::DATA_LEN)?;
        table(tensors_off, n_tensors, rl::TENSOR_BYTES, "tensor table")?;
        table(ops_off, n_ops, rl::OP_BYTES, "operator table")?;
        let n_subgraphs = h(header::N_SUBGRAPHS)?;
        let subgraphs_off = h(header::SUBGRAPHS_OFF)?;
        if n_subgraphs == 0 || n_subgraphs > rl::calls::MAX_SUBGRAPHS {
            return Err(Error::BadCalls {
                why: "an image holds 1 to 32 subgraphs",
                subgraph: n_subgraphs as u32,
            });
        }
        table(
            subgraphs_off,
            n_subgraphs,
            rl::SUBGRAPH_BYTES,
            "subgraph table",
        )?;
        // The subgraphs' runs of ops tile the op table in order, and their
        // inputs and outputs the io table; subgraph 0's are the graph's.
        let mut io_len = 0usize;
        let mut next_op = 0usize;
        for g in 0..n_subgraphs {
            let at = |f: usize| {
                u32_at(bytes, subgraphs_off + g * rl::SUBGRAPH_BYTES + f)
                    .map(|v| v as usize)
                    .ok_or(Error::Truncated {
                        what: "subgraph table",
                    })
            };
            let bad = |what| Error::Malformed {
                what,
                index: g as u32,
            };
            if at(rl::subgraph::FIRST_OP)? != next_op || at(rl::subgraph::IO_AT)? != io_len {
                return Err(bad("subgraph ops or inputs/outputs out of order"));
            }
            next_op = next_op
                .checked_add(at(rl::subgraph::N_OPS)?)
                .ok_or(bad("subgraph op count"))?;
            let (n_in, n_out) = (at(rl::subgraph::N_INPUTS)?, at(rl::subgraph::N_OUTPUTS)?);
            if g == 0 && (n_in != n_inputs || n_out != n_outputs) {
                return Err(bad("subgraph 0's inputs/outputs are not the graph's"));
            }
            io_len = n_in
                .checked_add(n_out)
                .and_then(|n| n.checked_add(io_len))
                .ok_or(bad("subgraph input/output count"))?;
        }
        if next_op != n_ops {
            return Err(Error::Malformed {
                what: "the subgraphs' ops are not the op table",
                index: 0,
            });
        }
        table(io_off, io_len, 4, "input/output table")?;
        let data = data_off
            .checked_add(data_len)
            .and_then(|e| bytes.get(data_off..e))
            .ok_or(Error::Truncated { what: "data area" })?;
        // The OpData block, when present, follows the data area and ends the image.
        let opdata_off = h(header::OPDATA_OFF)?;
        let opdata_len = h(header::OPDATA_LEN)?;
        let opdata = if opdata_len == 0 {
            &[][..]
        } else {
            let after_data = data_off + data_len;
            if opdata_off < after_data
                || !opdata_off.is_multiple_of(4)
                || !opdata_len.is_multiple_of(4)
            {
                return Err(Error::Malformed {
                    what: "OpData block overlaps the data area or is not 4-aligned",
                    index: 0,
                });
            }
            if front {
                if opdata_off != bytes.len() {
                    return Err(Error::Truncated {
                        what: "OpData block",
                    });
                }
                &[][..]
            } else {
                opdata_off
                    .checked_add(opdata_len)
                    .and_then(|e| bytes.get(opdata_off..e))
                    .ok_or(Error::Truncated {
                        what: "OpData block",
                    })?
            }
        };
        let img = Image {
            bytes,
            data,
            n_tensors,
            n_ops,
            n_inputs,
            n_outputs,
            head_bytes: h(header::HEAD_BYTES)?,
            tail_bytes: h(header::TAIL_BYTES)?,
            var_bytes: h(header::VAR_BYTES)?,
            tensors_off,
            ops_off,
            io_off,
            n_subgraphs,
            subgraphs_off,
            io_len,
            opdata,
            opdata_len,
        };
        if img.var_bytes > img.tail_bytes || !img.var_bytes.is_multiple_of(4) {
            return Err(Error::Malformed {
                what: "variable region larger than the tail or not 4-aligned",
                index: 0,
            });
        }
        if !img.head_bytes.is_multiple_of(rl::HEAD_ALIGN as usize) {
            return Err(Error::Malformed {
                what: "head size not 16-aligned",
                index: 0,
            });
        }
        for i in 0..n_tensors {
            img.check_tensor(i)?;
        }
        for i in 0..n_ops {
            let o = img.op(i)?;
            let bad = |what| Error::Malformed {
                what,
                index: i as u32,
            };
            // Outputs past the first sit in the input slots after the inputs.
            let extra_outputs = o.n_outputs.saturating_sub(1);
            if o.n_outputs == 0
                || o.n_outputs > rl::MAX_OP_OUTPUTS
                || o.n_inputs + extra_outputs > rl::MAX_OP_INPUTS
            {
                return Err(bad("operator input/output count"));
            }
            for (k, &t) in o.inputs.iter().enumerate() {
                let out_of_range = k >= o.n_inputs + extra_outputs || usize::from(t) >= n_tensors;
                if t != rl::NO_TENSOR && out_of_range {
                    return Err(bad("operator input index"));
                }
            }
            for k in 0..o.n_outputs {
                if o.output_tensor(k)
                    .is_none_or(|t| usize::from(t) >= n_tensors)
                {
                    return Err(bad("operator output index"));
                }
            }
            if o.scratch
                .0
                .checked_add(o.scratch.1)
                .is_none_or(|e| e > img.head_bytes)
            {
                return Err(bad("scratch outside the head"));
            }
            if o.scratch.1 > 0 && o.scratch.0 % rl::HEAD_ALIGN as usize != 0 {
                return Err(bad("scratch offset not 16-aligned"));
            }
            // Stages and in-place rows run in subgraph 0's op order alone.
            if n_subgraphs > 1 && (o.exec != rl::EXEC_WHOLE || o.in_place.is_some()) {
                return Err(bad(
                    "a banded or in-place op in an image with several subgraphs",
                ));
            }
        }
        for i in 0..io_len {
            let t = u32_at(bytes, io_off + 4 * i).ok_or(Error::Truncated {
                what: "input/output table",
            })?;
            if t as usize >= n_tensors {
                return Err(Error::Malformed {
                    what: "graph input/output index",
                    index: i as u32,
                });
            }
        }
        // No call out of range, no recursion, no nesting beyond the limit.
        rl::calls::check_calls(n_subgraphs, &|visit| img.each_call(visit)).map_err(|e| {
            Error::BadCalls {
                why: e.why(),
                subgraph: match e {
                    rl::calls::CallError::OutOfRange { caller, .. } => caller as u32,
                    rl::calls::CallError::Cycle { subgraph } => subgraph as u32,
                    rl::calls::CallError::TooManySubgraphs { count } => count as u32,
                    rl::calls::CallError::TooDeep { .. } => 0,
                },
            }
        })?;
        Ok(img)
    }

    /// Every (caller, callee) pair of the image's control-flow ops.
    fn each_call(&self, visit: &mut dyn FnMut(usize, i64)) {
        for g in 0..self.n_subgraphs {
            let Ok(sg) = self.subgraph(g) else { continue };
            for i in sg.first_op..sg.first_op + sg.n_ops {
                let Ok(op) = self.op(i) else { continue };
                let n = rl::opcode::called_subgraphs(op.opcode);
                let p: rl::params::SubgraphParams = op.params();
                for callee in [p.first, p.second].into_iter().take(n) {
                    visit(g, i64::from(callee));
                }
            }
        }
    }

    /// Number of subgraphs (at least 1).
    pub fn subgraph_count(&self) -> usize {
        self.n_subgraphs
    }

    /// Subgraph record `g`.
    pub fn subgraph(&self, g: usize) -> Result<SubgraphInfo, Error> {
        let base = g
            .checked_mul(rl::SUBGRAPH_BYTES)
            .and_then(|o| o.checked_add(self.subgraphs_off))
            .filter(|_| g < self.n_subgraphs)
            .ok_or(Error::Malformed {
                what: "subgraph index",
                index: g as u32,
            })?;
        let w = |f: usize| {
            u32_at(self.bytes, base + f)
                .map(|v| v as usize)
                .ok_or(Error::Truncated {
                    what: "subgraph table",
                })
        };
        Ok(SubgraphInfo {
            first_op: w(rl::subgraph::FIRST_OP)?,
            n_ops: w(rl::subgraph::N_OPS)?,
            io_at: w(rl::subgraph::IO_AT)?,
            n_inputs: w(rl::subgraph::N_INPUTS)?,
            n_outputs: w(rl::subgraph::N_OUTPUTS)?,
            opdata_at: w(rl::subgraph::OPDATA_AT)?,
        })
    }

    /// Tensor index of input `k` (`output`: output `k`) of subgraph `sg`.
    pub fn subgraph_tensor(
        &self,
        sg: &SubgraphInfo,
        output: bool,
        k: usize,
    ) -> Result<usize, Error> {
        let (n, at) = if output {
            (sg.n_outputs, sg.io_at + sg.n_inputs)
        } else {
            (sg.n_inputs, sg.io_at)
        };
        if k >= n || at + k >= self.io_len {
            return Err(Error::NoSuchTensor { index: k });
        }
        u32_at(self.bytes, self.io_off + 4 * (at + k))
            .map(|t| t as usize)
            .ok_or(Error::NoSuchTensor { index: k })
    }

    fn check_tensor(&self, i: usize) -> Result<(), Error> {
        let t = self.tensor(i)?;
        let bad = |what| Error::Malformed {
            what,
            index: i as u32,
        };
        if t.rank > rl::MAX_RANK {
            return Err(bad("tensor rank"));
        }
        let elem = rl::dtype_size(t.dtype).ok_or(bad("tensor type"))? as usize;
        let mut n = elem;
        for &d in t.shape() {
            if d < 0 {
                return Err(bad("negative dimension"));
            }
            n = n
                .checked_mul(d as usize)
                .ok_or(bad("tensor size overflows"))?;
        }
        if t.storage != rl::STORAGE_NONE && n != t.bytes {
            return Err(bad("tensor byte size does not match its shape"));
        }
        // Kernels nest loops over dims, so an empty tensor (a zero dim) must
        // not carry huge other dims: its extent, zero dims counted as 1, must
        // fit the region it lives in, as a non-empty tensor's bytes do.
        let region = match t.storage {
            rl::STORAGE_ARENA => self.head_bytes,
            rl::STORAGE_CONST => self.data.len(),
            rl::STORAGE_VARIABLE => self.var_bytes,
            // A streamed tensor never exists whole, but banded ops loop over
            // its rows: bound it by the head, generously (a real model's
            // streamed tensors are a few times its head).
            rl::STORAGE_STREAMED => self.head_bytes.saturating_mul(MAX_STREAMED_PER_HEAD),
            _ => self.head_bytes,
        };
        if t.extent_bytes().is_none_or(|e| e > region.max(elem)) {
            return Err(bad(
                "tensor shape (zero dims counted as 1) exceeds its storage region",
            ));
        }
        let end = t
            .location
            .checked_add(t.bytes)
            .ok_or(bad("tensor location"))?;
        match t.storage {
            rl::STORAGE_ARENA if end > self.head_bytes => {
                return Err(bad("arena tensor outside the head"));
            }
            rl::STORAGE_ARENA if t.location % rl::HEAD_ALIGN as usize != 0 => {
                return Err(bad("arena tensor offset not 16-aligned"));
            }
            rl::STORAGE_CONST if end > self.data.len() => {
                return Err(bad("constant tensor outside the data area"));
            }
            rl::STORAGE_VARIABLE if end > self.var_bytes => {
                return Err(bad("variable tensor outside the variable region"));
            }
            rl::STORAGE_ARENA
            | rl::STORAGE_CONST
            | rl::STORAGE_NONE
            | rl::STORAGE_VARIABLE
            | rl::STORAGE_STREAMED => {}
            _ => return Err(bad("tensor storage kind")),
        }
        if t.n_scales > 0
            && t.n_scales
                .checked_mul(4)
                .and_then(|l| l.checked_add(t.scales_off))
                .is_none_or(|e| e > self.data.len())
        {
            return Err(bad("scales outside the data area"));
        }
        Ok(())
    }

    /// Number of tensors.
    pub fn tensor_count(&self) -> usize {
        self.n_tensors
    }

    /// Number of operators.
    pub fn op_count(&self) -> usize {
        self.n_ops
    }

    /// Number of graph inputs.
    pub fn input_count(&self) -> usize {
        self.n_inputs
    }

    /// Number of graph outputs.
    pub fn output_count(&self) -> usize {
        self.n_outputs
    }

    /// Planned head bytes.
    pub fn head_bytes(&self) -> usize {
        self.head_bytes
    }

    /// Tail bytes the runtime's Prepare allocates (as predicted by core).
    pub fn tail_bytes(&self) -> usize {
        self.tail_bytes
    }

    /// Bytes of the variable region (LSTM/SVDF state), part of the tail.
    pub fn var_bytes(&self) -> usize {
        self.var_bytes
    }

    /// Whether the ops' OpData lives in the image (flash) rather than the tail.
    pub fn opdata_in_flash(&self) -> bool {
        self.opdata_len > 0
    }

    /// Bytes of the OpData block (0 when OpData lives in the tail).
    pub fn opdata_len(&self) -> usize {
        self.opdata_len
    }

    /// The OpData block (empty when OpData lives in the tail).
    pub(crate) fn opdata_block(&self) -> &'m [u8] {
        self.opdata
    }

    /// Tensor record `i`.
    pub fn tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        let base = i
            .checked_mul(rl::TENSOR_BYTES)
            .and_then(|o| o.checked_add(self.tensors_off))
            .filter(|_| i < self.n_tensors)
            .ok_or(Error::Malformed {
                what: "tensor index",
                index: i as u32,
            })?;
        let rec = self
            .bytes
            .get(base..base + rl::TENSOR_BYTES)
            .ok_or(Error::Truncated {
                what: "tensor table",
            })?;
        let w = |at: usize| u32_at(rec, at).unwrap_or(0);
        let mut dims = [0i32; rl::MAX_RANK];
        for (k, d) in dims.iter_mut().enumerate() {
            *d = w(tensor::DIMS + 4 * k) as i32;
        }
        Ok(TensorInfo {
            dtype: rec.get(tensor::DTYPE).map_or(-1, |&b| b as i8),
            rank: rec.get(tensor::RANK).map_or(0, |&b| usize::from(b)),
            storage: rec
                .get(tensor::STORAGE)
                .copied()
                .unwrap_or(rl::STORAGE_NONE),
            dims,
            location: w(tensor::LOCATION) as usize,
            bytes: w(tensor::BYTES) as usize,
            scale: f32::from_bits(w(tensor::SCALE)),
            zero_point: w(tensor::ZERO_POINT) as i32,
            quant_dim: w(tensor::QUANT_DIM) as i32,
            scales_off: w(tensor::SCALES_OFF) as usize,
            n_scales: w(tensor::N_SCALES) as usize,
        })
    }

    /// Scale `k` of a tensor (per-channel), falling back to the per-tensor scale.
    pub fn scale(&self, t: &TensorInfo, k: usize) -> f32 {
        if k < t.n_scales {
            u32_at(self.data, t.scales_off + 4 * k).map_or(t.scale, f32::from_bits)
        } else {
            t.scale
        }
    }

    /// Constant bytes of a tensor stored in the image.
    pub fn const_data(&self, t: &TensorInfo) -> Option<&'m [u8]> {
        if t.storage != rl::STORAGE_CONST {
            return None;
        }
        self.data.get(t.location..t.location.checked_add(t.bytes)?)
    }

    /// `op`'s operands as `microarena_image::stage::stage_kind` reads them
    /// (core reads the same from the model).
    pub(crate) fn op_shape(&self, op: &OpInfo) -> rl::stage::OpShape {
        let tensor = |s: usize| {
            op.inputs
                .get(s)
                .filter(|_| s < op.n_inputs)
                .and_then(|&t| self.tensor(usize::from(t)).ok())
        };
        let out = self.tensor(usize::from(op.output)).ok();
        rl::stage::OpShape {
            input: tensor(0).map_or([0; 4], |x| x.dims4()),
            filter: tensor(1)
                .filter(|w| w.rank == 2 && w.storage == rl::STORAGE_CONST)
                .map_or([0; 2], |w| [w.dim(0), w.dim(1)]),
            out_elements: out.as_ref().map_or(0, TensorInfo::elements),
            out_dtype: out.map_or(-1, |o| o.dtype),
        }
    }

    /// `true` when `op` runs in a banded stage as its reducer
    /// (`microarena_image::stage::reduces`): the firmware links reducers
    /// only for such an image (`resolver!(…, banded, reducers)`).
    pub fn reduces_in_stage(&self, op: &OpInfo) -> Result<bool, Error> {
        if op.exec == rl::EXEC_WHOLE {
            return Ok(false);
        }
        let mut shape = self.op_shape(op);
        // Through a banded (so folded) RESHAPE: the map it flattens.
        for i in 0..self.op_count() {
            let p = self.op(i)?;
            if p.opcode == rl::opcode::RESHAPE
                && p.exec != rl::EXEC_WHOLE
                && p.output == op.inputs[0]
            {
                shape.input = self.tensor(usize::from(p.inputs[0]))?.dims4();
            }
        }
        let kind = rl::stage::stage_kind(op.opcode, &op.param_words, &shape);
        Ok(kind == Some(rl::opcode::BandRows::Reduce))
    }

    /// Operator record `i`.
    pub fn op(&self, i: usize) -> Result<OpInfo, Error> {
        let base = i
            .checked_mul(rl::OP_BYTES)
            .and_then(|o| o.checked_add(self.ops_off))
            .filter(|_| i < self.n_ops)
            .ok_or(Error::Malformed {
                what: "operator index",
                index: i as u32,
            })?;
        let rec = self
            .bytes
            .get(base..base + rl::OP_BYTES)
            .ok_or(Error::Truncated {
                what: "operator table",
            })?;
        let mut inputs = [rl::NO_TENSOR; rl::MAX_OP_INPUTS];
        for (k, t) in inputs.iter_mut().enumerate() {
            *t = u16_at(rec, op::INPUTS + 2 * k).unwrap_or(rl::NO_TENSOR);
        }
        let mut params = [0i32; rl::OP_PARAMS];
        for (k, p) in params.iter_mut().enumerate() {
            *p = u32_at(rec, op::PARAMS + 4 * k).unwrap_or(0) as i32;
        }
        Ok(OpInfo {
            opcode: rec.get(op::OPCODE).copied().unwrap_or(0),
            n_inputs: rec.get(op::N_INPUTS).map_or(0, |&b| usize::from(b)),
            activation: rec.get(op::ACTIVATION).copied().unwrap_or(0),
            inputs,
            output: u16_at(rec, op::OUTPUT).unwrap_or(0),
            n_outputs: rec.get(op::N_OUTPUTS).map_or(0, |&b| usize::from(b)),
            scratch: (
                u32_at(rec, op::SCRATCH_OFF).unwrap_or(0) as usize,
                u32_at(rec, op::SCRATCH_BYTES).unwrap_or(0) as usize,
            ),
            exec: rec.get(op::EXEC).copied().unwrap_or(0),
            in_place: match rec.get(op::IN_PLACE).copied().unwrap_or(0) {
                0 => None,
                k => Some(usize::from(k) - 1),
            },
            param_words: params,
        })
    }

    /// Tensor index of graph input `i`.
    pub fn input_tensor(&self, i: usize) -> Result<usize, Error> {
        if i >= self.n_inputs {
            return Err(Error::NoSuchTensor { index: i });
        }
        u32_at(self.bytes, self.io_off + 4 * i)
            .map(|t| t as usize)
            .ok_or(Error::NoSuchTensor { index: i })
    }

    /// Tensor index of graph output `i`.
    pub fn output_tensor(&self, i: usize) -> Result<usize, Error> {
        if i >= self.n_outputs {
            return Err(Error::NoSuchTensor { index: i });
        }
        u32_at(self.bytes, self.io_off + 4 * (self.n_inputs + i))
            .map(|t| t as usize)
            .ok_or(Error::NoSuchTensor { index: i })
    }
}
