"""What the fast-path tests share: run add1 or a matmul with a switch on and then off, and
compare everything a user could observe (outputs, every instruction count, the scheduler's
cycles and rounds, the registers); count calls of a slow path to show the fast one was
taken (else the comparison compares nothing)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest

from isaforge.tensix.examples import Add1Device
from isaforge.tensix.matmul import matmul


def add1_state(dev: Add1Device) -> tuple[object, ...]:
    """Everything a finished add1 call leaves that a fast path must not change."""
    cp, sched = dev.tile.cp, dev.tile.scheduler
    st = dev.stats
    return (cp.steps, cp.rounds, tuple(th.executed for th in cp.threads),
            tuple(sorted((k, c.instructions, c.hart.instret) for k, c in dev.tile.cores.items())),
            sched.cycles, sched.rounds, st.riscv_instructions if st else None,
            st.tensix_instructions if st else None, st.noc if st else None,
            [str(th.blocked) for th in cp.threads], cp.gpr.v.tobytes(), cp.adc.v.tobytes(),
            cp.config.words.tobytes(), cp.sync.sem.value.tobytes())


def counting(monkeypatch: pytest.MonkeyPatch, where: object, name: str) -> list[int]:
    """Count the calls of ``where.name`` (a class's method or a module's function) in a
    one-item list."""
    calls = [0]
    original = getattr(where, name)

    def counted(*a: object, **k: object) -> object:
        calls[0] += 1
        return original(*a, **k)

    monkeypatch.setattr(where, name, counted)
    return calls


def tiles(seed: int, sizes: Sequence[int] = (1, 3, 17)) -> list[np.ndarray]:
    """add1 inputs: random BF16 tiles, the second input's first row starting with inf,
    -inf, a NaN and a denormal."""
    rng = np.random.default_rng(seed)
    out = [rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16) for n in sizes]
    if len(out) > 1:
        out[1][0, 0, :4] = [0x7F80, 0xFF80, 0x7FC1, 0x0001]
    return out


def add1_on_off(monkeypatch: pytest.MonkeyPatch, switch: Callable[[bool], None], seed: int,
                counters: Sequence[list[int]] = (), sizes: Sequence[int] = (1, 3, 17)
                ) -> tuple[list[int], list[int]]:
    """add1 of :func:`tiles` on a new device with ``switch(True)``, then with
    ``switch(False)``: asserts the outputs and :func:`add1_state` after each call are
    equal; returns how much each of ``counters`` (from :func:`counting`) grew, on and off."""
    inputs = tiles(seed, sizes)
    results, grew = {}, {}
    for on in (True, False):
        switch(on)
        dev = Add1Device()
        before = [c[0] for c in counters]
        results[on] = [(dev.add1(x).tobytes(), add1_state(dev)) for x in inputs]
        grew[on] = [c[0] - b for c, b in zip(counters, before, strict=True)]
    assert results[True] == results[False]
    return grew[True], grew[False]


def setting(monkeypatch: pytest.MonkeyPatch, owner: object, attr: str
            ) -> Callable[[bool], None]:
    """A switch for :func:`add1_on_off`: ``owner.attr`` set to the value."""
    return lambda on: monkeypatch.setattr(owner, attr, on)


def matmul_on_off(switch: Callable[[bool], None], seed: int, made: tuple[list, list],
                  mkn: tuple[int, int, int] = (2, 3, 2)) -> None:
    """A matmul of random ``mkn`` tiles on a 2x1 grid with ``switch(True)`` and
    ``switch(False)``: the same product, statistics, and per coprocessor and scheduler
    (``made``, the fixture) counts."""
    m, k, n = mkn
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 16, (m * 32, k * 32), dtype=np.uint16) & 0x7F7F
    b = rng.integers(0, 1 << 16, (k * 32, n * 32), dtype=np.uint16) & 0x7F7F
    cps, scheds = made
    results = []
    for on in (True, False):
        switch(on)
        cps.clear()
        scheds.clear()
        c, st = matmul(a, b, grid=(2, 1), processes=1)
        results.append((c.tobytes(), st.riscv_instructions, st.tensix_instructions,
                        st.per_worker,
                        [(cp.steps, cp.rounds, [th.executed for th in cp.threads]) for cp in cps],
                        [(s.cycles, s.rounds) for s in scheds]))
    assert results[0] == results[1]
