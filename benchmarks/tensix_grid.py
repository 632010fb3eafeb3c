"""Figures of the tile grid: booting tt-metal's firmware on grids of several sizes, and NOC
traffic between tiles.

    PYTHONPATH=src python benchmarks/tensix_grid.py [--quick]

* ``boot``: the init handshake and an empty go on every tile (:func:`boot_grid`), for one tile
  through :func:`~isaforge.tensix.tile.boot` and for grids of 1x1, 2x2 and 4x4 tiles: wall time
  (best of three), RISC-V instructions over all cores, their rate, and the time per tile;
* ``ring``: every tile's BRISC sends ``PAGES`` 2 KiB pages (a BF16 tile each) to the next tile
  of a ring through NOC command buffer 0, each a non-posted write followed by a barrier on
  ``NIU_MST_WR_ACK_RECEIVED``, as ``noc_async_write`` + ``noc_async_write_barrier`` do:
  transactions per second, bytes per second, grid rounds;
* ``add1``: tt-metal's add1 from its real binaries on one tile (:class:`Add1Device`) and with
  the input tiles split over grids of 1x1, 2x1 and 2x2 tiles (:class:`Add1Grid`): tiles per
  second end to end (boot excluded), best of three;
* ``matmul``: the 20x20x20-tile matmul (6 with ``--quick``) on one tile, on a 2x2 grid in one
  process and on a 2x2 grid in two (``Grid.processes``), side by side: wall and CPU time (the
  worker's included), the speed relative to one tile; the results must be identical.

Rates are wall-clock on this (shared, two-core) machine: read them as ranges.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from isaforge import riscv
from isaforge.tensix.tile import boot, load_firmware_dir
from isaforge.tensix.tile.grid import Grid, boot_grid
from isaforge.tensix.tile.memmap import memory_map
from isaforge.tensix.tile.soc import noc_xy

FIRMWARE = Path(__file__).resolve().parents[2] / "shared" / "refdata" / "tensix" / "firmware" \
    / "bh-10503743232459396191"
PAGE = 2048
SRC, DST, CODE = 0x40000, 0x80000, 0x20000


def best(fn, reps: int = 3) -> tuple[float, object]:  # noqa: ANN001 - a callable
    out, t = None, float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - start)
    return t, out


def boot_figures(fw: dict, reps: int) -> None:
    t, r = best(lambda: boot(fw), reps)
    print(f"boot  1 tile  (boot)      {t * 1000:8.1f} ms  {r.instructions:>8} RISC-V  "
          f"{r.instructions / t / 1e3:7.0f} k instr/s")
    for cols, rows in ((1, 1), (2, 2), (4, 4)):
        t, g = best(lambda c=cols, r=rows: boot_grid(fw, c, r), reps)
        assert g.ok, g.error
        n = cols * rows
        print(f"boot  {rows}x{cols} grid  ({n:>2} tiles) {t * 1000:8.1f} ms  "
              f"{g.instructions:>8} RISC-V  {g.instructions / t / 1e3:7.0f} k instr/s  "
              f"{t / n * 1000:6.1f} ms/tile")


def ring_program(next_xy: tuple[int, int], pages: int) -> str:
    n = memory_map().noc
    ack = n("NOC_STATUS_BASE") + 4 * n("NIU_MST_WR_ACK_RECEIVED")

    def put(name: str, value: int) -> str:
        return f"    li t0, {n(name):#x}\n    li t1, {value:#x}\n    sw t1, 0(t0)\n"
    return f"""
    li s0, {pages}
    li s1, {SRC:#x}
    li s2, {DST:#x}
    li t0, {ack:#x}
    lw s3, 0(t0)
loop:
    addi s3, s3, 1
{put("NOC_CTRL", 2 | 1 << 4 | 1 << 7)}{put("NOC_RET_ADDR_HI", noc_xy(*next_xy))}\
{put("NOC_RET_ADDR_MID", 0)}{put("NOC_AT_LEN_BE", PAGE)}
    li t0, {n("NOC_TARG_ADDR_LO"):#x}
    sw s1, 0(t0)
    li t0, {n("NOC_RET_ADDR_LO"):#x}
    sw s2, 0(t0)
{put("NOC_CMD_CTRL", 1)}
    li t0, {ack:#x}
wait:
    lw t1, 0(t0)
    bne t1, s3, wait
    li t2, {PAGE}
    add s1, s1, t2
    add s2, s2, t2
    addi s0, s0, -1
    bnez s0, loop
    ebreak
"""


def ring(cols: int, rows: int, pages: int) -> tuple[Grid, float]:
    g = Grid(cols, rows)
    xys = [t.noc_virtual_xy for t in g.tiles]
    for i, tile in enumerate(g.tiles):
        code = riscv.assemble(ring_program(xys[(i + 1) % len(xys)], pages), address=CODE)
        tile.l1.write(CODE, code)
        tile.l1.write(SRC, bytes([i + 1]) * (PAGE * pages))
        tile.cores["brisc"].leave_reset(CODE)
    start = time.perf_counter()
    g.run(max_steps=50_000_000)
    t = time.perf_counter() - start
    for i, tile in enumerate(g.tiles):  # the previous tile's pages arrived
        assert tile.l1.read(DST, PAGE * pages) == bytes([(i - 1) % len(xys) + 1]) * (PAGE * pages)
    return g, t


def ring_figures(pages: int) -> None:
    for cols, rows in ((2, 1), (2, 2), (4, 4)):
        g, t = ring(cols, rows, pages)
        n = g.noc.delivered
        print(f"ring  {rows}x{cols} grid  {n:>6} writes of {PAGE} B  {t * 1000:8.1f} ms  "
              f"{n / t:9.0f} writes/s  {n * PAGE / t / 1e6:7.1f} MB/s  "
              f"{g.scheduler.rounds:>6} rounds")


def add1_figures(n: int, reps: int) -> None:
    import numpy as np

    from isaforge.tensix.examples import Add1Device, add1_reference
    from isaforge.tensix.grid_examples import Add1Grid
    x = np.random.default_rng(0).integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16)
    ref = add1_reference(x)
    devices = [("1 tile (Add1Device)", Add1Device())] + [
        (f"{r}x{c} grid (Add1Grid) ", Add1Grid(c, r)) for c, r in ((1, 1), (2, 1), (2, 2))]
    for name, dev in devices:
        dev.add1(x[:1])  # warm up
        t, y = best(lambda d=dev: d.add1(x), reps)
        assert np.array_equal(y, ref)
        print(f"add1  {name}  {n} tiles  {t * 1000:8.1f} ms  {n / t:7.1f} tiles/s")


def matmul_figures(n: int, reps: int) -> None:
    """The n x n x n-tile matmul on one tile, on 2x2 in one process and in two, side by side
    (interleaved ``reps`` times, the best of each); the results and counts must agree."""
    import os

    import numpy as np

    from isaforge.tensix.matmul import matmul
    from isaforge.tensix.tile.layout import to_bf16_bits
    rng = np.random.default_rng(0)
    a, b = (to_bf16_bits(rng.standard_normal((n * 32, n * 32))) for _ in range(2))
    matmul(a[:32, :32].copy(), b[:32, :32].copy(), grid=(1, 1))  # compiled paths loaded
    runs = {"1x1": ((1, 1), 1), "2x2, 1 process": ((2, 2), 1), "2x2, 2 processes": ((2, 2), 2)}
    best = dict.fromkeys(runs, (float("inf"), 0.0))
    outs = {}
    for _ in range(reps):
        for name, (grid, procs) in runs.items():
            t0, start = os.times(), time.perf_counter()
            c, st = matmul(a, b, grid=grid, processes=procs)
            wall, t1 = time.perf_counter() - start, os.times()
            cpu = sum(t1[:4]) - sum(t0[:4])  # this process and its ended workers
            best[name] = min(best[name], (wall, cpu))
            outs[name] = (c.tobytes(), st.riscv_instructions if grid == (2, 2) else 0)
    assert outs["1x1"][0] == outs["2x2, 1 process"][0] == outs["2x2, 2 processes"][0]
    assert outs["2x2, 1 process"][1] == outs["2x2, 2 processes"][1]
    one = best["1x1"][0]
    for name, (wall, cpu) in best.items():
        print(f"matmul {n}x{n}x{n} tiles  {name:17} {wall:6.2f} s wall  {cpu:6.2f} s CPU  "
              f"{one / wall:5.2f}x the 1x1 speed")
    print(f"  (best of {reps}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and pages")
    args = ap.parse_args()
    fw = load_firmware_dir(FIRMWARE)
    boot(fw)  # load the engine once
    boot_figures(fw, 1 if args.quick else 3)
    ring_figures(16 if args.quick else 128)
    add1_figures(4 if args.quick else 16, 1 if args.quick else 3)
    matmul_figures(6 if args.quick else 20, 1 if args.quick else 2)


if __name__ == "__main__":
    main()
