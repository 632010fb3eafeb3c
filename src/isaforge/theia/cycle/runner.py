"""Running the cycle model for the command line: vp.N.log files and VCD waveforms."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ...core.errors import EmulationError
from ..machine.alu import OP_DIV
from .boot import Boot, boot
from .model import VPCycleModel
from .quirks import DESIGNED, Quirks
from .vplog import CLOCK_NS, format_log

DEFAULT_CYCLE_LIMIT = 20_000_000

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
TIMED_QUIRKS = frozenset({"reissue-after-branch", "mul-twice", "div-reissue", *PIPELINE_QUIRKS})


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


def write_cycle_outputs(code: Sequence[int], tmem: Sequence[int] | None, vps: Iterable[int],
                        outdir: Path, *, quirks: Quirks = DESIGNED, vcd: Path | None = None,
                        max_cycles: int = DEFAULT_CYCLE_LIMIT,
                        control: Sequence[int] | None = None, cores: int = 4) -> list[str]:
    """Run the cycle model and write ``vp.N.log`` (and, if asked, the waveforms); returns
    one line per file for the user.

    With a control program every VP the CP starts is run from its own start cycle and the
    logs carry the RTL's absolute stamps (reset at 0 ns); with ``stop_at_eof`` the logs end
    where the first EOF of any VP ended the RTL's run. Without one (or when it starts no VP)
    ``code`` runs on each VP in ``vps`` from cycle 0."""
    from .waves import write_vcd

    lines = []
    runs: list[tuple[int, VPCycleModel, int]] = []
    end_ns = None
    if control is not None and any(control):
        try:
            b, models, end_ns = run_system(code, control, tmem, quirks=quirks, cores=cores,
                                           max_cycles=max_cycles)
            runs = [(i, m, b.start_ns(i)) for i, m in models.items()]
        except EmulationError as e:
            lines.append(f"cycle model: {e}; the VPs start at cycle 0")
    if not runs:
        model = VPCycleModel(code, quirks=quirks, tmem=tmem).run(until=max_cycles)
        runs = [(i, model, 0) for i in (list(vps) or [0])]
    for i, model, start_ns in runs:
        state = (f"ended at cycle {model.finished_at}" if model.done
                 else f"stopped after {model.cycle} cycles (the cycle limit; a livelock?)")
        events = model.events
        if end_ns is not None:
            events = [e for e in events if start_ns + CLOCK_NS * e.cycle < end_ns]
        path = outdir / f"vp.{i}.log"
        path.write_text(format_log(events, i, start_ns))
        lines.append(f"VP{i}: cycle model {state} (first cycle at {start_ns} ns), "
                     f"{model.issues} issues, {model.commits} commits; wrote {path.name}")
    if end_ns is not None:
        lines.append(f"cycle model: the first EOF ended the run at {end_ns} ns")
    if vcd is not None:
        i, model, _ = runs[0]
        model.vp = i
        with open(vcd, "w") as f:
            write_vcd(model, f)
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

    def start_ns(self, vp: int) -> int:
        """The stamp of VP ``vp``'s model cycle 0 (the RTL's time base, reset at 0 ns)."""
        return self.boot.start_ns(vp)

    @property
    def ended(self) -> bool:
        """Whether the run ends as the test bench's does (the first EOF with
        ``stop_at_eof``, otherwise every started VP's end)."""
        if self.quirks.stop_at_eof:
            return self.first_eof is not None
        return all(m.done for m in self.models.values())

    @property
    def dumped(self) -> list[int]:
        """The VPs whose registers and OMEM the test bench dumps: the first EOF's (RTL),
        else every VP that ended."""
        if self.quirks.stop_at_eof:
            return [] if self.first_eof is None else [self.first_eof]
        return [i for i, m in self.models.items() if m.done]

    def end_cycle(self, vp: int) -> int | None:
        """The last model cycle of VP ``vp`` that belongs to the run (None: all of it)."""
        if self.end_ns is None:
            return None
        return (self.end_ns - self.start_ns(vp)) // CLOCK_NS - 1

    def events(self, vp: int) -> list:
        """VP ``vp``'s trace records, those after the run's end left out."""
        m = self.models[vp]
        last = self.end_cycle(vp)
        return m.events if last is None else [e for e in m.events if e.cycle <= last]

    def written(self, vp: int) -> np.ndarray:
        """(256, 3) bool: the register lanes of VP ``vp`` that hold a defined value."""
        known = self.models[vp].known
        return np.array([[k >> 2 & 1, k >> 1 & 1, k & 1] for k in known], dtype=bool)

    def still_running(self) -> str:
        """Which VPs had not ended when the run stopped, and where (for the user)."""
        parts = []
        for i, m in self.models.items():
            if not m.done:
                at = m.iius[0].prev_pc  # the address of its last fetch
                div = m.imem[at] >> 48 & 7 == OP_DIV
                what = "re-issuing the DIV" if div else "still running,"
                parts.append(f"VP{i} {what} at PC {at}")
        return ", ".join(parts)


def run_timed(code: Sequence[int], control: Sequence[int], tmem: Sequence[int] | None, *,
              quirks: Quirks = DESIGNED, cores: int = RTL_VPS,
              max_cycles: int = DEFAULT_CYCLE_LIMIT, trace: bool = True) -> TimedRun:
    """The test bench from reset on the cycle model: the CP program starts the VPs
    (:mod:`.boot`), each runs on its model from its own start. With ``stop_at_eof`` the run
    ends at the first EOF of any VP (the RTL test bench's ``$finish``): the VPs are run in
    the order they start, each no further than the earliest EOF found so far. A VP that has
    not ended after ``max_cycles`` of its own is left where it is (``TimedRun.ended``)."""
    b = boot(control, code, cores=cores)
    run = TimedRun(b, {}, quirks, max_cycles)
    for i in sorted(b.starts, key=lambda v: (b.starts[v], v)):
        start = b.start_ns(i)
        limit = max_cycles
        if run.end_ns is not None:
            limit = min(limit, max(0, (run.end_ns - start) // CLOCK_NS + 1))
        m = VPCycleModel(b.code.get(i, []), quirks=quirks, tmem=tmem, trace=trace, vp=i,
                         clock0=b.enable_cycle(i))
        run.models[i] = m.run(until=limit)
        if quirks.stop_at_eof and m.done and m.finished_at is not None:
            end = start + CLOCK_NS * m.finished_at
            if run.end_ns is None or end < run.end_ns:
                run.end_ns, run.first_eof = end, i
    return run
