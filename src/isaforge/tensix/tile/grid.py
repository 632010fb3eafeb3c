"""A grid of Blackhole worker tiles and DRAM under one deterministic scheduler.

:class:`Grid` builds ``cols`` x ``rows`` :class:`~.tile.Tile` objects at the NOC coordinates
Blackhole gives the first ``cols`` worker columns and ``rows`` worker rows (:mod:`.soc`), and
one :class:`GridNoc` (a :class:`~.noc.Noc` shared by all of them) with the eight DRAM banks
(``grid.dram``) at their ports' coordinates, which carries the NOC transactions between them.
Each tile has its own :class:`~.host.Host`; :meth:`Grid.boot` writes every tile's firmware,
mailboxes and boot tables as tt-metal's host does for that grid.

Scheduling (:class:`GridScheduler`): a grid round runs one round of every tile (its cores'
quanta, then its coprocessor: :meth:`~.scheduler.Scheduler.round`), then carries out the NOC
transactions the round issued, tile by tile in the grid's fixed order and in issue order within
a tile. Tiles share nothing but the NOC, and the NOC only changes what a tile sees between
rounds, so the order in which the tiles of a round are visited cannot change anything:
``order`` (``"fixed"``, ``"reverse"`` or an integer seed shuffling the tiles every round) exists
to show that, and the tests run the same workload under several orders and compare every byte
and count. One clock: every tile's wall clock is the grid's cycle count.

:meth:`Grid.processes` runs a block with the tiles split over several processes, with the
same results (:mod:`.grid_procs`).
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

from .boot import result_json
from .devmsgs import DevMsgs
from .errors import NocError, TileDeadlock, TileError, TileStepLimit
from .grid_procs import Ranks, Txn, gather, l1_reads, run_parallel, sync_tiles
from .host import Host
from .loader import Firmware, load_firmware_dir
from .memmap import MemoryMap
from .noc import Endpoint, Noc, NocFault, TileL1
from .noc_regs import N_STATUS, NocRegs
from .program import CircularBuffer, Kernel
from .soc import DeviceTables, Soc, device_tables, soc
from .tile import Tile

#: per-tile runtime arguments: (x, y) -> {core: args}, as a function or a mapping
RuntimeArgs = Callable[[int, int], Mapping[str, list[int]]] | Mapping[
    tuple[int, int], Mapping[str, list[int]]]


class GridNoc(Noc):
    """The NOC shared by a grid's tiles and DRAM (:class:`~.noc.Noc`, with deferral).

    Endpoints are found by virtual coordinate (the same on both NOCs): each tile's L1 and each
    DRAM bank at the coordinate of every one of its ports. A command buffer issued during a
    round is not carried out at once: its registers are copied and the transaction is queued
    (:meth:`issue`), then carried out at the end of the round (:meth:`deliver`), tile by tile
    in the grid's order and in issue order within a tile; the issuing interface's status
    counters change then, and the cores polling them wake. A transaction that fails is
    reported with the tile, core, pc and symbol that issued it."""

    def __init__(self, layout: Soc, dram: list[tuple[int, int]] | None = None) -> None:
        super().__init__()
        self.layout = layout
        self._outbox: list[list[Txn | Callable[[], None]]] = []
        self._tiles: list[Tile] = []
        self._noc_window: dict[int, int] = {}  # NOC 0/1 -> index in a tile's windows
        self.delivered = 0
        if dram is not None:  # a build that addresses bank k at dram[k] (one port each)
            self.add_dram_banks(dram, layout.dram_bank_size)
            return
        banks = range(layout.dram_banks)
        self.add_dram_banks([layout.dram_port_xy(b, 0) for b in banks], layout.dram_bank_size)
        for b in banks:
            for port in range(1, len(layout.dram_ports[b])):
                self.attach(layout.dram_port_xy(b, port), self.dram_banks[b])

    def attach_tile(self, tile: Tile) -> None:
        """Give ``tile`` its outbox (the tile attached its L1 when it was built on this NOC)."""
        tile.grid_index = len(self._outbox)
        self._outbox.append([])
        self._tiles.append(tile)
        if not self._noc_window:
            self._noc_window = {w.noc: k for k, w in enumerate(tile.windows)
                                if isinstance(w, NocRegs)}

    # -- posting and delivery -----------------------------------------------------------------

    def issue(self, window: Any, buf: int, core: Any) -> None:
        tile = window.tile
        who = tile.cores.get(core.name)
        pc = who.hart.pc if who is not None else None
        self._outbox[tile.grid_index].append(
            (tile.grid_index, window.noc, buf, window.snapshot(buf), core.name, pc))

    def post(self, tile_index: int, op: Callable[[], None]) -> None:
        """Queue ``op`` (a transaction issued by tile ``tile_index``) for the round's end."""
        self._outbox[tile_index].append(op)

    @property
    def pending(self) -> int:
        return sum(len(q) for q in self._outbox)

    def deliver(self, txns: list[Txn] | None = None) -> int:
        """Carry out every queued transaction (tile order, then issue order), or ``txns``
        (already in that order, from every process of the grid); how many."""
        if txns is None:
            txns = []
            for q in self._outbox:
                txns += q
                q.clear()
        for t in txns:
            if callable(t):
                t()
            else:
                self._carry(t)
        self.delivered += len(txns)
        return len(txns)

    def take(self, tiles: range) -> list[Txn]:
        """The queued transactions of ``tiles``, in order, taken out of the queue."""
        out: list[Txn] = []
        for i in tiles:
            q = self._outbox[i]
            if any(callable(t) for t in q):
                raise TileError("a grid run in several processes carries NOC transactions "
                                "only (not posted functions)")
            out += q
            q.clear()
        return out

    def _window(self, t: Txn) -> tuple[Tile, Any]:
        tile = self._tiles[t[0]]
        return tile, tile.windows[self._noc_window[t[1]]]

    def txn_reads(self, t: Txn) -> list[tuple[int, int, int]]:
        """The tiles' L1 bytes transaction ``t`` reads (:func:`.grid_procs.l1_reads`)."""
        tile, window = self._window(t)
        return l1_reads(self, tile, window, t[3])

    def _carry(self, t: Txn) -> None:
        tile, window = self._window(t)
        _, _, buf, regs, name, pc = t
        try:
            window.issue(buf, regs)
        except NocFault as e:
            raise NocError(f"{_issuer(tile, name, tile.cores.get(name), pc)}: NOC "
                           f"transaction: {e}") from None
        tile.scheduler.wrote(window.base + 4 * window.status_base, 4 * N_STATUS, by=None)

    # -- routing ------------------------------------------------------------------------------

    def at(self, xy: tuple[int, int]) -> Endpoint:
        ep = self.endpoints.get(xy)
        if ep is None:
            raise NocFault(f"no NOC endpoint at ({xy[0]},{xy[1]}): {self.what_is_there()}")
        return ep

    def what_is_there(self) -> str:
        tiles = sorted((xy for xy, e in self.endpoints.items() if isinstance(e, TileL1)),
                       key=lambda xy: xy[::-1])
        dram = [xy for xy, e in self.endpoints.items() if not isinstance(e, TileL1)]
        xs, ys = sorted({x for x, _ in dram}), sorted({y for _, y in dram})
        return ("this grid's worker tiles are at " + " ".join(f"({x},{y})" for x, y in tiles)
                + (f"; DRAM banks at x {_span(xs)}, y {_span(ys)}" if dram else ""))

    def rectangle(self, start: tuple[int, int], end: tuple[int, int]) -> list[Endpoint]:
        """The tiles of a multicast rectangle, in x-then-y order; a worker coordinate of the
        chip inside it that is not a tile of this grid is a fault, and so is a rectangle with no
        tile (columns of DRAM or routers inside it are passed over, as on the chip)."""
        x0, x1 = sorted((start[0], end[0]))
        y0, y1 = sorted((start[1], end[1]))
        cols, rows = self.layout.worker_columns, self.layout.worker_rows
        out = []
        for y in range(y0, y1 + 1):
            for x in range(x0, x1 + 1):
                ep = self.endpoints.get((x, y))
                if isinstance(ep, TileL1):
                    out.append(ep)
                elif x in cols and y in rows:
                    raise NocFault(f"multicast to ({x0},{y0})-({x1},{y1}) reaches ({x},{y}), "
                                   f"which is not a worker tile of this grid: "
                                   f"{self.what_is_there()}")
        if not out:
            raise NocFault(f"multicast to ({x0},{y0})-({x1},{y1}) reaches no worker tile: "
                           f"{self.what_is_there()}")
        return out


def _span(values: list[int]) -> str:
    return str(values[0]) if len(values) == 1 else f"{values[0]}-{values[-1]}"


def _issuer(tile: Tile, name: str, core: Any, pc: int | None) -> str:
    x, y = tile.grid.logical_xy(tile) if tile.grid is not None else (0, 0)
    if core is None or pc is None:
        return f"tile ({x}, {y}) {name}"
    sym = core.symbol(pc)
    return (f"tile ({x}, {y}) {name} pc {pc:#x}" + (f" <{sym}>" if sym else "")
            + f": {core.instruction_text(pc)}")


class GridDeadlock(TileDeadlock):
    """No core of any tile can move and no NOC transaction is in flight."""


@dataclass(frozen=True)
class GridRunResult:
    """What one :meth:`GridScheduler.run` did (all tiles together)."""

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

    def advance(self, longest: int) -> None:
        """The round is over: the clock moves by the most instructions a core ran in it."""
        self.cycles += max(longest, 1)
        self.rounds += 1
        for tile in self.grid.tiles:
            tile.scheduler.cycles = self.cycles
            tile.scheduler.rounds += 1

    def run(self, max_steps: int | None = 10_000_000,
            until: Callable[[], bool] | None = None) -> GridRunResult:
        ranks = self.grid._ranks
        if ranks is not None:
            result = GridRunResult(*run_parallel(self, ranks, max_steps, until))
            sync_tiles(self.grid, ranks)
            return result
        total = tensix = transactions = rounds = 0
        noc = self.grid.noc
        while True:
            if until is not None and until():
                return GridRunResult(total, tensix, transactions, rounds, "until")
            longest = moved = 0
            for tile in self._tiles():
                left = None if max_steps is None else max_steps - total
                done, most, m = tile.scheduler.round(left, self._cores(tile))
                total += done
                if max_steps is not None and total > max_steps:
                    raise TileStepLimit(f"the run did not finish within {max_steps} RISC-V "
                                        f"instructions (--max-steps); {self.describe()}")
                longest, moved = max(longest, most), moved + m
            delivered = noc.deliver()
            transactions += delivered
            tensix += moved
            self.advance(longest)
            rounds += 1
            if longest == 0 and moved == 0 and delivered == 0:
                for tile in self.grid.tiles:
                    tile.scheduler._check_stalls()
                if any(t.scheduler.any_running() for t in self.grid.tiles):
                    continue
                if until is None or until():
                    return GridRunResult(total, tensix, transactions, rounds,
                                         "until" if until else "idle")
                raise self.deadlock()

    def waits(self) -> dict[str, str]:
        def of(tile: Tile) -> dict[str, str]:
            x, y = self.grid.logical_xy(tile)
            return {f"tile ({x}, {y}) {k}": v for k, v in tile.scheduler.waits().items()
                    if v != "held in reset"}
        out: dict[str, str] = {}
        for w in self.grid.per_tile(of):
            out.update(w)
        return out

    def describe(self) -> str:
        return "; ".join(f"{k}: {v}" for k, v in self.waits().items())

    def deadlock(self) -> GridDeadlock:
        waits = self.waits()
        return GridDeadlock("deadlock: no core and no Tensix thread of any tile can make "
                            "progress and no NOC transaction is in flight ("
                            + "; ".join(f"{k}: {v}" for k, v in waits.items()) + ")", waits)


class TileCondition:
    """A condition on every tile of a grid (``tile_test(tile)`` for each), callable as a
    run's ``until``; ``ranges``: the L1 bytes (address, length) ``tile_test`` reads (a grid
    in several processes sends them along each round, so that every process can test
    every tile)."""

    def __init__(self, grid: Grid, tile_test: Callable[[Tile], bool],
                 ranges: list[tuple[int, int]]) -> None:
        self.grid = grid
        self.tile_test = tile_test
        self.ranges = ranges

    def __call__(self) -> bool:
        return all(self.tile_test(t) for t in self.grid.tiles)


class Grid:
    """``cols`` x ``rows`` worker tiles (logical ``(x, y)``, x the column), DRAM and the NOC.

    ``mm`` and ``msgs``: the memory map and ``dev_msgs.h`` layout of the firmware build the
    tiles run (the bundled tables by default); ``dram``: for a build whose tables address DRAM
    bank *k* at ``dram[k]``, those coordinates instead of the chip's eight banks.

    ``grid.tile(x, y)`` and ``grid.host(x, y)`` name a tile by logical coordinate;
    ``grid.tiles`` / ``grid.hosts`` list them row by row."""

    def __init__(self, cols: int = 1, rows: int = 1, order: str | int = "fixed",
                 shuffle_cores: bool = False, quantum: int = 2000, ub: str = "stop",
                 layout: Soc | None = None, mm: MemoryMap | None = None,
                 msgs: DevMsgs | None = None, dram: list[tuple[int, int]] | None = None
                 ) -> None:
        self.layout = layout or soc()
        if cols < 1 or rows < 1:
            raise TileError(f"a grid needs at least one tile, got {cols} x {rows}")
        maxc, maxr = self.layout.worker_grid
        if cols > maxc or rows > maxr:
            raise TileError(f"a grid of {rows} rows x {cols} columns does not fit Blackhole's "
                            f"{maxr} rows x {maxc} columns of worker tiles")
        self.cols, self.rows = cols, rows
        self.tables: DeviceTables = device_tables(cols, rows, self.layout)
        self.noc = GridNoc(self.layout, dram)
        self.dram = self.noc.dram_banks
        self.tiles: list[Tile] = []
        self._logical: dict[int, tuple[int, int]] = {}
        for y in range(rows):
            for x in range(cols):
                tile = Tile(mm=mm, noc_xy=self.layout.worker_xy(x, y), quantum=quantum,
                            ub=ub, noc=self.noc, msgs=msgs)
                tile.grid = self
                self.noc.attach_tile(tile)
                self._logical[id(tile)] = (x, y)
                self.tiles.append(tile)
        self.hosts = [Host(t) for t in self.tiles]
        self.scheduler = GridScheduler(self, order, shuffle_cores)
        #: the processes running this grid's tiles, inside :meth:`processes`
        self._ranks: Ranks | None = None
        #: tiles whose cores ran in a worker process that has ended (their L1 and counts
        #: came back, not their cores' state)
        self._detached = False

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
        if self._detached:
            raise TileError("this grid's tiles ran in worker processes that have ended (their "
                            "cores' state stayed there): it cannot run again; build a new grid")
        return self.scheduler.run(max_steps, until)

    def all_done(self, index: int = 0) -> bool:
        return self.done_condition(index)()

    def done_condition(self, index: int = 0) -> TileCondition:
        """"Every tile's go signal ``index`` reads ``RUN_MSG_DONE``", as a run's ``until``
        that a grid in several processes can test tile by tile."""
        msgs = self.tiles[0].msgs
        done = msgs.const("RUN_MSG_DONE")
        hosts = {id(t): h for t, h in zip(self.tiles, self.hosts, strict=True)}
        off, size = msgs.locate(f"go_messages[{index}].signal")
        return TileCondition(self, lambda t: hosts[id(t)].go_signal(index) == done,
                             [(msgs.mailbox_base + off, size)])

    @contextmanager
    def processes(self, n: int) -> Iterator[int]:
        """Run the block in ``n`` processes (at most one per tile; 1: just this one), each
        running a share of the tiles, with the results of one process (see
        :mod:`.grid_procs`). The block runs in every process: it must be the same host code
        everywhere (no output, no files), and the value it leaves behind is this process's.
        Afterwards the grid cannot run again when ``n`` > 1 (the workers' cores are gone;
        every tile's L1 and instruction counts are here). Yields the number of processes."""
        n = max(1, min(n, len(self.tiles)))
        if n == 1 or self._ranks is not None:
            yield 1
            return
        ranks = Ranks(n, len(self.tiles))
        ranks.fork()
        self._ranks = ranks
        if ranks.rank:  # a worker: run the block, then end (never return into the caller)
            code = 1
            try:
                yield n
                code = 0
            except BaseException as e:  # noqa: BLE001 - any failure ends the worker
                ranks.fail(e)  # rank 0 reads it if it still waits for this worker
            finally:
                os._exit(code)
        try:
            yield n
        finally:
            self._ranks = None
            self._detached = True
            ranks.close()

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
        result = self.run(max_steps, self.done_condition())
        self.run(max_steps)
        return result

    def go(self, max_steps: int | None = 10_000_000, index: int = 0) -> GridRunResult:
        """Send go to every tile (launch messages already written) and run until every tile
        reports done."""
        for host in self.hosts:
            host.send_go(index)
        result = self.run(max_steps, self.done_condition(index))
        self.run(max_steps)
        return result

    def launch(self, kernels: Iterable[Kernel], cbs: Iterable[CircularBuffer],
               config_base: int, runtime_args: RuntimeArgs | None = None,
               index: int = 0, **fields: int) -> None:
        """Launch one program on every tile of the grid (each tile's :meth:`.Host.launch`):
        the same kernels and circular buffers everywhere; ``runtime_args(x, y)`` (or a
        mapping from logical ``(x, y)``) gives each tile's runtime arguments per core
        (``{"brisc": [...], ...}``), replacing the kernels' own for the cores it names."""
        ks, cb_list = list(kernels), list(cbs)
        for tile, host in zip(self.tiles, self.hosts, strict=True):
            xy = self.logical_xy(tile)
            per: Mapping[str, list[int]] = {}
            if callable(runtime_args):
                per = runtime_args(*xy)
            elif runtime_args is not None:
                per = runtime_args.get(xy, {})
            unknown = set(per) - {k.core for k in ks}
            if unknown:
                raise TileError(f"runtime arguments for tile {xy} name {', '.join(sorted(unknown))}"
                                f", which run no kernel")
            mine = [replace(k, runtime_args=list(per[k.core])) if k.core in per else k
                    for k in ks]
            host.launch(mine, cb_list, config_base, index=index, **fields)

    def run_program(self, max_steps: int | None = 50_000_000,
                    index: int = 0) -> GridRunResult:
        """Send go to every tile and run until every tile reports done; a tile that does not
        finish raises :class:`~.errors.TileStepLimit` naming each busy core (tile, pc,
        symbol, what it waits for)."""
        for host in self.hosts:
            host.send_go(index)
        result = self.run(max_steps, self.done_condition(index))
        if not self.all_done(index):
            raise TileStepLimit(f"the program did not finish; {self.scheduler.describe()}")
        return result

    def per_tile(self, fn: Callable[[Tile], Any]) -> list[Any]:
        """``fn(tile)`` for every tile, in order; inside :meth:`processes`, each evaluated by
        the process running that tile (which alone has its cores' state), in every
        process."""
        if self._ranks is None:
            return [fn(t) for t in self.tiles]
        return gather(self, self._ranks, fn)

    def report(self) -> dict[str, dict[str, Any]]:
        reports = self.per_tile(lambda t: t.core_report())
        return {"{},{}".format(*self.logical_xy(t)): r
                for t, r in zip(self.tiles, reports, strict=True)}


@dataclass
class GridBootResult:
    """What :func:`boot_grid` saw: both handshakes on every tile, per tile its cores."""

    init_done: bool
    go_done: bool
    tiles: dict[str, dict[str, dict[str, Any]]]
    instructions: int = 0
    tensix_instructions: int = 0
    cycles: int = 0
    wall_seconds: float = 0.0
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.init_done and self.go_done

    def as_json(self) -> dict[str, Any]:
        return result_json(self)


def boot_grid(firmware: str | Mapping[str, Firmware], cols: int, rows: int,
              max_steps: int | None = 2_000_000, grid: Grid | None = None) -> GridBootResult:
    """:func:`~.boot.boot` on every tile of a ``cols`` x ``rows`` grid: the init handshake,
    then a go whose launch message enables no kernel. A deadlock or the step limit ends it
    with ``error`` set."""
    start = time.perf_counter()
    g = grid or Grid(cols, rows)
    result = GridBootResult(False, False, {})
    try:
        g.boot(firmware, max_steps)
        result.init_done = g.all_done()
        for host in g.hosts:
            host.write_launch(0, enables=0, mode="host")
        g.go(max_steps)
        result.go_done = g.all_done()
    except TileError as e:
        result.error = e.message
    result.tiles = g.report()
    result.instructions = sum(c.instructions for t in g.tiles for c in t.cores.values())
    result.tensix_instructions = sum(t.cp.steps for t in g.tiles)
    result.cycles = g.scheduler.cycles
    result.wall_seconds = time.perf_counter() - start
    return result


def parse_grid(text: str) -> tuple[int, int]:
    """``"RxC"`` (rows x columns, as ``--grid`` takes it) -> (columns, rows)."""
    try:
        r, c = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise TileError(f"bad grid {text!r}: expected ROWSxCOLS, e.g. 2x2") from None
    if r < 1 or c < 1:
        raise TileError(f"bad grid {text!r}: at least one row and one column")
    return c, r


__all__ = ["Grid", "GridBootResult", "GridDeadlock", "GridNoc", "GridRunResult", "GridScheduler",
           "TileCondition", "boot_grid", "parse_grid"]
