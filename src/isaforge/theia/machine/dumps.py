"""What a run leaves behind: the RTL test bench's dump files ``rf.vp.N.log`` and
``OMEM.vp.N.log``, and OMEM drawn as a picture.

* ``rf.vp.N.log``: registers 0..127, one line each, ``r<i>\\t<x> <y> <z>`` in 8-digit
  lower-case hex; a lane never written is ``xxxxxxxx``.
* ``OMEM.vp.N.log``: OMEM words 0..31, ``@<i>\\t<word>`` with ``i`` in at least two digits.

Readers return the values as strings (``"0000aced"`` or ``"xxxxxxxx"``) so that undefined
bits survive; :func:`defined` tells whether a dumped word is fully defined.

OMEM as a picture (:func:`omem_rgba`, :func:`save_omem_image`): each 32-bit word one RGBA
pixel, read as ``0xAARRGGBB`` (8 bits per channel, the design document's "true colour plus
alpha"). Programs often leave alpha at zero ("ignored, all zero filled"), so when no written
word has a non-zero alpha byte the pixels are drawn opaque. Words never written are
transparent. Rows are ``width`` pixels; the height covers the highest written address.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import IsaforgeError, SourceLoc

if TYPE_CHECKING:
    import numpy as np

RF_DUMP_ROWS = 128
OMEM_DUMP_WORDS = 32
UNDEFINED = "xxxxxxxx"


class DumpError(IsaforgeError):
    """A dump file that does not have the RTL's format."""


def _word(value: int, ok: bool) -> str:
    return f"{value:08x}" if ok else UNDEFINED


def format_rf(registers: np.ndarray | Sequence[Sequence[int]],
              written: np.ndarray | Sequence[Sequence[bool]], rows: int = RF_DUMP_ROWS) -> str:
    """``registers``/``written``: (rows, 3) arrays, or rows of 3 (the cycle model's)."""
    lines = []
    for i in range(rows):
        r, w = registers[i], written[i]
        lanes = " ".join(_word(int(r[k]), bool(w[k])) for k in range(3))
        lines.append(f"r{i}\t{lanes}\n")
    return "".join(lines)


def format_omem(omem: np.ndarray | Sequence[int], written: np.ndarray | Sequence[bool],
                words: int = OMEM_DUMP_WORDS) -> str:
    return "".join(f"@{i:02d}\t{_word(int(omem[i]), bool(written[i]))}\n" for i in range(words))


def _hexword(text: str, path: str, lineno: int) -> str:
    t = text.lower()
    if len(t) != 8 or any(c not in "0123456789abcdefxz" for c in t):
        raise DumpError(f"expected an 8-digit hex word, found '{text}'", SourceLoc(path, lineno, 1))
    return t


def read_rf(path: Path) -> dict[int, tuple[str, str, str]]:
    """``{row: (x, y, z)}`` from an ``rf.vp.N.log``."""
    return read_rf_text(path.read_text(), str(path))


def read_rf_text(text: str, path: str = "<rf>") -> dict[int, tuple[str, str, str]]:
    out: dict[int, tuple[str, str, str]] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4 or not parts[0].startswith("r") or not parts[0][1:].isdigit():
            raise DumpError(f"expected 'r<N> <x> <y> <z>', found '{line.strip()}'",
                            SourceLoc(path, lineno, 1))
        x, y, z = (_hexword(p, path, lineno) for p in parts[1:])
        out[int(parts[0][1:])] = (x, y, z)
    return out


def read_omem(path: Path) -> dict[int, str]:
    """``{address: word}`` from an ``OMEM.vp.N.log``."""
    return read_omem_text(path.read_text(), str(path))


def read_omem_text(text: str, path: str = "<omem>") -> dict[int, str]:
    out: dict[int, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2 or not parts[0].startswith("@") or not parts[0][1:].isdigit():
            raise DumpError(f"expected '@<N> <word>', found '{line.strip()}'",
                            SourceLoc(path, lineno, 1))
        out[int(parts[0][1:])] = _hexword(parts[1], path, lineno)
    return out


def defined(word: str) -> bool:
    return all(c in "0123456789abcdef" for c in word)


def omem_rgba(omem: np.ndarray, written: np.ndarray, width: int) -> np.ndarray:
    """(height, width, 4) uint8 pixels of the written part of OMEM."""
    if width < 1:
        raise IsaforgeError(f"image width must be at least 1, not {width}")
    import numpy as np  # (only pictures need it: the dumps are text)

    used = np.flatnonzero(written)
    count = int(used[-1]) + 1 if len(used) else 1
    height = -(-count // width)
    words = np.zeros(height * width, dtype=np.uint32)
    mask = np.zeros(height * width, dtype=bool)
    words[:count] = omem[:count]
    mask[:count] = written[:count]
    alpha = (words >> 24).astype(np.uint8)
    if not np.any(alpha[mask]):
        alpha = np.full_like(alpha, 255)
    rgba = np.stack([(words >> 16) & 0xFF, (words >> 8) & 0xFF, words & 0xFF, alpha], axis=-1)
    rgba = rgba.astype(np.uint8)
    rgba[~mask] = 0
    return rgba.reshape(height, width, 4)


def save_omem_image(path: Path, omem: np.ndarray, written: np.ndarray, width: int) -> None:
    from PIL import Image

    Image.fromarray(omem_rgba(omem, written, width), "RGBA").save(path)


__all__ = ["OMEM_DUMP_WORDS", "RF_DUMP_ROWS", "UNDEFINED", "DumpError", "defined",
           "format_omem", "format_rf", "omem_rgba", "read_omem", "read_omem_text", "read_rf",
           "read_rf_text", "save_omem_image"]
