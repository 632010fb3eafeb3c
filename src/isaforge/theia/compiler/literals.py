"""Numbers as the upstream compilers read them (C++ stream and ``atoi`` semantics)."""

from __future__ import annotations


def hex_value(text: str) -> int:
    """A hex string as ``istream >> std::hex`` reads it: optional 0x, longest hex prefix."""
    t = text.strip()
    if t[:2].lower() == "0x":
        t = t[2:]
    n = 0
    while n < len(t) and t[n] in "0123456789abcdefABCDEF":
        n += 1
    if n == 0:
        return 0
    v = int(t[:n], 16)
    return v if v <= 0xFFFFFFFF else 0xFFFFFFFF


def dec_value(text: str) -> int:
    """A string as ``istream >> unsigned`` reads it: longest decimal prefix, 0 if none."""
    t = text.strip()
    n = 0
    while n < len(t) and t[n].isdigit():
        n += 1
    if n == 0:
        return 0
    v = int(t[:n])
    return v if v <= 0xFFFFFFFF else 0xFFFFFFFF


def c_atoi(text: str) -> int:
    """``atoi``: optional blanks and sign, then decimal digits."""
    t = text.lstrip(" \t\n")
    sign = 1
    if t[:1] in "+-" and t:
        sign = -1 if t[0] == "-" else 1
        t = t[1:]
    n = 0
    while n < len(t) and t[n].isdigit():
        n += 1
    return sign * int(t[:n]) if n else 0
