//! Sets `cfg(microarena_dsp)` on Cortex-M targets with the DSP extension
//! (Armv7E-M and Armv8-M Mainline: `thumbv7em-*`, `thumbv8m.main-*`), where
//! the int8 dot product uses SXTB16/SMLAD (src/kernels/dsp.rs). Stable Rust
//! exposes no `target_feature = "dsp"` to `cfg`, hence the target name.
//! `MICROARENA_PORTABLE=1` keeps the portable path (for A/B measurements).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(microarena_dsp)");
    println!("cargo::rerun-if-env-changed=MICROARENA_PORTABLE");
    let target = std::env::var("TARGET").unwrap_or_default();
    let dsp = target.starts_with("thumbv7em") || target.starts_with("thumbv8m.main");
    if dsp && std::env::var("MICROARENA_PORTABLE").map_or(true, |v| v.is_empty() || v == "0") {
        println!("cargo::rustc-cfg=microarena_dsp");
    }
}
