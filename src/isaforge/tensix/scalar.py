"""The Scalar Unit (ThCon) on the GPRs: SETDMAREG, ADDDMAREG, SUBDMAREG, MULDMAREG,
SHIFTDMAREG, BITWOPDMAREG, CMPDMAREG, FLUSHDMA, DMANOP (spec 002 and the ISA documentation).

Undefined behaviour is reported through ``report(message)`` (the machine's
:class:`~.state.UBPolicy`); when the caller chooses to continue:

* an unknown ``OpSel``/mode of SHIFTDMAREG (not 0..1), BITWOPDMAREG or CMPDMAREG (not 0..2)
  leaves the result register unchanged;
* a result register index of 64 or more (ADD/SUB/MULDMAREG have an 11-bit field) uses its low
  six bits.

FLUSHDMA waits for conditions C0..C3 (outstanding scalar-unit memory requests, unpacker and
packer pipelines). In this functional model every instruction completes when it executes, so
those conditions always hold and FLUSHDMA (like DMANOP) changes no state.
"""

from __future__ import annotations

from collections.abc import Callable

from .state import GPRs, NotImplementedInstruction

Report = Callable[[str], None]
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
    reg, hi = half >> 1, half & 1
    old = gpr.get(t, reg)
    new = (old & 0x0000FFFF) | (value << 16) if hi else (old & 0xFFFF0000) | value
    gpr.set(t, reg, new)


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


def execute(name: str, gpr: GPRs, t: int, f: dict[str, int], report: Report) -> None:
    """Run one scalar-unit instruction ``name`` with decoded fields ``f``."""
    if name == "SETDMAREG":
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

__all__ = ["NAMES", "execute"]
