//! NumPy-style broadcasting of two inputs onto an output shape (dims
//! right-aligned, each equal to the output's or 1), shared by the binary
//! element-wise families.

use crate::image::TensorInfo;

/// Broadcast-compatible shapes for binary ops (dims equal or 1).
pub(crate) fn broadcastable(a: &TensorInfo, b: &TensorInfo, out: &TensorInfo) -> bool {
    let r = out.rank;
    if a.rank > r || b.rank > r {
        return false;
    }
    (0..r).all(|k| {
        let o = out.dim(k);
        let da = if k + a.rank >= r {
            a.dim(k + a.rank - r)
        } else {
            1
        };
        let db = if k + b.rank >= r {
            b.dim(k + b.rank - r)
        } else {
            1
        };
        (da == o || da == 1) && (db == o || db == 1) && o == da.max(db)
    })
}

/// Index into `t` (right-aligned, broadcast dims of 1) for output element `i`.
pub(crate) fn bcast_index(i: usize, out: &TensorInfo, t: &TensorInfo) -> usize {
    let r = out.rank;
    let mut rem = i;
    let mut idx = 0usize;
    let mut stride = 1usize;
    for k in (0..r).rev() {
        let o = out.dim(k).max(1);
        let c = rem % o;
        rem /= o;
        if k + t.rank >= r {
            let d = t.dim(k + t.rank - r);
            if d > 1 {
                idx += c * stride;
            }
            stride *= d.max(1);
        }
    }
    idx
}
