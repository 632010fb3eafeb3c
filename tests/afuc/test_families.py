"""Firmware shapes of the a6xx/a7xx families beyond the three reference files: an a660-style
image with an LPAC section, and boot code that checks the GPU it runs on (the a650/a660 files
in the wild carry each other's ids)."""

from __future__ import annotations

import pytest

from isaforge.afuc import assemble, listing
from isaforge.core.errors import FirmwareError

A660_WITH_LPAC = """\
[016dd001]
[#jumptbl]
        mov $01, 0x830
        mov $02, 0x2
        cwrite $01, [$00 + @REG_READ_ADDR]
        cwrite $02, [$00 + @REG_READ_DWORDS]
        mov $03, $regdata
        mov $04, $regdata
        mov $05, #lpac_image
        shl $05, $05, 0x2
        add $06, $03, $05
        addhi $07, $04, $00
        mov $08, CP_LPAC_SQE_INSTR_BASE
        cwrite $08, [$00 + @REG_WRITE_ADDR]
        cwrite $06, [$00 + @REG_WRITE]
        cwrite $07, [$00 + @REG_WRITE]
        mov $05, #jumptbl
        shl $05, $05, 0x2
        add $03, $03, $05
        addhi $04, $04, $00
        mov $rem, 0x80
        cwrite $03, [$00 + @MEM_READ_ADDR]
        cwrite $04, [$00 + @MEM_READ_ADDR+1]
        cwrite $rem, [$00 + @MEM_READ_DWORDS]
        cwrite $00, [$00 + @PACKET_TABLE_WRITE_ADDR]
        (rep)cwrite $memdata, [$00 + @PACKET_TABLE_WRITE]
        waitin
        mov $01, $data
CP_NOP:
        waitin
        mov $01, $data
jumptbl:
.jumptbl
.align 32
lpac_image:
.section LPAC
[01000001]
[#jumptbl]
        mov $01, CP_LPAC_SQE_INSTR_BASE
        mov $02, 0x2
        cwrite $01, [$00 + @REG_READ_ADDR]
        cwrite $02, [$00 + @REG_READ_DWORDS]
        mov $03, $regdata
        mov $04, $regdata
        mov $05, #jumptbl
        shl $05, $05, 0x2
        add $03, $03, $05
        addhi $04, $04, $00
        mov $rem, 0x80
        cwrite $03, [$00 + @MEM_READ_ADDR]
        cwrite $04, [$00 + @MEM_READ_ADDR+1]
        cwrite $rem, [$00 + @MEM_READ_DWORDS]
        cwrite $00, [$00 + @PACKET_TABLE_WRITE_ADDR]
        (rep)cwrite $memdata, [$00 + @PACKET_TABLE_WRITE]
        waitin
        mov $01, $data
CP_EXEC_CS:
        waitin
        mov $01, $data
jumptbl:
.jumptbl
"""


def test_a6xx_lpac_section_is_found_and_round_trips() -> None:
    fw = assemble(A660_WITH_LPAC)
    text = listing(fw)
    main, _, lpac = text.partition("\n.section LPAC\n;\n; LPAC microcode:\n;\n")
    assert lpac, "the LPAC section was not found"
    # each image's own handler is named from its own packet table
    assert "\nCP_NOP:\nwaitin\n" in main and "\nCP_EXEC_CS:\nwaitin\n" not in main
    assert "\nCP_EXEC_CS:\nwaitin\n" in lpac and "\nCP_NOP:\nwaitin\n" not in lpac
    assert main.count("jumptbl:\n.jumptbl\n") == 1 and lpac.count("jumptbl:\n.jumptbl\n") == 1
    assert assemble(text) == fw


CHECKS_GPU = """\
[016dc001]
[#jumptbl]
        cread $02, [$00 + 0x000]
        ushr $02, $02, 0x1c
        breq $02, 0x3, #ok          ; the a660 reports 3 in control register 0 bits 28..31
        nop
spin:
        jump #spin
        nop
ok:
        mov $03, 0x80
        waitin
        mov $01, $data
jumptbl:
.jumptbl
"""


def test_boot_code_that_never_finishes_names_gpu_option() -> None:
    fw = assemble(CHECKS_GPU)  # id 0x6dc says a650; the code wants an a660
    with pytest.raises(FirmwareError, match="--gpu"):
        listing(fw)
    text = listing(fw, gpu="a660")
    assert text.startswith("; a6xx microcode\n")
    assert listing(fw, gpu="6dd") == text
    assert assemble(text) == fw
