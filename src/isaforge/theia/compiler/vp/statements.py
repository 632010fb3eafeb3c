"""VP statements: the dispatch, and assignments (``=``, ``+=``, ``-=``, ``++``, ``--``, to
variables, registers, ``out[...]``), with the upstream compiler's retargeting of the last
expression instruction."""

from __future__ import annotations

from ..lexer import Token
from ..literals import hex_value
from ..operands import (
    NULL,
    R0_OFFSET,
    R0_PLAIN,
    R0_XXX,
    YYY,
    Lhs,
    Val,
    dest_of_lhs,
    dest_of_val,
    src_reg,
)
from ..vpinstr import (
    ADD,
    IO,
    IO_OMWRITE,
    IO_TMREAD,
    NOP,
    WE_XYZ,
    WE_Z,
    VpInstr,
)
from .base import VpBase


class VpStatements(VpBase):
    """Statements and assignments."""

    def statement(self) -> None:
        tok = self.peek()
        k = tok.kind
        if k == "vector":
            self.declaration()
        elif k == "using":
            self.next()
            self.expect("fixed_point_arithmetic", "'fixed_point_arithmetic'")
            self.expect(";", "';'")
            self.fixed_point = True
        elif k == "exit":
            self.next()
            self.expect(";", "';'")
            nop = VpInstr(comment="NOP")
            nop.set_code(NOP)
            self.emit(nop)
            ins = VpInstr(comment="Set the Exit bit")
            ins.set_eof()
            ins.set_code(ADD)
            self.emit(ins)
        elif k == "return":
            self.return_statement()
        elif k == "while":
            self.while_statement()
        elif k == "if":
            self.if_statement()
        elif k == "function":
            self.function()
        elif k == "thread":
            self.thread()
        elif k == "start":
            self.start_thread()
        elif k == "ID" and tok.text == "for" and self.peek(1).kind == "(":
            self.for_statement()
        elif k == "ID" and self.peek(1).kind == "(":
            name = self.next()
            args = self.call_arguments()
            end = self.expect(";", "';'")
            self.call(name, args, end)
        elif k in ("ID", "REG", "out"):
            self.simple_statement(";")
        elif k == ";":  # an empty statement (e.g. a #define value ending in ';')
            self.next()
        elif k in ("*", "&"):
            raise self.pointer_error(tok, "a statement")
        else:
            raise self.unexpected("a statement", tok)

    def lhs(self) -> Lhs:
        tok = self.next()
        if tok.kind == "out":
            self.expect("[", "'['")
            if self.at("ID"):
                name = self.next()
                self.expect("]", "']'")
                if name.text in self.params:
                    return Lhs("outidx", addr=Val("reg", reg=self.params[name.text]), tok=tok)
                return Lhs("outidx", addr=Val("reg", reg=self.var(name), off=True), tok=tok)
            text = self.constant()
            self.expect("]", "']'")
            return Lhs("out", text=text, tok=tok)
        if tok.kind == "REG":
            reg = self.reg_token(tok)
            we = self.write_mask(tok, allow_n=True) if self.at(".") else WE_XYZ
            return Lhs("reg", reg=reg, we=we, tok=tok)
        if tok.kind != "ID":
            raise self.error(f"expected a variable, found '{tok.text}'", tok)
        if self.at("."):
            we = self.write_mask(tok, allow_n=False)
            if tok.text in self.params:
                return Lhs("reg", reg=self.params[tok.text], we=we, tok=tok)
            return Lhs("reg", reg=self.var(tok), off=True, we=we, tok=tok)
        index = self.array_index()
        if tok.text in self.params:
            return Lhs("reg", reg=self.params[tok.text], tok=tok)
        return Lhs("reg", reg=self.var(tok), off=True, index=index, tok=tok)

    def simple_statement(self, terminator: str) -> None:
        """``lhs = expr``, ``lhs = f(...)``, ``lhs += c``, ``lhs -= c``, ``lhs++``, ``lhs--``."""
        lhs = self.lhs()
        tok = self.peek()
        if tok.kind == "+=":
            self.next()
            value = hex_value(self.constant())
            end = self.expect(terminator, f"'{terminator}'")
            self.add_immediate(lhs, value, end)
        elif tok.kind == "-" and self.peek(1).kind == "=":
            self.next()
            self.next()
            value = hex_value(self.constant())
            end = self.expect(terminator, f"'{terminator}'")
            self.add_immediate(lhs, -value, end)
        elif tok.kind in ("+", "-") and self.peek(1).kind == tok.kind:
            self.next()
            self.next()
            end = self.expect(terminator, f"'{terminator}'")
            self.increment(lhs, tok.kind == "-", end)
        elif tok.kind == "=":
            self.next()
            if self.at("ID") and self.peek(1).kind == "(":
                name = self.next()
                args = self.call_arguments()
                end = self.expect(terminator, f"'{terminator}'")
                self.call(name, args, end, lhs)
                return
            val = self.expression()
            end = self.expect(terminator, f"'{terminator}'")
            self.assign(lhs, val, end)
        else:
            raise self.unexpected("'=', '+=', '++' or '--'", tok)

    def _plain_target(self, lhs: Lhs) -> None:
        if lhs.kind != "reg":
            raise self.error("out[...] can only be assigned with '='", lhs.tok)

    def add_immediate(self, lhs: Lhs, value: int, end: Token) -> None:
        self._plain_target(lhs)
        ins = VpInstr(line=end.line)
        ins.set_code(ADD)
        self.dest_from_lhs(lhs, ins, True)
        ins.set_imm(value)
        ins.dest_zero(False)
        self.emit(ins)

    def increment(self, lhs: Lhs, down: bool, end: Token) -> None:
        self._plain_target(lhs)
        ins = VpInstr(line=end.line)
        ins.set_code(ADD)
        self.dest_from_lhs(lhs, ins, False)
        if down:
            ins.set_signs(0)
        if lhs.off:
            ins.src1_displaced(True)
        ins.set_src_addr(1, lhs.reg)
        ins.set_src_addr(0, 0)
        ins.set_swizzle(0, YYY)
        self.emit(ins)

    def assign(self, lhs: Lhs, val: Val, end: Token) -> None:
        try:
            self._assign(lhs, val, end)
        finally:
            self.inserted = 0

    def _assign(self, lhs: Lhs, val: Val, end: Token) -> None:
        if val.kind == "in":
            if lhs.kind != "reg":
                raise self.error("in[...] must be assigned to a variable or register", lhs.tok)
            ins = VpInstr()
            ins.dest_zero(True)
            ins.set_we(WE_XYZ)
            self.sources(Val("reg", reg=val.reg, off=val.off), R0_PLAIN, ins)
            self.dest_from_lhs(lhs, ins, False)
            ins.line = end.line
            ins.set_code(IO)
            ins.set_scale(IO_TMREAD)
            self.emit(ins)
            self.reset_temps()
            return
        if lhs.kind == "out":
            ins = VpInstr()
            ins.set_code(IO)
            ins.set_scale(IO_OMWRITE)
            self.populate(dest_of_val(val), R0_OFFSET, R0_OFFSET, ins, end,
                          literal=hex_value(lhs.text))
            self.emit(ins)
            self.reset_temps()
            return
        if lhs.kind == "outidx":
            assert lhs.addr is not None
            ins = VpInstr()
            ins.dest_zero(True)
            ins.set_we(WE_XYZ)
            self.sources(lhs.addr, val, ins)
            ins.set_code(IO)
            ins.set_scale(IO_OMWRITE)
            self.emit(ins)
            self.reset_temps()
            return
        if self.inserted == 0:
            if val.kind == "reg" and val.elem is not None:
                self.warn(lhs.tok or end, "the array index is ignored (this reads the first "
                                          "element), as upstream compiles it")
            ins = VpInstr(line=end.line)
            ins.set_code(ADD)
            if val.is_reg:
                self.populate(dest_of_lhs(lhs), R0_XXX, val, ins, end)
            else:
                self.dest_from_lhs(lhs, ins, True)
                self.populate(dest_of_lhs(lhs), val, NULL, ins, end, literal=hex_value(val.text))
            self.emit(ins)
            self.reset_temps()
            return
        last = self.code[-1]
        if last.triple:
            for ins in self.code[-3:]:
                ins.set_dest(lhs.reg)
            self.code[-3].line = end.line
            if not lhs.off:
                for ins in self.code[-3:]:
                    ins.addressing(True, False, False)
            self.reset_temps()
            return
        if val.kind == "reg" and val.elem is not None:
            self.index_register(val.elem)
            ins = VpInstr()
            if lhs.index is not None:
                ins.set_imm(0)
                ins.set_code(ADD)
            elif lhs.off:
                ins.dest_zero(True)
            ins.clear_we()
            ins.set_we(lhs.we)
            ins.set_dest(lhs.reg)
            ins.set_code(ADD)
            ins.set_imm_bit(True)
            ins.dest_zero(True)
            ins.src1_displaced(True)
            ins.src0_displaced(False)
            ins.line = end.line
            ins.set_src_addr(1, val.reg)
            ins.set_src_addr(0, 0)
            self.emit(ins)
            return
        first = len(self.code) - self.inserted
        if 0 <= first < len(self.code):
            self.code[first].line = end.line
        self.inserted = 0
        if last.op >> 9 & 1 and lhs.index is None:
            self.warn(lhs.tok or end, "this assignment emits no instruction: as upstream does, "
                                      "it retargets the preceding branch (an expression in a "
                                      "condition or call argument left its count behind)")
        if lhs.index is not None:
            ins = VpInstr()
            ins.set_imm(0)
            ins.set_code(ADD)
            ins.clear_we()
            ins.set_we(lhs.we)
            if val.off and val.kind != "const":
                ins.src0_displaced(True)
            ins.set_src_addr(1, lhs.index)
            ins.set_src_addr(0, src_reg(val))
            ins.dest_zero(False)
            ins.src1_displaced(True)
            ins.src0_displaced(True)
            ins.set_dest(lhs.reg)
            self.emit(ins)
        else:
            if last.imm:
                if not lhs.off:
                    last.dest_zero(True)
                    last.src1_displaced(False)
                    last.src0_displaced(False)
                last.clear_we()
                last.set_we(WE_Z)
            else:
                last.dest_zero(lhs.off)
            last.clear_we()
            last.set_we(lhs.we)
            last.set_dest(lhs.reg)
            for i in range(1, self.extra_dest + 1):
                ins = self.code[len(self.code) - 1 - i]
                ins.set_dest(lhs.reg)
                if ins.imm:
                    ins.addressing(True, False, False)
            self.extra_dest = 0
        self.reset_temps()
