"""The THEIA decoder: words to :class:`isaforge.core.insn.Instruction` records.

Two texts, not to be mixed up:

* ``Instruction.text`` (and ``mnemonic`` / ``op_str``, its halves) is the READABLE form: the
  instruction exactly as the upstream compiler's ``code.list`` / ``cp_code.list`` prints it.
  It hides some bits (the EOF bit, reserved bits, an immediate's high bits...: see
  :mod:`isaforge.theia.isa`), so it may assemble to another word:
  0xe7f25671be02e3a9's text is ``DIV <BRANCH.7> (unscaled) @*R[156 + offset ].x_z ??????``.
  ``detail.hidden_fields`` names the fields (and values) it does not show (empty when the
  text is exact), ``detail.text_is_lossless`` says whether it reads back to the word.
* ``detail.lossless_asm`` is the ROUND-TRIP form: the same text plus ``{FIELD=value}``
  annotations for the hidden fields (``... ?????? {IMMV=0x1be02e3a9} {EOF=1} {RSV=6}``),
  which our assembler reads back to exactly the word. ``isaforge theia disasm --plain``
  prints it; the default listing layout round-trips through its hex column.

Addresses are byte addresses, as in Capstone: a VP word is 8 bytes (instruction ``i`` is at
``8 * i``), a CP word 4; ``bytes`` is the word big-endian, as the ``.mem`` files write it.
A VP branch target (``@36``) is an instruction index, as the hardware's DST field holds it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..core.errors import DecodeError, IsaforgeError
from ..core.insn import Instruction
from .asm import Assembler, FormatContext
from .isa import VIEW_FIELDS, isa_for

VP_SIZE = 8  # bytes per VP word
CP_SIZE = 4  # bytes per CP word
ENDIAN = "big"


def word_size(cp: bool = False) -> int:
    """Bytes per instruction word."""
    return CP_SIZE if cp else VP_SIZE


class TheiaDetail:
    """THEIA's extras of a decoded word (``Instruction.detail``).

    ``cp``: a control-processor word (else a VP word). ``lossless_asm``: assembly text that
    reads back to exactly this word (computed on first use: it assembles the listing text
    to find the bits it hides). ``hidden_fields``: the fields, with their values, that
    ``Instruction.text`` does not show (``{}`` when it reads back to the word);
    ``text_is_lossless``: whether it does. Never use ``Instruction.text`` for a round trip:
    it is the compiler's listing text, which can hide bits."""

    __slots__ = ("_ctx", "_hidden", "_lossless", "_text", "_vals", "_word", "cp")

    def __init__(self, cp: bool, word: int, text: str, vals: Mapping[str, int] | None,
                 ctx: FormatContext | None) -> None:
        self.cp = cp
        self._word = word
        self._text = text
        self._vals = vals
        self._ctx = ctx
        self._lossless: str | None = None if vals is not None else text
        self._hidden: dict[str, int] = {}

    @property
    def lossless_asm(self) -> str:
        """Assembly text that reads back to exactly this word (the round-trip form)."""
        if self._lossless is None:
            assert self._vals is not None
            self._lossless, self._hidden = _lossless(self._text, self._word, self._vals,
                                                     self._ctx, self.cp)
        return self._lossless

    @property
    def hidden_fields(self) -> dict[str, int]:
        """The fields ``Instruction.text`` does not show, by name, with their values."""
        self.lossless_asm  # noqa: B018 (computes them)
        return dict(self._hidden)

    @property
    def text_is_lossless(self) -> bool:
        """Whether ``Instruction.text`` alone assembles back to the word."""
        return self.lossless_asm == self._text

    def __repr__(self) -> str:
        return f"TheiaDetail(cp={self.cp}, lossless_asm={self.lossless_asm!r})"

    def __eq__(self, other: Any) -> bool:
        return (isinstance(other, TheiaDetail) and self.cp == other.cp
                and self.lossless_asm == other.lossless_asm)

    __hash__ = None  # type: ignore[assignment]


def _raw(word: int, cp: bool) -> str:
    return f".word 0x{word:08x}" if cp else f".word 0x{word:016x}"


def decode_one(word: int, address: int = 0, cp: bool = False,
               ctx: FormatContext | None = None) -> Instruction:
    """Decode and format one word at byte ``address`` (a ``.word`` record if it is not
    decodable)."""
    isa = isa_for(cp)
    bits = 32 if cp else 64
    if not 0 <= word < 1 << bits:
        raise DecodeError(f"{word:#x} is not a {bits}-bit word")
    size = CP_SIZE if cp else VP_SIZE
    ins = isa.match(word)
    if ins is None:
        text = _raw(word, cp)
        return Instruction(address, size, word, ".word", text.split(" ", 1)[1], text,
                           detail=TheiaDetail(cp, word, text, None, ctx), endian=ENDIAN)
    vals = ins.field_values(word)
    mnemonic, op_str, text = isa.format_parts(ins, vals, ctx)
    return Instruction(address, size, word, mnemonic, op_str, text, ins.name, vals,
                       TheiaDetail(cp, word, text, vals, ctx), ENDIAN)


def disassemble(words: Iterable[int], cp: bool = False,
                labels: Mapping[int, str] | None = None,
                address: int = 0) -> Iterator[Instruction]:
    """Decode a program, one record per word, lazily (like Capstone's ``disasm``).

    ``address`` is the byte address of the first word; ``labels`` names VP branch targets
    by byte address, as :attr:`Instruction.address` and the GPU's hooks number code
    (``{8 * N: "name"}`` prints ``@N`` as ``@name``). Until issue 16 the keys were
    instruction indexes: a key that is not a multiple of the word size is an error, so old
    index keys other than multiples of 8 are caught."""
    size = CP_SIZE if cp else VP_SIZE
    ctx = FormatContext(label_indexes(labels, size)) if labels else None
    for i, w in enumerate(words):
        yield decode_one(w, address + size * i, cp, ctx)


def label_indexes(labels: Mapping[int, str], size: int) -> dict[int, str]:
    """``labels`` (byte address -> name) keyed by instruction index, as branch fields hold
    targets."""
    out = {}
    for addr, name in labels.items():
        if addr % size:
            raise DecodeError(f"label '{name}' at byte address {addr}: labels are keyed by "
                              f"byte address, a multiple of {size} (instruction N is at "
                              f"{size} * N)")
        out[addr // size] = name
    return out


def _lossless(text: str, word: int, vals: Mapping[str, int], ctx: FormatContext | None,
              cp: bool) -> tuple[str, dict[str, int]]:
    """``text`` plus the annotations needed for it to assemble back to ``word``, and the
    fields those annotations set."""
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
        return text, {}
    hidden: dict[str, int] = {}
    if back is not None:
        ins = isa_for(cp).match(back)
        got = ins.field_values(back) if ins is not None else {}
        hidden = {name: v for name, v in vals.items()
                  if name not in VIEW_FIELDS and got.get(name) != v}
    notes = [f"{{{name}={v:#x}}}" if name == "IMMV" else f"{{{name}={v}}}"
             for name, v in hidden.items()]
    out = " ".join([text, *notes])
    if encode(out) != word:
        # only if the table cannot express it: never for a sound table
        return _raw(word, cp), {n: v for n, v in vals.items() if n not in VIEW_FIELDS}
    return out, hidden


__all__ = ["CP_SIZE", "VP_SIZE", "TheiaDetail", "decode_one", "disassemble", "word_size"]
