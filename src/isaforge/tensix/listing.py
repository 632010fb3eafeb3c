"""Tensix code as text: the listing of decoded words, and objdump listings read back.

:func:`listing` is the text form of :func:`~isaforge.tensix.decode.disassemble`: one line
per word, objdump's text (or the LLK macro form), with the byte address and the raw word when
``verbose``. :func:`listing_lines` reads the Tensix lines of a ``riscv-tt-elf-objdump``
listing and :func:`relist` disassembles every word such a listing shows again, marking where
objdump printed something else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..core.insn import Instruction
from .decode import decode_word, disassemble
from .isa import rotr2


def listing(data: bytes | bytearray | Iterable[int] | Iterable[Instruction], *,
            rotated: bool = False, syntax: str = "objdump", verbose: bool = False,
            address: int = 0, what: str = "input") -> str:
    """The text of :func:`~isaforge.tensix.decode.disassemble` (same arguments), one line
    per word; ``verbose`` adds each word's byte address and its raw value (as it was in the
    input). ``data`` may also be instructions already decoded."""
    if isinstance(data, (bytes, bytearray)):
        instrs: Iterable[Instruction] = disassemble(data, rotated, syntax, address, what)
    else:
        items = list(data)
        if items and all(isinstance(i, Instruction) for i in items):
            instrs = items  # type: ignore[assignment]
        else:
            instrs = disassemble(items, rotated, syntax, address, what)  # type: ignore[arg-type]
    lines = []
    for ins in instrs:
        if verbose:
            raw = ins.detail.raw if ins.detail is not None else ins.word
            lines.append(f"{ins.address:8x}:\t{raw:08x}\t{ins.text}")
        else:
            lines.append(ins.text)
    return "\n".join(lines) + ("\n" if lines else "")


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
        ins = decode_word(rotr2(ln.raw), syntax, ln.address, ln.raw, f"{what}:{ln.lineno}")
        line = f"{ln.address:8x}:\t{ln.raw:08x}\t{ins.text}"
        if syntax == "objdump" and ins.text != ln.text:
            line += f"\t# objdump: {ln.text}"
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


__all__ = [
    "ListingLine",
    "is_tensix_mnemonic",
    "listing",
    "listing_lines",
    "looks_like_listing",
    "relist",
]
