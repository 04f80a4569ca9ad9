//! Hidden hooks for the firmware's on-target test (`firmware/tests/dsp_exact.rs`):
//! each returns (a plain per-element reference, what the kernels compute in
//! this build), so the test can check the `asm!` island of `dsp.rs` bit for
//! bit under QEMU on random data. Builds without the DSP path compare the
//! portable loops with the same reference — on Armv6-M that includes the
//! Thumb-1 loop of `v6m.rs` behind [`rows4`].

/// Whether this build has the SXTB16/SMLAD path (`cfg(microarena_dsp)`).
pub const ENABLED: bool = cfg!(microarena_dsp);

/// The reference: `Σ w[wb + k]·(x[xb + k] + x_off)` for `k < n`, wrapping.
fn reference(x: &[u8], xb: usize, w: &[u8], wb: usize, n: usize, x_off: i32) -> i32 {
    let mut acc = 0i32;
    for k in 0..n {
        let xv = x.get(xb + k).map_or(0, |&v| i32::from(v as i8));
        let wv = w.get(wb + k).map_or(0, |&v| i32::from(v as i8));
        acc = acc.wrapping_add(wv.wrapping_mul(xv.wrapping_add(x_off)));
    }
    acc
}

/// One dot product of `n` pairs from `x[0..]` and `w[0..]`.
pub fn dot(x: &[u8], w: &[u8], n: usize, x_off: i32) -> (i32, i32) {
    (
        reference(x, 0, w, 0, n, x_off),
        super::epilogue::dot_i8(x, 0, w, 0, n, x_off),
    )
}

/// Two dot products of `n` pairs: `x[0..]` with `w[wb0..]` and with `w[wb1..]`.
pub fn dot2(
    x: &[u8],
    w: &[u8],
    wb0: usize,
    wb1: usize,
    n: usize,
    x_off: i32,
) -> ((i32, i32), (i32, i32)) {
    (
        (
            reference(x, 0, w, wb0, n, x_off),
            reference(x, 0, w, wb1, n, x_off),
        ),
        super::epilogue::dot2_i8(x, 0, w, (wb0, wb1), n, x_off),
    )
}

/// `rows` (≤ 8) rows of `x.len()` weights, `stride` apart in `w`, each added
/// to a start value `k` (to catch a path that overwrites instead of adding).
pub fn rows(x: &[u8], w: &[u8], stride: usize, rows: usize, x_off: i32) -> ([i32; 8], [i32; 8]) {
    let rows = rows.min(8);
    let n = x.len();
    let mut want = [0i32; 8];
    let mut got = [0i32; 8];
    for (k, (a, g)) in want.iter_mut().zip(got.iter_mut()).enumerate().take(rows) {
        *a = (k as i32).wrapping_add(reference(x, 0, w, k * stride, n, x_off));
        *g = k as i32;
    }
    if let Some(acc) = got.get_mut(..rows) {
        super::epilogue::accumulate_rows(x, w, stride, acc, x_off);
    }
    (want, got)
}

/// Depthwise accumulators of channels `c0..c0 + 4` over `taps` (filter
/// index, input index of channel 0).
pub fn depthwise4(
    x: &[u8],
    w: &[u8],
    taps: &[(usize, usize)],
    c0: usize,
    x_off: i32,
) -> ([i32; 4], [i32; 4]) {
    let mut want = [0i32; 4];
    for (k, a) in want.iter_mut().enumerate() {
        for &(fi, ii) in taps {
            *a = a.wrapping_add(reference(x, ii + c0 + k, w, fi + c0 + k, 1, x_off));
        }
    }
    // Depthwise offsets are int8 zero points; the kernel takes this path
    // only inside the 16-bit lane's range.
    let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
    let mut got = [0i32; 4];
    for &(fi, ii) in taps {
        let quad = |s: &[u8], i: usize| {
            s.get(i + c0..)
                .and_then(|s| s.first_chunk::<4>())
                .copied()
                .unwrap_or_default()
        };
        let wq = super::depthwise::quad_weights(quad(w, fi));
        got = super::depthwise::quad_mac(got, quad(x, ii), wq, off2, x_off);
    }
    (want, got)
}

/// [`depthwise4`] over a 3×3 window as the 3×3 kernels run it in this
/// build: on DSP cores the one-block window over row strips, on Armv6-M the
/// unrolled Thumb-1 window (`v6m.rs`) with the input offset added after;
/// elsewhere the per-tap path. Input indices plus `c0`
/// must be multiples of 4 (whole words) and `x` at most 256 bytes.
pub fn window3x3(
    x: &[u8],
    w: &[u8],
    taps: &[(usize, usize); 9],
    c0: usize,
    x_off: i32,
) -> ([i32; 4], [i32; 4]) {
    let (want, got) = depthwise4(x, w, taps, c0, x_off);
    #[cfg(microarena_dsp)]
    {
        let _ = got;
        // The nine input words as row strips three words apart.
        let quad = |s: &[u8], i: usize| {
            s.get(i + c0..)
                .and_then(|s| s.first_chunk::<4>())
                .copied()
                .unwrap_or_default()
        };
        let win: [u32; 9] = taps.map(|(_, ii)| u32::from_le_bytes(quad(x, ii)));
        let wq = taps.map(|(fi, _)| super::depthwise::quad_weights(quad(w, fi)));
        let off2 = (x_off as u32 & 0xffff) | ((x_off as u32) << 16);
        return (want, super::dsp::window3x3_strips::<3, 9>(&win, &wq, off2));
    }
    #[cfg(microarena_v6m)]
    {
        let _ = got;
        let mut words = [0u32; 64];
        for (d, b) in words.iter_mut().zip(x.as_chunks::<4>().0) {
            *d = u32::from_le_bytes(*b);
        }
        let quad = |i: usize| {
            w.get(i + c0..)
                .and_then(|s| s.first_chunk::<4>())
                .copied()
                .unwrap_or_default()
        };
        let wq = taps.map(|(fi, _)| super::depthwise::quad_weights(quad(fi)));
        let (t9, bias) = super::depthwise::taps9(taps.map(|(_, ii)| (ii + c0) / 4), &wq, x_off);
        let got = super::v6m::quad_taps9_words(&words, &t9)
            .map_or([i32::MIN; 4], |s| super::depthwise::add4(s, bias));
        return (want, got);
    }
    #[allow(unreachable_code)]
    (want, got)
}

/// [`depthwise4`] for one input channel shared by the four output channels
/// (a depth multiplier of 4 or more): each tap reads the byte `x[ii]`.
pub fn depthwise4_bcast(
    x: &[u8],
    w: &[u8],
    taps: &[(usize, usize)],
    c0: usize,
    x_off: i32,
) -> ([i32; 4], [i32; 4]) {
    let mut want = [0i32; 4];
    for (k, a) in want.iter_mut().enumerate() {
        for &(fi, ii) in taps {
            *a = a.wrapping_add(reference(x, ii, w, fi + c0 + k, 1, x_off));
        }
    }
    let mut got = [0i32; 4];
    for &(fi, ii) in taps {
        let wb = w
            .get(fi + c0..)
            .and_then(|s| s.first_chunk::<4>())
            .copied()
            .unwrap_or_default();
        let xv = x
            .get(ii)
            .map_or(0, |&v| i32::from(v as i8))
            .wrapping_add(x_off);
        got = super::depthwise::quad_mac_bcast(got, xv, super::depthwise::quad_weights(wb));
    }
    (want, got)
}

/// The 1×1 convolution's four-row block: `x[0..n]` against rows
/// `w[k·n..(k+1)·n]`, no offset (on DSP cores the rows are unpacked into
/// lanes first).
pub fn rows4(x: &[u8], w: &[u8], n: usize) -> ([i32; 4], [i32; 4]) {
    let want = core::array::from_fn(|k| reference(x, 0, w, k * n, n, 0));
    let rows = core::array::from_fn(|k| w.get(k * n..(k + 1) * n).unwrap_or(&[]));
    let mut block = super::epilogue::Rows4::empty();
    block.set(rows);
    let got = block.dot(x.get(..n).unwrap_or(&[]));
    (want, got)
}

/// The filter-row sums that fold the input offset into the bias, found
/// while a four-row block is unpacked: `w` as rows 0 and 2, rows 1 and 3
/// missing.
pub fn sum(w: &[u8]) -> ([i32; 4], [i32; 4]) {
    let s: i32 = w.iter().map(|&v| i32::from(v as i8)).sum();
    let got = super::epilogue::Rows4::empty().set([w, &[], w, &[]]);
    ([s, 0, s, 0], got)
}

/// An LSTM gate FC's rows (at most 8): `rows` rows of `x.len()` weights
/// from `w`, input offset `x_off` (−zero point); on DSP cores the input is
/// unpacked once and three rows go per pass, the rest by the dot product.
pub fn gate_rows(x: &[u8], w: &[u8], rows: usize, x_off: i32) -> ([i32; 8], [i32; 8]) {
    let (n, rows) = (x.len(), rows.min(8));
    let mut want = [0i32; 8];
    for (k, a) in want.iter_mut().enumerate().take(rows) {
        *a = reference(x, 0, w, k * n, n, x_off);
    }
    let mut got = [0i32; 8];
    #[cfg(microarena_dsp)]
    let done = {
        let mut xu = [[0u32; 2]; 80];
        super::lstm::rows3_unpacked(x, x_off.wrapping_neg(), w, rows, &mut xu, &mut got)
    };
    #[cfg(not(microarena_dsp))]
    let done = 0;
    for (k, g) in got.iter_mut().enumerate().take(rows).skip(done) {
        *g = super::epilogue::dot_i8(x, 0, w, k * n, n, x_off);
    }
    (want, got)
}

/// `Σ a[k]·b[k]` over the int16 pairs of two byte slices (SVDF's int16
/// state against its time weights), wrapping.
pub fn dot_i16(a: &[u8], b: &[u8]) -> (i32, i32) {
    let mut want = 0i32;
    for (x, y) in a.as_chunks::<2>().0.iter().zip(b.as_chunks::<2>().0) {
        let x = i32::from(i16::from_le_bytes(*x));
        let y = i32::from(i16::from_le_bytes(*y));
        want = want.wrapping_add(x.wrapping_mul(y));
    }
    (want, super::epilogue::dot_i16x16(a, b))
}

/// A filter row of a depthwise window whose four channels share one input
/// channel, as this build runs it (on Armv6-M the Thumb-1 window loop, one row):
/// `acc[k] = k + 1 + Σ_i w[4i + k]·(x[i] + x_off)` over the taps both hold
/// (at most 64), starting from nonzero sums to catch a loop that overwrites.
pub fn bcast_row(x: &[u8], w: &[u8], x_off: i32) -> ([i32; 4], [i32; 4]) {
    let start = [1i32, 2, 3, 4];
    let quads = w.as_chunks::<4>().0;
    let n = x.len().min(quads.len()).min(64);
    let mut want = start;
    for (&xb, q) in x.iter().zip(quads).take(n) {
        let xv = i32::from(xb as i8).wrapping_add(x_off);
        for (a, &wb) in want.iter_mut().zip(q) {
            *a = a.wrapping_add(i32::from(wb as i8).wrapping_mul(xv));
        }
    }
    let mut got = start;
    #[cfg(microarena_v6m)]
    {
        let mut words = [0u32; 64];
        for (d, q) in words.iter_mut().zip(quads) {
            *d = u32::from_le_bytes(*q);
        }
        let words = words.get(..n).unwrap_or(&[]);
        if n > 0 && !super::v6m::bcast_window(&mut got, x, (1, 0, n), words, x_off) {
            got = [i32::MIN; 4];
        }
    }
    #[cfg(not(microarena_v6m))]
    for (&xb, q) in x.iter().zip(quads).take(n) {
        let xv = i32::from(xb as i8).wrapping_add(x_off);
        got = super::depthwise::quad_mac_bcast(got, xv, super::depthwise::quad_weights(*q));
    }
    (want, got)
}

/// [`bcast_row`] over `rows` rows of `n` taps, input rows `rs` bytes apart,
/// weight rows consecutive (whole filter rows), as this build runs a window
/// (on Armv6-M the Thumb-1 window loop; elsewhere row by row). At most 64
/// taps in all.
pub fn bcast_window(
    x: &[u8],
    w: &[u8],
    (rows, rs, n): (usize, usize, usize),
    x_off: i32,
) -> ([i32; 4], [i32; 4]) {
    let mut want = [1i32, 2, 3, 4];
    let mut portable = want;
    for r in 0..rows {
        let xr = x.get(r * rs..).unwrap_or(&[]);
        let xr = xr.get(..n).unwrap_or(xr);
        let wr = w.get(4 * r * n..).unwrap_or(&[]);
        let wr = wr.get(..4 * n).unwrap_or(wr);
        let (a, b) = bcast_row(xr, wr, x_off);
        // bcast_row starts from k + 1: add only what the row added.
        for (k, ((w, p), (a, b))) in want
            .iter_mut()
            .zip(&mut portable)
            .zip(a.into_iter().zip(b))
            .enumerate()
        {
            *w = w.wrapping_add(a.wrapping_sub(k as i32 + 1));
            *p = p.wrapping_add(b.wrapping_sub(k as i32 + 1));
        }
    }
    #[cfg(microarena_v6m)]
    {
        let _ = portable;
        let mut words = [0u32; 64];
        for (d, q) in words.iter_mut().zip(w.as_chunks::<4>().0) {
            *d = u32::from_le_bytes(*q);
        }
        let mut got = [1i32, 2, 3, 4];
        let words = words.get(..(rows * n).min(64)).unwrap_or(&[]);
        if !super::v6m::bcast_window(&mut got, x, (rows, rs, n), words, x_off) {
            got = [i32::MIN; 4];
        }
        return (want, got);
    }
    #[allow(unreachable_code)]
    (want, portable)
}
