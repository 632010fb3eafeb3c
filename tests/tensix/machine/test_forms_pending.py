"""Forms whose effect no reference documents (the three specs, tt-isa-documentation, ttsim):
each must stop with a clear "not implemented: NAME (form)" error, never run silently.

* ADDR_MOD_AB2 (ThreadConfig 20..27, SrcAIncr/SrcBIncr bits): ApplyAddrMod's documentation
  and ttsim's counter update do not read it.
* ZEROSRC ``zero_val`` above bit 0 (the macro's 20-bit field): the documentation has only
  NegativeInfSrcA; assembly.yaml describes bit 4 of the word alone; ttsim rejects any value.
* CLEARDVALID ``reset`` above bit 1 (the macro's 22-bit field): the documentation has Reset
  and KeepReadingSameSrc only; the dest-dvalid controls in tt-llk are Quasar's.
"""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.state import NotImplementedInstruction


def run(text: str, cp: Coprocessor | None = None) -> Coprocessor:
    cp = cp or Coprocessor()
    cp.set_stream(0, assemble(text))
    cp.run(max_steps=1000)
    return cp


@pytest.mark.parametrize("bits", [1, 2, 3])
def test_addr_mod_ab2_bits_are_not_implemented(bits: int) -> None:
    cp = Coprocessor()
    cp.dst.write("fp32", np.zeros((8, 16), np.float32), np.arange(8))
    with pytest.raises(NotImplementedInstruction, match=r"not implemented: ADDR_MOD_AB2"):
        run(f"ttsetc16 21,{bits}\nTTI_SFPLOAD(0, 3, 1, 0)", cp)  # section 1 has AB2 bits


def test_addr_mod_ab2_of_an_unused_section_is_harmless() -> None:
    cp = Coprocessor()
    cp.dst.write("fp32", np.zeros((8, 16), np.float32), np.arange(8))
    run("ttsetc16 21,3\nTTI_SFPLOAD(0, 3, 0, 0)", cp)  # section 0 has none
    assert cp.threads[0].executed == 2


@pytest.mark.parametrize("zero_val", [2, 3, 0x10, 0x80000])
def test_zerosrc_wider_clear_values_are_not_implemented(zero_val: int) -> None:
    cp = Coprocessor()
    cp.load_src("a", 0, np.ones((64, 16), np.float32), "bf16")
    before = cp.srca.cells.copy()
    with pytest.raises(NotImplementedInstruction,
                       match=rf"not implemented: ZEROSRC zero_val={zero_val:#x}"):
        run(f"TTI_ZEROSRC({zero_val}, 0, 1, 1)", cp)
    np.testing.assert_array_equal(cp.srca.cells, before)  # nothing cleared


@pytest.mark.parametrize("reset", [4, 5, 0x200000])
def test_cleardvalid_wider_reset_fields_are_not_implemented(reset: int) -> None:
    with pytest.raises(NotImplementedInstruction,
                       match=rf"not implemented: CLEARDVALID reset={reset:#x}"):
        run(f"TTI_CLEARDVALID(1, {reset})")
