"""Compiles straight-line runs of VP instructions into Python functions (the ISA-level
simulator's fast path).

A *block* starts at a PC and runs up to a branch (included), an EOF word (excluded) or
``max_len`` instructions. Each instruction becomes a few lines of Python specialised on its
fields: operand lanes with their sign and swizzle folded in, constant register indices,
offsets only where the addressing mode uses them. The function has the signature
``block(r, w, vp) -> next_pc`` where ``r`` is the register file as a flat list (row * 3 +
lane), ``w`` the written-lane bits per row (bytearray, x=4 y=2 z=1) and ``vp`` the
:class:`~isaforge.theia.machine.vp.VectorProcessor` (for OMEM/TMEM and counters).

The semantics are those of :mod:`isaforge.theia.machine.alu`;
:meth:`VectorProcessor.step_reference` executes the same instructions through ``alu`` one by
one, and the tests check that both agree on random instruction words.

``hooks`` (the hook kinds registered, see :mod:`.hooks`) compiles the same code with the
calls of those kinds in it: ``h.insn(pc, word)`` before each instruction, ``h.reg(row, we)``
after each register write, ``h.omwrite(...)`` in place of ``vp.omwrite(...)``, where ``h`` is
``vp.hook``. Without hooks nothing of it is compiled.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import alu

BlockFn = Callable[[list[int], bytearray, Any], int]

_NAMESPACE = {"mul32": alu.mul32, "div32": alu.div32, "sqrt32": alu.sqrt32, "sra": alu._sra}
_ORDER = ((0, 2, 1), (1, 2, 0), (2, 1, 0))  # lane picked by swizzle codes 0, 1, 2
M = "4294967295"


class _Operand:
    """Lanes of one source: constants, or register lanes with sign/scale/swizzle."""

    def __init__(self, const: alu.Lanes | None = None, base: str | None = None,
                 sign: int = 0, swizzle: int = 0, right_scale: bool = False) -> None:
        self.const = const
        self.base = base  # Python expression of row*3 ("51" or "b1")
        self.sign = sign
        self.swizzle = swizzle
        self.right_scale = right_scale

    def raw(self, lane: int) -> str:
        """The unmodified register lane (for branch targets and array indices)."""
        if self.const is not None:
            return str(self.const[lane])
        assert self.base is not None
        return f"r[{_add(self.base, lane)}]"

    def parts(self, lane: int) -> tuple[str, bool]:
        """The lane as (expression, negated): the value is ``-expression`` when negated."""
        if self.const is not None:
            return str(self.const[lane]), False
        code = self.swizzle >> (4 - 2 * lane) & 3
        if code == 3:
            return str(alu.SWIZZLE_CONSTANT), False
        j = _ORDER[lane][code]
        v = self.raw(j)
        neg = bool(self.sign >> (2 - j) & 1)
        if self.right_scale:
            return f"sra({f'(-{v} & {M})' if neg else v})", False
        return v, neg

    def lane(self, lane: int) -> str:
        v, neg = self.parts(lane)
        return f"(-{v} & {M})" if neg else v


def _add(base: str, k: int) -> str:
    if base.isdigit():
        return str(int(base) + k)
    return f"{base}+{k}" if k else base


def _imm_lanes(word: int) -> alu.Lanes:
    lanes = alu.immediate_lanes(word)
    return alu.modify(lanes, 0, 0, True) if alu.src1_right_scale(word) else lanes


def _operands(word: int, out: list[str], tag: str) -> tuple[_Operand, _Operand, str]:
    """SRC1, SRC0 and the destination base expression (row*3) of one instruction."""
    f = alu.fields(word)
    rs1 = alu.src1_right_scale(word)
    off = "o"
    idx = "ix"

    def dyn(name: str, expr: str) -> str:
        if name == "d":
            out.append(f"    e{tag} = ({expr}) & 255")
            out.append(f"    d{tag} = e{tag} * 3")
        else:
            out.append(f"    {name}{tag} = (({expr}) & 255) * 3")
        return f"{name}{tag}"

    if not f.imm:
        b1 = dyn("s", f"{f.addr1} + {off}") if f.mode & 2 else str(f.addr1 * 3)
        b0 = dyn("t", f"{f.addr0} + {off}") if f.mode & 1 else str(f.addr0 * 3)
        d = dyn("d", f"{f.dst} + {off}") if f.mode & 4 else str(f.dst * 3)
        return (_Operand(base=b1, sign=f.sign1, swizzle=f.swz1, right_scale=rs1),
                _Operand(base=b0, sign=f.sign0, swizzle=f.swz0), d)
    zero = _Operand(const=alu.ZERO)
    mode = f.mode
    if mode in (0, 1, 4, 5):
        src1 = _Operand(const=_imm_lanes(word))
        src0 = _Operand(base=str(f.dst * 3)) if mode in (0, 1) else zero
        d = dyn("d", f"{f.dst} + {off}") if mode in (1, 5) else str(f.dst * 3)
        return src1, src0, d
    if mode == 2:
        src0 = _Operand(base=dyn("t", f"{f.addr0} + {off} + {idx}"))
        return (_Operand(base=str(f.addr1 * 3), right_scale=rs1), src0,
                dyn("d", f"{f.dst} + {off}"))
    if mode == 3:
        src0 = _Operand(base=dyn("t", f"{f.addr0} + {off}"))
        d = dyn("d", f"{f.dst} + {off} + r[{f.addr1 * 3}]")
        return zero, src0, d
    src1 = _Operand(base=dyn("s", f"{f.addr1} + {off} + {idx}"), right_scale=rs1)
    if mode == 6:
        return src1, zero, str(f.dst * 3)
    return src1, _Operand(base=dyn("t", f"{f.addr0} + {off}")), dyn("d", f"{f.dst} + {off}")


def _add_expr(a: tuple[str, bool], b: tuple[str, bool]) -> str:
    """``a + b`` modulo 2**32, folding the sign modifiers into the addition."""
    (x, nx), (y, ny) = a, b
    if nx and ny:
        return f"(-{x} - {y}) & {M}"
    if nx:
        return f"({y} - {x}) & {M}"
    return f"({x} - {y}) & {M}" if ny else f"({x} + {y}) & {M}"


def _result(word: int, a: _Operand, b: _Operand, out: list[str], tag: str,
            hooks: frozenset[str]) -> list[str] | None:
    """Lines computing the result; returns the three lane expressions (None: no result)."""
    op = word >> 48 & 7
    if op == alu.OP_ADD:
        return [_add_expr(a.parts(i), b.parts(i)) for i in range(3)]
    if op == alu.OP_LOGIC:
        sel = word >> 59 & 3
        if sel == 0:
            return [f"{a.lane(i)} & {b.lane(i)}" for i in range(3)]
        if sel == 1:
            return [f"{a.lane(i)} | {b.lane(i)}" for i in range(3)]
        return ["0", "0", "0"]
    if op == alu.OP_MUL:
        scaled = bool(word >> 61 & 1)
        out.append("    vp.muls += 1")
        if scaled:
            return [f"mul32({a.lane(i)}, {b.lane(i)}, True)" for i in range(3)]
        # while 3|a| fits in 32 bits the radix-4 multiplier is exact: inline that case
        return [f"({a.lane(i)} * {b.lane(i)} & {M} if {a.lane(i)} <= 1431655765 or "
                f"{a.lane(i)} >= 2863311531 else mul32({a.lane(i)}, {b.lane(i)}, False))"
                for i in range(3)]
    if op == alu.OP_DIV:
        uns = word >> 61 & 1
        sdd = not uns and bool(word >> 60 & 1)
        sdv = not uns and bool(word >> 59 & 1)
        out.append("    vp.divs += 1")
        return [f"div32({a.lane(i)}, {b.lane(i)}, {sdd}, {sdv})" for i in range(3)]
    if op == alu.OP_SQRT:
        out.append(f"    q{tag} = sqrt32({a.lane(0)})")
        return [f"q{tag}"] * 3
    if op == alu.OP_IO:
        iop = word >> 59 & 7
        if iop == alu.IO_OMWRITE:
            args = ", ".join([a.lane(i) for i in range(3)] + [b.lane(i) for i in range(3)])
            unit = "h" if "mem_write" in hooks else "vp"
            out.append(f"    {unit}.omwrite({args})")
        elif iop == alu.IO_TMREAD:
            args = ", ".join(a.lane(i) for i in range(3))
            out.append(f"    q{tag} = vp.tmread({args})")
            return [f"q{tag}[{i}]" for i in range(3)]
        return None
    return None  # NOP, reserved opcode 7


def _known(word: int, a: _Operand, b: _Operand) -> str:
    """The expression of the result's defined lanes (alu.result_known of the operands'
    written lanes), "" when they are all defined whatever the registers hold."""
    parts = []
    for src, opnd in ((1, a), (0, b)):
        if opnd.const is not None or opnd.base is None:
            continue
        table = tuple(alu.result_known(word, alu.operand_known(word, 1, k) if src else 7,
                                       alu.operand_known(word, 0, k) if not src else 7)
                      for k in range(8))
        if table == (7,) * 8:
            continue
        row = str(int(opnd.base) // 3) if opnd.base.isdigit() else f"{opnd.base} // 3"
        parts.append(f"{table}[w[{row}]]")
    return " & ".join(parts)


def _emit(word: int, pc: int, out: list[str], tag: str, quirks: frozenset[str],
          hooks: frozenset[str] = frozenset()) -> bool:
    """Lines for one instruction; True if it ends the block with its own ``return``."""
    if "insn" in hooks:
        out.append(f"    h.insn({pc}, {word})")
    a, b, d = _operands(word, out, tag)
    res = _result(word, a, b, out, tag, hooks)
    branch = bool(word >> 57 & 1)
    we = word >> 42 & 7
    lanes = [i for i in range(3) if we >> (2 - i) & 1]
    if res is not None and (branch or lanes):
        if branch:
            out.append(f"    x{tag}, y{tag}, z{tag} = {res[0]}, {res[1]}, {res[2]}")
            res = [f"x{tag}", f"y{tag}", f"z{tag}"]
        if lanes:
            targets = ", ".join(f"r[{_add(d, i)}]" for i in lanes)
            vals = ", ".join(res[i] for i in lanes)
            out.append(f"    {targets} = {vals}")
            row = str(int(d) // 3) if d.isdigit() else f"e{tag}"
            known = _known(word, a, b)
            if known:  # a lane computed from an x lane is x (alu.result_known)
                out.append(f"    w[{row}] = w[{row}] & {7 & ~we} | {known} & {we}")
            else:
                out.append(f"    w[{row}] |= {we}")
            if "reg_write" in hooks:
                out.append(f"    h.reg({row}, {we})")
            if row == "3" or not row.isdigit():
                # the frame OFFSET (R3.x) and INDEX (R3.z) may have changed
                reload = "    o = r[9] & 255; ix = r[11] & 255"
                out.append(reload if row == "3" else f"    if e{tag} == 3:\n    {reload}")
    op = word >> 48 & 7
    if not branch:
        return False
    nxt = (pc + 1) & 0xFFFF
    target = f"{b.raw(0)} & 65535" if word >> 63 else str(word >> 34 & 0xFF)
    if res is None:
        # no commit: NOP / opcode 7 are decided on the idle commit bus (ZERO set, SIGN
        # clear); an IO operation is never taken (the RTL's IIU would wait for a commit)
        idle = op in (alu.OP_NOP, alu.OP_RSVD)
        taken = idle and alu.branch_taken(word >> 54 & 7, True, False)
        out.append(f"    return {target if taken else nxt}")
        return True
    zero = f"not (x{tag} | y{tag} | z{tag})"
    sign = f"(x{tag} & y{tag} & z{tag}) >> 31"
    cond = {0: None, 1: zero, 2: f"not ({zero})", 3: sign,
            4: f"not ({sign}) and not ({zero})", 5: f"({sign}) or ({zero})",
            6: f"not ({sign}) or ({zero})", 7: "False"}[word >> 54 & 7]
    if cond is None:
        out.append(f"    return {target}")
    else:
        out.append(f"    if {cond}:\n        return {target}\n    return {nxt}")
    return True


def compile_block(fetch: Callable[[int], int], pc: int, max_len: int,
                  quirks: frozenset[str] = frozenset(),
                  hooks: frozenset[str] = frozenset()) -> tuple[BlockFn, int, bool] | None:
    """The block starting at ``pc``: ``(function, instructions, ends_in_branch)``; None if
    ``pc`` holds an EOF word. ``hooks``: the hook kinds to call (see the module
    docstring). (The RTL's re-issues are the cycle model's: a timed run of the GPU.)"""
    out = ["def _block(r, w, vp):"]
    if hooks:
        out.append("    h = vp.hook")
    n = 0
    p = pc
    branch = False
    while True:
        word = fetch(p)
        if n >= max_len or word >> 58 & 1:  # an EOF word is not issued
            if n == 0:
                return None
            out.append(f"    return {p}")
            break
        n += 1
        branch = bool(word >> 57 & 1)
        if _emit(word, p, out, str(n), quirks, hooks):
            break
        p = (p + 1) & 0xFFFF
    if any(re.search(r"\b(o|ix)\b", line) for line in out[1:]):
        out.insert(1, "    o = r[9] & 255; ix = r[11] & 255")
    return _build(out), n, branch


def _build(lines: list[str]) -> BlockFn:
    ns = dict(_NAMESPACE)
    exec("\n".join(lines), ns)  # noqa: S102 - our own generated code
    return ns["_block"]  # type: ignore[no-any-return]


__all__ = ["BlockFn", "compile_block"]
