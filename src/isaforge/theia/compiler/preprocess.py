"""The T-Language preprocessors of the two upstream compilers (VP and CP dialects).

Both work on whole lines, in two passes, and we follow them line for line because the listings
quote the preprocessed lines (and their numbering must agree):

Scan (each physical line; tabs become spaces first):

* a line without ``#`` is kept as it is;
* a line containing ``#macro`` anywhere starts a macro function ``#macro RET = NAME(P1, ...)``
  (the signature is read with its blanks removed and its first six characters dropped); the
  line and the body lines (up to ``#endmacro``, at most 100, read past the end of the file as
  empty lines) are kept as ``//`` comments;
* any other line with ``#`` is split at spaces; ``#define NAME VALUE`` records VALUE (the third
  word; the last definition of a name wins, for the whole file);
* VP: every ``#`` line (any directive, ``#include`` too, or a ``#`` anywhere) is kept as a
  ``//`` comment: the VP compiler never includes a file;
* CP: ``#define`` lines are kept as comments, ``#include "F"`` is replaced by F's lines (F's
  own directive lines are dropped), every other ``#`` line is dropped.

Substitute (each line of the result, lines inserted by a macro call included): every
``#define`` name in name order, replaced everywhere (VP: also inside longer words, comments and
strings, until none is left; CP: where it is not next to a letter, and not on ``#define``
lines); then the first macro function (name order) whose name occurs in the line's code: the
line ``X = NAME(a, b);`` is commented out and followed by the body with P1/P2/RET replaced by
a/b/X.

Where upstream crashes or hangs (a ``#define`` without a value, a ``#macro`` line it cannot
read, a name whose value contains it, a line longer than its 1023-character buffer, a CP
``#include`` it cannot open or that includes itself) we raise :class:`CompileError`. Where it
silently ignores something (a VP ``#include``, ``#ifdef``/``#if``/``#else``/``#endif``,
``#undef``, unknown directives, a ``#`` in a line of code, words after a ``#define`` value, a
``\\`` line continuation, a redefinition, an unterminated or over-long macro) the result
carries a ``file:line:col`` warning that says what upstream does instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import SourceLoc
from .errors import CompileError, LineMap

MAX_MACRO_LINES = 100  # upstream's MAX_MACRO_FUNCTION_LINE_COUNT
MAX_LINE_LENGTH = 1023  # upstream reads lines into a 1024-byte buffer (getline)
MAX_INCLUDE_DEPTH = 16
MAX_EXPANSIONS = 10000  # macro calls expanded in one file (a macro calling itself never ends)
CONDITIONALS = ("#if", "#ifdef", "#ifndef", "#elif", "#else", "#endif")


@dataclass
class MacroFunction:
    name: str
    ret: str
    params: list[str]
    body: list[str]


@dataclass
class Preprocessed:
    """The preprocessed lines (what the listings quote), where each came from, and warnings."""

    lines: list[str]
    linemap: LineMap
    defines: dict[str, str] = field(default_factory=dict)
    warnings: list[tuple[SourceLoc, str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


class _Reader:
    """A file read as upstream's ``while (!eof) getline(buf, 1024)`` loop reads it."""

    def __init__(self, text: str, filename: str) -> None:
        self.raw = text.split("\n")  # a final newline gives a last, empty line
        self.filename = filename
        self.next = 0

    @property
    def eof(self) -> bool:
        return self.next >= len(self.raw)

    def getline(self) -> tuple[str, int]:
        """The next line and its 1-based number ("" past the end, as a failed getline)."""
        if self.eof:
            return "", len(self.raw)
        self.next += 1
        line = self.raw[self.next - 1]
        if len(line) > MAX_LINE_LENGTH:
            raise CompileError(f"line longer than {MAX_LINE_LENGTH} characters (the upstream "
                               "compilers' line buffer; they never finish on it)",
                               SourceLoc(self.filename, self.next, MAX_LINE_LENGTH + 1))
        return line, self.next


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
        self.warnings: list[tuple[SourceLoc, str]] = []
        self.includes: list[str] = []

    def run(self, text: str, filename: str = "<input>") -> Preprocessed:
        self._scan(text, filename, add=True)
        self._substitute()
        return Preprocessed(self.out, LineMap(self.origins, filename), dict(self.macros),
                            self.warnings)

    # -- scanning ------------------------------------------------------------------------------

    def _push(self, line: str, origin: tuple[str, int]) -> None:
        self.out.append(line)
        self.origins.append(origin)

    def _warn(self, filename: str, line: int, col: int, msg: str) -> None:
        self.warnings.append((SourceLoc(filename, line, col), msg))

    def _scan(self, text: str, filename: str, add: bool) -> None:
        reader = _Reader(text, filename)
        while not reader.eof:
            raw, n = reader.getline()
            if "\0" in raw:
                self._warn(filename, n, raw.index("\0") + 1,
                           "NUL character: upstream reads the line only up to it")
                raw = raw[:raw.index("\0")]
            self._line(raw.replace("\t", " "), n, reader, add)

    def _line(self, line: str, n: int, reader: _Reader, add: bool) -> None:
        filename = reader.filename
        origin = (filename, n)
        if "#" not in line:
            self._push(line, origin)
            return
        col = line.find("#") + 1
        if "#macro" in line:
            if add or not self.cp:
                self._push("//" + line, origin)
            self._macro(line, n, reader)
            return
        words = [w for w in line.split(" ") if w]
        directive = words[0]
        what = "becomes a comment" if not self.cp else "is dropped"
        if directive == "#define":
            self._define(words, filename, n, col)
            if add or not self.cp:
                self._push("//" + line, origin)
            return
        if not self.cp:
            self._push("//" + line, origin)
        if directive == "#include":
            if len(words) < 2:
                raise CompileError("#include needs a file name", SourceLoc(filename, n, col))
            name = words[1].replace('"', "")
            if self.cp:
                self._include(name, filename, n, col)
            else:
                self._warn(filename, n, col, f"#include is ignored in VP code: the line {what} "
                           f"and '{name}' is not read (only the CP compiler includes files)")
        elif directive in CONDITIONALS:
            self._warn(filename, n, col, f"{directive} is not a directive of the T-Language "
                       f"preprocessor: the line {what} (the code of every branch is compiled)")
        elif directive.startswith("#"):
            self._warn(filename, n, col, f"{directive} is not a directive of the T-Language "
                       f"preprocessor: the line {what}")
        elif line.split("//", 1)[0].strip():
            self._warn(filename, n, col, f"a line with '#' is a directive line: this one {what} "
                       "(its code is not compiled)")

    def _define(self, words: list[str], filename: str, n: int, col: int) -> None:
        if len(words) < 3:
            raise CompileError("#define needs a name and a value (upstream crashes on this line)",
                               SourceLoc(filename, n, col))
        name, value = words[1], words[2]
        if value == "\\" or len(words) > 3 and words[3] == "\\":
            self._warn(filename, n, col, f"no line continuations: '{name}' is '{value}' and "
                       "the next line is an ordinary line")
        elif len(words) > 3 and not words[3].startswith("//"):
            self._warn(filename, n, col, f"'{name}' is '{value}' (a value is one word): "
                       f"'{' '.join(words[3:])}' is ignored")
        if "//" in value:
            self._warn(filename, n, col, f"the value of '{name}' ('{value}') holds a comment: "
                       f"where '{name}' is replaced, the rest of that line is a comment")
        old = self.macros.get(name)
        if old is not None and old != value:
            self._warn(filename, n, col, f"'{name}' redefined: its last value, '{value}', "
                       f"replaces '{old}' in the whole file (lines before this one too)")
        self.macros[name] = value

    def _macro(self, signature: str, n: int, reader: _Reader) -> None:
        filename = reader.filename
        col = signature.find("#macro") + 1
        sig = signature.replace(" ", "")
        if not sig.startswith("#macro"):
            self._warn(filename, n, col, "'#macro' in this line makes it a macro definition "
                       "(upstream reads it from the line's seventh non-blank character)")
        parts = [p for p in sig[6:].split("=") if p]
        head = [p for p in parts[1].split("(") if p] if len(parts) > 1 else []
        if len(head) < 2:
            raise CompileError("expected '#macro RESULT = NAME(P1, ...)' (upstream crashes on "
                               "this line)", SourceLoc(filename, n, col))
        params = [p for p in head[1].replace(")", "").split(",") if p]
        body: list[str] = []
        while len(body) < MAX_MACRO_LINES:
            if reader.eof:
                self._warn(filename, n, col, f"#macro {head[0]} has no #endmacro: upstream "
                           f"reads empty lines up to {MAX_MACRO_LINES} body lines")
                missing = MAX_MACRO_LINES - len(body)
                self.out += ["//"] * missing
                self.origins += [(filename, len(reader.raw))] * missing
                body += [""] * missing
                break
            text, m = reader.getline()
            self._push("//" + text, (filename, m))
            if "#endmacro" in text:
                break
            body.append(text)
        else:
            self._warn(filename, n, col, f"#macro {head[0]} ends after {MAX_MACRO_LINES} lines "
                       "(upstream's limit); the next line is read as ordinary code")
        if head[0] in self.functions:
            self._warn(filename, n, col, f"macro '{head[0]}' redefined: the last definition "
                       "applies to the whole file")
        self.functions[head[0]] = MacroFunction(head[0], parts[0], params, body)

    def _include(self, name: str, filename: str, line: int, col: int) -> None:
        if len(self.includes) >= MAX_INCLUDE_DEPTH:
            raise CompileError(f"#include nested too deeply at '{name}' (upstream never ends)",
                               SourceLoc(filename, line, col))
        text, path = self._find(name, filename)
        if text is None:
            raise CompileError(f"could not include file '{name}'", SourceLoc(filename, line, col))
        self.includes.append(path)
        try:
            self._scan(text, path, add=False)
        finally:
            self.includes.pop()

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

    def _substitute(self) -> None:
        keys = sorted(self.macros)
        names = sorted(self.functions)
        expansions = 0
        i = 0
        while i < len(self.out):
            line = self.out[i]
            if "#define" not in line or not self.cp:
                for key in keys:
                    if key in line:
                        line = (_replace_words(line, key, self.macros[key]) if self.cp
                                else _replace_all(line, key, self.macros[key], self.origins[i]))
            self.out[i] = line
            code = line.split("//", 1)[0]
            for name in names:
                if name in code:
                    expansions += 1
                    if expansions > MAX_EXPANSIONS:
                        f, n = self.origins[i]
                        raise CompileError(f"macro '{name}' expands without end (upstream "
                                           "never finishes)", SourceLoc(f, n, 1))
                    self._expand(i, self.functions[name], code.replace(" ", ""))
                    break  # the line is now a comment: no other macro matches it
            i += 1

    def _expand(self, i: int, mf: MacroFunction, code: str) -> None:
        f, n = self.origins[i]
        parts = [p for p in code.split("=") if p]
        args = [p for p in parts[1].split("(") if p] if len(parts) > 1 else []
        if len(parts) < 2 or len(args) < 2:
            raise CompileError(f"macro '{mf.name}' must be used as 'X = {mf.name}(...);' "
                               "(upstream crashes on this line)", SourceLoc(f, n, 1))
        values = [v for v in args[1].replace(")", "").replace(";", "").split(",") if v]
        if len(values) < len(mf.params):
            raise CompileError(f"macro '{mf.name}' takes {len(mf.params)} arguments (upstream "
                               "reads past its argument list: undefined behaviour)",
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
    if not key or key not in text:
        return text
    if key in value:
        raise CompileError(f"'{key}' expands to itself ('{value}'): upstream never finishes",
                           SourceLoc(origin[0], origin[1], 1))
    for _ in range(100000):
        pos = text.find(key)
        if pos < 0:
            return text
        text = text[:pos] + value + text[pos + len(key):]
    raise CompileError(f"'{key}' expands without end ('{value}'): upstream never finishes",
                       SourceLoc(origin[0], origin[1], 1))


def _isalpha(c: str) -> bool:
    return "a" <= c <= "z" or "A" <= c <= "Z"  # C's isalpha in the "C" locale


def _replace_words(text: str, key: str, value: str) -> str:
    """Replace ``key`` where it is not preceded or followed by a letter (the CP rule)."""
    if not key or key == value or len(text) < len(key):
        return text
    out = []
    last = 0
    pos = text.find(key)
    while pos != -1:
        end = pos + len(key)
        before_ok = pos == 0 or not _isalpha(text[pos - 1])
        after_ok = end == len(text) or not _isalpha(text[end])
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
