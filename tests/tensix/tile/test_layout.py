"""Host-side layout helpers: tilize/untilize against an element-by-element reading of the face
order, BF16 rounding against integer round-to-nearest-even, and the interleaved page mapping
against InterleavedAddrGen's formula."""

from __future__ import annotations

import numpy as np
import pytest

from isaforge.tensix.tile.errors import TileError
from isaforge.tensix.tile.layout import (
    bank_bytes,
    deinterleave,
    from_bf16_bits,
    from_fp32_bits,
    interleave,
    page_address,
    tile_bytes,
    tile_faces,
    tilize,
    to_bf16_bits,
    to_fp32_bits,
    untilize,
)


def slow_tilize(a: np.ndarray) -> np.ndarray:
    h, w = a.shape
    out = np.zeros((h // 32 * (w // 32), 1024), a.dtype)
    for row in range(h):
        for col in range(w):
            t = (row // 32) * (w // 32) + col // 32
            r, c = row % 32, col % 32
            face = (r // 16) * 2 + c // 16
            out[t, face * 256 + (r % 16) * 16 + c % 16] = a[row, col]
    return out


@pytest.mark.parametrize("shape", [(32, 32), (64, 96), (96, 32)])
def test_tilize_matches_the_face_order_element_by_element(shape: tuple[int, int]) -> None:
    a = np.arange(shape[0] * shape[1], dtype=np.int32).reshape(shape)
    t = tilize(a)
    assert np.array_equal(t, slow_tilize(a))
    assert np.array_equal(untilize(t, *shape), a)


def test_first_face_row_and_second_face_start() -> None:
    a = np.arange(32 * 32, dtype=np.uint16).reshape(32, 32)
    t = tilize(a)[0]
    assert list(t[:16]) == list(range(16))  # face 0 row 0
    assert t[16] == 32  # face 0 row 1 starts at matrix row 1
    assert t[256] == 16  # face 1 row 0: columns 16..31 of row 0
    assert t[512] == 16 * 32  # face 2: row 16
    assert np.array_equal(tile_faces(t)[3], a[16:, 16:])


def test_batched_tilize_and_untilize_round_trip() -> None:
    rng = np.random.default_rng(1)
    a = rng.integers(0, 1 << 16, (3, 64, 128), dtype=np.uint16)
    t = tilize(a)
    assert t.shape == (3, 8, 1024)
    assert np.array_equal(t[1], slow_tilize(a[1]))
    assert np.array_equal(untilize(t, 64, 128), a)
    assert np.array_equal(untilize(t.reshape(3, 8, 32, 32), 64, 128), a)


def test_bad_shapes_are_errors() -> None:
    with pytest.raises(TileError, match="multiples of 32"):
        tilize(np.zeros((32, 48)))
    with pytest.raises(TileError, match="expected"):
        untilize(np.zeros((3, 1024)), 64, 64)


def rne_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 bits to BF16 with integers (NaN kept quiet)."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) >> 16
    nan = np.isnan(x)
    rounded[nan] = (u[nan] >> 16) | 0x40
    return rounded.astype(np.uint16)


def test_bf16_rounding_is_nearest_even() -> None:
    rng = np.random.default_rng(2)
    bits = rng.integers(0, 1 << 32, 100_000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    ok = ~np.isnan(x)
    assert np.array_equal(to_bf16_bits(x)[ok], rne_bf16(x)[ok])
    assert np.all(np.isnan(from_bf16_bits(to_bf16_bits(x[~ok]))))
    edges = np.array([0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-40, 1.0 + 2 ** -8,
                      1.0 + 3 * 2 ** -8], np.float32)
    got = to_bf16_bits(edges)
    assert list(got[:4]) == [0x0000, 0x8000, 0x7F80, 0xFF80]
    assert got[6] == 0x3F80 and got[7] == 0x3F82  # ties to even: down, then up
    assert np.array_equal(from_bf16_bits(got), from_bf16_bits(rne_bf16(edges)))


def test_fp32_bits_round_trip() -> None:
    x = np.array([1.5, -0.0, np.inf], np.float32)
    assert list(to_fp32_bits(x)) == [0x3FC00000, 0x80000000, 0x7F800000]
    assert np.array_equal(from_fp32_bits(to_fp32_bits(x)), x)
    assert tile_bytes("bf16") == 2048 and tile_bytes("fp32") == 4096
    with pytest.raises(TileError, match="unknown tile format"):
        tile_bytes("fp8")


@pytest.mark.parametrize("banks", [1, 7, 8, 120])
def test_page_address_follows_interleaved_addr_gen(banks: int) -> None:
    offsets = [0x100 * b for b in range(banks)]
    for page_size, dram, aligned in [(2048, True, 2048), (100, True, 128), (100, False, 112)]:
        for p in range(3 * banks + 2):
            bank, addr = page_address(p, page_size, banks, 0x4000, dram, offsets)
            assert bank == p % banks
            assert addr == 0x4000 + (p // banks) * aligned + offsets[bank]


def test_interleave_and_deinterleave_round_trip_through_banks() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 256, 2048 * 11, dtype=np.uint8)
    banks: dict[int, bytearray] = {b: bytearray(bank_bytes(11, 2048, 8) + 0x1000)
                                   for b in range(8)}
    writes = interleave(data, 2048, 8, 0x1000)
    assert [w[0] for w in writes] == [p % 8 for p in range(11)]
    for bank, addr, page in writes:
        banks[bank][addr:addr + len(page)] = page
    assert bytes(banks[3][0x1000:0x1000 + 2048]) == data[3 * 2048:4 * 2048].tobytes()
    back = deinterleave(lambda b, a, n: bytes(banks[b][a:a + n]), 11, 2048, 8, 0x1000)
    assert back == data.tobytes()
    with pytest.raises(TileError, match="whole number"):
        interleave(b"abc", 2048, 8, 0)


def test_the_other_tilizers_agree() -> None:
    """The coprocessor model's one-tile tilize and the tile program's (N, 32, 32) one give
    the same face order as this module's."""
    from isaforge.tensix.machine import l1formats
    from isaforge.tensix.tile import program
    rng = np.random.default_rng(4)
    a = rng.integers(0, 1 << 16, (3, 32, 32), dtype=np.uint16)
    t = tilize(a)
    assert np.array_equal(t[1, 0], l1formats.tilize(a[1]))
    assert np.array_equal(program.tilize(a), t.reshape(3, 1024))
    assert np.array_equal(program.untilize(t.reshape(3, 1024)), a)
