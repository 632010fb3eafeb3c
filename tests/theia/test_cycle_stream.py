"""The cycle model's trace streamed to vp.N.log, the fast record formatter, and the
cycles-only mode (``run --rtl``, no trace): same bytes, same final state, flat memory."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.theia.cycle import DESIGNED, Quirks
from isaforge.theia.cycle import events as ev
from isaforge.theia.cycle.runner import run_system, write_cycle_outputs
from isaforge.theia.cycle.vplog import LogFormatter, format_commit, format_issue
from isaforge.theia.demo import loop_program
from isaforge.theia.image import read_mem, read_tmem
from tests.refdata import refdata

REGRESSIONS = ["test_branches_1", "test_multihtread1", "test1_IO", "test_omem_1"]


def _dir(*parts: str) -> Path:
    return refdata("theia", *parts, "code.mem").parent


def _images(d: Path) -> tuple[list[int], list[int], list[int] | None]:
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    tm = d / "tmem.mem"
    tmem = read_tmem(tm.read_text()) if tm.is_file() else None
    return code, control, tmem


def _plain(events: list[ev.Event], vp: int, start_ns: int) -> str:
    # the record formatters one by one, as the formatter's reference
    out = []
    for e in events:
        if isinstance(e, ev.Issue):
            out.append(format_issue(e, vp, start_ns))
        elif isinstance(e, ev.Commit):
            out.append(format_commit(e, vp, start_ns))
        else:
            out.append(f"\nTHREAD {e.thread}: BRANCH TAKEN ")
    return "".join(out)


@pytest.mark.parametrize("quirks", [Quirks.rtl(), DESIGNED], ids=["rtl", "designed"])
@pytest.mark.parametrize("name", ["multicore_smoke", *REGRESSIONS])
def test_formatter_prints_what_the_record_formatters_print(name: str, quirks: Quirks) -> None:
    d = _dir(name) if name == "multicore_smoke" else _dir("regressions", name)
    code, control, tmem = _images(d)
    b, models, _ = run_system(code, control, tmem, quirks=quirks, max_cycles=200_000)
    for i, m in models.items():
        assert m.events
        text = "".join(LogFormatter(i, b.start_ns(i)).lines(m.events))
        assert text == _plain(m.events, i, b.start_ns(i))


@pytest.mark.parametrize("name", ["multicore_smoke", "test_multihtread1", "test1_IO"])
def test_streamed_logs_equal_whole_run_logs(tmp_path: Path, name: str) -> None:
    # tiny windows (many writes, the first EOF's cut inside a window) give the bytes of the
    # whole run formatted at once, cut where the first EOF ended the RTL's run
    d = _dir(name) if name == "multicore_smoke" else _dir("regressions", name)
    code, control, tmem = _images(d)
    b, models, end_ns = run_system(code, control, tmem, quirks=Quirks.rtl())
    assert end_ns is not None
    write_cycle_outputs(code, tmem, [2], tmp_path, quirks=Quirks.rtl(), control=control,
                        window=7)
    for i, m in models.items():
        start = b.start_ns(i)
        events = [e for e in m.events if start + 20 * e.cycle < end_ns]
        assert (tmp_path / f"vp.{i}.log").read_text() == _plain(events, i, start)


@pytest.mark.parametrize("name", ["test_multihtread1", "test_branches_1", "test1_IO"])
def test_rtl_run_without_trace_has_the_traced_runs_cycles_and_state(tmp_path: Path,
                                                                     name: str) -> None:
    # the cycles-only mode: 'run --rtl' (no vp.N.log) ends where 'trace --rtl' ends, with
    # the same registers and OMEM
    d = _dir("regressions", name)
    outs = []
    for cmd in ("run", "trace"):
        out = tmp_path / cmd
        result = CliRunner().invoke(main, ["theia", cmd, str(d), "-o", str(out), "--rtl"])
        assert result.exit_code == 0, result.output
        outs.append((out, [ln.split("; wrote")[0] for ln in result.output.splitlines()
                           if "ended at" in ln]))
    (untraced, lines_u), (traced, lines_t) = outs
    assert lines_t == lines_u and lines_t
    assert not list(untraced.glob("vp.*.log")) and (traced / "vp.2.log").stat().st_size
    dumps = sorted(p.name for p in traced.glob("*.vp.*.log") if not p.name.startswith("vp"))
    assert dumps == ["OMEM.vp.2.log", "rf.vp.2.log"]
    for n in dumps:
        assert (traced / n).read_text() == (untraced / n).read_text(), n


@pytest.mark.parametrize("quirks", [Quirks.rtl(), DESIGNED], ids=["rtl", "designed"])
@pytest.mark.parametrize("name", ["test_multihtread1", "test_arrays_1", "multicore_smoke"])
def test_untraced_outputs_equal_traced_outputs(tmp_path: Path, name: str,
                                               quirks: Quirks) -> None:
    d = _dir(name) if name == "multicore_smoke" else _dir("regressions", name)
    code, control, tmem = _images(d)
    runs = []
    for trace in (True, False):
        out = tmp_path / str(trace)
        out.mkdir()
        lines = write_cycle_outputs(code, tmem, [2], out, quirks=quirks, control=control,
                                    trace=trace)
        runs.append((out, [ln.split("; wrote")[0] for ln in lines]))
    (traced, lines_t), (untraced, lines_u) = runs
    assert lines_t == lines_u and any("ended at cycle" in ln for ln in lines_t)
    assert not list(untraced.glob("vp.*.log")) and list(traced.glob("vp.*.log"))
    dumps = sorted(p.name for p in traced.glob("*.cycles.log"))
    assert dumps and dumps == sorted(p.name for p in untraced.glob("*.cycles.log"))
    for n in dumps:
        assert (traced / n).read_text() == (untraced / n).read_text(), n


def _peak(tmp_path: Path, n: int) -> tuple[int, int]:
    code = loop_program("mul", n)
    tracemalloc.start()
    try:
        write_cycle_outputs(code, None, [2], tmp_path, quirks=Quirks.rtl(), window=512)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, (tmp_path / "vp.2.log").stat().st_size


def test_trace_memory_does_not_grow_with_the_run(tmp_path: Path) -> None:
    # the peak of Python allocations while writing the trace: once the formatter's caches
    # are full, 4 times the run (and the trace) costs no more memory
    _peak(tmp_path, 100)  # (imports and first-use caches)
    small, small_log = _peak(tmp_path, 400)
    big, big_log = _peak(tmp_path, 1600)
    assert big_log > 3.5 * small_log
    assert big < 1.2 * small + 100_000, (small, big)
