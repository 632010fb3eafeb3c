"""One RISC-V core of the tile: its hart, its address space, and what it is waiting for.

A :class:`Core` owns an :class:`isaforge.riscv.Hart` and the address space it runs in: L1 as
RAM (the tile's one array, less the mailbox area, which is an MMIO window onto the same
bytes; every core maps the same two view objects, so the engine keeps one decode cache for
them), its local data memory as RAM at ``MEM_LOCAL_BASE``, and every window of the tile.
``.ttinsn`` words are pushes to ``INSTRN_BUF_BASE`` (through the same window as ``sw``).

States: ``reset`` (held in soft reset), ``running``, ``parked`` (it polls memory that has not
changed: see below), ``stalled`` (an access that cannot complete yet, such as a read from an
empty mailbox: the instruction is retried once the window says it can complete).

Polling: at each read through a window the core records its state (pc, registers, the value
read). Reading at the same pc with the same registers and value as the last time, with no
window write of its own in between and no read of a volatile register (the wall clock), means
it is looping and only a change of something it read can change what it does: it is parked,
watching every address it read since then, until some other agent (another core, the
coprocessor, the host) writes one of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from ...core.errors import DecodeError
from ...riscv import AddressSpace, Hart, MemoryAccessError, RiscvError, StopReason, decode
from ...riscv.machine.fast import IO_LATCHED, IO_ROOM, IO_WRITES, RECORD_ROOM
from ...riscv.machine.memory import LATCH_NOTE
from ..decode import decode_word
from .errors import TileError
from .local_mem import LocalMemory
from .memmap import CoreInfo
from .mmio import Stall, TileView, Window

RESET, RUNNING, PARKED, STALLED, HALTED = "reset", "running", "parked", "stalled", "halted"
#: reads remembered for loop detection before the record starts again
_READ_LOG = 512
#: registers a core's compiled path notes or defers the stores to at most
MAX_STORE_LATCHES = 32
#: stores through its window to a register before the compiled path may note or defer them
STORES_BEFORE_LATCH = 8


# a read seen at a pc: (the hart's registers as a list -- None: those of the pc's row of the
# hart's load records --, the value read, the read log's length after it, the core's MMIO
# writes then); a plain tuple (made on every MMIO read). A load the compiled path logged
# (Core.load_positions) has none: its row of the load records is the later record.
_Poll = tuple[list[int] | None, int, int, int]
# a read in the read log: (address, size, window); a load the compiled path logged
# (Core.load_positions) only its address (4 bytes, through the tile's load_windows)
_Read = tuple[int, int, Window] | int


@dataclass
class Wait:
    """What a parked or stalled core waits for."""

    why: Any  # the reason: a str, or a callable giving it (see :attr:`reason`)
    watch: list[tuple[int, int]] = field(default_factory=list)  # (address, size) ranges
    ready: Any = None  # for a stall: callable, True once the access can complete
    coprocessor: bool = False  # it polls state the coprocessor changes

    def __post_init__(self) -> None:
        #: the span of every watched range (``[lo, hi)``; empty without any): a write outside
        #: it wakes nobody, found in two comparisons
        watch = self.watch
        self.lo = min([a for a, _ in watch]) if watch else 0
        self.hi = max([a + s for a, s in watch]) if watch else 0

    @property
    def reason(self) -> str:
        """Why it waits (built on first use when given as a callable: cores park on every
        poll, the text is read only for reports)."""
        why = self.why
        if not isinstance(why, str):
            why = self.why = why()
        return why


class Watchers:
    """The parked cores of a tile with something to watch, and the span of everything they
    watch (``[lo, hi)``; empty without any): a write outside it wakes nobody, found in two
    comparisons (:meth:`.Scheduler.wrote`). Kept current by the cores' methods that park
    and wake them (:meth:`Core.park`, :meth:`Core.wake`, ...); code that assigns a core's
    ``state`` or ``wait`` itself calls :meth:`sync` after."""

    def __init__(self) -> None:
        self.cores: list[Core] = []  # every core of the tile, in processor order
        self.parked: tuple[Core, ...] = ()  # (in the order they parked)
        self.lo = self.hi = 0

    def add(self, core: Core) -> None:
        """``core`` parked: watched when its wait has ranges."""
        wait = core.wait
        if wait is None or not wait.watch:
            return
        if self.parked:
            self.lo, self.hi = min(self.lo, wait.lo), max(self.hi, wait.hi)
        else:
            self.lo, self.hi = wait.lo, wait.hi
        self.parked += (core,)

    def remove(self, core: Core) -> None:
        """``core`` leaves its parking."""
        parked = self.parked
        if core not in parked:
            return
        if len(parked) == 1:
            self.parked = ()
            self.lo = self.hi = 0
            return
        k = parked.index(core)
        self.parked = parked = parked[:k] + parked[k + 1:]
        waits = [c.wait for c in parked]
        self.lo = min([w.lo for w in waits])
        self.hi = max([w.hi for w in waits])

    def sync(self) -> None:
        """Look at every core again (after assignments to ``state`` or ``wait``)."""
        self.parked = ()
        self.lo = self.hi = 0
        for core in self.cores:
            if core.state == PARKED:
                self.add(core)


def _polling(tile: TileView, watch: list[tuple[int, int]], value: int) -> str:
    """The reason of a core parked polling ``watch`` (it read ``value``)."""
    what = ", ".join(sorted({tile.describe(a) for a, _ in watch}))
    return f"polling {what} (read {value:#x})"


class Core:
    def __init__(self, tile: TileView, info: CoreInfo) -> None:
        self.tile = tile
        #: the tile's parked cores (shared by its cores; the scheduler reads it)
        self.watchers: Watchers = tile.watchers
        self.watchers.cores.append(self)
        self.info = info
        self.name = info.name
        mm = tile.mm
        self.local = LocalMemory(info.name, mm.local_base, info.local_size)
        self.space = AddressSpace(info.name)
        for base, view in tile.l1_ram:
            self.space.map_ram(base, view)
        self.space.map_ram(mm.local_base, self.local.data)
        for w in tile.windows:
            self.space.map_mmio(w.base, w.size, self._reader(w), self._writer(w))
        #: addresses this core stored to through a window (looked at for store latches); the
        #: registers its compiled path notes (address, 4, word) or defers (address, 4), and
        #: the window of each
        self.stores_noted: set[int] = set()
        self._stores_seen: dict[int, int] = {}  # stores through the window by address
        self._notes: list[tuple[int, int, int]] = []
        self._defers: list[tuple[int, int]] = []
        self._store_windows: dict[int, Window] = {}
        #: addresses this core read through a window (looked at for fresh latches); the
        #: registers its compiled path reads from a copy the tile keeps current (address, 4,
        #: word: a TRISC's semaphores)
        self.fresh_noted: set[int] = set()
        self._fresh: list[tuple[int, int, int]] = []
        self.map_latches()
        self.hart = Hart(info.name, self.space, pc=0)
        self.hart.on_custom = self._ttinsn
        self.push_window = next(w for w in tile.windows
                                if getattr(w, "aperture", None) == 0)
        # a TRISC's push is a write only the coprocessor sees, and it runs after the cores'
        # quanta: the compiled path may keep a run's pushes and hand them over at its end
        self.hart.batch_custom = info.thread is not None
        # (a TRISC's sw to the push aperture's base is exactly what its .ttinsn is)
        self.hart.custom_store = self.push_window.base
        self.hart.on_custom_many = self._ttinsn_many
        # loads the compiled path makes itself are heard here, as saw_read would have
        self.hart.on_loads = self._loads_seen
        # stores the compiled path noted or deferred are heard (or made) here
        self.hart.on_store = self._store_seen
        # a load latch's load the compiled path left (its loop may be idle): as saw_read of
        # the window's read, which would only have returned the word
        self.hart.on_latch_load = self._latch_load
        #: RESET, RUNNING, PARKED, STALLED or HALTED; and what a parked, stalled or halted
        #: core waits for (a Wait), or None (assigned through this class's methods: they keep
        #: the tile's Watchers)
        self.state = RESET
        self.wait: Wait | None = None
        self.instructions = 0
        self._io = self.hart.io  # (the write count lives there: the compiled path reads it)
        self._polls: dict[int, _Poll] = {}
        self._reads: list[_Read] = []
        #: the tile's latch_ranges as last seen, their number then, and their span
        self._latch_span: tuple[Any, int, int, int] = (None, 0, 0, 0)
        self._forget_polls()

    # -- address-space callbacks -------------------------------------------------------------

    def _reader(self, w: Window) -> Any:
        # read(addr, size) = tile.mmio_read(self, w, addr, size), one Python frame fewer
        return partial(self.tile.mmio_read, self, w)

    def _writer(self, w: Window) -> Any:
        # write(addr, size, value) = tile.mmio_write(self, w, addr, size, value)
        return partial(self.tile.mmio_write, self, w)

    def _ttinsn(self, hart: Any, tensix_word: int) -> None:
        """A ``.ttinsn`` (the hart hands over the Tensix word): exactly a ``sw`` of it to
        ``INSTRN_BUF_BASE``."""
        w = self.push_window
        self.tile.mmio_write(self, w, w.base, 4, tensix_word)

    def _ttinsn_many(self, hart: Any, words: list[int]) -> None:
        """Several pushes in order, as :meth:`_ttinsn` one by one: each written to the push
        window (``saw_write`` each), the cores watching the aperture woken once (waking
        only sets their state)."""
        w = self.push_window
        if w.push_many(self.info, words):  # every word a plain push to one thread: at once
            self._io[IO_WRITES] += len(words)  # (saw_write of each)
            self.tile.scheduler.wrote(w.base, 4, by=self)
            return
        try:
            for word in words:
                w.write(self.info, w.base, 4, word)
                self.saw_write()
        except Exception:  # noqa: BLE001 - reported as the one-by-one path reports it
            self.tile.mmio_write(self, w, w.base, 4, word)
            raise
        self.tile.scheduler.wrote(w.base, 4, by=self)

    def map_latches(self) -> None:
        """The tile's latches (NOC command registers: stores; registers read before: loads)
        and this core's noted and deferred stores as its compiled path uses them."""
        tile = self.tile
        notes, defers, fresh = (self._notes, self._defers, self._fresh) if tile.store_logs \
            else ((), (), ())
        if tile.latches and (tile.latch_ranges or tile.load_ranges or notes or defers or fresh):
            self.space.map_latches(tile.latch_words, tile.latch_ranges, tile.load_ranges,
                                   notes, defers, fresh)
        else:
            self.space.unmap_latches()

    def note_store(self, window: Window, addr: int, size: int) -> None:
        """This core stored to ``addr`` through ``window`` (not looked at yet): at the
        :data:`STORES_BEFORE_LATCH`-th time, let its compiled path note or defer such stores
        when the window says they may be (registers stored once a launch, as the circular
        buffers' set-up does, take no row)."""
        seen = self._stores_seen
        n = seen[addr] = seen.get(addr, 0) + 1
        if n < STORES_BEFORE_LATCH:
            return
        self.stores_noted.add(addr)
        tile = self.tile
        if not (tile.latches and tile.store_logs) or len(self._store_windows) >= \
                MAX_STORE_LATCHES:
            return
        got = window.store_latch(self.info, addr, size)
        if got is None:
            return
        kind, index = got
        if kind == "note":
            self._notes.append((addr, 4, index))
        else:
            self._defers.append((addr, 4))
        self._store_windows[addr] = window
        self.map_latches()

    def note_fresh(self, window: Window, addr: int, size: int) -> None:
        """This core read ``addr`` through ``window`` (the first time): let its compiled path
        read the copy the tile keeps of it when the window has one (``fresh_word``)."""
        self.fresh_noted.add(addr)
        tile = self.tile
        find = getattr(window, "fresh_word", None)
        if find is None or not (tile.latches and tile.store_logs) \
                or len(self._fresh) >= MAX_STORE_LATCHES:
            return
        index = find(self.info, addr, size)
        if index is None:
            return
        self._fresh.append((addr, 4, index))
        tile.load_windows[addr] = window
        tile.refresh_semaphores()
        self.map_latches()

    def _store_seen(self, hart: Any, addr: int, value: int, kind: int) -> None:
        """A store the compiled path noted (made already: wake the cores watching it, as
        :meth:`.Tile.mmio_write` would) or deferred (made now, through its window)."""
        if kind == LATCH_NOTE:
            self.tile.scheduler.wrote(addr, 4, by=self)
        else:
            self.tile.mmio_write(self, self._store_windows[addr], addr, 4, value)

    # -- reset --------------------------------------------------------------------------------

    def leave_reset(self, pc: int) -> None:
        """Leave soft reset: GPRs zero, ``pc`` the reset PC (tt-isa-documentation)."""
        self.hart.x[:] = 0
        self.hart.pc = pc & 0xFFFFFFFF
        if self.state == PARKED:
            self.watchers.remove(self)
        self.state = RUNNING
        self.wait = None
        self._forget_polls()

    def enter_reset(self) -> None:
        if self.state == PARKED:
            self.watchers.remove(self)
        self.state = RESET
        self.wait = None
        self.hart.request_stop()

    # -- polling and stalls ------------------------------------------------------------------

    def _forget_polls(self) -> None:
        self._polls.clear()
        self._reads.clear()
        self.hart.load_records[0, 0] = 0
        self._io[IO_ROOM] = _READ_LOG

    def _record(self, pc: int, value: int, writes: int, k: int, room: int) -> None:
        """Keep the read at ``pc`` in the compiled path's load records too (its next load
        there comes back here when it repeats this one: the loop may be idle); ``k``: the
        row of ``pc``, or 0; ``room``: ``io[IO_ROOM]`` after it."""
        recs = self.hart.load_records
        if not k:
            k = int(recs[0, 0]) + 1
            if k >= recs.shape[0]:
                return  # full: the compiled path sends a load at pc here
            recs[0, 0] = k
            recs[0, k] = pc
        row = recs[k]
        row[:3] = (pc, value, writes)
        row[3:35] = self.hart.x
        row[RECORD_ROOM] = room  # (the read log's length after it, as room)

    #: a load the compiled path logged is kept as its address in the read log only: its
    #: value, count, registers and place in the log are in its row of the load records (False:
    #: a poll record each, as for a read through the window; tests compare)
    load_positions = True

    def _loads_seen(self, hart: Any, rows: np.ndarray) -> None:
        """Reads the compiled path made itself (from load latches): what :meth:`saw_read`
        does for each of them, none of which parks (it checked, and kept its load records
        as :meth:`_record` would; ``io[IO_ROOM]`` kept the read log from filling). The
        last load at each pc stays in its row of the load records."""
        if self.load_positions:
            self._reads.extend(rows[:, 1].tolist())
            return
        windows = self.tile.load_windows
        reads, polls = self._reads, self._polls
        writes = int(self._io[IO_WRITES])
        for pc, addr, value, made in rows[:, :4].tolist():  # (made: latch stores, pushes)
            reads.append((addr, 4, windows[addr]))
            polls[pc] = (None, value, len(reads), writes + made)

    def _latch_load(self, hart: Any, addr: int, value: int) -> None:
        """What :meth:`.Tile.mmio_read` does after the window's read of load latch ``addr``
        (which only returns ``value``)."""
        self.saw_read(self.tile.load_windows[addr], addr, 4, value)

    @property
    def mmio_writes(self) -> int:
        """Writes through windows this core made (latch stores apart: :attr:`.Hart.latched`)."""
        return int(self._io[IO_WRITES])

    def saw_read(self, w: Window, addr: int, size: int, value: int) -> None:
        if addr not in self.tile.loads_noted:
            self.tile.note_load(w, addr, size)
        if addr not in self.fresh_noted:
            self.note_fresh(w, addr, size)
        if w.volatile:
            self._forget_polls()
            return
        if len(self._reads) >= _READ_LOG:
            self._forget_polls()
        hart = self.hart
        pc = hart.pc
        regs = hart.x.tolist()
        rec = self._polls.get(pc)
        recs = hart.load_records
        pcs = recs[0].tolist()  # pc's row of the load records, or 0 (row 0 lists their pcs)
        pcs = pcs[1:pcs[0] + 1]
        k = pcs.index(pc) + 1 if pc in pcs else 0
        self._reads.append((addr, size, w))
        io = self._io
        room = _READ_LOG - len(self._reads)
        io[IO_ROOM] = room
        writes = int(io[IO_WRITES] + io[IO_LATCHED])  # (a latch store is a window write too)
        same = False
        row: list[int] = []
        if k:  # the last load at pc: its row's, when later than its poll record's
            row = recs[k, :RECORD_ROOM + 1].tolist()
            at = _READ_LOG - row[RECORD_ROOM]  # (the read log's length after it)
            if rec is None or at > rec[2]:
                rec = (None, row[1], at, row[2])
        if rec is not None:  # (no registers in the record: those of the row)
            start = rec[2]
            same = rec[1] == value and rec[3] == writes and (rec[0] or row[3:35]) == regs
        if same:
            windows = self.tile.load_windows
            read = [(r, 4, windows[r]) if r.__class__ is int else r for r in self._reads[start:]]
            watch = sorted({(a, s) for a, s, _ in read})
            if any(self._latched(a, s) for a, s in watch):
                self.tile.drop_latches()  # its wake-up needs every store to that register
            self.park(Wait(partial(_polling, self.tile, watch, value), watch,
                           coprocessor=any(win.observes_coprocessor for _, _, win in read)))
            self._forget_polls()
            hart.request_stop()
            return
        self._polls[pc] = (regs, value, len(self._reads), writes)
        self._record(pc, value, writes, k, room)

    def _latched(self, addr: int, size: int) -> bool:
        """Whether ``[addr, addr + size)`` overlaps a latch register."""
        ranges = self.tile.latch_ranges
        span = self._latch_span
        if span[0] is not ranges or span[1] != len(ranges):  # (the span of the ranges)
            span = self._latch_span = (ranges, len(ranges), min((b for b, _, _ in ranges),
                                       default=0), max((b + n for b, n, _ in ranges), default=0))
        if addr >= span[3] or addr + size <= span[2]:
            return False
        for b, n, _ in ranges:
            if addr < b + n and b < addr + size:
                return True
        return False

    def saw_write(self) -> None:
        self._io[IO_WRITES] += 1

    def park(self, wait: Wait) -> None:
        """Wait for a write to ``wait.watch`` (or the coprocessor)."""
        if self.state == PARKED:
            self.watchers.remove(self)
        self.wait = wait
        self.state = PARKED
        self.watchers.add(self)

    def stall(self, s: Stall) -> None:
        if self.state == PARKED:
            self.watchers.remove(self)
        self.wait = Wait(s.reason, ready=s.ready)
        self.state = STALLED
        self.hart.request_stop()

    def wake(self) -> None:
        state = self.state
        if state == PARKED:
            self.watchers.remove(self)
        if state == PARKED or state == STALLED:
            self.state = RUNNING
            self.wait = None

    def watches(self, addr: int, size: int) -> bool:
        if self.wait is None:
            return False
        end = addr + size
        for a, s in self.wait.watch:
            if a < end and addr < a + s:
                return True
        return False

    # -- running ------------------------------------------------------------------------------

    def run(self, steps: int) -> int:
        """Execute up to ``steps`` instructions; the number retired."""
        hart = self.hart
        before = hart.instret
        if self._fresh:
            self.tile.refresh_semaphores()  # (the coprocessor may have moved them)
        try:
            why = hart.run(steps)
        except Stall:
            why = None  # the access did not happen; the pc is still at it
        except MemoryAccessError as e:  # no window there, or an access across windows
            raise TileError(f"{self.where()}: {e.access} of {e.size} byte(s) at "
                            f"{e.address:#010x}: {e.detail}") from None
        except RiscvError as e:  # an instruction the hart cannot execute
            sym = self.symbol()
            raise TileError(e.message.expandtabs(1) + (f" <{sym}>" if sym else "")) from None
        if why in (StopReason.EBREAK, StopReason.ECALL, StopReason.WFI):
            if self.state == PARKED:
                self.watchers.remove(self)
            self.state = HALTED
            self.wait = Wait(f"stopped at {why.value} (a debug pause on hardware)")
        done = hart.instret - before
        self.instructions += done
        return done

    def trace(self, fn: Any) -> None:
        """Call ``fn(core, pc, symbol, text)`` before each instruction this core executes."""
        def hook(hart: Any, address: int, size: int, info: Any) -> None:
            fn(self.name, address, self.symbol(address), self.instruction_text(address))
        self.hart.hook_add("insn", hook)

    # -- reports ------------------------------------------------------------------------------

    def symbol(self, pc: int | None = None) -> str | None:
        syms = self.tile.symbols.get(self.name)
        pc = self.hart.pc if pc is None else pc
        return syms.lookup(pc) if syms else None

    def where(self) -> str:
        pc = self.hart.pc
        sym = self.symbol(pc)
        at = f"pc {pc:#x}" + (f" <{sym}>" if sym else "")
        return f"{self.name} {at}: {self.instruction_text(pc)}"

    def instruction_text(self, pc: int) -> str:
        """objdump's text of the instruction at ``pc``: branch targets named by the firmware's
        symbols, a ``.ttinsn`` as the Tensix instruction it pushes."""
        try:
            word = self.space.read(pc, 4)
        except Exception:  # noqa: BLE001 - an unfetchable pc is named, not fatal
            return "(no instruction there)"
        syms = self.tile.symbols.get(self.name)
        return decode(word, pc, syms.lookup if syms else None, _tensix_text).text.expandtabs(1)

    def report(self) -> dict[str, Any]:
        pc = self.hart.pc
        out: dict[str, Any] = {"instructions": self.instructions, "pc": pc,
                               "symbol": self.symbol(pc), "state": self.state}
        if self.wait is not None:
            out["waiting_for"] = self.wait.reason
        return out


def _tensix_text(word: int) -> tuple[str, str] | None:
    try:
        ins = decode_word(word, what="")
    except DecodeError:
        return None
    return ins.mnemonic, ins.op_str


__all__ = ["HALTED", "PARKED", "RESET", "RUNNING", "STALLED", "Core", "Wait", "Watchers"]
