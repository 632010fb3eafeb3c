"""The afuc assembler's regular expressions, compiled in an earlier run, for ``afuc asm``.

Importing :mod:`re` (and :mod:`enum` with it) and compiling the assembler's token pattern
cost an ``afuc asm`` process more than reading the compiled programs back: with the disk
cache on (:func:`isaforge.afuc.datacache.enable`, which the command line calls), a pattern
is made from its program (``_sre.compile``, as ``re`` itself makes it) kept in the cache
for this Python (its version and ``_sre``'s magic number), and ``re`` is not imported.
Otherwise, or when the cache has no entry or anything fails, it is ``re.compile``; an
entry is kept only if the pattern made from it equals ``re.compile``'s (same program).
"""

from __future__ import annotations

import _sre
import os
import sys

from . import datacache, diskcache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern
    from typing import Any

_KEY = (sys.version, _sre.MAGIC, _sre.CODESIZE)
_entries: dict[str, Any] | None = None  # pattern -> the arguments of _sre.compile


def _path() -> str:
    return os.path.join(diskcache.directory(), "afuc-regex")


def _load() -> dict[str, Any]:
    global _entries
    if _entries is None:
        got = diskcache.read(_path())
        ok = isinstance(got, tuple) and len(got) == 2 and got[0] == _KEY
        _entries = got[1] if ok and isinstance(got[1], dict) else {}
    return _entries


def _program(pattern: str) -> tuple[Any, ...] | None:
    """The arguments ``re`` gives ``_sre.compile`` for ``pattern`` (None if they do not make
    the same pattern as ``re.compile``)."""
    import re
    from re import _compiler, _parser  # type: ignore[attr-defined]

    try:
        p = _parser.parse(pattern, 0)
        code = _compiler._code(p, 0)
        groupindex = dict(p.state.groupdict)
        indexgroup: list[str | None] = [None] * p.state.groups
        for k, i in groupindex.items():
            indexgroup[i] = k
        args = (int(p.state.flags), [int(c) for c in code], p.state.groups - 1, groupindex,
                tuple(indexgroup))  # (plain ints: the opcodes are an int subclass)
        if _sre.compile(pattern, *args) != re.compile(pattern):
            return None
    except Exception:  # (another Python's re: no cache)
        return None
    return args


def compile(pattern: str) -> Pattern[str]:
    """``re.compile(pattern)``; from the disk cache when it is on."""
    if datacache.enabled():
        entries = _load()
        args = entries.get(pattern)
        if args is not None:
            try:
                return _sre.compile(pattern, *args)
            except Exception:
                pass
        args = _program(pattern)
        if args is not None:
            entries[pattern] = args
            diskcache.write(_path(), (_KEY, entries))
    import re

    return re.compile(pattern)


__all__ = ["compile"]
