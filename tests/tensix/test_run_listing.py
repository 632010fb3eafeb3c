"""``isaforge tensix run`` on objdump listings: the Tensix words of a TRISC kernel listing are
that thread's stream (issue 15 item 6)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from isaforge.cli import main
from isaforge.core.errors import EmulationError
from isaforge.tensix.isa import rotr2
from isaforge.tensix.program import load_file, parse_listing

from ..refdata import refdata

ADD1 = ("tensix", "tenstorrent-docs", "add1_sfpu_single_file")
WORD_RE = re.compile(r"^\s*[0-9a-f]+:\s+([0-9a-f]{8})\s+(?:tt|sfp)", re.MULTILINE)


def _invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["tensix", "run", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("k", [0, 1, 2])
def test_listing_words_are_the_threads_stream(k: int) -> None:
    path = refdata(*ADD1, f"compute_trisc{k}.objdump.txt")
    text = path.read_text()
    want = [rotr2(int(w, 16)) for w in WORD_RE.findall(text)]
    assert want
    prog = load_file(str(path))
    assert prog.streams[k] == want
    assert all(not prog.streams[t] for t in range(3) if t != k)


def test_nohex_listing_assembles_to_the_same_words() -> None:
    text = refdata(*ADD1, "compute_trisc1.objdump.txt").read_text()
    nohex = re.sub(r"^(\s*[0-9a-f]+:)\s+[0-9a-f]{8}\s+", r"\1\t", text, flags=re.MULTILINE)
    assert nohex != text
    assert parse_listing(nohex, "x").streams == parse_listing(text, "y").streams


def test_run_add1_math_listing_traces_its_words() -> None:
    path = refdata(*ADD1, "compute_trisc1.objdump.txt")
    code, out, err = _invoke(str(path), "--trace", "insn")
    assert code == 0, err
    first = [rotr2(int(w, 16)) for w in WORD_RE.findall(path.read_text())][:5]
    traced = [int(ln.split()[1], 16) for ln in out.splitlines()[:5]]
    assert traced == first
    assert all(ln.startswith("T1 ") for ln in out.splitlines())
    assert re.search(r"done: \d+ instructions \(T0 0, T1 \d+, T2 0\)", err)


def test_multicore_listing_thread_selects_its_section() -> None:
    path = refdata("tensix", "tenstorrent-docs", "nohex", "matmul-all-cores.s")
    text = path.read_text()
    whole = parse_listing(text, "m")
    for k in range(3):
        only = parse_listing(text, "m", thread=k)
        assert only.streams[k] == whole.streams[k] and whole.streams[k]
        assert all(not only.streams[t] for t in range(3) if t != k)
    # the math section holds the seed's replayed MVMULs
    assert sum(1 for w in whole.streams[1] if w >> 24 == 0x26) >= 16


def test_listing_errors_are_one_line(tmp_path: Path) -> None:
    path = refdata(*ADD1, "compute_trisc1.objdump.txt")
    code, _, err = _invoke(str(path), "--thread", "2")
    assert code == 1 and err.startswith("isaforge: error:") and "TRISC2" in err
    bad = tmp_path / "bad.txt"
    bad.write_text("x.elf:     file format elf32-littleriscv\n  10:\tc83\tttnop\n"
                   "  14:\t00000013\tttsetc16 99999,1\n")
    code, _, err = _invoke(str(bad))
    assert code == 1 and err.count("\n") == 1 and "bad.txt:3" in err
    prog = tmp_path / "p.s"
    prog.write_text("ttnop\n")
    with pytest.raises(EmulationError):
        load_file(str(prog), thread=1)
