"""``isaforge tensix``'s voice: every error is one line, ``isaforge: FILE:LINE:COL: error:
...`` or ``isaforge: error: ...``; exit status 1 for bad input, 2 for bad usage."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.cli import main


@pytest.mark.parametrize("args, message", [
    (["disasm", "--frob", "x"], "no such option '--frob' (see 'isaforge tensix disasm --help')"),
    (["disasm", "--syntax", "att", "x"], "invalid value for '--syntax': 'att' is not one of"),
    (["asm", "k.s"], "missing option '-o' / '--output' (see 'isaforge tensix asm --help')"),
    (["run"], "missing argument 'PROGRAM'"),
    (["run", "--max-steps", "0", "p.s"], "invalid value for '--max-steps'"),
    (["trace", "--trace", "rwc", "p.s"], "no such option '--trace'"),
    (["frob"], "no such command 'frob' (see 'isaforge tensix --help')"),
])
def test_bad_usage_is_one_line_and_status_2(args: list[str], message: str) -> None:
    r = CliRunner().invoke(main, ["tensix", *args], prog_name="isaforge")
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("isaforge: error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_bad_input_is_one_line_and_status_1(tmp_path: Path) -> None:
    binary = tmp_path / "b.s"
    binary.write_bytes(b"\xff\xfe\x00")
    bad = tmp_path / "bad.s"
    bad.write_text("ttnop\nttsetc16 1\n")
    cases = [
        (["asm", str(binary), "-o", str(tmp_path / "o")], f"error: {binary}: not a text file"),
        (["run", str(binary)], f"error: {binary}: not a text file"),
        (["asm", str(bad), "-o", str(tmp_path / "o")], f"{bad}:2:1: error: ttsetc16 takes"),
        (["run", str(tmp_path / "none.s")], "error: No such file or directory"),
        (["disasm", str(binary)], "error: "),
    ]
    for args, message in cases:
        r = CliRunner().invoke(main, ["tensix", *args])
        assert r.exit_code == 1, (args, r.output)
        assert r.stderr.startswith("isaforge: ") and message in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
