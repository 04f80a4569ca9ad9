//! BATCH_MATMUL (float32, int8, int16), as TFLM's reference kernel
//! (tflite-micro 90b983c2 `micro/kernels/batch_matmul.cc`,
//! `kernels/internal/reference/batch_matmul.h`). Either operand may be a
//! variable tensor (attention's `Q·Kᵀ` and `softmax·V`).
//!
//! `out[b, m, n] = Σ_k L[b, m, k] · R[b, k, n]` over batch dims of rank up to
//! 3 that broadcast (a dim of 1 repeats), `adj_x` / `adj_y` reading an operand
//! stored transposed. TFLM copies the non-adjoint right operand (and an
//! adjoint left one) transposed into persistent buffers first; that changes
//! only where it reads, not the sums, so this kernel indexes in place and
//! needs no scratch. Float sums run over `k` from 0 in TFLM's order;
//! int8 accumulates `(R − zp_r)·(L − zp_l)` in int32 and int16 in int64
//! (zero points 0), then one multiplier `scale_l · scale_r / scale_out` (the
//! scale product in float, as `GetQuantizedConvolutionMultipler`), the output
//! zero point and the type's range (no fused activation).

use microarena_image::params::BatchMatMulParams;
use microarena_image::{dtype, opcode};

use super::bytes::{f32_at, i8_at, i16_at, put_f32, put_i8, put_i16};
use super::context::{Ctx, OpDataWriter, Prep};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[kernel(opcode::BATCH_MATMUL, prepare, eval)];

/// Batch dims after extending both operands to rank 5 (TFLM's limit).
const BATCH_DIMS: usize = 3;

/// The geometry both Prepare and Eval derive: the operands' batch dims
/// extended to [`BATCH_DIMS`], the output's, and M, K, N.
struct Geometry {
    lhs_batch: [usize; BATCH_DIMS],
    rhs_batch: [usize; BATCH_DIMS],
    out_batch: [usize; BATCH_DIMS],
    m: usize,
    k: usize,
    n: usize,
    /// K as the right operand has it (must equal `k`).
    rhs_k: usize,
}

fn geometry(lhs: &TensorInfo, rhs: &TensorInfo, params: BatchMatMulParams) -> Geometry {
    let batch = |t: &TensorInfo| -> [usize; BATCH_DIMS] {
        let lead = t.rank.saturating_sub(2);
        core::array::from_fn(|i| {
            let skip = BATCH_DIMS.saturating_sub(lead);
            if i < skip { 1 } else { t.dim(i - skip) }
        })
    };
    let (lhs_batch, rhs_batch) = (batch(lhs), batch(rhs));
    let rows = |t: &TensorInfo| {
        (
            t.dim(t.rank.saturating_sub(2)),
            t.dim(t.rank.saturating_sub(1)),
        )
    };
    let (l0, l1) = rows(lhs);
    let (r0, r1) = rows(rhs);
    let (m, k) = if params.adj_x { (l1, l0) } else { (l0, l1) };
    let (rhs_k, n) = if params.adj_y { (r1, r0) } else { (r0, r1) };
    Geometry {
        out_batch: {
            let mut b = lhs_batch;
            for (o, &r) in b.iter_mut().zip(&rhs_batch) {
                *o = (*o).max(r);
            }
            b
        },
        lhs_batch,
        rhs_batch,
        m,
        k,
        n,
        rhs_k,
    }
}

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "BATCH_MATMUL needs 2 inputs")?;
    let lhs = p.input(0)?;
    let rhs = p.input(1)?;
    p.need(
        lhs.dtype == rhs.dtype
            && lhs.dtype == out.dtype
            && matches!(out.dtype, dtype::F32 | dtype::I8 | dtype::I16),
        "BATCH_MATMUL: float32, int8 or int16, both operands as the output",
    )?;
    p.need(
        (2..=5).contains(&lhs.rank) && (2..=5).contains(&rhs.rank),
        "BATCH_MATMUL operands are 2-D to 5-D",
    )?;
    let g = geometry(&lhs, &rhs, p.op.params());
    let broadcast = g
        .lhs_batch
        .iter()
        .zip(&g.rhs_batch)
        .all(|(&l, &r)| l == r || l == 1 || r == 1);
    p.need(broadcast, "BATCH_MATMUL batch dims do not broadcast")?;
    p.need(g.k == g.rhs_k, "BATCH_MATMUL operands differ in depth")?;
    let rank = lhs.rank.max(rhs.rank);
    let lead = rank - 2;
    let out_ok = out.rank == rank
        && g.out_batch
            .iter()
            .skip(BATCH_DIMS - lead)
            .enumerate()
            .all(|(i, &d)| out.dim(i) == d)
        && out.dim(rank - 2) == g.m
        && out.dim(rank - 1) == g.n;
    p.need(out_ok, "BATCH_MATMUL output shape")?;
    if out.dtype != dtype::F32 {
        p.need(
            out.dtype != dtype::I16
                || (lhs.zero_point == 0 && rhs.zero_point == 0 && out.zero_point == 0),
            "int16 BATCH_MATMUL needs zero points of 0",
        )?;
        let (m, s) = quantize_ratio(lhs.scale * rhs.scale, 1.0, out.scale);
        words.push(m);
        words.push(s);
    }
    Ok(())
}

/// Offset of batch `b` (output batch coordinates) in an operand with batch
/// dims `dims` and `per` elements per matrix: broadcast dims contribute 0.
fn batch_offset(b: [usize; BATCH_DIMS], dims: [usize; BATCH_DIMS], per: usize) -> usize {
    let mut off = 0;
    for (&d, &bi) in dims.iter().zip(&b) {
        off = off * d + if d == 1 { 0 } else { bi };
    }
    off * per
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (lhs, xl) = c.input(0);
    let (rhs, xr) = c.input(1);
    let out = c.output_info();
    let params: BatchMatMulParams = c.op.params();
    let g = geometry(&lhs, &rhs, params);
    let (m, k, n) = (g.m, g.k, g.n);
    // Element index of L[m', k'] and R[k', n'] within one matrix.
    let l_at = |mi: usize, ki: usize| {
        if params.adj_x {
            ki * m + mi
        } else {
            mi * k + ki
        }
    };
    let r_at = |ki: usize, ni: usize| {
        if params.adj_y {
            ni * k + ki
        } else {
            ki * n + ni
        }
    };
    let (ob, quantized) = (g.out_batch, out.dtype != dtype::F32);
    let (mult, shift) = if quantized {
        (c.word(0), c.word(1))
    } else {
        (0, 0)
    };
    let (lo, hi) = if out.dtype == dtype::I16 {
        (-32768, 32767)
    } else {
        (-128, 127)
    };
    let (zl, zr, zo) = (lhs.zero_point, rhs.zero_point, out.zero_point);
    let mut o = 0;
    for b0 in 0..ob[0] {
        for b1 in 0..ob[1] {
            for b2 in 0..ob[2] {
                let b = [b0, b1, b2];
                let lb = batch_offset(b, g.lhs_batch, m * k);
                let rb = batch_offset(b, g.rhs_batch, k * n);
                for mi in 0..m {
                    for ni in 0..n {
                        match out.dtype {
                            dtype::F32 => {
                                let mut total = 0.0f32;
                                for ki in 0..k {
                                    total += f32_at(xr, rb + r_at(ki, ni))
                                        * f32_at(xl, lb + l_at(mi, ki));
                                }
                                put_f32(c.out, o, total);
                            }
                            dtype::I16 => {
                                let mut total = 0i64;
                                for ki in 0..k {
                                    let r = i16_at(xr, rb + r_at(ki, ni)).wrapping_sub(zr);
                                    let l = i16_at(xl, lb + l_at(mi, ki)).wrapping_sub(zl);
                                    total = total.wrapping_add(i64::from(r) * i64::from(l));
                                }
                                let v = fx::mbqm_i64(total, mult, shift).wrapping_add(zo);
                                put_i16(c.out, o, v.clamp(lo, hi));
                            }
                            _ => {
                                let mut total = 0i32;
                                for ki in 0..k {
                                    let r = i8_at(xr, rb + r_at(ki, ni)).wrapping_sub(zr);
                                    let l = i8_at(xl, lb + l_at(mi, ki)).wrapping_sub(zl);
                                    total = total.wrapping_add(r.wrapping_mul(l));
                                }
                                let v = fx::mbqm(total, mult, shift).wrapping_add(zo);
                                put_i8(c.out, o, v.clamp(lo, hi));
                            }
                        }
                        o += 1;
                    }
                }
            }
        }
    }
    Ok(())
}
