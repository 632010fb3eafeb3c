"""The T-Language preprocessor: ``#define``, ``#macro``/``#endmacro`` and ``#include``.

It works on whole lines, as the upstream preprocessors of both compilers do, because the
listings quote the preprocessed lines and their numbering must agree:

* tabs become spaces;
* a directive line stays in the text as a ``//`` comment (so line numbers are kept), except
  ``#include`` in the CP dialect, which is replaced by the included file's lines (its own
  directives are dropped), and any other ``#`` line of a CP file, which is dropped;
* ``#define NAME VALUE``: VALUE is the third blank-separated word; the VP dialect replaces every
  occurrence of NAME anywhere on every line (also inside longer words and comments), the CP
  dialect only where NAME is not next to a letter and not on ``#define`` lines;
* ``#macro RET = NAME(P1, P2)`` ... ``#endmacro``: a line ``X = NAME(a, b);`` is commented out
  and followed by the macro body with P1/P2/RET replaced by a/b/X.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import SourceLoc
from .errors import CompileError, LineMap

MAX_MACRO_LINES = 100
MAX_INCLUDE_DEPTH = 16


@dataclass
class MacroFunction:
    name: str
    ret: str
    params: list[str]
    body: list[str]


@dataclass
class Preprocessed:
    """The preprocessed lines (what the listings quote) and where each came from."""

    lines: list[str]
    linemap: LineMap
    defines: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


def _file_lines(text: str) -> list[str]:
    """Lines as a ``while (!eof) getline`` loop sees them (a final newline adds an empty line)."""
    return text.split("\n")


class Preprocessor:
    """One run over a file; ``cp`` selects the control-processor dialect."""

    def __init__(self, cp: bool = False, include_dirs: Sequence[str | Path] = (),
                 headers: Mapping[str, str] | None = None) -> None:
        self.cp = cp
        self.include_dirs = [Path(d) for d in include_dirs]
        self.headers = dict(headers or {})
        self.macros: dict[str, str] = {}
        self.functions: dict[str, MacroFunction] = {}
        self.out: list[str] = []
        self.origins: list[tuple[str, int]] = []
        self.depth = 0

    # -- scanning ------------------------------------------------------------------------------

    def run(self, text: str, filename: str = "<input>") -> Preprocessed:
        self._scan(text, filename, add=True)
        self._substitute(filename)
        return Preprocessed(self.out, LineMap(self.origins, filename), dict(self.macros))

    def _push(self, line: str, origin: tuple[str, int]) -> None:
        self.out.append(line)
        self.origins.append(origin)

    def _scan(self, text: str, filename: str, add: bool) -> None:
        raw = _file_lines(text)
        i = 0
        while i < len(raw):
            origin = (filename, i + 1)
            line = raw[i].replace("\t", " ")
            i += 1
            if "#" not in line:
                self._push(line, origin)
                continue
            words = line.split()
            if words and words[0] == "#macro":
                # upstream takes any line containing "#macro" (even in a comment) as one
                if add or not self.cp:
                    self._push("//" + line, origin)
                i = self._macro(line, raw, i, filename)
                continue
            if words and words[0] == "#define":
                if len(words) < 3:
                    raise CompileError("#define needs a name and a value",
                                       SourceLoc(filename, i, line.find("#") + 1))
                self.macros[words[1]] = words[2]
                if add or not self.cp:
                    self._push("//" + line, origin)
            elif words and words[0] == "#include":
                if len(words) < 2:
                    raise CompileError("#include needs a file name",
                                       SourceLoc(filename, i, line.find("#") + 1))
                if not self.cp:
                    self._push("//" + line, origin)
                self._include(words[1].replace('"', ""), filename, i, line.find("#") + 1)
            elif not self.cp:
                self._push("//" + line, origin)
            # any other '#' line of a CP file is dropped, as the upstream CP preprocessor does

    def _macro(self, signature: str, raw: list[str], i: int, filename: str) -> int:
        line_no = i
        sig = signature.replace(" ", "")
        sig = sig[sig.find("#macro") + 6:]
        parts = [p for p in sig.split("=") if p]
        head = [p for p in parts[1].split("(") if p] if len(parts) > 1 else []
        if len(parts) < 2 or len(head) < 2:
            raise CompileError("expected '#macro RESULT = NAME(P1, ...)'",
                               SourceLoc(filename, line_no, 1))
        params = [p for p in head[1].replace(")", "").split(",") if p]
        body: list[str] = []
        while len(body) < MAX_MACRO_LINES:
            if i >= len(raw):
                raise CompileError(f"#macro {head[0]} has no #endmacro",
                                   SourceLoc(filename, line_no, 1))
            text = raw[i]
            self._push("//" + text, (filename, i + 1))
            i += 1
            if "#endmacro" in text:
                break
            body.append(text)
        self.functions[head[0]] = MacroFunction(head[0], parts[0], params, body)
        return i

    def _include(self, name: str, filename: str, line: int, col: int) -> None:
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise CompileError(f"#include nested too deeply at '{name}'",
                               SourceLoc(filename, line, col))
        text, path = self._find(name, filename)
        if text is None:
            raise CompileError(f"could not include file '{name}'", SourceLoc(filename, line, col))
        self.depth += 1
        try:
            self._scan(text, path, add=False)
        finally:
            self.depth -= 1

    def _find(self, name: str, filename: str) -> tuple[str | None, str]:
        if name in self.headers:
            return self.headers[name], name
        dirs = [*self.include_dirs]
        if filename and not filename.startswith("<"):
            dirs.append(Path(filename).parent)
        dirs.append(Path("."))
        for d in dirs:
            p = d / name
            if p.is_file():
                try:
                    return p.read_text(encoding="utf-8", errors="replace"), str(p)
                except OSError:
                    continue
        return None, name

    # -- substitution --------------------------------------------------------------------------

    def _substitute(self, filename: str) -> None:
        i = 0
        while i < len(self.out):
            line = self.out[i]
            for key in sorted(self.macros):
                value = self.macros[key]
                if self.cp:
                    if "#define" not in line:
                        line = _replace_words(line, key, value)
                elif key in line:
                    line = _replace_all(line, key, value, self.origins[i])
            self.out[i] = line
            for name in sorted(self.functions):
                code = self.out[i].split("//", 1)[0]
                if name not in code:
                    continue
                self._expand(i, self.functions[name], code.replace(" ", ""))
            i += 1

    def _expand(self, i: int, mf: MacroFunction, code: str) -> None:
        f, n = self.origins[i]
        parts = [p for p in code.split("=") if p]
        args = [p for p in parts[1].split("(") if p] if len(parts) > 1 else []
        if len(parts) < 2 or len(args) < 2:
            raise CompileError(f"macro '{mf.name}' must be used as 'X = {mf.name}(...);'",
                               SourceLoc(f, n, 1))
        values = [v for v in args[1].replace(")", "").replace(";", "").split(",") if v]
        if len(values) < len(mf.params):
            raise CompileError(f"macro '{mf.name}' takes {len(mf.params)} arguments",
                               SourceLoc(f, n, 1))
        body = []
        for text in mf.body:
            for p, v in zip(mf.params, values, strict=False):
                text = _replace_all(text, p, v, (f, n))
                text = _replace_all(text, mf.ret, parts[0], (f, n))
            body.append(text)
        self.out[i] = "//" + self.out[i]
        self.out[i + 1:i + 1] = body
        self.origins[i + 1:i + 1] = [(f, n)] * len(body)


def _replace_all(text: str, key: str, value: str, origin: tuple[str, int]) -> str:
    """Replace the first occurrence of ``key`` until there is none (the VP rule)."""
    if not key:
        return text
    for _ in range(10000):
        pos = text.find(key)
        if pos < 0:
            return text
        text = text[:pos] + value + text[pos + len(key):]
    raise CompileError(f"macro '{key}' expands to itself ('{value}')",
                       SourceLoc(origin[0], origin[1], 1))


def _replace_words(text: str, key: str, value: str) -> str:
    """Replace ``key`` where it is not preceded or followed by a letter (the CP rule)."""
    if not key or key == value or len(text) < len(key):
        return text
    out = []
    last = 0
    pos = text.find(key)
    while pos != -1:
        end = pos + len(key)
        before_ok = pos == 0 or not text[pos - 1].isalpha()
        after_ok = end == len(text) or not text[end].isalpha()
        if before_ok and after_ok:
            out.append(text[last:pos])
            out.append(value)
            last = end
        pos = text.find(key, end)
    out.append(text[last:])
    return "".join(out)


def preprocess(text: str, filename: str = "<input>", cp: bool = False,
               include_dirs: Sequence[str | Path] = (),
               headers: Mapping[str, str] | None = None) -> Preprocessed:
    """Preprocess one T-Language file (VP dialect, or CP with ``cp=True``)."""
    return Preprocessor(cp, include_dirs, headers).run(text, filename)
