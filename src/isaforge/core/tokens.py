"""Tokens with source locations, and the small integer expressions assembly operands use.

* a table-driven :class:`Lexer` giving tokens with file:line:col;
* a :class:`TokenStream` that remembers the furthest point any parse reached and what it
  expected there, so a failed statement reports ``file:line:col: expected X, found 'Y'``;
* small integer expressions (``@REG+1``, ``(1 << 4) | 3``) that may refer to labels
  (:class:`LabelRef`, :class:`BranchRef`), resolved in the assembler's second pass.

Operand kinds (:mod:`isaforge.core.isa`) parse through these; the assembler framework
(:mod:`isaforge.core.asm`) drives them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .errors import AsmError, SourceLoc
from .record import Frozen

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern
    from typing import Any

_set = object.__setattr__

# --------------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------------


class Token(Frozen):
    _FIELDS = ("kind", "text", "loc")
    kind: str
    text: str
    loc: SourceLoc

    def __init__(self, kind: str, text: str, loc: SourceLoc) -> None:
        _set(self, "kind", kind)
        _set(self, "text", text)
        _set(self, "loc", loc)


class Lexer:
    """Splits lines into tokens from an ordered list of ``(kind, regex)`` rules.

    Whitespace separates tokens; ``comment`` starts a comment running to the end of the line.
    A character no rule accepts is an :class:`AsmError` at its column.
    """

    def __init__(self, rules: list[tuple[str, str]], comment: str = ";") -> None:
        self.rules = rules
        self.comment = comment
        self._regex: Pattern[str] | None = None

    @property
    def regex(self) -> Pattern[str]:
        """The rules as one pattern, a group per kind (compiled when first used: an
        assembler with a faster path of its own may never need it)."""
        if self._regex is None:
            import re  # (here: an assembler with a path of its own may never need it)

            self._regex = re.compile("|".join(f"(?P<{k}>{r})" for k, r in self.rules))
        return self._regex

    def tokenize(self, line: str, file: str = "<input>", lineno: int = 1) -> list[Token]:
        toks: list[Token] = []
        pos = 0
        n = len(line)
        while pos < n:
            ch = line[pos]
            if ch in " \t\r\f\v":
                pos += 1
                continue
            if self.comment and line.startswith(self.comment, pos):
                break
            m = self.regex.match(line, pos)
            if m is None or m.end() == pos:
                raise AsmError(f"unexpected character {ch!r}", SourceLoc(file, lineno, pos + 1))
            kind = m.lastgroup or "?"
            toks.append(Token(kind, m.group(), SourceLoc(file, lineno, pos + 1)))
            pos = m.end()
        return toks


class TokenStream:
    """A cursor over one statement's tokens, recording the furthest failure for errors."""

    def __init__(self, tokens: list[Token], end_loc: SourceLoc) -> None:
        self.tokens = tokens
        self.pos = 0
        self.end_loc = end_loc
        self.fail_pos = -1
        self.fail_expected: list[str] = []
        self.field_locs: dict[str, SourceLoc] = {}  # where each operand read began

    def peek(self, k: int = 0) -> Token | None:
        i = self.pos + k
        return self.tokens[i] if i < len(self.tokens) else None

    def next(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise AsmError("unexpected end of line", self.end_loc)
        self.pos += 1
        return tok

    def at_end(self) -> bool:
        return self.pos >= len(self.tokens)

    def expected(self, what: str) -> None:
        """Note that ``what`` was expected at the current position (for error messages)."""
        if self.pos > self.fail_pos:
            self.fail_pos = self.pos
            self.fail_expected = [what]
        elif self.pos == self.fail_pos and what not in self.fail_expected:
            self.fail_expected.append(what)

    def error(self, default: str = "syntax error") -> AsmError:
        """The best error for a statement nothing accepted: where it went furthest."""
        if self.fail_pos < 0:
            tok = self.peek()
            return AsmError(default, tok.loc if tok else self.end_loc)
        tok = self.tokens[self.fail_pos] if self.fail_pos < len(self.tokens) else None
        found = f"'{tok.text}'" if tok else "end of line"
        loc = tok.loc if tok else self.end_loc
        exp = " or ".join(self.fail_expected[:6])
        return AsmError(f"expected {exp}, found {found}", loc)


# --------------------------------------------------------------------------------------------
# Deferred values: labels and expressions
# --------------------------------------------------------------------------------------------


class BranchRef(Frozen):
    """A reference to a label used as a branch target (relative or absolute)."""

    _FIELDS = ("name", "relative", "loc")
    name: str
    relative: bool
    loc: SourceLoc

    def __init__(self, name: str, relative: bool, loc: SourceLoc) -> None:
        _set(self, "name", name)
        _set(self, "relative", relative)
        _set(self, "loc", loc)


class LabelRef(Frozen):
    """A label used as a plain value (its address)."""

    _FIELDS = ("name", "loc")
    name: str
    loc: SourceLoc

    def __init__(self, name: str, loc: SourceLoc) -> None:
        _set(self, "name", name)
        _set(self, "loc", loc)


class BinOp(Frozen):
    _FIELDS = ("op", "left", "right")
    op: str
    left: Any
    right: Any

    def __init__(self, op: str, left: Any, right: Any) -> None:
        _set(self, "op", op)
        _set(self, "left", left)
        _set(self, "right", right)


class UnOp(Frozen):
    _FIELDS = ("op", "operand")
    op: str
    operand: Any

    def __init__(self, op: str, operand: Any) -> None:
        _set(self, "op", op)
        _set(self, "operand", operand)


_BINOPS: dict[str, Callable[[int, int], int]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}
_HEX_DIGITS = "0123456789abcdefABCDEF"
_PRECEDENCE = [("|",), ("^",), ("&",), ("<<", ">>"), ("+", "-"), ("*",)]


def evaluate(value: Any, labels: Mapping[str, int]) -> int:
    """Resolve a parsed operand value (int, LabelRef, BinOp, UnOp) to an int."""
    if isinstance(value, int):
        return value
    if isinstance(value, LabelRef):
        if value.name not in labels:
            raise AsmError(f"undefined label '{value.name}'", value.loc)
        return labels[value.name]
    if isinstance(value, BinOp):
        return _BINOPS[value.op](evaluate(value.left, labels), evaluate(value.right, labels))
    if isinstance(value, UnOp):
        v = evaluate(value.operand, labels)
        return -v if value.op == "-" else ~v
    raise TypeError(f"cannot evaluate {value!r}")


def _fold(op: str, left: Any, right: Any) -> Any:
    if isinstance(left, int) and isinstance(right, int):
        return _BINOPS[op](left, right)
    return BinOp(op, left, right)


def parse_number_expr(ts: TokenStream, ctx: Any, full: bool = False) -> Any:
    """An integer expression, or ``None`` (nothing consumed) if the tokens do not start one.

    Outside parentheses only ``+`` and ``-`` combine terms (so ``0x2c << 16`` leaves the
    ``<<`` to the instruction template); inside them every operator is allowed. Atoms are
    decimal and hex numbers and whatever ``ctx.symbol(token)`` recognises (register names,
    label references, ...).
    """
    start = ts.pos
    ops = [op for level in _PRECEDENCE for op in level] if full else ["+", "-"]
    levels = _PRECEDENCE if full else [("+", "-")]

    def atom() -> Any:
        tok = ts.peek()
        if tok is None:
            ts.expected("a number")
            return None
        if tok.text in ("-", "~"):
            ts.next()
            inner = atom()
            if inner is None:
                return None
            if isinstance(inner, int):
                return -inner if tok.text == "-" else ~inner
            return UnOp(tok.text, inner)
        if tok.text == "(":
            ts.next()
            inner = parse_number_expr(ts, ctx, full=True)
            if inner is None:
                return None
            nxt = ts.peek()
            if nxt is None or nxt.text != ")":
                ts.expected("')'")
                return None
            ts.next()
            return inner
        text = tok.text
        if text[:2] in ("0x", "0X") and len(text) > 2 and not text[2:].strip(_HEX_DIGITS):
            ts.next()
            return int(tok.text, 16)
        if text.isdecimal():  # (as \d+)
            ts.next()
            return int(tok.text, 10)
        sym = ctx.symbol(tok) if ctx is not None and hasattr(ctx, "symbol") else None
        if sym is not None:
            ts.next()
            return sym
        ts.expected("a number")
        return None

    def level(i: int) -> Any:
        if i == len(levels):
            return atom()
        left = level(i + 1)
        if left is None:
            return None
        while True:
            tok = ts.peek()
            if tok is None or tok.text not in levels[i] or tok.text not in ops:
                return left
            save = ts.pos
            ts.next()
            right = level(i + 1)
            if right is None:
                ts.pos = save
                return left
            left = _fold(tok.text, left, right)

    result = level(0)
    if result is None:
        ts.pos = start
    return result
