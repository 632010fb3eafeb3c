"""Running the cycle model for the command line: vp.N.log files and VCD waveforms."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from ...core.errors import EmulationError
from .boot import Boot, boot
from .model import VPCycleModel
from .quirks import DESIGNED, Quirks
from .vplog import CLOCK_NS, format_log

DEFAULT_CYCLE_LIMIT = 20_000_000

# the simulator's quirk names (isaforge.theia.machine.gpu.QUIRKS) -> the cycle model's flags
QUIRK_FLAGS: dict[str, tuple[str, ...]] = {
    "reissue-after-branch": ("refetch_after_fifo", "branch_next_cycle"),
    "mul-twice": ("refetch_after_fifo", "branch_next_cycle"),
    "div-reissue": ("refetch_after_fifo",),
    "tmem-row0": ("tmem_row0",),
    "first-eof": ("stop_at_eof",),
}


def quirks_from_names(names: Iterable[str]) -> Quirks:
    """The cycle model's flags for the simulator's ``--rtl-quirk`` names ("all": every
    RTL defect, including the pipeline ones the instruction-level simulator has no name
    for)."""
    names = set(names)
    if "all" in names:
        return Quirks.rtl()
    flags: dict[str, bool] = {}
    for n in names:
        for f in QUIRK_FLAGS.get(n, ()):
            flags[f] = True
    return replace(DESIGNED, **flags) if flags else DESIGNED


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
