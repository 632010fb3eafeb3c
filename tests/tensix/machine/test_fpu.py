"""Matrix Unit mechanisms beyond the oracle vectors: integer "8" math, invalid Dst rows as the
identity, broadcasts, GMPOOL / GAPOOL, the MOV* conversions, overflow and configuration errors."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.regfiles import Dst, SrcRegs

BF16 = fpu.MathConfig()
BF16_32 = fpu.MathConfig(fp32_dst=True)
FP16 = fpu.MathConfig(srca_fmt=1, srcb_fmt=1)
TF32_32 = fpu.MathConfig(srca_fmt=4, srcb_fmt=4, fp32_dst=True)
INT8 = fpu.MathConfig(srca_fmt=14, srcb_fmt=14, int8_math=True)


def _files() -> tuple[Dst, SrcRegs, SrcRegs]:
    return Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")


def _rand_bf16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.standard_normal(shape).astype(ml_dtypes.bfloat16)


# ---- integer "8" ----------------------------------------------------------------------------


def test_int8_mvmul_four_phases_is_exact_integer_matmul() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(-1023, 1024, (16, 16))
    b = rng.integers(-1023, 1024, (8, 16))
    dst, srca, srcb = _files()
    srca.load(0, a, "int8")
    srcb.load(0, b, "int8")
    dst.write("int32", rng.integers(-10**6, 10**6, (8, 16)), rows=np.arange(8))
    before = dst.read("int32", np.arange(8)).astype(np.int64)
    for phase in range(4):
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=phase, cfg=INT8)
    a_used = np.sign(a) * (np.abs(a) & 0xFF)  # SrcA's two top magnitude bits are ignored
    assert (dst.read("int32", np.arange(8)) == before + b @ a_used).all()


def test_int8_phases_use_documented_bits() -> None:
    dst, srca, srcb = _files()
    srca.load(0, np.full((16, 16), 0b1110_0001), "int8")  # bits 7..5 and 0
    srcb.load(0, np.full((8, 16), 0b1_0000_0011), "int8")  # bit 8 and bits 1..0
    dst.invalidate_physical(slice(None))
    fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=3, cfg=INT8)
    assert (dst.read("int32", 0) == 16 * (0b1 * 0b11)).all()  # low5(A) x low4(B)
    dst.invalidate_physical(slice(None))
    fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=0, cfg=INT8)
    assert (dst.read("int32", 0) == 16 * (0b1110_0000 * 0b1_0000_0000)).all()


def test_int8_saturates() -> None:
    dst, srca, srcb = _files()
    srca.load(0, np.full((16, 16), 255), "int8")
    srcb.load(0, np.full((8, 16), 1023), "int8")
    dst.write("int32", np.full((8, 16), 2**31 - 100), rows=np.arange(8))
    for phase in range(4):
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=phase, cfg=INT8)
    assert (dst.read("int32", np.arange(8)) == 2**31 - 1).all()


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_int8_elementwise(op: str) -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-255, 256, (8, 16))
    b = rng.integers(-1023, 1024, (8, 16))
    dst, srca, srcb = _files()
    srca.load(0, a, "int8")
    srcb.load(0, b, "int8")
    prior = rng.integers(-5000, 5000, (8, 16))
    dst.write("int32", prior, rows=np.arange(8, 16))
    kw = dict(srca_row=0, srcb_row=0, dst_row=8, cfg=INT8)
    if op == "mul":
        for phase in range(4):
            fpu.elwmul(dst, srca, srcb, phase=phase, **kw)
        want = prior + a * b
    elif op == "add":
        fpu.elwadd(dst, srca, srcb, accumulate=True, **kw)
        want = prior + a + b
    else:
        fpu.elwsub(dst, srca, srcb, accumulate=False, **kw)
        want = a - b
    assert (dst.read("int32", np.arange(8, 16)) == want).all()


# ---- invalid rows, broadcasts ---------------------------------------------------------------


@pytest.mark.parametrize("cfg", [BF16, BF16_32, FP16, TF32_32], ids=["bf16", "fp32", "fp16",
                                                                      "tf32"])
def test_invalid_rows_read_as_zero_and_become_valid(cfg: fpu.MathConfig) -> None:
    rng = np.random.default_rng(3)
    fmt = {"bf16": "bf16", "fp16": "fp16", "tf32": "tf32"}[cfg.style]
    vals = rng.standard_normal((64, 16)).astype(np.float32)
    results = []
    for garbage in (False, True):
        dst, srca, srcb = _files()
        srca.load(0, vals, fmt)
        srcb.load(0, vals[::-1], fmt)
        if garbage:  # stale bits, rows marked invalid as ZEROACC does
            dst.bits[:] = rng.integers(0, 2**16, dst.bits.shape)
            dst.invalidate_physical(slice(None))
        else:
            dst.bits[:] = 0
        fpu.mvmul(dst, srca, srcb, srca_row=16, srcb_row=8, dst_row=24, phase=0, cfg=cfg)
        rows = np.arange(24, 32)
        assert dst.row_valid(rows, cfg.use_dst32b).all()
        results.append(dst.read32(rows) if cfg.use_dst32b else dst.read16(rows))
    assert (results[0] == results[1]).all()


def test_elwadd_accumulate_into_invalid_rows_equals_no_accumulate() -> None:
    rng = np.random.default_rng(4)
    dst, srca, srcb = _files()
    srca.load(0, _rand_bf16(rng, (8, 16)), "bf16")
    srcb.load(0, _rand_bf16(rng, (8, 16)), "bf16")
    dst.bits[:] = 0x3F80
    fpu.elwadd(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16, accumulate=False)
    plain = dst.read16(np.arange(8))
    dst.bits[:] = 0x3F80
    dst.invalidate_physical(slice(0, 8))
    fpu.elwadd(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16, accumulate=True)
    assert (dst.read16(np.arange(8)) == plain).all()
    fpu.elwadd(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16, accumulate=True)
    doubled = dst.read("bf16", np.arange(8)).astype(np.float32)  # now (a + b) + (a + b)
    plain_v = F.dst_to_values(plain, "bf16").astype(np.float32)
    assert (doubled == 2 * plain_v).all() and (doubled != plain_v).any()


def test_elw_broadcasts() -> None:
    rng = np.random.default_rng(5)
    dst, srca, srcb = _files()
    a = _rand_bf16(rng, (8, 16))
    b = _rand_bf16(rng, (64, 16))
    srca.load(0, a, "bf16")
    srcb.load(0, b, "bf16")
    fpu.elwmul(dst, srca, srcb, srca_row=0, srcb_row=19, dst_row=0, phase=0, cfg=BF16_32,
               bcast_srcb_row=True)
    row = dst.read("fp32", np.arange(8))
    ref, rs, rb = _files()
    rs.load(0, a, "bf16")
    rb.load(0, np.repeat(b[19:20], 8, axis=0), "bf16")
    fpu.elwmul(ref, rs, rb, srca_row=0, srcb_row=0, dst_row=0, phase=0, cfg=BF16_32)
    assert (row == ref.read("fp32", np.arange(8))).all()
    fpu.elwadd(dst, srca, srcb, srca_row=0, srcb_row=8, dst_row=8, cfg=BF16_32,
               bcast_srcb_col=True)
    col = dst.read("fp32", np.arange(8, 16))
    rb.load(0, np.repeat(b[8:16, :1], 16, axis=1), "bf16")
    fpu.elwadd(ref, rs, rb, srca_row=0, srcb_row=0, dst_row=8, cfg=BF16_32)
    assert (col == ref.read("fp32", np.arange(8, 16))).all()


@pytest.mark.parametrize("phase,scale", [(0, 1), (1, 32), (2, 128), (3, 4096)])
def test_elwadd_fidelity_phase_divides_the_sum(phase: int, scale: int) -> None:
    rng = np.random.default_rng(15)
    a = rng.integers(-64, 64, (8, 16)).astype(np.float32)
    b = rng.integers(-64, 64, (8, 16)).astype(np.float32)
    prior = rng.integers(-64, 64, (8, 16)).astype(np.float32)
    dst, srca, srcb = _files()
    srca.load(0, a, "bf16")
    srcb.load(0, b, "bf16")
    dst.write("fp32", prior)
    fpu.elwsub(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16_32,
               accumulate=True, phase=phase)
    assert (dst.read("fp32", np.arange(8)) == prior + (a - b) / scale).all()


def test_mvmul_srcb_row_broadcast_writes_even_rows() -> None:
    rng = np.random.default_rng(6)
    dst, srca, srcb = _files()
    srca.load(0, _rand_bf16(rng, (16, 16)), "bf16")
    srcb.load(0, _rand_bf16(rng, (64, 16)), "bf16")
    dst.write("fp32", np.full((8, 16), 7.0, np.float32))
    fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=13, dst_row=0, phase=0, cfg=BF16_32,
              bcast_srcb_row=True)
    out = dst.read("fp32", np.arange(8))
    assert (out[1::2] == 7.0).all() and (out[0::2] != 7.0).all()
    assert (out[0] == out[2]).all() and (out[0] == out[6]).all()
    ref, rs, rb = _files()
    rs.cells[:] = srca.cells
    rb.load(0, np.repeat(srcb.dump(0, "bf16", 13), 8, axis=0), "bf16")
    ref.write("fp32", np.full((8, 16), 7.0, np.float32))
    fpu.mvmul(ref, rs, rb, srca_row=0, srcb_row=0, dst_row=0, phase=0, cfg=BF16_32)
    assert (out[0] == ref.read("fp32", 0)).all()


def test_gapool_is_a_four_row_mvmul() -> None:
    rng = np.random.default_rng(7)
    dst, srca, srcb = _files()
    srca.load(0, _rand_bf16(rng, (64, 16)), "bf16")
    srcb.load(0, _rand_bf16(rng, (64, 16)), "bf16")
    dst.invalidate_physical(slice(None))
    fpu.mvmul(dst, srca, srcb, srca_row=32, srcb_row=16, dst_row=0, phase=1, cfg=BF16_32)
    fpu.gapool(dst, srca, srcb, srca_row=32, srcb_row=16, dst_row=13, phase=1, cfg=BF16_32)
    assert (dst.read32(np.arange(12, 16)) == dst.read32(np.arange(4))).all()
    assert not dst.row_valid(16, True)


# ---- GMPOOL --------------------------------------------------------------------------------


@pytest.mark.parametrize("cfg", [BF16, BF16_32], ids=["bf16dst", "fp32dst"])
def test_gmpool_column_max_into_invalid_row(cfg: fpu.MathConfig) -> None:
    rng = np.random.default_rng(8)
    a = _rand_bf16(rng, (16, 16))
    dst, srca, srcb = _files()
    srca.load(0, a, "bf16", row=16)
    srcb.load(0, np.ones((1, 16), np.float32), "bf16", row=8)
    dst.bits[:] = 0x1234
    dst.invalidate_physical(slice(None))
    fpu.gmpool(dst, srca, srcb, srca_row=16, srcb_row=8, dst_row=5, cfg=cfg)
    fmt = "fp32" if cfg.use_dst32b else "bf16"
    out = dst.read(fmt, np.arange(4, 8)).astype(np.float32)
    assert (out[0] == a.astype(np.float32).max(axis=0)).all()
    assert (out[1:] == 0).all()
    # A valid Dst value larger than the column max survives.
    keep = dst.read(fmt, np.arange(4, 5)).astype(np.float32)
    keep[0, 3] = 100.0
    dst.write(fmt, keep, rows=[4])
    fpu.gmpool(dst, srca, srcb, srca_row=16, srcb_row=8, dst_row=4, cfg=cfg)
    assert dst.read(fmt, 4)[0, 3] == 100.0


def test_gmpool_scales_rows_by_srcb_exponents() -> None:
    rng = np.random.default_rng(9)
    a = np.abs(_rand_bf16(rng, (16, 16)).astype(np.float32)).astype(ml_dtypes.bfloat16)
    k = rng.integers(-3, 4, 16)
    dst, srca, srcb = _files()
    srca.load(0, a, "bf16")
    srcb.load(0, (np.exp2(k) * 1.75)[None, :].astype(np.float32), "bf16")  # mantissa ignored
    dst.invalidate_physical(slice(None))
    fpu.gmpool(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16)
    want = (a.astype(np.float32) * np.exp2(k)[:, None]).max(axis=0)
    assert (dst.read("bf16", 0)[0].astype(np.float32) == want).all()


# ---- moves ---------------------------------------------------------------------------------


def test_movd2a_fp32_to_bf16_truncates_and_tf32_round_trips() -> None:
    rng = np.random.default_rng(10)
    vals = rng.standard_normal((4, 16)).astype(np.float32)
    dst, srca, _ = _files()
    dst.write("fp32", vals, rows=np.arange(4, 8))
    fpu.movd2a(dst, srca, dst_row=6, src_row=9, cfg=BF16_32, four_rows=True)
    trunc = (vals.view(np.uint32) >> 16).astype(np.uint16).view(ml_dtypes.bfloat16)
    assert (srca.dump(0, "bf16", np.arange(8, 12)).view(np.uint16) == trunc.view(np.uint16)).all()
    fpu.movd2a(dst, srca, dst_row=4, src_row=32, cfg=TF32_32, four_rows=True)
    fpu.mova2d(dst, srca, src_row=32, dst_row=16, cfg=TF32_32)
    back = dst.read("fp32", np.arange(16, 20)).view(np.uint32)
    assert (back == (vals.view(np.uint32) & ~np.uint32(0x1FFF))).all()


def test_fp16_moves_pass_through_and_flush_zero_exponents() -> None:
    rng = np.random.default_rng(11)
    vals = (rng.standard_normal((1, 16)) * 100).astype(np.float16)
    vals[0, 3] = np.float16(2.0**-20)  # exponent 0 in FP16: a denormal
    dst, srca, srcb = _files()
    dst.write("fp16", vals, rows=[40])
    fpu.movd2b(dst, srcb, dst_row=40, src_row=2, cfg=FP16)
    assert (srcb.dump(0, "fp16", 2) == vals).all()
    fpu.movb2d(dst, srcb, src_row=2, dst_row=50, cfg=FP16)
    out = dst.read("fp16", 50)
    assert out[0, 3] == 0 and (np.delete(out[0], 3) == np.delete(vals[0], 3)).all()
    raw_cfg = fpu.MathConfig(srca_fmt=1, srcb_fmt=1, zero_flag_disabled_src=True)
    fpu.movb2d(dst, srcb, src_row=2, dst_row=51, cfg=raw_cfg)
    assert (dst.read("fp16", 51) == vals).all()


def test_movb2d_broadcasts_and_movb2a() -> None:
    rng = np.random.default_rng(12)
    b = _rand_bf16(rng, (64, 16))
    dst, srca, srcb = _files()
    srcb.load(0, b, "bf16")
    fpu.movb2d(dst, srcb, src_row=5, dst_row=17, cfg=BF16, bcast_row_to8=True)
    assert (dst.read("bf16", np.arange(16, 24)) == np.repeat(b[5:6], 8, axis=0)).all()
    fpu.movb2d(dst, srcb, src_row=9, dst_row=33, cfg=BF16, four_rows=True, bcast_col0=True)
    assert (dst.read("bf16", np.arange(32, 36)) == np.repeat(b[8:12, :1], 16, axis=1)).all()
    fpu.movb2a(srca, srcb, srcb_row=43, srca_row=21, four_rows=True)
    assert (srca.read(0, np.arange(20, 24)) == srcb.read(0, np.arange(40, 44))).all()
    fpu.movb2a(srca, srcb, srcb_row=63, srca_row=0)
    assert (srca.read(0, 0) == srcb.read(0, 63)).all()


def test_mova2d_views_follow_the_format() -> None:
    """BF16 goes to Dst16b even with a 32-bit Dst; TF32 goes to Dst32b even with a 16-bit Dst
    (both as the documented model writes them)."""
    dst, srca, _ = _files()
    srca.load(0, np.full((8, 16), -1.5, np.float32), "bf16")
    fpu.mova2d(dst, srca, src_row=0, dst_row=16, cfg=BF16_32)
    assert (dst.read16(np.arange(16, 24)) == F.bf16_to_dst16(np.uint16(0xBFC0))).all()
    assert dst.row_valid(np.arange(16, 24), False).all()
    t = np.full((8, 16), 1 + 2**-9 + 2**-10, np.float32)
    srca.load(0, t, "tf32", row=8)
    fpu.mova2d(dst, srca, src_row=8, dst_row=40, cfg=fpu.MathConfig(srca_fmt=4))
    assert (dst.read("fp32", np.arange(40, 48)) == t).all()


def test_use_dst32b_lo_moves_low_halves() -> None:
    dst, srca, _ = _files()
    dst.write32(np.arange(8), np.full((8, 16), 0xAAAA_3F80, np.uint32))
    fpu.movd2a(dst, srca, dst_row=0, src_row=0, cfg=BF16_32, use_dst32b_lo=True)
    assert srca.read(0, 0)[0, 0] == F.shuffle_bf16(np.uint16(0x3F80))
    fpu.mova2d(dst, srca, src_row=0, dst_row=8, cfg=BF16_32, eight_rows=False,
               use_dst32b_lo=True)
    assert dst.read32(8)[0, 0] == 0x3F80
    with pytest.raises(fpu.FpuError, match="UseDst32bLo"):
        fpu.movd2a(dst, srca, dst_row=0, src_row=0, cfg=BF16, use_dst32b_lo=True)


# ---- rounding edges and errors -------------------------------------------------------------


def test_overflow_saturation_per_dst_format() -> None:
    dst, srca, srcb = _files()
    big = np.full((8, 16), 2.0**100, np.float32)
    srca.load(0, big, "bf16")
    srcb.load(0, big, "bf16")
    dst.invalidate_physical(slice(None))
    fpu.elwmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=0, cfg=BF16)
    assert (dst.read("bf16", 0).view(np.uint16) == 0x7F80).all()  # +Inf
    srca.load(0, np.full((8, 16), 60000.0, np.float16), "fp16")
    srcb.load(0, np.full((8, 16), -4.0, np.float16), "fp16")
    fpu.elwmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=8, phase=0, cfg=FP16)
    assert (F.dst16_to_fp16(dst.read16(8)) == 0xFFFF).all()  # sign | 0x7FFF, not Inf


def test_mixed_fp16_and_bf16_is_an_error() -> None:
    dst, srca, srcb = _files()
    bad = fpu.MathConfig(srca_fmt=1, srcb_fmt=5)
    with pytest.raises(fpu.FpuError, match="FP16 with FP16 only"):
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, phase=0, cfg=bad)
    with pytest.raises(fpu.FpuError, match="32-bit Dst"):
        fpu.movd2a(dst, srca, dst_row=0, src_row=0, cfg=fpu.MathConfig(srca_fmt=4))


def test_math_config_styles() -> None:
    assert BF16.style == "bf16" and not BF16.use_dst32b
    assert TF32_32.style == "tf32" and TF32_32.use_dst32b
    assert INT8.style == "int8" and INT8.use_dst32b
    assert fpu.MathConfig(fp32_dst=True, fp16a_force=True).style == "fp16"
    assert not fpu.MathConfig(fp32_dst=True, fp16a_force=True).use_dst32b
    assert fpu.MathConfig(srca_fmt=F.DataFormat.BFP8_B).style == "bf16"
    assert fpu.MathConfig(srca_fmt=F.DataFormat.LF8).style == "fp16"


@pytest.mark.parametrize("remap", [False, True])
@pytest.mark.parametrize("swizzle", [False, True])
@pytest.mark.parametrize("cfg", [BF16, BF16_32], ids=["16bit", "32bit"])
def test_mvmul_through_adjusted_dst_addressing(remap: bool, swizzle: bool,
                                              cfg: fpu.MathConfig) -> None:
    """The arithmetic sees the same values whatever the Adj16/Adj32 config bits; only the
    physical rows (and their valid bits) move."""
    rng = np.random.default_rng(16)
    a, b = _rand_bf16(rng, (16, 16)), _rand_bf16(rng, (8, 16))
    results = {}
    for bits in ((False, False), (remap, swizzle)):
        dst, srca, srcb = _files()
        dst.remap_addrs, dst.swizzle_32b = bits
        srca.load(0, a, "bf16")
        srcb.load(0, b, "bf16")
        dst.invalidate_physical(slice(None))
        fpu.mvmul(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=40, phase=0, cfg=cfg)
        rows = np.arange(40, 48)
        view = dst.read32(rows) if cfg.use_dst32b else dst.read16(rows)
        phys = dst.phys(rows, cfg.use_dst32b)
        assert dst.valid[phys].all() and dst.valid.sum() == 8
        results[bits] = (view, phys.tolist())
    (v0, p0), (v1, p1) = results[(False, False)], results[(remap, swizzle)]
    assert (v0 == v1).all()
    moved = remap or (swizzle and cfg.use_dst32b)
    assert (p0 != p1) == bool(moved)
