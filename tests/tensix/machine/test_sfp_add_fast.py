"""The fused load-MAD-store call's short way for exact products (:data:`.fma_jit.ADD_FAST`,
switch ``SfpBlocks.fused_add``): an element whose product is exact (a factor is +-1.0,
add1's SFPADD) adds in the machine's FP32 where that gives the model's bits. It must give
the bits of the model's integer steps (the call without ADD_FAST, itself compared with
:func:`.fma.fma_bh` cell by cell and with the oracle vectors) on every input:

* every BF16 cell as the loaded term, against addends of every exponent, both signs and edge
  mantissas (with the loaded factor, the loaded addend, and the loaded word as both);
* 32-bit products and addends (hypothesis, and the edge values: +-0, denormals, inf, NaN,
  the largest finite numbers, the smallest normal ones, rounding ties);
* inputs outside its domain (a factor not +-1.0, zero, denormal, inf or NaN terms, sums
  too small or too large) go the integer way: the count of short-way elements it returns is
  that of the domain, worked out here with numpy;
* add1 and a matmul with the switch on and off.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from isaforge.tensix.machine.sfpu import convert, fma, fma_jit
from isaforge.tensix.machine.sfpu.block import SfpBlocks

from ..switched import add1_on_off, matmul_on_off, setting

ONE, SIGN = 0x3F800000, 0x80000000
#: every BF16 cell 32 times: element ``32 * k + lane`` loads cell ``k``
CELLS = np.repeat(np.arange(1 << 16, dtype=np.uint16), 32)
AT = np.arange(CELLS.size, dtype=np.int64)
EDGES = [0, 1, 0x7FFFFF, 0x400000, 0x800000, 0x800001, 0xFFFFFF, 0x1000000, 0x3F800000,
         0x3F800001, 0x3FFFFFFF, 0x4B000000, 0x4B800001, 0x33800000, 0x33FFFFFF, 0x34000000,
         0x7F7FFFFF, 0x7F7FFFFE, 0x7F000000, 0x7F800000, 0x7F800001, 0x7FC00000, 0x7FFFFFFF,
         0x00FFFFFF, 0x01000000, 0x01800000, 0x3F7FFFFF, 0x3F000000, 0x3F000001, 0x7E800000]


def _kernel():  # type: ignore[no-untyped-def]
    fma_jit.load()
    kernel = fma.compiled("load_mad_store")
    assert kernel is not None
    return kernel


def _both(cells: np.ndarray, rows: list[np.ndarray], sel: int, xb: int, xc: int
          ) -> tuple[int, np.ndarray]:
    """The call with ADD_FAST and without on the same input: asserts the same cells and last
    words; returns the short-way count and the cells."""
    kernel = _kernel()
    at = AT[:cells.size]
    outs = []
    for add in (fma_jit.ADD_FAST, 0):
        flat = cells.copy()
        last_v = np.zeros(32, dtype=np.uint32)
        last_d = np.zeros(32, dtype=np.uint32)
        fast = kernel(flat, at, at, *rows, sel | add, xb, xc, last_v, last_d)
        outs.append((fast, flat, last_v, last_d))
    (fast, *on), (none, *off) = outs
    assert none == 0
    for a, b in zip(on, off, strict=True):
        bad = np.flatnonzero(a != b)
        assert not bad.size, f"{bad.size} differ; first at element {bad[0]}"
    return fast, on[0]


def _domain(p: np.ndarray, z: np.ndarray) -> int:
    """How many (product, addend) pairs the short way may take (numpy's FP32 sum)."""
    pe, ze = p >> 23 & 0xFF, z >> 23 & 0xFF
    with np.errstate(all="ignore"):
        s = (p.view(np.float32) + z.view(np.float32)).view(np.uint32)
    se = s >> 23 & 0xFF
    return int(np.count_nonzero((pe != 0) & (pe != 255) & (ze != 0) & (ze != 255)
                                & (se >= 2) & (se <= 253)))


def _loaded() -> np.ndarray:
    return convert.load_convert(convert.BF16, CELLS, np.zeros(CELLS.size, np.uint32))


def _addends(seed: int) -> list[np.ndarray]:
    """Rows of 32 addends: every exponent, both signs, edge and random mantissas."""
    rng = np.random.default_rng(seed)
    mant = [0, 0x7FFFFF, 0x10000]
    z = [(s << 31) | (e << 23) | m for e in range(256) for s in (0, 1) for m in mant]
    z += [int(v) for v in rng.integers(0, 1 << 32, 64)] + EDGES
    z += [0] * (-len(z) % 32)
    arr = np.array(z, dtype=np.uint32)
    return [arr[k:k + 32] for k in range(0, arr.size, 32)]


@pytest.mark.parametrize(("sel", "xb"), [(2, 0), (2, SIGN), (1, 0)])
def test_every_cell_plus_many_addends(sel: int, xb: int) -> None:
    """Loaded factor (VB, negated or not; VA), the other factor +1.0 / -1.0 by lane,
    addends of every exponent: the same bits, and the short way taken exactly on its
    domain."""
    one = np.where(np.arange(32) % 3 == 1, ONE | SIGN, ONE).astype(np.uint32)
    loaded = _loaded()
    total = 0
    for z in _addends(sel + xb):
        rows = [one, one, z] if sel == 2 else [one, one, z]
        fast, _ = _both(CELLS, rows, sel, xb, 0)
        sign = np.tile(one & SIGN, 1 << 16)
        p = loaded ^ sign ^ np.uint32(xb if sel == 2 else 0)
        assert fast == _domain(p, np.tile(z, 1 << 16))
        total += fast
    assert total > 1 << 24  # (most of them)


@pytest.mark.parametrize("sel", [4, 6, 5])
def test_loaded_addend(sel: int) -> None:
    """The loaded word as the addend (and as a factor and the addend: x + x), products of
    32-bit rows (every exponent), negated addends."""
    loaded = _loaded()
    for k, row in enumerate(_addends(sel)[::7]):
        one = np.full(32, ONE if k % 2 else ONE | SIGN, dtype=np.uint32)
        rows = [one, row, one] if sel == 4 else [one, one, one]
        xc = SIGN if k % 3 == 0 else 0
        fast, _ = _both(CELLS, rows, sel, 0, xc)
        z = loaded ^ np.uint32(xc)
        if sel == 4:
            p = np.tile(row ^ (one & SIGN), 1 << 16)
        else:  # (the loaded word times the row's +-1.0)
            p = loaded ^ np.tile(one & SIGN, 1 << 16)
        assert fast == _domain(p, z)


def test_no_factor_one_goes_the_integer_way() -> None:
    """Factors near 1.0 but not +-1.0 (and zeros, infinities, NaN): the same bits, the short
    way only where the loaded factor is +-1.0."""
    near = np.array([ONE + 1, ONE - 1, 0x40000000, 0, SIGN, 0x7F800000, 0x7FC00000, 0x00800000]
                    * 4, dtype=np.uint32)
    z = np.full(32, 0x3F800000, dtype=np.uint32)
    fast, _ = _both(CELLS, [near, near, z], 2, 0, 0)
    loaded = _loaded()
    one = (loaded & 0x7FFFFFFF) == ONE
    p = np.where(one, np.tile(near, 1 << 16) ^ (loaded & np.uint32(SIGN)), 0).astype(np.uint32)
    # (cells +1.0 and -1.0, the 16 lanes whose factor is a normal number)
    assert fast == _domain(p, np.tile(z, 1 << 16)) == 2 * 16


word32 = st.one_of(st.integers(0, (1 << 32) - 1), st.sampled_from(EDGES),
                   st.sampled_from(EDGES).map(lambda v: v | SIGN))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(word32, word32, st.booleans()), min_size=32, max_size=32),
       st.integers(0, 3))
def test_32_bit_products_and_addends(pairs: list[tuple[int, int, bool]], neg: int) -> None:
    """Nothing loaded (sel 0): 32-bit products (the row times +-1.0) and addends, ties
    included (an addend half an ulp of the product's away)."""
    p = np.array([a for a, _, _ in pairs], dtype=np.uint32)
    z = np.array([b for _, b, _ in pairs], dtype=np.uint32)
    tie = np.array([t for _, _, t in pairs])
    # (an addend whose bits meet the product's at the rounding position: a tie or near one)
    e = (p >> 23 & 0xFF).astype(np.int64)
    z = np.where(tie & (e > 25) & (e < 250),
                 ((e - 24) << 23 | (z & 0x80000000) | (z & 1)).astype(np.uint32), z)
    sign = np.where(np.arange(32) % 2 == 0, 0, SIGN).astype(np.uint32)
    one = ONE | sign
    xb, xc = (neg & 1) * SIGN, (neg >> 1) * SIGN
    cells = np.zeros(64, dtype=np.uint16)
    fast, _ = _both(cells, [one, p, z], 0, xb, xc)
    assert fast == 2 * _domain(p ^ np.uint32(xb) ^ sign, z ^ np.uint32(xc))


def test_add1_on_and_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """add1 (inf, nan and denormal inputs too): the same outputs and counts with the short
    way on and off, and it was taken (the count the call returns)."""
    fma_jit.load()
    kernel = fma_jit._LOADED["load_mad_store_prog"]
    fast = [0]

    def counted(*a: object) -> int:
        n = kernel(*a)
        fast[0] += n
        return n

    monkeypatch.setitem(fma_jit._LOADED, "load_mad_store_prog", counted)
    on, off = add1_on_off(monkeypatch, setting(monkeypatch, SfpBlocks, "fused_add"), 7,
                          [fast])
    assert on[0] > 0 and off[0] == 0


def test_matmul_on_and_off(monkeypatch: pytest.MonkeyPatch, made: tuple[list, list]) -> None:
    matmul_on_off(setting(monkeypatch, SfpBlocks, "fused_add"), 3, made)
