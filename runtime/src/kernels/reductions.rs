//! MEAN: int8 over the spatial axes (TFLM's `reference_integer_ops::Mean`)
//! and float32 over any axes, accumulating in a planned scratch buffer.

use microarena_image::params::MeanParams;
use microarena_image::{self as rl, dtype};

use super::bytes::{f32_at, i8_at, put_f32, put_i8};
use super::context::{Ctx, OpDataWriter, Prep, same_element_size};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[kernel(opcode::MEAN, prepare, eval)];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _words: &mut OpDataWriter<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (q, f) = (out.dtype == dtype::I8, out.dtype == dtype::F32);
    let input = p.input(0)?;
    same_element_size(p, &input, out)?;
    p.need(input.dtype == out.dtype && (q || f), "only int8 or float32")?;
    let MeanParams {
        axis_mask: mask,
        keep_dims: keep,
    } = p.op.params();
    p.check(
        mask >= 0 && mask >> input.rank == 0,
        "reduction axes outside the input's rank",
    )?;
    let mut n = 1usize;
    for k in 0..input.rank {
        if mask & (1 << k) == 0 {
            n = n.saturating_mul(input.dim(k));
        }
    }
    p.need(n == out.elements(), "reduced shape")?;
    if q {
        p.need(
            keep && input.rank == 4 && mask == 0b0110,
            "int8 MEAN only over axes 1,2 with keep_dims",
        )?;
    }
    let want = rl::op_scratch_bytes(p.op.opcode, out.dtype, out.elements() as u32, 0) as usize;
    alloc.request_scratch(p.index, want, p.op.scratch)?;
    Ok(())
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let mask = c.op.params::<MeanParams>().axis_mask;
    if out.dtype == dtype::I8 {
        // reference_integer_ops::Mean, 4-D over axes 1 and 2.
        let (b, h, w, d) = (input.dim(0), input.dim(1), input.dim(2), input.dim(3));
        let n = (h * w) as i32;
        let (m, s) = fx::quantize_multiplier(f64::from(input.scale) / f64::from(out.scale));
        for bb in 0..b {
            for ch in 0..d {
                let mut acc = 0i32;
                for y in 0..h {
                    for xx in 0..w {
                        acc = acc.wrapping_add(
                            i8_at(x, ((bb * h + y) * w + xx) * d + ch)
                                .wrapping_sub(input.zero_point),
                        );
                    }
                }
                acc = fx::mbqm(acc, m, s);
                if n > 0 {
                    acc = if acc > 0 {
                        acc.wrapping_add(n / 2) / n
                    } else {
                        acc.wrapping_sub(n / 2) / n
                    };
                }
                put_i8(
                    c.out,
                    bb * d + ch,
                    acc.wrapping_add(out.zero_point).clamp(-128, 127),
                );
            }
        }
        return Ok(());
    }
    // Float: TFLM's generic Mean, accumulating in input order into the scratch.
    let os = out.elements();
    c.scratch.fill(0);
    let mut count = 1usize;
    for k in 0..input.rank {
        if mask & (1 << k) != 0 {
            count *= input.dim(k);
        }
    }
    for i in 0..input.elements() {
        let mut rem = i;
        let mut oi = 0usize;
        let mut stride = 1usize;
        for k in (0..input.rank).rev() {
            let d = input.dim(k).max(1);
            let coord = rem % d;
            rem /= d;
            if mask & (1 << k) == 0 {
                oi += coord * stride;
                stride *= d;
            }
        }
        let v = f32_at(c.scratch, oi) + f32_at(x, i);
        put_f32(c.scratch, oi, v);
    }
    for i in 0..os {
        put_f32(c.out, i, f32_at(c.scratch, i) / count as f32);
    }
    Ok(())
}
