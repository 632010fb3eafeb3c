"""MOP expander configuration: ``TENSIX_MOP_CFG_BASE``, nine words per Tensix thread.

TRISC *i* writes the nine ``MopCfg`` words of thread *i*'s MOP expander (the templates that a
later ``MOP`` instruction expands); BRISC and NCRISC have nothing mapped there. The words are the
coprocessor's own (``threads[i].mop.cfg``), so a ``MOP`` pushed afterwards expands with them.
Reads are not modelled (the hardware documents the window as configuration to write).
"""

from __future__ import annotations

from .memmap import CoreInfo
from .mmio import Unmodelled, Window, word_offset


class MopConfig(Window):
    name = "MOP configuration"
    observes_coprocessor = True

    def __init__(self, tile: object, base: int, words: int) -> None:
        super().__init__(tile, base, words * 4)
        self.words = words

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        if core.thread is None:
            raise Unmodelled(f"{self.name} is not mapped for {core.name}")
        index = word_offset(self, addr, size)
        self.tile.cp.threads[core.thread].mop.cfg[index] = value & 0xFFFFFFFF


__all__ = ["MopConfig"]
