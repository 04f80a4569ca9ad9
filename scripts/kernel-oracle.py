#!/usr/bin/env python3
"""TFLM's side of scripts/verify-kernels.sh, and the comparison.

    kernel-oracle.py run CASES_DIR OUT_DIR
        Runs every case of CASES_DIR/cases.tsv in the tflite-micro wheel
        (TFLM's reference kernels) on the inputs CASES_DIR/<case>.in<k>.bin,
        invoking it as many times as the optional fifth column says (a
        stateful model's outputs after its carried state; inputs set before
        every invoke), and writes OUT_DIR/<case>.out<k>.bin, or
        OUT_DIR/<case>.err with the reason
        TFLM refused it. Cases run in one child process; if TFLM aborts on one,
        that case is recorded as refused and the rest run in a new child.

    kernel-oracle.py compare CASES_DIR TFLM_DIR MA_DIR
        Prints a Markdown table (case, ops, verdict) comparing TFLM's outputs
        with microarena's (MA_DIR/<case>.out<k>.bin, or MA_DIR/<case>.err when
        `microarena run` refused, and MA_DIR/<case>.plan.json, `plan --json`).
        Exit status 1 on any difference (except float outputs of cases that
        call exp/log/tanh, the cases.tsv column "ulps": within that many ULPs
        they are listed as "within N ULP (libm)", the documented tolerance), on a case the runtime refuses while
        `plan` gives it a runtime arena, or on one it runs while `plan` says it
        cannot. Cases TFLM refuses are listed and not counted, except whole
        networks (ops column "network:..."), which TFLM must run.
"""
import json, os, subprocess, sys


def cases(cases_dir):
    with open(os.path.join(cases_dir, "cases.tsv")) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def invokes(row):
    """The case's invoke count: the optional fifth column, else 1."""
    return int(row[4]) if len(row) > 4 and row[4] else 1


def child(cases_dir, out_dir, names):
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime
    repeat = {row[0]: invokes(row) for row in cases(cases_dir)}
    progress = os.path.join(out_dir, ".current")
    for name in names:
        with open(progress, "w") as f:
            f.write(name)
        try:
            it = runtime.Interpreter.from_file(
                os.path.join(cases_dir, name + ".tflite"), arena_size=1 << 24)
            for _ in range(repeat.get(name, 1)):
                k = 0
                while os.path.exists(os.path.join(cases_dir, f"{name}.in{k}.bin")):
                    d = it.get_input_details(k)
                    x = np.fromfile(os.path.join(cases_dir, f"{name}.in{k}.bin"),
                                    dtype=np.dtype(d["dtype"]).newbyteorder("<"))
                    it.set_input(x.reshape(d["shape"]).astype(d["dtype"]), k)
                    k += 1
                it.invoke()
            k = 0
            while True:
                try:
                    y = np.asarray(it.get_output(k))
                except Exception:
                    break
                y.astype(y.dtype.newbyteorder("<")).tofile(
                    os.path.join(out_dir, f"{name}.out{k}.bin"))
                with open(os.path.join(out_dir, f"{name}.out{k}.dtype"), "w") as f:
                    f.write(y.dtype.newbyteorder("<").str)
                k += 1
        except Exception as e:  # TFLM refused the model
            with open(os.path.join(out_dir, name + ".err"), "w") as f:
                f.write(str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__)
        sys.stdout.flush()
        sys.stderr.flush()
    os.remove(progress)


def run(cases_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    todo = [c[0] for c in cases(cases_dir)]
    progress = os.path.join(out_dir, ".current")
    while todo:
        p = subprocess.run([sys.executable, __file__, "child", cases_dir, out_dir] + todo,
                           capture_output=True, text=True)
        if p.returncode == 0:
            return
        # TFLM aborted inside a case: record it and go on after it.
        crashed = open(progress).read() if os.path.exists(progress) else todo[0]
        lines = [l for l in (p.stdout + p.stderr).splitlines() if l.strip()]
        with open(os.path.join(out_dir, crashed + ".err"), "w") as f:
            f.write("TFLM aborted: " + (lines[-1] if lines else f"status {p.returncode}"))
        todo = todo[todo.index(crashed) + 1:]


def first_difference(a, b, dtype):
    import numpy as np
    x = np.frombuffer(a, dtype=dtype)
    y = np.frombuffer(b, dtype=dtype)
    if x.size != y.size:
        return f"{x.size} vs {y.size} elements"
    diff = np.nonzero(x.view(np.uint8 if dtype.itemsize == 1 else f"u{dtype.itemsize}")
                      != y.view(np.uint8 if dtype.itemsize == 1 else f"u{dtype.itemsize}"))[0]
    i = int(diff[0])
    return f"{diff.size}/{x.size} differ; first [{i}]: TFLM {x[i]!r}, microarena {y[i]!r}"


def compare(cases_dir, tflm_dir, ma_dir):
    import numpy as np
    print("| case | ops | verdict |")
    print("|---|---|---|")
    fail = 0
    counts = {"bit-exact": 0, "within libm ULPs": 0, "TFLM refuses": 0,
              "runtime refuses": 0, "MISMATCH": 0}
    for row in cases(cases_dir):
        name, ops, ulps = row[0], row[1], int(row[3])
        terr = os.path.join(tflm_dir, name + ".err")
        merr = os.path.join(ma_dir, name + ".err")
        plan = {}
        pj = os.path.join(ma_dir, name + ".plan.json")
        try:
            with open(pj) as f:
                plan = json.load(f)
        except (OSError, ValueError):  # plan failed: no runtime figure either
            plan = {}
        planned = plan.get("runtime") is not None
        if os.path.exists(terr) and ops.startswith("network:"):
            # A whole builder network is a model TFLM must run; a refusal is a broken case.
            verdict = "MISMATCH: TFLM refuses a network case: " + open(terr).read().strip()[:90]
            counts["MISMATCH"] += 1
            fail = 1
        elif os.path.exists(terr):
            verdict = "TFLM refuses: " + open(terr).read().strip()[:90]
            counts["TFLM refuses"] += 1
        elif os.path.exists(merr):
            reason = open(merr).read().strip().splitlines()
            reason = reason[-1] if reason else "?"
            if planned:
                verdict = f"MISMATCH: plan gives a runtime arena but run refuses: {reason[:100]}"
                counts["MISMATCH"] += 1
                fail = 1
            else:
                verdict = "runtime refuses (plan agrees): " + reason[:100]
                counts["runtime refuses"] += 1
        else:
            verdict = "bit-exact"
            k = 0
            while os.path.exists(os.path.join(tflm_dir, f"{name}.out{k}.bin")):
                a = open(os.path.join(tflm_dir, f"{name}.out{k}.bin"), "rb").read()
                mp = os.path.join(ma_dir, f"{name}.out{k}.bin")
                b = open(mp, "rb").read() if os.path.exists(mp) else b""
                if a != b:
                    dtype = np.dtype(open(os.path.join(tflm_dir, f"{name}.out{k}.dtype")).read())
                    if ulps and dtype == np.dtype("<f4") and len(a) == len(b):
                        x = np.frombuffer(a, dtype="<i4").astype(np.int64)
                        y = np.frombuffer(b, dtype="<i4").astype(np.int64)
                        # ULP distance of same-signed floats is the bit distance.
                        same_sign = (x < 0) == (y < 0)
                        worst = int(np.abs(x - y).max()) if same_sign.all() else 1 << 31
                        if worst <= ulps:
                            verdict = f"within {worst} ULP (libm): {first_difference(a, b, dtype)}"
                            k += 1
                            continue
                    verdict = f"MISMATCH output {k}: " + (
                        first_difference(a, b, dtype) if len(a) == len(b)
                        else f"{len(a)} vs {len(b)} bytes")
                    break
                k += 1
            if k == 0 and verdict == "bit-exact":
                verdict = "MISMATCH: TFLM wrote no output"
            if not verdict.startswith("MISMATCH") and not planned:
                verdict = "MISMATCH: run works but plan has no runtime arena"
            if verdict.startswith("MISMATCH"):
                counts["MISMATCH"] += 1
                fail = 1
            elif verdict.startswith("within"):
                counts["within libm ULPs"] += 1
            else:
                counts["bit-exact"] += 1
        print(f"| {name} | {ops} | {verdict} |")
    print()
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return fail


def main():
    mode = sys.argv[1]
    if mode == "child":
        child(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif mode == "run":
        run(sys.argv[2], sys.argv[3])
    elif mode == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
