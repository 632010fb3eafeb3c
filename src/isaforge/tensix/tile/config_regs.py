"""Tensix backend configuration seen from RISC-V: ``TENSIX_CFG_BASE``.

The coprocessor's thread-agnostic configuration has two banks (``CFG_STATE_ID``) of
``CFG_STATE_SIZE * 4`` 32-bit words; RISC-V sees bank 0 at ``TENSIX_CFG_BASE`` and bank 1 right
after it (``cfg_regs_base(1)`` in tt-metal). BRISC and the TRISCs can access it; NCRISC cannot.
The words are the coprocessor's (``Coprocessor.config.words``), so a configuration written by a
RISC-V core is what later Tensix instructions use. Only aligned 32-bit accesses are modelled.
"""

from __future__ import annotations

from .memmap import CoreInfo
from .mmio import Unmodelled, Window, require, word_offset

CORES = ("brisc", "trisc0", "trisc1", "trisc2")


class ConfigWindow(Window):
    name = "Tensix configuration"
    observes_coprocessor = True

    def __init__(self, tile: object, base: int, size: int, bank_words: int) -> None:
        super().__init__(tile, base, size)
        self.bank_words = bank_words

    def _locate(self, core: CoreInfo, addr: int, size: int) -> tuple[int, int]:
        require(core, CORES, self)
        index = word_offset(self, addr, size)
        bank, word = divmod(index, self.bank_words)
        words = self.tile.cp.config.words
        if bank >= words.shape[0] or word >= words.shape[1]:
            raise Unmodelled(f"{self.name}: word {index} is beyond the two banks of "
                             f"{self.bank_words} words")
        return bank, word

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        bank, word = self._locate(core, addr, size)
        return int(self.tile.cp.config.words[bank, word])

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        bank, word = self._locate(core, addr, size)
        self.tile.cp.config.words[bank, word] = value & 0xFFFFFFFF

    def store_latch(self, core: CoreInfo, addr: int, size: int) -> tuple[str, int] | None:
        """A store the core may make: only the coprocessor (which does not run during a
        core's run) and this window's reads see the word, so it may wait (see
        :meth:`Window.store_latch`)."""
        try:
            self._locate(core, addr, size)
        except Unmodelled:
            return None
        return ("defer", 0)


__all__ = ["ConfigWindow"]
