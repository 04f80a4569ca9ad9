#!/usr/bin/env bash
# Instructions per inference on a Cortex-M4 (QEMU mps2-an386, -icount shift=0):
# microarena-runtime (thumbv7em, with and without its DSP path) against TFLM
# with reference kernels and TFLM with CMSIS-NN, plus the flash (text) of each
# firmware. See README.md for the method and how the TFLM harness ELFs are made.
#
# usage: bench/cortex-m/run.sh [MODEL ...]
#   default: person_detect micro_speech_lstm micro_speech_quantized keyword_scrambled_8bit
#            mobilenet_v1_025_96
#   A model is $MICROARENA_CORPUS/models/MODEL.tflite, fed TFLM's golden input and checked
#   against its golden output when golden/MODEL/ has them; mobilenet_v1_025_96 is the bundled
#   example (`microarena example`), which has no golden data: the firmware feeds it build.rs's
#   pseudo-random input and checks the host runtime's outputs.
# environment:
#   MICROARENA_CORPUS  the shared corpus (models/, golden/); default ../shared
#   TFLM_BENCH_ELFS    directory with bench-ref-<model>.elf and bench-cmsis-<model>.elf
#                      (harness/ linked against TFLM); missing ones print "-"
#   QEMU_SYSTEM_ARM    default qemu-system-arm
# Each microarena ELF's flash by module goes to $OUT/NAME.flash.md (flash.py).
#   PROFILE=1          also write a per-function profile of each run (needs tbprof.so,
#                      built from tbprof.c by this script with the host cc)
# The microarena firmware is built three ways: the DSP path and the portable one
# with every op whole and its OpData in the tail (as TFLM runs), and the DSP path
# as the firmware runs by default (row bands, OpData in flash; README.md).
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

# run ELF NAME -> prints the harness output, keeps it in $OUT/NAME.txt
run() {
  local elf=$1 name=$2
  local prof=()
  [ -n "${PROFILE:-}" ] && prof=(-plugin "$OUT/tbprof.so,out=$OUT/$name.tbprof")
  timeout 900 "$QEMU" -cpu cortex-m4 -machine mps2-an386 -nographic -monitor none -serial none \
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
  for variant in dsp banded portable; do
    name=microarena-$variant-$m
    portable=; [ $variant = portable ] && portable=1
    exec=plain opdata=tail; [ $variant = banded ] && exec=banded opdata=flash
    (cd "$ROOT/firmware" &&
      env -u MICROARENA_FIRMWARE_INPUT -u MICROARENA_FIRMWARE_EXPECTED \
      MICROARENA_PORTABLE=$portable \
      MICROARENA_FIRMWARE_EXEC=$exec MICROARENA_FIRMWARE_OPDATA=$opdata \
      MICROARENA_FIRMWARE_MODEL="$model" "${golden[@]}" \
      nice cargo build -q -j1 --release --features bench --bin bench)
    tdir=${CARGO_TARGET_DIR:-$ROOT/firmware/target}
    cp "$tdir/thumbv7em-none-eabihf/release/bench" "$OUT/$name.elf"
    python3 "$HERE/flash.py" "$OUT/$name.elf" > "$OUT/$name.flash.md"
    run "$OUT/$name.elf" "$name"
    R[$m,$variant]=$(count "$name")
    R[$m,$variant,text]=$(text "$OUT/$name.elf")
    R[$m,$variant,model]=$(embedded "$name")
    R[$m,$variant,code]=$(besides "${R[$m,$variant,text]}" "${R[$m,$variant,model]}")
  done
  for b in ref cmsis; do
    elf=${ELFS:+$ELFS/bench-$b-$m.elf}
    if [ -n "$elf" ] && [ -f "$elf" ]; then
      run "$elf" "tflm-$b-$m"
      R[$m,$b]=$(count "tflm-$b-$m")
      R[$m,$b,text]=$(text "$elf")
      R[$m,$b,model]=$(embedded "tflm-$b-$m")
      R[$m,$b,code]=$(besides "${R[$m,$b,text]}" "${R[$m,$b,model]}")
    else
      R[$m,$b]=-; R[$m,$b,text]=-; R[$m,$b,model]=-; R[$m,$b,code]=-
    fi
  done
done

echo
echo "Instructions per inference (first invoke on TFLM's golden input, or build.rs's pseudo-random one without golden data; QEMU mps2-an386 Cortex-M4, -icount shift=0; '!' = outputs differ from the expected ones)"
row() { printf '| %-28s | %15s | %15s | %15s | %15s | %15s |\n' "$@"; }
row model "microarena" "microarena" "microarena" "TFLM" "TFLM"
row "" "(DSP path)" "(DSP, banded)" "(portable)" "reference" "CMSIS-NN"
printf '|%s|%s|%s|%s|%s|%s|\n' "------------------------------" "----------------:" "----------------:" "----------------:" "----------------:" "----------------:"
for m in "${models[@]}"; do
  row "$m" "${R[$m,dsp]}" "${R[$m,banded]}" "${R[$m,portable]}" "${R[$m,ref]}" "${R[$m,cmsis]}"
done
echo
echo "Flash: text bytes of each firmware, of it the embedded model (.tflite for TFLM, the lowered image for microarena), and the rest: code and constants besides the model"
for m in "${models[@]}"; do
  row "$m text" "${R[$m,dsp,text]}" "${R[$m,banded,text]}" "${R[$m,portable,text]}" "${R[$m,ref,text]}" "${R[$m,cmsis,text]}"
  row "  of it the model" "${R[$m,dsp,model]}" "${R[$m,banded,model]}" "${R[$m,portable,model]}" "${R[$m,ref,model]}" "${R[$m,cmsis,model]}"
  row "  besides the model" "${R[$m,dsp,code]}" "${R[$m,banded,code]}" "${R[$m,portable,code]}" "${R[$m,ref,code]}" "${R[$m,cmsis,code]}"
done
