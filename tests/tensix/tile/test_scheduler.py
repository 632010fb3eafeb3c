"""Scheduling the cores and the Tensix threads: parking on polled memory, waking on writes,
stalls, the wall clock, deadlock reports, step limits and determinism, on small RISC-V
programs."""

from __future__ import annotations

import pytest

from isaforge import riscv, tensix
from isaforge.tensix.tile import Host, Tile, TileDeadlock, TileError, TileStepLimit
from isaforge.tensix.tile.loader import Symbols
from isaforge.tensix.tile.memmap import memory_map

MM = memory_map()
T = MM.tensix
CODE = {"brisc": 0x20000, "ncrisc": 0x21000, "trisc0": 0x22000, "trisc1": 0x23000,
        "trisc2": 0x24000}


def start(tile: Tile, core: str, text: str, base: int | None = None, **regs: int) -> None:
    """Assemble ``text`` at ``base`` (the core's code address by default), name its labels,
    and start the core with ``regs`` set."""
    base = CODE[core] if base is None else base
    code = riscv.assemble(text, address=base)
    tile.l1.write(base, code)
    tile.symbols[core] = Symbols([(base, len(code), f"{core}_test")])
    c = tile.cores[core]
    c.leave_reset(base)
    for name, value in regs.items():
        c.hart.reg_write(name, value)


def mailbox(tile: Tile, path: str) -> int:
    return tile.msgs.addr(path)


#: a core spinning on a byte at a0 until it is set, then copying it to a1 (other tile tests
#: poll with it too)
POLL = """
loop:
    lbu t0, 0(a0)
    beqz t0, loop
    sw t0, 0(a1)
    ebreak
"""


def test_a_polling_core_parks_and_a_write_wakes_it() -> None:
    tile = Tile()
    sig = mailbox(tile, "go_messages[0].signal")
    start(tile, "ncrisc", POLL, a0=sig, a1=0x30000)
    r = tile.run(max_steps=100_000)
    nc = tile.cores["ncrisc"]
    assert r.reason == "idle" and nc.state == "parked"
    assert "mailboxes.go_messages[0].signal" in nc.wait.reason
    assert nc.instructions < 20  # parked after the loop came round once, not spinning
    Host(tile).write_mailbox("go_messages[0].signal", 0x80)
    assert nc.state == "running"
    tile.run(max_steps=100_000)
    assert nc.state == "halted" and tile.l1.read_int(0x30000, 4) == 0x80


def test_another_core_writing_wakes_the_poller_deterministically() -> None:
    def once() -> tuple[int, int, int]:
        tile = Tile()
        sig = mailbox(tile, "subordinate_sync.map[1]")
        start(tile, "trisc0", POLL, a0=sig, a1=0x30000)
        start(tile, "brisc", """
            li t1, 300
        delay:
            addi t1, t1, -1
            bnez t1, delay
            li t0, 7
            sb t0, 0(a0)
            ebreak
        """, a0=sig)
        tile.run(max_steps=100_000)
        assert tile.cores["trisc0"].state == "halted"
        assert tile.l1.read_int(0x30000, 4) == 7
        return (tile.cores["trisc0"].instructions, tile.cores["brisc"].instructions,
                tile.scheduler.cycles)
    assert once() == once()


def test_deadlock_names_each_core_pc_symbol_and_wait() -> None:
    tile = Tile()
    start(tile, "trisc1", POLL, a0=mailbox(tile, "go_messages[0].signal"), a1=0x30000)
    with pytest.raises(TileDeadlock) as e:
        tile.run(max_steps=100_000, until=lambda: False)
    waits = e.value.waits
    assert waits["brisc"] == "held in reset"
    # stopped after the load that saw nothing change: the branch back is next
    assert waits["trisc1"].startswith(f"pc {CODE['trisc1'] + 4:#x} <trisc1_test+0x4>")
    assert "polling mailboxes.go_messages[0].signal (read 0x0)" in waits["trisc1"]
    assert "trisc1" in str(e.value) and "\n" not in str(e.value)


def test_step_limit() -> None:
    tile = Tile()
    start(tile, "brisc", "spin:\n    addi t0, t0, 1\n    j spin\n")
    with pytest.raises(TileStepLimit, match="within 5000 RISC-V instructions"):
        tile.run(max_steps=5000)
    assert 5000 <= tile.cores["brisc"].instructions <= 5001


def test_waiting_on_the_wall_clock_is_not_parking() -> None:
    tile = Tile()
    start(tile, "trisc2", """
        lw t1, 0(a0)
        addi t1, t1, 600
    wait:
        lw t2, 0(a0)
        bltu t2, t1, wait
        ebreak
    """, a0=T("RISCV_DEBUG_REG_WALL_CLOCK_L"))
    tile.run(max_steps=100_000)
    core = tile.cores["trisc2"]
    assert core.state == "halted"
    assert 600 <= tile.scheduler.cycles and core.instructions >= 600 // 3


def test_a_stalled_read_completes_when_the_mailbox_is_written() -> None:
    tile = Tile()
    step = T("TENSIX_MAILBOX1_BASE") - T("TENSIX_MAILBOX0_BASE")
    # TRISC2 reads the mailbox from BRISC (window 0); BRISC writes to TRISC2 (window 3)
    start(tile, "trisc2", "lw t0, 0(a0)\nsw t0, 0(a1)\nebreak\n",
          a0=T("TENSIX_MAILBOX0_BASE"), a1=0x30000)
    tile.run(max_steps=1000)
    t2 = tile.cores["trisc2"]
    assert t2.state == "stalled" and "empty" in t2.wait.reason and t2.hart.pc == CODE["trisc2"]
    start(tile, "brisc", "li t0, 0x1234\nsw t0, 0(a0)\nebreak\n",
          a0=T("TENSIX_MAILBOX0_BASE") + 3 * step)
    tile.run(max_steps=1000)
    assert t2.state == "halted" and tile.l1.read_int(0x30000, 4) == 0x1234


def test_ttsync_waits_for_the_coprocessor_and_semaphores_wake_pollers() -> None:
    tile = Tile()
    seminit = tensix.assemble("TTI_SEMINIT(1, 0, 1)")[0]  # semaphore 0: value 0, max 1
    sempost = tensix.assemble("TTI_SEMPOST(1)")[0]
    sem0 = T("PC_BUF_BASE") + 4 * MM.llk("PC_BUF_SEMAPHORE_BASE_WORD")
    sync = T("PC_BUF_BASE") + 4 * MM.llk("PC_BUF_TENSIX_SYNC_WORD")
    # TRISC1 polls semaphore 0 (coprocessor state); TRISC0 pushes SEMINIT, SEMPOST and
    # then waits for its thread with TTSync
    start(tile, "trisc1", "poll:\n    lw t0, 0(a0)\n    beqz t0, poll\n    ebreak\n", a0=sem0)
    start(tile, "trisc0", f"""
        li t0, {seminit:#x}
        sw t0, 0(a0)
        li t0, {sempost:#x}
        sw t0, 0(a0)
        sw zero, 0(a1)
        lw t1, 0(a1)
        ebreak
    """, a0=T("INSTRN_BUF_BASE"), a1=sync)
    tile.run(max_steps=10_000)
    assert tile.cores["trisc0"].state == "halted" and tile.cores["trisc1"].state == "halted"
    assert int(tile.cp.semaphores.value[0]) == 1 and tile.tensix_idle(0)


def test_brisc_releases_a_trisc_through_soft_reset() -> None:
    tile = Tile()
    # its registers are zero when it leaves reset: the program sets what it uses
    start(tile, "trisc0", "li a0, 0x30000\nli t0, 5\nsw t0, 0(a0)\nebreak\n")
    tile.cores["trisc0"].enter_reset()
    reg = T("RISCV_DEBUG_REG_SOFT_RESET_0")
    start(tile, "brisc", f"""
        li t0, {CODE['trisc0']:#x}
        sw t0, 0(a1)
        li t0, 1
        sw t0, 0(a2)
        lw t0, 0(a0)
        li t1, {~MM.core('trisc0').reset_bit & 0xFFFFFFFF:#x}
        and t0, t0, t1
        sw t0, 0(a0)
        ebreak
    """, a0=reg, a1=T("RISCV_DEBUG_REG_TRISC0_RESET_PC"),
          a2=T("RISCV_DEBUG_REG_TRISC_RESET_PC_OVERRIDE"))
    tile.run(max_steps=1000)
    assert tile.cores["trisc0"].state == "halted" and tile.l1.read_int(0x30000, 4) == 5


def test_an_unmapped_address_names_core_pc_instruction_and_address() -> None:
    tile = Tile()
    start(tile, "brisc", "nop\nlw t0, 0(a0)\nebreak\n", a0=0xFFB13000)  # the PIC: no window
    with pytest.raises(TileError) as e:
        tile.run(max_steps=100)
    msg = str(e.value)
    assert "brisc" in msg and f"{CODE['brisc'] + 4:#x}" in msg and "lw t0,0(a0)" in msg
    assert "0xffb13000" in msg and "<brisc_test+0x4>" in msg and "\n" not in msg


def test_an_unmodelled_register_names_core_pc_instruction_and_address() -> None:
    tile = Tile()
    addr = T("RISCV_DEBUG_REG_ECC_CTRL")
    start(tile, "ncrisc", "sw zero, 0(a0)\nebreak\n", a0=addr)
    with pytest.raises(TileError) as e:
        tile.run(max_steps=100)
    msg = str(e.value)
    assert msg.startswith(f"error: ncrisc pc {CODE['ncrisc']:#x} <ncrisc_test>: sw zero,0(a0): "
                          f"write of {addr:#010x}: tile control/debug registers: register at "
                          f"offset {addr - T('RISCV_DEBUG_REGS_START_ADDR'):#x} is not modelled")


@pytest.mark.parametrize("span", [True, False])
def test_a_write_wakes_exactly_the_parked_cores_whose_watch_it_overlaps(
        span: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scheduler.wrote (it inlines Core.watches; with ``watch_span`` it looks at the
    tile's Watchers) against Core.watches itself: random watch lists (empty and zero-sized
    ranges too), states and waits (assigned directly, then Watchers.sync; or through
    Core.park), and writes; the writer itself and cores not parked are never woken."""
    import random

    from isaforge.tensix.tile.core import PARKED, RUNNING, STALLED, Wait
    from isaforge.tensix.tile.scheduler import Scheduler

    monkeypatch.setattr(Scheduler, "watch_span", span)
    rng = random.Random(5)
    tile = Tile()
    cores = list(tile.cores.values())
    woken = 0
    for _ in range(300):
        for c in cores:
            state = rng.choice([PARKED, PARKED, RUNNING, STALLED])
            wait = None if rng.random() < 0.1 else Wait("test", [
                (rng.randrange(0, 64), rng.choice([0, 1, 2, 4]))
                for _ in range(rng.randrange(4))])
            if state == PARKED and wait is not None and rng.random() < 0.5:
                c.park(wait)
            else:
                c.state, c.wait = state, wait
                tile.watchers.sync()
        w = tile.watchers  # the parked cores
        assert {c.name for c in w.parked} == {c.name for c in cores if c.state == PARKED
                                               and c.wait is not None and c.wait.watch}
        assert len(w.parked) == len({c.name for c in w.parked})
        if w.parked:
            assert (w.lo, w.hi) == (min(c.wait.lo for c in w.parked),
                                    max(c.wait.hi for c in w.parked))
        addr, size, by = rng.randrange(0, 64), rng.choice([1, 2, 4]), rng.choice(cores + [None])
        expect = {c.name for c in cores
                  if c.state == PARKED and c is not by and c.watches(addr, size)}
        before = {c.name: c.state for c in cores}
        tile.scheduler.wrote(addr, size, by=by)
        now = {c.name for c in cores if before[c.name] == PARKED and c.state == RUNNING}
        assert now == expect
        assert all(c.state == before[c.name] for c in cores if c.name not in expect)
        woken += len(now)
    assert woken > 20  # the comparison saw wakes (43 with this seed)
