"""What every memory-mapped window of the tile shares.

A :class:`Window` covers ``[base, base + size)`` of a RISC-V core's address space and answers
``read(core, addr, size)`` / ``write(core, addr, size, value)`` for the core (a
:class:`~.memmap.CoreInfo`) that made the access; ``addr`` is the absolute address. Each unit
of the hardware is one module with one window class (instruction push, PC buffers, mailboxes,
configuration, ...). A window says what it cannot do by raising:

* :class:`Unmodelled`: an address or access the model does not cover (never a silent zero);
  the tile turns it into an :class:`~.errors.UnmappedAccess` naming the core, its pc, the
  instruction and the address;
* :class:`Stall`: the access cannot complete yet (a read from an empty mailbox, a TTSync read
  while the Tensix thread is busy); the core waits, without completing the instruction, until
  ``ready()`` holds, and then makes the access again.

``volatile`` windows return values that change by themselves (the wall clock), so a core
reading them in a loop is not idle; ``observes_coprocessor`` windows show state the Tensix
coprocessor changes (semaphores, GPRs, configuration), so a core polling them waits for the
coprocessor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .memmap import CoreInfo

MASK32 = 0xFFFFFFFF


class Unmodelled(Exception):  # noqa: N818 - a signal between windows and the tile
    """The window does not model this access; ``what`` says which register or why."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


class Stall(Exception):  # noqa: N818 - a signal between windows and the tile
    """The access must wait: ``reason`` for reports, ``ready()`` says when to try again."""

    def __init__(self, reason: str, ready: Callable[[], bool]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ready = ready


class Window:
    """One memory-mapped unit. Subclasses override :meth:`read` / :meth:`write`."""

    name = "window"
    volatile = False
    observes_coprocessor = False

    def __init__(self, tile: Any, base: int, size: int) -> None:
        self.tile = tile
        self.base = base
        self.size = size

    def contains(self, addr: int) -> bool:
        return self.base <= addr < self.base + self.size

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        raise Unmodelled(f"{self.name}: reads are not modelled")

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        raise Unmodelled(f"{self.name}: writes are not modelled")

    def store_latch(self, core: CoreInfo, addr: int, size: int) -> tuple[str, int] | None:
        """How ``core``'s compiled path may make its aligned 32-bit stores at ``addr``
        (:meth:`isaforge.riscv.AddressSpace.map_latches`): ``("note", word)`` when a store
        there only keeps the value in word ``word`` of the tile's latch array (the tile makes
        the rest: the write count, the wake-up); ``("defer", 0)`` when the store never fails
        for ``core``, needs nothing of the clock, and nothing ``core`` reads but through this
        window shows its effect, so it may be made when the compiled path returns; None:
        through the window at once."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} {self.base:#x}+{self.size:#x}>"


class TileView(Protocol):
    """What the cores and the scheduler use of the tile (:class:`~.tile.Tile` has it all)."""

    mm: Any
    cp: Any
    msgs: Any
    l1_ram: list
    latches: bool
    store_logs: bool
    latch_words: Any  # the NOC command registers (numpy uint32), latches of the cores
    latch_ranges: list[tuple[int, int, int]]
    load_ranges: list[tuple[int, int, int]]
    load_windows: dict[int, Window]
    loads_noted: set[int]
    windows: list[Window]
    cores: dict[str, Any]
    symbols: dict[str, Any]
    scheduler: Any
    watchers: Any  # the parked cores (core.Watchers)

    def mmio_read(self, core: Any, window: Window, addr: int, size: int) -> int: ...

    def mmio_write(self, core: Any, window: Window, addr: int, size: int,
                   value: int) -> None: ...

    def describe(self, addr: int) -> str: ...

    def drop_latches(self) -> None: ...

    def note_load(self, window: Window, addr: int, size: int) -> None: ...

    def refresh_semaphores(self) -> None: ...


def word_offset(window: Window, addr: int, size: int) -> int:
    """The word index of a 32-bit aligned access, else :class:`Unmodelled`."""
    off = addr - window.base
    if size != 4 or off & 3:
        raise Unmodelled(f"{window.name}: {size}-byte access at offset {off:#x} (only aligned "
                         f"32-bit accesses are modelled)")
    return off >> 2


def merge(old: int, addr: int, size: int, value: int) -> int:
    """``old`` (a 32-bit register) with the ``size`` bytes at ``addr`` replaced by ``value``
    (byte enables of a sub-word store)."""
    shift = (addr & 3) * 8
    mask = ((1 << (8 * size)) - 1) << shift
    return (old & ~mask & MASK32) | ((value << shift) & mask)


def extract(word: int, addr: int, size: int) -> int:
    """The ``size`` bytes at ``addr`` of the 32-bit register ``word``."""
    return (word >> ((addr & 3) * 8)) & ((1 << (8 * size)) - 1)


def require(core: CoreInfo, allowed: tuple[str, ...], window: Window) -> None:
    """Raise :class:`Unmodelled` unless ``core`` is one of ``allowed`` (hardware leaves the
    window unmapped for the others)."""
    if core.name not in allowed:
        raise Unmodelled(f"{window.name} is not mapped for {core.name} (only "
                         f"{', '.join(allowed)})")


__all__ = ["MASK32", "Stall", "TileView", "Unmodelled", "Window", "extract", "merge",
           "require", "word_offset"]
