"""Each M, Zba, Zbb, Zaamo/Zalrsc and Tenstorrent instruction against hand-computed results,
on the exact path and on the compiled one."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.riscv import AddressSpace, Hart, StopReason, assemble
from isaforge.riscv.machine import fast

CODE = 0x1000
DATA = 0x2000
PATHS = ["exact", "fast"]


def hart(text: str, path: str, regs: dict[str, int] | None = None,
         mmio: list[tuple[int, int, int]] | None = None) -> Hart:
    mem = np.zeros(0x4000, np.uint8)
    code = assemble(text + "\nebreak\n", CODE)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    space = AddressSpace("test")
    space.map_ram(0, mem)
    if mmio is not None:
        space.map_mmio(0xFFE40000, 0x10000, None, lambda a, s, v: mmio.append((a, s, v)))
    h = Hart("t0", space, CODE)
    h.fast = path == "fast"
    for r, v in (regs or {}).items():
        h.reg_write(r, v)
    assert h.run(1000) is StopReason.EBREAK
    return h


A, B = "a1", "a2"  # operands; the result goes to a0

BINARY_CASES = [
    # M (signed operands written as their 32-bit patterns)
    ("mul", 7, 0xFFFFFFFD, 0xFFFFFFEB),  # 7 * -3 = -21
    ("mul", 0x80000000, 2, 0),
    ("mulh", 0x80000000, 0x80000000, 0x40000000),  # (-2^31)^2 = 2^62
    ("mulh", 0xFFFFFFFF, 0xFFFFFFFF, 0),  # -1 * -1 = 1
    ("mulh", 0x7FFFFFFF, 0x7FFFFFFF, 0x3FFFFFFF),
    ("mulh", 0xFFFFFFFF, 1, 0xFFFFFFFF),  # -1: high word all ones
    ("mulhsu", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF),  # -1 * (2^32-1)
    ("mulhsu", 2, 0xFFFFFFFF, 1),
    ("mulhu", 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFE),
    ("div", 0xFFFFFFF9, 2, 0xFFFFFFFD),  # -7 / 2 = -3 (towards zero)
    ("rem", 0xFFFFFFF9, 2, 0xFFFFFFFF),  # -7 % 2 = -1 (sign of the dividend)
    ("div", 7, 0xFFFFFFFE, 0xFFFFFFFD),  # 7 / -2 = -3
    ("rem", 7, 0xFFFFFFFE, 1),
    ("div", 1234, 0, 0xFFFFFFFF),  # x / 0 = -1
    ("rem", 1234, 0, 1234),  # x % 0 = x
    ("div", 0x80000000, 0xFFFFFFFF, 0x80000000),  # -2^31 / -1 overflows to -2^31
    ("rem", 0x80000000, 0xFFFFFFFF, 0),
    ("divu", 0xFFFFFFFF, 2, 0x7FFFFFFF),
    ("remu", 0xFFFFFFFF, 2, 1),
    ("divu", 5, 0, 0xFFFFFFFF),
    ("remu", 5, 0, 5),
    # Zba
    ("sh1add", 3, 10, 16),
    ("sh2add", 3, 10, 22),
    ("sh3add", 0x20000000, 1, 1),  # the shifted bit falls off
    # Zbb
    ("andn", 0xFF00FF00, 0x0FF00FF0, 0xF000F000),
    ("orn", 0, 0xFFFF0000, 0x0000FFFF),
    ("xnor", 0xF0F0F0F0, 0xFF00FF00, 0xF00FF00F),
    ("min", 0xFFFFFFFF, 1, 0xFFFFFFFF),
    ("minu", 0xFFFFFFFF, 1, 1),
    ("max", 0xFFFFFFFF, 1, 1),
    ("maxu", 0xFFFFFFFF, 1, 0xFFFFFFFF),
    ("rol", 0x80000001, 1, 0x00000003),
    ("rol", 0x80000001, 33, 0x00000003),  # amount mod 32
    ("ror", 0x80000001, 1, 0xC0000000),
    ("ror", 0x12345678, 0, 0x12345678),
    # xttzbkb
    ("pack", 0x1234ABCD, 0x5678EF01, 0xEF01ABCD),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("op", "a", "b", "want"), BINARY_CASES)
def test_binary(op: str, a: int, b: int, want: int, path: str) -> None:
    h = hart(f"{op} a0, {A}, {B}", path, {A: a, B: b})
    assert h.reg_read("a0") == want, f"{op} {a:#x}, {b:#x}"


UNARY_CASES = [
    ("clz", 0, 32), ("clz", 0x00010000, 15), ("clz", 0x80000000, 0), ("clz", 1, 31),
    ("ctz", 0, 32), ("ctz", 0x00010000, 16), ("ctz", 1, 0), ("ctz", 0x80000000, 31),
    ("cpop", 0xFFFFFFFF, 32), ("cpop", 0x01010101, 4), ("cpop", 0, 0),
    ("sext.b", 0x80, 0xFFFFFF80), ("sext.b", 0x17F, 0x7F),
    ("sext.h", 0x8000, 0xFFFF8000), ("sext.h", 0x12347FFF, 0x7FFF),
    ("zext.h", 0xFFFF8000, 0x8000), ("zext.b", 0x1234, 0x34),
    ("orc.b", 0x00010080, 0x00FF00FF), ("orc.b", 0, 0),
    ("rev8", 0x12345678, 0x78563412),
    ("brev8", 0x01020380, 0x8040C001),  # each byte's bits reversed, bytes in place
    ("brev8", 0xFFFFFFFF, 0xFFFFFFFF),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(("op", "a", "want"), UNARY_CASES)
def test_unary(op: str, a: int, want: int, path: str) -> None:
    assert hart(f"{op} a0, {A}", path, {A: a}).reg_read("a0") == want


@pytest.mark.parametrize("path", PATHS)
def test_rori(path: str) -> None:
    assert hart("rori a0, a1, 8", path, {A: 0x12345678}).reg_read("a0") == 0x78123456


AMO_CASES = [
    ("amoswap.w", 5, 7, 7),
    ("amoadd.w", 0xFFFFFFFF, 2, 1),
    ("amoxor.w", 0xFF, 0x0F, 0xF0),
    ("amoand.w", 0xFF, 0x0F, 0x0F),
    ("amoor.w", 0xF0, 0x0F, 0xFF),
    ("amomin.w", 0xFFFFFFFE, 1, 0xFFFFFFFE),
    ("amominu.w", 0xFFFFFFFE, 1, 1),
    ("amomax.w", 0xFFFFFFFE, 1, 1),
    ("amomaxu.w", 0xFFFFFFFE, 1, 0xFFFFFFFE),
]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("suffix", ["", ".aq", ".rl", ".aqrl"])
@pytest.mark.parametrize(("op", "old", "operand", "new"), AMO_CASES)
def test_amo(op: str, old: int, operand: int, new: int, suffix: str, path: str) -> None:
    text = f"li t0, {DATA}\nli t1, {old}\nsw t1, 0(t0)\n{op}{suffix} a0, a2, (t0)\nlw a1, 0(t0)"
    h = hart(text, path, {B: operand})
    assert (h.reg_read("a0"), h.reg_read("a1")) == (old, new)


@pytest.mark.parametrize("path", PATHS)
def test_amo_writes_rd_after_reading_rs2(path: str) -> None:
    """rd = rs2: the old value lands in rd, the memory gets the old rs2."""
    h = hart(f"li t0, {DATA}\nli t1, 40\nsw t1, 0(t0)\nli a2, 2\namoadd.w a2, a2, (t0)\n"
             "lw a1, 0(t0)", path)
    assert (h.reg_read("a2"), h.reg_read("a1")) == (40, 42)


@pytest.mark.parametrize("path", PATHS)
def test_lr_sc(path: str) -> None:
    h = hart(f"li t0, {DATA}\nli t1, 9\nlr.w a0, (t0)\nsc.w a1, t1, (t0)\nlw a2, 0(t0)\n"
             f"sc.w a3, t1, (t0)", path)
    assert [h.reg_read(r) for r in ("a0", "a1", "a2", "a3")] == [0, 0, 9, 1]
    h = hart(f"li t0, {DATA}\nli t1, 9\nlr.w a0, (t0)\nsw zero, 0(t0)\nsc.w a1, t1, (t0)",
             path)
    assert h.reg_read("a1") == 1  # a store to the reserved word broke the reservation


@pytest.mark.parametrize("path", PATHS)
def test_ttinsn_goes_to_on_custom(path: str) -> None:
    got: list[int] = []
    mem = np.zeros(0x4000, np.uint8)
    code = assemble(".ttinsn 0x700cc000\n.ttinsn 0x02000000\nebreak\n", CODE)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    space = AddressSpace()
    space.map_ram(0, mem)
    h = Hart("t1", space, CODE)
    h.fast = path == "fast"
    h.on_custom = lambda hart, value: got.append(value)
    assert h.run(10) is StopReason.EBREAK and h.instret == 2
    assert got == [0x700CC000, 0x02000000]


@pytest.mark.parametrize("path", PATHS)
def test_ttinsn_without_handler_is_a_store_to_the_instruction_buffer(path: str) -> None:
    pushed: list[tuple[int, int, int]] = []
    hart(".ttinsn 0x700cc000\nli a0, 0x12\nsw a0, 4(zero)", path, mmio=pushed)
    assert pushed == [(0xFFE40000, 4, 0x700CC000)]


def test_the_fast_path_runs_these_instructions_itself() -> None:
    """None of the computational cases falls back to the exact path."""
    for op, *_ in BINARY_CASES:
        word = int.from_bytes(assemble(f"{op} a0, a1, a2"), "little")
        assert fast.pack(word) & 0xFF != fast.SLOW_OP, op
    for op, *_ in UNARY_CASES + AMO_CASES:
        text = f"{op} a0, a2, (t0)" if op.startswith("amo") else f"{op} a0, a1"
        assert fast.pack(int.from_bytes(assemble(text), "little")) & 0xFF != fast.SLOW_OP, op
