"""Tensix data path speed: the unpackers and the packer (prints figures; not a test).

    python benchmarks/tensix_datapath.py [--tiles N]

Unpack and pack of a 32x32 tile (1024 datums) in BF16 and BFP8_B, as ``Coprocessor.run``
executes the instructions, against numpy doing the same conversion on the same tile:

* unpack: one UNPACR of the 1024 datums of a tile in L1 (tile order) into SrcA, from a stream
  of them (each is one instruction through the frontend and the Wait Gate); numpy: the L1
  bytes to float32 (BF16: widen the 16-bit patterns; BFP8_B: each datum's sign and magnitude
  scaled by its block's exponent);
* pack, run: the 16 PACRs of a tile (four Dst rows each, FP32 Dst, to BF16 or BFP8_B in L1)
  replayed from the REPLAY buffer as LLK's MOP issues them, which the coprocessor executes as
  one run (``Packer.pacr_run``), plus the SETADCXY that restarts the packer's counters;
  numpy: FP32 to BF16 with the packer's rounding (half away from zero), or to BFP8_B (shared
  exponent per 16 datums, magnitudes shifted with rounding);
* pack, one at a time: the same 16 PACRs straight from the stream (no replay), each through
  the frontend and the Wait Gate.

The target (a tile's unpack or pack within 20x of numpy doing the same conversion) is read on
the unpack lines and the "pack, run" lines. Times are the best of a few repeats, as CPU time of
this process (wall-clock time swells when other jobs share the cores); the load average is
printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

from isaforge.tensix import Coprocessor, assemble
from isaforge.tensix.machine import l1formats as L

IN_AT, OUT_AT = 0x10000, 0x30000


def _best_cpu(fn: Callable[[], object], repeat: int = 5) -> float:
    """CPU seconds of the fastest of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        c = time.process_time()
        fn()
        best = min(best, time.process_time() - c)
    return best


def _per_call(fn: Callable[[], object], n: int) -> float:
    """CPU microseconds per call of ``fn`` (``n`` calls per measurement)."""
    return _best_cpu(lambda: [fn() for _ in range(n)]) / n * 1e6


# ---- numpy doing the same conversions ---------------------------------------------------------


def numpy_unpack_bf16(data: np.ndarray) -> np.ndarray:
    return (data.view("<u2").astype(np.uint32) << 16).view(np.float32)


def numpy_unpack_bfp8(data: np.ndarray) -> np.ndarray:
    exps = np.repeat(data[:64].astype(np.int32), 16)
    d = data[64:64 + 1024]
    mag = (d & 0x7F).astype(np.float32)
    value = np.ldexp(mag, exps - 127 - 6)
    return np.where(d & 0x80, -value, value)


def numpy_pack_bf16(x: np.ndarray) -> np.ndarray:
    return ((x.view(np.uint32) + 0x8000) >> 16).astype(np.uint16)


def numpy_pack_bfp8(x: np.ndarray) -> np.ndarray:
    b = (x.view(np.uint32) >> 16).reshape(-1, 16).astype(np.int32)
    e = (b >> 7) & 0xFF
    shared = e.max(axis=1, keepdims=True)
    m = (b & 0x7F) | 0x80
    d = np.minimum(shared - e, 8)
    m = np.minimum((m + (1 << d)) >> (d + 1), 127)
    out = np.where(m != 0, m | ((b >> 15) << 7), 0).astype(np.uint8)
    return np.concatenate([shared.astype(np.uint8).reshape(-1), out.reshape(-1)])


# ---- the coprocessor ----------------------------------------------------------------------


def unpacker(fmt: int) -> Coprocessor:
    """A coprocessor set up as LLK sets unpacker 0 up for a whole tile of ``fmt`` in L1."""
    cp = Coprocessor()
    cp.load_program(f"""
.config THCON_SEC0_REG0_TileDescriptor {(1024 << 16) | 0x10 | fmt:#x}
.config THCON_SEC0_REG2_Out_data_format {fmt}
.config THCON_SEC0_REG2_Disable_zero_compress_cntx0 1
.config THCON_SEC0_REG5_Tile_x_dim_cntx0 1024
.config THCON_SEC0_REG5_Dest_cntx0_address 64
.config THCON_SEC0_REG3_Base_address {IN_AT // 16 - 1:#x}
.threadconfig SRCA_SET_SetOvrdWithAddr 1
.gpr 1 0x10001
ttwrcfg 1,0,65
TTI_SETADCXX(1, 1023, 0)
""")
    cp.run()
    return cp


def packer(fmt: int) -> Coprocessor:
    """A coprocessor set up as LLK sets the packer up for an FP32 Dst tile to ``fmt``."""
    cp = Coprocessor()
    inter = 6 if fmt == 6 else 5
    cp.load_program(f"""
.config ALU_ACC_CTRL_Fp32_enabled 1
.config PCK_DEST_RD_CTRL_Read_32b_data 1
.config ALU_FORMAT_SPEC_REG2_Dstacc {inter}
.config THCON_SEC0_REG1_In_data_format {inter}
.config THCON_SEC0_REG1_Out_data_format {fmt}
.config THCON_SEC0_REG1_Exp_section_size 4
.config PACK_COUNTERS_SEC0_pack_reads_per_xy_plane 16
.config PCK_EDGE_OFFSET_SEC0_mask 0xFFFF
.config PCK0_ADDR_CTRL_XY_REG_0_Ystride 64
.config THCON_SEC0_REG1_L1_Dest_addr {OUT_AT // 16 - 1:#x}
.thread 2
ttsetc16 37,4
TTI_SETADCXX(4, 15, 0)
ttreplay 0,16,0,1
""" + "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)\n" * 15
                    + "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)\n")
    cp.run()
    return cp


RESTART = "TTI_SETADCXY(4, 0, 0, 0, 0, 0xB)\n"  # packer ADC channel 0 X/Y and channel 1 Y


def bench_unpack_pack(tiles: int) -> list[tuple[str, float, float]]:
    """(what, coprocessor us per tile, numpy us per tile) of each unpack/pack line."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1024).astype(np.float32)
    rows = []

    for name, fmt, ref in (("BF16", 5, numpy_unpack_bf16), ("BFP8_B", 6, numpy_unpack_bfp8)):
        cp = unpacker(fmt)
        data = L.encode(x, fmt)
        cp.memory.l1[IN_AT:IN_AT + len(data)] = data  # type: ignore[attr-defined]
        word = assemble("TTI_UNPACR(0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1)")

        def unpack(cp: Coprocessor = cp, word: list[int] = word) -> None:
            cp.set_stream(0, word * tiles)
            cp.run()

        unpack()  # warm up (numba, caches)
        ours = _best_cpu(unpack) / tiles * 1e6
        rows.append((f"unpack {name} tile (1 UNPACR of 1024 datums)", ours,
                     _per_call(lambda ref=ref, data=data: ref(data), 200)))

    dst = rng.standard_normal((64, 16)).astype(np.float32)
    for name, fmt, ref in (("BF16", 5, numpy_pack_bf16), ("BFP8_B", 6, numpy_pack_bfp8)):
        cp = packer(fmt)
        cp.dst.write("fp32", dst)
        replayed = assemble(RESTART + "ttreplay 0,16,0,0")
        streamed = assemble(RESTART + "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)\n" * 15
                            + "TTI_PACR(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)")
        for label, words in (("run", replayed), ("one at a time", streamed)):
            def pack(cp: Coprocessor = cp, words: list[int] = words) -> None:
                cp.set_stream(2, words * tiles)
                cp.run()

            for _ in range(5):  # past the compiled kernel's loading
                pack()
            ours = _best_cpu(pack) / tiles * 1e6
            rows.append((f"pack {name} tile, {label} (16 PACRs)", ours,
                         _per_call(lambda ref=ref: ref(dst.reshape(-1)), 200)))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tiles", type=int, default=200, help="tiles per measurement")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; CPU time, best of 5\n")
    print(f"{'':52s} {'tiles/s':>9s} {'us/tile':>8s} {'numpy us':>9s} {'ratio':>6s}")
    for what, ours, ref in bench_unpack_pack(args.tiles):
        print(f"{what:52s} {1e6 / ours:9.0f} {ours:8.1f} {ref:9.2f} {ours / ref:5.1f}x")


if __name__ == "__main__":
    main()
