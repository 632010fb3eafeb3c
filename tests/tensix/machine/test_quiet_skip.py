"""Quiet instructions (``Unit.quiet``: they change nothing any wait reads) leave the
coprocessor's epoch alone, so that a thread waiting at the Wait Gate is not tried again after
one (``Coprocessor._quiet_skip``). On and off, the half-Dest program of test_threads with
quiet instructions sprinkled in gives the same state after every step, burst and run; the
skip is taken (fewer issue attempts)."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix import Coprocessor
from isaforge.tensix.machine import fpu

from .test_threads import half_dest_program

QUIET = ["ttdmanop", "ttnop", "ttsetadcxy 3,5,6,7,1,15", "ttsetadczw 1,3,2,1,4,5",
         "ttsetc16 40,7", "ttwrcfg 4,0,60", "TTI_RMWCIB1(0xFF, 0x12, 60)",
         "TTI_STALLWAIT(64, 0x0F)", "ttsetadcxx 4,255,17"]


def _program(seed: int) -> str:
    """half_dest_program with quiet instructions before and between thread 0's and around
    thread 2's."""
    rng = np.random.default_rng(seed)
    out = []
    thread = -1
    for line in half_dest_program(3).splitlines():
        if line.startswith(".thread"):
            thread = int(line.split()[1])
        out.append(line)
        if thread in (0, 2) and not line.startswith("."):
            out += [str(rng.choice(QUIET)) for _ in range(int(rng.integers(0, 9)))]
        elif line == ".thread 0":
            out += [str(rng.choice(QUIET)) for _ in range(int(rng.integers(0, 20)))]
    return "\n".join(out) + "\n"


def _state(cp: Coprocessor) -> tuple[object, ...]:
    return (cp.steps, cp.rounds, [th.executed for th in cp.threads],
            [str(th.blocked) for th in cp.threads], cp.dst.raw().tobytes()
            if hasattr(cp.dst, "raw") else None, cp.config.words.tobytes(),
            cp.adc.v.tobytes(), cp.thread_config.regs.tobytes())


def _trace(on: bool, seed: int, burst: int) -> tuple[list[object], int]:
    # (runs of MVMULs, which a burst may let run past its rounds, need the compiled kernels:
    # the same for both)
    fpu._jit(now=True)
    Coprocessor._quiet_skip = on
    # (waits stamped by what they read would hide the quiet skip: test_wait_stamps)
    Coprocessor._wait_stamps = False
    try:
        cp = Coprocessor()
        cp.load_program(_program(seed), "quiet.s")
        tries = [0]
        issue = cp._issue

        def counted(*a: object) -> bool:
            tries[0] += 1
            return issue(*a)  # type: ignore[arg-type]

        cp._issue = counted  # type: ignore[method-assign]
        seen = []
        for _ in range(400):
            if cp.finished:
                break
            if burst:
                cp.burst(burst)
            else:
                cp.step()
            seen.append(_state(cp))
        assert cp.finished
        return seen, tries[0]
    finally:
        Coprocessor._quiet_skip = True
        Coprocessor._wait_stamps = True


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("burst", [0, 1, 5])
def test_quiet_skip_changes_nothing(seed: int, burst: int) -> None:
    on, on_tries = _trace(True, seed, burst)
    off, off_tries = _trace(False, seed, burst)
    assert on == off
    if burst > 1:
        assert on_tries < off_tries


def test_run_is_the_same() -> None:
    results = []
    for on in (True, False):
        Coprocessor._quiet_skip = on
        try:
            fpu._jit(now=True)
            cp = Coprocessor()
            cp.load_program(_program(9), "quiet.s")
            r = cp.run()
            results.append((r, _state(cp)))
        finally:
            Coprocessor._quiet_skip = True
    assert results[0] == results[1]


def test_quiet_instructions_are_their_units_own_and_do_not_wait() -> None:
    cp = Coprocessor()
    named = 0
    for unit in cp.units.all():
        quiet = set(unit.quiet())
        assert quiet <= set(unit.handlers()) and not quiet & set(unit.waits())
        named += len(quiet)
    assert named == len(cp._quiet) >= 15
