"""Running the cycle model for the command line: vp.N.log files and VCD waveforms."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ...core.errors import EmulationError
from ..machine.alu import OP_DIV
from . import events as ev
from .boot import Boot, boot
from .model import VPCycleModel
from .quirks import DESIGNED, Quirks
from .vplog import CLOCK_NS, LogFormatter

if TYPE_CHECKING:
    import numpy as np

DEFAULT_CYCLE_LIMIT = 20_000_000
STREAM_WINDOW = 1 << 15  # cycles run between two writes of the traces
GC_YOUNG = 100_000

# ``--rtl-quirk`` names (the simulator's, isaforge.theia.machine.gpu.QUIRKS, and the cycle
# model's own) -> the cycle model's flags
QUIRK_FLAGS: dict[str, tuple[str, ...]] = {
    "reissue-after-branch": ("refetch_after_fifo", "branch_next_cycle"),
    "mul-twice": ("refetch_after_fifo", "branch_next_cycle"),
    "div-reissue": ("refetch_after_fifo",),
    "tmem-row0": ("tmem_row0",),
    "first-eof": ("stop_at_eof",),
    "branch-next-cycle": ("branch_next_cycle",),
    "branch-dep-reissue": ("branch_dep_reissue",),
    "rtl-scoreboard": ("rtl_scoreboard",),
    "no-smu-stall": ("no_smu_stall",),
    "rtl-structural": ("rtl_structural",),
}
# the names only the cycle model has (the pipeline's defects), with what they do
PIPELINE_QUIRKS: dict[str, str] = {
    "branch-next-cycle": "the RTL's issue unit decides a branch by whatever commits the cycle "
                         "after its issue",
    "branch-dep-reissue": "the RTL issues a branch whose operands were pending a second time "
                          "once they arrive",
    "rtl-scoreboard": "the RTL's dependency table: one entry per register, cleared by any "
                      "commit to it; never-written entries read as x (the issue is dropped)",
    "no-smu-stall": "the RTL's issue unit does not stall when the SMU's 4 slots are full",
    "rtl-structural": "the RTL checks a busy station only for ADD, DIV, MUL and IO",
}
# names whose effect depends on when results commit: with any of them the cycle model decides
# what is issued (a timed run), not the instruction-level simulator
# (mcu-lost: the MCU's defect depends on when the requests arrive; the timed run's boot runs
# the MCU cycle by cycle, defect included)
TIMED_QUIRKS = frozenset({"reissue-after-branch", "mul-twice", "div-reissue", "mcu-lost",
                          *PIPELINE_QUIRKS})


def lanes_written(known: Iterable[int]) -> list[tuple[bool, bool, bool]]:
    """Per register, whether its x, y, z lanes hold a defined value (from a model's
    ``known`` bits: x = 4, y = 2, z = 1), as the dumps take them."""
    return [(bool(k & 4), bool(k & 2), bool(k & 1)) for k in known]


def quirks_from_names(names: Iterable[str]) -> Quirks:
    """The cycle model's flags for ``--rtl-quirk`` names ("all": every RTL defect,
    ``Quirks.rtl()``)."""
    names = set(names)
    if "all" in names:
        return Quirks.rtl()
    flags: dict[str, bool] = {}
    for n in names:
        for f in QUIRK_FLAGS.get(n, ()):
            flags[f] = True
    return replace(DESIGNED, **flags) if flags else DESIGNED


def is_timed(names: Iterable[str]) -> bool:
    """Whether the quirks ``names`` need the cycle model to decide what is issued."""
    names = set(names)
    return "all" in names or bool(names & TIMED_QUIRKS)


def run_system(code: Sequence[int], control: Sequence[int], tmem: Sequence[int] | None, *,
               quirks: Quirks = DESIGNED, cores: int = 4,
               max_cycles: int = DEFAULT_CYCLE_LIMIT) -> tuple[Boot, dict[int, VPCycleModel],
                                                               int | None]:
    """The whole test bench from reset: the CP program's timeline (:mod:`.boot`), then every
    VP it starts on the cycle model, each with the code the MCU copied into it and its own
    start cycle. Returns the boot timeline, the models by VP, and (with ``stop_at_eof``, the
    RTL test bench's ``$finish``) the stamp in ns at which the first EOF ended the run."""
    b = boot(control, code, cores=cores)
    models = {}
    for i in sorted(b.starts):
        models[i] = VPCycleModel(b.code.get(i, []), quirks=quirks, tmem=tmem, vp=i,
                                 clock0=b.enable_cycle(i)).run(until=max_cycles)
    end_ns = None
    if quirks.stop_at_eof:
        ends = [b.start_ns(i) + CLOCK_NS * m.finished_at for i, m in models.items()
                if m.done and m.finished_at is not None]
        end_ns = min(ends) if ends else None
    return b, models, end_ns


def _stream_system(models: dict[int, VPCycleModel], starts: dict[int, int], *,
                   max_cycles: int, stop_at_eof: bool, window: int,
                   drain: Callable[[int, VPCycleModel, int | None], None]) -> int | None:
    """Run ``models`` side by side, ``window`` cycles of absolute time at a time (VP ``i``'s
    cycle 0 is at ``starts[i]`` ns), and after each window hand every model to ``drain``
    (which takes its new events) with the stamp in ns where the run ended, once known: the
    first EOF of any VP with ``stop_at_eof``, where the other VPs are stopped too. Returns
    that stamp (None: every VP ran to its end or to ``max_cycles``).

    While it runs, the garbage collector's youngest generation is collected every
    ``GC_YOUNG`` allocations instead of 700: the models allocate an op and a record or two
    per cycle, almost none in cycles, and the collections cost a tenth of a traced run."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], GC_YOUNG), *threshold[1:])
    try:
        return _stream_windows(models, starts, max_cycles=max_cycles, stop_at_eof=stop_at_eof,
                               window=window, drain=drain)
    finally:
        gc.set_threshold(*threshold)


def _stream_windows(models: dict[int, VPCycleModel], starts: dict[int, int], *,
                    max_cycles: int, stop_at_eof: bool, window: int,
                    drain: Callable[[int, VPCycleModel, int | None], None]) -> int | None:
    horizon = min(starts.values())
    live = sorted(models)
    end_ns = None
    while live:
        horizon += CLOCK_NS * window
        for i in live:
            # the cycles c with starts[i] + CLOCK_NS * c < horizon
            models[i].run(until=min(max_cycles, max(0, -(-(horizon - starts[i]) // CLOCK_NS))))
        if stop_at_eof:
            ends = [starts[i] + CLOCK_NS * m.finished_at for i, m in models.items()
                    if m.done and m.finished_at is not None]
            if ends:
                end_ns = min(ends)
                for i in live:  # (an EOF in the window's last cycle may end it a bit later)
                    models[i].run(until=min(max_cycles,
                                            max(0, -(-(end_ns - starts[i]) // CLOCK_NS))))
        for i in live:
            drain(i, models[i], end_ns)
        if end_ns is not None:
            break
        live = [i for i in live if not models[i].done and models[i].cycle < max_cycles]
    return end_ns


def write_cycle_outputs(code: Sequence[int], tmem: Sequence[int] | None, vps: Iterable[int],
                        outdir: Path, *, quirks: Quirks = DESIGNED, vcd: Path | None = None,
                        max_cycles: int = DEFAULT_CYCLE_LIMIT,
                        control: Sequence[int] | None = None, cores: int = 4,
                        trace: bool = True, window: int = STREAM_WINDOW,
                        fast: bool = True) -> list[str]:
    """Run the cycle model and write ``vp.N.log`` (and, if asked, the waveforms), and the
    model's final registers and OMEM as ``rf.vp.N.cycles.log`` / ``OMEM.vp.N.cycles.log``;
    returns one line per file for the user. ``trace=False``: no ``vp.N.log`` (the model
    runs without its trace; cycle counts, registers and OMEM are the same).

    The trace is written as the model runs (every ``window`` cycles), so memory does not
    grow with the run's length (except with ``vcd``, whose model keeps its whole trace).

    With a control program every VP the CP starts is run from its own start cycle and the
    logs carry the RTL's absolute stamps (reset at 0 ns); with ``stop_at_eof`` the logs end
    where the first EOF of any VP ended the RTL's run, and the other VPs stop there too.
    Without one (or when it starts no VP) ``code`` runs on each VP in ``vps`` from cycle 0
    (one model, its log written for each). ``fast``: loop iterations are replayed
    (:mod:`.replay`; same files), except for the model the waveforms draw."""
    from ..machine.dumps import format_omem, format_rf
    from .waves import write_vcd

    lines = []
    models: dict[int, VPCycleModel] = {}
    starts: dict[int, int] = {}
    names: dict[int, list[int]] = {}  # model key -> the VPs whose files it writes
    if control is not None and any(control):
        try:
            b = boot(control, code, cores=cores)
        except EmulationError as e:
            lines.append(f"cycle model: {e}; the VPs start at cycle 0")
        else:
            for i in sorted(b.starts):
                models[i] = VPCycleModel(b.code.get(i, []), quirks=quirks, tmem=tmem, vp=i,
                                         trace=trace, clock0=b.enable_cycle(i), fast=fast)
                starts[i] = b.start_ns(i)
                names[i] = [i]
    if not models:
        vps = list(vps) or [0]
        models[vps[0]] = VPCycleModel(code, quirks=quirks, tmem=tmem, trace=trace, fast=fast)
        starts[vps[0]] = 0
        names[vps[0]] = vps
    keep = None if vcd is None else min(models)  # the model whose trace the VCD draws
    if keep is not None:
        models[keep].fast = False  # (its busy windows are drawn: every cycle stepped)
    for model in models.values():
        model.blocks = True  # (the records go to LogFormatter only)
    files: dict[int, list[TextIO]] = {}
    formatters: dict[int, list[LogFormatter]] = {}
    if trace:
        for key, vs in names.items():
            files[key] = [open(outdir / f"vp.{i}.log", "w") for i in vs]  # noqa: SIM115
            formatters[key] = [LogFormatter(i, starts[key]) for i in vs]

    def drain(key: int, model: VPCycleModel, end_ns: int | None) -> None:
        events = model.events
        if not trace or not events:
            return
        new = events
        if end_ns is not None:
            cut = starts[key]
            new = [e for e in ev.expand(events) if cut + CLOCK_NS * e.cycle < end_ns]
        for f, fmt in zip(files[key], formatters[key], strict=True):
            f.write("".join(fmt.lines(new)))
        if key != keep:
            events.clear()
            model.busy_log.clear()

    try:
        end_ns = _stream_system(models, starts, max_cycles=max_cycles,
                                stop_at_eof=quirks.stop_at_eof, window=window, drain=drain)
    finally:
        for fs in files.values():
            for f in fs:
                f.close()
    for key, model in models.items():
        if model.done:
            state = f"ended at cycle {model.finished_at}"
        elif end_ns is not None:
            state = f"stopped at cycle {model.cycle} (the run's end)"
        else:
            state = f"stopped after {model.cycle} cycles (the cycle limit; a livelock?)"
        for i in names[key]:
            rf = model.rf
            known = lanes_written(model.known)
            (outdir / f"rf.vp.{i}.cycles.log").write_text(format_rf(rf, known))
            (outdir / f"OMEM.vp.{i}.cycles.log").write_text(format_omem(model.omem,
                                                                        model.omem_written))
            wrote = "vp.{i}.log, " if trace else ""
            lines.append(f"VP{i}: cycle model {state} (first cycle at {starts[key]} ns), "
                         f"{model.issues} issues, {model.commits} commits; wrote "
                         + wrote.format(i=i) + f"rf.vp.{i}.cycles.log, OMEM.vp.{i}.cycles.log")
    if end_ns is not None:
        lines.append(f"cycle model: the first EOF ended the run at {end_ns} ns")
    if vcd is not None and trace:
        i = min(models)
        model = models[i]
        model.vp = i
        with open(vcd, "w") as f:
            write_vcd(model, f, start_ns=starts[i])
        lines.append(f"VP{i}: waveforms {vcd}")
    return lines


# --------------------------------------------------------------------------------------------
# The timed run: the cycle model decides what every VP issues (--rtl, timed --rtl-quirk)
# --------------------------------------------------------------------------------------------

RTL_VPS = 4  # the beta_2.0 top level: its test bench writes vp.0.log .. vp.3.log


@dataclass
class TimedRun:
    """A run of the whole test bench on the cycle model: the CP's timeline (``boot``), each
    started VP's model from its own start, and where the run ended."""

    boot: Boot
    models: dict[int, VPCycleModel]
    quirks: Quirks
    max_cycles: int
    end_ns: int | None = None  # stop_at_eof: the stamp of the first EOF, which ended the run
    first_eof: int | None = None  # ... and the VP whose EOF it was
    # VPs started on a code memory the MCU never wrote at PC 0: the RTL's issue unit fetches
    # x there and issues nothing, ever (seen in an Icarus run of back-to-back copies)
    stuck: list[int] = field(default_factory=list)

    def start_ns(self, vp: int) -> int:
        """The stamp of VP ``vp``'s model cycle 0 (the RTL's time base, reset at 0 ns)."""
        return self.boot.start_ns(vp)

    @property
    def ended(self) -> bool:
        """Whether the run ends as the test bench's does (the first EOF with
        ``stop_at_eof``, otherwise every started VP's end)."""
        if self.quirks.stop_at_eof:
            return self.first_eof is not None
        return not self.stuck and all(m.done for m in self.models.values())

    @property
    def dumped(self) -> list[int]:
        """The VPs whose registers and OMEM the test bench dumps: the first EOF's (RTL),
        else every VP that ended."""
        if self.quirks.stop_at_eof:
            return [] if self.first_eof is None else [self.first_eof]
        return [i for i, m in self.models.items() if m.done]

    def written(self, vp: int) -> np.ndarray:
        """(256, 3) bool: the register lanes of VP ``vp`` that hold a defined value."""
        import numpy as np  # (what the API returns; the command line uses lanes_written)

        return np.array(lanes_written(self.models[vp].known), dtype=bool)

    def still_running(self) -> str:
        """Which VPs had not ended when the run stopped, and where (for the user)."""
        parts = [f"VP{i} issuing nothing (its code memory was never written at PC 0)"
                 for i in self.stuck]
        for i, m in self.models.items():
            if not m.done:
                at = m.iius[0].prev_pc  # the address of its last fetch
                div = m.imem[at] >> 48 & 7 == OP_DIV
                what = "re-issuing the DIV" if div else "still running,"
                parts.append(f"VP{i} {what} at PC {at}")
        return ", ".join(parts)


def run_timed(code: Sequence[int], control: Sequence[int], tmem: Sequence[int] | None, *,
              quirks: Quirks = DESIGNED, cores: int = RTL_VPS,
              max_cycles: int = DEFAULT_CYCLE_LIMIT, trace: bool = True,
              sink: Callable[[int, int, list[ev.Event]], None] | None = None,
              keep: Iterable[int] = (), window: int = STREAM_WINDOW,
              fast: bool = True, blocks: bool = False) -> TimedRun:
    """The test bench from reset on the cycle model: the CP program starts the VPs
    (:mod:`.boot`), each runs on its model from its own start (its cycle 0 at the test
    bench's cycle ``Boot.enable_cycle``), side by side. With ``stop_at_eof`` the run ends at
    the first EOF of any VP (the RTL test bench's ``$finish``) for every VP. A VP that has
    not ended after ``max_cycles`` of its own is left where it is (``TimedRun.ended``).

    With ``trace``, ``sink(vp, start_ns, events)`` receives each VP's trace records (stamps
    from the VP's start, ``start_ns``) as they are produced (those after the run's end left
    out), every ``window`` cycles; the models keep only the records of the VPs in ``keep``
    (for waveforms), so memory stays flat. ``fast``: the models of the VPs not in ``keep``
    replay loop iterations (:mod:`.replay`; same records and state); ``blocks``: the records
    of replayed iterations reach ``sink`` as ``events.Replayed`` blocks (which
    ``vplog.LogFormatter`` prints, and ``events.expand`` expands), not one by one."""
    b = boot(control, code, cores=cores)
    run = TimedRun(b, {}, quirks, max_cycles)
    starts = {}
    kept = set(keep)
    for i in sorted(b.starts):
        if 0 not in b.written.get(i, ()):
            run.stuck.append(i)
            continue
        run.models[i] = VPCycleModel(b.code.get(i, []), quirks=quirks, tmem=tmem, trace=trace,
                                     vp=i, clock0=b.enable_cycle(i),
                                     fast=fast and i not in kept)
        run.models[i].blocks = blocks
        starts[i] = b.start_ns(i)
    sent = dict.fromkeys(starts, 0)  # records of the kept models already sent

    def drain(i: int, m: VPCycleModel, end_ns: int | None) -> None:
        events = m.events
        if not trace or not events:
            return
        new = events[sent[i]:] if i in kept else events
        if end_ns is not None:
            new = [e for e in ev.expand(new) if starts[i] + CLOCK_NS * e.cycle < end_ns]
        if sink is not None and new:
            sink(i, starts[i], new)
        if i in kept:
            sent[i] = len(events)
        else:
            events.clear()
            m.busy_log.clear()

    if run.models:
        run.end_ns = _stream_system(run.models, starts, max_cycles=max_cycles,
                                    stop_at_eof=quirks.stop_at_eof, window=window,
                                    drain=drain)
    if run.end_ns is not None:
        run.first_eof = min(
            (i for i, m in run.models.items() if m.done and m.finished_at is not None
             and starts[i] + CLOCK_NS * m.finished_at == run.end_ns), default=None)
    return run
