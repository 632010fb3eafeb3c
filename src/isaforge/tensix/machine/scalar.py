"""The Scalar Unit (ThCon) on the GPRs: SETDMAREG, ADDDMAREG, SUBDMAREG, MULDMAREG,
SHIFTDMAREG, BITWOPDMAREG, CMPDMAREG, FLUSHDMA, DMANOP (spec 002 and the ISA documentation).

Undefined behaviour is reported through ``report(message)`` (the machine's
:class:`~.state.UBPolicy`); when the caller chooses to continue:

* an unknown ``OpSel``/mode of SHIFTDMAREG (not 0..1), BITWOPDMAREG or CMPDMAREG (not 0..2)
  leaves the result register unchanged;
* a result register index of 64 or more (ADD/SUB/MULDMAREG have an 11-bit field) uses its low
  six bits.

SETDMAREG's special form (SetSignalsMode=1) reads the packers' state or a tile header
(:func:`setdmareg_special`, ISA documentation SETDMAREG_Special); it needs the machine's
:class:`~.state.Packers` and Config, which :func:`execute` takes as optional arguments
(:class:`ScalarUnit`, the machine's, always has them).

FLUSHDMA waits for conditions C0..C3 (outstanding scalar-unit memory requests, unpacker and
packer pipelines). In this functional model every instruction completes when it executes, so
those conditions always hold and FLUSHDMA (like DMANOP) changes no state.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

import numpy as np

from .dispatch import Execute, Fields, Report, Unit
from .state import Config, GPRs, NotImplementedInstruction, Packers, ThreadConfig

#: reads a Config field in the executing thread's CFG_STATE_ID bank
ConfigReader = Callable[[str], int]
M32 = 0xFFFFFFFF


def _result_index(f: dict[str, int], report: Report) -> int:
    r = f["ResultRegIndex"]
    if r >= GPRs.N:
        report(f"result register {r} is not one of the 64 GPRs")
        r &= GPRs.N - 1
    return r


def _operands(gpr: GPRs, t: int, f: dict[str, int], imm_mask: int) -> tuple[int, int]:
    left = gpr.get(t, f["OpARegIndex"])
    if f["OpBisConst"]:
        right = f["OpBRegIndex"] & imm_mask
    else:
        right = gpr.get(t, f["OpBRegIndex"])
    return left, right


def setdmareg(gpr: GPRs, t: int, f: dict[str, int]) -> None:
    """SETDMAREG (immediate form): write 16 bits to one half of a GPR."""
    if f["SetSignalsMode"]:
        raise NotImplementedInstruction("not implemented: SETDMAREG (SetSignalsMode=1, "
                                        "the special form)")
    half = f["RegIndex16b"]
    value = (f["Payload_SigSelSize"] << 14) | f["Payload_SigSel"]
    reg = half >> 1
    old = int(gpr.v[t, reg])  # (gpr.get)
    new = (old & 0x0000FFFF) | (value << 16) if half & 1 else (old & 0xFFFF0000) | value
    gpr.set(t, reg, new)


def _unknown(what: str) -> NotImplementedInstruction:
    return NotImplementedInstruction(
        f"not implemented: SETDMAREG (special form, {what}: Blackhole has a single packer and "
        "the documentation describes Wormhole's four)")


def _special_values(packers: Packers, cfg: ConfigReader, t: int, source: int,
                    which: int) -> list[int | None]:
    """The four 32-bit values SETDMAREG's special form reads for ``InputSource``
    ``source`` (``WhichPackers`` = ``which``); None where the documented value belongs to one
    of Wormhole's packers 1..3, which Blackhole does not have. Sources 10..15 read zeros."""
    values: list[int | None] = [0, 0, 0, 0]
    last = packers.last_tile_size if packers.last_thread == t else 0
    if source == 0:
        values = [(int(packers.acc_tile_size[t]) << 16) | last, None, None, None]
    elif source == 1:
        values = [packers.all_zero_flags, None, None, None]
    elif source == 2:  # packer 0's tile header
        if cfg("THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd"):
            raise NotImplementedInstruction(
                "not implemented: SETDMAREG (special form, tile header with "
                "THCON_SEC0_REG1_All_pack_disable_zero_compress_ovrd set: Blackhole's "
                "configuration has no All_pack_disable_zero_compress bits to read)")
        fmt = cfg("THCON_SEC0_REG1_Out_data_format")
        dzc = cfg("THCON_SEC0_REG1_Disable_zero_compress")
        values = [(last + 1) & 0xFFFF, (fmt << 16) | (dzc << 20), packers.all_zero_flags, 0]
    elif source in (3, 4, 5):
        raise _unknown(f"tile header of packer {source - 2}")
    elif source in (6, 7):  # 16 histogram bytes, little-endian
        if which & 3:
            raise _unknown(f"exponent histogram of packer {which & 3}")
        raw = packers.exp_histogram[(source - 6) * 16:(source - 5) * 16]
        values = [int(w) for w in np.ascontiguousarray(raw).view("<u4")]
    elif source == 8:  # bit i: packer i's AllZeroFlags bit 0 (bits 1..3: no such packers)
        values = [None, 0, 0, 0]
    elif source == 9:
        values[0] = packers.exp_histogram_max
    return values


def _known(value: int | None, source: int) -> int:
    if value is None:
        raise _unknown(f"InputSource {source} values of packers 1..3")
    return int(value)


def setdmareg_special(gpr: GPRs, packers: Packers, cfg: ConfigReader, t: int,
                      f: dict[str, int]) -> None:
    """SETDMAREG with SetSignalsMode=1 (ISA documentation, SETDMAREG_Special): read 128 bits
    of packer state or configuration chosen by ``InputSource`` and write 16, 32 or 128 bits
    of them to the GPRs. ``Payload_SigSelSize`` is ResultSize, ``Payload_SigSel`` holds
    WhichPackers (bits 10..7), InputSource (6..3) and InputHalfReg (2..0), and
    ``RegIndex16b`` is ResultHalfReg. Whatever would need Wormhole's packers 1..3 is
    "not implemented" (Blackhole has one packer)."""
    size, sel, half = f["Payload_SigSelSize"], f["Payload_SigSel"], f["RegIndex16b"]
    in_half, source, which = sel & 7, sel >> 3 & 0xF, sel >> 7 & 0xF
    values = _special_values(packers, cfg, t, source, which)
    needed = [in_half >> 1] if size < 2 else [0, 1, 2, 3]
    for k in needed:
        _known(values[k], source)
    if source == 8:  # WhichPackers is a mask of packers whose AccTileSize is reset
        if which & ~1:
            raise _unknown(f"WhichPackers mask {which:#x}")
        if which & 1:
            packers.acc_tile_size[:] = 0
    if size == 0:  # one 16-bit half of the values to one half of a GPR
        v = _known(values[in_half >> 1], source) >> (16 * (in_half & 1)) & 0xFFFF
        reg, hi = half >> 1, half & 1
        old = gpr.get(t, reg)
        gpr.set(t, reg, (old & 0x0000FFFF) | (v << 16) if hi else (old & 0xFFFF0000) | v)
    elif size == 1:  # one value to one GPR
        gpr.set(t, half >> 1, _known(values[in_half >> 1], source))
    else:  # four values to four consecutive GPRs
        base = (half >> 1) & 0x3C
        known = [_known(v, source) for v in values]
        if size == 2:
            for k in range(4):
                gpr.set(t, base + k, known[k])
        else:  # 3: only the tile header's defined fields
            gpr.set(t, base, (gpr.get(t, base) & 0xFFFF0000) | (known[0] & 0xFFFF))
            gpr.set(t, base + 1, (gpr.get(t, base + 1) & ~0x00FF0000) | (known[1] & 0x00FF0000))
            gpr.set(t, base + 2, known[2])


def arith(name: str, gpr: GPRs, t: int, f: dict[str, int], report: Report) -> None:
    """ADDDMAREG, SUBDMAREG, MULDMAREG (right operand: a GPR or a 6-bit immediate)."""
    left, right = _operands(gpr, t, f, 0x3F)
    if name == "ADDDMAREG":
        result = left + right
    elif name == "SUBDMAREG":
        result = left - right
    else:  # MULDMAREG: 16 x 16 -> 32 bits, unsigned
        result = (left & 0xFFFF) * (right & 0xFFFF)
    gpr.set(t, _result_index(f, report), result & M32)


def shiftdmareg(gpr: GPRs, t: int, f: dict[str, int], report: Report) -> None:
    left, right = _operands(gpr, t, f, 0x1F)
    right &= 0x1F
    mode = f["OpSel"]
    if mode == 0:
        result = (left << right) & M32
    elif mode == 1:
        result = left >> right
    else:
        report(f"SHIFTDMAREG mode {mode} (only 0 LEFT and 1 RIGHT exist)")
        return
    gpr.set(t, _result_index(f, report), result)


def bitwopdmareg(gpr: GPRs, t: int, f: dict[str, int], report: Report) -> None:
    left, right = _operands(gpr, t, f, 0x3F)
    mode = f["OpSel"]
    if mode == 0:
        result = left & right
    elif mode == 1:
        result = left | right
    elif mode == 2:
        result = left ^ right
    else:
        report(f"BITWOPDMAREG mode {mode} (only 0 AND, 1 OR, 2 XOR exist)")
        return
    gpr.set(t, _result_index(f, report), result)


def cmpdmareg(gpr: GPRs, t: int, f: dict[str, int], report: Report) -> None:
    left, right = _operands(gpr, t, f, 0x3F)
    mode = f["OpSel"]
    if mode == 0:
        result = int(left > right)
    elif mode == 1:
        result = int(left < right)
    elif mode == 2:
        result = int(left == right)
    else:
        report(f"CMPDMAREG mode {mode} (only 0 GT, 1 LT, 2 EQ exist)")
        return
    gpr.set(t, _result_index(f, report), result)


def execute(name: str, gpr: GPRs, t: int, f: dict[str, int], report: Report,
            packers: Packers | None = None, cfg: ConfigReader | None = None) -> None:
    """Run one scalar-unit instruction ``name`` with decoded fields ``f``. SETDMAREG's
    special form needs the packers' state and the thread's Config reader; without them it
    is "not implemented"."""
    if name == "SETDMAREG" and f["SetSignalsMode"] and packers is not None and cfg is not None:
        setdmareg_special(gpr, packers, cfg, t, f)
    elif name == "SETDMAREG":
        setdmareg(gpr, t, f)
    elif name in ("ADDDMAREG", "SUBDMAREG", "MULDMAREG"):
        arith(name, gpr, t, f, report)
    elif name == "SHIFTDMAREG":
        shiftdmareg(gpr, t, f, report)
    elif name == "BITWOPDMAREG":
        bitwopdmareg(gpr, t, f, report)
    elif name == "CMPDMAREG":
        cmpdmareg(gpr, t, f, report)
    elif name in ("FLUSHDMA", "DMANOP"):
        pass
    else:
        raise NotImplementedInstruction(f"not implemented: {name}")


NAMES = ("SETDMAREG", "ADDDMAREG", "SUBDMAREG", "MULDMAREG", "SHIFTDMAREG", "BITWOPDMAREG",
         "CMPDMAREG", "FLUSHDMA", "DMANOP")


class ScalarUnit(Unit):
    """The scalar unit's instructions on the GPRs (and, for SETDMAREG's special form, the
    packers' state and the executing thread's Config bank)."""

    def __init__(self, gpr: GPRs, packers: Packers, config: Config,
                 thread_config: ThreadConfig, report_ub: Report) -> None:
        self.gpr = gpr
        self.packers = packers
        self.config = config
        self.thread_config = thread_config
        self.report_ub = report_ub

    def cfg(self, t: int, name: str) -> int:
        """A Config field in thread ``t``'s CFG_STATE_ID bank."""
        return self.config.get(name, self.thread_config.bank(t))

    def handlers(self) -> Mapping[str, Execute]:
        def run(name: str) -> Execute:
            def execute_one(t: int, f: Fields) -> None:
                execute(name, self.gpr, t, dict(f), self.report_ub, packers=self.packers,
                        cfg=lambda n: self.cfg(t, n))
            return execute_one

        out = {name: run(name) for name in NAMES}
        # the frequent ones without the generic path's copies and tests (same semantics)
        out["SETDMAREG"] = self.setdmareg
        out["DMANOP"] = out["FLUSHDMA"] = self.nothing
        return out

    def quiet(self) -> Collection[str]:
        return ("DMANOP", "FLUSHDMA")  # (the others write GPRs, which ATCAS's wait reads)

    def setdmareg(self, t: int, f: Fields) -> None:
        """SETDMAREG, either form (:func:`execute`'s choice)."""
        if f["SetSignalsMode"]:
            setdmareg_special(self.gpr, self.packers, lambda n: self.cfg(t, n), t, dict(f))
        else:
            setdmareg(self.gpr, t, f)  # type: ignore[arg-type]

    def nothing(self, t: int, f: Fields) -> None:
        """FLUSHDMA and DMANOP: no state changes in this functional model."""


__all__ = ["NAMES", "ScalarUnit", "execute", "setdmareg_special"]
