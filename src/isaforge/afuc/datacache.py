"""The decoded register database kept on disk, for ``isaforge afuc disasm`` and ``afuc asm``.

:mod:`isaforge.afuc.regdb` reads a gzipped JSON file; ``json`` imports ``re`` and ``enum``,
which together cost a listing's start-up more than reading a marshal of the result back.
Off unless :func:`enable` is called (the two commands do, through
:func:`isaforge.afuc.bootcache.enable`); the same directory and ``ISAFORGE_NO_CACHE`` as
:mod:`isaforge.afuc.bootcache`. An entry is used only for the same Python and the same data
file (path, size and time); any error reading or writing it leaves the cache unused.
"""

from __future__ import annotations

import os
import sys

from . import diskcache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_enabled = False


def enable(on: bool = True) -> None:
    """Use the disk cache in this process."""
    global _enabled
    _enabled = diskcache.allowed(on)


def enabled() -> bool:
    """Whether the cache is on (see :func:`enable`)."""
    return _enabled


def data_file(path: str, decode: Callable[[bytes], Any]) -> Any:
    """``decode(contents of path)``, from the cache (a marshal) when it is on and holds it."""
    def compute() -> Any:
        with open(path, "rb") as f:
            return decode(f.read())
    if not _enabled:
        return compute()
    st = os.stat(path)
    key = (sys.version, path, st.st_size, st.st_mtime_ns)
    cached = os.path.join(diskcache.directory(), f"afuc-data-{os.path.basename(path)}")
    return diskcache.keyed(cached, key, compute)


def derived(name: str, sources: tuple[str, ...], compute: Callable[[], Any]) -> Any:
    """``compute()``, a value made from the files ``sources`` (data and code), kept under
    ``name`` when the cache is on; used only for the same Python and the same files."""
    if not _enabled:
        return compute()
    try:
        key = (sys.version, *[(p, st.st_size, st.st_mtime_ns)
                              for p, st in ((p, os.stat(p)) for p in sources)])
    except OSError:
        return compute()
    return diskcache.keyed(os.path.join(diskcache.directory(), name), key, compute)


__all__ = ["data_file", "derived", "enable", "enabled"]
