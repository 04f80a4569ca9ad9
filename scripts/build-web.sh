#!/usr/bin/env bash
# Builds the web app into dist/ without trunk (which takes 6.5 minutes to
# install): cargo (wasm-release profile) → wasm-bindgen --target web →
# wasm-opt -Oz (npm binaryen 132; never Debian's 108, which breaks the wasm)
# → index.html with the stylesheet and loader, style.css, worker.js.
# Prints the wasm size, raw and gzipped.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=dist
WASM_OPT=e2e/node_modules/.bin/wasm-opt
[ -x "$WASM_OPT" ] || { echo "build-web: $WASM_OPT missing; run scripts/setup.sh" >&2; exit 1; }

cargo build --profile wasm-release --target wasm32-unknown-unknown -p microarena-app
rm -rf "$OUT.tmp" && mkdir -p "$OUT.tmp"
wasm-bindgen --target web --no-typescript --out-dir "$OUT.tmp" --out-name microarena-app \
  target/wasm32-unknown-unknown/wasm-release/microarena_app.wasm
"$WASM_OPT" -Oz "$OUT.tmp/microarena-app_bg.wasm" -o "$OUT.tmp/microarena-app_bg.wasm"
cp public/style.css public/worker.js "$OUT.tmp/"
# Same index.html as trunk's: replace the marker with what trunk would inject.
sed 's|<!-- build-web:assets -->|<link rel="stylesheet" href="./style.css" />\n    <script type="module">import init from "./microarena-app.js"; init();</script>|' \
  index.html | grep -v 'data-trunk' > "$OUT.tmp/index.html"
rm -rf "$OUT" && mv "$OUT.tmp" "$OUT"

raw=$(stat -c %s "$OUT/microarena-app_bg.wasm")
gz=$(gzip -9 -c "$OUT/microarena-app_bg.wasm" | wc -c)
echo "build-web: $OUT/microarena-app_bg.wasm $raw B raw, $gz B gzip" >&2
