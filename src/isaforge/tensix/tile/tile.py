"""The Blackhole Tensix tile: five RISC-V cores, L1, the MMIO windows and the coprocessor.

:class:`Tile` builds everything from the memory map (:mod:`.memmap`): one shared L1, each
core's local data memory, and per core an address space in which L1 and local memory are RAM
and every unit of the hardware is a :class:`~.mmio.Window`. The mailbox area of L1 is also a
window (onto the same bytes) so that polling it is seen. The coprocessor is the package's
:class:`~isaforge.tensix.Coprocessor`; its Scalar Unit reaches L1 and the MMIO registers
through the tile (:class:`_CoprocessorMemory`).

The cores and the three Tensix threads advance under :class:`~.scheduler.Scheduler`; the host
side (loading firmware, mailboxes, resets, go messages) is :class:`~.host.Host`.

Usage::

    tile = Tile()
    host = Host(tile)
    host.load_firmware(load_firmware_dir("fw/"))
    host.release("brisc")
    tile.run(until=lambda: host.go_signal() == RUN_MSG_DONE)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import Coprocessor
from ..machine.mop import OP_MOP, OP_MOP_CFG
from .config_regs import ConfigWindow
from .core import Core, Watchers
from .debug_regs import DebugRegs
from .devmsgs import DevMsgs, dev_msgs
from .dst_window import DstWindow
from .errors import NocError, TileError, UnmappedAccess
from .gprs import GprWindow
from .instr_push import InstructionPush
from .l1 import L1, L1Window
from .loader import Symbols
from .mailboxes import Mailboxes, MailboxWindow
from .memmap import CORE_NAMES, CoreInfo, MemoryMap, memory_map
from .mmio import Stall, Unmodelled, Window
from .mop_cfg import MopConfig
from .noc import Noc, NocFault, TileL1
from .noc_regs import NocRegs
from .pc_buf import N_SEMAPHORES, PCBufs, PCBufWindow
from .scheduler import RunResult, Scheduler
from .streams import StreamRegs
from .tdma_regs import TdmaRegs

#: registers the cores' compiled paths read themselves at most (each one a row the kernel
#: scans at an access outside RAM)
MAX_LOAD_LATCHES = 24


class Tile:
    """One Blackhole Tensix tile.

    ``noc_xy`` is the tile's translated (virtual) NOC coordinate, what ``NOC_ID_LOGICAL``
    reads; ``quantum`` is how many instructions a running core executes before the scheduler
    moves to the next one (results do not depend on it, only speed does).
    """

    #: the cores' compiled paths store the NOC command registers and read the registers
    #: whose reads only return a word themselves (False: every such access goes through its
    #: window; set it on a tile and call :meth:`remap_latches`)
    latches = True
    #: with ``latches``: a core's compiled path also makes the stores its windows say may be
    #: noted or deferred (:meth:`.mmio.Window.store_latch`: stream registers, Tensix
    #: configuration, a TRISC's semaphores), and the core hears of them when it returns (False:
    #: they go through their window; set it on a tile and call :meth:`remap_latches`)
    store_logs = True

    def __init__(self, mm: MemoryMap | None = None, noc_xy: tuple[int, int] = (1, 2),
                 quantum: int = 2000, ub: str = "stop", noc: Noc | None = None,
                 msgs: DevMsgs | None = None) -> None:
        self.mm = mm = mm or memory_map()
        self.msgs: DevMsgs = msgs or dev_msgs()
        self.noc_virtual_xy = noc_xy
        #: the :class:`~.grid.Grid` holding this tile (None alone) and the tile's index in it
        self.grid: Any = None
        self.grid_index = 0
        self.l1 = L1(mm.l1_size)
        mbase, msize = mm.mailbox
        #: L1 as the cores map it: RAM below and above the mailbox area (one view each)
        self.l1_ram = [(0, self.l1.data[:mbase]), (mbase + msize, self.l1.data[mbase + msize:])]
        self.cp = Coprocessor(ub=ub, memory=_CoprocessorMemory(self))
        self.pcbufs = PCBufs()
        self.mailboxes = Mailboxes()
        self.pcbuf_override = 0
        infos = mm.cores()
        #: RISCV_DEBUG_REG_SOFT_RESET_0: every core held in reset at power-on
        self.soft_reset = sum(i.reset_bit for i in infos.values())
        self.symbols: dict[str, Symbols] = {}
        self.windows = self._build_windows()
        #: the parked cores and what they watch (kept by the cores, read by the scheduler)
        self.watchers = Watchers()
        self.cores = {name: Core(self, infos[name]) for name in CORE_NAMES}
        self.scheduler = Scheduler(self, quantum)
        #: the NOC this tile's L1 is attached to (its own unless a grid shares one)
        self.noc = noc if noc is not None else Noc()
        self.noc_endpoint = TileL1(self)
        self.noc.attach(noc_xy, self.noc_endpoint)
        #: the coprocessor's identity in MMIO accesses it makes (STOREREG, LOADREG)
        self._tensix = {t: CoreInfo(name=f"tensix thread {t}", index=-1, fw_base=0, fw_size=0,
                                    local_size=0, local_init=0, reset_bit=0, reset_pc_reg=None,
                                    reset_pc_override_reg=None, reset_pc_override_bit=0,
                                    thread=None) for t in range(3)}

    # -- construction -------------------------------------------------------------------------

    def _build_windows(self) -> list[Window]:
        mm = self.mm
        t = mm.tensix
        mbase, msize = mm.mailbox
        stride = t("INSTRN_BUF_STRIDE")
        sync_w, mop_w = mm.llk("PC_BUF_TENSIX_SYNC_WORD"), mm.llk("PC_BUF_MOP_SYNC_WORD")
        sem_w = mm.llk("PC_BUF_SEMAPHORE_BASE_WORD")
        pc_bases = (t("PC_BUF_BASE"), t("PC1_BUF_BASE"), t("PC2_BUF_BASE"))
        pc_size = pc_bases[1] - pc_bases[0]
        mb0 = t("TENSIX_MAILBOX0_BASE")
        mb_size = t("TENSIX_MAILBOX1_BASE") - mb0
        cfg_base = t("TENSIX_CFG_BASE")
        #: the NOCs' and the streams' registers: latches of every core's compiled path
        nw = NocRegs.WORDS
        #: then the Tensix semaphores' values as of the last refresh_semaphores (a TRISC's
        #: fresh latches: see :meth:`.pc_buf.PCBufWindow.fresh_word`)
        self.sem_mirror = 2 * nw + StreamRegs.words(mm)
        self.latch_words = np.zeros(self.sem_mirror + N_SEMAPHORES, np.uint32)
        windows: list[Window] = [
            L1Window(self, self.l1, mbase, msize, "mailboxes (L1)"),
            TdmaRegs(self, mm),
            DebugRegs(self, mm),
            *(NocRegs(self, mm, k, self.latch_words, k * nw) for k in range(2)),
            StreamRegs(self, mm, self.latch_words, 2 * nw),
            MopConfig(self, t("TENSIX_MOP_CFG_BASE"), mm.llk("MOP_CFG_WORDS")),
            DstWindow(self, mm.llk("RISCV_DEST_START_ADDR"), 0x8000),
            GprWindow(self, t("REGFILE_BASE"), 0x1000),
            *(InstructionPush(self, t("INSTRN_BUF_BASE") + k * stride, stride, k)
              for k in range(3)),
            *(PCBufWindow(self, b, pc_size, k, sync_w, mop_w, sem_w)
              for k, b in enumerate(pc_bases)),
            *(MailboxWindow(self, mb0 + k * mb_size, mb_size, k) for k in range(4)),
            ConfigWindow(self, cfg_base, 0x10000, mm.cfg("CFG_STATE_SIZE") * 4),
        ]
        self.debug = next(w for w in windows if isinstance(w, DebugRegs))
        #: store latches (the NOC command buffers) and load latches (registers a core read
        #: through the exact path whose reads only return a word; added as they are read)
        self.latch_ranges = [r for w in windows if isinstance(w, NocRegs)
                             for r in w.latch_ranges()]
        self.load_ranges: list[tuple[int, int, int]] = []
        #: the window of each load latch; addresses looked at for load latches
        self.load_windows: dict[int, Window] = {}
        self.loads_noted: set[int] = set()
        self.streams = next(w for w in windows if isinstance(w, StreamRegs))
        self.mailbox_window = windows[0]
        return windows

    def drop_latches(self) -> None:
        """Every core's stores to the NOC command registers go through the window again (a
        core waits for one of them to change: each store must wake it)."""
        self.latch_ranges = []
        self.remap_latches()

    def note_load(self, window: Window, addr: int, size: int) -> None:
        """A core read ``addr`` through ``window`` (the first time): make it a load latch of
        every core when all the read does is return a word of :attr:`latch_words`."""
        self.loads_noted.add(addr)
        if not self.latches:
            return
        find = getattr(window, "load_word", None)
        index = find(addr, size) if find is not None else None
        if index is None or len(self.load_ranges) >= MAX_LOAD_LATCHES:
            return
        self.load_ranges.append((addr, 4, index))
        self.load_windows[addr] = window
        self.remap_latches()

    def refresh_semaphores(self) -> None:
        """Copy the Tensix semaphores' values into :attr:`latch_words` (before a core's run,
        and after each semaphore store through the PC buffer window)."""
        self.latch_words[self.sem_mirror:self.sem_mirror + N_SEMAPHORES] = \
            self.cp.semaphores.value

    def remap_latches(self) -> None:
        """Give every core's compiled path the latches as they are now."""
        for core in self.cores.values():
            core.map_latches()

    def window_at(self, addr: int) -> Window | None:
        for w in self.windows:
            if w.contains(addr):
                return w
        return None

    # -- what the windows ask of the tile ----------------------------------------------------

    def tensix_push(self, thread: int, word: int, after_mop: bool) -> None:
        """Push a Tensix word to thread ``thread`` (a TRISC's push enters before the MOP
        expander, BRISC's after it: BRISC pushing a MOP or MOP_CFG word is not modelled)."""
        if after_mop and (word >> 24) in (OP_MOP, OP_MOP_CFG):
            raise Unmodelled("BRISC pushing a MOP/MOP_CFG word (its pushes bypass the MOP "
                             "expander; this model has one queue per thread)")
        self.cp.push(thread, [word])

    def tensix_push_many(self, thread: int, words: list[int]) -> None:
        """:meth:`tensix_push` of each of ``words`` before the MOP expander (a TRISC's)."""
        self.cp.push(thread, words)

    def tensix_idle(self, thread: int) -> bool:
        """No instruction of the thread is queued or waiting (an issued one has completed)."""
        return self.cp.threads[thread].finished

    def tensix_mop_queued(self, thread: int) -> bool:
        """A MOP waits before the thread's MOP expander (it expands one when it takes it)."""
        th = self.cp.threads[thread]
        return any(w >> 24 == OP_MOP for w in th.program[th.pc:])

    def tensix_fifo_empty(self, thread: int) -> bool:
        return self.cp.threads[thread].finished

    def wall_clock(self, core: CoreInfo | None = None) -> int:
        """The tile's cycle counter as seen now (by ``core``, partway through its quantum)."""
        return self.scheduler.now(self.cores[core.name] if core and core.name in self.cores
                                  else None)

    def noc_physical_xy(self, noc: int) -> tuple[int, int]:
        """This tile's physical coordinate on NOC ``noc`` (NOC 1 counts from the far
        corner); without harvesting, the translated coordinate of a Tensix tile is its
        physical NOC 0 one."""
        x, y = self.noc_virtual_xy
        if noc == 0:
            return x, y
        c = self.msgs.const
        return c("noc_size_x") - 1 - x, c("noc_size_y") - 1 - y

    def set_soft_reset(self, value: int) -> None:
        """Write ``RISCV_DEBUG_REG_SOFT_RESET_0``: cores whose bit clears leave reset at their
        reset PC; cores whose bit sets stop."""
        old, self.soft_reset = self.soft_reset, value & 0xFFFFFFFF
        for core in self.cores.values():
            bit = core.info.reset_bit
            if old & bit and not value & bit:
                core.leave_reset(self._reset_pc(core.info))
            elif value & bit and not old & bit:
                core.enter_reset()

    def _reset_pc(self, info: CoreInfo) -> int:
        """BRISC: ``MEM_BOOT_CODE_BASE``; the others: their reset-PC register, when its
        override bit is set (the fixed default PCs are not modelled)."""
        if info.reset_pc_reg is None or info.reset_pc_override_reg is None:
            return self.mm.mem("BOOT_CODE_BASE")
        if not self.debug.value_at(info.reset_pc_override_reg) & info.reset_pc_override_bit:
            raise TileError(f"{info.name} leaves reset without its reset-PC override set; "
                            f"the default reset PC is not modelled")
        return self.debug.value_at(info.reset_pc_reg)

    # -- MMIO access from a core (called by the core's address space) ----------------------

    def mmio_read(self, core: Core, window: Window, addr: int, size: int) -> int:
        try:
            value = window.read(core.info, addr, size)
        except Unmodelled as e:
            raise self.unmapped(core, addr, "read", e.what) from None
        except Stall as s:
            core.stall(s)
            raise
        core.saw_read(window, addr, size, value)
        return value

    def mmio_write(self, core: Core, window: Window, addr: int, size: int, value: int) -> None:
        try:
            window.write(core.info, addr, size, value)
        except Unmodelled as e:
            raise self.unmapped(core, addr, "write", e.what) from None
        except NocFault as e:
            raise NocError(f"{core.where()}: NOC transaction: {e}") from None
        except Stall as s:
            core.stall(s)
            raise
        core.saw_write()
        self.scheduler.wrote(addr, size, by=core)
        if addr not in core.stores_noted:
            core.note_store(window, addr, size)

    def unmapped(self, core: Core, addr: int, kind: str, what: str) -> UnmappedAccess:
        return UnmappedAccess(f"{core.where()}: {kind} of {addr:#010x}: {what}")

    def describe(self, addr: int) -> str:
        """A name for an address: the mailbox field it is in, or the window."""
        mbase, msize = self.mm.mailbox
        if mbase <= addr < mbase + msize:
            name = self.msgs.name_of(addr - mbase)
            sync, _ = self.msgs.locate("subordinate_sync")
            if name.startswith("subordinate_sync.map["):  # the bytes dm1, trisc0, ...
                byte = addr - mbase - sync
                for f in self.msgs.structs["subordinate_map_t"][1].values():
                    if f.size == 1 and f.offset == byte:
                        name = f"subordinate_sync.{f.name}"
            return f"mailboxes.{name}"
        w = self.window_at(addr)
        return f"{w.name} +{addr - w.base:#x}" if w else f"{addr:#x}"

    # -- running -----------------------------------------------------------------------------

    def run(self, max_steps: int | None = 10_000_000,
            until: Callable[[], bool] | None = None) -> RunResult:
        """Advance every core and the coprocessor until ``until()`` holds (checked between
        scheduler rounds) or, without ``until``, until nothing can move. Raises
        :class:`~.errors.TileDeadlock` when nothing can move and ``until`` does not hold, and
        :class:`~.errors.TileStepLimit` beyond ``max_steps`` RISC-V instructions. A tile of
        a :class:`~.grid.Grid` runs the whole grid (its NOC transactions need the others)."""
        if self.grid is not None:
            return self.grid.run(max_steps, until)
        return self.scheduler.run(max_steps, until)

    def trace(self, cores: list[str], fn: Callable[[str, int, str | None, str], None]) -> None:
        """Call ``fn(core, pc, symbol, text)`` for every instruction the named cores execute;
        ``"tensix"`` names the coprocessor (``core`` is then ``tensix<thread>`` and ``pc`` the
        index of the instruction's word in the thread's stream)."""
        for name in cores:
            if name == "tensix":
                self.cp.hook_add("insn", lambda cp, address, size, ev: fn(
                    f"tensix{ev.thread}", address, None, ev.insn.text.expandtabs(1)))
            else:
                self.cores[name].trace(fn)

    def core_report(self) -> dict[str, dict[str, Any]]:
        return {name: c.report() for name, c in self.cores.items()}


class _CoprocessorMemory:
    """L1 and the MMIO registers as the coprocessor's Scalar Unit sees them."""

    def __init__(self, tile: Tile) -> None:
        self.tile = tile
        self.l1_size = tile.mm.l1_size
        #: the unpackers' and packers' view (machine.l1.L1Access): the tile's L1 bytes
        self.l1 = tile.l1.data
        #: address -> (the tile's window list and its length then, the window holding it)
        self._windows: dict[int, tuple[list[Window], int, Window]] = {}

    def read(self, addr: int, size: int) -> int:
        return self.tile.l1.read_int(addr, size)

    def l1_written(self, addr: int, size: int) -> None:
        """A packer wrote ``[addr, addr + size)``: wake the cores watching it."""
        self.tile.scheduler.wrote(addr, size, by=None)

    def write(self, addr: int, size: int, value: int) -> None:
        self.tile.l1.write_int(addr, size, value)
        self.tile.scheduler.wrote(addr, size, by=None)

    #: remember the window of each address accessed (False: look it up every time; tests
    #: compare)
    cache_windows = True

    def _window(self, thread: int, addr: int) -> Window:
        windows = self.tile.windows
        if self.cache_windows:
            hit = self._windows.get(addr)
            if hit is not None and hit[0] is windows and hit[1] == len(windows):
                return hit[2]
        w = self.tile.window_at(addr)
        if w is None:
            raise TileError(f"Tensix thread {thread}: MMIO access to {addr:#010x}: no window "
                            f"there")
        if self.cache_windows:
            if len(self._windows) >= 256:
                self._windows.clear()
            self._windows[addr] = (windows, len(windows), w)
        return w

    def mmio_read(self, thread: int, addr: int) -> int:
        w = self._window(thread, addr)
        try:
            return w.read(self.tile._tensix[thread], addr, 4)
        except (Unmodelled, Stall) as e:
            raise TileError(f"Tensix thread {thread}: LOADREG from {addr:#010x}: {e}") from None

    def mmio_write(self, thread: int, addr: int, value: int) -> None:
        w = self._window(thread, addr)
        try:
            w.write(self.tile._tensix[thread], addr, 4, value)
        except (Unmodelled, Stall) as e:
            raise TileError(f"Tensix thread {thread}: STOREREG to {addr:#010x}: {e}") from None
        self.tile.scheduler.wrote(addr, 4, by=None)

    def mmio_write_quiet(self, thread: int, addr: int) -> bool:
        """Whether a STOREREG of thread ``thread`` to ``addr`` only keeps the value (its
        window says so: :meth:`~.mmio.Window.store_latch`'s "note"), touching nothing of the
        coprocessor's state (:class:`~isaforge.tensix.machine.sfp_defer.Interference`)."""
        try:
            w = self._window(thread, addr)
        except TileError:
            return False  # (STOREREG says so when it runs)
        got = w.store_latch(self.tile._tensix[thread], addr, 4)
        return got is not None and got[0] == "note"


__all__ = ["Tile"]
