#!/usr/bin/env bash
# Idempotent set-up of everything microarena's build and tests need on a fresh
# Debian 12 machine (see ../shared/docs/toolchain.md for why each pin exists).
# A rerun on a machine that has everything takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLCHAIN=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
log() { printf '[setup] %s\n' "$*" >&2; }

if ! command -v rustup >/dev/null; then
  log "rustup is required (https://rustup.rs); it is preinstalled on the CI image"
  exit 1
fi
# Explicit install: newer rustup no longer installs a rust-toolchain.toml toolchain implicitly.
rustup toolchain install "$TOOLCHAIN" --profile minimal \
  --component clippy,rustfmt,llvm-tools \
  --target wasm32-unknown-unknown,thumbv7em-none-eabihf,thumbv6m-none-eabi >/dev/null 2>&1 \
  || rustup toolchain install "$TOOLCHAIN" --profile minimal \
       --component clippy,rustfmt,llvm-tools \
       --target wasm32-unknown-unknown,thumbv7em-none-eabihf,thumbv6m-none-eabi

# Debian packages: QEMU for the Cortex-M firmware, Chromium for the browser tests,
# binutils for firmware size reports.
APT_PKGS=(qemu-system-arm binutils-arm-none-eabi chromium chromium-driver)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# wasm-bindgen-cli must match the wasm-bindgen crate in Cargo.lock exactly
# (installed without --locked: the registry lacks one of its locked deps).
if [ -d app ]; then
  WBG=$(sed -n '/^name = "wasm-bindgen"$/{n;s/^version = "\(.*\)"/\1/p}' Cargo.lock | head -n1)
  if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WBG" ]; then
    log "installing wasm-bindgen-cli $WBG (about 3 minutes)"
    cargo +"$TOOLCHAIN" install wasm-bindgen-cli --version "$WBG" >/dev/null
  fi
fi

# Node packages for the browser tests and wasm-opt (npm binaryen; never Debian's, which breaks the wasm).
# playwright-core needs Node.js >= 20 (Debian 12's own nodejs is 18: use NodeSource's package).
if [ -f e2e/package.json ]; then
  if ! command -v npm >/dev/null; then
    log "installing nodejs and npm"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
  if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 20 ]; then
    log "Node.js $(node --version) is too old for playwright-core: install Node.js 20 or newer"
    exit 1
  fi
  # Reinstall when the lockfile changed since the last install.
  if [ ! -f e2e/node_modules/.package-lock.json ] \
     || [ e2e/package-lock.json -nt e2e/node_modules/.package-lock.json ]; then
    log "npm ci in e2e/"
    (cd e2e && npm ci --no-audit --no-fund --silent)
  fi
fi
log "ready"
