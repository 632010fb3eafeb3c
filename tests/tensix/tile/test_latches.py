"""The cores' latches (:meth:`isaforge.riscv.AddressSpace.map_latches`): the compiled RISC-V
path stores the NOC command registers and reads the stream and NOC registers whose reads only
return a word itself, and the tile hears of it (latch stores count as window writes, logged
loads are replayed as reads for poll detection). That must be invisible: add1's output, the
per-core and per-thread instruction counts, the coprocessor's steps and rounds and the
scheduler's cycles and rounds must be those of every access going through its window."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.riscv.machine.memory import LATCH_DEFER, LATCH_NOTE
from isaforge.tensix.examples import Add1Device


def _state(dev: Add1Device) -> tuple[object, ...]:
    cp, sched = dev.tile.cp, dev.tile.scheduler
    return (cp.steps, cp.rounds, tuple(th.executed for th in cp.threads),
            tuple(sorted((k, c.instructions, c.hart.instret, c.state)
                         for k, c in dev.tile.cores.items())),
            sched.cycles, sched.rounds, dev.stats.riscv_instructions if dev.stats else None)


def _device(latches: bool) -> Add1Device:
    dev = Add1Device()
    dev.tile.latches = latches
    dev.tile.remap_latches()
    for core in dev.tile.cores.values():
        core.hart.fast = True  # the compiled path from the start (not after the warm-up)
    return dev


@pytest.mark.parametrize("counts", [(1, 5), (3, 17, 2)])
def test_latches_equal_every_access_through_its_window(counts: tuple[int, ...]) -> None:
    on, off = _device(True), _device(False)
    off_before = sum(c.hart.latched for c in off.tile.cores.values())  # (its boot's)
    heard = []
    for core in on.tile.cores.values():
        seen = core.hart.on_loads

        def spy(hart: object, rows: list, seen: object = seen) -> None:
            heard.extend(rows.tolist())  # type: ignore[attr-defined]
            seen(hart, rows)  # type: ignore[operator]

        core.hart.on_loads = spy
    rng = np.random.default_rng(len(counts))
    for n in counts:
        x = rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16)
        assert np.array_equal(on.add1(x), off.add1(x))
        assert _state(on) == _state(off)
    # the latches were used (else this compares nothing), and not by the other device
    assert sum(c.hart.latched for c in on.tile.cores.values()) > 10 and len(heard) > 10
    assert sum(c.hart.latched for c in off.tile.cores.values()) == off_before
    assert all(c.space.latches is None for c in off.tile.cores.values())


def test_a_core_waiting_on_a_noc_command_register_drops_the_store_latches() -> None:
    """A core parked polling a NOC command register must be woken by each store to it, so
    those stores go through the window again."""
    dev = _device(True)
    tile = dev.tile
    brisc = tile.cores["brisc"]
    addr = tile.latch_ranges[0][0]
    assert any(core.space.latches is not None for core in tile.cores.values())
    w = tile.window_at(addr)
    brisc.hart.pc = 0x100
    brisc.saw_read(w, addr, 4, 0)
    brisc.saw_read(w, addr, 4, 0)  # the same read again: it parks, watching addr
    assert brisc.wait is not None and brisc.wait.watch == [(addr, 4)]
    assert tile.latch_ranges == []
    assert all(core.space.latches is None or not (core.space.latches.table[:, 3] == 1).any()
               for core in tile.cores.values())


def test_noted_and_deferred_stores_equal_every_store_through_its_window() -> None:
    """Stream register stores the compiled path notes (the tile wakes the cores watching
    them when it returns), configuration and semaphore stores it defers (made through the
    window when it returns) and a TRISC's semaphore reads from the tile's copy (fresh latches)
    are invisible: outputs and every count as with store logs off."""
    on, off = _device(True), _device(True)
    off.tile.store_logs = False
    off.tile.remap_latches()
    heard: list[tuple[str, int]] = []
    loads: list[tuple[str, int]] = []
    for core in on.tile.cores.values():
        seen = core.hart.on_store
        seen_loads = core.hart.on_loads

        def spy(hart: object, addr: int, value: int, kind: int, seen: object = seen) -> None:
            heard.append((hart.name, kind))  # type: ignore[attr-defined]
            seen(hart, addr, value, kind)  # type: ignore[operator]

        def spy_loads(hart: object, rows: np.ndarray, seen: object = seen_loads) -> None:
            loads.extend((hart.name, a) for a in rows[:, 1].tolist())  # type: ignore
            seen(hart, rows)  # type: ignore[operator]

        core.hart.on_store = spy
        core.hart.on_loads = spy_loads
    rng = np.random.default_rng(5)
    for n in (2, 9, 1, 12):
        x = rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16)
        assert np.array_equal(on.add1(x), off.add1(x))
        assert _state(on) == _state(off)
    # both kinds were used, by more than one core (else this compares nothing), and the
    # other device made every such store through its window
    assert sum(1 for _, k in heard if k == LATCH_NOTE) > 10
    assert sum(1 for _, k in heard if k == LATCH_DEFER) > 10
    assert len({name for name, _ in heard}) >= 3
    fresh = {(name, a) for name, c in on.tile.cores.items() for a, _, _ in c._fresh}
    assert fresh and sum(1 for x in loads if x in fresh) > 10
    assert all(not c._fresh for c in off.tile.cores.values())
    assert all(not (c.space.latches.table[:, 3] >= LATCH_NOTE).any()
               for c in off.tile.cores.values() if c.space.latches is not None)


def test_latch_loads_left_to_the_hart_equal_window_reads() -> None:
    """A load latch's load the compiled path leaves to the hart (a poll that may park the
    core) is heard by the core without the window's read: outputs and counts as with
    ``on_latch_load`` off (the window reads it)."""
    on, off = _device(True), _device(True)
    heard = []
    for core in off.tile.cores.values():
        core.hart.on_latch_load = None
    for core in on.tile.cores.values():
        seen = core.hart.on_latch_load

        def spy(hart: object, addr: int, value: int, seen: object = seen) -> None:
            heard.append(addr)
            seen(hart, addr, value)  # type: ignore[operator]

        core.hart.on_latch_load = spy
    rng = np.random.default_rng(9)
    for n in (3, 11):
        x = rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16)
        assert np.array_equal(on.add1(x), off.add1(x))
        assert _state(on) == _state(off)
    assert len(heard) > 5
