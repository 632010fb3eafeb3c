"""tt-metal's programming examples, run from their real binaries on the tile model.

:func:`add1` runs ``add1_sfpu_single_file`` (the firmware and kernels rebuilt from tt-metal's
objdump listings, :mod:`.tile.add1_build`): the host part is what tt-metal's host does for
that program, played by :class:`Add1Device`:

1. boot: hold the cores, load the five firmware images, write the boot-time mailboxes and the
   bank tables (7 DRAM banks at :data:`DRAM_COORDS`, every L1 bank on this tile), release
   BRISC and wait for the init handshake;
2. per call: tilize the input tiles (32 x 32, four 16 x 16 faces) into an interleaved DRAM
   buffer of 2048-byte BF16 pages (page ``i`` in bank ``i % 7``), allocate the output buffer,
   configure CB 0 (input) and CB 16 (output), two tiles each, give the reader ``(src address,
   n)``, the writer ``(dst address, n)`` and the compute kernel ``(n, 1.0f)`` (the constant
   as fp32 bits) as runtime arguments,
   write the launch message, send go, wait for done, read the output back and untilize it.

The result is what the SFPU computes: ``bf16(x + 1.0)``, see :func:`add1_reference`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from .tile import add1_build as build
from .tile.errors import TileError
from .tile.host import Host
from .tile.noc import Noc
from .tile.noc_regs import NocRegs
from .tile.program import (
    CircularBuffer,
    DramBuffer,
    Kernel,
    read_interleaved,
    tilize,
    untilize,
    write_interleaved,
)
from .tile.tile import Tile

#: the DRAM banks' translated NOC coordinates in this model (one column east of the workers)
DRAM_COORDS = [(17, 12 + k) for k in range(build.NUM_DRAM_BANKS)]
#: where this model's allocator puts the first DRAM buffer in every bank
DRAM_BASE = 0x100000
TILE_BYTES = 32 * 32 * 2
CB_IN, CB_OUT = 0, 16
CB_PAGES = 2
CB_BASE = 0x20000
#: the compute kernel's second runtime argument: the constant it adds, as fp32 bits (1.0);
#: TRISC1 loads it with two SFPLOADI (its low and high 16 bits) before the SFPADD
ONE_F32 = 0x3F800000


class ExampleError(TileError):
    """Bad input to an example (shape, dtype)."""


@dataclass
class RunStats:
    """What one example run did."""

    tiles: int
    riscv_instructions: int
    tensix_instructions: int
    seconds: float
    noc: dict[str, int]


class Add1Device:
    """One worker tile (booted with the add1 build's firmware) and 7 DRAM banks."""

    def __init__(self, quantum: int = 2000, max_steps: int = 5_000_000) -> None:
        self.noc = Noc()
        self.noc.add_dram_banks(DRAM_COORDS)
        self.tile = Tile(mm=build.build_memory_map(), msgs=build.build_dev_msgs(), noc=self.noc,
                         quantum=quantum)
        self.host = Host(self.tile)
        self._next_dram = DRAM_BASE
        self.stats: RunStats | None = None
        self._boot(max_steps)

    def _boot(self, max_steps: int) -> None:
        host, msgs = self.host, self.tile.msgs
        c = msgs.const
        host.hold()
        fw = build.firmware()
        host.load_firmware(fw)
        host.reset_messages()
        host.write_mailbox("core_info.absolute_logical_x", 0)
        host.write_mailbox("core_info.absolute_logical_y", 0)
        self._write_tables()
        host.release("brisc")
        done = c("RUN_MSG_DONE")
        self.tile.run(max_steps, lambda: host.go_signal() == done)
        self.tile.run(max_steps)

    def _write_tables(self) -> None:
        """``noc_bank_table_init`` and the logical -> virtual tables of this build: DRAM
        bank ``k`` at :data:`DRAM_COORDS` ``[k]`` on both NOCs (translated coordinates),
        every L1 bank this tile, all offsets 0."""
        mm = self.tile.mm
        x, y = self.tile.noc_virtual_xy

        def u16(v: int) -> bytes:
            return v.to_bytes(2, "little")
        dram = b"".join(u16((by << 6) | bx) for bx, by in DRAM_COORDS) * 2
        l1 = u16((y << 6) | x) * (2 * build.NUM_L1_BANKS)
        offsets = bytes(4 * build.NUM_DRAM_BANKS) + bytes(4 * build.NUM_L1_BANKS)
        self.host.write_l1(mm.mem("BANK_TO_NOC_SCRATCH"), dram + l1 + offsets)
        cols = bytes((x + i) & 0xFF for i in range(build.LOGICAL_COLS))
        rows = bytes((y + i) & 0xFF for i in range(build.LOGICAL_ROWS))
        self.host.write_l1(mm.mem("LOGICAL_TO_VIRTUAL_SCRATCH"), cols + rows)

    def create_buffer(self, pages: int, page_size: int = TILE_BYTES) -> DramBuffer:
        """Allocate an interleaved DRAM buffer (a bump allocator: buffers are never freed)."""
        buf = DramBuffer(self._next_dram, page_size, pages)
        per_bank = -(-pages // build.NUM_DRAM_BANKS) * page_size
        self._next_dram += (per_bank + 0xFFF) & ~0xFFF
        return buf

    def add1(self, tiles: np.ndarray, max_steps: int = 50_000_000) -> np.ndarray:
        """``tiles``: uint16 BF16 bits, shape (N, 32, 32), N >= 1; the same shape out."""
        a = check_tiles(tiles)
        n = a.shape[0]
        start = time.perf_counter()
        src = self.create_buffer(n)
        dst = self.create_buffer(n)
        write_interleaved(self.noc, src, tilize(a).astype("<u2").tobytes())
        ks, cbs = self.program(src, dst, n)
        riscv0 = sum(cr.instructions for cr in self.tile.cores.values())
        tensix0 = self.tile.cp.steps
        noc0 = self._noc_counts()
        self.host.launch(ks.values(), cbs, build.KERNEL_CONFIG_BASE)
        self.host.run_program(max_steps)
        self.tile.run(max_steps)  # until every core waits for the next go
        out = np.frombuffer(read_interleaved(self.noc, dst), dtype="<u2").reshape(n, 1024)
        noc1 = self._noc_counts()
        self.stats = RunStats(
            n, sum(cr.instructions for cr in self.tile.cores.values()) - riscv0,
            self.tile.cp.steps - tensix0, time.perf_counter() - start,
            {k: noc1[k] - noc0[k] for k in noc1})
        return untilize(out).astype(np.uint16)

    def program(self, src: DramBuffer, dst: DramBuffer, n: int) -> tuple[dict[str, Kernel],
                                                                        list[CircularBuffer]]:
        """The kernels (with their runtime arguments) and CBs of add1 for ``n`` tiles."""
        ks = build.kernels()
        ks["reader"].runtime_args = [src.address, n]
        ks["writer"].runtime_args = [dst.address, n]
        for k in ("compute_trisc0", "compute_trisc1", "compute_trisc2"):
            ks[k].runtime_args = [n, ONE_F32]
        return ks, add1_cbs()

    def _noc_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for w in self.tile.windows:
            if isinstance(w, NocRegs):
                for k, v in w.issued.items():
                    out[k] = out.get(k, 0) + v
        return out


def add1_cbs() -> list[CircularBuffer]:
    """add1's two circular buffers: CB 0 (input) and CB 16 (output), CB_PAGES tiles each,
    one after the other from CB_BASE."""
    return [CircularBuffer(CB_IN, CB_BASE, CB_PAGES, TILE_BYTES),
            CircularBuffer(CB_OUT, CB_BASE + CB_PAGES * TILE_BYTES, CB_PAGES, TILE_BYTES)]


def check_tiles(tiles: np.ndarray) -> np.ndarray:
    a = np.asarray(tiles)
    if a.ndim != 3 or a.shape[1:] != (32, 32) or a.shape[0] < 1:
        raise ExampleError(f"add1 takes tiles of shape (N, 32, 32), N >= 1; got {a.shape}")
    if a.dtype != np.uint16:
        raise ExampleError(f"add1 takes uint16 BF16 bits; got dtype {a.dtype}")
    return a


def add1_reference(tiles: np.ndarray) -> np.ndarray:
    """What the hardware model computes for add1, from its documented steps (numpy only, no
    simulation): BF16 ``x`` widened to FP32; the SFPU's SFPADD (:mod:`.machine.sfpu.fma`)
    treats a denormal input as zero, adds 1.0 with round-to-nearest-even and flushes a
    denormal result to a signed zero; SFPSTORE's BF16 mode (:mod:`.machine.sfpu.convert`)
    *truncates* the FP32 result to its high 16 bits (it does not round to nearest: this is
    where the result differs from numpy's ``bfloat16(x + 1)`` for about 8% of inputs).

    NaN inputs (either sign) come out as +Inf (``0x7f80``): SFPADD gives the canonical NaN
    ``0x7fc00000`` for any NaN input (:mod:`.machine.sfpu.fma`), SFPSTORE keeps ``0x7fc0``, and
    the packer writes a NaN to L1 as an infinity of its sign (:mod:`.machine.l1formats`,
    BF16 from a 16-bit Dst: "NaN to Inf")."""
    a = np.asarray(tiles, dtype=np.uint16)
    bits = a.astype(np.uint32) << 16
    flushed = np.where(bits & 0x7F800000, bits, bits & 0x80000000).astype(np.uint32)
    with np.errstate(over="ignore", invalid="ignore"):
        s = (flushed.view(np.float32) + np.float32(1.0)).view(np.uint32)
    s = np.where(s & 0x7F800000, s, s & 0x80000000).astype(np.uint32)
    out = (s >> 16).astype(np.uint16)
    nan = ((a & 0x7F80) == 0x7F80) & ((a & 0x7F) != 0)
    return np.where(nan, np.uint16(0x7F80), out).astype(np.uint16)


def add1(tiles: np.ndarray, device: Add1Device | None = None) -> np.ndarray:
    """Run tt-metal's add1 program on a tile: ``tiles`` (uint16 BF16 bits, (N, 32, 32)) ->
    BF16 bits of ``x + 1`` as the hardware computes it."""
    return (device or Add1Device()).add1(tiles)


__all__ = ["Add1Device", "ExampleError", "RunStats", "add1", "add1_reference", "check_tiles"]
