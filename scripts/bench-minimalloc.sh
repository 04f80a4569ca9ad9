#!/usr/bin/env bash
# Side-by-side bench: MiniMalloc (Moffitt, ASPLOS 2023; google/minimalloc,
# Apache-2.0, C++) built from source, and our `best` planner, on the same 11
# "challenging" instances, with raw and rank-compressed lifetimes, in one run.
# Prints instance, buffers, MiniMalloc's time, best's time, their ratio
# (best / MiniMalloc: ≤ 1 means we are as fast or faster) and both heads.
#
#   bash scripts/bench-minimalloc.sh MINIMALLOC_SRC
#   MINIMALLOC_SRC=... bash scripts/bench-minimalloc.sh
#
# MINIMALLOC_SRC is a checkout of https://github.com/google/minimalloc or a
# bare clone of it (its HEAD is exported). Nothing is downloaded: CI has no
# GitHub access and does not run this script. Needs g++ (C++20) and abseil's
# headers and libraries (Debian: `apt-get install libabsl-dev`). Debian 12's
# abseil (20220623) predates absl/log, which MiniMalloc's main.cc and
# solver.cc include; the script then supplies a minimal stand-in for the few
# logging macros they use (LOG to stderr, DLOG compiled out as in a release
# build), and Debian's abseil has its own absl::string_view, so one loop in
# converter.cc is edited to take it by value (on a copy of the sources).
# MiniMalloc is built with -O3 -DNDEBUG (its README builds Release) into
# $CARGO_TARGET_DIR/minimalloc/ (default target/minimalloc/).
#
# Its time is the "Elapsed time" its CLI logs around Solver::Solve (parsing
# excluded); ours is the time around best::plan_with_options. Both stop at the
# 1 MiB capacity (MiniMalloc's decision problem); MiniMalloc is stopped after
# MICROARENA_MM_TIMEOUT (default 60s). Extra arguments go to the bench (none
# are needed); MICROARENA_BEST_BUDGET and MICROARENA_MM_ONLY apply. Figures:
# docs/planner-best.md.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${MINIMALLOC_SRC:-}
if [ $# -gt 0 ]; then src=$1; shift; fi
[ -n "$src" ] || { echo "usage: $0 MINIMALLOC_SRC (a checkout or bare clone of google/minimalloc)" >&2; exit 2; }
out=${CARGO_TARGET_DIR:-target}/minimalloc
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Sources are copied (a bare clone's HEAD exported) so the compat edit below
# never touches the given tree.
mm="$out/src-export"
rm -rf "$mm" && mkdir -p "$mm"
if [ -f "$src/src/solver.cc" ]; then
  cp -r "$src/src" "$mm/"
elif git -C "$src" rev-parse --is-bare-repository >/dev/null 2>&1; then
  git -C "$src" archive HEAD src | tar -x -C "$mm"
  git -C "$src" log -1 --format='MiniMalloc commit %h (%ad)' --date=short >&2
else
  echo "$src is neither a MiniMalloc checkout (src/solver.cc) nor a git clone" >&2
  exit 2
fi
# Debian's abseil keeps its own absl::string_view (not std's), which one loop
# in converter.cc binds to a std::string_view reference; take it by value.
sed -i 's/for (const std::string_view& record : records)/for (absl::string_view record : records)/' \
  "$mm/src/converter.cc"

# Stand-in for absl/log when the installed abseil lacks it.
inc=()
if ! echo '#include "absl/log/log.h"' | g++ -std=c++20 -x c++ -fsyntax-only - 2>/dev/null; then
  shim="$out/shim/absl/log"
  mkdir -p "$shim"
  cat >"$shim/log.h" <<'EOF'
// Minimal stand-in for absl/log (absent from abseil before 2023): LOG(x)
// writes one line to stderr, DLOG(x) is compiled out (NDEBUG build).
#pragma once
#include <iostream>
namespace mm_shim {
struct Line {
  ~Line() { std::cerr << std::endl; }
  template <class T> Line& operator<<(const T& v) { std::cerr << v; return *this; }
  Line& operator<<(std::ostream& (*f)(std::ostream&)) { std::cerr << f; return *this; }
  Line& operator<<(std::ios_base& (*f)(std::ios_base&)) { std::cerr << f; return *this; }
};
struct Null {
  template <class T> Null& operator<<(const T&) { return *this; }
  Null& operator<<(std::ostream& (*)(std::ostream&)) { return *this; }
  Null& operator<<(std::ios_base& (*)(std::ios_base&)) { return *this; }
};
}  // namespace mm_shim
#define LOG(severity) ::mm_shim::Line()
#define DLOG(severity) while (false) ::mm_shim::Null()
EOF
  cat >"$shim/globals.h" <<'EOF'
#pragma once
#include "absl/base/log_severity.h"
namespace absl {
inline void SetStderrThreshold(absl::LogSeverityAtLeast) {}
inline void EnableLogPrefix(bool) {}
}  // namespace absl
EOF
  cat >"$shim/initialize.h" <<'EOF'
#pragma once
namespace absl {
inline void InitializeLog() {}
}  // namespace absl
EOF
  inc=(-I "$out/shim")
fi

bin="$out/minimalloc"
libs=$(pkg-config --libs absl_flags_parse absl_flags absl_statusor absl_status \
  absl_strings absl_str_format absl_time absl_hash absl_raw_hash_set 2>/dev/null) ||
  { echo "abseil not found by pkg-config (Debian: apt-get install libabsl-dev)" >&2; exit 2; }
echo "building MiniMalloc into $bin" >&2
nice g++ -std=c++20 -O3 -DNDEBUG "${inc[@]}" -I "$mm/src" \
  "$mm"/src/{converter,minimalloc,solver,sweeper,validator,main}.cc \
  -o "$bin" $libs

MICROARENA_MM_BIN="$bin" nice cargo bench -j1 -q -p microarena-core --bench minimalloc -- "$@"
