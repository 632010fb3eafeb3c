"""afuc.bootcache: the disassembler's cached boot-code tables are the boot run's, and a
file that does not match (another firmware, other sources, damage) is never used."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from isaforge.afuc import boot, bootcache
from isaforge.afuc.image import load_firmware
from isaforge.afuc.listing import listing
from tests.refdata import refdata


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ISAFORGE_NO_CACHE", raising=False)
    bootcache.enable()
    yield tmp_path
    bootcache.enable(False)


def _fw():
    return load_firmware(refdata("afuc", "firmware", "a630_sqe.fw").read_bytes())


def _no_boot_run(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    runs: list[int] = []
    real = boot.boot_images
    monkeypatch.setattr(boot, "boot_images", lambda fw: runs.append(1) or real(fw))
    return runs


def _boot_files(cache: Path) -> list[Path]:
    """The boot tables' files (the boot run may keep register data there too)."""
    return sorted(cache.glob("afuc-boot-*"))


def test_cached_tables_are_the_boot_runs(cache: Path, monkeypatch) -> None:
    fw = _fw()
    runs = _no_boot_run(monkeypatch)
    first = bootcache.boot_tables(fw)
    assert runs == [1] and len(_boot_files(cache)) == 1
    img = boot.boot_images(fw)[0]
    name, start, size, table, offset = first[0]
    assert (name, start, size, table) == (img.name, img.start, img.size, img.table)
    assert offset == boot.find_table(fw.words[1:], size, table) is not None
    runs.clear()
    assert bootcache.boot_tables(fw) == first and runs == []  # from the file
    text = refdata("afuc", "disasm", "a630_sqe.asm").read_text()
    assert listing(refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()) == text
    assert runs == []


def test_a_file_that_does_not_match_is_not_used(cache: Path, monkeypatch) -> None:
    fw = _fw()
    want = bootcache.boot_tables(fw)
    (path,) = _boot_files(cache)
    runs = _no_boot_run(monkeypatch)
    other = load_firmware(refdata("afuc", "firmware", "a630_sqe.fw").read_bytes())
    other.words[-1] ^= 1  # another firmware under the same file name (same length, CRC aside)
    os.replace(path, cache / "kept")
    bootcache.boot_tables(other)
    (other_path,) = _boot_files(cache)
    os.replace(cache / "kept", other_path)  # the first firmware's file, as if CRCs collided
    bootcache.boot_tables(other)
    assert runs == [1, 1]
    monkeypatch.setattr(bootcache, "_tag", "other sources")
    bootcache.boot_tables(other)
    assert runs == [1, 1, 1]
    path.write_bytes(b"\x00damaged")
    assert bootcache.boot_tables(fw) == want and runs == [1, 1, 1, 1]


def test_off_unless_enabled(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    bootcache.enable(False)
    bootcache.boot_tables(_fw())
    monkeypatch.setenv("ISAFORGE_NO_CACHE", "1")
    bootcache.enable()
    bootcache.boot_tables(_fw())
    bootcache.enable(False)
    assert list(tmp_path.iterdir()) == []
