"""tt-metal's add1 program from its real binaries on a grid of tiles.

:class:`Add1Grid` boots the add1 build's firmware (:mod:`.tile.add1_build`) on every tile of a
:class:`~.tile.grid.Grid` and splits the input tiles over them: tile *k* (row by row) gets a
contiguous share, in its own interleaved input and output DRAM buffers, and the same reader,
compute and writer kernels with its own runtime arguments (buffer addresses, its tile count).
The grid's tables are written as tt-metal's host writes them for that build: DRAM bank *k* at
the coordinates :mod:`.examples` uses for one tile, the L1 banks spread over the grid's
workers, the logical -> virtual tables from the chip's layout. The result is the one-tile
result, tile for tile (a test compares them, and runs the grid in several scheduling orders).
"""

from __future__ import annotations

import time

import numpy as np

from .examples import (
    DRAM_BASE,
    DRAM_COORDS,
    ONE_F32,
    TILE_BYTES,
    RunStats,
    add1_cbs,
    check_tiles,
)
from .tile.add1_build import (
    KERNEL_CONFIG_BASE,
    LOGICAL_COLS,
    LOGICAL_ROWS,
    NUM_L1_BANKS,
    build_dev_msgs,
    build_memory_map,
    firmware,
    kernels,
)
from .tile.errors import TileError
from .tile.grid import Grid
from .tile.layout import tilize, untilize
from .tile.program import DramBuffer, read_interleaved, write_interleaved
from .tile.soc import noc_xy


class Add1Grid:
    """``cols`` x ``rows`` tiles booted with the add1 build; :meth:`add1` runs the program on
    all of them. ``order`` / ``shuffle_cores`` are :class:`~.tile.grid.Grid`'s."""

    def __init__(self, cols: int = 1, rows: int = 1, order: str | int = "fixed",
                 shuffle_cores: bool = False, max_steps: int = 5_000_000,
                 boot: bool = True) -> None:
        self.grid = Grid(cols, rows, order=order, shuffle_cores=shuffle_cores,
                         mm=build_memory_map(), msgs=build_dev_msgs(), dram=DRAM_COORDS)
        self._next_dram = DRAM_BASE
        self.stats: RunStats | None = None
        if boot:
            self.boot(max_steps)

    # -- boot ---------------------------------------------------------------------------------

    def boot(self, max_steps: int = 5_000_000) -> None:
        """Boot the build's firmware on every tile (``boot=False`` leaves it to the caller,
        e.g. inside :meth:`.tile.grid.Grid.processes`)."""
        g = self.grid
        fw = firmware()
        banks, coords = self._tables()
        for tile, host in zip(g.tiles, g.hosts, strict=True):
            host.hold()
            host.load_firmware(fw)
            host.reset_messages()
            x, y = g.logical_xy(tile)
            host.write_mailbox("core_info.absolute_logical_x", x)
            host.write_mailbox("core_info.absolute_logical_y", y)
            host.write_l1(tile.mm.mem("BANK_TO_NOC_SCRATCH"), banks)
            host.write_l1(tile.mm.mem("LOGICAL_TO_VIRTUAL_SCRATCH"), coords)
            host.release("brisc")
        g.run(max_steps, g.done_condition())
        if not g.all_done():
            raise TileError(f"the add1 firmware did not finish its init handshake on every "
                            f"tile; {g.scheduler.describe()}")
        g.run(max_steps)

    def _tables(self) -> tuple[bytes, bytes]:
        """This build's boot tables for the grid: DRAM bank k at DRAM_COORDS[k] on both NOCs,
        L1 bank i on worker i % tiles, offsets 0, the chip's worker columns and rows."""
        g = self.grid

        def u16(values: list[int]) -> bytes:
            return b"".join(v.to_bytes(2, "little") for v in values)
        dram = u16([noc_xy(*xy) for xy in DRAM_COORDS]) * 2
        workers = [noc_xy(*t.noc_virtual_xy) for t in g.tiles]
        l1 = u16([workers[i % len(workers)] for i in range(NUM_L1_BANKS)]) * 2
        offsets = bytes(4 * len(DRAM_COORDS)) + bytes(4 * NUM_L1_BANKS)
        cols = bytes(g.layout.worker_columns) + bytes(LOGICAL_COLS - len(g.layout.worker_columns))
        rows = bytes(g.layout.worker_rows) + bytes(LOGICAL_ROWS - len(g.layout.worker_rows))
        return dram + l1 + offsets, cols + rows

    # -- running ------------------------------------------------------------------------------

    def _buffer(self, pages: int) -> DramBuffer:
        buf = DramBuffer(self._next_dram, TILE_BYTES, pages)
        per_bank = -(-max(pages, 1) // len(DRAM_COORDS)) * TILE_BYTES
        self._next_dram += (per_bank + 0xFFF) & ~0xFFF
        return buf

    def shares(self, n: int) -> list[tuple[int, int]]:
        """(first tile, count) of each grid tile's share of ``n`` input tiles, row by row."""
        k = len(self.grid.tiles)
        base, extra = divmod(n, k)
        out, first = [], 0
        for i in range(k):
            count = base + (1 if i < extra else 0)
            out.append((first, count))
            first += count
        return out

    def add1(self, tiles: np.ndarray, max_steps: int = 50_000_000) -> np.ndarray:
        """``tiles``: uint16 BF16 bits, shape (N, 32, 32); the same shape out."""
        a = check_tiles(tiles)
        g = self.grid
        start = time.perf_counter()
        flat = tilize(a).astype("<u2").reshape(-1, 1024)  # each 32 x 32 tile in face order
        jobs = []
        for first, count in self.shares(a.shape[0]):
            src, dst = self._buffer(count), self._buffer(count)
            if count:
                write_interleaved(g.noc, src, flat[first:first + count].tobytes())
            jobs.append((src, dst, count))
        riscv0 = self._riscv()
        tensix0 = sum(t.cp.steps for t in g.tiles)
        noc0 = g.noc.delivered
        ks = list(kernels().values())

        def args(x: int, y: int) -> dict[str, list[int]]:
            src, dst, count = jobs[y * g.cols + x]
            return {"ncrisc": [src.address, count], "brisc": [dst.address, count],
                    **{t: [count, ONE_F32] for t in ("trisc0", "trisc1", "trisc2")}}
        g.launch(ks, add1_cbs(), KERNEL_CONFIG_BASE, runtime_args=args)
        g.run_program(max_steps)
        g.run(max_steps)  # until every core waits for the next go
        out = np.concatenate([
            np.frombuffer(read_interleaved(g.noc, dst), dtype="<u2").reshape(count, 1024)
            for src, dst, count in jobs if count])
        self.stats = RunStats(a.shape[0], self._riscv() - riscv0,
                              sum(t.cp.steps for t in g.tiles) - tensix0,
                              time.perf_counter() - start,
                              {"transactions": g.noc.delivered - noc0})
        return untilize(out.reshape(-1, 1, 1024), 32, 32).astype(np.uint16)

    def _riscv(self) -> int:
        return sum(c.instructions for t in self.grid.tiles for c in t.cores.values())


def add1_grid(tiles: np.ndarray, cols: int = 1, rows: int = 1) -> np.ndarray:
    """Run tt-metal's add1 on a ``cols`` x ``rows`` grid, the input tiles split over it."""
    return Add1Grid(cols, rows).add1(tiles)


__all__ = ["Add1Grid", "add1_grid"]
