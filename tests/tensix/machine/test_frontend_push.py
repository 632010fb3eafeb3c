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


def _expanded(thread: Thread, words: list[int]) -> list[int]:
    """Thread.fill's output for ``words`` (each refill taken at once)."""
    thread.push(words)
    out: list[int] = []
    while thread.fill(lambda *a: None):
        out += thread.pending
        thread.pending.clear()
    return out


def _reference(words: list[int], cfg: list[int]) -> list[int]:
    """The MOP then replay expander word by word (no shortcut)."""
    th = Thread(0)
    th.mop.cfg[:] = cfg
    out: list[int] = []
    for word in words:
        for w in th.mop.feed(word):
            out += th.replay.feed(w, lambda message: None)
    return out


def test_fill_passes_mop_expansions_like_the_replay_expander() -> None:
    nop, w = 0x02000000, [0x10000000 | i for i in range(8)]  # (DMANOP-like plain words)
    replay_load = (0x04 << 24) | (4 << 4) | 1  # REPLAY start 0, len 4, load
    replay_run = (0x04 << 24) | (4 << 4)  # REPLAY start 0, len 4, execute
    mop = 0x01 << 24 | 3 << 16  # template 0, count1 3: 4 iterations
    cfgs = [
        [0, 3, w[1], w[2], w[3], w[4], w[5], w[6], w[7]],  # no REPLAY in the expansion
        [0, 3, w[1], replay_run, w[3], w[4], w[5], w[6], w[7]],  # a REPLAY among them
        [3, 1, nop, nop, nop, replay_run, nop, replay_run, replay_run],
    ]
    streams = [
        [mop, mop],
        [replay_load, w[0], w[1], w[2], w[3], mop],  # a MOP while nothing loads
        [replay_load, mop, w[5], replay_run, mop],  # a MOP's words loaded into the buffer
    ]
    for cfg in cfgs:
        for words in streams:
            for _ in range(2):  # (the second time from the expanders' caches)
                th = Thread(0)
                th.mop.cfg[:] = cfg
                assert _expanded(th, words) == _reference(words, cfg)
