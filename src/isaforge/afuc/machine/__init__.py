"""The afuc emulator: processors running real firmware on PM4 command streams.

One unit a file: :mod:`.emulator` (the :class:`Emulator`: processors, GPU registers and
memory, effects, hooks), :mod:`.processor` (one processor: registers, ROQ, side effects,
dispatch, exact and fast execution), :mod:`.codegen` (the Python source of afuc instructions,
one function per instruction or per basic block), :mod:`.queues` (ring buffer, IB and SDS
queues), :mod:`.stream` (PM4 packet headers and stream files), :mod:`.trace` (Mesa's trace
format).
"""

from .emulator import EFFECT_KINDS, HOOK_KINDS, Effect, Emulator, RegWrite
from .processor import Idle, Processor, StepLimitError, StreamEndError
from .stream import BadPacketError, Stream, StreamFormatError, parse_stream, parse_text
from .trace import TraceState

__all__ = [
    "EFFECT_KINDS",
    "HOOK_KINDS",
    "BadPacketError",
    "Effect",
    "Emulator",
    "Idle",
    "Processor",
    "RegWrite",
    "StepLimitError",
    "Stream",
    "StreamEndError",
    "StreamFormatError",
    "TraceState",
    "parse_stream",
    "parse_text",
]
