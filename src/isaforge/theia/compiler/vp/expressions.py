"""VP expressions: operands (variables, registers, swizzles, constants, triples), the
binary operators of the shared grammar (..grammar), ``sqrt``, ``scale`` and ``unscale``, and
``in[...]``. Each operator emits its instruction as it is parsed, into a temporary."""

from __future__ import annotations

from ..errors import CompileError
from ..lexer import Token
from ..literals import hex_value
from ..operands import (
    R0_XXX,
    XXX,
    YYY,
    ZZZ,
    Val,
)
from ..vpinstr import (
    ADD,
    DIV,
    LOGIC,
    LOGIC_AND,
    LOGIC_OR,
    MUL,
    ROT_RESULT_RIGHT,
    ROT_SRC1_LEFT,
    SQRT,
    WE_X,
    WE_XYZ,
    WE_Y,
    WE_Z,
    VpInstr,
)
from .base import (
    NUMBERS,
    SCALE,
    SCALE_SRC1_RIGHT,
    VpBase,
)


class VpExpressions(VpBase):
    """Expressions: ``expression() -> Val``."""

    def expression(self) -> Val:
        if self.at("in"):
            tok = self.next()
            self.expect("[", "'['")
            name = self.expect("ID", "a variable holding the address")
            self.expect("]", "']'")
            if name.text in self.params:
                val = Val("in", reg=self.params[name.text])
            else:
                val = Val("in", reg=self.var(name), off=True)
            if self.at("+", "-", "|", "*", "/", "&"):
                raise self.error("in[...] cannot be combined with other operands", tok)
            return val
        return super().expression()

    def binary(self, op: Token, left: Val, right: Val) -> Val:
        for v in (left, right):
            if v.kind == "in":
                raise self.error("in[...] cannot be combined with other operands", op)
            if v.kind == "const":
                self.warn(op, f"the constant 0x{v.text} in this '{op.text}' is miscompiled as "
                              "upstream does (as a right operand it reads R0, as a left one it "
                              "becomes a corrupted immediate); use (c, c, c) or a variable")
        temp = self.free_temp(op)
        self.extra_dest = 0
        ins = VpInstr()
        ins.set_dest(temp)
        ins.dest_zero(True)
        ins.set_we(WE_XYZ)
        kind = op.kind
        if kind in ("+", "-"):
            ins.set_code(ADD)
            if kind == "-":
                ins.set_signs(0)
        elif kind in ("|", "&"):
            ins.set_code(LOGIC)
            ins.set_scale(LOGIC_OR if kind == "|" else LOGIC_AND)
        elif kind == "*":
            ins.set_code(MUL)
        else:
            ins.set_code(DIV)
        self.sources(left, right, ins)
        if kind == "*" and self.fixed_point:
            ins.or_scale(ROT_RESULT_RIGHT)
        if kind == "/" and self.fixed_point:
            ins.or_scale(ROT_SRC1_LEFT)
        self.emit(ins)
        self.inserted += 1
        return Val("reg", reg=temp, off=True)

    def factor(self) -> Val:
        tok = self.peek()
        if tok.kind == "sqrt":
            self.next()
            self.expect("(", "'('")
            val = self.expression()
            self.expect(")", "')'")
            if val.kind == "in":
                raise self.error("in[...] cannot be combined with other operands", tok)
            temp = self.free_temp(tok)
            self.extra_dest = 0
            ins = VpInstr()
            ins.set_dest(temp)
            ins.dest_zero(True)
            ins.set_we(WE_XYZ)
            ins.set_code(SQRT)
            ins.set_src_addr(0, 0)
            self.sources(val, R0_XXX, ins)
            self.emit(ins)
            self.inserted += 1
            return Val("reg", reg=temp, off=True)
        if tok.kind == "(":
            if (self.peek(1).kind in NUMBERS and self.peek(2).kind == ",") or (
                    self.peek(1).kind == "-" and self.peek(2).kind in NUMBERS
                    and self.peek(3).kind == ","):
                return self.triple()
            self.next()
            val = self.expression()
            self.expect(")", "')'")
            return val
        return self.source()

    def triple(self) -> Val:
        tok = self.next()
        values = [self.constant()]
        for _ in range(2):
            self.expect(",", "','")
            values.append(self.constant())
        self.expect(")", "')'")
        temp = self.free_temp(tok)
        for lane, we in enumerate((WE_X, WE_Y, WE_Z)):
            ins = VpInstr()
            ins.set_dest(temp)
            ins.set_imm(hex_value(values[lane]))
            ins.dest_zero(True)
            ins.src0_displaced(True)
            ins.set_we(we)
            ins.set_code(ADD)
            ins.triple = lane == 2
            self.emit(ins)
            self.inserted += 1
        self.extra_dest = 2
        return Val("reg", reg=temp, off=True)

    def swizzled(self, reg: int, off: bool, owner: Token) -> Val:
        """A register operand with a swizzle. When a lane is read both negated and not
        (the manual's ``Argument1.y-yy``), one operand cannot encode it (the hardware negates
        source lanes before it swizzles): the swizzle is applied by one ADD into a temporary
        and the signs by a second one (an extension: upstream encodes the signs by position,
        which gives another value)."""
        swz, split = self.swizzle(owner)
        if split is None:
            return Val("reg", reg=reg, off=off, swz=swz)
        val = Val("reg", reg=reg, off=off, swz=swz)
        for step in range(2):
            temp = self.free_temp(owner)
            ins = VpInstr()
            ins.set_dest(temp)
            ins.dest_zero(True)
            ins.set_we(WE_XYZ)
            ins.set_code(ADD)
            self.sources(val, R0_XXX, ins)
            self.emit(ins)
            self.inserted += 1
            val = Val("reg", reg=temp, off=True, swz=split if step == 0 else None)
        self.extra_dest = 0
        return val

    def swizzle(self, owner: Token) -> tuple[tuple[str, str, str],
                                             tuple[str, str, str] | None]:
        """The operand swizzle (signs by source lane) and, when it cannot carry the signs,
        the signs to apply afterwards on the swizzled value (by position)."""
        dot = self.next()
        lanes = []
        while len(lanes) < 3:
            neg = False
            if self.at("-") and self.peek(1).kind in ("X", "Y", "Z"):
                self.next()
                neg = True
            if not self.at("X", "Y", "Z"):
                break
            letter = self.next().kind
            lanes.append(("-" if neg else "") + letter)
        if len(lanes) == 1:
            lanes *= 3
        if len(lanes) != 3 or self.at("X", "Y", "Z", "N", "ID"):
            raise CompileError(f"bad swizzle for '{owner.text}': expected three of x, y, z "
                               "(each optionally negated, e.g. .x-yz), or one", self.loc(dot))
        by_lane = self.signs_by_lane(lanes)
        if by_lane is not None:
            return by_lane, None
        letters = tuple(c[-1] for c in lanes)
        signs = tuple(("-" if c.startswith("-") else "") + lane
                      for lane, c in zip(("X", "Y", "Z"), lanes, strict=True))
        return letters, signs  # type: ignore[return-value]

    def signs_by_lane(self, lanes: list[str]) -> tuple[str, str, str] | None:
        """The hardware negates *source* lanes, then swizzles (the SMU's order), while the
        manual writes a sign on each *result* lane (``a.-zx-y`` is (-a.z, a.x, -a.y)).
        Move each sign to the lane it reads; upstream keeps it on the position, which gives a
        different value whenever a negated letter is not in its own position (no regression
        has one). A lane read with both signs cannot be encoded: None."""
        wanted: dict[str, bool] = {}
        for c in lanes:
            neg, letter = c.startswith("-"), c[-1]
            if wanted.setdefault(letter, neg) != neg:
                return None
        out = [("-" if wanted.get(lane, False) else "") + c[-1]
               for lane, c in zip(("X", "Y", "Z"), lanes, strict=True)]
        return (out[0], out[1], out[2])

    def source(self) -> Val:
        tok = self.peek()
        if tok.kind == "-" and self.peek(1).kind in ("ID", "REG"):
            # an extension: -v is v with every lane negated (the manual's -Normal)
            self.next()
            val = self.source()
            if val.kind != "reg" or val.elem is not None:
                raise self.error("'-' applies to a variable or register here; write "
                                 "v.-x-y-z", tok)
            lanes = val.swz or ("X", "Y", "Z")
            return Val("reg", reg=val.reg, off=val.off,
                       swz=tuple(c[1:] if c.startswith("-") else "-" + c  # type: ignore[arg-type]
                                 for c in lanes))
        if tok.kind in NUMBERS or (tok.kind == "-" and self.peek(1).kind in NUMBERS):
            text = self.constant()
            value = hex_value(text)
            if value in (0, 1, 2):
                return Val("reg", reg=0, swz=(XXX, YYY, ZZZ)[value])
            return Val("const", text=text)
        if tok.kind == "ID":
            self.next()
            if self.at("."):
                if tok.text in self.params:
                    return self.swizzled(self.params[tok.text], False, tok)
                return self.swizzled(self.var(tok), True, tok)
            param = self.params.get(tok.text)
            reg = param if param is not None else self.var(tok)
            elem = self.array_index()
            return Val("reg", reg=reg, off=param is None, elem=elem)
        if tok.kind == "REG":
            self.next()
            reg = self.reg_token(tok)
            if self.at("."):
                return self.swizzled(reg, False, tok)
            return Val("reg", reg=reg)
        if tok.kind in ("scale", "unscale") and not (
                self.peek(1).kind == "(" and self.peek(2).kind == "REG"
                and self.peek(3).kind == ")"):
            return self.scaled(tok)
        if tok.kind in ("scale", "unscale"):
            # upstream: the operand becomes "<<Rn" / ">>Rn", whose register number reads as 0
            self.next()
            self.expect("(", "'('")
            self.expect("REG", "a register")
            self.expect(")", "')'")
            self.warn(tok, f"{tok.text}(...) reads R0, as upstream compiles it")
            return Val("reg", reg=0)
        if tok.kind in ("*", "&"):
            raise self.pointer_error(tok, "an operand")
        raise self.unexpected("an operand", tok)

    def scaled(self, tok: Token) -> Val:
        """``scale(expr)`` / ``unscale(expr)`` (an extension; upstream takes only a register,
        and reads R0): unscale is an ADD of the operand shifted right by SCALE at issue (SCOP
        bits 62 and 59) and R0.x; scale multiplies by 2**SCALE, loaded first (the SMU's left
        scale is a no-op in the RTL)."""
        self.next()
        self.expect("(", "'('")
        val = self.expression()
        self.expect(")", "')'")
        if val.kind == "in":
            raise self.error("in[...] cannot be combined with other operands", tok)
        if val.kind == "const":
            raise self.error(f"{tok.text}() of a constant: write the scaled constant, e.g. "
                             "17fp2.5", tok)
        self.extra_dest = 0
        src0 = R0_XXX
        if tok.kind == "scale":
            factor = self.free_temp(tok)
            ins = VpInstr()
            ins.set_code(ADD)
            ins.set_dest(factor)
            ins.set_imm(1 << SCALE)
            ins.dest_zero(True)
            ins.src0_displaced(True)
            ins.set_we(WE_XYZ)
            self.emit(ins)
            self.inserted += 1
            src0 = Val("reg", reg=factor, off=True)
        temp = self.free_temp(tok)
        ins = VpInstr()
        ins.set_dest(temp)
        ins.dest_zero(True)
        ins.set_we(WE_XYZ)
        if tok.kind == "scale":
            ins.set_code(MUL)
        else:
            ins.set_code(ADD)
            ins.set_scale(SCALE_SRC1_RIGHT)
        self.sources(val, src0, ins)
        self.emit(ins)
        self.inserted += 1
        return Val("reg", reg=temp, off=True)
