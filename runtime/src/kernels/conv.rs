//! CONV_2D (int8 per-channel, grouped, and float32), as TFLM's reference
//! `Conv`.

use microarena_image::dtype;

use super::bytes::f32_at;
use super::context::{Ctx, OpDataWriter, Prep};
use super::epilogue::{Epilogue, check_operands, dot_i8, dot4_i8, push_opdata, sum_i8};
use super::window::{Geo, check_nhwc_filter, check_window};
use super::{Kernel, kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;
use microarena_image::opcode;

/// This family's entries in the kernel registry.
pub(super) const KERNELS: &[Kernel] = &[Kernel {
    channels: super::epilogue::output_channels,
    ..kernel(opcode::CONV_2D, prepare, eval)
}];

pub(crate) fn prepare(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    _alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    let (input, filter) = check_operands(p, out)?;
    check_nhwc_filter(p, &input, &filter, out)?;
    let cin_f = filter.dim(3);
    p.need(filter.dim(0) == out.dim(3), "filter output channels")?;
    p.need(
        cin_f > 0 && input.dim(3) % cin_f == 0,
        "filter input channels",
    )?;
    let groups = input.dim(3) / cin_f;
    p.need(groups > 0 && out.dim(3).is_multiple_of(groups), "groups")?;
    check_window(p, &input, out, Some(&filter))?;
    push_opdata(
        p,
        out,
        (&input, &filter),
        out.last_dim() as u32,
        false,
        words,
    )
}

pub(crate) fn eval(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (input, x) = c.input(0);
    let (filter, w) = c.input(1);
    let end = Epilogue::new(c, c.input(2));
    let out = c.output_info();
    let g = Geo::with_filter(c, &input, &out, &filter);
    let fic = filter.dim(3);
    let taps = g.fh as usize * g.fw as usize;
    let groups = g.ic / fic.max(1);
    let per_group = g.oc / groups.max(1);
    let float = out.dtype == dtype::F32;
    let in_off = input.zero_point.wrapping_neg();
    if !float && groups == 1 {
        conv_i8_by_four(c, &g, (x, w), &end, in_off, (taps, fic));
    }
    for b in 0..g.batches {
        for oy in 0..g.oh {
            for ox in 0..g.ow {
                let first = if !float && groups == 1 {
                    g.oc / 4 * 4
                } else {
                    0
                };
                for oc in first..g.oc {
                    let group = oc / per_group.max(1);
                    let oi = g.out_index(b, oy, ox, oc);
                    // Filter [oc][ky][kx][ic]: tap t of channel oc starts at (oc·taps + t)·fic.
                    let fbase = |tap: usize| (oc * taps + tap) * fic;
                    if float {
                        let mut total = 0.0f32;
                        g.for_each_tap(b, oy, ox, group * fic, |tap, ii| {
                            for ic in 0..fic {
                                total += f32_at(x, ii + ic) * f32_at(w, fbase(tap) + ic);
                            }
                        });
                        end.put_f32(c.out, oi, oc, total);
                    } else {
                        let mut acc = 0i32;
                        g.for_each_tap(b, oy, ox, group * fic, |tap, ii| {
                            acc = acc.wrapping_add(dot_i8(x, ii, w, fbase(tap), fic, in_off));
                        });
                        end.put_i8(c.out, oi, oc, oc, acc);
                    }
                }
            }
        }
    }
    Ok(())
}

/// int8 CONV_2D without groups, output channels four at a time (the
/// channels past the last multiple of four are left to the caller).
/// `Σ w·(x + in_off)` is taken as `Σ w·x + in_off·Σw`; `Σw` over the whole
/// filter is computed once per four channels, and again over the taps that
/// fall inside the input only where padding cuts some off, so the inner loop
/// carries the four products alone.
fn conv_i8_by_four(
    c: &mut Ctx<'_, '_>,
    g: &Geo,
    (x, w): (&[u8], &[u8]),
    end: &Epilogue<'_>,
    in_off: i32,
    (taps, fic): (usize, usize),
) {
    let per_oc = taps * fic;
    for first in (0..g.oc / 4).map(|q| q * 4) {
        let whole: [i32; 4] = core::array::from_fn(|k| sum_i8(w, (first + k) * per_oc, per_oc));
        for b in 0..g.batches {
            for oy in 0..g.oh {
                for ox in 0..g.ow {
                    let mut acc = [0i32; 4];
                    let mut seen = 0;
                    g.for_each_tap(b, oy, ox, 0, |tap, ii| {
                        let d = dot4_i8(x, ii, w, first * per_oc + tap * fic, per_oc, fic);
                        for (a, v) in acc.iter_mut().zip(d) {
                            *a = a.wrapping_add(v);
                        }
                        seen += 1;
                    });
                    let sums = if seen == taps {
                        whole
                    } else {
                        let mut part = [0i32; 4];
                        g.for_each_tap(b, oy, ox, 0, |tap, _| {
                            for (k, p) in part.iter_mut().enumerate() {
                                let at = (first + k) * per_oc + tap * fic;
                                *p = p.wrapping_add(sum_i8(w, at, fic));
                            }
                        });
                        part
                    };
                    for (k, (a, s)) in acc.into_iter().zip(sums).enumerate() {
                        let oc = first + k;
                        let v = a.wrapping_add(s.wrapping_mul(in_off));
                        end.put_i8(c.out, g.out_index(b, oy, ox, oc), oc, oc, v);
                    }
                }
            }
        }
    }
}
