//! The C library's `expf` and `logf` as the tflite-micro wheel gets them
//! (glibc ≥ 2.28 on x86-64): evaluated in double precision and rounded to
//! float once, which is the correctly rounded result except in rare
//! hard-to-round cases. `libm`'s own `expf`/`logf` are the older FreeBSD
//! float algorithms, up to 1 ULP away; computing through `libm::exp`/`log` in
//! `f64` matches the wheel on all SOFTMAX, LOG_SOFTMAX and LOGISTIC cases of
//! verify-kernels and on all but one value in 120 of EXP and LOG (glibc's
//! own rounding errs there; 1 ULP). `tanhf` stays `libm`'s: the double route
//! is further from glibc's `tanhf` (5 against 2 values in 200 off by 1 ULP).
//! A device's C library may round differently; TFLM's float results depend on
//! it too.

#[inline]
pub(crate) fn expf(x: f32) -> f32 {
    libm::exp(f64::from(x)) as f32
}

#[inline]
pub(crate) fn logf(x: f32) -> f32 {
    libm::log(f64::from(x)) as f32
}

/// `sinf` as the wheel's glibc gives it (double-precision evaluation rounded
/// once): `libm::sin` in `f64`, rounded to float — at most 1 ULP from it,
/// equal on verify-kernels' SIN cases.
#[inline]
pub(crate) fn sinf(x: f32) -> f32 {
    libm::sin(f64::from(x)) as f32
}

/// `cosf`, as [`sinf`].
#[inline]
pub(crate) fn cosf(x: f32) -> f32 {
    libm::cos(f64::from(x)) as f32
}

/// `expm1f`: `libm`'s own float algorithm (musl's), which equals the wheel's
/// glibc `expm1f` on all 120 values of verify-kernels' ELU case, where the
/// double route (as [`sinf`]) was 1 ULP off on 8.
#[inline]
pub(crate) fn expm1f(x: f32) -> f32 {
    libm::expm1f(x)
}
