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
:func:`_k_mvmul_run`        a run of MVMULs with one configuration (:func:`.fpu.mvmul_run`)
:func:`_k_mvmul_batch`      :func:`.fpu.mvmul_batch` (many blocks of :func:`.fpu.mvmul_kernel`)
:func:`_k_elw`              ELWADD, ELWSUB, ELWMUL (:func:`.fpu.elwadd_kernel`, ...)
:func:`_k_gmpool`           GMPOOL (:func:`.fpu.gmpool`)
:func:`_k_movd2x`           MOVD2A, MOVD2B (:func:`.fpu.dst_to_src_cells`)
:func:`_k_src2dst`          MOVA2D, MOVB2D (:func:`.fpu.src_to_dst_values`)
:func:`_k_src2dst_planned`  a repeated MOVA2D (:meth:`.matrix.MatrixUnit._mova2d_planned`)
:func:`_k_copy_rows`        MOVB2A
:func:`_k_cells16`          a repeated UNPACR of 16-bit datums (:mod:`.unpack`'s plans)
==========================  =================================================================

Why: the numpy instructions spent almost all their time in numpy's per-call overhead (an
MVMUL is 2,048 products, far too few for array operations to pay off). Each kernel works
straight on ``Dst.bits``/``Dst.valid`` and the Src cells: decode the operands, form the
products, group, align, accumulate, round and store. The arithmetic is that of the numpy
kernels, per element, in exact integers; every step is exact, so the two paths are the same
function (``tests/tensix/machine/test_fpu_fast.py`` checks it on random and edge operands, and the
oracle tests run through the compiled path). MVMUL's lanes are 16-wide LLVM vector
intrinsics (the ``_v_*`` functions, see the section "MVMUL / GAPOOL: 16 lanes at a time"),
whose group pass uses the x86 instructions PSHUFB, PMADDUBSW and PMULHRSW when numba
compiles for an AVX2 CPU (plain LLVM otherwise); a run decodes each Src block once.
Integer "8" MVMUL/ELW* have no kernel and stay on numpy.

Loading: the functions below are plain Python until :func:`load` swaps them, callees first,
for ``numba.njit(cache=True)`` versions, and the ``_v_*`` ones for the intrinsics (later
processes load the machine code from ``__pycache__``). Nothing here imports numba at import
time; when to load (after :data:`.fpu.JIT_AFTER` instructions, never with
:data:`.fpu.USE_JIT` off) is :mod:`.fpu`'s decision.
"""

from __future__ import annotations

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


# --------------------------------------------------------------------------------------------
# MVMUL / GAPOOL: 16 lanes at a time
# --------------------------------------------------------------------------------------------
# The ``_v_*`` functions below are the per-lane arithmetic of MVMUL, written here as plain
# Python over the 16 columns of a row (readable, and what the kernels run uncompiled).
# :func:`load` replaces each by an LLVM intrinsic (:func:`_vector_intrinsics`) that does the
# same on 16-lane vectors: numba's own loops widen every int32 to int64 and leave 16-iteration
# loops scalar, which made a product cost ~3.5 ns instead of ~0.1 ns. ``_v_mvmul_row`` is
# the one the kernels use: a Dst row's two groups, read, accumulate and write, fused (nothing
# goes through memory), with special cases for FP32, BF16 and FP16 Dst when the mode and
# flags are constants (the generic accumulate is for other flag combinations).
# The operands and the group pass fit in int16 (see _v_group), so the work arrays are int16
# and the group pass runs on ``<16 x i16>``, one AVX2 register; the accumulate needs int32:
# an aligned term is < 2**29, an FP32-frame value is handled as 32 raw bits.

_ZE = -(1 << 14)  # exponent of a zero operand (two of them still fit in int16 sums)
_EB_BIAS = (1 << 15) + 14  # added to SrcB's exponents (modulo 2**16) when decoded


def _wrap16(v: int) -> int:
    """``v`` modulo ``2**16``, as a signed 16-bit number."""
    return ((v + (1 << 15)) & 0xFFFF) - (1 << 15)


def _v_decode(src: np.ndarray, off: int, mask: int, from_cells: bool, low_bits: bool,
              for_a: bool, out: np.ndarray, m_off: int, e_off: int, x_off: int, neg: int
              ) -> None:
    """16 operands at flat offset ``off`` of ``src`` (Src cells, or logical values when not
    ``from_cells``), masked -> the signed mantissa slice of the fidelity phase (SrcA: ``M[10:6]``
    or ``M[5:1]``; SrcB: ``M[10:4]`` or ``M[3:0] << 3``) and the exponent (:data:`_ZE` and a 0
    slice for a zero operand), at flat offsets ``m_off`` and ``e_off`` of ``out``, kept as the
    group pass uses them (see :func:`_v_group`). SrcA: the slice, and at ``x_off`` the slice
    negated. SrcB: ``2|slice| + 256`` (x86 PMADDUBSW's bytes 2|slice| and 1), the exponent plus
    :data:`_EB_BIAS` modulo ``2**16``, and at ``x_off`` where the group pass finds the SrcA
    slices of product ``c`` (16c from the slices: operand ``c`` of a SrcB row meets SrcA row
    ``c``), plus ``neg`` (the distance to the negated slices) when the operand is negative."""
    s, o = src.reshape(-1), out.reshape(-1)
    for c in range(16):
        v = np.int64(s[off + c])
        if from_cells:
            v = (v & 0x40000) | ((v & 0xFF) << 10) | ((v >> 8) & 0x3FF)
        v &= mask
        ex = (v >> 10) & 0xFF
        big = (v & 0x3FF) | 0x400
        if for_a:
            sl = ((big >> 1) & 31) if low_bits else (big >> 6)
        else:
            sl = ((big & 15) << 3) if low_bits else (big >> 4)
        m = 0 if ex == 0 else (-sl if (v >> 18) & 1 else sl)
        e = _ZE if ex == 0 else ex
        o[m_off + c] = m if for_a else 2 * abs(m) + 256
        o[e_off + c] = e if for_a else _wrap16(e + _EB_BIAS)
        o[x_off + c] = -m if for_a else 16 * c + (neg if m < 0 else 0)


def _v_group(ma: np.ndarray, ea: np.ndarray, mb: np.ndarray, eb: np.ndarray, ab: np.ndarray,
             brow: int, g: int, zx: int, tot: np.ndarray, top: np.ndarray) -> None:
    """Group ``g`` (products i = 8g..8g+7) of B row ``brow`` against the 16 columns of A
    (``ma``/``ea`` ``(16, 16)`` [i, c], ``mb``/``eb``/``ab`` rows [k, i], as :func:`_v_decode`
    keeps them: SrcB's slice magnitude doubled in ``mb``'s low byte, its sign in ``ab``, which
    points beyond the 16 rows of ``ma`` (256 elements), to the negated SrcA slices, when it is
    negative):
    ``top[g, c]`` = the largest ``eA + eB`` of the group's non-zero products (``zx`` when there
    are none: a zero product's vote), ``tot[g, c]`` = the sum of the products aligned to it,
    each rounded half away from zero: ``(2p + 2**d - (p < 0)) >> (d + 1)``.

    The intrinsic works in 16-bit lanes: ``|p| <= 31 * 127``, so ``x = 2p - (p < 0)`` has
    ``|x| < 2**13`` and the term is ``((x >> d) + 1) >> 1``, which is 0 from ``d = 14`` on and
    for ``d <= 14`` equals ``(x * 2**(14 - d) + 2**14) >> 15`` (x86 PMULHRSW); a group sum is
    below ``8 * 3937 < 2**15``. ``x`` is one PMADDUBSW of SrcB's bytes ``(2|b|, 1)`` and the
    16-bit SrcA slice ``+-a`` chosen by the sign of ``b`` (sign-extended, so its bytes are
    ``(+-a, -(+-a < 0))``): ``2|b|(+-a) - (+-a < 0)``, where ``+-a * |b| = p``. The
    exponents are worked on as ``s + 2**15 + 14``, where ``s = eA + eB >= 2 * _ZE = -2**15``:
    unsigned 16-bit numbers (SrcB's exponent is kept biased so), whose saturating difference
    from ``t + 2**15`` is ``14 - min(d, 14)``, the power of two (PSHUFB looks it up) that
    PMULHRSW multiplies by."""
    for c in range(16):
        t = _ZE
        for j in range(8):
            t = max(t, int(ea[8 * g + j, c]) + _wrap16(int(eb[brow, 8 * g + j]) - _EB_BIAS))
        t = zx if t < _ZE // 2 else t
        acc = 0
        for j in range(8):
            i = 8 * g + j
            sb = -1 if ab[brow, i] >= 256 else 1  # the negated SrcA slices are chosen
            p = int(ma[i, c]) * sb * ((int(mb[brow, i]) & 0xFF) // 2)
            d = min(t - int(ea[i, c]) - _wrap16(int(eb[brow, i]) - _EB_BIAS), 29)
            acc += ((p << 1) + (1 << d) - (1 if p < 0 else 0)) >> (d + 1)
        tot[g, c], top[g, c] = acc, t


def _v_accumulate(tot: np.ndarray, top: np.ndarray, frames: np.ndarray, off: int, adj: int,
                  fp32_acc: bool, exp8: bool) -> None:
    """``frames[off:off+16]`` (FP32-frame values, the prior Dst) += the two groups of
    :func:`_v_group` (exponent ``top + adj``; a group whose exponent is not positive is +0),
    in place: :func:`_k_accumulate` per lane."""
    f = frames.reshape(-1)
    for c in range(16):
        t0, t1 = np.int64(tot[0, c]), np.int64(tot[1, c])
        e0, e1 = np.int64(top[0, c]) + adj, np.int64(top[1, c]) + adj
        if e0 <= 0:
            e0, t0 = 0, 0
        if e1 <= 0:
            e1, t1 = 0, 0
        r = _k_accumulate(1 if t0 < 0 else 0, e0, abs(t0) << 13, 1 if t1 < 0 else 0, e1,
                          abs(t1) << 13, np.int64(f[off + c]) & 0xFFFFFFFF, fp32_acc, exp8)
        f[off + c] = np.int64(r).astype(f.dtype)  # raw 32 bits (wrapping into int32)


def _v_read_frames(bits: np.ndarray, valid: np.ndarray, p: int, mode: int, frames: np.ndarray,
                   off: int) -> None:
    """Dst physical row ``p`` -> 16 FP32-frame values at ``frames[off:]`` (:func:`_k_read_frame`
    per lane; 0 for an invalid row)."""
    f = frames.reshape(-1)
    for c in range(16):
        f[off + c] = np.int64(_k_read_frame(bits, valid, p, c, mode)).astype(f.dtype)


def _v_write_frames(frames: np.ndarray, off: int, mode: int, bits: np.ndarray, p: int) -> None:
    """16 FP32-frame values at ``frames[off:]`` -> Dst physical row ``p`` (:func:`_k_write_frame`
    per lane)."""
    f = frames.reshape(-1)
    for c in range(16):
        _k_write_frame(bits, p, c, np.int64(f[off + c]) & 0xFFFFFFFF, mode)


#: Layout of the MVMUL work space :data:`WS` (int16, flat offsets): 16 slots of decoded SrcA
#: rows (``_WS_A`` each: 16 x 16 slices [i, c], 16 x 16 exponents, the slices negated), 128
#: decoded SrcB rows (16 slices each from ``_WS_B``, their exponents ``_WS_EB`` further on,
#: their SrcA offsets ``2 * _WS_EB`` further on, see :func:`_v_decode`), and the flags of a run
#: (which SrcA rows each slot holds, and which SrcB rows are decoded).
_WS_A = 768
_WS_NEG = 512  # from a slot's slices to their negations
_WS_B = 16 * _WS_A
_WS_EB = 128 * 16
_WS_FLAGS = _WS_B + 3 * _WS_EB
_WS_SIZE = _WS_FLAGS + 256


def _v_mvmul_row(ws: np.ndarray, a_off: int, b_off: int, zx: int, adj: int, bits: np.ndarray,
                 valid: np.ndarray, p: int, mode: int, fp32_acc: bool, exp8: bool) -> None:
    """One Dst row of an MVMUL: the decoded SrcB row at flat offset ``b_off`` of ``ws``
    (exponents at ``b_off + _WS_EB``, SrcA offsets at ``b_off + 2 * _WS_EB``) against the 16
    columns of the decoded SrcA rows at ``a_off`` (exponents at ``a_off + 256``, negated
    slices at ``a_off + _WS_NEG``), both groups (:func:`_v_group`) added to Dst
    physical row ``p`` (:func:`_v_read_frames`, :func:`_v_accumulate`,
    :func:`_v_write_frames`), which becomes valid. The intrinsic keeps the groups and the
    frames in registers."""
    f = ws.reshape(-1)
    ma, ea = f[a_off:a_off + 256].reshape(16, 16), f[a_off + 256:a_off + 512].reshape(16, 16)
    mb = f[b_off:b_off + 16].reshape(1, 16)
    eb = f[b_off + _WS_EB:b_off + _WS_EB + 16].reshape(1, 16)
    ab = f[b_off + 2 * _WS_EB:b_off + 2 * _WS_EB + 16].reshape(1, 16)
    tot, top = np.zeros((2, 16), np.int64), np.zeros((2, 16), np.int64)
    fr = np.zeros(16, np.int64)
    _v_group(ma, ea, mb, eb, ab, 0, 0, zx, tot, top)
    _v_group(ma, ea, mb, eb, ab, 0, 1, zx, tot, top)
    _v_read_frames(bits, valid, p, mode, fr, 0)
    _v_accumulate(tot, top, fr, 0, adj, fp32_acc, exp8)
    _v_write_frames(fr, 0, mode, bits, p)
    valid[p] = True


def _k_decode_a(a_cells: np.ndarray, a_off: int, a_mask: int, phase: int, ws: np.ndarray,
                slot: int) -> None:
    """SrcA rows (16 from flat offset ``a_off`` of ``a_cells``) -> A slot ``slot`` of ``ws``
    (the fidelity phase's slices)."""
    for i in range(16):
        _v_decode(a_cells, a_off + 16 * i, a_mask, True, (phase & 1) != 0, True, ws,
                  slot * _WS_A + 16 * i, slot * _WS_A + 256 + 16 * i,
                  slot * _WS_A + _WS_NEG + 16 * i, 0)


def _k_mvmul_rows(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, mode: int,
                  dst_base: int, dst_step: int, n: int, b_cells: np.ndarray, b_bank: int,
                  b_row0: int, b_step: int, b_mask: int, phase: int, adj: int, fp32_acc: bool,
                  exp8: bool, ws: np.ndarray, slot: int, cached: bool) -> None:
    """One MVMUL / GAPOOL with SrcA decoded in A slot ``slot`` of ``ws``: Dst view rows
    ``dst_base + k * dst_step`` (k < n) += SrcB rows ``b_row0 + k * b_step`` @ SrcA, one
    fidelity phase. SrcB row k is decoded into B row k, or with ``cached`` (in a run, where
    the Src banks do not change) into B row ``row + 64 * (phase >> 1 & 1)`` unless the run's
    flags say it is there already."""
    flags = ws[_WS_FLAGS // 256]  # [0, slot]: SrcA; [1 + rv // 16, rv % 16]: SrcB
    low = (phase >> 1) & 1
    zx = max(adj, 0) - adj  # a zero product's exponent, in eA + eB units
    a_off = slot * _WS_A
    for k in range(n):
        row = (b_row0 + k * b_step) & 0x3F
        rv = row + 64 * low if cached else k
        if not cached or flags[1 + (rv >> 4), rv & 15] == 0:
            _v_decode(b_cells, (b_bank * 64 + row) * 16, b_mask, True, low != 0, False, ws,
                      _WS_B + 16 * rv, _WS_B + _WS_EB + 16 * rv, _WS_B + 2 * _WS_EB + 16 * rv,
                      _WS_NEG)
            flags[1 + (rv >> 4), rv & 15] = 1
        p = table[(dst_base + k * dst_step) & 0x3FF]
        if mode == 0 and fp32_acc:  # FP32 Dst (exp8 plays no part): the special case
            _v_mvmul_row(ws, a_off, _WS_B + 16 * rv, zx, adj, bits, valid, p, 0, True, exp8)
        elif mode == 1 and not fp32_acc and exp8:  # BF16 Dst: its own case
            _v_mvmul_row(ws, a_off, _WS_B + 16 * rv, zx, adj, bits, valid, p, 1, False, True)
        elif mode == 2 and not fp32_acc and not exp8:  # FP16 Dst: likewise
            _v_mvmul_row(ws, a_off, _WS_B + 16 * rv, zx, adj, bits, valid, p, 2, False, False)
        else:
            _v_mvmul_row(ws, a_off, _WS_B + 16 * rv, zx, adj, bits, valid, p, mode, fp32_acc,
                         exp8)


def _k_src_rows(cells: np.ndarray, bank: int, row0: int, out: np.ndarray) -> np.ndarray:
    """The 16 Src rows ``row0 .. row0 + 15`` of a bank, wrapping at 64: the bank's own rows
    when they do not wrap, else a copy in ``out``."""
    if row0 + 16 <= 64:
        return cells[bank, row0:row0 + 16]
    for i in range(16):
        for c in range(16):
            out[i, c] = cells[bank, (row0 + i) & 0x3F, c]
    return out


def _k_mvmul(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, mode: int,
             dst_base: int, dst_step: int, n: int, a_cells: np.ndarray, a_bank: int,
             a_row0: int, b_cells: np.ndarray, b_bank: int, b_row0: int, b_step: int,
             a_mask: int, b_mask: int, phase: int, adj: int, fp32_acc: bool, exp8: bool,
             ws: np.ndarray, wrap: np.ndarray) -> None:
    """MVMUL / GAPOOL on the register files (see :func:`_k_mvmul_rows`)."""
    _k_decode_a(_k_src_rows(a_cells, a_bank, a_row0, wrap), 0, a_mask, phase, ws, 0)
    _k_mvmul_rows(bits, valid, table, mode, dst_base, dst_step, n, b_cells, b_bank, b_row0,
                  b_step, b_mask, phase, adj, fp32_acc, exp8, ws, 0, False)


def _k_mvmul_run(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, mode: int,
                 a_cells: np.ndarray, a_bank: int, b_cells: np.ndarray, b_bank: int,
                 a_mask: int, b_mask: int, adjs: np.ndarray, fp32_acc: bool, exp8: bool,
                 plan: np.ndarray, ws: np.ndarray, wrap: np.ndarray) -> None:
    """A run of MVMULs / GAPOOLs with one configuration and the same Src banks, in order; row
    ``r`` of ``plan`` is ``(dst_base, dst_step, n, a_row0, b_row0, b_step, phase)`` of one
    instruction. The Src banks do not change during a run, so each SrcA block (16 rows from
    ``a_row0``, one phase bit) and each SrcB row (one phase bit) is decoded once and kept in
    ``ws`` (slot ``(a_row0 >> 3 & 7) * 2 + (phase & 1)``, which remembers the rows it holds)."""
    flags = ws[_WS_FLAGS // 256]  # see _k_mvmul_rows
    flags[:] = 0
    for r in range(plan.shape[0]):
        dst_base, dst_step, n = plan[r, 0], plan[r, 1], plan[r, 2]
        a_row0, b_row0, b_step, phase = plan[r, 3], plan[r, 4], plan[r, 5], plan[r, 6]
        slot = ((a_row0 >> 3) & 7) * 2 + (phase & 1)
        if flags[0, slot] != a_row0 + 1:
            _k_decode_a(_k_src_rows(a_cells, a_bank, a_row0, wrap), 0, a_mask, phase, ws, slot)
            flags[0, slot] = a_row0 + 1
        _k_mvmul_rows(bits, valid, table, mode, dst_base, dst_step, n, b_cells, b_bank, b_row0,
                      b_step, b_mask, phase, adjs[phase], fp32_acc, exp8, ws, slot, True)


def _k_mvmul_batch(a: np.ndarray, b: np.ndarray, dst: np.ndarray, out: np.ndarray,
                   phase: int, adj: int, fp32_acc: bool, exp8: bool, ws: np.ndarray) -> None:
    """:func:`.fpu.mvmul_kernel` on ``(N, 16, 16)`` / ``(N, R, 16)`` int64 arrays (masked
    logical operands; FP32-frame values) into ``out``; ``ws``: 6 planes of at least 16 rows
    (SrcA's slices, exponents and negated slices, SrcB's, see :func:`_v_decode`)."""
    n = b.shape[1]
    ma, ea, mb, eb, ab = ws[0], ws[1], ws[3], ws[4], ws[5]
    grp = np.zeros((4, 16), np.int64)
    tot, top = grp[0:2], grp[2:4]
    plane = ws.shape[1] * ws.shape[2]
    zx = max(adj, 0) - adj
    for t in range(a.shape[0]):
        for i in range(16):
            _v_decode(a[t], 16 * i, 0x7FFFF, False, (phase & 1) != 0, True, ws, 16 * i,
                      plane + 16 * i, 2 * plane + 16 * i, 0)
        for k in range(n):
            _v_decode(b[t], 16 * k, 0x7FFFF, False, (phase & 2) != 0, False, ws,
                      3 * plane + 16 * k, 4 * plane + 16 * k, 5 * plane + 16 * k, 2 * plane)
        for k in range(n):
            _v_group(ma, ea, mb, eb, ab, k, 0, zx, tot, top)
            _v_group(ma, ea, mb, eb, ab, k, 1, zx, tot, top)
            for c in range(16):
                out[t, k, c] = dst[t, k, c]
            if fp32_acc:  # the FP32 special case (exp8 plays no part)
                _v_accumulate(tot, top, out[t], 16 * k, adj, True, exp8)
            elif exp8:  # the BF16 one, and the FP16 one
                _v_accumulate(tot, top, out[t], 16 * k, adj, False, True)
            else:
                _v_accumulate(tot, top, out[t], 16 * k, adj, False, False)


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


def _k_movd2x(bits: np.ndarray, valid: np.ndarray, table: np.ndarray, is32: bool, drow0: int,
              n: int, cells: np.ndarray, bank: int, srow0: int, style: int, lo: bool) -> None:
    """MOVD2A/MOVD2B (see :func:`.fpu.dst_to_src_cells`): Dst view rows ``drow0 + k`` -> Src rows
    ``srow0 + k`` (k < n); ``style`` 0 BF16, 1 FP16/Int8, 2 TF32. An invalid Dst row reads
    as 0."""
    for k in range(n):
        p = table[(drow0 + k) & 0x3FF]
        row = (srow0 + k) & 0x3F
        live = valid[p]
        for c in range(16):
            v = np.int64(bits[p, c]) if live else np.int64(0)
            if is32:
                v = (v << 16) | (np.int64(bits[p + 8, c]) if live else np.int64(0))
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


def _k_src2dst_row(bits: np.ndarray, valid: np.ndarray, p: int, cells: np.ndarray, bank: int,
                   row: int, col0: bool, flush: bool, bf16: bool, tf32: bool, lo: bool,
                   premask: int) -> None:
    """One row of :func:`_k_src2dst`: Src row ``row`` -> the Dst row whose (high half's)
    physical row is ``p``."""
    if lo and not tf32 and not valid[p]:
        for c in range(16):
            bits[p, c] = 0
    for c in range(16):
        cell = np.int64(cells[bank, row, 0 if col0 else c])
        if flush and (cell & 0xFF) == 0:
            cell = 0
        cell &= premask
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


def _k_src2dst(bits: np.ndarray, valid: np.ndarray, table16: np.ndarray,
               table32: np.ndarray, drow0: int, n: int, cells: np.ndarray, bank: int,
               srow0: int, sstep: int, col0: bool, flush: bool, bf16: bool, tf32: bool,
               lo: bool, premask: int) -> None:
    """MOVA2D/MOVB2D (see :func:`.fpu._write_moved`): Src rows ``srow0 + k * sstep`` (column 0
    only with ``col0``; flushed, then masked by ``premask``) -> Dst view rows ``drow0 + k``.
    Writing the low halves of an invalid Dst32b row clears its high halves (the row read as 0;
    k < n)."""
    for k in range(n):
        drow = (drow0 + k) & 0x3FF
        row = (srow0 + k * sstep) & 0x3F
        p = table32[drow] if tf32 or lo else table16[drow]
        _k_src2dst_row(bits, valid, p, cells, bank, row, col0, flush, bf16, tf32, lo, premask)


#: :func:`_k_src2dst_planned`'s ``plan``: the flags, the premask and the number of rows,
#: then per row the physical Dst row and the Src row, then the RWC row after
SRC2DST_HEAD = 7


def _k_src2dst_planned(bits: np.ndarray, valid: np.ndarray, cells: np.ndarray, bank: int,
                       plan: np.ndarray, rwc: np.ndarray, t: int) -> None:
    """:func:`_k_src2dst` with what a repeated MOVA2D/MOVB2D fixes worked out once (few
    arguments: each costs a numba call ~0.1 us), then thread ``t``'s RWCs set: ``plan`` is
    ``col0, flush, bf16, tf32, lo, premask, n``, then, per row, the physical row ``p``
    :func:`_k_src2dst` finds in its tables and the Src row, then the RWC row to set."""
    col0, flush, bf16, tf32 = plan[0] != 0, plan[1] != 0, plan[2] != 0, plan[3] != 0
    lo, premask, n = plan[4] != 0, plan[5], plan[6]
    for k in range(n):
        i = SRC2DST_HEAD + 2 * k
        _k_src2dst_row(bits, valid, plan[i], cells, bank, plan[i + 1], col0, flush, bf16,
                       tf32, lo, premask)
    end = SRC2DST_HEAD + 2 * n
    for c in range(len(plan) - end):
        rwc[t, c] = plan[end + c]


def _k_cells16(l1: np.ndarray, start: int, hi: np.ndarray, lo: np.ndarray,
               out: np.ndarray) -> None:
    """A repeated UNPACR of 16-bit datums (:meth:`.unpack.Unpackers.unpacr`): the
    little-endian datum at L1 byte ``start + 2 * i`` becomes Src cell ``out[i]`` by a
    conversion table split by bytes, ``hi[datum >> 8] | lo[datum & 0xFF]`` (two 256-entry
    tables stay in the cache where the 65,536-entry one did not; the caller splits only a
    table for which this gives every entry)."""
    for i in range(len(out)):
        out[i] = hi[l1[start + 2 * i + 1]] | lo[l1[start + 2 * i]]


def _k_copy_rows(dst: np.ndarray, dbank: int, drow0: int, src: np.ndarray, sbank: int,
                 srow0: int, n: int, flush: bool) -> None:
    """MOVB2A: ``n`` Src rows from one register file to another (19-bit cells); with ``flush``
    a cell whose exponent field is 0 arrives as 0."""
    for k in range(n):
        for c in range(16):
            cell = src[sbank, (srow0 + k) & 0x3F, c] & 0x7FFFF
            if flush and (cell & 0xFF) == 0:
                cell = 0
            dst[dbank, (drow0 + k) & 0x3F, c] = cell


def _x86_avx2() -> bool:
    """Whether numba compiles for an x86 CPU with AVX2 (the target it was told, or the host):
    then the group pass uses the x86 intrinsics PSHUFB and PMULHRSW, else plain LLVM."""
    import llvmlite.binding as ll
    from numba.core import config

    if not ll.get_process_triple().startswith("x86_64"):
        return False
    features = config.CPU_FEATURES
    if features is None:  # numba's own choice (an internal function: plain LLVM without it)
        try:
            from numba.core.codegen import get_host_cpu_features
        except ImportError:
            return False
        features = get_host_cpu_features()
    return "+avx2" in features.split(",")


def _vector_intrinsics() -> dict[str, object]:
    """The ``_v_*`` functions as numba intrinsics on 16-lane vectors (imports numba and
    llvmlite; called by :func:`load`). Each emits, lane for lane, the integer operations of its
    Python twin above; arrays are read and written through their data pointers at flat
    element offsets (every array the kernels pass is C-contiguous in the rows used)."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    i8, i16, i32, i64 = ir.IntType(8), ir.IntType(16), ir.IntType(32), ir.IntType(64)
    v16, w16, v32b = ir.VectorType(i32, 16), ir.VectorType(i16, 16), ir.VectorType(i8, 32)

    def vc(x: int) -> ir.Constant:
        return ir.Constant(v16, [x] * 16)

    def wc(x: int) -> ir.Constant:
        return ir.Constant(w16, [x] * 16)

    def int32(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
        w = v.type.width
        return b.trunc(v, i32) if w > 32 else (b.zext(v, i32) if w < 32 else v)

    def splat(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        v = b.insert_element(ir.Constant(v16, ir.Undefined), int32(b, x), ir.Constant(i32, 0))
        return b.shuffle_vector(v, ir.Constant(v16, ir.Undefined), vc(0))

    def data(context, b, aryty, ary):  # noqa: ANN001, ANN202 - numba codegen objects
        return context.make_array(aryty)(context, b, ary).data

    def elem_ptr(b: ir.IRBuilder, ptr: ir.Value, off: ir.Value) -> ir.Value:
        return b.gep(ptr, [b.sext(int32(b, off), i64)] if off.type.width <= 32
                     else [off])

    def load16(b: ir.IRBuilder, ptr: ir.Value, off: ir.Value, signed: bool = False
               ) -> ir.Value:
        et = ptr.type.pointee
        vec = b.load(b.bitcast(elem_ptr(b, ptr, off), ir.VectorType(et, 16).as_pointer()),
                     align=et.width // 8)
        if et.width > 32:
            return b.trunc(vec, v16)
        if et.width < 32:
            return b.sext(vec, v16) if signed else b.zext(vec, v16)
        return vec

    def store16(b: ir.IRBuilder, vec: ir.Value, ptr: ir.Value, off: ir.Value) -> None:
        et = ptr.type.pointee
        vt = ir.VectorType(et, 16)
        if et.width > 32:
            vec = b.zext(vec, vt)  # FP32-frame bits are unsigned
        elif et.width < 32:
            vec = b.trunc(vec, vt)
        b.store(vec, b.bitcast(elem_ptr(b, ptr, off), vt.as_pointer()), align=et.width // 8)

    def sel(b: ir.IRBuilder, cond: ir.Value, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(cond, x, y)

    def smax(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(b.icmp_signed(">", x, y), x, y)

    def umax(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(b.icmp_unsigned(">", x, y), x, y)

    def smin(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(b.icmp_signed("<", x, y), x, y)

    def flag(b: ir.IRBuilder, v: ir.Value) -> ir.Value:  # a numba bool/int -> i1
        return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))

    def neg_if(b: ir.IRBuilder, cond: ir.Value, x: ir.Value) -> ir.Value:
        return b.select(cond, b.sub(vc(0), x), x)

    def absv(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        return neg_if(b, b.icmp_signed("<", x, vc(0)), x)

    lanes16 = ir.Constant(v16, [16 * c for c in range(16)])

    @intrinsic
    def decode(typingctx, src, off, mask, from_cells, low_bits, for_a, out, m_off, e_off, x_off,  # noqa: ANN001, ANN202, E501
               neg):
        def codegen(context, b, sig, args):  # noqa: ANN001, ANN202
            v = load16(b, data(context, b, sig.args[0], args[0]), args[1])
            cells = b.or_(b.or_(b.and_(v, vc(0x40000)), b.shl(b.and_(v, vc(0xFF)), vc(10))),
                          b.and_(b.lshr(v, vc(8)), vc(0x3FF)))
            v = sel(b, flag(b, args[3]), cells, v)
            v = b.and_(v, splat(b, args[2]))
            ex = b.and_(b.lshr(v, vc(10)), vc(0xFF))
            big = b.or_(b.and_(v, vc(0x3FF)), vc(0x400))
            low = flag(b, args[4])
            sl_a = sel(b, low, b.and_(b.lshr(big, vc(1)), vc(31)), b.lshr(big, vc(6)))
            sl_b = sel(b, low, b.shl(b.and_(big, vc(15)), vc(4)),  # doubled
                       b.shl(b.lshr(big, vc(4)), vc(1)))
            for_a = flag(b, args[5])
            zero = b.icmp_unsigned("==", ex, vc(0))
            mag = sel(b, zero, vc(0), sel(b, for_a, sl_a, sl_b))
            m = neg_if(b, b.icmp_unsigned("!=", b.and_(v, vc(0x40000)), vc(0)), mag)
            out_p = data(context, b, sig.args[6], args[6])
            store16(b, sel(b, for_a, m, b.add(mag, vc(256))), out_p, args[7])
            bias = sel(b, for_a, vc(0), vc(_EB_BIAS))  # modulo 2**16 in int16
            store16(b, b.add(sel(b, zero, vc(_ZE), ex), bias), out_p, args[8])
            at_a = b.add(lanes16, sel(b, b.icmp_signed("<", m, vc(0)), splat(b, args[10]),
                                      vc(0)))
            store16(b, sel(b, for_a, b.sub(vc(0), m), at_a), out_p, args[9])
            return context.get_dummy_value()
        return types.none(src, off, mask, from_cells, low_bits, for_a, out, m_off, e_off,
                          x_off, neg), codegen

    # The group pass works on <16 x i16>, one AVX2 register per 16 lanes (see _v_group).
    fast = _x86_avx2()

    def vcall(b: ir.IRBuilder, name: str, ret: ir.Type, *xs: ir.Value) -> ir.Value:
        fn = cgutils.get_or_insert_function(b.module, ir.FunctionType(ret, [x.type for x in xs]),
                                            name)
        return b.call(fn, list(xs))

    def load_w(b: ir.IRBuilder, ptr: ir.Value, off: ir.Value) -> ir.Value:
        """16 signed elements at ``ptr[off]`` as <16 x i16> (the values fit)."""
        et = ptr.type.pointee
        vec = b.load(b.bitcast(elem_ptr(b, ptr, off), ir.VectorType(et, 16).as_pointer()),
                     align=et.width // 8)
        return b.trunc(vec, w16) if et.width > 16 else (b.sext(vec, w16) if et.width < 16
                                                         else vec)

    def scalar_w(b: ir.IRBuilder, ptr: ir.Value, off: ir.Value) -> ir.Value:
        v = b.load(elem_ptr(b, ptr, off))
        return b.trunc(v, i16) if v.type.width > 16 else (b.sext(v, i16) if v.type.width < 16
                                                          else v)

    def splat_w(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        v = b.insert_element(ir.Constant(w16, ir.Undefined), x, ir.Constant(i32, 0))
        return b.shuffle_vector(v, ir.Constant(w16, ir.Undefined), vc(0))

    def store_w(b: ir.IRBuilder, vec: ir.Value, ptr: ir.Value, off: ir.Value) -> None:
        et = ptr.type.pointee
        vt = ir.VectorType(et, 16)
        vec = b.sext(vec, vt) if et.width > 16 else (b.trunc(vec, vt) if et.width < 16 else vec)
        b.store(vec, b.bitcast(elem_ptr(b, ptr, off), vt.as_pointer()), align=et.width // 8)

    def sat(b: ir.IRBuilder, op: str, x: ir.Value, y: ir.Value) -> ir.Value:
        return vcall(b, f"llvm.{op}.sat.v16i16", w16, x, y)

    # the low and high bytes of 2**k: byte k (k < 8), byte (k + 8) % 16 (8 <= k < 16); twice
    # (PSHUFB looks up in each 128-bit half)
    pow_bytes = ir.Constant(v32b, [1 << k if k < 8 else 0 for k in range(16)] * 2)

    # PSHUFB's indices that copy each 16-bit lane's low byte into its high byte
    low_twice = ir.Constant(v32b, [n & ~1 for n in range(32)])

    def round_term(b: ir.IRBuilder, x: ir.Value, k: ir.Value) -> ir.Value:
        """``((x >> (14 - k)) + 1) >> 1`` for |x| < 2**13 and 0 <= k <= 14:
        ``(x * 2**k + 2**14) >> 15``, which is PMULHRSW."""
        if not fast:
            y = b.shl(wc(1), k)
            r = b.ashr(b.add(b.mul(b.sext(x, v16), b.sext(y, v16)), vc(1 << 14)), vc(15))
            return b.trunc(r, w16)
        # byte indices k, k + 8: k * 257 + 0x800, the byte copied by one PSHUFB (two
        # operations; LLVM makes the multiplication a shift and an addition, three)
        kk = vcall(b, "llvm.x86.avx2.pshuf.b", v32b, b.bitcast(k, v32b), low_twice)
        idx = b.add(b.bitcast(kk, w16), wc(0x800))
        y = b.bitcast(vcall(b, "llvm.x86.avx2.pshuf.b", v32b, pow_bytes,
                            b.bitcast(idx, v32b)), w16)
        return vcall(b, "llvm.x86.avx2.pmul.hr.sw", w16, x, y)

    def int64(b: ir.IRBuilder, v: ir.Value) -> ir.Value:
        return v if v.type.width == 64 else b.sext(v, i64)

    def at(b: ir.IRBuilder, ptr: ir.Value, off: ir.Value | int) -> ir.Value:
        """``ptr + off`` elements (constant offsets fold into the addressing)."""
        return b.gep(ptr, [ir.Constant(i64, off) if isinstance(off, int) else int64(b, off)],
                     inbounds=True)

    def product(b: ir.IRBuilder, bw: ir.Value, av: ir.Value) -> ir.Value:
        """x = 2|b|(+-a) - (+-a < 0) from SrcB's word ``bw`` (bytes 2|b| and 1) and the SrcA
        slice ``av`` (see _v_group): x86 PMADDUBSW, or its arithmetic."""
        if not fast:
            return b.add(b.mul(av, b.and_(bw, wc(0xFF))), b.ashr(av, wc(15)))
        return b.bitcast(vcall(b, "llvm.x86.avx2.pmadd.ub.sw", w16, b.bitcast(bw, v32b),
                               b.bitcast(av, v32b)), w16)

    def group_ir(b: ir.IRBuilder, ma_p: ir.Value, ea_p: ir.Value, mb_p: ir.Value,
                 eb_p: ir.Value, ab_p: ir.Value, brow: ir.Value, g: ir.Value, zx: ir.Value
                 ) -> tuple[ir.Value, ir.Value]:
        """(sum, exponent) of group ``g`` of B row ``brow``, as <16 x i16> (see _v_group)."""
        a_off = b.mul(int64(b, g), ir.Constant(i64, 128))  # A rows 8g.. (16 lanes each)
        b_off = b.add(b.mul(int64(b, brow), ir.Constant(i64, 16)),
                      b.mul(int64(b, g), ir.Constant(i64, 8)))  # B row brow, element 8g
        ea_g = at(b, ea_p, a_off)
        mb_g, eb_g, ab_g = at(b, mb_p, b_off), at(b, eb_p, b_off), at(b, ab_p, b_off)
        sums = []  # eA + eB + _EB_BIAS of the 8 products, unsigned (14 .. 2**15 + 524)
        t = wc(0)
        for j in range(8):
            sums.append(b.add(load_w(b, ea_g, ir.Constant(i32, 16 * j)),
                              splat_w(b, scalar_w(b, eb_g, ir.Constant(i32, j)))))
            t = umax(b, t, sums[j])
        zx_b = b.add(b.trunc(int32(b, zx), i16), ir.Constant(i16, _EB_BIAS - (1 << 16)))
        t = sel(b, b.icmp_unsigned("<", t, wc(_ZE // 2 + _EB_BIAS)), splat_w(b, zx_b), t)
        t14 = b.sub(t, wc(14))
        acc = wc(0)
        for j in range(8):  # x = 2p - (p < 0); the term is ((x >> d) + 1) >> 1
            bw = splat_w(b, scalar_w(b, mb_g, ir.Constant(i32, j)))  # bytes 2|b|, 1
            av = load_w(b, at(b, ma_p, b.load(at(b, ab_g, j))), ir.Constant(i32, 0))
            k = vcall(b, "llvm.usub.sat.v16i16", w16, sums[j], t14)  # 14 - min(d, 14)
            acc = b.add(acc, round_term(b, product(b, bw, av), k))
        t = b.sub(t, wc(_EB_BIAS - (1 << 16)))
        return acc, t

    @intrinsic
    def group(typingctx, ma, ea, mb, eb, ab, brow, g, zx, tot, top):  # noqa: ANN001, ANN202
        def codegen(context, b, sig, args):  # noqa: ANN001, ANN202
            ma_p, ea_p, mb_p, eb_p, ab_p, tot_p, top_p = (
                data(context, b, sig.args[n], args[n]) for n in (0, 1, 2, 3, 4, 8, 9))
            acc, t = group_ir(b, ma_p, ea_p, mb_p, eb_p, ab_p, args[5], args[6], args[7])
            g16 = b.mul(int32(b, args[6]), ir.Constant(i32, 16))
            store_w(b, acc, tot_p, g16)
            store_w(b, t, top_p, g16)
            return context.get_dummy_value()
        return types.none(ma, ea, mb, eb, ab, brow, g, zx, tot, top), codegen

    def accumulate_ir(b: ir.IRBuilder, groups: list[tuple[ir.Value, ir.Value]], dst: ir.Value,
                      adj: ir.Value, fp32: ir.Value, e8: ir.Value) -> ir.Value:
        """The FP32-frame lanes ``dst`` plus the two groups' (sum, exponent) <16 x i32>
        vectors, with ``adj`` added to the exponents (see _v_accumulate); ``fp32`` and ``e8``
        are i1 (constants fold the 16-bit Dst steps away)."""
        terms = []  # (sign 0/1, exponent, magnitude) of group 0, group 1, Dst
        for tg, eg in groups:
            eg = b.add(eg, adj)
            live = b.icmp_signed(">", eg, vc(0))
            tg = sel(b, live, tg, vc(0))
            terms.append((b.lshr(tg, vc(31)), sel(b, live, eg, vc(0)),
                          b.shl(absv(b, tg), vc(13))))
        ed = b.and_(b.lshr(dst, vc(23)), vc(0xFF))
        md = sel(b, b.icmp_unsigned("==", ed, vc(0)), vc(0),
                 b.or_(b.and_(dst, vc(0x7FFFFF)), vc(0x800000)))
        terms.append((b.lshr(dst, vc(31)), ed, md))
        e = smax(b, smax(b, terms[0][1], terms[1][1]), ed)
        rnd = sel(b, fp32, vc(0), vc(4096))
        keep_mask = sel(b, fp32, vc(-1), vc(~0x1FFF))
        s_mask = sel(b, fp32, vc(0), vc(1))
        total = vc(0)
        for n, (s, ex, m) in enumerate(terms):
            # (2m + 2**d - (2s if d > 0)) >> (d + 1) in fewer steps: (((2m - s) >> d) + 1) >> 1
            # (the same for every d >= 0, see _k_accumulate; the Dst term has s = 0 here)
            d = smin(b, b.sub(e, ex), vc(30))
            m2 = b.shl(m, vc(1)) if n == 2 else b.sub(b.shl(m, vc(1)), s)
            m = b.lshr(b.add(b.lshr(m2, d), vc(1)), vc(1))
            sub16 = vc(0) if n == 2 else b.and_(s, s_mask)
            m = b.and_(b.sub(b.add(m, rnd), sub16), keep_mask)
            total = b.add(total, neg_if(b, b.icmp_unsigned("!=", s, vc(0)), m))
        sign = b.lshr(total, vc(31))
        mag = absv(b, total)
        # bit length: the exponent of the nearest float, one less if that rounded up
        fexp = b.lshr(b.bitcast(b.sitofp(mag, ir.VectorType(ir.FloatType(), 16)), v16),
                      vc(23))
        blen = b.sub(fexp, vc(126))
        low = b.icmp_unsigned("==", b.lshr(mag, smax(b, b.sub(blen, vc(1)), vc(0))), vc(0))
        blen = sel(b, b.icmp_unsigned("==", mag, vc(0)), vc(0),
                   b.sub(blen, b.zext(low, v16)))
        keep = sel(b, fp32, ir.Constant(i32, 24), sel(b, e8, ir.Constant(i32, 8),
                                                      ir.Constant(i32, 11)))
        keep = splat(b, keep)
        rs = smax(b, b.sub(blen, keep), vc(0))
        ls = b.add(smax(b, b.sub(keep, blen), vc(0)), b.sub(vc(24), keep))
        man = b.shl(b.lshr(b.add(mag, b.lshr(b.shl(vc(1), rs), vc(1))), rs), ls)
        e2 = b.add(b.sub(b.add(e, blen), vc(24)), b.lshr(man, vc(24)))
        man = b.and_(man, vc(0x7FFFFF))
        wide = b.or_(fp32, e8)
        big = b.icmp_signed(">=", e2, sel(b, wide, vc(255), vc(32)))
        exf = sel(b, big, sel(b, wide, vc(255), vc(31)), e2)
        manf = sel(b, big, sel(b, wide, vc(0), vc(0x3FF << 13)), man)
        r = b.or_(b.or_(b.shl(sign, vc(31)), b.shl(exf, vc(23))), manf)
        ok = b.and_(b.and_(b.icmp_signed(">", e, vc(0)), b.icmp_unsigned("!=", mag, vc(0))),
                    b.icmp_signed(">", e2, vc(0)))
        return sel(b, ok, r, vc(0))

    def read_ir(b: ir.IRBuilder, bits_p: ir.Value, valid_p: ir.Value, p: ir.Value,
                mode: ir.Value) -> ir.Value:
        """Dst physical row ``p`` as 16 FP32-frame lanes (see _v_read_frames)."""
        ok = b.icmp_unsigned("!=", b.load(elem_ptr(b, valid_p, p)), ir.Constant(i8, 0))
        is32 = b.icmp_signed("==", mode, ir.Constant(i32, 0))
        hi = load16(b, bits_p, b.mul(p, ir.Constant(i32, 16)))
        lo_row = sel(b, is32, b.add(p, ir.Constant(i32, 8)), p)  # in bounds either way
        lo = sel(b, is32, load16(b, bits_p, b.mul(lo_row, ir.Constant(i32, 16))), vc(0))
        top = b.shl(b.and_(hi, vc(0x8000)), vc(16))
        f8 = b.or_(b.or_(top, b.shl(b.and_(hi, vc(0xFF)), vc(23))),
                   b.or_(b.shl(b.and_(hi, vc(0x7F00)), vc(8)), lo))
        f5 = b.or_(b.or_(top, b.shl(b.and_(hi, vc(0x1F)), vc(23))),
                   b.shl(b.and_(hi, vc(0x7FE0)), vc(8)))
        f = sel(b, b.icmp_signed("==", mode, ir.Constant(i32, 2)), f5, f8)
        return sel(b, ok, f, vc(0))

    def write_ir(b: ir.IRBuilder, f: ir.Value, bits_p: ir.Value, p: ir.Value, mode: ir.Value
                 ) -> None:
        """16 FP32-frame lanes -> Dst physical row ``p`` (see _v_write_frames)."""
        sign = b.and_(b.lshr(f, vc(16)), vc(0x8000))
        h8 = b.or_(b.or_(sign, b.and_(b.lshr(f, vc(8)), vc(0x7F00))),
                   b.and_(b.lshr(f, vc(23)), vc(0xFF)))
        h5 = b.or_(b.or_(sign, b.and_(b.lshr(f, vc(8)), vc(0x7FE0))),
                   b.and_(b.lshr(f, vc(23)), vc(0x1F)))
        hi = sel(b, b.icmp_signed("==", mode, ir.Constant(i32, 2)), h5, h8)
        store16(b, hi, bits_p, b.mul(p, ir.Constant(i32, 16)))
        with b.if_then(b.icmp_signed("==", mode, ir.Constant(i32, 0))):
            store16(b, b.and_(f, vc(0xFFFF)), bits_p,
                    b.mul(b.add(p, ir.Constant(i32, 8)), ir.Constant(i32, 16)))

    # FP32 Dst (mode 0, fp32_acc; exp8 then plays no part), the common case, computed without
    # the frame: the exponent work in <16 x i16>; Dst's two 16-bit rows feed the int32 lanes
    # directly, which are in the order of the AVX2 unpack instructions ([0-3, 8-11] and
    # [4-7, 12-15]), the inverse of the pack that makes the 16-bit results.
    lanes_a = [0, 1, 2, 3, 8, 9, 10, 11]
    lanes_b = [4, 5, 6, 7, 12, 13, 14, 15]

    def shuf(b: ir.IRBuilder, x: ir.Value, y: ir.Value, idx: list[int]) -> ir.Value:
        return b.shuffle_vector(x, y, ir.Constant(ir.VectorType(i32, len(idx)), idx))

    def widen(b: ir.IRBuilder, low: ir.Value, high: ir.Value) -> ir.Value:
        """<16 x i32> whose lanes are ``high << 16 | low`` (unsigned), in unpack order."""
        mix = [m for n in lanes_a + lanes_b for m in (n, n + 16)]
        return b.bitcast(shuf(b, low, high, mix), v16)

    def narrow(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        """The low 16 bits of each lane of a :func:`widen`-ordered vector, in lane order."""
        h = b.bitcast(x, ir.VectorType(i16, 32))
        order = [0] * 16
        for k, n in enumerate(lanes_a + lanes_b):
            order[n] = 2 * k
        return shuf(b, h, h, order)

    def sext_w(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        return widen(b, x, b.ashr(x, wc(15)))

    def zext_w(b: ir.IRBuilder, x: ir.Value) -> ir.Value:
        return widen(b, x, wc(0))

    def live_groups(b: ir.IRBuilder, groups: list[tuple[ir.Value, ir.Value]], adj: ir.Value,
                    ed: ir.Value) -> tuple[list[ir.Value], list[ir.Value], ir.Value]:
        """The two groups' sums and exponents (``top + adj``; a group whose exponent is not
        positive is +0 with exponent 0), and the largest exponent of them and Dst's ``ed``."""
        ts, es = [], []
        for tg, tp in groups:
            eg = b.add(tp, adj)
            live = b.icmp_signed(">", eg, wc(0))
            ts.append(sel(b, live, tg, wc(0)))
            es.append(sel(b, live, eg, wc(0)))
        return ts, es, smax(b, smax(b, es[0], es[1]), ed)

    def fp32_row_ir(b: ir.IRBuilder, groups: list[tuple[ir.Value, ir.Value]], hi: ir.Value,
                    lo: ir.Value, adj: ir.Value) -> tuple[ir.Value, ir.Value]:
        """FP32 Dst rows ``hi`` (sign, M[22:16], exponent) and ``lo`` (M[15:0]) plus the two
        groups' (sum, exponent) <16 x i16> vectors -> the new (hi, lo): accumulate_ir with
        fp32 on, where a term's alignment ``(2m + 2**d - (2s if d > 0)) >> (d + 1)``
        (magnitude m, sign s) is, on the signed group term T = sum << 13, the rounding
        half up ``((2T >> d) + 1) >> 1``, and the normalisation takes bit lengths from float
        conversions (see the comments)."""
        ed = b.and_(hi, wc(0xFF))
        nz = b.icmp_unsigned("!=", ed, wc(0))
        mdh = sel(b, nz, b.or_(b.and_(b.lshr(hi, wc(8)), wc(0x7F)), wc(0x80)), wc(0))
        md = widen(b, sel(b, nz, lo, wc(0)), mdh)  # 1.M[22:0], 0 for a zero exponent
        sd = sext_w(b, b.ashr(hi, wc(15)))  # -1 for a negative Dst value
        ts, es, e = live_groups(b, groups, adj, ed)
        total = vc(0)
        for tg, eg in zip(ts, es, strict=True):
            d = zext_w(b, smin(b, b.sub(e, eg), wc(30)))
            q = b.ashr(b.shl(sext_w(b, tg), vc(14)), d)  # 2T >> d
            total = b.add(total, b.ashr(b.add(q, vc(1)), vc(1)))
        d = zext_w(b, smin(b, b.sub(e, ed), wc(30)))
        m = b.lshr(b.add(b.lshr(b.shl(md, vc(1)), d), vc(1)), vc(1))
        total = b.add(total, b.sub(b.xor(m, sd), sd))  # the Dst term, negated if sd
        # |total| < 2**30 -> 24 bits, rounded half up, as the float F (exact), with
        # rs = max(blen - 24, 0) from blen = the bit length, 126 + the exponent of float(mag).
        # When float(mag) rounds up to the next power of two (blen one too large), so does
        # the rounding half up to 24 bits, and with one more shift it gives t1 = 2**23
        # instead of 2**24: the same result.
        sign = b.and_(total, vc(-(1 << 31)))
        mag = absv(b, total)
        fv = ir.VectorType(ir.FloatType(), 16)
        fe = b.lshr(b.bitcast(b.sitofp(mag, fv), v16), vc(23))  # 126 + blen, 0 for 0
        rs = smax(b, b.sub(fe, vc(150)), vc(0))
        t1 = b.lshr(b.add(b.lshr(b.shl(mag, vc(1)), rs), vc(1)), vc(1))  # <= 2**24
        f = b.bitcast(b.sitofp(t1, fv), v16)
        # result exponent e + blen - 24 (+1 if rounding carried) = F's exponent + delta
        delta = b.add(sext_w(b, b.sub(e, wc(150))), rs)
        e2 = b.add(b.lshr(f, vc(23)), delta)
        r = b.add(f, b.shl(delta, vc(23)))
        r = b.or_(sel(b, b.icmp_signed(">", e2, vc(254)), vc(0x7F800000), r), sign)
        zero = b.or_(b.icmp_signed("<", e2, vc(1)), b.icmp_unsigned("==", f, vc(0)))
        r = sel(b, zero, vc(0), r)
        u = narrow(b, b.lshr(r, vc(16)))  # sign, exponent, M[22:16]
        new_hi = b.or_(b.or_(b.and_(u, wc(0x8000)), b.shl(b.and_(u, wc(0x7F)), wc(8))),
                       b.and_(b.lshr(u, wc(7)), wc(0xFF)))
        return new_hi, narrow(b, r)

    def half_row_ir(b: ir.IRBuilder, groups: list[tuple[ir.Value, ir.Value]], ed: ir.Value,
                    md: ir.Value, sd: ir.Value, adj: ir.Value, exp8: bool) -> ir.Value:
        """A 16-bit Dst (BF16, mode 1, with ``exp8``; FP16, mode 2, without): the prior
        value's exponent ``ed``, sign ``sd`` (-1 when negative), <16 x i16>, and its
        1.M[22:0] ``md`` (0 for a zero exponent), <16 x i32> in unpack order, plus the two
        groups' (sum, exponent) <16 x i16> vectors -> the new Dst row as stored (BF16: sign,
        M[22:16], exponent; FP16: sign, M[22:13], exponent): accumulate_ir with fp32 off.
        There each term is aligned and rounded, then rounded to a multiple of 2**13 (half up
        as a signed value, Dst's half up on its magnitude), which in one step is
        ``W = (q + 8193) >> 14`` with ``q = 2T >> d`` (``T``: a group's signed sum << 13, or
        Dst's magnitude); the sum of the W, below 2**17, is exact as a float, whose bits plus
        2**15 (2**12) are the rounding half away from zero to 8 (11) bits that the
        normalisation is, with the exponent W's: the result's is that plus ``e - 137``
        (``e + blen(W) + 13 - 24``)."""
        ts, es, e = live_groups(b, groups, adj, ed)
        e2 = b.add(e, wc(2))
        w = vc(0)
        for tg, eg in zip(ts, es, strict=True):
            # 2T >> d = (sum << 16) >> (d + 2) (0 or -1 from d = 29 on, as 2T >> 30 is)
            d2 = zext_w(b, smin(b, b.sub(e2, eg), wc(31)))
            q = b.ashr(widen(b, wc(0), tg), d2)
            w = b.add(w, b.ashr(b.add(q, vc(8193)), vc(14)))
        d = zext_w(b, smin(b, b.sub(e, ed), wc(30)))
        wd = b.lshr(b.add(b.lshr(b.shl(md, vc(1)), d), vc(8193)), vc(14))
        sdw = sext_w(b, sd)
        w = b.add(w, b.sub(b.xor(wd, sdw), sdw))  # the Dst term, negated if sd
        fv = ir.VectorType(ir.FloatType(), 16)
        fb = b.add(b.bitcast(b.sitofp(w, fv), v16), vc(0x8000 if exp8 else 0x1000))
        r = narrow(b, b.lshr(fb, vc(16)))  # sign, exponent, M[22:16]
        ex = b.add(b.and_(b.lshr(r, wc(7)), wc(0xFF)), b.sub(e, wc(137)))
        sign = b.and_(r, wc(-0x8000))
        if exp8:
            out = b.or_(b.or_(sign, b.shl(b.and_(r, wc(0x7F)), wc(8))), ex)
            out = sel(b, b.icmp_signed(">", ex, wc(254)), b.or_(sign, wc(0xFF)), out)
        else:  # M[22:13] from bits 14..5 of fb >> 8; the largest value from exponent 32 on
            out = b.or_(b.or_(sign, b.and_(narrow(b, b.lshr(fb, vc(8))), wc(0x7FE0))), ex)
            out = sel(b, b.icmp_signed(">", ex, wc(31)), b.or_(sign, wc(0x7FFF)), out)
        zero = b.or_(b.icmp_signed("<", ex, wc(1)),
                     b.icmp_unsigned("==", b.and_(r, wc(0x7F80)), wc(0)))  # or w == 0
        return sel(b, zero, wc(0), out)

    @intrinsic
    def accumulate(typingctx, tot, top, frames, off, adj, fp32_acc, exp8):  # noqa: ANN001, ANN202
        def codegen(context, b, sig, args):  # noqa: ANN001, ANN202
            tot_p, top_p, fr_p = (data(context, b, sig.args[n], args[n]) for n in (0, 1, 2))
            groups = [(load16(b, tot_p, ir.Constant(i32, 16 * g), signed=True),
                       load16(b, top_p, ir.Constant(i32, 16 * g), signed=True))
                      for g in range(2)]
            f = load16(b, fr_p, args[3])
            if isinstance(args[5], ir.Constant) and args[5].constant == 1:
                # fp32_acc given as a constant: the special case of mvmul_row (exp8 plays no
                # part), on Dst rows made from the frames (a bijection) and back
                hi = b.or_(b.or_(b.and_(b.lshr(f, vc(16)), vc(0x8000)),
                                 b.and_(b.lshr(f, vc(8)), vc(0x7F00))),
                           b.and_(b.lshr(f, vc(23)), vc(0xFF)))
                hi, lo = fp32_row_ir(b, [(b.trunc(t, w16), b.trunc(e, w16)) for t, e in groups],
                                     b.trunc(hi, w16), b.trunc(f, w16),
                                     splat_w(b, b.trunc(int32(b, args[4]), i16)))
                hi, lo = b.zext(hi, v16), b.zext(lo, v16)
                r = b.or_(b.or_(b.shl(b.and_(hi, vc(0x8000)), vc(16)),
                                b.shl(b.and_(hi, vc(0xFF)), vc(23))),
                          b.or_(b.shl(b.and_(hi, vc(0x7F00)), vc(8)), lo))
            elif [a.constant if isinstance(a, ir.Constant) else None for a in args[5:7]
                  ] in ([0, 1], [0, 0]):  # a 16-bit Dst's flags as constants: mvmul_row's
                e8 = args[6].constant == 1  # BF16 and FP16 cases
                ed = b.and_(b.lshr(f, vc(23)), vc(0xFF))
                md = sel(b, b.icmp_unsigned("==", ed, vc(0)), vc(0),
                         b.or_(b.and_(f, vc(0x7FFFFF)), vc(0x800000)))
                hi = half_row_ir(b, [(b.trunc(t, w16), b.trunc(e, w16)) for t, e in groups],
                                 b.trunc(ed, w16),
                                 widen(b, b.trunc(md, w16), b.trunc(b.lshr(md, vc(16)), w16)),
                                 b.trunc(b.ashr(f, vc(31)), w16),
                                 splat_w(b, b.trunc(int32(b, args[4]), i16)), e8)
                hi = b.zext(hi, v16)
                if e8:
                    r = b.or_(b.or_(b.shl(b.and_(hi, vc(0x8000)), vc(16)),
                                    b.shl(b.and_(hi, vc(0xFF)), vc(23))),
                              b.shl(b.and_(hi, vc(0x7F00)), vc(8)))
                else:
                    r = b.or_(b.or_(b.shl(b.and_(hi, vc(0x8000)), vc(16)),
                                    b.shl(b.and_(hi, vc(0x1F)), vc(23))),
                              b.shl(b.and_(hi, vc(0x7FE0)), vc(8)))
            else:
                r = accumulate_ir(b, groups, f, splat(b, args[4]), flag(b, args[5]),
                                  flag(b, args[6]))
            store16(b, r, fr_p, args[3])
            return context.get_dummy_value()
        return types.none(tot, top, frames, off, adj, fp32_acc, exp8), codegen

    @intrinsic
    def read_frames(typingctx, bits, valid, p, mode, frames, off):  # noqa: ANN001, ANN202
        def codegen(context, b, sig, args):  # noqa: ANN001, ANN202
            f = read_ir(b, data(context, b, sig.args[0], args[0]),
                        data(context, b, sig.args[1], args[1]), int32(b, args[2]),
                        int32(b, args[3]))
            store16(b, f, data(context, b, sig.args[4], args[4]), args[5])
            return context.get_dummy_value()
        return types.none(bits, valid, p, mode, frames, off), codegen

    @intrinsic
    def write_frames(typingctx, frames, off, mode, bits, p):  # noqa: ANN001, ANN202
        def codegen(context, b, sig, args):  # noqa: ANN001, ANN202
            f = load16(b, data(context, b, sig.args[0], args[0]), args[1])
            write_ir(b, f, data(context, b, sig.args[3], args[3]), int32(b, args[4]),
                     int32(b, args[2]))
            return context.get_dummy_value()
        return types.none(frames, off, mode, bits, p), codegen

    @intrinsic
    def mvmul_row(typingctx, ws, a_off, b_off, zx, adj, bits, valid, p, mode, fp32_acc, exp8):  # noqa: ANN001, ANN202, E501
        def codegen(context, b, sig, args):  # noqa: ANN001, ANN202
            ws_p = data(context, b, sig.args[0], args[0])
            ma_p, mb_p = at(b, ws_p, args[1]), at(b, ws_p, args[2])
            ea_p, eb_p, ab_p = at(b, ma_p, 256), at(b, mb_p, _WS_EB), at(b, mb_p, 2 * _WS_EB)
            zx, adj, bits, valid, p, mode, fp32, e8 = args[3:]
            groups = [group_ir(b, ma_p, ea_p, mb_p, eb_p, ab_p, ir.Constant(i64, 0),
                               ir.Constant(i64, g), zx) for g in range(2)]
            bits_p = data(context, b, sig.args[5], bits)
            valid_p = data(context, b, sig.args[6], valid)
            p, mode = int32(b, p), int32(b, mode)
            consts = [a.constant if isinstance(a, ir.Constant) else None for a in args[8:11]]
            if consts[:2] == [0, 1]:  # FP32 Dst given as a constant (exp8 plays no part then)
                ok = b.icmp_unsigned("!=", b.load(elem_ptr(b, valid_p, p)), ir.Constant(i8, 0))
                hi_at = b.mul(p, ir.Constant(i32, 16))
                lo_at = b.mul(b.add(p, ir.Constant(i32, 8)), ir.Constant(i32, 16))
                hi = sel(b, ok, load_w(b, bits_p, hi_at), wc(0))
                lo = sel(b, ok, load_w(b, bits_p, lo_at), wc(0))
                adj16 = splat_w(b, b.trunc(int32(b, adj), i16))
                hi, lo = fp32_row_ir(b, groups, hi, lo, adj16)
                store_w(b, hi, bits_p, hi_at)
                store_w(b, lo, bits_p, lo_at)
            elif consts in ([1, 0, 1], [2, 0, 0]):  # BF16 / FP16 Dst given as constants
                e8 = consts[0] == 1
                ok = b.icmp_unsigned("!=", b.load(elem_ptr(b, valid_p, p)), ir.Constant(i8, 0))
                hi_at = b.mul(p, ir.Constant(i32, 16))
                hi = sel(b, ok, load_w(b, bits_p, hi_at), wc(0))
                adj16 = splat_w(b, b.trunc(int32(b, adj), i16))
                if e8:  # sign, M[22:16], exponent
                    ed = b.and_(hi, wc(0xFF))
                    m8 = sel(b, b.icmp_unsigned("==", ed, wc(0)), wc(0),
                             b.or_(b.and_(b.lshr(hi, wc(8)), wc(0x7F)), wc(0x80)))
                    md = widen(b, wc(0), m8)
                else:  # sign, M[22:13], exponent (5 bits)
                    ed = b.and_(hi, wc(0x1F))
                    m11 = sel(b, b.icmp_unsigned("==", ed, wc(0)), wc(0),
                              b.or_(b.and_(b.lshr(hi, wc(5)), wc(0x3FF)), wc(0x400)))
                    md = b.shl(zext_w(b, m11), vc(13))
                hi = half_row_ir(b, groups, ed, md, b.ashr(hi, wc(15)), adj16, e8)
                store_w(b, hi, bits_p, hi_at)
            else:
                dst = read_ir(b, bits_p, valid_p, p, mode)
                r = accumulate_ir(b, [(b.sext(t, v16), b.sext(e, v16)) for t, e in groups],
                                  dst, splat(b, adj), flag(b, fp32), flag(b, e8))
                write_ir(b, r, bits_p, p, mode)
            b.store(ir.Constant(i8, 1), elem_ptr(b, valid_p, p))
            return context.get_dummy_value()
        return types.none(ws, a_off, b_off, zx, adj, bits, valid, p, mode, fp32_acc, exp8
                          ), codegen

    return {"_v_decode": decode, "_v_group": group, "_v_accumulate": accumulate,
            "_v_read_frames": read_frames, "_v_write_frames": write_frames,
            "_v_mvmul_row": mvmul_row}


# --------------------------------------------------------------------------------------------
# Arguments the callers pass, and loading
# --------------------------------------------------------------------------------------------

#: Style codes of :func:`_k_movd2x` and :func:`_k_gmpool`, and the ELW* operation codes.
MOV_STYLES = {"bf16": 0, "fp16": 1, "tf32": 2}
GM_STYLES = {"bf16": 0, "fp16": 1, "tf32": 2, "int8": 3, "int32": 3}
ELW_OPS = {"add": 0, "sub": 1, "mul": 2}

#: Work space of the compiled kernels (they run one at a time: the GIL is held): ``SCRATCH``
#: for ELW*, ``WS`` (int16, laid out as ``_WS_*`` says: the decoded operands, kept for a
#: whole run) and ``WRAP`` (SrcA rows that wrap) for MVMUL / GAPOOL.
SCRATCH = np.zeros((9, 16, 16), dtype=np.int64)
WS = np.zeros((_WS_SIZE // 256, 16, 16), dtype=np.int16)
WRAP = np.zeros((16, 16), dtype=np.uint32)

#: Every function compiled, callees before callers.
_COMPILED = ("_k_accumulate", "_k_read_frame", "_k_write_frame", "_k_decode_a",
             "_k_mvmul_rows", "_k_src_rows", "_k_mvmul", "_k_mvmul_run", "_k_mvmul_batch",
             "_k_logical", "_k_elw",
             "_k_gm_key", "_k_gmpool", "_k_movd2x", "_k_src2dst_row", "_k_src2dst",
             "_k_src2dst_planned", "_k_copy_rows", "_k_cells16")


#: Compiled into their callers (numba's ``inline="always"``): the call of the MVMUL rows of
#: each instruction of a run cost ~30 ns (their many arguments go through the stack).
_INLINE = ("_k_mvmul_rows", "_k_src2dst_row")


class Kernels(NamedTuple):
    """The compiled instruction kernels (see the table in the module docstring)."""

    mvmul: object
    elw: object
    mvmul_batch: object
    gmpool: object
    movd2x: object
    src2dst: object
    copy_rows: object
    mvmul_run: object
    src2dst_planned: object
    cells16: object


_LOADED: dict[str, Kernels | None] = {}
#: The plain-Python ``_v_*`` functions, kept by :func:`load` when it swaps in the intrinsics
#: (the tests compare the two).
TWINS: dict[str, object] = {}


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
    intrinsics = _vector_intrinsics()
    TWINS.update({name: g[name] for name in intrinsics})
    g.update(intrinsics)
    for name in _COMPILED:
        inline = "always" if name in _INLINE else "never"
        g[name] = numba.njit(cache=True, inline=inline)(g[name])
    kernels = Kernels(g["_k_mvmul"], g["_k_elw"], g["_k_mvmul_batch"], g["_k_gmpool"],
                      g["_k_movd2x"], g["_k_src2dst"], g["_k_copy_rows"], g["_k_mvmul_run"],
                      g["_k_src2dst_planned"], g["_k_cells16"])
    _LOADED["kernels"] = kernels
    return kernels


__all__ = ["ELW_OPS", "GM_STYLES", "SRC2DST_HEAD", "WRAP", "WS", "Kernels", "MOV_STYLES",
           "SCRATCH", "is_loaded", "load"]
