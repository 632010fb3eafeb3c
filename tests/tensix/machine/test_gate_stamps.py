"""A thread held at the Wait Gate by a SEMWAIT latch is held still without looking again
while nothing the latch reads can have changed (``Coprocessor._gate_stamps``). Switched on
or off, every round gives the same counts and blocked texts, whoever changes the semaphore:
another thread's SEMPOST/SEMINIT/SEMGET, a STOREREG through the tile's MMIO, code from
outside between calls, or a hook in the middle of a burst."""

from __future__ import annotations

import pytest

from isaforge.tensix import Coprocessor
from isaforge.tensix.machine.sync import SyncUnit

from .stamped import PokeMemory, Stamped

BUSY = ["ttadddmareg 1,5,1,5"] * 6
HELD = ["TTI_SEMWAIT(64, 2, 1)", "ttsetrwc 0,0,0,0,0,0", "TTI_SEMWAIT(64, 2, 3)",
        "ttsetrwc 0,0,0,0,0,0", "TTI_SEMGET(2)", "ttsetrwc 0,0,0,0,0,0"]


def _setup(cp: Coprocessor, mem: PokeMemory) -> None:
    # the MMIO word posts semaphore 1 (as the tile's semaphore registers do, through the
    # Sync Unit)
    mem.poke = lambda thread: cp.sync.sempost(1 << 1)
    cp.sync.sem.max[1] = 2


_run = Stamped("_gate_stamps", _setup, (SyncUnit, "latched_holds"),
               lambda cp: [int(v) for v in cp.sync.sem.value], calls=60, deadlocks=False)
_same = _run.same


@pytest.mark.parametrize("burst", [0, 1, 4])
def test_another_threads_sempost_and_seminit(burst: int) -> None:
    _same(lambda: {"streams": {0: HELD, 1: BUSY + ["TTI_SEMPOST(2)"] + BUSY
                               + ["TTI_SEMINIT(2, 1, 2)"] + BUSY + ["TTI_SEMPOST(2)"],
                               2: BUSY * 5}, "burst": burst},
          stamped=burst > 1)


@pytest.mark.parametrize("burst", [0, 4])
def test_storereg_through_the_mmio(burst: int) -> None:
    _same(lambda: {"streams": {0: HELD, 1: BUSY + ["TTI_STOREREG(3, 0x4800)"] + BUSY
                               + ["TTI_STOREREG(3, 0x4800)"] * 2, 2: BUSY * 5},
                   "burst": burst}, stamped=burst > 1)


@pytest.mark.parametrize("burst", [0, 3])
def test_a_write_from_outside_between_calls(burst: int) -> None:
    def poke(cp: Coprocessor, k: int) -> None:
        if k in (3, 6):
            cp.semaphores.value[1] += 1

    _same(lambda: {"streams": {0: HELD, 2: BUSY * 5}, "between": poke, "burst": burst},
          stamped=burst > 1)


def test_a_hook_in_the_middle_of_a_burst() -> None:
    def make() -> dict[str, object]:
        def hook(cp: Coprocessor) -> None:
            cp.sync.sem.value[1] = 1  # (thread 1's GPR writes: a few, in the middle)

        rwc = ["ttsetrwc 0,0,0,0,0,0"] * 9  # (no register writes: the held thread is
        # held still in those rounds)
        return {"streams": {0: HELD, 1: rwc + BUSY[:1] + rwc + BUSY[:1], 2: rwc * 4},
                "hook": hook, "burst": 4}

    _same(make)
