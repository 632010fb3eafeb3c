"""Host-side data layout, as tt-metal's host lays data out for the device (pure numpy).

* **Tiles and faces**: a tile is 32 x 32 elements stored as four 16 x 16 faces, in the order
  top-left, top-right, bottom-left, bottom-right, each face row-major (tt-metal's ``tilize``
  with ``TILE_LAYOUT``). :func:`tilize` turns ``(..., H, W)`` (H, W multiples of 32) into
  ``(..., H/32 * W/32, 1024)``: the tiles in row-major order of tiles, each the 1024 elements
  in memory order; :func:`untilize` is its inverse.
* **Formats**: :func:`to_bf16_bits` rounds floats to BF16 (nearest even, as ml_dtypes does) and
  returns the ``uint16`` bit patterns the device stores; :func:`from_bf16_bits`,
  :func:`to_fp32_bits`, :func:`from_fp32_bits` the other ways.
* **Interleaved buffers**: page ``p`` of an interleaved buffer lives in bank ``p % banks`` at
  ``base + (p // banks) * aligned_page_size + bank_offset[bank]``, where the page size is
  rounded up to the allocator's alignment (64 bytes for DRAM, 16 for L1 on Blackhole): what
  ``InterleavedAddrGen::get_addr`` computes in ``dataflow_api_addrgen.h``.
  :func:`page_address` gives one page's (bank, address); :func:`interleave` splits a buffer's
  bytes into per-page writes, :func:`deinterleave` gathers them back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np

from .errors import TileError

TILE = 32
FACE = 16
TILE_ELEMENTS = TILE * TILE
#: the allocator's alignment of an interleaved page, per memory (Blackhole)
DRAM_ALIGNMENT = 64
L1_ALIGNMENT = 16


# -- tiles ------------------------------------------------------------------------------------

def _check_tiled_shape(shape: tuple[int, ...], what: str) -> tuple[int, int]:
    if len(shape) < 2:
        raise TileError(f"{what}: need at least two dimensions, got shape {shape}")
    h, w = shape[-2:]
    if h % TILE or w % TILE or h == 0 or w == 0:
        raise TileError(f"{what}: the last two dimensions must be non-zero multiples of {TILE}, "
                        f"got {h} x {w}")
    return h // TILE, w // TILE


def tilize(a: np.ndarray) -> np.ndarray:
    """``(..., H, W)`` -> ``(..., H/32 * W/32, 1024)``: tiles row-major, each as four faces."""
    a = np.asarray(a)
    th, tw = _check_tiled_shape(a.shape, "tilize")
    lead = a.shape[:-2]
    # (..., th, fh, r, tw, fw, c) with row = (th*2 + fh)*16 + r, col = (tw*2 + fw)*16 + c
    v = a.reshape(*lead, th, 2, FACE, tw, 2, FACE)
    n = len(lead)
    order = (*range(n), n + 0, n + 3, n + 1, n + 4, n + 2, n + 5)  # th, tw, fh, fw, r, c
    return np.ascontiguousarray(v.transpose(order)).reshape(*lead, th * tw, TILE_ELEMENTS)


def untilize(tiles: np.ndarray, height: int, width: int) -> np.ndarray:
    """The inverse of :func:`tilize`: ``(..., tiles, 1024)`` (or ``(..., tiles, 32, 32)``)
    -> ``(..., height, width)``."""
    t = np.asarray(tiles)
    th, tw = _check_tiled_shape((height, width), "untilize")
    if t.ndim >= 3 and t.shape[-2:] == (TILE, TILE):
        t = t.reshape(*t.shape[:-2], TILE_ELEMENTS)
    if t.ndim < 2 or t.shape[-1] != TILE_ELEMENTS or t.shape[-2] != th * tw:
        raise TileError(f"untilize: expected (..., {th * tw}, {TILE_ELEMENTS}) for a "
                        f"{height} x {width} array, got shape {t.shape}")
    lead = t.shape[:-2]
    n = len(lead)
    v = t.reshape(*lead, th, tw, 2, 2, FACE, FACE)  # th, tw, fh, fw, r, c
    order = (*range(n), n + 0, n + 2, n + 4, n + 1, n + 3, n + 5)  # th, fh, r, tw, fw, c
    return np.ascontiguousarray(v.transpose(order)).reshape(*lead, height, width)


def tile_faces(tile: np.ndarray) -> np.ndarray:
    """One tile in memory order (1024 elements) -> its four 16 x 16 faces ``(4, 16, 16)``."""
    t = np.asarray(tile)
    if t.size != TILE_ELEMENTS:
        raise TileError(f"tile_faces: a tile has {TILE_ELEMENTS} elements, got {t.size}")
    return t.reshape(4, FACE, FACE)


# -- formats ----------------------------------------------------------------------------------

def to_bf16_bits(a: np.ndarray) -> np.ndarray:
    """Floats -> BF16 bit patterns (``uint16``), rounded to nearest even (NaN stays NaN)."""
    with np.errstate(invalid="ignore"):  # NaN converts to a NaN; numpy warns about it
        return np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


def from_bf16_bits(bits: np.ndarray) -> np.ndarray:
    """BF16 bit patterns -> ``float32`` (exact)."""
    return np.asarray(bits, dtype=np.uint16).view(ml_dtypes.bfloat16).astype(np.float32)


def to_fp32_bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float32).view(np.uint32)


def from_fp32_bits(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, dtype=np.uint32).view(np.float32)


#: bytes per element of the formats a page may hold
FORMAT_BYTES = {"bf16": 2, "fp32": 4, "uint16": 2, "uint32": 4}


def tile_bytes(fmt: str = "bf16") -> int:
    """Bytes of one tile (one page of a tiled buffer) in ``fmt``."""
    try:
        return TILE_ELEMENTS * FORMAT_BYTES[fmt]
    except KeyError:
        raise TileError(f"unknown tile format {fmt!r} (one of "
                        f"{', '.join(FORMAT_BYTES)})") from None


# -- interleaved buffers ----------------------------------------------------------------------

def align_up(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def page_address(page: int, page_size: int, num_banks: int, base: int, dram: bool = True,
                 bank_offsets: Sequence[int] | None = None,
                 alignment: int | None = None) -> tuple[int, int]:
    """(bank, address in that bank) of page ``page`` of an interleaved buffer at ``base``.

    ``bank_offsets`` is the firmware's ``bank_to_dram_offset`` / ``bank_to_l1_offset`` table
    (0 for every bank when omitted); ``alignment`` defaults to :data:`DRAM_ALIGNMENT` or
    :data:`L1_ALIGNMENT`."""
    if num_banks <= 0:
        raise TileError(f"an interleaved buffer needs at least one bank, got {num_banks}")
    if page < 0 or page_size <= 0:
        raise TileError(f"bad page {page} of size {page_size}")
    align = alignment or (DRAM_ALIGNMENT if dram else L1_ALIGNMENT)
    row, bank = divmod(page, num_banks)
    offset = bank_offsets[bank] if bank_offsets is not None else 0
    return bank, (base + row * align_up(page_size, align) + offset) & 0xFFFFFFFF


def bank_bytes(num_pages: int, page_size: int, num_banks: int, dram: bool = True,
               alignment: int | None = None) -> int:
    """Bytes each bank reserves for an interleaved buffer of ``num_pages`` pages."""
    align = alignment or (DRAM_ALIGNMENT if dram else L1_ALIGNMENT)
    return -(-num_pages // num_banks) * align_up(page_size, align)


def interleave(data: bytes | np.ndarray, page_size: int, num_banks: int, base: int,
               dram: bool = True, bank_offsets: Sequence[int] | None = None,
               alignment: int | None = None) -> list[tuple[int, int, bytes]]:
    """Split a buffer's bytes into its pages: ``[(bank, address, page bytes), ...]`` in page
    order. The length must be a multiple of ``page_size``."""
    raw = data.tobytes() if isinstance(data, np.ndarray) else bytes(data)
    if len(raw) % page_size:
        raise TileError(f"a buffer of {len(raw)} bytes is not a whole number of "
                        f"{page_size}-byte pages")
    out = []
    for p in range(len(raw) // page_size):
        bank, addr = page_address(p, page_size, num_banks, base, dram, bank_offsets, alignment)
        out.append((bank, addr, raw[p * page_size:(p + 1) * page_size]))
    return out


def deinterleave(read: Callable[[int, int, int], bytes], num_pages: int, page_size: int,
                 num_banks: int, base: int, dram: bool = True,
                 bank_offsets: Sequence[int] | None = None,
                 alignment: int | None = None) -> bytes:
    """Gather an interleaved buffer back: ``read(bank, address, size)`` reads one page."""
    return b"".join(read(*page_address(p, page_size, num_banks, base, dram, bank_offsets,
                                       alignment), page_size) for p in range(num_pages))


__all__ = ["DRAM_ALIGNMENT", "FACE", "FORMAT_BYTES", "L1_ALIGNMENT", "TILE", "TILE_ELEMENTS",
           "align_up", "bank_bytes", "deinterleave", "from_bf16_bits", "from_fp32_bits",
           "interleave", "page_address", "tile_bytes", "tile_faces", "tilize", "to_bf16_bits",
           "to_fp32_bits", "untilize"]
