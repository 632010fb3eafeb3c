"""The fast path (compiled blocks, self-looping dispatch, the bulk ``(rep)(xmovN)`` register
copy) against the exact path on a630_sqe.fw: same effects, steps, packets and registers,
also where the bulk copy must not apply (registers crossing 0xffff, CP_LPAC_SQE_CNTL, hooks,
the step limit falling inside a packet)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from isaforge.afuc import Emulator, assemble
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header
from isaforge.core.errors import EmulationError
from tests.refdata import refdata

FW = None


def a630() -> bytes:
    global FW
    if FW is None:
        FW = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    return FW


def lpac_cntl() -> int:
    return Emulator(a630()).db.gpu_reg("CP_LPAC_SQE_CNTL")


IB_ADDR = 0x200000  # where mixed streams' indirect buffers point (a few type-4 packets)
IB_WORDS = [pkt4_header(0x8810, 2), 0x11, 0x22, pkt4_header(0x8820, 1), 0x33]


def run(words: list[int], exact: bool, max_steps: int = 1_000_000,
        hook: bool = False) -> tuple[Emulator, str, list]:
    emu = Emulator(a630())
    emu.load_memory(IB_ADDR, IB_WORDS)
    seen: list = []
    if hook:
        emu.hook_add("reg_write", lambda e, reg, value, info: seen.append((reg, value)))
    emu.feed([pkt7_header(0x48, 1), 0])  # CP_ME_INIT 0
    emu.feed(words)
    try:
        outcome = emu.run(max_steps=max_steps, exact=exact)
    except EmulationError as e:  # the step limit, or a stream ending inside a packet
        outcome = e.message
    return emu, outcome, seen


def same(words: list[int], max_steps: int = 1_000_000, hook: bool = False) -> Emulator:
    (fast, fo, fs), (exact, eo, es) = (run(words, False, max_steps, hook),
                                       run(words, True, max_steps, hook))
    assert fo == eo
    assert fast.effects_raw == exact.effects_raw
    assert fs == es
    assert (fast.steps, fast.instructions, fast.packets) == (
        exact.steps, exact.instructions, exact.packets)
    assert (fast.main.gpr, fast.main.pc, fast.main.header) == (
        exact.main.gpr, exact.main.pc, exact.main.header)
    assert fast.gpu == exact.gpu
    assert fast.main.control == exact.main.control
    assert fast.main.sqe == exact.main.sqe and fast.main.pipe == exact.main.pipe
    assert fast.mem == exact.mem
    assert fast.roq() == exact.roq()
    return fast


TYPE4 = st.tuples(
    st.one_of(st.integers(0x8800, 0x88FF), st.integers(0xFF80, 0xFFFF),
              st.integers(0xB70, 0xB90)),  # ordinary, crossing 0xffff, around LPAC_CNTL
    st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=127))


def words_of(packets: list[tuple[int, list[int]]]) -> list[int]:
    out: list[int] = []
    for reg, values in packets:
        out += [pkt4_header(reg, len(values)), *values]
    return out


def me_init_steps() -> int:
    emu, outcome, _ = run([], exact=True)
    assert outcome == "idle"
    return emu.steps


@given(st.lists(TYPE4, min_size=1, max_size=6), st.integers(0, 420), st.booleans())
# the step limit right after a bulk copy of 3 or 7 registers, at the next waitin (found by
# this test: the bulk copy counted its iterations but not the waitin after them)
@example(packets=[(0x8800, [0]), (0x8800, [0] * 3), (0x8800, [0] * 7)], budget=8, hook=False)
@example(packets=[(0x8800, [0]), (0x8800, [0] * 3), (0x8800, [0] * 7)], budget=15, hook=False)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_type4_streams_fast_equals_exact(packets, budget, hook):
    """Random type-4 packets, with the step limit anywhere in the stream (each packet takes
    3 + ceil(count / 2) steps) and sometimes a register hook (which turns the inlined
    writes off)."""
    same(words_of(packets), max_steps=me_init_steps() + budget, hook=hook)


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 126, 127])
def test_bulk_copy_writes_each_register_once_in_order(count):
    values = [0x1000 + i for i in range(count)]
    emu = same(words_of([(0x8800, values), (0x8900, [7])]))
    regs = [(a, v) for k, a, v, _ in emu.effects_raw if k == "reg" and a >= 0x8800]
    assert regs == [(0x8800 + i, v) for i, v in enumerate(values)] + [(0x8900, 7)]
    assert emu.gpu_regs[0x8800:0x8800 + count].tolist() == values


def test_copy_across_0xffff_and_onto_lpac_cntl_falls_back():
    lpac = lpac_cntl()
    emu = same(words_of([(0xFFFE, [1, 2, 3, 4]), (lpac - 1, [5, 6, 7])]))
    assert (0xFFFF, 2) in [(a, v) for k, a, v, _ in emu.effects_raw if k == "reg"]
    # writing CP_LPAC_SQE_CNTL reports to @THREAD_SYNC: a control effect among the writes
    assert any(k == "ctrl" for k, *_ in emu.effects_raw[-4:])


def test_many_one_register_packets_loop_in_one_block():
    words = words_of([(0x8800 + (i & 0xFF), [i]) for i in range(3000)])
    emu = same(words)
    assert emu.packets == 3001
    assert emu.read_reg("gpu", 0x8800 + (2999 & 0xFF)) == 2999


def test_gpu_regs_is_a_numpy_view_of_the_registers():
    emu = same(words_of([(0x8801, [0x11, 0x22])]))
    view = emu.gpu_regs
    assert view.dtype == "uint32" and view.shape == (0x10000,)
    assert view[0x8801:0x8803].tolist() == [0x11, 0x22]
    view[0x8805] = 0x55
    assert emu.read_reg("gpu", 0x8805) == 0x55


# the type-3 packets real streams hit, with payloads in the ranges the firmware takes
CP_MEM_WRITE, CP_SET_DRAW_STATE, CP_INDIRECT_BUFFER, CP_REG_WRITE = 0x3D, 0x43, 0x3F, 0x6D
WORD = st.integers(0, 0xFFFFFFFF)
MEM_WRITE = st.tuples(st.just(CP_MEM_WRITE), st.tuples(
    st.integers(0, 0x4000).map(lambda a: 0x10000 + a), st.sampled_from([0, 1]),
    st.lists(WORD, min_size=1, max_size=4)).map(lambda t: [t[0], t[1], *t[2]]))
DRAW_STATE = st.tuples(st.just(CP_SET_DRAW_STATE), st.lists(st.tuples(
    st.integers(0, 0xFFFF), st.sampled_from([0, 1, 2, 4, 8, 0x10, 0x20, 0x40, 0x80, 0x3]),
    st.integers(0, 31), st.integers(0, 0xFFFF)).map(
        lambda t: [t[0] | t[1] << 16 | t[2] << 24, 0x30000 + 4 * t[3], 0]),
    min_size=1, max_size=3).map(lambda groups: [w for g in groups for w in g]))
# (an IB cut inside a packet is an error, after which only the exact path's state is exact)
INDIRECT = st.tuples(st.just(CP_INDIRECT_BUFFER), st.sampled_from([0, 3, 5]).map(
    lambda n: [IB_ADDR, 0, n]))
REG_WRITE = st.tuples(st.just(CP_REG_WRITE), st.tuples(
    st.integers(0, 7), st.one_of(st.integers(0xA000, 0xA0FF), st.integers(0xFFF0, 0x10010),
                                 st.integers(0xB70, 0xB90)), WORD).map(list))
TYPE3 = st.one_of(MEM_WRITE, DRAW_STATE, INDIRECT, REG_WRITE)


def mixed_words(packets: list) -> list[int]:
    out: list[int] = []
    for op, payload in packets:
        if op is None:  # a type-4 packet
            out += words_of([payload])
        else:
            out += [pkt7_header(op, len(payload)), *payload]
    return out


@given(st.lists(st.one_of(TYPE3, TYPE4.map(lambda t: (None, t))), min_size=1, max_size=8),
       st.integers(0, 600), st.booleans())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_mixed_streams_fast_equals_exact(packets, budget, hook):
    """CP_MEM_WRITE, CP_SET_DRAW_STATE, CP_INDIRECT_BUFFER, CP_REG_WRITE and type-4 packets
    mixed at random, the step limit anywhere, sometimes a register hook: the fast path
    gives what the exact path gives."""
    same(mixed_words(packets), max_steps=me_init_steps() + budget, hook=hook)


@pytest.mark.parametrize("op", [CP_MEM_WRITE, CP_SET_DRAW_STATE, CP_INDIRECT_BUFFER,
                                CP_REG_WRITE])
def test_each_type3_packet_runs_to_idle_with_effects(op):
    payload = {CP_MEM_WRITE: [0x10000, 0, 0xDEAD, 0xBEEF],
               CP_SET_DRAW_STATE: [0x00030004 | 1 << 24, 0x30000, 0],
               CP_INDIRECT_BUFFER: [IB_ADDR, 0, len(IB_WORDS)],
               CP_REG_WRITE: [0, 0xA00E, 0x1234]}[op]
    emu = same(mixed_words([(op, payload)] * 3))
    assert emu.packets > 3 and emu.main.waitin_pending
    if op == CP_MEM_WRITE:
        assert emu.read_mem(0x10000, 2) == [0xDEAD, 0xBEEF]
    elif op == CP_INDIRECT_BUFFER:
        assert emu.read_reg("gpu", 0x8811) == 0x22 and emu.read_reg("gpu", 0x8820) == 0x33
    elif op == CP_REG_WRITE:
        assert emu.read_reg("gpu", 0xA00E) == 0x1234


def test_a630_type4_handler_takes_runs_of_packets_at_once():
    """a630's PKT4 handler is the plain kind (ushr $usraddr, $01, 0x8; (rep)(xmov1)mov
    $data, $data; waitin; mov $01, $data): its block takes runs of type-4 packets at once."""
    emu = same(words_of([(0x8800, [1, 2])] * 3))
    p = emu.main
    src, _ = emu.codegen._block_source(p, p.jmptbl[emu.pkt4_id])
    assert "def batch_(" in src and "batch_(m, g, rb, S, L, P, H)" in src


@given(st.lists(TYPE4, min_size=1, max_size=4), st.integers(2, 40),
       st.lists(st.one_of(TYPE3, st.just(None)), max_size=3), st.integers(0, 5000),
       st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_runs_of_type4_packets_fast_equals_exact(packets, times, others, budget, hook):
    """Runs of type-4 packets (repeated, so that their headers are known and the runs are
    taken at once, across the 64-dword window and its growth), with type-3 packets between
    the runs, the step limit anywhere and sometimes a register hook (no runs then)."""
    words: list[int] = []
    for other in [None, *others]:
        if other is not None:
            words += mixed_words([other])
        words += words_of(packets * times)
    same(words, max_steps=me_init_steps() + budget, hook=hook)


def test_runs_of_type4_packets_with_the_step_limit_at_each_step():
    """The step limit at every step of a run of known type-4 packets (of 1, 2 and 5
    registers: 1 to 3 (rep) iterations each): the run stops where the exact path does."""
    run_words = words_of([(0x8800, [1]), (0x8810, [2, 3]), (0x8820, [4, 5, 6, 7, 8])] * 4)
    total = same(run_words).steps - me_init_steps()
    for budget in range(total + 1):
        same(run_words, max_steps=me_init_steps() + budget)


@given(st.lists(st.one_of(MEM_WRITE, DRAW_STATE, REG_WRITE, TYPE4.map(lambda t: (None, t))),
                min_size=1, max_size=6),
       st.integers(1, 3), st.integers(0, 800), st.booleans())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_indirect_buffers_fast_equals_exact(packets, times, budget, hook):
    """An IB of random packets (type-4, CP_MEM_WRITE, CP_SET_DRAW_STATE, CP_REG_WRITE), run
    ``times`` times by CP_INDIRECT_BUFFER packets: the fast path reads its headers and
    payloads as the exact path does, the step limit anywhere, sometimes a register hook."""
    ib = mixed_words(packets)
    emu_words = [pkt7_header(CP_INDIRECT_BUFFER, 3), 0x300000, 0, len(ib)] * times

    def go(exact: bool) -> Emulator:
        emu = Emulator(a630())
        emu.load_memory(0x300000, ib)
        if hook:
            emu.hook_add("reg_write", lambda e, reg, value, info: None)
        emu.feed([pkt7_header(0x48, 1), 0, *emu_words])
        try:
            emu.run(max_steps=me_init_steps() + budget, exact=exact)
        except EmulationError as e:
            emu.outcome = e.message
        return emu

    fast, exact = go(False), go(True)
    assert getattr(fast, "outcome", None) == getattr(exact, "outcome", None)
    assert fast.effects_raw == exact.effects_raw
    assert (fast.steps, fast.instructions, fast.packets) == (
        exact.steps, exact.instructions, exact.packets)
    assert (fast.main.gpr, fast.main.pc, fast.main.header) == (
        exact.main.gpr, exact.main.pc, exact.main.header)
    assert fast.gpu == exact.gpu and fast.mem == exact.mem
    assert fast.main.control == exact.main.control


@settings(max_examples=40, deadline=None)
@given(ctrl=st.integers(0, 0xFFF), sqe=st.integers(0, 0xFF), off=st.integers(0, 0xFF),
       base=st.integers(0, 0xFFFFFFFF), values=st.lists(st.integers(0, 0xFFFFFFFF),
                                                        min_size=4, max_size=4))
def test_cread_and_sread_read_the_register_at_their_address(ctrl, sqe, off, base, values):
    """cread/sread at a constant address ([$00 + N], read as an index known when the code is
    made) and at a register's ([$04 + N], also with the pre-increment): both paths read the
    control/SQE register the address names (the low 12/8 bits), as Mesa's emulator does."""
    src = f"""[016ee001]
cread $02, [$00 + {ctrl:#x}]
sread $03, [$00 + {sqe:#x}]
cread $05, [$04 + {off:#x}]
sread $06, [$04 + {off:#x}]
cread $07, [$08 + {off:#x}]!
waitin
nop
"""
    fw = assemble(src)
    # (a control register with side effects, as @IB_LEVEL, would change what waitin reads:
    # with no packet table, an empty IB's IN_IB_END jumps to pc 0 forever)
    special = Emulator(fw).main.ctl_special
    assume(ctrl not in special and (base + off) & 0xFFF not in special)
    got = []
    for exact in (True, False):
        emu = Emulator(fw)
        emu.write_reg("control", ctrl, values[0])
        emu.write_reg("sqe", sqe, values[1])
        emu.write_reg("control", (base + off) & 0xFFF, values[2])
        emu.write_reg("sqe", (base + off) & 0xFF, values[3])
        emu.write_gpr(4, base)
        emu.write_gpr(8, base)
        emu.run(exact=exact)
        g, c, s = emu.main.gpr, emu.main.control, emu.main.sqe
        assert g[2] == c[ctrl] and g[3] == s[sqe]
        a = (base + off) & 0xFFFFFFFF
        assert g[5] == c[a & 0xFFF] and g[6] == s[a & 0xFF] and g[7] == c[a & 0xFFF]
        assert g[8] == a  # (the pre-increment writes the address back)
        got.append((list(g), bytes(c), bytes(s), emu.steps))
    assert got[0] == got[1]
