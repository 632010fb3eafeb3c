"""THEIA encodings: known words, and round trips over every field combination."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge import theia
from isaforge.core.errors import DecodeError
from isaforge.core.insn import Instruction
from isaforge.core.isa import Instr, bits_unaccounted
from isaforge.theia.isa import VIEW_FIELDS, cp_isa, vp_isa

# (word, text): from the T-ASM document and the compiler's listings
KNOWN_VP = [
    (0x8001900000000000, "ADD R[0].x__ I(0) 0"),
    (0x8001880000000001, "ADD R[0]._y_ I(1) 0"),
    (0x8001B02800000004, "ADD R[10 + offset ].x__ I(4) 0"),
    (0x02810090006FC038, "ADD <BRANCH.NOT_ZERO> @36.___ R55.xyz R56.-x-y-z"),  # Table 19
    (0x038160381415C00C,
     "ADD <BRANCH.ZERO_OR_NOT_SIGN> @14.___ R[10 + offset].xxx R[12 + offset].-x-y-z"),
    (0x0806DC2C00140000, "IO R[11+ offset].xyz (scaled) R[10 + offset].xyz R0.xyz"),
    (0x80013C2800000003, "ADD R[10 + offset ].xyz I(3) R[DST+offset] *** 0 , 0"),
    (0x0000000000000000, "NOP R0.___ R0.xyz R0.xyz"),
    (0x60039C3000720034, "MUL (unscaled) R[12+ offset].xyz R57.xyz R52.xyz"),
]
KNOWN_CP = [
    (0x0D0B0000, "ASSIGN R11 I(0 )"),
    (0x11838182, "SHL R131 R129 R130"),
    (0x0E000B0A, "COPYBLOCK DstId: R0 SrcOffset: R11 DstOffsetAndLen: R10"),
    (0x0F000000, "EXIT R0 R0 R0"),
]


@pytest.mark.parametrize(("word", "text"), KNOWN_VP)
def test_known_vp(word: int, text: str) -> None:
    assert theia.decode_one(word).text == text
    assert theia.assemble(text) == [word]


@pytest.mark.parametrize(("word", "text"), KNOWN_CP)
def test_known_cp(word: int, text: str) -> None:
    assert theia.decode_one(word, cp=True).text == text
    assert theia.assemble(text, cp=True) == [word]


def test_tables_are_sound() -> None:
    for isa in (vp_isa(), cp_isa()):
        for ins in isa.instrs:
            assert bits_unaccounted(ins) == 0, ins.name
    # every VP word decodes: the 32 forms split IMM x BR x MODE exactly
    assert len(vp_isa().instrs) == 32
    assert len(cp_isa().instrs) == 19


def test_hidden_bits_are_annotated() -> None:
    eof = theia.decode_one(0x0401000000000000)
    assert eof.text == "ADD R0.___ R0.xyz R0.xyz"
    assert eof.detail.lossless_asm == "ADD R0.___ R0.xyz R0.xyz {EOF=1}"
    assert theia.assemble(eof.detail.lossless_asm) == [0x0401000000000000]
    s3 = theia.decode_one(0x4001000000000000)  # S3 alone prints nothing
    assert s3.detail.lossless_asm.endswith("{S3=1}")


def test_extensions_beyond_the_compiler() -> None:
    """Encodings the compiler never prints sensibly get readable, reassemblable text."""
    w = theia.assemble("RSVR2 R1.xyz R2.wxw R3.xyz")[0]
    assert (w >> 48) & 7 == 7 and theia.decode_one(w).text == "RSVR2 R1.xyz R2.wxw R3.xyz"
    w = theia.assemble("ADD <BRANCH.7> @3.___ R0.xyz R0.xyz")[0]
    assert (w >> 54) & 7 == 7
    assert theia.decode_one(0x13000000, cp=True).mnemonic == ".word"
    assert theia.assemble(".word 0x13000000", cp=True) == [0x13000000]


def test_labels() -> None:
    src = "ADD <BRANCH.ALWAYS> @done.___ R0.xyz R0.xyz\nNOP R0.___ R0.xyz R0.xyz\n" \
          "done: ADD R0.___ R0.xyz R0.xyz {EOF=1}\n"
    words = theia.assemble(src)
    assert (words[0] >> 34) & 0xFF == 2
    # labels are keyed by byte address, as Instruction.address is
    assert next(theia.disassemble(words, labels={16: "done"})).text.split()[2] == "@done.___"
    assert "@done.___" in theia.listing(words, labels={16: "done"}).splitlines()[0]
    with pytest.raises(DecodeError, match="byte address 2: labels are keyed by byte"):
        next(theia.disassemble(words, labels={2: "done"}))  # an instruction index: caught


def test_disassemble_yields_the_core_record_lazily() -> None:
    words = theia.assemble("ADD R[0].x__ I(0) 0\nADD <BRANCH.ALWAYS> @0.___ R0.xyz R0.xyz\n"
                           "ADD R0.___ R0.xyz R0.xyz {EOF=1}")
    gen = theia.disassemble(words, address=0x100)
    assert iter(gen) is gen and not isinstance(gen, list)
    recs = list(gen)
    assert theia.Instruction is Instruction
    assert all(type(r) is Instruction for r in recs)
    assert [(r.address, r.size, r.endian) for r in recs] == [(0x100, 8, "big"), (0x108, 8, "big"),
                                                             (0x110, 8, "big")]
    assert [r.bytes for r in recs] == [w.to_bytes(8, "big") for w in words]
    assert (recs[0].mnemonic, recs[0].op_str, recs[0].name) == ("ADD", "R[0].x__ I(0) 0", "imm.4")
    assert (recs[1].mnemonic, recs[1].op_str) == ("ADD", "<BRANCH.ALWAYS> @0.___ R0.xyz R0.xyz")
    assert recs[0].fields["IMMV"] == 0 and recs[2].fields["EOF"] == 1
    # the listing text hides the EOF bit; the lossless text (and only it) reads back
    assert recs[2].text == "ADD R0.___ R0.xyz R0.xyz"
    assert theia.assemble(recs[2].text) != [words[2]]
    assert recs[2].detail.lossless_asm == "ADD R0.___ R0.xyz R0.xyz {EOF=1}"
    assert not recs[2].detail.cp
    # an undecodable generator element raises only when it is reached
    bad = theia.disassemble([words[0], 1 << 64])
    assert next(bad).word == words[0]
    with pytest.raises(DecodeError):
        next(bad)


def test_cp_records_are_four_byte_words() -> None:
    recs = list(theia.disassemble([0x0D0B0000, 0x13000000, 0x0F000000], cp=True))
    assert [(r.address, r.size) for r in recs] == [(0, 4), (4, 4), (8, 4)]
    assert recs[0].bytes == bytes.fromhex("0d0b0000") and recs[0].detail.cp
    assert (recs[0].mnemonic, recs[0].op_str) == ("ASSIGN", "R11 I(0 )")
    assert (recs[1].mnemonic, recs[1].name, recs[1].detail.lossless_asm) == (
        ".word", None, ".word 0x13000000")
    one = theia.decode_one(0x0F000000, address=8, cp=True)
    assert one == recs[2]


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------


@st.composite
def _fields(draw: st.DrawFn, cp: bool) -> tuple[Instr, dict[str, int]]:
    isa = cp_isa() if cp else vp_isa()
    ins = draw(st.sampled_from(isa.instrs))
    vals = {name: draw(st.integers(0, (1 << f.width) - 1))
            for name, f in ins.fields.items() if f.const is None and name not in VIEW_FIELDS}
    return ins, vals


@settings(max_examples=400, deadline=None)
@given(_fields(cp=False))
def test_vp_decode_encode(x: tuple[Instr, dict[str, int]]) -> None:
    ins, vals = x
    word = ins.encode(vals)
    got_ins, got = vp_isa().decode(word)
    assert got_ins is ins
    assert {k: got[k] for k in vals} == vals


@settings(max_examples=200, deadline=None)
@given(_fields(cp=True))
def test_cp_decode_encode(x: tuple[Instr, dict[str, int]]) -> None:
    ins, vals = x
    got_ins, got = cp_isa().decode(ins.encode(vals))
    assert got_ins is ins
    assert {k: got[k] for k in vals} == vals


@settings(max_examples=400, deadline=None)
@given(st.integers(0, (1 << 64) - 1))
def test_vp_encode_decode_word(word: int) -> None:
    ins, vals = vp_isa().decode(word)
    assert ins.encode(vals) == word


@settings(max_examples=300, deadline=None)
@given(st.integers(0, (1 << 32) - 1))
def test_cp_encode_decode_word(word: int) -> None:
    ins = cp_isa().match(word)
    assert (ins is None) == (word >> 24 >= 19)
    if ins is not None:
        assert ins.encode(ins.field_values(word)) == word


@settings(max_examples=250, deadline=None)
@given(_fields(cp=False))
def test_vp_text_round_trip(x: tuple[Instr, dict[str, int]]) -> None:
    word = x[0].encode(x[1])
    ins = theia.decode_one(word)
    assert theia.assemble(ins.detail.lossless_asm) == [word], ins.detail.lossless_asm


@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 32) - 1))
def test_cp_text_round_trip(word: int) -> None:
    assert theia.assemble(theia.decode_one(word, cp=True).detail.lossless_asm, cp=True) == [word]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, (1 << 64) - 1), max_size=8))
def test_vp_listing_and_mem_round_trip(words: list[int]) -> None:
    assert theia.assemble(theia.listing(words)) == words
    assert theia.read_mem(theia.write_mem(words)) == words
