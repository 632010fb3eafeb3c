"""The tokenizer: its first-character index gives the tokens of plain longest-match scanning
over every rule (flex's rule: the longest match wins, the earlier rule on a tie)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.theia.compiler.errors import CompileError, LineMap
from isaforge.theia.compiler.lexer import CP_RULES, VP_RULES, tokenize


def brute_force(text: str, cp: bool) -> list[tuple[str, str]] | None:
    rules = CP_RULES if cp else VP_RULES
    out, pos = [], 0
    while pos < len(text):
        if text[pos] in ' \t\r"\n':
            pos += 1
            continue
        if text.startswith("//", pos):
            end = text.find("\n", pos)
            pos = len(text) if end < 0 else end
            continue
        best = ("", 0)
        for kind, rx in rules:
            m = rx.match(text, pos)
            if m and m.end() - pos > best[1]:
                best = (kind, m.end() - pos)
        if not best[1]:
            return None
        out.append((best[0], text[pos:pos + best[1]]))
        pos += best[1]
    return out


ALPHABET = "abxyzn Rr0189_fF.+=-<>!|&*/()[]{};,\n\"#$" + "wsqtie"
PIECES = ["sqrt", "scale", "unscale", "in", "index", "out", "vector", "while", "R12", "r7x",
          "0x1F", "0b101", "0b2", "fixed_point_arithmetic", "<<", ">>", "+=", "==", "<=",
          "block_transfer_in_progress", "scalar", "start", "copy_data_block", "//c\n", "xyz"]


@pytest.mark.parametrize("cp", [False, True])
@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.one_of(st.sampled_from(PIECES), st.text(ALPHABET, max_size=6)),
                      max_size=12))
def test_indexed_lexer_is_longest_match(cp: bool, parts: list[str]) -> None:
    text = "".join(parts)
    expect = brute_force(text, cp)
    try:
        got = [(t.kind, t.text) for t in tokenize(text, LineMap(), cp)][:-1]
    except CompileError:
        assert expect is None
        return
    assert got == expect


def test_quirks_of_the_upstream_scanner() -> None:
    kinds = [(t.kind, t.text) for t in tokenize('xpos nx n in index R5 r5a "a" sqrt2\n',
                                                LineMap())][:-1]
    assert kinds == [("X", "x"), ("ID", "pos"), ("ID", "nx"), ("N", "n"), ("in", "in"),
                     ("ID", "index"), ("REG", "R5"), ("ID", "r5a"), ("ID", "a"),
                     ("ID", "sqrt2")]
