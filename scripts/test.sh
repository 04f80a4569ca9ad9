#!/usr/bin/env bash
# Runs every check and test: formatting, clippy on every crate and target,
# the no_std builds, host tests, and (where present) the firmware under QEMU
# and the browser tests. Set MICROARENA_CORPUS=../shared to include the corpus
# tests; without it they report that they were skipped.
# The steps are named in xtask/ (`cargo xtask --help`); run one with `cargo xtask STEP`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo xtask all
