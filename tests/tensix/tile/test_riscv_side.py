"""The RISC-V side's fast paths of the tile (waking, the cores' exits from the compiled path),
each compared on and off through add1: outputs, every instruction count, the scheduler's
cycles and rounds, the registers (tests/tensix/switched.py), and shown to be taken."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.tile.scheduler import Scheduler

from ..switched import add1_on_off, setting


def test_writes_outside_the_parked_cores_span_wake_nobody(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduler.watch_span: a write looks only at the parked cores, and at none when it
    misses the span of what they watch; add1 the same with it on and off."""
    seen = {"missed": 0, "looked": 0, True: 0, False: 0}
    wrote = Scheduler.wrote

    def spy(self: Scheduler, addr: int, size: int, by: object) -> None:
        seen[self.watch_span] += 1
        if self.watch_span:
            w = self.watchers
            seen["missed" if addr >= w.hi or addr + size <= w.lo else "looked"] += 1
        wrote(self, addr, size, by)  # type: ignore[arg-type]

    monkeypatch.setattr(Scheduler, "wrote", spy)
    add1_on_off(monkeypatch, setting(monkeypatch, Scheduler, "watch_span"), 38)
    assert seen["missed"] > 20 and seen["looked"] > 20
    assert seen["missed"] > 2 * seen["looked"]  # (most writes end at the span test)
    assert seen[True] == seen[False]  # (the same writes)


def test_logged_loads_kept_as_positions_equal_full_poll_records(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Core.load_positions: a load the compiled path logged is kept as its address in the
    read log only (the rest read from its row of the load records when the core next reads
    at its pc through the window); add1 the same with it on and off, and cores park on such
    rows (no poll record at the pc, or an older one)."""
    from isaforge.riscv.machine.fast import RECORD_ROOM
    from isaforge.tensix.tile.core import _READ_LOG, Core

    parked_on_rows = [0]
    saw_read = Core.saw_read

    def spy(self: Core, w: object, addr: int, size: int, value: int) -> None:
        rec = self._polls.get(self.hart.pc)
        recs = self.hart.load_records
        pcs = recs[0, 1:int(recs[0, 0]) + 1].tolist()
        k = pcs.index(self.hart.pc) + 1 if self.hart.pc in pcs else 0
        at = _READ_LOG - int(recs[k, RECORD_ROOM])
        saw_read(self, w, addr, size, value)  # type: ignore[arg-type]
        if k and (rec is None or at > rec[2]) and self.state == "parked":
            parked_on_rows[0] += 1

    monkeypatch.setattr(Core, "saw_read", spy)
    add1_on_off(monkeypatch, setting(monkeypatch, Core, "load_positions"), 39)
    assert parked_on_rows[0] > 5


def test_a_watch_overlaps_a_latch_exactly_when_a_range_does() -> None:
    """Core._latched (a span test before the ranges) against the ranges themselves, also
    after the tile drops its latches."""
    import random

    from isaforge.tensix.tile.tile import Tile

    tile = Tile()
    core = tile.cores["brisc"]
    rng = random.Random(7)
    for drop in (False, True):
        if drop:
            tile.drop_latches()
        ranges = tile.latch_ranges
        near = [b for b, _, _ in ranges] or [0x1000]
        seen = set()
        for _ in range(2000):
            addr = rng.choice(near) + rng.randrange(-64, 0x200) * rng.choice([1, 1, 512])
            size = rng.choice([1, 2, 4])
            expect = any(addr < b + n and b < addr + size for b, n, _ in ranges)
            assert core._latched(addr, size) == expect
            seen.add(expect)
        assert seen == ({False} if drop else {False, True})
    assert tile.latch_ranges == []


def test_the_watchers_follow_every_park_and_wake_of_add1(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """After every scheduler round of add1 (and after each core's run), the tile's
    Watchers, kept incrementally by Core.park/wake/stall/reset, hold exactly the parked cores
    with something to watch, and the span of what they watch."""
    from isaforge.tensix.examples import Add1Device
    from isaforge.tensix.tile.core import PARKED, Core

    checked = [0]

    def check(tile: object) -> None:
        w = tile.watchers  # type: ignore[attr-defined]
        expect = [c for c in tile.cores.values()  # type: ignore[attr-defined]
                  if c.state == PARKED and c.wait is not None and c.wait.watch]
        assert sorted(c.name for c in w.parked) == sorted(c.name for c in expect)
        if expect:
            assert (w.lo, w.hi) == (min(c.wait.lo for c in expect),
                                    max(c.wait.hi for c in expect))
            checked[0] += 1

    run = Core.run

    def spy(self: Core, steps: int) -> int:
        done = run(self, steps)
        check(self.tile)
        return done

    monkeypatch.setattr(Core, "run", spy)
    dev = Add1Device()
    x = np.random.default_rng(5).integers(0, 1 << 16, (6, 32, 32), dtype=np.uint16)
    dev.add1(x)
    check(dev.tile)
    assert checked[0] > 10
