"""The source modification unit (SMU): operand modifiers and its 4 dep-store slots.

At issue the SMU applies sign, scale and swizzle to operands that are ready (the rules are
``alu.issue_sources``). An operand still being computed takes a dep-store slot; when its
producer commits, the SMU applies the modifiers to the result and presents it to the waiting
station, one operand per cycle (round robin). When all 4 slots are taken the designed issue
unit stalls (Table 12); the RTL's does not look.
"""

from __future__ import annotations

from ..machine.alu import ZERO, Lanes, issue_sources, operand_known

SLOTS = 4


def forwarded_src1(word: int, value: Lanes) -> Lanes:
    """SRC1 as the station receives it when ``value`` arrives from the commit bus."""
    return issue_sources(word, value, ZERO)[0]


def forwarded_src0(word: int, value: Lanes) -> Lanes:
    """SRC0 as the station receives it when ``value`` arrives from the commit bus."""
    return issue_sources(word, ZERO, value)[1]


def tag(word: int, src: int) -> int:
    """The operand tag (sign << 6 | swizzle) the SMU puts in place of a pending operand."""
    if word >> 63:
        return 0
    if src == 1:
        return (word >> 31 & 7) << 6 | (word >> 25 & 0x3F)
    return (word >> 14 & 7) << 6 | (word >> 8 & 0x3F)


def known_after(word: int, src: int, known: int) -> int:
    """Which lanes (x=4, y=2, z=1) of SRC``src`` are defined after the SMU's swizzle, when
    ``known`` are the defined lanes of the raw operand (swizzle code 11 is a constant)."""
    return operand_known(word, src, known)


class DepStore:
    """The 4 dep-store slots: how many pending operands the SMU is tracking."""

    __slots__ = ("used", "peak", "stalls")

    def __init__(self) -> None:
        self.used = 0
        self.peak = 0
        self.stalls = 0

    def has_room(self, n: int) -> bool:
        return self.used + n <= SLOTS

    def claim(self, n: int) -> None:
        self.used += n
        if self.used > self.peak:
            self.peak = self.used

    def release(self, n: int = 1) -> None:
        self.used = max(0, self.used - n)
