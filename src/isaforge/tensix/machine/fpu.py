"""The Matrix Unit (FPU) of the Tensix coprocessor: the arithmetic, bit-exact, in numpy.

Where things are: this module is the documented arithmetic (the numpy reference, checked
against every oracle case in ``refdata/tensix/oracle/fpu``) and the instruction entry points;
:mod:`.fpu_jit` holds the numba-compiled twins of the instructions and their lazy loading;
:mod:`.matrix` decodes MVMUL & co. on the coprocessor (addresses, formats, RWCs) and calls the
functions here.

Two levels:

* **Kernels** on arrays of *logical* Src values (``sign[18] exp[17:10] man[9:0]``; see
  :mod:`.formats`) and of Dst values in the *FP32 frame* (an FP32 bit pattern;
  a BF16 Dst is ``bf16 << 16``, an FP16 Dst keeps its 5-bit exponent in bits 27..23). They take
  any number of leading batch dimensions: :func:`mvmul_kernel`, :func:`elwadd_kernel`,
  :func:`elwmul_kernel`, :func:`int8_mvmul_kernel`, :func:`int8_elw_kernel`.
* **Instructions** on the register files (:class:`~.regfiles.Dst`,
  :class:`~.regfiles.SrcRegs`): :func:`mvmul`, :func:`elwadd`, :func:`elwsub`,
  :func:`elwmul`, :func:`gapool`, :func:`gmpool`, and the moves :func:`movd2a`,
  :func:`movd2b`, :func:`mova2d`, :func:`movb2d`, :func:`movb2a`. The caller (the machine) gives
  the row sums the instruction would form (``RWC + Imm + DEST_TARGET_REG_CFG_MATH_Offset +
  DEST_REGW_BASE``) and the effective fidelity phase; each function applies its own alignment
  masks, reads ``SrcX.matrix_bank``, treats invalid Dst rows as the identity (0, or minus
  infinity for GMPOOL) and marks written rows valid. Bank flips and RWC updates are the
  caller's job. Each instruction is a thin dispatch: once :data:`JIT_AFTER` instructions have
  run on numpy (at once when numba is already imported, :data:`JIT_EARLY`), and unless
  :data:`USE_JIT` is off or numba is missing, it calls the compiled kernel of :mod:`.fpu_jit`
  instead (same results, bit for bit; 30-50x faster), except for integer "8" arithmetic;
  :func:`mvmul_batch` is the compiled twin of :func:`mvmul_kernel` for many blocks at once.

Arithmetic (the model of the official simulator, which the oracle vectors in
``refdata/tensix/oracle/fpu`` were produced by):

* An Src value is zero iff its exponent field is 0; exponent 255 (31 for FP16) is finite.
  Formats other than TF32 and FP16/FP8 drop mantissa bits 2..0; FP16 drops the 3 high
  exponent bits.
* Per product, 11-bit significands ``M``: SrcA gives ``M[10:6]`` (phase bit 0 clear) or
  ``M[5:1]``; SrcB gives ``M[10:4]`` (phase bit 1 clear) or ``M[3:0] << 3``. The exponent is
  ``eA + eB + adj``: ``adj`` = -127 (8-bit exponents), -15 (FP16 into 16-bit Dst), +97 (FP16
  into FP32 Dst), then -5 if phase bit 0, -7 if phase bit 1. A product with a zero operand is
  ``+0`` with exponent ``max(adj, 0)`` and still votes for its group's exponent.
* MVMUL sums two groups of 8 products each, aligned to the group's largest exponent with
  round-half-up; then group 0, group 1 and Dst are aligned to their largest exponent and added
  (products round toward +inf in magnitude for positive and down for negative terms; with a
  16-bit Dst every term is first rounded to 10 bits below the leading position); the sum is
  normalised with ties away from zero, at 24 bits (FP32 Dst), 8 (BF16) or 11 (FP16).
  Results never are -0; underflow gives +0; overflow gives signed Inf (FP32/BF16) or
  ``sign | 0x7FFF`` (FP16).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace

import numpy as np

from ...core.errors import EmulationError
from . import formats as F
from . import fpu_jit
from .regfiles import Dst, SrcRegs

I64 = np.int64


class FpuError(EmulationError):
    """A Matrix Unit operation with a configuration the hardware does not support."""


@dataclass(frozen=True)
class MathConfig:
    """The configuration a Matrix Unit instruction reads.

    Attributes:
        srca_fmt, srcb_fmt: data-format codes in force for SrcA / SrcB (after the caller has
            chosen between ALU_FORMAT_SPEC_REG*, the override and Blackhole's implied format).
        fp32_dst: ``ALU_ACC_CTRL_Fp32_enabled``.
        int8_math: ``ALU_ACC_CTRL_INT8_math_enabled`` (integer "8" math into integer "32").
        fp16a_force: ``FP16A_FORCE_Enable`` (FP16 style, 16-bit Dst).
        zero_flag_disabled_src: ``ALU_ACC_CTRL_Zero_Flag_disabled_src`` (MOVA2D/MOVB2D stop
            flushing exponent-0 values to zero).
    """

    srca_fmt: int = F.DataFormat.FLOAT16_B
    srcb_fmt: int = F.DataFormat.FLOAT16_B
    fp32_dst: bool = False
    int8_math: bool = False
    fp16a_force: bool = False
    zero_flag_disabled_src: bool = False

    @property
    def style(self) -> str:
        """``"bf16"``, ``"fp16"``, ``"tf32"`` or ``"int8"``: SrcAStyle."""
        if self.fp16a_force:
            return "fp16"
        if self.int8_math:
            return "int8"
        return F.src_style(self.srca_fmt)

    @property
    def use_dst32b(self) -> bool:
        """Whether Dst is accessed as Dst32b."""
        if self.fp16a_force:
            return False
        return bool(self.fp32_dst or self.int8_math)

    @property
    def exp8(self) -> bool:
        """8-bit exponents (everything but FP16 style)."""
        return self.style != "fp16"


# --------------------------------------------------------------------------------------------
# Operand preparation
# --------------------------------------------------------------------------------------------


def mask_operand(logical: np.ndarray, fmt: int, fp16_style: bool) -> np.ndarray:
    """Drop the bits the matrix unit ignores: FP16 style clears exponent bits 7..5, TF32/FP16/FP8
    keep all 10 mantissa bits, every other format drops mantissa bits 2..0."""
    v = np.asarray(logical).astype(I64)
    if fp16_style:
        return v & 0x47FFF
    if not F.keeps_low_mantissa(fmt):
        return v & ~I64(7)
    return v


def _split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return v >> 18, (v >> 10) & 0xFF, (v & 0x3FF) | 0x400


def exp_adjust(fp32_dst: bool, phase: int, exp8: bool) -> int:
    """The exponent added to ``eA + eB`` for a product in ``phase``."""
    adj = -127 if exp8 else (97 if fp32_dst else -15)
    if phase & 1:
        adj -= 5
    if phase & 2:
        adj -= 7
    return adj


def _products(a: np.ndarray, b: np.ndarray, phase: int, adj: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sign, exponent, 12-bit magnitude of products of masked logical operands (broadcast)."""
    sa, ea, ma = _split(a)
    sb, eb, mb = _split(b)
    ma = ((ma >> 1) & 31) if phase & 1 else (ma >> 6)
    mb = ((mb & 15) << 3) if phase & 2 else (mb >> 4)
    m = ma * mb
    e = ea + eb + adj
    s = sa ^ sb
    zero = (ea == 0) | (eb == 0)
    return np.where(zero, 0, s), np.where(zero, max(adj, 0), e), np.where(zero, 0, m)


def _align(m: np.ndarray, d: np.ndarray, s: np.ndarray | int) -> np.ndarray:
    """Right-align a magnitude by ``d >= 0``: ``(m + 2**(d-1) - s) >> d`` (ties up for positive,
    down for negative terms), ``m`` when ``d == 0``, 0 once every bit is gone (d >= 31)."""
    d = np.minimum(d, 62)
    return ((m << 1) + (I64(1) << d) - ((s & (d > 0)) << 1)) >> (d + 1)


def accumulate(s0: np.ndarray, e0: np.ndarray, m0: np.ndarray,
               s1: np.ndarray | None, e1: np.ndarray | None, m1: np.ndarray | None,
               dst: np.ndarray, fp32_acc: bool, exp8: bool) -> np.ndarray:
    """Add one or two sign/exponent/magnitude terms (magnitude 1.0 = 2**23) to a Dst value in
    the FP32 frame, round and encode; returns FP32-frame bits (uint32)."""
    dst = np.asarray(dst).astype(I64)
    sd = dst >> 31
    ed = (dst >> 23) & 0xFF
    md = ((dst & 0x7FFFFF) | 0x800000) * (ed != 0)
    e = np.maximum(e0, ed) if e1 is None else np.maximum(np.maximum(e0, e1), ed)
    m0 = _align(m0, e - e0, s0)
    md = _align(md, e - ed, 0)
    if not fp32_acc:  # with a 16-bit Dst each term is first rounded to 10 bits below bit 23
        m0 = (m0 + 4096 - s0) & ~I64(0x1FFF)
        md = (md + 4096) & ~I64(0x1FFF)
    total = md * (1 - 2 * sd) + m0 * (1 - 2 * s0)
    if e1 is not None:
        m1 = _align(m1, e - e1, s1)
        if not fp32_acc:
            m1 = (m1 + 4096 - s1) & ~I64(0x1FFF)
        total += m1 * (1 - 2 * s1)
    sign = (total < 0).astype(I64)
    mag = np.abs(total) * (e > 0)  # largest exponent <= 0: early underflow to +0
    blen = np.frexp(mag.astype(np.float64))[1].astype(I64)  # bit length (mag < 2**31)
    keep = 24 if fp32_acc else (8 if exp8 else 11)  # significant bits kept
    rs = np.maximum(blen - keep, 0)
    man = ((mag + ((I64(1) << rs) >> 1)) >> rs) << (np.maximum(keep - blen, 0) + 24 - keep)
    e = e + blen - 24 + (man >> 24)
    man &= 0x7FFFFF
    if fp32_acc or exp8:
        big = e >= 255
        out = (sign << 31) | (np.minimum(e, 255) << 23) | (man * ~big)
    else:
        big = e >= 32
        out = (sign << 31) | (np.minimum(e, 31) << 23) | np.where(big, 0x3FF << 13, man)
    return (out * ((e > 0) & (mag != 0))).astype(np.uint32)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


def _operand(v: np.ndarray, phase_bit: bool, for_a: bool) -> tuple[np.ndarray, np.ndarray]:
    """(signed slice x 2**exponent as float64, exponent as int32 with zeros pushed far below)
    of logical operands: the multiplier input of one fidelity phase."""
    e = (v >> 10) & 0xFF
    big = (v & 0x3FF) | 0x400
    if for_a:
        sl = ((big >> 1) & 31) if phase_bit else (big >> 6)
    else:
        sl = ((big & 15) << 3) if phase_bit else (big >> 4)
    zero = e == 0
    value = np.ldexp((sl * (1 - 2 * (v >> 18)) * ~zero).astype(np.float64), e)
    return value, np.where(zero, -4096, e).astype(np.int32)


def mvmul_kernel(a: np.ndarray, b: np.ndarray, dst: np.ndarray, phase: int,
                 fp32_dst: bool, exp8: bool) -> np.ndarray:
    """``dst (+)= b @ a`` on masked logical operands. ``a``: ``(..., 16, 16)`` [i, col];
    ``b``: ``(..., R, 16)`` [row, i]; ``dst``: ``(..., R, 16)`` FP32-frame bits.

    The 8-product groups are evaluated in float64, where every step is exact: a product is a
    signed 12-bit integer times a power of two; aligning it to its group's largest exponent
    and rounding half away from zero is ``trunc(p * 2**-top + copysign(0.5, p))``."""
    a = np.swapaxes(np.asarray(a).astype(I64), -1, -2)  # (..., col, i)
    b = np.asarray(b).astype(I64)
    adj = exp_adjust(fp32_dst, phase, exp8)
    fa, ea = _operand(a, bool(phase & 1), True)
    fb, eb = _operand(b, bool(phase & 2), False)
    prod = fb[..., :, None, :] * fa[..., None, :, :]  # (..., R, col, 16): +-m * 2**(eA + eB)
    ee = eb[..., :, None, :] + ea[..., None, :, :]
    shp = prod.shape[:-1] + (2, 8)
    top = ee.reshape(shp).max(axis=-1)  # (..., R, col, 2) in eA + eB units
    scaled = prod.reshape(shp) * np.exp2(-np.maximum(top, -1000).astype(np.float64))[..., None]
    tot = np.trunc(scaled + np.copysign(0.5, scaled)).sum(axis=-1).astype(I64)
    eg = top.astype(I64) + adj
    if adj > 0:  # products with a zero operand vote with exponent adj
        za = (ea < 0).reshape(ea.shape[:-1] + (2, 8)).any(axis=-1)  # (..., col, 2)
        zb = (eb < 0).reshape(eb.shape[:-1] + (2, 8)).any(axis=-1)  # (..., R, 2)
        anyzero = zb[..., :, None, :] | za[..., None, :, :]
        eg = np.where(anyzero, np.maximum(eg, adj), eg)
    live = eg > 0
    gs = (tot < 0).astype(I64)
    gm = np.abs(tot) * live << 13
    ge = eg * live
    return accumulate(gs[..., 0], ge[..., 0], gm[..., 0], gs[..., 1], ge[..., 1], gm[..., 1],
                      dst, fp32_dst, exp8)


def elwmul_kernel(a: np.ndarray, b: np.ndarray, dst: np.ndarray, phase: int,
                  fp32_dst: bool, exp8: bool) -> np.ndarray:
    """``dst += a * b`` element-wise on masked logical operands (one fidelity phase)."""
    a = np.asarray(a).astype(I64)
    b = np.asarray(b).astype(I64)
    adj = exp_adjust(fp32_dst, phase, exp8)
    s, e, m = _products(a, b, phase, adj)
    dead = e <= 0
    s = np.where(dead, 0, s)
    m = np.where(dead, 0, m << 13)
    e = np.where(dead, max(adj, 0), e)
    return accumulate(s, e, m, None, None, None, dst, fp32_dst, exp8)


def elwadd_kernel(a: np.ndarray, b: np.ndarray, dst: np.ndarray, accumulate_dst: bool,
                  fp32_dst: bool, exp8: bool, phase: int = 0) -> np.ndarray:
    """``dst (+)= a + b`` on masked logical operands (ELWSUB: flip ``b``'s sign first).

    A fidelity phase other than 0 divides the sum by 32 (bit 0) and 128 (bit 1) before Dst
    is added, as the ISA documentation describes (the official simulator declines such
    phases as non-contractual; the oracle vectors have phase 0 only)."""
    a = np.asarray(a).astype(I64)
    b = np.asarray(b).astype(I64)
    a = np.where(((a >> 10) & 0xFF) == 0, 0, a)
    b = np.where(((b >> 10) & 0xFF) == 0, 0, b)
    swap = (a & 0x3FFFF) < (b & 0x3FFFF)
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    sa, ea, ma = _split(a)
    sb, eb, mb = _split(b)
    ma = np.where(a == 0, 0, ma)
    mb = np.where(b == 0, 0, mb)
    d = ea - eb
    dd = np.clip(d, 1, 62)
    mb = np.where(d <= 0, mb, np.where(d < 12, (mb + (I64(1) << (dd - 1))) >> dd, 0))
    m = np.where(sa == sb, ma + mb, ma - mb) << 13
    e = ea
    if fp32_dst and not exp8:
        e = np.where(e != 0, e + 112, 97)
    e = e - 5 * (phase & 1) - 7 * ((phase >> 1) & 1)
    if not accumulate_dst:
        dst = np.zeros(np.broadcast_shapes(np.shape(dst), a.shape), dtype=I64)
    return accumulate(sa, e, m, None, None, None, dst, fp32_dst, exp8)


def _int8_value(logical: np.ndarray, mag_mask: int) -> np.ndarray:
    v = np.asarray(logical).astype(I64)
    mag = v & mag_mask
    return np.where(v >> 18, -mag, mag)


def _int8_masks(phase: int) -> tuple[int, int]:
    """(SrcA, SrcB) magnitude bits used in ``phase`` for integer "8" multiplication."""
    return (0x1F if phase & 1 else 0xE0), (0x0F if phase & 2 else 0x3F0)


def _sat_add(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.clip(x + y, -0x7FFFFFFF, 0x7FFFFFFF)


def int8_mvmul_kernel(a: np.ndarray, b: np.ndarray, dst: np.ndarray, phase: int
                      ) -> np.ndarray:
    """Integer "8" MVMUL: ``dst += b @ a`` using the phase's magnitude bits; ``dst`` and the
    result are int64 values (saturated to +-(2**31-1))."""
    am, bm = _int8_masks(phase)
    av = _int8_value(a, am)
    bv = _int8_value(b, bm)
    return _sat_add(np.asarray(dst).astype(I64), bv @ av)


def int8_elw_kernel(a: np.ndarray, b: np.ndarray, dst: np.ndarray, op: str, phase: int,
                    accumulate_dst: bool) -> np.ndarray:
    """Integer "8" ELWADD/ELWSUB/ELWMUL (``op`` = "add", "sub", "mul")."""
    if op == "mul":
        am, bm = _int8_masks(phase)
        r = _int8_value(a, am) * _int8_value(b, bm)
        accumulate_dst = True
    else:
        r = _int8_value(a, 0x3FF) + _int8_value(b, 0x3FF) * (-1 if op == "sub" else 1)
    d = np.asarray(dst).astype(I64)
    return _sat_add(d, r) if accumulate_dst else np.broadcast_to(r, np.broadcast_shapes(
        r.shape, d.shape)).copy()


# --------------------------------------------------------------------------------------------
# Dst <-> FP32 frame
# --------------------------------------------------------------------------------------------


def dst_to_frame(stored: np.ndarray, cfg: MathConfig) -> np.ndarray:
    """Dst storage (Dst32b words or Dst16b cells) -> FP32-frame bits for the arithmetic."""
    if cfg.use_dst32b:
        return F.dst32_to_fp32(stored).astype(I64)
    s = np.asarray(stored).astype(np.uint16)
    if cfg.exp8:
        return F.dst16_to_bf16(s).astype(I64) << 16
    h = F.dst16_to_fp16(s).astype(I64)
    return ((h & 0x8000) << 16) | ((h & 0x7FFF) << 13)


def frame_to_dst(frame: np.ndarray, cfg: MathConfig) -> np.ndarray:
    """FP32-frame result -> Dst storage (uint32 words or uint16 cells)."""
    f = np.asarray(frame).astype(I64)
    if cfg.use_dst32b:
        return F.fp32_to_dst32(f.astype(np.uint32))
    if cfg.exp8:
        return F.bf16_to_dst16((f >> 16).astype(np.uint16))
    return F.fp16_to_dst16((((f & 0x80000000) >> 16) | ((f & 0x0FFFE000) >> 13))
                           .astype(np.uint16))


def frame_to_logical_dst(frame: np.ndarray, cfg: MathConfig) -> np.ndarray:
    """FP32-frame result -> the plain bit pattern (FP32, BF16 or FP16 IEEE order)."""
    f = np.asarray(frame).astype(I64)
    if cfg.use_dst32b:
        return f.astype(np.uint32)
    if cfg.exp8:
        return (f >> 16).astype(np.uint32)
    return (((f & 0x80000000) >> 16) | ((f & 0x0FFFE000) >> 13)).astype(np.uint32)


def logical_dst_to_frame(bits: np.ndarray, cfg: MathConfig) -> np.ndarray:
    """Plain FP32/BF16/FP16 bit patterns -> FP32-frame bits."""
    b = np.asarray(bits).astype(I64)
    if cfg.use_dst32b:
        return b
    if cfg.exp8:
        return b << 16
    return ((b & 0x8000) << 16) | ((b & 0x7FFF) << 13)


# --------------------------------------------------------------------------------------------
# Choosing the path: numpy (above) or compiled (fpu_jit)
# --------------------------------------------------------------------------------------------

#: Use the compiled kernels of :mod:`.fpu_jit` when numba is available (tests switch this off
#: to compare the paths; ``False`` forces numpy everywhere).
USE_JIT = True
#: Instructions run on numpy before the compiled kernels are loaded. Loading them costs
#: ~0.5-1 s of CPU in each process (``import numba``, then the machine code from the cache;
#: the first compilation ever takes 5-10 s), which a short program would not win back: the
#: numpy path takes ~0.3 ms per MVMUL. Bit for bit the two paths agree, so a run can switch.
JIT_AFTER = 1000
#: Load the kernels at the first call when numba is already imported (a tile's RISC-V fast
#: path imports it): then loading them from numba's cache costs ~15 ms, less than ten
#: instructions on numpy (False: wait for :data:`JIT_AFTER` calls anyway; tests compare)
JIT_EARLY = True

_JIT_STATE: dict[str, int] = {"calls": 0}


def _jit(now: bool = False) -> fpu_jit.Kernels | None:
    """The compiled kernels, or None: numba missing, :data:`USE_JIT` off, or fewer than
    :data:`JIT_AFTER` calls made so far (unless ``now``: a big batch is worth loading them
    for; or :data:`JIT_EARLY` and numba already imported)."""
    if not USE_JIT:
        return None
    kernels = fpu_jit._LOADED.get("kernels", False)
    if kernels is not False:
        return kernels  # type: ignore[return-value]
    _JIT_STATE["calls"] += 1
    if _JIT_STATE["calls"] <= JIT_AFTER and not now \
            and not (JIT_EARLY and sys.modules.get("numba") is not None):
        return None
    return fpu_jit.load()


@dataclass(frozen=True)
class _FastCfg:
    """What the compiled kernels need from a :class:`MathConfig` (computed once per value)."""

    mode: int  # Dst storage: 0 Dst32b, 1 Dst16b BF16, 2 Dst16b FP16
    is32: bool
    exp8: bool
    a_mask: int
    b_mask: int
    adj: tuple[int, int, int, int]  # exponent adjustment per fidelity phase


_FAST_CFG: dict[MathConfig, _FastCfg | None] = {}


def _fast_cfg(cfg: MathConfig) -> _FastCfg | None:
    """The kernel parameters of ``cfg`` (None for integer "8" math, which stays on numpy);
    raises :class:`FpuError` for format combinations the hardware rejects. Remembered per
    value, and on the instance itself (outside its fields: equality and hashing ignore it),
    which saves hashing the config on every instruction."""
    try:
        return cfg.__dict__["_fast"]  # type: ignore[no-any-return]
    except KeyError:
        pass
    try:
        fast = _FAST_CFG[cfg]
    except KeyError:
        _check_formats(cfg)
        fast = None
        if cfg.style != "int8":
            fp16 = cfg.style == "fp16"
            b_fmt = F.DataFormat.FLOAT16 if cfg.fp16a_force else cfg.srcb_fmt
            masks = [0x47FFF if fp16 else (0x7FFFF if F.keeps_low_mantissa(f) else 0x7FFF8)
                     for f in (cfg.srca_fmt, b_fmt)]
            is32, exp8 = cfg.use_dst32b, cfg.exp8
            fast = _FastCfg(0 if is32 else (1 if exp8 else 2), is32, exp8, masks[0], masks[1],
                            tuple(exp_adjust(is32, ph, exp8) for ph in range(4)))
        _FAST_CFG[cfg] = fast
    cfg.__dict__["_fast"] = fast
    return fast


def mvmul_batch(a: np.ndarray, b: np.ndarray, dst: np.ndarray, phase: int,
                fp32_dst: bool, exp8: bool) -> np.ndarray:
    """:func:`mvmul_kernel` compiled, for many blocks at once: the same arguments (``a``:
    ``(..., 16, 16)``, ``b`` and ``dst``: ``(..., R, 16)``, batch dimensions broadcast) and
    the same result, bit for bit (uint32 FP32-frame bits). Falls back to
    :func:`mvmul_kernel` when numba is missing or :data:`USE_JIT` is off."""
    kernels = _jit(now=True)
    if kernels is None:
        return mvmul_kernel(a, b, dst, phase, fp32_dst, exp8)
    a, b, dst = (np.asarray(x).astype(I64, copy=False) for x in (a, b, dst))
    if a.ndim < 2 or a.shape[-2:] != (16, 16) or b.ndim < 2 or b.shape[-1] != 16 \
            or dst.shape[-2:] != b.shape[-2:]:
        raise FpuError(f"mvmul_batch wants a (..., 16, 16), b and dst (..., R, 16); got "
                       f"{a.shape}, {b.shape}, {dst.shape}")
    rows = b.shape[-2]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2], dst.shape[:-2])
    flat = [np.ascontiguousarray(np.broadcast_to(x, batch + x.shape[-2:]).reshape(
        (-1,) + x.shape[-2:])) for x in (a, b, dst)]
    out = np.empty_like(flat[2])
    ws = np.empty((6, max(rows, 16), 16), dtype=np.int32)
    kernels.mvmul_batch(flat[0], flat[1], flat[2], out, phase & 3,
                        exp_adjust(fp32_dst, phase, exp8), bool(fp32_dst), bool(exp8), ws)
    return out.reshape(batch + (rows, 16)).astype(np.uint32)


# --------------------------------------------------------------------------------------------
# Instructions on the register files
# --------------------------------------------------------------------------------------------


def _src_logical(src: SrcRegs, rows: np.ndarray, fmt: int, style: str) -> np.ndarray:
    cells = src.cells[src.matrix_bank][np.asarray(rows) & 0x3F]
    return mask_operand(F.src_to_logical(cells), fmt, style == "fp16")


def _read_dst_frame(dst: Dst, rows: np.ndarray, cfg: MathConfig) -> np.ndarray:
    is32 = cfg.use_dst32b
    phys = dst.phys(rows, is32)
    if is32:
        stored = (dst.bits[phys].astype(np.uint32) << 16) | dst.bits[phys + 8]
    else:
        stored = dst.bits[phys]
    valid = dst.valid[phys][:, None]
    if cfg.style == "int8":
        return np.where(valid, F.dst32_to_int32(stored).astype(I64), 0)
    return np.where(valid, dst_to_frame(stored, cfg), 0)


def _write_dst_result(dst: Dst, rows: np.ndarray, result: np.ndarray, cfg: MathConfig) -> None:
    if cfg.style == "int8":
        dst.write32(rows, F.int32_to_dst32(result))
    elif cfg.use_dst32b:
        dst.write32(rows, frame_to_dst(result, cfg))
    else:
        dst.write16(rows, frame_to_dst(result, cfg))
    dst.set_valid(rows, cfg.use_dst32b)


def _check_formats(cfg: MathConfig) -> None:
    style = cfg.style
    if style == "int8":
        return
    b_style = "fp16" if cfg.fp16a_force else F.src_style(cfg.srcb_fmt)
    if (style == "fp16") != (b_style == "fp16"):
        raise FpuError(f"SrcA format {cfg.srca_fmt} and SrcB format {cfg.srcb_fmt} cannot be "
                       f"combined (FP16 with FP16 only)")


def _matmul(dst: Dst, srca: SrcRegs, srcb: SrcRegs, srca_row: int, srcb_row: int,
            dst_rows: np.ndarray, b_rows: np.ndarray, phase: int, cfg: MathConfig
            ) -> np.ndarray:
    _check_formats(cfg)
    style = cfg.style
    a_rows = (srca_row + np.arange(16)) & 0x3F
    if style == "int8":
        a = F.src_to_logical(srca.cells[srca.matrix_bank][a_rows])
        b = F.src_to_logical(srcb.cells[srcb.matrix_bank][b_rows & 0x3F])
        prior = _read_dst_frame(dst, dst_rows, cfg)
        return int8_mvmul_kernel(a, b, prior, phase)
    a = _src_logical(srca, a_rows, cfg.srca_fmt, style)
    b_fmt = F.DataFormat.FLOAT16 if cfg.fp16a_force else cfg.srcb_fmt
    b = _src_logical(srcb, b_rows, b_fmt, style)
    prior = _read_dst_frame(dst, dst_rows, cfg)
    return mvmul_kernel(a, b, prior, phase, cfg.use_dst32b, cfg.exp8)


def mvmul(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
          dst_row: int, phase: int, cfg: MathConfig, bcast_srcb_row: bool = False) -> None:
    """MVMUL: ``Dst[dst_row..+7] += SrcB[srcb_row..+7] @ SrcA[srca_row..+15]``.

    ``srca_row``/``srcb_row`` are the RWCs (masked with 0x38 here; SrcA rows wrap at 64);
    ``dst_row`` is the Dst row sum (masked to the 8-row block, in the active view);
    ``phase`` the effective fidelity phase. With ``bcast_srcb_row`` one SrcB row is multiplied
    and added to Dst rows 0, 2, 4, 6 of the 7-row block (the documented odd broadcast)."""
    fast = _fast_cfg(cfg)
    kernels = _jit() if fast is not None else None
    if kernels is not None:  # Python ints and bools: other types would compile new variants
        base, step, n, a_row, b_row, b_step, phase = run_row(
            int(srca_row), int(srcb_row), int(dst_row), int(phase), bcast_srcb_row)
        kernels.mvmul(dst.bits, dst.valid, dst.phys_table(fast.is32), fast.mode, base, step, n,
                      srca.cells, srca.matrix_bank, a_row, srcb.cells, srcb.matrix_bank, b_row,
                      b_step, fast.a_mask, fast.b_mask, phase, fast.adj[phase], fast.is32,
                      fast.exp8, fpu_jit.WS, fpu_jit.WRAP)
        return
    if bcast_srcb_row:
        base = dst_row & (0x400 - 7)
        dst_rows = base + np.array([0, 2, 4, 6])
        b_rows = np.full(4, srcb_row & 0x3F)
    else:
        base = dst_row & 0x3F8
        dst_rows = base + np.arange(8)
        b_rows = (srcb_row & 0x38) + np.arange(8)
    dst_rows &= 0x3FF
    res = _matmul(dst, srca, srcb, srca_row & 0x38, 0, dst_rows, b_rows, phase & 3, cfg)
    _write_dst_result(dst, dst_rows, res, cfg)


#: ``(dst_base, dst_step, rows, srca_row, srcb_row, srcb_step, phase)``: one row of a
#: :func:`mvmul_run` plan (:func:`run_row`).
RUN_FIELDS = ("dst_base", "dst_step", "rows", "srca_row", "srcb_row", "srcb_step", "phase")
_ADJS: dict[tuple[int, int, int, int], np.ndarray] = {}


def run_row(srca_row: int, srcb_row: int, dst_row: int, phase: int, bcast_srcb_row: bool
            ) -> tuple[int, int, int, int, int, int, int]:
    """What one MVMUL (the arguments of :func:`mvmul`) reads and writes, as a row of
    :data:`RUN_FIELDS`: SrcA rows from ``srca_row & 0x38``; 8 SrcB rows from
    ``srcb_row & 0x38`` into Dst rows ``dst_row & 0x3F8`` on; or for the row broadcast, SrcB
    row ``srcb_row & 0x3F`` into Dst rows 0, 2, 4, 6 from ``dst_row & 0x3F9``."""
    if bcast_srcb_row:
        return dst_row & (0x400 - 7), 2, 4, srca_row & 0x38, srcb_row & 0x3F, 0, phase & 3
    return dst_row & 0x3F8, 1, 8, srca_row & 0x38, srcb_row & 0x38, 1, phase & 3


def mvmul_run(dst: Dst, srca: SrcRegs, srcb: SrcRegs, plan: np.ndarray, cfg: MathConfig
              ) -> bool:
    """Several MVMULs in order, with one configuration and the same Src banks, in one compiled
    call: row ``r`` of ``plan`` (``(N, 7) int64``) is the :func:`run_row` of one MVMUL. The
    result is that of the :func:`mvmul` calls, bit for bit. Returns False, doing nothing,
    when the compiled kernels are not loaded (or :data:`USE_JIT` is off) or the configuration
    is integer math; raises :class:`FpuError` for a format combination the hardware
    rejects."""
    fast = _fast_cfg(cfg)
    kernels = fpu_jit._LOADED.get("kernels") if USE_JIT else None
    if fast is None or kernels is None:
        return False
    adjs = _ADJS.get(fast.adj)
    if adjs is None:
        adjs = _ADJS[fast.adj] = np.array(fast.adj, dtype=I64)
    kernels.mvmul_run(dst.bits, dst.valid, dst.phys_table(fast.is32), fast.mode, srca.cells,
                      srca.matrix_bank, srcb.cells, srcb.matrix_bank, fast.a_mask, fast.b_mask,
                      adjs, fast.is32, fast.exp8, plan, fpu_jit.WS, fpu_jit.WRAP)
    return True


def gapool(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
           dst_row: int, phase: int, cfg: MathConfig) -> None:
    """GAPOOL (as the official simulator models it): MVMUL with 4 rows,
    ``Dst[dst_row & ~3 ..+3] += SrcB[srcb_row & 0x38 ..+3] @ SrcA[srca_row & 0x30 ..+15]``."""
    fast = _fast_cfg(cfg)
    kernels = _jit() if fast is not None else None
    if kernels is not None:
        srca_row, srcb_row, dst_row, phase = int(srca_row), int(srcb_row), int(dst_row), int(phase)
        kernels.mvmul(dst.bits, dst.valid, dst.phys_table(fast.is32), fast.mode, dst_row & 0x3FC,
                      1, 4, srca.cells, srca.matrix_bank, srca_row & 0x30, srcb.cells,
                      srcb.matrix_bank, srcb_row & 0x38, 1, fast.a_mask, fast.b_mask, phase & 3,
                      fast.adj[phase & 3], fast.is32, fast.exp8, fpu_jit.WS, fpu_jit.WRAP)
        return
    dst_rows = ((dst_row & 0x3FC) + np.arange(4)) & 0x3FF
    b_rows = (srcb_row & 0x38) + np.arange(4)
    res = _matmul(dst, srca, srcb, srca_row & 0x30, 0, dst_rows, b_rows, phase & 3, cfg)
    _write_dst_result(dst, dst_rows, res, cfg)


def _elw(dst: Dst, srca: SrcRegs, srcb: SrcRegs, op: str, srca_row: int, srcb_row: int,
         dst_row: int, phase: int, cfg: MathConfig, accumulate_dst: bool,
         bcast_srcb_row: bool, bcast_srcb_col: bool) -> None:
    fast = _fast_cfg(cfg)
    kernels = _jit() if fast is not None else None
    if kernels is not None:
        srca_row, srcb_row, dst_row, phase = int(srca_row), int(srcb_row), int(dst_row), int(phase)
        b_row, b_step = (srcb_row & 0x3F, 0) if bcast_srcb_row else (srcb_row & 0x38, 1)
        kernels.elw(dst.bits, dst.valid, dst.phys_table(fast.is32), fast.mode, dst_row & 0x3F8,
                    srca.cells, srca.matrix_bank, srca_row & 0x38, srcb.cells,
                    srcb.matrix_bank, b_row, b_step, bool(bcast_srcb_col), fast.a_mask,
                    fast.b_mask, fpu_jit.ELW_OPS[op], bool(accumulate_dst), phase & 3,
                    fast.adj[phase & 3], fast.is32, fast.exp8, fpu_jit.SCRATCH)
        return
    _check_formats(cfg)
    style = cfg.style
    dst_rows = ((dst_row & 0x3F8) + np.arange(8)) & 0x3FF
    a_rows = ((srca_row & 0x38) + np.arange(8)) & 0x3F
    if bcast_srcb_row:
        b_rows = np.full(8, srcb_row & 0x3F)
    else:
        b_rows = ((srcb_row & 0x38) + np.arange(8)) & 0x3F
    b_fmt = F.DataFormat.FLOAT16 if cfg.fp16a_force else cfg.srcb_fmt
    if style == "int8":
        a = F.src_to_logical(srca.cells[srca.matrix_bank][a_rows]).astype(I64)
        b = F.src_to_logical(srcb.cells[srcb.matrix_bank][b_rows]).astype(I64)
    else:
        a = _src_logical(srca, a_rows, cfg.srca_fmt, style)
        b = _src_logical(srcb, b_rows, b_fmt, style)
    if bcast_srcb_col:
        b = np.repeat(b[:, :1], 16, axis=1)
    if op == "sub" and style != "int8":
        b = b ^ (1 << 18)
    acc = accumulate_dst or op == "mul"
    prior = _read_dst_frame(dst, dst_rows, cfg) if acc else np.zeros((8, 16), I64)
    if style == "int8":
        res = int8_elw_kernel(a, b, prior, op, phase & 3, acc)
    elif op == "mul":
        res = elwmul_kernel(a, b, prior, phase & 3, cfg.use_dst32b, cfg.exp8)
    else:
        res = elwadd_kernel(a, b, prior, acc, cfg.use_dst32b, cfg.exp8, phase & 3)
    _write_dst_result(dst, dst_rows, res, cfg)


def elwadd(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
           dst_row: int, cfg: MathConfig, accumulate: bool = False,
           bcast_srcb_row: bool = False, bcast_srcb_col: bool = False, phase: int = 0) -> None:
    """ELWADD: ``Dst[8 rows] = (Dst +) SrcA + SrcB`` (``accumulate`` = dest_accum_en).
    ``bcast_srcb_row``: every row uses SrcB row ``srcb_row``; ``bcast_srcb_col``: column 0
    of each SrcB row is used for all columns. A ``phase`` other than 0 scales the sum by
    1/32 and/or 1/128 (documented; rarely wanted)."""
    _elw(dst, srca, srcb, "add", srca_row, srcb_row, dst_row, phase, cfg, accumulate,
         bcast_srcb_row, bcast_srcb_col)


def elwsub(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
           dst_row: int, cfg: MathConfig, accumulate: bool = False,
           bcast_srcb_row: bool = False, bcast_srcb_col: bool = False, phase: int = 0) -> None:
    """ELWSUB: ``Dst[8 rows] = (Dst +) SrcA - SrcB`` (ELWADD with SrcB's sign flipped)."""
    _elw(dst, srca, srcb, "sub", srca_row, srcb_row, dst_row, phase, cfg, accumulate,
         bcast_srcb_row, bcast_srcb_col)


def elwmul(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
           dst_row: int, phase: int, cfg: MathConfig,
           bcast_srcb_row: bool = False, bcast_srcb_col: bool = False) -> None:
    """ELWMUL: ``Dst[8 rows] += SrcA * SrcB`` for one fidelity phase (always accumulates)."""
    _elw(dst, srca, srcb, "mul", srca_row, srcb_row, dst_row, phase, cfg, True,
         bcast_srcb_row, bcast_srcb_col)


# ---- GMPOOL ---------------------------------------------------------------------------------


def gmpool(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
           dst_row: int, cfg: MathConfig) -> None:
    """GMPOOL without argmax: per column, the max of Dst row ``dst_row & ~3`` and the 16 SrcA
    rows (scaled by the exponents of SrcB row ``srcb_row & 0x38``, transposed); the other
    three rows of the 4-row block become 0. Invalid Dst rows read as all bits set (-inf)."""
    style = cfg.style
    is32 = cfg.use_dst32b
    if style == "int8":
        dst_style = "int32"
    elif style == "tf32":
        dst_style = "tf32" if is32 else "bf16"
    else:
        dst_style = "tf32" if is32 else style
    kernels = _jit()
    if kernels is not None:
        kernels.gmpool(dst.bits, dst.valid, dst.phys_table(is32), is32, int(dst_row), srca.cells,
                       srca.matrix_bank, int(srca_row) & 0x30, srcb.cells, srcb.matrix_bank,
                       int(srcb_row) & 0x38, fpu_jit.GM_STYLES[style], fpu_jit.GM_STYLES[dst_style])
        return
    row = dst_row & 0x3FC
    a_rows = ((srca_row & 0x30) + np.arange(16)) & 0x3F
    a = srca.cells[srca.matrix_bank][a_rows].astype(I64)  # [i, j] physical cells
    bvals = srcb.cells[srcb.matrix_bank][srcb_row & 0x38].astype(I64)  # [i]
    if is32:
        dv = dst.read32(row)[0].astype(I64)
    else:
        dv = dst.read16(row)[0].astype(I64) << 16
    if not dst.row_valid(row, is32)[0]:
        dv = np.full(16, 0xFFFFFFFF if is32 else 0xFFFF0000, dtype=I64)
    dsign, dexp, dmag = _gm_read_dst(dv, dst_style)
    best = _gm_key(dsign, dexp, dmag)
    bsign, bexp, bmag = dsign, dexp, dmag
    asign, aexp, amag = _gm_read_src(a, bvals[:, None], style)
    order = [i ^ 4 if i < 8 else i for i in range(16)]
    for i in order:  # 16 vector steps (rows), not per element
        k = _gm_key(asign[i], aexp[i], amag[i])
        take = k >= best
        best = np.where(take, k, best)
        bsign = np.where(take, asign[i], bsign)
        bexp = np.where(take, aexp[i], bexp)
        bmag = np.where(take, amag[i], bmag)
    out = _gm_write_dst(bsign, bexp, bmag, dst_style)
    rows = row + np.arange(4)
    if is32:
        dst.write32(rows, np.vstack([out, np.zeros((3, 16), I64)]))
    else:
        dst.write16(rows, np.vstack([out >> 16, np.zeros((3, 16), I64)]))
    dst.set_valid(rows, is32)


#: GMPOOL's argmax reports SrcA row i (0..7) of the 16-row block as this value
GM_INDEX_OF_ROW = (0, 3, 6, 1, 4, 7, 2, 5)


def gmpool_argmax(dst: Dst, srca: SrcRegs, srcb: SrcRegs, *, srca_row: int, srcb_row: int,
                  dst_row: int, cfg: MathConfig) -> None:
    """GMPOOL with ``max_pool_index_en`` (ArgMax), as the ISA documentation's GMPOOL
    functional model gives it: per column, the max as :func:`gmpool` finds it and, among SrcA
    rows 0..7 of the block only, the index of the last row (in the visiting order 4..7, 0..3)
    that took the max, reported through :data:`GM_INDEX_OF_ROW` plus the Dst value's index
    phase ``((DstVal + 0x100) & 0xF00)``. Dst styles: BF16/FP16 style keeps its own style
    (the max in the high 16 bits, ``IndexPhase | MaxIndex`` in the low bits); TF32 style and
    integer "8" write only ``IndexPhase | MaxIndex`` (integer "32"). With a 16-bit Dst the
    high half is written (so the index is lost) and the other three rows become 0; with
    Dst32b the other three rows become ``(old + 0x100) & 0xF00``. Invalid Dst rows read as
    all bits set, as in :func:`gmpool`, and the four rows become valid."""
    style = cfg.style
    is32 = cfg.use_dst32b
    dst_style = "int32" if style in ("int8", "tf32") else style
    row = dst_row & 0x3FC
    rows = row + np.arange(4)
    a_rows = ((srca_row & 0x30) + np.arange(16)) & 0x3F
    a = srca.cells[srca.matrix_bank][a_rows].astype(I64)
    bvals = srcb.cells[srcb.matrix_bank][srcb_row & 0x38].astype(I64)
    valid = dst.row_valid(rows, is32)
    if is32:
        block = dst.read32(rows).astype(I64)
        block[~valid] = 0xFFFFFFFF
        dv = block[0]
    else:
        dv = dst.read16(row)[0].astype(I64) << 16
        if not valid[0]:
            dv = np.full(16, 0xFFFF0000, dtype=I64)
    dsign, dexp, dmag = _gm_read_dst(dv, dst_style)
    best = _gm_key(dsign, dexp, dmag)
    bsign, bexp, bmag = dsign, dexp, dmag
    index = dv & 0xFF
    phase = (dv + 0x100) & 0xF00
    asign, aexp, amag = _gm_read_src(a, bvals[:, None], style)
    for i in [i ^ 4 if i < 8 else i for i in range(16)]:
        k = _gm_key(asign[i], aexp[i], amag[i])
        take = k >= best
        best = np.where(take, k, best)
        bsign = np.where(take, asign[i], bsign)
        bexp = np.where(take, aexp[i], bexp)
        bmag = np.where(take, amag[i], bmag)
        if i < 8:
            index = np.where(take, (phase >> 4) + GM_INDEX_OF_ROW[i], index)
    result = phase | (index & 0xFF)
    if dst_style != "int32":
        result = _gm_write_dst(bsign, bexp, bmag, dst_style) | result
    if is32:
        others = (block[1:] + 0x100) & 0xF00
        dst.write32(rows, np.vstack([result[None, :], others]))
    else:
        dst.write16(rows, np.vstack([(result >> 16)[None, :], np.zeros((3, 16), I64)]))
    dst.set_valid(rows, is32)


def _gm_key(sign: np.ndarray, exp: np.ndarray, mag: np.ndarray) -> np.ndarray:
    v = (exp.astype(I64) << 10) + mag
    return np.where(sign == 1, -v, v)


def _gm_read_dst(v: np.ndarray, style: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sign = (v >> 31) & 1
    if style == "int32":
        mag = v & 0x3FF
        exp = ((v >> 10) & 0x3F) + (((v >> 24) & 7) << 6)
    elif style == "fp16":
        exp = ((v >> 16) & 0x1F) + 15
        mag = (v >> 21) & 0x3FF
    else:
        exp = ((v >> 16) & 0xFF) + 127
        mag = ((v >> 24) & 0x7F) << 3
        if style == "tf32":
            mag = mag + ((v >> 13) & 7)
    return sign, exp & 0x1FF, mag


def _gm_read_src(a: np.ndarray, b: np.ndarray, style: str
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    aexp = a & 0xFF
    bexp = b & 0xFF
    mag = (a >> 8) & 0x3FF
    sign = a >> 18
    if style == "int8":
        exp = np.zeros_like(a)
    elif style == "fp16":
        exp = (aexp & 0x1F) + (bexp & 0x1F)
    else:
        exp = aexp + bexp
        if style == "bf16":
            mag = mag & 0x3F8
    neg_inf = np.broadcast_to(bexp == 0, a.shape)
    flush = aexp == 0
    sign = np.where(neg_inf, 1, np.where(flush, 0, sign))
    exp = np.where(neg_inf, 0x1FF, np.where(flush, 0, exp & 0x1FF))
    mag = np.where(neg_inf, 0x3FF, np.where(flush, 0, mag))
    return sign, exp, mag


def _gm_write_dst(sign: np.ndarray, exp: np.ndarray, mag: np.ndarray, style: str
                  ) -> np.ndarray:
    if style == "int32":
        return (sign << 31) | ((exp & 7) << 10) | mag
    if style == "fp16":
        e = (exp - 15) & 0x1F
        return np.where((exp & 0x3F) == 0, 0, (sign << 31) | (mag << 21) | (e << 16))
    e = (exp - 127) & 0xFF
    x = (sign << 31) | ((mag & 0x3F8) << 21) | (e << 16)
    if style == "tf32":
        x = x + ((mag & 7) << 13)
    return np.where(exp == 0, 0, x)


# --------------------------------------------------------------------------------------------
# Moves between Dst and Src
# --------------------------------------------------------------------------------------------


def _mov_style(cfg: MathConfig) -> str:
    if cfg.fp16a_force:
        return "fp16"
    s = F.src_style(cfg.srca_fmt)
    return "fp16" if s == "int8" else s


def dst_to_src_cells(values: np.ndarray, cfg: MathConfig, use_dst32b_lo: bool = False
                     ) -> np.ndarray:
    """MOVD2A/MOVD2B conversion of Dst view values (Dst32b words or Dst16b cells) to Src
    cells, by SrcA's style (BF16: truncate to BF16; FP16/Int8: pass through; TF32: truncate)."""
    style = _mov_style(cfg)
    v = np.asarray(values).astype(I64)
    if cfg.use_dst32b:
        if use_dst32b_lo:
            v = ((v << 16) | (v & 0xFFFF)) & 0xFFFFFFFF
        if style == "bf16":
            return F.shuffle_bf16(v >> 16)
        if style == "fp16":
            return F.shuffle_fp16(v >> 16)
        if not use_dst32b_lo:
            return F.shuffle_tf32(v >> 13)
        return (v & 0x1FFF).astype(np.uint32)
    if use_dst32b_lo:
        raise FpuError("UseDst32bLo with a 16-bit Dst is UndefinedBehaviour")
    if style == "bf16":
        return F.shuffle_bf16(v)
    if style == "fp16":
        return F.shuffle_fp16(v)
    raise FpuError("TF32 moves need a 32-bit Dst (UndefinedBehaviour with 16-bit Dst)")


def movd2a(dst: Dst, srca: SrcRegs, *, dst_row: int, src_row: int, cfg: MathConfig,
           four_rows: bool = False, use_dst32b_lo: bool = False) -> None:
    """MOVD2A: 1 or 4 aligned rows of Dst -> ``SrcA[matrix_bank]`` (``src_row`` = SrcRow +
    RWC SrcA; ``dst_row`` = the Dst row sum)."""
    _movd2x(dst, srca, dst_row, src_row, cfg, four_rows, use_dst32b_lo)


def movd2b(dst: Dst, srcb: SrcRegs, *, dst_row: int, src_row: int, cfg: MathConfig,
           four_rows: bool = False, use_dst32b_lo: bool = False) -> None:
    """MOVD2B: as MOVD2A into ``SrcB[matrix_bank]``; the conversion follows ``cfg.srca_fmt``,
    for which the Matrix Unit passes SrcB's implied bank format (or, with implied formats
    disabled, SrcA's configured one), as the official simulator does."""
    _movd2x(dst, srcb, dst_row, src_row, cfg, four_rows, use_dst32b_lo)


def _movd2x(dst: Dst, src: SrcRegs, dst_row: int, src_row: int, cfg: MathConfig,
            four_rows: bool, lo: bool) -> None:
    kernels = _jit()
    if kernels is not None:
        style = _mov_style(cfg)
        if not cfg.use_dst32b:
            dst_to_src_cells(np.zeros(0, I64), cfg, lo)  # the same errors, before any change
        n, drow, srow = (4, int(dst_row) & 0x3FC, int(src_row) & 0x3C) if four_rows else (
            1, int(dst_row) & 0x3FF, int(src_row) & 0x3F)
        kernels.movd2x(dst.bits, dst.valid, dst.phys_table(cfg.use_dst32b), cfg.use_dst32b,
                       drow, n,
                       src.cells, src.matrix_bank, srow, fpu_jit.MOV_STYLES[style], bool(lo))
        return
    if four_rows:
        drows = (dst_row & 0x3FC) + np.arange(4)
        srows = (src_row & 0x3C) + np.arange(4)
    else:
        drows = np.array([dst_row & 0x3FF])
        srows = np.array([src_row & 0x3F])
    vals = dst.read32(drows) if cfg.use_dst32b else dst.read16(drows)
    vals = np.where(dst.row_valid(drows, cfg.use_dst32b)[:, None], vals, 0)  # invalid: 0
    src.write(src.matrix_bank, srows, dst_to_src_cells(vals, cfg, lo))


def src_to_dst_values(cells: np.ndarray, cfg: MathConfig) -> np.ndarray:
    """MOVA2D/MOVB2D conversion of Src cells to 16-bit Dst storage (``Val16b``): exponent-0
    cells flush to 0 unless ``zero_flag_disabled_src``; 8-bit-exponent formats (FP32, TF32,
    BF16, BFP*, INT32, INT16) drop the low 3 mantissa bits, the others (FP16, FP8, BFP*a,
    INT8) the high 3 exponent bits. The conversion follows SrcA's format for both moves."""
    c = np.asarray(cells).astype(I64)
    if not cfg.zero_flag_disabled_src:
        c = c * ((c & 0xFF) != 0)
    if not cfg.fp16a_force and F.src_style(cfg.srca_fmt) in ("bf16", "tf32"):
        return F.unshuffle_bf16(c).astype(I64)
    return F.unshuffle_fp16(c).astype(I64)


def _write_moved(dst: Dst, rows: np.ndarray, cells: np.ndarray, cfg: MathConfig,
                 lo: bool) -> None:
    """The store of MOVA2D/MOVB2D: TF32 goes to Dst32b with its low mantissa bits reattached;
    with ``lo`` the 16 bits go to the low half of Dst32b; otherwise to Dst16b."""
    val16 = src_to_dst_values(cells, cfg)
    c = np.asarray(cells).astype(I64)
    if not cfg.zero_flag_disabled_src:
        c = c * ((c & 0xFF) != 0)
    if not cfg.fp16a_force and int(cfg.srca_fmt) == F.DataFormat.TF32:
        low = ((c >> 8) & 7) << 13
        if lo:
            low |= val16
        dst.write32(rows, (val16 << 16) | low)
        dst.set_valid(rows, True)
    elif lo:  # the high halves of an invalid row read as 0 and are written back so
        old = np.where(dst.row_valid(rows, True)[:, None], dst.read32(rows), 0)
        dst.write32(rows, (old & 0xFFFF0000) | val16)
        dst.set_valid(rows, True)
    else:
        dst.write16(rows, val16)
        dst.set_valid(rows, False)


def _src2dst(dst: Dst, src: SrcRegs, drow0: int, n: int, srow0: int, sstep: int,
             col0: bool, cfg: MathConfig, lo: bool, premask: int = F.SRC_MASK) -> bool:
    """MOVA2D/MOVB2D on the compiled path; False when it is not available."""
    kernels = _jit()
    if kernels is None:
        return False
    bf16 = not cfg.fp16a_force and F.src_style(cfg.srca_fmt) in ("bf16", "tf32")
    tf32 = not cfg.fp16a_force and int(cfg.srca_fmt) == F.DataFormat.TF32
    kernels.src2dst(dst.bits, dst.valid, dst.phys_table(False), dst.phys_table(True), drow0, n,
                    src.cells, src.matrix_bank, srow0, sstep, bool(col0),
                    not cfg.zero_flag_disabled_src, bf16, tf32, bool(lo), premask)
    return True


def movb2d_premask(srcb_fmt: int) -> int:
    """The bits of a SrcB cell MOVB2D keeps before converting by SrcA's format: SrcB's own
    format first drops what it does not hold, the high 3 exponent bits for FP16 and the low 3
    mantissa bits for every format but TF32 (the official simulator)."""
    if int(srcb_fmt) == F.DataFormat.FLOAT16:
        return F.SRC_MASK & ~0xE0
    if int(srcb_fmt) == F.DataFormat.TF32:
        return F.SRC_MASK
    return F.SRC_MASK & ~0x700


def mova2d(dst: Dst, srca: SrcRegs, *, src_row: int, dst_row: int, cfg: MathConfig,
           eight_rows: bool = True, use_dst32b_lo: bool = False) -> None:
    """MOVA2D: 1 or 8 aligned rows of ``SrcA[matrix_bank]`` -> Dst (see :func:`_write_moved`
    for which view is written: Dst16b for BF16/FP16/Int8 even when Dst is 32-bit, as the
    documentation's model does)."""
    n = 8 if eight_rows else 1
    if _src2dst(dst, srca, int(dst_row) & (0x400 - n), n, int(src_row) & (0x40 - n), 1,
                False, cfg, use_dst32b_lo):
        return
    srows = ((src_row & (0x40 - n)) + np.arange(n)) & 0x3F
    drows = ((dst_row & (0x400 - n)) + np.arange(n)) & 0x3FF
    _write_moved(dst, drows, srca.cells[srca.matrix_bank][srows], cfg, use_dst32b_lo)


def movb2d(dst: Dst, srcb: SrcRegs, *, src_row: int, dst_row: int, cfg: MathConfig,
           four_rows: bool = False, bcast_row_to8: bool = False, bcast_col0: bool = False,
           use_dst32b_lo: bool = False) -> None:
    """MOVB2D: 1 or 4 rows of ``SrcB[matrix_bank]`` -> Dst; ``bcast_row_to8`` copies one SrcB
    row into 8 Dst rows, ``bcast_col0`` replicates column 0 across the row. Exponent-0 cells are
    flushed (unless disabled), then masked by ``cfg.srcb_fmt`` (:func:`movb2d_premask`), then
    converted by ``cfg.srca_fmt``;
    the caller passes SrcB's implied format for both unless the thread disables implied
    formats."""
    src_row, dst_row = int(src_row), int(dst_row)
    if bcast_row_to8:
        fast = (dst_row & 0x3F8, 8, src_row & 0x3F, 0)
    elif four_rows:
        fast = (dst_row & 0x3FC, 4, src_row & 0x3C, 1)
    else:
        fast = (dst_row & 0x3FF, 1, src_row & 0x3F, 1)
    premask = movb2d_premask(cfg.srcb_fmt)
    if _src2dst(dst, srcb, *fast, bcast_col0, cfg, use_dst32b_lo, premask):
        return
    if bcast_row_to8:
        srows = np.full(8, src_row & 0x3F)
        drows = (dst_row & 0x3F8) + np.arange(8)
    elif four_rows:
        srows = (src_row & 0x3C) + np.arange(4)
        drows = (dst_row & 0x3FC) + np.arange(4)
    else:
        srows = np.array([src_row & 0x3F])
        drows = np.array([dst_row & 0x3FF])
    cells = srcb.cells[srcb.matrix_bank][srows]
    if not cfg.zero_flag_disabled_src:  # the flush looks at the cell before the mask
        cells = np.where((cells & 0xFF) == 0, 0, cells)
    cells = cells & premask
    if bcast_col0:
        cells = np.repeat(cells[:, :1], 16, axis=1)
    _write_moved(dst, drows & 0x3FF, cells, replace(cfg, zero_flag_disabled_src=True),
                 use_dst32b_lo)


def movb2a(srca: SrcRegs, srcb: SrcRegs, *, srcb_row: int, srca_row: int,
           four_rows: bool = False, flush: bool = True) -> None:
    """MOVB2A: 1 or 4 aligned rows of ``SrcB[matrix_bank]`` -> ``SrcA[matrix_bank]``; with
    ``flush`` (``ALU_ACC_CTRL_Zero_Flag_disabled_src`` clear) cells whose exponent field is
    0 arrive as 0, as MOVA2D/MOVB2D flush them (the official simulator does so)."""
    kernels = _jit()
    if kernels is not None:
        n, mask = (4, 0x3C) if four_rows else (1, 0x3F)
        kernels.copy_rows(srca.cells, srca.matrix_bank, int(srca_row) & mask, srcb.cells,
                          srcb.matrix_bank, int(srcb_row) & mask, n, bool(flush))
        return
    if four_rows:
        brows = (srcb_row & 0x3C) + np.arange(4)
        arows = (srca_row & 0x3C) + np.arange(4)
    else:
        brows = np.array([srcb_row & 0x3F])
        arows = np.array([srca_row & 0x3F])
    cells = srcb.cells[srcb.matrix_bank][brows]
    if flush:
        cells = np.where((cells & 0xFF) == 0, 0, cells)
    srca.write(srca.matrix_bank, arows, cells)
