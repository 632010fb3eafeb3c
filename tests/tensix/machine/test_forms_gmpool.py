"""GMPOOL with max_pool_index_en (ArgMax), from the ISA documentation's GMPOOL page: the
index of the column max among SrcA rows 0..7 (visited 4..7 then 0..3, ties to the later),
reported through the non-linear map 0,3,6,1,4,7,2,5 plus the Dst value's index phase; the
max itself in the high 16 bits for BF16/FP16 style, index only for TF32 style; with a 16-bit
Dst the index is lost."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.regfiles import Dst, SrcRegs

NL = [0, 3, 6, 1, 4, 7, 2, 5]  # the documented NONLINEAR_I_TRANSFORM
BF16_32 = fpu.MathConfig(fp32_dst=True)
BF16_16 = fpu.MathConfig()
FP16_32 = fpu.MathConfig(srca_fmt=1, srcb_fmt=1, fp32_dst=True)
TF32_32 = fpu.MathConfig(srca_fmt=4, srcb_fmt=4, fp32_dst=True)


def distinct_block(seed: int, dtype: type) -> np.ndarray:
    """16x16 values, distinct within each column, exactly representable in ``dtype``."""
    rng = np.random.default_rng(seed)
    vals = np.stack([rng.permutation(np.arange(1, 17)) for _ in range(16)], axis=1)
    signs = np.where(rng.random((16, 16)) < 0.3, -1, 1)
    return (vals * signs * 0.25).astype(np.float32).astype(dtype)


def files(a: np.ndarray, fmt: str, srca_row: int = 0) -> tuple[Dst, SrcRegs, SrcRegs]:
    dst, srca, srcb = Dst(), SrcRegs("SrcA"), SrcRegs("SrcB")
    srca.load(0, a, fmt, row=srca_row)
    srcb.load(0, np.ones((1, 16), np.float32), fmt, row=0)  # scale 1.0: no scaling
    dst.invalidate_physical(slice(None))
    return dst, srca, srcb


def expected_index(a: np.ndarray, phase: int = 0) -> np.ndarray:
    """Per column: NL[row of the max among rows 0..7] plus phase, from plain numpy."""
    top = a[:8].astype(np.float32)
    return np.array([phase | ((phase >> 4) + NL[int(np.argmax(top[:, j]))])
                     for j in range(16)])


@pytest.mark.parametrize("cfg, fmt, dtype", [(BF16_32, "bf16", ml_dtypes.bfloat16),
                                             (FP16_32, "fp16", np.float16)],
                         ids=["bf16", "fp16"])
def test_argmax_into_invalid_row_max_high_index_low(cfg: fpu.MathConfig, fmt: str,
                                                    dtype: type) -> None:
    a = distinct_block(1, dtype)
    dst, srca, srcb = files(a, fmt)
    fpu.gmpool_argmax(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=6, cfg=cfg)
    words = dst.read32(np.arange(4, 8)).astype(np.int64)
    # all-ones Dst: phase (0xFFFFFFFF + 0x100) & 0xF00 = 0
    np.testing.assert_array_equal(words[0] & 0xFFFF, expected_index(a))
    hi = (words[0] >> 16).astype(np.uint16)
    want = a.astype(np.float32).max(axis=0)
    if fmt == "bf16":
        got = ((hi.astype(np.uint32) >> 8 & 0x7F) << 16 | (hi.astype(np.uint32) >> 15) << 31
               | (hi.astype(np.uint32) & 0xFF) << 23).view(np.float32)
    else:
        e, m, s = hi & 0x1F, hi >> 5 & 0x3FF, hi >> 15
        got = ((s.astype(np.uint16) << 15) | (e.astype(np.uint16) << 10) | m).view(np.float16)
    np.testing.assert_array_equal(got.astype(np.float32), want)
    assert (words[1:] == 0).all()  # (all ones + 0x100) & 0xF00
    assert dst.row_valid(np.arange(4, 8), True).all()


def test_rows_8_to_15_give_the_max_but_not_the_index() -> None:
    a = distinct_block(2, ml_dtypes.bfloat16).astype(np.float32)
    a[8:] = np.abs(a[8:]) + 100.0  # rows 8..15 hold every column's max
    a = a.astype(ml_dtypes.bfloat16)
    dst, srca, srcb = files(a, "bf16")
    fpu.gmpool_argmax(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16_32)
    words = dst.read32(0)[0].astype(np.int64)
    np.testing.assert_array_equal(words & 0xFFFF, expected_index(a))
    np.testing.assert_array_equal(dst.read("fp32", 0)[0].astype(np.float32).view(np.uint32)
                                  >> 16 << 16, a.astype(np.float32).max(axis=0).view(np.uint32))


def test_ties_go_to_the_later_visited_row() -> None:
    a = np.full((16, 16), 0.5, np.float32)
    a[3, :], a[7, :] = 2.0, 2.0  # visited 7 (i_=3) then 3 (i_=7): row 3 wins
    a[0, 0], a[4, 0] = 4.0, 4.0  # column 0: 4 visited first, then 0: row 0 wins
    dst, srca, srcb = files(a.astype(ml_dtypes.bfloat16), "bf16")
    fpu.gmpool_argmax(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=TF32_32)
    idx = dst.read32(0)[0]
    assert idx[0] == NL[0] and (idx[1:] == NL[3]).all()


def test_tf32_style_writes_the_index_only() -> None:
    a = distinct_block(3, np.float32)
    dst, srca, srcb = files(a, "tf32", srca_row=16)
    fpu.gmpool_argmax(dst, srca, srcb, srca_row=17, srcb_row=3, dst_row=9, cfg=TF32_32)
    np.testing.assert_array_equal(dst.read32(8)[0], expected_index(a))


def test_prior_dst_index_phase_and_other_rows() -> None:
    a = distinct_block(4, ml_dtypes.bfloat16)
    dst, srca, srcb = files(a, "bf16")
    # 1000.0 in Dst's FP32 layout (Sign, Man7, Exp8 in the high half): beats every SrcA value
    big = int(F.fp32_to_dst32(np.array([1000.0], np.float32).view(np.uint32))[0]) >> 16 << 16
    prior = np.zeros((4, 16), np.uint32)
    prior[0, :8] = big | 0x1A3  # the Dst max survives: index kept, phase 0x200
    prior[0, 8:] = 0x1A3  # +0.0 loses to the positive values
    prior[1:, :] = np.array([0x0F5, 0x7FF, 0xF00], np.uint32)[:, None]
    dst.write32(np.arange(4), prior)
    dst.set_valid(np.arange(4), True)
    fpu.gmpool_argmax(dst, srca, srcb, srca_row=0, srcb_row=0, dst_row=0, cfg=BF16_32)
    out = dst.read32(np.arange(4)).astype(np.int64)
    assert (out[0, :8] == big | 0x200 | 0xA3).all()
    pos = a.astype(np.float32)
    for j in range(8, 16):
        if pos[:8, j].max() > 0:  # a positive value in rows 0..7 takes the index
            assert out[0, j] & 0xFFFF == 0x200 | (0x20 + NL[int(np.argmax(pos[:8, j]))])
    np.testing.assert_array_equal(out[1:, 0], [0x100, 0x800, 0x000])  # (old + 0x100) & 0xF00


def test_sixteen_bit_dst_loses_the_index_and_equals_plain_gmpool() -> None:
    a = distinct_block(5, ml_dtypes.bfloat16)
    d1, sa, sb = files(a, "bf16")
    d2 = Dst()
    d2.invalidate_physical(slice(None))
    fpu.gmpool_argmax(d1, sa, sb, srca_row=0, srcb_row=0, dst_row=4, cfg=BF16_16)
    fpu.gmpool(d2, sa, sb, srca_row=0, srcb_row=0, dst_row=4, cfg=BF16_16)
    np.testing.assert_array_equal(d1.read16(np.arange(4, 8)), d2.read16(np.arange(4, 8)))


def test_gmpool_instruction_with_max_pool_index_en() -> None:
    a = distinct_block(6, ml_dtypes.bfloat16)
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    cp.load_src("a", 0, a, "bf16")
    cp.load_src("b", 0, np.ones((1, 16), np.float32), "bf16")
    cp.set_stream(0, assemble("TTI_ZEROACC(3, 0, 0, 0, 0)\nTTI_GMPOOL(0, 0, 0, 1, 0)"))
    cp.run(max_steps=100)
    np.testing.assert_array_equal(cp.dst.read32(0)[0].astype(np.int64) & 0xFFFF,
                                  expected_index(a))
