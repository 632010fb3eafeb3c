"""The VP operation semantics (isaforge.theia.machine.alu) on their own.

The RTL's exact values are checked by test_probe.py; here: the arithmetic identities the
RTL's units satisfy where they are exact, and the documented special cases.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.theia.machine import alu

u32 = st.integers(0, 0xFFFF_FFFF)
M = 0xFFFF_FFFF


def s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


@settings(max_examples=300)
@given(u32, u32)
def test_mul_is_the_exact_product_while_three_a_fits(a: int, b: int) -> None:
    if abs(s32(a)) <= 0x5555_5555:
        assert alu.mul32(a, b, False) == (s32(a) * s32(b)) & M


def test_mul_truncates_three_a_partial_products() -> None:
    # isa_probe r42: 0x60000000 * 0x70000 >> 17; exact would be 0x50000000
    assert alu.mul32(0x6000_0000, 0x7_0000, True) == 0xD000_0000
    assert alu.mul32(0x6000_0000, 7, True) == 0xD000


@settings(max_examples=300)
@given(u32, u32.filter(lambda v: v != 0))
def test_div_truncates_toward_zero(a: int, b: int) -> None:
    q = abs(s32(a)) // abs(s32(b))
    if (s32(a) < 0) != (s32(b) < 0):
        q = -q
    assert alu.div32(a, b, False, False) == q & M


def test_div_by_zero_is_all_ones_magnitude_then_sign() -> None:
    assert alu.div32(5, 0, False, False) == M
    assert alu.div32(-5 & M, 0, False, False) == 1
    assert alu.div32(0, 0, False, False) == M


def test_sqrt_table_is_floor_of_q17_roots() -> None:
    for n in range(128):
        assert alu.SQRT_TABLE[n] == math.floor(math.sqrt(n) * 2**17)
    assert alu.sqrt32(4 << 17) == 2 << 17
    assert alu.sqrt32((5 << 17) | 0x1FFFF) == alu.SQRT_TABLE[5]  # fraction dropped
    assert alu.sqrt32(200 << 17) == alu.SQRT_TABLE[3] << 1  # bit 24: /64, then doubled
    assert alu.sqrt32(-1 << 17 & M) == alu.SQRT_MISS << 1


def test_logic_and_or_others_zero() -> None:
    a, b = (0xF0F0_F0F0, 0xFFFF, 1), (0xFF00_FF00, 4, 3)
    assert alu.logic(a, b, 0) == (0xF000_F000, 4, 1)
    assert alu.logic(a, b, 1) == (0xFFF0_FFF0, 0xFFFF, 3)
    assert alu.logic(a, b, 2) == alu.ZERO == alu.logic(a, b, 3)
    assert alu.logic(a, b, 4) == alu.logic(a, b, 0)


@given(st.tuples(u32, u32, u32))
def test_modify_identity_negate_and_swizzle(v: tuple[int, int, int]) -> None:
    assert alu.modify(v, 0, 0) == v
    assert alu.modify(alu.modify(v, 7, 0), 7, 0) == v
    assert alu.modify(v, 0, 0b10_10_10) == (v[1], v[0], v[0])  # x<-y, y<-x, z<-x
    assert alu.modify(v, 0, 0b11_11_11) == (0x20, 0x20, 0x20)
    # the sign applies to the source lane before the swizzle picks it
    assert alu.modify(v, 0b100, 0b10_10_10) == (v[1], -v[0] & M, -v[0] & M)


def test_flags_and_branch_conditions() -> None:
    assert alu.flags((0, 0, 0)) == (True, False)
    assert alu.flags((0, 1, 0)) == (False, False)
    assert alu.flags((M, M, M)) == (False, True)
    assert alu.flags((M, 0, M)) == (False, False)  # SIGN needs all three lanes
    assert alu.branch_taken(4, zero=True, sign=False) is False  # '>' is !S and !Z
    assert alu.branch_taken(6, zero=True, sign=True) is True  # '>=' is !S or Z
    assert alu.branch_taken(7, zero=True, sign=True) is False


def test_addressing_modes() -> None:
    word_imm = lambda mode: 1 << 63 | mode << 45 | 7 << 42 | 10 << 34 | 20 << 17 | 30  # noqa: E731
    off, idx = 5, 2
    a = alu.addressing(word_imm(3), off, idx)
    assert (a.src1_addr, a.src0_addr, a.src1_value, a.dst) == (20, 35, alu.ZERO, 15)
    assert a.dst_for((4, 0, 0)) == 19
    a = alu.addressing(word_imm(6), off, idx)
    assert (a.src1_addr, a.src0_addr, a.dst) == (27, None, 10)
    a = alu.addressing(word_imm(1), off, idx)
    assert (a.src1_addr, a.src0_addr, a.dst) == (None, 10, 15)
    plain = 0b101 << 45 | 10 << 34 | 20 << 17 | 30
    a = alu.addressing(plain, off, idx)
    assert (a.src1_addr, a.src0_addr, a.dst) == (20, 35, 15)
