//! On-target check of the runtime's int8 multiply-accumulate paths (harness =
//! false, run under QEMU by `cargo test`): on thumbv7em they are the
//! SXTB16/SMLAD `asm!` island, on thumbv6m the portable loops. Each is
//! compared with a plain per-element sum on pseudo-random data: every length
//! 0..=67 (all word remainders), input offsets at the edges of the int8 range
//! and of the 16-bit lane (±32640), and accumulations long enough to wrap.
#![no_std]
#![no_main]
#![forbid(unsafe_code)]

use cortex_m_rt::entry;
use cortex_m_semihosting::hprintln;
use microarena_runtime::dsp_check;
use panic_semihosting as _;

/// xorshift32: deterministic bytes without a heap.
struct Rng(u32);
impl Rng {
    fn byte(&mut self) -> u8 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        (self.0 >> 7) as u8
    }
    fn fill(&mut self, b: &mut [u8]) {
        for v in b {
            *v = self.byte();
        }
    }
}

const OFFSETS: [i32; 9] = [0, 1, -1, 128, -127, 127, -128, 32640, -32640];

#[entry]
fn main() -> ! {
    let mut rng = Rng(0x1234_5678);
    let mut x = [0u8; 67];
    let mut w = [0u8; 2 * 67 + 5];
    let mut bad = 0u32;
    let mut cases = 0u32;
    for n in 0..=67usize {
        for &off in &OFFSETS {
            rng.fill(&mut x);
            rng.fill(&mut w);
            let (want, got) = dsp_check::dot(&x, &w, n, off);
            bad += u32::from(want != got);
            let (want, got) = dsp_check::dot2(&x[..n], &w, 0, n + 5, n, off);
            bad += u32::from(want != got);
            // 1 to 5 rows (pairs and a remainder), stride longer than a row
            let rows = 1 + n % 5;
            let stride = n + n % 3;
            let (want, got) = dsp_check::rows(&x[..n.min(27)], &w, stride.min(27), rows, off);
            bad += u32::from(want != got);
            cases += 3;
        }
    }
    // The 1x1 convolution's four-row block and filter sums: every length
    // 0..=67, and rows longer than the unpacked buffer (300).
    let mut x4 = [0u8; 300];
    let mut w4 = [0u8; 4 * 300];
    for n in (0..=67usize).chain([255, 256, 257, 300]) {
        rng.fill(&mut x4);
        rng.fill(&mut w4);
        let (want, got) = dsp_check::rows4(&x4, &w4, n);
        bad += u32::from(want != got);
        let (want, got) = dsp_check::sum(&w4[..4 * n]);
        bad += u32::from(want != got);
        cases += 2;
    }
    let (want, got) = dsp_check::rows4(&[0x80; 300], &[0x80; 4 * 300], 300);
    bad += u32::from(want != got);
    cases += 1;
    // LSTM gate rows: input lengths around the word size and the unpacked
    // buffer (320 values), 1 to 8 rows (the last rows lack padding bytes).
    let mut xl = [0u8; 330];
    let mut wl = [0u8; 8 * 330];
    for (i, n) in (0..=13usize)
        .chain([255, 257, 319, 320, 321, 330])
        .enumerate()
    {
        rng.fill(&mut xl);
        rng.fill(&mut wl);
        let rows = 1 + i % 8;
        let off = OFFSETS[i % OFFSETS.len()];
        let (want, got) = dsp_check::gate_rows(&xl[..n], &wl[..rows * n], rows, off);
        bad += u32::from(want != got);
        // the same rows inside a longer matrix: padding bytes present
        let (want, got) = dsp_check::gate_rows(&xl[..n], &wl, rows, off);
        bad += u32::from(want != got);
        cases += 2;
    }
    // Extremes: every product at its largest magnitude, so the sum wraps.
    let (want, got) = dsp_check::dot(&[0x80; 67], &[0x80; 67], 67, -32640);
    bad += u32::from(want != got);
    let (want, got) = dsp_check::dot(&[0x7f; 67], &[0x80; 67], 67, 32640);
    bad += u32::from(want != got);
    cases += 2;
    // Depthwise: 3x3 taps over a 3x3x8 input, channels 0..4 and 4..8.
    let mut xi = [0u8; 72];
    let mut wf = [0u8; 72];
    let taps: [(usize, usize); 9] = core::array::from_fn(|t| (t * 8, t * 8));
    for round in 0..40 {
        rng.fill(&mut xi);
        rng.fill(&mut wf);
        let off = OFFSETS[round % OFFSETS.len()];
        for c0 in [0, 4] {
            let (want, got) = dsp_check::depthwise4(&xi, &wf, &taps, c0, off);
            bad += u32::from(want != got);
            let (want, got) = dsp_check::depthwise4_bcast(&xi, &wf, &taps, c0, off);
            bad += u32::from(want != got);
            let (want, got) = dsp_check::window3x3(&xi, &wf, &taps, c0, off);
            bad += u32::from(want != got);
            cases += 3;
        }
    }
    // int16 pairs: every length 0..=40 bytes (odd pair counts and an odd
    // trailing byte), then the largest products, whose sum wraps.
    let mut a = [0u8; 40];
    let mut b = [0u8; 40];
    for n in 0..=40 {
        rng.fill(&mut a);
        rng.fill(&mut b);
        let (want, got) = dsp_check::dot_i16(&a[..n], &b[..n]);
        bad += u32::from(want != got);
        cases += 1;
    }
    let (want, got) = dsp_check::dot_i16(&[0x00, 0x80], &[0x00, 0x80]);
    bad += u32::from(want != got);
    let mins = [0x00u8, 0x80, 0x00, 0x80, 0x00, 0x80, 0x00, 0x80];
    let (want, got) = dsp_check::dot_i16(&mins, &mins);
    bad += u32::from(want != got);
    cases += 2;
    // A broadcast depthwise row (one input channel, four output channels):
    // every length to 24 taps.
    let mut wb = [0u8; 96];
    for n in 0..=24 {
        rng.fill(&mut xi[..24]);
        rng.fill(&mut wb);
        let off = OFFSETS[n % OFFSETS.len()];
        let (want, got) = dsp_check::bcast_row(&xi[..n], &wb[..4 * n], off);
        bad += u32::from(want != got);
        cases += 1;
    }
    // Whole broadcast windows: 1-4 rows of 1-8 taps, rows 9 bytes apart.
    let mut xw = [0u8; 40];
    for rows in 1..=4 {
        for n in 1..=8 {
            rng.fill(&mut xw);
            rng.fill(&mut wb);
            let off = OFFSETS[(rows + n) % OFFSETS.len()];
            let (want, got) = dsp_check::bcast_window(&xw, &wb, (rows, 9, n), off);
            bad += u32::from(want != got);
            cases += 1;
        }
    }
    hprintln!(
        "dsp_exact: {} cases, {} differ (DSP path {})",
        cases,
        bad,
        if dsp_check::ENABLED { "on" } else { "off" }
    );
    microarena_firmware::exit(bad == 0)
}
