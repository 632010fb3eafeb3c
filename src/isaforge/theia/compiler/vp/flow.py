"""VP control flow: conditions (the flags of ``left - right``), ``while``, ``for``, ``if``/``else``,
function calls and returns, thread starts."""

from __future__ import annotations

from ..lexer import Token
from ..literals import hex_value
from ..operands import (
    NULL,
    R0_XXX,
    XXX,
    Dest,
    Lhs,
    Val,
)
from ..vpinstr import (
    ADD,
    ALWAYS,
    CONTROL_REG0,
    FRAME_REG,
    RETURN_ADDRESS_REG,
    RETURN_VALUE_REG,
    WE_X,
    WE_XYZ,
    WE_Y,
    WE_Z,
    VpInstr,
)
from .base import (
    CONDITIONS,
    PARAM_START,
    VpBase,
)


class VpFlow(VpBase):
    """Conditions, loops, calls and returns."""

    def condition(self) -> None:
        self.expect("(", "'('")
        left, op, right = self.comparison(CONDITIONS)
        close = self.expect(")", "')'")
        for v in (left, right):
            if v.kind == "in":
                raise self.error("in[...] cannot be compared directly", op)
        self.boolean(CONDITIONS[op.kind], left, right, close)

    def boolean(self, btype: int, s1: Val, s0: Val, where: Token) -> None:
        if s1.kind == "const":
            self.warn(where, f"the constant 0x{s1.text} on the left of a comparison becomes a "
                             "corrupted immediate, as upstream compiles it; put it on the right")
        ins = VpInstr()
        if s0.kind == "const":
            ins.line = where.line
            ins.set_code(ADD)
            temp = self.free_temp(where)
            ins.set_dest(temp)
            ins.set_imm(hex_value(s0.text))
            ins.dest_zero(True)
            ins.src0_displaced(True)
            ins.set_we(WE_XYZ)
            self.emit(ins)
            ins = VpInstr()
            s0 = Val("reg", reg=temp, off=True)
        else:
            ins.line = where.line
        ins.set_code(ADD)
        ins.set_signs(0)
        ins.set_branch(btype)
        ins.clear_we()
        self.sources(s1, s0, ins)
        self.emit(ins)
        self.branches.append(len(self.code) - 1)
        self.reset_temps()

    def condition_until(self, terminator: str) -> None:
        left, op, right = self.comparison(CONDITIONS)
        end = self.expect(terminator, f"'{terminator}'")
        self.boolean(CONDITIONS[op.kind], left, right, end)

    def jump(self, target: int, comment: str = "") -> VpInstr:
        ins = VpInstr(comment=comment)
        ins.set_code(ADD)
        ins.set_dest(target)
        ins.set_branch(ALWAYS)
        return self.emit(ins)

    def while_statement(self) -> None:
        tok = self.next()
        start = self.while_addr = len(self.code)
        self.condition()
        self.block()
        self.code[self.branches.pop()].set_dest(len(self.code) + 1)
        if self.while_addr != start:
            self.warn(tok, f"this loop jumps back to instruction {self.while_addr} (the start of "
                           "the last loop nested in it), as upstream compiles nested loops; "
                           "use for (...) for the outer loop")
        self.jump(self.while_addr, "while loop goto re-eval boolean")

    def for_statement(self) -> None:
        self.next()
        self.expect("(", "'('")
        self.simple_statement(";")
        start = len(self.code)
        self.condition_until(";")
        step_from, depth = self.pos, 0
        while not (self.at(")") and depth == 0):
            if self.at("EOF"):
                raise self.error("expected ')' closing the for loop")
            depth += {"(": 1, ")": -1}.get(self.peek().kind, 0)
            self.next()
        step = self.toks[step_from:self.pos]
        close = self.next()
        self.block()
        # the step statement goes after the body: parse its tokens now
        saved = self.toks, self.pos
        end = Token(";", ";", close.line, close.col)
        self.toks, self.pos = [*step, end, Token("EOF", "", close.line, close.col)], 0
        try:
            self.simple_statement(";")
            while self.at(";"):  # the manual's "for ( ...; i.x++;)"
                self.next()
            if not self.at("EOF"):
                raise self.error(f"expected ')' after the for step, found '{self.peek().text}'")
        finally:
            self.toks, self.pos = saved
        self.code[self.branches.pop()].set_dest(len(self.code) + 1)
        self.jump(start, "for loop goto re-eval boolean")

    def if_statement(self) -> None:
        self.next()
        self.condition()
        self.block()
        if self.at("else"):
            self.next()
            jump = VpInstr()
            jump.set_code(ADD)
            jump.set_branch(ALWAYS)
            self.emit(jump)
            self.code[self.branches.pop()].set_dest(len(self.code))
            self.branches.append(len(self.code) - 1)
            self.block()
        self.code[self.branches.pop()].set_dest(len(self.code))

    def start_thread(self) -> None:
        self.next()
        name = self.expect("ID", "a thread name")
        self.expect("(", "'('")
        self.expect(")", "')'")
        self.expect(";", "';'")
        # a thread defined further down (the manual's Figure 25) is an extension: upstream
        # needs the definition first; the two immediates are patched at the end
        offset = self.threads.get(name.text, 0)
        if name.text not in self.threads:
            self.thread_starts.append((len(self.code), name))
        for value in (offset << 1, offset << 1 | 1):
            ins = VpInstr()
            ins.set_code(ADD)
            ins.set_dest(CONTROL_REG0)
            ins.set_imm(value)
            ins.dest_zero(True)
            ins.set_we(WE_Z)
            self.emit(ins)
        self.thread_offset(len(self.code) - 2, offset)

    def call_arguments(self) -> list[tuple[Val, Token]]:
        self.expect("(", "'('")
        args: list[tuple[Val, Token]] = []
        if not self.at(")"):
            while True:
                tok = self.peek()
                val = self.expression()
                if val.kind == "in":
                    raise self.error("in[...] cannot be passed as an argument", tok)
                args.append((val, tok))
                if not self.at(","):
                    break
                self.next()
        self.expect(")", "')'")
        return args

    def call(self, name: Token, args: list[tuple[Val, Token]], end: Token,
             lhs: Lhs | None = None) -> None:
        for val, tok in reversed(args):
            self.pass_argument(val, tok)
        ins = VpInstr(comment="store return address**", line=end.line)
        ins.set_code(ADD)
        ins.set_imm(len(self.code) + 4)
        ins.set_we(WE_X)
        ins.set_dest(RETURN_ADDRESS_REG)
        ins.dest_zero(True)
        self.emit(ins)
        ins = VpInstr(comment="store current frame offset")
        ins.set_code(ADD)
        ins.set_we(WE_Y)
        ins.set_dest(FRAME_REG)
        ins.set_src_addr(1, FRAME_REG)
        ins.set_swizzle(1, XXX)
        ins.set_src_addr(0, 0)
        ins.set_swizzle(0, XXX)
        self.emit(ins)
        ins = VpInstr(comment="displace next frame offset by the number of auto variables in "
                              "current frame")
        ins.set_code(ADD)
        ins.set_we(WE_X)
        ins.set_dest(FRAME_REG)
        ins.set_imm(len(self.autovars))
        ins.dest_zero(False)
        self.emit(ins)
        ins = VpInstr(comment="call the function")
        ins.set_code(ADD)
        ins.set_branch(ALWAYS)
        if name.text in self.symbols:
            ins.set_dest(self.symbols[name.text])
        else:
            ins.symbol = name.text
            ins.symbol_loc = self.loc(name)
        self.emit(ins)
        if lhs is None:
            return
        if lhs.kind != "reg":
            raise self.error("a function result can only be assigned to a variable", lhs.tok)
        ins = VpInstr(comment="grab the return value from the function")
        ins.set_code(ADD)
        self.dest_from_lhs(lhs, ins, False)
        ins.set_src_addr(1, RETURN_VALUE_REG)
        ins.set_src_addr(0, 0)
        ins.set_swizzle(0, XXX)
        self.emit(ins)
        self.param_index = PARAM_START

    def pass_argument(self, val: Val, tok: Token) -> None:
        reg = self.param_index
        self.param_index += 1
        ins = VpInstr(comment="copy the value into function parameter register")
        ins.set_code(ADD)
        ins.set_we(WE_XYZ)
        ins.set_dest(reg)
        if val.kind == "const":
            # upstream looks the constant's hex digits up as a variable name
            if val.text in self.params:
                ins.set_src_addr(1, self.params[val.text])
            elif val.text in self.autovars:
                ins.set_src_addr(1, self.autovars[val.text])
                ins.src1_displaced(True)
            else:
                raise self.error(f"undefined variable '{val.text}' (a constant other than 0, "
                                 "1 or 2 cannot be passed as an argument)", tok)
        else:
            if val.off:
                ins.src1_displaced(True)
            ins.set_src_addr(1, val.reg)
        ins.set_swizzle(1, ("X", "Y", "Z"))
        ins.set_src_addr(0, 0)
        ins.set_swizzle(0, XXX)
        self.emit(ins)

    def return_statement(self) -> None:
        self.next()
        if self.at(";"):
            self.next()
            self.restore_frame()
            self.function_return()
            return
        tok = self.peek()
        val = self.expression()
        end = self.expect(";", "';'")
        if val.kind == "in":
            raise self.error("in[...] cannot be returned directly", tok)
        if self.inserted == 0:
            ins = VpInstr(comment="Set the return value")
            ins.set_code(ADD)
            last = self.last_value
            r1 = Dest(RETURN_VALUE_REG, False, False, 0)
            if "R" in last:
                self.populate(r1, val, R0_XXX, ins, end)
            else:
                if val.is_reg:
                    self.warn(tok, f"this returns the constant 0x{hex_value(last):x} (read from "
                                   f"the text '{last}'), as upstream compiles it")
                self.populate(r1, Val("const", text=last), NULL, ins, end,
                              literal=hex_value(last))
            self.emit(ins)
        else:
            first = len(self.code) - self.inserted
            if 0 <= first < len(self.code):
                self.code[first].line = end.line
            self.inserted = 0
            self.code[-1].comment = "Assigning return value"
            self.code[-1].set_dest(RETURN_VALUE_REG)
            if self.code[-1].dst >> 13 & 1 and not self.code[-1].op >> 9 & 1:
                self.warn(tok, "the value is written to R[1 + frame offset], not R1 where the "
                               "caller reads it, as upstream compiles it")
        self.reset_temps()
        self.restore_frame()
        self.function_return()

    def function_return(self) -> None:
        ins = VpInstr(comment="return from function")
        ins.set_imm(0)
        ins.set_code(ADD)
        ins.set_branch(ALWAYS)
        ins.set_dest(RETURN_ADDRESS_REG)
        self.emit(ins)
