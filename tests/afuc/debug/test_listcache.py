"""The debugger's listing kept on disk (debug/listcache): read back, it is the listing made
afresh; a damaged file is ignored; with the cache off nothing is written."""

from __future__ import annotations

import pytest

from isaforge.afuc.debug import listcache, view
from isaforge.afuc.machine import codecache
from tests.refdata import refdata


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("ISAFORGE_NO_CACHE", raising=False)
    monkeypatch.setattr(codecache, "_loaded", set())
    monkeypatch.setattr(codecache, "_dirty", {})
    codecache.enable()
    view._images.cache_clear()
    yield tmp_path
    codecache.enable(False)
    view._images.cache_clear()


def listing(data: bytes, fwid: int) -> dict:
    view._images.cache_clear()
    return {name: (img.text, img.labels) for name, img in view._images(data, fwid).items()}


@pytest.mark.parametrize("name", ["a630_sqe.fw", "a530_pfp.fw"])
def test_listing_read_back_is_the_listing_made_afresh(cache, name):
    from isaforge.afuc.image import load_firmware

    data = refdata("afuc", "firmware", name).read_bytes()
    fwid = load_firmware(data).fwid
    made = listing(data, fwid)
    assert made and list(cache.glob("afuc-listing-*.marshal"))
    assert listcache.load(data, fwid) == made
    assert listing(data, fwid) == made  # (read back)
    assert listcache.load(data, fwid ^ 1) is None  # (another id: another listing)


def test_damaged_file_is_ignored_and_made_again(cache):
    from isaforge.afuc.image import load_firmware

    data = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    fwid = load_firmware(data).fwid
    made = listing(data, fwid)
    (path,) = cache.glob("afuc-listing-*.marshal")
    path.write_bytes(path.read_bytes()[:100])
    assert listcache.load(data, fwid) is None
    assert listing(data, fwid) == made


def test_nothing_written_with_the_cache_off(tmp_path, monkeypatch):
    monkeypatch.setenv("ISAFORGE_CACHE_DIR", str(tmp_path))
    codecache.enable(False)
    data = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    assert listing(data, 0x6EE) is not None
    assert not list(tmp_path.iterdir())
    view._images.cache_clear()
