#!/usr/bin/env python3
"""TFLM's verdict on each probe model of registry_wheel.rs.

Loads each model with the tflite-micro wheel's interpreter (which runs
AllocateTensors, so every kernel's Prepare), then invokes it once on ones (no division by zero),
each in a child process (a kernel that crashes takes only that probe down).
Prints one JSON line per model: {"model", "verdict", "message"} where verdict
is "ok", "prepare" (the model does not load), "invoke" (it loads, Invoke
fails) or "crash" (the child died).

    python3 registry_wheel.py PROBE_DIR > registry_wheel.jsonl
"""
import json, os, subprocess, sys


def child(model):
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime
    try:
        it = runtime.Interpreter.from_file(model, arena_size=1 << 20)
    except Exception as e:  # AllocateTensors failed
        print("VERDICT prepare", str(e).splitlines()[0] if str(e) else "")
        return
    i = 0
    while True:
        try:
            d = it.get_input_details(i)
        except Exception:
            break
        it.set_input(np.ones(d["shape"], dtype=d["dtype"]), i)
        i += 1
    try:
        it.invoke()
    except Exception as e:
        print("VERDICT invoke", str(e).splitlines()[0] if str(e) else "")
        return
    print("VERDICT ok")


def main():
    if sys.argv[1] == "--child":
        child(sys.argv[2])
        return
    folder = sys.argv[1]
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".tflite"):
            continue
        p = subprocess.run([sys.executable, __file__, "--child", os.path.join(folder, name)],
                           capture_output=True, text=True, timeout=120)
        out = p.stdout + p.stderr
        verdict, message = "crash", ""
        for line in out.splitlines():
            if line.startswith("VERDICT "):
                parts = line.split(" ", 2)
                verdict = parts[1]
        # TFLM prints the kernel's own message before the interpreter's summary.
        lines = [l for l in out.splitlines() if l.strip() and not l.startswith("VERDICT")]
        message = " | ".join(lines[:2])
        print(json.dumps({"model": name[: -len(".tflite")], "verdict": verdict,
                          "message": message}), flush=True)


if __name__ == "__main__":
    main()
