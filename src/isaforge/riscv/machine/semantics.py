"""What each computational instruction computes, on unsigned 32-bit Python ints.

The exact reference: every function takes operand values in ``0 .. 2**32-1`` and returns the
result in the same range. Division follows the RISC-V M spec (``x / 0 = -1``, ``x % 0 = x``,
``-2**31 / -1 = -2**31`` with remainder 0); shifts and rotates use the low five bits of the
amount. The compiled path (:mod:`.fast`) is tested against these on random operands.
"""

from __future__ import annotations

from collections.abc import Callable

M32 = 0xFFFFFFFF


def sx(v: int) -> int:
    """``v`` (0 .. 2**32-1) as a signed 32-bit value."""
    return v - ((v & 0x80000000) << 1)


def _div(a: int, b: int) -> int:
    sa, sb = sx(a), sx(b)
    if sb == 0:
        return M32
    if sa == -(1 << 31) and sb == -1:
        return a
    q = abs(sa) // abs(sb)
    return (-q if (sa < 0) != (sb < 0) else q) & M32


def _rem(a: int, b: int) -> int:
    sa, sb = sx(a), sx(b)
    if sb == 0:
        return a
    if sa == -(1 << 31) and sb == -1:
        return 0
    r = abs(sa) % abs(sb)
    return (-r if sa < 0 else r) & M32


def _rol(a: int, s: int) -> int:
    s &= 31
    return ((a << s) | (a >> (32 - s))) & M32


def _ror(a: int, s: int) -> int:
    s &= 31
    return ((a >> s) | (a << (32 - s))) & M32


def _bytes(a: int) -> list[int]:
    return [(a >> (8 * i)) & 0xFF for i in range(4)]


def _from_bytes(bs: list[int]) -> int:
    return sum(b << (8 * i) for i, b in enumerate(bs))


#: two-operand operations (register-register and, through IMMEDIATE, register-immediate)
BINARY: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: (a + b) & M32,
    "sub": lambda a, b: (a - b) & M32,
    "sll": lambda a, b: (a << (b & 31)) & M32,
    "slt": lambda a, b: int(sx(a) < sx(b)),
    "sltu": lambda a, b: int(a < b),
    "xor": lambda a, b: a ^ b,
    "srl": lambda a, b: a >> (b & 31),
    "sra": lambda a, b: (sx(a) >> (b & 31)) & M32,
    "or": lambda a, b: a | b,
    "and": lambda a, b: a & b,
    # M
    "mul": lambda a, b: (a * b) & M32,
    "mulh": lambda a, b: ((sx(a) * sx(b)) >> 32) & M32,
    "mulhsu": lambda a, b: ((sx(a) * b) >> 32) & M32,
    "mulhu": lambda a, b: (a * b) >> 32,
    "div": _div,
    "divu": lambda a, b: a // b if b else M32,
    "rem": _rem,
    "remu": lambda a, b: a % b if b else a,
    # Zba
    "sh1add": lambda a, b: ((a << 1) + b) & M32,
    "sh2add": lambda a, b: ((a << 2) + b) & M32,
    "sh3add": lambda a, b: ((a << 3) + b) & M32,
    # Zbb
    "andn": lambda a, b: a & ~b & M32,
    "orn": lambda a, b: (a | ~b) & M32,
    "xnor": lambda a, b: ~(a ^ b) & M32,
    "min": lambda a, b: a if sx(a) < sx(b) else b,
    "minu": lambda a, b: min(a, b),
    "max": lambda a, b: a if sx(a) > sx(b) else b,
    "maxu": lambda a, b: max(a, b),
    "rol": _rol,
    "ror": _ror,
    # xttzbkb
    "pack": lambda a, b: (a & 0xFFFF) | ((b & 0xFFFF) << 16),
}

#: register-immediate forms: instruction -> the BINARY operation it applies to (rs1, imm)
IMMEDIATE: dict[str, str] = {
    "addi": "add", "slti": "slt", "sltiu": "sltu", "xori": "xor", "ori": "or", "andi": "and",
    "slli": "sll", "srli": "srl", "srai": "sra", "rori": "ror",
}

#: one-operand operations
UNARY: dict[str, Callable[[int], int]] = {
    "clz": lambda a: 32 - a.bit_length(),
    "ctz": lambda a: (a & -a).bit_length() - 1 if a else 32,
    "cpop": lambda a: a.bit_count(),
    "sext.b": lambda a: (((a & 0xFF) ^ 0x80) - 0x80) & M32,
    "sext.h": lambda a: (((a & 0xFFFF) ^ 0x8000) - 0x8000) & M32,
    "orc.b": lambda a: _from_bytes([0xFF if b else 0 for b in _bytes(a)]),
    "rev8": lambda a: _from_bytes(_bytes(a)[::-1]),
    "brev8": lambda a: _from_bytes([int(f"{b:08b}"[::-1], 2) for b in _bytes(a)]),
}

#: atomic read-modify-write: instruction (without ordering suffix) -> new memory value
AMO: dict[str, Callable[[int, int], int]] = {
    "amoswap.w": lambda old, v: v,
    "amoadd.w": lambda old, v: (old + v) & M32,
    "amoxor.w": lambda old, v: old ^ v,
    "amoand.w": lambda old, v: old & v,
    "amoor.w": lambda old, v: old | v,
    "amomin.w": lambda old, v: old if sx(old) < sx(v) else v,
    "amomax.w": lambda old, v: old if sx(old) > sx(v) else v,
    "amominu.w": lambda old, v: min(old, v),
    "amomaxu.w": lambda old, v: max(old, v),
}

#: conditional branches: taken?
BRANCH: dict[str, Callable[[int, int], bool]] = {
    "beq": lambda a, b: a == b,
    "bne": lambda a, b: a != b,
    "blt": lambda a, b: sx(a) < sx(b),
    "bge": lambda a, b: sx(a) >= sx(b),
    "bltu": lambda a, b: a < b,
    "bgeu": lambda a, b: a >= b,
}

#: loads: instruction -> (bytes, sign-extend?)
LOAD: dict[str, tuple[int, bool]] = {
    "lb": (1, True), "lh": (2, True), "lw": (4, False), "lbu": (1, False), "lhu": (2, False),
}
#: stores: instruction -> bytes
STORE: dict[str, int] = {"sb": 1, "sh": 2, "sw": 4}


def amo_base(name: str) -> str:
    """``amoadd.w.aqrl`` -> ``amoadd.w`` (ordering suffixes change nothing here)."""
    parts = name.split(".")
    return ".".join(parts[:2])


__all__ = ["AMO", "BINARY", "BRANCH", "IMMEDIATE", "LOAD", "M32", "STORE", "UNARY",
           "amo_base", "sx"]
