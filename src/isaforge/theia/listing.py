"""The listing: decoded words as the upstream compiler's ``code.list`` / ``cp_code.list``
lines (instruction index, raw sections or hex word, text), which the assembler also reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def vp_sections(word: int) -> str:
    """The compiler's raw-section column: operation, destination, source 1, source 0 in hex."""
    return (f"{word >> 48:x} {(word >> 34) & 0x3FFF:x} {(word >> 17) & 0x1FFFF:x} "
            f"{word & 0x1FFFF:x}")


def listing(words: Iterable[int], cp: bool = False,
            labels: Mapping[int, str] | None = None) -> str:
    """Listing lines in the compiler's ``code.list`` (or ``cp_code.list``) layout; ``labels``
    names branch targets by byte address, as in :func:`.decode.disassemble`."""
    from .decode import disassemble, word_size  # (imported when used: see the package)

    size = word_size(cp)
    out = []
    for ins in disassemble(words, cp, labels):
        index = ins.address // size
        if ins.name is None:
            out.append(f"{index}:\t{ins.text}")
        elif cp:
            out.append(f"{index}:\t{ins.word:x}\t\t//{ins.text}")
        else:
            out.append(f"{index}:\t{vp_sections(ins.word):<50}//\t{ins.word:016X}\t"
                       f"{ins.text}")
    return "".join(line + "\n" for line in out)


__all__ = ["listing", "vp_sections"]
