"""The packer's compiled path: one numba kernel that reads, converts and writes a PACR run.

:mod:`.l1formats` is the packer's arithmetic, documented and vectorised with numpy (the
reference the oracle is checked against); a run of PACRs spent most of its time in numpy's
per-call overhead (twenty array operations on a few hundred datums). :func:`_k_pack` does the
same per datum in compiled code: gather from ``Dst.bits`` (0 for an invalid row), the early
conversion, ReLU, the late conversion, the edge mask, then the write to L1 (BFP: the shared
exponent per 16 datums, the magnitudes, and only the exponents a later datum group does not
overwrite). Every step is exact integer arithmetic, so the two paths are the same function
(``tests/tensix/machine/test_pack.py`` checks it on random raw values of every mode and
through the coprocessor).

Loading: the functions are plain Python until :func:`load` swaps in ``numba.njit(cache=True)``
versions (callees first); nothing imports numba at import time. Pack_L1_Acc stays on numpy.
"""

from __future__ import annotations

import numpy as np


def _k_decode_bf16(x: int) -> int:
    return (x & 0x8000) | ((x & 0xFF) << 7) | ((x >> 8) & 0x7F)


def _k_decode_fp16(x: int) -> int:
    return (x & 0x8000) | ((x & 0x1F) << 10) | ((x >> 5) & 0x3FF)


def _k_nan_to_inf(v: int) -> int:
    if (v & 0x7FFFFFFF) > 0x7F800000:
        return (v & 0x80000000) | 0x7F800000
    return v


def _k_read(v: int, read32: bool, inter: int, round10: bool, unsigned: bool) -> int:
    """:func:`.l1formats.pack_read` of one datum (``v``: Dst32b word or Dst16b cell)."""
    if read32:
        if inter == 9:
            return (v >> 16) & 0xFFFF
        v = (_k_decode_bf16((v >> 16) & 0xFFFF) << 16) | (v & 0xFFFF)
        if inter == 5 or inter == 6:
            v = _k_nan_to_inf(v)
            if inter == 5:
                v = (v + 0x8000) >> 16
            else:
                v = (((v >> 16) + 1) & ~1) & 0x1FFFF
            return 0 if (v & 0x7FFF) < 0x80 else v
        if inter == 14:
            if unsigned:
                return 0 if v & 0x80000000 else min(v, 255)
            return ((v & 0x80000000) >> 24) | min(v & 0x7FFFFFFF, 127)
        if inter == 1:
            v = (_k_nan_to_inf(v) + 0x1000) >> 13
            return 0 if (v & 0x3FFFF) < 0x400 else v
        return v
    if inter == 1 and round10:
        b = _k_decode_bf16(v)
        e = ((b >> 7) & 0xFF) - 112
        s = b & 0x8000
        if e < 0:
            return s
        if e > 31:
            return s | 0x7FFF
        return s | (e << 10) | ((b & 0x7F) << 3)
    if inter == 1 or inter == 2:
        h = _k_decode_fp16(v)
        if inter == 2:
            if (h & 0x7FFF) > 0x7FF7:
                h = (h & 0x8000) | 0x7FF0
            h = (h + 8) & ~15
        return 0 if (h & 0x7FFF) < 0x400 else h
    if inter == 5 or inter == 6:
        b = _k_decode_bf16(v)
        if (b & 0x7FFF) > 0x7F80:
            b = (b & 0x8000) | 0x7F80
        elif (b & 0x7FFF) < 0x80:
            b = 0
        return (b + 1) & ~1 if inter == 6 else b
    return v & 0xFFFF


def _k_relu(v: int, mode: int, threshold: int, inter: int, read32: bool) -> int:
    """:func:`.l1formats.pack_relu` of one datum."""
    if mode == 0:
        return v
    if inter == 1 and read32:
        if v & 0x40000:
            v = 0
        thr = threshold << 3
    elif inter == 8:
        return 0 if v & 0x80000000 else v
    elif inter == 0:
        if v & 0x80000000:
            v = 0
        thr = threshold << 16
        if mode == 2 and v <= thr:
            return 0
        if mode == 3 and (v >> 13) > (thr >> 13):
            return thr
        return v
    else:
        if v & 0x8000:
            v = 0
        thr = threshold
    if mode == 2 and v <= thr:
        return 0
    if mode == 3 and v > thr:
        return thr
    return v


def _k_late(v: int, read32: bool, inter: int, out: int, e4m3: bool) -> int:
    """:func:`.l1formats.pack_late` of one datum."""
    if inter == 1 and read32:
        s = v >> 18
        e = ((v >> 10) & 0xFF) - 112
        if e < 0:
            v = s << 15
        elif e > 31:
            v = (s << 15) | 0x7FFF
        else:
            v = (s << 15) | (e << 10) | (v & 0x3FF)
    if inter == 1 and out == 0:
        s = (v & 0x8000) << 16
        if v & 0x7C00:
            return s | (((v & 0x7FFF) + (112 << 10)) << 13)
        return s | ((v & 0x3FF) << 13)
    if (inter == 1 and out == 5) or (inter == 2 and out == 6):
        e = (v >> 10) & 0x1F
        return 0 if e == 0 else (v & 0x8000) | ((e + 112) << 7) | ((v & 0x3FF) >> 3)
    if inter == 1 and out == 10:
        s = (v >> 15) & 1
        e = (v >> 10) & 0x1F
        if e <= 8:
            return s << 7
        if e >= 24:
            return (s << 7) | 0x7F
        return (s << 7) | ((e - 8) << 3) | ((v & 0x3FF) >> 7)
    if inter == 0 and out == 1:
        s = v >> 31
        e = ((v >> 23) & 0xFF) - 112
        if e < 0:
            return s << 15
        if e > 31:
            return (s << 15) | 0x7FFF
        return (s << 15) | (e << 10) | ((v >> 13) & 0x3FF)
    if inter == 0 and (out == 6 or out == 7 or out == 15):
        v = v >> 16
        return 0 if (v & 0x7FFF) < 0x80 else v
    if (inter == 5 or inter == 6) and out == 0:
        return v << 16
    return v


def _k_pack(bits: np.ndarray, valid: np.ndarray, phys: np.ndarray, take: np.ndarray,
            keep: np.ndarray, read32: bool, inter: int, out: int, round10: bool,
            unsigned: bool, relu: int, threshold: int, e4m3: bool, size: int, bfp: bool,
            l1: np.ndarray, data: int, exp: int, exp_write: np.ndarray,
            values: np.ndarray) -> None:
    """A PACR run: the ``take`` datums of Dst rows ``phys`` (16 per row; ``keep`` False: 0),
    converted, written to ``l1`` at byte ``data`` (and BFP exponents at ``exp`` where
    ``exp_write``); ``values`` is scratch space of ``len(take)``."""
    n = len(take)
    for j in range(n):
        idx = take[j]
        p = phys[idx >> 4]
        c = idx & 15
        if not keep[j]:
            values[j] = 0
            continue
        v = np.int64(0)
        if valid[p]:
            v = np.int64(bits[p, c])
            if read32:
                v = (v << 16) | np.int64(bits[p + 8, c])
        v = _k_read(v, read32, inter, round10, unsigned)
        v = _k_relu(v, relu, threshold, inter, read32)
        values[j] = _k_late(v, read32, inter, out, e4m3)
    if not bfp:
        nbytes = size // 8
        for j in range(n):
            v = values[j]
            a = data + j * nbytes
            for k in range(nbytes):
                l1[a + k] = (v >> (8 * k)) & 0xFF
        return
    groups = n // 16
    shift_out = 8 - size
    per = 8 // size
    for g in range(groups):
        shared = 0
        for j in range(16):
            e = (values[16 * g + j] >> 7) & 0xFF
            if e > shared:
                shared = e
        byte = 0
        for j in range(16):
            v = values[16 * g + j]
            e = (v >> 7) & 0xFF
            m = (v & 0x7F) | (0x80 if e != 0 else 0)
            d = shared - e
            if d >= 8:
                m = 0
            else:
                m = (m + (1 << d)) >> (d + 1)
                if m == 128:
                    m = 127
            m >>= shift_out
            if m != 0:
                m |= ((v >> 15) & 1) << (size - 1)
            byte |= m << (size * (j % per))
            if j % per == per - 1:
                l1[data + (16 * g + j) // per] = byte
                byte = 0
        if exp_write[g]:
            l1[exp + g] = shared


#: :func:`_k_pack_prog`'s header: its scalars, then the packer ADCs to set, in ``prog``
PROG_HEADER = 32


def _k_pack_prog(bits: np.ndarray, valid: np.ndarray, l1: np.ndarray, adc: np.ndarray,
                 prog: np.ndarray) -> None:
    """:func:`_k_pack` with its indices and scalars in one ``int64`` array (a numba call
    costs per argument), then setting the packer ADCs (``adc``: ``ADCs.v``): ``prog`` holds
    the scalars (datums, rows, BFP groups, read32, inter, out, round10, unsigned, relu,
    threshold, e4m3, size, bfp, data, exp, thread), the thread's 16 packer ADCs after it
    (``[channel, dim, (value, cr)]``), then phys, take, keep, exp_write and the scratch
    values (see :func:`.pack.prepare`)."""
    n = prog[0]
    nrows = prog[1]
    groups = prog[2]
    o = PROG_HEADER
    phys = prog[o:o + nrows]
    o += nrows
    take = prog[o:o + n]
    o += n
    keep = prog[o:o + n]
    o += n
    exp_write = prog[o:o + groups]
    o += groups
    values = prog[o:o + n]
    _k_pack(bits, valid, phys, take, keep, prog[3] != 0, prog[4], prog[5], prog[6] != 0,
            prog[7] != 0, prog[8], prog[9], prog[10] != 0, prog[11], prog[12] != 0, l1,
            prog[13], prog[14], exp_write, values)
    t = prog[15]
    for c in range(2):
        for d in range(4):
            for k in range(2):
                adc[t, 2, c, d, k] = prog[16 + 8 * c + 2 * d + k]


_COMPILED = ("_k_decode_bf16", "_k_decode_fp16", "_k_nan_to_inf", "_k_read", "_k_relu",
             "_k_late", "_k_pack", "_k_pack_prog")
_LOADED: dict[str, object] = {}


def load() -> object | None:
    """The compiled :func:`_k_pack` (compiling it, or loading it from numba's cache, the
    first time); None when numba is not importable."""
    try:
        return _LOADED["pack"]
    except KeyError:
        pass
    try:
        import numba
    except ImportError:
        _LOADED["pack"] = _LOADED["pack_prog"] = None
        return None
    g = globals()
    for name in _COMPILED:
        g[name] = numba.njit(cache=True)(g[name])
    _LOADED["pack_prog"] = g["_k_pack_prog"]
    _LOADED["pack"] = g["_k_pack"]
    return g["_k_pack"]


__all__ = ["PROG_HEADER", "load"]
