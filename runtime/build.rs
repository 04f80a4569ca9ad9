//! Sets `cfg(microarena_dsp)` on `thumbv7em-*` (Armv7E-M: Cortex-M4/M7, which
//! always have the DSP extension), where the int8 dot product uses
//! SXTB16/SMLAD (src/kernels/dsp.rs). Stable Rust exposes no
//! `target_feature = "dsp"` to `cfg`, hence the target name. Armv8-M Mainline
//! (`thumbv8m.main-*`) is left out: there the extension is optional (a
//! Cortex-M33 may lack it), so the target name cannot promise it.
//! Sets `cfg(microarena_v6m)` on `thumbv6m-*` (Armv6-M: Cortex-M0/M0+),
//! where the 1×1 convolution's and the paired int8 rows' inner loops are
//! Thumb-1 `asm!` (src/kernels/v6m.rs: LLVM spills their sums from the eight
//! low registers, the loops keep them in high ones) and requantization
//! multiplies by 16-bit halves (`fixedpoint::mul_wide`: no `__aeabi_lmul`).
//! Stable Rust exposes no `thumb2` target feature to `cfg`, hence the name.
//! `MICROARENA_PORTABLE=1` keeps the portable path (for A/B measurements).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(microarena_dsp)");
    println!("cargo::rustc-check-cfg=cfg(microarena_v6m)");
    println!("cargo::rerun-if-env-changed=MICROARENA_PORTABLE");
    let target = std::env::var("TARGET").unwrap_or_default();
    let asm_ok = std::env::var("MICROARENA_PORTABLE").map_or(true, |v| v.is_empty() || v == "0");
    if asm_ok && target.starts_with("thumbv7em") {
        println!("cargo::rustc-cfg=microarena_dsp");
    }
    if asm_ok && target.starts_with("thumbv6m") {
        println!("cargo::rustc-cfg=microarena_v6m");
    }
}
