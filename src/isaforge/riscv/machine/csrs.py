"""The CSRs a Blackhole "baby" RISC-V core recognises, with their reset values.

From tt-isa-documentation, BlackholeA0/TensixTile/BabyRISCV/CSRs.md. ``cycle``/``mcycle``
and ``instret``/``minstret`` count retired instructions (there is no cycle model); writing
either half moves that counter. Read-only CSRs ignore writes, as the hardware's do. Any other
CSR number is an error when an instruction touches it. A machine may replace the behaviour of
any CSR (the Tensix status CSRs 0xbc0/0xbc1, say) with :meth:`Hart.csr_hook`.
"""

from __future__ import annotations

#: CSRs that read and write as plain 32-bit storage: number -> reset value
STORAGE: dict[int, int] = {
    0x003: 0,  # fcsr
    0x009: 0,  # vxsat
    0x00A: 0,  # vxrm
    0x320: 0,  # mcountinhibit
    0x323: 0,  # mhpmevent3
    0x324: 0,  # mhpmevent4
    0x7C0: 16 << 13,  # cfg0: configuration / chicken bits (StMergeTimer resets to 16)
    0x7C1: 0,  # pmacfg0
    0x7C2: 0,  # pmacfg1
    0x7C3: 0,  # cfg1 (scratch)
    0x7C4: 0,  # hwa_mask (scratch)
    0x7C5: 0,  # hwa_cfg (scratch)
    0x7C6: 0,  # vgsrc (scratch)
    0xB03: 0,  # mhpmcounter3
    0xB04: 0,  # mhpmcounter4
    0xB83: 0,  # mhpmcounter3h
    0xB84: 0,  # mhpmcounter4h
    0xBC0: 0,  # tt_cfg_qstatus (Tensix frontend status: the tile hooks it)
    0xBC1: 0,  # tt_cfg_bstatus (Tensix busy status: the tile hooks it)
    **{0xBC2 + i: 0 for i in range(8)},  # tt_cfg_sstatus0..7
    0xBCA: 0,  # intp_restore_pc
    0xC20: 0,  # vl
    0xC21: 0,  # vtype
    0xC22: 16,  # vlenb
}

#: read-only CSRs: number -> value
CONSTANT: dict[int, int] = {
    0x008: 0,  # vstart
    0x300: 0x80006600,  # mstatus
    0x301: 0x40201123,  # misa (RV32IMABFV)
    0xF14: 0,  # mhartid (always zero on every core)
}

#: counters: number -> (counter, half); "cycle" and "instret" both count retired instructions
COUNTERS: dict[int, tuple[str, int]] = {
    0xB00: ("cycle", 0), 0xB80: ("cycle", 1), 0xC00: ("cycle", 0), 0xC80: ("cycle", 1),
    0xB02: ("instret", 0), 0xB82: ("instret", 1), 0xC02: ("instret", 0),
    0xC82: ("instret", 1),
}

__all__ = ["CONSTANT", "COUNTERS", "STORAGE"]
