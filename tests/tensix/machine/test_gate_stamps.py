"""A thread held at the Wait Gate by a SEMWAIT latch is held still without looking again
while nothing the latch reads can have changed (``Coprocessor._gate_stamps``). Switched on
or off, every round gives the same counts and blocked texts, whoever changes the semaphore:
another thread's SEMPOST/SEMINIT/SEMGET, a STOREREG through the tile's MMIO, code from
outside between calls, or a hook in the middle of a burst."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.sync import SyncUnit

BUSY = ["ttadddmareg 1,5,1,5"] * 6
HELD = ["TTI_SEMWAIT(64, 2, 1)", "ttsetrwc 0,0,0,0,0,0", "TTI_SEMWAIT(64, 2, 3)",
        "ttsetrwc 0,0,0,0,0,0", "TTI_SEMGET(2)", "ttsetrwc 0,0,0,0,0,0"]


class _Mem:
    """A memory whose MMIO word 0xFFB12000 posts semaphore 1 (as the tile's semaphore
    registers do through the Sync Unit)."""

    l1_size = 1 << 12

    def __init__(self) -> None:
        self.sync: SyncUnit | None = None

    def read(self, addr: int, size: int) -> int:
        return 0

    def write(self, addr: int, size: int, value: int) -> None:
        pass

    def mmio_read(self, thread: int, addr: int) -> int:
        return 0

    def mmio_write(self, thread: int, addr: int, value: int) -> None:
        if addr == 0xFFB12000 and self.sync is not None:
            self.sync.sempost(1 << 1)


def _trace(on: bool, streams: dict[int, list[str]],
           between: Callable[[Coprocessor, int], None] | None = None,
           hook: Callable[[Coprocessor], None] | None = None,
           burst: int = 0) -> tuple[list[object], int]:
    Coprocessor._gate_stamps = on
    mem = _Mem()
    cp = Coprocessor(memory=mem)
    mem.sync = cp.sync
    cp.sync.sem.max[1] = 2
    for t, lines in streams.items():
        cp.set_stream(t, assemble("\n".join(lines)))
    if hook is not None:
        cp.hook_add("reg_write", lambda c, reg, value, info: hook(c))
    calls = [0]
    holds = SyncUnit.latched_holds

    def counted(self: SyncUnit, t: int) -> bool:
        calls[0] += 1
        return holds(self, t)

    SyncUnit.latched_holds = counted  # type: ignore[method-assign]
    seen: list[object] = []
    try:
        for k in range(60):
            if between is not None:
                between(cp, k)
            if burst:
                cp.burst(burst)
            elif not cp.step():
                break
            seen.append((cp.steps, cp.rounds, [th.executed for th in cp.threads],
                         [str(th.blocked) for th in cp.threads],
                         [int(v) for v in cp.sync.sem.value]))
    finally:
        SyncUnit.latched_holds = holds  # type: ignore[method-assign]
        Coprocessor._gate_stamps = True
    return seen, calls[0]


def _same(make: Callable[[], dict[str, object]], stamped: bool = True) -> None:
    """``_trace`` on and off with the arguments ``make()`` gives (fresh for each run)."""
    on, on_calls = _trace(True, **make())  # type: ignore[arg-type]
    off, off_calls = _trace(False, **make())  # type: ignore[arg-type]
    assert on == off
    if stamped:
        assert on_calls < off_calls  # the held thread was held still without looking


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
