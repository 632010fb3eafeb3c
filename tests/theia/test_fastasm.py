"""The assembler's fast path (isaforge.theia.fastasm) reads every line exactly as the general
reader does: the same words, the same errors, the same listing reconciliations, on random
words in every form we print and in hand-written variants of them."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.core.errors import IsaforgeError
from isaforge.theia.asm import Assembler
from isaforge.theia.decode import disassemble
from isaforge.theia.listing import listing
from tests.refdata import refdata


def both(text: str, cp: bool) -> tuple[object, object]:
    out = []
    for fast in (True, False):
        asm = Assembler(cp, fast=fast)
        try:
            out.append((asm.assemble(text, "t.s"), asm.hidden_from_listing))
        except IsaforgeError as e:
            out.append(str(e))
    return out[0], out[1]


def variants(line: str, rnd: random.Random) -> list[str]:
    """The line with other blanks, case, labels: some the fast path reads, some it leaves."""
    spaced = "".join(rnd.choice([" ", "  ", "\t", " \t"]) if c == " " else c for c in line)
    squeezed = line.replace(" + ", "+").replace(" ", " ", 1)
    return [line, spaced, "  " + line + "  ", squeezed, line.upper(), line.lower(),
            "L0: " + line, line.replace("@", "@L0 //", 1), line + " // note",
            line.replace("R", "r"), line.replace(".", " .", 1), line.replace("I(", "I ("),
            line + " {EOF=1} {EOF=0}", line + " {RSV=9}", line + "{OPCODE=3}"]


def check(words: list[int], cp: bool, seed: int) -> None:
    rnd = random.Random(seed)
    records = list(disassemble(words, cp=cp))
    for text in (listing(words, cp=cp),
                 "".join(ins.detail.lossless_asm + "\n" for ins in records),
                 "".join(ins.text + "\n" for ins in records)):
        fast, slow = both(text, cp)
        assert fast == slow
    for ins in records:
        for line in variants(ins.detail.lossless_asm, rnd) + variants(ins.text, rnd):
            fast, slow = both("L0:\n" + line + "\n", cp)
            assert fast == slow, line


@settings(max_examples=120, deadline=None)
@given(st.lists(st.integers(0, (1 << 64) - 1), min_size=1, max_size=4), st.integers(0, 99))
def test_vp_fast_path_reads_as_the_general_reader(words: list[int], seed: int) -> None:
    check(words, False, seed)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.integers(0, (1 << 32) - 1), min_size=1, max_size=4), st.integers(0, 99))
def test_cp_fast_path_reads_as_the_general_reader(words: list[int], seed: int) -> None:
    # most random CP words do not decode; the opcode byte below 19 makes them instructions
    check([w & 0x00FFFFFF | (w >> 24) % 19 << 24 for w in words] + words, True, seed)


@pytest.mark.parametrize("test", ["test_branches_1", "test_arrays_1", "test1_IO"])
def test_reference_listings_read_the_same(test: str) -> None:
    folder = refdata("theia", "regressions", test)
    for name, cp in (("code.list", False), ("cp_code.list", True), ("control_code.mem", True)):
        fast, slow = both((folder / name).read_text(), cp)
        assert fast == slow and isinstance(fast, tuple), name


def test_errors_are_the_general_readers() -> None:
    for line in ("ADD R300.xyz R1.xyz R2.xyz", "ADD R1.xyz R1.xyz R2.xyz {EOF=5}",
                 "ADD R1.xyz R1.xyz R2.xyz {NOPE=1}", "ADD <BRANCH.ZERO> @nowhere.___ R1.xxx "
                 "R1.xxx", "ADD R[999 + offset].xyz R1.xyz R2.xyz"):
        fast, slow = both(line + "\n", False)
        assert isinstance(fast, str) and fast == slow, (line, fast)


def test_fast_path_reads_the_printed_forms() -> None:
    # (so the comparisons above do compare two readers)
    rnd = random.Random(5)
    words = [rnd.getrandbits(64) for _ in range(200)]
    asm = Assembler()
    for i, line in enumerate(listing(words).splitlines()):
        st = asm.parse_line(line, "t", 1, i, {}, {})
        assert st is not None and st.form is not None, line
    for ins in disassemble(words):
        st = asm.parse_line(ins.detail.lossless_asm, "t", 1, 0, {}, {})
        assert st is not None and st.form is not None, ins.detail.lossless_asm
