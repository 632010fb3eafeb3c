"""Where things sit in a TOML file: the line of each ``[[table]]`` and of each key in it.

``tomllib`` reports lines for syntax errors only; a manifest's semantic errors (a duplicate
job id, an unknown command) must name their line too. This scanner walks the text once,
skipping strings, comments and the inside of arrays and inline tables, and records each
array-of-tables header (``[[job]]``) with the position of the keys that follow it. It does
not validate: ``tomllib`` has already accepted the text when it runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\\]*"|'[^']*')"""
_KEY = re.compile(rf"\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")
_ARRAY_HEADER = re.compile(r"\s*\[\[\s*([^\]]+?)\s*\]\]")
_TABLE_HEADER = re.compile(r"\s*\[\s*([^\]]+?)\s*\]")


@dataclass
class TablePos:
    """One ``[[name]]`` table (or ``name`` for the top level): its header and its keys."""

    name: str
    line: int
    col: int = 1
    #: dotted key (``over.fmt`` for a key of a ``[sweep.over]`` sub-table) -> (line, col)
    keys: dict[str, tuple[int, int]] = field(default_factory=dict)

    def pos(self, key: str | None = None) -> tuple[int, int]:
        """Where ``key`` is written, else the table's header."""
        if key is not None and key in self.keys:
            return self.keys[key]
        return self.line, self.col


def _bare(key: str) -> str:
    parts = [p.strip().strip("\"'") for p in key.split(".")]
    return ".".join(parts)


def _code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of the lines that start outside strings, arrays and inline tables,
    without their comments (table headers are kept whole)."""
    out: list[tuple[int, str]] = []
    depth = 0  # [ ] and { } nesting inside values
    in_str: str | None = None  # the quote that opened the current multi-line string
    for number, line in enumerate(text.splitlines(), start=1):
        starts_clean = depth == 0 and in_str is None
        if starts_clean and line.lstrip().startswith("["):
            out.append((number, line))  # at the top level only a table header starts with [
            continue
        kept: list[str] = []
        i = 0
        while i < len(line):
            c = line[i]
            if in_str is not None:
                if in_str in ('"', '"""') and c == "\\":
                    kept.append(line[i:i + 2])
                    i += 2
                    continue
                if line.startswith(in_str, i):
                    kept.append(in_str)
                    i += len(in_str)
                    in_str = None
                    continue
                kept.append(c)
                i += 1
                continue
            if c == "#":
                break
            if line.startswith('"""', i) or line.startswith("'''", i):
                in_str = line[i:i + 3]
                kept.append(in_str)
                i += 3
                continue
            if c in "\"'":
                in_str = c
                kept.append(c)
                i += 1
                continue
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
            kept.append(c)
            i += 1
        if in_str in ('"', "'"):
            in_str = None  # a single-line string ends with its line (tomllib accepted the text)
        if starts_clean:
            out.append((number, "".join(kept)))
    return out


def locate(text: str) -> tuple[TablePos, list[TablePos]]:
    """The top level's key positions, and each ``[[name]]`` table in the order written."""
    top = TablePos("", 1)
    tables: list[TablePos] = []
    current: TablePos | None = top
    prefix = ""
    for number, line in _code_lines(text):
        m = _ARRAY_HEADER.match(line)
        if m:
            name = _bare(m.group(1))
            current = TablePos(name, number, len(line) - len(line.lstrip()) + 1)
            tables.append(current)
            prefix = ""
            continue
        m = _TABLE_HEADER.match(line)
        if m:
            name = _bare(m.group(1))
            last = tables[-1] if tables else None
            if last is not None and name.startswith(last.name + "."):
                current, prefix = last, name[len(last.name) + 1:] + "."
                current.keys.setdefault(prefix[:-1], (number, len(line) - len(line.lstrip()) + 1))
            else:
                current, prefix = top, name + "."
                top.keys.setdefault(name, (number, len(line) - len(line.lstrip()) + 1))
            continue
        m = _KEY.match(line)
        if m and current is not None:
            current.keys.setdefault(prefix + _bare(m.group(1)), (number, m.start(1) + 1))
    return top, tables
