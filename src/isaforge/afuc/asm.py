"""The afuc assembler: Mesa afuc-asm syntax in, firmware bytes out.

Accepted: one instruction per line in the disassembler's syntax (``(rep)(xmov1)mov $data,
$data``), labels ``name:``, label operands ``#name``, raw words ``[xxxxxxxx]`` and ``[#label]``
(a NOP literal holding the label's offset), ``.align N``, ``.jumptbl`` (the 128-entry packet
table built from labels named like packets, ``CP_ME_INIT`` or ``UNKN12``), ``.section NAME``
(a new image aligned to 32 bytes, with its own labels), comments after ``;``. Immediates may
be numbers, ``@CONTROL_REG``, ``%SQE_REG``, ``|PIPE_REG``, GPU register names, ``#label``, and
``+``/``-`` of those (full expressions inside parentheses).

The output starts with the zero dword the kernel strips. The generation comes from ``gpu`` or
else from the firmware id in the first ``[literal]``, as Mesa's assembler does.
"""

from __future__ import annotations

import gc
import struct

from ..core.asm import (
    BranchRef,
    LabelRef,
    Lexer,
    Token,
    TokenStream,
    evaluate,
    read_instruction,
)
from ..core.errors import AsmError, EncodeError, FirmwareError, SourceLoc
from ..core.isa import ISA, Instr
from .fastasm import FastLines, Form, encode
from .image import FIRMWARE_IDS, fwid_of, generation, parse_gpu, variant
from .isa import isa_for, nop_literal
from .regdb import RegDB

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
LEXER = Lexer(
    [
        ("MOD", r"\((?:rep|peek|xmov[1-3]|sds[1-3])\)"),
        ("LITERAL", r"\[[0-9a-fA-F]+\]"),
        ("REG", r"\$[0-9A-Za-z_]+"),
        ("CREG", "@" + _IDENT),
        ("SREG", "%" + _IDENT),
        ("PREG", r"\|" + _IDENT),
        ("LABELREF", "#(?:" + _IDENT + r"|-?\d+)"),
        ("HEX", r"0[xX][0-9a-fA-F]+"),
        ("INT", r"\d+"),
        ("DIRECTIVE", r"\." + _IDENT),
        ("IDENT", _IDENT + r"(?:\[(?:0[xX][0-9a-fA-F]+|\d+)\](?:\." + _IDENT + ")?)?"),
        ("OP", r"<<|>>|[,\[\]+\-!:()~*&^|]"),
    ]
)

_HEX_DIGITS = "0123456789abcdefABCDEF"

# the modifier tokens (what the lexer calls MOD)
MODS = frozenset(["(rep)", "(peek)", "(xmov1)", "(xmov2)", "(xmov3)", "(sds1)", "(sds2)",
                  "(sds3)"])


class _Stmt:
    """A parsed instruction or data word awaiting label resolution. (Plain classes here:
    a dataclass costs start-up time.)"""

    __slots__ = ("loc", "ins", "values", "implied", "locs", "literal", "literal_label",
                 "jumptable")

    def __init__(self, loc: SourceLoc, ins: Instr | None = None,
                 values: dict[str, Any] | None = None, implied: dict[str, int] | None = None,
                 locs: dict[str, SourceLoc] | None = None, literal: int | None = None,
                 literal_label: LabelRef | None = None, jumptable: bool = False) -> None:
        self.loc = loc
        self.ins = ins
        self.values = {} if values is None else values
        self.implied = {} if implied is None else implied
        self.locs = {} if locs is None else locs
        self.literal = literal
        self.literal_label = literal_label
        self.jumptable = jumptable


class _FastRef:
    """A line the fast path read that branches to a label: encoded in pass 2. (A plain
    class: a dataclass costs start-up time.)"""

    __slots__ = ("form", "values", "target", "line", "lineno")

    def __init__(self, form: Form, values: dict[str, Any], target: tuple[str, str, bool],
                 line: str, lineno: int) -> None:
        self.form = form
        self.values = values
        self.target = target  # (field, label, relative)
        self.line = line
        self.lineno = lineno


class _Section:
    __slots__ = ("name", "stmts", "labels", "label_locs", "size")

    def __init__(self, name: str) -> None:
        self.name = name
        self.stmts: list[int | _Stmt | _FastRef] = []  # int: a final word
        self.labels: dict[str, int] = {}
        self.label_locs: dict[str, SourceLoc] = {}
        self.size = 0


class _Ctx:
    """Resolves assembler symbols: register names of the register database, label refs."""

    def __init__(self, db: RegDB) -> None:
        self.db = db

    def symbol(self, tok: Token) -> Any:
        kind, text = tok.kind, tok.text
        if kind == "CREG":
            return self._lookup(self.db.control_reg(text[1:]), "control register", tok)
        if kind == "SREG":
            return self._lookup(self.db.sqe_reg(text[1:]), "SQE register", tok)
        if kind == "PREG":
            return self._lookup(self.db.pipe_reg(text[1:]), "pipe register", tok)
        if kind == "LABELREF" and not text[1:].lstrip("-").isdigit():
            return LabelRef(text[1:], tok.loc)
        if kind == "IDENT":
            return self.db.gpu_reg(text)
        return None

    @staticmethod
    def _lookup(value: int | None, what: str, tok: Token) -> int:
        if value is None:
            raise AsmError(f"unknown {what} '{tok.text}'", tok.loc)
        return value


class Assembler:
    """Two passes: parse and lay out statements, then resolve labels and encode."""

    def __init__(self, gpu: str | int | None = None, fast: bool = True,
                 shapes: bool = True) -> None:
        self.fwid = parse_gpu(gpu) if gpu is not None else None
        self.fast = fast  # False: every line through the general path (for comparisons)
        self.shapes = shapes  # False: the fast path reads each line itself (comparisons)

    def assemble(self, text: str, filename: str = "<input>") -> bytes:
        # (the cyclic garbage collector off meanwhile: it would walk the growing tables
        # again and again, and assembling makes no cycles)
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._assemble(text, filename)
        finally:
            if collecting:
                gc.enable()

    def _assemble(self, text: str, filename: str) -> bytes:
        lines = text.splitlines()
        fwid = self.fwid if self.fwid is not None else self._fwid_from_source(lines, filename)
        gen = generation(fwid)
        isa = isa_for(gen)
        db = RegDB.for_variant(variant(fwid))
        ctx = _Ctx(db)
        self._filename, self._isa, self._ctx, self._gen = filename, isa, ctx, gen
        fast = FastLines(isa, db, LEXER, MODS) if self.fast else None
        if fast is not None:
            split, shapes = fast.split, fast.shapes
            self.last_shapes = shapes  # (for tests)
        sections = [_Section("")]
        # line -> its word, for lines that are one instruction whose operands are all
        # numbers (no label), or (form, values, target) for a line the fast path read that
        # branches to a label: firmware repeats many lines, each is parsed once
        memo: dict[str, Any] = {}
        sec = sections[0]
        for lineno, line in enumerate(lines, 1):
            word = memo.get(line)
            if word is not None:
                if word.__class__ is int:
                    sec.stmts.append(word)
                else:
                    sec.stmts.append(_FastRef(word[0], word[1], word[2], line, lineno))
                sec.size += 1
                continue
            if fast is not None:
                if not line:
                    continue
                if line[-1] == ":":  # a label, most likely
                    name = line[:-1].strip(" \t")
                    if name.isascii() and name.isidentifier() and name not in sec.labels:
                        sec.labels[name] = sec.size
                        col = len(line) - len(line.lstrip(" \t\r\f\v")) + 1
                        sec.label_locs[name] = SourceLoc(filename, lineno, col)
                        continue
                shape = split(line)
                operands = shape[2::3]
                del shape[2::3]
                reader = shapes.get(tuple(shape))
                if reader is not None:
                    word = reader[0]
                    if word is not None:  # (FastLines.shaped, inline)
                        for j, convert, low, width in reader[1]:
                            v = convert(operands[j])
                            if v is None or v >> width:
                                word = None
                                break
                            word |= v << low
                    else:
                        word = fast.shaped(reader, operands)
                    if word is not None:
                        if word.__class__ is int:
                            sec.stmts.append(word)
                        else:
                            sec.stmts.append(_FastRef(word[0], word[1], word[2], line, lineno))
                        memo[line] = word
                        sec.size += 1
                        continue
                elif self._fast_line(fast, line, lineno, sec, memo, shape, operands):
                    continue
            n_stmts, n_labels = len(sec.stmts), len(sec.labels)
            toks = LEXER.tokenize(line, filename, lineno)
            self._statement(toks, sections, isa, ctx, gen, filename, lineno, len(line))
            if sections[-1] is not sec:
                sec = sections[-1]
            elif len(sec.stmts) == n_stmts + 1 and len(sec.labels) == n_labels:
                st = sec.stmts[-1]
                assert isinstance(st, _Stmt)
                if st.ins is not None and all(type(v) is int for v in st.values.values()):
                    word = sec.stmts[-1] = self._encode(st, 0, sec)
                    memo[line] = word
        out = [0]
        for sec in sections:
            out.extend(self._emit(sec, isa, db, gen))
        return struct.pack(f"<{len(out)}I", *out)

    def _fast_line(self, fast: FastLines, line: str, lineno: int, sec: _Section,
                   memo: dict[str, Any], shape: list[str], operands: list[str]) -> bool:
        """Read ``line`` on the fast path (:mod:`isaforge.afuc.fastasm`) if it can: True if
        it did, False to leave it to the general path."""
        toks = fast.tokens(line)
        if toks is None:
            return False
        if not toks:
            return True  # blank, or only a comment
        first = toks[0]
        c = first[0]
        if c == "[":
            if first != "[":
                if len(toks) != 1:
                    return False
                word = memo[line] = int(first[1:-1], 16) & 0xFFFFFFFF
                sec.stmts.append(word)
            elif len(toks) == 3 and toks[1][0] == "#" and toks[2] == "]":  # [#label]
                at = line.find("#")
                ref = LabelRef(toks[1][1:], SourceLoc(self._filename, lineno, at + 1))
                at = line.find("[")
                sec.stmts.append(_Stmt(SourceLoc(self._filename, lineno, at + 1),
                                       literal_label=ref))
            else:
                return False
            sec.size += 1
            return True
        if first == ".jumptbl" and len(toks) == 1:
            at = line.find(".")
            sec.stmts.append(_Stmt(SourceLoc(self._filename, lineno, at + 1), jumptable=True))
            sec.size += 0x80
            return True
        if len(toks) > 1 and toks[1] == ":":
            if len(toks) != 2 or not (c.isalpha() or c == "_") or first in sec.labels:
                return False
            sec.labels[first] = sec.size
            col = len(line) - len(line.lstrip(" \t\r\f\v")) + 1
            sec.label_locs[first] = SourceLoc(self._filename, lineno, col)
            return True
        got = fast.statement(toks)
        if got is None:
            return False
        form, values, target = got
        if target is None:
            word = encode(form, values)
            if word is None:
                return False
            sec.stmts.append(word)
            memo[line] = word
        else:
            sec.stmts.append(_FastRef(form, values, target, line, lineno))
            memo[line] = got
        sec.size += 1
        if self.shapes:
            fast.learn(line, shape, operands, toks, got)
        return True

    # -- pass 1 -------------------------------------------------------------------------------
    @staticmethod
    def _fwid_from_source(lines: list[str], filename: str) -> int:
        for lineno, line in enumerate(lines, 1):
            # (a line that starts with [hex digits] -- as the regex \s*\[([0-9a-fA-F]+)\])
            if "[" not in line:
                continue
            rest = line.lstrip()
            end = rest.find("]")
            digits = rest[1:end]
            if rest[:1] == "[" and end > 1 and not digits.strip(_HEX_DIGITS):
                fwid = fwid_of(int(digits, 16))
                if fwid not in FIRMWARE_IDS:
                    raise AsmError(
                        f"the first literal [{digits}] has firmware id {fwid:03x}, which is "
                        "not a known GPU; say which GPU with --gpu (e.g. --gpu a630)",
                        SourceLoc(filename, lineno, len(line) - len(rest) + 1),
                    )
                return fwid
        raise FirmwareError("cannot tell the GPU generation: the source has no [version] "
                            "literal; say which GPU with --gpu (e.g. --gpu a630)")

    def _statement(self, toks: list[Token], sections: list[_Section], isa: ISA, ctx: _Ctx,
                   gen: int, filename: str, lineno: int, width: int) -> None:
        sec = sections[-1]
        end = SourceLoc(filename, lineno, width + 1)
        # leading labels
        while len(toks) >= 2 and toks[0].kind == "IDENT" and toks[1].text == ":":
            name = toks[0].text
            if name in sec.labels:
                raise AsmError(f"label '{name}' already defined at {sec.label_locs[name]}",
                               toks[0].loc)
            sec.labels[name] = sec.size
            sec.label_locs[name] = toks[0].loc
            toks = toks[2:]
        if not toks:
            return
        first = toks[0]
        if first.kind == "DIRECTIVE":
            self._directive(first, toks[1:], sections, isa, gen, end)
            return
        if first.kind == "LITERAL":
            if len(toks) > 1:
                raise AsmError(f"unexpected '{toks[1].text}' after a literal word", toks[1].loc)
            sec.stmts.append(_Stmt(first.loc, literal=int(first.text[1:-1], 16) & 0xFFFFFFFF))
            sec.size += 1
            return
        if first.text == "[":
            if len(toks) == 3 and toks[1].kind == "LABELREF" and toks[2].text == "]":
                ref = LabelRef(toks[1].text[1:], toks[1].loc)
                sec.stmts.append(_Stmt(first.loc, literal_label=ref))
                sec.size += 1
                return
            raise AsmError("expected [xxxxxxxx] (a hex word) or [#label]", first.loc)
        mnem_tok = next((t for t in toks if t.kind != "MOD"), None)
        if mnem_tok is None or mnem_tok.kind != "IDENT":
            bad = mnem_tok or toks[-1]
            raise AsmError(f"expected an instruction, a label or a directive, found "
                           f"'{bad.text}'", bad.loc)
        candidates = isa.by_mnemonic.get(mnem_tok.text)
        if not candidates:
            raise AsmError(f"unknown instruction '{mnem_tok.text}' for a{gen}xx", mnem_tok.loc)
        ts = TokenStream(toks, end)
        got = read_instruction(candidates, ts, ctx, LEXER)
        if got is None:
            raise ts.error()
        sec.stmts.append(_Stmt(first.loc, *got, locs=dict(ts.field_locs)))
        sec.size += 1

    def _directive(self, tok: Token, args: list[Token], sections: list[_Section], isa: ISA,
                   gen: int, end: SourceLoc) -> None:
        sec = sections[-1]
        name = tok.text
        if name == ".align":
            if len(args) != 1 or args[0].kind not in ("INT", "HEX"):
                raise AsmError(".align takes one number of bytes, a multiple of 4", tok.loc)
            n = int(args[0].text, 0)
            if n <= 0 or n % 4:
                raise AsmError(f".align {n}: the alignment must be a positive multiple of 4",
                               args[0].loc)
            self._align(sec, isa, n // 4, tok.loc)
        elif name == ".jumptbl":
            if args:
                raise AsmError(".jumptbl takes no operands", args[0].loc)
            sec.stmts.append(_Stmt(tok.loc, jumptable=True))
            sec.size += 0x80
        elif name == ".section":
            if len(args) != 1 or args[0].kind != "IDENT":
                raise AsmError(".section takes a name", args[0].loc if args else end)
            self._align(sec, isa, 8, tok.loc)
            sections.append(_Section(args[0].text))
        else:
            raise AsmError(f"unknown directive '{name}' (expected .align, .jumptbl or .section)",
                           tok.loc)

    @staticmethod
    def _align(sec: _Section, isa: ISA, words: int, loc: SourceLoc) -> None:
        nop = isa.find("nop")
        while sec.size % words:
            sec.stmts.append(_Stmt(loc, nop, {}, {}))
            sec.size += 1

    # -- pass 2 -------------------------------------------------------------------------------
    def _emit(self, sec: _Section, isa: ISA, db: RegDB, gen: int) -> list[int]:
        out: list[int] = []
        labels = sec.labels
        for st in sec.stmts:
            if type(st) is int:
                out.append(st)
                continue
            pc = len(out)
            if type(st) is _FastRef:
                name, label, relative = st.target
                target = labels.get(label)
                word = None
                if target is not None:
                    values = dict(st.values)
                    values[name] = target - pc if relative else target
                    word = encode(st.form, values)
                if word is None:  # the general path says what is wrong
                    word = self._encode(self._general(st.line, st.lineno), pc, sec)
                out.append(word)
                continue
            assert isinstance(st, _Stmt)
            if st.jumptable:
                out.extend(self._jumptable(sec, db))
            elif st.literal is not None:
                out.append(st.literal)
            elif st.literal_label is not None:
                target = evaluate(st.literal_label, sec.labels)
                out.append(nop_literal(target, gen))
            else:
                assert st.ins is not None
                out.append(self._encode(st, pc, sec))
        return out

    def _general(self, line: str, lineno: int) -> _Stmt:
        """``line`` (one instruction) read by the general path."""
        scratch = [_Section("")]
        toks = LEXER.tokenize(line, self._filename, lineno)
        self._statement(toks, scratch, self._isa, self._ctx, self._gen, self._filename,
                        lineno, len(line))
        st = scratch[0].stmts[-1]
        assert isinstance(st, _Stmt)
        return st

    @staticmethod
    def _encode(st: _Stmt, pc: int, sec: _Section) -> int:
        assert st.ins is not None
        vals: dict[str, int] = dict(st.implied)
        for name, v in st.values.items():
            f = st.ins.fields.get(name)
            if isinstance(v, BranchRef):
                if v.name not in sec.labels:
                    raise AsmError(f"undefined label '{v.name}'", v.loc)
                target = sec.labels[v.name]
                v = target - pc if v.relative else target
                if f is not None and f.const is not None:
                    if v != f.const:
                        raise AsmError(f"{st.ins.mnemonic} continues at the instruction "
                                       f"{f.const} after it, so its label must be there",
                                       st.loc)
                    continue
            else:
                v = evaluate(v, sec.labels)
            if f is not None and f.const is not None:
                continue
            vals[name] = v
        try:
            return st.ins.encode(vals)
        except EncodeError as e:
            raise AsmError(e.message, st.locs.get(e.field or "", st.loc)) from None

    @staticmethod
    def _jumptable(sec: _Section, db: RegDB) -> list[int]:
        table = [0] * 0x80
        for label, offset in sec.labels.items():
            pid = db.pm4_packet_id(label)
            if pid is None:
                if not (label.startswith("UNKN") and label[4:].isdecimal()):
                    continue
                pid = int(label[4:])
            if 0 <= pid < 0x80:
                table[pid] = offset
        return table


def assemble(text: str, gpu: str | int | None = None, filename: str = "<input>") -> bytes:
    """Assemble afuc source text to firmware bytes (with the leading zero dword)."""
    return Assembler(gpu).assemble(text, filename)
