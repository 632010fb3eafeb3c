"""The assembler's fast path: the text forms of each instruction turned, once per
generation, into flat step lists, and lines split into token texts by one regex.

The general path (:func:`isaforge.core.asm.read_instruction`) makes a token object with a
source location for every token and walks every candidate template through operand-kind
objects; that is what gives precise errors, and it reads operand expressions. Almost every
line of a real listing is simpler: a mnemonic, registers, plain numbers or sums of them,
register names, a label. :class:`FastLines` reads such a line by the same algorithm (the
same tokens, the same forms in the same order, each read left to right as
:func:`isaforge.core.asm.match_template` reads it) with cheaper parts, and encodes it from a
precomputed field plan. It is an optimisation only, with one rule: **for any line it either
gives exactly what the general path gives, or declines** (``None``), and the assembler then
takes the general path, which also reports every error. It declines:

* an operand expression other than a number or name or a sum of them (``@REG + 1`` is
  read; ``(1 << 4)``, ``-1``, ``1 + -1`` are not), a label reference where a number goes,
  an unknown ``@``/``%``/``|`` register name;
* a value that does not fit its field;
* directives but ``.jumptbl``, several statements on a line, a character the lexer rejects;
* a form with an operand kind whose reading it does not know.

Most lines of a listing differ from an earlier one only in their registers, numbers and
labels: :meth:`FastLines.learn` keeps, for such a *shape*, which form and field reads each
operand, and :meth:`FastLines.shaped` reads the next line of that shape without tokens.
"""

from __future__ import annotations

from ..core.isa import ISA, Branch, Enum, Flag, Instr, Int, Kind, UInt, template_parts
from .isa import REG_ALIASES, Reg, parse_reg_name
from .recache import compile as _compile
from .regdb import RegDB

TYPE_CHECKING = False
if TYPE_CHECKING:
    from re import Pattern
    from typing import Any

# steps of a form
_LIT, _REG, _FLAG, _ENUM, _NUM, _PREFIXED, _BRANCH = range(7)
NOT_A_NUMBER = object()  # the general path does not read this token as a number
DECLINE = object()  # leave the line to the general path
_BLANKS = " \t\r\f\v"  # what the lexer skips between tokens
_HEX_DIGITS = "0123456789abcdefABCDEF"

# A line's *shape*: re.split by this pattern gives [text, class, operand, text, class,
# operand, ..., text]; the shape is that list without the operands. The class says what
# the operand is: ``$`` a register's name or number, ``#`` a label, a blank or comma a
# decimal number, the same then ``0x`` a hex number, ``;`` a comment. Each operand (but
# the comment) is in one token whatever its text (the lexer reads these greedily too), so
# lines of one shape split into the same tokens but for these.
OPERANDS = (r"([$#; \t,](?:0[xX](?<=[ \t,]..))?)"  # (each branch starts with a character
            r"([0-9A-Za-z_](?<=\$.)[0-9A-Za-z_]*"  # set or a literal: quicker to fail)
            r"|[0-9a-fA-F](?<=[xX].)[0-9a-fA-F]*"
            r"|[0-9](?<=[ \t,].)[0-9]*"
            r"|[A-Za-z_](?<=#.)[0-9A-Za-z_]*"
            r"|(?<=;).*)")

# every text the general path reads as a register ($0a, $0A, $data ...)
REGS: dict[str, int] = {}
for _n in range(32):
    for _a in {f"{_n:02x}"[0], f"{_n:02X}"[0]}:
        for _b in {f"{_n:02x}"[1], f"{_n:02X}"[1]}:
            REGS["$" + _a + _b] = _n
REGS.update(("$" + _k, _v) for _k, _v in REG_ALIASES.items())
assert all(parse_reg_name(_k) == _v for _k, _v in REGS.items())
# a register operand of a shape (the text after its $) -> its number
_REG_NAMES = {_k[1:]: _v for _k, _v in REGS.items()}


def _hex(text: str) -> int:
    return int(text, 16)


class Form:
    """One text form of one instruction: the steps that read it and the plan that encodes
    it."""

    __slots__ = ("ins", "steps", "implied", "plan", "fast", "last_reg", "last_text")

    def __init__(self, ins: Instr, template: str, fields: dict, implied: dict[str, int],
                 lexer: Any) -> None:
        self.ins = ins
        self.implied = dict(implied)
        self.fast = True
        # (step, field name or "" (a constant field: read, not kept), data)
        self.steps: list[tuple[int, str, Any]] = []
        order = list(self.implied)
        for kind, text in template_parts(template):
            if kind == "lit":
                self.steps.extend((_LIT, "", t) for t in _literal_tokens(text, lexer))
            elif text == "NAME":
                self.steps.append((_LIT, "", ins.mnemonic))
            else:
                f = fields[text]
                step, data = self._operand(f.kind)
                if step is None:
                    self.fast = False
                name = text if f.const is None else ""
                self.steps.append((step, name, data))
                if name and name not in order:
                    order.append(name)
        # the last step reads a register: the line's last token must be one (it reads
        # exactly one token, and the general path reads the form to the end of the line)
        self.last_reg = bool(self.steps) and self.steps[-1][0] == _REG
        # the last token must be this text: a literal, or a flag the form implies set (the
        # flag absent reads 0, which the implied 1 rejects)
        self.last_text: str | None = None
        if self.steps:
            step, name, data = self.steps[-1]
            if step == _LIT or (step == _FLAG and name and self.implied.get(name) == 1):
                self.last_text = data
        # the general path encodes the values in this order: implied, then as read
        self.plan: list[tuple[str, int, int, int, bool]] = []
        for name in order:
            f = ins.all_fields.get(name)
            if f is None or f.const is not None:
                continue
            if f.pieces:
                self.fast = False
            self.plan.append((name, f.low, f.width, f.mask, isinstance(f.kind, (Branch, Int))))

    def shape_ok(self) -> bool:
        """Whether the form reads every line of a shape (see :meth:`FastLines.learn`)
        alike: the values of its operands never decide whether it reads a line (a field
        read twice, or read and implied, does; so does a literal, flag or prefix that an
        operand's token can be)."""
        read = [name for _, name, _ in self.steps if name]
        texts = [data for step, _, data in self.steps if step in (_LIT, _FLAG)]
        texts.extend(k for step, _, data in self.steps if step == _ENUM for k in data[0])
        texts.extend(data for step, _, data in self.steps if step == _PREFIXED)
        return (len(read) == len(set(read))
                and all(step in (_FLAG, _ENUM) for step, name, _ in self.steps
                        if name in self.implied)
                and all(data.prefix == "#" for step, _, data in self.steps if step == _BRANCH)
                and not any(t and (t[0] in "$#" or t[0].isdigit()) for t in texts))

    @staticmethod
    def _operand(kind: Kind) -> tuple[Any, Any]:
        """(step, data) for the operand kinds whose reading is known exactly (a subclass
        that reads otherwise is not)."""
        parse = type(kind).parse
        if parse is Reg.parse:
            return _REG, None
        if parse is Flag.parse:
            assert isinstance(kind, Flag)
            return _FLAG, kind.display
        if parse is Enum.parse:
            assert isinstance(kind, Enum)
            if not kind.optional:
                return None, None  # (none in afuc; the general path reads it)
            default = next(k for k, v in kind.values.items() if v == "")
            return _ENUM, (kind.by_name, default)
        if parse is Branch.parse:
            assert isinstance(kind, Branch)
            return _BRANCH, kind
        if parse is UInt.parse and getattr(kind, "prefix", ""):
            assert isinstance(kind, UInt)
            return _PREFIXED, kind.prefix
        if parse is Kind.parse or parse is UInt.parse:
            return _NUM, None
        return None, None


def _first_word(template: str, ins: Instr) -> str | None:
    """The word a template starts with after its optional modifiers (None: an operand)."""
    for kind, text in template_parts(template):
        if kind == "field":
            if text == "NAME":
                return ins.mnemonic
            f = ins.all_fields.get(text)
            if f is not None and f.kind.optional:
                continue
            return None
        words = text.split()
        if words:
            return words[0]
    return None


_compiled: dict[tuple[int, int], dict[str, list[Form]]] = {}


def forms_of(isa: ISA, lexer: Any, mnemonic: str) -> list[Form] | None:
    """The forms of ``mnemonic`` in the general path's order (made once per ISA, lexer and
    mnemonic, when first asked for: a firmware uses about half of them); None if it is
    no instruction's."""
    made = _compiled.setdefault((id(isa), id(lexer)), {})
    got = made.get(mnemonic)
    if got is None:
        candidates = isa.by_mnemonic.get(mnemonic)
        if candidates is None:
            return None
        # (a form that starts with another word does not read the line: the general path
        # fails it at that word)
        got = made[mnemonic] = [Form(ins, template, fields, dict(implied), lexer)
                                for ins in candidates
                                for template, fields, implied in ins.syntaxes()
                                if _first_word(template, ins) in (mnemonic, None)]
    return got


def compiled_forms(isa: ISA, lexer: Any) -> dict[str, list[Form]]:
    """mnemonic -> its forms in the general path's order, for every mnemonic."""
    return {m: forms_of(isa, lexer, m) or [] for m in isa.by_mnemonic}


def _literal_tokens(text: str, lexer: Any) -> list[str]:
    """The token texts of a template's literal text (as the lexer splits it)."""
    toks = _scanner(lexer).findall(text)
    if sum(map(len, toks)) != len(text) - sum(map(text.count, _BLANKS)):
        return [t.text for t in lexer.tokenize(text)]  # (it reports what it rejects)
    return toks


_scanners: dict[int, Pattern[str]] = {}


def _scanner(lexer: Any) -> Pattern[str]:
    """The lexer's rules as one pattern that finds each token's text after blanks."""
    got = _scanners.get(id(lexer))
    if got is None:
        rules = "|".join(f"(?:{r})" for _, r in lexer.rules)
        got = _scanners[id(lexer)] = _compile(f"[{_BLANKS}]*+({rules})")
        assert got.groups == 1, "lexer rules must not capture"
    return got


class FastLines:
    """The fast path of one assembly: the forms of one generation, the lexer's token
    rules, and the register database for names."""

    def __init__(self, isa: ISA, db: RegDB, lexer: Any, mods: frozenset[str]) -> None:
        self.isa = isa
        self.lexer = lexer
        self.forms = _compiled.setdefault((id(isa), id(lexer)), {})  # see forms_of
        self.scan = _scanner(lexer).findall
        self.comment = lexer.comment
        self.mods = mods  # the modifier tokens that may come before a mnemonic
        self.db = db
        self.nums: dict[str, Any] = {}  # token -> _number(token)
        self.scanner = _scanner(lexer)
        # a line's shape: re.split's even items are the shape, its odd items the operands
        self.split = _compile(OPERANDS).split
        # shape (a tuple) -> how to read every line of that shape (see learn)
        self.shapes: dict[tuple[str, ...], tuple[Any, ...]] = {}
        self.shape_ok: dict[str, bool] = {}  # mnemonic -> all its forms' Form.shape_ok

    def tokens(self, line: str) -> list[str] | None:
        """The token texts of ``line`` up to its comment, as the lexer splits it; None if
        the lexer would reject a character."""
        if self.comment:
            cut = line.find(self.comment)
            if cut >= 0:
                line = line[:cut]
        toks = self.scan(line)
        # every character not a space or tab is in a token: otherwise something no rule
        # matches (or a rarer blank, \r \f \v: declined too) and the general path reads it
        if sum(map(len, toks)) != len(line) - line.count(" ") - line.count("\t"):
            return None
        return toks

    def statement(self, toks: list[str]
                  ) -> tuple[Form, dict[str, Any], tuple[str, str, bool] | None] | None:
        """An instruction's tokens read as the general path would: (form, values in the
        general path's order, the label branched to or None: (field, label, relative));
        or None when it is left to the general path."""
        mods = self.mods
        for t in toks:
            if t not in mods:
                break
        else:
            return None
        forms = self.forms.get(t)
        if forms is None:
            forms = forms_of(self.isa, self.lexer, t)
            if forms is None:
                return None
        n = len(toks)
        toks.append(None)  # type: ignore[arg-type]  # (a sentinel: no step reads past it)
        last = toks[n - 1]
        for form in forms:
            if not form.fast:
                return None
            if form.last_reg and last not in REGS:
                continue  # the form does not read the line (nor does the general path)
            if form.last_text is not None and last != form.last_text:
                continue
            got = self._read(form, toks, n)
            if got is DECLINE:
                return None
            if got is not None:
                return got
        return None

    def learn(self, line: str, shape: list[str], operands: list[str], toks: list[str],
              got: tuple[Form, dict[str, Any], tuple[str, str, bool] | None]) -> None:
        """Remember how :meth:`statement` read ``line`` (``got``; ``toks`` its tokens;
        ``shape`` and ``operands`` its :attr:`split` without and with only the operands)
        for every line of its shape, when it reads them all alike: every operand is in one
        token that the same step of the same form reads, whatever its text, and no form of
        the mnemonic decides on an operand's value (:meth:`Form.shape_ok`). Then
        :meth:`shaped` reads them.

        Kept: ``(base word, ((operand index, convert, low, width) ...))`` for a line
        encoded at once (the operands' fields do not overlap the others'), or ``(None,
        ((index, convert, field) ...), form, values, target field, label's index,
        relative)`` for a line that branches to a label."""
        form, values, target = got
        mods = self.mods
        mnemonic = next(t for t in toks if t not in mods)
        ok = self.shape_ok.get(mnemonic)
        if ok is None:
            ok = self.shape_ok[mnemonic] = all(f.shape_ok() for f in self.forms[mnemonic])
        if not ok:
            return
        cut = line.find(self.comment) if self.comment else -1
        if cut < 0:
            cut = len(line)
        starts = {m.start(1): k for k, m in enumerate(self.scanner.finditer(line, 0, cut))}
        # token index -> (step, field) of the form's reading, replayed as _read walks
        # (a number followed by + or -: a sum, perhaps; not learnt)
        reads: dict[int, tuple[int, str]] = {}
        i = 0
        for step, name, data in form.steps:
            t = toks[i]
            if (step == _FLAG and t != data) or (step == _ENUM and t not in data[0]):
                continue
            if step == _NUM and toks[i + 1] in ("+", "-"):
                return
            reads[i] = (step, name)
            i += 1
        slots: list[tuple[int, Any, str]] = []
        label_at = -1
        pos = 0
        for j, op in enumerate(operands):
            cls = shape[2 * j + 1]
            pos += len(shape[2 * j]) + len(cls)
            start = pos
            pos += len(op)
            if cls == ";":
                continue  # the comment
            if cls == "$":
                want, convert, start = _REG, _REG_NAMES.get, start - 1
            elif cls == "#":
                want, convert, start = _BRANCH, None, start - 1
            elif len(cls) == 1:
                want, convert = _NUM, int
            else:
                want, convert, start = _NUM, _hex, start - 2
            k = starts.get(start)
            if k is None or toks[k] != line[start:pos]:
                return
            step, name = reads.get(k, (None, ""))
            if step != want:
                return
            if not name:
                continue  # a constant field: read, not kept
            if want == _BRANCH:
                if target is None or target[0] != name or label_at >= 0:
                    return
                label_at = j
            else:
                slots.append((j, convert, name))
        if (label_at >= 0) != (target is not None):
            return
        key = tuple(shape)
        if target is not None:
            self.shapes[key] = (None, tuple(slots), form, values, target[0], label_at,
                                target[2])
            return
        plan = {name: (low, width, mask) for name, low, width, mask, _ in form.plan}
        zeros = dict(values)
        others = 0
        for name, (_, _, mask) in plan.items():
            if all(name != s[2] for s in slots):
                others |= mask
        fields = []
        for j, convert, name in slots:
            if name not in plan:
                return
            low, width, mask = plan[name]
            if mask & others or mask != ((1 << width) - 1) << low:
                return
            others |= mask
            zeros[name] = 0
            fields.append((j, convert, low, width))
        base = encode(form, zeros)
        if base is not None:
            self.shapes[key] = (base, tuple(fields))

    @staticmethod
    def shaped(reader: tuple[Any, ...], operands: list[str]) -> Any:
        """A line of a learnt shape (``operands`` those of its :attr:`split`), read by
        ``reader`` (the shape's entry in :attr:`shapes`): its word, or (form, values,
        target) as :meth:`statement` gives it for a line that branches to a label; None if
        the general path should read it (a value does not fit its field, a register name
        is not one)."""
        word = reader[0]
        if word is not None:
            for j, convert, low, width in reader[1]:
                v = convert(operands[j])
                if v is None or v >> width:
                    return None
                word |= v << low
            return word
        values = dict(reader[3])
        for j, convert, name in reader[1]:
            v = values[name] = convert(operands[j])
            if v is None:
                return None
        return reader[2], values, (reader[4], operands[reader[5]], reader[6])

    def _read(self, form: Form, toks: list[Any], n: int) -> Any:
        """``match_template`` on token texts (``toks[n]`` is None): the form's reading,
        None if the form does not read the line, or DECLINE."""
        vals = dict(form.implied) if form.implied else {}
        label = None
        i = 0
        nums = self.nums
        for step, name, data in form.steps:
            t = toks[i]
            if step == _LIT:
                if t != data:
                    return None
                i += 1
                continue
            if step == _REG:
                v = REGS.get(t)
                if v is None:
                    return None
                i += 1
            elif step == _NUM:
                if t is None:
                    return None
                v = nums.get(t)
                if v is None:
                    v = nums[t] = self._number(t)
                if v.__class__ is not int:
                    return None if v is NOT_A_NUMBER else DECLINE
                i += 1
                while toks[i] in ("+", "-"):
                    # a sum, read as parse_number_expr reads it: a term that is not a
                    # number leaves the sign to the form; an expression is declined
                    u = toks[i + 1]
                    if u is None:
                        break
                    u = nums.get(u)
                    if u is None:
                        u = nums[toks[i + 1]] = self._number(toks[i + 1])
                    if u.__class__ is not int:
                        if u is NOT_A_NUMBER:
                            break
                        return DECLINE
                    v = v + u if toks[i] == "+" else v - u
                    i += 2
            elif step == _FLAG:
                if t == data:
                    v = 1
                    i += 1
                else:
                    v = 0
            elif step == _ENUM:
                if t in data[0]:
                    v = data[0][t]
                    i += 1
                else:
                    v = data[1]
            elif step == _PREFIXED:
                if t is None or not t.startswith(data) or not t[len(data):].isdigit():
                    return None
                v = int(t[len(data):], 10)
                i += 1
            else:  # _BRANCH
                if t is None or not t.startswith(data.prefix):
                    return None
                rest = t[len(data.prefix):]
                if (rest[1:] if rest[:1] == "-" else rest).isdecimal():
                    v = int(rest)
                else:
                    v = rest
                    if name:
                        if label is not None:
                            return DECLINE
                        label = (name, rest, data.relative)
                i += 1
            if name:
                if name in vals and v.__class__ is int and v != vals[name]:
                    return None  # the form implies another value than the one written
                vals[name] = v
        if i != n:
            return None
        return form, vals, label

    def _number(self, t: str) -> Any:
        """A token's value as a number; NOT_A_NUMBER if the general path does not read it
        as one; DECLINE where it might read more (or report an unknown name)."""
        if t[:2] in ("0x", "0X") and len(t) > 2 and not t[2:].strip(_HEX_DIGITS):
            return int(t, 16)
        if t.isdecimal():
            return int(t, 10)
        c = t[0]
        if c in "-~(#":
            return DECLINE  # an expression or a label: the general path reads it
        db = self.db
        if c == "@" and len(t) > 1:
            v = db.control_reg(t[1:])
        elif c == "%" and len(t) > 1:
            v = db.sqe_reg(t[1:])
        elif c == "|" and len(t) > 1:
            v = db.pipe_reg(t[1:])
        elif c.isalpha() or c == "_":
            v = db.gpu_reg(t)
            return NOT_A_NUMBER if v is None else v
        else:
            return NOT_A_NUMBER  # punctuation, a register, a literal word ...
        return DECLINE if v is None else v


def encode(form: Form, vals: dict[str, Any]) -> int | None:
    """The word, as :meth:`Instr.encode` makes it; None if a value does not fit (the
    general path then reports it)."""
    word = form.ins.match
    for name, low, width, mask, neg in form.plan:
        v = vals[name]
        if not 0 <= v < 1 << width:
            if neg and -(1 << (width - 1)) <= v < 0:
                v &= (1 << width) - 1
            else:
                return None
        word = (word & ~mask) | (v << low)
    return word


__all__ = ["FastLines", "Form", "compiled_forms", "encode"]
