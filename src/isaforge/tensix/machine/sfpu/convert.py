"""The Vector Unit's data conversions, on whole vectors of uint32 bit patterns.

* :func:`load_convert` / :func:`store_convert`: SFPLOAD / SFPSTORE's ``Mod0`` conversions
  between Dst cells and LReg words (ISA documentation, Blackhole SFPLOAD/SFPSTORE);
* :func:`loadi_value`: SFPLOADI's immediate widening;
* :func:`cast_sm32_to_fp32`, :func:`int32_to_sm32`, :func:`int32_abs`: SFPCAST;
* :func:`round_float`, :func:`float_to_int`, :func:`int_to_int`: SFPSTOCHRND;
* :func:`lut8_to_fp32`, :func:`lut16_to_fp32`: SFPLUT / SFPLUTFP32's table entries;
* :func:`approx_recip`, :func:`approx_exp`: SFPARECIP. The documentation gives each as a
  lookup table; the tables are computed here from what they hold (:func:`_recip_table`,
  :func:`_exp_table`), and ``tests/tensix/test_sfpu_units.py`` checks the figures the
  documentation states about them;
* :func:`sign_mag_key`: the total order of SFPSWAP / SFPLE / SFPGT.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np

from .. import formats as F
from ..state import NotImplementedInstruction

U32 = np.uint32

# SFPLOAD / SFPSTORE Mod0
(SRCB, FP16, BF16, FP32, INT32, INT8, UINT16, HI16, INT16, LO16, INT32_ALL, ZERO, INT32_SM,
 INT8_COMP, LO16_ONLY, HI16_ONLY) = range(16)

#: SFPLOAD reads Dst32b in these modes
LOAD32 = (FP32, INT32, INT32_ALL, INT32_SM)
#: SFPSTORE writes Dst32b in these modes
STORE32 = (FP32, INT32, INT32_ALL, INT32_SM, LO16, HI16)


def load_convert(mode: int, cells: np.ndarray, old: np.ndarray) -> np.ndarray:
    """Dst cells (uint32) -> LReg words for SFPLOAD mode ``mode`` (``old``: the LReg's
    current words, for the modes that keep half of them)."""
    c = cells.astype(U32)
    if mode == FP16:
        sign, man, exp = c >> 15 & 1, c >> 5 & 0x3FF, c & 0x1F
        exp = np.where(exp != 0, exp + 112, 0)
        return (sign << 31) | (exp << 23) | (man << 13)
    if mode == BF16:
        return F.dst16_to_bf16(c).astype(U32) << 16
    if mode in LOAD32:
        return F.dst32_to_fp32(c).astype(U32)
    if mode == INT8:
        return (c >> 15 << 31) | (c >> 5 & 0xFF)
    if mode == INT8_COMP:  # Blackhole: deprecated, sign + 10-bit magnitude, no conversion
        return (c >> 15 << 31) | (c >> 5 & 0x3FF)
    if mode == LO16_ONLY:
        return (old & U32(0xFFFF0000)) | c
    if mode == HI16_ONLY:
        return (c << 16) | (old & U32(0xFFFF))
    if mode == INT16:
        return (c >> 15 << 31) | (c & 0x7FFF)
    if mode in (UINT16, LO16):
        return c & 0xFFFF
    if mode == HI16:
        return (c & 0xFFFF) << 16
    if mode == ZERO:
        return np.zeros_like(c)
    raise NotImplementedInstruction(f"not implemented: SFPLOAD mode {mode}")


#: SFPLOAD modes whose LReg word is a function of the 16-bit Dst cell alone
LOAD_TABLE_MODES = frozenset((FP16, BF16, INT8, INT8_COMP, INT16, UINT16, LO16, HI16))


@cache
def load_table(mode: int) -> np.ndarray:
    """:func:`load_convert` of every 16-bit cell for a mode of :data:`LOAD_TABLE_MODES`:
    ``load_table(mode)[cells]`` is ``load_convert(mode, cells, old)`` (computed by it)."""
    cells = np.arange(1 << 16, dtype=U32)
    table = load_convert(mode, cells, np.zeros_like(cells)).astype(U32)
    table.flags.writeable = False
    return table


@cache
def store_table_bf16() -> np.ndarray:
    """:func:`store_convert` in mode BF16 depends on the word's high 16 bits alone (the
    flush tests exponent bits): ``store_table_bf16()[words >> 16]`` is
    ``store_convert(BF16, words)`` (computed by it)."""
    table = store_convert(BF16, np.arange(1 << 16, dtype=U32) << 16).astype(U32)
    table.flags.writeable = False
    return table


def store_convert(mode: int, datum: np.ndarray) -> np.ndarray:
    """LReg words -> Dst cells (uint32; 16-bit modes give values < 2**16)."""
    x = datum.astype(U32)
    if mode == FP16:
        sign = x >> 31
        exp = (x >> 23 & 0xFF).astype(np.int64) - 112
        man = x & 0x7FFFFF
        under, over = exp <= 0, exp > 31
        exp = np.where(under, 0, np.where(over, 31, exp)).astype(U32)
        man = np.where(under, 0, np.where(over, 0x7FFFFF, man)).astype(U32) >> 13
        ieee = (sign << 15) | (exp << 10) | man
        return F.fp16_to_dst16(ieee).astype(U32)
    if mode == BF16:
        flushed = np.where(x & 0x7F800000, x, x & 0x80000000).astype(U32)
        return F.bf16_to_dst16(flushed >> 16).astype(U32)
    if mode == FP32:
        flushed = np.where(x & 0x7F800000, x, x & 0x80000000).astype(U32)
        return F.fp32_to_dst32(flushed).astype(U32)
    if mode in (INT32, INT32_ALL, INT32_SM):
        return F.fp32_to_dst32(x).astype(U32)
    if mode in (INT8, INT8_COMP):
        return ((x >> 31 << 15) | (16 << 10) | (x & 0x3FF)).astype(U32)
    if mode in (LO16_ONLY, UINT16):
        return x & 0xFFFF
    if mode == HI16_ONLY:
        return x >> 16
    if mode == INT16:
        return (x >> 31 << 15) | (x & 0x7FFF)
    if mode == LO16:
        return (x << 16) | (x >> 16)
    if mode == HI16:
        return x
    if mode == ZERO:
        return np.zeros_like(x)
    raise NotImplementedInstruction(f"not implemented: SFPSTORE mode {mode}")


# SFPLOADI Mod0
LOADI_FLOATB, LOADI_FLOATA, LOADI_USHORT, LOADI_SHORT, LOADI_UPPER, LOADI_LOWER = 0, 1, 2, 4, 8, 10


def loadi_value(mod0: int, imm: int, old: np.ndarray) -> np.ndarray | None:
    """SFPLOADI: the new words of an LReg holding ``old`` (None: ``mod0`` is no mode)."""
    if mod0 == LOADI_FLOATB:
        value = imm << 16
    elif mod0 == LOADI_FLOATA:  # FP16 widened by rebiasing, no special cases
        value = (imm >> 15) << 31 | (((imm >> 10) & 0x1F) + 112) << 23 | (imm & 0x3FF) << 13
    elif mod0 == LOADI_USHORT:
        value = imm
    elif mod0 == LOADI_SHORT:
        value = (imm - ((imm & 0x8000) << 1)) & 0xFFFFFFFF
    elif mod0 == LOADI_UPPER:
        return (old & U32(0xFFFF)) | U32(imm << 16)
    elif mod0 == LOADI_LOWER:
        return (old & U32(0xFFFF0000)) | U32(imm)
    else:
        return None
    return np.full(old.shape, value, dtype=U32)


# ---- SFPCAST -------------------------------------------------------------------------------


def _bitlen(v: np.ndarray) -> np.ndarray:
    """Bit length of each element (0 <= v < 2**32)."""
    return np.frexp(v.astype(np.float64))[1].astype(np.int64)


def clz32(v: np.ndarray) -> np.ndarray:
    """Leading zeros of each uint32 (32 for 0)."""
    return 32 - _bitlen(v)


def cast_sm32_to_fp32(c: np.ndarray, prng: np.ndarray | None) -> np.ndarray:
    """Sign-magnitude integer -> FP32, to nearest even, or stochastically with ``prng``
    (the PRNG words of the lanes)."""
    c = c.astype(np.int64)
    sign = c & 0x80000000
    mag = c & 0x7FFFFFFF
    lz = np.where(mag != 0, clz32(mag), 157)
    norm = (mag << (lz & 31)) & 0xFFFFFFFF
    d = sign + ((157 - lz) << 23) + (norm >> 8)
    if prng is None:
        up = ((norm & 0x80) != 0) & ((norm & 0x17F) != 0)
    else:
        up = (norm & 0xFE) > ((prng.astype(np.int64) >> 9) & 0xFE)
    return ((d + up) & 0xFFFFFFFF).astype(U32)


def int32_to_sm32(c: np.ndarray) -> np.ndarray:
    """Two's complement -> sign-magnitude (-2**31 becomes -0) and back (-0 becomes -2**31):
    ``sign | (sign ? -c : c)``."""
    c = c.astype(U32)
    neg = (c & U32(0x80000000)) != 0
    return np.where(neg, U32(0x80000000) | (U32(0) - c), c).astype(U32)


def int32_abs(c: np.ndarray) -> np.ndarray:
    """Two's complement absolute value (-2**31 stays)."""
    c = c.astype(U32)
    return np.where(c >= U32(0x80000000), U32(0) - c, c).astype(U32)


# ---- SFPSTOCHRND ---------------------------------------------------------------------------

RND_NEAREST, RND_STOCH, RND_ZERO = 0, 1, 2


def rounding_bits(mode: int, prng: np.ndarray) -> np.ndarray:
    """The 23 comparison bits of a rounding mode (``prng``: the lanes' PRNG words)."""
    if mode == RND_NEAREST:
        return np.full(prng.shape, 0x400000, dtype=np.int64)
    if mode == RND_ZERO:
        return np.full(prng.shape, 0x7FFFFF, dtype=np.int64)
    return prng.astype(np.int64) & 0x7FFFFF


def round_float(c: np.ndarray, keep_fp16a: bool, bits: np.ndarray) -> np.ndarray:
    """FP32 -> FP32 with 10 (``keep_fp16a``) or 7 mantissa bits: zero/denormal -> +0,
    Inf/NaN -> signed Inf, else rounded up when the discarded bits reach ``bits``."""
    c = c.astype(np.int64)
    exp = c >> 23 & 0xFF
    low, step, shift = (0x1FFF, 0x2000, 10) if keep_fp16a else (0xFFFF, 0x10000, 7)
    disc = c & low
    r = c - disc + np.where(disc >= (bits >> shift), step, 0)
    r = np.where(exp == 255, c & 0xFF800000, r)
    r = np.where(exp == 0, 0, r)
    return (r & 0xFFFFFFFF).astype(U32)


def float_to_int(c: np.ndarray, keep_sign: bool, max_mag: int, bits: np.ndarray) -> np.ndarray:
    """FP32 -> sign-magnitude integer of at most ``max_mag``, rounding up when the fraction
    reaches ``bits`` (|x| < 0.5 -> 0; |x| >= 2**16 and NaN -> the maximum)."""
    c = c.astype(np.int64)
    sign = (c & 0x80000000) if keep_sign else np.zeros_like(c)
    exp = (c >> 23 & 0xFF) - 127
    mag = 0x800000 | (c & 0x7FFFFF)
    mag = np.where(exp >= 0, mag << np.clip(exp, 0, 15), mag >> np.clip(-exp, 0, 1))
    mag = (mag >> 23) + ((mag & 0x7FFFFF) >= bits)
    mag = np.minimum(mag, max_mag)
    mag = np.where(exp >= 16, max_mag, mag)
    mag = np.where(exp < -1, 0, mag)
    sign = np.where((mag == 0) | (exp < -1), 0, sign)
    return (sign + mag).astype(U32)


def int_to_int(c: np.ndarray, shift: np.ndarray | int, signed: bool,
               bits: np.ndarray) -> np.ndarray:
    """Sign-magnitude integer shifted right by ``shift`` (0..31), rounded up when the
    discarded fraction reaches ``bits``, clamped to 127 (``signed``) or 255 (unsigned)."""
    c = c.astype(np.int64)
    sign = c & 0x80000000
    mag = (c & 0x7FFFFFFF) << 23
    mag = mag >> shift
    mag = (mag >> 23) + ((mag & 0x7FFFFF) >= bits)
    if signed:
        mag = np.minimum(mag, 127)
        sign = np.where(mag == 0, 0, sign)
    else:
        mag = np.minimum(mag, 255)
        sign = np.zeros_like(sign)
    return (sign + mag).astype(U32)


# ---- SFPLUT / SFPLUTFP32 -------------------------------------------------------------------


def lut8_to_fp32(x: np.ndarray) -> np.ndarray:
    """An 8-bit table entry (sign, 3-bit negative exponent, 4-bit mantissa; 0xFF is 0)."""
    x = x.astype(U32) & 0xFF
    v = (x >> 7 << 31) | ((127 - (x >> 4 & 7)) << 23) | ((x & 0xF) << 19)
    return np.where(x == 0xFF, 0, v).astype(U32)


def lut16_to_fp32(x: np.ndarray) -> np.ndarray:
    """A 16-bit table entry: FP16 rebiased, with exponent 31 meaning zero (and exponent 0 an
    ordinary exponent)."""
    x = x.astype(U32) & 0xFFFF
    exp = x >> 10 & 0x1F
    return ((x >> 15 << 31) | (np.where(exp == 31, 0, exp + 112) << 23)
            | ((x & 0x3FF) << 13)).astype(U32)


# ---- SFPARECIP -----------------------------------------------------------------------------


def _recip_table() -> np.ndarray:
    """ApproxRecip's 128 mantissas: 1/m of each mantissa bucket's middle, m = 1 + (i+.5)/128,
    as the 7 mantissa bits of 2/m (in [1, 2)), rounded to nearest."""
    out = []
    for i in range(128):
        v = Fraction(2 * 256, 256 + 2 * i + 1) - 1  # 2/m - 1, in (0, 1)
        out.append(round(v * 128))
    return np.array(out, dtype=np.int64)


def _exp_table() -> np.ndarray:
    """ApproxExp's 896 entries, for inputs whose high 16 bits h run 0x3C80..0x3FFF: e**x of
    the bucket's lowest x (h << 16), truncated to BF16, less 0x3F80 (h < 0x3F32, results in
    [1, 2)) or 0x4000 (results of 2 and more: bit 7 then carries into the exponent)."""
    out = []
    for h in range(0x3C80, 0x4000):
        x = float(np.uint32(h << 16).view(np.float32))
        m, e = math.frexp(math.exp(x))
        bf16 = ((e - 1 + 127) << 7) | math.floor((2 * m - 1) * 128)
        out.append(bf16 - (0x3F80 if h < 0x3F32 else 0x4000))
    return np.array(out, dtype=np.int64)


RECIP_LUT = _recip_table()
EXP_LUT = _exp_table()


def approx_recip(x: np.ndarray) -> np.ndarray:
    """ApproxRecip of non-negative FP32 bits: Inf below 2**-126, 0 from 2**126."""
    x = x.astype(np.int64)
    mid = ((253 - (x >> 23)) << 23) | (RECIP_LUT[(x >> 16) & 0x7F] << 16)
    return np.where(x < 0x00800000, 0x7F800000,
                    np.where(x < 0x7E800000, mid, 0)).astype(U32)


def approx_exp(x: np.ndarray) -> np.ndarray:
    """ApproxExp of non-negative FP32 bits (useful below 2)."""
    x = x.astype(np.int64)
    low16 = x & 0xFFFF
    idx = np.clip((x >> 16) - 0x3C80, 0, len(EXP_LUT) - 1)
    entry = EXP_LUT[idx] << 16
    r = np.where(x < 0x3F320000, 0x3F800000, 0x40000000) + entry + low16
    r = np.where(x < 0x3C800000, 0x3F810000 | low16, r)
    r = np.where(x < 0x00800000, 0x3F800000, r)
    r = np.where(x >= 0x40000000, 0x40800000 | low16, r)
    return r.astype(U32)


# ---- comparisons ---------------------------------------------------------------------------


def sign_mag_key(v: np.ndarray) -> np.ndarray:
    """A signed key whose order is the sign-magnitude order of ``v`` (-0 < +0; as FP32:
    -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN)."""
    v = v.astype(np.int64)
    return np.where(v & 0x80000000, -1 - (v & 0x7FFFFFFF), v)


__all__ = ["LOAD32", "STORE32", "approx_exp", "approx_recip", "cast_sm32_to_fp32", "clz32",
           "float_to_int", "int32_abs", "int32_to_sm32", "int_to_int", "load_convert",
           "loadi_value", "lut16_to_fp32", "lut8_to_fp32", "round_float", "rounding_bits",
           "sign_mag_key", "store_convert"]
