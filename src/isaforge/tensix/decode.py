"""The Tensix decoder: words in, :class:`~isaforge.core.insn.Instruction` records out.

Words are Tensix words (``opcode << 24 | params``), or, with ``rotated=True``, words as they
sit in a RISC-V instruction stream, where each is rotated left by 2 (``.ttinsn``).
:func:`disassemble` is a generator, like Capstone's ``cs.disasm``: each word is decoded once,
when it is reached. The text form is :func:`isaforge.tensix.listing.listing`.

The machine executes words through :func:`decode`, a cached, leaner record
(:class:`Decoded`: the name, the field values and the text).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from ..core.errors import DecodeError
from ..core.insn import Instruction
from .image import words_of
from .isa import ops, rotr2, tensix_isa


@dataclass(frozen=True, slots=True)
class Detail:
    """What a Tensix :class:`~isaforge.core.insn.Instruction` has beyond the shared record
    (its ``detail``).

    ``raw`` is the word as it was in the input: in a RISC-V stream (``rotated``) the Tensix
    word rotated left by 2, as ``.ttinsn`` emits it; otherwise ``word`` itself. The record's
    ``word`` and ``bytes`` are always the Tensix word's (opcode in bits 24..31)."""

    raw: int
    rotated: bool = False
    macro: bool = False  # printed as an LLK macro call (``TTI_MVMUL(0, 0, 1, 0)``)


def decode_word(word: int, syntax: str = "objdump", address: int = 0,
                raw: int | None = None, what: str = "input") -> Instruction:
    """Disassemble one Tensix word at byte ``address``; ``raw`` is the word as it sat in the
    input (given: it came from a RISC-V stream). A :class:`DecodeError` names ``what`` and the
    offset when ``word`` is not an instruction.

    ``mnemonic`` and ``op_str`` come from the formatter: objdump's form splits at its tab
    (``ttsetc16`` / ``5,4``); the macro form is ``TTI_NAME`` and the arguments between its
    parentheses (``TTI_MVMUL`` / ``0, 0, 1, 0``); a word with bits no operand covers is
    ``.ttinsn`` / ``0x...`` (its ``name`` is None: it cannot be written otherwise)."""
    isa = tensix_isa(syntax)
    ins = isa.match(word)
    if ins is None:
        where = f"{what}: offset {address:#x}: " if what else ""
        raise DecodeError(f"{where}{word:#010x} is not a Blackhole Tensix instruction "
                          f"(no instruction has opcode {word >> 24:#04x})")
    detail = Detail(word if raw is None else raw, raw is not None)
    op = ops()[ins.name]
    if word & op.reserved_mask:
        op_str = f"{word:#010x}"
        return Instruction(address, 4, word, ".ttinsn", op_str, f".ttinsn\t{op_str}",
                           detail=detail)
    vals = ins.field_values(word)
    template, _ = ins.template_for(vals)
    if template.startswith(op.macro):
        # the LLK macro form, TTI_NAME(a, b, ...): the template's literal head is the macro's
        # name and "(", its tail ")"; what lies between is the operand text the formatter made
        text = isa.format(ins, vals)
        mnemonic, op_str = op.macro, text[len(op.macro) + 1:-1] if text != op.macro else ""
        detail = Detail(detail.raw, detail.rotated, macro=True)
    else:
        mnemonic, op_str, text = isa.format_parts(ins, vals)
    flds = {f.name: vals[f.name] for f in op.fields}
    return Instruction(address, 4, word, mnemonic, op_str, text, ins.name, flds, detail)


def disassemble(data: bytes | bytearray | Iterable[int], rotated: bool = False,
                syntax: str = "objdump", address: int = 0,
                what: str = "input") -> Iterator[Instruction]:
    """Decode Tensix words (or little-endian bytes), one :class:`Instruction` at a time.

    ``rotated=True`` reads words in RISC-V stream order (each rotated left by 2).
    ``syntax`` is ``"objdump"`` (objdump's text where it is exact, else the LLK macro form)
    or ``"llk"`` (always the macro form). ``address`` is the byte address of the first word.
    An undecodable word raises :class:`DecodeError` when it is reached."""
    for i, w in enumerate(words_of(data, what)):
        if rotated:
            yield decode_word(rotr2(w), syntax, address + 4 * i, w, what)
        else:
            yield decode_word(w, syntax, address + 4 * i, None, what)


# --------------------------------------------------------------------------------------------
# The machine's view
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decoded:
    """An instruction word as the machine executes it."""

    word: int
    opcode: int
    name: str
    fields: Mapping[str, int]
    text: str


@lru_cache(maxsize=4096)
def decode(word: int) -> Decoded:
    """Decode one Tensix word for execution (cached); :class:`DecodeError` if it is not an
    instruction or uses bits no operand covers."""
    ins = decode_word(word, what="")
    if ins.name is None:
        raise DecodeError(f"{word:#010x} uses bits no {ins.mnemonic} operand covers")
    return Decoded(word, word >> 24, ins.name, dict(ins.fields), ins.text)


__all__ = ["Decoded", "Detail", "Instruction", "decode", "decode_word", "disassemble"]
