"""Real Blackhole firmware on a bare hart: BRISC's tt-metal firmware, loaded from its ELF,
over L1 + local memory and one catch-all MMIO window that reads zero. Not the tile (that is
isaforge.tensix.tile): a differential test of the two execution paths on real code."""

from __future__ import annotations

import numpy as np
from elftools.elf import elffile

from isaforge.riscv import AddressSpace, Hart, StopReason


def brisc(fast: bool) -> tuple[Hart, list[tuple], dict[str, int], list[np.ndarray]]:
    from tests.refdata import refdata

    path = refdata("tensix", "firmware", "bh-10503743232459396191", "brisc.elf")
    l1, ldm = np.zeros(1536 * 1024, np.uint8), np.zeros(8192, np.uint8)
    space = AddressSpace("brisc")
    space.map_ram(0, l1)
    space.map_ram(0xFFB00000, ldm)
    log: list[tuple] = []

    def read(a: int, s: int) -> int:
        log.append(("r", a, s))
        return 0

    def write(a: int, s: int, v: int) -> None:
        log.append(("w", a, s, v))

    space.map_mmio(0xFFB02000, (1 << 32) - 0xFFB02000, read, write)
    with path.open("rb") as fh:
        elf = elffile.ELFFile(fh)
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_LOAD" and seg["p_filesz"]:
                space.write_bytes(seg["p_paddr"], seg.data())
        symbols = {s.name: s["st_value"] for s in elf.get_section_by_name(".symtab")
                   .iter_symbols() if s["st_info"]["type"] == "STT_FUNC"}
        hart = Hart("brisc", space, elf["e_entry"])
    hart.fast = fast
    return hart, log, symbols, [l1, ldm]


def test_brisc_firmware_same_on_both_paths() -> None:
    runs = []
    for fast in (False, True):
        hart, log, symbols, mems = brisc(fast)
        assert hart.run(200_000) is StopReason.LIMIT
        runs.append((hart.pc, hart.instret, hart.x.tolist(), log, [m.copy() for m in mems],
                     hart.csr_read(0x7C0)))
    (pc, n, x, log, mems, cfg0), (pc2, n2, x2, log2, mems2, cfg02) = runs
    assert (pc, n, x, cfg0) == (pc2, n2, x2, cfg02)
    assert log == log2 and len(log) > 20
    assert all(np.array_equal(a, b) for a, b in zip(mems, mems2, strict=True))
    # with every register reading zero, BRISC waits for the other cores in main
    assert symbols["main"] < pc < symbols["main"] + 0x1000
    # it set cfg0 bits as brisc.cc does (csrs 0x7c0, ...) and pushed words to the Tensix
    assert cfg0 == (16 << 13) | (1 << 18) | 8  # csrs 2; csrs 1<<18; csrc 2; csrs 8
    assert any(e[0] == "w" and 0xFFE40000 <= e[1] < 0xFFE50000 for e in log)
