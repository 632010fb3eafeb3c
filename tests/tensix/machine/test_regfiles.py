"""Dst / SrcA / SrcB register files: addressing (Adj16/Adj32), views, valid bits, typed access,
ownership state and the RISC-V debug window."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from isaforge.tensix.machine import formats as F
from isaforge.tensix.machine.regfiles import Dst, RegFileError, SrcClient, SrcRegs, adj16, adj32

ALL = np.arange(1024)


@pytest.mark.parametrize("remap", [False, True])
def test_adj16_is_a_permutation(remap: bool) -> None:
    assert sorted(adj16(ALL, remap).tolist()) == list(range(1024))


def test_adj16_remap_rotates_bits_3_4_5() -> None:
    # remap_addrs: bit 3 -> bit 5, bit 4 -> bit 3, bit 5 -> bit 4; other bits unchanged.
    assert adj16(0x008, True) == 0x020
    assert adj16(0x010, True) == 0x008
    assert adj16(0x020, True) == 0x010
    assert adj16(0x3C7, True) == 0x3C7
    assert (adj16(ALL, False) == ALL).all()
    r = ALL
    expect = (r & ~0x38) | (((r >> 3) & 1) << 5) | (((r >> 4) & 1) << 3) | (((r >> 5) & 1) << 4)
    assert (adj16(r, True) == expect).all()


@pytest.mark.parametrize("remap", [False, True])
@pytest.mark.parametrize("swizzle", [False, True])
def test_adj32_pairs_cover_dstbits_once(remap: bool, swizzle: bool) -> None:
    rows = np.arange(512)
    hi = adj32(rows, remap, swizzle)
    both = np.concatenate([hi, hi + 8])
    assert sorted(both.tolist()) == list(range(1024))
    assert ((hi & 8) == 0).all()
    # Dst32b rows 0..255 live in the low half of DstBits, 256..511 in the high half.
    assert (hi[:256] < 512).all() and (hi[256:] >= 512).all()


def test_adj32_plain_layout() -> None:
    # Without the config bits a 32-bit row r lives at 16*(r//8) + r%8 (hi) and +8 (lo):
    r = np.arange(512)
    assert (adj32(r, False, False) == 16 * (r // 8) + r % 8).all()
    # swizzle_32b exchanges 4-row groups inside an 8-row group (bit 2 <-> bits 3..4 mixing)
    assert adj32(4, False, True) == 0x10
    assert adj32(8, False, True) == 0x04


def test_dst32_read_write_halves() -> None:
    d = Dst()
    d.write32(3, np.arange(16, dtype=np.uint32) | 0xABCD0000)
    assert (d.bits[3] == 0xABCD).all()
    assert (d.bits[11] == np.arange(16)).all()
    assert (d.read32(3) == (np.arange(16) | 0xABCD0000)).all()
    assert (d.read16([3, 11]) == d.bits[[3, 11]]).all()


@pytest.mark.parametrize("remap", [False, True])
@pytest.mark.parametrize("swizzle", [False, True])
def test_dst_views_with_config_bits(remap: bool, swizzle: bool) -> None:
    d = Dst()
    d.remap_addrs, d.swizzle_32b = remap, swizzle
    rng = np.random.default_rng(1)
    v32 = rng.integers(0, 2**32, (512, 16), dtype=np.uint64).astype(np.uint32)
    d.write32(None, v32)
    assert (d.read32() == v32).all()
    assert (d.read("fp32").view(np.uint32) == F.dst32_to_fp32(v32)).all()
    assert (d.read("fp32", [7, 300]).view(np.uint32) == F.dst32_to_fp32(v32[[7, 300]])).all()
    assert d.read("fp32", 5).shape == (1, 16)
    for rows in (range(64), range(8, 72), range(3, 20), range(0, 512, 2)):  # block views too
        assert (d.read("fp32", rows).view(np.uint32) == F.dst32_to_fp32(v32[rows])).all()
    p = adj32(np.arange(512), remap, swizzle)
    assert (d.bits[p] == v32 >> 16).all() and (d.bits[p + 8] == v32 & 0xFFFF).all()
    v16 = rng.integers(0, 2**16, (1024, 16), dtype=np.uint64).astype(np.uint16)
    d.write16(None, v16)
    assert (d.read16() == v16).all()
    assert (d.bits[adj16(ALL, remap)] == v16).all()


def test_valid_bits_index_physical_rows() -> None:
    d = Dst()
    assert d.valid.all()
    d.invalidate_physical(slice(0, 1024))
    d.remap_addrs = True
    d.set_valid(8, is32=False)
    assert d.valid[0x20] and d.valid.sum() == 1
    d.set_valid(8, is32=True)  # consults Adj32(8) only, not Adj32(8) + 8
    p = int(adj32(8, True, False))
    assert d.valid[p] and not d.valid[p + 8]


@pytest.mark.parametrize("fmt,dtype", [("fp32", np.float32), ("bf16", ml_dtypes.bfloat16),
                                       ("fp16", np.float16)])
def test_typed_round_trip(fmt: str, dtype: type) -> None:
    d = Dst()
    d.invalidate_physical(slice(None))
    vals = (np.random.default_rng(2).standard_normal((64, 16)) * 100).astype(dtype)
    d.write(fmt, vals, rows=np.arange(64) + 100)
    out = d.read(fmt, np.arange(64) + 100)
    assert out.dtype == dtype and (out.view(np.uint8) == vals.view(np.uint8)).all()
    assert d.row_valid(np.arange(64) + 100, fmt == "fp32").all()


def test_typed_int_round_trip() -> None:
    d = Dst()
    i32 = np.arange(-8 * 16 * 1000, 0, 1000, dtype=np.int32).reshape(8, 16)
    d.write("int32", i32)
    assert (d.read("int32", range(8)) == i32).all()
    assert (d.read32(0)[0] >> 31 == 1).all()  # sign-magnitude
    assert d.read32(0)[0, 1] == F.fp32_to_dst32(np.uint32(0x80000000 | (127000)))
    i8 = np.arange(-64, 64, dtype=np.int16).reshape(8, 16) * 15
    d.write("int8", i8, rows=np.arange(8))
    assert (d.read("int8", range(8)) == i8).all()


def test_bad_typed_access() -> None:
    d = Dst()
    with pytest.raises(RegFileError, match="unknown Dst format"):
        d.read("fp8")
    with pytest.raises(RegFileError, match="shape"):
        d.write("fp32", np.zeros(16))
    with pytest.raises(RegFileError, match="rows"):
        d.write("fp32", np.zeros((600, 16)))
    s = SrcRegs()
    with pytest.raises(RegFileError, match="banks"):
        s.read(2)
    with pytest.raises(RegFileError, match="outside"):
        s.load(0, np.zeros((8, 16)), "bf16", row=60)


def test_debug_window_fp32_and_bf16() -> None:
    d = Dst()
    x = np.float32(-3.140625)
    bits = int(np.array(x).view(np.uint32))
    addr = F.DEBUG_WINDOW_BASE + (5 * 16 + 7) * 4
    d.debug_store(addr, bits, fmt=0)
    assert d.read("fp32", 5)[0, 7] == x
    assert d.debug_load(addr, fmt=0) == bits
    assert d.debug_load(addr, fmt=0, no_swizzle=True) == int(d.read32(5)[0, 7])
    # BF16 view of the high half of that datum (Dst16b row = Adj32 high row)
    hi_row = int(adj32(5, False, False))
    b16 = d.debug_load(F.DEBUG_WINDOW_BASE + (hi_row * 16 + 7) * 2, fmt=3)
    assert b16 == bits >> 16
    with pytest.raises(RegFileError, match="reserved"):
        d.debug_load(F.DEBUG_WINDOW_BASE, fmt=6)
    with pytest.raises(RegFileError, match="not a 4-byte"):
        d.debug_load(F.DEBUG_WINDOW_BASE + 2, fmt=0)


def test_debug_window_int32_conversions() -> None:
    d = Dst()
    for v in (0, 1, -1, 123456, -(2**31 - 1)):
        d.debug_store(F.DEBUG_WINDOW_BASE, v & 0xFFFFFFFF, fmt=1)
        assert d.read("int32", 0)[0, 0] == v
        assert d.debug_load(F.DEBUG_WINDOW_BASE, fmt=1) == v & 0xFFFFFFFF
    d.debug_store(F.DEBUG_WINDOW_BASE, 0x80000000, fmt=1)  # -2**31 clamps
    assert d.read("int32", 0)[0, 0] == -(2**31 - 1)


def test_src_typed_round_trip_and_layout() -> None:
    s = SrcRegs("SrcB")
    v = np.array([[1.0, -2.5, 0.15625] + [0.0] * 13], dtype=np.float32)
    s.load(1, v.astype(ml_dtypes.bfloat16), "bf16", row=16)
    cell = int(s.read(1, 16)[0, 0])
    # 1.0 in BF16: sign 0, exponent 127, mantissa 0 -> Src cell = exp in bits 7..0
    assert cell == 127
    assert cell == int(F.shuffle_bf16(F.bf16_to_dst16(np.uint16(0x3F80))))
    assert (s.dump(1, "bf16", 16).astype(np.float32) == v).all()
    s.load(0, v.astype(np.float16), "fp16")
    assert int(s.read(0, 0)[0, 1]) == (1 << 18) | (0x100 << 8) | 16  # -2.5: man 0x100, exp 16
    assert (s.dump(0, "fp16", 0).astype(np.float32) == v).all()
    t = np.array([[1 + 2**-10, -(1 + 2**-10 + 2**-12)] + [0] * 14], np.float32)
    s.load(0, t, "tf32", row=63)
    assert s.dump(0, "tf32", 63)[0, 1] == -(1 + 2**-10)  # truncated to 10 mantissa bits


def test_src_ownership() -> None:
    s = SrcRegs()
    assert s.allowed_client == [SrcClient.UNPACKERS] * 2 and s.unpacker_ready()
    assert not s.matrix_ready()
    s.give_to_matrix_unit(thread=0, set_base=2)
    assert s.unpacker_bank == 1 and s.unpacker_row[0] == 32 and s.matrix_ready()
    s.release_to_unpackers()
    assert s.matrix_bank == 1 and s.allowed_client[0] == SrcClient.UNPACKERS
    s.release_to_unpackers(flip=False, release=True)
    assert s.matrix_bank == 1
