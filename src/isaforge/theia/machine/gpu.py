"""The THEIA GPU at instruction level: control processor, memory controller, CCB, VPs.

Python API (Unicorn-like verbs; the machine never prints)::

    from isaforge.theia import Gpu
    gpu = Gpu(cores=4)
    gpu.load(code_words, control_words, tmem_words)   # as the RTL test bench loads them
    result = gpu.run()                                # CP + VPs until done
    gpu.registers(2)[66]                              # (x, y, z) of VP 2's R66
    gpu.omem(2, 32)                                   # VP 2's first 32 OMEM words
    h = gpu.hook_add("insn", lambda gpu, address, size, info: ...)  # see .hooks
    gpu.hook_del(h)

``run`` interleaves the CP and the VPs in slices (the CP's copies complete at once; the
ISA level has no clock). The run ends when the CP has executed EXIT (or is spinning with no
effect, e.g. ``while (1) {}``) and no VP is running; a step limit stops runaway programs
with an :class:`~isaforge.core.errors.EmulationError`.

By default the machine is the one the design describes. The RTL's known defects are modelled
only when asked for (``quirks``, see :data:`QUIRKS`); :attr:`RunResult.notes` says where the
default run differs from what the RTL would do.

The RTL itself, exactly (what ``isaforge theia run --rtl`` runs)::

    gpu = Gpu(quirks={"all"})            # or Gpu(rtl=True), or Gpu(quirks=Quirks.rtl())
    gpu.load(code_words, control_words, tmem_words)
    result = gpu.run()                   # final state as the RTL's dumps; result.cycles
    Gpu(quirks={"div-reissue"})          # one timed defect, as --rtl-quirk div-reissue

The defects that depend on when results commit (:data:`TIMED_QUIRKS`: the issue unit's
re-issues, the pipeline's defects, the MCU's lost counters) have no instruction-level rule:
with any of them, or ``"all"``, ``run()`` is a *timed run*: the cycle model runs the test
bench from reset and decides what each VP issues, exactly as the command line's ``--rtl`` /
``--rtl-quirk NAME`` (:mod:`.timed` says what ``step()`` and the hooks do then). The other
quirks (``tmem-row0``, ``first-eof``, ``cp-exit-noop``, ``cp-not-noop``) alone keep the
instruction-level run, as on the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...core.errors import EmulationError
from ...core.hooks import Hooks
from .ccb import CMD_START, CMD_STOP, Message, route
from .cp import ADD, ASSIGN, NOT, OR, SHL, SHR, ControlProcessor, CpBus
from .hooks import (
    HOOK_KINDS,
    MAX_VPS,
    OMEM_BASE,
    WINDOW,
    InsnInfo,
    RegInfo,
    VpHooks,
    imem_address,
)
from .memory import CopyRequest, MainMemory, MemoryController, TMem
from .options import DEFAULT_MAX_STEPS, QUIRK_ALIASES, QUIRKS
from .vp import OMEM_SIZE, VectorProcessor

MAX_CORES = MAX_VPS
MAX_OMEM = WINDOW // 4  # words: one VP's OMEM window in the hooks' address map
CP_SLICE = 64
VP_SLICE = 4096
CP_IDLE_LIMIT = 4096  # CP instructions without a copy or command while no VP runs

#: the quirks whose effect depends on when results commit: with any of them (or "all") the
#: cycle model runs the GPU (the pipeline's own defects are named in
#: :data:`isaforge.theia.cycle.runner.PIPELINE_QUIRKS`)
TIMED_QUIRKS = ("reissue-after-branch", "div-reissue", "mcu-lost", "branch-dep-reissue",
                "branch-next-cycle", "no-smu-stall", "rtl-scoreboard", "rtl-structural")
DEFAULT_MAX_CYCLES = 20_000_000  # a timed run: cycles of its own after which a VP is stopped


@dataclass
class RunResult:
    """How a run went."""

    ended: str  # "done", "cp-spinning", "cp-wrapped", "first-eof"
    vp_instructions: int
    cp_instructions: int
    finished: list[int]  # VPs whose threads all reached EOF
    started: list[int]  # VPs the CP started
    first_eof: int | None  # the VP whose EOF ended a "first-eof" run
    notes: list[str] = field(default_factory=list)  # where the RTL would differ
    # a timed run (RTL quirks): VP -> its cycles from its start to its end (or to where it
    # was stopped), the stamp in ns of each VP's first cycle (the RTL's time base, reset at
    # 0 ns), the stamp where the first EOF ended the run (first-eof), and the runner's record
    cycles: dict[int, int] = field(default_factory=dict)
    start_ns: dict[int, int] = field(default_factory=dict)
    end_ns: int | None = None
    timed: Any = field(default=None, repr=False, compare=False)

    @property
    def dumped(self) -> list[int]:
        """The VPs whose registers/OMEM a test bench run would dump."""
        if self.first_eof is not None:
            return [self.first_eof]
        return self.started


class Gpu:
    """A THEIA GPU with ``cores`` VPs (1..16)."""

    def __init__(self, cores: int = 4, quirks: Iterable[str] | Any = (),
                 omem_size: int = OMEM_SIZE, *, rtl: bool = False) -> None:
        """``quirks``: names from :data:`QUIRKS` and :data:`TIMED_QUIRKS` (or ``"all"``: every
        defect, the RTL), or a :class:`isaforge.theia.cycle.Quirks` (the cycle model's
        flags, a timed run); ``rtl=True`` is ``quirks={"all"}``."""
        from .timed import cycle_quirks

        if not 1 <= cores <= MAX_CORES:
            raise EmulationError(f"a THEIA GPU has 1 to {MAX_CORES} VPs, not {cores}")
        if not 1 <= omem_size <= MAX_OMEM:
            raise EmulationError(f"OMEM holds 1 to {MAX_OMEM} words, not {omem_size}")
        if isinstance(quirks, str):
            raise EmulationError(f"quirks is a collection of names: {{'{quirks}'}}, not "
                                 f"'{quirks}'")
        #: the cycle model's flags when the run is timed (see the module docstring), else None
        self.timed_quirks: Any = None
        if hasattr(quirks, "refetch_after_fifo"):  # a cycle model Quirks
            self.timed_quirks, quirks = quirks, ()
        names = {QUIRK_ALIASES.get(q, q) for q in quirks} | ({"all"} if rtl else set())
        unknown = sorted(names - QUIRKS.keys() - set(TIMED_QUIRKS) - {"all"})
        if unknown:
            raise EmulationError(f"unknown RTL quirk '{unknown[0]}' (known: "
                                 f"{', '.join(sorted({*QUIRKS, *TIMED_QUIRKS, 'all'}))})")
        if self.timed_quirks is None:
            self.timed_quirks = cycle_quirks(names)
        self.quirks = frozenset(names)
        # the instruction-level machine's quirks (a timed run's CP and MCU are the RTL's)
        isa = frozenset(names & {"tmem-row0", "first-eof", "cp-exit-noop", "cp-not-noop"})
        self.cores = cores
        self.omem_size = omem_size
        self.memory = MainMemory()
        self.tmem = TMem()
        self.code_image: list[int] = []
        self.control_program: list[int] = []
        self.tmem_image: list[int] | None = None
        self._isa_quirks = isa
        self.last_result: RunResult | None = None  # a timed run's, also when it raised
        self.mcu = MemoryController(self.memory, cores)
        self.cp = self._new_cp(())
        self.vps = [VectorProcessor(i, self.tmem, omem_size, isa) for i in range(cores)]
        self.messages: list[Message] = []
        self.unrouted_messages: list[Message] = []
        self._hooks = Hooks(HOOK_KINDS, on_change=self._hooks_changed)
        self._cp_step: Callable[[CpBus], None] = self.cp.step

    # ---------------------------------------------------------------- hooks

    def hook_add(self, kind: str, callback: Callable[..., Any], begin: int | None = None,
                 end: int | None = None) -> int:
        """Call ``callback`` on each event of ``kind`` ("insn", "mem_write", "reg_write";
        see :mod:`.hooks` for the arguments) whose address (register number for
        "reg_write") lies in ``begin..end``, both included; returns the handle that
        :meth:`hook_del` takes. Hooks observe: a callback must not change the machine."""
        return self._hooks.add(kind, callback, begin, end)

    def hook_del(self, handle: int) -> None:
        """Remove the hook :meth:`hook_add` returned ``handle`` for."""
        self._hooks.delete(handle)

    def omem_range(self, index: int) -> tuple[int, int]:
        """(begin, end) of VP ``index``'s OMEM in the hooks' address map (``mem_write``)."""
        base = OMEM_BASE + self.vp(index).index * WINDOW
        return base, base + 4 * self.omem_size - 1

    def _hooks_changed(self) -> None:
        on = self._hooks.any()
        for vp in self.vps:
            vp.set_hook(VpHooks(self, self._hooks, vp) if on else None)
        self._cp_step = self._cp_step_hooked if on else self.cp.step

    def _cp_step_hooked(self, bus: CpBus) -> None:
        """One CP instruction, with its hooks."""
        cp = self.cp
        hooks = self._hooks
        ip = cp.ip
        word = cp.ram[ip]
        hooks.fire("insn", self, 4 * ip, 4, InsnInfo("CP", None, 0, word))
        cp.step(bus)
        op = word >> 24 & 0x1F
        if (ADD <= op <= OR or op in (ASSIGN, SHL, SHR)
                or (op == NOT and not cp.not_is_noop)) and hooks.any("reg_write"):
            dst = word >> 16 & 0xFF
            hooks.fire("reg_write", self, dst, cp.regs[dst], RegInfo("CP", None, 7, "insn"))

    def _new_cp(self, program: Sequence[int]) -> ControlProcessor:
        cp = ControlProcessor(program, exit_is_noop="cp-exit-noop" in self._isa_quirks,
                              not_is_noop="cp-not-noop" in self._isa_quirks)
        cp.exited = not program  # no control program: the CP stays idle
        return cp

    # ---------------------------------------------------------------- loading

    def load(self, code: Iterable[int], control: Sequence[int] | None = None,
             tmem: Iterable[int] | None = None) -> None:
        """Load as the test bench does: the VP program (64-bit words) into main memory as
        32-bit words (high first), the CP program into the CP's RAM, ``tmem`` words into the
        TMEM banks (word a -> bank a % 4, row a // 4)."""
        self.code_image = [int(w) for w in code]
        self.memory = MainMemory.from_vp_words(self.code_image)
        self.mcu.memory = self.memory
        if control is not None:
            self.control_program = [int(w) for w in control]
            self.cp = self._new_cp(self.control_program)
            self._cp_step = self._cp_step_hooked if self._hooks.any() else self.cp.step
        if tmem is not None:
            self.tmem_image = [int(w) for w in tmem]
            self.tmem = TMem(self.tmem_image)
            for vp in self.vps:
                vp.tmem = self.tmem

    def load_vp(self, index: int, code: Iterable[int], start: bool = True) -> None:
        """Put a program straight into one VP's code memory (no CP needed) and start it."""
        vp = self.vp(index)
        vp.load_code(code)
        if start:
            vp.start()

    def vp(self, index: int) -> VectorProcessor:
        if not 0 <= index < self.cores:
            raise EmulationError(f"no VP {index}: this GPU has VPs 0..{self.cores - 1}")
        return self.vps[index]

    # ---------------------------------------------------------------- state

    def registers(self, index: int) -> np.ndarray:
        """VP ``index``'s registers, (256, 3) uint32."""
        return self.vp(index).registers

    def register(self, index: int, row: int) -> tuple[int, int, int]:
        return self.vp(index).read_row(row)

    def write_register(self, index: int, row: int, lanes: tuple[int, int, int],
                       we: int = 7) -> None:
        self.vp(index).write_row(row, lanes, we)

    def omem(self, index: int, count: int | None = None) -> np.ndarray:
        """VP ``index``'s OMEM words (a copy; all of it, or the first ``count``)."""
        om = self.vp(index).omem
        return om[: count if count is not None else len(om)].copy()

    # ---------------------------------------------------------------- CP bus

    def cp_status(self) -> int:
        return self.mcu.status()

    def cp_copy(self, request: CopyRequest) -> None:
        self.mcu.request(request, self._write_code, self._write_data)

    def _write_code(self, vp: int, address: int, word: int) -> None:
        self.vps[vp].write_code(address, word)
        if self._hooks.any("mem_write"):
            self._hooks.fire("mem_write", self, imem_address(vp, address), 8, word)

    def _write_data(self, vp: int, row: int, lanes: tuple[int, int, int]) -> None:
        target = self.vps[vp]
        target.write_row(row, lanes)
        if self._hooks.any("reg_write"):
            self._hooks.fire("reg_write", self, row & 0xFF, target.read_row(row),
                             RegInfo(f"VP{vp}", vp, 7, "mcu"))

    def cp_message(self, message: Message) -> None:
        self.messages.append(message)
        targets = route(message, self.cores)
        if not targets:
            self.unrouted_messages.append(message)
        for i in targets:
            if message.command == CMD_START:
                self.vps[i].start()
            elif message.command == CMD_STOP:
                self.vps[i].stop()

    # ---------------------------------------------------------------- running

    def step(self) -> bool:
        """One CP instruction (if the CP runs) and one instruction of every running VP.
        False when nothing could run. Not for a timed run (RTL quirks), whose unit is a
        clock cycle: an :class:`EmulationError` says so."""
        if self.timed_quirks is not None:
            raise EmulationError("Gpu.step() executes one instruction of each core, which "
                                 "cannot be exact with the RTL's timing quirks ("
                                 f"{', '.join(sorted(self.quirks)) or 'a cycle model Quirks'}"
                                 "): the cycle model decides what is issued when; use run()")
        progressed = False
        if not self.cp.exited:
            self._cp_step(self)
            progressed = True
        for vp in self.vps:
            if vp.running and vp.step():
                progressed = True
        return progressed

    def run(self, max_steps: int = DEFAULT_MAX_STEPS,
            max_cycles: int = DEFAULT_MAX_CYCLES) -> RunResult:
        """Run CP and VPs until the program is over; see the module docstring.

        ``max_steps`` bounds an instruction-level run (an :class:`EmulationError` past it).
        A timed run (RTL quirks) starts from reset and stops a VP that has not ended after
        ``max_cycles`` cycles of its own; a run that does not end as the test bench's
        does (the RTL never finishes it) raises an :class:`EmulationError` saying where
        each VP is, the GPU left in the state reached."""
        if self.timed_quirks is not None:
            return self._run_timed(max_cycles)
        cp = self.cp
        steps = 0
        idle = 0
        first_eof = None
        ended = "done"
        first_eof_quirk = "first-eof" in self.quirks
        while True:
            if not cp.exited and not cp.wraps:
                before = cp.side_effects
                cp_step = self._cp_step
                for _ in range(CP_SLICE):
                    cp_step(self)
                    if cp.exited:
                        break
                steps += CP_SLICE
                idle = idle + CP_SLICE if cp.side_effects == before else 0
            running = False
            for vp in self.vps:
                if vp.running:
                    steps += vp.run(VP_SLICE)
                    if first_eof_quirk and vp.stopped[0]:
                        first_eof = vp.index
                        break
                    running = running or vp.running
            if first_eof is not None:
                ended = "first-eof"
                break
            if not running:
                if cp.exited:
                    break
                if cp.wraps:  # EXIT did nothing: the program would start over
                    ended = "cp-wrapped"
                    break
                if idle >= CP_IDLE_LIMIT and not any(vp.running for vp in self.vps):
                    ended = "cp-spinning"
                    break
            if steps > max_steps:
                raise EmulationError(self._runaway(max_steps))
        started = [vp.index for vp in self.vps if vp.started]
        finished = [vp.index for vp in self.vps if vp.started and not vp.running]
        result = RunResult(ended, sum(vp.instructions for vp in self.vps), cp.steps, finished,
                           started, first_eof)
        result.notes = self._notes(result)
        return result

    def _run_timed(self, max_cycles: int) -> RunResult:
        """``run`` on the cycle model (see :mod:`.timed`)."""
        from .timed import run_gpu

        run = run_gpu(self, self.timed_quirks, max_cycles)
        models = run.models
        started = sorted(i for i in run.boot.starts if i < self.cores)
        result = RunResult(
            "first-eof" if run.end_ns is not None else "done",
            sum(m.issues for m in models.values()), run.boot.cycles,
            [i for i, m in sorted(models.items()) if m.done], started, run.first_eof,
            cycles={i: m.finished_at if m.done and m.finished_at is not None else m.cycle
                    for i, m in sorted(models.items())},
            start_ns={i: run.start_ns(i) for i in sorted(models)}, end_ns=run.end_ns,
            timed=run)
        unmodelled = sorted(self.quirks & {"cp-exit-noop", "cp-not-noop"})
        if unmodelled:
            result.notes.append(f"{', '.join(unmodelled)}: the timed run's CP always runs the "
                                "RTL's way (EXIT and NOT doing nothing), and its MCU is the "
                                "RTL's")
        data = sum(not c.request.code for c in run.boot.copies)
        if data:
            result.notes.append(f"{data} COPYBLOCK(s) of data: the timed run does not model "
                                "data copies into the VPs' registers (they stay as at reset)")
        self.last_result = result
        if not run.ended:
            raise EmulationError(f"the run does not end within {max_cycles} cycles: "
                                 f"{run.still_running()}")
        return result

    def _runaway(self, max_steps: int) -> str:
        busy = [vp for vp in self.vps if vp.running]
        if busy:
            where = ", ".join(f"VP{vp.index} at PC {vp.pc[0]}" for vp in busy)
            return (f"runaway program: still running after {max_steps} steps ({where}); "
                    "raise --max-steps if it is just long")
        return (f"runaway control program: the CP is still running after {max_steps} steps "
                f"(IP {self.cp.ip})")

    def _notes(self, result: RunResult) -> list[str]:
        q = self.quirks
        notes = []
        tmreads = sum(vp.tmreads for vp in self.vps)
        if tmreads and "tmem-row0" not in q:
            notes.append(f"{tmreads} TMREAD(s) read the addressed TMEM words; the RTL returns "
                         "row 0 of banks 0..2 instead (--rtl-quirk tmem-row0)")
        if any(vp.instructions for vp in self.vps):
            notes.append("the RTL issues the instruction after each branch twice, which "
                         "changes results when that instruction reads its own destination "
                         "(--rtl-quirk reissue-after-branch)")
        divs = sum(vp.divs for vp in self.vps)
        if divs:
            notes.append(f"{divs} DIV(s) completed; the RTL re-issues an instruction that "
                         "waited for a busy station, which makes some DIV loops livelock "
                         "(isaforge theia run --rtl runs its timing)")
        if self.mcu.back_to_back:
            notes.append(f"{self.mcu.back_to_back} copy request(s) made while another was "
                         "pending were performed; the RTL's MCU re-loads its address counters "
                         "when a request arrives during a copy, so such copies land shifted "
                         "or elsewhere (--rtl-quirk mcu-lost)")
        if "first-eof" not in q and len(result.started) > 1:
            notes.append("the RTL test bench stops at the first VP's EOF and dumps only that VP "
                         "(--rtl-quirk first-eof); here every VP ran to its end")
        if result.ended == "cp-wrapped":
            notes.append("the CP ran past EXIT (a no-op in the RTL) through the zero-filled RAM "
                         "back to IP 0, where the control program would start over: the run "
                         "was ended there (the RTL's test bench ends at the first EOF: "
                         "--rtl-quirk first-eof)")
        if self.cp.exited and "cp-exit-noop" not in q:
            notes.append("the CP stopped at EXIT; in the RTL EXIT is a no-op and the CP runs on "
                         "(--rtl-quirk cp-exit-noop)")
        if self.cp.nots and "cp-not-noop" not in q:
            notes.append(f"{self.cp.nots} CP NOT(s) executed; the RTL has no NOT "
                         "(--rtl-quirk cp-not-noop)")
        for req in self.mcu.unrouted:
            notes.append(f"{req} reached no VP (DstId {req.dst_id} on a {self.cores}-VP GPU)")
        for msg in self.unrouted_messages:
            notes.append(f"CCB message to {msg.dst} (command {msg.command}) reached no VP: VP i "
                         "answers to i + 1, and a broadcast needs bit 7 (128)")
        dropped = sum(vp.omem_dropped for vp in self.vps)
        if dropped:
            notes.append(f"{dropped} OMEM write(s) past the {self.omem_size}-word OMEM were "
                         "dropped")
        if not result.started:
            notes.append("no VP was started (the CP never delivered a START to an existing VP)")
        return notes


__all__ = ["DEFAULT_MAX_CYCLES", "DEFAULT_MAX_STEPS", "MAX_CORES", "QUIRKS", "TIMED_QUIRKS",
           "Gpu", "RunResult"]
