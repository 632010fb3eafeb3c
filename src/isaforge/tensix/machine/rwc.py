"""Read-write counters: SETRWC, INCRWC and ApplyAddrMod / ApplyPartialAddrMod (spec 000 §2-3).

All functions act on one thread's row of :class:`~.state.RWCs`; counters wrap at their width
(SrcA/SrcB 6 bits, Dst 10 bits, FidelityPhase 2 bits, ExtraAddrModBit 1 bit).

One deliberate reading of the sources: SETRWC writes Dst when ``BitMask`` has SET_D *or*
``rwc_cr`` has C_TO_CR (the tt-isa-documentation model, ``if (Dst || DstCtoCr)``). Spec 000
writes ``BitMask & (SET_D | C_TO_CR_MODE)``, which mixes a ``rwc_cr`` flag into ``BitMask``
and would make SET_F (0x8) also set Dst; we follow the ISA documentation. Likewise the
Bias section's ``ExtraAddrModBit += 1`` toggles the 1-bit counter (ISA documentation) where
spec 000 §6's Python saturates it.
"""

from __future__ import annotations

from .state import (
    DST,
    DST_CR,
    EXTRA,
    FIDELITY,
    RWC_MASKS,
    SRCA,
    SRCA_CR,
    SRCB,
    SRCB_CR,
    AddrMod,
    RWCs,
    ThreadConfig,
)

# SETRWC BitMask (p_setrwc)
SET_A, SET_B, SET_D, SET_F = 1, 2, 4, 8
# rwc_cr flags
CR_A, CR_B, CR_D, C_TO_CR = 1, 2, 4, 8


def setrwc(rwc: RWCs, t: int, rwc_cr: int, rwc_d: int, rwc_b: int, rwc_a: int,
           bitmask: int) -> None:
    """SETRWC's counter part (the bank flips of ``clear_ab_vld`` are the Matrix Unit's)."""
    r = rwc.v[t].tolist()
    if bitmask & SET_A:
        r[SRCA] = r[SRCA_CR] = (rwc_a + (r[SRCA_CR] if rwc_cr & CR_A else 0)) & RWC_MASKS[SRCA]
    if bitmask & SET_B:
        r[SRCB] = r[SRCB_CR] = (rwc_b + (r[SRCB_CR] if rwc_cr & CR_B else 0)) & RWC_MASKS[SRCB]
    if bitmask & SET_D or rwc_cr & C_TO_CR:
        if rwc_cr & C_TO_CR:
            v = rwc_d + r[DST]
        elif rwc_cr & CR_D:
            v = rwc_d + r[DST_CR]
        else:
            v = rwc_d
        r[DST] = r[DST_CR] = v & RWC_MASKS[DST]
    if bitmask & SET_F:
        r[FIDELITY] = 0
    rwc.v[t] = r


def incrwc(rwc: RWCs, t: int, rwc_cr: int, rwc_d: int, rwc_b: int, rwc_a: int) -> None:
    """INCRWC: add to each counter, or (CR flag) to its checkpoint and copy it back."""
    for flag, col, cr_col, inc in ((CR_A, SRCA, SRCA_CR, rwc_a), (CR_B, SRCB, SRCB_CR, rwc_b),
                                   (CR_D, DST, DST_CR, rwc_d)):
        if rwc_cr & flag:
            rwc.set(t, cr_col, rwc.get(t, cr_col) + inc)
            rwc.set(t, col, rwc.get(t, cr_col))
        else:
            rwc.set(t, col, rwc.get(t, col) + inc)


def addr_mod_index(rwc: RWCs, tc: ThreadConfig, t: int, addr_mode: int) -> int:
    """The section an instruction's ``addr_mode`` selects. Blackhole's 3-bit field reaches all
    eight sections directly; a 2-bit value is moved to the upper bank by ExtraAddrModBit or
    ADDR_MOD_SET_Base (spec 000 §3.2)."""
    index = addr_mode & 7
    if index < 4 and rwc.get(t, EXTRA):
        index += 4
    return index


def _src_step(rwc: RWCs, t: int, col: int, cr_col: int, clr: bool, cr: bool, incr: int
              ) -> None:
    """The SrcA or SrcB part of an AddrMod section: clear both counters, or add to ``_Cr``
    and copy it, or add to the counter."""
    if clr:
        rwc.set(t, col, 0)
        rwc.set(t, cr_col, 0)
    elif cr:
        rwc.set(t, cr_col, rwc.get(t, cr_col) + incr)
        rwc.set(t, col, rwc.get(t, cr_col))
    else:
        rwc.set(t, col, rwc.get(t, col) + incr)


def apply_addr_mod(rwc: RWCs, t: int, am: AddrMod, update_fidelity: bool = True) -> None:
    """Apply one AddrMod section to thread ``t``'s counters (spec 000 §3.4)."""
    _src_step(rwc, t, SRCA, SRCA_CR, am.srca_clr, am.srca_cr, am.srca_incr)
    _src_step(rwc, t, SRCB, SRCB_CR, am.srcb_clr, am.srcb_cr, am.srcb_incr)

    # DestIncr is 10-bit two's complement; adding it modulo 2**10 is the same thing
    if am.dst_clr:
        rwc.set(t, DST, 0)
        rwc.set(t, DST_CR, 0)
    elif am.dst_c_to_cr:
        rwc.set(t, DST, rwc.get(t, DST) + am.dst_incr)
        rwc.set(t, DST_CR, rwc.get(t, DST))
    elif am.dst_cr:
        rwc.set(t, DST_CR, rwc.get(t, DST_CR) + am.dst_incr)
        rwc.set(t, DST, rwc.get(t, DST_CR))
    else:
        rwc.set(t, DST, rwc.get(t, DST) + am.dst_incr)

    if update_fidelity:
        if am.fidelity_clr:
            rwc.set(t, FIDELITY, 0)
        else:
            rwc.set(t, FIDELITY, rwc.get(t, FIDELITY) + am.fidelity_incr)

    if am.bias_clr:
        rwc.set(t, EXTRA, 0)
    elif am.bias_incr & 3:
        # a 1-bit counter: += 1 toggles it (the ISA documentation's uint1_t arithmetic; spec
        # 000 §6's Python saturates at 1 instead, which would make the bank switch one-way)
        rwc.set(t, EXTRA, rwc.get(t, EXTRA) + 1)


__all__ = [
    "CR_A",
    "CR_B",
    "CR_D",
    "C_TO_CR",
    "SET_A",
    "SET_B",
    "SET_D",
    "SET_F",
    "addr_mod_index",
    "apply_addr_mod",
    "incrwc",
    "setrwc",
]
