"""Register names in colour, as Mesa's ``afuc-disasm -c`` prints them (its rnn decoder's
ANSI escapes): each name part green, an array index yellow, an offset past a register
bold red; brackets, dots, ``+`` and the ``_HI`` of a 64-bit register's high half stay plain.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GREEN, YELLOW, RED, RESET = "\x1b[0;32m", "\x1b[0;33m", "\x1b[0;1;31m", "\x1b[0m"

_PART = None  # the pattern of a name's parts, compiled at the first coloured name


def _part() -> Any:  # (re is imported for colour only: plain listings start without it)
    global _PART
    if _PART is None:
        import re

        _PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)|\[([^\]]*)\]|\+(.*)$|(.)")
    return _PART


def color_name(name: str, hi_half: bool = False) -> str:
    """``name`` (``CP_SCRATCH[0x6].REG``, ``MEM_READ_ADDR+0x1``) with Mesa's colours;
    ``hi_half``: it ends in the ``_HI`` of an address register's high half."""
    suffix = ""
    if hi_half and name.endswith("_HI"):
        name, suffix = name[:-3], "_HI"
    out = []
    for m in _part().finditer(name):
        ident, index, offset, other = m.groups()
        if ident is not None:
            out.append(f"{GREEN}{ident}{RESET}")
        elif index is not None:
            out.append(f"[{YELLOW}{index}{RESET}]")
        elif offset is not None:
            out.append(f"+{RED}{offset}{RESET}")
        else:
            out.append(other)
    return "".join(out) + suffix


__all__ = ["color_name"]
