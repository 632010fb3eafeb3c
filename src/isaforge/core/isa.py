"""Declarative instruction-word descriptions, and the decoder/encoder/formatter built from them.

The vocabulary follows Mesa's isaspec: an instruction set is a tree of *bitsets*. A bitset
has fixed bits (*patterns*), variable bits (*fields*, each of an operand *kind*), a *display
template* such as ``"{REP}{NAME} {DST}, {SRC1}, {IMMED}"``, a generation range, and
*overrides*: alternative templates chosen when some fields have given values (an ``or`` whose
first source is ``$00`` prints as ``mov``). Bitsets whose names start with ``#`` are abstract;
the others are the instructions. Encoder, decoder, formatter and assembler-operand parser all
come from the one description, so they cannot disagree.

Nothing here knows a processor: architectures supply the tables, and may define their own
operand kinds (subclasses of :class:`Kind`) for things such as register names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property, lru_cache

from .errors import DecodeError, EncodeError
from .record import Frozen as _Frozen
from .record import Record as _Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# --------------------------------------------------------------------------------------------
# Operand kinds: how a field's value prints and parses.
# --------------------------------------------------------------------------------------------


class Kind:
    """How a field value is shown in text and read back from assembly tokens.

    ``format`` turns a raw field value into text. ``parse`` (used by the assembler) consumes
    tokens from a :class:`isaforge.core.tokens.TokenStream` and returns an int or a deferred
    expression; it returns ``None`` (consuming nothing) when the tokens do not start an
    operand of this kind. ``optional`` kinds (modifier flags such as ``(rep)``) may be absent
    from the text, meaning value 0.
    """

    optional = False

    def format(self, value: int, width: int, ctx: Any) -> str:
        return str(value)

    def parse(self, ts: Any, ctx: Any) -> Any:
        from .tokens import parse_number_expr  # (assembly only: disassembly starts without)

        return parse_number_expr(ts, ctx)


class UInt(Kind):
    """Unsigned decimal, with an optional textual prefix (``b`` for bit numbers)."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def format(self, value: int, width: int, ctx: Any) -> str:
        return f"{self.prefix}{value}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        if self.prefix:
            tok = ts.peek()
            rest = tok.text[len(self.prefix) :] if tok is not None else ""
            if tok is None or not tok.text.startswith(self.prefix) or not rest.isdigit():
                ts.expected(f"'{self.prefix}N'")
                return None
            ts.next()
            return int(rest, 10)
        from .tokens import parse_number_expr  # (assembly only: disassembly starts without)

        return parse_number_expr(ts, ctx)


class Int(Kind):
    """Signed (two's complement) decimal."""

    def format(self, value: int, width: int, ctx: Any) -> str:
        return str(sign_extend(value, width))


class Hex(Kind):
    """Hexadecimal with a prefix, ``0x1f`` by default."""

    def __init__(self, prefix: str = "0x", digits: int = 0) -> None:
        self.prefix = prefix
        self.digits = digits

    def format(self, value: int, width: int, ctx: Any) -> str:
        return f"{self.prefix}{value:0{self.digits}x}"


class Flag(Kind):
    """A one-bit modifier shown as a fixed string when set, e.g. ``(rep)`` or ``!``."""

    optional = True

    def __init__(self, display: str) -> None:
        self.display = display

    def format(self, value: int, width: int, ctx: Any) -> str:
        return self.display if value else ""

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is not None and tok.text == self.display:
            ts.next()
            return 1
        return 0


class Enum(Kind):
    """Named values; a value named ``""`` is the default and may be omitted in assembly."""

    def __init__(self, values: Mapping[int, str]) -> None:
        self.values = dict(values)
        self.by_name = {v: k for k, v in self.values.items() if v}
        self.optional = any(v == "" for v in self.values.values())

    def format(self, value: int, width: int, ctx: Any) -> str:
        return self.values.get(value, str(value))

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is not None and tok.text in self.by_name:
            ts.next()
            return self.by_name[tok.text]
        if self.optional:
            return next(k for k, v in self.values.items() if v == "")
        ts.expected(" or ".join(f"'{n}'" for n in self.by_name))
        return None


class Branch(Kind):
    """A branch target: relative to the instruction (``relative=True``) or absolute.

    When formatting with a context that names targets (``ctx.branch_label(target, call)``
    returns a name or ``None``) the label is printed; otherwise the raw value.
    """

    def __init__(self, relative: bool = True, call: bool = False, prefix: str = "#") -> None:
        self.relative = relative
        self.call = call
        self.prefix = prefix

    def target(self, value: int, width: int, pc: int) -> int:
        return pc + sign_extend(value, width) if self.relative else value

    def format(self, value: int, width: int, ctx: Any) -> str:
        label = None
        if ctx is not None:
            label = ctx.branch_label(self.target(value, width, ctx.pc), self.call)
        if label is None:
            return f"{self.prefix}{sign_extend(value, width)}"
        return f"{self.prefix}{label}"

    def parse(self, ts: Any, ctx: Any) -> Any:
        tok = ts.peek()
        if tok is None or not tok.text.startswith(self.prefix):
            ts.expected(f"a label reference '{self.prefix}name'")
            return None
        ts.next()
        name = tok.text[len(self.prefix) :]
        if (name[1:] if name.startswith("-") else name).isdecimal():
            return int(name)  # a raw field value, as printed for out-of-range targets
        from .tokens import BranchRef

        return BranchRef(name, self.relative, tok.loc)


def sign_extend(value: int, width: int) -> int:
    sign = 1 << (width - 1)
    return (value & (sign - 1)) - (value & sign)


# --------------------------------------------------------------------------------------------
# Bitsets
# --------------------------------------------------------------------------------------------


_set = object.__setattr__


class Field(_Frozen):
    """Bits ``low..high`` (inclusive) of the word, of a given kind.

    ``const`` makes a *derived* field: it occupies no bits and always has that value.
    ``pieces`` makes a *split* field (a RISC-V branch offset): each ``(word_low, word_high,
    value_low)`` puts bits ``word_low..word_high`` of the word at bit ``value_low`` of the
    value; value bits no piece covers are zero. A split field's ``low..high`` is then
    ``0..width-1`` of the value (see :func:`Split`).
    """

    _FIELDS = ("name", "low", "high", "kind", "const", "pieces")
    name: str
    low: int
    high: int
    kind: Kind
    const: int | None
    pieces: tuple[tuple[int, int, int], ...]

    def __init__(self, name: str, low: int, high: int, kind: Kind, const: int | None = None,
                 pieces: tuple[tuple[int, int, int], ...] = ()) -> None:
        _set(self, "name", name)
        _set(self, "low", low)
        _set(self, "high", high)
        _set(self, "kind", kind)
        _set(self, "const", const)
        _set(self, "pieces", pieces)

    @property
    def width(self) -> int:
        return self.high - self.low + 1

    @property
    def mask(self) -> int:
        if self.const is not None:
            return 0
        if self.pieces:
            return sum(((1 << (hi - lo + 1)) - 1) << lo for lo, hi, _ in self.pieces)
        return ((1 << self.width) - 1) << self.low

    def extract(self, word: int) -> int:
        """The field's value in ``word``."""
        if self.pieces:
            v = 0
            for lo, hi, at in self.pieces:
                v |= ((word >> lo) & ((1 << (hi - lo + 1)) - 1)) << at
            return v
        return (word >> self.low) & ((1 << self.width) - 1)

    def insert(self, value: int) -> int:
        """The word bits that hold ``value`` (``0 <= value < 2**width``); a split field
        raises ``ValueError`` for a value with bits no piece holds."""
        if not self.pieces:
            return value << self.low
        word = covered = 0
        for lo, hi, at in self.pieces:
            m = (1 << (hi - lo + 1)) - 1
            word |= ((value >> at) & m) << lo
            covered |= m << at
        if value & ~covered:
            raise ValueError(f"value {value:#x} has bits the field {self.name} cannot hold")
        return word


def F(name: str, low: int, high: int | None = None, kind: Kind | None = None) -> Field:
    """Shorthand: ``F("DST", 16, 20, reg)``; a one-bit field may omit ``high``."""
    return Field(name, low, low if high is None else high, kind or UInt())


def Split(name: str, *pieces: tuple[int, int, int], kind: Kind | None = None) -> Field:
    """A field made of pieces of the word: ``Split("IMM", (25, 31, 5), (7, 11, 0))`` is
    bits 25..31 as value bits 5..11 and bits 7..11 as value bits 0..4 (see :class:`Field`)."""
    width = max(at + hi - lo + 1 for lo, hi, at in pieces)
    return Field(name, 0, width - 1, kind or UInt(), pieces=tuple(pieces))


class Pattern(_Frozen):
    """Fixed bits ``low..high``; ``bits`` is written MSB first, ``x`` marks don't-care."""

    _FIELDS = ("low", "high", "bits")
    low: int
    high: int
    bits: str

    def __init__(self, low: int, high: int, bits: str) -> None:
        _set(self, "low", low)
        _set(self, "high", high)
        _set(self, "bits", bits)
        if len(self.bits) != self.high - self.low + 1 or set(self.bits) - set("01x"):
            raise ValueError(f"pattern {self.bits!r} does not fit bits {self.low}..{self.high}")


def P(low: int, high: int | None = None, bits: str | int = "") -> Pattern:
    """Shorthand: ``P(27, 31, "10011")``, ``P(15, bits="1")`` or ``P(0, 4, 0b00001)``."""
    high = low if high is None else high
    if isinstance(bits, int):
        bits = format(bits, f"0{high - low + 1}b")
    return Pattern(low, high, bits)


class Override(_Frozen):
    """Display ``display`` instead, when every field in ``when`` has the given value.

    The assembler reads the same text back and sets those fields to those values.
    """

    _FIELDS = ("when", "display", "fields")
    when: Mapping[str, int]
    display: str
    fields: tuple[Field, ...]

    def __init__(self, when: Mapping[str, int], display: str,
                 fields: tuple[Field, ...] = ()) -> None:
        _set(self, "when", when)
        _set(self, "display", display)
        _set(self, "fields", fields)


class Bitset(_Record):
    _FIELDS = ("name", "extends", "fields", "patterns", "display", "overrides", "gen",
               "displayname", "doc")

    def __init__(self, name: str, extends: Bitset | None = None, fields: Sequence[Field] = (),
                 patterns: Sequence[Pattern] = (), display: str | None = None,
                 overrides: Sequence[Override] = (), gen: tuple[int, int] = (0, 1 << 30),
                 displayname: str | None = None, doc: str = "") -> None:
        self.name = name
        self.extends = extends
        self.fields = fields
        self.patterns = patterns
        self.display = display
        self.overrides = overrides
        self.gen = gen
        self.displayname = displayname
        self.doc = doc

    @property
    def abstract(self) -> bool:
        return self.name.startswith("#")

    @property
    def mnemonic(self) -> str:
        return self.displayname or self.name

    def chain(self) -> list[Bitset]:
        out: list[Bitset] = []
        b: Bitset | None = self
        while b is not None:
            out.append(b)
            b = b.extends
        return out


class Instr(_Record):
    """One leaf bitset flattened: masks for matching, all fields, templates in priority order."""

    _FIELDS = ("bitset", "size", "mask", "match", "dontcare", "fields", "overrides", "display",
               "gen")

    def __init__(self, bitset: Bitset, size: int, mask: int, match: int, dontcare: int,
                 fields: dict[str, Field], overrides: list[Override], display: str,
                 gen: tuple[int, int]) -> None:
        self.bitset = bitset
        self.size = size
        self.mask = mask  # bits fixed by patterns
        self.match = match  # their values
        self.dontcare = dontcare  # bits marked x
        self.fields = fields
        self.overrides = overrides  # all overrides, most specific first
        self.display = display  # the default template
        self.gen = gen

    @property
    def name(self) -> str:
        return self.bitset.name

    @property
    def mnemonic(self) -> str:
        return self.bitset.mnemonic

    def field_values(self, word: int) -> dict[str, int]:
        """Every field's value in ``word`` (the override forms' fields too)."""
        return self._extractor(word)

    def __getstate__(self) -> dict[str, Any]:
        # (pickling: the generated extractor is made again at its next use)
        state = dict(self.__dict__)
        state.pop("_extractor", None)
        return state

    @cached_property
    def _extractor(self) -> Any:
        """``field_values`` as one generated expression (made at its first use): the
        fields' shifts and masks written out, in the order the fields are listed, then
        the override forms' fields not listed before."""
        def expr(f: Field) -> str:
            if f.const is not None:
                return repr(f.const)
            if f.pieces:
                return " | ".join(f"((w >> {lo}) & {(1 << (hi - lo + 1)) - 1}) << {at}"
                                  for lo, hi, at in f.pieces) or "0"
            return f"(w >> {f.low}) & {(1 << f.width) - 1}"

        items = [f"{f.name!r}: {expr(f)}" for f in self.fields.values()]
        seen = {f.name for f in self.fields.values()}
        for o in self.overrides:
            for f in o.fields:
                if f.name not in seen:
                    seen.add(f.name)
                    items.append(f"{f.name!r}: {expr(f)}")
        return eval(f"lambda w: {{{', '.join(items)}}}")  # noqa: S307 - our own text

    @cached_property
    def forms(self) -> list[tuple[str, dict[str, Field], Mapping[str, int]]]:
        """Every text form, overrides first: (template, its fields, the values it implies)."""
        out: list[tuple[str, dict[str, Field], Mapping[str, int]]] = []
        for o in self.overrides:
            flds = dict(self.fields)
            flds.update({f.name: f for f in o.fields})
            out.append((o.display, flds, o.when))
        out.append((self.display, self.fields, {}))
        return out

    @cached_property
    def all_fields(self) -> dict[str, Field]:
        """The fields of every form (override fields alias bits of the main ones)."""
        merged: dict[str, Field] = {}
        for _, flds, _ in reversed(self.forms):
            merged.update(flds)
        return merged

    def template_for(self, vals: Mapping[str, int]) -> tuple[str, dict[str, Field]]:
        for when, template, flds in self._conditions:
            for k, v in when:
                if vals.get(k) != v:
                    break
            else:
                return template, flds
        raise AssertionError("the default form has no conditions")

    @cached_property
    def _conditions(self) -> list[tuple[tuple[tuple[str, int], ...], str, dict[str, Field]]]:
        return [(tuple(when.items()), template, flds) for template, flds, when in self.forms]

    def syntaxes(self) -> list[tuple[str, dict[str, Field], Mapping[str, int]]]:
        """Every accepted text form: (template, fields, values it implies)."""
        return self.forms

    def encode(self, vals: Mapping[str, int]) -> int:
        word = self.match
        for name, v in vals.items():
            f = self.all_fields.get(name)
            if f is None or f.const is not None:
                continue
            if not 0 <= v < (1 << f.width):
                lo = -(1 << (f.width - 1))
                if isinstance(f.kind, (Branch, Int)) and lo <= v < 0:
                    v &= (1 << f.width) - 1
                else:
                    raise EncodeError(
                        f"{self.mnemonic}: value {v:#x} does not fit the {f.width}-bit "
                        f"field {name}",
                        field=name,
                    )
            try:
                bits = f.insert(v)
            except ValueError as e:
                raise EncodeError(f"{self.mnemonic}: {e}", field=name) from None
            word = (word & ~f.mask) | bits
        return word


@lru_cache(maxsize=4096)
def template_parts(template: str) -> tuple[tuple[str, str], ...]:
    """Split a template into ("lit", text) and ("field", name) parts (parsed once per
    template: formatting and assembling ask for the same few templates all the time)."""
    parts: list[tuple[str, str]] = []
    pos = 0
    i = template.find("{")
    while i >= 0:  # "{NAME}", NAME of ASCII letters, digits and "_"
        j = template.find("}", i + 1)
        if j < 0:
            break
        name = template[i + 1 : j]
        if not (name.isascii() and name.replace("_", "a").isalnum()):
            i = template.find("{", i + 1)
            continue
        if i > pos:
            parts.append(("lit", template[pos:i]))
        parts.append(("field", name))
        pos = j + 1
        i = template.find("{", pos)
    if pos < len(template):
        parts.append(("lit", template[pos:]))
    return tuple(parts)


class ISA:
    """An instruction set for one generation: the leaf instructions and their codec."""

    def __init__(self, name: str, bitsets: Iterable[Bitset], gen: int, size: int = 32) -> None:
        self.name = name
        self.gen = gen
        self.size = size
        bitsets = list(bitsets)
        parents = {id(b.extends) for b in bitsets if b.extends is not None}
        self.instrs: list[Instr] = []
        for b in bitsets:
            if b.abstract or id(b) in parents:
                continue
            lo, hi = _gen_range(b)
            if lo <= gen <= hi:
                self.instrs.append(_flatten(b, size))
        self._cache: dict[int, Instr | None] = {}
        self._tree: Any = None  # built at the first match (see _decision_tree)

    @cached_property
    def by_mnemonic(self) -> dict[str, list[Instr]]:
        """The instructions each mnemonic may be (made at the first use: the assembler's)."""
        out: dict[str, list[Instr]] = {}
        for ins in self.instrs:
            for tmpl, _, _ in ins.syntaxes():
                lst = out.setdefault(_template_mnemonic(tmpl, ins), [])
                if ins not in lst:
                    lst.append(ins)
        return out

    def decision_tree(self) -> Any:
        """What :meth:`match` walks, for callers that keep their own cache of matches:
        ``(bits, {value of those bits: subtree})`` down to a list of (the bits an
        instruction fixes, their values, the instruction), where ``word`` matches the one
        instruction (none or several: no match) whose fixed bits have those values."""
        if self._tree is None:
            self._tree = _decision_tree(self.instrs, (1 << self.size) - 1)
        return self._tree

    def match(self, word: int) -> Instr | None:
        """The one instruction whose fixed bits match ``word``; ``None`` if none or several."""
        cached = self._cache.get(word, _UNSEEN)  # (not KeyError: raising costs a miss more
        if cached is not _UNSEEN:  # than the tree walk, and a listing misses on every word)
            return cached  # type: ignore[return-value]
        node = self._tree
        if node is None:
            node = self._tree = _decision_tree(self.instrs, (1 << self.size) - 1)
        while type(node) is tuple:  # (bits, {their value: subtree}) down to a list
            node = node[1].get(word & node[0], _NONE)
        found: Instr | None = None
        for fixed, value, ins in node:
            if word & fixed == value:
                if found is not None:
                    found = None  # ambiguous: treat as undecodable, as isaspec does
                    break
                found = ins
        if len(self._cache) < 1 << 16:
            self._cache[word] = found
        return found

    def decode(self, word: int) -> tuple[Instr, dict[str, int]]:
        ins = self.match(word)
        if ins is None:
            raise DecodeError(f"no {self.name} instruction matches {word:#010x}")
        return ins, ins.field_values(word)

    def format(self, ins: Instr, vals: Mapping[str, int], ctx: Any = None) -> str:
        """The instruction's text, as its display template renders it."""
        return "".join(piece for _, piece in self._render(ins, vals, ctx))

    def format_parts(self, ins: Instr, vals: Mapping[str, int],
                     ctx: Any = None) -> tuple[str, str, str]:
        """(mnemonic, op_str, text): the text split at the template's first literal blank;
        everything before it (prefixes such as ``(rep)`` included) is the mnemonic."""
        pieces = self._render(ins, vals, ctx)
        text = "".join(piece for _, piece in pieces)
        head = 0
        for is_lit, piece in pieces:
            cut = _first_blank(piece) if is_lit else -1
            if cut >= 0:
                head += cut
                return text[:head], text[head:].lstrip(), text
            head += len(piece)
        return text, "", text

    def _render(self, ins: Instr, vals: Mapping[str, int], ctx: Any) -> list[tuple[bool, str]]:
        """The template's pieces, rendered: (is a literal, text)."""
        template, flds = ins.template_for(vals)
        out = []
        for kind, text in template_parts(template):
            if kind == "lit":
                out.append((True, text))
            elif text == "NAME":
                out.append((False, ins.mnemonic))
            else:
                f = flds[text]
                out.append((False, f.kind.format(vals[text], f.width, ctx)))
        return out

    def find(self, name: str) -> Instr:
        for ins in self.instrs:
            if ins.name == name:
                return ins
        raise EncodeError(f"instruction {name!r} does not exist in {self.name}")


_NONE: list[tuple[int, int, Instr]] = []  # (no instruction has those bits)
_UNSEEN = object()  # (ISA.match: a word not in the cache)


def _decision_tree(instrs: list[Instr], free: int) -> Any:
    """The instructions split by the bits all of them fix (among ``free``), recursively:
    ``(bits, {value of those bits: subtree})``, or a list (in table order) where no bit is
    fixed by all or the list is short. An instruction can only match a word whose value on
    those bits is its own, so matching in the one list a word leads to finds what a scan of
    every instruction finds (including that several match). A list holds (the bits an
    instruction fixes, their values, the instruction)."""
    if len(instrs) <= 4:
        return _leaf(instrs)
    common = free
    for ins in instrs:
        common &= ins.mask & ~ins.dontcare
    if not common:
        return _leaf(instrs)
    groups: dict[int, list[Instr]] = {}
    for ins in instrs:
        groups.setdefault(ins.match & common, []).append(ins)
    return (common, {k: _decision_tree(v, free & ~common) for k, v in groups.items()})


def _leaf(instrs: list[Instr]) -> list[tuple[int, int, Instr]]:
    return [(ins.mask & ~ins.dontcare, ins.match, ins) for ins in instrs]


def _first_blank(text: str) -> int:
    cuts = [i for i in (text.find(" "), text.find("\t")) if i >= 0]
    return min(cuts) if cuts else -1


def _template_mnemonic(template: str, ins: Instr) -> str:
    for kind, text in template_parts(template):
        if kind == "field":
            if text == "NAME":
                return ins.mnemonic
            if ins.fields.get(text) is not None and ins.fields[text].kind.optional:
                continue
            return ""
        word = text.strip().split(" ")[0]
        if word:
            return word
    return ins.mnemonic


def _gen_range(b: Bitset) -> tuple[int, int]:
    """The generations a leaf bitset exists in (its own range within its parents')."""
    gen = b.gen
    for level in b.chain()[1:]:
        gen = (max(gen[0], level.gen[0]), min(gen[1], level.gen[1]))
    return gen


def _flatten(b: Bitset, size: int) -> Instr:
    mask = match = dontcare = 0
    fields: dict[str, Field] = {}
    overrides: list[Override] = []
    display: str | None = None
    gen = b.gen
    for level in b.chain():
        for p in level.patterns:
            bits = (1 << len(p.bits)) - 1 << p.low
            new = bits & ~mask  # (bits fixed by a more specific bitset are its)
            mask |= bits
            match |= int(p.bits.replace("x", "0"), 2) << p.low & new
            dontcare |= int(p.bits.replace("1", "0").replace("x", "1"), 2) << p.low & new
        for f in level.fields:
            fields.setdefault(f.name, f)
        overrides.extend(level.overrides)
        if display is None and level.display is not None:
            display = level.display
        if level is not b:
            gen = (max(gen[0], level.gen[0]), min(gen[1], level.gen[1]))
    if display is None:
        raise ValueError(f"bitset {b.name} has no display template")
    return Instr(b, size, mask, match & ~dontcare, dontcare, fields, overrides, display, gen)


def bits_unaccounted(ins: Instr) -> int:
    """Bits of the word neither fixed nor covered by a field (should be 0 for a sound table)."""
    used = ins.mask
    for f in ins.fields.values():
        used |= f.mask
    return ~used & ((1 << ins.size) - 1)


__all__ = [
    "ISA",
    "Bitset",
    "Branch",
    "Enum",
    "F",
    "Field",
    "Flag",
    "Hex",
    "Instr",
    "Int",
    "Kind",
    "Override",
    "P",
    "Pattern",
    "Split",
    "UInt",
    "bits_unaccounted",
    "sign_extend",
    "template_parts",
]
