"""Loading tt-metal firmware ELFs the way tt-metal's host does.

tt-metal reads a firmware ELF as *discrete* spans: each loadable segment with file contents
(rounded up to 32-bit words; the ``.bss`` part of a segment is never written) becomes one span
at its link address, in address order. Before writing a span to the core, the host relocates
it (Blackhole HAL, ``relocate_dev_addr``): an address in core-local data memory (its bits
include ``MEM_LOCAL_BASE``) moves to ``(addr & ~MEM_LOCAL_BASE) + local_init``, where
``local_init`` is the core's ``MEM_<CORE>_INIT_LOCAL_L1_BASE_SCRATCH``; every other address
stays. The firmware's ``do_crt1`` later copies that staged image from L1 into its local memory
and zeroes ``.bss`` itself. BRISC resets to address 0 (``MEM_BOOT_CODE_BASE``), where the host
writes a ``jal`` to the firmware's base.

The same checks as tt-metal's ELF reader are made (32-bit little-endian RISC-V executable,
word-aligned segments, the first loadable segment is the text and holds the entry point), and
one more for this model: the text is linked at this tile's ``MEM_<CORE>_FIRMWARE_BASE`` and the
ISA attribute is Blackhole's, so a Wormhole build or one of another release is refused with one
clear line. Symbols become a :class:`Symbols` table for traces (``main+0x8c0``).
"""

from __future__ import annotations

import bisect
import io
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from .errors import BadFirmware
from .memmap import CORE_NAMES, CoreInfo, MemoryMap, memory_map

WORD = 4
_PT_LOAD = "PT_LOAD"


@dataclass(frozen=True)
class Segment:
    """One loadable segment: ``data`` is its file contents rounded up to whole words."""

    vaddr: int
    data: bytes
    memsz: int


class Symbols:
    """Address -> name for traces: functions and objects of an ELF, nearest below wins."""

    def __init__(self, entries: list[tuple[int, int, str]],
                 names: dict[str, int] | None = None) -> None:
        self._entries = sorted(entries)
        self._addrs = [e[0] for e in self._entries]
        self.by_name = {name: addr for addr, _, name in self._entries}
        self.by_name.update(names or {})

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> list[tuple[int, int, str]]:
        """(address, size, name) of every entry, by address."""
        return list(self._entries)

    def lookup(self, addr: int) -> str | None:
        """``name`` or ``name+0xOFF`` for the symbol at or below ``addr`` (within its size
        when it has one), or None."""
        i = bisect.bisect_right(self._addrs, addr) - 1
        while i >= 0:
            start, size, name = self._entries[i]
            if addr == start:
                return name
            if size == 0 or addr < start + size:
                return f"{name}+{addr - start:#x}"
            i -= 1
            if i >= 0 and self._entries[i][0] != start:
                break
        return None

    def addr(self, name: str) -> int:
        return self.by_name[name]

    def size(self, name: str) -> int:
        """The size of function or object ``name`` (KeyError if it has none)."""
        for _, size, n in self._entries:
            if n == name:
                return size
        raise KeyError(name)


@dataclass
class Firmware:
    """One core's firmware image as the host loads it."""

    core: str
    path: str
    entry: int
    segments: list[Segment]
    symbols: Symbols
    arch: str
    info: CoreInfo = field(repr=False)

    def spans(self, mm: MemoryMap | None = None) -> list[tuple[int, bytes]]:
        """The (L1 address, bytes) the host writes, relocated as tt-metal does."""
        mm = mm or memory_map()
        local = mm.local_base
        out = []
        for seg in sorted(self.segments, key=lambda s: s.vaddr):
            if not seg.data:
                continue
            addr = seg.vaddr
            if addr & local == local:
                addr = (addr & ~local & 0xFFFFFFFF) + self.info.local_init
            out.append((addr, seg.data))
        return out


def _fail(path: str, message: str) -> BadFirmware:
    return BadFirmware(f"{path}: {message}")


def _arch(elf: ELFFile) -> str:
    """The ``Tag_RISCV_arch`` string of the ``.riscv.attributes`` section ('' if none)."""
    sec = elf.get_section_by_name(".riscv.attributes")
    if sec is None:
        return ""
    raw = sec.data()
    i = raw.find(b"rv32")
    if i < 0:
        return ""
    j = raw.find(b"\0", i)
    return raw[i:j if j >= 0 else len(raw)].decode("ascii", "replace")


def _check_chip(path: str, core: str, arch: str) -> None:
    if "xtttensixwh" in arch:
        raise _fail(path, f"Wormhole firmware (ISA {arch}); this tile is Blackhole")
    if arch and "xtttensix" not in arch and "_zba" not in arch:
        raise _fail(path, f"not Blackhole firmware (ISA {arch} lacks Zba/Zbb, as Wormhole "
                          f"builds do); this tile is Blackhole")
    if core.startswith("trisc") and arch and "xtttensixbh" not in arch:
        raise _fail(path, f"not Blackhole TRISC firmware (ISA {arch})")


def load_elf(path: str | Path, core: str, mm: MemoryMap | None = None) -> Firmware:
    """Read one firmware ELF for ``core`` (``brisc``, ``ncrisc``, ``trisc0``..``trisc2``).
    Raises :class:`BadFirmware` (one line naming the file) for anything tt-metal's host
    would refuse and for firmware not built for this tile."""
    mm = mm or memory_map()
    if core not in CORE_NAMES:
        raise BadFirmware(f"unknown core {core!r} (one of {', '.join(CORE_NAMES)})")
    info = mm.core(core)
    path = str(path)
    try:
        raw = Path(path).read_bytes()
    except OSError as e:
        raise _fail(path, f"cannot read: {e.strerror or e}") from None
    if raw[:4] != b"\x7fELF":
        raise _fail(path, "not an ELF file (no ELF magic)")
    try:
        elf = ELFFile(io.BytesIO(raw))
        hdr = elf.header
        if elf.elfclass != 32 or not elf.little_endian:
            raise _fail(path, "incompatible address size or endianness (need ELF32 "
                              "little-endian)")
        if hdr["e_type"] != "ET_EXEC":
            raise _fail(path, f"not an executable ({hdr['e_type']})")
        if hdr["e_machine"] != "EM_RISCV":
            raise _fail(path, f"not a RISC-V ELF (machine {hdr['e_machine']})")
        arch = _arch(elf)
        _check_chip(path, core, arch)
        segments = []
        for ph in elf.iter_segments():
            if ph["p_type"] != _PT_LOAD:
                continue
            if (ph["p_offset"] | ph["p_vaddr"] | ph["p_paddr"]) & (WORD - 1):
                raise _fail(path, f"loadable segment at {ph['p_vaddr']:#x} is misaligned")
            if not segments and hdr["e_entry"] != ph["p_vaddr"]:
                raise _fail(path, "first loadable segment is not text (the entry point "
                                  f"{hdr['e_entry']:#x} is not its start {ph['p_vaddr']:#x})")
            filesz = ph["p_filesz"]
            end = ph["p_offset"] + filesz
            if end > len(raw):
                raise _fail(path, f"truncated ELF: segment at {ph['p_vaddr']:#x} needs bytes "
                                  f"up to {end:#x}, the file has {len(raw):#x}")
            words = (filesz + WORD - 1) // WORD
            data = raw[ph["p_offset"]:ph["p_offset"] + words * WORD].ljust(words * WORD, b"\0")
            segments.append(Segment(ph["p_vaddr"], data, ph["p_memsz"]))
        if not segments:
            raise _fail(path, "no loadable segment")
        symbols = _symbols(elf)
    except BadFirmware:
        raise
    except (ELFError, ValueError, KeyError, IndexError, AttributeError, TypeError,
            UnicodeDecodeError, OverflowError, AssertionError) as e:
        raise _fail(path, f"truncated or damaged ELF ({type(e).__name__}: {e})") from None
    except Exception as e:  # construct's StreamError & co: pyelftools reading past the end
        raise _fail(path, f"truncated or damaged ELF ({type(e).__name__}: {e})") from None
    text = segments[0]
    if text.vaddr != info.fw_base:
        raise _fail(path, f"{core} firmware linked at {text.vaddr:#x}, but this Blackhole "
                          f"tile's {core} firmware base is {info.fw_base:#x} (a Wormhole "
                          f"build, or another tt-metal release)")
    if len(text.data) > info.fw_size and core != "brisc":
        raise _fail(path, f"{core} text ({len(text.data)} bytes) overflows its "
                          f"{info.fw_size}-byte firmware area")
    local = mm.local_base
    for seg in segments[1:]:
        if seg.vaddr & local == local and (seg.vaddr - local) + seg.memsz > info.local_size:
            raise _fail(path, f"local data [{seg.vaddr:#x}, +{seg.memsz:#x}) does not fit "
                              f"{core}'s {info.local_size}-byte local memory")
    return Firmware(core, path, hdr["e_entry"], segments, symbols, arch, info)


def _symbols(elf: ELFFile) -> Symbols:
    tab = elf.get_section_by_name(".symtab")
    entries: list[tuple[int, int, str]] = []
    names: dict[str, int] = {}
    if tab is None:
        return Symbols(entries)
    for sym in tab.iter_symbols():
        typ = sym["st_info"]["type"]
        if not sym.name or sym["st_shndx"] == "SHN_UNDEF" or sym.name.startswith("$"):
            continue
        if typ in ("STT_FUNC", "STT_OBJECT"):  # what addresses are named by in traces
            entries.append((sym["st_value"], sym["st_size"], sym.name))
        elif typ == "STT_NOTYPE" and sym["st_info"]["bind"] != "STB_LOCAL":
            names[sym.name] = sym["st_value"]  # linker symbols (__ldm_data_start, ...)
    return Symbols(entries, names)


def find_elf(directory: Path, core: str) -> Path:
    """``DIR/<core>.elf`` or, as tt-metal's pre-compiled tree has it, ``DIR/<core>/<core>.elf``."""
    for cand in (directory / f"{core}.elf", directory / core / f"{core}.elf"):
        if cand.is_file():
            return cand
    raise BadFirmware(f"{directory}: no {core}.elf (nor {core}/{core}.elf)")


def load_firmware_dir(directory: str | Path, mm: MemoryMap | None = None) -> dict[str, Firmware]:
    """The five firmware images of a tt-metal firmware build directory."""
    d = Path(directory)
    if not d.is_dir():
        raise BadFirmware(f"{d}: not a directory")
    return {core: load_elf(find_elf(d, core), core, mm) for core in CORE_NAMES}


def jal_to(target: int, at: int = 0) -> int:
    """The RISC-V word ``jal x0, target`` placed at address ``at`` (what the host writes at
    BRISC's reset address)."""
    off = target - at
    if not -(1 << 20) <= off < (1 << 20) or off & 1:
        raise BadFirmware(f"firmware base {target:#x} is out of reach of a jal at {at:#x}")
    off &= 0x1FFFFF
    return (((off >> 20) & 1) << 31 | ((off >> 1) & 0x3FF) << 21 | ((off >> 11) & 1) << 20
            | ((off >> 12) & 0xFF) << 12 | 0x6F)


__all__ = ["Firmware", "Segment", "Symbols", "find_elf", "jal_to", "load_elf",
           "load_firmware_dir"]
