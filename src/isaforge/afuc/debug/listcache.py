"""The debugger's listing of a firmware (each instruction's text, the labels) kept on disk,
beside the emulator's compiled code (:mod:`..machine.codecache`, and only when that cache is
on, as the CLI has it): making it decodes the whole firmware, which costs a debugging
session's start more than anything else.

One file per firmware image and id, named after a digest of both and of what the listing
depends on (Python's version, the sources and data of the afuc and core packages), so that
an edited disassembler never reads a stale listing. Any error reading or writing the file
leaves it unused (the listing is made again).
"""

from __future__ import annotations

from hashlib import blake2b
from pathlib import Path

from .. import diskcache
from ..machine import codecache

_tag: str | None = None


def _sources_tag() -> str:
    """A digest of the files the listing depends on (read once a process)."""
    global _tag
    if _tag is None:
        pkg = Path(__file__).resolve().parents[2]  # (isaforge/)
        _tag = diskcache.sources_digest([str(pkg / "afuc"), str(pkg / "core")], walk=True)
    return _tag


def _path(data: bytes, fwid: int) -> Path:
    key = blake2b(data + fwid.to_bytes(4, "little"), digest_size=16).hexdigest()
    return codecache.directory() / f"afuc-listing-{key}-{_sources_tag()}.marshal"


def load(data: bytes, fwid: int) -> dict | None:
    """The listing kept for this image (as :func:`save` got it), or None."""
    if not codecache.enabled():
        return None
    got = diskcache.read(str(_path(data, fwid)))
    return got if isinstance(got, dict) else None


def save(data: bytes, fwid: int, listing: dict) -> None:
    """Keep a listing (a dict of marshal-able values) for this image."""
    if not codecache.enabled():
        return
    diskcache.write(str(_path(data, fwid)), listing)
