"""The VP dialect of T-Language: a recursive-descent parser that generates code as it parses.

The generated code is that of the upstream ``theia_vp_compile`` (freecores/theia_gpu,
beta_2.0), instruction for instruction, because programs and the RTL regressions depend on it.
That compiler emits code from its grammar actions, in the order an LALR parser reduces, and
keeps a few counters across statements; we keep the same state and the same order:

* declarations are right-recursive: in ``vector a, b = (1,2,3), c;`` the last name gets the
  first register (R10 upwards; R129 upwards inside a thread) and initialisers are emitted
  from the last to the first; function parameters are numbered the same way (R4 upwards),
  and call arguments are copied into them last to first after all are evaluated;
* an expression result lives in a temporary register (frame top + 1, + 2, ...) until the
  statement that uses it retargets its last instruction;
* the count of instructions emitted by expressions is reset only by assignments and
  ``return``: an expression inside a condition or a call argument list leaves it set, and the
  next assignment then patches the branch (or call) instruction instead of emitting one.
  ``theia_vp_compile`` does exactly this (see test_expressions in the regressions); we
  reproduce it so that the output is identical, and document it as an upstream defect.

Other upstream behaviours reproduced on purpose (each visible in the regressions or a direct
consequence of the same rules): nested ``while`` loops share one "loop start" (the inner loop's
start is where the outer loop jumps back to); ``return NAME;`` returns the constant whose hex
digits spell NAME's last token; ``scale(Rn)`` / ``unscale(Rn)`` read R0; ``x = array[i];``
ignores the index; the frame size pushed by a call counts names, not registers.

Extensions over the upstream grammar (the manual's language): ``v.x`` as a source means
``v.xxx``; ``a.xy = ...`` on variables; ``v -= constant``; ``for (init; cond; step) {...}``;
``vector v.x = c;`` and ``vector v = c;``; negative literals and ``-v``; ``scale(expr)`` and
``unscale(expr)``; a thread started before its definition; signs in a swizzle by result lane
(see the package docstring, with the pointers the compiler refuses).
"""

from __future__ import annotations

from .cursor import TokenCursor
from .errors import CompileError
from .lexer import Token
from .literals import dec_value, hex_value
from .operands import (
    NULL,
    R0_OFFSET,
    R0_PLAIN,
    R0_XXX,
    XXX,
    YYY,
    ZZZ,
    Dest,
    Lhs,
    Val,
    dest_of_lhs,
    dest_of_val,
    src_reg,
)
from .preprocess import Preprocessed
from .vpinstr import (
    ADD,
    ALWAYS,
    CONTROL_REG0,
    DIV,
    FRAME_REG,
    IF_NOT_SIGN,
    IF_NOT_ZERO,
    IF_SIGN,
    IF_ZERO,
    IF_ZERO_OR_NOT_SIGN,
    IF_ZERO_OR_SIGN,
    IO,
    IO_OMWRITE,
    IO_TMREAD,
    LOGIC,
    LOGIC_AND,
    LOGIC_OR,
    MUL,
    NOP,
    RETURN_ADDRESS_REG,
    RETURN_VALUE_REG,
    ROT_RESULT_RIGHT,
    ROT_SRC1_LEFT,
    SQRT,
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


# --------------------------------------------------------------------------------------------
# The compiler
# --------------------------------------------------------------------------------------------


class VpCompiler(TokenCursor):
    """Parses a preprocessed VP program and generates its instructions."""

    BRACE = "'{' (blocks need braces, even around one statement)"

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

    # -- program -------------------------------------------------------------------------------
    def compile(self) -> list[VpInstr]:
        self.prologue()
        while not self.at("EOF"):
            self.statement()
        self.resolve_thread_starts()
        return self.code

    def prologue(self) -> None:
        for lane, (we, value) in enumerate(((WE_X, 0), (WE_Y, 1), (WE_Z, 2))):
            ins = VpInstr(comment="Make sure R0 has the appropiate values (0,1,2)" if lane == 0
                          else "")
            ins.set_code(ADD)
            ins.set_dest(0)
            ins.set_imm(value)
            ins.dest_zero(True)
            ins.set_we(we)
            self.emit(ins)
        ins = VpInstr(comment="Disable multi-threading by default")
        ins.set_code(ADD)
        ins.set_dest(CONTROL_REG0)
        ins.set_imm(0)
        ins.dest_zero(True)
        ins.set_we(WE_Z)
        self.emit(ins)
        ins = VpInstr(comment="Make sure R3 (Frame Offset) is initialized to zero")
        ins.set_code(ADD)
        ins.set_dest(FRAME_REG)
        ins.set_imm(0)
        ins.dest_zero(True)
        ins.set_we(WE_XYZ)
        self.emit(ins)

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

    # -- declarations --------------------------------------------------------------------------
    def declaration(self) -> None:
        self.next()
        items = []
        while True:
            name = self.declared_name()
            if self.at("."):
                # the manual's ``vector v.x = 17fp2.5;``: only the named lanes are set
                we = self.write_mask(name, allow_n=False)
                self.expect("=", "'=' (a declaration with lanes, e.g. v.x, initialises them)")
                items.append((name, None, (we, self.constant())))
            elif self.at("="):
                self.next()
                if self.at(*NUMBERS):  # ``vector i = 0;``: every lane
                    items.append((name, None, (WE_XYZ, self.constant())))
                else:
                    self.expect("(", "'(' or a number (a vector is initialised with "
                                     "(x, y, z) or one number)")
                    values = [self.constant()]
                    for _ in range(2):
                        self.expect(",", "','")
                        values.append(self.constant())
                    self.expect(")", "')'")
                    items.append((name, None, values))
            else:
                size = None
                if self.at("["):
                    self.next()
                    size = self.constant()
                    self.expect("]", "']'")
                items.append((name, size, None))
            if not self.at(","):
                break
            self.next()
        end = self.expect(";", "';'")
        seen = set(self.autovars)
        for name, _, _ in items:
            if name.text in seen:
                raise self.error(f"duplicated symbol '{name.text}'", name)
            seen.add(name.text)
        # the list is right-recursive: the last name is allocated (and initialised) first
        for i in range(len(items) - 1, -1, -1):
            name, size, values = items[i]
            last = i == len(items) - 1
            if values is None:
                text = size or "1"
                n = hex_value(text) if last else dec_value(text)
                self.autovars[name.text] = self.alloc(n, name)
                continue
            reg = self.autovars[name.text] = self.alloc(1, name)
            if isinstance(values, tuple):  # an extension: one immediate, some or all lanes
                mask, value = values
                ins = VpInstr(line=end.line)
                ins.set_dest(reg)
                ins.set_we(mask)
                ins.set_imm(hex_value(value))
                ins.addressing(True, False, True)
                ins.set_code(ADD)
                self.emit(ins)
                continue
            for lane, we in enumerate((WE_X, WE_Y, WE_Z)):
                ins = VpInstr()
                ins.set_dest(reg)
                ins.set_we(we)
                ins.set_imm(hex_value(values[lane]))
                ins.addressing(True, False, True)
                ins.set_code(ADD)
                if lane == 0:
                    ins.line = end.line
                self.emit(ins)

    def declared_name(self) -> Token:
        tok = self.peek()
        if tok.kind == "REG":
            raise self.error(f"'{tok.text}' is a register (r0..r255 and R0..R255 are reserved "
                             "words): use it without a declaration, or choose another name",
                             tok)
        if tok.kind in ("*", "&"):
            raise self.pointer_error(tok, "a variable name")
        return self.expect("ID", "a variable name")

    def pointer_error(self, tok: Token, what: str) -> CompileError:
        return self.error(f"expected {what}, found '{tok.text}' (pointers are not supported: "
                          "the T-Language manual leaves them TBD, section 8; use an array "
                          "and an index variable, v[i])", tok)

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

    # -- assignments ---------------------------------------------------------------------------
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

    # -- expressions ---------------------------------------------------------------------------
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
        left = self.term()
        while self.at("+", "-", "|"):
            op = self.next()
            right = self.term()
            left = self.binary(op, left, right)
        return left

    def term(self) -> Val:
        left = self.factor()
        while self.at("*", "/", "&"):
            op = self.next()
            right = self.factor()
            left = self.binary(op, left, right)
        return left

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

    # -- control flow --------------------------------------------------------------------------
    def condition(self) -> None:
        self.expect("(", "'('")
        left = self.expression()
        op = self.peek()
        if op.kind not in CONDITIONS:
            hint = " ('=' assigns; compare with '==')" if op.kind == "=" else ""
            raise self.error(f"expected a comparison (==, !=, <, >, <=, >=){hint}", op)
        self.next()
        right = self.expression()
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

    def condition_until(self, terminator: str) -> None:
        left = self.expression()
        op = self.peek()
        if op.kind not in CONDITIONS:
            hint = " ('=' assigns; compare with '==')" if op.kind == "=" else ""
            raise self.error(f"expected a comparison (==, !=, <, >, <=, >=){hint}", op)
        self.next()
        right = self.expression()
        end = self.expect(terminator, f"'{terminator}'")
        self.boolean(CONDITIONS[op.kind], left, right, end)

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

    # -- functions and threads -----------------------------------------------------------------
    def function(self) -> None:
        self.next()
        name = self.expect("ID", "a function name")
        self.expect("(", "'('")
        names: list[Token] = []
        if not self.at(")"):
            names.append(self.expect("ID", "a parameter name"))
            while self.at(","):
                self.next()
                names.append(self.expect("ID", "a parameter name"))
        self.expect(")", "')'")
        for p in reversed(names):  # right-recursive: the last parameter is R4
            if self.param_index + 1 > PARAM_LIMIT:
                raise self.error(f"cannot allocate more parameters: '{p.text}' "
                                 f"(at most {PARAM_LIMIT - PARAM_START} per function)", p)
            if p.text in self.params:
                raise self.error(f"parameter '{p.text}' is already defined", p)
            self.params[p.text] = self.param_index
            self.param_index += 1
        self.symbols[name.text] = len(self.code)
        self.block()
        self.autovars.clear()
        self.autovar_index = AUTOVAR_START
        self.params.clear()
        self.param_index = PARAM_START
        self.restore_frame()

    def thread(self) -> None:
        self.next()
        name = self.expect("ID", "a thread name")
        self.expect("(", "'('")
        self.expect(")", "')' (threads take no arguments)")
        self.threads[name.text] = len(self.code)
        self.thread_scope = True
        self.block()
        self.thread_scope = False
        self.autovars.clear()
        self.autovar_index = AUTOVAR_START
        ins = VpInstr(comment="Disable multi-threading")
        ins.set_code(ADD)
        ins.set_dest(CONTROL_REG0)
        ins.set_imm(0)
        ins.dest_zero(True)
        ins.set_we(WE_Z)
        self.emit(ins)

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

    def thread_offset(self, at: int, offset: int) -> None:
        first, second = self.code[at], self.code[at + 1]
        first.set_imm(offset << 1)
        second.set_imm(offset << 1 | 1)
        first.comment = f"Set thread instruction offset to 8'd{offset}"
        second.comment = "Enable multi-threading"

    def resolve_thread_starts(self) -> None:
        for at, name in self.thread_starts:
            if name.text not in self.threads:
                raise self.error(f"undefined thread '{name.text}'", name)
            self.thread_offset(at, self.threads[name.text])

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


def compile_tokens(pre: Preprocessed) -> VpCompiler:
    """Compile a preprocessed VP program: ``.code``, ``.symbols``, ``.warnings``."""
    c = VpCompiler(pre)
    c.compile()
    return c
