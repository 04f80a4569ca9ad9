//! The interpreter: Prepare at construction, then Invoke as often as wanted.

use microarena_image as rl;

use crate::arena::{ArenaAllocator, MemoryUsage};
use crate::banded;
use crate::error::Error;
use crate::image::{Image, OpInfo, TensorInfo};
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
        it.reset()?;
        Ok(it)
    }

    /// Resets every variable tensor (LSTM/SVDF state) as TFLM's
    /// `MicroInterpreter::Reset` does: int8 tensors to their zero point, all
    /// others to 0. Nothing moves; construction already did this once.
    pub fn reset(&mut self) -> Result<(), Error> {
        for i in 0..self.image.tensor_count() {
            let t = self.image.tensor(i)?;
            if t.storage != rl::STORAGE_VARIABLE {
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

    /// Bytes of graph input `i`, to fill before [`Interpreter::invoke`].
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

    /// Runs every operator once.
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
        let tail: &[u8] = tail;
        let tail_start = tail_start + var_len;
        // Prepare allocated OpData in operator order from the top of the tail
        // down, or it sits in the image's block in operator order.
        let mut cursor = tail_end;
        let mut at = 0;
        let block = self.image.opdata_block();
        let img = &self.image;
        let resolver = self.kernels;
        let mut opdata_of = |i: usize, op: &OpInfo| -> Result<&[u8], Error> {
            let out = img.tensor(usize::from(op.output))?;
            let size = kernels::prepared_opdata_bytes(resolver, img, i as u16, op, &out)?;
            Ok(if img.opdata_in_flash() {
                at += size;
                block.get(at - size..at).unwrap_or(&[])
            } else {
                cursor = cursor.saturating_sub(size);
                tail.get(
                    cursor.saturating_sub(tail_start)..cursor.saturating_sub(tail_start) + size,
                )
                .unwrap_or(&[])
            })
        };
        let mut i = 0;
        while i < img.op_count() {
            let op = img.op(i)?;
            if op.exec != rl::EXEC_WHOLE {
                // A banded stage runs as one step, row by row (checked at construction).
                let last = banded::stage_end(img, i)?;
                let mut opdata: [&[u8]; rl::MAX_STAGE_OPS] = [&[]; rl::MAX_STAGE_OPS];
                for (slot, j) in opdata.iter_mut().zip(i..=last) {
                    *slot = opdata_of(j, &img.op(j)?)?;
                }
                let opdata = opdata.get(..=last - i).unwrap_or(&[]);
                let stages = resolver.banded.ok_or(Error::KernelNotLinked {
                    op_index: i as u16,
                    opcode: op.opcode,
                    variant: kernels::BANDED_VARIANT,
                })?;
                (stages.run)(resolver, img, head, vars, i, opdata)?;
                i = last + 1;
                continue;
            }
            let opdata = opdata_of(i, &op)?;
            if op.in_place == Some(0) && rl::opcode::in_place_by_rows(op.opcode) {
                // A windowed op over its input, row by row (checked at construction).
                let rows = resolver.rows_in_place.ok_or(Error::KernelNotLinked {
                    op_index: i as u16,
                    opcode: op.opcode,
                    variant: kernels::ROWS_VARIANT,
                })?;
                (rows.run)(resolver, img, head, vars, i, opdata)?;
                i += 1;
                continue;
            }
            if op.in_place == Some(0) && rl::opcode::is_alias_op(op.opcode) {
                // An alias (RESHAPE, SQUEEZE, EXPAND_DIMS over its input's
                // bytes, checked at construction): the output is already there.
                i += 1;
                continue;
            }
            // Every output in the head is written by the op: carve them all.
            let mut out_ranges = [(0usize, 0usize); rl::MAX_OP_OUTPUTS];
            for (k, r) in out_ranges.iter_mut().enumerate().take(op.n_outputs) {
                let t = match op.output_tensor(k) {
                    Some(t) => img.tensor(usize::from(t))?,
                    None => break,
                };
                if t.storage == rl::STORAGE_ARENA {
                    *r = (t.location, t.bytes);
                }
            }
            let n_out = op.n_outputs.min(rl::MAX_OP_OUTPUTS);
            let (out_buf, more, scratch, pieces) =
                kernels::carve(head, out_ranges.get(..n_out).unwrap_or(&[]), op.scratch).ok_or(
                    Error::Malformed {
                        what: "outputs and scratch overlap or leave the head",
                        index: i as u32,
                    },
                )?;
            let mut ctx = Ctx {
                img,
                op,
                index: i as u16,
                pieces,
                out: out_buf,
                more,
                scratch,
                opdata,
                vars: &mut *vars,
                band: None,
                in_place: op.in_place,
            };
            kernels::eval(resolver, &mut ctx)?;
            i += 1;
        }
        Ok(())
    }
}
