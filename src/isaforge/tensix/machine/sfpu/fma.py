"""The Vector Unit's multiply-add (SFPMAD and its family), bit for bit, on whole vectors.

Blackhole's SFPMAD computes ``x * y + z`` on FP32 bit patterns as the bit-exact model of
tt-isa-documentation (``Miscellaneous/FMA``, ``fma_model_bh``; ttsim's ``fma.cpp`` is the
same model) describes it; the oracle vectors ``refdata/tensix/oracle/sfpu`` were computed by
it. :func:`fma_bh` is our own numpy formulation of that behaviour, every step in exact
integers on int64 arrays:

1. inputs with exponent 0 (denormals, zeros) have a zero mantissa; the product's 48-bit
   mantissa gains three guard bits and is then narrowed by 23 bits with a sticky bit (the
   addend is never widened): the product keeps 4 more bits than FP32, unrounded;
2. NaN/Inf inputs, and a product whose exponent alone reaches 255, give the canonical NaN
   ``0x7fc00000``, ``z`` (an infinite addend) or the product's signed infinity;
3. a zero product, or one whose exponent is below 0 (it underflows on its own), gives ``z``
   when ``z`` is a normal number, else the zero ``z_sign & p_sign``;
4. the smaller term is shifted right with a "semi-sticky" bit (set only when some bit
   survives the shift), the magnitudes are added or subtracted in 32 bits, the sum is
   normalised to a leading bit 26; at exponent <= 0 it is shifted one place only, with the
   sticky test ``(m & (n | 1)) != 0`` of the model; then round to nearest even, and a result
   with exponent 0 after rounding is flushed to a zero of the result's sign.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from . import fma_jit

QNAN = 0x7FC00000
INF = 0x7F800000


def _bitlen32(v: np.ndarray) -> np.ndarray:
    """Bit length of each element of ``v`` (0 <= v < 2**32; 0 for 0)."""
    return np.frexp(v.astype(np.float64))[1].astype(np.int64)


def _semi_sticky(m: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``m >> s`` (``s >= 0``), with bit 0 set when bits were lost, unless nothing is left."""
    s = np.minimum(s, 62)
    v = m >> s
    lost = (v << s) != m
    return v | (lost & (v != 0))


def fma_bh(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``x * y + z`` as Blackhole's SFPMAD computes it (uint32 FP32 bit patterns in and out;
    the arguments broadcast)."""
    x, y, z = (np.asarray(v, dtype=np.uint32).astype(np.int64) for v in (x, y, z))
    xe, ye, ze = (v >> 23 & 0xFF for v in (x, y, z))
    xm = np.where(xe != 0, (x & 0x7FFFFF) | 0x800000, 0)
    ym = np.where(ye != 0, (y & 0x7FFFFF) | 0x800000, 0)
    zm = np.where(ze != 0, (z & 0x7FFFFF) | 0x800000, 0) << 3
    zs = z & 0x80000000
    ps = (x ^ y) & 0x80000000
    pm = (xm * ym) << 3
    pm = (pm >> 23) | ((pm & 0x7FFFFF) != 0)
    pe = xe + ye - 150 + 23

    # NaN / infinity inputs, or a product overflowing on its own
    x_inf, y_inf, z_inf = xe == 255, ye == 255, ze == 255
    special = x_inf | y_inf | z_inf | (pe >= 255)
    nan = ((x_inf & ((xm != 0x800000) | (ym == 0)))
           | (y_inf & ((ym != 0x800000) | (xm == 0)))
           | (z_inf & (zm != 0x4000000))
           | (z_inf & (x_inf | y_inf) & (zs != ps)))
    special_r = np.where(nan, QNAN, np.where(z_inf, z, ps | INF))

    # a product that is zero or underflows on its own: the addend (or a signed zero)
    tiny = (pm == 0) | (pe < 0)
    tiny_r = np.where(zm != 0, z, zs & ps)

    re = np.maximum(pe, ze)
    pm = _semi_sticky(pm, re - pe)
    zm = _semi_sticky(zm, re - ze)
    rs = np.where(pm >= zm, ps, zs)
    zt = np.where(zs != rs, ~zm, zm)
    pt = np.where(ps != rs, ~pm, pm)
    rm = (zt + pt + (ps != zs)) & 0xFFFFFFFF
    exact_zero = rm == 0

    n = _bitlen32(rm) - 27  # 5 - clz32(rm)
    re = re + n
    overflow = re >= 255
    low = re <= 0
    n = np.where(low, n + 1, n)
    re = np.where(low, 0, re)
    left = rm << np.maximum(-n, 0)
    nr = np.maximum(n, 0)
    right = (rm >> nr) | ((rm & (nr | 1)) != 0)
    rm = np.where(n <= 0, left, right)
    r = (re << 23) + ((rm >> 3) & 0x7FFFFF)
    r = r + (((rm & 7) + (r & 1)) > 4)
    r = np.where((r >> 23) == 0, 0, r)
    out = rs | r
    out = np.where(overflow, rs | INF, out)
    out = np.where(exact_zero, zs & ps, out)
    out = np.where(tiny, tiny_r, out)
    out = np.where(special, special_r, out)
    return out.astype(np.uint32)


#: Use the compiled twin (:mod:`.fma_jit`) when numba is available (tests switch this off to
#: compare the paths).
USE_JIT = True
#: Multiply-adds done with numpy before the compiled twin is loaded: loading costs ~0.5-1 s
#: of CPU (``import numba`` and the machine code from numba's cache; 2-3 s the first time),
#: which a short program would not win back.
JIT_AFTER = 300
#: When numba is imported already (the RISC-V cores' compiled path imports it), loading the
#: twin from numba's cache costs ~1 ms: load it at the first multiply-add (False: wait for
#: JIT_AFTER calls all the same; the twin gives the same bits either way)
EAGER_WHEN_IMPORTED = True

_STATE = {"calls": 0}
_U32 = np.dtype(np.uint32)
_ND = np.ndarray


def kernel() -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None:
    """The compiled twin when :func:`fma` would use it now (counting a call toward
    JIT_AFTER while it is not loaded), else None."""
    if not USE_JIT:
        return None
    k = fma_jit._LOADED.get("lanes", False)
    if k is False:
        _STATE["calls"] += 1
        if _STATE["calls"] > JIT_AFTER or (EAGER_WHEN_IMPORTED and "numba" in sys.modules):
            return fma_jit.load()
        return None
    return k


def compiled(name: str) -> Callable[..., None] | None:
    """The compiled kernel ``name`` of :mod:`.fma_jit` when the twin is in use and loaded
    (never loads it)."""
    return fma_jit._LOADED.get(name) if USE_JIT else None


def fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """:func:`fma_bh` of 1-D uint32 vectors (or scalars), compiled when worth it."""
    k = kernel()
    if k is None:
        return fma_bh(x, y, z)
    if type(x) is not _ND or x.dtype != _U32:
        x = np.asarray(x, dtype=np.uint32)
    if type(y) is not _ND or y.dtype != _U32:
        y = np.asarray(y, dtype=np.uint32)
    if type(z) is not _ND or z.dtype != _U32:
        z = np.asarray(z, dtype=np.uint32)
    shape = x.shape
    if shape == y.shape == z.shape:
        out = np.empty(shape, dtype=np.uint32)
        if len(shape) == 1:  # (the LRegs' rows)
            k(x, y, z, out)
            return out
    else:
        big = max(shape, y.shape, z.shape, key=len)
        if len(big) != 2 or any(v.shape != big and v.shape != big[1:] for v in (x, y, z)):
            shape = np.broadcast_shapes(shape, y.shape, z.shape)
        else:  # rows and a block of them (a loop's pass): the block's shape
            shape = big
        # an input whose shape ends the result's repeats in the kernel (i % len);
        # any other broadcast is made in full
        x, y, z = (v if v.shape == shape[len(shape) - v.ndim:] else
                   np.ascontiguousarray(np.broadcast_to(v, shape)) for v in (x, y, z))
        out = np.empty(shape, dtype=np.uint32)
    k(x.reshape(-1), y.reshape(-1), z.reshape(-1), out.reshape(-1))
    return out


__all__ = ["EAGER_WHEN_IMPORTED", "INF", "JIT_AFTER", "QNAN", "USE_JIT", "compiled", "fma",
           "fma_bh", "kernel"]
