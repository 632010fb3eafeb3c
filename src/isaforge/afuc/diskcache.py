"""What the afuc command line keeps on disk, shared by its caches (:mod:`.datacache`,
:mod:`.bootcache`, :mod:`.machine.codecache`, :mod:`.debug.listcache`): where the files go,
whether caching is allowed, and marshal files read and written so that any error leaves a
cache unused rather than failing a command.

The directory is ``$ISAFORGE_CACHE_DIR``, else ``$XDG_CACHE_HOME/isaforge``, else
``~/.cache/isaforge``; ``ISAFORGE_NO_CACHE=1`` turns every cache off. Only ``os``,
``marshal`` and ``sys`` are imported: a listing's start-up reads through here.
"""

from __future__ import annotations

import marshal
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def allowed(on: bool = True) -> bool:
    """``on``, unless ``ISAFORGE_NO_CACHE`` is set."""
    return on and not os.environ.get("ISAFORGE_NO_CACHE")


def directory() -> str:
    """Where the caches' files are."""
    d = os.environ.get("ISAFORGE_CACHE_DIR")
    if d:
        return d
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "isaforge")


def read(path: str) -> Any:
    """The value marshalled in ``path``, or None when it is missing or unreadable."""
    try:
        with open(path, "rb") as f:
            return marshal.loads(f.read())
    except (OSError, ValueError, EOFError, TypeError):
        return None


def write(path: str, value: Any) -> None:
    """Marshal ``value`` into ``path`` (through a temporary file, so a reader never sees half
    a file); an error leaves the cache as it was."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(marshal.dumps(value))
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass


def keyed(path: str, key: Any, compute: Callable[[], Any]) -> Any:
    """The value kept in ``path`` for ``key``; else ``compute()``, kept there with ``key``."""
    got = read(path)
    if isinstance(got, tuple) and len(got) == 2 and got[0] == key:
        return got[1]
    value = compute()
    write(path, (key, value))
    return value


def sources_digest(folders: list[str], walk: bool = False) -> str:
    """A digest of isaforge's version, this Python's and the contents of the source files
    (not bytecode) in ``folders`` (with ``walk``, and below them): a cache named after it is
    never read by an edited isaforge."""
    from hashlib import blake2b

    from .. import __version__

    h = blake2b(f"{__version__} {sys.version}".encode(), digest_size=8)
    for top in folders:
        trees = sorted(os.walk(top)) if walk else [(top, [], sorted(os.listdir(top)))]
        for root, dirs, files in trees:
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(root, name)
                if name.endswith(".pyc") or not os.path.isfile(path):
                    continue
                if walk:
                    h.update(name.encode())
                elif not name.endswith(".py"):
                    continue
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()


__all__ = ["allowed", "directory", "keyed", "read", "sources_digest", "write"]
