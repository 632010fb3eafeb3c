"""The disassembler's and assembler's shortcuts (a decoded word or an assembled line is
reused; templates are parsed once) give exactly what the general path gives."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.afuc import assemble, load_firmware
from isaforge.afuc.decode import Decoder, LabelContext
from isaforge.afuc.isa import isa_for
from isaforge.afuc.regdb import RegDB
from tests.refdata import refdata

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


def _both_lines(gen: int, word: int, pc: int, color: bool, size: int = 200
                ) -> tuple[tuple[str, set, set], tuple[str, set, set]]:
    """A listing line of ``word`` at ``pc`` by the listing's shortcut (Decoder._line, from
    its %-format plans) and by the general path (Decoder.text: fields' dict and templates),
    each with the labels it noted, from fresh decoders."""
    db = DECODERS[gen].db
    out = []
    for how in ("_line", "text"):
        dec = Decoder(gen, db, color)
        ctx = LabelContext(db, size, color=color)
        ctx.pc = pc
        out.append((getattr(dec, how)(word, ctx), ctx.branch_targets, ctx.call_targets))
    return out[0], out[1]


@settings(max_examples=500, deadline=None)
@given(gen=st.sampled_from([5, 6, 7]), word=st.integers(0, 0xFFFFFFFF),
       pc=st.integers(0, 300), color=st.booleans())
def test_listing_lines_are_the_general_path(gen, word, pc, color):
    fast, general = _both_lines(gen, word, pc, color)
    assert fast == general


@settings(max_examples=300, deadline=None)
@given(data=st.data(), gen=st.sampled_from([5, 6, 7]), pc=st.integers(0, 300),
       color=st.booleans())
def test_listing_lines_of_every_form(data, gen, pc, color):
    """Words with one instruction's fixed bits (every instruction and override form is
    reached, not only those random words hit)."""
    ins = data.draw(st.sampled_from(isa_for(gen).instrs))
    word = ins.match | (data.draw(st.integers(0, 0xFFFFFFFF)) & ~ins.mask)
    if data.draw(st.booleans()):  # the values the overrides test
        for _, _, when in ins.forms:
            for name, value in when.items():
                f = ins.all_fields[name]
                if f.const is None and not f.pieces:
                    word = (word & ~f.mask) | (value << f.low)
    fast, general = _both_lines(gen, word, pc, color)
    assert fast == general


@pytest.mark.parametrize("name", ["a530_pfp", "a530_pm4", "a630_sqe"])
def test_listing_lines_of_the_reference_firmware(name):
    """Every word of the reference firmware, at its own pc, plain and coloured."""
    fw = load_firmware(refdata("afuc", "firmware", f"{name}.fw").read_bytes())
    words = fw.words[1:]
    for color in (False, True):
        fast_dec = Decoder(fw.gen, RegDB.for_variant(fw.variant), color)
        slow_dec = Decoder(fw.gen, RegDB.for_variant(fw.variant), color)
        fast_ctx = LabelContext(fast_dec.db, len(words), color=color)
        slow_ctx = LabelContext(slow_dec.db, len(words), color=color)
        fast = fast_dec.lines(words, fast_ctx)
        slow = []
        for n, w in enumerate(words):
            slow_ctx.pc = n
            slow.append(slow_dec.text(w, slow_ctx))
        assert fast == slow
        assert fast_ctx.branch_targets == slow_ctx.branch_targets
        assert fast_ctx.call_targets == slow_ctx.call_targets


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


@pytest.mark.parametrize("gen", [5, 6, 7])
def test_listing_lines_of_every_top_opcode(gen):
    """Every value of the top 6 bits (words no instruction has among them), with a few
    low patterns: the listing's own walk of the decision tree agrees with ISA.match."""
    lows = [0, 0x1F, 0x3FFFFFF, 0x2A5A5A5, 0x1000000, 0x0012345]
    for top in range(64):
        for low in lows:
            fast, general = _both_lines(gen, top << 26 | low, 7, False)
            assert fast == general, hex(top << 26 | low)
