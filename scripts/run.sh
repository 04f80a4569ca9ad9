#!/usr/bin/env bash
# Sets up what is missing, shows the bundled example model's arena on the
# command line (MobileNet-v1 0.25, 96x96 int8, generated weights), then builds
# the web app and serves it on http://127.0.0.1:8080 (Ctrl-C stops it).
# PORT=... picks another port.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p target
cargo run -q --release -p microarena-cli -- example -o target/example.tflite
cargo run -q --release -p microarena-cli -- plan target/example.tflite --timeline
echo
cargo run -q --release -p microarena-cli -- plan target/example.tflite --target cortex-m
echo
bash scripts/build-web.sh
PORT=${PORT:-8080}
echo
echo "microarena web app: http://127.0.0.1:$PORT/  (drop a .tflite on the page; Ctrl-C to stop)"
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist
