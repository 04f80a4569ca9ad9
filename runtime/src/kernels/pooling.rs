//! AVERAGE_POOL_2D and MAX_POOL_2D (int8 and float32) and L2_POOL_2D
//! (float32 only, `micro/kernels/l2_pool_2d.cc`: `sqrt(Σ x² / count)` over
//! the window's in-image elements, summed in row order, then the fused
//! activation — exact, as `sqrt` is correctly rounded), as TFLM's reference
//! pools.

use microarena_image::{dtype, opcode};

use super::bytes::{f32_at, i8_at, put_f32, put_i8};
use super::context::{Ctx, OpDataWriter, Prep};
use super::fused::{act_f32, act_range_f32, act_range_i8};
use super::window::{Geo, check_window};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::AVERAGE_POOL_2D, prepare, eval),
    kernel(opcode::MAX_POOL_2D, prepare, eval),
    kernel(opcode::L2_POOL_2D, prepare, eval),
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

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let out = c.output_info();
    let g = Geo::new(c, &input, &out);
    let max = c.op.opcode == opcode::MAX_POOL_2D;
    let l2 = c.op.opcode == opcode::L2_POOL_2D;
    let float = out.dtype == dtype::F32;
    let (lo, hi) = (c.word(0), c.word(1));
    let (flo, fhi) = (f32::from_bits(lo as u32), f32::from_bits(hi as u32));
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                for ch in 0..g.oc {
                    let ix0 = (ox as i32).wrapping_mul(g.sw).wrapping_sub(g.pad_w);
                    let iy0 = (oy as i32).wrapping_mul(g.sh).wrapping_sub(g.pad_h);
                    let fx0 = ix0.wrapping_neg().max(0);
                    let fx1 = g.fw.min(g.iw.wrapping_sub(ix0));
                    let fy0 = iy0.wrapping_neg().max(0);
                    let fy1 = g.fh.min(g.ih.wrapping_sub(iy0));
                    let oi = g.out_index(b, oy, ox, ch);
                    let mut acc = 0i32;
                    let mut count = 0i32;
                    let mut total = 0.0f32;
                    let mut fcount = 0.0f32;
                    let mut mx = i32::from(i8::MIN);
                    let mut fmx = f32::MIN;
                    for ky in fy0..fy1 {
                        for kx in fx0..fx1 {
                            let ii = g.in_index(b, iy0.wrapping_add(ky), ix0.wrapping_add(kx), ch);
                            if float {
                                let v = f32_at(x, ii);
                                total += if l2 { v * v } else { v };
                                fcount += 1.0;
                                if fmx < v {
                                    fmx = v;
                                }
                            } else {
                                let v = i8_at(x, ii);
                                acc = acc.wrapping_add(v);
                                count += 1;
                                mx = mx.max(v);
                            }
                        }
                    }
                    match (float, max) {
                        (true, true) => put_f32(c.out, oi, act_f32(fmx, flo, fhi)),
                        (true, false) => {
                            if fcount == 0.0 {
                                return Err(c.fail()("empty pooling window"));
                            }
                            let r = if l2 {
                                libm::sqrtf(total / fcount)
                            } else {
                                total / fcount
                            };
                            put_f32(c.out, oi, act_f32(r, flo, fhi));
                        }
                        (false, true) => put_i8(c.out, oi, mx.max(lo).min(hi)),
                        (false, false) => {
                            if count == 0 {
                                return Err(c.fail()("empty pooling window"));
                            }
                            let avg = if acc > 0 {
                                acc.wrapping_add(count / 2) / count
                            } else {
                                acc.wrapping_sub(count / 2) / count
                            };
                            put_i8(c.out, oi, avg.max(lo).min(hi));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}
