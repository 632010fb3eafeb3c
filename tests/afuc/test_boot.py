"""Boot-code runs for the disassembler (``boot.run_boot_code``): the emulator's processor in
bootstrap mode, the one executor of afuc instructions in the project."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.afuc import Emulator, assemble
from isaforge.afuc.boot import boot, run_boot_code
from isaforge.afuc.image import load_firmware
from isaforge.afuc.machine import StepLimitError
from isaforge.core.errors import EmulationError, FirmwareError
from tests.refdata import refdata

A6, A7 = "[016ee001]\n", "[01730001]\n"


def test_a630_boot_run_is_the_emulator_boot():
    """On real firmware (whose boot code reads no $data) the bootstrap run and an exact
    emulator run to the first waitin are the same machine: steps, pc, registers, table."""
    data = refdata("afuc", "firmware", "a630_sqe.fw").read_bytes()
    booted = run_boot_code(load_firmware(data))
    emu = Emulator(data)
    assert emu.run(exact=True) == "idle"
    p = emu.main
    assert booted.waitin_pending and p.waitin_pending
    assert (booted.steps, booted.pc, booted.gpr, booted.carry) == (p.steps, p.pc, p.gpr, p.carry)
    assert booted.jmptbl == p.jmptbl
    assert any(booted.jmptbl)
    assert np.array_equal(booted.control, p.control)
    assert np.array_equal(booted.sqe, p.sqe)
    assert np.array_equal(booted.emu.gpu, emu.gpu)


def test_data_read_ends_the_boot_run():
    """Reading $data gives 0 and ends the run after that instruction (nothing after it)."""
    fw = load_firmware(assemble(A6 + """
mov $02, 0x5
mov $03, 0x9
mov $03, $data
mov $04, 0x7
waitin
nop
"""))
    p = run_boot_code(fw)
    assert p.bootq is not None and p.bootq.finished
    assert not p.waitin_pending
    assert [p.gpr[n] for n in (2, 3, 4)] == [5, 0, 0]
    assert (p.pc, p.steps) == (4, 4)  # pc 0 is the version word (a nop)


def test_peek_ends_the_boot_run():
    fw = load_firmware(assemble(A6 + """
mov $02, 0x3
(peek)add $03, $02, $data
mov $04, 0x7
waitin
nop
"""))
    p = run_boot_code(fw)
    assert p.bootq.finished
    assert [p.gpr[n] for n in (3, 4)] == [3, 0]


def test_a7xx_cntl_writes_only_acknowledge():
    """@BV_CNTL/@LPAC_CNTL in a boot-code run clear their @THREAD_SYNC bits (as the started
    processor would) but start nothing."""
    fw = load_firmware(assemble(A7 + """
mov $02, 0x6
cwrite $02, [$00 + @THREAD_SYNC]
mov $03, 0x1
cwrite $03, [$00 + @BV_CNTL]
cread $04, [$00 + @THREAD_SYNC]
cwrite $03, [$00 + @LPAC_CNTL]
cread $05, [$00 + @THREAD_SYNC]
waitin
nop
"""))
    p = run_boot_code(fw)
    assert [q.name for q in p.emu.procs] == ["BR"]
    assert [p.gpr[4], p.gpr[5]] == [0x4, 0x0]


def test_bv_image_boot_run_at_its_offset():
    """A BV image boots from its own offset, seeing its base in @BV_INSTR_BASE."""
    main = assemble(A7 + "waitin\nnop\n")
    sub = assemble(A7 + """
cread $02, [$00 + @BV_INSTR_BASE]
mov $03, $02
waitin
nop
""")
    words = list(memoryview(main).cast("I")) + list(memoryview(sub).cast("I"))[1:]
    fw = load_firmware(b"".join(w.to_bytes(4, "little") for w in words))
    main_len = len(main) // 4 - 1  # the image from the version dword on
    p = run_boot_code(fw, "BV", main_len)
    assert p.name == "BV" and p.waitin_pending
    assert p.steps == 4  # its version dword, cread, mov, waitin
    assert p.gpr[3] == p.base == run_boot_code(fw).base + 4 * main_len


def test_runaway_boot_code_is_stopped():
    fw = load_firmware(assemble(A6 + "l0:\njump #l0\nnop\n"))
    with pytest.raises(StepLimitError, match="step limit of 500"):
        run_boot_code(fw, max_steps=500)
    with pytest.raises(FirmwareError, match="did not reach waitin: step limit"):
        boot(fw, "SQE", 0)


def test_bad_kind_and_a5xx_refused():
    fw = load_firmware(assemble(A6 + "waitin\nnop\n"))
    with pytest.raises(EmulationError, match="unknown processor"):
        run_boot_code(fw, "ME")
    a5 = load_firmware(refdata("afuc", "firmware", "a530_pfp.fw").read_bytes())
    with pytest.raises(EmulationError, match="a5xx"):
        run_boot_code(a5)
