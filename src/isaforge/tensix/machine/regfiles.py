"""The tile-data register files of the Tensix coprocessor: Dst, SrcA and SrcB.

``Dst`` is ``DstBits[1024][16]`` (uint16) with one valid bit per physical row, seen either as
``Dst16b`` (1024 rows x 16-bit, through :func:`adj16`) or ``Dst32b`` (512 distinct rows x
32-bit, through :func:`adj32`: high half at ``Adj32(r)``, low half at ``Adj32(r) + 8``).
Row indices given to the views are 10-bit (masked); valid bits are indexed by the physical row
(``Adj16(r)`` or ``Adj32(r)``; the ``+ 8`` row is not consulted).

``SrcRegs`` models one of SrcA / SrcB: 2 banks x 64 rows x 16 columns of 19-bit cells in the
physical Src layout (see :mod:`.formats`), the ``AllowedClient`` of each bank,
the bank the Matrix Unit reads (``matrix_bank``), the bank its unpacker writes
(``unpacker_bank``), that unpacker's per-thread row cursor and the Blackhole implied format of
each bank.

These classes hold state and convert formats; the instructions that use them (ZEROACC,
SETDVALID, MVMUL, ...) live elsewhere and call in. The config bits that shape addressing
(``DEST_ACCESS_CFG_remap_addrs`` / ``_swizzle_32b``) are attributes of :class:`Dst` that the
machine keeps in step with its configuration.
"""

from __future__ import annotations

import functools
from enum import IntEnum

import numpy as np

from ...core.errors import IsaforgeError
from . import formats as F
from .dispatch import Changes

ROWS16 = 1024
ROWS32 = 512
COLS = 16
SRC_BANKS = 2
SRC_ROWS = 64


class RegFileError(IsaforgeError):
    """A register-file access outside the file or with a mismatched shape/format."""


def adj16(rows: np.ndarray | int, remap_addrs: bool) -> np.ndarray:
    """Physical DstBits row of Dst16b row(s) ``rows`` (10-bit, masked)."""
    r = np.asarray(rows, dtype=np.int64) & 0x3FF
    if remap_addrs:
        r = (r & 0x3C7) ^ ((r & 0x030) >> 1) ^ ((r & 0x008) << 2)
    return r


def adj32(rows: np.ndarray | int, remap_addrs: bool, swizzle_32b: bool) -> np.ndarray:
    """Physical DstBits row holding the high halves of Dst32b row(s) ``rows``; the low halves
    are 8 rows further."""
    r = adj16(rows, remap_addrs)
    if swizzle_32b:
        r = (r & 0x3F3) ^ ((r & 0x018) >> 1) ^ ((r & 0x004) << 1)
    return ((r & 0x1F8) << 1) | (r & 0x207)


@functools.cache
def _adj_tables(remap_addrs: bool, swizzle_32b: bool) -> tuple[np.ndarray, np.ndarray]:
    rows = np.arange(ROWS16)
    return adj16(rows, remap_addrs), adj32(rows, remap_addrs, swizzle_32b)


def _rows_arg(rows: np.ndarray | int | range | slice | None, count: int) -> np.ndarray:
    if rows is None:
        return np.arange(count, dtype=np.int64)
    if isinstance(rows, slice):
        return np.arange(count, dtype=np.int64)[rows]
    return np.atleast_1d(np.asarray(rows, dtype=np.int64))


class Dst:
    """``DstBits[1024][16]`` + ``DstRowValid[1024]`` and the two views.

    Attributes:
        bits: ``(1024, 16) uint16`` raw storage (zero at construction; the hardware has no
            reset value).
        valid: ``(1024,) bool`` per physical row (True at power-on, as documented).
        remap_addrs, swizzle_32b: the DEST_ACCESS_CFG bits used by :meth:`adj16`/:meth:`adj32`.
    """

    def __init__(self) -> None:
        self.bits = np.zeros((ROWS16, COLS), dtype=np.uint16)
        self.valid = np.ones(ROWS16, dtype=bool)
        self.remap_addrs = False
        self.swizzle_32b = False

    # ---- addressing (table lookups; the tables follow the two config bits)
    def adj16(self, rows: np.ndarray | int) -> np.ndarray:
        """Physical rows of Dst16b rows."""
        return _adj_tables(bool(self.remap_addrs), bool(self.swizzle_32b))[0][
            np.asarray(rows, dtype=np.int64) & 0x3FF]

    def adj32(self, rows: np.ndarray | int) -> np.ndarray:
        """Physical rows (high halves) of Dst32b rows."""
        return _adj_tables(bool(self.remap_addrs), bool(self.swizzle_32b))[1][
            np.asarray(rows, dtype=np.int64) & 0x3FF]

    def phys_table(self, is32: bool) -> np.ndarray:
        """``(1024,) int64``: the physical row of every view row (``adj32`` when ``is32``,
        else ``adj16``) under the current config bits. Shared: do not modify."""
        return _adj_tables(bool(self.remap_addrs), bool(self.swizzle_32b))[1 if is32 else 0]

    def phys(self, rows: np.ndarray | int, is32: bool) -> np.ndarray:
        """Physical rows of view rows: ``adj32`` when ``is32`` else ``adj16``."""
        return self.adj32(rows) if is32 else self.adj16(rows)

    # ---- raw views
    def read16(self, rows: np.ndarray | int | slice | None = None) -> np.ndarray:
        """``Dst16b[rows]`` as ``(n, 16) uint16`` (a copy). ``None`` = rows 0..1023."""
        return self.bits[self.adj16(_rows_arg(rows, ROWS16))]

    def write16(self, rows: np.ndarray | int | slice | None, values: np.ndarray) -> None:
        """``Dst16b[rows] = values`` (broadcast to ``(n, 16)``); valid bits are untouched."""
        p = self.adj16(_rows_arg(rows, ROWS16))
        self.bits[p] = np.broadcast_to(np.asarray(values).astype(np.uint16), (len(p), COLS))

    def read32(self, rows: np.ndarray | int | slice | None = None) -> np.ndarray:
        """``Dst32b[rows]`` as ``(n, 16) uint32``. ``None`` = rows 0..511."""
        p = self.adj32(_rows_arg(rows, ROWS32))
        return (self.bits[p].astype(np.uint32) << 16) | self.bits[p + 8]

    def _halves32(self, rows: np.ndarray | int | range | slice | None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """The high and low DstBits halves of Dst32b ``rows`` (same shapes): views when the
        rows are a ``range`` of whole 8-row blocks in the plain layout (no remap, no
        swizzle: row ``8b + i`` has its halves at ``16b + i`` and ``16b + 8 + i``)."""
        if (isinstance(rows, range) and rows.step == 1 and rows.start % 8 == 0
                and len(rows) % 8 == 0 and 0 <= rows.start and rows.stop <= ROWS32
                and not (self.remap_addrs or self.swizzle_32b)):
            blocks = self.bits[2 * rows.start:2 * rows.stop].reshape(-1, 2, 8, COLS)
            return blocks[:, 0], blocks[:, 1]
        p = self.adj32(_rows_arg(rows, ROWS32))
        return self.bits[p], self.bits[p + 8]

    def write32(self, rows: np.ndarray | int | slice | None, values: np.ndarray) -> None:
        """``Dst32b[rows] = values``: high halves at ``Adj32(r)``, low halves at ``+ 8``."""
        p = self.adj32(_rows_arg(rows, ROWS32))
        v = np.broadcast_to(np.asarray(values).astype(np.uint32), (len(p), COLS))
        self.bits[p] = (v >> 16).astype(np.uint16)
        self.bits[p + 8] = (v & 0xFFFF).astype(np.uint16)

    def read_view(self, rows: np.ndarray | int, is32: bool) -> np.ndarray:
        """Rows of the active view as uint32 (16-bit cells zero-extended)."""
        return self.read32(rows) if is32 else self.read16(rows).astype(np.uint32)

    def write_view(self, rows: np.ndarray | int, values: np.ndarray, is32: bool) -> None:
        """Write rows of the active view (16-bit view takes the low 16 bits of ``values``)."""
        if is32:
            self.write32(rows, values)
        else:
            self.write16(rows, np.asarray(values) & 0xFFFF)

    # ---- valid bits
    def row_valid(self, rows: np.ndarray | int, is32: bool) -> np.ndarray:
        """``DstRowValid`` of view rows (``Adj32(r)`` or ``Adj16(r)``), as a 1-D array."""
        return self.valid[self.phys(_rows_arg(rows, ROWS16), is32)]

    def set_valid(self, rows: np.ndarray | int, is32: bool, flag: bool = True) -> None:
        """Set the valid bit of view rows."""
        self.valid[self.phys(rows, is32)] = flag

    def invalidate_physical(self, rows: np.ndarray | int | slice) -> None:
        """Clear valid bits of physical rows (what ZEROACC does)."""
        self.valid[rows] = False

    # ---- typed access
    def read(self, fmt: str, rows: np.ndarray | int | slice | None = None) -> np.ndarray:
        """Typed values of view rows: ``fmt`` in :data:`formats.DST_FORMATS` (``fp32``,
        ``int32``, ``raw32`` use Dst32b; ``bf16``, ``fp16``, ``int8``, ``int16``, ``raw`` use
        Dst16b). Returns ``(n, 16)``; ``rows=None`` reads the whole view."""
        width = self._width(fmt)
        if fmt == "fp32":  # from the two halves, without forming the Dst32b words
            hi, lo = self._halves32(rows)
            return F.dst32_halves_to_fp32(hi, lo).reshape(-1, COLS).view(np.float32)
        stored = self.read32(rows) if width == 32 else self.read16(rows)
        return F.dst_to_values(stored, fmt)

    def write(self, fmt: str, values: np.ndarray,
              rows: np.ndarray | int | slice | None = None) -> None:
        """Store typed values (shape ``(n, 16)`` or broadcastable) into view rows and mark
        those rows valid. ``rows=None`` with ``(n, 16)`` values writes rows ``0..n-1``."""
        width = self._width(fmt)
        v = np.asarray(values)
        if v.ndim != 2 or v.shape[1] != COLS:
            raise RegFileError(f"Dst values must have shape (rows, 16), not {v.shape}")
        limit = ROWS32 if width == 32 else ROWS16
        r = np.arange(v.shape[0]) if rows is None else _rows_arg(rows, limit)
        if len(r) != v.shape[0] or (rows is None and v.shape[0] > limit):
            raise RegFileError(f"{v.shape[0]} rows of values for {len(r)} Dst rows "
                               f"(the {width}-bit view has {limit})")
        stored = F.values_to_dst(v, fmt)
        if width == 32:
            self.write32(r, stored)
        else:
            self.write16(r, stored)
        self.set_valid(r, width == 32)

    @staticmethod
    def _width(fmt: str) -> int:
        if fmt not in F.DST_FORMATS:
            raise RegFileError(f"unknown Dst format {fmt!r} "
                               f"(expected one of {', '.join(F.DST_FORMATS)})")
        return F.DST_FORMATS[fmt][0]

    # ---- RISC-V debug window
    def debug_load(self, addr: int, fmt: int, no_swizzle: bool = False,
                   unsigned_int: bool = False) -> int:
        """One element read through the window at 0xFFBD8000 (T0/T1 semantics)."""
        size, index = self._debug_index(addr, fmt)
        if size == 4:
            return int(F.debug_load32(self.read32(index // 16)[0, index % 16], fmt, no_swizzle))
        cell = self.read16(index // 16)[0, index % 16]
        if size == 2:
            return int(F.debug_load16(cell, fmt, no_swizzle, unsigned_int))
        return int(F.debug_load8(cell, fmt, no_swizzle, unsigned_int))

    def debug_store(self, addr: int, value: int, fmt: int, no_swizzle: bool = False,
                    unsigned_int: bool = False) -> None:
        """One element written through the window (T0/T1 semantics)."""
        size, index = self._debug_index(addr, fmt)
        row, col = index // 16, index % 16
        if size == 4:
            cur = self.read32(row)
            cur[0, col] = F.debug_store32(value, fmt, no_swizzle)
            self.write32(row, cur)
            return
        cur = self.read16(row)
        conv = F.debug_store16 if size == 2 else F.debug_store8
        cur[0, col] = conv(value, fmt, no_swizzle, unsigned_int)
        self.write16(row, cur)

    @staticmethod
    def _debug_index(addr: int, fmt: int) -> tuple[int, int]:
        if fmt not in F.DEBUG_ELEMENT_BYTES:
            raise RegFileError(f"debug-window fmt {fmt} is reserved (UndefinedBehaviour)")
        size = F.DEBUG_ELEMENT_BYTES[fmt]
        off = addr - F.DEBUG_WINDOW_BASE
        if not 0 <= off < F.DEBUG_WINDOW_SIZE or off % size:
            raise RegFileError(f"address {addr:#x} is not a {size}-byte element of the Dst "
                               f"debug window")
        return size, off // size


class SrcClient(IntEnum):
    """Who may use a Src bank."""

    MATRIX_UNIT = 0
    UNPACKERS = 1


class SrcRegs:
    """One of SrcA / SrcB: ``cells[bank, row, col]`` (uint32 holding 19-bit cells).

    Attributes:
        name: ``"SrcA"`` or ``"SrcB"`` (for messages).
        cells: ``(2, 64, 16) uint32`` in the physical Src layout.
        allowed_client: ``[SrcClient, SrcClient]`` per bank (initially Unpackers).
        matrix_bank: ``MatrixUnit::SrcABank`` / ``SrcBBank``.
        unpacker_bank: ``Unpackers[0 or 1]::SrcBank``.
        unpacker_row: ``(3,) uint8``: ``Unpackers[i]::SrcRow[thread]``.
        implied_fmt: ``(2,) uint8``: Blackhole's implied data format per bank.
        owners: a :class:`~.dispatch.Changes` (SrcA and SrcB of one machine share one) that
            moves with every change to ``allowed_client``, ``matrix_bank`` or
            ``unpacker_bank``: whoever writes those bumps it (the methods below do).
    """

    def __init__(self, name: str = "SrcA", owners: Changes | None = None) -> None:
        self.name = name
        self.owners = owners if owners is not None else Changes()
        self.cells = np.zeros((SRC_BANKS, SRC_ROWS, COLS), dtype=np.uint32)
        self.allowed_client = [SrcClient.UNPACKERS, SrcClient.UNPACKERS]
        self.matrix_bank = 0
        self.unpacker_bank = 0
        self.unpacker_row = np.zeros(3, dtype=np.uint8)
        self.implied_fmt = np.zeros(SRC_BANKS, dtype=np.uint8)

    def _bank(self, bank: int) -> int:
        if bank not in (0, 1):
            raise RegFileError(f"{self.name} has banks 0 and 1, not {bank}")
        return bank

    # ---- raw cells
    def read(self, bank: int, rows: np.ndarray | int | slice | None = None) -> np.ndarray:
        """Cells of ``rows`` (6-bit, masked) of ``bank`` as ``(n, 16) uint32``."""
        r = _rows_arg(rows, SRC_ROWS) & 0x3F
        return self.cells[self._bank(bank), r]

    def write(self, bank: int, rows: np.ndarray | int | slice | None,
              cells: np.ndarray) -> None:
        """Store cells (masked to 19 bits) into ``rows`` of ``bank``."""
        r = _rows_arg(rows, SRC_ROWS) & 0x3F
        v = np.broadcast_to(np.asarray(cells).astype(np.uint32) & F.SRC_MASK, (len(r), COLS))
        self.cells[self._bank(bank), r] = v

    # ---- typed access
    def load(self, bank: int, values: np.ndarray, fmt: str, row: int = 0) -> None:
        """Store typed values ``(n, 16)`` into rows ``row..row+n-1`` of ``bank`` (``fmt`` in
        :data:`formats.SRC_FORMATS`: tf32/fp32, bf16, fp16, int8, int16, raw)."""
        v = np.asarray(values)
        if v.ndim != 2 or v.shape[1] != COLS:
            raise RegFileError(f"{self.name} values must have shape (rows, 16), not {v.shape}")
        if not 0 <= row or row + v.shape[0] > SRC_ROWS:
            raise RegFileError(f"{self.name} rows {row}..{row + v.shape[0] - 1} are outside "
                               f"0..{SRC_ROWS - 1}")
        if fmt not in F.SRC_FORMATS:
            raise RegFileError(f"unknown Src format {fmt!r} "
                               f"(expected one of {', '.join(F.SRC_FORMATS)})")
        # values_to_src yields 19-bit cells; the rows were checked above
        self.cells[self._bank(bank), row:row + v.shape[0]] = F.values_to_src(v, fmt)

    def dump(self, bank: int, fmt: str, rows: np.ndarray | int | slice | None = None
             ) -> np.ndarray:
        """Typed values of ``rows`` (default all 64) of ``bank``."""
        if fmt not in F.SRC_FORMATS:
            raise RegFileError(f"unknown Src format {fmt!r} "
                               f"(expected one of {', '.join(F.SRC_FORMATS)})")
        return F.src_to_values(self.read(bank, rows), fmt)

    # ---- ownership (the bank-flip steps of SETDVALID / CLEARDVALID / MVMUL flip bits)
    def give_to_matrix_unit(self, thread: int, set_base: int) -> None:
        """SETDVALID / UNPACR_NOP: the unpacker's bank goes to the Matrix Unit, the unpacker
        moves to the other bank and its row cursor for ``thread`` restarts at
        ``set_base << 4`` (SRCA_SET_Base / SRCB_SET_Base)."""
        self.owners.changes += 1
        self.allowed_client[self.unpacker_bank] = SrcClient.MATRIX_UNIT
        self.unpacker_bank ^= 1
        self.unpacker_row[thread] = (set_base << 4) & 0x3F

    def release_to_unpackers(self, flip: bool = True, release: bool = True) -> None:
        """CLEARDVALID / SETRWC clear / MVMUL flip: the Matrix Unit's bank goes back to the
        unpackers (unless ``release`` is False, e.g. CLR_DVALID_*_Disable) and the Matrix Unit
        moves to the other bank (unless ``flip`` is False, e.g. KeepReadingSameSrc)."""
        self.owners.changes += 1
        if release:
            self.allowed_client[self.matrix_bank] = SrcClient.UNPACKERS
        if flip:
            self.matrix_bank ^= 1

    def matrix_ready(self) -> bool:
        """``AllowedClient == MatrixUnit`` for the Matrix Unit's bank (STALLWAIT C7/C8)."""
        return self.allowed_client[self.matrix_bank] == SrcClient.MATRIX_UNIT

    def unpacker_ready(self) -> bool:
        """``AllowedClient == Unpackers`` for the unpacker's bank (STALLWAIT C5/C6)."""
        return self.allowed_client[self.unpacker_bank] == SrcClient.UNPACKERS
