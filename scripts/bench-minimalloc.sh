#!/usr/bin/env bash
# Side-by-side bench: MiniMalloc (Moffitt, ASPLOS 2023; google/minimalloc,
# Apache-2.0, C++) and our `best` planner on the same 11 "challenging"
# instances, with raw and rank-compressed lifetimes, in one run. Prints
# instance, buffers, MiniMalloc's time, best's time, their ratio (best /
# MiniMalloc: ≤ 1 means we are as fast or faster) and both heads.
#
#   bash scripts/bench-minimalloc.sh MINIMALLOC_BIN [BENCH ARGS]
#   MICROARENA_MM_BIN=... bash scripts/bench-minimalloc.sh
#
# MINIMALLOC_BIN is MiniMalloc's CLI, built by you from its sources (the
# figures in docs/planner-best.md name the commit, compiler and flags; no
# recipe that builds third-party code is kept here). CI has no GitHub access
# and does not run this script. Without it, the bench runs `best` alone.
#
# MiniMalloc's time is the "Elapsed time" its CLI logs around Solver::Solve
# (parsing excluded); ours is the time around best::plan_with_options. Both
# stop at the 1 MiB capacity (MiniMalloc's decision problem); MiniMalloc is
# stopped after MICROARENA_MM_TIMEOUT (default 60s). MICROARENA_BEST_BUDGET
# and MICROARENA_MM_ONLY apply. Figures: docs/planner-best.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MICROARENA_MM_BIN:-}
if [ $# -gt 0 ]; then
  bin=$1
  shift
fi
if [ -n "$bin" ]; then
  [ -x "$bin" ] || { echo "$bin: not an executable MiniMalloc program" >&2; exit 2; }
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  export MICROARENA_MM_BIN="$bin"
else
  echo "no MiniMalloc program given: running best alone" >&2
fi
nice cargo bench -j1 -q -p microarena-core --bench minimalloc -- "$@"
