"""What one THEIA VP instruction computes, exactly as the beta_2.0 RTL computes it.

Pure functions on Python ints, shared by the ISA-level simulator (:mod:`.vp`) and the
cycle-level model. A *lane* is a 32-bit unsigned int; a register row or operand is a tuple
``(x, y, z)`` of lanes. Nothing here holds state.

The stable interface (import these names; they will not change):

Constants
    ``MASK32``, ``SCALE`` (17, fixed in the RTL), ``SWIZZLE_CONSTANT`` (0x20: what swizzle
    code 11 yields), ``SQRT_MISS`` (0xCACA: the square-root LUT's default entry).

Instruction fields
    ``Fields`` / ``fields(word)``: every field of a 64-bit VP word, by name.

Addressing (the IIU's operand and destination selection)
    ``addressing(word, offset, index) -> Addressing``: which RF rows SRC1/SRC0 read (or the
    immediate / zero that replaces them), and the destination row. ``offset`` is the frame
    offset (R3.x, 8 bits), ``index`` the index register (R3.z, 8 bits). For IMM mode 011
    the destination still needs ``+ R[src1_addr].x`` (the *raw* register value):
    ``Addressing.dst_for(raw_src1)`` does it.

Source modification (the SMU), in the RTL's order: sign, then scale, then swizzle
    ``modify(lanes, sign, swizzle, right_scale) -> lanes``;
    ``issue_sources(word, raw1, raw0) -> (src1, src0)`` applies what the RTL applies at issue:
    signs and swizzles of register operands (never of IMM forms), and the arithmetic right
    scale of SRC1 when SCOP bits 62 and 59 are both set. SRC0 is never scaled at issue, and
    a left scale is a no-op (both measured, isa_probe r63/r64).

Execution units
    ``add(a, b)``, ``mul(a, b, scaled)``, ``div(a, b, scale_dividend, scale_divisor)``,
    ``sqrt(a)``, ``logic(a, b, lop)`` on lane tuples (``a`` is SRC1, ``b`` SRC0), and the
    per-lane ``mul32``, ``div32``, ``sqrt32``;
    ``execute(word, src1, src0) -> lanes | None``: the result of ADD/DIV/MUL/SQRT/LOGIC with
    the SCOP controls of the word (None for NOP, IO and the reserved opcode 7, which
    produce no RF result here: IO is the memory system's business).

Flags and branches
    ``flags(result) -> (zero, sign)``: ZERO when all 96 result bits are 0, SIGN when all
    three lanes are negative (the RTL's definitions, not Table 9/10's per-lane ones);
    ``branch_taken(bop, zero, sign) -> bool`` (BOP 7 is never taken);
    ``branch_target(word, raw0) -> int``: the DST literal, or for IMM forms ``raw0.x``.

RTL semantics worth knowing (all measured by refdata/theia/isa_probe):

* MUL: 16 radix-4 partial products of ``|SRC1|`` (1x, 2x, 3x, each truncated to 32 bits)
  and ``|SRC0|``, summed in 64 bits, ``>> 17`` when SCOP bit 61 is set, negated when the
  signs differ, low 32 bits kept. Exact ``a*b mod 2**32`` only while ``3*|a| < 2**32``.
* DIV: dividend SRC1, divisor SRC0, both sign-extended to 64 bits and shifted ``<< 17`` when
  SCOP bit 60 (dividend) / bit 59 (divisor) is set and bit 61 is clear; magnitudes divided
  (truncation toward zero); divide by zero gives an all-ones magnitude; the sign is applied
  to the low 32 bits.
* SQRT: only SRC1.x is used; its fraction is dropped and the integer part (0..127) looked up
  in a Q17 table of ``floor(sqrt(n) * 2**17)``; when bit 24 is set the operand is first
  divided by 64 (bits 31..23) and the result doubled (not multiplied by 8); misses give
  0xCACA (doubled: 0x19594). The one result is replicated to x, y and z.
* LOGIC: SCOP bits 60..59 select AND (0), OR (1), or 0 (2, 3): NOT/SHL/SHR are not built,
  and LOP 4 (SHR) decodes as AND.
* Swizzle code 11 yields the constant 0x20 for that lane.
"""

from __future__ import annotations

from math import isqrt
from typing import NamedTuple

MASK32 = 0xFFFF_FFFF
MASK64 = (1 << 64) - 1
SCALE = 17
SWIZZLE_CONSTANT = 0x20
SQRT_MISS = 0xCACA

Lanes = tuple[int, int, int]
ZERO: Lanes = (0, 0, 0)

OP_NOP, OP_ADD, OP_DIV, OP_MUL, OP_SQRT, OP_LOGIC, OP_IO, OP_RSVD = range(8)
IO_OMWRITE, IO_TMREAD = 0, 1

# Q17 square roots of the integers 0..127 (the RTL's look-up table, computed, not copied)
SQRT_TABLE: tuple[int, ...] = tuple(isqrt(n << (2 * SCALE)) for n in range(128))


class Fields(NamedTuple):
    """The fields of a VP word (see :mod:`isaforge.theia.isa` for the layout)."""

    imm: int  # 63
    scop: int  # 62..59 (SCOP / LOP / IO operation)
    eof: int  # 58
    branch: int  # 57
    bop: int  # 56..54
    opcode: int  # 50..48
    mode: int  # 47..45 (dst+offset, src1+offset, src0+offset when imm=0)
    we: int  # 44..42 (x=4, y=2, z=1)
    dst: int  # 41..34
    sign1: int  # 33..31
    swz1: int  # 30..25
    addr1: int  # 24..17
    sign0: int  # 16..14
    swz0: int  # 13..8
    addr0: int  # 7..0
    immv: int  # 31..0 (the RTL uses 32 bits of the immediate)


def fields(word: int) -> Fields:
    """Split a 64-bit VP word into its fields."""
    return Fields(
        word >> 63 & 1, word >> 59 & 0xF, word >> 58 & 1, word >> 57 & 1, word >> 54 & 7,
        word >> 48 & 7, word >> 45 & 7, word >> 42 & 7, word >> 34 & 0xFF,
        word >> 31 & 7, word >> 25 & 0x3F, word >> 17 & 0xFF,
        word >> 14 & 7, word >> 8 & 0x3F, word & 0xFF, word & MASK32,
    )


# --------------------------------------------------------------------------------------------
# Addressing
# --------------------------------------------------------------------------------------------


class Addressing(NamedTuple):
    """Where an instruction's operands come from and where its result goes."""

    src1_addr: int | None  # RF row read for SRC1 (None: not read)
    src0_addr: int | None  # RF row read for SRC0 (None: SRC0 is zero)
    # when set, SRC1 *is* this value (the immediate masked by WE, or zero for IMM mode 011,
    # which reads R[src1_addr] only for its destination index)
    src1_value: Lanes | None
    dst: int  # destination row (before the IMM-mode-011 array index)
    dst_index_from_src1: bool  # IMM mode 011: dst += raw R[src1_addr].x

    def dst_for(self, raw_src1: Lanes | None) -> int:
        """The destination row, given the raw SRC1 register (needed for IMM mode 011)."""
        if self.dst_index_from_src1 and raw_src1 is not None:
            return (self.dst + raw_src1[0]) & 0xFF
        return self.dst


def immediate_lanes(word: int) -> Lanes:
    """The IMM value as the IIU presents it: IMMV in each lane whose write enable is set."""
    v = word & MASK32
    return (v if word >> 44 & 1 else 0, v if word >> 43 & 1 else 0, v if word >> 42 & 1 else 0)


def addressing(word: int, offset: int, index: int) -> Addressing:
    """Operand rows and destination of ``word`` (Table 17 as the RTL implements it)."""
    dst = word >> 34 & 0xFF
    a1 = word >> 17 & 0xFF
    a0 = word & 0xFF
    mode = word >> 45 & 7
    if not word >> 63:
        return Addressing(
            (a1 + offset) & 0xFF if mode & 2 else a1,
            (a0 + offset) & 0xFF if mode & 1 else a0,
            None,
            (dst + offset) & 0xFF if mode & 4 else dst,
            False,
        )
    dst_off = (dst + offset) & 0xFF
    imm = immediate_lanes(word)
    if mode == 0:  # R[DST] = IMMV op R[DST]
        return Addressing(None, dst, imm, dst, False)
    if mode == 1:  # R[DST+off] = IMMV op R[DST] (the RTL reads SRC0 undisplaced)
        return Addressing(None, dst, imm, dst_off, False)
    if mode == 2:  # R[DST+off] = R[SRC1] op R[SRC0+off+index]
        return Addressing(a1, (a0 + offset + index) & 0xFF, None, dst_off, False)
    if mode == 3:  # R[DST+off+R[SRC1].x] = 0 op R[SRC0+off]
        return Addressing(a1, (a0 + offset) & 0xFF, ZERO, dst_off, True)
    if mode == 4:  # R[DST] = IMMV op 0
        return Addressing(None, None, imm, dst, False)
    if mode == 5:  # R[DST+off] = IMMV op 0
        return Addressing(None, None, imm, dst_off, False)
    if mode == 6:  # R[DST] = R[SRC1+off+index] op 0
        return Addressing((a1 + offset + index) & 0xFF, None, None, dst, False)
    # mode 7: R[DST+off] = R[SRC1+off+index] op R[SRC0+off]
    return Addressing((a1 + offset + index) & 0xFF, (a0 + offset) & 0xFF, None, dst_off, False)


# --------------------------------------------------------------------------------------------
# Source modifiers (SMU)
# --------------------------------------------------------------------------------------------


def _sra(v: int) -> int:
    return ((v - (1 << 32) if v >> 31 else v) >> SCALE) & MASK32


def _pick(lanes: Lanes, code: int, order: tuple[int, int, int]) -> int:
    return SWIZZLE_CONSTANT if code == 3 else lanes[order[code]]


def modify(lanes: Lanes, sign: int, swizzle: int, right_scale: bool = False) -> Lanes:
    """Sign (3 bits, x=4), then arithmetic ``>> 17`` if ``right_scale``, then swizzle
    (6 bits, x in 5..4: 00 keep, 01/10 the other lanes as in Tables 26-31, 11 = 0x20)."""
    x, y, z = lanes
    if sign:
        if sign & 4:
            x = -x & MASK32
        if sign & 2:
            y = -y & MASK32
        if sign & 1:
            z = -z & MASK32
    if right_scale:
        x, y, z = _sra(x), _sra(y), _sra(z)
    if swizzle:
        v = (x, y, z)
        x = _pick(v, swizzle >> 4, (0, 2, 1))
        y = _pick(v, swizzle >> 2 & 3, (1, 2, 0))
        z = _pick(v, swizzle & 3, (2, 1, 0))
    return (x, y, z)


def src1_right_scale(word: int) -> bool:
    """The SMU scales SRC1 right at issue when SCOP bits 62 and 59 are both set."""
    return word >> 59 & 0b1001 == 0b1001


def issue_sources(word: int, raw1: Lanes, raw0: Lanes) -> tuple[Lanes, Lanes]:
    """The operands the reservation station receives, from the raw operand values."""
    if word >> 63:  # IMM forms: no sign or swizzle
        src1 = modify(raw1, 0, 0, True) if src1_right_scale(word) else raw1
        return src1, raw0
    src1 = modify(raw1, word >> 31 & 7, word >> 25 & 0x3F, src1_right_scale(word))
    src0 = modify(raw0, word >> 14 & 7, word >> 8 & 0x3F, False)
    return src1, src0


# --------------------------------------------------------------------------------------------
# Execution units
# --------------------------------------------------------------------------------------------


def mul32(a: int, b: int, scaled: bool) -> int:
    """One lane of the radix-4 multiplier (``a`` from SRC1, ``b`` from SRC0)."""
    sa = a >> 31
    sb = b >> 31
    ma = -a & MASK32 if sa else a
    mb = -b & MASK32 if sb else b
    if ma <= 0x5555_5555:  # 2|a| and 3|a| fit in 32 bits: the partial products are exact
        total = ma * mb
    else:
        m2 = ma << 1 & MASK32
        table = (0, ma, m2, (m2 + ma) & MASK32)
        total = 0
        for i in range(0, 32, 2):
            total += table[mb >> i & 3] << i
        total &= MASK64
    if scaled:
        total >>= SCALE
    if sa ^ sb:
        total = -total
    return total & MASK32


def div32(a: int, b: int, scale_dividend: bool, scale_divisor: bool) -> int:
    """One lane of the divider: ``a`` (SRC1) / ``b`` (SRC0), with the optional ``<< 17``."""
    dd = a | (MASK64 ^ MASK32) if a >> 31 else a
    dv = b | (MASK64 ^ MASK32) if b >> 31 else b
    if scale_dividend:
        dd = dd << SCALE & MASK64
    if scale_divisor:
        dv = dv << SCALE & MASK64
    neg = (dd ^ dv) >> 63
    mdd = -dd & MASK64 if dd >> 63 else dd
    mdv = -dv & MASK64 if dv >> 63 else dv
    q = mdd // mdv if mdv else MASK64
    return -q & MASK32 if neg else q & MASK32


def sqrt32(a: int) -> int:
    """The SQRT unit on one 32-bit operand."""
    if a >> 24 & 1:
        n = a >> 23
        v = SQRT_TABLE[n] if n < 128 else SQRT_MISS
        return (v & 0x3FFF_FFFF) << 1
    n = a >> SCALE
    return SQRT_TABLE[n] if n < 128 else SQRT_MISS


def add(a: Lanes, b: Lanes) -> Lanes:
    return ((a[0] + b[0]) & MASK32, (a[1] + b[1]) & MASK32, (a[2] + b[2]) & MASK32)


def mul(a: Lanes, b: Lanes, scaled: bool) -> Lanes:
    return (mul32(a[0], b[0], scaled), mul32(a[1], b[1], scaled), mul32(a[2], b[2], scaled))


def div(a: Lanes, b: Lanes, scale_dividend: bool, scale_divisor: bool) -> Lanes:
    return (div32(a[0], b[0], scale_dividend, scale_divisor),
            div32(a[1], b[1], scale_dividend, scale_divisor),
            div32(a[2], b[2], scale_dividend, scale_divisor))


def sqrt(a: Lanes) -> Lanes:
    r = sqrt32(a[0])
    return (r, r, r)


def logic(a: Lanes, b: Lanes, lop: int) -> Lanes:
    sel = lop & 3
    if sel == 0:
        return (a[0] & b[0], a[1] & b[1], a[2] & b[2])
    if sel == 1:
        return (a[0] | b[0], a[1] | b[1], a[2] | b[2])
    return ZERO


def execute(word: int, src1: Lanes, src0: Lanes) -> Lanes | None:
    """The result of the word's operation on the modified operands (None: no RF result)."""
    op = word >> 48 & 7
    if op == OP_ADD:
        return add(src1, src0)
    if op == OP_MUL:
        return mul(src1, src0, bool(word >> 61 & 1))
    if op == OP_DIV:
        unscaled = word >> 61 & 1
        return div(src1, src0, not unscaled and bool(word >> 60 & 1),
                   not unscaled and bool(word >> 59 & 1))
    if op == OP_SQRT:
        return sqrt(src1)
    if op == OP_LOGIC:
        return logic(src1, src0, word >> 59 & 7)
    return None


def swizzle_known(known: int, swizzle: int) -> int:
    """The defined lanes (x=4, y=2, z=1) of an operand after ``swizzle`` when ``known`` are
    those of the register (code 11 is a constant, always defined)."""
    if not swizzle or known == 7:
        return known
    v = (known >> 2 & 1, known >> 1 & 1, known & 1)
    out = 0
    for shift, bit, order in ((4, 4, (0, 2, 1)), (2, 2, (1, 2, 0)), (0, 1, (2, 1, 0))):
        code = swizzle >> shift & 3
        if code == 3 or v[order[code]]:
            out |= bit
    return out


def operand_known(word: int, src: int, known: int) -> int:
    """The defined lanes of SRC``src`` as its unit receives it, from the register's
    (``known``; 7 for an immediate): the swizzle moves them, IMM forms have none."""
    if word >> 63 or known == 7:
        return known
    return swizzle_known(known, word >> 25 & 0x3F if src == 1 else word >> 8 & 0x3F)


def result_known(word: int, known1: int, known0: int) -> int:
    """The defined lanes of the word's result from those of its operands as received
    (:func:`operand_known`): a lane computed from an undefined (x) lane is x, as in the
    RTL's Verilog arithmetic. SQRT reads SRC1.x only; a LOGIC op other than AND/OR and a
    TMREAD (words from TMEM) give defined lanes."""
    op = word >> 48 & 7
    if op == OP_SQRT:
        return 7 if known1 & 4 else 0
    if op == OP_IO or (op == OP_LOGIC and word >> 59 & 3 >= 2):
        return 7
    return known1 & known0


# --------------------------------------------------------------------------------------------
# Flags and branches
# --------------------------------------------------------------------------------------------


def flags(result: Lanes) -> tuple[bool, bool]:
    """(ZERO, SIGN) of a committed result: all 96 bits zero; all three lanes negative."""
    x, y, z = result
    return (x | y | z) == 0, bool(x >> 31 & y >> 31 & z >> 31)


def branch_taken(bop: int, zero: bool, sign: bool) -> bool:
    """The IIU's branch decision for BOP 0..7 (Table 32 as built: 100 is '>', i.e. !S & !Z)."""
    if bop == 0:
        return True
    if bop == 1:
        return zero
    if bop == 2:
        return not zero
    if bop == 3:
        return sign
    if bop == 4:
        return not sign and not zero
    if bop == 5:
        return sign or zero
    if bop == 6:
        return not sign or zero
    return False


def branch_target(word: int, raw0: Lanes) -> int:
    """Where a taken branch goes: the DST literal, or (IMM forms) the raw SRC0.x, 16 bits."""
    if word >> 63:
        return raw0[0] & 0xFFFF
    return word >> 34 & 0xFF


__all__ = [
    "IO_OMWRITE",
    "IO_TMREAD",
    "MASK32",
    "OP_ADD",
    "OP_DIV",
    "OP_IO",
    "OP_LOGIC",
    "OP_MUL",
    "OP_NOP",
    "OP_RSVD",
    "OP_SQRT",
    "SCALE",
    "SQRT_MISS",
    "SQRT_TABLE",
    "SWIZZLE_CONSTANT",
    "ZERO",
    "Addressing",
    "Fields",
    "Lanes",
    "add",
    "addressing",
    "branch_taken",
    "branch_target",
    "div",
    "div32",
    "execute",
    "fields",
    "flags",
    "immediate_lanes",
    "issue_sources",
    "logic",
    "modify",
    "mul",
    "mul32",
    "sqrt",
    "sqrt32",
    "src1_right_scale",
]
