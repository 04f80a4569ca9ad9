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

step "clippy (host, all targets)"
cargo clippy --workspace --all-targets -- -D warnings

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
cargo test --workspace

step "benchmarks compile"
cargo bench --workspace --no-run
