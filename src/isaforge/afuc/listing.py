"""Mesa afuc-disasm compatible listings, built on the decoder's instruction records.

Listing layout (what Mesa prints, which our assembler reads back):

* header ``; aNxx microcode`` and ``; Version: xxxxxxxx``;
* a5xx: every word from the version on, packet handlers named from the jump table whose
  offset is in dword 2; ``-v`` appends the jump table;
* a6xx/a7xx: the boot code is executed (:mod:`isaforge.afuc.boot`) to learn the packet table
  it writes; the table's position in the image becomes ``[#jumptbl]`` / ``.jumptbl``; on a7xx
  the BV and LPAC images that follow are shown as ``.section BV`` / ``.section LPAC``;
* ``raw``: every dword of the file, no jump-table analysis.

:func:`sections` gives the same analysis as data (instructions and labels by word index),
for tools that show code with its labels (the debugger).
"""

from __future__ import annotations

from collections.abc import Iterable

from .decode import Decoder, LabelContext
from .image import Firmware, load_firmware
from .isa import nop_literal
from .regdb import RegDB

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..core.insn import Instruction

JUMPTABLE_SIZE = 0x80


class Section:
    """The listed part of one image: its words decoded, with the labels Mesa prints."""

    _FIELDS = ("name", "insns", "entries", "calls", "branches", "jumptbl", "table_offset",
               "rest")

    def __init__(self, name: str, insns: list[Instruction],
                 entries: dict[int, list[str]] | None = None, calls: set[int] | None = None,
                 branches: set[int] | None = None, jumptbl: int | None = None,
                 table_offset: int | None = None, rest: list[int] | None = None) -> None:
        self.name = name  # "main", "BV" or "LPAC"
        self.insns = insns  # the words before the packet table (all of them without one)
        self.entries = {} if entries is None else entries  # packet handlers by word
        self.calls = set() if calls is None else calls  # words labelled fxnN
        self.branches = set() if branches is None else branches  # words labelled lN
        self.jumptbl = jumptbl  # the NOP literal that holds the table offset ([#jumptbl])
        self.table_offset = table_offset  # where the packet table starts (words), if found
        self.rest = [] if rest is None else rest  # the words after the packet table

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Section:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._FIELDS)
        return f"Section({args})"

    def labels_at(self, n: int) -> list[str]:
        """The labels of word ``n``, in listing order."""
        out = list(self.entries.get(n, ()))
        if n in self.calls:
            out.append(f"fxn{n}")
        if n in self.branches:
            out.append(f"l{n}")
        return out

    def labels(self) -> dict[int, list[str]]:
        """The labels the listing prints, by word (packet handlers past the listed words,
        in the table area, are not printed)."""
        at = sorted(n for n in {*self.entries, *self.calls, *self.branches}
                    if n < len(self.insns))
        return {n: self.labels_at(n) for n in at}

    def line(self, ins: Instruction) -> str:
        """An instruction as the listing prints it (without the ``-v`` prefix)."""
        if ins.name is None and self.jumptbl is not None and ins.word == self.jumptbl:
            return "[#jumptbl]"
        return ins.text + ins.detail.comment


class _Part:
    """One image to list, before decoding: its words, how many are code (``num``, the
    words before its packet table), its packet handlers by word, and the table."""

    __slots__ = ("name", "words", "num", "entries", "jumptbl", "table_offset", "rest")

    def __init__(self, name: str, words: list[int], num: int,
                 entrypoints: Iterable[tuple[int, str]] = (), jumptbl: int | None = None,
                 table_offset: int | None = None, rest: list[int] | None = None) -> None:
        self.name = name
        self.words = words
        self.num = num
        self.entries: dict[int, list[str]] = {}
        for off, ep in sorted(entrypoints, key=lambda e: (e[0], e[1].encode())):
            self.entries.setdefault(off, []).append(ep)
        self.jumptbl = jumptbl  # the NOP literal that holds the table offset ([#jumptbl])
        self.table_offset = table_offset
        self.rest = rest or []


def _section(dec: Decoder, part: _Part) -> Section:
    """Decode ``part``'s code once, noting the branch and call targets as labels."""
    ctx = LabelContext(dec.db, part.num, color=dec.color)
    insns = list(dec.instructions(part.words[: part.num], ctx))
    return Section(part.name, insns, part.entries, ctx.call_targets, ctx.branch_targets,
                   part.jumptbl, part.table_offset, part.rest)


def _render(out: list[str], dec: Decoder, part: _Part, verbose: bool) -> None:
    """Append Mesa's lines of ``part`` (labels, entry points, comments) to ``out``: the
    text of :class:`Section` without its instruction records."""
    words = part.words[: part.num]
    ctx = LabelContext(dec.db, part.num, color=dec.color)
    lines = dec.lines(words, ctx)
    if part.jumptbl is not None and dec.isa.match(part.jumptbl) is None:
        lit = part.jumptbl
        lines = ["[#jumptbl]" if w == lit else t for w, t in zip(words, lines, strict=True)]
    if verbose:
        lines = [f"\t{n:04x}: {w:08x}  {t}"
                 for n, (w, t) in enumerate(zip(words, lines, strict=True))]
    entries, calls, branches = part.entries, ctx.call_targets, ctx.branch_targets
    marks = sorted(n for n in {*entries, *calls, *branches} if n < part.num)
    text: list[str] = []
    prev = 0
    for n in marks:  # the lines before word n, then its labels
        text.extend(lines[prev:n])
        prev = n
        prefix = f"\t{n:04x}: {words[n]:08x}  " if verbose else ""
        here = entries.get(n, ())
        is_call = n in calls
        if (is_call or here) and n != 0:
            text.append(prefix)
        text.extend(f"{prefix}{name}:" for name in here)
        if is_call:
            text.append(f"{prefix}fxn{n}:")
        if n in branches:
            text.append(f"{prefix}l{n}:")
    text.extend(lines[prev:])
    if text:
        out.append("\n".join(text) + "\n")


def _packet_names(db: RegDB, table: list[int]) -> list[tuple[int, str]]:
    return [(off, db.pm4_packet_name(i) or f"UNKN{i}") for i, off in enumerate(table)]


def _a5xx_table(image: list[int]) -> list[int]:
    start = image[1] & 0xFFFF
    table = image[start : start + JUMPTABLE_SIZE]
    return table + [0] * (JUMPTABLE_SIZE - len(table))


def _parts(fw: Firmware, dec: Decoder) -> list[_Part]:
    """The images of a (non-raw) listing, with their packet tables."""
    image = fw.words[1:]
    if fw.gen < 6:
        table = _a5xx_table(image)
        return [_Part("main", image, len(image), _packet_names(dec.db, table))]
    from .bootcache import boot_tables  # (the emulator: a6xx/a7xx only)

    out = []
    for name, start, size, table, offset in boot_tables(fw):
        words = image[start : start + size]
        num = size if offset is None else min(size, offset)
        literal = (nop_literal(offset, dec.gen) if offset is not None and offset < 1 << 24
                   else None)
        rest = words[offset + JUMPTABLE_SIZE : size] if offset is not None else []
        out.append(_Part("main" if name == "SQE" else name, words, num,
                         _packet_names(dec.db, table), literal, offset, rest))
    return out


def sections(data: bytes | Firmware, gpu: str | int | None = None) -> list[Section]:
    """What :func:`listing` shows, as data: the main image, then (a7xx) BV and LPAC."""
    fw = data if isinstance(data, Firmware) else load_firmware(data, gpu)
    dec = Decoder(fw.gen, RegDB.for_variant(fw.variant))
    return [_section(dec, part) for part in _parts(fw, dec)]


def listing(data: bytes, gpu: str | int | None = None, verbose: bool = False,
            raw: bool = False, color: bool = False) -> str:
    """The text Mesa's ``afuc-disasm -u [-v] [-r] [-c]`` prints for a firmware image
    (``color``: register names in Mesa's ANSI colours)."""
    fw = load_firmware(data, gpu)
    db = RegDB.for_variant(fw.variant)
    dec = Decoder(fw.gen, db, color)
    out = [f"; a{fw.gen}xx microcode\n", f"; Version: {fw.version:08x}\n\n"]
    if raw:
        _render(out, dec, _Part("raw", fw.words, len(fw.words)), verbose)
        return "".join(out)
    parts = _parts(fw, dec)
    if fw.gen < 6:
        _render(out, dec, parts[0], verbose)
        if verbose:
            table = _a5xx_table(fw.words[1:])
            out.append(";;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;;\n; JUMP TABLE\n")
            for i in range(0x7F):
                name = db.pm4_packet_name(i) or f"UNKN{i}"
                out.append(f"{i:3d} {i:02x}: {table[i]:04x}   ; {name}\n")
        return "".join(out)
    for part in parts:
        if part.name != "main":
            out.append(f"\n.section {part.name}\n;\n; {part.name} microcode:\n;\n")
        _render(out, dec, part, verbose)
        if part.table_offset is not None:
            # a7xx aligns the table of the main and BV images (LPAC's is last in the file)
            if fw.gen >= 7 and part.name != "LPAC":
                out.append(".align 32\n")
            out.append("jumptbl:\n.jumptbl\n")
            out.extend(f"[{w:08x}]\n" for w in part.rest)
    return "".join(out)


__all__ = ["Section", "listing", "sections"]
