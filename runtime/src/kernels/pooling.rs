//! AVERAGE_POOL_2D and MAX_POOL_2D (int8 and float32) and L2_POOL_2D
//! (float32 only, `micro/kernels/l2_pool_2d.cc`: `sqrt(Σ x² / count)` over
//! the window's in-image elements, summed in row order, then the fused
//! activation — exact, as `sqrt` is correctly rounded), as TFLM's reference
//! pools.

use microarena_image::{dtype, opcode};

use super::bytes::{f32_at, i8_at, i32_at, put_f32, put_i8, put_i32};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_i8};
use super::window::{Geo, check_window};
use super::{Kernel, kernel, variant};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    // The float32 pools are a branch of their own (linked only for a model
    // that has one); L2_POOL_2D is float32 only.
    Kernel {
        variants: [variant(dtype::F32, "float32", eval_f32), None],
        ..kernel(opcode::AVERAGE_POOL_2D, prepare, eval)
    },
    Kernel {
        variants: [variant(dtype::F32, "float32", eval_f32), None],
        ..kernel(opcode::MAX_POOL_2D, prepare, eval)
    },
    kernel(opcode::L2_POOL_2D, prepare, eval_f32),
];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (q, f) = (out.dtype == dtype::I8, out.dtype == dtype::F32);
    let input = p.input(0)?;
    p.need(input.dtype == out.dtype && (q || f), "only int8 or float32")?;
    p.need(
        f || p.op.opcode != opcode::L2_POOL_2D,
        "L2_POOL_2D: float32 only",
    )?;
    p.need(input.rank == 4 && out.rank == 4, "tensors must be 4-D")?;
    p.need(
        input.dim(0) == out.dim(0) && input.dim(3) == out.dim(3),
        "shape mismatch",
    )?;
    check_window(p, &input, out, None)?;
    let (lo, hi) = if q {
        act_range_i8(p.op.activation, out).ok_or(p.err("fused activation"))?
    } else {
        let (a, b) = act_range_f32(p.op.activation).ok_or(p.err("fused activation"))?;
        (a.to_bits() as i32, b.to_bits() as i32)
    };
    words.push(lo);
    words.push(hi);
    Ok(())
}

/// The int8 AVERAGE_POOL_2D and MAX_POOL_2D.
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let g = Geo::new(c, &input, &out);
    let max = c.op.opcode == opcode::MAX_POOL_2D;
    let (lo, hi) = (c.word(0), c.word(1));
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ch in 0..g.oc {
                    let w = Window::new(&g, ox, oy);
                    let oi = g.out_index(b, oy, ox, ch);
                    let mut acc = 0i32;
                    let mut count = 0i32;
                    let mut mx = i32::from(i8::MIN);
                    w.each(&g, b, ch, |ii| {
                        let v = i8_at(x, ii);
                        acc = acc.wrapping_add(v);
                        count += 1;
                        mx = mx.max(v);
                    });
                    let r = if max {
                        mx
                    } else if count == 0 {
                        return Err(c.fail()("empty pooling window"));
                    } else if acc > 0 {
                        acc.wrapping_add(count / 2) / count
                    } else {
                        acc.wrapping_sub(count / 2) / count
                    };
                    put_i8(c.out, oi, r.max(lo).min(hi));
                }
            }
        }
    }
    Ok(())
}

/// The float32 pools, L2_POOL_2D among them: a type branch of its own.
fn eval_f32(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let g = Geo::new(c, &input, &out);
    let max = c.op.opcode == opcode::MAX_POOL_2D;
    let l2 = c.op.opcode == opcode::L2_POOL_2D;
    let (lo, hi) = (
        f32::from_bits(c.word(0) as u32),
        f32::from_bits(c.word(1) as u32),
    );
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ch in 0..g.oc {
                    let w = Window::new(&g, ox, oy);
                    let oi = g.out_index(b, oy, ox, ch);
                    let mut total = 0.0f32;
                    let mut count = 0.0f32;
                    let mut mx = f32::MIN;
                    w.each(&g, b, ch, |ii| {
                        let v = f32_at(x, ii);
                        total += if l2 { v * v } else { v };
                        count += 1.0;
                        if mx < v {
                            mx = v;
                        }
                    });
                    let r = if max {
                        mx
                    } else if count == 0.0 {
                        return Err(c.fail()("empty pooling window"));
                    } else if l2 {
                        libm::sqrtf(total / count)
                    } else {
                        total / count
                    };
                    put_f32(c.out, oi, act_f32(r, lo, hi));
                }
            }
        }
    }
    Ok(())
}

/// Row `r` (`x`: W×C values of `band`'s type) of the input of a global
/// AVERAGE_POOL_2D run as a banded stage's reducer
/// (`microarena_image::stage::reduces`: one window covering the whole
/// input, unpadded): each channel's sum in `acc` (zeroed at row 0) takes the
/// row's taps in the window's order, so after the last of `in_h` rows the
/// sums, counts and averages are [`eval`]'s and [`eval_f32`]'s, written to
/// `out` with the fused activation `(lo, hi)` (OpData words 0 and 1).
pub(crate) fn global_average_row(
    band: &TensorInfo,
    x: &[u8],
    (r, in_h): (usize, usize),
    acc: &mut [u8],
    out: &mut [u8],
    (lo, hi): (i32, i32),
) {
    let (w, ch) = (band.dim(2), band.dim(3));
    let float = band.dtype == dtype::F32;
    if r == 0 {
        acc.fill(0);
    }
    for c in 0..ch {
        for kx in 0..w {
            let i = kx * ch + c;
            if float {
                put_f32(acc, c, f32_at(acc, c) + f32_at(x, i));
            } else {
                put_i32(acc, c, i32_at(acc, c).wrapping_add(i8_at(x, i)));
            }
        }
    }
    if r + 1 != in_h {
        return;
    }
    let count = in_h.saturating_mul(w);
    for c in 0..ch {
        if float {
            let (lo, hi) = (f32::from_bits(lo as u32), f32::from_bits(hi as u32));
            put_f32(out, c, act_f32(f32_at(acc, c) / count as f32, lo, hi));
        } else {
            let (acc, n) = (i32_at(acc, c), count as i32);
            let v = if acc > 0 {
                acc.wrapping_add(n / 2) / n
            } else {
                acc.wrapping_sub(n / 2) / n
            };
            put_i8(out, c, v.max(lo).min(hi));
        }
    }
}

/// The taps of one output pixel's window that lie inside the input.
struct Window {
    ix0: i32,
    iy0: i32,
    x: (i32, i32),
    y: (i32, i32),
}

impl Window {
    fn new(g: &Geo, ox: usize, oy: usize) -> Self {
        let ix0 = (ox as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
        let iy0 = (oy as i32).wrapping_mul(g.sh).wrapping_sub(g.pad_h);
        Window {
            ix0,
            iy0,
            x: (ix0.wrapping_neg().max(0), g.fw.min(g.iw.wrapping_sub(ix0))),
            y: (iy0.wrapping_neg().max(0), g.fh.min(g.ih.wrapping_sub(iy0))),
        }
    }

    /// Calls `f` with the input index of each tap, row by row.
    #[inline(always)]
    fn each(&self, g: &Geo, b: usize, ch: usize, mut f: impl FnMut(usize)) {
        for ky in self.y.0..self.y.1 {
            for kx in self.x.0..self.x.1 {
                f(g.in_index(b, self.iy0.wrapping_add(ky), self.ix0.wrapping_add(kx), ch));
            }
        }
    }
}
