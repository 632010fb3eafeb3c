"""The afuc emulator: real Adreno firmware running PM4 command streams (a5xx to a7xx).

Unicorn-style API; the machine never prints, it emits effects and calls hooks::

    emu = Emulator(open("a630_sqe.fw", "rb").read())
    emu.feed("CP_ME_INIT 0\\nCP_MEM_WRITE 0x1000 0 0xdead")   # or dwords, or packet()
    emu.run()                                # boot code, then every packet, until idle
    emu.effects                              # [Effect(kind, addr, name, value, proc), ...]
    h = emu.hook_add("reg_write", lambda emu, reg, value, info: ...)   # a handle
    emu.hook_del(h)

Hooks (Unicorn's shape, :mod:`isaforge.core.hooks`): ``hook_add(kind, callback, begin=None,
end=None)`` returns a handle for ``hook_del``; ``begin``/``end`` (inclusive) restrict a hook to
an address range. The kinds and what their callbacks get (``emu`` is this :class:`Emulator`):

* ``reg_write``: ``callback(emu, reg, value, info)`` for each write of a GPU, pipe or control
  register by the firmware; ``info`` is a :class:`RegWrite`: ``info.space`` is "gpu", "pipe"
  or "ctrl" (the range applies to ``reg`` in every space), ``info.name`` the register's name
  (or None), ``info.proc`` the processor that wrote it;
* ``mem_write``: ``callback(emu, address, 4, value)`` for each dword of GPU memory written;
* ``packet``: ``callback(emu, address, header, proc)`` for each packet dispatched: ``address``
  is the byte address (4 * pc) of the handler it jumps to, ``header`` the header dword,
  ``proc`` the :class:`Processor`;
* ``insn``: ``callback(emu, address, 4, proc)`` before each instruction :meth:`Emulator.run`
  or :meth:`Emulator.step` executes (a ``(rep)`` instruction once), ``address`` being its
  byte address (4 * pc) in ``proc``'s image, as :func:`isaforge.afuc.disassemble` numbers
  it. Instruction hooks make :meth:`Emulator.run` take the exact path (the compiled blocks
  have no per-instruction point to call them from); one added by a callback during a run
  takes effect at the next run.

Effects (``emu.effects``) are recorded whether or not hooks are set (``record=False`` stops
that); without hooks, the fast path appends them inline. They are kept in a compact raw
buffer (``emu.effect_log``: a ``(kind, addr, value, proc)`` tuple per single write, and a
``(first_register, values, proc)`` triple per run of GPU registers written in a row by a bulk
copy), made into records only when asked for: ``emu.effects_raw`` (tuples) and
``emu.effects`` (:class:`Effect` records) expand it (once: later calls expand what is new);
``emu.effect_count`` counts without expanding.

Generations: a6xx SQE; a7xx BR, which starts BV and LPAC when its boot code writes
``@BV_CNTL``/``@LPAC_CNTL`` (each then runs its own image, from ``@BV_INSTR_BASE`` etc.);
a5xx PFP and ME as two processors joined by the MEQ: everything the PFP writes to ``$data``
is queued for the ME, which reads its packets from there (``Emulator(pfp, me_firmware=me)``).
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Callable, Iterable
from itertools import islice, repeat
from typing import TYPE_CHECKING, Any, NamedTuple

from ...core.errors import EmulationError
from ...core.hooks import Hook, Hooks
from ..image import Firmware, load_firmware
from ..isa import REG_REM, isa_for
from ..regdb import RegDB
from .codegen import CodeGen
from .processor import M32, Idle, Processor
from .queues import ListQueue
from .replay import Type4Replay
from .stream import Stream, packet_words, parse_stream, parse_text
from .trace import TraceState

if TYPE_CHECKING:  # (numpy is imported when gpu_regs is asked for: start-up time)
    import numpy as np

INSTR_BASE = 0x1000  # where the firmware image sits in GPU memory (as in Mesa's emulator)
ME_INSTR_BASE = 0x100000  # the a5xx ME image
EFFECT_KINDS = ("reg", "mem", "pipe", "ctrl")  # Effect.kind: GPU register, memory, pipe, control
HOOK_KINDS = ("insn", "mem_write", "reg_write", "packet")
SPACE_OF = {"reg": "gpu", "pipe": "pipe", "ctrl": "ctrl"}  # Effect.kind -> RegWrite.space
GPU_REGS = 0x10000
assert array("I").itemsize == 4, "array('I') must hold uint32"


class Effect(NamedTuple):
    """One externally visible write: a GPU register, a memory dword (byte address), a pipe
    register or a control register, by the processor ``proc``."""

    kind: str
    addr: int
    name: str | None
    value: int
    proc: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "addr": self.addr, "name": self.name, "value": self.value}


class RegWrite(NamedTuple):
    """The ``info`` of a ``reg_write`` hook: which register space, the register's name, and
    the processor that wrote it."""

    space: str  # "gpu", "pipe" or "ctrl"
    name: str | None
    proc: str


class Emulator:
    """Adreno CP microcontroller(s) running firmware on a command stream."""

    def __init__(self, firmware: bytes | Firmware, gpu: str | int | None = None, *,
                 me_firmware: bytes | Firmware | None = None, record: bool = True) -> None:
        fw = firmware if isinstance(firmware, Firmware) else load_firmware(firmware, gpu)
        self.fw = fw
        self.gen = fw.gen
        self.db = RegDB.for_variant(fw.variant)
        self.isa = isa_for(fw.gen)
        self.codegen = CodeGen(fw.gen)
        # the 64K GPU registers: uint32 in an array.array, whose item stores cost a third of a
        # numpy array's from Python (the fast path writes one per register); gpu_regs gives
        # a numpy view of the same memory
        self.gpu = array("I", bytes(4 * GPU_REGS))
        self.mem: dict[int, int] = {}
        # the raw effects buffer (see the module docstring) and its expansion so far
        self.effect_log: list[tuple] = []
        self._flat: list[tuple[str, int, int, str]] = []
        self._flat_upto = 0  # effect_log entries expanded into _flat
        self._count = 0  # effects in effect_log[:_count_upto]
        self._count_upto = 0
        self.record = record
        self.hooks = Hooks(HOOK_KINDS, self._hooks_changed)
        self.packet_hooks: list[Hook] = []  # (the compiled blocks read it: changed in place)
        self.insn_hooks: tuple[Hook, ...] = ()
        self.pkt4_id = self.db.pm4_packet_id("PKT4") or 4
        self.ib_end_id = self.db.pm4_packet_id("IN_IB_END")
        self.tracer: TraceState | None = None
        self.bootstrap = False  # a boot-code run (run_boot_code): BV/LPAC are not started
        self.fast_append: Callable[[tuple], None] | None = None
        self.emit: Callable[[str, int, int, Processor], None] | None = None
        self.procs: list[Processor] = []
        self._hooks_changed()
        image = fw.words[1:]
        if fw.gen == 5 and me_firmware is not None:
            me_fw = (me_firmware if isinstance(me_firmware, Firmware)
                     else load_firmware(me_firmware, gpu))
            if me_fw.gen != 5:
                raise EmulationError("the ME firmware must be a5xx firmware too")
            pfp = self._add(Processor(self, "PFP", image, INSTR_BASE))
            me = self._add(Processor(self, "ME", me_fw.words[1:], ME_INSTR_BASE))
            pfp.meq = me.meq = ListQueue()
            me.is_me5 = True
            self.set_gpu64("CP_PFP_INSTR_BASE_LO", INSTR_BASE)
            self.set_gpu64("CP_ME_INSTR_BASE_LO", ME_INSTR_BASE)
        elif fw.gen == 5:
            me = self._add(Processor(self, "ME", image, INSTR_BASE))
            me.is_me5 = True
            me.meq = me.rb
            self.set_gpu64("CP_ME_INSTR_BASE_LO", INSTR_BASE)
        else:
            main = self._add(Processor(self, "BR" if fw.gen >= 7 else "SQE", image, INSTR_BASE))
            self.set_gpu64("CP_SQE_INSTR_BASE", INSTR_BASE)
            self.reset_values(main)
        for p in self.procs:
            for i, w in enumerate(p.image):
                self.mem[p.base + 4 * i] = w
        self.main = self.procs[0]

    @property
    def gpu_regs(self) -> np.ndarray:
        """The GPU registers as a numpy uint32 array (a view: writes change the machine, but
        bypass the firmware's side effects; use :meth:`write_reg` for those)."""
        import numpy as np

        return np.frombuffer(self.gpu, dtype=np.uint32)

    # -- set-up ---------------------------------------------------------------------------------
    def _add(self, p: Processor) -> Processor:
        self.procs.append(p)
        p.fast_append = self.fast_append
        p.fast_regs = self.fast_append is not None
        p.insn_hooks = self.insn_hooks
        p.tw = self.tracer
        return p

    def set_gpu64(self, name: str, value: int) -> None:
        """Set a 64-bit GPU register pair (low dword at ``name``), without side effects."""
        off = self.db.gpu_reg(name)
        if off is not None:
            self.gpu[off], self.gpu[off + 1] = value & M32, value >> 32

    def reset_values(self, p: Processor) -> None:
        """What the hardware presents at reset, per firmware (the boot code checks it)."""
        fwid = self.fw.fwid
        if fwid == 0x520:
            p.control[0], p.control[2] = 7 << 28, 0x40 << 8
        elif fwid in (0x730, 0x740, 0x512):
            p.control[0xEF], p.control[0] = 1 << 21, 7 << 28
        elif fwid == 0x6DD:
            p.control[0] = 3 << 28
        elif fwid == 0x6DC:
            p.control[0] = 1 << 28

    def start_processor(self, parent: Processor, kind: str, value: int) -> None:
        """BR wrote @BV_CNTL/@LPAC_CNTL: start that processor on its image (once)."""
        ts = parent.c["THREAD_SYNC"]
        if ts is not None:  # what the started processor's boot code reports back
            bit = 1 << (1 if kind == "BV" else 2)
            parent.control[ts] = int(parent.control[ts]) & ~bit
        if self.bootstrap or any(p.name == kind for p in self.procs):
            return
        base_reg = parent.c[f"{kind}_INSTR_BASE"]
        base = int(parent.control[base_reg]) | int(parent.control[base_reg + 1]) << 32
        off = (base - parent.base) // 4
        if not 0 < off < len(parent.image):
            raise EmulationError(f"{parent.name} started {kind} at {base:#x}, outside its image")
        p = self._add(Processor(self, kind, parent.image[off:], base))
        p.control[base_reg], p.control[base_reg + 1] = base & M32, base >> 32
        self.reset_values(p)

    # -- effects and hooks ------------------------------------------------------------------------
    def _hooks_changed(self) -> None:
        """Plan how effects and events reach the hooks (after every add and delete): with no
        write hooks, effects are appended inline (``fast_append``), else ``emit`` records
        them and calls the hooks."""
        hooks = self.hooks
        self.packet_hooks[:] = hooks.callbacks("packet")
        self.insn_hooks = hooks.callbacks("insn")
        regs, mems = hooks.callbacks("reg_write"), hooks.callbacks("mem_write")
        watched = bool(regs or mems)
        self.fast_append = self.effect_log.append if self.record and not watched else None
        for p in self.procs:
            p.fast_append = self.fast_append
            p.fast_regs = self.fast_append is not None
            p.insn_hooks = self.insn_hooks
        if not self.record and not watched:
            self.emit = None
            return
        app = self.effect_log.append
        if not watched:
            self.emit = lambda kind, addr, value, proc: app((kind, addr, value, proc.name))
            return

        def emit(kind: str, addr: int, value: int, proc: Processor) -> None:
            if self.record:
                app((kind, addr, value, proc.name))
            if kind == "mem":
                for h in mems:
                    if h.covers(addr):
                        h.callback(self, addr, 4, value)
                return
            info = None
            for h in regs:
                if h.covers(addr):
                    if info is None:
                        info = RegWrite(SPACE_OF[kind], self.name_of(kind, addr), proc.name)
                    h.callback(self, addr, value, info)

        self.emit = emit

    def hook_add(self, kind: str, callback: Callable[..., Any], begin: int | None = None,
                 end: int | None = None) -> int:
        """Call ``callback`` on each event of ``kind`` ("reg_write", "mem_write", "packet",
        "insn"; see the module docstring for the arguments) whose address (register number,
        byte address) lies in ``begin..end`` (inclusive; None: unbounded). Returns the handle
        :meth:`hook_del` takes."""
        return self.hooks.add(kind, callback, begin, end)

    def hook_del(self, handle: int) -> None:
        """Remove the hook :meth:`hook_add` returned ``handle`` for."""
        self.hooks.delete(handle)

    def set_tracer(self, tracer: TraceState | None) -> None:
        """Trace every processor (present and started later) into ``tracer`` (Mesa's trace
        format, :class:`~.trace.TraceState`), or stop tracing with None. A traced run
        takes the exact path."""
        self.tracer = tracer
        for p in self.procs:
            p.tw = tracer

    def name_of(self, kind: str, addr: int) -> str | None:
        """The register's name; an a5xx bank-1 copy (bit 11 set, spec "Writing Registers")
        of a named context register (0xe000-0xe7ff) is that name with ``.bank1``."""
        if kind == "reg":
            name = self.db.gpu_reg_name(addr)
            if name is None and self.gen == 5 and addr & 0x800 and addr >= 0xE800:
                base = self.db.gpu_reg_name(addr & ~0x800)
                return f"{base}.bank1" if base else None
            return name
        if kind == "pipe":
            return self.db.pipe_reg_name(addr)
        if kind == "ctrl":
            return self.db.control_reg_name(addr)
        return None

    @property
    def effects_raw(self) -> list[tuple[str, int, int, str]]:
        """Every effect so far as a ``(kind, addr, value, proc)`` tuple, in order (the
        expansion of :attr:`effect_log`; a list kept and extended by later calls)."""
        log, flat = self.effect_log, self._flat
        if self._flat_upto < len(log):
            for e in islice(log, self._flat_upto, None):
                if len(e) == 4:
                    flat.append(e)
                else:
                    o, vs, nm = e
                    flat.extend(zip(repeat("reg"), range(o, o + len(vs)), vs, repeat(nm)))
            self._flat_upto = len(log)
        return flat

    @property
    def effect_count(self) -> int:
        """How many effects there are so far (``len(emu.effects_raw)``, without expanding)."""
        log = self.effect_log
        if self._count_upto < len(log):
            self._count += sum(1 if len(e) == 4 else len(e[1])
                               for e in islice(log, self._count_upto, None))
            self._count_upto = len(log)
        return self._count

    @property
    def effects(self) -> list[Effect]:
        return [Effect(k, a, self.name_of(k, a), v, p) for k, a, v, p in self.effects_raw]

    def write_mem(self, addr: int, value: int, proc: Processor | None = None) -> None:
        """Write a dword of GPU memory. With ``proc`` (the firmware writing) it is also an
        effect, seen by hooks and the trace; without, a silent set-up write."""
        self.mem[addr] = value & M32
        if proc is not None:
            if self.emit is not None:
                self.emit("mem", addr, value & M32, proc)
            if proc.tw is not None:
                proc.tw.mem.append(addr)

    # -- inputs -----------------------------------------------------------------------------------
    def feed(self, packets: Iterable[int] | str | Stream, proc: str | None = None) -> None:
        """Queue command-stream dwords (or a text stream, or a parsed :class:`Stream`) on the
        ring buffer; memory placements of a stream are written to GPU memory."""
        if isinstance(packets, str):
            packets = parse_text(packets, self.db)
        if isinstance(packets, Stream):
            for addr, words in packets.memory.items():
                self.load_memory(addr, words)
            packets = packets.rb
        target = self.proc(proc)
        words = packets if isinstance(packets, list) else list(packets)
        if words and not (0 <= min(words) and max(words) <= M32):
            for i, w in enumerate(words):  # (the words before a bad one are queued)
                if not 0 <= w <= M32:
                    target.rb.extend(words[:i])
                    raise EmulationError(f"stream dword {w} does not fit in 32 bits")
        target.rb.extend(words)

    def feed_file(self, data: bytes, filename: str = "<stream>") -> None:
        self.feed(parse_stream(data, self.db, filename))

    def packet(self, name: str, *payload: int) -> None:
        """Queue one packet as Mesa's prompt ``p`` takes it: a PM4 name or a register name."""
        self.feed(packet_words(name, list(payload), self.db))

    def load_memory(self, addr: int, words: Iterable[int]) -> None:
        for i, w in enumerate(words):
            self.mem[addr + 4 * i] = w & M32

    # -- running ----------------------------------------------------------------------------------
    def proc(self, name: str | None = None) -> Processor:
        if name is None:
            return self.main
        for p in self.procs:
            if p.name == name:
                return p
        raise EmulationError(f"no processor {name!r}; running: "
                             + ", ".join(p.name for p in self.procs))

    @property
    def steps(self) -> int:
        """Instructions issued plus the (rep) iterations past each one's first: what
        ``max_steps`` limits."""
        return sum(p.steps for p in self.procs)

    @property
    def instructions(self) -> int:
        """Instructions issued, as Mesa's emulator counts them: one per instruction, however
        many times a ``(rep)`` repeats it (also none)."""
        return sum(p.steps - p.reps for p in self.procs)

    @property
    def rep_iterations(self) -> int:
        """The (rep) iterations past each (rep) instruction's first (``steps`` counts them,
        ``instructions`` does not; a (rep) that runs no iteration counts -1 here)."""
        return self.steps - self.instructions

    @property
    def packets(self) -> int:
        return sum(p.packets for p in self.procs)

    def step(self, proc: str | None = None) -> bool:
        """Execute one instruction (with all its (rep) iterations) on ``proc`` (default: the
        main processor). False if it is idle, waiting for a packet header."""
        p = self.proc(proc)
        p.limit = 1 << 62
        try:
            if p.insn_hooks:
                p.step_hooked()
            else:
                p.step()
        except Idle:
            return False
        return True

    def run(self, max_steps: int = 10_000_000, until: int | Iterable[int] | str | None = None,
            exact: bool = False) -> str:
        """Run every processor until all wait for packets that are not there ("idle"), or
        until ``until``: "packet" stops before the next packet's handler runs; pc numbers
        stop before the main processor executes that pc ("breakpoint"). Exceeding
        ``max_steps`` steps in total raises :class:`StepLimitError`. Traced, stopping or
        ``exact`` runs, and runs with ``insn`` hooks, take the exact path; otherwise compiled
        blocks run. After an error (e.g. the stream ended inside a packet) only an exact run
        can continue: feed more and run again; a fast run stopped inside a block refuses to
        continue. A fast run pauses Python's cyclic garbage collector until it returns."""
        stops: set[int] = set()
        if isinstance(until, int):
            stops = {until}
        elif until is not None and until != "packet":
            stops = set(until)  # type: ignore[arg-type]
        slow = exact or self.tracer is not None or until is not None or bool(self.insn_hooks)
        # the fast path allocates an effect-log tuple per packet and no cycles: the cyclic
        # garbage collector, which such allocations would set off again and again over the
        # whole heap, waits until the run ends (about a third of the time of a type-4 stream)
        paused = not slow and gc.isenabled()
        if paused:
            gc.disable()
        try:
            return self._run(max_steps, stops, until, slow)
        finally:
            if paused:
                gc.enable()

    def _run(self, max_steps: int, stops: set[int], until: int | Iterable[int] | str | None,
             slow: bool) -> str:
        budget_end = self.steps + max_steps
        progress = True
        while progress:
            progress = False
            for p in list(self.procs):
                before = p.steps, p.packets, len(p.rb)
                limit = p.steps + (budget_end - self.steps)
                try:
                    if slow:
                        reason = self._run_slow(p, limit, stops, until == "packet")
                        if reason:
                            return reason
                    else:
                        p.run_fast(limit)
                except Idle:
                    pass
                if (p.steps, p.packets, len(p.rb)) != before:
                    progress = True
        return "idle"

    def _run_slow(self, p: Processor, limit: int, stops: set[int], at_packet: bool) -> str:
        p.limit = limit
        step = p.step_hooked if p.insn_hooks else p.step  # (hooks added meanwhile: next run)
        first = True
        # a traced run of type-4 packets from templates (see .replay), where nothing stops
        replay = None
        if p.tw is not None and p.tw.joined and not stops and not at_packet:
            replay = p.replay
            if replay is None or replay.key != replay.key_of(p):  # (the jump table changed)
                replay = p.replay = Type4Replay(p)
        slot = replay.slot if replay is not None else -1
        checked = p.packets
        while True:
            if not first and p is self.main and p.pc in stops:
                return "breakpoint"
            first = False
            if replay is not None and p.waitin_pending:
                if p.pc != slot and p.packets != checked:  # (the boot code sets the table)
                    checked = p.packets
                    if replay.key != replay.key_of(p):
                        replay = p.replay = Type4Replay(p)
                        slot = replay.slot
                if p.pc == slot and replay.run(p, limit):
                    continue
            packets = p.packets
            if p.steps >= limit:
                p.limit_hit()
            step()
            if at_packet and p.packets != packets:
                return "packet"

    # -- state access (for the debugger and tests) -------------------------------------------------
    def read_gpr(self, n: int, proc: str | None = None) -> int:
        return 0 if n == 0 else self.proc(proc).gpr[n]

    def write_gpr(self, n: int, value: int, proc: str | None = None) -> None:
        self.proc(proc).gpr[n] = value & M32

    def _space(self, space: str, proc: str | None) -> tuple[Any, Callable[[str], int | None]]:
        p = self.proc(proc)
        if space == "control":
            return p.control, self.db.control_reg
        if space == "sqe":
            return p.sqe, self.db.sqe_reg
        if space == "pipe":
            return p.pipe, self.db.pipe_reg
        if space == "gpu":
            return self.gpu, self.db.gpu_reg
        raise EmulationError(f"unknown register space {space!r} (control, sqe, pipe, gpu)")

    def reg_offset(self, space: str, reg: int | str, proc: str | None = None) -> int:
        arr, lookup = self._space(space, proc)
        if isinstance(reg, str):
            off = lookup(reg)
            if off is None:
                try:
                    off = int(reg, 0)
                except ValueError:
                    raise EmulationError(f"unknown {space} register {reg!r}") from None
            reg = off
        if not 0 <= reg < len(arr):
            raise EmulationError(f"{space} register {reg:#x} out of range")
        return reg

    def read_reg(self, space: str, reg: int | str, proc: str | None = None) -> int:
        arr, _ = self._space(space, proc)
        return int(arr[self.reg_offset(space, reg, proc)])

    def write_reg(self, space: str, reg: int | str, value: int, proc: str | None = None) -> None:
        """Write a register as the firmware would (control side effects included)."""
        n = self.reg_offset(space, reg, proc)
        p = self.proc(proc)
        value &= M32
        if space == "control":
            p.wr_ctrl(n, value)
        elif space == "sqe":
            p.wr_sqe(n, value)
        elif space == "pipe":
            p.wr_pipe(n, value)
        else:
            p.wr_gpu(n, value)

    def instruction_text(self, pc: int | None = None, proc: str | None = None) -> str:
        """The instruction at ``pc`` (default: the current pc) as the trace prints it."""
        p = self.proc(proc)
        out: list[str] = []
        TraceState(out.append).line(p, p.pc if pc is None else pc)
        return out[0].strip()

    def read_mem(self, addr: int, count: int = 1) -> list[int]:
        return [self.mem.get(addr + 4 * i, 0) for i in range(count)]

    def roq(self, proc: str | None = None) -> dict[str, list[int]]:
        """The words waiting in each ROQ queue (RB, IB1, IB2, SDS; MEQ on a5xx)."""
        p = self.proc(proc)
        out = {"RB": list(p.rb)}
        for lvl, name in ((1, "IB1"), (2, "IB2"), (3, "SDS")):
            q = p.ib.get(lvl)
            if q is not None:
                if hasattr(q, "addr"):
                    out[name] = [self.mem.get(q.addr + 4 * i, 0) for i in range(len(q))]
                else:
                    out[name] = list(q)
        if p.meq is not None and p.meq is not p.rb:
            out["MEQ"] = list(p.meq)
        return out

    def state_dump(self) -> str:
        """Registers and pc of each processor, for error reports."""
        lines = []
        for p in self.procs:
            lines.append(f"{p.name}: pc {p.pc:#06x}  steps {p.steps}  packets {p.packets}  "
                         f"carry {p.carry:#x}  $rem {p.gpr[REG_REM]:#x}")
            for row in range(0, 32, 8):
                lines.append("  " + "  ".join(f"${n:02x}={p.gpr[n]:08x}"
                                               for n in range(row, row + 8)))
            roq = self.roq(p.name)
            lines.append("  ROQ: " + ", ".join(f"{k}: {len(v)} dwords" for k, v in roq.items()))
        return "\n".join(lines)


__all__ = ["EFFECT_KINDS", "HOOK_KINDS", "Effect", "Emulator", "RegWrite"]
