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


# --------------------------------------------------------------------------------------------
# The CLI's voice: one line, "isaforge: [FILE:LINE:COL: ]error: ...", exit 1 (input) / 2 (usage)
# --------------------------------------------------------------------------------------------


def _cli(args: list[str]) -> tuple[int, list[str]]:
    r = CliRunner().invoke(main, ["theia", *args], prog_name="isaforge")
    return r.exit_code, r.stderr.strip().splitlines()


def test_cli_bad_input_is_one_line_and_status_1(tmp_path: Path) -> None:
    binary = tmp_path / "code.mem"
    binary.write_bytes(b"\xff\xfe\x00")
    bad_mem = tmp_path / "bad.mem"
    bad_mem.write_text("80019000 00000000\nzz 1\n")
    cfg = tmp_path / "t.config"
    cfg.write_text("vp[2].r[66] == 1 2 3\n")
    cases = [
        (["disasm", str(binary)], f"isaforge: error: {binary}: not a text file ("),
        (["asm", str(binary), "-o", str(tmp_path / "o.mem")],
         f"isaforge: error: {binary}: not a text file ("),
        (["disasm", str(bad_mem)], f"isaforge: {bad_mem}:2:1: error: expected two hex32 words"),
        (["disasm", "--cp", str(bad_mem)], f"isaforge: {bad_mem}:1:1: error: expected a hex32"),
        (["disasm", str(tmp_path / "nowhere.mem")], "isaforge: error: No such file"),
        (["asm", str(tmp_path / "nowhere.s"), "-o", "-"], "isaforge: error: No such file"),
        (["check", str(tmp_path / "nowhere.config")], "isaforge: error: No such file"),
        (["run", str(tmp_path / "nowhere.vp")], f"isaforge: error: {tmp_path / 'nowhere.vp'}: "
                                                "no such file or directory"),
    ]
    for args, start in cases:
        code, err = _cli(args)
        assert code == 1, (args, err)
        assert len(err) == 1 and err[0].startswith(start), (args, err)


def test_cli_bad_usage_is_one_line_and_status_2(tmp_path: Path) -> None:
    src = tmp_path / "p.s"
    src.write_text("ADD R[0].x__ I(0) 0\n")
    cases = [
        (["asm", str(src)], "isaforge: error: missing option '-o' / '--output' "
                            "(see 'isaforge theia asm --help')"),
        (["disasm"], "isaforge: error: missing argument 'MEM' (see 'isaforge theia disasm"),
        (["disasm", "--bogus", str(src)], "isaforge: error: no such option '--bogus'"),
        (["frobnicate"], "isaforge: error: no such command 'frobnicate'"),
        (["run", "--cores", "99", str(src)], "isaforge: error: invalid value for '--cores'"),
        (["trace", "--rtl-quirk", "nope", str(src)],
         "isaforge: error: invalid value for '--rtl-quirk'"),
        (["compile"], "isaforge: error: missing argument 'SOURCES...'"),
    ]
    for args, start in cases:
        code, err = _cli(args)
        assert code == 2, (args, err)
        assert len(err) == 1 and err[0].startswith(start), (args, err)
        assert "Error:" not in err[0] and "Usage:" not in err[0]
