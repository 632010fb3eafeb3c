"""The RV32 assembler: objdump-syntax text in, little-endian bytes out.

Accepted, one statement per line (``#`` starts a comment):

* every instruction of :mod:`.isa` in the syntax the disassembler prints, aliases included
  (``li a0,5``, ``mv``, ``ret``, ``beqz``, ``csrs 0x7c0,t1``, ``zext.h``, ``amoadd.w.aq``);
* labels ``name:`` (several may share a line, an instruction may follow); ``.`` is the
  address of the current statement;
* branch and jump targets: a label, an expression (an absolute address: ``j 0x3914``,
  ``beqz a0, .+8``), or objdump's own ``3914 <main+0x9c>`` (hex digits before ``<...>``);
* immediates: numbers, labels, ``+ - * << >> & | ^ ~`` (inside parentheses), ``%hi(x)`` and
  ``%lo(x)`` (the pair ``lui``/``addi`` use to build ``x``);
* pseudo-instructions: ``li`` with any 32-bit value (``addi``, or ``lui`` + ``addi``),
  ``la rd, x`` (``auipc`` + ``addi``), ``call x`` / ``tail x`` (``auipc`` + ``jalr``),
  ``bgt ble bgtu bleu sgt sgtu`` (operands swapped);
* directives: ``.word .half .short .byte`` (values, labels allowed), ``.ttinsn V`` (a Tensix
  instruction, ``V < 0xC0000000``), ``.insn 4, W`` (a raw word, as objdump prints data),
  ``.align N`` / ``.p2align N`` (to 2**N bytes) and ``.balign N`` (padding with ``nop``
  once word-aligned), ``.zero N`` / ``.space N``,
  ``.equ NAME, V`` / ``.set``, and ``.text .globl .global`` (ignored).

Errors are :class:`isaforge.core.errors.AsmError` with ``file:line:col``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core.asm import LabelRef, Lexer, Token, TokenStream, evaluate, read_instruction
from ..core.errors import AsmError, EncodeError, SourceLoc
from ..core.isa import Instr, Int, UInt
from ..core.tokens import parse_number_expr
from .isa import CSR_NUMBERS, REG_NUMBERS, HexImm, Target, rotl2, rv32_isa

LEXER = Lexer(
    [
        ("OP2", r"<<|>>"),
        ("ANNOT", r"<[^<>\s]+>"),
        ("HILO", r"%(?:hi|lo)\b"),
        ("NUM", r"0[xX][0-9a-fA-F]+|\d[0-9a-fA-F]*"),
        ("IDENT", r"[A-Za-z_.$][A-Za-z0-9_.$]*"),
        ("OP", r"[,()+\-*&|^~:]"),
    ],
    comment="#",
)

_HEX = re.compile(r"[0-9a-fA-F]+")
_IGNORED = {".text", ".globl", ".global"}


@dataclass(frozen=True)
class Abs:
    """A branch target written as an address (made pc-relative when encoded)."""

    expr: Any


@dataclass(frozen=True)
class HiLo:
    """``%hi(expr)`` or ``%lo(expr)``."""

    part: str
    expr: Any


def hi20(value: int) -> int:
    """The ``lui`` immediate that, with :func:`lo12` added, makes ``value``."""
    return ((value + 0x800) >> 12) & 0xFFFFF


def lo12(value: int) -> int:
    """The signed low 12 bits (``addi``'s part of ``value``)."""
    return ((value & 0xFFF) ^ 0x800) - 0x800


class _Ctx:
    """Symbols for operand parsing: labels, ``.``, ``%hi``/``%lo``, objdump targets."""

    def symbol(self, tok: Token) -> Any:
        if tok.kind == "IDENT" and tok.text not in REG_NUMBERS and tok.text not in CSR_NUMBERS:
            return LabelRef(tok.text, tok.loc)
        return None

    def immediate(self, ts: TokenStream) -> Any:
        tok = ts.peek()
        if tok is not None and tok.kind == "HILO":
            start = ts.pos
            ts.next()
            if ts.peek() is None or ts.peek().text != "(":  # type: ignore[union-attr]
                ts.expected("'('")
                ts.pos = start
                return None
            ts.next()
            inner = parse_number_expr(ts, self, full=True)
            if inner is None or ts.peek() is None or ts.peek().text != ")":  # type: ignore
                ts.expected("')'")
                ts.pos = start
                return None
            ts.next()
            return HiLo(tok.text[1:], inner)
        return parse_number_expr(ts, self)

    def target(self, ts: TokenStream) -> Any:
        tok, nxt = ts.peek(), ts.peek(1)
        if tok is not None and nxt is not None and nxt.kind == "ANNOT" and _HEX.fullmatch(
                tok.text):
            ts.next()
            ts.next()
            return Abs(int(tok.text, 16))
        expr = parse_number_expr(ts, self)
        if expr is None:
            return None
        if ts.peek() is not None and ts.peek().kind == "ANNOT":  # type: ignore[union-attr]
            ts.next()
        return Abs(expr)


@dataclass
class _Stmt:
    loc: SourceLoc
    address: int
    size: int
    ins: Instr | None = None  # an instruction
    values: dict[str, Any] = field(default_factory=dict)
    implied: dict[str, int] = field(default_factory=dict)
    locs: dict[str, SourceLoc] = field(default_factory=dict)
    data: list[tuple[int, Any, SourceLoc]] = field(default_factory=list)  # (bytes, expr, loc)
    macro: str = ""  # li / la / call / tail
    args: dict[str, Any] = field(default_factory=dict)
    fill_nops: bool = False


# pseudo-instructions that swap operands: (real instruction, kinds)
_SWAPPED = {"bgt": "blt", "ble": "bge", "bgtu": "bltu", "bleu": "bgeu", "sgt": "slt",
            "sgtu": "sltu"}


class Assembler:
    """Two passes: lay out statements and labels, then resolve and encode."""

    def __init__(self) -> None:
        self.isa = rv32_isa()
        self.ctx = _Ctx()
        self.labels: dict[str, int] = {}

    def assemble(self, text: str, address: int = 0, filename: str = "<input>") -> bytes:
        """Assemble ``text`` whose first byte sits at ``address``; labels end in
        :attr:`labels`."""
        self.labels = {}
        self.label_locs: dict[str, SourceLoc] = {}
        stmts: list[_Stmt] = []
        pc = address
        for lineno, line in enumerate(text.splitlines(), 1):
            toks = LEXER.tokenize(line, filename, lineno)
            end = SourceLoc(filename, lineno, len(line) + 1)
            for st in self._statement(toks, pc, end):
                stmts.append(st)
                pc = st.address + st.size
        out = bytearray(pc - address)
        for st in stmts:
            blob = self._emit(st)
            out[st.address - address:st.address - address + len(blob)] = blob
        return bytes(out)

    # -- pass 1 -------------------------------------------------------------------------------
    def _statement(self, toks: list[Token], pc: int, end: SourceLoc) -> list[_Stmt]:
        i = 0
        while i + 1 < len(toks) and toks[i].kind == "IDENT" and toks[i + 1].text == ":":
            name = toks[i].text
            if name in self.labels:
                raise AsmError(f"label '{name}' is defined twice (first at "
                               f"{self.label_locs[name]})", toks[i].loc)
            if name in REG_NUMBERS:
                raise AsmError(f"'{name}' is a register name, not a label", toks[i].loc)
            self.labels[name] = pc
            self.label_locs[name] = toks[i].loc
            i += 2
        toks = toks[i:]
        if not toks:
            return []
        head = toks[0]
        if head.kind == "IDENT" and head.text.startswith("."):  # .ttinsn included
            return self._directive(head, toks[1:], pc, end)
        if head.kind != "IDENT":
            raise AsmError(f"expected an instruction, a label or a directive, found "
                           f"'{head.text}'", head.loc)
        ts = TokenStream(toks, end)
        mn = head.text
        if mn in ("li", "la", "call", "tail"):
            return [self._macro(mn, ts, pc)]
        if mn in _SWAPPED:
            return [self._swapped(mn, ts, pc)]
        candidates = self.isa.by_mnemonic.get(mn)
        if not candidates:
            raise AsmError(f"unknown instruction '{mn}'", head.loc)
        got = read_instruction(candidates, ts, self.ctx, LEXER)
        if got is None:
            raise ts.error()
        ins, values, implied = got
        return [_Stmt(head.loc, pc, 4, ins, values, implied, dict(ts.field_locs))]

    def _operands(self, ts: TokenStream, kinds: list[str]) -> list[Any] | None:
        """Read ``mnemonic op, op, ...``: kinds are 'reg', 'imm', 'target'."""
        ts.next()  # the mnemonic
        out = []
        for n, kind in enumerate(kinds):
            if n:
                tok = ts.peek()
                if tok is None or tok.text != ",":
                    ts.expected("','")
                    return None
                ts.next()
            tok = ts.peek()
            if kind == "reg":
                v = REG_NUMBERS.get(tok.text) if tok is not None else None
                if v is None:
                    ts.expected("a register")
                    return None
                ts.next()
            elif kind == "target":
                v = self.ctx.target(ts)
            else:
                v = self.ctx.immediate(ts)
            if v is None:
                return None
            out.append((v, tok.loc if tok is not None else ts.end_loc))
        if not ts.at_end():
            ts.expected("end of statement")
            return None
        return out

    def _macro(self, mn: str, ts: TokenStream, pc: int) -> _Stmt:
        kinds = {"li": ["reg", "imm"], "la": ["reg", "imm"], "call": ["imm"],
                 "tail": ["imm"]}[mn]
        ops = self._operands(ts, kinds)
        if ops is None:
            raise ts.error()
        loc = ts.tokens[0].loc
        args = {f"op{n}": v for n, (v, _) in enumerate(ops)}
        locs = {f"op{n}": lc for n, (_, lc) in enumerate(ops)}
        size = 8
        if mn == "li" and isinstance(args["op1"], int):
            v = args["op1"]
            if not -(1 << 31) <= v < (1 << 32):
                raise AsmError(f"li: {v:#x} does not fit 32 bits", locs["op1"])
            sv = ((v & 0xFFFFFFFF) ^ 0x80000000) - 0x80000000
            size = 4 if -2048 <= sv < 2048 or lo12(sv) == 0 else 8
        return _Stmt(loc, pc, size, macro=mn, args=args, locs=locs)

    def _swapped(self, mn: str, ts: TokenStream, pc: int) -> _Stmt:
        real = self.isa.find(_SWAPPED[mn])
        branch = "TARGET" in real.fields
        ops = self._operands(ts, ["reg", "reg", "target"] if branch else ["reg", "reg", "reg"])
        if ops is None:
            raise ts.error()
        (a, la), (b, lb), (c, lc) = ops
        if branch:  # bgt a, b, t == blt b, a, t
            values, locs = {"RS1": b, "RS2": a, "TARGET": c}, {"TARGET": lc}
        else:  # sgt d, a, b == slt d, b, a
            values, locs = {"RD": a, "RS1": c, "RS2": b}, {}
        return _Stmt(ts.tokens[0].loc, pc, 4, real, values, {}, locs)

    def _directive(self, head: Token, args: list[Token], pc: int, end: SourceLoc) -> list[_Stmt]:
        name = head.text
        if name in _IGNORED:
            return []
        ts = TokenStream(args, end)
        if name in (".word", ".half", ".short", ".byte", ".ttinsn"):
            width = {".word": 4, ".half": 2, ".short": 2, ".byte": 1, ".ttinsn": 4}[name]
            tag = -1 if name == ".ttinsn" else width  # -1: rotate, it is an instruction
            items = self._expr_list(ts)
            return [_Stmt(head.loc, pc, width * len(items),
                          data=[(tag, e, lc) for e, lc in items])]
        if name == ".insn":  # objdump's form of a word that is no instruction: .insn 4, 0x...
            items = self._expr_list(ts)
            if len(items) != 2 or items[0][0] != 4:
                raise AsmError(".insn takes a length and a word: .insn 4, 0x12345678",
                               args[0].loc if args else end)
            return [_Stmt(head.loc, pc, 4, data=[(4, items[1][0], items[1][1])])]
        if name in (".align", ".p2align", ".balign", ".zero", ".space"):
            n = self._constant(ts, head)
            if name in (".zero", ".space"):
                if n < 0:
                    raise AsmError(f"{name} {n}: the size must not be negative", args[0].loc)
                return [_Stmt(head.loc, pc, n)]
            align = n if name == ".balign" else 1 << n
            if align <= 0 or align & (align - 1) or align > 1 << 16:
                raise AsmError(f"{name} {n}: the alignment must be a power of two "
                               f"(at most 2**16 bytes)", args[0].loc)
            pad = -pc % align
            return [_Stmt(head.loc, pc, pad, fill_nops=True)] if pad else []
        if name in (".equ", ".set"):
            if len(args) < 3 or args[0].kind != "IDENT" or args[1].text != ",":
                raise AsmError(f"{name} takes a name and a value: {name} NAME, VALUE",
                               args[0].loc if args else end)
            ts.pos = 2
            value = self._constant(ts, head)
            self.labels[args[0].text] = value
            self.label_locs[args[0].text] = args[0].loc
            return []
        raise AsmError(f"unknown directive '{name}' (expected .word, .half, .byte, .ttinsn, "
                       f".insn, .align, .p2align, .balign, .zero, .space, .equ or .set)",
                       head.loc)

    def _expr_list(self, ts: TokenStream) -> list[tuple[Any, SourceLoc]]:
        items: list[tuple[Any, SourceLoc]] = []
        while True:
            tok = ts.peek()
            e = parse_number_expr(ts, self.ctx, full=True)
            if e is None:
                raise ts.error()
            items.append((e, tok.loc if tok is not None else ts.end_loc))
            if ts.at_end():
                return items
            if ts.peek().text != ",":  # type: ignore[union-attr]
                ts.expected("','")
                raise ts.error()
            ts.next()

    def _constant(self, ts: TokenStream, head: Token) -> int:
        e = parse_number_expr(ts, self.ctx, full=True)
        if e is None:
            raise ts.error()
        if not ts.at_end():
            ts.expected("end of statement")
            raise ts.error()
        return evaluate(e, self.labels)

    # -- pass 2 -------------------------------------------------------------------------------
    def _value(self, expr: Any, pc: int) -> int:
        labels = {**self.labels, ".": pc}
        if isinstance(expr, HiLo):
            v = evaluate(expr.expr, labels)
            return hi20(v) if expr.part == "hi" else lo12(v)
        if isinstance(expr, Abs):
            return evaluate(expr.expr, labels)
        return evaluate(expr, labels)

    def _emit(self, st: _Stmt) -> bytes:
        if st.ins is not None:
            return self._encode(st.ins, st.values, st.implied, st.locs, st.loc,
                                st.address).to_bytes(4, "little")
        if st.macro:
            return b"".join(w.to_bytes(4, "little") for w in self._expand(st))
        if st.data:
            out = bytearray()
            for width, expr, loc in st.data:
                v = self._value(expr, st.address + len(out))
                if width == -1:
                    if not 0 <= v < 0xC0000000:
                        raise AsmError(f".ttinsn {v:#x}: a Tensix instruction is below "
                                       f"0xc0000000", loc)
                    out += rotl2(v).to_bytes(4, "little")
                    continue
                if not -(1 << (8 * width - 1)) <= v < (1 << (8 * width)):
                    raise AsmError(f"{v:#x} does not fit {width} byte(s)", loc)
                out += (v & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
            return bytes(out)
        if st.fill_nops:
            zeros = -st.address % 4
            nops = (st.size - zeros) // 4
            return bytes(zeros) + (0x00000013).to_bytes(4, "little") * nops
        return bytes(st.size)

    def _encode(self, ins: Instr, values: dict[str, Any], implied: dict[str, int],
                locs: dict[str, SourceLoc], loc: SourceLoc, pc: int) -> int:
        vals = dict(implied)
        for name, expr in values.items():
            f = ins.all_fields[name]
            v = self._value(expr, pc)
            at = locs.get(name, loc)
            if isinstance(f.kind, Target):
                v = ((v - pc + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)  # modulo 2**32
                if v & 1:
                    raise AsmError(f"{ins.mnemonic}: target {(v + pc) & 0xFFFFFFFF:#x} is odd",
                                   at)
                lim = 1 << (f.width - 1)
                if not -lim <= v < lim:
                    raise AsmError(f"{ins.mnemonic}: target {(v + pc) & 0xFFFFFFFF:#x} is out "
                                   f"of reach ({v:+d} bytes; the limit is +-{lim})", at)
            elif isinstance(f.kind, Int):
                lim = 1 << (f.width - 1)
                if not -lim <= v < lim:
                    raise AsmError(f"{ins.mnemonic}: {v} does not fit the signed {f.width}-bit "
                                   f"immediate ({-lim}..{lim - 1})", at)
            elif isinstance(f.kind, (HexImm, UInt)) or name == "CSR":
                if not 0 <= v < (1 << f.width):
                    raise AsmError(f"{ins.mnemonic}: {v:#x} does not fit the {f.width}-bit "
                                   f"field (0..{(1 << f.width) - 1:#x})", at)
            vals[name] = v
        try:
            return ins.encode(vals)
        except EncodeError as e:
            raise AsmError(e.message, locs.get(e.field or "", loc)) from None

    def _expand(self, st: _Stmt) -> list[int]:
        isa, pc, a = self.isa, st.address, st.args
        find = isa.find
        if st.macro == "li":
            rd, v = a["op0"], self._value(a["op1"], pc)
            if not -(1 << 31) <= v < (1 << 32):
                raise AsmError(f"li: {v:#x} does not fit 32 bits", st.locs["op1"])
            v &= 0xFFFFFFFF
            lo, hi = lo12(v), hi20(v)
            if st.size == 4 and -2048 <= (v ^ 0x80000000) - 0x80000000 < 2048:
                return [find("addi").encode({"RD": rd, "RS1": 0, "IMM": lo & 0xFFF})]
            words = [find("lui").encode({"RD": rd, "IMM": hi})]
            if st.size == 8:
                words.append(find("addi").encode({"RD": rd, "RS1": rd, "IMM": lo & 0xFFF}))
            return words
        if st.macro == "la":
            rd, off = a["op0"], (self._value(a["op1"], pc) - pc) & 0xFFFFFFFF
            return [find("auipc").encode({"RD": rd, "IMM": hi20(off)}),
                    find("addi").encode({"RD": rd, "RS1": rd, "IMM": lo12(off) & 0xFFF})]
        off = (self._value(a["op0"], pc) - pc) & 0xFFFFFFFF
        link, tmp = (1, 1) if st.macro == "call" else (0, 6)  # tail uses t1
        return [find("auipc").encode({"RD": tmp, "IMM": hi20(off)}),
                find("jalr").encode({"RD": link, "RS1": tmp, "IMM": lo12(off) & 0xFFF})]


def assemble(text: str, address: int = 0, filename: str = "<input>") -> bytes:
    """Assemble RV32 source whose first byte sits at ``address``."""
    return Assembler().assemble(text, address, filename)


__all__ = ["Assembler", "assemble", "hi20", "lo12"]
