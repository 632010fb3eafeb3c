"""Breakpoints of the debugger: before a pc of one processor, or on the dispatch of a packet,
and how the user names them (pc numbers, listing labels, packet and register names)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..regdb import RegDB
from .args import CommandError, number
from .view import Code


@dataclass
class Breakpoint:
    """A stop before ``pc`` on processor ``proc``, or on dispatch of a matching packet."""

    number: int
    kind: str  # "pc" or "packet"
    what: str  # as the user named it
    proc: str | None = None
    pc: int | None = None
    match: Callable[[int], bool] | None = None
    hits: int = 0

    def describe(self) -> str:
        if self.kind == "pc":
            return f"{self.number}: pc {self.pc:#06x} on {self.proc} ({self.what})"
        return f"{self.number}: packet {self.what}"


class Breakpoints:
    """The numbered breakpoints of a session."""

    def __init__(self) -> None:
        self.by_number: dict[int, Breakpoint] = {}
        self._next = 1

    def __bool__(self) -> bool:
        return bool(self.by_number)

    def __len__(self) -> int:
        return len(self.by_number)

    def __iter__(self) -> Iterator[Breakpoint]:
        return iter(self.by_number.values())

    def add_pc(self, proc: str, pc: int, what: str) -> Breakpoint:
        return self._add(Breakpoint(self._next, "pc", what, proc=proc, pc=pc))

    def add_packet(self, match: Callable[[int], bool], what: str) -> Breakpoint:
        return self._add(Breakpoint(self._next, "packet", what, match=match))

    def _add(self, bp: Breakpoint) -> Breakpoint:
        self.by_number[bp.number] = bp
        self._next += 1
        return bp

    def delete(self, n: int) -> bool:
        """Remove breakpoint ``n``; False if there is none."""
        return self.by_number.pop(n, None) is not None

    def clear(self) -> int:
        """Remove all; how many there were."""
        n = len(self.by_number)
        self.by_number.clear()
        return n

    def pcs(self, proc: str) -> set[int]:
        """The pcs with a breakpoint on ``proc``."""
        return {bp.pc for bp in self if bp.kind == "pc" and bp.proc == proc
                and bp.pc is not None}

    def at_pc(self, proc: str, pc: int) -> Breakpoint | None:
        for bp in self:
            if bp.kind == "pc" and bp.proc == proc and bp.pc == pc:
                return bp
        return None

    def on_packet(self, dispatched: Iterable[tuple[str, int]]
                  ) -> tuple[Breakpoint, str, int] | None:
        """The first (breakpoint, processor, header) among ``dispatched`` packets."""
        for proc, hdr in dispatched:
            for bp in self:
                if bp.kind == "packet" and bp.match is not None and bp.match(hdr):
                    return bp, proc, hdr
        return None


def location(code: Code, proc: Any, tok: str) -> tuple[int, str]:
    """A pc breakpoint location on processor ``proc``: a number or a label; (pc, name)."""
    try:
        pc = int(tok, 0)
    except ValueError:
        pc = None
    if pc is not None:
        if not 0 <= pc < len(proc.image):
            raise CommandError(f"pc {tok} is outside the {proc.name} image "
                               f"({len(proc.image)} instructions)")
        label = code.label_of(proc.name, pc)
        return pc, label or f"{pc:#06x}"
    labels = code.by_label(proc.name)
    if tok in labels:
        return labels[tok], tok
    packet = code.emu.db.pm4_packet_id(tok)
    if packet is not None and any(proc.jmptbl):
        return proc.jmptbl[packet], tok
    raise CommandError(f"no label {tok!r} in the {proc.name} firmware (give a pc number, a "
                       "packet handler such as CP_MEM_WRITE, or fxnN/lN)")


def packet_matcher(db: RegDB, tok: str) -> tuple[Callable[[int], bool], str]:
    """What a packet breakpoint on ``tok`` stops at: (header predicate, description)."""
    if tok.upper() in ("PKT4", "TYPE4"):
        return (lambda h: h >> 28 == 4), "PKT4 (any type-4 write)"
    op = db.pm4_packet_id(tok)
    if op is None and tok.startswith("#"):
        op = number(tok[1:], "opcode")
        if not 0 <= op <= 0x7F:
            raise CommandError(f"opcode {tok[1:]} is not 0..0x7f")
    if op is not None:
        name = db.pm4_packet_name(op) or f"#{op:#x}"
        return (lambda h: h >> 28 == 7 and (h >> 16) & 0x7F == op), name
    reg = db.gpu_reg(tok)
    if reg is not None:
        def covers(h: int) -> bool:
            if h >> 28 != 4:
                return False
            start, count = (h >> 8) & 0x3FFFF, h & 0x7F
            return start <= reg < start + count

        return covers, f"type-4 write of {tok}"
    raise CommandError(f"{tok!r} is neither a PM4 packet, #opcode, PKT4 nor a GPU register")
