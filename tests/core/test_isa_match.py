"""The codec's shortcuts give what the plain definitions give, on every ISA of the project:
ISA.match (a decision tree on the bits all candidates fix) finds what a scan of every
instruction finds (one match, or None for none or several); Instr.field_values (a generated
expression) and Instr.template_for give what a loop over the fields and forms gives."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.afuc.isa import isa_for
from isaforge.core.isa import ISA, Instr
from isaforge.riscv.isa import rv32_isa
from isaforge.tensix.isa import tensix_isa
from isaforge.theia.isa import cp_isa, vp_isa

ISAS = {"afuc5": lambda: isa_for(5), "afuc6": lambda: isa_for(6), "afuc7": lambda: isa_for(7),
        "theia-cp": cp_isa, "theia-vp": vp_isa, "tensix": tensix_isa, "rv32": rv32_isa}


def _scan(isa: ISA, word: int) -> Instr | None:
    found = None
    for ins in isa.instrs:
        if (word & ins.mask & ~ins.dontcare) == ins.match:
            if found is not None:
                return None
            found = ins
    return found


@pytest.mark.parametrize("name", ISAS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_match_is_a_full_scan(name: str, data: st.DataObject) -> None:
    isa = ISAS[name]()
    bits = st.integers(0, (1 << isa.size) - 1)
    # random words, and words with one instruction's fixed bits (so every leaf is reached)
    ins = data.draw(st.sampled_from(isa.instrs))
    word = data.draw(st.one_of(bits, bits.map(lambda r: ins.match | (r & ~ins.mask))))
    assert isa.match(word) is _scan(isa, word)


def _field_values(ins: Instr, word: int) -> dict[str, int]:
    vals: dict[str, int] = {}
    for f in ins.fields.values():
        vals[f.name] = f.const if f.const is not None else f.extract(word)
    for o in ins.overrides:
        for f in o.fields:
            vals.setdefault(f.name, f.extract(word))
    return vals


@pytest.mark.parametrize("name", ISAS)
@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_field_values_and_template_for_are_the_loops(name: str, data: st.DataObject) -> None:
    isa = ISAS[name]()
    ins = data.draw(st.sampled_from(isa.instrs))
    word = data.draw(st.integers(0, (1 << isa.size) - 1))
    vals = ins.field_values(word)
    want = _field_values(ins, word)
    assert list(vals.items()) == list(want.items())  # the same order too
    template = next(t for t, _, when in ins.forms
                    if all(vals.get(k) == v for k, v in when.items()))
    assert ins.template_for(vals)[0] == template


def test_instructions_pickle_after_use() -> None:
    """The generated extractor is not pickled (it is made again)."""
    isa = isa_for(6)
    word = isa.instrs[0].match
    want = isa.instrs[0].field_values(word)
    isa.match(word)
    back = pickle.loads(pickle.dumps(isa))
    assert back.instrs[0].field_values(word) == want
    assert back.match(word).name == isa.match(word).name
