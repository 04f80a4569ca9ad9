"""The Python package against the command line: the same core calls, so the
same JSON. Corpus tests need MICROARENA_CORPUS (skipped without it, failing if
it is set and the models are missing) and the `microarena` binary
(MICROARENA_CLI, default target/release/microarena)."""

import json
import os
import pathlib
import subprocess

import pytest

import microarena

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("MICROARENA_CLI", ROOT / "target" / "release" / "microarena"))


def cli(*args):
    out = subprocess.run([str(CLI), *map(str, args)], check=True, capture_output=True)
    return out.stdout


def corpus_models():
    value = os.environ.get("MICROARENA_CORPUS")
    if value is None:
        return []
    root = pathlib.Path(value)
    if not root.is_absolute():
        root = ROOT / root
    models = sorted((root / "models").glob("*.tflite"))
    assert models, f"MICROARENA_CORPUS={value} is set but {root}/models has no models"
    return models


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "example.tflite"
    cli("example", "-o", path)
    return path


def test_plan_equals_the_cli_json_on_the_example(example):
    for target in microarena.TARGETS:
        assert microarena.plan(example, target=target) == json.loads(cli("plan", example, "--json", "--target", target))


@pytest.mark.skipif("MICROARENA_CORPUS" not in os.environ, reason="MICROARENA_CORPUS is not set")
@pytest.mark.parametrize("target", ["x86_64", "cortex-m"])
def test_plan_equals_the_cli_json_on_every_shared_model(target):
    for model in corpus_models():
        got = microarena.plan(str(model), target=target)
        want = json.loads(cli("plan", model, "--json", "--target", target))
        assert got == want, model.name


def test_bytes_from_the_converter_plan_like_the_file(example):
    from_file = microarena.plan(example)
    from_bytes = microarena.plan(example.read_bytes())
    assert from_bytes["model"]["file"] == "model.tflite"
    from_bytes["model"]["file"] = from_file["model"]["file"]
    assert from_bytes == from_file
    assert from_file["arena"]["total_bytes"] == from_file["arena"]["head_bytes"] + from_file["arena"]["tail_bytes"]


def test_what_if_shapes_as_dict_or_strings(example):
    want = json.loads(cli("plan", example, "--json", "--input-shape", "input=1,48,48,1"))
    assert microarena.plan(example, input_shapes={"input": [1, 48, 48, 1]}) == want
    assert microarena.plan(example, input_shapes=["#0=1,48,48,1"])["arena"] == want["arena"]


def test_check_is_the_cli_verdict(example):
    got = microarena.check(example, ram="256K", reserves={"stack": "8K", "rtos": 16384})
    want = json.loads(cli("check", example, "--ram", "256K", "--reserve", "stack=8K,rtos=16K", "--json"))
    assert got == want
    assert got["fits"] is True
    small = microarena.check(example, ram=64 * 1024)
    assert small["fits"] is False and small["margin_bytes"] < 0


def test_check_with_a_device_is_the_cli_verdict(example):
    got = microarena.check(example, device="RP2040", reserves={"rtos": "48K"})
    want = json.loads(cli("check", example, "--device", "RP2040", "--reserve", "rtos=48K", "--json"))
    assert got == want
    assert got["target"] == "cortex-m0plus-cmsis-nn" and got["ram_bytes"] == 264 * 1024
    # Every device core lists gives the CLI's verdict, on the target of its core and SDK.
    for device in microarena.DEVICES:
        got = microarena.check(example, device=device)
        run = subprocess.run([str(CLI), "check", str(example), "--device", device, "--json"], capture_output=True)
        assert run.returncode in (0, 1), run.stderr
        assert got == json.loads(run.stdout)
        assert got["target"] in microarena.TARGETS
        assert got.get("target_derived", False) == (got["target"] in microarena.DERIVED_TARGETS)
    assert microarena.check(example, device="RP2350")["target"] == "cortex-m33-cmsis-nn"


def test_check_with_flash_and_measured_figures_is_the_cli_verdict(example, tmp_path):
    # A preset with on-chip flash adds the flash verdict, as the CLI does.
    got = microarena.check(example, device="STM32F746", code="200K")
    want = json.loads(cli("check", example, "--device", "STM32F746", "--code", "200K", "--json"))
    assert got == want and got["flash"]["flash_bytes"] == 1024 * 1024
    # The seed's RP2040 anomaly detector: the device's measured reserves fail it.
    model = tmp_path / "anomaly.tflite"
    cli("example", "--name", "rp2040-anomaly", "-o", model)
    report = ROOT / "docs" / "rp2040-anomaly-report.txt"
    got = microarena.check(model, device="RP2040", measured=report)
    run = subprocess.run(
        [str(CLI), "check", str(model), "--device", "RP2040", "--measured", str(report), "--json"],
        capture_output=True,
    )
    assert run.returncode == 1
    assert got == json.loads(run.stdout)
    assert got["fits"] is False and got["measured"]["figures"]
    with pytest.raises(microarena.MicroarenaError, match="no 'MICROARENA-REPORT' line"):
        microarena.check(example, ram="256K", measured=model)


def test_optimize_returns_bytes_or_writes_atomically(example, tmp_path):
    data = microarena.optimize(example)
    assert isinstance(data, bytes) and data[4:8] == b"TFL3"
    out = tmp_path / "opt.tflite"
    record = microarena.optimize(example, output=out)
    assert out.read_bytes() == data
    assert record["head_bytes"] <= record["original_head_bytes"]
    assert record["report"]["arena"]["head_bytes"] == record["head_bytes"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opt.tflite"]
    with pytest.raises(microarena.MicroarenaError, match="refusing to write over the input"):
        microarena.optimize(out, output=out, force=True)


def test_diff_is_the_cli_diff(example, tmp_path):
    out = tmp_path / "opt.tflite"
    microarena.optimize(example, output=out)
    assert microarena.diff(example, out) == json.loads(cli("diff", example, out, "--json"))


def test_errors_carry_the_cli_message(tmp_path):
    bad = tmp_path / "text.tflite"
    bad.write_bytes(b"this is not a model at all")
    with pytest.raises(microarena.MicroarenaError) as e:
        microarena.plan(bad)
    assert "text.tflite" in str(e.value) and "TFL3" in str(e.value)
    with pytest.raises(microarena.MicroarenaError, match="unknown target 'riscv'; choose one of: x86_64, cortex-m"):
        microarena.plan(b"", target="riscv")
    with pytest.raises(microarena.MicroarenaError, match="must be a path"):
        microarena.plan(42)
    with pytest.raises(microarena.MicroarenaError, match=r"missing\.tflite: cannot open: "):
        microarena.plan(tmp_path / "missing.tflite")
    assert issubclass(microarena.MicroarenaError, ValueError)


def test_the_readme_lines_print_the_cli_figures(example, capsys):
    readme = (ROOT / "README.md").read_text()
    start = readme.index("```python\nimport microarena\n") + len("```python\n")
    snippet = readme[start : readme.index("```", start)]
    exec(snippet, {"tflite_model": example.read_bytes()})
    want = json.loads(cli("plan", example, "--json", "--target", "cortex-m"))["arena"]
    printed = capsys.readouterr().out.split()
    assert printed == [str(want["head_bytes"]), str(want["tail_bytes"]), str(want["total_bytes"])]
