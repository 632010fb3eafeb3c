"""Firmware files: the dword layout, the firmware id and which GPU generation it means.

A firmware file is little-endian dwords. Dword 0 is a zero the kernel strips; dword 1 holds the
version, whose bits 12..23 are the firmware id (``0x6ee`` for a630). On a6xx and later, dword 2
is a NOP whose payload is the offset of the packet jump table.
"""

from __future__ import annotations

import sys

from ..core.errors import FirmwareError

# firmware id -> (GPU name, generation, register-database variant)
FIRMWARE_IDS: dict[int, tuple[str, int, str]] = {
    0x5FF: ("a530", 5, "A5XX"),
    0x6EE: ("a630", 6, "A6XX"),
    0x6DC: ("a650", 6, "A6XX"),
    0x6DD: ("a660", 6, "A6XX"),
    0x730: ("a730", 7, "A7XX"),
    0x740: ("a740", 7, "A7XX"),
    0x520: ("a750", 7, "A7XX"),
    0x512: ("x1-85", 7, "A7XX"),
}
GPU_NAMES = {name: fwid for fwid, (name, _, _) in FIRMWARE_IDS.items()}
# generation names pick a representative firmware id
GPU_NAMES.update({"a5xx": 0x5FF, "a6xx": 0x6EE, "a7xx": 0x730})


def fwid_of(version_dword: int) -> int:
    """The firmware id in a version dword."""
    return (version_dword >> 12) & 0xFFF


def parse_gpu(spec: str | int) -> int:
    """A ``--gpu`` value as a firmware id: hex id as Mesa's ``-g`` takes it (``6dc``,
    ``0x6dc``), or a GPU name (``a650``, ``A660``, ``a7xx``)."""
    if isinstance(spec, int):
        fwid = spec
    else:
        s = spec.strip().lower()
        if s in GPU_NAMES:
            return GPU_NAMES[s]
        try:
            fwid = int(s, 16)
        except ValueError:
            raise FirmwareError(
                f"unknown GPU {spec!r} for --gpu: give a firmware id in hex (e.g. 6ee) or one of "
                + ", ".join(sorted(GPU_NAMES))
            ) from None
    if fwid not in FIRMWARE_IDS:
        raise FirmwareError(
            f"unknown firmware id {fwid:#05x} for --gpu; known ids: "
            + ", ".join(f"{k:03x} ({v[0]})" for k, v in sorted(FIRMWARE_IDS.items()))
        )
    return fwid


def generation(fwid: int) -> int:
    return FIRMWARE_IDS[fwid][1]


def variant(fwid: int) -> str:
    return FIRMWARE_IDS[fwid][2]


class Firmware:
    """A loaded firmware image: ``words[0]`` is the leading zero, ``words[1]`` the version.
    (A plain class rather than a dataclass: see :mod:`isaforge.core.errors`.)"""

    def __init__(self, words: list[int], fwid: int, gen: int) -> None:
        self.words = words
        self.fwid = fwid
        self.gen = gen

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Firmware:
            return NotImplemented
        o: Firmware = other  # type: ignore[assignment]
        return (self.words, self.fwid, self.gen) == (o.words, o.fwid, o.gen)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Firmware(words={self.words!r}, fwid={self.fwid!r}, gen={self.gen!r})"

    @property
    def version(self) -> int:
        return self.words[1]

    @property
    def variant(self) -> str:
        return variant(self.fwid)

    @property
    def gpu_name(self) -> str:
        return FIRMWARE_IDS[self.fwid][0]


def words_of(data: bytes) -> list[int]:
    if len(data) % 4:
        raise FirmwareError(f"firmware size {len(data)} is not a multiple of 4 bytes")
    if sys.byteorder == "little" and _WORD == 4:
        return memoryview(data).cast("I").tolist()  # (without importing struct)
    import struct

    return list(struct.unpack(f"<{len(data) // 4}I", data))


_WORD = memoryview(b"\0" * 8).cast("I").itemsize  # (4 on every platform Python supports)


def load_firmware(data: bytes, gpu: str | int | None = None) -> Firmware:
    """Parse a firmware image, taking the generation from its id unless ``gpu`` overrides it."""
    if not data:
        raise FirmwareError("firmware file is empty")
    words = words_of(data)
    if len(words) < 3:
        raise FirmwareError(f"firmware too short ({len(data)} bytes): no version and header")
    if gpu is not None:
        fwid = parse_gpu(gpu)
    else:
        fwid = fwid_of(words[1])
        if fwid not in FIRMWARE_IDS:
            raise FirmwareError(
                f"unknown firmware id {fwid:#05x} (version {words[1]:08x}); if this is Adreno "
                "firmware, say which GPU it is for with --gpu (e.g. --gpu a650 or --gpu 6dc)"
            )
    return Firmware(words, fwid, generation(fwid))
