"""The coprocessor's fast paths (plans worked out once and replayed) must be invisible: add1
on several tile counts and a matmul give the same outputs, the same per-core and per-thread
instruction counts, the same coprocessor steps and rounds and the same scheduler cycles and
rounds with each fast path switched off. Each comparison also checks the fast path was taken
(else it compares nothing)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from isaforge.tensix.examples import Add1Device
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.matrix import MatrixUnit
from isaforge.tensix.machine.sfpu.block import SfpBlocks
from isaforge.tensix.machine.sfpu.movement import MovementMixin
from isaforge.tensix.machine.unpack import Unpackers
from isaforge.tensix.matmul import matmul
from isaforge.tensix.tile.scheduler import Scheduler

#: name -> (the class with the switch, its attribute, a class and its method the slow path
#: calls more often)
SWITCHES: dict[str, tuple[type, str, type, str]] = {
    "unpack plans": (Unpackers, "plans", Unpackers, "_worked_out"),
    "MOVA2D plans": (MatrixUnit, "mova2d_plans", MatrixUnit, "_move_columns"),
    "single SFPLOAD/SFPSTORE plans": (SfpBlocks, "single_plans", MovementMixin, "_addr"),
}


def _add1_state(dev: Add1Device) -> tuple[object, ...]:
    cp, sched = dev.tile.cp, dev.tile.scheduler
    return (cp.steps, cp.rounds, tuple(th.executed for th in cp.threads),
            tuple(sorted((k, c.instructions, c.hart.instret) for k, c in dev.tile.cores.items())),
            sched.cycles, sched.rounds, dev.stats.riscv_instructions if dev.stats else None,
            dev.stats.tensix_instructions if dev.stats else None)


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[Coprocessor], list[Scheduler]]]:
    """The coprocessors and schedulers made while the test runs."""
    cps: list[Coprocessor] = []
    scheds: list[Scheduler] = []
    cp_init, sched_init = Coprocessor.__init__, Scheduler.__init__

    def cp_made(self: Coprocessor, *a: object, **k: object) -> None:
        cp_init(self, *a, **k)  # type: ignore[arg-type]
        cps.append(self)

    def sched_made(self: Scheduler, *a: object, **k: object) -> None:
        sched_init(self, *a, **k)  # type: ignore[arg-type]
        scheds.append(self)

    monkeypatch.setattr(Coprocessor, "__init__", cp_made)
    monkeypatch.setattr(Scheduler, "__init__", sched_made)
    yield cps, scheds


def _counting(monkeypatch: pytest.MonkeyPatch, cls: type, method: str) -> list[int]:
    """Count calls of ``cls.method`` (the slow path)."""
    calls = [0]
    original = getattr(cls, method)

    def counted(self: object, *a: object, **k: object) -> object:
        calls[0] += 1
        return original(self, *a, **k)

    monkeypatch.setattr(cls, method, counted)
    return calls


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_add1_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fpu._jit(now=True)  # (MOVA2D plans need the compiled kernels, loaded after 1,000 calls)
    cls, attr, slow_cls, slow = SWITCHES[switch]
    calls = _counting(monkeypatch, slow_cls, slow)
    rng = np.random.default_rng(25)
    inputs = [rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16) for n in (1, 3, 17)]
    results = {}
    for on in (True, False):
        monkeypatch.setattr(cls, attr, on)
        dev = Add1Device()
        before = calls[0]
        results[on] = [(dev.add1(x).tobytes(), _add1_state(dev)) for x in inputs]
        results[on, "slow"] = calls[0] - before
    assert results[True] == results[False]
    assert results[True, "slow"] < results[False, "slow"]  # the fast path was taken


@pytest.mark.parametrize("switch", sorted(SWITCHES))
def test_matmul_with_and_without(switch: str, monkeypatch: pytest.MonkeyPatch,
                                 made: tuple[list[Coprocessor], list[Scheduler]]) -> None:
    cls, attr, _, _ = SWITCHES[switch]
    cps, scheds = made
    rng = np.random.default_rng(26)
    a = rng.integers(0, 1 << 16, (64, 96), dtype=np.uint16) & 0x7F7F
    b = rng.integers(0, 1 << 16, (96, 64), dtype=np.uint16) & 0x7F7F
    results = []
    for on in (True, False):
        monkeypatch.setattr(cls, attr, on)
        cps.clear()
        scheds.clear()
        c, st = matmul(a, b, grid=(2, 1), processes=1)
        results.append((c.tobytes(), st.riscv_instructions, st.tensix_instructions,
                        st.per_worker,
                        [(cp.steps, cp.rounds, [th.executed for th in cp.threads]) for cp in cps],
                        [(s.cycles, s.rounds) for s in scheds]))
    assert results[0] == results[1]
