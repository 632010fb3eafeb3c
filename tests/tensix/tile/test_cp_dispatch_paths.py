"""The coprocessor's dispatch shortcuts and small executors' prepared paths must be
invisible: add1 on several tile counts gives the same outputs, the same per-core and
per-thread instruction counts, the same coprocessor steps and rounds and the same scheduler
cycles and rounds with each switched off. Each comparison also checks that the shortcut was
taken (the slow path it replaces runs less often), else it compares nothing."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.examples import Add1Device
from isaforge.tensix.machine import adc
from isaforge.tensix.machine.adc import AdcUnit
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.sync import SyncUnit
from isaforge.tensix.tile.tile import Tile, _CoprocessorMemory

#: name -> (the class with the switch, its attribute, where the slow path lives and its name)
SWITCHES: dict[str, tuple[type, str, object, str]] = {
    "STOREREG window cache": (_CoprocessorMemory, "cache_windows", Tile, "window_at"),
    "SETADCXY/ZW blocks": (AdcUnit, "blocks", adc, "set_pair"),
    "Wait Gate stamps": (Coprocessor, "_gate_stamps", SyncUnit, "latched_holds"),
    "burst's own round loop": (Coprocessor, "_burst_loop", Coprocessor, "_round"),
    "burst issues plain instructions": (Coprocessor, "_inline", Coprocessor, "_issue"),
    "quiet instructions keep the epoch": (Coprocessor, "_quiet_skip", Coprocessor, "_issue"),
}


def _add1_state(dev: Add1Device) -> tuple[object, ...]:
    cp, sched = dev.tile.cp, dev.tile.scheduler
    return (cp.steps, cp.rounds, tuple(th.executed for th in cp.threads),
            tuple(sorted((k, c.instructions, c.hart.instret) for k, c in dev.tile.cores.items())),
            sched.cycles, sched.rounds, [str(th.blocked) for th in cp.threads],
            cp.gpr.v.tobytes(), cp.adc.v.tobytes(), cp.config.words.tobytes(),
            cp.sync.sem.value.tobytes())


def _counting(monkeypatch: pytest.MonkeyPatch, where: object, name: str) -> list[int]:
    calls = [0]
    original = getattr(where, name)

    def counted(*a: object, **k: object) -> object:
        calls[0] += 1
        return original(*a, **k)

    monkeypatch.setattr(where, name, counted)
    return calls


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_add1_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls, attr, where, slow = SWITCHES[switch]
    calls = _counting(monkeypatch, where, slow)
    rng = np.random.default_rng(32)
    inputs = [rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16) for n in (1, 3, 17)]
    results = {}
    for on in (True, False):
        monkeypatch.setattr(cls, attr, on)
        dev = Add1Device()
        before = calls[0]
        results[on] = [(dev.add1(x).tobytes(), _add1_state(dev)) for x in inputs]
        results[on, "slow"] = calls[0] - before
    assert results[True] == results[False]
    assert results[True, "slow"] < results[False, "slow"]  # the shortcut was taken
