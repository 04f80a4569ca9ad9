#!/usr/bin/env bash
# Checks microarena-runtime's kernels against TFLM itself (the tflite-micro
# wheel, TFLM's reference kernels), bit for bit.
#
# core/examples/kernel_cases.rs writes one small builder model per kernel
# branch (dtype, per-channel or per-tensor, padding, stride, dilation, fused
# activation, broadcast shape, axes, keep_dims …) with deterministic inputs;
# scripts/kernel-oracle.py runs each in the wheel, `microarena run` runs each
# in the runtime, and the output bytes are compared. It also checks that
# `plan --json` gives a runtime arena exactly when `run` accepts the model.
# Prints a Markdown table; exits 1 on any mismatch. Cases the wheel refuses are
# listed and not counted as failures.
#
# Needs python3 with venv; installs tflite-micro + numpy into target/venv-tflm
# on first use (shared with scripts/verify-offline-plans.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/venv-tflm
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import tflite_micro, numpy' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q tflite-micro numpy
fi
PY="$VENV/bin/python"
TARGET=${CARGO_TARGET_DIR:-target}

cargo build -q --release -p microarena-cli
BIN=$TARGET/release/microarena
WORK=${KERNELS_WORK:-$(mktemp -d)}
[ -n "${KERNELS_WORK:-}" ] || trap 'rm -rf "$WORK"' EXIT
rm -rf "$WORK/cases" "$WORK/tflm" "$WORK/ma"
mkdir -p "$WORK/cases" "$WORK/tflm" "$WORK/ma"
cargo run -q --release -p microarena-core --example kernel_cases -- "$WORK/cases"

"$PY" scripts/kernel-oracle.py run "$WORK/cases" "$WORK/tflm"

while IFS=$'\t' read -r name _ n_in _ invokes; do
  ins=()
  for ((k = 0; k < n_in; k++)); do ins+=("$WORK/cases/$name.in$k.bin"); done
  "$BIN" plan --json "$WORK/cases/$name.tflite" >"$WORK/ma/$name.plan.json" 2>/dev/null || true
  # As many outputs as TFLM wrote (one when TFLM refused the case).
  n_out=$(find "$WORK/tflm" -name "$name.out*.bin" | wc -l)
  [ "$n_out" -gt 0 ] || n_out=1
  outs=()
  for ((k = 0; k < n_out; k++)); do outs+=("$WORK/ma/$name.out$k.bin"); done
  # As many invokes as the case asks (a stateful model's carried state), as the oracle.
  if ! "$BIN" run "$WORK/cases/$name.tflite" --repeat "${invokes:-1}" --input "${ins[@]}" --output "${outs[@]}" \
      >/dev/null 2>"$WORK/ma/$name.log"; then
    mv "$WORK/ma/$name.log" "$WORK/ma/$name.err"
  fi
done <"$WORK/cases/cases.tsv"

"$PY" scripts/kernel-oracle.py compare "$WORK/cases" "$WORK/tflm" "$WORK/ma"
