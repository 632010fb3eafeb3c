"""The assembler's fast path: each text form of each instruction compiled, once per
generation, into one regular expression and a field plan.

The general path (:func:`isaforge.core.asm.read_instruction`) lexes a line into tokens and
walks every candidate template token by token; that is what gives precise errors, and it
reads operand expressions. Almost every line of a real listing is much simpler: a mnemonic,
registers, plain numbers, register names, a label. :class:`FastLines` reads such a line
with one ``re.fullmatch`` per text form and encodes it from a precomputed field plan. It is
an optimisation only, with one rule: **for any line it either gives exactly what the general
path gives, or declines** (``None``), and the assembler then takes the general path, which
also reports every error. To keep that promise:

* a form's *strict* regex accepts only what the lexer splits into the same tokens (the
  lexer's maximal munch is enforced with look-aheads) with simple operands (a register, a
  number, a register name, a label reference) that the form's operand kinds read to the
  same values;
* forms are tried in the general path's order. A form whose strict regex fails is passed
  over only if its *shape* regex (the template's literal tokens in order, anything between
  them) fails too, which the general path needs in order to read the line that way;
  otherwise the line is declined (it might be an expression the general path reads);
* a value that does not fit its field, an unknown ``@``/``%``/``|`` register name, a
  label reference where a number goes, a form the compiler does not know how to match:
  declined.
"""

from __future__ import annotations

import re
from typing import Any

from ..core.isa import (
    ISA,
    Branch,
    Enum,
    Field,
    Flag,
    Instr,
    Int,
    Kind,
    UInt,
    template_parts,
)
from .isa import REG_ALIASES, Reg, parse_reg_name
from .regdb import RegDB

_WS = r"[ \t\r\f\v]*+"  # (possessive: no token starts with a blank)
_ID = r"[A-Za-z_][A-Za-z0-9_]*"
_END_WORD = r"(?![0-9A-Za-z_])"  # the lexer's maximal munch after a name or number
_END_IDENT = r"(?![0-9A-Za-z_\[])"  # ... after an IDENT, which may continue with [index]
_NUMBER = (r"(0[xX][0-9a-fA-F]++|\d++|[@%|]" + _ID + r"|" + _ID
           + r"(?:\[(?:0[xX][0-9a-fA-F]+|\d+)\](?:\." + _ID + r")?)?+)" + _END_WORD)
# what an operand expression may span: outside parentheses only + and - join terms (and names
# hold brackets and dots); inside them, anything
_EXPR_SHAPE = r"(?:\(.*\)|[^,<>!*&^()])+?"
_MODS = r"\((?:rep|peek|xmov[1-3]|sds[1-3])\)"
_MNEMONIC = re.compile(_WS + r"(?:" + _MODS + _WS + r")*(" + _ID + r")" + _END_IDENT)
_LABEL = re.compile(_WS + "(" + _ID + ")" + _WS + ":" + _WS)
_LITERAL = re.compile(_WS + r"\[([0-9a-fA-F]+)\]" + _WS)

# operand readers: (code, data); the code says how a matched group becomes a value
_REG, _FLAG, _ENUM, _NUM, _PREFIXED, _BRANCH = range(6)
NOT_A_NUMBER = object()  # the general path does not read this name as a number
DECLINE = object()  # leave the line to the general path

# every text the general path reads as a register ($0a, $0A, $data ...)
REGS: dict[str, int] = {}
for _n in range(32):
    for _a in {f"{_n:02x}"[0], f"{_n:02X}"[0]}:
        for _b in {f"{_n:02x}"[1], f"{_n:02X}"[1]}:
            REGS["$" + _a + _b] = _n
REGS.update(("$" + _k, _v) for _k, _v in REG_ALIASES.items())
assert all(parse_reg_name(_k) == _v for _k, _v in REGS.items())


class Form:
    """One text form of one instruction, compiled."""

    __slots__ = ("ins", "strict", "shape", "readers", "implied", "order", "plan", "fast")

    def __init__(self, ins: Instr, template: str, fields: dict[str, Field],
                 implied: dict[str, int], lexer: Any) -> None:
        self.ins = ins
        self.implied = dict(implied)
        self.readers: list[tuple[str, int, Any]] = []  # (field, code, data), group order
        self.fast = True
        strict = [_WS]
        shape = [_WS]
        parts = template_parts(template)
        prev_lit = ""  # the last literal token written (the lexer reads '[10]' as one token)
        for i, (kind, text) in enumerate(parts):
            if kind == "lit":
                for tok in lexer.tokenize(text):
                    t = tok.text
                    strict.append(re.escape(t) + self._after(t) + _WS)
                    shape.append(re.escape(t) + _WS)
                    prev_lit = t
                continue
            if text == "NAME":
                strict.append(re.escape(ins.mnemonic) + _END_IDENT + _WS)
                shape.append(re.escape(ins.mnemonic) + _WS)
                prev_lit = ins.mnemonic
                continue
            f = fields[text]
            frag, code, data, loose = self._operand(f.kind)
            if frag is None:
                self.fast = False
                break
            if code == _NUM:
                nxt = self._next_literal(parts, i + 1, lexer)
                if prev_lit == "[" or nxt[:1] in ("+", "-"):
                    self.fast = False  # '[10]' lexes as one token; 'N + 1' is a sum
                    break
            strict.append(frag + _WS)
            shape.append(loose + _WS)
            self.readers.append((text, code, data) if f.const is None else ("", code, data))
            prev_lit = ""
        self.strict = re.compile("".join(strict)) if self.fast else None
        self.shape = re.compile("".join(shape))
        # the order the general path builds the values in: implied first, then as read
        order = list(self.implied)
        for name, _, _ in self.readers:
            if name and name not in order:
                order.append(name)
        self.order = order
        self.plan: list[tuple[str, int, int, int, bool]] = []
        for name in order:
            f = ins.all_fields.get(name)
            if f is None or f.const is not None:
                continue
            if f.pieces:
                self.fast = False
            neg = isinstance(f.kind, (Branch, Int))
            self.plan.append((name, f.low, f.width, f.mask, neg))
        if sum(1 for name, code, _ in self.readers if name and code == _BRANCH) > 1:
            self.fast = False
        if not self.fast:
            self.strict = None

    @staticmethod
    def _after(tok: str) -> str:
        if tok[-1:].isalnum() or tok[-1:] == "_":
            return _END_IDENT if tok[:1].isalpha() or tok[:1] == "_" else _END_WORD
        return ""

    @staticmethod
    def _next_literal(parts: tuple, start: int, lexer: Any) -> str:
        for kind, text in parts[start:]:
            if kind != "lit":
                return ""
            toks = lexer.tokenize(text)
            if toks:
                return toks[0].text
        return ""

    @staticmethod
    def _operand(kind: Kind) -> tuple[str | None, int, Any, str]:
        """(strict regex with one group, reader code, reader data, shape regex: what the
        general path might read as this operand, at least), for the operand kinds whose
        reading is known (a subclass that reads otherwise is not)."""
        parse = type(kind).parse
        if parse is Reg.parse:  # one token, a REG
            return r"(\$[0-9A-Za-z_]++)", _REG, None, r"\$[0-9A-Za-z_]+"
        if parse is Flag.parse:  # the display token, or nothing
            assert isinstance(kind, Flag)
            return (r"(?:(" + re.escape(kind.display) + ")" + _WS + ")?+", _FLAG, None,
                    r"(?:" + re.escape(kind.display) + ")?")
        if parse is Enum.parse:
            assert isinstance(kind, Enum)
            alts = "|".join(re.escape(n) for n in sorted(kind.by_name, key=len, reverse=True))
            if not alts or not kind.optional:
                return None, 0, None, ""  # (none in afuc; the general path reads it)
            default = next(k for k, v in kind.values.items() if v == "")
            return ("(?:(" + alts + ")" + _WS + ")?+", _ENUM, (kind.by_name, default),
                    "(?:" + alts + ")?")
        if parse is Branch.parse and getattr(kind, "prefix", "") == "#":
            assert isinstance(kind, Branch)
            return ("(" + re.escape(kind.prefix) + "(?:" + _ID + r"|-?\d+))" + _END_WORD,
                    _BRANCH, kind, "#(?:.+?)")
        if parse is UInt.parse and getattr(kind, "prefix", ""):
            assert isinstance(kind, UInt)
            return ("(" + re.escape(kind.prefix) + r"\d+)" + _END_IDENT, _PREFIXED,
                    len(kind.prefix), "(?:.+?)")
        if parse is Kind.parse or parse is UInt.parse:  # an expression
            return _NUMBER, _NUM, None, _EXPR_SHAPE
        return None, 0, None, ""


class FastLines:
    """The fast path of one assembly: the compiled forms of one generation, and the
    register database for names. :meth:`statement` reads one line."""

    def __init__(self, isa: ISA, db: RegDB, lexer: Any) -> None:
        self.forms = compiled_forms(isa, lexer)
        self.db = db
        self.nums: dict[str, Any] = {}  # operand text -> _number(text)

    def label(self, code: str) -> str | None:
        m = _LABEL.fullmatch(code)
        return m.group(1) if m else None

    @staticmethod
    def literal(code: str) -> int | None:
        m = _LITERAL.fullmatch(code)
        return int(m.group(1), 16) & 0xFFFFFFFF if m else None

    def statement(self, code: str
                  ) -> tuple[Form, dict[str, Any], tuple[str, str, bool] | None] | None:
        """An instruction line (comment removed) read as the general path would: (form,
        values in the general path's order, the label branched to or None: (field, label,
        relative)); or None when it is left to the general path."""
        m = _MNEMONIC.match(code)
        if m is None:
            return None
        forms = self.forms.get(m.group(1))
        if forms is None:
            return None
        nums = self.nums
        for form in forms:
            strict = form.strict
            got = strict.fullmatch(code) if strict is not None else None
            if got is None:
                if strict is None or form.shape.fullmatch(code):
                    return None
                continue
            vals = dict(form.implied)
            label = None
            for (name, code_, data), text in zip(form.readers, got.groups(), strict=True):
                if code_ == _REG:
                    v = REGS.get(text)
                    if v is None:
                        break  # not a register: the form does not read the line
                elif code_ == _NUM:
                    v = nums.get(text)
                    if v is None:
                        v = nums[text] = self._number(text)
                    if v is NOT_A_NUMBER:
                        break
                    if v is DECLINE:
                        return None
                elif code_ == _FLAG:
                    v = 0 if text is None else 1
                elif code_ == _ENUM:
                    v = data[1] if text is None else data[0][text]
                elif code_ == _PREFIXED:
                    v = int(text[data:], 10)
                else:  # _BRANCH
                    rest = text[1:]
                    if rest[0].isdigit() or rest[0] == "-":
                        v = int(rest)
                    else:
                        v = rest
                        if name:
                            label = (name, rest, data.relative)
                if name:
                    if name in vals and type(v) is int and v != vals[name]:
                        break  # the form implies another value than the one written
                    vals[name] = v
            else:
                return form, vals, label
        return None

    def _number(self, text: str) -> Any:
        """A number or name's value; NOT_A_NUMBER if the general path does not read it as
        one; DECLINE for an unknown register name (the general path reports it)."""
        c = text[0]
        if c.isdigit():
            return int(text, 16) if text[1:2] in ("x", "X") else int(text, 10)
        db = self.db
        if c == "@":
            v = db.control_reg(text[1:])
        elif c == "%":
            v = db.sqe_reg(text[1:])
        elif c == "|":
            v = db.pipe_reg(text[1:])
        else:
            v = db.gpu_reg(text)
            return NOT_A_NUMBER if v is None else v
        return DECLINE if v is None else v


def encode(form: Form, vals: dict[str, Any]) -> int | None:
    """The word, as :meth:`Instr.encode` makes it; None if a value does not fit (the
    general path then reports it)."""
    word = form.ins.match
    for name, low, width, mask, neg in form.plan:
        v = vals[name]
        if not 0 <= v < 1 << width:
            if neg and -(1 << (width - 1)) <= v < 0:
                v &= (1 << width) - 1
            else:
                return None
        word = (word & ~mask) | (v << low)
    return word


def _first_word(template: str, ins: Instr) -> str | None:
    """The word a template starts with after its optional modifiers (None: an operand)."""
    for kind, text in template_parts(template):
        if kind == "field":
            if text == "NAME":
                return ins.mnemonic
            f = ins.all_fields.get(text)
            if f is not None and f.kind.optional:
                continue
            return None
        words = text.split()
        if words:
            return words[0]
    return None


_compiled: dict[tuple[int, int], dict[str, list[Form]]] = {}


def compiled_forms(isa: ISA, lexer: Any) -> dict[str, list[Form]]:
    """mnemonic -> its forms in the general path's order (built once per ISA and lexer)."""
    key = (id(isa), id(lexer))
    got = _compiled.get(key)
    if got is None:
        got = {}
        for mnemonic, candidates in isa.by_mnemonic.items():
            # (a form that names another mnemonic does not read the line: the general path
            # fails it at that word)
            got[mnemonic] = [Form(ins, template, fields, dict(implied), lexer)
                             for ins in candidates
                             for template, fields, implied in ins.syntaxes()
                             if _first_word(template, ins) in (mnemonic, None)]
        _compiled[key] = got
    return got


__all__ = ["FastLines", "Form", "compiled_forms", "encode"]
