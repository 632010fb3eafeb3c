"""The assembler framework shared by every front end.

* a table-driven :class:`Lexer` giving tokens with file:line:col;
* a :class:`TokenStream` that remembers the furthest point any parse reached and what it
  expected there, so a failed statement reports ``file:line:col: expected X, found 'Y'``;
* small integer expressions (``@REG+1``, ``(1 << 4) | 3``) that may refer to labels, resolved
  in the second pass;
* :func:`match_template`, which reads one instruction back through the same display template
  the disassembler prints with (see :mod:`isaforge.core.isa`).

Front ends keep their own statement loop (labels, directives) and call these pieces.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import AsmError, SourceLoc
from .isa import Field, Instr, template_parts

# --------------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    loc: SourceLoc


class Lexer:
    """Splits lines into tokens from an ordered list of ``(kind, regex)`` rules.

    Whitespace separates tokens; ``comment`` starts a comment running to the end of the line.
    A character no rule accepts is an :class:`AsmError` at its column.
    """

    def __init__(self, rules: list[tuple[str, str]], comment: str = ";") -> None:
        self.rules = rules
        self.comment = comment
        self.regex = re.compile("|".join(f"(?P<{k}>{r})" for k, r in rules))

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


@dataclass(frozen=True)
class BranchRef:
    """A reference to a label used as a branch target (relative or absolute)."""

    name: str
    relative: bool
    loc: SourceLoc


@dataclass(frozen=True)
class LabelRef:
    """A label used as a plain value (its address)."""

    name: str
    loc: SourceLoc


@dataclass(frozen=True)
class BinOp:
    op: str
    left: Any
    right: Any


@dataclass(frozen=True)
class UnOp:
    op: str
    operand: Any


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
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", tok.text):
            ts.next()
            return int(tok.text, 16)
        if re.fullmatch(r"\d+", tok.text):
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


# --------------------------------------------------------------------------------------------
# Reading an instruction back through its display template
# --------------------------------------------------------------------------------------------

_lit_cache: dict[tuple[int, str], list[str]] = {}


def _literal_tokens(lexer: Lexer, text: str) -> list[str]:
    key = (id(lexer), text)
    got = _lit_cache.get(key)
    if got is None:
        got = [t.text for t in lexer.tokenize(text)]
        _lit_cache[key] = got
    return got


def match_template(
    ins: Instr,
    template: str,
    fields: Mapping[str, Field],
    ts: TokenStream,
    ctx: Any,
    lexer: Lexer,
) -> dict[str, Any] | None:
    """Read tokens according to ``template``; the field values, or ``None`` if they differ.

    On failure the stream is rewound and its furthest-failure record updated.
    """
    start = ts.pos
    vals: dict[str, Any] = {}
    for kind, text in template_parts(template):
        if kind == "lit":
            for lit in _literal_tokens(lexer, text):
                tok = ts.peek()
                if tok is None or tok.text != lit:
                    ts.expected(f"'{lit}'")
                    ts.pos = start
                    return None
                ts.next()
            continue
        if text == "NAME":
            tok = ts.peek()
            if tok is None or tok.text != ins.mnemonic:
                ts.expected(f"'{ins.mnemonic}'")
                ts.pos = start
                return None
            ts.next()
            continue
        f = fields[text]
        tok = ts.peek()
        if tok is not None:
            ts.field_locs[text] = tok.loc
        v = f.kind.parse(ts, ctx)
        if v is None:
            ts.pos = start
            return None
        if f.const is None:
            vals[text] = v
    if not ts.at_end():
        ts.expected("end of statement")
        ts.pos = start
        return None
    return vals


def read_instruction(
    candidates: list[Instr], ts: TokenStream, ctx: Any, lexer: Lexer
) -> tuple[Instr, dict[str, Any], dict[str, int]] | None:
    """Try every text form of every candidate; the first that reads the whole statement.

    Returns (instruction, parsed values, values implied by the form). A form whose implied
    values contradict what was written (an override for ``!`` read without ``!``) is skipped.
    """
    start = ts.pos
    for ins in candidates:
        for template, fields, implied in ins.syntaxes():
            vals = match_template(ins, template, fields, ts, ctx, lexer)
            if vals is None:
                continue
            if any(isinstance(vals.get(k), int) and vals[k] != v for k, v in implied.items()):
                ts.pos = start
                continue
            return ins, vals, dict(implied)
    return None


__all__ = [
    "BinOp",
    "BranchRef",
    "LabelRef",
    "Lexer",
    "Token",
    "TokenStream",
    "UnOp",
    "evaluate",
    "match_template",
    "parse_number_expr",
    "read_instruction",
]
