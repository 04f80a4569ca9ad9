#!/usr/bin/env python3
"""Instructions per function from a tbprof.txt (see tbprof.c) and the ELF.

usage: profile.py ELF tbprof.txt [TOP]   (needs arm-none-eabi-nm on PATH)
A translation block is attributed to the function containing its start
address; blocks do not cross function boundaries, so this is exact.
"""
import bisect
import subprocess
import sys

elf, prof = sys.argv[1], sys.argv[2]
top = int(sys.argv[3]) if len(sys.argv) > 3 else 25
syms = []
for line in subprocess.run(["arm-none-eabi-nm", "-n", "-C", elf], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    parts = line.split(" ", 2)
    if len(parts) == 3 and parts[1] in "tTwW":
        syms.append((int(parts[0], 16) & ~1, parts[2]))
syms.sort()
addrs = [a for a, _ in syms]
per = {}
total = 0
for line in open(prof):
    pc, n = line.split()
    pc, n = int(pc, 16), int(n)
    i = bisect.bisect_right(addrs, pc) - 1
    name = syms[i][1] if i >= 0 else "?"
    per[name] = per.get(name, 0) + n
    total += n
print(f"{total:>13,}  100.0%  (all instructions of the run)")
for name, n in sorted(per.items(), key=lambda kv: -kv[1])[:top]:
    print(f"{n:>13,}  {100 * n / total:5.1f}%  {name[:110]}")
