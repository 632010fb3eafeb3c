"""Coprocessor._sfp_loops finds the same SFP words with its memo of earlier runs
(``_sfp_seen``) as by scanning word by word, whatever the memo holds."""

from __future__ import annotations

from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.program import parse_program


def _words(text: str) -> list[int]:
    return list(parse_program(text).streams[0])


def _scan(cp: Coprocessor, stream: list[int], pc: int, limit: int) -> tuple[int, ...]:
    th = cp.threads[0]
    th.set_stream(stream)
    th.pc = pc + 1
    th.pending.append(stream[pc])  # (the run's first word, pending)
    words, _ = cp._sfp_loops(th, limit)
    th.pending.clear()
    return words


def test_sfp_scan_with_a_memo_is_the_plain_scan() -> None:
    a = _words("\n".join(f"TTI_SFPMAD({i % 4}, 1, 2, {i % 8}, 0)" for i in range(40)))
    b = _words("\n".join(f"TTI_SFPMAD({i % 4}, 2, 1, {i % 8}, 0)" for i in range(30)))
    stop = _words("ttincrwc 0,1,0,0")
    stream = a + stop + a[:20] + stop + a + b + stop + b + a
    starts = [0, len(a) + 1, len(a) + 22, 2 * len(a) + 22 + len(b) + 1]
    for limit in (8, 25, 41, 1000):
        warm = Coprocessor()
        for _ in range(2):  # the second time from the memo
            for pc in starts:
                assert _scan(warm, stream, pc, limit) == _scan(Coprocessor(), stream, pc, limit)
    wrong = Coprocessor()
    wrong._sfp_seen[a[1]] = a[1:] + b  # longer than the run, then other words
    assert _scan(wrong, stream, 0, 1000) == _scan(Coprocessor(), stream, 0, 1000)
    assert len(_scan(Coprocessor(), stream, 0, 1000)) == len(a)
