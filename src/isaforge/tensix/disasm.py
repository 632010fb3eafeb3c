"""The Tensix disassembler: words in, :class:`Instruction` objects (objdump's text) out.

Words are Tensix words (``opcode << 24 | params``), or, with ``rotated=True``, words as they
sit in a RISC-V instruction stream, where each is rotated left by 2 (``.ttinsn``). An objdump
listing can be re-disassembled with :func:`relist`.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..core.errors import DecodeError
from .isa import ops, rotr2, tensix_isa


@dataclass
class Instruction:
    """One decoded Tensix word, in the shape Capstone users know."""

    address: int  # byte offset in the input
    word: int  # the Tensix word (opcode in bits 24..31)
    raw: int  # the word as it was in the input (rotated in a RISC-V stream)
    mnemonic: str  # "ttsetc16", "sfpmad", "TTI_SETC16" (macro form) or ".ttinsn"
    operands: list[str]
    text: str  # "ttsetc16\t5,4"
    name: str | None = None  # tt-llk name ("SETC16"); None for .ttinsn
    fields: dict[str, int] = field(default_factory=dict)

    @property
    def op_str(self) -> str:
        return ",".join(self.operands)


def words_of(data: bytes | bytearray | Iterable[int], what: str = "input") -> list[int]:
    """Little-endian 32-bit words of ``data`` (bytes), or the words themselves."""
    if isinstance(data, (bytes, bytearray)):
        if len(data) % 4:
            raise DecodeError(f"{what}: {len(data)} bytes is not a whole number of 32-bit words")
        return list(struct.unpack(f"<{len(data) // 4}I", bytes(data)))
    out = []
    for i, w in enumerate(data):
        if not 0 <= int(w) <= 0xFFFFFFFF:
            raise DecodeError(f"{what}: word {i} ({w:#x}) is not a 32-bit value")
        out.append(int(w))
    return out


def decode_word(word: int, syntax: str = "objdump", address: int = 0,
                raw: int | None = None, what: str = "input") -> Instruction:
    """Disassemble one Tensix word; a :class:`DecodeError` names the offset if it is not one."""
    isa = tensix_isa(syntax)
    ins = isa.match(word)
    if ins is None:
        where = f"{what}: offset {address:#x}: " if what else ""
        raise DecodeError(f"{where}{word:#010x} is not a Blackhole Tensix instruction "
                          f"(no instruction has opcode {word >> 24:#04x})")
    raw = word if raw is None else raw
    if word & ops()[ins.name].reserved_mask:
        text = f".ttinsn\t{word:#010x}"
        return Instruction(address, word, raw, ".ttinsn", [f"{word:#010x}"], text)
    vals = ins.field_values(word)
    text = isa.format(ins, vals)
    mnemonic, operands = split_text(text)
    flds = {f.name: vals[f.name] for f in ops()[ins.name].fields}
    return Instruction(address, word, raw, mnemonic, operands, text, ins.name, flds)


def split_text(text: str) -> tuple[str, list[str]]:
    """``"ttsetc16\\t5,4"`` -> ("ttsetc16", ["5", "4"]); macro calls likewise."""
    if "(" in text:
        mn, _, rest = text.partition("(")
        args = rest.rstrip(")")
        return mn, [a.strip() for a in args.split(",")] if args.strip() else []
    mn, _, rest = text.partition("\t")
    return mn, rest.split(",") if rest else []


def disassemble(data: bytes | bytearray | Iterable[int], rotated: bool = False,
                syntax: str = "objdump", address: int = 0,
                what: str = "input") -> list[Instruction]:
    """Decode Tensix words (or little-endian bytes).

    ``rotated=True`` reads words in RISC-V stream order (each rotated left by 2).
    ``syntax`` is ``"objdump"`` (objdump's text where it is exact, else the LLK macro form)
    or ``"llk"`` (always the macro form). An undecodable word raises :class:`DecodeError`.
    """
    out = []
    for i, w in enumerate(words_of(data, what)):
        word = rotr2(w) if rotated else w
        out.append(decode_word(word, syntax, address + 4 * i, w, what))
    return out


# --------------------------------------------------------------------------------------------
# objdump listings
# --------------------------------------------------------------------------------------------

_LISTING_RE = re.compile(
    r"^\s*(?P<addr>[0-9a-fA-F]+):\s+(?:(?P<hex>[0-9a-fA-F]{8})\s+)?(?P<mn>[a-z][\w.]*)"
    r"(?:[ \t]+(?P<ops>[^#<]*?))?\s*(?:[#<].*)?$"
)


@dataclass(frozen=True)
class ListingLine:
    """A Tensix instruction line of an objdump listing."""

    lineno: int
    address: int
    raw: int | None  # the stream word objdump shows (None in listings without hex)
    mnemonic: str
    operands: str  # as objdump printed them ("5,4")

    @property
    def text(self) -> str:
        return f"{self.mnemonic}\t{self.operands}" if self.operands else self.mnemonic


def is_tensix_mnemonic(mnemonic: str) -> bool:
    return mnemonic.startswith(("tt", "sfp"))


def listing_lines(text: str) -> Iterator[ListingLine]:
    """Every Tensix instruction line (``tt...``/``sfp...``) of an objdump listing."""
    for lineno, line in enumerate(text.splitlines(), 1):
        m = _LISTING_RE.match(line)
        if m is None or not is_tensix_mnemonic(m.group("mn")):
            continue
        hx = m.group("hex")
        yield ListingLine(lineno, int(m.group("addr"), 16), int(hx, 16) if hx else None,
                          m.group("mn"), (m.group("ops") or "").strip())


def looks_like_listing(data: bytes) -> bool:
    """Whether ``data`` is an objdump listing (text with ``addr: word mnemonic`` lines)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return any(True for _ in listing_lines(text)) or "file format" in text[:4096]


def relist(text: str, syntax: str = "objdump", what: str = "listing") -> str:
    """Re-disassemble every Tensix word of an objdump listing.

    One line per Tensix instruction with its hex word: ``addr:\\tword\\ttext``, followed by
    ``# objdump: ...`` when objdump printed something else. Lines without a hex word (listings
    made with ``--no-show-raw-insn``) cannot be re-disassembled and are skipped.
    """
    out = []
    for ln in listing_lines(text):
        if ln.raw is None:
            continue
        ins = decode_word(rotr2(ln.raw), syntax, ln.address, ln.raw,
                          f"{what}:{ln.lineno}")
        line = f"{ln.address:8x}:\t{ln.raw:08x}\t{ins.text}"
        if syntax == "objdump" and ins.text != ln.text:
            line += f"\t# objdump: {ln.text}"
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def listing(instrs: Iterable[Instruction], verbose: bool = False) -> str:
    """Text of decoded instructions, one per line (with offset and raw word if verbose)."""
    lines = []
    for ins in instrs:
        lines.append(f"{ins.address:8x}:\t{ins.raw:08x}\t{ins.text}" if verbose else ins.text)
    return "\n".join(lines) + ("\n" if lines else "")


__all__ = [
    "Instruction",
    "ListingLine",
    "decode_word",
    "disassemble",
    "is_tensix_mnemonic",
    "listing",
    "listing_lines",
    "looks_like_listing",
    "relist",
    "split_text",
    "words_of",
]
