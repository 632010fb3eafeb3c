"""The afuc instruction set (Adreno a5xx PFP/ME, a6xx SQE, a7xx BR/BV/LPAC) as data.

Every instruction word is 32 bits. Encodings follow Mesa's afuc description and were checked
against real firmware. Generations are numbered 5, 6 and 7; ``gen=(lo, hi)`` limits a bitset.
Templates print exactly what Mesa's afuc-disasm prints; the assembler reads them back.
"""

from __future__ import annotations

from functools import cache

from ..core.isa import ISA, Bitset, Branch, Enum, F, Field, Flag, Hex, Kind, Override, P, UInt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GENERATIONS = (5, 6, 7)

# Special registers: number -> name, as source and as destination.
REG_REM, REG_MEMDATA, REG_REGDATA, REG_DATA = 0x1C, 0x1D, 0x1E, 0x1F
REG_ADDR, REG_USRADDR = 0x1D, 0x1E
REG_SP, REG_LR = 0x1A, 0x1B
SRC_NAMES = {0x1A: "$sp", 0x1B: "$lr", 0x1C: "$rem", 0x1D: "$memdata", 0x1E: "$regdata",
             0x1F: "$data"}
DST_NAMES = {0x1A: "$sp", 0x1B: "$lr", 0x1C: "$rem", 0x1D: "$addr", 0x1E: "$usraddr",
             0x1F: "$data"}
REG_ALIASES = {
    "sp": REG_SP,
    "lr": REG_LR,
    "rem": REG_REM,
    "memdata": REG_MEMDATA,
    "regdata": REG_REGDATA,
    "data": REG_DATA,
    "addr": REG_ADDR,
    "usraddr": REG_USRADDR,
}


def parse_reg_name(text: str) -> int | None:
    """``$0a`` -> 10, ``$data`` -> 0x1f; ``None`` if not a register."""
    if not text.startswith("$"):
        return None
    name = text[1:]
    if name in REG_ALIASES:
        return REG_ALIASES[name]
    if len(name) == 2:
        try:
            n = int(name, 16)
        except ValueError:
            return None
        return n if n < 32 else None
    return None


class Reg(Kind):
    """A 5-bit register operand; special registers are named differently as src and dst."""

    def __init__(self, names: dict[int, str]) -> None:
        self.names = names

    def format(self, value: int, width: int, ctx: Any) -> str:
        return self.names.get(value) or f"${value:02x}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        n = parse_reg_name(tok.text) if tok is not None else None
        if n is None:
            ts.expected("a register")
            return None
        ts.next()
        return n


class RegSpace(Kind):
    """A register number in a private space (control ``@NAME``, SQE ``%NAME``), named from
    the register database when the context has one, else ``0x%03x``."""

    def __init__(self, space: str, sigil: str) -> None:
        self.space = space
        self.sigil = sigil

    def format(self, value: int, width: int, ctx: Any) -> str:
        name = ctx.reg_name(self.space, value) if ctx is not None else None
        return f"{self.sigil}{name}" if name else f"0x{value:03x}"


SRC = Reg(SRC_NAMES)
DST = Reg(DST_NAMES)
REP = F("REP", 26, kind=Flag("(rep)"))
XMOV = Enum({0: "", 1: "(xmov1)", 2: "(xmov2)", 3: "(xmov3)"})
SDS = Enum({0: "", 1: "(sds1)", 2: "(sds2)", 3: "(sds3)"})
CONTROL = RegSpace("control", "@")
SQE = RegSpace("sqe", "%")

A5, A6, A7 = (5, 5), (6, 6), (7, 7)
UPTO6, FROM6 = (0, 6), (6, 99)

instruction = Bitset("#instruction")
instruction_rep = Bitset("#instruction-rep", instruction, fields=[REP])

alu_2src = Bitset(
    "#alu-2src",
    instruction_rep,
    display="{REP}{XMOV}{PEEK}{NAME} {DST}, {SRC1}, {SRC2}",
    fields=[
        F("PEEK", 8, kind=Flag("(peek)")),
        F("XMOV", 9, 10, XMOV),
        F("DST", 11, 15, DST),
        F("SRC2", 16, 20, SRC),
        F("SRC1", 21, 25, SRC),
    ],
    patterns=[P(5, 7, "xxx"), P(27, 31, "10011")],
)
alu_1src = Bitset(
    "#alu-1src",
    instruction_rep,
    display="{REP}{XMOV}{NAME} {DST}, {SRC1}",
    fields=[F("XMOV", 9, 10, XMOV), F("DST", 11, 15, DST), F("SRC1", 16, 20, SRC)],
    patterns=[P(5, 8, "xxxx"), P(21, 25, "xxxxx"), P(27, 31, "10011")],
)
alu_2src_immed = Bitset(
    "#alu-2src-immed",
    instruction_rep,
    display="{REP}{NAME} {DST}, {SRC1}, {RIMMED}",
    fields=[F("RIMMED", 0, 15, Hex()), F("DST", 16, 20, DST), F("SRC1", 21, 25, SRC)],
)
alu_2src_immed12 = Bitset(
    "#alu-2src-immed12",
    instruction_rep,
    display="{REP}{NAME} {DST}, {SRC1}, {RIMMED}",
    fields=[F("RIMMED", 0, 11, Hex()), F("DST", 16, 20, DST), F("SRC1", 21, 25, SRC)],
    patterns=[P(27, 31, "10010")],
)
alu_1src_immed = Bitset(
    "#alu-1src-immed",
    instruction_rep,
    display="{REP}{NAME} {DST}, {IMMED}",
    fields=[F("IMMED", 0, 15, Hex()), F("DST", 16, 20, DST)],
    patterns=[P(21, 25, "xxxxx")],
)


def _alu(name: str, reg_op: int | None, imm_op: int | None, gen=(0, 99), imm12: int | None = None,
         one_src: bool = False, doc: str = "") -> list[Bitset]:
    """An ALU operation: register form (opcode in bits 0-4) and immediate form (bits 27-31,
    or a 4-bit sub-opcode in bits 12-15 of the a7xx 12-bit-immediate group)."""
    out = []
    if reg_op is not None:
        out.append(Bitset(name, alu_1src if one_src else alu_2src, gen=gen, doc=doc,
                          patterns=[P(0, 4, reg_op)]))
    if imm_op is not None:
        parent = alu_1src_immed if one_src else alu_2src_immed
        out.append(Bitset(name + "i", parent, gen=gen, displayname=name, doc=doc,
                          patterns=[P(27, 31, imm_op)]))
    if imm12 is not None:
        out.append(Bitset(name + "i", alu_2src_immed12, gen=gen, displayname=name, doc=doc,
                          patterns=[P(12, 15, imm12)]))
    return out


mov_override = Override({"SRC1": 0}, "{REP}{XMOV}{PEEK}mov {DST}, {SRC2}")

ALU = [
    *_alu("add", 0b00001, 0b00001, doc="add, writing the carry flag"),
    *_alu("addhi", 0b00010, 0b00010, doc="add with carry (high half of a 64-bit add)"),
    *_alu("sub", 0b00011, 0b00011, doc="subtract, writing the carry (borrow) flag"),
    *_alu("subhi", 0b00100, 0b00100, doc="subtract with carry (high half)"),
    *_alu("and", 0b00101, 0b00101),
    Bitset("or", alu_2src, patterns=[P(0, 4, 0b00110)], overrides=[mov_override],
           doc="bitwise or; with $00 as first source it is mov"),
    *_alu("or", None, 0b00110),
    *_alu("xor", 0b00111, 0b00111),
    *_alu("not", 0b01000, 0b01000, one_src=True),
    # a5xx/a6xx numbering
    *_alu("shl", 0b01001, 0b01001, UPTO6),
    *_alu("ushr", 0b01010, 0b01010, UPTO6, doc="zero-extending right shift"),
    *_alu("ishr", 0b01011, 0b01011, UPTO6, doc="sign-extending right shift"),
    *_alu("rot", 0b01100, 0b01100, UPTO6, doc="rotate left"),
    *_alu("mul8", 0b01101, 0b01101, UPTO6, doc="multiply the low 8 bits of both sources"),
    *_alu("min", 0b01110, 0b01110, UPTO6, doc="unsigned minimum"),
    *_alu("max", 0b01111, 0b01111, UPTO6, doc="unsigned maximum"),
    *_alu("cmp", 0b10000, 0b10000, UPTO6, doc="compare: 0x00 if >, 0x2b if ==, 0x1e if <"),
    *_alu("msb", 0b10100, None, UPTO6, one_src=True, doc="index of the most significant set bit"),
    # a7xx renumbered most of them
    *_alu("shl", 0b10010, None, A7, imm12=0b0010),
    *_alu("ushr", 0b10011, None, A7, imm12=0b0011),
    *_alu("ishr", 0b10100, None, A7, imm12=0b0100),
    *_alu("rot", 0b10101, None, A7, imm12=0b0101),
    *_alu("mul8", 0b01100, 0b01100, A7),
    *_alu("min", 0b01010, 0b01010, A7),
    *_alu("max", 0b01011, 0b01011, A7),
    *_alu("cmp", 0b01101, 0b01101, A7),
    *_alu("bic", 0b01001, 0b01001, A7, doc="and with the second source inverted"),
    *_alu("msb", 0b11001, None, A7, one_src=True),
    Bitset("setbit", alu_2src, gen=A7, patterns=[P(0, 4, 0b10110)],
           doc="set bit (src2 >> 1) of src1 to (src2 & 1)"),
]

setclrbit6 = Bitset(
    "#setclrbit6", instruction_rep, display="{REP}{NAME} {DST}, {SRC}, {BIT}",
    fields=[F("BIT", 1, 5, UInt("b")), F("DST", 16, 20, DST), F("SRC", 21, 25, SRC)],
    patterns=[P(6, 15, "x" * 10), P(27, 31, "10010")],
)
setclrbit7 = Bitset(
    "#setclrbit7", instruction_rep, display="{REP}{NAME} {DST}, {SRC}, {BIT}",
    fields=[F("BIT", 1, 5, UInt("b")), F("DST", 16, 20, DST), F("SRC", 21, 25, SRC)],
    patterns=[P(6, 11, "x" * 6), P(12, 15, "0110"), P(27, 31, "10010")],
)
bitfield = Bitset(
    "#bitfield-immed", instruction_rep, display="{REP}{NAME} {DST}, {SRC}, {LO}, {HI}",
    fields=[F("LO", 0, 4, UInt("b")), F("HI", 5, 9, UInt("b")), F("DST", 16, 20, DST),
            F("SRC", 21, 25, SRC)],
    patterns=[P(10, 11, "xx"), P(27, 31, "10010")],
)
BITS = [
    Bitset("setbiti", setclrbit6, gen=UPTO6, displayname="setbit", patterns=[P(0, bits="1")]),
    Bitset("clrbit", setclrbit6, gen=UPTO6, patterns=[P(0, bits="0")]),
    Bitset("setbiti", setclrbit7, gen=A7, displayname="setbit", patterns=[P(0, bits="1")]),
    Bitset("clrbit", setclrbit7, gen=A7, patterns=[P(0, bits="0")]),
    Bitset("ubfx", bitfield, gen=A7, patterns=[P(12, 15, "0111")],
           doc="unsigned bitfield extract of bits LO..HI"),
    Bitset("bfi", bitfield, gen=A7, patterns=[P(12, 15, "1000")], doc="bitfield insert"),
]

movi = Bitset(
    "#movi", instruction_rep, display="{REP}mov {DST}, {RIMMED} << {SHIFT}",
    overrides=[Override({"SHIFT": 0}, "{REP}mov {DST}, {RIMMED}")],
    fields=[F("RIMMED", 0, 15, Hex()), F("DST", 16, 20, DST), F("SHIFT", 21, 25, UInt())],
    doc="move a 16-bit immediate shifted left",
)
MOVI = [
    Bitset("movi", movi, gen=UPTO6, displayname="mov", patterns=[P(27, 31, "10001")]),
    Bitset("movi", movi, gen=A7, displayname="mov", patterns=[P(27, 31, "01110")]),
]

# Control, SQE and memory access. In pre-increment mode the base prints as a plain number.
control = Bitset("#control", instruction_rep, fields=[
    F("PREINCREMENT", 14, kind=Flag("!")), F("OFFSET", 21, 25, SRC)])
store = Bitset(
    "#store", control, display="{REP}store {SRC}, [{OFFSET} + {IMMED}]{PREINCREMENT}",
    fields=[F("IMMED", 0, 11, Hex()), F("SRC", 16, 20, SRC)], patterns=[P(12, 13, "00")],
    doc="store to memory (address high half from @LOAD_STORE_HI)",
)
cwrite = Bitset(
    "#cwrite", control, display="{REP}{SDS}cwrite {SRC}, [{OFFSET} + {BASE}]{PREINCREMENT}",
    overrides=[Override({"PREINCREMENT": 1},
                        "{REP}{SDS}cwrite {SRC}, [{OFFSET} + {IMMED}]{PREINCREMENT}",
                        (F("IMMED", 0, 11, Hex()),))],
    fields=[F("BASE", 0, 11, CONTROL), F("SDS", 12, 13, SDS), F("SRC", 16, 20, SRC)],
    patterns=[P(27, 31, "10101")], doc="write a control register",
)
cread = Bitset(
    "#cread", control, display="{REP}cread {DST}, [{OFFSET} + {BASE}]{PREINCREMENT}",
    overrides=[Override({"PREINCREMENT": 1},
                        "{REP}cread {DST}, [{OFFSET} + {IMMED}]{PREINCREMENT}",
                        (F("IMMED", 0, 11, Hex()),))],
    fields=[F("BASE", 0, 11, CONTROL), F("DST", 16, 20, DST)], patterns=[P(12, 13, "00")],
    doc="read a control register",
)
class MesaSqeOffset(Kind):
    """Mesa prints the pre-increment offset of sread/swrite as "0x" followed by the *decimal*
    value (its description types the field uint). We print the same, so listings stay
    identical, and read it as Mesa's assembler does: as hex. Offsets of 10 and above therefore
    do not survive a text round trip, in Mesa's tools or ours."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return f"0x{value}"


SQE_PRE = (F("IMMED", 0, 11, MesaSqeOffset()),)
MEM = [
    Bitset("store", store, gen=A5, patterns=[P(15, bits="0"), P(27, 31, "10101")]),
    Bitset("store", store, gen=FROM6, patterns=[P(15, bits="0"), P(27, 31, "10100")]),
    Bitset("cwrite", cwrite, gen=A5, patterns=[P(15, bits="1")]),
    Bitset("cwrite", cwrite, gen=FROM6, patterns=[P(15, bits="0")]),
    Bitset(
        "swrite", control, gen=FROM6, doc="write an SQE register",
        display="{REP}swrite {SRC}, [{OFFSET} + {BASE}]{PREINCREMENT}",
        overrides=[Override({"PREINCREMENT": 1},
                            "{REP}swrite {SRC}, [{OFFSET} + {IMMED}]{PREINCREMENT}", SQE_PRE)],
        fields=[F("BASE", 0, 11, SQE), F("SRC", 16, 20, SRC)],
        patterns=[P(12, 13, "00"), P(15, bits="1"), P(27, 31, "10101")],
    ),
    Bitset(
        "load", control, gen=FROM6, doc="load from memory (high half from @LOAD_STORE_HI)",
        display="{REP}load {DST}, [{OFFSET} + {IMMED}]{PREINCREMENT}",
        fields=[F("IMMED", 0, 11, Hex()), F("DST", 16, 20, DST)],
        patterns=[P(12, 13, "00"), P(15, bits="0"), P(27, 31, "10110")],
    ),
    Bitset("cread", cread, gen=A5, patterns=[P(15, bits="1"), P(27, 31, "10110")]),
    Bitset("cread", cread, gen=FROM6, patterns=[P(15, bits="0"), P(27, 31, "10111")]),
    Bitset(
        "sread", control, gen=FROM6, doc="read an SQE register",
        display="{REP}sread {DST}, [{OFFSET} + {BASE}]{PREINCREMENT}",
        overrides=[Override({"PREINCREMENT": 1},
                            "{REP}sread {DST}, [{OFFSET} + {IMMED}]{PREINCREMENT}", SQE_PRE)],
        fields=[F("BASE", 0, 11, SQE), F("DST", 16, 20, DST)],
        patterns=[P(12, 13, "00"), P(15, bits="1"), P(27, 31, "10111")],
    ),
]

# Flow control. Every branch-like instruction has one delay slot.
branch = Bitset("#branch", instruction, fields=[
    F("OFFSET", 0, 15, Branch(relative=True)), F("SRC", 21, 25, SRC)])
branch_immed = Bitset("#branch-immed", branch, display="{NAME} {SRC}, {IMMED}, {OFFSET}",
                      fields=[F("IMMED", 16, 20, Hex())])
branch_bit = Bitset("#branch-bit", branch, display="{NAME} {SRC}, {BIT}, {OFFSET}",
                    fields=[F("BIT", 16, 20, UInt("b"))])
no_args = Bitset("#instruction-no-args", instruction, display="{NAME}",
                 patterns=[P(0, 25, "x" * 26)])
ret = Bitset("#ret", instruction, display="{NAME}",
             patterns=[P(26, 31, "110100"), P(0, 24, "x" * 25)])
FLOW = [
    Bitset("brnei", branch_immed, displayname="brne", patterns=[P(26, 31, "110000")],
           doc="branch if src != immediate"),
    Bitset("breqi", branch_immed, displayname="breq", patterns=[P(26, 31, "110001")],
           doc="branch if src == immediate"),
    Bitset("brneb", branch_bit, displayname="brne", patterns=[P(26, 31, "110010")],
           overrides=[Override({"BIT": 0, "SRC": 0}, "jump {OFFSET}")],
           doc="branch if bit not set; brne $00, b0 is jump"),
    Bitset("breqb", branch_bit, displayname="breq", patterns=[P(26, 31, "110011")],
           doc="branch if bit set"),
    Bitset("ret", ret, patterns=[P(25, bits="0")], doc="return from call"),
    Bitset("iret", ret, patterns=[P(25, bits="1")], doc="return from preemption handler"),
    Bitset("call", instruction, display="call {TARGET}",
           fields=[F("TARGET", 0, 25, Branch(relative=False, call=True))],
           patterns=[P(26, 31, "110101")], doc="call; return address on the SQE stack"),
    Bitset("waitin", no_args, patterns=[P(26, 31, "110110")],
           doc="wait for the next packet header and jump to its handler"),
    Bitset("bl", instruction, display="bl {TARGET}",
           fields=[F("TARGET", 0, 25, Branch(relative=False, call=True))],
           patterns=[P(26, 31, "111000")], doc="branch and link"),
    Bitset("jumpa", instruction, gen=A7, display="jumpa {TARGET}",
           fields=[F("TARGET", 0, 25, Branch(relative=False))],
           patterns=[P(26, 31, "111001")], doc="jump to an absolute address"),
    Bitset("jumpr", instruction, gen=A7, display="jump {SRC1}", displayname="jump",
           fields=[F("SRC1", 0, 4, SRC)],
           patterns=[P(5, 19, "0" * 15), P(20, 25, "110111"), P(26, 31, "110111")],
           doc="jump to the address in a register"),
    Bitset("sret", instruction, gen=A7, display="sret",
           patterns=[P(0, 19, "0" * 20), P(20, 25, "110110"), P(26, 31, "110111")],
           doc="return to $lr (after bl)"),
    Bitset("setsecure", no_args, display="setsecure $02, {TARGET}",
           fields=[Field("TARGET", 0, 15, Branch(relative=True), const=3)],
           patterns=[P(26, 31, "111011")],
           doc="switch secure mode per $02; skips the next two instructions on success"),
]

NOPS = [
    Bitset("nop", instruction_rep, gen=A5, display="{REP}nop",
           patterns=[P(0, 25, "0" * 26), P(27, 31, "00000")]),
    Bitset("nop", instruction_rep, gen=FROM6, display="{REP}nop",
           patterns=[P(0, 25, "01" + "0" * 24), P(27, 31, "00000")]),
]

BITSETS: list[Bitset] = [
    instruction, instruction_rep, alu_2src, alu_1src, alu_2src_immed, alu_2src_immed12,
    alu_1src_immed, *ALU, setclrbit6, setclrbit7, bitfield, *BITS, movi, *MOVI, control,
    store, cwrite, cread, *MEM, branch, branch_immed, branch_bit, no_args, ret, *FLOW, *NOPS,
]


@cache
def isa_for(gen: int) -> ISA:
    """The afuc ISA of one generation (5, 6 or 7)."""
    if gen not in GENERATIONS:
        raise ValueError(f"afuc generation must be one of {GENERATIONS}, not {gen}")
    return ISA(f"afuc a{gen}xx", BITSETS, gen)


def nop_literal(value: int, gen: int) -> int:
    """A NOP carrying a 24-bit payload (a6xx+ NOPs have 0x01 in the top byte)."""
    return value if gen < 6 else value | (1 << 24)
