"""Divergences from the official simulator (tenstorrent/ttsim, Blackhole build) that a
differential run of single instructions found (``tools/ttsim_diff.py``), each fixed and
pinned here with the simulator's result as the expected value:

* MOVD2A / MOVD2B read a Dst row that ZEROACC marked invalid as 0 (ttsim's Dst reads return 0
  for an invalid row, whatever bits are stored), not as its stale bits;
* MOVB2D with ``dest_32b_lo`` into an invalid Dst32b row: the row's high halves read as 0 and
  are written back with the new low halves, so the stale high half disappears;
* MOVB2A flushes SrcB cells whose exponent field is 0 to 0 unless
  ``ALU_ACC_CTRL_Zero_Flag_disabled_src`` is set, as MOVA2D and MOVB2D do.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from isaforge.tensix import Coprocessor, assemble


def run(cp: Coprocessor, text: str, thread: int = 0) -> None:
    cp.set_stream(thread, assemble(text))
    cp.run(max_steps=1000)


def test_movd2b_after_zeroacc_reads_zero() -> None:
    # ttsim: Dst all 3.0 (BF16 Dst), TTI_ZEROACC(0, 0, 0, 0, 4), TTI_MOVD2B(0, 0, 0, 0, 4):
    # SrcB row 0 is 0 (we used to copy 0x4040, the stale 3.0)
    cp = Coprocessor()
    cp.dst.write("bf16", np.full((1024, 16), 3.0))
    cp.load_src("b", 0, np.full((64, 16), 1.0), "bf16")
    run(cp, "TTI_ZEROACC(0, 0, 0, 0, 4)\nTTI_MOVD2B(0, 0, 0, 0, 4)\n"
            "TTI_MOVD2B(0, 4, 0, 0, 5)")
    assert (cp.srcb.cells[0, 0] == 0).all()
    # a valid row still moves its value
    assert (cp.srcb.dump(0, "bf16", [4]).astype(np.float32) == 3.0).all()


def test_movd2a_four_rows_after_zeroacc_reads_zero_in_the_cleared_row_only() -> None:
    cp = Coprocessor()
    cp.dst.write("bf16", np.full((1024, 16), -2.0))
    cp.load_src("a", 0, np.full((64, 16), 1.0), "bf16")
    run(cp, "TTI_ZEROACC(0, 0, 0, 0, 9)\nTTI_MOVD2A(0, 0, 0, 2, 8)")
    got = cp.srca.dump(0, "bf16", range(4)).astype(np.float32)
    assert (got[1] == 0).all()
    assert (got[[0, 2, 3]] == -2.0).all()


def test_movb2d_low_half_into_a_cleared_32bit_row() -> None:
    # ttsim: FP32 Dst all -3.0, SrcB 1.5, TTI_ZEROACC(0, 1, 0, 0, 0),
    # TTI_MOVB2D(1, 0, 0, 4, 0): row 0 reads 0x0000407f (we used to read 0xc040407f)
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    cp.dst.write("fp32", np.full((512, 16), -3.0, np.float32))
    cp.load_src("a", 0, np.full((64, 16), 1.5), "bf16")
    cp.load_src("b", 0, np.full((64, 16), 1.5), "bf16")
    run(cp, "TTI_ZEROACC(0, 1, 0, 0, 0)\nTTI_MOVB2D(1, 0, 0, 4, 0)")
    words = cp.dst.read("fp32", range(4)).view(np.uint32)
    assert (words[0] == 0x0000407F).all()
    assert (words[1:] == 0xC040407F).all()  # valid rows keep their high halves
    assert cp.dst.row_valid(range(4), True).all()


def _movb2a(zero_flag_disabled: int) -> np.ndarray:
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Zero_Flag_disabled_src", zero_flag_disabled)
    cp.load_src("a", 0, np.full((64, 16), 7.0), "bf16")
    b = np.full((64, 16), 2.0, np.float32)
    b[0, ::2] = np.float32(1e-39)  # BF16 subnormal: exponent field 0, mantissa not
    cp.load_src("b", 0, b.astype(ml_dtypes.bfloat16), "bf16")
    denormal = cp.srcb.cells[0, 0, 0]
    assert denormal & 0xFF == 0 and denormal != 0
    run(cp, "TTI_MOVB2A(0, 0, 2, 0)")
    return cp.srca.cells[0, 0]


def test_movb2a_flushes_exponent_zero_cells_unless_disabled() -> None:
    flushed = _movb2a(0)
    assert (flushed[::2] == 0).all() and (flushed[1::2] != 0).all()
    kept = _movb2a(1)
    assert (kept[::2] != 0).all() and (kept[::2] & 0xFF == 0).all()


# ---- the format of MOVD2B and MOVB2D (also found by the differential run) ------------------
# ttsim converts the moves into and out of SrcB by the implied format of SrcB's bank (not
# SrcA's), and MOVB2D first masks each cell by SrcB's format (FP16 drops the high 3 exponent
# bits, every format but TF32 the low 3 mantissa bits), then converts by SrcA's.


def test_movb2d_converts_by_the_srcb_banks_implied_format() -> None:
    cp = Coprocessor()
    cp.load_src("a", 0, np.full((64, 16), 1.0), "fp16")  # SrcA's bank implies FP16
    cp.load_src("b", 0, np.full((64, 16), 1.5), "bf16")  # SrcB's bank implies BF16
    run(cp, "TTI_MOVB2D(0, 0, 0, 4, 0)")
    assert (cp.dst.read("bf16", range(4)).astype(np.float32) == 1.5).all()


def test_movd2b_converts_by_the_srcb_banks_implied_format() -> None:
    cp = Coprocessor()
    cp.config.set("ALU_ACC_CTRL_Fp32_enabled", 1)
    value = np.float32(1 + 2 ** -9)  # kept by TF32, not by BF16
    cp.dst.write("fp32", np.full((512, 16), value, np.float32))
    cp.load_src("a", 0, np.zeros((64, 16)), "bf16")  # SrcA's bank implies BF16
    cp.load_src("b", 0, np.zeros((64, 16)), "tf32")  # SrcB's bank implies TF32
    run(cp, "TTI_MOVD2B(0, 0, 0, 0, 4)")
    assert (cp.srcb.dump(0, "tf32", [0]) == value).all()


def test_movb2d_masks_by_srcb_format_then_converts_by_srca_format() -> None:
    cp = Coprocessor()
    cp.thread_config.set(0, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    cp.thread_config.set(0, "DISABLE_IMPLIED_SRCB_FMT_Base", 1)
    cp.config.set("ALU_FORMAT_SPEC_REG0_SrcA", 1)  # FP16: converts to FP16
    cp.config.set("ALU_FORMAT_SPEC_REG1_SrcB", 7)  # BFP4_b: drops the low 3 mantissa bits
    cp.load_src("b", 0, np.full((64, 16), 1 + 2 ** -10), "fp16")
    run(cp, "TTI_MOVB2D(0, 0, 0, 4, 0)")
    assert (cp.dst.read("fp16", range(4)) == 1.0).all()
    cp.config.set("ALU_FORMAT_SPEC_REG1_SrcB", 1)  # FP16 keeps them
    run(cp, "TTI_MOVB2D(0, 0, 0, 4, 0)")
    assert (cp.dst.read("fp16", range(4)) == np.float16(1 + 2 ** -10)).all()


def test_movb2d_flushes_before_masking() -> None:
    """The exponent-0 flush looks at the cell as SrcB holds it: a cell whose exponent is only
    in the 3 high bits FP16 drops is not flushed, it arrives with exponent 0."""
    cp = Coprocessor()
    cp.thread_config.set(0, "DISABLE_IMPLIED_SRCA_FMT_Base", 1)
    cp.thread_config.set(0, "DISABLE_IMPLIED_SRCB_FMT_Base", 1)
    cp.config.set("ALU_FORMAT_SPEC_REG0_SrcA", 5)  # BF16: converts to BF16
    cp.config.set("ALU_FORMAT_SPEC_REG1_SrcB", 1)  # FP16: drops exponent bits 7..5
    cp.load_src("b", 0, np.zeros((64, 16)), "bf16")
    cp.srcb.cells[0, :4] = (0x155 << 8) | 0xE0
    run(cp, "TTI_MOVB2D(0, 0, 0, 4, 0)")
    assert (cp.dst.read("raw", range(4)) == 0x2A00).all()
