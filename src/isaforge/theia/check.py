"""Regression pass criteria (``<test>.config``) applied to RTL-format dumps, judged the way
the upstream ``run_regressions.pl`` judges them:

* A criterion reads ``vp[<N>].r[<row>] == <x> <y> <z>`` (against ``rf.vp.N.log``) or
  ``vp[<N>].omem[<address>] == <word>`` (against ``OMEM.vp.N.log``).
* The expected value, with its blanks removed, is searched as a pattern in the dumped value
  (the three lanes concatenated for a register): hex digits match themselves and ``x``
  matches the ``x`` the dump shows for undefined bits.
* A line containing ``//`` is a comment, wherever the ``//`` is.
* Only ``==`` criteria are judged: the upstream script ignores ``!=`` lines (so
  ``omem[2] != x`` passes even when OMEM word 2 is undefined); they are reported as SKIP.

One deliberate difference: a register is looked up by its exact row, where the upstream
``grep r6`` would also pick up rows 60..69.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import IsaforgeError, SourceLoc
from .machine.dumps import read_omem, read_rf

_LINE = re.compile(r"^\s*vp\[\s*(\d+)\s*\]\.(r|omem)\[\s*(\d+)\s*\]\s*(==|!=)\s*(.*?)\s*$")


class CheckError(IsaforgeError):
    """A malformed criteria file or an unusable dump directory."""


@dataclass(frozen=True)
class Criterion:
    vp: int
    kind: str  # "r" or "omem"
    index: int
    op: str  # "==" or "!="
    expected: tuple[str, ...]
    loc: SourceLoc

    def __str__(self) -> str:
        return f"vp[{self.vp}].{self.kind}[{self.index}] {self.op} {' '.join(self.expected)}"


@dataclass(frozen=True)
class Outcome:
    criterion: Criterion
    passed: bool | None  # None: not judged (a '!=' line)
    actual: str  # what the dump holds (or why nothing could be compared)


def parse_config(text: str, filename: str = "<config>") -> list[Criterion]:
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if "//" in line or not line.strip():
            continue
        m = _LINE.match(line)
        col = len(line) - len(line.lstrip()) + 1
        loc = SourceLoc(filename, lineno, col)
        if m is None:
            raise CheckError(f"expected 'vp[N].r[I] == ...' or 'vp[N].omem[I] == ...', found "
                             f"'{line.strip()}'", loc)
        words = tuple(m.group(5).split())
        kind = m.group(2).lower()
        limit = 3 if kind == "r" else 1
        if not 1 <= len(words) <= limit:
            raise CheckError(f"expected 1 to {limit} value(s) after '{m.group(4)}', found "
                             f"{len(words)}", loc)
        try:
            re.compile("".join(words))
        except re.error as e:
            raise CheckError(f"'{' '.join(words)}' is not a valid pattern ({e})", loc) from None
        out.append(Criterion(int(m.group(1)), kind, int(m.group(3)), m.group(4), words, loc))
    return out


def evaluate(criteria: list[Criterion], directory: Path) -> list[Outcome]:
    """Judge each criterion against the dumps in ``directory``."""
    if not directory.is_dir():
        raise CheckError(f"{directory}: no such directory (run the program first)")
    cache: dict[Path, dict] = {}
    outcomes = []
    for c in criteria:
        if c.op == "!=":
            outcomes.append(Outcome(c, None, "not judged: the upstream script checks '==' only"))
            continue
        name = f"rf.vp.{c.vp}.log" if c.kind == "r" else f"OMEM.vp.{c.vp}.log"
        path = directory / name
        if not path.is_file():
            outcomes.append(Outcome(c, False, f"no {name} in {directory}"))
            continue
        if path not in cache:
            cache[path] = read_rf(path) if c.kind == "r" else read_omem(path)
        dump = cache[path]
        if c.index not in dump:
            outcomes.append(Outcome(c, False, f"{name} has no entry {c.index}"))
            continue
        got = dump[c.index] if c.kind == "r" else (dump[c.index],)
        found = re.search("".join(c.expected), "".join(got)) is not None
        outcomes.append(Outcome(c, found, " ".join(got)))
    return outcomes


def check(config: Path, directory: Path) -> list[Outcome]:
    """Parse ``config`` and evaluate it against the dumps in ``directory``."""
    try:
        text = config.read_text()
    except UnicodeDecodeError:
        raise CheckError(f"{config}: not a text file") from None
    return evaluate(parse_config(text, str(config)), directory)


__all__ = ["CheckError", "Criterion", "Outcome", "check", "evaluate", "parse_config"]
