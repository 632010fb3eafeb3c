"""Functional tests of the afuc emulator on real firmware (a630, a530 PFP+ME) and the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from isaforge.afuc import Emulator, assemble
from isaforge.afuc.machine import StepLimitError, StreamEndError
from isaforge.afuc.machine.stream import BadPacketError, parse_header, pkt4_header, pkt7_header
from isaforge.cli import main as cli_main
from isaforge.core.errors import EmulationError
from tests.refdata import refdata


def a630() -> bytes:
    return refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()


def run(text: str, exact: bool = False) -> Emulator:
    emu = Emulator(a630())
    emu.feed("CP_ME_INIT 0\n" + text)
    assert emu.run(max_steps=200_000, exact=exact) == "idle"
    assert emu.main.waitin_pending
    return emu


@pytest.mark.parametrize("n", [1, 2, 7])
def test_mem_write_words(n):
    words = [0x1000 + i for i in range(n)]
    emu = run("CP_MEM_WRITE 0x20000 0 " + " ".join(map(str, words)))
    mem = [(e.addr, e.value) for e in emu.effects if e.kind == "mem"]
    assert mem == [(0x20000 + 4 * i, w) for i, w in enumerate(words)]


@pytest.mark.parametrize("groups", [1, 3])
def test_set_draw_state_groups(groups):
    payload = []
    for g in range(groups):
        payload += [(g + 2) << 24 | 0x00700000 | (4 + g), 0x40000 + 0x100 * g, g]
    emu = run("CP_SET_DRAW_STATE " + " ".join(map(str, payload)))
    ds = emu.main.draw
    for g in range(groups):
        assert ds.base[g + 2] == [0x40000 + 0x100 * g, g]
        assert ds.hdr[g + 2] == (4 + g) | (7 << 16)
    mask = sum(1 << (g + 2) for g in range(groups))
    assert emu.read_reg("control", "DRAW_STATE_ACTIVE_BITMASK") == mask
    assert emu.packets == 2


@pytest.mark.parametrize("values", [[0x11], [0x11, 0x22, 0x33], [1, 2, 3, 4, 5]])
def test_type4_writes_exactly_its_registers(values):
    emu = run("RB_RENDER_CNTL " + " ".join(map(str, values)))
    regs = [(e.addr, e.value) for e in emu.effects if e.kind == "reg"][-len(values) - 1:]
    assert regs[1:] == [(0x8801 + i, v) for i, v in enumerate(values)]
    assert regs[0][0] != 0x8801 + len(values)


def test_me_init_completes():
    emu = Emulator(a630())
    emu.feed("CP_ME_INIT 0x2f 0x3 0x20000000 0 0 0 0 0\nRB_RENDER_CNTL 0x5")
    assert emu.run(max_steps=100_000) == "idle"
    assert emu.packets == 2 and emu.read_reg("gpu", "RB_RENDER_CNTL") == 5


def test_ib1_and_ib2_execute_and_return():
    ib2 = [pkt4_header(0x8802, 1), 0x22]
    ib1 = [pkt4_header(0x8801, 1), 0x11, pkt7_header(0x3F, 3), 0x30000, 0, len(ib2)]
    emu = Emulator(a630())
    emu.load_memory(0x20000, ib1)
    emu.load_memory(0x30000, ib2)
    emu.feed(f"CP_ME_INIT 0\nCP_INDIRECT_BUFFER 0x20000 0 {len(ib1)}\nRB_DEST_MSAA_CNTL 0x33")
    assert emu.run(max_steps=100_000) == "idle"
    regs = [(e.addr, e.value) for e in emu.effects if e.kind == "reg"][-3:]
    assert regs == [(0x8801, 0x11), (0x8802, 0x22), (0x8803, 0x33)]
    assert emu.read_reg("control", "IB_LEVEL") == 0


def test_fast_and_exact_paths_agree():
    text = "\n".join(["CP_MEM_WRITE 0x20000 0 1 2 3", "RB_RENDER_CNTL 1 2 3",
                      "CP_SET_DRAW_STATE 0x00700004 0x1000 0", "CP_NOP 1 2 3 4 5",
                      "CP_CONTEXT_REG_BUNCH 0x8801 1 0x8802 2", "CP_REG_WRITE 0 0xa00e 0x42"])
    fast, exact = run(text), run(text, exact=True)
    assert fast.effects_raw == exact.effects_raw
    assert fast.steps == exact.steps and fast.packets == exact.packets == 7
    assert fast.main.gpr == exact.main.gpr and fast.main.pc == exact.main.pc


def test_bad_header_reported():
    emu = Emulator(a630())
    emu.feed([pkt7_header(0x48, 1), 0, pkt4_header(0x8801, 1) ^ (1 << 27), 5])
    with pytest.raises(BadPacketError, match="parity"):
        emu.run()
    assert emu.read_reg("gpu", 0x8801) == 0
    with pytest.raises(BadPacketError, match="type 2"):
        parse_header(0x20000000)


def test_stream_ends_mid_packet():
    emu = Emulator(a630())
    emu.feed([pkt7_header(0x48, 1), 0, pkt7_header(0x3D, 4), 0x1000, 0])  # CP_MEM_WRITE
    with pytest.raises(StreamEndError, match="ended inside a packet"):
        emu.run()


def test_runaway_stopped():
    emu = Emulator(a630())
    emu.feed("CP_ME_INIT 0")
    with pytest.raises(StepLimitError, match="step limit of 50"):
        emu.run(max_steps=50)
    assert emu.steps == 50


def test_hooks_and_state_access():
    emu = Emulator(a630())
    seen = []
    emu.hook_add("reg_write", lambda e, reg, value, info: seen.append((reg, value)))
    packets = []
    emu.hook_add("packet", lambda e, address, hdr, proc: packets.append(hdr))
    emu.feed("CP_ME_INIT 0")
    emu.run()
    emu.packet("RB_RENDER_CNTL", 7)
    assert emu.roq()["RB"] == [pkt4_header(0x8801, 1), 7]
    assert emu.run(until="packet") == "packet"
    assert emu.main.pc == emu.main.jmptbl[4]  # stopped at the PKT4 handler
    emu.run()
    assert seen[-1] == (0x8801, 7) and len(packets) == 2
    emu.write_gpr(5, 0x1234)
    assert emu.read_gpr(5) == 0x1234 and emu.read_gpr(0) == 0
    emu.write_reg("control", "SCRATCH_REG0", 9)
    assert emu.read_reg("control", emu.db.control_reg("SCRATCH_REG0")) == 9


def test_a530_pfp_and_me_joined_by_meq():
    pfp = refdata("afuc", "firmware", "a530_pfp.fw").read_bytes()
    me = refdata("afuc", "firmware", "a530_pm4.fw").read_bytes()
    emu = Emulator(pfp, me_firmware=me)
    emu.feed("CP_ME_INIT 0\nCP_MEM_WRITE 0x10000 0 0xdead 0xbeef\nRB_RENDER_CNTL 0x11")
    assert emu.run(max_steps=200_000) == "idle"
    assert [p.packets for p in emu.procs] == [3, 3]
    mem = [(e.addr, e.value, e.proc) for e in emu.effects if e.kind == "mem"]
    assert mem == [(0x10000, 0xDEAD, "ME"), (0x10004, 0xBEEF, "ME")]
    reg = emu.db.gpu_reg("RB_RENDER_CNTL")
    assert emu.read_reg("gpu", reg) == 0x11
    assert [e.proc for e in emu.effects if e.kind == "reg" and e.addr == reg] == ["ME"]


def test_cli_run(tmp_path):
    fw = tmp_path / "fw.bin"
    fw.write_bytes(a630())
    s = tmp_path / "s.txt"
    s.write_text("CP_ME_INIT 0\nCP_MEM_WRITE 0x10000 0 0xdead\nRB_RENDER_CNTL 0x11\n")
    r = CliRunner().invoke(cli_main, ["afuc", "run", "--json", str(fw), str(s)])
    assert r.exit_code == 0, r.output
    objs = [json.loads(x) for x in r.stdout.splitlines()]
    assert {"kind": "mem", "addr": 0x10000, "name": None, "value": 0xDEAD} in objs
    assert objs[-1] == {"kind": "reg", "addr": 0x8801, "name": "RB_RENDER_CNTL", "value": 0x11}
    r = CliRunner().invoke(cli_main, ["afuc", "run", "--trace", str(fw), str(s)])
    assert "\t00d3: 9c1ffa06  (rep)(xmov1)mov $data, $data" in r.output
    assert "3 packets" in r.output
    r = CliRunner().invoke(cli_main, ["afuc", "run", "--max-steps", "10", str(fw), str(s)])
    assert r.exit_code == 1 and "step limit of 10" in r.output and "$00=" in r.output
    r = CliRunner().invoke(cli_main, ["afuc", "run", "--gpu", "a630", str(fw), str(s)])
    assert r.exit_code == 0 and "3 packets" in r.output
    r = CliRunner().invoke(cli_main, ["afuc", "run", "--gpu", "a999", str(fw), str(s)])
    assert r.exit_code == 1 and "unknown firmware id 0xa999" in r.output
    s.write_text("CP_ME_INIT 0\nraw 0x12345678\n")
    r = CliRunner().invoke(cli_main, ["afuc", "run", str(fw), str(s)])
    assert r.exit_code == 1 and "bad packet header 12345678" in r.output
    s.write_text("CP_ME_INIT 0\nraw 0x703d0004 0x1000\n")  # CP_MEM_WRITE cut short
    r = CliRunner().invoke(cli_main, ["afuc", "run", str(fw), str(s)])
    assert r.exit_code == 1 and "ended inside a packet" in r.output and "ROQ" in r.output
    s.write_text("CP_BOGUS 1\n")
    r = CliRunner().invoke(cli_main, ["afuc", "run", str(fw), str(s)])
    assert r.exit_code == 1 and "neither a PM4 packet nor a register" in r.output


def test_a5xx_bank1_register_names():
    me = refdata("afuc", "firmware", "a530_pm4.fw").read_bytes()
    emu = Emulator(me)
    reg = emu.db.gpu_reg("VFD_INDEX_OFFSET")
    assert emu.name_of("reg", reg) == "VFD_INDEX_OFFSET"
    assert emu.name_of("reg", reg | 0x800) == "VFD_INDEX_OFFSET.bank1"
    assert emu.name_of("reg", 0x812) is None  # not a context register: no bank
    a6 = Emulator(a630())
    assert a6.name_of("reg", 0x8801 | 0x800) == a6.db.gpu_reg_name(0x8801 | 0x800)


def test_breakpoints_and_single_steps():
    emu = Emulator(a630())
    emu.feed("CP_ME_INIT 0\nRB_RENDER_CNTL 0x11")
    assert emu.run(until="packet") == "packet"  # CP_ME_INIT dispatched
    pkt4 = emu.main.jmptbl[4]
    assert emu.run(until=pkt4 + 1) == "breakpoint"
    assert emu.main.pc == pkt4 + 1
    assert emu.instruction_text() == f"{pkt4 + 1:04x}: 9c1ffa06  (rep)(xmov1)mov $data, $data"
    assert emu.read_reg("gpu", "RB_RENDER_CNTL") == 0
    assert emu.step() is True
    assert emu.read_reg("gpu", "RB_RENDER_CNTL") == 0x11
    assert emu.run() == "idle"
    assert emu.step() is False  # waiting for a header


def test_resume_after_the_stream_ends_inside_a_packet():
    cut = [pkt7_header(0x48, 1), 0, pkt7_header(0x3D, 4), 0x10000, 0, 0xA]
    emu = Emulator(a630())
    emu.feed(cut)
    with pytest.raises(StreamEndError):
        emu.run(exact=True)
    emu.feed([0xB, pkt4_header(0x8801, 1), 0x11])
    assert emu.run(exact=True) == "idle"
    assert emu.read_mem(0x10000, 2) == [0xA, 0xB]
    assert emu.read_reg("gpu", "RB_RENDER_CNTL") == 0x11
    fast = Emulator(a630())
    fast.feed(cut)
    with pytest.raises(StreamEndError):
        fast.run()
    fast.feed([0xB])
    with pytest.raises(EmulationError, match="cannot continue"):
        fast.run()


def test_cli_run_shows_boot_effects_only_with_boot(tmp_path):
    """Boot-time control-register effects (the boot code's and those of the CP_ME_INIT that
    starts the stream: about 1,260 on a630) are printed only with --boot; other effects
    always."""
    fw = tmp_path / "fw.bin"
    fw.write_bytes(a630())
    s = tmp_path / "s.txt"
    s.write_text("CP_ME_INIT 0\nRB_RENDER_CNTL 0x11\nCP_ME_INIT 0\n")
    init = Emulator(a630())
    init.feed("CP_ME_INIT 0")
    init.run()
    n_init = len(init.effects_raw)
    every = Emulator(a630())
    every.feed(s.read_text())
    every.run()
    effects = every.effects
    hidden = [e for e in effects[:n_init] if e.kind == "ctrl"]
    assert len(hidden) > 1200
    assert any(e.kind != "ctrl" for e in effects[:n_init])  # shown anyway
    assert any(e.kind == "ctrl" for e in effects[n_init:])  # the second CP_ME_INIT's: shown
    plain = CliRunner().invoke(cli_main, ["afuc", "run", str(fw), str(s)])
    assert plain.exit_code == 0, plain.output
    lines = plain.output.splitlines()
    assert len(lines) == len(effects) - len(hidden) + 1  # shown effects and the summary
    assert "reg   0x8801 RB_RENDER_CNTL = 0x00000011" in lines
    assert (f"{len(effects)} effects ({len(hidden)} boot-time control-register effects not "
            "shown: --boot)") in lines[-1]
    full = CliRunner().invoke(cli_main, ["afuc", "run", "--boot", str(fw), str(s)])
    assert full.exit_code == 0
    flines = full.output.splitlines()
    assert len(flines) == len(effects) + 1 and flines[0].startswith("ctrl  ")
    shown = [x for i, x in enumerate(flines[:-1])
             if not (i < n_init and effects[i].kind == "ctrl")]
    assert shown == lines[:-1]


def test_cli_run_boot_that_never_reaches_waitin_suggests_gpu(tmp_path):
    fw = tmp_path / "spin.fw"
    fw.write_bytes(assemble("[016ee001]\nl0:\njump #l0\nnop\n"))
    s = tmp_path / "s.txt"
    s.write_text("CP_NOP 1\n")
    r = CliRunner().invoke(cli_main, ["afuc", "run", str(fw), str(s)])
    assert r.exit_code == 1 and "did not reach waitin" in r.output and "--gpu" in r.output


def test_cli_effect_lines_are_the_effect_texts():
    from isaforge.afuc.cli import _effect_lines, _effect_text

    emu = Emulator(a630())
    emu.feed("CP_ME_INIT 0\nCP_MEM_WRITE 0x10000 0 0xdead 0xbeef\nRB_RENDER_CNTL 0x11\n"
             "CP_REG_WRITE 0 0xa00e 0x42\n")
    emu.run()
    effects = emu.effects
    assert {e.kind for e in effects} >= {"reg", "mem", "ctrl"}
    assert _effect_lines(emu, 0, 0) == [_effect_text(e) for e in effects]
    assert _effect_lines(emu, 3, 100) == [_effect_text(e) for i, e in enumerate(effects)
                                          if i >= 3 and (i >= 100 or e.kind != "ctrl")]
