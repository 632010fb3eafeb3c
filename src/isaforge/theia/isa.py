"""The THEIA instruction sets as data: the 64-bit VP instruction and the 32-bit CP instruction.

Field layout as the beta_2.0 RTL and its compiler use it (see refdata/theia/isa_probe):

VP word (64 bits), four sections, operation | destination | source 1 | source 0::

    63     IMM        1: bits 33..0 are an immediate (the compiler prints them as one hex I(..))
    62     S3         "unscaled": turns every shown (scaled) marker into (unscaled)
    61..59 M2 M1 M0   scale marker bits (SCOP is bits 62..59); for LOGIC/IO the same bits
                      are the sub-operation, and the compiler prints them the same way
    58     EOF        end of flow (never shown by the compiler's listing)
    57     BR         branch; 56..54 BOP branch condition
    53..51 RSV        reserved
    50..48 OPCODE     NOP ADD DIV MUL SQRT LOGIC IO RSVR2
    47..45 MODE       IMM=0: three independent "+ offset" bits (dst, src1, src0);
                      IMM=1: one of eight addressing modes (the listing differs per mode)
    44..42 WE         write enables x y z
    41..34 DST        destination index (the absolute target of a branch)
    33..17 SRC1       sign x y z (33..31), swizzle x y z (30..25, two bits each), index (24..17)
    16..0  SRC0       the same layout

The display templates reproduce the listing text of the upstream compiler (``code.list``)
character for character; a few encodings print the same text (the EOF bit, the reserved
bits, S3 with no marker shown, the immediate of IMM mode 2, SRC0 of IMM mode 6, the hidden
markers M1/M0 of immediate forms, BOP of a non-branch). For those the disassembler appends
``{FIELD=value}`` annotations in its assembler form, so every decodable word reads back.

CP word (32 bits): OPCODE 31..24, DST 23..16, SRC1 15..8, SRC0 7..0; ASSIGN has a 16-bit
literal in 15..0; COPYBLOCK holds the destination id / source / destination-and-length
registers in 23..16 / 15..8 / 7..0.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..core.asm import BranchRef
from ..core.isa import ISA, Bitset, Enum, F, Field, Kind, Override, P, UInt

# --------------------------------------------------------------------------------------------
# Tables
# --------------------------------------------------------------------------------------------

VP_OPCODES = {0: "NOP", 1: "ADD", 2: "DIV", 3: "MUL", 4: "SQRT", 5: "LOGIC", 6: "IO",
              7: "RSVR2"}  # 7 is reserved (Table 3); the compiler never emits it
BRANCH_TYPES = {0: "ALWAYS", 1: "ZERO", 2: "NOT_ZERO", 3: "SIGN", 4: "NOT_SIGN",
                5: "ZERO_OR_SIGN", 6: "ZERO_OR_NOT_SIGN"}  # 7: shown as a number

CP_OPCODES = ["NOP", "DELIVERCOMMAND", "ADD", "SUB", "AND", "OR", "BRANCH", "BEQ", "BNE", "BG",
              "BL", "BGE", "BLE", "ASSIGN", "COPYBLOCK", "EXIT", "NOT", "SHL", "SHR"]

# swizzle codes per lane; code 3 has no name in the compiler (the RTL reads it as a constant,
# see isa_probe r60); we print it as "w"
SWIZZLE_LETTERS = ("xzyw", "yzxw", "zyxw")

# --------------------------------------------------------------------------------------------
# THEIA operand kinds
# --------------------------------------------------------------------------------------------


class WriteMask(Kind):
    """Three write-enable bits (x=4, y=2, z=1) shown as ``x_z``."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return "".join(c if value & b else "_" for c, b in zip("xyz", (4, 2, 1), strict=True))

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is None or not re.fullmatch(r"[x_][y_][z_]", tok.text):
            ts.expected("a write mask like 'x_z'")
            return None
        ts.next()
        return sum(b for c, b in zip(tok.text, (4, 2, 1), strict=True) if c != "_")


class Swizzle(Kind):
    """Signs (3 bits) and swizzle (3 x 2 bits) of a source: ``-xyz``, ``x-z-y``."""

    _RE = re.compile(r"(-?)([xyzw])(-?)([xyzw])(-?)([xyzw])")

    def format(self, value: int, width: int, ctx: Any) -> str:
        out = []
        for lane in range(3):
            sign = (value >> (8 - lane)) & 1
            code = (value >> (4 - 2 * lane)) & 3
            out.append(("-" if sign else "") + SWIZZLE_LETTERS[lane][code])
        return "".join(out)

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        m = self._RE.fullmatch(tok.text) if tok is not None else None
        if m is None:
            ts.expected("a swizzle like 'xyz' or '-x-y-z'")
            return None
        ts.next()
        value = 0
        for lane in range(3):
            if m.group(1 + 2 * lane):
                value |= 1 << (8 - lane)
            value |= SWIZZLE_LETTERS[lane].index(m.group(2 + 2 * lane)) << (4 - 2 * lane)
        return value


class Marker(Kind):
    """A one-bit marker printed with a trailing space when set, e.g. ``(scaled) ``."""

    optional = True

    def __init__(self, text: str) -> None:
        self.text = text

    def format(self, value: int, width: int, ctx: Any) -> str:
        return self.text + " " if value else ""

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is not None and tok.text == self.text:
            ts.next()
            return 1
        return 0


class NamedOrNumber(Enum):
    """An enum whose unnamed values print (and read back) as plain numbers."""

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is not None and tok.text.isdigit():
            ts.next()
            return int(tok.text)
        return super().parse(ts, ctx)


class HexNum(Kind):
    """Hexadecimal without a prefix, as C++ ``std::hex`` prints it: ``I(cafe)``."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return f"{value:x}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is None or not re.fullmatch(r"(?:0[xX])?[0-9a-fA-F]+", tok.text):
            ts.expected("a hex number")
            return None
        ts.next()
        return int(tok.text, 16)


class Target(Kind):
    """An absolute branch target ``@36``, or ``@Label`` when the context names it."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        name = ctx.label_for(value) if ctx is not None and hasattr(ctx, "label_for") else None
        return f"@{name}" if name else f"@{value}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is None or not re.fullmatch(r"@(?:\d+|[A-Za-z_]\w*)", tok.text):
            ts.expected("a branch target '@N' or '@label'")
            return None
        ts.next()
        name = tok.text[1:]
        return int(name) if name.isdigit() else BranchRef(name, False, tok.loc)


# --------------------------------------------------------------------------------------------
# VP: 64-bit instruction
# --------------------------------------------------------------------------------------------

_dec = UInt()
_S = "(scaled)"
_U = "(unscaled)"


def _markers(text: str) -> tuple[Field, ...]:
    return (F("M2", 61, kind=Marker(text)), F("M1", 60, kind=Marker(text)),
            F("M0", 59, kind=Marker(text)))


VP_ROOT = Bitset(
    "#vp",
    fields=[
        F("S3", 62), *_markers(_S), F("EOF", 58), F("BOP", 54, 56, NamedOrNumber(BRANCH_TYPES)),
        F("RSV", 51, 53), F("OPCODE", 48, 50, Enum(VP_OPCODES)), F("WE", 42, 44, WriteMask()),
        F("DST", 34, 41),
    ],
    doc="operation and destination sections shared by every VP form",
)

_REG_FIELDS = [F("SW1", 25, 33, Swizzle()), F("A1", 17, 24), F("SW0", 8, 16, Swizzle()),
               F("A0", 0, 7)]


def _scale_overrides(display: str) -> list[Override]:
    # S3=0 first: text without markers reads back as S3=0
    return [Override({"S3": 0}, display), Override({"S3": 1}, display, _markers(_U))]


def _reg_form(branch: bool, doff: int, s1off: int, s0off: int) -> Bitset:
    if branch:
        dst = "@[{DST}+ offset]" if doff else "{DST}"
        head = "{OPCODE} <BRANCH.{BOP}> {M2}"
    else:
        dst = "R[{DST}+ offset]" if doff else "R{DST}"
        head = "{OPCODE} {M2}"
    a1 = "[{A1} + offset]" if s1off else "{A1}"
    a0 = "[{A0} + offset]" if s0off else "{A0}"
    display = f"{head}{dst}.{{WE}} {{M0}}R{a1}.{{SW1}} {{M1}}R{a0}.{{SW0}}"
    fields = list(_REG_FIELDS)
    if branch and not doff:
        fields.append(F("DST", 34, 41, Target()))
    return Bitset(
        f"reg{'.br' if branch else ''}.{doff}{s1off}{s0off}",
        extends=VP_ROOT,
        fields=fields,
        patterns=[P(63, bits="0"), P(57, bits=str(int(branch))), P(47, bits=str(doff)),
                  P(46, bits=str(s1off)), P(45, bits=str(s0off))],
        display=display,
        overrides=_scale_overrides(display),
    )


# IMM=1: the destination and the tail of the listing for each addressing mode
_IMM_DST = {0: "{DST}]", 1: "{DST} + offset ]", 2: "{DST} + offset ]",
            3: "{DST}+ R[{SRC1} + offset] + offset ]", 4: "{DST}]", 5: "{DST} + offset ]",
            6: "{DST} + offset ]", 7: "{DST} + offset ]"}
_IMM_TAIL = {
    0: "I({IMMV}) R[DST]",
    1: "I({IMMV}) R[DST+offset] *** {SRC1X} , {SRC1Y}",
    2: "??????",
    3: "0 R[{SRC0} + offset]",
    4: "I({IMMV}) 0",
    5: "I({IMMV}) 0",
    6: " R[{SRC1} + offset + index] 0",
    7: " R[{SRC1} + offset + index] R[{SRC0} + offset]",
}
_IMM_MODE_DOC = {
    0: "R[DST] = IMMV op R[DST]", 1: "R[DST+offset] = IMMV op R[DST+offset]",
    2: "reserved", 3: "array store: R[DST + offset + R[SRC1+offset].x] = 0 op R[SRC0+offset]",
    4: "R[DST] = IMMV op 0", 5: "R[DST+offset] = IMMV op 0",
    6: "indexed load: SRC1 = R[SRC1 + offset + index]",
    7: "indexed load with SRC0 = R[SRC0 + offset]",
}
_IMMV = F("IMMV", 0, 33, HexNum())
# views: fields that overlap IMMV (their bits are read from the word, never set alone)
VIEW_FIELDS = frozenset({"SRC1X", "SRC1Y"})


def _imm_form(branch: bool, mode: int) -> Bitset:
    head = "{OPCODE} <BRANCH.{BOP}> {M2}@*R[" if branch else "{OPCODE} {M2}R["
    display = f"{head}{_IMM_DST[mode]}.{{WE}} {_IMM_TAIL[mode]}"
    if mode in (3, 6, 7):
        fields = [F("SRC1", 17, 33), F("SRC0", 0, 16)]
    elif mode == 1:
        fields = [_IMMV, F("SRC1X", 17, 33, HexNum()), F("SRC1Y", 17, 33, HexNum())]
    else:
        fields = [_IMMV]
    return Bitset(
        f"imm{'.br' if branch else ''}.{mode}",
        extends=VP_ROOT,
        fields=fields,
        patterns=[P(63, bits="1"), P(57, bits=str(int(branch))), P(45, 47, mode)],
        display=display,
        overrides=_scale_overrides(display),
        doc=_IMM_MODE_DOC[mode],
    )


VP_BITSETS: list[Bitset] = [VP_ROOT]
for _br in (False, True):
    for _m in range(8):
        VP_BITSETS.append(_reg_form(_br, _m >> 2, (_m >> 1) & 1, _m & 1))
    for _m in range(8):
        VP_BITSETS.append(_imm_form(_br, _m))

# --------------------------------------------------------------------------------------------
# CP: 32-bit control-processor instruction
# --------------------------------------------------------------------------------------------

CP_ROOT = Bitset("#cp", doc="OPCODE in bits 31..24; each form names the other 24 bits")
_CP_RRR = [F("DST", 16, 23), F("SRC1", 8, 15), F("SRC0", 0, 7)]


def _cp_form(code: int, name: str) -> Bitset:
    if name == "ASSIGN":
        return Bitset(name, extends=CP_ROOT, patterns=[P(24, 31, code)],
                      fields=[F("DST", 16, 23), F("LIT", 0, 15)],
                      display="{NAME} R{DST} I({LIT} )")
    if name == "COPYBLOCK":
        return Bitset(name, extends=CP_ROOT, patterns=[P(24, 31, code)],
                      fields=[F("DSTID", 16, 23), F("SRCOFF", 8, 15), F("DSTOFF", 0, 7)],
                      display="{NAME} DstId: R{DSTID} SrcOffset: R{SRCOFF} "
                              "DstOffsetAndLen: R{DSTOFF}")
    return Bitset(name, extends=CP_ROOT, patterns=[P(24, 31, code)], fields=_CP_RRR,
                  display="{NAME} R{DST} R{SRC1} R{SRC0}")


CP_BITSETS: list[Bitset] = [CP_ROOT, *(_cp_form(c, n) for c, n in enumerate(CP_OPCODES))]


@cache
def vp_isa() -> ISA:
    """The VP instruction set (64-bit words)."""
    return ISA("theia-vp", VP_BITSETS, gen=0, size=64)


@cache
def cp_isa() -> ISA:
    """The control-processor instruction set (32-bit words)."""
    return ISA("theia-cp", CP_BITSETS, gen=0, size=32)


def isa_for(cp: bool = False) -> ISA:
    return cp_isa() if cp else vp_isa()


def mnemonics(cp: bool = False) -> frozenset[str]:
    """The instruction names the assembler accepts."""
    return frozenset(CP_OPCODES) if cp else frozenset(VP_OPCODES.values())


__all__ = [
    "BRANCH_TYPES",
    "CP_OPCODES",
    "VIEW_FIELDS",
    "VP_OPCODES",
    "HexNum",
    "Marker",
    "NamedOrNumber",
    "Swizzle",
    "Target",
    "WriteMask",
    "cp_isa",
    "isa_for",
    "mnemonics",
    "vp_isa",
]
