"""The fast path's optional parts (``codegen.FEATURES``: conditional branches kept in
locals, a block's first reads at once, the header popped where waitin finds it, the
CP_MEM_WRITE copy to NRT_DATA, the register copy from an IB, control registers written in
place, an IB's end in the compiled block, a $data write after an address write, constant
addresses), each on and off, against the exact path on random streams of the packets they
handle; and that each is really in the code made for a630's handlers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.afuc.machine import codegen
from tests.afuc.machine.test_emu_fastpath import (
    CP_INDIRECT_BUFFER,
    CP_MEM_WRITE,
    CP_REG_WRITE,
    IB_ADDR,
    IB_WORDS,
    MEM_WRITE,
    TYPE3,
    TYPE4,
    me_init_steps,
    mixed_words,
    same,
)

NAMES = sorted(codegen.FEATURES)


@pytest.fixture
def features() -> Iterator[dict[str, bool]]:
    saved = dict(codegen.FEATURES)
    yield codegen.FEATURES
    codegen.FEATURES.update(saved)


# CP_MEM_WRITE with addresses whose low bits are set too, high dwords, 1 to 6 data dwords
MEM_WRITE_ANY = st.tuples(st.just(CP_MEM_WRITE), st.tuples(
    st.integers(0x10000, 0x10040), st.integers(0, 3),
    st.lists(st.integers(0, 0xFFFFFFFF), min_size=1, max_size=6)).map(
        lambda t: [t[0], t[1], *t[2]]))


@given(st.lists(st.one_of(MEM_WRITE_ANY, MEM_WRITE, TYPE3, TYPE4.map(lambda t: (None, t))),
                min_size=1, max_size=8),
       st.integers(0, 600), st.booleans(), st.sets(st.sampled_from(NAMES)))
@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_streams_fast_equals_exact_with_any_features_off(features, packets, budget, hook,
                                                         off):
    """Random CP_MEM_WRITE (the NRT_DATA copy), CP_REG_WRITE (the first reads at once),
    CP_SET_DRAW_STATE, CP_INDIRECT_BUFFER and type-4 packets, the step limit anywhere,
    sometimes a register hook, with a random set of the optional parts turned off."""
    features.update({n: n not in off for n in NAMES})
    same(mixed_words(packets), max_steps=me_init_steps() + budget, hook=hook)


@given(st.lists(MEM_WRITE_ANY, min_size=1, max_size=30), st.integers(0, 400))
@settings(max_examples=30, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_runs_of_mem_writes_fast_equals_exact(features, packets, budget):
    """Runs of CP_MEM_WRITE packets (the copy to NRT_DATA), the step limit anywhere."""
    same(mixed_words(packets), max_steps=me_init_steps() + budget)


def handler_source(op: int) -> str:
    emu = same(mixed_words([(op, [0x10000, 0, 1, 2] if op == CP_MEM_WRITE
                             else [0, 0xA00E, 1])] * 2))
    p = emu.main
    return emu.codegen._block_source(p, p.jmptbl[op])[0]


@pytest.mark.parametrize("on", [True, False])
def test_the_parts_are_in_the_code_of_a630s_handlers(features, on):
    features.update(dict.fromkeys(NAMES, on))
    mem, reg = handler_source(CP_MEM_WRITE), handler_source(CP_REG_WRITE)
    assert ("for v_ in starmap(rb.popleft" in mem) == on  # nrt_copy
    assert ("if len(rb) >= 2 and not m.ib_level and fr:" in mem) == on  # grouped_reads
    assert ("if len(rb) >= 3 and not m.ib_level and fr:" in reg) == on
    assert ("if c3_: " in reg) == on  # cond_branches (breqb after the first two reads)
    assert ("    hdr = rb.popleft()" in reg) == on  # tail_pop
    assert ("nb = None" in reg) != on
    assert ("g[30] = v_; o_ = v_; r_ = 30" in reg) == on  # addr_data
    assert ("m.data_mode = 2; g[29] = 0xa0000000" in mem) == on  # const_addr
    # ib_copy in the type-4 handler, ctrl_inline in CP_INDIRECT_BUFFER's blocks
    emu = same(mixed_words([(CP_INDIRECT_BUFFER, [IB_ADDR, 0, len(IB_WORDS)])] * 2))
    p = emu.main
    blocks = [emu.codegen._block_source(p, pc)[0] for pc in p._fast]
    assert ("(q_ := m.ib.get(m.ib_level))" in "".join(blocks)) == on
    assert any("if fr: m.control[" in b for b in blocks) == on
    assert any("m.ib_end()" in b for b in blocks) == on  # ib_end
    # (a630's handler clears the address's low bits: NRT_ADDR moves on)
    emu = same(mixed_words([(CP_MEM_WRITE, [0x10003, 0, 7, 8, 9])]))
    assert emu.read_mem(0x10000, 3) == [7, 8, 9]
