"""Speed of the THEIA VP cycle model: simulated cycles per second on long-running programs.

Two loops of ours, each run as designed and with every RTL defect switched on:

* ``alu``: ADD / MUL / LOGIC / ADD per iteration, every cycle does work (2 cycles per
  issue), so nothing can be skipped: the model's raw per-cycle speed;
* ``div``: a DIV (66 cycles) that the next iteration waits for: most cycles are idle and
  skipped (the RTL with its defects livelocks on it, re-issuing the DIV every 69 cycles, so
  that variant is run for a fixed number of cycles).

Usage: python benchmarks/theia_cycle.py [--iterations N] [--repeat R]
"""

from __future__ import annotations

import argparse
import time

from isaforge.theia import assemble
from isaforge.theia.cycle import DESIGNED, RTL, run_cycles

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

# 9: loop test, 10..: body, then i++ and the jump back; EXIT after the loop
ALU_BODY = """ADD <BRANCH.ZERO_OR_NOT_SIGN> @16.___ R10.xxx R14.-x-y-z
MUL R13.xyz R11.xyz R12.xyz
ADD R15.xyz R13.xyz R11.xyz
LOGIC R16.xyz R15.xyz R12.xyz
ADD R10.xyz R10.xyz R0.yyy
ADD <BRANCH.ALWAYS> @9.___ R0.xyz R0.xyz
ADD R66.xyz R16.xyz R0.xxx
ADD R0.___ R0.xyz R0.xyz {EOF=1}
"""

DIV_BODY = """ADD <BRANCH.ZERO_OR_NOT_SIGN> @16.___ R10.xxx R14.-x-y-z
MUL R13.xyz R11.xyz R12.xyz
DIV R13.xyz R13.xyz R12.xyz
ADD R15.xyz R13.xyz R11.xyz
ADD R10.xyz R10.xyz R0.yyy
ADD <BRANCH.ALWAYS> @9.___ R0.xyz R0.xyz
ADD R66.xyz R15.xyz R0.xxx
ADD R0.___ R0.xyz R0.xyz {EOF=1}
"""


def program(body: str, n: int) -> list[int]:
    return assemble(PROLOGUE.format(n=n) + body)


def measure(name: str, code: list[int], quirks: object, until: int | None,
            repeat: int) -> None:
    best = None
    for _ in range(repeat):  # the best of ``repeat`` runs: a loaded machine only slows some
        t0 = time.process_time()  # CPU time: the figures do not depend on other processes
        m = run_cycles(code, quirks=quirks, trace=False, until=until)  # type: ignore[arg-type]
        dt = time.process_time() - t0
        best = dt if best is None else min(best, dt)
    assert best is not None
    cycles = m.finished_at if m.done else m.cycle
    print(f"{name:26s} {cycles:>10,d} cycles {m.steps:>9,d} stepped {m.issues:>8,d} issues "
          f"{best:7.3f} s {cycles / best:>11,.0f} cycles/s {m.issues / best:>9,.0f} issues/s")


def calibrate() -> float:
    """CPU seconds of a plain 10-million-step Python loop (about 0.4 s on a current desktop
    with CPython 3.11): to compare figures taken on different machines."""
    t0 = time.process_time()
    x = 0
    for i in range(10_000_000):
        x += i
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (the best is shown)")
    args = ap.parse_args()
    n, r = args.iterations, args.repeat
    print(f"calibration: 10M-step Python loop {calibrate():.2f} CPU s")
    alu = program(ALU_BODY, n)
    div = program(DIV_BODY, n // 4)
    measure("alu loop, designed", alu, DESIGNED, None, r)
    measure("alu loop, RTL defects", alu, RTL, None, r)
    measure("div loop, designed", div, DESIGNED, None, r)
    measure("div loop, RTL (livelock)", div, RTL, 69 * n // 4, r)


if __name__ == "__main__":
    main()
