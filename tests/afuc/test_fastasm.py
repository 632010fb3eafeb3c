"""The assembler's fast path (:mod:`isaforge.afuc.fastasm`) gives exactly what the general
path gives: the same firmware, or the same error (message and file:line:col), for the
reference listings, for listings of random words, and for random lines put together from
the assembler's vocabulary (right, wrong and odd: expressions, names, stray tokens, blanks)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.afuc import listing
from isaforge.afuc.asm import Assembler
from isaforge.afuc.fastasm import OPERANDS
from isaforge.afuc.isa import isa_for
from isaforge.core.errors import IsaforgeError
from isaforge.core.isa import Branch, Enum, Flag, Kind, UInt, template_parts
from tests.refdata import refdata

FIRMWARES = ("a530_pfp", "a530_pm4", "a630_sqe")

GPUS = {5: ("a530", "005ff000"), 6: ("a630", "016ee001"), 7: ("a730", "00730000")}


def _both(text: str, gpu: str | None = None) -> tuple[object, object]:
    def run(fast: bool) -> object:
        try:
            return Assembler(gpu, fast=fast).assemble(text, "t.asm")
        except IsaforgeError as e:
            return f"{type(e).__name__}: {e}"
    return run(True), run(False)


@pytest.mark.parametrize("fw", FIRMWARES)
def test_reference_listings(fw: str) -> None:
    data = refdata("afuc", "firmware", f"{fw}.fw").read_bytes()
    fast, general = _both(listing(data))
    assert fast == general == data


@settings(max_examples=40, deadline=None)
@given(gen=st.sampled_from([5, 6, 7]),
       words=st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=60))
def test_listings_of_random_words(gen: int, words: list[int]) -> None:
    gpu, version = GPUS[gen]
    text = listing(b"\0" * 4 + bytes.fromhex(version)[::-1] + b"".join(
        w.to_bytes(4, "little") for w in words), gpu=gpu, raw=True)
    fast, general = _both(text, gpu)
    assert fast == general


def _vocabulary(gen: int) -> list[str]:
    mnemonics = sorted(k for k in isa_for(gen).by_mnemonic if k)
    return [
        *mnemonics, *mnemonics, "(rep)", "(xmov1)", "(xmov3)", "(sds2)", "(peek)", "!",
        "$00", "$1f", "$1F", "$0a", "$data", "$addr", "$rem", "$sp", "$lr", "$memdata",
        "$regdata", "$usraddr", "$zz", "$20", "$012",
        "0", "1", "07", "0x1", "0x7f", "0xffff", "0x12345", "0X1A", "0x", "12a", "b0", "b5",
        "b31", "b32", "bx",
        "@MEM_READ_ADDR", "@NO_SUCH_REG", "%SP", "|NRT_ADDR", "%", "@",
        "RB_RENDER_CNTL", "CP_SCRATCH[0x2]", "CP_SCRATCH[0x2].REG", "NOT_A_REG", "foo[3]",
        "#l1", "#l2", "#nowhere", "#-1", "#3", "#0x1", "#",
        ",", ",", ",", "[", "]", "+", "-", "<<", "(", ")", "~", "*", "&", ":", "l1:",
        "[016ee001]", "[#l1]", ".align", ".jumptbl", "; comment", "`",
    ]


@st.composite
def _line(draw: st.DrawFn, gen: int) -> str:
    vocab = _vocabulary(gen)
    toks = draw(st.lists(st.sampled_from(vocab), min_size=0, max_size=9))
    seps = draw(st.lists(st.sampled_from(["", " ", " ", "\t", "  "]), min_size=len(toks) + 1,
                         max_size=len(toks) + 1))
    return "".join(s + t for s, t in zip(seps, [*toks, ""], strict=True))


REGS = ["$00", "$02", "$1f", "$1F", "$0a", "$data", "$addr", "$rem", "$sp", "$lr", "$memdata",
        "$regdata", "$usraddr", "$zz", "$20"]
NUMBERS = ["0", "1", "07", "0x1", "0x7f", "0xffff", "0x12345", "0X1A", "-1", "@MEM_READ_ADDR",
           "@NO_SUCH_REG", "%SP", "|NRT_ADDR", "RB_RENDER_CNTL", "CP_SCRATCH[0x2]",
           "NOT_A_REG", "#l1", "@MEM_READ_ADDR + 0x1", "(1 << 3)", "0x10 - 1", "$02", "b3"]


def _operand_choices(kind: Kind) -> list[str]:
    if isinstance(kind, Flag):
        return [kind.display, "", ""]
    if isinstance(kind, Enum):
        return ["", *kind.by_name]
    if isinstance(kind, Branch):
        return ["#l1", "#l2", "#-1", "#3", "#nowhere", "#l1 + 1", "l1"]
    if isinstance(kind, UInt) and kind.prefix:
        return ["b0", "b5", "b31", "b32", "5", "bx"]
    if type(kind).parse is Kind.parse or isinstance(kind, UInt):
        return NUMBERS
    return REGS


@st.composite
def _well_formed(draw: st.DrawFn, gen: int) -> str:
    """A line in the shape of a template, each operand one its kind reads (or, now and
    then, anything from the vocabulary)."""
    isa = isa_for(gen)
    ins = draw(st.sampled_from(isa.instrs))
    template, fields, _ = draw(st.sampled_from(ins.syntaxes()))
    vocab = _vocabulary(gen)
    out = []
    for kind, text in template_parts(template):
        if kind == "lit":
            out.append(text if draw(st.integers(0, 9)) else text.replace(" ", ""))
        elif text == "NAME":
            out.append(ins.mnemonic)
        else:
            choices = _operand_choices(fields[text].kind)
            out.append(draw(st.sampled_from(choices if draw(st.integers(0, 9)) else vocab)))
    return draw(st.sampled_from(["", "  ", "\t"])) + "".join(out) + draw(
        st.sampled_from(["", "", " ", "\t; note", ";x"]))


@settings(max_examples=400, deadline=None)
@given(data=st.data(), gen=st.sampled_from([5, 6, 7]))
def test_random_lines(data: st.DataObject, gen: int) -> None:
    gpu, version = GPUS[gen]
    lines = data.draw(st.lists(st.one_of(_line(gen), _well_formed(gen)), min_size=1,
                               max_size=4))
    text = f"[{version}]\nl1:\n" + "\n".join(lines) + "\nl2:\nnop\n"
    fast, general = _both(text, gpu)
    assert fast == general, text


# forms the fast path skips by the line's last token (a register, a literal, an implied flag),
# and repeated lines that branch to a label (read once, resolved at each place)
SKIPPED = [
    "mov $01, $02", "mov $01, 0x3", "mov $01, @REG_READ_DWORDS", "mov $01, 0x3 << 2",
    "(rep)mov $01, $02", "or $01, $02, $03", "or $01, $02, 0x7", "or $01, $02, $03 + 1",
    "cwrite $02, [$00 + 0x1]", "cwrite $02, [$00 + 0x1]!", "cread $02, [$03 + 0x1]!",
    "cread $02, [$03 + @REG_READ_DWORDS]", "cwrite $02, [$00 + @REG_READ_DWORDS+0x1]!",
    "cwrite $02, [$00 + 0x1] !", "cread $02, [$03 + 0x1]]", "brne $01, b2, #l1",
    "brne $01, 0x2, #l2", "call #l2", "call #l3",
]


@pytest.mark.parametrize("gen", [5, 6, 7])
@pytest.mark.parametrize("line", SKIPPED)
def test_skipped_forms_and_repeated_branches(gen: int, line: str) -> None:
    gpu, version = GPUS[gen]
    text = f"[{version}]\nl1:\n{line}\nnop\n{line}\nl2:\n{line}\nnop\n"
    fast, general = _both(text, gpu)
    assert fast == general, text
    if "@" not in line and "]]" not in line and "l3" not in line and "+ 1" not in line:
        assert isinstance(fast, bytes), fast


# other texts of each kind of operand a line's shape leaves out (fastasm.OPERANDS: the
# class before it says its kind), good and bad
_OPERAND_TEXTS = {
    "$": ["00", "02", "1f", "1F", "0a", "data", "addr", "rem", "zz", "20", "012"],
    "x": ["0", "7", "1f", "7ff", "fff", "ffff", "10000", "12345"],
    "#": ["l1", "l2", "nowhere", "x_1"],
    ";": ["", " note", "$01, 0x3"],
    "": ["0", "1", "5", "31", "32", "4095", "65536"],
}


@st.composite
def _same_shape(draw: st.DrawFn, line: str) -> str:
    """``line`` with other registers, numbers, labels, comment (its shape unchanged)."""
    parts = re.split(OPERANDS, line)
    for i in range(2, len(parts), 3):
        cls = parts[i - 1]
        kind = cls if cls in ("$", "#", ";") else "x" if len(cls) > 1 else ""
        parts[i] = draw(st.sampled_from(_OPERAND_TEXTS[kind]))
    return "".join(parts)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), gen=st.sampled_from([5, 6, 7]))
def test_lines_of_one_shape(data: st.DataObject, gen: int) -> None:
    """A line's shape learnt from its first line reads the others as the fast path reads
    each by itself and as the general path does."""
    gpu, version = GPUS[gen]
    first = data.draw(st.one_of(_well_formed(gen), _line(gen)))
    lines = [first, *data.draw(st.lists(_same_shape(first), min_size=1, max_size=6))]
    text = f"[{version}]\nl1:\n" + "\n".join(lines) + "\nl2:\nnop\n"
    fast, general = _both(text, gpu)
    assert fast == general, text
    try:
        each = Assembler(gpu, shapes=False).assemble(text, "t.asm")
    except IsaforgeError as e:
        each = f"{type(e).__name__}: {e}"
    assert fast == each, text


@pytest.mark.parametrize("gen", [5, 6, 7])
def test_shapes_are_learnt(gen: int) -> None:
    """The lines of a listing (but labels and literals) mostly take the shape path."""
    gpu, version = GPUS[gen]
    lines = ["mov $01, 0x3", "mov $02, 0x40", "or $03, $04, 0x7", "or $05, $06, 0x17",
             "cwrite $02, [$00 + 0x1]", "cwrite $07, [$1f + 0x12]", "brne $01, b2, #l1",
             "brne $03, b2, #l2", "call #l1", "call #l2"]
    text = f"[{version}]\nl1:\n" + "\n".join(lines) + "\nl2:\nnop\n"
    asm = Assembler(gpu)
    got = asm.assemble(text, "t.asm")
    assert got == Assembler(gpu, fast=False).assemble(text, "t.asm")
    assert len(asm.last_shapes) == 6  # one per two lines, and nop
