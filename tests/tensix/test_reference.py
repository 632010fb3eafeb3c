"""The Tensix front end against real objdump listings (reference data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isaforge import tensix
from isaforge.tensix.listing import listing_lines
from tests.refdata import refdata

HEX_DIRS = ("add1_sfpu_single_file", "blackhole-py-p100a")
NOHEX = ("matmul-all-cores.s", "eltwise-binary-all-cores.s", "layernorm-all-cores.s",
         "sdpa-all-cores.s")


def _hex_listings() -> list[Path]:
    root = refdata("tensix", "tenstorrent-docs")
    files = [p for d in HEX_DIRS for p in sorted((root / d).iterdir()) if p.is_file()]
    return [p for p in files if not p.name.endswith(".md")]


def test_every_hex_listing_word_disassembles_as_objdump_printed() -> None:
    total = 0
    mismatches = []
    for path in _hex_listings():
        for ln in listing_lines(path.read_text()):
            assert ln.raw is not None, f"{path.name}:{ln.lineno}: no hex word"
            total += 1
            [ins] = tensix.disassemble([ln.raw], rotated=True)
            if (ins.mnemonic, ins.op_str) != (ln.mnemonic, ln.operands) or ins.text != ln.text:
                mismatches.append(f"{path.name}:{ln.lineno}: objdump {ln.text!r}, "
                                  f"we {ins.text!r}")
    assert not mismatches, "\n".join(mismatches)
    assert total == 148  # SOURCES.md: all 148 Tensix lines of the hex listings


def test_hex_listing_words_reassemble_to_the_same_stream_words() -> None:
    for path in _hex_listings():
        lines = [ln for ln in listing_lines(path.read_text()) if ln.raw is not None]
        if not lines:
            continue
        words = tensix.assemble("\n".join(ln.text for ln in lines), filename=path.name)
        assert [tensix.rotl2(w) for w in words] == [ln.raw for ln in lines], path.name


@pytest.mark.parametrize("name", NOHEX)
def test_nohex_listing_lines_assemble_and_disassemble_back(name: str) -> None:
    path = refdata("tensix", "tenstorrent-docs", "nohex", name)
    lines = list(listing_lines(path.read_text()))
    assert lines, f"no Tensix lines found in {name}"
    words = tensix.assemble("\n".join(ln.text for ln in lines), filename=name)
    assert len(words) == len(lines)
    got = tensix.disassemble(words)
    bad = [f"{name}:{ln.lineno}: {ln.text!r} -> {w:#010x} -> {ins.text!r}"
           for ln, w, ins in zip(lines, words, got, strict=True) if ins.text != ln.text]
    assert not bad, "\n".join(bad[:20])


def test_the_seed_mvmul_replay_sequence_is_in_the_matmul_listing() -> None:
    """SOURCES.md: ttreplay 16,16,0,1 then 16 ttmvmul with addr_mode 0,1,0,2,0,1,0,4,..."""
    path = refdata("tensix", "tenstorrent-docs", "nohex", "matmul-all-cores.s")
    lines = list(listing_lines(path.read_text()))
    idx = next(i for i, ln in enumerate(lines) if ln.address == 0x726C)
    assert lines[idx].text == "ttreplay\t16,16,0,1"
    mvmuls = list(tensix.disassemble(tensix.assemble("\n".join(ln.text for ln in
                                                               lines[idx + 1: idx + 17]))))
    assert [i.name for i in mvmuls] == ["MVMUL"] * 16
    assert [i.fields["addr_mode"] for i in mvmuls] == [0, 1, 0, 2, 0, 1, 0, 4,
                                                        0, 1, 0, 2, 0, 1, 0, 5]


def test_relist_reproduces_objdump_for_a_whole_listing() -> None:
    path = refdata("tensix", "tenstorrent-docs", "add1_sfpu_single_file",
                   "compute_trisc1.objdump.txt")
    out = tensix.relist(path.read_text())
    assert out.count("\n") == sum(1 for _ in listing_lines(path.read_text()))
    assert "# objdump:" not in out
    assert "\tsfpadd\tL0,L10,L0,L1,0" in out


def test_bundled_table_matches_the_generator_output() -> None:
    import importlib.util
    import json

    import yaml  # noqa: F401 - the generator needs PyYAML (a declared test dependency)

    repo = Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location("gen_tensix_isa",
                                                  repo / "tools" / "gen_tensix_isa.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    built = gen.build(refdata("tensix"))
    assert json.loads(json.dumps(built)) == tensix.isa.load_table()
    assert len(built["instructions"]) == 137
