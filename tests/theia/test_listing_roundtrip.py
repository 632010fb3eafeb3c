"""Every listing form we print reassembles to the words it was printed from.

The forms: the default listing (``isaforge theia disasm``: the compiler's ``code.list`` /
``cp_code.list`` layout, ``N:\\t.word 0x...`` for a word that does not decode), the plain form
(``--plain``: each record's ``detail.lossless_asm``) and, for the CP, the ``control_code.mem``
text we write. ``Instruction.text`` is the compiler's (lossy) text and is not among them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.cli import main
from isaforge.core.errors import AsmError
from isaforge.theia.asm import assemble
from isaforge.theia.decode import disassemble
from isaforge.theia.image import read_mem, write_mem
from isaforge.theia.isa import isa_for
from isaforge.theia.listing import listing

VP_WORDS = st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=6)
CP_WORDS = st.lists(st.integers(0, (1 << 32) - 1), min_size=1, max_size=6)


def plain(words: list[int], cp: bool) -> str:
    return "".join(ins.detail.lossless_asm + "\n" for ins in disassemble(words, cp=cp))


@settings(max_examples=150, deadline=None)
@given(VP_WORDS)
def test_vp_listing_reassembles(words: list[int]) -> None:
    assert assemble(listing(words)) == words


@settings(max_examples=150, deadline=None)
@given(VP_WORDS)
def test_vp_plain_reassembles(words: list[int]) -> None:
    assert assemble(plain(words, False)) == words


@settings(max_examples=200, deadline=None)
@given(CP_WORDS)
def test_cp_listing_reassembles(words: list[int]) -> None:
    assert assemble(listing(words, cp=True), cp=True) == words


@settings(max_examples=200, deadline=None)
@given(CP_WORDS)
def test_cp_plain_reassembles(words: list[int]) -> None:
    assert assemble(plain(words, True), cp=True) == words


@settings(max_examples=200, deadline=None)
@given(CP_WORDS)
def test_cp_mem_reassembles(words: list[int]) -> None:
    text = write_mem(words, cp=True)
    assert read_mem(text, cp=True) == words
    assert assemble(text, cp=True) == words


@settings(max_examples=150, deadline=None)
@given(st.integers(0, (1 << 64) - 1), st.booleans())
def test_text_names_the_fields_it_hides(word: int, cp: bool) -> None:
    word &= (1 << (32 if cp else 64)) - 1
    ins = next(disassemble([word], cp=cp))
    hidden = ins.detail.hidden_fields
    # the readable text reads back to the word exactly when it hides nothing
    assert ins.detail.text_is_lossless == (hidden == {})
    assert (assemble(ins.text, cp=cp) == [word]) == ins.detail.text_is_lossless
    # and the round-trip form is that text with the hidden fields spelt out
    notes = [f"{{{n}={v:#x}}}" if n == "IMMV" else f"{{{n}={v}}}" for n, v in hidden.items()]
    assert ins.detail.lossless_asm == " ".join([ins.text, *notes])


def test_issue_word_names_its_hidden_fields() -> None:
    ins = next(disassemble([0xE7F25671BE02E3A9]))
    assert ins.text == "DIV <BRANCH.7> (unscaled) @*R[156 + offset ].x_z ??????"
    assert assemble(ins.text) != [0xE7F25671BE02E3A9]  # the readable text is lossy...
    assert ins.detail.hidden_fields == {"IMMV": 0x1BE02E3A9, "EOF": 1, "RSV": 6}  # ...here
    assert not ins.detail.text_is_lossless
    assert assemble(ins.detail.lossless_asm) == [0xE7F25671BE02E3A9]


def test_random_words_include_undecodable_ones() -> None:
    # the property tests above reach the `.word` lines: most random CP words do not decode
    assert isa_for(True).match(0x4EAC98D6) is None
    assert listing([0x4EAC98D6], cp=True) == "0:\t.word 0x4eac98d6\n"


def test_listing_index_must_match() -> None:
    text = "0:\t.word 0x4eac98d6\n5:\t.word 0x32ffd03d\n"
    with pytest.raises(AsmError, match="listing address 5 where instruction 1 is expected"):
        assemble(text, cp=True)


def test_cli_disasm_then_asm_every_form(tmp_path: Path) -> None:
    # the reported case: `disasm --cp` output rejected by `asm --cp` ("unknown instruction '0'")
    cases = {False: [0xE7F25671BE02E3A9, 0, (1 << 64) - 1],
             True: [0x4EAC98D6, 0x0D000000, 0x32FFD03D]}
    runner = CliRunner()
    for cp, words in cases.items():
        mem = tmp_path / f"in{int(cp)}.mem"
        mem.write_text(write_mem(words, cp=cp))
        flag = ["--cp"] if cp else []
        for form in ([], ["--plain"]):
            lst = tmp_path / "out.list"
            r = runner.invoke(main, ["theia", "disasm", str(mem), *flag, *form, "-o", str(lst)])
            assert r.exit_code == 0, r.output
            out = tmp_path / "back.mem"
            r = runner.invoke(main, ["theia", "asm", str(lst), *flag, "-o", str(out)])
            assert r.exit_code == 0, (form, cp, r.output)
            assert read_mem(out.read_text(), cp=cp) == words
