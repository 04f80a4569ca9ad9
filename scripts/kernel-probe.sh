#!/usr/bin/env bash
# Measures TFLM's arena figures for every kernel probe and writes them as the
# data core/tests/kernel_probes.rs compares microarena with, category by
# category.
#
#   bash scripts/kernel-probe.sh            # x86_64: the tflite-micro wheel
#   bash scripts/kernel-probe.sh --models DIR   # only write the probe models
#
# The probes are core/examples/kernel_cases.rs's models: one per kernel
# branch (`cases`), the allocation probes (`probes`, `probe_models`: every
# other registered kernel, the Prepare branches that allocate differently,
# control flow and resource variables) and the whole builder networks. Each
# is run in the wheel by scripts/kernel-probe.py (figures after
# AllocateTensors, and the smallest arena that works). Needs python3 with
# venv; installs the pinned wheel into target/venv-tflm on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
WHEEL=0.dev20261023182759
OUT=core/tests/kernel_probes_x86_64.jsonl
VENV=target/venv-tflm
TARGET=${CARGO_TARGET_DIR:-target}
cargo build -q -p microarena-core --example kernel_cases
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$TARGET/debug/examples/kernel_cases" "$WORK/m" >/dev/null
"$TARGET/debug/examples/kernel_cases" --probes "$WORK/m" >/dev/null
if [ "${1:-}" = --models ]; then
  mkdir -p "$2"
  cp "$WORK"/m/*.tflite "$2"/
  exit 0
fi
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import tflite_micro, numpy' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "tflite-micro==$WHEEL" numpy
fi
have=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("tflite-micro"))')
if [ "$have" != "$WHEEL" ]; then
  echo "target/venv-tflm has tflite-micro $have; the probes are measured with $WHEEL" >&2
  exit 1
fi
{
  printf '{"tflm": "tflite-micro wheel %s (x86-64, LP64, compression on)", "target": "x86_64"}\n' "$WHEEL"
  "$VENV/bin/python" scripts/kernel-probe.py --jobs "$(nproc)" "$WORK"/m/*.tflite | sort
} > "$WORK/out.jsonl"
mv "$WORK/out.jsonl" "$OUT"
echo "wrote $(($(wc -l < "$OUT") - 1)) probes to $OUT"
