#!/usr/bin/env bash
# Instructions per inference and flash: microarena-runtime against TFLM with
# reference kernels and TFLM + CMSIS-NN on a Cortex-M4 (QEMU mps2-an386,
# -icount shift=0), and against TFLM + CMSIS-NN built for the Cortex-M0+ (Armv6-M
# builds on mps2-an385). See README.md for the method and how the TFLM harness
# ELFs are made.
#
# usage: bench/cortex-m/run.sh [MODEL ...]
#   default: person_detect micro_speech_lstm micro_speech_quantized keyword_scrambled_8bit
#            mobilenet_v1_025_96
#   A model is $MICROARENA_CORPUS/models/MODEL.tflite, fed TFLM's golden input and checked
#   against its golden output when golden/MODEL/ has them; mobilenet_v1_025_96 is the bundled
#   example (`microarena example`): with golden/mobilenet_v1_025_96/ (TFLM's input and
#   output) it is checked against TFLM, without it the firmware feeds build.rs's
#   pseudo-random input and checks the host runtime's outputs.
# environment:
#   MICROARENA_CORPUS  the shared corpus (models/, golden/); default ../shared
#   TFLM_BENCH_ELFS    directory with bench-ref-<model>.elf, bench-cmsis-<model>.elf and
#                      bench-m0cmsis-<model>.elf (tflm-harness/ linked against TFLM);
#                      missing ones print "-"
#   QEMU_SYSTEM_ARM    default qemu-system-arm
#   PROFILE=1          also write a per-function profile of each run (needs tbprof.so,
#                      built from tbprof.c by this script with the host cc)
# Each microarena ELF's flash by module goes to $OUT/NAME.flash.md (flash.py).
# The microarena firmware is built five ways: thumbv7em with the DSP path, plain
# (every op whole, OpData in the tail, as TFLM runs) and in its smallest-arena mode
# (row bands, in place, OpData in flash); thumbv7em portable, plain; thumbv6m (the
# Cortex-M0+ path), plain and smallest.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CORPUS=$(cd "${MICROARENA_CORPUS:-$ROOT/../shared}" && pwd)
QEMU=${QEMU_SYSTEM_ARM:-qemu-system-arm}
ELFS=${TFLM_BENCH_ELFS:-}
OUT=${BENCH_OUT:-$ROOT/target/bench-cortex-m}
mkdir -p "$OUT"
models=("$@")
[ ${#models[@]} -eq 0 ] &&
  models=(person_detect micro_speech_lstm micro_speech_quantized keyword_scrambled_8bit mobilenet_v1_025_96)

# model_path MODEL -> the .tflite (the bundled example written once into $OUT)
model_path() {
  if [ "$1" = mobilenet_v1_025_96 ]; then
    [ -f "$OUT/$1.tflite" ] ||
      (cd "$ROOT" && nice cargo run -q -p microarena-cli -- example -o "$OUT/$1.tflite" >/dev/null)
    echo "$OUT/$1.tflite"
  else
    echo "$CORPUS/models/$1.tflite"
  fi
}

plugin=()
if [ -n "${PROFILE:-}" ]; then
  cc -O2 -shared -fPIC -o "$OUT/tbprof.so" "$HERE/tbprof.c"
fi

# run ELF NAME [m0] -> prints the harness output, keeps it in $OUT/NAME.txt. Armv6-M
# builds (m0) run on mps2-an385, whose Cortex-M3 executes the same Thumb
# instructions (QEMU's mps2 boards take only their own CPU; the micro:bit, QEMU's
# Cortex-M0 board, has 16 KiB of RAM): instructions are counted, not cycles.
run() {
  local elf=$1 name=$2 board=(-cpu cortex-m4 -machine mps2-an386)
  [ "${3:-}" = m0 ] && board=(-cpu cortex-m3 -machine mps2-an385)
  local prof=()
  [ -n "${PROFILE:-}" ] && prof=(-plugin "$OUT/tbprof.so,out=$OUT/$name.tbprof")
  timeout 900 "$QEMU" "${board[@]}" -nographic -monitor none -serial none \
    -semihosting-config enable=on,target=native -icount shift=0 "${prof[@]}" -kernel "$elf" \
    > "$OUT/$name.txt" 2>&1
  if [ -n "${PROFILE:-}" ]; then
    python3 "$HERE/profile.py" "$elf" "$OUT/$name.tbprof" 15 > "$OUT/$name.profile.txt"
  fi
}
# first invoke's instructions, "!" appended when its outputs differ from the expected ones
# (TFLM's golden output, or the host runtime's for a model without golden data)
count() {
  sed -n 's/^invoke 0 instructions \([0-9]*\) outputs=\(.*\)/\1 \2/p' "$OUT/$1.txt" \
    | awk '{ printf "%s%s", $1, ($2 == "golden" ? "" : "!") }'
}
text() { arm-none-eabi-size "$1" | awk 'NR == 2 { print $1 }'; }
embedded() { sed -n 's/.* embedded_model_bytes \([0-9]*\).*/\1/p' "$OUT/$1.txt"; }
# text besides the embedded model (code and constants), or "-"
besides() { if [ "$1" = - ] || [ -z "$2" ]; then echo -; else echo $(($1 - $2)); fi; }

declare -A R
for m in "${models[@]}"; do
  model=$(model_path "$m")
  golden=()
  if [ -f "$CORPUS/golden/$m/input0.bin" ] && [ -f "$CORPUS/golden/$m/output0.bin" ]; then
    golden=(MICROARENA_FIRMWARE_INPUT="$CORPUS/golden/$m/input0.bin"
      MICROARENA_FIRMWARE_EXPECTED="$CORPUS/golden/$m/output0.bin")
  fi
  for variant in dsp smallest portable m0 m0-smallest; do
    name=microarena-$variant-$m
    portable=; triple=thumbv7em-none-eabihf board=
    case $variant in
      portable) portable=1 ;;
      m0*) triple=thumbv6m-none-eabi board=mps2 ;;
    esac
    # plain: every op whole, OpData in the tail (as TFLM runs); smallest: the
    # runtime's smallest arena (row bands, in place where it pays, OpData in flash)
    exec=plain opdata=tail inplace=
    case $variant in *smallest) exec=banded opdata=flash inplace=1 ;; esac
    (cd "$ROOT/firmware" &&
      env -u MICROARENA_FIRMWARE_INPUT -u MICROARENA_FIRMWARE_EXPECTED \
      MICROARENA_PORTABLE=$portable MICROARENA_FIRMWARE_BOARD=$board \
      MICROARENA_FIRMWARE_EXEC=$exec MICROARENA_FIRMWARE_OPDATA=$opdata \
      MICROARENA_FIRMWARE_INPLACE=$inplace \
      MICROARENA_FIRMWARE_MODEL="$model" "${golden[@]}" \
      nice cargo build -q -j1 --release --features bench --bin bench --target $triple)
    tdir=${CARGO_TARGET_DIR:-$ROOT/firmware/target}
    cp "$tdir/$triple/release/bench" "$OUT/$name.elf"
    python3 "$HERE/flash.py" "$OUT/$name.elf" > "$OUT/$name.flash.md"
    run "$OUT/$name.elf" "$name" "${variant%%-*}"
    R[$m,$variant]=$(count "$name")
    R[$m,$variant,text]=$(text "$OUT/$name.elf")
    R[$m,$variant,model]=$(embedded "$name")
    R[$m,$variant,code]=$(besides "${R[$m,$variant,text]}" "${R[$m,$variant,model]}")
  done
  for b in ref cmsis m0cmsis; do
    elf=${ELFS:+$ELFS/bench-$b-$m.elf}
    if [ -n "$elf" ] && [ -f "$elf" ]; then
      run "$elf" "tflm-$b-$m" "$([ $b = m0cmsis ] && echo m0)"
      R[$m,$b]=$(count "tflm-$b-$m")
      R[$m,$b,text]=$(text "$elf")
      R[$m,$b,model]=$(embedded "tflm-$b-$m")
      R[$m,$b,code]=$(besides "${R[$m,$b,text]}" "${R[$m,$b,model]}")
    else
      R[$m,$b]=-; R[$m,$b,text]=-; R[$m,$b,model]=-; R[$m,$b,code]=-
    fi
  done
done

# ratio A B -> A/B to two decimals, or "-"
ratio() { case "$1$2" in *-*|*!*) echo - ;; *) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' ;; esac; }
# geomean COLUMN BASE -> geometric mean of COLUMN/BASE over the models, or "-" if one is missing
geomean() {
  local m l=0 n=0 r
  for m in "${models[@]}"; do
    r=$(ratio "${R[$m,$1]}" "${R[$m,$2]}")
    [ "$r" = - ] && { echo -; return; }
    l=$(awk -v l="$l" -v r="$r" 'BEGIN { print l + log(r) }'); n=$((n + 1))
  done
  awk -v l="$l" -v n="$n" 'BEGIN { printf "%.2f", exp(l / n) }'
}
row() { local f='|'; for _ in "$@"; do f+=' %s |'; done; printf "$f\n" "$@"; }
rule() { local s='|---|'; for ((i = 1; i < $1; i++)); do s+='---:|'; done; echo "$s"; }

echo
echo "Cortex-M4 (QEMU mps2-an386, -icount shift=0): instructions of the first invoke on TFLM's golden input (or build.rs's pseudo-random one without golden data); '!' = outputs differ from the expected ones. plain = every op whole, OpData in the tail; smallest = the runtime's smallest arena (row bands, in place, OpData in flash)"
row model "microarena DSP, plain" "microarena DSP, smallest" "microarena portable" "TFLM reference" "TFLM + CMSIS-NN" "plain ÷ CMSIS-NN" "smallest ÷ CMSIS-NN"
rule 8
for m in "${models[@]}"; do
  row "$m" "${R[$m,dsp]}" "${R[$m,smallest]}" "${R[$m,portable]}" "${R[$m,ref]}" "${R[$m,cmsis]}" \
    "$(ratio "${R[$m,dsp]}" "${R[$m,cmsis]}")" "$(ratio "${R[$m,smallest]}" "${R[$m,cmsis]}")"
done
row "geometric mean" "" "" "" "" "" "$(geomean dsp cmsis)" "$(geomean smallest cmsis)"
echo
echo "Cortex-M0+ (Armv6-M builds run on QEMU mps2-an385, whose Cortex-M3 executes the same instructions): microarena's portable path against TFLM + CMSIS-NN built for cortex-m0plus"
row model "microarena, plain" "microarena, smallest" "TFLM + CMSIS-NN (M0+)" "plain ÷ CMSIS-NN" "smallest ÷ CMSIS-NN"
rule 6
for m in "${models[@]}"; do
  row "$m" "${R[$m,m0]}" "${R[$m,m0-smallest]}" "${R[$m,m0cmsis]}" \
    "$(ratio "${R[$m,m0]}" "${R[$m,m0cmsis]}")" "$(ratio "${R[$m,m0-smallest]}" "${R[$m,m0cmsis]}")"
done
row "geometric mean" "" "" "" "$(geomean m0 m0cmsis)" "$(geomean m0-smallest m0cmsis)"
echo
echo "Flash: text bytes of each firmware, of it the embedded model (.tflite for TFLM, the lowered image for microarena), and the rest: code and constants besides the model"
row "" "DSP, plain" "DSP, smallest" "portable" "M0+, plain" "M0+, smallest" "TFLM reference" "TFLM + CMSIS-NN" "TFLM + CMSIS-NN (M0+)"
rule 9
for m in "${models[@]}"; do
  for k in text model code; do
    case $k in text) label="$m text" ;; model) label="  of it the model" ;; code) label="  besides the model" ;; esac
    row "$label" "${R[$m,dsp,$k]}" "${R[$m,smallest,$k]}" "${R[$m,portable,$k]}" "${R[$m,m0,$k]}" \
      "${R[$m,m0-smallest,$k]}" "${R[$m,ref,$k]}" "${R[$m,cmsis,$k]}" "${R[$m,m0cmsis,$k]}"
  done
done
