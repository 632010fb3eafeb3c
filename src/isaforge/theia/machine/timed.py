"""A :class:`~.gpu.Gpu` run decided by the cycle model: the RTL's timing defects, exactly.

Some of the RTL's defects depend on when results commit: the issue unit's re-issues
(``reissue-after-branch`` / ``mul-twice``, ``div-reissue``), the pipeline's own
(``branch-dep-reissue``, ``branch-next-cycle``, ``no-smu-stall``, ``rtl-scoreboard``,
``rtl-structural``) and the memory controller's (``mcu-lost``: a request made during a copy
re-loads its address counters). No instruction-level rule reproduces them, so a GPU asked for
any of them (or for ``"all"``, every defect: the RTL) is run as ``isaforge theia run --rtl`` /
``--rtl-quirk NAME`` runs it: :func:`isaforge.theia.cycle.runner.run_timed` runs the test
bench from reset (the CP program on the RTL's CP and MCU, then each VP it starts on the cycle
model from its own start cycle), and the final state is copied back into the GPU's VPs.

What a timed run gives through the GPU's API (and how it differs from an instruction-level
run): :meth:`~.gpu.Gpu.run` always starts from reset with the images given to
:meth:`~.gpu.Gpu.load` (a control program is needed; ``load_vp``/``write_register`` before it
are not seen); registers, written lanes, OMEM, code memory and PCs are the model's at the end;
:class:`~.gpu.RunResult` carries the cycle counts (``cp_instructions``: the CP cycles
simulated until the VPs were started; ``gpu.cp`` itself is not run, and the MCU's data copies
into registers are not modelled: a note says when a program makes some). ``step()`` cannot be
exact (the unit of a timed run is a clock cycle, not an instruction) and raises. Hooks:
``insn`` fires for each *issue* a VP makes (a re-issued instruction fires again),
``reg_write`` for each result on a VP's commit bus with ``value`` the committed lanes
``(x, y, z)`` (the lanes outside ``info.we`` are not written), each VP's events in cycle order, the
VPs' events reported VP after VP every :data:`~isaforge.theia.cycle.runner.STREAM_WINDOW`
cycles; the CP's instructions are not reported, and a ``mem_write`` hook is refused (the model
does not report its OMEM and code-memory writes one by one).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...core.errors import EmulationError
from ..cycle import events as ev
from ..cycle.quirks import Quirks
from ..cycle.runner import (
    DEFAULT_CYCLE_LIMIT,
    PIPELINE_QUIRKS,
    RTL_VPS,
    TimedRun,
    is_timed,
    quirks_from_names,
    run_timed,
)
from .hooks import InsnInfo, RegInfo

__all__ = ["DEFAULT_CYCLE_LIMIT", "PIPELINE_QUIRKS", "RTL_VPS", "TimedRun", "cycle_quirks",
           "run_gpu"]


def cycle_quirks(names: Iterable[str]) -> Quirks | None:
    """The cycle model's flags for quirk ``names`` when they need a timed run (as the
    command line decides: ``"all"`` or any timed name), else None."""
    names = set(names)
    return quirks_from_names(names) if is_timed(names) else None


def run_gpu(gpu: Any, quirks: Quirks, max_cycles: int) -> TimedRun:
    """Run ``gpu``'s loaded images on the cycle model from reset and copy the final state
    into its VPs; hooks fire as the module docstring says. Returns the runner's record."""
    if gpu.cores > RTL_VPS:
        raise EmulationError(f"the RTL has {RTL_VPS} VPs; a timed run (RTL quirks) runs at "
                             f"most {RTL_VPS}, not {gpu.cores}")
    control = gpu.control_program
    if not any(control):
        raise EmulationError("a timed run (RTL quirks) runs the test bench from reset: load "
                             "the program with its control program (Gpu.load(code, control))")
    hooks = gpu._hooks
    if hooks.any("mem_write"):
        raise EmulationError("a timed run (RTL quirks) does not report OMEM or code-memory "
                             "writes one by one: remove the mem_write hook, or read "
                             "Gpu.omem() after the run")
    want_insn = hooks.any("insn")
    want_reg = hooks.any("reg_write")
    sink = None
    if want_insn or want_reg:
        fire = hooks.fire

        def sink(i: int, start_ns: int, events: list[ev.Event]) -> None:
            core = f"VP{i}"
            for e in events:
                if type(e) is ev.Issue:
                    if want_insn:
                        fire("insn", gpu, 8 * e.address, 8, InsnInfo(core, i, e.thread, e.word))
                elif type(e) is ev.Commit:
                    if want_reg and e.we:
                        fire("reg_write", gpu, e.dst, tuple(e.result),
                             RegInfo(core, i, e.we, "insn"))

    run = run_timed(gpu.code_image, control, gpu.tmem_image, quirks=quirks, cores=gpu.cores,
                    max_cycles=max_cycles, trace=sink is not None, sink=sink)
    _copy_back(gpu, run)
    return run


def _copy_back(gpu: Any, run: TimedRun) -> None:
    """The VPs' state at the end of ``run``: code memory as the MCU wrote it, and for each
    VP that ran, its registers, written lanes, OMEM, PCs and issue count."""
    for i in run.boot.starts:
        if i >= gpu.cores:
            continue
        vp = gpu.vps[i]
        vp.started = vp.enabled = True
        for a in sorted(run.boot.written.get(i, ())):
            vp.write_code(a, run.boot.code[i][a])
    for i, m in run.models.items():
        vp = gpu.vps[i]
        vp.r = [v for row in m.rf for v in row]
        vp.w = bytearray(m.known)
        n = min(len(vp.omem), len(m.omem))
        vp.omem[:] = 0
        vp.omem_written[:] = False
        vp.omem[:n] = m.omem[:n]
        vp.omem_written[:n] = m.omem_written[:n]
        vp.pc = [m.iius[0].prev_pc, m.iius[1].prev_pc]
        vp.stopped = [m.done, m.done]
        vp.instructions = m.issues
