"""The RISC-V side's fast paths of the tile (waking, the cores' exits from the compiled path),
each compared on and off through add1: outputs, every instruction count, the scheduler's
cycles and rounds, the registers (tests/tensix/switched.py), and shown to be taken."""

from __future__ import annotations

import pytest

from isaforge.tensix.tile.scheduler import Scheduler

from ..switched import add1_on_off, setting


def test_writes_outside_the_parked_cores_span_wake_nobody(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduler.watch_span: a write looks only at the parked cores, and at none when it
    misses the span of what they watch; add1 the same with it on and off."""
    seen = {"missed": 0, "looked": 0}
    wrote = Scheduler.wrote

    def spy(self: Scheduler, addr: int, size: int, by: object) -> None:
        if self.watch_span:
            w = self.watchers
            seen["missed" if addr >= w.hi or addr + size <= w.lo else "looked"] += 1
        wrote(self, addr, size, by)  # type: ignore[arg-type]

    monkeypatch.setattr(Scheduler, "wrote", spy)
    add1_on_off(monkeypatch, setting(monkeypatch, Scheduler, "watch_span"), 38)
    assert seen["missed"] > 20 and seen["looked"] > 20
