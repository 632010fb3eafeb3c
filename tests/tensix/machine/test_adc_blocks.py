"""SETADCXY/SETADCZW's prepared blocks (``AdcUnit.blocks``) write what the counter-by-counter
way writes, for every unit mask, bit mask, value and ThreadOverride, and report the same."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.machine import adc as adc_module
from isaforge.tensix.machine.adc import AdcUnit
from isaforge.tensix.machine.state import ADCs

from ..switched import counting


def _run(blocks: bool, fields: list[tuple[str, int, dict[str, int]]]
         ) -> tuple[bytes, list[str]]:
    reports: list[str] = []
    unit = AdcUnit(ADCs(), reports.append)
    unit.blocks = blocks
    unit.adc.v[...] = 0xABCDE  # (so that untouched counters show)
    table = unit.handlers()
    for name, t, f in fields:
        table[name](t, f)
    return unit.adc.v.tobytes(), reports


def test_blocks_equal_counter_by_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(7)
    fields = []
    for _ in range(3000):
        f = {"CntSetMask": int(rng.integers(0, 8)), "Ch1_Y": int(rng.integers(0, 64)),
             "Ch1_X": int(rng.integers(0, 8)), "Ch0_Y": int(rng.integers(0, 8)),
             "Ch0_X": int(rng.integers(0, 8)),
             "BitMask": int(rng.choice([15, 31, 63, 47, int(rng.integers(0, 64))]))}
        if rng.random() < 0.7:
            f["Ch1_Y"] &= 7  # (mostly without ThreadOverride)
        fields.append((str(rng.choice(["SETADCXY", "SETADCZW"])), int(rng.integers(0, 3)), f))
    slow = counting(monkeypatch, adc_module, "set_pair")
    on = _run(True, fields)
    on_slow = slow[0]
    off = _run(False, fields)
    assert on == off
    assert on[1]  # ThreadOverride reports happened (the long way)
    assert on_slow < len(fields) // 2 and slow[0] - on_slow == len(fields)  # blocks were used
    assert on_slow == sum(1 for _, _, f in fields if f["Ch1_Y"] & 0x18)  # (only overrides)
