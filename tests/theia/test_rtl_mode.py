"""``isaforge theia run|trace --rtl``: the RTL mode writes what the RTL's test bench writes.

Every RTL run in refdata/theia (each regression folder found there, the ISA probe, the 4-VP
smoke test) is run with ``trace --rtl`` from its images, and each dump the RTL wrote
(``vp.N.log``, ``rf.vp.N.log``, ``OMEM.vp.N.log``) is compared byte for byte: cycle stamps
from reset, x lanes, thread interleaving included.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.cli import main
from tests.refdata import refdata, refdata_path

_REG = refdata_path("theia", "regressions")
REGRESSIONS = sorted(p.name for p in _REG.iterdir() if (p / "vp.2.log").exists()) if _REG \
    else ["test1_IO"]
DUMPS = re.compile(r"(vp|rf\.vp|OMEM\.vp)\.\d+\.log")


def _trace_rtl(d: Path, out: Path, *extra: str) -> str:
    r = CliRunner().invoke(main, ["theia", "trace", "--rtl", str(d), "-o", str(out), *extra])
    assert r.exit_code == 0, r.output
    return r.output


def _same_files(d: Path, out: Path) -> list[str]:
    """The RTL's dump files in ``d`` that ``out`` does not reproduce byte for byte."""
    ref = sorted(p.name for p in d.iterdir() if DUMPS.fullmatch(p.name))
    assert ref, f"no RTL dumps in {d}"
    return [n for n in ref if not (out / n).exists()
            or (out / n).read_bytes() != (d / n).read_bytes()]


@pytest.mark.parametrize("name", REGRESSIONS)
def test_regression_byte_identical(name: str, tmp_path: Path) -> None:
    d = refdata("theia", "regressions", name, "vp.2.log").parent
    _trace_rtl(d, tmp_path)
    assert _same_files(d, tmp_path) == []


@pytest.mark.parametrize("parts", [("isa_probe", "v_none"), ("multicore_smoke",)])
def test_other_rtl_runs_byte_identical(parts: tuple[str, ...], tmp_path: Path) -> None:
    # the probe reads never-written registers (x lanes, a dependency read as x); the smoke
    # test starts 4 VPs and the first EOF (VP0's) ends the run for all of them
    d = refdata("theia", *parts, "vp.2.log").parent
    _trace_rtl(d, tmp_path)
    assert _same_files(d, tmp_path) == []


def test_vps_never_started_get_empty_logs(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_omem_1", "vp.2.log").parent
    out = _trace_rtl(d, tmp_path)
    assert [(tmp_path / f"vp.{i}.log").read_text() == "" for i in range(4)] == \
        [True, True, False, True]
    assert not (tmp_path / "rf.vp.0.log").exists()  # only the VP whose EOF ended the run
    assert "run ended at 12670 ns" in out


def test_run_rtl_dumps_without_trace(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_arrays_1", "vp.2.log").parent
    r = CliRunner().invoke(main, ["theia", "run", "--rtl", str(d), "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert not list(tmp_path.glob("vp.*.log"))
    for n in ("rf.vp.2.log", "OMEM.vp.2.log"):
        assert (tmp_path / n).read_bytes() == (d / n).read_bytes()


def test_rtl_quirk_all_is_rtl(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_branches_1", "vp.2.log").parent
    r = CliRunner().invoke(main, ["theia", "trace", "--rtl-quirk", "all", str(d), "-o",
                                  str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert _same_files(d, tmp_path) == []


def test_div_livelock_does_not_end_and_says_so(tmp_path: Path) -> None:
    # the RTL re-issues the loop's DIV forever; the log's head is the RTL's, no dumps
    d = refdata("theia", "perf_div_livelock", "vp.2.head.log").parent
    r = CliRunner().invoke(main, ["theia", "trace", "--rtl", str(d), "-o", str(tmp_path),
                                  "--max-cycles", "20000"])
    assert r.exit_code == 1
    assert "does not end within 20000 cycles: VP2 re-issuing the DIV at PC 17" in r.output
    assert not (tmp_path / "rf.vp.2.log").exists()
    head = (d / "vp.2.head.log").read_text()
    whole = head[:head.rstrip("\n").rfind("\n")]  # the head is cut inside its last line
    assert (tmp_path / "vp.2.log").read_text().startswith(whole)


def test_rtl_never_ends_note_only_when_true(tmp_path: Path) -> None:
    runner = CliRunner()
    d = refdata("theia", "perf_div_livelock", "code.mem").parent
    r = runner.invoke(main, ["theia", "run", str(d), "-o", str(tmp_path / "a"),
                             "--max-cycles", "50000"])
    assert r.exit_code == 0, r.output
    assert "the RTL does not end this program within 50000 cycles" in r.output
    # test_branches_1 divides too, and the RTL ends it
    d = refdata("theia", "regressions", "test_branches_1", "code.mem").parent
    r = runner.invoke(main, ["theia", "run", str(d), "-o", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    assert "DIV" in r.output and "does not end" not in r.output and "never" not in r.output


def test_vcd_time_axis_is_the_logs(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_expressions", "vp.2.log").parent
    _trace_rtl(d, tmp_path, "--vcd", str(tmp_path / "w.vcd"))
    first_issue = int(re.search(r"(\d+)ns VP\[", (tmp_path / "vp.2.log").read_text())[1])
    vcd = (tmp_path / "w.vcd").read_text()
    ident = re.search(r"\$var wire 1 (\S+) issue \$end", vcd)[1]
    times = [int(t) for t, body in re.findall(r"#(\d+)\n((?:[^#].*\n)*)", vcd)
             if re.search(rf"^1{re.escape(ident)}$", body, re.M)]
    assert times[0] == first_issue == 9690


def test_isa_level_never_written_lanes_stay_x(tmp_path: Path) -> None:
    # the probe adds 5 to R67, which nothing wrote: the RTL keeps x (its issue is even
    # dropped); the instruction-level simulator computes x from x instead of 5 + 0
    d = refdata("theia", "isa_probe", "v_none", "rf.vp.2.log").parent
    r = CliRunner().invoke(main, ["theia", "run", str(d), "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    ours = (tmp_path / "rf.vp.2.log").read_text().splitlines()
    assert "r67\txxxxxxxx xxxxxxxx xxxxxxxx" in ours
    assert ours == (d / "rf.vp.2.log").read_text().splitlines()


@pytest.mark.parametrize("name", ["test_omem_1", "test_branches_1"])
def test_cp_exit_noop_alone_ends_where_the_program_would_start_over(name: str,
                                                                    tmp_path: Path) -> None:
    d = refdata("theia", "regressions", name, "code.mem").parent
    r = CliRunner().invoke(main, ["theia", "run", "--rtl-quirk", "cp-exit-noop", str(d),
                                  "-o", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "run ended: cp-wrapped" in r.output and "back to IP 0" in r.output
    assert (tmp_path / "rf.vp.2.log").exists() and (tmp_path / "OMEM.vp.2.log").exists()


# Four COPYBLOCKs back to back (one wait after them), then START of the 4 VPs, as RUN.md's
# render1 attempt did: under Icarus only VP1 runs, its code one 32-bit word off (its first
# instruction made of the first word twice), and the run never ends
RENDER1_CP = """#define VP_DST_CODE_MEM (1<<31)
  scalar SrcOffset = 0,DstOffset;
  DstOffset = (0x0 | (147<<20) | VP_DST_CODE_MEM );
  copy_data_block < 1 , DstOffset  ,SrcOffset>;
  copy_data_block < 2 , DstOffset  ,SrcOffset>;
  copy_data_block < 3 , DstOffset  ,SrcOffset>;
  copy_data_block < 4 , DstOffset  ,SrcOffset>;
  while ( block_transfer_in_progress ) {}
  start <0>;
  start <1>;
  start <2>;
  start <3>;
  while ( SrcOffset == SrcOffset ) {}
  exit ;
"""


def _render1(tmp_path: Path) -> Path:
    from isaforge.theia.compiler import compile_cp
    from isaforge.theia.image import write_mem

    d = refdata("theia", "multicore_smoke", "code.mem").parent
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "code.mem").write_text((d / "code.mem").read_text())
    cp = compile_cp(RENDER1_CP, "render1.cp")
    (tmp_path / "control_code.mem").write_text(write_mem(cp.words, cp=True))
    return tmp_path


def test_mcu_back_to_back_copies_land_shifted(tmp_path: Path) -> None:
    from isaforge.theia.cycle.boot import boot
    from isaforge.theia.image import read_mem

    d = _render1(tmp_path / "in")
    code = read_mem((d / "code.mem").read_text())
    control = read_mem((d / "control_code.mem").read_text(), cp=True)
    b = boot(control, code)
    assert sorted(b.starts) == [0, 1, 2, 3]
    hi = [w >> 32 for w in code]
    assert b.code[1][0] == hi[0] << 32 | hi[0]
    assert b.code[1][1:147] == code[:146]
    assert all(0 not in b.written.get(v, ()) for v in (0, 2, 3))


@pytest.mark.parametrize("how", [["--rtl"], ["--rtl-quirk", "mcu-lost"]])
def test_mcu_back_to_back_only_vp1_runs_forever(how: list[str], tmp_path: Path) -> None:
    d = _render1(tmp_path / "in")
    r = CliRunner().invoke(main, ["theia", "trace", *how, str(d), "-o", str(tmp_path / "o"),
                                  "--max-cycles", "3000"])
    assert r.exit_code == 1
    assert "does not end within 3000 cycles" in r.output
    for v in (0, 2, 3):
        assert f"VP{v} issuing nothing" in r.output
        assert (tmp_path / "o" / f"vp.{v}.log").read_text() == ""
    first = (tmp_path / "o" / "vp.1.log").read_text().split("\n")[1]
    assert "106690ns VP[         1] IP          0    ISSUE  (8001900080019000)" in first
