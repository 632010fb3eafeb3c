"""The Tensix coprocessor: three threads, their frontends, a deterministic scheduler.

Each thread has an instruction stream (what its RISC-V core pushes), a MOP expander, a
replay expander (:mod:`.frontend`) and a Wait Gate. :meth:`Coprocessor.step` gives each
unfinished thread, in the order T0, T1, T2, one chance to issue the instruction at the head
of its frontend: the instruction either passes the Wait Gate and executes, or waits (a
latched STALLWAIT/SEMWAIT, a semaphore, a Src bank not owned by the Matrix Unit, a mutex),
which blocks that thread only. When no thread can move and some have not finished, nothing
can ever wake them (there are no RISC-V cores in this model), and
:class:`~.state.DeadlockError` reports each thread's blocking reason.

Where instructions are executed: one table (:mod:`.dispatch`) maps each opcode to the unit
that executes it and to its own Wait Gate condition, if any. The units get the state they
use, not the machine: :class:`~.frontend.FrontendUnit` (NOP), :class:`~.config.ConfigUnit`
(SETC16, WRCFG, RDCFG, RMWCIB*), :class:`~.sync.SyncUnit` (semaphores, STALLWAIT, SEMWAIT,
mutexes), :class:`~.adc.AdcUnit`, :class:`~.scalar.ScalarUnit`, :class:`~.matrix.MatrixUnit`
(MVMUL, ELW*, pools, moves, SETRWC/INCRWC; arithmetic in :mod:`.fpu` and :mod:`.fpu_jit`),
:class:`~.sfpu.Sfpu`, :class:`~.unpack.Unpackers` (UNPACR) and :class:`~.pack.Packer`
(PACR), which reach L1 (:mod:`.l1`).

Waiting threads are not asked again when nothing they wait for can have changed: an epoch
moves with every instruction except the Vector Unit's and the quiet ones
(:meth:`~.dispatch.Unit.quiet`), with every call from outside and every hook; a thread held
by a SEMWAIT latch is held still while :attr:`~.sync.SyncUnit.changes` stays, one held by a
STALLWAIT latch or by a wait a unit lists in :meth:`~.dispatch.Unit.wait_reads` (the Src
banks' owners: MOVA2D, UNPACR...) while that :class:`~.dispatch.Changes` stays (its
writers bump it; so does every call from outside and every hook). The counts, reports and
blocked objects are those of asking every round (class switches ``_gate_stamps``,
``_wait_stamps``, ``_quiet_skip``, ``_inline`` turn the shortcuts off, as tests compare).

A loop of SFP instructions a thread issues while other threads move is deferred
(``_sfp_defer``): its instructions are issued one a round as usual (counts, rounds) and
executed later as one pass, before any other thread's instruction that might touch what
they read or write (:class:`~.sfp_defer.Interference`), before an undefined-behaviour report
or a hook change, and before every return to the caller.

The machine never prints: hooks report what happens (:meth:`Coprocessor.hook_add`, the
kinds of :mod:`isaforge.core.hooks`):

* ``insn``: ``callback(cp, address, 4, info)`` after every executed instruction; an
  instruction's ``address`` is the index, in its thread's stream, of the word it came from
  (a MOP or REPLAY expands one word into many: they share its index), and ``info`` is an
  :class:`Executed` record (thread, step, the decoded word, the RWCs after it);
* ``ub``: ``callback(cp, address, message, info)`` for each undefined behaviour reported
  (before ``ub="stop"`` raises); ``info`` is a :class:`~.state.UBEvent`;
* ``reg_write``: ``callback(cp, reg, value, info)`` for each write an instruction makes to a
  GPR, a Config word or a ThreadConfig register; ``info`` is a :class:`~.state.RegWrite`
  (space, thread, Config bank).

Usage::

    cp = Coprocessor()
    cp.load_program(program_text)      # PROG.s text (see :mod:`isaforge.tensix.program`)
    cp.load_src("a", 0, a, "bf16")     # fill SrcA bank 0 as an unpacker would
    cp.dst.write("fp32", d)            # typed access to every register file
    h = cp.hook_add("insn", lambda cp, address, size, ev: print(ev.thread, ev.insn.text))
    cp.run(max_steps=100_000)
    cp.hook_del(h)
    cp.dst.read("fp32", range(64))
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.errors import DecodeError, EmulationError
from ...core.hooks import Hooks
from ..decode import Decoded, decode
from ..isa import ops
from ..program import Program, parse_program
from .adc import AdcUnit
from .config import ConfigUnit
from .dispatch import Changes, Entry, Execute, Fields, Unit, build
from .frontend import EXPANDED, FrontendUnit, Thread
from .l1 import L1Memory
from .matrix import IMPLIED_CODE, MVMUL_OPCODE, MatrixUnit, thread_cfg
from .pack import PACR_OPCODE, Packer
from .regfiles import Dst, SrcClient, SrcRegs
from .scalar import ScalarUnit
from .scalar_mem import Memory, ScalarMemoryUnit
from .sfp_defer import Deferred, Interference
from .sfpu import LANES, N_LREGS, Sfpu
from .sfpu.block import MIN_REPS as MIN_LOOP
from .state import (
    N_THREADS,
    ADCs,
    Config,
    DeadlockError,
    GPRs,
    NotImplementedInstruction,
    Packers,
    RegWrite,
    RWCs,
    Semaphores,
    StepLimitError,
    ThreadConfig,
    UBEvent,
    UBPolicy,
)
from .sync import SyncUnit, is_blocked
from .unpack import Unpackers

#: the hook kinds a Coprocessor supports
HOOK_KINDS = ("insn", "ub", "reg_write")


@dataclass(frozen=True)
class Executed:
    """Event: thread ``thread`` executed ``insn``; ``step`` counts executed instructions;
    ``address`` is the index of the stream word ``insn`` came from."""

    step: int
    thread: int
    insn: Decoded
    rwc: str  # the thread's RWCs after the instruction, in the spec's notation
    address: int = 0


@dataclass(frozen=True)
class RunResult:
    """What :meth:`Coprocessor.run` did."""

    steps: int  # instructions executed
    rounds: int  # scheduler rounds
    per_thread: tuple[int, ...]


@dataclass(frozen=True)
class Units:
    """The coprocessor's functional units (each holds only the state it uses)."""

    frontend: FrontendUnit
    config: ConfigUnit
    sync: SyncUnit
    adc: AdcUnit
    scalar: ScalarUnit
    matrix: MatrixUnit
    sfpu: Sfpu
    scalar_mem: ScalarMemoryUnit
    unpack: Unpackers
    pack: Packer

    def all(self) -> tuple[Unit, ...]:
        return (self.frontend, self.config, self.sync, self.adc, self.scalar, self.matrix,
                self.sfpu, self.scalar_mem, self.unpack, self.pack)


class Coprocessor:
    """The Blackhole Tensix coprocessor of one tile, functionally.

    Register files and state (all numpy, sized as the hardware): ``dst`` (:class:`Dst`),
    ``srca``/``srcb`` (:class:`SrcRegs`), ``rwc`` (:class:`RWCs`), ``thread_config``
    (:class:`ThreadConfig`), ``config`` (:class:`Config`), ``adc`` (:class:`ADCs`), ``gpr``
    (:class:`GPRs`), ``packers``, ``sync`` (semaphores, mutexes, latched waits), ``lreg``
    (the SFPU's LRegs 0..16, ``(17, 32)`` uint32), ``lane_config`` and per thread
    ``threads[i].mop.cfg`` / ``.replay.buf``. The functional units are ``units``
    (:class:`Units`).

    ``ub`` chooses what undefined behaviour does: ``"stop"`` raises
    :class:`~.state.UndefinedBehaviourError`, ``"continue"`` records it in ``ub_events``.

    ``memory`` (a :class:`~.scalar_mem.Memory`: L1 and the MMIO registers, which a Tensix
    tile provides) is what LOADIND, STOREIND, LOADREG, STOREREG and the AT* atomics reach;
    the unpackers and packers reach its L1 as one array (:class:`~.l1.L1Access`). Without
    one, the coprocessor has its own L1 (:class:`~.l1.L1Memory`, 1.5 MiB, no MMIO
    registers), ``memory.l1``.
    """

    #: a thread held at the Wait Gate by a SEMWAIT latch is held still, without looking again,
    #: while SyncUnit.changes says nothing it reads changed (False: it looks each time; tests
    #: compare)
    _gate_stamps = True
    #: a thread held by a STALLWAIT latch or by its instruction's own wait whose reads a unit
    #: lists (Unit.wait_reads: the Src banks' owners) is held still while their Changes
    #: stays (False: it looks again after any instruction; tests compare)
    _wait_stamps = True
    #: quiet instructions (Unit.quiet) leave the epoch alone, so that a thread waiting at the
    #: Wait Gate is not tried again after one (False: every instruction bumps it; tests
    #: compare; read when a word is first decoded)
    _quiet_skip = True
    #: a round issues an instruction without a wait of its own, or whose wait a unit lists in
    #: Unit.wait_reads once it passes, itself (no latch at the Wait Gate, no insn hook)
    #: instead of calling _issue (False: _issue; tests compare)
    _inline = True
    #: a loop of SFP instructions a thread issues while other threads move waits (deferred,
    #: :class:`~.sfp_defer.Deferred`) to run as one pass, while those threads' instructions
    #: touch nothing it reads or writes (False: one at a time; tests compare)
    _sfp_defer = True

    def __init__(self, ub: str = "stop", memory: Memory | None = None) -> None:
        self.memory: Memory = memory if memory is not None else L1Memory()
        self.dst = Dst()
        #: moves with every change to the Src banks' owners and indices (SrcRegs.owners)
        self._src_owners = Changes()
        self.srca = SrcRegs("SrcA", self._src_owners)
        self.srcb = SrcRegs("SrcB", self._src_owners)
        self.rwc = RWCs()
        self.thread_config = ThreadConfig()
        self.config = Config()
        self.adc = ADCs()
        self.gpr = GPRs()
        #: the packers' counts SETDMAREG's special form reads (PACR does not keep them)
        self.packers = Packers()
        self.lreg = np.zeros((N_LREGS, LANES), dtype=np.uint32)
        #: the Vector Unit's per-lane LaneConfig (18 bits each; SFPCONFIG VD=15 writes it):
        #: SFPLOAD/SFPSTORE lane controls and the BLOCK_DEST_MOV column masks of MOV*
        self.lane_config = np.zeros(LANES, dtype=np.uint32)
        self.threads = [Thread(i) for i in range(N_THREADS)]
        self.ub = UBPolicy(ub)
        self.steps = 0
        self.rounds = 0
        #: bumped by anything that may change what a waiting thread waits for (every
        #: executed instruction but the Vector Unit's and the quiet ones, every entry from
        #: outside); a thread blocked at this epoch is not tried again until it moves (see
        #: _round and _hold)
        self._epoch = Changes()
        report = self.report_ub
        self.sync = SyncUnit(self.srca, self.srcb, report)
        matrix = MatrixUnit(self.dst, self.srca, self.srcb, self.rwc, self.config,
                            self.thread_config, self.lane_config, report)
        self.units = Units(
            frontend=FrontendUnit(report),
            config=ConfigUnit(self.config, self.thread_config, self.gpr, report),
            sync=self.sync,
            adc=AdcUnit(self.adc, report),
            scalar=ScalarUnit(self.gpr, self.packers, self.config, self.thread_config, report),
            matrix=matrix,
            sfpu=Sfpu(self.dst, self.lreg, self.lane_config, self.rwc, self.config,
                      self.thread_config, matrix, report),
            scalar_mem=ScalarMemoryUnit(self.gpr, lambda: self.memory, report),
            unpack=Unpackers(self.dst, self.srca, self.srcb, self.adc, self.config,
                             self.thread_config, lambda: self.memory, report),
            pack=Packer(self.dst, self.adc, self.config, self.thread_config,
                        lambda: self.memory, report),
        )
        #: opcode -> (execute, wait, name, unit): the one dispatch table
        self._table: list[Entry | None] = build(self.units.all(), self._not_implemented)
        #: opcodes of the units' quiet instructions (Unit.quiet): they leave the epoch alone
        #: (whoever puts an execute that changes what waits read in their table entries sets
        #: _quiet_skip to False)
        self._quiet = frozenset(ops()[name].opcode for unit in self.units.all()
                                for name in unit.quiet() if name in unit.handlers())
        #: opcode -> (its wait, the Changes of what that wait reads: Unit.wait_reads)
        self._wait_reads: dict[int, tuple[Any, Changes]] = {}
        for unit in self.units.all():
            for name, changes in unit.wait_reads().items():
                entry = self._table[ops()[name].opcode]
                if entry is not None and entry.wait is not None:
                    self._wait_reads[ops()[name].opcode] = (entry.wait, changes)
        #: opcode -> runs of it executed at once (MVMUL, PACR) by a thread running alone
        self._runners: dict[int, Callable[[int, Collection[int], int], int]] = {
            MVMUL_OPCODE: self.units.matrix.mvmul_run, PACR_OPCODE: self.units.pack.pacr_run}
        self.hooks = Hooks(HOOK_KINDS, on_change=self._hooks_changed)
        self._tracing = False  # an ``insn`` hook is registered
        #: :meth:`run` sets the step count runs of MVMULs may reach (0: one at a time)
        self._run_cap = 0
        #: rounds left in this :meth:`step`/:meth:`burst` call (a run of SFP instructions,
        #: one round each, stays within them; :meth:`run`: no bound)
        self._rounds_left = 1 << 62
        #: runs of PACRs while the other threads wait (False: only alone; tests compare)
        self._pacr_runs = True
        #: rounds a run of SFP (or PACR) instructions used beyond its first (burst counts them)
        self._sfp_extra = 0
        #: opcode -> whether the Vector Unit executes it (runs of them: _sfp_run)
        self._sfp_opcodes = frozenset(
            op for op, e in enumerate(self._table) if e is not None and e[3] == "Sfpu"
            and e[2] != "SFPLOADMACRO")
        #: SFP opcodes without a wait of their own (loops of them: SfpBlocks)
        self._sfp_nowait = frozenset(op for op in self._sfp_opcodes
                                     if self._table[op][1] is None)  # type: ignore[index]
        #: (first pending word, first stream word) -> the SFP words _sfp_loops last found in a
        #: stream from there (where a run's next ones are looked for first)
        self._sfp_seen: dict[tuple[int, int], list[int]] = {}
        #: word -> what _issue needs of it (decoded once; cleared when _table is replaced)
        self._words: dict[int, _Word] = {}
        self._words_table = self._table
        #: (thread, instruction text or word, stream index) that UB reports name
        self._current: tuple[int, str, int] = (0, "", 0)
        self._sfpu = self.units.sfpu
        #: the SFP instructions a thread has issued but not executed yet (see _defer_start)
        self._defer: Deferred | None = None
        #: deferrals taken (tests read it)
        self.sfp_deferred = 0
        self._hooked = False  # any hook is registered
        #: the first words of the body repetitions of every loop _sfp_loops found (where a
        #: deferral may begin)
        self._sfp_heads: set[int] = set()
        self._sfp_tried: set[int] = set()  # words a deferral was looked for from
        #: which other threads' instructions leave a deferred loop alone
        self._interference = Interference(
            self.config, self.thread_config, self.dst, self.units.matrix, self.units.pack,
            lambda: self.memory, [e[2] if e is not None else None for e in self._table])

    # -- API ---------------------------------------------------------------------------------

    @property
    def semaphores(self) -> Semaphores:
        """The Sync Unit's 8 semaphores (``value``, ``max``)."""
        return self.sync.sem

    @property
    def dispatch_table(self) -> list[Entry | None]:
        """The one dispatch table: per opcode, (execute, wait, name, unit) or None."""
        return self._table

    @property
    def ub_events(self) -> list[UBEvent]:
        """The undefined-behaviour cases reported so far (with ``ub="continue"``)."""
        return self.ub.events

    def hook_add(self, kind: str, callback: Callable[..., Any], begin: int | None = None,
                 end: int | None = None) -> int:
        """Call ``callback`` on each event of ``kind`` (``"insn"``, ``"ub"``,
        ``"reg_write"``; see the module's documentation for the arguments) whose address
        (the stream index for ``insn`` and ``ub``, the register number for ``reg_write``)
        lies in ``begin..end`` (inclusive; None: unbounded). Returns the handle
        :meth:`hook_del` takes. An ``insn`` hook makes MVMULs execute one at a time."""
        return self.hooks.add(kind, callback, begin, end)

    def hook_del(self, handle: int) -> None:
        """Remove the hook :meth:`hook_add` returned ``handle`` for."""
        self.hooks.delete(handle)

    def _hooks_changed(self) -> None:
        if self._defer is not None:
            self._flush()
        self._hooked = self.hooks.any()
        self._tracing = self.hooks.any("insn")
        watch = self._reg_written if self.hooks.any("reg_write") else None
        self.gpr.watch = watch
        self.units.config.watch = watch

    def _reg_written(self, space: str, thread: int, reg: int, value: int,
                     bank: int | None) -> None:
        self._anything_changed()  # (a hook may change anything)
        self.hooks.fire("reg_write", self, reg, value, RegWrite(space, thread, bank))

    def load_program(self, program: str | Program | Mapping[int, Iterable[int]],
                     filename: str = "<program>") -> None:
        """Load PROG.s text (see :mod:`isaforge.tensix.program`), a parsed
        :class:`~isaforge.tensix.program.Program` (its directives are applied), or a mapping
        ``{thread: [word, ...]}``. Replaces the threads' instruction streams."""
        if isinstance(program, str):
            program = parse_program(program, filename)
        if not isinstance(program, Program):
            for t in range(N_THREADS):
                self.set_stream(t, program.get(t, []))
            return
        for t, idx, value in program.mopcfg:
            self.threads[t].mop.cfg[idx] = value
        for t, idx, value in program.gprs:
            self.gpr.v[t, idx] = value  # setup, not an instruction's write: no reg_write
        for idx, value, maximum in program.semaphores:
            self.sync.sem.value[idx] = value
            self.sync.sem.max[idx] = maximum
        for name, value in program.config:
            self.config.set(name, value)
        for t, name, value in program.thread_config:
            self.thread_config.set(t, name, value)
        for t in range(N_THREADS):
            self.set_stream(t, program.streams[t])

    def load_src(self, which: str, bank: int, values: np.ndarray, fmt: str,
                 row: int = 0) -> None:
        """Fill SrcA/SrcB (``which`` "a"/"b") bank ``bank`` with typed values from ``row`` on,
        as an unpacker would, and hand the bank to the Matrix Unit: its implied format becomes
        ``fmt``'s and its ``AllowedClient`` the Matrix Unit (the bank indices do not move)."""
        src = self.srca if which.lower() == "a" else self.srcb
        src.load(bank, values, fmt, row)
        src.implied_fmt[bank] = IMPLIED_CODE.get(fmt, 0)
        src.allowed_client[bank] = SrcClient.MATRIX_UNIT

    def set_stream(self, thread: int, words: Iterable[int]) -> None:
        """Give thread ``thread`` a new instruction stream (Tensix words), from index 0."""
        self.threads[thread].set_stream(words)

    def push(self, thread: int, words: Iterable[int]) -> None:
        """Append Tensix words to thread ``thread``'s stream, as its RISC-V core would."""
        self.threads[thread].push(words)

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
        self._anything_changed()  # (since the last call)
        # runs of MVMULs (and of PACRs by a thread alone) as run() allows them: the caller
        # steps round by round, and a run is one round's worth of the same result
        cap, self._run_cap = self._run_cap, self._run_cap or (1 << 62)
        left, self._rounds_left = self._rounds_left, 1
        try:
            return not self._round()
        finally:
            if self._defer is not None:
                self._flush()
            self._run_cap, self._rounds_left = cap, left

    def burst(self, rounds: int) -> None:
        """Up to ``rounds`` rounds of :meth:`step`, stopping when every thread has finished
        or when none could move (without :class:`DeadlockError`: the caller, a tile, may
        unblock them later)."""
        if self.finished:
            return
        self._anything_changed()
        cap, self._run_cap = self._run_cap, self._run_cap or (1 << 62)
        left = self._rounds_left
        try:
            if rounds > 0:
                self._round(quiet=True, rounds=rounds)
        finally:
            if self._defer is not None:
                self._flush()
            self._run_cap, self._rounds_left = cap, left

    def _round(self, quiet: bool = False, rounds: int = 0) -> bool | None:
        """One scheduler round of :meth:`step` (some thread has not finished); returns
        whether every thread has finished after it. When no thread could move: None with
        ``quiet``, else :class:`DeadlockError`. With ``rounds`` (a :meth:`burst`'s), round
        after round until that many have been counted (a run of SFP or PACR instructions
        counts one each: ``_sfp_extra``; ``_rounds_left`` is what is left before each),
        then False."""
        latched = self.sync.latched
        words, quick = self._words, (_KNOWN if self._inline else -1)
        threads, sfpu = self.threads, self._sfpu
        last_first = threads[::-1]  # (the packer's thread, the last to finish, first)
        macros = sfpu.macros  # (SFPLOADMACRO's scheduler: sfpu.scheduled)
        while True:
            if rounds:
                self._rounds_left = rounds
                self._sfp_extra = 0
            self.rounds += 1
            moved = False
            # a deferral that starts in this round has looked at the threads after its own
            defer = self._defer
            for th in threads:
                if not th.pending:
                    pc, program = th.pc, th.program
                    if pc >= len(program):
                        continue  # finished
                    word = program[pc]
                    if word >> 24 not in EXPANDED and not th.replay.load_left:
                        th.pc = pc + 1  # what fill() does with a word both expanders pass
                        th.pending.append(word)
                    elif not th.fill(self._expander_ub):
                        continue  # finished
                if th.blocked_at == th.held.changes:
                    # it waited (Wait Gate latch or its instruction's own wait) and since
                    # then nothing it waits for can have changed (see _hold): it waits still
                    # (the count now, not at the round's start: a lower thread's instruction
                    # in this round may have released it, as step() by step() sees)
                    continue
                if defer is not None and self._deferred_visit(th, defer):
                    moved = True
                    continue
                hit = words.get(th.pending[0])
                if hit is not None and hit[3] <= quick and latched[th.index] is None \
                        and not self._tracing \
                        and (hit[2] is None or hit[2](th.index, hit[0].fields) is None):
                    # _issue of an instruction without a wait of its own (_QUICK, or _QUIET:
                    # the epoch stays) or whose wait passes (_KNOWN: held, _issue says why),
                    # no latch at the Wait Gate, no insn hook: the same statements without
                    # the call
                    ins, t = hit[0], th.index
                    self._current = (t, ins.text, th.pc - 1)
                    th.blocked = None
                    th.blocked_at = -1
                    th.pending.popleft()
                    hit[1](t, ins.fields)
                    if hit[3]:  # (not _QUIET)
                        self._epoch.changes += 1
                    if macros.pending or sfpu._landing:
                        sfpu.idle_cycle(t)
                    th.executed += 1
                    self.steps += 1
                    moved = True
                elif self._issue(th, hit):
                    moved = True
            for th in last_first:  # (self.finished)
                if th.pending or th.pc < len(th.program):
                    break
            else:
                if macros.pending or sfpu._landing:  # SFPLOADMACRO's last instructions
                    sfpu.drain()
                return True
            if not moved:
                if quiet:
                    return None
                reasons = {th.index: str(th.blocked or "?") for th in threads
                           if not th.finished}
                lines = "; ".join(f"thread {t}: {r}" for t, r in reasons.items())
                raise DeadlockError(f"deadlock: no thread can make progress ({lines})",
                                    reasons)
            if not rounds:
                return False
            rounds -= 1 + self._sfp_extra  # (a run of SFP instructions: one round each)
            if rounds <= 0:
                return False

    def run(self, max_steps: int | None = 1_000_000) -> RunResult:
        """Run until every thread has finished. ``max_steps`` bounds executed instructions
        (:class:`StepLimitError` beyond it); ``None`` means no bound."""
        start = self.steps
        done = self.finished
        self._anything_changed()
        # a thread running alone may execute MVMULs and PACRs in runs (MatrixUnit.mvmul_run,
        # Packer.pacr_run), never beyond the step at which the limit below is noticed
        self._run_cap = start + max_steps + 1 if max_steps is not None else 1 << 62
        try:
            while not done:
                done = bool(self._round())
                if not done and max_steps is not None and self.steps - start > max_steps:
                    raise StepLimitError(f"the program did not finish within {max_steps} "
                                         f"steps (--max-steps)")
        finally:
            if self._defer is not None:
                self._flush()
            self._run_cap = 0
        return RunResult(self.steps - start, self.rounds,
                         tuple([th.executed for th in self.threads]))

    # -- undefined behaviour -----------------------------------------------------------------

    def report_ub(self, message: str) -> None:
        """Report undefined behaviour of the instruction being executed: the ``ub`` hooks
        hear of it, then the policy records it (and under ``"stop"`` raises)."""
        if self._defer is not None:  # (the deferred SFP instructions came first)
            self._flush()
        t, name, address = self._current
        self._anything_changed()  # (a hook may change anything)
        ev = UBEvent(t, name, message)
        self.hooks.fire("ub", self, address, message, ev)
        self.ub.record(ev)

    def _expander_ub(self, t: int, address: int, word: int, message: str) -> None:
        self._current = (t, f"{word:#010x}", address)
        self.report_ub(message)

    # -- the Wait Gate and execution ---------------------------------------------------------

    def _word(self, t: int, th: Thread, word: int) -> _Word:
        """What :meth:`_issue` needs of ``word``, decoded once (:data:`_Word`)."""
        try:
            ins = decode(word)
        except DecodeError as e:
            raise EmulationError(f"thread {t}: instruction {th.executed + 1}: {e.message}"
                                 ) from None
        execute, wait, _, unit = self._table[ins.opcode]  # type: ignore[misc]
        kind = (_SFPU if unit == "Sfpu" else
                _RUNS if ins.opcode in (MVMUL_OPCODE, PACR_OPCODE) else
                (_KNOWN if self._wait_reads.get(ins.opcode, (None,))[0] is wait else _PLAIN)
                if wait is not None else
                _QUIET if ins.opcode in self._quiet and self._quiet_skip else _QUICK)
        hit = (ins, execute, wait, kind)
        if self._words_table is not self._table or len(self._words) > 4096:
            self._words.clear()  # (the table was replaced: decode again)
            self._words_table = self._table
        self._words[word] = hit
        return hit

    def _issue(self, th: Thread, hit: _Word | None = None) -> bool:
        """Thread ``th`` tries to issue its first pending instruction (``hit``: what
        ``_words`` holds for it, when the caller has it); whether it moved."""
        t = th.index
        if hit is None:
            word = th.pending[0]
            hit = self._words.get(word)
            if hit is None:
                hit = self._word(t, th, word)
        ins, execute, wait, kind = hit
        sync = self.sync
        latched = sync.latched[t]
        if latched is not None:  # (sync.gate_blocks, one call fewer)
            if not sync.latched_holds(t):
                sync.latched[t] = None  # a satisfied latch is forgotten
                latched = None
            else:
                mask = latched.block_mask
                # a retry of the same instruction under the same mask is held still
                # (is_blocked depends on those two only) and keeps its blocked object
                b = th.blocked
                if type(b) is _GateBlocked and b.ins is ins and b.mask == mask:
                    self._hold(th, latched, ins, None)
                    return False
                if is_blocked(ins.name, mask):
                    th.blocked = _GateBlocked(sync, t, ins, mask)  # named when asked
                    self._hold(th, latched, ins, None)
                    return False
        address = th.pc - 1  # every pending word came from the last stream word expanded
        self._current = (t, ins.text, address)
        if wait is not None:
            reason = wait(t, ins.fields)
            if reason is not None:
                b = th.blocked  # (a retry blocked for the same reason keeps its own)
                if type(b) is not _WaitBlocked or b.ins is not ins or b.reason is not reason:
                    th.blocked = _WaitBlocked(ins, reason)
                self._hold(th, latched, ins, wait)
                return False
        th.blocked = None
        th.blocked_at = -1
        if kind <= _PLAIN:  # (or _KNOWN, _QUICK, _QUIET)
            th.pending.popleft()
            execute(t, ins.fields)
            if kind:  # (not _QUIET)
                self._epoch.changes += 1
            sfpu = self._sfpu
            if sfpu.macros.pending or sfpu._landing:  # (sfpu.scheduled): a cycle for
                sfpu.idle_cycle(t)  # SFPLOADMACRO's work
        else:
            if kind == _RUNS and self._runs(th, t, ins):
                return True
            if kind == _SFPU:
                if not self._tracing and self._rounds_left > 1 \
                        and self._run_cap > self.steps + 1 and ins.opcode in self._sfp_opcodes \
                        and self._next_sfp(th, 1) and self._others_blocked(t):  # (alone)
                    self._sfp_run(th, execute, ins)
                    return True
                elif self._sfp_defer and not self._hooked and self._defer_start(th, t):
                    th.pending.popleft()  # (the first of the loop: deferred)
                    th.executed += 1
                    self.steps += 1
                    return True
            th.pending.popleft()
            execute(t, ins.fields)
            if kind != _SFPU:
                self._epoch.changes += 1
                sfpu = self._sfpu
                if sfpu.macros.pending or sfpu._landing:
                    sfpu.idle_cycle(t)
        th.executed += 1
        self.steps += 1
        if self._tracing:  # (a hook may change anything)
            self._anything_changed()
            ev = Executed(self.steps, t, ins, self.rwc.text(t), address)
            self.hooks.fire("insn", self, address, 4, ev)
        return True

    def _hold(self, th: Thread, latched: Any, ins: Decoded, wait: Any) -> None:
        """Thread ``th`` waits with ``ins``: held by ``latched`` (its Wait Gate latch,
        ``wait`` None) or by the instruction's own ``wait`` (``latched``: its latch that does
        not hold it, or None). Records what must move before it is asked again
        (``th.held``, ``th.blocked_at``): the Changes of everything that wait reads, when
        known (a SEMWAIT's: the semaphores, SyncUnit.changes; a STALLWAIT's conditions: the
        Src banks' owners; a wait a unit lists in Unit.wait_reads, without a latch that a
        semaphore could satisfy meanwhile), else the epoch (any instruction but the quiet
        ones and the Vector Unit's)."""
        held = self._epoch
        if wait is None:
            if latched.opcode == "SEMWAIT":
                if self._gate_stamps:
                    held = self.sync
            elif self._wait_stamps:
                held = self._src_owners  # (latched_holds: C5..C8 read those only)
        elif latched is None and self._wait_stamps:
            reads = self._wait_reads.get(ins.opcode)
            if reads is not None and reads[0] is wait:  # (the table's wait, not replaced)
                held = reads[1]
        th.held = held
        th.blocked_at = held.changes

    def _anything_changed(self) -> None:
        """Code from outside may have run (a call, a hook): every wait is asked again."""
        self._epoch.changes += 1
        self.sync.changes += 1
        self._src_owners.changes += 1

    def _runs(self, th: Thread, t: int, ins: Decoded) -> bool:
        """A run of MVMULs or PACRs from ``ins`` (thread ``th``'s first pending instruction,
        whose waits passed), when the rules allow one; whether it ran."""
        runner = self._runners.get(ins.opcode)
        if runner is not None and self._run_cap > self.steps + 1 and not self._tracing \
                and (self._alone(t) or (ins.opcode == MVMUL_OPCODE and self._others_blocked(t))):
            n = runner(t, th.pending, self._run_cap - self.steps)
            if n:  # n instructions back to back: n rounds in which no other thread had work
                if n == len(th.pending):
                    th.pending.clear()
                else:
                    for _ in range(n):
                        th.pending.popleft()
                th.executed += n
                self.steps += n
                self.rounds += n - 1
                self._epoch.changes += 1
                return True
        if ins.opcode == PACR_OPCODE and self._pacr_runs and self._rounds_left > 1 \
                and self._run_cap > self.steps + 1 and not self._tracing \
                and self._others_blocked(t, writes_l1=True):
            # PACRs while the others wait for what PACR does not change: one round each,
            # within the caller's rounds (burst counts them), as one at a time
            n = self.units.pack.pacr_run(
                t, th.pending, min(self._rounds_left, self._run_cap - self.steps - 1))
            if n:
                for _ in range(n):
                    th.pending.popleft()
                th.executed += n
                self.steps += n
                self.rounds += n - 1
                self._sfp_extra += n - 1
                self._epoch.changes += 1
                return True
        return False

    def _next_sfp(self, th: Thread, i: int) -> bool:
        """Whether thread ``th``'s instruction after its ``i`` first pending ones is an SFP
        instruction it has (pending, or the next stream word, which the expanders pass
        through unchanged) that :meth:`_sfp_run` may run."""
        pending = th.pending
        if len(pending) > i:
            return pending[i] >> 24 in self._sfp_opcodes
        if len(pending) < i or th.pc >= len(th.program) or th.replay.load_left:
            return False
        return th.program[th.pc] >> 24 in self._sfp_opcodes  # (never MOP, MOP_CFG, REPLAY)

    def _sfp_run(self, th: Thread, execute: Execute, ins: Decoded) -> None:
        """Execute thread ``th``'s pending SFP instructions from ``ins`` (its first, whose
        wait and Wait Gate passed) as one round each while every other thread has finished
        or waits for something SFP instructions do not change (:meth:`_others_blocked`):
        the rounds one by one would have moved this thread only. Stops before an
        instruction that is not the Vector Unit's (or SFPLOADMACRO), is held at the Wait
        Gate or by its own wait, beyond the step cap or the caller's rounds, and after one
        that reported undefined behaviour (a hook may change anything). A loop among them (a
        body repeated over Dst, :class:`~.sfpu.block.SfpBlocks`) runs as one pass when its
        conditions hold. Steps, rounds and counts are those of one at a time."""
        t = th.index
        pending, sync, table = th.pending, self.sync, self._table
        limit = min(self._rounds_left, self._run_cap - self.steps - 1)
        epoch = self._epoch.changes
        issued = 0
        words, loops = self._sfp_loops(th, limit)
        i = 0  # the index in ``words`` of ``ins``
        try:
            while True:
                loop = loops.get(i) if loops else None
                if loop is not None and self.units.sfpu.blocks.run(  # type: ignore[union-attr]
                        t, loop[2], loop[0]):
                    n = loop[1]  # a loop in one pass: its words leave the queue as they would
                    queued = min(n, len(pending))
                    for _ in range(queued):
                        pending.popleft()
                    th.pc += n - queued  # (the rest from the stream)
                    issued += n
                    th.executed += n
                    self.steps += n
                    self._current = (t, decode(words[i + n - 1]).text, th.pc - 1)
                else:
                    pending.popleft()
                    issued += 1  # (its round is counted even when it raises, as one by one)
                    n = 1
                    execute(t, ins.fields)
                    th.executed += 1
                    self.steps += 1
                i += n
                if issued >= limit or self._epoch.changes != epoch or not self._next_sfp(th, 0):
                    return
                if not pending:  # what fill() does with a word the expanders pass through
                    pending.append(th.program[th.pc])
                    th.pc += 1
                word = pending[0]
                try:
                    ins = decode(word)
                except DecodeError:
                    return  # one by one says so
                if sync.latched[t] is not None and sync.gate_blocks(t, ins.name):
                    return
                execute, wait, _, _ = table[ins.opcode]  # type: ignore[misc]
                if wait is not None and wait(t, ins.fields) is not None:
                    return
                self._current = (t, ins.text, th.pc - 1)
        finally:
            self.rounds += issued - 1
            self._sfp_extra += issued - 1

    def _sfp_loops(self, th: Thread, limit: int
                   ) -> tuple[tuple[int, ...], dict[int, tuple[int, int, tuple[int, ...]]] | None]:
        """The SFP words thread ``th``'s run may execute (at most ``limit``, the first one
        pending, whose checks passed) and the loops :class:`~.sfpu.block.SfpBlocks` finds in
        them, each with its words (None when none are looked for: a Wait Gate latch; the run
        then goes one at a time). The words are SFP instructions without a wait of their
        own."""
        blocks = self.units.sfpu.blocks
        if blocks is None or limit < MIN_LOOP or self.sync.latched[th.index] is not None:
            return (), None
        sfp = self._sfp_nowait
        words: list[int] = []
        stream: list[int] = []  # (from the program; the memo's list when it is that run)
        for w in th.pending:
            if w >> 24 not in sfp:
                break
            words.append(w)
        else:
            if not th.replay.load_left:
                program, pc = th.program, th.pc
                end = min(len(program), pc + limit - len(words))
                # (SFP words only) a kernel repeats its runs: the last one from this word
                # after this pending one
                key = (words[0] if words else -1, program[pc] if pc < end else -1)
                last = self._sfp_seen.get(key) if pc < end else None
                if last is not None and pc + len(last) <= end \
                        and program[pc:pc + len(last)] == last:
                    pc += len(last)  # compared in C
                else:
                    last = None
                while pc < end and program[pc] >> 24 in sfp:
                    pc += 1
                if last is not None and pc - th.pc == len(last):
                    stream = last  # (the same list: SfpBlocks.loops_of knows it)
                else:
                    stream = program[th.pc:pc]
                    if len(stream) >= MIN_LOOP:
                        if len(self._sfp_seen) >= 64:
                            self._sfp_seen.clear()
                        self._sfp_seen[key] = stream
        if len(words) + len(stream) < MIN_LOOP:
            return (), None
        found = blocks.loops_of(tuple(words), stream, limit)
        heads = self._sfp_heads
        if len(heads) > 4096:
            heads.clear()
        for period, _n, loop in found[1].values():
            heads.update(loop[::period])  # (a loop from any of its repetitions is one)
        return found

    def _others_blocked(self, t: int, writes_l1: bool = False) -> bool:
        """Whether every thread but ``t`` has finished or is held at the Wait Gate by
        something a run of MVMULs does not change until its last instruction: a latched
        SEMWAIT/STALLWAIT (semaphores, Src bank ownership) or its instruction's own wait
        (Src banks, a mutex, L1, which MVMULs do not write). The run ends with the first
        MVMUL that flips a bank, in the round where a lower thread has already tried and a
        higher one tries after it, as one by one; so the result, the counts and the
        rounds are the same. Not with SFPLOADMACRO work scheduled (it advances per
        instruction). ``writes_l1``: the run writes L1 (PACRs), so a thread whose own wait
        reads L1 (ATCAS, ATINCGETPTR) may move."""
        sfpu = self._sfpu
        if sfpu.macros.pending or sfpu._landing:  # (sfpu.scheduled)
            return False
        for th in self.threads:
            if th.index == t or (not th.pending and th.pc >= len(th.program)):
                continue
            if not th.pending:
                return False  # it would take its next word from the MOP expander
            word = th.pending[0]
            hit = self._words.get(word)
            if hit is None:
                hit = self._word(th.index, th, word)
            held = th.held
            if held is not self._epoch and th.blocked_at == held.changes:
                continue  # (held still by what it waits for, as _round knows: see _hold)
            ins, _, wait, _ = hit
            sync = self.sync
            latched = sync.latched[th.index]
            if latched is not None:
                if sync.latched_holds(th.index) and is_blocked(ins.name, latched.block_mask):
                    continue
            if wait is None or (writes_l1 and self._table[ins.opcode][3] == "ScalarMemoryUnit") \
                    or wait(th.index, ins.fields) is None:  # type: ignore[index]
                return False
        return True

    # -- SFP instructions deferred -----------------------------------------------------------

    def _defer_start(self, th: Thread, t: int) -> bool:
        """Whether thread ``th``'s first pending instruction (an SFP instruction whose checks
        passed, while another thread moves) starts a deferral: it begins a loop
        (:meth:`_sfp_loops`) whose pass may run now (:meth:`~.sfpu.block.SfpBlocks.prepare`:
        every lane enabled, its Dst rows valid, so that none of its instructions reports
        undefined behaviour), no latch holds the Wait Gate, and the threads after ``th`` in
        this round issue nothing that conflicts
        (:meth:`~.sfp_defer.Interference.harmless`). The caller then takes the instruction as
        issued without executing it."""
        word = th.pending[0]
        if word not in self._sfp_heads:  # (no loop found so far began with it: looked for
            tried = self._sfp_tried  # once, as it costs)
            if word in tried:
                return False
            if len(tried) > 4096:
                tried.clear()
            tried.add(word)
        blocks = self._sfpu.blocks
        if blocks is None or self._sfpu.scheduled or self.sync.latched[t] is not None \
                or th.replay.load_left:
            return False
        for other in self.threads[t + 1:]:
            if not self._interference.harmless(other, t, None):
                return False
        words, loops = self._sfp_loops(th, 1 << 30)
        loop = loops.get(0) if loops else None
        if loop is None:
            return False
        period, n, loop_words = loop
        dst = self.dst
        flags = dst.remap_addrs, dst.swizzle_32b
        ready = blocks.prepare(t, loop_words, period)
        dst.remap_addrs, dst.swizzle_32b = flags  # (the first SFPLOAD/SFPSTORE sets them)
        if ready is None:
            return False
        mregs = self.units.matrix.math_regs(t)
        plan = ready[1]
        d = Deferred(t, loop_words, period, n, None if plan is None else plan.rows,
                      (mregs.remap_addrs, mregs.swizzle_32b), ready)
        if plan is not None and len(plan.rows):
            d.span = self._interference.span_of(plan)
        for other in self.threads[t + 1:]:  # (now with the rows: a ZEROACC's)
            if not self._interference.harmless(other, t, d):
                return False
        self._defer = d
        self.sfp_deferred += 1
        return True

    def _deferred_visit(self, th: Thread, d: Deferred) -> bool:
        """A round's visit to thread ``th`` while ``d`` may be deferred: the deferring thread
        takes its loop's next word as issued (or, the others waiting, the next ones:
        :meth:`_defer_run`) and True; another thread's next instruction that is not
        :meth:`~.sfp_defer.Interference.harmless` first makes the deferred ones execute."""
        if self._defer is not d:
            return False  # (executed earlier in this round)
        if th.index != d.t:
            if not self._interference.harmless(th, d.t, d):
                self._flush()
            return False
        k, pending = d.k, th.pending  # (no latch, no wait of its own: it issues)
        if pending[0] != d.words[k]:
            self._flush()  # (not the loop's next word: never, as _defer_start saw)
            return False
        if k + 2 <= d.n and self._rounds_left > 1 and self._run_cap > self.steps + 1 \
                and self._others_blocked(d.t):  # (as _issue's _sfp_run)
            self._defer_run(th, d)
            return True
        pending.popleft()  # (one round)
        th.executed += 1
        self.steps += 1
        d.k = k = k + 1
        if k == d.n:
            self._flush()
        return True

    def _defer_run(self, th: Thread, d: Deferred) -> None:
        """Thread ``th`` issues the next instructions of its deferred loop ``d`` while every
        other thread waits for something SFP instructions do not change, as :meth:`_sfp_run`
        would, one round each, within the caller's rounds and the step cap: taken as issued,
        executed when the loop's last is."""
        m = min(d.n - d.k, self._rounds_left, self._run_cap - self.steps - 1)
        pending = th.pending
        queued = min(m, len(pending))
        if queued == len(pending):
            pending.clear()
        else:
            for _ in range(queued):
                pending.popleft()
        th.pc += m - queued  # (the rest from the stream, where _sfp_loops found them)
        th.executed += m
        self.steps += m
        self.rounds += m - 1
        self._sfp_extra += m - 1
        d.k += m
        if d.k == d.n:
            self._flush()

    def _flush(self) -> None:
        """Execute the deferred SFP instructions (whole body repetitions as one pass, the
        rest one at a time) and end the deferral."""
        d = self._defer
        if d is None:
            return
        self._defer = None
        t, words, period, k = d.t, d.words, d.period, d.k
        done = k - k % period
        blocks = self._sfpu.blocks
        if blocks is None:
            done = 0
        elif done == d.n:
            # the whole loop: what _defer_start prepared holds still (the instructions run
            # since change nothing it depends on); the Dst addressing bits as it sets them
            if d.ready[0].modes:
                self.dst.remap_addrs, self.dst.swizzle_32b = d.flags
            blocks.execute(d.ready)
        elif done and not blocks.run(t, words[:done], period):
            done = 0
        if done < k:
            current, table = self._current, self._table
            for w in words[done:k]:
                ins = decode(w)
                self._current = (t, ins.text, self._current[2])
                table[ins.opcode][0](t, ins.fields)  # type: ignore[index]
            self._current = current

    def _alone(self, t: int) -> bool:
        """Whether every thread but ``t`` has finished (and so stays finished)."""
        for th in self.threads:
            if th.index != t and (th.pending or th.pc < len(th.program)):
                return False
        return True

    def _not_implemented(self, name: str) -> Execute:
        def execute(t: int, f: Fields) -> None:
            raise NotImplementedInstruction(f"thread {t}: not implemented: {name} "
                                            f"({self._current[1].expandtabs(1)})")
        return execute

    def state_id(self, t: int) -> int:
        """The Config bank thread ``t`` uses (its CFG_STATE_ID)."""
        return self.thread_config.bank(t)

    def cfg(self, t: int, name: str) -> int:
        """A Config field as thread ``t`` sees it (its CFG_STATE_ID bank)."""
        return thread_cfg(self.config, self.thread_config, t, name)


#: the kinds of instruction :meth:`Coprocessor._issue` tells apart (see _Word): a quiet one
#: (:meth:`~.dispatch.Unit.quiet`: the epoch stays), any other instruction without a wait of
#: its own, one whose wait a unit lists in Unit.wait_reads (it reads only what that says
#: and reports nothing: a round issues these three itself), any other, MVMUL or PACR (runs
#: of them), the Vector Unit's
_QUIET, _QUICK, _KNOWN, _PLAIN, _RUNS, _SFPU = 0, 1, 2, 3, 4, 5
#: a decoded word: (the instruction, its execute, its own wait or None, its kind)
_Word = tuple[Decoded, Execute, Any, int]

class _WaitBlocked:
    """Why a thread waits at the Wait Gate for its instruction's own wait (``str``)."""

    __slots__ = ("ins", "reason")

    def __init__(self, ins: Decoded, reason: str) -> None:
        self.ins, self.reason = ins, reason

    def __str__(self) -> str:
        return f"{self.ins.text.expandtabs(1)}: {self.reason}"


class _GateBlocked:
    """Why a thread waits at the Wait Gate for its latched wait, named only when read
    (``str``): the wait's unmet conditions as they are then (a report is read when nothing
    has moved since)."""

    __slots__ = ("sync", "t", "ins", "mask")

    def __init__(self, sync: Any, t: int, ins: Decoded, mask: int) -> None:
        self.sync, self.t, self.ins = sync, t, ins
        self.mask = mask  # the latched wait's block mask that held ``ins`` (for retries)

    def __str__(self) -> str:
        w, unmet = self.sync.latched[self.t], self.sync.latched_unmet(self.t)
        text = self.ins.text.expandtabs(1)
        if w is None or not unmet:
            return f"{text}: waiting for its latched wait (satisfied since)"
        return (f"{text}: {w.opcode} (block mask {w.block_mask:#05x}) waiting: "
                + "; ".join(unmet))


__all__ = ["HOOK_KINDS", "Coprocessor", "Executed", "RunResult", "Thread", "Units"]
