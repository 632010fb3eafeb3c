"""A tt-metal program as the host hands it to a tile: kernels, circular buffers, runtime
arguments, and the DRAM buffers its kernels read and write.

* :class:`Kernel`: one kernel image for one core (``brisc``, ``ncrisc``, ``trisc0``..``2``),
  position independent (tt-metal's XIP images), with its symbols at its link address and its
  runtime arguments;
* :class:`CircularBuffer`: one local CB (index, L1 address, size, pages, page size; bytes);
* :class:`DramBuffer`: an interleaved DRAM buffer (page ``i`` in bank ``i % banks`` at offset
  ``address + (i // banks) * page_size``, as ``InterleavedAddrGen`` computes it) with
  :func:`write_interleaved` / :func:`read_interleaved`;
* :func:`tilize` / :func:`untilize`: 32 x 32 tiles of four 16 x 16 faces (row-major inside a
  face; faces in the order top-left, top-right, bottom-left, bottom-right), as tt-metal lays out
  a tile in memory. These four are the (N, 32, 32) forms of :mod:`.layout`'s general helpers.

:meth:`~.host.Host.launch` writes a program into a tile's kernel-config area and launch
message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import layout
from .layout import deinterleave, interleave
from .memmap import CORE_NAMES
from .noc import Noc

TILE = 32


@dataclass
class Kernel:
    """One kernel for ``core``: ``text`` (its image, loaded anywhere), the address it was
    linked at and its symbols there (for traces), and its runtime arguments."""

    core: str
    text: bytes
    link_base: int
    symbols: list[tuple[int, str]] = field(default_factory=list)
    runtime_args: list[int] = field(default_factory=list)
    name: str = "kernel"

    def __post_init__(self) -> None:
        if self.core not in CORE_NAMES:
            raise ValueError(f"unknown core {self.core!r} (one of {', '.join(CORE_NAMES)})")
        if len(self.text) % 4:
            self.text = self.text + bytes(-len(self.text) % 4)


@dataclass(frozen=True)
class CircularBuffer:
    """A local circular buffer: ``num_pages`` pages of ``page_size`` bytes at ``addr``."""

    index: int
    addr: int
    num_pages: int
    page_size: int

    @property
    def size(self) -> int:
        return self.num_pages * self.page_size


@dataclass(frozen=True)
class DramBuffer:
    """An interleaved DRAM buffer: ``pages`` pages of ``page_size`` bytes from ``address`` in
    every bank."""

    address: int
    page_size: int
    pages: int

    @property
    def size(self) -> int:
        return self.page_size * self.pages


def write_interleaved(noc: Noc, buf: DramBuffer, data: bytes) -> None:
    """Write ``data`` into ``buf``, page by page (:func:`.layout.interleave`)."""
    banks = noc.dram_banks
    for bank, addr, page in interleave(data, buf.page_size, len(banks), buf.address,
                                       alignment=buf.page_size):
        banks[bank].noc_write(addr, page)


def read_interleaved(noc: Noc, buf: DramBuffer) -> bytes:
    banks = noc.dram_banks
    return deinterleave(lambda b, a, n: banks[b].noc_read(a, n), buf.pages, buf.page_size,
                        len(banks), buf.address, alignment=buf.page_size)


def tilize(a: np.ndarray) -> np.ndarray:
    """(N, 32, 32) row-major tiles -> (N, 1024) in tile order (four 16 x 16 faces)."""
    a = np.asarray(a)
    return layout.tilize(a).reshape(a.shape[0], TILE * TILE)


def untilize(a: np.ndarray) -> np.ndarray:
    """The inverse of :func:`tilize`."""
    a = np.asarray(a)
    return layout.untilize(a.reshape(a.shape[0], 1, TILE * TILE), TILE, TILE)


__all__ = ["CircularBuffer", "DramBuffer", "Kernel", "read_interleaved", "tilize", "untilize",
           "write_interleaved"]
