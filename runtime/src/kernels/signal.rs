//! TFLM's Signal-library (audio front end) custom operators, bit-exact with
//! tflite-micro 90b983c2 `signal/micro/kernels/*.cc` and the arithmetic in
//! `signal/src/` (window, fft_auto_scale, max_abs, rfft_int16, energy,
//! filter_bank, square_root_32/64, filter_bank_spectral_subtraction,
//! pcan_argc_fixed, log, filter_bank_log, msb_32/64), SignalRfft through
//! kissfft v130 in FIXED_POINT=16 with TFLM's patch (`third_party/kissfft`):
//! `kf_work`, `kf_bfly2/3/4/5`, `kiss_fftr`'s split. The generic butterfly
//! is left out: TFLM's patch makes its scratch allocation return null, so
//! lengths with a prime factor above 5 are refused. Options come from the
//! model's FlexBuffers map as [`FlexParams`], by key order, as TFLM reads
//! them. The arithmetic is the GCC x86-64/ARM build's: `MostSignificantBit`
//! of 0 is 32 (64), signed overflow wraps, `>>` on negatives is arithmetic.
//!
//! Where TFLM's C++ would be undefined (a shift by 32 or more, an index past
//! a tensor), Prepare refuses; core's `lower::support` refuses the same.

use microarena_image::params::FlexParams;
use microarena_image::{self as rl, opcode};

use super::bytes::{i16_at, i32_at, put_i16, put_i32};
use super::context::state_tensor;
use super::context::{Ctx, OpDataWriter, Prep};
use super::{Kernel, kernel, multi_output_kernel};
use crate::arena::ArenaAllocator;
use crate::error::Error;
use crate::image::TensorInfo;

pub(super) const KERNELS: &[Kernel] = &[
    kernel(opcode::SIGNAL_WINDOW, prepare_window, eval_window),
    multi_output_kernel(
        opcode::SIGNAL_FFT_AUTO_SCALE,
        prepare_auto_scale,
        eval_auto_scale,
    ),
    Kernel {
        channels: rfft_length,
        ..kernel(opcode::SIGNAL_RFFT, prepare_rfft, eval_rfft)
    },
    kernel(opcode::SIGNAL_ENERGY, prepare_energy, eval_energy),
    kernel(
        opcode::SIGNAL_FILTER_BANK,
        prepare_filter_bank,
        eval_filter_bank,
    ),
    kernel(
        opcode::SIGNAL_FILTER_BANK_SQUARE_ROOT,
        prepare_square_root,
        eval_square_root,
    ),
    Kernel {
        state_inputs: &[1],
        multi_output: true,
        ..kernel(
            opcode::SIGNAL_FILTER_BANK_SPECTRAL_SUBTRACTION,
            prepare_spectral_subtraction,
            eval_spectral_subtraction,
        )
    },
    kernel(opcode::SIGNAL_PCAN, prepare_pcan, eval_pcan),
    kernel(opcode::SIGNAL_FILTER_BANK_LOG, prepare_log, eval_log),
];

fn option(values: &FlexParams, i: usize) -> i32 {
    values.values.get(i).copied().unwrap_or(0)
}

fn u32_at(s: &[u8], i: usize) -> u32 {
    i32_at(s, i) as u32
}

fn put_u32(s: &mut [u8], i: usize, v: u32) {
    if let Some(d) = s.get_mut(4 * i..4 * i + 4) {
        d.copy_from_slice(&v.to_le_bytes());
    }
}

fn u64_at(s: &[u8], i: usize) -> u64 {
    s.get(8 * i..8 * i + 8)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |b| u64::from_le_bytes(*b))
}

// ------------------------------------------------------------ SignalWindow

/// Options: `shift` (position 0).
fn prepare_window(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 2, "SignalWindow needs 2 inputs")?;
    let (x, w) = (p.input(0)?, p.input(1)?);
    p.need(
        [x.dtype, w.dtype, out.dtype] == [rl::dtype::I16; 3],
        "SignalWindow: int16 only",
    )?;
    p.need(
        x.rank >= 1 && w.rank == 1 && x.rank == out.rank,
        "SignalWindow: rank-1 weights, output of the input's rank",
    )?;
    p.need(
        w.elements() > 0
            && x.elements().is_multiple_of(w.elements())
            && out.elements() == x.elements(),
        "SignalWindow: the input must be whole windows and the output as long",
    )?;
    let shift = option(&p.op.params(), 0);
    p.need(
        (0..32).contains(&shift),
        "SignalWindow: shift must be 0..31",
    )
}

/// `out = clamp((x · w) >> shift)` per element, the weights repeated over
/// every window of the input (`ApplyWindow`).
fn eval_window(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (w, wd) = c.input(1);
    let shift = option(&c.op.params(), 0).clamp(0, 31) as u32;
    let n = w.elements().max(1);
    for i in 0..x.elements() {
        // An arithmetic shift of the int32 product, as C++ on every TFLM target.
        let raw = (i16_at(xd, i) * i16_at(wd, i % n)) >> shift;
        put_i16(
            c.out,
            i,
            raw.clamp(i32::from(i16::MIN), i32::from(i16::MAX)),
        );
    }
    Ok(())
}

// ------------------------------------------------------ SignalFftAutoScale

fn prepare_auto_scale(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(
        p.op.n_inputs == 1 && p.op.n_outputs == 2,
        "SignalFftAutoScale needs 1 input and 2 outputs",
    )?;
    let (x, bits) = (p.input(0)?, p.output_k(1)?);
    p.need(
        x.dtype == rl::dtype::I16
            && out.dtype == rl::dtype::I16
            && bits.dtype == rl::dtype::I32
            && x.rank == 1
            && out.rank == 1
            && bits.rank == 0
            && out.elements() == x.elements(),
        "SignalFftAutoScale: rank-1 int16 input and output as long, int32 scalar scale bits",
    )
}

/// Scales the frame up by the most bits that keep its largest magnitude in
/// int16 (`FftAutoScale`) and outputs that bit count. `MaxAbs16` negates in
/// int and stores the result in int16, so −32768 stays −32768, whose 32-bit
/// pattern has 32 significant bits: no scaling, as in TFLM.
fn eval_auto_scale(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let n = x.elements();
    let mut max: i16 = 0;
    for i in 0..n {
        let v = i16_at(xd, i);
        if v > i32::from(max) {
            max = v as i16;
        } else if -v > i32::from(max) {
            max = (-v) as i16;
        }
    }
    let bits = (16 - msb32(i32::from(max) as u32) as i32 - 1).max(0);
    for i in 0..n {
        put_i16(c.out, i, i16_at(xd, i).wrapping_mul(1 << bits));
    }
    if let Some(out) = c.more.first_mut() {
        put_i32(out, 0, bits);
    }
    Ok(())
}

// -------------------------------------------------------------- SignalRfft

/// Options: `T` (position 0, the TFLite type: int16 only here) and
/// `fft_length` (1).
fn rfft_length(p: &Prep<'_, '_>, _: &TensorInfo) -> Result<u32, Error> {
    Ok(option(&p.op.params(), 1).max(0) as u32)
}

/// kissfft's radices: 4s first, then 2, 3, 5 (`kf_factor`), as (p, m)
/// pairs; `None` when another prime divides `n` (TFLM's patched kissfft
/// has no buffer for its generic butterfly) or `n` < 2.
fn factors(mut n: usize) -> Option<([(usize, usize); 32], usize)> {
    let mut out = [(0, 0); 32];
    let mut k = 0;
    if n < 2 {
        return None;
    }
    while n > 1 {
        let p = [4, 2, 3, 5].into_iter().find(|&p| n.is_multiple_of(p))?;
        n /= p;
        *out.get_mut(k)? = (p, n);
        k += 1;
    }
    Some((out, k))
}

fn prepare_rfft(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    words: &mut OpDataWriter<'_>,
    alloc: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 1, "SignalRfft needs 1 input")?;
    let x = p.input(0)?;
    let params = p.op.params();
    p.need(
        option(&params, 0) == i32::from(rl::dtype::I16)
            && x.dtype == rl::dtype::I16
            && out.dtype == rl::dtype::I16,
        "SignalRfft: int16 only",
    )?;
    let len = option(&params, 1);
    p.need(
        len >= 2 && len % 2 == 0 && factors(len as usize / 2).is_some(),
        "SignalRfft: fft_length must be even with no prime factor above 5",
    )?;
    let len = len as usize;
    let (frame, bins) = (x.last_dim(), out.last_dim());
    p.need(
        x.rank >= 1 && x.rank == out.rank && frame > 0 && frame <= len && bins == len + 2,
        "SignalRfft: frames of at most fft_length samples, fft_length + 2 outputs per frame",
    )?;
    p.need(
        x.elements() / frame == out.elements() / bins,
        "SignalRfft: as many output frames as input frames",
    )?;
    // kiss_fft_alloc's twiddles of the n-point complex FFT, then
    // kiss_fftr_alloc's n/2 split twiddles, in FIXED_POINT=16's rounding.
    let n = len / 2;
    let q15 = |v: f64| libm::floor(0.5 + 32767.0 * v) as i32 as i16;
    let pack = |re: i16, im: i16| i32::from(re as u16) | (i32::from(im as u16) << 16);
    for i in 0..n {
        let phase = -2.0 * core::f64::consts::PI * i as f64 / n as f64;
        words.push(pack(q15(libm::cos(phase)), q15(libm::sin(phase))));
    }
    for i in 0..n / 2 {
        let phase = -core::f64::consts::PI * ((i + 1) as f64 / n as f64 + 0.5);
        words.push(pack(q15(libm::cos(phase)), q15(libm::sin(phase))));
    }
    let want = rl::op_scratch_bytes(p.op.opcode, out.dtype, len as u32, 0) as usize;
    alloc.request_scratch(p.index, want, p.op.scratch)?;
    Ok(())
}

#[derive(Clone, Copy, Default)]
struct Cpx {
    r: i16,
    i: i16,
}

fn cpx_at(s: &[u8], k: usize) -> Cpx {
    Cpx {
        r: i16_at(s, 2 * k) as i16,
        i: i16_at(s, 2 * k + 1) as i16,
    }
}

fn put_cpx(s: &mut [u8], k: usize, c: Cpx) {
    put_i16(s, 2 * k, i32::from(c.r));
    put_i16(s, 2 * k + 1, i32::from(c.i));
}

/// kissfft's FIXED_POINT=16 arithmetic: Q15 products rounded half up
/// (`sround`), sums stored back into int16 (wrapping, as the C stores do).
fn sround(x: i32) -> i16 {
    (x.wrapping_add(1 << 14) >> 15) as i16
}

fn smul(a: i16, b: i16) -> i32 {
    i32::from(a) * i32::from(b)
}

fn c_mul(a: Cpx, b: Cpx) -> Cpx {
    Cpx {
        r: sround(smul(a.r, b.r).wrapping_sub(smul(a.i, b.i))),
        i: sround(smul(a.r, b.i).wrapping_add(smul(a.i, b.r))),
    }
}

fn c_add(a: Cpx, b: Cpx) -> Cpx {
    Cpx {
        r: a.r.wrapping_add(b.r),
        i: a.i.wrapping_add(b.i),
    }
}

fn c_sub(a: Cpx, b: Cpx) -> Cpx {
    Cpx {
        r: a.r.wrapping_sub(b.r),
        i: a.i.wrapping_sub(b.i),
    }
}

/// `C_FIXDIV`: multiply by SAMP_MAX / div in Q15.
fn fixdiv(c: Cpx, div: i16) -> Cpx {
    let k = 32767 / div;
    Cpx {
        r: sround(smul(c.r, k)),
        i: sround(smul(c.i, k)),
    }
}

fn s_mul(a: i16, b: i16) -> i16 {
    sround(smul(a, b))
}

/// The complex FFT's twiddles (OpData words, (re, im) int16 pairs).
struct Fft<'a> {
    tw: &'a [u8],
}

impl Fft<'_> {
    fn tw(&self, k: usize) -> Cpx {
        let w = i32_at(self.tw, k);
        Cpx {
            r: w as i16,
            i: (w >> 16) as i16,
        }
    }

    /// `kf_work`: the decimation in time, recursing over the radices, then
    /// the stage's butterflies over the `p` sub-transforms of length `m`.
    /// `out` holds complex values from index `base` on (4 bytes each).
    fn work(
        &self,
        out: &mut [u8],
        base: usize,
        input: &[u8],
        mut f: usize,
        fstride: usize,
        radices: &[(usize, usize)],
    ) {
        let Some((&(p, m), rest)) = radices.split_first() else {
            return;
        };
        if m == 1 {
            for j in 0..p {
                put_cpx(out, base + j, cpx_at(input, f));
                f += fstride;
            }
        } else {
            for j in 0..p {
                self.work(out, base + j * m, input, f, fstride * p, rest);
                f += fstride;
            }
        }
        let get = |out: &[u8], k: usize| cpx_at(out, base + k);
        let set = |out: &mut [u8], k: usize, v: Cpx| put_cpx(out, base + k, v);
        match p {
            2 => {
                for k in 0..m {
                    let a = fixdiv(get(out, k), 2);
                    let b = fixdiv(get(out, k + m), 2);
                    let t = c_mul(b, self.tw(k * fstride));
                    set(out, k + m, c_sub(a, t));
                    set(out, k, c_add(a, t));
                }
            }
            3 => {
                let epi3 = self.tw(fstride * m);
                for k in 0..m {
                    let f0 = fixdiv(get(out, k), 3);
                    let f1 = fixdiv(get(out, k + m), 3);
                    let f2 = fixdiv(get(out, k + 2 * m), 3);
                    let s1 = c_mul(f1, self.tw(k * fstride));
                    let s2 = c_mul(f2, self.tw(2 * k * fstride));
                    let s3 = c_add(s1, s2);
                    let s0 = c_sub(s1, s2);
                    // HALF_OF is an int shift of the (promoted) int16.
                    let mr = f0.r.wrapping_sub(s3.r >> 1);
                    let mi = f0.i.wrapping_sub(s3.i >> 1);
                    let s0 = Cpx {
                        r: s_mul(s0.r, epi3.i),
                        i: s_mul(s0.i, epi3.i),
                    };
                    set(out, k, c_add(f0, s3));
                    set(
                        out,
                        k + 2 * m,
                        Cpx {
                            r: mr.wrapping_add(s0.i),
                            i: mi.wrapping_sub(s0.r),
                        },
                    );
                    set(
                        out,
                        k + m,
                        Cpx {
                            r: mr.wrapping_sub(s0.i),
                            i: mi.wrapping_add(s0.r),
                        },
                    );
                }
            }
            4 => {
                for k in 0..m {
                    let mut f0 = fixdiv(get(out, k), 4);
                    let f1 = fixdiv(get(out, k + m), 4);
                    let f2 = fixdiv(get(out, k + 2 * m), 4);
                    let f3 = fixdiv(get(out, k + 3 * m), 4);
                    let s0 = c_mul(f1, self.tw(k * fstride));
                    let s1 = c_mul(f2, self.tw(2 * k * fstride));
                    let s2 = c_mul(f3, self.tw(3 * k * fstride));
                    let s5 = c_sub(f0, s1);
                    f0 = c_add(f0, s1);
                    let s3 = c_add(s0, s2);
                    let s4 = c_sub(s0, s2);
                    set(out, k + 2 * m, c_sub(f0, s3));
                    set(out, k, c_add(f0, s3));
                    // The forward transform's rotation by −i.
                    set(
                        out,
                        k + m,
                        Cpx {
                            r: s5.r.wrapping_add(s4.i),
                            i: s5.i.wrapping_sub(s4.r),
                        },
                    );
                    set(
                        out,
                        k + 3 * m,
                        Cpx {
                            r: s5.r.wrapping_sub(s4.i),
                            i: s5.i.wrapping_add(s4.r),
                        },
                    );
                }
            }
            _ => {
                let ya = self.tw(fstride * m);
                let yb = self.tw(fstride * 2 * m);
                for u in 0..m {
                    let f: [Cpx; 5] = core::array::from_fn(|j| fixdiv(get(out, u + j * m), 5));
                    let s0 = f[0];
                    let s1 = c_mul(f[1], self.tw(u * fstride));
                    let s2 = c_mul(f[2], self.tw(2 * u * fstride));
                    let s3 = c_mul(f[3], self.tw(3 * u * fstride));
                    let s4 = c_mul(f[4], self.tw(4 * u * fstride));
                    let s7 = c_add(s1, s4);
                    let s10 = c_sub(s1, s4);
                    let s8 = c_add(s2, s3);
                    let s9 = c_sub(s2, s3);
                    set(
                        out,
                        u,
                        Cpx {
                            r: f[0].r.wrapping_add(s7.r.wrapping_add(s8.r)),
                            i: f[0].i.wrapping_add(s7.i.wrapping_add(s8.i)),
                        },
                    );
                    let s5 = Cpx {
                        r: s0
                            .r
                            .wrapping_add(s_mul(s7.r, ya.r))
                            .wrapping_add(s_mul(s8.r, yb.r)),
                        i: s0
                            .i
                            .wrapping_add(s_mul(s7.i, ya.r))
                            .wrapping_add(s_mul(s8.i, yb.r)),
                    };
                    let s6 = Cpx {
                        r: s_mul(s10.i, ya.i).wrapping_add(s_mul(s9.i, yb.i)),
                        i: s_mul(s10.r, ya.i)
                            .wrapping_neg()
                            .wrapping_sub(s_mul(s9.r, yb.i)),
                    };
                    set(out, u + m, c_sub(s5, s6));
                    set(out, u + 4 * m, c_add(s5, s6));
                    let s11 = Cpx {
                        r: s0
                            .r
                            .wrapping_add(s_mul(s7.r, yb.r))
                            .wrapping_add(s_mul(s8.r, ya.r)),
                        i: s0
                            .i
                            .wrapping_add(s_mul(s7.i, yb.r))
                            .wrapping_add(s_mul(s8.i, ya.r)),
                    };
                    let s12 = Cpx {
                        r: s_mul(s9.i, ya.i).wrapping_sub(s_mul(s10.i, yb.i)),
                        i: s_mul(s10.r, yb.i).wrapping_sub(s_mul(s9.r, ya.i)),
                    };
                    set(out, u + 2 * m, c_add(s11, s12));
                    set(out, u + 3 * m, c_sub(s11, s12));
                }
            }
        }
    }
}

/// Each frame: copied into the scratch and zero-padded to fft_length, its
/// n = fft_length/2-point complex FFT (`kiss_fft`), then `kiss_fftr`'s split
/// into n + 1 bins of the real signal.
fn eval_rfft(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let len = option(&c.op.params(), 1).max(0) as usize;
    let n = len / 2;
    let Some((radices, n_radices)) = factors(n) else {
        return Err(c.fail()("SignalRfft: fft_length"));
    };
    let radices = radices.get(..n_radices).unwrap_or(&[]);
    let out_info = c.output_info();
    let (frame, bins) = (x.last_dim().max(1), out_info.last_dim());
    let (tw, super_tw) = c.opdata.split_at(4 * n.min(c.opdata.len() / 4));
    let fft = Fft { tw };
    let (padded, tmp) = c.scratch.split_at_mut(2 * len.min(c.scratch.len() / 2));
    for f in 0..x.elements() / frame {
        padded.fill(0);
        if let (Some(d), Some(s)) = (
            padded.get_mut(..2 * frame),
            xd.get(2 * f * frame..2 * (f + 1) * frame),
        ) {
            d.copy_from_slice(s);
        }
        // The frame's samples as n complex values (even, odd), transformed
        // into the rest of the scratch.
        fft.work(tmp, 0, padded, 0, 1, radices);
        let tmp = &*tmp;
        let out_base = f * bins / 2;
        let sup = |k: usize| {
            let w = i32_at(super_tw, k);
            Cpx {
                r: w as i16,
                i: (w >> 16) as i16,
            }
        };
        let tdc = fixdiv(cpx_at(tmp, 0), 2);
        put_cpx(
            c.out,
            out_base,
            Cpx {
                r: tdc.r.wrapping_add(tdc.i),
                i: 0,
            },
        );
        put_cpx(
            c.out,
            out_base + n,
            Cpx {
                r: tdc.r.wrapping_sub(tdc.i),
                i: 0,
            },
        );
        for k in 1..=n / 2 {
            let fpk = fixdiv(cpx_at(tmp, k), 2);
            let nk = cpx_at(tmp, n - k);
            let fpnk = fixdiv(
                Cpx {
                    r: nk.r,
                    i: nk.i.wrapping_neg(),
                },
                2,
            );
            let f1k = c_add(fpk, fpnk);
            let f2k = c_sub(fpk, fpnk);
            let t = c_mul(f2k, sup(k - 1));
            // HALF_OF of the int sum, then stored in int16.
            let half = |a: i16, b: i32| ((i32::from(a) + b) >> 1) as i16;
            put_cpx(
                c.out,
                out_base + k,
                Cpx {
                    r: half(f1k.r, i32::from(t.r)),
                    i: half(f1k.i, i32::from(t.i)),
                },
            );
            put_cpx(
                c.out,
                out_base + n - k,
                Cpx {
                    r: half(f1k.r, -i32::from(t.r)),
                    i: half(t.i, -i32::from(f1k.i)),
                },
            );
        }
    }
    Ok(())
}

// ------------------------------------------------------------ SignalEnergy

/// Options: `end_index` (position 0), `start_index` (1).
fn prepare_energy(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 1, "SignalEnergy needs 1 input")?;
    let x = p.input(0)?;
    p.need(
        x.dtype == rl::dtype::I16 && out.dtype == rl::dtype::U32 && x.rank == 1 && out.rank == 1,
        "SignalEnergy: rank-1 int16 input, rank-1 uint32 output",
    )?;
    let params = p.op.params();
    let (end, start) = (i64::from(option(&params, 0)), i64::from(option(&params, 1)));
    p.need(
        0 <= start
            && start <= end
            && end <= out.elements() as i64
            && 2 * end <= x.elements() as i64,
        "SignalEnergy: start_index..end_index must lie within the output and the complex input",
    )
}

/// `out[i] = re² + im²` of complex bin `i` for `start_index ≤ i < end_index`
/// (`SpectrumToEnergy`); the other outputs are left as they are, as TFLM does.
fn eval_energy(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, xd) = c.input(0);
    let params = c.op.params();
    let (end, start) = (
        option(&params, 0).max(0) as usize,
        option(&params, 1).max(0) as usize,
    );
    for i in start..end.min(c.out.len() / 4) {
        let (re, im) = (i16_at(xd, 2 * i), i16_at(xd, 2 * i + 1));
        // Each square fits int32; their sum (≤ 2^31) wraps into uint32 as in C++.
        let e = (re * re) as u32 + (im * im) as u32;
        put_u32(c.out, i, e);
    }
    Ok(())
}

// ---------------------------------------------- SignalFilterBankSquareRoot

fn prepare_square_root(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(
        p.op.n_inputs == 2,
        "SignalFilterBankSquareRoot needs 2 inputs",
    )?;
    let (x, bits) = (p.input(0)?, p.input(1)?);
    p.need(
        x.dtype == rl::dtype::U64
            && bits.dtype == rl::dtype::I32
            && out.dtype == rl::dtype::U32
            && x.rank == 1
            && bits.rank == 0
            && out.rank == 1
            && out.elements() == x.elements(),
        "SignalFilterBankSquareRoot: rank-1 uint64 input, int32 scalar scale bits, uint32 output as long",
    )
}

/// The number of significant bits of `x` (`MostSignificantBit32`), with the
/// GCC build's answer for 0 (32: `__builtin_clz` is not called, 32 − 0).
fn msb32(x: u32) -> u32 {
    if x == 0 { 32 } else { 32 - x.leading_zeros() }
}

/// `MostSignificantBit64` as the GCC build computes it (64 for 0).
fn msb64(x: u64) -> u32 {
    if x == 0 { 64 } else { 64 - x.leading_zeros() }
}

/// `Sqrt32`: bit-by-bit integer square root, rounded to nearest, saturated
/// at 0xFFFF.
fn sqrt32(mut num: u32) -> u32 {
    if num == 0 {
        return 0;
    }
    let mut res = 0u32;
    let max_bit = (32 - msb32(num)) | 1;
    let mut bit = 1u32 << (31 - max_bit);
    for _ in 0..(31 - max_bit) / 2 + 1 {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != 0xFFFF {
        res += 1;
    }
    res & 0xFFFF
}

/// `Sqrt64`: as [`sqrt32`] on 64 bits, `Sqrt32` when the top half is 0.
fn sqrt64(mut num: u64) -> u32 {
    if num >> 32 == 0 {
        return sqrt32(num as u32);
    }
    let mut res = 0u64;
    let max_bit = (64 - msb64(num)) | 1;
    let mut bit = 1u64 << (63 - max_bit);
    for _ in 0..(63 - max_bit) / 2 + 1 {
        if num >= res + bit {
            num -= res + bit;
            res = (res >> 1) + bit;
        } else {
            res >>= 1;
        }
        bit >>= 2;
    }
    if num > res && res != 0xFFFF_FFFF {
        res += 1;
    }
    res as u32
}

/// `out[i] = Sqrt64(in[i]) >> scale_bits` (`FilterbankSqrt`). The shift is
/// read at Eval (the scale bits are usually FftAutoScale's output); a shift
/// outside 0..31, undefined in C++, gives 0.
fn eval_square_root(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (_, bd) = c.input(1);
    let bits = i32_at(bd, 0);
    for i in 0..x.elements() {
        let r = sqrt64(u64_at(xd, i));
        let v = u32::try_from(bits)
            .ok()
            .and_then(|b| r.checked_shr(b))
            .unwrap_or(0);
        put_u32(c.out, i, v);
    }
    Ok(())
}

// -------------------------------------------------------- SignalFilterBank

/// Constant int16 data of input `k` (the channel tables must be constant:
/// Prepare checks every channel's range against the tensors it indexes).
fn const_i16<'m>(p: &Prep<'_, 'm>, k: usize) -> Result<(&'m [u8], usize), Error> {
    let t = p.input(k)?;
    p.need(
        t.dtype == rl::dtype::I16 && t.rank == 1,
        "SignalFilterBank: rank-1 int16 tables",
    )?;
    let d = p
        .img
        .const_data(&t)
        .ok_or(p.err("SignalFilterBank: channel tables must be constant"))?;
    Ok((d, t.elements()))
}

/// Options: `num_channels` (position 0). Inputs: the spectrum (uint32), the
/// weights and unweights (int16), and per channel + 1 the frequency start,
/// weight start and width (constant int16).
fn prepare_filter_bank(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 6, "SignalFilterBank needs 6 inputs")?;
    let x = p.input(0)?;
    let (w, uw) = (p.input(1)?, p.input(2)?);
    p.need(
        x.dtype == rl::dtype::U32
            && x.rank == 1
            && [w.dtype, uw.dtype] == [rl::dtype::I16; 2]
            && w.rank == 1
            && uw.rank == 1
            && out.dtype == rl::dtype::U64
            && out.rank == 1,
        "SignalFilterBank: rank-1 uint32 spectrum, int16 weights, uint64 output",
    )?;
    let channels = option(&p.op.params(), 0);
    p.need(
        channels >= 0 && channels as usize == out.elements(),
        "SignalFilterBank: num_channels must equal the output length",
    )?;
    let n = channels as usize + 1;
    let (starts, n_starts) = const_i16(p, 3)?;
    let (weight_starts, n_weight_starts) = const_i16(p, 4)?;
    let (widths, n_widths) = const_i16(p, 5)?;
    p.need(
        n_starts >= n && n_weight_starts >= n && n_widths >= n,
        "SignalFilterBank: channel tables need num_channels + 1 entries",
    )?;
    for i in 0..n {
        let (f, ws, wd) = (
            i16_at(starts, i),
            i16_at(weight_starts, i),
            i16_at(widths, i),
        );
        p.need(
            f >= 0
                && ws >= 0
                && wd >= 0
                && (f + wd) as usize <= x.elements()
                && (ws + wd) as usize <= w.elements().min(uw.elements()),
            "SignalFilterBank: a channel reaches past the spectrum or the weights",
        )?;
    }
    Ok(())
}

/// `FilterbankAccumulateChannels`: channel i sums weights × spectrum over its
/// band plus the previous band's unweights × spectrum (uint64, wrapping as in
/// C++, the int16 weights sign-extended); channel 0 only seeds channel 1.
fn eval_filter_bank(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (_, xd) = c.input(0);
    let ((_, wd), (_, ud)) = (c.input(1), c.input(2));
    let ((_, starts), (_, weight_starts), (_, widths)) = (c.input(3), c.input(4), c.input(5));
    let channels = c.output_info().elements();
    let spectrum = |j: usize| u64::from(u32_at(xd, j));
    let mut weighted: u64 = 0;
    let mut unweighted: u64 = 0;
    for i in 0..=channels {
        let f = i16_at(starts, i).max(0) as usize;
        let ws = i16_at(weight_starts, i).max(0) as usize;
        for j in 0..i16_at(widths, i).max(0) as usize {
            let s = spectrum(f + j);
            weighted = weighted
                .wrapping_add((i64::from(i16_at(wd, ws + j) as i16) as u64).wrapping_mul(s));
            unweighted = unweighted
                .wrapping_add((i64::from(i16_at(ud, ws + j) as i16) as u64).wrapping_mul(s));
        }
        if i > 0
            && let Some(o) = c.out.get_mut(8 * (i - 1)..8 * i)
        {
            o.copy_from_slice(&weighted.to_le_bytes());
        }
        weighted = unweighted;
        unweighted = 0;
    }
    Ok(())
}

// --------------------------------------- SignalFilterBankSpectralSubtraction

/// Options by position: alternate_one_minus_smoothing, alternate_smoothing,
/// clamping, min_signal_remaining, num_channels, one_minus_smoothing,
/// smoothing, smoothing_bits, spectral_subtraction_bits. Input 1 is the
/// noise estimate core's `lower` adds as a variable tensor (TFLM keeps it in
/// the kernel's persistent buffer, zeroed by Prepare and Reset).
fn prepare_spectral_subtraction(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(
        p.op.n_inputs == 2 && p.op.n_outputs == 2,
        "SignalFilterBankSpectralSubtraction needs 1 input, its state and 2 outputs",
    )?;
    let (x, state, noise) = (p.input(0)?, p.input(1)?, p.output_k(1)?);
    p.need(
        state.storage == rl::STORAGE_VARIABLE,
        "SignalFilterBankSpectralSubtraction: its state must be a variable tensor",
    )?;
    p.need(
        [x.dtype, out.dtype, noise.dtype, state.dtype] == [rl::dtype::U32; 4]
            && x.rank == 1
            && out.rank == 1
            && noise.rank == 1,
        "SignalFilterBankSpectralSubtraction: rank-1 uint32 tensors",
    )?;
    let params = p.op.params();
    let n = option(&params, 4);
    p.need(
        n >= 0
            && [
                x.elements(),
                out.elements(),
                noise.elements(),
                state.elements(),
            ]
            .iter()
            .all(|&e| e == n as usize),
        "SignalFilterBankSpectralSubtraction: num_channels must equal every tensor's length",
    )?;
    p.need(
        (0..32).contains(&option(&params, 7)) && (0..64).contains(&option(&params, 8)),
        "SignalFilterBankSpectralSubtraction: smoothing_bits 0..31, spectral_subtraction_bits 0..63",
    )
}

fn eval_spectral_subtraction(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (_, (lo, hi)) = state_tensor(c, 1, "SignalFilterBankSpectralSubtraction: state missing")?;
    let o = c.op.params::<FlexParams>();
    let v = |i: usize| option(&o, i) as u32;
    let (alt_one_minus, alt_smoothing, clamping) = (v(0), v(1), v(2) != 0);
    let (min_remaining, one_minus, smoothing) = (v(3), v(5), v(6));
    let (bits, sub_bits) = (v(7).min(31), v(8).min(63));
    let Some(state) = c.vars.get_mut(lo..hi) else {
        return Err(c.fail()(
            "SignalFilterBankSpectralSubtraction: state outside the variable region",
        ));
    };
    for i in 0..x.elements() {
        let (s, m) = if i % 2 == 0 {
            (smoothing, one_minus)
        } else {
            (alt_smoothing, alt_one_minus)
        };
        let input = u32_at(xd, i);
        let scaled = input << bits;
        let mut noise = ((u64::from(scaled) * u64::from(s))
            .wrapping_add(u64::from(u32_at(state, i)) * u64::from(m))
            >> sub_bits) as u32;
        let mut estimate = noise;
        if estimate > scaled {
            estimate = scaled;
            if clamping {
                noise = estimate;
            }
        }
        put_u32(state, i, noise);
        let floor = ((u64::from(input) * u64::from(min_remaining)) >> sub_bits) as u32;
        let subtracted = (scaled - estimate) >> bits;
        put_u32(c.out, i, subtracted.max(floor));
    }
    // Output 1 is a copy of the updated estimate.
    if let (Some(dst), Some(src)) = (c.more.first_mut(), c.vars.get(lo..hi))
        && let Some(d) = dst.get_mut(..src.len())
    {
        d.copy_from_slice(src);
    }
    Ok(())
}

// -------------------------------------------------------------- SignalPCAN

/// Options: `snr_shift` (position 0). Inputs: the filter bank output, the
/// noise estimate (uint32) and the gain table (int16).
fn prepare_pcan(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 3, "SignalPCAN needs 3 inputs")?;
    let (x, noise, lut) = (p.input(0)?, p.input(1)?, p.input(2)?);
    p.need(
        [x.dtype, noise.dtype, out.dtype] == [rl::dtype::U32; 3]
            && lut.dtype == rl::dtype::I16
            && [x.rank, noise.rank, lut.rank, out.rank] == [1; 4],
        "SignalPCAN: rank-1 uint32 input, noise estimate and output, int16 gain table",
    )?;
    p.need(
        out.elements() == x.elements() && noise.elements() >= x.elements(),
        "SignalPCAN: output as long as the input, a noise estimate per channel",
    )?;
    // WideDynamicFunction reads entries up to 4·32 − 6 + 2 = 124.
    p.need(
        lut.elements() >= 125,
        "SignalPCAN: the gain table needs 125 entries",
    )?;
    p.need(
        (0..64).contains(&option(&p.op.params(), 0)),
        "SignalPCAN: snr_shift must be 0..63",
    )
}

/// `WideDynamicFunction`: the gain for noise level `x`, interpolated in the
/// table's segment for x's bit length.
fn wide_dynamic(x: u32, lut: &[u8]) -> i16 {
    if x <= 2 {
        return i16_at(lut, x as usize) as i16;
    }
    let interval = msb32(x) as i32;
    let base = (4 * interval - 6) as usize;
    let frac = (if interval < 11 {
        x << (11 - interval)
    } else {
        x >> (interval - 11)
    } & 0x3FF) as i32;
    let mut result = (i16_at(lut, base + 2) * frac) >> 5;
    result = result.wrapping_add(((i16_at(lut, base + 1) as u32) << 5) as i32);
    result = result.wrapping_mul(frac);
    result = (result.wrapping_add(1 << 14)) >> 15;
    result = result.wrapping_add(i16_at(lut, base));
    result as i16
}

/// `PcanShrink` with kPcanSnrBits 12 and kPcanOutputBits 6.
fn pcan_shrink(x: u32) -> u32 {
    if x < (2 << 12) {
        x.wrapping_mul(x) >> (2 + 2 * 12 - 6)
    } else {
        (x >> (12 - 6)).wrapping_sub(1 << 6)
    }
}

fn eval_pcan(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let (_, nd) = c.input(1);
    let (_, lut) = c.input(2);
    let shift = option(&c.op.params(), 0).clamp(0, 63) as u32;
    for i in 0..x.elements() {
        // The int16 gain converted to uint32 (sign-extended, as C++).
        let gain = i32::from(wide_dynamic(u32_at(nd, i), lut)) as u32;
        let snr = ((u64::from(u32_at(xd, i)) * u64::from(gain)) >> shift) as u32;
        put_u32(c.out, i, pcan_shrink(snr));
    }
    Ok(())
}

// ----------------------------------------------------- SignalFilterBankLog

/// Options: `input_correction_bits` (position 0), `output_scale` (1).
fn prepare_log(
    p: &Prep<'_, '_>,
    out: &TensorInfo,
    _: &mut OpDataWriter<'_>,
    _: &mut ArenaAllocator,
) -> Result<(), Error> {
    p.need(p.op.n_inputs == 1, "SignalFilterBankLog needs 1 input")?;
    let x = p.input(0)?;
    p.need(
        x.dtype == rl::dtype::U32
            && out.dtype == rl::dtype::I16
            && x.rank == 1
            && out.rank == 1
            && out.elements() == x.elements(),
        "SignalFilterBankLog: rank-1 uint32 input, int16 output as long",
    )?;
    p.need(
        (0..32).contains(&option(&p.op.params(), 0)),
        "SignalFilterBankLog: input_correction_bits must be 0..31",
    )
}

/// log.cc's piecewise-linear table of log2(1 + f) − f over 128 segments of
/// the fraction f, in 1/65536 (TFLM's `kLogLut`; data, not code).
const LOG_LUT: [u16; 130] = [
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944,
    3087, 3224, 3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714,
    4791, 4864, 4934, 5001, 5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533,
    5557, 5578, 5595, 5610, 5622, 5631, 5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568,
    5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332, 5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944,
    4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264, 4184, 4103, 4020, 3935, 3848, 3759,
    3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549, 2437, 2323, 2207, 2090,
    1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142, 0, 0,
];

/// `Log32(x, out_scale)` for `x > 1`: ln(x) · out_scale in 1/65536 units
/// rounded, from log2 = integer part + interpolated fraction, times
/// ln 2 (45426 / 65536).
fn log32(x: u32, out_scale: u32) -> u32 {
    let integer = msb32(x) - 1;
    // Fraction above the leading bit, scaled to 16 bits (int32 as in C++).
    let mut frac = x.wrapping_sub(1u32 << integer) as i32;
    if integer < 16 {
        frac <<= 16 - integer;
    } else {
        frac >>= integer - 16;
    }
    let base_seg = (frac as u32) >> (16 - 7);
    let seg_unit = (1u32 << 16) >> 7;
    let lut = |k: u32| i32::from(LOG_LUT.get(k as usize).copied().unwrap_or(0));
    let (c0, c1) = (lut(base_seg), lut(base_seg + 1));
    let seg_base = seg_unit.wrapping_mul(base_seg) as i32;
    let rel_pos = (c1 - c0).wrapping_mul(frac.wrapping_sub(seg_base)) >> 16;
    let fraction = (frac.wrapping_add(c0).wrapping_add(rel_pos)) as u32;
    let log2 = (integer << 16).wrapping_add(fraction);
    let round = 65536u32 / 2;
    let loge = ((45426u64 * u64::from(log2) + u64::from(round)) >> 16) as u32;
    out_scale.wrapping_mul(loge).wrapping_add(round) >> 16
}

/// `FilterbankLog`: `min(Log32(x << correction, scale), 32767)` for scaled
/// inputs above 1, else 0.
fn eval_log(c: &mut Ctx<'_, '_>) -> Result<(), Error> {
    let (x, xd) = c.input(0);
    let params = c.op.params();
    let correction = option(&params, 0).clamp(0, 31) as u32;
    let scale = option(&params, 1) as u32;
    for i in 0..x.elements() {
        let scaled = u32_at(xd, i) << correction;
        let v = if scaled > 1 {
            log32(scaled, scale).min(i16::MAX as u32) as i32
        } else {
            0
        };
        put_i16(c.out, i, v);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_roots_round_to_nearest() {
        // √15 = 3.87 → 4, √16 = 4, √17 = 4.12 → 4, √2^40 = 2^20.
        assert_eq!([sqrt32(15), sqrt32(16), sqrt32(17)], [4, 4, 4]);
        assert_eq!(sqrt64(1 << 40), 1 << 20);
        // √(2^64 − 1) rounds to 2^32 but saturates at 0xFFFF_FFFF.
        assert_eq!(sqrt64(u64::MAX), u32::MAX);
        // √(2^32 − 1) = 65535.99… saturates at 0xFFFF in Sqrt32's range.
        assert_eq!(sqrt64(u64::from(u32::MAX)), 0xFFFF);
    }

    #[test]
    fn log_of_powers_of_two_is_exact_in_the_table() {
        // log2(2^k) = k exactly (fraction 0, LUT[0] = 0): ln = k · 45426 / 65536.
        // x = 256: log2 = 8 << 16; loge = (45426·524288 + 32768) >> 16 = 363408;
        // with out_scale 1: (363408 + 32768) >> 16 = 6.
        assert_eq!(log32(256, 1), 6);
        // out_scale 64: (64·363408 + 32768) >> 16 = 355 (ln 256 · 64 = 354.9).
        assert_eq!(log32(256, 64), 355);
    }
}
