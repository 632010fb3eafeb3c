"""Tensix SFPU (Vector Unit) speed (prints figures; not a test).

    python benchmarks/tensix_sfpu.py [--sfpu-mads N] [--sfpu-tiles N]

Sections (one function each, run in order by :func:`main`):

* :func:`sfpu_figures`, the Vector Unit (SFPU) on a 32-lane multiply-add:

  - ``SFPMAD, coprocessor``: a stream of SFPMADs (``L3 = L0 * L1 + L2``, 32 lanes each) on
    thread 1 of :class:`~isaforge.tensix.machine.coprocessor.Coprocessor`, as
    ``isaforge tensix run`` executes them (decode, Wait Gate, the unit's dispatch):
    SFPMAD instructions/s;
  - ``SFPMAD, Sfpu.execute_word``: the same instruction straight into the unit;
  - ``FMA kernel``: the bit-exact multiply-add alone on 32 lanes, compiled (numba) and numpy
    (the reference);
  - ``numpy a*b+c``: float32 ``a * b + c`` on 32 lanes (IEEE, not Blackhole's rules): what
    numpy takes for the same arithmetic; the ratio to it is printed;
  - ``tile``: a 32x32 FP32 tile in Dst (64 rows of 16) through SFPLOAD / SFPMAD / SFPSTORE
    (64 each: each moves 4 rows' even or odd columns), whole programs on the coprocessor:
    tiles/s, against numpy's ``a * x + b`` on the tile.

The compiled FMA is loaded before timing (it is loaded after 300 multiply-adds in a run;
loading costs ~0.5-1 s of CPU once per process). Times are the best of a few repeats, as
wall-clock time and as this process's CPU time; other jobs on the cores swell the wall-clock
figures, the ratios use CPU time. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.sfpu import fma as sfpu_fma
from isaforge.tensix.machine.sfpu import fma_jit
from isaforge.tensix.program import parse_program

SFPMAD_L3 = 0x84010230  # SFPMAD VA=0, VB=1, VC=2, VD=3


def _best(fn: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """(wall, cpu) seconds of the fastest of ``repeat`` runs (each minimised separately)."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu


def _rate(name: str, count: int, unit: str, wall: float, cpu: float) -> str:
    return (f"  {name:<34} {count / cpu:>12,.0f} {unit}/s CPU  {count / wall:>12,.0f} "
            f"{unit}/s wall  ({cpu / count * 1e6:.2f} us each)")


def _operands(rng: np.random.Generator) -> np.ndarray:
    return (rng.standard_normal((3, 32)) * 4).astype(np.float32).view(np.uint32)


def _tile_program(repeats: int) -> str:
    """SFPLOAD / SFPMAD / SFPSTORE over Dst rows 0..63 (a 32x32 FP32 tile is 64 Dst rows of
    16; each instruction moves 32 datums: 4 rows, even or odd columns), ``repeats`` times."""
    lines = [".config ALU_ACC_CTRL_SFPU_Fp32_enabled 1", ".thread 1",
             "TTI_SFPLOADI(1, 0, 0x4040)", "TTI_SFPLOADI(2, 0, 0x3F00)"]  # a = 3.0, b = 0.5
    for _ in range(repeats):
        for addr in range(0, 128, 2):
            lines += [f"TTI_SFPLOAD(0, 3, 0, {addr})", "TTI_SFPMAD(0, 1, 2, 3, 0)",
                      f"TTI_SFPSTORE(3, 3, 0, {addr})"]
    return "\n".join(lines) + "\n"


def sfpu_figures(n: int, tiles: int) -> list[str]:
    """The Vector Unit's figures (see the module documentation)."""
    rng = np.random.default_rng(1)
    lines = ["SFPU (Vector Unit), 32 lanes per instruction:"]
    if fma_jit.load() is None:
        lines.append("  numba missing: the compiled FMA is not available")

    cp = Coprocessor()
    cp.lreg[0:3] = _operands(rng)
    stream = [SFPMAD_L3] * n

    def coprocessor() -> None:
        cp.set_stream(1, stream)
        cp.run(max_steps=None)

    wall, cpu = _best(coprocessor)
    lines.append(_rate("SFPMAD, coprocessor", n, "SFPMAD", wall, cpu))
    copro_cpu = cpu / n

    sfpu = cp.units.sfpu

    def unit() -> None:
        for _ in range(n):
            sfpu.execute_word(1, SFPMAD_L3)

    wall, cpu = _best(unit)
    lines.append(_rate("SFPMAD, Sfpu.execute_word", n, "SFPMAD", wall, cpu))

    a, b, c = _operands(rng)
    kernel = fma_jit._LOADED.get("lanes")
    if kernel:
        out = np.empty(32, dtype=np.uint32)

        def compiled() -> None:
            for _ in range(n):
                kernel(a, b, c, out)

        wall, cpu = _best(compiled)
        lines.append(_rate("FMA kernel, compiled", n, "32-lane FMA", wall, cpu))

    m = max(n // 20, 50)

    def reference() -> None:
        for _ in range(m):
            sfpu_fma.fma_bh(a, b, c)

    wall, cpu = _best(reference)
    lines.append(_rate("FMA kernel, numpy reference", m, "32-lane FMA", wall, cpu))

    af, bf, cf = (v.view(np.float32) for v in (a, b, c))

    def plain() -> None:
        for _ in range(n):
            af * bf + cf

    wall, cpu = _best(plain)
    lines.append(_rate("numpy a*b+c (float32, 32 lanes)", n, "32-lane a*b+c", wall, cpu))
    lines.append(f"  ratio: an SFPMAD on the coprocessor takes {copro_cpu / (cpu / n):.1f}x "
                 "numpy's 32-lane a*b+c (CPU time)")

    prog = parse_program(_tile_program(tiles))
    x = rng.standard_normal((64, 16)).astype(np.float32)
    tile_cp = Coprocessor()

    def tile_run() -> None:
        tile_cp.load_program(prog)
        tile_cp.dst.write("fp32", x)
        tile_cp.run(max_steps=None)

    wall, cpu = _best(tile_run)
    tile_cpu = cpu / tiles
    lines.append(_rate("tile a*x+b, coprocessor", tiles, "tile", wall, cpu)
                 + f", {192 * tiles / cpu:,.0f} SFP instructions/s")

    def numpy_tile() -> None:
        for _ in range(tiles):
            np.float32(3.0) * x + np.float32(0.5)

    wall, cpu = _best(numpy_tile)
    lines.append(_rate("tile a*x+b, numpy", tiles, "tile", wall, cpu))
    lines.append(f"  ratio: a tile through the SFPU takes {tile_cpu / (cpu / tiles):.0f}x "
                 "numpy's a*x+b of the tile (CPU time)")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sfpu-mads", type=int, default=20000,
                    help="SFPMADs per timed run (default 20000)")
    ap.add_argument("--sfpu-tiles", type=int, default=50,
                    help="tiles per timed SFPU tile run (default 50)")
    args = ap.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} cores")
    for line in sfpu_figures(args.sfpu_mads, args.sfpu_tiles):
        print(line)


if __name__ == "__main__":
    main()
