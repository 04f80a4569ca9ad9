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
    let m = root_map(buf)?;
    (0..m.len)
        .map(|i| int(buf, m.at + i * m.width, m.width))
        .collect()
}

/// The root map's value under `key`, read as [`map_values`] reads each
/// (what TFLM's kernels read with `m["key"].AsInt32()` for integer and
/// boolean options). `None` when the key is absent or the map is malformed.
pub fn map_value(buf: &[u8], key: &str) -> Option<i64> {
    let m = root_map(buf)?;
    // The map's prefix: keys vector offset and byte width, before the length.
    let prefix = m.at.checked_sub(3 * m.width)?;
    let keys = prefix.checked_sub(usize::try_from(uint(buf, prefix, m.width)?).ok()?)?;
    let key_width = usize::try_from(uint(buf, m.at.checked_sub(2 * m.width)?, m.width)?).ok()?;
    if !matches!(key_width, 1 | 2 | 4 | 8) {
        return None;
    }
    (0..m.len).find_map(|i| {
        let slot = keys.checked_add(i.checked_mul(key_width)?)?;
        let start = slot.checked_sub(usize::try_from(uint(buf, slot, key_width)?).ok()?)?;
        let name = buf.get(start..)?;
        let end = name.iter().position(|&b| b == 0)?;
        (name.get(..end)? == key.as_bytes())
            .then(|| int(buf, m.at + i * m.width, m.width))
            .flatten()
    })
}

/// Where a FlexBuffers root map's values start, their byte width and count.
struct RootMap {
    at: usize,
    width: usize,
    len: usize,
}

fn root_map(buf: &[u8]) -> Option<RootMap> {
    let n = buf.len();
    let root_width = usize::from(*buf.get(n.checked_sub(1)?)?);
    let root_type = *buf.get(n.checked_sub(2)?)?;
    if !matches!(root_width, 1 | 2 | 4 | 8) || root_type >> 2 != FBT_MAP {
        return None;
    }
    let root_at = n.checked_sub(2 + root_width)?;
    let at = root_at.checked_sub(usize::try_from(uint(buf, root_at, root_width)?).ok()?)?;
    let width = 1usize << (root_type & 3);
    let len = usize::try_from(uint(buf, at.checked_sub(width)?, width)?).ok()?;
    // The values and their type bytes must lie inside the buffer.
    let end = at.checked_add(len.checked_mul(width + 1)?)?;
    (end <= n).then_some(RootMap { at, width, len })
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
    fn reads_a_map_by_key() {
        let b = energy_options();
        assert_eq!(map_value(&b, "start_index"), Some(2));
        assert_eq!(map_value(&b, "end_index"), Some(5));
        assert_eq!(map_value(&b, "end"), None);
        assert_eq!(map_value(&b[..20], "end_index"), None);
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
