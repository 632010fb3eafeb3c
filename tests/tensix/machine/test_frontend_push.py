"""Thread.push / set_stream keep 32-bit Python ints (``int(w) & 0xFFFFFFFF`` of each word),
whether the words take the C path (a list of ints in range) or the per-word one."""

from __future__ import annotations

import numpy as np

from isaforge.tensix.machine.frontend import Thread
from isaforge.tensix.machine.regfiles import SrcRegs
from isaforge.tensix.machine.sync import LatchedWait, SyncUnit


def _masked(words: list) -> list[int]:
    return [int(w) & 0xFFFFFFFF for w in words]


def test_push_keeps_words_as_masked_ints() -> None:
    cases = [
        [0x02000000, 0xFFFFFFFF, 0],  # already 32-bit ints: the array path
        [1 << 32 | 5, -1, 7],  # out of range: masked one by one
        [1.5, True, "9"],  # not ints: int() of each
        [np.uint32(0x80000001), np.int64(-2)],
        (0x10, 0x20),  # not a list
    ]
    for words in cases:
        th = Thread(0)
        th.push(list(words) if isinstance(words, list) else words)
        th.push([3])
        assert th.program == _masked(list(words)) + [3]
        assert all(type(w) is int for w in th.program)
        th.set_stream(words)
        assert th.program == _masked(list(words)) and th.pc == 0


def test_semwait_latch_holds_on_the_selected_semaphores_only() -> None:
    sync = SyncUnit(SrcRegs("SrcA"), SrcRegs("SrcB"), lambda message: None)
    for mask in (0b10, 0b1010_0000, 0x1FF):
        sync.latched[0] = LatchedWait("SEMWAIT", 0x1FF, 1, mask)  # C0: Value == 0
        sync.sem.value[:] = 1
        assert not sync.latched_holds(0)
        for i in range(8):
            sync.sem.value[:] = 1
            sync.sem.value[i] = 0
            assert sync.latched_holds(0) == bool(mask >> i & 1)
            assert sync.latched_holds(0) == bool(sync.latched_unmet(0))
