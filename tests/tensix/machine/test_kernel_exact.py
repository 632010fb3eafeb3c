"""The spec 000 §4 matmul kernel, run as the real kernel runs it (SETC16 AddrMods, REPLAY,
one MOP pass per fidelity phase) on the Coprocessor, gives bit for bit the Dst of the
independent scalar reference of test_fpu_matmul (mantissas sliced per phase, products
grouped, aligned, rounded and accumulated one datum at a time in plain Python).

test_kernel checks the same runs against real-number bounds; this file pins every bit."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.machine import formats as F

from .test_fpu_matmul import FIDELITY, _faces, _random_tile, _reference
from .test_kernel import run_kernel


def _dst_frame_bits(cp, style: str, fp32: bool) -> np.ndarray:
    """Dst rows 0..63 as FP32-frame bit patterns (the reference's representation)."""
    rows = np.arange(64)
    if fp32:
        return F.dst32_to_fp32(cp.dst.read32(rows))
    if style == "fp16":
        h = F.dst16_to_fp16(cp.dst.read16(rows)).astype(np.int64)
        return (((h & 0x8000) << 16) | ((h & 0x7FFF) << 13)).astype(np.uint32)
    return F.dst16_to_bf16(cp.dst.read16(rows)).astype(np.uint32) << 16


@pytest.mark.parametrize("fp32", [True, False], ids=["fp32dst", "16bitdst"])
@pytest.mark.parametrize("style", ["bf16", "fp16", "tf32"])
def test_kernel_dst_equals_scalar_reference_bit_for_bit(style: str, fp32: bool) -> None:
    rng = np.random.default_rng(100 + ["bf16", "fp16", "tf32"].index(style) * 2 + fp32)
    x, y = _random_tile(rng, style), _random_tile(rng, style)  # C = X @ Y
    snapshots = _reference(x, y, style, fp32)
    load = "tf32" if style == "tf32" else style
    for name, phases in FIDELITY.items():
        # the kernel computes Dst = SrcB @ SrcA: SrcB holds X's faces, SrcA Y's
        cp = run_kernel(phases, _faces(y).astype(np.float32), _faces(x).astype(np.float32),
                        load, fp32)
        got = _dst_frame_bits(cp, style, fp32)
        want = snapshots[phases - 1]
        bad = np.argwhere(got != want)
        assert bad.size == 0, (
            f"{name}: {len(bad)} of 1024 datums differ, first at {bad[0].tolist()}: "
            f"{got[tuple(bad[0])]:#x} vs {want[tuple(bad[0])]:#x}")
