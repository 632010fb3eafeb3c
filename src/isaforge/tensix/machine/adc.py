"""ADC instructions (Miscellaneous Unit): SETADC, SETADCXY, SETADCZW, SETADCXX, INCADCXY,
INCADCZW, ADDRCRXY, ADDRCRZW (spec 000 §5.3 and the ISA documentation's models).

``CntSetMask`` bit 0 selects unpacker 0, bit 1 unpacker 1, bit 2 the packers. The XY/ZW forms
carry a 2-bit ``ThreadOverride`` above the 3-bit channel-1 Y (or W) value (bits 18..19 of the
word); SETADC carries it in bits 16..17 of its value. A non-zero override is unsupported
functionality and is reported as undefined behaviour; if the caller continues, the counters of
thread ``override - 1`` are used, as the documentation describes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import numpy as np

from .dispatch import Execute, Report, Unit
from .state import ADC_MASKS, PACK, UNP0, UNP1, ADCs, W, X, Y, Z


def _units(mask: int) -> tuple[int, ...]:
    return _UNITS[mask & 7]


#: CntSetMask's low three bits -> the units they select, in order
_UNITS = tuple(tuple(u for bit, u in ((1, UNP0), (2, UNP1), (4, PACK)) if mask & bit)
               for mask in range(8))


def _thread(t: int, override: int, report: Report) -> int:
    if override:
        report(f"ThreadOverride={override} is unsupported functionality")
        return override - 1 if override <= 3 else t
    return t


def setadc(adc: ADCs, t: int, f: Mapping[str, int], report: Report) -> None:
    value = f["Value"]
    if value >> 16:
        t = _thread(t, value >> 16, report)
    ch, dim = f["ChannelIndex"], f["DimensionIndex"]
    for u in _units(f["CntSetMask"]):
        adc.set(t, u, ch, dim, value)


def _xy_fields(f: Mapping[str, int]) -> tuple[int, int, int, int, int]:
    """(v0a, v0b, v1a, v1b, thread override): channel 0 X/Z, Y/W then channel 1."""
    return f["Ch0_X"], f["Ch0_Y"], f["Ch1_X"], f["Ch1_Y"] & 7, f["Ch1_Y"] >> 3 & 3


def set_pair(adc: ADCs, t: int, f: Mapping[str, int], dims: tuple[int, int],
             report: Report) -> None:
    """SETADCXY (dims X, Y) / SETADCZW (dims Z, W): set counter and _Cr where BitMask says."""
    v0a, v0b, v1a, v1b, ovr = _xy_fields(f)
    if ovr:
        t = _thread(t, ovr, report)
    a, b = dims
    todo = ((0, 0, a, v0a), (1, 0, b, v0b), (2, 1, a, v1a), (3, 1, b, v1b))
    for u in _units(f["CntSetMask"]):
        for bit, ch, dim, v in todo:
            if f["BitMask"] >> bit & 1:
                adc.set(t, u, ch, dim, v)


def inc_pair(adc: ADCs, t: int, f: Mapping[str, int], dims: tuple[int, int],
             report: Report) -> None:
    """INCADCXY / INCADCZW: add to the counters (not to _Cr)."""
    v0a, v0b, v1a, v1b, ovr = _xy_fields(f)
    t = _thread(t, ovr, report)
    a, b = dims
    for u in _units(f["CntSetMask"]):
        for ch, dim, v in ((0, a, v0a), (0, b, v0b), (1, a, v1a), (1, b, v1b)):
            adc.set(t, u, ch, dim, adc.get(t, u, ch, dim) + v, cr=False)


def addrcr_pair(adc: ADCs, t: int, f: Mapping[str, int], dims: tuple[int, int],
                report: Report) -> None:
    """ADDRCRXY / ADDRCRZW: add to _Cr where BitMask says, then copy _Cr to the counter."""
    v0a, v0b, v1a, v1b, ovr = _xy_fields(f)
    t = _thread(t, ovr, report)
    a, b = dims
    todo = ((0, 0, a, v0a), (1, 0, b, v0b), (2, 1, a, v1a), (3, 1, b, v1b))
    for u in _units(f["CntSetMask"]):
        for bit, ch, dim, v in todo:
            if f["BitMask"] >> bit & 1:
                adc.set(t, u, ch, dim, adc.get(t, u, ch, dim, cr=True) + v)


def setadcxx(adc: ADCs, t: int, f: Mapping[str, int]) -> None:
    """SETADCXX: channel 0 X (and _Cr) from x_start, channel 1 X from x_end2."""
    for u in _units(f["CntSetMask"]):
        adc.set(t, u, 0, X, f["x_start"])
        adc.set(t, u, 1, X, f["x_end2"])


XY = (X, Y)
ZW = (Z, W)


def _pair_block(a: int, v0a: int, v0b: int, v1a: int, v1b: int) -> np.ndarray:
    """What SETADCXY/SETADCZW with every BitMask bit writes to one unit's counters
    ``[channel, dim a..a+1, (value, _Cr)]`` (each value masked as :meth:`ADCs.set` does)."""
    ma, mb = ADC_MASKS[a], ADC_MASKS[a + 1]
    return np.array([[[v0a & ma] * 2, [v0b & mb] * 2], [[v1a & ma] * 2, [v1b & mb] * 2]],
                    dtype=np.uint32)


def _pair_writes(a: int, v0a: int, v0b: int, v1a: int, v1b: int, bits: int
                 ) -> tuple[tuple[int, int, int], ...]:
    """What SETADCXY/SETADCZW with BitMask ``bits`` (not all four) writes to one unit's
    counters: (channel, dim, value masked as :meth:`ADCs.set` does) per selected counter, to
    be set with its _Cr."""
    todo = ((0, a, v0a), (0, a + 1, v0b), (1, a, v1a), (1, a + 1, v1b))
    return tuple((ch, dim, v & ADC_MASKS[dim]) for bit, (ch, dim, v) in enumerate(todo)
                 if bits >> bit & 1)


class AdcUnit(Unit):
    """The ADC instructions on the address counters."""

    #: SETADCXY/SETADCZW without ThreadOverride write each unit's counters from a prepared
    #: block (all four BitMask bits: its eight counters at once; else the selected ones from
    #: a prepared list) (False: counter by counter through ADCs.set; tests compare)
    blocks = True

    def __init__(self, adc: ADCs, report_ub: Report) -> None:
        self.adc = adc
        self.report_ub = report_ub
        #: (first dim, the four values, BitMask's low bits) -> _pair_block's array (read-only)
        #: or _pair_writes' list
        self._blocks: dict[tuple[int, int, int, int, int, int],
                           np.ndarray | tuple[tuple[int, int, int], ...]] = {}

    def set_pair(self, t: int, f: Mapping[str, int], dims: tuple[int, int]) -> None:
        """SETADCXY / SETADCZW (:func:`set_pair`)."""
        y = f["Ch1_Y"]
        if not self.blocks or y & 0x18:
            set_pair(self.adc, t, f, dims, self.report_ub)
            return
        a = dims[0]  # (dims are X, Y or Z, W: next to each other)
        bits = f["BitMask"] & 15
        key = (a, f["Ch0_X"], f["Ch0_Y"], f["Ch1_X"], y & 7, bits)
        block = self._blocks.get(key)
        if block is None:
            if len(self._blocks) >= 256:
                self._blocks.clear()
            block = self._blocks[key] = _pair_block(*key[:5]) if bits == 15 \
                else _pair_writes(*key)
        units = f["CntSetMask"] & 7
        v = self.adc.v
        if bits != 15:  # the counters BitMask selects, one by one
            for u in _UNITS[units]:
                for ch, dim, value in block:  # type: ignore[misc]
                    v[t, u, ch, dim] = value  # (the counter and its _Cr)
        elif units == 3:  # both unpackers at once
            v[t, UNP0:UNP1 + 1, :, a:a + 2] = block
        else:
            for u in _UNITS[units]:
                v[t, u, :, a:a + 2] = block

    def quiet(self) -> Collection[str]:
        return tuple(self.handlers())  # (the address counters only)

    def handlers(self) -> Mapping[str, Execute]:
        adc, report = self.adc, self.report_ub

        def pair(fn: Callable[[ADCs, int, Mapping[str, int], tuple[int, int], Report], None],
                 dims: tuple[int, int]) -> Execute:
            return lambda t, f: fn(adc, t, f, dims, report)

        return {
            "SETADC": lambda t, f: setadc(adc, t, f, report),
            "SETADCXX": lambda t, f: setadcxx(adc, t, f),
            "SETADCXY": lambda t, f: self.set_pair(t, f, XY),
            "SETADCZW": lambda t, f: self.set_pair(t, f, ZW),
            "INCADCXY": pair(inc_pair, XY), "INCADCZW": pair(inc_pair, ZW),
            "ADDRCRXY": pair(addrcr_pair, XY), "ADDRCRZW": pair(addrcr_pair, ZW),
        }


__all__ = ["ADC_MASKS", "XY", "ZW", "AdcUnit", "addrcr_pair", "inc_pair", "set_pair", "setadc",
           "setadcxx"]
