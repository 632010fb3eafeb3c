"""A grid of Blackhole worker tiles and DRAM under one deterministic scheduler.

:class:`Grid` builds ``cols`` x ``rows`` :class:`~.tile.Tile` objects at the NOC coordinates
Blackhole gives the first ``cols`` worker columns and ``rows`` worker rows (:mod:`.soc`), one
shared :class:`Dram` (eight banks, sparse), and the :class:`Fabric` that carries NOC
transactions between them. Each tile has its own :class:`~.host.Host`; :meth:`Grid.boot` writes
every tile's firmware, mailboxes and boot tables as tt-metal's host does for that grid.

Scheduling (:class:`GridScheduler`): a grid round runs one round of every tile (its cores'
quanta, then its coprocessor: :meth:`~.scheduler.Scheduler.round`), then delivers the NOC
transactions the round issued, tile by tile in the grid's fixed order and in issue order within
a tile. Tiles share nothing but the fabric, and the fabric only changes what a tile sees between
rounds, so the order in which the tiles of a round are visited cannot change anything:
``order`` (``"fixed"``, ``"reverse"`` or an integer seed shuffling the tiles every round) exists
to show that, and the tests run the same workload under several orders and compare every byte
and count. One clock: every tile's wall clock is the grid's cycle count.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import TileDeadlock, TileError, TileStepLimit
from .host import Host
from .loader import Firmware, load_firmware_dir
from .soc import DeviceTables, Soc, device_tables, soc
from .tile import Tile

#: bytes of DRAM allocated at a time (DRAM is sparse: only what is touched exists)
DRAM_CHUNK = 1 << 20


class Dram:
    """The device's DRAM: ``banks`` banks of ``bank_size`` bytes, allocated on first touch."""

    def __init__(self, banks: int, bank_size: int) -> None:
        self.banks = banks
        self.bank_size = bank_size
        self._chunks: list[dict[int, np.ndarray]] = [{} for _ in range(banks)]

    def _check(self, bank: int, addr: int, n: int) -> None:
        if not 0 <= bank < self.banks:
            raise TileError(f"no DRAM bank {bank} (there are {self.banks})")
        if addr < 0 or n < 0 or addr + n > self.bank_size:
            raise TileError(f"DRAM bank {bank}: access [{addr:#x}, +{n:#x}) is outside the "
                            f"bank ({self.bank_size:#x} bytes)")

    def _spans(self, addr: int, n: int) -> Any:
        while n > 0:
            k, off = divmod(addr, DRAM_CHUNK)
            m = min(n, DRAM_CHUNK - off)
            yield k, off, m
            addr, n = addr + m, n - m

    def read(self, bank: int, addr: int, n: int) -> bytes:
        self._check(bank, addr, n)
        chunks = self._chunks[bank]
        out = bytearray()
        for k, off, m in self._spans(addr, n):
            c = chunks.get(k)
            out += c[off:off + m].tobytes() if c is not None else bytes(m)
        return bytes(out)

    def write(self, bank: int, addr: int, data: bytes) -> None:
        self._check(bank, addr, len(data))
        chunks = self._chunks[bank]
        src = np.frombuffer(bytes(data), dtype=np.uint8)
        pos = 0
        for k, off, m in self._spans(addr, len(src)):
            c = chunks.get(k)
            if c is None:
                c = chunks[k] = np.zeros(DRAM_CHUNK, dtype=np.uint8)
            c[off:off + m] = src[pos:pos + m]
            pos += m


@dataclass(frozen=True)
class Endpoint:
    """What answers at one NOC coordinate: a worker tile's L1 or a DRAM bank's port."""

    xy: tuple[int, int]
    tile: Tile | None = None
    bank: int | None = None

    @property
    def name(self) -> str:
        if self.tile is not None:
            return f"worker tile at NOC ({self.xy[0]}, {self.xy[1]})"
        return f"DRAM bank {self.bank} at NOC ({self.xy[0]}, {self.xy[1]})"


class Fabric:
    """The NOC between the grid's tiles and DRAM.

    Endpoints are found by virtual coordinate (the same on both NOCs). Transactions are posted
    by a tile (:meth:`post`) and happen at the end of the scheduler round, in the grid's fixed
    tile order and in issue order within a tile (:meth:`deliver`). The operations themselves
    (:meth:`write`, :meth:`read`, :meth:`atomic_add`, :meth:`multicast_targets`) act at once;
    the NOC registers post closures that call them."""

    def __init__(self, grid: Grid) -> None:
        self.grid = grid
        self.endpoints: dict[tuple[int, int], Endpoint] = {}
        self._outbox: list[list[Callable[[], None]]] = []
        self.delivered = 0

    def attach_tile(self, tile: Tile) -> int:
        self.endpoints[tile.noc_virtual_xy] = Endpoint(tile.noc_virtual_xy, tile=tile)
        self._outbox.append([])
        return len(self._outbox) - 1

    def attach_dram(self, layout: Soc) -> None:
        for bank in range(layout.dram_banks):
            for port in range(len(layout.dram_ports[bank])):
                xy = layout.dram_port_xy(bank, port)
                self.endpoints[xy] = Endpoint(xy, bank=bank)

    # -- posting and delivery -----------------------------------------------------------------

    def post(self, tile_index: int, op: Callable[[], None]) -> None:
        """Queue ``op`` (a transaction issued by tile ``tile_index``) for the round's end."""
        self._outbox[tile_index].append(op)

    @property
    def pending(self) -> int:
        return sum(len(q) for q in self._outbox)

    def deliver(self) -> int:
        """Carry out every queued transaction (tile order, then issue order); how many."""
        n = 0
        for q in self._outbox:
            while q:  # an op may post more (a read's response): they go in the same pass
                q.pop(0)()
                n += 1
        self.delivered += n
        return n

    # -- operations ----------------------------------------------------------------------------

    def endpoint(self, xy: tuple[int, int]) -> Endpoint:
        ep = self.endpoints.get(xy)
        if ep is None:
            raise TileError(f"no NOC endpoint at ({xy[0]}, {xy[1]}): {self._what_is_there()}")
        return ep

    def _what_is_there(self) -> str:
        tiles = sorted(xy for xy, e in self.endpoints.items() if e.tile is not None)
        return ("this grid's worker tiles are at " + ", ".join(f"({x}, {y})" for x, y in tiles)
                + "; DRAM ports at x 17-18, y 12-23")

    def write(self, xy: tuple[int, int], addr: int, data: bytes) -> None:
        ep = self.endpoint(xy)
        if ep.tile is not None:
            _l1_write(ep.tile, addr, data)
        else:
            self.grid.dram.write(ep.bank, addr, data)

    def read(self, xy: tuple[int, int], addr: int, n: int) -> bytes:
        ep = self.endpoint(xy)
        if ep.tile is not None:
            _l1_check(ep.tile, addr, n)
            return ep.tile.l1.read(addr, n)
        return self.grid.dram.read(ep.bank, addr, n)

    def atomic_add(self, xy: tuple[int, int], addr: int, incr: int,
                   wrap: int = 31) -> int:
        """``NOC_AT_INS_INCR_GET``: add ``incr`` to the 32-bit word at ``addr``, the low
        ``wrap + 1`` bits wrapping, the bits above kept; returns the old value."""
        old = int.from_bytes(self.read(xy, addr, 4), "little")
        mask = (1 << (wrap + 1)) - 1 if wrap < 31 else 0xFFFFFFFF
        new = (old & ~mask & 0xFFFFFFFF) | ((old + incr) & mask)
        self.write(xy, addr, new.to_bytes(4, "little"))
        return old

    def multicast_targets(self, start: tuple[int, int], end: tuple[int, int],
                          exclude: tuple[int, int] | None = None) -> list[tuple[int, int]]:
        """The worker tiles of the rectangle from ``start`` to ``end`` (inclusive, either
        corner first), in x-then-y order; every coordinate of it must be a worker of the
        grid. ``exclude``: the sender, when the multicast does not include it."""
        x0, x1 = sorted((start[0], end[0]))
        y0, y1 = sorted((start[1], end[1]))
        out = []
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                if (x, y) == exclude:
                    continue
                ep = self.endpoints.get((x, y))
                if ep is None or ep.tile is None:
                    if x in self.grid.layout.worker_columns:
                        raise TileError(f"multicast to ({x0}, {y0})-({x1}, {y1}) reaches "
                                        f"({x}, {y}), which is not a worker tile of this grid: "
                                        f"{self._what_is_there()}")
                    continue  # a column of DRAM or routers inside the rectangle: skipped
                out.append((x, y))
        return out


def _l1_check(tile: Tile, addr: int, n: int) -> None:
    if addr < 0 or addr + n > tile.l1.size:
        x, y = tile.noc_virtual_xy
        raise TileError(f"NOC access [{addr:#x}, +{n:#x}) at worker ({x}, {y}) is outside its "
                        f"L1 ({tile.l1.size:#x} bytes)")


def _l1_write(tile: Tile, addr: int, data: bytes) -> None:
    _l1_check(tile, addr, len(data))
    tile.l1.write(addr, data)
    tile.scheduler.wrote(addr, len(data), by=None)


class GridDeadlock(TileDeadlock):
    """No core of any tile can move and no NOC transaction is in flight."""


@dataclass(frozen=True)
class GridRunResult:
    instructions: int
    tensix_instructions: int
    noc_transactions: int
    rounds: int
    reason: str


class GridScheduler:
    """Rounds over all tiles (see the module's docstring)."""

    def __init__(self, grid: Grid, order: str | int = "fixed",
                 shuffle_cores: bool = False) -> None:
        if not isinstance(order, int) and order not in ("fixed", "reverse"):
            raise TileError(f"unknown scheduling order {order!r} (fixed, reverse or a seed)")
        self.grid = grid
        self.order = order
        self.shuffle_cores = shuffle_cores
        self._rng = random.Random(order if isinstance(order, int) else 0)
        self.cycles = 0
        self.rounds = 0

    def _tiles(self) -> list[Tile]:
        tiles = list(self.grid.tiles)
        if self.order == "reverse":
            tiles.reverse()
        elif isinstance(self.order, int):
            self._rng.shuffle(tiles)
        return tiles

    def _cores(self, tile: Tile) -> list[Any] | None:
        if not self.shuffle_cores:
            return None
        cores = list(tile.cores.values())
        self._rng.shuffle(cores)
        return cores

    def run(self, max_steps: int | None = 10_000_000,
            until: Callable[[], bool] | None = None) -> GridRunResult:
        total = tensix = noc = rounds = 0
        fabric = self.grid.noc
        while True:
            if until is not None and until():
                return GridRunResult(total, tensix, noc, rounds, "until")
            longest = moved = 0
            for tile in self._tiles():
                left = None if max_steps is None else max_steps - total
                done, most, m = tile.scheduler.round(left, self._cores(tile))
                total += done
                if max_steps is not None and total > max_steps:
                    raise TileStepLimit(f"the run did not finish within {max_steps} RISC-V "
                                        f"instructions (--max-steps); {self.describe()}")
                longest, moved = max(longest, most), moved + m
            delivered = fabric.deliver()
            noc += delivered
            tensix += moved
            self.cycles += max(longest, 1)
            for tile in self.grid.tiles:
                tile.scheduler.cycles = self.cycles
                tile.scheduler.rounds += 1
            rounds += 1
            self.rounds += 1
            if longest == 0 and moved == 0 and delivered == 0:
                for tile in self.grid.tiles:
                    tile.scheduler._check_stalls()
                if any(t.scheduler.any_running() for t in self.grid.tiles):
                    continue
                if until is None or until():
                    return GridRunResult(total, tensix, noc, rounds,
                                         "until" if until else "idle")
                raise self.deadlock()

    def waits(self) -> dict[str, str]:
        out = {}
        for tile in self.grid.tiles:
            x, y = self.grid.logical_xy(tile)
            for k, v in tile.scheduler.waits().items():
                if v != "held in reset":
                    out[f"tile ({x}, {y}) {k}"] = v
        return out

    def describe(self) -> str:
        return "; ".join(f"{k}: {v}" for k, v in self.waits().items())

    def deadlock(self) -> GridDeadlock:
        waits = self.waits()
        return GridDeadlock("deadlock: no core and no Tensix thread of any tile can make "
                            "progress and no NOC transaction is in flight ("
                            + "; ".join(f"{k}: {v}" for k, v in waits.items()) + ")", waits)


class Grid:
    """``cols`` x ``rows`` worker tiles (logical ``(x, y)``, x the column), DRAM and the NOC.

    ``grid.tile(x, y)`` and ``grid.host(x, y)`` name a tile by logical coordinate;
    ``grid.tiles`` / ``grid.hosts`` list them row by row."""

    def __init__(self, cols: int = 1, rows: int = 1, order: str | int = "fixed",
                 shuffle_cores: bool = False, quantum: int = 2000, ub: str = "stop",
                 layout: Soc | None = None) -> None:
        self.layout = layout or soc()
        if cols < 1 or rows < 1:
            raise TileError(f"a grid needs at least one tile, got {cols} x {rows}")
        maxc, maxr = self.layout.worker_grid
        if cols > maxc or rows > maxr:
            raise TileError(f"a {cols} x {rows} grid does not fit Blackhole's {maxc} x {maxr} "
                            f"worker tiles")
        self.cols, self.rows = cols, rows
        self.tables: DeviceTables = device_tables(cols, rows, self.layout)
        self.dram = Dram(self.layout.dram_banks, self.layout.dram_bank_size)
        self.noc = Fabric(self)
        self.noc.attach_dram(self.layout)
        self.tiles: list[Tile] = []
        self._logical: dict[int, tuple[int, int]] = {}
        for y in range(rows):
            for x in range(cols):
                tile = Tile(noc_xy=self.layout.worker_xy(x, y), quantum=quantum, ub=ub)
                tile.grid = self
                tile.grid_index = self.noc.attach_tile(tile)
                self._logical[id(tile)] = (x, y)
                self.tiles.append(tile)
        self.hosts = [Host(t) for t in self.tiles]
        self.scheduler = GridScheduler(self, order, shuffle_cores)

    # -- naming tiles --------------------------------------------------------------------------

    def _index(self, x: int, y: int) -> int:
        if not (0 <= x < self.cols and 0 <= y < self.rows):
            raise TileError(f"no tile ({x}, {y}) in a {self.cols} x {self.rows} grid")
        return y * self.cols + x

    def tile(self, x: int, y: int) -> Tile:
        return self.tiles[self._index(x, y)]

    def host(self, x: int, y: int) -> Host:
        return self.hosts[self._index(x, y)]

    def logical_xy(self, tile: Tile) -> tuple[int, int]:
        return self._logical[id(tile)]

    # -- running -------------------------------------------------------------------------------

    def run(self, max_steps: int | None = 10_000_000,
            until: Callable[[], bool] | None = None) -> GridRunResult:
        return self.scheduler.run(max_steps, until)

    def all_done(self, index: int = 0) -> bool:
        done = self.tiles[0].msgs.const("RUN_MSG_DONE")
        return all(h.go_signal(index) == done for h in self.hosts)

    def boot(self, firmware: str | Mapping[str, Firmware],
             max_steps: int | None = 2_000_000) -> GridRunResult:
        """Load ``firmware`` on every tile with this grid's mailboxes and tables, release the
        BRISCs, and run the init handshake of every tile, then until every core waits."""
        images = firmware if isinstance(firmware, Mapping) else load_firmware_dir(firmware)
        for tile, host in zip(self.tiles, self.hosts, strict=True):
            host.hold()
            host.load_firmware(images)
            host.init_mailboxes(self.logical_xy(tile), (self.cols, self.rows),
                                images.get("brisc"), self.tables)
            host.release("brisc")
        result = self.run(max_steps, self.all_done)
        self.run(max_steps)
        return result

    def go(self, max_steps: int | None = 10_000_000, index: int = 0) -> GridRunResult:
        """Send go to every tile (launch messages already written) and run until every tile
        reports done."""
        for host in self.hosts:
            host.send_go(index)
        result = self.run(max_steps, lambda: self.all_done(index))
        self.run(max_steps)
        return result

    def report(self) -> dict[str, dict[str, Any]]:
        out = {}
        for tile in self.tiles:
            x, y = self.logical_xy(tile)
            out[f"{x},{y}"] = tile.core_report()
        return out


def parse_grid(text: str) -> tuple[int, int]:
    """``"RxC"`` (rows x columns, as ``--grid`` takes it) -> (columns, rows)."""
    try:
        r, c = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise TileError(f"bad grid {text!r}: expected ROWSxCOLS, e.g. 2x2") from None
    if r < 1 or c < 1:
        raise TileError(f"bad grid {text!r}: at least one row and one column")
    return c, r


__all__ = ["Dram", "Endpoint", "Fabric", "Grid", "GridDeadlock", "GridRunResult",
           "GridScheduler", "parse_grid"]
