"""The decoded register database kept on disk, for ``isaforge afuc disasm`` and ``afuc asm``.

:mod:`isaforge.afuc.regdb` reads a gzipped JSON file; ``json`` imports ``re`` and ``enum``,
which together cost a listing's start-up more than reading a marshal of the result back.
Off unless :func:`enable` is called (the two commands do, through
:func:`isaforge.afuc.bootcache.enable`); the same directory and ``ISAFORGE_NO_CACHE`` as
:mod:`isaforge.afuc.bootcache`. An entry is used only for the same Python and the same data
file (path, size and time); any error reading or writing it leaves the cache unused.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_enabled = False


def enable(on: bool = True) -> None:
    """Use the disk cache in this process."""
    global _enabled
    _enabled = on and not os.environ.get("ISAFORGE_NO_CACHE")


def enabled() -> bool:
    """Whether the cache is on (see :func:`enable`)."""
    return _enabled


def directory() -> str:
    """``$ISAFORGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/isaforge``, else ``~/.cache/isaforge``."""
    d = os.environ.get("ISAFORGE_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "isaforge")


def data_file(path: str, decode: Callable[[bytes], Any]) -> Any:
    """``decode(contents of path)``, from the cache (a marshal) when it is on and holds it."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        key = (sys.version, path, st.st_size, st.st_mtime_ns)
        cached = os.path.join(directory(), f"afuc-data-{os.path.basename(path)}") if _enabled \
            else None
        if cached is not None:
            try:
                with open(cached, "rb") as c:
                    got_key, value = marshal.loads(c.read())
                if got_key == key:
                    return value
            except (OSError, ValueError, EOFError, TypeError):
                pass
        value = decode(f.read())
    if cached is not None:
        try:
            os.makedirs(os.path.dirname(cached), exist_ok=True)
            tmp = f"{cached}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(marshal.dumps((key, value)))
            os.replace(tmp, cached)
        except (OSError, ValueError):
            pass
    return value


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
    cached = os.path.join(directory(), name)
    try:
        with open(cached, "rb") as c:
            got_key, value = marshal.loads(c.read())
        if got_key == key:
            return value
    except (OSError, ValueError, EOFError, TypeError):
        pass
    value = compute()
    try:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        tmp = f"{cached}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(marshal.dumps((key, value)))
        os.replace(tmp, cached)
    except (OSError, ValueError):
        pass
    return value


__all__ = ["data_file", "derived", "directory", "enable", "enabled"]
