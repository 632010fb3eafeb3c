"""A per-lane reference of the Vector Unit's register-to-register instructions, written
straight from the ISA documentation's Blackhole functional models (one ``lanewise`` loop
each, Python integers), to check the vectorised model on random states and instructions.

It shares nothing with the model but the FMA (checked against the oracle on its own) and
SFPARECIP's tables (checked against the documented figures). Not covered here: SFPLOAD,
SFPSTORE (the ttsim programs), SFPLOADMACRO (its own tests), SFPCONFIG's LoadMacroConfig
forms and the back-door template load (VD >= 12).
"""

from __future__ import annotations

import numpy as np

from isaforge.tensix.machine.sfpu.convert import EXP_LUT, RECIP_LUT
from isaforge.tensix.machine.sfpu.fma import fma_bh

M32 = 0xFFFFFFFF


def fma(a: int, b: int, c: int) -> int:
    return int(fma_bh(np.array([a]), np.array([b]), np.array([c]))[0])


def i32(x: int) -> int:
    return x - (1 << 32) if x & 0x80000000 else x


def sext(x: int, bits: int) -> int:
    return x - (1 << bits) if x >> (bits - 1) & 1 else x


def clz(x: int) -> int:
    return 32 - x.bit_length()


def smaller(c: int, d: int) -> bool:
    """SignMagIsSmaller."""
    c ^= ((i32(c) >> 30) & M32) >> 1
    d ^= ((i32(d) >> 30) & M32) >> 1
    return i32(c) < i32(d)


def lut8(x: int) -> int:
    if x == 0xFF:
        return 0
    return (x >> 7) << 31 | (127 - ((x >> 4) & 7)) << 23 | (x & 15) << 19


def lut16(x: int) -> int:
    e = (x >> 10) & 31
    return (x >> 15) << 31 | (0 if e == 31 else 112 + e) << 23 | (x & 0x3FF) << 13


def recip(x: int) -> int:
    if x < 0x00800000:
        return 0x7F800000
    if x < 0x7E800000:
        return (253 - (x >> 23)) << 23 | int(RECIP_LUT[(x >> 16) & 0x7F]) << 16
    return 0


def approx_exp(x: int) -> int:
    if x < 0x00800000:
        return 0x3F800000
    if x < 0x3C800000:
        return 0x3F810000 | (x & 0xFFFF)
    if x < 0x3F320000:
        return 0x3F800000 | int(EXP_LUT[(x >> 16) - 0x3C80]) << 16 | (x & 0xFFFF)
    if x < 0x40000000:
        return 0x40000000 | int(EXP_LUT[(x >> 16) - 0x3C80]) << 16 | (x & 0xFFFF)
    return 0x40800000 | (x & 0xFFFF)


def boolean_op(mod1: int, a: bool, b: bool) -> bool:
    return [None, b, not b, a and b, a or b, a and not b, a or not b, (not a) and b,
            (not a) or b, (not a) and (not b), (not a) or (not b), a != b, a == b][mod1]


class Ref:
    """The state (plain lists) and one method per instruction."""

    def __init__(self, lreg: np.ndarray, flags: np.ndarray, use: np.ndarray,
                 stack: list[list[tuple[bool, bool]]], prng: np.ndarray,
                 lane_config: np.ndarray) -> None:
        self.L = [[int(v) for v in row] for row in lreg]
        self.flags = [bool(v) for v in flags]
        self.use = [bool(v) for v in use]
        self.stack = [list(s) for s in stack]
        self.prng = [int(v) for v in prng]
        self.cfg = [int(v) for v in lane_config]
        self.ub = 0

    def enabled(self, lane: int) -> bool:
        if (self.cfg[lane & 7] >> (12 + lane // 8)) & 1:
            return False
        return self.flags[lane] if self.use[lane] else True

    def prng_step(self, lane: int) -> int:
        r = self.prng[lane]
        taps = bin(r & 0x80200003).count("1")
        self.prng[lane] = ((~taps << 31) | (r >> 1)) & M32
        return r

    def wr(self, vd: int, lane: int, value: int) -> None:
        if vd < 8 or vd == 16:
            self.L[vd][lane] = value & M32

    # ---- execution ----------------------------------------------------------------------

    def run(self, name: str, w: int) -> None:
        getattr(self, name.lower())(w)

    def sfpnop(self, w: int) -> None:
        pass

    def sfploadi(self, w: int) -> None:
        vd, mod0, imm = w >> 20 & 15, w >> 16 & 15, w & 0xFFFF
        if vd >= 8:
            return
        if mod0 not in (0, 1, 2, 4, 8, 10):
            self.ub += 1
            return
        for ln in range(32):
            if not self.enabled(ln):
                continue
            old = self.L[vd][ln]
            v = {0: imm << 16,
                 1: (imm >> 15) << 31 | (((imm >> 10) & 31) + 112) << 23 | (imm & 0x3FF) << 13,
                 2: imm, 4: sext(imm, 16) & M32, 8: imm << 16 | (old & 0xFFFF),
                 10: (old & 0xFFFF0000) | imm}[mod0]
            self.L[vd][ln] = v & M32

    def _mad_like(self, w: int, compute) -> None:  # noqa: ANN001
        vd, mod = w >> 4 & 15, w & 15
        for ln in range(32):
            if not self.enabled(ln):
                continue
            d = compute(ln)
            vdl = self.L[7][ln] & 15 if (mod & 8) and vd != 16 else vd
            self.wr(vdl, ln, d)

    def sfpmad(self, w: int) -> None:
        va, vb, vc, mod = w >> 16 & 15, w >> 12 & 15, w >> 8 & 15, w & 15

        def f(ln: int) -> int:
            a = self.L[self.L[7][ln] & 15 if mod & 4 else va][ln]
            b = self.L[vb][ln] ^ (0x80000000 if mod & 1 else 0)
            c = self.L[vc][ln] ^ (0x80000000 if mod & 2 else 0)
            return fma(a, b, c)
        self._mad_like(w, f)

    sfpadd = sfpmad
    sfpmul = sfpmad

    def sfpmuli(self, w: int) -> None:
        vd, mod, imm = w >> 4 & 15, w & 15, w >> 8 & 0xFFFF
        self._mad_like(w, lambda ln: fma(imm << 16, self.L[vd][ln]
                                         ^ (0x80000000 if mod & 2 else 0), 0))

    def sfpaddi(self, w: int) -> None:
        vd, mod, imm = w >> 4 & 15, w & 15, w >> 8 & 0xFFFF
        self._mad_like(w, lambda ln: fma(imm << 16, 0x3F800000, self.L[vd][ln]
                                         ^ (0x80000000 if mod & 2 else 0)))

    def sfpmul24(self, w: int) -> None:
        va, vb, vc, mod = w >> 16 & 15, w >> 12 & 15, w >> 8 & 15, w & 15

        def f(ln: int) -> int:
            a = self.L[self.L[7][ln] & 15 if mod & 4 else va][ln]
            b = self.L[vb][ln]
            p = ((a & 0x7FFFFF) * (b & 0x7FFFFF)) >> 23 if mod & 1 else (a * b) & 0x7FFFFF
            z = self.L[vc][ln]
            ze = (z >> 23) & 0xFF
            if ze:
                re = max(129, ze)
                s = (re - ze) & 31
                zm = (1 << 23) + (z & 0x7FFFFF)
                grs = zm << 3
                p >>= (re - 129) & 31
                zm = grs >> s
                if zm:
                    p += zm
                    p += (((zm << s) & M32) ^ grs > 0xFFFF) << 16
                    p &= 0x7FFFFF
            return p
        self._mad_like(w, f)

    def sfplut(self, w: int) -> None:
        vd, mod = w >> 20 & 15, w >> 16 & 15
        for ln in range(32):
            if not self.enabled(ln):
                continue
            l3 = self.L[3][ln]
            b = l3 & 0x7FFFFFFF
            co = self.L[0 if b < 0x3F800000 else 1 if b < 0x40000000 else 2][ln]
            d = fma(lut8((co >> 8) & 0xFF), b, lut8(co & 0xFF))
            if mod & 4:
                d = (d & 0x7FFFFFFF) | (l3 & 0x80000000)
            self.wr(self.L[7][ln] & 15 if (mod & 8) and vd != 16 else vd, ln, d)

    def sfplutfp32(self, w: int) -> None:
        vd, mod = w >> 4 & 15, w & 15
        for ln in range(32):
            if not self.enabled(ln):
                continue
            l3 = self.L[3][ln]
            b = l3 & 0x7FFFFFFF
            i = 0 if b < 0x3F800000 else 1 if b < 0x40000000 else 2
            if mod & 2:
                if (mod & 10) == 10:
                    a, c = lut16(self.L[i][ln] >> 16), lut16(self.L[i][ln] & 0xFFFF)
                else:
                    cut = 0x40800000 if (mod & 3) == 3 else 0x40400000
                    j = (0 if b < 0x3F000000 else 16 if b < 0x3F800000 else 0 if b < 0x3FC00000
                         else 16 if b < 0x40000000 else 0 if b < cut else 16)
                    a = lut16((self.L[i][ln] >> j) & 0xFFFF)
                    c = lut16((self.L[4 + i][ln] >> j) & 0xFFFF)
            else:
                a, c = self.L[i][ln], self.L[4 + i][ln]
            d = fma(a, b, c)
            if mod & 4:
                d = (d & 0x7FFFFFFF) | (l3 & 0x80000000)
            self.wr(self.L[7][ln] & 15 if (mod & 8) and vd != 16 else vd, ln, d)

    def sfparecip(self, w: int) -> None:
        vd, vc, vb, mod = w >> 4 & 15, w >> 8 & 15, w >> 12 & 15, w & 15
        for ln in range(32):
            if not self.enabled(ln):
                continue
            x = self.L[vc][ln]
            sign = x & 0x80000000
            if mod == 0:
                x = sign + recip(x - sign)
            elif mod == 1:
                if i32(self.L[vb][ln]) < 0:
                    x = recip(x - sign)
            else:
                x = sign + approx_exp(x - sign)
            self.wr(vd, ln, x)

    def _simple(self, w: int, f, flags=None, always: bool = False) -> None:  # noqa: ANN001
        """``VD = f(lane)`` in enabled lanes when VD is writable (``always``: ``f`` runs
        anyway, for its PRNG steps, as SFPCAST/SFPSTOCHRND's models do)."""
        vd = w >> 4 & 15
        if not (vd < 8 or vd == 16 or always):
            return
        for ln in range(32):
            if self.enabled(ln):
                r = f(ln) & M32
                if vd < 8 or vd == 16:
                    self.L[vd][ln] = r
                if flags is not None and vd < 8:
                    self.flags[ln] = flags(ln, r)

    def sfpiadd(self, w: int) -> None:
        vd, vc, mod, imm = w >> 4 & 15, w >> 8 & 15, w & 15, w >> 12 & 0xFFF

        def f(ln: int) -> int:
            if mod & 1:
                return self.L[vc][ln] + sext(imm, 12)
            if mod & 2:
                return self.L[vc][ln] - self.L[vd][ln]
            return self.L[vc][ln] + self.L[vd][ln]

        def fl(ln: int, r: int) -> bool:
            v = self.flags[ln] if mod & 4 else i32(r) < 0
            return (not v) if mod & 8 else v
        self._simple(w, f, fl)

    def sfpshft(self, w: int) -> None:
        vd, vc, mod, imm = w >> 4 & 15, w >> 8 & 15, w & 15, w >> 12 & 0xFFF

        def f(ln: int) -> int:
            x, amt = self.L[vd][ln], i32(self.L[vc][ln])
            if mod & 1:
                if mod & 4:
                    x = amt & M32
                amt = sext(imm, 12)
            if amt >= 0:
                return x << (amt & 31)
            if mod & 2:
                return i32(x) >> ((-amt) & 31)
            return x >> ((-amt) & 31)
        self._simple(w, f)

    def sfpand(self, w: int) -> None:
        vc, vb = w >> 8 & 15, (w >> 12 & 15) if w & 1 else w >> 4 & 15
        self._simple(w, lambda ln: self.L[vb][ln] & self.L[vc][ln])

    def sfpor(self, w: int) -> None:
        vc, vb = w >> 8 & 15, (w >> 12 & 15) if w & 1 else w >> 4 & 15
        self._simple(w, lambda ln: self.L[vb][ln] | self.L[vc][ln])

    def sfpxor(self, w: int) -> None:
        vd, vc = w >> 4 & 15, w >> 8 & 15
        self._simple(w, lambda ln: self.L[vd][ln] ^ self.L[vc][ln])

    def sfpnot(self, w: int) -> None:
        self._simple(w, lambda ln: ~self.L[w >> 8 & 15][ln])

    def sfpabs(self, w: int) -> None:
        vc, mod = w >> 8 & 15, w & 15

        def f(ln: int) -> int:
            x = self.L[vc][ln]
            if x >= 0x80000000:
                if mod & 1:
                    return x if x > 0xFF800000 else x & 0x7FFFFFFF
                return -x
            return x
        self._simple(w, f)

    def sfplz(self, w: int) -> None:
        vc, mod = w >> 8 & 15, w & 15

        def c(ln: int) -> int:
            return self.L[vc][ln] & (0x7FFFFFFF if mod & 4 else M32)

        def fl(ln: int, r: int) -> bool:
            v = c(ln) != 0 if mod & 2 else self.flags[ln]
            return (not v) if mod & 8 else v
        self._simple(w, lambda ln: clz(c(ln)), fl)

    def sfpexexp(self, w: int) -> None:
        vc, mod = w >> 8 & 15, w & 15

        def fl(ln: int, r: int) -> bool:
            v = i32(r) < 0 if mod & 2 else self.flags[ln]
            return (not v) if mod & 8 else v
        self._simple(w, lambda ln: ((self.L[vc][ln] >> 23) & 0xFF) - (0 if mod & 1 else 127), fl)

    def sfpexman(self, w: int) -> None:
        vc, mod = w >> 8 & 15, w & 15
        self._simple(w, lambda ln: (0 if mod & 1 else 1 << 23) + (self.L[vc][ln] & 0x7FFFFF))

    def sfpsetexp(self, w: int) -> None:
        vd, vc, mod, imm = w >> 4 & 15, w >> 8 & 15, w & 15, w >> 12 & 0xFFF

        def f(ln: int) -> int:
            c, b = self.L[vc][ln], self.L[vd][ln]
            e = imm & 0xFF if mod & 1 else (b >> 23) & 0xFF if mod & 2 else b & 0xFF
            return (c & 0x807FFFFF) | e << 23
        self._simple(w, f)

    def sfpsetman(self, w: int) -> None:
        vd, vc, mod, imm = w >> 4 & 15, w >> 8 & 15, w & 15, w >> 12 & 0xFFF
        self._simple(w, lambda ln: (self.L[vc][ln] & 0xFF800000)
                     | (imm << 11 if mod & 1 else self.L[vd][ln] & 0x7FFFFF))

    def sfpsetsgn(self, w: int) -> None:
        vd, vc, mod, imm = w >> 4 & 15, w >> 8 & 15, w & 15, w >> 12 & 0xFFF
        self._simple(w, lambda ln: (self.L[vc][ln] & 0x7FFFFFFF)
                     | ((imm & 1) << 31 if mod & 1 else self.L[vd][ln] & 0x80000000))

    def sfpdivp2(self, w: int) -> None:
        vc, mod, imm = w >> 8 & 15, w & 15, w >> 12 & 0xFF

        def f(ln: int) -> int:
            c = self.L[vc][ln]
            e = (c >> 23) & 0xFF
            if mod & 1:
                e = e if e == 255 else (e + imm) & 0xFF
            else:
                e = imm
            return (c & 0x807FFFFF) | e << 23
        self._simple(w, f)

    def sfpcast(self, w: int) -> None:
        vc, mod = w >> 8 & 15, w & 3

        def f(ln: int) -> int:
            c = self.L[vc][ln]
            sign = c & 0x80000000
            if mod == 2:
                return -c if c >= 0x80000000 else c
            if mod == 3:
                return sign | ((-c if sign else c) & M32)
            mag = c & 0x7FFFFFFF
            lz = clz(mag) if mag else 157
            norm = (mag << (lz & 31)) & M32
            d = sign + ((157 - lz) << 23) + (norm >> 8)
            if mod & 1:
                if (norm & 0xFE) > ((self.prng_step(ln) >> 9) & 0xFE):
                    d += 1
            elif (norm & 0x80) and (norm & 0x17F):
                d += 1
            return d
        self._simple(w, f, always=mod < 2)

    def sfp_stoch_rnd(self, w: int) -> None:
        vc, vb, mod, imm5, rnd = w >> 8 & 15, w >> 12 & 15, w & 7, w >> 16 & 31, w >> 21 & 3
        use_imm = w & 8

        def f(ln: int) -> int:
            bits = self.prng_step(ln) & 0x7FFFFF
            if rnd == 0:
                bits = 0x400000
            elif rnd == 2:
                bits = 0x7FFFFF
            c = self.L[vc][ln]
            if mod in (0, 1):
                e = (c >> 23) & 0xFF
                if e == 0:
                    return 0
                if e == 255:
                    return c & 0xFF800000
                low, step, sh = (0x1FFF, 0x2000, 10) if mod == 0 else (0xFFFF, 0x10000, 7)
                disc = c & low
                return c - disc + (step if disc >= (bits >> sh) else 0)
            if mod in (4, 5):
                sign, mag = c & 0x80000000, (c & 0x7FFFFFFF) << 23
                mag >>= imm5 if use_imm else (self.L[vb][ln] & 31)
                mag = (mag >> 23) + ((mag & 0x7FFFFF) >= bits)
                if mod == 4:
                    return min(mag, 255)
                mag = min(mag, 127)
                return (sign if mag else 0) + mag
            keep, mx = {2: (False, 255), 3: (True, 127), 6: (False, 65535),
                        7: (True, 32767)}[mod]
            sign = c & 0x80000000 if keep else 0
            e = ((c >> 23) & 0xFF) - 127
            if e < -1:
                return 0
            if e >= 16:
                return sign + mx
            mag = 0x800000 | (c & 0x7FFFFF)
            mag = mag << e if e >= 0 else mag >> -e
            mag = min((mag >> 23) + ((mag & 0x7FFFFF) >= bits), mx)
            return (sign if mag else 0) + mag
        self._simple(w, f, always=True)

    def sfpmov(self, w: int) -> None:
        vd, vc, mod = w >> 4 & 15, w >> 8 & 15, w & 15
        for ln in range(32):
            if not (self.enabled(ln) or mod == 2):
                continue
            if mod & 8:  # VC 0..8: LoadMacroConfig, zero here (never configured)
                x = self.prng_step(ln) if vc == 9 else self.cfg[ln] if vc == 15 else 0
            else:
                x = self.L[vc][ln] ^ (0x80000000 if mod & 1 else 0)
            self.wr(vd, ln, x)

    def sfpswap(self, w: int) -> None:
        vd, vc, mod = w >> 4 & 15, w >> 8 & 15, w & 15
        vd_min = {1: 0xFFFFFFFF, 2: 0xFFFF, 3: 0x00FF00FF, 4: 0xFF0000FF, 5: 0xFF, 6: 0xFF00,
                  7: 0xFF0000, 8: 0xFF000000}.get(mod, 0)
        for ln in range(32):
            if not self.enabled(ln):
                continue
            cv, dv = self.L[vc][ln], self.L[vd][ln]
            if mod == 0:
                swap = True
            else:
                swap = smaller(cv, dv) if vd_min >> ln & 1 else not smaller(cv, dv)
                if self.cfg[ln] >> 8 & 1:
                    swap = not swap
            if not swap:
                continue
            if self.cfg[ln] >> 2 & 1:
                if vc < 4:
                    self.L[vc][ln] = dv
                if vd < 4:
                    self.L[vd][ln] = cv
                ca, da = 4 + (vc & 3), 4 + (vd & 3)
                self.L[ca][ln], self.L[da][ln] = self.L[da][ln], self.L[ca][ln]
            else:
                if vc < 8:
                    self.L[vc][ln] = dv
                if vd < 8:
                    self.L[vd][ln] = cv

    def sfptransp(self, w: int) -> None:
        for base in (0, 4):
            for col in range(8):
                for i in range(4):
                    for j in range(i):
                        ij = self.L[base + i][j * 8 + col]
                        ji = self.L[base + j][i * 8 + col]
                        if self.enabled(j * 8 + col):
                            self.L[base + i][j * 8 + col] = ji
                        if self.enabled(i * 8 + col):
                            self.L[base + j][i * 8 + col] = ij

    def sfpshft2(self, w: int) -> None:
        vd, vc, vb, mod, imm = w >> 4 & 15, w >> 8 & 15, w >> 12 & 15, w & 15, w >> 12 & 0xFFF
        en = [self.enabled(ln) for ln in range(32)]
        if mod in (0, 1, 2):
            v0, vcv = list(self.L[0]), list(self.L[vc])
            for ln in range(32):
                if en[ln]:
                    self.L[0][ln], self.L[1][ln], self.L[2][ln] = (
                        self.L[1][ln], self.L[2][ln], self.L[3][ln])
                    self.L[3][ln] = (0 if mod == 0 else (v0[ln + 8] if ln < 24 else 0)
                                     if mod == 1 else vcv[ln - 1] if ln & 7 else vcv[ln + 7])
        elif mod in (3, 4):
            vcv = list(self.L[vc])
            for ln in range(32):
                if en[ln]:
                    self.wr(vd, ln, vcv[ln - 1] if ln & 7 else (vcv[ln + 7] if mod == 3 else 0))
        elif mod in (5, 6):
            for ln in range(32):
                if en[ln]:
                    amt = i32(self.L[vc][ln]) if mod == 5 else sext(imm, 12)
                    x = self.L[vb][ln]
                    self.wr(vd, ln, x << (amt & 31) if amt >= 0 else x >> ((-amt) & 31))

    # ---- condition codes ----------------------------------------------------------------

    def sfpsetcc(self, w: int) -> None:
        vc, mod, imm = w >> 8 & 15, w & 15, w >> 12 & 1
        for ln in range(32):
            if not self.enabled(ln):
                continue
            c = i32(self.L[vc][ln])
            if not self.use[ln] or mod & 8:
                self.flags[ln] = False
            elif mod & 1:
                self.flags[ln] = bool(imm)
            else:
                self.flags[ln] = {0: c < 0, 2: c != 0, 4: c >= 0, 6: c == 0}[mod]

    def sfpencc(self, w: int) -> None:
        mod, imm = w & 15, w >> 12 & 3
        for ln in range(32):
            if mod & 2:
                self.use[ln] = bool(imm & 1)
            elif mod & 1:
                self.use[ln] = not self.use[ln]
            self.flags[ln] = bool(imm & 2) if mod & 8 else True

    def sfppushc(self, w: int) -> None:
        mod = w & 15
        bad = False
        for ln in range(32):
            st = self.stack[ln]
            if mod == 0:
                if len(st) >= 8:
                    bad = True
                    continue
                st.append((self.flags[ln], self.use[ln]))
                continue
            if not st:  # undefined: as the model, Mod1=13 still inverts the flags
                bad = True
                if mod == 13:
                    self.flags[ln] = not self.flags[ln]
                continue
            tf, tu = st[-1]
            if mod <= 12:
                st[-1] = (boolean_op(mod, tf, self.flags[ln]), self.use[ln])
            elif mod == 13:
                self.flags[ln] = not self.flags[ln]
                st[-1] = (self.flags[ln], self.use[ln])
            else:
                st[-1] = (mod == 14, True)
        self.ub += bad

    def sfppopc(self, w: int) -> None:
        mod = w & 15
        self.ub += mod == 0 and any(not st for st in self.stack)
        for ln in range(32):
            st = self.stack[ln]
            tf, tu = st[-1] if st else (False, False)
            if mod == 0:
                if st:
                    st.pop()
                self.use[ln], self.flags[ln] = tu, tf
            elif mod <= 12:
                self.use[ln], self.flags[ln] = tu, boolean_op(mod, self.flags[ln], tf)
            elif mod == 13:
                self.flags[ln] = not self.flags[ln]
            else:
                self.use[ln], self.flags[ln] = True, mod == 14

    def sfpcompc(self, w: int) -> None:
        for ln in range(32):
            tf, tu = self.stack[ln][-1] if self.stack[ln] else (True, True)
            self.flags[ln] = (tf and not self.flags[ln]) if (tu and self.use[ln]) else False

    def _cmp(self, w: int, gt: bool) -> None:
        vd, vc, mod = w >> 4 & 15, w >> 8 & 15, w & 15
        for ln in range(32):
            s = smaller(self.L[vc][ln], self.L[vd][ln])
            r = s if gt else not s
            if self.enabled(ln):
                if mod & 8:
                    self.wr(vd, ln, M32 if r else 0)
                if mod & 1:
                    self.flags[ln] = r
            if mod & 2 and self.stack[ln]:
                tf, tu = self.stack[ln][-1]
                self.stack[ln][-1] = ((tf or r) if mod & 4 else (tf and r), tu)

    def sfple(self, w: int) -> None:
        self._cmp(w, False)

    def sfpgt(self, w: int) -> None:
        self._cmp(w, True)

    def sfpconfig(self, w: int) -> None:
        vd, mod, imm = w >> 4 & 15, w & 15, w >> 8 & 0xFFFF
        defaults = [0xBF800000, 0x37800000, int(np.float32(-0.67487759).view(np.uint32)),
                    int(np.float32(-0.34484843).view(np.uint32))]
        for ln in range(32):
            if mod & 8 and not (imm >> ((ln & 7) * 2)) & 1:
                continue
            if self.use[ln & 7] and not self.flags[ln & 7]:
                continue
            value = imm if mod & 1 else self.L[0][ln & 7]
            if 11 <= vd <= 14:
                self.L[vd][ln] = defaults[vd - 11] if mod & 1 else self.L[0][ln & 7]
            elif vd == 15:
                orig = self.cfg[ln]
                op = mod & 6
                new = value if op == 0 else orig | value if op == 2 else (
                    orig & value if op == 4 else orig ^ value)
                if mod & 1:
                    new |= orig & ~0xFFFF
                self.cfg[ln] = new & 0x3FFFF


__all__ = ["Ref"]
