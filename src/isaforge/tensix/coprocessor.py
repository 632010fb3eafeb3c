"""The Tensix coprocessor: three threads, their frontends, a deterministic scheduler.

Each thread has an instruction stream (what its RISC-V core would push), a MOP expander, a
replay expander and a Wait Gate. :meth:`Coprocessor.step` gives each unfinished thread, in
the order T0, T1, T2, one chance to issue the instruction at the head of its frontend: the
instruction either passes the Wait Gate and executes, or waits (a latched STALLWAIT/SEMWAIT,
a semaphore, a Src bank not owned by the Matrix Unit, a mutex), which blocks that thread
only. When no thread can move and some have not finished, nothing can ever wake them (there
are no RISC-V cores in this model), and :class:`~.state.DeadlockError` reports each thread's
blocking reason.

The machine never prints: :meth:`Coprocessor.hook_add` registers callbacks that receive an
:class:`Executed` event per executed instruction (the CLI's trace subscribes).

Where instructions are executed: one table (``_DISPATCH``) maps each name to its handler: the
small ones below (config, sync, RWC, ADC), :mod:`.scalar`, :mod:`.matrix` (Matrix Unit: MVMUL,
ELW*, pools, moves; arithmetic in :mod:`.fpu` and :mod:`.fpu_jit`) and :mod:`.sfpu`.

Usage::

    cp = Coprocessor()
    cp.load_program(program_text)      # PROG.s text (see :mod:`.program`) or {thread: words}
    cp.load_src("a", 0, a, "bf16")     # fill SrcA bank 0 as an unpacker would
    cp.dst.write("fp32", d)            # typed access to every register file
    cp.run(max_steps=100_000)
    cp.dst.read("fp32", range(64))
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..core.errors import DecodeError, EmulationError
from . import adc as adc_ops
from . import matrix, scalar_mem, sfpu
from . import scalar as scalar_ops
from .disasm import decode_word
from .mop import OP_MOP, OP_MOP_CFG, MopExpander
from .program import Program, parse_program
from .regfiles import Dst, SrcClient, SrcRegs
from .replay import OP_REPLAY, ReplayExpander
from .rwc import incrwc, setrwc
from .state import (
    N_THREADS,
    ADCs,
    Config,
    DeadlockError,
    GPRs,
    NotImplementedInstruction,
    Packers,
    RWCs,
    Semaphores,
    StepLimitError,
    ThreadConfig,
    UBEvent,
    UBPolicy,
)
from .sync import LatchedWait, SyncUnit


@dataclass(frozen=True)
class Decoded:
    """An instruction word as the machine uses it."""

    word: int
    name: str
    fields: Mapping[str, int]
    text: str


@lru_cache(maxsize=4096)
def decode(word: int) -> Decoded:
    """Decode one Tensix word (cached); :class:`DecodeError` if it is not an instruction."""
    ins = decode_word(word, what="")
    if ins.name is None:
        raise DecodeError(f"{word:#010x} uses bits no {ins.mnemonic} operand covers")
    return Decoded(word, ins.name, dict(ins.fields), ins.text)


@dataclass(frozen=True)
class Executed:
    """Event: thread ``thread`` executed ``insn``; ``step`` counts executed instructions."""

    step: int
    thread: int
    insn: Decoded
    rwc: str  # the thread's RWCs after the instruction, in the spec's notation


@dataclass
class Thread:
    """One Tensix thread's frontend state."""

    index: int
    program: list[int] = field(default_factory=list)
    pc: int = 0
    pending: deque[int] = field(default_factory=deque)
    mop: MopExpander = field(default_factory=MopExpander)
    replay: ReplayExpander = field(default_factory=ReplayExpander)
    blocked: str | None = None
    executed: int = 0

    @property
    def finished(self) -> bool:
        return self.pc >= len(self.program) and not self.pending


@dataclass(frozen=True)
class RunResult:
    """What :meth:`Coprocessor.run` did."""

    steps: int  # instructions executed
    rounds: int  # scheduler rounds
    per_thread: tuple[int, ...]


class Coprocessor:
    """The Blackhole Tensix coprocessor of one tile, functionally.

    Register files and state (all numpy, sized as the hardware): ``dst`` (:class:`Dst`),
    ``srca``/``srcb`` (:class:`SrcRegs`), ``rwc`` (:class:`RWCs`), ``thread_config``
    (:class:`ThreadConfig`), ``config`` (:class:`Config`), ``adc`` (:class:`ADCs`), ``gpr``
    (:class:`GPRs`), ``sync`` (semaphores, mutexes, latched waits), ``lreg`` (the SFPU's
    LRegs, ``(8, 32)`` uint32) and per thread ``threads[i].mop.cfg`` / ``.replay.buf``.

    ``ub`` chooses what undefined behaviour does: ``"stop"`` raises
    :class:`~.state.UndefinedBehaviourError`, ``"continue"`` records it in ``ub_events``.

    ``memory`` (a :class:`~.scalar_mem.Memory`: L1 and the MMIO registers) is what the
    Scalar Unit's memory instructions (LOADIND, STOREIND, LOADREG, STOREREG, the AT* atomics)
    reach; a Tensix tile provides it. Without one those instructions are not implemented.
    """

    def __init__(self, ub: str = "stop", memory: scalar_mem.Memory | None = None) -> None:
        self.memory = memory
        self.dst = Dst()
        self.srca = SrcRegs("SrcA")
        self.srcb = SrcRegs("SrcB")
        self.rwc = RWCs()
        self.thread_config = ThreadConfig()
        self.config = Config()
        self.adc = ADCs()
        self.gpr = GPRs()
        #: the packers' state SETDMAREG's special form reads (PACR is not modelled)
        self.packers = Packers()
        self.sync = SyncUnit(self.srca, self.srcb)
        self.lreg = np.zeros((sfpu.N_LREGS, sfpu.LANES), dtype=np.uint32)
        #: the Vector Unit's per-lane LaneConfig (18 bits each; SFPCONFIG VD=15 writes it):
        #: SFPLOAD/SFPSTORE lane controls and the BLOCK_DEST_MOV column masks of MOV*
        self.lane_config = np.zeros(sfpu.LANES, dtype=np.uint32)
        self.threads = [Thread(i) for i in range(N_THREADS)]
        self.ub = UBPolicy(ub)
        self.steps = 0
        self.rounds = 0
        #: per thread, (config versions, :class:`~.matrix.MathRegs`): see matrix.math_regs
        self.math_regs_cache: list[tuple[tuple[int, int], matrix.MathRegs] | None] = [None] * 3
        self._hooks: list[Callable[[Executed], None]] = []
        #: :meth:`run` sets the step count runs of MVMULs may reach (0: one at a time)
        self._run_cap = 0
        #: (thread, instruction text or, in the expanders, its word) that UB reports name
        self._current: tuple[int, str | int] = (0, "")

    # -- API ---------------------------------------------------------------------------------

    @property
    def semaphores(self) -> Semaphores:
        """The Sync Unit's 8 semaphores (``value``, ``max``)."""
        return self.sync.sem

    @property
    def ub_events(self) -> list[UBEvent]:
        """The undefined-behaviour cases reported so far (with ``ub="continue"``)."""
        return self.ub.events

    def hook_add(self, callback: Callable[[Executed], None]) -> None:
        """Call ``callback(Executed)`` after every executed instruction."""
        self._hooks.append(callback)

    def load_program(self, program: str | Program | Mapping[int, Iterable[int]],
                     filename: str = "<program>") -> None:
        """Load PROG.s text (see :mod:`.program`; its directives are applied), a parsed
        :class:`~.program.Program`, or a mapping ``{thread: [word, ...]}``. Replaces the
        threads' instruction streams."""
        if isinstance(program, str):
            program = parse_program(program, filename)
        if isinstance(program, Program):
            program.apply(self)
            return
        for t in range(N_THREADS):
            self.set_stream(t, program.get(t, []))

    def load_src(self, which: str, bank: int, values: np.ndarray, fmt: str,
                 row: int = 0) -> None:
        """Fill SrcA/SrcB (``which`` "a"/"b") bank ``bank`` with typed values from ``row`` on,
        as an unpacker would, and hand the bank to the Matrix Unit: its implied format becomes
        ``fmt``'s and its ``AllowedClient`` the Matrix Unit (the bank indices do not move)."""
        src = self.srca if which.lower() == "a" else self.srcb
        src.load(bank, values, fmt, row)
        src.implied_fmt[bank] = matrix.IMPLIED_CODE.get(fmt, 0)
        src.allowed_client[bank] = SrcClient.MATRIX_UNIT

    def push(self, thread: int, word: int, after_mop: bool = False) -> None:
        """Append one instruction word to thread ``thread``'s stream, as a RISC-V core's push
        does: before the MOP expander (a TRISC's push), or with ``after_mop`` past it (BRISC's
        push, which the MOP expander does not see)."""
        th = self.threads[thread]
        word &= 0xFFFFFFFF
        if after_mop:
            th.pending.append(word)
            return
        if th.pc and th.pc == len(th.program):  # drop what was consumed
            th.program.clear()
            th.pc = 0
        th.program.append(word)

    def idle(self, thread: int) -> bool:
        """Whether thread ``thread`` has no instruction left to issue (nothing in flight: in
        this model an issued instruction has completed)."""
        return self.threads[thread].finished

    def mop_queued(self, thread: int) -> bool:
        """Whether a MOP instruction waits before thread ``thread``'s MOP expander (the
        expander expands a MOP at once when it takes it)."""
        th = self.threads[thread]
        return any(w >> 24 == OP_MOP for w in th.program[th.pc:])

    def set_stream(self, thread: int, words: Iterable[int]) -> None:
        """Give thread ``thread`` a new instruction stream (Tensix words)."""
        th = self.threads[thread]
        th.program, th.pc = [int(w) & 0xFFFFFFFF for w in words], 0
        th.pending.clear()

    @property
    def finished(self) -> bool:
        for th in self.threads:
            if th.pending or th.pc < len(th.program):
                return False
        return True

    def step(self) -> bool:
        """One scheduler round: each unfinished thread tries to issue one instruction.

        Returns False when every thread has finished. Raises :class:`DeadlockError` when no
        thread could move and some have not finished."""
        if self.finished:
            return False
        return not self._round()

    def _round(self) -> bool:
        """One scheduler round of :meth:`step` (some thread has not finished); returns
        whether every thread has finished after it."""
        self.rounds += 1
        moved = False
        for th in self.threads:
            if not th.pending and (th.pc >= len(th.program) or not self._frontend(th)):
                continue  # finished
            if self._issue(th):
                moved = True
        finished = self.finished
        if not moved and not finished:
            reasons = {th.index: th.blocked or "?" for th in self.threads if not th.finished}
            lines = "; ".join(f"thread {t}: {r}" for t, r in reasons.items())
            raise DeadlockError(f"deadlock: no thread can make progress ({lines})", reasons)
        return finished

    def run(self, max_steps: int | None = 1_000_000) -> RunResult:
        """Run until every thread has finished. ``max_steps`` bounds executed instructions
        (:class:`StepLimitError` beyond it); ``None`` means no bound."""
        start = self.steps
        done = self.finished
        # a thread running alone may execute MVMULs in runs (matrix.mvmul_run), never beyond
        # the step at which the limit below is noticed
        self._run_cap = start + max_steps + 1 if max_steps is not None else 1 << 62
        try:
            while not done:
                done = self._round()
                if not done and max_steps is not None and self.steps - start > max_steps:
                    raise StepLimitError(f"the program did not finish within {max_steps} "
                                         f"steps (--max-steps)")
        finally:
            self._run_cap = 0
        return RunResult(self.steps - start, self.rounds,
                         tuple([th.executed for th in self.threads]))

    # -- frontend and Wait Gate --------------------------------------------------------------

    def report_ub(self, message: str) -> None:
        t, name = self._current
        if isinstance(name, int):
            name = f"{name:#010x}"
        self.ub.report(t, name, message)

    def _frontend(self, th: Thread) -> bool:
        """Fill the thread's pending queue through the MOP and replay expanders; False if the
        thread has nothing left."""
        while not th.pending and th.pc < len(th.program):
            word = th.program[th.pc]
            th.pc += 1
            if word >> 24 in _EXPANDED or th.replay.load_left:
                self._current = (th.index, word)
                for w in th.mop.feed(word):
                    th.pending.extend(th.replay.feed(w, self.report_ub))
            else:  # what both expanders pass through unchanged
                th.pending.append(word)
        return bool(th.pending)

    def _issue(self, th: Thread) -> bool:
        t = th.index
        word = th.pending[0]
        try:
            ins = decode(word)
        except DecodeError as e:
            raise EmulationError(f"thread {t}: instruction {th.executed + 1}: {e.message}"
                                 ) from None
        self._current = (t, ins.text)
        reason = self.sync.gate(t, ins.name) if self.sync.latched[t] is not None else None
        if reason is None:
            reason = self._own_wait(t, ins)
        if reason is not None:
            th.blocked = f"{ins.text.expandtabs(1)}: {reason}"
            return False
        th.blocked = None
        if self._run_cap > self.steps + 1 and ins.name == "MVMUL" and not self._hooks \
                and self._alone(t):
            n = matrix.mvmul_run(self, t, th.pending, self._run_cap - self.steps)
            if n:  # n MVMULs back to back: n rounds in which no other thread had work
                if n == len(th.pending):
                    th.pending.clear()
                else:
                    for _ in range(n):
                        th.pending.popleft()
                th.executed += n
                self.steps += n
                self.rounds += n - 1
                return True
        th.pending.popleft()
        handler = _DISPATCH.get(ins.name)
        if handler is not None:
            handler(self, t, ins.fields)
        else:
            self._execute(t, ins)
        th.executed += 1
        self.steps += 1
        if self._hooks:
            ev = Executed(self.steps, t, ins, self.rwc.text(t))
            for h in self._hooks:
                h(ev)
        return True

    def _alone(self, t: int) -> bool:
        """Whether every thread but ``t`` has finished (and so stays finished)."""
        for th in self.threads:
            if th.index != t and (th.pending or th.pc < len(th.program)):
                return False
        return True

    def _own_wait(self, t: int, ins: Decoded) -> str | None:
        """Waits an instruction does by itself at the Wait Gate."""
        name, f = ins.name, ins.fields
        if name in matrix.NEEDS_BOTH:
            return _bank_wait(self.srca) or _bank_wait(self.srcb)
        if name in matrix.NEEDS_SRCA:
            return _bank_wait(self.srca)
        if name in matrix.NEEDS_SRCB:
            return _bank_wait(self.srcb)
        if name == "ATGETM":
            return self.sync.mutex_wait(t, f["mutex_index"])
        if name == "UNPACR_NOP" and f["Unpack_Pop"] & 3 == 1:
            return matrix.unpacr_nop_zerosrc_wait(self, f)
        if name in ("ATCAS", "ATINCGETPTR"):
            return scalar_mem.wait_reason(name, self.memory, self.gpr, t, f)
        return None

    # -- execution ---------------------------------------------------------------------------

    def _execute(self, t: int, ins: Decoded) -> None:
        name, f = ins.name, ins.fields
        handler = _DISPATCH.get(name)
        if handler is not None:
            handler(self, t, f)
        elif name in scalar_ops.NAMES:
            scalar_ops.execute(name, self.gpr, t, dict(f), self.report_ub,
                               packers=self.packers, cfg=lambda n: self.cfg(t, n))
        elif name in matrix.HANDLERS:
            matrix.HANDLERS[name](self, t, f)
        elif name in sfpu.HANDLERS:
            sfpu.HANDLERS[name](self, t, f)
        else:
            raise NotImplementedInstruction(f"thread {t}: not implemented: {name} "
                                            f"({ins.text.expandtabs(1)})")

    def state_id(self, t: int) -> int:
        return self.thread_config.get(t, "CFG_STATE_ID_StateID")

    def cfg(self, t: int, name: str) -> int:
        """A Config field as thread ``t`` sees it (its CFG_STATE_ID bank)."""
        return self.config.get(name, self.state_id(t))


#: The opcodes the MOP and replay expanders act on (MOP, MOP_CFG, REPLAY); every other word
#: passes through both unchanged unless a REPLAY is loading.
_EXPANDED = frozenset({OP_MOP, OP_MOP_CFG, OP_REPLAY})


def _bank_wait(src: SrcRegs) -> str | None:
    if src.matrix_ready():
        return None
    return f"waiting for {src.name} bank {src.matrix_bank} to be given to the Matrix Unit"


# --------------------------------------------------------------------------------------------
# Small instructions handled here (frontend-free units: config, sync, RWC, ADC)
# --------------------------------------------------------------------------------------------


def _nop(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    pass


def _frontend_only(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    """MOP, MOP_CFG and REPLAY are consumed by the expanders; one that reaches the Wait Gate
    came out of a replay or MOP expansion, which the hardware does not support."""
    cp.report_ub("a MOP/MOP_CFG/REPLAY instruction inside a replayed or MOP-expanded sequence")


def _setc16(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    reg = f["setc16_reg"]
    if reg >= ThreadConfig.N_REGS:
        cp.report_ub(f"ThreadConfig register {reg} does not exist (0..{ThreadConfig.N_REGS - 1})")
        return
    value = f["setc16_value"]
    if cp.thread_config.regs[t, reg] != value:  # rewriting a value keeps cached configs valid
        cp.thread_config.regs[t, reg] = value


def _cfg_index(cp: Coprocessor, index: int) -> int | None:
    if index >= Config.N_WORDS:
        cp.report_ub(f"Config word {index} is out of range (0..{Config.N_WORDS - 1})")
        return None
    return index


def _gpr_index(cp: Coprocessor, index: int) -> int:
    if index >= GPRs.N:
        cp.report_ub(f"GPR {index} does not exist (0..63)")
    return index & (GPRs.N - 1)


def _wrcfg(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    idx = _cfg_index(cp, f["CfgReg"])
    if idx is None:
        return
    s, g = cp.state_id(t), _gpr_index(cp, f["GprAddress"])
    if f["wr128b"]:
        cp.config.words[s, idx & ~3:(idx & ~3) + 4] = cp.gpr.v[t, g & ~3:(g & ~3) + 4]
    else:
        cp.config.words[s, idx] = cp.gpr.v[t, g]


def _rdcfg(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    idx = _cfg_index(cp, f["CfgReg"])
    if idx is None:
        return
    cp.gpr.v[t, _gpr_index(cp, f["GprAddress"])] = cp.config.words[cp.state_id(t), idx]


def _rmwcib(byte: int) -> Callable[[Coprocessor, int, Mapping[str, int]], None]:
    def run(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
        idx = _cfg_index(cp, f["CfgRegAddr"])
        if idx is None:
            return
        s = cp.state_id(t)
        word = int(cp.config.words[s, idx])
        old = word >> (8 * byte) & 0xFF
        new = (f["Data"] & f["Mask"]) | (old & ~f["Mask"] & 0xFF)
        if new != old:  # rewriting a value keeps cached configs valid
            keep = word & ~(0xFF << (8 * byte)) & 0xFFFFFFFF
            cp.config.words[s, idx] = keep | (new << (8 * byte))
    return run


def _seminit(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cp.sync.seminit(f["sem_sel"] & 0xFF, f["init_value"], f["max_value"])


def _sempost(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cp.sync.sempost(f["sem_sel"] & 0xFF)


def _semget(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cp.sync.semget(f["sem_sel"] & 0xFF)


def _semwait(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cond = f["wait_sem_cond"]
    if not cond:
        cp.report_ub("SEMWAIT with an empty condition mask")
        return
    cp.sync.latched[t] = LatchedWait("SEMWAIT", f["stall_res"] or 1 << 6, cond,
                                     f["sem_sel"] & 0xFF)


def _stallwait(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cond = f["wait_res"] & 0x1FFF or 0x0F
    cp.sync.latched[t] = LatchedWait("STALLWAIT", f["stall_res"] or 1 << 6, cond)


def _atgetm(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cp.sync.atgetm(t, f["mutex_index"])


def _atrelm(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    cp.sync.atrelm(t, f["mutex_index"])


def _setrwc(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    setrwc(cp.rwc, t, f["rwc_cr"], f["rwc_d"], f["rwc_b"], f["rwc_a"], f["BitMask"])
    matrix.flip_banks(cp, t, f["clear_ab_vld"])


def _incrwc(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
    incrwc(cp.rwc, t, f["rwc_cr"] & 7, f["rwc_d"], f["rwc_b"], f["rwc_a"])


def _adc(kind: str) -> Callable[[Coprocessor, int, Mapping[str, int]], None]:
    def run(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
        fd = dict(f)
        if kind == "SETADC":
            adc_ops.setadc(cp.adc, t, fd, cp.report_ub)
        elif kind == "SETADCXX":
            adc_ops.setadcxx(cp.adc, t, fd)
        else:
            op, dims = kind[:-2], adc_ops.XY if kind.endswith("XY") else adc_ops.ZW
            fn = {"SETADC": adc_ops.set_pair, "INCADC": adc_ops.inc_pair,
                  "ADDRCR": adc_ops.addrcr_pair}[op]
            fn(cp.adc, t, fd, dims, cp.report_ub)
    return run


_HANDLERS: dict[str, Callable[[Coprocessor, int, Mapping[str, int]], None]] = {
    "NOP": _nop,
    "MOP": _frontend_only,
    "MOP_CFG": _frontend_only,
    "REPLAY": _frontend_only,
    "SETC16": _setc16,
    "WRCFG": _wrcfg,
    "RDCFG": _rdcfg,
    "RMWCIB0": _rmwcib(0),
    "RMWCIB1": _rmwcib(1),
    "RMWCIB2": _rmwcib(2),
    "RMWCIB3": _rmwcib(3),
    "SEMINIT": _seminit,
    "SEMPOST": _sempost,
    "SEMGET": _semget,
    "SEMWAIT": _semwait,
    "STALLWAIT": _stallwait,
    "ATGETM": _atgetm,
    "ATRELM": _atrelm,
    "SETRWC": _setrwc,
    "INCRWC": _incrwc,
    **{k: _adc(k) for k in ("SETADC", "SETADCXX", "SETADCXY", "SETADCZW", "INCADCXY",
                            "INCADCZW", "ADDRCRXY", "ADDRCRZW")},
}



def _scalar_mem(name: str) -> Callable[[Coprocessor, int, Mapping[str, int]], None]:
    def run(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
        scalar_mem.execute(name, cp.memory, cp.gpr, t, f, cp.report_ub)
    return run


def _scalar(name: str) -> Callable[[Coprocessor, int, Mapping[str, int]], None]:
    def run(cp: Coprocessor, t: int, f: Mapping[str, int]) -> None:
        scalar_ops.execute(name, cp.gpr, t, dict(f), cp.report_ub, packers=cp.packers,
                           cfg=lambda n: cp.cfg(t, n))
    return run


#: Every instruction's handler in one table, in the precedence :meth:`Coprocessor._execute`
#: gives them (this module's, then the scalar unit's, the Matrix Unit's, the SFPU's): one
#: lookup per instruction. Names registered later in those modules still run through the
#: fallback chain in ``_execute``.
_DISPATCH: dict[str, Callable[[Coprocessor, int, Mapping[str, int]], None]] = {
    **sfpu.HANDLERS, **matrix.HANDLERS, **{n: _scalar(n) for n in scalar_ops.NAMES},
    **{n: _scalar_mem(n) for n in scalar_mem.NAMES}, **_HANDLERS}

__all__ = ["Coprocessor", "Decoded", "Executed", "RunResult", "Thread", "decode"]
