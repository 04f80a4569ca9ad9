//! The one `unsafe` island of the runtime, compiled only for Cortex-M cores
//! with the DSP extension (`cfg(microarena_dsp)`, set by build.rs for
//! `thumbv7em-*`): the int8 dot product with
//! SXTB16/SXTAB16 and SMLAD, two multiply-accumulates per instruction.
//!
//! Why asm: LLVM's ARM parallel-DSP pass forms SMLAD only from pairs of
//! sign-extended *16-bit loads*; int8 data gives SMLABB (one MAC each), and
//! the `core::arch::arm` DSP intrinsics (`__smlad`, `__sxtb16`) are unstable.
//! Stable `asm!` on registers is the remaining way.
//!
//! Soundness: each `asm!` reads and writes only the registers it names
//! (`pure, nomem, nostack`; [`mac_lanes`] drops `pure, nomem` only to keep
//! the compiler from hoisting loads across it); memory is read in safe Rust
//! before it.
//!
//! Bit-exactness: SMLAD's accumulate is a wrapping 32-bit add (overflow only
//! sets the sticky Q flag), and the lanes hold exact 16-bit values
//! (`x + x_off` with |x_off| ≤ 32640), so the result equals the portable
//! `Σ w·(x + x_off)` in wrapping int32 — integer sums do not depend on order.
#![allow(unsafe_code)]

use core::arch::asm;

/// `Σ w[k]·(x[k] + x_off)` over `min(x.len(), w.len())` int8 pairs, wrapping.
/// `None` when `x_off` does not fit a 16-bit lane next to an int8 value
/// (the caller then takes the portable loop). Not inlined: inside the big
/// kernel loops the register allocator spilled the loop state to the stack.
#[inline(never)]
pub(crate) fn dot_i8(x: &[u8], w: &[u8], x_off: i32) -> Option<i32> {
    dot_i8_inline(x, w, x_off)
}

/// [`dot_i8`] inlined into a caller whose loop is small enough to keep its
/// state in registers (SVDF's time weights against its state rows).
#[inline(always)]
pub(crate) fn dot_i8_inline(x: &[u8], w: &[u8], x_off: i32) -> Option<i32> {
    if !(-32640..=32640).contains(&x_off) {
        return None;
    }
    let n = x.len().min(w.len());
    let (x, w) = (x.get(..n)?, w.get(..n)?);
    // x_off in both 16-bit lanes, for SXTAB16.
    let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
    let (xq, xr) = x.as_chunks::<4>();
    let (wq, wr) = w.as_chunks::<4>();
    let mut acc = 0i32;
    for (xb, wb) in xq.iter().zip(wq) {
        let xv = u32::from_le_bytes(*xb);
        let wv = u32::from_le_bytes(*wb);
        // SAFETY: register-only arithmetic (see the module doc).
        unsafe {
            asm!(
                // bytes 0 and 2 (then 1 and 3) of x, sign-extended, plus x_off
                "sxtab16 {xe}, {off}, {x}",
                "sxtab16 {xo}, {off}, {x}, ror #8",
                // the same bytes of w, sign-extended
                "sxtb16 {we}, {w}",
                "sxtb16 {wo}, {w}, ror #8",
                "smlad {acc}, {xe}, {we}, {acc}",
                "smlad {acc}, {xo}, {wo}, {acc}",
                x = in(reg) xv,
                w = in(reg) wv,
                off = in(reg) off2,
                xe = out(reg) _,
                xo = out(reg) _,
                we = out(reg) _,
                wo = out(reg) _,
                acc = inout(reg) acc,
                options(pure, nomem, nostack),
            );
        }
    }
    for (&a, &b) in xr.iter().zip(wr) {
        let xv = i32::from(a as i8).wrapping_add(x_off);
        acc = acc.wrapping_add(i32::from(b as i8).wrapping_mul(xv));
    }
    Some(acc)
}

/// Two dot products sharing `x`: `(Σ w0·(x + x_off), Σ w1·(x + x_off))` over
/// `x.len()` pairs (both filters at least that long), each input word unpacked
/// once for two output channels. `None` as [`dot_i8`].
#[inline(never)]
pub(crate) fn dot2_i8(x: &[u8], w0: &[u8], w1: &[u8], x_off: i32) -> Option<(i32, i32)> {
    if !(-32640..=32640).contains(&x_off) {
        return None;
    }
    let n = x.len();
    let (w0, w1) = (w0.get(..n)?, w1.get(..n)?);
    let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
    let (xq, xr) = x.as_chunks::<4>();
    let (aq, ar) = w0.as_chunks::<4>();
    let (bq, br) = w1.as_chunks::<4>();
    let (mut s0, mut s1) = (0i32, 0i32);
    for ((xb, ab), bb) in xq.iter().zip(aq).zip(bq) {
        // Three small blocks rather than one, so that the register allocator
        // can reuse registers between them instead of spilling in the loop.
        let (xe, xo) = unpack_x(u32::from_le_bytes(*xb), off2);
        s0 = mac2(s0, xe, xo, u32::from_le_bytes(*ab));
        s1 = mac2(s1, xe, xo, u32::from_le_bytes(*bb));
    }
    for ((&xv, &a), &b) in xr.iter().zip(ar).zip(br) {
        let xv = i32::from(xv as i8).wrapping_add(x_off);
        s0 = s0.wrapping_add(i32::from(a as i8).wrapping_mul(xv));
        s1 = s1.wrapping_add(i32::from(b as i8).wrapping_mul(xv));
    }
    Some((s0, s1))
}

/// Bytes 0 and 2, and bytes 1 and 3, of `x` sign-extended into 16-bit lanes,
/// plus `off2` (the offset in both lanes).
#[inline(always)]
fn unpack_x(x: u32, off2: u32) -> (u32, u32) {
    let (xe, xo);
    // SAFETY: register-only arithmetic (see the module doc).
    unsafe {
        asm!(
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {xo}, {off}, {x}, ror #8",
            x = in(reg) x,
            off = in(reg) off2,
            xe = out(reg) xe,
            xo = out(reg) xo,
            options(pure, nomem, nostack),
        );
    }
    (xe, xo)
}

/// `acc` plus the four products of the int8 lanes of `w` with the 16-bit
/// lanes `xe` (bytes 0, 2) and `xo` (bytes 1, 3).
#[inline(always)]
fn mac2(acc: i32, xe: u32, xo: u32, w: u32) -> i32 {
    let mut acc = acc;
    // SAFETY: register-only arithmetic (see the module doc).
    unsafe {
        asm!(
            "sxtb16 {we}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {acc}, {xe}, {we}, {acc}",
            "smlad {acc}, {xo}, {w}, {acc}",
            w = inout(reg) w => _,
            xe = in(reg) xe,
            xo = in(reg) xo,
            we = out(reg) _,
            acc = inout(reg) acc,
            options(pure, nomem, nostack),
        );
    }
    acc
}

/// `acc[k] += Σ w[k·stride + i]·(x[i] + x_off)` for `i < x.len()` and every
/// `k < acc.len()`, two rows per pass over `x`. `None` (and `acc` untouched)
/// when `x_off` does not fit a lane or a row leaves `w`.
#[inline(never)]
pub(crate) fn accumulate_rows(
    x: &[u8],
    w: &[u8],
    stride: usize,
    acc: &mut [i32],
    x_off: i32,
) -> Option<()> {
    let n = x.len();
    let last = acc.len().checked_sub(1)?;
    if !(-32640..=32640).contains(&x_off) || w.len() < last * stride + n {
        return None;
    }
    let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
    let (xq, xr) = x.as_chunks::<4>();
    let mut pairs = acc.chunks_exact_mut(2);
    let mut k = 0;
    for pair in &mut pairs {
        let (w0, w1) = (
            w.get(k * stride..)?.get(..n)?,
            w.get((k + 1) * stride..)?.get(..n)?,
        );
        let (aq, ar) = w0.as_chunks::<4>();
        let (bq, br) = w1.as_chunks::<4>();
        let (mut s0, mut s1) = (0i32, 0i32);
        for ((xb, ab), bb) in xq.iter().zip(aq).zip(bq) {
            let (xe, xo) = unpack_x(u32::from_le_bytes(*xb), off2);
            s0 = mac2(s0, xe, xo, u32::from_le_bytes(*ab));
            s1 = mac2(s1, xe, xo, u32::from_le_bytes(*bb));
        }
        for ((&xv, &a), &b) in xr.iter().zip(ar).zip(br) {
            let xv = i32::from(xv as i8).wrapping_add(x_off);
            s0 = s0.wrapping_add(i32::from(a as i8).wrapping_mul(xv));
            s1 = s1.wrapping_add(i32::from(b as i8).wrapping_mul(xv));
        }
        if let [a0, a1] = pair {
            *a0 = a0.wrapping_add(s0);
            *a1 = a1.wrapping_add(s1);
        }
        k += 2;
    }
    if let [a] = pairs.into_remainder() {
        let w0 = w.get(k * stride..)?.get(..n)?;
        *a = a.wrapping_add(dot_i8(x, w0, x_off)?);
    }
    Some(())
}

/// `Σ a[k]·b[k]` over little-endian int16 pairs, wrapping int32: whole
/// words into SMLAD, two multiply-accumulates per instruction with nothing
/// to unpack (SVDF's int16 state against its int16 time weights).
#[inline(never)]
pub(crate) fn dot_i16x16(a: &[u8], b: &[u8]) -> i32 {
    let (aq, ar) = a.as_chunks::<4>();
    let (bq, br) = b.as_chunks::<4>();
    let mut acc = 0i32;
    for (x, y) in aq.iter().zip(bq) {
        let (x, y) = (u32::from_le_bytes(*x), u32::from_le_bytes(*y));
        // SAFETY: register-only arithmetic (see the module doc).
        unsafe {
            asm!(
                "smlad {acc}, {x}, {y}, {acc}",
                x = in(reg) x,
                y = in(reg) y,
                acc = inout(reg) acc,
                options(pure, nomem, nostack),
            );
        }
    }
    // An odd element count leaves one pair (only when both have it).
    if aq.len() == bq.len()
        && let (Some(x), Some(y)) = (ar.first_chunk::<2>(), br.first_chunk::<2>())
    {
        let p = i32::from(i16::from_le_bytes(*x)) * i32::from(i16::from_le_bytes(*y));
        acc = acc.wrapping_add(p);
    }
    acc
}

/// Bytes 0 and 2, and bytes 1 and 3, of `x` sign-extended into 16-bit lanes.
#[inline(always)]
fn unpack(x: u32) -> (u32, u32) {
    let (e, o);
    // SAFETY: register-only arithmetic (see the module doc).
    unsafe {
        asm!(
            "sxtb16 {e}, {x}",
            "sxtb16 {o}, {x}, ror #8",
            x = in(reg) x,
            e = out(reg) e,
            o = out(reg) o,
            options(pure, nomem, nostack),
        );
    }
    (e, o)
}

/// Four channels' filter bytes for [`depthwise_mac`]: bytes 0 and 2, and
/// bytes 1 and 3, sign-extended into 16-bit lanes (done once per layer).
#[inline(always)]
pub(crate) fn depthwise_weights(w: [u8; 4]) -> [u32; 2] {
    let (e, o) = unpack(u32::from_le_bytes(w));
    [e, o]
}

/// `acc[k] += w[k]·(x[k] + x_off)` for four channels, `w` from
/// [`depthwise_weights`], `off2` = `x_off` in both 16-bit lanes
/// (|x_off| ≤ 32640, checked by the caller).
#[inline(always)]
pub(crate) fn depthwise_mac(acc: [i32; 4], x: [u8; 4], w: [u32; 2], off2: u32) -> [i32; 4] {
    let [mut a0, mut a1, mut a2, mut a3] = acc;
    // SAFETY: register-only arithmetic (see the module doc).
    unsafe {
        asm!(
            // lanes: bytes 0 and 2 (channels 0, 2), then 1 and 3
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            x = inout(reg) u32::from_le_bytes(x) => _,
            off = in(reg) off2,
            we = in(reg) w[0],
            wo = in(reg) w[1],
            xe = out(reg) _,
            a0 = inout(reg) a0,
            a1 = inout(reg) a1,
            a2 = inout(reg) a2,
            a3 = inout(reg) a3,
            options(pure, nomem, nostack),
        );
    }
    [a0, a1, a2, a3]
}

/// One 3×3 window of four channels over row strips `R` words apart
/// (`win[0]` its top-left tap): [`depthwise_mac`] for the nine taps in one
/// asm block with every tap's offset an immediate, 8 instructions per tap
/// (LLVM's loop reloaded and re-addressed around each).
#[inline(always)]
pub(crate) fn window3x3_strips<const R: usize, const W: usize>(
    win: &[u32; W],
    w: &[[u32; 2]; 9],
    off2: u32,
) -> [i32; 4] {
    const { assert!(W >= 2 * R + 3, "the window reaches row 2, column 2") };
    let (mut a0, mut a1, mut a2, mut a3) = (0i32, 0i32, 0i32, 0i32);
    // SAFETY: reads nine words of `win` at offsets below 2·R + 3 (its
    // length, by type) and the 18 words of `w`; writes only the registers
    // it names.
    unsafe {
        asm!(
            "ldr {x}, [{win}, #{o0}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #0]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o1}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #8]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o2}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #16]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o3}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #24]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o4}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #32]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o5}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #40]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o6}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #48]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o7}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #56]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            "ldr {x}, [{win}, #{o8}]",
            "sxtab16 {xe}, {off}, {x}",
            "sxtab16 {x}, {off}, {x}, ror #8",
            "ldrd {we}, {wo}, [{wp}, #64]",
            "smlabb {a0}, {xe}, {we}, {a0}",
            "smlatt {a2}, {xe}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlatt {a3}, {x}, {wo}, {a3}",
            win = in(reg) win.as_ptr(),
            wp = in(reg) w.as_ptr(),
            off = in(reg) off2,
            x = out(reg) _,
            xe = out(reg) _,
            we = out(reg) _,
            wo = out(reg) _,
            a0 = inout(reg) a0,
            a1 = inout(reg) a1,
            a2 = inout(reg) a2,
            a3 = inout(reg) a3,
            o0 = const 0,
            o1 = const 4,
            o2 = const 8,
            o3 = const 4 * R,
            o4 = const 4 * R + 4,
            o5 = const 4 * R + 8,
            o6 = const 8 * R,
            o7 = const 8 * R + 4,
            o8 = const 8 * R + 8,
            options(pure, readonly, nostack),
        );
    }
    [a0, a1, a2, a3]
}

/// [`depthwise_mac`] for one input value `xv` (offset added, |xv| < 2^15)
/// shared by the four channels: its bottom half times each weight lane, so
/// nothing is unpacked per tap.
#[inline(always)]
pub(crate) fn depthwise_mac_bcast(acc: [i32; 4], xv: i32, w: [u32; 2]) -> [i32; 4] {
    let [mut a0, mut a1, mut a2, mut a3] = acc;
    // SAFETY: register-only arithmetic (see the module doc).
    unsafe {
        asm!(
            "smlabb {a0}, {x}, {we}, {a0}",
            "smlabt {a2}, {x}, {we}, {a2}",
            "smlabb {a1}, {x}, {wo}, {a1}",
            "smlabt {a3}, {x}, {wo}, {a3}",
            x = in(reg) xv,
            we = in(reg) w[0],
            wo = in(reg) w[1],
            a0 = inout(reg) a0,
            a1 = inout(reg) a1,
            a2 = inout(reg) a2,
            a3 = inout(reg) a3,
            options(pure, nomem, nostack),
        );
    }
    [a0, a1, a2, a3]
}

/// Three dot products sharing `x`: `Σ wk·(x + x_off)` for the three filter
/// rows, each input word unpacked once for three rows (the LSTM gates'
/// row blocks). Three, not four: with four the loop state no longer fits
/// the registers and spills. `None` as [`dot_i8`], or when a row is
/// shorter than `x`.
#[inline(never)]
pub(crate) fn dot3_i8(x: &[u8], w: [&[u8]; 3], x_off: i32) -> Option<[i32; 3]> {
    if !(-32640..=32640).contains(&x_off) {
        return None;
    }
    let n = x.len();
    let [w0, w1, w2] = w;
    let (w0, w1, w2) = (w0.get(..n)?, w1.get(..n)?, w2.get(..n)?);
    let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
    let (xq, xr) = x.as_chunks::<4>();
    let (aq, ar) = w0.as_chunks::<4>();
    let (bq, br) = w1.as_chunks::<4>();
    let (cq, cr) = w2.as_chunks::<4>();
    let (mut s0, mut s1, mut s2) = (0i32, 0i32, 0i32);
    for (((xb, ab), bb), cb) in xq.iter().zip(aq).zip(bq).zip(cq) {
        let (xe, xo) = unpack_x(u32::from_le_bytes(*xb), off2);
        s0 = mac2(s0, xe, xo, u32::from_le_bytes(*ab));
        s1 = mac2(s1, xe, xo, u32::from_le_bytes(*bb));
        s2 = mac2(s2, xe, xo, u32::from_le_bytes(*cb));
    }
    for (((&xv, &a), &b), &c) in xr.iter().zip(ar).zip(br).zip(cr) {
        let xv = i32::from(xv as i8).wrapping_add(x_off);
        s0 = s0.wrapping_add(i32::from(a as i8).wrapping_mul(xv));
        s1 = s1.wrapping_add(i32::from(b as i8).wrapping_mul(xv));
        s2 = s2.wrapping_add(i32::from(c as i8).wrapping_mul(xv));
    }
    Some([s0, s1, s2])
}

/// `x + x_off` in 16-bit lanes, one `[bytes 0 and 2, bytes 1 and 3]` pair
/// per whole input word, into `out`: an input read by many filter rows is
/// unpacked once for all of them. The number of words written; `None` when
/// `x_off` does not fit a lane or `out` is too short.
pub(crate) fn unpack_offset(x: &[u8], x_off: i32, out: &mut [[u32; 2]]) -> Option<usize> {
    if !(-32640..=32640).contains(&x_off) {
        return None;
    }
    let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
    let (xq, _) = x.as_chunks::<4>();
    for (o, xb) in out.get_mut(..xq.len())?.iter_mut().zip(xq) {
        let (e, odd) = unpack_x(u32::from_le_bytes(*xb), off2);
        *o = [e, odd];
    }
    Some(xq.len())
}

/// Three dot products of unpacked input words `xu` (from [`unpack_offset`])
/// with the first `4·xu.len()` bytes of three filter rows (shorter rows
/// stop early). With the input already in lanes, the loop needs no offset
/// register and its state fits the registers.
#[inline(never)]
pub(crate) fn dot3_unpacked(xu: &[[u32; 2]], w: [&[u8]; 3]) -> [i32; 3] {
    let [w0, w1, w2] = w;
    let (aq, _) = w0.as_chunks::<4>();
    let (bq, _) = w1.as_chunks::<4>();
    let (cq, _) = w2.as_chunks::<4>();
    let (mut s0, mut s1, mut s2) = (0i32, 0i32, 0i32);
    for (((&[xe, xo], ab), bb), cb) in xu.iter().zip(aq).zip(bq).zip(cq) {
        s0 = mac2(s0, xe, xo, u32::from_le_bytes(*ab));
        s1 = mac2(s1, xe, xo, u32::from_le_bytes(*bb));
        s2 = mac2(s2, xe, xo, u32::from_le_bytes(*cb));
    }
    [s0, s1, s2]
}

/// Four filter rows unpacked into 16-bit lanes, word by word: `out[j]`
/// holds, for row `k`, the (bytes 0 and 2, bytes 1 and 3) lanes of word `j`
/// at `2k` and `2k + 1` (a missing row gives zeros). Done once per four
/// output channels of a layer, so the pixel loop reads its filters already
/// in lanes. Returns the number of words written (the shortest of `out` and
/// the longest row's whole words) and each row's sum over them (SMLAD
/// against 1 in both lanes on the unpacked lanes, for folding the input
/// offset into the bias).
pub(crate) fn unpack_rows4(w: [&[u8]; 4], out: &mut [[u32; 8]]) -> (usize, [i32; 4]) {
    let words = w
        .iter()
        .map(|r| r.len() / 4)
        .max()
        .unwrap_or(0)
        .min(out.len());
    let out = out.get_mut(..words).unwrap_or_default();
    let mut sums = [0i32; 4];
    for (k, (r, sum)) in w.iter().zip(sums.iter_mut()).enumerate() {
        let (rq, _) = r.as_chunks::<4>();
        for (o, b) in out.iter_mut().zip(rq) {
            let (e, odd) = unpack(u32::from_le_bytes(*b));
            if let Some(l) = o.get_mut(2 * k..2 * k + 2) {
                l.copy_from_slice(&[e, odd]);
            }
            *sum = mac_lanes(*sum, (e, odd), (0x0001_0001, 0x0001_0001));
        }
        for o in out.iter_mut().skip(rq.len()) {
            if let Some(l) = o.get_mut(2 * k..2 * k + 2) {
                l.copy_from_slice(&[0; 2]);
            }
        }
    }
    (words, sums)
}

/// One pixel's input words against four filter rows unpacked by
/// [`unpack_rows4`]: `Σ w_k·x` (no offset) over the first
/// `4·min(x words, wu.len())` bytes. Each input word is unpacked once for
/// four filters and the filters not at all, so a word costs a load, two
/// SXTB16, four LDRD and eight SMLAD; the loop state fits the registers.
#[inline(always)]
pub(crate) fn dot1x4_unpacked(x: &[u8], wu: &[[u32; 8]]) -> [i32; 4] {
    let words = (x.len() / 4).min(wu.len());
    let (mut a0, mut a1, mut a2, mut a3) = (0i32, 0i32, 0i32, 0i32);
    if words == 0 {
        return [0; 4];
    }
    // One loop in asm: a load with post-increment, the eight lanes in two
    // LDMs and a count down, 15 instructions per input word (LLVM's was 19:
    // an address add and a compare besides).
    // SAFETY: reads x[..4·words] (unaligned word loads are allowed on
    // Armv7E-M) and wu[..words] (eight words each), words ≥ 1; writes only
    // the registers it names.
    unsafe {
        asm!(
            "2:",
            "ldr {x}, [{xp}], #4",
            "sxtb16 {xe}, {x}",
            "sxtb16 {x}, {x}, ror #8",
            "ldm {wp}!, {{r0, r1, r2, r3}}",
            "smlad {a0}, {xe}, r0, {a0}",
            "smlad {a0}, {x}, r1, {a0}",
            "smlad {a1}, {xe}, r2, {a1}",
            "smlad {a1}, {x}, r3, {a1}",
            "ldm {wp}!, {{r0, r1, r2, r3}}",
            "smlad {a2}, {xe}, r0, {a2}",
            "smlad {a2}, {x}, r1, {a2}",
            "smlad {a3}, {xe}, r2, {a3}",
            "smlad {a3}, {x}, r3, {a3}",
            "subs {n}, #1",
            "bne 2b",
            xp = inout(reg) x.as_ptr() => _,
            wp = inout(reg) wu.as_ptr() => _,
            n = inout(reg) words => _,
            x = out(reg) _,
            xe = out(reg) _,
            a0 = inout(reg) a0,
            a1 = inout(reg) a1,
            a2 = inout(reg) a2,
            a3 = inout(reg) a3,
            out("r0") _,
            out("r1") _,
            out("r2") _,
            out("r3") _,
            options(readonly, nostack),
        );
    }
    [a0, a1, a2, a3]
}

/// `acc` plus the four products of two lane pairs: two SMLADs.
///
/// Register-only like the rest, but without `nomem`: the compiler then
/// keeps each row's loads after the previous row's SMLADs. With `nomem` it
/// hoisted all eight filter loads of [`dot1x4_unpacked`] to the top of the
/// loop and spilled half of them to the stack.
#[inline(always)]
fn mac_lanes(acc: i32, (xe, xo): (u32, u32), (we, wo): (u32, u32)) -> i32 {
    let mut acc = acc;
    // SAFETY: register-only arithmetic (see the module doc); it touches no
    // memory although the compiler must assume it may.
    unsafe {
        asm!(
            "smlad {acc}, {xe}, {we}, {acc}",
            "smlad {acc}, {xo}, {wo}, {acc}",
            xe = in(reg) xe,
            xo = in(reg) xo,
            we = in(reg) we,
            wo = in(reg) wo,
            acc = inout(reg) acc,
            options(nostack),
        );
    }
    acc
}
