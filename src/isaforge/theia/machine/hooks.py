"""What the GPU's hooks report, and where: the kinds, their ``info`` records, the address map.

:meth:`Gpu.hook_add(kind, callback, begin=None, end=None) <isaforge.theia.machine.gpu.Gpu.
hook_add>` takes the kinds of :data:`isaforge.core.hooks.KINDS` that a THEIA GPU has:

``insn``: ``callback(gpu, address, size, info)`` before each instruction a VP or the CP
    executes. ``address`` is the instruction's byte address in its core's code memory
    (``8 * PC`` for a VP, ``4 * IP`` for the CP, as :func:`isaforge.theia.disassemble`
    numbers them), ``size`` 8 or 4, ``info`` an :class:`InsnInfo` naming the core.
``mem_write``: ``callback(gpu, address, size, value)`` for each word written to a VP's OMEM
    (an OMWRITE lane, 4 bytes) or, by the memory controller, to a VP's code memory (a
    COPYBLOCK of code, 8 bytes). The address is in the GPU's map (:func:`omem_address`,
    :func:`imem_address`; :func:`locate` turns it back into (space, VP, index)), so that
    ``begin``/``end`` can pick one VP's OMEM: ``gpu.hook_add("mem_write", cb,
    *gpu.omem_range(2))``.
``reg_write``: ``callback(gpu, reg, value, info)`` for each register a VP instruction, a
    COPYBLOCK of data or a CP instruction writes: a VP row's lanes ``(x, y, z)`` after the
    write, or a CP register's value; ``info`` is a :class:`RegInfo`. ``begin``/``end`` bound
    the register number.

Without a hook the machine runs its usual compiled blocks; the first hook switches the VPs to
blocks compiled with the calls in them (the same code otherwise, so a run with hooks computes
exactly what a run without them does).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ...core.hooks import Hooks
from .options import MAX_VPS
from .vp import VectorProcessor

#: the hook kinds a THEIA GPU supports
HOOK_KINDS = ("insn", "mem_write", "reg_write")

WINDOW = 1 << 32  # bytes of one VP's window in each space of the map
OMEM_BASE = 0  # VP i's OMEM word k: OMEM_BASE + i * WINDOW + 4 * k
IMEM_BASE = MAX_VPS * WINDOW  # VP i's code word a: IMEM_BASE + i * WINDOW + 8 * a


def omem_address(vp: int, word: int) -> int:
    """The map address of word ``word`` of VP ``vp``'s OMEM."""
    return OMEM_BASE + vp * WINDOW + 4 * word


def imem_address(vp: int, index: int) -> int:
    """The map address of instruction ``index`` of VP ``vp``'s code memory."""
    return IMEM_BASE + vp * WINDOW + 8 * index


def locate(address: int) -> tuple[str, int, int]:
    """``("omem", vp, word)`` or ``("imem", vp, index)`` for a map address."""
    space, rest = ("imem", address - IMEM_BASE) if address >= IMEM_BASE else ("omem", address)
    vp, offset = divmod(rest, WINDOW)
    return space, vp, offset // (8 if space == "imem" else 4)


class InsnInfo(NamedTuple):
    """``info`` of an ``insn`` hook."""

    core: str  # "VP2", "CP"
    vp: int | None  # the VP's index; None for the CP
    thread: int  # the VP thread executing it (0 or 1); 0 for the CP
    word: int  # the instruction word


class RegInfo(NamedTuple):
    """``info`` of a ``reg_write`` hook."""

    core: str  # "VP2", "CP"
    vp: int | None  # the VP's index; None for the CP
    we: int  # the lanes written (x=4, y=2, z=1); 7 for a CP register
    source: str  # "insn": an instruction's result; "mcu": a COPYBLOCK of data


class VpHooks:
    """The calls a VP's hooked blocks make (``h.insn(...)``, ``h.reg(...)``,
    ``h.omwrite(...)``), fired on the GPU's registry."""

    __slots__ = ("core", "gpu", "hooks", "kinds", "vp")

    def __init__(self, gpu: Any, hooks: Hooks, vp: VectorProcessor) -> None:
        self.gpu = gpu
        self.hooks = hooks
        self.vp = vp
        self.core = f"VP{vp.index}"
        self.kinds = frozenset(k for k in HOOK_KINDS if hooks.any(k))

    def insn(self, pc: int, word: int) -> None:
        self.hooks.fire("insn", self.gpu, 8 * pc, 8,
                        InsnInfo(self.core, self.vp.index, self.vp.thread, word))

    def reg(self, row: int, we: int, source: str = "insn") -> None:
        r = self.vp.r
        b = row * 3
        self.hooks.fire("reg_write", self.gpu, row, (r[b], r[b + 1], r[b + 2]),
                        RegInfo(self.core, self.vp.index, we, source))

    def omwrite(self, a0: int, a1: int, a2: int, d0: int, d1: int, d2: int) -> None:
        vp = self.vp
        vp.omwrite(a0, a1, a2, d0, d1, d2)
        size = len(vp.omem)
        base = OMEM_BASE + vp.index * WINDOW
        for a, d in ((a0, d0), (a1, d1), (a2, d2)):
            if a < size:
                self.hooks.fire("mem_write", self.gpu, base + 4 * a, 4, d)


__all__ = ["HOOK_KINDS", "IMEM_BASE", "OMEM_BASE", "WINDOW", "InsnInfo", "RegInfo", "VpHooks",
           "imem_address", "locate", "omem_address"]
