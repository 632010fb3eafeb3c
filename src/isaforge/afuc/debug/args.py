"""Command arguments of the debugger: numbers, values, addresses, GPRs, and the error a bad
one gives."""

from __future__ import annotations

from ...core.errors import IsaforgeError
from ..isa import DST_NAMES, parse_reg_name
from ..machine.trace import SPECIAL_DST

M32 = 0xFFFFFFFF


class CommandError(IsaforgeError):
    """A command the debugger cannot carry out (bad syntax, unknown name)."""


def number(tok: str, what: str = "number") -> int:
    """An integer in any base Python reads (``0x1a4``, ``420``)."""
    try:
        return int(tok, 0)
    except ValueError:
        raise CommandError(f"expected a {what}, found {tok!r}") from None


def value(tok: str) -> int:
    """A 32-bit value (negative ones wrap)."""
    v = number(tok, "value")
    if not -0x80000000 <= v <= M32:
        raise CommandError(f"value {tok} does not fit in 32 bits")
    return v & M32


def address(tok: str) -> int:
    """A 4-byte aligned 64-bit memory address."""
    a = number(tok, "memory address")
    if a < 0 or a >= 1 << 64:
        raise CommandError(f"memory address {tok} is not a 64-bit address")
    if a % 4:
        raise CommandError(f"memory address {tok} is not 4-byte aligned")
    return a


def gpr(tok: str) -> int:
    """A GPR by name (``$02``, ``$rem``, ``rem``) or number."""
    n = parse_reg_name(tok if tok.startswith("$") else "$" + tok)
    if n is None:
        try:
            n = int(tok, 0)
        except ValueError:
            n = -1
    if not 0 <= n < 32:
        raise CommandError(f"unknown GPR {tok!r} (use $00..$1f, $rem, $addr, $usraddr, "
                           "$data, $sp, $lr)")
    return n


def gpr_name(n: int) -> str:
    """A GPR as Mesa's dumps name it ($rem, $addr, $usraddr, $data for 0x1c..0x1f)."""
    return SPECIAL_DST.get(n, f"${n:02x}")


def gpr_label(n: int) -> str:
    """A GPR as the debugger's own views name it: Mesa's dump names, and $sp/$lr for
    0x1a/0x1b (the names the assembler takes)."""
    return DST_NAMES.get(n, f"${n:02x}") if n in (0x1A, 0x1B) else gpr_name(n)
