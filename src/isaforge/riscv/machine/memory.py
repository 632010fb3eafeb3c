"""A hart's address space: RAM windows onto numpy byte arrays, and MMIO windows onto callbacks.

Several address spaces may map the same array (the five cores of a Tensix tile share L1), and
each keeps its own private windows (each core's local data RAM). An access must fall wholly
inside one window; anything else is a :class:`MemoryAccessError` (never a silent zero).

Latches (:meth:`AddressSpace.map_latches`) are MMIO registers whose window only keeps what an
aligned 32-bit store writes, or whose aligned 32-bit loads only read a word: the compiled path
makes such stores (counting them) and loads (logging them for the owner) itself, in the array
the window keeps them in; everything else about them (other accesses, the exact path) still
goes through the window.

RAM arrays also carry the compiled path's decode cache (:func:`decode_cache`): one per array,
shared by every space that maps it, and checked against the word in memory at every fetch, so
code written at run time (kernels loaded into L1) is decoded afresh.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...core.errors import EmulationError, IsaforgeError

MmioRead = Callable[[int, int], int]  # read(address, size) -> value
MmioWrite = Callable[[int, int, int], None]  # write(address, size, value)


class MemoryAccessError(EmulationError):
    """An access to no window, across two windows, misaligned, or to a read-only window.

    ``detail`` says which; ``hart``, ``pc`` and ``text`` name the instruction when a hart
    made the access."""

    def __init__(self, address: int, size: int, access: str, detail: str,
                 hart: str | None = None, pc: int | None = None, text: str | None = None) -> None:
        where = f"{hart}: pc {pc:#x} ({text}): " if hart is not None and pc is not None else ""
        super().__init__(f"{where}{access} of {size} byte(s) at {address:#010x}: {detail}")
        self.address, self.size, self.access, self.detail = address, size, access, detail
        self.hart, self.pc, self.text = hart, pc, text


class MapError(IsaforgeError):
    """A window that overlaps another, or is badly shaped."""


@dataclass(eq=False)
class Ram:
    base: int
    array: np.ndarray  # uint8, 1-D, C-contiguous
    end: int = 0  # exclusive
    dec: np.ndarray = field(default_factory=lambda: np.empty(0, np.int64))
    words: np.ndarray = field(default_factory=lambda: np.empty(0, np.uint32))  # a view

    def __post_init__(self) -> None:
        self.end = self.base + self.array.size
        self.words = self.array.view(np.uint32)


@dataclass(eq=False)
class Mmio:
    base: int
    size: int
    read: MmioRead | None
    write: MmioWrite | None
    end: int = 0

    def __post_init__(self) -> None:
        self.end = self.base + self.size


LATCH_STORE, LATCH_LOAD, LATCH_NOTE, LATCH_DEFER, LATCH_FRESH = 1, 2, 3, 4, 5


@dataclass(eq=False)
class Latches:
    """Latch registers (see :meth:`AddressSpace.map_latches`): ``table`` rows (base, end,
    index of the first word in ``words``, LATCH_STORE, LATCH_LOAD, LATCH_NOTE or
    LATCH_DEFER or LATCH_FRESH)."""

    words: np.ndarray  # uint32, 1-D
    table: np.ndarray  # int64 (n, 3)


_caches: dict[int, tuple[weakref.ref, np.ndarray]] = {}


def decode_cache(array: np.ndarray) -> np.ndarray:
    """The decode cache of a RAM array: int64 pairs (word seen, packed decode) per word;
    a word of -1 means "not decoded". One per array object, however many spaces map it."""
    key = id(array)
    got = _caches.get(key)
    if got is not None and got[0]() is array:
        return got[1]
    dec = np.full(2 * (array.size // 4), -1, np.int64)
    _caches[key] = (weakref.ref(array), dec)
    weakref.finalize(array, _caches.pop, key, None)
    return dec


class AddressSpace:
    """RAM and MMIO windows of one hart (or of several harts that see the same map)."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.rams: list[Ram] = []
        self.mmios: list[Mmio] = []
        self.latches: Latches | None = None
        self.version = 0  # bumped by every map; the compiled path re-reads the RAM list
        #: MMIO window by address accessed, for the exact path (windows never overlap)
        self._mmio_hits: dict[int, Mmio] = {}

    # -- mapping ------------------------------------------------------------------------------
    def map_ram(self, base: int, array: np.ndarray) -> None:
        """Make ``array`` (uint8, 1-D, C-contiguous; shared, not copied) visible at ``base``.
        Base and size must be multiples of 4."""
        if not isinstance(array, np.ndarray) or array.dtype != np.uint8 or array.ndim != 1 \
                or not array.flags.c_contiguous or not array.flags.writeable:
            raise MapError("map_ram needs a writable 1-D C-contiguous numpy uint8 array")
        if base % 4 or array.size % 4 or array.size == 0:
            raise MapError(f"RAM at {base:#x} of {array.size} bytes: base and size must be "
                           "non-zero multiples of 4")
        self._check_free(base, array.size)
        self.rams.append(Ram(base, array, dec=decode_cache(array)))
        self.version += 1

    def map_mmio(self, base: int, size: int, read: MmioRead | None,
                 write: MmioWrite | None) -> None:
        """Route accesses to ``base .. base+size-1`` to ``read(address, size) -> value`` and
        ``write(address, size, value)``; ``None`` makes that direction an error."""
        if size <= 0:
            raise MapError(f"MMIO at {base:#x}: size {size} must be positive")
        self._check_free(base, size)
        self.mmios.append(Mmio(base, size, read, write))
        self._mmio_hits.clear()
        self.version += 1

    def map_latches(self, words: np.ndarray, ranges: list[tuple[int, int, int]],
                    loads: list[tuple[int, int, int]] = (),
                    notes: list[tuple[int, int, int]] = (),
                    defers: list[tuple[int, int]] = (),
                    fresh: list[tuple[int, int, int]] = ()) -> None:
        """Declare latch registers: each of ``ranges`` (base, size in bytes, index) is an
        aligned range inside one MMIO window whose 32-bit register ``base + 4 * k`` keeps what
        an aligned ``sw`` stores there in ``words[index + k]`` (a writable 1-D uint32 array
        the window reads and writes too), with no other effect its owner does not account for
        through :attr:`.Hart.latched` (the count of such stores the compiled path made
        itself instead of calling the window's ``write``). Each of ``loads`` (same form) is
        a range whose aligned ``lw`` reads ``words[index + k]`` and has no other effect its
        owner does not take from the hart's load log (:attr:`.Hart.on_loads`).

        Each of ``notes`` (same form) is a range whose aligned ``sw`` keeps the value in
        ``words`` as a store latch does and whose other effects its owner makes when told of
        the store (the compiled path counts it in :attr:`.Hart.latched` and logs it for
        :attr:`.Hart.on_store`). Each of ``defers`` (base, size in bytes) is a range whose
        aligned ``sw`` the owner says may be made later, when the compiled path returns (it
        logs it for :attr:`.Hart.on_store` instead of making it): the store never fails for
        this hart, and the hart cannot see its effects but through loads that go to the
        window (which hand the log over first). Each of ``fresh`` (as ``loads``) is a load
        latch whose word its owner keeps current but for the effect of deferred stores: its
        loads go through the window while one waits. Replaces earlier latches."""
        if not isinstance(words, np.ndarray) or words.dtype != np.uint32 or words.ndim != 1 \
                or not words.flags.c_contiguous or not words.flags.writeable:
            raise MapError("map_latches needs a writable 1-D C-contiguous numpy uint32 array")
        table = np.zeros((len(ranges) + len(loads) + len(notes) + len(defers) + len(fresh), 4),
                         np.int64)
        for i, ((base, size, index), flag) in enumerate(
                [(r, LATCH_STORE) for r in ranges] + [(r, LATCH_LOAD) for r in loads]
                + [(r, LATCH_NOTE) for r in notes]
                + [((b, n, 0), LATCH_DEFER) for b, n in defers]
                + [(r, LATCH_FRESH) for r in fresh]):
            m = self.mmio_at(base, size)
            if base % 4 or size % 4 or size <= 0 or m is None:
                raise MapError(f"latches at {base:#x}+{size:#x}: need an aligned range inside "
                               "one MMIO window")
            if index < 0 or index + size // 4 > words.size:
                raise MapError(f"latches at {base:#x}+{size:#x}: words {index}.. are outside "
                               "the array")
            table[i] = (base, base + size, index, flag)
        self.latches = Latches(words, table)
        self.version += 1

    def unmap_latches(self) -> None:
        """Every store to a latch goes through its window again."""
        if self.latches is not None:
            self.latches = None
            self.version += 1

    def _check_free(self, base: int, size: int) -> None:
        if base < 0 or base + size > 1 << 32:
            raise MapError(f"window {base:#x}+{size:#x} is outside the 32-bit address space")
        for w in (*self.rams, *self.mmios):
            if base < w.end and w.base < base + size:
                raise MapError(f"window {base:#x}..{base + size - 1:#x} overlaps the window "
                               f"{w.base:#x}..{w.end - 1:#x}")

    # -- lookup -------------------------------------------------------------------------------
    def ram_at(self, address: int, size: int = 1) -> Ram | None:
        for r in self.rams:
            if r.base <= address and address + size <= r.end:
                return r
        return None

    def mmio_at(self, address: int, size: int = 1) -> Mmio | None:
        m = self._mmio_hits.get(address)
        if m is not None and address + size <= m.end:
            return m
        for m in self.mmios:
            if m.base <= address and address + size <= m.end:
                if len(self._mmio_hits) < 4096:
                    self._mmio_hits[address] = m
                return m
        return None

    def describe(self, address: int) -> str:
        """What lies at ``address``, for error messages."""
        for w in (*self.rams, *self.mmios):
            if w.base <= address < w.end:
                kind = "RAM" if isinstance(w, Ram) else "MMIO"
                return f"{kind} window {w.base:#x}..{w.end - 1:#x}"
        return "no window"

    # -- access (host side and the exact path) ------------------------------------------------
    def read(self, address: int, size: int) -> int:
        """The ``size``-byte little-endian value at ``address`` (RAM or MMIO)."""
        m = self._mmio_hits.get(address)  # (an MMIO register read before: no RAM there)
        if m is not None and m.read is not None and address + size <= m.end:
            return int(m.read(address, size)) & ((1 << (8 * size)) - 1)
        r = self.ram_at(address, size)
        if r is not None:
            off = address - r.base
            if size == 4 and not off & 3:
                return int(r.words[off >> 2])
            if size == 1:
                return int(r.array[off])
            return int.from_bytes(r.array[off:off + size].tobytes(), "little")
        m = self.mmio_at(address, size)
        if m is not None and m.read is not None:
            return int(m.read(address, size)) & ((1 << (8 * size)) - 1)
        raise self._error(address, size, "read", m)

    def write(self, address: int, size: int, value: int) -> None:
        value &= (1 << (8 * size)) - 1
        m = self._mmio_hits.get(address)  # (an MMIO register accessed before: no RAM there)
        if m is not None and m.write is not None and address + size <= m.end:
            m.write(address, size, value)
            return
        r = self.ram_at(address, size)
        if r is not None:
            off = address - r.base
            if size == 4 and not off & 3:
                r.words[off >> 2] = value
            elif size == 1:
                r.array[off] = value
            else:
                r.array[off:off + size] = np.frombuffer(value.to_bytes(size, "little"), np.uint8)
            return
        m = self.mmio_at(address, size)
        if m is not None and m.write is not None:
            m.write(address, size, value)
            return
        raise self._error(address, size, "write", m)

    def read_bytes(self, address: int, n: int) -> bytes:
        """``n`` bytes of RAM from ``address`` (one window)."""
        r = self.ram_at(address, n)
        if r is None:
            raise self._error(address, n, "read", None)
        return r.array[address - r.base:address - r.base + n].tobytes()

    def write_bytes(self, address: int, data: bytes) -> None:
        """Copy ``data`` into RAM at ``address`` (one window)."""
        r = self.ram_at(address, len(data))
        if r is None:
            raise self._error(address, len(data), "write", None)
        off = address - r.base
        r.array[off:off + len(data)] = np.frombuffer(bytes(data), np.uint8)

    def _error(self, address: int, size: int, access: str, m: Mmio | None) -> MemoryAccessError:
        if m is not None:
            detail = f"the MMIO window {m.base:#x}..{m.end - 1:#x} has no {access} handler"
        elif self.describe(address) != "no window":
            detail = f"the access runs past the end of the {self.describe(address)}"
        else:
            detail = "the address is unmapped"
        if self.name:
            detail += f" in {self.name}"
        return MemoryAccessError(address, size, access, detail)


__all__ = ["LATCH_DEFER", "LATCH_FRESH", "LATCH_LOAD", "LATCH_NOTE", "LATCH_STORE",
           "AddressSpace", "Latches", "MapError", "MemoryAccessError", "MmioRead", "MmioWrite",
           "decode_cache"]
