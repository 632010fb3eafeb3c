"""Tokens of the two T-Language dialects.

The rules are those of the upstream scanners, including their longest-match quirks: an
identifier cannot start with ``x``, ``y`` or ``z`` (so ``.xyz`` is three swizzle tokens and
``xpos`` is not a name), ``R12``/``r12`` is a register (VP), ``"`` counts as a blank, and a
keyword wins over an identifier of the same length (``in`` is the input keyword, ``index``
a name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import CompileError, LineMap

# kinds whose text the upstream parser keeps as the "current semantic value"
VALUE_KINDS = frozenset({"DEC", "HEX", "BIN", "FP", "-", "X", "Y", "Z", "N", "REG", "ID"})


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    line: int  # 1-based line of the preprocessed text
    col: int


def _lit(*words: str) -> list[tuple[str, re.Pattern[str]]]:
    return [(w, re.compile(re.escape(w))) for w in words]


_NUMBERS = [("DEC", re.compile(r"[0-9]+")), ("HEX", re.compile(r"0x[0-9a-fA-F]+")),
            ("BIN", re.compile(r"0b[01]+"))]
_IDENT = ("ID", re.compile(r"[a-wA-Z][a-zA-Z0-9_]*"))

VP_RULES = (
    _NUMBERS
    # the manual's fixed-point literals, 17fp2.5 (an extension: upstream has no such token)
    + [("FP", re.compile(r"[0-9]+fp[0-9]+(?:\.[0-9]+)?"))]
    + _lit("sqrt", "if", "else", "while", "&", "|", "function", "jmp", "return", "exit",
           "vector", "thread", "start", "(", ")", "{", "}", "-", "==", "!=", "scale", "unscale",
           "using", "out", "in", "fixed_point_arithmetic", "<=", ">=", "=", ">", "<", "[", "]",
           "*", "/", "+=", "+", ";", ",", ".")
    + [("X", re.compile("x")), ("Y", re.compile("y")), ("Z", re.compile("z")),
       ("N", re.compile("n")), ("REG", re.compile(r"[rR][0-9]+")), _IDENT]
)
CP_RULES = (
    _NUMBERS
    + _lit("if", "else", "while", "&", "|", "exit", "scalar", "start", "copy_data_block",
           "copy_code_block", "block_transfer_in_progress", "(", ")", "{", "}", "-", "==", "!=",
           "<=", ">=", "=", "<<", ">>", ">", "<", "+", ";", ",", "~")
    + [_IDENT]
)
_BLANK = re.compile(r'[ \t\r"]+')


_PROBES = ("", "0", "1", "a", "x1", "b1", "fp1")  # enough to tell which rules can start with c


class _RuleIndex:
    """The rules that can match at a given first character, in rule order (cached)."""

    def __init__(self, rules: list[tuple[str, re.Pattern[str]]]) -> None:
        self.rules: list[tuple[str, str | None, re.Pattern[str]]] = [
            (kind, kind if rx.pattern == re.escape(kind) else None, rx) for kind, rx in rules]
        self.cache: dict[str, list[tuple[str, str | None, re.Pattern[str]]]] = {}

    def at(self, c: str) -> list[tuple[str, str | None, re.Pattern[str]]]:
        found = self.cache.get(c)
        if found is None:
            found = [r for r in self.rules
                     if (r[1] is not None and r[1][0] == c)
                     or (r[1] is None and any(r[2].match(c + tail) for tail in _PROBES))]
            self.cache[c] = found
        return found


_INDEX = {False: _RuleIndex(VP_RULES), True: _RuleIndex(CP_RULES)}


def tokenize(text: str, linemap: LineMap, cp: bool = False) -> list[Token]:
    """All tokens of a preprocessed text, then an ``EOF`` token."""
    index = _INDEX[cp]
    out: list[Token] = []
    line, bol, pos, n = 1, 0, 0, len(text)
    while pos < n:
        c = text[pos]
        if c == "\n":
            line += 1
            pos += 1
            bol = pos
            continue
        if text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = n if end < 0 else end
            continue
        m = _BLANK.match(text, pos)
        if m:
            pos = m.end()
            continue
        rules = index.at(c)
        best_kind, best_len = "", 0
        for kind, literal, rx in rules:  # longest match, the first rule on a tie
            if literal is not None:
                size = len(literal) if text.startswith(literal, pos) else 0
            else:
                mm = rx.match(text, pos)
                size = mm.end() - pos if mm else 0
            if size > best_len:
                best_kind, best_len = kind, size
        if not best_len:
            hint = ""
            if c in "\u2013\u2014\u2212":
                hint = f" (U+{ord(c):04X}, a typographic dash: the minus sign is '-')"
            elif not c.isascii():
                hint = f" (U+{ord(c):04X})"
            raise CompileError(f"unexpected character '{c}'{hint}",
                               linemap.loc(line, pos - bol + 1))
        out.append(Token(best_kind, text[pos:pos + best_len], line, pos - bol + 1))
        pos += best_len
    out.append(Token("EOF", "", line, pos - bol + 1))
    return out
