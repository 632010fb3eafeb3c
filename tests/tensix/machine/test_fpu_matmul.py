"""A 32x32x32 matmul done with repeated MVMULs on the register files, at LoFi, HiFi2, HiFi3 and
HiFi4, in BF16, FP16 and TF32, with FP32 and 16-bit Dst, against an independent scalar
reference written here from the documented arithmetic (mantissa slices per fidelity phase,
group alignment, accumulation with its roundings); and exactness where no rounding can occur.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.regfiles import Dst, SrcRegs

# --------------------------------------------------------------------------------------------
# Independent scalar reference (Python integers, one datum at a time)
# --------------------------------------------------------------------------------------------


def _fields(v: int, fp16: bool, keep_low: bool) -> tuple[int, int, int]:
    """sign, exponent, 10-bit mantissa of a logical Src value as the multiplier sees it."""
    sign = v >> 18
    exp = (v >> 10) & (0x1F if fp16 else 0xFF)
    man = v & 0x3FF
    if not keep_low:
        man &= 0x3F8
    return sign, exp, man


def _align(m: int, d: int, sign: int) -> int:
    """Shift an aligned term right by d: ties up for positive terms, down for negative."""
    if d <= 0:
        return m
    if d >= 31:
        return 0
    return (m + (1 << (d - 1)) - sign) >> d


def _round_right(m: int, r: int) -> int:
    return (m + (1 << (r - 1))) >> r  # half away from zero, on the magnitude


def ref_accumulate(terms: list[tuple[int, int, int]], dst: int, fp32: bool, exp8: bool) -> int:
    """terms: (sign, exponent, mantissa with 1.0 = 2**23); dst: FP32-frame bits."""
    ds, de = dst >> 31, (dst >> 23) & 0xFF
    dm = 0 if de == 0 else (dst & 0x7FFFFF) | (1 << 23)
    top = max([e for _, e, _ in terms] + [de])
    if top <= 0:
        return 0
    aligned = [(s, _align(m, top - e, s)) for s, e, m in terms]
    dm = _align(dm, top - de, 0)
    if not fp32:  # 16-bit Dst: every term first rounded to a multiple of 2**13
        aligned = [(s, (m + 4096 - s) & ~0x1FFF) for s, m in aligned]
        dm = (dm + 4096) & ~0x1FFF
    total = dm if ds == 0 else -dm
    for s, m in aligned:
        total += -m if s else m
    if total == 0:
        return 0
    sign = 1 if total < 0 else 0
    mag = abs(total)
    exp = top + (mag.bit_length() - 24)
    bits = 24 if fp32 else (8 if exp8 else 11)  # significant bits kept
    drop = mag.bit_length() - bits
    if drop > 0:
        mag = _round_right(mag, drop)
        if mag.bit_length() > bits:
            exp += 1
            mag >>= 1
    mant = (mag << (bits - mag.bit_length())) if mag else 0
    mant = (mant << (24 - bits)) & 0x7FFFFF
    if exp <= 0:
        return 0
    if fp32 or exp8:
        return (sign << 31) | (255 << 23) if exp >= 255 else (sign << 31) | (exp << 23) | mant
    if exp >= 32:
        return (sign << 31) | (31 << 23) | (0x3FF << 13)
    return (sign << 31) | (exp << 23) | mant


def ref_dot(avals: list[int], bvals: list[int], dst: int, phase: int, style: str,
            fp32: bool) -> int:
    """One MVMUL output datum: dst + sum_i b[i] * a[i] in ``phase``."""
    fp16 = style == "fp16"
    exp8 = not fp16
    keep_low = style != "bf16"
    adj = -127 if exp8 else (97 if fp32 else -15)
    adj -= 5 * (phase & 1) + 7 * ((phase >> 1) & 1)
    products = []
    for a, b in zip(avals, bvals, strict=True):
        sa, ea, ma = _fields(a, fp16, keep_low)
        sb, eb, mb = _fields(b, fp16, keep_low)
        if ea == 0 or eb == 0:
            products.append((0, max(adj, 0), 0))
            continue
        big_a, big_b = 1024 + ma, 1024 + mb
        slice_a = (big_a >> 1) & 31 if phase & 1 else big_a >> 6
        slice_b = (big_b & 15) << 3 if phase & 2 else big_b >> 4
        products.append((sa ^ sb, ea + eb + adj, slice_a * slice_b))
    groups = []
    for g in (products[:8], products[8:]):
        top = max(e for _, e, _ in g)
        if top <= 0:
            groups.append((0, 0, 0))
            continue
        acc = 0
        for s, e, m in g:
            d = min(top - e, 30)
            v = (2 * m + (1 << d)) >> (d + 1)
            acc += -v if s else v
        groups.append((1 if acc < 0 else 0, top, abs(acc) << 13))
    return ref_accumulate(groups, dst, fp32, exp8)


# --------------------------------------------------------------------------------------------
# The tile layout and the 16-MVMUL sequence of one fidelity phase
# --------------------------------------------------------------------------------------------

SEQUENCE = [  # (srcb_row, srca_row, dst_row) for C = X @ Y, faces in 16-row blocks
    (16 * (2 * r + k) + 8 * h, 16 * (2 * k + c), 16 * (2 * r + c) + 8 * h)
    for r in range(2) for c in range(2) for k in range(2) for h in range(2)
]
FIDELITY = {"LoFi": 1, "HiFi2": 2, "HiFi3": 3, "HiFi4": 4}
STYLE_FMT = {"bf16": F.DataFormat.FLOAT16_B, "fp16": F.DataFormat.FLOAT16,
             "tf32": F.DataFormat.TF32}


def _faces(m: np.ndarray) -> np.ndarray:
    """32x32 -> 64x16 rows: faces 00, 01, 10, 11 stacked."""
    return np.vstack([m[:16, :16], m[:16, 16:], m[16:, :16], m[16:, 16:]])


def _random_tile(rng: np.random.Generator, style: str) -> np.ndarray:
    x = rng.standard_normal((32, 32)) * np.exp2(rng.integers(-3, 4, (32, 32)))
    if style == "bf16":
        return x.astype(ml_dtypes.bfloat16)
    if style == "fp16":
        return x.astype(np.float16)
    return x.astype(np.float32)


def _run_emulator(x: np.ndarray, y: np.ndarray, style: str, fp32: bool, phases: int
                  ) -> np.ndarray:
    cfg = fpu.MathConfig(srca_fmt=STYLE_FMT[style], srcb_fmt=STYLE_FMT[style], fp32_dst=fp32)
    srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
    fmt = "tf32" if style == "tf32" else style
    srca.load(0, _faces(y), fmt)
    srcb.load(0, _faces(x), fmt)
    dst.invalidate_physical(slice(None))  # ZEROACC: Dst = SrcB @ SrcA, not +=
    for phase in range(phases):
        for b_row, a_row, d_row in SEQUENCE:
            fpu.mvmul(dst, srca, srcb, srca_row=a_row, srcb_row=b_row, dst_row=d_row,
                      phase=phase, cfg=cfg)
    rows = np.arange(64)
    if fp32:
        return F.dst32_to_fp32(dst.read32(rows))
    if style == "fp16":
        h = F.dst16_to_fp16(dst.read16(rows)).astype(np.int64)
        return (((h & 0x8000) << 16) | ((h & 0x7FFF) << 13)).astype(np.uint32)
    return F.dst16_to_bf16(dst.read16(rows)).astype(np.uint32) << 16


def _reference(x: np.ndarray, y: np.ndarray, style: str, fp32: bool) -> list[np.ndarray]:
    """Dst (64x16 FP32-frame bits) after each of the 4 phases."""
    fmt = "tf32" if style == "tf32" else style
    a_log = F.src_to_logical(F.values_to_src(_faces(y), fmt)).astype(int).tolist()
    b_log = F.src_to_logical(F.values_to_src(_faces(x), fmt)).astype(int).tolist()
    dst = [[0] * 16 for _ in range(64)]
    snapshots = []
    for phase in range(4):
        for b_row, a_row, d_row in SEQUENCE:
            cols = [[a_log[a_row + i][c] for i in range(16)] for c in range(16)]
            for r in range(8):
                brow = b_log[b_row + r]
                drow = dst[d_row + r]
                for c in range(16):
                    drow[c] = ref_dot(cols[c], brow, drow[c], phase, style, fp32)
        snapshots.append(np.array(dst, dtype=np.uint32))
    return snapshots


def _to_float(bits: np.ndarray, style: str, fp32: bool) -> np.ndarray:
    if fp32 or style != "fp16":
        return bits.view(np.float32).astype(np.float64)
    b = bits.astype(np.int64)
    e = (b >> 23) & 0x1F
    m = ((b >> 13) & 0x3FF) | 0x400
    v = np.where(e == 0, 0.0, m * np.exp2(e - 15 - 10.0))
    return np.where(b >> 31, -v, v)


@pytest.mark.parametrize("fp32", [True, False], ids=["fp32dst", "16bitdst"])
@pytest.mark.parametrize("style", ["bf16", "fp16", "tf32"])
def test_matmul_32x32x32_matches_scalar_reference(style: str, fp32: bool) -> None:
    rng = np.random.default_rng(["bf16", "fp16", "tf32"].index(style) * 2 + fp32)
    x, y = _random_tile(rng, style), _random_tile(rng, style)
    snapshots = _reference(x, y, style, fp32)
    exact = _faces(x.astype(np.float64) @ y.astype(np.float64))
    errors = []
    for name, phases in FIDELITY.items():
        got = _run_emulator(x, y, style, fp32, phases)
        want = snapshots[phases - 1]
        bad = np.argwhere(got != want)
        assert bad.size == 0, (
            f"{name}: {len(bad)} of 1024 datums differ from the reference, first at "
            f"{bad[0].tolist()}: {got[tuple(bad[0])]:#x} vs {want[tuple(bad[0])]:#x}")
        errors.append(np.abs(_to_float(got, style, fp32) - exact).max())
    # More fidelity phases never make the result worse, and HiFi4 beats LoFi.
    assert errors[-1] < errors[0]


# --------------------------------------------------------------------------------------------
# Exactness where no rounding can occur
# --------------------------------------------------------------------------------------------


def _bf16(rng: np.random.Generator, shape: tuple[int, ...], lo: int = -20, hi: int = 20
          ) -> np.ndarray:
    m = rng.integers(128, 256, shape) * rng.choice([-1, 1], shape)
    return (m * np.exp2(rng.integers(lo, hi, shape) - 7.0)).astype(ml_dtypes.bfloat16)


def test_hifi4_bf16_single_products_are_exact_float32() -> None:
    """Each Dst datum = one BF16 x BF16 product (SrcB is a signed permutation-like matrix):
    at HiFi4 with FP32 Dst it equals the exact float32 product of the BF16 values."""
    rng = np.random.default_rng(11)
    cfg = fpu.MathConfig(fp32_dst=True)
    for _ in range(4):
        a_vals = _bf16(rng, (16, 16))
        picks = rng.integers(0, 16, 8)
        b_vals = np.zeros((8, 16), dtype=ml_dtypes.bfloat16)
        scale = _bf16(rng, (8,))
        b_vals[np.arange(8), picks] = scale
        srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
        srca.load(0, a_vals, "bf16")
        srcb.load(0, b_vals, "bf16")
        dst.invalidate_physical(slice(None))
        for phase in range(4):
            fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=40, phase=phase, cfg=cfg)
        got = dst.read("fp32", np.arange(40, 48))
        want = scale.astype(np.float32)[:, None] * a_vals.astype(np.float32)[picks]
        assert (got.view(np.uint32) == want.view(np.uint32)).all()
        # LoFi alone is not exact for these full-mantissa values
        dst.invalidate_physical(slice(None))
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=40, phase=0, cfg=cfg)
        assert (dst.read("fp32", np.arange(40, 48)) != want).any()


def test_hifi4_elwmul_bf16_is_exact_float32() -> None:
    rng = np.random.default_rng(12)
    a, b = _bf16(rng, (8, 16)), _bf16(rng, (8, 16))
    srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
    srca.load(0, a, "bf16", row=8)
    srcb.load(0, b, "bf16", row=16)
    dst.invalidate_physical(slice(None))
    cfg = fpu.MathConfig(fp32_dst=True)
    for phase in range(4):
        fpu.elwmul(dst, srca, srcb, srca_row=8, srcb_row=16, dst_row=8, phase=phase, cfg=cfg)
    want = a.astype(np.float32) * b.astype(np.float32)
    assert (dst.read("fp32", np.arange(8, 16)).view(np.uint32) == want.view(np.uint32)).all()


@pytest.mark.parametrize("style", ["bf16", "fp16", "tf32"])
@pytest.mark.parametrize("fp32", [True, False])
def test_small_integer_matmul_is_exact(style: str, fp32: bool) -> None:
    """Integers |v| <= 16: products and sums are exact at every step, so any fidelity gives
    numpy's float32 matmul exactly (the sums stay below 2**11, exact in FP16 and BF16 only
    where they fit, so 16-bit BF16 Dst is checked on |sum| < 256)."""
    rng = np.random.default_rng(13)
    hi = 16 if (fp32 or style == "fp16") else 3
    x = rng.integers(-hi, hi + 1, (32, 32)).astype(np.float32)
    y = rng.integers(-hi, hi + 1, (32, 32)).astype(np.float32)
    got = _run_emulator(x, y, style, fp32, 4)
    assert (_to_float(got, style, fp32) == _faces(x @ y)).all()


def test_fp16_with_fp32_dst_product_exact() -> None:
    rng = np.random.default_rng(14)
    a = (rng.integers(1024, 2048, (8, 16)) * np.exp2(rng.integers(-12, 4, (8, 16)) - 10.0))
    b = (rng.integers(1024, 2048, (8, 16)) * np.exp2(rng.integers(-12, 4, (8, 16)) - 10.0))
    a, b = a.astype(np.float16), b.astype(np.float16)
    srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
    srca.load(0, a, "fp16")
    srcb.load(0, b, "fp16")
    dst.invalidate_physical(slice(None))
    cfg = fpu.MathConfig(srca_fmt=1, srcb_fmt=1, fp32_dst=True)
    for phase in range(4):
        fpu.elwmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=phase, cfg=cfg)
    # SrcA's mantissa LSB is never used: the exact product of (a without its LSB) and b.
    a_used = (a.view(np.uint16) & ~np.uint16(1)).view(np.float16)
    want = a_used.astype(np.float32) * b.astype(np.float32)
    assert (dst.read("fp32", np.arange(8)) == want).all()


# --------------------------------------------------------------------------------------------
# Random and edge-case operands: kernels against the scalar reference, in every float
# configuration (including FP16 into an FP32 Dst, which the oracle files do not cover)
# --------------------------------------------------------------------------------------------

CONFIGS = [(s, fp32) for s in ("bf16", "fp16", "tf32") for fp32 in (True, False)]


def _edge_values(rng: np.random.Generator, shape: tuple[int, ...], fp16: bool) -> np.ndarray:
    """Logical Src values: random signs and mantissas; exponents bunched, spread, zero, max."""
    top = 31 if fp16 else 255
    centre = rng.integers(1, top + 1)
    e = np.clip(centre + rng.integers(-3, 4, shape), 0, top)
    wild = rng.random(shape) < 0.2
    e = np.where(wild, rng.choice([0, 1, top, rng.integers(0, top + 1)], shape), e)
    man = rng.integers(0, 1024, shape)
    sign = rng.integers(0, 2, shape)
    return (sign << 18) | (e << 10) | man


def _edge_dst(rng: np.random.Generator, shape: tuple[int, ...], style: str, fp32: bool
              ) -> np.ndarray:
    bits = rng.integers(0, 2**32, shape, dtype=np.uint64).astype(np.int64)
    if not fp32 and style == "fp16":
        bits &= 0x8FFFE000  # 5-bit exponent in bits 27..23, 10-bit mantissa
    elif not fp32:
        bits &= 0xFFFF0000
    return np.where(rng.random(shape) < 0.2, 0, bits)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cfg=st.sampled_from(CONFIGS), phase=st.integers(0, 3))
def test_mvmul_kernel_matches_scalar_reference(seed: int, cfg: tuple[str, bool],
                                               phase: int) -> None:
    style, fp32 = cfg
    rng = np.random.default_rng(seed)
    fp16 = style == "fp16"
    a = _edge_values(rng, (16, 16), fp16)
    b = _edge_values(rng, (8, 16), fp16)
    dst = _edge_dst(rng, (8, 16), style, fp32)
    fmt = STYLE_FMT[style]
    got = fpu.mvmul_kernel(fpu.mask_operand(a, fmt, fp16), fpu.mask_operand(b, fmt, fp16),
                           dst, phase, fp32, not fp16)
    for r in range(8):
        for c in range(16):
            want = ref_dot(a[:, c].tolist(), b[r].tolist(), int(dst[r, c]), phase, style, fp32)
            assert int(got[r, c]) == want, (r, c)


def ref_elwadd(a: int, b: int, dst: int, style: str, fp32: bool) -> int:
    """One ELWADD datum: a + b (+ dst), from the documented rules, one value at a time."""
    fp16 = style == "fp16"
    keep_low = style != "bf16"
    terms = []
    for v in (a, b):
        s, e, m = _fields(v, fp16, keep_low)
        terms.append((s, e, m) if e else (0, 0, 0))
    (sa, ea, ma), (sb, eb, mb) = sorted(terms, key=lambda t: (t[1] << 10) | t[2], reverse=True)
    big_a = (1024 | ma) if ea else 0
    big_b = (1024 | mb) if eb else 0
    d = ea - eb
    if d > 0:
        big_b = (big_b + (1 << (d - 1))) >> d if d < 12 else 0
    m = (big_a + big_b if sa == sb else big_a - big_b) << 13
    e = ea
    if fp32 and fp16:
        e = e + 112 if e else 97
    return ref_accumulate([(sa, e, m)], dst, fp32, not fp16)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), cfg=st.sampled_from(CONFIGS),
       accumulate=st.booleans())
def test_elwadd_kernel_matches_scalar_reference(seed: int, cfg: tuple[str, bool],
                                                accumulate: bool) -> None:
    style, fp32 = cfg
    rng = np.random.default_rng(seed)
    fp16 = style == "fp16"
    a = _edge_values(rng, (8, 16), fp16)
    b = np.where(rng.random((8, 16)) < 0.3, a ^ (1 << 18), _edge_values(rng, (8, 16), fp16))
    dst = _edge_dst(rng, (8, 16), style, fp32)
    fmt = STYLE_FMT[style]
    got = fpu.elwadd_kernel(fpu.mask_operand(a, fmt, fp16), fpu.mask_operand(b, fmt, fp16),
                            dst, accumulate, fp32, not fp16)
    for r in range(8):
        for c in range(16):
            d = int(dst[r, c]) if accumulate else 0
            assert int(got[r, c]) == ref_elwadd(int(a[r, c]), int(b[r, c]), d, style, fp32)
