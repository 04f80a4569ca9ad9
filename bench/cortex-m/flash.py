#!/usr/bin/env python3
"""Flash of a microarena firmware ELF by where the code was written, cargo-bloat style.

usage: flash.py ELF [DEPTH]

Every .text instruction is charged to the innermost function of the project (or of a
dependency) it was inlined from, as the DWARF line table of `objdump -d -l` names it:
code of `core` inlined into a kernel counts as that kernel's. Functions are then grouped
by module path (DEPTH components; default: the runtime's kernel module, e.g.
`kernels::conv`). The big read-only blobs (.rodata symbols of 1 KiB and more: the
embedded model image, input and expected output) are listed apart from the other
constants. Needs arm-none-eabi-objdump and -nm.
"""
import collections
import os
import re
import subprocess
import sys

# The runtime's kernel modules: a path `kernels::NAME` whose NAME is no file is
# a function of the registry itself (kernels/mod.rs).
KERNELS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../runtime/src/kernels")

LIBRARY = re.compile(
    r"^<?(core|alloc|<core|<\[|<&|<\*|<(u|i)(8|16|32|64|128|size)|<f32|<f64|<bool)\b"
)


def owner(name, depth):
    """The group a function belongs to."""
    name = re.sub(r"<(\S+) as [^>]*>", r"\1", name).lstrip("<")
    parts = name.split("::")
    if parts[0] == "microarena_runtime":
        if len(parts) > 2 and parts[1] == "kernels":
            if not os.path.exists(os.path.join(KERNELS_DIR, parts[2] + ".rs")):
                return "runtime kernels (registry, Prepare and Eval dispatch: mod.rs)"
            return "runtime kernels::" + "::".join(parts[2 : 2 + max(depth - 2, 1)])
        return "runtime " + "::".join(parts[1 : 1 + max(depth - 2, 1)])
    if (
        parts[0] in ("compiler_builtins", "libm")
        or name.startswith("__")
        or name in ("memcmp", "memcpy", "memset", "memmove", "fmin", "fmax")
    ):
        return "compiler-builtins, libm (soft float, mem*, division)"
    if len(parts) == 1 or parts[0] in ("core", "A>"):
        return "other"
    if parts[0] in ("microarena_image",):
        return "image format (microarena-image)"
    if parts[0].startswith("cortex_m") or name in (
        "Reset",
        "main",
        "DefaultHandler_",
        "HardFault_",
        "DefaultPreInit",
    ):
        return "cortex-m-rt, semihosting"
    return "harness: " + parts[0]


def text_by_owner(elf, depth):
    out = subprocess.run(
        ["arm-none-eabi-objdump", "-d", "-l", "-C", "--no-show-raw-insn", "-j", ".text", elf],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sizes = collections.Counter()
    current, prev = "?", None
    insn = re.compile(r"^\s+([0-9a-f]+):\s")
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            current, prev = m.group(1), None
            continue
        m = insn.match(line)
        if m:
            addr = int(m.group(1), 16)
            if prev is not None:
                sizes[owner(prev[1], depth)] += addr - prev[0]
            prev = (addr, current)
            continue
        # A function-name line of the line table: the innermost inlined function.
        if line.endswith(":") and not line.startswith("/") and line.strip():
            name = line[:-1].removesuffix("()")
            if not LIBRARY.match(name) and not name.startswith("Disassembly"):
                current = name
    return sizes


def rodata(elf):
    out = subprocess.run(
        ["arm-none-eabi-nm", "-S", "--size-sort", elf], capture_output=True, text=True, check=True
    ).stdout
    blobs, rest = [], 0
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "rR":
            size = int(f[1], 16)
            if size >= 1024 and f[3] != "__INTERRUPTS":
                blobs.append(size)
            else:
                rest += size
    return sorted(blobs, reverse=True), rest


def main():
    elf = sys.argv[1]
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    sizes = text_by_owner(elf, depth)
    blobs, rest = rodata(elf)
    total = sum(sizes.values())
    print(f"| {'.text by module':<58} | {'bytes':>7} |")
    print(f"|{'-' * 60}|{'-' * 8}:|")
    for k, v in sizes.most_common():
        print(f"| {k:<58} | {v:>7,} |")
    print(f"| {'all code':<58} | {total:>7,} |")
    print(f"| {'constants (.rodata but the blobs, vector table)':<58} | {rest:>7,} |")
    print(f"| {'code and constants besides the blobs':<58} | {total + rest:>7,} |")
    print(f"| {'blobs: model image, input, expected output':<58} | {', '.join(f'{b:,}' for b in blobs):>7} |")


if __name__ == "__main__":
    main()
