//! The little of FlexBuffers that custom operators' options need: the values
//! of the root map, by position, as integers — what TFLM's Signal kernels
//! read with `FlexbufferWrapper::ElementAsInt32(index)` (tflite-micro
//! 90b983c2 `tensorflow/lite/micro/micro_utils.h`). FlexBuffers stores a
//! map's keys sorted, so position `i` is the `i`-th key in byte order.
//!
//! Layout (FlexBuffers' spec): the last byte is the root's byte width, the
//! one before it the root's packed type (type << 2 | log2 width); a map is a
//! vector whose length sits one element width before its first value, and
//! whose packed value types follow its values, one byte each. TFLM reads the
//! slots without looking at those types, and so does this. Every read is
//! bounds-checked: a malformed buffer gives `None`, never a panic.

const FBT_MAP: u8 = 9;

fn uint(b: &[u8], at: usize, width: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(width)?)?;
    let mut v = 0u64;
    for (i, &x) in s.iter().enumerate() {
        v |= u64::from(x) << (8 * i);
    }
    Some(v)
}

fn int(b: &[u8], at: usize, width: usize) -> Option<i64> {
    let v = uint(b, at, width)?;
    let shift = 64 - 8 * width as u32;
    Some(((v << shift) as i64) >> shift)
}

/// The root map's values as TFLM's `ElementAsInt64` reads them: each slot's
/// bytes as a signed integer of the map's width, whatever its type byte says
/// (integers and booleans are stored inline, so this is their value), in map
/// (sorted-key) order. `None` unless the root is a map that fits the buffer.
pub fn map_values(buf: &[u8]) -> Option<alloc::vec::Vec<i64>> {
    let n = buf.len();
    let root_width = usize::from(*buf.get(n.checked_sub(1)?)?);
    let root_type = *buf.get(n.checked_sub(2)?)?;
    if !matches!(root_width, 1 | 2 | 4 | 8) || root_type >> 2 != FBT_MAP {
        return None;
    }
    let root_at = n.checked_sub(2 + root_width)?;
    let map = root_at.checked_sub(usize::try_from(uint(buf, root_at, root_width)?).ok()?)?;
    let width = 1usize << (root_type & 3);
    let len = usize::try_from(uint(buf, map.checked_sub(width)?, width)?).ok()?;
    // The values and their type bytes must lie inside the buffer.
    let end = map.checked_add(len.checked_mul(width + 1)?)?;
    if end > n {
        return None;
    }
    (0..len).map(|i| int(buf, map + i * width, width)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `{"end_index": 5, "start_index": 2}` written by hand with byte width 1:
    /// keys "end_index\0" (0..10), "start_index\0" (10..22); the keys vector
    /// (length 2 at 22, offsets at 23 and 24); the map's prefix (keys offset,
    /// keys width, length 2) at 25..28, values at 28 and 29, types at 30 and
    /// 31 (INT, width 1: 1 << 2); the root offset, type (MAP: 9 << 2) and
    /// width.
    fn energy_options() -> alloc::vec::Vec<u8> {
        let mut b = alloc::vec::Vec::new();
        b.extend_from_slice(b"end_index\0start_index\0");
        b.extend_from_slice(&[2, 23, 14]); // keys: len 2, 23-0, 24-10
        b.extend_from_slice(&[25 - 23, 1, 2]); // map prefix
        b.extend_from_slice(&[5, 2]); // values
        b.extend_from_slice(&[4, 4]); // types
        b.extend_from_slice(&[32 - 28, 36, 1]); // root
        b
    }

    #[test]
    fn reads_a_map_by_position() {
        assert_eq!(map_values(&energy_options()), Some(alloc::vec![5, 2]));
    }

    #[test]
    fn malformed_buffers_are_none() {
        let good = energy_options();
        for cut in 0..good.len() {
            let _ = map_values(&good[..cut]);
        }
        let mut bad = good.clone();
        let n = bad.len();
        bad[n - 3] = 200; // root offset before the buffer
        assert_eq!(map_values(&bad), None);
        assert_eq!(map_values(&[]), None);
    }
}
