"""The Python API's RTL quirks are the command line's: ``Gpu(rtl=True)`` / ``Gpu(quirks=...)``
against ``isaforge theia run --rtl`` / ``--rtl-quirk NAME`` and against the RTL's own dumps.

For every RTL run in refdata/theia the API's final registers and OMEM (formatted as the test
bench dumps them) equal the RTL's dumps and the CLI's byte for byte, and its cycle counts and
end stamp are the ones the CLI prints; each timed quirk alone gives through the API what it
gives through the CLI; a program the RTL never finishes does not finish through the API
either, saying where, as the CLI does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.core.errors import EmulationError
from isaforge.theia.cycle import Quirks
from isaforge.theia.machine.dumps import format_omem, format_rf
from isaforge.theia.machine.gpu import QUIRK_ALIASES, TIMED_QUIRKS, Gpu, RunResult
from isaforge.theia.machine.loader import load_program
from tests.refdata import refdata, refdata_path

_REG = refdata_path("theia", "regressions")
REGRESSIONS = sorted(p.name for p in _REG.iterdir() if (p / "vp.2.log").exists()) if _REG \
    else ["test1_IO"]
OTHER_RUNS = [("isa_probe", "v_none"), ("multicore_smoke",)]
SUMMARY = re.compile(r"VP(\d+): (\d+) issues, (\d+) commits, ended at (\d+) ns "
                     r"\(started at (\d+) ns\)")


def _api(d: Path, quirks: Any = (), max_cycles: int = 20_000_000, **kw: Any) -> tuple[Gpu,
                                                                                      RunResult]:
    prog = load_program(d)
    gpu = Gpu(quirks=quirks, **kw)
    gpu.load(prog.code, prog.control, prog.tmem)
    return gpu, gpu.run(max_cycles=max_cycles)


def _cli(d: Path, out: Path, *how: str) -> str:
    r = CliRunner().invoke(main, ["theia", "run", *how, str(d), "-o", str(out)])
    assert r.exit_code == 0, r.output
    return r.output


def _dumps(gpu: Gpu, vp: int) -> tuple[str, str]:
    v = gpu.vps[vp]
    return format_rf(v.registers, v.written), format_omem(v.omem, v.omem_written)


def _same_as_cli(gpu: Gpu, result: RunResult, out: Path, printed: str) -> None:
    """The API's run is the CLI's: the VPs dumped, their dumps, issues, commits and stamps."""
    summaries = {int(m[1]): tuple(map(int, m.groups()[1:])) for m in SUMMARY.finditer(printed)}
    assert sorted(summaries) == result.dumped
    for i in result.dumped:
        issues, commits, end, start = summaries[i]
        model = result.timed.models[i]
        assert (gpu.vps[i].instructions, model.commits) == (issues, commits)
        assert (result.start_ns[i], result.start_ns[i] + 20 * result.cycles[i]) == (start, end)
        assert _dumps(gpu, i) == ((out / f"rf.vp.{i}.log").read_text(),
                                  (out / f"OMEM.vp.{i}.log").read_text())
    m = re.search(r"run ended at (\d+) ns", printed)
    assert result.end_ns == (int(m[1]) if m else None)


def _rtl_dirs() -> list[tuple[str, ...]]:
    return [("regressions", n) for n in REGRESSIONS] + OTHER_RUNS


@pytest.mark.parametrize("parts", _rtl_dirs(), ids="/".join)
def test_api_rtl_is_the_rtl_and_the_cli(parts: tuple[str, ...], tmp_path: Path) -> None:
    d = refdata("theia", *parts, "vp.2.log").parent
    gpu, result = _api(d, rtl=True)
    assert result.ended == "first-eof" and result.dumped == [result.first_eof]
    for i in result.dumped:  # the RTL's own dumps, byte for byte
        assert _dumps(gpu, i) == ((d / f"rf.vp.{i}.log").read_text(),
                                  (d / f"OMEM.vp.{i}.log").read_text())
    _same_as_cli(gpu, result, tmp_path, _cli(d, tmp_path, "--rtl"))


def test_the_api_and_the_cli_time_the_same_quirks() -> None:
    from isaforge.theia.cli import QUIRK_CHOICES
    from isaforge.theia.cycle.runner import TIMED_QUIRKS as RUNNER_TIMED

    assert {*TIMED_QUIRKS, *QUIRK_ALIASES} == set(RUNNER_TIMED)
    for name in QUIRK_CHOICES:  # every --rtl-quirk name is a Gpu quirk, timed alike
        assert (Gpu(quirks={name}).timed_quirks is not None) == (name in RUNNER_TIMED
                                                                 or name == "all")


def test_the_spellings_of_the_rtl_are_one_run() -> None:
    d = refdata("theia", "regressions", "test_branches_1", "vp.2.log").parent
    runs = [_api(d, **kw) for kw in ({"rtl": True}, {"quirks": {"all"}},
                                     {"quirks": Quirks.rtl()})]
    assert len({(r.cycles[2], r.end_ns, r.vp_instructions) for _, r in runs}) == 1
    assert len({_dumps(g, 2) for g, _ in runs}) == 1


# every timed quirk alone (the instruction-level ones alone share the CLI's code path)
SINGLE = sorted([*TIMED_QUIRKS, *QUIRK_ALIASES])


@pytest.mark.parametrize("quirk", SINGLE)
def test_single_timed_quirk_is_the_clis(quirk: str, tmp_path: Path) -> None:
    limit = "200000"
    for name in REGRESSIONS:
        d = refdata("theia", "regressions", name, "vp.2.log").parent
        out = tmp_path / name
        r = CliRunner().invoke(main, ["theia", "run", "--rtl-quirk", quirk, str(d), "-o",
                                      str(out), "--max-cycles", limit])
        if r.exit_code == 0:
            gpu, result = _api(d, (quirk,), max_cycles=int(limit))
            assert result.timed is not None and result.started == [2]
            _same_as_cli(gpu, result, out, r.output)
            continue
        # the CLI says the run does not end (no dumps): so does the API, in the same words
        m = re.search(r"error: (the run does not end within \d+ cycles: .*); no dumps",
                      r.output)
        assert m is not None, r.output
        with pytest.raises(EmulationError) as e:
            _api(d, (quirk,), max_cycles=int(limit))
        assert str(e.value).endswith(m[1])


@pytest.mark.parametrize("quirk", ["tmem-row0", "first-eof", "cp-exit-noop", "cp-not-noop"])
def test_single_instruction_level_quirk_is_the_clis(quirk: str, tmp_path: Path) -> None:
    for name in REGRESSIONS:
        d = refdata("theia", "regressions", name, "vp.2.log").parent
        out = tmp_path / name
        printed = _cli(d, out, "--rtl-quirk", quirk)
        gpu, result = _api(d, (quirk,))
        assert result.timed is None
        assert f"run ended: {result.ended}" in printed
        for i in result.dumped:
            assert f"VP{i}: {gpu.vps[i].instructions} instructions" in printed
            assert _dumps(gpu, i) == ((out / f"rf.vp.{i}.log").read_text(),
                                      (out / f"OMEM.vp.{i}.log").read_text())


def test_div_reissue_alone_ends_like_the_cli_and_all_does_not(tmp_path: Path) -> None:
    # the probe's DIV: re-issued only on the path the RTL takes; div-reissue alone ends it
    # (the old instruction-level quirk re-executed every DIV forever), the RTL does not
    d = refdata("theia", "isa_probe", "v_0", "vp.2.head.log").parent
    gpu, result = _api(d, ("div-reissue",))
    assert result.finished == [2]
    _same_as_cli(gpu, result, tmp_path, _cli(d, tmp_path, "--rtl-quirk", "div-reissue"))
    with pytest.raises(EmulationError, match=r"does not end within 20000 cycles: "
                                             r"VP2 re-issuing the DIV at PC 74"):
        _api(d, rtl=True, max_cycles=20_000)


def _replay_commits(log: str) -> dict[tuple[int, int], int]:
    """The register lanes a vp.N.log's COMMIT lines leave behind ((row, lane) -> value)."""
    lanes: dict[tuple[int, int], int] = {}
    for row, mask, *vals in re.findall(
            r"COMMIT \S+ R\[\s*(\d+)\]\.([xyz]+)\s+(\w{8}) (\w{8}) (\w{8})", log):
        for k, name in enumerate("xyz"):
            if name in mask:
                lanes[int(row), k] = int(vals[k], 16)
    return lanes


@pytest.mark.parametrize("where", [("perf_div_livelock",), ("isa_probe", "v_1")], ids="/".join)
def test_div_livelock_never_ends_as_the_rtl(where: tuple[str, ...], tmp_path: Path) -> None:
    d = refdata("theia", *where, "vp.2.head.log").parent
    prog = load_program(d)
    gpu = Gpu(rtl=True)
    gpu.load(prog.code, prog.control, prog.tmem)
    with pytest.raises(EmulationError, match="does not end within 30000 cycles") as e:
        gpu.run(max_cycles=30_000)
    r = CliRunner().invoke(main, ["theia", "trace", "--rtl", str(d), "-o", str(tmp_path),
                                  "--max-cycles", "30000"])
    assert r.exit_code == 1
    where_cli = re.search(r"error: (the run does not end within .*); no dumps", r.output)
    assert where_cli is not None and str(e.value).endswith(where_cli[1])
    assert "re-issuing the DIV" in str(e.value)
    # the state reached is left in the GPU: every lane the CLI's trace (whose head is the
    # RTL's, test_rtl_mode) commits holds the last value committed to it
    assert gpu.last_result is not None and gpu.last_result.cycles[2] == 30_000
    lanes = _replay_commits((tmp_path / "vp.2.log").read_text())
    assert len(lanes) > 10
    regs = gpu.registers(2)
    assert {key: int(regs[key]) for key in lanes} == lanes


def test_back_to_back_copies_run_only_vp1_forever(tmp_path: Path) -> None:
    from tests.theia.test_rtl_mode import _render1

    d = _render1(tmp_path / "in")
    prog = load_program(d)
    for quirks in (("mcu-lost",), ("all",)):
        gpu = Gpu(quirks=quirks)
        gpu.load(prog.code, prog.control, prog.tmem)
        with pytest.raises(EmulationError, match="does not end within 3000 cycles") as e:
            gpu.run(max_cycles=3000)
        for v in (0, 2, 3):
            assert f"VP{v} issuing nothing" in str(e.value)
        hi = prog.code[0] >> 32
        assert gpu.vp(1).fetch(0) == hi << 32 | hi  # the copy landed one word off
        assert gpu.vp(1).fetch(1) == prog.code[0]
        assert gpu.last_result is not None and sorted(gpu.last_result.cycles) == [1]


def test_hooks_of_a_timed_run(tmp_path: Path) -> None:
    d = refdata("theia", "regressions", "test_multihtread1", "vp.2.log").parent
    plain, want = _api(d, rtl=True)
    prog = load_program(d)
    gpu = Gpu(rtl=True)
    gpu.load(prog.code, prog.control, prog.tmem)
    insns: list[tuple[int, Any]] = []
    regs: list[tuple[int, Any, Any]] = []
    gpu.hook_add("insn", lambda g, a, size, info: insns.append((a, info)))
    gpu.hook_add("reg_write", lambda g, row, value, info: regs.append((row, value, info)))
    got = gpu.run()
    assert (got.cycles, got.end_ns, got.vp_instructions) == (want.cycles, want.end_ns,
                                                            want.vp_instructions)
    assert _dumps(gpu, 2) == _dumps(plain, 2)
    # one insn per issue (re-issues included), at its byte address, with its thread
    assert len(insns) == want.vp_instructions
    assert all(info.core == "VP2" and gpu.vp(2).fetch(a // 8) == info.word
               for a, info in insns)
    assert {info.thread for _, info in insns} == {0, 1}  # the program runs two threads
    # one reg_write per result committed with write enables; the last value of each row's
    # lanes is the final register file
    assert regs and all(info.we and info.source == "insn" for _, _, info in regs)
    final = plain.vps[2].registers
    last: dict[tuple[int, int], int] = {}
    for row, value, info in regs:
        for k in range(3):
            if info.we >> (2 - k) & 1:
                last[row, k] = value[k]
    assert all(final[row, k] == v for (row, k), v in last.items())
    # OMEM writes are not reported one by one: said, not skipped
    gpu.hook_add("mem_write", lambda *a: None)
    with pytest.raises(EmulationError, match="mem_write"):
        gpu.run()


def test_step_and_missing_control_program_are_refused() -> None:
    d = refdata("theia", "regressions", "test1_IO", "vp.2.log").parent
    prog = load_program(d)
    gpu = Gpu(quirks={"reissue-after-branch"})
    gpu.load(prog.code, prog.control, prog.tmem)
    with pytest.raises(EmulationError, match=r"step\(\).*use run\(\)"):
        gpu.step()
    bare = Gpu(rtl=True)
    bare.load_vp(2, prog.code)
    with pytest.raises(EmulationError, match="control program"):
        bare.run()
    with pytest.raises(EmulationError, match="at most 4"):
        Gpu(cores=8, rtl=True).run()
    with pytest.raises(EmulationError, match="collection of names"):
        Gpu(quirks="all")
    with pytest.raises(EmulationError, match="unknown RTL quirk 'bogus'"):
        Gpu(quirks={"bogus"})
    # the instruction-level quirks alone stay instruction-level, as on the command line
    isa = Gpu(quirks={"tmem-row0", "first-eof"})
    isa.load(prog.code, prog.control, prog.tmem)
    assert isa.timed_quirks is None and isa.run().timed is None


DATA_COPY_CP = """#define VP_DST_CODE_MEM (1<<31)
  scalar SrcOffset = 0,DstOffset,DataOffset;
  DstOffset = (0x0 | ({n}<<20) | VP_DST_CODE_MEM );
  DataOffset = (0x0 | (1<<20) | 40 );
  copy_data_block < 2 , DstOffset  ,SrcOffset>;
  while ( block_transfer_in_progress ) {{}}
  copy_data_block < 2 , DataOffset  ,SrcOffset>;
  while ( block_transfer_in_progress ) {{}}
  start <2>;
  exit ;
"""


def test_a_data_copy_is_said_not_modelled_by_a_timed_run() -> None:
    from isaforge.theia.compiler import compile_cp
    from isaforge.theia.demo import loop_program

    code = loop_program("mul", 3)
    control = compile_cp(DATA_COPY_CP.format(n=len(code)), "data.cp").words
    isa = Gpu()
    isa.load(code, control)
    isa.run()
    assert isa.register(2, 40) != (0, 0, 0)  # the instruction level copies the row
    gpu = Gpu(rtl=True)
    gpu.load(code, control)
    result = gpu.run()
    # (the RTL's CP runs on past EXIT: the copies are made again until the VP is started)
    assert any(re.match(r"\d+ COPYBLOCK\(s\) of data", n) for n in result.notes)
    assert gpu.register(2, 66) == isa.register(2, 66) and gpu.register(2, 10) == (3, 3, 3)
