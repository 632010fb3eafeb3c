"""The disk cache of the emulator's generated code (machine.codecache): code read back from
the cache runs as freshly generated code does; a damaged file is ignored."""

from __future__ import annotations

import pytest

from isaforge.afuc import Emulator
from isaforge.afuc.machine import codecache, codegen
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header
from tests.refdata import refdata

WORDS = [pkt7_header(0x48, 1), 0, *[w for i in range(20) for w in
                                     (pkt4_header(0x8800 + 3 * i, 3), i, i + 1, i + 2)],
         pkt7_header(0x6D, 3), 0, 0xA00E, 7]


def outcome(fw: bytes, exact: bool) -> tuple:
    emu = Emulator(fw)
    emu.feed(WORDS)
    emu.run(exact=exact)
    return emu.effects_raw, emu.steps, emu.instructions, emu.packets


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ISAFORGE_NO_CACHE", raising=False)
    saved = dict(codegen._CODE)
    monkeypatch.setattr(codecache, "_loaded", set())
    monkeypatch.setattr(codecache, "_dirty", {})
    codecache.enable()
    yield tmp_path
    codecache.enable(False)
    codegen._CODE.clear()
    codegen._CODE.update(saved)


def test_code_read_back_from_the_cache_runs_the_same(cache):
    fw = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    codegen._CODE.clear()
    want = {exact: outcome(fw, exact) for exact in (False, True)}
    codecache.save()
    files = list(cache.glob("afuc-code-*.marshal"))
    assert len(files) == 1 and files[0].stat().st_size > 0
    codegen._CODE.clear()  # a new process: only the disk has the code
    codecache._loaded.clear()
    for exact in (False, True):
        assert outcome(fw, exact) == want[exact]
    assert not codecache._dirty  # nothing had to be generated again
    files[0].write_bytes(b"\x00garbage")  # a damaged file: generated again
    codegen._CODE.clear()
    codecache._loaded.clear()
    assert outcome(fw, False) == want[False]
    assert codecache._dirty
