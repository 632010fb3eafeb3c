"""Bit layouts of every Dst and Src data type, the Dst<->Src shuffles, and the RISC-V debug
window conversions (tt-isa-documentation Dst.md, SrcASrcB.md, MOVD2A.md)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.tensix.machine import formats as F

ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
u32s = st.integers(0, 2**32 - 1)


# ---- Dst 16-bit -----------------------------------------------------------------------------


def test_dst_bf16_layout_sign_man7_exp8() -> None:
    assert F.bf16_to_dst16(np.uint16(0x3F80)) == 0x007F  # 1.0: exponent 127 in the low byte
    assert F.bf16_to_dst16(np.uint16(0xBFC0)) == 0xC07F  # -1.5: mantissa 0x40 in bits 14..8
    assert (F.dst16_to_bf16(F.bf16_to_dst16(ALL16)) == ALL16).all()
    assert len(np.unique(F.bf16_to_dst16(ALL16))) == 1 << 16


def test_dst_fp16_layout_sign_man10_exp5() -> None:
    assert F.fp16_to_dst16(np.uint16(0x3C00)) == 0x000F  # 1.0
    assert F.fp16_to_dst16(np.uint16(0xBE00)) == 0x8000 | (0x200 << 5) | 15  # -1.5
    assert (F.dst16_to_fp16(F.fp16_to_dst16(ALL16)) == ALL16).all()


def test_dst_int8_layout() -> None:
    assert F.int8_to_dst16(np.array([5, 0, -3, 1023])).tolist() == [
        (5 << 5) | 16, 0, 0x8000 | (3 << 5) | 16, (1023 << 5) | 16]
    v = np.arange(-1023, 1024)
    assert (F.dst16_to_int8(F.int8_to_dst16(v)) == v).all()
    with pytest.raises(F.FormatError):
        F.int8_to_dst16(np.array([1024]))


# ---- Dst 32-bit -----------------------------------------------------------------------------


def test_dst_fp32_layout() -> None:
    assert F.fp32_to_dst32(np.uint32(0x3F800000)) == 0x007F0000  # high half = BF16 storage
    x = np.uint32(0xC0490FDB)  # -pi: man[22:16] = 0x49, exp 128, man[15:0] = 0x0FDB
    assert F.fp32_to_dst32(x) == 0x80000000 | (0x49 << 24) | (128 << 16) | 0x0FDB


@settings(max_examples=200, deadline=None)
@given(st.lists(u32s, min_size=1, max_size=32))
def test_dst_fp32_round_trip_and_halves(words: list[int]) -> None:
    w = np.array(words, dtype=np.uint32)
    d = F.fp32_to_dst32(w)
    assert (F.dst32_to_fp32(d) == w).all()
    assert ((d >> 16) == F.bf16_to_dst16((w >> 16).astype(np.uint16))).all()
    assert ((d & 0xFFFF) == (w & 0xFFFF)).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(u32s, min_size=1, max_size=64))
def test_fp32_from_the_two_dst_halves(words: list[int]) -> None:
    """Dst.read("fp32") builds IEEE words from the two DstBits halves (a table for the high
    half): the same as forming the Dst32b words and converting them."""
    w = np.array(words, dtype=np.uint32)
    hi, lo = (w >> 16).astype(np.uint16), (w & 0xFFFF).astype(np.uint16)
    got = F.dst32_halves_to_fp32(hi, lo)
    assert got.dtype == np.uint32
    assert (got == F.dst32_to_fp32(w)).all()


def test_dst_int32_sign_magnitude_in_fp32_order() -> None:
    assert F.int32_to_dst32(np.array([-1]))[0] == 0x80000001
    assert F.int32_to_dst32(np.array([1 << 23]))[0] == 0x00010000  # magnitude bit 23 -> bit 16
    assert F.int32_to_dst32(np.array([-(2**31)]))[0] == F.int32_to_dst32(
        np.array([-(2**31 - 1)]))[0]
    v = np.random.default_rng(0).integers(-(2**31) + 1, 2**31, 1000)
    assert (F.dst32_to_int32(F.int32_to_dst32(v)) == v).all()


# ---- Src cells ------------------------------------------------------------------------------


def test_src_layouts() -> None:
    # TF32 1 + 2**-10: sign 0, mantissa 1 in bits 17..8, exponent 127 in bits 7..0
    t = np.array([1 + 2**-10], np.float32)
    assert F.values_to_src(t, "tf32")[0] == (1 << 8) | 127
    # BF16 -1.5: mantissa 0x40 << 3 (low three of ten bits zero)
    assert F.values_to_src(np.array([-1.5], np.float32), "bf16")[0] == (1 << 18) | (
        0x200 << 8) | 127
    # FP16 1.0: exponent 15 in bits 4..0, bits 7..5 zero
    assert F.values_to_src(np.array([1.0], np.float16), "fp16")[0] == 15
    # Integer "8": sign, magnitude in the mantissa bits, exponent field 16
    assert F.values_to_src(np.array([-7]), "int8")[0] == (1 << 18) | (7 << 8) | 16


def test_src_logical_order() -> None:
    cells = np.arange(1 << 19, dtype=np.uint32)
    logical = F.src_to_logical(cells)
    assert (F.src_from_logical(logical) == cells).all()
    # logical << 13 is the FP32 pattern of a TF32 cell
    f = np.array([3.25, -0.1875], np.float32)
    assert ((F.src_to_logical(F.values_to_src(f, "tf32")) << 13) == f.view(np.uint32)).all()


def test_shuffles_agree_with_direct_conversions() -> None:
    """MOVD2A's shuffles of Dst storage give the same cell as converting the value directly,
    for every BF16 and FP16 bit pattern; the reverse shuffles (MOVA2D) undo them."""
    assert (F.shuffle_bf16(F.bf16_to_dst16(ALL16)) == F.bf16_bits_to_src(ALL16)).all()
    assert (F.unshuffle_bf16(F.bf16_bits_to_src(ALL16)) == F.bf16_to_dst16(ALL16)).all()
    assert (F.shuffle_fp16(F.fp16_to_dst16(ALL16)) == F.fp16_bits_to_src(ALL16)).all()
    assert (F.unshuffle_fp16(F.fp16_bits_to_src(ALL16)) == F.fp16_to_dst16(ALL16)).all()
    assert (F.src_to_fp16_bits(F.fp16_bits_to_src(ALL16)) == ALL16).all()
    assert (F.src_to_bf16_bits(F.bf16_bits_to_src(ALL16)) == ALL16).all()


def test_bf16_and_fp16_cells_by_table_equal_the_formulas() -> None:
    """values_to_src looks BF16/FP16 cells up in a table: every bit pattern's entry is the
    formula's cell (NaN and Inf patterns included)."""
    assert (F.values_to_src(ALL16.view(ml_dtypes.bfloat16), "bf16")
            == F.bf16_bits_to_src(ALL16)).all()
    assert (F.values_to_src(ALL16.view(np.float16), "fp16") == F.fp16_bits_to_src(ALL16)).all()
    x = np.array([[1.0, -2.5e-3, 3e38]], np.float32)  # float input rounds first
    assert (F.values_to_src(x, "bf16") == F.bf16_bits_to_src(
        x.astype(ml_dtypes.bfloat16).view(np.uint16))).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(u32s, min_size=1, max_size=32))
def test_tf32_shuffle(words: list[int]) -> None:
    w = np.array(words, dtype=np.uint32)
    cell = F.shuffle_tf32(F.fp32_to_dst32(w) >> 13)
    assert (cell == F.fp32_bits_to_src(w, "tf32")).all()
    assert (F.dst32_to_fp32(F.unshuffle_tf32(cell)) == (w & ~np.uint32(0x1FFF))).all()
    assert (F.fp32_bits_to_src(w, "bf16") & 0x700 == 0).all()  # BF16 cells: low man bits 0


def test_typed_values_round_trip() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 16)).astype(np.float32) * 1000
    for fmt, dtype in (("fp32", np.float32), ("bf16", ml_dtypes.bfloat16),
                       ("fp16", np.float16)):
        v = x.astype(dtype)
        assert (F.dst_to_values(F.values_to_dst(v, fmt), fmt) == v).all()
    for fmt, dtype in (("bf16", ml_dtypes.bfloat16), ("fp16", np.float16)):
        v = x.astype(dtype)
        assert (F.src_to_values(F.values_to_src(v, fmt), fmt) == v).all()
    assert (F.src_to_values(F.values_to_src(ALL16, "int16"), "int16") == ALL16).all()
    with pytest.raises(F.FormatError, match="unknown format"):
        F.values_to_dst(x, "fp8")
    with pytest.raises(F.FormatError, match="19 bits"):
        F.values_to_src(np.array([1 << 19]), "raw")


def test_src_style_table() -> None:
    styles = {c: F.src_style(c) for c in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14, 15)}
    assert styles == {0: "bf16", 1: "fp16", 2: "fp16", 3: "fp16", 4: "tf32", 5: "bf16",
                      6: "bf16", 7: "bf16", 8: "bf16", 9: "bf16", 10: "fp16", 11: "fp16",
                      14: "int8", 15: "bf16"}
    with pytest.raises(F.FormatError, match="unknown Src data format"):
        F.src_style(12)


# ---- RISC-V debug window ----------------------------------------------------------------------


def test_debug_window_fp32_and_int32() -> None:
    ieee = np.array([0x3F800000, 0xC0490FDB], dtype=np.uint32)
    stored = F.debug_store32(ieee, 0, False)
    assert (stored == F.fp32_to_dst32(ieee)).all()
    assert (F.debug_load32(stored, 0, False) == ieee).all()
    assert (F.debug_load32(stored, 0, True) == stored).all()  # no_swizzle: raw
    neg = np.array([(-5) & 0xFFFFFFFF], dtype=np.uint32)
    s = F.debug_store32(neg, 1, False)
    assert s[0] == F.fp32_to_dst32(np.uint32(0x80000005))
    assert F.debug_load32(s, 1, False)[0] == neg[0]
    with pytest.raises(F.FormatError):
        F.debug_load32(s, 2, False)


def test_debug_window_16_and_8_bit() -> None:
    cell = F.bf16_to_dst16(np.uint16(0xBFC0))
    assert F.debug_load16(cell, 3, False, False) == 0xBFC0
    assert F.debug_load16(cell, 3, True, False) == cell
    assert F.debug_store16(np.uint16(0x3C00), 2, False, False) == F.fp16_to_dst16(
        np.uint16(0x3C00))
    # int16: two's complement <-> sign-magnitude; -2**15 clamps
    assert F.debug_store16(np.uint16(0xFFFF), 4, False, False) == 0x8001
    assert F.debug_store16(np.uint16(0x8000), 4, False, False) == 0xFFFF
    assert F.debug_load16(np.uint16(0x8001), 4, False, False) == 0xFFFF
    assert F.debug_load16(np.uint16(0x8001), 4, False, True) == 0x8001  # unsigned_int
    # int8: low 8 magnitude bits; signed load; the documented store quirk for negatives
    assert F.debug_store8(np.uint8(5), 5, False, False) == (5 << 5) | 16
    assert F.debug_store8(np.uint8(0), 5, False, False) == 0
    assert F.debug_store8(np.uint8(0xFF), 5, False, False) == 0x8000 | (0x81 << 5) | 16
    assert F.debug_load8(F.int8_to_dst16(np.array([-3])), 5, False, False)[0] == 0xFD
    assert F.debug_load8(F.int8_to_dst16(np.array([200])), 5, False, True)[0] == 200
