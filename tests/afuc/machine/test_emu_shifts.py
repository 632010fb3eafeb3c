"""Shifts by 32 or more use the low 5 bits of the amount, on purpose (README: where we differ
from Mesa), on the exact and the compiled path alike."""

from __future__ import annotations

import pytest

from isaforge.afuc import Emulator, assemble

PROG = """[016ee001]
        mov $02, {amount}
        mov $03, 0x8000 << 16
        or $03, $03, 0x3
        shl $04, $03, $02
        ushr $05, $03, $02
        ishr $06, $03, $02
        rot $07, $03, $02
        waitin
        mov $01, $data
"""


def _run(amount: int, exact: bool) -> list[int]:
    emu = Emulator(assemble(PROG.format(amount=hex(amount))))
    emu.run(exact=exact)
    return [emu.read_gpr(n) for n in range(4, 8)]


@pytest.mark.parametrize("amount", [1, 31, 32, 33, 63, 0xFFFF])
def test_shift_amount_is_taken_mod_32(amount: int):
    s = amount & 31
    a = 0x80000003
    want = [(a << s) & 0xFFFFFFFF, a >> s, ((a - (1 << 32)) >> s) & 0xFFFFFFFF,
            ((a << s) | (a >> (32 - s))) & 0xFFFFFFFF if s else a]
    assert _run(amount, exact=True) == want
    assert _run(amount, exact=False) == want
