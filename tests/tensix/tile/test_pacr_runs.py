"""Runs of PACRs while the other Tensix threads wait (``Coprocessor._issue``: a packing
thread's queued PACRs execute as one plan when every other thread has finished or waits for
something PACR does not change). That must be invisible: add1's output, the per-core and
per-thread instruction counts, the coprocessor's steps and rounds and the scheduler's cycles
and rounds must be those of one PACR at a time."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge import tensix
from isaforge.tensix.examples import Add1Device
from isaforge.tensix.machine.coprocessor import Coprocessor


def _state(dev: Add1Device) -> tuple[object, ...]:
    cp, sched = dev.tile.cp, dev.tile.scheduler
    return (cp.steps, cp.rounds, tuple(th.executed for th in cp.threads),
            tuple(sorted((k, c.instructions) for k, c in dev.tile.cores.items())),
            sched.cycles, sched.rounds, dev.stats.riscv_instructions if dev.stats else None)


@pytest.mark.parametrize("counts", [(1, 4), (3, 9, 2)])
def test_pacr_runs_equal_one_at_a_time(counts: tuple[int, ...]) -> None:
    fused, one = Add1Device(), Add1Device()
    one.tile.cp._pacr_runs = False
    runs = []
    pacr_run = fused.tile.cp.units.pack.pacr_run

    def spy(t: int, words: object, limit: int) -> int:
        n = pacr_run(t, words, limit)  # type: ignore[arg-type]
        runs.append(n)
        return n

    fused.tile.cp.units.pack.pacr_run = spy  # type: ignore[method-assign]
    rng = np.random.default_rng(len(counts))
    for n in counts:
        x = rng.integers(0, 1 << 16, (n, 32, 32), dtype=np.uint16)
        assert np.array_equal(fused.add1(x), one.add1(x))
        assert _state(fused) == _state(one)
    assert any(n > 1 for n in runs)  # the run path was taken (else this compares nothing)


def test_a_thread_waiting_on_l1_may_move_under_pacrs() -> None:
    """ATCAS waits on L1, which PACRs write: a PACR run never counts it as blocked."""
    cp = Coprocessor()
    cp.memory.write(0x604, 4, 1)
    cp.gpr.set(0, 3, 0x60)
    cp.load_program({0: tensix.assemble("TTI_ATCAS(0, 5, 2, 1, 0, 3)"),
                     2: tensix.assemble("ttincrwc 0,0,1,0")})
    cp.step()  # thread 0 waits for its value (0x2)
    assert cp.threads[0].blocked is not None
    assert cp._others_blocked(2)
    assert not cp._others_blocked(2, writes_l1=True)
