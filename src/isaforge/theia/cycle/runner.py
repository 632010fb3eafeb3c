"""Running the cycle model for the command line: vp.N.log files and VCD waveforms."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from .model import VPCycleModel
from .quirks import DESIGNED, Quirks
from .vplog import format_log

DEFAULT_CYCLE_LIMIT = 20_000_000

# the simulator's quirk names (isaforge.theia.gpu.QUIRKS) -> the cycle model's flags
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


def write_cycle_outputs(code: Sequence[int], tmem: Sequence[int] | None, vps: Iterable[int],
                        outdir: Path, *, quirks: Quirks = DESIGNED, vcd: Path | None = None,
                        max_cycles: int = DEFAULT_CYCLE_LIMIT) -> list[str]:
    """Run ``code`` on the cycle model and write ``vp.N.log`` for each VP in ``vps`` (all
    run the same code, as the test bench loads it) and, if asked, the waveforms; returns
    one line per file for the user."""
    from .waves import write_vcd

    model = VPCycleModel(code, quirks=quirks, tmem=tmem).run(until=max_cycles)
    state = (f"ended at cycle {model.finished_at}" if model.done
             else f"stopped after {model.cycle} cycles (the cycle limit; a livelock?)")
    lines = []
    vps = list(vps) or [0]
    for i in vps:
        model.vp = i
        path = outdir / f"vp.{i}.log"
        path.write_text(format_log(model.events, i))
        lines.append(f"VP{i}: cycle model {state}, {model.issues} issues, "
                     f"{model.commits} commits; wrote {path.name}")
    if vcd is not None:
        model.vp = vps[0]
        with open(vcd, "w") as f:
            write_vcd(model, f)
        lines.append(f"VP{vps[0]}: waveforms {vcd}")
    return lines
