#!/usr/bin/env bash
# Runs every check and test: formatting, clippy on every crate and target,
# host tests, the no_std builds, and (where present) the firmware under QEMU
# and the browser tests. Set MICROARENA_CORPUS=../shared to include the corpus
# tests; without it they report that they were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

step() { printf '\n== %s\n' "$*" >&2; }

step "format"
cargo fmt --all --check
# The fuzz and wasm-probe crates are workspaces of their own.
(cd fuzz && cargo fmt --check)
(cd wasm-probe && cargo fmt --check)

step "clippy (host, all targets)"
# The web app is linted for wasm32 only: building leptos for the host too
# would double the compile time (toolchain.md P8).
cargo clippy --workspace --exclude microarena-app --all-targets -- -D warnings

step "clippy (web app, wasm32)"
cargo clippy -p microarena-app --target wasm32-unknown-unknown --all-targets -- -D warnings

step "clippy (no_std targets)"
for t in thumbv7em-none-eabihf thumbv6m-none-eabi wasm32-unknown-unknown; do
  cargo clippy -p microarena-core --no-default-features --target "$t" -- -D warnings
  cargo clippy -p microarena-core --target "$t" -- -D warnings
done

step "no_std builds"
for t in thumbv7em-none-eabihf thumbv6m-none-eabi wasm32-unknown-unknown; do
  cargo build --release -p microarena-core --no-default-features --target "$t"
  cargo build --release -p microarena-core --no-default-features --features alloc --target "$t"
done

step "host tests"
cargo test --workspace --exclude microarena-app

step "wasm32 plans equal native plans (determinism probe under node)"
cargo clippy --release --manifest-path wasm-probe/Cargo.toml --target wasm32-unknown-unknown --target-dir target -- -D warnings
cargo build --release --manifest-path wasm-probe/Cargo.toml --target wasm32-unknown-unknown --target-dir target
if command -v node >/dev/null; then
  node scripts/wasm-plan-hash.mjs target/wasm32-unknown-unknown/release/microarena_wasm_probe.wasm
else
  echo "skipped: node is not installed" >&2
fi

step "offline plans against TFLM itself (tflite-micro wheel, about 40 s)"
if [ -n "${MICROARENA_CORPUS:-}" ] && python3 -c 'import ensurepip, venv' 2>/dev/null; then
  bash scripts/verify-offline-plans.sh
else
  echo "skipped: needs MICROARENA_CORPUS and python3 with venv" >&2
fi

step "runtime builds for the thumb targets (no heap)"
for t in thumbv7em-none-eabihf thumbv6m-none-eabi; do
  cargo build --release -p microarena-runtime --target "$t"
  cargo clippy -p microarena-runtime --target "$t" -- -D warnings
done

step "firmware under QEMU (Cortex-M4 mps2-an386, Cortex-M0 microbit)"
(
  cd firmware
  cargo fmt --check
  cargo clippy --release --all-targets -- -D warnings
  cargo test --release
  cargo clippy --release --target thumbv6m-none-eabi --all-targets -- -D warnings
  cargo test --release --target thumbv6m-none-eabi
  cargo run --release
  arm-none-eabi-size target/thumbv7em-none-eabihf/release/microarena-firmware 2>/dev/null || true
)

if [ -n "${MICROARENA_CORPUS:-}" ]; then
  step "firmware under QEMU on TFLM's golden data (device output must equal TFLM's)"
  corpus=$(cd "$MICROARENA_CORPUS" && pwd)
  for m in person_detect micro_speech_lstm; do
    (
      cd firmware
      MICROARENA_FIRMWARE_MODEL="$corpus/models/$m.tflite" \
      MICROARENA_FIRMWARE_INPUT="$corpus/golden/$m/input0.bin" \
      MICROARENA_FIRMWARE_EXPECTED="$corpus/golden/$m/output0.bin" \
        cargo run --release
    )
  done
fi

step "Miri on the runtime (allocator, fixed-point, kernel and golden tests)"
# Under cfg(miri) the kernel sweeps sample the corrupted images and the golden
# tests run the hello_world-sized models (see runtime/tests/{kernels,golden}.rs);
# the rest are #[cfg_attr(miri, ignore)] with the reason.
rustup +nightly component add miri rust-src >/dev/null 2>&1 || rustup +nightly component add miri rust-src
PROPTEST_CASES=4 MIRIFLAGS="-Zmiri-disable-isolation" cargo +nightly miri test -p microarena-runtime --lib --test arena_props --test kernels --test golden

step "fuzz smoke (every target, short run; scripts/fuzz.sh runs them for longer)"
(cd fuzz && cargo +nightly clippy --all-targets -- -D warnings)
bash scripts/fuzz.sh "${FUZZ_SMOKE_SECONDS:-20}" plan whatif runtime image optimize share

step "benchmarks compile"
cargo bench --workspace --exclude microarena-app --no-run

step "web app: build (scripts/build-web.sh) and browser tests (Playwright, headless Chromium)"
t0=$(date +%s)
bash scripts/build-web.sh
# The tests compare the page with the CLI and open a generated 2,000-op model.
cargo build --release -p microarena-cli -p microarena-core --example synthetic
node --test e2e/
echo "web app build and browser tests: $(( $(date +%s) - t0 )) s" >&2
