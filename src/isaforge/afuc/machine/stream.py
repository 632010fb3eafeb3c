"""PM4 command streams: packet headers (with their parity bits) and stream files.

A type-4 header writes ``count`` consecutive registers from ``reg``; a type-7 header is an
opcode with ``count`` payload dwords. Each carries odd-parity bits over its fields, which the
hardware checks; :func:`parse_header` reports a header whose parity or type is wrong.

Stream files are either binary little-endian dwords, or text with one packet a line, as
Mesa's emulator prompt takes them: ``CP_MEM_WRITE 0x1000 0 0xdead`` (a type-7 packet by
name, or ``#n`` by opcode number) or ``RB_RENDER_CNTL 0x11 0x22`` (a type-4 write starting
at a register, by name or ``0x`` offset). ``;`` and ``#`` start comments; a line
``@0x10000: w0 w1 ...`` places dwords in GPU memory (for IBs) instead of the ring buffer, and
``raw w0 w1 ...`` appends dwords to the ring buffer as they are.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field

from ...core.errors import EmulationError, FirmwareError, SourceLoc
from ..regdb import RegDB

TYPE4, TYPE7 = 4, 7


class BadPacketError(EmulationError):
    """A packet header the hardware would reject (wrong type or parity)."""


class StreamFormatError(FirmwareError):
    """A stream file that cannot be read."""


def odd_parity_bit(val: int) -> int:
    """The bit that makes the number of set bits of ``val`` plus the bit odd."""
    return (bin(val).count("1") + 1) & 1


def pkt4_header(reg: int, count: int) -> int:
    return ((TYPE4 << 28) | count | (odd_parity_bit(count) << 7) | ((reg & 0x3FFFF) << 8)
            | (odd_parity_bit(reg) << 27))


def pkt7_header(opcode: int, count: int) -> int:
    return ((TYPE7 << 28) | count | (odd_parity_bit(count) << 15) | ((opcode & 0x7F) << 16)
            | (odd_parity_bit(opcode) << 23))


@dataclass(frozen=True)
class Header:
    """A parsed packet header: type 4 (``ident`` = register) or 7 (``ident`` = opcode)."""

    type: int
    ident: int
    count: int


def parse_header(hdr: int) -> Header:
    """The fields of a header; :class:`BadPacketError` when type or parity is wrong."""
    kind = hdr >> 28
    if kind == TYPE4:
        count, reg = hdr & 0x7F, (hdr >> 8) & 0x3FFFF
        if (hdr >> 7) & 1 != odd_parity_bit(count) or (hdr >> 27) & 1 != odd_parity_bit(reg):
            raise BadPacketError(f"bad type-4 packet header {hdr:08x}: parity check failed")
        return Header(TYPE4, reg, count)
    if kind == TYPE7:
        count, op = hdr & 0x3FFF, (hdr >> 16) & 0x7F
        if ((hdr >> 15) & 1 != odd_parity_bit(count) or (hdr >> 23) & 1 != odd_parity_bit(op)
                or (hdr >> 24) & 0xF):
            raise BadPacketError(f"bad type-7 packet header {hdr:08x}: parity check failed")
        return Header(TYPE7, op, count)
    raise BadPacketError(f"bad packet header {hdr:08x}: type {kind} is neither 4 nor 7")


# header -> (type 4?, ident, count) of the headers seen so far (valid ones only): the
# processors' dispatch and the compiled blocks look them up here before parsing
HEADERS: dict[int, tuple[bool, int, int]] = {}


@dataclass
class Stream:
    """What a stream file holds: ring-buffer dwords and memory placements."""

    rb: list[int] = field(default_factory=list)
    memory: dict[int, list[int]] = field(default_factory=dict)


def _num(tok: str, loc: SourceLoc) -> int:
    try:
        v = int(tok, 0)
    except ValueError:
        raise StreamFormatError(f"expected a number, found {tok!r}", loc) from None
    if not 0 <= v <= 0xFFFFFFFF and not -0x80000000 <= v < 0:
        raise StreamFormatError(f"{tok} does not fit in 32 bits", loc)
    return v & 0xFFFFFFFF


def _nums(toks: list[str], loc: SourceLoc) -> list[int]:
    """:func:`_num` of each token (one pass when they are all plain 32-bit numbers)."""
    try:
        vals = [int(t, 0) for t in toks]
    except ValueError:
        vals = []
    if vals and min(vals) >= 0 and max(vals) <= 0xFFFFFFFF:
        return vals
    return [_num(t, loc) for t in toks]


# any character but tab, newline, carriage return and printable ASCII: a binary stream
_NOT_TEXT = re.compile(r"[^\t\n\r\x20-\x7e]")


def packet_words(name: str, payload: list[int], db: RegDB,
                 loc: SourceLoc | None = None) -> list[int]:
    """Header + payload of one packet written as Mesa's prompt takes it."""
    loc = loc or SourceLoc("<packet>", 1, 1)
    if len(payload) > 0x3FFF:
        raise StreamFormatError(f"packet {name} has {len(payload)} payload dwords "
                                "(at most 16383)", loc)
    opcode = db.pm4_packet_id(name)
    if name.startswith("#"):
        opcode = _num(name[1:], loc)
        if opcode > 0x7F:
            raise StreamFormatError(f"opcode {name[1:]} is not 0..0x7f", loc)
    if opcode is not None:
        return [pkt7_header(opcode, len(payload)), *payload]
    reg = db.gpu_reg(name)
    if reg is None and name[:1].isdigit():
        reg = _num(name, loc)
    if reg is None:
        raise StreamFormatError(f"{name!r} is neither a PM4 packet nor a register name", loc)
    if len(payload) > 0x7F:
        raise StreamFormatError(f"type-4 write of {len(payload)} registers (at most 127)", loc)
    if reg > 0x3FFFF:
        raise StreamFormatError(f"register offset {name} does not fit a type-4 header "
                                "(at most 0x3ffff)", loc)
    return [pkt4_header(reg, len(payload)), *payload]


def _raw_words(text: str) -> list[int] | None:
    """The dwords of a text stream of only ``raw`` lines of plain 32-bit numbers (as
    benchmarks and dumps write them), read at once; None for anything else."""
    if any(c in text for c in ";#@/"):
        return None
    lines = [line for line in text.splitlines() if line and not line.isspace()]
    if not all(line.split(None, 1)[0] == "raw" for line in lines):
        return None
    try:
        words = [int(t, 0) for t in text.split() if t != "raw"]
    except ValueError:
        return None
    if words and not (min(words) >= 0 and max(words) <= 0xFFFFFFFF):
        return None
    return words


def parse_text(text: str, db: RegDB, filename: str = "<stream>") -> Stream:
    """A text stream: one packet a line (see the module docstring)."""
    raw = _raw_words(text)
    if raw is not None:
        return Stream(raw)
    out = Stream()
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split(";", 1)[0].split("//", 1)[0]
        if body.lstrip().startswith("#") and not body.lstrip()[1:2].isdigit():
            continue
        toks = body.split()
        if not toks:
            continue
        col = line.index(toks[0]) + 1
        loc = SourceLoc(filename, lineno, col)
        head = toks[0]
        if head.startswith("@"):
            addr_text = head[1:].rstrip(":")
            addr = _num(addr_text, loc)
            if addr % 4:
                raise StreamFormatError(f"memory address {addr_text} is not 4-byte aligned", loc)
            out.memory.setdefault(addr, []).extend(_nums(toks[1:], loc))
        elif head == "raw":
            out.rb.extend(_nums(toks[1:], loc))
        else:
            out.rb.extend(packet_words(head, _nums(toks[1:], loc), db, loc))
    return out


def parse_stream(data: bytes, db: RegDB, filename: str = "<stream>") -> Stream:
    """A stream file: text if it decodes as such, else binary little-endian dwords."""
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = None
    if text is not None and not _NOT_TEXT.search(text):
        return parse_text(text, db, filename)
    if len(data) % 4:
        raise StreamFormatError(f"{filename}: binary stream of {len(data)} bytes is not a "
                                "whole number of dwords")
    return Stream(list(struct.unpack(f"<{len(data) // 4}I", data)))
