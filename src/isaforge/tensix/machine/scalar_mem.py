"""The Scalar Unit's memory instructions: LOADIND, STOREIND (L1 and MMIO forms), LOADREG,
STOREREG and the L1 atomics ATINCGET, ATINCGETPTR, ATSWAP, ATCAS.

They move data between the GPRs and the tile's memory, so they need one: the coprocessor's
``memory`` (a :class:`Memory`, which :mod:`isaforge.tensix.tile` provides); without it they
stay "not implemented". :class:`ScalarMemoryUnit` is the unit the coprocessor's dispatch
table gets them from. Semantics follow the tt-isa-documentation functional models, with the
field names of Blackhole's ``assembly.yaml``:

* L1 addresses are ``GPR[AddrRegIndex] * 16`` plus, for LOADIND/STOREIND, the 16-bit offset held
  in half-register ``OffsetIndex`` (post-incremented by 0/2/4/16 bytes per ``AutoIncSpec``), and
  for the atomics ``Sel32b * 4``; an address beyond L1 is undefined behaviour.
* LOADIND ``SizeSel`` and STOREIND's two size bits (``SizeSel:RegSizeSel``) select 16 bytes
  (four GPRs from ``DataRegIndex & 0x3C``), 32, 16 or 8 bits (0, 1, 2, 3), as tt-llk's ``p_ind``
  constants name them; a narrower load keeps the GPR's other bits. (Blackhole's assembly.yaml
  text lists STOREIND's sizes 1 and 2 the other way round; the documentation's order, shared
  with LOADIND, is used.)
* STOREIND with ``MemHierSel = 0`` and ``SizeSel = 1`` writes a GPR to the MMIO register
  ``0xFFB00000 + ((GPR[AddrReg] + (offset >> 4)) & 0xFFFFC)``; LOADREG/STOREREG address
  ``0xFFB00000 + (RegAddr << 2)``; below ``0xFFB11000`` is undefined behaviour. STOREIND to
  SrcA/SrcB (``MemHierSel = 0``, ``SizeSel = 0``) is not implemented.
* ATINCGETPTR and ATCAS wait at the Wait Gate (they retry in hardware) until the FIFO is not
  full/empty, or the word equals ``CmpVal``; :func:`wait_reason` says why.

Every access completes when the instruction executes (the hardware's later completion is not
timed in this functional model).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

from .dispatch import Execute, Fields, Unit, Wait
from .state import GPRs, NotImplementedInstruction

Report = Callable[[str], None]
MMIO_BASE = 0xFFB00000
MMIO_LOWEST = 0xFFB11000
_INCREMENTS = (0, 2, 4, 16)
M32 = 0xFFFFFFFF


class Memory(Protocol):
    """What the Scalar Unit reaches: L1 (byte addresses, little-endian) and the tile's MMIO."""

    l1_size: int

    def read(self, addr: int, size: int) -> int: ...

    def write(self, addr: int, size: int, value: int) -> None: ...

    def mmio_read(self, thread: int, addr: int) -> int: ...

    def mmio_write(self, thread: int, addr: int, value: int) -> None: ...


NAMES = ("LOADIND", "STOREIND", "LOADREG", "STOREREG", "ATINCGET", "ATINCGETPTR", "ATSWAP",
         "ATCAS")


def _half(gpr: GPRs, t: int, half: int) -> int:
    return (gpr.get(t, half >> 1) >> (16 * (half & 1))) & 0xFFFF


def _set_half(gpr: GPRs, t: int, half: int, value: int) -> None:
    reg, hi = half >> 1, half & 1
    old = gpr.get(t, reg)
    shift = 16 * hi
    gpr.set(t, reg, (old & ~(0xFFFF << shift) & M32) | ((value & 0xFFFF) << shift))


def _l1_check(mem: Memory, addr: int, size: int, report: Report) -> bool:
    if addr + size > mem.l1_size:
        report(f"L1 address {addr:#x} is beyond L1 ({mem.l1_size:#x} bytes)")
        return False
    return True


def _indexed(gpr: GPRs, t: int, f: Mapping[str, int], half_bits: int) -> tuple[int, int]:
    """(base, offset) of LOADIND/STOREIND, and post-increment the offset half-register."""
    half = f["OffsetIndex"] & ((1 << half_bits) - 1)
    offset = _half(gpr, t, half)
    base = gpr.get(t, f["AddrRegIndex"])
    _set_half(gpr, t, half, offset + _INCREMENTS[f["AutoIncSpec"] & 3])
    return base, offset


def _load(mem: Memory, gpr: GPRs, t: int, reg: int, addr: int, size_code: int,
          report: Report) -> None:
    if size_code == 0:
        addr &= ~15
        if _l1_check(mem, addr, 16, report):
            base = reg & 0x3C
            for k in range(4):
                gpr.set(t, base + k, mem.read(addr + 4 * k, 4))
        return
    width = {1: 4, 2: 2, 3: 1}[size_code]
    addr &= ~(width - 1)
    if not _l1_check(mem, addr, width, report):
        return
    value = mem.read(addr, width)
    keep = gpr.get(t, reg) & ~((1 << (8 * width)) - 1) & M32
    gpr.set(t, reg, keep | value)


def _store(mem: Memory, gpr: GPRs, t: int, reg: int, addr: int, size_code: int,
           report: Report) -> None:
    if size_code == 0:
        addr &= ~15
        if _l1_check(mem, addr, 16, report):
            base = reg & 0x3C
            for k in range(4):
                mem.write(addr + 4 * k, 4, gpr.get(t, base + k))
        return
    width = {1: 4, 2: 2, 3: 1}[size_code]
    addr &= ~(width - 1)
    if _l1_check(mem, addr, width, report):
        mem.write(addr, width, gpr.get(t, reg) & ((1 << (8 * width)) - 1))


def _mmio_addr(addr: int, report: Report) -> int | None:
    if addr < MMIO_LOWEST:
        report(f"MMIO address {addr:#x} is below {MMIO_LOWEST:#x}")
        return None
    return addr


def execute(name: str, mem: Memory | None, gpr: GPRs, t: int, f: Mapping[str, int],
            report: Report) -> None:
    """Run memory instruction ``name`` of thread ``t`` (its wait, if any, already passed)."""
    if mem is None:
        raise NotImplementedInstruction(f"not implemented: {name} (needs the tile's L1 and "
                                        f"MMIO: give the Coprocessor a memory)")
    if name == "LOADIND":
        base, off = _indexed(gpr, t, f, 8)
        reg = f["DataRegIndex"] & (0x3F if f["SizeSel"] else 0x3C)
        _load(mem, gpr, t, reg, base * 16 + off, f["SizeSel"], report)
    elif name == "STOREIND":
        if f["MemHierSel"]:
            base, off = _indexed(gpr, t, f, 7)
            size_code = (f["SizeSel"] << 1) | f["RegSizeSel"]
            _store(mem, gpr, t, f["DataRegIndex"], base * 16 + off, size_code, report)
        elif f["SizeSel"]:
            half = f["OffsetIndex"] & 0x7F
            off = _half(gpr, t, half)
            addr = MMIO_BASE + ((gpr.get(t, f["AddrRegIndex"]) + (off >> 4)) & 0x000FFFFC)
            if _mmio_addr(addr, report) is not None:
                mem.mmio_write(t, addr, gpr.get(t, f["DataRegIndex"]))
            _set_half(gpr, t, half, off + _INCREMENTS[f["AutoIncSpec"] & 3])
        else:
            raise NotImplementedInstruction("not implemented: STOREIND to SrcA/SrcB "
                                            "(MemHierSel=0, SizeSel=0)")
    elif name in ("LOADREG", "STOREREG"):
        addr = _mmio_addr(MMIO_BASE + ((f["RegAddr"] << 2) & 0x000FFFFC), report)
        if addr is None:
            return
        reg = f["TdmaDataRegIndex"]
        if name == "LOADREG":
            gpr.set(t, reg, mem.mmio_read(t, addr))
        else:
            mem.mmio_write(t, addr, gpr.get(t, reg))
    elif name == "ATINCGET":
        addr = gpr.get(t, f["AddrRegIndex"]) * 16 + f["Sel32b"] * 4
        if not _l1_check(mem, addr, 4, report):
            return
        reg = f["DataRegIndex"]
        mask = (2 << (f["WrapVal"] & 0x1F)) - 1 & M32
        old = mem.read(addr, 4)
        inc = (old + gpr.get(t, reg)) & M32
        mem.write(addr, 4, (inc & mask) | (old & ~mask & M32))
        gpr.set(t, reg, old)
    elif name == "ATINCGETPTR":
        addr = gpr.get(t, f["AddrRegIndex"]) * 16
        ofs = f["Sel32b"]
        if not _l1_check(mem, addr + ofs * 4, 4, report):
            return
        mask = (1 << f["WrapVal"]) - 1
        old = mem.read(addr + ofs * 4, 4)
        inc = (old + ((0 if f["NoIncr"] else 1) << f["IncrVal"])) & M32
        mem.write(addr + ofs * 4, 4, (inc & mask) | (old & ~mask & M32))
        gpr.set(t, f["DataRegIndex"], old)
    elif name == "ATSWAP":
        addr = gpr.get(t, f["AddrRegIndex"]) * 16
        if not _l1_check(mem, addr, 16, report):
            return
        mask, single = f["SwapMask"] & 0xFF, f["SwapMask"] >> 8 & 1
        reg = f["DataRegIndex"] & 0x3F
        words = [0, 0, 0, 0]
        if single:
            words[reg & 3] = gpr.get(t, reg)
        else:
            words = [gpr.get(t, (reg & 0x3C) + k) for k in range(4)]
        for i in range(8):
            if mask >> i & 1:
                mem.write(addr + 2 * i, 2, words[i >> 1] >> (16 * (i & 1)) & 0xFFFF)
    elif name == "ATCAS":
        addr = gpr.get(t, f["AddrRegIndex"]) * 16 + f["Sel32b"] * 4
        if _l1_check(mem, addr, 4, report):
            mem.write(addr, 4, f["SwapVal"] & 0xF)
    else:
        raise NotImplementedInstruction(f"not implemented: {name}")


def wait_reason(name: str, mem: Memory | None, gpr: GPRs, t: int,
                f: Mapping[str, int]) -> str | None:
    """Why ATINCGETPTR or ATCAS cannot complete yet (None: it can)."""
    if mem is None:
        return None
    if name == "ATCAS":
        addr = gpr.get(t, f["AddrRegIndex"]) * 16 + f["Sel32b"] * 4
        if addr + 4 > mem.l1_size:
            return None  # reported as undefined behaviour when it executes
        value = mem.read(addr, 4)
        if value != f["CmpVal"]:
            return f"ATCAS: L1[{addr:#x}] is {value:#x}, waiting for {f['CmpVal']:#x}"
        return None
    if name == "ATINCGETPTR":
        addr = gpr.get(t, f["AddrRegIndex"]) * 16
        if addr + 8 > mem.l1_size:
            return None
        rd, wr = mem.read(addr, 4), mem.read(addr + 4, 4)
        size = (wr - rd) & M32
        width = f["WrapVal"]
        if f["Sel32b"] & 1:
            capacity = (1 << (width - 1)) if width else 0x8000
            if size % capacity == 0 and size:
                return f"ATINCGETPTR: FIFO at L1[{addr:#x}] is full (rd {rd}, wr {wr})"
        elif size == 0:
            return f"ATINCGETPTR: FIFO at L1[{addr:#x}] is empty (rd {rd}, wr {wr})"
    return None


class ScalarMemoryUnit(Unit):
    """The Scalar Unit's memory instructions, against ``memory()`` (the coprocessor's
    current :class:`Memory`, or None)."""

    def __init__(self, gpr: GPRs, memory: Callable[[], Memory | None], report_ub: Report
                 ) -> None:
        self.gpr = gpr
        self.memory = memory
        self.report_ub = report_ub

    def handlers(self) -> Mapping[str, Execute]:
        def run(name: str) -> Execute:
            def execute_one(t: int, f: Fields) -> None:
                execute(name, self.memory(), self.gpr, t, f, self.report_ub)
            return execute_one
        out = {name: run(name) for name in NAMES}
        out["STOREREG"] = self.storereg
        return out

    def storereg(self, t: int, f: Fields) -> None:
        """STOREREG (:func:`execute`'s, without its tests for the other instructions)."""
        mem = self.memory()
        if mem is None:
            execute("STOREREG", mem, self.gpr, t, f, self.report_ub)  # (raises)
            return
        addr = MMIO_BASE + ((f["RegAddr"] << 2) & 0x000FFFFC)
        if addr < MMIO_LOWEST:
            _mmio_addr(addr, self.report_ub)
            return
        mem.mmio_write(t, addr, self.gpr.get(t, f["TdmaDataRegIndex"]))

    def waits(self) -> Mapping[str, Wait]:
        def wait(name: str) -> Wait:
            def wait_one(t: int, f: Fields) -> str | None:
                return wait_reason(name, self.memory(), self.gpr, t, f)
            return wait_one
        return {name: wait(name) for name in ("ATCAS", "ATINCGETPTR")}


__all__ = ["MMIO_BASE", "NAMES", "Memory", "ScalarMemoryUnit", "execute", "wait_reason"]
