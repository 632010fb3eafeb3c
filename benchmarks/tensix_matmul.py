"""Matrix-unit emulation speed at HiFi4 (prints figures; not a test).

    python benchmarks/tensix_matmul.py [--tiles N]

A 32x32x32 tile at HiFi4 is 4 fidelity phases x 16 MVMULs. Figures:

* instruction path: ``fpu.mvmul`` on the register files, one MVMUL at a time, as the
  coprocessor model issues them (MVMULs/s and tiles/s);
* batched kernel: ``fpu.mvmul_kernel`` over many tiles at once (per phase: two dependent steps
  of 8 independent 8x16 blocks per tile), the bit-exact arithmetic without per-call overhead;
* plain numpy: float32 ``@`` of the same tiles, one at a time and as one batched ``matmul``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import ml_dtypes
import numpy as np

from isaforge.tensix import formats as F
from isaforge.tensix import fpu
from isaforge.tensix.regfiles import Dst, SrcRegs

SEQUENCE = [  # (srcb_row, srca_row, dst_row): C = X @ Y with 16x16 faces stacked in rows
    (16 * (2 * r + k) + 8 * h, 16 * (2 * k + c), 16 * (2 * r + c) + 8 * h)
    for r in range(2) for c in range(2) for k in range(2) for h in range(2)
]


def _best(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _faces(m: np.ndarray) -> np.ndarray:
    return np.concatenate([m[..., :16, :16], m[..., :16, 16:], m[..., 16:, :16],
                           m[..., 16:, 16:]], axis=-2)


def instruction_path(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One MVMUL call at a time; returns Dst (tiles, 64, 16) as FP32 bits."""
    out = []
    cfg = fpu.MathConfig(fp32_dst=True)
    srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
    for xt, yt in zip(x, y, strict=True):
        srca.load(0, _faces(yt), "bf16")
        srcb.load(0, _faces(xt), "bf16")
        dst.invalidate_physical(slice(None))
        for phase in range(4):
            for b_row, a_row, d_row in SEQUENCE:
                fpu.mvmul(dst, srca, srcb, srca_row=a_row, srcb_row=b_row, dst_row=d_row,
                          phase=phase, cfg=cfg)
        out.append(F.dst32_to_fp32(dst.read32(np.arange(64))))
    return np.stack(out)


def batched_kernel(x: np.ndarray, y: np.ndarray, chunk: int = 16) -> np.ndarray:
    """All tiles, ``chunk`` at a time (to stay in cache); Dst (tiles, 64, 16) FP32 bits."""
    return np.concatenate([_kernel_chunk(x[i:i + chunk], y[i:i + chunk])
                           for i in range(0, len(x), chunk)])


def _kernel_chunk(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    a = fpu.mask_operand(F.src_to_logical(F.values_to_src(_faces(y), "bf16")), 5, False)
    b = fpu.mask_operand(F.src_to_logical(F.values_to_src(_faces(x), "bf16")), 5, False)
    n = len(x)
    dst = np.zeros((n, 64, 16), dtype=np.int64)
    for phase in range(4):
        for k in range(2):
            steps = [s for s in SEQUENCE if (s[1] // 16) // 2 == k]  # 8 blocks with this k
            a_blk = np.stack([a[:, ar:ar + 16] for _, ar, _ in steps], axis=1)
            b_blk = np.stack([b[:, br:br + 8] for br, _, _ in steps], axis=1)
            rows = np.array([dr for _, _, dr in steps])[:, None] + np.arange(8)
            out = fpu.mvmul_kernel(a_blk, b_blk, dst[:, rows], phase, True, True)
            dst[:, rows] = out
    return dst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiles", type=int, default=256, help="tiles for the batched figures")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n_inst = 8
    x = rng.standard_normal((args.tiles, 32, 32)).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((args.tiles, 32, 32)).astype(ml_dtypes.bfloat16)
    xf, yf = x.astype(np.float32), y.astype(np.float32)

    same = instruction_path(x[:2], y[:2]) == batched_kernel(x[:2], y[:2])
    assert same.all(), "the batched kernel must compute what the instructions compute"
    t_inst = _best(lambda: instruction_path(x[:n_inst], y[:n_inst]), repeat=2) / n_inst
    t_batch = _best(lambda: batched_kernel(x, y), repeat=2) / args.tiles
    t_np_one = _best(lambda: [a @ b for a, b in zip(xf, yf, strict=True)]) / args.tiles
    t_np_batch = _best(lambda: np.matmul(xf, yf)) / args.tiles

    print("Tensix matrix unit, BF16 x BF16 -> FP32 Dst, HiFi4 (4 phases x 16 MVMULs per tile)")
    print(f"  instruction path : {64 / t_inst:10.0f} MVMULs/s  {1 / t_inst:10.1f} tiles/s "
          f"({t_inst * 1e3:.2f} ms/tile)")
    print(f"  batched kernel   : {64 / t_batch:10.0f} MVMULs/s  {1 / t_batch:10.1f} tiles/s "
          f"({t_batch * 1e6:.0f} us/tile, {args.tiles} tiles)")
    print(f"  numpy float32 @  : {1 / t_np_one:10.0f} tiles/s one at a time, "
          f"{1 / t_np_batch:.0f} tiles/s batched")
    print(f"  ratio to numpy (one tile at a time): instruction path {t_inst / t_np_one:.0f}x, "
          f"batched kernel {t_batch / t_np_one:.0f}x (target 20x)")
    print(f"  ratio to numpy (batched matmul)    : instruction path {t_inst / t_np_batch:.0f}x, "
          f"batched kernel {t_batch / t_np_batch:.0f}x")


if __name__ == "__main__":
    main()
