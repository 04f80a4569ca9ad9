//! The interpreter: Prepare at construction, then Invoke as often as wanted.

use microarena_image as rl;

use crate::arena::{ArenaAllocator, MemoryUsage};
use crate::banded;
use crate::error::Error;
use crate::image::{Image, OpInfo, SubgraphInfo, TensorInfo};
use crate::kernels::{self, Ctx, Resolver};

/// Runs one program image in one caller-supplied arena.
pub struct Interpreter<'m, 'a> {
    image: Image<'m>,
    arena: &'a mut [u8],
    alloc: ArenaAllocator,
    /// The kernels this interpreter runs (every op's is here: checked at construction).
    kernels: &'static Resolver,
    /// Arena offset of the variable region (bottom of the tail).
    var_base: usize,
}

impl core::fmt::Debug for Interpreter<'_, '_> {
    /// A summary: printing the arena itself would flood a semihosting console.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Interpreter")
            .field("tensors", &self.image.tensor_count())
            .field("ops", &self.image.op_count())
            .field("arena_len", &self.arena.len())
            .field("allocator", &self.alloc)
            .finish()
    }
}

impl<'m, 'a> Interpreter<'m, 'a> {
    /// Parses `image`, checks that `arena` is large enough, and prepares every
    /// operator (OpData into the tail, scratch claimed from the plan), with
    /// every kernel of the runtime ([`Resolver::ALL`], which links them all;
    /// a firmware passes its own to [`Interpreter::with_kernels`]).
    pub fn new(image: &'m [u8], arena: &'a mut [u8]) -> Result<Self, Error> {
        Self::with_kernels(image, arena, &Resolver::ALL)
    }

    /// As [`Interpreter::new`], running only the kernels of `kernels` (e.g.
    /// the ones the firmware's build selected for its image with
    /// [`crate::resolver!`]): an image with an op whose kernel it leaves out is
    /// refused here ([`Error::KernelNotLinked`]), never run.
    pub fn with_kernels(
        image: &'m [u8],
        arena: &'a mut [u8],
        kernels: &'static Resolver,
    ) -> Result<Self, Error> {
        Self::with_parsed(Image::parse(image)?, arena, kernels)
    }

    /// As [`Interpreter::new`], for an already parsed image.
    pub fn with_image(image: Image<'m>, arena: &'a mut [u8]) -> Result<Self, Error> {
        Self::with_parsed(image, arena, &Resolver::ALL)
    }

    /// As [`Interpreter::with_kernels`], for an already parsed image.
    pub fn with_parsed(
        image: Image<'m>,
        arena: &'a mut [u8],
        kernels: &'static Resolver,
    ) -> Result<Self, Error> {
        // Operators without a kernel are reported before the arena size, so a
        // model the runtime (or this build of it) cannot run never looks like
        // a sizing problem.
        kernels.check(&image)?;
        let needed = image.head_bytes().saturating_add(image.tail_bytes());
        if arena.len() < needed {
            return Err(Error::ArenaTooSmall {
                needed,
                available: arena.len(),
            });
        }
        for k in 0..image.input_count() + image.output_count() {
            let t = if k < image.input_count() {
                image.input_tensor(k)?
            } else {
                image.output_tensor(k - image.input_count())?
            };
            // A graph tensor the caller fills or reads must exist whole in the arena.
            if matches!(
                image.tensor(t)?.storage,
                rl::STORAGE_CONST | rl::STORAGE_STREAMED
            ) {
                return Err(Error::Malformed {
                    what: "graph input/output is a constant or streamed",
                    index: t as u32,
                });
            }
        }
        let mut alloc = ArenaAllocator::new(arena.len(), image.head_bytes())?;
        let at = kernels::prepare_all(kernels, &image, &mut alloc, arena, None)?;
        // Without row bands linked, `kernels.check` found no banded op.
        if let Some(banded) = kernels.banded {
            (banded.check)(&image)?;
        }
        if at != image.opdata_len() {
            return Err(Error::Malformed {
                what: "OpData block longer than the ops' OpData",
                index: 0,
            });
        }
        // Variable tensors last: the lowest part of the tail, fixed for the
        // interpreter's life.
        let var_base = if image.var_bytes() > 0 {
            alloc.allocate_persistent(image.var_bytes(), rl::TAIL_ALIGN as usize)?
        } else {
            alloc.tail_start()
        };
        alloc.finish_prepare();
        let mut it = Interpreter {
            image,
            arena,
            alloc,
            kernels,
            var_base,
        };
        it.reset_variables(true)?;
        Ok(it)
    }

    /// `true` when tensor `t` is a CALL_ONCE's flag.
    fn is_call_once_flag(&self, t: usize) -> bool {
        self.image.subgraph_count() > 1
            && (0..self.image.op_count()).any(|i| {
                self.image.op(i).is_ok_and(|op| {
                    op.opcode == rl::opcode::CALL_ONCE
                        && op.inputs.first().is_some_and(|&k| usize::from(k) == t)
                })
            })
    }

    /// Resets every variable tensor (LSTM/SVDF state, resource variables)
    /// as TFLM's `MicroInterpreter::Reset` does: int8 tensors to their zero
    /// point, all others to 0. CALL_ONCE's flag stays (TFLM's kernel has no
    /// reset: its init subgraph does not run again). Nothing moves;
    /// construction already did this once, flags included.
    pub fn reset(&mut self) -> Result<(), Error> {
        self.reset_variables(false)
    }

    fn reset_variables(&mut self, flags_too: bool) -> Result<(), Error> {
        for i in 0..self.image.tensor_count() {
            let t = self.image.tensor(i)?;
            if t.storage != rl::STORAGE_VARIABLE || (!flags_too && self.is_call_once_flag(i)) {
                continue;
            }
            let value = if t.dtype == rl::dtype::I8 {
                t.zero_point as i8 as u8
            } else {
                0
            };
            let start = self.var_base.saturating_add(t.location);
            let end = start.saturating_add(t.bytes);
            self.arena
                .get_mut(start..end)
                .ok_or(Error::Malformed {
                    what: "variable tensor outside the arena",
                    index: i as u32,
                })?
                .fill(value);
        }
        Ok(())
    }

    /// Bytes of a variable tensor (LSTM/SVDF state) by tensor index, e.g. to
    /// save and restore a stream's state.
    pub fn variable(&self, tensor: usize) -> Result<&[u8], Error> {
        let t = self.image.tensor(tensor)?;
        if t.storage != rl::STORAGE_VARIABLE {
            return Err(Error::NoSuchTensor { index: tensor });
        }
        let start = self.var_base.saturating_add(t.location);
        self.arena
            .get(start..start.saturating_add(t.bytes))
            .ok_or(Error::NoSuchTensor { index: tensor })
    }

    /// The parsed image.
    pub fn image(&self) -> &Image<'m> {
        &self.image
    }

    /// Arena figures: used = head + tail, available = arena length, and the high-water mark.
    pub fn memory_usage(&self) -> MemoryUsage {
        self.alloc.usage()
    }

    /// A persistent allocation, as a kernel would make one. Only possible
    /// during Prepare, i.e. never on a constructed interpreter: this returns
    /// [`Error::AllocationDuringInvoke`].
    pub fn allocate_persistent(&mut self, bytes: usize) -> Result<usize, Error> {
        self.alloc
            .allocate_persistent(bytes, rl::TAIL_ALIGN as usize)
    }

    fn io(&self, output: bool, i: usize) -> Result<TensorInfo, Error> {
        let t = if output {
            self.image.output_tensor(i)?
        } else {
            self.image.input_tensor(i)?
        };
        self.image.tensor(t)
    }

    /// Tensor record of graph input `i`.
    pub fn input_info(&self, i: usize) -> Result<TensorInfo, Error> {
        self.io(false, i)
    }

    /// Tensor record of graph output `i`.
    pub fn output_info(&self, i: usize) -> Result<TensorInfo, Error> {
        self.io(true, i)
    }

    /// Bytes of graph input `i`, to fill before every [`Interpreter::invoke`]:
    /// as in TFLM, whose planner reuses an input's bytes once it is read, an
    /// invoke may consume them (a banded stage can write its output over
    /// the input it reads).
    pub fn input_mut(&mut self, i: usize) -> Result<&mut [u8], Error> {
        let t = self.io(false, i)?;
        let end = t.location.saturating_add(t.bytes);
        self.arena
            .get_mut(t.location..end)
            .ok_or(Error::NoSuchTensor { index: i })
    }

    /// Bytes of graph output `i`, valid after [`Interpreter::invoke`].
    pub fn output(&self, i: usize) -> Result<&[u8], Error> {
        let t = self.io(true, i)?;
        let end = t.location.saturating_add(t.bytes);
        self.arena
            .get(t.location..end)
            .ok_or(Error::NoSuchTensor { index: i })
    }

    /// Runs every operator of subgraph 0 once (and the subgraphs its
    /// control-flow ops call, as TFLM does).
    pub fn invoke(&mut self) -> Result<(), Error> {
        let tail_start = self.alloc.tail_start();
        let tail_end = self.alloc.tail_end();
        let (head, tail) =
            self.arena
                .split_at_mut_checked(tail_start)
                .ok_or(Error::ArenaTooSmall {
                    needed: tail_start,
                    available: 0,
                })?;
        let var_len = self.image.var_bytes();
        if self.var_base != tail_start {
            return Err(Error::Malformed {
                what: "variable region is not at the bottom of the tail",
                index: 0,
            });
        }
        let (vars, tail) = tail.split_at_mut_checked(var_len).ok_or(Error::Malformed {
            what: "variable region outside the arena",
            index: 0,
        })?;
        let mut run = Run {
            img: &self.image,
            resolver: self.kernels,
            head,
            vars,
            tail,
            tail_start: tail_start + var_len,
            tail_end,
        };
        run.subgraph(0, 0)
    }
}

/// One invoke: the arena split into head, variable region and OpData tail.
pub(crate) struct Run<'r, 'm> {
    img: &'r Image<'m>,
    resolver: &'static Resolver,
    head: &'r mut [u8],
    vars: &'r mut [u8],
    tail: &'r [u8],
    /// Arena offset of `tail`.
    tail_start: usize,
    tail_end: usize,
}

impl<'r, 'm> Run<'r, 'm> {
    /// The OpData of an op of `size` bytes after `at` bytes of other ops':
    /// Prepare allocated it in operator order from the top of the tail
    /// down, or it sits in the image's block in operator order.
    fn opdata(&self, at: usize, size: usize) -> &'r [u8] {
        if self.img.opdata_in_flash() {
            let block: &'m [u8] = self.img.opdata_block();
            block.get(at..at.saturating_add(size)).unwrap_or(&[])
        } else {
            let tail: &'r [u8] = self.tail;
            let hi = self
                .tail_end
                .saturating_sub(at)
                .saturating_sub(self.tail_start);
            tail.get(hi.saturating_sub(size)..hi).unwrap_or(&[])
        }
    }

    fn opdata_size(&self, i: usize, op: &OpInfo) -> Result<usize, Error> {
        let out = self.img.tensor(usize::from(op.output))?;
        kernels::prepared_opdata_bytes(self.resolver, self.img, i as u16, op, &out)
    }

    /// Runs subgraph `g`'s ops in order, `depth` calls below subgraph 0.
    /// Its frame stays small (the op and stage runners are out of line),
    /// since control flow recurses through it.
    fn subgraph(&mut self, g: usize, depth: usize) -> Result<(), Error> {
        let img = self.img;
        let sg = img.subgraph(g)?;
        let mut at = sg.opdata_at;
        let end = sg.first_op.saturating_add(sg.n_ops);
        let mut i = sg.first_op;
        while i < end {
            let op = img.op(i)?;
            if op.exec != rl::EXEC_WHOLE {
                // A banded stage runs as one step, row by row (checked at
                // construction; only in single-subgraph images).
                let last;
                (last, at) = self.stage(i, &op, at)?;
                i = last + 1;
                continue;
            }
            let size = self.opdata_size(i, &op)?;
            let opdata = self.opdata(at, size);
            at += size;
            if rl::opcode::called_subgraphs(op.opcode) > 0 {
                // Through the resolver: a build without control-flow kernels
                // links none of its tensor copies.
                let control = self.resolver.control.ok_or(Error::KernelNotLinked {
                    op_index: i as u16,
                    opcode: op.opcode,
                    variant: "control flow",
                })?;
                control(self, i, &op, depth)?;
            } else {
                self.op(i, op, opdata)?;
            }
            i += 1;
        }
        Ok(())
    }

    /// The banded stage starting at op `i`, whose OpData starts `at` bytes
    /// in: returns its last op and the OpData offset after it.
    #[inline(never)]
    fn stage(&mut self, i: usize, op: &OpInfo, mut at: usize) -> Result<(usize, usize), Error> {
        let (img, resolver) = (self.img, self.resolver);
        let last = banded::stage_end(img, i)?;
        let mut opdata: [&[u8]; rl::MAX_STAGE_OPS] = [&[]; rl::MAX_STAGE_OPS];
        for (slot, j) in opdata.iter_mut().zip(i..=last) {
            let size = self.opdata_size(j, &img.op(j)?)?;
            *slot = self.opdata(at, size);
            at += size;
        }
        let opdata = opdata.get(..=last - i).unwrap_or(&[]);
        let stages = resolver.banded.ok_or(Error::KernelNotLinked {
            op_index: i as u16,
            opcode: op.opcode,
            variant: kernels::BANDED_VARIANT,
        })?;
        (stages.run)(resolver, img, self.head, self.vars, i, opdata)?;
        Ok((last, at))
    }

    /// Op `i` (no control flow, not banded) with its OpData.
    #[inline(never)]
    fn op(&mut self, i: usize, op: OpInfo, opdata: &[u8]) -> Result<(), Error> {
        let (img, resolver) = (self.img, self.resolver);
        if op.in_place == Some(0) && rl::opcode::in_place_by_rows(op.opcode) {
            // A windowed op over its input, row by row (checked at construction).
            let rows = resolver.rows_in_place.ok_or(Error::KernelNotLinked {
                op_index: i as u16,
                opcode: op.opcode,
                variant: kernels::ROWS_VARIANT,
            })?;
            return (rows.run)(resolver, img, self.head, self.vars, i, opdata);
        }
        if op.in_place == Some(0) && rl::opcode::is_alias_op(op.opcode) {
            // An alias (RESHAPE, SQUEEZE, EXPAND_DIMS over its input's
            // bytes, checked at construction): the output is already there.
            return Ok(());
        }
        // Every output in the head is written by the op: carve them all. An
        // output written over its input step by step (checked at
        // construction) is handed the input's whole region, which it reads
        // through `Ctx::src`.
        let behind = op.in_place == Some(0) && rl::opcode::writes_behind_input(op.opcode);
        let mut out_ranges = [(0usize, 0usize); rl::MAX_OP_OUTPUTS];
        for (k, r) in out_ranges.iter_mut().enumerate().take(op.n_outputs) {
            let t = match op.output_tensor(k) {
                Some(_) if k == 0 && behind => img.tensor(usize::from(op.inputs[0]))?,
                Some(t) => img.tensor(usize::from(t))?,
                None => break,
            };
            if t.storage == rl::STORAGE_ARENA {
                *r = (t.location, t.bytes);
            }
        }
        let n_out = op.n_outputs.min(rl::MAX_OP_OUTPUTS);
        let (out_buf, mut more, scratch, pieces) = kernels::carve(
            self.head,
            out_ranges.get(..n_out).unwrap_or(&[]),
            op.scratch,
        )
        .ok_or(Error::Malformed {
            what: "outputs and scratch overlap or leave the head",
            index: i as u32,
        })?;
        let mut ctx = Ctx {
            img,
            op,
            index: i as u16,
            pieces: &pieces,
            out: out_buf,
            more: &mut more,
            scratch,
            opdata,
            vars: &mut *self.vars,
            band: None,
            in_place: op.in_place,
        };
        kernels::eval(resolver, &mut ctx)
    }

    /// IF, WHILE or CALL_ONCE (op `i`), as TFLM runs them; every count,
    /// size and storage was checked by their Prepare (`kernels::control`).
    #[inline(never)]
    fn control(&mut self, i: usize, op: &OpInfo, depth: usize) -> Result<(), Error> {
        let img = self.img;
        let bad = |what| Error::Malformed {
            what,
            index: i as u32,
        };
        if depth >= rl::calls::MAX_CALL_DEPTH {
            return Err(bad("subgraph calls nest too deep"));
        }
        let p: rl::params::SubgraphParams = op.params();
        let sub = |g: i32| -> Result<(usize, SubgraphInfo), Error> {
            let g = usize::try_from(g).map_err(|_| bad("subgraph index"))?;
            Ok((g, img.subgraph(g)?))
        };
        let input = |k: usize| -> Result<usize, Error> {
            op.inputs
                .get(k)
                .filter(|_| k < op.n_inputs)
                .map(|&t| usize::from(t))
                .ok_or(bad("missing input"))
        };
        let output = |k: usize| -> Result<usize, Error> {
            op.output_tensor(k)
                .map(usize::from)
                .ok_or(bad("missing output"))
        };
        match op.opcode {
            rl::opcode::CALL_ONCE => {
                let flag = img.tensor(input(0)?)?;
                let range = flag.location..flag.location.saturating_add(flag.bytes);
                let ran = self
                    .vars
                    .get(range.clone())
                    .ok_or(bad("CALL_ONCE flag outside the variable region"))?
                    .iter()
                    .any(|&b| b != 0);
                if !ran {
                    self.subgraph(sub(p.first)?.0, depth + 1)?;
                    if let Some(f) = self.vars.get_mut(range) {
                        f.fill(0);
                        if let Some(b) = f.first_mut() {
                            *b = 1;
                        }
                    }
                }
            }
            rl::opcode::IF => {
                let taken = if self.byte(input(0)?)? != 0 {
                    p.first
                } else {
                    p.second
                };
                let (g, sg) = sub(taken)?;
                for k in 0..sg.n_inputs {
                    self.copy(input(k + 1)?, img.subgraph_tensor(&sg, false, k)?)?;
                }
                self.subgraph(g, depth + 1)?;
                for k in 0..sg.n_outputs {
                    self.copy(img.subgraph_tensor(&sg, true, k)?, output(k)?)?;
                }
            }
            rl::opcode::WHILE => {
                let ((c, cond), (b, body)) = (sub(p.first)?, sub(p.second)?);
                for k in 0..op.n_inputs {
                    self.copy(input(k)?, img.subgraph_tensor(&cond, false, k)?)?;
                    self.copy(input(k)?, output(k)?)?;
                }
                self.subgraph(c, depth + 1)?;
                while self.byte(img.subgraph_tensor(&cond, true, 0)?)? != 0 {
                    for k in 0..op.n_outputs {
                        self.copy(output(k)?, img.subgraph_tensor(&body, false, k)?)?;
                    }
                    self.subgraph(b, depth + 1)?;
                    for k in 0..op.n_outputs {
                        self.copy(img.subgraph_tensor(&body, true, k)?, output(k)?)?;
                        self.copy(output(k)?, img.subgraph_tensor(&cond, false, k)?)?;
                    }
                    self.subgraph(c, depth + 1)?;
                }
            }
            _ => return Err(bad("not a control-flow op")),
        }
        Ok(())
    }

    /// The first byte of tensor `t` (a bool condition), from the head or
    /// the image's constants.
    fn byte(&self, t: usize) -> Result<u8, Error> {
        let t = self.img.tensor(t)?;
        let b = match t.storage {
            rl::STORAGE_CONST => self.img.const_data(&t).and_then(|d| d.first().copied()),
            rl::STORAGE_ARENA => self.head.get(t.location).copied(),
            _ => None,
        };
        b.ok_or(Error::Malformed {
            what: "a condition is neither in the head nor constant",
            index: 0,
        })
    }

    /// Copies tensor `from` (head or constant) into tensor `to` (head), as
    /// TFLM's subgraph copies do; nothing when they are one buffer.
    fn copy(&mut self, from: usize, to: usize) -> Result<(), Error> {
        let (f, t) = (self.img.tensor(from)?, self.img.tensor(to)?);
        let n = t.bytes;
        if n == 0 {
            return Ok(());
        }
        let bad = Error::Malformed {
            what: "a subgraph copy leaves the head or differs in size",
            index: to as u32,
        };
        let dst_end = t.location.checked_add(n).filter(|&e| e <= self.head.len());
        if f.bytes != n || t.storage != rl::STORAGE_ARENA || dst_end.is_none() {
            return Err(bad);
        }
        match f.storage {
            rl::STORAGE_CONST => {
                let src = self.img.const_data(&f).ok_or(bad)?;
                self.head
                    .get_mut(t.location..t.location + n)
                    .ok_or(bad)?
                    .copy_from_slice(src);
            }
            rl::STORAGE_ARENA => {
                if f.location
                    .checked_add(n)
                    .is_none_or(|e| e > self.head.len())
                {
                    return Err(bad);
                }
                if f.location != t.location {
                    self.head
                        .copy_within(f.location..f.location + n, t.location);
                }
            }
            _ => return Err(bad),
        }
        Ok(())
    }
}

/// IF, WHILE or CALL_ONCE (op `i`, `depth` calls below subgraph 0): what a
/// resolver holding a control-flow kernel links ([`Resolver`]'s `control`).
pub(crate) fn control(
    run: &mut Run<'_, '_>,
    i: usize,
    op: &OpInfo,
    depth: usize,
) -> Result<(), Error> {
    run.control(i, op, depth)
}
