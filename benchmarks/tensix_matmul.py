"""Matrix-unit emulation speed at HiFi4 (prints figures; not a test).

    python benchmarks/tensix_matmul.py [--tiles N] [--inst-tiles N]

A 32x32x32 tile at HiFi4 is 4 fidelity phases x 16 MVMULs. Figures:

* instruction path: ``fpu.mvmul`` on the register files, one MVMUL at a time, as the
  coprocessor model issues them (MVMULs/s and tiles/s): compiled (numba) and numpy;
* MVMUL runs: the 64 MVMULs of a tile as one run on the register files
  (``fpu.mvmul_run``, what ``Coprocessor.run`` does with the MVMULs a MOP queues): per tile,
  the two Src banks are filled with cells and Dst is read back (converted to FP32 for all
  tiles at once);
* batched kernel: many tiles per call (per phase: two dependent steps of 8 independent 8x16
  blocks per tile), ``fpu.mvmul_batch`` (compiled) and ``fpu.mvmul_kernel`` (numpy), the
  bit-exact arithmetic without per-instruction overhead;
* plain numpy: float32 ``@`` of the same tiles, one at a time and as one batched ``matmul``;
* coprocessor, end to end: the bundled kernel ``isaforge/tensix/data/matmul_kernel.s`` (SETC16
  AddrMods, REPLAY, MOP, 64 MVMULs and SETRWCs per tile at HiFi4) run by
  :class:`~isaforge.tensix.machine.coprocessor.Coprocessor` for each tile (``load_program``, two
  ``load_src``, ``run``, read Dst): what ``isaforge tensix run`` costs per tile, on the
  compiled path and on the numpy one;
* coprocessor streaming: how a real matmul kernel runs: set up once (the same file run once;
  its setup time is printed separately), then per tile the unpackers' ``load_src`` of both
  Src banks, the math thread's ZEROACC, SETRWC, MOP, SETRWC (:data:`TILE_STREAM`) and the
  packer's read of Dst as FP32.

The emulated paths but the coprocessor's get their operands as Src values, converted outside
the timing, as numpy gets float32 tiles converted outside it; the coprocessor lines and the
instruction path get BF16 tiles in face order (four 16x16 faces stacked, as tilized tiles sit
in L1), convert them themselves (``load_src``) and read Dst as FP32 (``Dst.read``).

The target (the emulation within 20x of numpy doing the same math) is read on the "MVMUL
runs" line: the Matrix Unit computing a tile, as ``Coprocessor.run`` executes the MVMULs a
MOP queues, with Src filled and Dst read as FP32 per tile. The coprocessor lines add the
work around the math (the Python frontend's decode, Wait Gate, MOP/REPLAY expansion, the
SETRWC/ZEROACC instructions, the BF16 conversions) and are printed beside it.

Times are the best of a few repeats, as wall-clock time and as this process's CPU time. When
other jobs share the cores the wall-clock figures swell; the CPU-time ones much less, and the
ratios are computed from those. The load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np

from isaforge.tensix import assemble
from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine import fpu
from isaforge.tensix.machine.coprocessor import Coprocessor
from isaforge.tensix.machine.regfiles import Dst, SrcRegs
from isaforge.tensix.program import parse_program

KERNEL = Path(fpu.__file__).parents[1] / "data" / "matmul_kernel.s"

SEQUENCE = [  # (srcb_row, srca_row, dst_row): C = X @ Y with 16x16 faces stacked in rows
    (16 * (2 * r + k) + 8 * h, 16 * (2 * k + c), 16 * (2 * r + c) + 8 * h)
    for r in range(2) for c in range(2) for k in range(2) for h in range(2)
]


def _best(fn: Callable[[], object], repeat: int = 3) -> tuple[float, float]:
    """(wall, cpu) seconds of the fastest of ``repeat`` runs (each minimised separately)."""
    wall = cpu = float("inf")
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu


def _faces(m: np.ndarray) -> np.ndarray:
    return np.concatenate([m[..., :16, :16], m[..., :16, 16:], m[..., 16:, :16],
                           m[..., 16:, 16:]], axis=-2)


def instruction_path(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """One MVMUL call at a time on BF16 tiles in face order (:func:`_faces`: (tiles, 64,
    16), as tilized tiles sit in L1); returns Dst (tiles, 64, 16) as FP32 bits."""
    out = []
    cfg = fpu.MathConfig(fp32_dst=True)
    srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
    for xt, yt in zip(x, y, strict=True):
        srca.load(0, yt, "bf16")
        srcb.load(0, xt, "bf16")
        dst.invalidate_physical(slice(None))
        for phase in range(4):
            for b_row, a_row, d_row in SEQUENCE:
                fpu.mvmul(dst, srca, srcb, srca_row=a_row, srcb_row=b_row, dst_row=d_row,
                          phase=phase, cfg=cfg)
        out.append(F.dst32_to_fp32(dst.read32(np.arange(64))))
    return np.stack(out)


def _cells(m: np.ndarray) -> np.ndarray:
    """BF16 tiles (n, 32, 32) -> Src bank cells (n, 64, 16), four 16x16 faces stacked."""
    return F.values_to_src(_faces(m), "bf16").astype(np.uint32)


#: The tile's 64 MVMULs as a run (fpu.run_row per MVMUL), in the kernel's order.
PLAN = np.array([fpu.run_row(a_row, b_row, d_row, phase, False) for phase in range(4)
                 for b_row, a_row, d_row in SEQUENCE], dtype=np.int64)


def run_path(a_cells: np.ndarray, b_cells: np.ndarray) -> np.ndarray:
    """The 64 MVMULs of each tile as one ``fpu.mvmul_run`` on the register files, Dst read
    as FP32 after each; Dst (tiles, 64, 16) as FP32 bits."""
    cfg = fpu.MathConfig(fp32_dst=True)
    srca, srcb, dst = SrcRegs("SrcA"), SrcRegs("SrcB"), Dst()
    out = np.empty((len(a_cells), 64, 16), dtype=np.float32)
    for n, (ac, bc) in enumerate(zip(a_cells, b_cells, strict=True)):
        srca.cells[0] = ac
        srcb.cells[0] = bc
        dst.invalidate_physical(slice(None))
        if not fpu.mvmul_run(dst, srca, srcb, PLAN, cfg):
            for dst_base, _, _, a_row, b_row, _, phase in PLAN:
                fpu.mvmul(dst, srca, srcb, srca_row=int(a_row), srcb_row=int(b_row),
                          dst_row=int(dst_base), phase=int(phase), cfg=cfg)
        out[n] = dst.read("fp32", range(64))
    return out.view(np.uint32)


def coprocessor_path(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The bundled matmul kernel on the Coprocessor, the whole program once per tile, on BF16
    tiles in face order (as :func:`instruction_path`); Dst (tiles, 64, 16) as FP32 bits."""
    prog = parse_program(KERNEL.read_text("utf-8"), str(KERNEL))
    cp = Coprocessor()
    rows = range(64)
    out = []
    for xt, yt in zip(x, y, strict=True):
        cp.load_program(prog)
        cp.load_src("a", 0, yt, "bf16")
        cp.load_src("b", 0, xt, "bf16")
        cp.dst.invalidate_physical(slice(None))
        cp.run(max_steps=10_000)
        out.append(cp.dst.read("fp32", rows))
    return np.stack(out).view(np.uint32)


#: What the math thread's RISC-V core pushes per tile once the kernel is set up (tt-llk's
#: matmul: the MOP between two SETRWCs), after a ZEROACC that clears Dst as the packer's
#: side does between tiles.
TILE_STREAM = assemble("TTI_ZEROACC(3, 0, 0, 0, 0)\nttsetrwc 0,0,0,0,0,15\nttmop 1,0,0\n"
                       "ttsetrwc 0,0,0,0,0,15")


def streaming_setup() -> Coprocessor:
    """A Coprocessor that has run the bundled kernel once (its SETC16s, REPLAY recording and
    MOP configuration stay in the machine), ready for :func:`streaming_path`."""
    cp = Coprocessor()
    cp.load_program(parse_program(KERNEL.read_text("utf-8"), str(KERNEL)))
    for which in "ab":
        cp.load_src(which, 0, np.zeros((64, 16), np.float32), "bf16")
    cp.run(max_steps=10_000)
    return cp


def streaming_path(cp: Coprocessor, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per tile what a real matmul does once set up (:func:`streaming_setup`): the unpackers
    fill SrcA/SrcB (``load_src``), the math thread gets :data:`TILE_STREAM` and runs, the
    packer reads Dst as FP32; tiles and result as :func:`coprocessor_path`'s."""
    rows = range(64)
    out = []
    for xt, yt in zip(x, y, strict=True):
        cp.load_src("a", 0, yt, "bf16")
        cp.load_src("b", 0, xt, "bf16")
        cp.set_stream(1, TILE_STREAM)
        cp.run(max_steps=10_000)
        out.append(cp.dst.read("fp32", rows))
    return np.stack(out).view(np.uint32)


def batched_operands(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The masked logical Src values the batched kernels take, of all tiles."""
    a = fpu.mask_operand(F.src_to_logical(F.values_to_src(_faces(y), "bf16")), 5, False)
    b = fpu.mask_operand(F.src_to_logical(F.values_to_src(_faces(x), "bf16")), 5, False)
    return a, b


def batched_kernel(a: np.ndarray, b: np.ndarray, kernel: Callable[..., np.ndarray],
                   chunk: int = 64) -> np.ndarray:
    """All tiles (operands from :func:`batched_operands`), ``chunk`` at a time (to stay in
    cache); Dst (tiles, 64, 16) FP32 bits."""
    return np.concatenate([_kernel_chunk(a[i:i + chunk], b[i:i + chunk], kernel)
                           for i in range(0, len(a), chunk)])


def _kernel_chunk(a: np.ndarray, b: np.ndarray, kernel: Callable[..., np.ndarray]
                  ) -> np.ndarray:
    n = len(a)
    dst = np.zeros((n, 64, 16), dtype=np.int64)
    for phase in range(4):
        for k in range(2):
            steps = [s for s in SEQUENCE if (s[1] // 16) // 2 == k]  # 8 blocks with this k
            a_blk = np.stack([a[:, ar:ar + 16] for _, ar, _ in steps], axis=1)
            b_blk = np.stack([b[:, br:br + 8] for br, _, _ in steps], axis=1)
            rows = np.array([dr for _, _, dr in steps])[:, None] + np.arange(8)
            dst[:, rows] = kernel(a_blk, b_blk, dst[:, rows], phase, True, True)
    return dst


def _jit_status() -> str:
    try:
        import numba
    except ImportError:
        return "numba not installed: the compiled figures below are the numpy path"
    cache = Path(fpu.__file__).parent / "__pycache__"
    cached = any(cache.glob("fpu_jit.*.nbi")) if cache.is_dir() else False
    t, c = time.perf_counter(), time.process_time()
    fpu.mvmul(Dst(), SrcRegs(), SrcRegs(), srca_row=0, srcb_row=0, dst_row=0, phase=0,
              cfg=fpu.MathConfig(fp32_dst=True))
    fpu.mvmul_batch(np.zeros((1, 16, 16), np.int64), np.zeros((1, 8, 16), np.int64),
                    np.zeros((1, 8, 16), np.int64), 0, True, True)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    how = "loaded from numba's cache" if cached else "compiled (no cache yet)"
    return (f"numba {numba.__version__}: kernels {how} in {wall:.2f} s wall, {cpu:.2f} s CPU "
            f"(incl. import numba)")


def _line(name: str, wall: float, cpu: float, per_tile_mvmuls: int = 64) -> str:
    return (f"  {name:32s}: {per_tile_mvmuls / cpu:9.0f} MVMULs/s {1 / cpu:9.1f} tiles/s "
            f"{cpu * 1e6:9.0f} us/tile CPU ({wall * 1e6:.0f} us wall)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiles", type=int, default=256, help="tiles for the batched figures")
    ap.add_argument("--inst-tiles", type=int, default=32,
                    help="tiles for the compiled instruction path and the coprocessor (the "
                         "numpy ones run 1/8)")
    args = ap.parse_args()
    fpu.JIT_AFTER = 0  # compiled from the first instruction (the default waits 1000 calls)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(_jit_status())
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.tiles, 32, 32)).astype(ml_dtypes.bfloat16)
    y = rng.standard_normal((args.tiles, 32, 32)).astype(ml_dtypes.bfloat16)
    xf, yf = x.astype(np.float32), y.astype(np.float32)
    a_log, b_log = batched_operands(x, y)
    a_cells, b_cells = _cells(y), _cells(x)
    xs, ys = _faces(x), _faces(y)  # BF16 tiles in face order

    ref = batched_kernel(a_log[:2], b_log[:2], fpu.mvmul_kernel)
    for jit in (True, False):
        fpu.USE_JIT = jit
        same = (instruction_path(xs[:2], ys[:2]) == ref).all()
        same &= (run_path(a_cells[:2], b_cells[:2]) == ref).all()
        same &= (batched_kernel(a_log[:2], b_log[:2], fpu.mvmul_batch) == ref).all()
        same &= (coprocessor_path(xs[:2], ys[:2]) == ref).all()
        same &= (streaming_path(streaming_setup(), xs[:2], ys[:2]) == ref).all()
        assert same, "every path must compute what the numpy kernel computes"
    n_inst = min(args.inst_tiles, args.tiles)
    n_slow = max(1, n_inst // 8)
    fpu.USE_JIT = True
    inst = _best(lambda: instruction_path(xs[:n_inst], ys[:n_inst]), repeat=3)
    cop = _best(lambda: coprocessor_path(xs[:n_inst], ys[:n_inst]), repeat=3)
    setup = _best(streaming_setup, repeat=3)
    cp = streaming_setup()
    stream = _best(lambda: streaming_path(cp, xs[:n_inst], ys[:n_inst]), repeat=3)
    runs = _best(lambda: run_path(a_cells, b_cells), repeat=3)
    batch = _best(lambda: batched_kernel(a_log, b_log, fpu.mvmul_batch), repeat=3)
    fpu.USE_JIT = False
    inst_np = _best(lambda: instruction_path(xs[:n_slow], ys[:n_slow]), repeat=2)
    cop_np = _best(lambda: coprocessor_path(xs[:n_slow], ys[:n_slow]), repeat=2)
    cp = streaming_setup()
    stream_np = _best(lambda: streaming_path(cp, xs[:n_slow], ys[:n_slow]), repeat=2)
    runs_np = _best(lambda: run_path(a_cells[:n_slow], b_cells[:n_slow]), repeat=2)
    batch_np = _best(lambda: batched_kernel(a_log[:64], b_log[:64], fpu.mvmul_kernel),
                     repeat=2)
    fpu.USE_JIT = True
    np_one = _best(lambda: [a @ b for a, b in zip(xf, yf, strict=True)])
    np_batch = _best(lambda: np.matmul(xf, yf))

    per_tile = {
        "coprocessor, compiled": tuple(t / n_inst for t in cop),
        "coprocessor, numpy": tuple(t / n_slow for t in cop_np),
        "coprocessor streaming, compiled": tuple(t / n_inst for t in stream),
        "coprocessor streaming, numpy": tuple(t / n_slow for t in stream_np),
        "instruction path, compiled": tuple(t / n_inst for t in inst),
        "instruction path, numpy": tuple(t / n_slow for t in inst_np),
        "MVMUL runs, compiled": tuple(t / args.tiles for t in runs),
        "MVMUL runs, numpy": tuple(t / n_slow for t in runs_np),
        "batched kernel, compiled": tuple(t / args.tiles for t in batch),
        "batched kernel, numpy": tuple(t / min(64, args.tiles) for t in batch_np),
    }
    one = tuple(t / args.tiles for t in np_one)
    many = tuple(t / args.tiles for t in np_batch)
    print("Tensix matrix unit, BF16 x BF16 -> FP32 Dst, HiFi4 (4 phases x 16 MVMULs per tile)")
    for name, (wall, cpu) in per_tile.items():
        print(_line(name, wall, cpu))
    print(f"  (the streaming lines exclude the kernel's setup, paid once per kernel: "
          f"{setup[1] * 1e3:.1f} ms CPU, compiled)")
    print(f"  {'numpy float32 @':32s}: {1 / one[1]:9.0f} tiles/s one at a time "
          f"({one[1] * 1e6:.2f} us/tile CPU), {1 / many[1]:.0f} tiles/s batched "
          f"({many[1] * 1e6:.2f} us/tile)")
    print(f"  {'ratio to numpy, CPU time':32s}: one tile at a time / one batched matmul "
          "(target: within 20x)")
    for name, (_, cpu) in per_tile.items():
        print(f"    {name:30s} : {cpu / one[1]:8.0f}x / {cpu / many[1]:8.0f}x")


if __name__ == "__main__":
    main()
