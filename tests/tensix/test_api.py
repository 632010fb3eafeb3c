"""The shape of the Tensix API (issue 12): ``disassemble`` is a generator of the one core
instruction record, ``listing`` its text form; the layers import downward only (the
front end never imports the machine; no unit imports the coprocessor)."""

from __future__ import annotations

import importlib.util
import inspect
import struct
from pathlib import Path

import pytest

from isaforge import tensix
from isaforge.core import insn
from isaforge.core.errors import DecodeError

WORDS = tensix.assemble("ttsetc16 5,4\nTTI_MVMUL(0, 0, 1, 0)\nTTI_SFPAND(0, 15, 0, 1)\nttnop")


def test_disassemble_is_a_generator_of_core_instructions() -> None:
    gen = tensix.disassemble(WORDS, address=0x100)
    assert inspect.isgenerator(gen) and tensix.Instruction is insn.Instruction
    out = list(gen)
    assert all(type(i) is insn.Instruction for i in out)
    assert [i.address for i in out] == [0x100, 0x104, 0x108, 0x10C]
    assert [i.size for i in out] == [4] * 4
    assert [(i.mnemonic, i.op_str) for i in out] == [
        ("ttsetc16", "5,4"), ("ttmvmul", "0,0,1,0"), ("TTI_SFPAND", "0, 15, 0, 1"),
        ("ttnop", "")]
    assert [i.detail.macro for i in out] == [False, False, True, False]
    assert out[1].bytes == struct.pack("<I", 0x26004000) and out[1].name == "MVMUL"
    assert tensix.decode_word(WORDS[0]) == out[0].__class__(
        0, 4, WORDS[0], "ttsetc16", "5,4", "ttsetc16\t5,4", "SETC16",
        {"setc16_reg": 5, "setc16_value": 4}, out[0].detail)


def test_words_are_decoded_lazily() -> None:
    gen = tensix.disassemble([0x02000000, 0xFF000000], what="k.bin")
    assert next(gen).mnemonic == "ttnop"
    with pytest.raises(DecodeError, match="k.bin: offset 0x4"):
        next(gen)


def test_rotated_words_keep_the_stream_word_in_detail() -> None:
    data = tensix.assemble_bytes("ttsetc16 5,4", rotated=True)
    [ins] = tensix.disassemble(data, rotated=True)
    assert ins.word == 0xB2050004 and ins.detail.raw == tensix.rotl2(0xB2050004)
    assert ins.detail.rotated and data == struct.pack("<I", ins.detail.raw)


def test_listing_is_the_text_of_disassemble() -> None:
    text = "ttsetc16\t5,4\nttmvmul\t0,0,1,0\nTTI_SFPAND(0, 15, 0, 1)\nttnop\n"
    data = struct.pack("<4I", *WORDS)
    assert tensix.listing(WORDS) == tensix.listing(data) == text
    assert tensix.listing(tensix.disassemble(WORDS)) == text
    verbose = tensix.listing([tensix.rotl2(w) for w in WORDS], rotated=True, verbose=True,
                             address=0x20)
    assert verbose.splitlines()[1] == f"      24:\t{tensix.rotl2(WORDS[1]):08x}\tttmvmul\t0,0,1,0"
    assert tensix.listing([]) == ""


def _graph() -> dict[str, set[str]]:
    root = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("import_cycles",
                                                  root / "tools" / "import_cycles.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.import_graph(root / "src")


def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        m = todo.pop()
        for d in graph.get(m, ()):
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_the_front_end_never_imports_the_machine() -> None:
    graph = _graph()
    for mod in ("isa", "image", "decode", "listing", "asm", "program"):
        deps = _reach(graph, f"isaforge.tensix.{mod}")
        assert not {d for d in deps if d.startswith("isaforge.tensix.machine")}, mod


def test_units_do_not_import_the_coprocessor() -> None:
    graph = _graph()
    units = [m for m in graph if m.startswith("isaforge.tensix.machine.")
             and m.rsplit(".", 1)[1] != "coprocessor"]
    assert len(units) >= 15
    for m in units:
        assert "isaforge.tensix.machine.coprocessor" not in _reach(graph, m), m
        assert "isaforge.tensix.machine" not in graph[m], m  # nor the package's __init__
