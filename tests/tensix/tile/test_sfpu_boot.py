"""The SFPU instructions tt-metal's firmware pushes at boot (SFPENCC, SFPLOADI, SFPCONFIG to a
constant LReg), against values worked out from the documented functional models."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge import tensix
from isaforge.tensix import Coprocessor
from isaforge.tensix.machine import NotImplementedInstruction


def run(cp: Coprocessor, text: str) -> None:
    cp.load_program({0: tensix.assemble(text)})
    cp.run(max_steps=100)


def test_firmware_load_const_sequence() -> None:
    """c_tensix_core::ex_load_const: LReg0 = -1.0 (BF16 0xbf80), then LReg11 = LReg0."""
    cp = Coprocessor()
    run(cp, "TTI_SFPENCC(3, 0, 0, 10)\nTTI_SFPLOADI(0, 0, 0xbf80)\nTTI_SFPCONFIG(0, 11, 0)")
    sfpu = cp.units.sfpu
    assert (sfpu.use_lane_flags & sfpu.lane_flags).all()
    assert (cp.lreg[0] == 0xBF800000).all()
    assert (sfpu.lreg_const[0] == 0xBF800000).all()


@pytest.mark.parametrize(("mod0", "imm", "old", "expected"), [
    (0, 0x3F80, 0, 0x3F800000),          # BF16 1.0
    (1, 0x3C00, 0, 0x3F800000),          # FP16 1.0: exponent 15 + 112 = 127
    (1, 0xC500, 0, 0xC0A00000),          # FP16 -5.0
    (2, 0x8001, 0, 0x00008001),          # zero-extended
    (4, 0x8001, 0, 0xFFFF8001),          # sign-extended
    (8, 0x1234, 0xAAAABBBB, 0x1234BBBB),  # upper half, lower kept
    (10, 0x1234, 0xAAAABBBB, 0xAAAA1234),  # lower half, upper kept
])
def test_sfploadi_conversions(mod0: int, imm: int, old: int, expected: int) -> None:
    cp = Coprocessor()
    cp.lreg[3][:] = old
    run(cp, f"TTI_SFPLOADI(3, {mod0}, {imm:#x})")
    assert (cp.lreg[3] == expected).all()
    assert (cp.lreg[2] == 0).all()


def test_sfpconfig_constant_defaults_and_lane_mask() -> None:
    cp = Coprocessor()
    run(cp, "TTI_SFPCONFIG(0, 12, 1)")  # MOD1_IMM16_IS_VALUE: the default 1/65536
    assert (cp.units.sfpu.lreg_const[1] == np.float32(1 / 65536).view(np.uint32)).all()
    cp.lreg[0][:8] = np.arange(8, dtype=np.uint32) + 100
    run(cp, "TTI_SFPCONFIG(3, 13, 8)")  # lane mask: lanes with L & 7 == 0 only
    lanes = np.arange(32)
    np.testing.assert_array_equal(cp.units.sfpu.lreg_const[2], np.where(lanes & 7 == 0, 100, 0))


def test_sfpencc_disabling_lanes_is_not_implemented() -> None:
    cp = Coprocessor()
    with pytest.raises(NotImplementedInstruction, match="lanes disabled"):
        run(cp, "TTI_SFPENCC(1, 0, 0, 10)")  # use the flags, and set them false
    assert not cp.units.sfpu.use_lane_flags.any()  # the state did not change
