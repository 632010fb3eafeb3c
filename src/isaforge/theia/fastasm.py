"""The assembler's fast path: the ISA's text forms as regular expressions.

The general reader (:func:`isaforge.core.asm.match_template`) tokenizes a statement and tries
every text form of every instruction in turn (a VP line has 96 forms to try). Here each form
becomes a regular expression that accepts it as the disassembler and the compiler print it:
the template's text exactly, with one or more blanks wherever the template has blanks,
numbers as plain decimal (hex for hex fields), and trailing ``{FIELD=value}`` annotations.
The forms are tried in the general reader's order, among those whose literal text has the
same brackets and operators as the line. Every line this accepts is read by the general
reader to the same form and values (the test suite checks both readers on random words in
every printed form); anything else (expressions, other spacing, labels, ``.word``, lines
with errors) is left to the general reader, and so is the encoding of forms whose fields
share bits. The fast path changes no result, only the speed.
"""

from __future__ import annotations

import re
from functools import cache, cached_property
from typing import Any

from ..core.asm import BranchRef
from ..core.errors import SourceLoc
from ..core.isa import ISA, Enum, Field, Instr, UInt, template_parts
from .isa import (
    SWIZZLE_LETTERS,
    VIEW_FIELDS,
    HexNum,
    Marker,
    NamedOrNumber,
    Swizzle,
    Target,
    WriteMask,
    isa_for,
)

_WS = r"[ \t\r\f\v]"  # the lexer's blanks
_END = r"(?![0-9A-Za-z_])"  # a WORD token ends here
_ANNOTS = re.compile(r"(?:" + _WS + r"*\{[A-Za-z0-9_]+=(?:0[xX][0-9a-fA-F]+|\d+)\})+"
                     + _WS + r"*$")
_ANNOT = re.compile(r"\{([A-Za-z0-9_]+)=(0[xX][0-9a-fA-F]+|\d+)\}")

# The characters only a template's literal text can put in a line the fast path reads (no
# field prints them: fields are numbers, names, swizzles, masks, @targets and markers). A
# line has them in the order of the literal text of the form it is written in.
_KEEP = "[]*?<>,+."
_SIGNATURE = str.maketrans("", "", "".join(chr(c) for c in range(128) if chr(c) not in _KEEP))
_TARGET = object()  # a Target's value needs the line's position (a label reference)


def _literal(text: str) -> str:
    """A template's literal text: blanks become one-or-more blanks, words end as tokens do."""
    out = []
    for piece in re.findall(r"[ \t]+|[0-9A-Za-z_]+|.", text):
        if piece.isspace():
            out.append(_WS + "+")
        elif piece[0].isalnum() or piece[0] == "_":
            # "R" before a number or '[' is its own token (the lexer's REG rule)
            out.append(re.escape(piece) + (r"(?![A-Za-z_])" if piece in ("R", "r") else _END))
        else:
            out.append(re.escape(piece))
    return "".join(out)


def _mask_value(text: str) -> int:
    return ((4 if text[0] != "_" else 0) | (2 if text[1] != "_" else 0)
            | (1 if text[2] != "_" else 0))


def _swizzle(text: str) -> int:
    value = lane = sign = 0
    for c in text:
        if c == "-":
            sign = 1
            continue
        value |= sign << (8 - lane) | SWIZZLE_LETTERS[lane].index(c) << (4 - 2 * lane)
        sign = 0
        lane += 1
    return value


def _marker(text: str | None) -> int:
    return 1 if text else 0


def _hex(text: str) -> int:
    return int(text, 16)


def _number(text: str) -> int:
    return int(text, 16) if text[:2] in ("0x", "0X") else int(text, 10)


def _field(kind: Any) -> tuple[str, Any] | None:
    """The text a field reads in the fast path (a pattern with one capturing group) and how
    its value follows from that text, or None if the field has no fast form."""
    if isinstance(kind, Marker):
        return r"(?:(" + re.escape(kind.text) + r")" + _WS + r"+)?", _marker
    if isinstance(kind, WriteMask):
        return r"([x_][y_][z_])(?![0-9A-Za-z_-])", _mask_value
    if isinstance(kind, Swizzle):
        return r"(-?[xyzw]-?[xyzw]-?[xyzw])(?![0-9A-Za-z_-])", _swizzle
    if isinstance(kind, HexNum):
        return r"((?:0[xX])?[0-9a-fA-F]+)" + _END, _hex
    if isinstance(kind, Target):
        return r"@(\d+|[A-Za-z_]\w*)" + _END, _TARGET
    if isinstance(kind, NamedOrNumber):
        names = sorted(kind.by_name, key=len, reverse=True)
        by_name = dict(kind.by_name)
        return ("(" + "|".join([*map(re.escape, names), r"\d+"]) + ")" + _END,
                lambda t: int(t) if t.isdigit() else by_name[t])
    if type(kind) is Enum and not kind.optional:
        names = sorted(kind.by_name, key=len, reverse=True)
        return "(" + "|".join(map(re.escape, names)) + ")" + _END, kind.by_name.__getitem__
    if type(kind) is UInt:
        return r"(\d+)" + _END, int
    return None


class Form:
    """One text form: its regular expression (compiled on first use), how each field's value
    follows from its text, and how the values it reads are encoded."""

    def __init__(self, ins: Instr, implied: dict[str, int], pattern: str,
                 fields: tuple[tuple[str, Field, Any], ...]) -> None:
        self.ins = ins
        self.implied = implied
        self.pattern = pattern
        self.fields = fields  # (field name, field, value from text) in template order
        self._regex: re.Pattern[str] | None = None
        # name -> (lowest bit, values up to, mask) of the fields the encoder may set
        self.layout = {name: (f.low, 1 << (f.high - f.low + 1), f.mask)
                       for name, f in ins.fields.items() if f.const is None}
        masks = [f.mask for f in ins.all_fields.values()]
        # fields sharing bits (an immediate's views) need the general encoder's consistency
        # check, split fields its insert
        self.simple = not any(f.pieces for f in ins.all_fields.values()) and not any(
            a & b for i, a in enumerate(masks) for b in masks[i + 1:])

    @cached_property
    def quick(self) -> Any:
        """A function of the match's groups giving the word (None where the values need a
        closer look: a label, a value too large for its field), or None for a form it cannot
        encode (fields sharing bits, split or derived fields)."""
        if not self.simple:
            return None
        names = [name for name, _, _ in self.fields]
        if len(set(names)) != len(names) or set(names) & set(self.implied):
            return None
        base = self.ins.match
        for name, v in self.implied.items():
            if name not in self.layout or not 0 <= v < self.layout[name][1]:
                return None
            low, _, mask = self.layout[name]
            base = base & ~mask | v << low
        env: dict[str, Any] = {"BASE": base}
        checks: list[str] = []
        terms = ["BASE"]
        for i, (name, _, value) in enumerate(self.fields):
            if name not in self.layout:
                return None
            low, limit, _ = self.layout[name]
            g = f"g[{i}]"
            if value is _marker:
                terms.append(f"(({g} is not None) << {low})")
            elif value is _mask_value or value is _swizzle:
                table = f"T{i}"
                env[table] = _MASKS if value is _mask_value else _SWIZZLES
                terms.append(f"({table}[{g}] << {low})")
            elif value is _TARGET:
                checks.append(f"if not {g}.isdigit(): return None")
                checks.append(f"v{i} = int({g})")
                checks.append(f"if v{i} >= {limit}: return None")
                terms.append(f"(v{i} << {low})")
            else:
                env[f"C{i}"] = value
                checks.append(f"v{i} = C{i}({g})")
                checks.append(f"if v{i} >= {limit}: return None")
                terms.append(f"(v{i} << {low})")
        body = "".join(f"    {c}\n" for c in checks)
        source = f"def quick(g):\n{body}    return {' | '.join(terms)}\n"
        exec(source, env)  # noqa: S102 (code built from the ISA's own tables)
        return env["quick"]

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(_WS + "*" + self.pattern + _WS + "*")
            assert self._regex.groups == len(self.fields)
        return self._regex

    def encode(self, vals: dict[str, Any], annotations: dict[str, tuple[int, SourceLoc]],
               labels: dict[str, int], weak: dict[str, int | None]) -> int | None:
        """The word, or None where the general encoder must decide (or report an error)."""
        if not self.simple:
            return None
        layout = self.layout
        word = self.ins.match
        merged = {**self.implied, **vals}
        for name, (v, _) in annotations.items():
            if name not in layout or name in VIEW_FIELDS:
                return None
            merged[name] = v
        for name, v in merged.items():
            if type(v) is not int:
                if not isinstance(v, BranchRef):
                    return None
                target = labels.get(v.name)
                if target is None:
                    target = weak.get(v.name)
                if target is None:
                    return None
                v = target
            got = layout.get(name)
            if got is None or not 0 <= v < got[1]:
                return None
            word = word & ~got[2] | v << got[0]
        return word


class FastReader:
    """Every text form of an ISA, in the general reader's order, grouped by signature."""

    def __init__(self, isa: ISA) -> None:
        self.by_signature: dict[tuple[str, str], list[Form]] = {}
        self._words: dict[str, tuple[Form, int, int] | None] = {}
        syntaxes = [(ins, *syntax) for ins in isa.instrs for syntax in ins.syntaxes()]
        # when every form starts with its mnemonic, the line's first word picks among them too
        self.named = all(template_parts(t)[0] == ("field", "NAME") for _, t, _, _ in syntaxes)
        for ins, template, fields, implied in syntaxes:
            form = self._form(ins, template, fields, dict(implied))
            if form is None:  # a form we cannot read fast: nothing after it may be tried
                return
            literal = "".join(t for kind, t in template_parts(template) if kind == "lit")
            key = (ins.mnemonic if self.named else "", literal.translate(_SIGNATURE))
            self.by_signature.setdefault(key, []).append(form)

    def _candidates(self, code: str) -> list[Form]:
        """The forms ``code`` may be written in, in the general reader's order."""
        first = ""
        if self.named:
            words = code.split(None, 1)
            first = words[0] if words else ""
        return self.by_signature.get((first, code.translate(_SIGNATURE)), [])

    @staticmethod
    def _form(ins: Instr, template: str, fields: dict[str, Field],
              implied: dict[str, int]) -> Form | None:
        parts = []
        groups: list[tuple[str, Field, Any]] = []
        for kind, text in template_parts(template):
            if kind == "lit":
                parts.append(_literal(text))
                continue
            if text == "NAME":
                parts.append(re.escape(ins.mnemonic) + _END)
                continue
            f = fields[text]
            got = _field(f.kind)
            if got is None:
                return None
            parts.append(got[0])
            groups.append((text, f, got[1]))
        return Form(ins, implied, "".join(parts), tuple(groups))

    def read(self, code: str, filename: str, lineno: int
             ) -> tuple[Form, dict[str, Any], SourceLoc,
                        dict[str, tuple[int, SourceLoc]]] | None:
        """(form, values, statement location, annotations), or None if the general reader
        must read ``code`` (a line without its ``//`` comment)."""
        annotations: dict[str, tuple[int, SourceLoc]] = {}
        body = code
        if "{" in code:
            tail = _ANNOTS.search(code)
            if tail is None:
                return None
            body = code[:tail.start()]
            if not body.strip():
                return None
            found = [(a.group(1), _number(a.group(2)), a.start() + 1)
                     for a in _ANNOT.finditer(code, tail.start())]
            for name, value, col in reversed(found):  # the first of a repeated name wins
                annotations[name] = (value, SourceLoc(filename, lineno, col))
        for form in self._candidates(body):
            m = form.regex.fullmatch(body)
            if m is not None:
                break
        else:
            return None
        vals: dict[str, Any] = {}
        for i, ((name, f, value), text) in enumerate(zip(form.fields, m.groups(),
                                                          strict=True)):
            if value is _TARGET:
                vals[name] = int(text) if text.isdigit() else BranchRef(
                    text, False, SourceLoc(filename, lineno, m.start(i + 1)))
            elif f.const is None:
                vals[name] = value(text)
        start = len(body) - len(body.lstrip(" \t\r\f\v")) + 1
        return form, vals, SourceLoc(filename, lineno, start), annotations

    def read_word(self, code: str, filename: str, lineno: int
                  ) -> tuple[Form, int, SourceLoc] | None:
        """(form, word, statement location) for a line without annotations or labels whose
        form encodes quickly, else None (then :meth:`read` and the encoders decide).

        Results are remembered by line text (programs repeat many instructions)."""
        got = self._words.get(code, _UNSEEN)
        if got is _UNSEEN:
            got = self._read_word(code)
            if len(self._words) >= _REMEMBERED:
                self._words.clear()
            self._words[code] = got
        if got is None:
            return None
        return got[0], got[1], SourceLoc(filename, lineno, got[2])

    def forget(self) -> None:
        """Forget the lines read so far (the patterns stay compiled)."""
        self._words.clear()

    def _read_word(self, code: str) -> tuple[Form, int, int] | None:
        body = code
        notes: list[tuple[str, int]] = []
        if "{" in code:
            tail = _ANNOTS.search(code)
            if tail is None:
                return None
            body = code[:tail.start()]
            notes = [(a.group(1), _number(a.group(2)))
                     for a in _ANNOT.finditer(code, tail.start())]
        for form in self._candidates(body):
            m = form.regex.fullmatch(body)
            if m is not None:
                break
        else:
            return None
        quick = form.quick
        word = quick(m.groups()) if quick is not None else None
        if word is None:
            return None
        if notes:
            layout = form.layout
            seen = set()
            for name, value in notes:
                if name in seen:
                    continue  # the first of a repeated name wins
                seen.add(name)
                got = layout.get(name)
                if got is None or name in VIEW_FIELDS or not 0 <= value < got[1]:
                    return None
                word = word & ~got[2] | value << got[0]
        return form, word, len(body) - len(body.lstrip(" \t\r\f\v")) + 1


_UNSEEN = object()
_REMEMBERED = 1 << 16  # lines remembered by read_word (then it starts over)
_MASKS = {m: _mask_value(m) for m in (a + b + c for a in "x_" for b in "y_" for c in "z_")}
_SWIZZLES = {f"{s0}{l0}{s1}{l1}{s2}{l2}": _swizzle(f"{s0}{l0}{s1}{l1}{s2}{l2}")
             for s0 in ("", "-") for s1 in ("", "-") for s2 in ("", "-")
             for l0 in "xyzw" for l1 in "xyzw" for l2 in "xyzw"}


@cache
def fast_reader(cp: bool) -> FastReader:
    """The fast reader of the VP (or CP) instruction set."""
    return FastReader(isa_for(cp))


__all__ = ["FastReader", "Form", "fast_reader"]
