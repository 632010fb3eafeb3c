"""The interactive debugger (``isaforge afuc debug``): its interpreter and its command line.

The reference is Mesa's emulator prompt (``afuc-disasm -e``): refdata's
``a630_F_ui_commands`` is a script of Mesa prompt commands (help, step, run, dump and write of
every register space, packets) and the transcript Mesa printed. We feed the same script to our
debugger and compare what it shows: the executed instructions and their changes, where each
``s``/``r`` stops, and every dumped value, up to where one of Mesa's emulator bugs acts (then
the test states our value and why it differs).
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.afuc import Emulator, assemble
from isaforge.afuc.debug import MESA_PROMPT, PROMPT, Debugger, repl
from isaforge.afuc.decode import Decoder, LabelContext
from isaforge.afuc.machine.stream import pkt7_header
from isaforge.afuc.regdb import RegDB
from isaforge.cli import main as cli_main
from tests.refdata import refdata

DB = RegDB.for_variant("A6XX")
PAD = " " * 14
TRACE_LINE = re.compile(r"^\t[0-9a-f]{4}: ")


def a630() -> bytes:
    return refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()


def dbg_a630(trace: bool = False, **kw) -> Debugger:
    return Debugger(Emulator(a630()), trace=trace, **kw)


def run_cmds(d: Debugger, *cmds: str) -> list[str]:
    return [d.execute(c) for c in cmds]


# -- Mesa's transcript against ours -------------------------------------------------------------
def mesa_chunks(text: str) -> tuple[str, list[tuple[str, str]]]:
    """(text before the first prompt, [(command letter, what Mesa printed for it)])."""
    parts = text.split(MESA_PROMPT)
    out = []
    for part in parts[1:]:
        letter, _, rest = part.partition("\n")
        out.append((letter.strip(), rest))
    return parts[0], out


def our_chunks(text: str) -> list[tuple[str, str]]:
    """[(command line, what we printed)] from a non-interactive session transcript."""
    out: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith(PROMPT):
            out.append((line[len(PROMPT):], []))
        elif out:
            out[-1][1].append(line)
    return [(c, "\n".join(lines)) for c, lines in out]


WHERE_LINE = re.compile(r"^=> (?:\w+ )?[0-9a-f]{4}: ([0-9a-f]{8})  ")
_DEC = Decoder(6, DB)


def trace_lines(text: str) -> list[str]:
    """Executed instructions and the dumps of what they changed (pc shown as 0000). An
    instruction shown at the prompt ('=> pc: word  text') is not printed again when it
    executes (as Mesa's prompt does): it reads here as the trace line of its word."""
    keep = []
    for line in text.splitlines():
        if TRACE_LINE.match(line):
            keep.append("\t0000:" + line[6:])
        elif m := WHERE_LINE.match(line):
            word = int(m.group(1), 16)
            jumptbl = line[m.end():].startswith("[#jumptbl]")
            keep.append(f"\t0000: {word:08x}  " + ("[#jumptbl]" if jumptbl else
                        _DEC.text(word, LabelContext(DB, 1, labels=False))))
        elif line.startswith(PAD) and line[14] != " ":
            keep.append(line)
    return keep


def dump_lines(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.startswith(PAD) and x[14] != " "]


@pytest.fixture(scope="module")
def f_session():
    script = refdata("afuc", "emu-traces", "a630_F_ui_commands.input.txt").read_text()
    mesa = refdata("afuc", "emu-traces", "a630_F_ui_commands.trace.txt").read_text()
    fw = refdata("afuc", "firmware", "a630_sqe.fw")
    res = CliRunner().invoke(cli_main, ["afuc", "debug", str(fw)], input=script)
    assert res.exit_code == 0, res.output
    head, theirs = mesa_chunks(mesa)
    ours = our_chunks(res.output)
    assert [c.split()[0] for c, _ in ours] == [c for c, _ in theirs]
    return head, theirs, ours, res.output


def test_ui_commands_same_stops_as_mesa(f_session):
    """Each s and r stops before the same instruction as Mesa's (Mesa prints it before its
    prompt, we print it after '=>')."""
    head, theirs, ours, _ = f_session
    for (cmd, text), (_, mesa_text) in zip(ours, theirs, strict=True):
        if cmd.split()[0] not in ("s", "r"):
            continue
        where = next(x for x in text.splitlines() if x.startswith("=> "))
        mesa_next = [x for x in mesa_text.splitlines() if TRACE_LINE.match(x)][-1]
        ours_word = where.split()[2]
        assert ours_word == mesa_next.split()[1], (cmd, where, mesa_next)


def test_ui_commands_trace_as_mesa_until_the_xmov_bug(f_session):
    """The executed instructions and what they changed read as Mesa's, line for line, until
    CP_NOP's '(rep)(xmov3)mov $00, $data', where Mesa's bug 2 (extra moves written to $data,
    so to GPU registers 0 and 1) acts; ours sends the extra moves to $00: no GPU write."""
    head, theirs, ours, output = f_session
    mesa_seq = trace_lines(head)
    ours_seq: list[str] = trace_lines(output.split(PROMPT, 1)[0])  # the banner's '=>' line
    assert len(ours_seq) == 1
    for (cmd, text), (_, mesa_text) in zip(ours, theirs, strict=True):
        if cmd.split()[0] in ("s", "r"):
            mesa_seq += trace_lines(mesa_text)
            ours_seq += trace_lines(text)
    # Mesa's swrite ignores its register offset (tests/afuc/machine/test_emu_mesa.py): normalised
    ours_seq = [x.replace("SQE: @PREEMPT_INSTR: 00000e37", "SQE: 0x000: 00000e37")
                for x in ours_seq]
    first = next(i for i, (a, b) in enumerate(zip(mesa_seq, ours_seq, strict=False)) if a != b)
    assert sum(1 for x in ours_seq[:first] if x.startswith("\t")) > 400
    bug_instr = [x for x in ours_seq[:first + 1] if x.startswith("\t")][-1]
    assert bug_instr.endswith("(rep)(xmov3)mov $00, $data")
    block_m = mesa_seq[mesa_seq.index(bug_instr, first - 40):]
    block_m = block_m[1:next(i for i, x in enumerate(block_m[1:], 1) if x.startswith("\t"))]
    block_o = ours_seq[ours_seq.index(bug_instr, first - 40) + 1:]
    block_o = block_o[:next(i for i, x in enumerate(block_o) if x.startswith("\t"))]
    assert any("GPU:  0x0000: 22222222" in x for x in block_m)
    assert not any("GPU:" in x for x in block_o)
    # four payload words, each read once: $rem counts down 3, 2, 1, 0
    assert [x[-8:] for x in block_o if "$rem" in x] == ["00000003", "00000002", "00000001",
                                                        "00000000"]


def test_ui_commands_dumps_as_mesa(f_session):
    """Every dump shows Mesa's values in Mesa's format, where the emulators agree."""
    _, theirs, ours, _ = f_session
    dumps = [(c, dump_lines(t), dump_lines(m))
             for (c, t), (_, m) in zip(ours, theirs, strict=True) if c.split()[0] == "d"]
    assert [c for c, _, _ in dumps] == ["d r", "d s", "d r", "d g RB_RENDER_CNTL",
                                        "d m 0x20000", "d c SCRATCH_REG0"]
    # the first GPR dump (after three steps) and the single-register dumps: identical
    for cmd, o, m in [dumps[0], *dumps[3:]]:
        assert o == m and o, cmd
    assert len(dumps[0][1]) == 32
    assert dumps[3][1] == [PAD + "GPU:  RB_RENDER_CNTL: 00000005"]
    assert dumps[4][1] == [PAD + "MEM:  0x0000000000020000: 0x00000abc"]
    assert dumps[5][1] == [PAD + "CTRL: @SCRATCH_REG0: 00000077"]
    # SQE registers: SP and the call stack as Mesa's; Mesa's swrite put PREEMPT_INSTR's value
    # (0xe37, written by 'swrite $02, [$00 + %PREEMPT_INSTR]') in SQE register 0
    _, o, m = dumps[1]
    assert len(o) == len(m) == 16
    same = [i for i in range(16) if i not in (0, 4)]
    assert [o[i] for i in same] == [m[i] for i in same]
    assert m[0].endswith("0x000: 00000e37") and m[4].endswith("@PREEMPT_INSTR: 00000000")
    assert o[0].endswith("0x000: 00000000") and o[4].endswith("@PREEMPT_INSTR: 00000e37")
    # GPRs after CP_NOP and 'w r $02 0x1234': the same except the two Mesa's bug 2 touched:
    # its extra moves incremented $addr twice and left the last word in $00 (which reads 0)
    _, o, m = dumps[2]
    assert len(o) == len(m) == 32
    differ = {i for i in range(32) if o[i] != m[i]}
    assert differ == {0x00, 0x1D}
    assert m[0].endswith("$00: 33333333") and m[0x1D].endswith("$addr: 00000002")
    assert o[0].endswith("$00: 00000000") and o[0x1D].endswith("$addr: 00000000")
    assert o[2].endswith("$02: 00001234")


def test_ui_commands_writes_took_effect(f_session):
    """'w s SP 0' came last; a fresh session checks it, and each write through its API."""
    d = dbg_a630()
    run_cmds(d, "w s SP 3", "w c SCRATCH_REG0 0x77", "w g RB_RENDER_CNTL 5",
             "w m 0x20000 0xabc 0xdef", "w r $rem 7", "w p NRT_ADDR 0x1000")
    emu = d.emu
    assert emu.read_reg("sqe", "SP") == 3
    assert emu.read_reg("control", "SCRATCH_REG0") == 0x77
    assert emu.read_reg("gpu", "RB_RENDER_CNTL") == 5
    assert emu.read_mem(0x20000, 2) == [0xABC, 0xDEF]
    assert emu.read_gpr(0x1C) == 7
    assert emu.read_reg("pipe", "NRT_ADDR") == 0x1000
    assert d.execute("d p NRT_ADDR") == PAD + "PIPE: |NRT_ADDR: 00001000"
    assert d.execute("d r $rem") == PAD + "GPR:  $rem: 00000007"
    # by number as well as by name, named as Mesa names them
    assert d.execute("w c 0x80 5") == ""
    assert d.execute("d c 0x80") == PAD + "CTRL: 0x080: 00000005"
    assert d.execute("d g 0x8801") == PAD + "GPU:  RB_RENDER_CNTL: 00000005"
    assert d.execute("d s 5") == PAD + "SQE: @SP: 00000003"
    assert d.execute("w r 0x1c 9") == "" and emu.read_gpr(0x1C) == 9
    assert d.execute("d c *").splitlines() == [PAD + "CTRL: 0x080: 00000005",
                                               PAD + "CTRL: @SCRATCH_REG0: 00000077"]


# -- the interpreter on a630 --------------------------------------------------------------------
def test_breakpoint_on_packet_handler_label():
    d = dbg_a630()
    run_cmds(d, "p CP_ME_INIT 0", "p CP_MEM_WRITE 0x20000 0 0xdead 0xbeef")
    assert d.execute("b CP_MEM_WRITE").startswith("breakpoint 1: pc ")
    out = d.execute("c")
    p = d.emu.main
    assert out.splitlines()[0] == f"breakpoint 1: SQE pc {p.pc:#06x}"
    # the label is the packet table entry the boot code wrote
    assert p.pc == p.jmptbl[DB.pm4_packet_id("CP_MEM_WRITE")]
    assert p.packets == 2 and d.emu.read_mem(0x20000, 2) == [0, 0]
    assert "<CP_MEM_WRITE>" in out.splitlines()[-1]
    out = d.execute("c")
    assert out.startswith("idle: every processor waits for a packet")
    assert d.execute("d m 0x20000 2").splitlines() == [
        PAD + "MEM:  0x0000000000020000: 0x0000dead", PAD + "MEM:  0x0000000000020004: 0x0000beef"]
    assert "hit 1x" in d.execute("b")


def test_breakpoint_on_pc_number_and_delete():
    d = dbg_a630()
    target = 0x0A  # in the boot code, reached once
    assert "0x000a" in d.execute(f"b {target:#x}")
    assert d.execute("c").startswith("breakpoint 1: SQE pc 0x000a")
    assert d.emu.main.pc == target and d.emu.main.steps == target
    d.execute("b 10")  # the same pc, in decimal
    assert d.execute("delete 1") == "deleted breakpoint 1"
    assert d.execute("delete") == "deleted 1 breakpoint"
    assert d.execute("b") == "no breakpoints"
    assert d.execute("c").startswith("idle")


def test_packet_breakpoints_by_name_opcode_pkt4_and_register():
    d = dbg_a630()
    run_cmds(d, "p CP_ME_INIT 0", "RB_RENDER_CNTL 1 2", "p RB_DEPTH_CNTL 9",
             "CP_NOP 1 2 3", "p #0x10 4")
    run_cmds(d, "b packet RB_RAS_MSAA_CNTL", "b packet #0x10")
    out = d.execute("c")
    assert out.startswith("packet breakpoint 1: PKT4 RB_RENDER_CNTL (2 dwords) on SQE")
    p = d.emu.main
    assert p.pc == p.jmptbl[DB.pm4_packet_id("PKT4")] and p.packets == 2
    out = d.execute("c")  # RB_DEPTH_CNTL does not cover RB_RAS_MSAA_CNTL: the next is CP_NOP
    assert out.startswith("packet breakpoint 2: CP_NOP (3 dwords) on SQE")
    assert p.packets == 4 and d.emu.read_reg("gpu", "RB_DEPTH_CNTL") == 9
    assert d.execute("c").startswith("packet breakpoint 2: CP_NOP (1 dwords)")
    assert d.execute("c").startswith("idle")
    assert d.execute("# a comment") == ""
    assert d.execute("#16 7").startswith("queued CP_NOP (1 dwords)")  # by opcode number
    assert d.execute("c").startswith("packet breakpoint 2: CP_NOP (1 dwords)")
    d.execute("b packet PKT4")
    d.execute("p RB_DEPTH_CNTL 3")
    assert d.execute("c").startswith("packet breakpoint 3: PKT4 RB_DEPTH_CNTL")


def test_next_stops_at_each_packet_handler():
    d = dbg_a630()
    run_cmds(d, "p CP_ME_INIT 0", "p CP_NOP 5", "p CP_MEM_WRITE 0x1000 0 7")
    names = []
    for _ in range(3):
        out = d.execute("n")
        names.append(out.splitlines()[0])
        p = d.emu.main
        assert p.pc == p.jmptbl[(p.header >> 16) & 0x7F]
    assert names == ["packet CP_ME_INIT (1 dwords)", "packet CP_NOP (1 dwords)",
                     "packet CP_MEM_WRITE (3 dwords)"]
    assert d.execute("n").startswith("idle: waiting for a packet")
    assert d.emu.read_mem(0x1000) == [7]


def test_mesa_run_stops_after_waitin_and_step_counts():
    d = dbg_a630()
    out = d.execute("s 5")
    assert d.emu.main.steps == 5 and d.emu.main.pc == 5
    assert len([x for x in out.splitlines() if x.startswith("=>")]) == 1
    out = d.execute("r")  # the boot code ends with waitin: stop before its delay slot
    last = out.splitlines()[-1]
    assert "waitin delay slot" in last and "mov $01, $data" in last
    p = d.emu.main
    assert p.image[p.pc - 1] == 0xD8000000  # waitin
    assert d.execute("r").startswith("idle: waiting for a packet")
    d.execute("p CP_NOP")
    out = d.execute("r")  # delay slot, dispatch, CP_NOP's handler up to its waitin
    assert p.packets == 1 and "waitin delay slot" in out.splitlines()[-1]


def test_trace_shows_each_instruction_and_its_changes():
    d = dbg_a630(trace=True)
    out = d.execute("s 4").splitlines()
    assert out[0] == "\t0000: 016ee17a  [016ee17a]"
    assert out[3] == "\t0003: 88020001  mov $02, 0x1"
    assert out[4] == PAD + "GPR:  $02: 00000001"
    assert out[5].startswith("=> 0004: a8020080  cwrite $02, [$00 + 0x080]")
    assert d.execute("trace off") == "trace off"
    assert d.execute("s").splitlines()[0].startswith("=> 0005")


def test_step_limit_stops_a_run():
    d = dbg_a630(max_steps=10)  # no (rep) in the first boot instructions
    out = d.execute("c")
    assert out.startswith("stopped: step limit of 10 reached")
    assert d.emu.main.steps == 10
    assert d.execute("limit 7") == "step limit of one run: 7"
    d.execute("c")
    assert d.emu.main.steps == 17


def test_stream_ending_inside_a_packet_and_bad_header():
    d = dbg_a630()
    d.execute("p CP_ME_INIT 0")
    d.execute(f"raw {pkt7_header(DB.pm4_packet_id('CP_MEM_WRITE'), 4):#x} 0x30000")
    out = d.execute("c")
    assert out.startswith("error: SQE: the command stream ended inside a packet ($rem = 3)")
    assert len(out.splitlines()) == 2  # the error, then where
    # as at Mesa's "FIFO empty, input a packet!": queue the rest and go on
    d.execute("raw 0 0x77")
    assert "($rem = 1)" in d.execute("c")
    d.execute("raw 0x88")
    assert d.execute("c").startswith("idle")
    assert d.emu.read_mem(0x30000, 3) == [0x77, 0x88, 0]
    assert [e.addr for e in d.emu.effects if e.kind == "mem"] == [0x30000, 0x30004]
    d2 = dbg_a630()
    d2.execute("p CP_ME_INIT 0")
    d2.execute("raw 0x12345678")
    out = d2.execute("c")
    assert out.startswith("error: SQE: bad packet header 12345678")
    pc, packets = d2.emu.main.pc, d2.emu.main.packets
    assert d2.execute("c").startswith("error: SQE: bad packet header")  # not executed
    assert (d2.emu.main.pc, d2.emu.main.packets) == (pc, packets)
    assert d2.execute("drop") == "dropped 12345678"
    d2.execute("p CP_MEM_WRITE 0x3000 0 5")
    assert d2.execute("c").startswith("idle")
    assert d2.emu.read_mem(0x3000) == [5]


@pytest.mark.parametrize("cmd, message", [
    ("bogus", "unknown command 'bogus'"),
    ("s x", "expected a step count, found 'x'"),
    ("s 0", "the step count must be at least 1"),
    ("d x", "invalid option: 'x'"),
    ("w r $00 1", "$00 is always zero"),
    ("w r $20 1", "unknown GPR '$20'"),
    ("w r $02 0x100000000", "does not fit in 32 bits"),
    ("w r $02", "usage: w r NAME VALUE"),
    ("w g NO_SUCH_REG 1", "unknown gpu register 'NO_SUCH_REG'"),
    ("d c 0x5000", "control register 0x5000 out of range"),
    ("d m 0x1002", "not 4-byte aligned"),
    ("w m -4 1", "not a 64-bit address"),
    ("p CP_NO_SUCH 1", "'CP_NO_SUCH' is neither a PM4 packet nor a register name"),
    ("p CP_NOP zz", "expected a number, found 'zz'"),
    ("b no_such_label", "no label 'no_such_label'"),
    ("b 0x100000", "outside the SQE image"),
    ("b packet CP_NOPE", "neither a PM4 packet"),
    ("delete 9", "no breakpoint 9"),
    ("proc XYZ", "no processor 'XYZ'"),
    ("trace maybe", "usage: trace on|off"),
    ("feed /no/such/file", "No such file or directory"),
    ("drop 3", "cannot drop 3"),
])
def test_bad_commands_give_one_line_and_the_session_goes_on(cmd, message):
    d = dbg_a630()
    out = d.execute(cmd)
    assert out.startswith("error: ") and message in out and "\n" not in out, out
    assert not d.done
    assert d.execute("s").startswith("=> 0001")


def test_mesa_sub_prompts_read_the_rest_on_the_next_line():
    d = dbg_a630()
    assert d.execute("d") == "" and d.prompt.startswith("  dump: GPR (r)egisters")
    out = d.execute("r")
    assert len(out.splitlines()) == 32 and d.prompt == PROMPT
    assert d.execute("w") == "" and d.execute("c") == ""
    assert d.prompt.startswith("    Control register (name or offset) and value")
    assert d.execute("SCRATCH_REG0 0x42") == ""
    assert d.execute("dc SCRATCH_REG0") == PAD + "CTRL: @SCRATCH_REG0: 00000042"
    assert d.execute("p") == "" and "Enter packet" in d.prompt
    assert d.execute("CP_NOP 1 2").startswith("queued CP_NOP (2 dwords)")
    assert d.emu.roq()["RB"][1:] == [1, 2]


def test_help_and_quit():
    d = dbg_a630()
    for h in ("h", "?", "help"):
        text = d.execute(h)
        for letter in ("s [N]", "d r|s", "w m ADDR", "p CP_NAME", "continue", "break", "view"):
            assert letter in text
    assert not d.done
    assert d.execute("q") == "" and d.done


def test_view_highlights_pc_with_labels_registers_and_roq():
    d = dbg_a630()
    run_cmds(d, "p CP_ME_INIT 0", "p CP_MEM_WRITE 0x20000 0 0xdead", "b 0x5a5", "b CP_MEM_WRITE")
    d.execute("c")
    text = d.execute("view")
    p = d.emu.main
    cur = [x for x in text.splitlines() if "=>" in x]
    assert len(cur) == 1 and f"{p.pc:04x}: {p.image[p.pc]:08x}" in cur[0]
    assert "=>*" in cur[0]  # a breakpoint is set here too
    assert "CP_MEM_WRITE:" in text and "*05a5" in text
    hdr = pkt7_header(DB.pm4_packet_id("CP_MEM_WRITE"), 3)
    assert "$01" in text and f"{hdr:08x}" in text  # the CP_MEM_WRITE header in $01
    assert "rest of the current packet ($rem 3)" in text
    assert "\x1b[" not in text  # no colour unless asked
    colour = Debugger(d.emu, trace=False, color=True).render_view()
    assert "\x1b[" in colour
    assert d.execute("view on") == "view after each run: on"
    assert "registers" in d.execute("s")


def test_regs_roq_and_proc():
    d = dbg_a630()
    run_cmds(d, "p CP_ME_INIT 0", "c", "p CP_NOP 1 2", "RB_RENDER_CNTL 3")
    regs = d.execute("regs").splitlines()
    assert regs[0].startswith("SQE: pc ") and "packets 1" in regs[0]
    assert len(regs) == 5 and "$rem=00000000" in regs[4]
    roq = d.execute("roq").splitlines()
    assert roq[1] == "RB: 5 dwords"
    assert roq[2].startswith("  CP_NOP (2 dwords): 00000001 00000002")
    assert roq[3].startswith("  PKT4 RB_RENDER_CNTL (1 dwords): 00000003")
    assert d.execute("proc").startswith("* SQE: pc ")


# -- small firmware of our own ------------------------------------------------------------------
LOOP_FW = """[016ee001]
        mov $02, 0x0
loop:
        add $02, $02, 0x1
        call #fxn
        nop
        brne $02, 0x5, #loop
        nop
        waitin
        mov $01, $data
fxn:
        add $03, $03, 0x2
        ret
        nop
"""


def test_own_firmware_breakpoints_call_stack_and_delay_slots():
    d = Debugger(Emulator(assemble(LOOP_FW)), trace=False)
    assert d.execute("b fxn9").startswith("breakpoint 1: pc 0x0009")  # Mesa names it fxn9
    for i in range(1, 6):
        out = d.execute("c")
        assert out.startswith("breakpoint 1: SQE pc 0x0009")
        assert d.emu.read_gpr(2) == i and d.emu.read_gpr(3) == 2 * (i - 1)
        regs = d.execute("regs").splitlines()[0]
        assert "call stack [0x0005]" in regs  # call at pc 3 returns to 3 + 2
    assert d.execute("c").startswith("idle")
    assert d.emu.read_gpr(3) == 10
    # a pc in a delay slot is shown as such
    d2 = Debugger(Emulator(assemble(LOOP_FW)), trace=False)
    d2.execute("s 4")  # the version word (a nop), mov, add, call: at the call's delay slot
    assert d2.execute("where").startswith("=> 0004: 01000000  nop")
    assert "(delay slot, then to 0x0009)" in d2.execute("where")


def test_own_firmware_runaway_is_stopped_by_the_limit():
    fw = assemble("[016ee001]\nspin:\n        jump #spin\n        nop\n")
    d = Debugger(Emulator(fw), trace=False, max_steps=1000)
    assert d.execute("c").startswith("stopped: step limit of 1000 reached")
    assert d.emu.main.steps == 1000


def test_demo_firmware_packet_label():
    from importlib import resources

    src = (resources.files("isaforge") / "examples" / "afuc" / "demo_a6xx.asm").read_text()
    d = Debugger(Emulator(assemble(src)), trace=True)
    run_cmds(d, "p CP_MEM_WRITE 0x10000 0 0xdeadbeef 0xcafebabe", "b CP_MEM_WRITE")
    out = d.execute("c")
    assert out.splitlines()[-2].startswith("breakpoint 1")
    assert "<CP_MEM_WRITE>" in out.splitlines()[-1]
    out = d.execute("r")
    assert PAD + "MEM:  0x0000000000010004: 0xcafebabe" in out.splitlines()
    assert d.emu.read_mem(0x10000, 2) == [0xDEADBEEF, 0xCAFEBABE]


def test_a530_pfp_and_me_processors():
    pfp = refdata("afuc", "firmware", "a530_pfp.fw").read_bytes()
    me = refdata("afuc", "firmware", "a530_pm4.fw").read_bytes()
    d = Debugger(Emulator(pfp, me_firmware=me), trace=False)
    assert [line[2:5] for line in d.execute("proc").splitlines()] == ["PFP", "ME:"[:3]]
    d.execute("p CP_ME_INIT " + " ".join(["0"] * 8))
    d.execute("p RB_RENDER_CNTL 0x11")
    assert d.execute("c").startswith("idle: every processor")
    assert d.emu.read_reg("gpu", "RB_RENDER_CNTL") == 0x11
    out = d.execute("proc ME")
    assert out.splitlines()[1].startswith("* ME")
    assert d.execute("regs").startswith("ME: pc ")
    assert d.emu.proc("ME").packets >= 2


# -- the command line ---------------------------------------------------------------------------
def test_cli_script_on_stdin_and_eof_quits(tmp_path):
    stream = tmp_path / "s.txt"
    stream.write_text("CP_ME_INIT 0\nCP_MEM_WRITE 0x20000 0 0x99\n")
    fw = refdata("afuc", "firmware", "a630_sqe.fw")
    res = CliRunner().invoke(cli_main, ["afuc", "debug", str(fw), "-s", str(stream),
                                        "--no-trace", "-x", "b packet CP_MEM_WRITE"],
                             input="c\nbogus\nc\nd m 0x20000\n")
    assert res.exit_code == 1, res.output  # the session went on, but a command failed
    lines = res.output.splitlines()
    assert lines[0].startswith("afuc debugger: a630 firmware 016ee17a (a6xx), processor SQE")
    assert f"{PROMPT}b packet CP_MEM_WRITE" in lines
    assert "packet breakpoint 1: CP_MEM_WRITE (3 dwords) on SQE" in lines
    assert "error: unknown command 'bogus'; 'h' lists the commands" in lines
    assert lines[-1] == PAD + "MEM:  0x0000000000020000: 0x00000099"
    assert "Traceback" not in res.output


def test_cli_errors_are_one_line(tmp_path):
    res = CliRunner().invoke(cli_main, ["afuc", "debug", str(tmp_path / "nope.fw")],
                             input="q\n")
    assert res.exit_code == 1
    assert res.output.strip().startswith("isaforge: error:") and "nope.fw" in res.output
    bad = tmp_path / "bad.fw"
    bad.write_bytes(b"\0" * 12)
    res = CliRunner().invoke(cli_main, ["afuc", "debug", str(bad)], input="q\n")
    assert res.exit_code == 1 and "unknown firmware id" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_repl_reads_a_stream_and_stops_at_quit():
    import io

    d = dbg_a630()
    shown: list[str] = []
    repl(d, io.StringIO("s\nq\ns\n"), shown.append, interactive=False)
    assert shown[1] == f"{PROMPT}s" and shown[3] == f"{PROMPT}q"
    assert d.done and d.emu.main.steps == 1 and len(shown) == 4


def test_ib1_in_memory_shown_in_the_roq_while_it_runs():
    from isaforge.afuc.machine.stream import pkt4_header

    d = dbg_a630()
    ib = [pkt4_header(DB.gpu_reg("RB_RENDER_CNTL"), 2), 0x11, 0x22,
          pkt7_header(DB.pm4_packet_id("CP_NOP"), 1), 5]
    out = d.execute("p @0x40000: " + " ".join(map(hex, ib)))
    assert out == "placed 5 dwords in GPU memory at 0x40000"
    assert d.emu.read_mem(0x40000, 5) == ib
    run_cmds(d, "p CP_ME_INIT 0", f"p CP_INDIRECT_BUFFER 0x40000 0 {len(ib)}", "p CP_NOP 9",
             "b packet RB_RENDER_CNTL")
    assert d.execute("c").startswith("packet breakpoint 1: PKT4 RB_RENDER_CNTL (2 dwords)")
    assert d.execute("roq").splitlines() == [
        "SQE reads $data from IB1 (IB_LEVEL 1)",
        "RB: 2 dwords", "  CP_NOP (1 dwords): 00000009",
        "IB1: 4 dwords", "  rest of the current packet ($rem 2): 00000011 00000022",
        "  CP_NOP (1 dwords): 00000005",
        "SDS: 0 dwords"]
    assert d.execute("c").startswith("idle")
    assert d.emu.read_reg("gpu", "RB_RAS_MSAA_CNTL") == 0x22
    assert d.emu.roq()["RB"] == [] and d.emu.main.packets == 6  # incl. IN_IB_END


def test_a7xx_br_starts_bv_and_lpac_and_each_can_be_debugged():
    fw = refdata("afuc", "mesa-tests", "reference", "afuc_test_a7xx.fw").read_bytes()
    d = Debugger(Emulator(fw), trace=False)
    assert d.execute("proc").splitlines() == ["* BR: pc 0x0000, 0 instructions, 0 packets"]
    assert d.execute("c").startswith("idle: every processor waits for a packet")
    assert [x[2:4] for x in d.execute("proc BV").splitlines()] == ["BR", "BV", "LP"]
    bv = d.emu.proc("BV")
    assert d.execute("regs").startswith(f"BV: pc {bv.pc:#06x}")
    handler = bv.jmptbl[DB.pm4_packet_id("CP_NOP")]
    assert d.execute("b CP_NOP") == f"breakpoint 1: pc {handler:#06x} on BV (CP_NOP)"
    assert "(BV ring buffer" in d.execute("p CP_NOP 1")
    assert d.execute("c").startswith(f"breakpoint 1: BV pc {bv.pc:#06x}")
    assert bv.packets == 1 and d.emu.proc("BR").packets == 0


WORDS = ["s", "r", "c", "n", "d", "w", "p", "b", "delete", "regs", "roq", "view", "mem", "raw",
         "drop", "proc", "trace", "limit", "where", "h", "r", "c", "g", "m", "s", "p", "packet",
         "$02", "$rem", "$data", "SP", "SCRATCH_REG0", "RB_RENDER_CNTL", "NRT_ADDR", "CP_NOP",
         "CP_MEM_WRITE", "CP_ME_INIT", "PKT4", "#16", "0", "1", "3", "0x20000", "0x1002", "-1",
         "0xffffffff", "0x100000000", "x", "*", "on", "off", "all", "@0x1000:", "BV"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
                min_size=1, max_size=12))
def test_random_command_lines_never_break_the_session(lines):
    """Whatever is typed, each line gives text (an error is one 'error:' line) and no
    internal error; the session keeps answering."""
    d = dbg_a630(max_steps=3000)
    for line in lines:
        out = d.execute(line)
        assert isinstance(out, str)
        assert "error: internal" not in out, (line, out)
        errors = [x for x in out.splitlines() if x.startswith("error:")]
        assert len(errors) <= 1, (line, out)
        if d.done:
            break
    if not d.done:
        if d.prompt != PROMPT:  # a Mesa sub-prompt waits: any bad answer leaves it
            assert d.execute("zz").startswith("error: ") and d.prompt == PROMPT
        assert d.execute("where").startswith("=> ")


def test_session_goes_on_after_an_emulation_error():
    """An error the firmware runs into is reported where it happened, and the session stays
    on that processor (it used to keep the processor object as its name, so every later
    command failed)."""
    d = Debugger(Emulator(assemble("[016ee001]\nret\nnop\nwaitin\nnop\n")), trace=False)
    out = d.execute("s 3")
    assert out.splitlines()[0] == "error: SQE: ret with an empty call stack"
    assert out.splitlines()[1].startswith("=> 0001: ")
    assert d.current == "SQE"
    assert d.execute("regs").startswith("SQE: pc 0x0001")
