"""Real Tensix kernels end to end on the tile model: tiles per second (prints figures; not a
test).

    python benchmarks/tensix_kernels.py [--tiles N] [--repeat R]

add1 (tt-metal's add1_sfpu_single_file, firmware and kernels from the listings): one booted
device (:class:`isaforge.tensix.examples.Add1Device`), a warm-up call (numba compiles the
RISC-V and SFPU fast paths; the RISC-V fast path starts after 50,000 exact instructions in a
process), then R calls of N random tiles each: the best call's tiles/s end to end (DRAM
buffers written and read back, tilize/untilize, launch, go, done), the RISC-V and Tensix
instructions per second of that call, and the ratio to numpy computing the same result
(:func:`isaforge.tensix.examples.add1_reference`). Also the boot time and a fresh process's
first call (``isaforge tensix example add1`` as a user runs it).

The goal (issue 15) is 1,000 add1 tiles/s end to end.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(sys.argv[sys.argv.index("--src") + 1]) if "--src" in sys.argv else ROOT / "src"
sys.path.insert(0, str(SRC))
from isaforge.tensix.examples import Add1Device, add1_reference  # noqa: E402


def bench_add1(tiles: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    dev = Add1Device()
    boot = time.perf_counter() - t0
    dev.add1(rng.integers(0, 1 << 16, (max(tiles, 80), 32, 32), dtype=np.uint16))  # warm-up
    best = None
    for _ in range(repeat):
        x = rng.integers(0, 1 << 16, (tiles, 32, 32), dtype=np.uint16)
        t = time.perf_counter()
        y = dev.add1(x)
        dt = time.perf_counter() - t
        if not np.array_equal(y, add1_reference(x)):
            raise SystemExit("add1: result differs from the reference")
        if best is None or dt < best[0]:
            best = (dt, dev.stats)
    dt, st = best
    t = time.perf_counter()
    for _ in range(10):
        add1_reference(x)
    np_dt = (time.perf_counter() - t) / 10
    print(f"add1: boot {boot:.3f} s; {tiles} tiles in {dt:.3f} s = {tiles / dt:,.0f} tiles/s "
          f"(goal 1,000)")
    print(f"  RISC-V {st.riscv_instructions:,} instructions = "
          f"{st.riscv_instructions / dt:,.0f}/s; Tensix {st.tensix_instructions:,} = "
          f"{st.tensix_instructions / dt:,.0f}/s; NOC {st.noc}")
    print(f"  numpy (add1_reference) {tiles / np_dt:,.0f} tiles/s: the model is "
          f"{dt / np_dt:,.0f}x slower")


def bench_cli(tiles: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        inp, out = Path(d) / "in.npy", Path(d) / "out.npy"
        np.save(inp, np.random.default_rng(1).integers(0, 1 << 16, (tiles, 32, 32),
                                                       dtype=np.uint16))
        env = {"PYTHONPATH": str(SRC)}
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "isaforge", "tensix", "example", "add1",
                        "--input", str(inp), "--output", str(out)], check=True, env=env)
        dt = time.perf_counter() - t
    print(f"add1 CLI (fresh process, {tiles} tiles): {dt:.2f} s wall")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiles", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--src")
    args = ap.parse_args()
    bench_add1(args.tiles, args.repeat)
    bench_cli(8)


if __name__ == "__main__":
    main()
