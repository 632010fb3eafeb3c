"""The Gpu API and the parts around the VPs: control processor, memory controller, CCB,
TMEM, OMEM image, and bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

from isaforge import theia
from isaforge.cli import main
from isaforge.core.errors import EmulationError
from isaforge.theia.machine.ccb import Message, route
from isaforge.theia.machine.dumps import omem_rgba
from isaforge.theia.machine.gpu import Gpu
from tests.refdata import refdata

EOF = 1 << 58 | 1 << 48


def imm(dst: int, value: int, we: int = 7, mode: int = 4, op: int = 1) -> int:
    return 1 << 63 | op << 48 | mode << 45 | we << 42 | dst << 34 | value


def reg(op: int, dst: int, a1: int, a0: int, we: int = 7, *, sw0: int = 0, sign0: int = 0,
        branch: int = 0, bop: int = 0, scop: int = 0) -> int:
    return (scop << 59 | branch << 57 | bop << 54 | op << 48 | we << 42 | dst << 34 | a1 << 17
            | sign0 << 14 | sw0 << 8 | a0)


def cp(text: str) -> list[int]:
    return theia.assemble(text, cp=True)


def test_gpu_runs_a_program_loaded_into_a_vp() -> None:
    gpu = Gpu(cores=4)
    assert len(gpu.vps) == 4
    gpu.load_vp(1, [imm(10, 5), imm(12, 0x30000), reg(1, 11, 10, 10), reg(3, 13, 12, 12, scop=4),
                    reg(4, 14, 12, 12), EOF])
    result = gpu.run()
    assert result.finished == [1] and result.ended == "done"
    assert tuple(gpu.registers(1)[11]) == (10, 10, 10)
    assert gpu.register(1, 13) == (0x48000,) * 3  # 1.5 * 1.5 in Q17 (MUL scop bit 61)
    assert gpu.register(1, 14) == (0x20000,) * 3  # sqrt(1.5): the fraction is dropped first
    assert gpu.vps[1].instructions == 5


def test_step_executes_one_instruction_at_a_time() -> None:
    gpu = Gpu(cores=1)
    gpu.load_vp(0, [imm(10, 1), imm(11, 2), EOF])
    assert gpu.step() and gpu.register(0, 10) == (1, 1, 1) and gpu.register(0, 11) == (0, 0, 0)
    assert gpu.step() and gpu.register(0, 11) == (2, 2, 2)
    assert not gpu.step()
    assert not gpu.vps[0].running


def test_branch_loop_and_runaway_error() -> None:
    # R10 = 0; loop: R10 += 1 (x lane); if R10.x - 3 != 0 goto loop
    prog = [imm(10, 0), imm(11, 3),
            reg(1, 10, 10, 0, sw0=0b10_00_01),  # R10 = R10 + R0.yyy
            reg(1, 2, 10, 11, we=0, sign0=0b111, branch=1, bop=2),  # R10-R11 != 0: goto 2
            EOF]
    gpu = Gpu(cores=1)
    gpu.write_register(0, 0, (0, 1, 2))
    gpu.load_vp(0, prog)
    result = gpu.run()
    assert gpu.register(0, 10) == (3, 3, 3)
    assert result.vp_instructions == 2 + 3 * 2
    spin = Gpu(cores=1)
    spin.load_vp(0, [reg(1, 0, 0, 0, we=0, branch=1) | 0 << 34])
    with pytest.raises(EmulationError, match="runaway program.*VP0 at PC 0"):
        spin.run(max_steps=10_000)


def test_bad_configuration_is_an_error() -> None:
    with pytest.raises(EmulationError, match="1 to 16 VPs"):
        Gpu(cores=17)
    with pytest.raises(EmulationError, match="unknown RTL quirk 'bogus'"):
        Gpu(quirks=["bogus"])
    with pytest.raises(EmulationError, match="no VP 4"):
        Gpu().registers(4)
    with pytest.raises(EmulationError, match="CP RAM holds 256"):
        Gpu().load([], [0] * 257)


def test_cp_arithmetic_delay_slot_and_status() -> None:
    gpu = Gpu(cores=1)
    gpu.load([], cp("""
        ASSIGN R10 I(5 )
        ASSIGN R11 I(3 )
        SUB R12 R10 R11
        SHL R13 R10 R11
        ADD R14 R2 R0
        BRANCH R8 R0 R0
        ASSIGN R15 I(1 )
        ASSIGN R16 I(1 )
        NOT R17 R10 R0
        EXIT R0 R0 R0
    """))
    result = gpu.run()
    regs = gpu.cp.regs
    assert (regs[12], regs[13], regs[14]) == (2, 40, 1)
    assert regs[15] == 1  # the delay slot ran
    assert regs[16] == 0  # skipped by the branch
    assert regs[17] == 0xFFFF_FFFA
    assert result.ended == "done" and gpu.cp.exited
    assert any("EXIT is a no-op" in n for n in result.notes)


def test_cp_rtl_quirks_exit_and_not() -> None:
    gpu = Gpu(cores=1, quirks=["cp-exit-noop", "cp-not-noop"])
    gpu.load([], cp("ASSIGN R10 I(5 )\nNOT R17 R10 R0\nEXIT R0 R0 R0"))
    result = gpu.run()
    # runs on through the zero-filled RAM to IP 0, where the program would start over
    assert result.ended == "cp-wrapped" and gpu.cp.wraps == 1
    assert gpu.cp.regs[17] == 0 and gpu.cp.exits_ignored >= 1


def test_copyblock_start_and_mcu_destination() -> None:
    program = [imm(10, 0xACED), EOF]
    gpu = Gpu(cores=4)
    gpu.load(program, cp("""
        ASSIGN R10 I(6 )
        ADD R3 R10 R0
        ASSIGN R11 I(0 )
        ASSIGN R12 I(32768 )
        ASSIGN R13 I(16 )
        SHL R12 R12 R13
        ASSIGN R14 I(2 )
        ASSIGN R13 I(20 )
        SHL R14 R14 R13
        OR R12 R12 R14
        COPYBLOCK DstId: R0 SrcOffset: R11 DstOffsetAndLen: R12
        DELIVERCOMMAND R3 R0 R0
        EXIT R0 R0 R0
    """))
    result = gpu.run()
    assert gpu.mcu.target(gpu.mcu.done[0]) == 2  # DstId 6 -> VP 6 & 3
    assert result.started == [2] and result.finished == [2]
    assert gpu.register(2, 10) == (0xACED,) * 3


def _two_copies(quirks: tuple[str, ...]) -> Gpu:
    gpu = Gpu(cores=2, quirks=quirks)
    gpu.load([(1 << 32) | 2, (3 << 32) | 4, 5 << 32], cp("""
        ASSIGN R10 I(1 )
        ADD R3 R10 R0
        ASSIGN R12 I(16 )
        ASSIGN R13 I(20 )
        SHL R12 R12 R13
        ASSIGN R14 I(7 )
        OR R14 R12 R14
        COPYBLOCK DstId: R0 SrcOffset: R0 DstOffsetAndLen: R12
        COPYBLOCK DstId: R0 SrcOffset: R0 DstOffsetAndLen: R14
        EXIT R0 R0 R0
    """))
    gpu.run()
    return gpu


def test_data_copies_and_back_to_back_requests() -> None:
    # (what the RTL's MCU does with a request made during a copy is the timed run's:
    # test_api_rtl.test_back_to_back_copies_run_only_vp1_forever)
    gpu = _two_copies(())
    assert gpu.register(1, 0) == (1, 2, 3) and gpu.register(1, 1) == (4, 5, 0)
    assert gpu.register(1, 7) == (1, 2, 3)
    assert gpu.mcu.back_to_back == 1
    assert any("copy request(s) made while another" in n for n in gpu.run().notes)


def test_unrouted_copy_and_start_are_reported() -> None:
    gpu = Gpu(cores=4)
    gpu.load([imm(10, 1), EOF], cp("""
        ADD R3 R0 R0
        COPYBLOCK DstId: R0 SrcOffset: R0 DstOffsetAndLen: R0
        DELIVERCOMMAND R32 R0 R0
        EXIT R0 R0 R0
    """))
    result = gpu.run()
    assert result.started == []
    assert any("DstId 0" in n for n in result.notes)
    assert any("message to 32" in n for n in result.notes)
    assert any("no VP was started" in n for n in result.notes)


def test_ccb_routing() -> None:
    assert route(Message(3, 0, 0), 4) == [2]
    assert route(Message(0x80, 0, 0), 4) == [0, 1, 2, 3]
    assert route(Message(32, 0, 0), 4) == []  # 'ALLCORES' without bit 7 reaches nobody
    assert route(Message(0, 0, 0), 4) == []
    assert Message.build(3, 0x1FF, 0x12345).word == 0x03FF2345


def test_tmem_row0_quirk() -> None:
    prog = [imm(10, 5, mode=4), imm(10, 6, we=2), imm(10, 7, we=1),
            reg(6, 11, 10, 0, scop=1), reg(6, 0, 10, 11, we=0), EOF]
    prog[1] = imm(10, 6, we=2)
    for quirks, want in (((), (11, 12, 13)), (("tmem-row0",), (6, 7, 8))):
        gpu = Gpu(cores=1, quirks=quirks)
        gpu.load([], None, range(6, 20))
        gpu.load_vp(0, prog)
        gpu.run()
        assert gpu.register(0, 11) == want
        assert list(gpu.omem(0, 8)[5:8]) == list(want)


def test_omem_image(tmp_path: Path) -> None:
    om = np.zeros(8, dtype=np.uint32)
    written = np.zeros(8, dtype=bool)
    om[:3] = [0x00FF0000, 0x0000FF00, 0x000000FF]
    written[:3] = True
    px = omem_rgba(om, written, 2)
    assert px.shape == (2, 2, 4)
    assert px[0, 0].tolist() == [255, 0, 0, 255] and px[1, 0].tolist() == [0, 0, 255, 255]
    assert px[1, 1].tolist() == [0, 0, 0, 0]  # never written: transparent


def test_run_writes_an_omem_image(tmp_path: Path) -> None:
    out = tmp_path / "o.png"
    r = CliRunner().invoke(main, ["theia", "run", str(refdata("theia", "regressions",
                                                               "test_omem_1")),
                                  "-o", str(tmp_path), "--omem-image", str(out)])
    assert r.exit_code == 0, r.output
    img = Image.open(out)
    assert img.mode == "RGBA" and img.size[0] == 32
    assert img.getpixel((0, 0)) == (0x00, 0xAC, 0xED, 255)  # omem[0] == 0000aced


def test_cli_bad_inputs(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(main, ["theia", "run", str(tmp_path / "missing.vp")])
    assert r.exit_code == 1 and "no such file" in r.output
    (tmp_path / "code.mem").write_text("00000000 00000000\nnot hex\n")
    (tmp_path / "control_code.mem").write_text("0\n")
    r = runner.invoke(main, ["theia", "run", str(tmp_path), "-o", str(tmp_path)])
    assert r.exit_code == 1 and "code.mem:2:1: error" in r.output
    words = [reg(1, 0, 0, 0, we=0, branch=1)]
    (tmp_path / "code.mem").write_text(theia.write_mem(words))
    (tmp_path / "control_code.mem").write_text(theia.write_mem(cp(
        "ASSIGN R1 I(1 )\nADD R3 R1 R0\nASSIGN R2 I(1 )\nASSIGN R4 I(16 )\nASSIGN R5 I(20 )\n"
        "SHL R2 R2 R5\nASSIGN R6 I(31 )\nASSIGN R7 I(1 )\nSHL R7 R7 R6\nOR R2 R2 R7\n"
        "COPYBLOCK DstId: R0 SrcOffset: R0 DstOffsetAndLen: R2\nDELIVERCOMMAND R2 R0 R0\n"
        "EXIT R0 R0 R0"), cp=True))
    r = runner.invoke(main, ["theia", "run", str(tmp_path), "-o", str(tmp_path),
                             "--max-steps", "5000"])
    assert r.exit_code == 1 and "runaway program" in r.output and "Traceback" not in r.output
    (tmp_path / "bad.config").write_text("vp[2].q[1] == 5\n")
    r = runner.invoke(main, ["theia", "check", str(tmp_path / "bad.config"), "--dir",
                             str(tmp_path)])
    assert r.exit_code == 1 and "bad.config:1:1: error" in r.output
    r = runner.invoke(main, ["theia", "run", str(tmp_path), "--rtl-quirk", "nonsense"])
    assert r.exit_code == 2


def test_two_hardware_threads_both_run() -> None:
    from isaforge.theia.machine.loader import load_program

    prog = load_program(refdata("theia", "regressions", "test_multihtread1"))
    gpu = theia.Gpu(cores=4)
    gpu.load(prog.code, prog.control, prog.tmem)
    gpu.run()
    assert gpu.register(2, 66) == (0xACED,) * 3  # thread 0's verdict
    assert gpu.register(2, 67) == (0xACED,) * 3  # thread 1's verdict
    assert gpu.register(2, 131) == (10, 11, 12)  # thread 1's 'b = a + i' after its loop
    assert gpu.register(2, 2)[2] == 0  # the thread switched multithreading off at its end


@pytest.mark.parametrize(("op", "a", "b", "taken"), [
    ("BEQ", 5, 5, True), ("BEQ", 5, 6, False), ("BNE", 5, 6, True), ("BNE", 5, 5, False),
    ("BG", 6, 5, True), ("BG", 5, 5, False), ("BL", 4, 5, True), ("BL", 5, 5, False),
    ("BGE", 5, 5, True), ("BGE", 4, 5, False), ("BLE", 5, 5, True), ("BLE", 6, 5, False),
])
def test_cp_conditional_branches(op: str, a: int, b: int, taken: bool) -> None:
    gpu = Gpu(cores=1)
    gpu.load([], cp(f"""
        ASSIGN R10 I({a} )
        ASSIGN R11 I({b} )
        {op} R6 R10 R11
        NOP R0 R0 R0
        ASSIGN R20 I(1 )
        EXIT R0 R0 R0
        AND R21 R10 R11
        SHR R22 R10 R0
        EXIT R0 R0 R0
    """))
    gpu.run()
    regs = gpu.cp.regs
    assert regs[20] == (0 if taken else 1)
    assert (regs[21], regs[22]) == ((a & b, a) if taken else (0, 0))


@pytest.mark.parametrize("body", ["mul", "alu", "vector", "div"])
def test_the_benchmarks_loop_runs_n_times(body: str) -> None:
    from isaforge.theia.cycle import run_cycles
    from isaforge.theia.demo import LOOP_BODIES, loop_program

    n = 7
    code = loop_program(body, n)
    gpu = Gpu(cores=1)
    gpu.load_vp(0, code)
    gpu.run()
    assert gpu.register(0, 10) == (n, n, n)  # the counter
    result_row = int(LOOP_BODIES[body][1][1:])
    assert gpu.register(0, 66) == gpu.register(0, result_row)  # copied after the loop
    per_iteration = len(LOOP_BODIES[body][0].splitlines()) + 3
    assert gpu.vp(0).instructions == 9 + n * per_iteration + 1 + 1
    model = run_cycles(code)  # the cycle model (as designed) ends with the same registers
    assert [tuple(model.rf[r]) for r in (10, 66)] == [gpu.register(0, r) for r in (10, 66)]
