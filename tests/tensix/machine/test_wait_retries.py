"""A thread whose instruction waits is tried again each round something else ran: the retry
keeps its blocked object (its own wait's reason string is formatted once per Src bank; a Wait
Gate retry under the same block mask does not ask the mask again), and what a reader sees
(str of the blocked object, deadlock reports) is the text of the wait as it is."""

from __future__ import annotations

import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine.regfiles import SrcClient
from isaforge.tensix.machine.state import DeadlockError

BUSY = "\n".join(["ttadddmareg 1,5,1,5"] * 12)  # thread 2: instructions that give no bank


def _retried(cp: Coprocessor, t: int) -> list[object]:
    """Thread ``t``'s blocked object after each of 8 rounds (another thread keeps running)."""
    seen = []
    for _ in range(8):
        cp.step()
        seen.append(cp.threads[t].blocked)
    return seen


def test_own_wait_retry_keeps_its_blocked_object() -> None:
    cp = Coprocessor()
    cp.set_stream(0, assemble("ttmvmul 0,0,0,0"))
    cp.set_stream(2, assemble(BUSY))
    seen = _retried(cp, 0)
    assert seen[0] is not None and all(b is seen[0] for b in seen)
    assert cp.threads[0].executed == 0 and cp.threads[2].executed == 8
    assert str(seen[0]) == "ttmvmul 0,0,0,0: waiting for SrcA bank 0 to be given to the Matrix Unit"
    with pytest.raises(DeadlockError, match="thread 0: .*SrcA bank 0 to be given to the Matrix"):
        cp.run()


def test_unpacr_wait_reason_names_the_bank() -> None:
    cp = Coprocessor()
    cp.sync.srca.allowed_client[0] = SrcClient.MATRIX_UNIT  # not the unpackers'
    cp.set_stream(0, assemble("ttunpacr 0,0,0,0,0,0,0,0,0,0,0,0,0"))
    cp.set_stream(2, assemble(BUSY))
    seen = _retried(cp, 0)
    assert seen[0] is not None and all(b is seen[0] for b in seen)
    assert str(seen[0]).endswith("UNPACR waiting for SrcA bank 0 to belong to the unpackers")


def test_gate_retry_keeps_its_blocked_object_and_reads_the_wait_live() -> None:
    cp = Coprocessor()
    cp.set_stream(0, assemble("TTI_SEMWAIT(511, 2, 1)\nttsetrwc 0,0,0,0,0,0"))
    cp.set_stream(2, assemble(BUSY))
    seen = _retried(cp, 0)[1:]  # (the first round executes SEMWAIT)
    assert seen[0] is not None and all(b is seen[0] for b in seen)
    assert cp.threads[0].executed == 1
    text = str(seen[0])
    assert "SEMWAIT (block mask 0x1ff) waiting: C0: semaphore 1" in text
    cp.sync.sem.value[1] = 1  # satisfied since: the text says so, the retry goes through
    assert str(seen[0]).endswith("waiting for its latched wait (satisfied since)")
    cp.run()
    assert cp.threads[0].executed == 2 and cp.threads[0].blocked is None
