"""The Matrix Unit's compiled instruction path: numba kernels and their lazy loading.

Where things are: :mod:`.fpu` is the arithmetic, documented and vectorised with numpy (the
reference every oracle case is checked against), and the per-instruction entry points
(:func:`.fpu.mvmul`, :func:`.fpu.elwadd`, ...) that choose between the two paths. This module
holds only the compiled twins of those instructions, and :func:`load`, which imports numba
and compiles them (or loads them from numba's cache) the first time they are wanted:

==========================  =================================================================
kernel                      instruction(s) (numpy reference in :mod:`.fpu`)
==========================  =================================================================
:func:`_k_mvmul`            MVMUL, GAPOOL (:func:`.fpu.mvmul_kernel`, :func:`.fpu.accumulate`)
:func:`_k_mvmul_batch`      :func:`.fpu.mvmul_batch` (many blocks of :func:`.fpu.mvmul_kernel`)
:func:`_k_elw`              ELWADD, ELWSUB, ELWMUL (:func:`.fpu.elwadd_kernel`, ...)
:func:`_k_gmpool`           GMPOOL (:func:`.fpu.gmpool`)
:func:`_k_movd2x`           MOVD2A, MOVD2B (:func:`.fpu.dst_to_src_cells`)
:func:`_k_src2dst`          MOVA2D, MOVB2D (:func:`.fpu.src_to_dst_values`)
:func:`_k_copy_rows`        MOVB2A
==========================  =================================================================

Why: the numpy instructions spent almost all their time in numpy's per-call overhead (an
MVMUL is 2,048 products, far too few for array operations to pay off). Each kernel works
straight on ``Dst.bits``/``Dst.valid`` and the Src cells: decode the operands, form the
products, group, align, accumulate, round and store. The arithmetic is that of the numpy
kernels, per element: the 8-product groups in exact float64 (as in
:func:`.fpu.mvmul_kernel`), the rest in int64; every step is exact, so the two paths are the
same function (``tests/tensix/test_fpu_fast.py`` checks it on random and edge operands, and
the oracle tests run through the compiled path). Integer "8" MVMUL/ELW* have no kernel and
stay on numpy.

Loading: the functions below are plain Python until :func:`load` swaps them, callees first,
for ``numba.njit(cache=True)`` versions (later processes load the machine code from
``__pycache__``). Nothing here imports numba at import time; when to load (after
:data:`.fpu.JIT_AFTER` instructions, never with :data:`.fpu.USE_JIT` off) is :mod:`.fpu`'s
decision.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


def _k_accumulate(s0: int, e0: int, m0: int, s1: int, e1: int, m1: int, dst: int,
                  fp32_acc: bool, exp8: bool) -> int:
    """One datum of :func:`.fpu.accumulate`: two sign/exponent/magnitude terms (a neutral second
    term is ``(0, e0, 0)``) plus a Dst value in the FP32 frame -> FP32-frame result."""
    sd = (dst >> 31) & 1
    ed = (dst >> 23) & 0xFF
    md = ((dst & 0x7FFFFF) | 0x800000) if ed != 0 else 0
    e = max(max(e0, e1), ed)
    d = min(e - e0, 62)
    m0 = ((m0 << 1) + (1 << d) - ((s0 << 1) if d > 0 else 0)) >> (d + 1)
    d = min(e - e1, 62)
    m1 = ((m1 << 1) + (1 << d) - ((s1 << 1) if d > 0 else 0)) >> (d + 1)
    d = min(e - ed, 62)
    md = ((md << 1) + (1 << d)) >> (d + 1)
    if not fp32_acc:  # a 16-bit Dst: each term first rounded to 10 bits below bit 23
        m0 = (m0 + 4096 - s0) & ~0x1FFF
        m1 = (m1 + 4096 - s1) & ~0x1FFF
        md = (md + 4096) & ~0x1FFF
    total = (m0 - 2 * s0 * m0) + (m1 - 2 * s1 * m1) + (md - 2 * sd * md)
    if e <= 0 or total == 0:  # early underflow, or an exact zero: +0
        return 0
    sign = 1 if total < 0 else 0
    mag = -total if total < 0 else total
    blen = 1  # bit length of mag (0 < mag < 2**32), by halving
    t = mag
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
    keep = 24 if fp32_acc else (8 if exp8 else 11)
    rs = blen - keep if blen > keep else 0
    ls = (keep - blen if keep > blen else 0) + 24 - keep
    man = ((mag + ((1 << rs) >> 1)) >> rs) << ls
    e = e + blen - 24 + (man >> 24)
    if e <= 0:
        return 0
    man &= 0x7FFFFF
    if fp32_acc or exp8:
        if e >= 255:
            return (sign << 31) | (255 << 23)
        return (sign << 31) | (e << 23) | man
    if e >= 32:
        return (sign << 31) | (31 << 23) | (0x3FF << 13)
    return (sign << 31) | (e << 23) | man


def _k_read_frame(bits: np.ndarray, valid: np.ndarray, p: int, col: int, mode: int) -> int:
    """Dst storage at physical row ``p`` -> FP32 frame (0 for an invalid row). ``mode``:
    0 Dst32b FP32, 1 Dst16b BF16, 2 Dst16b FP16."""
    if not valid[p]:
        return 0
    hi = np.int64(bits[p, col])
    if mode == 0:  # Dst32b: hi = sign, man[22:16], exp; lo = man[15:0]
        lo = np.int64(bits[p + 8, col])
        return ((hi & 0x8000) << 16) | ((hi & 0xFF) << 23) | ((hi & 0x7F00) << 8) | lo
    if mode == 1:  # BF16 storage: sign, man7, exp8
        return ((hi & 0x8000) << 16) | ((hi & 0xFF) << 23) | ((hi & 0x7F00) << 8)
    return ((hi & 0x8000) << 16) | ((hi & 0x1F) << 23) | ((hi & 0x7FE0) << 8)


def _k_write_frame(bits: np.ndarray, p: int, col: int, f: int, mode: int) -> None:
    """FP32-frame value -> Dst storage at physical row ``p`` (see :func:`_k_read_frame`)."""
    if mode == 0:
        bits[p, col] = ((f >> 16) & 0x8000) | ((f >> 8) & 0x7F00) | ((f >> 23) & 0xFF)
        bits[p + 8, col] = f & 0xFFFF
    elif mode == 1:
        bits[p, col] = ((f >> 16) & 0x8000) | ((f >> 8) & 0x7F00) | ((f >> 23) & 0xFF)
    else:
        bits[p, col] = ((f >> 16) & 0x8000) | ((f >> 8) & 0x7FE0) | ((f >> 23) & 0x1F)


_K_ZERO = -(1 << 20)  # exponent marking a zero operand in the compiled kernels
_P2 = 1000  # _POW2[_P2 + k] = 2.0 ** k
#: Powers of two for the compiled kernels (exact scale factors, no per-element shifts).
_POW2 = np.ldexp(1.0, np.arange(-_P2, _P2 + 1))


def _k_operand(v: int, low_bits: bool, for_a: bool, pow2: np.ndarray) -> tuple[float, int]:
    """A masked logical Src value -> (signed mantissa slice of the fidelity phase x
    2**exponent, exactly, as a float; exponent, :data:`_K_ZERO` for a zero operand)."""
    e = (v >> 10) & 0xFF
    if e == 0:
        return 0.0, _K_ZERO
    big = (v & 0x3FF) | 0x400
    if for_a:
        m = ((big >> 1) & 31) if low_bits else (big >> 6)
    else:
        m = ((big & 15) << 3) if low_bits else (big >> 4)
    f = m * pow2[_P2 + e]
    return (-f if (v >> 18) & 1 else f), e


def _k_decode(cells: np.ndarray, bank: int, row0: int, step: int, n: int, mask: int,
              low_bits: bool, for_a: bool, f: np.ndarray, exp: np.ndarray,
              pow2: np.ndarray) -> None:
    """Rows ``row0 + k * step`` (k < n, wrapping at 64) of a Src bank -> :func:`_k_operand`
    of each cell, into ``f[k, c]`` and ``exp[k, c]``."""
    for k in range(n):
        row = (row0 + k * step) & 0x3F
        for c in range(16):
            cell = np.int64(cells[bank, row, c])
            v = ((cell & 0x40000) | ((cell & 0xFF) << 10) | ((cell >> 8) & 0x3FF)) & mask
            f[k, c], exp[k, c] = _k_operand(v, low_bits, for_a, pow2)


def _k_mvmul_core(fa: np.ndarray, ea: np.ndarray, fb: np.ndarray, eb: np.ndarray, n: int,
                  prior: np.ndarray, out: np.ndarray, adj: int, fp32_acc: bool, exp8: bool,
                  top: np.ndarray, scale: np.ndarray, tot: np.ndarray, pow2: np.ndarray
                  ) -> None:
    """``out[k, c]`` (k < n) = ``prior[k, c]`` + the two 8-product groups of row k of B and
    column c of A (operands from :func:`_k_operand`), in the FP32 frame.

    As in :func:`.fpu.mvmul_kernel`: a group's exponent is the largest of its 8 product exponents
    (a zero product votes with ``max(adj, 0)``); each product, an exact float
    ``+-m * 2**(eA + eB)``, is scaled by ``2**-top`` (exact) and rounded half away from zero
    (``trunc(x + copysign(0.5, x))``, exact for these magnitudes). The loops over the 16
    columns are the vectorised ones."""
    zx = max(adj, 0) - adj  # a zero product's exponent, in eA + eB units
    for k in range(n):
        for g in range(2):
            for c in range(16):
                top[g, c] = _K_ZERO
                tot[g, c] = 0.0
            for j in range(8):
                i = 8 * g + j
                ebi = eb[k, i]
                for c in range(16):
                    top[g, c] = max(top[g, c], ea[i, c] + ebi)
            for c in range(16):
                # Zero products are left out above: their vote (zx) only matters when the
                # whole group is zero. (With adj <= 0 a non-zero top below zx makes the group
                # +0 either way; with adj > 0 every non-zero product exceeds zx = 0.)
                if top[g, c] < _K_ZERO // 2:
                    top[g, c] = zx
                scale[g, c] = pow2[_P2 - top[g, c]]
            for j in range(8):
                i = 8 * g + j
                fbi = fb[k, i]
                for c in range(16):
                    x = fa[i, c] * fbi * scale[g, c]
                    tot[g, c] += np.trunc(x + math.copysign(0.5, x))
        for c in range(16):
            e0, e1 = top[0, c] + adj, top[1, c] + adj
            t0, t1 = np.int64(tot[0, c]), np.int64(tot[1, c])
            if e0 <= 0:  # a group whose exponent is not positive is +0
                e0, t0 = 0, 0
            if e1 <= 0:
                e1, t1 = 0, 0
            out[k, c] = _k_accumulate(1 if t0 < 0 else 0, e0, abs(t0) << 13,
                                      1 if t1 < 0 else 0, e1, abs(t1) << 13, prior[k, c],
                                      fp32_acc, exp8)


def _k_mvmul(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, mode: int,
             dst_base: int, dst_step: int, n: int, a_cells: np.ndarray, a_bank: int,
             a_row0: int, b_cells: np.ndarray, b_bank: int, b_row0: int, b_step: int,
             a_mask: int, b_mask: int, phase: int, adj: int, fp32_acc: bool, exp8: bool,
             scratch: np.ndarray, fscratch: np.ndarray, pow2: np.ndarray) -> None:
    """MVMUL / GAPOOL: Dst view rows ``dst_base + k * dst_step`` (k < n) += SrcB rows
    ``b_row0 + k * b_step`` @ SrcA rows ``a_row0 .. + 15``, one fidelity phase."""
    ea, eb, top = scratch[0], scratch[1, :n], scratch[2, :2]  # views: no allocation
    prior, out = scratch[3, :n], scratch[4, :n]
    fa, fb, scale, tot = fscratch[0], fscratch[1, :n], fscratch[2, :2], fscratch[2, 2:4]
    _k_decode(a_cells, a_bank, a_row0, 1, 16, a_mask, (phase & 1) != 0, True, fa, ea, pow2)
    _k_decode(b_cells, b_bank, b_row0, b_step, n, b_mask, (phase & 2) != 0, False, fb, eb,
              pow2)
    for k in range(n):
        p = table[(dst_base + k * dst_step) & 0x3FF]
        for c in range(16):
            prior[k, c] = _k_read_frame(bits, valid, p, c, mode)
    _k_mvmul_core(fa, ea, fb, eb, n, prior, out, adj, fp32_acc, exp8, top, scale, tot, pow2)
    for k in range(n):
        p = table[(dst_base + k * dst_step) & 0x3FF]
        for c in range(16):
            _k_write_frame(bits, p, c, out[k, c], mode)
        valid[p] = True


def _k_mvmul_batch(a: np.ndarray, b: np.ndarray, dst: np.ndarray, out: np.ndarray,
                   phase: int, adj: int, fp32_acc: bool, exp8: bool, scratch: np.ndarray,
                   fscratch: np.ndarray, pow2: np.ndarray) -> None:
    """:func:`.fpu.mvmul_kernel` on ``(N, 16, 16)`` / ``(N, R, 16)`` int64 arrays into ``out``."""
    n = b.shape[1]
    ea, eb, top = scratch[0], scratch[1, :n], scratch[2, :2]
    fa, fb, scale, tot = fscratch[0], fscratch[1, :n], fscratch[2, :2], fscratch[2, 2:4]
    for t in range(a.shape[0]):
        for i in range(16):
            for c in range(16):
                fa[i, c], ea[i, c] = _k_operand(a[t, i, c], (phase & 1) != 0, True, pow2)
        for k in range(n):
            for i in range(16):
                fb[k, i], eb[k, i] = _k_operand(b[t, k, i], (phase & 2) != 0, False, pow2)
        _k_mvmul_core(fa, ea, fb, eb, n, dst[t], out[t], adj, fp32_acc, exp8, top, scale,
                      tot, pow2)


def _k_logical(cells: np.ndarray, bank: int, row: int, col: int, mask: int) -> int:
    """One Src cell -> its masked logical value, 0 when the exponent field is 0."""
    cell = np.int64(cells[bank, row & 0x3F, col])
    v = ((cell & 0x40000) | ((cell & 0xFF) << 10) | ((cell >> 8) & 0x3FF)) & mask
    return v if (v >> 10) & 0xFF else 0


def _k_elw(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, mode: int, dst_base: int,
           a_cells: np.ndarray, a_bank: int, a_row0: int, b_cells: np.ndarray, b_bank: int,
           b_row0: int, b_step: int, b_col0: bool, a_mask: int, b_mask: int, op: int,
           acc: bool, phase: int, adj: int, fp32_acc: bool, exp8: bool, scratch: np.ndarray
           ) -> None:
    """ELWADD (op 0), ELWSUB (1), ELWMUL (2) on 8 rows: Dst view rows ``dst_base + k`` from
    SrcA rows ``a_row0 + k`` and SrcB rows ``b_row0 + k * b_step`` (column 0 only with
    ``b_col0``); ``acc``: add the prior Dst (always for ELWMUL)."""
    out = scratch[6, :8]
    zexp = max(adj, 0)
    shift = 5 * (phase & 1) + 7 * ((phase >> 1) & 1)
    for k in range(8):
        p = table[(dst_base + k) & 0x3FF]
        for c in range(16):
            a = _k_logical(a_cells, a_bank, a_row0 + k, c, a_mask)
            b = _k_logical(b_cells, b_bank, b_row0 + k * b_step, 0 if b_col0 else c, b_mask)
            prior = _k_read_frame(bits, valid, p, c, mode) if acc or op == 2 else 0
            if op == 2:  # one product of the phase's mantissa slices
                ea = (a >> 10) & 0xFF
                eb = (b >> 10) & 0xFF
                e = ea + eb + adj
                if ea == 0 or eb == 0 or e <= 0:
                    out[k, c] = _k_accumulate(0, zexp, 0, 0, zexp, 0, prior, fp32_acc, exp8)
                    continue
                big_a = (a & 0x3FF) | 0x400
                big_b = (b & 0x3FF) | 0x400
                ma = ((big_a >> 1) & 31) if phase & 1 else (big_a >> 6)
                mb = ((big_b & 15) << 3) if phase & 2 else (big_b >> 4)
                s = ((a ^ b) >> 18) & 1
                out[k, c] = _k_accumulate(s, e, (ma * mb) << 13, 0, e, 0, prior, fp32_acc,
                                          exp8)
                continue
            if op == 1 and b != 0:
                b ^= 1 << 18
            if (a & 0x3FFFF) < (b & 0x3FFFF):  # |a| >= |b| by exponent:mantissa
                a, b = b, a
            sa = a >> 18
            ea = (a >> 10) & 0xFF
            eb = (b >> 10) & 0xFF
            ma = ((a & 0x3FF) | 0x400) if a != 0 else 0
            mb = ((b & 0x3FF) | 0x400) if b != 0 else 0
            d = ea - eb
            if d >= 12:
                mb = 0
            elif d > 0:
                mb = (mb + (1 << (d - 1))) >> d
            m = (ma + mb if sa == (b >> 18) else ma - mb) << 13
            e = ea
            if fp32_acc and not exp8:
                e = e + 112 if e != 0 else 97
            e -= shift
            out[k, c] = _k_accumulate(sa, e, m, 0, e, 0, prior, fp32_acc, exp8)
    for k in range(8):
        p = table[(dst_base + k) & 0x3FF]
        for c in range(16):
            _k_write_frame(bits, p, c, out[k, c], mode)
        valid[p] = True


def _k_gm_key(sign: int, exp: int, mag: int) -> int:
    v = (exp << 10) + mag
    return -v if sign == 1 else v


def _k_gmpool(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, is32: bool,
              dst_row: int, a_cells: np.ndarray, a_bank: int, a_row0: int,
              b_cells: np.ndarray, b_bank: int, b_row: int, style: int, dst_style: int
              ) -> None:
    """GMPOOL (see :func:`.fpu.gmpool`): ``style`` 0 BF16, 1 FP16, 2 TF32, 3 Int8; ``dst_style``
    0 BF16, 1 FP16, 2 TF32, 3 Int32 (the functions ``_gm_*`` written per element)."""
    row = dst_row & 0x3FC
    p = table[row]
    for c in range(16):
        if not valid[p]:
            dv = np.int64(0xFFFFFFFF) if is32 else np.int64(0xFFFF0000)
        elif is32:
            dv = (np.int64(bits[p, c]) << 16) | np.int64(bits[p + 8, c])
        else:
            dv = np.int64(bits[p, c]) << 16
        bs = (dv >> 31) & 1
        if dst_style == 3:
            bm = dv & 0x3FF
            be = ((dv >> 10) & 0x3F) + (((dv >> 24) & 7) << 6)
        elif dst_style == 1:
            be = ((dv >> 16) & 0x1F) + 15
            bm = (dv >> 21) & 0x3FF
        else:
            be = ((dv >> 16) & 0xFF) + 127
            bm = ((dv >> 24) & 0x7F) << 3
            if dst_style == 2:
                bm += (dv >> 13) & 7
        be &= 0x1FF
        best = _k_gm_key(bs, be, bm)
        for ii in range(16):  # rows 4..7, 0..3, 8..15
            i = ii ^ 4 if ii < 8 else ii
            a = np.int64(a_cells[a_bank, (a_row0 + i) & 0x3F, c])
            bexp = np.int64(b_cells[b_bank, b_row, i]) & 0xFF
            aexp = a & 0xFF
            if bexp == 0:  # reads as minus infinity
                sign, exp, mag = 1, 0x1FF, 0x3FF
            elif aexp == 0:  # flushed to zero
                sign, exp, mag = 0, 0, 0
            else:
                sign = a >> 18
                mag = (a >> 8) & 0x3FF
                if style == 3:
                    exp = 0
                elif style == 1:
                    exp = (aexp & 0x1F) + (bexp & 0x1F)
                else:
                    exp = aexp + bexp
                    if style == 0:
                        mag &= 0x3F8
                exp &= 0x1FF
            k = _k_gm_key(sign, exp, mag)
            if k >= best:
                best, bs, be, bm = k, sign, exp, mag
        if dst_style == 3:
            out = (bs << 31) | ((be & 7) << 10) | bm
        elif dst_style == 1:
            out = 0 if (be & 0x3F) == 0 else (bs << 31) | (bm << 21) | (((be - 15) & 0x1F) << 16)
        else:
            out = (bs << 31) | ((bm & 0x3F8) << 21) | (((be - 127) & 0xFF) << 16)
            if dst_style == 2:
                out += (bm & 7) << 13
            if be == 0:
                out = 0
        bits[p, c] = (out >> 16) & 0xFFFF
        if is32:
            bits[p + 8, c] = out & 0xFFFF
        for r in range(1, 4):
            q = table[(row + r) & 0x3FF]
            bits[q, c] = 0
            if is32:
                bits[q + 8, c] = 0
    for r in range(4):
        valid[table[(row + r) & 0x3FF]] = True


def _k_movd2x(bits: np.ndarray, table: np.ndarray, is32: bool, drow0: int, n: int,
              cells: np.ndarray, bank: int, srow0: int, style: int, lo: bool) -> None:
    """MOVD2A/MOVD2B (see :func:`.fpu.dst_to_src_cells`): Dst view rows ``drow0 + k`` -> Src rows
    ``srow0 + k`` (k < n); ``style`` 0 BF16, 1 FP16/Int8, 2 TF32."""
    for k in range(n):
        p = table[(drow0 + k) & 0x3FF]
        row = (srow0 + k) & 0x3F
        for c in range(16):
            v = np.int64(bits[p, c])
            if is32:
                v = (v << 16) | np.int64(bits[p + 8, c])
                if lo:
                    v = ((v << 16) | (v & 0xFFFF)) & 0xFFFFFFFF
                if style == 2:
                    x = v >> 13
                    cell = (x & 0x7F800) | ((x & 7) << 8) | ((x & 0x7F8) >> 3)
                    if lo:
                        cell = v & 0x1FFF
                    cells[bank, row, c] = cell
                    continue
                v >>= 16
            if style == 0:
                cells[bank, row, c] = ((v & 0xFF00) << 3) | (v & 0xFF)
            else:
                cells[bank, row, c] = ((v & 0xFFE0) << 3) | (v & 0x1F)


def _k_src2dst(bits: np.ndarray, valid: np.ndarray, table16: np.ndarray,
               table32: np.ndarray, drow0: int, n: int, cells: np.ndarray, bank: int,
               srow0: int, sstep: int, col0: bool, flush: bool, bf16: bool, tf32: bool,
               lo: bool) -> None:
    """MOVA2D/MOVB2D (see :func:`.fpu._write_moved`): Src rows ``srow0 + k * sstep`` (column 0
    only with ``col0``) -> Dst view rows ``drow0 + k`` (k < n)."""
    for k in range(n):
        drow = (drow0 + k) & 0x3FF
        row = (srow0 + k * sstep) & 0x3F
        p = table32[drow] if tf32 or lo else table16[drow]
        for c in range(16):
            cell = np.int64(cells[bank, row, 0 if col0 else c])
            if flush and (cell & 0xFF) == 0:
                cell = 0
            if bf16:
                val16 = ((cell >> 3) & 0xFF00) | (cell & 0xFF)
            else:
                val16 = ((cell >> 3) & 0xFFE0) | (cell & 0x1F)
            if tf32:
                low = ((cell >> 8) & 7) << 13
                bits[p, c] = val16
                bits[p + 8, c] = (low | val16) if lo else low
            elif lo:
                bits[p + 8, c] = val16
            else:
                bits[p, c] = val16
        valid[p] = True


def _k_copy_rows(dst: np.ndarray, dbank: int, drow0: int, src: np.ndarray, sbank: int,
                 srow0: int, n: int) -> None:
    """MOVB2A: ``n`` Src rows from one register file to another (19-bit cells)."""
    for k in range(n):
        for c in range(16):
            dst[dbank, (drow0 + k) & 0x3F, c] = src[sbank, (srow0 + k) & 0x3F, c] & 0x7FFFF


# --------------------------------------------------------------------------------------------
# Arguments the callers pass, and loading
# --------------------------------------------------------------------------------------------

#: Style codes of :func:`_k_movd2x` and :func:`_k_gmpool`, and the ELW* operation codes.
MOV_STYLES = {"bf16": 0, "fp16": 1, "tf32": 2}
GM_STYLES = {"bf16": 0, "fp16": 1, "tf32": 2, "int8": 3, "int32": 3}
ELW_OPS = {"add": 0, "sub": 1, "mul": 2}

#: Work space of the compiled kernels (they run one at a time: the GIL is held).
SCRATCH = np.zeros((9, 16, 16), dtype=np.int64)
FSCRATCH = np.zeros((3, 16, 16), dtype=np.float64)
#: Powers of two the kernels scale by (``POW2[_P2 + k] = 2.0 ** k``).
POW2 = _POW2

#: Every function compiled, callees before callers.
_COMPILED = ("_k_accumulate", "_k_read_frame", "_k_write_frame", "_k_operand", "_k_decode",
             "_k_mvmul_core", "_k_mvmul", "_k_mvmul_batch", "_k_logical", "_k_elw",
             "_k_gm_key", "_k_gmpool", "_k_movd2x", "_k_src2dst", "_k_copy_rows")


class Kernels(NamedTuple):
    """The compiled instruction kernels (see the table in the module docstring)."""

    mvmul: object
    elw: object
    mvmul_batch: object
    gmpool: object
    movd2x: object
    src2dst: object
    copy_rows: object


_LOADED: dict[str, Kernels | None] = {}


def is_loaded() -> bool:
    """Whether :func:`load` has run in this process (successfully or not)."""
    return "kernels" in _LOADED


def load() -> Kernels | None:
    """The compiled kernels, compiling or loading them from numba's cache on the first call
    (~0.5-1 s of CPU including ``import numba``; 5-10 s the first time ever); None when numba
    is not importable."""
    try:
        return _LOADED["kernels"]
    except KeyError:
        pass
    try:
        import numba
    except ImportError:
        _LOADED["kernels"] = None
        return None
    g = globals()
    for name in _COMPILED:
        g[name] = numba.njit(cache=True)(g[name])
    kernels = Kernels(g["_k_mvmul"], g["_k_elw"], g["_k_mvmul_batch"], g["_k_gmpool"],
                      g["_k_movd2x"], g["_k_src2dst"], g["_k_copy_rows"])
    _LOADED["kernels"] = kernels
    return kernels


__all__ = ["ELW_OPS", "FSCRATCH", "GM_STYLES", "Kernels", "MOV_STYLES", "POW2", "SCRATCH",
           "is_loaded", "load"]
