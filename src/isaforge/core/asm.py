"""The assembler framework shared by every front end.

* tokens and operand expressions (re-exported from :mod:`isaforge.core.tokens`);
* :func:`match_template`, which reads one instruction back through the same display template
  the disassembler prints with (see :mod:`isaforge.core.isa`).

Front ends keep their own statement loop (labels, directives) and call these pieces.
"""

from __future__ import annotations

from collections.abc import Mapping

from .isa import Field, Instr, template_parts
from .tokens import (
    BinOp,
    BranchRef,
    LabelRef,
    Lexer,
    Token,
    TokenStream,
    UnOp,
    evaluate,
    parse_number_expr,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
