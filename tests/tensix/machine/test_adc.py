"""Every ADC instruction against the ISA documentation's models (spec 000 §5)."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.state import PACK, UNP0, UNP1, UndefinedBehaviourError, W, X, Y, Z


def run(text: str, thread: int = 0, preset: dict | None = None,
        ub: str = "stop") -> Coprocessor:
    cp = Coprocessor(ub=ub)
    for (t, u, ch, dim, cr), v in (preset or {}).items():
        cp.adc.v[t, u, ch, dim, cr] = v
    cp.set_stream(thread, assemble(text))
    cp.run()
    return cp


def pairs(cp: Coprocessor, t: int, u: int, dim: int) -> list[tuple[int, int]]:
    """[(value, _Cr) of channel 0, (value, _Cr) of channel 1] for one dimension."""
    return [(cp.adc.get(t, u, ch, dim), cp.adc.get(t, u, ch, dim, cr=True)) for ch in (0, 1)]


def test_state_shape() -> None:
    cp = Coprocessor()
    assert cp.adc.v.shape == (3, 3, 2, 4, 2)  # thread, unit, channel, XYZW, (value, _Cr)


@pytest.mark.parametrize("dim", [X, Y, Z, W])
def test_setadc_sets_counter_and_cr(dim: int) -> None:
    cp = run(f"ttsetadc 2,1,{dim},1234")  # unpacker 1, channel 1
    assert cp.adc.get(0, UNP1, 1, dim) == cp.adc.get(0, UNP1, 1, dim, cr=True) == 1234 & (
        [0x3FFFF, 0x1FFF, 0xFF, 0xFF][dim])
    assert cp.adc.get(0, UNP0, 1, dim) == 0 and cp.adc.get(0, UNP1, 0, dim) == 0


def test_setadc_thread_override_is_reported() -> None:
    word = assemble("ttsetadc 1,0,0,5")[0] | (2 << 16)  # ThreadOverride = 2 -> thread 1
    cp = Coprocessor()
    cp.set_stream(0, [word])
    with pytest.raises(UndefinedBehaviourError, match="ThreadOverride"):
        cp.run()
    cp = Coprocessor(ub="continue")
    cp.set_stream(0, [word])
    cp.run()
    assert cp.adc.get(1, UNP0, 0, X) == 5 + (2 << 16) and cp.adc.get(0, UNP0, 0, X) == 0
    assert len(cp.ub_events) == 1


def test_setadcxy_bitmask_and_units() -> None:
    # spec 000 §5.4: ttsetadcxy 4,0,0,0,0,11 -> packers, X0, Y0, Y1 set to 0
    pre = {(0, PACK, 0, X, 0): 9, (0, PACK, 1, X, 0): 9, (0, PACK, 1, X, 1): 9,
           (0, PACK, 1, Y, 0): 9, (0, UNP0, 0, X, 0): 9}
    cp = run("ttsetadcxy 4,0,0,0,0,11", preset=pre)
    assert pairs(cp, 0, PACK, X) == [(0, 0), (9, 9)]  # X1 not in the mask
    assert pairs(cp, 0, PACK, Y)[1] == (0, 0)
    assert cp.adc.get(0, UNP0, 0, X) == 9  # unpacker 0 untouched
    cp = run("ttsetadcxy 3,5,6,7,1,15")  # both unpackers: Y1=5 X1=6 Y0=7 X0=1
    for u in (UNP0, UNP1):
        assert pairs(cp, 0, u, X) == [(1, 1), (6, 6)]
        assert pairs(cp, 0, u, Y) == [(7, 7), (5, 5)]
    assert pairs(cp, 0, PACK, X) == [(0, 0), (0, 0)]


def test_setadczw() -> None:
    cp = run("ttsetadczw 1,3,2,1,4,5")  # W1=3 Z1=2 W0=1 Z0=4, mask Z0 and Z1
    assert pairs(cp, 0, UNP0, Z) == [(4, 4), (2, 2)]
    assert pairs(cp, 0, UNP0, W) == [(0, 0), (0, 0)]


def test_setadcxx() -> None:
    cp = run("ttsetadcxx 4,255,17")
    assert pairs(cp, 0, PACK, X) == [(17, 17), (255, 255)]


def test_incadcxy_and_zw_add_to_counters_only() -> None:
    pre = {(0, UNP1, 0, X, 0): 10, (0, UNP1, 0, X, 1): 3, (0, UNP1, 1, Y, 0): 20}
    cp = run("ttincadcxy 2,4,3,2,1", preset=pre)  # Y1+=4 X1+=3 Y0+=2 X0+=1
    assert pairs(cp, 0, UNP1, X) == [(11, 3), (3, 0)]
    assert pairs(cp, 0, UNP1, Y) == [(2, 0), (24, 0)]
    cp = run("ttincadczw 4,1,2,3,4")  # W1+=1 Z1+=2 W0+=3 Z0+=4
    assert pairs(cp, 0, PACK, Z) == [(4, 0), (2, 0)]
    assert pairs(cp, 0, PACK, W) == [(3, 0), (1, 0)]


def test_addrcrxy_and_zw_add_to_cr_and_copy() -> None:
    pre = {(2, UNP0, 0, X, 0): 50, (2, UNP0, 0, X, 1): 8, (2, UNP0, 1, Y, 1): 1}
    cp = run("ttaddrcrxy 1,2,0,0,3,9", thread=2, preset=pre)  # X0 (+3) and Y1 (+2)
    assert pairs(cp, 2, UNP0, X)[0] == (11, 11)
    assert pairs(cp, 2, UNP0, Y)[1] == (3, 3)
    cp = run("ttaddrcrzw 4,1,0,0,2,2", preset={(0, PACK, 0, W, 1): 6})  # W0 (+0)... mask W0
    assert pairs(cp, 0, PACK, W)[0] == (6, 6)
    cp = run("ttaddrcrzw 4,0,0,0,2,1")  # Z0 += 2 on _Cr, copied
    assert pairs(cp, 0, PACK, Z)[0] == (2, 2)


def test_counters_wrap_at_their_width() -> None:
    pre = {(0, UNP0, 0, Z, 0): 0xFF, (0, UNP0, 0, W, 0): 0xFE}
    cp = run("ttincadczw 1,0,0,3,1", preset=pre)
    assert cp.adc.get(0, UNP0, 0, Z) == 0 and cp.adc.get(0, UNP0, 0, W) == 1


def test_adcs_are_per_thread() -> None:
    cp = Coprocessor()
    cp.load_program({0: assemble("ttsetadcxx 1,1,1"), 1: assemble("ttsetadcxx 1,2,2")})
    cp.run()
    assert cp.adc.v[:, UNP0, 0, X, 0].tolist() == [1, 2, 0]
    assert np.count_nonzero(cp.adc.v) == 8
