"""C = A x B on Blackhole worker tiles, from the kernels isaforge compiles
(``isaforge/examples/tensix/kernels``, built by ``tools/build_tensix_kernels.py``).

:func:`matmul` plays tt-metal's host: it boots the firmware on each worker tile, puts A, B and
C in DRAM as interleaved buffers of BF16 tiles (one 2048-byte page per 32 x 32 tile, page ``p``
in bank ``p % 8``), configures three circular buffers (A and B: two pages each; C: two pages)
and the runtime arguments, loads the reader (NCRISC), compute (TRISC0-2) and writer (BRISC)
kernels and runs them; each worker computes a contiguous range of the output tiles (row-major
over M x N tiles). Arrays are BF16 bits as uint16: A (M*32, K*32), B (K*32, N*32), C (M*32,
N*32).

:func:`matmul_reference` is what the Matrix Unit model gives for the same tiles, without
RISC-V, CBs, unpackers or packer: per output tile, Dst (FP32) accumulates the 16-MVMUL
sequence over K with the fidelity's phases (:mod:`..machine`), then the packer's FP32 -> BF16
conversion (:func:`~..machine.l1formats.pack_read`: round to nearest, ties away from zero).

Fidelity (``lofi``, ``hifi2``, ``hifi3``, ``hifi4``) is the number of MVMUL phases (1 to 4):
each phase multiplies further mantissa bits of the operands (SrcA 5 + 2 bits... see
:mod:`..machine.fpu`). Documented error against the exact product, relative to
``sum |a| |b|`` of each output: HiFi4 and HiFi3 keep every BF16 mantissa bit, so the error
is the FP32 accumulation's plus the final BF16 rounding (``2**-8``); HiFi2 and LoFi drop low
operand bits (``ERROR_BOUND``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from ..machine import Coprocessor, fpu, fpu_jit
from ..machine import l1formats as L
from .boot import boot
from .errors import TileError
from .host import Host
from .kernels import CircularBuffer, Kernel, launch, load_kernel
from .layout import tilize, untilize
from .loader import Firmware, load_firmware_dir
from .noc import Noc
from .soc import noc_xy, soc
from .tile import Tile

FIDELITY = {"lofi": 1, "hifi2": 2, "hifi3": 3, "hifi4": 4}
#: |C - A @ B| <= bound * (|A| @ |B|) elementwise, per fidelity (tests/tensix/test_matmul.py)
ERROR_BOUND = {"hifi4": 2.0 ** -7, "hifi3": 2.0 ** -7, "hifi2": 2.0 ** -5, "lofi": 2.0 ** -3}
TILE_BYTES = 2048
KERNEL_CONFIG_BASE = 0x20000
CB_BASE = 0x30000
CB_PAGES = 2
DRAM_BASE = 0x100000
KERNELS = {"brisc": "matmul_writer_brisc", "ncrisc": "matmul_reader_ncrisc",
           "trisc0": "matmul_compute_trisc0", "trisc1": "matmul_compute_trisc1",
           "trisc2": "matmul_compute_trisc2"}


def kernel_dir() -> Path:
    return Path(str(resources.files("isaforge") / "examples" / "tensix" / "kernels" / "build"))


def load_kernels(directory: str | Path | None = None) -> dict[str, Kernel]:
    d = Path(directory) if directory is not None else kernel_dir()
    return {core: load_kernel(d / f"{name}.elf") for core, name in KERNELS.items()}


@dataclass
class MatmulStats:
    seconds: float = 0.0
    boot_seconds: float = 0.0
    riscv_instructions: int = 0
    tensix_instructions: int = 0
    tiles: int = 0  # output tiles
    per_worker: list[dict[str, int]] = field(default_factory=list)


def _shapes(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    for name, x in (("A", a), ("B", b)):
        if x.ndim != 2 or x.shape[0] % 32 or x.shape[1] % 32 or not x.size:
            raise TileError(f"{name} must be 2-D with sides that are multiples of 32, not "
                            f"{x.shape}")
        if x.dtype != np.uint16:
            raise TileError(f"{name} must hold BF16 bits as uint16, not {x.dtype}")
    if a.shape[1] != b.shape[0]:
        raise TileError(f"A is {a.shape[0]}x{a.shape[1]} and B {b.shape[0]}x{b.shape[1]}: "
                        f"A's columns must equal B's rows")
    return a.shape[0] // 32, a.shape[1] // 32, b.shape[1] // 32


def _tiles(x: np.ndarray) -> np.ndarray:
    """(rows*32, cols*32) uint16 -> (rows*cols, 1024) tiles in tt-metal's face order."""
    return tilize(x).reshape(-1, 1024)


def _fidelity(fidelity: str) -> int:
    try:
        return FIDELITY[fidelity]
    except KeyError:
        raise TileError(f"unknown fidelity {fidelity!r} (one of "
                        f"{', '.join(FIDELITY)})") from None


def matmul_reference(a: np.ndarray, b: np.ndarray, fidelity: str = "hifi4") -> np.ndarray:
    """The Matrix Unit model's C for BF16 bits ``a``, ``b`` (see the module text)."""
    mt, kt, nt = _shapes(a, b)
    phases = _fidelity(fidelity)
    at, bt = _tiles(a), _tiles(b)
    kernel = (resources.files("isaforge") / "tensix" / "data" / "matmul_kernel.s").read_text()
    out = np.zeros((mt * nt, 1024), np.uint16)
    for t in range(mt * nt):
        m, n = divmod(t, nt)
        cp = Coprocessor()
        cp.load_program(kernel, "matmul_kernel.s")
        cp.threads[1].mop.cfg[1] = phases
        words = list(cp.threads[1].program)
        for k in range(kt):
            if k:
                cp.set_stream(1, words)
            # Dst += SrcB x SrcA: A's tile in SrcB, B's in SrcA (as the unpackers place them)
            cp.load_src("b", 0, L.decode(at[m * kt + k].view(np.uint8), 5, 1024).reshape(64, 16),
                        "bf16")
            cp.load_src("a", 0, L.decode(bt[k * nt + n].view(np.uint8), 5, 1024).reshape(64, 16),
                        "bf16")
            cp.run(max_steps=10_000)
        raw = cp.dst.read("raw32")[:64].reshape(-1)
        out[t] = L.pack_read(raw, True, 5).astype(np.uint16)
    return untilize(out, mt * 32, nt * 32)


def _firmware(firmware: str | Path | Mapping[str, Firmware] | None) -> Mapping[str, Firmware]:
    if firmware is None:
        raise TileError("no firmware given (a directory of tt-metal's Blackhole firmware "
                        "ELFs: brisc.elf ... trisc2.elf)")
    return firmware if isinstance(firmware, Mapping) else load_firmware_dir(firmware)


def matmul(a: np.ndarray, b: np.ndarray, fidelity: str = "hifi4", grid: tuple[int, int] = (1, 1),
           firmware: str | Path | Mapping[str, Firmware] | None = None,
           kernels: Mapping[str, Kernel] | None = None,
           max_steps: int | None = 200_000_000) -> tuple[np.ndarray, MatmulStats]:
    """C = A x B (BF16 bits) on ``grid`` = (rows, columns) worker tiles; the output tiles are
    split into contiguous ranges, one per worker. Returns C and what the run cost."""
    mt, kt, nt = _shapes(a, b)
    phases = _fidelity(fidelity)
    rows, cols = grid
    workers = rows * cols
    if rows < 1 or cols < 1:
        raise TileError(f"a grid needs at least one tile, got {rows}x{cols}")
    layout = soc()
    if cols > layout.worker_grid[0] or rows > layout.worker_grid[1]:
        raise TileError(f"a {rows}x{cols} grid does not fit Blackhole's "
                        f"{layout.worker_grid[1]}x{layout.worker_grid[0]} worker tiles")
    images = _firmware(firmware)
    ks = dict(kernels) if kernels is not None else load_kernels()
    stats = MatmulStats(tiles=mt * nt)
    start = time.perf_counter()
    if fpu.USE_JIT and mt * nt * kt * 16 * phases > fpu.JIT_AFTER:
        fpu_jit.load()  # the MVMULs to come are worth the compiled kernels from the first

    # DRAM: the three interleaved buffers, pages of one tile, on one NOC shared by the tiles
    noc = Noc()
    nbanks = layout.dram_banks
    noc.add_dram_banks([layout.dram_bank_xy(k, 0) for k in range(nbanks)])
    bank_xy = [noc_xy(*layout.dram_bank_xy(k, 0)) for k in range(nbanks)]

    def span(pages: int) -> int:
        return -(-pages // nbanks) * TILE_BYTES

    a_addr = DRAM_BASE
    b_addr = a_addr + span(mt * kt)
    c_addr = b_addr + span(kt * nt)
    for base, tiles in ((a_addr, _tiles(a)), (b_addr, _tiles(b))):
        for p, tile_bits in enumerate(tiles):
            noc.dram_banks[p % nbanks].noc_write(base + (p // nbanks) * TILE_BYTES,
                                                 tile_bits.tobytes())

    total = mt * nt
    cbs = {0: CircularBuffer(CB_BASE, CB_PAGES, TILE_BYTES),
           1: CircularBuffer(CB_BASE + CB_PAGES * TILE_BYTES, CB_PAGES, TILE_BYTES),
           16: CircularBuffer(CB_BASE + 2 * CB_PAGES * TILE_BYTES, CB_PAGES, TILE_BYTES)}
    # tiles run one after the other: they share nothing but DRAM, where each reads A and B
    # and writes its own range of C, so the order cannot change the result
    for w in range(workers):
        first = total * w // workers
        count = total * (w + 1) // workers - first
        if not count:
            continue
        x, y = w % cols, w // cols
        tile = Tile(noc_xy=layout.worker_xy(x, y), noc=noc)
        t0 = time.perf_counter()
        result = boot(images, tile=tile)
        if not result.ok:
            raise TileError(f"worker ({x},{y}): the firmware did not boot: {result.error}")
        stats.boot_seconds += time.perf_counter() - t0
        boot_riscv = sum(c.instructions for c in tile.cores.values())
        boot_tensix = tile.cp.steps
        rtas = {"ncrisc": [a_addr, b_addr, mt, kt, nt, first, count, nbanks, *bank_xy],
                "brisc": [c_addr, first, count, nbanks, *bank_xy],
                "trisc0": [count, kt, phases], "trisc1": [count, kt, phases],
                "trisc2": [count, kt, phases]}
        launch(Host(tile), ks, rtas, cbs, KERNEL_CONFIG_BASE, max_steps)
        riscv = sum(c.instructions for c in tile.cores.values()) - boot_riscv
        tensix = tile.cp.steps - boot_tensix
        stats.riscv_instructions += riscv
        stats.tensix_instructions += tensix
        stats.per_worker.append({"x": x, "y": y, "first": first, "tiles": count,
                                 "riscv_instructions": riscv, "tensix_instructions": tensix})
    out = np.zeros((total, 1024), np.uint16)
    for p in range(total):
        data = noc.dram_banks[p % nbanks].noc_read(c_addr + (p // nbanks) * TILE_BYTES,
                                                    TILE_BYTES)
        out[p] = np.frombuffer(data, np.uint16)
    stats.seconds = time.perf_counter() - start
    return untilize(out, mt * 32, nt * 32), stats


__all__ = ["ERROR_BOUND", "FIDELITY", "MatmulStats", "load_kernels", "matmul",
           "matmul_reference"]
