"""A grid's tiles run by several processes, with the results of one.

:meth:`.grid.Grid.processes` forks worker processes (``os.fork``: each starts with the whole
grid as it is) and every process runs the block under it, the same host code on its own copy
of the grid (SPMD). Each process owns a contiguous share of the tiles (:class:`Ranks`; rank 0,
the process that called, owns the first) and runs only their rounds. What a tile issues to
the NOC during a round is exchanged at the round's end, and then every process carries out
*every* transaction of the round, in the grid's tile order (:meth:`.grid.GridNoc.deliver`),
on its own copy: DRAM stays the same in every process, and each owned tile sees exactly what
it sees in one process. A transaction reads the L1 of a tile another process owns only as it
was at the round's end plus what earlier transactions of the round wrote: the bytes each
transaction reads from tiles' L1 (:func:`l1_reads`, from its registers alone) are sent along
by their owner and patched in first. After each run every process gets every tile's L1 and
its instruction counts, so the host code between runs reads the same everywhere. A run's
``until`` is a :class:`~.grid.TileCondition`: the L1 bytes it reads are sent along with each
round's transactions, so every process decides alone, the same way, when the run ends: one
exchange per round.

Results, instruction counts, cycles and rounds are those of the one-process grid (tests run
both and compare). A core's error in any process is raised in every process, as the same
exception (tile, core, pc, symbol); a worker that fails otherwise or ends is reported by the
others as a :class:`~.errors.TileError`; no worker outlives the block.
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from collections.abc import Callable
from multiprocessing.connection import Connection, Pipe
from typing import Any

from ...core.errors import IsaforgeError
from .errors import TileError
from .noc import NocFault, TileL1
from .noc_regs import (
    CMD_AT,
    CMD_BRCST_PACKET,
    CMD_L1_ACC_AT_EN,
    CMD_WR,
    CMD_WR_INLINE,
    NODE_MASK,
)

#: a transaction as exchanged: (tile index, NOC 0/1, command buffer, registers, core, pc)
Txn = tuple[int, int, int, list[int], str, int | None]


class _Failed:
    """What a worker sends when its block fails outside a collective step."""

    def __init__(self, text: str) -> None:
        self.text = text


def pack_error(e: BaseException) -> tuple[type, tuple, dict]:
    """``e`` as it can be sent to another process (its class, arguments and attributes; the
    message alone if those do not pickle)."""
    for packed in ((type(e), e.args, dict(e.__dict__)), (type(e), e.args, {})):
        try:
            pickle.dumps(packed)
            return packed
        except Exception:  # noqa: BLE001, S110 - anything unpicklable: try less
            pass
    return TileError, (str(e),), {"message": str(e)}


def unpack_error(p: tuple[type, tuple, dict]) -> BaseException:
    cls, args, state = p
    e = cls.__new__(cls)
    e.args = args
    e.__dict__.update(state)
    return e


class Ranks:
    """``size`` processes sharing ``tiles`` tiles: rank 0 talks to every worker, a worker to
    rank 0 only. :meth:`allgather` is the one collective step."""

    def __init__(self, size: int, tiles: int) -> None:
        self.size = size
        self.tiles = tiles
        self.rank = 0
        self.pids: list[int] = []
        self.conns: list[Connection] = []

    def share(self, rank: int) -> range:
        return range(self.tiles * rank // self.size, self.tiles * (rank + 1) // self.size)

    @property
    def owned(self) -> range:
        return self.share(self.rank)

    def owner(self, tile: int) -> int:
        return next(r for r in range(self.size) if tile in self.share(r))

    def fork(self) -> None:
        """Start the workers; returns in every process (``rank`` tells which)."""
        for rank in range(1, self.size):
            mine, theirs = Pipe()
            pid = os.fork()
            if pid == 0:  # the worker: only its pipe to rank 0
                for c in self.conns:
                    c.close()
                mine.close()
                self.rank, self.pids, self.conns = rank, [], [theirs]
                return
            theirs.close()
            self.pids.append(pid)
            self.conns.append(mine)

    def _recv(self, conn: Connection) -> Any:
        try:
            got = conn.recv()
        except (EOFError, OSError):
            raise TileError("a process of the grid ended unexpectedly") from None
        if isinstance(got, _Failed):
            raise TileError(f"a process of the grid failed: {got.text}")
        return got

    def allgather(self, obj: Any) -> list[Any]:
        """Every rank's ``obj``, in rank order, in every rank."""
        if self.rank:
            self.conns[0].send(obj)
            return self._recv(self.conns[0])
        got = [obj] + [self._recv(c) for c in self.conns]
        for c in self.conns:
            c.send(got)
        return got

    # -- ending -------------------------------------------------------------------------------

    def fail(self, e: BaseException) -> None:
        """A worker's block failed: tell rank 0 (which may be waiting for it)."""
        try:
            self.conns[0].send(_Failed(f"{type(e).__name__}: {e}"))
        except OSError:
            pass

    def close(self, timeout: float = 5.0) -> None:
        """Rank 0: close the pipes (a worker waiting on one ends) and reap every worker,
        killing one that has not ended within ``timeout`` seconds."""
        for c in self.conns:
            c.close()
        deadline = time.monotonic() + timeout
        for pid in self.pids:
            while True:
                done, _ = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if time.monotonic() > deadline:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    break
                time.sleep(0.005)
        self.pids, self.conns = [], []


def l1_reads(noc: Any, tile: Any, window: Any, regs: list[int]) -> list[tuple[int, int, int]]:
    """The tiles' L1 bytes a transaction reads, as (tile index, address, length), from its
    command buffer's registers (:meth:`.noc_regs.NocRegs.issue` reads the same fields);
    DRAM and what the transaction cannot reach are left out (carrying it out reports
    those)."""
    r = window.reg
    ctrl = regs[r["NOC_CTRL"]]
    targ = ((regs[r["NOC_TARG_ADDR_MID"]] & 0xF) << 32) | regs[r["NOC_TARG_ADDR_LO"]]
    targ_hi = regs[r["NOC_TARG_ADDR_HI"]]
    targ_xy = (targ_hi & NODE_MASK, (targ_hi >> 6) & NODE_MASK)
    length = regs[r["NOC_AT_LEN_BE"]]

    def at(xy: tuple[int, int], addr: int, n: int) -> list[tuple[int, int, int]]:
        ep = noc.endpoints.get(xy)
        return [(ep.tile.grid_index, addr, n)] if isinstance(ep, TileL1) else []

    if ctrl & CMD_AT:
        addr = (targ & ~0xF) + 4 * (length & 3)
        if ctrl & CMD_BRCST_PACKET:
            start = ((targ_hi >> 12) & NODE_MASK, (targ_hi >> 18) & NODE_MASK)
            try:
                return [(ep.tile.grid_index, addr, 4) for ep in noc.rectangle(start, targ_xy)]
            except NocFault:
                return []
        return at(targ_xy, addr, 4)
    if not ctrl & CMD_WR:
        return at(targ_xy, targ, length)
    if ctrl & CMD_WR_INLINE:
        return []
    return [(tile.grid_index, regs[r["NOC_TARG_ADDR_LO"]], length)]


def plain_read(noc: Any, tile: Any, window: Any, regs: list[int]
               ) -> tuple[int, int] | None:
    """For a read (``NOC_CMD_WR`` clear) that cannot fail, the bytes of the issuer's L1 it
    writes (address, length); None for anything else."""
    r = window.reg
    ctrl = regs[r["NOC_CTRL"]]
    if ctrl & (CMD_AT | CMD_WR | CMD_L1_ACC_AT_EN):
        return None
    targ = ((regs[r["NOC_TARG_ADDR_MID"]] & 0xF) << 32) | regs[r["NOC_TARG_ADDR_LO"]]
    targ_hi = regs[r["NOC_TARG_ADDR_HI"]]
    ep = noc.endpoints.get((targ_hi & NODE_MASK, (targ_hi >> 6) & NODE_MASK))
    length, ret = regs[r["NOC_AT_LEN_BE"]], regs[r["NOC_RET_ADDR_LO"]]
    if ep is None or targ + length > ep.size or ret + length > tile.l1.size:
        return None
    return ret, length


def read_patches(tiles: list[Any], wanted: list[tuple[int, int, int]],
                 owned: range) -> list[tuple[int, int, bytes]]:
    """The bytes of ``wanted`` ranges that lie in ``owned`` tiles' L1."""
    out = []
    for i, addr, n in wanted:
        if i in owned and 0 <= addr and addr + n <= tiles[i].l1.size:
            out.append((i, addr, tiles[i].l1.read(addr, n)))
    return out


def run_parallel(sched: Any, ranks: Ranks, max_steps: int | None,
                 until: Callable[[], bool] | None,
                 ) -> tuple[int, int, int, int, str]:
    """:meth:`.grid.GridScheduler.run` over ``ranks``: (RISC-V instructions, Tensix
    instructions, NOC transactions, rounds, reason)."""
    from .errors import TileStepLimit

    grid = sched.grid
    noc, tiles = grid.noc, grid.tiles
    owned = ranks.owned
    watched = getattr(until, "ranges", None)
    if until is not None and watched is None:
        raise TileError("a grid run in several processes stops on a per-tile condition "
                        "(Grid.done_condition), not on any function")
    tested = list(watched or ())  # the L1 ranges ``until`` reads, on every tile
    watched = [(i, addr, n) for i in owned for addr, n in tested]

    total = tensix = transactions = rounds = 0
    if until is not None and until():  # every process reads the same L1 between runs
        return total, tensix, transactions, rounds, "until"
    while True:
        left = None if max_steps is None else max_steps - total
        err: Any = None
        done = longest = moved = 0
        txns: list[Txn] = []
        patches: list[tuple[int, int, bytes]] = []
        try:
            for tile in sched._tiles():
                cores = sched._cores(tile)  # the same random draws in every process
                if tile.grid_index not in owned:
                    continue
                d, most, m = tile.scheduler.round(None if left is None else left - done, cores)
                done, longest, moved = done + d, max(longest, most), moved + m
                if left is not None and done > left:
                    break
            txns = noc.take(owned)
            wanted = [w for t in txns for w in noc.txn_reads(t)] + watched
            patches = read_patches(tiles, wanted, owned)
        except IsaforgeError as e:  # a kernel's error (tile, core, pc): raised everywhere
            err = pack_error(e)
        got = ranks.allgather((err, done, longest, moved, txns, patches))
        for g in got:
            if g[0] is not None:
                raise unpack_error(g[0])
        total += sum(g[1] for g in got)
        if max_steps is not None and total > max_steps:
            raise TileStepLimit(f"the run did not finish within {max_steps} RISC-V "
                                f"instructions (--max-steps); {sched.describe()}")
        longest = max(g[2] for g in got)
        moved = sum(g[3] for g in got)
        merged = sorted((t for g in got for t in g[4]), key=lambda t: t[0])
        patches = [p for g in got for p in g[5]]
        reads = [noc.txn_reads(t) for t in merged]
        # reads of a tile another process owns than the issuer's: its owner sends them
        remote = [w for t, ws in zip(merged, reads, strict=True) for w in ws
                  if ranks.owner(w[0]) != ranks.owner(t[0])]
        if remote:
            patches += [p for g in ranks.allgather(read_patches(tiles, remote, owned))
                        for p in g]
        for i, addr, data in patches:
            if i not in owned:
                tiles[i].l1.write(addr, data)
        delivered = noc.deliver(_needed(noc, merged, reads, owned, tested))
        noc.delivered += len(merged) - delivered
        delivered = len(merged)
        transactions += delivered
        tensix += moved
        sched.advance(longest)
        rounds += 1
        # ``until`` reads what was sent along (as at the round's end) and what the round's
        # transactions wrote since: the same in every process
        if longest == 0 and moved == 0 and delivered == 0:
            for i in owned:
                tiles[i].scheduler._check_stalls()
            running = any(tiles[i].scheduler.any_running() for i in owned)
            if not any(ranks.allgather(running)):
                if until is None or until():
                    return total, tensix, transactions, rounds, "until" if until else "idle"
                raise sched.deadlock()
        if until is not None and until():
            return total, tensix, transactions, rounds, "until"


def _needed(noc: Any, merged: list[Txn], reads: list[list[tuple[int, int, int]]],
            owned: range, tested: list[tuple[int, int]]) -> list[Txn]:
    """The transactions this process carries out: all but the reads (from DRAM or a tile)
    into a tile it does not run whose bytes neither a later transaction of the round nor the
    run's condition (``tested``: L1 ranges on every tile) reads (they change nothing here
    that matters: that tile's owner carries them out)."""
    out = []
    for k, t in enumerate(merged):
        if t[0] not in owned:
            tile, window = noc._window(t)
            w = plain_read(noc, tile, window, t[3])
            if w is not None and not any(
                    a < w[0] + w[1] and w[0] < a + n for a, n in tested) and not any(
                    i == t[0] and a < w[0] + w[1] and w[0] < a + n
                    for later in reads[k + 1:] for i, a, n in later):
                continue
        out.append(t)
    return out


def sync_tiles(grid: Any, ranks: Ranks) -> None:
    """Every tile's L1 and instruction counts from its owner to every process."""
    tiles = grid.tiles
    mine = {i: (tiles[i].l1.data.tobytes(), {n: c.instructions for n, c in
                                             tiles[i].cores.items()}, tiles[i].cp.steps)
            for i in ranks.owned}
    for part in ranks.allgather(mine):
        for i, (l1, counts, steps) in part.items():
            if i in ranks.owned:
                continue
            t = tiles[i]
            t.l1.data[:] = memoryview(l1)
            for n, v in counts.items():
                t.cores[n].instructions = v
            t.cp.steps = steps


def gather(grid: Any, ranks: Ranks, fn: Callable[[Any], Any]) -> list[Any]:
    """``fn(tile)`` of every tile, from its owner, in tile order, in every process."""
    parts = ranks.allgather({i: fn(grid.tiles[i]) for i in ranks.owned})
    return [next(p[i] for p in parts if i in p) for i in range(len(grid.tiles))]


__all__ = ["Ranks", "gather", "l1_reads", "run_parallel", "sync_tiles"]
