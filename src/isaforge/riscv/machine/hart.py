"""One RV32 hart: registers, pc, CSRs, the exact step, and the run loop.

Two paths execute instructions, with identical effects:

* :meth:`Hart.step` is the exact reference: decode through :mod:`..isa`, execute with
  :mod:`.semantics`, every memory access through :class:`.AddressSpace` (RAM, MMIO
  callbacks, hooks). Traced and hooked runs use it.
* :meth:`Hart.run` uses the compiled interpreter (:mod:`.fast`) while it can: straight RAM
  code runs there; a load or store through an MMIO window comes back here and is made as
  :meth:`step` makes it (without decoding again), and an instruction it cannot finish (a CSR,
  a ``.ttinsn``, ``ecall``/``ebreak``/``wfi``, ``lr``/``sc``, an AMO outside RAM, anything
  misaligned or undecodable) comes back here and goes through :meth:`step`.

Stops: :meth:`run` returns a :class:`StopReason`. ``ecall`` and ``ebreak`` stop *at* the
instruction (it does not retire; as on the Blackhole cores, which pause there), ``wfi``
retires and stops after it; an MMIO callback (or hook) may call :meth:`Hart.request_stop`
to end the run after the current instruction. Errors raise :class:`RiscvError` subclasses
naming the hart, pc, instruction text and address.

Guarantees to MMIO callbacks, on both paths: while one runs, ``pc`` is the accessing
instruction and the registers hold the effects of everything before it; an exception it
raises propagates out of :meth:`run`/:meth:`step` with that instruction not executed (pc on
it, nothing written), so a caller can model a stalled access by raising, and retry it by
running again.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

import numpy as np

from ...core.errors import EmulationError
from ...core.hooks import Hooks
from ..disasm import decode
from ..isa import INSTRN_BUF_BASE, REG_NUMBERS, rv32_isa
from . import fast
from . import semantics as sem
from .csrs import CONSTANT, COUNTERS, STORAGE
from .memory import AddressSpace, MemoryAccessError, Ram

M32 = 0xFFFFFFFF


class StopReason(enum.StrEnum):
    """Why :meth:`Hart.run` returned."""

    LIMIT = "limit"  # max_steps instructions ran
    EBREAK = "ebreak"  # pc is at the ebreak
    ECALL = "ecall"  # pc is at the ecall
    WFI = "wfi"  # pc is after the wfi
    REQUESTED = "requested"  # request_stop() was called (by an MMIO callback or hook)


class RiscvError(EmulationError):
    """Something the hart cannot execute; the message names hart, pc and instruction."""


class IllegalInstruction(RiscvError):
    """A word that is no instruction here, an unknown CSR, or an unmodelled instruction."""


CsrRead = Callable[["Hart"], int]
CsrWrite = Callable[["Hart", int], None]
CustomHandler = Callable[["Hart", int], None]

_Exec = Callable[["Hart", dict[str, int], int], "StopReason | None"]


#: instructions a process runs on the exact path before "auto" harts switch to the compiled
#: one: a firmware boot (~10k instructions) finishes before numba would have loaded
WARMUP_STEPS = 50_000
_warmup = [0]  # exact-path instructions run so far by "auto" harts, process-wide
#: rows of :attr:`Hart.load_records`
LOAD_RECORDS = fast.RECORD_ROWS - 1
# the compiled path's statuses and io record fields, as globals of this module
_LIMIT, _DECODE, _MMIO = fast.LIMIT, fast.DECODE, fast.MMIO
_IO_ADDR, _IO_END = fast.IO_ADDR, fast.IO_VALUE + 1
_IO_STORE, _IO_LOAD_LATCHED, _IO_LOAD_SIGNED = fast.IO_STORE, fast.IO_LOAD_LATCHED, \
    fast.IO_LOAD_SIGNED


class Hart:
    """An RV32IM+Zicsr+Zaamo+Zba+Zbb+xttzbkb+xtttensixbh hart over an :class:`AddressSpace`.

    State: ``x`` (numpy uint32[32], ``x[0]`` always reads 0), ``pc``, ``instret`` (retired
    instructions), CSRs (:meth:`csr_read`/:meth:`csr_write`, custom behaviour through
    :meth:`csr_hook`). ``on_custom(hart, tensix_word)`` receives each ``.ttinsn``; without it
    a ``.ttinsn`` is what the hardware makes of it, a 32-bit store of the Tensix word to
    0xFFE40000. Hooks (Unicorn-style, :mod:`isaforge.core.hooks`): ``insn``
    ``callback(hart, pc, 4, word)`` before each instruction, ``mem_read`` / ``mem_write``
    ``callback(hart, address, size, value)`` at each data access (with any hook registered
    the run takes the exact path).
    """

    HOOK_KINDS = ("insn", "mem_read", "mem_write")

    def __init__(self, name: str, space: AddressSpace, pc: int = 0) -> None:
        self.name = name
        self.space = space
        self.pc = pc & M32
        self.x = np.zeros(32, np.uint32)
        self.instret = 0
        self.on_custom: CustomHandler | None = None
        #: the compiled path may hand ``.ttinsn`` words to ``on_custom`` when it returns
        #: rather than one by one (its owner says nothing can tell, see :func:`.fast.run`)
        self.batch_custom = False
        #: with ``batch_custom``: an MMIO address where a ``sw`` means a ``.ttinsn`` of the
        #: stored word (the compiled path may keep it as one), or None
        self.custom_store: int | None = None
        #: with ``batch_custom``: ``on_custom_many(hart, words)`` takes a run's kept words at
        #: once, as ``on_custom`` would one by one (None: ``on_custom`` hears each)
        self.on_custom_many: Callable[[Hart, list[int]], None] | None = None
        #: ``io``: the compiled path's record: latch stores made, the MMIO access it left
        #: (fast.IO_*). ``load_records``: the last load-latch load seen at each of some pcs,
        #: kept by the owner of ``on_loads`` and by the compiled path (which adds and updates
        #: the rows of the loads it logs): row 0 column 0 the number of rows and column k the
        #: pc of row k (so that a search reads one row), then rows of (pc, value, count of
        #: writes then (``io[IO_WRITES]`` + :attr:`latched` + words kept and stores deferred,
        #: not yet handed over), x0..x31 before the load, then ``io[IO_ROOM]`` after a load
        #: the compiled path logged (:data:`.fast.RECORD_ROOM`; the owner may keep its own
        #: there); the columns after them are unused).
        #: A load at a pc with a row of the same value, count and registers (a loop that may
        #: be idle), at a pc with no row once the table is full, or with no ``io[IO_ROOM]``
        #: left, goes through its window. Change both in place (they are views of the
        #: compiled path's control buffer).
        self._control, self.io, self.load_records = fast.control_buffer()
        self.io[fast.IO_ROOM] = 1 << 62
        #: ``on_loads(hart, rows)``: the loads from load latches the compiled path made
        #: itself, in order, when it returns (an int64 array, a row of :data:`.fast.LOG_WIDTH`
        #: per load: pc, address, value, stores made then -- :attr:`latched`, the words kept
        #: and the stores deferred in this run, handed over after the rows --, x0..x31 before
        #: the load; a view of the log, valid during the call); None: such loads go through
        #: their window
        self.on_loads: Callable[[Hart, np.ndarray], None] | None = None
        #: ``on_store(hart, address, value, kind)``: a store to a note latch (made already)
        #: or to a deferred range (to be made now) the compiled path logged, in program order
        #: when it returns (kind: :data:`.memory.LATCH_NOTE` or :data:`.memory.LATCH_DEFER`);
        #: None: such stores go through their window
        self.on_store: Callable[[Hart, int, int, int], None] | None = None
        #: ``on_latch_load(hart, address, value)``: a load from a load latch the compiled path
        #: left to this hart (its records say the loop may be idle) is made with the latch's
        #: word, and the owner hears of it here instead of through the window's ``read``
        #: (None: the window reads it)
        self.on_latch_load: Callable[[Hart, int, int], None] | None = None
        self.hooks = Hooks(self.HOOK_KINDS, on_change=self._hooks_changed)
        self._hooked = False
        self._code: Ram | None = None  # the RAM window of the last fetch
        #: the compiled path: "auto" (once the process has run WARMUP_STEPS instructions
        #: exactly, so a short run never pays numba's start-up), True (always), False (never)
        self.fast: bool | str = "auto"
        self.csrs: dict[int, int] = dict(STORAGE)
        self._csr_hooks: dict[int, tuple[CsrRead | None, CsrWrite | None]] = {}
        self._counter_offset = {"cycle": 0, "instret": 0}
        self._reservation: int | None = None
        self._stop_requested = False
        self._decoded: dict[int, tuple[Any, dict[str, int], _Exec]] = {}
        #: the compiled path's prepared kernel call (see :func:`.fast.run`), or None
        self._fast_call: tuple | None = None

    # -- registers and memory, as Unicorn has them --------------------------------------------
    def reg_read(self, reg: int | str) -> int:
        """Register by number or name (``a0``, ``x10``, ``pc``)."""
        if reg == "pc":
            return self.pc
        return int(self.x[_reg_number(reg)])

    def reg_write(self, reg: int | str, value: int) -> None:
        if reg == "pc":
            self.pc = value & M32
            return
        n = _reg_number(reg)
        if n:
            self.x[n] = value & M32

    def mem_read(self, address: int, size: int) -> bytes:
        """``size`` bytes of RAM at ``address`` (an MMIO register: ``space.read``)."""
        return self.space.read_bytes(address, size)

    def mem_write(self, address: int, data: bytes) -> None:
        """Copy ``data`` into RAM at ``address``."""
        self.space.write_bytes(address, data)

    def hook_add(self, kind: str, callback: Callable[..., Any], begin: int | None = None,
                 end: int | None = None) -> int:
        return self.hooks.add(kind, callback, begin, end)

    def hook_del(self, handle: int) -> None:
        self.hooks.delete(handle)

    def _hooks_changed(self) -> None:
        self._hooked = self.hooks.any()

    @property
    def latched(self) -> int:
        """Stores to latch registers (:meth:`.AddressSpace.map_latches`) the compiled path
        made itself, without calling their window's ``write``, so far."""
        return int(self.io[fast.IO_LATCHED])

    def request_stop(self) -> None:
        """End the current :meth:`run` after the instruction in progress."""
        self._stop_requested = True

    # -- CSRs ---------------------------------------------------------------------------------
    def csr_hook(self, number: int, read: CsrRead | None = None,
                 write: CsrWrite | None = None) -> None:
        """Give CSR ``number`` behaviour: ``read(hart) -> value``, ``write(hart, value)``
        (a missing one keeps plain storage in :attr:`csrs`). Makes unknown CSRs known."""
        self._csr_hooks[number] = (read, write)
        self.csrs.setdefault(number, 0)

    def csr_read(self, number: int) -> int:
        hook = self._csr_hooks.get(number)
        if hook is not None and hook[0] is not None:
            return int(hook[0](self)) & M32
        if number in CONSTANT:
            return CONSTANT[number]
        if number in COUNTERS:
            counter, half = COUNTERS[number]
            v = (self.instret + self._counter_offset[counter]) & ((1 << 64) - 1)
            return (v >> (32 * half)) & M32
        if number in self.csrs:
            return self.csrs[number]
        raise IllegalInstruction(self._where(self.pc) + f": CSR {number:#x} is not implemented")

    def csr_write(self, number: int, value: int) -> None:
        value &= M32
        hook = self._csr_hooks.get(number)
        if hook is not None and hook[1] is not None:
            hook[1](self, value)
            return
        if number in CONSTANT:
            return  # read-only: writes are ignored
        if number in COUNTERS:
            counter, half = COUNTERS[number]
            cur = (self.instret + self._counter_offset[counter]) & ((1 << 64) - 1)
            shift = 32 * half
            new = (cur & ~(M32 << shift)) | (value << shift)
            self._counter_offset[counter] = new - self.instret
            return
        if number in self.csrs:
            self.csrs[number] = value
            return
        raise IllegalInstruction(self._where(self.pc) + f": CSR {number:#x} is not implemented")

    # -- running ------------------------------------------------------------------------------
    def run(self, max_steps: int) -> StopReason:
        """Execute up to ``max_steps`` instructions; why it stopped."""
        self._stop_requested = False
        done = 0
        use_fast = self._use_fast()
        fast_run = fast.run
        while done < max_steps:
            # lr..sc runs exactly (its stores break the reservation); a hook added by a
            # callback during the run takes effect at once
            if use_fast and self._reservation is None and not self._hooked:
                status, n = fast_run(self, max_steps - done)
                done += n
                if status == _LIMIT or done >= max_steps:
                    break
                if status == _MMIO:
                    if not self._hooked:
                        self._access()  # what step() does for this load or store
                        done += 1
                        if self._stop_requested:
                            return StopReason.REQUESTED
                        continue
                elif status == _DECODE:
                    fast.predecode(self)
                    continue
            why = self.step()
            if why is StopReason.ECALL or why is StopReason.EBREAK:
                return why
            done += 1
            if why is not None:
                return why
            if self._stop_requested:
                return StopReason.REQUESTED
            if not use_fast and self.fast == "auto":
                _warmup[0] += 1
                if _warmup[0] >= WARMUP_STEPS:
                    use_fast = self._use_fast()
        return StopReason.LIMIT

    def _use_fast(self) -> bool:
        if self._hooked or not self.fast:
            return False
        if self.fast == "auto" and _warmup[0] < WARMUP_STEPS:
            return False
        return fast.available()

    def step(self) -> StopReason | None:
        """Execute one instruction exactly; a stop reason, or None."""
        pc = self.pc
        r = self._code  # self._fetch(pc) when pc is in the code window seen last
        if r is not None and r.base <= pc < r.end and not pc & 3:
            word = int(r.words[(pc - r.base) >> 2])
        else:
            word = self._fetch(pc)
        got = self._decoded.get(word)
        if got is None:
            got = self._decode(word, pc)
        _, vals, fn = got
        if self._hooked:
            self.hooks.fire("insn", self, pc, 4, word)
        try:
            why = fn(self, vals, pc)
        except MemoryAccessError as e:
            if e.hart is not None:
                raise
            raise MemoryAccessError(e.address, e.size, e.access, e.detail, self.name, pc,
                                    decode(word, pc).text) from None
        if why is StopReason.ECALL or why is StopReason.EBREAK:
            return why
        self.x[0] = 0
        self.instret += 1
        return why

    def _access(self) -> None:
        """The load or store through a window the compiled path stopped at (its ``io``
        record): the access, registers, pc and count exactly as :meth:`step` makes them."""
        pc = self.pc
        addr, size, kind, rd, value = self.io[_IO_ADDR:_IO_END].tolist()
        try:
            if kind == _IO_STORE:
                self.space.write(addr, size, value)
            else:
                if kind == _IO_LOAD_LATCHED and self.on_latch_load is not None:
                    v = value  # (all the window's read would do is return it)
                    self.on_latch_load(self, addr, v)
                else:
                    v = self.space.read(addr, size)
                if kind == _IO_LOAD_SIGNED and v >> (8 * size - 1):
                    v -= 1 << (8 * size)
                self.x[rd] = v & M32
        except MemoryAccessError as e:
            if e.hart is not None:
                raise
            raise MemoryAccessError(e.address, e.size, e.access, e.detail, self.name, pc,
                                    decode(self._fetch(pc), pc).text) from None
        self.pc = (pc + 4) & M32
        self.x[0] = 0
        self.instret += 1

    # -- the exact path -----------------------------------------------------------------------
    def _where(self, pc: int) -> str:
        try:
            text = decode(self._fetch(pc), pc).text
        except EmulationError:
            text = "?"
        return f"{self.name}: pc {pc:#x} ({text})"

    def _fetch(self, pc: int) -> int:
        if pc & 3:
            raise RiscvError(f"{self.name}: pc {pc:#x} is not 4-byte aligned (no C extension)")
        r = self._code
        if r is None or not r.base <= pc < r.end:
            r = self.space.ram_at(pc, 4)
            if r is None:
                raise MemoryAccessError(pc, 4, "fetch", f"{self.space.describe(pc)} (code runs "
                                        "from RAM only)", self.name, pc, "?")
            self._code = r
        return int(r.words[(pc - r.base) >> 2])

    def _decode(self, word: int, pc: int) -> tuple[Any, dict[str, int], _Exec]:
        ins = rv32_isa().match(word)
        if ins is None:
            raise IllegalInstruction(f"{self.name}: pc {pc:#x}: {word:#010x} is not an "
                                     "instruction of this hart")
        name = ins.name
        fn = _EXEC.get(name) or _EXEC.get(sem.amo_base(name)) or _EXEC[name.split(".")[0]]
        got = (ins, ins.field_values(word), fn)
        if len(self._decoded) < 1 << 16:
            self._decoded[word] = got
        return got

    def load(self, address: int, size: int) -> int:
        """A data read by this hart (alignment checked, hooks fired)."""
        address &= M32
        if address % size:
            raise MemoryAccessError(address, size, "read", "misaligned")
        v = self.space.read(address, size)
        if self._hooked:
            self.hooks.fire("mem_read", self, address, size, v)
        return v

    def store(self, address: int, size: int, value: int) -> None:
        """A data write by this hart (alignment checked, hooks fired)."""
        address &= M32
        value &= (1 << (8 * size)) - 1
        if address % size:
            raise MemoryAccessError(address, size, "write", "misaligned")
        if self._hooked:
            self.hooks.fire("mem_write", self, address, size, value)
        self.space.write(address, size, value)
        res = self._reservation
        if res is not None and address < res + 4 and res < address + size:
            self._reservation = None


def _reg_number(reg: int | str) -> int:
    if isinstance(reg, str):
        if reg not in REG_NUMBERS:
            raise ValueError(f"no register {reg!r}")
        return REG_NUMBERS[reg]
    if not 0 <= reg < 32:
        raise ValueError(f"no register x{reg}")
    return reg


# --------------------------------------------------------------------------------------------
# Executors: (hart, field values, pc) -> stop reason or None; each sets the next pc
# --------------------------------------------------------------------------------------------

_EXEC: dict[str, _Exec] = {}


def _binary(op: Callable[[int, int], int]) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        x = h.x
        x[v["RD"]] = op(int(x[v["RS1"]]), int(x[v["RS2"]]))
        h.pc = (pc + 4) & M32

    return run


def _immediate(op: Callable[[int, int], int], field: str) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        imm = v[field]
        if field == "IMM":
            imm = ((imm ^ 0x800) - 0x800) & M32
        h.x[v["RD"]] = op(int(h.x[v["RS1"]]), imm)
        h.pc = (pc + 4) & M32

    return run


def _unary(op: Callable[[int], int]) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        h.x[v["RD"]] = op(int(h.x[v["RS1"]]))
        h.pc = (pc + 4) & M32

    return run


def _imm12(v: dict[str, int]) -> int:
    return (v["IMM"] ^ 0x800) - 0x800


def _load(size: int, signed: bool) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        value = h.load(int(h.x[v["RS1"]]) + _imm12(v), size)
        if signed and value >> (8 * size - 1):
            value -= 1 << (8 * size)
        h.x[v["RD"]] = value & M32
        h.pc = (pc + 4) & M32

    return run


def _store(size: int) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        h.store(int(h.x[v["RS1"]]) + _imm12(v), size, int(h.x[v["RS2"]]))
        h.pc = (pc + 4) & M32

    return run


def _branch(taken: Callable[[int, int], bool]) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        if taken(int(h.x[v["RS1"]]), int(h.x[v["RS2"]])):
            h.pc = (pc + ((v["TARGET"] ^ 0x1000) - 0x1000)) & M32
        else:
            h.pc = (pc + 4) & M32

    return run


def _amo(op: Callable[[int, int], int]) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        addr = int(h.x[v["RS1"]])
        old = h.load(addr, 4)
        h.store(addr, 4, op(old, int(h.x[v["RS2"]])))
        h.x[v["RD"]] = old
        h.pc = (pc + 4) & M32

    return run


for _name, _op in sem.BINARY.items():
    _EXEC[_name] = _binary(_op)
for _name, _base in sem.IMMEDIATE.items():
    _EXEC[_name] = _immediate(sem.BINARY[_base], "IMM" if _name in (
        "addi", "slti", "sltiu", "xori", "ori", "andi") else "SHAMT")
for _name, _uop in sem.UNARY.items():
    _EXEC[_name] = _unary(_uop)
for _name, (_size, _signed) in sem.LOAD.items():
    _EXEC[_name] = _load(_size, _signed)
for _name, _size in sem.STORE.items():
    _EXEC[_name] = _store(_size)
for _name, _taken in sem.BRANCH.items():
    _EXEC[_name] = _branch(_taken)
for _name, _amo_op in sem.AMO.items():
    _EXEC[_name] = _amo(_amo_op)


def _lui(h: Hart, v: dict[str, int], pc: int) -> None:
    h.x[v["RD"]] = v["IMM"] << 12
    h.pc = (pc + 4) & M32


def _auipc(h: Hart, v: dict[str, int], pc: int) -> None:
    h.x[v["RD"]] = (pc + (v["IMM"] << 12)) & M32
    h.pc = (pc + 4) & M32


def _jal(h: Hart, v: dict[str, int], pc: int) -> None:
    h.x[v["RD"]] = (pc + 4) & M32
    h.pc = (pc + ((v["TARGET"] ^ 0x100000) - 0x100000)) & M32


def _jalr(h: Hart, v: dict[str, int], pc: int) -> None:
    target = (int(h.x[v["RS1"]]) + _imm12(v)) & M32 & ~1
    h.x[v["RD"]] = (pc + 4) & M32
    h.pc = target


def _fence(h: Hart, v: dict[str, int], pc: int) -> None:
    h.pc = (pc + 4) & M32  # one hart, accesses in program order: nothing to do


def _lr(h: Hart, v: dict[str, int], pc: int) -> None:
    addr = int(h.x[v["RS1"]])
    h.x[v["RD"]] = h.load(addr, 4)
    h._reservation = addr
    h.pc = (pc + 4) & M32


def _sc(h: Hart, v: dict[str, int], pc: int) -> None:
    addr = int(h.x[v["RS1"]])
    if h._reservation == addr:
        h.store(addr, 4, int(h.x[v["RS2"]]))
        h.x[v["RD"]] = 0
    else:
        if addr & 3:
            raise MemoryAccessError(addr, 4, "write", "misaligned")
        h.x[v["RD"]] = 1
    h._reservation = None
    h.pc = (pc + 4) & M32


def _csr(op: str, immediate: bool) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> None:
        num, rd = v["CSR"], v["RD"]
        src = v["ZIMM"] if immediate else int(h.x[v["RS1"]])
        writes = op == "w" or (v["ZIMM"] if immediate else v["RS1"]) != 0
        old = h.csr_read(num) if (op != "w" or rd != 0) else 0
        if writes:
            new = src if op == "w" else (old | src if op == "s" else old & ~src & M32)
            h.csr_write(num, new)
        h.x[rd] = old
        h.pc = (pc + 4) & M32

    return run


def _ttinsn(h: Hart, v: dict[str, int], pc: int) -> None:
    if h.on_custom is not None:
        h.on_custom(h, v["VALUE"])
    else:
        h.store(INSTRN_BUF_BASE, 4, v["VALUE"])
    h.pc = (pc + 4) & M32


def _stop(reason: StopReason, advance: bool) -> _Exec:
    def run(h: Hart, v: dict[str, int], pc: int) -> StopReason:
        if advance:
            h.pc = (pc + 4) & M32
        return reason

    return run


def _mret(h: Hart, v: dict[str, int], pc: int) -> None:
    raise IllegalInstruction(f"{h.name}: pc {pc:#x} (mret): traps and interrupts are not "
                             "modelled")


_EXEC.update({
    "lui": _lui, "auipc": _auipc, "jal": _jal, "jalr": _jalr, "fence": _fence,
    "fence.tso": _fence, "lr": _lr, "sc": _sc, "ttinsn": _ttinsn,
    "csrrw": _csr("w", False), "csrrs": _csr("s", False), "csrrc": _csr("c", False),
    "csrrwi": _csr("w", True), "csrrsi": _csr("s", True), "csrrci": _csr("c", True),
    "ecall": _stop(StopReason.ECALL, False), "ebreak": _stop(StopReason.EBREAK, False),
    "wfi": _stop(StopReason.WFI, True), "mret": _mret,
})

# every instruction of the description has an executor (checked at import)
for _ins in rv32_isa().instrs:
    _n = _ins.name
    assert _n in _EXEC or sem.amo_base(_n) in _EXEC or _n.split(".")[0] in _EXEC, _n

__all__ = ["Hart", "IllegalInstruction", "RiscvError", "StopReason"]
