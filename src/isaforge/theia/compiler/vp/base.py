"""What every part of the VP code generator shares: its state (registers, symbols, the code
so far, the upstream compiler's counters), the operand plumbing of the upstream
``PopulateSourceRegisters`` / ``PopulateInstruction``, and the tokens every part reads
(constants, write masks, array indices)."""

from __future__ import annotations

from ..errors import CompileError
from ..grammar import ExpressionGrammar
from ..lexer import Token
from ..literals import dec_value, hex_value
from ..operands import (
    XXX,
    YYY,
    Dest,
    Lhs,
    Val,
    src_reg,
)
from ..preprocess import Preprocessed
from ..vpinstr import (
    ADD,
    FRAME_REG,
    IF_NOT_SIGN,
    IF_NOT_ZERO,
    IF_SIGN,
    IF_ZERO,
    IF_ZERO_OR_NOT_SIGN,
    IF_ZERO_OR_SIGN,
    WE_X,
    WE_XYZ,
    WE_Y,
    WE_Z,
    VpInstr,
)

AUTOVAR_START = 9
THREAD_AUTOVAR_START = 128
PARAM_START = 4
PARAM_LIMIT = 10  # parameters live in R4..R9
MAX_REGISTER = 255
SCALE = 17  # the fixed-point scale of the hardware
SCALE_SRC1_RIGHT = 0b1001  # SCOP bits 62 and 59: SRC1 shifted right by SCALE at issue

CONDITIONS = {"!=": IF_ZERO, "==": IF_NOT_ZERO, ">": IF_ZERO_OR_SIGN, "<": IF_ZERO_OR_NOT_SIGN,
              "<=": IF_NOT_SIGN, ">=": IF_SIGN}
LETTER_MASK = {"x": WE_X, "y": WE_Y, "z": WE_Z}
NUMBERS = ("DEC", "HEX", "BIN", "FP")
LETTERS = frozenset({"X", "Y", "Z", "N"})
MASK_KINDS = LETTERS | {"."}


def _after_dot(toks: list[Token], i: int) -> bool:
    """Whether letter token ``i`` continues a ``.`` swizzle or write mask (``.x-y`` too)."""
    prev = toks[i - 1].kind if i > 0 else ""
    if prev == "-" and i > 1:
        prev = toks[i - 2].kind
    return prev in MASK_KINDS


class VpBase(ExpressionGrammar[Val]):
    """The state of a VP compilation and what every part of the code generator uses."""

    BRACE = "'{' (blocks need braces, even around one statement)"
    # the expression grammar's operators (see ..grammar), loosest first
    LEVELS = (("+", "-", "|"), ("*", "/", "&"))

    def __init__(self, pre: Preprocessed) -> None:
        super().__init__(pre, cp=False)
        # ``n``, ``x``, ``y``, ``z`` alone are names (the manual's ``vector a, b, n, z;``):
        # the scanner makes them letters of write masks and swizzles (R5.xyn, v.x-yz)
        toks = self.toks
        self.toks = [Token("ID", t.text, t.line, t.col) if t.kind in LETTERS
                     and not _after_dot(toks, i) else t for i, t in enumerate(toks)]
        self.code: list[VpInstr] = []
        self.symbols: dict[str, int] = {}
        self.threads: dict[str, int] = {}
        self.thread_starts: list[tuple[int, Token]] = []  # starts of threads not yet defined
        self.branches: list[int] = []
        self.inserted = 0
        self.extra_dest = 0
        self.while_addr = 0
        self.params: dict[str, int] = {}
        self.param_index = PARAM_START
        self.autovars: dict[str, int] = {}
        self.autovar_index = AUTOVAR_START
        self.thread_index = THREAD_AUTOVAR_START
        self.thread_scope = False
        self.temp_index = 1
        self.fixed_point = False

    # -- registers -----------------------------------------------------------------------------
    def _check_reg(self, n: int, tok: Token | None, what: str) -> int:
        if not 0 <= n <= MAX_REGISTER:
            raise self.error(f"too many registers: {what} needs R{n} (the VP has R0..R255)", tok)
        return n

    def free_temp(self, tok: Token | None = None) -> int:
        base = self.thread_index if self.thread_scope else self.autovar_index
        n = base + self.temp_index
        self.temp_index += 1
        return self._check_reg(n, tok, "this expression")

    def reset_temps(self) -> None:
        self.temp_index = 1

    def alloc(self, size: int, tok: Token) -> int:
        if self.thread_scope:
            self.thread_index = (self.thread_index + size) & 0xFFFFFFFF
            top = self.thread_index
        else:
            self.autovar_index = (self.autovar_index + size) & 0xFFFFFFFF
            top = self.autovar_index
        self._check_reg(top, tok, f"variable '{tok.text}'")
        return (top - (size - 1)) & 0xFFFFFFFF

    def var(self, tok: Token) -> int:
        if tok.text not in self.autovars:
            raise self.error(f"undefined variable '{tok.text}'", tok)
        return self.autovars[tok.text]

    def reg_token(self, tok: Token) -> int:
        return self._check_reg(int(tok.text[1:]), tok, tok.text)

    def emit(self, ins: VpInstr) -> VpInstr:
        self.code.append(ins)
        return ins

    # -- operand plumbing (the upstream PopulateSourceRegisters / PopulateInstruction) ---------
    def index_register(self, reg: int) -> None:
        ins = VpInstr(comment="store array index register")
        ins.set_code(ADD)
        ins.set_we(WE_Z)
        ins.set_dest(FRAME_REG)
        ins.set_src_addr(1, reg)
        ins.src1_displaced(True)
        ins.set_swizzle(1, XXX)
        ins.set_src_addr(0, 0)
        ins.set_swizzle(0, XXX)
        self.emit(ins)

    def sources(self, a1: Val, a2: Val, ins: VpInstr) -> None:
        if a1.kind == "const":
            ins.set_imm(hex_value(a1.text))
        elif a1.kind != "null":
            if a1.elem is not None:
                self.index_register(a1.elem)
                ins.src0_displaced(True)
                ins.src1_displaced(True)
                ins.set_imm_bit(True)
            elif a1.off:
                ins.src1_displaced(True)
            if a1.swz is not None:
                ins.set_swizzle(1, a1.swz)
            ins.set_src_addr(1, a1.reg)
        if a2.is_reg and a2.kind != "null":
            if a2.off:
                ins.src0_displaced(True)
            if a2.swz is not None:
                ins.set_swizzle(0, a2.swz)
            ins.set_src_addr(0, a2.reg)

    def populate(self, dest: Dest, s1: Val, s0: Val, ins: VpInstr, tok: Token,
                 literal: int | None = None) -> None:
        if dest.index is not None:
            s1 = Val("reg", reg=dest.index)
        s1_null, s0_null = s1.kind == "null", s0.kind == "null"
        s1_off = s1.off and s1.kind != "const"
        s0_off = s0.off and s0.kind != "const"
        if s1.swz is not None:
            ins.set_swizzle(1, s1.swz)
        ins.set_src_addr(1, 0 if s1_null else src_reg(s1))
        if s0.swz is not None:
            ins.set_swizzle(0, s0.swz)
        ins.set_src_addr(0, 0 if s0_null else src_reg(s0))
        ins.clear_we()
        ins.set_we(dest.we if dest.dot else WE_XYZ)
        ins.set_dest(dest.reg)
        lit = literal is not None
        has_index = dest.index is not None
        if not lit and not has_index:
            ins.addressing(dest.off, s1_off, s0_off)
            return
        ins.set_imm_bit(True)
        value = literal or 0
        if lit and not s0_null and not s0_off and not s1_off and not dest.off:
            ins.addressing(False, False, False)
            ins.set_imm(value)
        elif lit and not s0_null and s0_off and dest.off:
            ins.addressing(False, False, True)
            ins.set_imm(value)
        elif not lit and not s1_off and not s0_null and s0_off and dest.off and has_index:
            ins.addressing(False, True, True)
        elif lit and s0_null and not dest.off and not has_index:
            ins.addressing(True, False, False)
            ins.set_imm(value)
        elif lit and s0_null and dest.off and not has_index:
            ins.addressing(True, False, True)
            ins.set_imm(value)
        else:
            raise self.error("could not determine the addressing mode of this assignment", tok)

    def dest_from_lhs(self, lhs: Lhs, ins: VpInstr, imm: bool) -> None:
        """The upstream SetDestinationFromRegister."""
        if lhs.off:
            if imm:
                ins.src0_displaced(True)
            else:
                ins.dest_zero(True)
        ins.clear_we()
        ins.set_we(lhs.we)
        ins.set_dest(lhs.reg)

    def restore_frame(self) -> None:
        ins = VpInstr(comment="Restore previous function frame offset")
        ins.set_code(ADD)
        ins.set_we(WE_X)
        ins.set_dest(FRAME_REG)
        ins.set_src_addr(1, FRAME_REG)
        ins.set_swizzle(1, YYY)
        ins.set_src_addr(0, 0)
        ins.set_swizzle(0, XXX)
        self.emit(ins)

    # -- tokens every part reads ---------------------------------------------------------------
    def constant(self) -> str:
        """A literal as the hex digits the compiler keeps for it."""
        tok = self.peek()
        if tok.kind == "-" and self.peek(1).kind in NUMBERS:
            # an extension: a negative literal is its 32-bit two's complement
            self.next()
            return f"{-hex_value(self.constant()) & 0xFFFFFFFF:x}"
        if tok.kind == "DEC":
            self.next()
            if self.at(".") and self.peek(1).kind == "DEC" and self.peek().col == \
                    tok.col + len(tok.text) and self.peek().line == tok.line:
                frac = f"{tok.text}.{self.peek(1).text}"
                raise self.error(f"'{frac}' is not a number the VP can hold: write a "
                                 f"fixed-point literal, e.g. 17fp{frac} (scale 17)", tok)
            return f"{dec_value(tok.text) & 0xFFFFFFFF:x}"
        if tok.kind == "HEX":
            self.next()
            return tok.text[2:]
        if tok.kind == "BIN":
            self.next()
            return f"{int(tok.text[2:][:32], 2):x}"
        if tok.kind == "FP":
            self.next()
            scale, _, value = tok.text.partition("fp")
            if int(scale) > 31:
                raise self.error(f"fixed-point scale {int(scale)} is too large (at most 31)", tok)
            return f"{round(float(value) * (1 << int(scale))) & 0xFFFFFFFF:x}"
        raise self.unexpected("a number", tok)

    def array_index(self) -> int | None:
        if not self.at("["):
            return None
        self.next()
        idx = self.expect("ID", "a variable as the array index")
        self.expect("]", "']'")
        return self.var(idx)

    def write_mask(self, owner: Token, allow_n: bool) -> int:
        dot = self.next()
        letters = []
        while self.at("X", "Y", "Z", "N"):
            letters.append(self.next().text)
        text = "".join(letters)
        valid = {"x", "y", "z", "xy", "xz", "yz", "xyz"}
        if allow_n:
            valid |= {"xyn", "xnz", "nyz"}
        if text not in valid:
            shown = text or self.peek().text
            raise CompileError(f"bad write mask '.{shown}' for '{owner.text}' "
                               "(use x, y, z in that order)", self.loc(dot))
        return sum(LETTER_MASK.get(c, 0) for c in text)

    def pointer_error(self, tok: Token, what: str) -> CompileError:
        return self.error(f"expected {what}, found '{tok.text}' (pointers are not supported: "
                          "the T-Language manual leaves them TBD, section 8; use an array "
                          "and an index variable, v[i])", tok)
