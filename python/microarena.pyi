"""microarena: exactly how much RAM a TensorFlow Lite Micro model needs.

Every function runs the same core code as the `microarena` command line and
returns the same JSON it prints, as Python objects.
"""

import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

Model = Union[bytes, str, "os.PathLike[str]"]
"""A .tflite file's path, or its bytes (what `TFLiteConverter.convert()` returns)."""

__version__: str
TARGETS: List[str]
"""Target profiles, e.g. `x86_64`, `cortex-m`."""
DERIVED_TARGETS: List[str]
"""The targets whose figures are derived, never measured against a TFLM
build; their reports carry `"target_derived": true`."""
DEVICES: List[str]
"""Device presets for `check(device=...)`, e.g. `RP2040`, `RP2350`, `ESP32-S3`."""
PLANNERS: List[str]
"""Memory planners: `tflm-greedy` (TFLM's own), `linear`, `best`."""

class MicroarenaError(ValueError):
    """A model, an argument or a file microarena cannot use; the message says which and why."""

def plan(
    model: Model,
    target: str = "x86_64",
    planner: str = "tflm-greedy",
    input_shapes: Optional[Union[Mapping[str, Sequence[int]], Sequence[str]]] = None,
) -> Dict[str, Any]:
    """The report `microarena plan --json` prints: head, tail, total and the
    minimum working arena (`report["arena"]`), every buffer, the tail by
    category, diagnostics, and microarena-runtime's arena.

    `input_shapes` re-plans for other input shapes, as `--input-shape`:
    `{"serving_default_x:0": [1, 24, 257]}` or `["#0=1,24,257"]`.
    """

def check(
    model: Model,
    ram: Optional[Union[int, str]] = None,
    reserves: Optional[Mapping[str, Union[int, str]]] = None,
    headroom: str = "20%",
    target: Optional[str] = None,
    planner: str = "tflm-greedy",
    device: Optional[str] = None,
    flash: Optional[Union[int, str]] = None,
    code: Optional[Union[int, str]] = None,
    measured: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Dict[str, Any]:
    """The budget verdict `microarena check --json` prints. `ram`, the
    reserves, `flash` and `code` are bytes (`262144`) or sizes (`"256K"`);
    `device` (e.g. `"RP2040"`) gives the RAM, the target and the on-chip flash
    when they are not given (target defaults to `cortex-m` otherwise);
    `measured` is the firmware's report (the `MICROARENA-REPORT` line, or the
    whole semihosting output holding it, as `check --measured` reads it), whose
    RAM, reserved regions and stack high-waters replace guesses
    (`result["measured"]["figures"]` says which figure came from where). `result["fits"]` says whether the minimum
    arena plus headroom fits RAM minus the reserves, `result["arena_bytes"]` is
    the arena to configure and `result["peak"]` lists the buffers at the head's
    peak, kernel scratch named by its owning op."""

def optimize(
    model: Model,
    output: Optional[Union[str, "os.PathLike[str]"]] = None,
    planner: str = "best",
    reorder: bool = False,
    force: bool = False,
    target: str = "x86_64",
) -> Any:
    """A copy of the model carrying an offline plan that stock TFLM obeys.
    Without `output`, returns its bytes; with it, writes the file atomically
    (never over the input) and returns the dict `microarena optimize --json`
    prints."""

def diff(
    old: Model,
    new: Model,
    target: str = "x86_64",
    planner: str = "tflm-greedy",
) -> Dict[str, Any]:
    """What changed between two models' arenas, as `microarena diff --json`
    prints it: headline figures, tail categories and head tensors."""
