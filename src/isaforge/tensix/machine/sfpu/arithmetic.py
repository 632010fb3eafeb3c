"""Vector Unit arithmetic, lanewise on all 32 lanes (ISA documentation, Blackhole, one page
per instruction; the MAD family through :func:`.fma.fma_bh`):

* floating point: SFPMAD, SFPADD, SFPMUL (``VD = ±(VA * VB) ± VC``; Mod1 bits: 1 negates
  VB, 2 negates VC, 4 takes VA from ``LReg[7] & 15``, 8 writes the register ``LReg[7] & 15``
  names), SFPMULI, SFPADDI (BF16 immediate), SFPLUT, SFPLUTFP32 (piecewise-linear tables
  indexed by ``|LReg[3]|``), SFPARECIP (approximate reciprocal / exponential);
* integers: SFPMUL24, SFPIADD, SFPSHFT, SFPAND, SFPOR, SFPXOR, SFPNOT, SFPABS, SFPLZ;
* FP32 fields: SFPEXEXP, SFPEXMAN, SFPSETEXP, SFPSETMAN, SFPSETSGN, SFPDIVP2;
* conversions: SFPCAST, SFP_STOCH_RND (the PRNG modes use the documented PRNG).
"""

from __future__ import annotations

import numpy as np

from . import convert as C
from .base import SIGN, SfpuBase
from .fma import fma
from .lregs import N_WRITABLE
from .ops import Op

ONE = np.uint32(0x3F800000)
ZERO32 = np.zeros(32, dtype=np.uint32)

# SFPMAD family Mod1 bits (SFPMUL24 shares 4 and 8)
NEGATE_VB, NEGATE_VC, INDIRECT_VA, INDIRECT_VD = 1, 2, 4, 8
# SFPLUT Mod0 / SFPLUTFP32 Mod1
LUT_SGN_RETAIN, LUT_INDIRECT_VD = 4, 8


def _i32(v: np.ndarray) -> np.ndarray:
    return v.view(np.int32).astype(np.int64)


def _u32(v: np.ndarray) -> np.ndarray:
    return (np.asarray(v) & 0xFFFFFFFF).astype(np.uint32)


def _imm12(op: Op) -> int:
    """Imm12, sign-extended."""
    return op.imm12 - ((op.imm12 & 0x800) << 1)


def _mul24_shift_add(p: np.ndarray, z: np.ndarray) -> np.ndarray:
    """SFPMUL24's final step with ``VC``'s value ``z`` (identity when ``z`` has exponent 0)."""
    p = p.astype(np.int64)
    z = z.astype(np.int64)
    ze = z >> 23 & 0xFF
    re = np.maximum(129, ze)
    s = (re - ze) & 31
    zm = (1 << 23) + (z & 0x7FFFFF)
    grs = zm << 3
    pm = p >> ((re - 129) & 31)
    zs = grs >> s
    added = pm + zs + (((((zs << s) & 0xFFFFFFFF) ^ grs) > 0xFFFF) << 16)
    out = np.where(zs != 0, added & 0x7FFFFF, pm)
    return np.where(ze != 0, out, p).astype(np.uint32)


class ArithmeticMixin(SfpuBase):
    """The Vector Unit's arithmetic instructions (see the module documentation)."""

    # ---- floating point ------------------------------------------------------------------

    def _mad(self, op: Op, a: np.ndarray) -> None:
        b = self.lreg[op.b]
        c = self.lreg[op.c]
        if op.mod & NEGATE_VB:
            b = b ^ SIGN
        if op.mod & NEGATE_VC:
            c = c ^ SIGN
        self.write_indirect(op, bool(op.mod & INDIRECT_VD), fma(a, b, c), self.enabled())

    def x_sfpmad(self, t: int, op: Op) -> None:
        self._mad(op, self.read_indirect(op.va, bool(op.mod & INDIRECT_VA)))

    x_sfpadd = x_sfpmad
    x_sfpmul = x_sfpmad

    def x_sfpmuli(self, t: int, op: Op) -> None:
        c = self.lreg[op.c]
        if op.mod & NEGATE_VC:
            c = c ^ SIGN
        d = fma(np.uint32(op.imm16 << 16), c, ZERO32)
        self.write_indirect(op, bool(op.mod & INDIRECT_VD), d, self.enabled())

    def x_sfpaddi(self, t: int, op: Op) -> None:
        c = self.lreg[op.c]
        if op.mod & NEGATE_VC:
            c = c ^ SIGN
        d = fma(np.uint32(op.imm16 << 16), ONE, c)
        self.write_indirect(op, bool(op.mod & INDIRECT_VD), d, self.enabled())

    def _lut_result(self, op: Op, a: np.ndarray, b: np.ndarray, c: np.ndarray, l3: np.ndarray,
                    sgn_retain: bool, indirect: bool) -> None:
        d = fma(a, b, c)
        if sgn_retain:
            d = (d & np.uint32(0x7FFFFFFF)) | (l3 & SIGN)
        self.write_indirect(op, indirect, d, self.enabled())

    def x_sfplut(self, t: int, op: Op) -> None:
        l3 = self.lreg[3]
        b = l3 & np.uint32(0x7FFFFFFF)
        coeffs = np.where(b < 0x3F800000, self.lreg[0],
                          np.where(b < 0x40000000, self.lreg[1], self.lreg[2]))
        a = C.lut8_to_fp32(coeffs >> 8)
        c = C.lut8_to_fp32(coeffs)
        self._lut_result(op, a, b, c, l3, bool(op.mod & LUT_SGN_RETAIN),
                         bool(op.mod & LUT_INDIRECT_VD))

    def x_sfplutfp32(self, t: int, op: Op) -> None:
        l3 = self.lreg[3]
        b = l3 & np.uint32(0x7FFFFFFF)
        i = np.where(b < 0x3F800000, 0, np.where(b < 0x40000000, 1, 2))
        lanes = np.arange(32)
        lo, hi = self.lreg[i, lanes], self.lreg[4 + i, lanes]
        mod = op.mod
        if mod & 2:
            if (mod & 10) == 10:  # FP16 3-entry table: both halves of LReg[i]
                a, c = C.lut16_to_fp32(lo >> 16), C.lut16_to_fp32(lo)
            else:  # FP16 6-entry table: a half of LReg[i] and of LReg[4 + i]
                cut = 0x40800000 if (mod & 3) == 3 else 0x40400000
                upper = ((b >= 0x3F000000) & (b < 0x3F800000)) | (
                    (b >= 0x3FC00000) & (b < 0x40000000)) | (b >= cut)
                j = np.where(upper, 16, 0).astype(np.uint32)
                a, c = C.lut16_to_fp32(lo >> j), C.lut16_to_fp32(hi >> j)
        else:  # FP32 3-entry table
            a, c = lo, hi
        self._lut_result(op, a, b, c, l3, bool(mod & LUT_SGN_RETAIN),
                         bool(mod & LUT_INDIRECT_VD))

    def x_sfparecip(self, t: int, op: Op) -> None:
        x = self.lreg[op.c]
        sign = x & SIGN
        mag = x & np.uint32(0x7FFFFFFF)
        if op.mod == 0:
            d = sign | C.approx_recip(mag)
        elif op.mod == 1:  # conditional: the reciprocal (without its sign) where VB < 0
            d = np.where(_i32(self.lreg[op.b]) < 0, C.approx_recip(mag), x)
        else:
            d = sign | C.approx_exp(mag)
        self.write(op.vd, _u32(d), self.enabled())

    # ---- integers ------------------------------------------------------------------------

    def x_sfpmul24(self, t: int, op: Op) -> None:
        a = self.read_indirect(op.va, bool(op.mod & INDIRECT_VA)).astype(np.int64)
        b = self.lreg[op.b].astype(np.int64)
        if op.mod & 1:  # SFPMUL24_MOD1_UPPER
            p = ((a & 0x7FFFFF) * (b & 0x7FFFFF)) >> 23
        else:
            p = ((a & 0x7FFFFF) * (b & 0x7FFFFF)) & 0x7FFFFF  # (a * b) & 0x7fffff
        d = _mul24_shift_add(p, self.lreg[op.c])
        self.write_indirect(op, bool(op.mod & INDIRECT_VD), d, self.enabled())

    def x_sfpiadd(self, t: int, op: Op) -> None:
        if op.vd >= N_WRITABLE and op.vd != 16:
            return
        lanes = self.enabled()
        c = self.lreg[op.c].astype(np.int64)
        if op.mod & 1:
            r = c + _imm12(op)
        elif op.mod & 2:
            r = c - self.lreg[op.b].astype(np.int64)
        else:
            r = c + self.lreg[op.b].astype(np.int64)
        r = _u32(r)
        self.write(op.vd, r, lanes)
        if op.vd < N_WRITABLE:
            flags = self.lanes.flags if op.mod & 4 else (r >= SIGN)
            if op.mod & 8:
                flags = ~flags
            self.set_flags(flags, lanes)

    def x_sfpshft(self, t: int, op: Op) -> None:
        x = self.lreg[op.b]
        amount = _i32(self.lreg[op.c])
        if op.mod & 1:
            if op.mod & 4:  # SFPSHFT_MOD1_ARG_IMM_USE_VC
                x = self.lreg[op.c]
            amount = np.full(32, _imm12(op), dtype=np.int64)
        x = x.astype(np.int64)
        left = (x << (amount & 31)) & 0xFFFFFFFF
        sh = -amount & 31
        right = (_i32(_u32(x)) >> sh) if op.mod & 2 else (x >> sh)
        self.write(op.vd, _u32(np.where(amount >= 0, left, right)), self.enabled())

    def x_sfpand(self, t: int, op: Op) -> None:
        self.write(op.vd, self.lreg[op.b] & self.lreg[op.c], self.enabled())

    def x_sfpor(self, t: int, op: Op) -> None:
        self.write(op.vd, self.lreg[op.b] | self.lreg[op.c], self.enabled())

    def x_sfpxor(self, t: int, op: Op) -> None:
        self.write(op.vd, self.lreg[op.b] ^ self.lreg[op.c], self.enabled())

    def x_sfpnot(self, t: int, op: Op) -> None:
        self.write(op.vd, ~self.lreg[op.c], self.enabled())

    def x_sfpabs(self, t: int, op: Op) -> None:
        x = self.lreg[op.c]
        if op.mod & 1:  # float: clear the sign, except of a negative NaN
            d = np.where(x > np.uint32(0xFF800000), x, x & np.uint32(0x7FFFFFFF))
        else:
            d = C.int32_abs(x)
        self.write(op.vd, _u32(d), self.enabled())

    def x_sfplz(self, t: int, op: Op) -> None:
        lanes = self.enabled()
        c = self.lreg[op.c]
        if op.mod & 4:  # SFPLZ_MOD1_NOSGN_MASK
            c = c & np.uint32(0x7FFFFFFF)
        self.write(op.vd, _u32(C.clz32(c)), lanes)
        if op.vd < N_WRITABLE:
            flags = self.lanes.flags
            if op.mod & 2:
                flags = c != 0
            if op.mod & 8:
                flags = ~flags
            self.set_flags(flags, lanes)

    # ---- FP32 fields ---------------------------------------------------------------------

    def x_sfpexexp(self, t: int, op: Op) -> None:
        lanes = self.enabled()
        exp = (self.lreg[op.c] >> 23 & 0xFF).astype(np.int64)
        d = exp - (0 if op.mod & 1 else 127)
        self.write(op.vd, _u32(d), lanes)
        if op.vd < N_WRITABLE:
            flags = self.lanes.flags
            if op.mod & 2:
                flags = d < 0
            if op.mod & 8:
                flags = ~flags
            self.set_flags(flags, lanes)

    def x_sfpexman(self, t: int, op: Op) -> None:
        hidden = 0 if op.mod & 1 else 0x800000
        self.write(op.vd, (self.lreg[op.c] & np.uint32(0x7FFFFF)) + np.uint32(hidden),
                   self.enabled())

    def x_sfpsetexp(self, t: int, op: Op) -> None:
        c = self.lreg[op.c] & np.uint32(0x807FFFFF)
        if op.mod & 1:
            exp = np.uint32(op.imm12 & 0xFF)
        elif op.mod & 2:
            exp = self.lreg[op.b] >> 23 & 0xFF
        else:
            exp = self.lreg[op.b] & 0xFF
        self.write(op.vd, c | (exp << 23), self.enabled())

    def x_sfpsetman(self, t: int, op: Op) -> None:
        c = self.lreg[op.c] & np.uint32(0xFF800000)
        man = np.uint32(op.imm12 << 11) if op.mod & 1 else self.lreg[op.b] & 0x7FFFFF
        self.write(op.vd, c | man, self.enabled())

    def x_sfpsetsgn(self, t: int, op: Op) -> None:
        c = self.lreg[op.c] & np.uint32(0x7FFFFFFF)
        sign = np.uint32((op.imm12 & 1) << 31) if op.mod & 1 else self.lreg[op.b] & SIGN
        self.write(op.vd, c | sign, self.enabled())

    def x_sfpdivp2(self, t: int, op: Op) -> None:
        c = self.lreg[op.c]
        exp = c >> 23 & 0xFF
        imm = op.imm12 & 0xFF
        if op.mod & 1:
            exp = np.where(exp == 255, exp, (exp + imm) & 0xFF)
        else:
            exp = np.full(32, imm, dtype=np.uint32)
        self.write(op.vd, _u32((c & np.uint32(0x807FFFFF)) | (exp << 23)), self.enabled())

    # ---- conversions ---------------------------------------------------------------------

    def x_sfpcast(self, t: int, op: Op) -> None:
        lanes = self.enabled()
        c = self.lreg[op.c]
        kind = op.mod & 3
        if kind == 0:
            d = C.cast_sm32_to_fp32(c, None)
        elif kind == 1:  # stochastic rounding with the PRNG
            d = C.cast_sm32_to_fp32(c, self.lanes.advance_prng(lanes))
        elif kind == 2:
            d = C.int32_abs(c)
        else:
            d = C.int32_to_sm32(c)
        self.write(op.vd, d, lanes)

    def x_sfp_stoch_rnd(self, t: int, op: Op) -> None:
        lanes = self.enabled()
        bits = C.rounding_bits(op.word >> 21 & 3, self.lanes.advance_prng(lanes))
        mode, use_imm5 = op.mod & 7, op.mod & 8
        c = self.lreg[op.c]
        if mode in (0, 1):
            d = C.round_float(c, mode == 0, bits)
        elif mode in (4, 5):
            shift = (op.word >> 16 & 31) if use_imm5 else (self.lreg[op.b] & 31).astype(
                np.int64)
            d = C.int_to_int(c, shift, mode == 5, bits)
        else:
            keep_sign = mode in (3, 7)
            max_mag = {2: 255, 3: 127, 6: 65535, 7: 32767}[mode]
            d = C.float_to_int(c, keep_sign, max_mag, bits)
        self.write(op.vd, d, lanes)


__all__ = ["ArithmeticMixin"]
