"""Speed of the THEIA ISA-level simulator: simulated VP instructions per second.

Loops of ours (:func:`isaforge.theia.demo.loop_program`), run on one VP of a 4-VP Gpu (as
designed, and with the instruction-level RTL quirks ``tmem-row0`` and ``first-eof``; the
timing quirks are the cycle model's, ``benchmarks/theia_cycle.py``):

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

from isaforge.theia import Gpu
from isaforge.theia.demo import loop_program

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
    label = "ISA quirks" if quirks else "as designed"
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
    for name in ("alu", "vector", "div"):
        code = loop_program(name, args.iterations)
        measure(name, code, (), args.repeat)
        measure(name, code, ("tmem-row0", "first-eof"), args.repeat)
        if args.hooks and name == "alu":
            measure(name, code, (), args.repeat, "insn")
            measure(name, code, (), args.repeat, "mem_write")


if __name__ == "__main__":
    main()
