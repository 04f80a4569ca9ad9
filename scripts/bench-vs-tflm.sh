#!/usr/bin/env bash
# Time per inference: microarena-runtime (`microarena run --repeat N`) next to
# TFLM's reference kernels (the tflite-micro wheel's `invoke`), same machine,
# same model, same golden input; prints both and the ratio.
#
#   bash scripts/bench-vs-tflm.sh [MODEL_NAME] [N] [ROUNDS]   (default: person_detect 50 5)
#
# Needs the corpus (MICROARENA_CORPUS, default ../shared) and a venv with
# tflite-micro + numpy (target/venv-tflm, the one `cargo xtask offline-plans`
# makes; created when missing). The two engines alternate, ROUNDS times N
# inferences each, so a machine whose load changes during the run weighs on
# both alike; each round prints its pair and ratio, the last line the median
# ratio. Both figures are CPU time (user + system) per inference.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-person_detect}
n=${2:-50}
rounds=${3:-5}
corpus=${MICROARENA_CORPUS:-../shared}
model="$corpus/models/$name.tflite"
golden="$corpus/golden/$name"
[ -f "$model" ] && [ -d "$golden" ] || { echo "no model or golden data for $name under $corpus" >&2; exit 2; }
venv=target/venv-tflm
if ! "$venv/bin/python" -c "import tflite_micro, numpy" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q tflite-micro numpy
fi
cargo build --release -q -p microarena-cli
inputs=()
for f in "$golden"/input*.bin; do inputs+=(--input "$f"); done
# One warm-up run of each, then alternating timed rounds.
./target/release/microarena run "$model" "${inputs[@]}" >/dev/null 2>&1
# CPU time (user + system) per inference, not wall time: on a shared or busy
# machine wall time measures the scheduler, CPU time the engine. Ours: the
# child's rusage of `run --repeat n+1` minus that of `run --repeat 1`, so
# reading and planning the model cancel out.
ours_round() {
  "$venv/bin/python" - "$n" ./target/release/microarena run "$model" "${inputs[@]}" <<'PY'
import resource, subprocess, sys
n, cmd = int(sys.argv[1]), sys.argv[2:]
def cpu(repeat):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd + ["--repeat", str(repeat)], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
one = cpu(1)
print(f"{(cpu(n + 1) - one) * 1e3 / n:.3f}")
PY
}
tflm_round() {
  "$venv/bin/python" - "$model" "$golden" "$n" <<'PY' 2>/dev/null | tail -1
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
t = time.process_time()
for _ in range(n):
    once()
print(f"{(time.process_time() - t) * 1e3 / n:.3f}")
PY
}
echo "model: $name, $rounds rounds of $n inferences per engine, $(nproc) CPU(s), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "CPU time per inference (user + system)"
echo "round  microarena-runtime  TFLM reference (wheel: set_input + invoke)  ratio"
ratios=()
for r in $(seq 1 "$rounds"); do
  ours=$(ours_round)
  tflm=$(tflm_round)
  ratio=$(awk -v a="$ours" -v b="$tflm" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  ratios+=("$ratio")
  printf "%5d  %15s ms  %15s ms  %27s\n" "$r" "$ours" "$tflm" "$ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { printf "median ratio microarena/TFLM: %s (of %d rounds)\n", v[int((NR + 1) / 2)], NR }'
