"""C = A x B on Blackhole worker tiles, from the kernels isaforge compiles
(``isaforge/examples/tensix/kernels``, built by ``tools/build_tensix_kernels.py``).

:func:`matmul` plays tt-metal's host with the same Host API the add1 example uses
(:meth:`.tile.grid.Grid.launch`: each tile's :meth:`.tile.host.Host.launch`, then go): it boots
the bundled firmware (:mod:`.tile.add1_build`) on a grid of worker tiles
(:class:`.grid_examples.Add1Grid`, one scheduler for all), puts A, B and C in DRAM as
interleaved buffers of BF16 tiles (one 2048-byte page per 32 x 32 tile, page ``p`` in bank
``p % 7``), configures three circular buffers (CB 0: a row of A, K tiles; CB 1: B, two blocks
of up to 16 tiles along K; CB 16: two C tiles) and the runtime arguments, loads the reader
(NCRISC), compute (TRISC0-2) and writer (BRISC) kernels and runs them; each tile computes a
contiguous range of the output tiles (row-major over M x N tiles). Arrays are BF16 bits as
uint16: A (M*32, K*32), B (K*32, N*32), C (M*32, N*32).

:func:`matmul_reference` is what the Matrix Unit model gives for the same tiles, without
RISC-V, CBs, unpackers or packer: per output tile, Dst (FP32) accumulates the 16-MVMUL
sequence over K with the fidelity's phases (:mod:`.machine`), then the packer's FP32 -> BF16
conversion (:func:`~.machine.l1formats.pack_read`: round to nearest, ties away from zero).

Fidelity (``lofi``, ``hifi2``, ``hifi3``, ``hifi4``) is the number of MVMUL phases (1 to 4),
each multiplying further mantissa bits of the operands (:mod:`.machine.fpu`). The error
against the exact product, relative to ``|A| @ |B|`` elementwise, stays within
:data:`ERROR_BOUND`: ``2**-8`` for HiFi4 and HiFi3 (every BF16 mantissa bit takes part: the
FP32 accumulation and the final BF16 rounding), ``2**-7`` for HiFi2, ``2**-5`` for LoFi.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from .examples import DRAM_COORDS
from .grid_examples import Add1Grid
from .machine import Coprocessor, fpu, fpu_jit
from .machine import formats as F
from .machine import l1formats as L
from .tile.add1_build import KERNEL_CONFIG_BASE
from .tile.errors import BadFirmware, TileError
from .tile.layout import tilize, untilize
from .tile.program import (
    CircularBuffer,
    DramBuffer,
    Kernel,
    read_interleaved,
    write_interleaved,
)
from .tile.soc import noc_xy, soc

FIDELITY = {"lofi": 1, "hifi2": 2, "hifi3": 3, "hifi4": 4}
#: |C - A @ B| <= bound * (|A| @ |B|) elementwise, per fidelity (tests/tensix/tile/test_matmul.py)
ERROR_BOUND = {"hifi4": 2.0 ** -8, "hifi3": 2.0 ** -8, "hifi2": 2.0 ** -7, "lofi": 2.0 ** -5}
TILE_BYTES = 2048
CB_A, CB_B, CB_C = 0, 1, 16
#: K is taken in blocks of at most this many tiles (B's CB holds two blocks)
K_BLOCK = 16
#: where the CBs start: after the kernel-config area (arguments, CB table, kernel texts)
CB_BASE = 0x20000
L1_END = 0x180000
DRAM_BASE = 0x100000
#: the DRAM banks (at :data:`.examples.DRAM_COORDS`, as the add1 example has them)
DRAM_BANKS = len(DRAM_COORDS)
#: :func:`auto_processes` uses two processes from this many tile products
AUTO_PRODUCTS = 512
KERNELS = {"brisc": "matmul_writer_brisc", "ncrisc": "matmul_reader_ncrisc",
           "trisc0": "matmul_compute_trisc0", "trisc1": "matmul_compute_trisc1",
           "trisc2": "matmul_compute_trisc2"}


def kernel_dir() -> Path:
    return Path(str(resources.files("isaforge") / "examples" / "tensix" / "kernels" / "elf"))


def load_kernel(path: str | Path, core: str) -> Kernel:
    """A kernel ELF as the Host API takes it: its one loadable segment (text, then constants;
    position independent: ``-mcmodel=medany``, entry at its start) and its symbols."""
    try:
        with open(path, "rb") as f:
            elf = ELFFile(f)
            if elf.elfclass != 32 or elf["e_machine"] != "EM_RISCV":
                raise BadFirmware(f"{path}: not a 32-bit RISC-V ELF")
            segs = [s for s in elf.iter_segments() if s["p_type"] == "PT_LOAD" and s["p_filesz"]]
            if len(segs) != 1 or segs[0]["p_paddr"] != elf["e_entry"]:
                raise BadFirmware(f"{path}: expected one loadable segment starting at the "
                                  f"entry point")
            base, text = segs[0]["p_paddr"], segs[0].data()
            symtab = elf.get_section_by_name(".symtab")
            syms = [(s["st_value"], s.name) for s in (symtab.iter_symbols() if symtab else ())
                    if s["st_info"]["type"] == "STT_FUNC" and s.name]
    except (ELFError, OSError) as e:
        raise BadFirmware(f"{path}: {e}") from None
    return Kernel(core, text, base, syms, name=Path(path).stem)


def load_kernels(directory: str | Path | None = None) -> dict[str, Kernel]:
    d = Path(directory) if directory is not None else kernel_dir()
    return {core: load_kernel(d / f"{name}.elf", core) for core, name in KERNELS.items()}


@dataclass
class MatmulStats:
    seconds: float = 0.0
    boot_seconds: float = 0.0
    riscv_instructions: int = 0
    tensix_instructions: int = 0
    tiles: int = 0  # output tiles
    per_worker: list[dict[str, int]] = field(default_factory=list)
    processes: int = 1
    output: DramBuffer | None = None  # where C is, until it is read back


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


def k_block(kt: int) -> int:
    """The K block: the largest divisor of ``kt`` not above :data:`K_BLOCK`."""
    return max(d for d in range(1, min(kt, K_BLOCK) + 1) if kt % d == 0)


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
            # Dst += SrcB x SrcA: A's tile in SrcB, B's in SrcA (as the unpackers place them:
            # the BF16 bits as they are, NaN payloads included)
            for which, src, bits in (("b", cp.srcb, at[m * kt + k]), ("a", cp.srca,
                                                                     bt[k * nt + n])):
                cp.load_src(which, 0, np.zeros((64, 16), np.float32), "bf16")
                src.cells[0][:64] = F.bf16_bits_to_src(bits).reshape(64, 16)
            cp.run(max_steps=10_000)
        raw = cp.dst.read("raw32")[:64].reshape(-1)
        out[t] = L.pack_read(raw, True, 5).astype(np.uint16)
    return untilize(out, mt * 32, nt * 32)


def matmul(a: np.ndarray, b: np.ndarray, fidelity: str = "hifi4", grid: tuple[int, int] = (1, 1),
           kernels: Mapping[str, Kernel] | None = None,
           max_steps: int | None = 500_000_000,
           processes: int | None = None) -> tuple[np.ndarray, MatmulStats]:
    """C = A x B (BF16 bits) on a ``grid`` = (rows, columns) of worker tiles (one scheduler
    for all, :class:`~.grid.Grid`); each tile computes a contiguous range of the output tiles
    (row-major; tile by tile in the grid's row order). Returns C and what the run cost.

    ``processes``: how many processes run the grid's tiles (:meth:`~.grid.Grid.processes`;
    the same result and counts as one); by default (:func:`auto_processes`) two when the
    grid has several tiles, the machine several cores and the work is large."""
    mt, kt, nt = _shapes(a, b)
    phases = _fidelity(fidelity)
    rows, cols = grid
    if rows < 1 or cols < 1:
        raise TileError(f"a grid needs at least one tile, got {rows}x{cols}")
    layout = soc()
    if cols > layout.worker_grid[0] or rows > layout.worker_grid[1]:
        raise TileError(f"a {rows}x{cols} grid does not fit Blackhole's "
                        f"{layout.worker_grid[1]}x{layout.worker_grid[0]} worker tiles")
    ks = dict(kernels) if kernels is not None else load_kernels()
    # CB 0: one row of A (Kt tiles); CB 1: B in blocks of kb tiles along K, two blocks;
    # CB 16: two C tiles
    kb = k_block(kt)
    cbs, addr = [], CB_BASE
    for i, n in ((CB_A, kt), (CB_B, 2 * kb), (CB_C, 2)):
        cbs.append(CircularBuffer(i, addr, n, TILE_BYTES))
        addr += n * TILE_BYTES
    if addr > L1_END:
        raise TileError(f"K = {kt} tiles needs {addr - CB_BASE:#x} bytes of circular "
                        f"buffers; L1 has {L1_END - CB_BASE:#x} free")
    stats = MatmulStats(tiles=mt * nt)
    start = time.perf_counter()
    if fpu.USE_JIT and mt * nt * kt * 16 * phases > fpu.JIT_AFTER:
        fpu_jit.load()  # the MVMULs to come are worth the compiled kernels from the first

    if processes is None:
        processes = auto_processes(rows * cols, mt * kt * nt)
    dev = Add1Grid(cols, rows, boot=False)
    g = dev.grid
    with g.processes(processes) as used:
        _run(dev, a, b, (mt, kt, nt), phases, ks, cbs, kb, stats, start, max_steps)
    stats.processes = used
    stats.seconds = time.perf_counter() - start
    out = np.frombuffer(read_interleaved(g.noc, stats.output), dtype="<u2").reshape(-1, 1024)
    stats.output = None
    return untilize(out, mt * 32, nt * 32).astype(np.uint16), stats


def auto_processes(tiles: int, products: int) -> int:
    """Two processes for a grid of several tiles with at least :data:`AUTO_PRODUCTS` tile
    products (M x K x N) when a core is free for the second (this process's cores less the
    load average, which counts this process, leave at least half a core); else one. Forking
    and the exchanges cost tens of milliseconds, and the processes wait for each other every
    round: on a machine whose cores are all busy, two are slower than one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if tiles < 2 or products < AUTO_PRODUCTS or (cores or 1) < 2:
        return 1
    return 2 if (cores or 1) - os.getloadavg()[0] >= 0.5 else 1


def _run(dev: Add1Grid, a: np.ndarray, b: np.ndarray, shape: tuple[int, int, int], phases: int,
         ks: dict[str, Kernel], cbs: list[CircularBuffer], kb: int, stats: MatmulStats,
         start: float, max_steps: int | None) -> None:
    """Boot, DRAM buffers, launch and run (the same in every process of the grid)."""
    mt, kt, nt = shape
    g = dev.grid
    rows, cols = g.rows, g.cols
    dev.boot()
    stats.boot_seconds = time.perf_counter() - start
    # DRAM: three interleaved buffers of one-tile pages (page p in bank p % 7)
    per_bank = -(-max(mt * kt, kt * nt, mt * nt) // DRAM_BANKS) * TILE_BYTES
    bufs = [DramBuffer(DRAM_BASE + i * per_bank, TILE_BYTES, n)
            for i, n in enumerate((mt * kt, kt * nt, mt * nt))]
    write_interleaved(g.noc, bufs[0], _tiles(a).astype("<u2").tobytes())
    write_interleaved(g.noc, bufs[1], _tiles(b).astype("<u2").tobytes())
    bank_xy = [noc_xy(x, y) for x, y in DRAM_COORDS]
    total, workers = mt * nt, rows * cols
    shares = [(total * w // workers, total * (w + 1) // workers - total * w // workers)
              for w in range(workers)]

    def args(x: int, y: int) -> dict[str, list[int]]:
        first, count = shares[y * cols + x]
        compute = [count, kt, phases, kb, first, nt]
        return {"ncrisc": [bufs[0].address, bufs[1].address, mt, kt, nt, first, count, kb,
                           DRAM_BANKS, *bank_xy],
                "brisc": [bufs[2].address, first, count, DRAM_BANKS, *bank_xy],
                "trisc0": compute, "trisc1": compute, "trisc2": compute}

    counts0 = [(sum(c.instructions for c in t.cores.values()), t.cp.steps) for t in g.tiles]
    g.launch(ks.values(), cbs, KERNEL_CONFIG_BASE, runtime_args=args)
    g.run_program(max_steps)
    g.run(max_steps)  # until every core waits for the next go
    for tile, (riscv0, tensix0), (first, count) in zip(g.tiles, counts0, shares, strict=True):
        x, y = g.logical_xy(tile)
        riscv = sum(c.instructions for c in tile.cores.values()) - riscv0
        tensix = tile.cp.steps - tensix0
        stats.riscv_instructions += riscv
        stats.tensix_instructions += tensix
        stats.per_worker.append({"x": x, "y": y, "first": first, "tiles": count,
                                 "riscv_instructions": riscv, "tensix_instructions": tensix})
    stats.output = bufs[2]


__all__ = ["AUTO_PRODUCTS", "ERROR_BOUND", "FIDELITY", "MatmulStats", "auto_processes", "k_block",
           "load_kernel", "load_kernels", "matmul", "matmul_reference"]
