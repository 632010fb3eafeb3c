"""The THEIA assembler: the upstream compiler's listing syntax in, instruction words out.

Accepted, one statement per line (``//`` starts a comment):

* an instruction as the listings print it: ``ADD R[0].x__ I(0) 0``,
  ``ADD <BRANCH.ZERO> @14.___ R[10 + offset].xxx R[12 + offset].-x-y-z``, or for the CP
  (``cp=True``) ``ASSIGN R11 I(0 )``, ``COPYBLOCK DstId: R0 SrcOffset: R11 DstOffsetAndLen: R10``;
  whitespace is free;
* trailing ``{FIELD=value}`` annotations set fields the listing text cannot show (``{EOF=1}``);
  the disassembler writes them where needed;
* ``name:`` labels, and ``@name`` as a VP branch target;
* ``.word 0x...``: a raw word;
* any of these after a listing's instruction index, ``3:\\t.word 0x4eac98d6`` (the listing
  prints undecodable words so); the index must be the statement's;
* whole listing lines as the compiler writes them: ``15:\\t401 0 0 0   //\\t0401000000000000\\tADD
  R0.___ R0.xyz R0.xyz`` (VP ``code.list``), ``3:\\td000000\\t\\t//ASSIGN R0 I(0 )`` (CP
  ``cp_code.list``) and ``d000000\\t\\t//ASSIGN R0 I(0 )`` (``control_code.mem``). The text is
  assembled; the hex column is used only for bits the text cannot show (the EOF bit, ...), and
  only when our formatting of both words is the same text; otherwise the line is an error.
  A comment line that is just ``//Name`` (the compiler's function headers) defines ``Name`` as
  a weak label, which resolves ``@Name`` in listings written before label resolution.

Lines in the forms we print are read by a fast path (:mod:`isaforge.theia.fastasm`: one
regular expression per form, and the word computed straight from the field layout); every
other line by the general template reader of :mod:`isaforge.core.asm`, which also gives the
errors. Both read a line the same way (``Assembler(fast=False)`` uses only the general one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core.asm import BranchRef, Lexer, Token, TokenStream, evaluate, match_template
from ..core.errors import AsmError, EncodeError, SourceLoc
from ..core.isa import ISA, Instr, template_parts
from .fastasm import Form, fast_reader
from .isa import VIEW_FIELDS, isa_for, mnemonics

LEXER = Lexer(
    [
        ("ANNOT", r"\{[A-Za-z0-9_]+=(?:0[xX][0-9a-fA-F]+|\d+)\}"),
        ("MOD", r"\((?:un)?scaled\)"),
        ("TARGET", r"@(?:\d+|[A-Za-z_]\w*)"),
        ("LANES", r"(?<=\.)-?[xyzw_]-?[xyzw_]-?[xyzw_](?![\w-])"),
        ("REG", r"[Rr](?=\d|\[)"),
        ("DIRECTIVE", r"(?<![\w\]])\.[A-Za-z_]\w*"),
        ("WORD", r"[0-9A-Za-z_]+"),
        ("OP", r"[\[\]().,:+\-*<>@?]"),
    ],
    comment="//",
)

_VP_LISTING = re.compile(r"^\s*(\d+):\t?[^\t/]*?\s*//\t(?P<raw>[^\t]*)\t(?P<text>.*)$")
_CP_LISTING = re.compile(r"^\s*(?:(\d+):)?\s*(?P<raw>[0-9a-fA-F]+)\s*//(?P<text>.*)$")
_INDEX = re.compile(r"^\s*(\d+):")  # a listing line's instruction index (``3:\t.word 0x...``)
_FUNC_HEADER = re.compile(r"^\s*//([A-Za-z_]\w*)\s*$")
_ANNOT = re.compile(r"\{([A-Za-z0-9_]+)=(0[xX][0-9a-fA-F]+|\d+)\}")


@dataclass
class Statement:
    """One parsed instruction before labels are resolved."""

    loc: SourceLoc
    tokens: list[Token]
    ins: Instr | None = None
    values: dict[str, Any] = field(default_factory=dict)
    implied: dict[str, int] = field(default_factory=dict)
    annotations: dict[str, tuple[int, SourceLoc]] = field(default_factory=dict)
    raw: int | None = None  # a .word, or the hex column of a listing line
    literal: bool = False  # True for .word
    fast: str | None = None  # the line, if the fast path read it (errors re-read it slowly)
    form: Form | None = None  # the form the fast path read
    word: int | None = None  # the word, when the fast path could encode it at once


class FormatContext:
    """Names branch targets when formatting (address -> label)."""

    def __init__(self, labels: dict[int, str] | None = None) -> None:
        self.labels = labels or {}

    def label_for(self, address: int) -> str | None:
        return self.labels.get(address)


class Assembler:
    """Two passes: parse every line, then resolve labels and encode."""

    def __init__(self, cp: bool = False, fast: bool = True) -> None:
        """``fast=False`` reads every line with the general reader only (the fast path's
        tests compare the two)."""
        self.cp = cp
        self.isa: ISA = isa_for(cp)
        self.names = mnemonics(cp)
        self.size = 32 if cp else 64
        self.fast = fast_reader(cp) if fast else None
        self.hidden_from_listing: list[tuple[SourceLoc, int, int]] = []  # (loc, text word, raw)

    # -- pass 1 --------------------------------------------------------------------------------
    def parse_line(self, line: str, filename: str, lineno: int, address: int,
                   labels: dict[str, int], weak: dict[str, int | None]) -> Statement | None:
        listing = (_CP_LISTING if self.cp else _VP_LISTING).match(line)
        raw: int | None = None
        index = listing if listing is not None else _INDEX.match(line)
        if index is not None and index.group(1) is not None and int(index.group(1)) != address:
            raise AsmError(f"listing address {index.group(1)} where instruction "
                           f"{address} is expected", SourceLoc(filename, lineno, 1))
        if listing is None and index is not None:
            line = " " * index.end() + line[index.end():]  # keep the columns of the rest
        if listing is not None:
            text_start = listing.start("text")
            line = " " * text_start + listing.group("text")
            rawtext = listing.group("raw").strip()
            if re.fullmatch(r"[0-9a-fA-F]+", rawtext):
                raw = int(rawtext, 16)
        else:
            header = _FUNC_HEADER.match(line)
            if header is not None:
                name = header.group(1)
                weak[name] = None if name in weak else address  # None: ambiguous
                return None
        code = line.split("//", 1)[0] if "//" in line else line
        if not code or code.isspace():
            return None  # a blank or comment line
        if self.fast is None:
            return self._parse_slow(line, filename, lineno, address, labels, raw)
        quick = self.fast.read_word(code, filename, lineno)
        if quick is not None:
            form, word, loc = quick
            return Statement(loc, [], form.ins, raw=raw, fast=line, form=form, word=word)
        got = self.fast.read(code, filename, lineno)
        if got is not None:
            form, vals, loc, annotations = got
            return Statement(loc, [], form.ins, vals, dict(form.implied), annotations, raw,
                             fast=line, form=form)
        return self._parse_slow(line, filename, lineno, address, labels, raw)

    def _parse_slow(self, line: str, filename: str, lineno: int, address: int,
                    labels: dict[str, int], raw: int | None) -> Statement | None:
        toks = LEXER.tokenize(line, filename, lineno)
        end = SourceLoc(filename, lineno, len(line.rstrip()) + 1)
        while len(toks) >= 2 and toks[1].text == ":" and re.fullmatch(r"[A-Za-z_]\w*",
                                                                          toks[0].text):
            name = toks[0].text
            if name in labels:
                raise AsmError(f"label '{name}' is already defined", toks[0].loc)
            labels[name] = address
            toks = toks[2:]
        if not toks:
            return None
        st = Statement(toks[0].loc, toks, raw=raw)
        while toks and toks[-1].kind == "ANNOT":
            m = _ANNOT.fullmatch(toks[-1].text)
            assert m is not None
            st.annotations[m.group(1)] = (annotation_value(m.group(2)), toks[-1].loc)
            toks = toks[:-1]
        if not toks:
            raise AsmError("an annotation needs an instruction", st.loc)
        first = toks[0]
        if first.kind == "DIRECTIVE":
            return self._directive(first, toks[1:], st, end)
        if first.text not in self.names:
            raise AsmError(f"unknown instruction '{first.text}' (expected one of "
                           f"{', '.join(sorted(self.names))})", first.loc)
        ts = TokenStream(toks, end)
        candidates = self.isa.by_mnemonic.get(first.text) if self.cp else self.isa.instrs
        for ins in candidates or []:
            for template, fields, implied in ins.syntaxes():
                vals = match_template(ins, template, fields, ts, None, LEXER)
                if vals is not None:
                    st.ins, st.values, st.implied = ins, vals, dict(implied)
                    return st
        raise ts.error()

    def _directive(self, tok: Token, args: list[Token], st: Statement,
                   end: SourceLoc) -> Statement:
        if tok.text != ".word":
            raise AsmError(f"unknown directive '{tok.text}' (expected .word)", tok.loc)
        if len(args) != 1 or not re.fullmatch(r"0[xX][0-9a-fA-F]+|\d+", args[0].text):
            raise AsmError(".word takes one number", args[0].loc if args else end)
        value = int(args[0].text, 0)
        if value >> self.size:
            raise AsmError(f"{args[0].text} does not fit a {self.size}-bit word", args[0].loc)
        st.raw, st.literal = value, True
        return st

    # -- pass 2 --------------------------------------------------------------------------------
    def encode(self, st: Statement, labels: dict[str, int], weak: dict[str, int | None],
               ctx: FormatContext) -> int:
        if st.literal:
            assert st.raw is not None
            return st.raw
        if st.word is not None:
            if st.raw is not None and st.raw != st.word:
                return self._reconcile(st, st.word, ctx)
            return st.word
        if st.form is not None:
            word = st.form.encode(st.values, st.annotations, labels, weak)
            if word is not None:
                if st.raw is not None and st.raw != word:
                    word = self._reconcile(st, word, ctx)
                return word
        ins = st.ins
        assert ins is not None
        vals: dict[str, int] = dict(st.implied)
        for name, v in st.values.items():
            if isinstance(v, BranchRef):
                target = labels.get(v.name)
                if target is None:
                    target = weak.get(v.name)
                if target is None:
                    why = "ambiguous" if v.name in weak else "undefined"
                    raise AsmError(f"{why} label '{v.name}'", v.loc)
                v = target
            else:
                v = evaluate(v, labels)
            vals[name] = v
        all_fields = dict(ins.fields)
        for name, (v, loc) in st.annotations.items():
            if name not in all_fields or name in VIEW_FIELDS:
                raise AsmError(f"'{name}' is not a field of this instruction (fields: "
                               f"{', '.join(n for n in all_fields if n not in VIEW_FIELDS)})",
                               loc)
            vals[name] = v
        for name, v in vals.items():
            f = all_fields.get(name)
            if f is not None and not 0 <= v < (1 << f.width):
                if name in st.annotations:
                    loc = st.annotations[name][1]
                else:
                    loc = self._value_loc(st, v)
                raise AsmError(f"{name} value {v} does not fit its {f.width}-bit field "
                               f"(0..{(1 << f.width) - 1})", loc)
        try:
            word = ins.encode(vals)
        except EncodeError as e:
            raise AsmError(e.message, st.loc) from None
        back = ins.field_values(word)
        for name, v in vals.items():
            if name in back and back[name] != v:
                raise AsmError(f"inconsistent operands: {name} would be {back[name]:#x}, "
                               f"not {v:#x}", self._value_loc(st, v))
        if st.raw is not None and st.raw != word:
            word = self._reconcile(st, word, ctx)
        return word

    def _reconcile(self, st: Statement, word: int, ctx: FormatContext) -> int:
        """A listing line whose hex column differs: accept it if the text cannot show why."""
        assert st.raw is not None
        raw = st.raw
        if raw >> self.size == 0 and self.isa.match(raw) is st.ins:
            if self._same_text(st.ins, word, raw) or (
                    _squash(self._format(word, ctx)) == _squash(self._format(raw, ctx))):
                self.hidden_from_listing.append((st.loc, word, raw))
                return raw
        width = self.size // 4
        raise AsmError(f"the listing text encodes {word:0{width}x} but its hex column says "
                       f"{raw:0{width}x}", st.loc)

    def _same_text(self, ins: Instr, word: int, raw: int) -> bool:
        """Whether both words print the same, without printing them: both decode as ``ins``
        and pick the same template, whose fields have the same values."""
        if self.isa.match(word) is not ins:
            return False
        ours, theirs = ins.field_values(word), ins.field_values(raw)
        template, fields = ins.template_for(ours)
        other, other_fields = ins.template_for(theirs)
        if template != other or fields is not other_fields:
            return False
        return all(ours[name] == theirs[name] for kind, name in template_parts(template)
                   if kind == "field" and name != "NAME")

    def _format(self, word: int, ctx: FormatContext) -> str:
        ins, vals = self.isa.decode(word)
        return self.isa.format(ins, vals, ctx)

    @staticmethod
    def _value_loc(st: Statement, value: int) -> SourceLoc:
        """Where ``value`` was written (the first token that reads as it), else the line."""
        for tok in st.tokens:
            try:
                if tok.kind != "REG" and int(tok.text.lstrip("@"), 0) == value:
                    return tok.loc
            except ValueError:
                continue
        return st.loc

    def assemble(self, text: str, filename: str = "<input>") -> list[int]:
        labels: dict[str, int] = {}
        weak: dict[str, int | None] = {}
        stmts: list[Statement] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            st = self.parse_line(line, filename, lineno, len(stmts), labels, weak)
            if st is not None:
                stmts.append(st)
        names = {v: k for k, v in weak.items() if v is not None and k not in labels}
        names.update({v: k for k, v in labels.items()})
        ctx = FormatContext(names)
        words = []
        for i, st in enumerate(stmts):
            try:
                words.append(self.encode(st, labels, weak, ctx))
            except AsmError:
                if st.fast is None:
                    raise
                # the error as the general reader locates it (the fast path keeps no tokens)
                slow = self._parse_slow(st.fast, st.loc.file, st.loc.line, i, {}, st.raw)
                assert slow is not None
                words.append(self.encode(slow, labels, weak, ctx))
        return words


def annotation_value(text: str) -> int:
    """The value of a ``{FIELD=value}`` annotation: ``0x`` hex or decimal."""
    return int(text, 16) if text[:2] in ("0x", "0X") else int(text, 10)


def _squash(text: str) -> str:
    return "".join(text.split())


def assemble(text: str, cp: bool = False, filename: str = "<input>") -> list[int]:
    """Assemble VP (or, with ``cp=True``, CP) source or listing text to instruction words."""
    return Assembler(cp).assemble(text, filename)


def assemble_one(text: str, cp: bool = False) -> int:
    """One statement to its word (no labels)."""
    words = assemble(text, cp)
    if len(words) != 1:
        raise AsmError(f"expected one instruction, got {len(words)}",
                       SourceLoc("<input>", 1, 1))
    return words[0]


__all__ = ["LEXER", "Assembler", "FormatContext", "Statement", "assemble", "assemble_one"]
