"""The data formats of L1 and the unpackers' and packers' conversions, vectorised in numpy.

L1 formats are the hardware ``DataFormat`` codes (:class:`.formats.DataFormat`) that
tt-metal uses for tiles in L1: FP32 (0), TF32 (4, an FP32 word whose low 13 mantissa bits
are ignored), FP16 (1), BF16 (5), the block-float formats BFP8/BFP4/BFP2 (``_b``: 8-bit
shared exponent, codes 6/7/15; ``a``: 5-bit exponent, codes 2/3/11), FP8 (10, e5m2 or e4m3),
INT8 (14, sign-magnitude; UINT8 is INT8 with the ``Src?Unsigned`` configuration), INT32 (8)
and UINT16 (9, 16 opaque bits).

Three groups of functions:

* **Unpacker conversions** (:func:`unpack_to_src`, :func:`unpack_to_dst`): L1 datum bits (and a
  BFP datum's shared exponent) to the logical 19-bit Src value (sign[18] exp[17:10] man[9:0],
  :mod:`.formats`) or to Dst storage;
* **Packer conversions** (:func:`pack_read`, :func:`pack_relu`, :func:`pack_late`,
  :func:`bfp_pack`): Dst storage to L1 datum bits, in the stages of the packer pipeline
  (read from Dst with the "early" conversion to the intermediate format
  ``ALU_FORMAT_SPEC_REG2_Dstacc``, ReLU, the "late" conversion to the output format, then the
  shared-exponent assembly of BFP formats);
* **Host side** (:func:`encode`, :func:`decode`, :func:`tilize`, :func:`untilize`): numpy
  values to the bytes a host puts in L1 and back, for ``--load l1:`` / ``--dump l1:`` and tests.

Semantics are those of the official simulator (tenstorrent/ttsim, Blackhole), whose outputs are
the oracle (``refdata/tensix/oracle/pack``); conversions it does not implement follow the ISA
documentation (Wormhole's unpacker model: BFP*a, 16-bit unpack to Dst) and say so. Every
function works on whole arrays; none loops over datums in Python.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from .formats import DataFormat, FormatError

U8 = np.uint8
U16 = np.uint16
U32 = np.uint32
I64 = np.int64

BFP_FORMATS = frozenset({2, 3, 6, 7, 11, 15})
BFP_A_FORMATS = frozenset({2, 3, 11})

#: L1 format names (``--load l1:ADDR:FORMAT``) -> (code, unsigned INT8)
FORMAT_NAMES: dict[str, tuple[int, bool]] = {
    "fp32": (0, False), "float32": (0, False), "tf32": (4, False),
    "fp16": (1, False), "float16": (1, False),
    "bf16": (5, False), "float16_b": (5, False),
    "bfp8": (2, False), "bfp4": (3, False), "bfp2": (11, False),
    "bfp8_b": (6, False), "bfp4_b": (7, False), "bfp2_b": (15, False),
    "fp8": (10, False), "lf8": (10, False),
    "int8": (14, False), "uint8": (14, True),
    "int32": (8, False), "uint16": (9, False), "int16": (9, False),
}


def datum_bits(fmt: int) -> int:
    """Bits per datum of an L1 format (the shared exponents of BFP formats not counted)."""
    fmt = int(fmt)
    if fmt in (3, 7):
        return 4
    if fmt in (11, 15):
        return 2
    low = fmt & 3
    if low == 0:
        return 32
    if low == 1:
        return 16
    if low == 2:
        return 8
    raise FormatError(f"data format {fmt} has no datum size")


def format_code(name: str) -> tuple[int, bool]:
    """(code, unsigned) of an L1 format name (case-insensitive); :class:`FormatError` names
    the choices."""
    try:
        return FORMAT_NAMES[name.lower()]
    except KeyError:
        raise FormatError(f"unknown L1 format '{name}' (expected one of "
                          f"{', '.join(sorted(FORMAT_NAMES))})") from None


def _u32(x: np.ndarray | int) -> np.ndarray:
    return np.asarray(x).astype(U32, copy=False)


# --------------------------------------------------------------------------------------------
# Small bit-level helpers
# --------------------------------------------------------------------------------------------


@functools.cache
def _clz8() -> np.ndarray:
    """Leading zeros of every byte (8 for 0)."""
    v = np.arange(256)
    out = np.full(256, 8, dtype=I64)
    for bit in range(8):
        out = np.where(v >= (1 << (7 - bit)), np.minimum(out, bit), out)
    out.flags.writeable = False
    return out


def _dst_decode_bf16(x: np.ndarray) -> np.ndarray:
    """Dst BF16 storage (sign, man7, exp8) -> BF16 bits."""
    x = x.astype(I64)
    return (x & 0x8000) | ((x & 0xFF) << 7) | ((x >> 8) & 0x7F)


def _dst_encode_bf16(x: np.ndarray) -> np.ndarray:
    """BF16 bits -> Dst BF16 storage."""
    x = x.astype(I64)
    return (x & 0x8000) | ((x & 0x7F) << 8) | ((x >> 7) & 0xFF)


def _dst_decode_fp16(x: np.ndarray) -> np.ndarray:
    """Dst FP16 storage (sign, man10, exp5) -> FP16 bits."""
    x = x.astype(I64)
    return (x & 0x8000) | ((x & 0x1F) << 10) | ((x >> 5) & 0x3FF)


def _dst_encode_fp16(x: np.ndarray) -> np.ndarray:
    x = x.astype(I64)
    return (x & 0x8000) | ((x & 0x3FF) << 5) | ((x >> 10) & 0x1F)


def dst_decode_fp32(x: np.ndarray) -> np.ndarray:
    """Dst32b storage word -> FP32 bits (also the layout INT32 uses)."""
    x = x.astype(I64)
    return (_dst_decode_bf16(x >> 16) << 16) | (x & 0xFFFF)


def dst_encode_fp32(x: np.ndarray) -> np.ndarray:
    """FP32 bits -> Dst32b storage word."""
    x = x.astype(I64)
    return (_dst_encode_bf16((x >> 16) & 0xFFFF) << 16) | (x & 0xFFFF)


def _nan_to_inf32(v: np.ndarray) -> np.ndarray:
    return np.where((v & 0x7FFFFFFF) > 0x7F800000, (v & 0x80000000) | 0x7F800000, v)


# --------------------------------------------------------------------------------------------
# Unpacker: L1 -> Src / Dst
# --------------------------------------------------------------------------------------------


def bfp8_to_bf16(datum: np.ndarray, exp: np.ndarray) -> np.ndarray:
    """A BFP8_b datum (sign, 7-bit magnitude with its leading one explicit) and its shared
    exponent -> BF16 bits: normalised by the magnitude's leading zeros, the exponent
    decremented by as many (modulo 256, as the hardware does); magnitude 0 is +0, or -inf
    with the sign set."""
    d = datum.astype(I64) & 0xFF
    sign = d >> 7
    mag = (d << 1) & 0xFF
    lz = _clz8()[mag]
    e = (exp.astype(I64) - lz) & 0xFF
    out = (sign << 15) | (e << 7) | ((mag << lz) & 0x7E)
    return np.where(mag == 0, np.where(sign == 1, 0xFF80, 0), out)


def bfp8a_to_fp16(datum: np.ndarray, exp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A BFP8a datum and its 5-bit shared exponent -> FP16 bits (ISA documentation's
    ``BFP8aToFP16``; magnitude 0 is +0 or -inf). Also returns where the decremented exponent
    left 5 bits (undefined behaviour)."""
    d = datum.astype(I64) & 0xFF
    sign = d >> 7
    mag = (d << 1) & 0xFF
    lz = _clz8()[mag]
    e = (exp.astype(I64) - lz) & 0xFF
    bad = (mag != 0) & ((e & 0xE0) != 0)
    out = (sign << 15) | ((e & 0x1F) << 10) | (((mag << lz) & 0x7E) << 3)
    return np.where(mag == 0, np.where(sign == 1, 0xFC00, 0), out), bad


def _fp32_to_fp16_unpack(v: np.ndarray) -> np.ndarray:
    """FP32 bits -> FP16 bits as the unpacker converts: rebias, truncate the mantissa, below
    range signed 0, above range the largest value (exponent 31, mantissa all ones)."""
    s = (v >> 16) & 0x8000
    e = ((v >> 23) & 0xFF) - 112
    m = (v >> 13) & 0x3FF
    return np.where(e < 0, s, np.where(e > 31, s | 0x7FFF, s | (e << 10) | m))


def _lf8_to_fp16(v: np.ndarray, e4m3: bool) -> np.ndarray:
    """FP8 -> FP16 bits: e5m2 is the top byte of an FP16 (Blackhole: exponent and mantissa all
    ones also fill the low byte), e4m3 rebiases (exponent 15 with mantissa 7 keeps a full
    mantissa)."""
    v = v.astype(I64) & 0xFF
    if e4m3:
        s = v & 0x80
        e = (v >> 3) & 15
        m = v & 7
        pad = np.where((e == 15) & (m == 7), 0x7F, 0)
        e = np.where(e != 0, e + 8, 0)
        return (s << 8) | (e << 10) | (m << 7) | pad
    return np.where((v & 0x7F) == 0x7F, (v << 8) | 0xFF, v << 8)


def _fp16_logical(h: np.ndarray) -> np.ndarray:
    """FP16 bits -> the logical 19-bit Src value (5-bit exponent in bits 14..10)."""
    return ((h & 0x8000) << 3) | (h & 0x7FFF)


class UnpackError(FormatError):
    """A conversion the unpacker model does not implement; ``undefined`` tells undefined
    behaviour (the documentation's or the official simulator's) from missing functionality."""

    def __init__(self, message: str, undefined: bool = False) -> None:
        super().__init__(message)
        self.undefined = undefined


def _int8_to_fp16(v: np.ndarray, unsigned: bool) -> np.ndarray:
    """INT8 (sign-magnitude, or unsigned) -> the "Integer 8" overlay on FP16 (exponent 16)."""
    v = v.astype(I64) & 0xFF
    sign = np.zeros_like(v) if unsigned else v & 0x80
    mag = v - sign
    return (sign << 8) | mag | np.where(mag != 0, 16 << 10, 0)


def unpack_to_src(bits: np.ndarray, exp: np.ndarray | None, in_fmt: int, out_fmt: int,
                  unsigned: bool = False, e4m3: bool = False) -> np.ndarray:
    """L1 datum bits (as read, low bits of ``bits``) -> logical 19-bit Src values.

    ``exp`` is each datum's shared exponent (BFP formats). FP32 input converts to TF32 (low 13
    mantissa bits dropped), BF16 (exponent-0 flushed, low 16 bits dropped) or FP16 (rebias,
    truncation, saturation); any other input needs ``out_fmt == in_fmt``
    (:class:`UnpackError` with ``undefined``) and becomes BF16 (BF16, BFP*_b), FP16 (FP16,
    FP8, BFP*a, INT8/UINT8's integer overlay) or Integer "16" (UINT16)."""
    v = bits.astype(I64)
    if in_fmt == DataFormat.FLOAT32:
        if out_fmt == DataFormat.TF32:
            return (v >> 13) & 0x7FFFF
        if out_fmt == DataFormat.FLOAT16_B:
            v = np.where((v & 0x7F800000) == 0, v & 0x80000000, v)
            return ((v >> 16) & 0xFFFF) << 3
        if out_fmt == DataFormat.FLOAT16:
            return _fp16_logical(_fp32_to_fp16_unpack(v))
        raise UnpackError(f"FP32 in L1 cannot be unpacked to Src as format {out_fmt}",
                          undefined=True)
    if in_fmt != out_fmt:
        raise UnpackError(f"unpacking format {in_fmt} to Src needs the same output format "
                          f"(found {out_fmt})", undefined=True)
    if in_fmt == DataFormat.FLOAT16_B:
        return (v & 0xFFFF) << 3
    if in_fmt == DataFormat.FLOAT16:
        return _fp16_logical(v & 0xFFFF)
    if in_fmt in (6, 7, 15):
        shift = {6: 0, 7: 4, 15: 6}[in_fmt]
        assert exp is not None
        return bfp8_to_bf16(v << shift, exp) << 3
    if in_fmt in BFP_A_FORMATS:
        shift = {2: 0, 3: 4, 11: 6}[in_fmt]
        assert exp is not None
        h, bad = bfp8a_to_fp16(v << shift, exp)
        if bad.any():
            raise UnpackError("a BFP*a datum's exponent left 5 bits", undefined=True)
        return _fp16_logical(h)
    if in_fmt == DataFormat.LF8:
        return _fp16_logical(_lf8_to_fp16(v, e4m3))
    if in_fmt == DataFormat.INT8:
        return _fp16_logical(_int8_to_fp16(v, unsigned))
    if in_fmt == DataFormat.INT16:
        return _dst_decode_bf16(v & 0xFFFF) << 3
    if in_fmt in (DataFormat.INT32, DataFormat.TF32):
        raise UnpackError(f"format {in_fmt} cannot be unpacked to Src", undefined=True)
    raise UnpackError(f"unpacking format {in_fmt} is not implemented")


@functools.cache
def _cells_table() -> np.ndarray:
    """The Src cell of every 19-bit logical value (2 MiB, made once)."""
    from .formats import src_from_logical

    table = src_from_logical(np.arange(1 << 19, dtype=U32)).astype(U32)
    table.flags.writeable = False
    return table


def src_cells(logical: np.ndarray) -> np.ndarray:
    """Logical 19-bit Src values -> Src cells (the physical order), by table."""
    return _cells_table().take(logical & 0x7FFFF)


def unpack_to_dst(bits: np.ndarray, exp: np.ndarray | None, in_fmt: int, out_fmt: int,
                  unsigned: bool = False, e4m3: bool = False) -> tuple[np.ndarray, bool]:
    """L1 datum bits -> Dst storage: ``(values, is32)``. FP32/TF32 with output FP32 or TF32,
    and INT32, go to Dst32b as they are; FP32 with output BF16/FP16 and every 16-bit-result
    format go to Dst16b (the ISA documentation's model; the official simulator implements
    only the 32-bit cases)."""
    v = bits.astype(I64)
    if in_fmt in (DataFormat.FLOAT32, DataFormat.TF32) and out_fmt in (0, 4):
        return dst_encode_fp32(v & 0xFFFFFFFF), True
    if in_fmt == DataFormat.INT32:
        if out_fmt != DataFormat.INT32:
            raise UnpackError(f"INT32 unpacks to Dst only as INT32 (found {out_fmt})",
                              undefined=True)
        return dst_encode_fp32(v & 0xFFFFFFFF), True
    if in_fmt == DataFormat.INT16:
        if out_fmt != in_fmt:
            raise UnpackError("UINT16 unpacks only as UINT16", undefined=True)
        return v & 0xFFFF, False
    logical = unpack_to_src(bits, exp, in_fmt, out_fmt, unsigned, e4m3)
    if in_fmt == DataFormat.TF32:
        raise UnpackError("TF32 in L1 unpacks to Dst only as FP32", undefined=True)
    fp16 = out_fmt == DataFormat.FLOAT16 or in_fmt in (1, 2, 3, 10, 11, 14)
    if fp16:
        h = ((logical >> 3) & 0x8000) | (logical & 0x7FFF)
        return _dst_encode_fp16(h), False
    return _dst_encode_bf16((logical >> 3) & 0xFFFF), False


def read_datums(l1: np.ndarray, start_bit: int, count: int, size: int, row_width: int,
                row_stride: int) -> np.ndarray:
    """``count`` datums of ``size`` bits from L1: datum ``i`` at bit ``start_bit + size *
    (i % row_width) + 8 * row_stride * (i // row_width)`` (little-endian; 2- and 4-bit datums
    from the low bits of their byte first). Returns int64 values."""
    if size >= 8 and start_bit % 8 == 0 and 8 * row_stride == size * row_width:
        # contiguous whole bytes: a view of L1
        start = start_bit // 8
        dtype = {8: np.uint8, 16: "<u2", 32: "<u4"}[size]
        return l1[start:start + count * size // 8].view(dtype).astype(I64)
    i = np.arange(count, dtype=I64)
    addr = start_bit + size * (i % row_width) + 8 * row_stride * (i // row_width)
    byte = addr >> 3
    if size >= 8:
        n = size // 8
        out = l1[byte].astype(I64)
        for k in range(1, n):
            out |= l1[byte + k].astype(I64) << (8 * k)
        return out
    return (l1[byte].astype(I64) >> (addr & 7)) & ((1 << size) - 1)


# --------------------------------------------------------------------------------------------
# Packer: Dst -> L1
# --------------------------------------------------------------------------------------------

#: (Read_32b_data, intermediate format, output format) the packer implements, as the
#: official simulator lists them (``Read_32b_data << 8 | Dstacc << 4 | Out``)
PACK_MODES = frozenset({
    0x10, 0x11, 0x15, 0x1A, 0x26, 0x50, 0x55, 0x56, 0x57, 0x5F, 0x60, 0x65, 0x66, 0x67, 0x99,
    0x100, 0x101, 0x106, 0x107, 0x10F, 0x111, 0x11A, 0x155, 0x166, 0x167, 0x188, 0x199, 0x1EE,
})


class PackError(FormatError):
    """A packer configuration the model does not implement (``undefined``: one the
    documentation or the official simulator calls undefined behaviour)."""

    def __init__(self, message: str, undefined: bool = False) -> None:
        super().__init__(message)
        self.undefined = undefined


def check_pack_mode(read32: bool, inter: int, out: int, round10: bool) -> None:
    """:class:`PackError` unless the conversion ``inter`` -> ``out`` is one the packer
    implements with this Dst width and ``Round_10b_mant``."""
    mode = (int(read32) << 8) | (inter << 4) | out
    if mode not in PACK_MODES:
        raise PackError(f"packing from intermediate format {inter} to {out} with "
                        f"Read_32b_data={int(read32)} is not implemented")
    if mode in (0x111, 0x11A) and not round10:
        raise PackError(f"packing FP32 Dst to format {out} through FP16 needs Round_10b_mant")
    if mode not in (0x111, 0x11A, 0x1A) and round10:
        raise PackError(f"Round_10b_mant with intermediate {inter} and output {out} is not "
                        f"implemented")


def pack_read(raw: np.ndarray, read32: bool, inter: int, round10: bool = False,
              read_unsigned: bool = False) -> np.ndarray:
    """Stage 1, the early conversion: Dst storage (Dst32b words or Dst16b cells, already 0
    for invalid rows) -> the intermediate value.

    From FP32 Dst: BF16 (NaN to signed Inf, round half away from zero), BFP8_b (NaN to Inf,
    truncate to BF16 then round to 6 stored mantissa bits, ``(x + 1) & ~1``), FP16 (NaN to Inf,
    round to the 19-bit TF32 layout ``(x + 0x1000) >> 13``), INT8 (clamp), all flushing
    exponent 0 to +0; FP32/INT32 pass; UINT16 keeps the high half undecoded. From 16-bit Dst:
    FP16 (exponent 0 to +0; BFP8a first rounds to 6 mantissa bits), BF16/BFP8_b (NaN to Inf,
    exponent 0 to +0, BFP8_b rounds to 6 bits), with ``round10`` BF16 storage re-read as FP16
    (rebias, saturation)."""
    v = raw.astype(I64)
    if read32:
        if inter == DataFormat.INT16:
            return (v >> 16) & 0xFFFF
        v = dst_decode_fp32(v)
        if inter in (5, 6):
            v = _nan_to_inf32(v)
            v = (v + 0x8000) >> 16 if inter == 5 else (((v >> 16) + 1) & ~1) & 0x1FFFF
            return np.where((v & 0x7FFF) < 0x80, 0, v)
        if inter == DataFormat.INT8:
            if read_unsigned:
                return np.where(v & 0x80000000, 0, np.minimum(v, 255))
            return ((v & 0x80000000) >> 24) | np.minimum(v & 0x7FFFFFFF, 127)
        if inter == DataFormat.FLOAT16:
            v = (_nan_to_inf32(v) + 0x1000) >> 13
            return np.where((v & 0x3FFFF) < 0x400, 0, v)
        if inter in (0, 8):
            return v
        raise PackError(f"reading FP32 Dst as intermediate format {inter} is not implemented")
    if inter == DataFormat.FLOAT16 and round10:
        b = _dst_decode_bf16(v)
        e = ((b >> 7) & 0xFF) - 112
        s = b & 0x8000
        return np.where(e < 0, s, np.where(e > 31, s | 0x7FFF, s | (e << 10) | ((b & 0x7F) << 3)))
    if inter in (1, 2):
        h = _dst_decode_fp16(v)
        if inter == 2:
            h = np.where((h & 0x7FFF) > 0x7FF7, (h & 0x8000) | 0x7FF0, h)
            h = (h + 8) & ~15
        return np.where((h & 0x7FFF) < 0x400, 0, h)
    if inter in (5, 6):
        b = _dst_decode_bf16(v)
        b = np.where((b & 0x7FFF) > 0x7F80, (b & 0x8000) | 0x7F80,
                     np.where((b & 0x7FFF) < 0x80, 0, b))
        return (b + 1) & ~1 if inter == 6 else b
    if inter == DataFormat.INT16:
        return v & 0xFFFF
    raise PackError(f"reading 16-bit Dst as intermediate format {inter} is not implemented")


def pack_relu(v: np.ndarray, mode: int, threshold: int, inter: int, read32: bool
              ) -> np.ndarray:
    """Stage 2, ReLU on the intermediate value (``STACC_RELU_ApplyRelu``: 1 zero negatives,
    2 also zero values at or below the threshold, 3 clamp values above it; a threshold with
    bit 15 set is undefined behaviour, which the caller reports)."""
    if mode == 0:
        return v
    if mode > 3:
        raise PackError(f"ApplyRelu={mode} is not implemented")
    if inter == DataFormat.FLOAT16 and read32:  # the 19-bit value of FP32 Dst -> FP16
        thr, sign = threshold << 3, 0x40000
    elif inter in (1, 2, 5, 6):
        thr, sign = threshold, 0x8000
    elif inter == DataFormat.INT32:
        if mode != 1:
            raise PackError(f"ReLU mode {mode} on INT32 is not implemented")
        return np.where(v & 0x80000000, 0, v)
    elif inter == DataFormat.FLOAT32:
        thr = threshold << 16
        v = np.where(v & 0x80000000, 0, v)
        if mode == 2:
            return np.where(v <= thr, 0, v)
        if mode == 3:
            return np.where((v >> 13) > (thr >> 13), thr, v)
        return v
    else:
        raise PackError(f"ReLU with intermediate format {inter} is not implemented")
    v = np.where(v & sign, 0, v)
    if mode == 2:
        return np.where(v <= thr, 0, v)
    if mode == 3:
        return np.where(v > thr, thr, v)
    return v


def pack_late(v: np.ndarray, read32: bool, inter: int, out: int, e4m3: bool = False
              ) -> np.ndarray:
    """Stages 3 and 4: the late conversion of the intermediate value to the output format
    (FP16 -> FP32 rebias, FP16 -> BF16 truncation, FP16 -> FP8, FP32 -> FP16 truncation with
    saturation and no exponent-0 flush, FP32 -> the BF16 that BFP packing takes (truncation),
    BF16 -> FP32)."""
    if inter == DataFormat.FLOAT16 and read32:  # 19-bit TF32 layout -> FP16 bits
        s = v >> 18
        e = ((v >> 10) & 0xFF) - 112
        v = np.where(e < 0, s << 15,
                     np.where(e > 31, (s << 15) | 0x7FFF, (s << 15) | (e << 10) | (v & 0x3FF)))
    if inter == DataFormat.FLOAT16 and out == DataFormat.FLOAT32:
        s = (v & 0x8000) << 16
        return np.where(v & 0x7C00, s | (((v & 0x7FFF) + (112 << 10)) << 13),
                        s | ((v & 0x3FF) << 13))
    if (inter, out) in ((1, 5), (2, 6)):
        e = (v >> 10) & 0x1F
        return np.where(e == 0, 0, (v & 0x8000) | ((e + 112) << 7) | ((v & 0x3FF) >> 3))
    if inter == DataFormat.FLOAT16 and out == DataFormat.LF8:
        if not e4m3:
            raise PackError("packing FP16 to FP8 e5m2 is not implemented (only e4m3, "
                            "Pac_LF8_4b_exp)")
        s = (v >> 15) & 1
        e = (v >> 10) & 0x1F
        return np.where(e <= 8, s << 7, np.where(e >= 24, (s << 7) | 0x7F,
                                                 (s << 7) | ((e - 8) << 3) | ((v & 0x3FF) >> 7)))
    if inter == DataFormat.FLOAT32 and out == DataFormat.FLOAT16:
        s = v >> 31
        e = ((v >> 23) & 0xFF) - 112
        return np.where(e < 0, s << 15, np.where(e > 31, (s << 15) | 0x7FFF,
                                                 (s << 15) | (e << 10) | ((v >> 13) & 0x3FF)))
    if inter == DataFormat.FLOAT32 and out in (6, 7, 15):
        v = v >> 16
        return np.where((v & 0x7FFF) < 0x80, 0, v)
    if inter in (5, 6) and out == DataFormat.FLOAT32:
        return v << 16
    return v


def bfp_pack(v: np.ndarray, out: int) -> tuple[np.ndarray, np.ndarray]:
    """BF16-layout values (a multiple of 16) -> (shared exponents, magnitudes with sign) of a
    BFP format with ``datum_bits(out)`` bits per datum. The shared exponent of 16 datums is
    their largest exponent (255 counts as an ordinary one); each magnitude (hidden one + 7
    bits) is shifted right by the difference with round half up, 128 saturating to 127, a
    difference of 8 or more giving 0; BFP4/BFP2 keep the top 3/1 magnitude bits of that; the
    sign is set only on a non-zero magnitude (a negative zero means -inf to the unpacker)."""
    size = datum_bits(out)
    g = v.astype(I64).reshape(-1, 16)
    e = (g >> 7) & 0xFF
    shared = e.max(axis=1)
    m = (g & 0x7F) | np.where(e != 0, 0x80, 0)
    shift = shared[:, None] - e
    rounded = (m + (1 << np.minimum(shift, 8))) >> (np.minimum(shift, 8) + 1)
    rounded = np.where(shift >= 8, 0, np.minimum(rounded, 127))
    rounded >>= 8 - size
    sign = (g >> 15) & 1
    rounded = np.where(rounded != 0, rounded | (sign << (size - 1)), 0)
    return shared.astype(I64), rounded.reshape(-1)


def pack_datums_to_bytes(values: np.ndarray, size: int) -> np.ndarray:
    """Datum bit patterns -> little-endian L1 bytes (``size`` 32, 16 or 8 bits; 4- and 2-bit
    datums packed low bits first)."""
    v = values.astype(I64)
    if size == 32:
        return (v & 0xFFFFFFFF).astype("<u4").view(U8)
    if size == 16:
        return (v & 0xFFFF).astype("<u2").view(U8)
    if size == 8:
        return (v & 0xFF).astype(U8)
    per = 8 // size
    g = (v & ((1 << size) - 1)).reshape(-1, per)
    out = np.zeros(len(g), dtype=I64)
    for k in range(per):
        out |= g[:, k] << (size * k)
    return out.astype(U8)


def l1_accumulate(old: np.ndarray, new: np.ndarray, out: int) -> np.ndarray:
    """Pack_L1_Acc: the packed value added to what L1 holds (FP32: float add with denormals
    as zero and one NaN; BF16: the sum rounded to nearest even, NaN inputs as huge finite
    numbers, +inf + -inf a NaN; FP16: an FP32 sum rounded to FP16 with saturation)."""
    o = old.astype(I64)
    n = new.astype(I64)
    if out == DataFormat.FLOAT32:
        def daz(x: np.ndarray) -> np.ndarray:
            return np.where((x & 0x7FFFFFFF) < 0x800000, x & 0x80000000, x)
        a = daz(o).astype(U32).view(np.float32)
        b = daz(n).astype(U32).view(np.float32)
        with np.errstate(all="ignore"):
            r = (a + b).view(U32).astype(I64)
        return np.where((r & 0x7FFFFFFF) > 0x7F800000, 0x7FC00000, daz(r))
    if out == DataFormat.FLOAT16_B:
        def f64(x: np.ndarray, big: np.ndarray) -> np.ndarray:
            x = np.where((x & 0x7FFF) < 0x80, x & 0x8000, x)
            f = (x << 16).astype(U32).view(np.float32).astype(np.float64)
            return np.where((x & 0x7FFF) > 0x7F80, big, f)
        max_normal = np.float64(np.finfo(np.float64).max)
        big_o = np.where(o & 0x8000, -max_normal, max_normal)
        # NaN in the new value: 2**128 times its mantissa, with its sign
        nm = 1.0 + (n & 0x7F) / 128.0
        big_n = np.where(n & 0x8000, -1.0, 1.0) * nm * np.float64(2.0 ** 128)
        with np.errstate(all="ignore"):
            s = f64(o, big_o) + f64(n, big_n)
        bits = s.view(np.int64)
        sign = (bits >> 63) & 1
        e = ((bits >> 52) & 0x7FF) - 1023 + 127
        m = bits & ((1 << 52) - 1)
        rounded = (e << 7) + ((m + (1 << 44) - 1 + ((m >> 45) & 1)) >> 45)
        r = np.where(e <= 0, sign << 15, np.where(e >= 255, (sign << 15) | 0x7F80,
                                                 (sign << 15) | rounded))
        inf_nan = ((o == 0x7F80) & (n == 0xFF80)) | ((o == 0xFF80) & (n == 0x7F80))
        return np.where(inf_nan, 0x7FC0, r)
    if out == DataFormat.FLOAT16:
        def f32(x: np.ndarray) -> np.ndarray:
            s = (x & 0x8000) << 16
            body = np.where((x & 0x7FFF) >= 0x400, ((x & 0x7FFF) << 13) + (112 << 23), 0)
            return (s | body).astype(U32).view(np.float32)
        with np.errstate(all="ignore"):
            r = (f32(o) + f32(n)).view(U32).astype(I64)
        sign = (r >> 16) & 0x8000
        e = ((r >> 23) & 0xFF) - 112
        m = r & 0x7FFFFF
        packed = (e << 10) + ((m + (1 << 12) - 1 + ((m >> 13) & 1)) >> 13)
        res = np.where(e <= 0, sign | np.where(e < 0, 0x7FFF, 0),
                       sign | np.where(packed < 0x8000, packed, 0x7FFF))
        cancel = (r & 0x7FFFFFFF) == 0
        return np.where(cancel, sign | np.where(((o >> 10) & 31) >= 30, 0x7FFF, 0), res)
    raise PackError(f"L1 accumulation into format {out} is not implemented")


# --------------------------------------------------------------------------------------------
# Host side: numpy values <-> L1 bytes
# --------------------------------------------------------------------------------------------


def l1_size(fmt: int, count: int) -> int:
    """Bytes ``count`` datums take in L1 (BFP: the exponent section, padded to 16 bytes,
    then the datums)."""
    data = (count * datum_bits(fmt) + 7) // 8
    if fmt in BFP_FORMATS:
        return _exp_section(count) + data
    return data


def _exp_section(count: int) -> int:
    return ((count + 15) // 16 + 15) // 16 * 16


def encode(values: np.ndarray, fmt: int, unsigned: bool = False) -> np.ndarray:
    """Numpy values (flattened, in L1 order) -> the bytes of L1 format ``fmt``.

    Floats are converted as the packer converts an FP32 Dst (BF16: round half away from zero;
    FP16: truncation, saturation; BFP*_b: the packer's FP32 -> BFP8_b path, then the narrower
    magnitude; FP8: FP32 -> FP16 with ``Round_10b_mant`` -> e4m3 is not offered, e5m2 keeps
    the top byte of a truncated FP16); integers as the hardware stores them (INT8 and INT32
    sign-magnitude, UINT8, UINT16 as they are). BFP formats need a multiple of 16 values; BFP*a
    is not offered."""
    fmt = int(fmt)
    v = np.asarray(values).reshape(-1)
    if fmt in BFP_FORMATS:
        if fmt in BFP_A_FORMATS:
            raise FormatError("encoding BFP*a (5-bit shared exponent) is not offered")
        if len(v) % 16:
            raise FormatError(f"BFP formats hold multiples of 16 values, not {len(v)}")
        bits = np.asarray(v, dtype=np.float32).view(U32).astype(I64)
        b = pack_read(dst_encode_fp32(bits), True, DataFormat.BFP8_B)
        shared, mags = bfp_pack(b, fmt)
        out = np.zeros(l1_size(fmt, len(v)), dtype=U8)
        out[:len(shared)] = shared
        data = pack_datums_to_bytes(mags, datum_bits(fmt))
        out[_exp_section(len(v)):] = data
        return out
    if fmt in (0, 4):
        return np.asarray(v, dtype=np.float32).astype("<f4").view(U8).copy()
    if fmt == DataFormat.FLOAT16_B:
        bits = np.asarray(v, dtype=np.float32).view(U32).astype(I64)
        b = pack_read(dst_encode_fp32(bits), True, DataFormat.FLOAT16_B)
        return pack_datums_to_bytes(b, 16)
    if fmt == DataFormat.FLOAT16:
        bits = np.asarray(v, dtype=np.float32).view(U32).astype(I64)
        return pack_datums_to_bytes(pack_late(bits, True, 0, 1), 16)
    if fmt == DataFormat.LF8:
        bits = np.asarray(v, dtype=np.float32).view(U32).astype(I64)
        return pack_datums_to_bytes(pack_late(bits, True, 0, 1) >> 8, 8)
    if fmt == DataFormat.INT8:
        i = np.asarray(v).astype(I64)
        if unsigned:
            if (i < 0).any() or (i > 255).any():
                raise FormatError("UINT8 values must lie in 0..255")
            return i.astype(U8)
        if (np.abs(i) > 127).any():
            raise FormatError("INT8 values must lie in -127..127")
        return (np.where(i < 0, 0x80, 0) | np.abs(i)).astype(U8)
    if fmt == DataFormat.INT32:
        i = np.asarray(v).astype(I64)
        if (np.abs(i) > 0x7FFFFFFF).any():
            raise FormatError("INT32 values must lie in -(2**31-1)..2**31-1")
        return pack_datums_to_bytes(np.where(i < 0, 0x80000000, 0) | np.abs(i), 32)
    if fmt == DataFormat.INT16:
        i = np.asarray(v).astype(I64)
        if (i < 0).any() or (i > 0xFFFF).any():
            raise FormatError("UINT16 values must lie in 0..65535")
        return pack_datums_to_bytes(i, 16)
    raise FormatError(f"encoding format {fmt} is not offered")


def decode(data: np.ndarray, fmt: int, count: int, unsigned: bool = False) -> np.ndarray:
    """The bytes of ``count`` datums of L1 format ``fmt`` -> numpy values: float32 for the
    float formats (BFP and FP8 as the unpacker converts them to BF16/FP16), int32 for INT8 and
    INT32 (sign-magnitude), uint8 for UINT8, uint16 for UINT16."""
    fmt = int(fmt)
    data = np.asarray(data, dtype=U8).reshape(-1)
    need = l1_size(fmt, count)
    if len(data) < need:
        raise FormatError(f"{count} datums of format {fmt} need {need} bytes, not {len(data)}")
    if fmt in BFP_FORMATS:
        exp = data[:(count + 15) // 16].astype(I64)
        body = data[_exp_section(count):]
        bits = read_datums(body, 0, count, datum_bits(fmt), 16, 2 * datum_bits(fmt))
        e = np.repeat(exp, 16)[:count]
        logical = unpack_to_src(bits, e, fmt, fmt)
        if fmt in BFP_A_FORMATS:
            return _fp16_from_logical(logical)
        return ((logical >> 3) << 16).astype(U32).view(np.float32)
    size = datum_bits(fmt)
    bits = read_datums(data, 0, count, size, 16, 2 * size)
    if fmt in (0, 4):
        return bits.astype(U32).view(np.float32)
    if fmt == DataFormat.FLOAT16_B:
        return (bits << 16).astype(U32).view(np.float32)
    if fmt == DataFormat.FLOAT16:
        return bits.astype(U16).view(np.float16).astype(np.float32)
    if fmt == DataFormat.LF8:
        return _fp16_from_logical(unpack_to_src(bits, None, fmt, fmt))
    if fmt == DataFormat.INT8:
        if unsigned:
            return bits.astype(U8)
        return np.where(bits & 0x80, -(bits & 0x7F), bits & 0x7F).astype(np.int32)
    if fmt == DataFormat.INT32:
        return np.where(bits & 0x80000000, -(bits & 0x7FFFFFFF), bits & 0x7FFFFFFF
                        ).astype(np.int32)
    if fmt == DataFormat.INT16:
        return bits.astype(U16)
    raise FormatError(f"decoding format {fmt} is not offered")


def _fp16_from_logical(logical: np.ndarray) -> np.ndarray:
    h = ((logical >> 3) & 0x8000) | (logical & 0x7FFF)
    return h.astype(U16).view(np.float16).astype(np.float32)


def tilize(a: np.ndarray) -> np.ndarray:
    """A ``(32, 32)`` matrix -> its 1024 values in tile order: four 16x16 faces (top left, top
    right, bottom left, bottom right), each row-major, as tt-metal lays tiles out in L1."""
    a = np.asarray(a)
    if a.shape != (32, 32):
        raise FormatError(f"a tile is 32x32, not {a.shape}")
    return a.reshape(2, 16, 2, 16).transpose(0, 2, 1, 3).reshape(-1)


def untilize(v: np.ndarray) -> np.ndarray:
    """1024 values in tile order -> the ``(32, 32)`` matrix (inverse of :func:`tilize`)."""
    v = np.asarray(v).reshape(-1)
    if v.size != 1024:
        raise FormatError(f"a tile holds 1024 values, not {v.size}")
    return v.reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(32, 32)


def bf16_values(x: np.ndarray) -> np.ndarray:
    """Round float values to BF16 (nearest even) and back to float32: what a host would store."""
    return np.asarray(x, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


__all__ = [
    "BFP_A_FORMATS",
    "BFP_FORMATS",
    "FORMAT_NAMES",
    "PACK_MODES",
    "PackError",
    "UnpackError",
    "bf16_values",
    "bfp8_to_bf16",
    "bfp8a_to_fp16",
    "bfp_pack",
    "check_pack_mode",
    "datum_bits",
    "decode",
    "dst_decode_fp32",
    "dst_encode_fp32",
    "encode",
    "format_code",
    "l1_accumulate",
    "l1_size",
    "pack_datums_to_bytes",
    "pack_late",
    "pack_read",
    "pack_relu",
    "read_datums",
    "src_cells",
    "tilize",
    "unpack_to_dst",
    "unpack_to_src",
    "untilize",
]
