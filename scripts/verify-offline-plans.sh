#!/usr/bin/env bash
# Checks `microarena optimize` against TFLM itself (the tflite-micro wheel).
#
# For every model in $MICROARENA_CORPUS/models (default ../shared) and for the
# builder-made demo models on which `best` beats TFLM's greedy planner
# (core/examples/offline_demo.rs), it writes the optimized model, runs the
# TFLM oracle ($MICROARENA_CORPUS/oracle/tflm_figures.py) on the original and
# on the optimized model, and checks
#   (a) the head TFLM measures for the optimized model == the head microarena
#       predicted for it, and
#   (b) the optimized model's outputs are bit-identical to the original's
#       ($MICROARENA_CORPUS/golden/<model>/output*.bin where present, else the
#       original run; the oracle regenerates the same seed-1234 inputs).
# Prints a Markdown table; exits 1 on any mismatch. Models TFLM cannot load
# are listed with the reason and not counted as failures.
#
# Needs python3 with venv; installs tflite-micro + numpy into target/venv-tflm
# on first use (about 15 s).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${MICROARENA_CORPUS:-../shared}
case "$CORPUS" in /*) ;; *) CORPUS="$PWD/$CORPUS" ;; esac
ORACLE="$CORPUS/oracle/tflm_figures.py"
VENV=target/venv-tflm
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import tflite_micro, numpy' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q tflite-micro numpy
fi
PY="$VENV/bin/python"

cargo build -q --release -p microarena-cli
BIN=target/release/microarena
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/demo" "$WORK/opt" "$WORK/golden-orig" "$WORK/golden-opt"
cargo run -q --release -p microarena-core --example offline_demo -- "$WORK/demo" >/dev/null

field() { "$PY" -c 'import json,sys; d=json.loads(sys.stdin.readline()); v=d.get(sys.argv[1]); print("" if v is None else v)' "$1"; }

echo "| model | original head (TFLM measured) | optimized head (predicted) | TFLM measured (optimized) | plan | outputs identical |"
echo "|---|---|---|---|---|---|"
fail=0
for model in "$CORPUS"/models/*.tflite "$WORK"/demo/*.tflite; do
  name=$(basename "$model" .tflite)
  out="$WORK/opt/$name.tflite"
  if ! res=$("$BIN" optimize "$model" -o "$out" --reorder --force --json 2>"$WORK/err"); then
    echo "| $name | | | | optimize failed: $(head -c 120 "$WORK/err") | |"
    fail=1
    continue
  fi
  orig_pred=$(printf '%s' "$res" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["original_head_bytes"])')
  pred=$(printf '%s' "$res" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["head_bytes"])')
  plan=$(printf '%s' "$res" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["strategy"] + (", reordered" if d["reordered"] else ""))')
  orig=$("$PY" "$ORACLE" --golden "$WORK/golden-orig" "$model")
  if [ "$(printf '%s' "$orig" | field ok)" != "True" ]; then
    echo "| $name | (predicted $orig_pred) | $pred | TFLM cannot load it: $(printf '%s' "$orig" | field error | cut -c1-80) | $plan | n/a |"
    continue
  fi
  orig_head=$(printf '%s' "$orig" | field head_bytes)
  meas=$("$PY" "$ORACLE" --golden "$WORK/golden-opt" "$out")
  meas_ok=$(printf '%s' "$meas" | field ok)
  meas_head=$(printf '%s' "$meas" | field head_bytes)
  ref="$CORPUS/golden/$name"
  [ -d "$ref" ] || ref="$WORK/golden-orig/$name"
  same=yes
  n=0
  for f in "$ref"/output*.bin; do
    n=$((n + 1))
    cmp -s "$f" "$WORK/golden-opt/$name/$(basename "$f")" || same=no
  done
  [ "$n" -gt 0 ] || same=no
  verdict=""
  if [ "$meas_ok" != "True" ] || [ "$meas_head" != "$pred" ] || [ "$same" != yes ]; then
    verdict=" MISMATCH"
    fail=1
  fi
  echo "| $name | $orig_head | $pred | $meas_head$verdict | $plan | $same |"
done
exit $fail
