#!/usr/bin/env python3
"""Measures what TFLM allocates for each kernel probe, in the tflite-micro wheel.

    kernel-probe.py [--jobs N] MODEL.tflite ... > figures.jsonl

For each model: builds the interpreter once with a 16 MiB arena (the wheel's
constructor runs AllocateTensors; nothing is invoked, so a probe's input
values never matter), reads the RecordingMicroAllocator figures
(PrintAllocations: head, tail, total and every category), then finds the
smallest arena, a multiple of 16, for which AllocateTensors succeeds (temp
allocations and the planner can need more than the final total). Every try is
a fresh process, so a kernel that crashes fails that try only.

Prints one JSON object per model: model (file name), fnv (FNV-1a 64 of the
file, so a test can tell the measured probe from a rebuilt one), ok, error,
total/head/tail, categories {name: [used, requested, count]}, min_arena.
"""
import argparse, concurrent.futures, json, os, re, subprocess, sys

CATEGORY = re.compile(r"'(.+?)' used (\d+) bytes with alignment overhead "
                      r"\(requested (\d+) bytes for (\d+) ")
ARENA = re.compile(r"Arena allocation (total|head|tail) (\d+) bytes")
BIG = 16 * 1024 * 1024


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def child(model, arena):
    from tflite_micro.python.tflite_micro import runtime
    try:
        it = runtime.Interpreter.from_file(model, arena_size=arena)
    except Exception as e:  # AllocateTensors failed: TFLM printed why on stderr
        print(f"PROBE-FAILED {e}", flush=True)
        sys.exit(3)
    sys.stdout.flush()
    it.print_allocations()


def smallest(fits, total):
    """The smallest multiple of 16 that `fits`: ceil16(total) and 16 below it
    first (the usual answer), else bisection up to BIG."""
    c = (total + 15) // 16 * 16
    lo, hi = 0, BIG
    if fits(c):
        hi = c
        if not fits(c - 16):
            return c
    else:
        lo = c
    while hi - lo > 16:
        mid = max((lo + hi) // 2 // 16 * 16, lo + 16)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi


def bisect_child(model, total):
    """The whole search in this process: a failed AllocateTensors raises
    cleanly, so only a crash needs fresh processes (the parent's fallback)."""
    from tflite_micro.python.tflite_micro import runtime

    def fits(size):
        try:
            runtime.Interpreter.from_file(model, arena_size=size)
            return True
        except Exception:
            return False

    print(f"MIN={smallest(fits, total)}", flush=True)


def run(model, arena):
    p = subprocess.run([sys.executable, __file__, "--child", model, str(arena)],
                       capture_output=True, text=True, timeout=300)
    return p.returncode == 0, p.stdout + p.stderr


def measure(model):
    rec = {"model": os.path.basename(model),
           "fnv": fnv1a64(open(model, "rb").read())}
    ok, text = run(model, BIG)
    rec["ok"] = ok
    if not ok:
        lines = [l.strip() for l in text.splitlines()
                 if l.strip() and not l.startswith("PROBE-FAILED")]
        rec["error"] = " | ".join(dict.fromkeys(lines))[:400]
        return rec
    for kind, n in ARENA.findall(text):
        rec[kind] = int(n)
    rec["categories"] = {name: [int(u), int(r), int(c)]
                         for name, u, r, c in CATEGORY.findall(text)}
    p = subprocess.run([sys.executable, __file__, "--bisect", model, str(rec["total"])],
                       capture_output=True, text=True, timeout=600)
    found = re.search(r"^MIN=(\d+)$", p.stdout, re.M)
    if p.returncode == 0 and found:
        rec["min_arena"] = int(found.group(1))
    else:
        rec["min_arena"] = smallest(lambda size: run(model, size)[0], rec["total"])
    return rec


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("--child", "--bisect"):
        (child if sys.argv[1] == "--child" else bisect_child)(sys.argv[2], int(sys.argv[3]))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="+")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for rec in ex.map(measure, a.models):
            print(json.dumps(rec, sort_keys=True), flush=True)


if __name__ == "__main__":
    main()
