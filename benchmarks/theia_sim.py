"""Speed of the THEIA ISA-level simulator: simulated VP instructions per second.

Loops of ours, run on one VP of a 4-VP Gpu (as designed, and with the RTL defects that do
not livelock switched on):

* ``alu``: ADD / MUL / ADD / LOGIC / ADD and the loop branches, 8 instructions per
  iteration (a branch every 4 instructions on average, so blocks are short);
* ``vector``: a 32-instruction body of ADDs with swizzles, signs and offsets between the
  branches (long compiled blocks);
* ``div``: the ``alu`` loop with a DIV in it (division is the slowest lane operation).

The first run of each program includes compiling its blocks; the figure is the best of
``--repeat`` runs of a fresh Gpu, in CPU time (other processes on the machine change it
less than wall time). ``--hooks`` also runs the ``alu`` loop with an ``insn`` hook (a
counter), and with a ``mem_write`` hook that is never called (the loop writes no OMEM): the
price of the hooked blocks. Usage: python benchmarks/theia_sim.py [--iterations N]
[--repeat R] [--hooks]
"""

from __future__ import annotations

import argparse
import time

from isaforge.theia import Gpu, assemble

PROLOGUE = """ADD R[0].x__ I(0) 0
ADD R[0]._y_ I(1) 0
ADD R[0].__z I(2) 0
ADD R[2].__z I(0) 0
ADD R[3].xyz I(0) 0
ADD R[10].xyz I(0) 0
ADD R[14].xyz I({n:x}) 0
ADD R[11].xyz I(3) 0
ADD R[12].xyz I(5) 0
"""
LOOP_TEST = "ADD <BRANCH.ZERO_OR_NOT_SIGN> @{end}.___ R10.xxx R14.-x-y-z\n"
LOOP_TAIL = """ADD R10.xyz R10.xyz R0.yyy
ADD <BRANCH.ALWAYS> @9.___ R0.xyz R0.xyz
ADD R66.xyz R16.xyz R0.xxx
ADD R0.___ R0.xyz R0.xyz {EOF=1}
"""
BODIES = {
    "alu": """MUL R13.xyz R11.xyz R12.xyz
ADD R15.xyz R13.xyz R11.xyz
LOGIC R16.xyz R15.xyz R12.xyz
ADD R17.xyz R16.xyz R15.-x-y-z
""",
    "vector": "".join(
        f"ADD R{20 + i % 8}.xyz R{11 + i % 3}.{'xyz' if i % 2 else 'yzx'} "
        f"R{20 + (i + 3) % 8}.{'-x-y-z' if i % 3 else 'zxy'}\n" for i in range(31)
    ) + "ADD R16.xyz R20.xyz R21.xyz\n",
    "div": """MUL R13.xyz R11.xyz R12.xyz
DIV R13.xyz R13.xyz R12.xyz
ADD R15.xyz R13.xyz R11.xyz
LOGIC R16.xyz R15.xyz R12.xyz
""",
}


def program(body: str, n: int) -> list[int]:
    end = 9 + 1 + body.count("\n") + 2
    return assemble(PROLOGUE.format(n=n) + LOOP_TEST.format(end=end) + body + LOOP_TAIL)


CALLS = [0]


def _count(*args: object) -> None:
    CALLS[0] += 1


def measure(name: str, code: list[int], quirks: tuple[str, ...], repeat: int,
            hook: str | None = None) -> None:
    best = None
    for _ in range(repeat):
        gpu = Gpu(cores=4, quirks=quirks)
        if hook is not None:
            gpu.hook_add(hook, _count)
        gpu.load_vp(2, code)
        t = time.process_time()
        result = gpu.run(max_steps=10**9)
        dt = time.process_time() - t
        if best is None or dt < best[0]:
            best = (dt, result.vp_instructions)
    assert best is not None
    dt, n = best
    label = "RTL quirks" if quirks else "as designed"
    if hook is not None:
        label = f"{hook} hook"
    print(f"{name:7s} {label:15s} {n:>10,d} instructions in {dt:6.3f} s = "
          f"{n / dt / 1e6:5.2f} M instructions/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure (the best is shown)")
    ap.add_argument("--hooks", action="store_true", help="also measure hooked runs")
    args = ap.parse_args()
    for name, body in BODIES.items():
        code = program(body, args.iterations)
        measure(name, code, (), args.repeat)
        measure(name, code, ("reissue-after-branch", "tmem-row0", "mcu-lost"), args.repeat)
        if args.hooks and name == "alu":
            measure(name, code, (), args.repeat, "insn")
            measure(name, code, (), args.repeat, "mem_write")


if __name__ == "__main__":
    main()
