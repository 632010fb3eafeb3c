"""The coprocessor's fast paths (plans worked out once and replayed) must be invisible: add1
on several tile counts and a matmul give the same outputs, the same per-core and per-thread
instruction counts, the same coprocessor steps and rounds and the same scheduler cycles and
rounds with each fast path switched off. Each comparison also checks the fast path was taken
(else it compares nothing)."""

from __future__ import annotations

import pytest

from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.matrix import MatrixUnit
from isaforge.tensix.machine.sfpu.block import SfpBlocks
from isaforge.tensix.machine.sfpu.movement import MovementMixin
from isaforge.tensix.machine.unpack import Unpackers

from ..switched import add1_on_off, counting, matmul_on_off, setting

#: name -> (the class with the switch, its attribute, a class and its method the slow path
#: calls more often)
SWITCHES: dict[str, tuple[type, str, type, str]] = {
    "unpack plans": (Unpackers, "plans", Unpackers, "_worked_out"),
    "MOVA2D plans": (MatrixUnit, "mova2d_plans", MatrixUnit, "_move_columns"),
    "single SFPLOAD/SFPSTORE plans": (SfpBlocks, "single_plans", MovementMixin, "_addr"),
}


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_add1_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fpu._jit(now=True)  # (MOVA2D plans need the compiled kernels)
    cls, attr, slow_cls, slow = SWITCHES[switch]
    if cls is SfpBlocks:  # (deferred, add1's SFP loop leaves no single SFPLOAD/SFPSTORE)
        monkeypatch.setattr(Coprocessor, "_sfp_defer", False)
    calls = counting(monkeypatch, slow_cls, slow)
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, cls, attr), 25, [calls])
    assert on[0] < off[0]  # the fast path was taken


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_matmul_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch,
                                 made: tuple[list, list]) -> None:
    cls, attr, _, _ = SWITCHES[switch]
    matmul_on_off(setting(monkeypatch, cls, attr), 26, made)
