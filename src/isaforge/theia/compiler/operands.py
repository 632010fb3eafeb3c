"""Semantic values of the VP parser: expression operands, assignment targets, destinations."""

from __future__ import annotations

from dataclasses import dataclass

from .lexer import Token
from .literals import c_atoi
from .vpinstr import WE_XYZ

XXX = ("X", "X", "X")
YYY = ("Y", "Y", "Y")
ZZZ = ("Z", "Z", "Z")




@dataclass(frozen=True)
class Val:
    """The value of an expression: a constant (hex text) or a register operand."""

    kind: str  # "const", "reg" or "in" (an in[...] read; reg/off name the address)
    text: str = ""  # constant: its hex digits as the compiler keeps them
    reg: int = 0
    off: bool = False  # frame-relative ("+ offset")
    swz: tuple[str, str, str] | None = None
    elem: int | None = None  # array element: register holding the index

    @property
    def is_reg(self) -> bool:
        return self.kind != "const"


R0_XXX = Val("reg", reg=0, swz=XXX)
R0_PLAIN = Val("reg", reg=0)
R0_OFFSET = Val("reg", reg=0, off=True)
NULL = Val("null")


@dataclass(frozen=True)
class Lhs:
    """An assignment target."""

    kind: str  # "reg", "out" (out[constant]) or "outidx" (out[variable])
    reg: int = 0
    off: bool = False
    we: int = WE_XYZ
    index: int | None = None  # array element: register holding the index
    text: str = ""  # out[constant]: the constant's hex digits
    addr: Val | None = None  # out[variable]: the address operand
    tok: Token | None = None


@dataclass(frozen=True)
class Dest:
    """A destination as PopulateInstruction sees it."""

    reg: int
    off: bool
    dot: bool  # the write mask is explicit
    we: int
    index: int | None = None


def dest_of_lhs(lhs: Lhs) -> Dest:
    return Dest(lhs.reg, lhs.off, True, lhs.we, lhs.index)


def dest_of_val(v: Val) -> Dest:
    if v.kind == "const":
        return Dest(c_atoi(v.text[1:]), False, False, 0)
    return Dest(v.reg, v.off, v.swz is not None, 0)


def src_reg(v: Val) -> int:
    return c_atoi(v.text[1:]) if v.kind == "const" else v.reg
