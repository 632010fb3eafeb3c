"""The compiled twin of :func:`.fma.fma_bh` (numba), and its lazy loading.

:func:`.fma.fma_bh` is the reference: numpy on whole vectors, ~100 array operations, which
for 32 lanes cost ~100 us in numpy's per-call overhead. :func:`_fma_lanes` is the same
function, element by element, in exact integers, compiled: ~1 us for 32 lanes. The two agree
bit for bit (``tests/tensix/test_sfpu_oracle.py`` runs every oracle vector through both).
:func:`_load_mad_store` is a loop of load, multiply-add and store in one call (add1's loop,
:class:`~.block.SfpBlocks`; :func:`_load_mad_store_prog` calls it with few arguments), with a
short way for exact products (:data:`ADD_FAST`: add1's SFPADD, ~3x faster); :func:`_load_bf16`
and :func:`_store_bf16` a single SFPLOAD / SFPSTORE's BF16 cells, without the conversion
tables (large, and cold in a long program's cache).

Nothing here imports numba at import time; :func:`load` does, on first use (see
:func:`.fma.fma` for when).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _fma1(x: int, y: int, z: int) -> int:
    """One element of :func:`.fma.fma_bh` (Python ints; compiled by :func:`load`)."""
    xe = (x >> 23) & 0xFF
    ye = (y >> 23) & 0xFF
    ze = (z >> 23) & 0xFF
    xm = ((x & 0x7FFFFF) | 0x800000) if xe != 0 else 0
    ym = ((y & 0x7FFFFF) | 0x800000) if ye != 0 else 0
    zm = (((z & 0x7FFFFF) | 0x800000) << 3) if ze != 0 else 0
    zs = z & 0x80000000
    ps = (x ^ y) & 0x80000000
    pm = (xm * ym) << 3
    pm = (pm >> 23) | (1 if (pm & 0x7FFFFF) != 0 else 0)
    pe = xe + ye - 127
    if xe == 255 or ye == 255 or ze == 255 or pe >= 255:
        if ((xe == 255 and (xm != 0x800000 or ym == 0))
                or (ye == 255 and (ym != 0x800000 or xm == 0))
                or (ze == 255 and zm != 0x4000000)
                or (ze == 255 and (xe == 255 or ye == 255) and zs != ps)):
            return 0x7FC00000
        if ze == 255:
            return z
        return ps | 0x7F800000
    if pm == 0 or pe < 0:
        return z if zm != 0 else (zs & ps)
    re = pe if pe > ze else ze
    s = re - pe
    if s > 0:
        v = pm >> s if s < 63 else 0
        if v != 0 and (v << s) != pm:
            v |= 1
        pm = v
    s = re - ze
    if s > 0:
        v = zm >> s if s < 63 else 0
        if v != 0 and (v << s) != zm:
            v |= 1
        zm = v
    rs = ps if pm >= zm else zs
    zt = (~zm) & 0xFFFFFFFF if zs != rs else zm
    pt = (~pm) & 0xFFFFFFFF if ps != rs else pm
    rm = (zt + pt + (1 if ps != zs else 0)) & 0xFFFFFFFF
    if rm == 0:
        return zs & ps
    blen = 1  # (the bit length of rm, 0 < rm < 2**32, in five halvings)
    t = rm
    if t >> 16:
        t >>= 16
        blen += 16
    if t >> 8:
        t >>= 8
        blen += 8
    if t >> 4:
        t >>= 4
        blen += 4
    if t >> 2:
        t >>= 2
        blen += 2
    if t >> 1:
        blen += 1
    n = blen - 27
    re += n
    if re >= 255:
        return rs | 0x7F800000
    if re <= 0:
        n += 1
        re = 0
    if n <= 0:
        rm = rm << (-n)
    else:
        rm = (rm >> n) | (1 if (rm & (n | 1)) != 0 else 0)
    r = (re << 23) + ((rm >> 3) & 0x7FFFFF)
    if (rm & 7) + (r & 1) > 4:
        r += 1
    if (r >> 23) == 0:
        r = 0
    return rs | r


def _fma_lanes(x: np.ndarray, y: np.ndarray, z: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = fma_bh(x[i], y[i], z[i])`` (uint32 arrays; an input shorter than ``out``
    repeats, ``x[i % len(x)]``: a row broadcast over the rows of a C-ordered block)."""
    nx, ny, nz = x.shape[0], y.shape[0], z.shape[0]
    for i in range(out.shape[0]):
        out[i] = _fma1(np.int64(x[i % nx]), np.int64(y[i % ny]), np.int64(z[i % nz]))


#: ``sel`` bit of :func:`_load_mad_store`: an element whose product is exact (a factor is
#: +-1.0) adds in the machine's FP32 when that gives the model's bits (see there)
ADD_FAST = 8
_SIGN = 0x80000000


def _load_mad_store(flat: np.ndarray, at_load: np.ndarray, at_store: np.ndarray,
                    ra: np.ndarray, rb: np.ndarray, rc: np.ndarray, sel: int, xb: int,
                    xc: int, last_v: np.ndarray, last_d: np.ndarray) -> int:
    """A loop of SFPLOAD (BF16), a MAD, SFPSTORE (BF16, of the MAD's result), element by
    element: element ``i`` loads DstBits ``flat[at_load[i]]``, multiplies-adds (the operands
    whose bit in ``sel`` is set (1 VA, 2 VB, 4 VC) are the loaded word, the others the LReg
    rows ``ra``/``rb``/``rc``, lane ``i % 32``; VB and VC XORed with ``xb``/``xc``) and
    stores the result's cell to ``flat[at_store[i]]``. The last 32 elements' loaded words
    and results go to ``last_v`` and ``last_d``. The conversions are those of
    :func:`.convert.load_convert` and :func:`.convert.store_convert` in mode BF16, as
    arithmetic (their tables are large, and cold in a long program's cache;
    ``tests/tensix/machine/test_sfp_fast.py`` compares every cell). (The caller makes sure
    no element reads a cell another one writes.)

    With :data:`ADD_FAST` in ``sel`` (add1's SFPADD: a factor is 1.0), an element whose
    product is exact (a factor is +-1.0: the product is the other factor, sign flipped by
    the first's) is added in the machine's FP32 (IEEE, round to nearest even) when both
    terms are normal numbers and the sum's exponent is 2..253: there the model's sum (3
    guard bits, a sticky bit, round to nearest even) is the correctly rounded one
    (``tests/tensix/machine/test_sfp_add_fast.py`` compares every BF16 cell with addends of
    every exponent, and 32-bit terms; it assumes the FPU's default rounding, to nearest even,
    which Python never changes; flushing denormals would not matter: none is let in or out).
    Every other element goes :func:`_fma1`'s way. Returns how many went the short way."""
    n = at_load.shape[0]
    lanes = ra.shape[0]
    if not sel & ADD_FAST or lanes != 32 or n & 31:
        for i in range(n):
            lane = i % lanes
            cell = np.int64(flat[at_load[i]])  # Dst BF16: sign, man7, exp8
            v = ((cell & 0x8000) | ((cell & 0xFF) << 7) | ((cell >> 8) & 0x7F)) << 16
            a = v if sel & 1 else np.int64(ra[lane])
            b = (v if sel & 2 else np.int64(rb[lane])) ^ xb
            c = (v if sel & 4 else np.int64(rc[lane])) ^ xc
            d = _fma1(a, b, c)
            h = (d if d & 0x7F800000 else d & 0x80000000) >> 16  # (denormals flushed)
            flat[at_store[i]] = (h & 0x8000) | ((h & 0x7F) << 8) | ((h >> 7) & 0xFF)
            if i >= n - lanes:
                last_v[lane] = v
                last_d[lane] = d
        return 0
    words = np.empty(n, dtype=np.uint32)  # the loaded words
    pb = np.empty(n, dtype=np.uint32)  # the exact products (+0: none)
    zb = np.empty(n, dtype=np.uint32)  # the addends
    db = np.empty(n, dtype=np.uint32)  # their FP32 sums
    pf, zf, df = pb.view(np.float32), zb.view(np.float32), db.view(np.float32)
    for i in range(n):
        lane = i & 31
        cell = np.int64(flat[at_load[i]])
        v = ((cell & 0x8000) | ((cell & 0xFF) << 7) | ((cell >> 8) & 0x7F)) << 16
        words[i] = v
        a = v if sel & 1 else np.int64(ra[lane])
        b = (v if sel & 2 else np.int64(rb[lane])) ^ xb
        p = np.int64(0)
        if (a & 0x7FFFFFFF) == 0x3F800000:
            p = b ^ (a & _SIGN)
        elif (b & 0x7FFFFFFF) == 0x3F800000:
            p = a ^ (b & _SIGN)
        pe = (p >> 23) & 0xFF
        pb[i] = p if pe != 0 and pe != 255 else 0
        zb[i] = (v if sel & 4 else np.int64(rc[lane])) ^ xc
    for i in range(n):  # (vectorised)
        df[i] = pf[i] + zf[i]
    fast = 0
    for i in range(n):
        lane = i & 31
        pe = (np.int64(pb[i]) >> 23) & 0xFF
        ze = (np.int64(zb[i]) >> 23) & 0xFF
        d = np.int64(db[i])
        de = (d >> 23) & 0xFF
        if pe != 0 and ze != 0 and ze != 255 and de >= 2 and de <= 253:
            fast += 1
        else:
            v = np.int64(words[i])
            a = v if sel & 1 else np.int64(ra[lane])
            b = (v if sel & 2 else np.int64(rb[lane])) ^ xb
            d = _fma1(a, b, np.int64(zb[i]))
        h = (d if d & 0x7F800000 else d & 0x80000000) >> 16
        flat[at_store[i]] = (h & 0x8000) | ((h & 0x7F) << 8) | ((h >> 7) & 0xFF)
        if i >= n - lanes:
            last_v[lane] = words[i]
            last_d[lane] = d
    return fast


#: :func:`_load_mad_store_prog`'s header in ``prog``: n, sel, xb, xc, VA, VB, VC, the load's
#: VD, the MAD's VD, how many Dst rows the stores make valid
PROG_HEADER = 10


def _load_mad_store_prog(flat: np.ndarray, valid: np.ndarray, lreg: np.ndarray,
                         prog: np.ndarray, add: int) -> int:
    """:func:`_load_mad_store` with its indices and scalars in one ``int64`` array (a numba
    call costs per argument; :meth:`.block.SfpBlocks._plan` makes it), the LRegs ``lreg``
    (``(17, 32)``) read and written as a pass leaves them (the load's VD the last loaded
    words, then the MAD's VD its last results) and the Dst rows stored marked ``valid``:
    ``prog`` holds :data:`PROG_HEADER` scalars, then the n load cells, the n store cells
    and the rows. ``add``: 0 or :data:`ADD_FAST`. Returns the count of the short way."""
    n = prog[0]
    o = PROG_HEADER
    lanes = lreg.shape[1]
    last_v = np.empty(lanes, dtype=np.uint32)
    last_d = np.empty(lanes, dtype=np.uint32)
    fast = _load_mad_store(flat, prog[o:o + n], prog[o + n:o + 2 * n], lreg[prog[4]],
                           lreg[prog[5]], lreg[prog[6]], prog[1] | add, prog[2], prog[3],
                           last_v, last_d)
    vd, md = prog[7], prog[8]
    for lane in range(lanes):
        lreg[vd, lane] = last_v[lane]
    for lane in range(lanes):
        lreg[md, lane] = last_d[lane]
    o += 2 * n
    for k in range(prog[9]):
        valid[prog[o + k]] = True
    return fast


def _load_bf16(flat: np.ndarray, at: np.ndarray, out: np.ndarray) -> None:
    """SFPLOAD in mode BF16 of the cells ``flat[at]`` into ``out`` (as the loop above)."""
    for i in range(at.shape[0]):
        cell = np.int64(flat[at[i]])
        out[i] = ((cell & 0x8000) | ((cell & 0xFF) << 7) | ((cell >> 8) & 0x7F)) << 16


def _store_bf16(flat: np.ndarray, at: np.ndarray, v: np.ndarray) -> None:
    """SFPSTORE in mode BF16 of the words ``v`` to the cells ``flat[at]`` (as above)."""
    for i in range(at.shape[0]):
        d = np.int64(v[i])
        h = (d if d & 0x7F800000 else d & 0x80000000) >> 16
        flat[at[i]] = (h & 0x8000) | ((h & 0x7F) << 8) | ((h >> 7) & 0xFF)


_LOADED: dict[str, Callable[..., None] | None] = {}
_NAMES = ("lanes", "load_mad_store", "load_mad_store_prog", "load_bf16", "store_bf16")


def load() -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], None] | None:
    """The compiled :func:`_fma_lanes` (compiled, or loaded from numba's cache, on the first
    call), or None when numba cannot be imported."""
    try:
        return _LOADED["lanes"]
    except KeyError:
        pass
    try:
        import numba
    except ImportError:
        _LOADED.update(dict.fromkeys(_NAMES))
        return None
    g = globals()
    g["_fma1"] = numba.njit(cache=True)(_fma1)
    for name in _NAMES[1:]:
        g["_" + name] = _LOADED[name] = numba.njit(cache=True)(g["_" + name])
    g["_fma_lanes"] = numba.njit(cache=True)(_fma_lanes)
    _LOADED["lanes"] = g["_fma_lanes"]
    return _LOADED["lanes"]


__all__ = ["ADD_FAST", "PROG_HEADER", "load"]
