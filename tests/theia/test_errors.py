"""Bad input: one AsmError with file:line:col, and one line on stderr from the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge import theia
from isaforge.cli import main
from isaforge.core.errors import AsmError

BAD_VP = [
    # (source, line, col, words in the message)
    ("ADD R1.xyz R2.xyz R3.xyz\nFOO R1.xyz R2.xyz R3.xyz", 2, 1, "unknown instruction 'FOO'"),
    ("ADD R1.xyz R2.xyz R3.qyz", 1, 22, "expected"),
    ("ADD R1.xyz R2.xyz", 1, 18, "end of line"),
    ("ADD R[0].x__ I(0) 0 extra", 1, 21, "expected"),
    ("ADD <BRANCH.MAYBE> @3.___ R0.xyz R0.xyz", 1, 13, "expected"),
    ("ADD R[300].x__ I(0) 0", 1, 7, "8-bit field"),
    ("ADD R1.xyz R2.xyz R256.xyz", 1, 20, "8-bit field"),
    ("ADD R[1].x__ I(400000000) 0", 1, 1, "34-bit field"),
    ("ADD R[1 + offset ].x__ I(20000) R[DST+offset] *** 2 , 2", 1, 1, "inconsistent"),
    ("ADD R[1 + offset ].x__ I(0) R[DST+offset] *** 0 , 1", 1, 26, "inconsistent"),
    ("ADD <BRANCH.ALWAYS> @nowhere.___ R0.xyz R0.xyz", 1, 21, "undefined label 'nowhere'"),
    ("ADD R1.xyz R2.xyz R3.xyz {FOO=1}", 1, 26, "'FOO' is not a field"),
    ("ADD R1.xyz R2.xyz R3.xyz {EOF=2}", 1, 26, "1-bit field"),
    ("x: NOP R0.___ R0.xyz R0.xyz\nx: NOP R0.___ R0.xyz R0.xyz", 2, 1, "already defined"),
    ("ADD R1.xyz R2.xyz R3.xyz $", 1, 26, "unexpected character"),
    ("0:\t0 0 0 0   //\t0000000000000001\tNOP R0.___ R0.xyz R0.xyz", 1, 34, "hex column"),
    ("5:\t0 0 0 0   //\t0000000000000000\tNOP R0.___ R0.xyz R0.xyz", 1, 1, "listing address"),
    (".word 0x1ffffffffffffffff", 1, 7, "64-bit word"),
]
BAD_CP = [
    ("ASSIGN R1 I(70000 )", 1, 13, "16-bit field"),
    ("ADD R1 R2", 1, 10, "end of line"),
    ("MOV R1 R2 R3", 1, 1, "unknown instruction 'MOV'"),
    ("COPYBLOCK DstId: R0 SrcOffset: R11", 1, 35, "end of line"),
]


@pytest.mark.parametrize(("src", "line", "col", "msg"), BAD_VP)
def test_vp_errors(src: str, line: int, col: int, msg: str) -> None:
    with pytest.raises(AsmError) as e:
        theia.assemble(src, filename="t.s")
    assert e.value.loc is not None
    assert (e.value.loc.file, e.value.loc.line, e.value.loc.col) == ("t.s", line, col), str(e.value)
    assert msg in e.value.message


@pytest.mark.parametrize(("src", "line", "col", "msg"), BAD_CP)
def test_cp_errors(src: str, line: int, col: int, msg: str) -> None:
    with pytest.raises(AsmError) as e:
        theia.assemble(src, cp=True, filename="t.cp")
    assert e.value.loc is not None
    assert (e.value.loc.line, e.value.loc.col) == (line, col), str(e.value)
    assert msg in e.value.message


def test_bad_mem() -> None:
    with pytest.raises(AsmError) as e:
        theia.read_mem("80019000 00000000\nzz 1\n", filename="code.mem")
    assert str(e.value).startswith("code.mem:2:1: error:")
    with pytest.raises(AsmError):
        theia.read_mem("123456789\n", cp=True)


def test_cli_round_trip_and_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    src = tmp_path / "p.s"
    src.write_text("ADD R[0].x__ I(0) 0\nADD R0.___ R0.xyz R0.xyz {EOF=1}\n")
    out = tmp_path / "code.mem"
    r = runner.invoke(main, ["theia", "asm", str(src), "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert out.read_text() == "80019000 00000000\n04010000 00000000\n"
    r = runner.invoke(main, ["theia", "disasm", str(out)])
    assert r.exit_code == 0
    assert r.output.splitlines()[1].endswith("\tADD R0.___ R0.xyz R0.xyz")
    r = runner.invoke(main, ["theia", "disasm", "--plain", str(out)])
    assert r.output.splitlines() == ["ADD R[0].x__ I(0) 0", "ADD R0.___ R0.xyz R0.xyz {EOF=1}"]
    cp_src = tmp_path / "c.s"
    cp_src.write_text("ASSIGN R0 I(0 )\nEXIT R0 R0 R0\n")
    r = runner.invoke(main, ["theia", "asm", "--cp", str(cp_src), "-o", str(out)])
    assert r.exit_code == 0
    assert out.read_text() == ("//Code generated bt theia_compile\nd000000\t\t//ASSIGN R0 I(0 )\n"
                               "f000000\t\t//EXIT R0 R0 R0\n")
    src.write_text("ADD R1.xyz R2.xyz R3.xyz\nBAD R1\n")
    r = runner.invoke(main, ["theia", "asm", str(src), "-o", str(out)])
    assert r.exit_code == 1
    err = r.stderr.strip().splitlines()
    assert err == [f"isaforge: {src}:2:1: error: unknown instruction 'BAD' (expected one of "
                   "ADD, DIV, IO, LOGIC, MUL, NOP, RSVR2, SQRT)"]
