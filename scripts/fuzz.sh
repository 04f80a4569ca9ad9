#!/usr/bin/env bash
# Fuzzes every target for SECONDS each (default 600) with seed corpora from the
# bundled example, builder models and, when present, ../shared/models.
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]
# Needs nightly and cargo-fuzz (installed here if missing). Crashers land in
# fuzz/artifacts/<target>/; turn each into a regression test.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(plan whatif runtime image optimize share)
command -v cargo-fuzz >/dev/null || cargo +nightly install cargo-fuzz --locked
CORPUS=${MICROARENA_CORPUS:-../shared}
seeds=fuzz/corpus
mkdir -p "$seeds/plan" "$seeds/whatif" "$seeds/runtime" "$seeds/image" "$seeds/optimize" "$seeds/share" target
cargo run -q --release -p microarena-cli -- example -o target/example.tflite 2>/dev/null
for d in plan runtime optimize; do
  cp target/example.tflite "$seeds/$d/"
  [ -d "$CORPUS/models" ] && cp "$CORPUS"/models/*.tflite "$seeds/$d/" || true
done
# What-if seeds: four knob bytes (input, axis, rule, amount) before each model.
for m in "$seeds"/plan/*.tflite; do
  for k in '\x00\x01\x02\x01' '\x00\x01\x00\x19' '\x00\x00\x01\x01'; do
    { printf "$k"; cat "$m"; } > "$seeds/whatif/$(basename "$m" .tflite)-$(printf "$k" | od -An -tx1 | tr -d ' ').bin"
  done
done
for m in "$seeds"/runtime/*.tflite; do
  cargo run -q --release -p microarena-core --example lower -- "$m" "$seeds/image/$(basename "$m" .tflite).img" 2>/dev/null || true
done
# Image seeds for every kernel branch: the verify-kernels cases the runtime runs.
rm -rf target/kernel-cases
cargo run -q --release -p microarena-core --example kernel_cases -- target/kernel-cases
cargo build -q --release -p microarena-core --example lower
for m in target/kernel-cases/*.tflite; do
  "${CARGO_TARGET_DIR:-target}/release/examples/lower" "$m" "$seeds/image/kc-$(basename "$m" .tflite).img" 2>/dev/null || true
done
# The cases as models too: small graphs of every kernel branch make the
# runtime target's differential run fast (~750 executions/s).
cp target/kernel-cases/*.tflite "$seeds/runtime/"
# Share-link seeds: the links of the example and corpus models.
for m in "$seeds"/plan/*.tflite; do
  cargo run -q --release -p microarena-core --example share_link -- "$m" > "$seeds/share/$(basename "$m" .tflite).txt" 2>/dev/null || true
done
for t in "${TARGETS[@]}"; do
  echo "== fuzz $t for ${SECONDS_EACH}s"
  (cd fuzz && cargo +nightly fuzz run -O "$t" "corpus/$t" -- -max_total_time="$SECONDS_EACH" -max_len=400000 -rss_limit_mb=2048 -print_final_stats=1 2>&1 | tail -n 25)
done
