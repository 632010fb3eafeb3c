"""``isaforge theia run --cycles / --vcd``: the cycle model from the command line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from isaforge.cli import main
from isaforge.theia.cycle.runner import quirks_from_names
from isaforge.theia.cycle.vplog import differences, parse_log
from tests.refdata import refdata


def test_run_cycles_writes_the_rtl_trace(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_expressions", "code.mem").parent
    result = CliRunner().invoke(main, [
        "theia", "run", str(d), "-o", str(tmp_path), "--cycles",
        "--rtl-quirk", "reissue-after-branch", "--rtl-quirk", "first-eof"])
    assert result.exit_code == 0, result.output
    # reissue-after-branch is a pipeline quirk: the cycle model runs the VP (a timed run)
    assert "run ended at 11270 ns" in result.output
    ours = parse_log((tmp_path / "vp.2.log").read_text())
    ref = parse_log((d / "vp.2.log").read_text())
    # the RTL's absolute stamps: the CP program copies the code and starts the VP
    assert differences(ours, ref) == []


def test_run_cycles_multicore_from_reset(tmp_path: Path) -> None:
    # one run writes the 4 VPs' logs, each VP started where the CP starts it; the partial
    # quirk set differs from the RTL later on (no RTL scoreboard), not in the first issues
    d = refdata("theia", "multicore_smoke", "code.mem").parent
    result = CliRunner().invoke(main, [
        "theia", "run", str(d), "-o", str(tmp_path), "--cycles",
        "--rtl-quirk", "reissue-after-branch", "--rtl-quirk", "first-eof"])
    assert result.exit_code == 0, result.output
    for v in range(4):
        ours = parse_log((tmp_path / f"vp.{v}.log").read_text())
        ref = parse_log((d / f"vp.{v}.log").read_text())
        assert differences(ours[:20], ref[:20]) == []


def test_run_vcd_designed(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_omem_1", "code.mem").parent
    vcd = tmp_path / "waves.vcd"
    result = CliRunner().invoke(main, ["theia", "run", str(d), "-o", str(tmp_path),
                                       "--vcd", str(vcd)])
    assert result.exit_code == 0, result.output
    text = vcd.read_text()
    assert "$var wire 4" in text and "cbus_owner" in text and "IO_busy" in text
    assert (tmp_path / "vp.2.log").exists()
    assert "waveforms" in result.output


def test_quirk_names_map_to_flags() -> None:
    assert quirks_from_names([]) == quirks_from_names(["cp-exit-noop"])
    q = quirks_from_names(["div-reissue", "tmem-row0"])
    assert q.refetch_after_fifo and q.tmem_row0 and not q.stop_at_eof
    assert quirks_from_names(["all"]).rtl_scoreboard


def test_control_program_starting_nothing_falls_back_to_cycle_0(tmp_path: Path) -> None:
    from isaforge.theia.cycle.runner import write_cycle_outputs
    from isaforge.theia.image import read_mem

    d = refdata("theia", "regressions", "test_omem_1", "code.mem").parent
    code = read_mem((d / "code.mem").read_text())
    lines = write_cycle_outputs(code, None, [2], tmp_path, control=[0x0D000000] * 8)
    assert any("started no VP" in line and "cycle 0" in line for line in lines)
    first = parse_log((tmp_path / "vp.2.log").read_text())[0]
    assert first.kind == "I" and first.ns == 20  # FETCH in cycle 0, issue in cycle 1
