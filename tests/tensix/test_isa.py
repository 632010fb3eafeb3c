"""The Tensix instruction table, its codec, text round trips, errors and the CLI."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge import tensix
from isaforge.cli import main
from isaforge.core.errors import AsmError, DecodeError
from isaforge.core.isa import bits_unaccounted
from isaforge.tensix.isa import ops, tensix_isa

NAMES = sorted(ops())


def test_table_has_the_137_upstream_instructions() -> None:
    assert len(NAMES) == 137
    opcodes = [op.opcode for op in ops().values()]
    assert len(set(opcodes)) == 137 and all(0 <= o <= 0xFF for o in opcodes)
    assert len(tensix_isa().instrs) == 137 and len(tensix_isa("llk").instrs) == 137


@pytest.mark.parametrize("name", NAMES)
def test_instruction_layout(name: str) -> None:
    op = ops()[name]
    ins = tensix.instr(name)
    assert ins.mask == 0xFF000000 and ins.match == op.opcode << 24
    assert all(0 <= f.low <= f.high <= 23 for f in op.fields)
    # fields in LLK macro order: from the high bits down
    assert [f.low for f in op.fields] == sorted((f.low for f in op.fields), reverse=True)
    assert bits_unaccounted(tensix.instr(name, "llk")) == op.reserved_mask


@st.composite
def _values(draw: st.DrawFn, name: str) -> dict[str, int]:
    return {f.name: draw(st.integers(0, (1 << f.width) - 1)) for f in ops()[name].fields}


@pytest.mark.parametrize("name", NAMES)
def test_encode_decode_round_trip(name: str) -> None:
    ins = tensix.instr(name, "llk")

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(_values(name))
    def check(vals: dict[str, int]) -> None:
        word = ins.encode(vals)
        assert word >> 24 == ops()[name].opcode
        got, fields = tensix_isa("llk").decode(word)
        assert got.name == name
        assert {k: fields[k] for k in vals} == vals
        # both text forms read back to the same word
        for syntax in ("objdump", "llk"):
            [d] = tensix.disassemble([word], syntax=syntax)
            assert d.name == name and d.fields == vals
            assert tensix.assemble(d.text) == [word], d.text
        # and as a RISC-V stream word
        [r] = tensix.disassemble([tensix.rotl2(word)], rotated=True)
        assert r.word == word and r.detail.raw == tensix.rotl2(word) and r.detail.rotated

    check()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 0xFFFFFFFF))
def test_any_word_disassembles_losslessly_or_is_refused(word: int) -> None:
    try:
        [d] = tensix.disassemble([word])
    except DecodeError as e:
        assert f"{word:#010x}" in str(e)
        return
    assert tensix.assemble(d.text) == [word], d.text


def test_objdump_forms() -> None:
    cases = {
        "ttsetc16\t5,4": 0xB2050004,
        "ttmvmul\t0,0,1,0": 0x26004000,
        "ttstallwait\t128,1": 0xA2400001,
        "ttnop": 0x02000000,
        "sfpadd\tL0,L10,L0,L1,0": 0x850A0100,
        "sfploadi\tL0,-32768,0": 0x71008000,
        "sfpdivp2\tL0,L0,0xFFF,0": 0x76FFF000,
        "sfploadmacro\t0,L7,1,0,0": 0x93300001,
        "sfpmul24\tL0,L0,L0,0": 0x98000900,
    }
    for text, word in cases.items():
        assert tensix.assemble(text) == [word], text
        [d] = tensix.disassemble([word])
        assert d.text == text
        assert d.mnemonic + ("\t" + d.op_str if d.op_str else "") == text


def test_macro_forms_and_prefixes() -> None:
    words = tensix.assemble("TT_SETC16(5, 4)\nTTI_SETC16(5,4);\nTT_OP_SETC16(0x5, 2 + 2)\n"
                            "TTI_NOP; TTI_MVMUL(0, 0, 1, 0) // comment\nttsetc16 5, 4 # c")
    assert words == [0xB2050004] * 3 + [0x02000000, 0x26004000, 0xB2050004]
    [d] = tensix.disassemble([0x26004000], syntax="llk")
    assert d.text == "TTI_MVMUL(0, 0, 1, 0)"
    assert (d.mnemonic, d.op_str, d.detail.macro) == ("TTI_MVMUL", "0, 0, 1, 0", True)


def test_hidden_operands_fall_back_to_the_macro_form() -> None:
    # SFPAND's instr_mod1 is not in objdump's syntax; a word that sets it prints as a macro
    word = tensix.assemble("TTI_SFPAND(0, 15, 0, 1)")[0]
    [d] = tensix.disassemble([word])
    assert d.text == "TTI_SFPAND(0, 15, 0, 1)" and tensix.assemble(d.text) == [word]


def test_reserved_bits_print_as_ttinsn() -> None:
    # MVMUL bits 17..18 are outside every field on Blackhole (addr_mode is 3 bits wide)
    word = 0x26000000 | (1 << 17)
    [d] = tensix.disassemble([word])
    assert d.mnemonic == ".ttinsn" and d.text == ".ttinsn\t0x26020000"
    assert d.op_str == "0x26020000" and d.name is None
    assert tensix.assemble(d.text) == [word]
    assert tensix.assemble("TTI_MVMUL(0, 0, 7, 0)") == [0x2601C000]


@pytest.mark.parametrize("text, message, col", [
    ("ttfrobnicate 1,2", "unknown Blackhole Tensix instruction 'ttfrobnicate'", 1),
    ("  ttsetc16 1,2,3", "ttsetc16 takes 2 operands, found 3", 3),
    ("TTI_SETC16(1)", "TTI_SETC16 takes 2 operands, found 1", 1),
    ("ttsetc16 256,0", "operand setc16_reg = 256 does not fit its 8-bit field (0..255)", 10),
    ("ttmvmul 0,0,8,0", "operand addr_mode = 8 does not fit its 3-bit field (0..7)", 13),
    ("sfploadi L0,-32769,0", "does not fit its 16-bit field (-32768..65535)", 13),
    ("sfpmad L0,L1,L2,X3,0", "expected a register L0..L15, found 'X3'", 17),
    ("ttsetc16 1,", "expected a number, found end of line", 12),
    ("ttsetc16 5,4 junk", "expected end of statement, found 'junk'", 14),
    ("sfploadmacro 0,L3,1,0,0", "operand dest_reg_addr = 1 conflicts", 19),
    (".ttinsn 0x100000000", "is not a 32-bit word", 9),
    ("ttsetc16 5,4 $", "unexpected character '$'", 14),
])
def test_assembler_errors_are_clear_and_located(text: str, message: str, col: int) -> None:
    with pytest.raises(AsmError) as exc:
        tensix.assemble("ttnop\n" + text, filename="k.s")
    assert message in str(exc.value)
    assert str(exc.value).startswith(f"k.s:2:{col}: error: ")


def test_undecodable_word_is_reported_with_its_offset() -> None:
    with pytest.raises(DecodeError, match=r"prog.bin: offset 0x4: 0xff000000 is not a "
                                          r"Blackhole Tensix instruction"):
        list(tensix.disassemble([0x02000000, 0xFF000000], what="prog.bin"))
    with pytest.raises(DecodeError, match="not a whole number of 32-bit words"):
        list(tensix.disassemble(b"\x00\x00\x00"))


def test_cli_asm_and_disasm(tmp_path: Path) -> None:
    src = tmp_path / "k.s"
    src.write_text("ttsetc16 5,4\nTTI_MVMUL(0, 0, 1, 0)\nsfpnop\n")
    runner = CliRunner()
    r = runner.invoke(main, ["tensix", "asm", str(src), "-o", str(tmp_path / "k.bin")])
    assert r.exit_code == 0, r.output
    data = (tmp_path / "k.bin").read_bytes()
    assert struct.unpack("<3I", data) == (0xB2050004, 0x26004000, 0x8F000000)
    r = runner.invoke(main, ["tensix", "disasm", str(tmp_path / "k.bin")])
    assert r.exit_code == 0 and r.output == "ttsetc16\t5,4\nttmvmul\t0,0,1,0\nsfpnop\n"
    r = runner.invoke(main, ["tensix", "asm", "--rotated", str(src), "-o",
                             str(tmp_path / "r.bin")])
    assert r.exit_code == 0
    r = runner.invoke(main, ["tensix", "disasm", "--rotated", "-v", str(tmp_path / "r.bin")])
    assert r.exit_code == 0
    assert r.output.splitlines()[0] == "       0:\tc8140012\tttsetc16\t5,4"


def test_cli_disasm_of_an_objdump_listing(tmp_path: Path) -> None:
    lst = tmp_path / "k.objdump.txt"
    lst.write_text("k.elf:     file format elf32-littleriscv\n\n"
                   "    6064:\tc8140012          \tttsetc16\t5,4\n"
                   "    6068:\t00f6a423          \tsw\ta5,8(a3)\n"
                   "    606c:\t26004000          \tttmvmul\t9,9,9,9\n")
    r = CliRunner().invoke(main, ["tensix", "disasm", str(lst)])
    assert r.exit_code == 0, r.output
    out = r.output.splitlines()
    assert out[0] == "    6064:\tc8140012\tttsetc16\t5,4"
    assert out[1].endswith("# objdump: ttmvmul\t9,9,9,9")  # a listing we disagree with


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.s"
    bad.write_text("ttsetc16 5,4\nttsetc16 1,2,3\n")
    r = CliRunner().invoke(main, ["tensix", "asm", str(bad), "-o", str(tmp_path / "o.bin")])
    assert r.exit_code == 1
    assert r.output.strip() == f"isaforge: {bad}:2:1: error: ttsetc16 takes 2 operands, found 3"
    odd = tmp_path / "odd.bin"
    odd.write_bytes(b"\x01\x02\x03\xff\xff\xff\xff")
    r = CliRunner().invoke(main, ["tensix", "disasm", str(odd)])
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
