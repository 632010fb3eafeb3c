"""A VP instruction under construction, in the four sections the upstream compiler builds.

The compiler sets and clears individual bits of the operation (16 bits), destination
(14 bits), source 1 and source 0 (17 bits each) as it goes, and later statements patch bits of
instructions emitted earlier (branch targets, destinations of expression results), so the
instruction is kept as those four integers until the end. Layout (see ``isaforge.theia.isa``):

* operation: 15 IMM, 14..11 scale / LOGIC / IO sub-operation, 10 EOF, 9 branch,
  8..6 branch type, 2..0 opcode;
* destination: 13 "dest zero" (M2), 12 source-1 displaced (M1), 11 source-0 displaced (M0),
  10..8 write enables x y z, 7..0 register or branch target;
* sources: 16..14 signs x y z, 13..8 swizzle (two bits per lane), 7..0 register.
"""

from __future__ import annotations

from dataclasses import dataclass

# opcodes
NOP, ADD, DIV, MUL, SQRT, LOGIC, IO = range(7)
# write channels
WE_X, WE_Y, WE_Z, WE_XYZ = 4, 2, 1, 7
# branch types
ALWAYS, IF_ZERO, IF_NOT_ZERO, IF_SIGN, IF_NOT_SIGN, IF_ZERO_OR_SIGN, IF_ZERO_OR_NOT_SIGN = range(7)
# sub-operations kept in the scale bits
LOGIC_AND, LOGIC_OR = 0, 1
IO_OMWRITE, IO_TMREAD = 0, 1
ROT_SRC1_LEFT, ROT_RESULT_RIGHT = 2, 12

# swizzle codes per lane (x, y, z): the letter each lane reads
SWIZZLE_CODES = ({"X": 0, "Z": 1, "Y": 2}, {"Y": 0, "Z": 1, "X": 2}, {"Z": 0, "Y": 1, "X": 2})

RETURN_VALUE_REG = 1
RETURN_ADDRESS_REG = 2
CONTROL_REG0 = 2  # R2.z: thread control
FRAME_REG = 3  # R3.x: frame offset, R3.y: previous frame, R3.z: array index


@dataclass
class VpInstr:
    op: int = 0
    dst: int = 0
    src1: int = 0
    src0: int = 0
    symbol: str | None = None  # call target not yet defined ("@Name")
    symbol_loc: object = None
    comment: str = ""
    line: int = -1  # 1-based line of the preprocessed source quoted in the listing
    triple: bool = False  # last of the three instructions of a (a, b, c) constant
    target: int = 0  # the destination as set, before it is cut to 8 bits

    # -- operation section ---------------------------------------------------------------------
    def set_code(self, code: int) -> None:
        self.op = (self.op & ~7) | code

    def set_imm(self, value: int) -> None:
        value &= 0xFFFFFFFF
        self.op |= 1 << 15
        self.src0 = value & 0x1FFFF
        self.src1 = (value >> 17) & 0x1FFFF

    def set_imm_bit(self, on: bool) -> None:
        self.op = self.op | 1 << 15 if on else self.op & ~(1 << 15)

    @property
    def imm(self) -> bool:
        return bool(self.op >> 15 & 1)

    def set_scale(self, value: int) -> None:
        self.op = (self.op & ~(0xF << 11)) | (value & 0xF) << 11

    def or_scale(self, value: int) -> None:
        self.op |= (value & 0xF) << 11

    def set_eof(self) -> None:
        self.op |= 1 << 10

    def set_branch(self, btype: int) -> None:
        self.op |= 1 << 9
        self.op = (self.op & ~(7 << 6)) | btype << 6

    @property
    def opcode(self) -> int:
        return self.op & 7

    # -- destination section -------------------------------------------------------------------
    def _dbit(self, bit: int, on: bool) -> None:
        self.dst = self.dst | 1 << bit if on else self.dst & ~(1 << bit)

    def dest_zero(self, on: bool) -> None:
        self._dbit(13, on)

    def src1_displaced(self, on: bool) -> None:
        self._dbit(12, on)

    def src0_displaced(self, on: bool) -> None:
        self._dbit(11, on)

    def addressing(self, dst_zero: bool, src1_disp: bool, src0_disp: bool) -> None:
        self.dest_zero(dst_zero)
        self.src1_displaced(src1_disp)
        self.src0_displaced(src0_disp)

    def clear_we(self) -> None:
        self.dst &= ~(7 << 8)

    def set_we(self, mask: int) -> None:
        self.dst |= (mask & 7) << 8

    def set_dest(self, address: int) -> None:
        self.target = address
        self.dst = (self.dst & ~0xFF) | (address & 0xFF)

    # -- sources -------------------------------------------------------------------------------
    def set_src_addr(self, which: int, address: int) -> None:
        if which == 1:
            self.src1 = (self.src1 & ~0xFF) | (address & 0xFF)
        else:
            self.src0 = (self.src0 & ~0xFF) | (address & 0xFF)

    def set_swizzle(self, which: int, lanes: tuple[str, str, str]) -> None:
        """Lanes like ``("X", "-Y", "Z")``: signs are only ever set, never cleared."""
        word = self.src1 if which == 1 else self.src0
        for lane, item in enumerate(lanes):
            if item.startswith("-"):
                word |= 1 << (16 - lane)
            shift = 12 - 2 * lane
            word = (word & ~(3 << shift)) | SWIZZLE_CODES[lane][item[-1]] << shift
        if which == 1:
            self.src1 = word
        else:
            self.src0 = word

    def set_signs(self, which: int) -> None:
        if which == 1:
            self.src1 |= 7 << 14
        else:
            self.src0 |= 7 << 14

    # -- the word ------------------------------------------------------------------------------
    def word(self, dest: int | None = None) -> int:
        dst = self.dst if dest is None else dest & 0x3FFF
        return ((self.op & 0xFFFF) << 48 | (dst & 0x3FFF) << 34 | (self.src1 & 0x1FFFF) << 17
                | (self.src0 & 0x1FFFF))
