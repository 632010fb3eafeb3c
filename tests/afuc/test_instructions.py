"""Encodings of individual afuc instructions, per generation, through assemble/disassemble."""

from __future__ import annotations

import struct

import pytest

from isaforge.afuc import assemble, disassemble
from isaforge.core.errors import AsmError

VERSION = {"a530": "[005ff001]", "a630": "[016ee001]", "a730": "[01730001]"}


def words(src: str, gpu: str) -> list[int]:
    data = assemble(f"{VERSION[gpu]}\n{src}\n", gpu=gpu)
    return list(struct.unpack(f"<{len(data) // 4}I", data))[2:]


# (gpu, source, word) checked against real firmware or Mesa's reference encodings
CASES = [
    ("a630", "mov $02, 0x1", 0x88020001),
    ("a630", "cwrite $02, [$00 + @REG_READ_DWORDS]", 0xA8020026),
    ("a630", "mov $0a, $regdata", 0x981E5006),
    ("a630", "or $0a, $0a, $regdata", 0x995E5006),
    ("a630", "mov $05, 0x2c << 16", 0x8A05002C),
    ("a630", "or $05, $05, 0x2c", 0x30A5002C),
    ("a630", "addhi $04, $04, $00", 0x98802002),
    ("a630", "waitin", 0xD8000000),
    ("a630", "mov $01, $data", 0x981F0806),
    ("a630", "nop", 0x01000000),
    ("a530", "nop", 0x00000000),
    ("a630", "setsecure $02, #x\nnop\nnop\nx:", 0xEC000000),
    ("a730", "l: jump $lr", 0xDF70001B),
    ("a730", "sret", 0xDF600000),
    ("a730", "l: jumpa #l", 0xE4000001),  # l is word 1, after the version
    ("a730", "l: bl #l", 0xE0000001),
    ("a630", "mov $sp, $lr", 0x981BD006),
]


@pytest.mark.parametrize(("gpu", "src", "word"), CASES)
def test_encoding(gpu: str, src: str, word: int) -> None:
    got = words(src, gpu)
    assert got[0] == word, f"{src}: {got[0]:08x} != {word:08x}"
    # and it disassembles back to the same text (labels aside)
    text = next(disassemble([word], gpu=gpu)).text
    assert words(text, gpu)[0] == word  # out-of-range targets print as raw values


def test_a7xx_only_instructions_are_literals_before_a7xx() -> None:
    for w in (0xDF70001B, 0xDF600000, 0xE4000000):
        assert next(disassemble([w], gpu="a630")).mnemonic == "[literal]"
        assert next(disassemble([w], gpu="a730")).mnemonic in ("jump", "sret", "jumpa")
    with pytest.raises(AsmError, match="unknown instruction 'sret' for a6xx"):
        words("sret", "a630")


def test_generation_specific_opcodes() -> None:
    # shl moved in a7xx: register form opcode and a 12-bit immediate group
    assert words("shl $02, $02, $03", "a630")[0] != words("shl $02, $02, $03", "a730")[0]
    assert words("shl $02, $02, 0x2", "a730")[0] >> 27 == 0b10010
    with pytest.raises(AsmError, match="does not fit"):
        words("shl $02, $02, 0x1000", "a730")
    with pytest.raises(AsmError, match="unknown instruction 'ubfx' for a6xx"):
        words("ubfx $02, $03, b1, b2", "a630")


def test_instruction_objects() -> None:
    ins = list(disassemble([0xA8020026, 0x981E5006], gpu="a630"))
    assert (ins[0].address, ins[0].mnemonic, ins[0].op_str) == (
        0, "cwrite", "$02, [$00 + @REG_READ_DWORDS]")
    assert ins[1].bytes == bytes.fromhex("06501e98") and (ins[1].address, ins[1].size) == (4, 4)
    assert ins[1].name == "or" and ins[1].fields["SRC1"] == 0 and ins[1].text == "mov $0a, $regdata"


def test_jumptable_and_sections() -> None:
    src = ("[016ee001]\n[#jumptbl]\nCP_NOP:\nwaitin\nmov $01, $data\nUNKN3:\nnop\n"
           "jumptbl:\n.jumptbl\n")
    w = list(struct.unpack("<134I", assemble(src)))
    assert w[2] == 0x01000000 | 5  # NOP literal holding the table offset
    table = w[6:134]
    assert table[0x10] == 2 and table[3] == 4 and table[0] == 0
    a7 = assemble("[01730001]\nwaitin\n.section BV\n[01000001]\nwaitin\n")
    n = len(a7) // 4
    assert n == 1 + 8 + 2  # zero, 32-byte-aligned first section, second section
