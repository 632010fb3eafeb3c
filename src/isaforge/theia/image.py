"""THEIA's file formats: the ``.mem`` program images, ``tmem.mem`` and the code block header.

* ``code.mem``: the VP program, two hex32 words per instruction (high first), one
  instruction per line;
* ``control_code.mem``: the CP program, a header comment, then one hex word per line
  followed by ``\\t\\t//`` and the instruction's listing text;
* ``tmem.mem``: TMEM words, hex, any number per line;
* ``code_block_header.thh``: ``#define NAME_SIZE (n<<20)`` and ``NAME_OFFSET`` for each VP
  program, which the CP program includes to copy the code into the VPs.

Readers raise :class:`~isaforge.core.errors.AsmError` with ``file:line:col``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ..core.errors import AsmError, SourceLoc

CP_MEM_HEADER = "//Code generated bt theia_compile"  # sic, as the compiler writes it
HEADER_FILE = "code_block_header.thh"


def read_mem(text: str, cp: bool = False, filename: str = "<input>") -> list[int]:
    """Words of a ``code.mem`` (two hex32 per VP instruction, high first) or
    ``control_code.mem`` (one hex word per line, then an optional ``//`` comment)."""
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
    if not cp:
        return "".join(f"{w >> 32:08X} {w & 0xFFFFFFFF:08X}\n" for w in words)
    from .decode import disassemble  # (reading images needs no decoder)

    lines = [CP_MEM_HEADER]
    for ins in disassemble(words, cp=True):
        lines.append(f"{ins.word:x}\t\t//{ins.text}")
    return "".join(line + "\n" for line in lines)


def read_tmem(text: str, filename: str = "<input>") -> list[int]:
    """The words of a ``tmem.mem``: hex, any number per line, ``//`` comments."""
    words = []
    for lineno, line in enumerate(text.splitlines(), 1):
        for col_word in line.split("//", 1)[0].split():
            loc = SourceLoc(filename, lineno, line.index(col_word) + 1)
            try:
                v = int(col_word, 16)
            except ValueError:
                raise AsmError(f"expected a hex word, found '{col_word}'", loc) from None
            if v >> 32:
                raise AsmError(f"'{col_word}' does not fit in 32 bits", loc)
            words.append(v)
    return words


def _upper(name: str) -> str:
    return "".join(chr(ord(c) - 32) if "a" <= c <= "z" else c for c in name)


def program_name(filename: str) -> str:
    """The driver's name for a program file: base name without extension, a-z upper-cased."""
    stem = Path(filename).name
    if "." in stem:
        stem = stem[:stem.rfind(".")]
    return _upper(stem)


def block_header(programs: Sequence[tuple[str, int]], offset: int = 0) -> str:
    """code_block_header.thh: ``NAME_SIZE (n<<20)`` and ``NAME_OFFSET`` for each program."""
    lines = [""]
    for name, size in programs:
        upper = _upper(name)
        lines.append(f"#define  {upper}_SIZE ({size}<<20)")
        lines.append(f"#define  {upper}_OFFSET {offset}")
        offset += size
    return "\n".join(lines) + "\n"


__all__ = ["CP_MEM_HEADER", "HEADER_FILE", "block_header", "program_name", "read_mem",
           "read_tmem", "write_mem"]
