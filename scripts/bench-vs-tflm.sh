#!/usr/bin/env bash
# Time per inference: microarena-runtime (`microarena run --repeat N`) next to
# TFLM's reference kernels (the tflite-micro wheel's `invoke`), same machine,
# same model, same golden input; prints both and the ratio.
#
#   bash scripts/bench-vs-tflm.sh [MODEL_NAME] [N]      (default: person_detect 50)
#
# Needs the corpus (MICROARENA_CORPUS, default ../shared) and a venv with
# tflite-micro + numpy (created under target/venv when missing). Run it on an
# otherwise idle machine: both figures are wall-clock means.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-person_detect}
n=${2:-50}
corpus=${MICROARENA_CORPUS:-../shared}
model="$corpus/models/$name.tflite"
golden="$corpus/golden/$name"
[ -f "$model" ] && [ -d "$golden" ] || { echo "no model or golden data for $name under $corpus" >&2; exit 2; }
venv=target/venv
if ! "$venv/bin/python" -c "import tflite_micro, numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q tflite-micro numpy
fi
cargo build --release -q -p microarena-cli
inputs=()
for f in "$golden"/input*.bin; do inputs+=(--input "$f"); done
# One warm-up run, then N timed runs (the CLI prints "X ms per inference").
./target/release/microarena run "$model" "${inputs[@]}" >/dev/null 2>&1
ours=$(./target/release/microarena run "$model" "${inputs[@]}" --repeat "$n" 2>/dev/null | awk '/ms per inference/ {print $1}')
tflm=$("$venv/bin/python" - "$model" "$golden" "$n" <<'PY' 2>/dev/null | tail -1
import json, sys, time
import numpy as np
from tflite_micro.python.tflite_micro import runtime
model, golden, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
meta = json.load(open(f"{golden}/meta.json"))
it = runtime.Interpreter.from_file(model, arena_size=8 << 20)
xs = [np.fromfile(f"{golden}/input{i}.bin", dtype=np.dtype(m["dtype"]).newbyteorder("<")).reshape(m["shape"])
      for i, m in enumerate(meta["inputs"])]
def once():
    for i, x in enumerate(xs):
        it.set_input(x, i)
    it.invoke()
once()
t = time.perf_counter()
for _ in range(n):
    once()
print(f"{(time.perf_counter() - t) * 1e3 / n:.3f}")
PY
)
echo "model: $name, $n inferences each, $(nproc) CPU(s)"
echo "microarena-runtime : $ours ms per inference"
echo "TFLM reference     : $tflm ms per inference (tflite-micro wheel, set_input + invoke)"
awk -v a="$ours" -v b="$tflm" 'BEGIN { if (b > 0) printf "ratio microarena/TFLM: %.2f\n", a / b }'
