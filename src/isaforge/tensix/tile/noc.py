"""The NOC as the kernels see it: endpoints at NOC coordinates, and the transfers between them.

One :class:`Noc` object routes every transaction of every tile: it knows which endpoint (a
tile's L1, a DRAM bank) lives at which ``(x, y)`` coordinate. The coordinates are tt-metal's
translated (virtual) ones, the same on NOC 0 and NOC 1 (Blackhole runs with coordinate
translation on, ``NIU_CFG_0_NOC_ID_TRANSLATE_EN``), so a transaction's target is found the same
way whichever NOC issues it. A grid of tiles plugs more tiles in with :meth:`Noc.attach`.

Transfers are functional: a command buffer's transaction completes when it is issued (the
data is at its destination, the counters the barriers poll are already updated, see
:mod:`.noc_regs`). No timing is modelled.

Endpoints implement :class:`Endpoint`: ``noc_read(addr, n)``, ``noc_write(addr, data)`` and
``noc_atomic_add(addr, incr, wrap)``. Writes into a tile's L1 wake the cores polling what
changed. An address outside an endpoint's memory is a :class:`NocFault` (the tile reports it
with the core, pc and symbol of the instruction that issued the transaction).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

#: a :class:`~.tile.Tile` (not imported: the tile imports this module)
Tile = Any

MASK32 = 0xFFFFFFFF


class NocFault(Exception):  # noqa: N818 - a signal between the NOC and the tile
    """A transaction the NOC cannot carry (no endpoint there, an address out of range)."""


class Endpoint(Protocol):
    name: str

    def noc_read(self, addr: int, n: int) -> bytes: ...

    def noc_write(self, addr: int, data: bytes) -> None: ...

    def noc_atomic_add(self, addr: int, incr: int, wrap: int) -> int: ...


def _wrap_add(old: int, incr: int, wrap: int) -> int:
    """``NOC_AT_INS_INCR_GET``: add ``incr``; the low ``wrap + 1`` bits wrap (31: none)."""
    if wrap >= 31:
        return (old + incr) & MASK32
    mask = (1 << (wrap + 1)) - 1
    return (old & ~mask & MASK32) | ((old + incr) & mask)


class DramBank:
    """One DRAM bank: ``size`` bytes, zero until written (stored sparsely, in pages)."""

    PAGE = 1 << 16

    def __init__(self, index: int, size: int = 1 << 32) -> None:
        self.index = index
        self.size = size
        self.name = f"DRAM bank {index}"
        self.pages: dict[int, bytearray] = {}

    def _check(self, addr: int, n: int) -> None:
        if addr < 0 or addr + n > self.size:
            raise NocFault(f"{self.name}: [{addr:#x}, +{n:#x}) is beyond its {self.size:#x} "
                           f"bytes")

    def _spans(self, addr: int, n: int) -> Iterator[tuple[int, int, int, int]]:
        """(page, offset in it, offset in the data, length) of each page ``[addr, +n)`` meets."""
        done = 0
        while done < n:
            page, off = divmod(addr + done, self.PAGE)
            k = min(n - done, self.PAGE - off)
            yield page, off, done, k
            done += k

    def noc_read(self, addr: int, n: int) -> bytes:
        self._check(addr, n)
        page, off = divmod(addr, self.PAGE)
        if off + n <= self.PAGE:  # within one page (a tile's transfer): one copy
            p = self.pages.get(page)
            return bytes(n) if p is None else bytes(memoryview(p)[off:off + n])
        out = bytearray(n)
        for page, off, at, k in self._spans(addr, n):
            p = self.pages.get(page)
            if p is not None:
                out[at:at + k] = p[off:off + k]
        return bytes(out)

    def noc_write(self, addr: int, data: bytes) -> None:
        self._check(addr, len(data))
        page, off = divmod(addr, self.PAGE)
        p = self.pages.get(page)
        if p is not None and off + len(data) <= self.PAGE:  # within one page kept already
            p[off:off + len(data)] = data
            return
        for page, off, at, k in self._spans(addr, len(data)):
            p = self.pages.get(page)
            if p is None:
                p = self.pages[page] = bytearray(self.PAGE)
            p[off:off + k] = data[at:at + k]

    def noc_atomic_add(self, addr: int, incr: int, wrap: int) -> int:
        old = int.from_bytes(self.noc_read(addr, 4), "little")
        self.noc_write(addr, _wrap_add(old, incr, wrap).to_bytes(4, "little"))
        return old


class TileL1:
    """A tile's L1 as a NOC endpoint: writes wake the tile's cores polling them."""

    def __init__(self, tile: Tile) -> None:
        self.tile = tile
        self.size = tile.mm.l1_size
        x, y = tile.noc_virtual_xy
        self.name = f"tile ({x},{y}) L1"

    def _check(self, addr: int, n: int) -> None:
        if addr < 0 or addr + n > self.size:
            raise NocFault(f"{self.name}: [{addr:#x}, +{n:#x}) is outside L1 ({self.size:#x} "
                           f"bytes; registers are not reachable over the NOC in this model)")

    def noc_read(self, addr: int, n: int) -> bytes:
        self._check(addr, n)
        return self.tile.l1.read(addr, n)

    def noc_write(self, addr: int, data: bytes) -> None:
        self._check(addr, len(data))
        self.tile.l1.write(addr, data)
        self.tile.scheduler.wrote(addr, len(data), by=None)

    def noc_atomic_add(self, addr: int, incr: int, wrap: int) -> int:
        old = int.from_bytes(self.noc_read(addr, 4), "little")
        self.noc_write(addr, _wrap_add(old, incr, wrap).to_bytes(4, "little"))
        return old


class Noc:
    """Every endpoint by NOC coordinate; routes reads, writes, multicasts and atomics."""

    def __init__(self) -> None:
        self.endpoints: dict[tuple[int, int], Endpoint] = {}
        self.dram_banks: list[DramBank] = []

    def issue(self, window: Any, buf: int, core: Any) -> None:
        """Command buffer ``buf`` of ``window`` (a :class:`~.noc_regs.NocRegs`) was issued by
        ``core`` (its CoreInfo): carry it out now (a grid's NOC defers it)."""
        window.issue(buf)

    def attach(self, xy: tuple[int, int], endpoint: Endpoint) -> None:
        if xy in self.endpoints and self.endpoints[xy] is not endpoint:
            raise ValueError(f"NOC coordinate {xy} already holds {self.endpoints[xy].name}")
        self.endpoints[xy] = endpoint

    def attach_tile(self, tile: Tile) -> None:
        self.attach(tile.noc_virtual_xy, TileL1(tile))

    def add_dram_banks(self, coords: list[tuple[int, int]], size: int = 1 << 32) -> None:
        """One :class:`DramBank` per coordinate, bank ``k`` at ``coords[k]``."""
        for xy in coords:
            bank = DramBank(len(self.dram_banks), size)
            self.dram_banks.append(bank)
            self.attach(xy, bank)

    def at(self, xy: tuple[int, int]) -> Endpoint:
        try:
            return self.endpoints[xy]
        except KeyError:
            raise NocFault(f"no NOC endpoint at ({xy[0]},{xy[1]})") from None

    def rectangle(self, start: tuple[int, int], end: tuple[int, int]) -> list[Endpoint]:
        """The tiles' L1s of a multicast rectangle (inclusive corners), in x-then-y order."""
        x0, x1 = sorted((start[0], end[0]))
        y0, y1 = sorted((start[1], end[1]))
        return [ep for (x, y), ep in sorted(self.endpoints.items(), key=lambda kv: kv[0][::-1])
                if x0 <= x <= x1 and y0 <= y <= y1 and isinstance(ep, TileL1)]

    # -- transactions -------------------------------------------------------------------------

    def read(self, src_xy: tuple[int, int], src_addr: int, dst: Endpoint, dst_addr: int,
             n: int) -> None:
        dst.noc_write(dst_addr, self.at(src_xy).noc_read(src_addr, n))

    def write(self, src: Endpoint, src_addr: int, dst_xy: tuple[int, int], dst_addr: int,
              n: int) -> None:
        self.at(dst_xy).noc_write(dst_addr, src.noc_read(src_addr, n))

    def multicast(self, src: Endpoint, src_addr: int, start: tuple[int, int],
                  end: tuple[int, int], dst_addr: int, n: int, include_src: bool) -> int:
        """Write to every tile of the rectangle (the source's own tile only with
        ``include_src``); the number of destinations written."""
        data = src.noc_read(src_addr, n)
        count = 0
        for ep in self.rectangle(start, end):
            if ep is src and not include_src:
                continue
            ep.noc_write(dst_addr, data)
            count += 1
        return count


__all__ = ["DramBank", "Endpoint", "Noc", "NocFault", "TileL1"]
