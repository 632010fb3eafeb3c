"""An on-disk cache of what a6xx/a7xx boot code sets up, for ``isaforge afuc disasm``.

A listing of a6xx/a7xx firmware needs its packet tables, which only running the boot code on
the emulator gives (:func:`isaforge.afuc.boot.boot_images`): importing the emulator and
generating its code is a third of such a command's start-up. :func:`boot_tables` gives the
same result, kept in a file per firmware once computed, so that the next listing of the same
file starts without the emulator.

Off unless :func:`enable` is called (the ``afuc disasm`` command does; the library writes no
files of its own accord). The directory is the emulator code cache's
(:mod:`isaforge.afuc.machine.codecache`): ``$ISAFORGE_CACHE_DIR``, else
``$XDG_CACHE_HOME/isaforge``, else ``~/.cache/isaforge``; ``ISAFORGE_NO_CACHE=1`` turns it off.
A file holds the firmware's words and id (compared in full before use) and a tag of this
Python and of the afuc sources (names, sizes and times, as Python's bytecode cache checks its
sources), so that an edited emulator never reads a stale result. Any error reading or writing
the cache leaves it unused.
"""

from __future__ import annotations

import os
import sys

from . import datacache, diskcache
from .image import Firmware

# one image: (name, first word counted from the version dword, size in words, the packet
# table its boot code wrote, where that table sits in the image or None)
BootTable = tuple[str, int, int, list[int], int | None]

_enabled = False
_tag: str | None = None


def enable(on: bool = True) -> None:
    """Use the disk cache in this process (the register database's too: :mod:`.datacache`)."""
    global _enabled
    _enabled = diskcache.allowed(on)
    datacache.enable(on)


def _source_tag() -> str:
    """This Python and the sources a boot run depends on (the afuc package and its data)."""
    global _tag
    if _tag is None:
        from .. import __version__

        here = os.path.dirname(os.path.abspath(__file__))
        parts = [__version__, sys.version]
        for sub in ("", "machine", "data"):
            d = os.path.join(here, sub)
            for name in sorted(os.listdir(d)):
                if name.endswith((".py", ".gz")):
                    st = os.stat(os.path.join(d, name))
                    parts.append(f"{sub}/{name}:{st.st_size}:{st.st_mtime_ns}")
        _tag = "\n".join(parts)
    return _tag


def _compute(fw: Firmware) -> list[BootTable]:
    from .boot import boot_images, find_table  # the emulator

    out: list[BootTable] = []
    for img in boot_images(fw):
        words = fw.words[1 + img.start : 1 + img.start + img.size]
        out.append((img.name, img.start, img.size, list(img.table),
                    find_table(words, img.size, img.table)))
    return out


def boot_tables(fw: Firmware) -> list[BootTable]:
    """The images of a6xx/a7xx firmware with their packet tables, as
    :func:`~isaforge.afuc.boot.boot_images` and :func:`~isaforge.afuc.boot.find_table` give
    them (the same errors); from the cache when it is on and holds this firmware."""
    if not _enabled:
        return _compute(fw)
    import struct  # (a6xx/a7xx listings only)
    import zlib

    image = struct.pack(f"<{len(fw.words)}I", *fw.words)
    crc = zlib.crc32(image)
    path = os.path.join(diskcache.directory(),
                        f"afuc-boot-{fw.fwid:03x}-{len(fw.words)}-{crc:08x}")
    key = (_source_tag(), fw.fwid, image)  # (the words as bytes: read and compared at once)
    tables = diskcache.keyed(path, key, lambda: _compute(fw))
    return [(n, s, z, t, o) for n, s, z, t, o in tables]


__all__ = ["BootTable", "boot_tables", "enable"]
