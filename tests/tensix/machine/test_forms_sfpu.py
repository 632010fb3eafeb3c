"""SFPLOAD/SFPSTORE modes the Blackhole ISA documentation describes beyond the common ones:
MOD0_FMT_INT32_ALL (the Sp stack addressing), the deprecated MOD0_FMT_INT32_SM and
MOD0_FMT_INT8_COMP, and the ``SpOffset & 3`` term of the ordinary addressing."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.sfpu import (
    INT8,
    INT8_COMP,
    INT32,
    INT32_SM,
    load_convert,
    store_convert,
)
from isaforge.tensix.machine.state import DST

LANE = np.arange(32)


def run(text: str, cp: Coprocessor) -> Coprocessor:
    cp.set_stream(0, assemble(text))
    cp.run(max_steps=10_000)
    return cp


def lanes_at(cp: Coprocessor, addr: int) -> np.ndarray:
    """The 32 Dst32b cells an access at ``addr`` touches, in lane order."""
    rows = (addr & 0x3FC) + LANE // 8
    cols = (LANE & 7) * 2 + (1 if addr & 2 else 0)
    return cp.dst.read32(np.arange(1024))[rows, cols]


def words(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**32, 32, dtype=np.uint64).astype(np.uint32)


# ---- the deprecated modes --------------------------------------------------------------------


def test_int32_sm_converts_as_int32_both_ways() -> None:
    cells = words(1)
    old = words(2)
    np.testing.assert_array_equal(load_convert(INT32_SM, cells, old),
                                  load_convert(INT32, cells, old))
    np.testing.assert_array_equal(store_convert(INT32_SM, cells), store_convert(INT32, cells))


def test_int32_sm_round_trip_through_dst32b() -> None:
    cp = Coprocessor()
    cp.lreg[1] = words(3)
    run("TTI_SFPSTORE(1, 12, 0, 8)\nTTI_SFPLOAD(2, 12, 0, 8)", cp)
    np.testing.assert_array_equal(cp.lreg[2], cp.lreg[1])
    np.testing.assert_array_equal(lanes_at(cp, 8), store_convert(INT32, cp.lreg[1]))


def test_int8_comp_load_takes_ten_magnitude_bits() -> None:
    # Dst16b cell: sign 1, magnitude field (bits 14..5) 0x2A5, low five bits set (ignored)
    cell = (1 << 15) | (0x2A5 << 5) | 0x1F
    cp = Coprocessor()
    cp.dst.write16(np.arange(4), np.full((4, 16), cell))
    run("TTI_SFPLOAD(0, 13, 0, 0)\nTTI_SFPLOAD(1, 5, 0, 0)", cp)
    assert (cp.lreg[0] == 0x80000000 | 0x2A5).all()  # INT8_COMP: all ten bits
    assert (cp.lreg[1] == 0x80000000 | 0xA5).all()  # INT8: the low eight


def test_int8_comp_store_is_int8s_fixed_exponent_encoding() -> None:
    datum = np.array([0x80000123, 0x000003FF, 0x7, 0x80000000] * 8, dtype=np.uint32)
    expect = ((datum >> 31) << 15) | (16 << 10) | (datum & 0x3FF)
    np.testing.assert_array_equal(store_convert(INT8_COMP, datum), expect)
    np.testing.assert_array_equal(store_convert(INT8, datum), expect)
    cp = Coprocessor()
    cp.lreg[4] = datum
    run("TTI_SFPSTORE(4, 13, 0, 0)", cp)
    got = cp.dst.read16(np.arange(4))[LANE // 8, (LANE & 7) * 2]
    np.testing.assert_array_equal(got, expect)


# ---- MOD0_FMT_INT32_ALL: the Sp stack ---------------------------------------------------------


def _stack_machine(incr: int = 4) -> Coprocessor:
    cp = Coprocessor()
    run(f"ttsetc16 36,{incr}", cp)  # SFPU_STACK_Incr
    return cp


def test_int32_all_store_pushes_and_load_pops() -> None:
    cp = _stack_machine(4)
    a, b = words(10), words(11)
    cp.lreg[0], cp.lreg[1] = a, b
    run("TTI_SFPSTORE(0, 10, 0, 0)", cp)  # address Sp=0, then Sp = 4
    assert cp.rwc.sp[0] == 4
    run("TTI_SFPSTORE(1, 10, 0, 0)", cp)  # address Sp=4 (rows 4..7), then Sp = 8
    assert cp.rwc.sp[0] == 8
    np.testing.assert_array_equal(lanes_at(cp, 0), store_convert(INT32, a))
    np.testing.assert_array_equal(lanes_at(cp, 4), store_convert(INT32, b))
    run("TTI_SFPLOAD(2, 10, 0, 0)", cp)  # Sp 8 -> 4, reads b
    assert cp.rwc.sp[0] == 4
    np.testing.assert_array_equal(cp.lreg[2], b)
    run("TTI_SFPLOAD(3, 10, 0, 0)", cp)  # Sp 4 -> 0, reads a
    assert cp.rwc.sp[0] == 0
    np.testing.assert_array_equal(cp.lreg[3], a)
    run("TTI_SFPLOAD(5, 10, 0, 0)", cp)  # Sp already 0: not decremented, reads a again
    assert cp.rwc.sp[0] == 0
    np.testing.assert_array_equal(cp.lreg[5], a)


def test_int32_all_address_uses_sp_base_and_low_bits_of_dst_offset() -> None:
    cp = _stack_machine(0)
    cp.config.set("DEST_SP_BASE_Base", 16)
    cp.rwc.set(0, DST, 102)  # DstOffset 102: only its low two bits (2: odd columns) count
    cp.lreg[6] = words(12)
    run("TTI_SFPSTORE(6, 10, 0, 8)", cp)  # Addr = 8 + (0 + 16) + (102 & 3) = 26
    np.testing.assert_array_equal(lanes_at(cp, 26), store_convert(INT32, cp.lreg[6]))
    assert cp.dst.read32(np.arange(100, 104)).sum() == 0  # not at the Dst RWC's rows
    assert cp.rwc.sp[0] == 0  # SFPU_STACK_Incr 0


def test_int32_all_stack_pointer_wraps_at_ten_bits() -> None:
    cp = _stack_machine(0x3FF)  # an increment of -1 modulo 2**10
    cp.rwc.sp[0] = 2
    cp.lreg[0] = words(13)
    run("TTI_SFPSTORE(0, 10, 0, 0)", cp)
    assert cp.rwc.sp[0] == 1
    run("TTI_SFPLOAD(1, 10, 0, 0)", cp)  # 1 - 0x3FF = 2 (mod 1024)
    assert cp.rwc.sp[0] == 2
    np.testing.assert_array_equal(cp.lreg[1], cp.lreg[0])


def test_int32_all_pop_happens_even_for_a_non_writable_lreg() -> None:
    cp = _stack_machine(4)
    cp.rwc.sp[0] = 8
    run("TTI_SFPLOAD(9, 10, 0, 0)", cp)  # VD >= 8 writes nothing, but Sp still moves
    assert cp.rwc.sp[0] == 4


# ---- the SpOffset & 3 term of the ordinary modes ---------------------------------------------


@pytest.mark.parametrize("sp_base, odd", [(0, False), (1, False), (2, True), (6, True)])
def test_ordinary_modes_add_low_bits_of_sp_offset(sp_base: int, odd: bool) -> None:
    cp = Coprocessor()
    cp.config.set("DEST_SP_BASE_Base", sp_base)
    cp.dst.write32(np.arange(1024), np.arange(1024 * 16, dtype=np.uint32).reshape(1024, 16) << 8)
    run("TTI_SFPLOAD(0, 4, 0, 4)", cp)  # INT32: Addr = 4 + Dst 0 + (sp_base & 3)
    addr = 4 + (sp_base & 3)
    assert bool(addr & 2) is odd
    np.testing.assert_array_equal(cp.lreg[0], load_convert(INT32, lanes_at(cp, addr), cp.lreg[0]))
    assert cp.rwc.sp[0] == 0  # only INT32_ALL moves Sp
