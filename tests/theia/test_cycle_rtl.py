"""The cycle model with the RTL's defects switched on reproduces the RTL's vp.2.log.

For every regression the issue/commit records (instruction order, IP, station, destination,
operands before and after the SMU, committed values, the "BRANCH TAKEN" messages) are
compared field by field with refdata/theia/regressions/<test>/vp.2.log; lanes the RTL prints
as ``x`` match anything. Cycle stamps are compared too, with the first issue aligned (the
cycles the CP needs to copy the code and start the VP are not part of the VP model).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge.theia.cycle import Quirks, run_cycles
from isaforge.theia.cycle import events as ev
from isaforge.theia.cycle.vplog import Record, differences, format_log, parse_log
from isaforge.theia.disasm import read_mem
from tests.refdata import refdata

REGRESSIONS = [
    "test1_IO",
    "test1_out_of_order_1",
    "test1_tmem",
    "test_arrays_1",
    "test_bitwise_operations",
    "test_branches_1",
    "test_expressions",
    "test_multihtread1",
    "test_omem_1",
]


def _tmem(d: Path) -> list[int] | None:
    p = d / "tmem.mem"
    return [int(x, 16) for x in p.read_text().split()] if p.exists() else None


def run_regression(name: str) -> tuple[list[Record], list[Record]]:
    d = refdata("theia", "regressions", name, "vp.2.log").parent
    code = read_mem((d / "code.mem").read_text())
    model = run_cycles(code, quirks=Quirks.rtl(), tmem=_tmem(d))
    ref = parse_log((d / "vp.2.log").read_text())
    first_ref = next(r for r in ref if r.kind == "I")
    first = next(e for e in model.events if isinstance(e, ev.Issue))
    ours = parse_log(format_log(model.events, 2, first_ref.ns - 20 * first.cycle))
    return ours, ref


EXACT = [n for n in REGRESSIONS if n != "test1_IO"]


@pytest.mark.parametrize("name", EXACT)
def test_trace_identical_with_cycle_stamps(name: str) -> None:
    ours, ref = run_regression(name)
    assert differences(ours, ref) == []


def test_test1_io_trace_identical_up_to_one_tmem_delay() -> None:
    # The first TMREAD of test1_IO (issued at 4030 ns) keeps the IO station busy 2 cycles
    # longer than every other TMREAD in the regressions (14 instead of 12 cycles; commit 17
    # instead of 15 cycles after issue). The delay comes from the TMEM side (crossbar /
    # controller state outside the VP), which the model does not simulate: it uses the fixed
    # latencies. Every record matches without stamps; the stamps match exactly before that
    # TMREAD and are exactly 2 cycles (40 ns) early from its re-issue on.
    ours, ref = run_regression("test1_IO")
    assert differences(ours, ref, times=False) == []
    timed = [(r, r.ns - o.ns) for o, r in zip(ours, ref, strict=True) if r.kind != "B"]
    first_late = next(i for i, (_, s) in enumerate(timed) if s)
    assert {s for _, s in timed[:first_late]} == {0}
    assert {s for _, s in timed[first_late:]} == {40}
    issues = [r for r in ref if r.kind == "I"]
    assert issues[10].ns == 4030 and "TMREAD" in issues[10].text
    late = timed[first_late][0]
    assert late.ns == 4350 and "TMREAD" in late.text


def test_multithread_trace_has_both_threads() -> None:
    # SMT: both issue units, 2-cycle slots, each thread listening to its half of the RF, the
    # second thread's never-initialised dependency table (x: that issue is dropped, its
    # later branch waits on ADD_0 forever, the main thread moves to ADD_1), and the second
    # thread's PC loaded by the main thread's results that meet its branch condition
    ours, ref = run_regression("test_multihtread1")
    assert differences(ours, ref) == []
    assert sum(r.kind == "I" and r.thread == 1 for r in ref) == 11
    assert sum(r.kind == "I" and r.thread == 1 for r in ours) == 11
