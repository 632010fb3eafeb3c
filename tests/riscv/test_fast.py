"""The compiled path against the exact one: random programs with every extension, identical
registers, memory, pc and retired count; and the paths' boundaries (MMIO, code rewritten at
run time, step limits)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.riscv import AddressSpace, Hart, StopReason, assemble
from isaforge.riscv.machine.memory import LATCH_DEFER, LATCH_NOTE
from tests.riscv.programs import (
    ALL_OPS,
    CODE,
    DATA,
    SIZE,
    initial_state,
    make_hart,
    render,
)

_insn = st.tuples(st.sampled_from(ALL_OPS), st.integers(0, 31), st.integers(0, 31),
                  st.integers(0, 31), st.integers(0, 2**32 - 1))


def _both(code: bytes, regs: list[int], data: bytes, steps: int) -> None:
    exact, mem_e = make_hart(code, regs, data, fast=False)
    quick, mem_q = make_hart(code, regs, data, fast=True)
    assert exact.run(steps) == quick.run(steps)
    assert (exact.pc, exact.instret) == (quick.pc, quick.instret)
    assert exact.x.tolist() == quick.x.tolist()
    assert np.array_equal(mem_e, mem_q)


@settings(max_examples=150, deadline=None)
@given(prog=st.lists(_insn, min_size=1, max_size=60), seed=st.integers(0, 2**16))
def test_random_programs_same_on_both_paths(prog: list, seed: int) -> None:
    regs, data = initial_state(random.Random(seed))
    _both(assemble(render(prog), CODE), regs, data, 10_000)


@settings(max_examples=30, deadline=None)
@given(prog=st.lists(_insn, min_size=5, max_size=40), seed=st.integers(0, 2**16),
       steps=st.integers(1, 30))
def test_step_limits_stop_both_paths_at_the_same_place(prog: list, seed: int,
                                                       steps: int) -> None:
    regs, data = initial_state(random.Random(seed))
    _both(assemble(render(prog), CODE), regs, data, steps)


def test_loops_run_on_both_paths() -> None:
    """A loop with a backward branch (the random programs only branch forward)."""
    src = """
        li a0, 0
        li a1, 1000
    loop:
        sh2add a0, a1, a0
        rori a0, a0, 3
        addi a1, a1, -1
        bnez a1, loop
        ebreak
    """
    regs, data = initial_state(random.Random(1))
    _both(assemble(src, CODE), regs, data, 100_000)


def test_code_rewritten_at_run_time_is_decoded_again() -> None:
    """A program that stores a new instruction over one it already ran: both paths run the
    new one (the compiled path checks its decode cache against memory at every fetch)."""
    new = int.from_bytes(assemble("addi a0, a0, 100"), "little")
    src = f"""
        li a0, 0
        li t0, 2
        la t1, patch
    again:
    patch:
        addi a0, a0, 1
        li t2, {new:#x}
        sw t2, 0(t1)
        addi t0, t0, -1
        bnez t0, again
        ebreak
    """
    for fast in (False, True):
        h, _ = make_hart(assemble(src, CODE), [0] * 32, bytes(0x1000), fast)
        assert h.run(1000) is StopReason.EBREAK
        assert h.reg_read("a0") == 101


def test_mmio_accesses_leave_the_compiled_path_and_come_back() -> None:
    log: list[tuple[str, int, int, int]] = []
    regs = {0x100: 0x11}

    def read(a: int, s: int) -> int:
        log.append(("r", a, s, regs.get(a, 0)))
        return regs.get(a, 0)

    def write(a: int, s: int, v: int) -> None:
        log.append(("w", a, s, v))
        regs[a] = v

    src = """
        lui t0, 0xffb00
        li a1, 0
        li a2, 5
    loop:
        lw a0, 0x100(t0)
        addi a0, a0, 1
        sw a0, 0x100(t0)
        lbu a3, 0x100(t0)
        addi a1, a1, 1
        bne a1, a2, loop
        ebreak
    """
    results = []
    for fast in (False, True):
        log.clear()
        regs.clear()
        regs[0xFFB00100] = 0x11
        mem = np.zeros(0x2000, np.uint8)
        code = assemble(src, CODE)
        mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
        space = AddressSpace()
        space.map_ram(0, mem)
        space.map_mmio(0xFFB00000, 0x1000, read, write)
        h = Hart("m", space, CODE)
        h.fast = fast
        assert h.run(1000) is StopReason.EBREAK
        results.append((list(log), h.x.tolist(), h.instret))
    assert results[0] == results[1]
    assert results[0][1][10] == 0x16 and len(results[0][0]) == 15


def test_a_shared_ram_array_is_seen_by_every_hart() -> None:
    """Two harts over one L1 array: each sees what the other stored."""
    l1 = np.zeros(0x4000, np.uint8)
    code = assemble("li a0, 7\nsw a0, 0x100(zero)\nebreak\n", CODE)
    l1[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    code2 = assemble("lw a0, 0x100(zero)\nebreak\n", 0x2000)
    l1[0x2000:0x2000 + len(code2)] = np.frombuffer(code2, np.uint8)
    harts = []
    for name, pc in (("b", CODE), ("nc", 0x2000)):
        space = AddressSpace(name)
        space.map_ram(0, l1)
        space.map_ram(0xFFB00000, np.zeros(0x1000, np.uint8))  # each its own local memory
        harts.append(Hart(name, space, pc))
    assert harts[0].run(10) is StopReason.EBREAK
    assert harts[1].run(10) is StopReason.EBREAK
    assert harts[1].reg_read("a0") == 7


def test_more_ram_windows_than_the_kernel_takes() -> None:
    """Windows past the kernel's MAX_RAMS still work (through the exact path)."""
    from isaforge.riscv.machine import fast

    space = AddressSpace("many")
    arrays = [np.zeros(0x1000, np.uint8) for _ in range(fast.MAX_RAMS + 2)]
    for i, arr in enumerate(arrays):
        space.map_ram(0x10000 * i, arr)
    last = 0x10000 * (len(arrays) - 1)
    code = assemble(f"li a0, 5\nli t0, {last + 0x800}\nsw a0, 0(t0)\nlw a1, 0(t0)\nebreak\n",
                    last)
    arrays[-1][:len(code)] = np.frombuffer(code, np.uint8)
    h = Hart("many", space, last)
    assert h.run(100) is StopReason.EBREAK
    assert h.reg_read("a1") == 5 and arrays[-1][0x800] == 5


def test_a_hook_added_during_a_run_takes_effect_at_once() -> None:
    seen: list[int] = []
    space = AddressSpace()
    mem = np.zeros(0x2000, np.uint8)
    code = assemble("lui t0, 0xffe40\nsw zero, 0(t0)\nnop\nnop\nebreak\n", CODE)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    space.map_ram(0, mem)
    h = Hart("h", space, CODE)

    def write(a: int, s: int, v: int) -> None:
        h.hook_add("insn", lambda hart, pc, size, word: seen.append(pc))

    space.map_mmio(0xFFE40000, 0x100, None, write)
    assert h.run(100) is StopReason.EBREAK
    assert seen == [CODE + 8, CODE + 12, CODE + 16]


def test_batched_ttinsn_words_reach_on_custom_in_order_as_on_the_exact_path() -> None:
    """With ``batch_custom`` the compiled path keeps ``.ttinsn`` words and the words stored
    to ``custom_store`` (more than its buffer holds here) and hands them over when it
    returns; ``on_custom`` hears the same words in the same order as the exact path's
    ``.ttinsn`` and MMIO store, and the registers, pc and count are the same. An MMIO read
    between pushes sees every earlier push already delivered."""
    src = """
        li a1, 300
    loop:
        .ttinsn 0x02000001
        .ttinsn 0x00fedcba
        sw a1, 0x7f0(t0)
        addi a1, a1, -1
        andi a2, a1, 255
        bnez a2, skip
        lw a3, 0x100(t0)
    skip:
        bnez a1, loop
        ebreak
    """
    results = []
    for fast, batch in ((False, False), (True, False), (True, True)):
        got: list[tuple[str, int]] = []

        def custom(hart: Hart, word: int, got: list = got) -> None:
            got.append(("push", word))

        def read(addr: int, size: int, got: list = got) -> int:
            got.append(("read", addr))
            return len(got)

        mem = np.zeros(0x2000, np.uint8)
        code = assemble(src, CODE)
        mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
        space = AddressSpace()
        space.map_ram(0, mem)
        def write(addr: int, size: int, value: int, got: list = got) -> None:
            assert (addr, size) == (0xFFB007F0, 4)
            got.append(("push", value))  # this store means a .ttinsn of the value

        space.map_mmio(0xFFB00000, 0x1000, read, write)
        h = Hart("t", space, CODE)
        h.x[5] = 0xFFB00000
        h.on_custom, h.batch_custom, h.fast = custom, batch, fast
        h.custom_store = 0xFFB007F0
        assert h.run(10_000) is StopReason.EBREAK
        results.append((got, h.x.tolist(), h.pc, h.instret))
        if batch:  # the words went through the kernel's buffer
            assert h.__dict__["_push_buffer"].size > 1
    assert results[0] == results[1] == results[2]
    assert sum(1 for k, _ in results[0][0] if k == "push") == 900


# -- latches: MMIO registers the compiled path stores and loads itself ---------------------------

#: the MMIO window over the middle of the random programs' data (s0 +-0x400), backed by bytes the
#: window reads and writes; store latches and load latches are word ranges of those bytes
_WIN, _WIN_SIZE = DATA - 0x400, 0x800
_STORE_LATCHES = [(_WIN, 0x100, 0), (_WIN + 0x500, 0x80, 0x140)]
_LOAD_LATCHES = [(_WIN + 0x80, 0x100, 0x20), (_WIN + 0x600, 0x40, 0x180)]

#: a loop polling a latch register until it reads nonzero (it looks idle: the compiled path
#: leaves its load to the hart)
_IDLE_POLL = f"""
        li t0, {_WIN + 0x80}
        sw zero, 4(t0)
    loop:
        lw a0, 4(t0)
        beqz a0, loop
        ebreak
    """


def _latched_hart(code: bytes, regs: list[int], data: bytes, fast: bool
                  ) -> tuple[Hart, np.ndarray, np.ndarray, list[tuple]]:
    """A hart over RAM with the window (see above) in it; the events the window sees (and,
    on the compiled path, the loads it logs) as (kind, pc, address, size, value, regs)."""
    mem = np.zeros(SIZE, np.uint8)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    mem[DATA - 0x800:DATA + 0x800] = np.frombuffer(data, np.uint8)
    back = mem[_WIN:_WIN + _WIN_SIZE].copy()
    words = back.view(np.uint32)
    events: list[tuple] = []
    space = AddressSpace("latched")
    space.map_ram(0, mem[:_WIN])
    space.map_ram(_WIN + _WIN_SIZE, mem[_WIN + _WIN_SIZE:])
    h = Hart("latched", space, CODE)

    def read(a: int, s: int) -> int:
        v = int.from_bytes(back[a - _WIN:a - _WIN + s].tobytes(), "little")
        events.append(("r", h.pc, a, s, v, h.x.tolist()))
        return v

    def write(a: int, s: int, v: int) -> None:
        events.append(("w", h.pc, a, s, v))
        back[a - _WIN:a - _WIN + s] = np.frombuffer(v.to_bytes(s, "little"), np.uint8)

    def loads(hart: Hart, rows: np.ndarray) -> None:
        for pc, a, v, _made, *x in rows.tolist():
            events.append(("r", pc, a, 4, v, x))

    space.map_mmio(_WIN, _WIN_SIZE, read, write)
    space.map_latches(words, _STORE_LATCHES, _LOAD_LATCHES)
    h.on_loads = loads
    h.fast = fast
    for i, v in enumerate(regs):
        h.reg_write(i, v)
    return h, mem, back, events


def _in_store_latch(addr: int, size: int) -> bool:
    return size == 4 and not addr & 3 and any(b <= addr < b + n for b, n, _ in _STORE_LATCHES)


def _same_run(exact: Hart, quick: Hart, mems_e: tuple[np.ndarray, ...],
              mems_q: tuple[np.ndarray, ...], steps: int) -> None:
    """Run both harts ``steps``: the same stop, pc, count, registers and memories."""
    assert exact.run(steps) == quick.run(steps)
    assert (exact.pc, exact.instret) == (quick.pc, quick.instret)
    assert exact.x.tolist() == quick.x.tolist()
    assert all(np.array_equal(e, q) for e, q in zip(mems_e, mems_q, strict=True))


def _store_load_programs(rng: random.Random, count: int = 40
                         ) -> Iterator[tuple[bytes, list[int], bytes]]:
    """``count`` random programs of 40 stores, loads and adds (code, registers, data)."""
    for _ in range(count):
        prog = [(rng.choice(["sw", "lw", "addi"]), rng.randrange(32), rng.randrange(32),
                 rng.randrange(32), rng.getrandbits(32)) for _ in range(40)]
        regs, data = initial_state(rng)
        yield assemble(render(prog), CODE), regs, data


def _both_latched(code: bytes, regs: list[int], data: bytes, steps: int) -> list[tuple]:
    exact, mem_e, back_e, ev_e = _latched_hart(code, regs, data, fast=False)
    quick, mem_q, back_q, ev_q = _latched_hart(code, regs, data, fast=True)
    _same_run(exact, quick, (mem_e, back_e), (mem_q, back_q), steps)
    # what the window saw, less the stores the compiled path made to store latches itself
    # (counted instead); its loads from load latches are heard, in order, through on_loads
    latched = [e for e in ev_e if e[0] == "w" and _in_store_latch(e[2], e[3])]
    assert [e for e in ev_e if e not in latched] == [e for e in ev_q if e[0] == "r" or not
                                                     _in_store_latch(e[2], e[3])]
    assert exact.latched == 0 and quick.latched == len(latched)
    return ev_e


@settings(max_examples=150, deadline=None)
@given(prog=st.lists(_insn, min_size=1, max_size=60), seed=st.integers(0, 2**16))
def test_random_programs_through_latches_same_on_both_paths(prog: list, seed: int) -> None:
    regs, data = initial_state(random.Random(seed))
    _both_latched(assemble(render(prog), CODE), regs, data, 10_000)


def test_random_programs_do_use_the_latches() -> None:
    """The programs above reach both kinds of latch (else they would test nothing)."""
    rng = random.Random(7)
    stores = loads = 0
    for code, regs, data in _store_load_programs(rng):
        quick, _, _, events = _latched_hart(code, regs, data, fast=True)
        quick.run(10_000)
        stores += quick.latched
        loads += sum(1 for e in events if e[0] == "r" and any(
            b <= e[2] < b + n for b, n, _ in _LOAD_LATCHES))
        _both_latched(code, regs, data, 10_000)
    assert stores > 10 and loads > 10


def test_a_load_latch_loop_leaves_when_it_may_be_idle() -> None:
    """Loads of a load latch in a loop are logged while something changes between them (a
    register, the value, a store to a latch); once one repeats the last load at its pc
    exactly (the loop may be idle: here the third), it goes through the window; the window
    hears all of them in order either way (see _both_latched)."""
    busy = f"""
        li t0, {_WIN + 0x80}
        li a1, 5
    loop:
        lw a0, 4(t0)
        addi a1, a1, -1
        bnez a1, loop
        ebreak
    """
    idle = _IDLE_POLL
    regs, data = initial_state(random.Random(3))
    for src, steps, logged in ((busy, 1000, 5), (idle, 100, 2)):
        events = _both_latched(assemble(src, CODE), regs, data, steps)
        quick, _, _, _ = _latched_hart(assemble(src, CODE), regs, data, fast=True)
        rows: list[list[int]] = []
        quick.on_loads = lambda hart, got, rows=rows: rows.extend(got.tolist())
        quick.run(steps)
        assert len(rows) == logged and sum(1 for e in events if e[0] == "r") >= logged


def test_latches_need_an_mmio_window() -> None:
    from isaforge.riscv import MapError

    space = AddressSpace()
    space.map_ram(0, np.zeros(0x1000, np.uint8))
    with pytest.raises(MapError):
        space.map_latches(np.zeros(4, np.uint32), [(0x100, 8, 0)])


# -- noted and deferred stores: the compiled path logs them for the owner ------------------------

#: inside the window above, apart from its store and load latches: a note range (kept in the
#: window's bytes by the compiled path, heard through on_store) and two deferred ranges (made by
#: on_store when the compiled path returns)
_NOTES = [(_WIN + 0x200, 0x80, 0x80)]
_DEFERS = [(_WIN + 0x300, 0x40), (_WIN + 0x700, 0x40)]
#: a fresh load latch over the first deferred range: the window's bytes, read by the compiled
#: path while no deferred store waits (a waiting one is not in them yet)
_FRESH = [(_WIN + 0x300, 0x40, 0x300 // 4)]


def _logged_hart(code: bytes, regs: list[int], data: bytes, fast: bool
                 ) -> tuple[Hart, np.ndarray, np.ndarray, list[tuple]]:
    """:func:`_latched_hart` with note and deferred ranges too; a window write is an event
    (w, address, size, value) however it is made (its pc is the only thing a deferred store
    cannot give)."""
    h, mem, back, events = _latched_hart(code, regs, data, fast)
    space = h.space
    m = space.mmio_at(_WIN, 4)
    write = m.write

    def logged_write(a: int, s: int, v: int) -> None:
        write(a, s, v)
        events[-1] = events[-1][:1] + events[-1][2:]  # (no pc)

    m.write = logged_write

    def on_store(hart: Hart, a: int, v: int, kind: int) -> None:
        assert kind in (LATCH_NOTE, LATCH_DEFER) and hart is h
        if kind == LATCH_NOTE:  # stored already: only heard
            events.append(("w", a, 4, v))
        else:
            logged_write(a, 4, v)

    space.map_latches(back.view(np.uint32), _STORE_LATCHES, _LOAD_LATCHES, _NOTES, _DEFERS,
                      _FRESH)
    h.on_store = on_store
    return h, mem, back, events


def _logged_store(addr: int, size: int) -> bool:
    return size == 4 and not addr & 3 and any(
        b <= addr < b + n for b, n, *_ in _NOTES + _DEFERS)


def _both_logged(code: bytes, regs: list[int], data: bytes, steps: int) -> int:
    """Both paths agree (state, memory, the window's reads in order and its writes in order);
    the stores the compiled path logged."""
    exact, mem_e, back_e, ev_e = _logged_hart(code, regs, data, fast=False)
    quick, mem_q, back_q, ev_q = _logged_hart(code, regs, data, fast=True)
    heard = []
    seen = quick.on_store
    quick.on_store = lambda *a: (heard.append(a[1]), seen(*a))  # type: ignore[misc]
    _same_run(exact, quick, (mem_e, back_e), (mem_q, back_q), steps)
    # reads in order (those from load latches come first when the compiled path returns),
    # and writes and pushes in order
    assert [e for e in ev_e if e[0] == "r"] == [e for e in ev_q if e[0] == "r"]
    assert [e for e in ev_e if e[0] == "w" and not _in_store_latch(e[1], e[2])] == \
        [e for e in ev_q if e[0] == "w" and not _in_store_latch(e[1], e[2])]
    assert all(_logged_store(a, 4) for a in heard)
    assert quick.latched == sum(1 for e in ev_e if e[0] == "w" and _in_store_latch(e[1], e[2])) \
        + sum(1 for a in heard if any(b <= a < b + n for b, n, _ in _NOTES))
    return len(heard)


@settings(max_examples=150, deadline=None)
@given(prog=st.lists(_insn, min_size=1, max_size=60), seed=st.integers(0, 2**16))
def test_random_programs_through_logged_stores_same_on_both_paths(prog: list, seed: int) -> None:
    regs, data = initial_state(random.Random(seed))
    _both_logged(assemble(render(prog), CODE), regs, data, 10_000)


def test_random_programs_do_log_stores() -> None:
    """Programs of stores and loads reach the note and deferred ranges and the fresh latch
    (else the test above would test nothing)."""
    rng = random.Random(11)
    logged = fresh = 0
    for code, regs, data in _store_load_programs(rng):
        logged += _both_logged(code, regs, data, 10_000)
        quick, _, _, _ = _logged_hart(code, regs, data, fast=True)
        rows: list[list[int]] = []
        quick.on_loads = lambda hart, got, rows=rows: rows.extend(got.tolist())
        quick.run(10_000)
        fresh += sum(1 for r in rows if any(b <= r[1] < b + n for b, n, _ in _FRESH))
    assert logged > 10 and fresh > 3


def test_a_fresh_latch_load_waits_for_the_deferred_stores() -> None:
    """A load of a fresh latch after a deferred store to it in the same run goes through the
    window (after the store is made): it reads the stored value on both paths."""
    src = f"""
        li t0, {_WIN + 0x300}
        lw a1, 4(t0)
        li a0, 77
        sw a0, 4(t0)
        lw a2, 4(t0)
        ebreak
    """
    for fast in (False, True):
        h, _, _, events = _logged_hart(assemble(src, CODE), [0] * 32, bytes(0x1000), fast)
        logged: list = []
        seen = h.on_loads
        h.on_loads = lambda hart, rows, logged=logged, seen=seen: (
            logged.extend(rows.tolist()), seen(hart, rows))
        assert h.run(100) is StopReason.EBREAK
        assert h.reg_read("a2") == 77 and h.reg_read("a1") == 0
        assert [e[0] for e in events if e[0] in "rw"] == ["r", "w", "r"]
        assert len(logged) == (1 if fast else 0)  # the first load only


def test_deferred_stores_and_kept_words_reach_the_owner_in_program_order() -> None:
    src = f"""
        li t0, {_WIN + 0x300}
        li t1, {_WIN + 0x200}
        li a0, 1
        .ttinsn 0x1000001
        sw a0, 0(t0)
        .ttinsn 0x1000002
        .ttinsn 0x1000003
        sw a0, 4(t1)
        sw a0, 8(t0)
        .ttinsn 0x1000004
        ebreak
    """
    order = []
    for fast in (False, True):
        h, _, _, events = _logged_hart(assemble(src, CODE), [0] * 32, bytes(0x1000), fast)
        h.on_custom = lambda hart, w, events=events: events.append(("push", w))
        h.batch_custom = True
        assert h.run(100) is StopReason.EBREAK
        order.append(events)
    w = _WIN
    assert order[0] == order[1] == [
        ("push", 0x1000001), ("w", w + 0x300, 4, 1), ("push", 0x1000002), ("push", 0x1000003),
        ("w", w + 0x204, 4, 1), ("w", w + 0x308, 4, 1), ("push", 0x1000004)]


def test_a_load_latch_load_left_to_the_hart_reaches_on_latch_load() -> None:
    """The load an idle-looking loop leaves to the hart is made with the latch's word and
    heard through on_latch_load (the window's read is not called): registers, pc and what
    the owner hears (window reads, logged loads, these loads) as on the exact path."""
    src = _IDLE_POLL
    regs, data = initial_state(random.Random(3))
    code = assemble(src, CODE)
    exact, _, _, ev_e = _latched_hart(code, regs, data, fast=False)
    quick, _, _, ev_q = _latched_hart(code, regs, data, fast=True)
    heard: list = []

    def latch_load(hart: Hart, addr: int, value: int) -> None:
        heard.append(addr)
        ev_q.append(("r", hart.pc, addr, 4, value, hart.x.tolist()))

    quick.on_latch_load = latch_load
    assert exact.run(100) == quick.run(100)
    assert (exact.pc, exact.instret, exact.x.tolist()) == (quick.pc, quick.instret,
                                                          quick.x.tolist())
    # (the sw is a store latch's: only the exact path's window sees it)
    assert [e for e in ev_e if e[0] == "r"] == ev_q and [e[0] for e in ev_e] == ["w"] + [
        "r"] * len(ev_q)
    assert heard == [_WIN + 0x84] * len(heard) and heard


def test_assigning_an_input_of_the_prepared_call_takes_effect_at_the_next_run(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled path keeps its prepared kernel call while nothing it depends on
    changes: a new register array and ``.ttinsn`` batching switched on are used by the
    next run exactly as a fresh hart would."""
    from isaforge.riscv.machine import fast

    src = """
    loop:
        .ttinsn 0x02000001
        addi a1, a1, 1
        sw a1, 0(t0)
        bne a1, a2, loop
        ebreak
    """
    mem = np.zeros(0x2000, np.uint8)
    code = assemble(src, CODE)
    mem[CODE:CODE + len(code)] = np.frombuffer(code, np.uint8)
    space = AddressSpace()
    space.map_ram(0, mem)
    h = Hart("m", space, CODE)
    h.fast = True
    got: list[int] = []
    h.on_custom = lambda hart, word: got.append(word)
    h.x[5], h.x[12] = 0x1800, 3  # t0, a2
    assert h.run(1000) is StopReason.EBREAK and h.x[11] == 3 and len(got) == 3
    assert h._fast_call is not None
    # a new register array: the kernel runs on it
    x = np.zeros(32, np.uint32)
    x[5], x[11], x[12] = 0x1800, 10, 13
    h.x = x
    h.pc = CODE
    exits = [0]
    run = fast.run

    def counted(hart: Hart, n: int) -> tuple[int, int]:
        exits[0] += 1
        return run(hart, n)

    monkeypatch.setattr(fast, "run", counted)
    assert h.run(1000) is StopReason.EBREAK
    assert x[11] == 13 and int(np.frombuffer(mem[0x1800:0x1804], np.uint32)[0]) == 13
    without = exits[0]
    h.batch_custom = True  # kept words: fewer exits, the same words
    x[11], h.pc = 0, CODE
    exits[0] = 0
    assert h.run(1000) is StopReason.EBREAK and x[11] == 13
    assert exits[0] < without and got == [0x02000001] * 19
