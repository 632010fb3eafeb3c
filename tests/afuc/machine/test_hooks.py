"""Emulator hooks in Unicorn's shape: ``hook_add(kind, callback, begin, end) -> handle``,
``hook_del(handle)``, the shared kinds (reg_write, mem_write, packet, insn)."""

from __future__ import annotations

import pytest

from isaforge.afuc import Emulator, RegWrite, assemble, disassemble
from isaforge.afuc.machine import TraceState
from isaforge.afuc.machine.stream import pkt4_header, pkt7_header
from isaforge.core.hooks import KINDS, HookError
from tests.refdata import refdata

STREAM = "CP_ME_INIT 0\nRB_RENDER_CNTL 0x11 0x22\nCP_MEM_WRITE 0x10000 0 0xdead 0xbeef\n"


def a630() -> bytes:
    return refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()


def test_handles_add_and_delete() -> None:
    emu = Emulator(a630())
    seen: list[int] = []
    h1 = emu.hook_add("reg_write", lambda e, reg, value, info: seen.append(reg))
    h2 = emu.hook_add("reg_write", lambda e, reg, value, info: seen.append(-reg))
    assert h1 != h2
    emu.feed("CP_ME_INIT 0")
    emu.run()
    assert seen and -seen[0] == seen[1]
    emu.hook_del(h2)
    seen.clear()
    emu.packet("RB_RENDER_CNTL", 5)
    emu.run()
    assert seen and all(r > 0 for r in seen)
    emu.hook_del(h1)
    with pytest.raises(HookError, match="no hook with handle"):
        emu.hook_del(h1)
    # the fast path takes over again: effects appended inline, none given to hooks
    seen.clear()
    emu.packet("RB_RENDER_CNTL", 6)
    emu.run()
    assert not seen and emu.fast_append is not None and emu.emit is not None


def test_kinds_are_the_shared_vocabulary() -> None:
    emu = Emulator(a630())
    for kind in ("insn", "mem_write", "reg_write", "packet"):
        assert kind in KINDS
        emu.hook_del(emu.hook_add(kind, lambda *a: None))
    for old in ("reg", "mem", "pipe", "ctrl", "ub"):
        with pytest.raises(HookError, match="unknown hook kind"):
            emu.hook_add(old, lambda *a: None)
    with pytest.raises(HookError, match="not callable"):
        emu.hook_add("packet", 3)


@pytest.mark.parametrize("exact", [False, True])
def test_reg_and_mem_writes_match_the_effects(exact: bool) -> None:
    emu = Emulator(a630())
    regs: list[tuple[str, int, int, str | None, str]] = []
    mems: list[tuple[int, int, int]] = []

    def on_reg(e: Emulator, reg: int, value: int, info: RegWrite) -> None:
        assert e is emu and isinstance(info, RegWrite)
        regs.append((info.space, reg, value, info.name, info.proc))

    emu.hook_add("reg_write", on_reg)
    emu.hook_add("mem_write", lambda e, addr, size, value: mems.append((addr, size, value)))
    emu.feed(STREAM)
    emu.run(exact=exact)
    kinds = {"reg": "gpu", "pipe": "pipe", "ctrl": "ctrl"}
    want_regs = [(kinds[x.kind], x.addr, x.value, x.name, x.proc)
                 for x in emu.effects if x.kind != "mem"]
    assert regs == want_regs
    assert {r[0] for r in regs} == {"gpu", "pipe", "ctrl"}
    assert ("gpu", 0x8801, 0x11, "RB_RENDER_CNTL", "SQE") in regs
    assert mems == [(x.addr, 4, x.value) for x in emu.effects if x.kind == "mem"]
    assert (0x10000, 4, 0xDEAD) in mems and (0x10004, 4, 0xBEEF) in mems


def test_ranges_select_registers_and_addresses() -> None:
    emu = Emulator(a630())
    regs: list[int] = []
    mems: list[int] = []
    emu.hook_add("reg_write", lambda e, reg, v, info: regs.append(reg), 0x8801, 0x8802)
    emu.hook_add("mem_write", lambda e, addr, size, v: mems.append(addr), begin=0x10004)
    emu.feed(STREAM)
    emu.run()
    assert regs == [0x8801, 0x8802]
    assert mems == [0x10004]


def test_packet_hook_gets_handler_address_header_and_processor() -> None:
    emu = Emulator(a630())
    got: list[tuple[int, int, str]] = []
    emu.hook_add("packet", lambda e, addr, hdr, proc: got.append((addr, hdr, proc.name)))
    emu.feed(STREAM)
    emu.run()
    table = emu.main.jmptbl
    assert [hdr for _, hdr, _ in got] == [pkt7_header(0x48, 1), pkt4_header(0x8801, 2),
                                          pkt7_header(0x3D, 4)]
    assert got[0] == (4 * table[0x48], pkt7_header(0x48, 1), "SQE")
    assert got[1][0] == 4 * table[emu.pkt4_id]
    assert got[2][0] == 4 * table[0x3D]
    # a range on the handler address selects packets by handler
    only = []
    emu.hook_add("packet", lambda e, addr, hdr, proc: only.append(hdr),
                 4 * table[0x3D], 4 * table[0x3D])
    emu.feed("CP_ME_INIT 0\nCP_MEM_WRITE 0x20000 0 1\n")
    emu.run()
    assert only == [pkt7_header(0x3D, 3)]


def test_insn_hook_sees_every_executed_instruction() -> None:
    """The insn hook fires before each instruction (a (rep) one once), at 4 * pc, in the
    order the trace shows them; effects are the same as without the hook."""
    data = a630()
    plain = Emulator(data)
    plain.feed(STREAM)
    plain.run()
    emu = Emulator(data)
    addrs: list[int] = []
    emu.hook_add("insn", lambda e, addr, size, proc: addrs.append(addr))
    lines: list[str] = []
    emu.set_tracer(TraceState(lines.append))
    emu.feed(STREAM)
    emu.run()
    traced = [int(line[1:5], 16) for line in lines if line.startswith("\t")]
    assert addrs == [4 * pc for pc in traced]
    assert emu.effects_raw == plain.effects_raw and emu.steps == plain.steps
    # the address is the one disassemble() gives the word
    by_addr = {r.address: r.word for r in disassemble(data)}
    assert all(by_addr[a] == emu.main.image[a // 4] for a in addrs[:200])


def test_insn_hook_without_trace_takes_the_exact_path_and_a_range() -> None:
    fw = assemble("[016ee001]\nmov $02, 0x5\nl2:\nsub $02, $02, 0x1\nbrne $02, 0x0, #l2\nnop\n"
                  "waitin\nnop\n")
    emu = Emulator(fw)
    seen: list[tuple[int, int, str]] = []
    h = emu.hook_add("insn", lambda e, addr, size, proc: seen.append((addr, size, proc.name)),
                     8, 8)
    emu.run()
    assert seen == [(8, 4, "SQE")] * 5  # the loop's sub, five times
    emu.hook_del(h)
    assert emu.main.insn_hooks == ()


def test_insn_hook_in_single_steps_and_not_when_idle() -> None:
    emu = Emulator(a630())
    emu.run()  # boot code, up to the waitin whose delay slot waits for a header
    seen: list[int] = []
    emu.hook_add("insn", lambda e, addr, size, proc: seen.append(addr))
    slot = emu.main.pc
    assert emu.step() is False and seen == []  # idle: nothing executes, no hook
    emu.feed("CP_ME_INIT 0")
    assert emu.step() is True and seen == [4 * slot]
    assert emu.step() is True and seen == [4 * slot, 4 * emu.main.jmptbl[0x48]]
