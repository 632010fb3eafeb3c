"""The shared core on a toy 16-bit instruction set that no real processor has."""

from __future__ import annotations

import pytest

from isaforge.core.asm import (
    LabelRef,
    Lexer,
    TokenStream,
    evaluate,
    match_template,
    parse_number_expr,
)
from isaforge.core.errors import AsmError, DecodeError, EncodeError, SourceLoc
from isaforge.core.isa import (
    ISA,
    Bitset,
    Branch,
    Enum,
    F,
    Flag,
    Hex,
    Int,
    Kind,
    Override,
    P,
    Split,
    bits_unaccounted,
)


class R(Kind):
    def format(self, value, width, ctx):
        return f"r{value}"

    def parse(self, ts, ctx):
        tok = ts.peek()
        if tok is None or not (tok.text[0] == "r" and tok.text[1:].isdigit()):
            ts.expected("a register")
            return None
        ts.next()
        return int(tok.text[1:])


base = Bitset("#toy", fields=[F("SAT", 15, kind=Flag("(sat)"))])
alu = Bitset("#alu", base, display="{SAT}{NAME} {D}, {S}", fields=[F("D", 0, 3, R()),
                                                                  F("S", 4, 7, R())])
TOY = [
    base,
    alu,
    Bitset("add", alu, patterns=[P(8, 14, 0b0000001)]),
    Bitset("or", alu, patterns=[P(8, 14, 0b0000010)],
           overrides=[Override({"S": 0}, "{SAT}clr {D}")]),
    Bitset("li", base, display="{SAT}li {D}, {IMM}", gen=(2, 9),
           fields=[F("D", 0, 3, R()), F("IMM", 4, 10, Hex())], patterns=[P(11, 14, "1000")]),
    Bitset("b", base, display="b {OFF}", fields=[F("OFF", 0, 7, Branch())],
           patterns=[P(8, 14, "1100xxx")]),
    Bitset("mode", base, display="mode {M}", fields=[F("M", 0, 1, Enum({0: "lo", 1: "hi"}))],
           patterns=[P(2, 14, "0" * 13)]),
]
LEX = Lexer([("FLAG", r"\(sat\)"), ("HEX", r"0x[0-9a-f]+"), ("INT", r"\d+"),
             ("LABEL", r"#-?\w+"), ("ID", r"[a-z_][a-z0-9_]*"), ("OP", r"<<|[,+\-()|]")])


def test_gen_ranges_select_instructions() -> None:
    assert [i.name for i in ISA("toy", TOY, gen=1).instrs] == ["add", "or", "b", "mode"]
    assert "li" in [i.name for i in ISA("toy", TOY, gen=2).instrs]


def test_encode_decode_format() -> None:
    isa = ISA("toy", TOY, gen=2, size=16)
    add = isa.find("add")
    w = add.encode({"SAT": 1, "D": 3, "S": 5})
    assert w == 0x8000 | 0x100 | 0x53
    ins, vals = isa.decode(w)
    assert ins is add and isa.format(ins, vals) == "(sat)add r3, r5"
    # the override prints and reads differently
    ins, vals = isa.decode(isa.find("or").encode({"D": 2, "S": 0}))
    assert isa.format(ins, vals) == "clr r2"
    assert isa.format(*isa.decode(isa.find("li").encode({"D": 1, "IMM": 0x7f}))) == "li r1, 0x7f"
    with pytest.raises(EncodeError, match="does not fit"):
        isa.find("li").encode({"IMM": 0x80})
    with pytest.raises(DecodeError):
        isa.decode(0x7F00)


def test_dont_care_bits_and_coverage() -> None:
    isa = ISA("toy", TOY, gen=2, size=16)
    b = isa.find("b")
    assert isa.match(b.encode({"OFF": 4}) | 0x0700) is b  # x bits ignored when matching
    assert b.encode({"OFF": -2}) & 0xFF == 0xFE  # negative branch offsets wrap
    assert all(bits_unaccounted(i) == 0 for i in isa.instrs)


def test_split_fields_gather_and_scatter_their_pieces() -> None:
    # a 16-bit word: opcode in bits 0..3; an offset whose bits 1..4 sit at word bits 12..15
    # and bits 5..7 at word bits 4..6 (bit 0 implicit zero), as RISC-V branches store theirs
    off = Split("OFF", (12, 15, 1), (4, 6, 5), kind=Int())
    isa = ISA("toy-split", [Bitset("jmp", display="{NAME} {OFF}", fields=[off],
                                   patterns=[P(0, 3, "1010"), P(7, 11, "00000")])], 0, 16)
    ins = isa.find("jmp")
    assert off.width == 8 and off.mask == 0xF070 and bits_unaccounted(ins) == 0
    word = ins.encode({"OFF": -6})  # 0b11111010: bits 1..4 = 1101, bits 5..7 = 111
    assert word == 0xA | (0b1101 << 12) | (0b111 << 4)
    dec, vals = isa.decode(word)
    assert vals["OFF"] == 0b11111010 and isa.format(dec, vals) == "jmp -6"
    with pytest.raises(EncodeError, match="cannot hold"):
        ins.encode({"OFF": 3})  # bit 0 has no piece


def test_branch_labels_through_context() -> None:
    isa = ISA("toy", TOY, gen=2, size=16)

    class Ctx:
        pc = 10

        def branch_label(self, target, call):
            return f"l{target}" if target < 12 else None

    w = isa.find("b").encode({"OFF": 1})
    assert isa.format(*isa.decode(w), Ctx()) == "b #l11"
    w = isa.find("b").encode({"OFF": 5})
    assert isa.format(*isa.decode(w), Ctx()) == "b #5"


def _read(text: str, gen: int = 2):
    isa = ISA("toy", TOY, gen=gen, size=16)
    toks = LEX.tokenize(text, "t.s", 3)
    ts = TokenStream(toks, SourceLoc("t.s", 3, len(text) + 1))
    mnem = next(t.text for t in toks if t.kind == "ID")
    for ins in isa.by_mnemonic[mnem]:
        for tmpl, flds, implied in ins.syntaxes():
            vals = match_template(ins, tmpl, flds, ts, None, LEX)
            if vals is not None:
                return ins.encode({**implied, **vals})
    raise ts.error()


def test_templates_read_back() -> None:
    isa = ISA("toy", TOY, gen=2, size=16)
    for w in (isa.find("add").encode({"SAT": 1, "D": 3, "S": 5}),
              isa.find("or").encode({"D": 2}),
              isa.find("li").encode({"D": 1, "IMM": 0x11}),
              isa.find("mode").encode({"M": 1})):
        assert _read(isa.format(*isa.decode(w))) == w
    assert _read("li r1, (1 << 2 | 1)") == isa.find("li").encode({"D": 1, "IMM": 5})


def test_syntax_error_says_where_and_what() -> None:
    with pytest.raises(AsmError) as e:
        _read("add r1, 7")
    assert (e.value.loc.line, e.value.loc.col) == (3, 9)
    assert "expected a register" in str(e.value) and "found '7'" in str(e.value)
    with pytest.raises(AsmError) as e:
        LEX.tokenize("add r1, $", "t.s", 4)
    assert str(e.value).startswith("t.s:4:9: error: unexpected character")


def test_expressions_defer_labels() -> None:
    class Ctx:
        def symbol(self, tok):
            return LabelRef(tok.text[1:], tok.loc) if tok.kind == "LABEL" else None

    toks = LEX.tokenize("#end - 2 + 0x10")
    v = parse_number_expr(TokenStream(toks, SourceLoc("x", 1, 1)), Ctx())
    assert evaluate(v, {"end": 100}) == 114
    with pytest.raises(AsmError, match="undefined label 'end'"):
        evaluate(v, {})


def test_format_parts_split_mnemonic_from_operands() -> None:
    isa = ISA("toy", TOY, gen=3, size=16)
    ins = isa.match(0x8000 | 0x0100 | 0x21)
    vals = ins.field_values(0x8000 | 0x0100 | 0x21)
    assert isa.format_parts(ins, vals) == ("(sat)add", "r1, r2", "(sat)add r1, r2")
    ins, vals = isa.decode(0x0200 | 0x03)  # the override: no operands after the blank
    assert isa.format_parts(ins, vals) == ("clr", "r3", "clr r3")
    ins, vals = isa.decode(0x0001)
    assert isa.format_parts(ins, vals) == ("mode", "hi", "mode hi")
    for word in range(0, 1 << 16, 97):
        ins = isa.match(word)
        if ins is None:
            continue
        vals = ins.field_values(word)
        mnemonic, op_str, text = isa.format_parts(ins, vals)
        assert text == isa.format(ins, vals)
        assert text == (f"{mnemonic} {op_str}" if op_str else mnemonic)


def test_instruction_record() -> None:
    from isaforge.core.insn import Instruction

    ins = Instruction(8, 4, 0x12345678, "add", "r1, r2", "add r1, r2", "add", {"D": 1})
    assert ins.bytes == bytes([0x78, 0x56, 0x34, 0x12])
    assert str(ins) == "add r1, r2"
    big = Instruction(0, 8, 0x0102030405060708, "x", "", "x", endian="big")
    assert big.bytes == bytes(range(1, 9))


def test_hooks_handles_ranges_and_kinds() -> None:
    from isaforge.core.hooks import HookError, Hooks

    changes = []
    hooks = Hooks(["insn", "mem_write"], on_change=lambda: changes.append(1))
    seen: list[tuple] = []
    h1 = hooks.add("insn", lambda m, a, *rest: seen.append(("all", a)))
    h2 = hooks.add("insn", lambda m, a, *rest: seen.append(("range", a)), begin=4, end=8)
    for a in (0, 4, 8, 12):
        hooks.fire("insn", None, a, 4, None)
    assert seen == [("all", 0), ("all", 4), ("range", 4), ("all", 8), ("range", 8),
                    ("all", 12)]
    assert h1 != h2 and len(changes) == 2
    hooks.delete(h1)
    seen.clear()
    hooks.fire("insn", None, 4, 4, None)
    assert seen == [("range", 4)]
    with pytest.raises(HookError, match="no hook with handle"):
        hooks.delete(h1)
    with pytest.raises(HookError, match="unknown hook kind 'packet'.*insn, mem_write"):
        hooks.add("packet", print)
    assert hooks.any("insn") and not hooks.any("mem_write")
    hooks.delete(h2)
    assert not hooks.any()


def _import_cycles_tool():
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("import_cycles",
                                                  root / "tools" / "import_cycles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, root / "src"


def test_import_cycle_finder() -> None:
    mod, _ = _import_cycles_tool()
    assert mod.cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert mod.cycles({"a": {"a"}}) == [["a"]]
    assert mod.cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_import_circles() -> None:
    """No module of isaforge imports, at any level (module, function, TYPE_CHECKING), one
    that imports it back."""
    mod, src = _import_cycles_tool()
    assert mod.cycles(mod.import_graph(src)) == []
