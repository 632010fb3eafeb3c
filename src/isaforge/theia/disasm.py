"""The THEIA disassembler: the upstream compiler's listing text, and a Capstone-style API.

``Instruction.text`` is the instruction exactly as the compiler's ``code.list`` /
``cp_code.list`` prints it. ``Instruction.asm`` is what our assembler reads back to the same
word: the same text, plus ``{FIELD=value}`` annotations for the few bits the compiler's text
does not show (see :mod:`isaforge.theia.isa`). :func:`listing` writes whole listing lines in
the compiler's layout (address, raw sections, hex, text), which the assembler also reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..core.errors import AsmError, DecodeError, IsaforgeError
from .asm import Assembler, FormatContext
from .isa import VIEW_FIELDS, VP_OPCODES, isa_for


@dataclass
class Instruction:
    """One decoded word."""

    address: int  # index of the instruction in the program
    word: int
    mnemonic: str  # "ADD", "ASSIGN", ... or ".word" for an undecodable word
    op_str: str
    text: str  # as the compiler's listing prints it
    asm: str  # reads back to ``word`` with our assembler
    name: str | None = None  # the ISA form ("reg.011", "imm.br.4", "ASSIGN"); None for .word
    operands: dict[str, int] = field(default_factory=dict)  # field values by name
    cp: bool = False

    @property
    def bytes(self) -> bytes:
        return self.word.to_bytes(4 if self.cp else 8, "big")

    def __str__(self) -> str:
        return self.text


def _raw(word: int, cp: bool) -> str:
    return f".word 0x{word:08x}" if cp else f".word 0x{word:016x}"


def decode_one(word: int, address: int = 0, cp: bool = False,
               ctx: FormatContext | None = None) -> Instruction:
    """Decode and format one word (a ``.word`` instruction if it is not decodable)."""
    isa = isa_for(cp)
    size = 32 if cp else 64
    if not 0 <= word < 1 << size:
        raise DecodeError(f"{word:#x} is not a {size}-bit word")
    ins = isa.match(word)
    if ins is None:
        text = _raw(word, cp)
        return Instruction(address, word, ".word", text.split(" ", 1)[1], text, text, cp=cp)
    vals = ins.field_values(word)
    text = isa.format(ins, vals, ctx)
    mnemonic = ins.mnemonic if cp else VP_OPCODES[vals["OPCODE"]]
    asm = _readable(text, word, vals, ctx, cp)
    op_str = text[len(mnemonic):].strip()
    return Instruction(address, word, mnemonic, op_str, text, asm, ins.name, vals, cp)


def _readable(text: str, word: int, vals: Mapping[str, int], ctx: FormatContext | None,
              cp: bool) -> str:
    """``text`` plus the annotations needed for it to assemble back to ``word``."""
    asm = Assembler(cp)
    labels = {name: addr for addr, name in (ctx.labels.items() if ctx else ())}
    fctx = ctx or FormatContext()

    def encode(src: str) -> int | None:
        try:
            st = asm.parse_line(src, "<disasm>", 1, 0, dict(labels), {})
            return None if st is None else asm.encode(st, labels, {}, fctx)
        except IsaforgeError:
            return None

    back = encode(text)
    if back == word:
        return text
    notes = []
    if back is not None:
        ins = isa_for(cp).match(back)
        got = ins.field_values(back) if ins is not None else {}
        for name, v in vals.items():
            if name not in VIEW_FIELDS and got.get(name) != v:
                notes.append(f"{{{name}={v:#x}}}" if name == "IMMV" else f"{{{name}={v}}}")
    out = " ".join([text, *notes])
    if encode(out) != word:
        return _raw(word, cp)  # only if the table cannot express it: never for a sound table
    return out


def disassemble(words: Iterable[int], cp: bool = False,
                labels: Mapping[int, str] | None = None, address: int = 0) -> list[Instruction]:
    """Decode a program; ``labels`` names VP branch targets (address -> name)."""
    ctx = FormatContext(dict(labels)) if labels else None
    return [decode_one(w, address + i, cp, ctx) for i, w in enumerate(words)]


def vp_sections(word: int) -> str:
    """The compiler's raw-section column: operation, destination, source 1, source 0 in hex."""
    return (f"{word >> 48:x} {(word >> 34) & 0x3FFF:x} {(word >> 17) & 0x1FFFF:x} "
            f"{word & 0x1FFFF:x}")


def listing(words: Iterable[int], cp: bool = False,
            labels: Mapping[int, str] | None = None) -> str:
    """Listing lines in the compiler's ``code.list`` (or ``cp_code.list``) layout."""
    out = []
    for ins in disassemble(words, cp, labels):
        if ins.mnemonic == ".word":
            out.append(f"{ins.address}:\t{ins.text}")
        elif cp:
            out.append(f"{ins.address}:\t{ins.word:x}\t\t//{ins.text}")
        else:
            out.append(f"{ins.address}:\t{vp_sections(ins.word):<50}//\t{ins.word:016X}\t"
                       f"{ins.text}")
    return "".join(line + "\n" for line in out)


# --------------------------------------------------------------------------------------------
# .mem files
# --------------------------------------------------------------------------------------------

CP_MEM_HEADER = "//Code generated bt theia_compile"  # sic, as the compiler writes it


def read_mem(text: str, cp: bool = False, filename: str = "<input>") -> list[int]:
    """Words of a ``code.mem`` (two hex32 per VP instruction, high first) or
    ``control_code.mem`` (one hex word per line, then an optional ``//`` comment)."""
    from ..core.errors import SourceLoc

    words = []
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split("//", 1)[0].split()
        if not body:
            continue
        try:
            if cp:
                if len(body) != 1:
                    raise ValueError
                w = int(body[0], 16)
                if w >> 32:
                    raise ValueError
            elif len(body) == 2 and all(len(b) <= 8 for b in body):
                w = int(body[0], 16) << 32 | int(body[1], 16)
            elif len(body) == 1 and len(body[0]) <= 16:
                w = int(body[0], 16)
            else:
                raise ValueError
        except ValueError:
            what = "a hex32 word" if cp else "two hex32 words (high, low)"
            col = len(line) - len(line.lstrip()) + 1
            raise AsmError(f"expected {what}, found '{line.strip()}'",
                           SourceLoc(filename, lineno, col)) from None
        words.append(w)
    return words


def write_mem(words: Iterable[int], cp: bool = False) -> str:
    """The ``.mem`` text the upstream compiler writes for these words."""
    words = list(words)
    if not cp:
        return "".join(f"{w >> 32:08X} {w & 0xFFFFFFFF:08X}\n" for w in words)
    lines = [CP_MEM_HEADER]
    for ins in disassemble(words, cp=True):
        lines.append(f"{ins.word:x}\t\t//{ins.text}")
    return "".join(line + "\n" for line in lines)


__all__ = [
    "CP_MEM_HEADER",
    "Instruction",
    "decode_one",
    "disassemble",
    "listing",
    "read_mem",
    "vp_sections",
    "write_mem",
]
