"""The replay expander of one thread: REPLAY load, execute, and execute-while-loading.

It sits after the MOP expander (so a MOP may emit REPLAY instructions) and before the Wait
Gate. ``REPLAY`` with ``load_mode=1`` stores the next ``len`` incoming instructions at
``start_idx..`` of the buffer (and also passes them on when ``execute_while_loading`` is
set); with ``load_mode=0`` it emits ``len`` stored instructions from ``start_idx``, wrapping.

The buffer holds 32 instructions (the documented size); a ``len`` of 0 means 32. A ``start_idx``
or ``len`` above 32 (Blackhole's fields are 10 bits wide) is outside what the hardware
supports and is reported as undefined behaviour; when continuing, indices wrap modulo 32.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

OP_REPLAY = 0x04
SIZE = 32


class ReplayExpander:
    """Per-thread replay buffer and load state."""

    def __init__(self) -> None:
        self.buf = np.zeros(SIZE, dtype=np.uint32)
        self.load_left = 0
        self.load_index = 0
        self.load_exec = False

    @property
    def loading(self) -> bool:
        return self.load_left > 0

    def feed(self, word: int, report: Callable[[str], None]) -> list[int]:
        """The words that leave the expander for one incoming word."""
        if self.load_left:
            self.buf[self.load_index] = word
            self.load_index = (self.load_index + 1) % SIZE
            self.load_left -= 1
            return [word] if self.load_exec else []
        if word >> 24 != OP_REPLAY:
            return [word]
        load = word & 1
        exec_ = word >> 1 & 7
        length = word >> 4 & 0x3FF
        start = word >> 14 & 0x3FF
        if length > SIZE:
            report(f"REPLAY len={length} is more than the {SIZE}-entry buffer")
        if start >= SIZE:
            report(f"REPLAY start_idx={start} is outside the {SIZE}-entry buffer")
        if exec_ > 1:
            report(f"REPLAY execute_while_loading={exec_} (only bit 0 of the field is defined)")
        count = length or SIZE
        start %= SIZE
        if load:
            self.load_left = count
            self.load_index = start
            self.load_exec = bool(exec_ & 1)
            return []
        if start + count <= SIZE:
            return self.buf[start:start + count].tolist()
        buf = self.buf.tolist()
        return (buf[start:] + buf * (count // SIZE + 1))[:count]


__all__ = ["SIZE", "ReplayExpander"]
