"""Defects a new user ran into (issue 17), each checked where it showed."""

from __future__ import annotations

from click.testing import CliRunner

from isaforge.afuc import Emulator, assemble
from isaforge.afuc.debug import Debugger
from isaforge.afuc.debug.view import Code
from isaforge.cli import main as cli_main
from tests.refdata import refdata

PAD = " " * 14


def a630() -> bytes:
    return refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()


def test_debug_of_firmware_whose_boot_never_reaches_waitin_says_so_at_start(tmp_path):
    """(1) The boot code spins (as a650/a660 files do with their own id): the debugger
    stops at start with the disassembler's advice (--gpu) instead of spinning."""
    fw = tmp_path / "spin.fw"
    fw.write_bytes(assemble("[016ee001]\nl0:\njump #l0\nnop\n"))
    res = CliRunner().invoke(cli_main, ["afuc", "debug", str(fw)], input="r\nq\n")
    assert res.exit_code == 1
    assert "did not reach waitin" in res.output and "--gpu" in res.output
    assert "(afuc)" not in res.output


def test_code_outside_the_listing_names_the_real_branch_target():
    """(2) A word the listing does not show is decoded at its own pc: 'jump #l3' at pc 3
    (a one-word decode printed it as '#l0', and its neighbours as raw offsets)."""
    fw = assemble("[016ee001]\nmov $02, 1\nl2:\nnop\nl3:\njump #l3\nnop\njump #l2\nnop\n")
    code = Code(Emulator(fw))  # its boot code never reaches waitin: no listing
    assert code.text("SQE", 3) == "jump #l3"
    assert code.text("SQE", 5) == "jump #l2"


def test_out_of_range_type4_register_is_rejected_when_queued():
    """(3) 'p 0x99999 1' is refused at once, the queue untouched."""
    d = Debugger(Emulator(a630()), trace=False)
    out = d.execute("p 0x99999 1")
    assert out.startswith("error: ") and "0x99999" in out and "0x3ffff" in out
    assert d.emu.roq()["RB"] == []
    assert d.failed == 1
    assert d.execute("p 0x3ffff 1").startswith("queued ")
    assert d.failed == 1


def test_piped_session_with_a_failed_command_exits_non_zero():
    """(3) A script that had a failed command exits 1, even when it quits with 'q'; one
    without exits 0."""
    fw = str(refdata("afuc", "firmware", "a630_sqe.fw"))
    bad = CliRunner().invoke(cli_main, ["afuc", "debug", fw], input="p 0x99999 1\nq\n")
    assert bad.exit_code == 1
    assert "error: register offset 0x99999" in bad.output
    good = CliRunner().invoke(cli_main, ["afuc", "debug", fw], input="p CP_NOP 1\nq\n")
    assert good.exit_code == 0, good.output
    xbad = CliRunner().invoke(cli_main, ["afuc", "debug", fw, "-x", "frob", "-x", "q"])
    assert xbad.exit_code == 1


def test_regs_names_sp_and_lr():
    """(4) regs (and the view) name $1a/$1b $sp/$lr; Mesa's 'd r' dump keeps its names."""
    d = Debugger(Emulator(a630()), trace=False)
    d.execute("w r $sp 0x12")
    regs = d.execute("regs")
    assert "$sp=00000012" in regs and "$lr=00000000" in regs
    assert "$1a" not in regs and "$1b" not in regs
    assert "$sp" in d.render_view()
    assert PAD + "GPR:  $1a: 00000012" in d.execute("d r").splitlines()


def test_instruction_shown_at_the_prompt_is_not_printed_again():
    """(4) The '=>' line shows the next instruction; executing it prints its changes only."""
    d = Debugger(Emulator(a630()), trace=True)
    d.execute("s 3")
    shown = d.where()
    assert shown.startswith("=> 0003: 88020001  mov $02, 0x1")
    out = d.execute("s").splitlines()
    assert out[0] == PAD + "GPR:  $02: 00000001"
    assert not any(x.startswith("\t0003:") for x in out)
    assert out[-1].startswith("=> 0004: ")
    out = d.execute("s 2").splitlines()  # the next ones are printed: only the shown one not
    assert not out[0].startswith("\t0004:")
    assert any(x.startswith("\t0005: ") for x in out)


NRT_FW = """[016ee001]
        mov $02, 0x1
        mov $addr, 0xa0 << 24
        mov $data, 0x1000
        mov $data, 0x0
        mov $addr, 0xa204 << 16
        mov $data, 0xbeef
        waitin
        mov $01, $data
"""


def test_nrt_addr_auto_increment_is_state_not_a_write():
    """(4) Writing NRT_DATA stores to memory and advances NRT_ADDR: the trace shows the
    changed NRT_ADDR (as Mesa's does), the effects and hooks have no pipe write of it."""
    emu = Emulator(assemble(NRT_FW))
    seen = []
    emu.hook_add("reg_write", lambda m, addr, value, info: seen.append((info.space, addr)))
    emu.run()
    nrt_addr = emu.db.pipe_reg("NRT_ADDR")
    assert emu.read_reg("pipe", "NRT_ADDR") == 0x1004
    assert emu.read_mem(0x1000) == [0xBEEF]
    pipe = [(e.addr, e.value) for e in emu.effects if e.kind == "pipe"]
    assert pipe == [(nrt_addr, 0x1000), (nrt_addr + 1, 0), (emu.db.pipe_reg("NRT_DATA"), 0xBEEF)]
    assert [a for space, a in seen if space == "pipe"] == [a for a, _ in pipe]
    d = Debugger(Emulator(assemble(NRT_FW)), trace=True)
    out = d.execute("s 7")
    assert PAD + "PIPE: |NRT_ADDR: 00001004" in out.splitlines()


def test_a5xx_pfp_alone_explains_that_it_needs_the_me_firmware(tmp_path):
    """(5) a530_pfp.fw without --me runs as the ME and reads the ME's packets wrongly: the
    error says that a5xx needs the ME firmware (--me); with it the stream runs."""
    pfp = str(refdata("afuc", "firmware", "a530_pfp.fw"))
    me = str(refdata("afuc", "firmware", "a530_pm4.fw"))
    stream = tmp_path / "s.txt"
    stream.write_text("CP_NOP 1\nCP_ME_INIT 0\n")
    res = CliRunner().invoke(cli_main, ["afuc", "run", pfp, str(stream)])
    assert res.exit_code == 1
    last = res.output.strip().splitlines()[-1]
    assert last.startswith("isaforge: error: ME: bad packet header")
    assert "a5xx needs the ME firmware" in last and "--me" in last
    ok = CliRunner().invoke(cli_main, ["afuc", "run", pfp, str(stream), "--me", me])
    assert ok.exit_code == 0, ok.output
    d = Debugger(Emulator(refdata("afuc", "firmware", "a530_pfp.fw").read_bytes()))
    d.execute("p CP_NOP 1")
    d.execute("p CP_ME_INIT 0")
    assert "--me" in d.execute("c")
