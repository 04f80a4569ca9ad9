//! The runtime's one Armv6-M `asm!` loop (`cfg(microarena_v6m)`, set by
//! build.rs for `thumbv6m-*`): the 1×1 convolution's four-row dot product
//! over interleaved weights ([`super::epilogue::Rows4`] on portable builds).
//!
//! Why asm: Thumb-1 arithmetic reaches only r0–r7, and r6/r7 are LLVM's; with
//! the input and weight pointers, the index, the input value, the weight word
//! and a temporary, four accumulators do not fit, and LLVM spilled two of
//! them to the stack inside the loop (≈7.5 instructions per multiply-
//! accumulate). `ADD Rd, Rm` takes high registers, so here the accumulators
//! live in r8, r10, r11 and r12, and a negative index counting up to zero
//! needs no compare: 18 instructions per four multiply-accumulates.
//!
//! Soundness: the loop reads `x[0..n]` and `w[0..n]` (bytes and words), `n`
//! at most both lengths and at least 1 (checked before), writes only the
//! registers it names, and touches no stack.
//!
//! Bit-exactness: MULS and ADD wrap modulo 2^32 as the portable loop's
//! `wrapping_mul`/`wrapping_add`; the weights are sign-extended bytes of the
//! word (SXTB, LSLS+ASRS, ASRS) exactly as the portable loop extracts them.
#![allow(unsafe_code)]

use core::arch::asm;

/// `[Σ x[i]·row_k[i]]` for k = 0..4 over `min(x.len(), w.len())` values,
/// row k's weight for input i being byte k of `w[i]` (as int8), wrapping.
#[inline(never)]
pub(crate) fn dot1x4_interleaved(x: &[u8], w: &[u32]) -> [i32; 4] {
    let n = x.len().min(w.len());
    let mut acc = [0i32; 4];
    if n == 0 {
        return acc;
    }
    let (a0, a1, a2, a3): (i32, i32, i32, i32);
    // SAFETY: see the module doc: reads x[..n] and w[..n], 1 ≤ n ≤ both.
    unsafe {
        asm!(
            // High registers are clobbers only in Thumb-1 `asm!`: the sums
            // start and end in them here, moved through low ones.
            "movs {t}, #0",
            "mov r8, {t}",
            "mov r10, {t}",
            "mov r11, {t}",
            "mov r12, {t}",
            // i runs from −n up to 0 over the input's end (ADDS sets Z).
            "2:",
            "ldrsb {xv}, [{xe}, {i}]",
            "ldm {wp}!, {{{wv}}}",
            "sxtb {t}, {wv}",
            "muls {t}, {xv}, {t}",
            "add r8, {t}",
            "lsls {t}, {wv}, #16",
            "asrs {t}, {t}, #24",
            "muls {t}, {xv}, {t}",
            "add r10, {t}",
            "lsls {t}, {wv}, #8",
            "asrs {t}, {t}, #24",
            "muls {t}, {xv}, {t}",
            "add r11, {t}",
            "asrs {wv}, {wv}, #24",
            "muls {wv}, {xv}, {wv}",
            "add r12, {wv}",
            "adds {i}, #1",
            "bne 2b",
            "mov {xv}, r8",
            "mov {wv}, r10",
            "mov {t}, r11",
            "mov {i}, r12",
            xe = in(reg) x.as_ptr().wrapping_add(n),
            wp = inout(reg) w.as_ptr() => _,
            i = inout(reg) n.wrapping_neg() => a3,
            xv = out(reg) a0,
            wv = out(reg) a1,
            t = out(reg) a2,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            out("r12") _,
            options(readonly, nostack),
        );
    }
    acc = [a0, a1, a2, a3];
    acc
}

/// `(Σ w0[i]·(x[i] + x_off), Σ w1[i]·(x[i] + x_off))` over
/// `min(x.len(), w0.len(), w1.len())` int8 values, wrapping: each input value
/// is loaded once for both rows (the LSTM gates' and FULLY_CONNECTED's row
/// pairs), 10 instructions per two multiply-accumulates.
#[inline(never)]
pub(crate) fn dot2_i8(x: &[u8], w0: &[u8], w1: &[u8], x_off: i32) -> (i32, i32) {
    let n = x.len().min(w0.len()).min(w1.len());
    if n == 0 {
        return (0, 0);
    }
    let (a0, a1): (i32, i32);
    // SAFETY: reads x[..n], w0[..n] and w1[..n], 1 ≤ n ≤ each length (the
    // module doc's argument).
    unsafe {
        asm!(
            // The offset and both sums in high registers (set through low
            // ones: Thumb-1 `asm!` takes high registers as clobbers only).
            "mov r8, {t}",
            "movs {t}, #0",
            "mov r10, {t}",
            "mov r11, {t}",
            "2:",
            "ldrsb {xv}, [{xe}, {i}]",
            "add {xv}, r8",
            "ldrsb {t}, [{w0e}, {i}]",
            "muls {t}, {xv}, {t}",
            "add r10, {t}",
            "ldrsb {t}, [{w1e}, {i}]",
            "muls {t}, {xv}, {t}",
            "add r11, {t}",
            "adds {i}, #1",
            "bne 2b",
            "mov {xv}, r10",
            "mov {t}, r11",
            xe = in(reg) x.as_ptr().wrapping_add(n),
            w0e = in(reg) w0.as_ptr().wrapping_add(n),
            w1e = in(reg) w1.as_ptr().wrapping_add(n),
            i = inout(reg) n.wrapping_neg() => _,
            xv = out(reg) a0,
            t = inout(reg) x_off => a1,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            options(readonly, nostack),
        );
    }
    (a0, a1)
}

/// One 3×3 depthwise window of four channels over word-aligned input: see
/// [`quad_taps9_bytes`]; here the words are the strips of a row.
pub(crate) fn quad_taps9_words(x: &[u32], taps: &[[u32; 2]; 9]) -> Option<[i32; 4]> {
    if taps
        .iter()
        .any(|&[o, _]| o % 4 != 0 || o as usize / 4 >= x.len())
    {
        return None;
    }
    // SAFETY: every tap is a whole word inside x (checked above).
    Some(unsafe { taps9(x.as_ptr().cast(), taps) })
}

/// One 3×3 depthwise window of four channels: `Σ_t x_t[k]·w_t[k]` for
/// channels k = 0..4, byte k of the input word at byte offset `taps[t].0`
/// of `x` and of the weight word `taps[t].1` (int8), wrapping; the input
/// offset is the caller's (`in_off · Σ_t w_t[k]`). `None` when `x` is not
/// word-aligned (Armv6-M faults on unaligned words) or a tap's word is not
/// inside it.
pub(crate) fn quad_taps9_bytes(x: &[u8], taps: &[[u32; 2]; 9]) -> Option<[i32; 4]> {
    let inside = |&[o, _]: &[u32; 2]| o % 4 == 0 && (o as usize).saturating_add(4) <= x.len();
    if !(x.as_ptr() as usize).is_multiple_of(4) || !taps.iter().all(inside) {
        return None;
    }
    // SAFETY: x is word-aligned and every tap is a whole word inside it.
    Some(unsafe { taps9(x.as_ptr(), taps) })
}

/// 22 instructions per tap, fully unrolled (LLVM's code spilled to about 35
/// per multiply-accumulate).
///
/// # Safety
/// `x + taps[t].0` must be a readable, 4-aligned word for every tap.
#[inline(never)]
unsafe fn taps9(x: *const u8, taps: &[[u32; 2]; 9]) -> [i32; 4] {
    let (a0, a1, a2, a3): (i32, i32, i32, i32);
    // SAFETY: the caller's promise; it reads the nine (offset, weight)
    // pairs and the nine words, writes only the registers it names.
    unsafe {
        asm!(
            "movs r4, #0",
            "mov r8, r4",
            "mov r10, r4",
            "mov r11, r4",
            "mov r12, r4",
            ".rept 9",
            "ldm r1!, {{r2, r3}}",
            "ldr r2, [r0, r2]",
            "sxtb r4, r2",
            "sxtb r5, r3",
            "muls r4, r5, r4",
            "add r8, r4",
            "lsls r4, r2, #16",
            "asrs r4, r4, #24",
            "lsls r5, r3, #16",
            "asrs r5, r5, #24",
            "muls r4, r5, r4",
            "add r10, r4",
            "lsls r4, r2, #8",
            "asrs r4, r4, #24",
            "lsls r5, r3, #8",
            "asrs r5, r5, #24",
            "muls r4, r5, r4",
            "add r11, r4",
            "asrs r2, r2, #24",
            "asrs r3, r3, #24",
            "muls r2, r3, r2",
            "add r12, r2",
            ".endr",
            "mov r0, r8",
            "mov r1, r10",
            "mov r2, r11",
            "mov r3, r12",
            inout("r0") x => a0,
            inout("r1") taps.as_ptr() => a1,
            out("r2") a2,
            out("r3") a3,
            out("r4") _,
            out("r5") _,
            out("r8") _,
            out("r10") _,
            out("r11") _,
            out("r12") _,
            options(readonly, nostack),
        );
    }
    [a0, a1, a2, a3]
}

/// A depthwise window whose four output channels share one input channel
/// (a depth multiplier of 4 or more, e.g. a spectrogram's single channel):
/// `acc[k] += Σ_r Σ_i w[r·n + i][k]·(x[r·rs + i] + x_off)` for `rows` filter
/// rows of `n` taps, byte k of each weight word (int8), wrapping — a whole
/// window in one call (or one row, `rows` 1). 18 instructions per four
/// multiply-accumulates and a few per row. `false` (nothing added) unless
/// every row lies inside `x` and `w`.
#[inline(never)]
pub(crate) fn bcast_window(
    acc: &mut [i32; 4],
    x: &[u8],
    (rows, rs, n): (usize, usize, usize),
    w: &[u32],
    x_off: i32,
) -> bool {
    // Small factors first, so the products below cannot overflow (and
    // need no 64-bit multiply, a library call on Armv6-M).
    if rows == 0 || rows > 255 || n == 0 || n > 255 || rs > 1 << 20 {
        return false;
    }
    if (rows - 1) * rs + n > x.len() || rows * n > w.len() {
        return false;
    }
    // The sums, then the loop state the registers cannot hold.
    let mut ctx = [
        acc[0],
        acc[1],
        acc[2],
        acc[3],
        rows as i32,
        rs as i32,
        n as i32,
    ];
    // SAFETY: row r reads x[r·rs .. r·rs + n] and the next n weight words,
    // all inside x and w (checked above); it reads and writes `ctx`, a local
    // array, and only the registers it names.
    unsafe {
        asm!(
            "mov lr, {ap}",
            "mov r9, {t}",
            "ldr {xv}, [{ap}, #0]",
            "ldr {wv}, [{ap}, #4]",
            "mov r8, {xv}",
            "mov r10, {wv}",
            "ldr {xv}, [{ap}, #8]",
            "ldr {wv}, [{ap}, #12]",
            "mov r11, {xv}",
            "mov r12, {wv}",
            "ldr {i}, [{ap}, #24]",
            "adds {xe}, {xe}, {i}",
            // Row loop: i from −n up to 0 over the row's end.
            "3:",
            "mov {t}, lr",
            "ldr {i}, [{t}, #24]",
            "negs {i}, {i}",
            "2:",
            "ldrsb {xv}, [{xe}, {i}]",
            "add {xv}, r9",
            "ldm {wp}!, {{{wv}}}",
            "sxtb {t}, {wv}",
            "muls {t}, {xv}, {t}",
            "add r8, {t}",
            "lsls {t}, {wv}, #16",
            "asrs {t}, {t}, #24",
            "muls {t}, {xv}, {t}",
            "add r10, {t}",
            "lsls {t}, {wv}, #8",
            "asrs {t}, {t}, #24",
            "muls {t}, {xv}, {t}",
            "add r11, {t}",
            "asrs {wv}, {wv}, #24",
            "muls {wv}, {xv}, {wv}",
            "add r12, {wv}",
            "adds {i}, #1",
            "bne 2b",
            "mov {t}, lr",
            "ldr {xv}, [{t}, #20]",
            "adds {xe}, {xe}, {xv}",
            "ldr {xv}, [{t}, #16]",
            "subs {xv}, #1",
            "str {xv}, [{t}, #16]",
            "bne 3b",
            "mov {t}, lr",
            "mov {xv}, r8",
            "mov {wv}, r10",
            "str {xv}, [{t}, #0]",
            "str {wv}, [{t}, #4]",
            "mov {xv}, r11",
            "mov {wv}, r12",
            "str {xv}, [{t}, #8]",
            "str {wv}, [{t}, #12]",
            ap = in(reg) ctx.as_mut_ptr(),
            xe = inout(reg) x.as_ptr() => _,
            wp = inout(reg) w.as_ptr() => _,
            i = out(reg) _,
            t = inout(reg) x_off => _,
            xv = out(reg) _,
            wv = out(reg) _,
            out("r8") _,
            out("r9") _,
            out("r10") _,
            out("r11") _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        );
    }
    *acc = [ctx[0], ctx[1], ctx[2], ctx[3]];
    true
}
