#!/usr/bin/env python3
"""Outputs of TFLM (the `tflite-micro` wheel, reference kernels) for two
invocations in a row, without a reset in between, so state carried by
variable tensors (LSTM hidden/cell state, SVDF activation state) shows.

    python3 scripts/golden-two-invokes.py OUT_DIR MODEL.tflite [MODEL.tflite ...]

For each model the input is the golden corpus input (numpy RandomState(1234),
as ../shared/oracle/tflm_figures.py draws it), fed twice; writes
OUT_DIR/<model>/invoke1_output<k>.bin, invoke2_output<k>.bin (raw
little-endian), then resets the interpreter and invokes once more to check that
Reset() brings back the first output (reset_matches_first in meta.json).

The interpreter runs with kPreserveAllTensors (the only configuration in
which the wheel exposes tensors; kernels and outputs are the same), so the
bytes of every variable tensor after each invoke are written too:
invoke<n>_var<tensor>.bin. A third invoke feeds input // 64 (quieter audio)
after the two full-scale ones: invoke3_output<k>.bin, and whether it differs
from the same input on a fresh state (third_shows_state) — the softmax
outputs of these models often saturate, so the state files carry the proof.
"""
import json
import os
import sys


def run(model, out_dir):
    import numpy as np
    from tflite_micro.python.tflite_micro import runtime

    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    buf = open(model, "rb").read()
    sg = fb.Model.GetRootAsModel(buf, 0).Subgraphs(0)
    variables = [t for t in range(sg.TensorsLength()) if sg.Tensors(t).IsVariable()]
    it = runtime.Interpreter.from_file(
        model, arena_size=8 * 1024 * 1024,
        intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
    rng = np.random.RandomState(1234)
    inputs, i = [], 0
    while True:
        try:
            d = it.get_input_details(i)
        except Exception:
            break
        dt = np.dtype(d["dtype"])
        if dt.kind == "f":
            x = rng.uniform(-1.0, 1.0, size=d["shape"]).astype(dt)
        else:
            info = np.iinfo(dt)
            x = rng.randint(info.min, int(info.max) + 1, size=d["shape"]).astype(dt)
        inputs.append(x)
        i += 1

    def invoke(scale=1):
        for k, x in enumerate(inputs):
            it.set_input((x // scale).astype(x.dtype) if scale != 1 else x, k)
        it.invoke()
        outs, k = [], 0
        while True:
            try:
                outs.append(np.asarray(it.get_output(k)).copy())
            except Exception:
                break
            k += 1
        return outs

    def state():
        return {t: np.asarray(it.GetTensor(t, 0)["tensor_data"]).copy() for t in variables}

    first = invoke()
    state1 = state()
    second = invoke()
    state2 = state()
    third = invoke(64)
    it.reset()
    again = invoke()
    it.reset()
    fresh_third = invoke(64)
    name = os.path.splitext(os.path.basename(model))[0]
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    for n, outs in ((1, first), (2, second), (3, third)):
        for k, y in enumerate(outs):
            y.astype(y.dtype.newbyteorder("<")).tofile(
                os.path.join(d, f"invoke{n}_output{k}.bin"))
    for n, st in ((1, state1), (2, state2)):
        for t, v in st.items():
            v.astype(v.dtype.newbyteorder("<")).tofile(os.path.join(d, f"invoke{n}_var{t}.bin"))
    meta = {
        "model": os.path.basename(model),
        "seed": 1234,
        "outputs": [{"dtype": str(y.dtype), "shape": list(y.shape)} for y in first],
        "variables": variables,
        "second_differs": any((a != b).any() for a, b in zip(first, second)),
        "state_changes": any((state1[t] != state2[t]).any() for t in variables),
        "third_shows_state": any((a != b).any() for a, b in zip(third, fresh_third)),
        "reset_matches_first": all((a == b).all() for a, b in zip(first, again)),
    }
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(json.dumps({"model": name, **{k: meta[k] for k in ("second_differs", "state_changes", "third_shows_state", "reset_matches_first")}}))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    for m in sys.argv[2:]:
        run(m, sys.argv[1])


if __name__ == "__main__":
    main()
