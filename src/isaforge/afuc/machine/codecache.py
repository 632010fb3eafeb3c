"""An on-disk cache of the emulator's compiled code, so that a command-line run does not
generate and compile the same Python code at every start.

Off unless :func:`enable` is called (the ``afuc`` CLI does; the library writes no files of
its own accord). One file per firmware image under ``$ISAFORGE_CACHE_DIR``, else
``$XDG_CACHE_HOME/isaforge``, else ``~/.cache/isaforge``: a marshal of the code objects keyed
as :mod:`.codegen` keys them in memory. The file name holds the image's digest and a digest
of this Python's version and of the sources the code depends on (this package's modules), so
an edited emulator or another Python never reads stale code. Any error reading or writing
the cache (a missing directory, a read-only disk, a truncated file) leaves it unused.
"""

from __future__ import annotations

import atexit
from pathlib import Path
from types import CodeType

from .. import diskcache

_enabled = False
_loaded: set[bytes] = set()  # image digests whose file was read (or found missing)
_dirty: dict[bytes, dict[tuple, tuple[CodeType, int]]] = {}  # new entries by image digest
_tag: str | None = None


def enable(on: bool = True) -> None:
    """Use the disk cache in this process (and write new code back at exit)."""
    global _enabled
    _enabled = diskcache.allowed(on)
    if _enabled:
        atexit.register(save)


def discard() -> None:
    """Turn the cache off and forget the code not written yet."""
    enable(False)
    _dirty.clear()


def enabled() -> bool:
    return _enabled


def directory() -> Path:
    """Where the cache's files are (also for other derived data kept beside the code)."""
    return Path(diskcache.directory())


def _source_tag() -> str:
    global _tag
    if _tag is None:
        _tag = diskcache.sources_digest([str(Path(__file__).resolve().parent)])
    return _tag


def _path(image_key: bytes) -> Path:
    return directory() / f"afuc-code-{image_key.hex()}-{_source_tag()}.marshal"


def load(image_key: bytes) -> dict[tuple, tuple[CodeType, int]]:
    """The cached code of one image (empty when none, or when the cache is off)."""
    if not _enabled or image_key in _loaded:
        return {}
    _loaded.add(image_key)
    data = diskcache.read(str(_path(image_key)))
    return data if isinstance(data, dict) else {}


def note(image_key: bytes, key: tuple, value: tuple[CodeType, int]) -> None:
    """Remember new code of an image, written at :func:`save`."""
    if _enabled:
        _dirty.setdefault(image_key, {})[key] = value


def save() -> None:
    """Write the new code of each image into its file (merged with what is there)."""
    for image_key, new in list(_dirty.items()):
        path = str(_path(image_key))
        old = diskcache.read(path)
        if not isinstance(old, dict):
            old = {}
        old.update(new)
        diskcache.write(path, old)
        del _dirty[image_key]
