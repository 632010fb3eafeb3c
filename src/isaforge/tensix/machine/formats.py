"""Numeric formats of the Tensix register files, as bit-level numpy conversions.

Three layouts meet here; every function says which it takes and returns.

* **IEEE** bit patterns (what a CPU, numpy or ml_dtypes holds): FP32 ``uint32``, BF16 and
  FP16 ``uint16``, TF32 as an FP32 pattern whose low 13 mantissa bits are ignored.
* **Dst storage** (``DstBits``, 16-bit cells):

  ========  ===========================================================
  BF16      sign[15] man[14:8] exp[7:0]
  FP16      sign[15] man[14:5] exp[4:0]   (exponent 31 is finite, no Inf/NaN)
  Int "8"   sign[15] mag[14:5] exp[4:0] = 16 (0 when the magnitude is 0)
  Int "16"  16 opaque bits
  FP32      Dst32b word: sign[31] man[22:16]->[30:24] exp[23:16] man[15:0]->[15:0]
            (high half = the BF16 storage of the top 16 bits; low half = man[15:0])
  Int "32"  sign-magnitude, bits shuffled as FP32's (mag[30:23] where FP32 has its exponent)
  ========  ===========================================================

* **Src cells** (19 bits, held in ``uint32``), the physical order of SrcA/SrcB:

  ========  ===========================================================
  TF32/BF16 sign[18] man[17:8] exp[7:0]   (BF16: the low 3 mantissa bits, [10:8], are 0)
  FP16      sign[18] man[17:8] zero[7:5] exp[4:0]
  Int "8"   sign[18] mag[17:8] zero[7:5] exp[4:0] = 16 (or 0)
  ========  ===========================================================

  The matrix unit works on the **logical** order ``sign[18] exp[17:10] man[9:0]`` (for 8-bit
  exponents ``logical << 13`` is the FP32 pattern; FP16 keeps its 5-bit exponent in
  ``[14:10]``). :func:`src_to_logical` / :func:`src_from_logical` convert.

Format codes are the hardware ``DataFormat`` numbers (:class:`DataFormat`); :func:`src_style`
maps one to the way the matrix unit and the MOV* instructions treat it.
"""

from __future__ import annotations

import functools
from enum import IntEnum

import ml_dtypes
import numpy as np

from ...core.errors import IsaforgeError

U32 = np.uint32
U16 = np.uint16


class FormatError(IsaforgeError):
    """An unknown or unsupported data format name/code, or values that do not fit it."""


class DataFormat(IntEnum):
    """The hardware data-format codes (ALU_FORMAT_SPEC_REG*, unpacker/packer formats)."""

    FLOAT32 = 0
    FLOAT16 = 1  # FP16 ("FP16A")
    BFP8 = 2  # BFP8a: 5-bit shared exponent, unpacks to FP16
    BFP4 = 3
    TF32 = 4
    FLOAT16_B = 5  # BF16 ("FP16B")
    BFP8_B = 6
    BFP4_B = 7
    INT32 = 8
    INT16 = 9  # (UInt16 in tt-metal's enum)
    LF8 = 10  # FP8: 1 sign, 5 exp, 2 man; unpacks to FP16
    BFP2 = 11
    INT8 = 14
    BFP2_B = 15


#: Formats the matrix unit treats BF16-style (8-bit exponent, 7-bit mantissa in Src).
BF16_STYLE = frozenset({0, 5, 6, 7, 15, 8, 9})
#: Formats treated FP16-style (5-bit exponent, 10-bit mantissa).
FP16_STYLE = frozenset({1, 2, 3, 10, 11})
#: Integer "8" math (overlaid on FP16).
INT8_STYLE = frozenset({14})


def src_style(fmt: int) -> str:
    """``"bf16"``, ``"fp16"``, ``"tf32"`` or ``"int8"``: how a Src format code is treated."""
    fmt = int(fmt)
    if fmt == DataFormat.TF32:
        return "tf32"
    if fmt in BF16_STYLE:
        return "bf16"
    if fmt in FP16_STYLE:
        return "fp16"
    if fmt in INT8_STYLE:
        return "int8"
    raise FormatError(f"unknown Src data format code {fmt}")


def keeps_low_mantissa(fmt: int) -> bool:
    """True when the matrix unit uses mantissa bits 2..0 of a Src cell (TF32, FP16, FP8)."""
    return int(fmt) in (DataFormat.TF32, DataFormat.FLOAT16, DataFormat.LF8)


def _u32(x: np.ndarray | int) -> np.ndarray:
    return np.asarray(x).astype(U32, copy=False)


def _u16(x: np.ndarray | int) -> np.ndarray:
    return np.asarray(x).astype(U16, copy=False)


# --------------------------------------------------------------------------------------------
# Dst 16-bit layouts
# --------------------------------------------------------------------------------------------


def bf16_to_dst16(bits: np.ndarray) -> np.ndarray:
    """IEEE BF16 bits -> Dst BF16 storage (sign, man7, exp8)."""
    b = _u16(bits)
    return ((b & 0x8000) | ((b & 0x7F) << 8) | ((b >> 7) & 0xFF)).astype(U16)


def dst16_to_bf16(bits: np.ndarray) -> np.ndarray:
    """Dst BF16 storage -> IEEE BF16 bits."""
    b = _u16(bits)
    return ((b & 0x8000) | ((b & 0xFF) << 7) | ((b >> 8) & 0x7F)).astype(U16)


def fp16_to_dst16(bits: np.ndarray) -> np.ndarray:
    """IEEE FP16 bits -> Dst FP16 storage (sign, man10, exp5)."""
    b = _u16(bits)
    return ((b & 0x8000) | ((b & 0x3FF) << 5) | ((b >> 10) & 0x1F)).astype(U16)


def dst16_to_fp16(bits: np.ndarray) -> np.ndarray:
    """Dst FP16 storage -> IEEE FP16 bits (exponent 31 comes out as IEEE Inf/NaN)."""
    b = _u16(bits)
    return ((b & 0x8000) | ((b & 0x1F) << 10) | ((b >> 5) & 0x3FF)).astype(U16)


def int8_to_dst16(values: np.ndarray) -> np.ndarray:
    """Integers -1023..1023 -> Dst Integer "8" (sign-magnitude, exponent field 16, 0 if zero)."""
    v = np.asarray(values).astype(np.int64)
    if np.any(np.abs(v) > 1023):
        raise FormatError("integer \"8\" values must lie in -1023..1023")
    mag = np.abs(v)
    return (((v < 0) << 15) | (mag << 5) | np.where(mag != 0, 16, 0)).astype(U16)


def dst16_to_int8(bits: np.ndarray) -> np.ndarray:
    """Dst Integer "8" -> int16 values (the exponent field is ignored)."""
    b = _u16(bits).astype(np.int32)
    mag = (b >> 5) & 0x3FF
    return np.where(b & 0x8000, -mag, mag).astype(np.int16)


# --------------------------------------------------------------------------------------------
# Dst 32-bit layouts
# --------------------------------------------------------------------------------------------


def fp32_to_dst32(bits: np.ndarray) -> np.ndarray:
    """IEEE FP32 bits -> Dst32b FP32 word (sign, man[22:16], exp, man[15:0])."""
    b = _u32(bits)
    return ((b & 0x8000FFFF) | ((b & 0x7F800000) >> 7) | ((b & 0x007F0000) << 8)).astype(U32)


def dst32_to_fp32(bits: np.ndarray) -> np.ndarray:
    """Dst32b FP32 word -> IEEE FP32 bits."""
    b = _u32(bits)
    return ((b & 0x8000FFFF) | ((b & 0x7F000000) >> 8) | ((b & 0x00FF0000) << 7)).astype(U32)


def dst32_halves_to_fp32(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """The two DstBits halves of Dst32b FP32 words (high at ``Adj32(r)``, low 8 rows further)
    -> IEEE FP32 bits: the high half is the BF16 storage of the top 16 bits (looked up), the
    low half is ``man[15:0]`` as it is."""
    out = _ieee_high_table().take(hi)
    return np.bitwise_or(out, lo, out=out)


@functools.cache
def _ieee_high_table() -> np.ndarray:
    """``(65536,) uint32``: :func:`dst16_to_bf16` of every Dst BF16 storage pattern, as the
    high half of an FP32 word."""
    table = dst16_to_bf16(np.arange(1 << 16, dtype=U16)).astype(U32) << 16
    table.flags.writeable = False
    return table


def int32_to_signmag(values: np.ndarray) -> np.ndarray:
    """Two's complement -> conventional sign-magnitude bits (-2**31 clamps to -(2**31-1))."""
    v = np.asarray(values).astype(np.int64)
    mag = np.minimum(np.abs(v), 0x7FFFFFFF)
    return (((v < 0).astype(np.int64) << 31) | mag).astype(U32)


def int32_to_dst32(values: np.ndarray) -> np.ndarray:
    """Two's complement int32 -> Dst Integer "32": sign-magnitude in the same shuffled order as
    FP32 (magnitude bits 30..23 where FP32 keeps its exponent), as the debug window shows."""
    return fp32_to_dst32(int32_to_signmag(values))


def dst32_to_int32(bits: np.ndarray) -> np.ndarray:
    """Dst Integer "32" -> int32 (-0 becomes 0)."""
    b = dst32_to_fp32(bits).astype(np.int64)
    mag = b & 0x7FFFFFFF
    return np.where(b >> 31, -mag, mag).astype(np.int32)


# --------------------------------------------------------------------------------------------
# Src cells
# --------------------------------------------------------------------------------------------

SRC_MASK = 0x7FFFF


def src_to_logical(cells: np.ndarray) -> np.ndarray:
    """Src cells (sign, man10, exp8) -> logical (sign, exp8, man10)."""
    c = _u32(cells)
    return ((c & 0x40000) | ((c & 0xFF) << 10) | ((c >> 8) & 0x3FF)).astype(U32)


def src_from_logical(logical: np.ndarray) -> np.ndarray:
    """Logical (sign, exp8, man10) -> Src cells (sign, man10, exp8)."""
    v = _u32(logical)
    return ((v & 0x40000) | ((v & 0x3FF) << 8) | ((v >> 10) & 0xFF)).astype(U32)


def shuffle_bf16(x: np.ndarray) -> np.ndarray:
    """Dst BF16 storage (16 bits) -> Src BF16 cell (MOVD2A/MOVD2B)."""
    b = _u32(x)
    return (((b & 0xFF00) << 3) | (b & 0xFF)).astype(U32)


def shuffle_fp16(x: np.ndarray) -> np.ndarray:
    """Dst FP16 / Integer "8" storage -> Src cell (3 zero bits above the exponent)."""
    b = _u32(x)
    return (((b & 0xFFE0) << 3) | (b & 0x1F)).astype(U32)


def shuffle_tf32(x: np.ndarray) -> np.ndarray:
    """Top 19 bits of a Dst32b FP32 word (sign, man7 hi, exp8, man3 lo) -> Src TF32 cell."""
    b = _u32(x)
    return ((b & 0x7F800) | ((b & 0x7) << 8) | ((b & 0x7F8) >> 3)).astype(U32)


def unshuffle_bf16(cell: np.ndarray) -> np.ndarray:
    """Src cell -> Dst BF16 storage (drops mantissa bits 2..0; MOVA2D/MOVB2D)."""
    c = _u32(cell)
    return (((c >> 3) & 0xFF00) | (c & 0xFF)).astype(U16)


def unshuffle_fp16(cell: np.ndarray) -> np.ndarray:
    """Src cell -> Dst FP16 / Integer "8" storage (drops exponent bits 7..5)."""
    c = _u32(cell)
    return (((c >> 3) & 0xFFE0) | (c & 0x1F)).astype(U16)


def unshuffle_tf32(cell: np.ndarray) -> np.ndarray:
    """Src TF32 cell -> Dst32b FP32 word (low 13 mantissa bits zero)."""
    c = _u32(cell)
    top = (c & 0x7F800) | ((c & 0xFF) << 3) | ((c >> 8) & 0x7)
    return (top << 13).astype(U32)


def fp32_bits_to_src(bits: np.ndarray, style: str) -> np.ndarray:
    """IEEE FP32 bits -> Src cell for ``style`` "tf32" (truncate to 10 mantissa bits) or
    "bf16" (truncate to 7). Truncation is what the unpackers do to FP32 input."""
    b = _u32(bits)
    if style == "tf32":
        logical = b >> 13
    elif style == "bf16":
        logical = (b >> 13) & ~U32(7)
    else:
        raise FormatError(f"FP32 bits cannot be stored as {style!r}")
    return src_from_logical(logical)


def bf16_bits_to_src(bits: np.ndarray) -> np.ndarray:
    """IEEE BF16 bits -> Src BF16 cell."""
    return src_from_logical(_u32(bits) << 3)


def src_to_bf16_bits(cells: np.ndarray) -> np.ndarray:
    """Src BF16/TF32 cell -> IEEE BF16 bits (mantissa truncated to 7 bits)."""
    return (src_to_logical(cells) >> 3).astype(U16)


def src_to_fp32_bits(cells: np.ndarray) -> np.ndarray:
    """Src TF32/BF16 cell -> IEEE FP32 bits (low 13 mantissa bits zero)."""
    return (src_to_logical(cells) << 13).astype(U32)


def fp16_bits_to_src(bits: np.ndarray) -> np.ndarray:
    """IEEE FP16 bits -> Src FP16 cell."""
    b = _u32(bits)
    return ((b & 0x8000) << 3 | ((b & 0x3FF) << 8) | ((b >> 10) & 0x1F)).astype(U32)


def src_to_fp16_bits(cells: np.ndarray) -> np.ndarray:
    """Src FP16 cell -> IEEE FP16 bits."""
    c = _u32(cells)
    return (((c >> 3) & 0x8000) | ((c & 0x1F) << 10) | ((c >> 8) & 0x3FF)).astype(U16)


def int8_to_src(values: np.ndarray) -> np.ndarray:
    """Integers -1023..1023 -> Src Integer "8" cell."""
    return shuffle_fp16(int8_to_dst16(values))


def src_to_int8(cells: np.ndarray) -> np.ndarray:
    """Src Integer "8" cell -> int16 values."""
    c = _u32(cells).astype(np.int32)
    mag = (c >> 8) & 0x3FF
    return np.where(c & 0x40000, -mag, mag).astype(np.int16)


# --------------------------------------------------------------------------------------------
# Typed values <-> storage (used by the register-file load/dump API)
# --------------------------------------------------------------------------------------------

#: Dst formats of :meth:`Dst.read` / :meth:`Dst.write` and the numpy dtype they use.
DST_FORMATS: dict[str, tuple[int, type]] = {
    "fp32": (32, np.float32),
    "int32": (32, np.int32),
    "raw32": (32, np.uint32),
    "bf16": (16, ml_dtypes.bfloat16),
    "fp16": (16, np.float16),
    "int8": (16, np.int16),
    "int16": (16, np.uint16),
    "raw": (16, np.uint16),
    "raw16": (16, np.uint16),
}

#: Src formats of :meth:`SrcRegs.load` / :meth:`SrcRegs.dump`.
SRC_FORMATS: dict[str, type] = {
    "tf32": np.float32,
    "fp32": np.float32,
    "bf16": ml_dtypes.bfloat16,
    "fp16": np.float16,
    "int8": np.int16,
    "int16": np.uint16,
    "raw": np.uint32,
}


def _check(fmt: str, table: dict) -> None:
    if fmt not in table:
        raise FormatError(f"unknown format {fmt!r} (expected one of {', '.join(table)})")


def values_to_dst(values: np.ndarray, fmt: str) -> np.ndarray:
    """Typed values -> Dst storage: uint16 cells for 16-bit formats, Dst32b words otherwise.

    Floats are rounded to the format (nearest even) first, as ml_dtypes/numpy do."""
    _check(fmt, DST_FORMATS)
    if fmt == "fp32":
        return fp32_to_dst32(np.asarray(values, np.float32).view(U32))
    if fmt == "int32":
        return int32_to_dst32(values)
    if fmt == "raw32":
        return _u32(values)
    if fmt == "bf16":
        return bf16_to_dst16(np.asarray(values).astype(ml_dtypes.bfloat16).view(U16))
    if fmt == "fp16":
        return fp16_to_dst16(np.asarray(values).astype(np.float16).view(U16))
    if fmt == "int8":
        return int8_to_dst16(values)
    return _u16(values)  # int16 / raw: opaque


def dst_to_values(stored: np.ndarray, fmt: str) -> np.ndarray:
    """Dst storage (as :func:`values_to_dst` returns it) -> typed values."""
    _check(fmt, DST_FORMATS)
    if fmt == "fp32":
        return dst32_to_fp32(stored).view(np.float32)
    if fmt == "int32":
        return dst32_to_int32(stored)
    if fmt == "raw32":
        return _u32(stored)
    if fmt == "bf16":
        return dst16_to_bf16(stored).view(ml_dtypes.bfloat16)
    if fmt == "fp16":
        return dst16_to_fp16(stored).view(np.float16)
    if fmt == "int8":
        return dst16_to_int8(stored)
    return _u16(stored)


def values_to_src(values: np.ndarray, fmt: str) -> np.ndarray:
    """Typed values -> Src cells. ``tf32``/``fp32``: float32 truncated to TF32 (the unpacker's
    conversion); ``bf16``: rounded to BF16; ``fp16``: rounded to FP16; ``int8``: -1023..1023;
    ``int16``: 16 opaque bits (stored as BF16 storage is); ``raw``: 19-bit cells."""
    _check(fmt, SRC_FORMATS)
    if fmt in ("tf32", "fp32"):
        return fp32_bits_to_src(np.asarray(values, np.float32).view(U32), "tf32")
    if fmt == "bf16":  # every 16-bit pattern's cell, looked up (one numpy call)
        bits = np.asarray(values).astype(ml_dtypes.bfloat16, copy=False).view(U16)
        return _cell_table("bf16").take(bits)
    if fmt == "fp16":
        return _cell_table("fp16").take(np.asarray(values).astype(np.float16, copy=False)
                                        .view(U16))
    if fmt == "int8":
        return int8_to_src(values)
    if fmt == "int16":
        return shuffle_bf16(_u16(values))
    v = _u32(values)
    if np.any(v > SRC_MASK):
        raise FormatError("raw Src cells are 19 bits wide")
    return v


@functools.cache
def _cell_table(fmt: str) -> np.ndarray:
    """``(65536,) uint32``: the Src cell of every IEEE BF16 or FP16 bit pattern."""
    bits = np.arange(1 << 16, dtype=U32)
    table = bf16_bits_to_src(bits) if fmt == "bf16" else fp16_bits_to_src(bits)
    table.flags.writeable = False
    return table


def src_to_values(cells: np.ndarray, fmt: str) -> np.ndarray:
    """Src cells -> typed values (the inverse of :func:`values_to_src`)."""
    _check(fmt, SRC_FORMATS)
    if fmt in ("tf32", "fp32"):
        return src_to_fp32_bits(cells).view(np.float32)
    if fmt == "bf16":
        return src_to_bf16_bits(cells).view(ml_dtypes.bfloat16)
    if fmt == "fp16":
        return src_to_fp16_bits(cells).view(np.float16)
    if fmt == "int8":
        return src_to_int8(cells)
    if fmt == "int16":
        return unshuffle_bf16(cells)
    return _u32(cells)


# --------------------------------------------------------------------------------------------
# RISC-V debug window (0xFFBD8000): RISC_DEST_ACCESS_CTRL_SEC[thread].{fmt,no_swizzle,unsigned_int}
# --------------------------------------------------------------------------------------------

DEBUG_WINDOW_BASE = 0xFFBD8000
DEBUG_WINDOW_SIZE = 0x8000
#: Bytes per element for each ``fmt`` (6 and 7 are reserved).
DEBUG_ELEMENT_BYTES = {0: 4, 1: 4, 2: 2, 3: 2, 4: 2, 5: 1}


def debug_load32(word: np.ndarray, fmt: int, no_swizzle: bool) -> np.ndarray:
    """Dst32b word -> what a RISC-V ``lw`` returns (fmt 0: FP32/uint32, 1: int32)."""
    v = _u32(word)
    if not no_swizzle:
        v = dst32_to_fp32(v)
    if fmt == 0:
        return v
    if fmt == 1:
        if no_swizzle:
            return v
        neg = v >= 0x80000000
        return np.where(neg, (-(v & 0x7FFFFFFF).astype(np.int64)) & 0xFFFFFFFF, v).astype(U32)
    raise FormatError(f"debug-window fmt {fmt} has no 32-bit access")


def debug_store32(value: np.ndarray, fmt: int, no_swizzle: bool) -> np.ndarray:
    """What a RISC-V ``sw`` writes -> Dst32b word."""
    v = _u32(value).astype(np.int64)
    if fmt == 1 and not no_swizzle:
        neg = v >= 0x80000000
        mag = (-(v + (v == 0x80000000))) & 0xFFFFFFFF
        v = np.where(neg, 0x80000000 | mag, v)
    elif fmt not in (0, 1):
        raise FormatError(f"debug-window fmt {fmt} has no 32-bit access")
    v = v.astype(U32)
    return v if no_swizzle else fp32_to_dst32(v)


def debug_load16(cell: np.ndarray, fmt: int, no_swizzle: bool, unsigned_int: bool) -> np.ndarray:
    """Dst16b cell -> what a RISC-V ``lhu`` returns (fmt 2 FP16, 3 BF16, 4 int16)."""
    v = _u16(cell)
    if fmt == 2:
        return v if no_swizzle else dst16_to_fp16(v)
    if fmt == 3:
        return v if no_swizzle else dst16_to_bf16(v)
    if fmt == 4:
        if no_swizzle or unsigned_int:
            return v
        w = v.astype(np.int64)
        return np.where(w >= 0x8000, (-(w & 0x7FFF)) & 0xFFFF, w).astype(U16)
    raise FormatError(f"debug-window fmt {fmt} has no 16-bit access")


def debug_store16(value: np.ndarray, fmt: int, no_swizzle: bool, unsigned_int: bool
                  ) -> np.ndarray:
    """What a RISC-V ``sh`` writes -> Dst16b cell."""
    v = _u16(value)
    if fmt == 2:
        return v if no_swizzle else fp16_to_dst16(v)
    if fmt == 3:
        return v if no_swizzle else bf16_to_dst16(v)
    if fmt == 4:
        if no_swizzle or unsigned_int:
            return v
        w = v.astype(np.int64)
        mag = (-(w + (w == 0x8000))) & 0xFFFF
        return np.where(w >= 0x8000, 0x8000 | mag, w).astype(U16)
    raise FormatError(f"debug-window fmt {fmt} has no 16-bit access")


def debug_load8(cell: np.ndarray, fmt: int, no_swizzle: bool, unsigned_int: bool) -> np.ndarray:
    """Dst16b Integer "8" cell -> what a RISC-V ``lbu`` returns (fmt 5)."""
    if fmt != 5:
        raise FormatError(f"debug-window fmt {fmt} has no 8-bit access")
    v = _u16(cell).astype(np.int64)
    if no_swizzle or unsigned_int:
        return ((v >> 5) & 0xFF).astype(np.uint8)
    mag = (v >> 5) & 0x7F
    return (np.where(v & 0x8000, -mag, mag) & 0xFF).astype(np.uint8)


def debug_store8(value: np.ndarray, fmt: int, no_swizzle: bool, unsigned_int: bool
                 ) -> np.ndarray:
    """What a RISC-V ``sb`` writes -> Dst16b cell. Negative bytes reproduce the documented
    hardware quirk (magnitude ``0x180 - v``), not a true two's-complement conversion."""
    if fmt != 5:
        raise FormatError(f"debug-window fmt {fmt} has no 8-bit access")
    v = np.asarray(value).astype(np.int64) & 0xFF
    plain = (v << 5) | np.where(v != 0, 16, 0)
    mag = (0x180 - v - (v == 0x80)) & 0xFF  # held in a uint8_t by the hardware
    quirk = 0x8000 | (mag << 5) | 16
    use_plain = (v < 0x80) | bool(no_swizzle) | bool(unsigned_int)
    return np.where(use_plain, plain, quirk).astype(U16)
