"""The compiled fast path (isaforge.theia.machine.jit) against the plain alu interpreter
(VectorProcessor.step_reference) on random instruction words and register states."""

from __future__ import annotations

import copy
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.theia.machine.jit import compile_block
from isaforge.theia.machine.memory import TMem
from isaforge.theia.machine.vp import VectorProcessor

EOF_BIT = 1 << 58

words = st.integers(0, (1 << 64) - 1).map(lambda w: w & ~EOF_BIT)
rows = st.integers(0, 2**32)  # a seed for the register contents


def _lane(rng: random.Random) -> int:
    return rng.randrange(80) if rng.random() < 0.5 else rng.getrandbits(32)


def _vp(seed: int, quirks: tuple[str, ...] = ()) -> VectorProcessor:
    rng = random.Random(seed)
    vp = VectorProcessor(0, TMem(range(100, 164)), omem_size=64, quirks=quirks)
    for i in range(256):
        if i % 3:  # leave some rows unwritten
            vp.write_row(i, (_lane(rng), _lane(rng), _lane(rng)))
    vp.write_row(3, (rng.randrange(32), 0, rng.randrange(8)))  # small OFFSET and INDEX
    vp.enabled = True
    return vp


def _state(vp: VectorProcessor) -> tuple:
    return (vp.r, bytes(vp.w), vp.omem.tolist(), vp.omem_written.tolist(), vp.pc[0])


@settings(max_examples=400, deadline=None)
@given(st.lists(words, min_size=1, max_size=6), rows)
def test_compiled_block_equals_reference(program: list[int], regs: int) -> None:
    fast = _vp(regs)
    fast.load_code(program)
    ref = copy.deepcopy(fast)
    blk = compile_block(fast.fetch, 0, 64)
    assert blk is not None
    fn, n, _ = blk
    fast.pc[0] = fn(fast.r, fast.w, fast)
    for _ in range(n):
        ref.step_reference(0)
    assert _state(fast) == _state(ref)


def test_eof_word_is_not_a_block() -> None:
    vp = _vp(0)
    vp.load_code([EOF_BIT | 1 << 48])
    assert compile_block(vp.fetch, 0, 64) is None
    assert vp.step_reference(0) is False
