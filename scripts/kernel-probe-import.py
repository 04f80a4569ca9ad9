#!/usr/bin/env python3
"""Turns the Cortex-M oracle's figures for the kernel probes into the data
core/tests/kernel_probes.rs reads (core/tests/kernel_probes_cortex_m.jsonl,
or with --esp core/tests/kernel_probes_esp.jsonl, with --m55
core/tests/kernel_probes_cortex_m55.jsonl).

    kernel-probe-import.py ORACLE.jsonl [ORACLE.jsonl ...] MODELS_DIR > kernel_probes_cortex_m.jsonl
    kernel-probe-import.py --esp ORACLE.jsonl [...] MODELS_DIR > kernel_probes_esp.jsonl
    kernel-probe-import.py --m55 ORACLE.jsonl [...] MODELS_DIR > kernel_probes_cortex_m55.jsonl

--esp: the lines of the esp32s3-esp-nn and esp32-esp-nn builds, whose run.sh
lines come from the same harness linked against esp-tflite-micro's TFLM and
ESP-NN (built for Cortex-M with Xtensa's struct layout; docs/esp-nn.md).

ORACLE.jsonl: one line per (model, build) as ../shared/oracle/tflm-cortex-m/
run.sh prints them (TFLM 90b983c2 built for Cortex-M and run under qemu-arm,
as that folder's README describes); MODELS_DIR: the probes
(`bash scripts/kernel-probe.sh --models DIR`), hashed here so the test can
tell a measured probe from a rebuilt one. Models not in MODELS_DIR are left
out.
"""
import json, os, sys

BUILDS = {"m4-ref", "m4-cmsis-nn", "m33-cmsis-nn", "m0plus-cmsis-nn"}
HEADER = {"tflm": "TFLM 90b983c2 built for Cortex-M (arm-none-eabi-gcc 12.2.1, "
          "reference and CMSIS-NN 4ab83cc3), run in qemu-arm 10.0.2",
          "targets": {"m4-ref": "cortex-m", "m4-cmsis-nn": "cortex-m4-cmsis-nn",
                      "m33-cmsis-nn": "cortex-m33-cmsis-nn",
                      "m0plus-cmsis-nn": "cortex-m0plus-cmsis-nn"}}
ESP_BUILDS = {"esp32s3-esp-nn", "esp32-esp-nn"}
ESP_HEADER = {"tflm": "esp-tflite-micro 99f49e14 (its TFLM copy = upstream 096563546, "
              "kernels/esp_nn) with ESP-NN d45b843c (1.2.3, CONFIG_NN_OPTIMIZED), built for "
              "cortex-m4 with arm-none-eabi-gcc 12.2.1 -fno-short-enums (Xtensa's ILP32 layout: "
              "4-byte enums, 8-aligned int64_t/double), run in qemu-arm 10.0.2",
              "targets": {"esp32s3-esp-nn": "esp32s3-esp-nn", "esp32-esp-nn": "esp32-esp-nn"},
              "builds": {"esp32s3-esp-nn": "CONFIG_IDF_TARGET_ESP32S3: ESP-NN's esp32s3 C size "
                         "functions (its assembly is not built; the harness never invokes)",
                         "esp32-esp-nn": "CONFIG_IDF_TARGET_ESP32: ESP-NN's generic _opt "
                         "functions"}}

M55_BUILDS = {"m55-cmsis-nn", "m55-ethos-u"}
M55_HEADER = {'tflm': 'TFLM 90b983c2 built for cortex-m55 (CMSIS-NN 4ab83cc3 with ARM_MATH_MVEI, -mfloat-abi=softfp, arm-none-eabi-gcc 12.2.1), and the same with CO_PROCESSOR=ethos_u (ETHOSU_ARCH=u55, NPU driver entry points stubbed), run in qemu-arm 10.0.2 -cpu cortex-m55', 'targets': {'m55-cmsis-nn': 'cortex-m55-cmsis-nn', 'm55-ethos-u': 'cortex-m55-ethos-u'}}

MODES = {"--esp": (ESP_BUILDS, ESP_HEADER), "--m55": (M55_BUILDS, M55_HEADER)}


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main():
    args = sys.argv[1:]
    mode = MODES.get(args[0]) if args else None
    builds, header = mode or (BUILDS, HEADER)
    *oracles, models = args[1:] if mode else args
    hashes, out = {}, []
    for line in (l for o in oracles for l in open(o)):
        r = json.loads(line)
        path = os.path.join(models, r["model"])
        if r["build"] not in builds or not os.path.exists(path):
            continue
        if r["model"] not in hashes:
            hashes[r["model"]] = fnv1a64(open(path, "rb").read())
        rec = {"model": r["model"], "build": r["build"], "fnv": hashes[r["model"]],
               "ok": r["status"] == "ok"}
        if rec["ok"]:
            rec.update(head=r["head"], tail=r["tail"], total=r["total"],
                       min_arena=r["min_arena"],
                       categories={c["name"]: [c["used"], c["requested"], c["count"]]
                                   for c in r["categories"]})
        else:
            rec["error"] = (r.get("error") or "")[:400]
        out.append(json.dumps(rec, sort_keys=True))
    print(json.dumps(header))
    for line in sorted(set(out)):
        print(line)


if __name__ == "__main__":
    main()
