//! Element accessors: tensor bytes read and written little-endian with
//! `from_le_bytes` and `get`, so there is no `unsafe` and no panic path. Sizes
//! are validated in Prepare; an impossible out-of-range read yields 0 and an
//! out-of-range write is dropped.

#[inline]
pub(crate) fn i8_at(s: &[u8], i: usize) -> i32 {
    s.get(i).map_or(0, |&b| i32::from(b as i8))
}

#[inline]
pub(crate) fn i32_at(s: &[u8], i: usize) -> i32 {
    s.get(i * 4..)
        .and_then(|b| b.first_chunk::<4>())
        .map_or(0, |b| i32::from_le_bytes(*b))
}

#[inline]
pub(crate) fn f32_at(s: &[u8], i: usize) -> f32 {
    f32::from_bits(i32_at(s, i) as u32)
}

#[inline]
pub(crate) fn i16_at(s: &[u8], i: usize) -> i32 {
    s.get(i * 2..)
        .and_then(|b| b.first_chunk::<2>())
        .map_or(0, |b| i32::from(i16::from_le_bytes(*b)))
}

/// Little-endian int64 element `i` (0 when out of range).
#[inline]
pub(crate) fn i64_at(s: &[u8], i: usize) -> i64 {
    s.get(i * 8..)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |b| i64::from_le_bytes(*b))
}

/// Stores the low 16 bits of `v` (C's `static_cast<int16_t>`; callers clamp first where TFLM does).
#[inline]
pub(crate) fn put_i16(s: &mut [u8], i: usize, v: i32) {
    if let Some(b) = s.get_mut(i * 2..i * 2 + 2) {
        b.copy_from_slice(&(v as i16).to_le_bytes());
    }
}

#[inline]
pub(crate) fn put_i8(s: &mut [u8], i: usize, v: i32) {
    if let Some(b) = s.get_mut(i) {
        *b = v.clamp(-128, 127) as i8 as u8;
    }
}

#[inline]
pub(crate) fn put_i32(s: &mut [u8], i: usize, v: i32) {
    if let Some(b) = s.get_mut(i * 4..i * 4 + 4) {
        b.copy_from_slice(&v.to_le_bytes());
    }
}

#[inline]
pub(crate) fn put_f32(s: &mut [u8], i: usize, v: f32) {
    put_i32(s, i, v.to_bits() as i32);
}

/// Copies as many bytes as both slices hold.
pub(crate) fn copy(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
        d.copy_from_slice(s);
    }
}
