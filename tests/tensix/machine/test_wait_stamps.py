"""A thread held by a wait that reads only the Src banks' owners (a STALLWAIT latch on C5..C8,
MOVA2D's, UNPACR_NOP ZEROSRC's own wait) is not asked again while those stay
(``Coprocessor._wait_stamps``: ``SrcRegs.owners`` moves with every change). Switched on or
off, every step or burst gives the same counts, blocked texts, Src owners and deadlock
reports, whoever releases the wait: another thread's instruction, a STOREREG through the
tile's MMIO, code from outside between calls, or a hook in the middle of a burst; and the
held threads are asked less often with the stamps."""

from __future__ import annotations

import pytest

from isaforge.tensix import Coprocessor
from isaforge.tensix.machine.regfiles import SrcClient

from ..switched import add1_on_off, counting, matmul_on_off, setting
from .stamped import PokeMemory, Stamped

BUSY = ["ttadddmareg 1,5,1,5"] * 5  # (not quiet: the epoch moves, a GPR write for hooks)
GIVE_A = "TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 1, 3)"  # SETDVALID form: SrcA to the Matrix Unit
ZEROSRC_A = "TTI_UNPACR_NOP(0, 0, 0, 0, 0, 0, 0, 0, 1)"  # waits for the Matrix Unit's bank
MOVA2D = "ttmova2d 0,0,0,0,0"  # waits for SrcA's Matrix Unit bank
STALL_A = "TTI_STALLWAIT(64, 0x80)"  # B6 until C7: SrcA's Matrix Unit bank
SETRWC = "ttsetrwc 0,0,0,0,0,0"


def _setup(cp: Coprocessor, mem: PokeMemory) -> None:
    # the MMIO word hands SrcA's unpacker bank to the Matrix Unit (through SrcRegs, as every
    # writer of the owners does)
    mem.poke = lambda thread: cp.srca.give_to_matrix_unit(thread, 0)


_run = Stamped("_wait_stamps", _setup, (Coprocessor, "_issue"),
               lambda cp: [list(map(int, s.allowed_client)) + [s.matrix_bank, s.unpacker_bank]
                           for s in (cp.srca, cp.srcb)], calls=300, deadlocks=True)
_same = _run.same


#: T1 waits for SrcA (MOVA2D's own wait, then a STALLWAIT latch), T2 behind a STALLWAIT
#: latch; T0 hands SrcA over, waits (ZEROSRC) for T1 to give it back (CLEARDVALID), hands it
#: over again
HANDOVER = {0: BUSY * 2 + [GIVE_A] + BUSY + [ZEROSRC_A] + BUSY + [GIVE_A],
            1: [MOVA2D] + BUSY + ["ttcleardvalid 1,0", STALL_A, SETRWC] + BUSY,
            2: [STALL_A, SETRWC] + BUSY * 3}


@pytest.mark.parametrize("burst", [0, 1, 4])
def test_another_threads_instructions(burst: int) -> None:
    seen = _same(lambda: {"streams": HANDOVER, "burst": burst}, stamped=burst > 1)
    assert seen[-1][2] == [len(v) for v in HANDOVER.values()]  # (all of it ran)


@pytest.mark.parametrize("burst", [0, 4])
def test_storereg_through_the_mmio(burst: int) -> None:
    streams = {0: BUSY * 3 + ["TTI_STOREREG(3, 0x4800)"] + BUSY,
               1: [MOVA2D] + BUSY, 2: [STALL_A, SETRWC] + BUSY}
    _same(lambda: {"streams": streams, "burst": burst}, stamped=burst > 1)


@pytest.mark.parametrize("burst", [0, 3])
@pytest.mark.parametrize("how", ["allowed_client", "load_src", "matrix_bank"])
def test_a_write_from_outside_between_calls(burst: int, how: str) -> None:
    def poke(cp: Coprocessor, k: int) -> None:
        if k == 4:
            if how == "allowed_client":
                cp.srca.allowed_client[0] = SrcClient.MATRIX_UNIT  # (no bump: from outside)
            elif how == "load_src":
                cp.load_src("a", 0, [[0.0] * 16], "bf16")
            else:
                cp.srca.allowed_client[1] = SrcClient.MATRIX_UNIT
                cp.srca.matrix_bank = 1

    _same(lambda: {"streams": {0: BUSY * 4, 1: [MOVA2D] + BUSY,
                               2: [STALL_A, SETRWC] + BUSY * 4},
                   "between": poke, "burst": burst}, stamped=burst > 1)


def test_a_hook_in_the_middle_of_a_burst() -> None:
    def make() -> dict[str, object]:
        def hook(cp: Coprocessor) -> None:
            cp.srca.allowed_client[0] = SrcClient.MATRIX_UNIT  # (T0's GPR writes)

        return {"streams": {0: [SETRWC] * 9 + BUSY[:1] + [SETRWC] * 9,
                            1: [MOVA2D] + BUSY, 2: [STALL_A, SETRWC] + [SETRWC] * 20},
                "hook": hook, "burst": 4}

    _same(make)


@pytest.mark.parametrize("burst", [0, 2])
def test_deadlock_reports_and_stays(burst: int) -> None:
    seen = _same(lambda: {"streams": {0: BUSY + [ZEROSRC_A], 1: [MOVA2D],
                                      2: [STALL_A, SETRWC] + BUSY}, "burst": burst},
                 stamped=burst > 1)
    if not burst:
        assert seen[-1][0] == "deadlock" and "ttmova2d" in seen[-1][1]


def test_add1_and_matmul_with_and_without(monkeypatch: pytest.MonkeyPatch,
                                          made: tuple[list, list]) -> None:
    """add1 (the tile's firmware: MOVA2D, UNPACR, UNPACR_NOP, STALLWAIT and SEMWAIT held)
    and a matmul (MVMUL's waits) give the same outputs and counts, asking less often."""
    calls = counting(monkeypatch, Coprocessor, "_issue")
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, Coprocessor, "_wait_stamps"), 41,
                          [calls], sizes=(1, 5))
    assert on[0] < off[0]
    matmul_on_off(setting(monkeypatch, Coprocessor, "_wait_stamps"), 42, made)
