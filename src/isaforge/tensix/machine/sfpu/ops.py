"""Vector Unit instructions as operand records (:class:`Op`), and the sub-units.

Every SFP instruction is read from its word into one :class:`Op`, whatever its encoding:
``VD``, ``VC``, ``VB``, ``VA`` (the 4-bit register fields), ``mod`` (``Mod1``, or ``Mod0``
for the load-style encodings), the immediates. ``vb`` and ``vc`` are None where the
instruction has no such operand of its own: the functional models then use ``VD`` (``VB =
VD`` of the simple instructions, ``VC = VD`` of SFPADDI/SFPMULI), and SFPLOADMACRO fills
them in (SFPLOADMACRO.md). The same record serves the instruction a thread issues and the
one SFPLOADMACRO builds from an InstructionTemplate word.

The sub-units (VectorUnit.md, SFPLOADMACRO.md): load (SFPLOAD, SFPLOADI, SFPLOADMACRO),
simple, MAD, round and store; SFPLOADMACRO schedules at most one instruction on each of the
last four.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from ...isa import ops as isa_ops

#: instructions whose VD is in bits 20..23 and Mod0 in bits 16..19
LOAD_STYLE = frozenset({"SFPLOAD", "SFPLOADI", "SFPSTORE", "SFPLUT", "SFPLOADMACRO"})
#: instructions with a VB operand of their own (bits 12..15)
HAS_VB = frozenset({"SFPMAD", "SFPADD", "SFPMUL", "SFPMUL24", "SFP_STOCH_RND", "SFPARECIP",
                    "SFPSHFT2"})
#: instructions that use VD as their VC
VC_IS_VD = frozenset({"SFPADDI", "SFPMULI"})
#: instructions that never take SFPLOADMACRO's back-door template load (VD >= 12)
NO_BACKDOOR = frozenset({"SFPCONFIG", "SFPLOADMACRO", "SFPNOP"})

SIMPLE, MAD, ROUND, STORE, LOAD = 0, 1, 2, 3, 4
#: the instructions each SFPLOADMACRO sub-unit executes (SFPLOADMACRO.md's table)
SUBUNIT_OPS = (
    frozenset({"SFPABS", "SFPAND", "SFPARECIP", "SFPCAST", "SFPCOMPC", "SFPCONFIG", "SFPDIVP2",
               "SFPENCC", "SFPEXEXP", "SFPEXMAN", "SFPGT", "SFPIADD", "SFPLE", "SFPLZ",
               "SFPMOV", "SFPNOP", "SFPNOT", "SFPOR", "SFPPOPC", "SFPPUSHC", "SFPSETCC",
               "SFPSETEXP", "SFPSETMAN", "SFPSETSGN", "SFPSHFT", "SFPSWAP", "SFPTRANSP",
               "SFPXOR"}),
    frozenset({"SFPADD", "SFPADDI", "SFPLUT", "SFPLUTFP32", "SFPMAD", "SFPMUL", "SFPMULI",
               "SFPMUL24", "SFPNOP"}),
    frozenset({"SFPNOP", "SFPSHFT2", "SFP_STOCH_RND"}),
    frozenset({"SFPSTORE"}),
    frozenset({"SFPLOAD", "SFPLOADI", "SFPLOADMACRO", "SFPNOP"}),
)
SUBUNIT_NAMES = ("simple", "MAD", "round", "store", "load")


@cache
def subunit_of(name: str) -> int:
    """The sub-unit an issued instruction goes to (SFPNOP: the load sub-unit)."""
    for unit in (LOAD, SIMPLE, MAD, ROUND, STORE):
        if name in SUBUNIT_OPS[unit]:
            return unit
    raise ValueError(f"{name} is not a Vector Unit instruction")


@cache
def sfp_names() -> dict[int, str]:
    """Opcode -> name of every SFP instruction."""
    return {op.opcode: name for name, op in isa_ops().items() if name.startswith("SFP")}


@cache
def _layout(name: str) -> tuple[tuple[str, int], ...]:
    return tuple((f.name, f.low) for f in isa_ops()[name].fields)


def encode(name: str, fields: dict[str, int] | object) -> int:
    """The word of instruction ``name`` with decoded ``fields``."""
    word = isa_ops()[name].opcode << 24
    for fname, low in _layout(name):
        word |= fields[fname] << low  # type: ignore[index]
    return word


@dataclass(slots=True)
class Op:
    """One Vector Unit instruction's operands."""

    name: str
    word: int
    vd: int
    vc: int | None
    vb: int | None
    va: int
    mod: int
    imm12: int  # bits 12..23
    imm16: int  # bits 0..15 (load-style), else bits 8..23
    #: scheduled by SFPLOADMACRO (no back-door load; SFPSTORE: ``store_addr``, no AddrMod)
    macro: bool = False
    store_addr: int = 0

    @property
    def b(self) -> int:
        """The VB the functional model reads (VD when the instruction has none)."""
        return self.vd if self.vb is None else self.vb

    @property
    def c(self) -> int:
        """The VC the functional model reads (VD for SFPADDI/SFPMULI)."""
        return self.vd if self.vc is None else self.vc

    @property
    def addr(self) -> int:
        """SFPLOAD/SFPSTORE/SFPLOADMACRO's Imm10."""
        return self.word & 0x3FF

    @property
    def addr_mode(self) -> int:
        return self.word >> 13 & 7

    def copy(self) -> Op:
        return Op(self.name, self.word, self.vd, self.vc, self.vb, self.va, self.mod,
                  self.imm12, self.imm16, self.macro, self.store_addr)


def parse(name: str, word: int) -> Op:
    """The operands of SFP instruction ``name`` encoded as ``word``."""
    if name in LOAD_STYLE:
        vd = word >> 20 & 15
        if name == "SFPLOADMACRO":  # VD = VDHi:VDLo (bit 0, bits 20..21), macro in 22..23
            vd = (word & 1) << 2 | (word >> 20 & 3)
        return Op(name, word, vd, None, None, 0, word >> 16 & 15, 0, word & 0xFFFF)
    vb: int | None = word >> 12 & 15 if name in HAS_VB else None
    if name in ("SFPAND", "SFPOR") and word & 1:  # SFPAND/SFPOR_MOD1_USE_VB
        vb = word >> 12 & 15
    vc: int | None = None if name in VC_IS_VD else word >> 8 & 15
    return Op(name, word, word >> 4 & 15, vc, vb, word >> 16 & 15, word & 15,
              word >> 12 & 0xFFF, word >> 8 & 0xFFFF)


__all__ = ["HAS_VB", "LOAD", "LOAD_STYLE", "MAD", "NO_BACKDOOR", "Op", "ROUND", "SIMPLE",
           "STORE", "SUBUNIT_NAMES", "SUBUNIT_OPS", "VC_IS_VD", "encode", "parse",
           "sfp_names", "subunit_of"]
