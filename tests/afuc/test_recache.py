"""afuc.recache: the assembler's patterns made from programs kept on disk are the patterns
``re.compile`` makes; without the cache (the library's default) they are re.compile's; a
damaged or foreign file is not used; an ``afuc asm`` process with the cache does not
import ``re``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from isaforge.afuc import datacache, diskcache, fastasm, recache
from isaforge.afuc.asm import LEXER
from tests.refdata import refdata

PATTERNS = [fastasm.OPERANDS, fastasm._scanner(LEXER).pattern, r"(?P<a>x)|(?P<b>y+)z"]
SAMPLES = ["cwrite $06, [$00 + 0x02a]\t; CP_RB_BASE", "(rep)(xmov3)mov $00, $data",
           "brne $14, b21, #l839", "l839:", "[016ee17a]", "yyz x", "mov $addr, 0x81 << 24"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ISAFORGE_NO_CACHE", raising=False)
    monkeypatch.setattr(recache, "_entries", None)
    datacache.enable()
    yield tmp_path
    datacache.enable(False)


def _same(got: re.Pattern[str], pattern: str) -> None:
    want = re.compile(pattern)
    assert got == want  # (Pattern equality compares the programs)
    for s in SAMPLES:
        assert got.split(s) == want.split(s)
        assert got.findall(s) == want.findall(s)


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_from_the_cache_are_re_compiles(cache: Path, monkeypatch, pattern) -> None:
    _same(recache.compile(pattern), pattern)  # kept
    monkeypatch.setattr(recache, "_entries", None)
    monkeypatch.setattr(recache, "_program", lambda p: pytest.fail("not from the cache"))
    _same(recache.compile(pattern), pattern)  # read back


def test_off_by_default_and_damage_is_not_used(cache: Path, monkeypatch) -> None:
    datacache.enable(False)
    recache.compile(PATTERNS[2])
    assert not list(cache.iterdir())  # the library writes nothing
    datacache.enable()
    diskcache.write(str(cache / "afuc-regex"), ((sys.version, 0, 0), {PATTERNS[2]: "bad"}))
    _same(recache.compile(PATTERNS[2]), PATTERNS[2])  # another key: not read
    monkeypatch.setattr(recache, "_entries", {PATTERNS[2]: (32, [1, 2, 3], 0, {}, (None,))})
    _same(recache.compile(PATTERNS[2]), PATTERNS[2])  # a program _sre rejects: re's


def test_an_asm_process_does_not_import_re(tmp_path: Path) -> None:
    src = tmp_path / "fw.asm"
    from isaforge.afuc import listing

    src.write_text(listing(refdata("afuc", "firmware", "a530_pm4.fw").read_bytes()))
    env = dict(os.environ, ISAFORGE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=str(Path(fastasm.__file__).parents[2]))
    env.pop("ISAFORGE_NO_CACHE", None)
    cmd = [sys.executable, "-X", "importtime", "-m", "isaforge", "afuc", "asm", str(src), "-o",
           str(tmp_path / "fw.bin")]
    runs = [subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stderr
            for _ in range(2)]
    imported = {line.rsplit("|", 1)[-1].strip() for line in runs[1].splitlines()}
    assert "isaforge.afuc.asm" in imported
    assert "re" not in imported and "enum" not in imported  # (the first run kept them)
    assert (tmp_path / "fw.bin").read_bytes() == refdata(
        "afuc", "firmware", "a530_pm4.fw").read_bytes()
