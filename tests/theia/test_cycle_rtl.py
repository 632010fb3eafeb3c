"""The cycle model with the RTL's defects switched on reproduces the RTL's vp.2.log.

For every regression the issue/commit records (instruction order, IP, station, destination,
operands before and after the SMU, committed values, the "BRANCH TAKEN" messages) are
compared field by field with refdata/theia/regressions/<test>/vp.2.log; lanes the RTL prints
as ``x`` match anything. Cycle stamps are compared as they are, from reset: the CP program's
timeline (``cycle.boot``: the MCU copying the code, the CCB start) puts each VP's first cycle
where the RTL has it; nothing is aligned on the reference.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from isaforge.theia.cycle import Quirks, run_cycles
from isaforge.theia.cycle.boot import boot
from isaforge.theia.cycle.runner import run_system
from isaforge.theia.cycle.vplog import Record, differences, format_log, parse_log
from isaforge.theia.image import read_mem
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


def _absolute(d: Path, vp: int, until: int | None = None) -> tuple[object, int]:
    """VP ``vp`` of the run in ``d`` on the cycle model, from the CP program's start of it:
    (model, stamp in ns of the model's cycle 0)."""
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    b = boot(control, code, until_started=[vp])
    model = run_cycles(b.code[vp], quirks=Quirks.rtl(), tmem=_tmem(d), until=until, vp=vp,
                       clock0=b.enable_cycle(vp))
    return model, b.start_ns(vp)


def run_regression(name: str) -> tuple[list[Record], list[Record]]:
    d = refdata("theia", "regressions", name, "vp.2.log").parent
    model, start_ns = _absolute(d, 2)
    ref = parse_log((d / "vp.2.log").read_text())
    ours = parse_log(format_log(model.events, 2, start_ns))
    return ours, ref


@pytest.mark.parametrize("name", REGRESSIONS)
def test_trace_identical_with_cycle_stamps(name: str) -> None:
    ours, ref = run_regression(name)
    assert differences(ours, ref) == []


def test_test1_io_first_tmread_waits_for_the_bank_tokens() -> None:
    # The first TMREAD of test1_IO (issued at 4030 ns) waits 2 cycles longer than the others
    # (commit 17 cycles after issue instead of 15): the TMEM banks' round-robin tokens, in
    # step since reset, are 2 VPs away from VP2 when it asks; after it they are not in step
    ours, ref = run_regression("test1_IO")
    assert differences(ours, ref) == []
    issues = [r for r in ref if r.kind == "I" and "TMREAD" in r.text]
    commits = [r for r in ref if r.kind == "C" and "TMREAD" in r.text]
    assert issues[0].ns == 4030 and commits[0].ns == 4370
    assert issues[2].ns == 4950 and commits[1].ns == 4650 and issues[1].ns == 4350
    fixed = replace(Quirks.rtl(), tmem_tokens=False)
    d = refdata("theia", "regressions", "test1_IO", "vp.2.log").parent
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    b = boot(control, code, until_started=[2])
    model = run_cycles(b.code[2], quirks=fixed, tmem=_tmem(d), vp=2, clock0=b.enable_cycle(2))
    late = parse_log(format_log(model.events, 2, b.start_ns(2)))
    assert [r for r in late if r.kind == "C" and "TMREAD" in r.text][0].ns == 4330


def test_multithread_trace_has_both_threads() -> None:
    # SMT: both issue units, 2-cycle slots, each thread listening to its half of the RF, the
    # second thread's never-initialised dependency table (x: that issue is dropped, its
    # later branch waits on ADD_0 forever, the main thread moves to ADD_1), and the second
    # thread's PC loaded by the main thread's results that meet its branch condition
    ours, ref = run_regression("test_multihtread1")
    assert differences(ours, ref) == []
    assert sum(r.kind == "I" and r.thread == 1 for r in ref) == 11
    assert sum(r.kind == "I" and r.thread == 1 for r in ours) == 11


# --------------------------------------------------------------------------------------------
# Other RTL runs: the ISA probe, the 4-core smoke test, the DIV livelock (head and tail)
# --------------------------------------------------------------------------------------------


def _run_dir(parts: tuple[str, ...], log: str, vp: int, until: int | None = None
             ) -> tuple[list[Record], list[Record], object]:
    d = refdata("theia", *parts, log).parent
    model, start_ns = _absolute(d, vp, until)
    ref = parse_log((d / log).read_text())
    return parse_log(format_log(model.events, vp, start_ns)), ref, model


def _same_head(ours: list[Record], ref: list[Record]) -> None:
    """``ref`` is the head of a longer log, cut inside its last line."""
    *whole, last = ref
    assert differences(ours[:len(whole)], whole) == []
    cut = ours[len(whole)]
    assert cut.ns == last.ns and cut.text.startswith(last.text)


def test_isa_probe_trace() -> None:
    ours, ref, _ = _run_dir(("isa_probe", "v_none"), "vp.2.log", 2)
    assert differences(ours, ref) == []


@pytest.mark.parametrize("variant", ["v_0", "v_1", "v_2", "v_3"])
def test_isa_probe_div_variants_livelock_like_the_rtl(variant: str) -> None:
    # each variant ends with one DIV that the RTL re-issues forever; the logs are heads
    ours, ref, model = _run_dir(("isa_probe", variant), "vp.2.head.log", 2, until=3000)
    _same_head(ours, ref)
    assert not model.done  # still re-issuing the DIV


@pytest.mark.parametrize("vp", [0, 1, 2, 3])
def test_multicore_smoke_traces(vp: int) -> None:
    ours, ref, _ = _run_dir(("multicore_smoke",), f"vp.{vp}.log", vp)
    assert differences(ours, ref) == []


def test_multicore_smoke_four_vps_from_one_run() -> None:
    # The 4-VP run as the command line does it: the CP copies the code into VP1, VP2, VP3
    # and VP0 (DstId 4) one after the other, starts VP0..VP3 in consecutive cycles, and the
    # first EOF (VP0's, the first started) ends the RTL's run for every VP
    d = refdata("theia", "multicore_smoke", "vp.0.log").parent
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    b, models, end_ns = run_system(code, control, _tmem(d), quirks=Quirks.rtl())
    assert sorted(models) == [0, 1, 2, 3]
    assert [b.starts[i] for i in range(4)] == [b.starts[0] + i for i in range(4)]
    assert [c.vp for c in b.copies] == [1, 2, 3, 0]
    ended = (d / "test_result.log").read_text().split("ended at time")[1].split("ns")[0]
    assert end_ns == int(ended)  # 113110 ns
    for i, m in models.items():
        start = b.start_ns(i)
        events = [e for e in m.events if start + 20 * e.cycle < end_ns]
        ours = parse_log(format_log(events, i, start))
        ref = parse_log((d / f"vp.{i}.log").read_text())
        assert differences(ours, ref) == [], i


def test_div_livelock_head() -> None:
    ours, ref, _ = _run_dir(("perf_div_livelock",), "vp.2.head.log", 2, until=3000)
    _same_head(ours, ref)


def test_div_livelock_tail_after_two_million_cycles() -> None:
    # The tail of the RTL log, 42.7 ms (2.1 million cycles) into the livelock: the same DIV
    # issued every 69 cycles. The model gets there by skipping the idle cycles.
    d = refdata("theia", "perf_div_livelock", "vp.2.tail.log").parent
    tail = parse_log((d / "vp.2.tail.log").read_text())
    tail = [r for r in tail if r.kind in "IC" and ("ISSUE" in r.text or "COMMIT" in r.text)]
    tail = [r for r in tail if r.text.lstrip().startswith(("VP[", "\t"))]  # drop the cut line
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    start_ns = boot(control, code, until_started=[2]).start_ns(2)
    end = (tail[-1].ns - start_ns) // 20 + 10
    model, start_ns = _absolute(d, 2, end)
    assert model.steps < model.cycle // 10  # event-driven: most cycles were skipped
    ours = parse_log(format_log(model.events, 2, start_ns))
    start = next(i for i, r in enumerate(ours) if r.ns == tail[0].ns and r.kind == tail[0].kind)
    assert differences(ours[start:start + len(tail)], tail) == []
    assert len(tail) >= 8


@pytest.mark.parametrize("quirks", [Quirks.rtl(), Quirks()], ids=["rtl", "designed"])
@pytest.mark.parametrize("name", REGRESSIONS)
def test_untraced_run_is_the_same_machine(name: str, quirks: Quirks) -> None:
    # without a trace the step loop takes its fast paths (the inlined commit of the RTL
    # scoreboard and of the designed renaming); the machine must not notice: same end
    # cycle, steps, issues, commits, registers, known lanes and OMEM as the traced run
    # (with the RTL's defects: the run that matches the RTL's log)
    d = refdata("theia", "regressions", name, "vp.2.log").parent
    code = read_mem((d / "code.mem").read_text())
    runs = [run_cycles(code, quirks=quirks, tmem=_tmem(d), trace=tr) for tr in (True, False)]
    a, b = runs
    assert (a.finished_at, a.steps, a.issues, a.commits, a.dropped) == (
        b.finished_at, b.steps, b.issues, b.commits, b.dropped)
    assert a.rf == b.rf and a.known == b.known
    assert a.omem == b.omem and a.omem_written == b.omem_written
