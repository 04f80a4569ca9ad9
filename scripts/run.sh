#!/usr/bin/env bash
# Sets up what is missing, writes the bundled example model (MobileNet-v1 0.25,
# 96x96 int8, generated weights) and shows where every byte of its arena goes.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p target
cargo run -q --release -p microarena-cli -- example -o target/example.tflite
cargo run -q --release -p microarena-cli -- plan target/example.tflite --timeline
echo
cargo run -q --release -p microarena-cli -- plan target/example.tflite --target cortex-m
