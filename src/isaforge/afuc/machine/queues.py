"""The queues a processor reads ``$data`` from: the ring buffer (and a5xx MEQ), IB and SDS
regions of GPU memory, the a6xx SDS queue of draw-state groups, and the boot-run queue.

Each has ``peek()`` and ``pop()`` (None when empty) and ``len()``; the ROQ of a processor is
its ring buffer plus one queue per @IB_LEVEL (1, 2: IBs; 3: SDS).
"""

from __future__ import annotations

from array import array
from collections import deque
from typing import Any


class RegionQueue:
    """An IB/SDS queue of the ROQ: ``dwords`` words read from GPU memory at ``addr``."""

    __slots__ = ("mem", "addr", "left")

    def __init__(self, mem: dict[int, int], addr: int, dwords: int) -> None:
        self.mem, self.addr, self.left = mem, addr, dwords

    def __len__(self) -> int:
        return self.left

    def peek(self) -> int | None:
        return self.mem.get(self.addr, 0) if self.left else None

    def pop(self) -> int | None:
        if not self.left:
            return None
        v = self.mem.get(self.addr, 0)
        self.addr += 4
        self.left -= 1
        return v


class SdsQueue:
    """The SDS queue of the a6xx ROQ: the IBs of the draw-state groups the firmware kicked,
    in kick order, read through ``$data`` at @IB_LEVEL 3.

    Not in the spec; inferred from the a630 SQE firmware (CP_SET_DRAW_STATE and the draw
    packets' routine that walks @DRAW_STATE_ACTIVE_BITMASK, and the preemption save/restore
    of the same registers). After selecting a group with @DRAW_STATE_SEL the firmware writes
    the group number to control register 0x050 (SDS_KICK): the hardware then fetches
    ``@DRAW_STATE_HDR & 0xffff`` dwords from @DRAW_STATE_BASE. Control register 0x052
    (SDS_READY) is the mask of groups with dwords still queued; 0x051 (SDS_PENDING) the mask
    of kicked groups not fetched yet, always 0 here as fetches complete at once. The
    firmware runs the queued packets with @IB_LEVEL 3 and ``waitin`` until SDS_READY is 0;
    an empty queue ends with IN_IB_END, as an IB does."""

    __slots__ = ("control", "groups", "mem", "ready")

    def __init__(self, mem: dict[int, int], control: array, ready: int) -> None:
        self.mem, self.control, self.ready = mem, control, ready
        self.groups: deque[list[int]] = deque()  # [group, next address, dwords left]

    def kick(self, group: int, addr: int, dwords: int) -> None:
        if dwords:
            self.groups.append([group, addr, dwords])
            self.control[self.ready] = int(self.control[self.ready]) | 1 << group

    def __len__(self) -> int:
        return sum(g[2] for g in self.groups)

    def __iter__(self) -> Any:
        for _, addr, left in list(self.groups):
            for i in range(left):
                yield self.mem.get(addr + 4 * i, 0)

    def peek(self) -> int | None:
        return self.mem.get(self.groups[0][1], 0) if self.groups else None

    def pop(self) -> int | None:
        if not self.groups:
            return None
        g = self.groups[0]
        v = self.mem.get(g[1], 0)
        g[1] += 4
        g[2] -= 1
        if not g[2]:
            self.groups.popleft()
            mask = 0
            for other in self.groups:
                mask |= 1 << other[0]
            self.control[self.ready] = mask
        return v


class ListQueue(deque):
    """The ring buffer (fed packets) or the a5xx MEQ."""

    def peek(self) -> int | None:
        return self[0] if self else None

    def pop(self) -> int | None:  # type: ignore[override]
        return self.popleft() if self else None


class BootQueue:
    """The ROQ of a boot-code run (the disassembler finding the packet table, as Mesa's
    disassembler does): any ``$data`` read or peek gives 0 and marks the boot code finished."""

    __slots__ = ("finished",)

    def __init__(self) -> None:
        self.finished = False

    def __len__(self) -> int:
        return 0

    def peek(self) -> int:
        self.finished = True
        return 0

    pop = peek

