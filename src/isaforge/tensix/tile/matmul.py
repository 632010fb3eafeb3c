"""C = A x B on Blackhole worker tiles, from the kernels isaforge compiles
(``isaforge/examples/tensix/kernels``, built by ``tools/build_tensix_kernels.py``).

:func:`matmul` plays tt-metal's host with the same Host API the add1 example uses
(:meth:`~.host.Host.launch`, :meth:`~.host.Host.run_program`): it boots the bundled firmware
(:mod:`.add1_build`) on each worker tile, puts A, B and C in DRAM as interleaved buffers of
BF16 tiles (one 2048-byte page per 32 x 32 tile, page ``p`` in bank ``p % 7``), configures
three circular buffers (CB 0: a row of A, K tiles; CB 1: B, two blocks of up to 16 tiles
along K; CB 16: two C tiles) and the runtime
arguments, loads the reader (NCRISC), compute (TRISC0-2) and writer (BRISC) kernels and runs
them; each worker computes a contiguous range of the output tiles (row-major over M x N
tiles). Arrays are BF16 bits as uint16: A (M*32, K*32), B (K*32, N*32), C (M*32, N*32).

:func:`matmul_reference` is what the Matrix Unit model gives for the same tiles, without
RISC-V, CBs, unpackers or packer: per output tile, Dst (FP32) accumulates the 16-MVMUL
sequence over K with the fidelity's phases (:mod:`..machine`), then the packer's FP32 -> BF16
conversion (:func:`~..machine.l1formats.pack_read`: round to nearest, ties away from zero).

Fidelity (``lofi``, ``hifi2``, ``hifi3``, ``hifi4``) is the number of MVMUL phases (1 to 4),
each multiplying further mantissa bits of the operands (:mod:`..machine.fpu`). The error
against the exact product, relative to ``|A| @ |B|`` elementwise, stays within
:data:`ERROR_BOUND`: ``2**-8`` for HiFi4 and HiFi3 (every BF16 mantissa bit takes part: the
FP32 accumulation and the final BF16 rounding), ``2**-7`` for HiFi2, ``2**-5`` for LoFi.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from ..machine import Coprocessor, fpu, fpu_jit
from ..machine import formats as F
from ..machine import l1formats as L
from .add1_build import KERNEL_CONFIG_BASE, build_dev_msgs, build_memory_map, firmware
from .errors import BadFirmware, TileError
from .host import Host
from .layout import tilize, untilize
from .noc import Noc
from .program import CircularBuffer, DramBuffer, Kernel, read_interleaved, write_interleaved
from .soc import noc_xy, soc
from .tile import Tile

FIDELITY = {"lofi": 1, "hifi2": 2, "hifi3": 3, "hifi4": 4}
#: |C - A @ B| <= bound * (|A| @ |B|) elementwise, per fidelity (tests/tensix/test_matmul.py)
ERROR_BOUND = {"hifi4": 2.0 ** -8, "hifi3": 2.0 ** -8, "hifi2": 2.0 ** -7, "lofi": 2.0 ** -5}
TILE_BYTES = 2048
CB_A, CB_B, CB_C = 0, 1, 16
#: K is taken in blocks of at most this many tiles (B's CB holds two blocks)
K_BLOCK = 16
#: where the CBs start: after the kernel-config area (arguments, CB table, kernel texts)
CB_BASE = 0x20000
L1_END = 0x180000
DRAM_BASE = 0x100000
#: the DRAM banks' translated NOC coordinates (as the bundled firmware's add1 example has them)
DRAM_BANKS = 7
DRAM_COORDS = [(17, 12 + k) for k in range(DRAM_BANKS)]
KERNELS = {"brisc": "matmul_writer_brisc", "ncrisc": "matmul_reader_ncrisc",
           "trisc0": "matmul_compute_trisc0", "trisc1": "matmul_compute_trisc1",
           "trisc2": "matmul_compute_trisc2"}


def kernel_dir() -> Path:
    return Path(str(resources.files("isaforge") / "examples" / "tensix" / "kernels" / "build"))


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


def boot_worker(noc: Noc, xy: tuple[int, int], max_steps: int = 5_000_000) -> Host:
    """A worker tile at NOC coordinate ``xy`` on ``noc``, booted with the bundled firmware
    (the add1 build's, :mod:`.add1_build`) as tt-metal's host boots it."""
    tile = Tile(mm=build_memory_map(), msgs=build_dev_msgs(), noc=noc, noc_xy=xy)
    host = Host(tile)
    msgs = tile.msgs
    c = msgs.const
    host.hold()
    host.load_firmware(firmware())
    launch = msgs.field("mailboxes_t", "launch")
    host.write_l1(msgs.mailbox_base + launch.offset, bytes(launch.size))
    host.write_mailbox("launch_msg_rd_ptr", 0)
    host.write_mailbox("go_message_index", 0)
    for i in range(c("go_message_num_entries")):
        host.write_mailbox(f"go_messages[{i}].all", 0)
    host.write_mailbox("go_messages[0].signal", c("RUN_MSG_INIT"))
    host.release("brisc")
    done = c("RUN_MSG_DONE")
    tile.run(max_steps, lambda: host.go_signal() == done)
    if host.go_signal() != done:
        raise TileError(f"worker at {xy}: the firmware did not finish booting")
    tile.run(max_steps)
    return host


def matmul(a: np.ndarray, b: np.ndarray, fidelity: str = "hifi4", grid: tuple[int, int] = (1, 1),
           kernels: Mapping[str, Kernel] | None = None,
           max_steps: int | None = 500_000_000) -> tuple[np.ndarray, MatmulStats]:
    """C = A x B (BF16 bits) on ``grid`` = (rows, columns) worker tiles; the output tiles are
    split into contiguous ranges, one per worker. Returns C and what the run cost."""
    mt, kt, nt = _shapes(a, b)
    phases = _fidelity(fidelity)
    rows, cols = grid
    if rows < 1 or cols < 1:
        raise TileError(f"a grid needs at least one tile, got {rows}x{cols}")
    layout = soc()
    if cols > layout.worker_grid[0] or rows > layout.worker_grid[1]:
        raise TileError(f"a {rows}x{cols} grid does not fit Blackhole's "
                        f"{layout.worker_grid[1]}x{layout.worker_grid[0]} worker tiles")
    workers = rows * cols
    ks = dict(kernels) if kernels is not None else load_kernels()
    stats = MatmulStats(tiles=mt * nt)
    start = time.perf_counter()
    if fpu.USE_JIT and mt * nt * kt * 16 * phases > fpu.JIT_AFTER:
        fpu_jit.load()  # the MVMULs to come are worth the compiled kernels from the first

    # DRAM: three interleaved buffers of one-tile pages, on one NOC all workers share
    noc = Noc()
    noc.add_dram_banks(DRAM_COORDS)
    bank_xy = [noc_xy(x, y) for x, y in DRAM_COORDS]
    per_bank = -(-max(mt * kt, kt * nt, mt * nt) // DRAM_BANKS) * TILE_BYTES
    bufs = [DramBuffer(DRAM_BASE + i * per_bank, TILE_BYTES, n)
            for i, n in enumerate((mt * kt, kt * nt, mt * nt))]
    write_interleaved(noc, bufs[0], _tiles(a).astype("<u2").tobytes())
    write_interleaved(noc, bufs[1], _tiles(b).astype("<u2").tobytes())
    # CB 0: one row of A (Kt tiles); CB 1: B in blocks of kb tiles along K, two blocks;
    # CB 16: two C tiles
    kb = k_block(kt)
    pages = {CB_A: kt, CB_B: 2 * kb, CB_C: 2}
    cbs, addr = [], CB_BASE
    for i, n in pages.items():
        cbs.append(CircularBuffer(i, addr, n, TILE_BYTES))
        addr += n * TILE_BYTES
    if addr > L1_END:
        raise TileError(f"K = {kt} tiles needs {addr - CB_BASE:#x} bytes of circular "
                        f"buffers; L1 has {L1_END - CB_BASE:#x} free")

    # The workers share nothing but DRAM, from which each reads A and B and to which it
    # writes its own range of C: they run one after the other, and their order cannot
    # change the result.
    total = mt * nt
    for w in range(workers):
        first = total * w // workers
        count = total * (w + 1) // workers - first
        if not count:
            continue
        x, y = w % cols, w // cols
        t0 = time.perf_counter()
        host = boot_worker(noc, layout.worker_xy(x, y))
        tile = host.tile
        stats.boot_seconds += time.perf_counter() - t0
        riscv0 = sum(core.instructions for core in tile.cores.values())
        tensix0 = tile.cp.steps
        compute = [count, kt, phases, kb, first, nt]
        args = {"ncrisc": [bufs[0].address, bufs[1].address, mt, kt, nt, first, count, kb,
                           DRAM_BANKS, *bank_xy],
                "brisc": [bufs[2].address, first, count, DRAM_BANKS, *bank_xy],
                "trisc0": compute, "trisc1": compute, "trisc2": compute}
        run = []
        for core, k in ks.items():
            run.append(Kernel(k.core, k.text, k.link_base, k.symbols, args[core], k.name))
        end = host.launch(run, cbs, KERNEL_CONFIG_BASE)
        if end > CB_BASE:
            raise TileError(f"the kernel config area ends at {end:#x}, past the CBs")
        host.run_program(max_steps)
        tile.run(max_steps)  # until every core waits for the next go
        riscv = sum(core.instructions for core in tile.cores.values()) - riscv0
        tensix = tile.cp.steps - tensix0
        stats.riscv_instructions += riscv
        stats.tensix_instructions += tensix
        stats.per_worker.append({"x": x, "y": y, "first": first, "tiles": count,
                                 "riscv_instructions": riscv, "tensix_instructions": tensix})
    out = np.frombuffer(read_interleaved(noc, bufs[2]), dtype="<u2").reshape(total, 1024)
    stats.seconds = time.perf_counter() - start
    return untilize(out, mt * 32, nt * 32).astype(np.uint16), stats


__all__ = ["ERROR_BOUND", "FIDELITY", "MatmulStats", "boot_worker", "load_kernel",
           "load_kernels", "matmul", "matmul_reference"]
