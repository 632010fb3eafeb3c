"""Fixtures of the Tensix tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.tile.scheduler import Scheduler


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
