"""The mailboxes between RISC-V cores: ``TENSIX_MAILBOX0_BASE`` .. ``TENSIX_MAILBOX3_BASE``.

Sixteen FIFOs, one from each of BRISC, TRISC0..2 to each of them (NCRISC has none). Window *k*
names core *k* of (BRISC, TRISC0, TRISC1, TRISC2): a write there pushes onto the mailbox from
the writer to core *k*; a read pops the mailbox from core *k* to the reader (waiting while it is
empty), or, at an address with bit 2 set, returns whether it holds anything. Each mailbox holds
four words and the four a core writes to hold four in all; a write beyond that waits
(tt-isa-documentation, *Mailboxes*).
"""

from __future__ import annotations

from collections import deque

from .memmap import CoreInfo
from .mmio import Stall, Unmodelled, Window

ENDS = ("brisc", "trisc0", "trisc1", "trisc2")
DEPTH = 4


class Mailboxes:
    """``box[src][dst]``: the FIFO from core ``ENDS[src]`` to core ``ENDS[dst]``."""

    def __init__(self) -> None:
        self.box = [[deque() for _ in ENDS] for _ in ENDS]

    def held_from(self, src: int) -> int:
        return sum(len(b) for b in self.box[src])


class MailboxWindow(Window):
    def __init__(self, tile: object, base: int, size: int, index: int) -> None:
        super().__init__(tile, base, size)
        self.index = index
        self.name = f"mailbox {index} ({ENDS[index]})"

    def _me(self, core: CoreInfo) -> int:
        if core.name not in ENDS:
            raise Unmodelled(f"{self.name} is not mapped for {core.name}")
        return ENDS.index(core.name)

    def read(self, core: CoreInfo, addr: int, size: int) -> int:
        me = self._me(core)
        if size != 4 or addr & 3:
            raise Unmodelled(f"{self.name}: {size}-byte read (mailboxes are 32-bit)")
        box = self.tile.mailboxes.box[self.index][me]
        if addr & 4:
            return int(bool(box))
        if not box:
            raise Stall(f"reading {self.name}: empty, waiting for {ENDS[self.index]} to write",
                        lambda: bool(box))
        return box.popleft()

    def write(self, core: CoreInfo, addr: int, size: int, value: int) -> None:
        me = self._me(core)
        if size != 4 or addr & 3:
            raise Unmodelled(f"{self.name}: {size}-byte write (mailboxes are 32-bit)")
        mb = self.tile.mailboxes
        box = mb.box[me][self.index]

        def room() -> bool:
            return len(box) < DEPTH and mb.held_from(me) < DEPTH
        if not room():
            raise Stall(f"writing {self.name}: full, waiting for {ENDS[self.index]} to read",
                        room)
        box.append(value & 0xFFFFFFFF)


__all__ = ["DEPTH", "ENDS", "MailboxWindow", "Mailboxes"]
