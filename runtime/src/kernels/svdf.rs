//! SVDF (int8 with int8 or int16 state, and float32), bit-exact with TFLM's
//! reference kernel (`svdf_common.cc`). The activation state is a variable
//! tensor, carried over between invokes like the LSTM's.

use microarena_image::params::SvdfParams;
use microarena_image::{self as rl, dtype};

use super::bytes::{f32_at, i32_at, put_f32, put_i16};
use super::context::{Ctx, OpDataWriter, Prep, state_tensor};
use super::epilogue::{dot_i8, dot_i16x16, dot2_i8, row_dots_i8};
use super::fused::act_f32;
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::dyadic::quantize_ratio;
use crate::error::Error;
use crate::fixedpoint as fx;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    // Activation state.
    state_inputs: &[4],
    ..kernel(opcode::SVDF, prepare, eval)
}];

/// Prepare for SVDF: int8 (int8 or int16 state and time weights) and float32.
pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 5, "SVDF needs 5 inputs")?;
    let input = p.input(0)?;
    let wf = p.input(1)?;
    let wt = p.input(2)?;
    let bias = p.opt_input(3)?;
    let st = p.input(4)?;
    p.need(
        st.storage == rl::STORAGE_VARIABLE,
        "activation state must be a variable tensor",
    )?;
    let rank = p.op.params::<SvdfParams>().rank;
    p.need(rank > 0, "rank must be positive")?;
    let rank = rank as usize;
    p.need(
        input.rank == 2 && out.rank == 2,
        "input and output must be 2-D",
    )?;
    let (batch, n_in) = (input.dim(0), input.dim(1));
    let filters = wf.dim(0);
    let memory = wt.dim(1);
    p.need(filters % rank == 0, "filters not a multiple of rank")?;
    let units = filters / rank;
    p.need(out.dim(0) == batch && out.dim(1) == units, "output shape")?;
    p.need(wf.rank == 2 && wf.dim(1) == n_in, "feature weight shape")?;
    p.need(wt.rank == 2 && wt.dim(0) == filters, "time weight shape")?;
    p.need(
        st.rank == 2 && st.dim(0) == batch && st.dim(1) == memory * filters,
        "state shape",
    )?;
    if let Some(b) = &bias {
        p.need(b.dim(0) == units, "bias shape")?;
    }
    let float = input.dtype == dtype::F32;
    if float {
        p.need(
            wf.dtype == dtype::F32
                && wt.dtype == dtype::F32
                && st.dtype == dtype::F32
                && out.dtype == dtype::F32
                && bias.is_none_or(|b| b.dtype == dtype::F32),
            "float SVDF needs float32 weights, state and output",
        )?;
        p.need(p.op.activation <= 4, "fused activation")?;
    } else {
        p.need(input.dtype == dtype::I8, "only int8 or float32 SVDF")?;
        p.need(
            wf.dtype == dtype::I8
                && (wt.dtype == dtype::I16 || wt.dtype == dtype::I8)
                && st.dtype == wt.dtype
                && out.dtype == dtype::I8
                && bias.is_none_or(|b| b.dtype == dtype::I32),
            "int8 SVDF types",
        )?;
        // The scale products are float, as in TFLM.
        let e1 = input.scale * wf.scale / st.scale;
        let e2 = st.scale * wt.scale / out.scale;
        for e in [e1, e2] {
            let (m, s) = quantize_ratio(e, 1.0, 1.0);
            words.push(m);
            words.push(s);
        }
    }
    let want = rl::op_scratch_bytes(
        rl::opcode::SVDF,
        out.dtype,
        (batch * filters) as u32,
        (batch * units) as u32,
    ) as usize;
    alloc.request_scratch(p.index, want, p.op.scratch)?;
    Ok(())
}

/// `EvalIntegerSvdfReference` / `EvalFloatSvdfReference`.
pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let bad = c.fail();
    let (input, x) = c.input(0);
    let (wf_t, wf) = c.input(1);
    let (wt_t, wt) = c.input(2);
    let (bias_t, bias) = c.input(3);
    let has_bias = bias_t.bytes > 0;
    let (st_t, (lo, hi)) = state_tensor(c, 4, "state missing")?;
    let out_t = c.output_info();
    let rank = c.op.params::<SvdfParams>().rank.max(1) as usize;
    let (batch, n_in) = (input.dim(0), input.dim(1));
    let filters = wf_t.dim(0);
    let memory = wt_t.dim(1);
    let units = filters / rank;
    let (m1, s1, m2, s2) = (c.word(0), c.word(1), c.word(2), c.word(3));
    let state = c
        .vars
        .get_mut(lo..hi)
        .ok_or(bad("state outside the variable region"))?;
    let len = batch * filters * memory;
    let float = input.dtype == dtype::F32;
    let wide = st_t.dtype == dtype::I16;
    let esize = if float {
        4
    } else if wide {
        2
    } else {
        1
    };
    // Shift the whole state left by one element (the oldest entry drops out).
    if len > 0 {
        state.copy_within(esize..len * esize, 0);
    }
    let (scratch, _) = c
        .scratch
        .split_at_mut_checked(4 * batch * filters)
        .ok_or(bad("scratch too small"))?;
    if float {
        for b in 0..batch {
            for j in 0..filters {
                let mut dot = 0.0f32;
                for k in 0..n_in {
                    dot += f32_at(wf, j * n_in + k) * f32_at(x, b * n_in + k);
                }
                put_f32(state, (b * filters + j) * memory + memory - 1, dot);
            }
        }
        for b in 0..batch {
            for i in 0..filters {
                let mut acc = 0.0f32;
                for j in 0..memory {
                    acc += f32_at(wt, i * memory + j)
                        * f32_at(state, b * memory * filters + i * memory + j);
                }
                put_f32(scratch, b * filters + i, acc);
            }
        }
        for b in 0..batch {
            for i in 0..units {
                let mut v = if has_bias { f32_at(bias, i) } else { 0.0 };
                for j in 0..rank {
                    v += f32_at(scratch, b * filters + i * rank + j);
                }
                let v = match c.op.activation {
                    1 => v.max(0.0),
                    2 => act_f32(v, -1.0, 1.0),
                    3 => act_f32(v, 0.0, 6.0),
                    4 => libm::tanhf(v),
                    _ => v,
                };
                put_f32(c.out, b * units + i, v);
            }
        }
        return Ok(());
    }
    let bias_of = |i: usize| if has_bias { i32_at(bias, i) } else { 0 };
    eval_int(
        (x, wf, wt),
        (state, c.out),
        (batch, n_in, filters, memory, rank),
        (
            input.zero_point.wrapping_neg(),
            st_t.zero_point,
            out_t.zero_point,
        ),
        [m1, s1, m2, s2],
        (wide, bias_of),
    );
    Ok(())
}

/// The int8 SVDF with int8 or int16 (`wide`) state: each pair of filters'
/// feature dot in one pass over the input, written to the newest state
/// column; then, per unit, its filters' time dots (state row against time
/// weights), the bias and the requantization in one pass over the state.
/// The same integer sums as TFLM's reference (whose scratch round trips
/// only regroup wrapping int32 additions), without a call or a scratch
/// store per filter.
fn eval_int(
    (x, wf, wt): (&[u8], &[u8], &[u8]),
    (state, out): (&mut [u8], &mut [u8]),
    (batch, n_in, filters, memory, rank): (usize, usize, usize, usize, usize),
    (x_off, st_zp, out_zp): (i32, i32, i32),
    [m1, s1, m2, s2]: [i32; 4],
    (wide, bias_of): (bool, impl Fn(usize) -> i32),
) {
    let newest = memory.checked_sub(1);
    // The state's range (TFLM clamps before adding its zero point).
    let (lo, hi) = if wide { (-32768, 32767) } else { (-128, 127) };
    for b in 0..batch {
        let xb = b * n_in;
        let mut put = |f: usize, dot: i32| {
            let v = st_zp.wrapping_add(fx::mbqm(dot, m1, s1).clamp(lo, hi));
            let at = newest.map(|m| (b * filters + f) * memory + m);
            match at {
                Some(at) if wide => put_i16(state, at, v),
                Some(at) => {
                    if let Some(s) = state.get_mut(at) {
                        *s = v as i8 as u8;
                    }
                }
                None => {}
            }
        };
        let mut r = 0;
        while r + 1 < filters {
            let (d0, d1) = dot2_i8(x, xb, wf, (r * n_in, (r + 1) * n_in), n_in, x_off);
            put(r, d0);
            put(r + 1, d1);
            r += 2;
        }
        if r < filters {
            put(r, dot_i8(x, xb, wf, r * n_in, n_in, x_off));
        }
    }
    let units = filters / rank.max(1);
    for b in 0..batch {
        let (mut unit, mut j, mut v) = (0, 0, bias_of(0));
        let dst = out.get_mut(b * units..).unwrap_or(&mut []);
        let mut emit = |acc: i32| {
            v = v.wrapping_add(acc);
            j += 1;
            if j == rank {
                let y = fx::mbqm(v, m2, s2).wrapping_add(out_zp).clamp(-128, 127);
                if let Some(o) = dst.get_mut(unit) {
                    *o = y as i8 as u8;
                }
                unit += 1;
                (j, v) = (0, bias_of(unit));
            }
        };
        if wide {
            // Σ w·(s − zp) = Σ w·s − zp·Σ w over int16 pairs, wrapping alike.
            fn row(t: &[u8], at: usize, memory: usize) -> &[u8] {
                t.get(at * 2..(at + memory) * 2).unwrap_or(&[])
            }
            for f in 0..filters {
                let sr = row(state, (b * filters + f) * memory, memory);
                let wr = row(wt, f * memory, memory);
                let wsum = if st_zp == 0 {
                    0
                } else {
                    let w = wr.get(..sr.len().min(wr.len())).unwrap_or(&[]);
                    w.as_chunks::<2>().0.iter().fold(0i32, |a, w| {
                        a.wrapping_add(i32::from(i16::from_le_bytes(*w)))
                    })
                };
                emit(dot_i16x16(sr, wr).wrapping_sub(st_zp.wrapping_mul(wsum)));
            }
        } else {
            let rows = state.get(b * filters * memory..).unwrap_or(&[]);
            row_dots_i8(
                (rows, wt),
                (filters, memory),
                st_zp.wrapping_neg(),
                &mut emit,
            );
        }
    }
}
