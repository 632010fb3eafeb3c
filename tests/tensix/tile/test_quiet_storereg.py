"""The tile tells the coprocessor which STOREREGs only keep their value
(``_CoprocessorMemory.mmio_write_quiet``), so that a deferred SFP loop need not run before them."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.examples import Add1Device
from isaforge.tensix.tile.config_regs import ConfigWindow
from isaforge.tensix.tile.streams import StreamRegs
from isaforge.tensix.tile.tile import _CoprocessorMemory


def test_stream_registers_are_quiet_configuration_is_not(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    asked: list[tuple[int, int, bool]] = []
    original = _CoprocessorMemory.mmio_write_quiet

    def spy(self: _CoprocessorMemory, thread: int, addr: int) -> bool:
        got = original(self, thread, addr)
        asked.append((thread, addr, got))
        return got

    monkeypatch.setattr(_CoprocessorMemory, "mmio_write_quiet", spy)
    dev = Add1Device()
    x = np.random.default_rng(3).integers(0, 1 << 16, (4, 32, 32), dtype=np.uint16)
    dev.add1(x)
    memory = dev.tile.cp.memory
    assert asked and any(got for _, _, got in asked)  # add1's packer STOREREGs
    for thread, addr, got in asked:
        window = dev.tile.window_at(addr)
        assert got == isinstance(window, StreamRegs), (thread, hex(addr), window)
    config = next(w for w in dev.tile.windows if isinstance(w, ConfigWindow))
    assert not memory.mmio_write_quiet(2, config.base)  # (written through: never quiet)
    assert not memory.mmio_write_quiet(2, 0xFFB0_0000 - 4)  # (no window there)
