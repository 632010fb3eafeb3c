"""The afuc decoder: words in, :class:`~isaforge.core.insn.Instruction` records out.

:func:`disassemble` is the Capstone-style iterator: each word is matched and formatted once,
by :meth:`ISA.format_parts`, with Mesa's register comment in ``detail``. A
:class:`LabelContext` is what formatting consults: the pc (for relative branches), the size
of the image (targets inside it print as labels ``lN``/``fxnN``, as Mesa's listing names
them) and the register database (control and SQE register names); it records the targets it
named, which is how a listing learns where to put its labels without a second pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..core.errors import FirmwareError
from ..core.isa import Enum, Flag, Hex, Instr, Int, UInt, template_parts
from ..core.record import Frozen
from .color import color_name
from .image import generation, load_firmware, parse_gpu
from .image import variant as variant_of
from .isa import REG_ADDR, Reg, isa_for
from .regdb import RegDB

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ..core.insn import Instruction

LITERAL = "[literal]"  # the mnemonic of a word that is no instruction (printed [xxxxxxxx])

# operand kinds whose text depends on the value and width only (not on the context): a
# listing line prints a small field of these kinds from a table made once
_PURE_KINDS = (Reg, Flag, Enum, UInt, Hex, Int)
_TABLE_BITS = 6  # fields up to this wide are tabled
_NO_CANDIDATES: list = []  # (a decision tree's leaf: a list; its inner nodes are tuples)


class Detail(Frozen):
    """What an afuc :class:`Instruction` adds to the common record (its ``detail``):
    immutable, compared and hashed by its values."""

    __slots__ = ("comment", "target", "call")
    _FIELDS = __slots__
    comment: str  # Mesa's listing comment, with its leading tab ("\t; RB_RENDER_CNTL")
    target: int | None  # a branch or call operand's target, as a word index
    call: bool  # the target is called (call, bl): labelled fxnN rather than lN

    def __init__(self, comment: str = "", target: int | None = None, call: bool = False
                 ) -> None:
        _set(self, "comment", comment)
        _set(self, "target", target)
        _set(self, "call", call)

    def __reduce__(self) -> tuple[type[Detail], tuple[str, int | None, bool]]:
        return Detail, (self.comment, self.target, self.call)  # (slots: no state to set)


_set = object.__setattr__


_PLAIN = Detail()


class LabelContext:
    """Formatting context: the current pc, which targets print as labels, register names.

    Targets inside ``0 <= target < size`` print as ``l<target>`` (``fxn<target>`` for calls)
    and are collected in :attr:`branch_targets` / :attr:`call_targets`; with ``labels``
    false every target prints as its raw field value (Mesa's one-word disassembly).
    """

    def __init__(self, db: RegDB, size: int, labels: bool = True, color: bool = False
                 ) -> None:
        self.db = db
        self.color = color  # register names in Mesa's -c colours
        self.size = size if labels else 0
        self.pc = 0
        self.branch_targets: set[int] = set()
        self.call_targets: set[int] = set()
        self.target: tuple[int, bool] | None = None  # the last target formatted

    def branch_label(self, target: int, call: bool) -> str | None:
        self.target = (target, call)
        if not 0 <= target < self.size:
            return None
        if call:
            self.call_targets.add(target)
            return f"fxn{target}"
        self.branch_targets.add(target)
        return f"l{target}"

    def reg_name(self, space: str, value: int) -> str | None:
        if space == "control":
            name = self.db.control_reg_name(value)
        elif space == "sqe":
            name = self.db.sqe_reg_name(value)
        else:
            return None
        if name is not None and self.color:
            return color_name(name, self.db.is_hi_half(space, value))
        return name


class Decoder:
    """Decodes and formats the words of one generation, with Mesa's register comments."""

    def __init__(self, gen: int, db: RegDB, color: bool = False) -> None:
        self.gen = gen
        self.isa = isa_for(gen)
        self.db = db
        self.color = color  # register names (in text and comments) in Mesa's -c colours
        # word -> its decoding, for words whose text does not depend on the pc (no branch
        # target): firmware repeats many words, and each is matched and formatted once
        self._memo: dict[tuple[int, bool], tuple] = {}
        self._plans: dict[tuple[int, str], tuple[list, tuple[int, int] | None]] = {}
        self._shown: dict[str, frozenset[str]] = {}  # template -> the fields it prints
        self._known: dict[bool, dict[int, tuple]] = {}  # see instructions()
        self._lines: dict[bool, dict[int, str]] = {}  # see lines()
        self._line_plans: dict[int, Any] = {}  # id(Instr) -> _line_plan(), see _line()
        self._tables: dict[tuple[int, int, int], tuple[str, ...]] = {}  # see _line_plan()
        self._ctx: LabelContext | None = None  # the context _line() formats in
        self._tree = self.isa.decision_tree()  # see _line()

    def decode(self, word: int, ctx: LabelContext
               ) -> tuple[Instr | None, dict[str, int], str, str, str, str]:
        """(instruction or None, fields, mnemonic, op_str, text, comment) of the word at
        ``ctx.pc``; a word that is no instruction is ``[literal]`` ``[xxxxxxxx]``."""
        key = (word, ctx.color)
        got = self._memo.get(key)
        if got is not None:
            ins, vals, mnemonic, op_str, text, comment = got
            return ins, dict(vals), mnemonic, op_str, text, comment
        ctx.target = None
        got = self._decode(word, ctx)
        if ctx.target is None and len(self._memo) < 1 << 16:
            self._memo[key] = got
            return got[0], dict(got[1]), *got[2:]
        return got

    def _decode(self, word: int, ctx: LabelContext
                ) -> tuple[Instr | None, dict[str, int], str, str, str, str]:
        ins = self.isa.match(word)
        if ins is None:
            text = f"[{word:08x}]"
            return None, {}, LITERAL, text, text, self.gpu_comment(word)
        vals = ins.field_values(word)
        template, flds = ins.template_for(vals)
        mnemonic, op_str, text = self._format_parts(ins, vals, ctx, template, flds)
        return ins, vals, mnemonic, op_str, text, self._comment(vals, template)

    def _format_parts(self, ins: Instr, vals: dict[str, int], ctx: LabelContext,
                      template: str, flds: dict) -> tuple[str, str, str]:
        """What :meth:`ISA.format_parts` gives, from the template parsed once: (mnemonic,
        op_str, text), the text split at the template's first literal blank."""
        key = (id(ins), template)
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = self._plan(ins, template, flds)
        pieces, split = plan
        out = [p if f is None else f(vals[p], w, ctx) for p, f, w in pieces]
        text = "".join(out)
        if split is None:
            return text, "", text
        at, cut = split
        head = cut + sum(map(len, out[:at])) if at else cut
        return text[:head], text[head:].lstrip(), text

    @staticmethod
    def _plan(ins: Instr, template: str, flds: dict) -> tuple[list, tuple[int, int] | None]:
        """The template as pieces (literal text, or a field's name, formatter and width)
        and where its first literal blank is: (piece index, offset in it)."""
        pieces: list[tuple[str, Any, int]] = []
        split = None
        for kind, text in template_parts(template):
            if kind == "lit":
                cut = min([i for i in (text.find(" "), text.find("\t")) if i >= 0],
                          default=-1)
                if cut >= 0 and split is None:
                    split = (len(pieces), cut)
                pieces.append((text, None, 0))
            elif text == "NAME":
                pieces.append((ins.mnemonic, None, 0))
            else:
                f = flds[text]
                pieces.append((text, f.kind.format, f.width))
        return pieces, split

    def text(self, word: int, ctx: LabelContext) -> str:
        """The word as a listing line shows it: text and comment."""
        _, _, _, _, text, comment = self.decode(word, ctx)
        return text + comment

    def _comment(self, vals: dict[str, int], template: str) -> str:
        """Mesa's comment on an immediate: the GPU register it names, or (an immediate
        moved into $addr's high byte) the pipe register."""
        shown = self._shown.get(template)
        if shown is None:
            shown = self._shown[template] = frozenset(
                t for k, t in template_parts(template) if k == "field")
        if "RIMMED" not in shown:
            return ""
        return self._immed_comment(vals["RIMMED"],
                                   vals.get("SHIFT", 0) if "SHIFT" in shown else 0,
                                   vals["DST"] if "DST" in shown else None)

    def _immed_comment(self, rimmed: int, shift: int, dst: int | None) -> str:
        """:meth:`_comment` of an instruction that shows RIMMED (and SHIFT, DST if ``dst``
        is not None) with these values."""
        immed = (rimmed << shift) & 0xFFFFFFFF
        if dst == REG_ADDR and shift >= 16:
            immed &= ~0x40000  # bit 18 only disables auto-increment
            if immed & 0x00FFFFFF == 0:
                pipe = self.db.pipe_reg_name(immed >> 24)
                if pipe and self.color:
                    pipe = color_name(pipe, self.db.is_hi_half("pipe", immed >> 24))
                return f"\t; |{pipe}" if pipe else f"\t; 0x{immed >> 24:03x}"
            return ""
        return self.gpu_comment(immed)

    def gpu_comment(self, value: int) -> str:
        if value < 0x100:
            return ""
        name = self.db.gpu_reg_name(value)
        if name and self.color:
            name = color_name(name, self.db.is_hi_half("gpu", value))
        return f"\t; {name}" if name else ""

    def instructions(self, words: Sequence[int], ctx: LabelContext | None = None,
                     address: int = 0) -> Iterator[Instruction]:
        """Each of ``words`` decoded once, at byte address ``address + 4 * index``; labels
        name targets inside ``words`` (or as ``ctx`` says)."""
        from ..core.insn import Instruction  # (listings are made without the records)

        if ctx is None:
            ctx = LabelContext(self.db, len(words), color=self.color)
        # word -> (decoding, its Detail), for words whose text does not depend on the pc
        # (what decode() memoizes, without its per-call copying and keys)
        known = self._known.setdefault(ctx.color, {})
        decode = self._decode
        memo = self._memo
        color = ctx.color
        for n, word in enumerate(words):
            got = known.get(word)
            if got is None:
                ctx.pc = n
                ctx.target = None
                dec = memo.get((word, color))
                if dec is None:
                    dec = decode(word, ctx)
                target = ctx.target
                comment = dec[5]
                if target is None:
                    got = (dec, Detail(comment) if comment else _PLAIN,
                           None if dec[0] is None else dec[0].name)
                    if len(known) < 1 << 16:
                        known[word] = got
                        if len(memo) < 1 << 16:
                            memo[(word, color)] = dec
                else:
                    ins = dec[0]
                    yield Instruction(address + 4 * n, 4, word, dec[2], dec[3], dec[4],
                                      None if ins is None else ins.name, dict(dec[1]),
                                      Detail(comment, target[0], target[1]))
                    continue
            dec, detail, name = got
            yield Instruction(address + 4 * n, 4, word, dec[2], dec[3], dec[4], name,
                              dict(dec[1]), detail)


    def lines(self, words: Sequence[int], ctx: LabelContext) -> list[str]:
        """The listing line (text and comment) of each of ``words``, as :meth:`instructions`
        would make them, without the records: a word whose text does not depend on the pc
        is formatted once."""
        known = self._lines.setdefault(ctx.color, {})
        line_of = self._line
        out = []
        append = out.append
        for n, word in enumerate(words):
            line = known.get(word)
            if line is None:
                ctx.pc = n
                ctx.target = None
                line = line_of(word, ctx)
                if ctx.target is None and len(known) < 1 << 16:
                    known[word] = line
            append(line)
        return out

    def _line(self, word: int, ctx: LabelContext) -> str:
        """:meth:`text` of the word at ``ctx.pc``, made without the fields' dict: the
        instruction's forms as %-format strings whose operands are looked up in tables by
        the fields' values (see :meth:`_line_plan`); the general path where a form has
        something else."""
        node = self._tree  # (ISA.match without its cache: lines() keeps the lines)
        while node.__class__ is tuple:
            node = node[1].get(word & node[0], _NO_CANDIDATES)
        ins = None
        for fixed, value, candidate in node:
            if word & fixed == value:
                if ins is not None:
                    ins = None  # several: no instruction
                    break
                ins = candidate
        if ins is None:
            return f"[{word:08x}]" + self.gpu_comment(word)
        plan = self._line_plans.get(id(ins))
        if plan is None:
            plan = self._line_plans[id(ins)] = self._line_plan(ins) or ()
        if not plan:
            _, _, _, _, text, comment = self._decode(word, ctx)
            return text + comment
        form, overrides = plan  # the default form, and the others with their conditions
        for other in overrides:  # (the first whose conditions hold)
            for shift, mask, value in other[0]:
                if (word >> shift) & mask != value:
                    break
            else:
                form = other
                break
        _, fmt, operands, immed = form
        self._ctx = ctx  # (the operands that print through their kind's format)
        args = []  # (a plain loop: cheaper than map() chains or a list comprehension here)
        for shift, mask, table in operands:
            args.append(table[(word >> shift) & mask])
        text = fmt % tuple(args)
        if immed is None:
            return text
        (rs, rm), sh, dst = immed
        return text + self._immed_comment((word >> rs) & rm,
                                          0 if sh is None else (word >> sh[0]) & sh[1],
                                          None if dst is None else (word >> dst[0]) & dst[1])

    def _line_plan(self, ins: Instr) -> tuple[tuple, tuple[tuple, ...]] | None:
        """``ins``'s default form and its other forms (in the order
        :meth:`Instr.template_for` tries them), each as
        (conditions: (shift, mask, value) of the fields its choice tests; a %-format
        string of the template; its operands: the shift and mask of the field, and a table
        of its text by value (a ``range`` for a value the format prints itself: Hex, UInt;
        a :class:`_Formatted` where the kind's text depends on the context or the field is
        wide); the comment's (RIMMED, SHIFT, DST) fields as (shift, mask), the last
        two None when the form does not show them, or None for no comment); None where
        the general path must do it (a field in pieces or constant, a template naming a
        field it lacks)."""
        # the field each value comes from (as Instr.field_values extracts them)
        source: dict[str, Any] = {}
        for f in ins.fields.values():
            source.setdefault(f.name, f)
        for o in ins.overrides:
            for f in o.fields:
                source.setdefault(f.name, f)
        bits: dict[str, tuple[int, int]] = {}
        for name, f in source.items():
            if f.pieces or f.const is not None:
                return None
            bits[name] = (f.low, (1 << (f.high - f.low + 1)) - 1)
        plan = []
        for template, flds, when in ins.forms:
            if any(k not in bits for k in when):
                continue  # (vals.get(k) is None: never chosen)
            conds = tuple((*bits[k], v) for k, v in when.items())
            fmt: list[str] = []
            tables: list[Any] = []
            shifts: list[int] = []
            masks: list[int] = []
            shown = set()
            for kind, text in template_parts(template):
                if kind == "lit":
                    fmt.append(text.replace("%", "%%"))
                    continue
                if text == "NAME":
                    fmt.append(ins.mnemonic.replace("%", "%%"))
                    continue
                f = flds.get(text)
                if f is None or text not in bits:
                    return None
                shown.add(text)
                shift, mask = bits[text]
                shifts.append(shift)
                masks.append(mask)
                k = f.kind
                if type(k) is Hex:
                    digits = f"0{k.digits}" if k.digits else ""
                    fmt.append(f"{k.prefix.replace('%', '%%')}%{digits}x")
                    tables.append(range(mask + 1))
                elif type(k) is UInt:
                    fmt.append(f"{k.prefix.replace('%', '%%')}%d")
                    tables.append(range(mask + 1))
                elif type(k) in _PURE_KINDS and mask < 1 << _TABLE_BITS:
                    key = (id(k), f.width, mask)
                    table = self._tables.get(key)
                    if table is None:
                        table = self._tables[key] = tuple(
                            [k.format(v, f.width, None) for v in range(mask + 1)])
                    fmt.append("%s")
                    tables.append(table)
                else:
                    fmt.append("%s")
                    tables.append(_Formatted(self, k, f.width))
            immed = None
            if "RIMMED" in shown:
                immed = (bits["RIMMED"], bits["SHIFT"] if "SHIFT" in shown else None,
                         bits["DST"] if "DST" in shown else None)
            operands = tuple(zip(shifts, masks, tables, strict=True))
            plan.append((conds, "".join(fmt), operands, immed))
        return plan[-1], tuple(plan[:-1])


class _Formatted:
    """An operand's texts by value, as its kind formats them in the decoder's current
    context (:meth:`Decoder._line` looks operands up by value)."""

    __slots__ = ("dec", "format", "width")

    def __init__(self, dec: Decoder, kind: Any, width: int) -> None:
        self.dec = dec
        self.format = kind.format
        self.width = width

    def __getitem__(self, value: int) -> str:
        return self.format(value, self.width, self.dec._ctx)


def disassemble(data: bytes | Iterable[int], gpu: str | int | None = None,
                address: int = 0) -> Iterator[Instruction]:
    """Decode a firmware image (bytes) or a sequence of instruction words, one
    :class:`~isaforge.core.insn.Instruction` at a time.

    For bytes, the generation comes from the firmware id (or ``gpu``) and words are numbered
    from the version dword, as Mesa's listings number them; for words, ``gpu`` is required.
    ``address`` is the byte address of the first word (word ``n`` is at ``address + 4 * n``).
    Branch targets inside the words print as labels (``#l12``, ``#fxn40``), as in listings.
    ``detail`` is a :class:`Detail`. Bad input raises at the call, not at the first word.
    """
    if isinstance(data, (bytes, bytearray)):
        fw = load_firmware(bytes(data), gpu)
        words, gen, variant = fw.words[1:], fw.gen, fw.variant
    else:
        if gpu is None:
            raise FirmwareError("disassembling bare words needs gpu= (e.g. gpu='a630')")
        fwid = parse_gpu(gpu)
        words, gen, variant = list(data), generation(fwid), variant_of(fwid)
    return Decoder(gen, RegDB.for_variant(variant)).instructions(words, address=address)


__all__ = ["LITERAL", "Decoder", "Detail", "LabelContext", "disassemble"]
