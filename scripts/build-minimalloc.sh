#!/usr/bin/env bash
# Builds MiniMalloc's command-line program (Moffitt, ASPLOS 2023;
# google/minimalloc, Apache-2.0, C++20) from a checkout of its sources, for
# scripts/bench-minimalloc.sh, and prints the program's path.
#
#   bash scripts/build-minimalloc.sh /path/to/minimalloc [OUT_DIR]
#
# The checkout is yours: this repository neither vendors nor fetches it (CI
# has no GitHub access and does not run the bench). It is compiled with g++
# (-O3 -DNDEBUG, MiniMalloc's Release) against the system's abseil through
# pkg-config — on Debian 12: `apt install g++ pkg-config libabsl-dev`. Set
# ABSL_PREFIX to use another abseil install (its lib/pkgconfig is searched
# first).
#
# Debian 12 ships abseil 20220623. MiniMalloc from 2025-09 on logs with
# absl/log, which abseil added in 20230125; commit 18d8590 (2025-03, the
# solver of the paper plus hatless pruning and fixed offsets) builds against
# Debian's. That abseil's string_view is its own type, not std's, and one
# loop in converter.cc binds it to `const std::string_view&`; the copy built
# here reads it as `absl::string_view` (nothing else is changed).
set -euo pipefail
src=${1:?usage: build-minimalloc.sh /path/to/minimalloc [OUT_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
out=${2:-$root/target/minimalloc}
[ -f "$src/src/solver.cc" ] || {
  echo "$src: no src/solver.cc: not a checkout of google/minimalloc" >&2
  exit 2
}
command -v g++ > /dev/null || { echo "g++ not found (apt install g++)" >&2; exit 2; }
command -v pkg-config > /dev/null || {
  echo "pkg-config not found (apt install pkg-config)" >&2
  exit 2
}
if [ -n "${ABSL_PREFIX:-}" ]; then
  export PKG_CONFIG_PATH="$ABSL_PREFIX/lib/pkgconfig:$ABSL_PREFIX/lib64/pkgconfig:${PKG_CONFIG_PATH:-}"
fi
libs=(absl_flags_parse absl_flags absl_statusor absl_status absl_time absl_strings
  absl_raw_hash_set absl_hash)
if grep -q '#include "absl/log/' "$src"/src/*.cc; then
  libs+=(absl_log absl_log_initialize absl_log_globals)
fi
for l in "${libs[@]}"; do
  pkg-config --exists "$l" || {
    echo "abseil's $l not found by pkg-config (apt install libabsl-dev, or ABSL_PREFIX=...)." >&2
    if [[ $l == absl_log* ]]; then
      echo "This MiniMalloc logs with absl/log (abseil >= 20230125); Debian 12's abseil builds commit 18d8590." >&2
    fi
    exit 2
  }
done
rm -rf "$out/src"
mkdir -p "$out"
cp -r "$src/src" "$out/src"
sed -i 's/for (const std::string_view& record : records)/for (const absl::string_view record : records)/' \
  "$out/src/converter.cc"
cc=()
for f in converter main minimalloc solver sweeper validator; do cc+=("$out/src/$f.cc"); done
# shellcheck disable=SC2046 # pkg-config's flags are words
g++ -std=c++20 -O3 -DNDEBUG -I"$out/src" $(pkg-config --cflags "${libs[@]}") "${cc[@]}" \
  $(pkg-config --libs "${libs[@]}") -o "$out/minimalloc.new"
mv "$out/minimalloc.new" "$out/minimalloc"
echo "$out/minimalloc"
