//! Sets `cfg(microarena_dsp)` on `thumbv7em-*` (Armv7E-M: Cortex-M4/M7, which
//! always have the DSP extension), where the int8 dot product uses
//! SXTB16/SMLAD (src/kernels/dsp.rs). Stable Rust exposes no
//! `target_feature = "dsp"` to `cfg`, hence the target name. Armv8-M Mainline
//! (`thumbv8m.main-*`) is left out: there the extension is optional (a
//! Cortex-M33 may lack it), so the target name cannot promise it.
//! `MICROARENA_PORTABLE=1` keeps the portable path (for A/B measurements).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(microarena_dsp)");
    println!("cargo::rerun-if-env-changed=MICROARENA_PORTABLE");
    let target = std::env::var("TARGET").unwrap_or_default();
    let dsp = target.starts_with("thumbv7em");
    if dsp && std::env::var("MICROARENA_PORTABLE").map_or(true, |v| v.is_empty() || v == "0") {
        println!("cargo::rustc-cfg=microarena_dsp");
    }
}
