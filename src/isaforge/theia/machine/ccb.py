"""The control command bus (CCB): CP messages to the VPs.

A message is 32 bits, ``{DST[7:0], COMMAND[7:0], ARGUMENT[15:0]}``; the CP's DELIVERCOMMAND
builds it from the instruction's DST field (a literal), the value of SRC1 and the value of
SRC0. VP ``i`` answers to id ``i + 1``; bit 7 of DST broadcasts to every VP; DST 0 reaches
nobody (so ``start <ALLCORES>`` with DST 32 reaches no VP of a 4-VP GPU, as in the RTL).
Commands: 0 start the main thread, 1 stop it; others are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

CMD_START = 0
CMD_STOP = 1
BROADCAST = 0x80


@dataclass(frozen=True)
class Message:
    dst: int
    command: int
    argument: int

    @classmethod
    def build(cls, dst_field: int, src1_value: int, src0_value: int) -> Message:
        return cls(dst_field & 0xFF, src1_value & 0xFF, src0_value & 0xFFFF)

    @property
    def word(self) -> int:
        return self.dst << 24 | self.command << 16 | self.argument


def route(message: Message, cores: int) -> list[int]:
    """The VP indices a message reaches."""
    if message.dst & BROADCAST:
        return list(range(cores))
    index = (message.dst & 0x7F) - 1
    return [index] if 0 <= index < cores else []


__all__ = ["BROADCAST", "CMD_START", "CMD_STOP", "Message", "route"]
