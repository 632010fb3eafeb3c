"""The coprocessor's dispatch shortcuts and small executors' prepared paths must be
invisible: add1 on several tile counts gives the same outputs, the same per-core and
per-thread instruction counts, the same coprocessor steps and rounds and the same scheduler
cycles and rounds with each switched off. Each comparison also checks that the shortcut was
taken (the slow path it replaces runs less often), else it compares nothing."""

from __future__ import annotations

import pytest

from isaforge.tensix.machine import adc
from isaforge.tensix.machine.adc import AdcUnit
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.sync import SyncUnit
from isaforge.tensix.tile.tile import Tile, _CoprocessorMemory

from ..switched import add1_on_off, counting, setting

#: name -> (the class with the switch, its attribute, where the slow path lives and its name)
SWITCHES: dict[str, tuple[type, str, object, str]] = {
    "STOREREG window cache": (_CoprocessorMemory, "cache_windows", Tile, "window_at"),
    "SETADCXY/ZW blocks": (AdcUnit, "blocks", adc, "set_pair"),
    "Wait Gate stamps": (Coprocessor, "_gate_stamps", SyncUnit, "latched_holds"),
    "waits stamped by what they read": (Coprocessor, "_wait_stamps", Coprocessor, "_issue"),
    "rounds issue plain instructions": (Coprocessor, "_inline", Coprocessor, "_issue"),
    "quiet instructions keep the epoch": (Coprocessor, "_quiet_skip", Coprocessor, "_issue"),
}


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_add1_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls, attr, where, slow = SWITCHES[switch]
    calls = counting(monkeypatch, where, slow)
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, cls, attr), 32, [calls])
    assert on[0] < off[0]  # the shortcut was taken
