"""RV32 as data: RV32I, M, Zicsr, Zaamo (+ lr/sc), Zba, Zbb and Tenstorrent's extensions.

The instruction set the five RISC-V cores of a Blackhole Tensix tile implement, as tt-metal's
firmware is built for it (ELF attribute ``rv32i2p0_m2p0_zmmul1p0_zaamo1p0_zba1p0_zbb1p0_
xtttensixbh1p0_xttzbkb1p0``):

* ``xttzbkb`` is a subset of the scalar-crypto Zbkb extension: ``brev8`` and ``pack`` (the
  two instructions Tenstorrent's GCC enables for it, ``TARGET_XTT_ZBKB`` in sfpi-gcc's
  ``crypto.md``). ``zext.h`` is ``pack rd, rs, zero``.
* ``xtttensixbh`` is the ``.ttinsn`` word: a 32-bit word whose low two bits are not ``11``
  (the space other cores give to compressed instructions) holds a Tensix instruction rotated
  left by two bits, and means exactly ``sw`` of that instruction to 0xFFE40000
  (tt-isa-documentation, BabyRISCV/PushTensixInstruction.md). The cores have no C extension.

Templates print exactly what Tenstorrent's objdump prints (GNU binutils' RISC-V syntax, ABI
register names, aliases such as ``li``/``mv``/``ret``/``beqz``/``zext.h`` chosen in the same
order as its opcode table). Branch and jump targets print as objdump does: ``0x3914``, or
``3914 <main+0x9c>`` when the context names the address.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from ..core.isa import (
    ISA,
    Bitset,
    F,
    Hex,
    Int,
    Kind,
    Override,
    P,
    Pattern,
    Split,
    UInt,
    sign_extend,
)

#: the ISA string of the firmware this description follows
ARCH = "rv32i2p0_m2p0_zmmul1p0_zaamo1p0_zba1p0_zbb1p0_xtttensixbh1p0_xttzbkb1p0"

ABI_NAMES = (
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2",
    "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
    "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
)  # fmt: skip
REG_NUMBERS: dict[str, int] = {n: i for i, n in enumerate(ABI_NAMES)}
REG_NUMBERS.update({f"x{i}": i for i in range(32)})
REG_NUMBERS["fp"] = 8

#: where ``.ttinsn`` (and ``sw`` to the instruction buffer) pushes a Tensix instruction
INSTRN_BUF_BASE = 0xFFE40000


def _csr_names() -> dict[int, str]:
    """CSR numbers binutils names under privileged spec 1.11 (the firmware's), plus F/V/Zkr."""
    names = {
        0x001: "fflags", 0x002: "frm", 0x003: "fcsr", 0x008: "vstart", 0x009: "vxsat",
        0x00A: "vxrm", 0x00F: "vcsr", 0x015: "seed",
        0x100: "sstatus", 0x104: "sie", 0x105: "stvec", 0x106: "scounteren",
        0x140: "sscratch", 0x141: "sepc", 0x142: "scause", 0x143: "stval", 0x144: "sip",
        0x180: "satp",
        0x300: "mstatus", 0x301: "misa", 0x302: "medeleg", 0x303: "mideleg", 0x304: "mie",
        0x305: "mtvec", 0x306: "mcounteren", 0x320: "mcountinhibit", 0x340: "mscratch",
        0x341: "mepc", 0x342: "mcause", 0x343: "mtval", 0x344: "mip",
        0x7A0: "tselect", 0x7A1: "tdata1", 0x7A2: "tdata2", 0x7A3: "tdata3",
        0x7B0: "dcsr", 0x7B1: "dpc", 0x7B2: "dscratch0", 0x7B3: "dscratch1",
        0xB00: "mcycle", 0xB02: "minstret", 0xB80: "mcycleh", 0xB82: "minstreth",
        0xC00: "cycle", 0xC01: "time", 0xC02: "instret", 0xC20: "vl", 0xC21: "vtype",
        0xC22: "vlenb", 0xC80: "cycleh", 0xC81: "timeh", 0xC82: "instreth",
        0xF11: "mvendorid", 0xF12: "marchid", 0xF13: "mimpid", 0xF14: "mhartid",
    }  # fmt: skip
    for i in range(4):
        names[0x3A0 + i] = f"pmpcfg{i}"
    for i in range(16):
        names[0x3B0 + i] = f"pmpaddr{i}"
    for i in range(3, 32):
        names[0xC00 + i] = f"hpmcounter{i}"
        names[0xC80 + i] = f"hpmcounter{i}h"
        names[0xB00 + i] = f"mhpmcounter{i}"
        names[0xB80 + i] = f"mhpmcounter{i}h"
        names[0x320 + i] = f"mhpmevent{i}"
    return names


CSR_NAMES: dict[int, str] = _csr_names()
CSR_NUMBERS: dict[str, int] = {n: i for i, n in CSR_NAMES.items()}

FENCE_SETS = ("unknown", "w", "r", "rw", "o", "ow", "or", "orw",
              "i", "iw", "ir", "irw", "io", "iow", "ior", "iorw")  # fmt: skip


# --------------------------------------------------------------------------------------------
# Operand kinds
# --------------------------------------------------------------------------------------------


class Reg(Kind):
    """An integer register: ABI name when printed; ABI name, ``xN`` or ``fp`` when read."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return ABI_NAMES[value]

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        n = REG_NUMBERS.get(tok.text) if tok is not None else None
        if n is None:
            ts.expected("a register")
            return None
        ts.next()
        return n


def _parse_immediate(ts: Any, ctx: Any) -> Any:
    """An immediate: the assembler's context reads ``%hi(x)``/``%lo(x)`` and labels."""
    if ctx is not None and hasattr(ctx, "immediate"):
        return ctx.immediate(ts)
    return Kind.parse(Kind(), ts, ctx)


class Imm(Int):
    """A signed immediate, in decimal."""

    def parse(self, ts: Any, ctx: Any) -> Any:
        return _parse_immediate(ts, ctx)


class HexImm(Kind):
    """An unsigned immediate printed ``0x%x`` (``lui``'s upper bits, shift amounts)."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return f"0x{value:x}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        return _parse_immediate(ts, ctx)


class Csr(Kind):
    """A CSR number: its name when binutils knows one, else ``0x%x``."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return CSR_NAMES.get(value) or f"0x{value:x}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is not None and tok.text in CSR_NUMBERS:
            ts.next()
            return CSR_NUMBERS[tok.text]
        return super().parse(ts, ctx)


class FenceSet(Kind):
    """A fence's predecessor or successor set: letters of ``iorw``."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return FENCE_SETS[value]

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is not None and tok.text in FENCE_SETS:  # objdump prints an empty set "unknown"
            ts.next()
            return FENCE_SETS.index(tok.text)
        if tok is not None and tok.text == "0":
            ts.next()
            return 0
        ts.expected("a fence set such as 'rw' or 'iorw'")
        return None


class Target(Int):
    """A pc-relative branch or jump target, printed as the absolute address like objdump:
    ``0x3914``, or ``3914 <name>`` when ``ctx.symbolize(address)`` names it.

    The assembler (:mod:`.asm`) reads a label, an expression, or objdump's ``3914 <name>``."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        pc = ctx.pc if ctx is not None else 0
        target = (pc + sign_extend(value, width)) & 0xFFFFFFFF
        name = ctx.symbolize(target) if ctx is not None else None
        return f"{target:x} <{name}>" if name else f"0x{target:x}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        return ctx.target(ts)


@dataclass
class FormatContext:
    """What operand kinds need to print one instruction: its address and a symbolizer."""

    pc: int = 0
    symbols: Any = None  # callable(address) -> "name" / "name+0x10" / None

    def symbolize(self, address: int) -> str | None:
        return self.symbols(address) if self.symbols is not None else None


REG = Reg()
IMM = Imm()
HEX = HexImm()
CSR = Csr()
FSET = FenceSet()
TARGET = Target()

RD = F("RD", 7, 11, REG)
RS1 = F("RS1", 15, 19, REG)
RS2 = F("RS2", 20, 24, REG)
IMM_I = F("IMM", 20, 31, IMM)
IMM_S = Split("IMM", (7, 11, 0), (25, 31, 5), kind=IMM)
IMM_U = F("IMM", 12, 31, HEX)
TARGET_B = Split("TARGET", (8, 11, 1), (25, 30, 5), (7, 7, 11), (31, 31, 12), kind=TARGET)
TARGET_J = Split("TARGET", (21, 30, 1), (20, 20, 11), (12, 19, 12), (31, 31, 20), kind=TARGET)
SHAMT = F("SHAMT", 20, 24, HEX)
CSR_F = F("CSR", 20, 31, CSR)
ZIMM = F("ZIMM", 15, 19, UInt())

# --------------------------------------------------------------------------------------------
# Encoding formats
# --------------------------------------------------------------------------------------------

OP, OP_IMM, LOAD, STORE, BRANCH = 0b0110011, 0b0010011, 0b0000011, 0b0100011, 0b1100011
LUI, AUIPC, JAL, JALR, SYSTEM = 0b0110111, 0b0010111, 0b1101111, 0b1100111, 0b1110011
MISC_MEM, AMO = 0b0001111, 0b0101111

insn = Bitset("#insn", patterns=[P(0, 1, "11")])


def _opcode(op: int) -> Pattern:
    return P(0, 6, op)

r_type = Bitset("#r", insn, fields=[RD, RS1, RS2], display="{NAME}\t{RD},{RS1},{RS2}")
r_unary = Bitset("#r-unary", insn, fields=[RD, RS1], display="{NAME}\t{RD},{RS1}")
i_type = Bitset("#i", insn, fields=[RD, RS1, IMM_I], display="{NAME}\t{RD},{RS1},{IMM}")
i_shift = Bitset("#i-shift", insn, fields=[RD, RS1, SHAMT], display="{NAME}\t{RD},{RS1},{SHAMT}")
load = Bitset("#load", insn, fields=[RD, RS1, IMM_I], display="{NAME}\t{RD},{IMM}({RS1})",
              patterns=[_opcode(LOAD)])
store = Bitset("#store", insn, fields=[RS1, RS2, IMM_S], display="{NAME}\t{RS2},{IMM}({RS1})",
               patterns=[_opcode(STORE)])
branch = Bitset("#branch", insn, fields=[RS1, RS2, TARGET_B],
                display="{NAME}\t{RS1},{RS2},{TARGET}", patterns=[_opcode(BRANCH)])
u_type = Bitset("#u", insn, fields=[RD, IMM_U], display="{NAME}\t{RD},{IMM}")
csr_reg = Bitset("#csr", insn, fields=[RD, RS1, CSR_F], display="{NAME}\t{RD},{CSR},{RS1}",
                 patterns=[_opcode(SYSTEM)])
csr_imm = Bitset("#csr-imm", insn, fields=[RD, ZIMM, CSR_F], display="{NAME}\t{RD},{CSR},{ZIMM}",
                 patterns=[_opcode(SYSTEM)])
amo = Bitset("#amo", insn, fields=[RD, RS1, RS2], display="{NAME}\t{RD},{RS2},({RS1})",
             patterns=[_opcode(AMO), P(12, 14, "010")])
system = Bitset("#system", insn, display="{NAME}", patterns=[_opcode(SYSTEM), P(7, 19, 0)])


def _r(name: str, opcode: int, f3: int, f7: int, ext: str, doc: str = "",
       overrides: tuple[Override, ...] = ()) -> Bitset:
    return Bitset(name, r_type, doc=f"[{ext}] {doc}".rstrip(), overrides=overrides,
                  patterns=[P(0, 6, opcode), P(12, 14, f3), P(25, 31, f7)])


def _i(name: str, f3: int, ext: str = "I", doc: str = "",
       overrides: tuple[Override, ...] = ()) -> Bitset:
    return Bitset(name, i_type, doc=f"[{ext}] {doc}".rstrip(), overrides=overrides,
                  patterns=[P(0, 6, OP_IMM), P(12, 14, f3)])


def _shift(name: str, f3: int, f7: int, ext: str = "I") -> Bitset:
    return Bitset(name, i_shift, doc=f"[{ext}]",
                  patterns=[P(0, 6, OP_IMM), P(12, 14, f3), P(25, 31, f7)])


def _unary(name: str, f3: int, f12: int, ext: str, doc: str = "") -> Bitset:
    return Bitset(name, r_unary, doc=f"[{ext}] {doc}".rstrip(),
                  patterns=[P(0, 6, OP_IMM), P(12, 14, f3), P(20, 31, f12)])


def _ld(name: str, f3: int) -> Bitset:
    return Bitset(name, load, doc="[I]", patterns=[P(12, 14, f3)])


def _st(name: str, f3: int) -> Bitset:
    return Bitset(name, store, doc="[I]", patterns=[P(12, 14, f3)])


def _br(name: str, f3: int, *overrides: Override) -> Bitset:
    return Bitset(name, branch, doc="[I]", overrides=overrides, patterns=[P(12, 14, f3)])


def _o(when: dict[str, int], display: str) -> Override:
    return Override(when, display)


BASE = [
    Bitset("lui", u_type, doc="[I]", patterns=[_opcode(LUI)]),
    Bitset("auipc", u_type, doc="[I]", patterns=[_opcode(AUIPC)]),
    Bitset("jal", insn, fields=[RD, TARGET_J], display="{NAME}\t{RD},{TARGET}", doc="[I]",
           patterns=[_opcode(JAL)],
           overrides=[_o({"RD": 0}, "j\t{TARGET}"), _o({"RD": 1}, "jal\t{TARGET}")]),
    Bitset("jalr", insn, fields=[RD, RS1, IMM_I], display="{NAME}\t{RD},{IMM}({RS1})",
           doc="[I]", patterns=[_opcode(JALR), P(12, 14, "000")],
           overrides=[
               _o({"RD": 0, "RS1": 1, "IMM": 0}, "ret"),
               _o({"RD": 0, "IMM": 0}, "jr\t{RS1}"),
               _o({"RD": 0}, "jr\t{IMM}({RS1})"),
               _o({"RD": 1, "IMM": 0}, "jalr\t{RS1}"),
               _o({"RD": 1}, "jalr\t{IMM}({RS1})"),
               _o({"IMM": 0}, "jalr\t{RD},{RS1}"),
           ]),
    _br("beq", 0b000, _o({"RS2": 0}, "beqz\t{RS1},{TARGET}")),
    _br("bne", 0b001, _o({"RS2": 0}, "bnez\t{RS1},{TARGET}")),
    _br("blt", 0b100, _o({"RS2": 0}, "bltz\t{RS1},{TARGET}"),
        _o({"RS1": 0}, "bgtz\t{RS2},{TARGET}")),
    _br("bge", 0b101, _o({"RS1": 0}, "blez\t{RS2},{TARGET}"),
        _o({"RS2": 0}, "bgez\t{RS1},{TARGET}")),
    _br("bltu", 0b110),
    _br("bgeu", 0b111),
    _ld("lb", 0b000), _ld("lh", 0b001), _ld("lw", 0b010), _ld("lbu", 0b100), _ld("lhu", 0b101),
    _st("sb", 0b000), _st("sh", 0b001), _st("sw", 0b010),
    _i("addi", 0b000, overrides=(
        _o({"RD": 0, "RS1": 0, "IMM": 0}, "nop"),
        _o({"RS1": 0}, "li\t{RD},{IMM}"),
        _o({"IMM": 0}, "mv\t{RD},{RS1}"),
    )),
    _i("slti", 0b010),
    _i("sltiu", 0b011, overrides=(_o({"IMM": 1}, "seqz\t{RD},{RS1}"),)),
    _i("xori", 0b100, overrides=(_o({"IMM": 0xFFF}, "not\t{RD},{RS1}"),)),
    _i("ori", 0b110),
    _i("andi", 0b111, overrides=(_o({"IMM": 0xFF}, "zext.b\t{RD},{RS1}"),)),
    _shift("slli", 0b001, 0b0000000),
    _shift("srli", 0b101, 0b0000000),
    _shift("srai", 0b101, 0b0100000),
    _r("add", OP, 0b000, 0b0000000, "I"),
    _r("sub", OP, 0b000, 0b0100000, "I", overrides=(_o({"RS1": 0}, "neg\t{RD},{RS2}"),)),
    _r("sll", OP, 0b001, 0b0000000, "I"),
    _r("slt", OP, 0b010, 0b0000000, "I", overrides=(
        _o({"RS2": 0}, "sltz\t{RD},{RS1}"), _o({"RS1": 0}, "sgtz\t{RD},{RS2}"))),
    _r("sltu", OP, 0b011, 0b0000000, "I", overrides=(_o({"RS1": 0}, "snez\t{RD},{RS2}"),)),
    _r("xor", OP, 0b100, 0b0000000, "I"),
    _r("srl", OP, 0b101, 0b0000000, "I"),
    _r("sra", OP, 0b101, 0b0100000, "I"),
    _r("or", OP, 0b110, 0b0000000, "I"),
    _r("and", OP, 0b111, 0b0000000, "I"),
    Bitset("fence", insn, fields=[F("PRED", 24, 27, FSET), F("SUCC", 20, 23, FSET)],
           display="{NAME}\t{PRED},{SUCC}", doc="[I] memory ordering",
           patterns=[_opcode(MISC_MEM), P(7, 19, 0), P(28, 31, "0000")],
           overrides=[_o({"PRED": 15, "SUCC": 15}, "fence")]),
    Bitset("fence.tso", insn, display="{NAME}", doc="[I]",
           patterns=[_opcode(MISC_MEM), P(7, 19, 0), P(20, 31, 0b100000110011)]),
    Bitset("ecall", system, doc="[I] stops the hart (run() returns 'ecall')",
           patterns=[P(20, 31, 0)]),
    Bitset("ebreak", system, doc="[I] stops the hart (run() returns 'ebreak')",
           patterns=[P(20, 31, 1)]),
    Bitset("mret", system, doc="[machine] return from trap (not modelled: no traps)",
           patterns=[P(20, 31, 0x302)]),
    Bitset("wfi", system, doc="[machine] wait for interrupt (run() returns 'wfi')",
           patterns=[P(20, 31, 0x105)]),
]

_COUNTERS = {0xC00: "rdcycle", 0xC01: "rdtime", 0xC02: "rdinstret",
             0xC80: "rdcycleh", 0xC81: "rdtimeh", 0xC82: "rdinstreth"}

ZICSR = [
    Bitset("csrrw", csr_reg, doc="[Zicsr]", patterns=[P(12, 14, "001")], overrides=[
        _o({"RD": 0, "RS1": 0, "CSR": 0xC00}, "unimp"),
        _o({"RD": 0}, "csrw\t{CSR},{RS1}"),
    ]),
    Bitset("csrrs", csr_reg, doc="[Zicsr]", patterns=[P(12, 14, "010")], overrides=[
        *[_o({"CSR": n, "RS1": 0}, f"{name}\t{{RD}}") for n, name in _COUNTERS.items()],
        _o({"RS1": 0}, "csrr\t{RD},{CSR}"),
        _o({"RD": 0}, "csrs\t{CSR},{RS1}"),
    ]),
    Bitset("csrrc", csr_reg, doc="[Zicsr]", patterns=[P(12, 14, "011")],
           overrides=[_o({"RD": 0}, "csrc\t{CSR},{RS1}")]),
    Bitset("csrrwi", csr_imm, doc="[Zicsr]", patterns=[P(12, 14, "101")],
           overrides=[_o({"RD": 0}, "csrwi\t{CSR},{ZIMM}")]),
    Bitset("csrrsi", csr_imm, doc="[Zicsr]", patterns=[P(12, 14, "110")],
           overrides=[_o({"RD": 0}, "csrsi\t{CSR},{ZIMM}")]),
    Bitset("csrrci", csr_imm, doc="[Zicsr]", patterns=[P(12, 14, "111")],
           overrides=[_o({"RD": 0}, "csrci\t{CSR},{ZIMM}")]),
]

M = [
    _r(name, OP, f3, 0b0000001, "M", doc)
    for name, f3, doc in [
        ("mul", 0, "low 32 bits of the product"),
        ("mulh", 1, "high 32 bits, signed x signed"),
        ("mulhsu", 2, "high 32 bits, signed x unsigned"),
        ("mulhu", 3, "high 32 bits, unsigned x unsigned"),
        ("div", 4, "signed; x/0 = -1, -2^31/-1 = -2^31"),
        ("divu", 5, "unsigned; x/0 = 2^32-1"),
        ("rem", 6, "signed; x%0 = x, -2^31%-1 = 0"),
        ("remu", 7, "unsigned; x%0 = x"),
    ]
]

AMO_FUNCT5 = {
    "amoadd.w": 0b00000, "amoswap.w": 0b00001, "amoxor.w": 0b00100, "amoor.w": 0b01000,
    "amoand.w": 0b01100, "amomin.w": 0b10000, "amomax.w": 0b10100, "amominu.w": 0b11000,
    "amomaxu.w": 0b11100,
}
AQRL_SUFFIX = {0: "", 2: ".aq", 1: ".rl", 3: ".aqrl"}  # bits 26 (aq) and 25 (rl)


def _aqrl(name: str, parent: Bitset, funct5: int, ext: str, doc: str,
          extra: tuple[Any, ...] = ()) -> list[Bitset]:
    """One entry per ordering suffix: ``amoadd.w``, ``amoadd.w.aq``, ``.rl``, ``.aqrl``."""
    return [Bitset(name + sfx, parent, doc=f"[{ext}] {doc}", displayname=name + sfx,
                   patterns=[P(27, 31, funct5), P(25, 26, bits), *extra])
            for bits, sfx in AQRL_SUFFIX.items()]


_AMO_DOC = {
    "amoadd.w": "rd = M[rs1]; M[rs1] = rd + rs2", "amoswap.w": "rd = M[rs1]; M[rs1] = rs2",
    "amoxor.w": "rd = M[rs1]; M[rs1] ^= rs2", "amoor.w": "rd = M[rs1]; M[rs1] |= rs2",
    "amoand.w": "rd = M[rs1]; M[rs1] &= rs2", "amomin.w": "signed minimum",
    "amomax.w": "signed maximum", "amominu.w": "unsigned minimum",
    "amomaxu.w": "unsigned maximum",
}
lr = Bitset("#lr", amo, display="{NAME}\t{RD},({RS1})")
A = [b for name, f5 in AMO_FUNCT5.items() for b in _aqrl(name, amo, f5, "Zaamo", _AMO_DOC[name])]
A += _aqrl("lr.w", lr, 0b00010, "Zalrsc", "load reserved", (P(20, 24, 0),))
A += _aqrl("sc.w", amo, 0b00011, "Zalrsc", "store conditional: rd = 0 if stored, else 1")

ZBA = [_r(f"sh{n}add", OP, 2 * n, 0b0010000, "Zba", f"rd = (rs1 << {n}) + rs2")
       for n in (1, 2, 3)]

ZBB = [
    _r("andn", OP, 0b111, 0b0100000, "Zbb", "rs1 & ~rs2"),
    _r("orn", OP, 0b110, 0b0100000, "Zbb", "rs1 | ~rs2"),
    _r("xnor", OP, 0b100, 0b0100000, "Zbb", "~(rs1 ^ rs2)"),
    _r("min", OP, 0b100, 0b0000101, "Zbb", "signed"),
    _r("minu", OP, 0b101, 0b0000101, "Zbb", "unsigned"),
    _r("max", OP, 0b110, 0b0000101, "Zbb", "signed"),
    _r("maxu", OP, 0b111, 0b0000101, "Zbb", "unsigned"),
    _r("rol", OP, 0b001, 0b0110000, "Zbb", "rotate left by rs2 mod 32"),
    _r("ror", OP, 0b101, 0b0110000, "Zbb", "rotate right by rs2 mod 32"),
    _shift("rori", 0b101, 0b0110000, "Zbb"),
    _unary("clz", 0b001, 0x600, "Zbb", "count leading zeros (32 for 0)"),
    _unary("ctz", 0b001, 0x601, "Zbb", "count trailing zeros (32 for 0)"),
    _unary("cpop", 0b001, 0x602, "Zbb", "count set bits"),
    _unary("sext.b", 0b001, 0x604, "Zbb", "sign-extend the low byte"),
    _unary("sext.h", 0b001, 0x605, "Zbb", "sign-extend the low half"),
    _unary("orc.b", 0b101, 0x287, "Zbb", "each byte: 0xff if non-zero, else 0"),
    _unary("rev8", 0b101, 0x698, "Zbb", "reverse the bytes"),
]

XTTZBKB = [
    _r("pack", OP, 0b100, 0b0000100, "xttzbkb", "rd = rs2[15:0] << 16 | rs1[15:0]",
       overrides=(_o({"RS2": 0}, "zext.h\t{RD},{RS1}"),)),
    _unary("brev8", 0b101, 0x687, "xttzbkb", "reverse the bits of each byte"),
]

#: the Tensix word of a ``.ttinsn`` (the instruction word rotated right by two)
TT_VALUE = Split("VALUE", (2, 31, 0), (0, 1, 30), kind=Hex(digits=8))
XTTTENSIXBH = [
    Bitset(f"ttinsn.{low}", fields=[TT_VALUE], display="{NAME}\t{VALUE}", displayname=".ttinsn",
           doc="[xtttensixbh] push VALUE to the Tensix instruction buffer (sw to 0xFFE40000)",
           patterns=[P(0, 1, low)])
    for low in (0, 1, 2)
]

BITSETS: list[Bitset] = [*BASE, *ZICSR, *M, *A, *ZBA, *ZBB, *XTTZBKB, *XTTTENSIXBH]

#: extension of each instruction, from its doc tag
EXTENSION: dict[str, str] = {b.name: b.doc[1:].split("]")[0] for b in BITSETS}


@cache
def rv32_isa() -> ISA:
    """The one instruction set (a single generation)."""
    return ISA("rv32", BITSETS, gen=0, size=32)


def rotl2(value: int) -> int:
    """The ``.ttinsn`` instruction word of a Tensix instruction."""
    return ((value << 2) | (value >> 30)) & 0xFFFFFFFF


def rotr2(word: int) -> int:
    """The Tensix instruction a ``.ttinsn`` word holds."""
    return ((word >> 2) | (word << 30)) & 0xFFFFFFFF


def is_ttinsn(word: int) -> bool:
    return word & 3 != 3


__all__ = [
    "ABI_NAMES",
    "ARCH",
    "BITSETS",
    "CSR_NAMES",
    "CSR_NUMBERS",
    "EXTENSION",
    "INSTRN_BUF_BASE",
    "REG_NUMBERS",
    "FormatContext",
    "is_ttinsn",
    "rotl2",
    "rotr2",
    "rv32_isa",
]
