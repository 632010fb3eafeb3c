"""The Tensix assembler: objdump text or LLK macro calls in, Tensix words out.

One statement per line (or several separated by ``;``), in either form the disassembler
prints::

    ttsetc16    5,4                 # objdump's form (tabs or spaces)
    sfpmad      L0,L2,L1,L9,0
    TTI_SETC16(5, 4);               // LLK macro form; TT_, TTI_ and TT_OP_ prefixes
    .ttinsn     0xb2050004          # a raw Tensix word

Operands are numbers (decimal, ``0x`` hex, negative where the field is signed) or
parenthesised expressions. Comments run from ``#`` or ``//`` to the end of the line.
The result is a list of Tensix words (``opcode << 24 | params``); :func:`assemble_bytes`
gives little-endian bytes, rotated into RISC-V stream order on request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..core.asm import Lexer, Token, TokenStream, evaluate, match_template, parse_number_expr
from ..core.errors import AsmError, EncodeError, SourceLoc
from ..core.isa import Field, Instr, Int, template_parts
from .image import to_bytes
from .isa import tensix_isa

LEXER = Lexer(
    [
        ("HEX", r"0[xX][0-9a-fA-F]+"),
        ("INT", r"\d+"),
        ("IDENT", r"[A-Za-z_.][A-Za-z0-9_.]*"),
        ("OP", r"<<|>>|[,()+\-*&|^~;]"),
    ],
    comment="#",
)

_MACRO_PREFIX = re.compile(r"^(?:TT_OP_|TTI_|TT_)(?P<name>[A-Z0-9_]+)$")


@dataclass(frozen=True)
class _Syntax:
    ins: Instr
    template: str
    fields: Mapping[str, Field]
    implied: Mapping[str, int]
    n_operands: int


@cache
def _syntaxes() -> dict[str, list[_Syntax]]:
    """Statement keyword ("ttsetc16", "TTI_SETC16") -> the syntaxes it may start."""
    table: dict[str, list[_Syntax]] = {}
    for ins in tensix_isa("objdump").instrs:
        for template, fields, implied in ins.syntaxes():
            key = template.split("\t")[0].split("(")[0]
            n = sum(1 for kind, _ in template_parts(template) if kind == "field")
            table.setdefault(key, []).append(_Syntax(ins, template, fields, implied, n))
    return table


def _strip_comment(line: str) -> str:
    """Drop a ``//`` comment."""
    pos = line.find("//")
    return line if pos < 0 else line[:pos]


def _operand_starts(toks: list[Token], macro: bool) -> list[Token | None]:
    """The first token of each operand written after the keyword (``None`` for an empty
    one): operands are separated by commas at the top level of the operand list (inside the
    parentheses of a macro call)."""
    body = toks[1:]
    if macro:
        if not body or body[0].text != "(":
            return []
        body = body[1:]
        if body and body[-1].text == ")":
            body = body[:-1]
    if not body:
        return []
    depth, new = 0, True
    starts: list[Token | None] = []
    for t in body:
        if new:
            starts.append(None if t.text == "," and depth == 0 else t)
            new = False
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif t.text == "," and depth == 0:
            new = True
    if new:
        starts.append(None)  # a trailing comma: an empty last operand
    return starts


class _Ctx:
    """No symbols: operands are numbers or registers (handled by the operand kinds)."""

    def symbol(self, tok: Token) -> Any:
        return None


_CTX = _Ctx()


def _statement(toks: list[Token], end: SourceLoc) -> int:
    first = toks[0]
    if first.kind != "IDENT":
        raise AsmError(f"expected an instruction, found '{first.text}'", first.loc)
    if first.text == ".ttinsn":
        ts = TokenStream(toks[1:], end)
        value = parse_number_expr(ts, _CTX)
        if value is None or not ts.at_end():
            raise ts.error("expected one number: .ttinsn WORD")
        word = evaluate(value, {})
        if not 0 <= word <= 0xFFFFFFFF:
            raise AsmError(f".ttinsn {word:#x} is not a 32-bit word", toks[1].loc)
        return word
    m = _MACRO_PREFIX.match(first.text)
    key = f"TTI_{m.group('name')}" if m else first.text
    table = _syntaxes()
    cands = table.get(key) or table.get(key.lower())
    if not cands:
        raise AsmError(f"unknown Blackhole Tensix instruction '{first.text}'", first.loc)
    macro = m is not None
    ts = TokenStream(toks, end)
    # the keyword is matched by the template's literal text: give it the canonical spelling
    ts.tokens = [Token(first.kind, key if macro else cands[0].template.split("\t")[0],
                       first.loc), *toks[1:]]
    for syn in cands:
        vals = match_template(syn.ins, syn.template, syn.fields, ts, _CTX, LEXER)
        if vals is None:
            continue
        values = {k: evaluate(v, {}) for k, v in vals.items()}
        order = [t for kind, t in template_parts(syn.template) if kind == "field"]
        starts = _operand_starts(toks, macro)
        locs = {name: tok.loc for name, tok in zip(order, starts, strict=False)
                if tok is not None}
        return _encode(syn, values, first, locs)
    # nothing matched: a wrong operand count is the most common cause, say so plainly
    given = len(_operand_starts(toks, macro))
    counts = sorted({s.n_operands for s in cands})
    if given not in counts:
        want = " or ".join(str(c) for c in counts)
        plural = "" if counts == [1] else "s"
        raise AsmError(f"{first.text} takes {want} operand{plural}, found {given}", first.loc)
    raise ts.error()


def _encode(syn: _Syntax, values: dict[str, int], first: Token,
            locs: Mapping[str, SourceLoc]) -> int:
    mnem = first.text
    for name, v in values.items():
        f = syn.fields[name]
        signed = isinstance(f.kind, Int)
        lo = -(1 << (f.width - 1)) if signed else 0
        if not lo <= v < (1 << f.width):
            raise AsmError(f"{mnem}: operand {name} = {v} does not fit its {f.width}-bit field "
                           f"({lo}..{(1 << f.width) - 1})", locs.get(name, first.loc))
    try:
        word = syn.ins.encode({**values, **syn.implied})
    except EncodeError as e:
        raise AsmError(e.message, first.loc) from None
    # operands that share bits (sfploadmacro's register and address) must agree
    check = syn.ins.field_values(word)
    for name, v in {**values, **syn.implied}.items():
        f = syn.fields.get(name)
        width = f.width if f is not None else 32
        if check.get(name) != v & ((1 << width) - 1):
            raise AsmError(f"{mnem}: operand {name} = {v} conflicts with the other operands",
                           locs.get(name, first.loc))
    return word


def assemble(text: str, filename: str = "<input>") -> list[int]:
    """Assemble Tensix source text (objdump or LLK macro syntax) into Tensix words."""
    words: list[int] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        body = _strip_comment(line)
        toks = LEXER.tokenize(body, filename, lineno)
        stmt: list[Token] = []
        for tok in [*toks, None]:
            if tok is None or tok.text == ";":
                if stmt:
                    end = tok.loc if tok is not None else SourceLoc(filename, lineno,
                                                                    len(body) + 1)
                    words.append(_statement(stmt, end))
                stmt = []
            else:
                stmt.append(tok)
    return words


def assemble_bytes(text: str, rotated: bool = False, filename: str = "<input>") -> bytes:
    """Little-endian bytes of the assembled words; ``rotated`` gives RISC-V stream order."""
    return to_bytes(assemble(text, filename), rotated)


__all__ = ["LEXER", "assemble", "assemble_bytes"]
