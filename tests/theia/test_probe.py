"""The hand-encoded ISA probe (refdata/theia/isa_probe): our VP against the RTL column.

``v_none`` is 75 instructions covering SQRT, LOGIC, MUL, swizzle code 11, sign, SCOP
scaling, lane-masked immediates and the branch flags; ``v_0``..``v_3`` add one DIV each
(the RTL then livelocks re-issuing it, so only its first commit is meaningful).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from isaforge.core.errors import EmulationError
from isaforge.theia.machine import dumps
from isaforge.theia.machine.gpu import Gpu
from isaforge.theia.machine.loader import load_program
from tests.refdata import refdata

DIV_PROBES = {"v_0": 50, "v_1": 51, "v_2": 52, "v_3": 53}


def _gpu(variant: str, quirks: tuple[str, ...] = ()) -> tuple[Gpu, Path]:
    directory = refdata("theia", "isa_probe", variant)
    prog = load_program(directory)
    gpu = Gpu(quirks=quirks)
    gpu.load(prog.code, prog.control, prog.tmem)
    return gpu, directory


def _word(gpu: Gpu, row: int, lane: int) -> str:
    vp = gpu.vps[2]
    return f"{vp.r[row * 3 + lane]:08x}" if vp.written[row, lane] else dumps.UNDEFINED


@pytest.mark.parametrize("quirks", [(), ("reissue-after-branch", "first-eof")])
def test_probe_registers_equal_rtl_dump(quirks: tuple[str, ...]) -> None:
    gpu, directory = _gpu("v_none", quirks)
    gpu.run(max_steps=100_000)
    ref = dumps.read_rf(directory / "rf.vp.2.log")
    compared = 0
    for row, lanes in ref.items():
        for k, want in enumerate(lanes):
            if dumps.defined(want):
                assert _word(gpu, row, k) == want, f"r{row}.{'xyz'[k]}"
                compared += 1
    assert compared > 100


def _readme_rows() -> dict[str, str]:
    """``{'r20': '00040000 x3', ...}``: the RTL column of README.md's table."""
    text = refdata("theia", "isa_probe", "README.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"r\d+(?:/r\d+)?(?:\.x=1| = x)?", cells[0]):
            for name in cells[0].split("/"):
                rows[name] = cells[2]
    return rows


def _expand(result: str) -> list[str] | None:
    m = re.fullmatch(r"([0-9a-f]{8}) x3", result)
    if m:
        return [m.group(1)] * 3
    words = result.split()
    if len(words) == 3 and all(re.fullmatch(r"[0-9a-f]{8}|x{8}|0", w) for w in words):
        return [w if len(w) == 8 else "00000000" for w in words]
    return None


def test_probe_matches_readme_rtl_column() -> None:
    rows = _readme_rows()
    assert len(rows) >= 30
    gpu, _ = _gpu("v_none")
    gpu.run(max_steps=100_000)
    divs = {}
    for variant, row in DIV_PROBES.items():
        g, _ = _gpu(variant)
        g.run(max_steps=100_000)
        divs[row] = g
    checked = 0
    for name, result in rows.items():
        if name.startswith(("r70", "r71", "r72", "r73")):
            row = int(name[1:3])
            taken = result == "taken"
            assert taken or result == "fell through"
            # a taken branch skips the 'R7N.x = 1' after it
            assert (_word(gpu, row, 0) == dumps.UNDEFINED) == taken, name
            checked += 1
            continue
        row = int(name[1:])
        g = divs.get(row, gpu)
        m = re.fullmatch(r"= [rR](\d+)", result)
        want = [_word(gpu, int(m.group(1)), k) for k in range(3)] if m else _expand(result)
        assert want is not None, f"unparsed README row {name}: {result}"
        for k in range(3):
            if dumps.defined(want[k]):
                assert _word(g, row, k) == want[k], f"{name}.{'xyz'[k]}"
            else:
                assert _word(g, row, k) == dumps.UNDEFINED, f"{name}.{'xyz'[k]}"
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("variant", sorted(DIV_PROBES))
def test_div_probe_first_commit(variant: str) -> None:
    gpu, directory = _gpu(variant)
    gpu.run(max_steps=100_000)
    log = (directory / "vp.2.head.log").read_text()
    m = re.search(r"COMMIT DIV R\[\s*(\d+)\]\.xyz\s+(\w{8}) (\w{8}) (\w{8})", log)
    assert m is not None
    row = int(m.group(1))
    assert row == DIV_PROBES[variant]
    assert [_word(gpu, row, k) for k in range(3)] == list(m.group(2, 3, 4))


def test_rtl_livelocks_on_the_div_as_the_rtl() -> None:
    # the RTL (every defect, a timed run) re-issues the DIV forever; the re-issues commit
    # the first commit's value again (vp.2.head.log)
    gpu, directory = _gpu("v_0", ("all",))
    with pytest.raises(EmulationError, match="does not end within 20000 cycles: VP2 "
                                             "re-issuing the DIV at PC 74"):
        gpu.run(max_cycles=20_000)
    assert gpu.vps[2].instructions > 100  # issued over and over
    assert [_word(gpu, 50, k) for k in range(3)] == ["0000000e", "fffffff2", "00000002"]
