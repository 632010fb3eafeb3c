"""Traced runs of type-4 packets from templates (machine.replay): the same trace text, state
and effects as the instruction-at-a-time trace, for random streams."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.afuc import Emulator
from isaforge.afuc.machine import TraceState
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header
from isaforge.core.errors import EmulationError
from tests.refdata import refdata

from .test_emu_fastpath import IB_ADDR, IB_WORDS, TYPE4, me_init_steps, words_of

OTHERS = st.sampled_from([
    [pkt7_header(0x6D, 3), 0, 0xA00E, 5],  # CP_REG_WRITE
    [pkt7_header(0x3D, 3), 0x10000, 0, 9],  # CP_MEM_WRITE
    [pkt7_header(0x3F, 3), IB_ADDR, 0, len(IB_WORDS)],  # CP_INDIRECT_BUFFER
])


def traced(words: list[int], joined: bool, max_steps: int) -> tuple:
    emu = Emulator(refdata("afuc", "firmware", "a630_sqe.fw").read_bytes())
    emu.load_memory(IB_ADDR, IB_WORDS)
    lines: list[str] = []
    tr = (TraceState(None, 0, sink=lines.extend) if joined else TraceState(lines.append, 0))
    emu.set_tracer(tr)
    emu.feed([pkt7_header(0x48, 1), 0])
    emu.feed(words)
    try:
        outcome = emu.run(max_steps=max_steps)
    except EmulationError as e:
        outcome = e.message
    tr.flush()
    p = emu.main
    return ("\n".join(lines), outcome, emu.effects_raw, emu.steps, emu.instructions,
            emu.packets, list(p.gpr), p.pc, p.header, p.waitin_pending, p.data_mode,
            bytes(emu.gpu), p.nreads, emu.roq(), dict(emu.mem))


@given(st.lists(st.one_of(st.lists(TYPE4, min_size=1, max_size=4).map(words_of), OTHERS),
                min_size=1, max_size=6),
       st.integers(1, 6), st.integers(0, 2000))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_traced_type4_runs_from_templates_equal_the_plain_trace(chunks, times, budget):
    """Each chunk repeated ``times`` times (so headers come back and run from templates),
    with the step limit anywhere."""
    words = [w for _ in range(times) for chunk in chunks for w in chunk]
    limit = me_init_steps() + budget
    assert traced(words, True, limit) == traced(words, False, limit)


def test_a630_s1_like_stream_runs_from_templates():
    words = [w for i in range(200) for w in (pkt4_header(0x8800 + (8 * i) % 0x40, 8),
                                              *range(i, i + 8))]
    fast = traced(words, True, 10_000_000)
    assert fast == traced(words, False, 10_000_000)
    emu = Emulator(refdata("afuc", "firmware", "a630_sqe.fw").read_bytes())
    tr = TraceState(None, 0, sink=lambda lines: None)
    emu.set_tracer(tr)
    emu.feed([pkt7_header(0x48, 1), 0, *words])
    emu.run()
    memo = emu.main.replay.memo
    assert len(memo) == 8 and all(v is not None for v in memo.values())


def debug_session(words_list: list[list[int]], quick: bool, monkeypatch) -> tuple:
    """Mesa's way through the debugger: each packet queued raw, then r; traced."""
    from isaforge.afuc.debug import Debugger
    from isaforge.afuc.machine import replay

    with monkeypatch.context() as mp:
        if not quick:
            mp.setattr(replay.Type4Replay, "run", lambda *args, **kw: False)
        d = Debugger(Emulator(refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()),
                     trace=True)
        out = [d.execute(c) for ws in words_list
               for c in ("raw " + " ".join(f"{w:#x}" for w in ws), "r")]
        p = d.emu.main
        return (out, d.emu.effects_raw, d.emu.steps, d.emu.instructions, d.emu.packets,
                list(p.gpr), p.pc, p.waitin_pending, bytes(d.emu.gpu))


@given(packets=st.lists(st.one_of(TYPE4.map(lambda t: words_of([t])), OTHERS), min_size=1,
                        max_size=5), times=st.integers(1, 4))
@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_debugger_runs_from_templates_print_what_it_prints_without(packets, times,
                                                                    monkeypatch):
    stream = [[pkt7_header(0x48, 1), 0], *(packets * times)]
    assert debug_session(stream, True, monkeypatch) == debug_session(stream, False,
                                                                      monkeypatch)
