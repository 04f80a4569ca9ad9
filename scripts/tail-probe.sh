#!/usr/bin/env bash
# Compares microarena's x86_64 tail with TFLM's, category by category
# (RecordingMicroAllocator's used / requested / count), on the builder-made
# models of core/examples/tail_probe.rs, or on the .tflite files given.
#
#   bash scripts/tail-probe.sh [MODEL.tflite ...]
#
# Needs python3 with venv; installs tflite-micro + numpy into target/venv-tflm
# on first use. Prints one line per model: TFLM's tail, microarena's, and every
# category that differs (TFLM -> microarena).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${MICROARENA_CORPUS:-../shared}
case "$CORPUS" in /*) ;; *) CORPUS="$PWD/$CORPUS" ;; esac
VENV=target/venv-tflm
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import tflite_micro, numpy' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q tflite-micro numpy
fi
cargo build -q -p microarena-cli
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
if [ $# -eq 0 ]; then
  mapfile -t models < <(cargo run -q -p microarena-core --example tail_probe -- "$WORK")
else
  models=("$@")
fi
for m in "${models[@]}"; do
  "$VENV/bin/python" "$CORPUS/oracle/tflm_figures.py" "$m" >"$WORK/tflm.json"
  target/debug/microarena plan --json --target x86_64 "$m" >"$WORK/ours.json"
  "$VENV/bin/python" - "$m" "$WORK/tflm.json" "$WORK/ours.json" <<'PY'
import json, os, sys
name, t, o = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
if not t.get("ok"):
    print(f"{os.path.basename(name)}: TFLM failed: {t.get('error')}"); sys.exit()
ours = {c["category"]: c for c in o["tail"]}
diffs = []
for cat, v in t["categories"].items():
    c = ours.get(cat, {"bytes": 0, "requested_bytes": 0, "count": 0})
    mine = (c["bytes"], c["requested_bytes"], c["count"])
    theirs = (v["used"], v["requested"], v["count"])
    if mine != theirs:
        diffs.append(f"{cat}: {theirs} -> {mine}")
tail = o["arena"]["tail_bytes"]
flag = "exact" if tail == t["tail_bytes"] and not diffs else "MISS"
print(f"{os.path.basename(name)}: TFLM tail {t['tail_bytes']} head {t['head_bytes']}, "
      f"microarena tail {tail} head {o['arena']['head_bytes']} {flag} {'; '.join(diffs)}")
PY
done
