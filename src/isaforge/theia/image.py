"""OMEM as a picture: each 32-bit word one RGBA pixel.

A word is read as ``0xAARRGGBB`` (8 bits per channel, the design document's "true colour
plus alpha"). Programs often leave alpha at zero ("ignored, all zero filled"), so when no
written word has a non-zero alpha byte the pixels are drawn opaque. Words never written are
transparent. Rows are ``width`` pixels; the height covers the highest written address.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.errors import IsaforgeError


def omem_rgba(omem: np.ndarray, written: np.ndarray, width: int) -> np.ndarray:
    """(height, width, 4) uint8 pixels of the written part of OMEM."""
    if width < 1:
        raise IsaforgeError(f"image width must be at least 1, not {width}")
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


__all__ = ["omem_rgba", "save_omem_image"]
