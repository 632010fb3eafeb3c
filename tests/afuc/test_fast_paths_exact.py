"""The disassembler's and assembler's shortcuts (a decoded word or an assembled line is
reused; templates are parsed once) give exactly what the general path gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.afuc import assemble
from isaforge.afuc.decode import Decoder, LabelContext
from isaforge.afuc.isa import isa_for
from isaforge.afuc.regdb import RegDB

VARIANT = {5: "A5XX", 6: "A6XX", 7: "A7XX"}
DECODERS = {gen: Decoder(gen, RegDB.for_variant(v)) for gen, v in VARIANT.items()}


@settings(max_examples=300, deadline=None)
@given(gen=st.sampled_from([5, 6, 7]), word=st.integers(0, 0xFFFFFFFF),
       pc=st.integers(0, 300), color=st.booleans())
def test_decoder_matches_the_core_formatter_and_its_memo(gen, word, pc, color):
    dec = DECODERS[gen]
    ctx = LabelContext(dec.db, 200, color=color)
    ctx.pc = pc
    first = dec.decode(word, ctx)
    again = dec.decode(word, ctx)
    assert first == again
    ins = isa_for(gen).match(word)
    if ins is not None:
        ref_ctx = LabelContext(dec.db, 200, color=color)
        ref_ctx.pc = pc
        vals = ins.field_values(word)
        assert first[1] == vals
        assert first[2:5] == isa_for(gen).format_parts(ins, vals, ref_ctx)
    # a branch's text depends on the pc: decoded at another pc it names that target
    other = LabelContext(dec.db, 200, color=color)
    other.pc = pc + 1
    fresh = Decoder(gen, dec.db).decode(word, other)
    assert dec.decode(word, other) == fresh


def test_repeated_lines_assemble_as_the_first():
    src = """[016ee001]
        mov $02, 0x1
l1:
        mov $02, 0x1
        brne $02, 0x5, #l1
        mov $02, 0x1
        brne $02, 0x5, #l1
        nop
"""
    fw = assemble(src)
    words = [int.from_bytes(fw[i:i + 4], "little") for i in range(0, len(fw), 4)]
    assert words[2] == words[3] == words[5]
    assert words[4] != words[6]  # relative branches: each to l1 from its own pc
    single = assemble("[016ee001]\nmov $02, 0x1\n")
    assert int.from_bytes(single[8:12], "little") == words[2]
