"""The SDS (draw-state) queue on a630_sqe.fw: CP_SET_DRAW_STATE records groups, and a draw
packet (CP_DRAW_INDX_OFFSET) makes the firmware kick each active group and execute its IB
words from the SDS queue (@IB_LEVEL 3) before it starts the draw. See machine.SdsQueue."""

from __future__ import annotations

import pytest

from isaforge.afuc import Emulator
from isaforge.afuc.machine.processor import SDS_READY
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header
from tests.refdata import refdata

DRAW = "CP_DRAW_INDX_OFFSET 0x0 1 3 0 0 0 0"
CP_MEM_WRITE = 0x3D


def a630() -> bytes:
    return refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()


def group(idx: int, addr: int, words: list[int], modes: int = 7) -> list[int]:
    """The three CP_SET_DRAW_STATE dwords of one group."""
    return [idx << 24 | modes << 20 | len(words), addr & 0xFFFFFFFF, addr >> 32]


def run(groups: dict[int, tuple[int, list[int]]], tail: str = DRAW,
        exact: bool = False) -> Emulator:
    emu = Emulator(a630())
    payload: list[int] = []
    for idx, (addr, words) in groups.items():
        emu.load_memory(addr, words)
        payload += group(idx, addr, words)
    emu.feed("CP_ME_INIT 0\nCP_SET_DRAW_STATE " + " ".join(map(str, payload)) + "\n" + tail)
    assert emu.run(max_steps=200_000, exact=exact) == "idle"
    assert emu.main.waitin_pending
    return emu


def reg_writes(emu: Emulator) -> list[tuple[int, int]]:
    return [(e.addr, e.value) for e in emu.effects if e.kind == "reg"]


def initiator(emu: Emulator) -> int:
    """Index in reg_writes() of the draw's PC_DRAW_INITIATOR write."""
    off = emu.db.gpu_reg("PC_DRAW_INITIATOR")
    return [a for a, _ in reg_writes(emu)].index(off)


@pytest.mark.parametrize("exact", [False, True])
def test_one_group_runs_before_the_draw(exact):
    state = [pkt4_header(0x8801, 2), 0x11, 0x22, pkt4_header(0x8810, 1), 0x33]
    emu = run({2: (0x40000, state)}, exact=exact)
    writes = reg_writes(emu)
    want = [(0x8801, 0x11), (0x8802, 0x22), (0x8810, 0x33)]
    got = [w for w in writes if w[0] in (0x8801, 0x8802, 0x8810)]
    assert got == want
    assert writes.index(want[-1]) < initiator(emu)  # the state is in place before the draw
    assert [emu.read_reg("gpu", r) for r in (0x8801, 0x8802, 0x8810)] == [0x11, 0x22, 0x33]
    # the two packets of the state and the IN_IB_END closing the SDS queue were dispatched
    assert emu.packets == 3 + 2 + 1
    assert emu.read_reg("control", "IB_LEVEL") == 0
    assert emu.read_reg("control", SDS_READY) == 0
    assert emu.roq()["SDS"] == []


@pytest.mark.parametrize("exact", [False, True])
def test_three_groups_in_group_order_with_a_type7_packet(exact):
    groups = {
        9: (0x50000, [pkt4_header(0x8803, 1), 0x99]),
        2: (0x40000, [pkt4_header(0x8801, 1), 0x22]),
        5: (0x48000, [pkt7_header(CP_MEM_WRITE, 3), 0x70000, 0, 0x55,
                      pkt4_header(0x8802, 1), 0x55]),
    }
    emu = run(groups, exact=exact)
    got = [w for w in reg_writes(emu) if w[0] in (0x8801, 0x8802, 0x8803)]
    assert got == [(0x8801, 0x22), (0x8802, 0x55), (0x8803, 0x99)]
    assert [(e.addr, e.value) for e in emu.effects if e.kind == "mem"] == [(0x70000, 0x55)]
    assert emu.read_reg("control", "DRAW_STATE_ACTIVE_BITMASK") == 0
    assert emu.read_reg("control", "IB_LEVEL") == 0


def test_no_draw_no_state():
    """CP_SET_DRAW_STATE alone only records the groups: nothing runs until a draw."""
    emu = run({2: (0x40000, [pkt4_header(0x8801, 1), 0x11])}, tail="")
    assert (0x8801, 0x11) not in reg_writes(emu)
    assert emu.read_reg("control", "DRAW_STATE_ACTIVE_BITMASK") == 1 << 2


def test_state_runs_once_per_set_draw_state():
    emu = run({2: (0x40000, [pkt4_header(0x8801, 1), 0x11])}, tail=DRAW + "\n" + DRAW)
    assert reg_writes(emu).count((0x8801, 0x11)) == 1


def test_fast_and_exact_paths_agree_on_draw_state():
    groups = {3: (0x40000, [pkt4_header(0x8801, 3), 1, 2, 3]),
              4: (0x41000, [pkt7_header(CP_MEM_WRITE, 4), 0x70000, 0, 7, 8])}
    tail = DRAW + "\nRB_RENDER_CNTL 0x5\n" + DRAW
    fast, exact = run(groups, tail, exact=False), run(groups, tail, exact=True)
    assert fast.effects_raw == exact.effects_raw
    assert (fast.steps, fast.instructions, fast.packets) == (
        exact.steps, exact.instructions, exact.packets)
    assert fast.main.gpr == exact.main.gpr and fast.main.pc == exact.main.pc
